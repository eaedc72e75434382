/**
 * Out-of-service nodes (issue 6): the pure decisions of src/podgc/decision.ts and
 * src/volumes/decision.ts, the PodGC and force-detach controllers over in-memory caches and
 * recording doubles driven by FakeClock, and PodGCWriter over a recording client stub.
 * Cases follow upstream `gc_controller_test.go` (TestGCTerminating, TestGCOrphaned,
 * TestGCInspectingPatchedPodBeforeDeletion) and `reconciler_test.go` (§10.4–10.5 of the reference).
 * Issue 14: a pod holds its volumes until `IsPodTerminated` (terminal, or deleted with no container
 * still running), live reads fail closed, and per-node state is pruned on node churn.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import type { KubeClients } from '../../src/kube/client.js';
import { toNode, toPod, type Node, type Pod, type VolumeAttachment } from '../../src/kube/objects.js';
import { isNodeOutOfService, isPodTerminated } from '../../src/kube/predicates.js';
import { LiveReadError, readNode, readOrUndefined } from '../../src/kube/reads.js';
import {
  decideOrphanNode,
  DELETION_BY_POD_GC_REASON,
  DISRUPTION_TARGET,
  FORCE_DELETE_WHY,
  ORPHAN_MESSAGE,
  ORPHAN_QUARANTINE_MS,
  orphanCondition,
  POD_GC_EVENT_REASONS,
  shouldForceDeleteOutOfService,
} from '../../src/podgc/decision.js';
import { PodGCWriter, type ForceDeletePlan } from '../../src/podgc/writer.js';
import {
  ATTACH_DETACH_EVENT_SOURCE,
  DEFAULT_FORCE_DETACH_TIMEOUT_MS,
  decideForceDetach,
  FORCE_DETACH_EVENT_REASONS,
  nextReleasedAt,
  volumeHolders,
} from '../../src/volumes/decision.js';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { ForceDetachWriter } from '../../src/volumes/writer.js';
import type { WriteScheduler } from '../../src/kube/throttle.js';
import { counter, DetachHarness, node, OOS, pod, PodGCHarness, settle, T0, terminated, terminating, TIMEOUT } from '../support/outofservice-world.js';

// -------------------------------------------------------------------------------------------------
// PodGC: pure decisions
// -------------------------------------------------------------------------------------------------

describe('PodGC decisions', () => {
  test('out of service = not Ready (missing Ready counts) AND an out-of-service taint of any effect or value', () => {
    const cases: [Node, boolean][] = [
      [node('ready-tainted', 'True', [{ key: OOS, effect: 'NoExecute' }]), false],
      [node('notready-untainted', 'False'), false],
      [node('notready-noexecute', 'False', [{ key: OOS, effect: 'NoExecute' }]), true],
      [node('unknown-noschedule', 'Unknown', [{ key: OOS, effect: 'NoSchedule' }]), true],
      [node('unknown-prefer-value', 'Unknown', [{ key: OOS, value: 'shutdown', effect: 'PreferNoSchedule' }]), true],
      [node('no-ready-condition', undefined, [{ key: OOS, effect: 'NoExecute' }]), true],
      [node('other-taint', 'False', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]), false],
    ];
    for (const [n, want] of cases) assert.equal(isNodeOutOfService(n), want, n.name);
    assert.equal(isNodeOutOfService(undefined), false);
  });

  test('TestGCTerminating "mixed workers": only terminating pods on out-of-service nodes qualify', () => {
    const nodes = new Map<string, Node>([
      ['worker-0', node('worker-0', 'True')],
      ['worker-1', node('worker-1', 'True')],
      ['worker-2', node('worker-2', 'False')],
      ['worker-3', node('worker-3', 'False', [{ key: OOS, effect: 'NoSchedule' }])],
      ['worker-4', node('worker-4', 'False', [{ key: OOS, effect: 'PreferNoSchedule' }])],
      ['worker-5', node('worker-5', 'False', [{ key: OOS, value: 'any-value', effect: 'NoExecute' }])],
    ]);
    const del = { deletionTimestamp: T0 };
    const pods = [
      pod('a', 'worker-0', del), // Ready node
      pod('b', 'worker-0'),
      pod('c', 'worker-2', del), // not Ready, no taint
      pod('d', 'worker-3'), // not terminating
      pod('b1', 'worker-3', del),
      pod('b4', 'worker-4', del),
      pod('b5', 'worker-5', del),
      pod('b6', 'worker-5', { ...del, phase: 'Succeeded' }),
      pod('e', 'gone-node', del), // node unknown: the orphan pass owns it
    ];
    const chosen = pods.filter((p) => shouldForceDeleteOutOfService(p, nodes.get(p.nodeName))).map((p) => p.name);
    assert.deepEqual(chosen, ['b1', 'b4', 'b5', 'b6']);
  });

  test('a pod already force-deleted and only waiting for finalizers is not deleted again', () => {
    const n = node('w', 'False', [{ key: OOS, effect: 'NoExecute' }]);
    const blocked = pod('p', 'w', { deletionTimestamp: T0, deletionGracePeriodSeconds: 0, phase: 'Failed', finalizers: ['x/y'] });
    assert.equal(shouldForceDeleteOutOfService(blocked, n), false);
    assert.equal(shouldForceDeleteOutOfService({ ...blocked, finalizers: [] }, n), true);
    assert.equal(shouldForceDeleteOutOfService({ ...blocked, phase: 'Running' }, n), true);
  });

  test('the orphan condition is DisruptionTarget/DeletionByPodGC and keeps an existing True condition\'s transition time (UpdatePodCondition)', () => {
    const fresh = orphanCondition([], T0);
    assert.deepEqual(fresh, { type: DISRUPTION_TARGET, status: 'True', reason: DELETION_BY_POD_GC_REASON, message: ORPHAN_MESSAGE, lastTransitionTime: T0 });
    const kept = orphanCondition([{ type: DISRUPTION_TARGET, status: 'True', reason: 'DeletionByTaintManager', lastTransitionTime: T0 - 5000 }], T0);
    assert.equal(kept.lastTransitionTime, T0 - 5000);
    assert.equal(kept.reason, DELETION_BY_POD_GC_REASON);
    assert.equal(kept.message, ORPHAN_MESSAGE);
    // A False condition changes status: a new transition time. A True one without a time keeps none.
    assert.equal(orphanCondition([{ type: DISRUPTION_TARGET, status: 'False', lastTransitionTime: T0 - 5000 }], T0).lastTransitionTime, T0);
    assert.equal('lastTransitionTime' in orphanCondition([{ type: DISRUPTION_TARGET, status: 'True' }], T0), false);
  });

  test('orphan quarantine: forget known nodes, leave unseen nodes to other shards, wait, then confirm', () => {
    const base = { inCache: false, podCount: 2, scoped: false, seen: false, missingSince: T0, nowMs: T0, quarantineMs: 40_000 };
    assert.deepEqual(decideOrphanNode({ ...base, inCache: true }), { kind: 'forget' });
    assert.deepEqual(decideOrphanNode({ ...base, podCount: 0 }), { kind: 'forget' });
    assert.deepEqual(decideOrphanNode({ ...base, scoped: true }), { kind: 'not-ours' });
    assert.deepEqual(decideOrphanNode({ ...base, nowMs: T0 + 20_000 }), { kind: 'wait', waitMs: 20_000 });
    assert.deepEqual(decideOrphanNode({ ...base, scoped: true, seen: true, nowMs: T0 + 40_000 }), { kind: 'confirm' });
    assert.deepEqual(decideOrphanNode({ ...base, missingSince: undefined }), { kind: 'wait', waitMs: 40_000 });
  });

  test('property: an orphan is never confirmed before its quarantine ends', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 1, max: 100_000 }), (elapsed, q) => {
        const v = decideOrphanNode({ inCache: false, podCount: 1, scoped: false, seen: true, missingSince: T0, nowMs: T0 + elapsed, quarantineMs: q });
        assert.equal(v.kind === 'confirm', elapsed >= q);
        if (v.kind === 'wait') assert.equal(v.waitMs, q - elapsed);
      }),
    );
  });
});

// -------------------------------------------------------------------------------------------------
// PodGC: the controller
// -------------------------------------------------------------------------------------------------


describe('PodGCController: out-of-service', () => {
  test('the taint appearing on a not-Ready node force-deletes its terminating pods at once, without a condition (issue 53), with metrics and events', async () => {
    const h = new PodGCHarness();
    h.addNode(node('w', 'Unknown'));
    h.addPod(pod('stuck-1', 'w', terminating(T0 - 60_000)));
    h.addPod(pod('stuck-2', 'w', terminating(T0 - 60_000)));
    h.addPod(pod('running', 'w'));
    h.gc.start();
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0, 'no taint: nothing happens');

    h.updateNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute', timeAdded: T0 }]));
    await settle(h.clock);
    assert.deepEqual(h.deletedNames(), ['stuck-1', 'stuck-2'], 'terminating pods go, the running one stays (the taint manager owns it)');
    // Upstream's gcTerminating calls markFailedAndDeletePod: phase Failed, no condition (issue 53).
    for (const d of h.api.deleted) assert.equal(d.condition, undefined, `${d.key}: no DisruptionTarget on an out-of-service force delete`);
    assert.equal(h.clock.now(), T0, 'no waiting for a 20 s gc pass');
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { namespace: 'default', reason: 'out-of-service' }), 2);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pod_errors_total', { namespace: 'default', reason: 'out-of-service' }), 0);
    const podEvents = h.events.list.filter((e) => e.ref.kind === 'Pod');
    const nodeEvents = h.events.list.filter((e) => e.ref.kind === 'Node');
    assert.deepEqual(podEvents.map((e) => [e.ref.name, e.reason]).sort(), [
      ['stuck-1', POD_GC_EVENT_REASONS.podOutOfService],
      ['stuck-2', POD_GC_EVENT_REASONS.podOutOfService],
    ]);
    assert.equal(nodeEvents.length, 2);
    assert.ok(nodeEvents.every((e) => e.ref.name === 'w' && e.ref.uid === 'uid-w' && e.reason === POD_GC_EVENT_REASONS.nodeOutOfService));
    assert.match(nodeEvents[0]?.message ?? '', /default\/stuck-[12].*out of service/);
  });

  test('a pod that becomes terminating later (taint manager) is force-deleted when its update arrives', async () => {
    const h = new PodGCHarness();
    h.addNode(node('w', 'False', [{ key: OOS, effect: 'NoExecute' }]));
    h.addPod(pod('p', 'w'));
    h.gc.start();
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0);
    const p = pod('p', 'w', terminating(T0));
    h.addPod(p);
    h.gc.podChanged(p);
    await settle(h.clock);
    assert.deepEqual(h.deletedNames(), ['p']);
  });

  test('the taint on a Ready node does nothing', async () => {
    const h = new PodGCHarness();
    h.addPod(pod('p', 'w', terminating(T0)));
    h.gc.start();
    h.updateNode(node('w', 'True', [{ key: OOS, effect: 'NoExecute' }]));
    await settle(h.clock, 60_000);
    assert.equal(h.api.deleted.length, 0);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { reason: 'out-of-service' }), 0);
  });

  test('live re-check (#142331): the cache says out of service, the API says Ready again → nothing is deleted or counted', async () => {
    const h = new PodGCHarness();
    h.addNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    h.addPod(pod('p', 'w', terminating(T0)));
    h.api.nodes.set('w', node('w', 'True', [{ key: OOS, effect: 'NoExecute' }])); // the kubelet came back; cache lags
    h.gc.start();
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0);
    assert.ok(h.api.nodeGets.includes('w'), 'the node was read from the API');
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { reason: 'out-of-service' }), 0);
  });

  test('live re-check: a pod whose deletion was cancelled by a re-created pod of the same name is left alone', async () => {
    const h = new PodGCHarness();
    h.addNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    h.addPod(pod('p', 'w', terminating(T0)));
    h.api.pods.set('default/p', pod('p', 'w', { uid: 'uid-new' }));
    h.gc.start();
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0);
  });

  test('a failed force delete counts an error and is retried with backoff until it succeeds', async () => {
    const h = new PodGCHarness();
    h.addNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoSchedule' }]));
    h.addPod(pod('p', 'w', terminating(T0)));
    h.api.failures = 2;
    h.gc.start();
    await settle(h.clock, 1000);
    assert.deepEqual(h.deletedNames(), ['p']);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pod_errors_total', { namespace: 'default', reason: 'out-of-service' }), 2);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { namespace: 'default', reason: 'out-of-service' }), 3);
  });
});

describe('PodGCController: orphans (TestGCOrphaned)', () => {
  async function deletedNodeScenario(o: { quarantineMs?: number; scoped?: boolean; seen?: boolean } = {}): Promise<PodGCHarness> {
    const h = new PodGCHarness(o);
    const n = node('gone', 'True');
    if (o.seen ?? true) h.addNode(n);
    h.addPod(pod('a', 'gone', { phase: 'Failed' }));
    h.addPod(pod('b', 'gone', { phase: 'Succeeded' }));
    h.addPod(pod('c', 'gone'));
    h.gc.start();
    // The node object is deleted: gone from the cache and the API.
    h.nodes.del(n);
    h.api.nodes.delete('gone');
    h.gc.nodeDeleted(n);
    return h;
  }

  test('"no nodes": nothing during the 40 s quarantine, then every pod of the deleted node is force-deleted with the orphan condition', async () => {
    const h = await deletedNodeScenario();
    await settle(h.clock, 20_000);
    assert.equal(h.api.deleted.length, 0, '"quarantine not finished"');
    await settle(h.clock, 19_999);
    assert.equal(h.api.deleted.length, 0);
    await settle(h.clock, 1);
    assert.deepEqual(h.deletedNames(), ['a', 'b', 'c']);
    for (const d of h.api.deleted) assert.deepEqual({ ...d.condition, lastTransitionTime: 0 }, { type: DISRUPTION_TARGET, status: 'True', reason: DELETION_BY_POD_GC_REASON, message: ORPHAN_MESSAGE, lastTransitionTime: 0 });
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { namespace: 'default', reason: 'orphaned' }), 3);
    assert.ok(h.events.list.some((e) => e.ref.kind === 'Node' && e.ref.name === 'gone' && e.ref.uid === 'uid-gone' && e.reason === POD_GC_EVENT_REASONS.nodeOrphan));
    assert.equal(h.events.list.filter((e) => e.ref.kind === 'Pod' && e.reason === POD_GC_EVENT_REASONS.podOrphan).length, 3);
  });

  test('the quarantine is injectable (5 s)', async () => {
    const h = await deletedNodeScenario({ quarantineMs: 5000 });
    await settle(h.clock, 4999);
    assert.equal(h.api.deleted.length, 0);
    await settle(h.clock, 1);
    assert.deepEqual(h.deletedNames(), ['a', 'b', 'c']);
  });

  test('"node added to client after quarantine": the confirming GET finds it and nothing is deleted', async () => {
    const h = await deletedNodeScenario();
    await settle(h.clock, 30_000);
    h.api.nodes.set('gone', node('gone', 'True')); // back in the API, the cache has not caught up
    await settle(h.clock, 20_000);
    assert.equal(h.api.deleted.length, 0);
    assert.ok(h.api.nodeGets.includes('gone'));
  });

  test('"node added to informer after quarantine": nothing is deleted and the quarantine ends', async () => {
    const h = await deletedNodeScenario();
    await settle(h.clock, 30_000);
    h.updateNode(node('gone', 'True'));
    await settle(h.clock, 60_000);
    assert.equal(h.api.deleted.length, 0);
    assert.deepEqual(h.gc.view().missingNodes, []);
  });

  test('pods bound to a node that never appeared are found by the sweep (unscoped)', async () => {
    const h = new PodGCHarness();
    h.addPod(pod('x', 'never-existed'));
    h.gc.start();
    await settle(h.clock, 39_000);
    assert.equal(h.api.deleted.length, 0);
    await settle(h.clock, 1000);
    assert.deepEqual(h.deletedNames(), ['x']);
  });

  test('scoped (--node-selector): orphans of a node never seen are not judged; of a node seen, they are', async () => {
    const unseen = await deletedNodeScenario({ scoped: true, seen: false });
    await settle(unseen.clock, 120_000);
    assert.equal(unseen.api.deleted.length, 0, 'maybe another shard\'s node');
    const seen = await deletedNodeScenario({ scoped: true, seen: true });
    await settle(seen.clock, 40_000);
    assert.deepEqual(seen.deletedNames(), ['a', 'b', 'c']);
  });
});

describe('PodGCWriter.forceDeletePod (TestGCInspectingPatchedPodBeforeDeletion)', () => {
  const wirePod = (o: { uid?: string; rv?: string; phase?: string; generation?: number } = {}) => ({
    metadata: {
      namespace: 'default',
      name: 'p',
      uid: o.uid ?? 'uid-p',
      resourceVersion: o.rv ?? '7',
      creationTimestamp: new Date(T0),
      ...(o.generation !== undefined ? { generation: o.generation } : {}),
    },
    spec: { nodeName: 'w' },
    status: { phase: o.phase ?? 'Running' },
  });
  const passThrough: WriteScheduler = { schedule: (fn) => fn() };

  const clock = new FakeClock(T0);
  /** Drives the FakeClock (the conflict retry sleeps on it) until `p` settles. */
  async function drive<T>(p: Promise<T>): Promise<T> {
    let done = false;
    void p.then(
      () => (done = true),
      () => (done = true),
    );
    for (let i = 0; i < 1000 && !done; i++) await clock.advanceAsync(5);
    return p;
  }

  function stub(reads: ReturnType<typeof wirePod>[], patchErrors: unknown[] = []) {
    const calls: { op: string; arg: Record<string, unknown> }[] = [];
    const core = {
      readNamespacedPod: async () => {
        calls.push({ op: 'get', arg: {} });
        const next = reads.length > 1 ? reads.shift() : reads[0];
        return next;
      },
      patchNamespacedPodStatus: async (arg: Record<string, unknown>) => {
        calls.push({ op: 'patch', arg });
        const err = patchErrors.shift();
        if (err) throw err;
        return {};
      },
      deleteNamespacedPod: async (arg: Record<string, unknown>) => {
        calls.push({ op: 'delete', arg });
        return {};
      },
    };
    const clients = { core } as unknown as KubeClients;
    return { calls, writer: new PodGCWriter(clients, passThrough, clock) };
  }
  const cond = (): Promise<ForceDeletePlan> => Promise.resolve({ condition: orphanCondition([], T0), why: ORPHAN_MESSAGE });
  const noCondition = (): Promise<ForceDeletePlan> => Promise.resolve({ why: FORCE_DELETE_WHY['out-of-service'] });

  test('a plan without a condition (out-of-service, unscheduled) patches phase Failed and observedGeneration only (markFailedAndDeletePod)', async () => {
    const { calls, writer } = stub([wirePod({ generation: 2 })]);
    assert.equal(await writer.forceDeletePod('default', 'p', 'uid-p', noCondition), 'deleted');
    assert.deepEqual(calls.map((c) => c.op), ['get', 'patch', 'delete']);
    assert.deepEqual(calls[1]?.arg['body'], { metadata: { resourceVersion: '7' }, status: { phase: 'Failed', observedGeneration: 2 } });
  });

  test('patches phase Failed + DisruptionTarget (resourceVersion-guarded), then deletes with grace 0 and a UID precondition', async () => {
    const { calls, writer } = stub([wirePod()]);
    assert.equal(await writer.forceDeletePod('default', 'p', 'uid-p', cond), 'deleted');
    assert.deepEqual(calls.map((c) => c.op), ['get', 'patch', 'delete']);
    const body = calls[1]?.arg['body'] as { metadata: { resourceVersion: string }; status: { phase: string; conditions: Record<string, unknown>[] } };
    assert.equal(body.metadata.resourceVersion, '7');
    assert.equal(body.status.phase, 'Failed');
    assert.deepEqual(body.status.conditions, [
      { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: ORPHAN_MESSAGE, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ]);
    assert.deepEqual(calls[2]?.arg, { namespace: 'default', name: 'p', gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid: 'uid-p' } } });
  });

  // gc_controller.go markFailedAndDeletePodWithCondition: status.observedGeneration =
  // CalculatePodStatusObservedGeneration(pod); gcOrphaned's condition: ObservedGeneration =
  // CalculatePodConditionObservedGeneration(...). Both are metadata.generation in 1.37.2
  // (PodObservedGenerationTracking GA, locked on), and omitted (omitempty) when it is 0.
  test('status.observedGeneration and the condition\'s are the live pod\'s metadata.generation; left out when the server sets none', async () => {
    const { calls, writer } = stub([wirePod({ generation: 3 })]);
    assert.equal(await writer.forceDeletePod('default', 'p', 'uid-p', cond), 'deleted');
    const body = calls[1]?.arg['body'] as { status: { phase: string; observedGeneration?: number; conditions: Record<string, unknown>[] } };
    assert.equal(body.status.phase, 'Failed');
    assert.equal(body.status.observedGeneration, 3);
    assert.deepEqual(body.status.conditions, [
      { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: ORPHAN_MESSAGE, lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 3 },
    ]);

    for (const generation of [undefined, 0]) {
      const legacy = stub([wirePod(generation === undefined ? {} : { generation })]);
      assert.equal(await legacy.writer.forceDeletePod('default', 'p', 'uid-p', cond), 'deleted');
      const st = (legacy.calls[1]?.arg['body'] as { status: Record<string, unknown> & { conditions: Record<string, unknown>[] } }).status;
      assert.equal('observedGeneration' in st, false, `generation ${generation}: no status.observedGeneration`);
      assert.equal('observedGeneration' in (st.conditions[0] ?? {}), false, `generation ${generation}: no condition observedGeneration`);
    }
  });

  test('a terminal pod is deleted without a status patch (only Running pods are patched)', async () => {
    for (const phase of ['Succeeded', 'Failed']) {
      const { calls, writer } = stub([wirePod({ phase })]);
      assert.equal(await writer.forceDeletePod('default', 'p', 'uid-p', cond), 'deleted');
      assert.deepEqual(calls.map((c) => c.op), ['get', 'delete'], phase);
    }
  });

  test('a 409 on the status patch re-reads the pod and asks again; "no" then writes nothing more', async () => {
    const conflict = new ApiException(409, 'Conflict', '{"reason":"Conflict"}', {});
    const { calls, writer } = stub([wirePod({ rv: '7' }), wirePod({ rv: '8' })], [conflict]);
    let asked = 0;
    const result = await drive(
      writer.forceDeletePod('default', 'p', 'uid-p', (live) => {
        asked++;
        return live.resourceVersion === '7' ? cond() : Promise.resolve(undefined);
      }),
    );
    assert.equal(result, 'skipped');
    assert.equal(asked, 2);
    assert.deepEqual(calls.map((c) => c.op), ['get', 'patch', 'get']);
  });

  test('another UID under the same name is "gone": nothing is written', async () => {
    const { calls, writer } = stub([wirePod({ uid: 'other' })]);
    assert.equal(await writer.forceDeletePod('default', 'p', 'uid-p', cond), 'gone');
    assert.deepEqual(calls.map((c) => c.op), ['get']);
  });
});

