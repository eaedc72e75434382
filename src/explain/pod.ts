/**
 * `explain pod NS/NAME`: what will happen to one pod, and why, as a pure function of the pod, its
 * node (live API reads) and the controller's `/debug/state` ({@link explainPod}). The pod's node,
 * the node's NoExecute taints, the toleration matching each (the same pure functions the taint
 * eviction controller decides with: tolerations.ts, decision.ts), the deletion deadline (the
 * controller's pending entry when it has one, else computed), whether eviction is held back because
 * the node's zone is paused, and the node-affinity-enforcer's violation. src/cli/explain.ts reads
 * the inputs, adds the kubelet's own eviction (node pressure) and prints.
 *
 * Not upstream: kube-controller-manager offers nothing like it.
 */
import { podKey, getCondition, type Node, type Pod, type Taint, type Toleration } from '../kube/objects.js';
import { formatTaint, NODE_READY, TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE } from '../kube/taints.js';
import type { AffinityViolationView } from '../nodeaffinity/controller.js';
import { formatZoneKey, getZoneKey } from '../nodelifecycle/zones.js';
import { decidePodEviction } from '../tainteviction/decision.js';
import { firstToleratingToleration, noExecuteTaints } from '../tainteviction/tolerations.js';
import { formatEta, rfc3339, secondsFromNow } from '../util/format.js';
import { evictionGuardsOf, pauseOf, zoneName, zoneOf, type DebugState, type StateSource } from './state.js';

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
   * - `waiting-for-taint`: the node is not Ready and queued for its NoExecute taint;
   * - `held`: due, but held until the node lifecycle controller has confirmed the node not Ready
   *   since its start (the start hold, src/kube/judgements.ts).
   */
  verdict: 'not-bound' | 'stays' | 'evict-at' | 'evict-now' | 'deleting' | 'blocked' | 'waiting-for-taint' | 'held';
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
 * Adds the node-affinity-enforcer's view of the pod (docs/node-affinity.md): `nodeAffinity`
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
  // As the controller that answered matches (its --feature-gates); without its state, the 1.37 default.
  const comparisonOperators = state?.featureGates?.TaintTolerationComparisonOperators ?? false;
  const perTaint: TaintToleration[] = taints.map((t) => {
    const tol = firstToleratingToleration(t, pod.tolerations, comparisonOperators);
    const alone = decidePodEviction(pod, [t], nowMs, { comparisonOperators });
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

  const decision = decidePodEviction(pod, node.taints, nowMs, { comparisonOperators });
  if (pod.tolerations.some((t) => t.operator === 'Lt' || t.operator === 'Gt')) {
    const gate = state?.featureGates?.TaintTolerationComparisonOperators;
    say(
      comparisonOperators
        ? 'The controller runs with TaintTolerationComparisonOperators on: the Lt and Gt tolerations compare integer taint values.'
        : `The pod's Lt and Gt tolerations tolerate no taint: ${gate === false ? 'the controller runs with' : "the controller's gates are unknown here; assumed"} TaintTolerationComparisonOperators off (the 1.37 default).`,
    );
  }
  if (pending) {
    if (pending.state !== 'held') setDeadline(pending.deadlineMs, 'controller');
    out.verdict = pending.state === 'deleting' ? 'deleting' : pending.state === 'held' ? 'held' : 'evict-at';
    say(
      pending.state === 'deleting'
        ? `The taint eviction controller is deleting the pod now (due ${formatEta(pending.deadlineMs, nowMs)}): ${pending.reason}.`
        : pending.state === 'held'
          ? `The taint eviction controller holds the pod's deletion (since ${rfc3339(pending.deadlineMs)}) until the node lifecycle controller confirms the node not Ready: ${pending.reason}.`
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
    const comingTol = firstToleratingToleration(coming, pod.tolerations, comparisonOperators);
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
