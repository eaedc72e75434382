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
 *    `#needsLiveLeaseCheck` in monitor.ts and leasebreaker.ts.
 * docs/node-lifecycle.md lists every difference and whether it can only delay or reduce an action.
 */
import type { Lease, Node, Pod } from '../kube/objects.js';
import { podKey } from '../kube/objects.js';
import type { Logger } from '../log/logger.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import type { NodeCollectorMetrics } from '../metrics/registry.js';
import type { Clock } from '../util/clock.js';
import type { NodeLifecycleWriter } from './writer.js';
import type { ZoneState } from './zones.js';
import type { EvictionGuardsConfig, EvictionGuardView } from './guard.js';
import { NodeHealthMonitor } from './monitor.js';
import { NoScheduleTaintPass } from './noschedule.js';
import { ZoneTainting } from './tainting.js';
import { LegacyEviction } from './legacyeviction.js';
import { PodReadiness } from './podreadiness.js';
import type { NodeHealthReader, NodeReaction, PodQueue } from './parts.js';

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
  /**
   * Ours (issue 16): the cluster-wide eviction guards, `--max-unhealthy-nodes` and storm detection
   * (guard.ts, `evictionGuardsConfig`). Absent or `{}`: both off, as kube-controller-manager.
   */
  evictionGuards?: EvictionGuardsConfig;
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
  /** The cluster-wide eviction guards that are configured (issue 16); empty when both are off. */
  evictionGuards: EvictionGuardView[];
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

/**
 * The node lifecycle controller. Construct, then {@link start} once the caches have synced; feed it
 * informer events through {@link nodeChanged}, {@link nodeDeleted}, {@link leaseChanged} and
 * {@link podChanged}. {@link stop} shuts every loop down.
 * Mirrors upstream `nodelifecycle.Controller`. This class only wires the parts (see parts.ts):
 * node health (monitor.ts), pod readiness (podreadiness.ts), the NoSchedule pass (noschedule.ts),
 * zone states and NoExecute tainting (tainting.ts), legacy eviction (legacyeviction.ts).
 */
export class NodeLifecycleController {
  readonly #d: NodeLifecycleDeps;
  readonly #monitor: NodeHealthMonitor;
  readonly #pods: PodReadiness;
  readonly #noSchedule: NoScheduleTaintPass;
  readonly #zones: ZoneTainting;
  readonly #legacy: LegacyEviction;
  #stopped = true;

  /** @param deps injected caches, writer, events, metrics, clock and logger. Never throws. */
  constructor(deps: NodeLifecycleDeps) {
    this.#d = deps;
    const stopped = (): boolean => this.#stopped;
    // The health part is built last (it drives the others); they read it through this late-bound view.
    const health: NodeHealthReader = {
      health: (name) => this.#monitor.health(name),
      registration: (name) => this.#monitor.registration(name),
      lastReady: (name) => this.#monitor.lastReady(name),
      registered: () => this.#monitor.registered(),
    };
    this.#zones = new ZoneTainting(deps, {
      stopped,
      health,
      allZonesStopEnded: (nowMs) => {
        this.#monitor.freshGracePeriod(nowMs);
        this.#pods.allZonesStopEnded(nowMs);
      },
      legacy: { evictOne: (zone, v) => this.#legacy.evictOne(zone, v), forgetEvictions: () => this.#legacy.forgetEvictions() },
    });
    const pods: PodQueue = { podMarkingHeld: () => this.#pods.podMarkingHeld(), queuePod: (key) => this.#pods.queuePod(key) };
    this.#legacy = new LegacyEviction(deps, health, pods, this.#zones);
    const legacy = this.#legacy;
    const reaction: NodeReaction = deps.config.enableTaintManager ? this.#zones : legacy;
    this.#pods = new PodReadiness(deps, {
      health,
      allZonesStopped: () => this.#zones.allZonesStopped(),
      ...(deps.config.enableTaintManager ? {} : { processPod: (pod, h, ready) => legacy.processPod(pod, h, ready) }),
    });
    this.#noSchedule = new NoScheduleTaintPass(deps, (name) => this.#monitor.isSyncing(name));
    this.#monitor = new NodeHealthMonitor(deps, {
      stopped,
      zones: this.#zones,
      reaction,
      pods: this.#pods,
      healthSyncDone: (name) => this.#noSchedule.healthSyncDone(name),
      nodeRemoved: (name, zone) => {
        this.#legacy.forgetNode(name);
        this.#zones.dequeue(zone, name);
      },
    });
  }

  /**
   * Starts the monitor loop (every `nodeMonitorPeriodMs`), the tainting/eviction pass (every
   * 100 ms) and the workers, and queues every cached node once. Call after the caches synced.
   */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    for (const n of this.#d.caches.nodes.list()) {
      this.#noSchedule.enqueue(n.name);
    }
    this.#monitor.start();
    this.#zones.start();
  }

  /** Stops every loop and worker; in-flight writes finish. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#zones.stop();
    await Promise.all([this.#monitor.stop(), this.#noSchedule.stop(), this.#pods.stop()]);
  }

  // ---------------------------------------------------------------------------------------------
  // Informer handlers: enqueue only.
  // ---------------------------------------------------------------------------------------------

  /** A Node was added or updated (upstream enqueues every update, unfiltered). */
  nodeChanged(name: string): void {
    if (this.#stopped) return;
    this.#noSchedule.enqueue(name);
    this.#monitor.monitorOne(name);
  }

  /** A Node was deleted. */
  nodeDeleted(name: string): void {
    this.#monitor.nodeDeleted(name);
    this.#legacy.forgetNode(name); // 1.20: nodeEvictionMap.unregister
    this.#d.writes.forgetNode(name);
    if (!this.#stopped) this.#monitor.scheduleMonitor(0);
  }

  /** A Lease in `kube-node-lease` was added or updated: a possible heartbeat. */
  leaseChanged(nodeName: string): void {
    if (this.#stopped) return;
    this.#monitor.leaseChanged(nodeName);
  }

  /**
   * A pod was added or updated. Mirrors `podUpdated`: only pods that are newly bound or moved to
   * another node are processed (pods on nodes that turn not-Ready are handled by the node's pass).
   */
  podChanged(pod: Pod, old?: Pod): void {
    if (this.#stopped || pod.nodeName === '') return;
    if (old && old.nodeName === pod.nodeName) return;
    this.#pods.queuePod(podKey(pod));
  }

  /**
   * One full pass over every cached node: registration and removal events, health of every node,
   * then zone states. Mirrors `monitorNodeHealth`. Errors per node are logged, never thrown.
   */
  monitorNodeHealth(): Promise<void> {
    return this.#monitor.monitorNodeHealth();
  }

  /**
   * One pass over every zone queue. Mirrors `doNoExecuteTaintingPass` (taint mode) and 1.20's
   * `doEvictionPass` (legacy mode); see tainting.ts.
   */
  doNoExecuteTaintingPass(): Promise<void> {
    return this.#zones.doNoExecuteTaintingPass();
  }

  /** A snapshot for `/debug/state`, `status` and `explain`. Times are epoch ms. */
  view(): NodeLifecycleView {
    return {
      allZonesDisrupted: this.#zones.allZonesStopped(),
      canSeeCluster: this.#d.canSeeCluster(),
      evictionGuards: this.#zones.evictionGuardViews(),
      zones: this.#zones.zoneViews(),
      nodes: this.#monitor.nodeViews(),
    };
  }
}
