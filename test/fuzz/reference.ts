/**
 * Small references written straight from upstream's definitions (kube-controller-manager v1.37.2),
 * independent of the code under test: nothing here imports a decision function of src/. The
 * invariants (./harness.ts) compare what our controllers did with these.
 *
 * Times are epoch **milliseconds**; tolerationSeconds are **seconds**.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, Taint, Toleration } from '../../src/kube/objects.js';

/**
 * Whether `tol` tolerates `taint`. Upstream `Toleration.ToleratesTaint`
 * (staging/src/k8s.io/api/core/v1/toleration.go): the effect is empty or equal; the key is empty
 * with `Exists` (matches every key) or equal; `Exists` matches any value, `Equal` (or empty) an equal value;
 * `Lt`/`Gt` match nothing, as upstream with `TaintTolerationComparisonOperators` off (its 1.37 default,
 * the fuzzed controllers' configuration).
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
    // an existing schedule created earlier is kept, whatever the tolerations now say. Upstream's
    // `now` is time.Now() taken afresh by each handleNodeUpdate / handlePodUpdate, so a later
    // handling is always strictly later than the schedule's CreatedAt and the test always holds;
    // on this simulated clock two handlings can share a millisecond (a taint and a toleration edit
    // at the same instant), and equality must count as later, not replace the schedule.
    if (cur && cur.createdAt + min * 1000 <= trigger) return;
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

/**
 * Upstream's taint eviction controller as in {@link UpstreamTaintEviction}, but fed through its own
 * informers, whose watch streams drop when ours do (the harness's `watch-drop` events): during a drop
 * of `nodes` or `pods` it keeps the objects it held when the stream ended and queues the API's
 * changes, and on the stream's return it delivers them (`handleNodeUpdate` / `handlePodUpdate` with
 * the old object its cache held, at the time of the return), as client-go's reflector does when it
 * resumes the watch from its last resourceVersion; after a 410 the relist delivers each changed
 * object's last state only (the informer's `Replace`: the cached object against the listed one).
 * It judges by its own cache: `NodeUpdated` re-processes the pods its pod cache has on the node,
 * `PodUpdated` reads the node from its node cache (taint_eviction.go `getPodsAssignedToNode`, `nodeLister`).
 *
 * Why: kube-controller-manager whose pod watch was down when a toleration edit happened schedules a
 * taint's deletion from the tolerations its cache still holds, and a later edit with a later
 * deadline keeps the earlier schedule (`processPodOnNode`: an existing schedule created earlier is kept).
 */
export class DroppedWatchUpstream {
  readonly upstream = new UpstreamTaintEviction();
  readonly #nodes = new Map<string, Node>();
  readonly #pods = new Map<string, Pod>();
  readonly #queued = new Map<'nodes' | 'pods', { key: string; cur: Node | Pod | undefined }[]>();
  /** Drops in force per resource (a drop of an earlier process may still run when a new one starts), and whether one ended in a 410. */
  readonly #depth = new Map<'nodes' | 'pods', { n: number; gone: boolean }>();

  /** Starts from the API's `nodes` and `pods` (a synced cache before any event). */
  constructor(nodes: Iterable<Node>, pods: Iterable<Pod>) {
    for (const n of nodes) this.#nodes.set(n.name, n);
    for (const p of pods) this.#pods.set(`${p.namespace}/${p.name}`, p);
  }

  /** The schedule this upstream has for the pod `uid`, if any. */
  scheduled(uid: string): Scheduled | undefined {
    return this.upstream.scheduled(uid);
  }

  /** Whether `resource`'s stream is down. */
  dropped(resource: 'nodes' | 'pods'): boolean {
    return this.#queued.has(resource);
  }

