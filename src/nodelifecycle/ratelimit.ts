/**
 * The per-zone NoExecute tainting rate limiter: a synchronous token bucket over the injected
 * {@link Clock}, whose rate can be swapped without handing out a free token.
 *
 * Mirrors client-go `util/flowcontrol/throttle.go` (`NewTokenBucketRateLimiter`,
 * `NewFakeAlwaysRateLimiter`, `NewFakeNeverRateLimiter`), which wraps `golang.org/x/time/rate`,
 * and `RateLimitedTimedQueue.SwapLimiter` in `pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go`.
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
 * A bucket of about 40 lines that reads `clock.now()` has none of these problems. Bottleneck is
 * still used for API write throttling, where async scheduling is what we want.
 */
import type { Clock } from '../util/clock.js';

/**
 * Burst of every per-zone eviction limiter.
 * Mirrors `scheduler.EvictionRateLimiterBurst` (rate_limited_queue.go).
 */
export const EVICTION_RATE_LIMITER_BURST = 1;

/**
 * Tolerance when comparing the fractional token count with 1. Without it, float rounding in
 * `elapsedMs * qps / 1000` could refuse a token that is exactly due. It is about a nanosecond's
 * worth of tokens at 1 token/s.
 */
const TOKEN_EPSILON = 1e-9;

/** A non-blocking rate limiter. */
export interface RateLimiter {
  /**
   * Takes one token if one is available right now. Never blocks.
   * @returns true if the caller may act now.
   */
  tryAccept(): boolean;
  /** Configured rate in tokens (nodes) per **second**. 0 means never; `Infinity` means always. */
  readonly qps: number;
}

/** A {@link RateLimiter} whose rate can be replaced while it is in use. */
export interface SwappableRateLimiter extends RateLimiter {
  /**
   * Replaces the rate (tokens per **second**). Does nothing if it equals the current rate.
   * @returns true if the limiter changed.
   */
  swap(newQps: number): boolean;
}

/**
 * A token bucket with a fixed rate. It starts full (`burst` tokens) and refills continuously at
 * `qps` tokens per second, up to `burst`.
 *
 * Mirrors `flowcontrol.NewTokenBucketRateLimiter(qps, burst)` over `rate.NewLimiter`: `TryAccept`
 * is `AllowN(now, 1)`, and state is only written when a token is taken, so rounding does not
 * build up across refused calls.
 */
export class TokenBucket implements RateLimiter {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  /** epoch ms of the last accepted token (or of construction). */
  #last: number;

  /**
   * @param clock time source (epoch milliseconds).
   * @param qps refill rate in tokens per **second**; must be finite and > 0.
   * @param burst bucket size in tokens, a positive integer (default {@link EVICTION_RATE_LIMITER_BURST}).
   * @param initialTokens tokens at construction (default `burst`, a full bucket), clamped to [0, burst].
   * @throws {RangeError} when `qps` is not finite and > 0, or `burst` is not a positive integer.
   */
  constructor(clock: Clock, qps: number, burst = EVICTION_RATE_LIMITER_BURST, initialTokens = burst) {
    if (!Number.isFinite(qps) || qps <= 0) throw new RangeError(`TokenBucket: qps must be finite and > 0, got ${qps}`);
    if (!Number.isInteger(burst) || burst < 1) throw new RangeError(`TokenBucket: burst must be a positive integer, got ${burst}`);
    this.#clock = clock;
    this.qps = qps;
    this.burst = burst;
    this.#tokens = Math.min(burst, Math.max(0, initialTokens));
    this.#last = clock.now();
  }

  /** Tokens available now (fractional, in [0, burst]). For status output and tests. */
  tokens(): number {
    // A clock that steps backwards refills nothing, as in x/time/rate's `advance`.
    const elapsedMs = Math.max(0, this.#clock.now() - this.#last);
    return Math.min(this.burst, this.#tokens + (elapsedMs * this.qps) / 1000);
  }

  /** Takes one token if at least one is available. See {@link RateLimiter.tryAccept}. */
  tryAccept(): boolean {
    const available = this.tokens();
    if (available < 1 - TOKEN_EPSILON) return false;
    this.#tokens = Math.max(0, available - 1);
    this.#last = this.#clock.now();
    return true;
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
 * @throws {RangeError} when `qps` is NaN, or `burst` is not a positive integer.
 */
export function rateLimiterFor(clock: Clock, qps: number, burst = EVICTION_RATE_LIMITER_BURST): RateLimiter {
  if (Number.isNaN(qps)) throw new RangeError('rateLimiterFor: qps is NaN');
  if (qps <= 0) return neverRateLimiter;
  if (qps === Infinity) return alwaysRateLimiter;
  return new TokenBucket(clock, qps, burst);
}

/**
 * The swappable token bucket used by each zone's {@link RateLimitedTimedQueue}.
 *
 * Mirrors the limiter half of `RateLimitedTimedQueue.SwapLimiter` (rate_limited_queue.go):
 * a swap to the same rate does nothing; a swap to `qps <= 0` installs a never-accepting limiter;
 * otherwise a new full bucket is installed, but if the old limiter had no token available the new
 * one is drained once, so swapping never hands out a free token. A swap from "never" to a positive
 * rate therefore gives a drained bucket, whose first token comes `1/qps` seconds later.
 */
export class SwappableTokenBucket implements SwappableRateLimiter {
  readonly #clock: Clock;
  readonly #burst: number;
  #current: RateLimiter;

  /**
   * @param clock time source (epoch milliseconds).
   * @param qps initial rate in tokens per **second**: `<= 0` never accepts, `Infinity` always
   *   accepts (for tests), anything else starts as a full bucket.
   * @param burst bucket size (default {@link EVICTION_RATE_LIMITER_BURST}).
   * @throws {RangeError} when `qps` is NaN or `burst` is not a positive integer.
   */
  constructor(clock: Clock, qps: number, burst = EVICTION_RATE_LIMITER_BURST) {
    this.#clock = clock;
    this.#burst = burst;
    this.#current = rateLimiterFor(clock, qps, burst);
  }

  /** Current rate in tokens (nodes) per **second** (0 = never, `Infinity` = always). */
  get qps(): number {
    return this.#current.qps;
  }

  /** Takes a token from the current limiter. See {@link RateLimiter.tryAccept}. */
  tryAccept(): boolean {
    return this.#current.tryAccept();
  }

  /**
   * Tokens available now: 0 for never, `Infinity` for always, else the bucket's fractional count.
   */
  tokens(): number {
    const c = this.#current;
    if (c instanceof TokenBucket) return c.tokens();
    return c.qps > 0 ? Infinity : 0;
  }

  /**
   * Installs a limiter for `newQps` (tokens per **second**). See the class comment for the rules.
   * @returns true if the limiter changed, false if `newQps` equals the current rate.
   * @throws {RangeError} when `newQps` is NaN.
   */
  swap(newQps: number): boolean {
    if (Number.isNaN(newQps)) throw new RangeError('SwappableTokenBucket.swap: qps is NaN');
    if (newQps === this.#current.qps) return false;
    const next = rateLimiterFor(this.#clock, newQps, this.#burst);
    // Upstream drains the new limiter when the old one has no token ("if we're currently waiting
    // on limiter, we drain the new one"). This also consumes the old token when there is one;
    // that is harmless because the old limiter is discarded.
    if (!this.#current.tryAccept()) next.tryAccept();
    this.#current = next;
    return true;
  }
}
