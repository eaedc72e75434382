/**
 * The taint eviction controller's writes: the `DisruptionTarget` pod condition and the graceful,
 * UID-guarded pod deletion. Every write goes through the shared {@link WriteScheduler} (the
 * `--kube-api-qps` throttle plus the leader fencing gate).
 *
 * Mirrors upstream `pkg/controller/tainteviction/taint_eviction.go` `addConditionAndDeletePod`
 * (with `pkg/util/pod/pod.go` `PatchPodStatus` and `pkg/api/v1/pod/util.go` `UpdatePodCondition`).
 *
 * Guarding, as verified against the project's real kube-apiserver 1.20.2
 * (`kubectl patch --subresource=status` and a raw DELETE, 2026-11-21):
 * - a strategic-merge status patch carrying a **wrong `metadata.uid`** is rejected with
 *   **422 Invalid** ("metadata.uid: field is immutable"), not 409. Upstream's `PatchPodStatus`
 *   relies on that UID "precondition", but a 422 cannot be told apart from other validation errors,
 *   so this writer guards the patch with `metadata.resourceVersion` instead, on a copy whose UID was
 *   checked: a stale resourceVersion gives **409 Conflict**, and we re-read the pod with a fresh GET
 *   and decide again. The first try may use the informer's copy (like upstream's node writes, which
 *   read with `resourceVersion=0`): the guard is the same, and it saves a round trip on the path
 *   that acceptance 1 times (evicted within 1 s);
 * - a DELETE with `preconditions.uid` of another pod gives **409 Conflict**, and a missing pod
 *   404, so both mean "the pod we decided to evict is gone".
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeClients } from '../kube/client.js';
import { isConflict, isNotFound } from '../kube/client.js';
import { getCondition, toPod, toRfc3339, type Pod } from '../kube/objects.js';
import { retryOnConflict, type WriteScheduler } from '../kube/writer.js';
import type { Clock } from '../util/clock.js';
import { DISRUPTION_TARGET_CONDITION_TYPE, taintEvictionDisruptionCondition } from './events.js';

const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** Outcome of {@link TaintEvictionWriter.addDisruptionCondition}. */
export type ConditionWriteResult = 'written' | 'unchanged' | 'gone';

/** Outcome of {@link TaintEvictionWriter.deletePod}. */
export type DeleteResult = 'deleted' | 'gone';

/**
 * Whether the pod already carries `DisruptionTarget=True` (whoever set it).
 * @returns true or false. Never throws. Mirrors the "unchanged" check of upstream `UpdatePodCondition`.
 */
export function hasDisruptionTarget(pod: Pick<Pod, 'conditions'>): boolean {
  return getCondition(pod.conditions, DISRUPTION_TARGET_CONDITION_TYPE)?.status === 'True';
}

/**
 * The `pods/status` strategic-merge patch body that sets the taint manager's `DisruptionTarget`
 * condition, guarded by `resourceVersion` (a 409 Conflict if the pod changed since it was read).
 * @param resourceVersion of the copy the decision was made on.
 * @param nowMs the condition's `lastTransitionTime`, epoch milliseconds (whole seconds on the wire).
 * @returns the JSON body. Never throws.
 * Mirrors the condition of `taint_eviction.go` `addConditionAndDeletePod` and the patch of
 * `pkg/util/pod/pod.go` `PatchPodStatus` (with resourceVersion in place of its UID, see the module comment).
 */
export function disruptionTargetStatusPatch(resourceVersion: string, nowMs: number): Record<string, unknown> {
  const c = taintEvictionDisruptionCondition(nowMs);
  return {
    metadata: { resourceVersion },
    status: { conditions: [{ type: c.type, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: toRfc3339(nowMs) }] },
  };
}

/**
 * Taint-eviction writes over the real API.
 * Mirrors upstream `taint_eviction.go` `addConditionAndDeletePod`, split in its two writes so the
 * controller can retry them as one unit with its own backoff.
 */
export class TaintEvictionWriter {
  readonly #core: KubeClients['core'];
  readonly #writes: WriteScheduler;
  readonly #clock: Clock;

  /**
   * @param clients the API clients (only `core` is used).
   * @param writes the throttled, fenced write path (src/kube/writer.ts `ApiWriteThrottle`).
   * @param clock supplies the condition's `lastTransitionTime` (epoch ms) and the conflict backoff.
   */
  constructor(clients: Pick<KubeClients, 'core'>, writes: WriteScheduler, clock: Clock) {
    this.#core = clients.core;
    this.#writes = writes;
    this.#clock = clock;
  }

  /**
   * Adds `DisruptionTarget=True` (reason `DeletionByTaintManager`, message "Taint manager: deleting
   * due to NoExecute taint", lastTransitionTime now) to the pod's status with a strategic-merge
   * patch of `pods/status` (conditions merge by `type`), guarded by the resourceVersion of a copy
   * whose UID was checked: `cached` for the first try when given, otherwise (and after every
   * 409 Conflict) a fresh GET.
   * Skips the patch when the condition is already True (upstream's `UpdatePodCondition` returns
   * "unchanged" for the same status, reason and message; we also leave a True condition written by
   * someone else, e.g. the kubelet's shutdown manager, as it is).
   * @param uid the UID the eviction was decided for.
   * @param cached the informer's copy of the pod, if any (ignored unless its UID is `uid`).
   * @returns `'written'`, `'unchanged'`, or `'gone'` when no pod with that name and UID exists.
   * @throws after 5 conflicts (client-go `retry.DefaultRetry`), a `FencedError`, or any other API error.
   * Mirrors the `UpdatePodCondition` + `PatchPodStatus` step of `addConditionAndDeletePod`.
   */
  async addDisruptionCondition(namespace: string, name: string, uid: string, cached?: Pod): Promise<ConditionWriteResult> {
    let hint = cached?.uid === uid ? cached : undefined;
    const attempt = async (): Promise<ConditionWriteResult> => {
      const pod = hint ?? toPod(await this.#core.readNamespacedPod({ namespace, name }));
      hint = undefined;
      if (!pod || pod.uid !== uid) return 'gone';
      if (hasDisruptionTarget(pod)) return 'unchanged';
      const body = disruptionTargetStatusPatch(pod.resourceVersion, this.#clock.now());
      await this.#writes.schedule(() => this.#core.patchNamespacedPodStatus({ namespace, name, body }, STRATEGIC));
      return 'written';
    };
    try {
      return await retryOnConflict(attempt, { clock: this.#clock });
    } catch (err) {
      if (isNotFound(err)) return 'gone'; // from the GET, or deleted between the GET and the patch
      throw err;
    }
  }

  /**
   * Deletes the pod gracefully (no `gracePeriodSeconds` override: the pod's own
   * `terminationGracePeriodSeconds` applies) with `preconditions.uid`, so a pod recreated under the
   * same name is never hit.
   * @param uid the UID the eviction was decided for.
   * @returns `'deleted'` when the API server accepted the delete (the pod may stay Terminating until
   *   its kubelet confirms), `'gone'` on 404 or on 409 (UID precondition failed: another pod now has
   *   the name).
   * @throws a `FencedError` or any other API error.
   * Mirrors the `DeletePod` step of `addConditionAndDeletePod` (newer upstream adds the UID precondition too).
   */
  async deletePod(namespace: string, name: string, uid: string): Promise<DeleteResult> {
    try {
      await this.#writes.schedule(() => this.#core.deleteNamespacedPod({ namespace, name, body: { preconditions: { uid } } }));
      return 'deleted';
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return 'gone';
      throw err;
    }
  }
}
