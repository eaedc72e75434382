/**
 * The taint eviction controller's record of when it could not see the cluster, and the pure rule
 * that holds a deletion whose deadline passed during that time (the blind-time rule: time the controller could not see the cluster never counts).
 *
 * No upstream counterpart: kube-controller-manager's taint manager fires its in-memory timers
 * blindly, and during an API outage the deletion fails and is given up after five tries
 * (kubernetes/kubernetes#140639). Ours retries until done and anchors deadlines on the taint's
 * `timeAdded` (#108268), so without this rule it would delete, the moment sight returns, every pod
 * whose toleration ran out during the outage — before the node lifecycle controller has seen the
 * node's heartbeat again and removed the taint. See docs/taint-eviction.md, "Deliberate
 * differences", for the rule and why it can only delay.
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
 * What the decision needs to know about sight. `lastBlind` is the most recent blind interval that
 * has ended (`undefined`: none since the controller started); `holdMs` is how long after sight
 * returned the node lifecycle controller needs to re-judge a node (`--node-monitor-grace-period`),
 * in **milliseconds**.
 */
export interface SightInput {
  lastBlind: BlindInterval | undefined;
  holdMs: number;
}

/**
 * When a deletion that became due at `dueMs` (epoch ms) may run, given sight: `undefined` when it
 * need not wait; otherwise `lastBlind.toMs + holdMs` (epoch ms).
 *
 * The rule: a deletion due at or before the end of the last blind interval waits until sight has
 * been back for a full `holdMs` (the node monitor grace period). By then the node lifecycle
 * controller, which gives every node a fresh grace period when sight returns (nodelifecycle
 * controller.ts `#checkSight`), has either seen the node heartbeat and removed the taint, or not;
 * the caller re-decides on the taints it sees then. Only the *last* interval matters: a deletion
 * due before an earlier interval is due before the last one too, and waiting for the later end
 * covers both.
 *
 * Pure; never throws. Mirrors nothing upstream (see the module comment).
 */
export function sightHoldUntilMs(dueMs: number, sight: SightInput | undefined): number | undefined {
  if (sight?.lastBlind === undefined || dueMs > sight.lastBlind.toMs) return undefined;
  return sight.lastBlind.toMs + sight.holdMs;
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
 * src/cli/run.ts, 2 s).
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
