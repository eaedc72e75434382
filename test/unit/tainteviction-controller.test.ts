/**
 * The taint eviction controller shell (src/tainteviction/controller.ts), driven by FakeClock with
 * in-memory caches and a recording writes double. Covers upstream's taint_eviction_test.go cases
 * (reference §10.2) end to end through the shell, plus what the shell adds: nodes-before-pods
 * ordering, cancellation events, rescheduling, retry until done, restart-safe anchoring, the
 * sight gate, the sight hold after a blind interval (issue 14 item 4), metrics, view() and the
 * one-timer scale property.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { podKey, type Pod } from '../../src/kube/objects.js';
import { silentLogger } from '../../src/log/logger.js';
import { FencedError } from '../../src/kube/throttle.js';
import { TaintEvictionController, type TaintEvictionOptions } from '../../src/tainteviction/controller.js';
import { metricValue, NS, podOnTaintedNode, serverError, started, START, taint, tol, untimedTaint, World } from '../support/tainteviction-world.js';

// -------------------------------------------------------------------------------------------------

describe('ordering: node updates before pod updates (§5.1)', () => {
  test('a pod update queued before a node update is judged on the node update\'s taints', async (t) => {
    const { w, ctl } = podOnTaintedNode(t, [tol(1, 100)]);
    await w.settle();
    assert.equal(ctl.view().length, 1);
    // In one instant the pod loses its toleration (queued first) and the node loses its taint.
    w.putPod('pod1', 'node1', []);
    w.putNode('node1', []);
    await w.settle(200_000);
    // Pod first would have read the stale taint, found it untolerated and deleted at once.
    assert.deepEqual(w.writes, [], 'not deleted');
    assert.deepEqual(w.messages(), ['Cancelling deletion of Pod default/pod1']);
  });
});

describe('cancellation', () => {
  async function scheduled(t: TestContext): Promise<{ w: World; ctl: TaintEvictionController }> {
    const { w, ctl } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putNode('node2', []);
    w.putPod('pod1', 'node1', [tol(1, 30)]);
    await w.settle(1000);
    assert.equal(ctl.view()[0]?.deadlineMs, START + 30_000);
    return { w, ctl };
  }

  test('taint removed → cancelled with the event', async (t) => {
    const { w } = await scheduled(t);
    w.putNode('node1', []);
    await w.settle(60_000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(w.messages(), ['Cancelling deletion of Pod default/pod1']);
    assert.equal(w.events[0]?.reason, 'TaintManagerEviction');
    assert.equal(w.events[0]?.type, 'Normal');
    assert.deepEqual(w.events[0]?.ref, { kind: 'Pod', namespace: NS, name: 'pod1', uid: w.pods.get('default/pod1')?.uid });
  });

  test('toleration became infinite → cancelled with the event', async (t) => {
    const { w } = await scheduled(t);
    w.putPod('pod1', 'node1', [tol(1, -1)]);
    await w.settle(60_000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(w.messages(), ['Cancelling deletion of Pod default/pod1']);
  });

  test('pod deleted → cancelled with the event', async (t) => {
    const { w, ctl } = await scheduled(t);
    w.removePod('pod1');
    await w.settle(60_000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(w.messages(), ['Cancelling deletion of Pod default/pod1']);
    assert.equal(ctl.view().length, 0);
  });

  test('pod moved to an untainted node → cancelled with the event', async (t) => {
    const { w } = await scheduled(t);
    w.putPod('pod1', 'node2', [tol(1, 30)]);
    await w.settle(60_000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(w.messages(), ['Cancelling deletion of Pod default/pod1']);
  });

  test('recreated under the same name on another tainted node → old schedule dropped, new one of its own', async (t) => {
    const { w } = await scheduled(t);
    w.putNode('node2', [taint(1, START + 500)]);
    await w.settle();
    w.removePod('pod1');
    const fresh = w.putPod('pod1', 'node2', [tol(1, 30)]);
    await w.settle(60_000);
    assert.deepEqual(w.writes.filter((x) => x.kind === 'delete').map((x) => [x.uid, x.atMs - START]), [[fresh.uid, 30_500]]);
    assert.deepEqual(w.messages(), ['Cancelling deletion of Pod default/pod1', 'Marking for deletion Pod default/pod1']);
  });

  test('an immediate deletion that is cancelled emits no cancel event (upstream CancelWork returns false)', async (t) => {
    const { w, ctl } = podOnTaintedNode(t, [], (x) => (x.sight = false)); // keeps the immediate deletion waiting
    await w.settle(1000);
    assert.equal(ctl.view()[0]?.state, 'deleting');
    w.putNode('node1', []);
    await w.settle(1000);
    w.sight = true;
    await w.settle(5000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(w.messages(), []);
  });
});

describe('rescheduling', () => {
  test('lengthening a toleration does not postpone (upstream "lengthening toleration shouldn\'t work")', async (t) => {
    const { w } = podOnTaintedNode(t, [tol(1, 1)]);
    await w.settle(500);
    w.putPod('pod1', 'node1', [tol(1, 100)]);
    await w.settle(200_000);
    assert.deepEqual(w.deletionTimes('pod1'), [1000]);
  });

  test('a shorter toleration does not move a pending deadline (upstream keeps its first schedule)', async (t) => {
    const { w, ctl } = podOnTaintedNode(t, [tol(1, 100)]);
    await w.settle(2000);
    w.putPod('pod1', 'node1', [tol(1, 10)]);
    await w.settle();
    assert.equal(ctl.view()[0]?.deadlineMs, START + 100_000);
    await w.settle(200_000);
    assert.deepEqual(w.deletionTimes('pod1'), [100_000]);
    assert.deepEqual(w.messages(), ['Marking for deletion Pod default/pod1']);
  });

  test('a second taint with a shorter toleration, added later, does not move the pending deadline (upstream: 300 s)', async (t) => {
    const { w } = started(t);
    w.putPod('pod1', 'node1', [tol(1, 300), tol(2, 60)]);
    w.putNode('node1', [taint(1, START)]);
    await w.settle(200_000);
    w.putNode('node1', [taint(1, START), taint(2, START + 200_000)]);
    await w.settle(200_000);
    assert.deepEqual(w.deletionTimes('pod1'), [300_000]);
  });

  test('a second taint with a shorter toleration counts from its own timeAdded when nothing is pending yet', async (t) => {
    const { w } = started(t);
    w.putPod('pod1', 'node1', [tol(1, 300), tol(2, 60)]);
    w.putNode('node1', [taint(1, START - 200_000), taint(2, START)]);
    await w.settle(200_000);
    // A controller that first sees both taints at once computes min(-200+300, 0+60) = 60 s, where
    // upstream (which restarts clocks) would say 0+60 = 60 s too.
    assert.deepEqual(w.deletionTimes('pod1'), [60_000]);
  });
});

describe('retry until done (deliberate fix of upstream #140639)', () => {
  test('server errors are retried with growing, capped backoff until the deletion succeeds; one event, one count', async (t) => {
    const { w } = podOnTaintedNode(t, [], (x) => (x.failures = Array.from({ length: 8 }, serverError)));
    await w.settle(60_000);
    assert.equal(w.attempts.length, 9, '8 failures, then success: more than upstream\'s 5 tries');
    const gaps = w.attempts.slice(1).map((t, i) => t - (w.attempts[i] as number));
    for (let i = 1; i < gaps.length; i++) assert.ok((gaps[i] as number) >= (gaps[i - 1] as number) * 0.9, `gaps grow: ${gaps.join(', ')}`);
    assert.ok((gaps[0] as number) >= 100 && (gaps[0] as number) <= 110, `first retry after ~100 ms, got ${gaps[0]}`);
    assert.ok(gaps.every((g) => g <= 1600 * 1.1 + 1), `capped at 1.6 s (+10 % jitter): ${gaps.join(', ')}`);
    assert.deepEqual(w.deletedPods(), ['default/pod1']);
    assert.deepEqual(
      w.events.map((e) => [e.type, e.message]),
      [
        ['Normal', 'Marking for deletion Pod default/pod1'],
        ['Warning', 'Deleting Pod default/pod1 (NoExecute taint eviction) has failed 5 times, last: HTTP 500 InternalError; retrying with backoff until the pod is gone'],
      ],
      'announced once, before the retries; one Warning after the 5th failure, not repeated on the 6th to 8th',
    );
    assert.equal(await metricValue(w.metrics.failingPodDeletions), 0, 'no longer failing once deleted');
    assert.equal(await metricValue(w.metrics.podDeletionsTotal), 1);
    assert.equal(await metricValue(w.metrics.pendingPodDeletions), 0);
  });

  test('retries stop as soon as the pod is gone; nothing is counted', async (t) => {
    const { w, ctl } = podOnTaintedNode(t, [], (x) => (x.failures = Array.from({ length: 1000 }, serverError)));
    await w.settle(3000);
    const before = w.attempts.length;
    assert.ok(before >= 3);
    w.removePod('pod1');
    await w.settle(60_000);
    assert.equal(w.attempts.length, before, 'no attempt after the pod disappeared');
    assert.deepEqual(w.deletedPods(), []);
    assert.equal(await metricValue(w.metrics.podDeletionsTotal), 0);
    assert.equal(ctl.view().length, 0);
  });

  test('a 404 from the API ends the retries (isDone = not found)', async (t) => {
    const { w } = podOnTaintedNode(t, [], (x) => (x.failures = [new ApiException(404, 'NotFound', '{"reason":"NotFound"}', {})]));
    await w.settle(60_000);
    assert.equal(w.attempts.length, 1);
    assert.deepEqual(w.deletedPods(), []);
  });

  test('a fenced write (not the leader) is not retried', async (t) => {
    const { w } = podOnTaintedNode(t, [], (x) => (x.failures = [new FencedError()]));
    await w.settle(60_000);
    assert.equal(w.attempts.length, 1);
  });
});

describe('restart-safe deadlines (deliberate fix of upstream #108268)', () => {
  test('a restart midway through a 20 s toleration neither postpones nor hastens: deleted at timeAdded + 20 s', async () => {
    const w = new World();
    w.putNode('node1', [taint(1, START)]);
    w.putPod('pod1', 'node1', [tol(1, 20)]);
    const first = w.controller();
    first.start();
    await w.settle(10_000);
    await first.stop();
    await w.settle(3000); // down for 3 s; upstream's new clock would start at +13 s and fire at +33 s
    const second = w.controller();
    second.start();
    await w.settle();
    assert.equal(second.view()[0]?.deadlineMs, START + 20_000);
    await w.settle(60_000);
    assert.deepEqual(w.deletionTimes('pod1'), [20_000]);
    await second.stop();
  });

  test('a restart after the deadline passed deletes at once', async (t) => {
    const w = new World();
    w.putNode('node1', [taint(1, START)]);
    w.putPod('pod1', 'node1', [tol(1, 20)]);
    await w.settle(25_000);
    const ctl = w.controller();
    ctl.start();
    t.after(() => ctl.stop());
    await w.settle();
    assert.deepEqual(w.deletionTimes('pod1'), [25_000]);
  });

  test('a taint without timeAdded counts from first sight, and keeps that anchor across its node\'s updates', async (t) => {
    const { w } = started(t);
    w.putPod('pod1', 'node1', [tol(1, 20), tol(2, -1)]);
    w.putNode('node1', []);
    await w.settle(2000);
    w.putNode('node1', [untimedTaint(1)]);
    await w.settle(5000);
    w.putNode('node1', [untimedTaint(1), taint(2)]); // an unrelated update of the NoExecute taints
    await w.settle(60_000);
    assert.deepEqual(w.deletionTimes('pod1'), [22_000]);
  });
});

describe('no eviction decided on time the controller could not see (issue 14 item 4, the sight hold, docs/taint-eviction.md difference 10)', () => {
  // The scenario of the issue: node1 was tainted at START, its pods tolerate 15 s, the API server
  // is gone from +5 s to +25 s, so every deadline (+15 s) passes while the controller is blind.
  const GRACE_MS = 10_000;
  const sightOptions: TaintEvictionOptions = { nodeMonitorGracePeriodMs: GRACE_MS, sightPollMs: 500 };

  /** node1 tainted at START, `pods` on it tolerating that for 15 s. */
  function scenario(t: TestContext, pods = ['pod1']): { w: World; ctl: TaintEvictionController } {
    const s = started(t, sightOptions);
    s.w.putNode('node1', [taint(1)]);
    for (const name of pods) s.w.putPod(name, 'node1', [tol(1, 15)]);
    return s;
  }

  async function outage(w: World, fromMs: number, toMs: number): Promise<void> {
    await w.settle(START + fromMs - w.clock.now());
    w.setSight(false);
    await w.settle(toMs - fromMs);
    w.setSight(true);
  }

  test('a deadline that passes while blind deletes nothing when sight returns; held a grace period, then deleted if still tainted', async (t) => {
    const { w, ctl } = scenario(t, ['pod1', 'pod2']);
    await outage(w, 5000, 25_000);
    await w.settle(9_999); // sight polls of the due deletions, the pump: nothing may be written
    assert.deepEqual(w.writes, [], 'nothing written in the grace period after sight returned');
    assert.deepEqual(
      ctl.view().map((v) => [v.pod, v.state, v.deadlineMs - START]),
      [
        [`${NS}/pod1`, 'scheduled', 35_000],
        [`${NS}/pod2`, 'scheduled', 35_000],
      ],
    );
    assert.match(ctl.view()[0]?.reason ?? '', /blind interval/);
    assert.deepEqual(w.messages(), [], 'no "Marking for deletion" while held');
    await w.settle(1);
    // The node lifecycle controller had a full grace period to re-judge the node; the taint is still
    // there, so the node stays dead: now they go.
    assert.deepEqual(w.deletionTimes('pod1'), [35_000]);
    assert.deepEqual(w.deletionTimes('pod2'), [35_000]);
    assert.equal(await metricValue(w.metrics.podDeletionsTotal), 2);
  });

  test('the taint is removed during the hold (the node heartbeats again): never deleted, with the cancel event', async (t) => {
    const { w, ctl } = scenario(t);
    await outage(w, 5000, 25_000);
    await w.settle(3000);
    w.putNode('node1', []); // the node lifecycle controller saw the heartbeat and removed the taint
    await w.settle(120_000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(ctl.view(), []);
    assert.deepEqual(w.messages(), [`Cancelling deletion of Pod ${NS}/pod1`]);
  });

  test('a deadline after sight returned is unchanged (deleted on time, no hold)', async (t) => {
    const { w } = scenario(t);
    await outage(w, 3000, 8000);
    await w.settle(60_000);
    assert.deepEqual(w.deletionTimes('pod1'), [15_000]);
  });

  test('a reconnect shorter than 2 s is not a blind interval: a deadline inside it waits only for the stream', async (t) => {
    const { w } = scenario(t);
    await outage(w, 14_500, 16_000);
    await w.settle(60_000);
    // The sight poll (every 500 ms from +15 s) that ran at +16 s saw the stream still down.
    assert.deepEqual(w.deletionTimes('pod1'), [16_500]);
  });

  test('a taint first seen after sight returned whose toleration ran out while blind is held too', async (t) => {
    const { w } = started(t, sightOptions);
    w.putNode('node1', []);
    w.putPod('tolerates', 'node1', [tol(1, 5)]);
    w.putPod('untolerated', 'node1');
    await w.settle(5000);
    w.setSight(false);
    await w.settle(20_000);
    // The relist after the outage delivers the taint (added at +10 s) before the watch reconnects.
    w.putNode('node1', [taint(1, START + 10_000)]);
    await w.settle(100);
    w.setSight(true);
    await w.settle(9_000);
    assert.deepEqual(w.writes, []);
    await w.settle(60_000);
    assert.deepEqual(w.deletionTimes('tolerates'), [35_100]);
    assert.deepEqual(w.deletionTimes('untolerated'), [35_100]);
  });

  test('a second outage during the hold extends it to a grace period after the second one', async (t) => {
    const { w } = scenario(t);
    await outage(w, 5000, 25_000);
    await outage(w, 30_000, 33_000);
    await w.settle(9_999);
    assert.deepEqual(w.writes, []);
    await w.settle(60_000);
    assert.deepEqual(w.deletionTimes('pod1'), [43_000]);
  });

  test('a deletion already failing before the outage is held after it too', async (t) => {
    const { w } = started(t, sightOptions, (world) => {
      world.failures = Array.from({ length: 3 }, serverError);
    });
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1'); // untolerated: due at once; the first three writes fail
    await outage(w, 500, 20_000);
    await w.settle(9_999);
    assert.deepEqual(w.writes, []);
    await w.settle(60_000);
    assert.deepEqual(w.deletionTimes('pod1'), [30_000]);
  });
});

