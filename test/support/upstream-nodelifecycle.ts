/**
 * How upstream's `pkg/controller/nodelifecycle/node_lifecycle_controller_test.go` drives its
 * controller, mapped onto our shell, for the ports in test/unit/upstream-nodelifecycle-*.test.ts.
 *
 * Upstream builds the controller over a `testutil.FakeNodeHandler` (a fake clientset that records
 * every request), fills the informer stores by hand (`syncNodeStore`, `syncLeaseStore`), sets
 * `nodeController.now` to a fixed time, and calls `monitorNodeHealth` (and the tainting or eviction
 * pass) directly; between two passes it changes `now` (`timeToPass`) and the nodes' statuses.
 * Here:
 * - the fake clientset is {@link World}'s recording writes double (`NodeLifecycleWrites`) plus its
 *   caches; its `writes` list stands for upstream's recorded actions (`UpdatedNodes`,
 *   `update pods/status`, `delete pods`);
 * - `nodeController.now = fakeNow + timeToPass` is `FakeClock.set`, which moves time WITHOUT firing
 *   the timers in between, so, as upstream, the controller sees only the two instants. The
 *   overdue monitor timer then runs the pass at the new time; {@link UpstreamTable.pass} also calls
 *   `monitorNodeHealth` itself for a pass at the same instant;
 * - upstream's fake clientset holds no Lease unless a case creates one (`apiServerLease`), so a
 *   live Lease read (`NodeControllerLeaseCircuitBreaker`, on as in 1.37) answers 404 unless the
 *   case puts a Lease in {@link World.apiLeases};
 * - `testRateLimiterQPS` (100,000 nodes/s) with a token bucket of burst 1 on the FakeClock gives one
 *   token per zone per instant; {@link UpstreamTable.quiesce} advances time when asked, as
 *   upstream's real-time token bucket refills between its calls.
 */
import type { TestContext } from 'node:test';
import type { Lease, Node, NodeCondition, Pod, Taint } from '../../src/kube/objects.js';
import type { NodeLifecycleConfig } from '../../src/nodelifecycle/controller.js';
import { World } from './nodelifecycle-world.js';

/** Upstream's `fakeNow`: 2015-01-01T12:00:00Z, epoch ms. */
export const FAKE_NOW = Date.UTC(2015, 0, 1, 12);
/** 2012-01-01T00:00:00Z, upstream's "created long time ago", epoch ms. */
export const LONG_AGO = Date.UTC(2012, 0, 1);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** Upstream's test constants (1.37: testNodeMonitorGracePeriod 50 s, testNodeStartupGracePeriod 60 s, period 5 s, QPS 100000, large cluster 20, unhealthy 0.55). */
export const UPSTREAM_CONFIG: NodeLifecycleConfig = {
  nodeMonitorPeriodMs: 5000,
  nodeMonitorGracePeriodMs: 50_000,
  nodeStartupGracePeriodMs: 60_000,
  nodeEvictionRate: 100_000,
  secondaryNodeEvictionRate: 100_000,
  largeClusterSizeThreshold: 20,
  unhealthyZoneThreshold: 0.55,
  enableTaintManager: true,
  podEvictionTimeoutMs: 5 * MINUTE,
};

/** `v1.LabelTopologyRegion/Zone` and the beta twins, as upstream's nodes carry them. */
export function zoneLabels(region: string, zone: string): Record<string, string> {
  return {
    'topology.kubernetes.io/region': region,
    'topology.kubernetes.io/zone': zone,
    'failure-domain.beta.kubernetes.io/region': region,
    'failure-domain.beta.kubernetes.io/zone': zone,
  };
}

/** `testutil.CreateZoneID(region, zone)`. */
export function zoneId(region: string, zone: string): string {
  return `${region}:\x00:${zone}`;
}

/** A `NodeCondition` (times epoch ms). */
export function cond(type: string, status: string, heartbeat: number, transition: number, extra: Partial<NodeCondition> = {}): NodeCondition {
  return { type, status, lastHeartbeatTime: heartbeat, lastTransitionTime: transition, ...extra };
}

/** An upstream test node: `name`, creation time, labels, conditions, taints. */
export function upNode(
  name: string,
  opts: { created?: number; labels?: Record<string, string>; conditions?: NodeCondition[]; taints?: Taint[]; unschedulable?: boolean } = {},
): Node {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: opts.created ?? LONG_AGO,
    labels: opts.labels ?? {},
    unschedulable: opts.unschedulable ?? false,
    taints: opts.taints ?? [],
    conditions: opts.conditions ?? [],
  };
}

/** `testutil.NewPod(name, host)`: namespace `default`, Ready=True. */
export function newPod(name: string, host: string, extra: Partial<Pod> = {}): Pod {
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    nodeName: host,
    phase: 'Running',
    creationTimestamp: LONG_AGO,
    conditions: [{ type: 'Ready', status: 'True' }],
    tolerations: [],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
    ...extra,
  };
}

/** `createNodeLease(nodeName, renewTime)`. */
export function nodeLease(nodeName: string, renewTime: number, resourceVersion = '1'): Lease {
  return { namespace: 'kube-node-lease', name: nodeName, resourceVersion, holderIdentity: nodeName, renewTime };
}

