import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { ApiWriteThrottle, FencedError, isNotCalledFor, retryAfterMs, throttleSettings, type WritePriority } from '../../src/kube/throttle.js';

const conflict = (): ApiException<string> => new ApiException(409, 'Conflict', '{"reason":"Conflict"}', {});

describe('throttleSettings: --kube-api-qps / --kube-api-burst', () => {
  test('qps 20 / burst 30 (kube-controller-manager defaults) pass through', () => {
    assert.deepEqual(throttleSettings(20, 30), { qps: 20, burst: 30 });
    assert.deepEqual(throttleSettings(0.4, 1), { qps: 0.4, burst: 1 });
  });

  test("client-go defaulting: qps 0 → 5, burst 0 → 10, negative qps → unlimited", () => {
    const s = throttleSettings(0, 0);
    assert.ok(s);
    assert.equal(s.qps, 5);
    assert.equal(s.burst, 10);
    assert.equal(throttleSettings(-1, 30), null);
  });

  test('invalid values throw RangeError', () => {
    assert.throws(() => throttleSettings(Number.NaN, 1), RangeError);
    assert.throws(() => throttleSettings(1, -1), RangeError);
    assert.throws(() => throttleSettings(1, 1.5), RangeError);
  });
});

/** True when the throttle only waits for fake time: every waiting write is queued and none holds a token. */
const idle = (t: ApiWriteThrottle): boolean => t.stats().admitted === 0 && t.stats().received === 0;

/**
 * Schedules one write per entry of `order` (at that priority) on a 10/s throttle with a bucket of
 * 1, on a FakeClock, and advances the clock until all ran. @returns each write as `<priority><index>`
 * in the order it ran, and when (ms after the start).
 */
async function admitOnEmptyBucket(order: readonly WritePriority[]): Promise<{ seen: string[]; times: number[] }> {
  const clock = new FakeClock();
  const t0 = clock.now();
  const throttle = new ApiWriteThrottle({ qps: 10, burst: 1, clock });
  const seen: string[] = [];
  const times: number[] = [];
  const jobs = order.map((p, i) =>
    throttle.schedule(async () => {
      seen.push(`${p}${i}`);
      times.push(clock.now() - t0);
    }, p),
  );
  while (seen.length < order.length) {
    if (clock.pendingTimers > 0 && idle(throttle)) clock.advance(1);
    else await new Promise((r) => setImmediate(r));
  }
  await Promise.all(jobs);
  await throttle.stop();
  return { seen, times };
}

/**
 * Schedules `count` writes at once on a FakeClock throttle and drives the clock like an infinitely
 * fast machine: fake time moves (1 ms at a time) only while the throttle sleeps on it, never while
 * a write is still entering bottleneck's queue or already has its token and waits for bottleneck's
 * real-time dispatch. @returns each write's admission time, ms after start.
 */
async function admissionTimes(qps: number, burst: number, count: number, priorityOf: (i: number) => WritePriority = () => 'pod', eventBatch = 1): Promise<number[]> {
  const clock = new FakeClock();
  const t0 = clock.now();
  const throttle = new ApiWriteThrottle({ qps, burst, clock, eventBatch });
  const times: number[] = [];
  let done = 0;
  const jobs = Array.from({ length: count }, (_, i) =>
    throttle.schedule(async () => void times.push(clock.now() - t0), priorityOf(i)).finally(() => done++),
  );
  while (done < count) {
    if (clock.pendingTimers > 0 && idle(throttle)) clock.advance(1);
    else await new Promise((r) => setImmediate(r));
  }
  await Promise.all(jobs);
  await throttle.stop();
  return times;
}

/**
 * One-by-one pacing: the i-th write (0-based) of writes queued at once needs i + 1 tokens (burst at
 * t = 0, then one per 1000 / qps ms) and is admitted on the first whole fake millisecond at or after
 * it is due, **ms**.
 */
const oneByOneDueMs = (i: number, qps: number, burst: number): number => (i < burst ? 0 : Math.ceil(((i + 1 - burst) * 1000) / qps - 1e-6));

