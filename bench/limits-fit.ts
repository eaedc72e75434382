/**
 * Issue 29's fallback when the machine cannot host 5,000 × 30: extrapolates each goal of the
 * limits scenario from runs at smaller sizes (at least three, the issue asks) to the target size,
 * with the fit shown. Each size's figure is the median of its usable runs; the line is a
 * least-squares fit against the fleet's pod count (`bench/lib/fit.ts`); the verdict compares the
 * extrapolated figures (ratio goals) or ours' extrapolated figure with its limit.
 *
 *   node --import tsx bench/limits-fit.ts --in A/latest.json,B/latest.json,C/latest.json [--target 5000x30] [--out DIR]
 *
 * Writes `limits-fit.md` and `limits-fit.png` into `--out` (default: print the Markdown only).
 * Exit 0, 1 when an input has no limits run, 2 for bad flags.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderTimeChart, OURS_COLOR, UPSTREAM_COLOR, type TimePanel } from './lib/chart.js';
import { linearFit, type LinearFit } from './lib/fit.js';
import { benchParser } from './lib/options.js';
import { cell, graceOf, limitsGoalName, limitsGoals, limitsMedian, qpsOf, upstreamVersionOf, type BenchResults } from './lib/report.js';
import type { LimitsResults } from './scenarios/limits.js';

/** One limits run's size and its results, as read from a bench results file. */
export interface SizedLimits {
  file: string;
  pods: number;
  limits: LimitsResults;
}

/** One goal's fit for one controller: the measured medians by size and the line through them. */
export interface GoalFit {
  points: { x: number; y: number }[];
  fit: LinearFit;
  /** the line at the target size */
  atTarget: number | undefined;
}

/** One goal, both controllers, and the verdict at the target size. */
export interface GoalExtrapolation {
  target: string;
  unit: string;
  ours: GoalFit;
  upstream?: GoalFit;
  /** ours ÷ upstream at the target (ratio goals) or ours (limit goals); undefined when either line is missing */
  value: number | undefined;
  limit: number;
  met: boolean | undefined;
}

/** Fits a figure over sizes. Pure. @returns the line at `targetPods` when at least two sizes have the figure. */
export function fitGoal(points: { x: number; y: number }[], targetPods: number): GoalFit {
  const fit = linearFit(points);
  const atTarget = Number.isFinite(fit.slope) ? fit.intercept + fit.slope * targetPods : undefined;
  return { points, fit, atTarget };
}

/**
 * Extrapolates every goal of {@link limitsGoals} to `targetPods`. Pure.
 * @param runs the sizes (any order); the first names the QPS of the waves and the grace period.
 */
export function extrapolate(runs: readonly SizedLimits[], targetPods: number, graceS: number, qps: string): GoalExtrapolation[] {
  const fastQps = runs[0]?.limits.fastQps ?? '?';
  return limitsGoals(qps, fastQps).map((g) => {
    const pointsOf = (kind: 'ours' | 'upstream'): { x: number; y: number }[] =>
      runs
        .map((r) => ({ x: r.pods, y: limitsMedian(r.limits[kind], g.pick) }))
        .filter((p): p is { x: number; y: number } => p.y !== undefined)
        .sort((a, b) => a.x - b.x);
    const ours = fitGoal(pointsOf('ours'), targetPods);
    if (g.limit) {
      const limit = g.limit(graceS);
      return { target: limitsGoalName(g), unit: g.unit, ours, value: ours.atTarget, limit, met: ours.atTarget === undefined ? undefined : ours.atTarget <= limit };
    }
    const upstream = fitGoal(pointsOf('upstream'), targetPods);
    const value = ours.atTarget !== undefined && upstream.atTarget !== undefined && upstream.atTarget > 0 ? ours.atTarget / upstream.atTarget : undefined;
    return { target: limitsGoalName(g), unit: g.unit, ours, upstream, value, limit: 1, met: value === undefined ? undefined : value <= 1 };
  });
}

/** A fit as `y = a + b·pods (R² r)`. Pure. */
function describeFit(f: GoalFit, unit: string): string {
  if (!Number.isFinite(f.fit.slope)) return `— (${f.points.length} size${f.points.length === 1 ? '' : 's'})`;
  const perMillion = f.fit.slope * 1_000_000;
  return `${cell(f.fit.intercept, 3)} + ${cell(perMillion, 3)} per 10⁶ pods (R² ${cell(f.fit.r2, 3)}) → **${cell(f.atTarget, 3)} ${unit}**`;
}

