/**
 * Forced detach never acts while any pod may still use the volume: a pod holds every volume it
 * names, whatever the source; a holder that cannot be resolved counts as holding; and the timeout
 * clock starts only once the last holder is gone. Each case runs on the real controller shell
 * (src/volumes/controller.ts) through `DetachHarness` (FakeClock, in-memory caches, a recording
 * API double), with pods built by the real converter (`toPod`) from wire JSON.
 *
 * Upstream (k8s.io/kubernetes v1.37.2): `pkg/controller/volume/attachdetach/util/util.go`
 * (`CreateVolumeSpec`: a generic ephemeral volume's claim is `ephemeral.VolumeClaimName(pod, vol)`
 * = `<pod>-<volume>`, and `ephemeral.VolumeIsForPod` requires the pod to control it), and
 * `reconciler/reconciler.go` (the max-wait-for-unmount clock starts only once the volume has left
 * the desired state of the world). Times are epoch milliseconds.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { toPersistentVolumeClaim, toPod, type Pod, type VolumeAttachment } from '../../src/kube/objects.js';
import { LiveReadError } from '../../src/kube/reads.js';
import { FORCED_DETACHES_METRIC } from '../../src/metrics/registry.js';
import { listPodsOnNode } from '../../src/volumes/writer.js';
import { counter, DetachHarness, node, settle, T0, terminated } from '../support/outofservice-world.js';

const TIMEOUT_MS = 5000;
const DRIVER = 'ebs.csi.aws.com';

/** A running pod on `nodeName` as the API returns it, with the given `spec.volumes`, converted by `toPod`. */
function wirePod(name: string, nodeName: string, volumes: unknown[], o: { uid?: string; phase?: string } = {}): Pod {
  const p = toPod({
    metadata: { namespace: 'default', name, uid: o.uid ?? `uid-${name}`, resourceVersion: '5', creationTimestamp: '2025-12-31T23:00:00Z' },
    spec: { nodeName, volumes, containers: [{ name: 'c', image: 'x' }] },
    status: { phase: o.phase ?? 'Running', containerStatuses: [{ name: 'c', state: { running: { startedAt: '2025-12-31T23:00:01Z' } } }] },
  });
  assert.ok(p, 'the converter accepts the pod');
  return p;
}

const ephemeralVolume = (name: string): unknown => ({
  name,
  ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'csi', resources: { requests: { storage: '1Gi' } } } } },
});

/**
 * Node `w` (Ready) with attachment `va-e` of PV `pv-e` by {@link DRIVER}, and PV `pv-e` in the cache.
 * Nothing holds it unless the test adds a pod.
 */
function world(): DetachHarness {
  const h = new DetachHarness({ timeoutMs: TIMEOUT_MS });
  h.setNode(node('w', 'True'));
  h.pvs.put({ name: 'pv-e', uid: 'uid-pv-e', claimRef: { namespace: 'default', name: 'p-scratch' } });
  const va: VolumeAttachment = { name: 'va-e', uid: 'uid-va-e', resourceVersion: '1', attacher: DRIVER, nodeName: 'w', persistentVolumeName: 'pv-e', attached: true };
  h.vas.put(va);
  h.api.vas.set(va.name, va);
  return h;
}

