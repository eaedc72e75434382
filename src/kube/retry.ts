/**
 * The caller-side retries of API calls, with client-go's backoff shapes:
 *
 * - {@link Backoff} / {@link backoffDelays}: `k8s.io/apimachinery/pkg/util/wait.Backoff` and its `Step()`;
 * - {@link retryOnConflict} / {@link retryOnError}: client-go `util/retry.RetryOnConflict` / `OnError`;
 * - {@link retryWithBackoff}: "retry until success or until it no longer matters" (for example until
 *   the pod is gone), `wait.ExponentialBackoffWithContext` with a cap and no step limit.
 *
 * Each attempt of a write still goes through the request throttle (src/kube/throttle.ts) on its
 * own; these helpers decide only whether and when to try again. Every sleep uses the injected
 * {@link Clock}, so unit tests drive retries with `FakeClock`.
 */
import { realClock, sleepUnlessAborted, type Clock } from '../util/clock.js';
import { isConflict } from './client.js';
import { isFenced } from './throttle.js';

/**
 * A `wait.Backoff`: `steps` attempts at most; the sleep starts at `durationMs` and is multiplied by
 * `factor` after each step (0 or 1: constant), each sleep gets up to `jitter × duration` added, and
 * once the duration would exceed `capMs` it stays at the cap with no step limit.
 */
export interface Backoff {
  /** Maximum number of attempts (≥ 1). `Infinity` for no limit. */
  steps: number;
  /** First sleep, milliseconds. */
  durationMs: number;
  /** Growth factor per step (0 behaves like 1, as in Go). */
  factor: number;
  /** Jitter fraction: a sleep d becomes d + random() × jitter × d. */
  jitter: number;
  /** Upper bound for the sleep, milliseconds (0/undefined: none). */
  capMs?: number;
}

/** client-go `retry.DefaultRetry`: {Steps 5, Duration 10 ms, Factor 1.0, Jitter 0.1}. */
export const DEFAULT_RETRY: Readonly<Backoff> = Object.freeze({ steps: 5, durationMs: 10, factor: 1, jitter: 0.1 });
/** client-go `retry.DefaultBackoff`: {Steps 4, Duration 10 ms, Factor 5.0, Jitter 0.1}. */
export const DEFAULT_BACKOFF: Readonly<Backoff> = Object.freeze({ steps: 4, durationMs: 10, factor: 5, jitter: 0.1 });
/**
 * kubernetes `pkg/controller/controller_utils.go` `UpdateTaintBackoff` (also `UpdateLabelBackoff`):
 * {Steps 5, Duration 100 ms, Jitter 1.0}, used by `AddOrUpdateTaintOnNode` / `RemoveTaintOffNode`.
 * Upstream leaves Factor 0, which `Backoff.Step` treats as "no growth", the same as 1.
 */
export const UPDATE_TAINT_BACKOFF: Readonly<Backoff> = Object.freeze({ steps: 5, durationMs: 100, factor: 1, jitter: 1 });

/**
 * The successive sleeps of a {@link Backoff}, mirroring `wait.Backoff.Step()` (including its jitter
 * `wait.Jitter(d, f) = d + rand × f × d`). Yields at most `steps - 1` values, because the sleep
 * after the last attempt never happens (`wait.ExponentialBackoff`).
 * @param random a `[0, 1)` source (inject for tests)
 * @returns an iterator of sleeps in milliseconds.
 */
export function* backoffDelays(b: Backoff, random: () => number = Math.random): Generator<number, void, void> {
  let duration = b.durationMs;
  let stepsLeft = b.steps;
  const jitter = (d: number): number => (b.jitter > 0 ? d + random() * b.jitter * d : d);
  while (stepsLeft > 1) {
    stepsLeft--;
    const current = duration;
    if (b.factor !== 0) {
      duration = duration * b.factor;
      if (b.capMs && b.capMs > 0 && duration > b.capMs) {
        duration = b.capMs;
        stepsLeft = Infinity; // Go sets Steps = 0 and then keeps returning the (jittered) cap.
      }
    }
    yield jitter(b.capMs && b.capMs > 0 ? Math.min(current, b.capMs) : current);
  }
}

/** Options shared by the retry helpers. */
export interface RetryOptions {
  /** Clock for the sleeps (default: the real clock). */
  clock?: Clock;
  /** `[0, 1)` jitter source (default: `Math.random`). */
  random?: () => number;
}

/**
 * Calls `fn` until it succeeds, it fails with an error that `isRetriable` rejects, or the backoff's
 * steps run out. Mirrors client-go `util/retry.OnError` (`wait.ExponentialBackoff` under the hood).
 * @returns what `fn` resolves to.
 * @throws the first non-retriable error, or the last retriable error once the steps run out.
 */
