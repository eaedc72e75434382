/**
 * Issue 18: zone states are recomputed once for a burst of Ready flips, not on every flip
 * (src/nodelifecycle/tainting.ts `readyFlipped`), and that changes no decision: every reader that
 * could act on a zone state recomputes first while flips are pending. FakeClock and the in-memory
 * world of test/support/nodelifecycle-world.ts; the work is counted (calls of the node cache's
 * `list()`, one per recompute or monitor pass), never timed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GRACE_MS, started, zoneNodes, type World } from '../support/nodelifecycle-world.js';

/** Counts the node cache's `list()` calls (each recompute of zone states visits every node once per call). */
function countNodeLists(w: World): { calls: number } {
  const counter = { calls: 0 };
  const values = w.nodes.values.bind(w.nodes);
  w.nodes.values = () => {
    counter.calls++;
    return values();
  };
  return counter;
}

describe('issue 18: a burst of Ready flips recomputes zone states once, deciding as a recompute per flip would', () => {
  test('7 of 10 nodes of a zone report Ready=False in one burst: the zone pauses (PartialDisruption, rate 0) and no NoExecute taint is written', async (t) => {
    // Before the burst the zone is Normal with a full bucket: a tainting pass that read the zone
    // state as it was before the flips would taint the first queued node at once.
    const a = zoneNodes('a', 10);
    const w = started(t, { nodeEvictionRate: 2 }, (w) => {
      for (const n of a) w.addNode(n, 'a');
      for (const n of zoneNodes('b', 10)) w.addNode(n, 'b');
    });
    await w.run(20_000, 500);
    assert.equal(Object.values(w.zoneStates()).join(), 'Normal,Normal');
    // The kubelets keep renewing their Leases, so the stricter count of difference 3 sees what upstream sees.
    for (const n of a.slice(0, 7)) w.postReady(n, 'False');
    await w.settle(0);
    // Queued in the same step (deliberate difference 2), but held by the zone's state.
    const queued = w.ctl.view().nodes.filter((n) => n.queued).map((n) => n.name);
    assert.deepEqual(queued.sort(), a.slice(0, 7).sort());
    await w.run(2 * GRACE_MS, 500);
    assert.equal(w.zoneStates()['r:\x00:a'], 'PartialDisruption');
    assert.deepEqual(w.noExecuteAdds(), []);
  });

  test('a small zone dying in one burst passes through PartialDisruption (rate 0): its first NoExecute taint waits a full token, as with a recompute per flip', async (t) => {
    // 20 nodes at 0.1 nodes/s. Recomputing on each flip, the zone goes Normal -> PartialDisruption
    // (rate 0: the bucket is replaced by "never") -> FullDisruption (rate 0.1, an empty bucket), so
    // the first taint comes 10 s after the flips. Recomputing once must not keep the Normal bucket's token.
    const a = zoneNodes('a', 20);
    const w = started(t, {}, (w) => {
      for (const n of a) w.addNode(n, 'a');
      for (const z of ['b', 'c']) for (const n of zoneNodes(z, 20)) w.addNode(n, z);
    });
    await w.run(20_000, 500);
    for (const n of a) w.alive.delete(n);
    await w.run(GRACE_MS + 30_000, 100);
    const unknownAt = Math.min(...w.writes.filter((x) => x.kind === 'status' && x.detail === 'Unknown').map((x) => x.atMs));
    const taints = w.noExecuteAdds();
    assert.ok(taints.length >= 2, `expected taints, got ${taints.length}`);
    assert.ok(taints[0]!.atMs >= unknownAt + 10_000, `first taint ${taints[0]!.atMs - unknownAt} ms after Unknown, expected >= 10000`);
  });

  test('the flip that leaves no Ready node starts the all-zones stop in the same step, though no reader asked', async (t) => {
    // At 0.001 nodes/s every bucket is empty after the first taint, so no limiter asks for the zone
    // state; without pods nothing marks pods either. The stop must still start at the flip.
    const w = started(t, { nodeEvictionRate: 0.001 }, (w) => {
      for (const z of ['a', 'b']) for (const n of zoneNodes(z, 3)) w.addNode(n, z);
    });
    await w.run(20_000, 500);
    for (const n of ['a-n0', 'a-n1', 'a-n2', 'b-n0', 'b-n1']) w.postReady(n, 'False');
    await w.run(5_000, 100);
    assert.equal(w.noExecuteAdds().length, 2); // one per zone, then no token for 1,000 s
    const flipAt = w.clock.now();
    w.postReady('b-n2', 'False');
    await w.settle(0);
    const stop = w.events.find((e) => e.reason === 'AllZonesDisrupted');
    assert.equal(stop?.atMs, flipAt);
  });

  test('a node Ready again during the all-zones stop ends it in the same step: every node gets its fresh grace period from then', async (t) => {
    const w = started(t, {}, (w) => {
      for (const z of ['a', 'b']) for (const n of zoneNodes(z, 5)) w.addNode(n, z);
    });
    await w.run(20_000, 500);
    w.alive.clear();
    await w.run(GRACE_MS + 10_000, 500);
    assert.ok(w.events.some((e) => e.reason === 'AllZonesDisrupted'));
    await w.run(3_300, 100);
    const backAt = w.clock.now();
    w.alive.add('a-n0');
    w.renew('a-n0');
    w.postReady('a-n0', 'True');
    await w.settle(0);
    const recovered = w.events.find((e) => e.reason === 'AllZonesRecovered');
    assert.equal(recovered?.atMs, backAt);
    assert.deepEqual(new Set(w.ctl.view().nodes.map((x) => x.probeTimestamp)), new Set([backAt]));
  });

  test('counting: n nodes flipping Ready=False in one burst cost O(n) node visits, not O(n²)', async (t) => {
    const n = 200;
    const zones = ['a', 'b', 'c', 'd'];
    const w = started(t, {}, (w) => {
      for (const z of zones) for (const name of zoneNodes(z, n / zones.length)) w.addNode(name, z);
    });
    await w.run(20_000, 500);
    const lists = countNodeLists(w);
    for (const z of zones) for (const name of zoneNodes(z, n / zones.length)) w.postReady(name, 'False');
    await w.settle(0);
    // Recomputing on every flip listed the nodes n times (n² = 40,000 visits).
    assert.equal(w.ctl.view().nodes.filter((x) => x.ready === 'False').length, n);
    assert.ok(lists.calls <= 3, `node list() called ${lists.calls} times for ${n} flips (${lists.calls * n} node visits)`);
  });

  test('counting: every Lease stops at once, n nodes go Unknown through their status writes: node visits stay O(n) per monitor period', async (t) => {
    const n = 200;
    const zones = ['a', 'b', 'c', 'd'];
    const w = started(t, {}, (w) => {
      for (const z of zones) for (const name of zoneNodes(z, n / zones.length)) w.addNode(name, z);
      for (const z of zones) for (const name of zoneNodes(z, n / zones.length)) w.putPod(`${name}-p`, name);
    });
    await w.run(20_000, 500);
    w.alive.clear();
    await w.run(GRACE_MS - 2_000, 500);
    const lists = countNodeLists(w);
    await w.run(5_000, 100); // the grace period ends for every node in here: n flips to Unknown
    assert.equal(w.ctl.view().nodes.filter((x) => x.ready === 'Unknown').length, n);
    assert.equal(w.ctl.view().allZonesDisrupted, true);
    assert.deepEqual(w.noExecuteAdds(), []);
    // One list() per monitor pass (5 s) and per recompute: a handful, where a recompute per flip made n.
    assert.ok(lists.calls <= 10, `node list() called ${lists.calls} times for ${n} flips`);
  });
});