describe('ApiWriteThrottle admission is a token bucket (client-go flowcontrol.NewTokenBucketRateLimiter)', () => {
  test('qps 20 / burst 30: the burst at once, then one write every 50 ms; over 30 s exactly burst + qps × 30 s', async () => {
    const times = await admissionTimes(20, 30, 30 + 600 + 20);
    assert.deepEqual(times.slice(0, 30), new Array(30).fill(0), 'the full bucket admits the burst at t = 0');
    assert.equal(times[30], 50, 'the 31st write waits one token (1 / qps = 50 ms)');
    for (let i = 31; i < times.length; i++) assert.equal((times[i] as number) - (times[i - 1] as number), 50, `write ${i}`);
    // The admitted rate over a long window: burst + qps × T, and qps exactly after the burst.
    // Tolerance: one token (an admission on the window's edge), documented in throttle.ts.
    const inWindow = times.filter((t) => t <= 30_000).length;
    assert.ok(Math.abs(inWindow - (30 + 20 * 30)) <= 1, `admitted in 30 s: ${inWindow}`);
    const sustained = (times.length - 31) / (((times.at(-1) as number) - (times[30] as number)) / 1000);
    assert.ok(Math.abs(sustained - 20) < 0.001, `sustained ${sustained}/s`);
  });

  test('fractional qps 0.4 / burst 1: one write, then one every 2.5 s (no beat rounding)', async () => {
    assert.deepEqual(await admissionTimes(0.4, 1, 5), [0, 2500, 5000, 7500, 10_000]);
  });

  test('property: for any qps and burst, writes queued at once are admitted at burst + qps × t', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 60 }), async (qps, burst, extra) => {
        const times = await admissionTimes(qps, burst, burst + extra);
        for (let i = 0; i < times.length; i++) {
          const dueMs = oneByOneDueMs(i, qps, burst);
          assert.ok(Math.abs((times[i] as number) - dueMs) <= 1, `qps ${qps} burst ${burst}: write ${i} at ${times[i]} ms, due ${dueMs} ms`);
        }
      }),
      { numRuns: 25 },
    );
  });

  test('a late timer delays a write but loses no token: a 400 ms stall at qps 20 is caught up at once, up to the burst', async () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    const throttle = new ApiWriteThrottle({ qps: 20, burst: 30, clock });
    const times: number[] = [];
    const jobs = Array.from({ length: 40 }, () => throttle.schedule(async () => void times.push(clock.now() - t0)));
    while (times.length < 30) await new Promise((r) => setImmediate(r));
    // The 31st write sleeps until t = 50 ms; the process stalls and its timer fires at 400 ms.
    clock.advance(400);
    while (times.length < 38) await new Promise((r) => setImmediate(r));
    assert.deepEqual(times.slice(30, 38), new Array(8).fill(400), '400 ms of tokens (8) are all there after the stall');
    await throttle.stop();
    await Promise.allSettled(jobs);
  });

  test('node writes before pod writes before events while the bucket is empty, at the bucket rate', async () => {
    const { seen, times } = await admitOnEmptyBucket(['event', 'pod', 'pod', 'node', 'event', 'node', 'pod']);
    // The first write wakes the feeder, which takes the only token; it goes to the first write in
    // priority order waiting when it is handed over (pod1, scheduled next), each later token likewise.
    assert.deepEqual(seen, ['pod1', 'node3', 'node5', 'pod2', 'pod6', 'event0', 'event4']);
    assert.deepEqual(times, [0, 100, 200, 300, 400, 500, 600]);
  });

  test('NoSchedule condition-taint writes wait behind status and NoExecute writes queued after them, and go before pod writes (issue 29)', async () => {
    // A wave's NoSchedule writes, queued first, must not hold back the NoExecute taints queued
    // after them; they are only delayed (each still runs, before any pod write).
    const { seen } = await admitOnEmptyBucket(['pod', 'noschedule-taint', 'noschedule-taint', 'pod', 'node', 'node', 'event']);
    assert.deepEqual(seen, ['noschedule-taint1', 'node4', 'node5', 'noschedule-taint2', 'pod0', 'pod3', 'event6']);
  });
});

describe('ApiWriteThrottle: writes wait in its own priority heap, not in bottleneck\'s submit step (issue 29)', () => {
  test('a node write scheduled behind a burst of 300 pod writes takes the next token', async () => {
    const clock = new FakeClock();
    const throttle = new ApiWriteThrottle({ qps: 100, burst: 1, clock });
    const order: WritePriority[] = [...new Array<WritePriority>(300).fill('pod'), 'node'];
    const seen: string[] = [];
    const jobs = order.map((p, i) => throttle.schedule(async () => void seen.push(`${p}${i}`), p).catch(() => undefined));
    // Fake time moves as soon as the last token handed over was taken, whether or not writes are
    // still passing bottleneck's submit step (one real timer turn each, at least): a machine whose
    // tokens come faster than bottleneck takes in writes, as in a failure wave's burst of pod marks.
    while (!seen.includes('node300')) {
      if (clock.pendingTimers > 0 && throttle.stats().admitted === 0) clock.advance(1);
      else await new Promise((r) => setImmediate(r));
    }
    assert.ok(seen.indexOf('node300') <= 1, `the node write ran ${seen.indexOf('node300') + 1}th (${seen.slice(0, 3).join(', ')}, …)`);
    assert.ok(throttle.stats().received <= 1, 'bottleneck never holds more writes in its submit step than tokens handed over');
    await throttle.stop();
    await Promise.all(jobs);
  });

  test('stop() rejects the writes still held for a token, without running them', async () => {
    const clock = new FakeClock();
    const throttle = new ApiWriteThrottle({ qps: 1, burst: 1, clock });
    let ran = 0;
    const results = [0, 1, 2].map(() => throttle.schedule(async () => void ran++).then(() => 'ran', (err: unknown) => (err as Error).message));
    while (ran < 1) await new Promise((r) => setImmediate(r));
    await throttle.stop();
    assert.deepEqual(await Promise.all(results), ['ran', 'throttle stopped', 'throttle stopped']);
    assert.equal(ran, 1);
    await assert.rejects(throttle.schedule(async () => undefined), 'a write scheduled after stop() is refused');
  });
});