// -------------------------------------------------------------------------------------------------
// Force detach: pure decisions
// -------------------------------------------------------------------------------------------------


describe('IsPodTerminated (pkg/volume/util/util.go) and the container states it reads', () => {
  test('terminal phases, or deleted with every container, init container and ephemeral container terminated or waiting', () => {
    const cases: [string, Partial<Pod>, boolean][] = [
      ['running', {}, false],
      ['pending', { phase: 'Pending' }, false],
      ['succeeded', { phase: 'Succeeded' }, true],
      ['failed', { phase: 'Failed' }, true],
      ['deleted, containers running', terminating(T0), false],
      ['deleted, no container running', terminated(T0), true],
      ['not deleted, no container running', { containersNotRunning: true }, false],
      ['deleted, container state unknown (not built by toPod)', { deletionTimestamp: T0 }, false],
    ];
    for (const [name, o, want] of cases) assert.equal(isPodTerminated(pod('p', 'w', o)), want, name);
  });

  test('toPod: notRunning over containerStatuses, initContainerStatuses and ephemeralContainerStatuses', () => {
    const wire = (status: Record<string, unknown>): Pod | undefined =>
      toPod({ metadata: { namespace: 'default', name: 'p', uid: 'u', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: {}, status });
    const running = { name: 'c', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } };
    const done = { name: 'c', state: { terminated: { exitCode: 0 } } };
    const waiting = { name: 'c', state: { waiting: { reason: 'ContainerCreating' } } };
    const cases: [string, Record<string, unknown>, boolean][] = [
      ['no statuses at all (upstream: empty lists are not running)', {}, true],
      ['all terminated or waiting', { containerStatuses: [done, waiting], initContainerStatuses: [done] }, true],
      ['a running container', { containerStatuses: [done, running] }, false],
      ['a running init container', { containerStatuses: [waiting], initContainerStatuses: [running] }, false],
      ['a running ephemeral container', { containerStatuses: [done], ephemeralContainerStatuses: [running] }, false],
      ['an empty state counts as running (Go zero value)', { containerStatuses: [{ name: 'c', state: {} }] }, false],
      ['a missing state counts as running', { containerStatuses: [{ name: 'c' }] }, false],
    ];
    for (const [name, status, want] of cases) assert.equal(wire(status)?.containersNotRunning, want, name);
  });
});

