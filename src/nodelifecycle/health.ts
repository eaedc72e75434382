/**
 * The node-health state machine of the node lifecycle controller, as pure functions.
 *
 * No I/O, no timers, no clock: every function takes "now" as epoch **milliseconds** and returns
 * new records. The controller shell keeps one {@link NodeHealth} per node (upstream
 * `nodeHealthMap`), feeds it to {@link observeNodeHealth} on every monitor pass, writes node status
 * when told to, and persists the returned record.
 *
 * Upstream sources mirrored: `pkg/controller/nodelifecycle/node_lifecycle_controller.go`
 * (`nodeHealthData`, `tryUpdateNodeHealth`, `monitorNodeHealth`, `handleDisruption`, `processPod`,
 * `RecordNodeStatusChange`) and `pkg/controller/util/node/controller_utils.go` (`MarkPodsNotReady`,
 * `RecordNodeEvent`), described in upstream-node-lifecycle.md §2.7, §2.8, §2.17–§2.19, §2.21.
 */

import { getCondition } from '../kube/objects.js';
import type { Lease, Node, NodeCondition, Pod } from '../kube/objects.js';
import { NODE_DISK_PRESSURE, NODE_MEMORY_PRESSURE, NODE_PID_PRESSURE, NODE_READY } from '../kube/taints.js';

/**
 * The part of a node Lease the controller remembers: `renewTime` (epoch ms) decides whether it
 * renewed; `resourceVersion` is what the live read of `NodeControllerLeaseCircuitBreaker` compares
 * (see {@link liveLeaseVerdict}).
 */
export interface SavedLease {
  /** epoch ms; absent when the Lease had no `spec.renewTime`. */
  readonly renewTime?: number;
  /** `metadata.resourceVersion` of the Lease as seen when it renewed; absent when unknown. */
  readonly resourceVersion?: string;
  /**
   * True once a monitor pass has run since this renewal was saved ({@link leaseSeenByPass}). Until
   * then a newer version of the same renewal (same `renewTime`) replaces it, as upstream's pass,
   * which reads the lister only then, saves the newest version it finds (see {@link observeNodeHealth}).
   */
  readonly seenByPass?: boolean;
}

/**
 * What the controller remembers about one node between monitor passes.
 * Mirrors upstream `nodeHealthData { probeTimestamp, readyTransitionTimestamp, status, lease }`.
 */
export interface NodeHealth {
  /**
   * epoch ms, **controller-local** time at which the controller last saw a heartbeat (a change of
   * Ready.lastHeartbeatTime, or a Lease renewal). Never the kubelet's own timestamp, so node clock
   * skew does not matter.
   */
  readonly probeTimestamp: number;
  /** epoch ms at which the controller last saw the Ready condition transition. Informational. */
  readonly readyTransitionTimestamp: number;
  /**
   * Snapshot of the node's `status.conditions` as last saved (upstream `nodeHealth.status`). Its
   * Ready condition is "the saved Ready condition"; `processPod` decides on it.
   */
  readonly conditions: readonly NodeCondition[];
  /** The last Lease seen to renew, if any (upstream `nodeHealth.lease`). */
  readonly lease?: SavedLease;
}

/** Grace periods, in **milliseconds**. */
export interface NodeHealthOptions {
  /** `--node-monitor-grace-period` (default 50 s): grace for nodes that have a Ready condition. */
  nodeMonitorGracePeriodMs: number;
  /** `--node-startup-grace-period` (default 60 s): grace for nodes without a Ready condition. */
  nodeStartupGracePeriodMs: number;
}