describe('sight, metrics, view and scale', () => {
  test('nothing is written while the caches cannot be trusted; the deletion happens once sight returns', async (t) => {
    const { w, ctl } = started(t, { sightPollMs: 500 });
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1');
    w.sight = false;
    await w.settle(30_000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(ctl.view().map((v) => v.state), ['deleting']);
    w.sight = true;
    await w.settle(500); // the next sight poll
    assert.deepEqual(w.deletionTimes('pod1'), [30_500]);
    // The latency is measured from when the deletion became due, in seconds.
    assert.equal(await metricValue(w.metrics.podDeletionDuration, '_sum'), 30.5);
  });

  test('deletion duration is observed in seconds from the deadline; pending gauge follows the heap', async (t) => {
    const { w } = podOnTaintedNode(t, [tol(1, 5)]);
    w.putPod('pod2', 'node1', [tol(1, 7)]);
    await w.settle();
    assert.equal(await metricValue(w.metrics.pendingPodDeletions), 2);
    await w.settle(5000);
    assert.equal(await metricValue(w.metrics.pendingPodDeletions), 1);
    await w.settle(5000);
    assert.equal(await metricValue(w.metrics.pendingPodDeletions), 0);
    assert.equal(await metricValue(w.metrics.podDeletionsTotal), 2);
    assert.equal(await metricValue(w.metrics.podDeletionDuration, '_count'), 2);
    assert.equal(await metricValue(w.metrics.podDeletionDuration, '_sum'), 0, 'deleted exactly on time: 0 s, not nanoseconds × 1e9');
  });

  test('view() lists pending deletions sorted by deadline with pod, uid, node, taints and reason', async (t) => {
    const { w, ctl } = started(t);
    w.putNode('node1', [taint(1)]);
    const late = w.putPod('late', 'node1', [tol(1, 50)]);
    const early = w.putPod('early', 'node1', [tol(1, 10)]);
    await w.settle();
    const v = ctl.view();
    assert.deepEqual(
      v.map((e) => [e.pod, e.uid, e.node, e.deadlineMs - START, e.taints, e.state]),
      [
        ['default/early', early.uid, 'node1', 10_000, ['testTaint1=test1:NoExecute'], 'scheduled'],
        ['default/late', late.uid, 'node1', 50_000, ['testTaint1=test1:NoExecute'], 'scheduled'],
      ],
    );
    assert.match(v[0]?.reason ?? '', /testTaint1=test1:NoExecute/);
  });

  test('a pod already terminating with DisruptionTarget is not deleted again (no duplicate event or count)', async (t) => {
    const { w } = podOnTaintedNode(t);
    await w.settle();
    w.putNode('node1', [taint(1), taint(2)]);
    await w.settle(1000);
    assert.deepEqual(w.deletedPods(), ['default/pod1']);
    assert.equal(w.messages().length, 1);
    assert.equal(await metricValue(w.metrics.podDeletionsTotal), 1);
  });

  test('a deletion due after its node was deleted is dropped', async (t) => {
    const { w } = podOnTaintedNode(t, [tol(1, 10)]);
    await w.settle();
    w.deleteNode('node1');
    await w.settle(20_000);
    assert.deepEqual(w.writes, []);
  });

  test('100,000 pending deletions use one timer; the first due batch is delivered exactly on time', async () => {
    const w = new World();
    const perNode = 100;
    const nodes = 1000;
    for (let n = 0; n < nodes; n++) {
      const nodeName = `n${n}`;
      w.nodes.set(nodeName, {
        name: nodeName,
        uid: nodeName,
        resourceVersion: '1',
        creationTimestamp: START,
        labels: {},
        unschedulable: false,
        taints: [taint(1, START)],
        conditions: [],
      });
    }
    const byNode = new Map<string, Pod[]>();
    for (let n = 0; n < nodes; n++) {
      const list: Pod[] = [];
      for (let i = 0; i < perNode; i++) {
        const p: Pod = {
          namespace: NS,
          name: `p-${n}-${i}`,
          uid: `u-${n}-${i}`,
          resourceVersion: '1',
          nodeName: `n${n}`,
          phase: 'Running',
          creationTimestamp: START - 1000,
          conditions: [],
          tolerations: [tol(1, 60 + (i % 30))],
          ownerReferences: [],
          pvcNames: [],
          finalizers: [],
        };
        list.push(p);
        w.pods.set(podKey(p), p);
      }
      byNode.set(`n${n}`, list);
    }
    let deletes = 0;
    const ctl = new TaintEvictionController({
      clock: w.clock,
      log: silentLogger,
      caches: {
        nodes: { get: (k) => w.nodes.get(k), list: () => [...w.nodes.values()] },
        pods: { get: (k) => w.pods.get(k), list: () => [...w.pods.values()], podsOnNode: (n) => byNode.get(n) ?? [] },
      },
      writes: { addDisruptionCondition: async () => 'written', deletePod: async () => (deletes++, 'deleted') },
      events: { record: () => undefined },
      metrics: w.metrics,
      canSeeCluster: () => true,
      options: { deletionConcurrency: 64 },
    });
    ctl.start();
    await w.settle();
    for (let i = 0; i < 300 && ctl.pendingCount < nodes * perNode; i++) await w.settle();
    assert.equal(ctl.pendingCount, nodes * perNode);
    assert.equal(await metricValue(w.metrics.pendingPodDeletions), nodes * perNode);
    assert.equal(w.clock.pendingTimers, 1, 'one timer for all pending deletions');
    await w.settle(59_999);
    assert.equal(deletes, 0, 'nothing before the first deadline');
    await w.settle(1);
    // Tolerations 60..89 s by i % 30: i = 0, 30, 60, 90 of each node are due at 60 s.
    assert.equal(deletes, nodes * 4);
    assert.equal(ctl.pendingCount, nodes * perNode - nodes * 4);
    assert.equal(w.clock.pendingTimers, 1, 'still one timer');
    await ctl.stop();
    assert.equal(ctl.pendingCount, 0);
  });
});

describe('PodDisruptionConditions feature gate (options.disruptionConditions)', () => {
  test('on (default): DisruptionTarget condition, then the delete', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1');
    await w.settle(1000);
    assert.deepEqual(
      w.writes.map((x) => x.kind),
      ['condition', 'delete'],
    );
  });

  test('off: one DELETE per eviction and no condition write (kube-controller-manager 1.20–1.25)', async (t) => {
    const { w } = started(t, { disruptionConditions: false });
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1');
    w.putPod('pod2', 'node1', [tol(1, 1)]);
    await w.settle(5000);
    assert.deepEqual(
      w.writes.map((x) => `${x.kind} ${x.target}`),
      ['delete default/pod1', 'delete default/pod2'],
    );
    assert.deepEqual(w.deletionTimes('pod2'), [1000]);
    assert.equal(w.events.filter((e) => e.reason === 'TaintManagerEviction').length, 2);
  });
  test('decided per eviction (a function: run decides it from the server version): off for a 1.25 server, the same writes as off, and the deletion is not sooner', async (t) => {
    let decided = false;
    const { w } = started(t, { disruptionConditions: () => decided });
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1', [tol(1, 1)]);
    await w.settle(5000);
    assert.deepEqual(w.writes.map((x) => `${x.kind} ${x.target}`), ['delete default/pod1']);
    assert.deepEqual(w.deletionTimes('pod1'), [1000]);
    decided = true;
    w.putPod('pod2', 'node1');
    await w.settle(1000);
    assert.deepEqual(w.writes.map((x) => `${x.kind} ${x.target}`), ['delete default/pod1', 'condition default/pod2', 'delete default/pod2']);
  });
});

