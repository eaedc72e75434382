import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Lease, Node, NodeCondition, Pod, PodCondition } from '../../src/kube/objects.js';
import { getCondition } from '../../src/kube/objects.js';
import {
  MESSAGE_NODE_STATUS_NEVER_UPDATED,
  MESSAGE_NODE_STATUS_UNKNOWN,
  REASON_NODE_STATUS_NEVER_UPDATED,
  REASON_NODE_STATUS_UNKNOWN,
  isReadyToNotReadyTransition,
  leaseSeenByPass,
  nodeConditionsEqual,
  nextProbeDeadline,
  nodeNotReadyEvent,
  observeNodeHealth,
  podNeedsNotReadyMark,
  podNeedsNotReadyOnNode,
  podNodeNotReadyEvent,
  registeredNodeEvent,
  removingNodeEvent,
  savedReadyCondition,
} from '../../src/nodelifecycle/health.js';
import type { NodeHealth, NodeHealthObservation } from '../../src/nodelifecycle/health.js';

// Upstream test constants (node_lifecycle_controller_test.go).
const GRACE_MS = 50_000;
const STARTUP_GRACE_MS = 60_000;
const OPTS = { nodeMonitorGracePeriodMs: GRACE_MS, nodeStartupGracePeriodMs: STARTUP_GRACE_MS };
const FAKE_NOW = Date.UTC(2015, 0, 1, 12);
const NODE_CREATION = Date.UTC(2012, 0, 1);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function makeNode(creationTimestamp: number, conditions: NodeCondition[] = []): Node {
  return {
    name: 'node0',
    uid: '1234567890',
    resourceVersion: '1',
    creationTimestamp,
    labels: {},
    unschedulable: false,
    taints: [],
    conditions,
  };
}

function cond(type: string, status: string, hb: number, tr: number): NodeCondition {
  return { type, status, lastHeartbeatTime: hb, lastTransitionTime: tr };
}

function lease(renewTime: number | undefined): Lease {
  return { namespace: 'kube-node-lease', name: 'node0', resourceVersion: '1', ...(renewTime !== undefined ? { renewTime } : {}) };
}

function makePod(conditions: PodCondition[], nodeName = 'node0'): Pod {
  return {
    namespace: 'default',
    name: 'pod0',
    uid: 'pod-uid',
    resourceVersion: '1',
    nodeName,
    phase: 'Running',
    creationTimestamp: NODE_CREATION,
    conditions,
    tolerations: [],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
  };
}

function neverUpdated(type: string, transition: number): NodeCondition {
  return {
    type,
    status: 'Unknown',
    reason: REASON_NODE_STATUS_NEVER_UPDATED,
    message: MESSAGE_NODE_STATUS_NEVER_UPDATED,
    lastHeartbeatTime: NODE_CREATION,
    lastTransitionTime: transition,
  };
}

function stoppedPosting(type: string, hb: number, transition: number): NodeCondition {
  return {
    type,
    status: 'Unknown',
    reason: REASON_NODE_STATUS_UNKNOWN,
    message: MESSAGE_NODE_STATUS_UNKNOWN,
    lastHeartbeatTime: hb,
    lastTransitionTime: transition,
  };
}

// ---------------------------------------------------------------------------

describe('TestTryUpdateNodeHealth', () => {
  const fakeNow = Date.UTC(2017, 0, 1, 12);
  const fakeOld = Date.UTC(2016, 0, 1, 12);
  const cases: { name: string; node: Node }[] = [];
  for (const [suffix, t] of [
    ['', fakeNow],
    [' after grace period', fakeOld],
  ] as const) {
    cases.push({ name: `Status true${suffix}`, node: makeNode(t, [cond('Ready', 'True', t, t)]) });
    cases.push({ name: `Status false${suffix}`, node: makeNode(t, [cond('Ready', 'False', t, t)]) });
    cases.push({ name: `Status unknown${suffix}`, node: makeNode(t, [cond('Ready', 'Unknown', t, t)]) });
    cases.push({ name: `Status nil${suffix}`, node: makeNode(t, []) });
  }
  for (const c of cases) {
    test(c.name, () => {
      const preset: NodeHealth = {
        probeTimestamp: c.node.creationTimestamp,
        readyTransitionTimestamp: c.node.creationTimestamp,
        conditions: c.node.conditions,
      };
      const obs = observeNodeHealth(preset, c.node, undefined, fakeNow, OPTS);
      // The fake client's UpdateStatus succeeds, so the post-write record is the one saved.
      const saved = obs.needsStatusUpdate ? obs.healthAfterStatusUpdate : obs.health;
      assert.equal(obs.currentReady?.status, savedReadyCondition(saved)?.status);
      const stale = c.node.creationTimestamp === fakeOld;
      if (stale) assert.equal(obs.currentReady?.status, 'Unknown');
      else assert.equal(obs.currentReady?.status, getCondition(c.node.conditions, 'Ready')?.status);
    });
  }
});

