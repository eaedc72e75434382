/**
 * No eviction decided on time the controller could not see (issue 14 item 4), and no deletion
 * replayed after an outage (issue 53 item 4). Each test runs the reported scenario on a private
 * control plane (the API server is stopped and started, so never the shared cluster):
 *
 * a node dies and the node lifecycle controller taints it `node.kubernetes.io/unreachable:NoExecute`;
 * its two pods tolerate that for 15 s; the API server is then gone for 25 s, so both deadlines pass
 * while the controller is blind; the node comes back — after the API server and our watch streams
 * are back (issue 14), or during the outage, so that its first heartbeats land the moment the API
 * server serves again (issue 53). kube-controller-manager keeps the pods and removes the taint (0
 * deletions in 5 of 5 runs of the issue 53 timeline); so must we.
 * - Before the sight hold (src/tainteviction/blindhold.ts) the taint manager deleted both pods
 *   within one sight poll (500 ms) of regaining sight, before the heartbeat could be seen.
 * - Before the send-time re-decision (issue 53 item 4), with the kubelet back during the outage, a
 *   deletion decided just before the node lifecycle controller judged the node Ready went out 34 ms
 *   after that judgement held it (3 of 7 runs, more with the CPU busy).
 *
 * `NLC_BLIND_TEST_REPEAT=N` runs each scenario N times (issue 53 asks for 5 passes with the CPU busy:
 * run it beside two `yes > /dev/null`).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import type { RunningController } from '../../src/cli/run.js';
import type { KubeClients } from '../../src/kube/client.js';
import { toNode, toPod, type Pod } from '../../src/kube/objects.js';
import { createTestNamespace, holdsFor, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { PrivateControlPlane } from '../support/private-cluster.js';
import { reconnectWindowMs } from '../fuzzdiff/compare.js';

const GRACE_MS = 8000;
const TOLERATION_S = 15;
const OUTAGE_MS = 25_000;
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const REPEAT = Math.max(1, Number(process.env['NLC_BLIND_TEST_REPEAT'] ?? 1) || 1);

/** What each scenario started, stopped in `after` even when an assertion failed. */
const running: { cp?: PrivateControlPlane; fleet?: Fleet; controller?: RunningController } = {};

async function tearDown(): Promise<void> {
  await running.controller?.stop();
  await running.fleet?.stop();
  await running.cp?.run('down').catch(() => undefined);
  await running.cp?.remove();
  delete running.controller;
  delete running.fleet;
  delete running.cp;
}

after(tearDown);

