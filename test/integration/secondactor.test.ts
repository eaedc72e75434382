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
 *    goes pending, while its ledger did hold those writes. Every lane (on 1.20, whose API server has
 *    no DisruptionTarget condition, ours writes none).
 * 2. Beside kube-controller-manager 1.37.2 (node-lifecycle-controller, taint-eviction-controller,
 *    pod-garbage-collector-controller, on a shorter grace period than ours) with ours running every
 *    loop but acting on nothing (its circuit breaker open since its start, and its taint eviction
 *    holding: every action is kube-controller-manager's, deterministically): a node dies. Its NoExecute taint, its DisruptionTarget conditions
 *    (exactly the pods whose condition managedFields gives to kube-controller-manager), its
 *    deletions and its Events are each counted by kind, `SecondActorSuspected` Events name the field
 *    manager `kube-controller-manager`, and the chart's alert fires.
 * 3. The same with ours running its node lifecycle controller only (docs/migration.md: a loop ours
 *    leaves off stays on in kube-controller-manager): a node dies and another is deleted; the taint
 *    and node-controller's Events count, kube-controller-manager's taint eviction and pod GC
 *    (DeletionByTaintManager, DeletionByPodGC, their deletions) do not.
 * 2 and 3 run on the 1.37 lane only, as the other side-by-side tests (shadow.test.ts,
 * podgc-upstream.test.ts): on 1.20 only the taint and the Events would show (its taint manager
 * writes no DisruptionTarget, its pod GC no condition), and that peer is not built on every machine.
 */
import { after, test, type TestContext } from 'node:test';
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
/** Whether the lane's API server has the DisruptionTarget pod condition (1.26+): 1.20's has not, and ours writes none there. */
const DISRUPTION_TARGET = LANE !== '1.20';

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

/** Stops this test's controller and Prometheus when it ends, passed or failed (a later test starts its own). */
function stopOursAfter(t: TestContext): void {
  t.after(async () => {
    await prom?.stop();
    prom = undefined;
    await ours?.stop();
    ours = undefined;
  });
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

test('ours alone: its own taints, DisruptionTarget conditions, evictions and orphan force-deletes are never counted, and the alert stays silent', { timeout: 600_000 }, async (t) => {
  stopOursAfter(t);
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
    // Five nodes die or go over the three tests, four healthy ones stay: the zone never reaches the
    // unhealthy-zone threshold (0.55 of its nodes not Ready), which would stop both actors' tainting.
    nodesPerZone: 9,
    podsPerNode: 2,
    podMix: { tolerationSeconds: 1 },
    tolerationSeconds: TOLERATION_S,
    leaseRenewIntervalMs: 1000,
    nodeStatusUpdateFrequencyMs: 10_000,
  });
  await fleet.start();
  nodes = fleet.nodeNames();
  assert.equal(nodes.length, 9);
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
    `ours evicts the dead node's pods (${DISRUPTION_TARGET ? 'DisruptionTarget DeletionByTaintManager, then ' : ''}DELETE)`,
    async () => (await podsOn(dead)).filter((p) => p.deletionTimestamp !== undefined && (!DISRUPTION_TARGET || p.conditions.some((c) => c.type === 'DisruptionTarget' && c.reason === 'DeletionByTaintManager'))).length === deadPods.length,
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
  // A taint; per pod a DELETE, and a DisruptionTarget write where the server has the condition.
  const perPod = DISRUPTION_TARGET ? 2 : 1;
  assert.ok(state.ownWrites >= 1 + (deadPods.length + orphans.length) * perPod, `the ledger held our writes (${state.ownWrites} entries)`);
  assert.deepEqual(await secondActorEvents(), []);
  const scraped = await prom.query(METRIC);
  assert.equal(scraped.length, SECOND_ACTOR_KINDS.length, 'Prometheus scraped every kind (at 0)');
  assert.deepEqual((await prom.alerts()).filter((a) => a.labels['alertname'] === ALERT), [], `${ALERT} neither pending nor firing`);
});