describe('deliberate difference 21: a Ready status changed without a new heartbeat time', () => {
  const t0 = FAKE_NOW - 10_000;
  const saved = (status: string): NodeHealth => ({ probeTimestamp: t0, readyTransitionTimestamp: t0, conditions: [cond('Ready', status, t0, t0)] });
  test('True -> False in the same heartbeat second: the saved status follows, the probe timestamp does not', () => {
    const node = makeNode(NODE_CREATION, [cond('Ready', 'False', t0, FAKE_NOW)]);
    const obs = observeNodeHealth(saved('True'), node, undefined, FAKE_NOW, OPTS);
    assert.equal(savedReadyCondition(obs.health)?.status, 'False');
    assert.equal(obs.health.probeTimestamp, t0, 'no heartbeat: every deadline stays where it was');
    assert.equal(obs.expired, false);
  });
  test('a saved Unknown (our own write, maybe not in the cache yet) is kept', () => {
    const node = makeNode(NODE_CREATION, [cond('Ready', 'True', t0, t0)]);
    const obs = observeNodeHealth(saved('Unknown'), node, undefined, FAKE_NOW, OPTS);
    assert.equal(savedReadyCondition(obs.health)?.status, 'Unknown');
  });
  test('property: never moves the probe timestamp, so never brings an expiry (an Unknown write) sooner', () => {
    const statuses = fc.constantFrom('True', 'False', 'Unknown');
    fc.assert(
      fc.property(statuses, statuses, fc.integer({ min: 0, max: 2 * GRACE_MS }), (before, after, dt) => {
        const node = makeNode(NODE_CREATION, [cond('Ready', after, t0, t0 + 1000)]);
        const obs = observeNodeHealth(saved(before), node, undefined, t0 + dt, OPTS);
        assert.equal(obs.health.probeTimestamp, t0);
        assert.equal(obs.expired, dt > GRACE_MS);
      }),
    );
  });
});

describe('TestNodeEventGeneration', () => {
  test('first pass over an Unknown node with a stale heartbeat yields only RegisteredNode', () => {
    const node = makeNode(NODE_CREATION, [cond('Ready', 'Unknown', NODE_CREATION, NODE_CREATION)]);
    const obs = observeNodeHealth(undefined, node, undefined, FAKE_NOW, OPTS);
    assert.equal(obs.needsStatusUpdate, false);
    assert.equal(isReadyToNotReadyTransition(obs.observedReady, obs.currentReady), false);
    assert.deepEqual(registeredNodeEvent(node.name), {
      type: 'Normal',
      reason: 'RegisteredNode',
      message: 'Node node0 event: Registered Node node0 in Controller',
    });
  });

  test('the other event texts match upstream', () => {
    assert.deepEqual(removingNodeEvent('n1'), {
      type: 'Normal',
      reason: 'RemovingNode',
      message: 'Node n1 event: Removing Node n1 from Controller',
    });
    assert.deepEqual(nodeNotReadyEvent('n1'), { type: 'Normal', reason: 'NodeNotReady', message: 'Node n1 status is now: NodeNotReady' });
    assert.deepEqual(podNodeNotReadyEvent(), { type: 'Warning', reason: 'NodeNotReady', message: 'Node is not ready' });
  });
});

describe('TestProcessPodMarkPodNotReady', () => {
  const readyPod = makePod([{ type: 'Ready', status: 'True', lastTransitionTime: NODE_CREATION }]);
  test("Do not mark pod as NotReady when the scheduled node's healthy is not gathered yet", () => {
    assert.equal(podNeedsNotReadyOnNode(undefined, readyPod), false);
  });
  test('Do not mark pod as NotReady when the scheduled node is ready', () => {
    const obs = observeNodeHealth(undefined, makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)]), undefined, FAKE_NOW, OPTS);
    assert.equal(podNeedsNotReadyOnNode(obs.health, readyPod), false);
  });
  test('Pod marked as NotReady when the scheduled node is not ready', () => {
    const obs = observeNodeHealth(undefined, makeNode(NODE_CREATION, [cond('Ready', 'False', FAKE_NOW, FAKE_NOW)]), undefined, FAKE_NOW, OPTS);
    assert.equal(podNeedsNotReadyOnNode(obs.health, readyPod), true);
  });
  test('a node without a saved Ready condition is skipped', () => {
    const obs = observeNodeHealth(undefined, makeNode(FAKE_NOW), undefined, FAKE_NOW, OPTS);
    assert.equal(podNeedsNotReadyOnNode(obs.health, readyPod), false);
  });
});

