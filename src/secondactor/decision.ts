/**
 * Signs of a second actor: kube-controller-manager (or another copy of this program) still making
 * the decisions this process makes. Pure judgements of what the caches and the Event watch show;
 * the shell is src/secondactor/check.ts.
 *
 * What counts, each by what upstream's writers leave behind (kube-controller-manager 1.37.2):
 * - `taint`: a NoExecute `node.kubernetes.io/unreachable` or `not-ready` taint appearing on a node
 *   (the node lifecycle controller's `SwapNodeControllerTaint` / `AddOrUpdateTaintOnNode`, with its
 *   `timeAdded`) that this process did not add;
 * - `disruption-target`: a `DisruptionTarget=True` pod condition of reason `DeletionByTaintManager`
 *   (`pkg/controller/tainteviction` `addConditionAndDeletePod`) or `DeletionByPodGC`
 *   (`pkg/controller/podgc` `gcOrphaned`) appearing on a pod, not written by this process;
 * - `pod-deletion`: a pod carrying such a condition starting to terminate (or vanishing, for a
 *   force delete) when this process did not delete it; and a foreign Event that records a pod
 *   deletion (`TaintManagerEviction` "Marking for deletion", 1.20's `NodeControllerEviction`), which
 *   is how 1.20–1.25 taint managers show theirs (they wrote no condition);
 * - `event`: any other Event of the deciding sources recorded by another instance
 *   (`node-controller`: `RegisteredNode` for every node at its start, `NodeNotReady`, ...).
 * "This process did not" is read from its own ledger of writes (./ownwrites.ts), never from what the
 * object says alone: our writes carry the same reasons and keys as upstream's.
 *
 * Upstream has no such check: kube-controller-manager is the only actor it knows. Upstream's pod GC
 * records no Events and its out-of-service, terminated and unscheduled passes write no condition
 * (`markFailedAndDeletePod`), so those deletions cannot be told from anybody's (docs/second-actor.md).
 */
import type { Node, Pod, PodCondition, Taint } from '../kube/objects.js';
import { TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE } from '../kube/taints.js';
import { DELETION_BY_POD_GC_REASON } from '../podgc/decision.js';
import { DELETION_BY_TAINT_MANAGER_REASON, DISRUPTION_TARGET_CONDITION_TYPE } from '../tainteviction/events.js';
import type { SecondActorKind } from './kinds.js';
import { OWN_WRITE_TTL_MS } from './ownwrites.js';

export { SECOND_ACTOR_KINDS, type SecondActorKind } from './kinds.js';

/** Event sources (`source.component` / `reportingComponent`) whose Events mean "this decision was made". */
export const WATCHED_COMPONENTS: readonly string[] = ['node-controller', 'taint-eviction-controller', 'taint-controller', 'pod-garbage-collector'];
/** NoExecute taint keys only a node lifecycle controller adds. */
export const WATCHED_TAINT_KEYS: ReadonlySet<string> = new Set([TAINT_NODE_UNREACHABLE, TAINT_NODE_NOT_READY]);
/** `DisruptionTarget` reasons of the deciders' deletions (taint manager, pod GC orphans). */
export const CONTROLLER_DELETION_REASONS: ReadonlySet<string> = new Set([DELETION_BY_TAINT_MANAGER_REASON, DELETION_BY_POD_GC_REASON]);

/** Reason of the Warning Event the shell records. */
export const SECOND_ACTOR_REASON = 'SecondActorSuspected';
/** The shell logs (and records an Event) at most once per kind in this long, milliseconds. */
export const SECOND_ACTOR_REPORT_INTERVAL_MS = 60_000;

/** The parts of a core/v1 Event the check reads. */
export interface ObservedEvent {
  /** `source.component`, else `reportingComponent`. */
  component: string;
  /** `reportingInstance`, else `source.host`; `''` when neither is set (kube-controller-manager sets neither). */
  instance: string;
  reason: string;
  message: string;
  /** `eventTime`, else `lastTimestamp`, else `firstTimestamp`, epoch ms; undefined when none is set. */
  timeMs: number | undefined;
  involvedObject: { kind: string; name: string; namespace?: string; uid: string };
}

