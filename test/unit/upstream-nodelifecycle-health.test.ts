/**
 * Ports of upstream's health and pod-readiness tables to unit tests of our controller shell
 * (src/nodelifecycle/controller.ts). Source: `pkg/controller/nodelifecycle/node_lifecycle_controller_test.go`
 * of k8s.io/kubernetes v1.37.2 (the Go module cache); case names are upstream's, so a reader can
 * diff the tables. How upstream's fake clientset (`testutil.FakeNodeHandler`), hand-filled informer
 * stores and `nodeController.now` map onto FakeClock, in-memory caches and the recording writes
 * double: test/support/upstream-nodelifecycle.ts.
 *
 * Upstream's request counts (`expectedRequestCount`: List/Get/Update calls of the fake clientset)
 * are not ported: our shell reads only its caches and writes through `NodeLifecycleWrites`, so we
 * assert the writes instead (a node status write where upstream expects an Update, none where it
 * expects only the List).
 *
 * Where a documented deliberate difference (docs/node-lifecycle.md, "Deliberate differences")
 * changes upstream's expected result, the case keeps upstream's setup and asserts ours, naming the
 * difference.
 *
 * Not ported: `TestMonitorNodeHealthMarkPodsNotReadyWithWorkerSize`'s `workers` knob
 * (`nodeUpdateWorkerSize` is a Go-internal field; ours is fixed at 8 health workers and 32 pod
 * workers, deliberate difference 11), so its two cases run the same controller.
 * Also ported (not in issue 15's list, same file): `TestProcessPodMarkPodNotReady`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cond, FAKE_NOW, HOUR, LONG_AGO, MINUTE, newPod, nodeLease, upNode, UPSTREAM_CONFIG, UpstreamTable, zoneId, zoneLabels } from '../support/upstream-nodelifecycle.js';
import { World } from '../support/nodelifecycle-world.js';
import type { Node, NodeCondition } from '../../src/kube/objects.js';

const z1 = zoneLabels('region1', 'zone1');
const z2 = zoneLabels('region1', 'zone2');

describe('TestMonitorNodeHealth (1.37; the zone-state half of 1.20 TestMonitorNodeHealthEvictPods)', () => {
  const healthy: NodeCondition[] = [cond('Ready', 'True', FAKE_NOW + HOUR, FAKE_NOW)];
  const unhealthy: NodeCondition[] = [cond('Ready', 'Unknown', FAKE_NOW, FAKE_NOW)];
  const unknownAt = (): NodeCondition[] => [cond('Ready', 'Unknown', FAKE_NOW, FAKE_NOW)];
  const trueAt = (): NodeCondition[] => [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)];
  const cases: {
    name: string;
    nodes: Node[];
    updated: NodeCondition[][];
    initial: Record<string, string>;
    following: Record<string, string>;
  }[] = [
    {
      name: 'No Disruption: Node created recently without failure domain labels (happens only at cluster startup)',
      nodes: [upNode('node0', { created: FAKE_NOW, conditions: trueAt() })],
      updated: [healthy],
      initial: { '': 'Normal' },
      following: { '': 'Normal' },
    },
    {
      name: 'No Disruption: Initially both zones down, one comes back',
      nodes: [upNode('node0', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }), upNode('node1', { created: FAKE_NOW, labels: z2, conditions: unknownAt() })],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'Normal' },
    },
    {
      name: 'Partial Disruption: Nodes created recently without status conditions (happens only at cluster startup)',
      nodes: ['node0', 'node1', 'node2', 'node3'].map((n) => upNode(n, { created: FAKE_NOW, labels: z1 })),
      updated: [unhealthy, unhealthy, unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'PartialDisruption' },
    },
    {
      name: 'Partial Disruption: one Node failed leading to the number of healthy Nodes to exceed the configured threshold',
      nodes: [
        upNode('node0', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }),
        upNode('node1', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }),
        upNode('node2', { created: FAKE_NOW, labels: z1, conditions: trueAt() }),
        upNode('node3', { created: FAKE_NOW, labels: z1, conditions: trueAt() }),
        upNode('node4', { created: FAKE_NOW, labels: z1, conditions: trueAt() }),
      ],
      updated: [unhealthy, unhealthy, unhealthy, healthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'Normal' },
      following: { [zoneId('region1', 'zone1')]: 'PartialDisruption' },
    },
    {
      name: 'Full Disruption: the zone has less than 2 Nodes down, the last healthy Node has failed',
      nodes: [
        upNode('node0', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }),
        upNode('node1', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }),
        upNode('node2', { created: FAKE_NOW, labels: z1, conditions: trueAt() }),
      ],
      updated: [unhealthy, unhealthy, unhealthy],
      initial: { [zoneId('region1', 'zone1')]: 'Normal' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: all the Nodes in one zone are down',
      nodes: [upNode('node0', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }), upNode('node1', { created: FAKE_NOW, labels: z2, conditions: trueAt() })],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'Normal' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'Normal' },
    },
    {
      name: 'Full Disruption: all the Nodes in both the zones are down',
      nodes: [
        upNode('node0', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }),
        upNode('node1', { created: FAKE_NOW, labels: zoneLabels('region2', 'zone2'), conditions: unknownAt() }),
      ],
      updated: [unhealthy, unhealthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region2', 'zone2')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region2', 'zone2')]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: Ready condition removed from the Node',
      nodes: [upNode('node0', { created: FAKE_NOW, labels: z1, conditions: trueAt() })],
      updated: [[]],
      initial: { [zoneId('region1', 'zone1')]: 'Normal' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: the only available Node has the node.kubernetes.io/exclude-disruption label',
      nodes: [
        upNode('node0', { created: FAKE_NOW, labels: z1, conditions: unknownAt() }),
        upNode('node-master', { created: FAKE_NOW, labels: { ...z1, 'node.kubernetes.io/exclude-disruption': '' }, conditions: trueAt() }),
      ],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
    },
  ];
  for (const c of cases) {
    test(c.name, async (t) => {
      const u = await UpstreamTable.create(t, { nodes: c.nodes });
      assert.deepEqual(u.w.zoneStates(), c.initial, 'expectedInitialStates');
      await u.pass(HOUR, () => c.nodes.forEach((n, i) => u.setConditions(n.name, c.updated[i] ?? [])));
      assert.deepEqual(u.w.zoneStates(), c.following, 'expectedFollowingStates');
    });
  }
});

/** `[type, status, reason, lastHeartbeatTime, lastTransitionTime]` of each condition, in upstream's order. */
type CondRow = [string, string, string | undefined, number | undefined, number | undefined];
function conditionRows(u: UpstreamTable, name: string): CondRow[] {
  const order = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
  return [...(u.w.nodes.get(name)?.conditions ?? [])]
    .sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type))
    .map((c) => [c.type, c.status, c.reason, c.lastHeartbeatTime, c.lastTransitionTime]);
}
const neverUpdated = (hb: number, tr: number): CondRow[] =>
  ['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type): CondRow => [type, 'Unknown', 'NodeStatusNeverUpdated', hb, tr]);

describe('TestPodStatusChange', () => {
  // Upstream (1.37) checks that node0 is in its zone's NoExecute tainter queue: its test itself then
  // calls `DeletePods`, which writes the pod status reason NodeLost. Our controller's part is the
  // queueing: node0 is tainted unreachable:NoExecute. The pod deletion with reason NodeLost is the
  // legacy mode's (1.20's TestPodStatusChange), ported in upstream-nodelifecycle-legacy.test.ts.
  test('Node created long time ago, node controller posted Unknown for a long period of time, the pod status must include reason for termination.', async (t) => {
    const u = await UpstreamTable.create(t, {
      nodes: [
        upNode('node0', { labels: z1, conditions: [cond('Ready', 'Unknown', FAKE_NOW, FAKE_NOW)] }),
        upNode('node1', { labels: z1, conditions: [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)] }),
      ],
      pods: [newPod('pod0', 'node0')],
    });
    await u.pass(
      HOUR,
      () => {
        u.setConditions('node0', [cond('Ready', 'Unknown', FAKE_NOW, FAKE_NOW)]);
        u.setConditions('node1', [cond('Ready', 'True', FAKE_NOW + 9 * MINUTE, FAKE_NOW)]);
      },
      5,
    );
    assert.ok(u.taints('node0').includes('node.kubernetes.io/unreachable:NoExecute'), 'node0 went through the zone tainter');
    assert.deepEqual(u.taints('node1'), []);
  });
});

