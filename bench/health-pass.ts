/**
 * One full node health pass (`monitorNodeHealth`) of the real NodeLifecycleController over N nodes
 * held in in-memory caches, with writes stubbed out: the controller's own CPU cost per pass, free of
 * API server and simulator noise. Part of `npm run bench` (issue 3/9 target: ≤ 50 ms at 5,000 nodes).
 * Reports each pass's wall time and its main-thread CPU time (`process.threadCpuUsage`), which a
 * loaded machine does not inflate (a preempted pass is slow in wall time only), and the cost of one
 * Lease renewal event (`leaseChanged`, the steady state's hot path at 100 events/s per 1,000 nodes).
 *
 *   tsx bench/health-pass.ts [--nodes 5000] [--passes 50] [--lease-events 200000]
 */
import { performance } from 'node:perf_hooks';
import { createMetrics } from '../src/metrics/registry.js';
import { NodeLifecycleController, type NodeLifecycleCaches, type NodeLifecycleWrites } from '../src/nodelifecycle/controller.js';
import { threadCpuMs } from '../src/nodelifecycle/monitor.js';
import type { Lease, Node, Pod } from '../src/kube/objects.js';
import { FakeClock } from '../src/util/clock.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

export interface HealthPassResult {
  nodes: number;
  passes: number;
  firstPassMs: number;
  /** wall time per pass */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** main-thread CPU time per pass */
  cpuP50Ms: number;
  cpuP99Ms: number;
  /** Lease renewal events handled through `leaseChanged`, and the mean wall time of one, µs */
  leaseEvents: number;
  leaseEventUs: number;
  heapUsedMiB: number;
  rssMiB: number;
}

/** Runs the measurement. Times in milliseconds, memory in MiB. */
export async function measureHealthPass(nodeCount: number, passes: number, leaseEvents = 0): Promise<HealthPassResult> {
  // A fake clock: the controller's own timers (monitor period, tainting pass) never fire, so every
  // pass measured here is one we start; the passes themselves run at full speed.
  const clock = new FakeClock();
  const now = clock.now();
  const nodes = new Map<string, Node>();
  const leases = new Map<string, Lease>();
  for (let i = 0; i < nodeCount; i++) {
    const name = `node-${i}`;
    const zone = `zone-${i % 3}`;
    nodes.set(name, {
      name,
      uid: `uid-${i}`,
      resourceVersion: String(1000 + i),
      creationTimestamp: now - 3_600_000,
      labels: { 'topology.kubernetes.io/zone': zone, 'topology.kubernetes.io/region': 'r', 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/os': 'linux' },
      unschedulable: false,
      taints: [],
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: now - 1000, lastTransitionTime: now - 3_600_000 }],
    });
    leases.set(`kube-node-lease/${name}`, { namespace: 'kube-node-lease', name, resourceVersion: String(i), renewTime: now - 500 });
  }
  const noPods: Pod[] = [];
  const caches: NodeLifecycleCaches = {
    nodes: { get: (k) => nodes.get(k), list: () => [...nodes.values()] },
    leases: { get: (k) => leases.get(k), list: () => [...leases.values()] },
    pods: { get: () => undefined, list: () => noPods, podsOnNode: () => noPods },
    daemonSets: { has: () => false },
  };
  const unchanged = async (): Promise<'unchanged'> => 'unchanged';
  const writes: NodeLifecycleWrites = {
    swapNodeTaints: unchanged,
    updateNodeConditions: async () => ({ result: 'unchanged' }),
    markPodNotReady: unchanged,
    evictPodLegacy: unchanged,
    patchNodeLabels: unchanged,
    forgetNode: () => undefined,
  };
  const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const nlc = new NodeLifecycleController({
    config: {
      nodeMonitorPeriodMs: 5000,
      nodeMonitorGracePeriodMs: 50_000,
      nodeStartupGracePeriodMs: 60_000,
      nodeEvictionRate: 0.1,
      secondaryNodeEvictionRate: 0.01,
      largeClusterSizeThreshold: 50,
      unhealthyZoneThreshold: 0.55,
      enableTaintManager: true,
      podEvictionTimeoutMs: 300_000,
    },
    clock,
    log: silent,
    caches,
    writes,
    events: { record: () => {} },
    metrics: createMetrics().nodeCollector,
    canSeeCluster: () => true,
  });
  nlc.start();
  let t = performance.now();
  await nlc.monitorNodeHealth(); // first sight: registration of every node
  const firstPassMs = performance.now() - t;
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (let p = 0; p < passes; p++) {
    // Half the leases renew between passes, as at kubelet rate with a 5 s monitor period.
    for (let i = p % 2; i < nodeCount; i += 2) {
      const key = `kube-node-lease/node-${i}`;
      const l = leases.get(key);
      if (l) leases.set(key, { ...l, renewTime: (l.renewTime ?? 0) + 10_000 });
    }
    clock.set(clock.now() + 5000);
    const cpu = threadCpuMs();
    t = performance.now();
    await nlc.monitorNodeHealth();
    times.push(performance.now() - t);
    cpuTimes.push(threadCpuMs() - cpu);
  }
  // Lease renewals one at a time, each seen by the controller as the informer would hand it over:
  // a new Lease object with a later renewTime, then `leaseChanged`, 1 ms of (fake) time apart.
  t = performance.now();
  for (let e = 0; e < leaseEvents; e++) {
    const key = `kube-node-lease/node-${e % nodeCount}`;
    const l = leases.get(key);
    if (l) leases.set(key, { ...l, renewTime: clock.now() });
    clock.set(clock.now() + 1);
    nlc.leaseChanged(`node-${e % nodeCount}`);
  }
  const leaseEventUs = leaseEvents > 0 ? ((performance.now() - t) * 1000) / leaseEvents : NaN;
  await nlc.stop();
  const q = quantiles(times);
  const cq = quantiles(cpuTimes);
  const mem = process.memoryUsage();
  return {
    nodes: nodeCount,
    passes,
    firstPassMs,
    p50Ms: q(0.5),
    p99Ms: q(0.99),
    maxMs: q(1),
    cpuP50Ms: cq(0.5),
    cpuP99Ms: cq(0.99),
    leaseEvents,
    leaseEventUs,
    heapUsedMiB: mem.heapUsed / 2 ** 20,
    rssMiB: mem.rss / 2 ** 20,
  };
}

/** `f`-quantile picker (nearest rank, `f` in [0, 1]) over a copy of `values`, sorted ascending. */
function quantiles(values: readonly number[]): (f: number) => number {
  const sorted = [...values].sort((a, b) => a - b);
  return (f) => sorted[Math.min(sorted.length - 1, Math.floor(f * sorted.length))] ?? NaN;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await measureHealthPass(arg('nodes', 5000), arg('passes', 50), arg('lease-events', 200_000));
  console.log(JSON.stringify(r));
  console.log(
    `health pass over ${r.nodes} nodes: first ${r.firstPassMs.toFixed(1)} ms, then p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms (target ≤ 50 ms); ` +
      `main-thread CPU p50 ${r.cpuP50Ms.toFixed(1)} ms, p99 ${r.cpuP99Ms.toFixed(1)} ms; one Lease event ${r.leaseEventUs.toFixed(2)} µs; heap ${r.heapUsedMiB.toFixed(0)} MiB, rss ${r.rssMiB.toFixed(0)} MiB`,
  );
}