/** kube-controller-manager 1.37.2's node lifecycle, taint eviction and pod GC controllers, on a shorter grace period than ours; resolves once it runs. */
async function startKcm(): Promise<void> {
  kcm = new ControllerProcess(
    {
      kind: 'upstream',
      kubeconfig: cp!.kubeconfig,
      flags: { nodeMonitorPeriod: '1s', nodeMonitorGracePeriod: `${GRACE_S}s`, nodeStartupGracePeriod: '1m', nodeEvictionRate: 10, secondaryNodeEvictionRate: 0.01, kubeApiQps: 20, kubeApiBurst: 30 },
      upstreamBinary: kubeControllerManagerBinary(),
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
  const running = kcm.waitForLine(/Started controller|Starting controller|Starting node controller|Caches are synced/, 120_000);
  running.catch(() => undefined);
  await waitFor('kube-controller-manager runs its controllers', () => running.then(() => true), 120_000);
}

function skipUnlessKcm(t: TestContext): boolean {
  if (LANE !== '1.37') {
    t.skip(`kube-controller-manager runs beside ours on the 1.37 lane only (lane ${LANE}): the expectations are 1.37's (1.20's taint manager writes no DisruptionTarget and its pod GC no condition)`);
    return true;
  }
  if (!cp || !clients || !fleet) {
    t.skip('the first test did not set the cluster up');
    return true;
  }
  return false;
}

/**
 * Ours beside kube-controller-manager, acting on nothing: a 5-minute grace period, and a circuit
 * breaker that begins open at every start and closes only after a full grace period of
 * observations (docs/node-lifecycle.md, "Open at start"), so no NoExecute taint of ours races
 * kube-controller-manager's for a node it marked Unknown.
 */
const HOLD_FLAGS = ['--node-monitor-grace-period=5m', '--node-monitor-period=1s', '--max-unhealthy-nodes=1000'] as const;

/** NoExecute taints ours added (`node_collector_evictions_total`, summed over zones). */
async function oursTainted(c: RunningController): Promise<number> {
  let n = 0;
  for (const line of (await scrapeMetrics(c)).split('\n')) if (line.startsWith('node_collector_evictions_total{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

/** The pods of `node` whose DisruptionTarget condition kube-controller-manager owns (managedFields), once each of them has one and is terminating. */
async function kcmMarked(node: string, want: number): Promise<string[]> {
  return waitFor(
    `kube-controller-manager marks and deletes the ${want} pods of ${node}`,
    async () => {
      const raw = (await clients!.core.listNamespacedPod({ namespace: prefix, fieldSelector: `spec.nodeName=${node}` })).items;
      const marked = raw.filter((p) => p.metadata?.deletionTimestamp && (p.metadata.managedFields ?? []).some((m) => m.manager === 'kube-controller-manager' && JSON.stringify(m.fieldsV1 ?? {}).includes('k:{\\"type\\":\\"DisruptionTarget\\"}')));
      return marked.length === want ? marked.map((p) => p.metadata?.name ?? '') : undefined;
    },
    TOLERATION_S * 1000 + 90_000,
    500,
  );
}

test('beside kube-controller-manager 1.37.2, ours running every loop: its taint, DisruptionTarget conditions, deletions and Events are counted by kind, named by field manager, and the alert fires', { timeout: 1_800_000 }, async (t) => {
  if (skipUnlessKcm(t)) return;
  stopOursAfter(t);
  const [, , dead] = nodes as [string, string, string];
  // Ours runs every loop, as a second actor beside kube-controller-manager, but acts on none of it,
  // with nothing left to chance: its circuit breaker begins open and stays open for a grace period
  // (5 minutes), so it adds no NoExecute taint (it would race kube-controller-manager to the
  // Unknown node's taint), and its node lifecycle controller has not judged the dead node by the end
  // of the test, so its taint eviction holds the evictions that node's taints make due (the start
  // hold, docs/taint-eviction.md). Every action below is kube-controller-manager's.
  ours = await startTestController(prefix, [...HOLD_FLAGS], { kubeconfig: cp!.kubeconfig });
  const running = ours;
  prom = await TestPrometheus.start([`127.0.0.1:${running.port}`], await chartRuleGroups(), join(logDir, `${prefix}-prometheus-kcm.log`));
  await startKcm();
  const deadPods = await podsOn(dead);

  fleet!.killNode(dead);
  const kcmTaint = await waitFor(
    'kube-controller-manager taints the dead node',
    async () => toNode(await clients!.core.readNode({ name: dead }))?.taints.find((x) => `${x.key}:${x.effect}` === UNREACHABLE_NOEXECUTE),
    GRACE_S * 1000 + 30_000,
    200,
  );
  const marked = await kcmMarked(dead, deadPods.length);
  const want = { taint: 1, 'disruption-target': marked.length, 'pod-deletion': marked.length, event: 1 };
  let got: Record<string, number> = {};
  await waitFor(
    `counted: ${JSON.stringify(want)}`,
    async () => {
      got = await counters(running);
      return Object.entries(want).every(([k, n]) => (got[k] ?? 0) >= n);
    },
    60_000,
    1000,
  ).catch(() => assert.fail(`counted ${JSON.stringify(got)}, want at least ${JSON.stringify(want)}`));
  t.diagnostic(`counted by kind: ${JSON.stringify(got)} (taint added at ${new Date(kcmTaint.timeAdded ?? 0).toISOString()})`);
  assert.equal(got['disruption-target'], marked.length, 'exactly the conditions kube-controller-manager wrote');
  const metrics = await scrapeMetrics(running);
  assert.equal(metricValue(metrics, 'taint_eviction_controller_pod_deletions_total') ?? 0, 0, 'ours deleted nothing (held)');
  assert.equal(await oursTainted(running), 0, 'ours added no NoExecute taint (its breaker is open)');

  // The Events name the object and the field manager; /debug/state keeps the last report per kind.
  // (One report per kind and minute: the Node one may be about another fleet node whose taint
  // kube-controller-manager re-stamped when it started, the first test's dead node.)
  const events = await waitFor('SecondActorSuspected Events', async () => {
    const e = await secondActorEvents();
    return e.some((x) => x.kind === 'Node' && nodes.includes(x.name)) && e.some((x) => x.kind === 'Pod') ? e : undefined;
  }, 30_000, 500);
  const onNode = events.find((x) => x.kind === 'Node' && /added taint/.test(x.message));
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

test("beside kube-controller-manager 1.37.2, ours running its node lifecycle controller only: kube-controller-manager's taint eviction and pod GC are its to run and are not counted", { timeout: 1_800_000 }, async (t) => {
  if (skipUnlessKcm(t)) return;
  stopOursAfter(t);
  const [, , , dead, deleted] = nodes as [string, string, string, string, string];
  // The migration guide's partial set-up: a loop ours leaves off stays on in kube-controller-manager.
  ours = await startTestController(prefix, ['--controllers=node-lifecycle-controller', ...HOLD_FLAGS], { kubeconfig: cp!.kubeconfig });
  const running = ours;
  if (!kcm) await startKcm();
  const deadPods = await podsOn(dead);
  const orphans = await podsOn(deleted);
  fleet!.killNode(dead);
  await fleet!.deleteNode(deleted);
  const marked = await kcmMarked(dead, deadPods.length);
  await waitFor("kube-controller-manager's pod GC force-deletes the orphans", async () => (await podsOn(deleted)).length === 0, 150_000, 1000);
  await waitFor('the taint is counted (both run node lifecycle)', async () => ((await counters(running))['taint'] ?? 0) >= 1, 30_000, 500);
  const got = await counters(running);
  t.diagnostic(`counted by kind: ${JSON.stringify(got)}; kube-controller-manager marked ${marked.length} pods and force-deleted ${orphans.length} orphans`);
  assert.equal(got['disruption-target'], 0, "the taint manager's and pod GC's conditions are not ours to judge");
  assert.equal(got['pod-deletion'], 0, "nor their deletions or their Events");
  assert.ok((got['event'] ?? 0) >= 1, "the node-controller's Events are (RegisteredNode, NodeNotReady)");
  assert.equal(await oursTainted(running), 0, 'the taint was kube-controller-manager\'s (ours\' breaker is open)');
});
