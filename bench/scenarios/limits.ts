/**
 * Issue 29's limits scenario: Kubernetes' published limits (5,000 nodes, 150,000 pods) side by side
 * with kube-controller-manager. Unlike the other scenarios, one private control plane and one fleet
 * (Leases renewed every 10 s) carry every run: upstream and ours take turns on it, alternating
 * which goes first, `repeat` times each, so both see the same etcd, the same objects and the same
 * simulator. One controller's cycle:
 * 1. start at the default `--kube-api-qps` (20/30): time to caches synced, and CPU and peak RSS in
 *    the first minute after the spawn (issue 29's start-up cost);
 * 2. once its start-up writes are over, a steady window: CPU, peak RSS, ours' health passes (wall
 *    time and the pass's own CPU);
 * 3. a failure wave of 10 % of one zone at that QPS;
 * 4. a mass eviction of `massEvictionPods` pods (whole nodes of another zone, a taint no pod tolerates);
 * 5. a restart at the fast QPS (100): caches synced again, and the failure wave at that QPS.
 * After each fault the fleet is restored while the controller still runs (it takes its taints
 * off the revived nodes; the bench takes its own off), so the next step starts from a healthy fleet.
 * Before the first start the bench takes the admission's `not-ready:NoSchedule` taint off every
 * new node ({@link clearAdmissionTaints}), so no controller's first minute carries 1 write per node
 * that the others' are spared.
 */
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import { POD_KIND_LABEL } from '@node-lifecycle-controller/sim/fleet';
import {
  launchSynced,
  measureBaseline,
  measureWindow,
  passStats,
  quietLimits,
  round1,
  sleep,
  startFleet,
  waitForQuietWrites,
  withControlPlane,
  type BenchContext,
  type Interference,
  type PassStats,
  type RunEnv,
  type SimHealth,
  type SyncedController,
} from '../lib/harness.js';
import { observeCluster } from '../lib/observe.js';
import type { ControllerKind, SharedControllerFlags } from '../lib/procs.js';
import { WatchLagMeter, withLeaseWriteHook } from '../lib/watchlag.js';
import { orderOf } from '../lib/options.js';
import { editNodeTaints, measureMassEviction, untaintNodes, type EvictionRun } from './eviction.js';
import { measureFailureWave, spreadPick, type FailureRun, type WaveSession } from './failure.js';
import { memoryBreakdown } from './scale.js';

/** Settings of the limits scenario. */
export interface LimitsOptions {
  nodes: number;
  podsPerNode: number;
  zones: number;
  /** runs per controller */
  repeat: number;
  /** run one controller only */
  only?: ControllerKind;
  /** steady window, ms */
  windowMs: number;
  /** no-controller baseline once the fleet is up, ms */
  baselineMs: number;
  /** minimum wait after sync before measuring, ms */
  warmupMs: number;
  /** the default-QPS flags (20/30) */
  flags: SharedControllerFlags;
  /** the fast restart's `--kube-api-qps` and `--kube-api-burst` */
  fastQps: { kubeApiQps: number; kubeApiBurst: number };
  /** pods evicted by the mass eviction (whole nodes: rounded up to a multiple of pods per node) */
  massEvictionPods: number;
}

/** The pod mix of the limits fleet: the failure wave's (80 % evicted at once, the rest tolerate forever or are daemons). */
export const LIMITS_POD_MIX: PodMix = { tolerationSeconds: 8, tolerateForever: 1, daemonSet: 1 };

/** The first minute after a controller's spawn (issue 29, section 3). */
export interface FirstMinute {
  /** seconds from spawn at which it was read (60, or later when caches synced later) */
  atS: number;
  /** CPU seconds (user + sys) from spawn */
  cpuSeconds: number;
  /** VmHWM at that moment, MiB */
  peakRssMiB: number;
}

/** One controller's cycle on the limits fleet. */
export interface LimitsRun {
  controller: ControllerKind;
  /** 1-based repetition */
  repeat: number;
  nodes: number;
  pods: number;
  /** spawn → caches synced at the default QPS, seconds */
  syncS: number;
  firstMinute: FirstMinute;
  /** caches synced → start-up writes over, seconds; and whether they were over before the window */
  startupWritesS: number;
  startupQuiet: boolean;
  steady: {
    windowS: number;
    cpuSecondsPerMinute: number;
    cpuByThread: Record<string, number>;
    peakRssMiB: number;
    endRssMiB: number;
    /** ours only: health pass wall time and its own main-thread CPU, ms */
    healthPassMs?: PassStats;
    healthPassCpuMs?: PassStats;
    /** ours only: RSS, V8 heap and external memory at the window's end (prom-client), MiB */
    memoryMiB?: { rss: number; heapTotal: number; heapUsed: number; external: number };
  };
  /** the failure wave at the default QPS */
  wave?: FailureRun;
  massEviction?: EvictionRun;
  /** spawn → caches synced of the fast restart, seconds */
  syncFastS?: number;
  /** the fast restart's first minute: a second start, on a cluster the controller has already seen (a failover) */
  firstMinuteFast?: FirstMinute;
  /** the failure wave at the fast QPS */
  waveFast?: FailureRun;
  /** seconds each restore took (revive, taints off, pods back) */
  restoreS: number[];
  /** steps that failed (the cycle went on where the fleet allowed) */
  errors: string[];
  /** the steady window's interference */
  interference: Interference;
  /** the steady window's simulator health, flagged when any step's simulator fell behind */
  sim: SimHealth;
}

