/**
 * Upstream's force-detach reconciler tests, ported one by one onto our force-detach shell
 * (src/volumes/controller.ts).
 *
 * Upstream file: k8s.io/kubernetes v1.37.2
 * `pkg/controller/volume/attachdetach/reconciler/reconciler_test.go`. Ported (the tests that reach
 * the force-detach branch of `reconcile`): `Test_Run_Positive_OneDesiredVolumeAttachThenDetachWithMountedVolume`,
 * `Test_Run_OneVolumeDetachOnOutOfServiceTaintedNode`, `Test_Run_OneVolumeDetachOnNoOutOfServiceTaintedNode`,
 * `Test_Run_OneVolumeDetachOnUnhealthyNode`, `Test_Run_OneVolumeDetachOnUnhealthyNodeWithForceDetachOnUnmountDisabled`.
 * Not ported: the attach, normal-detach, multi-attach, node-status-update and
 * `Test_ReportWaitingOnDetach` tests: we never attach, never detach normally and never write node
 * status (docs/out-of-service.md, difference 4); kube-controller-manager keeps doing those.
 * Each upstream test is a `test` of the same name; its "Act/Assert" steps are kept as comments.
 *
 * How upstream's fakes map onto ours (test/support/outofservice-world.ts, `DetachHarness`):
 * - `dsw.AddNode` + `dsw.AddPod(pod, volumeSpec, node)` (a pod that wants the volume on the node) →
 *   a running pod in the pod cache whose claim resolves (PVC cache) to the PV.
 * - The reconciler's attach and `asw` "attached, mounted by node" → the VolumeAttachment
 *   `va-1` (attached) in the cache and the API; we never attach, kube-controller-manager does.
 * - `dsw.DeletePod` (the volume leaves the desired state) → the pod leaves the pod cache.
 * - `nodeInformer.GetStore().Add/Update(node)` → the node cache, and our shell hears the change
 *   (`nodeChanged`), as its informer would tell it; upstream's 10 ms reconciler loop polls instead.
 * - `fakePlugin` detach calls (`waitForDetachCallCount`) → deletions of the VolumeAttachment
 *   recorded by `FakeDetachApi` (deleting the VolumeAttachment is how a CSI detach is requested).
 * - `metrics.ForceDetachMetricCounter{reason}` →
 *   `attach_detach_controller_attachdetach_controller_forced_detaches{reason}` (upstream's name).
 * - `time.Sleep` / `waitFor…` (polls up to ~60 s) → `FakeClock` advances; where upstream's
 *   "no detach" is only "not while it waited", we also check the exact later time (upstream too).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Taint, VolumeAttachment } from '../../src/kube/objects.js';
import { FORCED_DETACHES_METRIC } from '../../src/metrics/registry.js';
import { counter, DetachHarness, node, OOS, pod, settle } from '../support/outofservice-world.js';

/** upstream `maxWaitForUnmountDuration`. */
const MAX_WAIT_FOR_UNMOUNT_MS = 50;
/** upstream `maxLongWaitForUnmountDuration` (4200 s). */
const MAX_LONG_WAIT_FOR_UNMOUNT_MS = 4_200_000;

/** A node as upstream's tests write it: name only, optionally a Ready condition and taints. */
const upstreamNode = (name: string, ready?: 'True' | 'False', taints: Taint[] = []): Node => node(name, ready, taints);

/**
 * Arrange: `nodeName` (in the node informer unless `node` is undefined), pod `pod-uid1` using PV
 * `volume-name1` through claim `data`, and its VolumeAttachment `va-1`, attached.
 */
function arrange(h: DetachHarness, nodeName: string, node: Node | undefined): void {
  if (node) h.setNode(node);
  h.pvcs.put({ namespace: 'default', name: 'data', uid: 'uid-pvc', volumeName: 'volume-name1' });
  h.pvs.put({ name: 'volume-name1', uid: 'uid-pv', claimRef: { namespace: 'default', name: 'data' } });
  const va: VolumeAttachment = { name: 'va-1', uid: 'uid-va', resourceVersion: '1', attacher: 'csi', nodeName, persistentVolumeName: 'volume-name1', attached: true };
  h.vas.put(va);
  h.api.vas.set(va.name, va);
  h.setPod(pod('pod-uid1', nodeName, { pvcNames: ['data'] }));
}

/** dsw.DeletePod: the pod is gone. */
function deletePod(h: DetachHarness, nodeName: string): void {
  const p = h.pods.get('default/pod-uid1');
  assert.ok(p);
  h.deletePod(p);
  assert.equal(p.nodeName, nodeName);
}

async function forcedDetaches(h: DetachHarness): Promise<{ timeout: number; outOfService: number }> {
  return {
    timeout: await counter(h.metrics, FORCED_DETACHES_METRIC, { reason: 'timeout' }),
    outOfService: await counter(h.metrics, FORCED_DETACHES_METRIC, { reason: 'out-of-service' }),
  };
}