async function podsOn(clients: KubeClients, namespace: string, node: string): Promise<Pod[]> {
  const list = await clients.core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${node}` });
  return list.items.map(toPod).filter((p): p is Pod => p !== undefined);
}

async function unreachableTaint(clients: KubeClients, node: string): Promise<{ timeAdded?: number } | undefined> {
  const n = toNode(await clients.core.readNode({ name: node }));
  return n?.taints.find((t) => t.key === UNREACHABLE && t.effect === 'NoExecute');
}

/**
 * One run of the scenario.
 * @param reviveDuringOutage true: the node comes back while the API server is down (its heartbeats
 *   fail until it serves again); false: one second after our controller sees the cluster again.
 */
async function scenario(reviveDuringOutage: boolean): Promise<void> {
  const cp = (running.cp = await PrivateControlPlane.create());
  await cp.run('up');
  const clients = await cp.clients();
  const prefix = uniquePrefix('blind');
  await createTestNamespace(clients, prefix);
  const fleet = (running.fleet = new Fleet({
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
  }));
  await fleet.start();
  const controller = (running.controller = await startTestController(
    prefix,
    [`--node-monitor-grace-period=${GRACE_MS / 1000}s`, '--node-monitor-period=1s', '--node-eviction-rate=10'],
    { kubeconfig: cp.kubeconfig },
  ));
  assert.ok(controller.taintEviction && controller.nodeLifecycle, 'both controllers run');
  await waitFor('nodes registered', () => controller.nodeLifecycle?.view().nodes.length === 3, 15_000);

  const victim = fleet.nodeNames()[0] as string;
  const pods = await podsOn(clients, prefix, victim);
  assert.equal(pods.length, 2);
  for (const p of pods) assert.ok(p.tolerations.some((t) => t.key === UNREACHABLE && t.tolerationSeconds === TOLERATION_S), `${p.name} tolerates unreachable for ${TOLERATION_S} s`);

  fleet.killNode(victim);
  const taint = await waitFor('the dead node is tainted unreachable:NoExecute', () => unreachableTaint(clients, victim), GRACE_MS + 30_000, 200);
  assert.ok(taint.timeAdded !== undefined);
  await waitFor('the taint manager scheduled both deletions', () => controller.taintEviction?.view().filter((v) => v.node === victim).length === 2, 10_000, 100);

  await cp.run('stop-apiserver');
  const stoppedAt = Date.now();
  const deadline = taint.timeAdded + TOLERATION_S * 1000;
  // The scenario needs the deadline inside the outage (timeAdded has whole seconds: up to 1 s early).
  assert.ok(stoppedAt < deadline - 1000, `API server stopped ${deadline - stoppedAt} ms before the deadline`);
  if (reviveDuringOutage) {
    // After the deadline, still during the outage: its heartbeats fail (logged by the fleet) and are
    // retried on its schedule, so the first one lands within a second of the API server's return.
    await new Promise((r) => setTimeout(r, Math.max(0, deadline + 2000 - Date.now())));
    await fleet.reviveNode(victim);
    await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + OUTAGE_MS - Date.now())));
  } else await new Promise((r) => setTimeout(r, OUTAGE_MS));
  await cp.run('start-apiserver');
  assert.ok(Date.now() > deadline + 5000, 'the deadline passed while the API server was down');
  // Our informers reconnect on their own backoff, as client-go's reflector (reconnectWindowMs: the
  // first attempt after the return, then one more step before the relist a 410 forces).
  await waitFor('the controller sees the cluster again', () => controller.nodeLifecycle?.view().canSeeCluster, reconnectWindowMs(Date.now() - stoppedAt) + 10_000, 50);
  if (!reviveDuringOutage) {
    // The node's first heartbeat lands a second after they did — a kubelet retries every few
    // seconds — so the race is the one issue 14 reported: the overdue deletions are due the moment
    // sight returns, and the node lifecycle controller can only remove the taint once it has seen
    // that heartbeat.
    await new Promise((r) => setTimeout(r, 1000));
    await fleet.reviveNode(victim);
  }

  await waitFor('the node lifecycle controller removed the taint', async () => (await unreachableTaint(clients, victim)) === undefined, 60_000, 200);
  // Well past the hold (a grace period after sight returned): nothing may still be pending.
  await waitFor('no deletion pending on the revived node', () => !controller.taintEviction?.view().some((v) => v.node === victim), 30_000, 200);
  // Absence: nothing is pending any more, and the hold ended a grace period after sight returned;
  // a deletion that escaped the hold would show within another grace period (+ 2 s for the writes).
  await holdsFor(
    'both pods kept, neither terminating',
    async () => (await podsOn(clients, prefix, victim)).every((p) => p.deletionTimestamp === undefined),
    GRACE_MS + 2000,
    500,
  );

  const kept = await podsOn(clients, prefix, victim);
  assert.deepEqual(
    kept.map((p) => [p.name, p.deletionTimestamp]),
    pods.map((p) => [p.name, undefined]),
    'both pods kept, neither terminating',
  );
  const events = await clients.core.listNamespacedEvent({ namespace: prefix, fieldSelector: 'reason=TaintManagerEviction' });
  const marked = events.items.filter((e) => (e.message ?? '').startsWith('Marking for deletion'));
  assert.deepEqual(marked.map((e) => e.message), [], 'no pod was marked for deletion');
}

for (const [name, reviveDuringOutage] of [
  ['pods whose toleration ran out during an API outage are kept when their node is back; the taint is removed', false],
  ['pods whose toleration ran out during an API outage are kept when their node came back during it; no deletion is replayed', true],
] as const) {
  test(name, { timeout: 420_000 * REPEAT }, async () => {
    for (let i = 0; i < REPEAT; i++) {
      try {
        await scenario(reviveDuringOutage);
      } finally {
        await tearDown();
      }
    }
  });
}