describe('MarkPodsNotReady decision', () => {
  const ready: PodCondition = { type: 'Ready', status: 'True', reason: 'r', message: 'm', lastTransitionTime: NODE_CREATION, lastProbeTime: 3 };
  const scheduled: PodCondition = { type: 'PodScheduled', status: 'True', lastTransitionTime: NODE_CREATION };

  test('a Ready=True pod bound to the node needs the mark', () => {
    assert.equal(podNeedsNotReadyMark(makePod([scheduled, ready]), 'node0'), true);
  });

  test('an already-False pod needs no write', () => {
    const pod = makePod([{ ...ready, status: 'False' }]);
    assert.equal(podNeedsNotReadyMark(pod), false);
  });

  test('a pod without a Ready condition is untouched', () => {
    const pod = makePod([scheduled]);
    assert.equal(podNeedsNotReadyMark(pod), false);
  });

  test('a pod bound to another node is skipped', () => {
    assert.equal(podNeedsNotReadyMark(makePod([ready], 'other'), 'node0'), false);
  });

  test('isReadyToNotReadyTransition truth table', () => {
    const r = (status: string): NodeCondition => ({ type: 'Ready', status });
    assert.equal(isReadyToNotReadyTransition(r('True'), r('Unknown')), true);
    assert.equal(isReadyToNotReadyTransition(r('True'), r('False')), true);
    assert.equal(isReadyToNotReadyTransition(r('True'), undefined), true);
    assert.equal(isReadyToNotReadyTransition(r('True'), r('True')), false);
    assert.equal(isReadyToNotReadyTransition(r('False'), r('False')), false);
    assert.equal(isReadyToNotReadyTransition(r('Unknown'), r('Unknown')), false);
  });
});