/** Everything the limits scenario produced. */
export interface LimitsResults {
  nodes: number;
  podsPerNode: number;
  fleetCreateS: number;
  /** the fast restart's QPS, as `qps/burst` */
  fastQps: string;
  upstream: LimitsRun[];
  ours: LimitsRun[];
}

/** Node taints a node lifecycle controller puts on an unhealthy node; the fleet is healthy again once none is left. */
const HEALTH_TAINTS = new Set(['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready']);

/** The taint the API server's admission (TaintNodesByCondition) puts on every new node, until a node lifecycle controller sees it Ready. */
const ADMISSION_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

/**
 * Takes the admission's `not-ready:NoSchedule` taint off `names`, as the controller that ran the
 * cluster before would have: on a fresh fleet the first controller started would otherwise make
 * one write per node that every later start is spared, and its first minute would not compare
 * with theirs. Every start measured is then a failover's. 16 nodes at a time.
 * @returns how many nodes had it.
 * @throws {Error} for any API error but a conflict.
 */
export async function clearAdmissionTaints(env: RunEnv, names: readonly string[]): Promise<number> {
  let had = 0;
  const one = async (name: string): Promise<void> => {
    const r = await editNodeTaints(env, name, (taints) => taints.filter((t) => !(t.key === ADMISSION_TAINT.key && t.effect === ADMISSION_TAINT.effect)));
    if (r.patches > 0) had++;
  };
  for (let i = 0; i < names.length; i += 16) await Promise.all(names.slice(i, i + 16).map(one));
  return had;
}

/**
 * How many whole nodes carry `pods` pods at `podsPerNode` each, at most `available`. Pure.
 * @returns at least 1.
 */
export function nodesForPods(pods: number, podsPerNode: number, available: number): number {
  return Math.max(1, Math.min(available, Math.ceil(pods / Math.max(1, podsPerNode))));
}

/**
 * Polls `done` every `stepMs` until it holds or `timeoutMs` passes.
 * @throws {Error} naming `what` on timeout.
 */
