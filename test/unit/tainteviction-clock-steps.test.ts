/**
 * NTP steps of the wall clock never make the taint eviction controller delete sooner than
 * upstream. Upstream arms `time.AfterFunc(fireAt.Sub(now))` (timed_workers.go `CreateWorker`): a
 * monotonic duration from the moment it handled the pod, which a later wall-clock step does not
 * move. Ours keeps deadlines counted from a local observation (the schedule, a toleration edit, a
 * blind interval's end) on the monotonic clock (src/util/clock.ts `Clock.monotonic`), and waits for
 * the wall clock too, so a step either way can only delay. Each test steps the wall clock forward
 * by 900 ms (more than NTP's step bound) between first sight and the deadline and would fail if
 * the deletion came that much sooner. A second pod ("waker") whose deadline falls after the step
 * makes the deadline heap re-arm its one timer after the step, which is where a wall-clock
 * deadline turned into an early timer. FakeClock `step` moves the wall clock only; timers and
 * `settle` run on the monotonic clock. Times are milliseconds after START on the monotonic clock.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Toleration } from '../../src/kube/objects.js';
import { started, taint, tol, untimedTaint } from '../support/tainteviction-world.js';

const STEP_MS = 900;
const forever = (i: number): Toleration => tol(i, -1);

describe('taint eviction deadlines follow elapsed time, not wall-clock steps', () => {
  test('a scheduled deletion (300 s toleration) with the wall clock stepped +900 ms at +100 s runs at +300 s, not +299.1 s', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1', [tol(1, 300)]);
    w.putPod('waker', 'node1', [tol(1, 200)]);
    await w.settle(100_000);
    w.clock.step(STEP_MS);
    await w.settle(199_950);
    assert.deepEqual(w.deletedPods(), ['default/waker'], 'pod1 not deleted 50 ms before 300 s have elapsed, though the wall clock says +300.85 s');
    await w.settle(50);
    assert.deepEqual(w.deletedPods(), ['default/waker', 'default/pod1'], 'deleted once 300 s have elapsed');
  });

  test('an untimed taint first seen at +0, stepped +900 ms at +10 s: deleted 60 s after first sight, not sooner', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [untimedTaint(1)]);
    w.putPod('pod1', 'node1', [tol(1, 60)]);
    w.putPod('waker', 'node1', [tol(1, 30)]);
    await w.settle(10_000);
    w.clock.step(STEP_MS);
    await w.settle(49_950);
    assert.deepEqual(w.deletedPods(), ['default/waker']);
    await w.settle(50);
    assert.deepEqual(w.deletedPods(), ['default/waker', 'default/pod1']);
  });

  test('a toleration edited at +3600 s to 300 s, stepped +900 ms at +3700 s: deleted at the edit + 300 s of elapsed time', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1', [forever(1)]);
    w.putPod('waker', 'node1', [forever(1)]);
    await w.settle(3_600_000);
    w.putPod('pod1', 'node1', [tol(1, 300)]);
    w.putPod('waker', 'node1', [tol(1, 200)]);
    await w.settle(100_000);
    w.clock.step(STEP_MS);
    await w.settle(199_950);
    assert.deepEqual(w.deletedPods(), ['default/waker']);
    await w.settle(50);
    assert.deepEqual(w.deletedPods(), ['default/waker', 'default/pod1']);
  });

  test('the sight hold (sight back at +20 s, hold 50 s), stepped +900 ms at +30 s, ends at +70 s of elapsed time', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1', [tol(1, 15)]);
    await w.settle(5_000);
    w.setSight(false);
    await w.settle(15_000);
    w.setSight(true);
    await w.settle(5_000);
    w.putPod('waker', 'node1', [tol(1, 40)]); // due +65 s, after sight returned: not held
    await w.settle(5_000);
    w.clock.step(STEP_MS);
    await w.settle(39_950);
    assert.deepEqual(w.deletedPods(), ['default/waker'], 'pod1 held until a full grace period (50 s) of elapsed time after sight returned');
    await w.settle(50);
    assert.deepEqual(w.deletedPods(), ['default/waker', 'default/pod1']);
  });

  test('a backward step (−900 ms) delays by at most the step: the wall clock must reach the deadline too', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1', [tol(1, 300)]);
    w.putPod('waker', 'node1', [tol(1, 200)]);
    await w.settle(100_000);
    w.clock.step(-STEP_MS);
    await w.settle(200_000);
    assert.deepEqual(w.deletedPods(), ['default/waker'], 'the wall clock is 900 ms short of timeAdded + 300 s');
    await w.settle(STEP_MS);
    assert.deepEqual(w.deletedPods(), ['default/waker', 'default/pod1']);
  });
});
