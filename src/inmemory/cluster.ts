/**
 * The in-memory cluster that what-if runs in and that the unit-test worlds drive the controllers
 * over: the objects (which are both the API's state and the informers' caches here), simulated
 * kubelets, and the timeline of everything that happened. The controllers' writes reach it through
 * {@link RecordingWriter} (./writer.ts). Pure model over the injected clock: no I/O.
 *
 * A change notifies the subscribed handlers on a microtask (as an informer delivers a watch event
 * after the write's response), or synchronously when the caller asks (a test standing in for an
 * informer that delivers at once). Nothing here decides anything the controllers decide.
 *
 * Simplifications (docs/what-if.md): a graceful pod deletion on a node whose kubelet runs removes
 * the pod at once, on a node whose kubelet is down (or not simulated) it leaves the pod Terminating
 * (as the API server does); no workload controller re-creates deleted pods; a deleted
 * VolumeAttachment is gone at once (the external attacher's detach is not modelled).
 */
import type { Lease, Node, NodeCondition, OwnerRef, PersistentVolume, PersistentVolumeClaim, DaemonSet, Pod, Taint, VolumeAttachment } from '../kube/objects.js';
import { getCondition, podKey } from '../kube/objects.js';
import { formatTaint } from '../kube/taints.js';
import { NODE_LEASE_NAMESPACE, leaseKey } from '../kube/informerfactory.js';
import { applyTaintSwap } from '../nodelifecycle/taints.js';
import { formatZoneKey, getZoneKey } from '../nodelifecycle/zones.js';
import type { EventSink } from '../kube/types.js';
import type { NodeLifecycleWrites } from '../nodelifecycle/controller.js';
import type { TaintEvictionWrites } from '../tainteviction/controller.js';
import type { PodGCWrites } from '../podgc/controller.js';
import type { ForceDetachWrites } from '../volumes/controller.js';
import type { AffinityEvictor } from '../nodeaffinity/writer.js';
import type { Clock } from '../util/clock.js';
import { ObservedMap } from './maps.js';
import type { ClusterContents, ClusterHandlers, Delivery, PodDeletion, ResourceHandlers, TimelineEntry } from './types.js';
import { RecordingWriter } from './writer.js';

export type { ClusterContents, ClusterHandlers, Delivery, PodDeletion, ResourceHandlers, TimelineEntry } from './types.js';

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
 * The in-memory cluster. Construct from a snapshot (or {@link InMemoryCluster.empty}), subscribe
 * handlers, then (what-if) {@link startKubelets}. The maps are public: writing one directly changes
 * the object without notifying anyone (a cache that changed behind its handlers); the put and
 * remove methods notify.
 */