export async function retryOnError<T>(
  backoff: Backoff,
  isRetriable: (err: unknown) => boolean,
  fn: () => Promise<T>,
  opts: RetryOptions = {},
): Promise<T> {
  const clock = opts.clock ?? realClock;
  const delays = backoffDelays(backoff, opts.random);
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isRetriable(err)) throw err;
      const next = delays.next();
      if (next.done) throw err;
      await clock.sleep(next.value);
    }
  }
}

/**
 * Calls `fn` again while it fails with 409 Conflict. Mirrors client-go `retry.RetryOnConflict`.
 * The default backoff is {@link DEFAULT_RETRY} (5 attempts, 10 ms apart, 10 % jitter); node taint
 * updates use {@link UPDATE_TAINT_BACKOFF} (5 attempts, 100–200 ms apart) as upstream does.
 * @returns what `fn` resolves to.
 * @throws any non-conflict error at once; the last conflict after the final attempt.
 */
export function retryOnConflict<T>(fn: () => Promise<T>, opts: RetryOptions & { backoff?: Backoff } = {}): Promise<T> {
  return retryOnError(opts.backoff ?? DEFAULT_RETRY, isConflict, fn, opts);
}

/** Result of {@link retryWithBackoff}. `attempts` counts calls of `fn`. */
export type RetryOutcome<T> =
  | { status: 'succeeded'; value: T; attempts: number }
  /** `isDone(err)` said the work no longer matters (e.g. the pod is gone), or the write was fenced. */
  | { status: 'stopped'; error: unknown; attempts: number }
  /** `signal` aborted, or `maxAttempts` ran out (`error` is the last failure, if any). */
  | { status: 'aborted'; error?: unknown; attempts: number };

/** Options of {@link retryWithBackoff}. */
export interface RetryWithBackoffOptions extends RetryOptions {
  /** Return true to stop retrying after this error (e.g. 404 for "the pod is gone"). */
  isDone?: (err: unknown) => boolean;
  /** First sleep, milliseconds (default 100). */
  initialDelayMs?: number;
  /** Largest sleep, milliseconds (default 30 000). */
  maxDelayMs?: number;
  /** Growth factor per failure (default 2). */
  factor?: number;
  /** Jitter fraction (default 0.1, see {@link Backoff}). */
  jitter?: number;
  /** Give up after this many attempts (default: never). */
  maxAttempts?: number;
  /** Stops the retries (the outcome is `aborted`). */
  signal?: AbortSignal;
  /** Called after each failure that will be retried, with the upcoming sleep in milliseconds. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Calls `fn` until it succeeds or a stop condition holds, sleeping with capped exponential backoff
 * in between: `wait.ExponentialBackoffWithContext` with `Backoff{Duration, Factor, Jitter, Cap}`
 * and no step limit. A fenced write ({@link isFenced}) always stops (retrying cannot help a fenced process).
 * Never rejects; the outcome says how it ended.
 * @returns a {@link RetryOutcome}.
 */
export async function retryWithBackoff<T>(fn: () => Promise<T>, opts: RetryWithBackoffOptions = {}): Promise<RetryOutcome<T>> {
  const clock = opts.clock ?? realClock;
  const maxDelayMs = opts.maxDelayMs ?? 30_000;
  const delays = backoffDelays(
    {
      steps: Infinity,
      durationMs: Math.min(opts.initialDelayMs ?? 100, maxDelayMs),
      factor: opts.factor ?? 2,
      jitter: opts.jitter ?? 0.1,
      capMs: maxDelayMs,
    },
    opts.random,
  );
  const maxAttempts = opts.maxAttempts ?? Infinity;
  let attempts = 0;
  let lastErr: unknown;
  while (attempts < maxAttempts) {
    if (opts.signal?.aborted) return { status: 'aborted', error: lastErr, attempts };
    attempts++;
    try {
      return { status: 'succeeded', value: await fn(), attempts };
    } catch (err) {
      lastErr = err;
      if (isFenced(err) || opts.isDone?.(err)) return { status: 'stopped', error: err, attempts };
    }
    if (attempts >= maxAttempts) break;
    // The cap makes the iterator infinite, so `next()` always has a value.
    const delayMs = delays.next().value ?? maxDelayMs;
    opts.onRetry?.(lastErr, attempts, delayMs);
    if (!(await sleepUnlessAborted(clock, delayMs, opts.signal))) return { status: 'aborted', error: lastErr, attempts };
  }
  return { status: 'aborted', error: lastErr, attempts };
}
