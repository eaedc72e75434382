/**
 * The start hold on the real API server, with the real program as two replicas under leader
 * election (docs/taint-eviction.md, the start hold): a failover during which a node recovers and
 * its pods' toleration runs out deletes nothing, and the stale `unreachable:NoExecute` taint is
 * removed. Upstream deletes nothing here either: its node lifecycle controller strips both NoExecute
 * taints of every node it sees first after a start, and its taint manager restarts its timers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { toNode, type Node } from '../../src/kube/objects.js';
import { createTestNamespace, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricValue } from '../support/controller.js';
import { ControllerProcess, holdPlaceholderLease, LeaseTracker, releasePlaceholderLease } from '../support/process.js';

const clients = testClients();
const GRACE_S = 3;
/** The test pod's toleration of `unreachable:NoExecute`, seconds: shorter than the leaderless gap. */
const TOLERATION_S = 2;
const NODE_FLAGS = [`--node-monitor-grace-period=${GRACE_S}s`, '--node-monitor-period=1s'];
const UNREACHABLE = 'node.kubernetes.io/unreachable';
/** The replicas' Lease duration (ControllerProcess.spawn: `--leader-elect-lease-duration=6s`), ms. */
const LEASE_MS = 6000;

async function readNode(name: string): Promise<Node> {
  const n = toNode(await clients.core.readNode({ name }));
  assert.ok(n, `node ${name} converts`);
  return n;
}

const unreachableOf = (n: Node): { timeAdded?: number } | undefined => n.taints.find((t) => t.key === UNREACHABLE && t.effect === 'NoExecute');

describe('the start hold across a failover (two replicas, --leader-elect=true)', { concurrency: false }, () => {
  test('SIGKILL the leader; the node recovers and the toleration runs out while no replica leads; the standby takes over: 0 deletions, the taint removed', async (t) => {
    const prefix = uniquePrefix('hold');
    await createTestNamespace(clients, prefix);
    const leaseName = `${prefix}-lock`;
    const fleet = new Fleet({
      clients,
      prefix,
      namespace: prefix,
      zones: 1,
      nodesPerZone: 3,
      podsPerNode: 0,
      leaseRenewIntervalMs: 1000,
      leaseDurationSeconds: 4,
      nodeStatusUpdateFrequencyMs: 10_000,
    });
    const tracker = new LeaseTracker(clients.kubeConfig, prefix, leaseName);
    const procs: ControllerProcess[] = [];
    try {
      await fleet.start();
      const victim = fleet.nodeNames()[0] as string;
      const pod = `${prefix}-tolerates-${TOLERATION_S}s`;
      await clients.core.createNamespacedPod({
        namespace: prefix,
        body: {
          metadata: { name: pod, namespace: prefix },
          spec: {
            nodeName: victim,
            automountServiceAccountToken: false,
            containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }],
            tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_S }],
          },
        },
      });
      await holdPlaceholderLease(clients, prefix, leaseName);
      await tracker.start();
      for (const s of ['a', 'b']) procs.push(await ControllerProcess.spawn({ name: `${prefix}-${s}`, fleetPrefix: prefix, leaseName, leaseNamespace: prefix, flags: NODE_FLAGS }));
      const [a, b] = procs as [ControllerProcess, ControllerProcess];
      await Promise.all([a.waitReady(), b.waitReady()]);
      await releasePlaceholderLease(clients, prefix, leaseName);
      const first = await waitFor('a leader', () => [a, b].find((p) => tracker.holder() === p.identity), 15_000, 50);
      await waitFor('the leader judges the nodes', async () => (await first.masterStatus(leaseName)) === 1, 10_000, 100);

      // The node dies; the leader marks it Unknown and taints it.
      fleet.killNode(victim);
      const taint = await waitFor('unreachable:NoExecute on the dead node', async () => unreachableOf(await readNode(victim)), GRACE_S * 1000 + 15_000, 50);
      assert.ok(taint.timeAdded !== undefined);
      const deadline = taint.timeAdded + TOLERATION_S * 1000;

      // 1. SIGKILL the leader before the deadline: no replica leads until its Lease expires. The
      // leader is whoever holds the Lease now: on a loaded machine the first one can miss its renew
      // deadline (4 s) and hand over before the taint, and killing the standby instead would leave
      // the Lease held, so the "takeover" found below would be the holder's next renewal.
      const leader = [a, b].find((p) => tracker.holder() === p.identity);
      assert.ok(leader, `a replica holds the Lease when the taint is seen: ${JSON.stringify(tracker.holders())}`);
      if (leader !== first) t.diagnostic('the first leader handed over before the taint; the second is killed');
      const standby = leader === a ? b : a;
      const killedAt = leader.signal('SIGKILL');
      assert.ok(killedAt < deadline, `killed ${deadline - killedAt} ms before the deadline`);
      await leader.exited;
      // 2. The node recovers at once (Ready=True, Lease renewed); the deadline passes leaderless.
      await fleet.reviveNode(victim);
      // 3. The standby takes over after the deadline.
      const taken = await waitFor('the standby takes over', () => tracker.firstAfter(killedAt, (h) => h === standby.identity), LEASE_MS + 10_000, 20);
      t.diagnostic(`takeover ${taken.atMs - deadline} ms after the toleration ran out`);
      assert.ok(taken.atMs > deadline, 'the toleration ran out while no replica led');

      // 4. The new leader removes the stale taint, and deletes nothing.
      await waitFor('the stale taint removed', async () => unreachableOf(await readNode(victim)) === undefined, 15_000, 100);
      // Past a full grace period after the takeover: a held deletion would have been decided again by now.
      await new Promise((r) => setTimeout(r, GRACE_S * 1000 + 2000));
      // A deleted pod may be gone already: the revived simulated kubelet confirms deletions at once.
      const p = await clients.core.readNamespacedPod({ namespace: prefix, name: pod }).catch((err: unknown) => {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      });
      assert.ok(p !== undefined, 'the pod of the recovered node still exists');
      assert.equal(p.metadata?.deletionTimestamp, undefined, 'the pod of the recovered node is not deleted');
      const deletions = metricValue(await standby.metrics(), 'taint_eviction_controller_pod_deletions_total');
      assert.equal(deletions ?? 0, 0, 'the new leader deleted no pod');
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
      tracker.stop();
      await fleet.cleanup();
      await clients.coordination.deleteNamespacedLease({ name: leaseName, namespace: prefix }).catch(() => undefined);
      await clients.core.deleteCollectionNamespacedPod({ namespace: prefix, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0 } }).catch(() => undefined);
    }
  });
});