async function pollUntil(what: string, done: () => Promise<boolean> | boolean, timeoutMs: number, stepMs = 2000): Promise<void> {
  const t0 = Date.now();
  while (!(await done())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`limits: gave up after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(stepMs);
  }
}

/**
 * Brings the fleet back after a fault while the controller runs: the bench's taint off `untaint`,
 * the `dead` nodes revived, then waits until the controller has taken its health taints off them
 * and every pod deletion was confirmed, and recreates / re-readies pods ({@link Fleet.restore}).
 * @returns seconds it took.
 * @throws {Error} when the fleet is not healthy within 10 minutes.
 */
async function restoreFleet(ctx: BenchContext, s: WaveSession, dead: readonly string[], untaint: readonly string[]): Promise<number> {
  const t0 = Date.now();
  if (untaint.length > 0) await untaintNodes(s.env, untaint);
  await Promise.all(dead.map((n) => s.fleet.reviveNode(n)));
  const tainted = async (): Promise<number> => {
    const nodes = await Promise.all(dead.map((name) => s.env.clients.core.readNode({ name })));
    return nodes.filter((n) => (n.spec?.taints ?? []).some((t) => HEALTH_TAINTS.has(t.key))).length;
  };
  await pollUntil('the revived nodes to lose their health taints and every pod deletion to be confirmed', async () => s.fleet.terminatingPods() === 0 && (await tainted()) === 0, 600_000);
  const { created, readied } = await s.fleet.restore();
  // The controller and the bench's watches see the recreated pods before the next step counts them.
  await sleep(10_000);
  const secs = round1((Date.now() - t0) / 1000);
  ctx.log(`  restored in ${secs} s: ${dead.length} nodes revived, ${untaint.length} untainted, ${created} pods created, ${readied} reported Ready`);
  return secs;
}

/** The worse of two simulator healths (flagged when either is). Pure. */
export function worseSim(a: SimHealth, b: SimHealth | undefined): SimHealth {
  if (!b) return a;
  return {
    leaseLagP50Ms: Math.max(a.leaseLagP50Ms, b.leaseLagP50Ms),
    leaseLagP99Ms: Math.max(a.leaseLagP99Ms, b.leaseLagP99Ms),
    leaseLagMaxMs: Math.max(a.leaseLagMaxMs, b.leaseLagMaxMs),
    samples: a.samples + b.samples,
    errors: a.errors + b.errors,
    flagged: a.flagged || b.flagged,
  };
}

/**
 * Starts a controller, reads its first minute, and waits until its start-up writes are over.
 * @throws {Error} when it does not sync.
 */
async function launchForCycle(
  ctx: BenchContext,
  s: Omit<WaveSession, 'c'>,
  kind: ControllerKind,
  flags: SharedControllerFlags,
  o: LimitsOptions,
  tag: string,
): Promise<{ c: SyncedController; firstMinute: FirstMinute; startupWritesS: number; quiet: boolean }> {
  const c = await launchSynced(ctx, s.env, kind, flags, tag, { logLevel: 'debug', timeoutMs: 900_000 });
  try {
    await sleep(Math.max(0, c.proc.startedAtMs + 60_000 - Date.now()));
    const u = c.proc.usage();
    const firstMinute = { atS: round1((Date.now() - c.proc.startedAtMs) / 1000), cpuSeconds: Math.round(u.cpuSeconds * 100) / 100, peakRssMiB: round1(u.hwmKiB / 1024) };
    await sleep(o.warmupMs);
    const { quiet } = await waitForQuietWrites(s.env, s.baseline, { stepMs: 10_000, ...quietLimits(o.nodes, flags.kubeApiQps) });
    const startupWritesS = Math.round((Date.now() - c.syncedAtMs) / 1000);
    ctx.log(`  ${kind}: first minute ${firstMinute.cpuSeconds} CPU s, peak RSS ${firstMinute.peakRssMiB} MiB; start-up writes ${quiet ? 'over' : 'STILL GOING'} ${startupWritesS} s after sync`);
    return { c, firstMinute, startupWritesS, quiet };
  } catch (err) {
    await c.proc.stop();
    throw err;
  }
}

/**
 * One controller's cycle (see the file comment) on the shared fleet. A failed step is recorded in
 * `errors`; a failed restore ends the cycle by throwing, since the next step would measure a sick fleet.
 * @throws {Error} when the controller does not start or the fleet cannot be restored.
 */
async function runCycle(ctx: BenchContext, s: Omit<WaveSession, 'c'>, kind: ControllerKind, o: LimitsOptions, repeat: number): Promise<LimitsRun> {
  const tag = `li${repeat}`;
  const errors: string[] = [];
  const restoreS: number[] = [];
  const zones = s.fleet.zones();
  const evictZone = zones[Math.min(2, zones.length - 1)] as string;
  const inEvictZone = s.fleet.nodesInZone(evictZone);
  const evictNodes = spreadPick(inEvictZone, nodesForPods(o.massEvictionPods, o.podsPerNode, inEvictZone.length));
  const step = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (err) {
      const msg = `${kind} #${repeat} ${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      errors.push(msg);
      ctx.log(`  ERROR ${msg}`);
      return undefined;
    }
  };
  // Every dead node, not only the wave's: a wave that failed half-way must not leave the next step a sick fleet.
  const dead = (): string[] => s.fleet.nodeNames().filter((n) => !s.fleet.isAlive(n));

  const started = await launchForCycle(ctx, s, kind, o.flags, o, tag);
  let run: LimitsRun;
  try {
    const ws: WaveSession = { ...s, c: started.c };
    ctx.log(`  ${kind} #${repeat}: steady window of ${o.windowMs / 1000} s`);
    const w = await measureWindow(ctx, s.env, s.fleet, started.c, o.windowMs);
    let memoryMiB: LimitsRun['steady']['memoryMiB'];
    if (kind === 'ours') {
      memoryMiB = await fetch(`http://127.0.0.1:${started.c.metricsPort}/metrics`)
        .then(async (r) => memoryBreakdown(await r.text()))
        .catch(() => undefined);
    }
    run = {
      controller: kind,
      repeat,
      nodes: s.fleet.nodeNames().length,
      pods: s.fleet.nodeNames().length * o.podsPerNode,
      syncS: Math.round(started.c.syncMs) / 1000,
      firstMinute: started.firstMinute,
      startupWritesS: started.startupWritesS,
      startupQuiet: started.quiet,
      steady: {
        windowS: round1(w.windowS),
        cpuSecondsPerMinute: w.cpuSecondsPerMinute,
        cpuByThread: w.cpuByThread,
        peakRssMiB: round1(w.usageAfter.hwmKiB / 1024),
        endRssMiB: round1(w.usageAfter.rssKiB / 1024),
        ...(kind === 'ours' ? { healthPassMs: passStats(w.passMs), healthPassCpuMs: passStats(w.passCpuMs) } : {}),
        ...(memoryMiB ? { memoryMiB } : {}),
      },
      restoreS,
      errors,
      interference: w.interference,
      sim: w.sim,
    };
    const waveOptions = { evictedKinds: ['tolerationSeconds'], failFraction: 0.1 };
    const wave = await step('failure wave', () => measureFailureWave(ctx, ws, kind, { ...waveOptions, flags: o.flags, zoneIndex: 0 }));
    if (wave) run.wave = wave;
    restoreS.push(await restoreFleet(ctx, ws, dead(), []));
    const eviction = await step('mass eviction', () => measureMassEviction(ctx, ws, kind, { flags: o.flags }, evictNodes));
    if (eviction) run.massEviction = eviction;
    restoreS.push(await restoreFleet(ctx, ws, [], evictNodes));
  } finally {
    await started.c.proc.stop();
  }

  const fastFlags = { ...o.flags, ...o.fastQps };
  const fast = await step('fast restart', () => launchForCycle(ctx, s, kind, fastFlags, o, `${tag}f`));
  if (fast) {
    try {
      run.syncFastS = Math.round(fast.c.syncMs) / 1000;
      run.firstMinuteFast = fast.firstMinute;
      const ws: WaveSession = { ...s, c: fast.c };
      const waveFast = await step('failure wave at the fast QPS', () =>
        measureFailureWave(ctx, ws, kind, { evictedKinds: ['tolerationSeconds'], failFraction: 0.1, flags: fastFlags, zoneIndex: 1 }),
      );
      if (waveFast) run.waveFast = waveFast;
      restoreS.push(await restoreFleet(ctx, ws, dead(), []));
    } finally {
      await fast.c.proc.stop();
    }
  }
  for (const part of [run.wave, run.massEviction, run.waveFast]) run.sim = worseSim(run.sim, part?.sim);
  return run;
}

