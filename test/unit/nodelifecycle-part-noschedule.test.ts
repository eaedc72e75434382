/**
 * The NoSchedule part (src/nodelifecycle/noschedule.ts) on its own: built from its deps slice
 * (`NoScheduleDeps`) and a fake `NoScheduleLinks`, no controller and no other part.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Taint } from '../../src/kube/objects.js';
import { NOSCHEDULE_BLIND_RETRY_MS, NOSCHEDULE_WAIT_FOR_NOEXECUTE_MS, NoScheduleTaintPass } from '../../src/nodelifecycle/noschedule.js';
import type { NoScheduleDeps } from '../../src/nodelifecycle/parts.js';
import { NotCalledForError } from '../../src/kube/throttle.js';
import { conditionTaintDiff } from '../../src/nodelifecycle/taints.js';
import { basics, MapStore, node, settle } from '../support/nodelifecycle-parts.js';

interface Call {
  kind: 'taints' | 'labels' | 'held';
  name: string;
  conditionTaints?: boolean;
  /** the throttle order asked for (issue 29: NoSchedule writes wait behind NoExecute ones) */
  priority?: string;
  labels?: Record<string, string>;
}

function build(nodes: Node[], syncing = new Set<string>(), noExecutePending = new Set<string>()) {
  const { clock, log } = basics();
  const sight = { seeing: true };
  /** Called once each, in order, right before a write's send-time recheck (as the throttle's turn comes). */
  const beforeSend: (() => void)[] = [];
  const cache = new MapStore<Node>();
  for (const n of nodes) cache.set(n);
  const calls: Call[] = [];
  const deps: NoScheduleDeps = {
    clock,
    log,
    caches: { nodes: cache },
    canSeeCluster: () => sight.seeing,
    writes: {
      swapNodeTaints: async (name, _add, _remove, cached, opts = {}) => {
        beforeSend.shift()?.();
        // As the throttle does right before sending (src/kube/throttle.ts WriteRecheck).
        const notCalledFor = opts.recheck?.();
        if (notCalledFor !== undefined) {
          calls.push({ kind: 'held', name });
          throw new NotCalledForError(notCalledFor);
        }
        calls.push({ kind: 'taints', name, conditionTaints: opts.conditionTaints === true, ...(opts.priority ? { priority: opts.priority } : {}) });
        if (cached) {
          const d = conditionTaintDiff(cached);
          opts.onConditionTaints?.(d.toAdd, d.toRemove);
        }
        return 'written';
      },
      patchNodeLabels: async (name, cached, compute) => {
        const labels = cached ? compute(cached) : undefined;
        calls.push({ kind: 'labels', name, ...(labels ? { labels } : {}) });
        return labels ? 'written' : 'unchanged';
      },
    },
  };
  /** Nodes whose pre-outage Unknown verdict is on hold (difference 28). */
  const rejudging = new Set<string>();
  const part = new NoScheduleTaintPass(deps, {
    healthSyncRunning: (name) => syncing.has(name),
    noExecuteTaintPending: (n) => noExecutePending.has(n.name),
    rejudging: (name) => (rejudging.has(name) ? 'judged before the outage' : undefined),
  });
  return { clock, cache, part, calls, syncing, noExecutePending, sight, beforeSend, rejudging };
}

