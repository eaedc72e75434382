/**
 * The cluster-wide eviction guards (issue 16 items 1 and 2) in the node lifecycle controller shell,
 * driven by FakeClock with in-memory caches, simulated kubelets and the recording writes double of
 * test/support/nodelifecycle-world.ts. The pure guards are tested in guard.test.ts; here: the gate
 * (no NoExecute taint is added and no legacy eviction is made while a guard is open), what goes on
 * (the unreachable↔not-ready swap), the Events, the gauge and the view.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvictionGuardsConfig } from '../../src/nodelifecycle/guard.js';
import { GRACE_MS, LEASE_RENEW_MS, started, zoneNodes, type RecordedWrite, type World } from '../support/nodelifecycle-world.js';

function kill(w: World, names: readonly string[]): void {
  for (const n of names) w.alive.delete(n);
}

function revive(w: World, names: readonly string[], status: 'True' | 'False' = 'True'): void {
  for (const n of names) {
    w.alive.add(n);
    w.renew(n);
    w.postReady(n, status);
  }
}

/**
 * Taint writes in [fromMs, toMs) that gave a node a not-ready/unreachable NoExecute taint it had
 * neither of before: new taints, not swaps (the writes are replayed per node from the start; a
 * tainting write also names the opposite taint to remove, whether or not the node has it).
 */
function newNoExecuteTaints(w: World, fromMs: number, toMs = Infinity): RecordedWrite[] {
  const held = new Map<string, Set<string>>();
  const out: RecordedWrite[] = [];
  for (const x of w.writes) {
    if (x.kind !== 'taint') continue;
    const set = held.get(x.target) ?? new Set<string>();
    held.set(x.target, set);
    const before = set.size;
    for (const part of x.detail.split(' ')) {
      const m = /^([+-])node\.kubernetes\.io\/(unreachable|not-ready):NoExecute$/.exec(part);
      if (m?.[1] === '+') set.add(m[2] ?? '');
      else if (m?.[1] === '-') set.delete(m[2] ?? '');
    }
    if (before === 0 && set.size > 0 && x.atMs >= fromMs && x.atMs < toMs) out.push(x);
  }
  return out;
}

async function gauge(w: World, guard: string): Promise<number | undefined> {
  return (await w.metrics.evictionCircuitOpen.get()).values.find((v) => v.labels.guard === guard)?.value;
}

/** Per world, how many Events had been recorded when its start hold ended ({@link pastStartHold}). */
const afterStartHold = new WeakMap<World, number>();

/** The guard Events with `reason` recorded after the start hold ended (all of them before). */
function guardEvents(w: World, reason: 'EvictionCircuitOpen' | 'EvictionCircuitClosed'): World['events'] {
  return w.events.slice(afterStartHold.get(w) ?? 0).filter((e) => e.reason === reason);
}

/**
 * Every guard begins open when the controller starts (deliberate difference 19a; tested in
 * guard-restart.test.ts): runs the healthy world until each has closed by its own rule, so that what
 * follows starts from closed guards as before.
 */
async function pastStartHold(w: World): Promise<void> {
  for (let i = 0; i < 2000 && w.ctl.view().evictionGuards.some((g) => g.open); i++) await w.run(500, 500);
  assert.ok(w.ctl.view().evictionGuards.every((g) => !g.open), 'the start hold ended on a healthy fleet');
  afterStartHold.set(w, w.events.length);
}

/** 3 zones × 10 nodes, `--node-eviction-rate=2` (an ungated queue taints at once), the given guards. */
function fleet(t: Parameters<typeof started>[0], evictionGuards: EvictionGuardsConfig, extra: Parameters<typeof started>[1] = {}): World {
  return started(t, { nodeEvictionRate: 2, evictionGuards, ...extra }, (w) => {
    for (const z of ['a', 'b', 'c']) for (const n of zoneNodes(z, 10)) w.addNode(n, z);
  });
}

