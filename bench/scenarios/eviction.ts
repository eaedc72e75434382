/**
 * Scenario 3, mass eviction throughput: every node of a small fleet gets a custom NoExecute taint
 * at once (written by the bench, as a user would), and no pod tolerates it. Measures deletions per
 * second from the first taint write until the last pod is terminating, at the same `--kube-api-qps`
 * for both controllers.
 */
import { PatchStrategy, setHeaderOptions, type V1Taint } from '@kubernetes/client-node';
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import { isConflict } from '../../src/kube/client.js';
import { byVerb, countsToObject, diffCounts, scrapeRequestTotals, subtractBaseline, subtractKnown, withoutSimulatorOnly, type RequestCounts } from '../lib/apimetrics.js';
import { round1, runSession, simHealth, sleep, startInterference, type BenchContext, type Interference, type RunEnv, type SessionSpec, type SimHealth } from '../lib/harness.js';
import type { ControllerKind, SharedControllerFlags } from '../lib/procs.js';
import { waitUntil, type WaveSession } from './failure.js';

/** The taint the bench puts on every node; no simulated pod tolerates it. */
export const BENCH_TAINT = { key: 'bench.nlc.dev/evict', value: 'now', effect: 'NoExecute' } as const;

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Settings of scenario 3. */
export interface EvictionOptions {
  nodes: number;
  podsPerNode: number;
  zones: number;
  podMix: PodMix;
  baselineMs: number;
  warmupMs: number;
  flags: SharedControllerFlags;
  /** extra flags for ours (the `--feature-gates=PodDisruptionConditions=false` variant) */
  oursArgs?: readonly string[];
}

/** What a controller's `rest_client_rate_limiter_duration_seconds` says about a window of writes. */
export interface ThrottleFigures {
  /** writes that passed the client-side throttle in the window (POST, PUT, PATCH, DELETE) */
  writes: number;
  /** those per second of the window: at most burst / window + `--kube-api-qps` */
  admittedPerSecond: number;
  /** mean wait for a token (and an in-flight slot), seconds */
  meanWaitS: number;
}

/**
 * Sums the `_sum` and `_count` of `name` over every series whose `verb` label is a write, in a
 * Prometheus text. Pure. @returns zeros when there is none.
 */
export function writeHistogramTotals(text: string, name: string): { sum: number; count: number } {
  const out = { sum: 0, count: 0 };
  const re = new RegExp(`^${name}_(sum|count)\\{([^}]*)\\} ([0-9.eE+-]+)$`, 'gm');
  for (const m of text.matchAll(re)) {
    const verb = /(?:^|,)verb="([A-Z]+)"/.exec(m[2] ?? '')?.[1];
    if (!verb || !['POST', 'PUT', 'PATCH', 'DELETE'].includes(verb)) continue;
    if (m[1] === 'sum') out.sum += Number(m[3]);
    else out.count += Number(m[3]);
  }
  return out;
}

/** The throttle figures between two scrapes `windowS` seconds apart. Pure. */
export function throttleFigures(before: string, after: string, windowS: number): ThrottleFigures {
  const name = 'rest_client_rate_limiter_duration_seconds';
  const a = writeHistogramTotals(before, name);
  const b = writeHistogramTotals(after, name);
  const writes = b.count - a.count;
  return {
    writes,
    admittedPerSecond: round1(writes / Math.max(0.001, windowS)),
    meanWaitS: writes > 0 ? Math.round(((b.sum - a.sum) / writes) * 1000) / 1000 : 0,
  };
}

/** One controller's mass-eviction run. */
export interface EvictionRun {
  controller: ControllerKind;
  /** ours' extra flags in this run, if any */
  oursArgs?: readonly string[];
  nodes: number;
  pods: number;
  evicted: number;
  /** first taint write → last pod terminating, seconds */
  durationS?: number;
  /** evicted pods / durationS */
  deletionsPerSecond?: number;
  /** first taint write → first pod terminating, seconds */
  firstDeletionS?: number;
  /** (evicted − 1) / (last − first deletion): the sustained rate, without the reaction time */
  sustainedPerSecond?: number;
  /** deletions per whole second after the first taint write */
  perSecond: number[];
  /** controller requests by verb from the first taint write until done + 3 s (baseline and the bench's own writes removed) */
  requests: Record<string, number>;
  requestsDetail: Record<string, number>;
  timedOut: boolean;
  /** ours only: its own `rest_client_rate_limiter_duration_seconds` over the run (see {@link throttleFigures}) */
  throttle?: ThrottleFigures;
  /** how busy the machine was while measuring, and how much of it was other people's work */
  interference: Interference;
  sim: SimHealth;
}

