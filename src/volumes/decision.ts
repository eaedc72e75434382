/**
 * The pure decisions of the force-detach controller: which pods on a node still hold a
 * VolumeAttachment's PersistentVolume, since when none has, and whether to force-detach it now
 * (out of service), later (timeout) or never. No I/O, no clock reads.
 *
 * Mirrors the detach half of upstream `pkg/controller/volume/attachdetach/reconciler/reconciler.go`
 * (`reconcile`: `maxWaitForUnmountDuration`, `forceDetach`, `hasOutOfServiceTaint`), with the
 * desired state of the world (`desired_state_of_world_populator.go`, the pod handlers of
 * `attach_detach_controller.go`) reduced to "a pod on the node that uses the volume and is not
 * terminated" (`DetermineVolumeAction` → `IsPodTerminated`).
 */
import { UNKNOWN_INLINE_DRIVER, type Node, type Pod } from '../kube/objects.js';
import { isNodeOutOfService, isNodeReady, isPodTerminated } from '../kube/predicates.js';

/**
 * Why a VolumeAttachment is force-detached: its node is out of service, or the volume was left
 * mounted past the timeout. Also the `reason` label of the forced-detach counter (src/metrics/registry.ts
 * keeps the label values; src/volumes/controller.ts checks at compile time that the two agree).
 * Upstream: `metrics.ForceDetachReasonTimeout` / `ForceDetachReasonOutOfService`.
 */
export type ForcedDetachReason = 'timeout' | 'out-of-service';

/** Event source component, as upstream's attach/detach controller records it (`attach_detach_controller.go`). */
export const ATTACH_DETACH_EVENT_SOURCE = 'attachdetach-controller';

/** Upstream's `ReconcilerMaxWaitForUnmountDuration` (`--force-detach-timeout` default), milliseconds. */
export const DEFAULT_FORCE_DETACH_TIMEOUT_MS = 6 * 60_000;

/** Period of the safety resync over every VolumeAttachment, milliseconds (upstream `--attach-detach-reconcile-sync-period` default). */
export const FORCE_DETACH_RESYNC_PERIOD_MS = 60_000;

/**
 * Event reasons this controller records on the node (our own; upstream's reconciler only logs):
 * `ForceDetachedOutOfService` and `ForceDetachedTimeout`, both Warning.
 */
export const FORCE_DETACH_EVENT_REASONS: Readonly<Record<ForcedDetachReason, string>> = {
  'out-of-service': 'ForceDetachedOutOfService',
  timeout: 'ForceDetachedTimeout',
};

/**
 * Resolves a pod's claim to the name of its PersistentVolume.
 * @param ownerUid for a generic ephemeral volume's claim, the pod's UID: the claim is the pod's only
 *   when the pod controls it (upstream `ephemeral.VolumeIsForPod`).
 * @returns the PV name, or `undefined` when the claim cannot be resolved: missing, unbound, not
 *   controlled by `ownerUid`, or bound to a PV that is missing.
 */
export type ClaimResolver = (namespace: string, claimName: string, ownerUid?: string) => string | undefined;

/** The attachment a pod is judged against: its PersistentVolume and its attacher (the CSI driver). */
export interface AttachedVolume {
  pvName: string;
  attacher: string;
}

/**
 * The pods among `podsOnNode` that keep the attached volume in the attach/detach controller's
 * desired state of the world: bound to `nodeName`, not terminated (`isPodTerminated`: not
 * Succeeded/Failed, and not "deleted with no container still running"), and naming the volume
 * through any source ({@link podUsesVolume}). A pod stuck Terminating on a partitioned node whose
 * containers are still reported running holds the volume: they may still be writing to it.
 * Mirrors `DetermineVolumeAction` + `ProcessPodVolumes` (pod → PVC → PV, `util.CreateVolumeSpec`,
 * ephemeral claims through `ephemeral.VolumeClaimName` / `VolumeIsForPod`).
 * @param nodeName pods bound elsewhere are ignored.
 * @returns the holding pods, in `podsOnNode` order.
 */
export function volumeHolders(podsOnNode: readonly Pod[], nodeName: string, volume: AttachedVolume, resolve: ClaimResolver): Pod[] {
  return podsOnNode.filter((pod) => pod.nodeName === nodeName && !isPodTerminated(pod) && podUsesVolume(pod, volume, resolve));
}

/**
 * Whether a pod names the attached volume, whatever the source: a claim bound to its PV; a generic
 * ephemeral volume's claim (`<pod>-<volume>`) bound to it; an inline CSI volume of the same driver;
 * or an inline source that might be attachable but cannot be mapped to a driver. Fail closed:
 * anything that cannot be resolved (see {@link ClaimResolver}) counts as naming the volume, since
 * upstream's reconciler would keep a volume its pod names and treating a doubt as a hold can only
 * delay a detach, never cause one. Differences from upstream, each acting less: upstream drops a
 * volume it cannot resolve from the desired state (so it may detach it), and never attaches inline
 * CSI volumes (their driver's attachments are held here all the same).
 * @returns true when the pod holds the volume.
 */
