// Why this file is over 500 lines: two explanations (pod, node), each a pure explain + render pair over live API reads and /debug/state, plus the command; split candidate: one file per explanation.
/**
 * `node-lifecycle-controller explain pod NS/NAME` and `explain node NAME`: what will happen to one
 * pod or node, and why, from live API reads combined with the controller's `/debug/state`.
 *
 * - pod: its node, the node's NoExecute taints, the toleration matching each (the same pure
 *   functions the taint eviction controller decides with: tolerations.ts, decision.ts), the
 *   deletion deadline (the controller's pending entry when it has one, else computed), and
 *   whether eviction is held back because the node's zone is paused;
 * - node: health (Ready condition), heartbeat age (Lease renewal and the controller's probe
 *   timestamp), zone state, position in the zone's tainting queue, each taint and why it is there.
 *
 * The reports are pure functions of their inputs ({@link explainPod}, {@link explainNode}).
 * Not upstream: kube-controller-manager offers nothing like it.
 */
import { describeError, isNotFound, type KubeClients } from '../kube/client.js';
import { getCondition, podKey, toLease, toNode, toPod, type Lease, type Node, type Pod, type Taint, type Toleration } from '../kube/objects.js';
import type { NodeLifecycleView, ZoneView } from '../nodelifecycle/controller.js';
import {
  NODE_DISK_PRESSURE,
  NODE_MEMORY_PRESSURE,
  NODE_NETWORK_UNAVAILABLE,
  NODE_PID_PRESSURE,
  NODE_READY,
  TAINT_NODE_DISK_PRESSURE,
  TAINT_NODE_MEMORY_PRESSURE,
  TAINT_NODE_NETWORK_UNAVAILABLE,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_OUT_OF_SERVICE,
  TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_UNSCHEDULABLE,
} from '../kube/taints.js';
import { formatZoneKey, getZoneKey } from '../nodelifecycle/zones.js';
import { decidePodEviction } from '../tainteviction/decision.js';
import { firstToleratingToleration, noExecuteTaints } from '../tainteviction/tolerations.js';
import type { AffinityViolationView } from '../nodeaffinity/controller.js';
import { FlagError } from './flags.js';
import { fetchDebugState, formatDuration, formatEta, formatRate, renderTable, rfc3339, secondsFromNow, zoneName, type DebugState, type StateSource } from './inspect.js';
import { formatTaint } from '../kube/taints.js';
import { evictionGuardsOf, inspectClients, parseInspectFlags, processIo, type CommandIo } from './status.js';
import type { EvictionGuardView } from '../nodelifecycle/guard.js';
import {
  explainKubeletEviction, explainNodePressure, kubeletEvictionSentence, readKubeletView, renderNodePressure,
  type KubeletEvictionView, type NodePressureExplanation,
} from './explain-pressure.js';

// ---------------------------------------------------------------------------------------------
// Pod
// ---------------------------------------------------------------------------------------------

/** One NoExecute taint of the pod's node and how the pod's tolerations meet it. */
export interface TaintToleration {
  /** `key=value:effect`. */
  taint: string;
  timeAdded: string | null;
  /** The first toleration that tolerates it (the one that counts, as upstream), or null. */
  toleratedBy: Toleration | null;
  /** `not tolerated`, `forever`, or e.g. `300s`. */
  tolerates: string;
  /** When this taint alone would have the pod deleted; null when tolerated forever. */
  deadline: string | null;
  deadlineInSeconds: number | null;
}

/** The `explain pod -o json` document. Times are RFC 3339 plus seconds from `generatedAt`. */
export interface PodExplanation {
  generatedAt: string;
  source: StateSource | null;
  pod: { namespace: string; name: string; uid: string; phase: string; node: string | null; terminating: boolean; deletionTimestamp: string | null };
  node: { name: string; exists: boolean; ready: string | null; zone: string | null; zoneState: string | null } | null;
  noExecuteTaints: TaintToleration[];
  /** The tolerations used against the NoExecute taints, deduplicated. */
  matchingTolerations: Toleration[];
  /**
   * - `not-bound`: no node; `stays`: nothing calls for eviction; `evict-at`: deletion at `deadline`;
   * - `evict-now`: a taint is not tolerated or a toleration ran out; `deleting`: the controller is deleting it;
   * - `blocked`: the node is not Ready but its zone's tainting is paused (or a cluster-wide eviction
   *   guard is open), so no NoExecute taint comes;
   * - `waiting-for-taint`: the node is not Ready and queued for its NoExecute taint.
   */
  verdict: 'not-bound' | 'stays' | 'evict-at' | 'evict-now' | 'deleting' | 'blocked' | 'waiting-for-taint';
  deadline: string | null;
  deadlineInSeconds: number | null;
  /** `controller`: the controller's pending deletion; `computed`: from the taints and tolerations here. */
  deadlineSource: 'controller' | 'computed' | null;
  pendingDeletion: { deadline: string; deadlineInSeconds: number; state: string; reason: string; taints: string[] } | null;
  /** `guard` is set when a cluster-wide eviction guard (`max-unhealthy-nodes` or `storm`) holds the taint back. */
  blockedByPausedZone: { zone: string; state: string; reason: string; guard?: string } | null;
  /**
   * For a not-Ready node without its NoExecute taint yet (blocked or waiting): the taint it will
   * get and how long the pod tolerates it once it lands.
   */
  prospectiveTaint: { taint: string; toleratedBy: Toleration | null; tolerates: string } | null;
  /** The story in sentences, most important first. */
  explanation: string[];
  /** The node-affinity-enforcer's violation for this pod (docs/node-affinity.md); absent when it has none or is off. */
  nodeAffinity?: {
    state: AffinityViolationView['state'];
    node: string;
    since: string;
    /** When the grace period ends. */
    evictAt: string;
    evictAtInSeconds: number;
    reason: string;
    nextAttempt: string | null;
    pdbRefusals: number;
  };
  /** Set when the kubelet evicted the pod under node pressure (src/cli/explain-pressure.ts). */
  kubeletEviction?: KubeletEvictionView;
}