/**
 * Adds {@link BENCH_TAINT} to a node (or removes it, with `on` false) with a resourceVersion-guarded
 * merge patch of its whole taint list, retried on conflict. @returns how many GET and PATCH requests it took.
 * @throws {Error} for any error but a conflict.
 */
async function setBenchTaint(env: RunEnv, name: string, on = true): Promise<{ gets: number; patches: number }> {
  return await editNodeTaints(env, name, (taints) => {
    const others = taints.filter((t) => t.key !== BENCH_TAINT.key);
    return on ? [...others, { ...BENCH_TAINT, timeAdded: new Date() }] : others;
  });
}

/**
 * Replaces node `name`'s taints with `edit(current)`, read-modify-write under the read's
 * resourceVersion, again on a conflict. An unchanged list (same length) is not written.
 * @returns the GETs and PATCHes it took.
 * @throws {Error} for any API error but a conflict.
 */
export async function editNodeTaints(env: RunEnv, name: string, edit: (taints: V1Taint[]) => V1Taint[]): Promise<{ gets: number; patches: number }> {
  let gets = 0;
  let patches = 0;
  for (;;) {
    const node = await env.clients.core.readNode({ name });
    gets++;
    const before = node.spec?.taints ?? [];
    const taints = edit(before);
    if (taints.length === before.length && taints.every((t, i) => t === before[i])) return { gets, patches };
    try {
      patches++;
      await env.clients.core.patchNode({ name, body: { metadata: { resourceVersion: node.metadata?.resourceVersion }, spec: { taints } } }, MERGE_PATCH);
      return { gets, patches };
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}

/**
 * Removes {@link BENCH_TAINT} from `names` (after {@link measureMassEviction} on a fleet that goes on).
 * @throws {Error} for any API error but a conflict.
 */
export async function untaintNodes(env: RunEnv, names: readonly string[]): Promise<void> {
  await Promise.all(names.map((n) => setBenchTaint(env, n, false)));
}

/**
 * Runs scenario 3 for one controller on a fresh control plane and fleet.
 * @throws {Error} when the control plane, the fleet or the controller fails to start, or tainting fails.
 */
export async function runEviction(ctx: BenchContext, kind: ControllerKind, o: EvictionOptions, tag: string): Promise<EvictionRun> {
  const spec: SessionSpec = {
    tag,
    shape: { nodes: o.nodes, zones: o.zones, podsPerNode: o.podsPerNode, podMix: o.podMix, statsWindowMs: 10 * 60_000 },
    flags: o.flags,
    ...(o.oursArgs ? { oursArgs: o.oursArgs } : {}),
    observe: true,
    baselineMs: o.baselineMs,
    warmupMs: o.warmupMs,
  };
  return await runSession(ctx, kind, spec, async (s) => {
    if (!s.observer || !s.baseline) throw new Error('mass eviction needs the observer and a baseline');
    return await measureMassEviction(ctx, { ...s, observer: s.observer, baseline: s.baseline }, kind, o, s.fleet.nodeNames());
  });
}

/**
 * Puts {@link BENCH_TAINT} on `names` at once and times until every pod on them is terminating
 * (the tracker is reset first, so it times this eviction alone). The taint stays: the caller
 * removes it ({@link untaintNodes}) or tears the fleet down.
 * @returns the eviction's figures.
 * @throws {Error} when tainting fails or the API server's /metrics cannot be scraped.
 */
export async function measureMassEviction(
  ctx: BenchContext,
  s: WaveSession,
  kind: ControllerKind,
  o: Pick<EvictionOptions, 'flags' | 'oursArgs'>,
  names: readonly string[],
): Promise<EvictionRun> {
  const { env, fleet, observer, baseline, c } = s;
  const tracker = observer.tracker;
  tracker.reset();
  const pods = tracker.trackPodsOn(new Set(names));
  const k0 = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  const errorsBefore = fleet.stats().errors;
  const confirmedBefore = fleet.stats().podDeletionsConfirmed;
  const endInterference = startInterference([env.cp.apiserverPid, env.cp.etcdPid, c.proc.pid]);
  const scrapeOurs = async (): Promise<string | undefined> =>
    kind === 'ours' ? await fetch(`http://127.0.0.1:${c.metricsPort}/metrics`).then((r) => r.text()).catch(() => undefined) : undefined;
  const m0 = await scrapeOurs();
  const t0 = Date.now();
  const own = await Promise.all(names.map((n) => setBenchTaint(env, n)));
  ctx.log(`  tainted ${names.length} nodes in ${Date.now() - t0} ms; ${pods} pods to evict`);
  const timeoutMs = 120_000 + (pods * 4000) / o.flags.kubeApiQps;
  const done = await waitUntil(tracker, () => tracker.podsGone(), timeoutMs);
  const m1 = await scrapeOurs();
  const throttleWindowS = (Date.now() - t0) / 1000;
  const interference = endInterference();
  await sleep(3000);
  const k1 = await scrapeRequestTotals(env.cp.apiserverUrl, env.cp.token);
  const stats = fleet.stats();
  const sim = simHealth(stats, errorsBefore, ctx.maxSimLagMs);
  // Exact requests that were not the controller's: the bench's taint writes and the simulated kubelets' confirmations.
  const known: RequestCounts = new Map([
    ['GET nodes', own.reduce((a, x) => a + x.gets, 0)],
    ['PATCH nodes', own.reduce((a, x) => a + x.patches, 0)],
    ['DELETE pods', stats.podDeletionsConfirmed - confirmedBefore],
  ]);
  const requests = subtractKnown(
    withoutSimulatorOnly(subtractBaseline(diffCounts(k1, k0), Date.now() - t0, baseline.counts, baseline.ms)),
    known,
  );
  const gone = tracker.podGoneTimes().filter((g): g is number => g !== undefined);
  const perSecond: number[] = [];
  for (const g of gone) {
    const s = Math.max(0, Math.floor((g - t0) / 1000));
    while (perSecond.length <= s) perSecond.push(0);
    perSecond[s] = (perSecond[s] ?? 0) + 1;
  }
  const run: EvictionRun = {
    controller: kind,
    ...(kind === 'ours' && o.oursArgs ? { oursArgs: o.oursArgs } : {}),
    nodes: names.length,
    pods,
    evicted: gone.length,
    perSecond,
    requests: byVerb(requests),
    requestsDetail: countsToObject(requests),
    timedOut: !done,
    ...(m0 !== undefined && m1 !== undefined ? { throttle: throttleFigures(m0, m1, throttleWindowS) } : {}),
    interference,
    sim,
  };
  if (gone.length > 0) {
    const first = Math.min(...gone);
    const last = Math.max(...gone);
    run.firstDeletionS = Math.round(first - t0) / 1000;
    if (done) {
      run.durationS = Math.round(last - t0) / 1000;
      run.deletionsPerSecond = round1(gone.length / Math.max(0.001, (last - t0) / 1000));
      if (gone.length > 1 && last > first) run.sustainedPerSecond = round1((gone.length - 1) / ((last - first) / 1000));
    }
  }
  ctx.log(
    `  ${kind}: ${run.evicted}/${pods} evicted in ${run.durationS ?? 'timeout'} s = ${run.deletionsPerSecond ?? '-'} /s ` +
      `(sustained ${run.sustainedPerSecond ?? '-'} /s, first after ${run.firstDeletionS ?? '-'} s); requests ${JSON.stringify(run.requests)}; ` +
      `${run.throttle ? `throttle: ${run.throttle.writes} writes admitted, ${run.throttle.admittedPerSecond}/s, mean wait ${run.throttle.meanWaitS} s; ` : ''}` +
      `sim lag p99 ${sim.leaseLagP99Ms} ms${sim.flagged ? ' FLAGGED' : ''}`,
  );
  return run;
}
