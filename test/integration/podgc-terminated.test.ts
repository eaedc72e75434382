/**
 * The pod GC's terminated-pod pass (`gcTerminated`, `--terminated-pod-gc-threshold`) against the
 * real kube-apiserver: with the threshold at 10 and 30 terminated pods bound to the fleet's nodes,
 * exactly the 20 beyond the threshold are deleted, in upstream's order (`byEvictionAndCreationTimestamp`:
 * the kubelet-evicted pod first, then the oldest), and the fleet's running pods are untouched.
 *
 * The terminated pods live in their own namespace, which the simulated kubelets do not watch, so
 * nothing reports them Running again. Creation timestamps have one-second resolution, so pods made
 * in the same second tie; upstream breaks ties by name, and the names are zero-padded in creation
 * order, so creation order is the expected order. All 30 exist before the controller starts, so its
 * first pass sees them all and queues the 20 in that order.
 *
 * The controller runs under `--node-selector` (every integration test does, to share the cluster):
 * its terminated pass counts only pods bound to its fleet's nodes (docs/out-of-service.md,
 * difference 17), so terminated pods of concurrent test files neither count nor go.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { SIM_IMAGE } from '@node-lifecycle-controller/sim/objects';
import type { RunningController } from '../../src/cli/run.js';
import { toPod, type Pod } from '../../src/kube/objects.js';
import { createTestNamespace, holdsFor, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricReaching, metricValue, scrapeMetrics, startTestController } from '../support/controller.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const THRESHOLD = 10;
const TERMINATED = 30;
/** upstream `gcCheckPeriod`: a wrong deletion would come on the next pass. */
const GC_CHECK_PERIOD_MS = 20_000;
/** Deletion workers of the terminated pass (src/podgc/controller.ts): how far two deletions can swap. */
const TERMINATED_WORKERS = 2;
const clients = testClients();

const podName = (prefix: string, i: number): string => `${prefix}-done-${String(i).padStart(2, '0')}`;

/** Creates pod `i` bound to `node`, then reports it terminated as a kubelet would. Pod 29 is an evicted one. */
async function createTerminated(ns: string, prefix: string, node: string, i: number): Promise<void> {
  const name = podName(prefix, i);
  await clients.core.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name }, spec: { nodeName: node, restartPolicy: 'Never', automountServiceAccountToken: false, containers: [{ name: 'app', image: SIM_IMAGE }] } },
  });
  const evicted = i === TERMINATED - 1;
  const status = evicted ? { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' } : { phase: i % 2 === 0 ? 'Succeeded' : 'Failed' };
  await clients.core.patchNamespacedPodStatus({ namespace: ns, name, body: { status } }, MERGE);
}

async function listPods(ns: string): Promise<Pod[]> {
  return (await clients.core.listNamespacedPod({ namespace: ns })).items.map((p) => toPod(p)).filter((p): p is Pod => p !== undefined);
}

