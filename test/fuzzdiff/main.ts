/**
 * `npm run fuzz:diff`: differential runs of kube-controller-manager 1.37.2 against ours (a `--dry-run`
 * shadow) on a private control plane.
 *
 *   npm run fuzz:diff -- [--seed N] [--count N] [--size small|normal] [--outage] [--out DIR] [--budget-minutes M]
 *   npm run fuzz:diff -- --replay FILE [--replay FILE …]
 *   npm run fuzz:diff -- --recompare REPORT.json [--recompare REPORT.json …] [--out DIR]
 *
 * `--recompare` runs nothing: it compares the decisions kept in earlier reports again (after a change
 * of the comparison's rules) and writes one report over all of them.
 *
 * Each generated scenario is saved as `<out>/scenarios/<seed>-<i>.json` before it runs, so every
 * violation names a file that `--replay` plays again. Writes `<out>/report.json` and `<out>/report.md`
 * after each scenario (a campaign cut short still leaves its table). Exits 1 on any violation, 2 on a
 * broken environment. Run it under `nice -n 10`: it is CPU-heavy on a small machine.
 *
 * Not upstream: test tooling.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PrivateControlPlane } from '../support/private-cluster.js';
import { compareDecisions, type CompareContext } from './compare.js';
import type { Decision } from './recorder.js';
import { buildCampaignReport, renderMarkdown, type ScenarioSummaryInput } from './report.js';
import { oursScheduled, runScenario, type RunEnv } from './runner.js';
import { generateScenarios, parseScenario, type Scenario, type ScenarioSize } from './scenario.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

function kubeControllerManagerBinary(): string {
  const script = join(ROOT, 'scripts/control-plane.sh');
  execFileSync('bash', [script, 'install', '--with-kcm'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 1_200_000 });
  return execFileSync('bash', [script, 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
}

/** The part of report.json `--recompare` reads. */
interface StoredScenario {
  id: string;
  prefix?: string;
  file: string;
  wallMs: number;
  notes: string[];
  ctx: CompareContext;
  kcm: Decision[];
  ours: Decision[];
  applied?: { atS: number; op: string; atMs: number }[];
}

