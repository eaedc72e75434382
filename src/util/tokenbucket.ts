/**
 * The project's one token bucket, a synchronous one over the injected {@link Clock}, plus the
 * fixed "never" and "always" limiters and {@link rateLimiterFor}.
 *
 * Mirrors client-go `util/flowcontrol/throttle.go` (`NewTokenBucketRateLimiter`,
 * `NewFakeAlwaysRateLimiter`, `NewFakeNeverRateLimiter`), which wraps `golang.org/x/time/rate`
 * `Limiter` (`AllowN`, `Reserve().Delay()`).
 *
 * Users, and the semantics each relies on (explicit here, tested in test/unit/ratelimit.test.ts):
 * - the per-zone NoExecute tainting limiter (src/nodelifecycle/ratelimit.ts `SwappableTokenBucket`)
 *   and the node-affinity-enforcer's eviction limiter: {@link TokenBucket.tryAccept}, which never
 *   goes into debt; the swap's "no free token" rule drains a new bucket once, see there;
 * - the work queue's overall bucket (src/kube/workqueue.ts `BucketRateLimiter`, client-go
 *   `TypedBucketRateLimiter`): {@link TokenBucket.reserve}, which always takes a token, going into
 *   debt, and returns how long to wait for it;
 * - the Event spam filter (src/kube/events.ts, client-go `EventSourceObjectSpamFilter`): one
 *   bucket per source object, {@link TokenBucket.tryAccept}.
 * - the API write throttle (src/kube/throttle.ts, client-go `rest.Config{QPS, Burst}`): tryAccept
 *   while tokens are there, then reserve for the next one, handed over when it is due.
 * All start full unless `initialTokens` says otherwise.
 *
 * Why this is our own token bucket and not `bottleneck` (the project's default rate limiter):
 * - Bottleneck's API is async only. Every call, even `currentReservoir()`, awaits `setTimeout(0)`,
 *   but upstream's `Try` loop needs a non-blocking, synchronous `TryAccept()` that it can call
 *   under its lock, in step with the queue head.
 * - Bottleneck refills its reservoir from a 250 ms heartbeat timer, so a refill happens up to
 *   250 ms late and rates above 4/s need `reservoirIncreaseAmount` tricks. Upstream's bucket
 *   refills continuously.
 * - Bottleneck reads real time and real timers. It cannot be driven by an injected clock, so
 *   unit tests would need fake timers and would deadlock if they forgot to tick
 *   (typescript-notes.md §2.2).
 * - Swapping the rate with `updateSettings()` permanently stops reservoir refill
 *   (SGrondin/bottleneck#185, still open), so a swap would mean building a new instance and
 *   `stop()`-ing the old one anyway.
 * A bucket of about 40 lines that reads `clock.now()` has none of these problems. It also
 * meters the API write throttle (src/kube/throttle.ts `ApiWriteThrottle`, {@link TokenBucket.reserve}
 * and {@link TokenBucket.tryAccept}), where bottleneck keeps only the priority order and the
 * in-flight cap: bottleneck's own heartbeat refill admitted about 18 of 20 writes/s (measured by the bench).
 */
import type { Clock } from './clock.js';

/**
 * Tolerance when comparing the fractional token count with 1. Without it, float rounding in
 * `elapsedMs * qps / 1000` could refuse a token that is exactly due. It is about a nanosecond's
 * worth of tokens at 1 token/s.
 */
const TOKEN_EPSILON = 1e-9;

/** A non-blocking rate limiter (client-go `flowcontrol.RateLimiter`'s `TryAccept` and `QPS`). */
export interface RateLimiter {
  /**
   * Takes one token if one is available right now. Never blocks.
   * @returns true if the caller may act now.
   */
  tryAccept(): boolean;
  /** Configured rate in tokens per **second**. 0 means never; `Infinity` means always. */
  readonly qps: number;
}

/** Options of {@link TokenBucket}. */
export interface TokenBucketOptions {
  /**
   * Tokens at construction, clamped to [0, burst]. Default `burst`: the bucket starts full, as
   * `rate.NewLimiter` does. `0` starts it empty (the first token comes `1/qps` s later).
   */
  initialTokens?: number;
}

/**
 * A token bucket with a fixed rate. It starts full (`burst` tokens, unless
 * {@link TokenBucketOptions.initialTokens}) and refills continuously at `qps` tokens per second,
 * up to `burst`. State is written only when a token is taken, so rounding does not build up
 * across refused calls, and a clock that steps backwards refills nothing (x/time/rate `advance`).
 *
 * Mirrors `flowcontrol.NewTokenBucketRateLimiter(qps, burst)` over `rate.NewLimiter`.
 */
