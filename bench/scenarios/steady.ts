/**
 * Scenario 1, steady state: a healthy fleet with kubelet-rate Lease renewals; one controller runs
 * for a fixed window after its caches synced. Measures CPU, peak RSS, API requests by verb (baseline
 * subtracted), the control plane's extra CPU, and time to synced caches.
 */
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import { byVerb, countsToObject, diffCounts, scrapeRequestTotals, subtractBaseline, withoutSimulatorOnly, type RequestCounts } from '../lib/apimetrics.js';
import { measureWindow, passStats, round1, runSession, sleep, type BenchContext, type Interference, type PassStats, type SessionSpec, type SimHealth } from '../lib/harness.js';
import type { ControllerKind, SharedControllerFlags } from '../lib/procs.js';

export { passMsOf, passStats, type PassStats } from '../lib/harness.js';

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
    ctx.log(`  measuring ${kind} for ${o.windowMs / 1000} s`);
    const w = await measureWindow(ctx, env, fleet, c, o.windowMs);
    const { countsBefore: s1, countsAfter: s2, startAtMs: tw0, endAtMs: tw1, usageBefore: u1, usageAfter: u2, interference, sim } = w;
    const tStop = Date.now();
    await c.proc.stop();
    await sleep(2000);
    const s3 = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
    const controllers = (after: RequestCounts, before: RequestCounts, ms: number): RequestCounts =>
      withoutSimulatorOnly(subtractBaseline(diffCounts(after, before), ms, baseline.counts, baseline.ms));
    const startup = controllers(s1, s0, tw0 - t0);
    const window = controllers(s2, s1, tw1 - tw0);
    const atStop = controllers(s3, s2, Date.now() - tStop);
    const hundredths = (x: number): number => Math.round(x * 100) / 100;
    const run: SteadyRun = {
      controller: kind,
      nodes: fleet.nodeNames().length,
      pods: fleet.nodeNames().length * o.podsPerNode,
      fleetCreateS: round1(createMs / 1000),
      syncS: Math.round(c.syncMs) / 1000,
      windowS: round1(w.windowS),
      cpuSeconds: w.cpuSeconds,
      cpuSecondsPerMinute: w.cpuSecondsPerMinute,
      cpuByThread: w.cpuByThread,
      startupCpuSeconds: hundredths(u1.cpuSeconds),
      startupWritesS: Math.round((tw0 - c.syncedAtMs) / 1000),
      startupQuiet: quiet,
      peakRssMiB: MiB(u2.hwmKiB),
      endRssMiB: MiB(u2.rssKiB),
      requests: { startup: byVerb(startup), window: byVerb(window), atStop: byVerb(atStop) },
      requestsDetail: { startup: countsToObject(startup), window: countsToObject(window) },
      controlPlaneExtraCpuSeconds: hundredths(w.controlPlaneCpuSeconds - (baseline.controlPlaneCpuSeconds * (tw1 - tw0)) / baseline.ms),
      interference,
      sim,
    };
    if (kind === 'ours') run.healthPassMs = passStats(w.passMs);
    ctx.log(
      `  ${kind}: cpu ${run.cpuSeconds} s/${run.windowS} s (by thread, s/min: ${JSON.stringify(run.cpuByThread)}), peak RSS ${run.peakRssMiB} MiB, sync ${run.syncS} s, ` +
        `window requests ${JSON.stringify(run.requests.window)}, sim lag p99 ${sim.leaseLagP99Ms} ms${sim.flagged ? ' FLAGGED' : ''}`,
    );
    return run;
  });
}
