import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import type { Clock, TimerHandle } from '../../src/util/clock.js';
import { SwappableTokenBucket } from '../../src/nodelifecycle/ratelimit.js';
import type { SwappableRateLimiter } from '../../src/nodelifecycle/ratelimit.js';
import { RateLimitedTimedQueue, UniqueQueue } from '../../src/nodelifecycle/timedqueue.js';
import type { TimedValue, TryResult } from '../../src/nodelifecycle/timedqueue.js';

/** Upstream's FakeAlwaysRateLimiter. */
function always(clock: Clock): SwappableTokenBucket {
  return new SwappableTokenBucket(clock, Infinity);
}

/** A clock whose now() is scripted, like upstream tests overriding the package `now` var. */
class ScriptedClock implements Clock {
  constructor(readonly next: () => number) {}
  now(): number {
    return this.next();
  }
  monotonic(): number {
    throw new Error('not used');
  }
  setTimeout(): TimerHandle {
    throw new Error('not used');
  }
  sleep(): Promise<void> {
    throw new Error('not used');
  }
}

/** Counts tryAccept calls; accepts according to a script (true when the script runs out). */
class CountingLimiter implements SwappableRateLimiter {
  calls = 0;
  qps = 1;
  constructor(private readonly script: boolean[] = []) {}
  tryAccept(): boolean {
    return this.script[this.calls++] ?? true;
  }
  swap(newQps: number): boolean {
    const changed = newQps !== this.qps;
    this.qps = newQps;
    return changed;
  }
}

function newQueue(clock: Clock = new FakeClock()): RateLimitedTimedQueue {
  const q = new RateLimitedTimedQueue(clock, always(clock));
  q.add('first', '11111');
  q.add('second', '22222');
  q.add('third', '33333');
  return q;
}

const names = (vs: readonly TimedValue[]): string[] => vs.map((v) => v.value);

/** Lets every pending promise callback run (a few macrotask turns). */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Runs one sync pass whose action always succeeds; returns the values processed, in order. */
function processAll(q: RateLimitedTimedQueue): string[] {
  const processed: string[] = [];
  q.try((v) => {
    processed.push(v.value);
    return { done: true, waitMs: 0 };
  });
  return processed;
}