export class TokenBucket implements RateLimiter {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  /** Tokens at #last; negative while reservations are in debt. */
  #tokens: number;
  /** epoch ms of the last token taken (or of construction). */
  #last: number;

  /**
   * @param clock time source (epoch milliseconds).
   * @param qps refill rate in tokens per **second**; must be finite and > 0.
   * @param burst bucket size in tokens, a positive integer (default 1).
   * @param opts see {@link TokenBucketOptions}.
   * @throws {RangeError} when `qps` is not finite and > 0, or `burst` is not a positive integer.
   */
  constructor(clock: Clock, qps: number, burst = 1, opts: TokenBucketOptions = {}) {
    if (!Number.isFinite(qps) || qps <= 0) throw new RangeError(`TokenBucket: qps must be finite and > 0, got ${qps}`);
    if (!Number.isInteger(burst) || burst < 1) throw new RangeError(`TokenBucket: burst must be a positive integer, got ${burst}`);
    this.#clock = clock;
    this.qps = qps;
    this.burst = burst;
    this.#tokens = Math.min(burst, Math.max(0, opts.initialTokens ?? burst));
    this.#last = clock.now();
  }

  /** Tokens available now (fractional, at most burst; negative while in debt). For status output and tests. */
  tokens(): number {
    return this.#available(this.#clock.now());
  }

  /**
   * Takes one token if at least one is available; never goes into debt.
   * Mirrors `tokenBucketRateLimiter.TryAccept` (`rate.Limiter.AllowN(now, 1)`).
   * @returns true if a token was taken.
   */
  tryAccept(): boolean {
    const now = this.#clock.now();
    const available = this.#available(now);
    if (available < 1 - TOKEN_EPSILON) return false;
    this.#tokens = Math.max(0, available - 1);
    this.#last = now;
    return true;
  }

  /**
   * Takes one token now, going into debt when none is available, and says how long the caller
   * must wait for it. Mirrors `rate.Limiter.Reserve().Delay()` as client-go's
   * `TypedBucketRateLimiter.When` uses it.
   * @returns the wait in **milliseconds**, 0 when a token was available.
   */
  reserve(): number {
    const now = this.#clock.now();
    const t = this.#available(now) - 1;
    this.#tokens = t;
    this.#last = now;
    return t >= 0 ? 0 : (-t * 1000) / this.qps;
  }

  /**
   * How long until `n` tokens are available, without taking any: what a caller that wants several
   * tokens at once waits for (src/kube/throttle.ts, Event writes in batches). `n` is clamped to
   * [1, burst], since the bucket never holds more than `burst`.
   * @param n tokens wanted.
   * @returns the wait in **milliseconds**, 0 when `n` tokens are there now.
   */
  msUntil(n: number): number {
    const need = Math.max(1, Math.min(n, this.burst)) - this.#available(this.#clock.now());
    return need <= 0 ? 0 : (need * 1000) / this.qps;
  }

  #available(now: number): number {
    const elapsedMs = Math.max(0, now - this.#last);
    return Math.min(this.burst, this.#tokens + (elapsedMs * this.qps) / 1000);
  }
}

/**
 * Accepts nothing. Mirrors `flowcontrol.NewFakeNeverRateLimiter()`.
 *
 * Deliberate difference from upstream: `qps` is 0, not 1. Upstream's fake-never limiter reports
 * QPS 1, so after `SwapLimiter(0)` a later `SwapLimiter(1)` is a no-op and the zone stays
 * stopped. Reporting 0 makes that swap take effect, and shows the real rate in status output.
 */
export const neverRateLimiter: RateLimiter = Object.freeze({ qps: 0, tryAccept: () => false });

/**
 * Accepts everything. Mirrors `flowcontrol.NewFakeAlwaysRateLimiter()`, which upstream's queue
 * tests use. Its `qps` is `Infinity`; upstream's reports 1.
 */
export const alwaysRateLimiter: RateLimiter = Object.freeze({ qps: Infinity, tryAccept: () => true });

/**
 * Builds the limiter for a rate: `qps <= 0` gives {@link neverRateLimiter}, `Infinity` gives
 * {@link alwaysRateLimiter}, anything else a full {@link TokenBucket}.
 * @param qps tokens per **second**.
 * @param burst bucket size in tokens (default 1).
 * @throws {RangeError} when `qps` is NaN, or `burst` is not a positive integer.
 */
export function rateLimiterFor(clock: Clock, qps: number, burst = 1): RateLimiter {
  if (Number.isNaN(qps)) throw new RangeError('rateLimiterFor: qps is NaN');
  if (qps <= 0) return neverRateLimiter;
  if (qps === Infinity) return alwaysRateLimiter;
  return new TokenBucket(clock, qps, burst);
}
