/**
 * docs/migration.md, "3. Rollback", on a real API server: ours taints a dead node and schedules its
 * pods' deletions, then stops before any deadline; kube-controller-manager 1.37.2 (node lifecycle,
 * taint eviction, pod GC) takes over on the same nodes. What the doc says happens, checked:
 * - the NoExecute taint ours added stays on the node, and kube-controller-manager re-stamps it: its
 *   `timeAdded` becomes kube-controller-manager's own time (`markNodeForTainting` queues every
 *   not-Ready node once, `SwapNodeControllerTaint` writes the taint with a new `timeAdded`);
 * - the pending deadlines are not carried over: kube-controller-manager's taint eviction starts each
 *   pod's `tolerationSeconds` when it first processes the pod (`processPodOnNode`, `startTime := now`),
 *   so the pods are deleted no earlier than its start + tolerationSeconds: after a 10 s gap between
 *   ours stopping and kube-controller-manager starting, at least 10 s after ours' deadline. A
 *   rollback only delays.
 * On a private control plane (kube-controller-manager acts on every node, so never the shared
 * cluster); the 1.37 lane only, like the shadow test that runs kube-controller-manager.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { ControllerProcess, UPSTREAM_CONTROLLERS } from '../../bench/lib/procs.js';
import type { RunningController } from '../../src/cli/run.js';
import { toNode, toPod, type Pod } from '../../src/kube/objects.js';
import { createTestNamespace, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { PrivateControlPlane } from '../support/private-cluster.js';

const GRACE_S = 8;
const TOLERATION_S = 30;
const GAP_S = 10;
const UNREACHABLE_NOEXECUTE = 'node.kubernetes.io/unreachable:NoExecute';
const ROOT = join(import.meta.dirname, '..', '..');
const LANE = process.env['NLC_K8S_VERSION'] ?? '1.37';

let cp: PrivateControlPlane | undefined;
let fleet: Fleet | undefined;
let kcm: ControllerProcess | undefined;
let ours: RunningController | undefined;

after(async () => {
  await ours?.stop();
  await kcm?.stop();
  await fleet?.stop();
  await cp?.run('down').catch(() => undefined);
  await cp?.remove();
});

/** kube-controller-manager of the lane, built on first use (as test/integration/shadow.test.ts). */
function kubeControllerManagerBinary(): string {
  const script = join(ROOT, 'scripts/control-plane.sh');
  execFileSync('bash', [script, 'install', '--with-kcm'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 1_200_000 });
  return execFileSync('bash', [script, 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
}

test('rollback: kube-controller-manager keeps and re-stamps our NoExecute taint, and restarts the pods\' tolerations (later, never sooner)', { timeout: 900_000 }, async (t) => {
  if (LANE !== '1.37') {
    t.skip(`kube-controller-manager takes over on the 1.37 lane only (lane ${LANE}): the doc describes 1.37.2`);
    return;
  }
  const upstreamBinary = kubeControllerManagerBinary();
  cp = await PrivateControlPlane.create();
  await cp.run('up');
  const clients = await cp.clients();
  const prefix = uniquePrefix('rollback');
  await createTestNamespace(clients, prefix);
  fleet = new Fleet({
    clients,
    prefix,
    namespace: prefix,
    zones: 1,
    nodesPerZone: 3,
    podsPerNode: 2,
    podMix: { tolerationSeconds: 1 },
    tolerationSeconds: TOLERATION_S,
    leaseRenewIntervalMs: 1000,
    nodeStatusUpdateFrequencyMs: 10_000,
  });
  await fleet.start();

  // Ours acts alone first.
  ours = await startTestController(prefix, [`--node-monitor-grace-period=${GRACE_S}s`, '--node-monitor-period=1s', '--node-eviction-rate=10'], { kubeconfig: cp.kubeconfig });
  const acting = ours;
  await waitFor('ours sees the fleet', () => acting.nodeLifecycle?.view().nodes.length === 3, 30_000);
  const victim = fleet.nodeNames()[0] as string;
  const victimPods = (await clients.core.listNamespacedPod({ namespace: prefix, fieldSelector: `spec.nodeName=${victim}` })).items.map(toPod).filter((p): p is Pod => p !== undefined);
  assert.equal(victimPods.length, 2);
  fleet.killNode(victim);

  const taintOf = async () => toNode(await clients.core.readNode({ name: victim }))?.taints.find((x) => `${x.key}:${x.effect}` === UNREACHABLE_NOEXECUTE);
  const oursTaint = await waitFor('ours taints the dead node NoExecute', taintOf, GRACE_S * 1000 + 30_000, 200);
  assert.ok(oursTaint.timeAdded !== undefined, 'ours stamps timeAdded');
  const oursDeadline = oursTaint.timeAdded + TOLERATION_S * 1000;
  // Ours stops well before the deadline: nothing of ours deletes a pod.
  await ours.stop();
  ours = undefined;
  assert.ok(Date.now() < oursDeadline - 10_000, 'ours stopped at least 10 s before its deadline');

  // The rollback's gap (ours gone, kube-controller-manager not yet back): nobody acts for GAP_S.
  await new Promise((r) => setTimeout(r, GAP_S * 1000));
  const kcmStart = Date.now();
  const logDir = process.env['NLC_TEST_LOG_DIR'] ?? tmpdir();
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

  // The taint is re-stamped with kube-controller-manager's time (whole seconds). Upstream's first
  // monitor pass strips it from every node it observes for the first time (monitorNodeHealth:
  // `for i := range added { … nc.markNodeAsReachable(ctx, added[i]) }`) and its tainting pass adds it
  // again at once (node-lifecycle.md #6), so the 200 ms poll may or may not see it absent: allowed
  // only then, in the first seconds after kube-controller-manager started, never later.
  const removedAt: number[] = [];
  const restamped = await waitFor(
    'kube-controller-manager re-stamps the NoExecute taint',
    async () => {
      const taint = await taintOf();
      if (!taint) removedAt.push(Date.now());
      return taint?.timeAdded !== undefined && taint.timeAdded !== oursTaint.timeAdded ? taint : undefined;
    },
    120_000,
    200,
  );
  for (const at of removedAt) assert.ok(at - kcmStart <= 20_000, `the NoExecute taint was absent ${at - kcmStart} ms after kube-controller-manager started, later than its start-up strip`);
  assert.ok((restamped.timeAdded ?? 0) >= Math.floor(kcmStart / 1000) * 1000, `re-stamped at ${restamped.timeAdded}, before kube-controller-manager started (${kcmStart})`);

  // The pods go, but only a full toleration after kube-controller-manager started: later than ours'.
  await waitFor(
    'kube-controller-manager deletes both pods',
    async () => {
      const live = (await clients.core.listNamespacedPod({ namespace: prefix, fieldSelector: `spec.nodeName=${victim}` })).items.map(toPod);
      return live.every((p) => p === undefined || p.deletionTimestamp !== undefined);
    },
    TOLERATION_S * 1000 + 120_000,
    500,
  );
  const events = (await clients.core.listNamespacedEvent({ namespace: prefix })).items;
  for (const p of victimPods) {
    const ev = events.find((e) => e.reason === 'TaintManagerEviction' && e.involvedObject.name === p.name && e.message?.startsWith('Marking for deletion'));
    assert.ok(ev, `kube-controller-manager's TaintManagerEviction Event for ${p.name}`);
    assert.equal(ev.source?.component ?? ev.reportingComponent, 'taint-eviction-controller');
    const at = new Date((ev.eventTime ?? ev.firstTimestamp) as unknown as string).getTime();
    // Event times have microsecond (eventTime) or second (firstTimestamp) precision: 1 s of slack.
    assert.ok(at >= kcmStart + TOLERATION_S * 1000 - 1000, `${p.name} deleted at ${new Date(at).toISOString()}, less than tolerationSeconds after kube-controller-manager started (${new Date(kcmStart).toISOString()})`);
    // A restarted clock, not ours' deadline carried over: at least the gap later.
    assert.ok(at >= oursDeadline + GAP_S * 1000 - 1000, `${p.name} deleted at ${new Date(at).toISOString()}, not a full gap after ours' deadline ${new Date(oursDeadline).toISOString()}`);
    t.diagnostic(`${p.name}: ours' deadline ${new Date(oursDeadline).toISOString()}, kube-controller-manager deleted at ${new Date(at).toISOString()} (+${((at - oursDeadline) / 1000).toFixed(1)} s)`);
  }
});
