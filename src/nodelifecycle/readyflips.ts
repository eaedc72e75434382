/**
 * The pending Ready flips of the zone part (tainting.ts): zone states are recomputed lazily, not
 * on every Ready flip, because a mass failure flips n nodes and each recompute visits all n. This
 * file keeps the flips that have not reached the zone states yet, and the correction that keeps
 * one recompute for several flips from handing out a token that one recompute per flip would not
 * have ({@link drainPassedThroughLowerRate}). When the zone part recomputes is its own decision
 * (`ZoneTainting.readyFlipped`).
 *
 * Ours, not upstream's: upstream recomputes zone states once per monitor pass
 * (`handleDisruption` in `pkg/controller/nodelifecycle/node_lifecycle_controller.go`). No I/O;
 * times are epoch **milliseconds** passed in by the caller.
 */
import { countReady, lowestZoneRate, type DisruptionConfig } from './zones.js';

/**
 * The longest a Ready flip waits before the tainting pass recomputes zone states on its own, in
 * milliseconds. Readers that could act on a stale state recompute first whatever the age
 * (`ZoneTainting.readyFlipped`); this only bounds how stale the views, metrics and pause
 * explanations get during a long burst of flips.
 */
export const PENDING_FLIPS_MAX_AGE_MS = 1000;

/** Ready flips not yet in the zone states. */
export interface PendingFlips {
  /** When the first of them happened, epoch ms. */
  sinceMs: number;
  flips: number;
  /** Zones whose limiter had no token at `sinceMs`: a swap then would have drained the new one. */
  noTokenAtStart: Set<string>;
  /** Per zone, flips from Ready (`down`) and to Ready (`up`). */
  byZone: Map<string, { down: number; up: number }>;
}

/** A zone's node count and Ready counts (upstream's, and the stricter one of deliberate difference 3) at a recompute. */
export interface ZoneCounts {
  size: number;
  real: number;
  effective: number;
}

/** What a zone limiter must answer here (implemented by `SwappableTokenBucket`, ratelimit.ts). */
export interface FlipLimiter {
  /** Whether a token is available now. */
  hasToken(): boolean;
  /** Empties the bucket. */
  drain(): void;
  /** Current rate, tokens per second. */
  readonly qps: number;
}

/** The Ready flips since zone states were last computed. Never throws. */
export class PendingReadyFlips {
  #pending: PendingFlips | undefined;

  /** True while some flip has not reached the zone states. */
  get any(): boolean {
    return this.#pending !== undefined;
  }

  /** True when the oldest pending flip is at least {@link PENDING_FLIPS_MAX_AGE_MS} old at `nowMs` (epoch ms). */
  overdue(nowMs: number): boolean {
    return this.#pending !== undefined && nowMs - this.#pending.sinceMs >= PENDING_FLIPS_MAX_AGE_MS;
  }

  /**
   * Records one flip of a node in `zone` from Ready status `from` to `to`. The first flip of a
   * burst notes the time and which zone limiters have no token then: O(zones); later ones O(1).
   * @param nowMs epoch ms; @param limiters every zone's limiter, by zone key.
   */
  record(zone: string, from: string | undefined, to: string | undefined, nowMs: number, limiters: ReadonlyMap<string, FlipLimiter>): void {
    if (!this.#pending) {
      const noTokenAtStart = new Set<string>();
      for (const [z, limiter] of limiters) if (!limiter.hasToken()) noTokenAtStart.add(z);
      this.#pending = { sinceMs: nowMs, flips: 0, noTokenAtStart, byZone: new Map() };
    }
    this.#pending.flips++;
    let counts = this.#pending.byZone.get(zone);
    if (!counts) this.#pending.byZone.set(zone, (counts = { down: 0, up: 0 }));
    if (from === 'True' && to !== 'True') counts.down++;
    if (to === 'True' && from !== 'True') counts.up++;
  }

  /** Hands over the pending flips (undefined: none) and forgets them: a recompute is taking them in. */
  take(): PendingFlips | undefined {
    const pending = this.#pending;
    this.#pending = undefined;
    return pending;
  }
}

/** Per zone, the {@link ZoneCounts} of these statuses (`effective`: the same nodes, stricter). */
export function zoneCounts(
  real: ReadonlyMap<string, (string | undefined)[]>,
  effective: ReadonlyMap<string, (string | undefined)[]>,
): Map<string, ZoneCounts> {
  const out = new Map<string, ZoneCounts>();
  for (const [zone, statuses] of real) out.set(zone, { size: statuses.length, real: countReady(statuses), effective: countReady(effective.get(zone) ?? statuses) });
  return out;
}

/**
 * Recomputing once for several Ready flips must not hand out a token that recomputing on each
 * would not have. Each would have passed the zone through every Ready count between the two
 * recomputes; if one of those gives a lower rate than the zone has now (a small zone dying goes
 * Normal, PartialDisruption at rate 0, FullDisruption), a swap to it and back may have left the
 * zone's bucket empty, so it is emptied now. Can only delay the zone's next token.
 * @param pending the flips the recompute took in; @param before the counts of the recompute
 * before (keys are zone keys, or `legacy/<zone>` for 1.20's view); @param now this recompute's
 * counts, keyed alike; @param limiters every zone's limiter; @param cfg the rate configuration.
 */
export function drainPassedThroughLowerRate(
  pending: PendingFlips,
  before: ReadonlyMap<string, ZoneCounts>,
  now: ReadonlyMap<string, ZoneCounts>,
  limiters: ReadonlyMap<string, FlipLimiter>,
  cfg: DisruptionConfig,
): void {
  for (const [key, counts] of now) {
    const zone = key.startsWith('legacy/') ? key.slice('legacy/'.length) : key;
    const limiter = limiters.get(zone);
    if (!limiter || limiter.qps <= 0) continue;
    const earlier = before.get(key);
    const flips = pending.byZone.get(zone) ?? { down: 0, up: 0 };
    // A zone that changed size is checked over every Ready count.
    const same = earlier !== undefined && earlier.size === counts.size;
    const lo = same ? Math.min(earlier.real - flips.down, earlier.effective - flips.down, counts.real, counts.effective) : 0;
    const hi = same ? Math.max(earlier.real + flips.up, earlier.effective + flips.up, counts.real, counts.effective) : counts.size;
    // Through rate 0 the bucket comes back empty; through a lower positive rate it comes back
    // full only if it had a token when the first flip happened (no token is taken meanwhile).
    const lowest = lowestZoneRate(counts.size, lo, hi, cfg);
    if (lowest <= 0 || (lowest < limiter.qps && pending.noTokenAtStart.has(zone))) limiter.drain();
  }
}
