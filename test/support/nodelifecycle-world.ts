/**
 * The in-memory world that unit tests of the node lifecycle controller shell
 * (src/nodelifecycle/controller.ts) drive: FakeClock, the shared in-memory cluster
 * (src/inmemory/cluster.ts) whose maps are the caches behind the ReadStore shapes, simulated
 * kubelets (Lease renewals), the cluster's recording writer (src/inmemory/writer.ts) that applies
 * each write to the caches and notifies the controller as the informers would, and a recording
 * {@link EventSink}. Not a fake API server: nothing here speaks HTTP. Used by
 * test/unit/nodelifecycle-controller.test.ts and test/unit/upstream-nodelifecycle-*.test.ts.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import type { EventSink } from '../../src/kube/types.js';
import { getCondition, podKey, type Lease, type Node, type NodeCondition, type OwnerRef, type Pod } from '../../src/kube/objects.js';
import { createMetrics, type NodeCollectorMetrics } from '../../src/metrics/registry.js';
import { NodeLifecycleController, type NodeLifecycleCaches, type NodeLifecycleConfig, type NodeLifecycleWrites } from '../../src/nodelifecycle/controller.js';
import { LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE } from '../../src/nodelifecycle/zones.js';
import { InMemoryCluster } from '../../src/inmemory/cluster.js';
import { RecordingEventSink, type RecordedEvent } from '../../src/inmemory/events.js';
import type { NodeJudgementBoard } from '../../src/kube/judgements.js';
import type { RecordedWrite } from '../../src/inmemory/writer.js';

export type { RecordedEvent } from '../../src/inmemory/events.js';
export type { RecordedWrite } from '../../src/inmemory/writer.js';

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

/**
 * What the node lifecycle controller is built from: the same inputs a registry descriptor's
 * `build(ctx)` takes (caches, writes, events, clock, metrics, config).
 */
export interface NodeLifecycleBuildInputs {
  caches: NodeLifecycleCaches;
  writes: NodeLifecycleWrites;
  events: EventSink;
  clock: FakeClock;
  metrics: NodeCollectorMetrics;
  config: NodeLifecycleConfig;
}

/** An in-memory cluster: caches, kubelets that renew their Leases, a recording writes double. */
export class World {
  readonly clock: FakeClock;
  /** The shared in-memory cluster: its maps are the informers' caches and the API's objects. */
  readonly cluster: InMemoryCluster;
  readonly nodes: Map<string, Node>;
  readonly leases: Map<string, Lease>;
  readonly pods: Map<string, Pod>;
  readonly daemonSets = new Set<string>();
  /** Pods (by key) that `selectsPod` reports as selected by a DaemonSet (1.20 `GetPodDaemonSets`). */
  readonly daemonSetSelected = new Set<string>();
  /** Every write, in order (the cluster's recording writer's log). */
  readonly writes: RecordedWrite[];
  readonly eventSink: RecordingEventSink;
  readonly events: RecordedEvent[];
  readonly metrics: NodeCollectorMetrics = createMetrics({ defaultMetrics: false }).nodeCollector;
  /** Nodes whose kubelet renews its Lease every {@link LEASE_RENEW_MS}. */
  readonly alive = new Set<string>();
  /** Called by updateNodeConditions before it applies a write (to hold it open in tests). */
  statusWriteGate: (name: string) => Promise<void> = async () => undefined;
  /**
   * Called by swapNodeTaints before it reads the node and applies the swap, with the taints asked
   * for (`+key:effect -key:effect`): a returned promise holds that taint write mid-flight until it
   * settles; `undefined` lets it through at once.
   */
  taintWriteGate: ((name: string, asked: string) => Promise<void> | undefined) | undefined;
  /** Called by markPodNotReady (with the pod's key) before it applies a write: a returned promise holds it mid-flight. */
  podWriteGate: ((key: string) => Promise<void> | undefined) | undefined;
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

  /** The controller's logger (set before {@link build}; silent by default). */
  log: Logger = silentLogger;

  /** Nodes whose newest version the API holds malformed: the cache keeps the last readable one (`newestUnreadable`). */
  readonly unreadable = new Set<string>();

