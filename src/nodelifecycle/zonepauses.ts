/**
 * The explanations of zone pauses (deliberate difference 4 of docs/node-lifecycle.md): every time
 * the zone part (tainting.ts) pauses or slows NoExecute tainting in a zone, or the all-zones stop
 * begins or ends, it says so with a Warning (or Normal) Event on a node of the zone, a log line and
 * the `node_collector_zone_eviction_paused{zone,reason}` gauge; the reason is kept for the view.
 *
 * Ours, not upstream's: upstream `handleDisruption` (`pkg/controller/nodelifecycle/
 * node_lifecycle_controller.go`) only logs the zone state transitions. The decisions are the pure
 * {@link DisruptionPause}s of zones.ts; this file only reports them.
 */
import type { NodeHealthReader, ZoneTaintingDeps } from './parts.js';
import { formatZoneKey, type DisruptionPause } from './zones.js';

/** The deps the pause explanations use: the zone part's, narrowed. */
export type ZonePausesDeps = Pick<ZoneTaintingDeps, 'log' | 'events'> & { metrics: Pick<ZoneTaintingDeps['metrics'], 'zoneEvictionPaused'> };

/** The `reason` label values of `node_collector_zone_eviction_paused`. */
const PAUSE_REASONS = ['partial-disruption', 'all-zones-fully-disrupted'] as const;

/** The zones whose tainting is paused, and why. Never throws. */
export class ZonePauses {
  readonly #d: ZonePausesDeps;
  readonly #health: Pick<NodeHealthReader, 'lastReady' | 'registration'>;
  readonly #pausedReasons = new Map<string, string>();

  /** @param deps events, log, the gauge; @param health which node of a zone the Event goes on. */
  constructor(deps: ZonePausesDeps, health: Pick<NodeHealthReader, 'lastReady' | 'registration'>) {
    this.#d = deps;
    this.#health = health;
  }

  /** Why tainting in the zone is paused or slowed (undefined: it is not), for the view. */
  reason(zone: string): string | undefined {
    return this.#pausedReasons.get(zone);
  }

  /**
   * Explains one pause of a recompute with a Warning Event (Normal for `all-zones-resumed`), a log
   * line and the gauge. A pause without a zone applies to every zone of `nodesByZone`.
   * @param nodesByZone the registered nodes of each zone that take part in zone disruption.
   */
  explain(pause: DisruptionPause, nodesByZone: ReadonlyMap<string, readonly string[]>): void {
    const zones = pause.zone !== undefined ? [pause.zone] : [...nodesByZone.keys()];
    const reasonLabel = pause.kind === 'zone-stopped' || pause.kind === 'zone-slowed' ? 'partial-disruption' : 'all-zones-fully-disrupted';
    const eventReason =
      pause.kind === 'zone-stopped'
        ? 'ZoneEvictionPaused'
        : pause.kind === 'zone-slowed'
          ? 'ZoneEvictionSlowed'
          : pause.kind === 'all-zones-stopped'
            ? 'AllZonesDisrupted'
            : 'AllZonesRecovered';
    for (const zone of zones) {
      if (pause.kind === 'all-zones-resumed') this.clear(zone, reasonLabel);
      else {
        this.#pausedReasons.set(zone, pause.reason);
        this.#d.metrics.zoneEvictionPaused.set({ zone, reason: reasonLabel }, 1);
      }
      // The event goes on one node of the zone (preferably a not-Ready one), so `kubectl describe
      // node` of a dead node says why it is not being tainted.
      const names = [...(nodesByZone.get(zone) ?? [])].sort();
      const target = names.find((n) => this.#health.lastReady(n) !== 'True') ?? names[0];
      const info = target !== undefined ? this.#health.registration(target) : undefined;
      if (target !== undefined && info) {
        this.#d.events.record(
          { kind: 'Node', name: target, uid: info.uid },
          pause.kind === 'all-zones-resumed' ? 'Normal' : 'Warning',
          eventReason,
          pause.reason,
        );
      }
    }
    this.#d.log.warn({ zone: pause.zone !== undefined ? formatZoneKey(pause.zone) : undefined, kind: pause.kind }, pause.reason);
  }

  /**
   * The zone is no longer paused: forgets its reason and sets the gauge to 0 for every reason, or
   * for `only`. Does nothing for a zone that is not paused.
   */
  clear(zone: string, only?: string): void {
    if (!this.#pausedReasons.has(zone)) return;
    this.#pausedReasons.delete(zone);
    for (const reason of PAUSE_REASONS) {
      if (only === undefined || only === reason) this.#d.metrics.zoneEvictionPaused.set({ zone, reason }, 0);
    }
  }
}
