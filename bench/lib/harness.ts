/**
 * Shared plumbing of the benchmark scenarios: a private control plane per run, fleet creation,
 * the no-controller baseline of API traffic, and launching a controller and waiting until its
 * caches are synced.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, makeClients, type KubeClients } from '../../src/kube/client.js';
import { Fleet, POD_KIND_LABEL, type PodMix, type FleetStats } from '@node-lifecycle-controller/sim/fleet';
import { startPrivateControlPlane, freePorts, type PrivateControlPlane } from './controlplane.js';
import { scrapeRequestTotals, diffCounts, subtractBaseline, totalWrites, withoutSimulatorOnly, type RequestCounts } from './apimetrics.js';
import { ControllerProcess, primeCompileCache, procUsage, threadCpuPerMinute, threadCpuSeconds, type ControllerKind, type ControllerLaunch, type OursMode, type ProcUsage, type SharedControllerFlags, type UpstreamVersion } from './procs.js';
import { percentile } from '@node-lifecycle-controller/sim/schedule';
import { observeCluster, type ClusterObserver } from './observe.js';
import { WatchLagMeter, withLeaseWriteHook } from './watchlag.js';

/** Settings every scenario shares (from the command line). */
export interface BenchContext {
  repoRoot: string;
  /** where controller logs and CPU profiles of this bench run go */
  workDir: string;
  upstreamBinary: string;
  upstreamControllers: string;
  upstreamVersion: UpstreamVersion;
  oursMode: OursMode;
  oursEntry: string;
  /** write a CPU profile of ours in these scenarios */
  cpuProfile: boolean;
  /** extra `node` options for ours (e.g. `--max-old-space-size=256`) */
  oursNodeArgs: readonly string[];
  /** ours' bundle without the image's code cache (bench/startup.ts `--compile-cache off`, an A/B); default: with it */
  oursColdCompile?: boolean;
  /** p99 heartbeat lag of the simulator above this (ms) flags a run */
  maxSimLagMs: number;
  /** progress lines to the terminal */
  log: (msg: string) => void;
}

/** Cache directories, bundles and node options this bench process has primed. */
const primed = new Set<string>();

/**
 * The `NODE_COMPILE_CACHE` directory of ours' bundle in `ctx.workDir`, primed once per directory,
 * bundle and node options, as the image's build primes it ({@link primeCompileCache}).
 * @throws {Error} when the bundle does not answer `--version`.
 */
function compileCacheFor(ctx: BenchContext): string {
  const dir = join(ctx.workDir, 'compile-cache');
  const key = JSON.stringify([dir, ctx.oursEntry, ctx.oursNodeArgs]);
  if (!primed.has(key)) {
    primeCompileCache(process.execPath, ctx.oursEntry, ctx.oursNodeArgs, dir);
    primed.add(key);
  }
  return dir;
}

/**
 * The context of a bench that starts no controller, only a private control plane
 * (bench/informer-sync.ts, bench/write-cost.ts): no upstream binary, no profile, the default lag
 * flag, progress lines with the UTC time to stderr.
 * @param repoRoot the repository root.
 * @param name the bench's name: its work directory is `<tmpdir>/nlc-<name>-<pid>`.
 * @returns the context. Never throws.
 */