  /** `resource`'s watch stream ends: changes queue until {@link restore} has been called once per drop. */
  drop(resource: 'nodes' | 'pods'): void {
    const d = this.#depth.get(resource) ?? { n: 0, gone: false };
    this.#depth.set(resource, { n: d.n + 1, gone: d.gone });
    if (!this.#queued.has(resource)) this.#queued.set(resource, []);
  }

  /**
   * `resource`'s stream returns at `now` (epoch ms): the queued changes are delivered in order, or
   * (`gone`: a relist after a 410) each changed object's last state once.
   */
  restore(resource: 'nodes' | 'pods', gone: boolean, now: number): void {
    const d = this.#depth.get(resource) ?? { n: 1, gone: false };
    if (d.n > 1) {
      this.#depth.set(resource, { n: d.n - 1, gone: d.gone || gone });
      return;
    }
    this.#depth.delete(resource);
    gone ||= d.gone;
    const q = this.#queued.get(resource) ?? [];
    this.#queued.delete(resource);
    const changes = gone ? [...new Map(q.map((x) => [x.key, x] as const)).values()] : q;
    for (const x of changes) this.#apply(resource, x.key, x.cur, now);
  }

  /** The API changed node `name` to `cur` (undefined: deleted) at `now` (epoch ms). */
  node(name: string, cur: Node | undefined, now: number): void {
    const q = this.#queued.get('nodes');
    if (q) q.push({ key: name, cur });
    else this.#apply('nodes', name, cur, now);
  }

  /** The API changed pod `key` (namespace/name) to `cur` (undefined: deleted) at `now` (epoch ms). */
  pod(key: string, cur: Pod | undefined, now: number): void {
    const q = this.#queued.get('pods');
    if (q) q.push({ key, cur });
    else this.#apply('pods', key, cur, now);
  }

  #apply(resource: 'nodes' | 'pods', key: string, cur: Node | Pod | undefined, now: number): void {
    if (resource === 'nodes') {
      const old = this.#nodes.get(key);
      const node = cur as Node | undefined;
      if (node) this.#nodes.set(key, node);
      else this.#nodes.delete(key);
      if (node) this.upstream.nodeUpdated(old, node, [...this.#pods.values()].filter((p) => p.nodeName === key), now);
      return;
    }
    const old = this.#pods.get(key);
    const pod = cur as Pod | undefined;
    if (pod) this.#pods.set(key, pod);
    else this.#pods.delete(key);
    if (!old && !pod) return;
    this.upstream.podUpdated(old, pod, pod ? this.#nodes.get(pod.nodeName) : undefined, now);
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

/**
 * Upstream's NoExecute tainting rate for a zone, taints per second: `setLimiterInZone`
 * (node_lifecycle_controller.go) with `HealthyQPSFunc` for Normal and FullDisruption (the
 * `enterFullDisruptionFunc`) and `ReducedQPSFunc` for PartialDisruption (`--secondary-node-eviction-rate`
 * above `--large-cluster-size-threshold` nodes, 0 at or below it); `handleDisruption`: 0 for every
 * zone while all zones are in FullDisruption.
 */
export function zoneRate(
  state: 'Normal' | 'PartialDisruption' | 'FullDisruption',
  zoneSize: number,
  allFullyDisrupted: boolean,
  rates: { primary: number; secondary: number; largeClusterThreshold: number },
): number {
  if (allFullyDisrupted) return 0;
  if (state === 'PartialDisruption') return zoneSize > rates.largeClusterThreshold ? rates.secondary : 0;
  return rates.primary;
}

/**
 * Whether the acceptance times `times` (epoch ms, ascending) fit one token bucket of `qps` tokens
 * per second and burst 1, started full: client-go `flowcontrol.NewTokenBucketRateLimiter(qps, 1)`
 * as `SwapLimiter` (scheduler/rate_limited_queue.go, `EvictionRateLimiterBurst`) builds it. Over any
 * window [t_i, t_j] at most `1 + qps × (t_j − t_i)` acceptances, with `slackMs` added to every window
 * (clock steps of the controller's clock). @returns the first offending pair, or undefined.
 */
export function tokenBucketExcess(times: readonly number[], qps: number, slackMs: number): { from: number; to: number; count: number; allowed: number } | undefined {
  for (let j = 0; j < times.length; j++) {
    for (let i = 0; i < j; i++) {
      const from = times[i] ?? 0;
      const to = times[j] ?? 0;
      const count = j - i + 1;
      const allowed = 1 + (qps * (to - from + slackMs)) / 1000;
      if (count > allowed + 1e-9) return { from, to, count, allowed };
    }
  }
  return undefined;
}

/**
 * Upstream `IsPodTerminated` (pkg/volume/util/util.go): the pod's phase is Failed or Succeeded, or
 * it is being deleted and no container runs (`notRunning`). A pod that does not say whether its
 * containers run counts as running.
 */
export function podTerminated(pod: Pod): boolean {
  return pod.phase === 'Failed' || pod.phase === 'Succeeded' || (pod.deletionTimestamp !== undefined && pod.containersNotRunning === true);
}

/**
 * Whether `pod` holds the volume `pvName`: as upstream's desired-state-of-world populator
 * (pkg/controller/volume/attachdetach/util/util.go `CreateVolumeSpec`, which resolves a pod's claim,
 * and a generic ephemeral volume's claim `<pod>-<volume>` only when the pod controls it), with the
 * project's stricter rule that a claim that cannot be resolved (missing, unbound, not the pod's,
 * or bound to a missing PV) holds every volume on the node.
 */
export function podHoldsVolume(pod: Pod, pvName: string, claims: ReadonlyMap<string, PersistentVolumeClaim>, pvs: readonly PersistentVolume[]): boolean {
  if (podTerminated(pod)) return false;
  const names = [...pod.pvcNames.map((n) => ({ n, eph: false })), ...(pod.ephemeralClaimNames ?? []).map((n) => ({ n, eph: true }))];
  for (const { n, eph } of names) {
    const claim = claims.get(`${pod.namespace}/${n}`);
    if (!claim || claim.volumeName === undefined || (eph && claim.controllerUid !== pod.uid)) return true;
    if (!pvs.some((v) => v.name === claim.volumeName)) return true;
    if (claim.volumeName === pvName) return true;
  }
  return false;
}

/** Upstream pod GC's `quarantineTime` (pkg/controller/podgc/gc_controller.go): a missing node's pods are orphans only 40 s after a pass first queued it, ms. */
export const ORPHAN_QUARANTINE_MS = 40_000;

/** Upstream pod GC's `gcCheckPeriod` (gc_controller.go): `gc` runs every 20 s, ms. */
export const GC_CHECK_PERIOD_MS = 20_000;

/**
 * Upstream `isPodTerminated` (gc_controller.go): every phase but Pending, Running and Unknown (the
 * API server stores one of the five phases).
 */
export function gcPodTerminated(pod: Pick<Pod, 'phase'>): boolean {
  return pod.phase !== 'Pending' && pod.phase !== 'Running' && pod.phase !== 'Unknown';
}

/**
 * Upstream `byEvictionAndCreationTimestamp.Less` (gc_controller.go): evicted pods first
 * (`eviction.PodIsEvicted`: phase Failed, reason `Evicted`), then the older creation timestamp, then
 * the smaller name. A comparator: negative when `a` comes first.
 */
export function byEvictionAndCreationTimestamp(a: Pod, b: Pod): number {
  const ae = a.phase === 'Failed' && a.statusReason === 'Evicted';
  const be = b.phase === 'Failed' && b.statusReason === 'Evicted';
  if (ae !== be) return ae ? -1 : 1;
  if (a.creationTimestamp === b.creationTimestamp) return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  return a.creationTimestamp - b.creationTimestamp;
}

/**
 * The pods upstream `gcTerminated` (gc_controller.go) deletes from `pods` (one pass's lister
 * contents): with `threshold` > 0 (`gc` skips the pass otherwise) and n terminated pods, the first
 * n − threshold in {@link byEvictionAndCreationTimestamp} order; none when n ≤ threshold.
 */
export function gcTerminatedToDelete(pods: readonly Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const terminated = pods.filter(gcPodTerminated);
  const deleteCount = terminated.length - threshold;
  if (deleteCount <= 0) return [];
  return [...terminated].sort(byEvictionAndCreationTimestamp).slice(0, deleteCount);
}

/**
 * The earliest time (epoch ms) upstream pod GC, running since `startedAt`, may force-delete the pods
 * of a node that the API has been without during `absences` ([from, to), `to` undefined while it
 * lasts): `gcOrphaned` queues the node with `nodeQueue.AddAfter(name, quarantineTime)` at a pass that
 * finds it missing from the lister, and `discoverDeletedNodes` takes it up only once that delay is
 * over, at a later pass (its delaying queue keeps the earliest ready time of a key; a restarted
 * controller starts with an empty queue). A pass sees a node missing at the earliest when the API
 * deleted it, so the bound is the first absence still open at `startedAt`, counted from
 * `max(its start, startedAt)`, plus 40 s. `Infinity` when there is none.
 */
export function orphanQuarantineEnd(absences: readonly { from: number; to?: number }[], startedAt: number): number {
  const a = absences.find((x) => (x.to ?? Infinity) > startedAt);
  return a === undefined ? Infinity : Math.max(a.from, startedAt) + ORPHAN_QUARANTINE_MS;
}

/**
 * Whether a node lifecycle controller that began observing at `fromMs` could have judged the node not
 * Ready by `toMs` from what it observed since: upstream `monitorNodeHealth` → `tryUpdateNodeHealth`
 * (node_lifecycle_controller.go) judges a node by its Ready condition as the lister has it
 * (`currentReadyCondition`, acted on by `processTaintBaseEviction` at that pass), and marks a node
 * Unknown once `now` is after its probe timestamp plus the grace period; a node it first observes
 * gets the probe timestamp `now` ("Missing timestamp for Node … Assuming now"), and each newer Lease
 * renewal moves it. So: the Ready status was one of `statuses` at `from.status` or became one by
 * `toMs` (what the controller reads from its Node cache, once that cache has the data), or some
 * interval in [from.silence, toMs] without a renewal is longer than `graceMs` (silence needs its
 * Lease cache as well).
 * @param readyHistory the node's Ready status in the API over time ({at, status}, ascending).
 * @param renewals the node's Lease renewals in the API (epoch ms, ascending).
 * @param from when the controller's Node cache (`status`) and its Node and Lease caches together (`silence`) began to hold the data it judges by, epoch ms.
 */
export function judgedNotReady(
  readyHistory: readonly { at: number; status: string }[],
  renewals: readonly number[],
  from: { status: number; silence: number },
  toMs: number,
  graceMs: number,
  statuses: ReadonlySet<string>,
): boolean {
  let atStart: string | undefined;
  for (const x of readyHistory) {
    if (x.at <= from.status) atStart = x.status;
    else if (x.at <= toMs && statuses.has(x.status)) return true;
  }
  if (atStart !== undefined && statuses.has(atStart)) return true;
  const fromMs = from.silence;
  let last = fromMs;
  for (const r of renewals) {
    if (r <= fromMs) continue;
    if (r > toMs) break;
    if (r - last > graceMs) return true;
    last = r;
  }
  return toMs - last > graceMs;
}

/**
 * The earliest time (epoch ms) upstream, started at `startedAt`, may delete a pod for `taints`: its
 * taint manager schedules a pod when it first handles it and its node's NoExecute taints, at or after
 * its start, `minTolerationTime` later (`processPodOnNode`: at once for a taint the pod does not
 * tolerate, never when every matching toleration is forever), and keeps a schedule through a
 * toleration edit that would end later. So the smallest of those times over every version of the
 * pod's tolerations it held since the start (`tolerationVersions`: the one at the start first).
 * `Infinity` when every version tolerates the taints forever.
 */
export function upstreamRestartedEarliestDeletion(startedAt: number, taints: readonly Taint[], tolerationVersions: readonly (readonly Toleration[])[]): number {
  let earliest = Infinity;
  for (const tols of tolerationVersions) {
    const m = matchingTolerations(taints, tols);
    const s = m.allTolerated ? minTolerationSeconds(m.used) : 0;
    earliest = Math.min(earliest, startedAt + s * 1000);
  }
  return earliest;
}