/** The claim `<pod>-scratch` bound to `pv-e`, controlled by the pod with `ownerUid`. */
function ephemeralClaim(h: DetachHarness, ownerUid: string, claimName = 'p-scratch'): void {
  const pvc = toPersistentVolumeClaim({
    metadata: {
      namespace: 'default',
      name: claimName,
      uid: `uid-${claimName}`,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: ownerUid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { volumeName: 'pv-e' },
  });
  assert.ok(pvc);
  h.pvcs.put(pvc);
}

/**
 * The sequence: the controller runs while the node is Ready for longer than the timeout
 * (so an attachment older than the timeout), then the node goes Unknown and stays so for `waitMs`.
 * @returns the number of forced detaches.
 */
async function nodeFailsAfterTimeout(h: DetachHarness, waitMs = 10 * TIMEOUT_MS): Promise<number> {
  h.fd.start();
  await settle(h.clock, 3 * TIMEOUT_MS);
  h.setNode(node('w', 'Unknown'));
  await settle(h.clock, waitMs);
  return h.api.deleted.length;
}

describe('force detach: a pod holds every volume it names, whatever the source', () => {
  test('generic ephemeral volume: claim `<pod>-<volume>` controlled by the pod, bound to the PV → held while the pod runs', async () => {
    const h = world();
    const p = wirePod('p', 'w', [ephemeralVolume('scratch')]);
    ephemeralClaim(h, p.uid);
    h.setPod(p);
    assert.equal(await nodeFailsAfterTimeout(h), 0, 'a running pod keeps its ephemeral volume attached');
    assert.equal(await counter(h.metrics, FORCED_DETACHES_METRIC, { reason: 'timeout' }), 0);
    assert.deepEqual(h.fd.view().released, [], 'no timeout clock runs');
  });

  test('generic ephemeral volume of another PV does not hold this one (held only through its own claim)', async () => {
    const h = world();
    const p = wirePod('p', 'w', [ephemeralVolume('scratch')]);
    h.pvs.put({ name: 'pv-other', uid: 'uid-pv-other' });
    h.pvcs.put({ namespace: 'default', name: 'p-scratch', uid: 'u', volumeName: 'pv-other', controllerUid: p.uid });
    h.setPod(p);
    assert.equal(await nodeFailsAfterTimeout(h), 1, 'its claim names another PV: this attachment is free to go');
  });

  test('inline CSI volume of the attachment\'s driver → held; of another driver → not held', async () => {
    const held = world();
    held.setPod(wirePod('p', 'w', [{ name: 'inline', csi: { driver: DRIVER, volumeAttributes: { size: '1Gi' } } }]));
    assert.equal(await nodeFailsAfterTimeout(held), 0);

    const other = world();
    other.setPod(wirePod('p', 'w', [{ name: 'secrets', csi: { driver: 'secrets-store.csi.k8s.io' } }]));
    assert.equal(await nodeFailsAfterTimeout(other), 1);
  });

  test('an inline source that might be attachable (in-tree disk, flexVolume) holds every attachment on the node; node-local sources do not', async () => {
    for (const volume of [{ name: 'disk', awsElasticBlockStore: { volumeID: 'vol-1' } }, { name: 'flex', flexVolume: { driver: 'x/y' } }]) {
      const h = world();
      h.setPod(wirePod('p', 'w', [volume]));
      assert.equal(await nodeFailsAfterTimeout(h), 0, Object.keys(volume)[1]);
    }
    const local = world();
    local.setPod(
      wirePod('p', 'w', [
        { name: 'tmp', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'c' } },
        { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
      ]),
    );
    assert.equal(await nodeFailsAfterTimeout(local), 1);
  });

  test('toPod sorts the sources; toPersistentVolumeClaim keeps the controller owner', () => {
    const p = wirePod('web-0', 'w', [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } },
      ephemeralVolume('scratch'),
      { name: 'inline', csi: { driver: DRIVER } },
      { name: 'disk', gcePersistentDisk: { pdName: 'd' } },
      { name: 'cfg', configMap: { name: 'c' } },
    ]);
    assert.deepEqual(p.pvcNames, ['data-web-0']);
    assert.deepEqual(p.ephemeralClaimNames, ['web-0-scratch']);
    assert.deepEqual(p.inlineVolumeDrivers, [DRIVER, '*']);
    const owned = toPersistentVolumeClaim({
      metadata: { namespace: 'default', name: 'web-0-scratch', uid: 'c', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'uid-web-0', controller: true }] },
    });
    assert.equal(owned?.controllerUid, 'uid-web-0');
    assert.equal(toPersistentVolumeClaim({ metadata: { namespace: 'default', name: 'x', uid: 'c', ownerReferences: [{ uid: 'u' }] } })?.controllerUid, undefined);
  });
});

