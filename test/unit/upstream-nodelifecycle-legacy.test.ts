/**
 * Ports of upstream's 1.20 legacy-eviction tables (`--enable-taint-manager=false`, upstream's
 * `useTaintBasedEvictions=false`) to unit tests of our controller shell (src/nodelifecycle/controller.ts).
 *
 * Source: `pkg/controller/nodelifecycle/node_lifecycle_controller_test.go` as of Kubernetes 1.20
 * (the revision where `newNodeLifecycleControllerFromClient` still takes `podEvictionTimeout` and
 * `useTaints`, constants testNodeMonitorGracePeriod 40 s, testRateLimiterQPS 10000, the
 * `LabelZoneRegionStable` labels and `k8s.io/kubernetes/pkg/kubelet/apis`), as stored by the code
 * search tool (found by its `func TestMonitorNodeHealthEvictPodsWithDisruption`; the stored copy
 * names no repository or commit, so the version is inferred from those signatures). Not
 * reconstructed: every case below is that file's, with its data; `apt-get source` was not used.
 * Ported verbatim from it, case by case, with its descriptions as test names:
 * `TestMonitorNodeHealthEvictPods`, `TestPodStatusChange` and `TestMonitorNodeHealthEvictPodsWithDisruption`,
 * each of which ran with `useTaints=false`.
 *
 * Mapping (see test/support/upstream-nodelifecycle.ts): the fake clientset's `delete pods` actions
 * are our writes double's `evictPodLegacy` calls (the writer sets the pod status reason `NodeLost`
 * before the delete, as 1.20's `DeletePods`; that is covered in nodelifecycle-controller.test.ts);
 * upstream calls `zonePodEvictor[zone].Try` by hand after the second `monitorNodeHealth`, our shell
 * runs its eviction pass as soon as a node is queued, at the same fake instant; DaemonSets in
 * upstream's DaemonSet store select pods by labels (1.20 `GetPodDaemonSets`), which our caches
 * express as `daemonSets.selectsPod`.
 *
 * Seams: `TestMonitorNodeHealthEvictPodsWithDisruption` replaces `enterPartialDisruptionFunc` and
 * `enterFullDisruptionFunc` by `testRateLimiterQPS`. The full-disruption one already returns
 * `--node-eviction-rate`; the partial one is expressed through configuration, not a new seam:
 * `--secondary-node-eviction-rate=10000` and `--large-cluster-size-threshold=0`, so every zone in
 * PartialDisruption gets the secondary rate. Each case also runs with the default rate functions
 * ("[default rates]"), where a small PartialDisruption zone stops (rate 0).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cond, FAKE_NOW, HOUR, MINUTE, newPod, upNode, UpstreamTable, zoneId, zoneLabels } from '../support/upstream-nodelifecycle.js';
import type { NodeLifecycleConfig } from '../../src/nodelifecycle/controller.js';
import type { Node, NodeCondition, Pod } from '../../src/kube/objects.js';

/** 1.20's test constants and `evictionTimeout` (10 min), legacy mode. */
const LEGACY_120: Partial<NodeLifecycleConfig> = {
  enableTaintManager: false,
  nodeMonitorGracePeriodMs: 40_000,
  nodeStartupGracePeriodMs: 60_000,
  nodeEvictionRate: 10_000,
  secondaryNodeEvictionRate: 10_000,
  largeClusterSizeThreshold: 20,
  podEvictionTimeoutMs: 10 * MINUTE,
};
const at = (h: number, m: number): number => Date.UTC(2015, 0, 1, h, m);
const ready = (status: string, hb: number, tr: number): NodeCondition[] => [cond('Ready', status, hb, tr)];
const z1 = zoneLabels('region1', 'zone1');