describe('observeNodeHealth details (§2.8)', () => {
  test('a kubelet-posted Ready=False is observed as is and needs no Unknown write', () => {
    const first = observeNodeHealth(undefined, makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)]), undefined, FAKE_NOW, OPTS);
    const obs = observeNodeHealth(first.health, makeNode(NODE_CREATION, [cond('Ready', 'False', FAKE_NOW + 10_000, FAKE_NOW + 10_000)]), undefined, FAKE_NOW + 10_000, OPTS);
    assert.equal(obs.observedReady.status, 'False');
    assert.equal(obs.currentReady?.status, 'False');
    assert.equal(obs.needsStatusUpdate, false);
  });

  // Upstream's TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease posts Ready only (ported onto
  // the shell in upstream-nodelifecycle-health.test.ts); here a posted pressure condition goes stale too.
  test('a stale posted condition becomes NodeStatusUnknown keeping its heartbeat; missing ones NeverUpdated', () => {
    const node = makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, FAKE_NOW), cond('DiskPressure', 'False', FAKE_NOW, FAKE_NOW)]);
    const first = observeNodeHealth(undefined, node, lease(FAKE_NOW), FAKE_NOW, OPTS);
    assert.equal(first.needsStatusUpdate, false);
    const later = observeNodeHealth(first.health, node, lease(FAKE_NOW), FAKE_NOW + HOUR, OPTS);
    assert.equal(later.needsStatusUpdate, true);
    assert.deepEqual(later.unknownConditions, [
      stoppedPosting('Ready', FAKE_NOW, FAKE_NOW + HOUR),
      stoppedPosting('DiskPressure', FAKE_NOW, FAKE_NOW + HOUR),
      neverUpdated('MemoryPressure', FAKE_NOW + HOUR),
      neverUpdated('PIDPressure', FAKE_NOW + HOUR),
    ]);
  });

  const readyNode = (hb: number, tr = NODE_CREATION, status = 'True') => makeNode(NODE_CREATION, [cond('Ready', status, hb, tr)]);

  test('first sight gives a full grace period even to a node with an ancient heartbeat', () => {
    const obs = observeNodeHealth(undefined, readyNode(NODE_CREATION), undefined, FAKE_NOW, OPTS);
    assert.equal(obs.health.probeTimestamp, FAKE_NOW);
    assert.equal(obs.health.readyTransitionTimestamp, FAKE_NOW);
    assert.equal(obs.gracePeriodMs, GRACE_MS);
    assert.equal(obs.needsStatusUpdate, false);
  });

  test('a node without Ready is timed from its creation with the startup grace', () => {
    const node = makeNode(FAKE_NOW);
    const obs = observeNodeHealth(undefined, node, undefined, FAKE_NOW, OPTS);
    assert.equal(obs.health.probeTimestamp, FAKE_NOW);
    assert.deepEqual(obs.observedReady, { type: 'Ready', status: 'Unknown', lastHeartbeatTime: FAKE_NOW, lastTransitionTime: FAKE_NOW });
    assert.equal(observeNodeHealth(obs.health, node, undefined, FAKE_NOW + STARTUP_GRACE_MS, OPTS).needsStatusUpdate, false);
    assert.equal(observeNodeHealth(obs.health, node, undefined, FAKE_NOW + STARTUP_GRACE_MS + 1, OPTS).needsStatusUpdate, true);
  });

  test('expiry is strict: not at probe + grace, only after it', () => {
    const first = observeNodeHealth(undefined, readyNode(FAKE_NOW), undefined, FAKE_NOW, OPTS);
    const deadline = nextProbeDeadline(first.health, first.gracePeriodMs);
    assert.equal(deadline, FAKE_NOW + GRACE_MS + 1);
    const atGrace = observeNodeHealth(first.health, readyNode(FAKE_NOW), undefined, deadline - 1, OPTS);
    assert.equal(atGrace.currentReady?.status, 'True');
    const after = observeNodeHealth(first.health, readyNode(FAKE_NOW), undefined, deadline, OPTS);
    assert.equal(after.currentReady?.status, 'Unknown');
    assert.equal(after.needsStatusUpdate, true);
  });

  test('readyTransitionTimestamp moves only when lastTransitionTime changes', () => {
    const first = observeNodeHealth(undefined, readyNode(FAKE_NOW, NODE_CREATION), undefined, FAKE_NOW, OPTS);
    const hb = observeNodeHealth(first.health, readyNode(FAKE_NOW + 10_000, NODE_CREATION), undefined, FAKE_NOW + 10_000, OPTS);
    assert.equal(hb.health.probeTimestamp, FAKE_NOW + 10_000);
    assert.equal(hb.health.readyTransitionTimestamp, FAKE_NOW);
    const flip = observeNodeHealth(hb.health, readyNode(FAKE_NOW + 20_000, FAKE_NOW + 20_000, 'False'), undefined, FAKE_NOW + 21_000, OPTS);
    assert.equal(flip.health.readyTransitionTimestamp, FAKE_NOW + 21_000);
  });

  test('without a heartbeat the saved snapshot is not refreshed', () => {
    const first = observeNodeHealth(undefined, readyNode(FAKE_NOW), undefined, FAKE_NOW, OPTS);
    const changedPressure = makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, NODE_CREATION), cond('MemoryPressure', 'True', FAKE_NOW, FAKE_NOW)]);
    const second = observeNodeHealth(first.health, changedPressure, undefined, FAKE_NOW + 1000, OPTS);
    assert.equal(second.health.probeTimestamp, FAKE_NOW);
    assert.deepEqual(second.health.conditions, first.health.conditions);
  });

  test('a lease counts only when renewTime strictly increases; a saved lease without renewTime never advances', () => {
    const node = readyNode(FAKE_NOW);
    const first = observeNodeHealth(undefined, node, lease(FAKE_NOW), FAKE_NOW, OPTS);
    // The resourceVersion is saved with it: NodeControllerLeaseCircuitBreaker compares it with the live Lease.
    assert.deepEqual(first.health.lease, { renewTime: FAKE_NOW, resourceVersion: '1' });
    const same = observeNodeHealth(first.health, node, lease(FAKE_NOW), FAKE_NOW + 5000, OPTS);
    assert.equal(same.health.probeTimestamp, FAKE_NOW);
    const renewed = observeNodeHealth(same.health, node, lease(FAKE_NOW + 4000), FAKE_NOW + 10_000, OPTS);
    assert.equal(renewed.health.probeTimestamp, FAKE_NOW + 10_000);

    const noRenew = observeNodeHealth(undefined, node, lease(undefined), FAKE_NOW, OPTS);
    const later = observeNodeHealth(noRenew.health, node, lease(FAKE_NOW + 4000), FAKE_NOW + 10_000, OPTS);
    assert.equal(later.health.probeTimestamp, FAKE_NOW);
  });

  test('like upstream, a status heartbeat forgets the saved lease, so the next pass re-counts it', () => {
    const first = observeNodeHealth(undefined, readyNode(FAKE_NOW), lease(FAKE_NOW), FAKE_NOW, OPTS);
    const hb = observeNodeHealth(first.health, readyNode(FAKE_NOW + 5000), lease(FAKE_NOW), FAKE_NOW + 5000, OPTS);
    assert.equal(hb.health.lease, undefined);
    const next = observeNodeHealth(hb.health, readyNode(FAKE_NOW + 5000), lease(FAKE_NOW), FAKE_NOW + 10_000, OPTS);
    assert.equal(next.health.probeTimestamp, FAKE_NOW + 10_000);
  });

  test('an already-Unknown Ready needs no write even when other conditions are stale', () => {
    const node = makeNode(NODE_CREATION, [
      stoppedPosting('Ready', FAKE_NOW, FAKE_NOW),
      cond('MemoryPressure', 'False', FAKE_NOW, FAKE_NOW),
    ]);
    const first = observeNodeHealth(undefined, node, undefined, FAKE_NOW, OPTS);
    const later = observeNodeHealth(first.health, node, undefined, FAKE_NOW + HOUR, OPTS);
    assert.equal(later.needsStatusUpdate, false);
    assert.equal(later.unknownConditions, undefined);
    assert.equal(later.currentReady?.status, 'Unknown');
  });

  test('NetworkUnavailable is never marked Unknown', () => {
    const net = cond('NetworkUnavailable', 'False', FAKE_NOW, FAKE_NOW);
    const node = makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, FAKE_NOW), net]);
    const first = observeNodeHealth(undefined, node, undefined, FAKE_NOW, OPTS);
    const later = observeNodeHealth(first.health, node, undefined, FAKE_NOW + HOUR, OPTS);
    assert.deepEqual(getCondition(later.unknownConditions!, 'NetworkUnavailable'), net);
  });

  test('the record after a write keeps the probe, sets readyTransition=now and saves the written status', () => {
    const node = readyNode(FAKE_NOW);
    const first = observeNodeHealth(undefined, node, lease(FAKE_NOW), FAKE_NOW, OPTS);
    const later = observeNodeHealth(first.health, node, lease(FAKE_NOW), FAKE_NOW + HOUR, OPTS);
    assert.deepEqual(later.healthAfterStatusUpdate, {
      probeTimestamp: FAKE_NOW,
      readyTransitionTimestamp: FAKE_NOW + HOUR,
      conditions: later.unknownConditions,
      // Final, as upstream's, which saves it in the pass that writes: no later version replaces it.
      lease: { renewTime: FAKE_NOW, resourceVersion: '1', seenByPass: true },
    });
    // Write failed: the pre-write record keeps the old saved Ready, so the retry sees the same state.
    assert.equal(savedReadyCondition(later.health)?.status, 'True');
    const retry = observeNodeHealth(later.health, node, lease(FAKE_NOW), FAKE_NOW + HOUR + 20, OPTS);
    assert.equal(retry.needsStatusUpdate, true);
  });

  test('after the write lands in the cache, later passes write nothing', () => {
    const node = readyNode(FAKE_NOW);
    const first = observeNodeHealth(undefined, node, undefined, FAKE_NOW, OPTS);
    const later = observeNodeHealth(first.health, node, undefined, FAKE_NOW + HOUR, OPTS);
    const written = { ...node, conditions: later.unknownConditions! };
    const next = observeNodeHealth(later.healthAfterStatusUpdate, written, undefined, FAKE_NOW + HOUR + 5000, OPTS);
    assert.equal(next.needsStatusUpdate, false);
    assert.equal(next.observedReady.status, 'Unknown');
    assert.equal(isReadyToNotReadyTransition(next.observedReady, next.currentReady), false);
  });

  // Port of TestMonitorNodeHealth "Full Disruption: Ready condition removed from the Node".
  test('a Ready condition that disappears keeps the probe and falls under the startup grace', () => {
    const first = observeNodeHealth(undefined, readyNode(FAKE_NOW), undefined, FAKE_NOW, OPTS);
    const gone = observeNodeHealth(first.health, makeNode(NODE_CREATION), undefined, FAKE_NOW + 30_000, OPTS);
    assert.equal(gone.health.probeTimestamp, FAKE_NOW);
    assert.equal(gone.gracePeriodMs, STARTUP_GRACE_MS);
    assert.equal(gone.needsStatusUpdate, false);
    assert.equal(gone.currentReady, undefined, 'counts as not ready in the zone');
    assert.equal(savedReadyCondition(gone.health), undefined);
    const later = observeNodeHealth(gone.health, makeNode(NODE_CREATION), undefined, FAKE_NOW + HOUR, OPTS);
    assert.equal(later.needsStatusUpdate, true);
    assert.deepEqual(later.currentReady, neverUpdated('Ready', FAKE_NOW + HOUR));
  });

  test('does not mutate its inputs', () => {
    const node = readyNode(FAKE_NOW);
    const first = observeNodeHealth(undefined, node, undefined, FAKE_NOW, OPTS);
    const snapshot = structuredClone({ node, health: first.health });
    observeNodeHealth(first.health, node, undefined, FAKE_NOW + HOUR, OPTS);
    assert.deepEqual({ node, health: first.health }, snapshot);
  });
});

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

