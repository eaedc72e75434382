/**
 * The seams between the parts of the node lifecycle controller. Each part owns one loop and its
 * state and sees the others only through the interfaces below, which controller.ts wires:
 * - monitor.ts: node health (monitor pass, probe deadlines, the health queue, the Lease circuit
 *   breaker's live read);
 * - podreadiness.ts: pod readiness (the pod queue: NotReady marking, its resync and its hold);
 * - noschedule.ts: the NoSchedule condition-taint pass and label reconciliation;
 * - tainting.ts: zone states, the zone queues, the NoExecute tainting pass and the pause
 *   explanations (and the one gate before a NoExecute taint or a legacy eviction);
 * - legacyeviction.ts: 1.20's direct pod eviction (`--enable-taint-manager=false`).
 */
import type { Node, NodeCondition, Pod } from '../kube/objects.js';
import type { EventObjectRef, EventSink } from '../kube/types.js';
import type { NodeHealth, NodeLifecycleEvent } from './health.js';
import type { TimedValue, TryResult } from './timedqueue.js';

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

/** Records a node lifecycle Event. */
export function recordEvent(events: EventSink, ref: EventObjectRef, e: NodeLifecycleEvent): void {
  events.record(ref, e.type, e.reason, e.message);
}