export function podUsesVolume(pod: Pod, volume: AttachedVolume, resolve: ClaimResolver): boolean {
  const names = (pv: string | undefined): boolean => pv === undefined || pv === volume.pvName;
  return (
    pod.pvcNames.some((claim) => names(resolve(pod.namespace, claim))) ||
    (pod.ephemeralClaimNames ?? []).some((claim) => names(resolve(pod.namespace, claim, pod.uid))) ||
    (pod.inlineVolumeDrivers ?? []).some((driver) => driver === UNKNOWN_INLINE_DRIVER || driver === volume.attacher)
  );
}

/**
 * Since when (epoch ms) no pod has held the volume: `undefined` while one does; otherwise the
 * previous value, or `nowMs` when there is none (the moment this controller saw the last holder
 * terminate or vanish). The controller calls it only on a live list of the node's pods, so a pod its
 * cache has not caught up with, or could not convert, never lets the clock start. Restarting the
 * controller restarts the clock (later, never earlier).
 * Mirrors the actual state of the world's `SetDetachRequestTime` (set on the first reconcile that
 * finds the volume attached but no longer desired) and `ResetDetachRequestTime` (desired again).
 * @param prev the previous value (undefined: none recorded).
 * @param holders from {@link volumeHolders}.
 */
export function nextReleasedAt(prev: number | undefined, holders: readonly Pod[], nowMs: number): number | undefined {
  if (holders.length > 0) return undefined;
  return prev ?? nowMs;
}

/** Inputs of {@link decideForceDetach}. Times are epoch ms, durations ms. */
export interface ForceDetachInput {
  /** The VolumeAttachment's node; `undefined` when it does not exist (any more). */
  node: Pick<Node, 'conditions' | 'taints'> | undefined;
  /** From {@link volumeHolders}. */
  holders: readonly Pod[];
  /** From {@link nextReleasedAt}. */
  releasedAt: number | undefined;
  nowMs: number;
  /** `--force-detach-timeout`. */
  timeoutMs: number;
  /** `--disable-force-detach-on-timeout`. */
  disableTimeout: boolean;
}

/** What to do with one VolumeAttachment now. */
export type ForceDetachDecision =
  | { action: 'detach'; reason: ForcedDetachReason }
  /** Leave it; `recheckAtMs` (epoch ms) is when the answer may change by time alone. */
  | { action: 'keep'; why: string; recheckAtMs?: number };

/**
 * The force-detach decision for one VolumeAttachment:
 * 1. a pod on the node still holds the volume ({@link volumeHolders}) → keep, whatever the node;
 * 2. the node is Ready → keep (a normal detach is kube-controller-manager's job);
 * 3. the node is out of service (not Ready + `node.kubernetes.io/out-of-service`) → detach now,
 *    reason `out-of-service`;
 * 4. the node is not Ready (or gone): once more than `timeoutMs` has passed since `releasedAt` →
 *    detach, reason `timeout`, unless `disableTimeout`.
 * Mirrors `reconcile`: only volumes no longer in the desired state of the world are detached at
 * all; then `forceDetach = !isHealthy && maxWaitExpired && !disableForceDetachOnTimeout`, or
 * `hasOutOfServiceTaint`. So the out-of-service path, like upstream's, needs every user pod
 * terminated or gone too (PodGC force-deletes the terminating ones on such a node).
 * Deliberate differences from upstream, both acting less: "out of service" also requires the node
 * to be not Ready (the safety rule; upstream's reconciler looks at the taint alone), and a Ready node is
 * never force-detached (upstream's timeout path also skips the safety check on a healthy node whose
 * volume is not in `volumesInUse`; that is a normal detach, left to kube-controller-manager).
 * @returns see {@link ForceDetachDecision}.
 */
export function decideForceDetach(i: ForceDetachInput): ForceDetachDecision {
  if (i.holders.length > 0) return { action: 'keep', why: `held by pod ${describePods(i.holders)} (not terminated: running, or terminating with containers still running)` };
  if (i.node && isNodeReady(i.node)) return { action: 'keep', why: 'node is Ready' };
  if (isNodeOutOfService(i.node)) return { action: 'detach', reason: 'out-of-service' };
  if (i.disableTimeout) return { action: 'keep', why: 'node is not Ready; force detach on timeout is disabled' };
  const since = i.releasedAt ?? i.nowMs;
  // Upstream: `elapsedTime > maxWaitForUnmountDuration`, strictly; so the earliest moment is 1 ms past the timeout.
  const due = since + i.timeoutMs + 1;
  if (i.nowMs >= due) return { action: 'detach', reason: 'timeout' };
  return { action: 'keep', why: 'node is not Ready; waiting for the force-detach timeout', recheckAtMs: due };
}

function describePods(pods: readonly Pod[]): string {
  const names = pods.slice(0, 3).map((p) => `${p.namespace}/${p.name}`);
  return pods.length > 3 ? `${names.join(', ')} and ${pods.length - 3} more` : names.join(', ');
}
