/**
 * The pure decisions of the pod garbage collector's four passes (terminated, out-of-service,
 * orphaned, unscheduled terminating): no I/O, no clock reads. The node and pod predicates it shares with the force-detach controller live in
 * src/kube/predicates.ts.
 *
 * Mirrors upstream `pkg/controller/podgc/gc_controller.go` (`gcTerminated`, `gcTerminating`,
 * `gcOrphaned`, `gcUnscheduledTerminating`, `byEvictionAndCreationTimestamp`,
 * `markFailedAndDeletePodWithCondition`).
 */
import { getCondition, type Node, type Pod, type PodCondition } from '../kube/objects.js';
import { isNodeOutOfService, isPodTerminal } from '../kube/predicates.js';

/** Pod condition type added before a force deletion (upstream `v1.DisruptionTarget`). */
export const DISRUPTION_TARGET = 'DisruptionTarget';

/**
 * Reason of the DisruptionTarget condition PodGC adds. Upstream has no constant for it (k8s.io/api
 * v0.37.2 `core/v1/types.go` defines only `PodReasonTerminationByKubelet` and
 * `PodReasonPreemptionByScheduler` among the DisruptionTarget reasons): it is the literal
 * `"DeletionByPodGC"` in `gcOrphaned`.
 */
export const DELETION_BY_POD_GC_REASON = 'DeletionByPodGC';

/** Condition message for orphans, upstream's exact text (`gcOrphaned`). */
export const ORPHAN_MESSAGE = 'PodGC: node no longer exists';

/**
 * Why each pass force-deletes a pod, in words: for logs, the dry-run decision log and the what-if
 * timeline. Never written to the pod. Only the orphan pass writes a condition (upstream's
 * `gcOrphaned`, {@link orphanCondition}); the out-of-service, unscheduled and terminated passes mark
 * the pod `Failed` with no condition, as upstream's `markFailedAndDeletePod` does (issue 53: a
 * `DisruptionTarget` there would make a Job's `podFailurePolicy` act where upstream's would not).
 */
export const FORCE_DELETE_WHY: Readonly<Record<PodGCForceDeleteReason, string>> = {
  terminated: 'PodGC: terminated pods exceed --terminated-pod-gc-threshold',
  'out-of-service': 'PodGC: node is out of service',
  orphaned: ORPHAN_MESSAGE,
  unscheduled: 'PodGC: pod is terminating and was never scheduled',
};

/** Event source component of this controller's Events (kube-controller-manager's controller name). */
export const POD_GC_CONTROLLER_NAME = 'pod-garbage-collector-controller';

/** Upstream's quarantine before orphans are deleted (`quarantineTime`), milliseconds. */
export const ORPHAN_QUARANTINE_MS = 40_000;

/** Upstream's gc period (`gcCheckPeriod`), milliseconds; here only the safety sweep. */
export const GC_CHECK_PERIOD_MS = 20_000;

/** Upstream's default `--terminated-pod-gc-threshold` (`podgc/config/v1alpha1/defaults.go`), pods. */
export const DEFAULT_TERMINATED_POD_GC_THRESHOLD = 12_500;

/**
 * The `reason` labels this controller uses on the `pod_gc_collector_*` counters: upstream's
 * `PodGCReasonTerminated`, `…TerminatingOutOfService`, `…Orphaned`, `…TerminatingUnscheduled`.
 */
export type PodGCForceDeleteReason = 'terminated' | 'out-of-service' | 'orphaned' | 'unscheduled';

/** The kubelet's eviction reason (upstream `eviction.Reason`, `pkg/kubelet/eviction/types.go`). */
export const EVICTED_REASON = 'Evicted';

/**
 * Event reasons this controller records (our own; upstream PodGC records no events):
 * - on the pod: `ForceDeletedOutOfService`, `ForceDeletedOrphan`, `ForceDeletedUnscheduled`;
 * - on the node: `ForceDeletedPodOutOfService`, `ForceDeletedOrphanPod`.
 */
export const POD_GC_EVENT_REASONS = {
  podOutOfService: 'ForceDeletedOutOfService',
  podOrphan: 'ForceDeletedOrphan',
  nodeOutOfService: 'ForceDeletedPodOutOfService',
  nodeOrphan: 'ForceDeletedOrphanPod',
  podUnscheduled: 'ForceDeletedUnscheduled',
} as const;

/**
 * True when a force delete can do nothing more for this pod: it was already deleted with grace 0,
 * is terminal, and only waits for finalizers. Re-deleting it would only bump the counters.
 * Deliberate difference from upstream: upstream's gc loop re-deletes such pods every 20 s.
 */
export function isOnlyWaitingForFinalizers(pod: Pick<Pod, 'deletionTimestamp' | 'deletionGracePeriodSeconds' | 'phase' | 'finalizers'>): boolean {
  return pod.deletionTimestamp !== undefined && pod.deletionGracePeriodSeconds === 0 && isPodTerminal(pod) && pod.finalizers.length > 0;
}