describe('reconciler_test.go force-detach tests', () => {
  test('Test_Run_Positive_OneDesiredVolumeAttachThenDetachWithMountedVolume', async () => {
    // The node is in no informer (upstream's nodeLister is empty): not healthy.
    const h = new DetachHarness({ timeoutMs: MAX_WAIT_FOR_UNMOUNT_MS });
    arrange(h, 'node-name', undefined);
    h.fd.start();
    await settle(h.clock, 1000);
    assert.deepEqual(h.api.deleted, [], 'Assert: attached, no detach while the pod wants the volume');

    deletePod(h, 'node-name'); // Act: dsw.DeletePod
    // Assert -- Timer will trigger detach: strictly after maxWaitForUnmountDuration (elapsed > max).
    await settle(h.clock, MAX_WAIT_FOR_UNMOUNT_MS);
    assert.deepEqual(h.api.deleted, [], 'not at exactly maxWaitForUnmountDuration');
    await settle(h.clock, 1);
    assert.deepEqual(h.api.deleted, ['va-1']);
    // Force detach metric due to timeout; no out-of-service one.
    assert.deepEqual(await forcedDetaches(h), { timeout: 1, outOfService: 0 });
  });

  test('Test_Run_OneVolumeDetachOnOutOfServiceTaintedNode', async () => {
    // worker-0 carries out-of-service:NoExecute and no conditions (so not Ready: our difference 3,
    // "out of service also needs not Ready", does not change the result). Long timeout.
    const h = new DetachHarness({ timeoutMs: MAX_LONG_WAIT_FOR_UNMOUNT_MS });
    arrange(h, 'worker-0', upstreamNode('worker-0', undefined, [{ key: OOS, effect: 'NoExecute' }]));
    h.fd.start();
    await settle(h.clock, 1000);
    assert.deepEqual(h.api.deleted, [], 'Assert: no detach while the pod wants the volume, even out of service');

    deletePod(h, 'worker-0'); // Act: dsw.DeletePod, without unmounting
    await settle(h.clock); // Assert -- Detach will be triggered if node has out of service taint: at once
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.deepEqual(await forcedDetaches(h), { timeout: 0, outOfService: 1 });
  });

  test('Test_Run_OneVolumeDetachOnNoOutOfServiceTaintedNode', async () => {
    // worker-0: no taint, no conditions (not healthy); timeout 4200 s.
    const h = new DetachHarness({ timeoutMs: MAX_LONG_WAIT_FOR_UNMOUNT_MS });
    arrange(h, 'worker-0', upstreamNode('worker-0'));
    h.fd.start();
    await settle(h.clock, 1000);
    assert.deepEqual(h.api.deleted, []);

    deletePod(h, 'worker-0');
    const releasedAt = h.clock.now();
    // Assert -- Detach will be triggered only after maxLongWaitForUnmountDuration expires.
    await settle(h.clock, MAX_LONG_WAIT_FOR_UNMOUNT_MS);
    assert.deepEqual(h.api.deleted, [], 'no detach up to and including 4200 s');
    assert.deepEqual(await forcedDetaches(h), { timeout: 0, outOfService: 0 });
    // Beyond upstream's window: 1 ms later the timeout path detaches (upstream's too: elapsed > max).
    await settle(h.clock, 1);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.equal(h.clock.now() - releasedAt, MAX_LONG_WAIT_FOR_UNMOUNT_MS + 1);
    assert.deepEqual(await forcedDetaches(h), { timeout: 1, outOfService: 0 });
  });

  test('Test_Run_OneVolumeDetachOnUnhealthyNode', async () => {
    const h = new DetachHarness({ timeoutMs: MAX_WAIT_FOR_UNMOUNT_MS });
    const node1 = upstreamNode('worker-0', 'True');
    arrange(h, 'worker-0', node1);
    h.fd.start();
    await settle(h.clock, 1000);
    assert.deepEqual(h.api.deleted, []);

    // Act: delete the pod; the volume is not detached even after maxWaitForUnmountDuration, as the
    // node is healthy. time.Sleep(maxWaitForUnmountDuration * 5)
    deletePod(h, 'worker-0');
    await settle(h.clock, MAX_WAIT_FOR_UNMOUNT_MS * 5);
    assert.deepEqual(h.api.deleted, [], 'healthy node: never force-detached');

    // Act: mark the node unhealthy. Assert -- Detach was triggered after maxWaitForUnmountDuration.
    h.setNode({ ...node1, resourceVersion: '2', conditions: [{ type: 'Ready', status: 'False' }] });
    await settle(h.clock);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.deepEqual(await forcedDetaches(h), { timeout: 1, outOfService: 0 });
  });

  test('Test_Run_OneVolumeDetachOnUnhealthyNodeWithForceDetachOnUnmountDisabled', async () => {
    const h = new DetachHarness({ timeoutMs: MAX_WAIT_FOR_UNMOUNT_MS, disable: true });
    const node1 = upstreamNode('worker-0', 'True');
    arrange(h, 'worker-0', node1);
    h.fd.start();
    await settle(h.clock, 1000);
    assert.deepEqual(h.api.deleted, []);

    deletePod(h, 'worker-0');
    await settle(h.clock, MAX_WAIT_FOR_UNMOUNT_MS * 5);
    assert.deepEqual(h.api.deleted, []);

    // Act: mark the node unhealthy. Assert -- Detach was not triggered (force detach on timeout disabled).
    const node2: Node = { ...node1, resourceVersion: '2', conditions: [{ type: 'Ready', status: 'False' }] };
    h.setNode(node2);
    await settle(h.clock, 3_600_000);
    assert.deepEqual(h.api.deleted, [], 'not an hour later either');
    assert.deepEqual(await forcedDetaches(h), { timeout: 0, outOfService: 0 });

    // Act: taint the node out-of-service. Assert -- detach, reason out-of-service.
    h.setNode({ ...node2, resourceVersion: '3', taints: [{ key: OOS, effect: 'NoExecute' }] });
    await settle(h.clock);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.deepEqual(await forcedDetaches(h), { timeout: 0, outOfService: 1 });
  });
});
