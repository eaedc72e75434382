/**
 * When a Ready node counts as silent: the bound of deliberate difference 3 of
 * docs/node-lifecycle.md, which counts a long-silent Ready node as not Ready when zone states are
 * computed, so that nodes that died together are counted together (it may only pause or slow
 * tainting). Pure; the zone part (tainting.ts) applies it.
 *
 * The count must never fire on a healthy cluster: a node whose kubelet renews its Lease at the
 * normal interval is never silent, at any grace period. Upstream has no such count; the renewal
 * interval is the kubelet's, `pkg/kubelet/kubelet.go` (`nodeLeaseRenewIntervalFraction = 0.25` of
 * `nodeLeaseDurationSeconds`, default 40 s → 10 s) and `staging/src/k8s.io/component-helpers/
 * apimachinery/lease/controller.go` (`wait.JitterUntilWithContext(ctx, c.sync, c.renewInterval,
 * 0.04, true)`: each wait is up to 4 % longer, and sliding, so it starts after the renewal's own
 * round trip).
 */
import type { Logger } from '../log/logger.js';
import type { DisruptionPause } from './zones.js';

/** `nodeLeaseRenewIntervalFraction` of pkg/kubelet/kubelet.go: the kubelet renews every quarter of the Lease's duration. */
export const KUBELET_RENEW_FRACTION = 0.25;
/** The jitter factor of the kubelet's Lease controller (`wait.JitterUntil`, 0.04): a wait is up to 4 % longer. */
export const KUBELET_RENEW_JITTER = 0.04;
/**
 * Milliseconds allowed on top of the jittered interval for the renewal's own round trip (the wait
 * starts after it) and for the watch delivering it to this controller. Generous for a healthy API
 * server: a burst of lockstep renewals (every kubelet retrying after an API server restart) at
 * 1,000 nodes is delivered well within it.
 */
export const RENEWAL_LAG_MARGIN_MS = 2000;
/**
 * The kubelet's default `nodeLeaseDurationSeconds`, used for a node whose Lease is not (yet) in the
 * cache or does not say (`spec.leaseDurationSeconds` absent or not positive).
 */
export const DEFAULT_LEASE_DURATION_SECONDS = 40;

/**
 * How long a Ready node's kubelet may stay silent while renewing normally: the renew interval
 * (a quarter of the Lease's duration) with its 4 % jitter, plus {@link RENEWAL_LAG_MARGIN_MS}.
 * @param leaseDurationSeconds the node's Lease `spec.leaseDurationSeconds`; undefined, 0 or
 *   negative means the kubelet default (40 s).
 * @returns **milliseconds** (12,400 for a 40 s Lease). Never throws.
 */
export function normalRenewalGapMs(leaseDurationSeconds: number | undefined): number {
  const seconds = leaseDurationSeconds !== undefined && leaseDurationSeconds > 0 ? leaseDurationSeconds : DEFAULT_LEASE_DURATION_SECONDS;
  return seconds * 1000 * KUBELET_RENEW_FRACTION * (1 + KUBELET_RENEW_JITTER) + RENEWAL_LAG_MARGIN_MS;
}

/**
 * The probe age beyond which a Ready node counts as silent (not Ready) for zone states: the larger
 * of half the grace period and {@link normalRenewalGapMs}, so a node renewing at its kubelet's
 * normal interval never counts. Where that is not shorter than the grace period, the count cannot
 * tell a silent node from a healthy one before the node is judged anyway, so it is off (undefined).
 * The caller counts a node silent when `now - probeTimestamp > threshold` (strictly).
 * @param gracePeriodMs `--node-monitor-grace-period`, **milliseconds**.
 * @param leaseDurationSeconds the node's Lease `spec.leaseDurationSeconds` (undefined: 40 s default).
 * @returns **milliseconds**, or undefined when the count is off for this node. Never throws.
 */
export function silentAfterMs(gracePeriodMs: number, leaseDurationSeconds: number | undefined): number | undefined {
  const threshold = Math.max(gracePeriodMs / 2, normalRenewalGapMs(leaseDurationSeconds));
  return threshold < gracePeriodMs ? threshold : undefined;
}

/**
 * The silent-Ready count of one controller: {@link silentAfterMs} at its grace period, and the log
 * lines that say where the count is off. Not upstream (deliberate difference 3).
 */
