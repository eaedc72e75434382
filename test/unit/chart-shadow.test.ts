/**
 * A `controller.dryRun` release of the Helm chart is a shadow: it campaigns only for a Lease of its
 * own (name ending in `-shadow`), never for the acting controller's, whose Lease it would otherwise
 * win half the time and then leave the cluster with nothing acting; the container args it renders
 * pass the binary's own flag check (which refuses `--dry-run` with any other Lease name); its RBAC
 * and alerts name the same Lease; and its NOTES.txt says to keep kube-controller-manager's node
 * lifecycle and taint eviction controllers on. Rendered with `scripts/helm.sh template`, as the
 * chart tests in test/integration/manifests.test.ts do; no API server is needed.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { type RunResult } from '../support/command.js';
import { CHART, chartWithNotes, helmTemplate, renderChart, type ChartCopy } from '../support/chart.js';
import { SHADOW_LEASE_NAME, parseControllerFlags } from '../../src/cli/flags.js';

const NAMESPACE = 'nlc';

/** The parts of a rendered object these checks read. */
interface Obj {
  kind?: string;
  metadata?: { name?: string };
  notes?: string;
  rules?: { resources?: string[]; resourceNames?: string[] }[];
  spec?: {
    template?: { spec?: { containers?: { args?: string[] }[] } };
    groups?: { rules?: { alert?: string; expr?: string }[] }[];
  };
}

/** A copy of the chart that also renders NOTES.txt (test/support/chart.ts). */
let copy: ChartCopy | undefined;

async function template(chart: string, ...set: string[]): Promise<RunResult> {
  return helmTemplate(chart, NAMESPACE, set);
}

async function render(...set: string[]): Promise<Obj[]> {
  assert.ok(copy, 'the chart copy exists');
  return (await renderChart(copy.chart, NAMESPACE, set)) as Obj[];
}

function args(docs: Obj[]): string[] {
  const a = docs.find((d) => d.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0]?.args;
  assert.ok(a && a.length > 0, 'the Deployment has container args');
  return a;
}

const flag = (docs: Obj[], name: string): string | undefined =>
  args(docs)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);

/** The Lease names the leader-election Role lets the release update. */
function roleLeases(docs: Obj[]): string[] {
  const role = docs.find((d) => d.kind === 'Role' && (d.metadata?.name ?? '').endsWith(':leader-election'));
  assert.ok(role, 'a leader-election Role');
  return (role.rules ?? []).flatMap((r) => r.resourceNames ?? []);
}

function notes(docs: Obj[]): string {
  const n = docs.find((d) => typeof d.notes === 'string')?.notes;
  assert.ok(n, 'NOTES.txt rendered');
  return n;
}

describe('chart: a dryRun release takes a shadow Lease, never the acting controller', () => {
  before(async () => {
    copy = await chartWithNotes();
  });
  after(async () => {
    await copy?.remove();
  });

  test('dryRun=false: the acting Lease, the flags parse, NOTES say to switch kube-controller-manager\'s loops off', async () => {
    const docs = await render('prometheusRule.enabled=true');
    assert.equal(flag(docs, 'dry-run'), 'false');
    assert.equal(flag(docs, 'leader-elect-resource-name'), 'node-lifecycle-controller');
    assert.deepEqual(roleLeases(docs), ['node-lifecycle-controller']);
    const config = await parseControllerFlags(args(docs), {});
    assert.equal(config.dryRun, false);
    assert.equal(config.leaderElectResourceName, 'node-lifecycle-controller');
    const text = notes(docs);
    assert.match(text, /switch the loops it replaces off in kube-controller-manager/);
    assert.match(text, /--controllers=\*,-node-lifecycle-controller,-taint-eviction-controller/);
    assert.doesNotMatch(text, /shadow/i);
  });

  test('dryRun=true: the shadow Lease (the binary\'s --dry-run default) in args, Role, alerts and NOTES; the flags parse', async () => {
    const docs = await render('controller.dryRun=true', 'prometheusRule.enabled=true');
    assert.equal(flag(docs, 'dry-run'), 'true');
    assert.equal(flag(docs, 'leader-elect-resource-name'), SHADOW_LEASE_NAME);
    assert.deepEqual(roleLeases(docs), [SHADOW_LEASE_NAME]);
    const exprs = (docs.find((d) => d.kind === 'PrometheusRule')?.spec?.groups ?? []).flatMap((g) => g.rules ?? []).map((r) => r.expr ?? '');
    const leaseSelectors = exprs.flatMap((e) => [...e.matchAll(/leader_election_master_status\{name="([^"]+)"\}/g)].map((m) => m[1]));
    assert.ok(leaseSelectors.length > 0, 'the leader alerts select a Lease');
    assert.deepEqual([...new Set(leaseSelectors)], [SHADOW_LEASE_NAME]);
    // The binary accepts what the chart passes (it refuses --dry-run with a name not ending in -shadow).
    const config = await parseControllerFlags(args(docs), {});
    assert.equal(config.dryRun, true);
    assert.equal(config.leaderElectResourceName, SHADOW_LEASE_NAME);
    const text = notes(docs);
    assert.match(text, new RegExp(`Lease ${NAMESPACE}/${SHADOW_LEASE_NAME}\\b`));
    assert.match(text, /Keep kube-controller-manager's node lifecycle and taint eviction controllers/);
    assert.match(text, /acts on nothing/);
    assert.doesNotMatch(text, /switch the loops it replaces off/);
    assert.doesNotMatch(text, /--controllers=\*,-/, 'a shadow release must not tell anyone to switch kube-controller-manager off');
  });

  test('a real and a shadow release in one namespace never share a Lease, whatever resourceName says', async () => {
    for (const name of ['node-lifecycle-controller', 'nlc-prod']) {
      const real = flag(await render(`leaderElection.resourceName=${name}`), 'leader-elect-resource-name');
      const shadow = flag(await render(`leaderElection.resourceName=${name}`, 'controller.dryRun=true'), 'leader-elect-resource-name');
      assert.equal(real, name);
      assert.equal(shadow, `${name}-shadow`);
    }
    // A name that already ends in -shadow is kept, not doubled.
    const kept = await render('leaderElection.resourceName=nlc-prod-shadow', 'controller.dryRun=true');
    assert.equal(flag(kept, 'leader-elect-resource-name'), 'nlc-prod-shadow');
    assert.deepEqual(roleLeases(kept), ['nlc-prod-shadow']);
  });

  test('dryRun=false with a resourceName ending in -shadow fails to render, naming the value', async () => {
    const r = await template(CHART, 'leaderElection.resourceName=nlc-shadow');
    assert.notEqual(r.code, 0, 'rendered a real release on a shadow Lease');
    assert.match(r.stderr, /leaderElection\.resourceName "nlc-shadow" ends in -shadow/);
  });
});