// Issue 53, item 3: upstream's GetMatchingTolerations passes the TaintTolerationComparisonOperators
// gate (alpha, off by default in 1.37) to ToleratesTaint; off, an Lt/Gt toleration tolerates nothing.
describe('the TaintTolerationComparisonOperators gate (tolerationComparisonOperators)', () => {
  const sla = (value: string): { key: string; value: string; effect: 'NoExecute'; timeAdded: number } => ({ key: 'sla', value, effect: 'NoExecute', timeAdded: START });
  const gt = (value: string): { key: string; operator: string; value: string; effect: 'NoExecute' } => ({ key: 'sla', operator: 'Gt', value, effect: 'NoExecute' });
  const deletes = (w: World): string[] => w.writes.filter((x) => x.kind === 'delete').map((x) => x.target);

  test('off (the default): a pod that only a Gt toleration covers is deleted at once', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [sla('950')]);
    w.putPod('pod1', 'node1', [gt('750')]);
    await w.settle(1000);
    assert.deepEqual(deletes(w), ['default/pod1']);
  });

  test('off, set explicitly: the same', async (t) => {
    const { w } = started(t, { tolerationComparisonOperators: false });
    w.putNode('node1', [sla('950')]);
    w.putPod('pod1', 'node1', [{ key: 'sla', operator: 'Lt', value: '999', effect: 'NoExecute' }]);
    await w.settle(1000);
    assert.deepEqual(deletes(w), ['default/pod1']);
  });

  test('on: the Gt toleration tolerates a greater taint value forever, and nothing is deleted', async (t) => {
    const { w, ctl } = started(t, { tolerationComparisonOperators: true });
    w.putNode('node1', [sla('950')]);
    w.putPod('pod1', 'node1', [gt('750')]);
    await w.settle(600_000);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(ctl.view(), []);
  });

  test('on: a value that is not a canonical decimal integer (leading zero, +) tolerates nothing, as IsDecimalInteger', async (t) => {
    const { w } = started(t, { tolerationComparisonOperators: true });
    w.putNode('node1', [sla('0950')]);
    w.putNode('node2', [sla('950')]);
    w.putPod('pod1', 'node1', [gt('750')]);
    w.putPod('pod2', 'node2', [gt('+750')]);
    await w.settle(1000);
    assert.deepEqual(deletes(w).sort(), ['default/pod1', 'default/pod2']);
  });

  test('on: the tolerationSeconds of the matching Lt toleration schedule the deletion', async (t) => {
    const { w, ctl } = started(t, { tolerationComparisonOperators: true });
    w.putNode('node1', [sla('5')]);
    w.putPod('pod1', 'node1', [{ key: 'sla', operator: 'Lt', value: '10', effect: 'NoExecute', tolerationSeconds: 30 }]);
    await w.settle(1000);
    assert.equal(ctl.view()[0]?.deadlineMs, START + 30_000);
    assert.deepEqual(deletes(w), []);
  });
});
