/**
 * src/kube/backoff.ts: client-go's reflector backoff manager (`wait.Backoff{800ms, ×2, jitter 1.0,
 * cap 30s}.DelayWithReset(clock, 2min)`, apimachinery `backoffManager.Step` and `delay`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReflectorBackoff } from '../../src/kube/backoff.js';
import { FakeClock } from '../../src/util/clock.js';

test('bases double from 800 ms to the 30 s cap; each wait is in [base, 2·base)', () => {
  const clock = new FakeClock();
  const low = new ReflectorBackoff({ clock, random: () => 0 });
  assert.deepEqual(Array.from({ length: 9 }, () => low.step()), [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
  const high = new ReflectorBackoff({ clock, random: () => 0.999 });
  const waits = Array.from({ length: 8 }, () => high.step());
  for (const [i, w] of waits.entries()) assert.ok(w < 2 * [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000][i]!, `step ${i + 1}: ${w} ms`);
  assert.equal(waits[7], 59_970);
});

test('the bases start again only more than 2 min after the last reset, counted from the manager\'s creation, not from the last step', () => {
  const clock = new FakeClock();
  const b = new ReflectorBackoff({ clock, random: () => 0 });
  assert.equal(b.step(), 800);
  clock.advance(60_000);
  assert.equal(b.step(), 1600, 'one minute later: no reset');
  clock.advance(60_000);
  assert.equal(b.step(), 3200, 'exactly 2 min after creation: not more than the interval, no reset');
  clock.advance(1);
  assert.equal(b.step(), 800, 'more than 2 min after the last reset');
  assert.equal(b.steps, 1);
  clock.advance(119_000);
  assert.equal(b.step(), 1600, 'steps keep growing within 2 min of that reset, however long each wait was');
});
