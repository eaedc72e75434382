/**
 * The bench's own view of the cluster while a controller works: when each failed node's last
 * heartbeat was, when it turned Ready=Unknown, when its NoExecute taint appeared, and when each
 * tracked pod started terminating. Times are the bench's observation times (epoch ms) of watch
 * events, so both controllers are timed by the same observer.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { realClock } from '../../src/util/clock.js';
import { getCondition, podKey, toLease, toNode, toPod, type Node, type Pod } from '../../src/kube/objects.js';
import { startListWatch, type ListWatchHandle, type WatchEventType } from '@node-lifecycle-controller/sim/watch';
import { silentLogger } from '@node-lifecycle-controller/sim/log';
import { makeClients } from '../../src/kube/client.js';

/** Taint keys the node lifecycle controller puts on unhealthy nodes. */
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/** What the tracker learned about one failed node (epoch ms). */
export interface NodeTimeline {
  /** latest of the Lease's renewTime and the Ready condition's lastHeartbeatTime seen before Unknown */
  lastHeartbeatMs?: number;
  /** when the bench's watch first delivered that heartbeat (its Lease or Node event) */
  lastHeartbeatSeenMs?: number;
  /** first observation of Ready=Unknown */
  unknownAtMs?: number;
  /** first observation of a not-ready/unreachable NoExecute taint */
  noExecuteTaintAtMs?: number;
  /** that taint's key */
  noExecuteTaintKey?: string;
}

/**
 * Pure bookkeeping of failure timelines, fed with observed objects and their observation times.
 * No I/O, so it is unit-testable.
 */
export class FailureTracker {
  /** latest renewTime per Lease, and when the watch first delivered it */
  readonly #renew = new Map<string, { ms: number; seenAtMs: number }>();
  /** latest Ready lastHeartbeatTime per tracked node, and when the watch first delivered it */
  readonly #readyBeat = new Map<string, { ms: number; seenAtMs: number }>();
  readonly #nodes = new Map<string, NodeTimeline>();
  readonly #pods = new Map<string, { node: string; goneAtMs?: number }>();
  readonly #podNodes = new Set<string>();
  /** every pod seen, by key, with its node (to pick pods to track later) */
  readonly #allPods = new Map<string, { node: string; kind: string; terminating: boolean }>();
  #listeners = new Set<() => void>();

  /**
   * Forgets every tracked node and pod, so that the next wave on the same fleet is timed on its own
   * (the limits scenario). What the watches know of Leases and pods is kept: it is the cluster's state.
   */
  reset(): void {
    this.#nodes.clear();
    this.#readyBeat.clear();
    this.#pods.clear();
    this.#podNodes.clear();
  }

