/**
 * The pod GC's terminated-pod pass (`gcTerminated`, `--terminated-pod-gc-threshold`) and its
 * unscheduled-terminating pass (`gcUnscheduledTerminating`) beyond upstream's own tables
 * (test/unit/upstream-podgc.test.ts): the pure selection, the 20 s period, the live re-check, and
 * that a large backlog cannot starve the out-of-service pass of writes. Each safety test would fail
 * if the controller started acting sooner or on more pods.
 */
import { describe, test } from 'node:test';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../../src/kube/objects.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { silentLogger } from '../../src/log/logger.js';
import { PodGCController, type PodGCWrites } from '../../src/podgc/controller.js';
import {
  byEvictionAndCreationTimestamp,
  GC_CHECK_PERIOD_MS,
  isOnlyWaitingForFinalizers,
  isPodEvicted,
  ORPHAN_QUARANTINE_MS,
  ORPHAN_MESSAGE,
  POD_GC_CONTROLLER_NAME,
  orphanCondition,
  isPodTerminatedForGC,
  isSelectedForTerminatedGC,
  selectTerminatedForGC,
  shouldForceDeleteOutOfService,
  shouldForceDeleteUnscheduled,
} from '../../src/podgc/decision.js';
import type { ForceDeleteRecheck, ForceDeleteResult } from '../../src/podgc/writer.js';
import { NotCalledForError, type WriteRecheck } from '../../src/kube/throttle.js';
import { FakeClock } from '../../src/util/clock.js';
import { counter, Events, node, OOS, pod, PodStore, settle, Store, T0, terminating } from '../support/outofservice-world.js';

const finished = (name: string, createdMs: number, o: Partial<Pod> = {}): Pod => pod(name, 'n1', { phase: 'Succeeded', creationTimestamp: createdMs, ...o });

describe('selectTerminatedForGC (pure)', () => {
  test('deletes the oldest beyond the threshold, evicted pods first, names breaking ties', () => {
    const pods = [
      finished('d', 4),
      finished('a', 1),
      finished('c', 2),
      finished('b', 2),
      finished('e', 5, { phase: 'Failed', statusReason: 'Evicted' }),
      pod('running', 'n1', { creationTimestamp: 0 }),
    ];
    assert.deepEqual(
      selectTerminatedForGC(pods, 2).map((p) => p.name),
      ['e', 'a', 'b'],
    );
    assert.deepEqual(selectTerminatedForGC(pods, 5), [], 'at the threshold: nothing');
    assert.deepEqual(selectTerminatedForGC(pods, 0), [], '0 disables the pass');
    assert.deepEqual(selectTerminatedForGC(pods, -1), [], 'negative disables it too, as upstream');
  });

  test('safety: a pod without a terminal phase is never counted or deleted (upstream would count an empty phase)', () => {
    const pods = [pod('empty', 'n1', { phase: '', creationTimestamp: 0 }), pod('unknown', 'n1', { phase: 'Unknown' }), pod('pending', 'n1', { phase: 'Pending' }), finished('done', 1)];
    assert.deepEqual(selectTerminatedForGC(pods, 1), [], 'only one terminated pod: at the threshold');
    assert.deepEqual(selectTerminatedForGC(pods, 0), []);
  });

  test('evicted means Failed with reason Evicted', () => {
    assert.equal(isPodEvicted({ phase: 'Failed', statusReason: 'Evicted' }), true);
    assert.equal(isPodEvicted({ phase: 'Succeeded', statusReason: 'Evicted' }), false);
    assert.equal(isPodEvicted({ phase: 'Failed' }), false);
    const x = { name: 'x', phase: 'Failed', creationTimestamp: 1 };
    assert.equal(byEvictionAndCreationTimestamp(x, { ...x }), 0);
  });

  test('unscheduled: terminating with no node only', () => {
    assert.equal(shouldForceDeleteUnscheduled(pod('a', '', terminating(T0))), true);
    assert.equal(shouldForceDeleteUnscheduled(pod('a', '')), false, 'not terminating');
    assert.equal(shouldForceDeleteUnscheduled(pod('a', 'n1', terminating(T0))), false, 'scheduled');
  });
});

/** Live pods and force deletes that take `writeMs` each; records how many run at once per pass. */
class SlowWrites implements PodGCWrites {
  readonly live = new Map<string, Pod>();
  readonly nodes = new Map<string, Node>();
  readonly deleted: string[] = [];
  readonly inFlight = new Map<string, number>();
  maxTerminatedInFlight = 0;
  /** Called with each deleted pod (the harness drops it from the pod cache, as the informer would). */
  onDeleted: (p: Pod) => void = () => undefined;
  /** The next `failures` force deletes throw (an API error after the re-check). */
  failures = 0;
  /** Awaited between the live re-check and the send-time check: the wait for the write's turn. */
  beforeSend: () => Promise<void> = () => Promise.resolve();
  constructor(
    readonly clock: FakeClock,
    readonly writeMs: number,
  ) {}