describe('deliberate difference 1: a second version of a renewal before the next monitor pass', () => {
  const node = makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)]);
  const version = (renewTime: number, resourceVersion: string): Lease => ({ ...lease(renewTime), resourceVersion });

  test('replaces the saved version (what upstream saves at its pass) without moving the probe timestamp', () => {
    const first = observeNodeHealth(undefined, node, version(FAKE_NOW, '66'), FAKE_NOW, OPTS);
    const second = observeNodeHealth(first.health, node, version(FAKE_NOW, '67'), FAKE_NOW + 10, OPTS);
    assert.deepEqual(second.health.lease, { renewTime: FAKE_NOW, resourceVersion: '67' });
    assert.equal(second.health.probeTimestamp, FAKE_NOW);
  });

  test('after a monitor pass the saved version is final, as upstream: a later change that is not a renewal is kept out', () => {
    const first = observeNodeHealth(undefined, node, version(FAKE_NOW, '66'), FAKE_NOW, OPTS);
    const passed = leaseSeenByPass(first.health);
    assert.deepEqual(passed.lease, { renewTime: FAKE_NOW, resourceVersion: '66', seenByPass: true });
    assert.equal(leaseSeenByPass(passed), passed, 'no copy when already marked');
    const touched = observeNodeHealth(passed, node, version(FAKE_NOW, '67'), FAKE_NOW + 10, OPTS);
    assert.equal(touched.health.lease?.resourceVersion, '66');
    // The next renewal is a new one, saved and open again until the next pass.
    const renewed = observeNodeHealth(touched.health, node, version(FAKE_NOW + 10_000, '70'), FAKE_NOW + 10_000, OPTS);
    assert.deepEqual(renewed.health.lease, { renewTime: FAKE_NOW + 10_000, resourceVersion: '70' });
  });

  test('an older renewTime, or a Lease without one, never replaces it', () => {
    const first = observeNodeHealth(undefined, node, version(FAKE_NOW, '66'), FAKE_NOW, OPTS);
    assert.equal(observeNodeHealth(first.health, node, version(FAKE_NOW - 1, '67'), FAKE_NOW + 10, OPTS).health.lease?.resourceVersion, '66');
    assert.equal(observeNodeHealth(first.health, node, { ...lease(undefined), resourceVersion: '67' }, FAKE_NOW + 10, OPTS).health.lease?.resourceVersion, '66');
  });

  test('property: never moves the probe timestamp, so never brings an expiry (an Unknown write) sooner', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 20_000 }), renew: fc.integer({ min: -1, max: 1 }), pass: fc.boolean() }), { maxLength: 30 }),
        (steps) => {
          // The same observations with and without the second-version rule (versions 'v' vs. the
          // same resourceVersion every time): the probe timestamps and expiries agree at every step.
          let t = FAKE_NOW;
          let renewTime = FAKE_NOW;
          let rv = 1;
          let a = observeNodeHealth(undefined, node, version(renewTime, String(rv)), t, OPTS).health;
          let b = observeNodeHealth(undefined, node, version(renewTime, '1'), t, OPTS).health;
          for (const s of steps) {
            t += s.dt;
            renewTime = Math.min(t, renewTime + s.renew * 1000);
            rv++;
            const oa = observeNodeHealth(a, node, version(renewTime, String(rv)), t, OPTS);
            const ob = observeNodeHealth(b, node, version(renewTime, '1'), t, OPTS);
            assert.equal(oa.health.probeTimestamp, ob.health.probeTimestamp);
            assert.equal(oa.expired, ob.expired);
            assert.equal(oa.needsStatusUpdate, ob.needsStatusUpdate);
            a = s.pass ? leaseSeenByPass(oa.health) : oa.health;
            b = s.pass ? leaseSeenByPass(ob.health) : ob.health;
          }
        },
      ),
    );
  });
});