describe('ApiWriteThrottle eventBatch: Events paced a batch at a time (a deliberate difference that can only delay an Event)', () => {
  test('qps 20 / burst 30 / eventBatch 10: the burst at once, then 10 Events every 500 ms', async () => {
    const times = await admissionTimes(20, 30, 30 + 100, () => 'event', 10);
    assert.deepEqual(times.slice(0, 30), new Array(30).fill(0));
    for (let b = 0; b < 10; b++) assert.deepEqual(times.slice(30 + 10 * b, 40 + 10 * b), new Array(10).fill(500 * (b + 1)), `batch ${b}`);
  });

  test('property: no Event is started sooner than one-by-one pacing would start it, nor more than a batch of tokens later', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 20 }), async (qps, burst, extra, batch) => {
        const times = await admissionTimes(qps, burst, burst + extra, () => 'event', batch);
        // A batch is at most burst − 1 tokens (a batch of 1 is one-by-one pacing); + 1 ms for the fake clock's step.
        const lateBoundMs = (Math.max(1, Math.min(batch, burst - 1)) * 1000) / qps + 1;
        for (let i = 0; i < times.length; i++) {
          const dueMs = oneByOneDueMs(i, qps, burst);
          // The 1 ms tolerance is the fake clock's step (admissionTimes advances 1 ms at a time).
          assert.ok((times[i] as number) >= dueMs - 1, `qps ${qps} burst ${burst} batch ${batch}: Event ${i} at ${times[i]} ms, before its one-by-one time ${dueMs} ms`);
          assert.ok((times[i] as number) <= dueMs + lateBoundMs, `Event ${i} at ${times[i]} ms, more than a batch after ${dueMs} ms`);
        }
      }),
      { numRuns: 25 },
    );
  });

  test('node and pod writes are never batched: with eventBatch 10 they are admitted as without it', async () => {
    const priorityOf = (i: number): WritePriority => (i % 3 === 0 ? 'node' : 'pod');
    assert.deepEqual(await admissionTimes(10, 2, 25, priorityOf, 10), await admissionTimes(10, 2, 25, priorityOf, 1));
  });

  test('a pod write that arrives while the feeder waits for an Event batch ends the wait and is admitted on its token', async () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    const throttle = new ApiWriteThrottle({ qps: 10, burst: 10, clock, eventBatch: 10 });
    const seen: Array<[string, number]> = [];
    const events = Array.from({ length: 20 }, (_, i) => throttle.schedule(async () => void seen.push([`event${i}`, clock.now() - t0]), 'event'));
    const drive = async (until: () => boolean): Promise<void> => {
      while (!until()) {
        if (clock.pendingTimers > 0 && idle(throttle)) clock.advance(1);
        else await new Promise((r) => setImmediate(r));
      }
    };
    // The burst starts ten Events at once; the other ten wait for a batch of 10 tokens, due at 1,000 ms.
    await drive(() => clock.now() - t0 >= 150);
    assert.deepEqual(seen.map(([, at]) => at), new Array(10).fill(0), 'no Event started during the batch wait');
    const pod = throttle.schedule(async () => void seen.push(['pod', clock.now() - t0]), 'pod');
    await drive(() => seen.some(([name]) => name === 'pod'));
    // One by one, the token of 100 ms would have gone to an Event and the pod write would take the
    // one of 200 ms. Here the wait ends at 150 ms: the 1.5 tokens there go to whichever write
    // bottleneck has queued first (the pod write may still be entering its queue), so the pod write
    // starts at 150 or 200 ms, never later than one by one.
    const podAt = seen.find(([name]) => name === 'pod')?.[1] ?? Infinity;
    assert.ok(podAt >= 150 && podAt <= 200, `the pod write at ${podAt} ms`);
    await drive(() => seen.length === 21);
    await Promise.all([...events, pod]);
    await throttle.stop();
    // No more than the bucket allows at any time: burst + qps × t.
    seen.forEach(([name, at], k) => assert.ok(k + 1 <= 10 + Math.floor((at * 10) / 1000 + 1e-9), `${name}, write ${k + 1}, at ${at} ms`));
    assert.equal(seen.at(-1)?.[1], 1100, 'the last write waits for its token (the 21st, due at 1,100 ms), not longer');
  });

  test('an invalid eventBatch throws RangeError', () => {
    for (const eventBatch of [0, -1, 1.5, Number.NaN]) assert.throws(() => new ApiWriteThrottle({ qps: 20, burst: 30, eventBatch }), RangeError);
  });
});