/**
 * Runs the limits scenario: one control plane, one fleet, `repeat` cycles per controller.
 * @param onRun called after each cycle (to write partial results).
 * @returns every cycle's figures.
 * @throws {Error} when the control plane or the fleet does not start, or a cycle cannot go on.
 */
export async function runLimits(ctx: BenchContext, o: LimitsOptions, onRun: (r: LimitsResults) => void = () => undefined): Promise<LimitsResults> {
  return await withControlPlane(ctx, async (env: RunEnv) => {
    const watchLag = new WatchLagMeter();
    const fleetClients = withLeaseWriteHook(env.clients, (name, renewMs, at) => watchLag.wrote(name, renewMs, at));
    const { fleet, createMs } = await startFleet(
      ctx,
      env,
      { prefix: 'limits', nodes: o.nodes, zones: o.zones, podsPerNode: o.podsPerNode, podMix: LIMITS_POD_MIX, tolerationSeconds: 0, statsWindowMs: 10 * 60_000 },
      10_000,
      fleetClients,
    );
    const observer = observeCluster(env.kc, { namespace: fleet.namespace, podKindLabel: POD_KIND_LABEL, onLeaseSeen: (name, renewMs, at) => watchLag.seen(name, renewMs, at) });
    try {
      ctx.log(`  took the admission's not-ready:NoSchedule taint off ${await clearAdmissionTaints(env, fleet.nodeNames())} nodes (every start a failover's)`);
      await observer.synced;
      ctx.log(`  baseline (no controller) for ${o.baselineMs / 1000} s`);
      const baseline = await measureBaseline(env, o.baselineMs);
      const results: LimitsResults = {
        nodes: fleet.nodeNames().length,
        podsPerNode: o.podsPerNode,
        fleetCreateS: round1(createMs / 1000),
        fastQps: `${o.fastQps.kubeApiQps}/${o.fastQps.kubeApiBurst}`,
        upstream: [],
        ours: [],
      };
      for (let i = 0; i < o.repeat; i++) {
        for (const kind of orderOf(i).filter((k) => o.only === undefined || k === o.only)) {
          ctx.log(`--- limits #${i + 1}: ${kind}`);
          results[kind].push(await runCycle(ctx, { env, fleet, observer, baseline, watchLag }, kind, o, i + 1));
          onRun(results);
        }
      }
      return results;
    } finally {
      observer.stop();
      await fleet.stop();
    }
  });
}