/** Inputs of {@link explainPod}. */
export interface PodExplainInput {
  pod: Pod;
  /** The pod's node, live; undefined when unbound or the node is gone. */
  node: Node | undefined;
  /** The controller's state, or undefined when it could not be read. */
  state: DebugState | undefined;
  source: StateSource | null;
  /** epoch ms */
  nowMs: number;
}

function zoneOf(node: Node, view: NodeLifecycleView | undefined): ZoneView | undefined {
  const label = formatZoneKey(getZoneKey(node.labels));
  return view?.zones.find((z) => z.zoneLabel === label);
}

/**
 * Whether NoExecute tainting is held back for the zone: an open cluster-wide eviction guard (issue
 * 16; it holds every zone, so it is named first), a pause reason, or a zero rate.
 */
function pauseOf(zone: ZoneView | undefined, guards: readonly EvictionGuardView[]): { zone: string; state: string; reason: string; guard?: string } | undefined {
  const open = guards.find((g) => g.open);
  if (open) return { zone: zone ? zoneName(zone.zoneLabel) : '(every zone)', state: zone?.state ?? '', reason: open.reason, guard: open.guard };
  if (!zone) return undefined;
  if (zone.pausedReason === undefined && zone.rate > 0) return undefined;
  return {
    zone: zoneName(zone.zoneLabel),
    state: zone.state,
    reason: zone.pausedReason ?? `the zone's tainting rate is 0 (zone state ${zone.state})`,
  };
}

/** A toleration in one line: `node.kubernetes.io/unreachable:NoExecute op=Exists for 300s`. */
export function formatToleration(t: Toleration): string {
  const key = t.key ? t.key : '*';
  const value = t.value ? `=${t.value}` : '';
  const effect = t.effect ? `:${t.effect}` : ':*';
  const op = t.operator ?? 'Equal';
  const time = t.tolerationSeconds === undefined ? 'forever' : `for ${t.tolerationSeconds}s`;
  return `${key}${value}${effect} op=${op} ${time}`;
}

/**
 * Explains what will happen to a pod.
 * @returns the explanation (see {@link PodExplanation}). Never throws.
 * Uses upstream's matching (`GetMatchingTolerations`: the first toleration tolerating a taint
 * counts) and our restart-safe deadline (decision.ts `decidePodEviction`).
 */
export function explainPod(input: PodExplainInput): PodExplanation {
  const out = explainPodTaints(input);
  return withNodeAffinity(out, input);
}

/**
 * Adds the node-affinity-enforcer's view of the pod (issue 19; docs/node-affinity.md): `nodeAffinity`
 * and the first sentence of the explanation, when `/debug/state` has a violation for this pod (uid).
 * @returns `out`, changed in place.
 */
function withNodeAffinity(out: PodExplanation, input: PodExplainInput): PodExplanation {
  const { pod, nowMs } = input;
  // The enforcer's part of /debug/state (src/cli/run.ts); read narrowly, it may be absent.
  const na = (input.state as { nodeAffinity?: { violations?: AffinityViolationView[] } } | undefined)?.nodeAffinity;
  const v = na?.violations?.find((x) => x.pod === podKey(pod) && x.uid === pod.uid);
  if (!v) return out;
  out.nodeAffinity = {
    state: v.state,
    node: v.node,
    since: rfc3339(v.sinceMs),
    evictAt: rfc3339(v.evictAtMs),
    evictAtInSeconds: secondsFromNow(v.evictAtMs, nowMs),
    reason: v.reason,
    nextAttempt: v.nextAttemptMs !== undefined ? rfc3339(v.nextAttemptMs) : null,
    pdbRefusals: v.pdbRefusals,
  };
  const lead = `The pod violates its during-execution node affinity on node ${v.node} since ${rfc3339(v.sinceMs)}`;
  const next = v.nextAttemptMs !== undefined ? ` next attempt at ${rfc3339(v.nextAttemptMs)} (${formatEta(v.nextAttemptMs, nowMs)})` : '';
  const sentence: Record<AffinityViolationView['state'], string> = {
    waiting: `${lead}; evicts at ${rfc3339(v.evictAtMs)} (${formatEta(v.evictAtMs, nowMs)}) unless the label comes back.`,
    held: `${lead}; not evicted for now: ${v.reason}.`,
    queued: `${lead}; its grace ended at ${rfc3339(v.evictAtMs)}: queued for eviction (${v.reason}).`,
    evicting: `${lead}; the eviction is being sent.`,
    'blocked-by-pdb': `${lead}; the eviction was refused by a PodDisruptionBudget ${v.pdbRefusals} time(s) (${v.reason});${next}.`,
    retrying: `${lead}; the eviction failed (${v.reason});${next}.`,
    evicted: `${lead}; the node-affinity-enforcer evicted it.`,
  };
  out.explanation.unshift(sentence[v.state]);
  return out;
}

