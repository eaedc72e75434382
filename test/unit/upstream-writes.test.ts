/**
 * Issue 53 item 2: every write carries exactly the fields upstream's write carries for that pass.
 * One test per row of docs/upstream-1.37.md "Every write", named by the row's number (W1 …): each
 * drives our real writer (and, where the pass decides the fields, the pass itself) over a recording
 * `core`/`storage` client, and compares the request bodies sent with the fields that upstream's
 * function writes, read from k8s.io/kubernetes v1.37.2 (the function is named in each test).
 *
 * Where the mechanism differs (a merge or strategic-merge patch instead of a full PUT, one patch
 * instead of two, a resourceVersion or UID guard upstream lacks), the test pins the fields, and the
 * table says why the mechanism is kept. Rows W10 and W11 failed before issue 53's fix: our out-of-
 * service and unscheduled passes added `DisruptionTarget`/`DeletionByPodGC`, which upstream's
 * `markFailedAndDeletePod` never writes (a Job's `podFailurePolicy` reacts to that condition).
 *
 * Times: the FakeClock stands at T0 = 2026-01-01T00:00:00Z, so every "now" on the wire is that.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import type { KubeClients } from '../../src/kube/client.js';
import { EventRecorder, nodeRef } from '../../src/kube/events.js';
import { coordinationLeaseApi, LeaseElector } from '../../src/kube/leaderelection.js';
import { toNode, toPod, type Node, type Pod } from '../../src/kube/objects.js';
import type { WriteScheduler } from '../../src/kube/throttle.js';
import { silentLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { observeNodeHealth } from '../../src/nodelifecycle/health.js';
import { NoScheduleTaintPass } from '../../src/nodelifecycle/noschedule.js';
import { NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE } from '../../src/nodelifecycle/taints.js';
import { NodeLifecycleWriter } from '../../src/nodelifecycle/writer.js';
import { AffinityEvictionWriter } from '../../src/nodeaffinity/writer.js';
import { PodGCController } from '../../src/podgc/controller.js';
import { PodGCWriter } from '../../src/podgc/writer.js';
import { TaintEvictionWriter } from '../../src/tainteviction/writer.js';
import { ForceDetachWriter } from '../../src/volumes/writer.js';
import { Events, PodStore, settle, Store } from '../support/outofservice-world.js';

const T0 = Date.UTC(2026, 0, 1);
const NOW = '2026-01-01T00:00:00Z';
const EARLIER = '2025-12-31T23:00:00Z';
const EARLIER_MS = Date.parse(EARLIER);
const OOS = 'node.kubernetes.io/out-of-service';

type Wire = Record<string, unknown> & { metadata: Record<string, unknown>; spec: Record<string, unknown>; status: Record<string, unknown> };

/** One request our writers sent: the client method and its argument (the body is inside it). */
interface Request {
  method: string;
  arg: Record<string, unknown>;
}

const notFound = (): ApiException<string> => new ApiException(404, 'Not Found', '{"reason":"NotFound","code":404}', {});

/**
 * The `core` and `storage` clients every writer calls, over in-memory wire objects: reads answer
 * from the maps, writes are recorded (and a pod DELETE removes the pod, so a pass does not repeat).
 */
class RecordingApi {
  readonly nodes = new Map<string, Wire>();
  readonly pods = new Map<string, Wire>();
  readonly requests: Request[] = [];

  readonly core = {
    readNode: async ({ name }: { name: string }): Promise<Wire> => this.nodes.get(name) ?? Promise.reject(notFound()),
    readNamespacedPod: async ({ namespace, name }: { namespace: string; name: string }): Promise<Wire> =>
      this.pods.get(`${namespace}/${name}`) ?? Promise.reject(notFound()),
    patchNode: async (arg: Record<string, unknown>): Promise<unknown> => this.#write('patchNode', arg),
    patchNodeStatus: async (arg: Record<string, unknown>): Promise<unknown> => this.#write('patchNodeStatus', arg),
    patchNamespacedPodStatus: async (arg: Record<string, unknown>): Promise<unknown> => this.#write('patchNamespacedPodStatus', arg),
    deleteNamespacedPod: async (arg: Record<string, unknown>): Promise<unknown> => {
      this.pods.delete(`${String(arg['namespace'])}/${String(arg['name'])}`);
      return this.#write('deleteNamespacedPod', arg);
    },
    createNamespacedPodEviction: async (arg: Record<string, unknown>): Promise<unknown> => this.#write('createNamespacedPodEviction', arg),
    createNamespacedEvent: async (arg: Record<string, unknown>): Promise<unknown> => {
      this.#write('createNamespacedEvent', arg);
      return arg['body'];
    },
  };

