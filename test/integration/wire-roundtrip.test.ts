/**
 * Protobuf and JSON on a real API server give the same slim objects (src/kube/wire.ts).
 *
 * - Round trip: Nodes, Pods and Leases with rich fields (taints with times, conditions with
 *   heartbeats, tolerations with `tolerationSeconds: 0`, owner references, finalizers, every kind
 *   of volume the converters sort, container states, a pod deleted with grace 0 and held by a
 *   finalizer, a Lease with an empty holder and MicroTimes; a pod condition no controller reads, which
 *   neither keeps) are read one by one and as lists, once
 *   with `Accept: application/json` and once with `Accept: application/vnd.kubernetes.protobuf`;
 *   both are slimmed by the same converters and must be deepEqual.
 * - The factory informers (nodes, pods, leases), watch-list and list+watch, in both encodings, see
 *   the same caches after the initial sync and after updates and deletions arrive by watch, and the
 *   protobuf ones never fell back to JSON.
 * - Issue 53: a Node and a Pod carrying bytes that are not UTF-8, written with a protobuf PUT as a Go
 *   client can (a node-problem-detector condition message, a container's termination message, a
 *   pod condition message), read the same in both encodings, one by one, as lists and through the
 *   informers: the API server's JSON shows each invalid byte as U+FFFD, and so does the decoder.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { getJson, getRaw, loadKubeConfig, makeClients, type KubeClients, type RestClientMetricsSink } from '../../src/kube/client.js';
import { decodeList, decodeObject, type ProtobufKind } from '../../src/kube/protobuf/views.js';
import { toLease, toMicroTime, toNode, toPod } from '../../src/kube/objects.js';
import { leaseInformer, nodeInformer, podInformer } from '../../src/kube/informerfactory.js';
import type { Informer } from '../../src/kube/informer.js';
import type { KubeContentType } from '../../src/kube/contenttype.js';
import { realClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestNamespace, kubeconfigPath, uniquePrefix, waitFor } from '../support/cluster.js';
import { laneMinor } from '../support/lane.js';
import { putProtobuf, rawString, readProtobuf } from '../support/protobuf-writes.js';
import { ContainerStatusSchema, NodeConditionSchema, NodeSchema, PodConditionSchema, PodSchema } from '../../src/kube/protobuf/gen/k8s.io/api/core/v1/generated_pb.js';
import { create } from '@bufbuild/protobuf';

const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

describe('protobuf and JSON give the same slim objects', () => {
  /** Whether the server accepts a generic ephemeral volume (1.21+). */
  let ephemeralServed = true;
  const prefix = uniquePrefix('wire');
  const namespace = prefix;
  const nodes = [`${prefix}-n0`, `${prefix}-n1`];
  const fallbacks: string[] = [];
  const malformed: string[] = [];
  let clients: KubeClients;

  before(async () => {
    const sink: RestClientMetricsSink = {
      request: () => {},
      rateLimiterWait: () => {},
      wireFallback: (resource, reason) => fallbacks.push(`${resource}:${reason}`),
      wireMalformed: (resource) => malformed.push(resource),
    };
    clients = makeClients(loadKubeConfig(kubeconfigPath()), {}, sink);
    await createTestNamespace(clients, namespace);
    const t = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    for (const [i, name] of nodes.entries()) {
      await clients.core.createNode({
        body: {
          metadata: { name, labels: { 'nlc.sim/fleet': prefix, 'topology.kubernetes.io/zone': `z${i}` } },
          spec: {
            unschedulable: i === 1,
            taints: [
              { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: t },
              { key: 'dedicated', value: 'infra', effect: 'NoSchedule' },
            ],
          },
        },
      });
      await clients.core.patchNodeStatus(
        {
          name,
          body: {
            status: {
              conditions: [
                { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: t, lastTransitionTime: t },
                { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: t, lastTransitionTime: t },
              ],
            },
          },
        },
        STRATEGIC,
      );
    }
    ephemeralServed = ((await laneMinor()) ?? 99) >= 21;
    const pods = [
      {
        metadata: {
          name: 'rich',
          labels: { app: 'web', 'pod-template-hash': 'abc' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: '00000000-0000-0000-0000-000000000001', controller: true }],
          finalizers: ['nlc.test/hold'],
        },
        spec: {
          nodeName: nodes[0],
          containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
          initContainers: [{ name: 'i', image: 'registry.k8s.io/pause:3.10' }],
          tolerations: [
            { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
            { operator: 'Exists' },
            { key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' },
          ],
          volumes: [
            { name: 'data', persistentVolumeClaim: { claimName: 'data-0' } },
            { name: 'scratch', emptyDir: {} },
            { name: 'cfg', configMap: { name: 'cfg' } },
            { name: 'inline', csi: { driver: 'ebs.csi.aws.com' } },
            // Generic ephemeral volumes are served from 1.21 (alpha and off by default in 1.20, whose API server refuses the pod).
            ...(ephemeralServed ? [{ name: 'eph', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }] : []),
            { name: 'old', awsElasticBlockStore: { volumeID: 'vol-1' } },
          ],
        },
      },
      { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
      { metadata: { name: 'doomed', finalizers: ['nlc.test/hold'] }, spec: { nodeName: nodes[1], containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
    ];
    for (const body of pods) await clients.core.createNamespacedPod({ namespace, body });
    await clients.core.patchNamespacedPodStatus(
      {
        name: 'rich',
        namespace,
        body: {
          status: {
            phase: 'Running',
            // Pod GC reads it (an Evicted terminated pod goes first); the round trip must carry it.
            reason: 'NodeLost',
            conditions: [
              { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]', lastTransitionTime: t },
              { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', lastTransitionTime: t },
              { type: 'PodScheduled', status: 'True', lastTransitionTime: t },
              // Read by no controller: neither encoding caches it (src/kube/podconditions.ts).
              { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: t },
            ],
            initContainerStatuses: [{ name: 'i', image: 'pause', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, startedAt: t, finishedAt: t } } }],
            containerStatuses: [{ name: 'c', image: 'pause', imageID: '', ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } }],
          },
        },
      },
      STRATEGIC,
    );
    // A force delete held by a finalizer: deletionTimestamp set, deletionGracePeriodSeconds 0.
    await clients.core.deleteNamespacedPod({ name: 'doomed', namespace, gracePeriodSeconds: 0 });
    await clients.coordination.createNamespacedLease({
      namespace,
      body: { metadata: { name: nodes[0] }, spec: { holderIdentity: nodes[0], leaseDurationSeconds: 40, leaseTransitions: 0 } },
    });
    // MicroTimes (six fractional digits) through a patch: client-node would write a Date with three.
    await clients.coordination.patchNamespacedLease({ name: nodes[0]!, namespace, body: { spec: { renewTime: toMicroTime(Date.now() - 1234), acquireTime: toMicroTime(t.getTime()) } } }, STRATEGIC);
    await clients.coordination.createNamespacedLease({ namespace, body: { metadata: { name: nodes[1] }, spec: { holderIdentity: '' } } });
  });

  after(async () => {
    for (const name of ['rich', 'doomed']) {
      await clients.core.patchNamespacedPod({ name, namespace, body: [{ op: 'remove', path: '/metadata/finalizers' }] }).catch(() => undefined);
    }
    await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    for (const name of nodes) await clients.core.deleteNode({ name }).catch(() => undefined);
  });

  async function readProtobuf(path: string): Promise<Uint8Array> {
    const res = await getRaw(clients.kubeConfig, path, {}, { accept: PROTOBUF });
    assert.equal(res.status, 200, `${path}: HTTP ${res.status}`);
    assert.equal(res.headers.get('content-type'), PROTOBUF, `${path} answered in protobuf`);
    return new Uint8Array(await res.arrayBuffer());
  }

  const cases: [kind: ProtobufKind, path: string, names: () => string[], convert: (raw: unknown) => unknown][] = [
    ['Node', '/api/v1/nodes', () => nodes, toNode],
    ['Pod', `/api/v1/namespaces/${namespace}/pods`, () => ['rich', 'plain', 'doomed'], toPod],
    ['Lease', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, () => nodes, toLease],
  ];

  for (const [kind, path, names, convert] of cases) {
    test(`${kind}: each object, read in JSON and in protobuf, slims to the same object`, async () => {
      for (const name of names()) {
        const json = convert(await getJson(clients.kubeConfig, `${path}/${name}`, {}));
        const pb = convert(decodeObject(kind, await readProtobuf(`${path}/${name}`)));
        assert.ok(json !== undefined, `${kind} ${name} converts`);
        assert.deepEqual(pb, json, `${kind} ${name}`);
      }
    });

    test(`${kind}: a list, read in JSON and in protobuf, slims to the same objects`, async () => {
      const query = kind === 'Node' ? `?labelSelector=${encodeURIComponent(`nlc.sim/fleet=${prefix}`)}` : '';
      const json = (await getJson(clients.kubeConfig, path + query, {})) as { items: unknown[]; metadata: { resourceVersion: string } };
      const pb = decodeList(kind, await readProtobuf(path + query));
      assert.equal(pb.malformed, 0);
      assert.equal(pb.items.length, names().length);
      assert.deepEqual(pb.items.map(convert), json.items.map(convert));
    });
  }

  test('the rich pod keeps what the controllers read (so the comparison above compares something)', async () => {
    const p = toPod(decodeObject('Pod', await readProtobuf(`/api/v1/namespaces/${namespace}/pods/rich`)));
    assert.ok(p);
    assert.equal(p.tolerations.find((t) => t.key === 'node.kubernetes.io/unreachable')?.tolerationSeconds, 0);
    assert.deepEqual(p.pvcNames, ['data-0']);
    assert.equal(p.statusReason, 'NodeLost');
    assert.deepEqual(p.ephemeralClaimNames, ephemeralServed ? ['rich-eph'] : []);
    assert.deepEqual(p.inlineVolumeDrivers, ['ebs.csi.aws.com', '*']);
    assert.equal(p.containersNotRunning, true);
    assert.equal(p.ownerReferences[0]?.controller, true);
    assert.deepEqual(
      p.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'False', 'ContainersNotReady'],
        ['DisruptionTarget', 'True', 'DeletionByTaintManager'],
        ['PodScheduled', 'True', undefined],
      ],
    );
    const doomed = toPod(decodeObject('Pod', await readProtobuf(`/api/v1/namespaces/${namespace}/pods/doomed`)));
    assert.equal(doomed?.deletionGracePeriodSeconds, 0);
    assert.ok(doomed?.deletionTimestamp !== undefined);
  });

  for (const watchList of [true, false]) {
    test(`the factory informers (${watchList ? 'watch-list' : 'list+watch'}) hold the same caches in both encodings, through watch updates and deletions`, { timeout: 120_000 }, async () => {
      const opts = (contentType: KubeContentType) => ({ log: silentLogger, clock: realClock, watchList, contentType });
      const build = (contentType: KubeContentType): Informer<unknown>[] => [
        nodeInformer(clients, { ...opts(contentType), labelSelector: `nlc.sim/fleet=${prefix}` }) as Informer<unknown>,
        podInformer(clients, { ...opts(contentType), fieldSelector: `metadata.namespace=${namespace}`, keepLabels: true }) as Informer<unknown>,
        leaseInformer(clients, { ...opts(contentType), namespace }) as Informer<unknown>,
        // The pods informer as the controllers build it by default: protobuf decodes no labels then.
        podInformer(clients, { ...opts(contentType), fieldSelector: `metadata.namespace=${namespace}` }) as Informer<unknown>,
      ];
      const pb = build(PROTOBUF);
      const js = build('application/json');
      const all = [...pb, ...js];
      const snapshot = (infs: Informer<unknown>[]): unknown[] => infs.map((i) => i.keys().sort().map((k) => [k, i.get(k)]));
      try {
        for (const i of all) await i.start();
        for (const i of all) await i.waitForSync();
        assert.deepEqual(snapshot(pb), snapshot(js), 'after the initial sync');
        assert.equal(pb[1]!.keys().length, 3);
        assert.equal(pb[3]!.keys().length, 3);
        // Changes that arrive by watch: a node condition, a pod condition, a lease renewal and a deletion.
        const t = new Date();
        await clients.core.patchNodeStatus({ name: nodes[0]!, body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: t, lastTransitionTime: t }] } } }, STRATEGIC);
        await clients.core.patchNamespacedPodStatus({ name: 'plain', namespace, body: { status: { phase: 'Failed', reason: 'Evicted' } } }, STRATEGIC);
        await clients.coordination.patchNamespacedLease({ name: nodes[0]!, namespace, body: { spec: { renewTime: toMicroTime(t.getTime() + 567) } } }, STRATEGIC);
        await clients.coordination.deleteNamespacedLease({ name: nodes[1]!, namespace });
        const seen = (infs: Informer<unknown>[]): boolean =>
          infs[2]!.keys().length === 1 &&
          [infs[1]!, infs[3]!].every((i) => (i.get(`${namespace}/plain`) as { phase?: string } | undefined)?.phase === 'Failed');
        await waitFor('both encodings see the watch events', () => seen(pb) && seen(js) && JSON.stringify(snapshot(pb)) === JSON.stringify(snapshot(js)));
        assert.deepEqual(snapshot(pb), snapshot(js), 'after the watch events');
        assert.equal(pb.reduce((n, i) => n + i.stats().malformed, 0), 0);
        // Put the deleted Lease back for the next lane.
        await clients.coordination.createNamespacedLease({ namespace, body: { metadata: { name: nodes[1]! }, spec: { holderIdentity: '' } } });
      } finally {
        for (const i of all) i.stop();
      }
      assert.deepEqual(fallbacks, [], 'protobuf was used throughout');
      assert.deepEqual(malformed, []);
    });
  }
});