describe('force-detach decisions', () => {
  const oos = node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]);
  const notReady = node('w', 'Unknown');
  const base = { holders: [] as Pod[], releasedAt: T0, nowMs: T0, timeoutMs: TIMEOUT, disableTimeout: false };

  test('Test_Run_OneVolumeDetachOnOutOfServiceTaintedNode: out of service and no pod holds the volume → detach at once', () => {
    assert.deepEqual(decideForceDetach({ ...base, node: oos }), { action: 'detach', reason: 'out-of-service' });
  });

  test('a holder keeps the volume on an out-of-service node too (upstream detaches only volumes out of the desired state of the world)', () => {
    const d = decideForceDetach({ ...base, node: oos, holders: [pod('t', 'w', terminating(T0))], nowMs: T0 + 10 * TIMEOUT });
    assert.equal(d.action, 'keep');
    assert.match(d.action === 'keep' ? d.why : '', /default\/t/);
  });

  test('Test_Run_OneVolumeDetachOnNoOutOfServiceTaintedNode: not Ready, no taint, long timeout → keep until the timeout has passed (upstream: elapsed > max, strictly)', () => {
    const d = decideForceDetach({ ...base, node: notReady, nowMs: T0 + TIMEOUT });
    assert.equal(d.action, 'keep');
    assert.equal(d.action === 'keep' ? d.recheckAtMs : undefined, T0 + TIMEOUT + 1);
    assert.deepEqual(decideForceDetach({ ...base, node: notReady, nowMs: T0 + TIMEOUT + 1 }), { action: 'detach', reason: 'timeout' });
  });

  test('Test_Run_OneVolumeDetachOnUnhealthyNodeWithForceDetachOnUnmountDisabled: never on timeout, still on the taint', () => {
    const d = decideForceDetach({ ...base, node: notReady, nowMs: T0 + 100 * TIMEOUT, disableTimeout: true });
    assert.equal(d.action, 'keep');
    assert.equal(d.action === 'keep' ? d.recheckAtMs : 0, undefined);
    assert.deepEqual(decideForceDetach({ ...base, node: oos, disableTimeout: true }), { action: 'detach', reason: 'out-of-service' });
  });

  test('a deleted node is judged like a not-Ready one (timeout path)', () => {
    assert.deepEqual(decideForceDetach({ ...base, node: undefined, nowMs: T0 + TIMEOUT + 1 }), { action: 'detach', reason: 'timeout' });
  });

  test('property: never detach while a pod holds the volume, nor on a Ready node', () => {
    const readiness = fc.constantFrom<'True' | 'False' | 'Unknown' | undefined>('True', 'False', 'Unknown', undefined);
    const holder = fc.constantFrom<Partial<Pod> | undefined>(undefined, {}, terminating(T0), { phase: 'Pending' });
    fc.assert(
      fc.property(readiness, fc.boolean(), holder, fc.integer({ min: 0, max: 10 * TIMEOUT }), fc.boolean(), (r, tainted, h, elapsed, disable) => {
        const n = node('w', r, tainted ? [{ key: OOS, effect: 'NoExecute' }] : []);
        const holders = h === undefined ? [] : [pod('h', 'w', h)];
        const d = decideForceDetach({ node: n, holders, releasedAt: T0, nowMs: T0 + elapsed, timeoutMs: TIMEOUT, disableTimeout: disable });
        if (holders.length > 0 || r === 'True') assert.equal(d.action, 'keep');
        if (d.action === 'detach') assert.equal(d.reason, tainted ? 'out-of-service' : 'timeout');
      }),
    );
  });

  test('volume holders: PVC → PV mapping, terminated pods let go, a terminating pod with running containers holds, unresolvable claims count', () => {
    const claims = new Map([['default/data-a', 'pv-a'], ['default/data-b', 'pv-b']]);
    const resolve = (ns: string, c: string): string | undefined => claims.get(`${ns}/${c}`);
    const pods = [
      pod('a-running', 'w', { pvcNames: ['data-a'] }),
      pod('a-terminating', 'w', { pvcNames: ['data-a'], ...terminating(T0) }),
      pod('a-terminated', 'w', { pvcNames: ['data-a'], ...terminated(T0) }),
      pod('a-done', 'w', { pvcNames: ['data-a'], phase: 'Succeeded' }),
      pod('b', 'w', { pvcNames: ['data-b'] }),
      pod('a-elsewhere', 'x', { pvcNames: ['data-a'] }),
      pod('unknown-claim', 'w', { pvcNames: ['missing'] }),
      pod('no-claims', 'w'),
    ];
    assert.deepEqual(volumeHolders(pods, 'w', { pvName: 'pv-a', attacher: 'csi' }, resolve).map((p) => p.name), ['a-running', 'a-terminating', 'unknown-claim']);
  });

  test('released-at (SetDetachRequestTime / ResetDetachRequestTime): set when the last holder lets go, kept, reset by a holder', () => {
    assert.equal(nextReleasedAt(undefined, [], T0), T0, 'first seen without holders: now');
    assert.equal(nextReleasedAt(T0 - 1000, [], T0 + 5000), T0 - 1000, 'kept while no pod holds it');
    assert.equal(nextReleasedAt(T0 - 1000, [pod('t', 'w', terminating(T0 - 60_000))], T0), undefined, 'a terminating pod with running containers holds it');
    assert.equal(nextReleasedAt(undefined, [pod('t', 'w', terminating(T0 - 60_000))], T0), undefined, 'the clock does not start when termination begins');
  });
});

