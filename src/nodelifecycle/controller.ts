/**
 * The node lifecycle controller: the thin I/O shell around the pure health, taint and zone logic.
 *
 * Mirrors upstream `pkg/controller/nodelifecycle/node_lifecycle_controller.go` (`Controller`,
 * `Run`, `monitorNodeHealth`, `doNoScheduleTaintingPass`, `doNoExecuteTaintingPass`,
 * `doEvictionPass` [1.20], `processTaintBaseEviction`, `processNoTaintBaseEviction` [1.20],
 * `handleDisruption`, `processPod`, `reconcileNodeLabels`).
 *
 * Data flow: informer handlers only enqueue node names or pod keys (level-based); workers re-read
 * the caches, call the pure functions in health.ts / taints.ts / zones.ts, and hand writes to
 * {@link NodeLifecycleWriter}. Everything time-related goes through the injected {@link Clock}.
 *
 * Deliberate differences from upstream (each is also commented where it happens):
 * 1. Heartbeats are observed when the Node or Lease update arrives, not at the next 5 s monitor
 *    pass, and each node gets a timer at its exact probe deadline. Ready=Unknown therefore lands
 *    within grace + ~1 s of the last heartbeat instead of grace + up to one monitor period.
 * 2. A node is queued for NoExecute tainting in the same step that marks it Unknown/NotReady
 *    (upstream waits for the next pass because it decides on the pre-update "observed" condition).
 * 3. For the tainting gate only, a Ready node that has been silent for more than half its grace
 *    period counts as not Ready when zone states are computed. Nodes that die together are detected
 *    up to one heartbeat interval apart; without this the first of them would be tainted before the
 *    zone is seen to be disrupted. Per zone the stricter of the two counts (lower rate) is used, so
 *    it can only pause or slow tainting, never restart it (a small PartialDisruption zone must not
 *    become FullDisruption at full rate). Zone metrics keep upstream's meaning (real Ready conditions).
 * 4. Zone pauses (rate 0 or the secondary rate, and the all-zones stop) are explained with Warning
 *    events, log lines and the `node_collector_zone_eviction_paused` gauge.
 * 5. While the controller cannot see the cluster (node or lease informer not synced), it judges no
 *    node; when sight returns, every node gets a fresh full grace period. An API outage is never
 *    mistaken for dead nodes.
 * 6. Existing NoExecute taints are never re-stamped: on first sight (a restart) upstream strips them
 *    and re-adds them with a new `timeAdded`; we keep them, so a restart neither delays nor hastens
 *    eviction (upstream #108268).
 * 7. Pods are marked NotReady level-based (every monitor pass, every pod of a not-Ready node), except
 *    during the all-zones stop and one grace period after it, when pod readiness is left alone
 *    (issue 14; kubernetes #125618, #112733, #135205, #77864, #125824).
 * 8. `NodeControllerLeaseCircuitBreaker` (1.37, kubernetes #138698): the live Lease read is made
 *    only for an expired node that is about to be acted on (marked Unknown, queued for or swapped to
 *    a NoExecute taint, legacy eviction), not for every expired node on every pass; see
 *    {@link NodeLifecycleController.leaseChanged} and `#liveLeaseAllows`.
 * docs/node-lifecycle.md lists every difference and whether it can only delay or reduce an action.
 */
import type { Lease, Node, NodeCondition, Pod, Taint } from '../kube/objects.js';
import { getCondition, podKey } from '../kube/objects.js';
import type { Logger } from '../log/logger.js';
import type { EventObjectRef, EventSink, ReadStore } from '../kube/types.js';
import { WorkQueue } from '../kube/workqueue.js';
import { describeError } from '../kube/client.js';
import type { NodeCollectorMetrics } from '../metrics/registry.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import { DeadlineScheduler } from '../util/scheduler.js';
import {
  isReadyToNotReadyTransition,
  nextProbeDeadline,
  nodeNotReadyEvent,
  observeNodeHealth,
  podNeedsNotReadyMark,
  podNeedsNotReadyOnNode,
  podNodeNotReadyEvent,
  registeredNodeEvent,
  removingNodeEvent,
  savedReadyCondition,
  EVENT_POD_MARKING_HELD,
  type NodeHealth,
  type NodeHealthObservation,
  type NodeLifecycleEvent,
} from './health.js';
import { SwappableTokenBucket } from './ratelimit.js';
import {
  conditionTaintDiff,
  NODE_READY,
  NOT_READY_TAINT_TEMPLATE,
  taintExists,
  UNREACHABLE_TAINT_TEMPLATE,
} from './taints.js';
import { RateLimitedTimedQueue, type TimedValue, type TryResult } from './timedqueue.js';
import { LeaseCacheConsistency, liveLeaseVerdict } from './leasecheck.js';
import type { NodeLifecycleWriter, WriteResult } from './writer.js';
import {
  computeZoneState,
  formatZoneKey,
  getZoneKey,
  isExcludedFromDisruption,
  planDisruption,
  stricterZoneStatuses,
  type DisruptionPause,
  type ZoneState,
} from './zones.js';

/** Configuration, with upstream's flag semantics. Durations in **milliseconds**, rates in nodes per **second**. */
export interface NodeLifecycleConfig {
  nodeMonitorPeriodMs: number;
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  largeClusterSizeThreshold: number;
  unhealthyZoneThreshold: number;
  /** true: taint-based eviction (NoExecute taints); false: 1.20's legacy direct pod eviction. */
  enableTaintManager: boolean;
  /** Legacy mode only: how long a node may be NotReady/Unknown before its pods are deleted. */
  podEvictionTimeoutMs: number;
}

/** The informer caches the controller reads. Lease keys are `kube-node-lease/<node>`; pod keys `ns/name`. */
export interface NodeLifecycleCaches {
  nodes: ReadStore<Node>;
  leases: ReadStore<Lease>;
  pods: ReadStore<Pod> & { podsOnNode(nodeName: string): readonly Pod[] };
  /**
   * DaemonSets, for legacy eviction, which never deletes a DaemonSet pod. `has`: a DaemonSet exists
   * by `ns/name` (a pod whose controller owner reference names an existing DaemonSet is skipped).
   * `selectsPod`: 1.20's `GetPodDaemonSets` — some DaemonSet in the pod's namespace has a non-empty
   * selector matching the pod's labels, whatever its owner references (see
   * `podSelectedByDaemonSet` in daemonsets.ts); when absent only `has` is used.
   */
  daemonSets: { has(key: string): boolean; selectsPod?(pod: Pod): boolean };
}

/** The writes the controller makes (implemented by {@link NodeLifecycleWriter}). */
export type NodeLifecycleWrites = Pick<
  NodeLifecycleWriter,
  'swapNodeTaints' | 'updateNodeConditions' | 'markPodNotReady' | 'evictPodLegacy' | 'patchNodeLabels' | 'forgetNode'
>;

/** Everything the controller needs, injected. */
export interface NodeLifecycleDeps {
  config: NodeLifecycleConfig;
  clock: Clock;
  log: Logger;
  caches: NodeLifecycleCaches;
  writes: NodeLifecycleWrites;
  events: EventSink;
  metrics: NodeCollectorMetrics;
  /** True while the node and lease caches reflect the cluster (synced, watches connected). */
  canSeeCluster: () => boolean;
  /**
   * `NodeControllerLeaseCircuitBreaker` (default on, as in 1.37): before an expired node is acted
   * on, its Lease is read live; absent when the gate is off (1.36 behaviour: the cache decides).
   */
  leaseCircuitBreaker?: LeaseCircuitBreakerIO;
}

/** The I/O of the Lease circuit breaker (src/cli/run.ts wires the API and the Lease informer). */
export interface LeaseCircuitBreakerIO {
  /**
   * Quorum GET of `kube-node-lease/<nodeName>`.
   * @returns the Lease's resourceVersion, or `undefined` only when the API answers 404.
   * @throws for any other answer (an API or network error, an unparsable object): the node is not
   *   acted on now and is retried (fail closed).
   */
  readLease(nodeName: string): Promise<{ resourceVersion: string } | undefined>;
  /** The Lease informer's resourceVersion (last list, event or bookmark applied); `""` while relisting. */
  cacheResourceVersion(): string;
}

