/**
 * The in-memory world that unit tests of the node lifecycle controller shell
 * (src/nodelifecycle/controller.ts) drive: FakeClock, caches behind the ReadStore shapes, simulated
 * kubelets (Lease renewals), a recording double of {@link NodeLifecycleWrites} that applies each
 * write to the caches and notifies the controller as the informers would, and a recording
 * {@link EventSink}. Not a fake API server: nothing here speaks HTTP. Used by
 * test/unit/nodelifecycle-controller.test.ts and test/unit/upstream-nodelifecycle-*.test.ts.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import type { EventObjectRef } from '../../src/kube/types.js';
import { getCondition, podKey, type Lease, type Node, type NodeCondition, type OwnerRef, type Pod } from '../../src/kube/objects.js';
import { createMetrics, type NodeCollectorMetrics } from '../../src/metrics/registry.js';
import { NodeLifecycleController, type NodeLifecycleConfig, type NodeLifecycleWrites } from '../../src/nodelifecycle/controller.js';
import { applyTaintSwap, conditionTaintDiff } from '../../src/nodelifecycle/taints.js';
import { LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE } from '../../src/nodelifecycle/zones.js';

export const START = Date.UTC(2026, 2, 1, 12);
export const GRACE_MS = 50_000;
export const LEASE_RENEW_MS = 10_000;

export const DEFAULT_CONFIG: NodeLifecycleConfig = {
  nodeMonitorPeriodMs: 5000,
  nodeMonitorGracePeriodMs: GRACE_MS,
  nodeStartupGracePeriodMs: 60_000,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
  enableTaintManager: true,
  podEvictionTimeoutMs: 300_000,
};

export interface RecordedWrite {
  kind: 'taint' | 'status' | 'podNotReady' | 'evict' | 'labels';
  target: string;
  atMs: number;
  detail: string;
}

export interface RecordedEvent {
  ref: EventObjectRef;
  type: string;
  reason: string;
  message: string;
  atMs: number;
}

/** An in-memory cluster: caches, kubelets that renew their Leases, a recording writes double. */
export class World {
  readonly clock: FakeClock;
  readonly nodes = new Map<string, Node>();
  readonly leases = new Map<string, Lease>();
  readonly pods = new Map<string, Pod>();
  readonly daemonSets = new Set<string>();
  /** Pods (by key) that `selectsPod` reports as selected by a DaemonSet (1.20 `GetPodDaemonSets`). */
  readonly daemonSetSelected = new Set<string>();
  readonly writes: RecordedWrite[] = [];
  readonly events: RecordedEvent[] = [];
  readonly metrics: NodeCollectorMetrics = createMetrics({ defaultMetrics: false }).nodeCollector;
  /** Nodes whose kubelet renews its Lease every {@link LEASE_RENEW_MS}. */
  readonly alive = new Set<string>();
  /** Called by updateNodeConditions before it applies a write (to hold it open in tests). */
  statusWriteGate: (name: string) => Promise<void> = async () => undefined;
  /** Nodes whose status writes never land (each sync of theirs needs another write). */
  readonly statusWriteLost = new Set<string>();
  ctl!: NodeLifecycleController;
  /** `NodeControllerLeaseCircuitBreaker` (on by default, as in production). */
  breaker = true;
  /** The API server's Leases (the cache is {@link leases}); renewals reach both unless the cache is frozen. */
  readonly apiLeases = new Map<string, Lease>();
  /** While true, renewals reach only the API server: a connected but lagging Lease informer. */
  leaseCacheFrozen = false;
  /** The Lease informer's resourceVersion (the last Lease it applied). */
  leaseCacheRV = '';
  /** Node names whose Lease was read live, in order. */
  readonly leaseReads: string[] = [];
  /** When set, every live Lease read fails with it. */
  leaseReadError: Error | undefined;
  #rv = 1;

  /** Pod keys whose next `markPodNotReady` writes fail (one failure per entry), as a 500 would. */
  readonly podWriteFailures: string[] = [];

  /**
   * @param config the controller's configuration
   * @param startMs the FakeClock's start, epoch ms (upstream's tables use 2015-01-01T12:00:00Z)
   */
  constructor(
    readonly config: NodeLifecycleConfig = DEFAULT_CONFIG,
    startMs = START,
  ) {
    this.clock = new FakeClock(startMs);
  }