describe('RateLimitedTimedQueue: upstream rate_limited_queue_test.go', () => {
  test('TestAddNode: queue order first, second, third; all three in the dedup set', () => {
    const q = newQueue();
    assert.deepEqual(names(q.values()), ['first', 'second', 'third']);
    assert.equal(q.length, 3);
    for (const v of ['first', 'second', 'third']) assert.equal(q.has(v), true);
    assert.equal(q.add('second', '22222'), false);
  });

  test('TestDelNode: removing any one leaves the other two in order, in queue and set', () => {
    for (const removed of ['first', 'second', 'third']) {
      let tick = 0;
      const q = newQueue(new ScriptedClock(() => 1000 * tick++));
      assert.equal(q.remove(removed), true);
      const rest = ['first', 'second', 'third'].filter((v) => v !== removed);
      assert.deepEqual(names(q.values()), rest, `after removing ${removed}`);
      assert.equal(q.has(removed), false);
      for (const v of rest) assert.equal(q.has(v), true);
    }
  });

  test('TestTry: add 3, remove second, try(ok) processes first and third', () => {
    const q = newQueue();
    q.remove('second');
    assert.deepEqual(processAll(q).sort(), ['first', 'third']);
    assert.equal(q.length, 0);
  });

  test('TestTryOrdering: a retried value is requeued at now + wait + 1 ms and not reached again in the pass', () => {
    // Like upstream: now() advances 1 ms per call, except that it holds once after the retry.
    let current = 0;
    let delay = 0;
    const clock = new ScriptedClock(() => {
      if (delay > 0) delay--;
      else current += 1;
      return current;
    });
    const q = newQueue(clock);
    const order: string[] = [];
    let count = 0;
    let hasQueued = false;
    q.try((v) => {
      count++;
      assert.notEqual(v.processAt, 0);
      const expectedAddedAt = { first: 1, second: 2, third: 3 }[v.value];
      assert.equal(v.addedAt, expectedAddedAt, `addedAt of ${v.value}`);
      if (v.value === 'second' && !hasQueued) {
        hasQueued = true;
        delay = 1;
        return { done: false, waitMs: 2 };
      }
      order.push(v.value);
      return { done: true, waitMs: 0 };
    });
    assert.deepEqual(order, ['first', 'third']);
    assert.equal(count, 3);
    // "second" was tried at now = 5 ms, so it waits until 5 + 2 + 1 = 8 ms. (Upstream's check for
    // ProcessAt == 6 ms sits in a branch the test never reaches, and with its 1 ns offset the real
    // value is 7 ms + 1 ns.)
    assert.deepEqual(
      q.values().map((v) => [v.value, v.addedAt, v.processAt]),
      [['second', 2, 8]],
    );
    assert.equal(hasQueued, true);
  });

  test('TestTryRemovingWhileTry: a value removed while its action runs is not retried', async () => {
    const clock = new FakeClock();
    const q = newQueue(clock);
    const order: string[] = [];
    let count = 0;
    let queued = false;
    let releaseSecond: () => void = () => undefined;
    let secondStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (secondStarted = resolve));
    const pass = q.tryAsync(async (v) => {
      count++;
      assert.notEqual(v.addedAt, 0);
      assert.notEqual(v.processAt, 0);
      if (!queued && v.value === 'second') {
        queued = true;
        secondStarted();
        await new Promise<void>((resolve) => (releaseSecond = resolve));
        return { done: false, waitMs: 1 };
      }
      order.push(v.value);
      return { done: true, waitMs: 0 };
    });
    await started;
    assert.equal(q.remove('second'), true);
    releaseSecond();
    await pass;
    assert.deepEqual(order, ['first', 'third']);
    assert.equal(count, 3);
    assert.equal(q.length, 0);
    assert.equal(q.has('second'), false);
  });

  test('TestClear: the queue is empty after clear, and values can be added again', () => {
    const q = newQueue();
    q.clear();
    assert.equal(q.length, 0);
    assert.deepEqual(q.values(), []);
    assert.equal(q.add('first', '11111'), true);
  });

  test('TestSwapLimiter: initial qps is the always limiter, swap(0) stops, swap(5.5) sets 5.5', () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    assert.equal(q.qps, always(clock).qps);
    assert.equal(q.swapLimiter(0), true);
    assert.equal(q.qps, 0);
    assert.equal(q.swapLimiter(5.5), true);
    assert.equal(q.qps, 5.5);
  });

  test('TestAddAfterTry: a processed value stays in the dedup set, so add does not reprocess it', () => {
    const q = newQueue();
    q.remove('second');
    assert.deepEqual(processAll(q).sort(), ['first', 'third']);
    assert.equal(q.add('first', '11111'), false);
    q.try(() => assert.fail('processed the same value without an explicit remove'));
    // After remove, the value can be queued and processed again (markNodeForTainting relies on this).
    assert.equal(q.remove('first'), true);
    assert.equal(q.add('first', '11111'), true);
    assert.deepEqual(processAll(q), ['first']);
  });
});

