/**
 * The second-actor check, continuous: from the moment this process starts acting (it leads, or runs
 * without election) until it stops, every node taint, `DisruptionTarget` condition and pod deletion
 * that the node and pod informers deliver, and every Event of the deciding sources, is judged
 * (./decision.ts) against this process's own writes (./ownwrites.ts). Each action of another actor
 * is counted in `node_lifecycle_second_actor_actions_total{kind}`; once per kind and minute it is
 * also logged at warn and raised as a Warning Event `SecondActorSuspected` on the object, naming the
 * field manager that owns the field (one GET of the object, at most once per kind and minute).
 *
 * It never stops, pauses or holds anything: a false alarm must cost nothing, and switching a second
 * actor off is the operator's step (the chart's NodeLifecycleControllerSecondActor alert). Not run
 * with --dry-run, where kube-controller-manager acting is the point of shadow mode.
 *
 * Cost: the informer handlers compare a node's taints (or a pod's at most three cached conditions
 * and its deletion timestamp) between the old and new object, with nothing allocated unless
 * something is found (bench/secondactor.ts: docs/second-actor.md "Cost"); the Event watches are one
 * connection per source, filtered by the API server. No upstream counterpart.
 */
import type { EventSink } from '../kube/types.js';
import type { Node, Pod } from '../kube/objects.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';
import {
  describeEvidence,
  eventEvidence,
  inRemit,
  objectName,
  podDeleteEvidence,
  podUpdateEvidence,
  SECOND_ACTOR_KINDS,
  SECOND_ACTOR_REASON,
  SECOND_ACTOR_REPORT_INTERVAL_MS,
  taintEvidence,
  type Decider,
  type JudgeContext,
  type ObservedEvent,
  type Remit,
  type SecondActorEvidence,
  type SecondActorKind,
} from './decision.js';
import { OWN_WRITE_TTL_MS, type OwnWrites } from './ownwrites.js';

/** The handlers the check adds to an informer (src/controllers/context.ts `Source.subscribe`). */
interface Subscribable<T> {
  subscribe(h: { add?: (o: T) => void; update?: (old: T, cur: T) => void; delete?: (o: T) => void }): void;
}

/** Something started with the check and stopped with it (an Event watch, ./eventtail.ts). */
export interface Startable {
  start(): void;
  stop(): void;
}

/** What the check needs, injected. */
export interface SecondActorDeps {
  /** This process's identity (our Events' `reportingInstance`). */
  identity: string;
  clock: Clock;
  log: Logger;
  /** Where the Warning Events go. */
  events: EventSink;
  /** `node_lifecycle_second_actor_actions_total{kind}`. */
  actions: { inc(labels: { kind: string }): void };
  /** This process's own writes (the writers note them). */
  own: OwnWrites;
  /** The real (never shadow-overlaid) node and pod informers; `get` by name and by `namespace/name`. */
  nodes: Subscribable<Node> & { get(name: string): Node | undefined };
  pods: Subscribable<Pod> & { get(key: string): Pod | undefined };
  /**
   * The deciders this process runs (`--controllers`): only their actions are judged; a loop this
   * process leaves off is upstream's to run (./decision.ts {@link inRemit}).
   */
  deciders: ReadonlySet<Decider>;
  /**
   * True under `--node-selector`: only actions on nodes in the node cache (or deleted from it in the
   * last 10 minutes, for orphans) are judged; nodes outside the selector are somebody else's.
   */
  scoped: boolean;
  /**
   * Builds the Event watches, one per deciding source, each calling `onEvent` with an Event's JSON
   * (run.ts: ./eventtail.ts). Called once, at the first {@link SecondActorCheck.start}.
   */
  eventWatches?: (onEvent: (raw: unknown) => void) => Startable[];
  /**
   * Names who wrote the field an evidence is about (the object's `managedFields`, ./decision.ts
   * `fieldManagerOf`); at most once per kind and minute. May reject or resolve undefined.
   */
  fieldManager?: (ev: SecondActorEvidence) => Promise<string | undefined>;
}