/**
 * Whether `pod` must be force-deleted because its node is out of service: the pod is terminating
 * (deletionTimestamp set), bound to `node`, and `node` is out of service.
 * Mirrors the candidate filter of `gcTerminating`.
 * @param node the pod's node, or `undefined` when it is unknown (then: false; the orphan pass owns it).
 */
export function shouldForceDeleteOutOfService(
  pod: Pick<Pod, 'nodeName' | 'deletionTimestamp' | 'deletionGracePeriodSeconds' | 'phase' | 'finalizers'>,
  node: Pick<Node, 'name' | 'conditions' | 'taints'> | undefined,
): boolean {
  if (pod.deletionTimestamp === undefined || node === undefined || pod.nodeName !== node.name) return false;
  return isNodeOutOfService(node) && !isOnlyWaitingForFinalizers(pod);
}

/**
 * The `DisruptionTarget` condition the orphan pass adds to its `Failed` patch:
 * `{type: DisruptionTarget, status: True, reason: DeletionByPodGC, message: "PodGC: node no longer
 * exists", lastTransitionTime}`. No other pass writes a condition (see {@link FORCE_DELETE_WHY}).
 * `lastTransitionTime` is `nowMs`, unless the pod already has `DisruptionTarget=True`: then it is
 * that condition's own (left out when it has none), as upstream's `UpdatePodCondition` keeps the old
 * transition time when the status does not change.
 * Mirrors the condition literal in `gcOrphaned` and `UpdatePodCondition` (`pkg/api/v1/pod/util.go`);
 * the writer adds `observedGeneration` (`CalculatePodConditionObservedGeneration`) from the live pod.
 * @param existing the pod's current conditions
 * @param nowMs transition time, epoch milliseconds
 */
export function orphanCondition(existing: readonly PodCondition[], nowMs: number): PodCondition {
  const prev = getCondition(existing, DISRUPTION_TARGET);
  const out: PodCondition = { type: DISRUPTION_TARGET, status: 'True', reason: DELETION_BY_POD_GC_REASON, message: ORPHAN_MESSAGE };
  const transition = prev?.status === 'True' ? prev.lastTransitionTime : nowMs;
  if (transition !== undefined) out.lastTransitionTime = transition;
  return out;
}

/** What the orphan pass should do with one node name now. */
export type OrphanVerdict =
  /** The node is known (cached), or no pod is bound to it: forget it. */
  | { kind: 'forget' }
  /** A scoped controller never saw this node: not ours to judge. */
  | { kind: 'not-ours' }
  /** Still in quarantine: look again after `waitMs` milliseconds. */
  | { kind: 'wait'; waitMs: number }
  /** Quarantine over: confirm with a live GET, then force-delete the pods if it is 404. */
  | { kind: 'confirm' };

/** Inputs of {@link decideOrphanNode}. Times are epoch ms, durations ms. */
export interface OrphanInput {
  /** True when the node is in the node cache. */
  inCache: boolean;
  /** Number of cached pods bound to the node. */
  podCount: number;
  /** True when the controller runs under `--node-selector`. */
  scoped: boolean;
  /** True when the node was once in this controller's node cache. */
  seen: boolean;
  /** When the node was first noticed missing (undefined: now). */
  missingSince: number | undefined;
  nowMs: number;
  quarantineMs: number;
}

/**
 * The orphan decision for one node name. Mirrors `gcOrphaned`'s quarantine (`nodeQueue.AddAfter(
 * nodeName, quarantineTime)`) and `discoverDeletedNodes` (confirmed by a live GET afterwards).
 * Deliberate difference from upstream: under `--node-selector` only nodes this process has seen
 * in its cache are judged, because a node outside the selector is absent from the cache without
 * being deleted, and once deleted it has no labels left to match.
 */
export function decideOrphanNode(i: OrphanInput): OrphanVerdict {
  if (i.inCache || i.podCount === 0) return { kind: 'forget' };
  if (i.scoped && !i.seen) return { kind: 'not-ours' };
  const since = i.missingSince ?? i.nowMs;
  const left = since + i.quarantineMs - i.nowMs;
  return left > 0 ? { kind: 'wait', waitMs: left } : { kind: 'confirm' };
}

// -------------------------------------------------------------------------------------------------
// gcTerminated and gcUnscheduledTerminating.
// -------------------------------------------------------------------------------------------------

/**
 * Whether the terminated-pod pass counts `pod`: its phase is `Succeeded` or `Failed`.
 * Mirrors upstream `isPodTerminated`, with one deliberate difference that can only reduce: upstream
 * counts every phase other than Pending, Running and Unknown, so also an empty phase (which the API
 * server never stores, as it defaults the phase to Pending); ours counts only the two terminal
 * phases, so an odd pod is never taken for a finished one.
 */