describe('force detach: a holder that cannot be resolved counts as holding', () => {
  test('missing ephemeral claim (not created yet, or not in the cache) → held', async () => {
    const h = world();
    h.setPod(wirePod('p', 'w', [ephemeralVolume('scratch')]));
    assert.equal(await nodeFailsAfterTimeout(h), 0);
  });

  test('ephemeral claim not controlled by the pod (a same-named claim of an earlier pod) → held', async () => {
    const h = world();
    h.setPod(wirePod('p', 'w', [ephemeralVolume('scratch')], { uid: 'uid-p-new' }));
    ephemeralClaim(h, 'uid-p-old');
    assert.equal(await nodeFailsAfterTimeout(h), 0);
  });

  test('missing claim, even when a PV still names it in its claimRef → held', async () => {
    const h = world();
    h.pvs.put({ name: 'pv-x', uid: 'uid-pv-x', claimRef: { namespace: 'default', name: 'data-q' } });
    h.setPod(wirePod('q', 'w', [{ name: 'data', persistentVolumeClaim: { claimName: 'data-q' } }]));
    assert.equal(await nodeFailsAfterTimeout(h), 0);
  });

  test('unbound claim → held', async () => {
    const h = world();
    h.pvcs.put({ namespace: 'default', name: 'data-q', uid: 'uid-data-q' });
    h.setPod(wirePod('q', 'w', [{ name: 'data', persistentVolumeClaim: { claimName: 'data-q' } }]));
    assert.equal(await nodeFailsAfterTimeout(h), 0);
  });

  test('claim bound to a PV missing from the cache → held', async () => {
    const h = world();
    h.pvcs.put({ namespace: 'default', name: 'data-q', uid: 'uid-data-q', volumeName: 'pv-missing' });
    h.setPod(wirePod('q', 'w', [{ name: 'data', persistentVolumeClaim: { claimName: 'data-q' } }]));
    assert.equal(await nodeFailsAfterTimeout(h), 0);
  });

  test('a pod on the node that the converter rejects (the API lists it, the cache skipped it) → every attachment there is held', async () => {
    const h = world();
    h.api.unparsablePods.set('w', 1);
    assert.equal(await nodeFailsAfterTimeout(h), 0);
    assert.ok(h.api.podLists.includes('w'), 'the node\'s pods were listed live');
    // The malformed pod goes away: only from then on may the clock run.
    h.api.unparsablePods.delete('w');
    const gone = h.clock.now();
    while (h.api.deleted.length === 0 && h.clock.now() - gone < 180_000) await settle(h.clock, 500);
    assert.equal(h.api.deleted.length, 1, 'then the timeout path detaches');
    assert.ok(h.clock.now() - gone > TIMEOUT_MS, 'not within the timeout of the malformed pod going');
  });

  test('a pod on the node that the cache has not caught up with (after a relist) → held; the clock starts only after it is gone', async () => {
    const h = world();
    h.pvcs.put({ namespace: 'default', name: 'data-q', uid: 'uid-data-q', volumeName: 'pv-e' });
    h.apiOnlyPods.put(wirePod('q', 'w', [{ name: 'data', persistentVolumeClaim: { claimName: 'data-q' } }]));
    assert.equal(await nodeFailsAfterTimeout(h), 0);
    assert.deepEqual(h.fd.view().released, [], 'no clock while the API shows a holder');
    h.apiOnlyPods.m.clear();
    const gone = h.clock.now();
    while (h.api.deleted.length === 0 && h.clock.now() - gone < 180_000) await settle(h.clock, 500);
    assert.deepEqual(h.api.deleted, ['va-e'], 'then the timeout path detaches');
    assert.ok(h.clock.now() - gone > TIMEOUT_MS, 'not within the timeout of the holder going');
  });

  test('the live list before the delete finds a holder the cache does not have → kept, the clock stops', async () => {
    const h = world();
    h.setNode(node('w', 'Unknown'));
    h.fd.start();
    await settle(h.clock, 1000);
    assert.equal(h.fd.view().released.length, 1, 'no holder anywhere: the clock runs');
    h.pvcs.put({ namespace: 'default', name: 'data-q', uid: 'uid-data-q', volumeName: 'pv-e' });
    h.apiOnlyPods.put(wirePod('q', 'w', [{ name: 'data', persistentVolumeClaim: { claimName: 'data-q' } }]));
    await settle(h.clock, TIMEOUT_MS);
    assert.equal(h.api.deleted.length, 0);
    assert.deepEqual(h.fd.view().released, []);
  });
});

