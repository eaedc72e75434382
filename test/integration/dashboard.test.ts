/**
 * Issue 17 acceptance: "a test that scrapes /metrics and finds every metric name that the
 * dashboard's queries use". Every metric name in the chart's Grafana dashboard and in its
 * PrometheusRule is served by a real controller running against the shared control plane (its
 * plain `--metrics-bind-address` port): the `# TYPE` line of the family, so names whose series
 * appear only once an event happens count too (histogram series by their family). The shadow's
 * counters exist only with `--dry-run`, so a second, `--dry-run`, controller serves those. Also:
 * the chart renders the dashboard as a ConfigMap with the sidecar's label, the API server accepts
 * it (server dry run), and the zone gauges the first panels read carry the fleet's zone.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { loadAllYaml } from '@kubernetes/client-node';
import { dashboardExprs, DASHBOARD_PATH, exposedFamilies, metricFamily, metricNamesInPromQL, readDashboard } from '../../bench/dashboard/dashboard.js';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import type { RunningController } from '../../src/cli/run.js';
import { createTestNamespace, testClients, uniquePrefix } from '../support/cluster.js';
import { metricValue, scrapeMetrics, startTestController } from '../support/controller.js';
import { kubectl, runCommand } from '../support/process.js';

const CHART = 'charts/node-lifecycle-controller';
const SHADOW_FAMILY = /^node_lifecycle_controller_dry_run_/;

interface Rendered {
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: { jobLabel?: string; groups?: { rules?: { alert?: string; expr?: string }[] }[] };
}

async function helmTemplate(...set: string[]): Promise<Rendered[]> {
  const text = await runCommand('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--namespace', 'default', ...set.flatMap((s) => ['--set', s])]);
  return (loadAllYaml(text) as unknown[]).filter((d): d is object => d !== null && typeof d === 'object').map((d) => JSON.parse(JSON.stringify(d)) as Rendered);
}

/** Metric names the chart's alerts use: every rule, the eviction guards' alert included (on by default). */
async function alertMetricNames(): Promise<string[]> {
  const rule = (await helmTemplate('prometheusRule.enabled=true')).find((d) => d.kind === 'PrometheusRule');
  const rules = rule?.spec?.groups?.flatMap((g) => g.rules ?? []) ?? [];
  assert.ok(rules.some((r) => r.alert === 'NodeLifecycleControllerEvictionCircuitOpen'), 'the guards alert is rendered');
  return rules.flatMap((r) => metricNamesInPromQL(r.expr ?? ''));
}

