/**
 * The start-up second-actor check: for the first minutes after this process starts acting (it
 * leads, or runs without election), list the Events of the decision-making sources every 30 s (the
 * first look 30 s in) and warn once per foreign actor seen (log at warn, one Warning Event `SecondActorSuspected`, the
 * counter `node_lifecycle_controller_second_actor_suspected_total{component}`). It never stops or
 * holds anything: a false alarm must cost nothing, and a real second actor is for the operator to
 * switch off. Not run with --dry-run, where kube-controller-manager acting is the point.
 * The decision is src/secondactor/decision.ts. No upstream counterpart.
 */
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
  /**
   * Lists the Events whose `source` is `component` (all namespaces), as read by {@link readEventList}.
   * May throw; the poll then tries again next time.
   */
  listEvents(component: string): Promise<{ events: ObservedEvent[]; malformed: number }>;
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

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A core/v1 Event, as the API server's JSON (times as RFC 3339 strings) or as client-node's typed
 * `CoreV1Event` (times as `Date`), as {@link ObservedEvent}. `eventTime` first (events/v1 recorders
 * set it), then `lastTimestamp`, then `firstTimestamp`.
 * @returns undefined for a malformed Event (not an object, or no `involvedObject` object). Never throws.
 */
export function toObservedEvent(e: unknown): ObservedEvent | undefined {
  if (!isObject(e) || !isObject(e['involvedObject'])) return undefined;
  const o = e['involvedObject'];
  const source = isObject(e['source']) ? e['source'] : {};
  const namespace = str(o['namespace']);
  return {
    component: str(source['component']) || str(e['reportingComponent']),
    instance: str(e['reportingInstance']) || str(source['host']),
    reason: str(e['reason']),
    timeMs: toMs(e['eventTime']) ?? toMs(e['lastTimestamp']) ?? toMs(e['firstTimestamp']),
    involvedObject: { kind: str(o['kind']), name: str(o['name']), ...(namespace ? { namespace } : {}), uid: str(o['uid']) },
  };
}

/**
 * The JSON body of an EventList (`GET /api/v1/events`) as {@link ObservedEvent}s. The check reads
 * the API server's JSON itself rather than through client-node's typed `listEventForAllNamespaces`,
 * whose ObjectSerializer builds every field of every Event for the five this check reads, and whose
 * typed Event with no `involvedObject` made the whole look throw: a malformed item is now skipped.
 * Measured at 1,000 Events per look (issue 29): 54–86 ms of CPU warm against 59–110 ms typed; the
 * first look in a process costs 210–280 ms either way.
 * @returns the Events, and how many items were malformed (skipped). Never throws: a body that is not
 * a list reads as no Events and one malformed item.
 */
export function readEventList(body: unknown): { events: ObservedEvent[]; malformed: number } {
  const items = isObject(body) ? body['items'] : undefined;
  if (!Array.isArray(items)) return { events: [], malformed: 1 };
  const events: ObservedEvent[] = [];
  let malformed = 0;
  for (const item of items) {
    const e = toObservedEvent(item);
    if (e) events.push(e);
    else malformed++;
  }
  return { events, malformed };
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

  /** Starts the window now: a look every 30 s (the first 30 s in) up to its end, 5 minutes in. Idempotent. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#startMs = this.#d.clock.now();
    // No look at once: only Events recorded after startMs are evidence, and any that a look at once
    // could find are still there 30 s later (Events live an hour). The look at once cost CPU in the
    // first seconds, beside the informers' sync and the RegisteredNode writes, and found nothing the
    // next look would not (issue 29). A second actor's warning comes at most 30 s later; the check
    // never acts.
    this.#timer = this.#d.clock.setTimeout(() => void this.#poll(), SECOND_ACTOR_POLL_MS);
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
      let list: { events: ObservedEvent[]; malformed: number };
      try {
        list = await this.#d.listEvents(component);
      } catch (err) {
        this.#d.log.debug({ component, err: String(err) }, 'second-actor check: listing Events failed; trying again next time');
        continue;
      }
      if (list.malformed > 0) this.#d.log.info({ component, malformed: list.malformed }, 'second-actor check: skipped malformed Events (they cannot be evidence)');
      for (const e of list.events) this.#judge(e);
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