describe('NoSchedule part through parts.ts', () => {
  test('a NotReady node without its condition taint (and no NoExecute taint write coming) gets one condition-taint write at once', async (t) => {
    const w = build([node('n1', 'False')]);
    t.after(() => w.part.stop());
    w.part.enqueue('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, [{ kind: 'taints', name: 'n1', conditionTaints: true, priority: 'noschedule-taint' }]);
  });

  test('a node already in line (taint present, labels reconciled) gets no write', async (t) => {
    const taint: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
    const w = build([node('n1', 'False', { taints: [taint] })]);
    t.after(() => w.part.stop());
    w.part.enqueue('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, []);
  });

  test('reconciles the beta os/arch labels from the GA ones', async (t) => {
    const w = build([node('n1', 'True', { labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'arm64', 'beta.kubernetes.io/arch': 'amd64' } })]);
    t.after(() => w.part.stop());
    w.part.enqueue('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, [{ kind: 'labels', name: 'n1', labels: { 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'arm64' } }]);
  });

  test('waits for a running health sync of the node, then runs once it is done', async (t) => {
    const w = build([node('n1', 'False')], new Set(['n1']));
    t.after(() => w.part.stop());
    w.part.enqueue('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, [], 'deferred while the health sync runs');
    w.syncing.delete('n1');
    w.part.healthSyncDone('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, [{ kind: 'taints', name: 'n1', conditionTaints: true, priority: 'noschedule-taint' }]);
  });

  test('difference 13: a condition-taint write leaves the taints to the coming NoExecute taint write of the node', async (t) => {
    const w = build([node('n1', 'Unknown')], new Set(), new Set(['n1']));
    t.after(() => w.part.stop());
    w.part.enqueue('n1');
    await settle(w.clock, 100);
    assert.deepEqual(w.calls, [], 'no write while the NoExecute taint write is coming');
    // That write carried the condition taints (difference 12); the zone part re-queues the node.
    w.noExecutePending.delete('n1');
    const unreachable: Taint[] = [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
    ];
    w.cache.set(node('n1', 'Unknown', { taints: unreachable }));
    w.part.enqueue('n1');
    await settle(w.clock, NOSCHEDULE_WAIT_FOR_NOEXECUTE_MS);
    assert.deepEqual(w.calls, [], 'one write per node, not two');
  });

  test('difference 13: the wait for a NoExecute taint write that does not come ends after its bound, counted from the first pass', async (t) => {
    const w = build([node('n1', 'Unknown')], new Set(), new Set(['n1']));
    t.after(() => w.part.stop());
    w.part.enqueue('n1');
    await settle(w.clock, NOSCHEDULE_WAIT_FOR_NOEXECUTE_MS / 2);
    w.part.enqueue('n1'); // a node event meanwhile does not restart the bound
    await settle(w.clock, NOSCHEDULE_WAIT_FOR_NOEXECUTE_MS / 2 - 1);
    assert.deepEqual(w.calls, [], 'still waiting 1 ms before the bound');
    await settle(w.clock, 1);
    assert.deepEqual(w.calls, [{ kind: 'taints', name: 'n1', conditionTaints: true, priority: 'noschedule-taint' }]);
  });

  test('healthSyncDone of a node that was not deferred queues nothing', async (t) => {
    const w = build([node('n1', 'False')]);
    t.after(() => w.part.stop());
    w.part.healthSyncDone('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, []);
  });

  // Deliberate difference 29 (docs/node-lifecycle.md), found by the fuzz's post-outage invariant (m)
  // (seed 20270301, run 1033): a condition taint was written while the Node cache still waited to
  // relist after an outage, from conditions older than the outage. Fails without the sight gate.
  test('difference 29: no condition taint while the controller cannot see the cluster; tried again, and written from the current view once sight returns', async (t) => {
    const w = build([node('n1', 'False')]);
    t.after(() => w.part.stop());
    w.sight.seeing = false;
    w.part.enqueue('n1');
    await settle(w.clock);
    await w.clock.advanceAsync(5 * NOSCHEDULE_BLIND_RETRY_MS);
    await settle(w.clock);
    assert.deepEqual(w.calls, [], 'nothing written while blind');
    w.sight.seeing = true;
    await w.clock.advanceAsync(NOSCHEDULE_BLIND_RETRY_MS);
    await settle(w.clock);
    assert.deepEqual(w.calls, [{ kind: 'taints', name: 'n1', conditionTaints: true, priority: 'noschedule-taint' }]);
  });

  test('difference 29: a condition-taint write whose turn in the throttle comes after sight was lost is not sent (send-time recheck)', async (t) => {
    const w = build([node('n1', 'False')]);
    t.after(() => w.part.stop());
    // Decided with sight; the outage begins while the write waits for its turn.
    w.beforeSend.push(() => (w.sight.seeing = false));
    w.part.enqueue('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, [{ kind: 'held', name: 'n1' }]);
    // Tried again once sight is back, and written from the view then.
    w.sight.seeing = true;
    await w.clock.advanceAsync(NOSCHEDULE_BLIND_RETRY_MS);
    await settle(w.clock);
    assert.deepEqual(w.calls, [{ kind: 'held', name: 'n1' }, { kind: 'taints', name: 'n1', conditionTaints: true, priority: 'noschedule-taint' }]);
  });

  test('difference 29: no unreachable taint from an Unknown verdict on hold after an outage (difference 28), at decision and at send time; written once it is judged again (fuzz seed 20271208 run 19451)', async (t) => {
    const w = build([node('n1', 'Unknown'), node('n2', 'Unknown'), node('n3', 'False')]);
    t.after(() => w.part.stop());
    w.rejudging.add('n1').add('n3');
    // n2's verdict is not on hold when decided, but goes on hold while its write waits for its turn.
    w.beforeSend.push(() => w.rejudging.add('n2'));
    w.part.enqueue('n2');
    await settle(w.clock);
    w.part.enqueue('n1');
    w.part.enqueue('n3');
    await settle(w.clock);
    await w.clock.advanceAsync(5 * NOSCHEDULE_BLIND_RETRY_MS);
    await settle(w.clock);
    // n3 is Ready=False, the kubelet's own report: its not-ready taint is not held.
    assert.deepEqual(w.calls, [{ kind: 'held', name: 'n2' }, { kind: 'taints', name: 'n3', conditionTaints: true, priority: 'noschedule-taint' }]);
    w.rejudging.clear();
    await w.clock.advanceAsync(NOSCHEDULE_BLIND_RETRY_MS);
    await settle(w.clock);
    assert.deepEqual(
      w.calls.slice(2).map((c) => c.name).sort(),
      ['n1', 'n2'],
      'both tried again and written once judged again',
    );
  });

  test('difference 29: a node that turns Unknown in the cache while its condition-taint write waits is held at send time when its verdict is on hold', async (t) => {
    const w = build([node('n1', 'False')]);
    t.after(() => w.part.stop());
    w.rejudging.add('n1');
    // Decided on Ready=False (not-ready: not held); while the write waits, the cache shows Unknown.
    w.beforeSend.push(() => w.cache.set(node('n1', 'Unknown')));
    w.part.enqueue('n1');
    await settle(w.clock);
    assert.deepEqual(w.calls, [{ kind: 'held', name: 'n1' }], 'the unreachable taint the write would now add is held');
  });
});
