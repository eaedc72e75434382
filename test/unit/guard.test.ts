/**
 * The cluster-wide eviction guards (src/nodelifecycle/guard.ts, issue 16 items 1 and 2): the
 * `--max-unhealthy-nodes` circuit breaker with its hysteresis, storm detection, and the
 * {@link EvictionGuards} state holder the controller shell consults at its gate point.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import {
  BREAKER_CLOSED,
  CountOrPercentSyntaxError,
  EVENT_EVICTION_CIRCUIT_CLOSED,
  EVENT_EVICTION_CIRCUIT_OPEN,
  EvictionGuards,
  STORM_NONE,
  breakerLevels,
  evictionGuardsConfig,
  formatCountOrPercent,
  parseCountOrPercent,
  resolveCountOrPercent,
  stepBreaker,
  stepStorm,
  type CircuitBreakerConfig,
  type CircuitBreakerState,
  type StormConfig,
  type StormState,
} from '../../src/nodelifecycle/guard.js';

const GRACE_MS = 50_000;

/** A readiness map: nodes n0..n(total-1), the first `down` of them not Ready. */
function fleet(total: number, down: number): Map<string, boolean> {
  const m = new Map<string, boolean>();
  for (let i = 0; i < total; i++) m.set(`n${String(i).padStart(3, '0')}`, i >= down);
  return m;
}

describe('node count or percentage', () => {
  test('parses counts and percentages', () => {
    assert.deepEqual(parseCountOrPercent('5'), { kind: 'count', count: 5 });
    assert.deepEqual(parseCountOrPercent('0'), { kind: 'count', count: 0 });
    assert.deepEqual(parseCountOrPercent(' 20% '), { kind: 'percent', percent: 20 });
    assert.deepEqual(parseCountOrPercent('12.5%'), { kind: 'percent', percent: 12.5 });
    assert.deepEqual(parseCountOrPercent('100%'), { kind: 'percent', percent: 100 });
  });
  for (const bad of ['', '-1', '1.5', '20 %', '101%', '%', 'abc', '20%%', '0x10', '1e3', '-5%']) {
    test(`rejects ${JSON.stringify(bad)}`, () => {
      assert.throws(() => parseCountOrPercent(bad), (err: unknown) => err instanceof CountOrPercentSyntaxError && err.message.includes(`"${bad}"`));
    });
  }
  test('percentages round down (Cluster API maxUnhealthy), without floating-point surprises', () => {
    assert.equal(resolveCountOrPercent({ kind: 'percent', percent: 30 }, 10), 3);
    assert.equal(resolveCountOrPercent({ kind: 'percent', percent: 20 }, 9), 1);
    assert.equal(resolveCountOrPercent({ kind: 'percent', percent: 10 }, 5), 0);
    assert.equal(resolveCountOrPercent({ kind: 'percent', percent: 100 }, 7), 7);
    assert.equal(resolveCountOrPercent({ kind: 'count', count: 4 }, 2), 4);
  });
  test('formats as the flag is written', () => {
    assert.equal(formatCountOrPercent(parseCountOrPercent('20%')), '20%');
    assert.equal(formatCountOrPercent(parseCountOrPercent('7')), '7');
  });
});