/** One zone as the `status` command and `/debug/state` show it. Times are epoch ms. */
export interface ZoneView {
  zone: string;
  zoneLabel: string;
  state: ZoneState;
  size: number;
  unhealthy: number;
  /** Current tainting (or legacy eviction) rate, nodes per second. */
  rate: number;
  queueLength: number;
  /** Next node due and the earliest time it can be processed. */
  next?: { node: string; processAt: number };
  pausedReason?: string;
}

/** Read-only view of the controller, for `/debug/state`, `status` and `explain`. */
export interface NodeLifecycleView {
  allZonesDisrupted: boolean;
  canSeeCluster: boolean;
  zones: ZoneView[];
  nodes: {
    name: string;
    zone: string;
    ready?: string;
    probeTimestamp?: number;
    probeDeadline?: number;
    queued: boolean;
  }[];
}

/** One node's observation, shared by the synchronous and the queued paths. */
interface Observed {
  name: string;
  node: Node;
  lease: Lease | undefined;
  obs: NodeHealthObservation;
}

const EVENT_SOURCE_TAINT_PASS_MS = 100; // upstream scheduler.NodeEvictionPeriod
const RETRY_WAIT_MS = 50; // upstream retries a failed taint swap "after 0"; 50 ms avoids a hot loop
const NODE_WORKERS = 8; // upstream nodeUpdateWorkerSize
// Upstream podUpdateWorkerSize is 4, but its pod workers only handle pod updates; ours also mark a
// failed node's pods NotReady (deliberate difference 11), which needs as many writes in flight as
// the --kube-api-qps budget allows at the API server's latency.
const POD_WORKERS = 32;
/**
 * NoExecute taint writes in flight per zone (deliberate difference 12). Upstream writes them one
 * after another, so a wave of N dead nodes is tainted at one API round trip per node even when the
 * zone's rate allows more; the token bucket still decides when each node's turn comes.
 */
const TAINT_WRITES_IN_FLIGHT = 16;
const LABEL_RECONCILE: readonly [primary: string, secondary: string][] = [
  ['kubernetes.io/os', 'beta.kubernetes.io/os'],
  ['kubernetes.io/arch', 'beta.kubernetes.io/arch'],
];

/**
 * The node lifecycle controller. Construct, then {@link start} once the caches have synced; feed it
 * informer events through {@link nodeChanged}, {@link nodeDeleted}, {@link leaseChanged} and
 * {@link podChanged}. {@link stop} shuts every loop down.
 * Mirrors upstream `nodelifecycle.Controller`.
 */
export class NodeLifecycleController {
  readonly #d: NodeLifecycleDeps;
  readonly #cfg: NodeLifecycleConfig;
  readonly #health = new Map<string, NodeHealth>();
  readonly #known = new Map<string, { uid: string; zone: string }>();
  readonly #zoneStates = new Map<string, ZoneState>();
  readonly #zoneQueues = new Map<string, RateLimitedTimedQueue>();
  readonly #zoneSizes = new Map<string, { size: number; unhealthy: number }>();
  readonly #pausedReasons = new Map<string, string>();
  /** Last Ready status each node was judged with, to notice flips that change zone states. */
  readonly #lastReady = new Map<string, string | undefined>();
  /** Nodes the health queue is processing now (the monitor pass defers to it). */
  readonly #inFlight = new Set<string>();
  /** Per node, monitor passes waiting for its next health sync to finish (see #awaitHealthSyncs). */
  readonly #healthWaiters = new Map<string, (() => void)[]>();
  /** Not-Ready nodes whose held pod readiness was explained with an Event in the current all-zones stop. */
  readonly #podMarkingHeldExplained = new Set<string>();
  /**
   * Legacy mode: nodes whose pods were evicted by the zone queue and that have not been Ready since
   * (1.20's `nodeEvictionMap` state `evicted`); pods that land on them are deleted at once.
   */
  readonly #evicted = new Set<string>();
  /**
   * Epoch ms before which no pod is marked NotReady (or, in legacy mode, deleted) after the
   * all-zones stop ended: the full grace period every node gets on the way out (see #resyncPodReadiness).
   */
  #podMarkingResumesAt = 0;
  /** The controller-wide hold after a live Lease read found the Lease cache behind (upstream `consistencyStore`). */
  readonly #leaseConsistency = new LeaseCacheConsistency();
  /** The hold was logged (once per hold). */
  #leaseHoldLogged = false;
  /** Nodes whose NoSchedule pass waits for their running health sync (see #doNoScheduleTaintingPass). */
  readonly #noScheduleAfterHealth = new Set<string>();
  readonly #healthOpts: { nodeMonitorGracePeriodMs: number; nodeStartupGracePeriodMs: number };
  readonly #deadlines: DeadlineScheduler<string>;
  readonly #healthQueue: WorkQueue;
  readonly #noScheduleQueue: WorkQueue;
  readonly #podQueue: WorkQueue;
  #monitorTimer: TimerHandle | undefined;
  #taintTimer: TimerHandle | undefined;
  #taintPassRunning = false;
  #taintPassAgain = false;
  #sawCluster = true;
  #stopped = true;
  #monitorRunning: Promise<void> | undefined;

