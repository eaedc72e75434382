/**
 * The taint manager's pure core and writer, tested directly: `decidePodEviction` (restart-safe
 * deadlines, deliberate fix of kubernetes/kubernetes#108268), `planEviction` (what
 * `processPodOnNode` does with a pending deletion) and the DisruptionTarget condition that
 * `TaintEvictionWriter` patches (upstream `addConditionAndDeletePod`).
 *
 * Upstream's table tests (`pkg/controller/tainteviction/taint_eviction_test.go`) are ported onto
 * the real controller shell in test/unit/upstream-tainteviction.test.ts; the shell's own behaviour
 * (rescheduling, retries, sight) is in test/unit/tainteviction-controller.test.ts.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import type { Pod, Taint } from '../../src/kube/objects.js';
import { decidePodEviction, planEviction, type Decision, type PendingEviction } from '../../src/tainteviction/decision.js';
import { TaintEvictionWriter } from '../../src/tainteviction/writer.js';
import type { KubeClients } from '../../src/kube/client.js';
import {
  DELETION_BY_TAINT_MANAGER_MESSAGE,
  DELETION_BY_TAINT_MANAGER_REASON,
  taintEvictionDisruptionCondition,
} from '../../src/tainteviction/events.js';
import { T0, pod as newPod } from '../support/outofservice-world.js';

describe('TaintEvictionWriter and the DisruptionTarget condition', () => {
  test('DisruptionTarget condition (addConditionAndDeletePod)', () => {
    assert.deepEqual(taintEvictionDisruptionCondition(T0), {
      type: 'DisruptionTarget',
      status: 'True',
      reason: DELETION_BY_TAINT_MANAGER_REASON,
      message: DELETION_BY_TAINT_MANAGER_MESSAGE,
      lastTransitionTime: T0,
    });
    assert.equal(DELETION_BY_TAINT_MANAGER_REASON, 'DeletionByTaintManager');
    assert.equal(DELETION_BY_TAINT_MANAGER_MESSAGE, 'Taint manager: deleting due to NoExecute taint');
  });

  // addConditionAndDeletePod: ObservedGeneration = CalculatePodConditionObservedGeneration(&pod.Status,
  // pod.Generation, DisruptionTarget), i.e. pod.Generation in 1.37.2 (PodObservedGenerationTracking GA,
  // locked on); omitted (omitempty) when the server sets no pod generation (before 1.33).
  test('DisruptionTarget condition carries observedGeneration = the pod\'s metadata.generation (TaintEvictionWriter)', async () => {
    const patches: Record<string, unknown>[] = [];
    const core = {
      patchNamespacedPodStatus: async (arg: Record<string, unknown>) => {
        patches.push(arg);
        return {};
      },
    } as unknown as KubeClients['core'];
    const writer = new TaintEvictionWriter({ core }, { schedule: (fn) => fn() }, new FakeClock(T0));
    const conditionsOf = (i: number) => (patches[i]?.['body'] as { metadata: { uid: string }; status: { conditions: Record<string, unknown>[] } }).status.conditions;

    const pod: Pod = { ...newPod('p', 'node1'), generation: 4 };
    assert.equal(await writer.addDisruptionCondition('default', 'p', pod.uid, pod), 'written');
    assert.deepEqual(conditionsOf(0), [
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: DELETION_BY_TAINT_MANAGER_REASON,
        message: DELETION_BY_TAINT_MANAGER_MESSAGE,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        observedGeneration: 4,
      },
    ]);

    // No generation (servers before 1.33), or a cached copy of another pod under the same name: left out.
    assert.equal(await writer.addDisruptionCondition('default', 'p', pod.uid, newPod('p', 'node1')), 'written');
    assert.equal('observedGeneration' in (conditionsOf(1)[0] ?? {}), false);
    assert.equal(await writer.addDisruptionCondition('default', 'p', 'uid-recreated', pod), 'written');
    assert.equal('observedGeneration' in (conditionsOf(2)[0] ?? {}), false);
    assert.equal((patches[2]?.['body'] as { metadata: { uid: string } }).metadata.uid, 'uid-recreated');
  });
});

describe('restart-safe deadlines (deliberate fix of kubernetes/kubernetes#108268)', () => {
  const S = 1_000;

  test('a restarted controller computes the same deadline from timeAdded', () => {
    const taint: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: T0 };
    const pod = { ...newPod('pod1', 'node1'), tolerations: [{ key: taint.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] };
    const before = decidePodEviction(pod, [taint], T0 + 10 * S);
    const afterRestart = decidePodEviction(pod, [taint], T0 + 250 * S);
    assert.deepEqual(
      [before.kind, afterRestart.kind],
      ['delete-at', 'delete-at'],
    );
    assert.equal(before.kind === 'delete-at' && before.atMs, T0 + 300 * S);
    assert.equal(afterRestart.kind === 'delete-at' && afterRestart.atMs, T0 + 300 * S);
    // Restarting after the deadline deletes at once instead of granting another 300 s.
    assert.equal(decidePodEviction(pod, [taint], T0 + 301 * S).kind, 'delete-now');
  });

  test('several taints: min over taints of timeAdded_i + tolerationSeconds_i', () => {
    const a: Taint = { key: 'a', effect: 'NoExecute', timeAdded: T0 };
    const b: Taint = { key: 'b', effect: 'NoExecute', timeAdded: T0 + 200 * S };
    const pod = {
      ...newPod('pod1', 'node1'),
      tolerations: [
        { key: 'a', operator: 'Exists', tolerationSeconds: 300 },
        { key: 'b', operator: 'Exists', tolerationSeconds: 60 },
      ],
    };
    const d = decidePodEviction(pod, [a, b], T0 + 210 * S);
    assert.equal(d.kind, 'delete-at');
    assert.equal(d.kind === 'delete-at' && d.atMs, T0 + 260 * S);
    assert.equal(d.kind === 'delete-at' && d.taint, b);
  });

  test('without timeAdded, firstSeen anchors the clock; without either, now does', () => {
    const taint: Taint = { key: 'a', effect: 'NoExecute' };
    const pod = { ...newPod('pod1', 'node1'), tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: 30 }] };
    const seen = decidePodEviction(pod, [taint], T0 + 20 * S, { firstSeen: (t) => (t === taint ? T0 : undefined) });
    assert.equal(seen.kind === 'delete-at' && seen.atMs, T0 + 30 * S);
    const unseen = decidePodEviction(pod, [taint], T0 + 20 * S, { firstSeen: () => undefined });
    assert.equal(unseen.kind === 'delete-at' && unseen.atMs, T0 + 50 * S);
  });

  test('a timeAdded in the future (clock skew) counts from now', () => {
    const taint: Taint = { key: 'a', effect: 'NoExecute', timeAdded: T0 + 3_600 * S };
    const pod = { ...newPod('pod1', 'node1'), tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: 30 }] };
    const d = decidePodEviction(pod, [taint], T0);
    assert.equal(d.kind === 'delete-at' && d.atMs, T0 + 30 * S);
  });

  test('a pod bound to an already-tainted node starts its clock when it was bound', () => {
    const taint: Taint = { key: 'a', effect: 'NoExecute', timeAdded: T0 };
    const tolerations = [{ key: 'a', operator: 'Exists', tolerationSeconds: 30 }];
    const created = { ...newPod('pod1', 'node1'), creationTimestamp: T0 + 100 * S, tolerations };
    const d1 = decidePodEviction(created, [taint], T0 + 110 * S);
    assert.equal(d1.kind === 'delete-at' && d1.atMs, T0 + 130 * S);
    const bound = { ...created, conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: T0 + 200 * S }] };
    const d2 = decidePodEviction(bound, [taint], T0 + 210 * S);
    assert.equal(d2.kind === 'delete-at' && d2.atMs, T0 + 230 * S);
  });

  test('tolerationSeconds ≤ 0 deletes at once; an untolerated taint wins over any toleration', () => {
    const taint: Taint = { key: 'a', effect: 'NoExecute', timeAdded: T0 };
    const zero = { ...newPod('pod1', 'node1'), tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: -5 }] };
    assert.equal(decidePodEviction(zero, [taint], T0).kind, 'delete-now');
    const other: Taint = { key: 'b', effect: 'NoExecute', timeAdded: T0 };
    const forever = { ...newPod('pod1', 'node1'), tolerations: [{ key: 'a', operator: 'Exists' }] };
    const d = decidePodEviction(forever, [taint, other], T0);
    assert.equal(d.kind, 'delete-now');
    assert.equal(d.kind === 'delete-now' && d.taint, other);
  });

  test('non-NoExecute taints are ignored; unscheduled pods get none; terminating pods are decided as upstream does', () => {
    const noSchedule: Taint = { key: 'a', effect: 'NoSchedule', timeAdded: T0 };
    assert.equal(decidePodEviction(newPod('pod1', 'node1'), [noSchedule], T0).kind, 'none');
    const noExecute: Taint = { key: 'a', effect: 'NoExecute', timeAdded: T0 };
    assert.equal(decidePodEviction(newPod('pod1', ''), [noExecute], T0).kind, 'none');
    const terminating = { ...newPod('pod1', 'node1'), deletionTimestamp: T0 };
    assert.equal(decidePodEviction(terminating, [noExecute], T0).kind, 'delete-now');
  });

  test('property: adding a NoExecute taint never postpones the eviction', () => {
    const rank = (d: Decision, now: number): number => (d.kind === 'none' || d.kind === 'held' ? Number.POSITIVE_INFINITY : d.kind === 'delete-now' ? now : d.atMs);
    const taintArb = fc.record({
      key: fc.constantFrom('a', 'b', 'c'),
      effect: fc.constant('NoExecute'),
      timeAdded: fc.integer({ min: T0 - 600 * S, max: T0 + 60 * S }),
    });
    const tolArb = fc.record(
      { key: fc.constantFrom('a', 'b', 'c'), operator: fc.constant('Exists'), tolerationSeconds: fc.integer({ min: -1, max: 900 }) },
      { requiredKeys: ['key', 'operator'] },
    );
    fc.assert(
      fc.property(fc.array(taintArb, { maxLength: 4 }), taintArb, fc.array(tolArb, { maxLength: 4 }), (taints, extra, tolerations) => {
        const pod = { ...newPod('pod1', 'node1'), creationTimestamp: T0 - 3_600 * S, tolerations };
        const before = decidePodEviction(pod, taints, T0);
        const after = decidePodEviction(pod, [...taints, extra], T0);
        return rank(after, T0) <= rank(before, T0);
      }),
    );
  });
});

describe('planEviction', () => {
  const at = (atMs: number): Decision => ({ kind: 'delete-at', atMs, reason: 'r', taint: { key: 'a', effect: 'NoExecute' } });
  const now: Decision = { kind: 'delete-now', reason: 'r', taint: { key: 'a', effect: 'NoExecute' } };
  const none: Decision = { kind: 'none' };
  const timed = (uid: string, atMs: number): PendingEviction => ({ uid, atMs, scheduledAtMs: T0 });
  const immediate = (uid: string): PendingEviction => ({ uid, atMs: T0, scheduledAtMs: T0 });

  test('none cancels; the event only for a timed entry (CancelWork returns false for nil workers)', () => {
    assert.deepEqual(planEviction(none, 'u', undefined), { kind: 'keep' });
    assert.deepEqual(planEviction(none, 'u', timed('u', T0 + 1)), { kind: 'cancel', emitCancelEvent: true });
    assert.deepEqual(planEviction(none, 'u', immediate('u')), { kind: 'cancel', emitCancelEvent: false });
  });

  test('delete-now cancels a timed entry with the event and keeps a running deletion', () => {
    assert.deepEqual(planEviction(now, 'u', undefined), { kind: 'delete-now', emitCancelEvent: false });
    assert.deepEqual(planEviction(now, 'u', timed('u', T0 + 1)), { kind: 'delete-now', emitCancelEvent: true });
    assert.deepEqual(planEviction(now, 'u', immediate('u')), { kind: 'keep' });
    assert.deepEqual(planEviction(now, 'u2', immediate('u')), { kind: 'delete-now', emitCancelEvent: false });
  });

  test('a toleration that ran out does not hasten a pending deadline; an untolerated taint still deletes at once', () => {
    const expired: Decision = { kind: 'delete-now', reason: 'r', taint: { key: 'a', effect: 'NoExecute' }, expired: true };
    assert.deepEqual(planEviction(expired, 'u', timed('u', T0 + 50)), { kind: 'keep' });
    assert.deepEqual(planEviction(expired, 'u', undefined), { kind: 'delete-now', emitCancelEvent: false });
    assert.deepEqual(planEviction(expired, 'u2', timed('u', T0 + 50)), { kind: 'delete-now', emitCancelEvent: true });
    assert.deepEqual(planEviction(now, 'u', timed('u', T0 + 50)), { kind: 'delete-now', emitCancelEvent: true });
  });

  test('delete-at never moves a pending deadline of the same pod, and replaces another uid (deliberate)', () => {
    assert.deepEqual(planEviction(at(T0 + 10), 'u', undefined), { kind: 'schedule', atMs: T0 + 10 });
    assert.deepEqual(planEviction(at(T0 + 10), 'u', timed('u', T0 + 5)), { kind: 'keep' });
    assert.deepEqual(planEviction(at(T0 + 10), 'u', timed('u', T0 + 10)), { kind: 'keep' });
    assert.deepEqual(planEviction(at(T0 + 10), 'u', timed('u', T0 + 50)), { kind: 'keep' });
    assert.deepEqual(planEviction(at(T0 + 10), 'u', immediate('u')), { kind: 'keep' });
    assert.deepEqual(planEviction(at(T0 + 50), 'new', timed('old', T0 + 5)), { kind: 'schedule', atMs: T0 + 50 });
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", tainteviction/decision.ts): the
// start hold of decidePodEviction (opts.judgement), which the controller tests reach only through
// the shell. A held deletion must stay held unless a taint the node lifecycle controller does not
// manage calls for it on its own; without a judge in the process, the time before first sight is blind.
describe('decidePodEviction: the start hold (opts.judgement)', () => {
  const S = 1000;
  const NOW = T0 + 3_600 * S;
  const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW - 100 * S };
  const custom = (timeAdded: number): Taint => ({ key: 'example.com/drain', effect: 'NoExecute', timeAdded });
  const plain = { ...newPod('p', 'node1'), creationTimestamp: T0 };
  const HELD = { heldBecause: 'the node lifecycle controller has not judged the node since it started' };
  const notTolerated = 'NoExecute taint node.kubernetes.io/unreachable:NoExecute is not tolerated';

  test('heldBecause: a deletion only a managed taint calls for is held, with both reasons', () => {
    assert.deepEqual(decidePodEviction(plain, [unreachable], NOW, { judgement: HELD }), {
      kind: 'held',
      reason: `${notTolerated}; held: ${HELD.heldBecause}`,
      taint: unreachable,
    });
  });

  test('heldBecause: an untolerated taint of another owner deletes on its own', () => {
    const d = decidePodEviction(plain, [unreachable, custom(NOW - 10 * S)], NOW, { judgement: HELD });
    assert.equal(d.kind, 'delete-now');
    assert.equal(d.kind === 'delete-now' ? d.taint.key : '', 'example.com/drain');
  });

  test("heldBecause: another owner's tolerated taint keeps its own deadline, saying the managed one is held", () => {
    const pod = { ...plain, tolerations: [{ key: 'example.com/drain', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] };
    const d = decidePodEviction(pod, [unreachable, custom(NOW - 10 * S)], NOW, { judgement: HELD });
    assert.equal(d.kind, 'delete-at');
    assert.equal(d.kind === 'delete-at' ? d.atMs : 0, NOW + 290 * S);
    assert.match(d.kind === 'delete-at' ? d.reason : '', new RegExp(`^toleration of NoExecute taint example\\.com/drain:NoExecute runs out at .* \\(${notTolerated}; held: `));
  });

  test('no hold for a decision that is not a deletion due now, nor without a managed taint', () => {
    const tolerating = { ...plain, tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] };
    assert.equal(decidePodEviction(tolerating, [unreachable], NOW, { judgement: HELD }).kind, 'delete-at');
    assert.equal(decidePodEviction(plain, [custom(NOW - 10 * S)], NOW, { judgement: HELD }).kind, 'delete-now');
  });

  test('no judge here: a deletion due before first sight waits for firstSight + hold; one due after it does not', () => {
    const firstSightMs = NOW - 50 * S;
    const judgement = { firstSightMs, holdMs: 40 * S };
    const at = NOW - 20 * S; // inside the hold, which ends at NOW - 10 s
    const held = decidePodEviction(plain, [unreachable], at, { judgement });
    assert.equal(held.kind, 'delete-at');
    assert.equal(held.kind === 'delete-at' ? held.atMs : 0, firstSightMs + 40 * S);
    assert.match(held.kind === 'delete-at' ? held.reason : '', /before this process first saw the cluster/);
    const after = { ...unreachable, timeAdded: NOW - 30 * S };
    assert.equal(decidePodEviction(plain, [after], at, { judgement }).kind, 'delete-now');
    // Once the hold has ended, the deletion is due now.
    assert.equal(decidePodEviction(plain, [unreachable], firstSightMs + 40 * S, { judgement }).kind, 'delete-now');
  });

  test("no judge here: the earlier of the held managed deletion and another owner's deadline", () => {
    const firstSightMs = NOW - 50 * S;
    const judgement = { firstSightMs, holdMs: 40 * S }; // the managed deletion waits until NOW - 10 s
    const tol = (s: number) => ({ ...plain, tolerations: [{ key: 'example.com/drain', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s }] });
    const sooner = decidePodEviction(tol(5), [unreachable, custom(NOW - 1 * S)], NOW - 20 * S + 0, { judgement });
    // At NOW - 20 s: the custom taint (added NOW - 1 s, clamped to now) + 5 s = NOW - 15 s, before the held NOW - 10 s.
    assert.equal(sooner.kind === 'delete-at' ? sooner.atMs : 0, NOW - 15 * S);
    const later = decidePodEviction(tol(300), [unreachable, custom(NOW - 1 * S)], NOW - 20 * S, { judgement });
    assert.equal(later.kind === 'delete-at' ? later.atMs : 0, NOW - 10 * S);
    assert.ok(later.kind === 'delete-at' && later.heldForSightFromMs !== undefined, 'the held managed deletion');
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", tainteviction/decision.ts): the
// anchors and the flags decidePodEviction hands on. `expired` is what keeps a pending deadline from
// being moved earlier by planEviction; the due time of untolerated taints is what the sight hold
// compares, so the earliest untolerated one must decide it.
describe('decidePodEviction: anchors, due times and what it hands to planEviction', () => {
  const S = 1000;
  const NOW = T0 + 3_600 * S;
  const base = { ...newPod('p', 'node1'), creationTimestamp: T0 };
  const taint = (key: string, timeAdded?: number): Taint => ({ key, effect: 'NoExecute', ...(timeAdded === undefined ? {} : { timeAdded }) });
  const tolerate = (key: string, s: number) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s });

  test('a run-out toleration is delete-now marked expired, with its reason; planEviction then keeps a pending deadline', () => {
    const pod = { ...base, tolerations: [tolerate('a', 60)] };
    const d = decidePodEviction(pod, [taint('a', NOW - 100 * S)], NOW);
    assert.deepEqual(d, {
      kind: 'delete-now',
      reason: `toleration of NoExecute taint a:NoExecute ran out at ${new Date(NOW - 40 * S).toISOString()}`,
      taint: taint('a', NOW - 100 * S),
      expired: true,
    });
    assert.deepEqual(planEviction(d, pod.uid, { uid: pod.uid, atMs: NOW + 200 * S, scheduledAtMs: NOW - 100 * S }), { kind: 'keep' });
  });

  test('a taint without timeAdded and no firstSeen counts from now', () => {
    const pod = { ...base, tolerations: [tolerate('a', 60)] };
    const d = decidePodEviction(pod, [taint('a')], NOW);
    assert.equal(d.kind === 'delete-at' ? d.atMs : 0, NOW + 60 * S);
  });

  test('only a PodScheduled condition that is True moves the exposure start', () => {
    const pending = { ...base, tolerations: [tolerate('a', 300)], conditions: [{ type: 'PodScheduled', status: 'False' as const, lastTransitionTime: T0 + 100 * S }] };
    const d = decidePodEviction(pending, [taint('a', T0)], T0 + 10 * S);
    assert.equal(d.kind === 'delete-at' ? d.atMs : 0, T0 + 300 * S);
    const bound = { ...pending, conditions: [{ type: 'PodScheduled', status: 'True' as const, lastTransitionTime: T0 + 100 * S }] };
    const e = decidePodEviction(bound, [taint('a', T0)], T0 + 10 * S);
    assert.equal(e.kind === 'delete-at' ? e.atMs : 0, T0 + 10 * S + 300 * S, 'bound later than now: clamped to now');
  });

  test('sight hold: the earliest untolerated taint decides the due time, tolerated ones do not', () => {
    const sight = { lastBlind: { fromMs: NOW - 60 * S, toMs: NOW - 30 * S }, holdMs: 40 * S };
    // Untolerated a (before the blind interval ended) and b (after): due with a, held.
    const held = decidePodEviction(base, [taint('b', NOW - 10 * S), taint('a', NOW - 50 * S)], NOW, { sight });
    assert.equal(held.kind, 'delete-at');
    assert.equal(held.kind === 'delete-at' ? held.heldForSightFromMs : 0, NOW - 50 * S);
    // A tolerated taint from before the blind interval does not make an untolerated later one due then.
    const pod = { ...base, tolerations: [tolerate('t', 3_600)] };
    assert.equal(decidePodEviction(pod, [taint('t', NOW - 50 * S), taint('b', NOW - 10 * S)], NOW, { sight }).kind, 'delete-now');
  });

  // Pinned by the full mutation run of 2026-12-07 (docs/safety.md): the four survivors a test can tell.
  test('the TaintTolerationComparisonOperators gate is off unless the caller says so: an Lt/Gt toleration tolerates nothing', () => {
    const valued: Taint = { key: 'example.com/gpu-errors', value: '5', effect: 'NoExecute', timeAdded: NOW - 10 * S };
    const pod = { ...base, tolerations: [{ key: 'example.com/gpu-errors', operator: 'Lt', value: '10', effect: 'NoExecute' }] };
    assert.equal(decidePodEviction(pod, [valued], NOW).kind, 'delete-now', 'gate off by default (upstream 1.37): not tolerated');
    assert.equal(decidePodEviction(pod, [valued], NOW, { comparisonOperators: true }).kind, 'none', 'gate on: 5 < 10 tolerated forever');
  });

  test('two tolerations running out at the same instant: the first taint in the node\'s order is named', () => {
    const pod = { ...base, tolerations: [tolerate('a', 60), tolerate('b', 50)] };
    const d = decidePodEviction(pod, [taint('a', NOW - 10 * S), taint('b', NOW)], NOW);
    assert.equal(d.kind === 'delete-at' ? d.atMs : 0, NOW + 50 * S);
    assert.equal(d.kind === 'delete-at' ? d.taint.key : '', 'a');
  });

  test('a sight hold names the blind interval in its reason', () => {
    const sight = { lastBlind: { fromMs: NOW - 60 * S, toMs: NOW - 30 * S }, holdMs: 40 * S };
    const d = decidePodEviction(base, [taint('a', NOW - 50 * S)], NOW, { sight });
    assert.match(d.kind === 'delete-at' ? d.reason : '', new RegExp(`blind interval ${new Date(NOW - 60 * S).toISOString()}–${new Date(NOW - 30 * S).toISOString()}: held`));
  });

  test("no judge here: when the held managed deletion and another owner's deadline fall together, the other owner's is named", () => {
    const firstSightMs = NOW - 50 * S;
    const judgement = { firstSightMs, holdMs: 40 * S }; // the managed deletion waits until NOW - 10 s
    const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' as const, timeAdded: NOW - 100 * S };
    const pod = { ...base, tolerations: [tolerate('example.com/drain', 10)] };
    // At NOW - 20 s: the drain taint (added then) + 10 s = NOW - 10 s, the end of the hold too.
    const d = decidePodEviction(pod, [unreachable, taint('example.com/drain', NOW - 20 * S)], NOW - 20 * S, { judgement });
    assert.equal(d.kind === 'delete-at' ? d.atMs : 0, NOW - 10 * S);
    assert.equal(d.kind === 'delete-at' ? d.taint.key : '', 'example.com/drain');
    assert.ok(d.kind === 'delete-at' && d.heldForSightFromMs === undefined, 'a plain deadline, not a sight hold');
  });

  test('no judge here: a managed deletion due after first sight goes ahead, whatever deadline another taint has', () => {
    const judgement = { firstSightMs: NOW - 50 * S, holdMs: 40 * S };
    const pod = { ...base, tolerations: [tolerate('example.com/drain', 300)] };
    const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' as const, timeAdded: NOW - 30 * S };
    const d = decidePodEviction(pod, [unreachable, taint('example.com/drain', NOW - 10 * S)], NOW, { judgement });
    assert.equal(d.kind, 'delete-now');
    assert.equal(d.kind === 'delete-now' ? d.taint.key : '', 'node.kubernetes.io/unreachable');
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", tainteviction/decision.ts, CI's
// sample): a held decision must drop what is pending (else the old schedule would delete a pod the
// start hold keeps), without the "Cancelling deletion" event (the deletion is not cancelled from the
// user's point of view: it goes ahead once the node is confirmed).
describe('planEviction of a held decision', () => {
  const held: Decision = { kind: 'held', reason: 'r', taint: { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' } };
  test('nothing pending: keep', () => {
    assert.deepEqual(planEviction(held, 'uid-1', undefined), { kind: 'keep' });
  });
  test('a timed or an immediate entry pending: cancel it, without the event', () => {
    assert.deepEqual(planEviction(held, 'uid-1', { uid: 'uid-1', atMs: 2_000, scheduledAtMs: 1_000 }), { kind: 'cancel', emitCancelEvent: false });
    assert.deepEqual(planEviction(held, 'uid-1', { uid: 'uid-1', atMs: 1_000, scheduledAtMs: 1_000 }), { kind: 'cancel', emitCancelEvent: false });
  });
});