async function recompare(files: readonly string[], out: string): Promise<number> {
  const results: ScenarioSummaryInput[] = [];
  for (const f of files) {
    const doc = JSON.parse(readFileSync(f, 'utf8')) as { scenarios: StoredScenario[] };
    for (const x of doc.scenarios) {
      // JSON has no Infinity: a restart window still open at the end was written as null.
      const open = <W extends { toMs: number | null }>(ws: readonly W[] | undefined): (W & { toMs: number })[] => (ws ?? []).map((w) => ({ ...w, toMs: w.toMs ?? Number.POSITIVE_INFINITY }));
      // Reports written before the runner recorded the zones: the fleet names nodes `<prefix>-<zone>-<i>`.
      const nodes = [...x.kcm, ...x.ours].filter((d) => x.prefix !== undefined && !d.object.includes('/') && d.object.startsWith(`${x.prefix}-`)).map((d) => d.object);
      const nodeZones = x.ctx.nodeZones ?? Object.fromEntries(nodes.map((n) => [n, n.slice((x.prefix ?? '').length + 1).replace(/-\d+$/, '')]));
      // Reports written before the runner recorded `servingMs`: kube-controller-manager's first write the
      // recorder saw after the stop proves the API server answered by then (the recorder's time is an
      // upper bound of the write's), so it bounds the return from above: the rules that start at the
      // return only get stricter than with the true time.
      const serving = <W extends { fromMs: number; toMs: number; servingMs?: number }>(w: W): W => {
        if (w.servingMs !== undefined) return w;
        const first = x.kcm.filter((k) => k.atMs > w.fromMs && k.atMs < w.toMs).reduce<number | undefined>((m, k) => (m === undefined || k.atMs < m ? k.atMs : m), undefined);
        return first === undefined ? w : { ...w, servingMs: first };
      };
      const ctx = {
        ...x.ctx,
        controllerRestarts: open(x.ctx.controllerRestarts),
        apiserverRestarts: open(x.ctx.apiserverRestarts).map(serving),
        outOfService: open(x.ctx.outOfService),
        // Reports written before the runner told a NotReady report from a silent kubelet: by the step that began the fault.
        ...(x.ctx.nodeFaults ? { nodeFaults: open(x.ctx.nodeFaults).map((w) => ({ ...w, silent: w.silent ?? x.applied?.find((a) => a.atMs === w.fromMs)?.op !== 'not-ready' })) } : {}),
        // Reports written before the runner read ours' deletion schedule: from the shadow's log beside the report.
        ...(x.ctx.oursScheduled === undefined && x.prefix !== undefined ? await oursScheduled(join(dirname(f), 'logs', `${x.prefix}.log`)) : {}),
        nodeZones,
      };
      const scenario = parseScenario(readFileSync(x.file, 'utf8'));
      results.push({ scenario, file: x.file, wallMs: x.wallMs, kcm: x.kcm, ours: x.ours, rows: compareDecisions(x.kcm, x.ours, ctx), notes: x.notes });
    }
  }
  const report = buildCampaignReport(results);
  const md = renderMarkdown(report);
  writeFileSync(join(out, 'report.md'), md);
  writeFileSync(join(out, 'report.json'), `${JSON.stringify({ report, scenarios: results.map((r) => ({ id: r.scenario.id, file: r.file, rows: r.rows })) }, null, 2)}\n`);
  process.stdout.write(`${md}\nreport: ${join(out, 'report.md')} and report.json\n`);
  return report.violations.length > 0 ? 1 : 0;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '1' },
      count: { type: 'string', default: '3' },
      size: { type: 'string', default: 'normal' },
      out: { type: 'string' },
      replay: { type: 'string', multiple: true },
      recompare: { type: 'string', multiple: true },
      'budget-minutes': { type: 'string' },
      // Every scenario restarts the API server once (a campaign about what follows an outage).
      outage: { type: 'boolean', default: false },
    },
  });
  if ((process.env['NLC_K8S_VERSION'] ?? '1.37') !== '1.37') {
    process.stderr.write('fuzz:diff compares with kube-controller-manager 1.37.2 and runs on the 1.37 lane only\n');
    return 2;
  }
  const size = values.size as ScenarioSize;
  if (size !== 'small' && size !== 'normal') throw new Error(`--size must be small or normal, got ${String(values.size)}`);
  const seed = Number(values.seed);
  const out = resolve(values.out ?? join('/tmp', `fuzzdiff-${Date.now().toString(36)}`));
  mkdirSync(join(out, 'scenarios'), { recursive: true });
  mkdirSync(join(out, 'logs'), { recursive: true });
  if (values.recompare?.length) return await recompare(values.recompare, out);
  const todo: { scenario: Scenario; file: string }[] = [];
  if (values.replay?.length) {
    for (const f of values.replay) todo.push({ scenario: parseScenario(readFileSync(f, 'utf8')), file: resolve(f) });
  } else {
    for (const s of generateScenarios(seed, Number(values.count), size, values.outage)) {
      const file = join(out, 'scenarios', `${s.id.replace('/', '-')}.json`);
      writeFileSync(file, `${JSON.stringify(s, null, 2)}\n`);
      todo.push({ scenario: s, file });
    }
  }
  const budgetMs = values['budget-minutes'] ? Number(values['budget-minutes']) * 60_000 : Number.POSITIVE_INFINITY;
  const startedMs = Date.now();
  const cp = await PrivateControlPlane.create();
  const results: (ScenarioSummaryInput & { prefix: string; failedPolls: number; t0Ms: number; applied: unknown[]; ctx: unknown; cacheLag: unknown[] })[] = [];
  // Stopped early (Ctrl-C, a CI timeout): take the private control plane down, keep the reports written so far.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      process.stderr.write(`fuzz:diff: ${sig}, taking the control plane down\n`);
      void cp.run('down').finally(() => process.exit(130));
    });
  }
  try {
    await cp.run('up');
    const env: RunEnv = { cp, clients: await cp.clients(), kcmBinary: kubeControllerManagerBinary(), logDir: join(out, 'logs'), root: ROOT };
    for (const { scenario, file } of todo) {
      // About 80 s a scenario at normal size (up to 3 min more after an outage): do not start one the budget cannot hold.
      if (Date.now() - startedMs + (scenario.durationS + 30) * 1000 > budgetMs) break;
      const r = await runScenario(env, scenario, file);
      results.push({ ...r, scenario });
      const report = buildCampaignReport(results);
      const bad = r.rows.filter((x) => x.violation).length;
      process.stdout.write(`${scenario.id} (${basename(file)}): ${r.rows.length} rows, ${bad} violation(s), ${(r.wallMs / 1000).toFixed(0)} s\n`);
      writeFileSync(join(out, 'report.json'), `${JSON.stringify({ report, scenarios: results.map((x) => ({ id: x.scenario.id, file: x.file, prefix: x.prefix, t0Ms: x.t0Ms, applied: x.applied, wallMs: x.wallMs, failedPolls: x.failedPolls, cacheLag: x.cacheLag, notes: x.notes, ctx: x.ctx, kcm: x.kcm, ours: x.ours, rows: x.rows })) }, null, 2)}\n`);
      writeFileSync(join(out, 'report.md'), renderMarkdown(report));
    }
  } finally {
    await cp.run('down').catch(() => undefined);
    await cp.remove();
  }
  const report = buildCampaignReport(results);
  process.stdout.write(`\n${renderMarkdown(report)}\nreport: ${join(out, 'report.md')} and report.json\n`);
  return report.violations.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fuzz:diff: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