// -------------------------------------------------------------------------------------------------
// Force detach: the controller
// -------------------------------------------------------------------------------------------------


describe('ForceDetachController', () => {
  test('out of service: once PodGC has force-deleted the terminating pod, the VolumeAttachment is deleted at once, with metric and a Warning event naming it', async () => {
    const h = new DetachHarness();
    h.setup('Unknown', terminating(T0 - 10_000));
    h.fd.start();
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0, 'no taint yet, timeout far away');
    h.setNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0, 'its container is still reported running: the pod holds the volume (upstream: still in the desired state)');
    h.deletePod(pod('p', 'w', { pvcNames: ['data-p'] })); // PodGC force-deletes it
    await settle(h.clock);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.equal(await h.forced('out-of-service'), 1);
    assert.equal(await h.forced('timeout'), 0);
    const [e] = h.events.list;
    assert.equal(e?.ref.kind, 'Node');
    assert.equal(e?.ref.name, 'w');
    assert.equal(e?.type, 'Warning');
    assert.equal(e?.reason, FORCE_DETACH_EVENT_REASONS['out-of-service']);
    assert.match(e?.message ?? '', /pv-1.*VolumeAttachment va-1/);
  });

  test('out of service: a terminating pod whose containers are reported terminated lets go of the volume at once', async () => {
    const h = new DetachHarness();
    h.setup('Unknown', terminated(T0 - 10_000));
    h.fd.start();
    h.setNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoSchedule' }]));
    await settle(h.clock);
    assert.deepEqual(h.api.deleted, ['va-1']);
  });

  test('issue 14: out of service with the terminating pod\'s containers still running → never detached while it holds the volume', async () => {
    const h = new DetachHarness({ timeoutMs: 5000 });
    h.setup('Unknown', terminating(T0));
    h.fd.start();
    h.setNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    await settle(h.clock, 100 * 5000);
    assert.equal(h.api.deleted.length, 0);
    assert.equal(await h.forced('out-of-service'), 0);
    assert.equal(await h.forced('timeout'), 0);
  });

  test('out of service but a running pod still uses the volume → never detached; detached once that pod is gone', async () => {
    const h = new DetachHarness();
    h.setup('Unknown');
    h.fd.start();
    h.setNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoSchedule' }]));
    await settle(h.clock, 10 * TIMEOUT);
    assert.equal(h.api.deleted.length, 0);
    h.deletePod(pod('p', 'w', { pvcNames: ['data-p'] }));
    await settle(h.clock);
    assert.deepEqual(h.api.deleted, ['va-1']);
  });

  test('the taint on a Ready node does nothing, even with the pod gone', async () => {
    const h = new DetachHarness();
    h.setup('True');
    h.fd.start();
    h.deletePod(pod('p', 'w', { pvcNames: ['data-p'] }));
    h.setNode(node('w', 'True', [{ key: OOS, effect: 'NoExecute' }]));
    await settle(h.clock, 10 * TIMEOUT);
    assert.equal(h.api.deleted.length, 0);
  });

  test('issue 14 repro: --force-detach-timeout=5s, dead node, pod left Terminating with its container reported running → the VolumeAttachment stays', async () => {
    const h = new DetachHarness({ timeoutMs: 5000 });
    h.setup('Unknown');
    h.fd.start();
    await settle(h.clock, 1500);
    h.setPod(pod('p', 'w', { pvcNames: ['data-p'], ...terminating(h.clock.now()) }));
    await settle(h.clock, 100 * 5000);
    assert.equal(h.api.deleted.length, 0, 'its containers may still be writing: upstream keeps the pod in the desired state of the world');
    assert.deepEqual(h.fd.view().released, [], 'no timeout clock runs');
    assert.equal(await h.forced('timeout'), 0);
  });

  test('timeout: the clock starts when the containers are reported terminated, and the detach comes `timeout` later, not before', async () => {
    const h = new DetachHarness({ timeoutMs: 5000 });
    h.setup('Unknown');
    h.fd.start();
    const began = h.clock.now();
    h.setPod(pod('p', 'w', { pvcNames: ['data-p'], ...terminating(began) }));
    await settle(h.clock, 60_000);
    assert.equal(h.api.deleted.length, 0);
    const stopped = h.clock.now();
    h.setPod(pod('p', 'w', { pvcNames: ['data-p'], ...terminated(began) }));
    await settle(h.clock, 5000);
    assert.equal(h.api.deleted.length, 0, 'not before the timeout has passed');
    await settle(h.clock, 1);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.equal(h.clock.now() - stopped, 5001);
    assert.equal(await h.forced('timeout'), 1);
    assert.equal(h.events.list[0]?.reason, FORCE_DETACH_EVENT_REASONS.timeout);
  });

  test('Test_Run_Positive_OneDesiredVolumeAttachThenDetachWithMountedVolume: the pod is deleted → detached `timeout` after, node unknown to the cache (not healthy)', async () => {
    const h = new DetachHarness({ timeoutMs: 5000 });
    h.setup('Unknown', terminating(T0));
    h.nodes.del(node('w', 'Unknown'));
    h.api.nodes.delete('w');
    h.fd.start();
    await settle(h.clock, 20_000);
    assert.equal(h.api.deleted.length, 0, 'still in the desired state of the world');
    const gone = h.clock.now();
    h.deletePod(pod('p', 'w', { pvcNames: ['data-p'] }));
    await settle(h.clock, 5000);
    assert.equal(h.api.deleted.length, 0);
    await settle(h.clock, 1);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.equal(h.clock.now() - gone, 5001);
    assert.equal(await h.forced('timeout'), 1);
    assert.equal(await h.forced('out-of-service'), 0);
  });

  test('Test_Run_OneVolumeDetachOnUnhealthyNode: released on a healthy node → kept past the timeout; node turns unhealthy → detached (timeout)', async () => {
    const h = new DetachHarness();
    h.setup('True');
    h.fd.start();
    h.deletePod(pod('p', 'w', { pvcNames: ['data-p'] }));
    await settle(h.clock, TIMEOUT + 1000);
    assert.equal(h.api.deleted.length, 0);
    h.setNode(node('w', 'Unknown'));
    await settle(h.clock);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.equal(await h.forced('timeout'), 1);
  });

  test('--disable-force-detach-on-timeout: never on timeout; the out-of-service taint still detaches', async () => {
    const h = new DetachHarness({ timeoutMs: 10_000, disable: true });
    h.setup('Unknown', terminated(T0));
    h.fd.start();
    await settle(h.clock, 120_000);
    assert.equal(h.api.deleted.length, 0);
    h.setNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    await settle(h.clock);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.equal(await h.forced('out-of-service'), 1);
  });

  test('a pod that comes back to running (new pod using the claim) resets the timeout clock', async () => {
    const h = new DetachHarness({ timeoutMs: 10_000 });
    h.setup('Unknown', terminated(T0));
    h.fd.start();
    await settle(h.clock, 5000);
    h.deletePod(pod('p', 'w'));
    h.setPod(pod('p2', 'w', { pvcNames: ['data-p'] }));
    await settle(h.clock, 60_000);
    assert.equal(h.api.deleted.length, 0);
  });

  test('live re-check: the cache says out of service, the API says the node is Ready → not deleted', async () => {
    const h = new DetachHarness();
    h.setup('Unknown', terminated(T0));
    h.fd.start();
    const tainted = node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]);
    h.nodes.put(tainted);
    h.api.nodes.set('w', node('w', 'True', [{ key: OOS, effect: 'NoExecute' }]));
    h.fd.nodeChanged(tainted);
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0);
    assert.equal(await h.forced('out-of-service'), 0);
  });

  test('live re-check: an attachment already being deleted (deletionTimestamp) is left to the attacher', async () => {
    const h = new DetachHarness();
    h.setup('Unknown', terminated(T0));
    const va = h.api.vas.get('va-1');
    assert.ok(va);
    h.api.vas.set('va-1', { ...va, deletionTimestamp: T0 });
    h.fd.start();
    h.setNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    await settle(h.clock);
    assert.equal(h.api.deleted.length, 0);
  });

  test('scoped (--node-selector): an attachment on a node this process never saw is ignored', async () => {
    const h = new DetachHarness({ timeoutMs: 1000, scoped: true });
    const va: VolumeAttachment = { name: 'va-x', uid: 'u', resourceVersion: '1', attacher: 'csi', nodeName: 'foreign', persistentVolumeName: 'pv-x', attached: true };
    h.vas.put(va);
    h.api.vas.set(va.name, va);
    h.fd.start();
    await settle(h.clock, 120_000);
    assert.equal(h.api.deleted.length, 0);
  });
});

