/**
 * The node judgements board (src/kube/judgements.ts) case by case: which observations confirm a node
 * not Ready, what a reader is told before and after, and when listeners are called. The taint
 * eviction controller deletes on a node lifecycle NoExecute taint only once the board confirms the
 * node (taint-eviction.md, the start hold), so a board that confirmed sooner would evict sooner.
 * Pinned by mutation testing (docs/safety.md, "Mutation testing").
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeJudgementBoard, isNodeLifecycleNoExecuteTaint, notConfirmedBecause, type NodeObservation } from '../../src/kube/judgements.js';

const GRACE = 50_000;
const unknownExpired: NodeObservation = { ready: 'Unknown', expired: true, gracePeriodMs: GRACE };
const SILENT = 'the node lifecycle controller has not yet seen the node silent for a full grace period (50 s) since it started';

describe('isNodeLifecycleNoExecuteTaint', () => {
  test('the unreachable and not-ready NoExecute taints only', () => {
    assert.equal(isNodeLifecycleNoExecuteTaint({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }), true);
    assert.equal(isNodeLifecycleNoExecuteTaint({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }), true);
    assert.equal(isNodeLifecycleNoExecuteTaint({ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }), false);
    assert.equal(isNodeLifecycleNoExecuteTaint({ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }), false);
    assert.equal(isNodeLifecycleNoExecuteTaint({ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }), false);
  });
});

describe('notConfirmedBecause', () => {
  test('False confirms at once', () => {
    assert.equal(notConfirmedBecause({ ready: 'False', expired: false, gracePeriodMs: GRACE }, 0), undefined);
  });

  test('Unknown confirms only when expired and strictly more than a grace period after the first observation', () => {
    assert.equal(notConfirmedBecause(unknownExpired, GRACE + 1), undefined);
    assert.equal(notConfirmedBecause(unknownExpired, GRACE), SILENT);
    assert.equal(notConfirmedBecause({ ...unknownExpired, expired: false }, GRACE + 1), SILENT);
    assert.equal(notConfirmedBecause(unknownExpired, 0), SILENT);
  });

  test('True and no Ready condition never confirm, each with its reason', () => {
    assert.equal(notConfirmedBecause({ ready: 'True', expired: true, gracePeriodMs: GRACE }, 10 * GRACE), 'the node lifecycle controller judges the node Ready (it removes the stale taint)');
    assert.equal(
      notConfirmedBecause({ ready: undefined, expired: true, gracePeriodMs: GRACE }, 10 * GRACE),
      'the node lifecycle controller has no Ready condition of the node to judge yet',
    );
  });
});

describe('NodeJudgementBoard', () => {
  /** A board with a judge and a listener recording the nodes it is called for. */
  function board(): { b: NodeJudgementBoard; calls: string[] } {
    const b = new NodeJudgementBoard();
    const calls: string[] = [];
    b.attachJudge();
    b.onChange((n) => calls.push(n));
    return { b, calls };
  }

  test('without a judge: hasJudge false and nothing confirmed, whatever is observed', () => {
    const b = new NodeJudgementBoard();
    assert.equal(b.hasJudge(), false);
    b.observed('n1', { ready: 'False', expired: false, gracePeriodMs: GRACE }, 0);
    assert.equal(b.notConfirmedBecause('n1'), 'no node lifecycle controller runs in this process');
    b.attachJudge();
    assert.equal(b.hasJudge(), true);
    assert.equal(b.notConfirmedBecause('n1'), undefined);
  });

  test('a node not observed since the start is not judged', () => {
    const { b } = board();
    assert.equal(b.notConfirmedBecause('n1'), 'the node lifecycle controller has not judged the node since it started');
  });

  test('Unknown is confirmed a full grace period after the first observation, not after a later one', () => {
    const { b, calls } = board();
    b.observed('n1', unknownExpired, 1_000);
    assert.equal(b.notConfirmedBecause('n1'), SILENT);
    assert.deepEqual(calls, [], 'a first observation that confirms nothing changes no answer a listener acts on');
    b.observed('n1', unknownExpired, 1_000 + GRACE);
    assert.equal(b.notConfirmedBecause('n1'), SILENT);
    b.observed('n1', unknownExpired, 1_000 + GRACE + 1);
    assert.equal(b.notConfirmedBecause('n1'), undefined);
    assert.deepEqual(calls, ['n1']);
  });

  test('listeners: called when a node becomes confirmed or stops being confirmed, not for a change of reason only', () => {
    const { b, calls } = board();
    b.observed('n1', { ready: 'False', expired: false, gracePeriodMs: GRACE }, 0);
    assert.deepEqual(calls, ['n1'], 'a first observation that confirms');
    b.observed('n1', { ready: 'False', expired: false, gracePeriodMs: GRACE }, 10);
    assert.deepEqual(calls, ['n1'], 'same answer');
    b.observed('n1', { ready: 'True', expired: false, gracePeriodMs: GRACE }, 20);
    assert.deepEqual(calls, ['n1', 'n1'], 'no longer confirmed');
    assert.match(b.notConfirmedBecause('n1') ?? '', /judges the node Ready/);
    b.observed('n1', { ready: undefined, expired: false, gracePeriodMs: GRACE }, 30);
    assert.deepEqual(calls, ['n1', 'n1'], 'another reason, still not confirmed');
    assert.match(b.notConfirmedBecause('n1') ?? '', /no Ready condition/);
  });

  test('started forgets every judgement and tells the listeners of each node; the grace restarts', () => {
    const { b, calls } = board();
    b.observed('n1', { ready: 'False', expired: false, gracePeriodMs: GRACE }, 0);
    b.observed('n2', unknownExpired, 0);
    calls.length = 0;
    b.started();
    assert.deepEqual(calls.sort(), ['n1', 'n2']);
    assert.equal(b.notConfirmedBecause('n1'), 'the node lifecycle controller has not judged the node since it started');
    b.observed('n2', unknownExpired, 10 * GRACE);
    assert.equal(b.notConfirmedBecause('n2'), SILENT, 'a fresh grace period from the first observation after the start');
  });

  test('forget: the node is no longer judged, listeners told only when it was known', () => {
    const { b, calls } = board();
    b.forget('n1');
    assert.deepEqual(calls, []);
    b.observed('n1', { ready: 'False', expired: false, gracePeriodMs: GRACE }, 0);
    calls.length = 0;
    b.forget('n1');
    assert.deepEqual(calls, ['n1']);
    assert.equal(b.notConfirmedBecause('n1'), 'the node lifecycle controller has not judged the node since it started');
  });
});
