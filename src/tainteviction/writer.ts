/**
 * The taint eviction controller's writes: the `DisruptionTarget` pod condition and the graceful,
 * UID-guarded pod deletion. Every write goes through the shared {@link WriteScheduler} (the
 * `--kube-api-qps` throttle plus the leader fencing gate).
 *
 * Mirrors upstream `pkg/controller/tainteviction/taint_eviction.go` `addConditionAndDeletePod`
 * (with `pkg/util/pod/pod.go` `PatchPodStatus` and `pkg/api/v1/pod/util.go` `UpdatePodCondition`).
 *
 * Guarding, as verified against the project's real kube-apiserver 1.20.2 (2026-11-21):
 * - the condition is a strategic-merge status patch carrying the pod's `metadata.uid`: a pod
 *   recreated under the same name answers **422 Invalid** ("metadata.uid: field is immutable"),
 *   which src/kube/podstatus.ts turns into "gone". No resourceVersion guard, because the node
 *   lifecycle controller writes the same pods' Ready condition at the same moment and the two would
 *   push each other into 409s; conditions merge by type, so neither overwrites the other's;
 * - a DELETE with `preconditions.uid` of another pod gives **409 Conflict**, and a missing pod
 *   404, so both mean "the pod we decided to evict is gone".
 */
import type { KubeClients } from '../kube/client.js';
import { isConflict, isNotFound } from '../kube/client.js';
import { getCondition, type Pod, type PodCondition } from '../kube/objects.js';
import type { WriteRecheck, WriteScheduler } from '../kube/throttle.js';
import { patchPodConditionsByUid } from '../kube/podstatus.js';
import { notingOnSend, type OwnWriteNotes } from '../secondactor/ownwrites.js';
import type { Clock } from '../util/clock.js';
import { DISRUPTION_TARGET_CONDITION_TYPE, taintEvictionDisruptionCondition } from './events.js';


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
 * Taint-eviction writes over the real API.
 * Mirrors upstream `taint_eviction.go` `addConditionAndDeletePod`, split in its two writes so the
 * controller can retry them as one unit with its own backoff.
 */
export class TaintEvictionWriter {
  readonly #core: KubeClients['core'];
  readonly #writes: WriteScheduler;
  readonly #clock: Clock;
  readonly #own: OwnWriteNotes | undefined;

  /**
   * @param clients the API clients (only `core` is used).
   * @param writes the throttled, fenced write path (src/kube/writer.ts `ApiWriteThrottle`).
   * @param clock supplies the condition's `lastTransitionTime` (epoch ms) and the conflict backoff.
   * @param own where each condition write and DELETE is noted right before it is sent (the
   *   second-actor check's ledger, src/secondactor/ownwrites.ts); none in tests.
   */
  constructor(clients: Pick<KubeClients, 'core'>, writes: WriteScheduler, clock: Clock, own?: OwnWriteNotes) {
    this.#core = clients.core;
    this.#writes = writes;
    this.#clock = clock;
    this.#own = own;
  }

  /**
   * Adds `DisruptionTarget=True` (reason `DeletionByTaintManager`, message "Taint manager: deleting
   * due to NoExecute taint", lastTransitionTime now) to the pod's status with a strategic-merge
   * patch of `pods/status` (conditions merge by `type`) that carries the pod's UID, so a pod
   * recreated under the same name answers 422 and counts as gone (src/kube/podstatus.ts).
   * The condition's `observedGeneration` is `cached.generation` when the server sets pod generations
   * (≥ 1.33), else left out.
   * Skips the patch when the condition is already True (upstream's `UpdatePodCondition` returns
   * "unchanged" for the same status, reason and message; we also leave a True condition written by
   * someone else, e.g. the kubelet's shutdown manager, as it is).
   * @param uid the UID the eviction was decided for.
   * @param cached the informer's copy of the pod, if any (ignored unless its UID is `uid`).
   * @param recheck the eviction decided again right before the patch is sent (src/kube/throttle.ts).
   * @returns `'written'`, `'unchanged'`, or `'gone'` when no pod with that name and UID exists.
   * @throws a `FencedError`, a `NotCalledForError` (not sent: `recheck` said no), or any other API
   *   error (the controller retries with backoff).
   * Mirrors the `UpdatePodCondition` + `PatchPodStatus` step of `addConditionAndDeletePod`.
   */
  async addDisruptionCondition(namespace: string, name: string, uid: string, cached?: Pod, recheck?: WriteRecheck): Promise<ConditionWriteResult> {
    const ours = cached?.uid === uid ? cached : undefined;
    if (ours && hasDisruptionTarget(ours)) return 'unchanged';
    const c = taintEvictionDisruptionCondition(this.#clock.now());
    const condition: PodCondition = { type: c.type, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: this.#clock.now() };
    // Upstream: CalculatePodConditionObservedGeneration, i.e. the pod's generation (the
    // PodObservedGenerationTracking gate is GA and locked on since 1.35). Ours is the generation of
    // the copy the eviction was decided on; upstream GETs the pod first and takes the live one.
    if (ours?.generation !== undefined) condition.observedGeneration = ours.generation;
    const own = this.#own;
    const writes = own ? notingOnSend(this.#writes, () => own.notePodCondition(uid)) : this.#writes;
    return patchPodConditionsByUid({ core: this.#core }, writes, { namespace, name, uid }, [condition], {}, 'pod', recheck);
  }

  /**
   * Deletes the pod gracefully (no `gracePeriodSeconds` override: the pod's own
   * `terminationGracePeriodSeconds` applies) with `preconditions.uid`, so a pod recreated under the
   * same name is never hit.
   * @param uid the UID the eviction was decided for.
   * @param recheck the eviction decided again right before the DELETE is sent (src/kube/throttle.ts).
   * @returns `'deleted'` when the API server accepted the delete (the pod may stay Terminating until
   *   its kubelet confirms), `'gone'` on 404 or on 409 (UID precondition failed: another pod now has
   *   the name).
   * @throws a `FencedError`, a `NotCalledForError` (not sent), or any other API error.
   * Mirrors the `DeletePod` step of `addConditionAndDeletePod` (newer upstream adds the UID precondition too).
   */
  async deletePod(namespace: string, name: string, uid: string, recheck?: WriteRecheck): Promise<DeleteResult> {
    try {
      await this.#writes.schedule(
        () => {
          this.#own?.notePodDelete(uid);
          return this.#core.deleteNamespacedPod({ namespace, name, body: { preconditions: { uid } } });
        },
        'pod',
        recheck,
      );
      return 'deleted';
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return 'gone';
      throw err;
    }
  }
}
