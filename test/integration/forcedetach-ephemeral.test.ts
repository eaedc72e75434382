/**
 * Forced detach and generic ephemeral volumes, on the real kube-apiserver: a running pod whose CSI
 * volume comes from `ephemeral.volumeClaimTemplate` holds it, however old its VolumeAttachment is
 * when the node fails. Upstream (`attachdetach/util.CreateVolumeSpec`) resolves the claim
 * `<pod>-<volume>` and requires the pod to control it; the timeout clock starts only once the
 * volume has left the desired state of the world.
 *
 * Nothing here runs kube-controller-manager, so the test plays the ephemeral-volume controller
 * (the claim, owned by the pod), the PV binder (PV and claim Bound) and the attacher (the
 * VolumeAttachment, attached); the fleet simulator runs the node's kubelet heartbeats and is
 * killed to make the node Unknown.
 *
 * Skipped on servers before 1.21 (the 1.20 lane), decided from the server's /version: generic
 * ephemeral volumes are alpha there (feature gate GenericEphemeralVolume, off by default; beta and
 * on from 1.21), so the API server drops `spec.volumes[].ephemeral` and no such pod can exist.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { getCondition, toPod, toVolumeAttachment } from '../../src/kube/objects.js';
import type { RunningController } from '../../src/cli/run.js';
import { createTestNamespace, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricReaching, metricValue, scrapeMetrics, startTestController } from '../support/controller.js';
import { readNode } from '../support/objects.js';
import { laneMinor, skipBelow } from '../support/lane.js';

const SKIP = skipBelow(await laneMinor(), 21, 'generic ephemeral volumes (alpha and off before 1.21: the API server drops spec.volumes[].ephemeral)');
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const TIMEOUT_MS = 5000;
const DRIVER = 'sim.csi.nlc.dev';
const clients = testClients();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

describe('forced detach: a running pod holds its generic ephemeral volume', { skip: SKIP }, () => {
  let prefix: string;
  let fleet: Fleet;
  let controller: RunningController | undefined;
  let pvName: string;
  let vaName: string;

  before(async () => {
    prefix = uniquePrefix('fdeph');
    pvName = `${prefix}-pv`;
    vaName = `${prefix}-va`;
    await createTestNamespace(clients, prefix);
    fleet = new Fleet({ clients, prefix, namespace: prefix, zones: 1, nodesPerZone: 2, podsPerNode: 0, leaseRenewIntervalMs: 1000, leaseDurationSeconds: 4, nodeStatusUpdateFrequencyMs: 1000 });
    await fleet.start();
  });

  after(async () => {
    await controller?.stop();
    // No controller removes the protection finalizers here (kube-controller-manager does not run).
    const unfinalize = { metadata: { finalizers: null } };
    await clients.storage.deleteVolumeAttachment({ name: vaName }).catch(() => undefined);
    await clients.core.patchNamespacedPersistentVolumeClaim({ namespace: prefix, name: 'eph-0-scratch', body: unfinalize }, MERGE).catch(() => undefined);
    await clients.core.deleteNamespacedPersistentVolumeClaim({ namespace: prefix, name: 'eph-0-scratch' }).catch(() => undefined);
    await clients.core.patchPersistentVolume({ name: pvName, body: unfinalize }, MERGE).catch(() => undefined);
    await clients.core.deletePersistentVolume({ name: pvName }).catch(() => undefined);
    await clients.core.deleteCollectionNamespacedPod({ namespace: prefix, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0 } }).catch(() => undefined);
    await fleet.cleanup();
  });

  test('claim owned by the pod, PV bound, attachment attached and older than --force-detach-timeout=5s; the node goes Unknown → still attached after 3× the timeout; once the pod is gone, detached after the timeout', async (t) => {
    const node = fleet.nodeNames()[0] as string;
    const ns = prefix;

    // The pod, tolerating the node's NoExecute taints so it stays Running on the dead node.
    const created = await clients.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'eph-0' },
        spec: {
          nodeName: node,
          automountServiceAccountToken: false,
          containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
          tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
          volumes: [
            {
              name: 'scratch',
              ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'sim-csi', resources: { requests: { storage: '1Gi' } } } } },
            },
          ],
        },
      },
    });
    const podUid = created.metadata?.uid;
    assert.ok(podUid);
    assert.deepEqual(toPod(created)?.ephemeralClaimNames, ['eph-0-scratch'], 'the API server kept the ephemeral volume');
    const now = rfc3339(Date.now());
    await clients.core.patchNamespacedPodStatus(
      {
        namespace: ns,
        name: 'eph-0',
        body: {
          status: {
            phase: 'Running',
            conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
            containerStatuses: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', imageID: '', ready: true, restartCount: 0, started: true, state: { running: { startedAt: now } } }],
          },
        },
      },
      MERGE,
    );

    // The ephemeral volume controller's claim `<pod>-<volume>`, controlled by the pod; bound to a CSI PV.
    const pvc = await clients.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'eph-0-scratch', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'eph-0', uid: podUid, controller: true, blockOwnerDeletion: true }] },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'sim-csi', volumeName: pvName, resources: { requests: { storage: '1Gi' } } },
      },
    });
    await clients.core.createPersistentVolume({
      body: {
        metadata: { name: pvName },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'sim-csi',
          persistentVolumeReclaimPolicy: 'Delete',
          csi: { driver: DRIVER, volumeHandle: `${prefix}-handle` },
          claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ns, name: 'eph-0-scratch', uid: pvc.metadata?.uid },
        },
      },
    });
    await clients.core.patchPersistentVolumeStatus({ name: pvName, body: { status: { phase: 'Bound' } } }, MERGE);
    await clients.core.patchNamespacedPersistentVolumeClaimStatus({ namespace: ns, name: 'eph-0-scratch', body: { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } } }, MERGE);
    await clients.storage.createVolumeAttachment({ body: { metadata: { name: vaName }, spec: { attacher: DRIVER, nodeName: node, source: { persistentVolumeName: pvName } } } });
    await clients.storage.patchVolumeAttachmentStatus({ name: vaName, body: { status: { attached: true } } }, MERGE);

    controller = await startTestController(prefix, ['--node-monitor-grace-period=6s', '--node-monitor-period=5s', `--force-detach-timeout=${TIMEOUT_MS / 1000}s`]);
    assert.ok(controller.forceDetach);
    // The attachment gets older than the timeout while the node is Ready (the controller sees it all along).
    await sleep(TIMEOUT_MS + 2000);

    fleet.killNode(node);
    const unknownAt = await waitFor(
      `${node} Ready=Unknown`,
      async () => (getCondition((await readNode(clients, node)).conditions, 'Ready')?.status === 'Unknown' ? Date.now() : undefined),
      30_000,
      200,
    );

    // Three times the timeout from the moment the node is Unknown: the attachment stays.
    while (Date.now() < unknownAt + 3 * TIMEOUT_MS) {
      const va = toVolumeAttachment(await clients.storage.readVolumeAttachment({ name: vaName }));
      assert.ok(va && va.deletionTimestamp === undefined, 'the running pod\'s ephemeral volume stays attached');
      await sleep(200);
    }
    assert.equal(metricValue(await scrapeMetrics(controller), 'attachdetach_controller_forced_detaches', { reason: 'timeout' }) ?? 0, 0);
    const pod = toPod(await clients.core.readNamespacedPod({ namespace: ns, name: 'eph-0' }));
    assert.equal(pod?.phase, 'Running');
    assert.equal(pod?.deletionTimestamp, undefined);

    // The controller does detach once the holder is gone (here force-deleted): after the timeout, not before.
    await clients.core.deleteNamespacedPod({ namespace: ns, name: 'eph-0', gracePeriodSeconds: 0 });
    const gone = Date.now();
    const detached = await waitFor(
      'VolumeAttachment force-detached after the timeout',
      async () => {
        const list = await clients.storage.listVolumeAttachment({ fieldSelector: `metadata.name=${vaName}` });
        const va = list.items[0] ? toVolumeAttachment(list.items[0]) : undefined;
        return va === undefined || va.deletionTimestamp !== undefined ? Date.now() : undefined;
      },
      TIMEOUT_MS + 70_000,
      100,
    );
    t.diagnostic(`detached ${detached - gone} ms after the pod was deleted (timeout ${TIMEOUT_MS} ms)`);
    assert.ok(detached - gone >= TIMEOUT_MS - 1000, 'not before the timeout (1 s margin for the controller seeing the delete after our call returned)');
    assert.equal(await metricReaching(controller, 'attachdetach_controller_forced_detaches', { reason: 'timeout' }, 1), 1);
  });
});