describe('bytes that are not UTF-8, written by a protobuf client (issue 53: the wire format never changes a decision)', () => {
  const prefix = uniquePrefix('wire-raw');
  const namespace = prefix;
  const node = `${prefix}-npd`;
  const fallbacks: string[] = [];
  const malformed: string[] = [];
  let clients: KubeClients;
  /** What the API server's JSON shows for each raw message (Go encoding/json: U+FFFD per invalid byte). */
  const SHOWN = {
    kernel: 'kernel: \uFFFD( deadlock \uFFFD\uFFFDA',
    terminated: 'exit \uFFFD\uFFFD\uFFFD panic',
    ready: '\uFEFFnot ready \uFFFD',
  };

  before(async () => {
    const sink: RestClientMetricsSink = {
      request: () => {},
      rateLimiterWait: () => {},
      wireFallback: (resource, reason) => fallbacks.push(`${resource}:${reason}`),
      wireMalformed: (resource) => malformed.push(resource),
    };
    clients = makeClients(loadKubeConfig(kubeconfigPath()), {}, sink);
    const kc = clients.kubeConfig;
    await createTestNamespace(clients, namespace);
    const t = { seconds: BigInt(Math.floor(Date.now() / 1000) - 60), nanos: 0 };
    await clients.core.createNode({ body: { metadata: { name: node, labels: { 'nlc.sim/fleet': prefix, 'topology.kubernetes.io/zone': 'z' } } } });
    // A node-problem-detector style condition whose message holds C3 28 and E2 82 41 (a lead byte without its continuation, a truncated sequence).
    const kernel = rawString([...Buffer.from('kernel: '), 0xc3, 0x28, ...Buffer.from(' deadlock '), 0xe2, 0x82, 0x41]);
    const n = await readProtobuf(kc, `/api/v1/nodes/${node}`, NodeSchema);
    n.status!.conditions = [
      create(NodeConditionSchema, { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: t, lastTransitionTime: t }),
      create(NodeConditionSchema, { type: 'KernelDeadlock', status: 'False', reason: 'KernelHasNoDeadlock', message: kernel.placeholder, lastHeartbeatTime: t, lastTransitionTime: t }),
    ];
    const putNode = await putProtobuf(kc, `/api/v1/nodes/${node}/status`, NodeSchema, n, 'Node', 'v1', [kernel]);
    assert.equal(putNode.status, 200, putNode.body);
    await clients.core.createNamespacedPod({ namespace, body: { metadata: { name: 'raw' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } } });
    // A container's termination message is whatever it wrote to its file: here a truncated four-byte sequence.
    const terminated = rawString([...Buffer.from('exit '), 0xf0, 0x9f, 0x98, ...Buffer.from(' panic')]);
    const ready = rawString([0xef, 0xbb, 0xbf, ...Buffer.from('not ready '), 0xff]);
    const p = await readProtobuf(kc, `/api/v1/namespaces/${namespace}/pods/raw`, PodSchema);
    p.status!.phase = 'Failed';
    p.status!.conditions = [create(PodConditionSchema, { type: 'Ready', status: 'False', reason: 'PodFailed', message: ready.placeholder, lastTransitionTime: t })];
    p.status!.containerStatuses = [
      create(ContainerStatusSchema, { name: 'c', image: 'registry.k8s.io/pause:3.10', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 2, reason: 'Error', message: terminated.placeholder, startedAt: t, finishedAt: t } } }),
    ];
    const putPod = await putProtobuf(kc, `/api/v1/namespaces/${namespace}/pods/raw/status`, PodSchema, p, 'Pod', 'v1', [terminated, ready]);
    assert.equal(putPod.status, 200, putPod.body);
  });

  after(async () => {
    await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await clients.core.deleteNode({ name: node }).catch(() => undefined);
  });

  async function readProtobufBytes(path: string): Promise<Uint8Array> {
    const res = await getRaw(clients.kubeConfig, path, {}, { accept: PROTOBUF });
    assert.equal(res.status, 200, `${path}: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  test('the API server stored the bytes and its JSON shows U+FFFD per invalid byte; protobuf reads the same node and pod', async () => {
    const nodeJson = toNode(await getJson(clients.kubeConfig, `/api/v1/nodes/${node}`, {}));
    const nodePb = toNode(decodeObject('Node', await readProtobufBytes(`/api/v1/nodes/${node}`)));
    assert.equal(nodeJson?.conditions.find((c) => c.type === 'KernelDeadlock')?.message, SHOWN.kernel, 'Go writes two U+FFFD for E2 82 (WHATWG would write one)');
    assert.deepEqual(nodePb, nodeJson);
    const podPath = `/api/v1/namespaces/${namespace}/pods/raw`;
    const podJsonRaw = (await getJson(clients.kubeConfig, podPath, {})) as { status: { containerStatuses: { state: { terminated: { message: string } } }[] } };
    assert.equal(podJsonRaw.status.containerStatuses[0]?.state.terminated.message, SHOWN.terminated);
    const podJson = toPod(podJsonRaw);
    assert.equal(podJson?.conditions.find((c) => c.type === 'Ready')?.message, SHOWN.ready, 'a leading BOM is text');
    assert.deepEqual(toPod(decodeObject('Pod', await readProtobufBytes(podPath))), podJson);
  });

  test('as lists, both encodings give the same objects and no item is malformed', async () => {
    const nodePath = `/api/v1/nodes?labelSelector=${encodeURIComponent(`nlc.sim/fleet=${prefix}`)}`;
    const podPath = `/api/v1/namespaces/${namespace}/pods`;
    const lists: [ProtobufKind, string, (raw: unknown) => unknown][] = [
      ['Node', nodePath, toNode],
      ['Pod', podPath, toPod],
    ];
    for (const [kind, path, convert] of lists) {
      const json = (await getJson(clients.kubeConfig, path, {})) as { items: unknown[] };
      const pb = decodeList(kind, await readProtobufBytes(path));
      assert.equal(pb.malformed, 0, kind);
      assert.equal(pb.items.length, 1, kind);
      assert.deepEqual(pb.items.map(convert), json.items.map(convert), kind);
    }
  });

  for (const watchList of [true, false]) {
    test(`the informers (${watchList ? 'watch-list' : 'list+watch'}) hold the same node and pod in both encodings, also when they change by watch`, { timeout: 120_000 }, async () => {
      const opts = (contentType: KubeContentType) => ({ log: silentLogger, clock: realClock, watchList, contentType });
      const build = (contentType: KubeContentType): Informer<unknown>[] => [
        nodeInformer(clients, { ...opts(contentType), labelSelector: `nlc.sim/fleet=${prefix}` }) as Informer<unknown>,
        podInformer(clients, { ...opts(contentType), fieldSelector: `metadata.namespace=${namespace}` }) as Informer<unknown>,
      ];
      const pb = build(PROTOBUF);
      const js = build('application/json');
      const snapshot = (infs: Informer<unknown>[]): unknown[] => infs.map((i) => i.keys().sort().map((k) => [k, i.get(k)]));
      try {
        for (const i of [...pb, ...js]) await i.start();
        for (const i of [...pb, ...js]) await i.waitForSync();
        assert.deepEqual(snapshot(pb), snapshot(js), 'after the initial sync');
        assert.equal(pb[0]!.keys().length, 1, 'the node is in the protobuf cache');
        assert.equal(pb[1]!.keys().length, 1, 'the pod is in the protobuf cache');
        // A change by watch: the event carries the raw bytes too.
        await clients.core.patchNodeStatus({ name: node, body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', lastHeartbeatTime: new Date(), lastTransitionTime: new Date() }] } } }, STRATEGIC);
        const seen = (infs: Informer<unknown>[]): boolean => toNodeReady(infs[0]!.get(node)) === 'False';
        await waitFor('both encodings see the watch event', () => seen(pb) && seen(js));
        assert.deepEqual(snapshot(pb), snapshot(js), 'after the watch event');
        assert.equal([...pb, ...js].reduce((n, i) => n + i.stats().malformed, 0), 0);
        await clients.core.patchNodeStatus({ name: node, body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date(), lastTransitionTime: new Date() }] } } }, STRATEGIC);
      } finally {
        for (const i of [...pb, ...js]) i.stop();
      }
      assert.deepEqual(fallbacks, [], 'protobuf was used throughout');
      assert.deepEqual(malformed, []);
    });
  }
});

/** The Ready status of a cached slim node. */
function toNodeReady(n: unknown): string | undefined {
  return (n as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready')?.status;
}
