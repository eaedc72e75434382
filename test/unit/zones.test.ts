import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  EXCLUDE_DISRUPTION_LABEL,
  LABEL_FAILURE_DOMAIN_BETA_REGION,
  LABEL_FAILURE_DOMAIN_BETA_ZONE,
  LABEL_TOPOLOGY_REGION,
  LABEL_TOPOLOGY_ZONE,
  computeZoneState,
  formatZoneKey,
  getZoneKey,
  isExcludedFromDisruption,
  isLegacyMasterName,
  legacyStricterZoneStatuses,
  lowestZoneRate,
  planDisruption,
  stricterZoneStatuses,
  zoneRate,
} from '../../src/nodelifecycle/zones.js';
import type { DisruptionConfig, DisruptionPlan, ZoneState } from '../../src/nodelifecycle/zones.js';

/** testutil.CreateZoneID */
const zoneId = (region: string, zone: string): string => `${region}:\x00:${zone}`;

/** Defaults of kube-controller-manager. */
const defaults: DisruptionConfig = {
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};

/** Constants of node_lifecycle_controller_test.go. */
const upstreamTest: DisruptionConfig = {
  nodeEvictionRate: 100000,
  secondaryNodeEvictionRate: 100000,
  largeClusterSizeThreshold: 20,
  unhealthyZoneThreshold: 0.55,
};

type Ready = 'True' | 'False' | 'Unknown' | undefined;

const zoneLabels = (region: string, zone: string): Record<string, string> => ({
  [LABEL_TOPOLOGY_REGION]: region,
  [LABEL_TOPOLOGY_ZONE]: zone,
  [LABEL_FAILURE_DOMAIN_BETA_REGION]: region,
  [LABEL_FAILURE_DOMAIN_BETA_ZONE]: zone,
});

/** A node reduced to what zone disruption reads: labels, and the current Ready status in each pass. */
interface FixtureNode {
  name: string;
  labels: Record<string, string>;
  ready: readonly [Ready, Ready];
}

/** Nodes named `${prefix}0`, `${prefix}1`, … in one zone, one per [first pass, second pass] Ready pair. */
function inZone(region: string, zone: string, ready: readonly (readonly [Ready, Ready])[], prefix = 'node'): FixtureNode[] {
  return ready.map((r, i) => ({ name: `${prefix}${i}`, labels: zoneLabels(region, zone), ready: r }));
}

/** The zone grouping monitorNodeHealth does before handleDisruption. */
function groupByZone(nodes: readonly FixtureNode[], pass: 0 | 1): Map<string, Ready[]> {
  const out = new Map<string, Ready[]>();
  for (const n of nodes) {
    if (isExcludedFromDisruption(n)) continue;
    const zone = getZoneKey(n.labels);
    const list = out.get(zone) ?? [];
    list.push(n.ready[pass]);
    out.set(zone, list);
  }
  return out;
}

/** Runs the two monitor passes of TestMonitorNodeHealth and returns both plans. */
function twoPasses(nodes: readonly FixtureNode[], cfg: DisruptionConfig): [DisruptionPlan, DisruptionPlan] {
  // addPodEvictorForNewZone runs for every new node, excluded or not, before handleDisruption.
  const initial = new Map<string, ZoneState>(nodes.map((n) => [getZoneKey(n.labels), 'Initial']));
  const first = planDisruption(initial, groupByZone(nodes, 0), cfg);
  const second = planDisruption(first.zoneStates, groupByZone(nodes, 1), cfg);
  return [first, second];
}

const statesOf = (p: DisruptionPlan): Record<string, ZoneState> => Object.fromEntries(p.zoneStates);
const rateOf = (p: DisruptionPlan, zone: string): number | undefined => p.rateSwaps.find((s) => s.zone === zone)?.rate;

const z1 = zoneId('region1', 'zone1');
const z2 = zoneId('region1', 'zone2');
const r2z2 = zoneId('region2', 'zone2');

describe('getZoneKey (component-helpers topology.GetZoneKey)', () => {
  test('no labels or no zone labels give ""', () => {
    assert.equal(getZoneKey(undefined), '');
    assert.equal(getZoneKey({}), '');
    assert.equal(getZoneKey({ 'kubernetes.io/os': 'linux' }), '');
    assert.equal(getZoneKey({ [LABEL_TOPOLOGY_ZONE]: '', [LABEL_TOPOLOGY_REGION]: '' }), '');
  });

  test('region + ":\\x00:" + zone, matching testutil.CreateZoneID', () => {
    assert.equal(getZoneKey(zoneLabels('region1', 'zone1')), zoneId('region1', 'zone1'));
    assert.equal(getZoneKey({ [LABEL_TOPOLOGY_REGION]: 'r' }), 'r:\x00:');
    assert.equal(getZoneKey({ [LABEL_TOPOLOGY_ZONE]: 'z' }), ':\x00:z');
  });

  test('beta labels win over stable labels when present, even when empty', () => {
    assert.equal(
      getZoneKey({
        [LABEL_TOPOLOGY_REGION]: 'stable-r',
        [LABEL_TOPOLOGY_ZONE]: 'stable-z',
        [LABEL_FAILURE_DOMAIN_BETA_REGION]: 'beta-r',
        [LABEL_FAILURE_DOMAIN_BETA_ZONE]: 'beta-z',
      }),
      zoneId('beta-r', 'beta-z'),
    );
    assert.equal(
      getZoneKey({ [LABEL_TOPOLOGY_ZONE]: 'stable-z', [LABEL_FAILURE_DOMAIN_BETA_ZONE]: '' }),
      '',
      'a present-but-empty beta zone hides the stable zone',
    );
    assert.equal(
      getZoneKey({ [LABEL_TOPOLOGY_REGION]: 'stable-r', [LABEL_FAILURE_DOMAIN_BETA_ZONE]: 'beta-z' }),
      zoneId('stable-r', 'beta-z'),
    );
  });

  test('formatZoneKey is readable', () => {
    assert.equal(formatZoneKey(zoneId('r', 'z')), '"r:z"');
    assert.match(formatZoneKey(''), /without zone labels/);
  });
});

describe('isExcludedFromDisruption (Test_isNodeExcludedFromDisruptionChecks)', () => {
  test('labels {} → false', () => {
    assert.equal(isExcludedFromDisruption({ labels: {} }), false);
  });
  test('a "master-abc" name alone → false', () => {
    assert.equal(isExcludedFromDisruption({ name: 'master-abc', labels: {} } as { labels: Record<string, string> }), false);
  });
  test('the exclude-disruption label with an empty value → true', () => {
    assert.equal(EXCLUDE_DISRUPTION_LABEL, 'node.kubernetes.io/exclude-disruption');
    assert.equal(isExcludedFromDisruption({ labels: { [EXCLUDE_DISRUPTION_LABEL]: '' } }), true);
  });
});