/** The outcome of one {@link observeNodeHealth} call. */
export interface NodeHealthObservation {
  /**
   * The record to persist now. Mirrors upstream's deferred `nodeHealthMap.set`: it is also the
   * record to keep when the status write was needed but failed.
   */
  health: NodeHealth;
  /**
   * The record to persist instead once the status write succeeded (present iff
   * `needsStatusUpdate`): the written conditions, the same probe timestamp, readyTransition = now,
   * and the Lease as observed.
   */
  healthAfterStatusUpdate?: NodeHealth;
  /** The grace period that applied, in milliseconds (monitor grace or startup grace). */
  gracePeriodMs: number;
  /**
   * The Ready condition as the node carried it **before** this observation (a synthetic Unknown
   * one, dated at creation, when the node has none). Taint-based eviction decides on this.
   * May be the cached node's own object (no copy per observation: observations run on every Node and Lease event): never mutate it.
   */
  observedReady: Readonly<NodeCondition>;
  /**
   * The Ready condition **after** the controller's own Unknown-marking; `undefined` when the node
   * has no Ready condition and the startup grace has not expired. May be the cached node's own
   * object when nothing was marked (no copy per observation): never mutate it.
   */
  currentReady?: Readonly<NodeCondition>;
  /**
   * The node's full `status.conditions` to write (Ready/MemoryPressure/DiskPressure/PIDPressure
   * set Unknown, others as they were); present iff `needsStatusUpdate`.
   */
  unknownConditions?: NodeCondition[];
  /** True when the grace period expired and the Ready condition changed, so status must be written. */
  needsStatusUpdate: boolean;
  /**
   * True when `now > probeTimestamp + grace`: upstream's branch that, with
   * `NodeControllerLeaseCircuitBreaker`, reads the Lease live before acting (see {@link liveLeaseVerdict}).
   */
  expired: boolean;
}

/** Reason upstream writes on a condition it turns Unknown. */
export const REASON_NODE_STATUS_UNKNOWN = 'NodeStatusUnknown';
/** Message upstream writes on a condition it turns Unknown. */
export const MESSAGE_NODE_STATUS_UNKNOWN = 'Kubelet stopped posting node status.';
/** Reason upstream writes on a condition the kubelet never posted. */
export const REASON_NODE_STATUS_NEVER_UPDATED = 'NodeStatusNeverUpdated';
/** Message upstream writes on a condition the kubelet never posted. */
export const MESSAGE_NODE_STATUS_NEVER_UPDATED = 'Kubelet never posted node status.';

/** Conditions the controller turns Unknown on a silent node. NetworkUnavailable is left alone: the control plane owns it. */
const CONDITIONS_MARKED_UNKNOWN: readonly string[] = [NODE_READY, NODE_MEMORY_PRESSURE, NODE_DISK_PRESSURE, NODE_PID_PRESSURE];

/**
 * Semantic equality of two node conditions (absent reason/message ≡ `""`, times compared exactly).
 * Mirrors `apiequality.Semantic.DeepEqual` on `v1.NodeCondition`.
 */
export function nodeConditionsEqual(a: Readonly<NodeCondition> | undefined, b: Readonly<NodeCondition> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    a.lastHeartbeatTime === b.lastHeartbeatTime &&
    a.lastTransitionTime === b.lastTransitionTime
  );
}

/** `MicroTime.Before`: false when either side is absent. */
function renewedBefore(saved: SavedLease, observed: Pick<Lease, 'renewTime'>): boolean {
  return saved.renewTime !== undefined && observed.renewTime !== undefined && saved.renewTime < observed.renewTime;
}

/**
 * Whether `observed` is another version of the renewal `saved` holds, and no monitor pass has run
 * since it was saved: the same `renewTime` (present on both), another resourceVersion.
 */
function sameRenewalNewerVersion(saved: SavedLease, observed: Pick<Lease, 'renewTime' | 'resourceVersion'>): boolean {
  return saved.seenByPass !== true && saved.renewTime !== undefined && saved.renewTime === observed.renewTime && saved.resourceVersion !== observed.resourceVersion;
}

function savedLeaseOf(lease: Pick<Lease, 'renewTime' | 'resourceVersion'>): SavedLease {
  return lease.renewTime === undefined ? { resourceVersion: lease.resourceVersion } : { renewTime: lease.renewTime, resourceVersion: lease.resourceVersion };
}

function copyConditions(conditions: readonly NodeCondition[]): NodeCondition[] {
  return conditions.map((c) => ({ ...c }));
}

/**
 * Returns the node's conditions with Ready, MemoryPressure, DiskPressure and PIDPressure set to
 * Unknown. An existing condition that is not yet Unknown gets reason `NodeStatusUnknown`, message
 * "Kubelet stopped posting node status." and lastTransitionTime = now (lastHeartbeatTime kept);
 * one already Unknown is kept as is; a missing one is appended with reason `NodeStatusNeverUpdated`,
 * lastHeartbeatTime = creation and lastTransitionTime = now. Only the first condition of each type
 * is touched, as `GetNodeCondition` returns the first.
 * Mirrors the marking loop of `tryUpdateNodeHealth`.
 */
