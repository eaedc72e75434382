/**
 * Deliberate difference 28 of docs/node-lifecycle.md (issue 57): after the controller lost sight of
 * the cluster (an API server outage, a lost watch), a not-Ready verdict it reached before is not
 * acted on until the node is judged again from what it sees since sight returned: no NoExecute taint
 * from the zone queue, no pod marked NotReady. The first and third tests fail without the fix (the
 * verdict reached before the outage is acted on at once), and check the action still comes once the
 * node is judged again (it can only delay); the second pins that a post-outage report is acted on at
 * once; the last pins that the judgement board (the taint eviction controller's start hold) already
 * keeps nothing from before the outage.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { NodeJudgementBoard } from '../../src/kube/judgements.js';
import { getCondition } from '../../src/kube/objects.js';
import { GRACE_MS, START, started, zoneNodes, type World } from '../support/nodelifecycle-world.js';

const SECOND_TAINT = /\+node\.kubernetes\.io\/unreachable:NoExecute/;

/**
 * Zones a (4 nodes) and b (2); a-n0 and a-n1 die together: the zone stays Normal (2 of 4), and its
 * token bucket (0.1/s, burst 1) taints the first at once and queues the second 10 s later.
 * @returns the world a grace period and 8 s after they died.
 */
async function twoOfFourDead(t: TestContext): Promise<World> {
  const w = started(t, {}, (w) => {
    for (const n of zoneNodes('a', 4)) w.addNode(n, 'a');
    for (const n of zoneNodes('b', 2)) w.addNode(n, 'b');
  });
  await w.run(5000);
  w.alive.delete('a-n0');
  w.alive.delete('a-n1');
  await w.run(GRACE_MS + 8000);
  return w;
}

/**
 * Zones a (3 nodes) and b (2) with a judgement board; a-n0 dies and is confirmed not Ready
 * (silent for more than a grace period). @returns the world and its board.
 */
async function confirmedDead(t: TestContext): Promise<{ w: World; board: NodeJudgementBoard }> {
  const board = new NodeJudgementBoard();
  const w = started(t, {}, (w) => {
    w.judgements = board;
    for (const n of zoneNodes('a', 3)) w.addNode(n, 'a');
    for (const n of zoneNodes('b', 2)) w.addNode(n, 'b');
  });
  await w.run(5000);
  w.alive.delete('a-n0');
  await w.run(GRACE_MS + 8000);
  assert.equal(board.notConfirmedBecause('a-n0'), undefined, 'confirmed not Ready before the outage');
  return { w, board };
}