export function controlPlaneOnlyContext(repoRoot: string, name: string): BenchContext {
  return {
    repoRoot,
    workDir: join(tmpdir(), `nlc-${name}-${process.pid}`),
    upstreamBinary: '',
    upstreamControllers: '',
    upstreamVersion: '1.37',
    oursMode: 'tsx',
    oursEntry: '',
    cpuProfile: false,
    oursNodeArgs: [],
    maxSimLagMs: 2000,
    log: (m: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`),
  };
}

/** Teardown steps of everything currently running (controllers, control planes), newest first. */
const cleanups = new Set<() => Promise<void>>();

/**
 * Runs every pending teardown (stops controllers, then control planes). Called on SIGINT/SIGTERM
 * so an interrupted bench leaves no API server, etcd or controller behind. Never throws.
 */
export async function cleanupAll(): Promise<void> {
  for (const c of [...cleanups].reverse()) {
    cleanups.delete(c);
    await c().catch(() => undefined);
  }
}

/** One private control plane with clients, for one scenario run. */
export interface RunEnv {
  cp: PrivateControlPlane;
  kc: KubeConfig;
  clients: KubeClients;
}

/**
 * Runs `fn` on a fresh private control plane and always tears it down.
 * @throws whatever `fn` or the control plane start throws.
 */
export async function withControlPlane<T>(ctx: BenchContext, fn: (env: RunEnv) => Promise<T>): Promise<T> {
  const t0 = Date.now();
  let down: () => Promise<void> = () => Promise.resolve();
  const cp = await startPrivateControlPlane(ctx.repoRoot, (d) => {
    down = d;
    cleanups.add(d);
  });
  ctx.log(`  private control plane up in ${((Date.now() - t0) / 1000).toFixed(1)} s at ${cp.apiserverUrl}`);
  const kc = loadKubeConfig(cp.kubeconfig);
  try {
    return await fn({ cp, kc, clients: makeClients(kc) });
  } finally {
    cleanups.delete(down);
    await cp.down();
  }
}

/** Shape of a simulated fleet. */
export interface FleetShape {
  prefix: string;
  nodes: number;
  zones: number;
  podsPerNode: number;
  podMix: PodMix;
  /** seconds, for `tolerationSeconds` pods */
  tolerationSeconds?: number;
  /** how far back the simulator's lag statistics look, ms */
  statsWindowMs: number;
}

/**
 * Creates and starts a fleet (nodes, leases, pods Running), then waits `settleMs` for the
 * creation burst to drain. @returns the fleet and how long creation took (ms).
 * @throws {Error} when the fleet does not start.
 */
export async function startFleet(
  ctx: BenchContext,
  env: RunEnv,
  shape: FleetShape,
  settleMs = 10_000,
  clients: KubeClients = env.clients,
): Promise<{ fleet: Fleet; createMs: number }> {
  const zones = Math.max(1, Math.min(shape.zones, shape.nodes));
  const fleet = new Fleet({
    clients,
    prefix: shape.prefix,
    namespace: `ns-${shape.prefix}`,
    zones,
    nodesPerZone: Math.ceil(shape.nodes / zones),
    podsPerNode: shape.podsPerNode,
    podMix: shape.podMix,
    ...(shape.tolerationSeconds !== undefined ? { tolerationSeconds: shape.tolerationSeconds } : {}),
    leaseRenewIntervalMs: 10_000,
    writeConcurrency: 48,
    statsWindowMs: shape.statsWindowMs,
    onProgress: (m) => ctx.log(`  sim: ${m}`),
  });
  const t0 = Date.now();
  try {
    await fleet.start();
  } catch (err) {
    await fleet.stop();
    throw err;
  }
  const createMs = Date.now() - t0;
  ctx.log(`  fleet ${shape.prefix}: ${fleet.nodeNames().length} nodes × ${shape.podsPerNode} pods up in ${(createMs / 1000).toFixed(0)} s; settling`);
  await sleep(settleMs);
  return { fleet, createMs };
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** API traffic of the simulator (and the bench's watches) alone. */
export interface Baseline {
  counts: RequestCounts;
  ms: number;
  /** API server + etcd CPU seconds in the window */
  controlPlaneCpuSeconds: number;
}

/** CPU seconds of the API server and etcd so far. @throws {Error} when either is gone. */
export function controlPlaneCpu(env: RunEnv): number {
  return procUsage(env.cp.apiserverPid).cpuSeconds + procUsage(env.cp.etcdPid).cpuSeconds;
}

/**
 * Measures the API traffic with no controller running for `ms` milliseconds.
 * @throws {Error} when `/metrics` cannot be scraped.
 */
export async function measureBaseline(env: RunEnv, ms: number): Promise<Baseline> {
  const before = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  const cpu0 = controlPlaneCpu(env);
  const t0 = Date.now();
  await sleep(ms);
  const after = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  return { counts: diffCounts(after, before), ms: Date.now() - t0, controlPlaneCpuSeconds: controlPlaneCpu(env) - cpu0 };
}

/**
 * The log line that marks "caches synced", and how many of them: the moment every controller of the
 * process can act. Pure.
 * - upstream 1.20: client-go `WaitForNamedCacheSync("taint", …)` in the node lifecycle controller's
 *   Run, the last cache it waits for (the taint manager runs inside it);
 * - upstream 1.37: `cache.WaitForNamedCacheSyncWithContext` logs a bare structured "Caches are
 *   synced" once per controller (node lifecycle, taint eviction, pod GC), so the last of them;
 * - ours: src/cli/run.ts logs it once every informer's waitForSync resolved, before starting controllers.
 */
export function syncedLine(kind: ControllerKind, upstreamVersion: UpstreamVersion, upstreamControllers: string): { re: RegExp; count: number } {
  if (kind === 'ours') return { re: /"msg":"caches synced(; starting controllers)?"/, count: 1 };
  if (upstreamVersion === '1.20') return { re: /Caches are synced for taint/, count: 1 };
  return { re: /"Caches are synced"/, count: upstreamControllers.split(',').filter((c) => c.trim() !== '').length };
}

/** A controller that has synced. */
export interface SyncedController {
  proc: ControllerProcess;
  /** ms from spawn to the synced log line */
  syncMs: number;
  syncedAtMs: number;
  /** our metrics port (ours only; 0 for upstream) */
  metricsPort: number;
}

/**
 * Starts a controller against `env` and waits for its synced log line.
 * @param tag names the log file (`<workDir>/<tag>-<kind>.log`).
 * @throws {Error} when it exits or does not sync within `timeoutMs`.
 */
export async function launchSynced(
  ctx: BenchContext,
  env: RunEnv,
  kind: ControllerKind,
  flags: SharedControllerFlags,
  tag: string,
  opts: { logLevel?: 'info' | 'debug'; timeoutMs?: number; oursArgs?: readonly string[] } = {},
): Promise<SyncedController> {
  const [metricsPort] = (await freePorts(1)) as [number];
  const launch: ControllerLaunch = {
    kind,
    kubeconfig: env.cp.kubeconfig,
    flags,
    upstreamBinary: ctx.upstreamBinary,
    upstreamControllers: ctx.upstreamControllers,
    upstreamVersion: ctx.upstreamVersion,
    oursMode: ctx.oursMode,
    oursEntry: ctx.oursEntry,
    metricsPort,
    logLevel: opts.logLevel ?? 'info',
    ...(ctx.cpuProfile && kind === 'ours' ? { cpuProfDir: join(ctx.workDir, 'profiles') } : {}),
    ...(opts.oursArgs ? { oursArgs: opts.oursArgs } : {}),
    ...(ctx.oursNodeArgs.length > 0 ? { oursNodeArgs: ctx.oursNodeArgs } : {}),
  };
  // The image ships the bundle with its V8 code cache built in (Dockerfile): so does the bench.
  if (kind === 'ours' && ctx.oursMode === 'bundle' && ctx.oursColdCompile !== true) launch.oursCompileCache = compileCacheFor(ctx);
  const proc = new ControllerProcess(launch, join(ctx.workDir, `${tag}-${kind}.log`), ctx.repoRoot);
  const stop = (): Promise<void> => proc.stop();
  cleanups.add(stop);
  void proc.exited.then(() => cleanups.delete(stop));
  try {
    const synced = syncedLine(kind, ctx.upstreamVersion, ctx.upstreamControllers);
    const line = await proc.waitForLine(synced.re, opts.timeoutMs ?? 180_000, synced.count);
    const syncMs = line.atMs - proc.startedAtMs;
    ctx.log(`  ${kind} (pid ${proc.pid}) caches synced after ${(syncMs / 1000).toFixed(2)} s`);
    return { proc, syncMs, syncedAtMs: line.atMs, metricsPort: kind === 'ours' ? metricsPort : 0 };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/** The simulator's health over a window, and whether the run must be flagged. */
export interface SimHealth {
  leaseLagP50Ms: number;
  leaseLagP99Ms: number;
  leaseLagMaxMs: number;
  samples: number;
  errors: number;
  /** true when p99 lag exceeded the limit or heartbeats failed: the run's numbers are not reported as valid */
  flagged: boolean;
}

/** Summarises fleet stats (whose window covers the measurement) against the lag limit. Pure. */
export function simHealth(stats: FleetStats, errorsBefore: number, maxLagMs: number): SimHealth {
  const errors = stats.errors - errorsBefore;
  return {
    leaseLagP50Ms: round1(stats.leaseLagMs.p50),
    leaseLagP99Ms: round1(stats.leaseLagMs.p99),
    leaseLagMaxMs: round1(stats.leaseLagMs.max),
    samples: stats.leaseLagMs.samples,
    errors,
    flagged: stats.leaseLagMs.p99 > maxLagMs || errors > 0,
  };
}

/** Rounds to one decimal. */
export const round1 = (x: number): number => Math.round(x * 10) / 10;

/**
 * Busy CPU seconds of the whole machine so far (all cores; `/proc/stat` minus idle and iowait).
 * @throws {Error} when /proc/stat cannot be read.
 */
export function machineBusySeconds(): number {
  const first = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const f = first.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - (f[3] ?? 0) - (f[4] ?? 0)) / 100;
}

/** How busy the machine was during a phase, and how much of that was not the benchmark. */
export interface Interference {
  /** average busy cores (of all of them) */
  machineBusyCores: number;
  /** average cores used by processes other than the controller, API server, etcd and the bench itself (other engineers' work) */
  foreignCores: number;
}

/**
 * Starts measuring interference; call the returned function at the end of the phase.
 * @param pids processes that belong to the benchmark (the bench process itself is always included).
 */
export function startInterference(pids: readonly number[]): () => Interference {
  const own = (): number => {
    let s = process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6;
    for (const pid of pids) {
      try {
        s += procUsage(pid).cpuSeconds;
      } catch {
        // exited
      }
    }
    return s;
  };
  const t0 = Date.now();
  const m0 = machineBusySeconds();
  const o0 = own();
  return () => {
    const secs = Math.max(0.001, (Date.now() - t0) / 1000);
    const busy = machineBusySeconds() - m0;
    const mine = own() - o0;
    return { machineBusyCores: Math.round((busy / secs) * 100) / 100, foreignCores: Math.round((Math.max(0, busy - mine) / secs) * 100) / 100 };
  };
}

/** What a scenario body gets from {@link runSession}: everything is up and the controller has synced. */
export interface Session {
  env: RunEnv;
  fleet: Fleet;
  /** ms the fleet took to start */
  createMs: number;
  /** the bench's own watches (when asked for) */
  observer?: ClusterObserver;
  /** the simulator's Lease writes paired with the bench watch's sight of them (with the observer) */
  watchLag?: WatchLagMeter;
  /** no-controller API traffic (when asked for) */
  baseline?: Baseline;
  /** API request totals just before the controller was spawned */
  countsBeforeLaunch: RequestCounts;
  /** epoch ms just before the controller was spawned */
  launchAtMs: number;
  c: SyncedController;
  /** when the start-up writes were over (epoch ms), and whether they were (false: gave up waiting) */
  quietAtMs: number;
  quiet: boolean;
}

/** How {@link runSession} sets a run up. */
export interface SessionSpec {
  /** names the fleet (`<tag>-up|ours`) and the controller's log file */
  tag: string;
  shape: Omit<FleetShape, 'prefix'>;
  flags: SharedControllerFlags;
  /** watch Nodes, Leases and pods from the bench (scenarios 2 and 3) */
  observe: boolean;
  /** measure a no-controller baseline of this length first, ms (0: none) */
  baselineMs: number;
  /** wait after the controller synced, ms */
  warmupMs: number;
  /**
   * With a baseline: after the warm-up, also wait until the controller's start-up writes are over
   * (see {@link waitForQuietWrites}) before `body` measures or injects faults. Default true.
   */
  waitForQuiet?: boolean;
  logLevel?: 'info' | 'debug';
  syncTimeoutMs?: number;
  /** extra flags for ours only (ignored for upstream) */
  oursArgs?: readonly string[];
}

/**
 * The common frame of a scenario run: a private control plane, a fresh fleet, optionally the
 * bench's watches and a no-controller baseline, then the controller, synced and warmed up; `body`
 * measures. Everything is torn down afterwards, also when `body` throws.
 * @throws whatever a step or `body` throws.
 */
export async function runSession<T>(ctx: BenchContext, kind: ControllerKind, spec: SessionSpec, body: (s: Session) => Promise<T>): Promise<T> {
  return await withControlPlane(ctx, async (env) => {
    const watchLag = spec.observe ? new WatchLagMeter() : undefined;
    const fleetClients = watchLag ? withLeaseWriteHook(env.clients, (name, renewMs, at) => watchLag.wrote(name, renewMs, at)) : env.clients;
    const { fleet, createMs } = await startFleet(ctx, env, { ...spec.shape, prefix: `${spec.tag}-${kind === 'upstream' ? 'up' : 'ours'}` }, 10_000, fleetClients);
    const observer = watchLag
      ? observeCluster(env.kc, { namespace: fleet.namespace, podKindLabel: POD_KIND_LABEL, onLeaseSeen: (name, renewMs, at) => watchLag.seen(name, renewMs, at) })
      : undefined;
    try {
      await observer?.synced;
      let baseline: Baseline | undefined;
      if (spec.baselineMs > 0) {
        ctx.log(`  baseline (no controller) for ${spec.baselineMs / 1000} s`);
        baseline = await measureBaseline(env, spec.baselineMs);
      }
      const countsBeforeLaunch = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
      const launchAtMs = Date.now();
      const c = await launchSynced(ctx, env, kind, spec.flags, spec.tag, {
        ...(spec.logLevel ? { logLevel: spec.logLevel } : {}),
        ...(spec.syncTimeoutMs ? { timeoutMs: spec.syncTimeoutMs } : {}),
        ...(spec.oursArgs ? { oursArgs: spec.oursArgs } : {}),
      });
      try {
        await sleep(spec.warmupMs);
        let quiet = true;
        if (baseline && spec.waitForQuiet !== false) {
          quiet = (await waitForQuietWrites(env, baseline, { stepMs: 10_000, ...quietLimits(spec.shape.nodes, spec.flags.kubeApiQps) })).quiet;
          ctx.log(`  ${kind}: start-up writes ${quiet ? 'over' : 'STILL GOING'} ${((Date.now() - c.syncedAtMs) / 1000).toFixed(0)} s after sync`);
        }
        return await body({
          env,
          fleet,
          createMs,
          ...(observer ? { observer } : {}),
          ...(watchLag ? { watchLag } : {}),
          ...(baseline ? { baseline } : {}),
          countsBeforeLaunch,
          launchAtMs,
          c,
          quietAtMs: Date.now(),
          quiet,
        });
      } finally {
        await c.proc.stop();
      }
    } finally {
      observer?.stop();
      await fleet.stop();
    }
  });
}

/** Pass durations parsed from ours' debug log, ms. */
export interface PassStats {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

/** p50/p99/max of pass durations. Pure. */
export function passStats(values: readonly number[]): PassStats {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0, count: sorted.length };
}

/** What one controller did over a measurement window (see {@link measureWindow}). */
export interface WindowFigures {
  /** epoch ms */
  startAtMs: number;
  endAtMs: number;
  windowS: number;
  /** the controller's own usage at the window's start and end (CPU seconds, RSS and VmHWM KiB) */
  usageBefore: ProcUsage;
  usageAfter: ProcUsage;
  /** CPU seconds (user + sys) in the window, and per minute */
  cpuSeconds: number;
  cpuSecondsPerMinute: number;
  /** CPU in the window by thread name, s per minute (ours: MainThread = JavaScript, V8Worker = GC and compilers) */
  cpuByThread: Record<string, number>;
  /** ours' `monitor pass done` wall times and main-thread CPU times in the window, ms (empty for upstream) */
  passMs: number[];
  passCpuMs: number[];
  /** API server + etcd CPU seconds in the window */
  controlPlaneCpuSeconds: number;
  /** API request totals at the window's start and end */
  countsBefore: RequestCounts;
  countsAfter: RequestCounts;
  interference: Interference;
  sim: SimHealth;
}

/**
 * Measures a running controller for `windowMs` milliseconds: its CPU (total and by thread), RSS,
 * health passes (ours, with `logLevel: 'debug'`), the control plane's CPU and the API request
 * totals, the machine's interference and the simulator's health.
 * @throws {Error} when the API server's /metrics cannot be scraped or a process is gone.
 */
export async function measureWindow(ctx: BenchContext, env: RunEnv, fleet: Fleet, c: SyncedController, windowMs: number): Promise<WindowFigures> {
  const endInterference = startInterference([env.cp.apiserverPid, env.cp.etcdPid, c.proc.pid]);
  const countsBefore = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  const usageBefore = c.proc.usage();
  const th1 = threadCpuSeconds(c.proc.pid);
  const cp1 = controlPlaneCpu(env);
  const startAtMs = Date.now();
  const errorsBefore = fleet.stats().errors;
  const passes = collectHealthPasses(c.proc);
  const passCpu = collectHealthPasses(c.proc, 'cpuMs');
  await sleep(windowMs);
  const passMs = passes();
  const passCpuMs = passCpu();
  const usageAfter = c.proc.usage();
  const th2 = threadCpuSeconds(c.proc.pid);
  const cp2 = controlPlaneCpu(env);
  const interference = endInterference();
  const endAtMs = Date.now();
  const countsAfter = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  const windowS = (endAtMs - startAtMs) / 1000;
  const cpuSeconds = usageAfter.cpuSeconds - usageBefore.cpuSeconds;
  const hundredths = (x: number): number => Math.round(x * 100) / 100;
  return {
    startAtMs,
    endAtMs,
    windowS,
    usageBefore,
    usageAfter,
    cpuSeconds: hundredths(cpuSeconds),
    cpuSecondsPerMinute: hundredths((cpuSeconds / windowS) * 60),
    cpuByThread: threadCpuPerMinute(th1, th2, windowS),
    passMs,
    passCpuMs,
    controlPlaneCpuSeconds: cp2 - cp1,
    countsBefore,
    countsAfter,
    interference,
    sim: simHealth(fleet.stats(), errorsBefore, ctx.maxSimLagMs),
  };
}

/**
 * Collects ours' health pass durations (`monitor pass done` debug lines) from now on.
 * @returns a function that stops collecting and returns the durations, ms.
 */
export function collectHealthPasses(proc: ControllerProcess, field: PassField = 'ms'): () => number[] {
  const passes: number[] = [];
  const off = proc.onLine((l) => {
    const ms = passMsOf(l.text, field);
    if (ms !== undefined) passes.push(ms);
  });
  return () => {
    off();
    return passes;
  };
}

/**
 * A field of ours' `monitor pass done` debug line (src/nodelifecycle/monitor.ts): `ms` is the pass's
 * wall time, `cpuMs` its own main-thread CPU time without the wait for health syncs (both
 * **milliseconds**). Wall time includes preemption by the simulator on a 2-core machine; CPU time
 * does not.
 */
export type PassField = 'ms' | 'cpuMs';

/** Parses ours' `monitor pass done` debug lines. @returns the value of `field` (ms), or undefined for other lines. */
export function passMsOf(line: string, field: PassField = 'ms'): number | undefined {
  if (!line.includes('monitor pass done')) return undefined;
  try {
    const v = (JSON.parse(line) as Record<string, unknown>)[field];
    return typeof v === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When start-up counts as over: at most max(2, nodes / 200) controller writes in 10 s above the
 * baseline (what is left is simulator noise), and never wait longer than 3× what one event plus two
 * requests per node take at `qps` (upstream removes the kubelet's `not-ready` NoSchedule taint with
 * a GET and a PATCH per node; ours with a PATCH). Pure.
 * @returns the write threshold per 10 s and the longest wait, ms.
 */
export function quietLimits(nodes: number, qps: number): { maxWrites: number; maxMs: number } {
  return { maxWrites: Math.max(2, nodes / 200), maxMs: 3 * Math.ceil(((nodes * 3) / Math.max(1, qps)) * 1000 + 10_000) };
}

/**
 * Waits until the controller's start-up writes (registration events, label reconciliation, …)
 * are over: the API server's write count over each `stepMs`, minus the baseline's rate and Lease
 * writes, is at most `maxWrites`. Both controllers rate-limit those writes at `--kube-api-qps`, so
 * a fixed warm-up would cut one of them off mid-way.
 * @returns ms waited (capped at `maxMs`; then `quiet` is false).
 * @throws {Error} when `/metrics` cannot be scraped.
 */
export async function waitForQuietWrites(
  env: RunEnv,
  baseline: Baseline,
  opts: { stepMs: number; maxWrites: number; maxMs: number },
): Promise<{ waitedMs: number; quiet: boolean }> {
  const t0 = Date.now();
  let prev = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  let prevAt = Date.now();
  while (Date.now() - t0 < opts.maxMs) {
    await sleep(opts.stepMs);
    const now = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
    const at = Date.now();
    const writes = totalWrites(withoutSimulatorOnly(subtractBaseline(diffCounts(now, prev), at - prevAt, baseline.counts, baseline.ms)));
    if (writes <= opts.maxWrites) return { waitedMs: at - t0, quiet: true };
    prev = now;
    prevAt = at;
  }
  return { waitedMs: Date.now() - t0, quiet: false };
}
