/**
 * The zone part (src/nodelifecycle/tainting.ts) and its helpers (readyflips.ts, guardhold.ts) on
 * their own: built from the zone part's deps slice (`ZoneTaintingDeps`) and fake
 * `ZoneTaintingLinks` (a settable health reader, a recording legacy part), no controller and no
 * other part.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease, Node, Taint } from '../../src/kube/objects.js';
import { TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE } from '../../src/kube/taints.js';
import { EVENT_EVICTION_CIRCUIT_CLOSED, EVENT_EVICTION_CIRCUIT_OPEN, type EvictionGuardsConfig } from '../../src/nodelifecycle/guard.js';
import { EvictionGuardHold } from '../../src/nodelifecycle/guardhold.js';
import type { ZoneTaintingDeps } from '../../src/nodelifecycle/parts.js';
import { drainPassedThroughLowerRate, PENDING_FLIPS_MAX_AGE_MS, PendingReadyFlips, zoneCounts } from '../../src/nodelifecycle/readyflips.js';
import { ZoneTainting } from '../../src/nodelifecycle/tainting.js';
import { getZoneKey } from '../../src/nodelifecycle/zones.js';
import { NOT_READY_TAINT_TEMPLATE } from '../../src/nodelifecycle/taints.js';
import { basics, FakeHealth, MapStore, metricValue, node, RecordingEvents, settle, T0 } from '../support/nodelifecycle-parts.js';

const ZONE = ''; // nodes without zone labels share the zone key ""
const GRACE_MS = 40_000;

function build(names: Record<string, string>, evictionGuards?: EvictionGuardsConfig) {
  const { clock, log, metrics } = basics();
  const nodes = new MapStore<Node>();
  const health = new FakeHealth();
  for (const [name, ready] of Object.entries(names)) {
    nodes.set(node(name, ready));
    health.set(name, ZONE, ready);
  }
  const events = new RecordingEvents();
  const swaps: { name: string; add: string[]; remove: string[] }[] = [];
  const stopEnded: number[] = [];
  let forgotten = 0;
  const deps: ZoneTaintingDeps = {
    config: {
      nodeMonitorGracePeriodMs: GRACE_MS,
      nodeEvictionRate: 100,
      secondaryNodeEvictionRate: 0.01,
      largeClusterSizeThreshold: 50,
      unhealthyZoneThreshold: 0.55,
      enableTaintManager: true,
      ...(evictionGuards ? { evictionGuards } : {}),
    },
    clock,
    log,
    caches: { nodes, leases: new MapStore<Lease>() },
    writes: {
      swapNodeTaints: async (name, add, remove) => {
        swaps.push({ name, add: add.map((t) => t.key), remove: remove.map((t) => t.key) });
        return 'written';
      },
    },
    events,
    metrics,
    canSeeCluster: () => true,
  };
  let stopped = false;
  const taintDone: string[] = [];
  const part = new ZoneTainting(deps, {
    stopped: () => stopped,
    health,
    allZonesStopEnded: (nowMs) => stopEnded.push(nowMs),
    legacy: {
      evictOne: () => Promise.reject(new Error('legacy eviction is not used in taint mode')),
      forgetEvictions: () => void forgotten++,
    },
    noExecuteTaintDone: (name) => taintDone.push(name),
  });
  const readyOf = (name: string) => ({ type: 'Ready', status: health.lastReady(name) ?? 'Unknown' });
  return {
    part,
    deps,
    clock,
    nodes,
    health,
    events,
    swaps,
    stopEnded,
    forgotten: () => forgotten,
    taintDone,
    readyOf,
    stop: () => {
      stopped = true;
      part.stop();
    },
  };
}

describe('zone part through parts.ts', () => {
  test('a NotReady node is queued and tainted NoExecute by the pass, and counted', async (t) => {
    const w = build({ n1: 'False', n2: 'True', n3: 'True' });
    t.after(w.stop);
    w.part.handleDisruption();
    const n1 = w.nodes.get('n1') as Node;
    assert.equal(w.part.wouldAct(n1, w.readyOf('n1')), true);
    assert.equal(w.part.actSync(n1, w.readyOf('n1')), true, 'queuing needs no write');
    assert.equal(w.part.isQueued(ZONE, 'n1'), true);
    assert.equal(w.part.noExecuteTaintPending(n1), true, 'the NoSchedule part leaves its condition taints to this write');
    await settle(w.clock);
    assert.deepEqual(w.swaps, [{ name: 'n1', add: [TAINT_NODE_NOT_READY], remove: [TAINT_NODE_UNREACHABLE] }]);
    assert.equal(w.part.noExecuteTaintPending(n1), false, 'written: no longer pending');
    assert.deepEqual(w.taintDone, ['n1'], 'the end of the attempt is handed on');
    assert.equal(await metricValue(w.deps.metrics.evictionsTotal, { zone: ZONE }), 1);
    assert.deepEqual(
      w.part.zoneViews().map((z) => [z.state, z.size, z.unhealthy, z.queueLength]),
      [['Normal', 3, 1, 0]],
    );
  });

  test('a node that is Ready again loses its NoExecute taints and leaves the queue', async (t) => {
    const w = build({ n1: 'True', n2: 'True' });
    t.after(w.stop);
    const taint: Taint = { ...NOT_READY_TAINT_TEMPLATE, timeAdded: T0 };
    const n1 = node('n1', 'True', { taints: [taint] });
    assert.equal(w.part.actSync(n1, w.readyOf('n1')), false, 'a taint removal needs a write');
    await w.part.act(n1, w.readyOf('n1'));
    assert.deepEqual(w.swaps, [{ name: 'n1', add: [], remove: [TAINT_NODE_UNREACHABLE, TAINT_NODE_NOT_READY] }]);
  });

  test('an open eviction guard holds the taint at the gate and explains itself on the node', async (t) => {
    const w = build({ n1: 'False', n2: 'True', n3: 'True' }, { breaker: { maxUnhealthy: { kind: 'count', count: 0 }, closeAfterMs: 10_000 } });
    t.after(w.stop);
    w.part.handleDisruption();
    assert.equal(w.part.admits('NoExecuteTaint', ZONE, 'n1'), false);
    w.part.actSync(w.nodes.get('n1') as Node, w.readyOf('n1'));
    await settle(w.clock);
    assert.deepEqual(w.swaps, [], 'held, not tainted');
    assert.equal(w.part.isQueued(ZONE, 'n1'), true, 'still queued, to be tried again');
    const open = w.events.recorded.find((e) => e.reason === EVENT_EVICTION_CIRCUIT_OPEN);
    assert.equal(open?.ref.name, 'n1', 'the Event goes on the not-Ready node');
    assert.equal(await metricValue(w.deps.metrics.evictionCircuitOpen, { guard: 'max-unhealthy-nodes' }), 1);
    assert.equal(w.part.evictionGuardViews()[0]?.open, true);
  });

  test('the all-zones stop forgets legacy evictions, is explained, and its end is handed on', async (t) => {
    const w = build({ n1: 'Unknown', n2: 'Unknown' });
    t.after(w.stop);
    w.part.handleDisruption();
    assert.equal(w.part.allZonesStopped(), true);
    const n1 = w.nodes.get('n1') as Node;
    w.part.actSync(n1, w.readyOf('n1'));
    assert.equal(w.part.isQueued(ZONE, 'n1'), true);
    assert.equal(w.part.noExecuteTaintPending(n1), false, 'rate 0: no NoExecute taint write is coming, so no NoSchedule write waits for one');
    assert.equal(w.forgotten(), 1);
    assert.ok(w.events.reasons().includes('AllZonesDisrupted'));
    assert.equal(await metricValue(w.deps.metrics.zoneEvictionPaused, { zone: ZONE, reason: 'all-zones-fully-disrupted' }), 1);
    w.health.set('n2', ZONE, 'True');
    w.part.readyFlipped(ZONE, 'Unknown', 'True');
    assert.equal(w.part.allZonesStopped(), false, 'a flip to Ready during the stop recomputes at once');
    assert.deepEqual(w.stopEnded, [T0]);
    assert.equal(await metricValue(w.deps.metrics.zoneEvictionPaused, { zone: ZONE, reason: 'all-zones-fully-disrupted' }), 0);
  });

  test('a zone first seen during the all-zones stop keeps the stop on and taints nothing until zone states are computed (difference 25)', async (t) => {
    const w = build({ n1: 'Unknown', n2: 'Unknown' });
    t.after(w.stop);
    w.part.handleDisruption();
    assert.equal(w.part.allZonesStopped(), true);
    // n1 is relabelled into zone "c", never seen before: its queue and Initial state appear.
    w.health.set('n1', 'c', 'Unknown');
    const n1 = w.nodes.get('n1') as Node;
    w.part.ensureZone('c');
    assert.equal(w.part.allZonesStopped(), true, 'the new zone’s Initial state does not end the stop');
    w.part.actSync(n1, w.readyOf('n1'));
    await settle(w.clock);
    assert.deepEqual(w.swaps.filter((x) => x.add.length > 0), [], 'no NoExecute taint during the stop');
    assert.equal(await metricValue(w.deps.metrics.zoneTaintingRate, { zone: 'c' }), 0);
    // The next computation decides: every zone fully disrupted, so the stop holds (re-entered, as upstream).
    w.part.handleDisruption();
    assert.equal(w.part.allZonesStopped(), true);
    await settle(w.clock);
    assert.deepEqual(w.swaps.filter((x) => x.add.length > 0), [], 'still none');
  });

  test('a Ready node in a zone first seen during the stop ends it at the next computation, and the zone gets its rate', async (t) => {
    const w = build({ n1: 'Unknown', n2: 'Unknown' });
    t.after(w.stop);
    w.part.handleDisruption();
    // n2, Ready, is relabelled into zone c, never seen before.
    const labels = { 'topology.kubernetes.io/zone': 'c' };
    const c = getZoneKey(labels);
    w.nodes.set(node('n2', 'True', { labels }));
    w.health.set('n2', c, 'True');
    w.part.ensureZone(c);
    assert.equal(w.part.allZonesStopped(), true, 'held until zone states are computed');
    assert.equal(await metricValue(w.deps.metrics.zoneTaintingRate, { zone: c }), 0);
    w.part.handleDisruption();
    assert.equal(w.part.allZonesStopped(), false);
    assert.equal(await metricValue(w.deps.metrics.zoneTaintingRate, { zone: c }), 100);
  });

  test('a flip away from Ready waits for a reader: the view recomputes first', (t) => {
    const w = build({ n1: 'True', n2: 'True', n3: 'True' });
    t.after(w.stop);
    w.part.handleDisruption();
    w.health.set('n1', ZONE, 'False');
    w.part.readyFlipped(ZONE, 'True', 'False');
    assert.equal(w.part.zoneViews()[0]?.unhealthy, 1);
  });
});

describe('pending Ready flips (readyflips.ts)', () => {
  test('records a burst by zone, is overdue after the max age, and is handed over once', () => {
    const flips = new PendingReadyFlips();
    const limiters = new Map([['z', { hasToken: () => false, drain: () => undefined, qps: 1 }]]);
    assert.equal(flips.any, false);
    flips.record('z', 'True', 'False', T0, limiters);
    flips.record('z', 'True', 'Unknown', T0 + 10, limiters);
    flips.record('z', 'Unknown', 'True', T0 + 20, limiters);
    assert.equal(flips.overdue(T0 + PENDING_FLIPS_MAX_AGE_MS - 1), false);
    assert.equal(flips.overdue(T0 + PENDING_FLIPS_MAX_AGE_MS), true);
    const taken = flips.take();
    assert.equal(taken?.flips, 3);
    assert.deepEqual(taken?.byZone.get('z'), { down: 2, up: 1 });
    assert.deepEqual([...(taken?.noTokenAtStart ?? [])], ['z']);
    assert.equal(flips.any, false);
    assert.equal(flips.take(), undefined);
  });

  test('a zone that passed through PartialDisruption (rate 0) between recomputes has its bucket drained', () => {
    const cfg = { nodeEvictionRate: 0.1, secondaryNodeEvictionRate: 0.01, largeClusterSizeThreshold: 50, unhealthyZoneThreshold: 0.55 };
    let drained = 0;
    const limiters = new Map([['z', { hasToken: () => true, drain: () => void drained++, qps: 0.1 }]]);
    const flips = new PendingReadyFlips();
    // 4 nodes: 4 Ready before; 3 went down, then 3 came back (net: all Ready again).
    for (let i = 0; i < 3; i++) flips.record('z', 'True', 'False', T0, limiters);
    for (let i = 0; i < 3; i++) flips.record('z', 'False', 'True', T0, limiters);
    const before = zoneCounts(new Map([['z', ['True', 'True', 'True', 'True']]]), new Map());
    const now = zoneCounts(new Map([['z', ['True', 'True', 'True', 'True']]]), new Map());
    drainPassedThroughLowerRate(flips.take()!, before, now, limiters, cfg);
    assert.equal(drained, 1);
    // No flip in between: nothing to drain.
    drained = 0;
    const quiet = new PendingReadyFlips();
    quiet.record('other', 'True', 'True', T0, limiters);
    drainPassedThroughLowerRate(quiet.take()!, before, now, limiters, cfg);
    assert.equal(drained, 0);
  });
});

describe('eviction guards hold (guardhold.ts)', () => {
  test('opens on the first not-Ready node, rechecks by its own timer, and releases on close', async () => {
    const { clock, log, metrics } = basics();
    const events = new RecordingEvents();
    const health = new FakeHealth();
    health.set('a', ZONE, 'False');
    health.set('b', ZONE, 'True');
    let released = 0;
    let readiness = new Map([['a', false], ['b', true]]);
    const hold: EvictionGuardHold = new EvictionGuardHold(
      { clock, log, events, metrics, config: { evictionGuards: { breaker: { maxUnhealthy: { kind: 'count', count: 0 }, closeAfterMs: 10_000 } } } },
      { health, recheck: () => hold.observe(readiness), released: () => void released++ },
    );
    assert.equal(await metricValue(metrics.evictionCircuitOpen, { guard: 'max-unhealthy-nodes' }), 0, 'gauge starts at 0');
    hold.observe(readiness);
    assert.equal(hold.blocks(), true);
    assert.deepEqual(events.recorded.map((e) => [e.reason, e.ref.name]), [[EVENT_EVICTION_CIRCUIT_OPEN, 'a']]);
    readiness = new Map([['a', true], ['b', true]]);
    hold.observe(readiness); // the close countdown starts; the hold arms its own recheck
    assert.equal(hold.blocks(), true);
    await settle(clock, 10_000);
    assert.equal(hold.blocks(), false, 'closed by the recheck timer, without another monitor pass');
    assert.equal(released, 1);
    assert.deepEqual(events.recorded.map((e) => [e.reason, e.ref.name]).at(-1), [EVENT_EVICTION_CIRCUIT_CLOSED, 'a'], 'the close goes on the same node');
    assert.equal(await metricValue(metrics.evictionCircuitOpen, { guard: 'max-unhealthy-nodes' }), 0);
    hold.stop();
  });
});