describe('difference 28: nothing is done on a verdict reached before the controller lost sight', () => {
  test('a node Unknown and queued for its NoExecute taint before an outage is tainted only once silent for a whole grace period after sight returned', async (t) => {
    const w = await twoOfFourDead(t);
    const tainted = (): string[] => w.noExecuteAdds().map((x) => x.target);
    assert.equal(tainted().length, 1, `one NoExecute taint before the outage: ${tainted().join(', ')}`);
    const waiting = tainted()[0] === 'a-n0' ? 'a-n1' : 'a-n0';
    assert.equal(getCondition(w.nodes.get(waiting)?.conditions ?? [], 'Ready')?.status, 'Unknown');
    // The outage: the caches are blind for 20 s, past the second node's token.
    w.seeing = false;
    await w.run(20_000);
    w.seeing = true;
    const back = w.clock.now();
    // Without the fix the queued taint goes at the first pass after sight returns.
    await w.run(GRACE_MS - 2000);
    assert.deepEqual(
      w.noExecuteAdds().filter((x) => x.target === waiting),
      [],
      `${waiting} was tainted ${((w.noExecuteAdds().find((x) => x.target === waiting)?.atMs ?? 0) - back) / 1000} s after sight returned, on its verdict from before the outage`,
    );
    // Silent for a whole grace period since sight returned: judged again, and tainted.
    await w.run(12_000);
    const late = w.noExecuteAdds().find((x) => x.target === waiting);
    assert.ok(late && SECOND_TAINT.test(late.detail), `${waiting} tainted once judged again: ${JSON.stringify(w.noExecuteAdds())}`);
    assert.ok(late.atMs >= back + GRACE_MS, `not before a grace period after sight returned (${(late.atMs - back) / 1000} s)`);
  });

  test("a node whose kubelet reports NotReady is judged again at once from what the controller sees after the outage (no delay)", async (t) => {
    const w = await twoOfFourDead(t);
    const waiting = w.noExecuteAdds()[0]?.target === 'a-n0' ? 'a-n1' : 'a-n0';
    w.seeing = false;
    await w.run(20_000);
    // The kubelet came back during the outage and reports NotReady: a post-outage report.
    w.alive.add(waiting);
    w.renew(waiting);
    w.postReady(waiting, 'False');
    w.seeing = true;
    const back = w.clock.now();
    await w.run(15_000);
    const taint = w.writes.find((x) => x.kind === 'taint' && x.target === waiting && /\+node\.kubernetes\.io\/not-ready:NoExecute/.test(x.detail));
    assert.ok(taint, `not-ready NoExecute taint of ${waiting} after its post-outage report: ${JSON.stringify(w.writes.filter((x) => x.kind === 'taint'))}`);
    assert.ok(taint.atMs - back < 12_000, `within a monitor period or two and the bucket: ${(taint.atMs - back) / 1000} s`);
  });

  test('a pod added to a node Unknown since before an outage is marked NotReady only once the node is judged again', async (t) => {
    const w = started(t, {}, (w) => {
      for (const n of zoneNodes('a', 3)) w.addNode(n, 'a');
      for (const n of zoneNodes('b', 2)) w.addNode(n, 'b');
    });
    await w.run(5000);
    w.alive.delete('a-n0');
    await w.run(GRACE_MS + 8000);
    assert.equal(getCondition(w.nodes.get('a-n0')?.conditions ?? [], 'Ready')?.status, 'Unknown');
    w.seeing = false;
    await w.run(20_000);
    w.seeing = true;
    const back = w.clock.now();
    await w.run(6000);
    const p = w.putPod('late', 'a-n0');
    await w.run(GRACE_MS - 10_000);
    assert.equal(w.podReady(`default/${p.name}`), 'True', 'not marked on the verdict from before the outage');
    await w.run(15_000);
    assert.equal(w.podReady(`default/${p.name}`), 'False', 'marked once the node is judged again');
    const mark = w.writes.find((x) => x.kind === 'podNotReady' && x.target === `default/${p.name}`);
    assert.ok(mark && mark.atMs >= back + GRACE_MS, `marked ${((mark?.atMs ?? 0) - back) / 1000} s after sight returned`);
  });

  // Fuzz seed 20270301 run 823 (issue 57, the wire vocabulary): the board kept the pre-outage
  // confirmation from sight's return until the node's next observation (its next pass), and a taint
  // eviction deadline falling in between deleted on it. Both fail without monitor.ts `sightChanged`.
  test('the judgement board forgets a confirmation from before the outage the moment sight returns, before the node is observed again', async (t) => {
    const { w, board } = await confirmedDead(t);
    w.seeing = false;
    await w.run(20_000);
    w.seeing = true;
    // No clock has run: no pass, no Lease event has observed a-n0 since sight returned.
    assert.notEqual(board.notConfirmedBecause('a-n0'), undefined, 'a confirmation from before the outage still stands after sight returned');
    await w.run(GRACE_MS + 10_000);
    assert.equal(board.notConfirmedBecause('a-n0'), undefined, 'confirmed again from what it saw since (only a delay)');
  });

  test('a blind stretch no monitor pass sampled (3 s, between two passes) still unconfirms the node, until silent a fresh grace period', async (t) => {
    const { w, board } = await confirmedDead(t);
    // Just after a pass (the period is 5 s from the start): blind for 3 s, back 2 s before the next.
    await w.run(5000 - ((w.clock.now() - START) % 5000) + 1);
    w.seeing = false;
    await w.run(3000);
    w.seeing = true;
    assert.notEqual(board.notConfirmedBecause('a-n0'), undefined, 'the unsampled outage left the pre-outage confirmation standing');
    // Confirmed again only after a whole grace period of silence from sight's return.
    await w.run(GRACE_MS - 1000);
    assert.notEqual(board.notConfirmedBecause('a-n0'), undefined, 'confirmed again before a fresh grace period had passed');
    await w.run(12_000);
    assert.equal(board.notConfirmedBecause('a-n0'), undefined, 'confirmed again (only a delay)');
  });

  test('a watch reconnect shorter than 2 s is no blind stretch: the confirmation stands (no delay for every reconnect)', async (t) => {
    const { w, board } = await confirmedDead(t);
    await w.run(5000 - ((w.clock.now() - START) % 5000) + 1);
    w.seeing = false;
    await w.run(500);
    w.seeing = true;
    assert.equal(board.notConfirmedBecause('a-n0'), undefined);
  });

  test('the judgement board keeps no confirmation from before the outage: the fresh grace period unconfirms the node until it is silent a grace period again (already so before the fix; pinned)', async (t) => {
    const { w, board } = await confirmedDead(t);
    w.seeing = false;
    await w.run(20_000);
    w.seeing = true;
    await w.run(6000);
    assert.match(board.notConfirmedBecause('a-n0') ?? '', /not yet seen the node silent/);
    await w.run(GRACE_MS + 10_000);
    assert.equal(board.notConfirmedBecause('a-n0'), undefined, 'confirmed again from what it saw since');
  });
});
