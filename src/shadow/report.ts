/**
 * The shadow report, pure: what a `--dry-run` shadow would have done (its decision
 * log from `/debug/state`) beside what really happened in the cluster over the same window (node
 * conditions and taints with `timeAdded`, Events of kube-controller-manager, terminating pods), as
 * rows per node and per pod with both times, the difference and a verdict. src/cli/shadow-report.ts
 * fetches the inputs and prints the result.
 *
 * Compared (kube-controller-manager leaves a timestamped trace of these):
 * - `mark Unknown`: the node's `Ready` condition with reason `NodeStatusUnknown` (its
 *   `lastTransitionTime`), else the `NodeNotReady` Event of `node-controller`;
 * - `taint K:E` for the node controller's taint keys: the taint's `timeAdded`;
 * - `delete pod`: the `TaintManagerEviction` Event "Marking for deletion Pod …", else the pod's
 *   `deletionTimestamp` minus its grace period when its `DisruptionTarget` says
 *   `DeletionByTaintManager`.
 * Everything else the shadow decided (untaint, pod NotReady marks, force-deletes, detaches,
 * evictions, labels) is listed as "not compared": kube-controller-manager leaves no timestamp to
 * compare it with (a removed taint or a force-deleted pod is simply gone).
 *
 * Not upstream.
 */
import { formatDuration as fmt } from '../util/format.js';
import type { Node, Pod } from '../kube/objects.js';
import { formatTaint } from '../kube/taints.js';
import type { ShadowDecision, ShadowState } from './decisions.js';
import { SHADOW_ACTIONS } from './decisions.js';
import { SHADOW_OWNED_TAINT_KEYS } from './overlay.js';

/** An action both sides can be compared on. */
export type ComparedAction = 'mark-unknown' | 'taint' | 'delete-pod';

/** Something kube-controller-manager (or another real controller) did, as seen in the cluster. Times epoch **ms**. */
export interface ObservedAction {
  atMs: number;
  action: ComparedAction;
  kind: 'Node' | 'Pod';
  /** Node name, or `namespace/name`. */
  object: string;
  /** Pods: the node, when known. */
  node?: string;
  /** `Ready=Unknown`, the taint `key:effect`, or `''`. */
  detail: string;
  /** Where it was read, e.g. `taint timeAdded`, `Event TaintManagerEviction`. */
  source: string;
}

/** The slim Event the report reads (src/cli/shadow-report.ts converts core/v1 Events). */
export interface ObservedEvent {
  reason: string;
  message: string;
  /** Reporting component (`source.component` or `reportingController`). */
  component: string;
  involved: { kind: string; name: string; namespace?: string };
  /** The first occurrence, epoch ms. */
  atMs: number;
}

/** How a row compares. */
export type Verdict = 'agree' | 'ours later' | 'ours earlier' | 'KCM only' | 'ours only' | 'not compared';

/** One row. Times epoch **ms**; `diffMs` = ours − KCM's. */
export interface ReportRow {
  kind: 'Node' | 'Pod' | 'VolumeAttachment';
  object: string;
  node?: string;
  /** e.g. `mark Unknown`, `taint node.kubernetes.io/unreachable:NoExecute`, `delete pod`. */
  action: string;
  kcmAtMs?: number;
  kcmSource?: string;
  oursAtMs?: number;
  oursReason?: string;
  diffMs?: number;
  verdict: Verdict;
}

/** The whole report (also the `-o json` document). Times epoch **ms**. */
export interface ShadowReport {
  window: { fromMs: number; toMs: number; lengthMs: number };
  /** False when the window is shorter than asked for, or decisions were dropped. */
  enoughHistory: boolean;
  notes: string[];
  toleranceMs: number;
  nodes: ReportRow[];
  pods: ReportRow[];
  summary: Record<Verdict, number> & { rows: number; disagreements: number };
}

/** Options of {@link buildShadowReport}. Durations **ms**. */
export interface ShadowReportOptions {
  /** Two times closer than this agree. */
  toleranceMs: number;
  /** A window shorter than this is reported as not enough history. */
  minHistoryMs: number;
  /** The API server's `--event-ttl` (default 1 h): older Events are gone. */
  eventTtlMs: number;
  /** Report time, epoch ms. */
  nowMs: number;
}

const NODE_CONTROLLER = 'node-controller';
const TAINT_EVICTION_COMPONENT = 'taint-eviction-controller';
const MARKING_FOR_DELETION = /^Marking for deletion Pod (\S+)/;