describe('computeZoneState (ComputeZoneState)', () => {
  const t = 0.55;
  test('examples from the TestMonitorNodeHealth table', () => {
    assert.deepEqual(computeZoneState(['True'], t), { unhealthy: 0, state: 'Normal' });
    assert.deepEqual(computeZoneState([undefined, undefined, undefined, undefined], t), { unhealthy: 4, state: 'FullDisruption' });
    assert.deepEqual(computeZoneState(['Unknown', 'Unknown', 'Unknown', 'True'], t), { unhealthy: 3, state: 'PartialDisruption' });
    assert.deepEqual(computeZoneState(['Unknown', 'Unknown', 'True', 'True', 'True'], t), { unhealthy: 2, state: 'Normal' });
    assert.deepEqual(computeZoneState(['Unknown', 'Unknown', 'Unknown', 'True', 'True'], t), {
      unhealthy: 3,
      state: 'PartialDisruption',
    });
    assert.deepEqual(computeZoneState(['Unknown', 'Unknown', 'True'], t), { unhealthy: 2, state: 'Normal' });
    assert.deepEqual(computeZoneState(['Unknown', 'Unknown'], t), { unhealthy: 2, state: 'FullDisruption' });
    assert.deepEqual(computeZoneState(['False'], t), { unhealthy: 1, state: 'FullDisruption' });
  });

  test('an empty zone is Normal', () => {
    assert.deepEqual(computeZoneState([], t), { unhealthy: 0, state: 'Normal' });
  });

  test('the share is compared in float32, as upstream does', () => {
    // 11/20 < 0.55000002 in float64, but both round to the same float32.
    const statuses: Ready[] = [...Array<Ready>(11).fill('False'), ...Array<Ready>(9).fill('True')];
    assert.ok(11 / 20 < 0.55000002);
    assert.equal(computeZoneState(statuses, 0.55000002).state, 'PartialDisruption');
    assert.equal(computeZoneState(statuses, 0.5500001).state, 'Normal');
  });

  const readyArb = fc.constantFrom<Ready>('True', 'False', 'Unknown', undefined);
  const thresholdArb = fc.double({ min: 0, max: 1, noNaN: true });

  test('property: unhealthy counts every status that is not True', () => {
    fc.assert(
      fc.property(fc.array(readyArb, { maxLength: 40 }), thresholdArb, (s, th) => {
        assert.equal(computeZoneState(s, th).unhealthy, s.filter((x) => x !== 'True').length);
      }),
    );
  });

  test('property: FullDisruption iff no node is Ready and there is at least one node', () => {
    fc.assert(
      fc.property(fc.array(readyArb, { maxLength: 40 }), thresholdArb, (s, th) => {
        const ready = s.filter((x) => x === 'True').length;
        assert.equal(computeZoneState(s, th).state === 'FullDisruption', ready === 0 && s.length > 0);
      }),
    );
  });

  test('property: PartialDisruption iff not full, more than 2 not Ready and share >= threshold', () => {
    fc.assert(
      fc.property(fc.array(readyArb, { maxLength: 40 }), thresholdArb, (s, th) => {
        const notReady = s.filter((x) => x !== 'True').length;
        const r = computeZoneState(s, th);
        const partialExpected =
          r.state !== 'FullDisruption' && notReady > 2 && Math.fround(notReady / s.length) >= Math.fround(th);
        assert.equal(r.state === 'PartialDisruption', partialExpected);
        if (r.state === 'PartialDisruption') {
          assert.ok(notReady > 2);
          assert.ok(notReady / s.length >= th - 1e-7);
        }
        assert.notEqual(r.state, 'Initial');
      }),
    );
  });

  test('property: the order of nodes does not matter', () => {
    fc.assert(
      fc.property(fc.array(readyArb, { maxLength: 30 }), thresholdArb, (s, th) => {
        assert.deepEqual(computeZoneState([...s].reverse(), th), computeZoneState(s, th));
      }),
    );
  });
});

describe('zoneRate (setLimiterInZone)', () => {
  test('table', () => {
    assert.equal(zoneRate('Normal', 10, defaults), 0.1);
    assert.equal(zoneRate('FullDisruption', 10, defaults), 0.1);
    assert.equal(zoneRate('PartialDisruption', 50, defaults), 0, 'size at the threshold stops');
    assert.equal(zoneRate('PartialDisruption', 51, defaults), 0.01, 'size above the threshold slows');
    assert.equal(zoneRate('Initial', 10, defaults), undefined);
  });
});

