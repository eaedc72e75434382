/**
 * The pod GC's terminated pass (`gcTerminated`) with 50,000 terminated pods in the pod cache, and
 * what it costs the node health pass sharing its event loop. In-process, no API server: the real
 * PodGCController shell (src/podgc/controller.ts) over in-memory caches, its force deletes stubbed
 * (each resolves on the next macrotask and removes the pod from the cache, so the drain interleaves
 * with everything else as real API answers would, only much faster than `--kube-api-qps` allows),
 * and the real NodeLifecycleController health pass of bench/health-pass.ts.
 *
 * What it measures, times in milliseconds:
 * - `sweep`: one gc pass (`sweep()`, synchronous: it blocks the event loop for its whole length):
 *   the first with 50,000 terminated pods (select, sort, queue the oldest 1,000 of the 37,500 beyond
 *   the default threshold 12,500), later ones while those are still queued, and a steady one once the cache is down to
 *   the threshold (filter only, no sort). A health pass due during a sweep starts that much later.
 * - `healthPass`: health pass p50/p99 over 5,000 nodes alone, then again while the 37,500 deletions
 *   drain on the same event loop.
 * - `worstDelayCpuMs`: the worst delay of a health pass in main-thread CPU time, max sweep + health
 *   pass p99 during the drain, against the health pass budget (50 ms at 5,000 nodes, bench/README.md).
 *   CPU time, because wall times on a loaded machine measure the other processes.
 *
 *   tsx bench/podgc-terminated.ts [--terminated 50000] [--running 5000] [--threshold 12500] [--nodes 5000] [--passes 30]
 */
import { performance } from 'node:perf_hooks';
import type { Node, Pod } from '../src/kube/objects.js';
import { createMetrics } from '../src/metrics/registry.js';
import { threadCpuMs } from '../src/nodelifecycle/monitor.js';
import { PodGCController, type PodGCWrites } from '../src/podgc/controller.js';
import { DEFAULT_TERMINATED_POD_GC_THRESHOLD, GC_CHECK_PERIOD_MS, ORPHAN_QUARANTINE_MS } from '../src/podgc/decision.js';
import { FakeClock } from '../src/util/clock.js';
import { measureHealthPass } from './health-pass.js';

/** The health pass budget at 5,000 nodes, ms (bench/README.md, issue 3/9 target). */
export const HEALTH_PASS_BUDGET_MS = 50;

/** Deletions in one 20 s gc period at the default --kube-api-qps 20. */
const DELETES_PER_GC_PERIOD = 400;

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

/** Result of {@link measureTerminatedGC}. Times in milliseconds. */
export interface TerminatedGCResult {
  terminated: number;
  running: number;
  threshold: number;
  /** Nodes of the health pass. */
  nodes: number;
  /** Wall and main-thread CPU time of the first sweep (selects and queues `terminated − threshold`). */
  firstSweep: { wallMs: number; cpuMs: number; queued: number };
  /** Longest sweep (wall, and main-thread CPU) while the backlog is still queued (re-select, re-sort, de-duplicated adds), and how many ran. */
  backlogSweepMaxMs: number;
  backlogSweepMaxCpuMs: number;
  backlogSweeps: number;
  /** Sweep once the cache is down to the threshold (filter only): wall and CPU. */
  steadySweepMs: number;
  steadySweepCpuMs: number;
  /** Pods deleted by the drain, and its wall time. */
  deleted: number;
  drainMs: number;
  /** Health pass wall and main-thread CPU per pass. */
  healthAlone: { p50Ms: number; p99Ms: number; cpuP50Ms: number; cpuP99Ms: number };
  healthDuringDrain: { p50Ms: number; p99Ms: number; cpuP50Ms: number; cpuP99Ms: number; passes: number };
  /**
   * max(sweep CPU) + health pass CPU p99 during the drain: the latest a health pass can finish after
   * it was due, in CPU time (a loaded machine inflates wall times; CPU time is what the process costs).
   */
  worstDelayCpuMs: number;
  budgetMs: number;
}