describe('properties', () => {
  /** Walks a node through observations; heartbeats land at `beats` (ms offsets), observations at `looks`. */
  const walk = (beats: number[], looks: number[], viaLease: boolean): NodeHealthObservation[] => {
    const out: NodeHealthObservation[] = [];
    let health: NodeHealth | undefined;
    for (const look of looks) {
      const last = Math.max(...beats.filter((b) => b <= look));
      const hb = viaLease ? 0 : last;
      const node = makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW + hb, FAKE_NOW)]);
      const obs = observeNodeHealth(health, node, viaLease ? lease(FAKE_NOW + last) : undefined, FAKE_NOW + look, OPTS);
      health = obs.health;
      out.push(obs);
    }
    return out;
  };

  const arbScenario = fc
    .record({
      gaps: fc.array(fc.integer({ min: 1, max: GRACE_MS - 1 }), { minLength: 1, maxLength: 30 }),
      lookGaps: fc.array(fc.integer({ min: 0, max: 3 * GRACE_MS }), { minLength: 1, maxLength: 40 }),
      viaLease: fc.boolean(),
    })
    .map(({ gaps, lookGaps, viaLease }) => {
      const beats = [0];
      for (const g of gaps) beats.push(beats[beats.length - 1]! + g);
      const end = beats[beats.length - 1]!;
      const looks: number[] = [];
      let t = 0;
      for (const g of lookGaps) {
        t += g;
        if (t > end) break;
        looks.push(t);
      }
      return { beats, looks: [0, ...looks], viaLease };
    });

  test('a node with a heartbeat (status or lease) every < grace never goes Unknown', () => {
    fc.assert(
      fc.property(arbScenario, ({ beats, looks, viaLease }) => {
        for (const obs of walk(beats, looks, viaLease)) {
          assert.equal(obs.needsStatusUpdate, false);
          assert.equal(obs.currentReady?.status, 'True');
        }
      }),
    );
  });

  test('a silent node goes Unknown exactly at nextProbeDeadline', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600_000 }),
        fc.array(fc.integer({ min: 0, max: 200_000 }), { maxLength: 10 }),
        fc.boolean(),
        (grace, lookGaps, withLease) => {
          const opts = { nodeMonitorGracePeriodMs: grace, nodeStartupGracePeriodMs: grace };
          const node = makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)]);
          const l = withLease ? lease(FAKE_NOW) : undefined;
          let obs = observeNodeHealth(undefined, node, l, FAKE_NOW, opts);
          const deadline = nextProbeDeadline(obs.health, obs.gracePeriodMs);
          let t = FAKE_NOW;
          for (const g of lookGaps) {
            t += g;
            obs = observeNodeHealth(obs.health, node, l, t, opts);
            assert.equal(obs.needsStatusUpdate, t >= deadline);
            if (obs.needsStatusUpdate) break;
          }
        },
      ),
    );
  });
});

