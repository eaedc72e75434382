/**
 * After a start (a process restart, or a standby that becomes leader) both cluster-wide eviction
 * guards begin open and close only by their normal hysteresis over what the new process has seen
 * (deliberate difference 19a of docs/node-lifecycle.md: it only delays). Before, their state lived
 * only in memory: a restart during a storm forgot the storm (the new process never saw those nodes
 * turn not Ready) and a breaker held open by its hysteresis band restarted closed, so tainting
 * resumed at once. Driven on the real controller shell (FakeClock, test/support/nodelifecycle-world.ts);
 * the "restart" stops the controller and builds and starts a new one over the same cluster, as a new
 * leader would find it (the old leader's Unknown conditions, no NoExecute taint).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvictionGuardsConfig } from '../../src/nodelifecycle/guard.js';
import { GRACE_MS, LEASE_RENEW_MS, started, zoneNodes, type World } from '../support/nodelifecycle-world.js';

const MONITOR_MS = 5000;

function kill(w: World, names: readonly string[]): void {
  for (const n of names) w.alive.delete(n);
}

function revive(w: World, names: readonly string[]): void {
  for (const n of names) {
    w.alive.add(n);
    w.renew(n);
    w.postReady(n, 'True');
  }
}

/** Nodes that got a not-ready/unreachable NoExecute taint in a write at or after `fromMs`. */
function taintedSince(w: World, fromMs: number): string[] {
  return [...new Set(w.noExecuteAdds().filter((x) => x.atMs >= fromMs).map((x) => x.target))].sort();
}

/** 3 zones × 10 nodes, `--node-eviction-rate=2` (an ungated zone queue taints at once). */
function fleet(t: Parameters<typeof started>[0], evictionGuards: EvictionGuardsConfig): World {
  return started(t, { nodeEvictionRate: 2, evictionGuards }, (w) => {
    for (const z of ['a', 'b', 'c']) for (const n of zoneNodes(z, 10)) w.addNode(n, z);
  });
}

/** Runs until every guard is closed (the first start's hold on a healthy fleet). */
async function pastStartHold(w: World): Promise<void> {
  for (let i = 0; i < 2000 && w.ctl.view().evictionGuards.some((g) => g.open); i++) await w.run(500, 500);
  assert.ok(w.ctl.view().evictionGuards.every((g) => !g.open), 'the first start hold ended on a healthy fleet');
}

/** The leader dies and a new one starts over the same cluster. @returns the restart time (epoch ms). */
async function restart(w: World): Promise<number> {
  await w.ctl.stop();
  w.build().start();
  return w.clock.now();
}

async function gauge(w: World, metric: 'evictionCircuitOpen' | 'evictionCircuitStartHold', guard: string): Promise<number | undefined> {
  return (await w.metrics[metric].get()).values.find((v) => v.labels.guard === guard)?.value;
}