/** Per kind, what /debug/state shows. */
export interface SecondActorKindView {
  /** Actions counted since the start. */
  count: number;
  /** The last reported evidence, as logged. */
  lastReport?: string;
  /** When it was reported, epoch ms. */
  lastReportMs?: number;
}

/** The check's state for /debug/state. */
export interface SecondActorView {
  /** When this process started acting, epoch ms; undefined before. */
  actingSinceMs?: number;
  kinds: Record<SecondActorKind, SecondActorKindView>;
  /** Entries in the own-writes ledger. */
  ownWrites: number;
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
    message: str(e['message']),
    timeMs: toMs(e['eventTime']) ?? toMs(e['lastTimestamp']) ?? toMs(e['firstTimestamp']),
    involvedObject: { kind: str(o['kind']), name: str(o['name']), ...(namespace ? { namespace } : {}), uid: str(o['uid']) },
  };
}

/** The check (see the module comment). Subscribes at construction; judges only between {@link start} and {@link stop}. */
export class SecondActorCheck {
  readonly #d: SecondActorDeps;
  #sinceMs: number | undefined;
  #watches: Startable[] | undefined;
  /** Per kind: count, when last reported, actions since, and the last report's text. */
  readonly #kinds = new Map<SecondActorKind, { count: number; lastReportMs: number; since: number; lastReport?: string }>();
  /** Nodes deleted from the cache lately (their orphans are still this process's), with expiry. */
  readonly #deletedNodes = new Map<string, number>();
  readonly #remit: Remit;
  /**
   * Pods (`namespace/name`) whose deletion was counted, with expiry: the pod going terminating, the
   * pod vanishing and the taint manager's Event all tell one deletion. By name, not UID: upstream's
   * `emitPodDeletionEvent` references the pod by namespace and name only.
   */
  readonly #deletions = new Map<string, number>();
  #malformedEvents = 0;
  /**
   * The judgement context, one object for every call, whose `nowMs` reads the clock only when a
   * judgement needs the time (a candidate action): an informer event with nothing new allocates
   * nothing and reads no clock (bench/secondactor.ts).
   */
  readonly #jc: JudgeContext;

