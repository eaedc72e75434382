/**
 * Scenario 2, failure wave: a fraction of one zone's nodes lose power at once. The bench's own
 * watches time each failed node from its last heartbeat to Ready=Unknown (detection), from
 * Unknown to the NoExecute taint (taint latency), and the kill to the last non-tolerating pod
 * terminating (eviction completion); the API server's counters give writes per failed node.
 */
import { percentile } from '@node-lifecycle-controller/sim/schedule';
import { parseGoDuration } from '../../src/util/duration.js';
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import { countsToObject, diffCounts, scrapeRequestTotals, subtractBaseline, totalWrites, withoutSimulatorOnly, WRITE_VERBS } from '../lib/apimetrics.js';
import { round1, runSession, simHealth, sleep, startInterference, type Baseline, type BenchContext, type Interference, type Session, type SessionSpec, type SimHealth } from '../lib/harness.js';
import { etcdDiskBetween, scrapeEtcdDisk, type EtcdDiskFigures } from '../lib/etcddisk.js';
import { failureLatencies, type ClusterObserver, type FailureTracker } from '../lib/observe.js';
import type { ControllerKind, SharedControllerFlags } from '../lib/procs.js';
import { lagSummary, startEventLoopLag, type EventLoopLag, type LagSummary } from '../lib/watchlag.js';

/** Settings of scenario 2. */
export interface FailureOptions {
  nodes: number;
  podsPerNode: number;
  zones: number;
  podMix: PodMix;
  /** `tolerationSeconds` of the `tolerationSeconds` pods (0 = evict at once) */
  tolerationSeconds: number;
  /** pod kinds expected to be evicted at once (their completion is timed) */
  evictedKinds: readonly string[];
  /** fraction of the first zone's nodes to kill */
  failFraction: number;
  /**
   * Kill the same number of the second zone's nodes as soon as the bench sees the first wave's
   * first NoExecute taint, so that the second wave is detected and tainted while the first wave's
   * pod writes queue behind `--kube-api-qps` (issue 18's last goal). Default false.
   */
  secondWave?: boolean;
  baselineMs: number;
  /** wait after sync before the kill, ms (the controller has seen every node healthy) */
  warmupMs: number;
  flags: SharedControllerFlags;
}

