/**
 * Issue 53 item 4 for the node lifecycle controller: a retry re-decides; it never replays. A write
 * that waits for its turn (the throttle, the node's lock, a conflict's GET) is decided again, from
 * the current view, right before it is sent (src/kube/throttle.ts `WriteRecheck`): a NoExecute
 * taint, an Unknown mark and a pod's NotReady mark whose node renewed its Lease and came back while
 * the write waited are not sent. Driven on the real controller shell over the in-memory world
 * (test/support/nodelifecycle-world.ts), whose recording writer holds a write mid-flight as a wait
 * for a token would, and runs the recheck after it as the real throttle does.
 *
 * Each test fails on the code before the send-time recheck: the held write went out as decided.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { TAINT_NODE_UNREACHABLE } from '../../src/kube/taints.js';
import { GRACE_MS, started, type World } from '../support/nodelifecycle-world.js';

const UNREACHABLE = `+${TAINT_NODE_UNREACHABLE}:NoExecute`;

/** A gate that holds the first write it is asked about until {@link release}. */
function holdOnce(): { gate: () => Promise<void> | undefined; held: () => boolean; release: () => void } {
  let held = false;
  let release: () => void = () => undefined;
  const promise = new Promise<void>((r) => (release = r));
  return {
    gate: () => {
      if (held) return undefined;
      held = true;
      return promise;
    },
    held: () => held,
    release: () => release(),
  };
}

/** Ready nodes `names` in zone a, their kubelets renewing, after 20 s. */
async function zoneA(t: TestContext, names: readonly string[], setup?: (w: World) => void): Promise<World> {
  const w = started(t, {}, (w) => {
    for (const n of names) w.addNode(n, 'a');
    setup?.(w);
  });
  await w.run(20_000, 500);
  return w;
}

/** a-n0's kubelet stops; runs until `hold` holds a write, and asserts it does (`what`). */
async function killUntilHeld(w: World, hold: { held: () => boolean }, what: string): Promise<void> {
  w.alive.delete('a-n0');
  for (let i = 0; i < 400 && !hold.held(); i++) await w.run(500, 500);
  assert.ok(hold.held(), what);
}

/** a-n0's kubelet comes back (a renewal and Ready=True) and the controller judges it Ready. */
async function comesBack(w: World): Promise<void> {
  w.alive.add('a-n0');
  w.renew('a-n0');
  w.postReady('a-n0', 'True');
  await w.run(2000, 100);
  assert.equal(w.ctl.view().nodes.find((n) => n.name === 'a-n0')?.ready, 'True', 'the controller judged a-n0 Ready again');
}

describe('the node lifecycle controller decides a queued write again when its turn comes (issue 53 item 4)', () => {
  test('a NoExecute taint held mid-flight is not sent when the node renewed its Lease and posted Ready meanwhile', async (t) => {
    const w = await zoneA(t, ['a-n0', 'a-n1', 'a-n2']);
    const hold = holdOnce();
    w.taintWriteGate = (name, asked) => (name === 'a-n0' && asked.split(' ').includes(UNREACHABLE) ? hold.gate() : undefined);
    await killUntilHeld(w, hold, 'the unreachable:NoExecute taint of a-n0 is in flight');
    // The kubelet comes back while the taint write waits for its turn.
    await comesBack(w);
    hold.release();
    await w.run(GRACE_MS / 2, 500);
    assert.deepEqual(
      w.noExecuteAdds().map((x) => x.target),
      [],
      'no NoExecute taint was added to a node that was Ready when its write came to be sent',
    );
  });

  test('an Unknown mark held mid-flight is not sent when the node renewed its Lease meanwhile', async (t) => {
    const w = await zoneA(t, ['a-n0', 'a-n1']);
    const hold = holdOnce();
    w.statusWriteGate = async (name) => {
      if (name === 'a-n0') await hold.gate();
    };
    await killUntilHeld(w, hold, 'the Unknown mark of a-n0 is in flight');

    // A renewal lands while the status write waits.
    w.alive.add('a-n0');
    w.renew('a-n0');
    hold.release();
    await w.run(5000, 100);
    const unknown = w.writes.filter((x) => x.kind === 'status' && x.target === 'a-n0' && x.detail === 'Unknown');
    assert.deepEqual(unknown, [], 'the renewed node was not marked Unknown');
    assert.equal(w.nodes.get('a-n0')?.conditions.find((c) => c.type === 'Ready')?.status, 'True');
  });

  test("a pod's NotReady mark held mid-flight is not sent once its node is Ready again", async (t) => {
    const w = await zoneA(t, ['a-n0', 'a-n1', 'a-n2'], (w) => w.putPod('p0', 'a-n0'));
    const hold = holdOnce();
    w.podWriteGate = (key) => (key === 'default/p0' ? hold.gate() : undefined);
    await killUntilHeld(w, hold, "p0's NotReady mark is in flight");
    // The kubelet is back while the mark waits for its turn, and the controller judges the node Ready.
    await comesBack(w);
    hold.release();
    await w.run(5000, 100);
    assert.equal(w.podReady('default/p0'), 'True', 'p0 was not marked NotReady after its node came back');
    assert.deepEqual(w.writes.filter((x) => x.kind === 'podNotReady').map((x) => x.target), []);
  });
});
