/**
 * The cluster-wide eviction guards' hold on the zone part (tainting.ts): owns the pure
 * {@link EvictionGuards} of guard.ts, feeds them each recompute's readiness, explains every guard
 * that opens or closes (the `node_collector_eviction_circuit_open{guard}` gauge, a log line and a
 * Warning Event on a Node, as zone pauses are explained) and arms the one timer that observes them
 * again when a guard can close, so a close does not wait for the next monitor pass.
 *
 * Ours, not upstream's (deliberate difference 19 of docs/node-lifecycle.md: it only delays or
 * reduces actions). The gate that asks {@link EvictionGuardHold.blocks} is `ZoneTainting.admits`.
 * {@link EvictionGuardHold.start} opens every configured guard when the controller starts acting
 * (a restart or failover must not forget a storm and resume tainting at once; difference 19a).
 */
import type { TimerHandle } from '../util/clock.js';
import { EvictionGuards, type EvictionGuardName, type EvictionGuardView, type GuardTransition } from './guard.js';
import type { NodeHealthReader, ZoneTaintingDeps } from './parts.js';

/** The deps the guards' hold uses: the zone part's, narrowed. */
export type EvictionGuardHoldDeps = Pick<ZoneTaintingDeps, 'clock' | 'log' | 'events'> & {
  config: Pick<ZoneTaintingDeps['config'], 'evictionGuards'>;
  metrics: Pick<ZoneTaintingDeps['metrics'], 'evictionCircuitOpen' | 'evictionCircuitStartHold'>;
};

/** What the hold asks of the zone part. */
export interface EvictionGuardHoldLinks {
  /** Which node a guard's Event goes on. */
  health: Pick<NodeHealthReader, 'registration' | 'registered'>;
  /** The recheck timer fired: observe the guards again (the zone part recomputes if it may). */
  recheck(): void;
  /** A guard closed and none blocks any more: held actions may go ahead now. */
  released(): void;
}

/** The eviction guards as the zone part applies them. Never throws. */
export class EvictionGuardHold {
  readonly #d: EvictionGuardHoldDeps;
  readonly #l: EvictionGuardHoldLinks;
  readonly #guards: EvictionGuards;
  /** The timer that observes the guards again when one can close. */
  #recheck: TimerHandle | undefined;
  /** Per open guard, the node its EvictionCircuitOpen Event went on (the close Event goes there too). */
  readonly #eventNode = new Map<EvictionGuardName, string>();

  /** Sets the gauge of every configured guard to 0. @param deps clock, log, events, the guards' config and gauge; @param links the zone part. */
  constructor(deps: EvictionGuardHoldDeps, links: EvictionGuardHoldLinks) {
    this.#d = deps;
    this.#l = links;
    this.#guards = new EvictionGuards(deps.clock, deps.config.evictionGuards ?? {});
    for (const guard of this.#guards.configured) {
      deps.metrics.evictionCircuitOpen.set({ guard }, 0);
      deps.metrics.evictionCircuitStartHold.set({ guard }, 0);
    }
  }

  /**
   * The controller starts acting (process start, or a standby that became leader): every configured
   * guard opens and closes only by its own rule over what is seen from now on (guard.ts
   * `EvictionGuards.start`). The gauges say so at once and a log line explains it; the first
   * observation records the EvictionCircuitOpen Event, whose message says the controller just started.
   * A guard that is off stays off (no gauge, no log). Deliberate difference 19a: only delays.
   */
  start(): void {
    if (!this.#guards.enabled) return;
    this.#guards.start();
    this.#eventNode.clear();
    for (const guard of this.#guards.configured) {
      this.#d.metrics.evictionCircuitOpen.set({ guard }, 1);
      this.#d.metrics.evictionCircuitStartHold.set({ guard }, 1);
    }
    this.#d.log.info(
      { guards: this.#guards.configured },
      'eviction guards open because the controller just started: no NoExecute taint is added and legacy eviction waits until each closes by its own rule over what is seen from now on',
    );
  }

  /** Whether any guard is configured (otherwise readiness need not be collected). */
  get enabled(): boolean {
    return this.#guards.enabled;
  }

  /** True while an open guard holds every new NoExecute taint and legacy eviction. */
  blocks(): boolean {
    return this.#guards.blocksNewNoExecuteTaints();
  }

  /** The configured guards, for the view (`/debug/state`, `status`, `explain`). */
  views(): EvictionGuardView[] {
    return this.#guards.view();
  }

  /** Cancels the recheck timer. */
  stop(): void {
    this.#recheck?.cancel();
  }

  /**
   * Feeds the guards the readiness of this recompute (node name → Ready by the stricter count of
   * deliberate difference 3, over the nodes that take part in zone disruption), explains each guard
   * that opened or closed, and arms one timer at the earliest time a guard can close (a hold ends,
   * or a storm's entry ages out).
   */
  observe(readiness: ReadonlyMap<string, boolean>): void {
    for (const t of this.#guards.observe({ readiness })) this.#explain(t);
    for (const guard of this.#guards.configured) this.#d.metrics.evictionCircuitStartHold.set({ guard }, this.#guards.heldSinceStart(guard) ? 1 : 0);
    this.#recheck?.cancel();
    this.#recheck = undefined;
    const at = this.#guards.recheckAtMs();
    if (at === undefined) return;
    this.#recheck = this.#d.clock.setTimeout(() => {
      this.#recheck = undefined;
      this.#l.recheck();
    }, at - this.#d.clock.now());
  }

  /**
   * A guard opened or closed: the gauge, a log line and a Warning Event on a Node. The open Event
   * goes on the first not-Ready node by name (so `kubectl describe node` of a dead node says why it
   * is not tainted); the close Event on the same node while it exists.
   */
  #explain(t: GuardTransition): void {
    const opened = t.change === 'opened';
    this.#d.metrics.evictionCircuitOpen.set({ guard: t.guard }, opened ? 1 : 0);
    if (opened) this.#d.log.warn({ guard: t.guard, notReady: t.notReadyNodes.length }, t.message);
    else this.#d.log.info({ guard: t.guard, notReady: t.notReadyNodes.length }, t.message);
    const earlier = this.#eventNode.get(t.guard);
    const candidates = opened || earlier === undefined ? t.notReadyNodes : [earlier, ...t.notReadyNodes];
    let target: { name: string; uid: string } | undefined;
    for (const name of candidates) {
      const info = this.#l.health.registration(name);
      if (info) {
        target = { name, uid: info.uid };
        break;
      }
    }
    if (!target) {
      const first = this.#l.health.registered().next();
      if (!first.done) target = { name: first.value[0], uid: first.value[1].uid };
    }
    if (opened && target) this.#eventNode.set(t.guard, target.name);
    else this.#eventNode.delete(t.guard);
    if (target) this.#d.events.record({ kind: 'Node', name: target.name, uid: target.uid }, 'Warning', t.reason, t.message);
    if (!opened && !this.#guards.blocksNewNoExecuteTaints()) this.#l.released();
  }
}