describe('circuit breaker (--max-unhealthy-nodes)', () => {
  const cfg: CircuitBreakerConfig = { maxUnhealthy: { kind: 'count', count: 10 }, closeAfterMs: GRACE_MS };

  test('hysteresis levels: closes at limit − max(1, ceil(limit/10)), never below 0', () => {
    assert.deepEqual(breakerLevels({ kind: 'count', count: 10 }, 100), { limit: 10, closeAt: 9 });
    assert.deepEqual(breakerLevels({ kind: 'count', count: 5 }, 100), { limit: 5, closeAt: 4 });
    assert.deepEqual(breakerLevels({ kind: 'count', count: 25 }, 100), { limit: 25, closeAt: 22 });
    assert.deepEqual(breakerLevels({ kind: 'percent', percent: 20 }, 1000), { limit: 200, closeAt: 180 });
    assert.deepEqual(breakerLevels({ kind: 'count', count: 0 }, 100), { limit: 0, closeAt: 0 });
  });

  test('opens at once above the limit, not at it', () => {
    let s = stepBreaker(BREAKER_CLOSED, 10, 100, 0, cfg);
    assert.equal(s.state.open, false);
    assert.equal(s.change, undefined);
    s = stepBreaker(s.state, 11, 100, 1, cfg);
    assert.equal(s.state.open, true);
    assert.equal(s.change, 'opened');
    assert.equal(s.state.openedAtMs, 1);
  });

  test('a count wavering between the close level and the limit keeps it open', () => {
    let state = stepBreaker(BREAKER_CLOSED, 11, 100, 0, cfg).state;
    for (let t = 1000, i = 0; i < 100; i++, t += 5000) {
      const s = stepBreaker(state, i % 2 === 0 ? 10 : 11, 100, t, cfg);
      assert.equal(s.change, undefined);
      assert.equal(s.state.open, true);
      state = s.state;
    }
  });

  test('closes only after a full closeAfterMs at or below the close level; a dip above it restarts the wait', () => {
    let s = stepBreaker(BREAKER_CLOSED, 20, 100, 0, cfg);
    s = stepBreaker(s.state, 9, 100, 10_000, cfg);
    assert.equal(s.state.open, true);
    assert.equal(s.closesAtMs, 10_000 + GRACE_MS);
    s = stepBreaker(s.state, 10, 100, 30_000, cfg); // back into the band: the wait restarts
    assert.equal(s.state.open, true);
    assert.equal(s.closesAtMs, undefined);
    s = stepBreaker(s.state, 9, 100, 40_000, cfg);
    s = stepBreaker(s.state, 8, 100, 40_000 + GRACE_MS - 1, cfg);
    assert.equal(s.state.open, true);
    s = stepBreaker(s.state, 8, 100, 40_000 + GRACE_MS, cfg);
    assert.equal(s.change, 'closed');
    assert.equal(s.state.open, false);
  });

  test('percent limit follows the fleet size', () => {
    const p: CircuitBreakerConfig = { maxUnhealthy: { kind: 'percent', percent: 20 }, closeAfterMs: GRACE_MS };
    assert.equal(stepBreaker(BREAKER_CLOSED, 3, 10, 0, p).state.open, true); // limit 2
    assert.equal(stepBreaker(BREAKER_CLOSED, 3, 20, 0, p).state.open, false); // limit 4
  });

  const step = fc.record({ dtMs: fc.integer({ min: 0, max: 20_000 }), unhealthy: fc.integer({ min: 0, max: 30 }) });

  test('property: never closes while the count is above the close level (never opens-then-closes within the band)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 25 }), fc.array(step, { maxLength: 80 }), (limit, steps) => {
        const c: CircuitBreakerConfig = { maxUnhealthy: { kind: 'count', count: limit }, closeAfterMs: GRACE_MS };
        const { closeAt } = breakerLevels(c.maxUnhealthy, 100);
        let state: CircuitBreakerState = BREAKER_CLOSED;
        let now = 0;
        const history: { t: number; u: number }[] = [];
        for (const { dtMs, unhealthy } of steps) {
          now += dtMs;
          const r = stepBreaker(state, unhealthy, 100, now, c);
          history.push({ t: now, u: unhealthy });
          if (unhealthy > limit) assert.equal(r.state.open, true, 'open whenever above the limit');
          if (r.change === 'closed') {
            assert.ok(unhealthy <= closeAt, 'closes only at or below the close level');
            // Every observation of the last closeAfterMs was at or below the close level, and the
            // run of such observations lasted at least closeAfterMs.
            let i = history.length - 1;
            while (i > 0 && (history[i - 1] as { u: number }).u <= closeAt) i--;
            assert.ok(now - (history[i] as { t: number }).t >= GRACE_MS, 'the count stayed low for a full closeAfterMs');
          }
          if (state.open && unhealthy > closeAt) assert.equal(r.state.open, true, 'an open breaker stays open within the band');
          state = r.state;
        }
      }),
      { numRuns: 500 },
    );
  });

  test('property: once open, a count that never goes to the close level keeps it open forever', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 25 }), fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 50 }), (limit, gaps) => {
        const c: CircuitBreakerConfig = { maxUnhealthy: { kind: 'count', count: limit }, closeAfterMs: GRACE_MS };
        const { closeAt } = breakerLevels(c.maxUnhealthy, 100);
        let r = stepBreaker(BREAKER_CLOSED, limit + 1, 100, 0, c);
        let now = 0;
        for (const [i, g] of gaps.entries()) {
          now += g;
          r = stepBreaker(r.state, closeAt + 1 + (i % (limit - closeAt + 2)), 100, now, c);
          assert.equal(r.state.open, true);
          assert.notEqual(r.change, 'closed');
        }
      }),
    );
  });
});

