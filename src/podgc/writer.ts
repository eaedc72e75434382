/**
 * The pod garbage collector's writes: mark a pod Failed (with upstream's `DisruptionTarget`
 * condition on orphans only), then force-delete it (grace period 0, UID precondition). Every write
 * goes through the shared {@link WriteScheduler} (the `--kube-api-qps` throttle and the leader
 * fencing gate).
 *
 * The status patch carries `metadata.resourceVersion`, so the API server answers 409 when the pod
 * changed since it was read; {@link PodGCWriter.forceDeletePod} then re-reads the pod, asks the
 * caller to decide again on the fresh object (`retryOnConflict`), and only then writes.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { isConflict, isNotFound, type KubeClients } from '../kube/client.js';
import type { Node, Pod, PodCondition } from '../kube/objects.js';
import { podConditionToWire } from '../kube/podstatus.js';
import { retryOnConflict } from '../kube/retry.js';
import type { WriteRecheck, WriteScheduler } from '../kube/throttle.js';
import { readNode, readPod } from '../kube/reads.js';
import type { OwnWriteNotes } from '../secondactor/ownwrites.js';
import type { Clock } from '../util/clock.js';
import { isPodTerminal } from '../kube/predicates.js';

const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** Outcome of {@link PodGCWriter.forceDeletePod}. */
export type ForceDeleteResult =
  /** The pod was (marked Failed if needed and) deleted with grace period 0. */
  | 'deleted'
  /** The re-check on live state said no: nothing was written. */
  | 'skipped'
  /** The pod (with that UID) no longer exists. */
  | 'gone';

/** What {@link ForceDeleteRecheck} decided: force-delete the pod, with these fields. */
export interface ForceDeletePlan {
  /**
   * The condition the pass adds to its `Failed` patch, as upstream's: `gcOrphaned`'s
   * `DisruptionTarget`/`DeletionByPodGC` (src/podgc/decision.ts `orphanCondition`). Absent for the
   * out-of-service, unscheduled and terminated passes (upstream `markFailedAndDeletePod`, no
   * condition): the patch then carries the phase and `observedGeneration` only.
   */
  condition?: PodCondition;
  /** Why, in words, for logs, dry-run decisions and the what-if timeline; never written to the pod. */
  why: string;
}

/**
 * Decides, on the pod as just read from the API, whether it must still be force-deleted.
 * @returns the plan (the pod is then force-deleted), or `undefined` to leave it alone.
 */
export type ForceDeleteRecheck = (live: Pod) => Promise<ForceDeletePlan | undefined>;

/**
 * The `status` of PodGC's `Failed` patch for `live`: phase `Failed`, `observedGeneration` (the live
 * pod's `metadata.generation`, left out when the server sets none, before 1.33), and `conditions`
 * only when `condition` is given (the orphan pass), with its own `observedGeneration`.
 * Mirrors `markFailedAndDeletePodWithCondition`: `newStatus.Phase = PodFailed`,
 * `newStatus.ObservedGeneration = CalculatePodStatusObservedGeneration(pod)`, and
 * `UpdatePodCondition(newStatus, condition)` only `if condition != nil`; its `PatchPodStatus` sends
 * the difference, so a pass without a condition writes no condition.
 * @returns a JSON object for the patch body's `status`. Pure; never throws.
 */
export function podGCFailedStatus(live: Pick<Pod, 'generation'>, condition: PodCondition | undefined): Record<string, unknown> {
  const status: Record<string, unknown> = { phase: 'Failed' };
  // Upstream: CalculatePodStatusObservedGeneration, on every Failed patch (with or without a condition).
  if (live.generation !== undefined) status['observedGeneration'] = live.generation;
  if (condition) {
    // Upstream: CalculatePodConditionObservedGeneration (the pod's generation, gate GA since 1.35).
    status['conditions'] = [podConditionToWire({ ...condition, ...(live.generation !== undefined ? { observedGeneration: live.generation } : {}) })];
  }
  return status;
}

/**
 * PodGC writes over the real API.
 * Mirrors upstream `pkg/controller/podgc/gc_controller.go` `markFailedAndDeletePodWithCondition`.
 */
export class PodGCWriter {
  readonly #clients: KubeClients;
  readonly #writes: WriteScheduler;
  readonly #clock: Clock;
  readonly #own: OwnWriteNotes | undefined;