function markConditionsUnknown(node: Pick<Node, 'conditions' | 'creationTimestamp'>, nowMs: number): NodeCondition[] {
  const out = copyConditions(node.conditions);
  for (const type of CONDITIONS_MARKED_UNKNOWN) {
    const c = getCondition(out, type);
    if (c === undefined) {
      out.push({
        type,
        status: 'Unknown',
        reason: REASON_NODE_STATUS_NEVER_UPDATED,
        message: MESSAGE_NODE_STATUS_NEVER_UPDATED,
        lastHeartbeatTime: node.creationTimestamp,
        lastTransitionTime: nowMs,
      });
    } else if (c.status !== 'Unknown') {
      c.status = 'Unknown';
      c.reason = REASON_NODE_STATUS_UNKNOWN;
      c.message = MESSAGE_NODE_STATUS_UNKNOWN;
      c.lastTransitionTime = nowMs;
    }
  }
  return out;
}

/**
 * One health observation of a node: detects heartbeats, and once the grace period has expired
 * computes the Unknown conditions the controller must write.
 *
 * Semantics (upstream-node-lifecycle.md §2.8):
 * - A heartbeat is a change of Ready.lastHeartbeatTime against the saved Ready condition, or a
 *   Lease whose renewTime strictly increases (any Lease counts when none is saved). A heartbeat
 *   sets probeTimestamp = now.
 * - First sight of a node with a Ready condition gives it a full grace period (probe = now); a
 *   node without one is timed from its creationTimestamp, with the startup grace period.
 * - When `now > probeTimestamp + grace` (strictly), Ready/MemoryPressure/DiskPressure/PIDPressure
 *   become Unknown; a status write is needed only when the Ready condition changed.
 * - The saved conditions are refreshed only when a heartbeat rebuilt the record or the node has no
 *   Ready condition, exactly as upstream (which otherwise keeps the older snapshot).
 * - A node whose Ready condition disappears keeps its probe timestamp and falls under the startup
 *   grace (upstream's "Ready condition removed" branch is unreachable; see the comment in the body).
 * - Like upstream, a record rebuilt on a status heartbeat forgets the saved Lease, so the next
 *   observation of an unchanged Lease counts as one more heartbeat.
 * - The saved Lease's resourceVersion is what the live read of `NodeControllerLeaseCircuitBreaker`
 *   compares. A newer version of the saved renewal (same renewTime) replaces it until a monitor
 *   pass has run ({@link leaseSeenByPass}), as upstream's pass saves the newest version it reads;
 *   it moves no timestamp.
 *
 * @param prev the record from the previous observation, or `undefined` on first sight.
 * @param node the node as read from the cache (not mutated).
 * @param lease the node's Lease in `kube-node-lease`, or `undefined` when there is none.
 * @param nowMs epoch milliseconds.
 * @param opts grace periods in milliseconds.
 * @returns see {@link NodeHealthObservation}. Never throws.
 * Mirrors `tryUpdateNodeHealth` in `node_lifecycle_controller.go`, minus the `UpdateStatus` call.
 */
