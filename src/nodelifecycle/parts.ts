/**
 * The one seam of the node lifecycle controller. Everything the parts share lives here, so each
 * part imports this file and pure modules only, never controller.ts:
 * - what the controller is given ({@link NodeLifecycleDeps}: config, caches, writes, events,
 *   metrics, clock, logger, {@link LeaseCircuitBreakerIO}) and what it shows
 *   ({@link NodeLifecycleView}, {@link ZoneView});
 * - the slice of those deps each part is built with (`*Deps`): a part sees only what it uses;
 * - what each part may ask of the others (`*Links`, and the readers they are made of), which
 *   controller.ts wires.
 *
 * The parts:
 * - monitor.ts: node health (monitor pass, probe deadlines, the health queue, the Lease circuit
 *   breaker's live read, leasecircuitbreaker.ts);
 * - podreadiness.ts: pod readiness (the pod queue: NotReady marking, its resync and its hold);
 * - noschedule.ts: the NoSchedule condition-taint pass and label reconciliation;
 * - tainting.ts: zone states, the zone queues, the NoExecute tainting pass (and the one gate before
 *   a NoExecute taint or a legacy eviction); its helpers: the pending Ready flips (readyflips.ts),
 *   the zone pause explanations (zonepauses.ts), the eviction guards' hold (guardhold.ts);
 * - legacyeviction.ts: 1.20's direct pod eviction (`--enable-taint-manager=false`).
 */
import type { Lease, Node, NodeCondition, Pod } from '../kube/objects.js';
import type { EventObjectRef, EventSink, ReadStore } from '../kube/types.js';
import type { NodeJudgementSink } from '../kube/judgements.js';
import type { Logger } from '../log/logger.js';
import type { NodeCollectorMetrics } from '../metrics/registry.js';
import type { Clock } from '../util/clock.js';
import type { EvictionGuardsConfig, EvictionGuardView } from './guard.js';
import type { NodeHealth, NodeLifecycleEvent } from './health.js';
import type { TimedValue, TryResult } from './timedqueue.js';
import type { NodeLifecycleWriter } from './writer.js';
import type { ZoneState } from './zones.js';

// ---------------------------------------------------------------------------------------------
// What the controller is given.
// ---------------------------------------------------------------------------------------------

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
   * Ours: the cluster-wide eviction guards, `--max-unhealthy-nodes` and storm detection
   * (guard.ts, `evictionGuardsConfig`). Absent or `{}`: both off, as kube-controller-manager.
   */
  evictionGuards?: EvictionGuardsConfig;
}

