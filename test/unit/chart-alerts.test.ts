/**
 * The chart's PrometheusRule as shipped: every alert links its section of docs/troubleshooting.md
 * (`runbook_url` = `prometheusRule.runbookUrl` + `#` + an anchor that heading really has), the
 * cross-links between docs/migration.md and docs/troubleshooting.md resolve, and every alert passes
 * `promtool test rules` (test/promtool/<group>.yaml) on the rules rendered from the chart, firing on
 * a synthetic series and silent on a healthy one. promtool comes from Debian's `prometheus` package
 * through scripts/promtool.sh, which installs it when missing (root or sudo); NLC_SKIP_PROMTOOL=1
 * skips only the promtool tests, saying so.
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { ROOT, runCommand } from '../support/command.js';
import { CHART, githubAnchors, helmTemplate, renderChart } from '../support/chart.js';

interface Rule {
  alert?: string;
  record?: string;
  expr?: string;
  annotations?: Record<string, string>;
}
interface Group {
  name: string;
  rules: Rule[];
}
/** One `tests[]` entry of a promtool test file (the parts read here). */
interface PromtoolCase {
  name?: string;
  alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
}

const DOCS = join(ROOT, 'docs');

async function renderedGroups(set: string[] = []): Promise<Group[]> {
  const docs = await renderChart(CHART, 'nlc', ['prometheusRule.enabled=true', ...set]);
  const rule = docs.find((d) => d['kind'] === 'PrometheusRule');
  assert.ok(rule, 'a PrometheusRule is rendered');
  const groups = (rule['spec'] as { groups?: Group[] } | undefined)?.groups ?? [];
  assert.ok(groups.length > 0, 'the PrometheusRule has groups');
  return groups;
}

const alertsOf = (groups: Group[]): Rule[] => groups.flatMap((g) => g.rules).filter((r) => typeof r.alert === 'string');

async function runbookBase(): Promise<string> {
  const values = yaml.load(await readFile(join(CHART, 'values.yaml'), 'utf8')) as { prometheusRule: { runbookUrl: string } };
  return values.prometheusRule.runbookUrl;
}

