/**
 * `npm run fuzz:diff` in CI: three fixed seeds at small size (one scenario each, ~1 min apiece) on a
 * private 1.37 control plane, kube-controller-manager 1.37.2 acting and ours as a `--dry-run` shadow
 * beside it; every decision of ours must have a counterpart of kube-controller-manager's no more than
 * the tolerance earlier, and every decision of kube-controller-manager's must be ours too or a
 * documented delay or reduce (test/fuzzdiff/compare.ts). A violation fails the test with its scenario,
 * which `npm run fuzz:diff -- --replay FILE` plays again (the scenario is written to
 * `$NLC_TEST_LOG_DIR` or the temp dir).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrivateControlPlane } from '../support/private-cluster.js';
import { buildCampaignReport, renderMarkdown } from '../fuzzdiff/report.js';
import { runScenario, type ScenarioResult } from '../fuzzdiff/runner.js';
import { generateScenarios } from '../fuzzdiff/scenario.js';

const ROOT = join(import.meta.dirname, '..', '..');
const LANE = process.env['NLC_K8S_VERSION'] ?? '1.37';
/** The CI seeds: fixed, so a red run replays exactly. */
const SEEDS = [1, 2, 3];

let cp: PrivateControlPlane | undefined;
after(async () => {
  await cp?.run('down').catch(() => undefined);
  await cp?.remove();
});

test('fuzz:diff, three fixed seeds at small size: no violation against kube-controller-manager 1.37.2', { timeout: 900_000 }, async (t) => {
  if (LANE !== '1.37') {
    t.skip(`the differential runs compare with kube-controller-manager 1.37.2: 1.37 lane only (lane ${LANE})`);
    return;
  }
  const script = join(ROOT, 'scripts/control-plane.sh');
  execFileSync('bash', [script, 'install', '--with-kcm'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 1_200_000 });
  const kcmBinary = execFileSync('bash', [script, 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
  const logDir = process.env['NLC_TEST_LOG_DIR'] ?? mkdtempSync(join(tmpdir(), 'nlc-fuzzdiff-'));
  cp = await PrivateControlPlane.create();
  await cp.run('up');
  const env = { cp, clients: await cp.clients(), kcmBinary, logDir, root: ROOT };
  const results: ScenarioResult[] = [];
  const scenarios = SEEDS.map((seed) => generateScenarios(seed, 1, 'small')[0]).filter((s) => s !== undefined);
  for (const s of scenarios) {
    const file = join(logDir, `fuzzdiff-${s.id.replace('/', '-')}.json`);
    writeFileSync(file, `${JSON.stringify(s, null, 2)}\n`);
    results.push(await runScenario(env, s, file));
  }
  const report = buildCampaignReport(results.map((r, i) => ({ ...r, scenario: scenarios[i] as NonNullable<(typeof scenarios)[number]> })));
  const md = renderMarkdown(report);
  t.diagnostic(`\n${md}`);
  // The comparison saw both sides decide: a run where either side decided nothing would prove nothing.
  assert.ok(report.decisions.kcm > 0 && report.decisions.ours > 0, md);
  assert.ok(report.compared > 0, md);
  assert.deepEqual(report.violations, [], md);
});