describe('TestMonitorNodeHealthUpdateStatus', () => {
  // Upstream's cases are unnamed; each test is named by the comment above the case.
  test('Node created long time ago, without status: Expect Unknown status posted from node controller.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0')], pods: [newPod('pod0', 'node0')] });
    assert.equal(u.nodeStatusWrites('node0'), 1, 'expectedRequestCount 2: List+Update');
    assert.deepEqual(conditionRows(u, 'node0'), [['Ready', 'Unknown', 'NodeStatusNeverUpdated', LONG_AGO, FAKE_NOW], ...neverUpdated(LONG_AGO, FAKE_NOW)]);
    // expectedPodStatusUpdate: false. Upstream: no Ready→NotReady transition was observed. Ours
    // would mark it (deliberate difference 14) but for deliberate difference 15: node0 is the only
    // node, so every zone is FullDisruption and pod readiness is left alone.
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created recently, without status: Expect no action from node controller (within startup grace period).', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { created: FAKE_NOW })], pods: [newPod('pod0', 'node0')] });
    assert.equal(u.nodeStatusWrites(), 0, 'expectedRequestCount 1: List only');
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, with status updated by kubelet exceeds grace period: Expect Unknown status posted from node controller.', async (t) => {
    const stale = (): NodeCondition[] => [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)];
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { conditions: stale() })], pods: [newPod('pod0', 'node0')] });
    await u.pass(HOUR, () => u.setConditions('node0', stale()));
    assert.equal(u.nodeStatusWrites('node0'), 1, 'expectedRequestCount 3: (List+)List+Update');
    assert.deepEqual(conditionRows(u, 'node0'), [
      ['Ready', 'Unknown', 'NodeStatusUnknown', FAKE_NOW, FAKE_NOW + HOUR],
      ...neverUpdated(LONG_AGO, FAKE_NOW + HOUR),
    ]);
    // deliberate difference 15: upstream marks pod0 (expectedPodStatusUpdate: true); node0 is the
    // only node, so every zone is FullDisruption (the all-zones stop) and we leave pod readiness alone.
    assert.equal(u.podStatusUpdates(), 0);
    assert.ok(u.w.events.some((e) => e.reason === 'PodReadinessKept' && e.ref.name === 'node0'));
  });

  test('Node created long time ago, with status updated recently: Expect no action from node controller (within monitor grace period).', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { conditions: [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)] })], pods: [newPod('pod0', 'node0')] });
    assert.equal(u.nodeStatusWrites(), 0, 'expectedRequestCount 1: List only');
    assert.equal(u.podStatusUpdates(), 0);
  });
});

