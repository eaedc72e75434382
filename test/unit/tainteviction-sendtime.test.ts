/**
 * Issue 53 item 4 for the taint eviction controller: a retry re-decides; it never replays.
 *
 * The reported run: a node tainted `unreachable:NoExecute`, its pods tolerating 15 s, the API
 * server away from the taint on; the kubelet came back during the outage. kube-controller-manager
 * 1.37.2 deleted nothing (5 of 5); ours deleted both pods in 3 of 7 runs, 34 ms after deciding to
 * hold them: a deletion decided before the node was judged Ready was still on its way.
 *
 * The tests give the controller that timeline on FakeClock with the in-memory caches
 * (test/support/tainteviction-world.ts) and the node lifecycle controller's judgement board:
 * - on the real write path (src/tainteviction/writer.ts over src/kube/throttle.ts): the DELETE is
 *   answered 503 with `Retry-After` while the API server comes back, sight is lost and regained,
 *   the node is judged Ready, and then the throttle's `Retry-After` resend comes due;
 * - on the recording writer, whose gate holds the DELETE mid-flight as a wait for a token would.
 * Both fail on the code before the send-time recheck (the DELETE went out as decided).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import type { KubeClients } from '../../src/kube/client.js';
import { NodeJudgementBoard } from '../../src/kube/judgements.js';
import { TAINT_NODE_UNREACHABLE } from '../../src/kube/taints.js';
import { ApiWriteThrottle } from '../../src/kube/throttle.js';
import { silentLogger } from '../../src/log/logger.js';
import { TaintEvictionController, type TaintEvictionWrites } from '../../src/tainteviction/controller.js';
import { TaintEvictionWriter } from '../../src/tainteviction/writer.js';
import { START, World } from '../support/tainteviction-world.js';

const GRACE_MS = 50_000;
const TOLERATION_S = 15;
const UNREACHABLE = { key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' as const, timeAdded: START };
const TOLERATE = [{ key: TAINT_NODE_UNREACHABLE, operator: 'Exists' as const, effect: 'NoExecute' as const, tolerationSeconds: TOLERATION_S }];

/**
 * A judgement board on which the node lifecycle controller has confirmed `node1` not Ready (it
 * observed it silent for more than a grace period since its start) by {@link START}.
 */
function confirmedNotReady(): NodeJudgementBoard {
  const board = new NodeJudgementBoard();
  board.attachJudge();
  board.started();
  board.observed('node1', { ready: 'Unknown', expired: true, gracePeriodMs: GRACE_MS }, START - 2 * GRACE_MS);
  board.observed('node1', { ready: 'Unknown', expired: true, gracePeriodMs: GRACE_MS }, START);
  assert.equal(board.notConfirmedBecause('node1'), undefined, 'node1 confirmed not Ready');
  return board;
}

/** The node lifecycle controller sees the kubelet's Ready status again. */
function judgedReady(board: NodeJudgementBoard, atMs: number): void {
  board.observed('node1', { ready: 'True', expired: false, gracePeriodMs: GRACE_MS }, atMs);
  assert.match(board.notConfirmedBecause('node1') ?? '', /judges the node Ready/);
}

/**
 * Moves fake time by `ms` in steps of `stepMs`, and between steps lets real time pass until the
 * throttle holds no handed-over write (bottleneck dispatches on real timers, the throttle's waits
 * on the fake clock).
 */
async function drive(w: World, throttle: ApiWriteThrottle, ms: number, stepMs = 50): Promise<void> {
  const quiet = (): boolean => throttle.stats().admitted === 0 && throttle.stats().received === 0;
  for (let t = 0; t < ms; t += stepMs) {
    for (let i = 0; i < 5 || (!quiet() && i < 200); i++) await new Promise((r) => setTimeout(r, 1));
    await w.settle(Math.min(stepMs, ms - t));
  }
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 1));
}

