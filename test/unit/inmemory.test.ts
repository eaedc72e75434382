/**
 * The shared in-memory cluster (src/inmemory/): the indexes stay right when pods move or a test
 * writes a map directly, deliveries are synchronous or on a microtask as asked, and the recording
 * writer records, applies and fails writes as its hooks say.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { InMemoryCluster } from '../../src/inmemory/cluster.js';
import { RecordingEventSink } from '../../src/inmemory/events.js';
import { node, pod, T0 } from '../support/outofservice-world.js';

describe('InMemoryCluster', () => {
  test('podsOnNode follows a pod that moves to another node, and direct map writes', () => {
    const c = InMemoryCluster.empty(new FakeClock(T0));
    c.putPod(pod('p', 'n1'));
    c.putPod(pod('q', 'n1'));
    c.putPod(pod('p', 'n2'));
    assert.deepEqual(c.podsOnNode('n1').map((p) => p.name), ['q']);
    assert.deepEqual(c.podsOnNode('n2').map((p) => p.name), ['p']);
    c.pods.delete('default/q');
    assert.deepEqual(c.podsOnNode('n1'), []);
    assert.deepEqual(c.podList().map((p) => p.name), ['p'], 'the cached list follows a direct delete');
    c.nodes.set('n1', node('n1', 'True'));
    assert.deepEqual(c.nodeList().map((n) => n.name), ['n1'], 'the cached node list follows a direct set');
  });

  test('a put delivers on a microtask unless asked to deliver at once; each put gets a newer resourceVersion', async () => {
    const c = InMemoryCluster.empty(new FakeClock(T0));
    const seen: string[] = [];
    c.on('nodes', { add: (n) => seen.push(`add ${n.name}`), update: (_o, n) => seen.push(`update ${n.name}`), delete: (n) => seen.push(`delete ${n.name}`) });
    const a = c.putNode(node('a', 'True'));
    assert.deepEqual(seen, [], 'not before the write returned');
    await Promise.resolve();
    assert.deepEqual(seen, ['add a']);
    const b = c.putNode(node('a', 'False'), { sync: true });
    assert.deepEqual(seen, ['add a', 'update a']);
    assert.ok(Number(b.resourceVersion) > Number(a.resourceVersion));
    c.removeNode('a', { sync: true });
    assert.deepEqual(seen, ['add a', 'update a', 'delete a']);
  });

  test('a graceful pod deletion without a running kubelet leaves the pod Terminating; a forced one removes it', () => {
    const clock = new FakeClock(T0);
    const c = InMemoryCluster.empty(clock);
    const p = c.putPod(pod('p', 'n1'));
    c.deletePod(p, { force: false, by: 'test', reason: 'r' });
    assert.equal(c.pods.get('default/p')?.deletionTimestamp, T0);
    assert.equal(c.pods.get('default/p')?.deletionGracePeriodSeconds, 30);
    c.deletePod(c.pods.get('default/p') ?? p, { force: true, by: 'test', reason: 'r' });
    assert.equal(c.pods.has('default/p'), false);
    assert.deepEqual(c.timeline.map((e) => e.kind), ['pod-deleted', 'pod-deleted']);
  });
});

describe('RecordingWriter', () => {
  test('records each write that lands, logs every call, and throws what the fail hook asks for (recorded as failed)', async () => {
    const clock = new FakeClock(T0);
    const c = InMemoryCluster.empty(clock);
    c.putNode(node('n1', 'True'));
    const p = c.putPod(pod('p', 'n1'));
    const w = c.writer.taintEvictionWrites();
    const boom = new Error('boom');
    let failNext = true;
    c.writer.fail = (call) => (call.method === 'addDisruptionCondition' && failNext ? ((failNext = false), boom) : undefined);
    await assert.rejects(w.addDisruptionCondition('default', 'p', p.uid), boom);
    assert.equal(await w.addDisruptionCondition('default', 'p', p.uid), 'written');
    assert.equal(await w.addDisruptionCondition('default', 'p', p.uid), 'unchanged', 'the condition is on the pod now');
    assert.equal(await w.deletePod('default', 'p', 'other-uid'), 'gone');
    assert.equal(await w.deletePod('default', 'p', p.uid), 'deleted');
    assert.deepEqual(
      c.writer.writes.map((x) => [x.kind, x.target, x.failed ?? false]),
      [
        ['condition', 'default/p', true],
        ['condition', 'default/p', false],
        ['delete', 'default/p', false],
      ],
    );
    assert.deepEqual(c.writer.calls.map((x) => x.method), ['addDisruptionCondition', 'addDisruptionCondition', 'addDisruptionCondition', 'deletePod', 'deletePod']);
    assert.ok(c.pods.get('default/p')?.conditions.some((x) => x.type === 'DisruptionTarget'));
  });

  test('the lose hook makes a status write answer unchanged without landing; a what-if cluster keeps no logs', async () => {
    const clock = new FakeClock(T0);
    const c = InMemoryCluster.empty(clock);
    c.putNode(node('n1', 'True'));
    c.writer.lose = () => true;
    const got = await c.writer.nodeLifecycleWrites().updateNodeConditions('n1', undefined, () => [{ type: 'Ready', status: 'Unknown' }]);
    assert.equal(got.result, 'unchanged');
    assert.equal(c.nodes.get('n1')?.conditions[0]?.status, 'True');
    const quiet = new InMemoryCluster({ takenAt: T0, nodes: [node('n1', 'True')], leases: [], pods: [], daemonSets: [], volumeAttachments: [], pvcs: [], pvs: [] }, clock, { graceMs: 0 });
    assert.equal(await quiet.nodeLifecycleWrites().updateNodeConditions('n1', undefined, () => [{ type: 'Ready', status: 'Unknown' }]).then((r) => r.result), 'written');
    assert.deepEqual([quiet.writer.calls.length, quiet.writer.writes.length], [0, 0]);
    assert.equal(quiet.nodes.get('n1')?.conditions[0]?.status, 'Unknown');
  });
});

describe('RecordingEventSink', () => {
  test('records each Event with the clock time', async () => {
    const clock = new FakeClock(T0);
    const sink = new RecordingEventSink(clock);
    sink.record({ kind: 'Node', name: 'n1', uid: 'u' }, 'Normal', 'R', 'm');
    await clock.advanceAsync(1500);
    sink.record({ kind: 'Node', name: 'n1', uid: 'u' }, 'Warning', 'S', 'n');
    assert.deepEqual(sink.list.map((e) => [e.reason, e.atMs - T0]), [['R', 0], ['S', 1500]]);
  });
});
