import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { DEFAULT_BACKOFF, DEFAULT_RETRY, UPDATE_TAINT_BACKOFF, backoffDelays, retryOnConflict, retryWithBackoff, type RetryOutcome } from '../../src/kube/retry.js';
import { FencedError } from '../../src/kube/throttle.js';

const conflict = (): ApiException<string> => new ApiException(409, 'Conflict', '{"reason":"Conflict"}', {});
const notFound = (): ApiException<string> => new ApiException(404, 'NotFound', '{"reason":"NotFound"}', {});

/** Drives a FakeClock until `p` settles (bounded). */
async function runUntilSettled<T>(clock: FakeClock, p: Promise<T>, stepMs = 1, maxSteps = 100_000): Promise<T> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < maxSteps && !settled; i++) await clock.advanceAsync(stepMs);
  return p;
}

describe('backoffDelays (wait.Backoff.Step)', () => {
  test('DefaultRetry: 4 sleeps of 10 ms plus up to 10 % jitter', () => {
    assert.deepEqual([...backoffDelays(DEFAULT_RETRY, () => 0.5)], [10.5, 10.5, 10.5, 10.5]);
    assert.deepEqual([...backoffDelays(DEFAULT_RETRY, () => 0)], [10, 10, 10, 10]);
  });

  test('DefaultBackoff grows by 5: 10, 50, 250 ms', () => {
    assert.deepEqual([...backoffDelays(DEFAULT_BACKOFF, () => 0)], [10, 50, 250]);
  });

  test('UpdateTaintBackoff: 4 sleeps between 100 and 200 ms', () => {
    const delays = [...backoffDelays(UPDATE_TAINT_BACKOFF, () => 0.99)];
    assert.equal(delays.length, 4);
    for (const d of delays) assert.ok(d >= 100 && d < 200);
  });

  test('a cap stops growth and lifts the step limit', () => {
    const it = backoffDelays({ steps: 3, durationMs: 100, factor: 2, jitter: 0, capMs: 300 }, () => 0);
    const first = Array.from({ length: 6 }, () => it.next().value);
    assert.deepEqual(first, [100, 200, 300, 300, 300, 300]);
  });
});

describe('retryOnConflict (retry.RetryOnConflict)', () => {
  test('retries conflicts, sleeping 10–11 ms between attempts, and returns the value', async () => {
    const clock = new FakeClock();
    const times: number[] = [];
    const t0 = clock.now();
    const p = retryOnConflict(
      async () => {
        times.push(clock.now() - t0);
        if (times.length < 3) throw conflict();
        return 'ok';
      },
      { clock, random: () => 0.5 },
    );
    assert.equal(await runUntilSettled(clock, p, 0.5), 'ok');
    assert.equal(times.length, 3);
    assert.deepEqual(times, [0, 10.5, 21]);
  });

  test('gives up after the backoff steps with the last conflict', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const p = retryOnConflict(
      async () => {
        calls++;
        throw conflict();
      },
      { clock, backoff: UPDATE_TAINT_BACKOFF },
    );
    p.catch(() => undefined);
    await assert.rejects(runUntilSettled(clock, p, 10), (err: unknown) => err instanceof ApiException && err.code === 409);
    assert.equal(calls, 5);
  });

  test('any other error is thrown at once', async () => {
    const clock = new FakeClock();
    let calls = 0;
    await assert.rejects(
      retryOnConflict(
        async () => {
          calls++;
          throw notFound();
        },
        { clock },
      ),
      (err: unknown) => err instanceof ApiException && err.code === 404,
    );
    assert.equal(calls, 1);
  });
});

describe('retryWithBackoff', () => {
  test('retries until success with capped exponential delays', async () => {
    const clock = new FakeClock();
    const delays: number[] = [];
    let calls = 0;
    const p = retryWithBackoff(
      async () => {
        if (++calls < 7) throw new Error('transient');
        return 'done';
      },
      { clock, random: () => 0, initialDelayMs: 100, maxDelayMs: 1000, onRetry: (_e, _a, d) => delays.push(d) },
    );
    const out = await runUntilSettled(clock, p, 50);
    assert.deepEqual(out, { status: 'succeeded', value: 'done', attempts: 7 });
    assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000]);
  });

  test('stops when isDone says the work no longer matters (e.g. the pod is gone)', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const p = retryWithBackoff(
      async () => {
        calls++;
        throw calls < 3 ? new Error('transient') : notFound();
      },
      { clock, isDone: (err) => err instanceof ApiException && err.code === 404 },
    );
    const out: RetryOutcome<never> = await runUntilSettled(clock, p, 50);
    assert.equal(out.status, 'stopped');
    assert.equal(out.attempts, 3);
  });

  test('a FencedError always stops', async () => {
    const out = await retryWithBackoff(async () => {
      throw new FencedError();
    });
    assert.equal(out.status, 'stopped');
    assert.equal(out.attempts, 1);
  });

  test('an abort during the sleep ends it as aborted; maxAttempts bounds it', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const p = retryWithBackoff(
      async () => {
        throw new Error('x');
      },
      { clock, signal: ac.signal, initialDelayMs: 1000 },
    );
    await clock.advanceAsync(10);
    ac.abort();
    const out = await p;
    assert.equal(out.status, 'aborted');
    assert.equal(out.attempts, 1);
    assert.equal(clock.pendingTimers, 0, 'the sleep timer was cancelled');

    const bounded = retryWithBackoff(
      async () => {
        throw new Error('y');
      },
      { clock, maxAttempts: 3, initialDelayMs: 1 },
    );
    const out2 = await runUntilSettled(clock, bounded, 1);
    assert.equal(out2.status, 'aborted');
    assert.equal(out2.attempts, 3);
  });
});
