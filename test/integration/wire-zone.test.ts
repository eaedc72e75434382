/**
 * Issue 53's scenario on the real API server: a zone of 5 nodes, one of which carries a
 * node-problem-detector style condition (`KernelDeadlock=False`) whose message holds bytes that are
 * not UTF-8, written by a protobuf client. Three nodes of the zone die, that node among them.
 * kube-controller-manager (reads them: Go strings are bytes) sees 3 of 5 not Ready: PartialDisruption,
 * no NoExecute taint. Ours must too; before the fix its protobuf decoder could not read that node, saw
 * 2 of 4 not Ready (Normal) and tainted the other two dead nodes `unreachable:NoExecute`.
 * Ours alone, on every lane; wire-zone-upstream.test.ts runs kube-controller-manager 1.37.2 itself on
 * the same zone, then ours, and compares them (the 1.37 lane).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestNamespace, holdsFor, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { NodeObserver } from '../support/observe.js';
import { putKernelDeadlockCondition, WIRE_ZONE_GRACE_MS as GRACE_MS, wireZoneFleet } from '../support/wire-zone.js';

const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
const clients = testClients();

describe('a zone whose node carries a condition message that is not UTF-8 (issue 53)', () => {
  test('3 of its 5 nodes die, that node among them: PartialDisruption and no NoExecute taint, as kube-controller-manager', { timeout: 180_000 }, async () => {
    const prefix = uniquePrefix('wire-zone');
    await createTestNamespace(clients, prefix);
    // Status by Lease only (see wireZoneFleet): the raw bytes stay as written.
    const fleet = wireZoneFleet(clients, prefix);
    await fleet.start();
    const nodes = fleet.nodesInZone(fleet.zones()[0] as string);
    const npd = nodes[0] as string;
    await putKernelDeadlockCondition(clients, npd);
    const controller = await startTestController(prefix, [`--node-monitor-grace-period=${GRACE_MS / 1000}s`, '--node-monitor-period=1s']);
    const observer = new NodeObserver(clients, `nlc.sim/fleet=${prefix}`, 100);
    await observer.start();
    try {
      await waitFor('all 5 nodes in the cache, the zone Normal', () => controller.nodeLifecycle?.view().nodes.length === 5 && controller.nodeLifecycle.view().zones.every((z) => z.state === 'Normal'), 20_000);
      const victims = [npd, nodes[1] as string, nodes[2] as string];
      for (const v of victims) fleet.killNode(v);
      await waitFor('zone PartialDisruption', () => controller.nodeLifecycle?.view().zones.some((z) => z.state === 'PartialDisruption'), GRACE_MS + 15_000);
      // Were the zone Normal, the first dead node would be tainted at the next monitor pass (the first token is free).
      await holdsFor('no NoExecute taint', () => observer.taintedWith(UNREACHABLE).size + observer.taintedWith(NOT_READY).size === 0, 2 * GRACE_MS);
      assert.deepEqual(
        controller.nodeLifecycle?.view().zones.map((z) => z.state),
        ['PartialDisruption'],
      );
    } finally {
      observer.stop();
      await controller.stop();
      await fleet.stop();
      await fleet.cleanup();
    }
  });
});