describe('chart alerts: runbook_url to docs/troubleshooting.md', () => {
  let groups: Group[] = [];
  let anchors: string[] = [];
  before(async () => {
    groups = await renderedGroups();
    anchors = githubAnchors(await readFile(join(DOCS, 'troubleshooting.md'), 'utf8'));
  });

  test('GitHub anchors: lower case, punctuation and backticks dropped, spaces to hyphens, repeats numbered', () => {
    assert.deepEqual(githubAnchors('# A `zone` is paused!\n## 2. Cut-over\n```sh\n# not a heading\n```\n### A zone is paused\n## The 401/403 port'), [
      'a-zone-is-paused',
      '2-cut-over',
      'a-zone-is-paused-1',
      'the-401403-port',
    ]);
  });

  test('every alert (default values render all eight) has a runbook_url whose anchor is a heading there', async () => {
    const base = await runbookBase();
    assert.match(base, /troubleshooting\.md$/);
    const alerts = alertsOf(groups);
    assert.equal(alerts.length, 8, `alerts: ${alerts.map((a) => a.alert).join(', ')}`);
    for (const a of alerts) {
      const url = a.annotations?.['runbook_url'];
      assert.ok(url, `${a.alert} has no runbook_url`);
      assert.ok(url.startsWith(`${base}#`), `${a.alert}: ${url} is not ${base}#…`);
      const anchor = url.slice(base.length + 1);
      assert.ok(anchors.includes(anchor), `${a.alert}: #${anchor} is not a heading of docs/troubleshooting.md`);
      assert.equal(anchor, (a.alert ?? '').toLowerCase(), `${a.alert} links its own section`);
    }
  });

  test('another runbookUrl is used as given; an empty one leaves runbook_url out', async () => {
    const mine = 'https://docs.example.org/nlc/troubleshooting.md';
    for (const a of alertsOf(await renderedGroups([`prometheusRule.runbookUrl=${mine}`]))) {
      assert.equal(a.annotations?.['runbook_url'], `${mine}#${(a.alert ?? '').toLowerCase()}`);
    }
    for (const a of alertsOf(await renderedGroups(['prometheusRule.runbookUrl=']))) {
      assert.equal(a.annotations?.['runbook_url'], undefined, `${a.alert} still has a runbook_url`);
      assert.ok(a.annotations?.['summary'], `${a.alert} keeps its other annotations`);
    }
  });

  test('prometheusRule.disabled switches single alerts off by name; a name that is no alert fails to render (issue 56)', async () => {
    const all = alertsOf(groups).map((a) => a.alert ?? '');
    for (const off of [['NodeLifecycleControllerHighUnhealthyShare'], ['NodeLifecycleControllerNoLeader', 'NodeLifecycleControllerThrottleDelayHigh']]) {
      const kept = alertsOf(await renderedGroups(off.map((n) => `prometheusRule.disabled.${n}=true`))).map((a) => a.alert ?? '');
      assert.deepEqual(kept, all.filter((n) => !off.includes(n)), `disabled ${off.join(', ')}`);
    }
    const explicitOn = alertsOf(await renderedGroups(['prometheusRule.disabled.NodeLifecycleControllerNoLeader=false'])).map((a) => a.alert);
    assert.deepEqual(explicitOn, all, 'false keeps the alert');
    const typo = await helmTemplate(CHART, 'nlc', ['prometheusRule.enabled=true', 'prometheusRule.disabled.NodeLifecycleControllerNoLeadr=true']);
    assert.notEqual(typo.code, 0, 'a misspelt alert name must not silently keep the alert');
    assert.match(typo.stderr, /prometheusRule\.disabled/);
  });

  test('links between docs/migration.md and docs/troubleshooting.md, and inside each, point at real headings', async () => {
    const files = ['migration.md', 'troubleshooting.md'];
    const text = new Map<string, string>();
    for (const f of files) text.set(f, await readFile(join(DOCS, f), 'utf8'));
    let checked = 0;
    for (const f of files) {
      for (const m of (text.get(f) ?? '').matchAll(/\]\(((?:migration|troubleshooting)\.md)?#([^)]+)\)/g)) {
        const target = m[1] ?? f;
        const targetAnchors = githubAnchors(text.get(target) ?? '');
        assert.ok(targetAnchors.includes(m[2] ?? ''), `${f}: link to ${target}#${m[2]} has no heading`);
        checked++;
      }
    }
    assert.ok(checked >= 10, `only ${checked} links checked`);
  });
});

describe('chart alerts: promtool test rules on the shipped rules', () => {
  const skip = process.env['NLC_SKIP_PROMTOOL'] === '1' ? 'NLC_SKIP_PROMTOOL=1' : false;
  let dir = '';
  let groups: Group[] = [];
  before(async () => {
    if (skip) return;
    groups = await renderedGroups();
    dir = await mkdtemp(join(tmpdir(), 'nlc-promtool-'));
    // Annotations are prose with Go templates; the describe above checks them. Expressions, `for`
    // and labels are kept as rendered.
    const rules = { groups: groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _a, ...r }) => r) })) };
    await writeFile(join(dir, 'rules.yaml'), yaml.dump(rules, { lineWidth: -1 }));
  });

  /** Copies a test file next to the rendered rules.yaml (promtool resolves rule_files from the test file's directory). */
  async function stage(name: string, cases: PromtoolCase[] | undefined, source: string): Promise<string> {
    const doc = yaml.load(source) as Record<string, unknown>;
    if (cases) doc['tests'] = cases;
    const path = join(dir, name);
    await writeFile(path, yaml.dump(doc, { lineWidth: -1 }));
    return path;
  }

  const promtool = (file: string) => runCommand('bash', [join(ROOT, 'scripts', 'promtool.sh'), 'test', 'rules', file]);

  test('every rule group has a test file in which every alert fires once and stays silent once, and promtool passes it', { skip }, async (t) => {
    t.after(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });
    for (const g of groups) {
      const file = join(ROOT, 'test', 'promtool', `${g.name}.yaml`);
      assert.ok(existsSync(file), `test/promtool/${g.name}.yaml is missing for rule group ${g.name}`);
      const source = await readFile(file, 'utf8');
      const cases = (yaml.load(source) as { tests?: PromtoolCase[] }).tests ?? [];
      const checks = cases.flatMap((c) => c.alert_rule_test ?? []);
      const alerts = alertsOf([g]).map((a) => a.alert ?? '');
      for (const name of alerts) {
        assert.ok(checks.some((c) => c.alertname === name && (c.exp_alerts ?? []).length > 0), `${name}: no case where it fires`);
        assert.ok(checks.some((c) => c.alertname === name && (c.exp_alerts ?? []).length === 0), `${name}: no case where it stays silent`);
      }
      for (const c of checks) assert.ok(alerts.includes(c.alertname), `${g.name}.yaml tests ${c.alertname}, which the group does not have`);

      const r = await promtool(await stage(`${g.name}.yaml`, undefined, source));
      assert.equal(r.code, 0, `promtool test rules ${g.name}.yaml:\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /SUCCESS/);

      // The harness can fail: with one firing case expecting silence instead, promtool must refuse it.
      const flipped = structuredClone(cases);
      const firing = flipped.flatMap((c) => c.alert_rule_test ?? []).find((c) => (c.exp_alerts ?? []).length > 0);
      assert.ok(firing);
      firing.exp_alerts = [];
      const bad = await promtool(await stage(`${g.name}-flipped.yaml`, flipped, source));
      assert.notEqual(bad.code, 0, `promtool accepted a wrong expectation for ${firing.alertname}`);
    }
  });
});