// -------------------------------------------------------------------------------------------------
// Issue 14: live reads fail closed; per-node state does not grow with node churn
// -------------------------------------------------------------------------------------------------

const writeThrough: WriteScheduler = { schedule: (fn) => fn() };
const apiError = (code: number): ApiException<string> => new ApiException(code, `HTTP ${code}`, `{"code":${code}}`, {});
/** A wire Node as the API returns it. */
const wireNode = (name: string, ready: 'True' | 'Unknown'): Record<string, unknown> => ({
  metadata: { name, uid: `uid-${name}`, resourceVersion: '9', creationTimestamp: '2025-12-31T00:00:00Z' },
  spec: {},
  status: { conditions: [{ type: 'Ready', status: ready }] },
});
/** A node object the converters reject (no uid, resourceVersion or creationTimestamp). */
const unparsableNode = (name: string): Record<string, unknown> => ({ metadata: { name } });

describe('issue 14: live reads (src/kube/reads.ts) — only a 404 proves absence', () => {
  test('404 → undefined; an unparsable object → LiveReadError "unparsable"; any other error → LiveReadError "error" with its status', async () => {
    assert.equal(await readOrUndefined('node', 'n', () => Promise.reject(apiError(404)), toNode), undefined);
    await assert.rejects(readOrUndefined('node', 'n', async () => unparsableNode('n'), toNode), (e: unknown) => e instanceof LiveReadError && e.reason === 'unparsable' && e.resource === 'node');
    await assert.rejects(readOrUndefined('node', 'n', () => Promise.reject(apiError(500)), toNode), (e: unknown) => e instanceof LiveReadError && e.reason === 'error' && e.code === 500);
    await assert.rejects(readOrUndefined('node', 'n', () => Promise.reject(new TypeError('fetch failed')), toNode), (e: unknown) => e instanceof LiveReadError && e.reason === 'error' && e.code === undefined);
    assert.equal((await readOrUndefined('node', 'n', async () => wireNode('n', 'True'), toNode))?.uid, 'uid-n');
  });

  test('readNode over the client: an unparsable answer is not "gone"', async () => {
    const clients = { core: { readNode: async () => unparsableNode('w') } } as unknown as KubeClients;
    await assert.rejects(readNode(clients, 'w'), LiveReadError);
  });
});

