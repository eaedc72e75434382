/**
 * Issue 16 items 3 and 4, acceptance: kube-controller-manager 1.37.2 (node lifecycle, taint
 * eviction and pod GC controllers) and ours with `--dry-run` run side by side on a private control
 * plane (kube-controller-manager acts on every node, so never the shared cluster) over the same
 * simulated fleet through a node failure:
 * - ours writes nothing: its own request counter (`rest_client_requests_total`, every request its
 *   clients send) shows no POST/PUT/PATCH/DELETE, no Event in the cluster names its identity, and the
 *   dead node's taints and its pods' deletions are kube-controller-manager's alone;
 * - ours decides anyway, on its own would-be state ("would taint", then "would delete pod" after
 *   the pods' tolerationSeconds, counted in node_lifecycle_controller_dry_run_decisions_total);
 * - `shadow-report` puts both side by side, and its rows carry exactly the times kube-controller-manager
 *   left in the cluster (taint timeAdded, Events) and the shadow's decision times.
 * With `NLC_TEST_LOG_DIR` set, the report's text goes to `<dir>/shadow-report.txt` (the README shows one).
 *
 * A second test runs a shadow alone, with leader election, on the shared cluster (scoped to its own
 * fleet, which no other controller manages): it holds its own Lease, `node-lifecycle-controller-shadow`,
 * and a node death leaves the cluster exactly as it was — no taint, no Unknown condition, no pod
 * deletion, no Event — while the shadow's decisions go all the way to "would delete pod".
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { ControllerProcess, UPSTREAM_CONTROLLERS } from '../../bench/lib/procs.js';
import type { RunningController } from '../../src/cli/run.js';
import { toNode, toPod, type Pod } from '../../src/kube/objects.js';
import type { ShadowState } from '../../src/shadow/decisions.js';
import { SECOND_ACTOR_KINDS } from '../../src/secondactor/kinds.js';
import type { ShadowReport } from '../../src/shadow/report.js';
import { runShadowReportCommand } from '../../src/cli/shadow-report.js';
import { createTestNamespace, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricValue, scrapeMetrics, startTestController } from '../support/controller.js';
import { PrivateControlPlane } from '../support/private-cluster.js';

const GRACE_S = 8;
const TOLERATION_S = 20;
const UNREACHABLE_NOEXECUTE = 'node.kubernetes.io/unreachable:NoExecute';
const ROOT = join(import.meta.dirname, '..', '..');
const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

let cp: PrivateControlPlane | undefined;
let fleet: Fleet | undefined;
let kcm: ControllerProcess | undefined;
let shadow: RunningController | undefined;

after(async () => {
  await shadow?.stop();
  await kcm?.stop();
  await fleet?.stop();
  await cp?.run('down').catch(() => undefined);
  await cp?.remove();
});

async function shadowState(c: RunningController): Promise<ShadowState> {
  const res = await fetch(`http://127.0.0.1:${c.port}/debug/state`);
  const body = (await res.json()) as { shadow?: ShadowState };
  assert.ok(body.shadow, '/debug/state has a shadow section');
  return body.shadow;
}

async function reportOf(args: string[]): Promise<string> {
  let out = '';
  await runShadowReportCommand(args, { out: (s) => (out += s), err: () => undefined });
  return out;
}

/** Our own writes: the sum of rest_client_requests_total over write methods. */
function writesSent(metrics: string): number {
  let n = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue;
    if (WRITE_METHODS.some((m) => line.includes(`method="${m}"`))) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

/**
 * kube-controller-manager of the lane, built on first use (CI starts with an empty cache): the
 * control plane's `install` builds only kube-apiserver and etcd. Up to ~5 min on 2 cores when cold;
 * the build is cached under the lane's bin directory afterwards.
 */
function kubeControllerManagerBinary(): string {
  const script = join(ROOT, 'scripts/control-plane.sh');
  execFileSync('bash', [script, 'install', '--with-kcm'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 1_200_000 });
  return execFileSync('bash', [script, 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
}

const LANE = process.env['NLC_K8S_VERSION'] ?? '1.37';

test('kube-controller-manager and a --dry-run shadow through a node failure: zero writes by the shadow, and the report matches both', { timeout: 1_800_000 }, async (t) => {
  if (LANE !== '1.37') {
    // The report compares with 1.37's taint-eviction-controller (its Events and controller name);
    // 1.20's taint manager lives inside the node lifecycle controller. The shadow alone (below) runs on every lane.
    t.skip(`kube-controller-manager side by side runs on the 1.37 lane only (lane ${LANE})`);
    return;
  }
  const upstreamBinary = kubeControllerManagerBinary();
  cp = await PrivateControlPlane.create();
  await cp.run('up');
  const clients = await cp.clients();
  const prefix = uniquePrefix('shadow');
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

  const shared = { nodeMonitorPeriod: '1s', nodeMonitorGracePeriod: `${GRACE_S}s`, nodeStartupGracePeriod: '1m', nodeEvictionRate: 10, secondaryNodeEvictionRate: 0.01, kubeApiQps: 20, kubeApiBurst: 30 };
  const logDir = process.env['NLC_TEST_LOG_DIR'] ?? tmpdir();
  kcm = new ControllerProcess(
    {
      kind: 'upstream',
      kubeconfig: cp.kubeconfig,
      flags: shared,
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
  // Subscribed before the shadow starts: waitForLine sees only lines logged from now on, and
  // kube-controller-manager logs its start-up within a second, often before the shadow is up.
  const kcmRunning = kcm.waitForLine(/Started controller|Starting controller|Starting node controller|Caches are synced/, 120_000);
  kcmRunning.catch(() => undefined);
  shadow = await startTestController(
    prefix,
    ['--dry-run', `--node-monitor-grace-period=${GRACE_S}s`, '--node-monitor-period=1s', '--node-eviction-rate=10'],
    { kubeconfig: cp.kubeconfig },
  );
  const running = shadow;
  assert.ok(running.config.dryRun && running.taintEviction && running.nodeLifecycle);
  await waitFor('the shadow sees the fleet', () => running.nodeLifecycle?.view().nodes.length === 4, 30_000);
  await waitFor('kube-controller-manager runs its controllers', () => kcmRunning.then(() => true), 120_000);

  const victim = fleet.nodeNames()[0] as string;
  const victimPods = (await clients.core.listNamespacedPod({ namespace: prefix, fieldSelector: `spec.nodeName=${victim}` })).items.map(toPod).filter((p): p is Pod => p !== undefined);
  assert.equal(victimPods.length, 2);
  fleet.killNode(victim);

  // Both act: kube-controller-manager for real, the shadow in its overlay.
  const kcmTaint = await waitFor(
    'kube-controller-manager taints the dead node',
    async () => toNode(await clients.core.readNode({ name: victim }))?.taints.find((x) => `${x.key}:${x.effect}` === UNREACHABLE_NOEXECUTE),
    GRACE_S * 1000 + 30_000,
    200,
  );
  await waitFor('the shadow would taint it', async () => (await shadowState(running)).decisions.some((d) => d.action === 'taint' && d.object.name === victim && d.detail === UNREACHABLE_NOEXECUTE), 30_000, 200);
  await waitFor(
    'both pods deleted by kube-controller-manager and would-be deleted by the shadow',
    async () => {
      const s = await shadowState(running);
      const ours = victimPods.every((p) => s.decisions.some((d) => d.action === 'delete-pod' && d.object.uid === p.uid));
      const live = (await clients.core.listNamespacedPod({ namespace: prefix, fieldSelector: `spec.nodeName=${victim}` })).items.map(toPod);
      return ours && live.every((p) => p?.deletionTimestamp !== undefined);
    },
    TOLERATION_S * 1000 + 60_000,
    500,
  );

  // Zero writes by our identity.
  const metrics = await scrapeMetrics(running);
  assert.equal(writesSent(metrics), 0, 'rest_client_requests_total shows no write method');
  assert.ok((metricValue(metrics, 'rest_client_requests_total', { method: 'GET' }) ?? 0) > 0, 'the counter does count our requests (the live reads)');
  assert.ok((metricValue(metrics, 'node_lifecycle_controller_dry_run_decisions_total', { controller: 'node-lifecycle-controller', action: 'taint' }) ?? 0) >= 1);
  assert.equal(metricValue(metrics, 'node_lifecycle_controller_dry_run_decisions_total', { controller: 'taint-eviction-controller', action: 'delete-pod' }), 2);
  // The second-actor check does not run in --dry-run: kube-controller-manager acting is the point,
  // and the shadow's would-be writes (its overlay) are never anybody's writes.
  for (const kind of SECOND_ACTOR_KINDS) assert.equal(metricValue(metrics, 'node_lifecycle_second_actor_actions_total', { kind }), 0, `no second-actor action counted (${kind})`);
  const events = (await clients.core.listEventForAllNamespaces({})).items;
  assert.deepEqual(
    events.filter((e) => e.source?.host === running.identity || e.reportingInstance === running.identity).map((e) => e.reason),
    [],
    'no Event from the shadow',
  );
  assert.ok(events.some((e) => e.reason === 'TaintManagerEviction' && e.source?.component === 'taint-eviction-controller'), "kube-controller-manager's evictions are recorded");

  // The report, as JSON and as text.
  const args = ['--endpoint', `http://127.0.0.1:${running.port}`, '--kubeconfig', cp.kubeconfig, '--node-selector', `nlc.sim/fleet=${prefix}`, '--min-history', '1m'];
  const report = JSON.parse(await reportOf([...args, '-o', 'json'])) as ShadowReport;
  const text = await reportOf(args);
  t.diagnostic(`\n${text}`);
  if (process.env['NLC_TEST_LOG_DIR']) writeFileSync(join(logDir, 'shadow-report.txt'), text);
  const s = await shadowState(running);

  const taintRow = report.nodes.find((r) => r.object === victim && r.action === `taint ${UNREACHABLE_NOEXECUTE}`);
  assert.ok(taintRow, 'a row for the NoExecute taint');
  assert.equal(taintRow.kcmAtMs, kcmTaint.timeAdded, "KCM's time is the taint's timeAdded");
  assert.equal(taintRow.oursAtMs, s.decisions.find((d) => d.action === 'taint' && d.object.name === victim && d.detail === UNREACHABLE_NOEXECUTE)?.atMs);
  const unknownRow = report.nodes.find((r) => r.object === victim && r.action === 'mark Unknown');
  assert.ok(unknownRow?.kcmAtMs !== undefined && unknownRow.oursAtMs !== undefined, 'both marked the node Unknown');
  for (const p of victimPods) {
    const row = report.pods.find((r) => r.object === `${prefix}/${p.name}` && r.action === 'delete pod');
    assert.ok(row?.kcmAtMs !== undefined && row.oursAtMs !== undefined, `both deleted ${p.name}`);
    const ev = events.find((e) => e.reason === 'TaintManagerEviction' && e.involvedObject.name === p.name && e.message?.startsWith('Marking for deletion'));
    assert.ok(ev);
    const evAt = new Date((ev.eventTime ?? ev.firstTimestamp) as unknown as string).getTime();
    assert.equal(row.kcmAtMs, evAt, "KCM's time is its TaintManagerEviction Event");
    assert.equal(row.oursAtMs, s.decisions.find((d) => d.action === 'delete-pod' && d.object.uid === p.uid)?.atMs);
  }
  // Same flags, same failure: both act within the tolerance (10 s: the monitor period, watch latency and
  // timeAdded's whole seconds on each side), and no compared action concerns a healthy node. (At
  // start-up the shadow also decides to untaint the nodes' start-up not-ready:NoSchedule taints that
  // kube-controller-manager removes too: "not compared", a removed taint leaves no time behind.)
  for (const r of [taintRow, unknownRow, ...report.pods.filter((x) => x.action === 'delete pod')]) assert.equal(r?.verdict, 'agree', JSON.stringify(r));
  const compared = [...report.nodes, ...report.pods].filter((r) => r.verdict !== 'not compared');
  assert.deepEqual([...new Set(compared.map((r) => r.node ?? r.object))], [victim]);
  assert.equal(report.summary.disagreements, 0, text);
});

test('a shadow alone, with leader election: its own Lease, and a dead node left exactly as it was', { timeout: 300_000 }, async () => {
  const clients = testClients();
  const prefix = uniquePrefix('shadow-le');
  await createTestNamespace(clients, prefix);
  const f = new Fleet({
    clients,
    prefix,
    namespace: prefix,
    zones: 1,
    nodesPerZone: 2,
    podsPerNode: 1,
    podMix: { tolerationSeconds: 1 },
    tolerationSeconds: 5,
    leaseRenewIntervalMs: 1000,
    nodeStatusUpdateFrequencyMs: 10_000,
  });
  await f.start();
  let c: RunningController | undefined;
  try {
    c = await startTestController(prefix, [
      '--dry-run',
      `--node-monitor-grace-period=${GRACE_S}s`,
      '--node-monitor-period=1s',
      '--node-eviction-rate=10',
      '--leader-elect=true',
      `--leader-elect-resource-namespace=${prefix}`,
      '--leader-elect-lease-duration=3s',
      '--leader-elect-renew-deadline=2s',
      '--leader-elect-retry-period=500ms',
    ]);
    const running = c;
    const lease = await clients.coordination.readNamespacedLease({ name: 'node-lifecycle-controller-shadow', namespace: prefix });
    assert.equal(lease.spec?.holderIdentity, running.identity, 'the shadow leads through its own Lease');
    const victim = f.nodeNames()[0] as string;
    const [victimPod] = (await clients.core.listNamespacedPod({ namespace: prefix, fieldSelector: `spec.nodeName=${victim}` })).items.map(toPod);
    assert.ok(victimPod);
    const taintsBefore = toNode(await clients.core.readNode({ name: victim }))?.taints;
    f.killNode(victim);
    await waitFor('the shadow would delete the pod', async () => (await shadowState(running)).decisions.some((d) => d.action === 'delete-pod' && d.object.uid === victimPod.uid), GRACE_S * 1000 + 30_000, 500);
    const s = await shadowState(running);
    // (Also "untaint": the simulated kubelet registers its node with not-ready:NoSchedule, as a real one does.)
    const actions = new Set(s.decisions.filter((d) => d.node === victim).map((d) => d.action));
    for (const a of ['mark-unknown', 'taint', 'mark-pod-not-ready', 'delete-pod'] as const) assert.ok(actions.has(a), `the shadow decided ${a}`);
    const node = toNode(await clients.core.readNode({ name: victim }));
    assert.deepEqual(node?.taints, taintsBefore, "the real node's taints are as they were (not even the start-up taint was removed)");
    assert.equal(node?.conditions.find((x) => x.type === 'Ready')?.status, 'True', 'Ready was not marked Unknown for real');
    const pod = toPod(await clients.core.readNamespacedPod({ namespace: prefix, name: victimPod.name }));
    assert.equal(pod?.deletionTimestamp, undefined, 'the pod was not deleted');
    assert.equal(pod?.conditions.find((x) => x.type === 'Ready')?.status, 'True', 'the pod was not marked NotReady');
    const events = (await clients.core.listEventForAllNamespaces({})).items.filter((e) => e.source?.host === running.identity || e.reportingInstance === running.identity);
    assert.deepEqual(events.map((e) => e.reason), [], 'no Event from the shadow, not even LeaderElection');
  } finally {
    await c?.stop();
    await f.stop();
    await f.cleanup();
  }
});
