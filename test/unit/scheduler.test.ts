import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock, type Clock } from '../../src/util/clock.js';
import { DeadlineScheduler, MAX_TIMER_DELAY_MS, type ScheduledEviction } from '../../src/util/scheduler.js';
import { podKey } from '../../src/kube/objects.js';

interface Fired {
  key: string;
  atMs: number;
  firedAtMs: number;
}

function setup(): { clock: FakeClock; s: DeadlineScheduler<string>; fired: Fired[] } {
  const clock = new FakeClock();
  const s = new DeadlineScheduler<string>(clock);
  const fired: Fired[] = [];
  s.onDue((e) => fired.push({ key: e.key, atMs: e.atMs, firedAtMs: clock.now() }));
  return { clock, s, fired };
}

describe('timed_workers_test.go ports', () => {
  test('TestExecute: immediate work runs on the next timer turn', () => {
    const { clock, s, fired } = setup();
    const now = clock.now();
    for (let i = 1; i <= 5; i++) s.schedule(podKey({ namespace: 'ns', name: `p${i}` }), `u${i}`, now, '');
    assert.equal(fired.length, 0, 'never synchronously inside schedule()');
    clock.advance(0);
    assert.deepEqual(
      fired.map((f) => f.key),
      [1, 2, 3, 4, 5].map((i) => `ns/p${i}`),
    );
  });

  test('TestExecuteDelayed: duplicate adds are skipped; exactly 5 run after 11s', () => {
    const { clock, s, fired } = setup();
    const at = clock.now() + 10_000;
    const added: boolean[] = [];
    for (let round = 0; round < 2; round++) for (let i = 1; i <= 5; i++) added.push(s.scheduleIfAbsent(`ns/p${i}`, `u${i}`, at, ''));
    assert.deepEqual(added, [true, true, true, true, true, false, false, false, false, false]);
    clock.advance(9_999);
    assert.equal(fired.length, 0);
    clock.advance(1_001);
    assert.equal(fired.length, 5);
    assert.ok(fired.every((f) => f.firedAtMs === at));
  });

  test('TestCancel: cancelling 2 of 5 leaves 3 to run', () => {
    const { clock, s, fired } = setup();
    for (let i = 1; i <= 5; i++) s.schedule(`ns/p${i}`, `u${i}`, clock.now() + 10_000, '');
    assert.equal(s.cancel('ns/p2'), true);
    assert.equal(s.cancel('ns/p4'), true);
    assert.equal(s.cancel('ns/p4'), false, 'second cancel finds nothing');
    clock.advance(11_000);
    assert.deepEqual(
      fired.map((f) => f.key),
      ['ns/p1', 'ns/p3', 'ns/p5'],
    );
  });

  test('TestCancelAndRead: cancel 2, re-add 1 → 4 run', () => {
    const { clock, s, fired } = setup();
    for (let i = 1; i <= 5; i++) s.schedule(`ns/p${i}`, `u${i}`, clock.now() + 10_000, '');
    s.cancel('ns/p2');
    s.cancel('ns/p4');
    assert.equal(s.scheduleIfAbsent('ns/p2', 'u2', clock.now() + 10_000, ''), true);
    clock.advance(11_000);
    assert.equal(fired.length, 4);
    assert.ok(!fired.some((f) => f.key === 'ns/p4'));
  });

  test('TestRunningWorkerCompletionDoesNotRemoveReplacement: a replacement scheduled by the callback survives', () => {
    const clock = new FakeClock();
    const s = new DeadlineScheduler<number>(clock);
    const runs: number[] = [];
    s.onDue((e) => {
      runs.push(e.payload);
      if (e.payload === 1) s.schedule(e.key, e.uid, clock.now() + 5_000, 2);
    });
    s.schedule('ns/p', 'u', clock.now() + 1_000, 1);
    clock.advance(1_000);
    assert.deepEqual(runs, [1]);
    assert.equal(s.get('ns/p')?.payload, 2);
    clock.advance(5_000);
    assert.deepEqual(runs, [1, 2]);
    assert.equal(s.size, 0);
  });
});

