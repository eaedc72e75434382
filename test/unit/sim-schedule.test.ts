import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import { HeartbeatScheduler, SampleWindow, percentile, spreadStart, type HeartbeatKind } from '@node-lifecycle-controller/sim/schedule';

interface Fired {
  name: string;
  kind: HeartbeatKind;
  scheduledAt: number;
  firedAt: number;
}

function recorder(clock: FakeClock) {
  const fired: Fired[] = [];
  const scheduler = new HeartbeatScheduler(clock, (name, kind, scheduledAt) => fired.push({ name, kind, scheduledAt, firedAt: clock.now() }));
  return { fired, scheduler };
}

describe('HeartbeatScheduler', () => {
  test('fires each job at a fixed rate from its first due time', () => {
    const clock = new FakeClock(0);
    const { fired, scheduler } = recorder(clock);
    scheduler.schedule('n1', 'lease', 250, 1000);
    clock.advance(3500);
    assert.deepEqual(
      fired.map((f) => f.firedAt),
      [250, 1250, 2250, 3250],
    );
    assert.ok(fired.every((f) => f.firedAt === f.scheduledAt));
  });

  test('keeps jobs of many nodes in time order with one pending timer', () => {
    const clock = new FakeClock(0);
    const { fired, scheduler } = recorder(clock);
    const n = 500;
    for (let i = 0; i < n; i++) scheduler.schedule(`n${i}`, 'lease', spreadStart(0, i, n, 10_000), 10_000);
    assert.equal(clock.pendingTimers, 1);
    clock.advance(9_999);
    assert.equal(fired.length, n);
    for (let i = 1; i < fired.length; i++) assert.ok((fired[i] as Fired).firedAt >= (fired[i - 1] as Fired).firedAt);
    assert.equal(clock.pendingTimers, 1);
  });

  test('cancel stops a job; schedule restarts it with a new phase', () => {
    const clock = new FakeClock(0);
    const { fired, scheduler } = recorder(clock);
    scheduler.schedule('a', 'lease', 100, 1000);
    scheduler.schedule('b', 'lease', 100, 1000);
    clock.advance(200);
    scheduler.cancel('a', 'lease');
    assert.equal(scheduler.isScheduled('a', 'lease'), false);
    clock.advance(2000);
    assert.deepEqual(
      fired.filter((f) => f.name === 'a').map((f) => f.firedAt),
      [100],
    );
    assert.equal(fired.filter((f) => f.name === 'b').length, 3);
    scheduler.schedule('a', 'lease', clock.now() + 50, 1000);
    clock.advance(100);
    assert.deepEqual(
      fired.filter((f) => f.name === 'a').map((f) => f.firedAt),
      [100, 2250],
    );
  });

  test('lease and status jobs of one node are independent', () => {
    const clock = new FakeClock(0);
    const { fired, scheduler } = recorder(clock);
    scheduler.schedule('n', 'lease', 0, 1000);
    scheduler.schedule('n', 'status', 0, 5000);
    scheduler.cancel('n', 'lease');
    clock.advance(10_000);
    assert.deepEqual(
      fired.map((f) => f.kind),
      ['status', 'status', 'status'],
    );
    assert.equal(scheduler.size, 1);
  });

  test('after a stall it reports lag once and skips missed periods instead of bursting', () => {
    const clock = new FakeClock(0);
    const { fired, scheduler } = recorder(clock);
    scheduler.schedule('n', 'lease', 1000, 1000);
    // Jump time without firing timers, as a blocked event loop would.
    clock.set(4500);
    clock.advance(0);
    assert.equal(fired.length, 1);
    assert.equal((fired[0] as Fired).firedAt - (fired[0] as Fired).scheduledAt, 3500);
    assert.equal(scheduler.missed, 3);
    clock.advance(500);
    assert.deepEqual(
      fired.map((f) => f.scheduledAt),
      [1000, 5000],
    );
  });

  test('a throwing handler does not stop other jobs', () => {
    const clock = new FakeClock(0);
    const seen: string[] = [];
    const scheduler = new HeartbeatScheduler(clock, (name) => {
      seen.push(name);
      if (name === 'bad') throw new Error('boom');
    });
    scheduler.schedule('bad', 'lease', 0, 1000);
    scheduler.schedule('good', 'lease', 0, 1000);
    clock.advance(1000);
    assert.equal(seen.filter((s) => s === 'good').length, 2);
  });

  test('stop cancels everything and ignores later schedules', () => {
    const clock = new FakeClock(0);
    const { fired, scheduler } = recorder(clock);
    scheduler.schedule('n', 'lease', 10, 100);
    scheduler.stop();
    scheduler.schedule('m', 'lease', 10, 100);
    clock.advance(1000);
    assert.equal(fired.length, 0);
    assert.equal(clock.pendingTimers, 0);
  });

  test('rejects a non-positive interval', () => {
    const { scheduler } = recorder(new FakeClock(0));
    assert.throws(() => scheduler.schedule('n', 'lease', 0, 0), RangeError);
    assert.throws(() => scheduler.schedule('n', 'lease', 0, Number.NaN), RangeError);
  });

  test('property: every live job fires floor((T - first) / interval) + 1 times within T', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ first: fc.integer({ min: 0, max: 5000 }), interval: fc.integer({ min: 1, max: 3000 }) }), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.integer({ min: 5000, max: 20_000 }),
        (jobs, horizon) => {
          const clock = new FakeClock(0);
          const { fired, scheduler } = recorder(clock);
          jobs.forEach((j, i) => scheduler.schedule(`n${i}`, 'lease', j.first, j.interval));
          clock.advance(horizon);
          jobs.forEach((j, i) => {
            const expected = Math.floor((horizon - j.first) / j.interval) + 1;
            assert.equal(fired.filter((f) => f.name === `n${i}`).length, expected);
          });
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('SampleWindow and percentile', () => {
  test('summarises only samples inside the window', () => {
    const w = new SampleWindow(1000);
    w.record(0, 500);
    w.record(600, 10);
    w.record(700, 20);
    w.record(800, 30);
    assert.deepEqual(w.summary(900), { p50: 20, p99: 500, max: 500, samples: 4 });
    assert.deepEqual(w.summary(1500), { p50: 20, p99: 30, max: 30, samples: 3 });
    assert.deepEqual(w.summary(5000), { p50: 0, p99: 0, max: 0, samples: 0 });
  });

  test('caps retained samples, dropping the oldest', () => {
    const w = new SampleWindow(1e9, 10);
    for (let i = 0; i < 5000; i++) w.record(i, i);
    const s = w.summary(5000);
    assert.equal(s.samples, 10);
    assert.equal(s.max, 4999);
  });

  test('property: nearest-rank percentile is an element with at least p% of values at or below it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 200 }), fc.integer({ min: 1, max: 100 }), (values, p) => {
        const sorted = [...values].sort((a, b) => a - b);
        const v = percentile(sorted, p);
        assert.ok(sorted.includes(v));
        assert.ok(sorted.filter((x) => x <= v).length >= (p / 100) * sorted.length);
        assert.ok(sorted.filter((x) => x < v).length < (p / 100) * sorted.length);
      }),
    );
  });

  test('spreadStart spaces N first runs evenly inside one interval', () => {
    const starts = Array.from({ length: 4 }, (_, i) => spreadStart(1000, i, 4, 10_000));
    assert.deepEqual(starts, [1000, 3500, 6000, 8500]);
  });
});