/** What one upstream case starts from. */
export interface UpstreamSetup {
  config?: Partial<NodeLifecycleConfig>;
  /** `fakeNow`, epoch ms (default {@link FAKE_NOW}). */
  now?: number;
  nodes: Node[];
  pods?: Pod[];
  /** The Lease informer's store (`syncLeaseStore`). */
  leases?: Lease[];
  /** Leases the API server holds (`apiServerLease`); a live read of any other answers 404. */
  apiServerLeases?: Lease[];
  /** DaemonSets by `ns/name` (controller owner references to them are DaemonSet pods). */
  daemonSets?: string[];
  /** Pods (by `ns/name`) that a DaemonSet's selector matches (1.20 `GetPodDaemonSets`). */
  daemonSetSelected?: string[];
  /** Live Lease reads (`NodeControllerLeaseCircuitBreaker`; default on, as in 1.37). */
  breaker?: boolean;
}

/** An upstream table case running on {@link World}: the first `monitorNodeHealth` has run at `now`. */
export class UpstreamTable {
  readonly w: World;
  readonly start: number;

  private constructor(w: World, start: number) {
    this.w = w;
    this.start = start;
  }

  /** Builds the world, starts the controller and lets its first monitor pass finish at `now`. */
  static async create(t: TestContext, s: UpstreamSetup): Promise<UpstreamTable> {
    const start = s.now ?? FAKE_NOW;
    const w = new World({ ...UPSTREAM_CONFIG, ...s.config }, start);
    w.breaker = s.breaker ?? true;
    for (const n of s.nodes) w.nodes.set(n.name, n);
    for (const p of s.pods ?? []) w.pods.set(`${p.namespace}/${p.name}`, p);
    for (const l of s.leases ?? []) w.leases.set(`kube-node-lease/${l.name}`, l);
    for (const l of s.apiServerLeases ?? []) w.apiLeases.set(`kube-node-lease/${l.name}`, l);
    for (const d of s.daemonSets ?? []) w.daemonSets.add(d);
    for (const k of s.daemonSetSelected ?? []) w.daemonSetSelected.add(k);
    w.build().start();
    t.after(() => w.ctl.stop());
    const table = new UpstreamTable(w, start);
    await table.quiesce();
    return table;
  }

  /**
   * One more `monitorNodeHealth` at `start + timeToPassMs` (`nodeController.now = fakeNow +
   * timeToPass`), after `mutate` changed the caches (`syncNodeStore`, `syncLeaseStore`).
   * @param tokensMs afterwards, advance this many ms (token refills, tainting passes); 0 keeps the instant.
   */
  async pass(timeToPassMs: number, mutate: (w: World) => void = () => undefined, tokensMs = 0): Promise<void> {
    const at = this.start + timeToPassMs;
    if (at > this.w.clock.now()) this.w.clock.set(at);
    mutate(this.w);
    const running = this.w.ctl.monitorNodeHealth();
    await this.quiesce(tokensMs);
    await running;
  }

  /** Sets node `name`'s conditions (`fakeNodeHandler.Existing[i].Status = ...`) and tells the controller. */
  setConditions(name: string, conditions: NodeCondition[]): void {
    const n = this.w.nodes.get(name);
    if (!n) throw new Error(`no node ${name}`);
    this.w.storeNode({ ...n, conditions });
  }

  /**
   * Lets every queue, write and timer due now settle; then advances `tokensMs` in 10 ms steps: the
   * zone queues' buckets hold one token (burst 1) and the tainting pass runs every 100 ms, so
   * tainting N nodes of one zone takes up to N passes, where upstream's hand-called pass loops on its
   * real-time bucket.
   */
  async quiesce(tokensMs = 0): Promise<void> {
    let last = -1;
    for (let stable = 0; stable < 3; ) {
      await this.w.settle();
      const n = this.w.writes.length + this.w.events.length;
      stable = n === last ? stable + 1 : 0;
      last = n;
    }
    for (let t = 0; t < tokensMs; t += 10) await this.w.settle(Math.min(10, tokensMs - t));
  }

  /** Ready status of node `name` in the cache. */
  ready(name: string): string | undefined {
    return this.w.nodes.get(name)?.conditions.find((c) => c.type === 'Ready')?.status;
  }

  /** Taints of node `name` as `key:effect` strings. */
  taints(name: string): string[] {
    return (this.w.nodes.get(name)?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
  }

  /** Successful `markPodNotReady` writes (upstream: `update pods/status` actions). */
  podStatusUpdates(): number {
    return this.w.writes.filter((x) => x.kind === 'podNotReady' && x.detail !== 'failed').length;
  }

  /** Pod status writes attempted, failed ones included (upstream counts every `update pods/status` action). */
  podStatusAttempts(): number {
    return this.w.writes.filter((x) => x.kind === 'podNotReady').length;
  }

  /** Node status writes (upstream `UpdatedNodeStatuses`). */
  nodeStatusWrites(name?: string): number {
    return this.w.writes.filter((x) => x.kind === 'status' && (name === undefined || x.target === name)).length;
  }

  /** Legacy pod deletions (upstream `delete pods` actions), sorted `ns/name`. */
  evictedPods(): string[] {
    return this.w.writes
      .filter((x) => x.kind === 'evict')
      .map((x) => x.target)
      .sort();
  }
}
