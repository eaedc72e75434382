import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, pendingRealTimers, realClock } from '../../src/util/clock.js';

test('FakeClock fires due timers in time order and honours cancel', () => {
  const clock = new FakeClock(1000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push('b@300'), 300);
  clock.setTimeout(() => fired.push('a@100'), 100);
  const c = clock.setTimeout(() => fired.push('cancelled'), 200);
  c.cancel();
  clock.advance(250);
  assert.deepEqual(fired, ['a@100']);
  assert.equal(clock.now(), 1250);
  clock.advance(100);
  assert.deepEqual(fired, ['a@100', 'b@300']);
  assert.equal(clock.pendingTimers, 0);
});

test('FakeClock runs timers scheduled by callbacks inside the same advance window', () => {
  const clock = new FakeClock(0);
  const at: number[] = [];
  clock.setTimeout(() => {
    at.push(clock.now());
    clock.setTimeout(() => at.push(clock.now()), 50);
  }, 10);
  clock.advance(100);
  assert.deepEqual(at, [10, 60]);
});

test('FakeClock.sleep resolves on advanceAsync', async () => {
  const clock = new FakeClock(0);
  let done = false;
  void clock.sleep(500).then(() => (done = true));
  await clock.advanceAsync(499);
  assert.equal(done, false);
  await clock.advanceAsync(1);
  assert.equal(done, true);
});

test('FakeClock.advance rejects negative steps', () => {
  assert.throws(() => new FakeClock().advance(-1), RangeError);
});

test('realClock counts a pending timer until it fires or is cancelled, once, and sleeps until they end', async () => {
    const before = pendingRealTimers();
    const a = realClock.setTimeout(() => undefined, 10_000);
    let fired = false;
    realClock.setTimeout(() => (fired = true), 1);
    const slept = realClock.sleep(5);
    assert.equal(pendingRealTimers(), before + 3);
    a.cancel();
    a.cancel();
    assert.equal(pendingRealTimers(), before + 2);
    await slept;
    await realClock.sleep(5);
    assert.equal(fired, true);
    assert.equal(pendingRealTimers(), before);
  });