describe('planDisruption: TestMonitorNodeHealth zone-state table', () => {
  const cases: { name: string; nodes: FixtureNode[]; initial: Record<string, ZoneState>; following: Record<string, ZoneState> }[] = [
    {
      name: 'No Disruption: Node created recently without failure domain labels (happens only at cluster startup)',
      nodes: [{ name: 'node0', labels: {}, ready: ['True', 'True'] }],
      initial: { '': 'Normal' },
      following: { '': 'Normal' },
    },
    {
      name: 'No Disruption: Initially both zones down, one comes back',
      nodes: [
        { name: 'node0', labels: zoneLabels('region1', 'zone1'), ready: ['Unknown', 'Unknown'] },
        { name: 'node1', labels: zoneLabels('region1', 'zone2'), ready: ['Unknown', 'True'] },
      ],
      initial: { [z1]: 'FullDisruption', [z2]: 'FullDisruption' },
      following: { [z1]: 'FullDisruption', [z2]: 'Normal' },
    },
    {
      name: 'Partial Disruption: Nodes created recently without status conditions (happens only at cluster startup)',
      nodes: inZone('region1', 'zone1', [[undefined, 'Unknown'], [undefined, 'Unknown'], [undefined, 'Unknown'], [undefined, 'True']]),
      initial: { [z1]: 'FullDisruption' },
      following: { [z1]: 'PartialDisruption' },
    },
    {
      name: 'Partial Disruption: one Node failed leading to the number of healthy Nodes to exceed the configured threshold',
      nodes: inZone('region1', 'zone1', [['Unknown', 'Unknown'], ['Unknown', 'Unknown'], ['True', 'Unknown'], ['True', 'True'], ['True', 'True']]),
      initial: { [z1]: 'Normal' },
      following: { [z1]: 'PartialDisruption' },
    },
    {
      name: 'Full Disruption: the zone has less than 2 Nodes down, the last healthy Node has failed',
      nodes: inZone('region1', 'zone1', [['Unknown', 'Unknown'], ['Unknown', 'Unknown'], ['True', 'Unknown']]),
      initial: { [z1]: 'Normal' },
      following: { [z1]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: all the Nodes in one zone are down',
      nodes: [
        { name: 'node0', labels: zoneLabels('region1', 'zone1'), ready: ['Unknown', 'Unknown'] },
        { name: 'node1', labels: zoneLabels('region1', 'zone2'), ready: ['True', 'True'] },
      ],
      initial: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      following: { [z1]: 'FullDisruption', [z2]: 'Normal' },
    },
    {
      name: 'Full Disruption: all the Nodes in both the zones are down',
      nodes: [
        { name: 'node0', labels: zoneLabels('region1', 'zone1'), ready: ['Unknown', 'Unknown'] },
        { name: 'node1', labels: zoneLabels('region2', 'zone2'), ready: ['Unknown', 'Unknown'] },
      ],
      initial: { [z1]: 'FullDisruption', [r2z2]: 'FullDisruption' },
      following: { [z1]: 'FullDisruption', [r2z2]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: Ready condition removed from the Node',
      nodes: [{ name: 'node0', labels: zoneLabels('region1', 'zone1'), ready: ['True', undefined] }],
      initial: { [z1]: 'Normal' },
      following: { [z1]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: the only available Node has the node.kubernetes.io/exclude-disruption label',
      nodes: [
        { name: 'node0', labels: zoneLabels('region1', 'zone1'), ready: ['Unknown', 'Unknown'] },
        {
          name: 'node-master',
          labels: { ...zoneLabels('region1', 'zone1'), [EXCLUDE_DISRUPTION_LABEL]: '' },
          ready: ['True', 'True'],
        },
      ],
      initial: { [z1]: 'FullDisruption' },
      following: { [z1]: 'FullDisruption' },
    },
  ];

  for (const c of cases) {
    test(c.name, () => {
      const [first, second] = twoPasses(c.nodes, upstreamTest);
      assert.deepEqual(statesOf(first), c.initial);
      assert.deepEqual(statesOf(second), c.following);
    });
  }

  test('the first pass with every zone fully disrupted enters the all-zones stop (Initial is not FullDisruption)', () => {
    const [first, second] = twoPasses(cases[1]?.nodes ?? [], upstreamTest);
    assert.equal(first.mode, 'enter-all-disrupted');
    assert.deepEqual(first.rateSwaps, [
      { zone: z1, rate: 0 },
      { zone: z2, rate: 0 },
    ]);
    assert.deepEqual(first.transitions, [
      { zone: z1, from: 'Initial', to: 'FullDisruption' },
      { zone: z2, from: 'Initial', to: 'FullDisruption' },
    ]);
    assert.equal(second.mode, 'exit-all-disrupted');
  });
});

describe('planDisruption: eviction scenarios (older TestMonitorNodeHealthEvictPodsWithDisruption)', () => {
  const normalPrev = (...zones: string[]): Map<string, ZoneState> => new Map(zones.map((z) => [z, 'Normal']));

  test('Network Disruption: only zone is down - eviction should not take place', () => {
    const p = planDisruption(normalPrev(z1), new Map([[z1, ['Unknown', 'Unknown'] as Ready[]]]), defaults);
    assert.equal(p.mode, 'enter-all-disrupted');
    assert.deepEqual(p.rateSwaps, [{ zone: z1, rate: 0 }]);
  });

  test('Network Disruption: both zones down - eviction should not take place', () => {
    const p = planDisruption(
      normalPrev(z1, z2),
      new Map<string, Ready[]>([
        [z1, ['Unknown']],
        [z2, ['Unknown']],
      ]),
      defaults,
    );
    assert.equal(p.mode, 'enter-all-disrupted');
    assert.ok(p.rateSwaps.length === 2 && p.rateSwaps.every((s) => s.rate === 0));
    assert.deepEqual(statesOf(p), { [z1]: 'FullDisruption', [z2]: 'FullDisruption' });
  });

  test('Network Disruption: one zone is down - eviction should take place at the normal rate', () => {
    const p = planDisruption(
      normalPrev(z1, z2),
      new Map<string, Ready[]>([
        [z1, ['Unknown']],
        [z2, ['True']],
      ]),
      defaults,
    );
    assert.equal(p.mode, 'none');
    assert.deepEqual(p.rateSwaps, [{ zone: z1, rate: 0.1 }]);
    assert.deepEqual(p.pauses, []);
  });

  test('NetworkDisruption: eviction should stop, only the excluded (master) node is healthy', () => {
    const nodes: FixtureNode[] = [
      { name: 'node0', labels: zoneLabels('region1', 'zone1'), ready: ['True', 'Unknown'] },
      { name: 'master', labels: { ...zoneLabels('region1', 'zone1'), [EXCLUDE_DISRUPTION_LABEL]: '' }, ready: ['True', 'True'] },
    ];
    const [, second] = twoPasses(nodes, defaults);
    assert.equal(second.mode, 'enter-all-disrupted');
    assert.equal(rateOf(second, z1), 0);
  });

  test('Initially both zones down, one comes back - eviction should take place in the dead zone', () => {
    const p = planDisruption(
      new Map<string, ZoneState>([
        [z1, 'FullDisruption'],
        [z2, 'FullDisruption'],
      ]),
      new Map<string, Ready[]>([
        [z1, ['Unknown']],
        [z2, ['True']],
      ]),
      defaults,
    );
    assert.equal(p.mode, 'exit-all-disrupted');
    assert.deepEqual(p.rateSwaps, [
      { zone: z1, rate: 0.1 },
      { zone: z2, rate: 0.1 },
    ]);
    assert.deepEqual(p.transitions, [{ zone: z2, from: 'FullDisruption', to: 'Normal' }]);
    assert.equal(p.pauses[0]?.kind, 'all-zones-resumed');
  });

  const partialZone = (size: number, notReady: number): Ready[] => [
    ...Array<Ready>(notReady).fill('Unknown'),
    ...Array<Ready>(size - notReady).fill('True'),
  ];

  test('zone partially disrupted, large zone: secondary rate', () => {
    const p = planDisruption(
      normalPrev(z1, z2),
      new Map([
        [z1, partialZone(60, 40)],
        [z2, partialZone(3, 0)],
      ]),
      defaults,
    );
    assert.deepEqual(p.rateSwaps, [{ zone: z1, rate: 0.01 }]);
    assert.equal(p.pauses.length, 1);
    assert.equal(p.pauses[0]?.kind, 'zone-slowed');
    assert.equal(p.pauses[0]?.zone, z1);
    assert.match(p.pauses[0]?.reason ?? '', /"region1:zone1" is PartialDisruption: 40 of 60 nodes are not Ready \(67%.*55%/);
    assert.match(p.pauses[0]?.reason ?? '', /0\.01 nodes\/s/);
  });

  test('zone partially disrupted, small zone: tainting stops', () => {
    const p = planDisruption(
      normalPrev(z1, z2),
      new Map([
        [z1, partialZone(6, 4)],
        [z2, partialZone(3, 0)],
      ]),
      defaults,
    );
    assert.deepEqual(p.rateSwaps, [{ zone: z1, rate: 0 }]);
    assert.equal(p.pauses[0]?.kind, 'zone-stopped');
    assert.match(p.pauses[0]?.reason ?? '', /4 of 6 nodes are not Ready/);
    assert.match(p.pauses[0]?.reason ?? '', /large-cluster-size-threshold 50/);
  });

  test('a zone recovering from PartialDisruption gets the normal rate back, without a pause', () => {
    const p = planDisruption(
      new Map<string, ZoneState>([
        [z1, 'PartialDisruption'],
        [z2, 'Normal'],
      ]),
      new Map([
        [z1, partialZone(6, 1)],
        [z2, partialZone(3, 0)],
      ]),
      defaults,
    );
    assert.deepEqual(p.rateSwaps, [{ zone: z1, rate: 0.1 }]);
    assert.deepEqual(p.pauses, []);
  });
});

describe('planDisruption: zones that vanish, and reasons', () => {
  test('every stale zone is dropped, even after a zone that is not FullDisruption (no Go-map break)', () => {
    const p = planDisruption(
      new Map<string, ZoneState>([
        ['gone-a', 'Normal'],
        [z1, 'Normal'],
        ['gone-b', 'PartialDisruption'],
        ['gone-c', 'FullDisruption'],
      ]),
      new Map<string, Ready[]>([[z1, ['True']]]),
      defaults,
    );
    assert.deepEqual(p.removedZones, ['gone-a', 'gone-b', 'gone-c']);
    assert.deepEqual(statesOf(p), { [z1]: 'Normal' });
    assert.equal(p.mode, 'none');
  });

  test('with no zones at all nothing happens, and every previous zone is reported removed', () => {
    const p = planDisruption(new Map<string, ZoneState>([[z1, 'FullDisruption']]), new Map(), defaults);
    assert.equal(p.mode, 'none');
    assert.deepEqual(p.removedZones, [z1]);
    assert.deepEqual(p.rateSwaps, []);
    assert.equal(p.zoneStates.size, 0);
  });

  test('metrics: size, health percent and unhealthy count per zone', () => {
    const p = planDisruption(new Map(), new Map<string, Ready[]>([[z1, ['True', 'False', 'Unknown', undefined]]]), defaults);
    assert.deepEqual(p.metrics, [{ zone: z1, size: 4, healthPercent: 25, unhealthy: 3 }]);
  });

  test('the all-zones stop reason names zones and counts; the resume reason names the recovered zones', () => {
    const enter = planDisruption(
      new Map<string, ZoneState>([
        [z1, 'Normal'],
        [z2, 'Normal'],
      ]),
      new Map<string, Ready[]>([
        [z1, ['Unknown', 'False', undefined]],
        [z2, ['Unknown', 'Unknown']],
      ]),
      defaults,
    );
    assert.equal(enter.pauses.length, 1);
    assert.equal(enter.pauses[0]?.kind, 'all-zones-stopped');
    assert.equal(enter.pauses[0]?.zone, undefined);
    assert.match(enter.pauses[0]?.reason ?? '', /All 2 zone\(s\)/);
    assert.match(enter.pauses[0]?.reason ?? '', /"region1:zone1": 3\/3 nodes not Ready; zone "region1:zone2": 2\/2 nodes not Ready/);

    const exit = planDisruption(
      enter.zoneStates,
      new Map<string, Ready[]>([
        [z1, ['Unknown', 'True', 'Unknown', 'Unknown']],
        [z2, ['Unknown', 'Unknown']],
      ]),
      defaults,
    );
    assert.equal(exit.mode, 'exit-all-disrupted');
    assert.deepEqual(
      exit.pauses.map((x) => [x.kind, x.zone]),
      [
        ['all-zones-resumed', undefined],
        ['zone-stopped', z1],
      ],
    );
    assert.match(exit.pauses[0]?.reason ?? '', /"region1:zone1": PartialDisruption, 3\/4 nodes not Ready/);
    assert.doesNotMatch(exit.pauses[0]?.reason ?? '', /zone2/);
  });

  test('a long zone list is cut short', () => {
    const many = new Map<string, Ready[]>(Array.from({ length: 8 }, (_, i) => [zoneId('r', `z${i}`), ['Unknown']]));
    const p = planDisruption(new Map(), many, defaults);
    assert.match(p.pauses[0]?.reason ?? '', /and 3 more/);
  });
});

describe('planDisruption: properties', () => {
  const zoneNames = ['', zoneId('r', 'a'), zoneId('r', 'b'), zoneId('s', 'c'), zoneId('s', 'd')];
  const stateArb = fc.constantFrom<ZoneState>('Initial', 'Normal', 'PartialDisruption', 'FullDisruption');
  const readyArb = fc.constantFrom<Ready>('True', 'False', 'Unknown', undefined);
  const prevArb = fc
    .array(fc.tuple(fc.constantFrom(...zoneNames), stateArb), { maxLength: 5 })
    .map((e) => new Map<string, ZoneState>(e));
  const inputArb = fc
    .array(fc.tuple(fc.constantFrom(...zoneNames), fc.array(readyArb, { minLength: 1, maxLength: 70 })), { maxLength: 5 })
    .map((e) => new Map<string, Ready[]>(e));
  const cfgArb = fc.record({
    nodeEvictionRate: fc.constantFrom(0.1, 1),
    secondaryNodeEvictionRate: fc.constantFrom(0.01, 0.05),
    largeClusterSizeThreshold: fc.integer({ min: 0, max: 60 }),
    unhealthyZoneThreshold: fc.double({ min: 0, max: 1, noNaN: true }),
  });

  test('property: the plan matches handleDisruption without the stale-zone break', () => {
    fc.assert(
      fc.property(prevArb, inputArb, cfgArb, (prev, input, cfg) => {
        const prevCopy = new Map(prev);
        const p = planDisruption(prev, input, cfg);
        assert.deepEqual(prev, prevCopy, 'prevStates is not modified');

        const computed = new Map([...input].map(([z, s]) => [z, computeZoneState(s, cfg.unhealthyZoneThreshold)]));
        const from = (z: string): ZoneState => prev.get(z) ?? 'Initial';

        assert.deepEqual(new Set(p.zoneStates.keys()), new Set(input.keys()));
        assert.deepEqual(p.removedZones, [...prev.keys()].filter((z) => !input.has(z)));
        assert.deepEqual(
          p.metrics.map((m) => [m.zone, m.size, m.unhealthy]),
          [...input].map(([z, s]) => [z, s.length, s.filter((x) => x !== 'True').length]),
        );
        for (const m of p.metrics) assert.ok(Math.abs(m.healthPercent - (100 * (m.size - m.unhealthy)) / m.size) < 1e-9);

        const allAre = [...computed.values()].every((h) => h.state === 'FullDisruption');
        const allWas = [...input.keys()].every((z) => from(z) === 'FullDisruption');
        const expectedMode =
          input.size === 0 ? 'none' : allAre && allWas ? 'stay-all-disrupted' : allAre ? 'enter-all-disrupted' : allWas ? 'exit-all-disrupted' : 'none';
        assert.equal(p.mode, expectedMode);

        const swapsByZone = new Map(p.rateSwaps.map((s) => [s.zone, s.rate]));
        assert.equal(swapsByZone.size, p.rateSwaps.length, 'at most one swap per zone');
        const finalStates = [...p.zoneStates.values()];
        switch (p.mode) {
          case 'enter-all-disrupted':
            assert.ok(finalStates.every((s) => s === 'FullDisruption'));
            assert.deepEqual(new Set(swapsByZone.keys()), new Set(input.keys()));
            assert.ok(p.rateSwaps.every((s) => s.rate === 0));
            assert.deepEqual(
              p.pauses.map((x) => x.kind),
              ['all-zones-stopped'],
            );
            break;
          case 'stay-all-disrupted':
            assert.ok(finalStates.every((s) => s === 'FullDisruption'));
            assert.deepEqual(p.rateSwaps, []);
            assert.deepEqual(p.transitions, []);
            assert.deepEqual(p.pauses, []);
            break;
          case 'exit-all-disrupted':
          case 'none':
            for (const [z, h] of computed) {
              assert.equal(p.zoneStates.get(z), h.state);
              const expectSwap: boolean = p.mode === 'exit-all-disrupted' || from(z) !== h.state;
              assert.equal(swapsByZone.get(z), expectSwap ? zoneRate(h.state, input.get(z)?.length ?? 0, cfg) : undefined);
            }
            assert.equal(p.pauses[0]?.kind === 'all-zones-resumed', p.mode === 'exit-all-disrupted');
            break;
        }

        const expectedTransitions = [...p.zoneStates]
          .filter(([z, s]) => from(z) !== s)
          .map(([z, s]) => ({ zone: z, from: from(z), to: s }));
        assert.deepEqual(
          [...p.transitions].sort((a, b) => a.zone.localeCompare(b.zone)),
          expectedTransitions.sort((a, b) => a.zone.localeCompare(b.zone)),
        );

        // Every per-zone stop or slow-down is explained, naming the zone and its counts.
        for (const s of p.rateSwaps) {
          const h = computed.get(s.zone);
          const explained = p.pauses.find((x) => x.zone === s.zone);
          const isPause = p.mode !== 'enter-all-disrupted' && h?.state === 'PartialDisruption' && s.rate < cfg.nodeEvictionRate;
          assert.equal(explained !== undefined, isPause);
          if (explained && h) {
            assert.equal(explained.kind, s.rate === 0 ? 'zone-stopped' : 'zone-slowed');
            assert.ok(explained.reason.includes(formatZoneKey(s.zone)));
            assert.ok(explained.reason.includes(`${h.unhealthy} of ${input.get(s.zone)?.length}`));
          }
        }
      }),
    );
  });

  test('property: applying the plan twice to the same input is stable (second pass changes nothing)', () => {
    fc.assert(
      fc.property(prevArb, inputArb, cfgArb, (prev, input, cfg) => {
        const first = planDisruption(prev, input, cfg);
        const second = planDisruption(first.zoneStates, input, cfg);
        assert.deepEqual(second.transitions, []);
        assert.deepEqual(second.removedZones, []);
        assert.ok(second.mode === 'none' || second.mode === 'stay-all-disrupted');
        assert.deepEqual(second.rateSwaps, []);
      }),
    );
  });
});

describe('stricterZoneStatuses (ours, issue 14: the silent-Ready count may only lower a rate)', () => {
  const rate = (statuses: readonly (string | undefined)[], cfg: DisruptionConfig): number =>
    zoneRate(computeZoneState(statuses, cfg.unhealthyZoneThreshold).state, statuses.length, cfg) ?? NaN;

  test('a small zone PartialDisruption by real statuses stays PartialDisruption (rate 0) when the effective count says FullDisruption', () => {
    const real: Ready[] = [...Array<Ready>(7).fill('Unknown'), 'True', 'True', 'True'];
    const effective: Ready[] = Array<Ready>(10).fill('Unknown');
    const chosen = stricterZoneStatuses(new Map([[z1, real]]), new Map([[z1, effective]]), defaults);
    assert.equal(chosen.get(z1), real);
    assert.equal(computeZoneState(chosen.get(z1) ?? [], 0.55).state, 'PartialDisruption');
  });

  test('the effective count is used where it pauses a zone (Normal by real, PartialDisruption by effective)', () => {
    const real: Ready[] = ['Unknown', 'True', 'True', 'True'];
    const effective: Ready[] = ['Unknown', 'Unknown', 'Unknown', 'True'];
    assert.equal(stricterZoneStatuses(new Map([[z1, real]]), new Map([[z1, effective]]), defaults).get(z1), effective);
  });

  test('on a tie the effective count wins (it can only start the all-zones stop sooner)', () => {
    const real: Ready[] = ['Unknown', 'True'];
    const effective: Ready[] = ['Unknown', 'Unknown'];
    assert.equal(stricterZoneStatuses(new Map([[z1, real]]), new Map([[z1, effective]]), defaults).get(z1), effective);
  });

  test('all-zones stop: once on, it lasts while every zone is FullDisruption by the effective count (a zone PartialDisruption by real statuses does not end it)', () => {
    // Every node of both zones died together; zone 2's real count is still 3 of 4 Unknown (PartialDisruption,
    // rate 0 in a small zone). Choosing per zone would leave the stop and resume tainting zone 1 at full rate.
    const z2 = zoneId('region', 'zone-2');
    const real = new Map<string, Ready[]>([
      [z1, ['Unknown', 'Unknown', 'Unknown', 'Unknown']],
      [z2, ['Unknown', 'Unknown', 'Unknown', 'True']],
    ]);
    const effective = new Map<string, Ready[]>([
      [z1, ['Unknown', 'Unknown', 'Unknown', 'Unknown']],
      [z2, ['Unknown', 'Unknown', 'Unknown', 'Unknown']],
    ]);
    const chosen = stricterZoneStatuses(real, effective, defaults, true);
    assert.equal(chosen.get(z2), effective.get(z2));
    // Not yet in the stop: per zone, as before (zone 2 keeps its real PartialDisruption, rate 0).
    assert.equal(stricterZoneStatuses(real, effective, defaults, false).get(z2), real.get(z2));
    const prev = new Map<string, ZoneState>([[z1, 'FullDisruption'], [z2, 'FullDisruption']]);
    assert.equal(planDisruption(prev, chosen, defaults).mode, 'stay-all-disrupted');
  });

  test('property: the chosen rate is never above the real one, and the all-zones stop never ends sooner', () => {
    const statusArb = fc.constantFrom<Ready>('True', 'False', 'Unknown', undefined);
    const zoneArb = fc.array(fc.tuple(statusArb, fc.boolean()), { minLength: 1, maxLength: 70 });
    const cfgArb = fc.record({
      nodeEvictionRate: fc.constantFrom(0.1, 1, 2),
      secondaryNodeEvictionRate: fc.constantFrom(0, 0.01, 0.5),
      largeClusterSizeThreshold: fc.integer({ min: 0, max: 60 }),
      unhealthyZoneThreshold: fc.constantFrom(0.3, 0.55, 0.9),
    });
    fc.assert(
      fc.property(fc.array(zoneArb, { minLength: 1, maxLength: 4 }), cfgArb, (zones, cfg) => {
        const real = new Map<string, Ready[]>();
        const effective = new Map<string, Ready[]>();
        zones.forEach((nodes, i) => {
          // A silent node is a Ready one that the effective count says is not Ready.
          real.set(`z${i}`, nodes.map(([s]) => s));
          effective.set(`z${i}`, nodes.map(([s, silent]) => (s === 'True' && silent ? 'Unknown' : s)));
        });
        const chosen = stricterZoneStatuses(real, effective, cfg);
        for (const [zone, statuses] of real) {
          const c = chosen.get(zone) ?? [];
          assert.ok(rate(c, cfg) <= rate(statuses, cfg), `zone ${zone}: chosen rate ${rate(c, cfg)} > upstream's ${rate(statuses, cfg)}`);
        }
        const full = (m: ReadonlyMap<string, readonly (string | undefined)[]>): boolean =>
          [...m.values()].every((s) => computeZoneState(s, cfg.unhealthyZoneThreshold).state === 'FullDisruption');
        if (full(real)) assert.ok(full(chosen), 'upstream in the all-zones stop implies ours');
      }),
    );
  });
});

describe('isLegacyMasterName (1.20 legacyIsMasterNode, LegacyNodeRoleBehavior)', () => {
  const table: [string, boolean][] = [
    ['master', true],
    ['node-master', true],
    ['kubemaster', true],
    ['master-abc', true], // 10 characters: "master-" plus 3
    ['my-master-001', true],
    ['master-ab', false], // 9 characters
    ['node-master-1', false], // "master(-...)?$" wants exactly 3 characters after the dash
    ['node-master-1234', false],
    ['mastery', false],
    ['master-node', false],
    ['MASTER', false],
    ['node0', false],
    ['', false],
  ];
  for (const [name, want] of table) test(`${JSON.stringify(name)} -> ${want}`, () => assert.equal(isLegacyMasterName(name), want));

  test('property: matches the regexp master(-...)?$ it stands for', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9-]{0,8}(master)?(-[a-z0-9]{0,4})?$/),
        (name) => assert.equal(isLegacyMasterName(name), /master(-...)?$/.test(name), name),
      ),
    );
  });
});

