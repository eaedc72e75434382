/**
 * The node lifecycle controller shell (src/nodelifecycle/controller.ts), driven by FakeClock with
 * in-memory caches, simulated kubelets (Lease renewals) and a recording writes double that applies
 * each write to the caches and notifies the controller as the informers would. Covers issue 14
 * ("never act where upstream would not"): the zone state for tainting never gets less strict than
 * upstream's, level-based NotReady marking of pods (and none during the all-zones stop), 1.20's
 * legacy eviction semantics, and a monitor pass that a busy health queue cannot starve.
 * The world (caches, kubelets, recording writes) is test/support/nodelifecycle-world.ts.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import type { KubeClients } from '../../src/kube/client.js';
import type { WriteScheduler } from '../../src/kube/throttle.js';
import { NodeLifecycleWriter } from '../../src/nodelifecycle/writer.js';
import { daemonSetSelectorMatches, podSelectedByDaemonSet } from '../../src/nodelifecycle/daemonsets.js';
import { FakeClock } from '../../src/util/clock.js';
import { getCondition, podKey, toDaemonSet, toPod, toPodWithLabels, type Lease } from '../../src/kube/objects.js';
import type { NodeLifecycleConfig } from '../../src/nodelifecycle/controller.js';
import { compareResourceVersion, LeaseCacheConsistency, liveLeaseVerdict } from '../../src/nodelifecycle/leasecircuitbreaker.js';

import { DEFAULT_CONFIG, GRACE_MS, LEASE_RENEW_MS, started, World, zoneNodes, type RecordedWrite } from '../support/nodelifecycle-world.js';

describe('issue 14 item 2: the zone state for tainting never gets less strict than upstream', () => {
  test('partial zone whose live nodes pause their heartbeats past half the grace period (but not past it): no NoExecute taint', async (t) => {
    // The reproduction from the issue: --node-eviction-rate=2, a 10-node zone with 7 dead nodes;
    // the 3 live nodes stay Ready but their heartbeats pause for 0.65 × grace. Upstream keeps the
    // zone PartialDisruption (7/10 not Ready, 10 ≤ 50 nodes: rate 0). Counting the silent Ready
    // nodes as not Ready would make it FullDisruption (full rate) and taint the 7 dead nodes.
    const a = zoneNodes('a', 10);
    const b = zoneNodes('b', 10);
    const w = started(t, { nodeEvictionRate: 2 }, (w) => {
      for (const n of a) w.addNode(n, 'a');
      for (const n of b) w.addNode(n, 'b');
    });
    await w.run(20_000, 500);
    const dead = a.slice(0, 7);
    const live = a.slice(7);
    for (const n of dead) w.alive.delete(n);
    // The dead nodes go Unknown after the grace period; the zone is PartialDisruption.
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    const zoneA = (): string | undefined => w.ctl.view().zones.find((z) => z.zoneLabel === '"r:a"')?.state;
    assert.equal(zoneA(), 'PartialDisruption');
    assert.ok(dead.every((n) => w.ctl.view().nodes.find((x) => x.name === n)?.ready === 'Unknown'), 'the 7 dead nodes are Unknown');
    // The live nodes' heartbeats pause for 0.65 × grace: still Ready (no Unknown write), but silent
    // for longer than half the grace period.
    for (const n of live) w.alive.delete(n);
    await w.run(0.65 * GRACE_MS, 500);
    assert.ok(live.every((n) => w.ctl.view().nodes.find((x) => x.name === n)?.ready === 'True'), 'the live nodes are still Ready');
    const duringPause = zoneA();
    for (const n of live) {
      w.alive.add(n);
      w.renew(n);
    }
    // Observe for two more grace periods: at rate 2 nodes/s the 7 queued nodes would all be tainted
    // within 4 s of the zone leaving PartialDisruption.
    await w.run(2 * GRACE_MS, 500);
    assert.deepEqual(w.noExecuteAdds(), [], 'no NoExecute taint');
    assert.equal(duringPause, 'PartialDisruption', 'the zone stayed PartialDisruption during the pause, as upstream');
    assert.equal(zoneA(), 'PartialDisruption');
    assert.equal(w.ctl.view().zones.find((z) => z.zoneLabel === '"r:a"')?.rate, 0);
  });

  test('the silent-Ready count still pauses a zone earlier than upstream (nodes that die together are counted together)', async (t) => {
    // Every node of zone a dies at once; their deadlines are spread over the renew interval. The
    // first one to turn Unknown must not be tainted while the others, silent past half the grace,
    // are not yet Unknown: the zone counts them and is already PartialDisruption/FullDisruption.
    const a = zoneNodes('a', 4);
    const b = zoneNodes('b', 10);
    const w = started(t, { nodeEvictionRate: 2 }, (w) => {
      for (const n of a) w.addNode(n, 'a');
      for (const n of b) w.addNode(n, 'b');
    });
    await w.run(20_000, 500);
    // Kill 3 of 4: upstream would see 1/4, 2/4, 3/4 Unknown one after another and taint the first.
    for (const n of a.slice(0, 3)) w.alive.delete(n);
    await w.run(GRACE_MS + 2 * LEASE_RENEW_MS, 500);
    assert.deepEqual(w.noExecuteAdds(), [], 'no NoExecute taint: the zone was counted PartialDisruption before the first node went Unknown');
  });
});

describe('issue 14 item 5: pods are marked NotReady level-based, and never fleet-wide by mistake', () => {
  const podsOf = (w: World, node: string): string[] => [...w.pods.values()].filter((p) => p.nodeName === node).map((p) => podKey(p));

  test('kubernetes #125618: a node that reports Ready=False while renewing its Lease gets its pods marked', async (t) => {
    const w = started(t, {}, (w) => {
      for (const n of zoneNodes('a', 3)) w.addNode(n, 'a');
      w.putPod('p1', 'a-n0');
      w.putPod('p2', 'a-n0');
      w.putPod('other', 'a-n1');
    });
    await w.run(20_000, 500);
    w.postReady('a-n0', 'False'); // the kubelet keeps renewing its Lease (startKubelets)
    await w.run(3 * 5000, 500);
    assert.deepEqual(podsOf(w, 'a-n0').map((k) => w.podReady(k)), ['False', 'False']);
    assert.equal(w.podReady('default/other'), 'True', 'pods of Ready nodes are untouched');
    assert.equal(w.events.filter((e) => e.reason === 'NodeNotReady' && e.ref.kind === 'Pod').length, 2);
  });

  test('kubernetes #112733: a False→Unknown transition still gets the pods marked (the kubelet had kept them Ready)', async (t) => {
    const w = started(t, {}, (w) => {
      for (const n of zoneNodes('a', 3)) w.addNode(n, 'a');
      w.putPod('p1', 'a-n0');
    });
    await w.run(20_000, 500);
    w.postReady('a-n0', 'False');
    w.alive.delete('a-n0'); // and then it stops heartbeating: False → Unknown after the grace period
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    assert.equal(w.ctl.view().nodes.find((n) => n.name === 'a-n0')?.ready, 'Unknown');
    assert.equal(w.podReady('default/p1'), 'False');
  });

  test('kubernetes #135205: after a restart in the middle of the marking, the pods of a node already Unknown are marked', async (t) => {
    // The previous leader wrote Ready=Unknown and died before it marked the pods.
    const w = started(t, {}, (w) => {
      for (const n of zoneNodes('a', 3)) w.addNode(n, 'a');
      w.addNode('a-dead', 'a', 'Unknown');
      w.alive.delete('a-dead');
      w.putPod('p1', 'a-dead');
      w.putPod('p2', 'a-dead');
    });
    await w.run(2 * 5000, 500);
    assert.deepEqual(podsOf(w, 'a-dead').map((k) => w.podReady(k)), ['False', 'False']);
  });

  test('kubernetes #77864/#125824: during the all-zones stop pod readiness is left alone (event + metric); marked when the stop ends', async (t) => {
    const a = zoneNodes('a', 3);
    const b = zoneNodes('b', 3);
    const w = started(t, {}, (w) => {
      for (const n of [...a, ...b]) {
        w.addNode(n, n.slice(0, 1));
        w.putPod(`pod-${n}`, n);
      }
    });
    await w.run(20_000, 500);
    // A control-plane or network partition: every kubelet's heartbeats stop at once.
    w.alive.clear();
    await w.run(GRACE_MS + 2 * LEASE_RENEW_MS, 500);
    assert.ok(w.ctl.view().allZonesDisrupted, 'all zones are FullDisruption');
    assert.ok(w.ctl.view().nodes.every((n) => n.ready === 'Unknown'), 'every node is Unknown');
    // Observe well past the point where upstream marks every pod (at each node's Unknown write).
    await w.run(4 * 5000, 500);
    assert.deepEqual(w.writes.filter((x) => x.kind === 'podNotReady'), [], 'no pod marked NotReady during the stop');
    assert.ok([...w.pods.keys()].every((k) => w.podReady(k) === 'True'));
    const held = w.events.filter((e) => e.reason === 'PodReadinessKept');
    assert.deepEqual(held.map((e) => e.ref.name).sort(), [...a, ...b].sort(), 'one Warning event per held node');
    assert.ok(held.every((e) => e.type === 'Warning' && /every zone is FullDisruption/.test(e.message)));
    assert.equal((await w.metrics.podMarkingHeldNodes.get()).values[0]?.value, 6);

    // One node comes back: the stop ends, and the pods of the nodes still not Ready are marked.
    w.alive.add('a-n0');
    w.renew('a-n0');
    w.postReady('a-n0', 'True');
    await w.run(5000, 500);
    assert.equal(w.ctl.view().allZonesDisrupted, false);
    assert.equal((await w.metrics.podMarkingHeldNodes.get()).values[0]?.value, 0);
    // Every node gets a full grace period on the way out (as its probe timestamp is reset): a node
    // whose recovery is not seen yet must not get its pods marked. Then the still-dead nodes' are.
    assert.deepEqual(w.writes.filter((x) => x.kind === 'podNotReady'), [], 'nothing marked within the grace period after the stop');
    await w.run(GRACE_MS + 2 * 5000, 500);
    assert.equal(w.podReady('default/pod-a-n0'), 'True', 'the recovered node keeps its pods Ready');
    for (const n of [...a, ...b].filter((x) => x !== 'a-n0')) assert.equal(w.podReady(`default/pod-${n}`), 'False', n);
    assert.equal((await w.metrics.podMarkingHeldNodes.get()).values[0]?.value, 0);
  });
});

describe('issue 14 item 6: legacy mode (--enable-taint-manager=false) matches 1.20 doEvictionPass', () => {
  const LEGACY: Partial<NodeLifecycleConfig> = { enableTaintManager: false, podEvictionTimeoutMs: 60_000, nodeEvictionRate: 1 };
  const evicted = (w: World): string[] => w.writes.filter((x) => x.kind === 'evict').map((x) => x.target).sort();

  /** Zone a: 3 nodes, zone b: 3 healthy nodes; a-n0 dies and stays dead. */
  async function deadNodeWorld(t: TestContext, setup: (w: World) => void = () => undefined): Promise<World> {
    const w = started(t, LEGACY, (w) => {
      for (const n of [...zoneNodes('a', 3), ...zoneNodes('b', 3)]) w.addNode(n, n.slice(0, 1));
      setup(w);
    });
    await w.run(20_000, 500);
    w.alive.delete('a-n0');
    return w;
  }

  test('pods that land on an already-evicted node are deleted too (1.20 nodeEvictionMap "evicted")', async (t) => {
    const w = await deadNodeWorld(t, (w) => w.putPod('first', 'a-n0'));
    // Unknown after grace, evicted after the pod eviction timeout (since the last heartbeat).
    await w.run(GRACE_MS + 60_000 + LEASE_RENEW_MS, 500);
    assert.deepEqual(evicted(w), ['default/first']);
    w.putPod('late', 'a-n0'); // e.g. bound before the scheduler saw the taint-less dead node
    await w.run(2 * 5000, 500);
    assert.deepEqual(evicted(w), ['default/first', 'default/late']);
    // Ready again: the node is no longer "evicted"; a pod bound now is left alone.
    w.alive.add('a-n0');
    w.renew('a-n0');
    w.postReady('a-n0', 'True');
    await w.run(5000, 500);
    w.putPod('after-recovery', 'a-n0');
    await w.run(3 * 5000, 500);
    assert.deepEqual(evicted(w), ['default/first', 'default/late']);
  });

  test('DaemonSet pods are recognised as 1.20 GetPodDaemonSets does (selector match, whatever the owner references)', async (t) => {
    const w = await deadNodeWorld(t, (w) => {
      w.daemonSets.add('default/ds');
      w.putPod('owned', 'a-n0', [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'ds-uid', controller: true }]);
      w.putPod('selected', 'a-n0'); // no owner reference, but a DaemonSet's selector matches its labels
      w.daemonSetSelected.add('default/selected');
      w.putPod('plain', 'a-n0');
    });
    await w.run(GRACE_MS + 60_000 + LEASE_RENEW_MS, 500);
    assert.deepEqual(evicted(w), ['default/plain']);
  });

  test('no DeletingAllPods event for a node without pods; one for a node with pods', async (t) => {
    const w = await deadNodeWorld(t);
    w.alive.delete('b-n0');
    w.putPod('p', 'b-n0');
    await w.run(GRACE_MS + 60_000 + 2 * LEASE_RENEW_MS, 500);
    const deleting = w.events.filter((e) => e.reason === 'DeletingAllPods').map((e) => e.ref.name);
    assert.deepEqual(deleting, ['b-n0']);
    assert.deepEqual(evicted(w), ['default/p']);
  });

  test('a 409 or 422 UID precondition failure means the pod is gone (NodeLifecycleWriter.evictPodLegacy)', async () => {
    const pod = new World().putPod('p', 'n1');
    const apiError = (code: number, body: object): ApiException<string> => new ApiException(code, 'x', JSON.stringify(body), {});
    const cases: [string, ApiException<string>, 'patch' | 'delete'][] = [
      ['422 metadata.uid on the status patch (recreated pod)', apiError(422, { reason: 'Invalid', message: 'Pod "p" is invalid: metadata.uid: Invalid value' }), 'patch'],
      ['409 UID precondition on the delete', apiError(409, { reason: 'Conflict', message: 'Precondition failed: UID in precondition' }), 'delete'],
      ['404 on the delete', apiError(404, { reason: 'NotFound' }), 'delete'],
    ];
    for (const [name, err, where] of cases) {
      const core = {
        patchNamespacedPodStatus: async () => {
          if (where === 'patch') throw err;
          return {};
        },
        deleteNamespacedPod: async () => {
          if (where === 'delete') throw err;
          return {};
        },
      };
      const writes: WriteScheduler = { schedule: (fn) => fn() };
      const writer = new NodeLifecycleWriter({ core } as unknown as KubeClients, writes, new FakeClock());
      assert.equal(await writer.evictPodLegacy(pod, 'n1'), 'gone', name);
    }
    const other: WriteScheduler = { schedule: (fn) => fn() };
    const failing = new NodeLifecycleWriter(
      { core: { patchNamespacedPodStatus: async () => Promise.reject(apiError(500, { reason: 'InternalError' })) } } as unknown as KubeClients,
      other,
      new FakeClock(),
    );
    await assert.rejects(failing.evictPodLegacy(pod, 'n1'), 'a 500 is not proof that the pod is gone');
  });

  test('the slim objects keep what the selector rule needs: DaemonSet selectors; pod labels only in legacy mode, shared', () => {
    const rawPod = (name: string, labels?: Record<string, string>): unknown => ({
      metadata: { namespace: 'default', name, uid: `u-${name}`, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z', ...(labels ? { labels } : {}) },
      spec: { nodeName: 'n1' },
      status: {},
    });
    assert.equal(toPod(rawPod('a', { app: 'agent' }))?.labels, undefined, 'toPod keeps no labels (the default pod cache)');
    const a = toPodWithLabels(rawPod('a', { app: 'agent', tier: 'node' }));
    const b = toPodWithLabels(rawPod('b', { tier: 'node', app: 'agent' }));
    assert.deepEqual(a?.labels, { app: 'agent', tier: 'node' });
    assert.equal(a?.labels, b?.labels, 'one shared object per distinct label set');
    assert.ok(Object.isFrozen(a?.labels));
    assert.equal(toPodWithLabels(rawPod('c'))?.labels, undefined);
    const ds = toDaemonSet({
      metadata: { namespace: 'default', name: 'ds', uid: 'ds-uid' },
      spec: { selector: { matchLabels: { app: 'agent' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['node'] }, { operator: 'Exists' }] } },
    });
    assert.deepEqual(ds?.selector, {
      matchLabels: { app: 'agent' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['node'] },
        { key: '', operator: 'Exists' },
      ],
    });
    assert.equal(toDaemonSet({ metadata: { namespace: 'default', name: 'ds', uid: 'ds-uid' }, spec: {} })?.selector, undefined);
    assert.equal(daemonSetSelectorMatches(ds?.selector, { app: 'agent', tier: 'node' }), undefined, 'the malformed entry makes it invalid: selects nothing');
    assert.ok(a && ds && podSelectedByDaemonSet({ namespace: a.namespace, labels: a.labels ?? {} }, [{ ...ds, selector: { matchLabels: { app: 'agent' } } }]));
  });

  test('podSelectedByDaemonSet mirrors 1.20 GetPodDaemonSets + LabelSelectorAsSelector', () => {
    const ds = (namespace: string, selector?: Parameters<typeof daemonSetSelectorMatches>[0]): { namespace: string; selector?: typeof selector } =>
      selector === undefined ? { namespace } : { namespace, selector };
    const pod = { namespace: 'default', labels: { app: 'agent', tier: 'node' } };
    assert.equal(podSelectedByDaemonSet(pod, [ds('default', { matchLabels: { app: 'agent' } })]), true);
    assert.equal(podSelectedByDaemonSet(pod, [ds('other', { matchLabels: { app: 'agent' } })]), false, 'another namespace');
    assert.equal(podSelectedByDaemonSet({ namespace: 'default', labels: {} }, [ds('default', { matchLabels: { app: 'agent' } })]), false, 'a pod without labels');
    assert.equal(podSelectedByDaemonSet(pod, [ds('default')]), false, 'a nil selector matches nothing');
    assert.equal(podSelectedByDaemonSet(pod, [ds('default', {})]), false, 'an empty selector matches nothing');
    assert.equal(podSelectedByDaemonSet(pod, [ds('default', { matchExpressions: [{ key: 'app', operator: 'In', values: ['agent', 'x'] }] })]), true);
    assert.equal(podSelectedByDaemonSet(pod, [ds('default', { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['agent'] }] })]), false);
    assert.equal(podSelectedByDaemonSet(pod, [ds('default', { matchExpressions: [{ key: 'gone', operator: 'DoesNotExist' }] })]), true);
    assert.equal(podSelectedByDaemonSet(pod, [ds('default', { matchLabels: { app: 'agent' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] })]), true);
    assert.equal(daemonSetSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'In', values: [] }] }, pod.labels), undefined, 'In without values is invalid');
    assert.equal(daemonSetSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'Exists', values: ['a'] }] }, pod.labels), undefined);
    assert.equal(daemonSetSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'Gt', values: ['1'] }] }, pod.labels), undefined);
    assert.equal(
      podSelectedByDaemonSet(pod, [ds('default', { matchExpressions: [{ key: 'app', operator: 'Bogus' }] }), ds('default', { matchLabels: { tier: 'node' } })]),
      true,
      'an invalid selector is skipped, the next DaemonSet still counts',
    );
  });
});