describe('TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease', () => {
  const withLease = (renew: number, rv = ''): ReturnType<typeof nodeLease> => nodeLease('node0', renew, rv);
  const trueDisk = (hb: number): NodeCondition[] => [cond('Ready', 'True', hb, FAKE_NOW), cond('DiskPressure', 'False', hb, FAKE_NOW)];
  const pods = [newPod('pod0', 'node0')];

  test('Node created recently, without status. Node lease is missing.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { created: FAKE_NOW })], pods });
    assert.equal(u.nodeStatusWrites(), 0);
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created recently, without status. Node lease is renewed recently.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { created: FAKE_NOW })], pods, leases: [withLease(FAKE_NOW)] });
    assert.equal(u.nodeStatusWrites(), 0);
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, without status. Node lease is missing.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0')], pods });
    assert.equal(u.nodeStatusWrites('node0'), 1);
    assert.deepEqual(conditionRows(u, 'node0'), [['Ready', 'Unknown', 'NodeStatusNeverUpdated', LONG_AGO, FAKE_NOW], ...neverUpdated(LONG_AGO, FAKE_NOW)]);
    // expectedPodStatusUpdate: false (upstream: the node was never Ready; ours: deliberate
    // difference 15, the only node is down, so every zone is FullDisruption).
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, without status. Node lease is renewed recently.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0')], pods, leases: [withLease(FAKE_NOW)] });
    await u.pass(HOUR, (w) => {
      w.leases.set('kube-node-lease/node0', withLease(FAKE_NOW + HOUR));
      w.ctl.leaseChanged('node0');
    });
    assert.equal(u.nodeStatusWrites(), 0, 'expectedRequestCount 2: List+List');
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, without status. Node lease is expired.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0')], pods, leases: [withLease(FAKE_NOW)] });
    await u.pass(HOUR);
    assert.equal(u.nodeStatusWrites('node0'), 1, 'expectedRequestCount 3: List+List+Update');
    assert.deepEqual(conditionRows(u, 'node0'), [
      ['Ready', 'Unknown', 'NodeStatusNeverUpdated', LONG_AGO, FAKE_NOW + HOUR],
      ...neverUpdated(LONG_AGO, FAKE_NOW + HOUR),
    ]);
    // expectedPodStatusUpdate: false (upstream: the node was never Ready; ours: deliberate
    // difference 15, the only node is down, so every zone is FullDisruption).
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is renewed.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { conditions: trueDisk(FAKE_NOW) })], pods, leases: [withLease(FAKE_NOW)] });
    await u.pass(HOUR, (w) => {
      u.setConditions('node0', trueDisk(FAKE_NOW));
      w.leases.set('kube-node-lease/node0', withLease(FAKE_NOW + HOUR));
      w.ctl.leaseChanged('node0');
    });
    assert.equal(u.nodeStatusWrites(), 0);
    assert.deepEqual(conditionRows(u, 'node0'), [
      ['Ready', 'True', undefined, FAKE_NOW, FAKE_NOW],
      ['DiskPressure', 'False', undefined, FAKE_NOW, FAKE_NOW],
    ]);
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, with status updated by kubelet recently. Node lease is expired.', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { conditions: trueDisk(FAKE_NOW) })], pods, leases: [withLease(FAKE_NOW)] });
    await u.pass(HOUR, () => u.setConditions('node0', trueDisk(FAKE_NOW + HOUR)));
    assert.equal(u.nodeStatusWrites(), 0);
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is also expired.', async (t) => {
    const stale = (): NodeCondition[] => [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)];
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { conditions: stale() })], pods, leases: [withLease(FAKE_NOW)] });
    await u.pass(HOUR, () => u.setConditions('node0', stale()));
    assert.equal(u.nodeStatusWrites('node0'), 1);
    assert.deepEqual(conditionRows(u, 'node0'), [
      ['Ready', 'Unknown', 'NodeStatusUnknown', FAKE_NOW, FAKE_NOW + HOUR],
      ...neverUpdated(LONG_AGO, FAKE_NOW + HOUR),
    ]);
    // deliberate difference 15: upstream marks pod0 (expectedPodStatusUpdate: true); node0 is the
    // only node, so every zone is FullDisruption (the all-zones stop) and we leave pod readiness alone.
    assert.equal(u.podStatusUpdates(), 0);
    assert.ok(u.w.events.some((e) => e.reason === 'PodReadinessKept' && e.ref.name === 'node0'));
  });

  test('Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is expired in cache, but fresh in API server.', async (t) => {
    const stale = (): NodeCondition[] => [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)];
    const u = await UpstreamTable.create(t, {
      nodes: [upNode('node0', { conditions: stale() })],
      pods,
      leases: [withLease(FAKE_NOW)],
      apiServerLeases: [withLease(FAKE_NOW, '50')],
    });
    await u.pass(HOUR, (w) => {
      u.setConditions('node0', stale());
      w.leases.set('kube-node-lease/node0', withLease(FAKE_NOW, '50'));
      w.apiLeases.set('kube-node-lease/node0', withLease(FAKE_NOW + HOUR, '100'));
    });
    assert.equal(u.nodeStatusWrites(), 0, 'no Unknown: the live Lease read found a newer Lease');
    assert.ok(u.w.leaseReads.includes('node0'), 'the Lease was read live');
    assert.equal(u.ready('node0'), 'True');
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node lease expired in cache but fresh in API server. EnsureReady should skip on second run.', async (t) => {
    const u = await UpstreamTable.create(t, {
      nodes: [upNode('node0', { conditions: [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)] })],
      pods,
      leases: [withLease(FAKE_NOW - MINUTE, '50')],
      apiServerLeases: [withLease(FAKE_NOW, '100')],
    });
    await u.pass(1000, () => u.setConditions('node0', [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)]));
    assert.equal(u.nodeStatusWrites(), 0);
    assert.equal(u.ready('node0'), 'True');
    assert.equal(u.podStatusUpdates(), 0);
  });
});

