/**
 * Issue 8 acceptance: `status -o json` and `explain pod|node -o json` against a real controller
 * while a node is dead with pending pod deletions and another zone is paused — the output matches
 * the cluster and the controller's state, deadlines to within 1 s, and the paused zone names its
 * reason. Also the in-cluster path (leader Lease → API server pod proxy) and the kubectl plugin.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import type { RunningController } from '../../src/cli/run.js';
import { runExplainCommand, type NodeReport, type PodReport } from '../../src/cli/explain.js';
import { runStatusCommand } from '../../src/cli/status.js';
import type { StatusReport } from '../../src/explain/status.js';
import { toLease, toNode, toPod, type Node, type Pod } from '../../src/kube/objects.js';
import { createTestNamespace, kubeconfigPath, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { freePort } from '../support/private-cluster.js';
import { createProxiedLeaderPod, hostIPv4 } from '../support/proxy-pod.js';

const run = promisify(execFile);
const GRACE_S = 4;
const TOLERATION_S = 120;
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const clients = testClients();
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a command in-process and parses its JSON output. */
async function json<T>(command: typeof runStatusCommand, argv: string[]): Promise<{ out: T; atMs: number }> {
  let text = '';
  const atMs = Date.now();
  const code = await command(argv, { out: (t) => (text += t), err: () => undefined });
  assert.equal(code, 0);
  return { out: JSON.parse(text) as T, atMs };
}

/** When a pod's deletion is due: its node's unreachable taint's timeAdded + its tolerationSeconds for it. */
function expectedDeadline(node: Node, pod: Pod): number | undefined {
  const taint = node.taints.find((t) => t.key === UNREACHABLE && t.effect === 'NoExecute');
  const tol = pod.tolerations.find((t) => t.key === UNREACHABLE && (t.effect === 'NoExecute' || !t.effect));
  if (taint?.timeAdded === undefined || tol?.tolerationSeconds === undefined) return undefined;
  return taint.timeAdded + tol.tolerationSeconds * 1000;
}