describe('issue 14 item 7: a busy health queue cannot starve the monitor pass', () => {
  test('a status write that never finishes (the health queue never idles) does not stop the monitor passes', async (t) => {
    let release: () => void = () => undefined;
    const hung = new Promise<void>((r) => (release = r));
    t.after(() => release()); // before stop(), which waits for the running sync
    const w = started(t, {}, (w) => {
      for (const n of zoneNodes('a', 3)) w.addNode(n, 'a');
      w.statusWriteGate = (name) => (name === 'a-n0' ? hung : Promise.resolve());
    });
    const passes = async (): Promise<number> =>
      (await w.metrics.updateAllNodesHealthDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    await w.run(20_000, 500);
    w.alive.delete('a-n0');
    await w.run(GRACE_MS + LEASE_RENEW_MS, 500); // a-n0's Unknown write is now in flight, forever
    const before = await passes();
    // a-n0's Lease and Node events keep re-adding it while its sync runs.
    for (let i = 0; i < 12; i++) {
      w.ctl.leaseChanged('a-n0');
      await w.run(5000, 500);
    }
    const after = await passes();
    assert.ok(after - before >= 4, `monitor passes went on: ${after - before} in 60 s (period 5 s, each waits at most one period)`);
    release();
  });

  test('Lease events that keep a node in the health queue (each sync 1 s) do not stop the monitor passes', async (t) => {
    const w = started(t, {}, (w) => {
      for (const n of zoneNodes('a', 3)) w.addNode(n, 'a');
      w.statusWriteGate = (name) => (name === 'a-n0' ? w.clock.sleep(1000) : Promise.resolve());
      w.statusWriteLost.add('a-n0');
    });
    const passes = async (): Promise<number> =>
      (await w.metrics.updateAllNodesHealthDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    await w.run(20_000, 500);
    w.alive.delete('a-n0');
    await w.run(GRACE_MS + LEASE_RENEW_MS, 500);
    const before = await passes();
    for (let i = 0; i < 120; i++) {
      w.ctl.leaseChanged('a-n0'); // re-added while its sync runs: the queue is never idle
      await w.run(500, 250);
    }
    const after = await passes();
    // stop() waits for a-n0's running sync, which waits on the fake clock.
    const stopping = w.ctl.stop();
    await w.run(2000, 250);
    await stopping;
    assert.ok(after - before >= 8, `monitor passes went on: ${after - before} in 60 s (period 5 s, each waits ~1 s for a-n0's sync)`);
  });
});

// kubernetes #138698, `NodeControllerLeaseCircuitBreaker` (beta, on by default in 1.37.2). The first
// four tests port the lease cases of upstream's TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease
// (node_lifecycle_controller_test.go) with their names: upstream's fake client has no Lease unless
// the case sets `apiServerLease`, so "Node lease is (also) expired" means a live read answering 404.
describe('NodeControllerLeaseCircuitBreaker: the live Lease read before a node is marked unhealthy', () => {
  const statusWrites = (w: World, node: string): RecordedWrite[] => w.writes.filter((x) => x.kind === 'status' && x.target === node);
  const readyOf = (w: World, node: string): string | undefined => getCondition(w.nodes.get(node)?.conditions ?? [], 'Ready')?.status;

  /** Zone a: n0 (with a pod), n1, n2; zone b: 3 nodes; all alive for 20 s. */
  async function world(t: TestContext, opts: { breaker?: boolean; setup?: (w: World) => void } = {}): Promise<World> {
    const w = new World();
    w.breaker = opts.breaker ?? true;
    for (const n of [...zoneNodes('a', 3), ...zoneNodes('b', 3)]) w.addNode(n, n.slice(0, 1));
    w.putPod('pod0', 'a-n0');
    opts.setup?.(w);
    w.build().start();
    w.startKubelets();
    t.after(() => w.ctl.stop());
    await w.run(20_000, 500);
    return w;
  }

  test('Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is also expired.', async (t) => {
    const w = await world(t);
    w.alive.delete('a-n0');
    w.apiLeases.delete('kube-node-lease/a-n0'); // upstream's fake API server has no Lease: 404
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    assert.deepEqual(statusWrites(w, 'a-n0').map((x) => x.detail), ['Unknown']);
    assert.ok(w.leaseReads.includes('a-n0'), 'the Lease was read live first');
    assert.equal(w.podReady('default/pod0'), 'False', 'expectedPodStatusUpdate: true');
  });

  test('Node created long time ago, without status. Node lease is expired.', async (t) => {
    const w = await world(t, {
      setup: (w) => {
        const n = w.nodes.get('a-n1');
        assert.ok(n);
        w.nodes.set('a-n1', { ...n, conditions: [] });
      },
    });
    w.alive.delete('a-n1');
    w.apiLeases.delete('kube-node-lease/a-n1');
    await w.run(DEFAULT_CONFIG.nodeStartupGracePeriodMs + LEASE_RENEW_MS + 5000, 500);
    assert.deepEqual(statusWrites(w, 'a-n1').map((x) => x.detail), ['Unknown']);
    assert.equal(getCondition(w.nodes.get('a-n1')?.conditions ?? [], 'Ready')?.reason, 'NodeStatusNeverUpdated');
  });

  test('Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is expired in cache, but fresh in API server.', async (t) => {
    const w = await world(t);
    // The Lease informer stays connected but stops delivering: the kubelets keep renewing.
    w.leaseCacheFrozen = true;
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    assert.deepEqual(w.writes.filter((x) => x.kind === 'status'), [], 'no node marked Unknown');
    assert.equal(w.podReady('default/pod0'), 'True', 'expectedPodStatusUpdate: false');
    assert.ok(w.leaseReads.length > 0, 'expired nodes had their Lease read live');
    assert.deepEqual(w.noExecuteAdds(), []);
    // The cache catches up: every node renewed, nothing was ever marked.
    w.catchUpLeaseCache();
    await w.run(3 * GRACE_MS, 500);
    assert.deepEqual(w.writes.filter((x) => x.kind === 'status'), []);
    assert.ok(zoneNodes('a', 3).every((n) => readyOf(w, n) === 'True'));
  });

  test('Node lease expired in cache but fresh in API server. EnsureReady should skip on second run.', async (t) => {
    // The hold is controller-wide: after a-n0's read finds the cache behind, a-n1 (whose kubelet
    // really died, so its live Lease matches the cache) is not read nor marked until the cache
    // has caught up; then it is.
    const w = await world(t);
    // The Lease informer stays connected but stops delivering. a-n0's kubelet keeps renewing (in
    // the API server only); a-n1's kubelet dies now. The other nodes, and a-n1 for 5 s more, post
    // NodeStatus heartbeats, so a-n0's cached Lease expires first.
    w.leaseCacheFrozen = true;
    w.alive.delete('a-n1');
    let n1Posts = true;
    w.clock.setTimeout(() => (n1Posts = false), 5000);
    const statusHeartbeat = (): void => {
      for (const n of ['a-n2', 'b-n0', 'b-n1', 'b-n2']) w.postReady(n, 'True');
      if (n1Posts) w.postReady('a-n1', 'True');
      w.clock.setTimeout(statusHeartbeat, 5000);
    };
    statusHeartbeat();
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    const readsDuringHold = w.leaseReads.filter((n) => n === 'a-n1').length;
    assert.deepEqual(statusWrites(w, 'a-n1'), [], 'a-n1 not marked while the Lease cache is behind');
    assert.deepEqual(statusWrites(w, 'a-n0'), []);
    await w.run(3 * 5000, 500);
    assert.equal(w.leaseReads.filter((n) => n === 'a-n1').length, readsDuringHold, 'no further read while the hold lasts (EnsureReady first)');
    assert.deepEqual(statusWrites(w, 'a-n1'), []);
    w.catchUpLeaseCache();
    await w.run(2 * 5000, 500);
    assert.deepEqual(statusWrites(w, 'a-n1').map((x) => x.detail), ['Unknown'], 'marked once the cache caught up');
    assert.deepEqual(statusWrites(w, 'a-n0'), [], 'a-n0 renewed all along');
  });

  test('a live Lease with the resourceVersion the cache saw at its last renewal: marked Unknown', async (t) => {
    const w = await world(t);
    w.alive.delete('a-n0');
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    assert.deepEqual(statusWrites(w, 'a-n0').map((x) => x.detail), ['Unknown']);
    assert.deepEqual(w.leaseReads.filter((n) => n === 'a-n0').length, 1);
  });

  test('a live read that fails (500, timeout) proves nothing: not marked until a read answers', async (t) => {
    const w = await world(t);
    w.alive.delete('a-n0');
    w.leaseReadError = new ApiException(500, 'x', '{"reason":"InternalError"}', {});
    await w.run(2 * GRACE_MS, 500);
    assert.deepEqual(statusWrites(w, 'a-n0'), [], 'fail closed');
    assert.ok(w.leaseReads.filter((n) => n === 'a-n0').length >= 2, 'retried');
    w.leaseReadError = undefined;
    await w.run(2 * 5000, 500);
    assert.deepEqual(statusWrites(w, 'a-n0').map((x) => x.detail), ['Unknown']);
  });

  test('NodeControllerLeaseCircuitBreaker=false: the cache decides alone (1.36), no live read', async (t) => {
    const w = await world(t, { breaker: false });
    w.leaseCacheFrozen = true;
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    assert.deepEqual(w.leaseReads, []);
    assert.ok(statusWrites(w, 'a-n0').length > 0, 'without the gate a lagging Lease cache marks live nodes Unknown');
  });

  /** A write of a-n0's Lease that is not a renewal (same renewTime, a new resourceVersion: a label, an owner reference), in the API and the cache. */
  function touchLease(w: World, node: string): void {
    const key = `kube-node-lease/${node}`;
    const last = w.leases.get(key);
    assert.ok(last);
    const touched: Lease = { ...last, resourceVersion: w.nextResourceVersion() };
    w.apiLeases.set(key, touched);
    w.leases.set(key, touched);
    w.ctl.leaseChanged(node);
    w.leaseCacheRV = touched.resourceVersion;
  }

  test('a Lease changed without a renewal (same renewTime, new resourceVersion) after a monitor pass saw the renewal keeps its node from being marked, as upstream', async (t) => {
    // Upstream compares the live resourceVersion with nodeHealth.lease, the Lease its pass saved
    // at the last renewal; a later change that is not a renewal never matches, so upstream never
    // marks that node Unknown while the gate is on. Ours may not act more: this fails if the
    // version saved once a pass has run is ever replaced.
    const w = await world(t);
    await w.run(1000, 500);
    w.alive.delete('a-n0');
    w.renew('a-n0'); // its last renewal, at +21 s
    await w.run(6000, 500); // the pass at +25 s saves it
    touchLease(w, 'a-n0');
    await w.run(2 * GRACE_MS, 500);
    assert.deepEqual(statusWrites(w, 'a-n0'), []);
    assert.ok(w.leaseReads.filter((n) => n === 'a-n0').length >= 2, 'read again on each pass');
    assert.deepEqual(w.noExecuteAdds(), []);
    assert.equal(readyOf(w, 'a-n1'), 'True');
  });

  test('a second version of a renewal (same renewTime) written before the next monitor pass is the one compared with the live read: the dead node is marked, as upstream', async (t) => {
    // Upstream saves a renewal in its next 5 s pass, from the lister, which by then holds the second
    // version; its live read matches that one and it marks the node. Ours sees each Lease event
    // (deliberate difference 1) and used to keep the first version, so every live read differed and
    // the dead node was never marked (fuzz run #1043 of seed 20261130: a kubelet renewing twice at
    // one instant, test/unit/fuzz-regressions/lease-written-twice.test.ts).
    const w = await world(t);
    await w.run(1000, 500); // +21 s: the pass at +20 s has run, the next is at +25 s
    w.alive.delete('a-n0');
    w.renew('a-n0');
    touchLease(w, 'a-n0');
    await w.run(GRACE_MS + 3 * 5000, 500);
    assert.deepEqual(statusWrites(w, 'a-n0').map((x) => x.detail), ['Unknown']);
    assert.equal(w.podReady('default/pod0'), 'False');
    assert.deepEqual(
      w.noExecuteAdds().map((x) => x.target),
      ['a-n0'],
    );
  });

  test('an Unknown node that already carries its NoExecute taint is not read again on every pass', async (t) => {
    const w = await world(t);
    w.alive.delete('a-n0');
    await w.run(GRACE_MS + LEASE_RENEW_MS + 15_000, 500);
    assert.equal(readyOf(w, 'a-n0'), 'Unknown');
    assert.equal(w.noExecuteAdds().filter((x) => x.target === 'a-n0').length, 1);
    const reads = w.leaseReads.length;
    await w.run(10 * 5000, 500);
    assert.equal(w.leaseReads.length, reads);
  });
});

describe('leasecheck: pure parts of the Lease circuit breaker', () => {
  test('compareResourceVersion mirrors apimachinery CompareResourceVersion', () => {
    assert.equal(compareResourceVersion('9', '10'), -1);
    assert.equal(compareResourceVersion('10', '10'), 0);
    assert.equal(compareResourceVersion('11', '10'), 1);
    assert.equal(compareResourceVersion('0', '1'), undefined, 'zero is not a live resourceVersion');
    assert.equal(compareResourceVersion('01', '1'), undefined, 'leading zero');
    assert.equal(compareResourceVersion('', '1'), undefined);
    assert.equal(compareResourceVersion('1a', '1'), undefined);
  });

  test('liveLeaseVerdict: 404 or the saved resourceVersion acts; anything else holds', () => {
    assert.deepEqual(liveLeaseVerdict('5', undefined), { act: true });
    assert.deepEqual(liveLeaseVerdict('5', { resourceVersion: '5' }), { act: true });
    assert.deepEqual(liveLeaseVerdict('5', { resourceVersion: '7' }), { act: false, liveResourceVersion: '7' });
    assert.deepEqual(liveLeaseVerdict(undefined, { resourceVersion: '7' }), { act: false, liveResourceVersion: '7' }, 'no Lease saved but one exists');
  });

  test('LeaseCacheConsistency: holds until the informer reaches the newest recorded resourceVersion', () => {
    const c = new LeaseCacheConsistency();
    assert.equal(c.ensureReady('1'), undefined, 'nothing recorded');
    c.wroteAt('20');
    c.wroteAt('15'); // older: kept 20
    assert.deepEqual(c.ensureReady('19'), { wroteResourceVersion: '20', readResourceVersion: '19' });
    assert.deepEqual(c.ensureReady(''), { wroteResourceVersion: '20', readResourceVersion: '' }, 'ours: a relisting informer holds');
    assert.equal(c.ensureReady('20'), undefined);
    assert.equal(c.awaited, undefined, 'cleared once ready');
    c.wroteAt('x');
    assert.equal(c.ensureReady('5'), undefined, 'incomparable: ready, as upstream');
  });
});

describe('issue 18: node_collector_update_node_health_duration_seconds counts what upstream counts', () => {
  test('one observation per node per monitor pass; Lease renewals between passes add none', async (t) => {
    const names = zoneNodes('a', 3);
    const w = started(t, {}, (w) => {
      for (const n of names) w.addNode(n, 'a');
    });
    let leaseEvents = 0;
    const leaseChanged = w.ctl.leaseChanged.bind(w.ctl);
    w.ctl.leaseChanged = (name: string): void => {
      leaseEvents++;
      leaseChanged(name);
    };
    await w.run(23_000, 500);
    const count = async (h: typeof w.metrics.updateNodeHealthDuration): Promise<number> =>
      (await h.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? NaN;
    const passes = await count(w.metrics.updateAllNodesHealthDuration);
    assert.ok(passes >= 4, `several monitor passes ran (${passes})`);
    assert.ok(leaseEvents >= names.length * 2, `Leases renewed between passes (${leaseEvents} events)`);
    assert.equal(await count(w.metrics.updateNodeHealthDuration), names.length * passes);
  });
});

describe('issue 29: a dying node gets its NoSchedule and NoExecute taints in one write (differences 12 and 13)', () => {
  const NO_EXECUTE = '+node.kubernetes.io/unreachable:NoExecute -node.kubernetes.io/not-ready:NoExecute';
  const taints = (w: World, n: string): RecordedWrite[] => w.writes.filter((x) => x.kind === 'taint' && x.target === n);
  const unknownAt = (w: World, n: string): number | undefined => w.writes.find((x) => x.kind === 'status' && x.target === n && x.detail === 'Unknown')?.atMs;
  const carriesNoSchedule = (w: World, n: string): boolean =>
    w.nodes.get(n)?.taints.some((x) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoSchedule') ?? false;

  /** Zone a of 5 nodes, all alive for 20 s; then a-n0 and a-n1 die together (2 of 5: Normal). */
  async function wave(t: TestContext, nodeEvictionRate: number): Promise<World> {
    const w = started(t, { nodeEvictionRate }, (w) => {
      for (const n of zoneNodes('a', 5)) w.addNode(n, 'a');
    });
    await w.run(20_000, 100);
    w.alive.delete('a-n0');
    w.alive.delete('a-n1');
    await w.run(GRACE_MS + 25_000, 100);
    return w;
  }

  test('with tokens to spare, each node gets one taint write, which carries the condition taints too', async (t) => {
    const w = await wave(t, 100);
    for (const n of ['a-n0', 'a-n1']) {
      assert.deepEqual(taints(w, n).map((x) => x.detail), [NO_EXECUTE], `${n}: no separate NoSchedule write`);
      assert.ok(carriesNoSchedule(w, n), `${n} carries unreachable:NoSchedule`);
    }
  });

  test('a node still waiting for its token gets its condition taints on their own, at most 1 s after its Unknown write', async (t) => {
    const w = await wave(t, 0.1); // one token per 10 s
    for (const n of ['a-n0', 'a-n1']) {
      const unknown = unknownAt(w, n);
      assert.ok(unknown !== undefined, `${n} was marked Unknown`);
      const [noSchedule, noExecute] = taints(w, n);
      assert.equal(noSchedule?.detail, '', `${n}: the condition-taint write`);
      const after = (noSchedule?.atMs ?? Infinity) - unknown;
      assert.ok(after <= 1100, `${n}: no more than 1 s after the Unknown write (+${after} ms)`);
      assert.equal(noExecute?.detail, NO_EXECUTE, `${n}: then its NoExecute taint, at the zone rate`);
      assert.ok(carriesNoSchedule(w, n));
    }
  });
});