/** Where a judgement stands: since when this process acts, what it wrote, and now. */
export interface JudgeContext {
  /** When this process started acting (won the Lease, or started without election), epoch ms. */
  sinceMs: number;
  /** Now, epoch ms (the shell makes it a getter: read only when an action is judged). */
  readonly nowMs: number;
  /** This process's own recent writes (./ownwrites.ts). */
  own: {
    wroteTaint(nodeName: string, key: string, effect: string): boolean;
    wrotePodCondition(uid: string): boolean;
    deletedPod(uid: string): boolean;
  };
  /** How long the ledger remembers, milliseconds (default {@link OWN_WRITE_TTL_MS}). */
  ttlMs?: number;
}

/** Which of this program's deciders an action belongs to. */
export type Decider = 'node-lifecycle' | 'taint-eviction' | 'pod-gc';

/** One action of another actor. */
export interface SecondActorEvidence {
  kind: SecondActorKind;
  /** Whose decision it is (./decision.ts {@link inRemit} judges only those this process runs). */
  decider: Decider;
  /** The node it is about (the node; a pod's node); undefined when not known (an Event about a pod no longer cached). */
  nodeName?: string;
  /** The object acted on (the Event's object for `event`). */
  object: { kind: string; name: string; namespace?: string; uid: string };
  /** When it was done (the taint's timeAdded, the condition's transition, the Event's time), epoch ms. */
  atMs: number;
  /** What was done, e.g. `added taint node.kubernetes.io/unreachable:NoExecute`. */
  what: string;
  /** For Events: the recording component and instance (`''`: none, as kube-controller-manager). */
  component?: string;
  instance?: string;
}

/**
 * Whether an action at `atMs` can be judged: not before this process acted (older ones are history:
 * the previous leader, kube-controller-manager before the cut-over), and not older than the ledger
 * remembers (an older one of ours would look foreign). Object times are whole seconds on the wire,
 * so `sinceMs` is rounded down to its second.
 */
function judgeable(atMs: number, ctx: JudgeContext): boolean {
  return atMs >= Math.floor(ctx.sinceMs / 1000) * 1000 && atMs >= ctx.nowMs - (ctx.ttlMs ?? OWN_WRITE_TTL_MS);
}

/** The one empty result every judgement returns when it finds nothing (no allocation per informer event). */
const NONE: readonly SecondActorEvidence[] = Object.freeze([]);

const sameTaint = (a: Taint, b: Taint): boolean => a.key === b.key && a.effect === b.effect;

/**
 * The watched NoExecute taints that `cur` has and `old` had not, added by someone else.
 * @param old the node before the change; undefined for a node seen for the first time (an added
 *   node: its taints are its creator's, not a decision, and are never judged).
 * @returns one `taint` evidence per foreign taint; empty for ours, old ones and unwatched keys.
 */
export function taintEvidence(old: Pick<Node, 'taints'> | undefined, cur: Pick<Node, 'name' | 'uid' | 'taints'>, ctx: JudgeContext): readonly SecondActorEvidence[] {
  if (old === undefined || cur.taints.length === 0) return NONE;
  let out: SecondActorEvidence[] | undefined;
  for (const t of cur.taints) {
    if (t.effect !== 'NoExecute' || !WATCHED_TAINT_KEYS.has(t.key)) continue;
    if (old.taints.some((o) => sameTaint(o, t))) continue;
    const atMs = t.timeAdded ?? ctx.nowMs;
    if (!judgeable(atMs, ctx) || ctx.own.wroteTaint(cur.name, t.key, t.effect)) continue;
    (out ??= []).push({ kind: 'taint', decider: 'node-lifecycle', nodeName: cur.name, object: { kind: 'Node', name: cur.name, uid: cur.uid }, atMs, what: `added taint ${t.key}:${t.effect}` });
  }
  return out ?? NONE;
}

/** The pod's `DisruptionTarget=True` condition of a decider's reason, if any. */
export function deciderCondition(conditions: readonly PodCondition[]): PodCondition | undefined {
  for (const c of conditions) {
    if (c.type === DISRUPTION_TARGET_CONDITION_TYPE && c.status === 'True' && c.reason !== undefined && CONTROLLER_DELETION_REASONS.has(c.reason)) return c;
  }
  return undefined;
}

const podRef = (p: Pick<Pod, 'namespace' | 'name' | 'uid'>): SecondActorEvidence['object'] => ({ kind: 'Pod', name: p.name, namespace: p.namespace, uid: p.uid });
const nodeOf = (p: Pick<Pod, 'nodeName'>): { nodeName?: string } => (p.nodeName ? { nodeName: p.nodeName } : {});
/** The decider whose condition reason it is: the taint manager's or pod GC's. */
const deciderOf = (c: PodCondition): Decider => (c.reason === DELETION_BY_POD_GC_REASON ? 'pod-gc' : 'taint-eviction');