  /** @param deps injected caches, writer, events, metrics, clock and logger. Never throws. */
  constructor(deps: NodeLifecycleDeps) {
    this.#d = deps;
    this.#cfg = deps.config;
    this.#healthOpts = { nodeMonitorGracePeriodMs: deps.config.nodeMonitorGracePeriodMs, nodeStartupGracePeriodMs: deps.config.nodeStartupGracePeriodMs };
    const { clock, log } = deps;
    this.#deadlines = new DeadlineScheduler<string>(clock, {
      onError: (err, e) => log.error({ node: e.key, err: describeError(err) }, 'probe deadline handler failed'),
    });
    this.#deadlines.onDue((e) => this.#healthQueue.add(e.key));
    this.#healthQueue = new WorkQueue({
      name: 'node_lifecycle_controller_health',
      concurrency: NODE_WORKERS,
      clock,
      log,
      sync: (name) => this.#syncNodeHealth(name),
    });
    this.#noScheduleQueue = new WorkQueue({
      name: 'node_lifecycle_controller',
      concurrency: NODE_WORKERS,
      clock,
      log,
      sync: (name) => this.#doNoScheduleTaintingPass(name),
    });
    this.#podQueue = new WorkQueue({
      name: 'node_lifecycle_controller_pods',
      concurrency: POD_WORKERS,
      clock,
      log,
      sync: (key) => this.#processPod(key),
    });
  }

  /**
   * Starts the monitor loop (every `nodeMonitorPeriodMs`), the tainting/eviction pass (every
   * 100 ms) and the workers, and queues every cached node once. Call after the caches synced.
   */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#sawCluster = this.#d.canSeeCluster();
    for (const n of this.#d.caches.nodes.list()) {
      this.#noScheduleQueue.add(n.name);
    }
    this.#scheduleMonitor(0);
    this.#scheduleTaintPass(EVENT_SOURCE_TAINT_PASS_MS);
  }

  /** Stops every loop and worker; in-flight writes finish. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#monitorTimer?.cancel();
    this.#taintTimer?.cancel();
    this.#deadlines.clear();
    // A monitor pass waiting for health syncs that shutDown drops must not hold stop() up.
    for (const name of [...this.#healthWaiters.keys()]) this.#resolveHealthWaiters(name);
    await Promise.all([this.#healthQueue.shutDown(), this.#noScheduleQueue.shutDown(), this.#podQueue.shutDown()]);
    await this.#monitorRunning;
  }

  // ---------------------------------------------------------------------------------------------
  // Informer handlers: enqueue only.
  // ---------------------------------------------------------------------------------------------

  /** A Node was added or updated (upstream enqueues every update, unfiltered). */
  nodeChanged(name: string): void {
    if (this.#stopped) return;
    this.#noScheduleQueue.add(name);
    this.#monitorOne(name);
  }

  /** A Node was deleted. */
  nodeDeleted(name: string): void {
    this.#deadlines.cancel(name);
    this.#evicted.delete(name); // 1.20: nodeEvictionMap.unregister
    this.#d.writes.forgetNode(name);
    if (!this.#stopped) this.#scheduleMonitor(0);
  }

  /** A Lease in `kube-node-lease` was added or updated: a possible heartbeat. */
  leaseChanged(nodeName: string): void {
    if (this.#stopped) return;
    // While the Lease cache is known to be behind, the informer calls us before it records the
    // event's resourceVersion; observe once that is done, or the event that ends the hold is lost.
    if (this.#leaseConsistency.awaited !== undefined) {
      queueMicrotask(() => void this.#monitorOne(nodeName));
      return;
    }
    // Lease renewals arrive at kubelet rate (100/s at 1,000 nodes): observe them synchronously and
    // queue only the rare node that needs an API call.
    this.#monitorOne(nodeName);
  }

  /**
   * A pod was added or updated. Mirrors `podUpdated`: only pods that are newly bound or moved to
   * another node are processed (pods on nodes that turn not-Ready are handled by the node's pass).
   */
  podChanged(pod: Pod, old?: Pod): void {
    if (this.#stopped || pod.nodeName === '') return;
    if (old && old.nodeName === pod.nodeName) return;
    this.#podQueue.add(podKey(pod));
  }

  // ---------------------------------------------------------------------------------------------
  // Health: monitor pass + per-node processing.
  // ---------------------------------------------------------------------------------------------

  #scheduleMonitor(delayMs: number): void {
    this.#monitorTimer?.cancel();
    this.#monitorTimer = this.#d.clock.setTimeout(() => {
      this.#monitorRunning = this.monitorNodeHealth()
        .catch((err: unknown) => this.#d.log.error({ err: describeError(err) }, 'monitorNodeHealth failed'))
        .finally(() => {
          // Sliding period, like wait.UntilWithContext.
          if (!this.#stopped) this.#scheduleMonitor(this.#cfg.nodeMonitorPeriodMs);
        });
    }, delayMs);
  }

  /**
   * One full pass over every cached node: registration and removal events, health of every node,
   * then zone states. Mirrors `monitorNodeHealth`. Errors per node are logged, never thrown.
   */
  async monitorNodeHealth(): Promise<void> {
    if (this.#stopped) return;
    const startMs = this.#d.clock.now();
    const endTimer = this.#d.metrics.updateAllNodesHealthDuration.startTimer();
    try {
      if (!this.#checkSight()) return;
      const nodes = this.#d.caches.nodes.list();
      const present = new Set<string>();
      for (const node of nodes) {
        present.add(node.name);
        this.#ensureRegistered(node);
      }
      for (const [name, info] of this.#known) {
        if (present.has(name)) continue;
        this.#evicted.delete(name);
        this.#known.delete(name);
        this.#health.delete(name);
        this.#lastReady.delete(name);
        this.#deadlines.cancel(name);
        this.#zoneQueues.get(info.zone)?.remove(name);
        this.#emit({ kind: 'Node', name, uid: info.uid }, removingNodeEvent(name));
        this.#d.log.info({ node: name, zone: formatZoneKey(info.zone) }, 'Removing node from controller');
      }
      const syncs: Promise<void>[] = [];
      for (const node of nodes) if (this.#monitorOne(node.name)) syncs.push(this.#nextHealthSync(node.name));
      await this.#awaitHealthSyncs(syncs);
      this.#handleDisruption();
      // Like upstream's short-circuited pass, no pod is marked while the Lease cache is behind.
      if (!this.#leaseCacheBehind()) this.#resyncPodReadiness();
    } finally {
      endTimer();
      this.#d.log.debug({ ms: this.#d.clock.now() - startMs }, 'monitor pass done');
    }
  }

  /**
   * Sight gate (deliberate difference 5): returns false while the caches cannot be trusted; on the
   * pass where sight returns, every node's probe timestamp is reset so none is judged on the gap.
   */
  #checkSight(): boolean {
    const sees = this.#d.canSeeCluster();
    if (sees && !this.#sawCluster) {
      const now = this.#d.clock.now();
      for (const [name, h] of this.#health) this.#health.set(name, { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
      this.#d.log.warn({ nodes: this.#health.size }, 'API server visible again: every node gets a full grace period from now');
    } else if (!sees && this.#sawCluster) {
      this.#d.log.warn({}, 'Lost sight of the API server: no node will be judged until the caches are synced again');
    }
    this.#sawCluster = sees;
    return sees;
  }

  #ensureRegistered(node: Node): void {
    if (this.#known.has(node.name)) return;
    const zone = getZoneKey(node.labels);
    this.#known.set(node.name, { uid: node.uid, zone });
    this.#ensureZone(zone);
    this.#emit({ kind: 'Node', name: node.name, uid: node.uid }, registeredNodeEvent(node.name));
    this.#d.log.info({ node: node.name, zone: formatZoneKey(zone) }, 'Registered node in controller');
  }

  /** Mirrors `addPodEvictorForNewZone`: a new zone starts Initial with a full-rate queue. */
  #ensureZone(zone: string): RateLimitedTimedQueue {
    let q = this.#zoneQueues.get(zone);
    if (!q) {
      q = new RateLimitedTimedQueue(this.#d.clock, new SwappableTokenBucket(this.#d.clock, this.#cfg.nodeEvictionRate));
      this.#zoneQueues.set(zone, q);
      this.#d.metrics.evictionsTotal.inc({ zone }, 0);
      this.#d.metrics.zoneTaintingRate.set({ zone }, this.#cfg.nodeEvictionRate);
    }
    if (!this.#zoneStates.has(zone)) this.#zoneStates.set(zone, 'Initial');
    return q;
  }

  /**
   * Reads a node's caches and runs the pure health observation, persisting the record. Returns
   * undefined when the node is gone or the controller cannot see the cluster. Synchronous and
   * idempotent: observing again without a new heartbeat yields the same decision.
   */
  #observe(name: string): Observed | undefined {
    if (this.#stopped) return undefined;
    const node = this.#d.caches.nodes.get(name);
    if (!node) return undefined;
    if (!this.#checkSight()) return undefined;
    if (this.#leaseCacheBehind()) return undefined;
    this.#ensureRegistered(node);
    const lease = this.#d.caches.leases.get(`kube-node-lease/${name}`);
    const obs = observeNodeHealth(this.#health.get(name), node, lease, this.#d.clock.now(), this.#healthOpts);
    this.#health.set(name, obs.health);
    return { name, node, lease, obs };
  }

  /**
   * Upstream `consistencyStore.EnsureReady` at the top of `tryUpdateNodeHealth`: true while a live
   * Lease read has shown the Lease cache to be behind and the informer has not caught up yet; then
   * no node is judged. Logs the start and the end of each hold.
   */
  #leaseCacheBehind(): boolean {
    const io = this.#d.leaseCircuitBreaker;
    if (!io || this.#leaseConsistency.awaited === undefined) return false;
    const behind = this.#leaseConsistency.ensureReady(io.cacheResourceVersion());
    if (behind && !this.#leaseHoldLogged) {
      this.#leaseHoldLogged = true;
      this.#d.log.warn(behind, 'The Lease cache is behind the API server: no node is judged until it catches up');
    } else if (!behind && this.#leaseHoldLogged) {
      this.#leaseHoldLogged = false;
      this.#d.log.info({}, 'The Lease cache caught up: judging nodes again');
    }
    return behind !== undefined;
  }

  /**
   * Whether `o` is an expired node the controller is about to act on, so that the Lease circuit
   * breaker must read its Lease live first: a status write (Unknown), or, on a not-Ready node, a
   * NoExecute taint to queue or swap (taint mode) or pods past `--pod-eviction-timeout` (legacy).
   * Deliberate difference 8 (docs/node-lifecycle.md): upstream reads the Lease of every expired
   * node on every pass, also when nothing would follow.
   */
  #needsLiveLeaseCheck(o: Observed): boolean {
    if (!this.#d.leaseCircuitBreaker || !o.obs.expired) return false;
    if (o.obs.needsStatusUpdate) return true;
    const ready = o.obs.currentReady;
    if (!ready || ready.status === 'True') return false; // a Ready node only loses taints
    if (!this.#cfg.enableTaintManager) {
      const h = this.#health.get(o.name);
      return h !== undefined && this.#pastPodEvictionTimeout(h, ready.status);
    }
    const want = ready.status === 'False' ? NOT_READY_TAINT_TEMPLATE : UNREACHABLE_TAINT_TEMPLATE;
    const opposite = ready.status === 'False' ? UNREACHABLE_TAINT_TEMPLATE : NOT_READY_TAINT_TEMPLATE;
    if (taintExists(o.node.taints, opposite)) return true;
    if (taintExists(o.node.taints, want)) return false;
    return !(this.#zoneQueues.get(getZoneKey(o.node.labels))?.isPending(o.name) ?? false);
  }

  /**
   * The live read of `NodeControllerLeaseCircuitBreaker` for an expired node (upstream
   * `tryUpdateNodeHealth`): a 404 or the resourceVersion saved with the node's last seen renewal
   * lets the controller act; any other resourceVersion starts the controller-wide hold
   * ({@link #leaseCacheBehind}) and nothing is done for this node now.
   * @returns true when the node may be acted on.
   * @throws the read's error for any other failure (fail closed: the health queue retries with
   *   backoff; upstream skips the node until its next pass).
   */
  async #liveLeaseAllows(o: Observed): Promise<boolean> {
    const io = this.#d.leaseCircuitBreaker;
    if (!io) return true;
    const saved = o.obs.health.lease?.resourceVersion;
    let live: { resourceVersion: string } | undefined;
    try {
      live = await io.readLease(o.name);
    } catch (err) {
      this.#d.log.warn({ node: o.name, err: describeError(err) }, 'Live read of the node Lease failed: not acting on the node now; retrying');
      throw err;
    }
    const verdict = liveLeaseVerdict(saved, live);
    if (verdict.act) return true;
    this.#leaseConsistency.wroteAt(verdict.liveResourceVersion);
    this.#d.log.warn(
      { node: o.name, cachedResourceVersion: saved ?? '', liveResourceVersion: verdict.liveResourceVersion },
      'The node Lease changed on the API server since the cache saw it renew: not marking the node unhealthy',
    );
    return false;
  }

  /** After an observation (and any status write): re-arm the deadline and recompute zones on a Ready flip. */
  #afterObservation(o: Observed): void {
    this.#scheduleDeadline(o.name, o.node.uid, o.obs.gracePeriodMs);
    const readyStatus = o.obs.currentReady?.status;
    const seenBefore = this.#lastReady.has(o.name);
    if (!seenBefore || this.#lastReady.get(o.name) !== readyStatus) {
      this.#lastReady.set(o.name, readyStatus);
      // A Ready flip may change its zone's state: recompute before any tainting decision. A first
      // sight is not a flip; the monitor pass computes zones once after all first sights (O(n), not O(n²)).
      if (seenBefore) this.#handleDisruption();
    }
  }

  /**
   * The monitor pass's per-node step, synchronous. A node that needs no API call (the steady
   * state of a healthy cluster) is handled here, without the work queue; one that needs a write is
   * handed to the health queue, which observes it again (idempotent) and acts. This keeps a pass
   * over 5,000 healthy nodes free of per-node promise and queue overhead.
   */
  #monitorOne(name: string): boolean {
    if (this.#inFlight.has(name)) {
      this.#healthQueue.add(name);
      return true;
    }
    const endTimer = this.#d.metrics.updateNodeHealthDuration.startTimer();
    try {
      const o = this.#observe(name);
      if (!o) return false;
      if (o.obs.needsStatusUpdate || this.#needsLiveLeaseCheck(o)) {
        this.#healthQueue.add(name);
        return true;
      }
      this.#afterObservation(o);
      if (o.obs.currentReady && !this.#actSync(o, o.node, o.obs.currentReady)) {
        this.#healthQueue.add(name);
        return true;
      }
      return false;
    } finally {
      endTimer();
    }
  }

  /** Resolves when the next health sync of `name` (queued or running) has finished, or on stop. */
  #nextHealthSync(name: string): Promise<void> {
    return new Promise((resolve) => {
      const list = this.#healthWaiters.get(name);
      if (list) list.push(resolve);
      else this.#healthWaiters.set(name, [resolve]);
    });
  }

  #resolveHealthWaiters(name: string): void {
    const list = this.#healthWaiters.get(name);
    if (!list) return;
    this.#healthWaiters.delete(name);
    for (const resolve of list) resolve();
  }

  /**
   * The monitor pass waits for the health syncs it queued, as upstream's pass waits for each node's
   * update, so that zone states are computed on this pass's writes. It waits for those syncs only,
   * not for the health queue to idle (issue 14 item 7: Lease events keep a busy queue from ever
   * idling, which starved the pass, its zone states and its pod resync), and at most one monitor
   * period (a status write that hangs must not stop the passes; zone states are recomputed on every
   * Ready flip anyway).
   */
  async #awaitHealthSyncs(syncs: readonly Promise<void>[]): Promise<void> {
    if (syncs.length === 0) return;
    let timer: TimerHandle | undefined;
    const bound = new Promise<void>((resolve) => (timer = this.#d.clock.setTimeout(resolve, this.#cfg.nodeMonitorPeriodMs)));
    try {
      await Promise.race([Promise.all(syncs), bound]);
    } finally {
      timer?.cancel();
    }
  }

  /** The per-node body of `monitorNodeHealth` (`updateNodeFunc` + `tryUpdateNodeHealth`), run by the health queue. */
  async #syncNodeHealth(name: string): Promise<void> {
    this.#inFlight.add(name);
    try {
      await this.#syncNodeHealthLocked(name);
    } finally {
      this.#inFlight.delete(name);
      this.#resolveHealthWaiters(name);
      if (this.#noScheduleAfterHealth.delete(name)) this.#noScheduleQueue.add(name);
    }
  }

  async #syncNodeHealthLocked(name: string): Promise<void> {
    let o = this.#observe(name);
    if (!o) return;
    if (this.#needsLiveLeaseCheck(o)) {
      if (!(await this.#liveLeaseAllows(o))) return;
      // The read took a round trip: decide again on the caches as they are now (a renewal seen
      // meanwhile ends the expiry), and act only on the Lease the read confirmed.
      const again = this.#observe(name);
      if (!again) return;
      if (this.#needsLiveLeaseCheck(again) && again.obs.health.lease?.resourceVersion !== o.obs.health.lease?.resourceVersion) return;
      o = again;
    }
    const { node, lease } = o;
    const endTimer = this.#d.metrics.updateNodeHealthDuration.startTimer();
    let current: Node = node;
    try {
      if (o.obs.needsStatusUpdate) {
        const before = o.obs.health;
        const { result, node: written } = await this.#d.writes.updateNodeConditions(name, node, (fresh) => {
          // After a conflict the node changed under us (maybe a heartbeat): decide again on it.
          if (fresh !== node) {
            o.obs = observeNodeHealth(before, fresh, lease, this.#d.clock.now(), this.#healthOpts);
            this.#health.set(name, o.obs.health);
          }
          return o.obs.needsStatusUpdate ? o.obs.unknownConditions : undefined;
        });
        if (result === 'gone') return;
        if (result === 'written' && o.obs.healthAfterStatusUpdate) {
          this.#health.set(name, o.obs.healthAfterStatusUpdate);
          this.#d.log.info({ node: name, zone: formatZoneKey(getZoneKey(node.labels)) }, 'Node stopped posting status: conditions set to Unknown');
        }
        if (written) current = written;
      }
    } catch (err) {
      // Upstream: "Update health of Node from Controller error, Skipping - no pods will be evicted".
      this.#d.log.warn({ node: name, err: describeError(err) }, 'updating node health failed; retrying');
      throw err; // the work queue retries with backoff
    } finally {
      endTimer();
    }
    this.#afterObservation(o);
    const currentReady = o.obs.currentReady;
    if (!currentReady) return;
    if (this.#actSync(o, current, currentReady)) return;
    if (this.#cfg.enableTaintManager) {
      await this.#processTaintBaseEviction(current, currentReady);
    } else {
      this.#processNoTaintBaseEviction(current, currentReady);
    }
    if (isReadyToNotReadyTransition(o.obs.observedReady, currentReady)) {
      this.#emit({ kind: 'Node', name, uid: node.uid }, nodeNotReadyEvent(name));
      this.#queuePodsNotReady(name);
    }
  }

  /**
   * Does the post-observation work when none of it needs an API call (no taint to swap or remove,
   * no pods to mark), and returns true; returns false, doing nothing, when an API call is needed.
   */
  #actSync(o: Observed, node: Node, ready: NodeCondition): boolean {
    if (isReadyToNotReadyTransition(o.obs.observedReady, ready)) return false;
    if (this.#cfg.enableTaintManager) {
      const zone = getZoneKey(node.labels);
      if (ready.status === 'False') {
        if (taintExists(node.taints, UNREACHABLE_TAINT_TEMPLATE)) return false;
        if (this.#markNodeForTainting(node, 'False', zone)) {
          this.#d.log.info({ node: node.name, zone: formatZoneKey(zone) }, 'Node is NotReady. Adding it to the Taint queue');
        }
      } else if (ready.status === 'Unknown') {
        if (taintExists(node.taints, NOT_READY_TAINT_TEMPLATE)) return false;
        if (this.#markNodeForTainting(node, 'Unknown', zone)) {
          this.#d.log.info({ node: node.name, zone: formatZoneKey(zone) }, 'Node is unresponsive. Adding it to the Taint queue');
        }
      } else if (ready.status === 'True') {
        if (taintExists(node.taints, UNREACHABLE_TAINT_TEMPLATE) || taintExists(node.taints, NOT_READY_TAINT_TEMPLATE)) return false;
        this.#zoneQueues.get(zone)?.remove(node.name);
      }
    } else {
      this.#processNoTaintBaseEviction(node, ready);
    }
    return true;
  }

  /** Arms one timer at the node's probe deadline (and, in legacy mode, its pod eviction deadline). */
  #scheduleDeadline(name: string, uid: string, gracePeriodMs: number): void {
    const h = this.#health.get(name);
    if (!h) return;
    const now = this.#d.clock.now();
    const ready = savedReadyCondition(h)?.status;
    let at = ready === 'Unknown' ? Infinity : nextProbeDeadline(h, gracePeriodMs);
    if (!this.#cfg.enableTaintManager && ready !== undefined && ready !== 'True') {
      const base = ready === 'False' ? h.readyTransitionTimestamp : h.probeTimestamp;
      at = Math.min(at, base + this.#cfg.podEvictionTimeoutMs + 1);
    }
    if (Number.isFinite(at) && at > now) {
      if (this.#deadlines.get(name)?.atMs !== at) this.#deadlines.schedule(name, uid, at, name);
    } else this.#deadlines.cancel(name);
  }

  /**
   * Mirrors the `MarkPodsNotReady` call of `monitorNodeHealth`, with deliberate difference 11: the
   * node's pods are handed to the pod queue (each re-checked by {@link #processPod}, retried on
   * failure with per-pod backoff) instead of being written inside the node's health sync. Upstream
   * holds its monitor loop (and we held a health worker) until all of a node's pods were patched,
   * so in a failure wave later nodes were marked Unknown and tainted seconds late; upstream's
   * per-node retry on the next pass (`nodesToRetry`) is replaced by the per-pod retry.
   */
  #queuePodsNotReady(nodeName: string): void {
    for (const p of this.#d.caches.pods.podsOnNode(nodeName)) {
      if (podNeedsNotReadyMark(p, nodeName)) this.#podQueue.add(podKey(p));
    }
  }

  async #markPodNotReady(pod: Pod, nodeName: string): Promise<WriteResult> {
    const result = await this.#d.writes.markPodNotReady(pod, nodeName);
    if (result === 'written') {
      this.#emit({ kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid }, podNodeNotReadyEvent());
      this.#d.log.info({ node: nodeName, pod: podKey(pod) }, 'Marked pod NotReady');
    }
    return result;
  }

  /**
   * Mirrors `processPod`: a pod bound to a node whose saved Ready condition is not True is marked
   * NotReady; in legacy mode, a pod on a node already evicted (1.20's `evicted` state) that is still
   * past its pod eviction timeout is deleted, as 1.20's `evictPods` does on every monitor pass.
   * Deliberate difference (issue 14, kubernetes #77864/#125824): nothing is done during the
   * all-zones stop; {@link #resyncPodReadiness} explains it and queues the pods again when it ends.
   */
  async #processPod(key: string): Promise<void> {
    const pod = this.#d.caches.pods.get(key);
    if (!pod || pod.nodeName === '') return;
    const health = this.#health.get(pod.nodeName);
    if (!health) return; // the node's first pass will handle it
    if (!this.#d.caches.nodes.get(pod.nodeName)) return;
    if (this.#podMarkingHeld()) return;
    const ready = savedReadyCondition(health)?.status;
    if (!this.#cfg.enableTaintManager && this.#evicted.has(pod.nodeName) && this.#pastPodEvictionTimeout(health, ready)) {
      await this.#evictPod(pod, pod.nodeName);
      return;
    }
    if (podNeedsNotReadyOnNode(health, pod)) await this.#markPodNotReady(pod, pod.nodeName);
  }

  /** True during the all-zones stop and the grace period after it (see {@link #resyncPodReadiness}). */
  #podMarkingHeld(): boolean {
    return this.#allZonesStopped() || this.#d.clock.now() < this.#podMarkingResumesAt;
  }

  /**
   * True while the all-zones stop holds: there are zones and every one is FullDisruption (no Ready
   * node anywhere). Mirrors the `allAreFullyDisrupted` state of `handleDisruption`.
   */
  #allZonesStopped(): boolean {
    if (this.#zoneStates.size === 0) return false;
    for (const state of this.#zoneStates.values()) if (state !== 'FullDisruption') return false;
    return true;
  }

  /**
   * Level-based NotReady marking, run on every monitor pass (and when the all-zones stop ends).
   * Deliberate difference (issue 14): upstream marks a node's pods only when its own pass turns a
   * Ready node not-Ready (plus a retry), so pods stay Ready forever on a node whose kubelet reports
   * Ready=False while renewing its Lease (kubernetes #125618), after a False→Unknown flip (#112733)
   * or after a restart in the middle of the marking (#135205). Here every pod on a node whose Ready
   * is not True is handed to the pod queue until it is Ready=False, whatever the transitions were.
   * During the all-zones stop (no Ready node anywhere: a control-plane or network partition) pod
   * readiness is left alone, where upstream marks every pod NotReady and every Service loses every
   * endpoint (#77864, #125824); a Warning event per node and `node_collector_pod_marking_held_nodes`
   * say so. When the stop ends every node gets a full grace period (upstream resets every probe
   * timestamp); the pods of nodes still not Ready after it are marked then, so a node whose
   * recovery we have not seen yet does not get its pods marked on the way out.
   */
  #resyncPodReadiness(): void {
    const stopped = this.#allZonesStopped();
    if (!stopped) this.#podMarkingHeldExplained.clear();
    const afterStop = !stopped && this.#d.clock.now() < this.#podMarkingResumesAt;
    let held = 0;
    for (const [name, info] of this.#known) {
      const ready = savedReadyCondition(this.#health.get(name))?.status;
      if (ready === undefined || ready === 'True' || !this.#d.caches.nodes.get(name)) continue;
      const pods = this.#d.caches.pods.podsOnNode(name).filter((p) => podNeedsNotReadyMark(p, name));
      if (pods.length === 0 || afterStop) continue;
      if (!stopped) {
        for (const p of pods) this.#podQueue.add(podKey(p));
        continue;
      }
      held++;
      if (this.#podMarkingHeldExplained.has(name)) continue;
      this.#podMarkingHeldExplained.add(name);
      this.#d.events.record(
        { kind: 'Node', name, uid: info.uid },
        'Warning',
        EVENT_POD_MARKING_HELD,
        `Node ${name} is ${ready === 'False' ? 'NotReady' : 'unreachable'}, but every zone is FullDisruption (no Ready node anywhere), ` +
          `which looks like a control-plane or network partition: its ${pods.length} pod(s) keep their Ready condition, so Services keep ` +
          `their endpoints, until some node is Ready again.`,
      );
      this.#d.log.warn({ node: name, pods: pods.length }, 'All zones are FullDisruption: leaving pod readiness alone');
    }
    this.#d.metrics.podMarkingHeldNodes.set(held);
  }

  // ---------------------------------------------------------------------------------------------
  // Condition taints (NoSchedule) and label reconciliation.
  // ---------------------------------------------------------------------------------------------

  /** Mirrors `doNoScheduleTaintingPass` + `reconcileNodeLabels`. Throws to request a retry. */
  async #doNoScheduleTaintingPass(name: string): Promise<void> {
    if (this.#inFlight.has(name)) {
      // Our own status write's watch event often arrives before its response. Wait for the
      // health sync: the NoExecute taint it queues carries the condition taints in the same
      // patch (deliberate difference 12), and would otherwise queue behind this one's write.
      this.#noScheduleAfterHealth.add(name);
      return;
    }
    const node = this.#d.caches.nodes.get(name);
    if (!node) return;
    const cachedDiff = conditionTaintDiff(node);
    if (cachedDiff.toAdd.length > 0 || cachedDiff.toRemove.length > 0) {
      // The diff is recomputed on the copy the patch starts from (our own last write's response
      // when the cache lags): a cache-based diff would re-add a taint that write already added,
      // re-stamping its timeAdded in a second, useless patch.
      let applied: { added: readonly Taint[]; removed: readonly Taint[] } = { added: [], removed: [] };
      const r = await this.#d.writes.swapNodeTaints(name, [], [], node, {
        conditionTaints: true,
        onConditionTaints: (added, removed) => (applied = { added, removed }),
      });
      if (r === 'written') {
        this.#d.log.info(
          { node: name, added: applied.added.map((t) => t.key), removed: applied.removed.map((t) => t.key) },
          'Updated NoSchedule condition taints',
        );
      }
    }
    const wanted = (n: Node): Record<string, string> | undefined => {
      const labels: Record<string, string> = {};
      for (const [primary, secondary] of LABEL_RECONCILE) {
        const v = n.labels[primary];
        if (v !== undefined && n.labels[secondary] !== v) labels[secondary] = v;
      }
      return Object.keys(labels).length > 0 ? labels : undefined;
    };
    if (wanted(node)) await this.#d.writes.patchNodeLabels(name, node, wanted);
  }

  // ---------------------------------------------------------------------------------------------
  // NoExecute tainting (taint-based eviction) and legacy eviction.
  // ---------------------------------------------------------------------------------------------

  /** Mirrors `processTaintBaseEviction`, deciding on the current (post-marking) Ready condition. */
  async #processTaintBaseEviction(node: Node, ready: NodeCondition): Promise<void> {
    const zone = getZoneKey(node.labels);
    if (ready.status === 'False') {
      if (taintExists(node.taints, UNREACHABLE_TAINT_TEMPLATE)) {
        await this.#swapNow(node, NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE);
      } else if (this.#markNodeForTainting(node, 'False', zone)) {
        this.#d.log.info({ node: node.name, zone: formatZoneKey(zone) }, 'Node is NotReady. Adding it to the Taint queue');
      }
    } else if (ready.status === 'Unknown') {
      if (taintExists(node.taints, NOT_READY_TAINT_TEMPLATE)) {
        await this.#swapNow(node, UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE);
      } else if (this.#markNodeForTainting(node, 'Unknown', zone)) {
        this.#d.log.info({ node: node.name, zone: formatZoneKey(zone) }, 'Node is unresponsive. Adding it to the Taint queue');
      }
    } else if (ready.status === 'True') {
      await this.#markNodeAsReachable(node);
    }
  }

  async #swapNow(node: Node, add: typeof NOT_READY_TAINT_TEMPLATE, remove: typeof NOT_READY_TAINT_TEMPLATE): Promise<void> {
    try {
      const r = await this.#d.writes.swapNodeTaints(node.name, [add], [remove], node);
      if (r === 'written') this.#d.log.info({ node: node.name, added: add.key, removed: remove.key }, 'Swapped NoExecute taint');
    } catch (err) {
      this.#d.log.warn({ node: node.name, err: describeError(err) }, 'Failed to instantly swap NoExecute taints. Will try again in the next cycle');
    }
  }

  /**
   * Mirrors `markNodeForTainting`. Deliberate difference 6: a node that already carries the right
   * NoExecute taint is not queued, so its `timeAdded` (and every toleration deadline) stays put.
   * @returns true when the node was newly queued.
   */
  #markNodeForTainting(node: Node, status: 'False' | 'Unknown', zone: string): boolean {
    const q = this.#ensureZone(zone);
    const want = status === 'False' ? NOT_READY_TAINT_TEMPLATE : UNREACHABLE_TAINT_TEMPLATE;
    if (taintExists(node.taints, want)) {
      q.remove(node.name);
      return false;
    }
    // Upstream removes and re-adds, which re-queues a node whose earlier entry was processed (its
    // taint was removed since). It runs once per 5 s pass; we re-evaluate on every Node/Lease
    // event, so a node still waiting (or being tainted) keeps its place instead of going to the back.
    if (q.isPending(node.name)) return false;
    q.remove(node.name);
    const added = q.add(node.name, node.uid);
    if (added) this.#kickTaintPass();
    return added;
  }

  /** Mirrors `markNodeAsReachable`: removes both NoExecute taints and drops the node from its queue. */
  async #markNodeAsReachable(node: Node): Promise<void> {
    this.#zoneQueues.get(getZoneKey(node.labels))?.remove(node.name);
    if (!taintExists(node.taints, UNREACHABLE_TAINT_TEMPLATE) && !taintExists(node.taints, NOT_READY_TAINT_TEMPLATE)) return;
    const r = await this.#d.writes.swapNodeTaints(node.name, [], [UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE], node);
    if (r === 'written') this.#d.log.info({ node: node.name }, 'Node is reachable again: removed NoExecute taints');
  }

  /** Mirrors 1.20 `processNoTaintBaseEviction`: queue for pod deletion after `--pod-eviction-timeout`. */
  #processNoTaintBaseEviction(node: Node, ready: NodeCondition): void {
    const h = this.#health.get(node.name);
    if (!h) return;
    const zone = getZoneKey(node.labels);
    const q = this.#ensureZone(zone);
    if (ready.status === 'True') {
      this.#evicted.delete(node.name); // 1.20 cancelPodEviction: nodeEvictionMap status unmarked
      if (q.remove(node.name)) this.#d.log.info({ node: node.name }, 'Node is Ready again: cancelled pod eviction');
      return;
    }
    if (!this.#pastPodEvictionTimeout(h, ready.status)) return;
    if (this.#evicted.has(node.name)) {
      // 1.20 `evictPods`: the node was evicted already, so pods that landed on it since are deleted
      // at once (through the pod queue, each re-checked), not queued behind the zone's rate.
      if (!this.#podMarkingHeld()) {
        for (const p of this.#d.caches.pods.podsOnNode(node.name)) if (p.deletionTimestamp === undefined) this.#podQueue.add(podKey(p));
      }
      return;
    }
    if (q.add(node.name, node.uid)) {
      this.#d.log.info({ node: node.name, zone: formatZoneKey(zone), status: ready.status }, 'Node has been not Ready past the pod eviction timeout. Adding it to the eviction queue');
      this.#kickTaintPass();
    }
  }

  #scheduleTaintPass(delayMs: number): void {
    this.#taintTimer?.cancel();
    this.#taintTimer = this.#d.clock.setTimeout(() => {
      void this.#runTaintPass().finally(() => {
        if (!this.#stopped) this.#scheduleTaintPass(EVENT_SOURCE_TAINT_PASS_MS);
      });
    }, delayMs);
  }

  /** Runs a pass now instead of waiting up to 100 ms (a node was just queued). */
  #kickTaintPass(): void {
    if (this.#stopped) return;
    if (this.#taintPassRunning) this.#taintPassAgain = true;
    else this.#scheduleTaintPass(0);
  }

  async #runTaintPass(): Promise<void> {
    if (this.#taintPassRunning || this.#stopped) return;
    this.#taintPassRunning = true;
    try {
      do {
        this.#taintPassAgain = false;
        await this.doNoExecuteTaintingPass();
      } while (this.#taintPassAgain && !this.#stopped);
    } finally {
      this.#taintPassRunning = false;
    }
  }

  /**
   * One pass over every zone queue. Mirrors `doNoExecuteTaintingPass` (taint mode) and 1.20's
   * `doEvictionPass` (legacy mode). Zones are processed concurrently, each in queue order under its
   * limiter; in taint mode up to {@link TAINT_WRITES_IN_FLIGHT} taint writes of a zone run at once
   * (deliberate difference 12), legacy eviction stays serial as upstream's.
   */
  async doNoExecuteTaintingPass(): Promise<void> {
    await Promise.all(
      [...this.#zoneQueues.entries()].map(([zone, q]) =>
        q
          .tryAsync(
            (v) => (this.#cfg.enableTaintManager ? this.#taintOne(zone, v) : this.#evictOne(zone, v)),
            this.#cfg.enableTaintManager ? TAINT_WRITES_IN_FLIGHT : 1,
          )
          .catch((err: unknown) => this.#d.log.error({ zone: formatZoneKey(zone), err: describeError(err) }, 'tainting pass failed')),
      ),
    );
  }

  async #taintOne(zone: string, v: TimedValue): Promise<TryResult> {
    const node = this.#d.caches.nodes.get(v.value);
    if (!node) {
      this.#d.log.info({ node: v.value }, 'Node no longer present in nodeLister');
      return { done: true, waitMs: 0 };
    }
    if (!this.#d.canSeeCluster()) return { done: false, waitMs: 1000 };
    // The saved condition includes our own Unknown write, which the cache may not show yet.
    const ready = savedReadyCondition(this.#health.get(node.name)) ?? getCondition(node.conditions, NODE_READY);
    if (!ready) return { done: false, waitMs: RETRY_WAIT_MS };
    let add: typeof NOT_READY_TAINT_TEMPLATE;
    let opposite: typeof NOT_READY_TAINT_TEMPLATE;
    if (ready.status === 'False') {
      add = NOT_READY_TAINT_TEMPLATE;
      opposite = UNREACHABLE_TAINT_TEMPLATE;
    } else if (ready.status === 'Unknown') {
      add = UNREACHABLE_TAINT_TEMPLATE;
      opposite = NOT_READY_TAINT_TEMPLATE;
    } else {
      this.#d.log.info({ node: node.name }, "Node was in a taint queue, but it's ready now. Ignoring taint request");
      return { done: true, waitMs: 0 };
    }
    if (taintExists(node.taints, add) && !taintExists(node.taints, opposite)) return { done: true, waitMs: 0 };
    try {
      const r = await this.#d.writes.swapNodeTaints(node.name, [add], [opposite], node, { conditionTaints: true });
      if (r !== 'gone') {
        this.#d.metrics.evictionsTotal.inc({ zone });
        this.#d.log.info({ node: node.name, zone: formatZoneKey(zone), taint: `${add.key}:${add.effect}` }, 'Tainted node with NoExecute');
      }
      return { done: true, waitMs: 0 };
    } catch (err) {
      this.#d.log.warn({ node: node.name, err: describeError(err) }, 'NoExecute taint failed; retrying');
      return { done: false, waitMs: RETRY_WAIT_MS };
    }
  }

  /**
   * Whether a not-Ready node has been so for longer than `--pod-eviction-timeout`: Ready=False since
   * its ready transition, Unknown since its last heartbeat (1.20 `processNoTaintBaseEviction`).
   */
  #pastPodEvictionTimeout(h: NodeHealth, status: string | undefined): boolean {
    if (status !== 'False' && status !== 'Unknown') return false;
    const since = status === 'False' ? h.readyTransitionTimestamp : h.probeTimestamp;
    return this.#d.clock.now() > since + this.#cfg.podEvictionTimeoutMs;
  }

  /**
   * Legacy mode: delete every non-DaemonSet pod on the node (1.20 `doEvictionPass` + `DeletePods`).
   * Once done, the node is `evicted` (1.20's `nodeEvictionMap`): pods that land on it later are
   * deleted by {@link #processPod} without waiting for the zone's rate.
   */
  async #evictOne(zone: string, v: TimedValue): Promise<TryResult> {
    const node = this.#d.caches.nodes.get(v.value);
    if (!this.#d.canSeeCluster()) return { done: false, waitMs: 1000 };
    const pods = this.#d.caches.pods.podsOnNode(v.value).filter((p) => p.nodeName === v.value);
    // 1.20 `DeletePods` records DeletingAllPods only when the node has pods.
    if (node && pods.length > 0) {
      this.#emit({ kind: 'Node', name: node.name, uid: v.uid }, {
        type: 'Normal',
        reason: 'DeletingAllPods',
        message: `Node ${node.name} event: Deleting all Pods from Node ${node.name}.`,
      });
    }
    let failed = 0;
    let remaining = 0;
    for (const pod of pods) {
      try {
        if ((await this.#evictPod(pod, v.value)) === 'written') remaining++;
      } catch (err) {
        failed++;
        this.#d.log.warn({ node: v.value, pod: podKey(pod), err: describeError(err) }, 'legacy pod eviction failed; retrying');
      }
    }
    if (node) this.#d.metrics.evictionsTotal.inc({ zone });
    if (remaining > 0) this.#d.log.info({ node: v.value, remaining }, 'Pods awaiting deletion due to Controller eviction');
    // Keep retrying while pods could not be deleted (upstream retries only on list errors).
    if (failed > 0) return { done: false, waitMs: 1000 };
    this.#evicted.add(v.value);
    return { done: true, waitMs: 0 };
  }

  /**
   * Deletes one pod of an evicted node (1.20 `DeletePods` for one pod), unless it is already being
   * deleted or belongs to a DaemonSet: a controller owner reference to an existing DaemonSet, or,
   * as 1.20's `GetPodDaemonSets`, a DaemonSet of its namespace selecting it (`selectsPod`). Either
   * rule alone skips the pod, so we never delete a pod 1.20 would keep.
   * @returns `'written'` when the delete was accepted, `'gone'` (the pod, with that UID, no longer
   *   exists), `'unchanged'` when skipped.
   * @throws API errors (the caller retries).
   */
  async #evictPod(pod: Pod, nodeName: string): Promise<WriteResult> {
    if (pod.nodeName !== nodeName || pod.deletionTimestamp !== undefined) return 'unchanged';
    const owner = pod.ownerReferences.find((r) => r.kind === 'DaemonSet' && r.controller);
    if (owner && this.#d.caches.daemonSets.has(`${pod.namespace}/${owner.name}`)) return 'unchanged';
    if (this.#d.caches.daemonSets.selectsPod?.(pod)) return 'unchanged';
    const r = await this.#d.writes.evictPodLegacy(pod, nodeName);
    if (r === 'written') {
      this.#emit({ kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid }, {
        type: 'Normal',
        reason: 'NodeControllerEviction',
        message: `Marking for deletion Pod ${pod.name} from Node ${nodeName}`,
      });
      this.#d.log.info({ node: nodeName, pod: podKey(pod) }, 'Deleted pod (legacy eviction)');
    }
    return r;
  }

  // ---------------------------------------------------------------------------------------------
  // Zones.
  // ---------------------------------------------------------------------------------------------

  /**
   * Ready status that may only make zone decisions stricter: real, but a long-silent Ready node
   * counts as not Ready (difference 3). {@link #handleDisruption} uses it only where it lowers a
   * zone's rate or pauses it ({@link stricterZoneStatuses}).
   */
  #effectiveReady(name: string, now: number): string | undefined {
    const h = this.#health.get(name);
    const ready = savedReadyCondition(h)?.status ?? getCondition(this.#d.caches.nodes.get(name)?.conditions ?? [], NODE_READY)?.status;
    if (ready === 'True' && h && now - h.probeTimestamp > this.#cfg.nodeMonitorGracePeriodMs / 2) return 'Unknown';
    return ready;
  }

  /** Mirrors `handleDisruption`, over the pure {@link planDisruption}. */
  #handleDisruption(): void {
    const now = this.#d.clock.now();
    const effective = new Map<string, (string | undefined)[]>();
    const real = new Map<string, (string | undefined)[]>();
    const nodesByZone = new Map<string, string[]>();
    for (const node of this.#d.caches.nodes.list()) {
      if (!this.#known.has(node.name) || isExcludedFromDisruption(node)) continue;
      const zone = getZoneKey(node.labels);
      const realReady = savedReadyCondition(this.#health.get(node.name))?.status ?? getCondition(node.conditions, NODE_READY)?.status;
      push(real, zone, realReady);
      push(effective, zone, this.#effectiveReady(node.name, now));
      push(nodesByZone, zone, node.name);
    }
    for (const zone of effective.keys()) this.#ensureZone(zone);
    // Difference 3 may only make a zone stricter: per zone, the statuses with the lower rate (a
    // small zone must not go from PartialDisruption, rate 0, to FullDisruption, full rate).
    // The all-zones stop, once on, lasts while the effective count keeps every zone FullDisruption.
    const plan = planDisruption(this.#zoneStates, stricterZoneStatuses(real, effective, this.#cfg, this.#allZonesStopped()), this.#cfg);
    this.#zoneStates.clear();
    for (const [z, s] of plan.zoneStates) this.#zoneStates.set(z, s);
    // Upstream's metrics, from the real conditions.
    for (const [zone, statuses] of real) {
      const { unhealthy } = computeZoneState(statuses, this.#cfg.unhealthyZoneThreshold);
      const size = statuses.length;
      this.#d.metrics.zoneSize.set({ zone }, size);
      this.#d.metrics.zoneHealth.set({ zone }, size > 0 ? (100 * (size - unhealthy)) / size : 100);
      this.#d.metrics.unhealthyNodesInZone.set({ zone }, unhealthy);
      this.#zoneSizes.set(zone, { size, unhealthy });
    }
    for (const zone of plan.removedZones) {
      this.#d.metrics.zoneSize.set({ zone }, 0);
      this.#d.metrics.zoneHealth.set({ zone }, 100);
      this.#d.metrics.unhealthyNodesInZone.set({ zone }, 0);
      this.#zoneSizes.delete(zone);
    }
    for (const { zone, rate } of plan.rateSwaps) {
      this.#zoneQueues.get(zone)?.swapLimiter(rate);
      this.#d.metrics.zoneTaintingRate.set({ zone }, rate);
      if (rate >= this.#cfg.nodeEvictionRate) this.#clearPause(zone);
    }
    for (const t of plan.transitions) {
      this.#d.log.info({ zone: formatZoneKey(t.zone), from: t.from, to: t.to }, 'Controller detected that zone is now in new state');
    }
    for (const pause of plan.pauses) this.#explainPause(pause, nodesByZone);
    if (plan.mode === 'enter-all-disrupted') {
      this.#d.log.warn({}, 'Controller detected that all Nodes are not-Ready. Entering master disruption mode');
      this.#evicted.clear(); // 1.20 cancelPodEviction on every node: nodeEvictionMap status unmarked
      for (const node of this.#d.caches.nodes.list()) {
        void this.#markNodeAsReachable(node).catch((err: unknown) =>
          this.#d.log.warn({ node: node.name, err: describeError(err) }, 'removing NoExecute taints failed'),
        );
      }
    } else if (plan.mode === 'exit-all-disrupted') {
      this.#d.log.warn({}, 'Controller detected that some Nodes are Ready. Exiting master disruption mode');
      for (const [name, h] of this.#health) this.#health.set(name, { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
      for (const zone of this.#zoneQueues.keys()) this.#clearPause(zone, 'all-zones-fully-disrupted');
      // Pods left alone during the stop are marked once this fresh grace period has passed, if
      // their node is still not Ready (#resyncPodReadiness).
      this.#podMarkingResumesAt = now + this.#cfg.nodeMonitorGracePeriodMs;
      this.#resyncPodReadiness();
    }
  }

  #explainPause(pause: DisruptionPause, nodesByZone: ReadonlyMap<string, readonly string[]>): void {
    const zones = pause.zone !== undefined ? [pause.zone] : [...nodesByZone.keys()];
    const reasonLabel = pause.kind === 'zone-stopped' || pause.kind === 'zone-slowed' ? 'partial-disruption' : 'all-zones-fully-disrupted';
    const eventReason =
      pause.kind === 'zone-stopped'
        ? 'ZoneEvictionPaused'
        : pause.kind === 'zone-slowed'
          ? 'ZoneEvictionSlowed'
          : pause.kind === 'all-zones-stopped'
            ? 'AllZonesDisrupted'
            : 'AllZonesRecovered';
    for (const zone of zones) {
      if (pause.kind === 'all-zones-resumed') this.#clearPause(zone, reasonLabel);
      else {
        this.#pausedReasons.set(zone, pause.reason);
        this.#d.metrics.zoneEvictionPaused.set({ zone, reason: reasonLabel }, 1);
      }
      // The event goes on one node of the zone (preferably a not-Ready one), so `kubectl describe
      // node` of a dead node says why it is not being tainted.
      const names = [...(nodesByZone.get(zone) ?? [])].sort();
      const target = names.find((n) => this.#lastReady.get(n) !== 'True') ?? names[0];
      const info = target !== undefined ? this.#known.get(target) : undefined;
      if (target !== undefined && info) {
        this.#d.events.record(
          { kind: 'Node', name: target, uid: info.uid },
          pause.kind === 'all-zones-resumed' ? 'Normal' : 'Warning',
          eventReason,
          pause.reason,
        );
      }
    }
    this.#d.log.warn({ zone: pause.zone !== undefined ? formatZoneKey(pause.zone) : undefined, kind: pause.kind }, pause.reason);
  }

  #clearPause(zone: string, only?: string): void {
    if (!this.#pausedReasons.has(zone)) return;
    this.#pausedReasons.delete(zone);
    for (const reason of ['partial-disruption', 'all-zones-fully-disrupted']) {
      if (only === undefined || only === reason) this.#d.metrics.zoneEvictionPaused.set({ zone, reason }, 0);
    }
  }

  #emit(ref: EventObjectRef, e: NodeLifecycleEvent): void {
    this.#d.events.record(ref, e.type, e.reason, e.message);
  }

  // ---------------------------------------------------------------------------------------------
  // Introspection.
  // ---------------------------------------------------------------------------------------------

  /** A snapshot for `/debug/state`, `status` and `explain`. Times are epoch ms. */
  view(): NodeLifecycleView {
    const zones: ZoneView[] = [];
    for (const [zone, q] of this.#zoneQueues) {
      const sizes = this.#zoneSizes.get(zone) ?? { size: 0, unhealthy: 0 };
      const head = q.peek();
      const z: ZoneView = {
        zone,
        zoneLabel: formatZoneKey(zone),
        state: this.#zoneStates.get(zone) ?? 'Initial',
        size: sizes.size,
        unhealthy: sizes.unhealthy,
        rate: q.qps,
        queueLength: q.length,
      };
      if (head) z.next = { node: head.value, processAt: head.processAt };
      const paused = this.#pausedReasons.get(zone);
      if (paused) z.pausedReason = paused;
      zones.push(z);
    }
    const nodes = [...this.#known.entries()].map(([name, info]) => {
      const h = this.#health.get(name);
      const out: NodeLifecycleView['nodes'][number] = {
        name,
        zone: formatZoneKey(info.zone),
        queued: this.#zoneQueues.get(info.zone)?.has(name) ?? false,
      };
      const ready = savedReadyCondition(h)?.status;
      if (ready !== undefined) out.ready = ready;
      if (h) out.probeTimestamp = h.probeTimestamp;
      const d = this.#deadlines.get(name);
      if (d) out.probeDeadline = d.atMs;
      return out;
    });
    return {
      allZonesDisrupted: [...this.#zoneStates.values()].length > 0 && [...this.#zoneStates.values()].every((s) => s === 'FullDisruption'),
      canSeeCluster: this.#d.canSeeCluster(),
      zones,
      nodes,
    };
  }
}

function push<V>(m: Map<string, V[]>, k: string, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}