/** The Markdown of an extrapolation. Pure. */
export function renderFit(runs: readonly SizedLimits[], target: { nodes: number; podsPerNode: number }, rows: readonly GoalExtrapolation[], peer: string): string {
  const sizes = [...runs].sort((a, b) => a.pods - b.pods);
  const measured = (f: GoalFit | undefined): string => (f ? f.points.map((p) => `${cell(p.y, 3)} @ ${p.x.toLocaleString('en-US')}`).join('; ') || '—' : '—');
  const lines = [
    `# Limits scenario extrapolated to ${target.nodes.toLocaleString('en-US')} × ${target.podsPerNode} (${(target.nodes * target.podsPerNode).toLocaleString('en-US')} pods)`,
    '',
    `From ${sizes.length} size${sizes.length === 1 ? '' : 's'}: ${sizes.map((s) => `${s.limits.nodes} × ${s.limits.podsPerNode} (${s.file})`).join(', ')}; peer kube-controller-manager ${peer.replace(/^v/, '')}.`,
    `Each point is the median of a size's usable runs; each line a least-squares fit against the pod count.${sizes.length < 3 ? ' **Fewer than the three sizes issue 29 asks for: the lines are not a finding.**' : ''}`,
    '',
    '| goal | ours: measured @ pods | ours: fit → at target | upstream: measured @ pods | upstream: fit → at target | at target | met |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const at = r.value === undefined ? '—' : r.upstream ? `${cell(r.value, 3)}×` : `${cell(r.value, 3)} ${r.unit} (limit ${cell(r.limit, 3)})`;
    lines.push(
      `| ${r.target} | ${measured(r.ours)} | ${describeFit(r.ours, r.unit)} | ${measured(r.upstream)} | ${r.upstream ? describeFit(r.upstream, r.unit) : '—'} | ${at} | ${r.met === undefined ? '—' : r.met ? 'yes' : 'no'} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The chart: measured points joined, and each fit's line to the target, for the size-dependent goals. */
function renderChart(rows: readonly GoalExtrapolation[], targetPods: number): Buffer {
  const line = (f: GoalFit): { x: number; y: number }[] =>
    f.atTarget === undefined ? [] : [{ x: 0, y: f.fit.intercept }, { x: targetPods, y: f.atTarget }];
  const panels: TimePanel[] = rows
    .filter((r) => r.upstream !== undefined || r.target.includes('health pass'))
    .map((r) => ({
      title: `${r.target.replace('issue 29 limits: ', '')} (${r.unit})`,
      series: [
        ...(r.upstream ? [{ label: 'upstream measured', color: UPSTREAM_COLOR, points: r.upstream.points }, { label: 'upstream fit', color: [150, 190, 225] as const, points: line(r.upstream) }] : []),
        { label: 'ours measured', color: OURS_COLOR, points: r.ours.points },
        { label: 'ours fit', color: [245, 190, 140] as const, points: line(r.ours) },
      ],
      markers: [targetPods],
    }));
  return renderTimeChart('Limits scenario: figures by fleet size, fitted to the target', panels, 'pods in the fleet');
}

async function main(): Promise<number> {
  let argv;
  try {
    argv = await benchParser(process.argv.slice(2))
      .usage('Usage: bench/limits-fit.ts --in A.json,B.json,C.json [flags]\n\nExtrapolates the limits scenario from smaller sizes to the target.')
      .options({
        in: { type: 'string', demandOption: true, describe: 'bench results files (latest.json) with a limits run, comma-separated' },
        target: { type: 'string', default: '5000x30', describe: 'NODESxPODS_PER_NODE' },
        out: { type: 'string', describe: 'directory for limits-fit.md and limits-fit.png (default: print the Markdown)' },
      })
      .parseAsync();
    if (argv.help === true) return 0;
    if (!/^\d+x\d+$/.test(argv.target)) throw new Error(`--target: "${argv.target}" is not NODESxPODS_PER_NODE`);
  } catch (err) {
    process.stderr.write(`limits-fit: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const [nodes, podsPerNode] = argv.target.split('x').map(Number) as [number, number];
  const files = argv.in.split(',').filter((f) => f !== '');
  const results = files.map((file) => ({ file, res: JSON.parse(readFileSync(file, 'utf8')) as BenchResults }));
  const missing = results.filter((r) => !r.res.limits);
  if (missing.length > 0) {
    process.stderr.write(`limits-fit: no limits run in ${missing.map((m) => m.file).join(', ')}\n`);
    return 1;
  }
  const first = results[0]?.res as BenchResults;
  const runs: SizedLimits[] = results.map(({ file, res }) => {
    const l = res.limits as LimitsResults;
    return { file, pods: l.nodes * l.podsPerNode, limits: l };
  });
  const rows = extrapolate(runs, nodes * podsPerNode, graceOf(first), qpsOf(first));
  const md = renderFit(runs, { nodes, podsPerNode }, rows, upstreamVersionOf(first));
  if (argv.out === undefined) {
    process.stdout.write(md);
    return 0;
  }
  writeFileSync(join(argv.out, 'limits-fit.md'), md);
  writeFileSync(join(argv.out, 'limits-fit.png'), renderChart(rows, nodes * podsPerNode));
  process.stdout.write(`wrote ${join(argv.out, 'limits-fit.md')} and limits-fit.png\n`);
  return 0;
}

if (process.argv[1]?.endsWith('limits-fit.ts')) process.exitCode = await main();