describe('force detach: the timeout clock starts only when the last holder is gone', () => {
  test('attachment older than the timeout, pod running, node fails: nothing; the pod is force-deleted at t → detached at t + timeout + 1 ms, not before', async () => {
    const h = world();
    const p = wirePod('p', 'w', [ephemeralVolume('scratch')]);
    ephemeralClaim(h, p.uid);
    h.setPod(p);
    assert.equal(await nodeFailsAfterTimeout(h, 3 * TIMEOUT_MS), 0);
    h.deletePod(p);
    const gone = h.clock.now();
    await settle(h.clock, TIMEOUT_MS);
    assert.equal(h.api.deleted.length, 0);
    await settle(h.clock, 1);
    assert.deepEqual(h.api.deleted, ['va-e']);
    assert.equal(h.clock.now() - gone, TIMEOUT_MS + 1);
  });

  test('a holder terminating with its containers reported terminated lets go; the clock starts then', async () => {
    const h = world();
    const p = wirePod('p', 'w', [ephemeralVolume('scratch')]);
    ephemeralClaim(h, p.uid);
    h.setPod(p);
    h.setNode(node('w', 'Unknown'));
    h.fd.start();
    await settle(h.clock, 4 * TIMEOUT_MS);
    assert.equal(h.api.deleted.length, 0, 'held while its containers run');
    const stopped = h.clock.now();
    h.setPod({ ...p, ...terminated(T0) });
    await settle(h.clock, TIMEOUT_MS + 1);
    assert.deepEqual(h.api.deleted, ['va-e']);
    assert.equal(h.clock.now() - stopped, TIMEOUT_MS + 1);
  });
});

describe('listPodsOnNode (live, quorum LIST by spec.nodeName)', () => {
  const wire = (name: string): Record<string, unknown> => ({
    metadata: { namespace: 'default', name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: '2025-12-31T00:00:00Z' },
    spec: { nodeName: 'w', volumes: [ephemeralVolume('scratch')] },
    status: { phase: 'Running' },
  });

  test('follows continue tokens, converts every pod, counts the unparsable ones', async () => {
    const calls: Record<string, unknown>[] = [];
    const pages = [
      { items: [wire('a'), { metadata: { name: 'broken' } }], metadata: { _continue: 'next' } },
      { items: [wire('b')], metadata: {} },
    ];
    const clients = {
      core: {
        listPodForAllNamespaces: async (q: Record<string, unknown>) => {
          calls.push(q);
          return pages[calls.length - 1];
        },
      },
    } as unknown as Parameters<typeof listPodsOnNode>[0];
    const got = await listPodsOnNode(clients, 'w');
    assert.deepEqual(got.pods.map((p) => p.name), ['a', 'b']);
    assert.deepEqual(got.pods[0]?.ephemeralClaimNames, ['a-scratch']);
    assert.equal(got.unparsable, 1);
    assert.deepEqual(calls.map((c) => [c['fieldSelector'], c['_continue']]), [['spec.nodeName=w', undefined], ['spec.nodeName=w', 'next']]);
  });

  test('an API error proves nothing: LiveReadError, and the controller does not detach', async () => {
    const clients = {
      core: { listPodForAllNamespaces: async () => Promise.reject(new ApiException(500, 'boom', '{}', {})) },
    } as unknown as Parameters<typeof listPodsOnNode>[0];
    await assert.rejects(listPodsOnNode(clients, 'w'), (e: unknown) => e instanceof LiveReadError && e.code === 500);

    const h = world();
    h.api.listPodsOnNode = async () => Promise.reject(new LiveReadError('pod', '(pods on node w)', 'error', new ApiException(500, 'boom', '{}', {})));
    assert.equal(await nodeFailsAfterTimeout(h), 0);
    assert.ok((await counter(h.metrics, 'attachdetach_controller_live_read_failures_total', { resource: 'pod', reason: 'error' })) > 0);
  });
});