export function observeNodeHealth(
  prev: NodeHealth | undefined,
  node: Pick<Node, 'conditions' | 'creationTimestamp'>,
  lease: Pick<Lease, 'renewTime' | 'resourceVersion'> | undefined,
  nowMs: number,
  opts: NodeHealthOptions,
): NodeHealthObservation {
  const nodeReady = getCondition(node.conditions, NODE_READY);
  let health: NodeHealth | undefined = prev;
  // Upstream points nodeHealth.status at the node being processed in these cases, so the saved
  // snapshot also picks up the Unknown-marking done later in the same call.
  let savesNodeStatus = false;
  let observedReady: Readonly<NodeCondition>;
  let gracePeriodMs: number;

  if (nodeReady === undefined) {
    observedReady = {
      type: NODE_READY,
      status: 'Unknown',
      lastHeartbeatTime: node.creationTimestamp,
      lastTransitionTime: node.creationTimestamp,
    };
    gracePeriodMs = opts.nodeStartupGracePeriodMs;
    health = health ?? {
      probeTimestamp: node.creationTimestamp,
      readyTransitionTimestamp: node.creationTimestamp,
      conditions: [],
    };
    savesNodeStatus = true;
  } else {
    observedReady = nodeReady;
    gracePeriodMs = opts.nodeMonitorGracePeriodMs;
  }

  // For a Ready-less node `health.conditions` is about to become the node's, so the saved Ready
  // condition is the node's (none): upstream reads it after reassigning the status. Its "Ready
  // condition was removed" branch (saved != nil && current == nil) is therefore dead code, and a
  // node that loses its Ready condition keeps its probe timestamp, now under the startup grace.
  const savedReady = savesNodeStatus || health === undefined ? undefined : getCondition(health.conditions, NODE_READY);
  const savedLease = health?.lease;

  // A heartbeat (or first sight) rebuilds the record: probe = now, the node's status saved, the
  // saved Lease dropped. Its value is the readyTransitionTimestamp of the rebuilt record.
  let rebuildTransition: number | undefined;
  if (health === undefined || (savedReady === undefined && nodeReady !== undefined)) {
    // First sight, controller restart with the node already in etcd, or the kubelet's first status.
    rebuildTransition = nowMs;
  } else if (savedReady !== undefined && nodeReady !== undefined && savedReady.lastHeartbeatTime !== nodeReady.lastHeartbeatTime) {
    const transitioned = savedReady.lastTransitionTime !== nodeReady.lastTransitionTime;
    rebuildTransition = transitioned ? nowMs : health.readyTransitionTimestamp;
  }
  let record: NodeHealth;
  if (rebuildTransition !== undefined || health === undefined) {
    record = { probeTimestamp: nowMs, readyTransitionTimestamp: rebuildTransition ?? nowMs, conditions: [] };
    savesNodeStatus = true;
  } else {
    record = health;
    // Deliberate difference 21 (docs/node-lifecycle.md): a Ready status that changed WITHOUT a new
    // lastHeartbeatTime (a status PATCH in the same second as the last heartbeat; another writer)
    // refreshes the saved conditions, not the probe timestamp. Upstream keeps the old snapshot here,
    // but decides tainting and zone states on the node object (the lister), so only its processPod
    // reads the stale status; our tainting, zone and level-based pod marking read the saved one and
    // would otherwise ignore a Ready=False the cache shows (an absent taint, pods never marked:
    // the flaky "#125618" integration test). A saved Unknown is kept: it is our own write, which
    // the cache may not show yet. The probe timestamp, so every deadline, is untouched.
    if (savedReady !== undefined && nodeReady !== undefined && savedReady.status !== 'Unknown' && savedReady.status !== nodeReady.status) {
      savesNodeStatus = true;
    }
  }

  let probeTimestamp = record.probeTimestamp;
  let savedLeaseOut = record.lease;
  if (lease !== undefined && (savedLease === undefined || renewedBefore(savedLease, lease))) {
    savedLeaseOut = savedLeaseOf(lease);
    probeTimestamp = nowMs;
  } else if (lease !== undefined && savedLeaseOut !== undefined && sameRenewalNewerVersion(savedLeaseOut, lease)) {
    // Part of deliberate difference 1 (docs/node-lifecycle.md): we save a renewal when its event
    // arrives, upstream at its next monitor pass, from the lister, which by then holds the newest
    // version of the Lease. A second write of the same renewal before that pass (the kubelet
    // writing twice in one instant, another writer touching the Lease) is what upstream saves and
    // later compares the live read with; keeping the first version would make that read differ
    // forever and the node would never be judged, an eviction upstream makes lost. After a pass
    // the saved version is final, as upstream's: a later change that is not a renewal still holds
    // the node. Only the resourceVersion changes: the probe timestamp, so every deadline, stays.
    savedLeaseOut = savedLeaseOf(lease);
  }

  const expired = nowMs > probeTimestamp + gracePeriodMs;
  // Only an expiry or a saved status needs the whole condition list; the steady state of a healthy
  // node (every node, every pass) reads just its Ready condition. This keeps a 5,000-node pass
  // from copying ~25,000 conditions it throws away.
  const finalConditions = expired ? markConditionsUnknown(node, nowMs) : savesNodeStatus ? copyConditions(node.conditions) : undefined;
  const currentReady = finalConditions ? getCondition(finalConditions, NODE_READY) : nodeReady;

  // Nothing changed (no heartbeat, no newer Lease, status not saved): the previous record is still
  // exact, so it is returned as is rather than rebuilt.
  const unchanged = record === prev && !savesNodeStatus && probeTimestamp === record.probeTimestamp && savedLeaseOut === record.lease;
  const persisted: NodeHealth = unchanged
    ? record
    : {
        probeTimestamp,
        readyTransitionTimestamp: record.readyTransitionTimestamp,
        conditions: savesNodeStatus && finalConditions ? copyConditions(finalConditions) : record.conditions,
        ...(savedLeaseOut !== undefined ? { lease: savedLeaseOut } : {}),
      };

  const out: NodeHealthObservation = {
    health: persisted,
    gracePeriodMs,
    observedReady,
    needsStatusUpdate: false,
    expired,
  };
  // Unmarked, the Ready condition is the cached node's, shared read-only (every node, every pass
  // and Lease event); a marked one belongs to `unknownConditions`, which is written, so it is copied.
  if (currentReady !== undefined) out.currentReady = currentReady === nodeReady ? nodeReady : { ...currentReady };
  if (expired && finalConditions && !nodeConditionsEqual(currentReady, observedReady)) {
    out.needsStatusUpdate = true;
    out.unknownConditions = finalConditions;
    out.healthAfterStatusUpdate = {
      probeTimestamp,
      readyTransitionTimestamp: nowMs,
      conditions: copyConditions(finalConditions),
      // Upstream saves this Lease in the pass that writes the status, so no later version of it
      // is taken for the renewal: only a later one could make the node be judged where upstream's is not.
      ...(lease !== undefined ? { lease: { ...savedLeaseOf(lease), seenByPass: true } } : {}),
    };
  }
  return out;
}

