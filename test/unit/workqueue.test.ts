import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  WorkQueue,
  defaultControllerRateLimiter,
} from '../../src/kube/workqueue.js';

interface Gate {
  promise: Promise<void>;
  open: () => void;
}
function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Lets p-queue start whatever it can. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/**
 * A single-worker queue whose handler records keys and blocks on `blocker` until `open()`;
 * `onKey` may throw to simulate a failing sync.
 */
function blockedQueue(blocker: string, onKey: (k: string) => void = () => {}) {
  const clock = new FakeClock();
  const calls: string[] = [];
  const g = gate();
  const q = new WorkQueue({
    name: 't',
    clock,
    concurrency: 1,
    sync: async (k) => {
      calls.push(k);
      if (k === blocker) await g.promise;
      onKey(k);
    },
  });
  return { clock, calls, open: g.open, q };
}

describe('WorkQueue dedup and per-key exclusion', () => {
  test('a key added several times while queued is handled once', async () => {
    const { calls, open, q } = blockedQueue('blocker');
    q.add('blocker');
    await settle();
    q.add('a');
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(q.len, 2, 'a and b wait once each');
    open();
    await q.onIdle();
    assert.deepEqual(calls, ['blocker', 'a', 'b']);
  });

  test('a key added while it is being handled is handled again afterwards, never concurrently', async () => {
    const clock = new FakeClock();
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    const first = gate();
    const q = new WorkQueue({
      name: 't',
      clock,
      concurrency: 4,
      sync: async () => {
        calls++;
        running++;
        maxRunning = Math.max(maxRunning, running);
        if (calls === 1) await first.promise;
        running--;
      },
    });
    q.add('a');
    await settle();
    assert.equal(q.stats().processing, 1);
    q.add('a');
    q.add('a');
    await settle();
    assert.equal(calls, 1, 'the re-added key waits for the running handler');
    assert.equal(q.len, 0, 'a dirty key that is processing is not in the queue');
    first.open();
    await q.onIdle();
    await settle();
    await q.onIdle();
    assert.equal(calls, 2, 'handled exactly once more');
    assert.equal(maxRunning, 1);
  });

  test('concurrency bounds the number of keys handled at once', async () => {
    const clock = new FakeClock();
    let running = 0;
    let maxRunning = 0;
    const g = gate();
    const q = new WorkQueue({
      name: 't',
      clock,
      concurrency: 2,
      sync: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await g.promise;
        running--;
      },
    });
    for (const k of ['a', 'b', 'c', 'd', 'e']) q.add(k);
    await settle();
    assert.equal(q.stats().processing, 2);
    assert.equal(q.len, 3);
    g.open();
    await q.onIdle();
    assert.equal(maxRunning, 2);
    assert.equal(q.stats().succeeded, 5);
  });

  test('each run is told how long its key waited in the queue, from its first add, in milliseconds', async () => {
    const clock = new FakeClock();
    const waited = new Map<string, number>();
    const g = gate();
    const q = new WorkQueue({
      name: 't',
      clock,
      concurrency: 1,
      sync: async (k, run) => {
        waited.set(k, run.queuedMs);
        if (k === 'a') await g.promise;
      },
    });
    q.add('a');
    await settle();
    q.add('b');
    clock.advance(1_500);
    q.add('b'); // a second add while queued keeps the first add's time
    clock.advance(500);
    g.open();
    await q.onIdle();
    assert.equal(waited.get('a'), 0);
    assert.equal(waited.get('b'), 2_000);
  });

  test('property: never concurrent per key, and every key is handled after its last add', async () => {
    const op = fc.oneof(
      fc.record({ add: fc.constantFrom('a', 'b', 'c', 'd') }),
      fc.record({ tick: fc.integer({ min: 0, max: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 3 }), async (ops, concurrency, work) => {
        const clock = new FakeClock();
        let seq = 0;
        const running = new Set<string>();
        const lastAdd = new Map<string, number>();
        const lastStart = new Map<string, number>();
        let violation = '';
        const q = new WorkQueue({
          name: 'prop',
          clock,
          concurrency,
          sync: async (k) => {
            if (running.has(k)) violation = `concurrent ${k}`;
            running.add(k);
            lastStart.set(k, ++seq);
            for (let i = 0; i < work; i++) await new Promise<void>((r) => setImmediate(r));
            running.delete(k);
          },
        });
        for (const o of ops) {
          if ('add' in o) {
            lastAdd.set(o.add, ++seq);
            q.add(o.add);
          } else {
            for (let i = 0; i < o.tick; i++) await new Promise<void>((r) => setImmediate(r));
          }
        }
        for (let i = 0; i < 3; i++) {
          await q.onIdle();
          await settle();
        }
        assert.equal(violation, '');
        for (const [k, addSeq] of lastAdd) {
          assert.ok((lastStart.get(k) ?? 0) > addSeq, `${k} handled after its last add`);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('WorkQueue delays and rate limiting (FakeClock)', () => {
  test('a failing handler is retried with growing per-key backoff, and success forgets it', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const q = new WorkQueue({
      name: 't',
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter(5, 1_000_000),
      sync: async () => {
        calls++;
        if (calls <= 3) throw new Error(`boom ${calls}`);
      },
    });
    q.add('a');
    await q.onIdle();
    assert.equal(calls, 1);
    assert.equal(q.numRequeues('a'), 1);
    assert.equal(q.stats().delayed, 1);
    // Backoffs 5, 10, 20 ms: each retry fires exactly at its delay, not before.
    for (const delay of [5, 10, 20]) {
      const before: number = calls;
      await clock.advanceAsync(delay - 1);
      await q.onIdle();
      assert.equal(calls, before, `not retried before ${delay} ms`);
      await clock.advanceAsync(1);
      await q.onIdle();
      assert.equal(calls, before + 1, `retried at ${delay} ms`);
    }
    assert.equal(calls, 4);
    assert.equal(q.numRequeues('a'), 0, 'success forgets the failures');
    assert.equal(q.stats().failed, 3);
    assert.equal(q.stats().delayed, 0);
  });

  test('addAfter keeps the earliest time per key', async () => {
    const clock = new FakeClock();
    const calls: number[] = [];
    const t0 = clock.now();
    const q = new WorkQueue({ name: 't', clock, sync: async () => void calls.push(clock.now() - t0) });
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    q.addAfter('a', 200);
    assert.equal(q.stats().delayed, 1);
    await clock.advanceAsync(300);
    await q.onIdle();
    assert.deepEqual(calls, [50]);
  });

  test('addAfter with a non-positive delay adds at once', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const q = new WorkQueue({ name: 't', clock, sync: async () => void calls++ });
    q.addAfter('a', 0);
    await q.onIdle();
    assert.equal(calls, 1);
  });

  test('shutDown drops queued and delayed keys and refuses new ones; running handlers finish', async () => {
    const { clock, calls, open, q } = blockedQueue('a');
    q.add('a');
    await settle();
    q.add('b');
    q.addAfter('c', 10);
    const done = q.shutDown();
    q.add('d');
    open();
    await done;
    await clock.advanceAsync(50);
    await settle();
    assert.deepEqual(calls, ['a']);
    assert.equal(q.shuttingDown, true);
    assert.equal(q.len, 0);
  });

  test('drain handles what is queued, then stops; failures are not requeued', async () => {
    const { clock, calls, open, q } = blockedQueue('a', (k) => {
      if (k === 'c') throw new Error('fails');
    });
    q.add('a');
    await settle();
    q.add('b');
    q.add('c');
    q.addAfter('z', 5);
    const done = q.drain();
    open();
    await done;
    await clock.advanceAsync(100);
    await settle();
    assert.deepEqual(calls, ['a', 'b', 'c']);
    assert.equal(q.stats().delayed, 0);
  });

  test('rejects a non-positive concurrency', () => {
    assert.throws(() => new WorkQueue({ name: 'x', clock: new FakeClock(), concurrency: 0, sync: async () => {} }), RangeError);
  });
});

describe('rate limiters (client-go default_rate_limiters.go)', () => {
  test('ItemExponentialFailureRateLimiter doubles from 5 ms and caps at 1000 s', () => {
    const r = new ItemExponentialFailureRateLimiter();
    const delays = Array.from({ length: 25 }, () => r.when('k'));
    for (let i = 0; i < delays.length; i++) assert.equal(delays[i], Math.min(5 * 2 ** i, 1_000_000));
    assert.equal(delays[24], 1_000_000);
    assert.equal(r.numRequeues('k'), 25);
    assert.equal(r.when('other'), 5, 'keys are independent');
    r.forget('k');
    assert.equal(r.numRequeues('k'), 0);
    assert.equal(r.when('k'), 5);
  });

  test('BucketRateLimiter admits the burst, then spaces reservations at 1/qps', () => {
    const clock = new FakeClock();
    const r = new BucketRateLimiter(10, 100, clock);
    for (let i = 0; i < 100; i++) assert.equal(r.when(`k${i}`), 0);
    assert.ok(Math.abs(r.when('x') - 100) < 1e-9);
    assert.ok(Math.abs(r.when('y') - 200) < 1e-9);
    clock.advance(1000); // +10 tokens pays back the two reservations and leaves 8
    for (let i = 0; i < 8; i++) assert.equal(r.when(`z${i}`), 0);
    assert.ok(r.when('w') > 0);
    assert.throws(() => new BucketRateLimiter(0, 1, clock), RangeError);
  });

  test('MaxOf / default controller limiter take the larger delay and report per-item requeues', () => {
    const clock = new FakeClock();
    const d = defaultControllerRateLimiter(clock);
    assert.equal(d.when('a'), 5);
    assert.equal(d.when('a'), 10);
    assert.equal(d.numRequeues('a'), 2);
    d.forget('a');
    assert.equal(d.numRequeues('a'), 0);
    const m = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(1, 1000), new ItemExponentialFailureRateLimiter(3, 10));
    assert.deepEqual([m.when('k'), m.when('k'), m.when('k'), m.when('k'), m.when('k')], [3, 6, 10, 10, 16]);
  });
});