/**
 * A pod's change from `old` to `cur`: a decider's `DisruptionTarget` condition that appeared, not
 * written by this process (`disruption-target`), and the pod starting to terminate while carrying
 * one, not deleted by this process (`pod-deletion`; its time is the DELETE's: `deletionTimestamp`
 * minus the grace period).
 * @returns zero, one or two evidences.
 */
export function podUpdateEvidence(old: Pod, cur: Pod, ctx: JudgeContext): readonly SecondActorEvidence[] {
  const c = deciderCondition(cur.conditions);
  if (c === undefined) return NONE;
  let out: SecondActorEvidence[] | undefined;
  const decider = deciderOf(c);
  const before = deciderCondition(old.conditions);
  if (before === undefined || before.reason !== c.reason) {
    const atMs = c.lastTransitionTime ?? ctx.nowMs;
    if (judgeable(atMs, ctx) && !ctx.own.wrotePodCondition(cur.uid)) {
      (out ??= []).push({ kind: 'disruption-target', decider, ...nodeOf(cur), object: podRef(cur), atMs, what: `wrote condition DisruptionTarget=True reason ${c.reason}` });
    }
  }
  if (old.deletionTimestamp === undefined && cur.deletionTimestamp !== undefined) {
    const atMs = cur.deletionTimestamp - (cur.deletionGracePeriodSeconds ?? 0) * 1000;
    if (judgeable(atMs, ctx) && !ctx.own.deletedPod(cur.uid)) {
      (out ??= []).push({ kind: 'pod-deletion', decider, ...nodeOf(cur), object: podRef(cur), atMs, what: `deleted the pod (grace period ${cur.deletionGracePeriodSeconds ?? 0} s; condition DisruptionTarget reason ${c.reason})` });
    }
  }
  return out ?? NONE;
}

/**
 * A pod that vanished without ever being seen terminating (a force delete, as pod GC's orphan pass
 * does) while carrying a decider's condition, and not deleted by this process.
 * @param last the pod as last seen.
 * @returns a `pod-deletion` evidence, or undefined.
 */
export function podDeleteEvidence(last: Pod, ctx: JudgeContext): SecondActorEvidence | undefined {
  if (last.deletionTimestamp !== undefined) return undefined; // its deletion was judged when it began
  const c = deciderCondition(last.conditions);
  if (c === undefined || ctx.own.deletedPod(last.uid)) return undefined;
  const atMs = c.lastTransitionTime ?? ctx.nowMs;
  if (!judgeable(atMs, ctx)) return undefined;
  return { kind: 'pod-deletion', decider: deciderOf(c), ...nodeOf(last), object: podRef(last), atMs: ctx.nowMs, what: `force-deleted the pod (condition DisruptionTarget reason ${c.reason})` };
}

/**
 * Whether `e` is the sign of a second actor: an Event of a {@link WATCHED_COMPONENTS} source,
 * recorded by an instance that is not this process (`ourIdentity`: our Events carry it as
 * `reportingInstance` and `source.host`, src/kube/events.ts), at or after the moment this process
 * started acting.
 * @returns `pod-deletion` for an Event that records a pod deletion (`TaintManagerEviction`
 *   "Marking for deletion …", `NodeControllerEviction`), `event` for any other, undefined when the
 *   Event is ours, older, or of another source.
 */
export function eventEvidence(e: ObservedEvent, ourIdentity: string, sinceMs: number, podNode: (namespace: string, name: string) => string | undefined = () => undefined): SecondActorEvidence | undefined {
  if (!WATCHED_COMPONENTS.includes(e.component)) return undefined;
  if (e.instance === ourIdentity) return undefined;
  if (e.timeMs === undefined || e.timeMs < Math.floor(sinceMs / 1000) * 1000) return undefined;
  const o = e.involvedObject;
  const deletion = o.kind === 'Pod' && ((e.reason === 'TaintManagerEviction' && e.message.startsWith('Marking for deletion')) || e.reason === 'NodeControllerEviction');
  const nodeName = o.kind === 'Node' ? o.name : o.kind === 'Pod' ? podNode(o.namespace ?? '', o.name) : undefined;
  return {
    kind: deletion ? 'pod-deletion' : 'event',
    decider: EVENT_DECIDERS[e.component] ?? 'node-lifecycle',
    ...(nodeName ? { nodeName } : {}),
    object: { kind: o.kind, name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}), uid: o.uid },
    atMs: e.timeMs,
    what: `recorded Event ${e.reason}`,
    component: e.component,
    instance: e.instance,
  };
}

