/**
 * Issue 16 item 5 against the real API server: `what-if` reads a live fleet (simulated kubelets,
 * packages/sim/src/fleet.ts; no controller manages it), plays a scenario, and writes nothing: the timeline says
 * a node would be marked Unknown, tainted and its pods deleted, while in the cluster every node's
 * taints and every pod (its resourceVersion) stay exactly as they were.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { runWhatIfCommand } from '../../src/cli/what-if.js';
import { loadSnapshot } from '../../src/whatif/snapshot.js';
import type { TimelineEntry } from '../../src/whatif/cluster.js';
import { formatTaint } from '../../src/kube/taints.js';
import { toNode, toPod } from '../../src/kube/objects.js';
import { createTestNamespace, kubeconfigPath, testClients, uniquePrefix } from '../support/cluster.js';

const clients = testClients();

/** The fleet's nodes' taints and pods' resourceVersions, as the API server has them now. */
async function clusterState(prefix: string): Promise<{ taints: Record<string, string[]>; pods: Record<string, string> }> {
  const labelSelector = `nlc.sim/fleet=${prefix}`;
  const nodes = (await clients.core.listNode({ labelSelector })).items.map((n) => toNode(n));
  const pods = (await clients.core.listNamespacedPod({ namespace: prefix })).items.map((p) => toPod(p));
  return {
    taints: Object.fromEntries(nodes.map((n) => [n?.name ?? '', (n?.taints ?? []).map(formatTaint).sort()])),
    pods: Object.fromEntries(pods.map((p) => [`${p?.namespace}/${p?.name}`, p?.resourceVersion ?? ''])),
  };
}

describe('what-if on the live cluster', () => {
  test('reads the fleet, predicts the failure of one node, and changes nothing in the cluster', async () => {
    const prefix = uniquePrefix('whatif');
    await createTestNamespace(clients, prefix);
    const fleet = new Fleet({ clients, prefix, namespace: prefix, zones: 3, nodesPerZone: 2, podsPerNode: 2 });
    await fleet.start();
    try {
      const victim = fleet.nodesInZone(fleet.zones()[0] as string)[0] as string;
      const dir = await mkdtemp(join(tmpdir(), 'whatif-it-'));
      await writeFile(join(dir, 'scenario.yaml'), `duration: 8m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [${victim}]\n`);
      const before = await clusterState(prefix);
      assert.equal(Object.keys(before.taints).length, 6);

      const out: string[] = [];
      const write = process.stdout.write.bind(process.stdout);
      process.stdout.write = ((chunk: string) => (out.push(chunk), true)) as typeof process.stdout.write;
      let code: number;
      try {
        code = await runWhatIfCommand([
          '--scenario', join(dir, 'scenario.yaml'),
          '--save-snapshot', join(dir, 'snap.json'),
          '-o', 'json',
          `--kubeconfig=${kubeconfigPath()}`,
          `--node-selector=nlc.sim/fleet=${prefix}`,
        ]);
      } finally {
        process.stdout.write = write;
      }
      assert.equal(code, 0);
      const r = JSON.parse(out.join('')) as { timeline: TimelineEntry[]; cluster: { nodes: number; kubeletsRunningAtStart: number } };
      assert.equal(r.cluster.nodes, 6, 'the --node-selector scope: the fleet');
      assert.equal(r.cluster.kubeletsRunningAtStart, 6, 'every simulated kubelet was renewing its Lease');
      const unknown = r.timeline.filter((e) => e.kind === 'condition' && e.to === 'Unknown');
      assert.deepEqual(unknown.map((e) => (e.kind === 'condition' ? e.node : '')), [victim]);
      assert.ok(r.timeline.some((e) => e.kind === 'taint' && e.node === victim && e.added.includes('node.kubernetes.io/unreachable:NoExecute')));
      assert.ok(r.timeline.some((e) => e.kind === 'pod-deleted' && e.node === victim), 'its pods would be deleted within 8 min');

      // Nothing of that happened: the what-if has no write path.
      const after = await clusterState(prefix);
      assert.deepEqual(after.taints, before.taints, 'no node taint changed');
      assert.deepEqual(after.pods, before.pods, 'no pod was updated or deleted');
      const snapshot = await loadSnapshot(join(dir, 'snap.json'));
      assert.ok(snapshot.nodes.some((n) => n.name === victim), 'the snapshot holds the fleet');
    } finally {
      await fleet.stop();
      await fleet.cleanup();
    }
  });
});