  #seeing = true;
  /**
   * Whether the controller sees the cluster (`canSeeCluster`, `watchingCluster`): false while its
   * caches are blind (an outage). Setting it is a watch-stream transition: the controller is told
   * at once (`sightChanged`), as the informers' `watching` handler tells it.
   */
  get seeing(): boolean {
    return this.#seeing;
  }
  set seeing(v: boolean) {
    const changed = v !== this.#seeing;
    this.#seeing = v;
    if (changed) this.ctl?.sightChanged();
  }
  /** The judgement board the controller writes (set before {@link build}; none by default). */
  judgements: NodeJudgementBoard | undefined;

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
    this.cluster = InMemoryCluster.empty(this.clock);
    this.nodes = this.cluster.nodes;
    this.leases = this.cluster.leases;
    this.pods = this.cluster.pods;
    const writer = this.cluster.writer;
    this.writes = writer.writes;
    writer.gate = (call) =>
      call.method === 'updateNodeConditions'
        ? this.statusWriteGate(call.target)
        : call.method === 'swapNodeTaints'
          ? this.taintWriteGate?.(call.target, call.asked ?? '')
          : call.method === 'markPodNotReady'
            ? this.podWriteGate?.(call.target)
            : undefined;
    writer.lose = (call) => this.statusWriteLost.has(call.target);
    writer.fail = (call) => {
      const at = call.method === 'markPodNotReady' ? this.podWriteFailures.indexOf(call.target) : -1;
      if (at < 0) return undefined;
      this.podWriteFailures.splice(at, 1);
      return new Error('fake error');
    };
    this.writesDouble = writer.nodeLifecycleWrites();
    this.eventSink = new RecordingEventSink(this.clock);
    this.events = this.eventSink.list;
    // As src/whatif/run.ts subscribes the controller; built later, so each handler looks it up.
    this.cluster.on('nodes', { add: (n) => this.ctl?.nodeChanged(n.name), update: (_o, n) => this.ctl?.nodeChanged(n.name), delete: (n) => this.ctl?.nodeDeleted(n.name) });
    this.cluster.on('pods', { add: (p) => this.ctl?.podChanged(p), update: (o, p) => this.ctl?.podChanged(p, o) });
    this.cluster.on('leases', { add: (l) => this.ctl?.leaseChanged(l.name), update: (_o, l) => this.ctl?.leaseChanged(l.name) });
  }

  readonly writesDouble: NodeLifecycleWrites;

  /** The controller's inputs over this world (what a registry descriptor's `build(ctx)` receives). */
  buildInputs(): NodeLifecycleBuildInputs {
    const c = this.cluster;
    return {
      caches: {
        nodes: { get: (k) => c.nodes.get(k), list: () => c.nodeList(), newestUnreadable: (n) => this.unreadable.has(n) },
        leases: { get: (k) => c.leases.get(k), list: () => [...c.leases.values()] },
        pods: { get: (k) => c.pods.get(k), list: () => c.podList(), podsOnNode: (n) => c.podsOnNode(n) },
        daemonSets: { has: (k) => this.daemonSets.has(k), selectsPod: (p) => this.daemonSetSelected.has(podKey(p)) },
      },
      writes: this.writesDouble,
      events: this.eventSink,
      clock: this.clock,
      metrics: this.metrics,
      config: this.config,
    };
  }

  /** Builds (not starts) the controller over this world. */
  build(): NodeLifecycleController {
    const { caches, writes, events, clock, metrics, config } = this.buildInputs();
    this.ctl = new NodeLifecycleController({
      config,
      clock,
      log: this.log,
      caches,
      writes,
      events,
      metrics,
      canSeeCluster: () => this.seeing,
      watchingCluster: () => this.seeing,
      ...(this.judgements ? { judgements: this.judgements } : {}),
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

  /** The node's kubelet renews its Lease now; `leaseDurationSeconds` (unset: none in the spec) is its `spec.leaseDurationSeconds`. */
  renew(name: string, leaseDurationSeconds?: number): void {
    const key = `kube-node-lease/${name}`;
    const lease: Lease = {
      namespace: 'kube-node-lease',
      name,
      resourceVersion: this.cluster.nextResourceVersion(),
      renewTime: this.clock.now(),
      ...(leaseDurationSeconds !== undefined ? { leaseDurationSeconds } : {}),
    };
    this.apiLeases.set(key, lease);
    if (!this.leaseCacheFrozen) this.#cacheLease(lease);
  }

  /** A fresh resourceVersion, newer than every one handed out so far. */
  nextResourceVersion(): string {
    return this.cluster.nextResourceVersion();
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
    this.cluster.putLease(lease, { sync: true });
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
            uid: `pod-uid-${a}-${this.cluster.nextResourceVersion()}`,
            resourceVersion: '0',
            nodeName: nodeName ?? '',
            phase: 'Running',
            creationTimestamp: this.clock.now(),
            conditions: [{ type: 'Ready', status: 'True' }],
            tolerations: [],
            ownerReferences: owners,
            pvcNames: [],
            finalizers: [],
          }
        : a;
    // An informer that delivers at once: the controller hears of the pod before this returns.
    return this.cluster.putPod(pod, { sync: true });
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
    // The informer delivers the update after the write returned (a microtask).
    return this.cluster.putNode(node);
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
