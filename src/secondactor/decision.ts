/**
 * Signs of a second actor: kube-controller-manager (or another copy of this program) still making
 * the decisions this process makes, seen in the Events it records. Pure; the shell is
 * src/secondactor/check.ts.
 *
 * Upstream has no such check: kube-controller-manager is the only actor it knows. The Event sources
 * are upstream's: `node-controller` (`pkg/controller/nodelifecycle`, `RecordNodeStatusChange`, and
 * 1.20's `NodeControllerEviction` pod deletions), `taint-eviction-controller` (1.29+
 * `pkg/controller/tainteviction`, `TaintManagerEviction`) and `taint-controller` (the same manager
 * inside the node lifecycle controller before 1.29). Upstream's pod GC records no Events, so its
 * force deletes cannot be seen this way; ours use `pod-garbage-collector`, watched in case another
 * copy of this program acts.
 */

/** Event sources (`source.component` / `reportingComponent`) whose Events mean "this decision was made". */
export const WATCHED_COMPONENTS: readonly string[] = ['node-controller', 'taint-eviction-controller', 'taint-controller', 'pod-garbage-collector'];

/** How long after this process started acting the check looks, milliseconds (the "first minutes"). */
export const SECOND_ACTOR_WINDOW_MS = 5 * 60_000;
/** How often the shell lists Events during the window, milliseconds. */
export const SECOND_ACTOR_POLL_MS = 30_000;
/** Reason of the Warning Event the shell records. */
export const SECOND_ACTOR_REASON = 'SecondActorSuspected';

/** The parts of a core/v1 Event the check reads. */
export interface ObservedEvent {
  /** `source.component`, else `reportingComponent`. */
  component: string;
  /** `reportingInstance`, else `source.host`; `''` when neither is set (kube-controller-manager sets neither). */
  instance: string;
  reason: string;
  /** `eventTime`, else `lastTimestamp`, else `firstTimestamp`, epoch ms; undefined when none is set. */
  timeMs: number | undefined;
  involvedObject: { kind: string; name: string; namespace?: string; uid: string };
}

/** What one foreign Event proves. */
export interface SecondActorEvidence {
  component: string;
  instance: string;
  reason: string;
  timeMs: number;
  /** `Kind namespace/name` of the Event's object. */
  object: string;
}

/**
 * Whether `e` is the sign of a second actor: an Event of a {@link WATCHED_COMPONENTS} source, recorded
 * by an instance that is not this process (`ourIdentity`: our Events carry it as `reportingInstance`
 * and `source.host`, src/kube/events.ts), inside the window `[startMs, startMs + windowMs]` (epoch ms).
 * An Event from before this process acted is history, not a second actor: the old leader, or
 * kube-controller-manager before the cut-over.
 * @returns the evidence, or undefined when the Event is ours, out of the window, or of another source.
 */
export function secondActorEvidence(e: ObservedEvent, ourIdentity: string, startMs: number, windowMs = SECOND_ACTOR_WINDOW_MS): SecondActorEvidence | undefined {
  if (!WATCHED_COMPONENTS.includes(e.component)) return undefined;
  if (e.instance === ourIdentity) return undefined;
  if (e.timeMs === undefined || e.timeMs < startMs || e.timeMs > startMs + windowMs) return undefined;
  const o = e.involvedObject;
  return { component: e.component, instance: e.instance, reason: e.reason, timeMs: e.timeMs, object: `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}` };
}

/** One line naming the evidence, for the log and the Warning Event. */
export function describeEvidence(ev: SecondActorEvidence): string {
  const who = ev.instance === '' ? `${ev.component} (no instance: kube-controller-manager records none)` : `${ev.component} instance ${ev.instance}`;
  return `${who} recorded ${ev.reason} on ${ev.object} at ${new Date(ev.timeMs).toISOString()}, after this process started acting: another actor makes the same decisions. Switch its controllers off (docs/second-actor.md)`;
}
