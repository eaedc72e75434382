/**
 * When this process could not see the cluster: the blind intervals of one controller, recorded from
 * its caches' watch-stream transitions (`SourceHandlers.watching`) as they happen, not when a
 * periodic pass samples them. Shared by the taint eviction controller (its sight hold,
 * src/tainteviction/blindhold.ts) and the node lifecycle controller (sight's return re-judges every
 * node, src/nodelifecycle/monitor.ts): the safety rule's "never act on time during which it could
 * not see the cluster, nor on a view older than its last outage". No upstream counterpart
 * (kube-controller-manager's informers and timers run blind).
 */

/**
 * A stretch of time during which the controller could not see the cluster (an informer it reads
 * was not synced or had no watch stream), epoch **milliseconds**: blind from `fromMs`, sight
 * regained at `toMs`.
 */
export interface BlindInterval {
  fromMs: number;
  toMs: number;
}

/**
 * Remembers the blind intervals of one controller from sight transitions. Feed it every
 * transition (and harmless repeats) with {@link observe}; read {@link lastBlind}.
 *
 * A blind stretch shorter than `minBlindMs` is not recorded: a watch stream reconnects every few
 * minutes (server timeouts) or every 30 s on a quiet collection (client-node's inactivity timer),
 * and resumes from its resourceVersion within milliseconds, so nothing was missed; holding every
 * due deletion for a grace period after each reconnect would stall mass evictions for nothing.
 * The default matches the node lifecycle controller's threshold (`BLIND_AFTER_MS` in
 * src/controllers/registry.ts, 2 s).
 *
 * The time before the controller first saw the cluster is not a blind interval: deadlines are
 * restart-safe (deliberate difference 1 in docs/taint-eviction.md).
 */
export class SightTracker {
  readonly #minBlindMs: number;
  /** When sight was lost (ms on the caller's clock: the controller passes monotonic readings); `undefined` while seeing. */
  #blindSinceMs: number | undefined;
  #seen = false;
  #firstSeenMs: number | undefined;
  #last: BlindInterval | undefined;

  /**
   * @param minBlindMs shortest blind stretch that counts, milliseconds (default 2000).
   * @throws {RangeError} when `minBlindMs` is negative or not finite.
   */
  constructor(minBlindMs = DEFAULT_MIN_BLIND_MS) {
    if (!Number.isFinite(minBlindMs) || minBlindMs < 0) throw new RangeError(`sight: minimum blind time must be >= 0 ms, got ${minBlindMs}`);
    this.#minBlindMs = minBlindMs;
  }

  /**
   * Records whether the controller sees the cluster at `nowMs` (ms on the caller's clock: the controller passes monotonic readings and converts intervals back to wall time when it decides). Idempotent for repeats.
   * @returns the interval that just ended and was recorded, else `undefined`.
   */
  observe(seeing: boolean, nowMs: number): BlindInterval | undefined {
    if (!seeing) {
      if (this.#seen && this.#blindSinceMs === undefined) this.#blindSinceMs = nowMs;
      return undefined;
    }
    this.#seen = true;
    this.#firstSeenMs ??= nowMs;
    const since = this.#blindSinceMs;
    this.#blindSinceMs = undefined;
    if (since === undefined || nowMs - since < this.#minBlindMs) return undefined;
    this.#last = { fromMs: since, toMs: nowMs };
    return this.#last;
  }

  /** The most recent recorded blind interval, or `undefined`. */
  lastBlind(): BlindInterval | undefined {
    return this.#last;
  }

  /** When (ms on the clock passed to `observe`) the controller first saw the cluster, or `undefined` before that. */
  firstSeenMs(): number | undefined {
    return this.#firstSeenMs;
  }

  /** Since when (ms on the clock passed to `observe`) the controller has been blind, or `undefined` while it sees (or never saw). */
  blindSinceMs(): number | undefined {
    return this.#blindSinceMs;
  }
}

/** Default {@link SightTracker} threshold, milliseconds (the node lifecycle controller's `BLIND_AFTER_MS`). */
export const DEFAULT_MIN_BLIND_MS = 2000;