describe('eviction guards after a start (deliberate difference 19a)', () => {
  test('storm: a restart during a storm does not resume tainting at once; only after a whole window since the start plus --storm-hold', async (t) => {
    const storm = { threshold: { kind: 'count', count: 2 }, windowMs: 30_000, holdMs: 60_000 } as const;
    const w = fleet(t, { storm });
    await pastStartHold(w);
    const victims = ['a-n0', 'b-n0', 'c-n0'];
    kill(w, victims);
    await w.run(GRACE_MS + LEASE_RENEW_MS, 500);
    assert.equal(w.ctl.view().evictionGuards[0]?.open, true, 'the storm is on before the restart');
    assert.deepEqual(taintedSince(w, 0), [], 'nothing tainted during the storm');
    assert.ok(victims.every((n) => w.ctl.view().nodes.find((x) => x.name === n)?.ready === 'Unknown'));

    const eventsBefore = w.events.length;
    const restartAt = await restart(w);
    await w.run(storm.windowMs + storm.holdMs - 1000, 500);
    assert.deepEqual(taintedSince(w, restartAt), [], 'THE RULE: no NoExecute taint within a window plus the hold after the restart');

    // Said in the gauges, the view, the log's Event and the explanation: open because it just started.
    assert.equal(await gauge(w, 'evictionCircuitOpen', 'storm'), 1);
    assert.equal(await gauge(w, 'evictionCircuitStartHold', 'storm'), 1);
    const view = w.ctl.view().evictionGuards.find((g) => g.guard === 'storm');
    assert.equal(view?.open, true);
    assert.equal(view?.sinceStart, true);
    assert.match(view?.reason ?? '', /open because the controller just started/);
    const opened = w.events.slice(eventsBefore).filter((e) => e.reason === 'EvictionCircuitOpen');
    assert.equal(opened.length, 1, 'one EvictionCircuitOpen Event after the restart');
    assert.equal(opened[0]?.type, 'Warning');
    assert.match(opened[0]?.message ?? '', /^Node storm guard open because the controller just started/);
    assert.ok(victims.includes(opened[0]?.ref.name ?? ''), 'on a not-Ready node');

    // Then the normal hysteresis closes it, and the victims are tainted.
    await w.run(2 * MONITOR_MS + 5000, 500);
    const closed = w.events.slice(eventsBefore).find((e) => e.reason === 'EvictionCircuitClosed');
    assert.ok(closed, 'the storm guard closed');
    assert.ok(closed.atMs >= restartAt + storm.windowMs + storm.holdMs, `closed ${closed.atMs - restartAt} ms after the restart`);
    assert.deepEqual(taintedSince(w, restartAt), victims, 'every victim is tainted once it closed');
    assert.ok(w.noExecuteAdds().every((x) => x.atMs >= closed.atMs));
    assert.equal(await gauge(w, 'evictionCircuitOpen', 'storm'), 0);
    assert.equal(await gauge(w, 'evictionCircuitStartHold', 'storm'), 0);
  });

  test('breaker: a restart while the count sits in the hysteresis band keeps it open; it closes only after the count fell to the close level for a full grace period', async (t) => {
    // limit 3, close level 2: 5 down opens it; 3 down keeps it open (the band), 2 closes it after a grace period.
    const breaker = { maxUnhealthy: { kind: 'count', count: 3 }, closeAfterMs: GRACE_MS } as const;
    const w = fleet(t, { breaker });
    await pastStartHold(w);
    kill(w, ['a-n0', 'a-n1', 'b-n0', 'b-n1', 'c-n0']);
    await w.run(GRACE_MS + LEASE_RENEW_MS + MONITOR_MS, 500);
    assert.equal(w.ctl.view().evictionGuards[0]?.open, true, 'the breaker is open before the restart');
    revive(w, ['a-n1', 'b-n1']);
    await w.run(3 * MONITOR_MS, 500);
    assert.equal(w.ctl.view().evictionGuards[0]?.open, true, 'the band (3 down) keeps it open');
    assert.deepEqual(taintedSince(w, 0), []);

    const eventsBefore = w.events.length;
    const restartAt = await restart(w);
    await w.run(3 * GRACE_MS, 500);
    assert.deepEqual(taintedSince(w, restartAt), [], 'THE RULE: the band keeps the restarted breaker open, as it kept the old one');
    const view = w.ctl.view().evictionGuards.find((g) => g.guard === 'max-unhealthy-nodes');
    assert.equal(view?.open, true);
    assert.equal(view?.sinceStart, true);
    assert.match(view?.reason ?? '', /^Eviction circuit open because the controller just started/);
    assert.equal(await gauge(w, 'evictionCircuitStartHold', 'max-unhealthy-nodes'), 1);
    assert.equal(w.events.slice(eventsBefore).filter((e) => e.reason === 'EvictionCircuitOpen').length, 1);

    // One more recovers: 2 down, the close level. It closes after a full grace period, then taints.
    revive(w, ['c-n0']);
    const backAt = w.clock.now();
    await w.run(GRACE_MS - 2000, 500);
    assert.deepEqual(taintedSince(w, restartAt), [], 'still open within a grace period at the close level');
    await w.run(10_000, 500);
    const closed = w.events.slice(eventsBefore).find((e) => e.reason === 'EvictionCircuitClosed');
    assert.ok(closed && closed.atMs >= backAt + GRACE_MS, 'closed after a full grace period at the close level');
    assert.deepEqual(taintedSince(w, restartAt), ['a-n0', 'b-n0']);
    assert.equal(await gauge(w, 'evictionCircuitOpen', 'max-unhealthy-nodes'), 0);
  });

  test('a healthy restart only delays: the breaker closes one grace period after the start, and a node that dies then is tainted', async (t) => {
    const breaker = { maxUnhealthy: { kind: 'count', count: 3 }, closeAfterMs: GRACE_MS } as const;
    const w = fleet(t, { breaker });
    await pastStartHold(w);
    const restartAt = await restart(w);
    kill(w, ['a-n0']);
    await w.run(GRACE_MS - 2000, 500);
    assert.equal(w.ctl.view().evictionGuards[0]?.open, true, 'held within a grace period of the start');
    await w.run(GRACE_MS + LEASE_RENEW_MS + 2 * MONITOR_MS, 500);
    assert.equal(w.ctl.view().evictionGuards[0]?.open, false);
    assert.deepEqual(taintedSince(w, restartAt), ['a-n0']);
  });

  test('a guard that is off stays off after a start: the same failure is tainted at once', async (t) => {
    const w = fleet(t, {});
    await w.run(20_000, 500);
    const restartAt = await restart(w);
    kill(w, ['a-n0', 'b-n0', 'c-n0']);
    await w.run(GRACE_MS + LEASE_RENEW_MS + MONITOR_MS, 500);
    assert.deepEqual(w.ctl.view().evictionGuards, []);
    assert.deepEqual(taintedSince(w, restartAt), ['a-n0', 'b-n0', 'c-n0']);
    assert.equal((await w.metrics.evictionCircuitOpen.get()).values.length, 0);
  });
});
