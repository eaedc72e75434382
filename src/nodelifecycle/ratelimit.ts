/**
 * The per-zone NoExecute tainting rate limiter: the project's token bucket
 * (src/util/tokenbucket.ts) behind a rate that can be swapped without handing out a free token.
 *
 * Mirrors `RateLimitedTimedQueue.SwapLimiter` in
 * `pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go`, over client-go
 * `util/flowcontrol/throttle.go` limiters.
 */
import type { Clock } from '../util/clock.js';
import { TokenBucket, rateLimiterFor, type RateLimiter } from '../util/tokenbucket.js';

/**
 * Burst of every per-zone eviction limiter.
 * Mirrors `scheduler.EvictionRateLimiterBurst` (rate_limited_queue.go).
 */
export const EVICTION_RATE_LIMITER_BURST = 1;

/** How far ahead (milliseconds of refill) {@link SwappableTokenBucket.tryAccept} looks for a token before it skips its hook. */
export const TOKEN_LOOKAHEAD_MS = 100;

/** A {@link RateLimiter} whose rate can be replaced while it is in use. */
export interface SwappableRateLimiter extends RateLimiter {
  /**
   * Replaces the rate (tokens per **second**). Does nothing if it equals the current rate.
   * @returns true if the limiter changed.
   */
  swap(newQps: number): boolean;
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
  readonly #beforeToken: (() => void) | undefined;

  /**
   * @param clock time source (epoch milliseconds).
   * @param qps initial rate in tokens per **second**: `<= 0` never accepts, `Infinity` always
   *   accepts (for tests), anything else starts as a full bucket.
   * @param burst bucket size (default {@link EVICTION_RATE_LIMITER_BURST}).
   * @param beforeToken called by {@link tryAccept} before it could hand out a token (the
   *   zone part recomputes zone states there if a Ready flip is pending, which may {@link swap} this
   *   limiter first). Not called while no token can come within {@link TOKEN_LOOKAHEAD_MS}.
   * @throws {RangeError} when `qps` is NaN or `burst` is not a positive integer.
   */
  constructor(clock: Clock, qps: number, burst = EVICTION_RATE_LIMITER_BURST, beforeToken?: () => void) {
    this.#clock = clock;
    this.#burst = burst;
    this.#current = rateLimiterFor(clock, qps, burst);
    this.#beforeToken = beforeToken;
  }

  /** Current rate in tokens (nodes) per **second** (0 = never, `Infinity` = always). */
  get qps(): number {
    return this.#current.qps;
  }

  /**
   * Takes a token from the current limiter. See {@link RateLimiter.tryAccept}. Calls the
   * constructor's `beforeToken` first unless no token can be available now: the rate is 0, or the
   * bucket is more than {@link TOKEN_LOOKAHEAD_MS} of refill short of one (a margin, so that time
   * passing between the check and the take cannot slip a token past the hook).
   */
  tryAccept(): boolean {
    if (this.#beforeToken && this.qps > 0 && this.tokens() + (this.qps * TOKEN_LOOKAHEAD_MS) / 1000 >= 1) this.#beforeToken();
    return this.#current.tryAccept();
  }

  /** True when a token is available now (what {@link tryAccept} would take). */
  hasToken(): boolean {
    return this.tokens() >= 1;
  }

  /** Takes the token if there is one, without calling `beforeToken`: the bucket is left with none. */
  drain(): void {
    this.#current.tryAccept();
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