describe('status and explain against a live controller (issue 8)', { concurrency: false }, () => {
  const prefix = uniquePrefix('insp');
  let fleet: Fleet;
  let controller: RunningController;
  let endpoint: string;
  let dead: string;
  let pausedZoneDead: string[];
  const zoneName = (i: number): string => fleet.zones()[i] as string;

  before(async () => {
    await createTestNamespace(clients, prefix);
    fleet = new Fleet({
      clients,
      prefix,
      namespace: prefix,
      zones: 3,
      nodesPerZone: 4,
      podsPerNode: 5,
      tolerationSeconds: TOLERATION_S,
      leaseRenewIntervalMs: 1000,
      leaseDurationSeconds: GRACE_S,
      nodeStatusUpdateFrequencyMs: 60_000,
    });
    await fleet.start();
    // The plain port on loopback for --endpoint; the secure port on all interfaces (the default
    // --bind-address) for the API server's pod proxy, which passes no credentials on: so /debug/state
    // is made an always-allow path, the documented opt-in for the in-cluster path (docs/secure-serving.md).
    controller = await startTestController(prefix, [
      `--node-monitor-grace-period=${GRACE_S}s`,
      '--node-monitor-period=1s',
      `--secure-port=${await freePort()}`,
      '--authorization-always-allow-paths=/healthz,/readyz,/livez,/debug/state',
    ]);
    endpoint = `http://127.0.0.1:${controller.port}`;
    await waitFor('zones Normal', () => controller.nodeLifecycle?.view().zones.every((z) => z.state === 'Normal') && controller.nodeLifecycle.view().zones.length === 3, 20_000);
    dead = fleet.nodesInZone(zoneName(0))[0] as string;
    pausedZoneDead = fleet.nodesInZone(zoneName(1)).slice(0, 3);
    fleet.killNode(dead);
    for (const n of pausedZoneDead) fleet.killNode(n);
    await waitFor(`${dead} tainted`, async () => toNode(await clients.core.readNode({ name: dead }))?.taints.some((t) => t.key === UNREACHABLE && t.effect === 'NoExecute'), 30_000);
    await waitFor('zone paused', () => controller.nodeLifecycle?.view().zones.some((z) => z.pausedReason !== undefined), 30_000);
    await waitFor('paused zone nodes Unknown', () => pausedZoneDead.every((n) => controller.nodeLifecycle?.view().nodes.find((v) => v.name === n)?.ready === 'Unknown'), 30_000);
    // plain (300 s), tolerationSeconds (120 s) and pvc (300 s) pods are pending on the dead node.
    await waitFor('pending deletions', () => (controller.taintEviction?.view() ?? []).filter((p) => p.node === dead).length >= 3, 10_000);
  });

  after(async () => {
    await controller?.stop();
    await fleet?.stop();
    await fleet?.cleanup();
  });

  test('status -o json: leader, zones, paused zone with its reason, pending deletions with deadlines within 1 s', async () => {
    const { out: r, atMs } = await json<StatusReport>(runStatusCommand, ['--endpoint', endpoint, '-o', 'json']);
    const view = controller.nodeLifecycle?.view();
    assert.ok(view);
    assert.equal(r.leader.identity, controller.identity);
    assert.equal(r.answeredBy, controller.identity);
    assert.equal(r.canSeeCluster, true);
    // Zones as the controller sees them (sizes are static; states are stable while the failures last).
    for (const z of view.zones) {
      const rz = r.zones.find((x) => `"${x.zone}"` === z.zoneLabel);
      assert.ok(rz, `zone ${z.zoneLabel} reported`);
      assert.deepEqual([rz.state, rz.size, rz.unhealthy, rz.ratePerSecond], [z.state, z.size, z.unhealthy, z.rate]);
    }
    const paused = r.zones.find((z) => z.zone.endsWith(`:${zoneName(1)}`));
    assert.equal(paused?.state, 'PartialDisruption');
    assert.equal(paused?.ratePerSecond, 0);
    assert.equal(paused?.queueLength, 3, 'the 3 dead nodes wait in the paused zone\'s queue');
    const reason = view.zones.find((z) => z.zoneLabel === `"${paused?.zone}"`)?.pausedReason;
    assert.ok(reason);
    assert.deepEqual(r.pausedZones, [{ zone: paused?.zone, state: 'PartialDisruption', reason }]);
    assert.match(reason, /PartialDisruption: 3 of 4 nodes are not Ready/);
    assert.notEqual(r.nextTaint?.zone, paused?.zone, 'no taint is due in a paused zone');

    // Pending deletions: the controller's entries, with deadlines = taint timeAdded + tolerationSeconds (±1 s).
    const node = toNode(await clients.core.readNode({ name: dead })) as Node;
    const ours = r.pendingDeletions.filter((p) => p.node === dead);
    assert.deepEqual(
      ours.map((p) => p.pod).sort(),
      (controller.taintEviction?.view() ?? []).filter((p) => p.node === dead).map((p) => p.pod).sort(),
    );
    assert.ok(ours.length >= 3);
    for (const p of ours) {
      const [ns, name] = p.pod.split('/') as [string, string];
      const pod = toPod(await clients.core.readNamespacedPod({ namespace: ns, name })) as Pod;
      const expected = expectedDeadline(node, pod);
      assert.ok(expected !== undefined, `${p.pod} tolerates the taint for a while`);
      assert.ok(Math.abs(Date.parse(p.deadline) - expected) <= 1000, `${p.pod}: deadline ${p.deadline} vs expected ${new Date(expected).toISOString()}`);
      assert.ok(Math.abs(p.deadlineInSeconds - (expected - atMs) / 1000) <= 1, `${p.pod}: deadlineInSeconds ${p.deadlineInSeconds}`);
      assert.deepEqual(p.taints, [`${UNREACHABLE}:NoExecute`]);
    }
  });

  test('explain pod -o json: node, NoExecute taint, matching toleration and the controller\'s deadline (within 1 s)', async () => {
    const podName = fleet.podsOn(dead).find((n) => n.includes('-tolsec-')) as string;
    const { out: e, atMs } = await json<PodReport>(runExplainCommand, ['pod', `${prefix}/${podName}`, '--endpoint', endpoint, '-o', 'json']);
    const node = toNode(await clients.core.readNode({ name: dead })) as Node;
    const pod = toPod(await clients.core.readNamespacedPod({ namespace: prefix, name: podName })) as Pod;
    const expected = expectedDeadline(node, pod) as number;
    assert.equal(e.pod.node, dead);
    assert.equal(e.node?.ready, 'Unknown');
    assert.equal(e.node?.zoneState, 'Normal');
    assert.equal(e.verdict, 'evict-at');
    assert.equal(e.deadlineSource, 'controller');
    assert.ok(Math.abs(Date.parse(e.deadline ?? '') - expected) <= 1000, `deadline ${e.deadline} vs ${new Date(expected).toISOString()}`);
    assert.ok(Math.abs((e.deadlineInSeconds ?? 0) - (expected - atMs) / 1000) <= 1);
    const pending = controller.taintEviction?.view().find((p) => p.pod === `${prefix}/${podName}`);
    assert.equal(e.pendingDeletion?.deadline, new Date(pending?.deadlineMs ?? 0).toISOString());
    assert.equal(e.noExecuteTaints.length, 1);
    assert.equal(e.noExecuteTaints[0]?.taint, `${UNREACHABLE}:NoExecute`);
    assert.equal(e.noExecuteTaints[0]?.tolerates, `${TOLERATION_S}s`);
    assert.deepEqual(e.matchingTolerations, [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_S }]);
    assert.equal(e.blockedByPausedZone, null);
  });

  test('explain pod -o json on a dead node in the paused zone: blocked, naming the zone\'s reason', async () => {
    const podName = fleet.podsOn(pausedZoneDead[0] as string).find((n) => n.includes('-tolsec-')) as string;
    const { out: e } = await json<PodReport>(runExplainCommand, ['pod', `${prefix}/${podName}`, '--endpoint', endpoint, '-o', 'json']);
    const zone = controller.nodeLifecycle?.view().zones.find((z) => z.pausedReason !== undefined);
    assert.equal(e.verdict, 'blocked');
    assert.equal(e.noExecuteTaints.length, 0);
    assert.equal(e.blockedByPausedZone?.reason, zone?.pausedReason);
    assert.equal(e.blockedByPausedZone?.state, 'PartialDisruption');
    assert.deepEqual([e.prospectiveTaint?.taint, e.prospectiveTaint?.tolerates], [`${UNREACHABLE}:NoExecute`, `${TOLERATION_S}s`]);
  });

  test('explain node -o json: health, heartbeat age, zone, taints and pending deletions match the cluster and the controller', async () => {
    const { out: e, atMs } = await json<NodeReport>(runExplainCommand, ['node', dead, '--endpoint', endpoint, '-o', 'json']);
    const lease = toLease(await clients.coordination.readNamespacedLease({ namespace: 'kube-node-lease', name: dead }));
    const nv = controller.nodeLifecycle?.view().nodes.find((n) => n.name === dead);
    assert.equal(e.managed, true);
    assert.equal(e.ready?.status, 'Unknown');
    assert.equal(e.heartbeat.controllerReady, 'Unknown');
    assert.ok(lease?.renewTime !== undefined);
    assert.ok(Math.abs((e.heartbeat.leaseAgeSeconds ?? 0) - (atMs - lease.renewTime) / 1000) <= 1);
    assert.equal(e.heartbeat.probeTimestamp, new Date(nv?.probeTimestamp ?? 0).toISOString());
    assert.equal(e.zone?.state, 'Normal');
    assert.equal(e.queue.queued, false);
    const noExecute = e.taints.find((t) => t.taint === `${UNREACHABLE}:NoExecute`);
    assert.equal(noExecute?.managedBy, 'node-lifecycle-controller');
    assert.equal(e.pods.pendingDeletions, (controller.taintEviction?.view() ?? []).filter((p) => p.node === dead).length);
    assert.equal(e.pods.total, fleet.podsOn(dead).length);

    const { out: p } = await json<NodeReport>(runExplainCommand, ['node', pausedZoneDead[0] as string, '--endpoint', endpoint, '-o', 'json']);
    assert.equal(p.zone?.state, 'PartialDisruption');
    assert.ok(p.zone?.pausedReason);
    assert.equal(p.queue.queued, true);
    assert.equal(p.queue.etaInSeconds, null, 'no ETA while the zone is paused');
    assert.ok(p.explanation.some((l) => l.includes('NOT tainted') && l.includes(p.zone?.pausedReason ?? '?')));
  });

  test('in a cluster: the leader is found through its Lease and read through the API server\'s pod proxy', async (t) => {
    const ip = hostIPv4();
    if (!ip) return t.skip('no non-loopback IPv4 address for the API server to proxy to');
    const podName = `${prefix}-leader`;
    const leader = await createProxiedLeaderPod(clients, prefix, podName, 'nlc-leader', ip);
    t.after(leader.remove);
    const { out: r } = await json<StatusReport>(runStatusCommand, [
      '--kubeconfig',
      kubeconfigPath(),
      '--namespace',
      prefix,
      '--lease',
      'nlc-leader',
      '--port',
      String(controller.securePort),
      '--via',
      'proxy',
      '-o',
      'json',
    ]);
    assert.equal(r.source.kind, 'pod-proxy');
    assert.deepEqual(r.source.pod, { namespace: prefix, name: podName });
    assert.equal(r.answeredBy, controller.identity, 'the answer came from our controller through the proxy');
    assert.ok(r.pausedZones.length === 1);
  });

  test('the kubectl plugin runs status', async () => {
    const { stdout } = await run(`${root}bin/kubectl-node_lifecycle`, ['status', '--endpoint', endpoint, '-o', 'json'], { cwd: '/', timeout: 60_000 });
    const r = JSON.parse(stdout) as StatusReport;
    assert.equal(r.answeredBy, controller.identity);
    assert.equal(r.pausedZones.length, 1);
  });
});
