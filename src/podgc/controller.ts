/**
 * The pod garbage collector's four passes (terminated, out-of-service, orphaned, unscheduled
 * terminating): the thin I/O shell around src/podgc/decision.ts.
 *
 * Mirrors upstream `pkg/controller/podgc/gc_controller.go` (`gc`, `gcTerminated`, `gcTerminating`,
 * `gcOrphaned`, `discoverDeletedNodes`, `gcUnscheduledTerminating`,
 * `markFailedAndDeletePodWithCondition`).
 *
 * Data flow: informer handlers only enqueue pod keys or node names (level-based); workers re-read
 * the caches, decide with the pure functions, re-decide on a live GET of the node and the pod, and
 * hand the write to {@link PodGCWriter}. Time goes through the injected {@link Clock}.
 *
 * Deliberate differences from upstream (each is also commented where it happens):
 * 1. Event-driven: a terminating pod on an out-of-service node is queued as soon as the node or
 *    pod update arrives (well within 1 s), not on the next 20 s gc pass; a 20 s sweep remains as a
 *    safety net.
 * 2. Re-check before acting: the node and the pod are read from the API (quorum GET) right before
 *    the write and the decision is taken again on that live state (upstream acts on its informer
 *    cache, kubernetes #142331).
 * 3. (Withdrawn, issue 53.) Out-of-service and unscheduled pods used to get the
 *    `DisruptionTarget`/`DeletionByPodGC` condition too. Upstream adds it to orphans only, and a
 *    Job's `podFailurePolicy` matching `DisruptionTarget` then fails the Job (or ignores the failure)
 *    where upstream's would count it against `backoffLimit`: acting more through another
 *    controller. Every pass now writes exactly upstream's fields (docs/upstream-1.37.md "Every write").
 * 4. Under `--node-selector`, orphans are only judged for nodes this process saw in its cache.
 * 5. Counters count force deletes that were attempted (written or failed); pods found gone or no
 *    longer eligible on the live re-check are not counted (upstream counts before the attempt).
 * 6. Events on the pod and on the node say what was force-deleted and why (upstream PodGC records
 *    none).
 * 7. Fail closed: a live read that is neither a parsable object nor a 404 proves nothing, so nothing
 *    is deleted; it is counted (`pod_gc_collector_live_read_failures_total`, not as a force delete)
 *    and retried with backoff. Upstream does the same for a failed node GET (`discoverDeletedNodes`).
 * 8. The terminated and unscheduled passes run on the 20 s sweep as upstream's, but their deletions
 *    go through their own small work queues (a few workers each) instead of one goroutine per
 *    pod, so a backlog of thousands of terminated pods cannot crowd out-of-service and orphan
 *    writes out of the shared write throttle; a large backlog is therefore cleared later than
 *    upstream would, never sooner; each pass queues at most the oldest 1,000 (`TERMINATED_PER_PASS`),
 *    so a pass never blocks the event loop for long. Only Succeeded/Failed pods count as terminated
 *    (see `isPodTerminatedForGC`).
 * 9. Under `--node-selector` the terminated pass counts and deletes only pods bound to nodes in this
 *    process's node cache (`#terminatedCandidates`); upstream, which has no selector, counts all.
 */
import type { Node, Pod } from '../kube/objects.js';
import { podKey } from '../kube/objects.js';
import type { Logger } from '../log/logger.js';
import { WorkQueue } from '../kube/workqueue.js';
import { describeError } from '../kube/client.js';
import { isFenced, isNotCalledFor } from '../kube/throttle.js';
import { noteLiveReadFailure } from '../kube/reads.js';
import { isNodeOutOfService } from '../kube/predicates.js';
import type { PodGCMetrics } from '../metrics/registry.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import { steadyClock, type Clock, type TimerHandle } from '../util/clock.js';
import {
  decideOrphanNode,
  FORCE_DELETE_WHY,
  isOnlyWaitingForFinalizers,
  isPodTerminatedForGC,
  isSelectedForTerminatedGC,
  orphanCondition,
  POD_GC_EVENT_REASONS,
  selectTerminatedForGC,
  shouldForceDeleteOutOfService,
  shouldForceDeleteUnscheduled,
  type PodGCForceDeleteReason,
} from './decision.js';
import type { ForceDeleteResult, PodGCWriter } from './writer.js';