describe('DeadlineScheduler', () => {
  test('fires at, not before, the deadline; entry is gone when the callback runs', () => {
    const clock = new FakeClock();
    const s = new DeadlineScheduler<string>(clock);
    const seen: Array<{ stillThere: boolean; now: number }> = [];
    s.onDue((e) => seen.push({ stillThere: s.has(e.key), now: clock.now() }));
    const at = clock.now() + 1_234;
    s.schedule('ns/a', 'u', at, '');
    clock.advance(1_233);
    assert.equal(seen.length, 0);
    assert.equal(s.has('ns/a'), true);
    clock.advance(1);
    assert.deepEqual(seen, [{ stillThere: false, now: at }]);
  });

  test('fires in deadline order, ties in scheduling order; entries() uses the same order', () => {
    const { clock, s, fired } = setup();
    const t = clock.now();
    s.schedule('ns/c', 'u', t + 300, '');
    s.schedule('ns/a', 'u', t + 100, '');
    s.schedule('ns/b', 'u', t + 300, '');
    s.schedule('ns/d', 'u', t + 200, '');
    const order = ['ns/a', 'ns/d', 'ns/c', 'ns/b'];
    assert.deepEqual(
      s.entries().map((e) => e.key),
      order,
    );
    assert.equal(s.nextDeadlineMs(), t + 100);
    clock.advance(1_000);
    assert.deepEqual(
      fired.map((f) => f.key),
      order,
    );
    assert.deepEqual(
      fired.map((f) => f.firedAtMs),
      [t + 100, t + 200, t + 300, t + 300],
    );
  });

  test('rescheduling replaces the deadline, earlier or later, and the uid and payload', () => {
    const { clock, s, fired } = setup();
    const t = clock.now();
    s.schedule('ns/a', 'u1', t + 1_000, 'first');
    s.schedule('ns/a', 'u2', t + 5_000, 'second');
    assert.equal(s.size, 1);
    assert.deepEqual({ uid: s.get('ns/a')?.uid, payload: s.get('ns/a')?.payload }, { uid: 'u2', payload: 'second' });
    clock.advance(4_999);
    assert.equal(fired.length, 0, 'the old, earlier deadline is gone');
    s.schedule('ns/a', 'u2', t + 4_000, 'third');
    assert.equal(fired.length, 0, 'an already-passed deadline waits for the next timer turn');
    clock.advance(0);
    assert.deepEqual(fired, [{ key: 'ns/a', atMs: t + 4_000, firedAtMs: t + 4_999 }]);
  });

  test('scheduledAtMs records the clock at scheduling time', () => {
    const { clock, s } = setup();
    clock.advance(42);
    const e = s.schedule('ns/a', 'u', clock.now() + 10, 'x');
    assert.equal(e.scheduledAtMs, clock.now());
  });

  test('one timer for many pending entries', () => {
    const { clock, s } = setup();
    for (let i = 0; i < 1_000; i++) s.schedule(`ns/p${i}`, 'u', clock.now() + 1_000 + i, '');
    assert.equal(clock.pendingTimers, 1);
  });

  test('deadlines beyond Node timer range are reached in capped steps', () => {
    const fake = new FakeClock();
    const delays: number[] = [];
    const spy: Clock = {
      now: () => fake.now(),
      monotonic: () => fake.monotonic(),
      setTimeout: (fn, delayMs) => {
        delays.push(delayMs);
        return fake.setTimeout(fn, delayMs);
      },
      sleep: (ms) => fake.sleep(ms),
    };
    const s = new DeadlineScheduler<string>(spy);
    const fired: number[] = [];
    s.onDue(() => fired.push(fake.now()));
    const at = fake.now() + 40 * 24 * 3600_000; // 40 days, ~1.6 × the 2^31−1 ms limit
    s.schedule('ns/a', 'u', at, '');
    fake.advance(MAX_TIMER_DELAY_MS);
    assert.deepEqual(fired, []);
    fake.advance(at - fake.now());
    assert.deepEqual(fired, [at]);
    assert.ok(delays.every((d) => d <= MAX_TIMER_DELAY_MS));
  });

  test('a callback that cancels or replaces a later entry of the same batch stops its delivery', () => {
    const clock = new FakeClock();
    const s = new DeadlineScheduler<string>(clock);
    const got: string[] = [];
    s.onDue((e) => {
      got.push(`${e.key}:${e.payload}`);
      if (e.key === 'ns/a') {
        s.cancel('ns/b');
        s.schedule('ns/c', 'u', clock.now() + 10, 'moved');
      }
    });
    const t = clock.now();
    s.schedule('ns/a', 'u', t + 100, 'x');
    s.schedule('ns/b', 'u', t + 100, 'x');
    s.schedule('ns/c', 'u', t + 100, 'x');
    clock.advance(100);
    assert.deepEqual(got, ['ns/a:x']);
    clock.advance(10);
    assert.deepEqual(got, ['ns/a:x', 'ns/c:moved']);
  });

  test('onError receives callback errors and delivery continues', () => {
    const clock = new FakeClock();
    const errors: string[] = [];
    const s = new DeadlineScheduler<string>(clock, { onError: (err, e) => errors.push(`${e.key}:${(err as Error).message}`) });
    const got: string[] = [];
    s.onDue((e) => {
      if (e.key === 'ns/a') throw new Error('boom');
      got.push(e.key);
    });
    s.schedule('ns/a', 'u', clock.now() + 1, '');
    s.schedule('ns/b', 'u', clock.now() + 1, '');
    clock.advance(1);
    assert.deepEqual(errors, ['ns/a:boom']);
    assert.deepEqual(got, ['ns/b']);
  });

  test('without onError, a callback error is rethrown after the batch, and the timer is re-armed', () => {
    const clock = new FakeClock();
    const s = new DeadlineScheduler<string>(clock);
    const got: string[] = [];
    s.onDue((e) => {
      if (e.key === 'ns/a') throw new Error('boom');
      got.push(e.key);
    });
    const t = clock.now();
    s.schedule('ns/a', 'u', t + 1, '');
    s.schedule('ns/b', 'u', t + 1, '');
    s.schedule('ns/c', 'u', t + 50, '');
    assert.throws(() => clock.advance(1), /boom/);
    assert.deepEqual(got, ['ns/b']);
    clock.set(t + 1);
    clock.advance(49);
    assert.deepEqual(got, ['ns/b', 'ns/c']);
  });

  test('clear() drops everything and stops the timer; unsubscribed callbacks get nothing', () => {
    const { clock, s, fired } = setup();
    const extra: string[] = [];
    const off = s.onDue((e) => extra.push(e.key));
    s.schedule('ns/a', 'u', clock.now() + 10, '');
    s.schedule('ns/b', 'u', clock.now() + 20, '');
    assert.equal(s.clear(), 2);
    assert.equal(s.size, 0);
    assert.equal(clock.pendingTimers, 0);
    off();
    s.schedule('ns/c', 'u', clock.now() + 5, '');
    clock.advance(100);
    assert.deepEqual(
      fired.map((f) => f.key),
      ['ns/c'],
    );
    assert.deepEqual(extra, []);
  });

  test('rejects a non-finite deadline', () => {
    const { s } = setup();
    assert.throws(() => s.schedule('ns/a', 'u', Number.NaN, ''), RangeError);
    assert.throws(() => s.schedule('ns/a', 'u', Number.POSITIVE_INFINITY, ''), RangeError);
    assert.equal(s.size, 0);
  });

  test('matches a reference model under random schedule/reschedule/cancel/advance sequences', () => {
    type Op = { op: 'schedule'; key: number; delay: number } | { op: 'cancel'; key: number } | { op: 'advance'; ms: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('schedule' as const), key: fc.integer({ min: 0, max: 9 }), delay: fc.integer({ min: -50, max: 500 }) }),
      fc.record({ op: fc.constant('cancel' as const), key: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }),
    );
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        const clock = new FakeClock();
        const s = new DeadlineScheduler<number>(clock);
        const fired: Array<[string, number]> = [];
        s.onDue((e) => fired.push([e.key, e.atMs]));
        // Model: key → [atMs, seq]; on advance, every entry with atMs <= target fires in (atMs, seq) order.
        const model = new Map<string, [number, number]>();
        const expected: Array<[string, number]> = [];
        let seq = 0;
        for (const o of ops) {
          if (o.op === 'schedule') {
            const key = `ns/p${o.key}`;
            s.schedule(key, 'u', clock.now() + o.delay, 0);
            model.set(key, [clock.now() + o.delay, seq++]);
          } else if (o.op === 'cancel') {
            const key = `ns/p${o.key}`;
            assert.equal(s.cancel(key), model.delete(key));
          } else {
            const target = clock.now() + o.ms;
            const due = [...model].filter(([, [at]]) => at <= target).sort((x, y) => x[1][0] - y[1][0] || x[1][1] - y[1][1]);
            for (const [key, [at]] of due) {
              expected.push([key, at]);
              model.delete(key);
            }
            clock.advance(o.ms);
          }
          assert.equal(s.size, model.size);
        }
        assert.deepEqual(fired, expected);
        assert.deepEqual(
          s.entries().map((e: ScheduledEviction<number>) => [e.key, e.atMs]),
          [...model].sort((x, y) => x[1][0] - y[1][0] || x[1][1] - y[1][1]).map(([k, [at]]) => [k, at]),
        );
      }),
    );
  });

  test('a deadline moved later in place keeps exact order, ties in the latest scheduling order, and one timer', () => {
    const { clock, s, fired } = setup();
    const t0 = clock.now();
    s.schedule('ns/a', 'u', t0 + 100, '');
    s.schedule('ns/c', 'u', t0 + 100, '');
    s.schedule('ns/b', 'u', t0 + 150, '');
    // a moves to its own deadline again: it was scheduled after c now, so c comes first.
    s.schedule('ns/a', 'u', t0 + 100, '');
    clock.advance(100);
    assert.deepEqual(
      fired.map((f) => f.key),
      ['ns/c', 'ns/a'],
    );
    // A heartbeat-like deadline that keeps moving later fires once, at its last deadline.
    for (let i = 1; i <= 1_000; i++) s.schedule('ns/d', 'u', t0 + 100 + i * 10, '');
    assert.equal(s.nextDeadlineMs(), t0 + 150);
    clock.advance(50);
    assert.deepEqual(fired.at(-1), { key: 'ns/b', atMs: t0 + 150, firedAtMs: t0 + 150 });
    assert.equal(s.nextDeadlineMs(), t0 + 10_100);
    assert.equal(clock.pendingTimers, 1);
    clock.advance(9_949);
    assert.equal(fired.length, 3, 'not a millisecond early');
    clock.advance(1);
    assert.deepEqual(fired.at(-1), { key: 'ns/d', atMs: t0 + 10_100, firedAtMs: t0 + 10_100 });
    assert.equal(fired.length, 4);
    // Moved later, then earlier than where it sits in the heap: the earlier deadline wins.
    s.schedule('ns/e', 'u', t0 + 20_000, '');
    s.schedule('ns/e', 'u', t0 + 30_000, '');
    s.schedule('ns/e', 'u', t0 + 15_000, '');
    assert.equal(s.nextDeadlineMs(), t0 + 15_000);
    clock.advance(4_900);
    assert.deepEqual(fired.at(-1), { key: 'ns/e', atMs: t0 + 15_000, firedAtMs: t0 + 15_000 });
    assert.equal(s.size, 0);
  });

  test('heartbeat-like reschedules (mostly later, some from callbacks) match a reference model exactly', () => {
    type Op = { op: 'later'; key: number; by: number } | { op: 'schedule'; key: number; delay: number } | { op: 'cancel'; key: number } | { op: 'advance'; ms: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      { weight: 4, arbitrary: fc.record({ op: fc.constant('later' as const), key: fc.integer({ min: 0, max: 7 }), by: fc.integer({ min: 0, max: 200 }) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('schedule' as const), key: fc.integer({ min: 0, max: 7 }), delay: fc.integer({ min: -20, max: 400 }) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), key: fc.integer({ min: 0, max: 7 }) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 150 }) }) },
    );
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80 }), fc.integer({ min: 0, max: 7 }), (ops, rearmKey) => {
        const clock = new FakeClock();
        const s = new DeadlineScheduler<number>(clock);
        const model = new Map<string, [number, number]>();
        let seq = 0;
        const fired: Array<[string, number, number, number]> = [];
        const put = (key: string, at: number): void => {
          s.schedule(key, 'u', at, 0);
          model.set(key, [at, seq++]);
        };
        // One key re-arms itself 50 ms later from its own callback, as a node's probe deadline does.
        s.onDue((e) => {
          fired.push([e.key, e.atMs, clock.now(), e.scheduledAtMs]);
          assert.deepEqual(model.get(e.key)?.[0], e.atMs, 'delivered the deadline the model holds');
          model.delete(e.key);
          if (e.key === `ns/p${rearmKey}` && fired.length < 200) put(e.key, clock.now() + 50);
        });
        const earliest = (): number | undefined => {
          const sorted = [...model.values()].sort((x, y) => x[0] - y[0] || x[1] - y[1]);
          return sorted[0]?.[0];
        };
        for (const o of ops) {
          const key = `ns/p${o.op === 'advance' ? 0 : o.key}`;
          if (o.op === 'later') put(key, (model.get(key)?.[0] ?? clock.now()) + o.by);
          else if (o.op === 'schedule') put(key, clock.now() + o.delay);
          else if (o.op === 'cancel') assert.equal(s.cancel(key), model.delete(key));
          else {
            // Step 1 ms at a time so that every delivery's time is checked against its deadline.
            for (let i = 0; i < o.ms; i++) clock.advance(1);
            clock.advance(0);
          }
          assert.equal(s.size, model.size);
          assert.equal(s.nextDeadlineMs(), earliest());
        }
        // Nothing delivered before its deadline; a future deadline is delivered exactly at it.
        for (const [key, at, firedAt, scheduledAt] of fired) assert.ok(at > scheduledAt ? firedAt === at : firedAt >= at, `${key} due ${at}, delivered ${firedAt}`);
        assert.deepEqual(
          s.entries().map((e: ScheduledEviction<number>) => [e.key, e.atMs]),
          [...model].sort((x, y) => x[1][0] - y[1][0] || x[1][1] - y[1][1]).map(([k, [at]]) => [k, at]),
        );
      }),
    );
  });

  test('100,000 pending entries: schedule, reschedule and cancel stay correct', () => {
    const { clock, s, fired } = setup();
    const t0 = clock.now();
    const n = 100_000;
    // A deterministic scatter of deadlines over one hour.
    const deadline = (i: number): number => t0 + ((i * 7_919) % 3_600_000) + 1;
    for (let i = 0; i < n; i++) s.schedule(`ns/p${i}`, `u${i}`, deadline(i), '');
    assert.equal(s.size, n);
    let cancelled = 0;
    for (let i = 0; i < n; i += 2) if (s.cancel(`ns/p${i}`)) cancelled++;
    assert.equal(cancelled, n / 2);
    // Move every tenth surviving entry to just after the hour.
    for (let i = 1; i < n; i += 20) s.schedule(`ns/p${i}`, `u${i}`, t0 + 3_600_000 + i, '');
    assert.equal(s.size, n / 2);

    // FakeClock keeps fired timers until advance() returns, so walk the hour in one-second steps.
    for (let step = 0; step < 3_600; step++) clock.advance(1_000);
    const firstHour = fired.length;
    assert.equal(firstHour, n / 2 - n / 20);
    for (let i = 1; i < fired.length; i++) assert.ok((fired[i - 1] as Fired).atMs <= (fired[i] as Fired).atMs, 'deadline order');
    assert.ok(fired.every((f) => f.firedAtMs === f.atMs));
    assert.ok(fired.every((f) => Number(f.key.slice('ns/p'.length)) % 2 === 1), 'no cancelled entry fired');

    for (let step = 0; step < n / 1_000; step++) clock.advance(1_000);
    assert.equal(fired.length, n / 2);
    assert.equal(new Set(fired.map((f) => f.key)).size, n / 2, 'each entry fired once');
    assert.equal(s.size, 0);
    assert.equal(clock.pendingTimers, 0);
  });
});