function explainPodTaints(input: PodExplainInput): PodExplanation {
  const { pod, node, state, nowMs } = input;
  const view = state?.nodeLifecycle;
  const key = podKey(pod);
  const pending = state?.taintEviction?.find((p) => p.pod === key && p.uid === pod.uid);
  const taints = node ? noExecuteTaints(node.taints) : [];
  const perTaint: TaintToleration[] = taints.map((t) => {
    const tol = firstToleratingToleration(t, pod.tolerations);
    const alone = decidePodEviction(pod, [t], nowMs);
    const at = alone.kind === 'delete-at' ? alone.atMs : alone.kind === 'delete-now' ? nowMs : undefined;
    return {
      taint: formatTaint(t),
      timeAdded: t.timeAdded !== undefined ? rfc3339(t.timeAdded) : null,
      toleratedBy: tol ?? null,
      tolerates: tol === undefined ? 'not tolerated' : tol.tolerationSeconds === undefined ? 'forever' : `${Math.max(0, tol.tolerationSeconds)}s`,
      deadline: at !== undefined ? rfc3339(at) : null,
      deadlineInSeconds: at !== undefined ? secondsFromNow(at, nowMs) : null,
    };
  });
  const matching: Toleration[] = [];
  for (const t of perTaint) if (t.toleratedBy && !matching.includes(t.toleratedBy)) matching.push(t.toleratedBy);

  const ready = node ? getCondition(node.conditions, NODE_READY) : undefined;
  const zone = node ? zoneOf(node, view) : undefined;
  const out: PodExplanation = {
    generatedAt: rfc3339(nowMs),
    source: input.source,
    pod: {
      namespace: pod.namespace,
      name: pod.name,
      uid: pod.uid,
      phase: pod.phase,
      node: pod.nodeName === '' ? null : pod.nodeName,
      terminating: pod.deletionTimestamp !== undefined,
      deletionTimestamp: pod.deletionTimestamp !== undefined ? rfc3339(pod.deletionTimestamp) : null,
    },
    node:
      pod.nodeName === ''
        ? null
        : {
            name: pod.nodeName,
            exists: node !== undefined,
            ready: ready?.status ?? null,
            zone: node ? zoneName(formatZoneKey(getZoneKey(node.labels))) : null,
            zoneState: zone?.state ?? null,
          },
    noExecuteTaints: perTaint,
    matchingTolerations: matching,
    verdict: 'stays',
    deadline: null,
    deadlineInSeconds: null,
    deadlineSource: null,
    pendingDeletion: pending
      ? { deadline: rfc3339(pending.deadlineMs), deadlineInSeconds: secondsFromNow(pending.deadlineMs, nowMs), state: pending.state, reason: pending.reason, taints: [...pending.taints] }
      : null,
    blockedByPausedZone: null,
    prospectiveTaint: null,
    explanation: [],
  };
  const say = (s: string): void => void out.explanation.push(s);
  const setDeadline = (atMs: number, source: 'controller' | 'computed'): void => {
    out.deadline = rfc3339(atMs);
    out.deadlineInSeconds = secondsFromNow(atMs, nowMs);
    out.deadlineSource = source;
  };

  if (pod.nodeName === '') {
    out.verdict = 'not-bound';
    say('The pod is not bound to a node: no node taint applies to it.');
    return out;
  }
  if (!node) {
    out.verdict = 'stays';
    say(`Node ${pod.nodeName} does not exist: the pod is an orphan; PodGC force-deletes it after its quarantine (40 s upstream).`);
    return out;
  }
  if (pod.deletionTimestamp !== undefined) say(`The pod is already terminating (deletionTimestamp ${rfc3339(pod.deletionTimestamp)}).`);

  const decision = decidePodEviction(pod, node.taints, nowMs);
  if (pending) {
    setDeadline(pending.deadlineMs, 'controller');
    out.verdict = pending.state === 'deleting' ? 'deleting' : 'evict-at';
    say(
      pending.state === 'deleting'
        ? `The taint eviction controller is deleting the pod now (due ${formatEta(pending.deadlineMs, nowMs)}): ${pending.reason}.`
        : `The taint eviction controller will delete the pod at ${rfc3339(pending.deadlineMs)} (${formatEta(pending.deadlineMs, nowMs)}): ${pending.reason}.`,
    );
  } else if (decision.kind === 'delete-at') {
    setDeadline(decision.atMs, 'computed');
    out.verdict = 'evict-at';
    say(`The pod will be deleted at ${rfc3339(decision.atMs)} (${formatEta(decision.atMs, nowMs)}): ${decision.reason}.`);
    if (state?.taintEviction) say('(The controller has no pending deletion for it yet; the deadline above is computed from the taints and tolerations.)');
  } else if (decision.kind === 'delete-now') {
    setDeadline(nowMs, 'computed');
    out.verdict = 'evict-now';
    say(`The pod is due for deletion now: ${decision.reason}.`);
  }

  for (const t of perTaint) {
    say(
      t.toleratedBy === null
        ? `Taint ${t.taint} is not tolerated by any of the pod's tolerations.`
        : `Taint ${t.taint}${t.timeAdded ? ` (added ${t.timeAdded})` : ''} is tolerated by ${formatToleration(t.toleratedBy)}${t.deadline ? `, until ${t.deadline}` : ''}.`,
    );
  }

  if (decision.kind === 'none' && !pending) {
    const controllerTainted = taints.some((t) => t.key === TAINT_NODE_UNREACHABLE || t.key === TAINT_NODE_NOT_READY);
    const notReady = ready?.status !== 'True';
    const pause = pauseOf(zone, evictionGuardsOf(state));
    const nodeView = view?.nodes.find((n) => n.name === node.name);
    const coming: Taint = { key: ready?.status === 'False' ? TAINT_NODE_NOT_READY : TAINT_NODE_UNREACHABLE, effect: 'NoExecute' };
    const comingTol = firstToleratingToleration(coming, pod.tolerations);
    const comingText =
      comingTol === undefined ? 'not tolerated' : comingTol.tolerationSeconds === undefined ? 'forever' : `${Math.max(0, comingTol.tolerationSeconds)}s`;
    const then =
      comingTol === undefined
        ? `the pod does not tolerate ${formatTaint(coming)} and is evicted as soon as it lands`
        : comingTol.tolerationSeconds === undefined
          ? `the pod tolerates ${formatTaint(coming)} forever and stays`
          : `the pod's toleration ${formatToleration(comingTol)} gives it ${comingText} from then`;
    if (notReady && !controllerTainted && pause) {
      out.verdict = 'blocked';
      out.blockedByPausedZone = pause;
      out.prospectiveTaint = { taint: formatTaint(coming), toleratedBy: comingTol ?? null, tolerates: comingText };
      say(`Node ${node.name} is not Ready (${ready?.status ?? 'no Ready condition'}) but carries no NoExecute taint: tainting in zone ${pause.zone} is paused: ${pause.reason}`);
      say(`If the node is still down when ${pause.guard ? 'the eviction circuit closes' : 'the zone recovers'}, it is tainted ${formatTaint(coming)}; ${then}.`);
    } else if (notReady && !controllerTainted && nodeView?.queued) {
      out.verdict = 'waiting-for-taint';
      out.prospectiveTaint = { taint: formatTaint(coming), toleratedBy: comingTol ?? null, tolerates: comingText };
      say(`Node ${node.name} is not Ready and queued for its NoExecute taint in zone ${zone ? zoneName(zone.zoneLabel) : '?'}; once it lands, ${then}.`);
    } else if (taints.length === 0) {
      say(`Node ${node.name} has no NoExecute taint${notReady ? '' : ' and is Ready'}: nothing calls for evicting the pod.`);
    } else {
      say('Every NoExecute taint on the node is tolerated forever: the pod stays.');
    }
  }
  return out;
}