describe('issue 14: PodGC orphans fail closed (TestGCOrphaned, confirming GET)', () => {
  test('the confirming node GET answers 500, then an unparsable object: nothing is force-deleted, each failure is counted and retried; a real 404 lets the orphans go', async () => {
    const h = new PodGCHarness();
    let answer: () => Promise<unknown> = () => Promise.reject(apiError(500));
    const live = new PodGCWriter({ core: { readNode: () => answer() } } as unknown as KubeClients, writeThrough, h.clock);
    h.api.getNode = (name) => live.getNode(name);
    const n = node('gone', 'True');
    h.addNode(n);
    h.addPod(pod('a', 'gone'));
    h.addPod(pod('b', 'gone', { phase: 'Succeeded' }));
    h.gc.start();
    h.nodes.del(n);
    h.gc.nodeDeleted(n);
    await settle(h.clock, ORPHAN_QUARANTINE_MS + 500);
    assert.equal(h.api.deleted.length, 0, 'a 500 proves nothing');
    const failures = (reason: string): Promise<number> => counter(h.metrics, 'pod_gc_collector_live_read_failures_total', { resource: 'node', reason });
    assert.ok((await failures('error')) >= 1);
    answer = async () => unparsableNode('gone');
    await settle(h.clock, 20_000);
    assert.equal(h.api.deleted.length, 0, 'an object we cannot parse is not a 404 (the old code force-deleted every pod here)');
    assert.ok((await failures('unparsable')) >= 1);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { reason: 'orphaned' }), 0, 'a failed read is not a force-delete attempt');
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pod_errors_total', { reason: 'orphaned' }), 0);
    answer = () => Promise.reject(apiError(404));
    await settle(h.clock, 60_000);
    assert.deepEqual(h.deletedNames(), ['a', 'b']);
  });

  test('out-of-service: the live node GET answers with an unparsable object → the pod is not force-deleted, the failure is counted', async () => {
    const h = new PodGCHarness();
    const live = new PodGCWriter({ core: { readNode: async () => unparsableNode('w') } } as unknown as KubeClients, writeThrough, h.clock);
    h.api.getNode = (name) => live.getNode(name);
    h.addNode(node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]));
    h.addPod(pod('p', 'w', terminating(T0)));
    h.gc.start();
    await settle(h.clock, 5000);
    assert.equal(h.api.deleted.length, 0);
    assert.ok((await counter(h.metrics, 'pod_gc_collector_live_read_failures_total', { resource: 'node', reason: 'unparsable' })) >= 1);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', { reason: 'out-of-service' }), 0);
  });
});