describe('pod GC: terminated pods beyond --terminated-pod-gc-threshold', () => {
  const prefix = uniquePrefix('pgct');
  const doneNs = `${prefix}-done`;
  let fleet: Fleet;
  let controller: RunningController | undefined;
  let abortWatch: (() => void) | undefined;

  before(async () => {
    await createTestNamespace(clients, prefix);
    await createTestNamespace(clients, doneNs);
    fleet = new Fleet({ clients, prefix, namespace: prefix, zones: 1, nodesPerZone: 2, podsPerNode: 2, podMix: { plain: 1 }, leaseRenewIntervalMs: 1000, leaseDurationSeconds: 10 });
    await fleet.start();
  });
  after(async () => {
    abortWatch?.();
    await controller?.stop();
    await fleet.cleanup();
    await clients.core.deleteCollectionNamespacedPod({ namespace: doneNs, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0 } }).catch(() => undefined);
    await clients.core.deleteNamespace({ name: doneNs }).catch(() => undefined);
  });

  test('threshold 10, 30 terminated pods: the evicted one and the oldest 19 go, the newest 10 and every running pod stay', async (t) => {
    const nodes = fleet.nodeNames();
    for (let i = 0; i < TERMINATED; i++) await createTerminated(doneNs, prefix, nodes[i % nodes.length] as string, i);
    await waitFor('the fleet\'s pods Running', async () => {
      const pods = await listPods(prefix);
      return pods.length === nodes.length * 2 && pods.every((p) => p.phase === 'Running');
    }, 60_000, 200);
    const running = (await listPods(prefix)).map((p) => p.uid).sort();
    const initial = await listPods(doneNs);
    assert.equal(initial.filter((p) => p.phase === 'Succeeded' || p.phase === 'Failed').length, TERMINATED);

    // upstream's deletion order: evicted first, then by creation time, then by name.
    const expected = [podName(prefix, TERMINATED - 1), ...Array.from({ length: TERMINATED - THRESHOLD - 1 }, (_, i) => podName(prefix, i))];
    const kept = Array.from({ length: THRESHOLD }, (_, i) => podName(prefix, TERMINATED - THRESHOLD - 1 + i)).sort();

    // Record deletions in the order the API server commits them (watch from the list's resourceVersion).
    const rv = (await clients.core.listNamespacedPod({ namespace: doneNs })).metadata?.resourceVersion ?? '';
    const deletedOrder: string[] = [];
    const req = await new Watch(clients.kubeConfig).watch(
      `/api/v1/namespaces/${doneNs}/pods`,
      { resourceVersion: rv },
      (type: string, obj: { metadata?: { name?: string } }) => {
        if (type === 'DELETED' && obj.metadata?.name) deletedOrder.push(obj.metadata.name);
      },
      () => undefined,
    );
    abortWatch = () => req.abort();

    const t0 = Date.now();
    controller = await startTestController(prefix, ['--controllers=pod-garbage-collector-controller', `--terminated-pod-gc-threshold=${THRESHOLD}`]);
    const c = controller;
    const remaining = await waitFor('the terminated pods down to the threshold', async () => {
      const names = (await listPods(doneNs)).map((p) => p.name).sort();
      return names.length <= THRESHOLD ? names : undefined;
    }, 120_000, 100);
    const tookMs = Date.now() - t0;
    await waitFor('every deletion seen on the watch', () => deletedOrder.length >= expected.length, 10_000, 50);

    assert.deepEqual(remaining, kept, 'exactly the newest 10 stay');
    assert.deepEqual([...deletedOrder].sort(), [...expected].sort(), 'exactly the 20 beyond the threshold go');
    // Two workers delete side by side, so two neighbours may commit in either order; nothing further.
    deletedOrder.forEach((name, at) => {
      const rank = expected.indexOf(name);
      assert.ok(Math.abs(rank - at) < TERMINATED_WORKERS, `${name} deleted ${at + 1}th, upstream order ranks it ${rank + 1}th: ${deletedOrder.join(',')}`);
    });
    const labels = { namespace: doneNs, reason: 'terminated' };
    assert.equal(await metricReaching(c, 'pod_gc_collector_force_delete_pods_total', labels, expected.length), expected.length);
    assert.equal(metricValue(await scrapeMetrics(c), 'pod_gc_collector_force_delete_pod_errors_total', labels) ?? 0, 0);

    // Absence: a wrong deletion (a kept or a running pod) would come on the next gc pass; watch one and a bit.
    await holdsFor(
      'the newest 10 and every running pod stay through the next gc pass',
      async () => {
        const [done, fleetPods] = await Promise.all([listPods(doneNs), listPods(prefix)]);
        return done.length === THRESHOLD && fleetPods.map((p) => p.uid).sort().join() === running.join() && fleetPods.every((p) => p.deletionTimestamp === undefined);
      },
      GC_CHECK_PERIOD_MS + 2000,
    );
    assert.equal(deletedOrder.length, expected.length, 'no deletion after the threshold was reached');
    t.diagnostic(`figures: ${expected.length} of ${TERMINATED} terminated pods deleted (threshold ${THRESHOLD}) in ${tookMs} ms from controller start; order ${deletedOrder.map((n) => n.slice(-2)).join(',')}`);
  });
});