export function isPodTerminatedForGC(pod: Pick<Pod, 'phase'>): boolean {
  return isPodTerminal(pod);
}

/** Upstream `eviction.PodIsEvicted`: phase Failed with reason `Evicted`. */
export function isPodEvicted(pod: Pick<Pod, 'phase' | 'statusReason'>): boolean {
  return pod.phase === 'Failed' && pod.statusReason === EVICTED_REASON;
}

/**
 * Upstream's deletion order `byEvictionAndCreationTimestamp`: evicted pods first, then the oldest
 * by creation timestamp (epoch ms), then by name. A comparator for `Array.prototype.sort`.
 * @returns negative when `a` is deleted before `b`.
 */
export function byEvictionAndCreationTimestamp(
  a: Pick<Pod, 'name' | 'phase' | 'statusReason' | 'creationTimestamp'>,
  b: Pick<Pod, 'name' | 'phase' | 'statusReason' | 'creationTimestamp'>,
): number {
  const ae = isPodEvicted(a);
  const be = isPodEvicted(b);
  if (ae !== be) return ae ? -1 : 1;
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp - b.creationTimestamp;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The terminated pods to delete in one pass: with `n` terminated pods and `threshold` > 0, the
 * first `n − threshold` in {@link byEvictionAndCreationTimestamp} order; none when `threshold` ≤ 0
 * (the pass is off) or `n ≤ threshold`.
 * Mirrors upstream `gcTerminated` (and `gc`'s `terminatedPodThreshold > 0` guard).
 * @param pods every cached pod (not mutated).
 * @param threshold `--terminated-pod-gc-threshold`, pods.
 * @returns the pods to delete, in deletion order.
 */
export function selectTerminatedForGC<P extends Pick<Pod, 'name' | 'phase' | 'statusReason' | 'creationTimestamp'>>(pods: Iterable<P>, threshold: number): P[] {
  if (threshold <= 0) return [];
  const terminated: P[] = [];
  for (const p of pods) if (isPodTerminatedForGC(p)) terminated.push(p);
  const deleteCount = terminated.length - threshold;
  if (deleteCount <= 0) return [];
  // Sort only when necessary, as upstream.
  return terminated.sort(byEvictionAndCreationTimestamp).slice(0, deleteCount);
}

/**
 * Whether {@link selectTerminatedForGC}`(pods, threshold)` still picks `pod`: it is terminated and
 * fewer than `n − threshold` of the `n` terminated pods in `pods` come before it in
 * {@link byEvictionAndCreationTimestamp} order. O(n), no sort and no allocation, so a deletion can be
 * decided again right before it is sent without re-sorting 50,000 pods each time.
 *
 * Fail closed on ties: a pod that compares equal to `pod` (same name and creation time in another
 * namespace) counts as coming before it, so `pod` is picked only if every order of the tie picks it.
 * Upstream `gcTerminated` decides once per pass from one sorted list; this is the same count asked
 * again of the current cache (issue 53: a deletion held back by write faults must not go out once
 * the pod is no longer beyond the threshold).
 * @param pod the pod to test, matched in `pods` by namespace and name (its own entry is not counted
 *   as coming before it).
 * @param pods every pod the pass may count (not mutated).
 * @param threshold `--terminated-pod-gc-threshold`, pods; 0 or less: never picked.
 */
export function isSelectedForTerminatedGC<P extends Pick<Pod, 'namespace' | 'name' | 'phase' | 'statusReason' | 'creationTimestamp'>>(
  pod: P,
  pods: Iterable<P>,
  threshold: number,
): boolean {
  if (threshold <= 0 || !isPodTerminatedForGC(pod)) return false;
  let terminated = 0;
  let before = 0;
  for (const p of pods) {
    if (!isPodTerminatedForGC(p)) continue;
    terminated++;
    if (p.name === pod.name && p.namespace === pod.namespace) continue;
    if (byEvictionAndCreationTimestamp(p, pod) <= 0) before++;
  }
  return before < terminated - threshold;
}

/**
 * Whether `pod` is terminating and was never scheduled (deletionTimestamp set, no `nodeName`), so
 * no kubelet will ever finish its deletion. Mirrors the filter of upstream `gcUnscheduledTerminating`,
 * except that a pod that only waits for its finalizers after our own grace-0 delete is left alone
 * (see {@link isOnlyWaitingForFinalizers}).
 */
export function shouldForceDeleteUnscheduled(pod: Pick<Pod, 'nodeName' | 'deletionTimestamp' | 'deletionGracePeriodSeconds' | 'phase' | 'finalizers'>): boolean {
  return pod.deletionTimestamp !== undefined && pod.nodeName === '' && !isOnlyWaitingForFinalizers(pod);
}