  /** @param deps see {@link SecondActorDeps}. Subscribes to the informers at once. Never throws. */
  constructor(deps: SecondActorDeps) {
    this.#d = deps;
    const clock = deps.clock;
    this.#jc = {
      sinceMs: Infinity,
      get nowMs() {
        return clock.now();
      },
      own: deps.own,
    };
    for (const k of SECOND_ACTOR_KINDS) this.#kinds.set(k, { count: 0, lastReportMs: -Infinity, since: 0 });
    this.#remit = {
      deciders: deps.deciders,
      ...(deps.scoped ? { nodeInScope: (name: string) => deps.nodes.get(name) !== undefined || (this.#deletedNodes.get(name) ?? 0) > clock.now() } : {}),
    };
    deps.nodes.subscribe({
      update: (old, cur) => {
        if (this.#sinceMs === undefined || cur.taints.length === 0) return;
        for (const ev of taintEvidence(old, cur, this.#ctx())) this.#count(ev);
      },
      delete: (gone) => {
        if (!deps.scoped) return;
        const now = clock.now();
        this.#deletedNodes.delete(gone.name);
        this.#deletedNodes.set(gone.name, now + OWN_WRITE_TTL_MS);
        for (const [name, at] of this.#deletedNodes) {
          if (at > now) break;
          this.#deletedNodes.delete(name);
        }
      },
    });
    deps.pods.subscribe({
      update: (old, cur) => {
        if (this.#sinceMs === undefined || cur.conditions.length === 0) return;
        for (const ev of podUpdateEvidence(old, cur, this.#ctx())) this.#count(ev);
      },
      delete: (last) => {
        if (this.#sinceMs === undefined || last.conditions.length === 0) return;
        const ev = podDeleteEvidence(last, this.#ctx());
        if (ev) this.#count(ev);
      },
    });
  }

  /** Starts judging now (this process acts from now on) and the Event watches. Idempotent. */
  start(): void {
    if (this.#sinceMs !== undefined) return;
    this.#sinceMs = this.#d.clock.now();
    this.#jc.sinceMs = this.#sinceMs;
    this.#watches ??= this.#d.eventWatches?.((raw) => this.#onEvent(raw)) ?? [];
    for (const w of this.#watches) w.start();
  }

  /** Stops judging and the Event watches. Idempotent. */
  stop(): void {
    this.#sinceMs = undefined;
    for (const w of this.#watches ?? []) w.stop();
  }

  /** The state for /debug/state. */
  view(): SecondActorView {
    const kinds = {} as Record<SecondActorKind, SecondActorKindView>;
    for (const [k, s] of this.#kinds) kinds[k] = { count: s.count, ...(s.lastReport ? { lastReport: s.lastReport, lastReportMs: s.lastReportMs } : {}) };
    return { ...(this.#sinceMs !== undefined ? { actingSinceMs: this.#sinceMs } : {}), kinds, ownWrites: this.#d.own.size() };
  }

  #ctx(): JudgeContext {
    return this.#jc;
  }

  #onEvent(raw: unknown): void {
    if (this.#sinceMs === undefined) return;
    const e = toObservedEvent(raw);
    if (!e) {
      // Logged once a hundred: a malformed Event can be no evidence, and must not flood the log.
      if (this.#malformedEvents++ % 100 === 0) this.#d.log.info({ malformed: this.#malformedEvents }, 'second-actor check: skipped a malformed Event (it cannot be evidence)');
      return;
    }
    const ev = eventEvidence(e, this.#d.identity, this.#sinceMs, (ns, name) => this.#d.pods.get(`${ns}/${name}`)?.nodeName || undefined);
    if (ev) this.#count(ev);
  }

  #count(ev: SecondActorEvidence): void {
    if (!inRemit(ev, this.#remit)) return;
    const now = this.#d.clock.now();
    if (ev.kind === 'pod-deletion') {
      // One deletion, up to three witnesses (its condition's pod going terminating, the pod
      // vanishing, the taint manager's Event): counted once. A pod recreated under the same name
      // and deleted again within the TTL is counted once too (the count can only be lower).
      const key = `${ev.object.namespace ?? ''}/${ev.object.name}`;
      const until = this.#deletions.get(key);
      if (until !== undefined && until > now) return;
      this.#deletions.delete(key);
      this.#deletions.set(key, now + OWN_WRITE_TTL_MS);
      for (const [k, at] of this.#deletions) {
        if (at > now) break;
        this.#deletions.delete(k);
      }
    }
    this.#d.actions.inc({ kind: ev.kind });
    const s = this.#kinds.get(ev.kind);
    if (!s) return;
    s.count++;
    if (now - s.lastReportMs < SECOND_ACTOR_REPORT_INTERVAL_MS) {
      s.since++;
      return;
    }
    const more = s.since;
    s.lastReportMs = now;
    s.since = 0;
    void this.#report(ev, more, s);
  }

  async #report(ev: SecondActorEvidence, more: number, s: { lastReport?: string }): Promise<void> {
    let manager: string | undefined;
    if (ev.kind !== 'event' && ev.component === undefined && this.#d.fieldManager) {
      try {
        manager = await this.#d.fieldManager(ev);
      } catch (err) {
        this.#d.log.debug({ object: objectName(ev.object), err: String(err) }, 'second-actor check: could not read the field manager');
      }
    }
    const text = describeEvidence(ev, manager, more);
    s.lastReport = text;
    this.#d.log.warn(
      { kind: ev.kind, object: objectName(ev.object), ...(manager ? { fieldManager: manager } : {}), ...(ev.component !== undefined ? { component: ev.component, instance: ev.instance } : {}), more },
      `Second actor suspected: ${text}`,
    );
    const o = ev.object;
    if (o.kind === 'Node' || o.kind === 'Pod') {
      this.#d.events.record({ kind: o.kind, name: o.name, uid: o.uid, ...(o.namespace ? { namespace: o.namespace } : {}) }, 'Warning', SECOND_ACTOR_REASON, text);
    }
  }
}
