/**
 * Node health, the node lifecycle controller's monitor loop: the monitor pass, a timer at each
 * node's probe deadline, the health queue (status writes, the Lease circuit breaker's live read)
 * and the state they need (health records, registrations, the Lease cache hold).
 *
 * Mirrors upstream `pkg/controller/nodelifecycle/node_lifecycle_controller.go` (`monitorNodeHealth`,
 * `tryUpdateNodeHealth`, `updateNodeFunc`). What a judged node leads to (NoExecute taints, legacy
 * eviction) is the {@link NodeReaction} controller.ts hands in; zone states are the zone part's
 * ({@link ZoneStatesForHealth}), pod marking the pod readiness part's (podreadiness.ts).
 * Deliberate differences 1, 2, 5, 16, 18, 24 and 28 of docs/node-lifecycle.md live here.
 */
import { leaseKey } from '../kube/informerfactory.js';
import type { Lease, Node, NodeCondition } from '../kube/objects.js';
import { WorkQueue } from '../kube/workqueue.js';
import { SightTracker } from '../kube/sight.js';
import { describeError } from '../kube/client.js';
import { isNotCalledFor } from '../kube/throttle.js';
import type { TimerHandle } from '../util/clock.js';
import { DeadlineScheduler } from '../util/scheduler.js';
import {
  isReadyToNotReadyTransition,
  leaseSeenByPass,
  nextProbeDeadline,
  nodeNotReadyEvent,
  observeNodeHealth,
  registeredNodeEvent,
  removingNodeEvent,
  savedReadyCondition,
  type NodeHealth,
  type NodeHealthObservation,
} from './health.js';
import { LeaseCircuitBreaker } from './leasecircuitbreaker.js';
import { newestUnreadable } from './unreadable.js';
import { formatZoneKey, getZoneKey } from './zones.js';
import { NODE_WORKERS, recordEvent, type HealthMonitorDeps, type HealthMonitorLinks, type NodeHealthReader, type NodeLifecycleView } from './parts.js';

/**
 * This thread's CPU time so far (user + system), **milliseconds**; process-wide where Node lacks
 * `process.threadCpuUsage` (before 23.9). For the monitor pass's debug line and bench/health-pass.ts.
 * Never throws. Not upstream.
 */
