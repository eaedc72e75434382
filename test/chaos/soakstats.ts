/**
 * The soak's arithmetic, pure so it can be unit-tested (test/unit/chaos-soak.test.ts): least-squares
 * slopes, the growth verdicts on the counted resources, the per-fault table and the Markdown report.
 * The runner is test/chaos/soak.ts.
 */
import { linearFit } from '../../bench/lib/fit.js';
import { median } from '../../bench/lib/report.js';

/** One sample of the controller process. `atMs` is ms since the soak started; memory MiB. */
export interface SoakSample {
  atMs: number;
  /** Which controller process (0 the first; a new one after each exit, as a Deployment restarts it). */
  process: number;
  rssMiB: number | undefined;
  heapUsedMiB: number | undefined;
  /**
   * V8 heap committed (`nodejs_heap_size_total_bytes`) and memory outside it (`nodejs_external_memory_bytes`:
   * Buffers, ArrayBuffers), MiB: what RSS holds beyond the heap used. Absent in reports before 2026-11-28.
   */
  heapTotalMiB?: number | undefined;
  externalMiB?: number | undefined;
  /** `nodejs_active_handles{type}` (libuv handles: sockets, servers, pipes). */
  handles: Record<string, number>;
  /** `nodejs_active_resources{type}` (handles and requests, timers included as `Timeout`). */
  resources: Record<string, number>;
  /** Per-node and per-pod state the controllers hold, by name (counted from `/debug/state`). */
  state: Record<string, number>;
  /** The fleet's Lease renewal lag, p99 ms over the simulator's stats window (the kubelets' own health). */
  simLeaseLagP99Ms: number | undefined;
}

/** What one fault did. Times ms since the soak started; rates requests/s. */
export interface FaultRecord {
  name: string;
  startMs: number;
  endMs: number;
  /** From the fault's end until every informer was watching again; undefined when it never was (within 2 min). */
  regainSightMs: number | undefined;
  rate: { steady: number; during: number; after: number };
  rssMiBAfter: number | undefined;
  /** Live nodes first judged (not Ready or NoExecute-tainted) between the fault's start and 1 min after its end. */
  wrongful: string[];
  /** Why switching the fault on failed, when it did (the fault then was at most partly there). */
  startError?: string;
}

/** What one failure wave did. Times ms since the soak started. */
export interface WaveRecord {
  killedAtMs: number;
  nodes: string[];
  pods: number;
  /** Dead nodes or pods not acted on within the wave's limit: lost actions. */
  lost: string[];
  /** From the kill until every dead node was Unknown and tainted and every pod deleted. */
  doneAfterMs: number | undefined;
  /** Faults whose time overlapped the wave's. */
  faults: string[];
}

/**
 * Least-squares slope of `y` over `x` (units of y per unit of x), or NaN with fewer than two
 * distinct x. Pure (bench/lib/fit.ts `linearFit`).
 */
export function slope(points: readonly { x: number; y: number }[]): number {
  return linearFit(points).slope;
}

/**
 * The samples the verdicts judge: those of the process with the most samples after its own first
 * `warmupMs` (a restarted process warms up again), without its warm-up. Pure.
 */
export function judgedSegment(samples: readonly SoakSample[], warmupMs: number): SoakSample[] {
  const byProcess = new Map<number, SoakSample[]>();
  for (const s of samples) byProcess.set(s.process, [...(byProcess.get(s.process) ?? []), s]);
  let best: SoakSample[] = [];
  for (const seg of byProcess.values()) {
    const from = (seg[0]?.atMs ?? 0) + warmupMs;
    const kept = seg.filter((s) => s.atMs >= from);
    if (kept.length > best.length) best = kept;
  }
  return best;
}

/** Slope of a sampled figure after `fromMs`, per hour. Samples without the figure are left out. */
export function slopePerHour(samples: readonly SoakSample[], fromMs: number, pick: (s: SoakSample) => number | undefined): number {
  const pts = samples.filter((s) => s.atMs >= fromMs).flatMap((s) => {
    const y = pick(s);
    return y === undefined || !Number.isFinite(y) ? [] : [{ x: s.atMs / 3_600_000, y }];
  });
  return slope(pts);
}

/** A counted resource's verdict: the median of its first and last quarter after the warm-up. */
export interface GrowthVerdict {
  name: string;
  early: number;
  late: number;
  max: number;
  perHour: number;
  /** Late median above early median by more than the allowance. */
  grew: boolean;
}

/**
 * Compares the median of the first quarter (after `fromMs`) with that of the last quarter, for a
 * counted figure: it grew when the late median exceeds the early one by more than `allowance`
 * (absolute). A count that only breathes with the waves (queues, sockets of a retry) has equal
 * medians; a leak climbs from quarter to quarter. Pure.
 */
