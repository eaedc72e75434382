/**
 * The events and the pod condition the taint eviction controller writes, with upstream's exact
 * reasons and messages.
 *
 * Mirrors `pkg/controller/tainteviction/taint_eviction.go` (`emitPodDeletionEvent`,
 * `emitCancelPodDeletionEvent`, `addConditionAndDeletePod`).
 */
import type { PodCondition } from '../kube/objects.js';

/** The controller name, used as the event source component (upstream `names.TaintEvictionController`). */
export const TAINT_EVICTION_CONTROLLER_NAME = 'taint-eviction-controller';

/** Event reason of both taint-eviction events. */
export const TAINT_MANAGER_EVICTION_REASON = 'TaintManagerEviction';

/** Pod condition type set before the deletion (upstream `v1.DisruptionTarget`). */
export const DISRUPTION_TARGET_CONDITION_TYPE = 'DisruptionTarget';

/** Reason of the DisruptionTarget condition set by this controller. */
export const DELETION_BY_TAINT_MANAGER_REASON = 'DeletionByTaintManager';

/** Message of the DisruptionTarget condition set by this controller. */
export const DELETION_BY_TAINT_MANAGER_MESSAGE = 'Taint manager: deleting due to NoExecute taint';

/**
 * A core/v1 Event to record against a pod: type, reason, message and the involved-object reference
 * (kind Pod, apiVersion v1, namespace, name — upstream sets no UID). The event itself lives in the
 * pod's namespace.
 */
export interface PodEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  involvedObject: { kind: 'Pod'; apiVersion: 'v1'; namespace: string; name: string };
}

function podEvent(namespace: string, name: string, message: string): PodEvent {
  return {
    type: 'Normal',
    reason: TAINT_MANAGER_EVICTION_REASON,
    message,
    involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace, name },
  };
}

/**
 * The event emitted once when a deletion starts: Normal / `TaintManagerEviction` /
 * `Marking for deletion Pod <ns>/<name>`. Never throws.
 * Mirrors `taint_eviction.go` `(*Controller).emitPodDeletionEvent`.
 */
export function podDeletionEvent(namespace: string, name: string): PodEvent {
  return podEvent(namespace, name, `Marking for deletion Pod ${namespace}/${name}`);
}

/**
 * The event emitted when a timed deletion is cancelled: Normal / `TaintManagerEviction` /
 * `Cancelling deletion of Pod <ns>/<name>`. Never throws.
 * Mirrors `taint_eviction.go` `(*Controller).emitCancelPodDeletionEvent`.
 */
export function cancelPodDeletionEvent(namespace: string, name: string): PodEvent {
  return podEvent(namespace, name, `Cancelling deletion of Pod ${namespace}/${name}`);
}

/** Reason of the Warning emitted when a pod's deletion keeps failing (ours; upstream has none). */
export const FAILED_TAINT_MANAGER_EVICTION_REASON = 'FailedTaintManagerEviction';

/**
 * The Warning emitted once per deletion when it has failed `failures` times in a row:
 * Warning / `FailedTaintManagerEviction` / `Deleting Pod <ns>/<name> (NoExecute taint eviction)
 * has failed <failures> times, last: <error>; retrying with backoff until the pod is gone`.
 * No upstream counterpart: upstream gives up silently after 5 tries (kubernetes/kubernetes#140639).
 * Never throws.
 */
export function podDeletionFailingEvent(namespace: string, name: string, failures: number, lastError: string): PodEvent {
  return {
    type: 'Warning',
    reason: FAILED_TAINT_MANAGER_EVICTION_REASON,
    message: `Deleting Pod ${namespace}/${name} (NoExecute taint eviction) has failed ${failures} times, last: ${lastError}; retrying with backoff until the pod is gone`,
    involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace, name },
  };
}

/**
 * The condition added to the pod's status before it is deleted:
 * `{type: DisruptionTarget, status: True, reason: DeletionByTaintManager, message: "Taint manager:
 * deleting due to NoExecute taint", lastTransitionTime: nowMs}`.
 * @param nowMs the transition time, epoch milliseconds. Upstream's `UpdatePodCondition` keeps an
 *   existing condition's `lastTransitionTime` when the status does not change; callers merging into
 *   existing conditions must do the same.
 * Mirrors the condition literal in `taint_eviction.go` `addConditionAndDeletePod`.
 */
export function taintEvictionDisruptionCondition(nowMs: number): PodCondition {
  return {
    type: DISRUPTION_TARGET_CONDITION_TYPE,
    status: 'True',
    reason: DELETION_BY_TAINT_MANAGER_REASON,
    message: DELETION_BY_TAINT_MANAGER_MESSAGE,
    lastTransitionTime: nowMs,
  };
}