describe('storm detection (--storm-threshold, --storm-window, --storm-hold)', () => {
  const cfg: StormConfig = { threshold: { kind: 'count', count: 3 }, windowMs: 30_000, holdMs: 60_000 };

  test('nodes not Ready at the first observation did not become not Ready: no storm', () => {
    const s = stepStorm(STORM_NONE, fleet(10, 8), 0, cfg);
    assert.equal(s.state.open, false);
    assert.equal(s.recent, 0);
  });

  test('new nodes that were never seen Ready do not count', () => {
    let s = stepStorm(STORM_NONE, fleet(10, 0), 0, cfg);
    const grown = fleet(10, 0);
    for (let i = 0; i < 5; i++) grown.set(`new${i}`, false);
    s = stepStorm(s.state, grown, 1000, cfg);
    assert.equal(s.recent, 0);
    assert.equal(s.state.open, false);
  });

  test('more than the threshold becoming not Ready within the window is a storm; it ends after window + hold', () => {
    let s = stepStorm(STORM_NONE, fleet(10, 0), 0, cfg);
    s = stepStorm(s.state, fleet(10, 2), 1000, cfg);
    s = stepStorm(s.state, fleet(10, 3), 2000, cfg);
    assert.equal(s.state.open, false, 'exactly the threshold is not a storm');
    s = stepStorm(s.state, fleet(10, 4), 3000, cfg);
    assert.equal(s.change, 'opened');
    assert.equal(s.recent, 4);
    assert.deepEqual(s.recentNodes, ['n000', 'n001', 'n002', 'n003']);
    // The nodes stay down; entries age out of the window: the two from t=1000 at 31000.
    s = stepStorm(s.state, fleet(10, 4), 30_999, cfg);
    assert.equal(s.closesAtMs, undefined, 'still in the storm');
    s = stepStorm(s.state, fleet(10, 4), 31_000, cfg);
    assert.equal(s.state.open, true, 'the storm is over, the hold starts');
    assert.equal(s.closesAtMs, 31_000 + 60_000);
    s = stepStorm(s.state, fleet(10, 4), 90_999, cfg);
    assert.equal(s.state.open, true);
    s = stepStorm(s.state, fleet(10, 4), 91_000, cfg);
    assert.equal(s.change, 'closed');
    assert.equal(s.state.open, false);
  });

  test('a storm that comes back during the hold continues the same pause', () => {
    let s = stepStorm(STORM_NONE, fleet(20, 0), 0, cfg);
    s = stepStorm(s.state, fleet(20, 4), 1000, cfg);
    const opened = s.state.openedAtMs;
    s = stepStorm(s.state, fleet(20, 4), 40_000, cfg); // over since 40 s (entries aged out)
    assert.equal(s.closesAtMs, 100_000);
    s = stepStorm(s.state, fleet(20, 8), 50_000, cfg); // 4 more within the window
    assert.equal(s.change, undefined);
    assert.equal(s.state.open, true);
    assert.equal(s.state.openedAtMs, opened);
    assert.equal(s.closesAtMs, undefined);
  });

  test('a node that flaps counts once; a deleted node is forgotten', () => {
    let s = stepStorm(STORM_NONE, fleet(10, 0), 0, cfg);
    for (let t = 1000; t < 10_000; t += 1000) s = stepStorm(s.state, fleet(10, (t / 1000) % 2), t, cfg);
    assert.equal(s.recent, 1);
    const gone = fleet(10, 0);
    gone.delete('n000');
    s = stepStorm(s.state, gone, 10_000, cfg);
    assert.equal(s.recent, 0);
  });

  test('property: never closes sooner than --storm-hold after the last observation in a storm', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ dtMs: fc.integer({ min: 0, max: 30_000 }), down: fc.integer({ min: 0, max: 12 }) }), { maxLength: 60 }),
        (steps) => {
          let state: StormState = stepStorm(STORM_NONE, fleet(12, 0), 0, cfg).state;
          let now = 0;
          let lastInStorm: number | undefined;
          for (const { dtMs, down } of steps) {
            now += dtMs;
            const r = stepStorm(state, fleet(12, down), now, cfg);
            if (r.recent > r.threshold) {
              lastInStorm = now;
              assert.equal(r.state.open, true);
            }
            if (r.change === 'closed') assert.ok(lastInStorm !== undefined && now - lastInStorm >= cfg.holdMs);
            state = r.state;
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('EvictionGuards', () => {
  test('off by default: blocks nothing, reports nothing', () => {
    const g = new EvictionGuards(new FakeClock(), {});
    assert.equal(g.enabled, false);
    assert.deepEqual(g.observe({ readiness: fleet(10, 10) }), []);
    assert.equal(g.blocksNewNoExecuteTaints(), false);
    assert.deepEqual(g.view(), []);
  });

  test('breaker: transitions carry the Event reason, a message and the not-Ready nodes; the view explains it', () => {
    const clock = new FakeClock(0);
    const g = new EvictionGuards(clock, { breaker: { maxUnhealthy: { kind: 'percent', percent: 20 }, closeAfterMs: GRACE_MS } });
    assert.deepEqual(g.configured, ['max-unhealthy-nodes']);
    assert.deepEqual(g.observe({ readiness: fleet(10, 2) }), []);
    const [t] = g.observe({ readiness: fleet(10, 3) });
    assert.ok(t);
    assert.equal(t.guard, 'max-unhealthy-nodes');
    assert.equal(t.reason, EVENT_EVICTION_CIRCUIT_OPEN);
    assert.deepEqual(t.notReadyNodes, ['n000', 'n001', 'n002']);
    assert.match(t.message, /3 of 10 nodes are not Ready \(30%\), more than --max-unhealthy-nodes=20% allows \(2\)/);
    assert.match(t.message, /no NoExecute taint is added anywhere/);
    assert.equal(g.blocksNewNoExecuteTaints(), true);
    assert.deepEqual(g.openGuards(), ['max-unhealthy-nodes']);
    const [v] = g.view();
    assert.equal(v?.open, true);
    assert.equal(v?.openedAt, 0);
    assert.equal(v?.count, 3);
    assert.equal(v?.limit, 2);
    clock.advance(1000);
    assert.deepEqual(g.observe({ readiness: fleet(10, 1) }), []);
    assert.equal(g.recheckAtMs(), 1000 + GRACE_MS);
    assert.equal(g.view()[0]?.closesAt, 1000 + GRACE_MS);
    clock.advance(GRACE_MS);
    const [c] = g.observe({ readiness: fleet(10, 1) });
    assert.equal(c?.reason, EVENT_EVICTION_CIRCUIT_CLOSED);
    assert.equal(g.blocksNewNoExecuteTaints(), false);
    assert.equal(g.recheckAtMs(), undefined);
  });

  test('storm: opens and closes with its own guard name; rechecks when entries age out', () => {
    const clock = new FakeClock(0);
    const g = new EvictionGuards(clock, { storm: { threshold: { kind: 'count', count: 2 }, windowMs: 10_000, holdMs: 20_000 } });
    g.observe({ readiness: fleet(10, 0) });
    clock.advance(1000);
    const [t] = g.observe({ readiness: fleet(10, 3) });
    assert.equal(t?.guard, 'storm');
    assert.equal(t?.reason, EVENT_EVICTION_CIRCUIT_OPEN);
    assert.match(t?.message ?? '', /Node storm: 3 of 10 nodes became not Ready within the last 10s/);
    assert.equal(g.recheckAtMs(), 11_000);
    clock.set(11_000);
    assert.deepEqual(g.observe({ readiness: fleet(10, 3) }), []);
    assert.equal(g.blocksNewNoExecuteTaints(), true, 'held');
    assert.equal(g.recheckAtMs(), 31_000);
    clock.set(31_000);
    const [c] = g.observe({ readiness: fleet(10, 3) });
    assert.equal(c?.guard, 'storm');
    assert.equal(c?.reason, EVENT_EVICTION_CIRCUIT_CLOSED);
    assert.equal(g.blocksNewNoExecuteTaints(), false);
  });
});

test('evictionGuardsConfig: from the flags; the breaker closes after --node-monitor-grace-period; empty flags are off', () => {
  const flags = { maxUnhealthyNodes: undefined, stormThreshold: undefined, stormWindow: 60_000, stormHold: 300_000, nodeMonitorGracePeriod: GRACE_MS, nodeMonitorPeriod: 5000 };
  assert.deepEqual(evictionGuardsConfig(flags), { maxObservationGapMs: 15_000 });
  assert.deepEqual(evictionGuardsConfig({ ...flags, maxUnhealthyNodes: { kind: 'percent', percent: 40 }, stormThreshold: { kind: 'count', count: 3 } }), {
    maxObservationGapMs: 15_000,
    breaker: { maxUnhealthy: { kind: 'percent', percent: 40 }, closeAfterMs: GRACE_MS },
    storm: { threshold: { kind: 'count', count: 3 }, windowMs: 60_000, holdMs: 300_000 },
  });
});

test('a gap in the observations (the controller was blind) restarts the countdowns towards closing', () => {
  const clock = new FakeClock(0);
  const g = new EvictionGuards(clock, {
    maxObservationGapMs: 15_000,
    breaker: { maxUnhealthy: { kind: 'count', count: 2 }, closeAfterMs: GRACE_MS },
    storm: { threshold: { kind: 'count', count: 2 }, windowMs: 10_000, holdMs: 30_000 },
  });
  g.observe({ readiness: fleet(10, 0) });
  clock.advance(5000);
  g.observe({ readiness: fleet(10, 3) }); // both open
  assert.deepEqual(g.openGuards(), ['max-unhealthy-nodes', 'storm']);
  clock.advance(5000);
  g.observe({ readiness: fleet(10, 1) }); // breaker closable from 10 s
  for (let t = 15_000; t <= 20_000; t += 5000) {
    clock.set(t);
    g.observe({ readiness: fleet(10, 1) }); // storm over (entries aged out) from 15 s
  }
  assert.equal(g.view().find((v) => v.guard === 'max-unhealthy-nodes')?.closesAt, 10_000 + GRACE_MS);
  assert.equal(g.view().find((v) => v.guard === 'storm')?.closesAt, 15_000 + 30_000);
  clock.set(40_000); // 20 s without an observation
  g.observe({ readiness: fleet(10, 1) });
  assert.equal(g.view().find((v) => v.guard === 'max-unhealthy-nodes')?.closesAt, 40_000 + GRACE_MS, 'the breaker waits a full grace period from now');
  assert.equal(g.view().find((v) => v.guard === 'storm')?.closesAt, 40_000 + 30_000, 'the storm hold restarts');
  assert.deepEqual(g.openGuards(), ['max-unhealthy-nodes', 'storm']);
});