export function growth(samples: readonly SoakSample[], fromMs: number, name: string, pick: (s: SoakSample) => number | undefined, allowance: number): GrowthVerdict {
  const vals = samples.filter((s) => s.atMs >= fromMs).flatMap((s) => {
    const v = pick(s);
    return v === undefined ? [] : [{ at: s.atMs, v }];
  });
  const q = Math.max(1, Math.floor(vals.length / 4));
  const early = median(vals.slice(0, q).map((p) => p.v)) ?? 0;
  const late = median(vals.slice(-q).map((p) => p.v)) ?? 0;
  const max = Math.max(0, ...vals.map((p) => p.v));
  const perHour = slope(vals.map((p) => ({ x: p.at / 3_600_000, y: p.v })));
  return { name, early, late, max, perHour: Number.isFinite(perHour) ? perHour : 0, grew: late - early > allowance };
}

/** The names of every counted figure over the samples (handles, resources, state), prefixed by their source. */
export function countedNames(samples: readonly SoakSample[]): string[] {
  const names = new Set<string>();
  for (const s of samples) {
    for (const k of Object.keys(s.handles)) names.add(`handles:${k}`);
    for (const k of Object.keys(s.resources)) names.add(`resources:${k}`);
    for (const k of Object.keys(s.state)) names.add(`state:${k}`);
  }
  return [...names].sort();
}

/** The value of a counted figure named as {@link countedNames} names it. */
export function counted(s: SoakSample, name: string): number | undefined {
  const i = name.indexOf(':');
  const src = name.slice(0, i);
  const key = name.slice(i + 1);
  const rec = src === 'handles' ? s.handles : src === 'resources' ? s.resources : s.state;
  return rec[key] ?? 0;
}

/** One row of the per-fault table: every occurrence of a fault, summed up. */
export interface FaultRow {
  name: string;
  count: number;
  totalS: number;
  regainSightP50Ms: number | undefined;
  regainSightMaxMs: number | undefined;
  neverRegained: number;
  /** Requests/s during and after the fault, as multiples of steady state (medians over occurrences). */
  duringX: number | undefined;
  afterX: number | undefined;
  afterMaxX: number | undefined;
  wrongful: number;
  /** Occurrences whose switching on failed. */
  failedToStart: number;
}

/** Groups fault records by name. Pure. */
export function faultTable(records: readonly FaultRecord[]): FaultRow[] {
  const byName = new Map<string, FaultRecord[]>();
  for (const r of records) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  const ratio = (a: number, b: number): number | undefined => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : undefined);
  return [...byName].map(([name, rs]) => {
    const regain = rs.flatMap((r) => (r.regainSightMs === undefined ? [] : [r.regainSightMs]));
    const after = rs.flatMap((r) => {
      const x = ratio(r.rate.after, r.rate.steady);
      return x === undefined ? [] : [x];
    });
    const during = rs.flatMap((r) => {
      const x = ratio(r.rate.during, r.rate.steady);
      return x === undefined ? [] : [x];
    });
    return {
      name,
      count: rs.length,
      totalS: Math.round(rs.reduce((s, r) => s + (r.endMs - r.startMs), 0) / 1000),
      regainSightP50Ms: median(regain),
      regainSightMaxMs: regain.length ? Math.max(...regain) : undefined,
      neverRegained: rs.length - regain.length,
      duringX: median(during),
      afterX: median(after),
      afterMaxX: after.length ? Math.max(...after) : undefined,
      wrongful: rs.reduce((s, r) => s + r.wrongful.length, 0),
      failedToStart: rs.filter((r) => r.startError !== undefined).length,
    };
  });
}

const f1 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '-' : String(Math.round(v * 10) / 10));

/** The per-fault table as Markdown. */
export function faultTableMarkdown(rows: readonly FaultRow[]): string {
  return [
    '| fault | times (failed to start) | total s | regain sight p50 / max ms | never regained | req/s during × steady | after × steady (median / max) | wrongful |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.count} (${r.failedToStart}) | ${r.totalS} | ${f1(r.regainSightP50Ms)} / ${f1(r.regainSightMaxMs)} | ${r.neverRegained} | ${f1(r.duringX)} | ${f1(r.afterX)} / ${f1(r.afterMaxX)} | ${r.wrongful} |`),
  ].join('\n');
}

/** The waves as Markdown. */
export function waveTableMarkdown(waves: readonly WaveRecord[]): string {
  return [
    '| wave at min | nodes | pods | done after s | lost | faults during it |',
    '|---|---|---|---|---|---|',
    ...waves.map((w) => `| ${f1(w.killedAtMs / 60_000)} | ${w.nodes.length} | ${w.pods} | ${w.doneAfterMs === undefined ? 'not done' : f1(w.doneAfterMs / 1000)} | ${w.lost.length} | ${w.faults.join(', ') || '-'} |`),
  ].join('\n');
}

/** The growth verdicts as Markdown. */
export function growthMarkdown(verdicts: readonly GrowthVerdict[]): string {
  return [
    '| counted | early median | late median | max | slope /h | grew |',
    '|---|---|---|---|---|---|',
    ...verdicts.map((v) => `| ${v.name} | ${f1(v.early)} | ${f1(v.late)} | ${f1(v.max)} | ${f1(v.perHour)} | ${v.grew ? 'YES' : 'no'} |`),
  ].join('\n');
}
