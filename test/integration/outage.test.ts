/**
 * Issue 3 acceptance 7: the API server is stopped for 20 s and restarted while the controller runs.
 * Nothing may be marked Unknown because of the outage, and the controller must recover by itself.
 * Runs on a private control plane so the shared one stays up for the other test files.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import type { RunningController } from '../../src/cli/run.js';
import { createTestNamespace, holdsFor, uniquePrefix, waitFor } from '../support/cluster.js';
import { reconnectWindowMs } from '../fuzzdiff/compare.js';
import { startTestController } from '../support/controller.js';
import { NodeObserver } from '../support/observe.js';
import { PrivateControlPlane } from '../support/private-cluster.js';

const GRACE_MS = 4000;
let cp: PrivateControlPlane | undefined;
let fleet: Fleet | undefined;
let controller: RunningController | undefined;
let observer: NodeObserver | undefined;

after(async () => {
  observer?.stop();
  await controller?.stop();
  await fleet?.stop();
  await cp?.run('down').catch(() => undefined);
  await cp?.remove();
});

test('an API server outage of 20 s is not mistaken for dead nodes, and the controller recovers without a restart', { timeout: 420_000 }, async () => {
  cp = await PrivateControlPlane.create();
  await cp.run('up');
  const clients = await cp.clients();
  const prefix = uniquePrefix('outage');
  await createTestNamespace(clients, prefix);
  fleet = new Fleet({ clients, prefix, namespace: prefix, zones: 3, nodesPerZone: 2, podsPerNode: 1, leaseRenewIntervalMs: 1000, nodeStatusUpdateFrequencyMs: 60_000 });
  await fleet.start();
  controller = await startTestController(prefix, [`--node-monitor-grace-period=${GRACE_MS / 1000}s`, '--node-monitor-period=1s', '--node-eviction-rate=10'], {
    kubeconfig: cp.kubeconfig,
  });
  observer = new NodeObserver(clients, `nlc.sim/fleet=${prefix}`, 200);
  await observer.start();
  await waitFor('nodes registered', () => controller?.nodeLifecycle?.view().nodes.length === 6, 15_000);

  const stoppedAt = Date.now();
  await cp.run('stop-apiserver');
  await new Promise((r) => setTimeout(r, 20_000));
  const restartedAt = Date.now();
  await cp.run('start-apiserver');

  // The informers reconnect on their own, as client-go's reflector: the backoff grew during the
  // outage, and the relist the restarted watch cache's 410 forces waits one more step
  // (reconnectWindowMs); then two more grace periods must pass without any node judged dead.
  await waitFor('the controller sees the cluster again', () => controller?.nodeLifecycle?.view().canSeeCluster, reconnectWindowMs(Date.now() - stoppedAt) + 10_000, 200);
  // Absence: a node judged on the outage would be marked a grace period after sight returned at the
  // latest (difference 5: every node gets a fresh grace period); observe two (+ 2 s for the writes).
  await holdsFor(
    'no node marked Unknown or tainted because of the outage',
    () => observer !== undefined && observer.changes.every((c) => c.ready === 'True' && c.noExecute.length === 0),
    2 * GRACE_MS + 2000,
  );
  const unknown = observer.changes.filter((c) => c.ready !== 'True');
  assert.deepEqual(unknown, [], 'no node was marked Unknown because of the outage');
  const tainted = observer.changes.filter((c) => c.noExecute.length > 0);
  assert.deepEqual(tainted, [], 'no node was tainted because of the outage');

  // It recovered by itself: a real failure after the outage is still detected and acted on.
  const victim = fleet.nodeNames()[0] as string;
  fleet.killNode(victim);
  // A Lease informer still in the backoff step before its relist (client-go's reflector after the
  // restarted watch cache's 410) keeps the Lease circuit breaker holding the node until it catches up
  // (the 1.20 lane saw it): the bound allows that reconnect window too.
  await waitFor('the victim goes Unknown', () => observer?.firstAt(victim, (c) => c.ready === 'Unknown'), reconnectWindowMs(restartedAt - stoppedAt + 10_000) + GRACE_MS + 30_000, 200);
  await waitFor('the victim is tainted', () => observer?.taintedWith('node.kubernetes.io/unreachable').has(victim), 10_000, 200);
  assert.ok(Date.now() > restartedAt);
});
