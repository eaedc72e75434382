/**
 * Issue 56 item 2, acceptance: the continuous second-actor check on a private control plane (kube-
 * controller-manager acts on every node, so never the shared cluster), with a real Prometheus
 * (Debian's package, scripts/promtool.sh) scraping the controller every second and evaluating the
 * chart's rendered PrometheusRule (`prometheusRule.secondActorFor=5s`, the shipped expression).
 *
 * 1. Ours alone, every controller on: a node dies (ours taints it NoExecute, writes its pods'
 *    DisruptionTarget and deletes them) and another node is deleted (ours force-deletes its orphans
 *    with DeletionByPodGC). None of it is counted: `node_lifecycle_second_actor_actions_total` stays 0
 *    for every kind, no `SecondActorSuspected` Event, and NodeLifecycleControllerSecondActor never
 *    goes pending, while its ledger did hold those writes. Every lane.
 * 2. Beside kube-controller-manager 1.37.2 (node-lifecycle-controller, taint-eviction-controller,
 *    pod-garbage-collector-controller on a shorter grace period than ours, and ours with its node
 *    lifecycle controller only, so that every pod-side action is kube-controller-manager's): a node
 *    dies and another is deleted. Its NoExecute taint, its DisruptionTarget conditions
 *    (DeletionByTaintManager, DeletionByPodGC), its deletions and its Events are each counted by
 *    kind, `SecondActorSuspected` Events name the field manager `kube-controller-manager`, and the
 *    chart's alert fires. The 1.37 lane only: the 1.20 lane's kube-controller-manager is not built
 *    by the lane's scripts (scripts/control-plane.sh builds kube-apiserver for 1.20).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { ControllerProcess, UPSTREAM_CONTROLLERS } from '../../bench/lib/procs.js';
import type { RunningController } from '../../src/cli/run.js';
import type { KubeClients } from '../../src/kube/client.js';
import { toNode, toPod, type Pod } from '../../src/kube/objects.js';
import type { SecondActorView } from '../../src/secondactor/check.js';
import { SECOND_ACTOR_KINDS, SECOND_ACTOR_REASON } from '../../src/secondactor/decision.js';
import { CHART, renderChart } from '../support/chart.js';
import { createTestNamespace, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricValue, scrapeMetrics, startTestController } from '../support/controller.js';
import { PrivateControlPlane } from '../support/private-cluster.js';
import { TestPrometheus } from '../support/prometheus.js';

const ROOT = join(import.meta.dirname, '..', '..');
const LANE = process.env['NLC_K8S_VERSION'] ?? '1.37';
const GRACE_S = 8;
const TOLERATION_S = 3;
const UNREACHABLE_NOEXECUTE = 'node.kubernetes.io/unreachable:NoExecute';
const METRIC = 'node_lifecycle_second_actor_actions_total';
const ALERT = 'NodeLifecycleControllerSecondActor';
const logDir = process.env['NLC_TEST_LOG_DIR'] ?? tmpdir();

let cp: PrivateControlPlane | undefined;
let clients: KubeClients | undefined;
let fleet: Fleet | undefined;
let prefix = '';
let nodes: string[] = [];
let kcm: ControllerProcess | undefined;
let ours: RunningController | undefined;
let prom: TestPrometheus | undefined;

after(async () => {
  await prom?.stop();
  await ours?.stop();
  await kcm?.stop();
  await fleet?.stop();
  await cp?.run('down').catch(() => undefined);
  await cp?.remove();
});

/** kube-controller-manager of the lane, built on first use (cached afterwards; see shadow.test.ts). */
function kubeControllerManagerBinary(): string {
  const script = join(ROOT, 'scripts/control-plane.sh');
  execFileSync('bash', [script, 'install', '--with-kcm'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 1_200_000 });
  return execFileSync('bash', [script, 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
}

/** The chart's rule groups as shipped, with the alert's `for` shortened to 5 s (the expression unchanged). */
async function chartRuleGroups(): Promise<unknown[]> {
  const docs = await renderChart(CHART, 'nlc', ['prometheusRule.enabled=true', 'prometheusRule.secondActorFor=5s']);
  const rule = docs.find((d) => d['kind'] === 'PrometheusRule');
  assert.ok(rule, 'the chart renders a PrometheusRule');
  return (rule['spec'] as { groups: unknown[] }).groups;
}

async function counters(c: RunningController): Promise<Record<string, number>> {
  const text = await scrapeMetrics(c);
  return Object.fromEntries(SECOND_ACTOR_KINDS.map((k) => [k, metricValue(text, METRIC, { kind: k }) ?? Number.NaN]));
}

async function secondActorState(c: RunningController): Promise<SecondActorView> {
  const body = (await (await fetch(`http://127.0.0.1:${c.port}/debug/state`)).json()) as { secondActor?: SecondActorView };
  assert.ok(body.secondActor, '/debug/state has a secondActor section');
  return body.secondActor;
}

async function podsOn(node: string): Promise<Pod[]> {
  const list = await clients!.core.listNamespacedPod({ namespace: prefix, fieldSelector: `spec.nodeName=${node}` });
  return list.items.map(toPod).filter((p): p is Pod => p !== undefined);
}

async function secondActorEvents(): Promise<{ kind: string; name: string; message: string }[]> {
  const events = (await clients!.core.listEventForAllNamespaces({ fieldSelector: `reason=${SECOND_ACTOR_REASON}` })).items;
  return events.map((e) => ({ kind: e.involvedObject.kind ?? '', name: e.involvedObject.name ?? '', message: e.message ?? '' }));
}

test('ours alone: its own taints, DisruptionTarget conditions, evictions and orphan force-deletes are never counted, and the alert stays silent', { timeout: 600_000 }, async () => {
  cp = await PrivateControlPlane.create();
  await cp.run('up');
  clients = await cp.clients();
  prefix = uniquePrefix('second');
  await createTestNamespace(clients, prefix);
  fleet = new Fleet({
    clients,
    prefix,
    namespace: prefix,
    zones: 1,
    nodesPerZone: 4,
    podsPerNode: 2,
    podMix: { tolerationSeconds: 1 },
    tolerationSeconds: TOLERATION_S,
    leaseRenewIntervalMs: 1000,
    nodeStatusUpdateFrequencyMs: 10_000,
  });
  await fleet.start();
  nodes = fleet.nodeNames();
  assert.equal(nodes.length, 4);
  const [dead, deleted] = nodes as [string, string];

  ours = await startTestController(prefix, [`--node-monitor-grace-period=${GRACE_S}s`, '--node-monitor-period=1s', '--node-eviction-rate=10'], { kubeconfig: cp.kubeconfig });
  const running = ours;
  prom = await TestPrometheus.start([`127.0.0.1:${running.port}`], await chartRuleGroups(), join(logDir, `${prefix}-prometheus-alone.log`));
  const deadPods = await podsOn(dead);
  const orphans = await podsOn(deleted);
  assert.equal(deadPods.length + orphans.length, 4);

  fleet.killNode(dead);
  await fleet.deleteNode(deleted);
  await waitFor('ours taints the dead node', async () => toNode(await clients!.core.readNode({ name: dead }))?.taints.some((x) => `${x.key}:${x.effect}` === UNREACHABLE_NOEXECUTE), GRACE_S * 1000 + 30_000, 200);
  await waitFor(
    "ours evicts the dead node's pods (DisruptionTarget DeletionByTaintManager, then DELETE)",
    async () => (await podsOn(dead)).filter((p) => p.deletionTimestamp !== undefined && p.conditions.some((c) => c.type === 'DisruptionTarget' && c.reason === 'DeletionByTaintManager')).length === deadPods.length,
    TOLERATION_S * 1000 + 60_000,
    250,
  );
  // Upstream's quarantine (40 s) and pass period (20 s): the orphans go within about a minute.
  await waitFor('ours force-deletes the orphans of the deleted node', async () => (await podsOn(deleted)).length === 0, 120_000, 500);
  const metrics = await scrapeMetrics(running);
  assert.equal(metricValue(metrics, 'pod_gc_collector_force_delete_pods_total', { namespace: prefix, reason: 'orphaned' }), orphans.length, 'the orphans were ours');
  assert.ok((metricValue(metrics, 'taint_eviction_controller_pod_deletions_total') ?? 0) >= deadPods.length, 'the evictions were ours');

  // A few more scrapes and evaluations after the last write.
  await new Promise((r) => setTimeout(r, 5000));
  assert.deepEqual(await counters(running), { taint: 0, 'disruption-target': 0, 'pod-deletion': 0, event: 0 });
  const state = await secondActorState(running);
  assert.ok(state.actingSinceMs !== undefined, 'the check runs');
  assert.ok(state.ownWrites >= 1 + deadPods.length * 2 + orphans.length * 2, `the ledger held our writes (${state.ownWrites} entries)`);
  assert.deepEqual(await secondActorEvents(), []);
  const scraped = await prom.query(METRIC);
  assert.equal(scraped.length, SECOND_ACTOR_KINDS.length, 'Prometheus scraped every kind (at 0)');
  assert.deepEqual((await prom.alerts()).filter((a) => a.labels['alertname'] === ALERT), [], `${ALERT} neither pending nor firing`);

  await prom.stop();
  prom = undefined;
  await ours.stop();
  ours = undefined;
});

test('beside kube-controller-manager 1.37.2: its taint, conditions, deletions and Events are counted by kind, named by field manager, and the alert fires', { timeout: 1_800_000 }, async (t) => {
  if (LANE !== '1.37') {
    t.skip(`kube-controller-manager runs beside ours on the 1.37 lane only (lane ${LANE}: its kube-controller-manager is not built by the lane's scripts)`);
    return;
  }
  if (!cp || !clients || !fleet) {
    t.skip('the first test did not set the cluster up');
    return;
  }
  const [, , dead, deleted] = nodes as [string, string, string, string];
  const upstreamBinary = kubeControllerManagerBinary();
  // Ours acts on nodes only, and later than kube-controller-manager: every action below is its.
  ours = await startTestController(prefix, ['--controllers=node-lifecycle-controller', '--node-monitor-grace-period=5m', '--node-monitor-period=1s'], { kubeconfig: cp.kubeconfig });
  const running = ours;
  prom = await TestPrometheus.start([`127.0.0.1:${running.port}`], await chartRuleGroups(), join(logDir, `${prefix}-prometheus-kcm.log`));
  kcm = new ControllerProcess(
    {
      kind: 'upstream',
      kubeconfig: cp.kubeconfig,
      flags: { nodeMonitorPeriod: '1s', nodeMonitorGracePeriod: `${GRACE_S}s`, nodeStartupGracePeriod: '1m', nodeEvictionRate: 10, secondaryNodeEvictionRate: 0.01, kubeApiQps: 20, kubeApiBurst: 30 },
      upstreamBinary,
      upstreamControllers: UPSTREAM_CONTROLLERS['1.37'],
      upstreamVersion: '1.37',
      oursMode: 'tsx',
      oursEntry: '',
      metricsPort: 0,
      logLevel: 'info',
    },
    join(logDir, `${prefix}-kcm.log`),
    ROOT,
  );
  const kcmRunning = kcm.waitForLine(/Started controller|Starting controller|Starting node controller|Caches are synced/, 120_000);
  kcmRunning.catch(() => undefined);
  await waitFor('kube-controller-manager runs its controllers', () => kcmRunning.then(() => true), 120_000);
  const deadPods = await podsOn(dead);
  const orphans = await podsOn(deleted);

  fleet.killNode(dead);
  await fleet.deleteNode(deleted);
  const kcmTaint = await waitFor(
    'kube-controller-manager taints the dead node',
    async () => toNode(await clients!.core.readNode({ name: dead }))?.taints.find((x) => `${x.key}:${x.effect}` === UNREACHABLE_NOEXECUTE),
    GRACE_S * 1000 + 30_000,
    200,
  );
  const want = { taint: 1, 'disruption-target': deadPods.length + orphans.length, 'pod-deletion': deadPods.length + orphans.length, event: 1 };
  let got: Record<string, number> = {};
  await waitFor(
    `counted: ${JSON.stringify(want)}`,
    async () => {
      got = await counters(running);
      return Object.entries(want).every(([k, n]) => (got[k] ?? 0) >= n);
    },
    180_000,
    1000,
  ).catch(() => assert.fail(`counted ${JSON.stringify(got)}, want at least ${JSON.stringify(want)}`));
  t.diagnostic(`counted by kind: ${JSON.stringify(got)} (taint added at ${new Date(kcmTaint.timeAdded ?? 0).toISOString()})`);

  // The Events name the object and the field manager; /debug/state keeps the last report per kind.
  const events = await waitFor('SecondActorSuspected Events', async () => {
    const e = await secondActorEvents();
    return e.some((x) => x.kind === 'Node' && x.name === dead) && e.some((x) => x.kind === 'Pod') ? e : undefined;
  }, 30_000, 500);
  const onNode = events.find((x) => x.kind === 'Node' && x.name === dead);
  assert.match(onNode?.message ?? '', /field manager kube-controller-manager \(Update/);
  assert.match(onNode?.message ?? '', /added taint node\.kubernetes\.io\/unreachable:NoExecute/);
  const state = await secondActorState(running);
  for (const k of ['taint', 'disruption-target', 'pod-deletion'] as const) assert.ok(state.kinds[k].lastReport, `a report for ${k}`);
  assert.match(state.kinds['disruption-target'].lastReport ?? '', /kube-controller-manager/);
  assert.match(state.kinds.event.lastReport ?? '', /no instance: kube-controller-manager records none/);

  // The chart's alert, evaluated by Prometheus on what it scraped.
  const firing = await waitFor(
    `${ALERT} fires for taint, disruption-target and pod-deletion`,
    async () => {
      const a = (await prom!.alerts()).filter((x) => x.labels['alertname'] === ALERT && x.state === 'firing');
      const kinds = new Set(a.map((x) => x.labels['kind']));
      return ['taint', 'disruption-target', 'pod-deletion'].every((k) => kinds.has(k)) ? a : undefined;
    },
    60_000,
    1000,
  );
  assert.ok(firing.every((a) => a.labels['severity'] === 'critical'));
  assert.match(firing[0]?.annotations['runbook_url'] ?? '', /troubleshooting\.md#nodelifecyclecontrollersecondactor$/);
});
