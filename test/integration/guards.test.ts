/**
 * Issue 16 acceptance, items 1 and 2: the cluster-wide eviction guards against the real API server,
 * with simulated kubelets (packages/sim/src/fleet.ts) and a controller scoped to the test's own fleet
 * (`--node-selector nlc.sim/fleet=<prefix>`, test/support/controller.ts).
 * - Circuit breaker (`--max-unhealthy-nodes`): while more than N nodes are down, no NoExecute taint
 *   lands anywhere, the `EvictionCircuitOpen` Warning Event and the gauge say why; once the count is
 *   back at the close level for a grace period it closes (`EvictionCircuitClosed`) and the node still
 *   down is tainted.
 * - Storm detection (`--storm-threshold`, `--storm-window`, `--storm-hold`): nodes dying together
 *   are not tainted during the storm and its hold, and are tainted after it.
 * Every absence check runs over a window derived from the configured durations; every wait is for a
 * condition, with a generous timeout (the machine is shared).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import type { RunningController } from '../../src/cli/run.js';
import type { EvictionGuardName, EvictionGuardView } from '../../src/nodelifecycle/guard.js';
import { createTestNamespace, holdsFor, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricValue, scrapeMetrics, startTestController } from '../support/controller.js';
import { NodeObserver } from '../support/observe.js';

/** Grace period: half of it (3 s) of silence counts a node as not Ready for the guards, well above the 1 s Lease renewal. */
const GRACE_MS = 6000;
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
// At 2 nodes/s (burst 1) an ungated zone queue taints its first node at once: an absence check of
// seconds would see a leak.
const baseFlags = [`--node-monitor-grace-period=${GRACE_MS / 1000}s`, '--node-monitor-period=1s', '--node-eviction-rate=2'];
const clients = testClients();

interface Scenario {
  fleet: Fleet;
  controller: RunningController;
  observer: NodeObserver;
  prefix: string;
  /** Node names of zone i (0-based). */
  zone: (i: number) => string[];
  /** Epoch ms by which the guards' start hold had ended: Events before it are the start hold's. */
  settledAt: number;
}

/** A fleet of 3 zones × 4 nodes (no pods), a controller scoped to it with `flags`, and an observer. */
async function withScenario(name: string, flags: string[], body: (s: Scenario) => Promise<void>): Promise<void> {
  const prefix = uniquePrefix(name);
  await createTestNamespace(clients, prefix);
  const fleet = new Fleet({
    clients,
    prefix,
    namespace: prefix,
    zones: 3,
    nodesPerZone: 4,
    podsPerNode: 0,
    leaseRenewIntervalMs: 1000,
    leaseDurationSeconds: 6,
    nodeStatusUpdateFrequencyMs: 60_000,
  });
  await fleet.start();
  const controller = await startTestController(prefix, [...baseFlags, ...flags]);
  const observer = new NodeObserver(clients, `nlc.sim/fleet=${prefix}`, 100);
  await observer.start();
  try {
    await waitFor('zones Normal', () => controller.nodeLifecycle?.view().zones.every((z) => z.state === 'Normal') && (controller.nodeLifecycle?.view().zones.length ?? 0) === 3, 30_000);
    // Every guard begins open when the controller starts and closes by its own rule on the healthy
    // fleet (deliberate difference 19a): the scenarios start from closed guards.
    const view = (): EvictionGuardView[] => controller.nodeLifecycle?.view().evictionGuards ?? [];
    await waitFor('the start hold ended', () => view().length > 0 && view().every((g) => !g.open), 60_000);
    const settledAt = Date.now();
    await waitFor('the start hold Event says the controller just started', async () => {
      const list = await clients.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'reason=EvictionCircuitOpen' });
      return list.items.some((e) => (e.involvedObject.name ?? '').startsWith(prefix) && /open because the controller just started/.test(e.message ?? ''));
    }, 10_000);
    assert.equal(metricValue(await scrapeMetrics(controller), 'node_collector_eviction_circuit_start_hold', { guard: view()[0]?.guard ?? '' }), 0);
    await body({ fleet, controller, observer, prefix, zone: (i) => fleet.nodesInZone(fleet.zones()[i] as string), settledAt });
  } finally {
    observer.stop();
    await controller.stop();
    await fleet.stop();
    await fleet.cleanup();
  }
}

function guardView(controller: RunningController, guard: EvictionGuardName): EvictionGuardView | undefined {
  return controller.nodeLifecycle?.view().evictionGuards.find((g) => g.guard === guard);
}

/** Every NoExecute taint the observer saw on the fleet: node → first time (ms). */
function noExecuteTaints(observer: NodeObserver): Map<string, number> {
  const all = new Map(observer.taintedWith(UNREACHABLE));
  for (const [n, at] of observer.taintedWith(NOT_READY)) if (!all.has(n) || (all.get(n) ?? 0) > at) all.set(n, at);
  return all;
}

/**
 * The fleet's Events with `reason` last seen after `settledAt` (the start hold's Events are older;
 * a second after it leaves room for lastTimestamp's whole seconds), newest last (Node events are
 * recorded in `default`).
 */
async function fleetEvents(prefix: string, reason: string, settledAt: number): Promise<{ node: string; type: string; message: string }[]> {
  const list = await clients.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `reason=${reason}` });
  return list.items
    .filter((e) => e.involvedObject.kind === 'Node' && (e.involvedObject.name ?? '').startsWith(prefix))
    .filter((e) => (e.lastTimestamp ? new Date(e.lastTimestamp).getTime() : 0) > settledAt + 1000)
    .map((e) => ({ node: e.involvedObject.name ?? '', type: e.type ?? '', message: e.message ?? '' }));
}

