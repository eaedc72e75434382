/**
 * Pod condition writes guarded by the pod's UID instead of its resourceVersion.
 *
 * Why: several controllers write conditions on the same pods at the same moment (the node
 * lifecycle controller sets Ready=False while the taint manager adds DisruptionTarget, as a node
 * dies). With resourceVersion guards they push each other into 409s and backoff; a strategic-merge
 * patch of `status.conditions` merges by `type`, so neither overwrites the other's condition. The
 * UID in the patch body still makes the write fail on a pod recreated under the same name: the API
 * server answers 422 "metadata.uid: field is immutable" (verified on kube-apiserver 1.20.2).
 * Upstream's taint manager applies its condition with no guard at all (server-side apply).
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { apiStatusCode, apiStatusReason, isNotFound, type KubeClients } from './client.js';
import { toRfc3339, type PodCondition } from './objects.js';
import type { WritePriority, WriteRecheck, WriteScheduler } from './throttle.js';

const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/**
 * Serialises a slim pod condition to its wire form (times as RFC 3339, whole seconds).
 * `observedGeneration` is written only when positive, as Go's `omitempty` on upstream's int64 field
 * does: servers before 1.33 never set pod generations, and a 1.20.2 server accepts the unknown
 * field in a strategic-merge status patch and drops it (checked by hand on both lanes, 2026-11-24;
 * test/integration/tainteviction.test.ts and outofservice.test.ts run these writes on both).
 * @returns a JSON object for `status.conditions[]`. Never throws.
 */
export function podConditionToWire(c: PodCondition): Record<string, unknown> {
  const out: Record<string, unknown> = { type: c.type, status: c.status };
  if (c.reason !== undefined) out['reason'] = c.reason;
  if (c.message !== undefined) out['message'] = c.message;
  if (c.lastTransitionTime !== undefined) out['lastTransitionTime'] = toRfc3339(c.lastTransitionTime);
  if (c.lastProbeTime !== undefined) out['lastProbeTime'] = toRfc3339(c.lastProbeTime);
  if (c.observedGeneration !== undefined && c.observedGeneration > 0) out['observedGeneration'] = c.observedGeneration;
  return out;
}

/** True for the API server's answer to a patch whose `metadata.uid` is not the pod's (422 Invalid). */
export function isUidMismatch(err: unknown): boolean {
  if (apiStatusCode(err) !== 422 || apiStatusReason(err) !== 'Invalid') return false;
  const body = (err as { body?: unknown }).body;
  return typeof body === 'string' && body.includes('metadata.uid');
}

/**
 * Merges `conditions` (by type) into the status of the pod with exactly this UID, through the
 * throttled, fenced write path.
 * @param priority see {@link WritePriority} (default `'pod'`).
 * @param recheck the caller's decision taken again right before the patch is sent (see `WriteRecheck`).
 * @returns `'written'`, or `'gone'` when the pod no longer exists or another pod now has its name.
 * @throws a `FencedError`, a `NotCalledForError` (not sent: `recheck` said no), or any other API
 *   error (callers retry).
 */
export async function patchPodConditionsByUid(
  clients: Pick<KubeClients, 'core'>,
  writes: WriteScheduler,
  pod: { namespace: string; name: string; uid: string },
  conditions: readonly PodCondition[],
  extraStatus: Record<string, unknown> = {},
  priority: WritePriority = 'pod',
  recheck?: WriteRecheck,
): Promise<'written' | 'gone'> {
  try {
    await writes.schedule(
      () =>
        clients.core.patchNamespacedPodStatus(
          {
            namespace: pod.namespace,
            name: pod.name,
            body: { metadata: { uid: pod.uid }, status: { ...extraStatus, conditions: conditions.map(podConditionToWire) } },
          },
          STRATEGIC,
        ),
      priority,
      recheck,
    );
    return 'written';
  } catch (err) {
    if (isNotFound(err) || isUidMismatch(err)) return 'gone';
    throw err;
  }
}