export function threadCpuMs(): number {
  const u = typeof process.threadCpuUsage === 'function' ? process.threadCpuUsage() : process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** A Ready status as the judgement board takes it (an unexpected value counts as Unknown). */
function readyStatusOf(c: Readonly<NodeCondition> | undefined): 'True' | 'False' | 'Unknown' | undefined {
  if (c === undefined) return undefined;
  return c.status === 'True' || c.status === 'False' ? c.status : 'Unknown';
}

/** One node's observation, shared by the synchronous and the queued paths. */
interface Observed {
  name: string;
  node: Node;
  lease: Lease | undefined;
  obs: NodeHealthObservation;
}

/**
 * What one health sync did, for its debug line: where it ended, and how long its live Lease read,
 * status write and reaction (taint or eviction) took, milliseconds (absent: not made).
 */
interface HealthSyncStages {
  end: string;
  liveReadMs?: number;
  writeMs?: number;
  actMs?: number;
}

/**
 * The health part. Mirrors the health half of upstream `nodelifecycle.Controller`. Implements
 * {@link NodeHealthReader} for the other parts.
 */
export class NodeHealthMonitor implements NodeHealthReader {
  readonly #d: HealthMonitorDeps;
  readonly #l: HealthMonitorLinks;
  readonly #health = new Map<string, NodeHealth>();
  readonly #known = new Map<string, { uid: string; zone: string }>();
  /** Last Ready status each node was judged with, to notice flips that change zone states. */
  readonly #lastReady = new Map<string, string | undefined>();
  /** Nodes the health queue is processing now (the monitor pass defers to it). */
  readonly #inFlight = new Set<string>();
  /** Per node, monitor passes waiting for its next health sync to finish (see #awaitHealthSyncs). */
  readonly #healthWaiters = new Map<string, (() => void)[]>();
  /**
   * What first handed each node now waiting in the health queue to it (the queue itself times the
   * wait). Only for the per-sync debug line ({@link HealthSyncStages}): a wave whose deadlines all fell
   * together once had 11 of its 17 nodes marked one monitor period late, and the log could not say
   * whether their deadline timers had queued them or where they waited (bench/README.md, 2026-12-05).
   */
  readonly #healthQueuedBy = new Map<string, 'deadline' | 'pass' | 'event'>();
  /** The live Lease read before acting on an expired node, and the hold while the Lease cache is behind. */
  readonly #breaker: LeaseCircuitBreaker;
  readonly #healthOpts: { nodeMonitorGracePeriodMs: number; nodeStartupGracePeriodMs: number };
  readonly #deadlines: DeadlineScheduler<string>;
  readonly #healthQueue: WorkQueue;
  #monitorTimer: TimerHandle | undefined;
  #sawCluster = true;
  /** Sight as the caches' watch-stream transitions tell it, as they happen ({@link sightChanged}). */
  readonly #sight = new SightTracker();
  /**
   * Nodes whose not-Ready verdict was reached before the controller last lost sight of the cluster
   * and not again since sight returned (deliberate difference 28, {@link rejudging}).
   */
  readonly #rejudge = new Set<string>();
  /** Sight returned: counts {@link #sightReturned} calls, so a pass knows whether sight returned again while it ran. */
  #sightEpoch = 0;
  /**
   * Sight returned and no full monitor pass has observed every node and computed the zone states
   * from the view since (difference 28, continued): nothing is acted on until one has.
   */
  #zonesBeforeSight = false;
  #monitorRunning: Promise<void> | undefined;

  /** @param deps the slice of the controller's deps the health part uses; @param links the other parts. Never throws. */
  constructor(deps: HealthMonitorDeps, links: HealthMonitorLinks) {
    this.#d = deps;
    this.#l = links;
    this.#breaker = new LeaseCircuitBreaker(deps.leaseCircuitBreaker, deps.log);
    this.#healthOpts = { nodeMonitorGracePeriodMs: deps.config.nodeMonitorGracePeriodMs, nodeStartupGracePeriodMs: deps.config.nodeStartupGracePeriodMs };
    const { clock, log } = deps;
    this.#deadlines = new DeadlineScheduler<string>(clock, {
      onError: (err, e) => log.error({ node: e.key, err: describeError(err) }, 'probe deadline handler failed'),
    });
    this.#deadlines.onDue((e) => this.#queueHealth(e.key, 'deadline'));
    this.#healthQueue = new WorkQueue({
      name: 'node_lifecycle_controller_health',
      concurrency: NODE_WORKERS,
      clock,
      log,
      sync: (name, run) => this.#syncNodeHealth(name, run.queuedMs),
    });
  }

  /** Notes whether the cluster is visible now and starts the monitor loop (every `nodeMonitorPeriodMs`). */
  start(): void {
    // Judgements count from this start only: time before it was not watched by this process.
    this.#d.judgements?.started();
    this.#sawCluster = this.#d.canSeeCluster();
    this.#sight.observe(this.#watching(), this.#d.clock.monotonic());
    this.scheduleMonitor(0);
  }

  /**
   * A node or Lease cache gained or lost its watch stream (`SourceHandlers.watching`): records the
   * transition as it happens (src/kube/sight.ts, the 2 s reconnect allowance of `canSeeCluster`).
   * Deliberate difference 28, completed (issue 57, fuzz seed 20270301 run 823): a blind stretch
   * that ends here is handled at once, as one a monitor pass noticed ({@link #sightReturned}),
   * instead of when the next observation samples `canSeeCluster()`. Until then the judgement board
   * still held the node's confirmation from before the outage, so a taint eviction deadline falling
   * between sight's return and the node's next observation deleted on a pre-outage verdict; and a
   * blind stretch between two passes with no Lease event went unnoticed. Can only delay: it forgets
   * verdicts and gives a fresh grace period, as a noticed outage does. Call synchronously on each
   * transition; repeats are harmless.
   */
  sightChanged(): void {
    const ended = this.#sight.observe(this.#watching(), this.#d.clock.monotonic());
    if (ended !== undefined && !this.#l.stopped()) this.#sightReturned();
  }

  #watching(): boolean {
    return (this.#d.watchingCluster ?? this.#d.canSeeCluster)();
  }

  /** Stops the monitor loop, the deadlines and the health queue; resolves once in-flight work finished. */
  async stop(): Promise<void> {
    this.#monitorTimer?.cancel();
    this.#deadlines.clear();
    // A monitor pass waiting for health syncs that shutDown drops must not hold stop() up.
    for (const name of [...this.#healthWaiters.keys()]) this.#resolveHealthWaiters(name);
    await this.#healthQueue.shutDown();
    this.#healthQueuedBy.clear();
    await this.#monitorRunning;
  }

  // ---------------------------------------------------------------------------------------------
  // NodeHealthReader, and what controller.ts forwards.
  // ---------------------------------------------------------------------------------------------

  health(name: string): NodeHealth | undefined {
    return this.#health.get(name);
  }

  registration(name: string): { uid: string; zone: string } | undefined {
    return this.#known.get(name);
  }

  lastReady(name: string): string | undefined {
    return this.#lastReady.get(name);
  }

  registered(): IterableIterator<[string, { uid: string; zone: string }]> {
    return this.#known.entries();
  }

  rejudging(name: string): string | undefined {
    if (this.#rejudge.has(name)) return 'the node was judged not Ready before the controller lost sight of the cluster, and not again since sight returned';
    // Difference 28, continued (issue 57, fuzz seed 20271207 run 14831): after an outage the relist
    // delivers nodes one by one, and each is judged as its event comes, so the zone states were
    // still those of the pre-outage view when the first node was tainted; the zone turned out to be
    // PartialDisruption (rate 0) one node later. Upstream judges every node in one pass and only
    // then sets the zones' rates (`monitorNodeHealth`, `handleDisruption`).
    if (this.#zonesBeforeSight) return 'sight of the cluster returned and no monitor pass has judged every node and computed the zone states since';
    return undefined;
  }

  /** True while the node's health sync runs (its status write may not be in the cache yet). */
  isSyncing(name: string): boolean {
    return this.#inFlight.has(name);
  }

  /** A Node was deleted: its probe deadline goes. */
  nodeDeleted(name: string): void {
    this.#deadlines.cancel(name);
    this.#rejudge.delete(name);
    this.#d.judgements?.forget(name);
  }

  /** A Lease in `kube-node-lease` was added or updated: a possible heartbeat. */
  leaseChanged(nodeName: string): void {
    // While the Lease cache is known to be behind, the informer calls us before it records the
    // event's resourceVersion; observe once that is done, or the event that ends the hold is lost.
    if (this.#breaker.holding) {
      queueMicrotask(() => void this.monitorOne(nodeName));
      return;
    }
    // Lease renewals arrive at kubelet rate (100/s at 1,000 nodes): observe them synchronously and
    // queue only the rare node that needs an API call.
    this.monitorOne(nodeName);
  }

  // ---------------------------------------------------------------------------------------------
  // Health: monitor pass + per-node processing.
  // ---------------------------------------------------------------------------------------------

  /** (Re)arms the monitor pass `delayMs` milliseconds from now; then every `nodeMonitorPeriodMs`. */
  scheduleMonitor(delayMs: number): void {
    this.#monitorTimer?.cancel();
    this.#monitorTimer = this.#d.clock.setTimeout(() => {
      this.#monitorRunning = this.monitorNodeHealth()
        .catch((err: unknown) => this.#d.log.error({ err: describeError(err) }, 'monitorNodeHealth failed'))
        .finally(() => {
          // Sliding period, like wait.UntilWithContext.
          if (!this.#l.stopped()) this.scheduleMonitor(this.#d.config.nodeMonitorPeriodMs);
        });
    }, delayMs);
  }

  /**
   * One full pass over every cached node: registration and removal events, health of every node,
   * then zone states. Mirrors `monitorNodeHealth`. Errors per node are logged, never thrown.
   */
  async monitorNodeHealth(): Promise<void> {
    if (this.#l.stopped()) return;
    const startMs = this.#d.clock.now();
    const endTimer = this.#d.metrics.updateAllNodesHealthDuration.startTimer();
    // Main-thread CPU of the pass's own (synchronous) parts, without the wait for health syncs, for
    // the debug line: its wall `ms` also counts that wait and any preemption on a loaded machine.
    let cpuMs = 0;
    let cpuFrom = threadCpuMs();
    let waited = 0;
    try {
      if (!this.#checkSight()) return;
      const epoch = this.#sightEpoch;
      const nodes = this.#d.caches.nodes.list();
      for (const node of nodes) this.#ensureRegistered(node);
      // The cache is keyed by node name and cannot change within this synchronous block, so a
      // lookup answers "in the list" without a 5,000-entry Set per pass (steady-state CPU at scale).
      for (const [name, info] of this.#known) {
        if (this.#d.caches.nodes.get(name) !== undefined) continue;
        this.#known.delete(name);
        this.#health.delete(name);
        this.#lastReady.delete(name);
        this.#deadlines.cancel(name);
        this.#rejudge.delete(name);
        this.#d.judgements?.forget(name);
        this.#l.nodeRemoved(name, info.zone);
        recordEvent(this.#d.events, { kind: 'Node', name, uid: info.uid }, removingNodeEvent(name));
        this.#d.log.info({ node: name, zone: formatZoneKey(info.zone) }, 'Removing node from controller');
      }
      const syncs: Promise<void>[] = [];
      for (const node of nodes) {
        if (this.monitorOne(node.name, true)) syncs.push(this.#nextHealthSync(node.name));
        // Upstream's pass is where it saves a renewal; from here on the saved Lease version is
        // final (part of deliberate difference 1). Also for a node handed to the health queue:
        // marking it early only keeps a later version out, so the node is judged no more than upstream's.
        const h = this.#health.get(node.name);
        if (h) this.#health.set(node.name, leaseSeenByPass(h));
      }
      cpuMs += threadCpuMs() - cpuFrom;
      waited = syncs.length;
      await this.#awaitHealthSyncs(syncs);
      cpuFrom = threadCpuMs();
      this.#l.zones.handleDisruption();
      // Every node judged and the zones computed from the view since sight returned (if it did not
      // return again meanwhile, nor go: handleDisruption computes nothing while blind).
      // The tainting pass and the NoSchedule pass retry on their own; pods are resynced below.
      if (epoch === this.#sightEpoch && this.#d.canSeeCluster()) this.#zonesBeforeSight = false;
      // Like upstream's short-circuited pass, no pod is marked while the Lease cache is behind.
      if (!this.#breaker.cacheBehind()) this.#l.pods.resyncPodReadiness();
    } finally {
      endTimer();
      cpuMs += threadCpuMs() - cpuFrom;
      this.#d.log.debug({ ms: this.#d.clock.now() - startMs, cpuMs: Math.round(cpuMs * 10) / 10, waitedForSyncs: waited }, 'monitor pass done');
    }
  }

  /**
   * Sight gate (deliberate difference 5): returns false while the caches cannot be trusted; on the
   * pass where sight returns, every node's probe timestamp is reset so none is judged on the gap.
   * Deliberate difference 28: the Unknown verdicts reached before sight was lost are put on hold (no
   * NoExecute taint from the zone queue, no pod marked NotReady on them) until each node is judged
   * again from what the controller sees now: a Ready condition other than the Unknown it wrote (its
   * kubelet's report), or a whole grace period without a heartbeat from sight's return. Those verdicts
   * were reached on a view older than the outage (the safety rule). Upstream acts on them at its
   * first pass after its informers relist (its queued taints, `MarkPodsNotReady`'s retries): this
   * can only delay, by at most one grace period. The judgement board forgets every confirmation
   * there and then ({@link #sightReturned}), so the taint eviction controller's start hold covers the
   * same time.
   */
  #checkSight(): boolean {
    const sees = this.#d.canSeeCluster();
    if (sees && !this.#sawCluster) {
      this.#sightReturned();
    } else if (!sees && this.#sawCluster) {
      this.#d.log.warn({}, 'Lost sight of the API server: no node will be judged until the caches are synced again');
    }
    this.#sawCluster = sees;
    return sees;
  }

  /**
   * Sight returned after a blind stretch (noticed by {@link #checkSight} or recorded by
   * {@link sightChanged}): a full grace period for every node from now, the Unknown verdicts on hold
   * until judged again (difference 28), and the judgement board forgets every confirmation, so the
   * taint eviction controller's hold keeps each deletion for these taints until the node is
   * confirmed again from what this controller sees from now on (src/kube/judgements.ts).
   */
  #sightReturned(): void {
    this.#sawCluster = true;
    this.#sightEpoch++;
    this.#zonesBeforeSight = true;
    this.freshGracePeriod(this.#d.clock.now());
    for (const [name, h] of this.#health) if (savedReadyCondition(h)?.status === 'Unknown') this.#rejudge.add(name);
    this.#d.judgements?.started();
    this.#d.log.warn({ nodes: this.#health.size, rejudging: this.#rejudge.size }, 'API server visible again: every node gets a full grace period from now, and no verdict reached before is acted on until the node is judged again');
  }

  /**
   * Every node's probe and ready transition timestamps become `nowMs` (epoch ms): a full grace
   * period from now (on regained sight, and as upstream when the all-zones stop ends).
   */
  freshGracePeriod(nowMs: number): void {
    for (const [name, h] of this.#health) this.#health.set(name, { ...h, probeTimestamp: nowMs, readyTransitionTimestamp: nowMs });
  }

  #ensureRegistered(node: Node): void {
    if (this.#known.has(node.name)) return;
    const zone = getZoneKey(node.labels);
    this.#known.set(node.name, { uid: node.uid, zone });
    this.#l.zones.ensureZone(zone);
    recordEvent(this.#d.events, { kind: 'Node', name: node.name, uid: node.uid }, registeredNodeEvent(node.name));
    this.#d.log.info({ node: node.name, zone: formatZoneKey(zone) }, 'Registered node in controller');
  }

  /**
   * Reads a node's caches and runs the pure health observation, persisting the record. Returns
   * undefined when the node is gone or the controller cannot see the cluster. Synchronous and
   * idempotent: observing again without a new heartbeat yields the same decision.
   */
  #observe(name: string): Observed | undefined {
    if (this.#l.stopped()) return undefined;
    const node = this.#d.caches.nodes.get(name);
    if (!node) return undefined;
    // Deliberate difference 24: the cached copy is stale (its newest version is malformed). Upstream's
    // status write from its stale copy conflicts and the re-GET cannot be decoded, so it skips the
    // node ("Skipping - no pods will be evicted"); we neither judge it nor act on it until it can be
    // read (its readable version arrives as an update, which observes it again). Zone states still
    // count it as last judged.
    if (newestUnreadable(this.#d.caches.nodes, name)) return undefined;
    if (!this.#checkSight()) return undefined;
    if (this.#breaker.cacheBehind()) return undefined;
    this.#ensureRegistered(node);
    const lease = this.#d.caches.leases.get(leaseKey(name));
    const now = this.#d.clock.now();
    const obs = observeNodeHealth(this.#health.get(name), node, lease, now, this.#healthOpts);
    this.#health.set(name, obs.health);
    // Difference 28: judged again from what it sees since sight returned: a Ready condition that is
    // no longer the Unknown it wrote before (the kubelet's report), or a whole grace period of silence.
    if (this.#rejudge.has(name) && (obs.currentReady?.status !== 'Unknown' || obs.expired)) this.#rejudge.delete(name);
    // The taint eviction controller's hold reads this (src/kube/judgements.ts).
    this.#d.judgements?.observed(name, { ready: readyStatusOf(obs.currentReady), expired: obs.expired, gracePeriodMs: obs.gracePeriodMs }, now);
    return { name, node, lease, obs };
  }

  /**
   * Whether `o` is an expired node the controller is about to act on, so that the Lease circuit
   * breaker must read its Lease live first: a status write (Unknown), or, on a not-Ready node, a
   * NoExecute taint to queue or swap (taint mode) or pods past `--pod-eviction-timeout` (legacy):
   * {@link NodeReaction.wouldAct}.
   * Deliberate difference 18 (docs/node-lifecycle.md): upstream reads the Lease of every expired
   * node on every pass, also when nothing would follow.
   */
  #needsLiveLeaseCheck(o: Observed): boolean {
    if (!this.#breaker.enabled || !o.obs.expired) return false;
    if (o.obs.needsStatusUpdate) return true;
    const ready = o.obs.currentReady;
    if (!ready || ready.status === 'True') return false; // a Ready node only loses taints
    return this.#l.reaction.wouldAct(o.node, ready);
  }

  /** After an observation (and any status write): re-arm the deadline and recompute zones on a Ready flip. */
  #afterObservation(o: Observed): void {
    this.#scheduleDeadline(o.name, o.node.uid, o.obs.gracePeriodMs);
    const readyStatus = o.obs.currentReady?.status;
    const seenBefore = this.#lastReady.has(o.name);
    const before = this.#lastReady.get(o.name);
    if (!seenBefore || before !== readyStatus) {
      this.#lastReady.set(o.name, readyStatus);
      // A Ready flip may change its zone's state: it is recomputed before any tainting decision
      // reads it, once for a burst of flips (a recompute visits every node). A first
      // sight is not a flip; the monitor pass computes zones once after all first sights.
      if (seenBefore) this.#l.zones.readyFlipped(getZoneKey(o.node.labels), before, readyStatus);
    }
  }

  /**
   * The monitor pass's per-node step, synchronous (also run on every Node and Lease event:
   * deliberate differences 1 and 2). A node that needs no API call (the steady state of a healthy
   * cluster) is handled here, without the work queue; one that needs a write is handed to the
   * health queue, which observes it again (idempotent) and acts. This keeps a pass over 5,000
   * healthy nodes free of per-node promise and queue overhead.
   * @param timed observe `node_collector_update_node_health_duration_seconds`: the monitor pass
   *   does, once per node as upstream's pass; Lease and Node events (100/s at 1,000 nodes) do not,
   *   so the histogram counts what upstream's counts and the event path skips its cost (steady-state CPU).
   * @returns true when the node was handed to the health queue.
   */
  monitorOne(name: string, timed = false): boolean {
    const by = timed ? 'pass' : 'event';
    if (this.#inFlight.has(name)) {
      this.#queueHealth(name, by);
      return true;
    }
    const endTimer = timed ? this.#d.metrics.updateNodeHealthDuration.startTimer() : undefined;
    try {
      const o = this.#observe(name);
      if (!o) return false;
      if (o.obs.needsStatusUpdate || this.#needsLiveLeaseCheck(o)) {
        this.#queueHealth(name, by);
        return true;
      }
      this.#afterObservation(o);
      if (o.obs.currentReady && !this.#actSync(o, o.node, o.obs.currentReady)) {
        this.#queueHealth(name, by);
        return true;
      }
      return false;
    } finally {
      endTimer?.();
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
   * not for the health queue to idle (Lease events keep a busy queue from ever
   * idling, which starved the pass, its zone states and its pod resync), and at most one monitor
   * period (a status write that hangs must not stop the passes; zone states are recomputed after
   * every Ready flip anyway, before anything reads them).
   */
  async #awaitHealthSyncs(syncs: readonly Promise<void>[]): Promise<void> {
    if (syncs.length === 0) return;
    let timer: TimerHandle | undefined;
    const bound = new Promise<void>((resolve) => (timer = this.#d.clock.setTimeout(resolve, this.#d.config.nodeMonitorPeriodMs)));
    try {
      await Promise.race([Promise.all(syncs), bound]);
    } finally {
      timer?.cancel();
    }
  }

  /** Hands `name` to the health queue, noting what first queued it (for the debug line). */
  #queueHealth(name: string, by: 'deadline' | 'pass' | 'event'): void {
    if (!this.#healthQueuedBy.has(name)) this.#healthQueuedBy.set(name, by);
    this.#healthQueue.add(name);
  }

  /**
   * The per-node body of `monitorNodeHealth` (`updateNodeFunc` + `tryUpdateNodeHealth`), run by the
   * health queue. Logs one debug line per sync: how long the node waited in the queue and by what it
   * was queued (`retry`: the queue's own backoff), the time of each stage, and where it ended.
   * @param queuedMs how long it waited in the queue, milliseconds (the queue's own measure).
   */
  async #syncNodeHealth(name: string, queuedMs: number): Promise<void> {
    const startMs = this.#d.clock.now();
    const queuedBy = this.#healthQueuedBy.get(name) ?? 'retry';
    this.#healthQueuedBy.delete(name);
    const stages: HealthSyncStages = { end: 'not judged' };
    this.#inFlight.add(name);
    try {
      await this.#syncNodeHealthLocked(name, stages);
    } finally {
      this.#inFlight.delete(name);
      this.#resolveHealthWaiters(name);
      this.#l.healthSyncDone(name);
      const ms = this.#d.clock.now() - startMs;
      this.#d.log.debug({ node: name, queuedBy, queuedMs, ms, ...stages }, 'node health sync done');
    }
  }

  async #syncNodeHealthLocked(name: string, stages: HealthSyncStages): Promise<void> {
    const clock = this.#d.clock;
    let o = this.#observe(name);
    if (!o) return;
    if (this.#needsLiveLeaseCheck(o)) {
      const readFrom = clock.now();
      stages.end = 'live Lease read failed';
      const allowed = await this.#breaker.allows(o.name, o.obs.health.lease?.resourceVersion).finally(() => (stages.liveReadMs = clock.now() - readFrom));
      stages.end = 'held by the live Lease read';
      if (!allowed) return;
      // The read took a round trip: decide again on the caches as they are now (a renewal seen
      // meanwhile ends the expiry), and act only on the Lease the read confirmed.
      const again = this.#observe(name);
      stages.end = 'not judged after the live Lease read';
      if (!again) return;
      stages.end = 'a newer Lease after the live read';
      if (this.#needsLiveLeaseCheck(again) && again.obs.health.lease?.resourceVersion !== o.obs.health.lease?.resourceVersion) return;
      o = again;
    }
    stages.end = 'no status write';
    const { node, lease } = o;
    const endTimer = this.#d.metrics.updateNodeHealthDuration.startTimer();
    let current: Node = node;
    try {
      if (o.obs.needsStatusUpdate) {
        const before = o.obs.health;
        const writeFrom = clock.now();
        const { result, node: written } = await this.#d.writes
          .updateNodeConditions(
            name,
            node,
            (fresh) => {
              // After a conflict the node changed under us (maybe a heartbeat): decide again on it.
              if (fresh !== node) {
                o.obs = observeNodeHealth(before, fresh, lease, this.#d.clock.now(), this.#healthOpts);
                this.#health.set(name, o.obs.health);
              }
              return o.obs.needsStatusUpdate ? o.obs.unknownConditions : undefined;
            },
            () => this.#stillMarksUnknown(name, lease),
          )
          .finally(() => (stages.writeMs = clock.now() - writeFrom));
        stages.end = result === 'gone' ? 'node gone' : `status ${result}`;
        if (result === 'gone') return;
        if (result === 'written' && o.obs.healthAfterStatusUpdate) {
          this.#health.set(name, o.obs.healthAfterStatusUpdate);
          this.#d.log.info({ node: name, zone: formatZoneKey(getZoneKey(node.labels)) }, 'Node stopped posting status: conditions set to Unknown');
        }
        if (written) current = written;
      }
    } catch (err) {
      if (isNotCalledFor(err)) {
        // Decided again when its turn in the throttle came, and no longer called for. Not retried:
        // what changed the view queues the node again (a Lease event, sight regained; level-based).
        stages.end = 'status write not sent';
        this.#d.log.info({ node: name, why: err.reason }, 'Unknown mark not sent: no longer called for when its turn came');
        return;
      }
      // Upstream: "Update health of Node from Controller error, Skipping - no pods will be evicted".
      stages.end = 'status write failed';
      this.#d.log.warn({ node: name, err: describeError(err) }, 'updating node health failed; retrying');
      throw err; // the work queue retries with backoff
    } finally {
      endTimer();
    }
    this.#afterObservation(o);
    const currentReady = o.obs.currentReady;
    if (!currentReady) return;
    if (this.#actSync(o, current, currentReady)) return;
    // Taint mode: `processTaintBaseEviction`; legacy: 1.20 `processNoTaintBaseEviction`.
    const acting = this.#l.reaction.act(current, currentReady);
    if (acting) {
      const actFrom = clock.now();
      await acting.finally(() => (stages.actMs = clock.now() - actFrom));
    }
    if (isReadyToNotReadyTransition(o.obs.observedReady, currentReady)) {
      recordEvent(this.#d.events, { kind: 'Node', name, uid: node.uid }, nodeNotReadyEvent(name));
      this.#l.pods.queuePodsNotReady(name);
    }
  }

  /**
   * The Unknown mark decided again right before its patch is sent (src/kube/throttle.ts
   * `WriteRecheck`, issue 53 item 4): the controller still runs and sees the cluster, and the
   * node's Lease in the cache is still `lease`, the one the mark was decided on (and, with the
   * circuit breaker, confirmed live). A renewal that arrived while the write waited for its turn
   * withholds the mark; its Lease event queues a new health sync. Deliberate difference from
   * upstream (`tryUpdateNodeHealth` sends its `UpdateStatus` after the client's rate-limiter wait
   * on the decision taken before it): it can only withhold or delay a mark.
   * @returns why the mark is no longer called for, or `undefined`.
   */
  #stillMarksUnknown(name: string, lease: Lease | undefined): string | undefined {
    if (this.#l.stopped()) return 'the controller stopped';
    if (!this.#d.canSeeCluster()) return 'the controller cannot see the cluster';
    const now = this.#d.caches.leases.get(leaseKey(name));
    if (now?.resourceVersion !== lease?.resourceVersion) return `the node's Lease changed (resourceVersion ${lease?.resourceVersion ?? 'none'} → ${now?.resourceVersion ?? 'none'})`;
    return undefined;
  }

  /**
   * Does the post-observation work when none of it needs an API call (no taint to swap or remove,
   * no pods to mark), and returns true; returns false, doing nothing, when an API call is needed.
   */
  #actSync(o: Observed, node: Node, ready: NodeCondition): boolean {
    if (isReadyToNotReadyTransition(o.obs.observedReady, ready)) return false;
    return this.#l.reaction.actSync(node, ready);
  }

  /** Arms one timer at the node's probe deadline (and, in legacy mode, its pod eviction deadline). */
  #scheduleDeadline(name: string, uid: string, gracePeriodMs: number): void {
    const h = this.#health.get(name);
    if (!h) return;
    const now = this.#d.clock.now();
    const ready = savedReadyCondition(h)?.status;
    let at = ready === 'Unknown' ? Infinity : nextProbeDeadline(h, gracePeriodMs);
    if (this.#l.reaction.deadline) at = Math.min(at, this.#l.reaction.deadline(h, ready));
    if (Number.isFinite(at) && at > now) {
      if (this.#deadlines.get(name)?.atMs !== at) this.#deadlines.schedule(name, uid, at, name);
    } else this.#deadlines.cancel(name);
  }

  /** The nodes part of {@link NodeLifecycleView}. Times are epoch ms. */
  nodeViews(): NodeLifecycleView['nodes'] {
    return [...this.#known.entries()].map(([name, info]) => {
      const h = this.#health.get(name);
      const out: NodeLifecycleView['nodes'][number] = {
        name,
        zone: formatZoneKey(info.zone),
        queued: this.#l.zones.isQueued(info.zone, name),
      };
      const ready = savedReadyCondition(h)?.status;
      if (ready !== undefined) out.ready = ready;
      if (h) out.probeTimestamp = h.probeTimestamp;
      const d = this.#deadlines.get(name);
      if (d) out.probeDeadline = d.atMs;
      return out;
    });
  }
}