describe('cluster-wide eviction guards (issue 16)', { concurrency: false }, () => {
  test('breaker open → no NoExecute taint while more than N nodes are down, with the Event present; it closes with hysteresis and tainting resumes', async () => {
    // N = 2 of 12 nodes. Two victims in each of two zones: 2 of 4 not Ready keeps every zone Normal
    // (PartialDisruption needs more than 2), so only the breaker can hold the taints back.
    await withScenario('guard-breaker', ['--max-unhealthy-nodes=2'], async ({ fleet, controller, observer, prefix, zone, settledAt }) => {
      assert.equal(metricValue(await scrapeMetrics(controller), 'node_collector_eviction_circuit_open', { guard: 'max-unhealthy-nodes' }), 0);
      const victims = [...zone(0).slice(0, 2), ...zone(1).slice(0, 2)];
      for (const v of victims) fleet.killNode(v);
      await waitFor('breaker open', () => guardView(controller, 'max-unhealthy-nodes')?.open, GRACE_MS + 30_000);
      await waitFor('victims Unknown', () => victims.every((v) => observer.firstAt(v, (c) => c.ready === 'Unknown') !== undefined), GRACE_MS + 30_000);
      // Absence over two grace periods after every victim is Unknown and queued: at 2 nodes/s an
      // ungated queue would have tainted all four within 2 s.
      await holdsFor('no NoExecute taint while the breaker is open', () => noExecuteTaints(observer).size === 0, 2 * GRACE_MS);
      assert.ok(controller.nodeLifecycle?.view().zones.every((z) => z.state === 'Normal'), 'the zones stayed Normal: the breaker, not a zone pause, held the taints');
      const open = await fleetEvents(prefix, 'EvictionCircuitOpen', settledAt);
      assert.equal(open.length, 1, 'one EvictionCircuitOpen Event');
      assert.equal(open[0]?.type, 'Warning');
      assert.ok(victims.includes(open[0]?.node ?? ''), `the Event is on a down node (${open[0]?.node})`);
      assert.match(open[0]?.message ?? '', /of 12 nodes are not Ready .*more than --max-unhealthy-nodes=2 allows \(2\)/);
      assert.equal(metricValue(await scrapeMetrics(controller), 'node_collector_eviction_circuit_open', { guard: 'max-unhealthy-nodes' }), 1);

      // Three come back: 1 down ≤ the close level (2 − max(1, 10% of 2) = 1). The breaker closes a
      // grace period later and the node still down is tainted.
      const [still, ...back] = victims as [string, ...string[]];
      await Promise.all(back.map((v) => fleet.reviveNode(v)));
      await waitFor('breaker closed', () => guardView(controller, 'max-unhealthy-nodes')?.open === false, GRACE_MS + 60_000);
      await waitFor(`${still} tainted unreachable:NoExecute`, () => observer.taintedWith(UNREACHABLE).has(still), 30_000);
      assert.deepEqual([...noExecuteTaints(observer).keys()], [still], 'only the node still down is tainted');
      const closed = await waitFor('EvictionCircuitClosed Event', async () => (await fleetEvents(prefix, 'EvictionCircuitClosed', settledAt))[0], 10_000);
      assert.equal(closed.type, 'Warning');
      assert.equal(closed.node, open[0]?.node, 'the close Event goes on the node that got the open one');
      assert.equal(metricValue(await scrapeMetrics(controller), 'node_collector_eviction_circuit_open', { guard: 'max-unhealthy-nodes' }), 0);
    });
  });

  test('storm → no NoExecute taint during the storm and its hold, tainting after it', async () => {
    // Three nodes, one per zone (zones stay Normal), die together: more than --storm-threshold=2
    // became not Ready within --storm-window=10s. Tainting waits until the storm has been over for
    // --storm-hold=10s.
    const windowMs = 10_000;
    const holdMs = 10_000;
    await withScenario('guard-storm', ['--storm-threshold=2', `--storm-window=${windowMs / 1000}s`, `--storm-hold=${holdMs / 1000}s`], async ({ fleet, controller, observer, prefix, zone, settledAt }) => {
      const victims = [zone(0)[0], zone(1)[0], zone(2)[0]] as string[];
      for (const v of victims) fleet.killNode(v);
      const openedAt = await waitFor('storm detected', () => guardView(controller, 'storm')?.openedAt, GRACE_MS + 30_000);
      // The close moment, as the controller's view shows it (polled every 50 ms).
      const closedAt = await waitFor('storm over and held', () => guardView(controller, 'storm')?.open === false && Date.now(), GRACE_MS + windowMs + holdMs + 60_000, 50);
      assert.ok(closedAt - openedAt >= holdMs, `the pause lasted ${closedAt - openedAt} ms, at least --storm-hold`);
      const early = [...noExecuteTaints(observer)].filter(([, at]) => at < closedAt - 100);
      assert.deepEqual(early, [], 'no NoExecute taint during the storm and its hold');
      assert.ok(victims.every((v) => observer.firstAt(v, (c) => c.ready === 'Unknown') !== undefined), 'the victims were Unknown (queued) during the hold');
      await waitFor('every victim tainted after the hold', () => victims.every((v) => observer.taintedWith(UNREACHABLE).has(v)), 30_000);
      const open = await fleetEvents(prefix, 'EvictionCircuitOpen', settledAt);
      assert.equal(open.length, 1);
      assert.match(open[0]?.message ?? '', /Node storm: 3 of 12 nodes became not Ready within the last 10s/);
      const closed = await waitFor('EvictionCircuitClosed Event', async () => (await fleetEvents(prefix, 'EvictionCircuitClosed', settledAt))[0], 10_000);
      assert.match(closed.message, /--storm-hold=10s/);
    });
  });
});