export class InMemoryCluster {
  readonly nodes = new ObservedMap<Node>(() => (this.#nodeList = undefined));
  readonly leases = new Map<string, Lease>();
  readonly pods = new ObservedMap<Pod>((key, old, cur) => this.#reindexPod(key, old, cur));
  readonly daemonSets = new Map<string, DaemonSet>();
  readonly volumeAttachments = new ObservedMap<VolumeAttachment>((key, old, cur) => this.#reindexVa(key, old, cur));
  readonly pvcs = new Map<string, PersistentVolumeClaim>();
  readonly pvs: PersistentVolume[];
  readonly timeline: TimelineEntry[] = [];
  /** The controllers' writes over this cluster, recorded (./writer.ts). */
  readonly writer: RecordingWriter;
  readonly #podsByNode = new Map<string, Map<string, Pod>>();
  readonly #vasByNode = new Map<string, Map<string, VolumeAttachment>>();
  readonly #kubelets = new Map<string, Kubelet>();
  readonly #handlers: { [K in keyof ClusterHandlers]: ClusterHandlers[K][] } = { nodes: [], leases: [], pods: [], volumeAttachments: [] };
  readonly #clock: Clock;
  readonly #t0: number;
  #rv = 1;
  #leaseRV = '';
  /** The API server answers nothing until this time (epoch ms): kubelets' heartbeats fail ({@link apiOutage}). */
  #apiDownUntil = 0;
  // list() of a 100,000-pod cache is asked for by every sweep: copied once per change, not per call.
  #nodeList: Node[] | undefined;
  #podList: Pod[] | undefined;

  /**
   * @param snapshot the starting state; `takenAt` is T+0 and must equal `clock.now()`.
   * @param clock the run's clock (a FakeClock).
   * @param opts.graceMs the node monitor grace period, milliseconds: a kubelet counts as running at
   *   T+0 when its Lease (or, without one, its Ready heartbeat) is younger than this.
   * @param opts.record whether the writer keeps its call and write logs (default false: a what-if
   *   reads the timeline instead).
   */
  constructor(snapshot: ClusterContents, clock: Clock, opts: { graceMs: number; record?: boolean }) {
    this.#clock = clock;
    this.#t0 = snapshot.takenAt;
    this.writer = new RecordingWriter(this, clock);
    this.writer.recording = opts.record ?? false;
    for (const l of snapshot.leases) this.leases.set(leaseKey(l.name, l.namespace), l);
    for (const p of snapshot.pods) this.pods.set(podKey(p), p);
    for (const d of snapshot.daemonSets) this.daemonSets.set(podKey(d), d);
    for (const v of snapshot.volumeAttachments) this.volumeAttachments.set(v.name, v);
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

  /** An empty, recording cluster whose T+0 is `clock.now()`, with no simulated kubelets (the unit-test worlds' start). */
  static empty(clock: Clock): InMemoryCluster {
    return new InMemoryCluster({ takenAt: clock.now(), nodes: [], leases: [], pods: [], daemonSets: [], volumeAttachments: [], pvcs: [], pvs: [] }, clock, { graceMs: 0, record: true });
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

  /** Whether `node`'s simulated kubelet runs (false for a node without one). */
  kubeletRunning(node: string): boolean {
    return this.#kubelets.get(node)?.running === true;
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

  /** A fresh resourceVersion, newer than every one handed out so far. */
  nextResourceVersion(): string {
    return String(++this.#rv);
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
  // Changes, as the API server applies them and an informer then delivers them.
  // ---------------------------------------------------------------------------------------------

  /** Stores `node` with a fresh resourceVersion and notifies the node handlers. @returns the stored copy. */
  putNode(node: Node, how: Delivery = {}): Node {
    const old = this.nodes.get(node.name);
    const stored = { ...node, resourceVersion: this.nextResourceVersion() };
    this.nodes.set(node.name, stored);
    this.#notify('nodes', old, stored, how);
    return stored;
  }

  /** Removes the node (and its simulated kubelet) and notifies the node handlers; a no-op when absent. */
  removeNode(name: string, how: Delivery = {}): void {
    const old = this.nodes.get(name);
    if (!old) return;
    this.nodes.delete(name);
    this.#kubelets.delete(name);
    this.#notify('nodes', old, undefined, how);
  }

  /** Stores `pod` with a fresh resourceVersion and notifies the pod handlers. @returns the stored copy. */
  putPod(pod: Pod, how: Delivery = {}): Pod {
    const old = this.pods.get(podKey(pod));
    const stored = { ...pod, resourceVersion: this.nextResourceVersion() };
    this.pods.set(podKey(stored), stored);
    this.#notify('pods', old, stored, how);
    return stored;
  }

  /** Removes the pod stored under `key` (`namespace/name`) and notifies the pod handlers; a no-op when absent. */
  removePod(key: string, how: Delivery = {}): void {
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    this.#notify('pods', old, undefined, how);
  }

  /**
   * Stores `lease` as given (its resourceVersion is the caller's) and notifies the Lease handlers;
   * {@link leaseResourceVersion} moves to it after a synchronous delivery ran, as an informer's does.
   */
  putLease(lease: Lease, how: Delivery = {}): void {
    const key = leaseKey(lease.name, lease.namespace);
    const old = this.leases.get(key);
    this.leases.set(key, lease);
    this.#notify('leases', old, lease, how);
    this.#leaseRV = lease.resourceVersion;
  }

  /** Removes the VolumeAttachment and notifies its handlers; a no-op when absent. */
  removeVolumeAttachment(name: string, how: Delivery = {}): void {
    const old = this.volumeAttachments.get(name);
    if (!old) return;
    this.volumeAttachments.delete(name);
    this.#notify('volumeAttachments', old, undefined, how);
  }

  /**
   * Deletes `pod` as the API server does: a forced deletion, an unbound pod, or one whose node's
   * kubelet runs (and confirms) is gone at once; otherwise the pod stays Terminating with a 30 s
   * grace period (asked again, it is left as it is). Records a `pod-deleted` timeline entry unless
   * the pod was already Terminating and this is not a forced deletion.
   */
  deletePod(pod: Pod, how: PodDeletion): void {
    const key = podKey(pod);
    if (pod.deletionTimestamp === undefined || how.force) {
      this.timeline.push({ atMs: this.elapsed(), kind: 'pod-deleted', node: pod.nodeName, pod: key, owners: pod.ownerReferences.map(ownerText), ...how });
    }
    if (how.force || this.kubeletRunning(pod.nodeName) || pod.nodeName === '') {
      this.removePod(key);
    } else if (pod.deletionTimestamp === undefined) {
      // No kubelet confirms the graceful deletion: the pod stays Terminating, as on a real API server.
      this.putPod({ ...pod, deletionTimestamp: this.#clock.now(), deletionGracePeriodSeconds: 30 });
    }
  }

  /** Adds a `taint` timeline entry for the difference between `before` and `after` (none when equal). */
  recordTaints(node: string, before: readonly Taint[], after: readonly Taint[], by: string): void {
    const b = new Set(before.map(formatTaint));
    const a = new Set(after.map(formatTaint));
    const added = [...a].filter((t) => !b.has(t));
    const removed = [...b].filter((t) => !a.has(t));
    if (added.length + removed.length > 0) this.timeline.push({ atMs: this.elapsed(), kind: 'taint', node, added, removed, by });
  }

  /** The node lifecycle controller's writes ({@link RecordingWriter.nodeLifecycleWrites}). */
  nodeLifecycleWrites(): NodeLifecycleWrites {
    return this.writer.nodeLifecycleWrites();
  }

  /** The taint eviction controller's writes ({@link RecordingWriter.taintEvictionWrites}). */
  taintEvictionWrites(): TaintEvictionWrites {
    return this.writer.taintEvictionWrites();
  }

  /** The pod garbage collector's writes ({@link RecordingWriter.podGCWrites}). */
  podGCWrites(): PodGCWrites {
    return this.writer.podGCWrites();
  }

  /** The forced-detach controller's writes ({@link RecordingWriter.forceDetachWrites}). */
  forceDetachWrites(): ForceDetachWrites {
    return this.writer.forceDetachWrites();
  }

  /**
   * The node affinity enforcer's evictions: an Eviction is a graceful deletion (no PodDisruptionBudget
   * is modelled, so none is refused).
   * @returns the enforcer's evictor; `evict` answers `gone` for a pod missing or replaced (other uid).
   */
  affinityEvictions(): AffinityEvictor {
    return {
      evict: async ({ namespace, name, uid }) => {
        const cur = this.pods.get(`${namespace}/${name}`);
        if (!cur || cur.uid !== uid) return { kind: 'gone', detail: 'pod not found or replaced' };
        this.deletePod(cur, { force: false, by: 'node-affinity-enforcer', reason: 'required node affinity no longer matches the node' });
        return { kind: 'evicted' };
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
    if (!k.running || this.#clock.now() < k.pausedUntil || this.#clock.now() < this.#apiDownUntil || !this.nodes.has(name)) return;
    this.#renewLease(name);
    const node = this.nodes.get(name);
    const ready = node && getCondition(node.conditions, 'Ready');
    if (force || ready?.status !== k.reports || this.#clock.now() - k.lastStatusAt >= KUBELET_STATUS_REPORT_MS) this.#postStatus(name, k);
  }

  #renewLease(name: string): void {
    const old = this.leases.get(leaseKey(name));
    // A kubelet renews from one loop, with its clock's MicroTime: it never writes the same renewTime
    // twice. Here a pause's end and the kubelet's regular tick can fall in one millisecond; two writes
    // then (a second resourceVersion of one renewal) would make a monitor pass between them keep the
    // first for good, as upstream's tryUpdateNodeHealth would (fuzz run 94103 of seed 20261201).
    if (old?.renewTime === this.#clock.now()) return;
    this.putLease({ ...(old ?? { namespace: NODE_LEASE_NAMESPACE, name, holderIdentity: name, leaseDurationSeconds: 40 }), resourceVersion: this.nextResourceVersion(), renewTime: this.#clock.now() });
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
    this.putNode({ ...node, conditions: [...node.conditions.filter((c) => c.type !== 'Ready'), ready] });
  }

  /**
   * The API server stops answering for `forMs` milliseconds from now: no kubelet's Lease renewal or
   * status post lands until then, and at its end every running kubelet renews and posts what it
   * reports at once (as real kubelets retry every few hundred milliseconds). The caller models what
   * the controllers see of the outage; the objects themselves do not change here.
   */
  apiOutage(forMs: number): void {
    this.#apiDownUntil = Math.max(this.#apiDownUntil, this.#clock.now() + forMs);
    this.#clock.setTimeout(() => {
      if (this.#clock.now() < this.#apiDownUntil) return;
      for (const [name, k] of this.#kubelets) this.#heartbeat(name, k, true);
    }, forMs);
  }

  /** Whether the API server is down now ({@link apiOutage}). */
  apiDown(): boolean {
    return this.#clock.now() < this.#apiDownUntil;
  }

  /**
   * A kubelet (re)registers its Node: `node` is stored (a new object, notifying the node handlers)
   * and a simulated kubelet for it runs, reporting Ready, and renews its Lease at once. As a kubelet
   * that restarts after its Node was deleted does (`registerWithAPIServer`). A no-op while the node
   * exists or the API server is down.
   */
  registerNode(node: Node): void {
    if (this.nodes.has(node.name) || this.apiDown()) return;
    this.putNode(node);
    const k: Kubelet = { running: true, reports: 'True', pausedUntil: 0, phase: this.#kubelets.size % (KUBELET_LEASE_RENEW_MS / 1000), lastStatusAt: this.#clock.now() };
    this.#kubelets.set(node.name, k);
    this.#heartbeat(node.name, k, true);
  }

  /**
   * Applies one scenario action to `nodes` now.
   * @param action the step's action (see src/whatif/scenario.ts).
   * @param forMs `pause-heartbeats` only: the pause, milliseconds.
   * @throws RangeError for an unknown action.
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
          if (next) this.putNode({ ...node, taints: next });
          break;
        }
        case 'delete-node':
          this.removeNode(name);
          break;
        default:
          throw new RangeError(`unknown scenario action ${action}`);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  #reindexPod(key: string, old: Pod | undefined, cur: Pod | undefined): void {
    this.#podList = undefined;
    if (old?.nodeName && old.nodeName !== cur?.nodeName) this.#podsByNode.get(old.nodeName)?.delete(key);
    if (!cur?.nodeName) return;
    let m = this.#podsByNode.get(cur.nodeName);
    if (!m) this.#podsByNode.set(cur.nodeName, (m = new Map()));
    m.set(key, cur);
  }

  #reindexVa(name: string, old: VolumeAttachment | undefined, cur: VolumeAttachment | undefined): void {
    if (old && old.nodeName !== cur?.nodeName) this.#vasByNode.get(old.nodeName)?.delete(name);
    if (!cur) return;
    let m = this.#vasByNode.get(cur.nodeName);
    if (!m) this.#vasByNode.set(cur.nodeName, (m = new Map()));
    m.set(name, cur);
  }

  /** Delivers an add, update or delete to the handlers: at once, or after the write returned (as a watch event would). */
  #notify<K extends keyof ClusterHandlers>(resource: K, old: unknown, cur: unknown, how: Delivery): void {
    const hs = this.#handlers[resource] as ResourceHandlers<unknown>[];
    const deliver = (): void => {
      for (const h of hs) {
        if (old === undefined && cur !== undefined) h.add?.(cur);
        else if (old !== undefined && cur !== undefined) h.update?.(old, cur);
        else if (old !== undefined) h.delete?.(old);
      }
    };
    if (how.sync) deliver();
    else queueMicrotask(deliver);
  }
}

/** `Kind/name` of an owner reference, for the report. */
function ownerText(o: OwnerRef): string {
  return `${o.kind}/${o.name}`;
}