describe('issue 14: force detach fails closed', () => {
  test('the live node GET answers with an unparsable object → not "node deleted": no timeout detach, counted, retried; the real answer decides', async () => {
    const h = new DetachHarness({ timeoutMs: 5000 });
    h.setup('Unknown', terminated(T0)); // the cache: node not Ready, the pod let go of the volume
    let answer: () => Promise<unknown> = async () => unparsableNode('w');
    const live = new ForceDetachWriter({ core: { readNode: () => answer() } } as unknown as KubeClients, writeThrough);
    h.api.getNode = (name) => live.getNode(name);
    h.fd.start();
    await settle(h.clock, 30_000);
    assert.equal(h.api.deleted.length, 0, 'the old code read this as "node gone" and force-detached on timeout');
    assert.ok((await counter(h.metrics, 'attachdetach_controller_live_read_failures_total', { resource: 'node', reason: 'unparsable' })) >= 1);
    answer = async () => wireNode('w', 'True'); // the kubelet is back: the cache lagged
    await settle(h.clock, 60_000);
    assert.equal(h.api.deleted.length, 0);
    answer = () => Promise.reject(apiError(404)); // now really gone
    h.fd.resync();
    await settle(h.clock, 1000);
    assert.deepEqual(h.api.deleted, ['va-1']);
    assert.equal(await h.forced('timeout'), 1);
  });
});