/**
 * Deliberate difference 15 keeps pod readiness alone while every zone is FullDisruption, which is
 * the case in upstream's single-zone tables where every node is down. Each such case is ported as
 * is (asserting ours) and once more with a Ready `peer` node in another zone (named
 * "... [with a Ready peer]"), where upstream's expected pod writes apply unchanged.
 */
const peerZone = zoneLabels('region9', 'peer');
const peerNode = (): ReturnType<typeof upNode> => upNode('peer', { labels: peerZone, conditions: [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)] });
/** The peer's kubelet posts a fresh heartbeat at the current time. */
const peerHeartbeat = (u: UpstreamTable): void => u.setConditions('peer', [cond('Ready', 'True', u.w.clock.now(), FAKE_NOW)]);

describe('TestMonitorNodeHealthMarkPodsNotReady', () => {
  test('Node created recently, without status: Expect no action from node controller (within startup grace period).', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { created: FAKE_NOW })], pods: [newPod('pod0', 'node0')] });
    assert.equal(u.podStatusUpdates(), 0);
  });

  test('Node created long time ago, with status updated recently: Expect no action from node controller (within monitor grace period).', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [upNode('node0', { conditions: [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)] })], pods: [newPod('pod0', 'node0')] });
    assert.equal(u.podStatusUpdates(), 0);
  });

  const exceeds = 'Node created long time ago, with status updated by kubelet exceeds grace period: Expect pods status updated and Unknown node status posted from node controller';
  for (const peer of [false, true]) {
    test(peer ? `${exceeds} [with a Ready peer]` : exceeds, async (t) => {
      const stale = (): NodeCondition[] => [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)];
      const nodes = [upNode('node0', { conditions: stale() }), ...(peer ? [peerNode()] : [])];
      const u = await UpstreamTable.create(t, { nodes, pods: [newPod('pod0', 'node0')] });
      await u.pass(MINUTE, () => {
        u.setConditions('node0', stale());
        if (peer) peerHeartbeat(u);
      });
      assert.equal(u.ready('node0'), 'Unknown');
      // Without the peer: deliberate difference 15 (node0 is the only node: the all-zones stop), no pod write.
      assert.equal(u.podStatusUpdates(), peer ? 1 : 0);
    });
  }
});

