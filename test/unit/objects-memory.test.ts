/**
 * The memory savings of src/kube/objects.ts (issue 18) change no value: the shared empty list,
 * and {@link intern} returning an equal string, bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { intern, toNode, toPod } from '../../src/kube/objects.js';
import { CACHED_POD_CONDITION_TYPES } from '../../src/kube/podconditions.js';
import { DISRUPTION_TARGET_CONDITION_TYPE } from '../../src/tainteviction/events.js';
import { DISRUPTION_TARGET } from '../../src/podgc/decision.js';

function wirePod(name: string, extra: Record<string, unknown> = {}): unknown {
  return JSON.parse(
    JSON.stringify({
      metadata: { namespace: 'team-a', name, uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2026-11-24T07:00:00Z' },
      spec: { nodeName: 'node-in-zone-a-000001', tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-24T07:00:01Z' }] },
      ...extra,
    }),
  );
}

test('pods without finalizers, owners or claims share one frozen empty list; a write to it throws', () => {
  const a = toPod(wirePod('a'));
  const b = toPod(wirePod('b'));
  assert.ok(a && b);
  assert.deepEqual(a.finalizers, []);
  assert.equal(a.finalizers, b.finalizers);
  assert.equal(a.ownerReferences, b.pvcNames);
  assert.ok(Object.isFrozen(a.finalizers));
  assert.throws(() => (a.finalizers as string[]).push('x'), TypeError);
});

test('pods with equal tolerations or owner references share one frozen list; any difference (a field, the order) keeps them apart; a write throws', () => {
  const owner = (uid: string): unknown => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid, controller: true });
  const meta = (name: string, uid = 'rs-1'): Record<string, unknown> => ({
    namespace: 'team-a',
    name,
    uid: `uid-${name}`,
    resourceVersion: '7',
    creationTimestamp: '2026-11-24T07:00:00Z',
    ownerReferences: [owner(uid)],
  });
  const notReady = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
  const unreachable = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
  const spec = (tolerations: unknown[]): Record<string, unknown> => ({ nodeName: 'n1', tolerations });
  const a = toPod(wirePod('a', { metadata: meta('a'), spec: spec([notReady, unreachable]) }));
  const b = toPod(wirePod('b', { metadata: meta('b'), spec: spec([notReady, unreachable]) }));
  const swapped = toPod(wirePod('c', { metadata: meta('c', 'rs-2'), spec: spec([unreachable, notReady]) }));
  const longer = toPod(wirePod('d', { metadata: meta('d'), spec: spec([notReady, { ...unreachable, tolerationSeconds: 301 }]) }));
  assert.ok(a && b && swapped && longer);
  assert.equal(a.tolerations, b.tolerations);
  assert.equal(a.ownerReferences, b.ownerReferences);
  assert.deepEqual(a.tolerations, [notReady, unreachable]);
  assert.deepEqual(a.ownerReferences, [owner('rs-1')]);
  assert.notEqual(a.tolerations, swapped.tolerations);
  assert.deepEqual(swapped.tolerations, [unreachable, notReady]);
  assert.notEqual(a.ownerReferences, swapped.ownerReferences);
  assert.deepEqual(swapped.ownerReferences, [owner('rs-2')]);
  assert.notEqual(a.tolerations, longer.tolerations);
  assert.equal(longer.tolerations[1]?.tolerationSeconds, 301);
  assert.ok(Object.isFrozen(a.tolerations) && Object.isFrozen(a.tolerations[0]) && Object.isFrozen(a.ownerReferences[0]));
  assert.throws(() => ((a.tolerations[0] as { tolerationSeconds?: number }).tolerationSeconds = 1), TypeError);
  assert.throws(() => (a.ownerReferences as unknown[]).push({}), TypeError);
});

test('lists with entries keep every entry, in order, and drop only malformed ones', () => {
  const pod = toPod(wirePod('c', {}));
  assert.ok(pod);
  assert.deepEqual(pod.tolerations, [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
  assert.deepEqual(pod.conditions, [{ type: 'Ready', status: 'True', lastTransitionTime: Date.parse('2026-11-24T07:00:01Z') }]);
  assert.equal(pod.nodeName, 'node-in-zone-a-000001');
  assert.equal(pod.namespace, 'team-a');
  const withBad = toPod(
    wirePod('d', { metadata: { namespace: 'n', name: 'd', uid: 'u', resourceVersion: '1', creationTimestamp: '2026-11-24T07:00:00Z', finalizers: ['f1', 3, 'f2'] } }),
  );
  assert.deepEqual(withBad?.finalizers, ['f1', 'f2']);
  const node = toNode({
    metadata: { name: 'n1', uid: 'u1', resourceVersion: '1', creationTimestamp: '2026-11-24T07:00:00Z', labels: { 'topology.kubernetes.io/zone': 'zone-a', bad: 1 } },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }, { status: 'True' }] },
  });
  assert.deepEqual(node?.labels, { 'topology.kubernetes.io/zone': 'zone-a' });
  assert.deepEqual(node?.conditions, [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }]);
});

test('intern returns an equal string, also after the table was dropped for size', () => {
  const names = Array.from({ length: 70_000 }, (_, i) => `node-${i}-${'x'.repeat(20)}`);
  for (const n of names) assert.equal(intern(n), n);
  assert.equal(intern(`node-1-${'x'.repeat(20)}`), names[1]);
  assert.equal(intern(''), '');
});

test('a pod caches only the condition types a decision reads (Ready, DisruptionTarget, PodScheduled), each whole, in wire order', () => {
  const t = '2026-11-24T07:00:01Z';
  const ms = Date.parse(t);
  const kubelet = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t }));
  const dt = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: t };
  const ready = { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]', lastProbeTime: t, lastTransitionTime: t };
  const pod = toPod(wirePod('kubelet', { status: { phase: 'Running', conditions: [...kubelet.filter((c) => c.type !== 'Ready'), ready, dt] } }));
  assert.ok(pod);
  assert.deepEqual(pod.conditions, [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: ms },
    { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]', lastTransitionTime: ms, lastProbeTime: ms },
    { type: 'DisruptionTarget', status: 'True', reason: dt.reason, message: dt.message, lastTransitionTime: ms },
  ]);
  // Only dropped types: the shared empty list.
  const none = toPod(wirePod('none', { status: { phase: 'Pending', conditions: [{ type: 'Initialized', status: 'True' }] } }));
  assert.equal(none?.conditions, toPod(wirePod('none2', { status: { phase: 'Pending' } }))?.conditions);
  assert.deepEqual(none?.conditions, []);
  // Node conditions are all kept (pressure conditions drive taints and explain).
  const node = toNode({
    metadata: { name: 'n', uid: 'u', resourceVersion: '1', creationTimestamp: t },
    status: { conditions: ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable', 'SomethingNew'].map((type) => ({ type, status: 'False', lastHeartbeatTime: t })) },
  });
  assert.deepEqual(
    node?.conditions.map((c) => [c.type, c.lastHeartbeatTime]),
    ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable', 'SomethingNew'].map((type) => [type, ms]),
  );
});

test('every pod condition type a controller reads by constant is cached', () => {
  for (const type of [DISRUPTION_TARGET_CONDITION_TYPE, DISRUPTION_TARGET, 'Ready', 'PodScheduled']) assert.ok(CACHED_POD_CONDITION_TYPES.has(type), type);
});