/** Configuration. Durations in **milliseconds**. */
export interface PodGCConfig {
  /** How long a node must have been missing before its pods are orphans (program default 40 000, upstream `quarantineTime`). */
  orphanQuarantineMs: number;
  /** Period of the safety sweep over every cached pod (program default 20 000, upstream `gcCheckPeriod`). */
  sweepPeriodMs: number;
  /** True when the process runs under `--node-selector` (see {@link decideOrphanNode}). */
  scoped: boolean;
  /** `--terminated-pod-gc-threshold`, pods; 0 or less disables the terminated pass (upstream default 12 500). */
  terminatedPodThreshold: number;
}

/** The informer caches the controller reads. Pod keys are `ns/name`. */
export interface PodGCCaches {
  nodes: ReadStore<Node>;
  pods: ReadStore<Pod> & { podsOnNode(nodeName: string): readonly Pod[] };
}

/** The live reads and writes the controller makes (implemented by {@link PodGCWriter}). */
export type PodGCWrites = Pick<PodGCWriter, 'getNode' | 'forceDeletePod'>;

/** Everything the controller needs, injected. */
export interface PodGCDeps {
  config: PodGCConfig;
  clock: Clock;
  log: Logger;
  caches: PodGCCaches;
  writes: PodGCWrites;
  events: EventSink;
  metrics: PodGCMetrics;
  /** True while the node and pod caches reflect the cluster (synced, watches connected). */
  canSeeCluster: () => boolean;
}

/** Read-only view for `/debug/state`. Times are epoch ms. */
export interface PodGCView {
  /** Nodes whose pods are in orphan quarantine. */
  missingNodes: { node: string; missingSince: number; quarantineEndsAt: number }[];
  queuedPods: number;
  queuedNodes: number;
  /** Terminated pods queued for deletion by the threshold pass. */
  queuedTerminated: number;
  /** Unscheduled terminating pods queued for deletion. */
  queuedUnscheduled: number;
  /** Nodes the controller keeps state for (seen in the cache, or with orphans pending). */
  trackedNodes: number;
}

const POD_WORKERS = 8; // upstream deletes gcTerminating candidates in parallel goroutines
const ORPHAN_WORKERS = 2;
// Few workers on purpose: each holds at most one write in the shared throttle, so the threshold
// pass can never queue thousands of deletes ahead of an out-of-service or orphan delete.
const TERMINATED_WORKERS = 2;
const UNSCHEDULED_WORKERS = 1;
/**
 * Terminated pods queued per gc pass, oldest first; the next pass queues the next ones. Queueing
 * 37,500 keys at once (50,000 terminated pods, threshold 12,500) blocks the event loop for ~200 ms
 * of CPU (bench/podgc-terminated.ts), four health-pass budgets; 1,000 keys cost a few ms. The two
 * workers delete about `--kube-api-qps` × 20 s = 400 pods a pass at the default QPS, so the cap only
 * slows a drain faster than 1,000 pods per 20 s (difference 8: later, never sooner or more).
 */
const TERMINATED_PER_PASS = 1000;
const BLIND_RETRY_MS = 1000;
const TAINT_TEXT = 'not Ready and tainted node.kubernetes.io/out-of-service';

/**
 * The pod GC controller (out-of-service and orphan passes). Construct, {@link start} once the
 * caches synced, feed it informer events through {@link nodeChanged}, {@link nodeDeleted} and
 * {@link podChanged}; {@link stop} ends every loop.
 * Mirrors upstream `podgc.PodGCController`.
 */
