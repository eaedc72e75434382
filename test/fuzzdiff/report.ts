/**
 * The campaign report, pure: per-scenario comparison rows (test/fuzzdiff/compare.ts) summed into the
 * figures the safety page shows, as JSON and as a markdown table. Durations **ms** unless named `S`.
 *
 * Not upstream: test tooling.
 */
import type { CompareRow, Outcome } from './compare.js';
import type { Decision } from './recorder.js';
import { STEP_OPS, type Scenario } from './scenario.js';

/** What the report needs of one scenario's run. */
export interface ScenarioSummaryInput {
  scenario: Scenario;
  file?: string;
  wallMs: number;
  kcm: readonly Decision[];
  ours: readonly Decision[];
  rows: readonly CompareRow[];
  notes: readonly string[];
}

/** One violation, with the scenario file that replays it. */
export interface Violation {
  scenario: string;
  file?: string;
  row: CompareRow;
}

/** The campaign's figures. */
export interface CampaignReport {
  scenarios: number;
  wallMs: { total: number; mean: number; max: number };
  decisions: { kcm: number; ours: number };
  /** Rows by outcome. */
  outcomes: Record<Outcome, number>;
  /** Pairs compared (agree + ours later + ours earlier). */
  compared: number;
  /** `ours later` differences: quantiles and buckets, ms. */
  oursLater: { p50: number; p90: number; max: number; buckets: Record<string, number> };
  /** Rows explained by a documented deliberate difference, by its name. */
  documented: Record<string, number>;
  /** Steps played, by op (vocabulary coverage). */
  coverage: Record<string, number>;
  violations: Violation[];
  /** Steps that could not be applied, per scenario. */
  notes: { scenario: string; note: string }[];
}

const OUTCOMES: readonly Outcome[] = ['agree', 'ours later', 'ours earlier', 'ours only', 'KCM only', 'untaint', 'cut off'];
const BUCKETS: readonly [string, number][] = [
  ['≤5 s', 5_000],
  ['≤10 s', 10_000],
  ['≤30 s', 30_000],
  ['>30 s', Number.POSITIVE_INFINITY],
];

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** Sums scenario results into the campaign's figures. Never throws. */
export function buildCampaignReport(results: readonly ScenarioSummaryInput[]): CampaignReport {
  const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  const documented: Record<string, number> = {};
  const coverage: Record<string, number> = Object.fromEntries(STEP_OPS.map((o) => [o, 0]));
  const later: number[] = [];
  const violations: Violation[] = [];
  const notes: { scenario: string; note: string }[] = [];
  let kcm = 0;
  let ours = 0;
  for (const r of results) {
    kcm += r.kcm.length;
    ours += r.ours.length;
    for (const st of r.scenario.steps) coverage[st.op] = (coverage[st.op] ?? 0) + 1;
    for (const n of r.notes) notes.push({ scenario: r.scenario.id, note: n });
    for (const row of r.rows) {
      outcomes[row.outcome]++;
      if (row.outcome === 'ours later' && row.diffMs !== undefined) later.push(row.diffMs);
      if (row.difference) documented[row.difference] = (documented[row.difference] ?? 0) + 1;
      if (row.violation) violations.push({ scenario: r.scenario.id, ...(r.file !== undefined ? { file: r.file } : {}), row });
    }
  }
  later.sort((a, b) => a - b);
  const buckets: Record<string, number> = Object.fromEntries(BUCKETS.map(([k]) => [k, 0]));
  for (const d of later) {
    const b = BUCKETS.find(([, max]) => d <= max);
    if (b) buckets[b[0]] = (buckets[b[0]] ?? 0) + 1;
  }
  const walls = results.map((r) => r.wallMs);
  const total = walls.reduce((a, b) => a + b, 0);
  return {
    scenarios: results.length,
    wallMs: { total, mean: results.length ? Math.round(total / results.length) : 0, max: Math.max(0, ...walls) },
    decisions: { kcm, ours },
    outcomes,
    compared: outcomes.agree + outcomes['ours later'] + outcomes['ours earlier'],
    oursLater: { p50: quantile(later, 0.5), p90: quantile(later, 0.9), max: later.at(-1) ?? 0, buckets },
    documented,
    coverage,
    violations,
    notes,
  };
}

const s1 = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The report as markdown: the summary table, the documented differences and every violation. */
export function renderMarkdown(r: CampaignReport): string {
  const lines = [
    '| scenarios | decisions (KCM / ours) | pairs compared | agree | ours later | ours earlier (documented) | ours only (documented) | KCM only (documented) | cut off by the end | untaints | violations |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const documentedOf = (o: Outcome): number => o === 'ours earlier' || o === 'ours only' || o === 'KCM only' ? r.outcomes[o] - r.violations.filter((v) => v.row.outcome === o).length : 0;
  lines.push(
    `| ${r.scenarios} | ${r.decisions.kcm} / ${r.decisions.ours} | ${r.compared} | ${r.outcomes.agree} | ${r.outcomes['ours later']} | ${r.outcomes['ours earlier']} (${documentedOf('ours earlier')}) | ${r.outcomes['ours only']} (${documentedOf('ours only')}) | ${r.outcomes['KCM only']} (${documentedOf('KCM only')}) | ${r.outcomes['cut off']} | ${r.outcomes.untaint} | **${r.violations.length}** |`,
  );
  lines.push('', `Ours later: p50 ${s1(r.oursLater.p50)}, p90 ${s1(r.oursLater.p90)}, max ${s1(r.oursLater.max)} (${Object.entries(r.oursLater.buckets).map(([k, v]) => `${k}: ${v}`).join(', ')}).`);
  lines.push(`Scenario wall time: mean ${s1(r.wallMs.mean)}, max ${s1(r.wallMs.max)}, total ${s1(r.wallMs.total)}.`);
  lines.push(`Steps played: ${Object.entries(r.coverage).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  lines.push('', '| documented difference | rows |', '|---|---|');
  for (const [k, v] of Object.entries(r.documented).sort((a, b) => b[1] - a[1])) lines.push(`| ${k} | ${v} |`);
  if (r.violations.length > 0) {
    lines.push('', '| violation | scenario file | action | object | KCM at | ours at | ours − KCM |', '|---|---|---|---|---|---|---|');
    for (const v of r.violations) {
      const t = (ms: number | undefined): string => (ms === undefined ? '—' : new Date(ms).toISOString().slice(11, 23));
      lines.push(`| ${v.row.outcome} | ${v.file ?? v.scenario} | ${v.row.action} ${v.row.detail} | ${v.row.object} | ${t(v.row.kcmAtMs)} | ${t(v.row.oursAtMs)} | ${v.row.diffMs === undefined ? '—' : s1(v.row.diffMs)} |`);
    }
  }
  if (r.notes.length > 0) {
    lines.push('', 'Notes (steps not applied, the shadow cache lag, other remarks):');
    for (const n of r.notes.slice(0, 30)) lines.push(`- ${n.scenario}: ${n.note}`);
  }
  return `${lines.join('\n')}\n`;
}
