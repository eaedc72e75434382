/**
 * The in-memory cluster a what-if runs in: the caches the controllers read, the API their writes
 * go to (the same maps), simulated kubelets, and the timeline of everything that happened.
 *
 * A write mutates the maps and then, on a microtask (as an informer delivers a watch event after
 * the write's response), notifies the subscribed handlers; `src/whatif/run.ts` subscribes the real
 * controllers exactly as `src/cli/run.ts` subscribes them to the informers. Nothing here decides
 * anything the controllers decide: the writes only apply what they are asked to, like the API
 * server would (the same taint arithmetic, `applyTaintSwap`, as the real writer).
 *
 * Simplifications (docs/what-if.md): a graceful pod deletion on a node whose kubelet runs removes
 * the pod at once, on a node whose kubelet is down it leaves the pod Terminating (as the API
 * server does); no workload controller re-creates deleted pods; a deleted VolumeAttachment is gone
 * at once (the external attacher's detach is not modelled).
 */
import type { DaemonSet, Lease, Node, NodeCondition, OwnerRef, PersistentVolume, PersistentVolumeClaim, Pod, PodCondition, Taint, VolumeAttachment } from '../kube/objects.js';
import { getCondition, podKey } from '../kube/objects.js';
import { formatTaint } from '../kube/taints.js';
import type { EventSink } from '../kube/types.js';
import { NODE_LEASE_NAMESPACE, leaseKey } from '../kube/informers.js';
import type { NodeLifecycleWrites } from '../nodelifecycle/controller.js';
import { applyTaintSwap, conditionTaintDiff } from '../nodelifecycle/taints.js';
import { formatZoneKey, getZoneKey } from '../nodelifecycle/zones.js';
import type { TaintEvictionWrites } from '../tainteviction/controller.js';
import { hasDisruptionTarget } from '../tainteviction/writer.js';
import { taintEvictionDisruptionCondition } from '../tainteviction/events.js';
import type { PodGCWrites } from '../podgc/controller.js';
import type { ForceDetachWrites } from '../volumes/controller.js';
import type { Clock } from '../util/clock.js';
import type { ClusterSnapshot } from './snapshot.js';

/** One thing that happened, at `atMs` milliseconds after T+0. */
export type TimelineEntry =
  | { atMs: number; kind: 'step'; action: string; nodes: string[]; detail: string }
  | { atMs: number; kind: 'condition'; node: string; from: string; to: string; reason?: string }
  | { atMs: number; kind: 'taint'; node: string; added: string[]; removed: string[]; by: string }
  | { atMs: number; kind: 'pod-not-ready'; node: string; pod: string }
  | { atMs: number; kind: 'pod-deleted'; node: string; pod: string; owners: string[]; force: boolean; by: string; reason: string }
  | { atMs: number; kind: 'detach'; node: string; volumeAttachment: string; persistentVolume?: string }
  | { atMs: number; kind: 'zone'; zone: string; from: string; to: string; size: number; unhealthy: number; rate: number; pausedReason?: string }
  | { atMs: number; kind: 'event'; type: string; reason: string; object: string; message: string; by: string };

/** Informer-like handlers for one resource. */
export interface ResourceHandlers<T> {
  add?(o: T): void;
  update?(old: T, o: T): void;
  delete?(o: T): void;
}

/** The handlers by resource, for {@link InMemoryCluster.on}. */
export interface ClusterHandlers {
  nodes: ResourceHandlers<Node>;
  leases: ResourceHandlers<Lease>;
  pods: ResourceHandlers<Pod>;
  volumeAttachments: ResourceHandlers<VolumeAttachment>;
}

/** Event reasons left out of the timeline: one per node or pod, and said better by other entries. */
const NOISY_EVENT_REASONS = new Set(['RegisteredNode', 'TaintManagerEviction', 'NodeNotReady', 'ForceDeletedPodOutOfService', 'ForceDeletedOrphanPod']);

