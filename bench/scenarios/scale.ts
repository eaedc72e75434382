/**
 * Scenario 4, scale: our controller alone on the largest fleet the machine can simulate honestly.
 * Measures one full health pass (from the debug line `monitor pass done`, ms, which times
 * `monitorNodeHealth` from start to the end of its per-node work), peak RSS and CPU per minute in
 * steady state, and the `node_collector_update_all_nodes_health_duration_seconds` histogram's mean
 * as a cross-check.
 */
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import { measureWindow, passStats, round1, runSession, type BenchContext, type Interference, type PassStats, type SessionSpec, type SimHealth } from '../lib/harness.js';
import type { SharedControllerFlags } from '../lib/procs.js';

/** Settings of scenario 4. */
export interface ScaleOptions {
  nodes: number;
  podsPerNode: number;
  zones: number;
  podMix: PodMix;
  warmupMs: number;
  windowMs: number;
  flags: SharedControllerFlags;
}

/** Our controller's scale run. */
export interface ScaleRun {
  nodes: number;
  pods: number;
  fleetCreateS: number;
  syncS: number;
  /** health pass durations in the window, ms */
  healthPassMs: PassStats;
  /** main-thread CPU of each health pass in the window (the debug line's `cpuMs`), ms; absent in results from before 2026-11-24 */
  healthPassCpuMs?: PassStats;
  /** mean of the all-nodes histogram over the controller's life, ms */
  histogramMeanMs?: number;
  /** where the memory is at the window's end (prom-client's default process metrics), MiB */
  memoryMiB?: { rss: number; heapTotal: number; heapUsed: number; external: number };
  peakRssMiB: number;
  cpuSecondsPerMinute: number;
  windowS: number;
  /** how busy the machine was while measuring, and how much of it was other people's work */
  interference: Interference;
  sim: SimHealth;
}

/**
 * Reads `<name>_sum` and `<name>_count` of a histogram from a Prometheus text. Pure.
 * @returns the mean in the metric's unit, or undefined when absent or empty.
 */
export function histogramMean(text: string, name: string): number | undefined {
  const grab = (suffix: string): number | undefined => {
    const m = new RegExp(`^${name}_${suffix}(?:\\{[^}]*\\})? ([0-9.eE+-]+)`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const sum = grab('sum');
  const count = grab('count');
  return sum !== undefined && count ? sum / count : undefined;
}

/**
 * Reads RSS, V8 heap (total, used) and external memory from prom-client's default metrics
 * (`process_resident_memory_bytes`, `nodejs_heap_size_total_bytes`, `nodejs_heap_size_used_bytes`,
 * `nodejs_external_memory_bytes`) in a Prometheus text. Pure.
 * @returns MiB, one decimal; undefined when any of them is missing.
 */
export function memoryBreakdown(text: string): { rss: number; heapTotal: number; heapUsed: number; external: number } | undefined {
  const grab = (name: string): number | undefined => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)`, 'm').exec(text);
    return m ? Math.round((Number(m[1]) / 2 ** 20) * 10) / 10 : undefined;
  };
  const rss = grab('process_resident_memory_bytes');
  const heapTotal = grab('nodejs_heap_size_total_bytes');
  const heapUsed = grab('nodejs_heap_size_used_bytes');
  const external = grab('nodejs_external_memory_bytes');
  return rss !== undefined && heapTotal !== undefined && heapUsed !== undefined && external !== undefined ? { rss, heapTotal, heapUsed, external } : undefined;
}

/**
 * Runs scenario 4 (ours only) on a fresh control plane and fleet.
 * @throws {Error} when the control plane, the fleet or the controller fails to start.
 */
export async function runScale(ctx: BenchContext, o: ScaleOptions, tag: string): Promise<ScaleRun> {
  const spec: SessionSpec = {
    tag,
    shape: { nodes: o.nodes, zones: o.zones, podsPerNode: o.podsPerNode, podMix: o.podMix, statsWindowMs: o.windowMs },
    flags: o.flags,
    observe: false,
    baselineMs: 0,
    warmupMs: o.warmupMs,
    logLevel: 'debug',
    syncTimeoutMs: 600_000,
  };
  return await runSession(ctx, 'ours', spec, async ({ env, fleet, createMs, c }) => {
    ctx.log(`  measuring ours for ${o.windowMs / 1000} s`);
    const w = await measureWindow(ctx, env, fleet, c, o.windowMs);
    const { passMs, passCpuMs, usageAfter: u2, interference, sim, windowS } = w;
    let histogramMeanMs: number | undefined;
    let memory: ScaleRun['memoryMiB'];
    try {
      const res = await fetch(`http://127.0.0.1:${c.metricsPort}/metrics`);
      const text = await res.text();
      const mean = histogramMean(text, 'node_collector_update_all_nodes_health_duration_seconds');
      if (mean !== undefined) histogramMeanMs = round1(mean * 1000);
      memory = memoryBreakdown(text);
    } catch {
      // The cross-check and the breakdown are optional.
    }
    const run: ScaleRun = {
      nodes: fleet.nodeNames().length,
      pods: fleet.nodeNames().length * o.podsPerNode,
      fleetCreateS: round1(createMs / 1000),
      syncS: Math.round(c.syncMs) / 1000,
      healthPassMs: passStats(passMs),
      ...(passCpuMs.length > 0 ? { healthPassCpuMs: passStats(passCpuMs) } : {}),
      peakRssMiB: round1(u2.hwmKiB / 1024),
      cpuSecondsPerMinute: w.cpuSecondsPerMinute,
      windowS: round1(windowS),
      interference,
      sim,
      ...(histogramMeanMs !== undefined ? { histogramMeanMs } : {}),
      ...(memory ? { memoryMiB: memory } : {}),
    };
    ctx.log(
      `  ours at ${run.nodes} nodes: pass p50 ${run.healthPassMs.p50} ms p99 ${run.healthPassMs.p99} ms (${run.healthPassMs.count} passes; CPU p50 ${run.healthPassCpuMs?.p50 ?? '—'} ms p99 ${run.healthPassCpuMs?.p99 ?? '—'} ms), ` +
        `peak RSS ${run.peakRssMiB} MiB, CPU ${run.cpuSecondsPerMinute} s/min; sim lag p99 ${sim.leaseLagP99Ms} ms${sim.flagged ? ' FLAGGED' : ''}`,
    );
    return run;
  });
}