describe('issue 14: per-node state is pruned on node churn', () => {
  test('PodGC: nodes deleted without pods, or missing from the cache, leave no state; orphans leave none once resolved', async () => {
    const h = new PodGCHarness({ quarantineMs: 1000 });
    h.gc.start();
    for (let i = 0; i < 50; i++) {
      const n = node(`n${i}`, 'True');
      h.updateNode(n);
      h.nodes.del(n);
      h.api.nodes.delete(n.name);
      if (i % 2 === 0) h.gc.nodeDeleted(n); // the odd ones: a missed delete event, left to the sweep
    }
    await settle(h.clock, 20_000);
    assert.equal(h.gc.view().trackedNodes, 0);
    const x = node('x', 'True');
    h.updateNode(x);
    h.addPod(pod('orphan', 'x'));
    h.nodes.del(x);
    h.api.nodes.delete('x');
    h.gc.nodeDeleted(x);
    assert.equal(h.gc.view().trackedNodes, 1, 'kept while its orphan is pending');
    await settle(h.clock, 2000);
    assert.deepEqual(h.deletedNames(), ['orphan']);
    assert.equal(h.gc.view().trackedNodes, 0);
  });

  test('force detach (scoped): deleted nodes leave no state; one with an attachment left is kept until the attachment goes', async () => {
    const h = new DetachHarness({ scoped: true, timeoutMs: 1000 });
    h.fd.start();
    for (let i = 0; i < 50; i++) {
      const n = node(`n${i}`, 'True');
      h.setNode(n);
      h.nodes.del(n);
      h.fd.nodeChanged(n); // run.ts delivers node deletions to nodeChanged
    }
    assert.equal(h.fd.view().trackedNodes, 0);
    h.setup('True');
    const w = node('w', 'True');
    h.nodes.del(w);
    h.fd.nodeChanged(w);
    assert.equal(h.fd.view().trackedNodes, 1, 'still needed: the attachment on the deleted node is this shard\'s');
    const va = h.vas.get('va-1');
    assert.ok(va);
    h.vas.del(va);
    h.fd.volumeAttachmentDeleted(va);
    assert.equal(h.fd.view().trackedNodes, 0);
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", volumes/decision.ts): the names
// users and upstream share, the timeout's default and the reasons a detach is kept.
describe('force-detach names, default and reasons', () => {
  const notReady = node('w', 'Unknown');
  const base = { holders: [] as Pod[], releasedAt: T0, nowMs: T0, timeoutMs: TIMEOUT, disableTimeout: false };

  test("upstream's event source and our event reasons", () => {
    assert.equal(ATTACH_DETACH_EVENT_SOURCE, 'attachdetach-controller');
    assert.deepEqual(FORCE_DETACH_EVENT_REASONS, { 'out-of-service': 'ForceDetachedOutOfService', timeout: 'ForceDetachedTimeout' });
  });

  test("--force-detach-timeout defaults to upstream's ReconcilerMaxWaitForUnmountDuration, 6 minutes", async () => {
    assert.equal(DEFAULT_FORCE_DETACH_TIMEOUT_MS, 360_000);
    const config = await parseControllerFlags([], {});
    assert.equal(config.forceDetachTimeout, DEFAULT_FORCE_DETACH_TIMEOUT_MS);
  });

  test('why a detach is kept: a Ready node, the timeout disabled', () => {
    assert.deepEqual(decideForceDetach({ ...base, node: node('w', 'True') }), { action: 'keep', why: 'node is Ready' });
    assert.deepEqual(decideForceDetach({ ...base, node: notReady, disableTimeout: true }), { action: 'keep', why: 'node is not Ready; force detach on timeout is disabled' });
  });

  test('the holders named: up to three, then how many more', () => {
    const held = (n: number) => decideForceDetach({ ...base, node: notReady, holders: Array.from({ length: n }, (_, i) => pod(`p${i}`, 'w')) });
    const suffix = ' (not terminated: running, or terminating with containers still running)';
    assert.deepEqual(held(3), { action: 'keep', why: `held by pod default/p0, default/p1, default/p2${suffix}` });
    assert.deepEqual(held(5), { action: 'keep', why: `held by pod default/p0, default/p1, default/p2 and 2 more${suffix}` });
  });
});
