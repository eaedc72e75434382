/**
 * What the taint eviction controller first saw, and when: untimed NoExecute taints on each node
 * (the anchor of their toleration clocks, decision.ts `DecideOptions.firstSeen`) and each pod's
 * changed tolerations (the clamp that keeps an edited toleration from deleting sooner than
 * upstream, decision.ts `DecideOptions.tolerationsSeenMs`).
 *
 * Upstream `pkg/controller/tainteviction/taint_eviction.go` `PodUpdated` queues a pod whose
 * tolerations changed, and `processPodOnNode` then counts its toleration from that moment. Our
 * deadlines count from the taint's `timeAdded` (restart-safe), which alone would delete at once a
 * pod that tolerated a taint forever and is edited, an hour later, to 300 s. Remembering when the
 * edit was seen lets the decision count from the later of the two.
 */
import { isDeepStrictEqual } from 'node:util';
import { podKey, type Pod, type Taint } from '../kube/objects.js';

const taintId = (t: Taint): string => `${t.key}\u0000${t.effect}`;

/**
 * For each node, the time this process first saw each of its NoExecute taints that carry no
 * `timeAdded`: the anchor of that taint's toleration clock (decision.ts). Taints that left the node
 * are forgotten, so a taint that comes back starts a new clock. Keyed by key and effect, as a node
 * holds at most one taint per pair. Mirrors nothing upstream (upstream anchors every clock at the
 * time it handles the update).
 */
export class TaintFirstSeen {
  /** node → (`key\0effect` → ms first seen, on the caller's clock). */
  readonly #byNode = new Map<string, Map<string, number>>();

  /** Records the node's current NoExecute `taints` as seen at `nowMs` (ms on the caller's clock: the controller passes monotonic readings, so that no wall-clock step moves a deadline counted from a first sight). Never throws. */
  record(node: string, taints: readonly Taint[], nowMs: number): void {
    const untimed = taints.filter((t) => t.timeAdded === undefined);
    if (untimed.length === 0) {
      this.#byNode.delete(node);
      return;
    }
    const prev = this.#byNode.get(node);
    const next = new Map<string, number>();
    for (const t of untimed) next.set(taintId(t), prev?.get(taintId(t)) ?? nowMs);
    this.#byNode.set(node, next);
  }

  /** Forgets a deleted node. */
  forget(node: string): void {
    this.#byNode.delete(node);
  }

  /** @returns when `t` was first seen on `node` (ms on the clock passed to `record`), or `undefined` if it was not recorded. */
  of(node: string, t: Taint): number | undefined {
    return this.#byNode.get(node)?.get(taintId(t));
  }
}

/**
 * Remembers, per pod (`namespace/name` and UID), the time this process first saw its current
 * tolerations, for pods whose tolerations it saw change, and for pods whose spec had already been
 * changed when it first saw them (`metadata.generation` > 1): their tolerations may have been edited
 * at any time before, after the taint too, so the first sight is the earliest time they are known
 * to hold (upstream, restarted, counts from then as well). A pod first seen at generation 1 (or on a
 * server before 1.33, which sets no generation for pods) with no change seen has no entry: the
 * tolerations it was created with keep the restart-safe anchor. One entry per such pod, dropped
 * when the pod is deleted or recreated.
 */
export class TolerationEdits {
  readonly #seen = new Map<string, { uid: string; atMs: number }>();

  /**
   * Records an informer add (`old` undefined) or update of `pod` seen at `nowMs` (ms on the caller's clock: the controller passes monotonic readings). An
   * update of the same UID with different tolerations (deep equality, as upstream's
   * `Semantic.DeepEqual`) sets the pod's time to `nowMs`; a new UID forgets the old pod's; the
   * first sight of a pod at generation > 1 sets it too. Never throws.
   */
  observe(pod: Pod, old: Pod | undefined, nowMs: number): void {
    const key = podKey(pod);
    if (old === undefined || old.uid !== pod.uid) {
      if (this.#seen.get(key)?.uid === pod.uid) return; // a relist's add of a pod already seen
      this.#seen.delete(key);
      // The spec changed before this first sight, when is unknown: a toleration edited after the
      // taint and before a restart would otherwise count from the taint's timeAdded, and a
      // restarted controller delete sooner than upstream, restarted or not.
      if ((pod.generation ?? 1) > 1) this.#seen.set(key, { uid: pod.uid, atMs: nowMs });
      return;
    }
    if (!isDeepStrictEqual(old.tolerations, pod.tolerations)) this.#seen.set(key, { uid: pod.uid, atMs: nowMs });
  }

  /**
   * {@link seenMs}, for a decision at `nowMs` (ms on the clock passed to `observe`): a pod at
   * generation > 1 with no entry (this process decides on it before it saw an add for it, as after
   * a start on caches that were already filled) is first seen now, and recorded so.
   * @returns when the pod's current tolerations are known to hold from, or `undefined` (restart-safe anchor).
   */
  seenForDecision(pod: Pick<Pod, 'namespace' | 'name' | 'uid' | 'generation'>, nowMs: number): number | undefined {
    const key = podKey(pod);
    const e = this.#seen.get(key);
    if (e?.uid === pod.uid) return e.atMs;
    if ((pod.generation ?? 1) <= 1) return undefined;
    this.#seen.set(key, { uid: pod.uid, atMs: nowMs });
    return nowMs;
  }

  /** Forgets `key` (`namespace/name`): the pod was deleted. */
  forget(key: string): void {
    this.#seen.delete(key);
  }

  /**
   * @returns when this process first saw `pod`'s current tolerations (ms on the clock passed to `observe`), or `undefined`
   *   when it never saw them change.
   */
  seenMs(pod: Pick<Pod, 'namespace' | 'name' | 'uid'>): number | undefined {
    const e = this.#seen.get(podKey(pod));
    return e?.uid === pod.uid ? e.atMs : undefined;
  }

  /** Number of pods remembered. */
  get size(): number {
    return this.#seen.size;
  }
}
