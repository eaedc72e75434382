/**
 * The legacy eviction part (src/nodelifecycle/legacyeviction.ts, 1.20's direct pod eviction) on
 * its own: built from its deps slice (`LegacyEvictionDeps`) and fake `LegacyEvictionLinks` (a
 * settable health reader, a recording pod queue, recording zone queues with a settable gate), no
 * controller and no other part.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../../src/kube/objects.js';
import { LegacyEviction } from '../../src/nodelifecycle/legacyeviction.js';
import { NotCalledForError } from '../../src/kube/throttle.js';
import { GATE_HOLD_RETRY_MS, type LegacyEvictionDeps, type NoExecuteAction } from '../../src/nodelifecycle/parts.js';
import { basics, FakeHealth, MapStore, metricValue, node, pod, PodStore, RecordingEvents, T0 } from '../support/nodelifecycle-parts.js';

const TIMEOUT_MS = 300_000;
const ZONE = '';

function build() {
  const { clock, log, metrics } = basics();
  const nodes = new MapStore<Node>();
  const pods = new PodStore();
  const daemonSets = new Set<string>();
  const events = new RecordingEvents();
  const deleted: string[] = [];
  const health = new FakeHealth();
  const queued: string[] = [];
  const zoneQueue = new Map<string, string>();
  const gate = { open: true, asked: [] as NoExecuteAction[] };
  const deps: LegacyEvictionDeps = {
    config: { podEvictionTimeoutMs: TIMEOUT_MS },
    clock,
    log,
    caches: { nodes, pods, daemonSets: { has: (k) => daemonSets.has(k) } },
    writes: {
      evictPodLegacy: async (p: Pod) => {
        deleted.push(p.name);
        return 'written';
      },
    },
    events,
    metrics,
    canSeeCluster: () => true,
  };
  const part = new LegacyEviction(deps, {
    health,
    pods: { podMarkingHeld: () => false, queuePod: (key) => void queued.push(key) },
    zones: {
      ensureZone: () => undefined,
      enqueue: (_zone, name, uid) => !zoneQueue.has(name) && (zoneQueue.set(name, uid), true),
      dequeue: (_zone, name) => zoneQueue.delete(name),
      kickPass: () => undefined,
      admits: (action) => {
        gate.asked.push(action);
        return gate.open;
      },
    },
  });
  return { part, deps, clock, nodes, pods, daemonSets, events, deleted, health, queued, zoneQueue, gate };
}

describe('legacy eviction part through parts.ts', () => {
  test('a node is queued for eviction only after --pod-eviction-timeout, and dequeued when Ready', () => {
    const w = build();
    const n1 = node('n1', 'False');
    w.nodes.set(n1);
    w.health.set('n1', ZONE, 'False', T0);
    w.part.act(n1, { type: 'Ready', status: 'False' });
    assert.equal(w.zoneQueue.size, 0, 'not before the timeout');
    assert.equal(w.part.wouldAct(n1, { type: 'Ready', status: 'False' }), false);
    w.clock.advance(TIMEOUT_MS + 1);
    assert.equal(w.part.wouldAct(n1, { type: 'Ready', status: 'False' }), true);
    w.part.act(n1, { type: 'Ready', status: 'False' });
    assert.deepEqual([...w.zoneQueue.keys()], ['n1']);
    w.health.set('n1', ZONE, 'True');
    w.part.act(n1, { type: 'Ready', status: 'True' });
    assert.equal(w.zoneQueue.size, 0);
  });

  test('evictOne deletes every pod but a DaemonSet pod, passes the gate, and counts the node', async () => {
    const w = build();
    w.nodes.set(node('n1', 'Unknown'));
    w.daemonSets.add('default/ds');
    w.pods.set(pod('web', 'n1'));
    w.pods.set(pod('agent', 'n1', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'u', controller: true }] }));
    w.health.set('n1', ZONE, 'Unknown', T0 - TIMEOUT_MS - 1);
    const r = await w.part.evictOne(ZONE, { value: 'n1', uid: 'uid-n1', addedAt: T0, processAt: T0 });
    assert.deepEqual(r, { done: true, waitMs: 0 });
    assert.deepEqual(w.gate.asked, ['LegacyEviction']);
    assert.deepEqual(w.deleted, ['web']);
    assert.deepEqual(w.events.reasons(), ['DeletingAllPods', 'NodeControllerEviction']);
    assert.equal(await metricValue(w.deps.metrics.evictionsTotal, { zone: ZONE }), 1);
    // The node is now evicted: a pod that lands on it while it is past the pod eviction timeout is
    // deleted at once, without the zone queue.
    w.health.set('n1', ZONE, 'Unknown', T0);
    const late = pod('late', 'n1');
    assert.equal(w.part.processPod(late, w.health.health('n1')!, 'Unknown'), undefined, 'not before the timeout');
    w.clock.advance(TIMEOUT_MS + 1);
    await w.part.processPod(late, w.health.health('n1')!, 'Unknown');
    assert.deepEqual(w.deleted, ['web', 'late']);
  });

  test('evictOne decides the node again at its turn (issue 53 item 4): a node Ready again, or no longer past the timeout, is dropped with nothing deleted', async () => {
    const w = build();
    w.nodes.set(node('n1', 'Unknown'));
    w.pods.set(pod('web', 'n1'));
    w.health.set('n1', ZONE, 'True');
    assert.deepEqual(await w.part.evictOne(ZONE, { value: 'n1', uid: 'uid-n1', addedAt: T0, processAt: T0 }), { done: true, waitMs: 0 });
    w.health.set('n1', ZONE, 'Unknown', T0);
    assert.deepEqual(await w.part.evictOne(ZONE, { value: 'n1', uid: 'uid-n1', addedAt: T0, processAt: T0 }), { done: true, waitMs: 0 });
    assert.deepEqual(w.deleted, []);
    assert.deepEqual(w.events.reasons(), []);
  });

  test("each legacy deletion is decided again right before it is sent: a node judged Ready meanwhile keeps its pods, and the entry is retried", async () => {
    const w = build();
    w.nodes.set(node('n1', 'Unknown'));
    w.pods.set(pod('web', 'n1'));
    w.pods.set(pod('db', 'n1'));
    w.health.set('n1', ZONE, 'Unknown', T0 - TIMEOUT_MS - 1);
    // The writes double runs the recheck as the throttle does; the node is judged Ready while the
    // first deletion waits for its turn.
    w.deps.writes.evictPodLegacy = async (p, _node, recheck) => {
      w.health.set('n1', ZONE, 'True');
      const why = recheck?.();
      if (why !== undefined) throw new NotCalledForError(why);
      w.deleted.push(p.name);
      return 'written';
    };
    const r = await w.part.evictOne(ZONE, { value: 'n1', uid: 'uid-n1', addedAt: T0, processAt: T0 });
    assert.deepEqual(r, { done: false, waitMs: 1000 }, 'not done: the next try decides again');
    assert.deepEqual(w.deleted, [], 'no pod deleted');
    assert.deepEqual(await w.part.evictOne(ZONE, { value: 'n1', uid: 'uid-n1', addedAt: T0, processAt: T0 }), { done: true, waitMs: 0 }, 'the Ready node is dropped');
    assert.deepEqual(w.deleted, []);
  });

  test('a closed gate holds the entry in place: nothing is deleted', async () => {
    const w = build();
    w.gate.open = false;
    w.nodes.set(node('n1', 'Unknown'));
    w.pods.set(pod('web', 'n1'));
    const r = await w.part.evictOne(ZONE, { value: 'n1', uid: 'uid-n1', addedAt: T0, processAt: T0 });
    assert.deepEqual(r, { done: false, waitMs: GATE_HOLD_RETRY_MS });
    assert.deepEqual(w.deleted, []);
    assert.deepEqual(w.events.recorded, []);
  });
});