describe('TestMonitorNodeHealthEvictPods (1.20, useTaints=false)', () => {
  const healthyNodeNewStatus = ready('True', at(12, 9), at(12, 0));
  interface Case {
    name: string;
    nodes: Node[];
    pods?: Pod[];
    daemonSetSelected?: string[];
    daemonSets?: string[];
    timeToPass: number;
    newNodeStatus: NodeCondition[];
    expectedEvictPods: boolean;
  }
  const node1 = (labels: Record<string, string> = z1): Node => upNode('node1', { labels, conditions: ready('True', at(12, 0), at(12, 0)) });
  const cases: Case[] = [
    {
      name: 'Node created recently, with no status.',
      nodes: [upNode('node0', { created: FAKE_NOW, labels: z1 }), node1()],
      timeToPass: 0,
      newNodeStatus: [],
      expectedEvictPods: false,
    },
    {
      name: 'Node created recently without FailureDomain labels which is added back later, with no status (happens only at cluster startup).',
      nodes: [upNode('node0', { created: FAKE_NOW }), node1({})],
      timeToPass: 0,
      newNodeStatus: [],
      expectedEvictPods: false,
    },
    {
      name: 'Node created long time ago, and kubelet posted NotReady for a short period of time.',
      nodes: [upNode('node0', { labels: z1, conditions: ready('False', at(12, 0), at(12, 0)) }), node1()],
      timeToPass: 10 * MINUTE,
      newNodeStatus: ready('False', at(12, 9), at(12, 0)),
      expectedEvictPods: false,
    },
    {
      name: 'Pod is ds-managed, and kubelet posted NotReady for a long period of time.',
      nodes: [upNode('node0', { labels: z1, conditions: ready('False', at(12, 0), at(12, 0)) }), node1()],
      // pod0 has labels {daemon: yes}; DaemonSet default/ds0 selects them (1.20 GetPodDaemonSets).
      daemonSetSelected: ['default/pod0'],
      timeToPass: HOUR,
      newNodeStatus: ready('False', at(12, 59), at(12, 0)),
      expectedEvictPods: false,
    },
    {
      name: 'Node created long time ago, and kubelet posted NotReady for a long period of time.',
      nodes: [upNode('node0', { labels: z1, conditions: ready('False', at(12, 0), at(12, 0)) }), node1()],
      timeToPass: HOUR,
      newNodeStatus: ready('False', at(12, 59), at(12, 0)),
      expectedEvictPods: true,
    },
    {
      name: 'Node created long time ago, node controller posted Unknown for a short period of time.',
      nodes: [upNode('node0', { labels: z1, conditions: ready('Unknown', at(12, 0), at(12, 0)) }), node1()],
      timeToPass: 10 * MINUTE - 40_000,
      newNodeStatus: ready('Unknown', at(12, 0), at(12, 0)),
      expectedEvictPods: false,
    },
    {
      name: 'Node created long time ago, node controller posted Unknown for a long period of time.',
      nodes: [upNode('node0', { labels: z1, conditions: ready('Unknown', at(12, 0), at(12, 0)) }), node1()],
      timeToPass: HOUR,
      newNodeStatus: ready('Unknown', at(12, 0), at(12, 0)),
      expectedEvictPods: true,
    },
    {
      // Ours, next to upstream's selector case: the rule on the pod's controller owner reference.
      name: 'Pod is ds-managed, and kubelet posted NotReady for a long period of time. [controller owner reference to an existing DaemonSet]',
      nodes: [upNode('node0', { labels: z1, conditions: ready('False', at(12, 0), at(12, 0)) }), node1()],
      pods: [newPod('pod0', 'node0', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds0', uid: 'ds0-uid', controller: true }] })],
      daemonSets: ['default/ds0'],
      timeToPass: HOUR,
      newNodeStatus: ready('False', at(12, 59), at(12, 0)),
      expectedEvictPods: false,
    },
  ];
  for (const c of cases) {
    test(c.name, async (t) => {
      const u = await UpstreamTable.create(t, {
        config: LEGACY_120,
        nodes: c.nodes,
        pods: c.pods ?? [newPod('pod0', 'node0')],
        daemonSetSelected: c.daemonSetSelected ?? [],
        daemonSets: c.daemonSets ?? [],
      });
      await u.pass(c.timeToPass, (w) => {
        if (c.timeToPass > 0) {
          u.setConditions('node0', c.newNodeStatus);
          u.setConditions('node1', healthyNodeNewStatus);
        }
        // "if len(Existing[0].Labels) == 0 && len(Existing[1].Labels) == 0": the labels come back.
        for (const name of ['node0', 'node1']) {
          const n = w.nodes.get(name);
          if (n && Object.keys(n.labels).length === 0) w.storeNode({ ...n, labels: z1 });
        }
      });
      assert.deepEqual(u.evictedPods(), c.expectedEvictPods ? ['default/pod0'] : []);
    });
  }
});

describe('TestPodStatusChange (1.20, useTaints=false)', () => {
  test('Node created long time ago, node controller posted Unknown for a long period of time, the pod status must include reason for termination.', async (t) => {
    const u = await UpstreamTable.create(t, {
      config: LEGACY_120,
      nodes: [
        upNode('node0', { labels: z1, conditions: ready('Unknown', at(12, 0), at(12, 0)) }),
        upNode('node1', {
          labels: { 'failure-domain.beta.kubernetes.io/region': 'region1', 'failure-domain.beta.kubernetes.io/zone': 'zone1' },
          conditions: ready('True', at(12, 0), at(12, 0)),
        }),
      ],
      pods: [newPod('pod0', 'node0')],
    });
    await u.pass(HOUR, () => {
      u.setConditions('node0', ready('Unknown', at(12, 0), at(12, 0)));
      u.setConditions('node1', ready('True', at(12, 9), at(12, 0)));
    });
    // The status update with reason NodeLost is the writer's evictPodLegacy (one call per pod).
    assert.deepEqual(u.evictedPods(), ['default/pod0']);
  });
});

describe('TestMonitorNodeHealthEvictPodsWithDisruption (1.20, useTaints=false)', () => {
  const healthy = ready('True', at(13, 0), at(12, 0));
  const unhealthy = ready('Unknown', at(12, 0), at(12, 0));
  const node = (name: string, labels: Record<string, string>, status: string): Node => upNode(name, { labels, conditions: ready(status, at(12, 0), at(12, 0)) });
  const z2 = zoneLabels('region1', 'zone2');
  interface Case {
    name: string;
    nodes: Node[];
    updated: NodeCondition[][];
    initial: Record<string, string>;
    following: Record<string, string>;
    expectedEvictPods: boolean;
    /** With the default rate functions, where upstream's expectation differs from `expectedEvictPods`. */
    defaultRatesEvict?: boolean;
    /**
     * Deliberate difference 15: the eviction 1.20 makes in the pass that ends the all-zones stop
     * comes one `--pod-eviction-timeout` later here (every node gets a fresh grace period when the
     * stop ends; 1.20 resets the probe timestamps too, but only after it queued node0 in that pass).
     */
    evictsAfterStopEnds?: boolean;
  }
  const cases: Case[] = [
    {
      name: "Network Disruption: Only zone is down - eviction shouldn't take place.",
      nodes: [node('node0', z1, 'Unknown'), node('node1', z1, 'Unknown')],
      updated: [unhealthy, unhealthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      name: "Network Disruption: Both zones down - eviction shouldn't take place.",
      nodes: [node('node0', z1, 'Unknown'), node('node1', zoneLabels('region2', 'zone2'), 'Unknown')],
      updated: [unhealthy, unhealthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region2', 'zone2')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region2', 'zone2')]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      name: 'Network Disruption: One zone is down - eviction should take place.',
      nodes: [node('node0', z1, 'Unknown'), node('node1', z2, 'True')],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'Normal' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'Normal' },
      expectedEvictPods: true,
    },
    {
      name: 'NetworkDisruption: eviction should stop, only -master Node is healthy',
      nodes: [node('node0', z1, 'Unknown'), node('node-master', z1, 'True')],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      // Ours: 1.37's form of the previous case (TestMonitorNodeHealth "the only available Node has
      // the node.kubernetes.io/exclude-disruption label").
      name: 'NetworkDisruption: eviction should stop, only -master Node is healthy [master labelled node.kubernetes.io/exclude-disruption]',
      nodes: [node('node0', z1, 'Unknown'), node('node-master', { ...z1, 'node.kubernetes.io/exclude-disruption': '' }, 'True')],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      // Ours: the previous 1.20 case with the Ready master in a zone of its own. 1.20 does not see
      // that zone (only masters), so zone 1 is the only zone, FullDisruption, and the all-zones stop
      // holds; without the name rule zone 2 would be Normal and node0's pods evicted. The stop covers
      // zone 2 too (1.20 has no state for it), so it is FullDisruption here (deliberate difference 20).
      name: 'NetworkDisruption: eviction should stop, only -master Node is healthy [master alone in another zone]',
      nodes: [node('node0', z1, 'Unknown'), node('node-master', z2, 'True')],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      // Ours: a NotReady `*-master` node. Counted, 3 of 5 nodes are not Ready: PartialDisruption. 1.20's
      // name rule alone would leave 2 of 4 (not more than 2): Normal, and evict at the full rate where
      // a small PartialDisruption zone is stopped. The name rule applies only where it is stricter
      // (deliberate difference 20), so the zone stays PartialDisruption and nothing more is evicted
      // than without the rule: with the default rates, nothing.
      name: 'NotReady -master Node: the zone stays PartialDisruption (the name rule never makes a zone healthier)',
      nodes: [node('node0', z1, 'Unknown'), node('node1', z1, 'Unknown'), node('node-master', z1, 'Unknown'), node('node3', z1, 'True'), node('node4', z1, 'True')],
      updated: [unhealthy, unhealthy, unhealthy, healthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'PartialDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'PartialDisruption' },
      // The secondary rate (10000/s) equals the normal one here, so both views evict; the states differ.
      expectedEvictPods: true,
      defaultRatesEvict: false,
    },
    {
      name: 'Initially both zones down, one comes back - eviction should take place',
      nodes: [node('node0', z1, 'Unknown'), node('node1', z2, 'Unknown')],
      updated: [unhealthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'FullDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'FullDisruption', [zoneId('region1', 'zone2')]: 'Normal' },
      expectedEvictPods: true,
      evictsAfterStopEnds: true,
    },
    {
      name: 'Zone is partially disrupted - eviction should take place.',
      nodes: [node('node0', z1, 'Unknown'), node('node1', z1, 'Unknown'), node('node2', z1, 'Unknown'), node('node3', z1, 'True'), node('node4', z1, 'True')],
      updated: [unhealthy, unhealthy, unhealthy, healthy, healthy],
      initial: { [zoneId('region1', 'zone1')]: 'PartialDisruption' },
      following: { [zoneId('region1', 'zone1')]: 'PartialDisruption' },
      expectedEvictPods: true,
      // Default rate functions: a PartialDisruption zone of ≤ --large-cluster-size-threshold nodes
      // is evicted at rate 0 (upstream's ReducedQPSFunc), so nothing is evicted.
      defaultRatesEvict: false,
    },
  ];
  for (const c of cases) {
    for (const defaults of [false, true]) {
      test(`${c.name}${defaults ? ' [default rates]' : ''}`, async (t) => {
        const u = await UpstreamTable.create(t, {
          config: { ...LEGACY_120, ...(defaults ? { secondaryNodeEvictionRate: 0.01 } : { largeClusterSizeThreshold: 0 }) },
          nodes: c.nodes,
          pods: [newPod('pod0', 'node0')],
        });
        assert.deepEqual(u.w.zoneStates(), c.initial, 'expectedInitialStates');
        await u.pass(HOUR, () => c.nodes.forEach((n, i) => u.setConditions(n.name, c.updated[i] ?? [])));
        const evict = defaults ? (c.defaultRatesEvict ?? c.expectedEvictPods) : c.expectedEvictPods;
        assert.deepEqual(u.w.zoneStates(), c.following, 'expectedFollowingStates');
        if (c.evictsAfterStopEnds) {
          // deliberate difference 15: nothing in the pass that ends the all-zones stop ...
          assert.deepEqual(u.evictedPods(), [], 'deliberate difference 15: not in the pass that ends the all-zones stop');
          // ... but one --pod-eviction-timeout later, while node1's kubelet keeps renewing its Lease.
          u.w.alive.add('node1');
          u.w.renew('node1');
          u.w.startKubelets();
          await u.w.run(10 * MINUTE - 5000, 1000);
          assert.deepEqual(u.evictedPods(), [], 'not before the fresh --pod-eviction-timeout');
          await u.w.run(15_000, 1000);
          assert.deepEqual(u.evictedPods(), ['default/pod0'], 'expectedEvictPods, one --pod-eviction-timeout after the stop ended');
          return;
        }
        assert.deepEqual(u.evictedPods(), evict ? ['default/pod0'] : [], 'expectedEvictPods');
        if (!evict) {
          // Upstream retries Try for up to a minute of real time; give the zone queue a minute.
          await u.quiesce(60_000);
          assert.deepEqual(u.evictedPods(), [], 'still nothing evicted a minute later');
        }
      });
    }
  }

  test('taint mode keeps 1.37 semantics: a Ready -master Node is counted, the zone is Normal (no name rule)', async (t) => {
    const nodes = [node('node0', z1, 'Unknown'), node('node-master', z1, 'True')];
    const u = await UpstreamTable.create(t, { config: { ...LEGACY_120, enableTaintManager: true }, nodes, pods: [newPod('pod0', 'node0')] });
    await u.pass(HOUR, () => nodes.forEach((n, i) => u.setConditions(n.name, [unhealthy, healthy][i] ?? [])));
    assert.deepEqual(u.w.zoneStates(), { [zoneId('region1', 'zone1')]: 'Normal' });
  });
});
