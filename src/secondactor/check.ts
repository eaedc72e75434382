/**
 * The start-up second-actor check: for the first minutes after this process starts acting (it
 * leads, or runs without election), list the Events of the decision-making sources every 30 s and
 * warn once per foreign actor seen (log at warn, one Warning Event `SecondActorSuspected`, the
 * counter `node_lifecycle_controller_second_actor_suspected_total{component}`). It never stops or
 * holds anything: a false alarm must cost nothing, and a real second actor is for the operator to
 * switch off. Not run with --dry-run, where kube-controller-manager acting is the point.
 * The decision is src/secondactor/decision.ts. No upstream counterpart.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import type { EventSink } from '../kube/types.js';
import type { Logger } from '../log/logger.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import {
  describeEvidence,
  SECOND_ACTOR_POLL_MS,
  SECOND_ACTOR_REASON,
  SECOND_ACTOR_WINDOW_MS,
  secondActorEvidence,
  WATCHED_COMPONENTS,
  type ObservedEvent,
} from './decision.js';

/** What the check needs, injected. */
export interface SecondActorDeps {
  /** Lists the Events whose `source` is `component` (all namespaces). May throw; the poll then tries again next time. */
  listEvents(component: string): Promise<ObservedEvent[]>;
  /** This process's identity (our Events' `reportingInstance`). */
  identity: string;
  clock: Clock;
  log: Logger;
  /** Where the Warning Event goes. */
  events: EventSink;
  /** Counts each foreign actor once, by component. */
  suspected: { inc(labels: { component: string }): void };
}

const toMs = (v: unknown): number | undefined => {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
};

/**
 * A core/v1 Event as {@link ObservedEvent}. `eventTime` first (events/v1 recorders set it), then
 * `lastTimestamp`, then `firstTimestamp`. Never throws.
 */
export function toObservedEvent(e: CoreV1Event): ObservedEvent {
  const o = e.involvedObject;
  return {
    component: e.source?.component || e.reportingComponent || '',
    instance: e.reportingInstance || e.source?.host || '',
    reason: e.reason ?? '',
    timeMs: toMs(e.eventTime) ?? toMs(e.lastTimestamp) ?? toMs(e.firstTimestamp),
    involvedObject: { kind: o.kind ?? '', name: o.name ?? '', ...(o.namespace ? { namespace: o.namespace } : {}), uid: o.uid ?? '' },
  };
}

/** The check. {@link start} once this process acts; {@link stop} at shutdown. */
export class SecondActorCheck {
  readonly #d: SecondActorDeps;
  readonly #seen = new Set<string>();
  #startMs = 0;
  #timer: TimerHandle | undefined;
  #stopped = true;
  #warnedByEvent = false;

  /** @param deps see {@link SecondActorDeps}. Never throws. */
  constructor(deps: SecondActorDeps) {
    this.#d = deps;
  }

  /** Starts the window now: one look at once, then every 30 s for 5 minutes. Idempotent. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#startMs = this.#d.clock.now();
    void this.#poll();
  }

  /** Ends the check (pending looks are dropped). Idempotent. */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** Foreign actors seen so far, as `component/instance`. */
  seen(): string[] {
    return [...this.#seen];
  }

  async #poll(): Promise<void> {
    if (this.#stopped) return;
    for (const component of WATCHED_COMPONENTS) {
      let list: ObservedEvent[];
      try {
        list = await this.#d.listEvents(component);
      } catch (err) {
        this.#d.log.debug({ component, err: String(err) }, 'second-actor check: listing Events failed; trying again next time');
        continue;
      }
      for (const e of list) this.#judge(e);
    }
    const next = this.#startMs + SECOND_ACTOR_WINDOW_MS - this.#d.clock.now();
    if (this.#stopped || next <= 0) return;
    this.#timer = this.#d.clock.setTimeout(() => void this.#poll(), Math.min(SECOND_ACTOR_POLL_MS, next));
  }

  #judge(e: ObservedEvent): void {
    const ev = secondActorEvidence(e, this.#d.identity, this.#startMs);
    if (!ev) return;
    const key = `${ev.component}/${ev.instance}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    const text = describeEvidence(ev);
    this.#d.log.warn({ component: ev.component, instance: ev.instance, reason: ev.reason, object: ev.object }, `Second actor suspected: ${text}`);
    this.#d.suspected.inc({ component: ev.component });
    const o = e.involvedObject;
    // One Warning Event per run, on the object the evidence is about (Events need one; Node or Pod here).
    if (!this.#warnedByEvent && (o.kind === 'Node' || o.kind === 'Pod')) {
      this.#warnedByEvent = true;
      this.#d.events.record({ kind: o.kind, name: o.name, uid: o.uid, ...(o.namespace ? { namespace: o.namespace } : {}) }, 'Warning', SECOND_ACTOR_REASON, text);
    }
  }
}
