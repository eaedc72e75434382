/**
 * Safety rules of the taint eviction shell (src/tainteviction/controller.ts) against
 * kube-controller-manager 1.37: an edited toleration never deletes sooner than upstream would, and
 * a deletion that keeps failing never holds up the others. Driven by FakeClock through the real
 * controller shell (test/support/tainteviction-world.ts). Times are epoch milliseconds.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Taint, Toleration } from '../../src/kube/objects.js';
import { metricValue, NS, started, START, taint, tol } from '../support/tainteviction-world.js';

const UNREACHABLE = 'node.kubernetes.io/unreachable';
const unreachable: Taint = { key: UNREACHABLE, effect: 'NoExecute', timeAdded: START };
const tolerateUnreachable = (seconds?: number): Toleration => ({
  key: UNREACHABLE,
  operator: 'Exists',
  effect: 'NoExecute',
  ...(seconds === undefined ? {} : { tolerationSeconds: seconds }),
});

describe('an edited toleration counts from when this process saw the edit (never sooner than upstream)', () => {
  test('tolerates unreachable forever, edited an hour after the taint to 300 s: deleted 300 s after the edit was seen, not at once', async (t) => {
    const { w, ctl } = started(t);
    w.putNode('node1', [unreachable]);
    w.putPod('pod1', 'node1', [tolerateUnreachable()]);
    await w.settle(3_600_000);
    assert.deepEqual(w.writes, [], 'tolerated forever: nothing scheduled');
    assert.equal(ctl.view().length, 0);

    w.putPod('pod1', 'node1', [tolerateUnreachable(300)]); // the edit, seen at START + 1 h
    await w.settle(299_999);
    assert.deepEqual(w.deletedPods(), [], 'not deleted before 300 s after the edit was seen (upstream restarts its timer at the update)');
    assert.equal(ctl.view()[0]?.deadlineMs, START + 3_600_000 + 300_000);
    await w.settle(1);
    assert.deepEqual(w.deletionTimes('pod1'), [3_900_000], 'deleted at the edit + 300 s');
  });

  test('a pending 3600 s deadline edited at +60 s to 300 s stays at +3600 s, as upstream keeps its first schedule', async (t) => {
    const { w, ctl } = started(t);
    w.putNode('node1', [unreachable]);
    w.putPod('pod1', 'node1', [tolerateUnreachable(3600)]);
    await w.settle(60_000);
    w.putPod('pod1', 'node1', [tolerateUnreachable(300)]);
    await w.settle();
    // Neither timeAdded + 300 s (+300 s) nor the edit + 300 s (+360 s): upstream's processPodOnNode
    // returns early for a scheduled pod, so its deletion stays at +3600 s.
    assert.equal(ctl.view()[0]?.deadlineMs, START + 3_600_000);
    await w.settle(3_400_000);
    assert.deepEqual(w.deletionTimes('pod1'), []);
    await w.settle(200_000);
    assert.deepEqual(w.deletionTimes('pod1'), [3_600_000]);
  });

  test('an update that leaves the tolerations unchanged does not move the anchor (no delay beyond the rule)', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1', [tol(1, 300)]);
    await w.settle(100_000);
    w.putPod('pod1', 'node1', [tol(1, 300)], undefined, { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] });
    await w.settle(300_000);
    assert.deepEqual(w.deletionTimes('pod1'), [300_000]);
  });

  test('a pod recreated under the same name does not inherit the old pod\'s edit time', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1)]);
    w.putPod('pod1', 'node1', [tol(1, -1)], undefined, { creationTimestamp: START - 1000 });
    await w.settle(100_000);
    w.putPod('pod1', 'node1', [tol(1, 300)]); // edit seen at +100 s
    await w.settle(1000);
    w.removePod('pod1');
    // The new pod existed before the taint (as a restored object would); its clock is timeAdded's.
    w.putPod('pod1', 'node1', [tol(1, 300)], 'pod-uid-new', { creationTimestamp: START - 1000 });
    await w.settle(400_000);
    assert.deepEqual(w.deletionTimes('pod1'), [300_000]);
  });
});

describe('no retry holds a deletion slot (failed deletions go back to a rate-limited queue)', () => {
  const FAILING = 40;

  test(`${FAILING} pods whose DELETE is denied and one healthy pod: the healthy pod is deleted on its deadline`, async (t) => {
    const { w, ctl } = started(t);
    w.putNode('node1', [taint(1)]);
    for (let i = 0; i < FAILING; i++) {
      w.denyDelete.add(`${NS}/denied-${i}`);
      w.putPod(`denied-${i}`, 'node1'); // not tolerated: due at once, more than the 32 deletion slots
    }
    w.putPod('healthy', 'node1', [tol(1, 60)]);
    await w.settle(59_999);
    assert.deepEqual(w.deletedPods(), []);
    await w.settle(1);
    assert.deepEqual(w.deletionTimes('healthy'), [60_000], 'deleted on its deadline');

    assert.equal(await metricValue(w.metrics.failingPodDeletions), FAILING, 'gauge of pods whose deletion is failing');
    const warnings = w.events.filter((e) => e.type === 'Warning');
    assert.equal(warnings.length, FAILING, 'one Warning Event per failing pod');
    assert.ok(warnings.every((e) => e.reason === 'FailedTaintManagerEviction'));
    assert.match(warnings[0]?.message ?? '', /failed 5 times/);
    assert.ok(warnings.every((e) => (w.deleteCalls.get(`${NS}/${e.ref.name}`) ?? 0) >= 5));

    // Ours keeps retrying (upstream gives up after 5 tries), with growing backoff, and the Event is
    // not repeated per retry.
    const callsAt60s = w.deleteCalls.get(`${NS}/denied-0`) ?? 0;
    await w.settle(600_000);
    const callsAt660s = w.deleteCalls.get(`${NS}/denied-0`) ?? 0;
    assert.ok(callsAt660s > callsAt60s, `still retrying: ${callsAt60s} → ${callsAt660s} DELETEs`);
    assert.ok(callsAt660s - callsAt60s <= 600_000 / 1600 + 1, 'no faster than the capped backoff (1.6 s in this world)');
    assert.equal(w.events.filter((e) => e.type === 'Warning').length, FAILING, 'the Warning is not repeated per retry');
    assert.equal(ctl.view().filter((v) => v.state === 'deleting').length, FAILING);

    // A pod that is gone is not retried, and leaves the gauge.
    w.removePod('denied-0');
    await w.settle(1000);
    const callsGone = w.deleteCalls.get(`${NS}/denied-0`) ?? 0;
    await w.settle(60_000);
    assert.equal(w.deleteCalls.get(`${NS}/denied-0`), callsGone, 'no DELETE after the pod is gone');
    assert.equal(await metricValue(w.metrics.failingPodDeletions), FAILING - 1);

    // Once the denial is lifted, the retries delete the rest and the gauge returns to 0.
    w.denyDelete.clear();
    await w.settle(60_000);
    assert.equal(w.deletedPods().length, FAILING, 'the healthy pod and the 39 others');
    assert.equal(await metricValue(w.metrics.failingPodDeletions), 0);
    assert.equal(ctl.view().length, 0);
  });

  test('a deletion waiting for sight holds no slot either: due pods all go once sight returns', async (t) => {
    const { w } = started(t, { deletionConcurrency: 2 });
    w.putNode('node1', [taint(1)]);
    w.sight = false; // a transient loss (no sightChanged: shorter than a blind interval)
    for (let i = 0; i < 5; i++) w.putPod(`p${i}`, 'node1');
    await w.settle(1000);
    assert.deepEqual(w.deletedPods(), []);
    w.sight = true;
    await w.settle(1000);
    assert.equal(w.deletedPods().length, 5);
  });
});

describe('a pod whose spec had changed before this process first saw it (generation > 1) counts from that first sight', () => {
  // Its tolerations may have been edited after the taint, at a time no object records: counting
  // from the taint's timeAdded would delete such a pod at once after a restart, sooner than upstream
  // (which counts from the edit, or from its own restart). Fuzz runs 469 and 1930 of seed 20261128.
  test('tainted an hour before the start, tolerating 300 s: generation 1 is deleted at once (restart-safe), generation 2 300 s after the first sight', async (t) => {
    const { w } = started(t, {}, (w) => {
      w.putNode('node1', [taint(1, START - 3_600_000)]);
      w.putPod('original', 'node1', [tol(1, 300)], undefined, { generation: 1 });
      w.putPod('edited', 'node1', [tol(1, 300)], undefined, { generation: 2 });
    });
    await w.settle();
    assert.deepEqual(w.deletedPods(), [`${NS}/original`], 'generation 1: created with these tolerations, due since timeAdded + 300 s');
    await w.settle(299_999);
    assert.deepEqual(w.deletedPods(), [`${NS}/original`], 'generation 2: not before its first sight + 300 s');
    await w.settle(1);
    assert.deepEqual(w.deletionTimes('edited'), [300_000]);
  });

  test('a generation-2 pod added after the start counts from its add; one with no generation (before 1.33) keeps the restart-safe anchor', async (t) => {
    const { w } = started(t);
    w.putNode('node1', [taint(1, START - 3_600_000)]);
    await w.settle(10_000);
    w.putPod('edited', 'node1', [tol(1, 300)], undefined, { generation: 2 });
    w.putPod('unknown', 'node1', [tol(1, 300)]);
    await w.settle();
    assert.deepEqual(w.deletedPods(), [`${NS}/unknown`]);
    await w.settle(299_999);
    assert.deepEqual(w.deletedPods(), [`${NS}/unknown`]);
    await w.settle(1);
    assert.deepEqual(w.deletionTimes('edited'), [310_000]);
  });
});
