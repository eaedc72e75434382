/**
 * The pure decisions of the force-detach controller: which pods on a node use a
 * VolumeAttachment's PersistentVolume, since when the volume has been released by running pods,
 * and whether to force-detach it now (out of service), later (timeout) or never. No I/O, no clock
 * reads.
 *
 * Mirrors the detach half of upstream `pkg/controller/volume/attachdetach/reconciler/reconciler.go`
 * (`reconcile`: `maxWaitForUnmountDuration`, `forceDetach`, `hasOutOfServiceTaint`), with the
 * desired state of the world (`desired_state_of_world_populator.go`) reduced to "a non-terminal,
 * non-terminating pod on the node uses the volume".
 */
import type { ForcedDetachReason } from '../metrics/registry.js';
import type { Node, Pod } from '../kube/objects.js';
import { isNodeOutOfService, isNodeReady, isPodTerminal } from '../podgc/decision.js';

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
 * @returns the PV name, or `undefined` when the claim cannot be resolved (unknown PVC, unbound).
 */
export type ClaimResolver = (namespace: string, claimName: string) => string | undefined;

/** The pods on a node that use (or may use) one volume. */
export interface VolumeUsers {
  /** Pods that are neither terminating nor terminal: they hold the volume. */
  running: Pod[];
  /** Pods that are terminating (deletionTimestamp set) and not yet terminal. */
  terminating: Pod[];
}

/** Precision of `metadata.deletionTimestamp` on the wire (RFC 3339, whole seconds), milliseconds. */
export const DELETION_TIMESTAMP_PRECISION_MS = 1000;

/**
 * The latest time a terminating pod can have begun terminating, epoch ms. The API server sets
 * `deletionTimestamp = request time + grace period`, truncated to whole seconds, so the request
 * lies in `[deletionTimestamp − grace, deletionTimestamp − grace + 1 s)`; taking the upper end means
 * a force detach on timeout never fires before the timeout (at most 1 s after it).
 * @returns `undefined` for a pod that is not terminating.
 */
export function terminatingSinceMs(pod: Pick<Pod, 'deletionTimestamp' | 'deletionGracePeriodSeconds'>): number | undefined {
  if (pod.deletionTimestamp === undefined) return undefined;
  return pod.deletionTimestamp - (pod.deletionGracePeriodSeconds ?? 0) * 1000 + DELETION_TIMESTAMP_PRECISION_MS;
}

/**
 * The pods among `podsOnNode` that use the PersistentVolume `pvName` through a claim. Terminal
 * pods (Succeeded/Failed) use nothing. A claim that cannot be resolved counts as using the volume:
 * when in doubt, a pod holds on to it (it can only delay a detach, never cause one).
 * Mirrors the DSW populator's pod → PVC → PV walk (`util.CreateVolumeSpec`).
 * @param nodeName pods bound elsewhere are ignored.
 */
export function volumeUsers(podsOnNode: readonly Pod[], nodeName: string, pvName: string, resolve: ClaimResolver): VolumeUsers {
  const out: VolumeUsers = { running: [], terminating: [] };
  for (const pod of podsOnNode) {
    if (pod.nodeName !== nodeName || isPodTerminal(pod)) continue;
    const uses = pod.pvcNames.some((claim) => {
      const pv = resolve(pod.namespace, claim);
      return pv === undefined || pv === pvName;
    });
    if (!uses) continue;
    (pod.deletionTimestamp === undefined ? out.running : out.terminating).push(pod);
  }
  return out;
}

/**
 * Since when (epoch ms) no running pod has used the volume: `undefined` while one does. On first
 * sight of a released volume this is the latest time a still-terminating user began terminating,
 * or `nowMs` when no user is left (the time we saw it vanish); afterwards it only moves later.
 * Mirrors `SetDetachRequestTime` / `ResetDetachRequestTime` of the actual state of the world,
 * except that the clock starts when the pod began terminating rather than when it was deleted.
 * @param prev the previous value (undefined: none recorded).
 */
export function nextReleasedAt(prev: number | undefined, users: VolumeUsers, nowMs: number): number | undefined {
  if (users.running.length > 0) return undefined;
  let latest: number | undefined;
  for (const p of users.terminating) {
    const t = terminatingSinceMs(p);
    if (t !== undefined && (latest === undefined || t > latest)) latest = t;
  }
  if (prev === undefined) return latest ?? nowMs;
  return latest !== undefined && latest > prev ? latest : prev;
}

/** Inputs of {@link decideForceDetach}. Times are epoch ms, durations ms. */
export interface ForceDetachInput {
  /** The VolumeAttachment's node; `undefined` when it does not exist (any more). */
  node: Pick<Node, 'conditions' | 'taints'> | undefined;
  users: VolumeUsers;
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
 * 1. a running pod on the node uses the volume → keep (never detach a volume in use);
 * 2. the node is Ready → keep (a normal detach is kube-controller-manager's job);
 * 3. the node is out of service (not Ready + `node.kubernetes.io/out-of-service`) → detach now,
 *    reason `out-of-service`;
 * 4. the node is not Ready (or gone): after `timeoutMs` since `releasedAt` → detach, reason
 *    `timeout`, unless `disableTimeout`.
 * Mirrors `reconcile`'s `forceDetach = !isHealthy && maxWaitExpired && !disableForceDetachOnTimeout`
 * and `hasOutOfServiceTaint`.
 * Deliberate differences from upstream: "out of service" also requires the node to be not Ready
 * (issue 6; upstream's reconciler looks at the taint alone), and a Ready node is never
 * force-detached (upstream's timeout path also skips the safety check on a healthy node whose
 * volume is not in `volumesInUse`; that is a normal detach, left to kube-controller-manager).
 */
export function decideForceDetach(i: ForceDetachInput): ForceDetachDecision {
  if (i.users.running.length > 0) return { action: 'keep', why: `in use by running pod ${describePods(i.users.running)}` };
  if (i.node && isNodeReady(i.node)) return { action: 'keep', why: 'node is Ready' };
  if (isNodeOutOfService(i.node)) return { action: 'detach', reason: 'out-of-service' };
  if (i.disableTimeout) return { action: 'keep', why: 'node is not Ready; force detach on timeout is disabled' };
  const since = i.releasedAt ?? i.nowMs;
  const due = since + i.timeoutMs;
  if (i.nowMs >= due) return { action: 'detach', reason: 'timeout' };
  return { action: 'keep', why: 'node is not Ready; waiting for the force-detach timeout', recheckAtMs: due };
}

function describePods(pods: readonly Pod[]): string {
  const names = pods.slice(0, 3).map((p) => `${p.namespace}/${p.name}`);
  return pods.length > 3 ? `${names.join(', ')} and ${pods.length - 3} more` : names.join(', ');
}
