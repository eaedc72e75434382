/**
 * Issue 53 item 4 for pod GC and forced detach: a force delete or a detach is decided again, from
 * the caches, right before each of its writes is sent (src/kube/throttle.ts `WriteRecheck`), after
 * the live reads that decided it and after its wait for a turn in the throttle. A write whose
 * decision no longer holds then (the out-of-service taint removed, the node back in the cache, a
 * pod holding the volume again) is not sent, not counted, and not retried blindly.
 *
 * The API doubles of test/support/outofservice-world.ts forward the send-time check to the
 * in-memory writer, which runs it where the throttle would; each test changes the caches at that
 * moment, as an informer event arriving during the wait would. Each fails on the code before the
 * send-time check (the write went out on the decision taken before the wait).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WriteRecheck } from '../../src/kube/throttle.js';
import type { ForceDeleteRecheck } from '../../src/podgc/writer.js';
import { counter, DetachHarness, node, OOS, pod, PodGCHarness, settle, T0, terminated, terminating } from '../support/outofservice-world.js';

describe('pod GC decides a force delete again right before it is sent (issue 53 item 4)', () => {
  test('out of service: the taint is removed while the force delete waits for its turn → nothing is written or counted', async () => {
    const h = new PodGCHarness();
    h.addNode(node('w', 'Unknown'));
    h.addPod(pod('stuck', 'w', terminating(T0 - 60_000)));
    const inner = h.api.forceDeletePod.bind(h.api);
    let waited = 0;
    h.api.forceDeletePod = (ns: string, name: string, uid: string, recheck: ForceDeleteRecheck, sendCheck?: WriteRecheck) =>
      inner(ns, name, uid, recheck, () => {
        // The wait for a token: meanwhile the operator removed the out-of-service taint.
        waited++;
        h.addNode(node('w', 'Unknown'));
        return sendCheck?.();
      });
    h.gc.start();
    h.updateNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute', timeAdded: T0 }]));
    await settle(h.clock);
    assert.equal(waited, 1, 'the force delete reached its send');
    assert.deepEqual(h.api.deleted, [], 'not force-deleted: the node is no longer out of service');
    assert.equal(h.api.pods.get('default/stuck')?.phase, 'Running', 'not marked Failed either');
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { namespace: 'default', reason: 'out-of-service' }), 0);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pod_errors_total', { namespace: 'default', reason: 'out-of-service' }), 0);
  });

  test('orphaned: the node reappears in the cache while the force delete waits for its turn → its pods are kept', async () => {
    const h = new PodGCHarness({ quarantineMs: 5000 });
    h.addPod(pod('p', 'gone-node'));
    const inner = h.api.forceDeletePod.bind(h.api);
    h.api.forceDeletePod = (ns: string, name: string, uid: string, recheck: ForceDeleteRecheck, sendCheck?: WriteRecheck) =>
      inner(ns, name, uid, recheck, () => {
        h.nodes.put(node('gone-node', 'True'));
        return sendCheck?.();
      });
    h.gc.start();
    h.gc.sweep();
    await settle(h.clock, 6000);
    assert.deepEqual(h.api.deleted, [], 'the orphan of a node back in the cache is not force-deleted');
  });
});

describe('forced detach decides the detach again right before it is sent (issue 53 item 4)', () => {
  test('out of service: a pod holding the volume appears in the cache while the DELETE waits → the VolumeAttachment stays', async () => {
    const h = new DetachHarness();
    h.setup('Unknown', terminated(T0 - 10_000));
    const inner = h.api.deleteVolumeAttachment.bind(h.api);
    let waited = 0;
    h.api.deleteVolumeAttachment = (name: string, uid: string, recheck?: WriteRecheck) => {
      waited++;
      // A replacement pod using the same claim is bound to the node while the DELETE waits.
      h.pods.put(pod('p2', 'w', { pvcNames: ['data-p'] }));
      return inner(name, uid, () => recheck?.() ?? undefined);
    };
    h.fd.start();
    h.setNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    await settle(h.clock);
    assert.equal(waited, 1, 'the detach reached its send');
    assert.deepEqual(h.api.deleted, [], 'not detached: a pod holds the volume');
    assert.equal(await h.forced('out-of-service'), 0);
  });

  test('timeout: the node is Ready again in the cache while the DELETE waits → the VolumeAttachment stays', async () => {
    const h = new DetachHarness({ timeoutMs: 5000 });
    h.setup('Unknown', terminated(T0));
    const inner = h.api.deleteVolumeAttachment.bind(h.api);
    h.api.deleteVolumeAttachment = (name: string, uid: string, recheck?: WriteRecheck) => {
      h.nodes.put(node('w', 'True'));
      return inner(name, uid, recheck);
    };
    h.fd.start();
    await settle(h.clock, 10_000);
    assert.deepEqual(h.api.deleted, [], 'not detached: the node is Ready');
    assert.equal(await h.forced('timeout'), 0);
  });
});
