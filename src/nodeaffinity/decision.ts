/**
 * The pure decision of the node affinity enforcer: given a pod, its node, what was seen before and
 * the time, what to do. No I/O; the shell (controller.ts) carries it out.
 *
 * There is no upstream controller to mirror (`RequiredDuringSchedulingRequiredDuringExecution` was
 * designed, never built); the matching is upstream's (matcher.ts), and the nearest existing tool is
 * the descheduler's `RemovePodsViolatingNodeAffinity` (docs/node-affinity.md compares them).
 *
 * Rules (each one can only delay or prevent an eviction):
 * - pods without a rule, DaemonSet pods, mirror pods, terminating, terminal and unscheduled pods
 *   are ignored;
 * - a malformed rule is reported and never acts;
 * - a rule must have failed to match **continuously** for the grace period (a label change in
 *   two steps, or a flapping label, restarts the count);
 * - the node must be in the node cache (else: deleted, or outside `--node-selector`) and Ready (on
 *   an unhealthy node taint eviction is the right tool);
 * - a selector that cannot be evaluated (lazy parse errors and no match) holds.
 */
import type { Node } from '../kube/objects.js';
import type { AffinityPod } from './rule.js';

/** What the controller remembers of one pod's violation. Times are epoch **milliseconds**. */
export interface Violation {
  uid: string;
  node: string;
  /** When the controller first saw the rule not match (continuously since). */
  sinceMs: number;
}

/** The outcome for one pod. */
export type AffinityDecision =
  /** Not the enforcer's business (no rule, DaemonSet, mirror, terminating, …); forget any violation. */
  | { action: 'ignore'; reason: string }
  /** The rule cannot be read: report, never evict; forget any violation. */
  | { action: 'malformed'; reason: string }
  /** The rule matches the node: forget any violation. */
  | { action: 'satisfied' }
  /** Violating, but something forbids acting now (node not Ready, rule not evaluable). */
  | { action: 'hold'; violation: Violation; reason: string }
  /** Violating, inside the grace period: re-decide at `evictAtMs`. */
  | { action: 'wait'; violation: Violation; evictAtMs: number }
  /** Violating for the whole grace period, node Ready: evict. */
  | { action: 'evict'; violation: Violation; evictAtMs: number };

/** True when the node's `Ready` condition is `True`. */
export function isNodeReady(node: Node): boolean {
  return node.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * Decides for one pod.
 * @param pod the pod from the cache.
 * @param node the pod's node from the cache, or undefined when it is not there.
 * @param previous the violation remembered for this pod key, if any (ignored when its uid or node
 *   differs: a replaced or rebound pod starts afresh).
 * @param nowMs current time, epoch **milliseconds**.
 * @param graceMs `--affinity-violation-grace`, **milliseconds**.
 * @returns an {@link AffinityDecision}. Never throws.
 */
export function decideAffinity(pod: AffinityPod, node: Node | undefined, previous: Violation | undefined, nowMs: number, graceMs: number): AffinityDecision {
  if (pod.rule.kind === 'none') return { action: 'ignore', reason: 'no during-execution rule' };
  if (pod.mirror) return { action: 'ignore', reason: 'mirror (static) pod' };
  if (pod.daemonSet) return { action: 'ignore', reason: 'DaemonSet pod' };
  if (pod.deletionTimestamp !== undefined) return { action: 'ignore', reason: 'terminating' };
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return { action: 'ignore', reason: `phase ${pod.phase}` };
  if (!pod.nodeName) return { action: 'ignore', reason: 'not scheduled' };
  // A node outside the cache is deleted (pod GC's business) or outside --node-selector (another
  // replica's): neither is ours to judge.
  if (!node) return { action: 'ignore', reason: `node ${pod.nodeName} is not in the cache` };
  if (pod.rule.kind === 'malformed') return { action: 'malformed', reason: pod.rule.reason };
  const sinceOf = (): Violation => (previous && previous.uid === pod.uid && previous.node === pod.nodeName ? previous : { uid: pod.uid, node: pod.nodeName, sinceMs: nowMs });
  const target = { name: node.name, labels: node.labels };
  let unevaluable = false;
  for (const { selector } of pod.rule.selectors) {
    const r = selector.match(target);
    if (r.match) continue;
    if (r.errors.length > 0) unevaluable = true;
    else return violating(sinceOf(), node, nowMs, graceMs);
  }
  if (unevaluable) return { action: 'hold', violation: sinceOf(), reason: 'the rule has terms that cannot be evaluated' };
  return { action: 'satisfied' };
}

function violating(violation: Violation, node: Node, nowMs: number, graceMs: number): AffinityDecision {
  const evictAtMs = violation.sinceMs + graceMs;
  if (!isNodeReady(node)) return { action: 'hold', violation, reason: `node ${node.name} is not Ready (taint eviction handles unhealthy nodes)` };
  return nowMs >= evictAtMs ? { action: 'evict', violation, evictAtMs } : { action: 'wait', violation, evictAtMs };
}

/**
 * The caps of the descheduler's `DefaultEvictor` (`maxNoOfPodsToEvictPerNode`,
 * `maxNoOfPodsToEvictTotal`), counted over a sliding window instead of per descheduling cycle.
 * @param recent evictions made, each `{ node, atMs }` (epoch **milliseconds**).
 * @param node the node of the candidate pod.
 * @param nowMs current time, epoch ms; `windowMs` the window length in ms.
 * @param maxPerNode, maxTotal 0 means no cap.
 * @returns undefined when the eviction may go, else the reason and the time (epoch ms) a slot frees.
 */
export function evictionCapReached(
  recent: readonly { node: string; atMs: number }[],
  node: string,
  nowMs: number,
  windowMs: number,
  maxPerNode: number,
  maxTotal: number,
): { reason: string; retryAtMs: number } | undefined {
  const live = recent.filter((r) => r.atMs > nowMs - windowMs);
  const onNode = live.filter((r) => r.node === node);
  const windowS = Math.round(windowMs / 1000);
  if (maxTotal > 0 && live.length >= maxTotal) {
    return { reason: `${live.length} evictions in the last ${windowS}s reach --affinity-max-evictions-total=${maxTotal}`, retryAtMs: (live[live.length - maxTotal]?.atMs ?? nowMs) + windowMs };
  }
  if (maxPerNode > 0 && onNode.length >= maxPerNode) {
    return { reason: `${onNode.length} evictions from node ${node} in the last ${windowS}s reach --affinity-max-evictions-per-node=${maxPerNode}`, retryAtMs: (onNode[onNode.length - maxPerNode]?.atMs ?? nowMs) + windowMs };
  }
  return undefined;
}