describe('issue 18: observeNodeHealth shares the cached Ready condition instead of copying it', () => {
  test('a frozen cached node goes through heartbeat, steady and expiry unchanged; only a marked Ready is a copy', () => {
    const ready = Object.freeze(cond('Ready', 'True', FAKE_NOW, FAKE_NOW - HOUR));
    const memory = Object.freeze(cond('MemoryPressure', 'False', FAKE_NOW, FAKE_NOW - HOUR));
    const node = Object.freeze({ ...makeNode(NODE_CREATION), conditions: Object.freeze([ready, memory]) as NodeCondition[] });
    const first = observeNodeHealth(undefined, node, lease(FAKE_NOW), FAKE_NOW, OPTS);
    assert.equal(first.observedReady, ready, 'the cached condition itself, not a copy');
    assert.deepEqual(first.currentReady, ready, 'first sight saves a copy of the status');
    const steady = observeNodeHealth(first.health, node, lease(FAKE_NOW), FAKE_NOW + 1000, OPTS);
    assert.equal(steady.currentReady, ready, 'steady state: the cached condition itself');
    const expired = observeNodeHealth(steady.health, node, lease(FAKE_NOW), FAKE_NOW + GRACE_MS + 1, OPTS);
    assert.equal(expired.needsStatusUpdate, true);
    assert.equal(expired.currentReady?.status, 'Unknown');
    assert.notEqual(expired.currentReady, ready);
    assert.equal(ready.status, 'True', 'the cached condition was not marked');
    assert.equal(getCondition(expired.unknownConditions ?? [], 'Ready')?.status, 'Unknown');
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", health.ts): the texts upstream
// writes into a silent node's conditions, and the condition equality that decides whether a node's
// status changed (a change is a heartbeat: two conditions taken for equal would hide one).
describe('health.ts texts and nodeConditionsEqual, exactly', () => {
  test("upstream's reasons and messages for a silent node's conditions", () => {
    assert.equal(REASON_NODE_STATUS_UNKNOWN, 'NodeStatusUnknown');
    assert.equal(MESSAGE_NODE_STATUS_UNKNOWN, 'Kubelet stopped posting node status.');
    assert.equal(REASON_NODE_STATUS_NEVER_UPDATED, 'NodeStatusNeverUpdated');
    assert.equal(MESSAGE_NODE_STATUS_NEVER_UPDATED, 'Kubelet never posted node status.');
  });

  test('nodeConditionsEqual: each field counts; an absent reason or message equals the empty one', () => {
    const c: NodeCondition = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ok', lastHeartbeatTime: 1, lastTransitionTime: 2 };
    assert.equal(nodeConditionsEqual(c, { ...c }), true);
    assert.equal(nodeConditionsEqual(c, { ...c, type: 'MemoryPressure' }), false);
    assert.equal(nodeConditionsEqual(c, { ...c, status: 'False' }), false);
    assert.equal(nodeConditionsEqual(c, { ...c, reason: 'Other' }), false);
    assert.equal(nodeConditionsEqual(c, { ...c, message: 'other' }), false);
    assert.equal(nodeConditionsEqual(c, { ...c, lastHeartbeatTime: 3 }), false);
    assert.equal(nodeConditionsEqual(c, { ...c, lastTransitionTime: 3 }), false);
    const bare: NodeCondition = { type: 'Ready', status: 'True' };
    assert.equal(nodeConditionsEqual(bare, { ...bare, reason: '', message: '' }), true);
    assert.equal(nodeConditionsEqual(undefined, undefined), true);
    assert.equal(nodeConditionsEqual(c, undefined), false);
    assert.equal(nodeConditionsEqual(undefined, c), false);
  });

  test('podNeedsNotReadyMark without a node name looks at the Ready condition alone', () => {
    assert.equal(podNeedsNotReadyMark({ nodeName: 'n1', conditions: [{ type: 'Ready', status: 'True' }] }), true);
    assert.equal(podNeedsNotReadyMark({ nodeName: 'n1', conditions: [{ type: 'Ready', status: 'True' }] }, 'n2'), false);
  });
});

// Pinned by mutation testing (docs/safety.md, health.ts's full run): observeNodeHealth's bookkeeping.
describe("observeNodeHealth's bookkeeping: the saved Lease, the kept snapshot, the unchanged record", () => {
  const node = makeNode(NODE_CREATION, [cond('Ready', 'True', FAKE_NOW, FAKE_NOW)]);
  const version = (renewTime: number | undefined, resourceVersion: string): Lease => ({ ...lease(renewTime), resourceVersion });

  test('a Lease without renewTime is saved with its resourceVersion (what the circuit breaker compares); another version of it does not replace it', () => {
    const first = observeNodeHealth(undefined, node, version(undefined, '7'), FAKE_NOW, OPTS);
    assert.equal(first.health.lease?.resourceVersion, '7');
    // No renewal to be another version of: `sameRenewalNewerVersion` needs a renewTime on both.
    const second = observeNodeHealth(first.health, node, version(undefined, '8'), FAKE_NOW + 10, OPTS);
    assert.equal(second.health.lease?.resourceVersion, '7');
  });

  test('the same Lease and node observed again give back the very same record (nothing rebuilt in the steady state)', () => {
    const first = observeNodeHealth(undefined, node, version(FAKE_NOW, '66'), FAKE_NOW, OPTS);
    const again = observeNodeHealth(first.health, node, version(FAKE_NOW, '66'), FAKE_NOW + 10, OPTS);
    assert.equal(again.health, first.health);
    const later = observeNodeHealth(again.health, node, version(FAKE_NOW, '66'), FAKE_NOW + 20, OPTS);
    assert.equal(later.health, first.health);
  });

  test('a Lease that disappears keeps the saved one and moves nothing (upstream: observedLease nil)', () => {
    const first = observeNodeHealth(undefined, node, version(FAKE_NOW, '66'), FAKE_NOW, OPTS);
    const gone = observeNodeHealth(first.health, node, undefined, FAKE_NOW + 10, OPTS);
    assert.deepEqual(gone.health.lease, { renewTime: FAKE_NOW, resourceVersion: '66' });
    assert.equal(gone.health.probeTimestamp, FAKE_NOW);
  });

  test('an expiry without a saved status keeps the older snapshot: the Unknown marks go to unknownConditions, not the record', () => {
    const first = observeNodeHealth(undefined, node, undefined, FAKE_NOW, OPTS);
    assert.equal(savedReadyCondition(first.health)?.status, 'True');
    const expired = observeNodeHealth(first.health, node, undefined, FAKE_NOW + GRACE_MS + 1, OPTS);
    assert.equal(expired.expired, true);
    assert.equal(expired.unknownConditions?.find((c) => c.type === 'Ready')?.status, 'Unknown');
    assert.deepEqual(expired.health.conditions, first.health.conditions, 'upstream keeps the snapshot of the last heartbeat');
    // Also when the record is rewritten for another reason: a second version of the saved renewal.
    const withLease = observeNodeHealth(undefined, node, version(FAKE_NOW, '66'), FAKE_NOW, OPTS);
    const touched = observeNodeHealth(withLease.health, node, version(FAKE_NOW, '67'), FAKE_NOW + GRACE_MS + 1, OPTS);
    assert.equal(touched.expired, true);
    assert.equal(touched.health.lease?.resourceVersion, '67');
    assert.deepEqual(touched.health.conditions, withLease.health.conditions, 'the rewritten record keeps the snapshot too');
  });
});