/**
 * What kube-controller-manager did, read from the cluster's current state and Events (see the
 * module comment for the sources).
 * @param nodes the nodes in scope (the shadow's `--node-selector`).
 * @param pods every pod (terminating ones give a deletion time when no Event is left).
 * @param events Events of all namespaces.
 * @returns observations, earliest first; objects outside the nodes in scope are left out, except
 *   pods whose node is unknown (deleted pods).
 */
export function observeCluster(nodes: readonly Node[], pods: readonly Pod[], events: readonly ObservedEvent[]): ObservedAction[] {
  const out: ObservedAction[] = [];
  const inScope = new Set(nodes.map((n) => n.name));
  const podNode = new Map(pods.map((p) => [`${p.namespace}/${p.name}`, p.nodeName]));
  const unknownFromCondition = new Set<string>();
  for (const n of nodes) {
    const ready = n.conditions.find((c) => c.type === 'Ready');
    if (ready?.status === 'Unknown' && ready.reason === 'NodeStatusUnknown' && ready.lastTransitionTime !== undefined) {
      out.push({ atMs: ready.lastTransitionTime, action: 'mark-unknown', kind: 'Node', object: n.name, detail: 'Ready=Unknown', source: 'Ready condition lastTransitionTime' });
      unknownFromCondition.add(n.name);
    }
    for (const t of n.taints) {
      if (!SHADOW_OWNED_TAINT_KEYS.has(t.key) || t.timeAdded === undefined) continue;
      out.push({ atMs: t.timeAdded, action: 'taint', kind: 'Node', object: n.name, detail: formatTaint({ key: t.key, effect: t.effect }), source: 'taint timeAdded' });
    }
  }
  const deletedByEvent = new Set<string>();
  for (const e of events) {
    if (e.involved.kind === 'Node' && e.reason === 'NodeNotReady' && e.component === NODE_CONTROLLER && inScope.has(e.involved.name) && !unknownFromCondition.has(e.involved.name)) {
      out.push({ atMs: e.atMs, action: 'mark-unknown', kind: 'Node', object: e.involved.name, detail: 'Ready=Unknown', source: 'Event NodeNotReady' });
    }
    if (e.involved.kind === 'Pod' && e.reason === 'TaintManagerEviction' && e.component === TAINT_EVICTION_COMPONENT && MARKING_FOR_DELETION.test(e.message)) {
      const key = `${e.involved.namespace ?? ''}/${e.involved.name}`;
      const node = podNode.get(key);
      if (node !== undefined && !inScope.has(node)) continue;
      deletedByEvent.add(key);
      out.push({ atMs: e.atMs, action: 'delete-pod', kind: 'Pod', object: key, ...(node ? { node } : {}), detail: '', source: 'Event TaintManagerEviction' });
    }
  }
  for (const p of pods) {
    const key = `${p.namespace}/${p.name}`;
    if (p.deletionTimestamp === undefined || deletedByEvent.has(key) || !inScope.has(p.nodeName)) continue;
    const dt = p.conditions.find((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'DeletionByTaintManager');
    if (!dt) continue;
    const atMs = p.deletionTimestamp - (p.deletionGracePeriodSeconds ?? 0) * 1000;
    out.push({ atMs, action: 'delete-pod', kind: 'Pod', object: key, node: p.nodeName, detail: '', source: 'pod deletionTimestamp − grace period' });
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

function actionText(action: string, detail: string): string {
  if (action === 'mark-unknown') return 'mark Unknown';
  if (action === 'taint') return `taint ${detail}`;
  if (action === 'delete-pod') return 'delete pod';
  const verb = (SHADOW_ACTIONS as Record<string, string>)[action]?.replace(/^would /, '') ?? action;
  return detail ? `${verb} ${detail}` : verb;
}

function decisionObject(d: ShadowDecision): string {
  return d.object.namespace !== undefined ? `${d.object.namespace}/${d.object.name}` : d.object.name;
}

/** The comparable form of a taint decision's detail: `key:effect` (the value dropped, as in {@link observeCluster}). */
function taintKeyEffect(detail: string): string {
  const m = /^([^=:]+)(?:=[^:]*)?:(\w+)$/.exec(detail);
  return m ? `${m[1]}:${m[2]}` : detail;
}

/**
 * Builds the report.
 * @param shadow the shadow's `/debug/state` `shadow` section.
 * @param observed {@link observeCluster}'s result.
 * @returns rows per node and per pod (sorted by object, then time), the summary and history notes.
 * Never throws.
 */
export function buildShadowReport(shadow: ShadowState, observed: readonly ObservedAction[], opts: ShadowReportOptions): ShadowReport {
  const { fromMs, toMs } = shadow.window;
  const notes: string[] = [];
  const lengthMs = Math.max(0, toMs - fromMs);
  let enough = true;
  if (shadow.dropped > 0) {
    enough = false;
    notes.push(`the shadow's decision buffer (${shadow.capacity}) overflowed: ${shadow.dropped} older decisions are lost; the window starts at the oldest one kept`);
  }
  if (lengthMs < opts.minHistoryMs) {
    enough = false;
    notes.push(`not enough history: the shadow has recorded for ${fmt(lengthMs)} (less than --min-history ${fmt(opts.minHistoryMs)}); the report covers only that window`);
  }
  if (fromMs < opts.nowMs - opts.eventTtlMs) {
    notes.push(`Events older than the API server's --event-ttl (${fmt(opts.eventTtlMs)}) are gone: kube-controller-manager's pod deletions before ${new Date(opts.nowMs - opts.eventTtlMs).toISOString()} may be missing`);
  }
  notes.push('taints kube-controller-manager has since removed and pods it has since force-deleted leave no trace: they show as "ours only" if the shadow decided them');

  type Entry = { row: ReportRow; key: string };
  const entries = new Map<string, Entry>();
  const keyOf = (kind: string, object: string, action: string, detail: string): string => `${kind}\u0000${object}\u0000${action}\u0000${detail}`;
  for (const o of observed) {
    if (o.atMs < fromMs || o.atMs > toMs) continue;
    const key = keyOf(o.kind, o.object, o.action, o.detail);
    if (entries.has(key)) continue; // the earliest
    entries.set(key, { key, row: { kind: o.kind, object: o.object, ...(o.node ? { node: o.node } : {}), action: actionText(o.action, o.detail), kcmAtMs: o.atMs, kcmSource: o.source, verdict: 'KCM only' } });
  }
  const compared = new Set<string>(['mark-unknown', 'taint', 'delete-pod']);
  for (const d of shadow.decisions) {
    if (d.atMs < fromMs || d.atMs > toMs) continue;
    const comparable = compared.has(d.action);
    // KCM's side of "mark Unknown" is the Ready condition; the shadow's decision lists every condition it marks.
    const detail = d.action === 'taint' ? taintKeyEffect(d.detail) : d.action === 'mark-unknown' ? 'Ready=Unknown' : d.action === 'delete-pod' ? '' : d.detail;
    const object = decisionObject(d);
    const key = keyOf(d.object.kind, object, d.action, detail) + (comparable ? '' : `\u0000${d.atMs}`);
    const e = entries.get(key);
    if (e) {
      if (e.row.oursAtMs !== undefined) continue; // the earliest
      e.row.oursAtMs = d.atMs;
      e.row.oursReason = d.reason;
      if (d.node !== undefined) e.row.node ??= d.node;
      continue;
    }
    entries.set(key, {
      key,
      row: {
        kind: d.object.kind,
        object,
        ...(d.node !== undefined && d.object.kind !== 'Node' ? { node: d.node } : {}),
        action: actionText(d.action, detail),
        oursAtMs: d.atMs,
        oursReason: d.reason,
        verdict: comparable ? 'ours only' : 'not compared',
      },
    });
  }
  const summary: ShadowReport['summary'] = { rows: 0, disagreements: 0, agree: 0, 'ours later': 0, 'ours earlier': 0, 'KCM only': 0, 'ours only': 0, 'not compared': 0 };
  const rows = [...entries.values()].map((e) => e.row);
  for (const r of rows) {
    if (r.kcmAtMs !== undefined && r.oursAtMs !== undefined) {
      r.diffMs = r.oursAtMs - r.kcmAtMs;
      r.verdict = Math.abs(r.diffMs) <= opts.toleranceMs ? 'agree' : r.diffMs > 0 ? 'ours later' : 'ours earlier';
    }
    summary[r.verdict]++;
    summary.rows++;
    if (r.verdict !== 'agree' && r.verdict !== 'not compared') summary.disagreements++;
  }
  const byObjectThenTime = (a: ReportRow, b: ReportRow): number =>
    a.object.localeCompare(b.object) || (a.kcmAtMs ?? a.oursAtMs ?? 0) - (b.kcmAtMs ?? b.oursAtMs ?? 0) || a.action.localeCompare(b.action);
  return {
    window: { fromMs, toMs, lengthMs },
    enoughHistory: enough,
    notes,
    toleranceMs: opts.toleranceMs,
    nodes: rows.filter((r) => r.kind === 'Node').sort(byObjectThenTime),
    pods: rows.filter((r) => r.kind !== 'Node').sort(byObjectThenTime),
    summary,
  };
}