  readonly writesDouble: NodeLifecycleWrites = {
    swapNodeTaints: async (name, toAdd, toRemove, _cached, opts = {}) => {
      const node = this.nodes.get(name);
      if (!node) return 'gone';
      const d = opts.conditionTaints ? conditionTaintDiff(node) : undefined;
      if (d) opts.onConditionTaints?.(d.toAdd, d.toRemove);
      const next = applyTaintSwap(node.taints, [...toAdd, ...(d?.toAdd ?? [])], [...toRemove, ...(d?.toRemove ?? [])], this.clock.now());
      if (next === undefined) return 'unchanged';
      const added = toAdd.map((t) => `+${t.key}:${t.effect}`);
      const removed = toRemove.map((t) => `-${t.key}:${t.effect}`);
      this.writes.push({ kind: 'taint', target: name, atMs: this.clock.now(), detail: [...added, ...removed].join(' ') });
      this.#putNode({ ...node, taints: next });
      return 'written';
    },
    updateNodeConditions: async (name, cached, compute) => {
      await this.statusWriteGate(name);
      const node = this.nodes.get(name) ?? cached;
      if (!node) return { result: 'gone' };
      if (this.statusWriteLost.has(name)) return { result: 'unchanged', node };
      const written = compute(node);
      if (!written) return { result: 'unchanged', node };
      const byType = new Map(node.conditions.map((c) => [c.type, c]));
      for (const c of written) byType.set(c.type, c);
      const updated = this.#putNode({ ...node, conditions: [...byType.values()] });
      this.writes.push({ kind: 'status', target: name, atMs: this.clock.now(), detail: getCondition(written, 'Ready')?.status ?? '' });
      return { result: 'written', written, node: updated };
    },
    markPodNotReady: async (pod, nodeName) => {
      const failAt = this.podWriteFailures.indexOf(podKey(pod));
      if (failAt >= 0) {
        this.podWriteFailures.splice(failAt, 1);
        this.writes.push({ kind: 'podNotReady', target: podKey(pod), atMs: this.clock.now(), detail: 'failed' });
        throw new Error('fake error');
      }
      const cur = this.pods.get(podKey(pod));
      if (!cur || cur.uid !== pod.uid) return 'gone';
      if (cur.nodeName !== nodeName) return 'unchanged';
      const ready = getCondition(cur.conditions, 'Ready');
      if (!ready || ready.status === 'False') return 'unchanged';
      this.writes.push({ kind: 'podNotReady', target: podKey(pod), atMs: this.clock.now(), detail: nodeName });
      this.putPod({ ...cur, conditions: cur.conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c)) });
      return 'written';
    },
    evictPodLegacy: async (pod, nodeName) => {
      const cur = this.pods.get(podKey(pod));
      if (!cur || cur.uid !== pod.uid) return 'gone';
      this.writes.push({ kind: 'evict', target: podKey(pod), atMs: this.clock.now(), detail: nodeName });
      this.putPod({ ...cur, deletionTimestamp: this.clock.now() });
      return 'written';
    },
    patchNodeLabels: async (name, cached, compute) => {
      const node = this.nodes.get(name) ?? cached;
      if (!node) return 'gone';
      const labels = compute(node);
      if (!labels) return 'unchanged';
      this.writes.push({ kind: 'labels', target: name, atMs: this.clock.now(), detail: JSON.stringify(labels) });
      this.#putNode({ ...node, labels: { ...node.labels, ...labels } });
      return 'written';
    },
    forgetNode: () => undefined,
  };

  /** Builds (not starts) the controller over this world. */
  build(): NodeLifecycleController {
    this.ctl = new NodeLifecycleController({
      config: this.config,
      clock: this.clock,
      log: silentLogger,
      caches: {
        nodes: { get: (k) => this.nodes.get(k), list: () => [...this.nodes.values()] },
        leases: { get: (k) => this.leases.get(k), list: () => [...this.leases.values()] },
        pods: {
          get: (k) => this.pods.get(k),
          list: () => [...this.pods.values()],
          podsOnNode: (n) => [...this.pods.values()].filter((p) => p.nodeName === n),
        },
        daemonSets: { has: (k) => this.daemonSets.has(k), selectsPod: (p) => this.daemonSetSelected.has(podKey(p)) },
      },
      writes: this.writesDouble,
      events: { record: (ref, type, reason, message) => void this.events.push({ ref, type, reason, message, atMs: this.clock.now() }) },
      metrics: this.metrics,
      canSeeCluster: () => true,
      ...(this.breaker
        ? {
            leaseCircuitBreaker: {
              readLease: async (n: string) => {
                this.leaseReads.push(n);
                if (this.leaseReadError) throw this.leaseReadError;
                const l = this.apiLeases.get(`kube-node-lease/${n}`);
                return l && { resourceVersion: l.resourceVersion };
              },
              cacheResourceVersion: () => this.leaseCacheRV,
            },
          }
        : {}),
    });
    return this.ctl;
  }

  /** Adds a Ready node in `zone` whose kubelet renews its Lease from now on. */
  addNode(name: string, zone: string, ready: 'True' | 'False' | 'Unknown' = 'True'): void {
    const now = this.clock.now();
    const conditions: NodeCondition[] = [{ type: 'Ready', status: ready, lastHeartbeatTime: now, lastTransitionTime: now - 3_600_000 }];
    this.#putNode({
      name,
      uid: `uid-${name}`,
      resourceVersion: '0',
      creationTimestamp: now - 7_200_000,
      labels: { [LABEL_TOPOLOGY_REGION]: 'r', [LABEL_TOPOLOGY_ZONE]: zone },
      unschedulable: false,
      taints: [],
      conditions,
    });
    this.alive.add(name);
    this.renew(name);
  }

  /** The kubelet posts a new Ready status (a status heartbeat). */
  postReady(name: string, status: 'True' | 'False'): void {
    const node = this.nodes.get(name);
    assert.ok(node);
    const now = this.clock.now();
    const old = getCondition(node.conditions, 'Ready');
    const ready: NodeCondition = {
      type: 'Ready',
      status,
      lastHeartbeatTime: now,
      lastTransitionTime: old?.status === status ? (old.lastTransitionTime ?? now) : now,
    };
    this.#putNode({ ...node, conditions: [...node.conditions.filter((c) => c.type !== 'Ready'), ready] });
  }

  renew(name: string): void {
    const key = `kube-node-lease/${name}`;
    const lease: Lease = { namespace: 'kube-node-lease', name, resourceVersion: String(++this.#rv), renewTime: this.clock.now() };
    this.apiLeases.set(key, lease);
    if (!this.leaseCacheFrozen) this.#cacheLease(lease);
  }

  /** A fresh resourceVersion, newer than every one handed out so far. */
  nextResourceVersion(): string {
    return String(++this.#rv);
  }

  /** The lagging Lease informer catches up with the API server. */
  catchUpLeaseCache(): void {
    this.leaseCacheFrozen = false;
    let newest = this.leaseCacheRV;
    for (const [key, lease] of this.apiLeases) {
      if (this.leases.get(key) !== lease) this.#cacheLease(lease);
      if (Number(lease.resourceVersion) > Number(newest || '0')) newest = lease.resourceVersion;
    }
    this.leaseCacheRV = newest;
  }

  #cacheLease(lease: Lease): void {
    this.leases.set(`kube-node-lease/${lease.name}`, lease);
    this.ctl?.leaseChanged(lease.name);
    this.leaseCacheRV = lease.resourceVersion; // as the informer: after the handler ran
  }

  /** Every kubelet in {@link alive} renews its Lease every {@link LEASE_RENEW_MS}, forever. */
  startKubelets(): void {
    const tick = (): void => {
      for (const n of this.alive) this.renew(n);
      this.clock.setTimeout(tick, LEASE_RENEW_MS);
    };
    this.clock.setTimeout(tick, LEASE_RENEW_MS);
  }

  /** A Running pod with Ready=True bound to `nodeName`. */
  putPod(pod: Pod): Pod;
  putPod(name: string, nodeName: string, owners?: OwnerRef[]): Pod;
  putPod(a: Pod | string, nodeName?: string, owners: OwnerRef[] = []): Pod {
    const pod: Pod =
      typeof a === 'string'
        ? {
            namespace: 'default',
            name: a,
            uid: `pod-uid-${a}-${++this.#rv}`,
            resourceVersion: String(++this.#rv),
            nodeName: nodeName ?? '',
            phase: 'Running',
            creationTimestamp: this.clock.now(),
            conditions: [{ type: 'Ready', status: 'True' }],
            tolerations: [],
            ownerReferences: owners,
            pvcNames: [],
            finalizers: [],
          }
        : { ...a, resourceVersion: String(++this.#rv) };
    const old = this.pods.get(podKey(pod));
    this.pods.set(podKey(pod), pod);
    this.ctl?.podChanged(pod, old);
    return pod;
  }

  podReady(key: string): string | undefined {
    return getCondition(this.pods.get(key)?.conditions ?? [], 'Ready')?.status;
  }

  noExecuteAdds(): RecordedWrite[] {
    return this.writes.filter((w) => w.kind === 'taint' && /\+node\.kubernetes\.io\/(unreachable|not-ready):NoExecute/.test(w.detail));
  }

  /**
   * Stores a node in the cache as an informer would (a new resourceVersion, then `nodeChanged`).
   * @returns the stored copy.
   */
  storeNode(node: Node): Node {
    return this.#putNode(node);
  }

  /** Each zone's state as the controller sees it, keyed by upstream's zone key (`region:\x00:zone`). */
  zoneStates(): Record<string, string> {
    return Object.fromEntries(this.ctl.view().zones.map((z) => [z.zone, z.state]));
  }

  async settle(ms = 0): Promise<void> {
    await this.clock.advanceAsync(ms);
  }

  /** Advances in steps of `stepMs` so that timers, queues and writes interleave as in real time. */
  async run(ms: number, stepMs = 100): Promise<void> {
    for (let t = 0; t < ms; t += stepMs) await this.clock.advanceAsync(Math.min(stepMs, ms - t));
  }

  #putNode(node: Node): Node {
    const stored = { ...node, resourceVersion: String(++this.#rv) };
    this.nodes.set(node.name, stored);
    // The informer delivers the update after the write returned.
    queueMicrotask(() => this.ctl?.nodeChanged(node.name));
    return stored;
  }
}

export function started(t: TestContext, config: Partial<NodeLifecycleConfig>, setup: (w: World) => void): World {
  const w = new World({ ...DEFAULT_CONFIG, ...config });
  setup(w);
  w.build().start();
  w.startKubelets();
  t.after(() => w.ctl.stop());
  return w;
}

export const zoneNodes = (zone: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${zone}-n${i}`);