describe('RateLimitedTimedQueue: rate limiting and timing', () => {
  test('the token is taken before the due check, so a not-yet-due head wastes it', () => {
    const clock = new FakeClock();
    const limiter = new CountingLimiter();
    const q = new RateLimitedTimedQueue(clock, limiter);
    q.add('n1', 'u1');
    q.try(() => ({ done: false, waitMs: 10_000 }));
    assert.equal(limiter.calls, 2, 'one token for the action, one wasted on the requeued head');
    q.try(() => assert.fail('not due'));
    assert.equal(limiter.calls, 3);
  });

  test('a refused token ends the pass without calling the action', () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, new CountingLimiter([false]));
    q.add('n1', 'u1');
    q.try(() => assert.fail('rate limited'));
    assert.equal(q.length, 1);
  });

  test('with 0.1 qps the first node is processed at once and the next 10 s later', () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, new SwappableTokenBucket(clock, 0.1));
    for (const n of ['a', 'b', 'c']) q.add(n, `uid-${n}`);
    const done: [string, number][] = [];
    const start = clock.now();
    for (let t = 0; t <= 25_000; t += 100) {
      q.try((v) => {
        done.push([v.value, clock.now() - start]);
        return { done: true, waitMs: 0 };
      });
      clock.advance(100);
    }
    assert.deepEqual(done, [
      ['a', 0],
      ['b', 10_000],
      ['c', 20_000],
    ]);
  });

  test('swapLimiter(0) stops processing; swapping back resumes after 1/qps', () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, new SwappableTokenBucket(clock, 1));
    q.add('a', 'ua');
    q.swapLimiter(0);
    clock.advance(60_000);
    q.try(() => assert.fail('stopped'));
    q.swapLimiter(1);
    q.try(() => assert.fail('drained on swap'));
    clock.advance(1_000);
    assert.deepEqual(processAll(q), ['a']);
  });

  test('a retried value keeps its uid and addedAt and waits waitMs + 1 ms', () => {
    const clock = new FakeClock(1_000);
    const q = new RateLimitedTimedQueue(clock, always(clock));
    q.add('a', 'ua');
    clock.advance(5);
    let calls = 0;
    q.try(() => {
      calls++;
      return { done: false, waitMs: 50 };
    });
    assert.equal(calls, 1);
    assert.deepEqual(q.peek(), { value: 'a', uid: 'ua', addedAt: 1_000, processAt: 1_056 });
    clock.advance(50);
    q.try(() => assert.fail('due at 1056, now 1055'));
    clock.advance(1);
    q.try(() => ({ done: true, waitMs: 0 }));
    assert.equal(q.length, 0);
    assert.equal(q.has('a'), true);
  });

  test('non-finite waitMs is rejected and the value stays queued', () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    q.add('a', 'ua');
    assert.throws(() => q.try(() => ({ done: false, waitMs: Number.NaN })), RangeError);
    assert.equal(q.peek()?.processAt, clock.now());
  });

  test('try throws while an async pass runs; async passes run one at a time', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    q.add('a', 'ua');
    q.add('b', 'ub');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const log: string[] = [];
    const p1 = q.tryAsync(async (v) => {
      log.push(`p1:${v.value}`);
      if (v.value === 'a') await gate;
      return { done: true, waitMs: 0 };
    });
    const p2 = q.tryAsync(async (v) => {
      log.push(`p2:${v.value}`);
      return { done: true, waitMs: 0 };
    });
    await Promise.resolve();
    await Promise.resolve();
    assert.throws(() => q.try(() => ({ done: true, waitMs: 0 })), /another pass is running/);
    q.add('c', 'uc');
    release();
    await Promise.all([p1, p2]);
    // p1 drains everything due, including "c" added while it waited; p2 finds nothing.
    assert.deepEqual(log, ['p1:a', 'p1:b', 'p1:c']);
  });

  test('a rejecting action rejects its pass, keeps the value, and later passes still run', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    q.add('a', 'ua');
    await assert.rejects(
      q.tryAsync(async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(q.length, 1);
    const seen: string[] = [];
    await q.tryAsync(async (v) => {
      seen.push(v.value);
      return { done: true, waitMs: 0 };
    });
    assert.deepEqual(seen, ['a']);
  });

  test('a swap during an async pass applies to the next token', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    for (const n of ['a', 'b', 'c']) q.add(n, n);
    const seen: string[] = [];
    await q.tryAsync(async (v) => {
      seen.push(v.value);
      if (v.value === 'a') q.swapLimiter(0);
      return { done: true, waitMs: 0 };
    });
    assert.deepEqual(seen, ['a']);
    assert.deepEqual(names(q.values()), ['b', 'c']);
  });
});