  /**
   * @param clients the API clients.
   * @param writes the throttled, fenced write path (src/kube/writer.ts).
   * @param clock for conflict-retry sleeps.
   * @param own where each condition write and DELETE is noted right before it is sent (the
   *   second-actor check's ledger, src/secondactor/ownwrites.ts); none in tests.
   */
  constructor(clients: KubeClients, writes: WriteScheduler, clock: Clock, own?: OwnWriteNotes) {
    this.#clients = clients;
    this.#writes = writes;
    this.#clock = clock;
    this.#own = own;
  }

  /** Quorum GET of a node; `undefined` only on 404. @throws {LiveReadError} on any other answer, including an unparsable object. */
  getNode(name: string): Promise<Node | undefined> {
    return readNode(this.#clients, name);
  }

  /** Quorum GET of a pod; `undefined` only on 404. @throws {LiveReadError} on any other answer, including an unparsable object. */
  getPod(namespace: string, name: string): Promise<Pod | undefined> {
    return readPod(this.#clients, namespace, name);
  }

  /**
   * Force-deletes one pod after re-deciding on live state:
   * 1. GET the pod (quorum read); a 404 or another UID → `'gone'` (any other answer throws a
   *    `LiveReadError`: nothing is written);
   * 2. `recheck(live)`; `undefined` → `'skipped'`;
   * 3. unless the phase is already Succeeded/Failed: strategic-merge patch of `pods/status` with
   *    phase `Failed`, plus the plan's condition when it has one (orphans only), guarded by the
   *    resourceVersion just read (409 → back to 1); `status.observedGeneration` (and the
   *    condition's) are the live pod's `metadata.generation` when the server sets one (≥ 1.33),
   *    else left out. Exactly the fields upstream's patch changes (docs/upstream-1.37.md "Every write");
   * 4. DELETE with `gracePeriodSeconds: 0` and a UID precondition.
   * Mirrors `markFailedAndDeletePodWithCondition` (which patches with a UID precondition and
   * deletes with `NewDeleteOptions(0)`); upstream skips step 1–2 and acts on its cache (#142331).
   * `sendCheck` is the controller's decision taken again from its caches right before each of the
   * two writes is sent (src/kube/throttle.ts `WriteRecheck`): a reason withholds the write.
   * @returns see {@link ForceDeleteResult}.
   * @throws after 5 conflicts (10 ms apart), a `LiveReadError` from step 1, whatever `recheck`
   *   throws, a `NotCalledForError` (`sendCheck` withheld a write), or any other API error
   *   (including {@link FencedError} from the write path).
   */
  async forceDeletePod(namespace: string, name: string, uid: string, recheck: ForceDeleteRecheck, sendCheck?: WriteRecheck): Promise<ForceDeleteResult> {
    return retryOnConflict(
      async () => {
        const live = await this.getPod(namespace, name);
        if (!live || live.uid !== uid) return 'gone';
        const plan = await recheck(live);
        if (!plan) return 'skipped';
        if (!isPodTerminal(live)) {
          const status = podGCFailedStatus(live, plan.condition);
          try {
            await this.#writes.schedule(
              () => {
                if (plan.condition) this.#own?.notePodCondition(uid);
                return this.#clients.core.patchNamespacedPodStatus(
                  {
                    namespace,
                    name,
                    body: { metadata: { resourceVersion: live.resourceVersion }, status },
                  },
                  STRATEGIC,
                );
              },
              'pod',
              sendCheck,
            );
          } catch (err) {
            if (isNotFound(err)) return 'gone';
            throw err; // a 409 means the pod changed: retryOnConflict reads and decides again
          }
        }
        try {
          await this.#writes.schedule(
            () => {
              this.#own?.notePodDelete(uid);
              return this.#clients.core.deleteNamespacedPod({
                namespace,
                name,
                gracePeriodSeconds: 0,
                body: { gracePeriodSeconds: 0, preconditions: { uid } },
              });
            },
            'pod',
            sendCheck,
          );
        } catch (err) {
          // 409 here is the UID precondition: the name now belongs to another pod.
          if (isNotFound(err) || isConflict(err)) return 'gone';
          throw err;
        }
        return 'deleted';
      },
      { clock: this.#clock },
    );
  }
}