describe('the dashboard and the alerts query metrics a running controller serves (issue 17)', { concurrency: false }, () => {
  const clients = testClients();
  const prefix = uniquePrefix('dash');
  let fleet: Fleet;
  let controller: RunningController | undefined;
  let shadow: RunningController | undefined;

  before(async () => {
    await createTestNamespace(clients, prefix);
    fleet = new Fleet({
      clients,
      prefix,
      namespace: prefix,
      zones: 1,
      nodesPerZone: 3,
      podsPerNode: 1,
      leaseRenewIntervalMs: 1000,
      nodeStatusUpdateFrequencyMs: 60_000,
    });
    await fleet.start();
  });

  after(async () => {
    await shadow?.stop();
    await controller?.stop();
    await fleet?.stop();
    await fleet?.cleanup();
  });

  test('the chart renders the dashboard as a ConfigMap with grafana_dashboard: "1", which the API server accepts', async () => {
    assert.equal((await helmTemplate()).filter((d) => d.kind === 'ConfigMap').length, 0, 'off by default');
    const docs = await helmTemplate('dashboard.enabled=true', 'dashboard.annotations.grafana_folder=Kubernetes');
    const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata?.name === 'nlc-node-lifecycle-controller-dashboard');
    assert.ok(cm, 'no dashboard ConfigMap');
    assert.equal(cm.metadata?.labels?.['grafana_dashboard'], '1');
    const json = cm.data?.['node-lifecycle-controller.json'] ?? '';
    assert.deepEqual(JSON.parse(json), JSON.parse(await readFile(DASHBOARD_PATH, 'utf8')), 'the ConfigMap holds the dashboard file unchanged');
    const out = await kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(cm));
    assert.match(out, /configmap\/nlc-node-lifecycle-controller-dashboard (created|configured|unchanged) \(server dry run\)/);
  });

  test('alerts on names other components serve too select the job the ServiceMonitor gives', async () => {
    const docs = await helmTemplate('prometheusRule.enabled=true', 'serviceMonitor.enabled=true');
    const jobLabel = docs.find((d) => d.kind === 'ServiceMonitor')?.spec?.jobLabel ?? '';
    const job = docs.find((d) => d.kind === 'Service')?.metadata?.labels?.[jobLabel];
    assert.ok(job, `the Service has no ${jobLabel} label`);
    const rules = docs.find((d) => d.kind === 'PrometheusRule')?.spec?.groups?.flatMap((g) => g.rules ?? []) ?? [];
    for (const [alert, series] of [
      ['NodeLifecycleControllerThrottleDelayHigh', 'rest_client_rate_limiter_duration_seconds_bucket'],
      ['NodeLifecycleControllerForceDeleteErrors', 'pod_gc_collector_force_delete_pod_errors_total'],
    ]) {
      const expr = rules.find((r) => r.alert === alert)?.expr ?? '';
      assert.ok(expr.includes(`${series}{job="${job}"}[`), `${alert}: ${expr}`);
    }
    const custom = await helmTemplate('prometheusRule.enabled=true', 'prometheusRule.selector=namespace="ops"');
    const expr = custom.find((d) => d.kind === 'PrometheusRule')?.spec?.groups?.[0]?.rules?.find((r) => r.alert === 'NodeLifecycleControllerThrottleDelayHigh')?.expr ?? '';
    assert.ok(expr.includes('rest_client_rate_limiter_duration_seconds_bucket{namespace="ops"}['), expr);
  });

  test('every metric name of the dashboard and the PrometheusRule is on /metrics of a running controller', async () => {
    controller = await startTestController(prefix, ['--node-monitor-period=1s', '--max-unhealthy-nodes=2', '--storm-threshold=2']);
    const text = await scrapeMetrics(controller);
    const served = exposedFamilies(text);
    const names = [...new Set([...dashboardExprs(await readDashboard()).flatMap(metricNamesInPromQL), ...(await alertMetricNames())])];
    assert.ok(names.length >= 20, names.join(', '));
    const missing = names.filter((n) => !SHADOW_FAMILY.test(n) && metricFamily(n, served) === undefined);
    assert.deepEqual(missing, [], `not served: ${missing.join(', ')}`);
    // The zone panels have data at once, not only a family: the fleet's zone is in every zone gauge.
    const zone = [...text.matchAll(/^node_collector_zone_size\{zone="([^"]*)"\} 3$/gm)].map((m) => m[1] ?? '').find((z) => z.endsWith(fleet.zones()[0] ?? '?'));
    assert.ok(zone !== undefined, 'node_collector_zone_size of the fleet zone');
    assert.equal(metricValue(text, 'node_collector_zone_health', { zone }), 100);
    assert.equal(metricValue(text, 'node_collector_unhealthy_nodes_in_zone', { zone }), 0);
    assert.equal(metricValue(text, 'node_collector_zone_tainting_queue_length', { zone }), 0);
    // Every configured guard begins open when the controller starts, because it just started (its
    // storm window and hold lie ahead): the alert ignores that hold.
    assert.equal(metricValue(text, 'node_collector_eviction_circuit_open', { guard: 'storm' }), 1);
    assert.equal(metricValue(text, 'node_collector_eviction_circuit_start_hold', { guard: 'storm' }), 1);
    await controller.stop();
    controller = undefined;

    // The shadow mode panel's counters: only a --dry-run process registers them.
    shadow = await startTestController(prefix, ['--dry-run', '--node-monitor-period=1s']);
    const shadowServed = exposedFamilies(await scrapeMetrics(shadow));
    const shadowNames = names.filter((n) => SHADOW_FAMILY.test(n));
    assert.deepEqual(shadowNames.sort(), ['node_lifecycle_controller_dry_run_decisions_total', 'node_lifecycle_controller_dry_run_events_total']);
    for (const n of shadowNames) assert.equal(shadowServed.get(n), 'counter', `${n} not served with --dry-run`);
  });
});