describe('RateLimitedTimedQueue concurrent pass (deliberate difference 12)', () => {
  test('up to `concurrency` actions run at once, started in queue order; the pass ends when all are done', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    for (const n of ['a', 'b', 'c', 'd', 'e']) q.add(n, n);
    const started: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const gates = new Map<string, () => void>();
    const pass = q.tryAsync(async (v) => {
      started.push(v.value);
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise<void>((resolve) => gates.set(v.value, resolve));
      running--;
      return { done: true, waitMs: 0 };
    }, 2);
    await flush();
    assert.deepEqual(started, ['a', 'b']);
    // Running values are out of the heap but still in the dedup set.
    assert.deepEqual(names(q.values()), ['c', 'd', 'e']);
    assert.equal(q.has('a'), true);
    assert.equal(q.add('a', 'ua'), false);
    gates.get('b')?.();
    await flush();
    assert.deepEqual(started, ['a', 'b', 'c']);
    for (const n of ['a', 'c']) gates.get(n)?.();
    await flush();
    for (const n of ['d', 'e']) gates.get(n)?.();
    await pass;
    assert.deepEqual(started, ['a', 'b', 'c', 'd', 'e']);
    assert.equal(maxRunning, 2);
    assert.equal(q.length, 0);
    assert.equal(q.has('e'), true, 'done values stay in the dedup set, as in the serial pass');
  });

  test('a not-done value is put back at now + waitMs + 1; one removed while running is dropped', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    q.add('retry', 'u1');
    q.add('gone', 'u2');
    const t0 = clock.now();
    await q.tryAsync(async (v) => {
      if (v.value === 'gone') q.remove('gone');
      return { done: false, waitMs: 500 };
    }, 4);
    assert.deepEqual(
      q.values().map((v) => [v.value, v.processAt - t0]),
      [['retry', 501]],
    );
    assert.equal(q.has('gone'), false);
  });

  test('a rejecting action keeps its value queued and rejects the pass after the others finished', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    q.add('bad', 'u1');
    q.add('good', 'u2');
    const finished: string[] = [];
    await assert.rejects(
      q.tryAsync(async (v) => {
        if (v.value === 'bad') throw new Error('boom');
        await flush();
        finished.push(v.value);
        return { done: true, waitMs: 0 };
      }, 4),
      /boom/,
    );
    assert.deepEqual(finished, ['good']);
    assert.deepEqual(names(q.values()), ['bad']);
    assert.throws(() => q.tryAsync(async () => ({ done: true, waitMs: 0 }), 0), RangeError);
  });

  test('the token bucket still paces starts: rate 1/s with burst 1 starts one action per second', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, new SwappableTokenBucket(clock, 1));
    for (const n of ['a', 'b', 'c']) q.add(n, n);
    const started: string[] = [];
    const act = async (v: TimedValue): Promise<TryResult> => (started.push(v.value), { done: true, waitMs: 0 });
    await q.tryAsync(act, 16);
    assert.deepEqual(started, ['a']);
    clock.advance(1000);
    await q.tryAsync(act, 16);
    assert.deepEqual(started, ['a', 'b']);
  });
});