function controller(w: World, board: NodeJudgementBoard, writes: TaintEvictionWrites): TaintEvictionController {
  const { caches, events, clock, metrics, config } = w.buildInputs({ nodeMonitorGracePeriodMs: GRACE_MS });
  const c = new TaintEvictionController({ clock, log: silentLogger, caches, writes, events, metrics, canSeeCluster: () => w.sight, judgements: board, options: config });
  board.onChange((node) => c.judgementChanged(node));
  w.cluster.on('nodes', { update: (o, n) => c.nodeChanged(n, o) });
  w.cluster.on('pods', { add: (p) => c.podChanged(p), update: (o, p) => c.podChanged(p, o), delete: (p) => c.podDeleted(p) });
  return c;
}

describe('the taint eviction controller decides a deletion again when its turn comes (issue 53 item 4)', () => {
  test('a DELETE answered 503 with Retry-After during the outage is not resent once the node is judged Ready', async (t) => {
    const w = new World();
    w.putNode('node1', [UNREACHABLE]);
    w.putPod('pod1', 'node1', TOLERATE);
    const board = confirmedNotReady();
    const sent: string[] = [];
    let deletes = 0;
    const core = {
      patchNamespacedPodStatus: async (req: { name: string }) => {
        sent.push(`condition ${req.name} at +${w.clock.now() - START}`);
        return {};
      },
      deleteNamespacedPod: async (req: { name: string }) => {
        sent.push(`delete ${req.name} at +${w.clock.now() - START}`);
        // The API server is coming back: the first DELETE is refused with a Retry-After.
        if (deletes++ === 0) throw new ApiException(503, 'Service Unavailable', '{"reason":"ServiceUnavailable"}', { 'retry-after': '5' });
        return {};
      },
    } as unknown as KubeClients['core'];
    const throttle = new ApiWriteThrottle({ qps: 20, burst: 30, clock: w.clock });
    t.after(() => throttle.stop());
    const c = controller(w, board, new TaintEvictionWriter({ core }, throttle, w.clock));
    c.start();
    t.after(() => c.stop());

    await drive(w, throttle, TOLERATION_S * 1000 + 50);
    assert.deepEqual(sent, ['condition pod1 at +15000', 'delete pod1 at +15000'], 'the deletion was due and its DELETE refused');
    // Sight is lost while the throttle waits out the Retry-After, and regained; then the node
    // lifecycle controller sees the kubelet Ready again.
    await drive(w, throttle, 100);
    w.setSight(false);
    await drive(w, throttle, 2900);
    w.setSight(true);
    await drive(w, throttle, 500);
    judgedReady(board, w.clock.now());
    await drive(w, throttle, 10_000);
    assert.deepEqual(sent, ['condition pod1 at +15000', 'delete pod1 at +15000'], 'the Retry-After resend was decided again and not sent');
    assert.equal(throttle.stats().notCalledFor, 1, 'the resend was withheld by its recheck');
    assert.equal(c.view().length, 1, 'the pod is held, not deleted');
    assert.equal(c.view()[0]?.state, 'held');
  });

  test('a DELETE held mid-flight is not sent once the node is judged Ready; the Marking Event waits for a write that goes out', async (t) => {
    const w = new World();
    w.putNode('node1', [UNREACHABLE]);
    w.putPod('pod1', 'node1', TOLERATE);
    const board = confirmedNotReady();
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let holding = false;
    w.cluster.writer.gate = (call) => {
      if (call.method !== 'addDisruptionCondition' || holding) return undefined;
      holding = true;
      return held;
    };
    const c = controller(w, board, w.writesDouble);
    c.start();
    t.after(() => c.stop());
    await w.settle(TOLERATION_S * 1000 + 50);
    assert.ok(holding, 'the first write of the deletion is waiting for its turn');
    judgedReady(board, w.clock.now());
    await w.settle(100);
    release();
    await w.settle(5000);
    assert.deepEqual(w.writes, [], 'neither the condition nor the DELETE was sent');
    assert.deepEqual(w.messages().filter((m) => m.startsWith('Marking for deletion')), [], 'no "Marking for deletion" Event for a write that never went out');
  });
});