describe('ApiWriteThrottle', () => {
  test('the fencing gate refuses a write with FencedError without calling it', async () => {
    let leader = false;
    const t = new ApiWriteThrottle({ qps: 100, burst: 10, canWrite: () => leader });
    let calls = 0;
    await assert.rejects(
      t.schedule(async () => ++calls),
      (err: unknown) => err instanceof FencedError,
    );
    assert.equal(calls, 0);
    leader = true;
    assert.equal(await t.schedule(async () => ++calls), 1);
    t.setCanWrite(() => false);
    await assert.rejects(t.schedule(async () => ++calls), FencedError);
    assert.equal(calls, 1);
    assert.deepEqual(
      { executed: t.stats().executed, fenced: t.stats().fenced },
      { executed: 1, fenced: 2 },
    );
    await t.stop();
  });

  test('the gate is checked when the write runs, not when it is scheduled', async () => {
    let leader = true;
    let checks = 0;
    const t = new ApiWriteThrottle({
      qps: 100,
      burst: 10,
      canWrite: () => {
        checks++;
        return leader;
      },
    });
    let ran = false;
    const p = t.schedule(async () => (ran = true));
    assert.equal(checks, 0, 'not checked at schedule time');
    leader = false; // leadership lost before the write got its turn
    await assert.rejects(p, FencedError);
    assert.equal(checks, 1);
    assert.equal(ran, false);
    await t.stop();
  });

  test('admits the burst at once, then holds further writes until tokens refill', async () => {
    // qps 0.001 refills 1 unit per beat: no token comes back within the test.
    const t = new ApiWriteThrottle({ qps: 0.001, burst: 3 });
    const ran: number[] = [];
    const jobs = [0, 1, 2, 3].map((i) => t.schedule(async () => void ran.push(i)));
    jobs[3]?.catch(() => undefined);
    await Promise.all(jobs.slice(0, 3));
    assert.deepEqual(ran, [0, 1, 2]);
    const tokens = await t.tokens();
    assert.ok(tokens !== null && tokens < 1, `bucket is empty (${tokens})`);
    assert.equal(t.stats().queued, 1, 'the fourth write waits');
    await t.stop();
    await assert.rejects(jobs[3] as Promise<void>);
    assert.deepEqual(ran, [0, 1, 2]);
  });

  test('negative qps: unlimited, but still fenced', async () => {
    const t = new ApiWriteThrottle({ qps: -1, burst: 0 });
    assert.equal(t.settings, null);
    assert.equal(await t.tokens(), null);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => t.schedule(async () => i)));
    assert.equal(results.length, 50);
    t.setCanWrite(() => false);
    await assert.rejects(t.schedule(async () => 1), FencedError);
    await t.stop();
  });

  test('maxInFlight caps writes in flight; a freed slot goes to the highest priority waiting (node before pod before event)', async () => {
    const t = new ApiWriteThrottle({ qps: 1000, burst: 1000, maxInFlight: 2 });
    let running = 0;
    let maxRunning = 0;
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const write = (label: string) => async (): Promise<void> => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      order.push(label);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
    };
    const all = [t.schedule(write('pod1'), 'pod'), t.schedule(write('pod2'), 'pod'), t.schedule(write('event'), 'event'), t.schedule(write('pod3'), 'pod')];
    await new Promise((r) => setTimeout(r, 30));
    all.push(t.schedule(write('node'), 'node'));
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(order, ['pod1', 'pod2']);
    while (order.length < 5) {
      releases.shift()?.();
      await new Promise((r) => setTimeout(r, 30));
    }
    for (const r of releases) r();
    await Promise.all(all);
    assert.equal(maxRunning, 2);
    assert.deepEqual(order, ['pod1', 'pod2', 'node', 'pod3', 'event']);
    assert.throws(() => new ApiWriteThrottle({ qps: 1, burst: 1, maxInFlight: 0 }), RangeError);
    await t.stop();
    // Without a rate limit (negative qps) the cap holds too.
    const unlimited = new ApiWriteThrottle({ qps: -1, burst: 0, maxInFlight: 1 });
    let inFlight = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        unlimited.schedule(async () => {
          peak = Math.max(peak, ++inFlight);
          await new Promise((r) => setTimeout(r, 5));
          inFlight--;
        }),
      ),
    );
    assert.equal(peak, 1);
    await unlimited.stop();
  });

  test('a write that fails rejects with its own error', async () => {
    const t = new ApiWriteThrottle({ qps: 10, burst: 1 });
    await assert.rejects(
      t.schedule(async () => {
        throw conflict();
      }),
      (err: unknown) => err instanceof ApiException && err.code === 409,
    );
    await t.stop();
  });
});

