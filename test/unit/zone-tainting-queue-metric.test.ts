/**
 * Our `node_collector_zone_tainting_queue_length{zone}` gauge (issue 17 item 4, the dashboard's
 * "tainting rate and queue" panel): the nodes waiting in each zone's NoExecute tainting queue (legacy
 * mode: eviction queue), kept equal to what `status` shows as QUEUE while the queue fills, drains at
 * the zone's rate, holds in a paused zone, and is 0 again when the zone disappears. FakeClock world.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GRACE_MS, LEASE_RENEW_MS, started, zoneNodes, type World } from '../support/nodelifecycle-world.js';

const ZONE_A = 'r:\x00:a';
const ZONE_B = 'r:\x00:b';

async function queueGauge(w: World, zone: string): Promise<number | undefined> {
  return (await w.metrics.zoneTaintingQueueLength.get()).values.find((v) => v.labels.zone === zone)?.value;
}

function viewQueue(w: World, zone: string): number | undefined {
  return w.ctl.view().zones.find((z) => z.zone === zone)?.queueLength;
}

/**
 * Runs `ms` in 500 ms steps and, after each, checks the gauge against the controller's view.
 * @returns the gauge values seen, one per step.
 */
async function runComparing(w: World, zone: string, ms: number): Promise<number[]> {
  const seen: number[] = [];
  for (let t = 0; t < ms; t += 500) {
    await w.run(500, 100);
    const g = await queueGauge(w, zone);
    assert.equal(g, viewQueue(w, zone), `gauge equals the view's queue length at +${t + 500} ms`);
    seen.push(g ?? -1);
  }
  return seen;
}

function kill(w: World, names: readonly string[]): void {
  for (const n of names) w.alive.delete(n);
}

describe('node_collector_zone_tainting_queue_length{zone}', () => {
  test('starts at 0 per zone, counts the nodes waiting for their NoExecute taint and drains at the zone rate (0.1 node/s)', async (t) => {
    const b = zoneNodes('b', 6);
    const w = started(t, {}, (w) => {
      for (const n of [...zoneNodes('a', 3), ...b]) w.addNode(n, n.slice(0, 1));
    });
    await w.run(20_000, 500);
    assert.equal(await queueGauge(w, ZONE_A), 0);
    assert.equal(await queueGauge(w, ZONE_B), 0);
    // 3 of 6 not Ready (50% < 55%): zone b stays Normal and taints at 0.1 node/s, one node per 10 s.
    kill(w, b.slice(0, 3));
    const seen = await runComparing(w, ZONE_B, GRACE_MS + LEASE_RENEW_MS + 40_000);
    assert.ok(seen.includes(2), `a moment with two nodes waiting after the first was tainted (seen ${[...new Set(seen)].join(',')})`);
    assert.equal(seen.at(-1), 0, 'empty once every dead node is tainted');
    for (let i = 1; i < seen.length; i++) {
      // Only the three deaths add to the queue; after it first holds them it only drains.
      if ((seen[i - 1] ?? 0) >= 2) assert.ok((seen[i] ?? 0) <= (seen[i - 1] ?? 0), `no growth while draining (step ${i})`);
    }
    assert.equal(w.noExecuteAdds().length, 3);
    assert.equal(await queueGauge(w, ZONE_A), 0, 'the healthy zone stays at 0');
  });

  test('holds the queued nodes while the zone is paused (PartialDisruption), 0 when they recover; 0 when the zone disappears', async (t) => {
    const b = zoneNodes('b', 6);
    const w = started(t, {}, (w) => {
      for (const n of [...zoneNodes('a', 3), ...b]) w.addNode(n, n.slice(0, 1));
    });
    await w.run(20_000, 500);
    // 4 of 6 not Ready (67% >= 55%) in a small zone: PartialDisruption, rate 0, nothing tainted.
    kill(w, b.slice(0, 4));
    await runComparing(w, ZONE_B, GRACE_MS + LEASE_RENEW_MS + 20_000);
    assert.equal(w.zoneStates()[ZONE_B], 'PartialDisruption');
    assert.equal(w.noExecuteAdds().length, 0);
    assert.equal(await queueGauge(w, ZONE_B), 4, 'the four dead nodes wait in the paused zone');

    // Two come back: they leave the queue (zone b: 2 of 6 not Ready, Normal again; the other two get tainted).
    for (const n of b.slice(0, 2)) {
      w.alive.add(n);
      w.renew(n);
      w.postReady(n, 'True');
    }
    const seen = await runComparing(w, ZONE_B, 30_000);
    assert.equal(w.zoneStates()[ZONE_B], 'Normal');
    assert.equal(Math.max(...seen), 2, 'the recovered nodes left the queue');
    assert.equal(seen.at(-1), 0);
    assert.equal(w.noExecuteAdds().length, 2);

    // Zone b disappears with nodes still queued: paused again first, then every node deleted.
    kill(w, b.slice(2));
    await runComparing(w, ZONE_B, GRACE_MS + LEASE_RENEW_MS + 10_000);
    assert.ok((await queueGauge(w, ZONE_B) ?? 0) > 0, 'nodes are queued before the zone goes');
    for (const n of b) {
      w.nodes.delete(n);
      w.ctl.nodeDeleted(n);
    }
    await w.run(10_000, 500);
    assert.equal(w.ctl.view().zones.find((z) => z.zone === ZONE_B)?.size ?? 0, 0, 'zone b has no nodes');
    assert.equal(await queueGauge(w, ZONE_B), 0, 'zeroed with the zone');
    assert.equal((await w.metrics.zoneSize.get()).values.find((v) => v.labels.zone === ZONE_B)?.value, 0, 'as zone_size');
  });

  test('legacy mode (--enable-taint-manager=false): counts the nodes waiting in the zone eviction queue', async (t) => {
    const b = zoneNodes('b', 6);
    const w = started(t, { enableTaintManager: false }, (w) => {
      for (const n of [...zoneNodes('a', 3), ...b]) w.addNode(n, n.slice(0, 1));
      for (const n of b.slice(0, 3)) w.putPod(`pod-${n}`, n);
    });
    await w.run(20_000, 500);
    kill(w, b.slice(0, 3));
    // 1.20 queues a node for eviction once it has been not Ready for --pod-eviction-timeout (300 s).
    const seen = await runComparing(w, ZONE_B, GRACE_MS + LEASE_RENEW_MS + 300_000 + 40_000);
    assert.ok(Math.max(...seen) >= 2, `nodes waited in the eviction queue (max ${Math.max(...seen)})`);
    assert.equal(seen.at(-1), 0);
    assert.equal(w.writes.filter((x) => x.kind === 'evict').length, 3, 'each dead node evicted its pod');
  });
});
