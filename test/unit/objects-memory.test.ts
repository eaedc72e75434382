/**
 * The memory savings of src/kube/objects.ts (issue 18) change no value: the shared empty list,
 * and {@link intern} returning an equal string, bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { intern, toNode, toPod } from '../../src/kube/objects.js';

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
