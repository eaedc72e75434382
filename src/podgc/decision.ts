/**
 * The pure decisions of the pod garbage collector's out-of-service and orphan passes: no I/O, no
 * clock reads. The node and pod predicates it shares with the force-detach controller live in
 * src/kube/predicates.ts.
 *
 * Mirrors upstream `pkg/controller/podgc/gc_controller.go` (`gcTerminating`, `gcOrphaned`,
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
 * Condition message for pods force-deleted from an out-of-service node.
 * Deliberate difference from upstream: `gcTerminating` calls `markFailedAndDeletePod` without a
 * condition; the safety rule asks for `DisruptionTarget`/`DeletionByPodGC` here too, so the pod's last
 * status says why it vanished. The message is ours.
 */
export const OUT_OF_SERVICE_MESSAGE = 'PodGC: node is out of service';

/** Event source component of this controller's Events (kube-controller-manager's controller name). */
export const POD_GC_CONTROLLER_NAME = 'pod-garbage-collector-controller';

/** Upstream's quarantine before orphans are deleted (`quarantineTime`), milliseconds. */
export const ORPHAN_QUARANTINE_MS = 40_000;

/** Upstream's gc period (`gcCheckPeriod`), milliseconds; here only the safety sweep. */
export const GC_CHECK_PERIOD_MS = 20_000;

/** The `reason` labels this controller uses on the `pod_gc_collector_*` counters. */
export type PodGCForceDeleteReason = 'out-of-service' | 'orphaned';

/**
 * Event reasons this controller records (our own; upstream PodGC records no events):
 * - on the pod: `ForceDeletedOutOfService`, `ForceDeletedOrphan`;
 * - on the node: `ForceDeletedPodOutOfService`, `ForceDeletedOrphanPod`.
 */
export const POD_GC_EVENT_REASONS = {
  podOutOfService: 'ForceDeletedOutOfService',
  podOrphan: 'ForceDeletedOrphan',
  nodeOutOfService: 'ForceDeletedPodOutOfService',
  nodeOrphan: 'ForceDeletedOrphanPod',
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
 * The `DisruptionTarget` condition PodGC sets before a force delete:
 * `{type: DisruptionTarget, status: True, reason: DeletionByPodGC, message, lastTransitionTime}`.
 * Keeps the `lastTransitionTime` of an existing `DisruptionTarget=True` condition, as upstream's
 * `UpdatePodCondition` does when the status does not change.
 * Mirrors the condition literal in `gcOrphaned`.
 * @param message {@link ORPHAN_MESSAGE} or {@link OUT_OF_SERVICE_MESSAGE}
 * @param existing the pod's current conditions
 * @param nowMs transition time, epoch milliseconds
 */
export function podGCCondition(message: string, existing: readonly PodCondition[], nowMs: number): PodCondition {
  const prev = getCondition(existing, DISRUPTION_TARGET);
  return {
    type: DISRUPTION_TARGET,
    status: 'True',
    reason: DELETION_BY_POD_GC_REASON,
    message,
    lastTransitionTime: prev?.status === 'True' && prev.lastTransitionTime !== undefined ? prev.lastTransitionTime : nowMs,
  };
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
