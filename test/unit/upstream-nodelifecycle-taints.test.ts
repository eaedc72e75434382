/**
 * Ports of upstream's tainting, event, label and node-health tables to unit tests of our controller
 * shell (src/nodelifecycle/controller.ts). Source: `pkg/controller/nodelifecycle/node_lifecycle_controller_test.go`
 * of k8s.io/kubernetes v1.37.2 (the Go module cache); case names are upstream's (for an unnamed
 * case, the comment above it). How upstream's fake clientset and `nodeController.now` map onto
 * FakeClock, in-memory caches and the recording writes double: test/support/upstream-nodelifecycle.ts.
 *
 * Upstream calls `monitorNodeHealth`, `doNoExecuteTaintingPass`, `doNoScheduleTaintingPass` and
 * `reconcileNodeLabels` by hand; our shell runs them from its informer handlers and timers, so each
 * port changes the caches as upstream's `fakeNodeHandler.UpdateStatus` + `syncNodeStore` do and lets
 * the shell react at the same fake instant (`UpstreamTable.pass`).
 *
 * Documented differences that show here: deliberate difference 12 (a NoExecute taint patch also
 * brings the node's NoSchedule condition taints in line, so `unreachable:NoSchedule` arrives with
 * `unreachable:NoExecute`): upstream checks `TaintExists`, which holds for both; where it checks
 * that a node has no taint at all, ours has none either.
 *
 * Also ported (not in issue 15's list, same file): `TestApplyNoExecuteTaintsToUnreachableNode`,
 * `Test_isNodeExcludedFromDisruptionChecks`.
 *
 * `TestTryUpdateNodeHealth` seeds upstream's `nodeHealthMap` (a Go-internal seam our shell does not
 * expose) and calls `tryUpdateNodeHealth`; it is ported against the pure function the shell calls
 * for it, `observeNodeHealth` (src/nodelifecycle/health.ts), with the same seeded record.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cond, MINUTE, newPod, upNode, UpstreamTable } from '../support/upstream-nodelifecycle.js';
import { observeNodeHealth, savedReadyCondition, type NodeHealth } from '../../src/nodelifecycle/health.js';
import type { NodeCondition } from '../../src/kube/objects.js';
import { isExcludedFromDisruption } from '../../src/nodelifecycle/zones.js';

const T2017 = Date.UTC(2017, 0, 1, 12);
const T2015 = Date.UTC(2015, 0, 1, 12);
const UNREACHABLE_NE = 'node.kubernetes.io/unreachable:NoExecute';
const NOT_READY_NE = 'node.kubernetes.io/not-ready:NoExecute';
const ready = (status: string, hb: number, tr: number): NodeCondition[] => [cond('Ready', status, hb, tr)];

describe('TestApplyNoExecuteTaints', () => {
  test('Unreachable/NotReady NoExecute taints are applied, removed when Ready, and not applied once the Ready condition is gone', async (t) => {
    const u = await UpstreamTable.create(t, {
      now: T2017,
      nodes: [
        upNode('node0', { conditions: ready('Unknown', T2015, T2015) }), // Unreachable Taint with effect 'NoExecute' should be applied to this node.
        upNode('node1', { conditions: ready('True', T2017, T2017) }), // a second healthy node
        upNode('node2', { conditions: ready('False', T2015, T2015) }), // NotReady Taint with NoExecute effect should be applied to this node.
        upNode('node3', { conditions: ready('True', Date.UTC(2016, 0, 1, 12), Date.UTC(2016, 0, 1, 12)) }),
      ],
      pods: [newPod('pod0', 'node0')],
    });
    await u.quiesce(500); // upstream's real-time token bucket refills between Try calls
    assert.ok(u.taints('node0').includes(UNREACHABLE_NE), `node0: ${u.taints('node0').join()}`);
    assert.ok(u.taints('node2').includes(NOT_READY_NE), `node2: ${u.taints('node2').join()}`);

    // Make node2 healthy again.
    await u.pass(0, () => u.setConditions('node2', ready('True', T2017 + 10 * MINUTE, T2017)), 500);
    assert.deepEqual(u.taints('node2'), [], 'no taint at all on node2');

    // node3 turns NotReady; upstream's monitor pass queues it, then its status is replaced by one
    // without Ready before upstream's taint pass runs, so upstream never taints it. Our shell has no
    // such window: it observes the update when it arrives and kicks the taint pass at once
    // (deliberate differences 1 and 2: upstream would taint too, one monitor pass + one 100 ms
    // taint pass later, had the status stayed). What we assert: node3 is tainted not-ready:NoExecute
    // only while it is NotReady, and once its Ready condition is gone nothing is added or swapped.
    await u.pass(0, () => u.setConditions('node3', ready('False', T2017 + 10 * MINUTE, T2017)));
    assert.ok(u.taints('node3').includes(NOT_READY_NE), `ours: node3 tainted at once: ${u.taints('node3').join()}`);
    await u.pass(0, () => u.setConditions('node3', [cond('MemoryPressure', 'Unknown', T2017 + 10 * MINUTE, T2017)]), 500);
    assert.ok(!u.taints('node3').includes(UNREACHABLE_NE), `node3: ${u.taints('node3').join()}`);
    assert.equal(u.w.writes.filter((x) => x.kind === 'taint' && x.target === 'node3' && /NoExecute/.test(x.detail)).length, 1, 'no NoExecute write after the Ready condition is gone');
  });
});

describe('TestApplyNoExecuteTaintsToUnreachableNode', () => {
  test('a NoExecute taint is applied to a node that has not posted status for longer than the grace period', async (t) => {
    const time1 = T2017;
    const time2 = time1 + 50_000 + 1000;
    const u = await UpstreamTable.create(t, {
      now: time1,
      nodes: [upNode('node0', { conditions: ready('True', time1, time1) }), upNode('node1', { conditions: ready('True', time1, time1) })],
      pods: [newPod('pod0', 'node0')],
    });
    assert.deepEqual(u.taints('node0'), []);
    assert.deepEqual(u.taints('node1'), []);
    await u.pass(time2 - time1, () => u.setConditions('node1', ready('True', time2, time1)), 500);
    assert.ok(u.taints('node0').includes(UNREACHABLE_NE), `node0: ${u.taints('node0').join()}`);
    assert.deepEqual(u.taints('node1'), []);
    await u.pass(time2 - time1, () => u.setConditions('node0', ready('True', time2, time2)), 500);
    assert.deepEqual(u.taints('node0'), [], 'Unreachable taint should be deleted from node0 after it sends a new heartbeat');
  });
});

describe('TestApplyNoExecuteTaintsToNodesEnqueueTwice', () => {
  test('every node is tainted with NoExecute even if enqueued twice', async (t) => {
    const u = await UpstreamTable.create(t, {
      now: T2017,
      nodes: [
        upNode('node0', { conditions: ready('Unknown', T2015, T2015) }),
        upNode('node1', { conditions: ready('True', T2017, T2017) }),
        upNode('node2', { conditions: ready('False', T2015, T2015) }),
      ],
      pods: [newPod('pod0', 'node0')],
    });
    // 1. monitor node health twice, add untainted node once (the first pass ran in create()).
    await u.pass(0);
    // 2. mark node0 healthy; add other notReady nodes.
    await u.pass(0, (w) => {
      u.setConditions('node0', ready('True', T2017 + 10 * MINUTE, T2017));
      w.storeNode(upNode('node3', { conditions: ready('Unknown', T2015, T2015) }));
      w.storeNode(upNode('node4', { conditions: ready('True', T2017, T2017) }));
      w.storeNode(upNode('node5', { conditions: ready('False', T2015, T2015) }));
    });
    // 3./4. monitor again, then the NoExecute taint pass (tokens refill as upstream's real-time bucket does).
    await u.pass(0, () => undefined, 500);
    assert.ok(u.taints('node3').includes(UNREACHABLE_NE), `node3: ${u.taints('node3').join()}`);
    assert.ok(u.taints('node5').includes(NOT_READY_NE), `node5: ${u.taints('node5').join()}`);
  });
});

describe('TestSwapUnreachableNotReadyTaints', () => {
  test('an Unknown node that turns NotReady has unreachable:NoExecute swapped for not-ready:NoExecute at once', async (t) => {
    const u = await UpstreamTable.create(t, {
      now: T2017,
      nodes: [upNode('node0', { conditions: ready('Unknown', T2015, T2015) }), upNode('node1', { conditions: ready('True', T2017, T2017) })],
      pods: [newPod('pod0', 'node0')],
    });
    assert.ok(u.taints('node0').includes(UNREACHABLE_NE), `node0: ${u.taints('node0').join()}`);
    // Same instant (`now` unchanged): the zone's token for this instant is spent, so the swap can
    // only happen if it bypasses the rate limiter, as upstream's does ("immediately").
    await u.pass(0, () => {
      u.setConditions('node0', ready('False', T2017 + 9 * MINUTE, T2017));
      u.setConditions('node1', ready('True', T2017 + 10 * MINUTE, T2017));
    });
    assert.ok(u.taints('node0').includes(NOT_READY_NE), `node0: ${u.taints('node0').join()}`);
    assert.ok(!u.taints('node0').includes(UNREACHABLE_NE), 'the unreachable taint is gone in the same patch');
  });
});

describe('TestSwapUnreachableNotReadyTaints [ours: the other direction, in a paused zone]', () => {
  test('a NotReady node that stops posting status has not-ready:NoExecute swapped for unreachable:NoExecute at once, even at rate 0', async (t) => {
    const nodes = ['node0', 'node1', 'node2', 'node3'];
    const u = await UpstreamTable.create(t, {
      now: T2017,
      config: { nodeEvictionRate: 0.1, secondaryNodeEvictionRate: 0.01 }, // the defaults: a small PartialDisruption zone stops
      nodes: nodes.map((n) => upNode(n, { conditions: ready(n === 'node0' ? 'False' : 'True', T2017, T2017) })),
      pods: [newPod('pod0', 'node0')],
    });
    assert.ok(u.taints('node0').includes(NOT_READY_NE), `node0: ${u.taints('node0').join()}`);
    // The other kubelets post at +30 s (so none is silent for more than half the grace period,
    // which deliberate difference 3 would count as not Ready). Grace (50 s) passes without a
    // heartbeat from node0 (marked Unknown); node1 and node2 post NotReady, node3 Ready: 3 of 4
    // not Ready, PartialDisruption, rate 0 in a zone this small.
    await u.pass(30_000, () => ['node1', 'node2', 'node3'].forEach((n) => u.setConditions(n, ready('True', T2017 + 30_000, T2017))));
    const later = 50_000 + 1000;
    await u.pass(later, () => {
      u.setConditions('node1', ready('False', T2017 + later, T2017 + later));
      u.setConditions('node2', ready('False', T2017 + later, T2017 + later));
      u.setConditions('node3', ready('True', T2017 + later, T2017));
    }, 500);
    assert.deepEqual(u.w.zoneStates(), { '': 'PartialDisruption' });
    assert.equal(u.ready('node0'), 'Unknown');
    // The swap is not rate-limited: it happens while the zone is paused.
    assert.ok(u.taints('node0').includes(UNREACHABLE_NE), `node0: ${u.taints('node0').join()}`);
    assert.ok(!u.taints('node0').includes(NOT_READY_NE), 'the not-ready taint is gone in the same patch');
    // The zone's rate (0) still holds back new taints.
    assert.ok(!u.taints('node1').includes(NOT_READY_NE) && !u.taints('node2').includes(NOT_READY_NE), 'no new NoExecute taint at rate 0');
  });
});

describe('TestTaintsNodeByCondition', () => {
  const z = { 'topology.kubernetes.io/region': 'region1', 'topology.kubernetes.io/zone': 'zone1', 'failure-domain.beta.kubernetes.io/region': 'region1', 'failure-domain.beta.kubernetes.io/zone': 'zone1' };
  const cases: [name: string, conditions: NodeCondition[], expected: string[]][] = [
    ['NetworkUnavailable is true', [cond('Ready', 'True', T2015, T2015), cond('NetworkUnavailable', 'True', T2015, T2015)], ['node.kubernetes.io/network-unavailable:NoSchedule']],
    // Upstream's table has this case twice, with the same name and node.
    ['NetworkUnavailable is true', [cond('Ready', 'True', T2015, T2015), cond('NetworkUnavailable', 'True', T2015, T2015)], ['node.kubernetes.io/network-unavailable:NoSchedule']],
    ['Ready is false', [cond('Ready', 'False', T2015, T2015)], ['node.kubernetes.io/not-ready:NoSchedule']],
    ['Ready is unknown', [cond('Ready', 'Unknown', T2015, T2015)], ['node.kubernetes.io/unreachable:NoSchedule']],
  ];
  for (const [i, [name, conditions, expected]] of cases.entries()) {
    test(i === 1 ? `${name} (upstream's repeated case)` : name, async (t) => {
      // Upstream runs the cases one after another on one node0; each case here starts from upstream's
      // initial node0 (Ready) and applies the case's node, as upstream's `fakeNodeHandler.Update` does.
      const u = await UpstreamTable.create(t, { now: T2017, nodes: [upNode('node0', { labels: z, conditions: ready('True', T2015, T2015) })], pods: [newPod('pod0', 'node0')] });
      // The node as the case gives it; no monitor pass in between (the health loop would mark the
      // 2015 heartbeat Unknown): only the NoSchedule pass, which the shell runs on the node update.
      u.w.storeNode({ ...u.w.nodes.get('node0')!, conditions });
      await u.quiesce();
      assert.deepEqual(u.taints('node0').filter((x) => x.endsWith(':NoSchedule')).sort(), expected.sort());
    });
  }
});

describe('TestNodeEventGeneration', () => {
  test('a node seen for the first time gets RegisteredNode, on its UID', async (t) => {
    const u = await UpstreamTable.create(t, {
      now: Date.UTC(2016, 8, 10, 12),
      nodes: [{ ...upNode('node0', { created: Date.UTC(2015, 7, 10), conditions: ready('Unknown', Date.UTC(2015, 7, 10), Date.UTC(2015, 7, 10)) }), uid: '1234567890' }],
      pods: [newPod('pod0', 'node0')],
    });
    const events = u.w.events;
    assert.equal(events[0]?.reason, 'RegisteredNode');
    assert.ok(events.every((e) => e.ref.kind !== 'Node' || e.ref.uid === '1234567890'), 'every node event on the node UID');
    // Upstream expects exactly 1 event. Ours adds, on the same node: AllZonesDisrupted (deliberate
    // difference 4: node0 is the only node and is Unknown, so the all-zones stop is explained) and
    // PodReadinessKept (deliberate difference 15: pod0 keeps its Ready condition during the stop).
    assert.deepEqual(
      events.map((e) => e.reason),
      ['RegisteredNode', 'AllZonesDisrupted', 'PodReadinessKept'],
    );
  });
});

describe('TestReconcileNodeLabels', () => {
  const z = { 'topology.kubernetes.io/region': 'region1', 'topology.kubernetes.io/zone': 'zone1', 'failure-domain.beta.kubernetes.io/region': 'region1', 'failure-domain.beta.kubernetes.io/zone': 'zone1' };
  const cases: [name: string, labels: Record<string, string>, expected: Record<string, string>][] = [
    ['No-op if node has no labels', {}, {}],
    ['No-op if no target labels present', { 'topology.kubernetes.io/region': 'region1' }, { 'topology.kubernetes.io/region': 'region1' }],
    [
      "Create OS/arch beta labels when they don't exist",
      { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
      { 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
    ],
    [
      'Reconcile OS/arch beta labels to match stable labels',
      { 'beta.kubernetes.io/os': 'windows', 'beta.kubernetes.io/arch': 'arm', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
      { 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
    ],
  ];
  for (const [name, labels, expected] of cases) {
    test(name, async (t) => {
      const u = await UpstreamTable.create(t, { now: T2017, nodes: [upNode('node0', { labels: z, conditions: ready('True', T2015, T2015) })], pods: [newPod('pod0', 'node0')] });
      // `fakeNodeHandler.Update(test.Node)` replaces node0 (its labels); the shell reconciles labels on the update.
      u.w.storeNode({ ...u.w.nodes.get('node0')!, labels });
      await u.quiesce();
      assert.deepEqual({ ...u.w.nodes.get('node0')?.labels }, expected);
    });
  }
});

describe('TestTryUpdateNodeHealth', () => {
  const fakeNow = T2017;
  const fakeOld = Date.UTC(2016, 0, 1, 12);
  const cases: [name: string, created: number, conditions: NodeCondition[]][] = [
    ['Status true', fakeNow, [cond('Ready', 'True', fakeNow, fakeNow)]],
    ['Status false', fakeNow, [cond('Ready', 'False', fakeNow, fakeNow)]],
    ['Status unknown', fakeNow, [cond('Ready', 'Unknown', fakeNow, fakeNow)]],
    ['Status nil', fakeNow, []],
    ['Status true - after grace period', fakeOld, [cond('Ready', 'True', fakeOld, fakeOld)]],
    ['Status false - after grace period', fakeOld, [cond('Ready', 'False', fakeOld, fakeOld)]],
    ['Status unknown - after grace period', fakeOld, [cond('Ready', 'Unknown', fakeOld, fakeOld)]],
    ['Status nil - after grace period', fakeOld, []],
  ];
  for (const [name, created, conditions] of cases) {
    test(name, () => {
      // nodeHealthMap.set(node, {status, probeTimestamp: creation, readyTransitionTimestamp: creation})
      const seeded: NodeHealth = { probeTimestamp: created, readyTransitionTimestamp: created, conditions };
      const obs = observeNodeHealth(seeded, { creationTimestamp: created, conditions }, undefined, fakeNow, {
        nodeMonitorGracePeriodMs: 50_000,
        nodeStartupGracePeriodMs: 60_000,
      });
      // What the shell saves: the record after its status write when one was needed (as upstream's
      // deferred nodeHealthMap.set after a successful update), else the observed one.
      const saved = obs.needsStatusUpdate ? obs.healthAfterStatusUpdate : obs.health;
      assert.equal(obs.currentReady?.status, savedReadyCondition(saved)?.status);
      if (created === fakeOld) assert.equal(obs.currentReady?.status, 'Unknown', 'past the grace period: marked Unknown');
    });
  }
});

describe('Test_isNodeExcludedFromDisruptionChecks', () => {
  // Upstream's cases have empty names; each is named here by its input. Pure function (zones.ts).
  const cases: [name: string, node: { labels: Record<string, string> }, want: boolean][] = [
    ['no labels', { labels: {} }, false],
    ['named master-abc (no name-based exclusion)', { labels: {} }, false],
    ['labelled node.kubernetes.io/exclude-disruption', { labels: { 'node.kubernetes.io/exclude-disruption': '' } }, true],
  ];
  for (const [name, node, want] of cases) {
    test(name, () => assert.equal(isExcludedFromDisruption(node), want));
  }
});