  getNode(name: string): Promise<Node | undefined> {
    return Promise.resolve(this.nodes.get(name));
  }

  async forceDeletePod(namespace: string, name: string, uid: string, recheck: ForceDeleteRecheck, sendCheck?: WriteRecheck): Promise<ForceDeleteResult> {
    const key = `${namespace}/${name}`;
    const p = this.live.get(key);
    if (!p || p.uid !== uid) return 'gone';
    const plan = await recheck(p);
    if (!plan) return 'skipped';
    // As the real writer's throttle does right before the DELETE goes out (src/kube/throttle.ts).
    await this.beforeSend();
    const notCalledFor = sendCheck?.();
    if (notCalledFor !== undefined) throw new NotCalledForError(notCalledFor);
    if (this.failures > 0) {
      this.failures--;
      throw new Error('injected: 500 Internal Server Error');
    }
    const kind = p.deletionTimestamp !== undefined ? 'terminating' : 'terminated';
    this.inFlight.set(kind, (this.inFlight.get(kind) ?? 0) + 1);
    this.maxTerminatedInFlight = Math.max(this.maxTerminatedInFlight, this.inFlight.get('terminated') ?? 0);
    await this.clock.sleep(this.writeMs);
    this.inFlight.set(kind, (this.inFlight.get(kind) ?? 1) - 1);
    this.live.delete(key);
    this.deleted.push(name);
    this.onDeleted(p);
    return 'deleted';
  }
}

function harness(threshold: number, writeMs = 0, scoped = false) {
  const clock = new FakeClock(T0);
  const nodes = new Store<Node>();
  const pods = new PodStore();
  const writes = new SlowWrites(clock, writeMs);
  writes.onDeleted = (p) => pods.del(p);
  const metrics = createMetrics({ defaultMetrics: false });
  const gc = new PodGCController({
    config: { orphanQuarantineMs: ORPHAN_QUARANTINE_MS, sweepPeriodMs: GC_CHECK_PERIOD_MS, scoped, terminatedPodThreshold: threshold },
    clock,
    log: silentLogger,
    caches: { nodes, pods },
    writes,
    events: new Events(clock),
    metrics: metrics.podGC,
    canSeeCluster: () => true,
  });
  const addPod = (p: Pod): void => {
    pods.put(p);
    writes.live.set(`${p.namespace}/${p.name}`, p);
  };
  const addNode = (n: Node): void => {
    nodes.put(n);
    writes.nodes.set(n.name, n);
  };
  return { clock, gc, pods, writes, metrics, addPod, addNode };
}

/** Three terminated pods (old, mid, new) at threshold 2: only "old" is beyond it, until another goes. */
function threeTerminatedAtThresholdTwo() {
  const h = harness(2);
  h.addNode(node('n1', 'True'));
  h.addPod(finished('old', 1));
  h.addPod(finished('mid', 2));
  h.addPod(finished('new', 3));
  /** Someone else deletes the pod: gone from the API and from the cache. */
  const deleteElsewhere = (name: string): void => {
    h.pods.del(h.writes.live.get(`default/${name}`)!);
    h.writes.live.delete(`default/${name}`);
  };
  return { ...h, deleteElsewhere };
}

