/**
 * Scenario 1, steady state: a healthy fleet with kubelet-rate Lease renewals; one controller runs
 * for a fixed window after its caches synced. Measures CPU, peak RSS, API requests by verb (baseline
 * subtracted), the control plane's extra CPU, and time to synced caches.
 */
import { percentile } from '@node-lifecycle-controller/sim/schedule';
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import { byVerb, countsToObject, diffCounts, scrapeRequestTotals, subtractBaseline, withoutSimulatorOnly, type RequestCounts } from '../lib/apimetrics.js';
import {
  collectHealthPasses,
  controlPlaneCpu,
  round1,
  runSession,
  simHealth,
  sleep,
  startInterference,
  type BenchContext,
  type Interference,
  type SessionSpec,
  type SimHealth,
} from '../lib/harness.js';
import { threadCpuPerMinute, threadCpuSeconds, type ControllerKind, type SharedControllerFlags } from '../lib/procs.js';

export { passMsOf } from '../lib/harness.js';

/** Settings of scenario 1. */
export interface SteadyOptions {
  nodes: number;
  podsPerNode: number;
  zones: number;
  podMix: PodMix;
  /** measurement window after sync, ms */
  windowMs: number;
  /** no-controller baseline window, ms */
  baselineMs: number;
  /**
   * minimum wait after sync before the window opens, ms; the window then waits until the
   * controller's start-up writes (one `RegisteredNode` event per node, upstream's node label
   * reconciliation: GET + PATCH per node, all at `--kube-api-qps`) are over, so they stay out of it
   */
  warmupMs: number;
  flags: SharedControllerFlags;
}

/** Pass durations parsed from ours' debug log, ms. */
export interface PassStats {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

/** One controller's steady-state run. */
export interface SteadyRun {
  controller: ControllerKind;
  nodes: number;
  pods: number;
  fleetCreateS: number;
  syncS: number;
  windowS: number;
  /** CPU seconds (user + sys) in the window */
  cpuSeconds: number;
  cpuSecondsPerMinute: number;
  /** CPU in the window by thread name, s per minute (ours: MainThread = JavaScript, V8Worker = GC and compilers) */
  cpuByThread?: Record<string, number>;
  /** CPU seconds from spawn to the window's start (synced + start-up writes done) */
  startupCpuSeconds: number;
  /** seconds from caches synced until the controller's start-up writes were over */
  startupWritesS: number;
  /** false when the start-up writes had not died down after the limit (the window then includes some) */
  startupQuiet: boolean;
  peakRssMiB: number;
  endRssMiB: number;
  /** requests by verb, baseline subtracted: spawn → window start, the window, and those recorded after stop (watches end then) */
  requests: { startup: Record<string, number>; window: Record<string, number>; atStop: Record<string, number> };
  requestsDetail: { startup: Record<string, number>; window: Record<string, number> };
  /** API server + etcd CPU seconds in the window above the no-controller baseline rate */
  controlPlaneExtraCpuSeconds: number;
  /** ours only: "monitor pass done" durations in the window */
  healthPassMs?: PassStats;
  /** how busy the machine was while measuring, and how much of it was other people's work */
  interference: Interference;
  sim: SimHealth;
}

/** p50/p99/max of pass durations. Pure. */
export function passStats(values: readonly number[]): PassStats {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0, count: sorted.length };
}

const MiB = (kib: number): number => round1(kib / 1024);

/**
 * Runs scenario 1 for one controller on a fresh control plane and fleet.
 * @throws {Error} when the control plane, the fleet or the controller fails to start.
 */