  readonly storage = {
    deleteVolumeAttachment: async (arg: Record<string, unknown>): Promise<unknown> => this.#write('deleteVolumeAttachment', arg),
  };

  get clients(): KubeClients {
    return { core: this.core, storage: this.storage } as unknown as KubeClients;
  }

  /** The requests of one method, in order. */
  sent(method: string): Record<string, unknown>[] {
    return this.requests.filter((r) => r.method === method).map((r) => r.arg);
  }

  #write(method: string, arg: Record<string, unknown>): Promise<unknown> {
    this.requests.push({ method, arg });
    return Promise.resolve({});
  }
}

const direct: WriteScheduler = { schedule: (fn) => fn() };

/** A wire pod: `generation` as a 1.33+ server sets it; `deleting` sets a deletionTimestamp (grace 30 s). */
function wirePod(name: string, nodeName: string, o: { phase?: string; deleting?: boolean; generation?: number; conditions?: Record<string, unknown>[]; finalizers?: string[] } = {}): Wire {
  return {
    metadata: {
      namespace: 'default',
      name,
      uid: `uid-${name}`,
      resourceVersion: '11',
      generation: o.generation ?? 2,
      creationTimestamp: EARLIER,
      ...(o.deleting ? { deletionTimestamp: NOW, deletionGracePeriodSeconds: 30 } : {}),
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
    },
    spec: { nodeName, containers: [{ name: 'c', image: 'i' }] },
    status: { phase: o.phase ?? 'Running', conditions: o.conditions ?? [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER }] },
  };
}

function wireNode(name: string, o: { ready?: string; taints?: Record<string, unknown>[]; labels?: Record<string, string>; unschedulable?: boolean; conditions?: Record<string, unknown>[] } = {}): Wire {
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion: '5', creationTimestamp: EARLIER, labels: o.labels ?? {} },
    spec: { taints: o.taints ?? [], ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: { conditions: o.conditions ?? (o.ready === undefined ? [] : [{ type: 'Ready', status: o.ready, lastHeartbeatTime: EARLIER, lastTransitionTime: EARLIER }]) },
  };
}

function slimNode(w: Wire): Node {
  const n = toNode(w);
  assert.ok(n, 'a valid wire node');
  return n;
}

function slimPod(w: Wire): Pod {
  const p = toPod(w);
  assert.ok(p, 'a valid wire pod');
  return p;
}

/** The PodGC shell over caches holding `nodes` and `pods`, the real PodGCWriter and the recording API; one gc pass. */
async function podGCPass(api: RecordingApi, opts: { quarantineMs?: number; terminatedPodThreshold?: number } = {}): Promise<void> {
  const clock = new FakeClock(T0);
  const nodes = new Store<Node>();
  const pods = new PodStore();
  for (const w of api.nodes.values()) nodes.put(slimNode(w));
  for (const w of api.pods.values()) pods.put(slimPod(w));
  const metrics = createMetrics({ defaultMetrics: false });
  const gc = new PodGCController({
    config: { orphanQuarantineMs: opts.quarantineMs ?? 0, sweepPeriodMs: 20_000, scoped: false, terminatedPodThreshold: opts.terminatedPodThreshold ?? 12_500 },
    clock,
    log: silentLogger,
    caches: { nodes, pods },
    writes: new PodGCWriter(api.clients, direct, clock),
    events: new Events(clock),
    metrics: metrics.podGC,
    canSeeCluster: () => true,
  });
  gc.start();
  await settle(clock);
  await gc.stop();
}

/** upstream `metav1.NewDeleteOptions(0)` as our PodGC writer sends it: grace 0, plus our UID precondition. */
const forceDelete = (name: string): Record<string, unknown> => ({ namespace: 'default', name, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid: `uid-${name}` } } });