/** The kubelet default Lease renewal interval (0.25 × the 40 s Lease duration), milliseconds. */
export const KUBELET_LEASE_RENEW_MS = 10_000;
/** The kubelet's unchanged-status report frequency (`nodeStatusReportFrequency`), milliseconds. */
const KUBELET_STATUS_REPORT_MS = 5 * 60_000;

interface Kubelet {
  running: boolean;
  /** What it reports as the Ready condition. */
  reports: 'True' | 'False';
  /** Heartbeats are paused until this time (epoch ms). */
  pausedUntil: number;
  /** Which second of the 10 s renewal cycle it renews in (spreads renewals as real kubelets do). */
  phase: number;
  lastStatusAt: number;
}

/**
 * The in-memory cluster. Construct from a snapshot, subscribe handlers, then {@link startKubelets}.
 */
export class InMemoryCluster {
  readonly nodes = new Map<string, Node>();
  readonly leases = new Map<string, Lease>();
  readonly pods = new Map<string, Pod>();
  readonly daemonSets = new Map<string, DaemonSet>();
  readonly volumeAttachments = new Map<string, VolumeAttachment>();
  readonly pvcs = new Map<string, PersistentVolumeClaim>();
  readonly pvs: PersistentVolume[];
  readonly timeline: TimelineEntry[] = [];
  readonly #podsByNode = new Map<string, Map<string, Pod>>();
  readonly #vasByNode = new Map<string, Map<string, VolumeAttachment>>();
  readonly #kubelets = new Map<string, Kubelet>();
  readonly #handlers: { [K in keyof ClusterHandlers]: ClusterHandlers[K][] } = { nodes: [], leases: [], pods: [], volumeAttachments: [] };
  readonly #clock: Clock;
  readonly #t0: number;
  #rv = 1;
  #leaseRV = '';
  // list() of a 100,000-pod cache is asked for by every sweep: copied once per change, not per call.
  #nodeList: Node[] | undefined;
  #podList: Pod[] | undefined;