  /** Starts tracking these nodes' health timelines (failed nodes). */
  trackNodes(names: Iterable<string>): void {
    for (const n of names) if (!this.#nodes.has(n)) this.#nodes.set(n, {});
  }

  /**
   * Starts tracking every pod currently seen (and not terminating) on `nodes` whose kind label is in `kinds`
   * (all kinds when `kinds` is undefined). @returns how many pods are now tracked.
   */
  trackPodsOn(nodes: ReadonlySet<string>, kinds?: ReadonlySet<string>): number {
    for (const [key, p] of this.#allPods) {
      if (!nodes.has(p.node) || p.terminating || (kinds && !kinds.has(p.kind))) continue;
      this.#podNodes.add(p.node);
      if (!this.#pods.has(key)) this.#pods.set(key, { node: p.node });
    }
    return this.#pods.size;
  }

  /** A Lease in kube-node-lease was seen at `atMs`. */
  observeLease(name: string, renewTimeMs: number | undefined, atMs: number): void {
    if (renewTimeMs === undefined) return;
    const cur = this.#renew.get(name);
    if (!cur || renewTimeMs > cur.ms) this.#renew.set(name, { ms: renewTimeMs, seenAtMs: atMs });
  }

  /** A Node was seen at `atMs`. */
  observeNode(node: Node, atMs: number): void {
    const t = this.#nodes.get(node.name);
    if (!t) return;
    const ready = getCondition(node.conditions, 'Ready');
    if (t.unknownAtMs === undefined) {
      const beat = ready?.lastHeartbeatTime;
      const cur = this.#readyBeat.get(node.name);
      if (beat !== undefined && (!cur || beat > cur.ms)) this.#readyBeat.set(node.name, { ms: beat, seenAtMs: atMs });
      // The later heartbeat of the two; on a tie, the one the watch delivered first.
      const candidates = [this.#renew.get(node.name), this.#readyBeat.get(node.name)].filter((x): x is { ms: number; seenAtMs: number } => x !== undefined && x.ms > 0);
      const last = candidates.sort((a, b) => b.ms - a.ms || a.seenAtMs - b.seenAtMs)[0];
      if (last) {
        t.lastHeartbeatMs = last.ms;
        t.lastHeartbeatSeenMs = last.seenAtMs;
      }
      if (ready?.status === 'Unknown') {
        t.unknownAtMs = atMs;
        this.#notify();
      }
    }
    if (t.noExecuteTaintAtMs === undefined) {
      const taint = node.taints.find((x) => x.effect === 'NoExecute' && (x.key === UNREACHABLE_TAINT || x.key === NOT_READY_TAINT));
      if (taint) {
        t.noExecuteTaintAtMs = atMs;
        t.noExecuteTaintKey = taint.key;
        this.#notify();
      }
    }
  }

  /** A pod was seen at `atMs` (`deleted` for a DELETED watch event). */
  observePod(pod: Pod, kind: string, deleted: boolean, atMs: number): void {
    const key = podKey(pod);
    const terminating = deleted || pod.deletionTimestamp !== undefined;
    if (deleted) this.#allPods.delete(key);
    else this.#allPods.set(key, { node: pod.nodeName, kind, terminating });
    const tracked = this.#pods.get(key);
    if (tracked && tracked.goneAtMs === undefined && terminating) {
      tracked.goneAtMs = atMs;
      this.#notify();
    }
  }

  /**
   * After a relist: tracked pods missing from `presentKeys` were deleted while the watch was down;
   * they count as gone at `atMs`.
   */
  resyncPods(presentKeys: ReadonlySet<string>, atMs: number): void {
    for (const [key, p] of this.#pods) {
      if (p.goneAtMs === undefined && !presentKeys.has(key)) p.goneAtMs = atMs;
    }
    for (const key of [...this.#allPods.keys()]) if (!presentKeys.has(key)) this.#allPods.delete(key);
    this.#notify();
  }

  /** Timelines of the tracked nodes. */
  nodeTimelines(): Map<string, NodeTimeline> {
    return new Map([...this.#nodes].map(([k, v]) => [k, { ...v }]));
  }

  /** Epoch ms at which each tracked pod was first seen terminating or deleted (undefined while it runs). */
  podGoneTimes(): (number | undefined)[] {
    return [...this.#pods.values()].map((p) => p.goneAtMs);
  }

  /** True when every tracked node is Unknown and tainted and every tracked pod is gone. */
  complete(): boolean {
    for (const t of this.#nodes.values()) if (t.unknownAtMs === undefined || t.noExecuteTaintAtMs === undefined) return false;
    return this.podsGone();
  }

  /** True when every tracked pod is terminating or deleted. */
  podsGone(): boolean {
    for (const p of this.#pods.values()) if (p.goneAtMs === undefined) return false;
    return true;
  }

  /** Calls `listener` after each observation that changed a timeline; returns an unsubscribe function. */
  onProgress(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #notify(): void {
    for (const l of this.#listeners) l();
  }
}

/**
 * Detection and taint latencies (ms) of the tracked nodes that got that far. Detection is counted
 * from the last heartbeat's own timestamp (`detectionMs`) and from when the bench's watch first
 * delivered it (`detectionFromSeenMs`, issue 18's measure: it leaves out the API server's and the
 * bench's lag in showing the heartbeat). Pure.
 */
export function failureLatencies(timelines: Map<string, NodeTimeline>): { detectionMs: number[]; detectionFromSeenMs: number[]; taintMs: number[]; missing: number } {
  const detectionMs: number[] = [];
  const detectionFromSeenMs: number[] = [];
  const taintMs: number[] = [];
  let missing = 0;
  for (const t of timelines.values()) {
    if (t.unknownAtMs === undefined || t.lastHeartbeatMs === undefined) {
      missing++;
      continue;
    }
    detectionMs.push(t.unknownAtMs - t.lastHeartbeatMs);
    if (t.lastHeartbeatSeenMs !== undefined) detectionFromSeenMs.push(t.unknownAtMs - t.lastHeartbeatSeenMs);
    // A taint seen in the same or an earlier event than Unknown counts as 0.
    if (t.noExecuteTaintAtMs !== undefined) taintMs.push(Math.max(0, t.noExecuteTaintAtMs - t.unknownAtMs));
    else missing++;
  }
  return { detectionMs, detectionFromSeenMs, taintMs, missing };
}

/** A running set of watches feeding a {@link FailureTracker}. */
export interface ClusterObserver {
  tracker: FailureTracker;
  synced: Promise<void>;
  stop(): void;
}

/**
 * Watches Nodes, node Leases and the fleet namespace's pods (optionally filtered by label) and
 * feeds them to a new {@link FailureTracker}. The pod kind comes from `podKindLabel`.
 * `onLeaseSeen` gets every Lease renewal the watch delivers (for bench/lib/watchlag.ts `WatchLagMeter`).
 * @returns the observer; `synced` resolves after every initial list. Never throws.
 */
export function observeCluster(
  kc: KubeConfig,
  opts: { namespace: string; podKindLabel: string; podLabelSelector?: string; onLeaseSeen?: (name: string, renewTimeMs: number, atMs: number) => void },
): ClusterObserver {
  const { core, coordination } = makeClients(kc);
  const tracker = new FailureTracker();
  const common = { kubeConfig: kc, clock: realClock, logger: silentLogger };
  const onNode = (_type: WatchEventType, raw: unknown): void => {
    const n = toNode(raw);
    if (n) tracker.observeNode(n, Date.now());
  };
  const onLease = (_type: WatchEventType, raw: unknown): void => {
    const l = toLease(raw);
    if (!l) return;
    const at = Date.now();
    tracker.observeLease(l.name, l.renewTime, at);
    if (l.renewTime !== undefined) opts.onLeaseSeen?.(l.name, l.renewTime, at);
  };
  const kindOf = (raw: unknown): string =>
    (raw as { metadata?: { labels?: Record<string, string> } }).metadata?.labels?.[opts.podKindLabel] ?? '';
  const onPod = (type: WatchEventType, raw: unknown): void => {
    const p = toPod(raw);
    if (p) tracker.observePod(p, kindOf(raw), type === 'DELETED', Date.now());
  };
  const handles: ListWatchHandle[] = [
    startListWatch({
      ...common,
      name: 'bench-leases',
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      list: async () => {
        const l = await coordination.listNamespacedLease({ namespace: 'kube-node-lease' });
        return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
      },
      onSync: (items) => items.forEach((i) => onLease('ADDED', i)),
      onEvent: onLease,
    }),
    startListWatch({
      ...common,
      name: 'bench-nodes',
      path: '/api/v1/nodes',
      list: async () => {
        const l = await core.listNode();
        return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
      },
      onSync: (items) => items.forEach((i) => onNode('ADDED', i)),
      onEvent: onNode,
    }),
    startListWatch({
      ...common,
      name: 'bench-pods',
      path: `/api/v1/namespaces/${opts.namespace}/pods`,
      ...(opts.podLabelSelector ? { labelSelector: opts.podLabelSelector } : {}),
      list: async () => {
        const l = await core.listNamespacedPod({ namespace: opts.namespace, ...(opts.podLabelSelector ? { labelSelector: opts.podLabelSelector } : {}) });
        return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
      },
      onSync: (items) => {
        const keys = new Set<string>();
        for (const i of items) {
          const p = toPod(i);
          if (p) keys.add(podKey(p));
        }
        tracker.resyncPods(keys, Date.now());
        items.forEach((i) => onPod('ADDED', i));
      },
      onEvent: onPod,
    }),
  ];
  return {
    tracker,
    synced: Promise.all(handles.map((h) => h.synced)).then(() => undefined),
    stop: () => handles.forEach((h) => h.stop()),
  };
}