/** Percentile summary, in the unit its field says. */
export interface Dist {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

/** One controller's failure-wave run. */
export interface FailureRun {
  controller: ControllerKind;
  nodes: number;
  failedNodes: number;
  trackedPods: number;
  /** last heartbeat (its own timestamp) → Ready=Unknown, seconds */
  detectionS: Dist;
  /** last heartbeat as first delivered by the bench's watch → Ready=Unknown, seconds (issue 18's measure) */
  detectionFromSeenS?: Dist;
  /** how late the bench saw what the simulator wrote (see bench/lib/watchlag.ts) */
  watchLag?: WatchLagFigures;
  /** etcd's disk waits from the kill to the end (bench/lib/etcddisk.ts); absent when etcd's /metrics could not be read */
  etcdDisk?: EtcdDiskFigures;
  /** Ready=Unknown → NoExecute taint, seconds */
  taintS: Dist;
  /** raw samples for the chart, seconds */
  samples: { detectionS: number[]; taintS: number[]; detectionFromSeenS?: number[] };
  /** with {@link FailureOptions.secondWave}: its nodes (counted in failedNodes), and when it was killed, s after the first kill */
  secondWave?: { nodes: number; killedAfterS: number };
  /** kill → last tracked pod terminating, seconds (undefined when it timed out) */
  evictionCompleteS?: number;
  /** first NoExecute taint → last tracked pod terminating, seconds */
  evictionAfterTaintS?: number;
  /** controller writes (baseline-subtracted) from the kill until completion + 3 s, per failed node */
  writesPerFailedNode: number;
  writesDetail: Record<string, number>;
  /** nodes that never got Unknown or the taint, and pods never evicted (when it timed out) */
  missing: { nodes: number; pods: number };
  timedOut: boolean;
  /** how busy the machine was while measuring, and how much of it was other people's work */
  interference: Interference;
  sim: SimHealth;
}

/** The watch lag next to the detection figures of one failure-wave run. */
export interface WatchLagFigures {
  /** Lease renewals of every node, from 30 s before the kill to the end: watch receipt − PATCH return, ms */
  fanOutMs: LagSummary;
  /** the same for each failed node's last renewal only, ms */
  lastRenewalFanOutMs: LagSummary;
  /** event-loop lag of the bench process (simulator and watcher), kill → end, ms */
  benchEventLoopMs: EventLoopLag;
}

/** Percentile summary of values (any unit), rounded to 3 decimals. Pure. */
export function dist(values: readonly number[]): Dist {
  const s = [...values].sort((a, b) => a - b);
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  return { p50: r(percentile(s, 50)), p99: r(percentile(s, 99)), max: r(s.at(-1) ?? 0), n: s.length };
}

/**
 * Picks `count` nodes spread evenly over `names` (deterministic). Pure.
 * @returns a subset of `names`, in order.
 */
export function spreadPick(names: readonly string[], count: number): string[] {
  const k = Math.max(0, Math.min(count, names.length));
  const out: string[] = [];
  for (let i = 0; i < k; i++) out.push(names[Math.floor((i * names.length) / k)] as string);
  return out;
}

/**
 * Resolves when `done()` holds (checked on every tracker change and every 500 ms) or at the deadline.
 * @returns true when done, false on timeout.
 */
export async function waitUntil(tracker: FailureTracker, done: () => boolean, timeoutMs: number): Promise<boolean> {
  if (done()) return true;
  return await new Promise((resolve) => {
    const finish = (v: boolean): void => {
      off();
      clearInterval(poll);
      clearTimeout(timer);
      resolve(v);
    };
    const check = (): void => {
      if (done()) finish(true);
    };
    const off = tracker.onProgress(check);
    const poll = setInterval(check, 500);
    const timer = setTimeout(() => finish(false), timeoutMs);
  });
}

/**
 * Runs scenario 2 for one controller on a fresh control plane and fleet.
 * @throws {Error} when the control plane, the fleet or the controller fails to start.
 */
export async function runFailure(ctx: BenchContext, kind: ControllerKind, o: FailureOptions, tag: string): Promise<FailureRun> {
  const spec: SessionSpec = {
    tag,
    shape: { nodes: o.nodes, zones: o.zones, podsPerNode: o.podsPerNode, podMix: o.podMix, tolerationSeconds: o.tolerationSeconds, statsWindowMs: 10 * 60_000 },
    flags: o.flags,
    observe: true,
    baselineMs: o.baselineMs,
    warmupMs: o.warmupMs,
  };
  return await runSession(ctx, kind, spec, async (s) => {
    if (!s.observer || !s.baseline) throw new Error('the failure wave needs the observer and a baseline');
    return await measureFailureWave(ctx, { ...s, observer: s.observer, baseline: s.baseline }, kind, o);
  });
}

/** What a wave is measured on: a running fleet, the bench's watches, a no-controller baseline and a synced controller. */
export type WaveSession = Pick<Session, 'env' | 'fleet' | 'c' | 'watchLag'> & { observer: ClusterObserver; baseline: Baseline };

/** How one failure wave is made. */
export type WaveOptions = Pick<FailureOptions, 'evictedKinds' | 'failFraction' | 'secondWave' | 'flags'> & {
  /** index into the fleet's zones of the zone whose nodes die (default 0; the second wave takes the next one) */
  zoneIndex?: number;
};

/**
 * Kills `failFraction` of one zone's nodes of a running fleet and times detection, taint and
 * eviction from the bench's watches (the tracker is reset first, so it times this wave alone).
 * Leaves the nodes dead: the caller revives them or tears the fleet down.
 * @returns the wave's figures.
 * @throws {Error} when the API server's /metrics cannot be scraped.
 */
export async function measureFailureWave(ctx: BenchContext, s: WaveSession, kind: ControllerKind, o: WaveOptions): Promise<FailureRun> {
  const { env, fleet, observer, baseline, c, watchLag } = s;
  observer.tracker.reset();
  const zi = o.zoneIndex ?? 0;
  const zones = fleet.zones();
  const zone = zones[zi % zones.length] as string;
  const inZone = fleet.nodesInZone(zone);
  const wave1 = spreadPick(inZone, Math.max(1, Math.round(o.failFraction * inZone.length)));
  const zone2 = zones.length > 1 ? zones[(zi + 1) % zones.length] : undefined;
  const wave2 = o.secondWave && zone2 !== undefined ? spreadPick(fleet.nodesInZone(zone2), wave1.length) : [];
  const victims = [...wave1, ...wave2];
  const tracker = observer.tracker;
  tracker.trackNodes(victims);
  const trackedPods = tracker.trackPodsOn(new Set(victims), new Set(o.evictedKinds));
  const k0 = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  // A missing reading only leaves the figure out: the disk wait explains the watch lag, it is not the measure.
  const disk0 = await scrapeEtcdDisk(env.cp.etcdUrl).catch(() => undefined);
  const errorsBefore = fleet.stats().errors;
  const endInterference = startInterference([env.cp.apiserverPid, env.cp.etcdPid, c.proc.pid]);
  const endLoopLag = startEventLoopLag();
  const killAt = Date.now();
  for (const n of wave1) fleet.killNode(n);
  ctx.log(`  killed ${wave1.length} of ${inZone.length} nodes in ${zone} (${trackedPods} pods to evict${wave2.length > 0 ? ', with the second wave' : ''}); waiting`);
  let secondWave: FailureRun['secondWave'];
  if (wave2.length > 0) {
    const tainted = (): boolean => wave1.some((n) => tracker.nodeTimelines().get(n)?.noExecuteTaintAtMs !== undefined);
    await waitUntil(tracker, tainted, parseGoDuration(o.flags.nodeMonitorGracePeriod) + 60_000);
    for (const n of wave2) fleet.killNode(n);
    secondWave = { nodes: wave2.length, killedAfterS: Math.round(Date.now() - killAt) / 1000 };
    ctx.log(`  second wave: killed ${wave2.length} nodes in ${zone2 ?? '?'} ${secondWave.killedAfterS} s after the first, while its pod writes queue`);
  }
  const timeoutMs = parseGoDuration(o.flags.nodeMonitorGracePeriod) + 120_000 + (trackedPods * 4000) / o.flags.kubeApiQps;
  const done = await waitUntil(tracker, () => tracker.complete(), timeoutMs);
  const doneAt = Date.now();
  const interference = endInterference();
  const benchEventLoopMs = endLoopLag();
  await sleep(3000);
  const k1 = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  const disk1 = await scrapeEtcdDisk(env.cp.etcdUrl).catch(() => undefined);
  const sim = simHealth(fleet.stats(), errorsBefore, ctx.maxSimLagMs);
  const writes = withoutSimulatorOnly(subtractBaseline(diffCounts(k1, k0), Date.now() - killAt, baseline.counts, baseline.ms));
  const writeKeys = new Map([...writes].filter(([k]) => WRITE_VERBS.has(k.split(' ')[0] as string)));
  const timelines = tracker.nodeTimelines();
  const lat = failureLatencies(timelines);
  const gone = tracker.podGoneTimes();
  const lastGone = gone.every((g) => g !== undefined) ? Math.max(killAt, ...(gone as number[])) : undefined;
  const firstTaint = Math.min(...[...timelines.values()].map((t) => t.noExecuteTaintAtMs ?? Infinity));
  const run: FailureRun = {
    controller: kind,
    nodes: fleet.nodeNames().length,
    failedNodes: victims.length,
    trackedPods,
    detectionS: dist(lat.detectionMs.map((x) => x / 1000)),
    detectionFromSeenS: dist(lat.detectionFromSeenMs.map((x) => x / 1000)),
    ...(watchLag
      ? {
          watchLag: {
            fanOutMs: lagSummary(watchLag.samples(killAt - 30_000, doneAt).map((x) => x.lagMs)),
            lastRenewalFanOutMs: lagSummary(watchLag.lastRenewalLags(victims)),
            benchEventLoopMs,
          },
        }
      : {}),
    ...(disk0 && disk1 ? { etcdDisk: etcdDiskBetween(disk0, disk1) } : {}),
    taintS: dist(lat.taintMs.map((x) => x / 1000)),
    samples: { detectionS: lat.detectionMs.map((x) => x / 1000), taintS: lat.taintMs.map((x) => x / 1000), detectionFromSeenS: lat.detectionFromSeenMs.map((x) => x / 1000) },
    writesPerFailedNode: round1(totalWrites(writes) / victims.length),
    writesDetail: countsToObject(writeKeys),
    missing: { nodes: lat.missing, pods: gone.filter((g) => g === undefined).length },
    ...(secondWave ? { secondWave } : {}),
    timedOut: !done,
    interference,
    sim,
  };
  if (lastGone !== undefined) {
    run.evictionCompleteS = Math.round(lastGone - killAt) / 1000;
    if (Number.isFinite(firstTaint)) run.evictionAfterTaintS = Math.round(lastGone - firstTaint) / 1000;
  }
  ctx.log(
    `  ${kind}: detection p50 ${run.detectionS.p50} s p99 ${run.detectionS.p99} s (from seen: p50 ${run.detectionFromSeenS?.p50} s p99 ${run.detectionFromSeenS?.p99} s); ` +
      `watch fan-out lag p50 ${run.watchLag?.fanOutMs.p50} ms p99 ${run.watchLag?.fanOutMs.p99} ms, bench event loop p99 ${benchEventLoopMs.p99Ms} ms; ` +
      `taint p50 ${run.taintS.p50} s p99 ${run.taintS.p99} s; ` +
      `eviction complete ${run.evictionCompleteS ?? 'timed out'} s; writes/failed node ${run.writesPerFailedNode}; ` +
      `sim lag p99 ${sim.leaseLagP99Ms} ms${sim.flagged ? ' FLAGGED' : ''} (${((doneAt - killAt) / 1000).toFixed(0)} s)`,
  );
  return run;
}