/** The informer caches the controller reads. Lease keys are `kube-node-lease/<node>`; pod keys `ns/name`. */
export interface NodeLifecycleCaches {
  /**
   * `newestUnreadable(name)`: the cache holds only the last readable version of the node (its newest
   * is malformed; src/kube/informercache.ts); the controller counts it in zone states but takes no
   * decision on it and writes nothing to it (unreadable.ts). Absent: every cached node is current.
   */
  nodes: ReadStore<Node> & { newestUnreadable?(name: string): boolean };
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
   * True while the node and lease caches are synced and each has its watch stream right now (no
   * reconnect allowance): what {@link NodeLifecycleController.sightChanged} records at each
   * transition (src/kube/sight.ts). Absent: `canSeeCluster` stands in.
   */
  watchingCluster?: () => boolean;
  /**
   * `NodeControllerLeaseCircuitBreaker` (default on, as in 1.37): before an expired node is acted
   * on, its Lease is read live; absent when the gate is off (1.36 behaviour: the cache decides).
   */
  leaseCircuitBreaker?: LeaseCircuitBreakerIO;
  /**
   * Where the controller publishes, per node, whether it has confirmed the node not Ready from its
   * own observations since its start (src/kube/judgements.ts); the taint eviction controller holds
   * deletions for the taints this controller manages until then. Absent: nobody listens.
   */
  judgements?: NodeJudgementSink;
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

// ---------------------------------------------------------------------------------------------
// What the controller shows.
// ---------------------------------------------------------------------------------------------

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
  /** The cluster-wide eviction guards that are configured; empty when both are off. */
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

// ---------------------------------------------------------------------------------------------
// The slice of the deps each part is built with. NodeLifecycleDeps satisfies every one of them;
// a test builds a part from its slice alone.
// ---------------------------------------------------------------------------------------------

/** The health part's deps (monitor.ts): it drives the others, so it reads most of them. */
export interface HealthMonitorDeps {
  config: Pick<NodeLifecycleConfig, 'nodeMonitorPeriodMs' | 'nodeMonitorGracePeriodMs' | 'nodeStartupGracePeriodMs'>;
  clock: Clock;
  log: Logger;
  caches: Pick<NodeLifecycleCaches, 'nodes' | 'leases'>;
  writes: Pick<NodeLifecycleWrites, 'updateNodeConditions'>;
  events: EventSink;
  metrics: Pick<NodeCollectorMetrics, 'updateNodeHealthDuration' | 'updateAllNodesHealthDuration'>;
  canSeeCluster: () => boolean;
  watchingCluster?: () => boolean;
  leaseCircuitBreaker?: LeaseCircuitBreakerIO;
  judgements?: NodeJudgementSink;
}

/** The pod readiness part's deps (podreadiness.ts). */
export interface PodReadinessDeps {
  config: Pick<NodeLifecycleConfig, 'nodeMonitorGracePeriodMs'>;
  clock: Clock;
  log: Logger;
  /** Read right before each NotReady mark is sent (its send-time re-decision). */
  canSeeCluster: () => boolean;
  caches: Pick<NodeLifecycleCaches, 'nodes' | 'pods'>;
  writes: Pick<NodeLifecycleWrites, 'markPodNotReady'>;
  events: EventSink;
  metrics: Pick<NodeCollectorMetrics, 'podMarkingHeldNodes'>;
}

/** The NoSchedule part's deps (noschedule.ts). */
export interface NoScheduleDeps {
  clock: Clock;
  log: Logger;
  caches: Pick<NodeLifecycleCaches, 'nodes'>;
  canSeeCluster: () => boolean;
  writes: Pick<NodeLifecycleWrites, 'swapNodeTaints' | 'patchNodeLabels'>;
}

/** The zone part's deps (tainting.ts, with readyflips.ts, zonepauses.ts and guardhold.ts). */
export interface ZoneTaintingDeps {
  config: Pick<
    NodeLifecycleConfig,
    | 'nodeMonitorGracePeriodMs'
    | 'nodeEvictionRate'
    | 'secondaryNodeEvictionRate'
    | 'largeClusterSizeThreshold'
    | 'unhealthyZoneThreshold'
    | 'enableTaintManager'
    | 'evictionGuards'
  >;
  clock: Clock;
  log: Logger;
  caches: Pick<NodeLifecycleCaches, 'nodes' | 'leases'>;
  writes: Pick<NodeLifecycleWrites, 'swapNodeTaints'>;
  events: EventSink;
  metrics: Pick<
    NodeCollectorMetrics,
    | 'zoneHealth'
    | 'zoneSize'
    | 'unhealthyNodesInZone'
    | 'evictionsTotal'
    | 'zoneTaintingRate'
    | 'zoneEvictionPaused'
    | 'zoneTaintingQueueLength'
    | 'evictionCircuitOpen'
    | 'evictionCircuitStartHold'
  >;
  canSeeCluster: () => boolean;
}

/** The legacy eviction part's deps (legacyeviction.ts). */
export interface LegacyEvictionDeps {
  config: Pick<NodeLifecycleConfig, 'podEvictionTimeoutMs'>;
  clock: Clock;
  log: Logger;
  caches: Pick<NodeLifecycleCaches, 'nodes' | 'pods' | 'daemonSets'>;
  writes: Pick<NodeLifecycleWrites, 'evictPodLegacy'>;
  events: EventSink;
  metrics: Pick<NodeCollectorMetrics, 'evictionsTotal'>;
  canSeeCluster: () => boolean;
}

// ---------------------------------------------------------------------------------------------
// What the parts may ask of each other.
// ---------------------------------------------------------------------------------------------

export const NODE_WORKERS = 8; // upstream nodeUpdateWorkerSize

/** What the other parts may read of the health part (monitor.ts). */
export interface NodeHealthReader {
  /** The node's saved health record (epoch ms timestamps, saved conditions); undefined before its first observation. */
  health(name: string): NodeHealth | undefined;
  /** The UID and zone key of a node the controller has registered; undefined otherwise. */
  registration(name: string): { uid: string; zone: string } | undefined;
  /** The Ready status the node was last judged with (undefined: no Ready condition, or never judged). */
  lastReady(name: string): string | undefined;
  /** Every registered node with its UID and zone key, in registration order (a live view: do not register while iterating). */
  registered(): IterableIterator<[name: string, registration: { uid: string; zone: string }]>;
  /**
   * Why the node's not-Ready verdict is on hold: it was reached before the controller last lost
   * sight of the cluster and has not been reached again since sight returned (deliberate
   * difference 28); `undefined` otherwise. Nothing is done on such a verdict: no NoExecute taint,
   * no pod marked NotReady.
   */
  rejudging(name: string): string | undefined;
}

/** What legacy eviction needs of the pod readiness part (podreadiness.ts). */
export interface PodQueue {
  /** True during the all-zones stop and one grace period after it: no pod is marked NotReady or deleted. */
  podMarkingHeld(): boolean;
  /** Hands a pod (key `ns/name`) to the pod queue, which re-checks it. */
  queuePod(key: string): void;
}

/**
 * What the health part hands a judged node to: NoExecute tainting (tainting.ts, taint mode) or
 * legacy eviction (legacyeviction.ts). `ready` is the node's current Ready condition.
 */
export interface NodeReaction {
  /** For the Lease circuit breaker: whether a not-Ready node would be acted on now (taint queued or swapped, pods evicted). */
  wouldAct(node: Node, ready: NodeCondition): boolean;
  /** Acts when no API call is needed and returns true; returns false, doing nothing, when one is. */
  actSync(node: Node, ready: NodeCondition): boolean;
  /** Acts, with API calls; a returned promise is awaited by the health sync. Throws nothing it cannot retry. */
  act(node: Node, ready: NodeCondition): Promise<void> | void;
  /** Legacy only: the epoch ms at which the node must be judged again for eviction (Infinity: none). */
  deadline?(health: NodeHealth, ready: string | undefined): number;
  /**
   * Legacy only: when the pod must be deleted instead of marked NotReady, starts that and returns
   * the promise; undefined when the pod is left to NotReady marking. Decided synchronously.
   */
  processPod?(pod: Pod, health: NodeHealth, ready: string | undefined): Promise<unknown> | undefined;
}

/** What the health part needs of the zone part (tainting.ts). */
export interface ZoneStatesForHealth {
  /** Mirrors `addPodEvictorForNewZone`: a new zone starts Initial with a full-rate queue. */
  ensureZone(zone: string): void;
  /** Drops a node from its zone's queue. */
  dequeue(zone: string, name: string): boolean;
  /** Recomputes zone states (upstream `handleDisruption`). */
  handleDisruption(): void;
  /** A node's Ready status flipped (`from` -> `to`; `zone` its zone key): zone states are recomputed before anything reads them. */
  readyFlipped(zone: string, from: string | undefined, to: string | undefined): void;
  /** True while every zone is FullDisruption (the all-zones stop). */
  allZonesStopped(): boolean;
  /** Whether the node is in its zone's queue (waiting or being processed), for the view. */
  isQueued(zone: string, name: string): boolean;
}

/** How long a zone-queue entry the gate (`ZoneTainting.admits`) held waits before it is tried again, ms. */
export const GATE_HOLD_RETRY_MS = 1000;

/** Kinds of action the gate of tainting.ts admits (see `ZoneTainting.admits`). */
export type NoExecuteAction = 'NoExecuteTaint' | 'LegacyEviction';

/** What legacy eviction needs of the zone part (tainting.ts): the zone queue doubles as the eviction queue. */
export interface ZoneQueuesForEviction {
  ensureZone(zone: string): void;
  /** @returns true when the node was newly queued. */
  enqueue(zone: string, name: string, uid: string): boolean;
  /** @returns true when the node was queued. */
  dequeue(zone: string, name: string): boolean;
  /** Runs the tainting/eviction pass now instead of in up to 100 ms. */
  kickPass(): void;
  /** The gate every NoExecute taint and legacy eviction passes (true: go ahead). */
  admits(action: NoExecuteAction, zone: string, name: string): boolean;
}

/** What the zone part needs of legacy eviction (legacyeviction.ts). */
export interface LegacyEvictionForZones {
  /** 1.20 `doEvictionPass` for one zone-queue entry. */
  evictOne(zone: string, v: TimedValue): Promise<TryResult>;
  /** The all-zones stop began: 1.20 cancels every node's eviction (`nodeEvictionMap` unmarked). */
  forgetEvictions(): void;
}

/** The other parts as the health part (monitor.ts) sees them. */
export interface HealthMonitorLinks {
  /** True once the controller was stopped (or before it started). */
  stopped(): boolean;
  zones: ZoneStatesForHealth;
  /** NoExecute tainting (taint mode) or legacy eviction. */
  reaction: NodeReaction;
  /** Pod readiness: the pods of a node that just turned not-Ready, and the resync of every pass. */
  pods: { queuePodsNotReady(nodeName: string): void; resyncPodReadiness(): void };
  /** A health sync of the node finished (the NoSchedule pass may have waited for it). */
  healthSyncDone(name: string): void;
  /** The monitor pass found a registered node gone from the cache. */
  nodeRemoved(name: string, zone: string): void;
}

/** The other parts as the pod readiness part (podreadiness.ts) sees them. */
export interface PodReadinessLinks {
  health: NodeHealthReader;
  /** True while every zone is FullDisruption (the all-zones stop). */
  allZonesStopped(): boolean;
  /** Legacy eviction's pod rule (`NodeReaction.processPod`); absent in taint mode. */
  processPod?: NodeReaction['processPod'];
}

/** The other parts as the NoSchedule part (noschedule.ts) sees them. */
export interface NoScheduleLinks {
  /** True while the health part syncs the node (its status write may not be in the cache yet). */
  healthSyncRunning(name: string): boolean;
  /**
   * True while the zone part's NoExecute taint write of the node is coming: the node waits in (or
   * is being written from) its zone's taint queue, and the zone's rate is above 0. That write
   * carries the node's condition taints (deliberate difference 12). Always false in legacy mode.
   */
  noExecuteTaintPending(node: Node): boolean;
  /**
   * Why the node's Unknown verdict, reached before the controller lost sight of the cluster, is on
   * hold until the node is judged again (deliberate difference 28, monitor.ts); `undefined` when it
   * is not.
   */
  rejudging(name: string): string | undefined;
}

/** The other parts as the zone part (tainting.ts) sees them. */
export interface ZoneTaintingLinks {
  /** True once the controller was stopped (or before it started). */
  stopped(): boolean;
  health: NodeHealthReader;
  /** The all-zones stop ended at `nowMs` (epoch ms): the health part gives every node a fresh grace period. */
  allZonesStopEnded(nowMs: number): void;
  /** Legacy eviction: drains the zone queues in legacy mode; forgets evictions on the all-zones stop. */
  legacy: LegacyEvictionForZones;
  /** A NoExecute taint attempt of the node ended (written or not): the NoSchedule part re-checks it. */
  noExecuteTaintDone(name: string): void;
}

/** The other parts as the legacy eviction part (legacyeviction.ts) sees them. */
export interface LegacyEvictionLinks {
  health: NodeHealthReader;
  pods: PodQueue;
  /** The zone queues (which double as eviction queues) and the gate. */
  zones: ZoneQueuesForEviction;
}

/** Records a node lifecycle Event. */
export function recordEvent(events: EventSink, ref: EventObjectRef, e: NodeLifecycleEvent): void {
  events.record(ref, e.type, e.reason, e.message);
}