describe('Every write (docs/upstream-1.37.md "Every write")', () => {
  test('W1 node lifecycle, node health (tryUpdateNodeHealth → UpdateStatus): Ready, MemoryPressure, DiskPressure, PIDPressure Unknown; nothing else changes', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const w = wireNode('n1', {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: EARLIER, lastTransitionTime: EARLIER },
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'ok', lastHeartbeatTime: EARLIER, lastTransitionTime: EARLIER },
        { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'routes', lastHeartbeatTime: EARLIER, lastTransitionTime: EARLIER },
      ],
    });
    api.nodes.set('n1', w);
    const node = slimNode(w);
    const prev = { probeTimestamp: T0 - 60_000, readyTransitionTimestamp: EARLIER_MS, conditions: node.conditions };
    const writer = new NodeLifecycleWriter(api.clients, direct, clock);
    const r = await writer.updateNodeConditions('n1', node, (fresh) => observeNodeHealth(prev, fresh, undefined, T0, { nodeMonitorGracePeriodMs: 50_000, nodeStartupGracePeriodMs: 60_000 }).unknownConditions);
    assert.equal(r.result, 'written');
    // Upstream: an existing condition not yet Unknown gets status Unknown, reason NodeStatusUnknown,
    // message "Kubelet stopped posting node status.", lastTransitionTime now (heartbeat kept); a
    // missing one is appended with NodeStatusNeverUpdated, "Kubelet never posted node status.",
    // lastHeartbeatTime = creation, lastTransitionTime now. NetworkUnavailable is not touched: our
    // strategic-merge patch (conditions merge by type) leaves it out, so the API server keeps it as
    // it holds it, byte for byte, as upstream's PUT of the node it decoded does.
    assert.deepEqual(api.sent('patchNodeStatus'), [
      {
        name: 'n1',
        body: {
          metadata: { resourceVersion: '5' },
          status: {
            conditions: [
              { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: EARLIER, lastTransitionTime: NOW },
              { type: 'MemoryPressure', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: EARLIER, lastTransitionTime: NOW },
              { type: 'DiskPressure', status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: EARLIER, lastTransitionTime: NOW },
              { type: 'PIDPressure', status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: EARLIER, lastTransitionTime: NOW },
            ],
          },
        },
      },
    ]);
    assert.equal(api.requests.length, 1, 'one status write, nothing else');
  });

  test('W2 node lifecycle, NoExecute taints (processTaintBaseEviction / doNoExecuteTaintingPass → SwapNodeControllerTaint): the added taint stamped timeAdded now, the swapped one gone, others kept', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const w = wireNode('n2', {
      ready: 'Unknown',
      taints: [
        { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: EARLIER },
      ],
    });
    api.nodes.set('n2', w);
    const writer = new NodeLifecycleWriter(api.clients, direct, clock);
    assert.equal(await writer.swapNodeTaints('n2', [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], slimNode(w)), 'written');
    // Upstream: AddOrUpdateTaintOnNode appends unreachable:NoExecute with TimeAdded = now, then
    // RemoveTaintOffNode drops not-ready:NoExecute (two strategic-merge patches; ours is one merge
    // patch of the same end state, resourceVersion-guarded as upstream's).
    assert.deepEqual(api.sent('patchNode'), [
      {
        name: 'n2',
        body: {
          metadata: { resourceVersion: '5' },
          spec: {
            taints: [
              { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' },
              { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW },
            ],
          },
        },
      },
    ]);
    assert.equal(api.requests.length, 1);
  });

  test('W3 node lifecycle, NoSchedule condition taints (doNoScheduleTaintingPass → SwapNodeControllerTaint): the taints of the node\'s conditions, stamped timeAdded now; stale ones removed', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const w = wireNode('n3', {
      unschedulable: true,
      conditions: [
        { type: 'Ready', status: 'False', lastHeartbeatTime: EARLIER, lastTransitionTime: EARLIER },
        { type: 'MemoryPressure', status: 'True', lastHeartbeatTime: EARLIER, lastTransitionTime: EARLIER },
        { type: 'DiskPressure', status: 'False', lastHeartbeatTime: EARLIER, lastTransitionTime: EARLIER },
      ],
      // Kubernetes-style os/arch labels already twinned: this row is the taints only (W4 is the labels).
      taints: [
        { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule', timeAdded: EARLIER },
        { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' },
      ],
    });
    api.nodes.set('n3', w);
    const nodes = new Store<Node>();
    nodes.put(slimNode(w));
    const pass = new NoScheduleTaintPass(
      { clock, log: silentLogger, caches: { nodes }, canSeeCluster: () => true, writes: new NodeLifecycleWriter(api.clients, direct, clock) },
      { healthSyncRunning: () => false, noExecuteTaintPending: () => false, rejudging: () => undefined },
    );
    pass.enqueue('n3');
    await settle(clock);
    await pass.stop();
    const [patch] = api.sent('patchNode');
    assert.ok(patch, 'one taint patch');
    const body = patch['body'] as { metadata: Record<string, unknown>; spec: { taints: { key: string }[] } };
    assert.deepEqual(body.metadata, { resourceVersion: '5' });
    assert.deepEqual(Object.keys(body.spec), ['taints']);
    // Upstream: nodeConditionToTaintKeyStatusMap gives not-ready (Ready=False) and memory-pressure
    // (MemoryPressure=True); spec.unschedulable gives unschedulable; TaintSetDiff against the node's
    // NoSchedule condition taints removes disk-pressure; SwapNodeControllerTaint stamps TimeAdded
    // on each added taint. The user's taint is kept.
    const byKey = (a: { key: string }, b: { key: string }): number => a.key.localeCompare(b.key);
    assert.deepEqual([...body.spec.taints].sort(byKey), [
      { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule', timeAdded: NOW },
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: NOW },
    ]);
    assert.equal(api.requests.length, 1);
  });

  test('W4 node lifecycle, beta os/arch labels (reconcileNodeLabels → AddOrUpdateLabelsOnNode): only the beta twins that differ from or lack the stable label', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const w = wireNode('n4', {
      ready: 'True',
      labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'arm64', 'beta.kubernetes.io/os': 'windows', team: 'a' },
    });
    api.nodes.set('n4', w);
    const nodes = new Store<Node>();
    nodes.put(slimNode(w));
    const pass = new NoScheduleTaintPass(
      { clock, log: silentLogger, caches: { nodes }, canSeeCluster: () => true, writes: new NodeLifecycleWriter(api.clients, direct, clock) },
      { healthSyncRunning: () => false, noExecuteTaintPending: () => false, rejudging: () => undefined },
    );
    pass.enqueue('n4');
    await settle(clock);
    await pass.stop();
    // Upstream labelReconcileInfo: beta.kubernetes.io/os := kubernetes.io/os (it differs) and
    // beta.kubernetes.io/arch := kubernetes.io/arch (ensureSecondaryExists); a two-way
    // strategic-merge patch of those labels. Ours: a resourceVersion-guarded merge patch of the same.
    assert.deepEqual(api.sent('patchNode'), [
      { name: 'n4', body: { metadata: { resourceVersion: '5', labels: { 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'arm64' } } } },
    ]);
    assert.equal(api.requests.length, 1);
  });

  test('W5 node lifecycle, pods of a not-Ready node (MarkPodsNotReady → UpdateStatus): the Ready condition False, lastTransitionTime now, its other fields kept', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const p = slimPod(
      wirePod('p5', 'n5', {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Ok', message: 'all containers ready', lastProbeTime: EARLIER, lastTransitionTime: EARLIER },
          { type: 'ContainersReady', status: 'True', lastTransitionTime: EARLIER },
        ],
      }),
    );
    const writer = new NodeLifecycleWriter(api.clients, direct, clock);
    assert.equal(await writer.markPodNotReady(p, 'n5'), 'written');
    // Upstream: a copy of the Ready condition with Status False, through UpdatePodCondition
    // (lastTransitionTime now, as the status changes), written with a full UpdateStatus. Ours: a
    // strategic-merge patch of that one condition (merged by type), guarded by the pod's UID.
    assert.deepEqual(api.sent('patchNamespacedPodStatus'), [
      {
        namespace: 'default',
        name: 'p5',
        body: {
          metadata: { uid: 'uid-p5' },
          status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Ok', message: 'all containers ready', lastTransitionTime: NOW, lastProbeTime: EARLIER }] },
        },
      },
    ]);
    assert.equal(api.requests.length, 1);
  });

  test('W6 node lifecycle, legacy direct eviction (--enable-taint-manager=false; DeletePods → SetPodTerminationReason, Delete): status reason NodeLost and upstream\'s message, then a graceful DELETE', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const writer = new NodeLifecycleWriter(api.clients, direct, clock);
    assert.equal(await writer.evictPodLegacy(slimPod(wirePod('p6', 'n6')), 'n6'), 'written');
    // Upstream: pod.Status.Reason = NodeUnreachablePodReason ("NodeLost"), Message =
    // NodeUnreachablePodMessage ("Node %v which was running pod %v is unresponsive"), UpdateStatus;
    // then Delete with empty DeleteOptions. Ours: a merge patch of those two fields and a DELETE,
    // each with the pod's UID as a precondition.
    assert.deepEqual(
      api.requests.map((r) => [r.method, r.arg]),
      [
        ['patchNamespacedPodStatus', { namespace: 'default', name: 'p6', body: { metadata: { uid: 'uid-p6' }, status: { reason: 'NodeLost', message: 'Node n6 which was running pod p6 is unresponsive' } } }],
        ['deleteNamespacedPod', { namespace: 'default', name: 'p6', body: { preconditions: { uid: 'uid-p6' } } }],
      ],
    );
  });

  test('W7 taint eviction, DisruptionTarget before the delete (addConditionAndDeletePod → UpdatePodCondition, PatchPodStatus): DeletionByTaintManager, upstream\'s message, lastTransitionTime now, observedGeneration', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const writer = new TaintEvictionWriter(api.clients, direct, clock);
    assert.equal(await writer.addDisruptionCondition('default', 'p7', 'uid-p7', slimPod(wirePod('p7', 'n7', { generation: 4 }))), 'written');
    assert.deepEqual(api.sent('patchNamespacedPodStatus'), [
      {
        namespace: 'default',
        name: 'p7',
        body: {
          metadata: { uid: 'uid-p7' },
          status: {
            conditions: [
              { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: NOW, observedGeneration: 4 },
            ],
          },
        },
      },
    ]);
    assert.equal(api.requests.length, 1);
  });

  test('W8 taint eviction, the delete (addConditionAndDeletePod → Delete with DeleteOptions{}): graceful, the pod\'s own grace period', async () => {
    const api = new RecordingApi();
    const writer = new TaintEvictionWriter(api.clients, direct, new FakeClock(T0));
    assert.equal(await writer.deletePod('default', 'p8', 'uid-p8'), 'deleted');
    // No gracePeriodSeconds (upstream's empty DeleteOptions); ours adds the UID precondition.
    assert.deepEqual(api.sent('deleteNamespacedPod'), [{ namespace: 'default', name: 'p8', body: { preconditions: { uid: 'uid-p8' } } }]);
    assert.equal(api.requests.length, 1);
  });

  test('W9 pod GC, orphans (gcOrphaned → markFailedAndDeletePodWithCondition): phase Failed, observedGeneration, DisruptionTarget/DeletionByPodGC "PodGC: node no longer exists"; DELETE grace 0', async () => {
    const api = new RecordingApi();
    api.pods.set('default/p9', wirePod('p9', 'deleted-node', { generation: 3 }));
    await podGCPass(api, { quarantineMs: 0 });
    assert.deepEqual(api.requests.map((r) => r.method), ['patchNamespacedPodStatus', 'deleteNamespacedPod']);
    assert.deepEqual(api.sent('patchNamespacedPodStatus'), [
      {
        namespace: 'default',
        name: 'p9',
        body: {
          metadata: { resourceVersion: '11' },
          status: {
            phase: 'Failed',
            observedGeneration: 3,
            conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists', lastTransitionTime: NOW, observedGeneration: 3 }],
          },
        },
      },
    ]);
    assert.deepEqual(api.sent('deleteNamespacedPod'), [forceDelete('p9')]);
  });

  test('W10 pod GC, out-of-service (gcTerminating → markFailedAndDeletePod): phase Failed and observedGeneration, no condition; DELETE grace 0', async () => {
    const api = new RecordingApi();
    api.nodes.set('oos', wireNode('oos', { ready: 'Unknown', taints: [{ key: OOS, value: 'nodeshutdown', effect: 'NoExecute' }] }));
    api.pods.set('default/p10', wirePod('p10', 'oos', { deleting: true, generation: 3, finalizers: ['example.com/hold'] }));
    await podGCPass(api);
    assert.deepEqual(api.requests.map((r) => r.method), ['patchNamespacedPodStatus', 'deleteNamespacedPod']);
    // Issue 53: before the fix this patch also carried DisruptionTarget/DeletionByPodGC.
    assert.deepEqual(api.sent('patchNamespacedPodStatus'), [{ namespace: 'default', name: 'p10', body: { metadata: { resourceVersion: '11' }, status: { phase: 'Failed', observedGeneration: 3 } } }]);
    assert.deepEqual(api.sent('deleteNamespacedPod'), [forceDelete('p10')]);
  });

  test('W11 pod GC, unscheduled terminating (gcUnscheduledTerminating → markFailedAndDeletePod): phase Failed and observedGeneration, no condition; DELETE grace 0', async () => {
    const api = new RecordingApi();
    api.pods.set('default/p11', wirePod('p11', '', { phase: 'Pending', deleting: true, generation: 1, finalizers: ['example.com/hold'], conditions: [] }));
    await podGCPass(api);
    assert.deepEqual(api.requests.map((r) => r.method), ['patchNamespacedPodStatus', 'deleteNamespacedPod']);
    // Issue 53: before the fix this patch also carried DisruptionTarget/DeletionByPodGC.
    assert.deepEqual(api.sent('patchNamespacedPodStatus'), [{ namespace: 'default', name: 'p11', body: { metadata: { resourceVersion: '11' }, status: { phase: 'Failed', observedGeneration: 1 } } }]);
    assert.deepEqual(api.sent('deleteNamespacedPod'), [forceDelete('p11')]);
  });

  test('W12 pod GC, terminated pods over the threshold (gcTerminated → markFailedAndDeletePod): no status patch (already terminal); DELETE grace 0', async () => {
    const api = new RecordingApi();
    api.nodes.set('n12', wireNode('n12', { ready: 'True' }));
    api.pods.set('default/p12a', wirePod('p12a', 'n12', { phase: 'Succeeded' }));
    api.pods.set('default/p12b', wirePod('p12b', 'n12', { phase: 'Failed' }));
    await podGCPass(api, { terminatedPodThreshold: 1 });
    // Both are equally old: the name breaks the tie (byEvictionAndCreationTimestamp), so p12a goes.
    assert.deepEqual(api.requests.map((r) => [r.method, r.arg]), [['deleteNamespacedPod', forceDelete('p12a')]]);
  });

  test('W13 force detach (reconciler → csiAttacher.Detach → VolumeAttachments().Delete with DeleteOptions{}): the VolumeAttachment DELETE, and no node status write', async () => {
    const api = new RecordingApi();
    const writer = new ForceDetachWriter(api.clients, direct);
    assert.equal(await writer.deleteVolumeAttachment('csi-abc', 'uid-va'), 'deleted');
    // Upstream also removes the volume from node.status.volumesAttached (nodeStatusUpdater) first;
    // ours leaves that field to kube-controller-manager's attach/detach controller (writes less).
    assert.deepEqual(api.requests.map((r) => [r.method, r.arg]), [['deleteVolumeAttachment', { name: 'csi-abc', body: { preconditions: { uid: 'uid-va' } } }]]);
  });

  test('W14 node affinity enforcer (ours, no upstream): a policy/v1 Eviction with the pod\'s UID as precondition, and nothing else', async () => {
    const api = new RecordingApi();
    const writer = new AffinityEvictionWriter(api.clients, direct);
    assert.deepEqual(await writer.evict({ namespace: 'default', name: 'p14', uid: 'uid-p14' }), { kind: 'evicted' });
    assert.deepEqual(api.requests.map((r) => [r.method, r.arg]), [
      [
        'createNamespacedPodEviction',
        {
          namespace: 'default',
          name: 'p14',
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p14', namespace: 'default' }, deleteOptions: { preconditions: { uid: 'uid-p14' } } },
        },
      ],
    ]);
  });

  test('W15 Events (client-go tools/record makeEvent + generateEvent, e.g. RecordNodeEvent): the fields of a core/v1 Event create', async () => {
    const api = new RecordingApi();
    const clock = new FakeClock(T0);
    const recorder = new EventRecorder({ clients: api.clients, throttle: direct, component: 'node-controller', host: 'nlc-0', clock, log: silentLogger });
    recorder.record(nodeRef({ name: 'n15', uid: 'uid-n15' }), 'Normal', 'NodeNotReady', 'Node n15 status is now: NodeNotReady');
    await recorder.flush();
    const [create] = api.sent('createNamespacedEvent');
    assert.ok(create);
    const body = create['body'] as Record<string, unknown> & { metadata: { name: string; namespace: string }; firstTimestamp: unknown; lastTimestamp: unknown };
    assert.match(body.metadata.name, /^n15\.[0-9a-f]+$/, 'GenerateEventName: <name>.<hex unix nanos>');
    // makeEvent: name, namespace (default for a Node), involvedObject, reason, message, first and
    // last timestamp, count 1, type; generateEvent: source, reportingController (json
    // reportingComponent) = source.component, reportingInstance = source.host. Nothing else.
    const { metadata, firstTimestamp, lastTimestamp, ...rest } = body;
    assert.deepEqual(metadata, { name: metadata.name, namespace: 'default' });
    assert.equal(new Date(firstTimestamp as string | Date).getTime(), T0);
    assert.equal(new Date(lastTimestamp as string | Date).getTime(), T0);
    assert.deepEqual(rest, {
      involvedObject: { kind: 'Node', apiVersion: 'v1', name: 'n15', uid: 'uid-n15' },
      reason: 'NodeNotReady',
      message: 'Node n15 status is now: NodeNotReady',
      type: 'Normal',
      source: { component: 'node-controller', host: 'nlc-0' },
      count: 1,
      reportingComponent: 'node-controller',
      reportingInstance: 'nlc-0',
    });
    assert.equal(create['namespace'], 'default');
  });

  test('W16 leader election (client-go leaderelection LeaseLock.Create / Update): the Lease spec holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions', async () => {
    const clock = new FakeClock(T0);
    const requests: Request[] = [];
    let stored: Record<string, unknown> | undefined;
    const store = (method: string, arg: Record<string, unknown>): Promise<unknown> => {
      requests.push({ method, arg });
      const body = arg['body'] as { metadata: Record<string, unknown> };
      stored = { ...body, metadata: { ...body.metadata, resourceVersion: String(requests.length) } };
      return Promise.resolve(stored);
    };
    const coordination = {
      readNamespacedLease: async (): Promise<unknown> => stored ?? Promise.reject(notFound()),
      createNamespacedLease: (arg: Record<string, unknown>): Promise<unknown> => store('create', arg),
      replaceNamespacedLease: (arg: Record<string, unknown>): Promise<unknown> => store('replace', arg),
      deleteNamespacedLease: async (): Promise<void> => undefined,
    };
    const elector = new LeaseElector({
      api: coordinationLeaseApi(coordination as unknown as KubeClients['coordination']),
      name: 'node-lifecycle-controller',
      namespace: 'kube-system',
      identity: 'host-a_1',
      clock,
      random: () => 0,
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    });
    void elector.run();
    await clock.advanceAsync(0);
    await clock.advanceAsync(2_000); // one retry period: the renewal
    await elector.stop();
    // LeaderElectionRecordToLeaseSpec: holder, duration (15 s), acquire and renew MicroTimes,
    // transitions; no preferredHolder or strategy (kube-controller-manager sets neither). Create
    // sends name and namespace; Update sends the Lease as read back, with its resourceVersion.
    const spec = (renew: string): Record<string, unknown> => ({
      holderIdentity: 'host-a_1',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: renew,
      leaseTransitions: 0,
    });
    assert.deepEqual(requests[0], {
      method: 'create',
      arg: { namespace: 'kube-system', body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'node-lifecycle-controller', namespace: 'kube-system' }, spec: spec('2026-01-01T00:00:00.000000Z') } },
    });
    assert.deepEqual(requests[1], {
      method: 'replace',
      arg: {
        name: 'node-lifecycle-controller',
        namespace: 'kube-system',
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'node-lifecycle-controller', namespace: 'kube-system', resourceVersion: '1' }, spec: spec('2026-01-01T00:00:02.000000Z') },
      },
    });
  });
});