describe('TestMonitorNodeHealthMarkPodsNotReadyWithWorkerSize', () => {
  const numNodes = 50;
  const podsPerNode = 100;
  // `workers` sets upstream's nodeUpdateWorkerSize, a Go-internal field; our worker counts are fixed
  // (8 health, 32 pod workers), so both cases run the same controller.
  for (const workers of [0, 1]) {
    for (const peer of [false, true]) {
      test(`workers: ${workers}${peer ? ' [with a Ready peer]' : ''}`, async (t) => {
        const stale = (): NodeCondition[] => [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)];
        const nodes = Array.from({ length: numNodes }, (_, i) => upNode(`node${i}`, { conditions: stale() }));
        const pods = Array.from({ length: numNodes * podsPerNode }, (_, i) => newPod(`pod${i}`, `node${i % numNodes}`));
        const u = await UpstreamTable.create(t, { nodes: peer ? [...nodes, peerNode()] : nodes, pods });
        await u.pass(MINUTE, () => {
          nodes.forEach((n) => u.setConditions(n.name, stale()));
          if (peer) peerHeartbeat(u);
        });
        if (peer) assert.equal(u.podStatusUpdates(), numNodes * podsPerNode);
        else {
          // deliberate difference 15: all 50 nodes (the only zone) are down: no pod write, one
          // PodReadinessKept event per node instead of upstream's 5,000 pod writes.
          assert.equal(u.podStatusUpdates(), 0);
          assert.equal(u.w.events.filter((e) => e.reason === 'PodReadinessKept').length, numNodes);
        }
      });
    }
  }
});