describe('PodGCController terminated and unscheduled passes', () => {
  test('runs on the 20 s gc period: pods that finish after a pass wait for the next one, not sooner', async () => {
    const h = harness(1);
    h.addNode(node('n1', 'True'));
    h.addPod(finished('a', 1));
    h.gc.start();
    await settle(h.clock);
    assert.deepEqual(h.writes.deleted, []);
    h.addPod(finished('b', 2));
    h.addPod(pod('u', '', terminating(T0)));
    await settle(h.clock, GC_CHECK_PERIOD_MS - 1);
    assert.deepEqual(h.writes.deleted, [], 'nothing before the next gc pass');
    await settle(h.clock, 1);
    assert.deepEqual(h.writes.deleted.sort(), ['a', 'u']);
    await h.gc.stop();
  });

  test('re-decides on the live pod: a pod scheduled since the pass, or restarted, is left alone', async () => {
    const h = harness(0);
    h.addNode(node('n1', 'True'));
    const u = pod('u', '', terminating(T0));
    h.addPod(u);
    h.writes.live.set('default/u', { ...u, nodeName: 'n1' }); // the API already bound it
    h.gc.start();
    await settle(h.clock);
    assert.deepEqual(h.writes.deleted, []);
    await h.gc.stop();

    const t = harness(1);
    t.addNode(node('n1', 'True'));
    t.addPod(finished('old', 1));
    t.addPod(finished('new', 2));
    t.writes.live.set('default/old', { ...finished('old', 1), phase: 'Running' });
    t.gc.start();
    await settle(t.clock);
    assert.deepEqual(t.writes.deleted, [], 'live phase Running: not a terminated pod');
    await t.gc.stop();
  });

  test('a backlog of terminated pods cannot starve the out-of-service pass of writes', async () => {
    const writeMs = 1000;
    const h = harness(1, writeMs);
    h.addNode(node('n1', 'True'));
    h.addNode(node('down', 'False', [{ key: OOS, effect: 'NoExecute' }]));
    for (let i = 0; i < 500; i++) h.addPod(finished(`t${i}`, i));
    h.addPod(pod('victim', 'down', terminating(T0)));
    h.gc.start();
    await settle(h.clock, 2 * writeMs);
    assert.ok(h.writes.deleted.includes('victim'), 'the out-of-service pod went within two write times');
    assert.ok(h.writes.maxTerminatedInFlight <= 2, `at most 2 terminated deletes at once, saw ${h.writes.maxTerminatedInFlight}`);
    assert.ok(h.writes.deleted.length < 10, 'the backlog drains slowly, never all at once');
    // The backlog drains in order over the following passes, oldest first, down to the threshold.
    for (let i = 0; i < 300 && h.writes.live.size > 1; i++) await settle(h.clock, writeMs);
    const terminatedDeleted = h.writes.deleted.filter((n) => n !== 'victim');
    assert.equal(terminatedDeleted.length, 499);
    assert.ok(h.writes.live.has('default/t499'), 'the newest stays');
    await h.gc.stop();
  });

  test('metrics: a failed terminated delete counts under reason "terminated" (upstream testDeletingPodsMetrics names) and is retried', async () => {
    const h = harness(1);
    h.addNode(node('n1', 'True'));
    h.addPod(finished('old', 1));
    h.addPod(finished('new', 2));
    h.writes.failures = 1;
    h.gc.start();
    await settle(h.clock, 1000);
    assert.deepEqual(h.writes.deleted, ['old'], 'retried after the error, and only the pod beyond the threshold');
    const labels = { namespace: 'default', reason: 'terminated' };
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pod_errors_total', labels), 1);
    assert.equal(await counter(h.metrics, 'pod_gc_collector_force_delete_pods_total', labels), 2, 'attempts: the failed one and the retry');
    await h.gc.stop();
  });

  test('safety: a deletion retried after write faults is decided again; once the count is at the threshold it is not sent (fuzz seed 20271208 run 517)', async () => {
    const h = threeTerminatedAtThresholdTwo();
    h.writes.failures = 3; // the API answers 500 to the first three deletes of "old"
    h.gc.start();
    await settle(h.clock, 10);
    assert.deepEqual(h.writes.deleted, [], 'still failing: nothing deleted yet');
    // Meanwhile someone else deletes "mid": two terminated pods left, the threshold.
    h.deleteElsewhere('mid');
    h.writes.failures = 0;
    await settle(h.clock, 2 * GC_CHECK_PERIOD_MS);
    assert.deepEqual(h.writes.deleted, [], 'upstream recounts each pass (2 ≤ threshold 2) and never retries: no deletion');
    await h.gc.stop();
  });

  test('safety: checked again right before the DELETE goes out: a pod no longer beyond the threshold by then is not deleted', async () => {
    const h = threeTerminatedAtThresholdTwo();
    // While "old" waits for its write turn (after the live re-check), "new" is deleted by someone else.
    let once = true;
    h.writes.beforeSend = () => {
      if (once) {
        once = false;
        h.deleteElsewhere('new');
      }
      return Promise.resolve();
    };
    h.gc.start();
    await settle(h.clock, 2 * GC_CHECK_PERIOD_MS);
    assert.deepEqual(h.writes.deleted, [], 'two terminated pods at send time: at the threshold, nothing to delete');
    await h.gc.stop();
  });

  test('safety, --node-selector: only pods bound to nodes in our node cache are counted or deleted (difference 17)', async () => {
    const h = harness(1, 0, true);
    h.addNode(node('n1', 'True'));
    // Older terminated pods on a node outside the selector, and one that never got a node.
    for (let i = 0; i < 5; i++) h.addPod(pod(`other${i}`, 'other', { phase: 'Failed', creationTimestamp: i }));
    h.addPod(pod('nowhere', '', { phase: 'Failed', creationTimestamp: 0 }));
    h.addPod(finished('mine-old', 10));
    h.addPod(finished('mine-new', 11));
    h.gc.start();
    await settle(h.clock, 2 * GC_CHECK_PERIOD_MS);
    assert.deepEqual(h.writes.deleted, ['mine-old'], 'upstream would count 8 and delete the 7 oldest, all but one not ours');
    await h.gc.stop();
  });

  test('a pass queues at most the oldest 1,000 beyond the threshold; the next pass the next ones (later, never more)', async () => {
    const h = harness(10, 3_600_000); // deletes take an hour: nothing drains while we look
    h.addNode(node('n1', 'True'));
    for (let i = 0; i < 2500; i++) h.addPod(finished(`t${String(i).padStart(4, '0')}`, i));
    h.gc.start();
    await settle(h.clock);
    const first = h.gc.view().queuedTerminated + (h.writes.inFlight.get('terminated') ?? 0);
    assert.equal(first, 1000, 'one batch queued or in flight');
    h.gc.sweep();
    await settle(h.clock);
    assert.equal(h.gc.view().queuedTerminated + (h.writes.inFlight.get('terminated') ?? 0), 1000, 'the same oldest 1,000 again: nothing more');
    const stopping = h.gc.stop(); // the two in-flight deletes finish an hour later
    await settle(h.clock, 3_600_000);
    await stopping;

    const d = harness(10);
    d.addNode(node('n1', 'True'));
    for (let i = 0; i < 2500; i++) d.addPod(finished(`t${String(i).padStart(4, '0')}`, i));
    d.gc.start();
    await settle(d.clock);
    assert.equal(d.writes.deleted.length, 1000, 'first pass: the oldest 1,000');
    assert.deepEqual(d.writes.deleted.slice(0, 3), ['t0000', 't0001', 't0002']);
    await settle(d.clock, 2 * GC_CHECK_PERIOD_MS);
    assert.equal(d.writes.deleted.length, 2490, 'two passes later: down to the threshold, no further');
    assert.ok(d.writes.live.has('default/t2490') && !d.writes.live.has('default/t2489'));
    await d.gc.stop();
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", podgc/decision.ts): which pods the
// out-of-service pass may force-delete, the terminated-pod threshold below which nothing is deleted,
// the condition's transition time and the names users see.
describe('pod GC decisions, case by case', () => {
  const oosNode = node('w', 'Unknown', [{ key: OOS, effect: 'NoExecute' }]);
  const gone = { deletionTimestamp: T0, deletionGracePeriodSeconds: 0, phase: 'Failed', finalizers: ['f'] };

  test('out of service: only a terminating pod bound to that very node', () => {
    assert.equal(shouldForceDeleteOutOfService(pod('p', 'w', { deletionTimestamp: T0 }), oosNode), true);
    assert.equal(shouldForceDeleteOutOfService(pod('p', 'other', { deletionTimestamp: T0 }), oosNode), false, 'bound to another node');
    assert.equal(shouldForceDeleteOutOfService(pod('p', 'w'), oosNode), false, 'not terminating');
    assert.equal(shouldForceDeleteOutOfService(pod('p', 'w', { deletionTimestamp: T0 }), undefined), false, 'node unknown');
    assert.equal(shouldForceDeleteOutOfService(pod('p', 'w', gone), oosNode), false, 'only waiting for finalizers');
  });

  test('isOnlyWaitingForFinalizers: deleted with grace 0, terminal, with finalizers — all four', () => {
    assert.equal(isOnlyWaitingForFinalizers(gone), true);
    assert.equal(isOnlyWaitingForFinalizers({ ...gone, deletionTimestamp: undefined }), false, 'not deleted');
    assert.equal(isOnlyWaitingForFinalizers({ ...gone, deletionGracePeriodSeconds: 30 }), false, 'grace not 0');
    assert.equal(isOnlyWaitingForFinalizers({ ...gone, deletionGracePeriodSeconds: undefined }), false, 'grace unknown');
    assert.equal(isOnlyWaitingForFinalizers({ ...gone, phase: 'Running' }), false, 'not terminal');
    assert.equal(isOnlyWaitingForFinalizers({ ...gone, finalizers: [] }), false, 'no finalizers');
  });

  test('selectTerminatedForGC: nothing while the terminated pods are at or under the threshold', () => {
    const failed = (name: string) => ({ name, phase: 'Failed', statusReason: undefined, creationTimestamp: T0 });
    const pods = [failed('a'), failed('b'), failed('c')];
    assert.deepEqual(selectTerminatedForGC(pods, 5), []);
    assert.deepEqual(selectTerminatedForGC(pods, 3), []);
    assert.deepEqual(
      selectTerminatedForGC(pods, 2).map((p) => p.name),
      ['a'],
    );
  });

  test('isSelectedForTerminatedGC agrees with selectTerminatedForGC, and a tie counts against the pod', () => {
    const pods = [finished('c', 3), finished('a', 1), pod('r', 'n1', { creationTimestamp: 0 }), finished('e', 5, { phase: 'Failed', statusReason: 'Evicted' }), finished('b', 2)];
    for (const threshold of [-1, 0, 1, 2, 3, 4, 5]) {
      const chosen = new Set(selectTerminatedForGC(pods, threshold).map((p) => p.name));
      for (const p of pods) assert.equal(isSelectedForTerminatedGC(p, pods, threshold), chosen.has(p.name), `${p.name} at threshold ${threshold}`);
    }
    // Same name and creation time in two namespaces: either order is upstream's, so neither is sure to go.
    const tie = [finished('x', 1), finished('x', 1, { namespace: 'other' }), finished('y', 2)];
    assert.equal(isSelectedForTerminatedGC(tie[0]!, tie, 2), false);
    assert.equal(isSelectedForTerminatedGC(tie[1]!, tie, 2), false);
    assert.equal(isSelectedForTerminatedGC(tie[0]!, tie, 1), true, 'both are beyond a threshold of 1');
  });

  test('property: isSelectedForTerminatedGC picks exactly what selectTerminatedForGC picks, and never a pod some order of a tie spares', () => {
    const arbPod = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
      namespace: fc.constantFrom('default', 'other'),
      phase: fc.constantFrom<Pod['phase']>('Succeeded', 'Failed', 'Running'),
      evicted: fc.boolean(),
      created: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(arbPod, { maxLength: 14, selector: (a) => `${a.namespace}/${a.name}` }), fc.integer({ min: -1, max: 8 }), (spec, threshold) => {
        const pods = spec.map((a) => pod(a.name, 'n1', { namespace: a.namespace, phase: a.phase, creationTimestamp: a.created, ...(a.evicted ? { statusReason: 'Evicted' } : {}) }));
        // Both orders of the list: the sort's order among ties follows the input order.
        const chosen = new Set(selectTerminatedForGC([...pods], threshold));
        const chosenReversed = new Set(selectTerminatedForGC([...pods].reverse(), threshold));
        for (const p of pods) {
          const picked = isSelectedForTerminatedGC(p, pods, threshold);
          const tied = pods.some((q) => q !== p && isPodTerminatedForGC(q) && byEvictionAndCreationTimestamp(q, p) === 0);
          if (!tied) assert.equal(picked, chosen.has(p), `${p.namespace}/${p.name} at threshold ${threshold}`);
          else if (picked) assert.ok(chosen.has(p) && chosenReversed.has(p), `${p.namespace}/${p.name}: picked although one order of its tie spares it`);
        }
      }),
      { numRuns: 2000, seed: 20271209 },
    );
  });

  test('byEvictionAndCreationTimestamp: the name breaks a tie both ways', () => {
    const p = (name: string) => ({ name, phase: 'Failed', statusReason: undefined, creationTimestamp: T0 });
    assert.equal(byEvictionAndCreationTimestamp(p('b'), p('a')), 1);
    assert.equal(byEvictionAndCreationTimestamp(p('a'), p('b')), -1);
    assert.equal(byEvictionAndCreationTimestamp(p('a'), p('a')), 0);
  });

  test('orphanCondition keeps the transition time of a True condition (none when it has none), and stamps now otherwise', () => {
    const kept = orphanCondition([{ type: 'DisruptionTarget', status: 'True', lastTransitionTime: T0 - 5 }], T0);
    assert.equal(kept.lastTransitionTime, T0 - 5);
    assert.equal('lastTransitionTime' in orphanCondition([{ type: 'DisruptionTarget', status: 'True' }], T0), false);
    assert.equal(orphanCondition([{ type: 'DisruptionTarget', status: 'False', lastTransitionTime: T0 - 5 }], T0).lastTransitionTime, T0);
    assert.equal(orphanCondition([], T0).lastTransitionTime, T0);
  });

  test("the orphan message and kube-controller-manager's controller name", () => {
    assert.equal(ORPHAN_MESSAGE, 'PodGC: node no longer exists');
    assert.equal(POD_GC_CONTROLLER_NAME, 'pod-garbage-collector-controller');
  });
});