export class PodGCController {
  readonly #d: PodGCDeps;
  readonly #podQueue: WorkQueue;
  readonly #orphanQueue: WorkQueue;
  readonly #terminatedQueue: WorkQueue;
  readonly #unscheduledQueue: WorkQueue;
  /**
   * Node name → uid of every node seen in the cache (scoping rule, and the uid for node events). A
   * deleted node leaves it at once when no pod is bound to it, else once its orphans are resolved;
   * the sweep drops any other leftover, so node churn does not grow it.
   */
  readonly #seen = new Map<string, string>();
  /** Node name → epoch ms when it was first noticed missing while pods were bound to it. */
  readonly #missingSince = new Map<string, number>();
  #sweepTimer: TimerHandle | undefined;
  #stopped = true;
  /**
   * The orphan quarantine counts from when this process first missed the node (upstream:
   * `nodeQueue.AddAfter(quarantineTime)`, a monotonic delay): read on a clock that a forward NTP
   * step cannot move ahead. The written conditions keep the wall clock.
   */
  readonly #steady: Clock;

  /** @param deps injected caches, writer, events, metrics, clock and logger. Never throws. */
  constructor(deps: PodGCDeps) {
    this.#d = deps;
    this.#steady = steadyClock(deps.clock);
    const { clock, log } = deps;
    this.#podQueue = new WorkQueue({
      name: 'pod_gc_out_of_service',
      concurrency: POD_WORKERS,
      clock,
      log,
      sync: (key) => this.#syncOutOfServicePod(key),
    });
    this.#orphanQueue = new WorkQueue({
      name: 'orphaned_pods_nodes', // upstream's nodeQueue name
      concurrency: ORPHAN_WORKERS,
      clock,
      log,
      sync: (name) => this.#syncOrphanNode(name),
    });
    this.#terminatedQueue = new WorkQueue({
      name: 'pod_gc_terminated',
      concurrency: TERMINATED_WORKERS,
      clock,
      log,
      sync: (key) => this.#syncSimplePod(key, 'terminated'),
    });
    this.#unscheduledQueue = new WorkQueue({
      name: 'pod_gc_unscheduled_terminating',
      concurrency: UNSCHEDULED_WORKERS,
      clock,
      log,
      sync: (key) => this.#syncSimplePod(key, 'unscheduled'),
    });
  }

  /** Starts the workers and the safety sweep (one sweep runs at once). Call after the caches synced. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    for (const n of this.#d.caches.nodes.list()) this.#seen.set(n.name, n.uid);
    this.sweep();
    this.#scheduleSweep();
  }

  /** Stops the sweep and the workers; in-flight writes finish. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#sweepTimer?.cancel();
    await Promise.all([this.#podQueue.shutDown(), this.#orphanQueue.shutDown(), this.#terminatedQueue.shutDown(), this.#unscheduledQueue.shutDown()]);
  }

  // ---------------------------------------------------------------------------------------------
  // Informer handlers: enqueue only.
  // ---------------------------------------------------------------------------------------------

  /**
   * A Node was added or updated. When it is out of service, its terminating pods are queued at
   * once (deliberate difference 1: upstream waits for the next 20 s pass).
   */
  nodeChanged(node: Node): void {
    this.#seen.set(node.name, node.uid);
    this.#missingSince.delete(node.name);
    if (this.#stopped) return;
    for (const pod of this.#d.caches.pods.podsOnNode(node.name)) {
      if (shouldForceDeleteOutOfService(pod, node)) this.#podQueue.add(podKey(pod));
    }
  }

  /** A Node was deleted: its pods, if any, enter the orphan quarantine; without pods it is forgotten. */
  nodeDeleted(node: Node): void {
    if (this.#d.caches.pods.podsOnNode(node.name).length === 0) {
      this.#forgetMissing(node.name, false);
      return;
    }
    if (!this.#stopped) this.#noteMissing(node.name);
  }

  /** A pod was added or updated (for example it just became terminating). */
  podChanged(pod: Pod): void {
    if (this.#stopped || pod.nodeName === '') return;
    const node = this.#d.caches.nodes.get(pod.nodeName);
    if (node) {
      if (shouldForceDeleteOutOfService(pod, node)) this.#podQueue.add(podKey(pod));
    } else if (!this.#d.config.scoped || this.#seen.has(pod.nodeName)) {
      this.#noteMissing(pod.nodeName);
    }
  }

  /**
   * The gc pass, every 20 s: queues the oldest terminated pods beyond the threshold (`gcTerminated`),
   * every terminating pod on an out-of-service node, every unscheduled terminating pod
   * (`gcUnscheduledTerminating`), and notes every node that pods are bound to but the cache lacks
   * (`gcOrphaned`). Mirrors the listing half of upstream's `gc`; the deletions run on the queues.
   * Skipped while the caches cannot be trusted.
   */
  sweep(): void {
    if (this.#stopped || !this.#d.canSeeCluster()) return;
    const pods = this.#d.caches.pods.list();
    const terminated = selectTerminatedForGC(this.#terminatedCandidates(pods), this.#d.config.terminatedPodThreshold);
    if (terminated.length > 0) {
      const batch = terminated.slice(0, TERMINATED_PER_PASS);
      this.#d.log.info({ numPods: terminated.length, queued: batch.length, threshold: this.#d.config.terminatedPodThreshold }, 'Garbage collecting terminated pods beyond the threshold');
      // Queued in upstream's deletion order; the queue keeps that order for new keys. Only the
      // oldest batch: see TERMINATED_PER_PASS.
      for (const pod of batch) this.#terminatedQueue.add(podKey(pod));
    }
    for (const pod of pods) {
      if (shouldForceDeleteUnscheduled(pod)) this.#unscheduledQueue.add(podKey(pod));
      else this.podChanged(pod);
    }
    for (const name of [...this.#seen.keys()]) {
      if (!this.#missingSince.has(name) && !this.#d.caches.nodes.get(name) && this.#d.caches.pods.podsOnNode(name).length === 0) this.#seen.delete(name);
    }
  }

  /**
   * The pods the terminated pass may count. Deliberate difference 17: under `--node-selector` only
   * pods bound to a node in this process's node cache, because the pod cache is cluster-wide and
   * another actor (a second shard, or kube-controller-manager for the other nodes) owns the rest;
   * upstream has no selector and counts every pod. Fewer pods counted means fewer deletions.
   */
  #terminatedCandidates(pods: readonly Pod[]): readonly Pod[] {
    if (!this.#d.config.scoped) return pods;
    return pods.filter((p) => this.#isTerminatedCandidate(p));
  }

  #isTerminatedCandidate(pod: Pod): boolean {
    return !this.#d.config.scoped || (pod.nodeName !== '' && this.#d.caches.nodes.get(pod.nodeName) !== undefined);
  }

  /**
   * Whether the terminated pass, run now on the cache, would still delete `pod` (upstream
   * `gcTerminated`'s count asked again): asked right before the DELETE is sent. O(pods in the cache),
   * about 1.3 ms at 55,000 pods, once per deletion (`npm run bench:podgc-terminated`).
   */
  #stillBeyondThreshold(pod: Pod): boolean {
    if (!this.#isTerminatedCandidate(pod)) return false;
    return isSelectedForTerminatedGC(pod, this.#terminatedCandidates(this.#d.caches.pods.list()), this.#d.config.terminatedPodThreshold);
  }

  #scheduleSweep(): void {
    this.#sweepTimer = this.#d.clock.setTimeout(() => {
      this.sweep();
      if (!this.#stopped) this.#scheduleSweep();
    }, this.#d.config.sweepPeriodMs);
  }

  #noteMissing(nodeName: string): void {
    const now = this.#steady.now();
    let since = this.#missingSince.get(nodeName);
    if (since === undefined) {
      since = now;
      this.#missingSince.set(nodeName, since);
      this.#d.log.info({ node: nodeName, quarantineMs: this.#d.config.orphanQuarantineMs }, 'Pods are bound to a node that is not in the cache: quarantine started');
    }
    this.#orphanQueue.addAfter(nodeName, since + this.#d.config.orphanQuarantineMs - now);
  }

  // ---------------------------------------------------------------------------------------------
  // Out-of-service (gcTerminating).
  // ---------------------------------------------------------------------------------------------

  async #syncOutOfServicePod(key: string): Promise<void> {
    const cached = this.#d.caches.pods.get(key);
    // Cheap filter on the cache; the decision that counts is taken on live state below.
    if (!cached || !shouldForceDeleteOutOfService(cached, this.#d.caches.nodes.get(cached.nodeName))) return;
    await this.#forceDelete(cached, 'out-of-service', async (live) => {
      // Deliberate difference 2 (#142331): re-read the node and re-decide on live state.
      const node = await this.#d.writes.getNode(live.nodeName);
      if (!shouldForceDeleteOutOfService(live, node)) {
        this.#d.log.info({ pod: podKey(live), node: live.nodeName }, 'Live re-check: pod or node no longer qualifies; not force-deleting');
        return false;
      }
      return true;
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Terminated (gcTerminated) and unscheduled terminating (gcUnscheduledTerminating).
  // ---------------------------------------------------------------------------------------------

  async #syncSimplePod(key: string, reason: 'terminated' | 'unscheduled'): Promise<void> {
    const qualifies = reason === 'terminated' ? isPodTerminatedForGC : shouldForceDeleteUnscheduled;
    const cached = this.#d.caches.pods.get(key);
    if (!cached || !qualifies(cached)) return;
    // Difference 17 again at delete time: a pod whose node left the selector since the pass is not
    // ours. Whether it is still beyond the threshold is asked right before the DELETE is sent
    // (#stillForceDeletes), once per deletion, as that count costs a pass over the pod cache.
    if (reason === 'terminated' && !this.#isTerminatedCandidate(cached)) return;
    // Decided again on the pod read from the API: a pod that was scheduled, restarted or recreated
    // since the sweep is left alone.
    await this.#forceDelete(cached, reason, (live) => Promise.resolve(qualifies(live)));
  }

  // ---------------------------------------------------------------------------------------------
  // Orphans (gcOrphaned).
  // ---------------------------------------------------------------------------------------------

  async #syncOrphanNode(name: string): Promise<void> {
    if (this.#stopped) return;
    if (!this.#d.canSeeCluster()) {
      this.#orphanQueue.addAfter(name, BLIND_RETRY_MS);
      return;
    }
    const now = this.#steady.now();
    const inCache = this.#d.caches.nodes.get(name) !== undefined;
    const pods = this.#d.caches.pods.podsOnNode(name);
    const verdict = decideOrphanNode({
      inCache,
      podCount: pods.length,
      scoped: this.#d.config.scoped,
      seen: this.#seen.has(name),
      missingSince: this.#missingSince.get(name),
      nowMs: now,
      quarantineMs: this.#d.config.orphanQuarantineMs,
    });
    switch (verdict.kind) {
      case 'forget':
        this.#forgetMissing(name, inCache);
        return;
      case 'not-ours':
        this.#missingSince.delete(name);
        return;
      case 'wait':
        if (!this.#missingSince.has(name)) this.#missingSince.set(name, now);
        this.#orphanQueue.addAfter(name, verdict.waitMs);
        return;
      case 'confirm':
        break;
    }
    // Upstream's discoverDeletedNodes: only a live 404 proves the node is gone. Any other answer
    // (deliberate difference 7: also an object we cannot parse) throws, and the queue retries.
    let live: Node | undefined;
    try {
      live = await this.#d.writes.getNode(name);
    } catch (err) {
      noteLiveReadFailure(err, this.#d.metrics.liveReadFailuresTotal, this.#d.log, 'force-deleting orphans');
      throw err;
    }
    if (live) {
      this.#d.log.info({ node: name }, 'Node is missing from the cache but exists in the API: its pods are not orphans');
      this.#missingSince.delete(name);
      // Under --node-selector a live node absent from the cache left the selector: no longer ours.
      if (this.#d.config.scoped && !this.#d.caches.nodes.get(name)) this.#seen.delete(name);
      return;
    }
    let failed = 0;
    for (const pod of pods) {
      const ok = await this.#forceDelete(pod, 'orphaned', (p) => Promise.resolve(p.nodeName === name)).then(
        () => true,
        () => false,
      );
      if (!ok) failed++;
    }
    if (failed > 0) throw new Error(`${failed} orphaned pod(s) on deleted node ${name} could not be force-deleted`);
    this.#forgetMissing(name, false);
  }

  #forgetMissing(name: string, inCache: boolean): void {
    this.#missingSince.delete(name);
    if (!inCache) this.#seen.delete(name);
  }

  // ---------------------------------------------------------------------------------------------
  // The force delete, metrics, events and logs.
  // ---------------------------------------------------------------------------------------------

  /**
   * Force-deletes `pod` if `qualifies(live)` still holds on the pod read from the API: marked
   * `Failed` (unless terminal), then deleted with grace 0. Only an orphan's `Failed` patch carries
   * the `DisruptionTarget`/`DeletionByPodGC` condition, as upstream's `gcOrphaned` is the only pass
   * that passes one to `markFailedAndDeletePodWithCondition`. Records metrics, events, logs.
   * @throws the write error (after counting it), so the work queue retries with backoff.
   */
  async #forceDelete(pod: Pod, reason: PodGCForceDeleteReason, qualifies: (live: Pod) => Promise<boolean>): Promise<void> {
    const { metrics, log } = this.#d;
    const labels = { namespace: pod.namespace, reason };
    const why = FORCE_DELETE_WHY[reason];
    let result: ForceDeleteResult;
    try {
      result = await this.#d.writes.forceDeletePod(
        pod.namespace,
        pod.name,
        pod.uid,
        async (live) => {
          if (isOnlyWaitingForFinalizers(live) || !(await qualifies(live))) return undefined;
          log.info({ pod: podKey(live), node: live.nodeName, reason }, 'PodGC is force deleting Pod');
          // Upstream: gcOrphaned calls markFailedAndDeletePodWithCondition with its condition; the
          // other passes call markFailedAndDeletePod (no condition). Issue 53: no condition of ours.
          return reason === 'orphaned' ? { condition: orphanCondition(live.conditions, this.#d.clock.now()), why } : { why };
        },
        () => this.#stillForceDeletes(podKey(pod), pod.uid, pod.nodeName, reason),
      );
    } catch (err) {
      if (isNotCalledFor(err)) {
        // Decided again when its turn came and no longer called for: not an attempt, not retried;
        // the next sweep or event queues the pod again if it qualifies then.
        log.info({ pod: podKey(pod), node: pod.nodeName, reason, why: err.reason }, 'Force delete not sent: no longer called for when its turn came');
        return;
      }
      // A failed live read (of the pod, or of the node in the re-check) wrote nothing: not an attempt.
      if (noteLiveReadFailure(err, metrics.liveReadFailuresTotal, log, 'force-deleting')) throw err;
      if (!isFenced(err)) {
        metrics.forceDeletePodsTotal.inc(labels);
        metrics.forceDeletePodErrorsTotal.inc(labels);
      }
      log.warn({ pod: podKey(pod), node: pod.nodeName, reason, err: describeError(err) }, 'Force delete failed; retrying');
      throw err;
    }
    if (result !== 'deleted') return;
    metrics.forceDeletePodsTotal.inc(labels);
    if (reason === 'out-of-service' || reason === 'orphaned') this.#recordEvents(pod, reason);
    else if (reason === 'unscheduled') {
      this.#d.events.record(
        { kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid },
        'Warning',
        POD_GC_EVENT_REASONS.podUnscheduled,
        `PodGC force-deleted pod ${pod.namespace}/${pod.name} (grace period 0): it is terminating and was never scheduled to a node`,
      );
    }
    // Terminated pods get no Event: thousands may go in one pass, and upstream records none.
    this.#d.log.info({ pod: podKey(pod), node: pod.nodeName, reason }, 'PodGC force-deleted pod');
  }

  /**
   * A force delete decided again, from the caches, right before each of its writes (the Failed
   * patch, the DELETE) is sent (src/kube/throttle.ts `WriteRecheck`, issue 53 item 4): the
   * controller runs and sees the cluster, the pod (same UID) is cached and still qualifies for
   * `reason` — terminated; terminating and never scheduled; terminating on a node that is still out
   * of service; bound to a node still absent from the node cache. The live reads before the writes
   * stay the decision that counts; this only withholds a write whose wait for its turn outlived
   * it. Deliberate difference from upstream (which sends on the decision taken before the client's
   * rate-limiter wait): it can only withhold or delay a force delete.
   * @returns why the force delete is no longer called for, or `undefined`.
   */
  #stillForceDeletes(key: string, uid: string, nodeName: string, reason: PodGCForceDeleteReason): string | undefined {
    if (this.#stopped) return 'the controller stopped';
    if (!this.#d.canSeeCluster()) return 'the controller cannot see the cluster';
    const pod = this.#d.caches.pods.get(key);
    if (!pod || pod.uid !== uid) return 'the pod is gone from the cache';
    switch (reason) {
      case 'terminated':
        // Issue 53: not only still terminated, but still among the oldest terminated pods beyond
        // --terminated-pod-gc-threshold in the current cache. Without it, a deletion held back by
        // write faults went out after other terminated pods had gone and the count was at the
        // threshold (fuzz seed 20271208 run 517): upstream's gcTerminated recounts every pass and
        // never retries a failed delete, so it deletes none. Can only withhold a deletion.
        if (!isPodTerminatedForGC(pod)) return 'the pod is no longer terminated';
        return this.#stillBeyondThreshold(pod) ? undefined : 'the pod is no longer among the oldest terminated pods beyond the threshold';
      case 'unscheduled':
        return pod.deletionTimestamp !== undefined && pod.nodeName === '' ? undefined : 'the pod is scheduled or no longer terminating';
      case 'out-of-service': {
        const node = this.#d.caches.nodes.get(pod.nodeName);
        return pod.deletionTimestamp !== undefined && node !== undefined && pod.nodeName === node.name && isNodeOutOfService(node)
          ? undefined
          : 'the pod is no longer terminating on an out-of-service node';
      }
      case 'orphaned':
        return pod.nodeName === nodeName && this.#d.caches.nodes.get(nodeName) === undefined ? undefined : `node ${nodeName} is back in the cache, or the pod moved`;
    }
  }

  #recordEvents(pod: Pod, reason: 'out-of-service' | 'orphaned'): void {
    const ref = `${pod.namespace}/${pod.name}`;
    const why = reason === 'orphaned' ? `node ${pod.nodeName} no longer exists` : `node ${pod.nodeName} is out of service (${TAINT_TEXT})`;
    this.#d.events.record(
      { kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid },
      'Warning',
      reason === 'orphaned' ? POD_GC_EVENT_REASONS.podOrphan : POD_GC_EVENT_REASONS.podOutOfService,
      `PodGC force-deleted pod ${ref} (grace period 0, marked Failed): ${why}`,
    );
    const nodeUid = this.#d.caches.nodes.get(pod.nodeName)?.uid ?? this.#seen.get(pod.nodeName) ?? '';
    this.#d.events.record(
      { kind: 'Node', name: pod.nodeName, uid: nodeUid },
      'Warning',
      reason === 'orphaned' ? POD_GC_EVENT_REASONS.nodeOrphan : POD_GC_EVENT_REASONS.nodeOutOfService,
      `PodGC force-deleted ${reason === 'orphaned' ? 'orphaned' : 'terminating'} pod ${ref}: ${why}`,
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Introspection.
  // ---------------------------------------------------------------------------------------------

  /** A snapshot for `/debug/state`. Times are epoch ms. */
  view(): PodGCView {
    const q = this.#d.config.orphanQuarantineMs;
    return {
      missingNodes: [...this.#missingSince.entries()].map(([node, since]) => ({ node, missingSince: since, quarantineEndsAt: since + q })),
      queuedPods: this.#podQueue.len,
      queuedNodes: this.#orphanQueue.len + this.#orphanQueue.stats().delayed,
      queuedTerminated: this.#terminatedQueue.len,
      queuedUnscheduled: this.#unscheduledQueue.len,
      trackedNodes: new Set([...this.#seen.keys(), ...this.#missingSince.keys()]).size,
    };
  }
}