/** Runs the measurement. @param nodes nodes of the health pass (the GC's nodes are separate, 100). */
export async function measureTerminatedGC(terminated: number, running: number, threshold: number, nodes: number, passes: number): Promise<TerminatedGCResult> {
  const clock = new FakeClock();
  const now = clock.now();
  const nodeMap = new Map<string, Node>();
  for (let i = 0; i < 100; i++) {
    const name = `gc-node-${i}`;
    nodeMap.set(name, { name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: now - 86_400_000, labels: {}, unschedulable: false, taints: [], conditions: [{ type: 'Ready', status: 'True' }] });
  }
  const pods = new Map<string, Pod>();
  const byNode = new Map<string, Pod[]>();
  const add = (p: Pod): void => {
    pods.set(`${p.namespace}/${p.name}`, p);
  };
  for (let i = 0; i < terminated + running; i++) {
    const done = i < terminated;
    add({
      namespace: `ns-${i % 50}`,
      name: `pod-${i}`,
      uid: `uid-${i}`,
      resourceVersion: String(i),
      nodeName: `gc-node-${i % 100}`,
      phase: done ? (i % 3 === 0 ? 'Failed' : 'Succeeded') : 'Running',
      ...(done && i % 97 === 0 ? { statusReason: 'Evicted' } : {}),
      // Jobs finishing over the last week, in no particular order.
      creationTimestamp: now - ((i * 7919) % 604_800_000),
      conditions: [],
      tolerations: [],
      ownerReferences: [],
      pvcNames: [],
      finalizers: [],
    });
  }
  for (const p of pods.values()) {
    const l = byNode.get(p.nodeName) ?? [];
    l.push(p);
    byNode.set(p.nodeName, l);
  }
  let deleted = 0;
  let sweepEvery: (() => void) | undefined;
  const writes: PodGCWrites = {
    getNode: (name) => Promise.resolve(nodeMap.get(name)),
    forceDeletePod: async (namespace, name, uid, recheck, sendCheck) => {
      await new Promise<void>((r) => setImmediate(r));
      const key = `${namespace}/${name}`;
      const live = pods.get(key);
      if (!live || live.uid !== uid) return 'gone';
      if (!(await recheck(live))) return 'skipped';
      // The real writer's throttle decides once more right before the DELETE (issue 53): its cost
      // (a count over the pod cache per deletion) is part of the drain.
      if (sendCheck?.() !== undefined) return 'skipped';
      pods.delete(key);
      deleted++;
      if (deleted % DELETES_PER_GC_PERIOD === 0 && sweepEvery) setImmediate(sweepEvery);
      return 'deleted';
    },
  };
  const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const gc = new PodGCController({
    config: { orphanQuarantineMs: ORPHAN_QUARANTINE_MS, sweepPeriodMs: GC_CHECK_PERIOD_MS, scoped: false, terminatedPodThreshold: threshold },
    clock,
    log: silent,
    caches: {
      nodes: { get: (k) => nodeMap.get(k), list: () => [...nodeMap.values()] },
      pods: { get: (k) => pods.get(k), list: () => [...pods.values()], podsOnNode: (n) => (byNode.get(n) ?? []).filter((p) => pods.has(`${p.namespace}/${p.name}`)) },
    },
    writes,
    events: { record: () => {} },
    metrics: createMetrics({ defaultMetrics: false }).podGC,
    canSeeCluster: () => true,
  });

  // The health pass alone first, as the baseline.
  const alone = await measureHealthPass(nodes, passes);

  // First sweep: start() runs one at once (the workers start on the next microtask).
  const cpu = threadCpuMs();
  let t = performance.now();
  gc.start();
  const firstSweep = { wallMs: performance.now() - t, cpuMs: threadCpuMs() - cpu, queued: gc.view().queuedTerminated };
  // The health pass while the backlog drains, with a gc pass between every few health passes.
  const drainStart = performance.now();
  let backlogSweepMaxMs = 0;
  let backlogSweepMaxCpuMs = 0;
  // Sweeps come at the real ratio to deletions: one per 20 s gc period, and 400 deletions in 20 s
  // at --kube-api-qps 20. Timed here on the stubbed writes, so a sweep follows every 400th deletion.
  let backlogSweeps = 0;
  sweepEvery = (): void => {
    const c0 = threadCpuMs();
    t = performance.now();
    gc.sweep();
    backlogSweepMaxMs = Math.max(backlogSweepMaxMs, performance.now() - t);
    backlogSweepMaxCpuMs = Math.max(backlogSweepMaxCpuMs, threadCpuMs() - c0);
    backlogSweeps++;
  };
  const during = await measureHealthPass(nodes, passes);
  const healthDuringDrain = { p50Ms: during.p50Ms, p99Ms: during.p99Ms, cpuP50Ms: during.cpuP50Ms, cpuP99Ms: during.cpuP99Ms, passes: during.passes };
  while (gc.view().queuedTerminated > 0 || pods.size > threshold + running) await new Promise((r) => setTimeout(r, 5));
  sweepEvery = undefined;
  const drainMs = performance.now() - drainStart;
  const c1 = threadCpuMs();
  t = performance.now();
  gc.sweep();
  const steadySweepMs = performance.now() - t;
  const steadySweepCpuMs = threadCpuMs() - c1;
  await gc.stop();
  const worstDelayCpuMs = Math.max(firstSweep.cpuMs, backlogSweepMaxCpuMs) + healthDuringDrain.cpuP99Ms;
  return {
    terminated,
    running,
    threshold,
    nodes,
    firstSweep,
    backlogSweepMaxMs,
    backlogSweepMaxCpuMs,
    backlogSweeps,
    steadySweepMs,
    steadySweepCpuMs,
    deleted,
    drainMs,
    healthAlone: { p50Ms: alone.p50Ms, p99Ms: alone.p99Ms, cpuP50Ms: alone.cpuP50Ms, cpuP99Ms: alone.cpuP99Ms },
    healthDuringDrain,
    worstDelayCpuMs,
    budgetMs: HEALTH_PASS_BUDGET_MS,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await measureTerminatedGC(arg('terminated', 50_000), arg('running', 5000), arg('threshold', DEFAULT_TERMINATED_POD_GC_THRESHOLD), arg('nodes', 5000), arg('passes', 30));
  console.log(JSON.stringify(r));
  const f = (n: number): string => n.toFixed(1);
  console.log(
    `gcTerminated, ${r.terminated} terminated + ${r.running} running pods, threshold ${r.threshold}: first sweep wall ${f(r.firstSweep.wallMs)} / CPU ${f(r.firstSweep.cpuMs)} ms (${r.firstSweep.queued} queued), ` +
      `${r.backlogSweeps} sweeps during the backlog ≤ ${f(r.backlogSweepMaxMs)} / ${f(r.backlogSweepMaxCpuMs)} ms, steady sweep ${f(r.steadySweepMs)} / ${f(r.steadySweepCpuMs)} ms; ` +
      `${r.deleted} deleted in ${f(r.drainMs)} ms (stubbed writes); health pass (${r.nodes} nodes) wall p50/p99, CPU p50/p99: alone ${f(r.healthAlone.p50Ms)}/${f(r.healthAlone.p99Ms)}, ${f(r.healthAlone.cpuP50Ms)}/${f(r.healthAlone.cpuP99Ms)} ms; ` +
      `during the drain ${f(r.healthDuringDrain.p50Ms)}/${f(r.healthDuringDrain.p99Ms)}, ${f(r.healthDuringDrain.cpuP50Ms)}/${f(r.healthDuringDrain.cpuP99Ms)} ms; ` +
      `worst delay in CPU (max sweep + pass p99) ${f(r.worstDelayCpuMs)} ms vs budget ${r.budgetMs} ms: ${r.worstDelayCpuMs <= r.budgetMs ? 'within' : 'OVER'}`,
  );
}