/** Renders a pod explanation as text (ends in a newline). */
export function renderPodExplanation(e: PodExplanation): string {
  const lines: string[] = [];
  lines.push(`Pod:       ${e.pod.namespace}/${e.pod.name}  (phase ${e.pod.phase || 'unknown'}${e.pod.terminating ? ', terminating' : ''})`);
  if (e.node) {
    lines.push(`Node:      ${e.node.name}${e.node.exists ? `  Ready=${e.node.ready ?? 'none'}  zone ${e.node.zone ?? '?'} (${e.node.zoneState ?? 'state unknown'})` : '  (does not exist)'}`);
  } else {
    lines.push('Node:      (not bound)');
  }
  lines.push(`Verdict:   ${e.verdict}${e.deadline ? `  deadline ${e.deadline} (${formatEta((e.deadlineInSeconds ?? 0) * 1000, 0)}, ${e.deadlineSource})` : ''}`);
  if (e.nodeAffinity) lines.push(`Affinity:  ${e.nodeAffinity.state} since ${e.nodeAffinity.since}, grace ends ${e.nodeAffinity.evictAt}`);
  if (e.kubeletEviction) lines.push(`Evicted:   by the kubelet: ${e.kubeletEviction.signals.join(' or ')} below ${e.kubeletEviction.threshold ?? '?'} (available ${e.kubeletEviction.available ?? '?'})`);
  if (e.blockedByPausedZone) {
    const b = e.blockedByPausedZone;
    lines.push(b.guard ? `Blocked:   eviction circuit open (${b.guard}): no NoExecute taint is added anywhere` : `Blocked:   zone ${b.zone} is paused (${b.state})`);
  }
  if (e.prospectiveTaint) {
    const p = e.prospectiveTaint;
    lines.push(`Next:      ${p.taint}, tolerated ${p.tolerates === 'not tolerated' ? 'not at all' : p.tolerates === 'forever' ? 'forever' : `for ${p.tolerates}`}${p.toleratedBy ? ` (${formatToleration(p.toleratedBy)})` : ''}`);
  }
  lines.push('');
  if (e.noExecuteTaints.length > 0) {
    lines.push(
      ...renderTable(
        ['noexecute taint', 'added', 'tolerated by', 'tolerates', 'deadline'],
        e.noExecuteTaints.map((t) => [t.taint, t.timeAdded ?? '-', t.toleratedBy ? formatToleration(t.toleratedBy) : '-', t.tolerates, t.deadline ?? '-']),
      ),
    );
  } else {
    lines.push('No NoExecute taints on the node.');
  }
  lines.push('');
  lines.push('Why:');
  for (const s of e.explanation) lines.push(`  - ${s}`);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------------------------

/** One taint of a node and why it is there. */
export interface TaintReason {
  taint: string;
  timeAdded: string | null;
  /** `node-lifecycle-controller`, `administrator`, or `other`. */
  managedBy: 'node-lifecycle-controller' | 'administrator' | 'other';
  why: string;
}

/** The `explain node -o json` document. Times are RFC 3339 plus seconds from `generatedAt`. */
export interface NodeExplanation {
  generatedAt: string;
  source: StateSource | null;
  node: string;
  /** Whether the controller manages the node (it is in its view). */
  managed: boolean;
  ready: { status: string; reason: string | null; message: string | null; lastHeartbeatTime: string | null; lastTransitionTime: string | null } | null;
  heartbeat: {
    leaseRenewTime: string | null;
    leaseAgeSeconds: number | null;
    /** When the controller last saw a heartbeat (its probe timestamp). */
    probeTimestamp: string | null;
    probeAgeSeconds: number | null;
    /** When the controller will mark the node Unknown if no heartbeat comes. */
    probeDeadline: string | null;
    probeDeadlineInSeconds: number | null;
    /** Ready status as the controller last decided it. */
    controllerReady: string | null;
  };
  zone: { zone: string; state: string; size: number; unhealthy: number; ratePerSecond: number; queueLength: number; pausedReason: string | null } | null;
  queue: { queued: boolean; position: number | null; positionExact: boolean; eta: string | null; etaInSeconds: number | null };
  taints: TaintReason[];
  /** Pods bound to the node; `terminating` ones have a deletionTimestamp (on a dead node they stay until force-deleted or the node returns). */
  pods: { total: number; terminating: number; pendingDeletions: number; nextDeadline: string | null; nextDeadlineInSeconds: number | null };
  explanation: string[];
  /** Set when the node has a pressure condition: signals, thresholds and the kubelet's eviction order (src/cli/explain-pressure.ts). */
  pressure?: NodePressureExplanation;
}

/** Inputs of {@link explainNode}. */
export interface NodeExplainInput {
  node: Node;
  /** The node's heartbeat Lease (`kube-node-lease/<name>`), if any. */
  lease: Lease | undefined;
  /** Pods bound to the node (live), or undefined when not read. */
  pods: readonly Pod[] | undefined;
  state: DebugState | undefined;
  source: StateSource | null;
  /** epoch ms */
  nowMs: number;
}

const PRESSURE: ReadonlyMap<string, string> = new Map([
  [TAINT_NODE_MEMORY_PRESSURE, NODE_MEMORY_PRESSURE],
  [TAINT_NODE_DISK_PRESSURE, NODE_DISK_PRESSURE],
  [TAINT_NODE_PID_PRESSURE, NODE_PID_PRESSURE],
  [TAINT_NODE_NETWORK_UNAVAILABLE, NODE_NETWORK_UNAVAILABLE],
]);

/**
 * Why a taint is on a node, judged against the node's current conditions (a taint the conditions
 * no longer call for is called out as about to be removed).
 * @returns the reason and who manages the taint. Never throws.
 * Mirrors the meaning of upstream's `nodeConditionToTaintKeyStatusMap` and the NoExecute templates.
 */
export function explainTaint(t: Taint, node: Pick<Node, 'conditions' | 'unschedulable'>): TaintReason {
  const base = { taint: formatTaint(t), timeAdded: t.timeAdded !== undefined ? rfc3339(t.timeAdded) : null };
  const ready = getCondition(node.conditions, NODE_READY);
  const readyText = ready ? `Ready is ${ready.status}${ready.reason ? ` (${ready.reason})` : ''}` : 'the node has no Ready condition';
  const nlc = (why: string): TaintReason => ({ ...base, managedBy: 'node-lifecycle-controller', why });
  if (t.key === TAINT_NODE_UNREACHABLE || t.key === TAINT_NODE_NOT_READY) {
    const wants = t.key === TAINT_NODE_UNREACHABLE ? 'Unknown' : 'False';
    const stale = ready?.status !== wants ? ` — stale: ${readyText}, so the controller removes it` : '';
    if (t.effect === 'NoExecute') {
      return nlc(
        `${t.key === TAINT_NODE_UNREACHABLE ? 'the kubelet stopped heartbeating (Ready=Unknown)' : 'the kubelet reports NotReady (Ready=False)'}; ` +
          `pods that do not tolerate it are evicted when their tolerationSeconds run out${stale}`,
      );
    }
    return nlc(`condition taint for Ready=${wants}: no new pods are scheduled here${stale}`);
  }
  const condition = PRESSURE.get(t.key);
  if (condition !== undefined) {
    const c = getCondition(node.conditions, condition);
    const on = c?.status === 'True';
    return nlc(`${condition} is ${c?.status ?? 'absent'}${c?.reason ? ` (${c.reason})` : ''}${on ? ': no new pods are scheduled here' : ' — stale, the controller removes it'}`);
  }
  if (t.key === TAINT_NODE_UNSCHEDULABLE) {
    return nlc(node.unschedulable ? 'the node is cordoned (spec.unschedulable)' : 'stale: the node is no longer cordoned, the controller removes it');
  }
  if (t.key === TAINT_NODE_OUT_OF_SERVICE) {
    return {
      ...base,
      managedBy: 'administrator',
      why:
        'set by an administrator (non-graceful node shutdown): while the node is not Ready, pods not tolerating it are evicted, ' +
        'PodGC force-deletes its terminating pods and the attach/detach controller force-detaches its volumes' +
        (ready?.status === 'True' ? ' — but the node is Ready, so nothing is forced' : ''),
    };
  }
  return { ...base, managedBy: 'other', why: 'not managed by this controller' };
}

/**
 * Explains a node's health, zone, queue position and taints.
 * @returns the explanation (see {@link NodeExplanation}). Never throws.
 */
export function explainNode(input: NodeExplainInput): NodeExplanation {
  const { node, lease, pods, state, nowMs } = input;
  const view = state?.nodeLifecycle;
  const nv = view?.nodes.find((n) => n.name === node.name);
  const zone = zoneOf(node, view);
  const ready = getCondition(node.conditions, NODE_READY);
  const pending = (state?.taintEviction ?? []).filter((p) => p.node === node.name);
  const nextPending = pending.reduce<number | undefined>((m, p) => (m === undefined || p.deadlineMs < m ? p.deadlineMs : m), undefined);

  // Queue order is by when a node was queued, which follows when it went silent: the head is
  // exact (from the queue itself), other positions are estimated by heartbeat order.
  let position: number | null = null;
  let exact = false;
  let etaMs: number | undefined;
  if (nv?.queued && zone) {
    const queuedHere = (view?.nodes ?? [])
      .filter((n) => n.queued && n.zone === zone.zoneLabel)
      .sort((a, b) => (a.probeTimestamp ?? 0) - (b.probeTimestamp ?? 0) || a.name.localeCompare(b.name));
    if (zone.next?.node === node.name) {
      position = 1;
      exact = true;
    } else {
      const others = queuedHere.filter((n) => n.name !== zone.next?.node);
      position = others.findIndex((n) => n.name === node.name) + (zone.next ? 2 : 1);
    }
    if (zone.rate > 0) {
      const headAt = Math.max(zone.next?.processAt ?? nowMs, nowMs);
      etaMs = headAt + ((position - 1) * 1000) / zone.rate;
    }
  }

  const out: NodeExplanation = {
    generatedAt: rfc3339(nowMs),
    source: input.source,
    node: node.name,
    managed: nv !== undefined,
    ready: ready
      ? {
          status: ready.status,
          reason: ready.reason ?? null,
          message: ready.message ?? null,
          lastHeartbeatTime: ready.lastHeartbeatTime !== undefined ? rfc3339(ready.lastHeartbeatTime) : null,
          lastTransitionTime: ready.lastTransitionTime !== undefined ? rfc3339(ready.lastTransitionTime) : null,
        }
      : null,
    heartbeat: {
      leaseRenewTime: lease?.renewTime !== undefined ? rfc3339(lease.renewTime) : null,
      leaseAgeSeconds: lease?.renewTime !== undefined ? -secondsFromNow(lease.renewTime, nowMs) : null,
      probeTimestamp: nv?.probeTimestamp !== undefined ? rfc3339(nv.probeTimestamp) : null,
      probeAgeSeconds: nv?.probeTimestamp !== undefined ? -secondsFromNow(nv.probeTimestamp, nowMs) : null,
      probeDeadline: nv?.probeDeadline !== undefined ? rfc3339(nv.probeDeadline) : null,
      probeDeadlineInSeconds: nv?.probeDeadline !== undefined ? secondsFromNow(nv.probeDeadline, nowMs) : null,
      controllerReady: nv?.ready ?? null,
    },
    zone: zone
      ? {
          zone: zoneName(zone.zoneLabel),
          state: zone.state,
          size: zone.size,
          unhealthy: zone.unhealthy,
          ratePerSecond: zone.rate,
          queueLength: zone.queueLength,
          pausedReason: zone.pausedReason ?? null,
        }
      : null,
    queue: {
      queued: nv?.queued ?? false,
      position,
      positionExact: exact,
      eta: etaMs !== undefined ? rfc3339(etaMs) : null,
      etaInSeconds: etaMs !== undefined ? secondsFromNow(etaMs, nowMs) : null,
    },
    taints: node.taints.map((t) => explainTaint(t, node)),
    pods: {
      total: pods?.length ?? 0,
      terminating: pods?.filter((p) => p.deletionTimestamp !== undefined).length ?? 0,
      pendingDeletions: pending.length,
      nextDeadline: nextPending !== undefined ? rfc3339(nextPending) : null,
      nextDeadlineInSeconds: nextPending !== undefined ? secondsFromNow(nextPending, nowMs) : null,
    },
    explanation: [],
  };
  const say = (s: string): void => void out.explanation.push(s);
  if (!state) say('The controller could not be asked: only the cluster\'s view is shown.');
  else if (!view) say('The node lifecycle controller is not running in that process.');
  else if (!nv) say('The controller does not manage this node (it is outside its --node-selector, or not yet seen).');

  const noExec = node.taints.filter((t) => t.effect === 'NoExecute' && (t.key === TAINT_NODE_UNREACHABLE || t.key === TAINT_NODE_NOT_READY));
  const heartbeatAge = nv?.probeTimestamp !== undefined ? nowMs - nv.probeTimestamp : lease?.renewTime !== undefined ? nowMs - lease.renewTime : undefined;
  if (ready?.status === 'True') {
    say(
      `Healthy: Ready=True, last heartbeat ${heartbeatAge !== undefined ? `${formatDuration(heartbeatAge)} ago` : 'unknown'}` +
        (nv?.probeDeadline !== undefined ? `; marked Unknown ${formatEta(nv.probeDeadline, nowMs)} unless a heartbeat comes first.` : '.'),
    );
  } else {
    say(
      `Not healthy: Ready=${ready?.status ?? 'absent'}${ready?.reason ? ` (${ready.reason})` : ''}` +
        (heartbeatAge !== undefined ? `, last heartbeat ${formatDuration(heartbeatAge)} ago.` : '.'),
    );
    const pause = pauseOf(zone, evictionGuardsOf(state));
    if (noExec.length > 0) {
      say(`Tainted ${noExec.map((t) => formatTaint(t)).join(', ')}${noExec[0]?.timeAdded !== undefined ? ` at ${rfc3339(noExec[0].timeAdded)}` : ''}: its pods are evicted as their tolerations run out.`);
    } else if (pause) {
      say(`NOT tainted: NoExecute tainting in zone ${pause.zone} is paused: ${pause.reason}`);
    } else if (out.queue.queued) {
      say(
        `Queued for its NoExecute taint in zone ${out.zone?.zone ?? '?'}: position ${position ?? '?'}${exact ? '' : ' (estimated)'} of ${zone?.queueLength ?? '?'}` +
          (etaMs !== undefined ? `, ETA ${formatEta(etaMs, nowMs)} at ${formatRate(zone?.rate ?? 0)} node/s.` : '.'),
      );
    } else if (view && !view.canSeeCluster) {
      say('The controller cannot see the cluster right now (caches not current): it judges no node until it can.');
    }
  }
  if (out.zone) {
    say(`Zone ${out.zone.zone}: ${out.zone.state}, ${out.zone.unhealthy} of ${out.zone.size} not Ready, tainting rate ${formatRate(out.zone.ratePerSecond)} node/s, ${out.zone.queueLength} queued.`);
  }
  if (pending.length > 0 && nextPending !== undefined) say(`${pending.length} pod deletion(s) pending on this node; the next ${formatEta(nextPending, nowMs)}.`);
  return out;
}

/** Renders a node explanation as text (ends in a newline). */
export function renderNodeExplanation(e: NodeExplanation): string {
  const lines: string[] = [];
  const r = e.ready;
  lines.push(`Node:        ${e.node}${e.managed ? '' : '  (not managed by this controller)'}`);
  lines.push(`Ready:       ${r ? `${r.status}${r.reason ? ` (${r.reason})` : ''}${r.lastTransitionTime ? ` since ${r.lastTransitionTime}` : ''}` : 'no Ready condition'}`);
  const hb = e.heartbeat;
  lines.push(
    `Heartbeat:   lease renewed ${hb.leaseAgeSeconds !== null ? `${formatDuration(hb.leaseAgeSeconds * 1000)} ago` : 'never'}` +
      (hb.probeAgeSeconds !== null ? `; controller's probe ${formatDuration(hb.probeAgeSeconds * 1000)} ago` : '') +
      (hb.probeDeadlineInSeconds !== null ? `; Unknown ${formatEta(hb.probeDeadlineInSeconds * 1000, 0)} without one` : ''),
  );
  if (e.zone) {
    lines.push(
      `Zone:        ${e.zone.zone}  ${e.zone.state}  ${e.zone.unhealthy}/${e.zone.size} unhealthy  rate ${formatRate(e.zone.ratePerSecond)}/s  queue ${e.zone.queueLength}` +
        (e.zone.pausedReason ? `\n             paused: ${e.zone.pausedReason}` : ''),
    );
  }
  lines.push(
    `Queue:       ${e.queue.queued ? `position ${e.queue.position ?? '?'}${e.queue.positionExact ? '' : ' (estimated)'}${e.queue.etaInSeconds !== null ? `, ETA ${formatEta(e.queue.etaInSeconds * 1000, 0)}` : ', no ETA (paused)'}` : 'not queued'}`,
  );
  lines.push(`Pods:        ${e.pods.total}${e.pods.terminating > 0 ? ` (${e.pods.terminating} terminating)` : ''}${e.pods.pendingDeletions > 0 ? `, ${e.pods.pendingDeletions} pending deletion(s), next ${formatEta((e.pods.nextDeadlineInSeconds ?? 0) * 1000, 0)}` : ''}`);
  lines.push('');
  if (e.taints.length > 0) lines.push(...renderTable(['taint', 'added', 'managed by', 'why'], e.taints.map((t) => [t.taint, t.timeAdded ?? '-', t.managedBy, t.why])));
  else lines.push('No taints.');
  if (e.pressure) lines.push('', ...renderNodePressure(e.pressure));
  lines.push('');
  lines.push('Why:');
  for (const s of e.explanation) lines.push(`  - ${s}`);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

const EXPLAIN_USAGE = `$0 pod NAMESPACE/NAME | node NAME [--endpoint URL | --kubeconfig FILE [--namespace NS --lease NAME]] [-o table|json]

Says what will happen to one pod (its node, the NoExecute taints on it, the matching tolerations, the
deletion deadline, and whether a paused zone holds eviction back) or one node (health, heartbeat age,
zone state, tainting queue position, and each taint with the reason), from live API reads and the
controller's /debug/state. A node under Memory/Disk/PIDPressure also gets the signals, thresholds and the
kubelet's eviction order, live through the node proxy if you may get nodes/proxy, else static. The API is always read with the kubeconfig; --namespace/--lease/--endpoint
only say where the controller is.`;

/**
 * Runs `explain pod NS/NAME` or `explain node NAME`.
 * @param argv the arguments after `explain`.
 * @returns exit code 0.
 * @throws {FlagError} for bad flags or arguments (exit code 2 in program.ts); {Error} when the pod
 *   or node does not exist or the API cannot be read (exit code 1). A controller that cannot be
 *   reached is reported in the output, not thrown: the cluster's view is still useful.
 */
export async function runExplainCommand(argv: string[], io: CommandIo = processIo): Promise<number> {
  const flags = await parseInspectFlags('explain', argv, EXPLAIN_USAGE, io);
  if (!flags) return 0;
  const [kind, target, ...extra] = flags.args;
  if ((kind !== 'pod' && kind !== 'node') || target === undefined || extra.length > 0) {
    throw new FlagError('usage: explain pod NAMESPACE/NAME | explain node NAME');
  }
  const clients = inspectClients(flags, true) as KubeClients;
  const now = io.now ?? Date.now;
  let state: DebugState | undefined;
  let source: StateSource | null = null;
  try {
    ({ state, source } = await fetchDebugState(flags, clients));
  } catch (err) {
    io.err(`warning: controller state unavailable: ${describeError(err)}\n`);
  }
  if (kind === 'pod') {
    const slash = target.indexOf('/');
    if (slash <= 0 || slash === target.length - 1) throw new FlagError(`explain pod: expected NAMESPACE/NAME, got "${target}"`);
    const namespace = target.slice(0, slash);
    const name = target.slice(slash + 1);
    const raw = await readOrExplain(() => clients.core.readNamespacedPod({ name, namespace }), `pod ${namespace}/${name}`);
    const pod = toPod(raw);
    if (!pod) throw new Error(`pod ${namespace}/${name}: malformed object`);
    const node = pod.nodeName ? toNode(await readOptional(() => clients.core.readNode({ name: pod.nodeName }))) : undefined;
    const e = explainPod({ pod, node, state, source, nowMs: now() });
    const kubeletEviction = explainKubeletEviction(raw.status);
    if (kubeletEviction) {
      e.kubeletEviction = kubeletEviction;
      e.explanation.unshift(kubeletEvictionSentence(kubeletEviction));
    }
    io.out(flags.output === 'json' ? `${JSON.stringify(e, null, 2)}\n` : renderPodExplanation(e));
    return 0;
  }
  const node = toNode(await readOrExplain(() => clients.core.readNode({ name: target }), `node ${target}`));
  if (!node) throw new Error(`node ${target}: malformed object`);
  const lease = toLease(await readOptional(() => clients.coordination.readNamespacedLease({ name: target, namespace: 'kube-node-lease' })));
  const podList = await clients.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${target}` });
  const pods = podList.items.map((p) => toPod(p)).filter((p): p is Pod => p !== undefined);
  const e = explainNode({ node, lease, pods, state, source, nowMs: now() });
  // Only a node under pressure costs the access review and the two node-proxy reads.
  if (node.conditions.some((c) => c.status === 'True' && /^(Memory|Disk|PID)Pressure$/.test(c.type))) {
    const pressure = explainNodePressure({ conditions: node.conditions, pods: podList.items, kubelet: await readKubeletView(clients.kubeConfig, target), nowMs: now() });
    if (pressure) {
      e.pressure = pressure;
      e.explanation.push(...pressure.explanation);
    }
  }
  io.out(flags.output === 'json' ? `${JSON.stringify(e, null, 2)}\n` : renderNodeExplanation(e));
  return 0;
}

async function readOrExplain<T>(read: () => Promise<T>, what: string): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new Error(isNotFound(err) ? `${what} not found` : `cannot read ${what}: ${describeError(err)}`, { cause: err });
  }
}

async function readOptional<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