  /**
   * @param snapshot the starting state; `takenAt` is T+0 and must equal `clock.now()`.
   * @param clock the simulation's clock (a FakeClock).
   * @param opts.graceMs the node monitor grace period, milliseconds: a kubelet counts as running at
   *   T+0 when its Lease (or, without one, its Ready heartbeat) is younger than this.
   */
  constructor(snapshot: ClusterSnapshot, clock: Clock, opts: { graceMs: number }) {
    this.#clock = clock;
    this.#t0 = snapshot.takenAt;
    for (const l of snapshot.leases) this.leases.set(leaseKey(l.name, l.namespace), l);
    for (const p of snapshot.pods) this.#indexPod(p);
    for (const d of snapshot.daemonSets) this.daemonSets.set(podKey(d), d);
    for (const v of snapshot.volumeAttachments) this.#indexVa(v);
    for (const c of snapshot.pvcs) this.pvcs.set(podKey(c), c);
    this.pvs = [...snapshot.pvs];
    const sorted = [...snapshot.nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    sorted.forEach((n, i) => {
      this.nodes.set(n.name, n);
      const ready = getCondition(n.conditions, 'Ready');
      const lastSeen = this.leases.get(leaseKey(n.name))?.renewTime ?? ready?.lastHeartbeatTime ?? -Infinity;
      this.#kubelets.set(n.name, {
        running: lastSeen > this.#t0 - opts.graceMs,
        reports: ready?.status === 'False' ? 'False' : 'True',
        pausedUntil: 0,
        phase: i % (KUBELET_LEASE_RENEW_MS / 1000),
        lastStatusAt: ready?.lastHeartbeatTime ?? this.#t0,
      });
    });
  }

  /** Milliseconds since T+0. */
  elapsed(): number {
    return this.#clock.now() - this.#t0;
  }

  /** How many simulated kubelets are running now. */
  runningKubelets(): number {
    let n = 0;
    for (const k of this.#kubelets.values()) if (k.running) n++;
    return n;
  }

  /** Subscribes informer-like handlers. */
  on<K extends keyof ClusterHandlers>(resource: K, h: ClusterHandlers[K]): void {
    (this.#handlers[resource] as unknown[]).push(h);
  }

  /** Every node (a ReadStore's `list`; do not modify). */
  nodeList(): readonly Node[] {
    return (this.#nodeList ??= [...this.nodes.values()]);
  }

  /** Every pod (a ReadStore's `list`; do not modify). */
  podList(): readonly Pod[] {
    return (this.#podList ??= [...this.pods.values()]);
  }

  /** Pods bound to `node`. */
  podsOnNode(node: string): Pod[] {
    return [...(this.#podsByNode.get(node)?.values() ?? [])];
  }

  /** VolumeAttachments of `node`. */
  volumeAttachmentsOnNode(node: string): VolumeAttachment[] {
    return [...(this.#vasByNode.get(node)?.values() ?? [])];
  }

  /** The Lease informer's resourceVersion: the last Lease applied (the cache is the API here). */
  leaseResourceVersion(): string {
    return this.#leaseRV;
  }

  /** Every node's name and zone (`region`, bare `zone` label), for the scenario's selectors. */
  nodeZones(): { name: string; zone: string; region: string }[] {
    return [...this.nodes.values()].map((n) => {
      const label = formatZoneKey(getZoneKey(n.labels));
      const text = label.startsWith('"') ? label.slice(1, -1) : '';
      const i = text.indexOf(':');
      return { name: n.name, region: i >= 0 ? text.slice(0, i) : '', zone: i >= 0 ? text.slice(i + 1) : '' };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Kubelets and scenario actions.
  // ---------------------------------------------------------------------------------------------

  /**
   * Starts the simulated kubelets: every second, the running ones whose phase is due renew their
   * Lease, and post their status when it differs from what they report or is older than 5 min.
   */
  startKubelets(): void {
    let second = 0;
    const tick = (): void => {
      const phase = second++ % (KUBELET_LEASE_RENEW_MS / 1000);
      for (const [name, k] of this.#kubelets) if (k.phase === phase) this.#heartbeat(name, k);
      this.#clock.setTimeout(tick, 1000);
    };
    this.#clock.setTimeout(tick, 1000);
  }

  #heartbeat(name: string, k: Kubelet, force = false): void {
    if (!k.running || this.#clock.now() < k.pausedUntil || !this.nodes.has(name)) return;
    this.#renewLease(name);
    const node = this.nodes.get(name);
    const ready = node && getCondition(node.conditions, 'Ready');
    if (force || ready?.status !== k.reports || this.#clock.now() - k.lastStatusAt >= KUBELET_STATUS_REPORT_MS) this.#postStatus(name, k);
  }

  #renewLease(name: string): void {
    const key = leaseKey(name);
    const old = this.leases.get(key);
    const lease: Lease = { ...(old ?? { namespace: NODE_LEASE_NAMESPACE, name, holderIdentity: name, leaseDurationSeconds: 40 }), resourceVersion: this.#nextRV(), renewTime: this.#clock.now() };
    this.leases.set(key, lease);
    this.#leaseRV = lease.resourceVersion;
    this.#notify('leases', old, lease);
  }

  #postStatus(name: string, k: Kubelet): void {
    const node = this.nodes.get(name);
    if (!node) return;
    const now = this.#clock.now();
    k.lastStatusAt = now;
    const old = getCondition(node.conditions, 'Ready');
    const ready: NodeCondition = {
      type: 'Ready',
      status: k.reports,
      reason: k.reports === 'True' ? 'KubeletReady' : 'KubeletNotReady',
      lastHeartbeatTime: now,
      lastTransitionTime: old?.status === k.reports ? (old.lastTransitionTime ?? now) : now,
    };
    if (old?.status !== k.reports) this.timeline.push({ atMs: this.elapsed(), kind: 'condition', node: name, from: old?.status ?? '-', to: k.reports, reason: `${ready.reason ?? ''} (kubelet)` });
    // The kubelet owns every condition it reports; only Ready is modelled, the others stay as they were.
    this.#putNode({ ...node, conditions: [...node.conditions.filter((c) => c.type !== 'Ready'), ready] });
  }

  /**
   * Applies one scenario action to `nodes` now.
   * @param action the step's action (see src/whatif/scenario.ts).
   * @param forMs `pause-heartbeats` only: the pause, milliseconds.
   */
  apply(action: string, nodes: readonly string[], forMs = 0): void {
    if (action === 'pause-heartbeats') {
      // Resumes at the end of the pause, not at each node's next phase: a blip ends for everyone at
      // once. One timer for all of them (thousands of timers would each be a FakeClock scan).
      this.#clock.setTimeout(() => {
        for (const name of nodes) {
          const k = this.#kubelets.get(name);
          if (k) this.#heartbeat(name, k);
        }
      }, forMs);
    }
    for (const name of nodes) {
      const k = this.#kubelets.get(name);
      const node = this.nodes.get(name);
      if (!k || !node) continue;
      switch (action) {
        case 'stop-kubelet':
          k.running = false;
          break;
        case 'start-kubelet':
          k.running = true;
          k.pausedUntil = 0;
          this.#heartbeat(name, k, true);
          break;
        case 'pause-heartbeats':
          k.pausedUntil = this.#clock.now() + forMs;
          break;
        case 'report-not-ready':
        case 'report-ready':
          k.reports = action === 'report-ready' ? 'True' : 'False';
          this.#heartbeat(name, k, true);
          break;
        case 'out-of-service': {
          const taint: Taint = { key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute', timeAdded: this.#clock.now() };
          const next = applyTaintSwap(node.taints, [taint], [], this.#clock.now());
          if (next) this.#putNode({ ...node, taints: next });
          break;
        }
        case 'delete-node':
          this.nodes.delete(name);
          this.#nodeList = undefined;
          this.#kubelets.delete(name);
          this.#notify('nodes', node, undefined);
          break;
        default:
          throw new RangeError(`unknown scenario action ${action}`);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The controllers' writes, applied to the maps.
  // ---------------------------------------------------------------------------------------------

  /** The node lifecycle controller's writes. */
  nodeLifecycleWrites(): NodeLifecycleWrites {
    return {
      swapNodeTaints: async (name, toAdd, toRemove, _cached, opts = {}) => {
        const node = this.nodes.get(name);
        if (!node) return 'gone';
        const d = opts.conditionTaints ? conditionTaintDiff(node) : undefined;
        if (d) opts.onConditionTaints?.(d.toAdd, d.toRemove);
        const next = applyTaintSwap(node.taints, [...toAdd, ...(d?.toAdd ?? [])], [...toRemove, ...(d?.toRemove ?? [])], this.#clock.now());
        if (next === undefined) return 'unchanged';
        this.#recordTaints(name, node.taints, next, 'node-lifecycle-controller');
        this.#putNode({ ...node, taints: next });
        return 'written';
      },
      updateNodeConditions: async (name, cached, compute) => {
        const node = this.nodes.get(name) ?? cached;
        if (!node || !this.nodes.has(name)) return { result: 'gone' };
        const written = compute(node);
        if (!written) return { result: 'unchanged', node };
        const byType = new Map(node.conditions.map((c) => [c.type, c]));
        for (const c of written) byType.set(c.type, c);
        const before = getCondition(node.conditions, 'Ready');
        const after = getCondition(written, 'Ready');
        if (after && before?.status !== after.status) {
          this.timeline.push({ atMs: this.elapsed(), kind: 'condition', node: name, from: before?.status ?? '-', to: after.status, ...(after.reason ? { reason: after.reason } : {}) });
        }
        const updated = this.#putNode({ ...node, conditions: [...byType.values()] });
        return { result: 'written', written, node: updated };
      },
      markPodNotReady: async (pod, nodeName) => {
        const cur = this.pods.get(podKey(pod));
        if (!cur || cur.uid !== pod.uid) return 'gone';
        if (cur.nodeName !== nodeName) return 'unchanged';
        const ready = getCondition(cur.conditions, 'Ready');
        if (!ready || ready.status === 'False') return 'unchanged';
        this.timeline.push({ atMs: this.elapsed(), kind: 'pod-not-ready', node: nodeName, pod: podKey(cur) });
        this.#putPod({ ...cur, conditions: cur.conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: this.#clock.now() } : c)) });
        return 'written';
      },
      evictPodLegacy: async (pod, nodeName) => {
        const cur = this.pods.get(podKey(pod));
        if (!cur || cur.uid !== pod.uid) return 'gone';
        this.#deletePod(cur, { force: false, by: 'node-lifecycle-controller', reason: `NodeLost: node ${nodeName} is unresponsive (legacy eviction)` });
        return 'written';
      },
      patchNodeLabels: async (name, cached, compute) => {
        const node = this.nodes.get(name) ?? cached;
        if (!node || !this.nodes.has(name)) return 'gone';
        const labels = compute(node);
        if (!labels) return 'unchanged';
        this.#putNode({ ...node, labels: { ...node.labels, ...labels } });
        return 'written';
      },
      forgetNode: () => undefined,
    };
  }

  /** The taint eviction controller's writes. */
  taintEvictionWrites(): TaintEvictionWrites {
    return {
      addDisruptionCondition: async (namespace, name, uid) => {
        const cur = this.pods.get(`${namespace}/${name}`);
        if (!cur || cur.uid !== uid) return 'gone';
        if (hasDisruptionTarget(cur)) return 'unchanged';
        this.#putPod({ ...cur, conditions: [...cur.conditions, taintEvictionDisruptionCondition(this.#clock.now())] });
        return 'written';
      },
      deletePod: async (namespace, name, uid) => {
        const cur = this.pods.get(`${namespace}/${name}`);
        if (!cur || cur.uid !== uid) return 'gone';
        const taints = (this.nodes.get(cur.nodeName)?.taints ?? []).filter((t) => t.effect === 'NoExecute').map(formatTaint);
        this.#deletePod(cur, { force: false, by: 'taint-eviction-controller', reason: `NoExecute taint(s) on the node: ${taints.join(', ') || '(none left)'}` });
        return 'deleted';
      },
    };
  }

  /** The pod garbage collector's writes. */
  podGCWrites(): PodGCWrites {
    return {
      getNode: async (name) => this.nodes.get(name),
      forceDeletePod: async (namespace, name, uid, recheck) => {
        const cur = this.pods.get(`${namespace}/${name}`);
        if (!cur || cur.uid !== uid) return 'gone';
        const condition: PodCondition | undefined = await recheck(cur);
        if (!condition) return 'skipped';
        this.#deletePod(cur, { force: true, by: 'pod-garbage-collector-controller', reason: condition.message ?? condition.reason ?? 'force deleted' });
        return 'deleted';
      },
    };
  }

  /** The forced-detach controller's writes. */
  forceDetachWrites(): ForceDetachWrites {
    return {
      getNode: async (name) => this.nodes.get(name),
      getVolumeAttachment: async (name) => this.volumeAttachments.get(name),
      listPodsOnNode: async (name) => ({ pods: this.podsOnNode(name), unparsable: 0 }),
      deleteVolumeAttachment: async (name, uid) => {
        const va = this.volumeAttachments.get(name);
        if (!va || va.uid !== uid) return 'gone';
        this.volumeAttachments.delete(name);
        this.#vasByNode.get(va.nodeName)?.delete(name);
        this.timeline.push({ atMs: this.elapsed(), kind: 'detach', node: va.nodeName, volumeAttachment: name, ...(va.persistentVolumeName ? { persistentVolume: va.persistentVolumeName } : {}) });
        this.#notify('volumeAttachments', va, undefined);
        return 'deleted';
      },
    };
  }

  /** An Event sink for one controller: events go to the timeline, except the noisy per-object ones. */
  eventSink(by: string): EventSink {
    return {
      record: (ref, type, reason, message) => {
        if (NOISY_EVENT_REASONS.has(reason) || ref.kind === 'Pod') return;
        const object = `${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
        this.timeline.push({ atMs: this.elapsed(), kind: 'event', type, reason, object, message, by });
      },
    };
  }

  // ---------------------------------------------------------------------------------------------

  #recordTaints(node: string, before: readonly Taint[], after: readonly Taint[], by: string): void {
    const b = new Set(before.map(formatTaint));
    const a = new Set(after.map(formatTaint));
    const added = [...a].filter((t) => !b.has(t));
    const removed = [...b].filter((t) => !a.has(t));
    if (added.length + removed.length > 0) this.timeline.push({ atMs: this.elapsed(), kind: 'taint', node, added, removed, by });
  }

  #deletePod(pod: Pod, how: { force: boolean; by: string; reason: string }): void {
    const key = podKey(pod);
    if (pod.deletionTimestamp === undefined || how.force) {
      this.timeline.push({ atMs: this.elapsed(), kind: 'pod-deleted', node: pod.nodeName, pod: key, owners: pod.ownerReferences.map(ownerText), ...how });
    }
    const kubeletRunning = this.#kubelets.get(pod.nodeName)?.running === true;
    if (how.force || kubeletRunning || pod.nodeName === '') {
      this.pods.delete(key);
      this.#podList = undefined;
      this.#podsByNode.get(pod.nodeName)?.delete(key);
      this.#notify('pods', pod, undefined);
    } else if (pod.deletionTimestamp === undefined) {
      // No kubelet confirms the graceful deletion: the pod stays Terminating, as on a real API server.
      this.#putPod({ ...pod, deletionTimestamp: this.#clock.now(), deletionGracePeriodSeconds: 30 });
    }
  }

  #putNode(node: Node): Node {
    const old = this.nodes.get(node.name);
    const stored = { ...node, resourceVersion: this.#nextRV() };
    this.nodes.set(node.name, stored);
    this.#nodeList = undefined;
    this.#notify('nodes', old, stored);
    return stored;
  }

  #putPod(pod: Pod): void {
    const old = this.pods.get(podKey(pod));
    const stored = { ...pod, resourceVersion: this.#nextRV() };
    this.#indexPod(stored);
    this.#notify('pods', old, stored);
  }

  #indexPod(p: Pod): void {
    const key = podKey(p);
    this.pods.set(key, p);
    this.#podList = undefined;
    if (!p.nodeName) return;
    let m = this.#podsByNode.get(p.nodeName);
    if (!m) this.#podsByNode.set(p.nodeName, (m = new Map()));
    m.set(key, p);
  }

  #indexVa(v: VolumeAttachment): void {
    this.volumeAttachments.set(v.name, v);
    let m = this.#vasByNode.get(v.nodeName);
    if (!m) this.#vasByNode.set(v.nodeName, (m = new Map()));
    m.set(v.name, v);
  }

  #nextRV(): string {
    return String(++this.#rv);
  }

  /** Delivers an add, update or delete to the handlers after the write returned (as a watch event would). */
  #notify<K extends keyof ClusterHandlers>(resource: K, old: unknown, cur: unknown): void {
    const hs = this.#handlers[resource] as ResourceHandlers<unknown>[];
    queueMicrotask(() => {
      for (const h of hs) {
        if (old === undefined && cur !== undefined) h.add?.(cur);
        else if (old !== undefined && cur !== undefined) h.update?.(old, cur);
        else if (old !== undefined) h.delete?.(old);
      }
    });
  }
}

/** `Kind/name` of an owner reference, for the report. */
function ownerText(o: OwnerRef): string {
  return `${o.kind}/${o.name}`;
}
