/**
 * The pod readiness part (src/nodelifecycle/podreadiness.ts) on its own: built from its deps
 * slice (`PodReadinessDeps`) and a fake `PodReadinessLinks` (a settable health reader and
 * all-zones stop), no controller and no other part.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../../src/kube/objects.js';
import { EVENT_POD_MARKING_HELD } from '../../src/nodelifecycle/health.js';
import type { PodReadinessDeps } from '../../src/nodelifecycle/parts.js';
import { PodReadiness } from '../../src/nodelifecycle/podreadiness.js';
import { basics, FakeHealth, MapStore, metricValue, node, pod, PodStore, RecordingEvents, settle } from '../support/nodelifecycle-parts.js';

const GRACE_MS = 40_000;

function build(): {
  part: PodReadiness;
  deps: PodReadinessDeps & { clock: ReturnType<typeof basics>['clock'] };
  health: FakeHealth;
  nodes: MapStore<Node>;
  pods: PodStore;
  events: RecordingEvents;
  marked: string[];
  stop: { on: boolean };
} {
  const { clock, log, metrics } = basics();
  const nodes = new MapStore<Node>();
  const pods = new PodStore();
  const events = new RecordingEvents();
  const marked: string[] = [];
  const health = new FakeHealth();
  const stop = { on: false };
  const deps = {
    config: { nodeMonitorGracePeriodMs: GRACE_MS },
    clock,
    log,
    canSeeCluster: () => true,
    caches: { nodes, pods },
    writes: {
      markPodNotReady: async (p: Pod, nodeName: string) => {
        marked.push(`${p.namespace}/${p.name}@${nodeName}`);
        return 'written' as const;
      },
    },
    events,
    metrics,
  };
  const part = new PodReadiness(deps, { health, allZonesStopped: () => stop.on });
  return { part, deps, health, nodes, pods, events, marked, stop };
}

describe('pod readiness part through parts.ts', () => {
  test('the resync marks the Ready pods of a not-Ready node, and only those', async (t) => {
    const w = build();
    t.after(() => w.part.stop());
    w.nodes.set(node('dead', 'Unknown'));
    w.nodes.set(node('live', 'True'));
    w.health.set('dead', 'z', 'Unknown');
    w.health.set('live', 'z', 'True');
    w.pods.set(pod('a', 'dead'));
    w.pods.set(pod('b', 'dead', { conditions: [{ type: 'Ready', status: 'False' }] }));
    w.pods.set(pod('c', 'live'));
    w.part.resyncPodReadiness();
    await settle(w.deps.clock);
    assert.deepEqual(w.marked, ['default/a@dead']);
    assert.deepEqual(w.events.reasons(), ['NodeNotReady'], 'one Event on the marked pod');
    assert.equal(w.events.recorded[0]?.ref.kind, 'Pod');
  });

  test('during the all-zones stop it holds, explains once per node and counts the held nodes', async (t) => {
    const w = build();
    t.after(() => w.part.stop());
    w.stop.on = true;
    w.nodes.set(node('dead', 'False'));
    w.health.set('dead', 'z', 'False');
    w.pods.set(pod('a', 'dead'));
    w.part.resyncPodReadiness();
    w.part.resyncPodReadiness();
    await settle(w.deps.clock);
    assert.deepEqual(w.marked, []);
    assert.equal(w.part.podMarkingHeld(), true);
    assert.deepEqual(w.events.reasons(), [EVENT_POD_MARKING_HELD], 'explained once, not per resync');
    assert.equal(await metricValue(w.deps.metrics.podMarkingHeldNodes), 1);
  });

  test('after the stop ends, pods wait one grace period before they are marked', async (t) => {
    const w = build();
    t.after(() => w.part.stop());
    w.nodes.set(node('dead', 'False'));
    w.health.set('dead', 'z', 'False');
    w.pods.set(pod('a', 'dead'));
    w.part.allZonesStopEnded(w.deps.clock.now());
    await settle(w.deps.clock);
    assert.deepEqual(w.marked, [], 'held for the grace period');
    assert.equal(w.part.podMarkingHeld(), true);
    await settle(w.deps.clock, GRACE_MS);
    assert.equal(w.part.podMarkingHeld(), false);
    w.part.resyncPodReadiness();
    await settle(w.deps.clock);
    assert.deepEqual(w.marked, ['default/a@dead']);
  });

  test('a pod bound to a not-Ready node is marked when queued; on a Ready node it is not', async (t) => {
    const w = build();
    t.after(() => w.part.stop());
    w.nodes.set(node('dead', 'False'));
    w.nodes.set(node('live', 'True'));
    w.health.set('dead', 'z', 'False');
    w.health.set('live', 'z', 'True');
    w.pods.set(pod('a', 'dead'));
    w.pods.set(pod('b', 'live'));
    w.part.queuePod('default/a');
    w.part.queuePod('default/b');
    await settle(w.deps.clock);
    assert.deepEqual(w.marked, ['default/a@dead']);
  });
});
