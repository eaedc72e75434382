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
 *    period (and longer than a normal Lease renewal gap, so never on a healthy cluster; off where
 *    that reaches the grace period: silence.ts) counts as not Ready when zone states are computed.
 *    Nodes that die together are detected up to one heartbeat interval apart; without this the
 *    first of them would be tainted before the zone is seen to be disrupted. Per zone the stricter
 *    of the two counts (lower rate) is used, so it can only pause or slow tainting, never restart it
 *    (a small PartialDisruption zone must not become FullDisruption at full rate). Zone metrics keep
 *    upstream's meaning (real Ready conditions).
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
 *    (kubernetes #125618, #112733, #135205, #77864, #125824).
 * 8. `NodeControllerLeaseCircuitBreaker` (1.37, kubernetes #138698): the live Lease read is made
 *    only for an expired node that is about to be acted on (marked Unknown, queued for or swapped to
 *    a NoExecute taint, legacy eviction), not for every expired node on every pass; see
 *    `#needsLiveLeaseCheck` in monitor.ts and leasecircuitbreaker.ts.
 * 9. The NoExecute fence (fence.ts): while the all-zones stop is on, no taint write adds a
 *    NoExecute taint, even one started before the stop (upstream's in-flight swap can).
 * 10. A node whose newest version could not be read (the cache keeps its last readable one) is
 *    counted in zone states but neither judged nor written to, nor are its pods (unreadable.ts).
 * docs/node-lifecycle.md lists every difference and whether it can only delay or reduce an action.
 */
import { steadyClock } from '../util/clock.js';
import type { Pod } from '../kube/objects.js';
import { podKey } from '../kube/objects.js';
import { withNoExecuteFence } from './fence.js';
import { withUnreadableNodeGuard } from './unreadable.js';
import { NodeHealthMonitor } from './monitor.js';
import { NoScheduleTaintPass } from './noschedule.js';
import { ZoneTainting } from './tainting.js';
import { LegacyEviction } from './legacyeviction.js';
import { PodReadiness } from './podreadiness.js';
import type { NodeHealthReader, NodeLifecycleDeps, NodeLifecycleView, NodeReaction, PodQueue } from './parts.js';

// The seam's types are defined in parts.ts; the ones other folders use are importable from here too.
export type {
  LeaseCircuitBreakerIO,
  NodeLifecycleCaches,
  NodeLifecycleConfig,
  NodeLifecycleDeps,
  NodeLifecycleView,
  NodeLifecycleWrites,
  ZoneView,
} from './parts.js';

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

  /** @param given injected caches, writer, events, metrics, clock and logger (the writer is wrapped in the NoExecute fence). Never throws. */
  constructor(given: NodeLifecycleDeps) {
    // Every part writes taints through the NoExecute fence (fence.ts): while the all-zones stop is
    // on, no NoExecute taint is added, whichever part asks and whenever its write was started.
    // Every deadline here counts from an observation of this process (a heartbeat, a Ready flip, a
    // start): upstream compares `time.Now()` readings, i.e. monotonic time, so the parts read a
    // clock that a forward NTP step cannot move ahead (steadyClock). The writer stamps `timeAdded`
    // and conditions with its own wall clock; only the Unknown conditions' lastTransitionTime
    // (health.ts) comes from this clock and may lag the wall clock by the steps since the start.
    // No write reaches a node whose newest version could not be read, nor its pods (unreadable.ts).
    const writes = withUnreadableNodeGuard(withNoExecuteFence(given, () => this.#zones.allZonesStopped()), given.caches.nodes);
    const deps: NodeLifecycleDeps = { ...given, clock: steadyClock(given.clock), writes };
    this.#d = deps;
    deps.judgements?.attachJudge();
    const stopped = (): boolean => this.#stopped;
    // The health part is built last (it drives the others); they read it through this late-bound view.
    const health: NodeHealthReader = {
      health: (name) => this.#monitor.health(name),
      registration: (name) => this.#monitor.registration(name),
      lastReady: (name) => this.#monitor.lastReady(name),
      registered: () => this.#monitor.registered(),
      rejudging: (name) => this.#monitor.rejudging(name),
    };
    this.#zones = new ZoneTainting(deps, {
      stopped,
      health,
      allZonesStopEnded: (nowMs) => {
        this.#monitor.freshGracePeriod(nowMs);
        this.#pods.allZonesStopEnded(nowMs);
      },
      legacy: { evictOne: (zone, v) => this.#legacy.evictOne(zone, v), forgetEvictions: () => this.#legacy.forgetEvictions() },
      noExecuteTaintDone: (name) => this.#noSchedule.enqueue(name),
    });
    const pods: PodQueue = { podMarkingHeld: () => this.#pods.podMarkingHeld(), queuePod: (key) => this.#pods.queuePod(key) };
    this.#legacy = new LegacyEviction(deps, { health, pods, zones: this.#zones });
    const legacy = this.#legacy;
    const reaction: NodeReaction = deps.config.enableTaintManager ? this.#zones : legacy;
    this.#pods = new PodReadiness(deps, {
      health,
      allZonesStopped: () => this.#zones.allZonesStopped(),
      ...(deps.config.enableTaintManager ? {} : { processPod: (pod, h, ready) => legacy.processPod(pod, h, ready) }),
    });
    this.#noSchedule = new NoScheduleTaintPass(deps, {
      healthSyncRunning: (name) => this.#monitor.isSyncing(name),
      noExecuteTaintPending: (node) => this.#zones.noExecuteTaintPending(node),
      rejudging: (name) => this.#monitor.rejudging(name),
    });
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

  /**
   * The node or Lease cache gained or lost its watch stream (`SourceHandlers.watching`): sight is
   * recorded as it changes (monitor.ts `sightChanged`). Synchronous; works while stopped (nothing
   * is re-judged then).
   */
  sightChanged(): void {
    this.#monitor.sightChanged();
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