describe('issue 16: the circuit breaker in the controller shell', () => {
  test('no NoExecute taint is added while the breaker is open; the swap goes on; tainting resumes once it closes', async (t) => {
    const breaker = { maxUnhealthy: { kind: 'count', count: 3 }, closeAfterMs: GRACE_MS } as const;
    const w = fleet(t, { breaker });
    await pastStartHold(w);
    assert.equal(await gauge(w, 'max-unhealthy-nodes'), 0, 'the gauge is 0 once the start hold ended');
    assert.equal(await gauge(w, 'storm'), undefined, 'no series for a guard that is off');

    // One node down (1 ≤ 3): tainted as usual.
    kill(w, ['a-n0']);
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    assert.deepEqual(newNoExecuteTaints(w, 0).map((x) => x.target), ['a-n0']);

    // Four more (5 > 3), two per zone so every zone stays Normal: the breaker opens.
    kill(w, ['a-n1', 'a-n2', 'b-n0', 'b-n1']);
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    const [open] = guardEvents(w, 'EvictionCircuitOpen');
    assert.ok(open, 'EvictionCircuitOpen recorded');
    assert.equal(open.type, 'Warning');
    assert.equal(open.ref.kind, 'Node');
    assert.equal(open.ref.name, 'a-n0', 'on the first not-Ready node by name');
    assert.match(open.message, /5 of 30 nodes are not Ready \(17%\), more than --max-unhealthy-nodes=3 allows \(3\)/);
    assert.equal(await gauge(w, 'max-unhealthy-nodes'), 1);
    assert.ok(Object.values(w.zoneStates()).every((s) => s === 'Normal'), 'the zones stay Normal: only the breaker holds');
    const v = w.ctl.view().evictionGuards[0];
    assert.equal(v?.open, true);
    assert.equal(v?.count, 5);
    assert.ok(['a-n1', 'a-n2', 'b-n0', 'b-n1'].every((n) => w.ctl.view().nodes.find((x) => x.name === n)?.ready === 'Unknown'), 'the victims are Unknown');
    await w.run(3 * GRACE_MS, 500);

    // a-n0's kubelet comes back reporting NotReady: its existing unreachable taint is swapped for
    // not-ready while the breaker is open (it replaces a taint, it adds none).
    revive(w, ['a-n0'], 'False');
    await w.run(5000, 500);
    const swap = w.writes.filter((x) => x.kind === 'taint' && x.target === 'a-n0' && x.atMs >= open.atMs && x.detail.includes(':NoExecute'));
    assert.deepEqual(swap.map((x) => x.detail), ['+node.kubernetes.io/not-ready:NoExecute -node.kubernetes.io/unreachable:NoExecute']);

    // Three of the four come back Ready: 2 down (a-n0 NotReady, b-n1), at the close level (3 − 1 = 2).
    revive(w, ['a-n1', 'a-n2', 'b-n0']);
    const backAt = w.clock.now();
    await w.run(GRACE_MS - 2000, 500);
    assert.equal(guardEvents(w, 'EvictionCircuitClosed').length, 0, 'still open before a full grace period at the close level');
    await w.run(10_000, 500);
    const [closed] = guardEvents(w, 'EvictionCircuitClosed');
    assert.ok(closed, 'EvictionCircuitClosed recorded');
    assert.ok(closed.atMs >= backAt + GRACE_MS, 'closes only after a full grace period');
    assert.equal(closed.ref.name, 'a-n0', 'on the node that got the open Event');
    assert.equal(await gauge(w, 'max-unhealthy-nodes'), 0);
    assert.deepEqual(newNoExecuteTaints(w, open.atMs, closed.atMs), [], 'THE RULE: no NoExecute taint was added while the breaker was open');
    assert.deepEqual(newNoExecuteTaints(w, closed.atMs).map((x) => x.target), ['b-n1'], 'the node still down is tainted once it closes');
  });

  test('legacy mode: no pod is evicted while the breaker is open', async (t) => {
    // 3 down > 2: open; 1 down ≤ the close level (2 − 1 = 1): closes after a grace period.
    const breaker = { maxUnhealthy: { kind: 'count', count: 2 }, closeAfterMs: GRACE_MS } as const;
    const w = fleet(t, { breaker }, { enableTaintManager: false, podEvictionTimeoutMs: 60_000 });
    for (const n of ['a-n0', 'b-n0', 'c-n0']) w.putPod(`p-${n}`, n);
    await pastStartHold(w);
    kill(w, ['a-n0', 'b-n0', 'c-n0']);
    await w.run(GRACE_MS + 60_000 + 3 * GRACE_MS, 500);
    assert.equal(guardEvents(w, 'EvictionCircuitOpen').length, 1);
    assert.deepEqual(w.writes.filter((x) => x.kind === 'evict'), [], 'no legacy eviction while open');
    revive(w, ['b-n0', 'c-n0']);
    await w.run(GRACE_MS + 10_000, 500);
    assert.equal(guardEvents(w, 'EvictionCircuitClosed').length, 1);
    assert.deepEqual(w.writes.filter((x) => x.kind === 'evict').map((x) => x.target), ['default/p-a-n0'], 'the node still down is evicted once it closes');
  });
});

describe('issue 16: storm detection in the controller shell', () => {
  test('nodes dying together are not tainted during the storm and its hold, and are tainted after it', async (t) => {
    const storm = { threshold: { kind: 'count', count: 2 }, windowMs: 30_000, holdMs: 60_000 } as const;
    const w = fleet(t, { storm });
    await pastStartHold(w);
    const victims = ['a-n0', 'b-n0', 'c-n0'];
    kill(w, victims);
    await w.run(GRACE_MS + LEASE_RENEW_MS, 500);
    const [open] = guardEvents(w, 'EvictionCircuitOpen');
    assert.ok(open, 'the storm is detected');
    assert.match(open.message, /^Node storm: 3 of 30 nodes became not Ready within the last 30s/);
    assert.equal(await gauge(w, 'storm'), 1);
    assert.equal(w.ctl.view().evictionGuards.find((g) => g.guard === 'storm')?.open, true);
    await w.run(storm.windowMs + storm.holdMs + 20_000, 500);
    const [closed] = guardEvents(w, 'EvictionCircuitClosed');
    assert.ok(closed, 'the storm guard closed');
    assert.ok(closed.atMs - open.atMs >= storm.holdMs, 'the pause lasted at least --storm-hold');
    assert.deepEqual(newNoExecuteTaints(w, 0, closed.atMs), [], 'no NoExecute taint during the storm and its hold');
    assert.deepEqual(newNoExecuteTaints(w, closed.atMs).map((x) => x.target).sort(), victims, 'every victim is tainted after the hold');
    assert.equal(await gauge(w, 'storm'), 0);
  });

  test('guards off (the binary default): the same failure is tainted at once', async (t) => {
    const w = fleet(t, {});
    await w.run(20_000, 500);
    kill(w, ['a-n0', 'b-n0', 'c-n0']);
    await w.run(GRACE_MS + LEASE_RENEW_MS + 5000, 500);
    assert.equal(newNoExecuteTaints(w, 0).length, 3);
    assert.deepEqual(w.ctl.view().evictionGuards, []);
    assert.equal((await w.metrics.evictionCircuitOpen.get()).values.length, 0);
  });
});