describe('UniqueQueue', () => {
  const tv = (value: string, processAt: number): TimedValue => ({ value, uid: `u-${value}`, addedAt: 0, processAt });

  test('replace only touches waiting values and leaves the set alone', () => {
    const u = new UniqueQueue();
    assert.equal(u.replace(tv('a', 1)), false);
    assert.equal(u.has('a'), false);
    u.add(tv('a', 5));
    u.add(tv('b', 3));
    assert.equal(u.replace(tv('a', 1)), true);
    assert.deepEqual(u.head(), tv('a', 1));
    assert.equal(u.removeFromQueue('a'), true);
    assert.equal(u.replace(tv('a', 0)), false);
    assert.equal(u.has('a'), true);
  });

  test('removeFromQueue keeps the value in the set; remove returns true even when only in the set', () => {
    const u = new UniqueQueue();
    assert.equal(u.removeFromQueue('a'), false);
    u.add(tv('a', 1));
    assert.equal(u.removeFromQueue('a'), true);
    assert.equal(u.removeFromQueue('a'), false);
    assert.equal(u.add(tv('a', 1)), false);
    assert.equal(u.remove('a'), true);
    assert.equal(u.remove('a'), false);
    assert.equal(u.add(tv('a', 1)), true);
  });

  test('get pops the minimum and drops it from the set', () => {
    const u = new UniqueQueue();
    assert.equal(u.get(), undefined);
    u.add(tv('late', 9));
    u.add(tv('early', 2));
    assert.deepEqual(u.get(), tv('early', 2));
    assert.equal(u.has('early'), false);
    assert.equal(u.setSize, 1);
  });

  test('a removal from the middle that must sift the moved entry up keeps the minimum at the head', () => {
    const u = new UniqueQueue();
    for (const [v, at] of [['e', 10], ['f', 17], ['d', 1], ['b', 16], ['h', 15], ['i', 0], ['k', 6]] as const) {
      u.add(tv(v, at));
    }
    u.remove('f');
    u.add(tv('l', 14));
    u.remove('d');
    u.remove('i');
    assert.deepEqual(u.head(), tv('k', 6));
    const drained: string[] = [];
    for (let v = u.get(); v; v = u.get()) drained.push(v.value);
    assert.deepEqual(drained, ['k', 'e', 'l', 'h', 'b']);
  });

  test('property: behaves like a sorted list plus a set under random operations', () => {
    type Op =
      | { op: 'add' | 'replace'; value: string; at: number }
      | { op: 'remove' | 'removeFromQueue'; value: string }
      | { op: 'get' | 'clear' };
    // Enough distinct values for a heap of 3+ levels, where a removal can need a sift-up.
    const value = fc.constantFrom(...'abcdefghijklmn'.split(''));
    const at = fc.integer({ min: 0, max: 20 });
    // Weighted towards adds so the heap grows deep enough for removals that must sift up.
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ op: fc.constant('add' as const), value, at }), weight: 60 },
      { arbitrary: fc.record({ op: fc.constant('replace' as const), value, at }), weight: 20 },
      { arbitrary: fc.record({ op: fc.constantFrom('remove' as const, 'removeFromQueue' as const), value }), weight: 20 },
      { arbitrary: fc.record({ op: fc.constant('get' as const) }), weight: 10 },
      { arbitrary: fc.record({ op: fc.constant('clear' as const) }), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 120 }), (ops) => {
        const u = new UniqueQueue();
        // Model: list in (processAt, insertion) order, plus the set.
        let list: { value: string; at: number; seq: number }[] = [];
        const set = new Set<string>();
        let seq = 0;
        const sortList = (): void => void list.sort((x, y) => x.at - y.at || x.seq - y.seq);
        for (const o of ops) {
          switch (o.op) {
            case 'add': {
              const expected = !set.has(o.value);
              if (expected) {
                list.push({ value: o.value, at: o.at, seq: seq++ });
                set.add(o.value);
              }
              assert.equal(u.add(tv(o.value, o.at)), expected);
              break;
            }
            case 'replace': {
              const i = list.findIndex((e) => e.value === o.value);
              if (i >= 0) list[i] = { value: o.value, at: o.at, seq: seq++ };
              assert.equal(u.replace(tv(o.value, o.at)), i >= 0);
              break;
            }
            case 'remove': {
              const expected = set.delete(o.value);
              list = list.filter((e) => e.value !== o.value);
              assert.equal(u.remove(o.value), expected);
              break;
            }
            case 'removeFromQueue': {
              const expected = set.has(o.value) && list.some((e) => e.value === o.value);
              if (set.has(o.value)) list = list.filter((e) => e.value !== o.value);
              assert.equal(u.removeFromQueue(o.value), expected);
              break;
            }
            case 'get': {
              sortList();
              const first = list.shift();
              if (first) set.delete(first.value);
              assert.equal(u.get()?.value, first?.value);
              break;
            }
            case 'clear':
              list = [];
              set.clear();
              u.clear();
              break;
          }
          sortList();
          assert.deepEqual(
            u.values().map((v) => [v.value, v.processAt]),
            list.map((e) => [e.value, e.at]),
          );
          assert.equal(u.head()?.value, list[0]?.value);
          assert.equal(u.length, list.length);
          assert.equal(u.setSize, set.size);
        }
      }),
    );
  });
});

describe('RateLimitedTimedQueue concurrent pass: values added while actions run', () => {
  test('a value added while a slow action runs starts at once, not after the pass; isPending covers waiting and running', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(clock, always(clock));
    q.add('slow', 'u1');
    let releaseSlow: () => void = () => undefined;
    const started: string[] = [];
    const pass = q.tryAsync(async (v) => {
      started.push(v.value);
      if (v.value === 'slow') await new Promise<void>((resolve) => (releaseSlow = resolve));
      return { done: true, waitMs: 0 };
    }, 4);
    await flush();
    assert.equal(q.isPending('slow'), true, 'running');
    q.add('late', 'u2');
    await flush();
    assert.deepEqual(started, ['slow', 'late']);
    assert.equal(q.isPending('late'), false, 'done: in the dedup set only');
    assert.equal(q.has('late'), true);
    releaseSlow();
    await pass;
    assert.equal(q.isPending('slow'), false);
  });
});