describe('TestMonitorNodeHealthMarkPodsNotReadyRetry', () => {
  const timePlusTwoSeconds = FAKE_NOW + 2000; // upstream calls it timePlusTwoMinutes; it is 12:00:02
  const node0 = (status: string, hb: number, tr: number): NodeCondition[] => [cond('Ready', status, hb, tr)];
  async function run(t: Parameters<typeof UpstreamTable.create>[0], failures: number, peer: boolean): Promise<UpstreamTable> {
    const nodes = [upNode('node0', { created: FAKE_NOW, conditions: node0('True', FAKE_NOW, FAKE_NOW) }), ...(peer ? [peerNode()] : [])];
    const u = await UpstreamTable.create(t, { nodes, pods: [newPod('pod0', 'node0')] });
    for (let i = 0; i < failures; i++) u.w.podWriteFailures.push('default/pod0');
    const iteration = async (timeToPass: number, conditions: NodeCondition[], tokensMs = 0): Promise<void> =>
      u.pass(
        timeToPass,
        () => {
          u.setConditions('node0', conditions);
          if (peer) peerHeartbeat(u);
        },
        tokensMs,
      );
    await iteration(0, node0('True', FAKE_NOW, FAKE_NOW));
    await iteration(MINUTE, node0('True', FAKE_NOW, FAKE_NOW));
    // Upstream retries the node's pods on its next pass; ours retries the pod on its own with
    // backoff (deliberate difference 11), so the last pass lets 50 ms pass for that retry.
    await iteration(MINUTE, node0('False', timePlusTwoSeconds, timePlusTwoSeconds), 50);
    return u;
  }
  const cases: [name: string, failures: number, expected: number][] = [
    ['successful pod status update, no retry required', 0, 1],
    ['unsuccessful pod status update, retry required', 1, 2], // One failed and one retry.
    // Our pod lister is the in-memory informer index, which cannot fail: the case runs with the
    // list succeeding and asserts upstream's expected count.
    ['unsuccessful pod list, retry required', 0, 1],
  ];
  for (const [name, failures, expected] of cases) {
    for (const peer of [false, true]) {
      test(peer ? `${name} [with a Ready peer]` : name, async (t) => {
        const u = await run(t, failures, peer);
        // Without the peer: deliberate difference 15 (node0 is the only node: the all-zones stop), no pod write.
        assert.equal(u.podStatusAttempts(), peer ? expected : 0);
        assert.equal(u.w.podReady('default/pod0'), peer ? 'False' : 'True');
      });
    }
  }
});

describe('TestProcessPodMarkPodNotReady', () => {
  const node0 = (status: string): ReturnType<typeof upNode> => upNode('node0', { created: FAKE_NOW, conditions: [cond('Ready', status, FAKE_NOW, FAKE_NOW)] });

  test('Do not mark pod as NotReady when the scheduled node\'s healthy is not gathered yet', async (t) => {
    // monitorNodeHealth: false. Our shell runs its first pass from a timer after start(); the pod
    // event is delivered and processed before that timer fires (no fake time passes).
    const w = new World({ ...UPSTREAM_CONFIG }, FAKE_NOW);
    w.nodes.set('node0', node0('False'));
    w.build().start();
    t.after(() => w.ctl.stop());
    const pod = newPod('pod0', 'node0');
    w.pods.set('default/pod0', pod);
    w.ctl.podChanged(pod);
    for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
    assert.equal(w.writes.filter((x) => x.kind === 'podNotReady').length, 0);
  });

  test('Do not mark pod as NotReady when the scheduled node is ready', async (t) => {
    const u = await UpstreamTable.create(t, { nodes: [node0('True')] });
    u.w.putPod(newPod('pod0', 'node0'));
    await u.quiesce();
    assert.equal(u.podStatusUpdates(), 0);
  });

  for (const peer of [false, true]) {
    test(`Pod marked as NotReady when the scheduled node is not ready${peer ? ' [with a Ready peer]' : ''}`, async (t) => {
      const u = await UpstreamTable.create(t, { nodes: [node0('False'), ...(peer ? [peerNode()] : [])] });
      u.w.putPod(newPod('pod0', 'node0'));
      await u.quiesce();
      // Without the peer: deliberate difference 15 (node0 is the only node and not Ready: the
      // all-zones stop), the pod keeps its Ready condition.
      assert.equal(u.podStatusUpdates(), peer ? 1 : 0);
    });
  }
});