export class SilentReadyCount {
  readonly #graceMs: number;
  readonly #log: Logger;
  /** Lease durations (seconds) for which the count was logged as off. */
  readonly #offLogged = new Set<number>();

  /** @param gracePeriodMs `--node-monitor-grace-period`, **milliseconds**; @param log where "off" is said. Never throws. */
  constructor(gracePeriodMs: number, log: Logger) {
    this.#graceMs = gracePeriodMs;
    this.#log = log;
  }

  /** At start: says once if the count is off for nodes with the kubelet's default 40 s Lease. */
  logIfOff(): void {
    if (silentAfterMs(this.#graceMs, DEFAULT_LEASE_DURATION_SECONDS) === undefined) this.#sayOff(DEFAULT_LEASE_DURATION_SECONDS);
  }

  /**
   * Whether a Ready node with this probe age counts as silent: strictly older than
   * {@link silentAfterMs}. Where the count is off for the node's Lease duration, false, and the
   * first such duration seen is logged once.
   * @param probeAgeMs now minus the node's probe timestamp, **milliseconds**.
   * @param leaseDurationSeconds the node's cached Lease `spec.leaseDurationSeconds` (undefined: none seen, 40 s).
   */
  isSilent(probeAgeMs: number, leaseDurationSeconds: number | undefined): boolean {
    const after = silentAfterMs(this.#graceMs, leaseDurationSeconds);
    if (after === undefined) {
      this.#sayOff(leaseDurationSeconds !== undefined && leaseDurationSeconds > 0 ? leaseDurationSeconds : DEFAULT_LEASE_DURATION_SECONDS);
      return false;
    }
    return probeAgeMs > after;
  }

  #sayOff(leaseDurationSeconds: number): void {
    if (this.#offLogged.has(leaseDurationSeconds)) return;
    this.#offLogged.add(leaseDurationSeconds);
    this.#log.info(
      {
        leaseDurationSeconds,
        nodeMonitorGracePeriodSeconds: this.#graceMs / 1000,
        normalRenewalGapSeconds: normalRenewalGapMs(leaseDurationSeconds) / 1000,
      },
      'The silent-Ready count is off for nodes with this Lease duration: the grace period is not longer than the gap between two ' +
        'normal Lease renewals (a quarter of the Lease duration, plus jitter and a 2 s margin), so a silent node cannot be told from ' +
        'a healthy one; such a Ready node counts as Ready for zone states until the grace period judges it',
    );
  }
}

/**
 * A pause whose not-Ready counts include Ready nodes that the silent count took for not Ready
 * says how many, so the explanation does not call nodes that report Ready "not Ready" without
 * saying why. Zones decided on the real statuses add nothing.
 * @param pause a pause of `planDisruption` (zones.ts).
 * @param chosen per zone, the statuses the plan was made from (one of the lists below, or the real ones; not copied).
 * @param effective per zone, the statuses with silent nodes counted not Ready.
 * @param legacyEffective the same, in legacy mode, for 1.20's view (empty otherwise).
 * @param silentByZone per zone, how many Ready nodes counted silent.
 * @returns the pause, or a copy with one more sentence. Never throws.
 */
export function withSilentCount(
  pause: DisruptionPause,
  chosen: ReadonlyMap<string, readonly (string | undefined)[]>,
  effective: ReadonlyMap<string, readonly (string | undefined)[]>,
  legacyEffective: ReadonlyMap<string, readonly (string | undefined)[]>,
  silentByZone: ReadonlyMap<string, number>,
): DisruptionPause {
  if (pause.kind === 'all-zones-resumed') return pause;
  let silent = 0;
  for (const zone of pause.zone !== undefined ? [pause.zone] : [...chosen.keys()]) {
    const list = chosen.get(zone);
    if (list !== undefined && (list === effective.get(zone) || list === legacyEffective.get(zone))) silent += silentByZone.get(zone) ?? 0;
  }
  if (silent === 0) return pause;
  return {
    ...pause,
    reason:
      `${pause.reason} ${silent} of the nodes counted not Ready still report Ready but have sent no heartbeat for longer than ` +
      `their kubelet's Lease renewals allow (and at least half the grace period), so they are counted with the nodes that ` +
      `died with them (this may only pause or slow tainting).`,
  };
}
