/**
 * Small references written straight from upstream's definitions (kube-controller-manager v1.37.2),
 * independent of the code under test: nothing here imports a decision function of src/. The
 * invariants (./harness.ts) compare what our controllers did with these.
 *
 * Times are epoch **milliseconds**; tolerationSeconds are **seconds**.
 */
import type { Node, Pod, Taint, Toleration } from '../../src/kube/objects.js';

/**
 * Whether `tol` tolerates `taint`. Upstream `Toleration.ToleratesTaint`
 * (staging/src/k8s.io/api/core/v1/toleration.go): the effect is empty or equal; the key is empty
 * with `Exists` (matches every key) or equal; `Exists` matches any value, `Equal` (or empty) an equal value.
 */
export function toleratesTaint(tol: Toleration, taint: Taint): boolean {
  if (tol.effect !== undefined && tol.effect !== '' && tol.effect !== taint.effect) return false;
  if (tol.key !== undefined && tol.key !== '' && tol.key !== taint.key) return false;
  const op = tol.operator ?? 'Equal';
  if (op === 'Exists') return true;
  if (op === 'Equal' || op === '') return (tol.value ?? '') === (taint.value ?? '');
  return false;
}

/**
 * Upstream `GetMatchingTolerations` (pkg/apis/core/v1/helper/helpers.go): for each taint, the first
 * toleration that tolerates it. @returns `allTolerated` false when some taint has none.
 */
export function matchingTolerations(taints: readonly Taint[], tolerations: readonly Toleration[]): { allTolerated: boolean; used: Toleration[] } {
  const used: Toleration[] = [];
  for (const t of taints) {
    const tol = tolerations.find((x) => toleratesTaint(x, t));
    if (!tol) return { allTolerated: false, used: [] };
    used.push(tol);
  }
  return { allTolerated: true, used };
}

/**
 * Upstream `getMinTolerationTime` (pkg/controller/tainteviction/taint_eviction.go), in **seconds**:
 * 0 for no tolerations or any tolerationSeconds <= 0, the smallest positive one otherwise,
 * `Infinity` when none has tolerationSeconds (upstream's -1, tolerate forever).
 */
export function minTolerationSeconds(used: readonly Toleration[]): number {
  if (used.length === 0) return 0;
  let min = Infinity;
  for (const t of used) {
    if (t.tolerationSeconds === undefined) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min;
}

/** Upstream `getNoExecuteTaints`: the node's NoExecute taints. */
export function noExecuteTaints(node: Node | undefined): Taint[] {
  return (node?.taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/** A deletion upstream has scheduled for a pod: `createdAt` and `fireAt`, epoch ms. */
export interface Scheduled {
  createdAt: number;
  fireAt: number;
}

/**
 * Upstream's taint eviction controller, kept running without a restart, as a schedule per pod UID:
 * `NodeUpdated`/`handleNodeUpdate` (only when the node's NoExecute taints change, taints compared with
 * `timeAdded`), `PodUpdated`/`handlePodUpdate` (only when tolerations or the node change) and
 * `processPodOnNode` (taint_eviction.go), fed the API's changes at the time they happen. The work
 * queue is modelled only by its schedule: a due entry stays until the pod is deleted, its
 * taints go, or it is cancelled.
 */
export class UpstreamTaintEviction {
  readonly #scheduled = new Map<string, Scheduled>();

  /** The schedule upstream has for the pod `uid`, if any. */
  scheduled(uid: string): Scheduled | undefined {
    return this.#scheduled.get(uid);
  }

  /** `processPodOnNode` at `now` for `pod` on a node with NoExecute `taints`. */
  processPodOnNode(pod: Pod, taints: readonly Taint[], now: number): void {
    if (taints.length === 0) {
      this.#scheduled.delete(pod.uid);
      return;
    }
    const { allTolerated, used } = matchingTolerations(taints, pod.tolerations);
    if (!allTolerated) {
      this.#scheduled.set(pod.uid, { createdAt: now, fireAt: now });
      return;
    }
    const min = minTolerationSeconds(used);
    if (min === Infinity) {
      this.#scheduled.delete(pod.uid);
      return;
    }
    const trigger = now + min * 1000;
    const cur = this.#scheduled.get(pod.uid);
    // `if startTime.Add(minTolerationTime).Before(triggerTime) { return }`, startTime = CreatedAt:
    // an existing schedule created earlier is kept, whatever the tolerations now say.
    if (cur && cur.createdAt + min * 1000 < trigger) return;
    this.#scheduled.set(pod.uid, { createdAt: cur ? cur.createdAt : now, fireAt: trigger });
  }

  /** `NodeUpdated`: re-processes `pods` when the NoExecute taints changed. */
  nodeUpdated(old: Node | undefined, cur: Node | undefined, pods: readonly Pod[], now: number): void {
    const before = noExecuteTaints(old);
    const after = noExecuteTaints(cur);
    if (sameTaints(before, after)) return;
    for (const p of pods) {
      if (p.deletionTimestamp !== undefined) continue;
      this.processPodOnNode(p, after, now);
    }
  }

  /** `PodUpdated`: re-processes the pod when its tolerations or node changed; forgets it when deleted. */
  podUpdated(old: Pod | undefined, cur: Pod | undefined, node: Node | undefined, now: number): void {
    if (!cur) {
      if (old) this.#scheduled.delete(old.uid);
      return;
    }
    if (cur.nodeName === '') return;
    if (old && old.uid === cur.uid && old.nodeName === cur.nodeName && JSON.stringify(old.tolerations) === JSON.stringify(cur.tolerations)) return;
    this.processPodOnNode(cur, noExecuteTaints(node), now);
  }
}

function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((t, i) => {
    const u = b[i];
    return u !== undefined && u.key === t.key && (u.value ?? '') === (t.value ?? '') && u.effect === t.effect && u.timeAdded === t.timeAdded;
  });
}

/**
 * The restart-safe lower bound, epoch ms: the earliest of, over the node's NoExecute taints,
 * `max(taint timeAdded, when the pod's current tolerations were set) + tolerationSeconds` of the
 * first toleration matching that taint (0 s for an untolerated taint, never for a forever one).
 * `Infinity` when no taint calls for a deletion. This is the bound a controller that restarted
 * (and so lost upstream's pending schedule) may not cross: it never deletes before the pod's own
 * tolerationSeconds has run since both the taint and the tolerations were there.
 */
export function restartSafeBound(taints: readonly Taint[], tolerations: readonly Toleration[], tolerationsSetAt: number): number {
  let bound = Infinity;
  for (const t of taints) {
    const tol = tolerations.find((x) => toleratesTaint(x, t));
    const s = tol ? minTolerationSeconds([tol]) : 0;
    if (s === Infinity) continue;
    bound = Math.min(bound, Math.max(t.timeAdded ?? -Infinity, tolerationsSetAt) + s * 1000);
  }
  return bound;
}

/**
 * Upstream `ComputeZoneState` (pkg/controller/nodelifecycle/node_lifecycle_controller.go) from the
 * Ready statuses of one zone's nodes: `FullDisruption` when none is Ready and some are not;
 * `PartialDisruption` when more than 2 are not Ready and their share is at least `threshold`;
 * `Normal` otherwise.
 */
export function zoneState(readyStatuses: readonly boolean[], threshold: number): 'Normal' | 'PartialDisruption' | 'FullDisruption' {
  const ready = readyStatuses.filter(Boolean).length;
  const notReady = readyStatuses.length - ready;
  if (ready === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / readyStatuses.length >= threshold) return 'PartialDisruption';
  return 'Normal';
}