/**
 * The record after a monitor pass observed it: its saved Lease is final, as upstream's is once its
 * pass saved it (`tryUpdateNodeHealth` reads the lister only in the pass), so a later version of the
 * same renewal no longer replaces it (see {@link observeNodeHealth}).
 * @param health the node's record. @returns the same object when there is nothing to mark, else a copy. Never throws.
 * Mirrors the timing of upstream's `nodeHealth.lease = observedLease` in `tryUpdateNodeHealth`.
 */
export function leaseSeenByPass(health: NodeHealth): NodeHealth {
  if (health.lease === undefined || health.lease.seenByPass === true) return health;
  return { ...health, lease: { ...health.lease, seenByPass: true } };
}

/**
 * The first epoch millisecond at which {@link observeNodeHealth} would find the grace period
 * expired, absent any new heartbeat: `probeTimestamp + gracePeriodMs + 1` (the check is strict).
 *
 * Deliberate difference from upstream: upstream only notices expiry on its next 5 s monitor pass,
 * so a dead node turns Unknown between grace and grace + 5 s after its last heartbeat. The
 * controller schedules a re-check at this deadline instead, turning detection latency into
 * "grace + ~1 s" while keeping the same strict `now > probe + grace` rule.
 *
 * @param health the record returned by the last observation.
 * @param gracePeriodMs the grace period returned with it, in milliseconds.
 * @returns epoch milliseconds.
 */
export function nextProbeDeadline(health: Pick<NodeHealth, 'probeTimestamp'>, gracePeriodMs: number): number {
  return health.probeTimestamp + gracePeriodMs + 1;
}

/** The Ready condition saved in a health record (upstream `GetNodeCondition(nodeHealth.status, Ready)`). */
export function savedReadyCondition(health: NodeHealth | undefined): NodeCondition | undefined {
  return health === undefined ? undefined : getCondition(health.conditions, NODE_READY);
}

// ---------------------------------------------------------------------------
// Marking pods NotReady.
// ---------------------------------------------------------------------------

/**
 * Whether this pass turned a Ready node not-Ready; then the controller emits the node's
 * `NodeNotReady` event ({@link nodeNotReadyEvent}). Only the controller's own Unknown-marking
 * can do that, since `observedReady` is read before the pass changes anything.
 * Mirrors the first `case` of the `switch` in `updateNodeFunc` (§2.7).
 */
