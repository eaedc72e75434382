/**
 * NTP steps of the wall clock never make the node lifecycle, force-detach or pod GC controllers act
 * sooner than upstream. Each deadline below is a duration measured from something the controller
 * observed: upstream compares two `time.Now()` readings (`tryUpdateNodeHealth`:
 * `nc.now().After(probeTimestamp.Add(gracePeriod))`; the attach-detach reconciler's
 * `time.Since(detachRequestedTime)`) or arms a delay (`gcOrphaned`: `nodeQueue.AddAfter(nodeName,
 * quarantineTime)`), all on Go's monotonic clock. Ours read src/util/clock.ts `steadyClock`, which a
 * forward step cannot move ahead. Each test steps the wall clock forward by 900 ms (more than NTP's
 * step bound) between the observation and the deadline, and would fail if the action came that
 * much sooner. FakeClock `step` moves the wall clock only; the timers run on the monotonic clock.
 * The taint eviction controller's deadlines are in tainteviction-clock-steps.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, steadyClock } from '../../src/util/clock.js';
import { GRACE_MS, started } from '../support/nodelifecycle-world.js';
import { DetachHarness, node, pod, PodGCHarness, settle, TIMEOUT } from '../support/outofservice-world.js';

const STEP_MS = 900;

describe('steadyClock', () => {
  test('never runs ahead of elapsed time: a +900 ms step is not seen, a −900 ms step is followed', () => {
    const fake = new FakeClock(1_000_000);
    const steady = steadyClock(fake);
    assert.equal(steady.now(), 1_000_000);
    fake.step(STEP_MS);
    assert.equal(steady.now(), 1_000_000, 'the step forward is not seen');
    fake.advance(1000);
    assert.equal(steady.now(), 1_001_000, 'elapsed time is');
    fake.step(-2 * STEP_MS);
    assert.equal(steady.now(), 1_001_000 - STEP_MS, 'a step back is followed (it only delays)');
    fake.advance(1000);
    assert.equal(steady.now(), fake.now(), 'back on the wall clock once it is no longer ahead');
  });
});

describe('deadlines measured from an observation follow elapsed time, not wall-clock steps', () => {
  test('node lifecycle: a node whose last heartbeat was seen at +20.5 s is not marked Unknown before +70.5 s of elapsed time, with a +900 ms step at +30 s', async (t) => {
    const w = started(t, {}, (w) => {
      w.addNode('a-n0', 'a');
      w.addNode('a-n1', 'a');
    });
    await w.run(20_500, 500);
    w.renew('a-n0'); // the last heartbeat: between two monitor passes, so a pass falls inside the step
    w.alive.delete('a-n0');
    const lastProbeMono = w.clock.monotonic();
    await w.run(9_500, 500);
    w.clock.step(STEP_MS);
    await w.run(2 * GRACE_MS, 100);
    const unknown = w.writes.find((x) => x.kind === 'status' && x.target === 'a-n0');
    assert.ok(unknown, 'marked Unknown in the end');
    const atMono = unknown.atMs - STEP_MS;
    assert.ok(atMono > lastProbeMono + GRACE_MS, `marked Unknown ${lastProbeMono + GRACE_MS - atMono} ms before the grace period had elapsed`);
  });

  test('force detach: a volume released at +1 s on a NotReady node is not detached before the timeout (6 min) has elapsed, with a +900 ms step at +60 s', async () => {
    const h = new DetachHarness({ timeoutMs: TIMEOUT });
    h.setup('False');
    h.fd.start();
    await settle(h.clock, 1000);
    const p = h.pods.get('default/p');
    assert.ok(p);
    h.deletePod(p);
    const releasedMono = h.clock.monotonic();
    await settle(h.clock, 59_000);
    h.clock.step(STEP_MS);
    await settle(h.clock, TIMEOUT - 59_000 - 500);
    h.setNode(node('w', 'False')); // an informer update makes it decide again, half a second before the timeout
    await settle(h.clock, 400);
    assert.deepEqual(h.api.deleted, [], `not detached ${releasedMono + TIMEOUT - h.clock.monotonic()} ms before the timeout elapsed`);
    await settle(h.clock, 200);
    assert.deepEqual(h.api.deleted, ['va-1'], 'detached once it elapsed');
  });

  test('pod GC: an orphan is not force-deleted before the quarantine (40.5 s) has elapsed since its node was first missed, with a +900 ms step', async () => {
    // 40.5 s: the sweep (every 20 s from the first miss) at +40 s falls inside the step's window.
    const h = new PodGCHarness({ quarantineMs: 40_500 });
    h.addPod(pod('orphan', 'gone-node'));
    h.gc.start();
    const missingSince = (): number | undefined => h.gc.view().missingNodes.find((m) => m.node === 'gone-node')?.missingSince;
    for (let i = 0; i < 300 && missingSince() === undefined; i++) await settle(h.clock, 100);
    const since = missingSince(); // no step yet: the wall and monotonic readings agree
    assert.ok(since !== undefined, 'the node is missed');
    await settle(h.clock, 10_000);
    h.clock.step(STEP_MS);
    for (let i = 0; i < 1000 && h.deletedNames().length === 0; i++) await settle(h.clock, 100);
    assert.deepEqual(h.deletedNames(), ['orphan']);
    const early = since + 40_500 - h.clock.monotonic();
    assert.ok(early <= 0, `force-deleted ${early} ms before the quarantine elapsed`);
  });
});