test('queued writes run in priority order: node, then pod, then event (FIFO within a priority)', async () => {
  const throttle = new ApiWriteThrottle({ qps: 8, burst: 1 });
  const order: string[] = [];
  const write = (name: string) => async (): Promise<void> => void order.push(name);
  // The first write takes the only token; the rest queue while the bucket refills.
  const first = throttle.schedule(write('first'), 'event');
  const queued = [
    throttle.schedule(write('event-1'), 'event'),
    throttle.schedule(write('pod-1'), 'pod'),
    throttle.schedule(write('node-1'), 'node'),
    throttle.schedule(write('pod-2')),
    throttle.schedule(write('node-2'), 'node'),
  ];
  await Promise.all([first, ...queued]);
  await throttle.stop();
  assert.deepEqual(order, ['first', 'node-1', 'node-2', 'pod-1', 'pod-2', 'event-1']);
});

describe('ApiWriteThrottle: Retry-After on 429 and 5xx (client-go rest/with_retry.go)', () => {
  const answer = (code: number, retryAfter?: string): ApiException<string> =>
    new ApiException(code, `HTTP-Code: ${code}`, '{}', retryAfter === undefined ? {} : { 'retry-after': retryAfter });

  /** A write that fails with the given errors in turn, then resolves `'ok'`; `calls` counts its calls. */
  function scripted(...failures: unknown[]): { fn: () => Promise<string>; calls: () => number } {
    let n = 0;
    return {
      fn: async () => {
        const err = failures[n++];
        if (err !== undefined) throw err;
        return 'ok';
      },
      calls: () => n,
    };
  }

  /**
   * Lets bottleneck (real timers) and the promise chain run, without moving the fake clock, until the
   * write waits on the fake clock (its Retry-After timer) or `done` holds. A fixed 20 ms was too short
   * on a loaded machine: the wait was then armed after the clock had moved, and the test hung.
   * @throws {Error} after 10 s of real time.
   */
  const settle = async (clock: FakeClock, done: () => boolean = () => false): Promise<void> => {
    const until = Date.now() + 10_000;
    while (clock.pendingTimers === 0 && !done()) {
      if (Date.now() > until) throw new Error('settle: the write never waited on the clock');
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  for (const code of [429, 503]) {
    test(`${code} with Retry-After: 2 is sent again after 2 s (not before), and the second answer is returned`, async () => {
      const clock = new FakeClock();
      const t = new ApiWriteThrottle({ qps: -1, burst: 0, clock });
      const w = scripted(answer(code, '2'));
      let result: string | undefined;
      const p = t.schedule(w.fn).then((v) => (result = v));
      await settle(clock);
      assert.equal(w.calls(), 1);
      await clock.advanceAsync(1999);
      await settle(clock);
      assert.equal(w.calls(), 1, 'not sent again before Retry-After has passed');
      await clock.advanceAsync(1);
      await p;
      assert.equal(w.calls(), 2);
      assert.equal(result, 'ok');
      assert.equal(t.stats().retriedAfter, 1);
      await t.stop();
    });
  }

  test('Retry-After: 0 retries at once; 500 with Retry-After is retried too (any 5xx)', async () => {
    const clock = new FakeClock();
    const t = new ApiWriteThrottle({ qps: -1, burst: 0, clock });
    const w = scripted(answer(429, '0'), answer(500, '1'));
    const p = t.schedule(w.fn);
    await settle(clock);
    await clock.advanceAsync(0);
    await settle(clock);
    assert.equal(w.calls(), 2);
    await clock.advanceAsync(1000);
    assert.equal(await p, 'ok');
    assert.equal(w.calls(), 3);
    await t.stop();
  });

  test('no retry without a usable Retry-After, or for other statuses: 429 without it, an HTTP-date, 409, 404, 400 with it', async () => {
    for (const err of [answer(429), answer(503, 'Wed, 21 Oct 2026 07:28:00 GMT'), answer(409, '1'), answer(404, '1'), answer(400, '1')]) {
      const t = new ApiWriteThrottle({ qps: -1, burst: 0, clock: new FakeClock() });
      const w = scripted(err);
      await assert.rejects(t.schedule(w.fn), (e: unknown) => e === err);
      assert.equal(w.calls(), 1, `${err.code} ${JSON.stringify(err.headers)} is not retried here`);
      await t.stop();
    }
  });

  test('gives up after 10 retries (11 calls) with the last answer', async () => {
    const clock = new FakeClock();
    const t = new ApiWriteThrottle({ qps: -1, burst: 0, clock });
    const errs = Array.from({ length: 12 }, () => answer(429, '1'));
    const w = scripted(...errs);
    let outcome: unknown;
    const p = t.schedule(w.fn).catch((e: unknown) => (outcome = e));
    for (let i = 0; i < 12 && outcome === undefined; i++) {
      await settle(clock, () => outcome !== undefined);
      if (outcome !== undefined) break;
      await clock.advanceAsync(1000);
    }
    await p;
    assert.equal(w.calls(), 11);
    assert.equal(outcome, errs[10]);
    await t.stop();
  });

  test('the retry passes the fencing gate again: a lease lost during the wait means it is never sent', async () => {
    const clock = new FakeClock();
    let leader = true;
    const t = new ApiWriteThrottle({ qps: -1, burst: 0, clock, canWrite: () => leader });
    const w = scripted(answer(429, '1'));
    const p = t.schedule(w.fn);
    await settle(clock);
    leader = false;
    await clock.advanceAsync(1000);
    await assert.rejects(p, FencedError);
    assert.equal(w.calls(), 1);
    await t.stop();
  });

  test('the wait holds no in-flight slot: with maxInFlight 1 another write runs while the first waits', async () => {
    const clock = new FakeClock();
    const t = new ApiWriteThrottle({ qps: 1000, burst: 1000, maxInFlight: 1, clock });
    const first = scripted(answer(503, '30'));
    const second = scripted();
    const p1 = t.schedule(first.fn);
    await settle(clock);
    assert.equal(await t.schedule(second.fn), 'ok', 'the second write ran during the first one\'s Retry-After wait');
    assert.equal(first.calls(), 1);
    await clock.advanceAsync(30_000);
    assert.equal(await p1, 'ok');
    await t.stop();
  });

  test('stop() ends a Retry-After wait: the write rejects with its last answer', async () => {
    const clock = new FakeClock();
    const t = new ApiWriteThrottle({ qps: -1, burst: 0, clock });
    const err = answer(429, '60');
    const w = scripted(err);
    const p = t.schedule(w.fn);
    await settle(clock);
    await t.stop();
    await assert.rejects(p, (e: unknown) => e === err);
    assert.equal(w.calls(), 1);
  });

  test('retryAfterMs reads whole seconds on 429/5xx only', () => {
    assert.equal(retryAfterMs(answer(429, '3')), 3000);
    assert.equal(retryAfterMs(answer(504, ' 1 ')), 1000);
    assert.equal(retryAfterMs(answer(429, '1.5')), undefined);
    assert.equal(retryAfterMs(answer(429)), undefined);
    assert.equal(retryAfterMs(answer(403, '1')), undefined);
    assert.equal(retryAfterMs(new Error('socket hang up')), undefined);
  });
});

describe('ApiWriteThrottle: Events handed over together go to bottleneck as one weighted job (issue 29: its per-job timer turns)', () => {
  /**
   * Schedules `events` Events (and, at `nodeAtMs`, one node write) on a FakeClock throttle at qps 10 /
   * burst 9 / eventBatch 8 and drives fake time only while the throttle sleeps on it. Each write
   * holds its in-flight slot until the test lets it go (`holdMs` of fake time after it starts, or
   * `holdMs(i)` for the i-th write to start).
   * A real `setTimeout(0)` ticker counts timer turns, the unit of bottleneck's per-job cost.
   * @returns each write's label, start (ms of fake time) and timer turn, in start order, and the peak in flight.
   */
  async function runEvents(events: number, maxInFlight: number, holdMs: number | ((i: number) => number), nodeAtMs?: number): Promise<{ started: Array<{ label: string; atMs: number; turn: number }>; peak: number }> {
    const clock = new FakeClock();
    const t0 = clock.now();
    const throttle = new ApiWriteThrottle({ qps: 10, burst: 9, clock, eventBatch: 8, maxInFlight });
    const started: Array<{ label: string; atMs: number; turn: number }> = [];
    let turn = 0;
    let running = 0;
    let peak = 0;
    const ticker = setInterval(() => turn++, 0);
    const write = (label: string) => async (): Promise<void> => {
      const atMs = clock.now() - t0;
      const heldMs = typeof holdMs === 'number' ? holdMs : holdMs(started.length);
      started.push({ label, atMs, turn });
      peak = Math.max(peak, ++running);
      try {
        // Fake time: the slot is held until the clock passes start + holdMs.
        while (clock.now() - t0 < atMs + heldMs) await new Promise((r) => setImmediate(r));
      } finally {
        running--;
      }
    };
    try {
      const jobs = Array.from({ length: events }, (_, i) => throttle.schedule(write(`event${i}`), 'event'));
      const total = events + (nodeAtMs === undefined ? 0 : 1);
      let done = 0;
      let movedAt = Date.now();
      for (const j of jobs) void j.finally(() => done++);
      while (done < total) {
        if (nodeAtMs !== undefined && clock.now() - t0 >= nodeAtMs && jobs.length === events) {
          const node = throttle.schedule(write('node'), 'node');
          void node.finally(() => done++);
          jobs.push(node);
        }
        // Fake time moves only once every write with a token has started (as admissionTimes), while
        // the throttle sleeps on it or a write holds its slot (writes wait on fake time too).
        if (idle(throttle) && (clock.pendingTimers > 0 || running > 0)) {
          clock.advance(1);
          movedAt = Date.now();
        } else await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
        // Writes that wait in bottleneck for a slot while others hold theirs on fake time never let
        // the clock move: fail (after 5 s of real time without it moving) rather than spin forever.
        if (Date.now() - movedAt > 5000) throw new Error(`stalled at ${clock.now() - t0} ms of fake time: ${started.length} of ${total} started, ${running} running`);
      }
      await Promise.all(jobs);
      await throttle.stop();
    } finally {
      clearInterval(ticker);
    }
    return { started, peak };
  }

  test('a paced batch of eight Events starts in one timer turn, on its tokens (no sooner than one by one)', async () => {
    const { started } = await runEvents(9 + 16, 32, 0);
    // The burst of 9, then batches of 8 tokens: due at 800 and 1,600 ms (one by one: 100 ms apart).
    for (const [b, dueMs] of [[9, 800], [17, 1600]] as const) {
      const batch = started.slice(b, b + 8);
      assert.deepEqual(batch.map((s) => s.atMs), new Array(8).fill(dueMs), `batch at ${dueMs} ms: ${batch.map((s) => s.atMs).join(',')}`);
      assert.equal(new Set(batch.map((s) => s.turn)).size, 1, `the batch at ${dueMs} ms started in one timer turn: turns ${batch.map((s) => s.turn).join(',')}`);
    }
    started.forEach((s, k) => assert.ok(k + 1 <= 9 + Math.floor((s.atMs * 10) / 1000 + 1e-9), `${s.label}, write ${k + 1}, at ${s.atMs} ms: more than burst + qps × t`));
  });

  test('the in-flight cap holds with groups: never more than maxInFlight Events run at once', async () => {
    for (const maxInFlight of [1, 3, 4]) {
      const { started, peak } = await runEvents(9 + 16, maxInFlight, 250);
      assert.equal(started.length, 25);
      assert.ok(peak <= maxInFlight, `maxInFlight ${maxInFlight}: ${peak} in flight`);
      assert.equal(peak, maxInFlight, `maxInFlight ${maxInFlight}: the cap is used`);
    }
  });

  test('a node write that arrives behind a group of running Events takes the next free slot before the waiting Events', async () => {
    const { started } = await runEvents(9 + 8, 4, 300, 50);
    const nodeAt = started.findIndex((s) => s.label === 'node');
    // Four Events run (the cap); the node write arrives at 50 ms and goes first once their slots are free.
    assert.equal(nodeAt, 4, `start order: ${started.map((s) => s.label).join(',')}`);
  });

  test('the in-flight cap holds while a group\'s Events are answered at different times, and every freed slot is used', async () => {
    for (const maxInFlight of [2, 3, 4, 8]) {
      // Hold times 0–290 ms in a fixed scramble: the Events of one group are answered one by one.
      const { started, peak } = await runEvents(9 + 24, maxInFlight, (i) => ((i * 37) % 11) * 29);
      assert.equal(started.length, 33);
      assert.ok(peak <= maxInFlight, `maxInFlight ${maxInFlight}: ${peak} in flight`);
      assert.equal(peak, maxInFlight, `maxInFlight ${maxInFlight}: the cap is used`);
    }
  });

  /**
   * On an empty bucket (qps 10 / burst 5 / eventBatch 8 / maxInFlight 4), four Events are scheduled
   * at once: the first starts alone on the next token (100 ms), the other three as one group on three
   * tokens due together (400 ms); with the first, that fills the cap. The first and the group's
   * second hang; the other two are answered. Fake time moves only while the throttle sleeps on it.
   * @returns the Events' start times (ms of fake time), and whether a node write scheduled then
   *   started while both still hung.
   */
  async function nodeWriteBehindHungEvent(): Promise<{ groupAtMs: number[]; nodeStarted: boolean }> {
    const clock = new FakeClock();
    const t0 = clock.now();
    const throttle = new ApiWriteThrottle({ qps: 10, burst: 5, clock, eventBatch: 8, maxInFlight: 4 });
    // Bottleneck dispatches on real setTimeout(0) turns: wait (real time, generously) for a condition.
    const until = async (cond: () => boolean): Promise<boolean> => {
      for (const deadline = Date.now() + 2000; !cond() && Date.now() < deadline; ) {
        if (idle(throttle) && clock.pendingTimers > 0) clock.advance(1);
        await new Promise((r) => setTimeout(r, 0));
      }
      return cond();
    };
    let release = (): void => {};
    const hung = new Promise<void>((r) => (release = r));
    try {
      // The burst's five tokens, spent.
      await Promise.all(Array.from({ length: 5 }, () => throttle.schedule(async () => {}, 'event')));
      const groupAtMs: number[] = [];
      let answered = 0;
      const events = [0, 1, 2, 3].map((i) =>
        throttle.schedule(async () => {
          groupAtMs.push(clock.now() - t0);
          if (i === 0 || i === 2) await hung;
          else answered++;
        }, 'event'),
      );
      assert.equal(await until(() => answered === 2), true, 'two Events answered');
      assert.equal(throttle.stats().running, 2, 'two Events hang');
      let nodeStarted = false;
      const node = throttle.schedule(async () => void (nodeStarted = true), 'node');
      // Read before the release: once released, the node write starts in either case.
      const startedWhileHung = await until(() => nodeStarted);
      release();
      await Promise.all([...events, node]);
      return { groupAtMs, nodeStarted: startedWhileHung };
    } finally {
      release();
      await throttle.stop();
    }
  }

  test('an Event that hangs holds only its own in-flight slot: a node write behind its group starts while it hangs', async () => {
    // With bottleneck's per-job slots the group's three were held until its hung Event was answered
    // (its 30 s write timeout in the controller): with the first Event's, all four, and the node
    // write waited that long. Now two slots are held, one per hung Event.
    const { groupAtMs, nodeStarted } = await nodeWriteBehindHungEvent();
    // The first on its token at 100 ms; then three tokens due together at 400 ms: one group.
    assert.deepEqual(groupAtMs, [100, 400, 400, 400]);
    assert.equal(nodeStarted, true, 'the node write started while the hung Event held its slot');
  });
});

describe('ApiWriteThrottle: the send-time recheck (issue 53 item 4: a retry re-decides, it never replays)', () => {
  const answer = (code: number, retryAfter: string): ApiException<string> => new ApiException(code, `HTTP-Code: ${code}`, '{}', { 'retry-after': retryAfter });
  const settle = async (clock: FakeClock, done: () => boolean = () => false): Promise<void> => {
    const until = Date.now() + 10_000;
    while (clock.pendingTimers === 0 && !done()) {
      if (Date.now() > until) throw new Error('settle: the write never waited on the clock');
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  test('the recheck runs right before the write, after the fencing gate; a reason withholds it with NotCalledForError and counts it', async () => {
    const order: string[] = [];
    const t = new ApiWriteThrottle({ qps: 20, burst: 30, canWrite: () => (order.push('gate'), true) });
    const sent = await t.schedule(async () => (order.push('write'), 'sent'), 'pod', () => (order.push('recheck'), undefined));
    assert.equal(sent, 'sent');
    assert.deepEqual(order, ['gate', 'recheck', 'write']);
    let called = false;
    await assert.rejects(
      t.schedule(async () => void (called = true), 'node', () => 'the node is Ready again'),
      (err: unknown) => isNotCalledFor(err) && err.reason === 'the node is Ready again',
    );
    assert.equal(called, false, 'the write function was not called');
    assert.equal(t.stats().notCalledFor, 1);
    assert.equal(t.stats().executed, 1);
    // A recheck that throws withholds the write too, and its error reaches the caller.
    const bug = new Error('recheck bug');
    await assert.rejects(
      t.schedule(async () => void (called = true), 'pod', () => {
        throw bug;
      }),
      (err: unknown) => err === bug,
    );
    assert.equal(called, false);
    await t.stop();
  });

  test('a Retry-After resend is decided again: withheld when the recheck says so by then, sent when it still holds', async () => {
    for (const stillWanted of [false, true]) {
      const clock = new FakeClock();
      const t = new ApiWriteThrottle({ qps: -1, burst: 0, clock });
      let calls = 0;
      let wanted = true;
      const p = t.schedule(
        async () => {
          if (calls++ === 0) throw answer(503, '2');
          return 'ok';
        },
        'pod',
        () => (wanted ? undefined : 'the deletion was held meanwhile'),
      );
      const outcome = p.then(
        (v) => v,
        (err: unknown) => err,
      );
      await settle(clock);
      assert.equal(calls, 1);
      wanted = stillWanted;
      await clock.advanceAsync(2000);
      const got = await outcome;
      if (stillWanted) {
        assert.equal(got, 'ok');
        assert.equal(calls, 2, 'resent');
      } else {
        assert.ok(isNotCalledFor(got), 'the resend was withheld');
        assert.equal(calls, 1, 'not resent');
        assert.equal(t.stats().notCalledFor, 1);
      }
      await t.stop();
    }
  });
});