export function isReadyToNotReadyTransition(
  observedReady: Readonly<NodeCondition>,
  currentReady: Readonly<NodeCondition> | undefined,
): boolean {
  return currentReady?.status !== 'True' && observedReady.status === 'True';
}

/**
 * Whether MarkPodsNotReady would write this pod: it is bound to `nodeName` (when given) and its
 * first Ready condition exists and is not already False. Pods without a Ready condition are never
 * touched.
 * Mirrors the per-pod checks of `MarkPodsNotReady` (`controller_utils.go`, §2.19).
 */
export function podNeedsNotReadyMark(pod: Pick<Pod, 'conditions' | 'nodeName'>, nodeName?: string): boolean {
  if (nodeName !== undefined && pod.nodeName !== nodeName) return false;
  const ready = getCondition(pod.conditions, 'Ready');
  return ready !== undefined && ready.status !== 'False';
}

/**
 * Whether `processPod` would mark a newly bound pod NotReady: the node's health has been gathered,
 * its **saved** Ready condition exists and is not True, and the pod needs the mark.
 * @param health the node's record, `undefined` when not gathered yet (the next monitor pass covers it).
 * Mirrors `processPod` steps 2, 4 and 5 (§2.18) plus {@link podNeedsNotReadyMark}.
 */
export function podNeedsNotReadyOnNode(health: NodeHealth | undefined, pod: Pick<Pod, 'conditions' | 'nodeName'>): boolean {
  const ready = savedReadyCondition(health);
  return ready !== undefined && ready.status !== 'True' && podNeedsNotReadyMark(pod, pod.nodeName);
}

// ---------------------------------------------------------------------------
// Events (§2.21).
// ---------------------------------------------------------------------------

/** An event the controller records, with component `node-controller`. */
export interface NodeLifecycleEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Event reason when a node is first seen. */
export const EVENT_REGISTERED_NODE = 'RegisteredNode';
/** Event reason when a known node disappears. */
export const EVENT_REMOVING_NODE = 'RemovingNode';
/** Event reason on a node the controller turned not-Ready, and on each pod it marked NotReady. */
export const EVENT_NODE_NOT_READY = 'NodeNotReady';
/**
 * Ours: Warning event reason on a not-Ready node whose pods are left Ready because every zone is
 * FullDisruption (the all-zones stop; upstream marks them NotReady, kubernetes #77864/#125824).
 */
export const EVENT_POD_MARKING_HELD = 'PodReadinessKept';

/**
 * The Node event for a newly seen node: Normal `RegisteredNode`,
 * "Node <name> event: Registered Node <name> in Controller".
 * Mirrors `RecordNodeEvent` as called from `monitorNodeHealth`.
 */
export function registeredNodeEvent(nodeName: string): NodeLifecycleEvent {
  return { type: 'Normal', reason: EVENT_REGISTERED_NODE, message: `Node ${nodeName} event: Registered Node ${nodeName} in Controller` };
}

/**
 * The Node event for a node gone from the cache: Normal `RemovingNode`,
 * "Node <name> event: Removing Node <name> from Controller". Mirrors `RecordNodeEvent`.
 */
export function removingNodeEvent(nodeName: string): NodeLifecycleEvent {
  return { type: 'Normal', reason: EVENT_REMOVING_NODE, message: `Node ${nodeName} event: Removing Node ${nodeName} from Controller` };
}

/**
 * The Node event when the controller turned a Ready node not-Ready: Normal `NodeNotReady`,
 * "Node <name> status is now: NodeNotReady". Mirrors `RecordNodeStatusChange`.
 */
export function nodeNotReadyEvent(nodeName: string): NodeLifecycleEvent {
  return { type: 'Normal', reason: EVENT_NODE_NOT_READY, message: `Node ${nodeName} status is now: ${EVENT_NODE_NOT_READY}` };
}

/**
 * The Pod event for each pod MarkPodsNotReady wrote: Warning `NodeNotReady`, "Node is not ready".
 * Mirrors the `recorder.Event` call in `MarkPodsNotReady`.
 */
export function podNodeNotReadyEvent(): NodeLifecycleEvent {
  return { type: 'Warning', reason: EVENT_NODE_NOT_READY, message: 'Node is not ready' };
}
