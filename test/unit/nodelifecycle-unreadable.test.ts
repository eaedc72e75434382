/**
 * Deliberate difference 24 (docs/node-lifecycle.md, src/nodelifecycle/unreadable.ts): a node whose
 * newest version could not be read (the Node informer keeps its last readable copy, marked
 * `newestUnreadable`) is counted in zone states but neither judged nor written to, nor are its pods,
 * until a readable version arrives. Each test fails if the controller acts on the stale copy.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TAINT_NODE_UNREACHABLE } from '../../src/kube/taints.js';
import type { NodeLifecycleWrites } from '../../src/nodelifecycle/parts.js';
import { UnreadableNodeError, withUnreadableNodeGuard } from '../../src/nodelifecycle/unreadable.js';
import type { Node, Pod } from '../../src/kube/objects.js';
import { GRACE_MS, LEASE_RENEW_MS, started } from '../support/nodelifecycle-world.js';

describe('a node whose newest version cannot be read (difference 24)', () => {
  test('its kubelet stops while it is unreadable: no Unknown write, no taint, no write at all to it; once readable it is marked and tainted', async (t) => {
    const w = started(t, {}, (w) => {
      for (const z of ['a', 'b']) for (let i = 0; i < 3; i++) w.addNode(`${z}-n${i}`, z);
    });
    await w.run(5000, 500);
    w.unreadable.add('a-n0');
    w.alive.delete('a-n0');
    await w.run(GRACE_MS + 3 * LEASE_RENEW_MS, 500);
    assert.deepEqual(w.writes.filter((x) => x.target === 'a-n0'), [], 'nothing written to the unreadable node');
    assert.equal(w.nodes.get('a-n0')?.conditions.find((c) => c.type === 'Ready')?.status, 'True', 'still the stale Ready copy');
    // A readable version arrives (the API's copy, unchanged: the kubelet is still down).
    w.unreadable.delete('a-n0');
    const node = w.nodes.get('a-n0');
    assert.ok(node);
    w.storeNode({ ...node });
    await w.run(10_000, 500);
    assert.equal(w.nodes.get('a-n0')?.conditions.find((c) => c.type === 'Ready')?.status, 'Unknown');
    assert.ok(w.nodes.get('a-n0')?.taints.some((x) => x.key === TAINT_NODE_UNREACHABLE && x.effect === 'NoExecute'), 'tainted once readable');
  });
});

describe('withUnreadableNodeGuard', () => {
  const calls: string[] = [];
  const fake: NodeLifecycleWrites = {
    swapNodeTaints: async (name) => (calls.push(`swap ${name}`), 'written'),
    updateNodeConditions: async (name) => (calls.push(`status ${name}`), { result: 'written', node: undefined }),
    markPodNotReady: async (pod) => (calls.push(`notready ${pod.name}`), 'written'),
    evictPodLegacy: async (pod) => (calls.push(`evict ${pod.name}`), 'written'),
    patchNodeLabels: async (name) => (calls.push(`labels ${name}`), 'written'),
    forgetNode: (name) => void calls.push(`forget ${name}`),
  };
  const unreadable = new Set(['bad']);
  const guarded = withUnreadableNodeGuard(fake, { get: () => undefined, list: () => [], newestUnreadable: (n) => unreadable.has(n) });
  const node = { name: 'x' } as Node;
  const pod = { name: 'p', namespace: 'default' } as Pod;

  test('refuses every node write and every pod write on an unreadable node, passes the others through', async () => {
    await assert.rejects(guarded.swapNodeTaints('bad', [], [], node), UnreadableNodeError);
    await assert.rejects(guarded.updateNodeConditions('bad', node, () => undefined), UnreadableNodeError);
    await assert.rejects(guarded.patchNodeLabels('bad', node, () => undefined), UnreadableNodeError);
    await assert.rejects(guarded.markPodNotReady(pod, 'bad'), UnreadableNodeError);
    await assert.rejects(guarded.evictPodLegacy(pod, 'bad'), UnreadableNodeError);
    assert.deepEqual(calls, [], 'nothing reached the writer');
    await guarded.swapNodeTaints('good', [], [], node);
    await guarded.updateNodeConditions('good', node, () => undefined);
    await guarded.patchNodeLabels('good', node, () => undefined);
    await guarded.markPodNotReady(pod, 'good');
    await guarded.evictPodLegacy(pod, 'good');
    guarded.forgetNode('bad');
    assert.deepEqual(calls, ['swap good', 'status good', 'labels good', 'notready p', 'evict p', 'forget bad']);
  });
});