describe('legacyStricterZoneStatuses (legacy mode: 1.20\'s name rule only where it is stricter)', () => {
  /** A node reduced to its Ready status and whether 1.20 took it for a master by name. */
  type N = [Ready, boolean];
  /** The controller's two views: all nodes, and without masters (a zone of only masters is missing). */
  function views(zones: ReadonlyMap<string, readonly N[]>): { ours: Map<string, Ready[]>; legacy: Map<string, Ready[]> } {
    const ours = new Map<string, Ready[]>();
    const legacy = new Map<string, Ready[]>();
    for (const [zone, nodes] of zones) {
      ours.set(zone, nodes.map(([s]) => s));
      const workers = nodes.filter(([, master]) => !master).map(([s]) => s);
      if (workers.length > 0) legacy.set(zone, workers);
    }
    return { ours, legacy };
  }
  /** Each zone's rate (nodes/s) after one pass from `prev`: the swap of this pass, else `prevRate`. */
  function ratesAfter(p: DisruptionPlan, zones: Iterable<string>, prevRate: number | undefined): Map<string, number | undefined> {
    const rates = new Map<string, number | undefined>();
    for (const z of zones) rates.set(z, prevRate);
    for (const { zone, rate } of p.rateSwaps) rates.set(zone, rate);
    return rates;
  }

  test('1.20 case "only -master Node is healthy": the zone is FullDisruption by 1.20\'s view, the all-zones stop starts', () => {
    const { ours, legacy } = views(new Map<string, N[]>([[z1, [['Unknown', false], ['True', true]]]]));
    const chosen = legacyStricterZoneStatuses(ours, legacy, defaults);
    assert.equal(chosen.statuses.get(z1), legacy.get(z1));
    assert.deepEqual(chosen.outsideLegacyView, new Set());
    assert.equal(planDisruption(new Map(), chosen.statuses, defaults, chosen.outsideLegacyView).mode, 'enter-all-disrupted');
    assert.equal(planDisruption(new Map(), ours, defaults).mode, 'none', 'without the rule: Normal, pods evicted');
  });

  test('a zone of only Ready masters does not keep the all-zones stop off (1.20 does not see it), and the stop pauses it too', () => {
    const { ours, legacy } = views(
      new Map<string, N[]>([
        [z1, [['Unknown', false], ['Unknown', false]]],
        [z2, [['True', true]]],
      ]),
    );
    const chosen = legacyStricterZoneStatuses(ours, legacy, defaults);
    assert.deepEqual(chosen.outsideLegacyView, new Set([z2]));
    assert.equal(chosen.statuses.get(z2), ours.get(z2));
    const enter = planDisruption(new Map(), chosen.statuses, defaults, chosen.outsideLegacyView);
    assert.equal(enter.mode, 'enter-all-disrupted');
    assert.deepEqual(ratesAfter(enter, ours.keys(), undefined), new Map([[z1, 0], [z2, 0]]));
    assert.match(enter.pauses[0]?.reason ?? '', /Not counted, as kube-controller-manager 1\.20/);
    // The stop lasts while the master is Ready, and ends when a worker is Ready again.
    const stay = planDisruption(enter.zoneStates, chosen.statuses, defaults, chosen.outsideLegacyView);
    assert.equal(stay.mode, 'stay-all-disrupted');
    const back = views(new Map<string, N[]>([[z1, [['True', false], ['Unknown', false]]], [z2, [['True', true]]]]));
    const after = legacyStricterZoneStatuses(back.ours, back.legacy, defaults);
    const exit = planDisruption(enter.zoneStates, after.statuses, defaults, after.outsideLegacyView);
    assert.equal(exit.mode, 'exit-all-disrupted');
    assert.deepEqual(ratesAfter(exit, ours.keys(), 0), new Map([[z1, 0.1], [z2, 0.1]]));
    // Without the rule zone 2 is Normal and zone 1 is evicted at the full rate.
    assert.deepEqual(ratesAfter(planDisruption(new Map(), ours, defaults), ours.keys(), undefined), new Map([[z1, 0.1], [z2, 0.1]]));
  });

  test('1.20\'s all-zones stop wins over a zone that is PartialDisruption (rate 0) only because a Ready master is counted', () => {
    const { ours, legacy } = views(
      new Map<string, N[]>([
        [z1, [['Unknown', false], ['Unknown', false], ['Unknown', false], ['True', true]]],
        [z2, [['Unknown', false]]],
      ]),
    );
    // Per zone, ours would be stricter for zone 1 (PartialDisruption, rate 0) but leave zone 2 at the full rate.
    const chosen = legacyStricterZoneStatuses(ours, legacy, defaults);
    const p = planDisruption(new Map(), chosen.statuses, defaults, chosen.outsideLegacyView);
    assert.equal(p.mode, 'enter-all-disrupted');
    assert.deepEqual(ratesAfter(planDisruption(new Map(), ours, defaults), ours.keys(), undefined), new Map([[z1, 0], [z2, 0.1]]));
  });

  test('a NotReady master is still counted where leaving it out would make the zone healthier (PartialDisruption stays, not Normal)', () => {
    const { ours, legacy } = views(
      new Map<string, N[]>([[z1, [['Unknown', false], ['Unknown', false], ['Unknown', true], ['True', false], ['True', false]]]]),
    );
    assert.equal(computeZoneState(legacy.get(z1) ?? [], 0.55).state, 'Normal');
    const chosen = legacyStricterZoneStatuses(ours, legacy, defaults);
    assert.equal(chosen.statuses.get(z1), ours.get(z1));
    assert.equal(computeZoneState(chosen.statuses.get(z1) ?? [], 0.55).state, 'PartialDisruption');
  });

  test('a zone of only NotReady masters keeps our FullDisruption; with no zone 1.20 sees, nothing is outside', () => {
    const { ours, legacy } = views(new Map<string, N[]>([[z1, [['Unknown', true]]]]));
    const chosen = legacyStricterZoneStatuses(ours, legacy, defaults);
    assert.equal(chosen.statuses.get(z1), ours.get(z1));
    assert.deepEqual(chosen.outsideLegacyView, new Set());
    // planDisruption also ignores an outside set that holds every zone.
    assert.equal(planDisruption(new Map(), ours, defaults, new Set([z1])).mode, 'enter-all-disrupted');
    const healthy = new Map<string, Ready[]>([[z1, ['True']]]);
    assert.equal(planDisruption(new Map(), healthy, defaults, new Set([z1])).mode, 'none');
  });

  test('property: the chosen legacy statuses never give a higher rate than either candidate', () => {
    const zoneNames = [z1, z2, zoneId('region2', 'zone3'), ''];
    const nodeArb = fc.tuple(fc.constantFrom<Ready>('True', 'False', 'Unknown', undefined), fc.boolean());
    const cfgArb = fc.record({
      nodeEvictionRate: fc.constantFrom(0.1, 1),
      secondaryNodeEvictionRate: fc.constantFrom(0, 0.01, 1),
      largeClusterSizeThreshold: fc.integer({ min: 0, max: 20 }),
      unhealthyZoneThreshold: fc.constantFrom(0.3, 0.55, 0.9),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.constantFrom(...zoneNames), fc.array(nodeArb, { minLength: 1, maxLength: 30 })), { selector: ([z]) => z, minLength: 1, maxLength: 4 }),
        cfgArb,
        fc.boolean(),
        (entries, cfg, inStop) => {
          const { ours, legacy } = views(new Map(entries));
          // From a fresh start (every zone Initial), or from inside the all-zones stop (rate 0 everywhere).
          const prevFor = (zones: Iterable<string>): Map<string, ZoneState> =>
            new Map([...zones].map((z): [string, ZoneState] => [z, 'FullDisruption']).filter(() => inStop));
          const prevRate = inStop ? 0 : undefined;
          const chosen = legacyStricterZoneStatuses(ours, legacy, cfg);
          const got = ratesAfter(planDisruption(prevFor(ours.keys()), chosen.statuses, cfg, chosen.outsideLegacyView), ours.keys(), prevRate);
          const oursRates = ratesAfter(planDisruption(prevFor(ours.keys()), ours, cfg), ours.keys(), prevRate);
          // 1.20 has no rate for a zone it does not see (its queue keeps its old rate): no bound there.
          const legacyRates = ratesAfter(planDisruption(prevFor(legacy.keys()), legacy, cfg), legacy.keys(), prevRate);
          for (const zone of ours.keys()) {
            const r = got.get(zone);
            assert.ok(r !== undefined, `zone ${zone} has a rate`);
            assert.ok(r <= (oursRates.get(zone) ?? Infinity), `zone ${zone}: ${r} > ours ${oursRates.get(zone)}`);
            if (legacy.has(zone)) assert.ok(r <= (legacyRates.get(zone) ?? Infinity), `zone ${zone}: ${r} > 1.20's ${legacyRates.get(zone)}`);
          }
        },
      ),
    );
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", zones.ts): the pause reasons in
// full (they are what `explain` and the logs tell an operator), and the tie-break of
// legacyStricterZoneStatuses: on equal rates 1.20's list only if only it is FullDisruption (it can
// only start the all-zones stop sooner), else ours.
describe('zones.ts pause reasons and the legacy tie-break, exactly', () => {
  const normalPrev = (...zones: string[]): Map<string, ZoneState> => new Map(zones.map((z) => [z, 'Normal']));
  const partialZone = (size: number, notReady: number): Ready[] => [...Array<Ready>(notReady).fill('Unknown'), ...Array<Ready>(size - notReady).fill('True')];
  test('a zone-slowed pause says the whole sentence', () => {
    const p = planDisruption(
      normalPrev(z1, z2),
      new Map([
        [z1, partialZone(60, 40)],
        [z2, partialZone(3, 0)],
      ]),
      defaults,
    );
    assert.equal(
      p.pauses[0]?.reason,
      'Zone "region1:zone1" is PartialDisruption: 40 of 60 nodes are not Ready (67%, at least the unhealthy-zone-threshold 55%, and more than 2 nodes). ' +
        'The zone has 60 nodes, more than the large-cluster-size-threshold 50, so NoExecute tainting in this zone slows to the ' +
        'secondary-node-eviction-rate of 0.01 nodes/s (normal rate 0.1 nodes/s).',
    );
  });

  test('an all-zones stop without master-only zones says nothing of them', () => {
    const p = planDisruption(
      new Map<string, ZoneState>([
        [z1, 'Normal'],
        [z2, 'Normal'],
      ]),
      new Map<string, Ready[]>([
        [z1, ['Unknown']],
        [z2, ['False']],
      ]),
      defaults,
    );
    assert.equal(
      p.pauses[0]?.reason,
      'All 2 zone(s) are FullDisruption, with no Ready node (zone "region1:zone1": 1/1 nodes not Ready; zone "region1:zone2": 1/1 nodes not Ready). ' +
        'This looks like a control-plane or network problem rather than failed nodes, so NoExecute tainting is paused in every zone and ' +
        'the unreachable/not-ready NoExecute taints are removed from every node, until some node is Ready again.',
    );
  });

  test('legacy tie-break: equal rates take 1.20\'s list only where only it is FullDisruption', () => {
    const z3 = zoneId('region1', 'zone3');
    // z1: ours Normal (a Ready master, a dead worker), 1.20 FullDisruption (the worker): both at the normal rate.
    // z2: both Normal. z3: both FullDisruption (and z2 keeps 1.20 out of its all-zones stop).
    const ours = new Map<string, Ready[]>([
      [z1, ['True', 'Unknown']],
      [z2, ['True']],
      [z3, ['Unknown']],
    ]);
    const legacy = new Map<string, Ready[]>([
      [z1, ['Unknown']],
      [z2, ['True']],
      [z3, ['Unknown']],
    ]);
    const chosen = legacyStricterZoneStatuses(ours, legacy, defaults);
    assert.equal(chosen.statuses.get(z1), legacy.get(z1));
    assert.equal(chosen.statuses.get(z2), ours.get(z2));
    assert.equal(chosen.statuses.get(z3), ours.get(z3));
    assert.deepEqual([...chosen.outsideLegacyView], []);
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", zones.ts, the full run): the label
// names, lowestZoneRate's range and secondary rate, a PartialDisruption zone at the normal rate, the
// remaining reasons in full, the transitions of an all-zones stop, the zones' metrics, and
// stricterZoneStatuses during the all-zones stop and for a zone the effective view lacks.
describe('zones.ts, the rest of what its full mutation run found', () => {
  const normalPrev = (...zones: string[]): Map<string, ZoneState> => new Map(zones.map((z) => [z, 'Normal']));
  const partialZone = (size: number, notReady: number): Ready[] => [...Array<Ready>(notReady).fill('Unknown'), ...Array<Ready>(size - notReady).fill('True')];

  test("upstream's zone and region labels", () => {
    assert.equal(LABEL_TOPOLOGY_ZONE, 'topology.kubernetes.io/zone');
    assert.equal(LABEL_TOPOLOGY_REGION, 'topology.kubernetes.io/region');
    assert.equal(LABEL_FAILURE_DOMAIN_BETA_ZONE, 'failure-domain.beta.kubernetes.io/zone');
    assert.equal(LABEL_FAILURE_DOMAIN_BETA_REGION, 'failure-domain.beta.kubernetes.io/region');
  });

  test('lowestZoneRate: maxReady is included, the range is not widened to the zone size, a large zone counts the secondary rate', () => {
    // 4 nodes: 0 Ready is FullDisruption (normal rate), 1 Ready is PartialDisruption (rate 0, a small zone).
    assert.equal(lowestZoneRate(4, 0, 1, defaults), 0);
    assert.equal(lowestZoneRate(4, 0, 0, defaults), 0.1);
    // 60 nodes (above the large-cluster threshold 50): PartialDisruption is the secondary rate.
    assert.equal(lowestZoneRate(60, 0, 60, defaults), 0.01);
  });

  test('a PartialDisruption zone whose rate is the normal rate is not paused', () => {
    const same = { ...defaults, secondaryNodeEvictionRate: defaults.nodeEvictionRate };
    const p = planDisruption(normalPrev(z1, z2), new Map([[z1, partialZone(60, 40)], [z2, partialZone(3, 0)]]), same);
    assert.deepEqual(p.rateSwaps, [{ zone: z1, rate: 0.1 }]);
    assert.deepEqual(p.pauses, []);
  });

  test('a zone-stopped pause says the whole sentence', () => {
    const p = planDisruption(normalPrev(z1, z2), new Map([[z1, partialZone(4, 3)], [z2, partialZone(3, 0)]]), defaults);
    assert.equal(
      p.pauses[0]?.reason,
      'Zone "region1:zone1" is PartialDisruption: 3 of 4 nodes are not Ready (75%, at least the unhealthy-zone-threshold 55%, and more than 2 nodes). ' +
        'The zone has 4 nodes, not more than the large-cluster-size-threshold 50, so NoExecute tainting in this zone is paused (0 nodes/s) ' +
        'until the share of not-Ready nodes falls below the threshold or every node in it is down.',
    );
  });

  test('entering the all-zones stop: a transition only for zones not already FullDisruption; master-only zones named apart', () => {
    const p = planDisruption(
      new Map<string, ZoneState>([
        [z1, 'FullDisruption'],
        [z2, 'Normal'],
        [r2z2, 'Normal'],
      ]),
      new Map<string, Ready[]>([
        [z1, ['Unknown']],
        [z2, ['Unknown']],
        [r2z2, ['True']],
      ]),
      defaults,
      new Set([r2z2]),
    );
    assert.equal(p.mode, 'enter-all-disrupted');
    assert.deepEqual(p.transitions, [{ zone: z2, from: 'Normal', to: 'FullDisruption' }, { zone: r2z2, from: 'Normal', to: 'FullDisruption' }]);
    assert.equal(
      p.pauses[0]?.reason,
      'All 2 zone(s) are FullDisruption, with no Ready node (zone "region1:zone1": 1/1 nodes not Ready; zone "region1:zone2": 1/1 nodes not Ready). ' +
        'Not counted, as kube-controller-manager 1.20 (LegacyNodeRoleBehavior) did not count them: zones with only nodes named like masters ' +
        '(zone "region2:zone2": 0/1 nodes not Ready). This looks like a control-plane or network problem rather than failed nodes, so NoExecute ' +
        'tainting is paused in every zone and the unreachable/not-ready NoExecute taints are removed from every node, until some node is Ready again.',
    );
  });

  test('leaving the all-zones stop says the whole sentence', () => {
    const p = planDisruption(
      new Map<string, ZoneState>([
        [z1, 'FullDisruption'],
        [z2, 'FullDisruption'],
      ]),
      new Map<string, Ready[]>([
        [z1, ['True']],
        [z2, ['Unknown']],
      ]),
      defaults,
    );
    assert.equal(p.mode, 'exit-all-disrupted');
    assert.equal(
      p.pauses[0]?.reason,
      'Some nodes are Ready again (zone "region1:zone1": Normal, 0/1 nodes not Ready), so the all-zones stop ends: ' +
        "NoExecute tainting resumes at each zone's rate, and every node's probe timestamp is reset so each node gets a full grace period before it is tainted.",
    );
  });

  test('the metrics of an empty zone say 100 % healthy', () => {
    const p = planDisruption(normalPrev(z1, z2), new Map<string, Ready[]>([[z1, []], [z2, ['True']]]), defaults);
    assert.deepEqual(p.metrics.find((m) => m.zone === z1), { zone: z1, size: 0, healthPercent: 100, unhealthy: 0 });
  });

  test('stricterZoneStatuses: a zone the effective view lacks keeps its real statuses', () => {
    const real = new Map<string, Ready[]>([[z1, ['True', 'True']]]);
    const out = stricterZoneStatuses(real, new Map(), defaults);
    assert.equal(out.get(z1), real.get(z1));
  });

  test('stricterZoneStatuses in the all-zones stop: effective for every zone only when every zone is FullDisruption by it', () => {
    // z1: real PartialDisruption (rate 0), effective FullDisruption; z2 Normal in both: not all full,
    // so z1 keeps the stricter real list.
    const real = new Map<string, Ready[]>([
      [z1, partialZone(4, 3)],
      [z2, ['True']],
    ]);
    const effective = new Map<string, Ready[]>([
      [z1, ['Unknown', 'Unknown', 'Unknown', 'Unknown']],
      [z2, ['True']],
    ]);
    const out = stricterZoneStatuses(real, effective, defaults, true);
    assert.equal(out.get(z1), real.get(z1));
  });
});