export async function runSteady(ctx: BenchContext, kind: ControllerKind, o: SteadyOptions, tag: string): Promise<SteadyRun> {
  const spec: SessionSpec = {
    tag,
    shape: { nodes: o.nodes, zones: o.zones, podsPerNode: o.podsPerNode, podMix: o.podMix, statsWindowMs: o.windowMs },
    flags: o.flags,
    observe: false,
    baselineMs: o.baselineMs,
    warmupMs: o.warmupMs,
    logLevel: 'debug',
  };
  return await runSession(ctx, kind, spec, async ({ env, fleet, createMs, baseline, countsBeforeLaunch: s0, launchAtMs: t0, c, quiet }) => {
    if (!baseline) throw new Error('steady state needs a baseline');
    const scrape = (): Promise<RequestCounts> => scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
    const endInterference = startInterference([env.cp.apiserverPid, env.cp.etcdPid, c.proc.pid]);
    const s1 = await scrape();
    const u1 = c.proc.usage();
    const th1 = threadCpuSeconds(c.proc.pid);
    const cp1 = controlPlaneCpu(env);
    const tw0 = Date.now();
    const errorsBefore = fleet.stats().errors;
    const passes = collectHealthPasses(c.proc);
    ctx.log(`  measuring ${kind} for ${o.windowMs / 1000} s`);
    await sleep(o.windowMs);
    const passMs = passes();
    const u2 = c.proc.usage();
    const th2 = threadCpuSeconds(c.proc.pid);
    const cp2 = controlPlaneCpu(env);
    const interference = endInterference();
    const tw1 = Date.now();
    const s2 = await scrape();
    const sim = simHealth(fleet.stats(), errorsBefore, ctx.maxSimLagMs);
    const tStop = Date.now();
    await c.proc.stop();
    await sleep(2000);
    const s3 = await scrape();
    const controllers = (after: RequestCounts, before: RequestCounts, ms: number): RequestCounts =>
      withoutSimulatorOnly(subtractBaseline(diffCounts(after, before), ms, baseline.counts, baseline.ms));
    const startup = controllers(s1, s0, tw0 - t0);
    const window = controllers(s2, s1, tw1 - tw0);
    const atStop = controllers(s3, s2, Date.now() - tStop);
    const windowS = (tw1 - tw0) / 1000;
    const cpuSeconds = u2.cpuSeconds - u1.cpuSeconds;
    const hundredths = (x: number): number => Math.round(x * 100) / 100;
    const run: SteadyRun = {
      controller: kind,
      nodes: fleet.nodeNames().length,
      pods: fleet.nodeNames().length * o.podsPerNode,
      fleetCreateS: round1(createMs / 1000),
      syncS: Math.round(c.syncMs) / 1000,
      windowS: round1(windowS),
      cpuSeconds: hundredths(cpuSeconds),
      cpuSecondsPerMinute: hundredths((cpuSeconds / windowS) * 60),
      cpuByThread: threadCpuPerMinute(th1, th2, windowS),
      startupCpuSeconds: hundredths(u1.cpuSeconds),
      startupWritesS: Math.round((tw0 - c.syncedAtMs) / 1000),
      startupQuiet: quiet,
      peakRssMiB: MiB(u2.hwmKiB),
      endRssMiB: MiB(u2.rssKiB),
      requests: { startup: byVerb(startup), window: byVerb(window), atStop: byVerb(atStop) },
      requestsDetail: { startup: countsToObject(startup), window: countsToObject(window) },
      controlPlaneExtraCpuSeconds: hundredths(cp2 - cp1 - (baseline.controlPlaneCpuSeconds * (tw1 - tw0)) / baseline.ms),
      interference,
      sim,
    };
    if (kind === 'ours') run.healthPassMs = passStats(passMs);
    ctx.log(
      `  ${kind}: cpu ${run.cpuSeconds} s/${run.windowS} s (by thread, s/min: ${JSON.stringify(run.cpuByThread)}), peak RSS ${run.peakRssMiB} MiB, sync ${run.syncS} s, ` +
        `window requests ${JSON.stringify(run.requests.window)}, sim lag p99 ${sim.leaseLagP99Ms} ms${sim.flagged ? ' FLAGGED' : ''}`,
    );
    return run;
  });
}