/** The decider of each watched Event source (`node-controller` also records 1.20's legacy evictions, a node lifecycle decision). */
const EVENT_DECIDERS: Readonly<Record<string, Decider>> = {
  'node-controller': 'node-lifecycle',
  'taint-eviction-controller': 'taint-eviction',
  'taint-controller': 'taint-eviction',
  'pod-garbage-collector': 'pod-gc',
};

/** What this process decides: the deciders it runs, and (under `--node-selector`) which nodes. */
export interface Remit {
  /** The deciders this process runs (`--controllers`): `node-lifecycle-controller`, `taint-eviction-controller`, `pod-garbage-collector-controller`. */
  deciders: ReadonlySet<Decider>;
  /**
   * Under `--node-selector`: whether a node is this process's (in its node cache, or deleted from it
   * lately). Undefined without a selector: every node is.
   */
  nodeInScope?: (nodeName: string) => boolean;
}

/**
 * Whether an action is another actor making one of this process's decisions: its decider runs here,
 * and its node is this process's. Upstream's loops for what this process leaves off (a controller
 * not in `--controllers`, nodes outside `--node-selector`) are meant to run, and never count
 * (docs/migration.md: "leave KCM's on for it"). Under a selector, an action whose node is not known
 * (an Event about a pod no longer cached) does not count either.
 */
export function inRemit(ev: Pick<SecondActorEvidence, 'decider' | 'nodeName'>, remit: Remit): boolean {
  if (!remit.deciders.has(ev.decider)) return false;
  if (remit.nodeInScope === undefined) return true;
  return ev.nodeName !== undefined && remit.nodeInScope(ev.nodeName);
}

/**
 * The field manager that owns the field an evidence is about, from the object's `managedFields` as
 * the API server returns it (JSON): `f:spec` → `f:taints` for a taint, the `DisruptionTarget` entry of
 * `f:status` → `f:conditions` for a condition or deletion. The newest owner wins when several do.
 * @param raw the Node or Pod as JSON (a GET's body).
 * @returns `manager (operation, time)`, or undefined when nothing owns it or `raw` is not an object.
 *   Never throws.
 */
export function fieldManagerOf(raw: unknown, kind: SecondActorKind): string | undefined {
  const entries = (raw as { metadata?: { managedFields?: unknown } } | null)?.metadata?.managedFields;
  if (!Array.isArray(entries)) return undefined;
  let best: { manager: string; operation: string; time: string } | undefined;
  for (const m of entries as { manager?: unknown; operation?: unknown; time?: unknown; fieldsV1?: unknown }[]) {
    const f = (m?.fieldsV1 ?? {}) as Record<string, Record<string, Record<string, unknown> | undefined> | undefined>;
    const owns = kind === 'taint' ? f['f:spec']?.['f:taints'] !== undefined : f['f:status']?.['f:conditions']?.['k:{"type":"DisruptionTarget"}'] !== undefined;
    if (!owns || typeof m.manager !== 'string') continue;
    const time = typeof m.time === 'string' ? m.time : '';
    if (best === undefined || time >= best.time) best = { manager: m.manager, operation: typeof m.operation === 'string' ? m.operation : '', time };
  }
  return best && `${best.manager} (${best.operation}${best.time ? ` at ${best.time}` : ''})`;
}

/** `Kind namespace/name`. */
export function objectName(o: SecondActorEvidence['object']): string {
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}

/**
 * One line naming the evidence, for the log and the Warning Event.
 * @param manager the field manager that owns the field ({@link fieldManagerOf}), when read.
 * @param more how many more actions of this kind were counted since the last report.
 */
export function describeEvidence(ev: SecondActorEvidence, manager?: string, more = 0): string {
  const who =
    ev.component !== undefined
      ? ev.instance === ''
        ? `${ev.component} (no instance: kube-controller-manager records none)`
        : `${ev.component} instance ${ev.instance}`
      : `another actor${manager ? ` (field manager ${manager})` : ''}`;
  const also = more > 0 ? ` ${more} more action(s) of this kind since the last report.` : '';
  return `${who} ${ev.what} on ${objectName(ev.object)} at ${new Date(ev.atMs).toISOString()}, after this process started acting: another actor makes the same decisions (second-actor kind ${ev.kind}).${also} Switch its controllers off (docs/second-actor.md)`;
}
