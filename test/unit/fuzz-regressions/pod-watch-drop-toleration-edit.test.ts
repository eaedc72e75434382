/**
 * Fuzz campaign seed 20261201, run 16855: invariant (a), "no taint-eviction deletion before
 * upstream's schedule". Shrunk by the campaign's shrinker (`shrinkRun`; the pod-add on a-n0 only
 * makes index 33 pick fz-6):
 *   +0s pod-add on a-n0 (DaemonSet, tolerating everything); +0s kubelet-stop b-n2
 *   +10s watch-drop pods for 41s, then the watch resumes (no 410)
 *   +10s tolerations-edit fz-6 (on b-n2, 60 s) to 61 s
 *   → default/fz-6 deleted at +110 s (unreachable:NoExecute on b-n2 at +50 s); the reference said +111 s.
 * A harness reference error, not a controller bug. The reference fed upstream every change when the
 * API made it, so it saw the edit at +10 s and scheduled the taint's deletion at +50 + 61 = +111 s.
 * Ours' pod watch was down from +10 s to +51 s; so would kube-controller-manager's be on the same
 * observations. Its pod cache still holds 60 s when the taint comes at +50 s (`handleNodeUpdate` takes
 * the pods from its indexer), so `processPodOnNode` schedules +110 s; the edit arrives at +51 s, and
 * `processPodOnNode` (taint_eviction.go: `startTime = scheduledEviction.CreatedAt; if
 * startTime.Add(minTolerationTime).Before(triggerTime) { return }`) keeps that schedule, since
 * +50 + 61 < +51 + 61. Upstream deletes at +110 s too. The original run is the same case (pods watch
 * down from +418 s to +459 s, edit to 286 s at +421 s, taint at +427 s: +487 s against +713 s).
 * Fix: the harness also runs upstream behind informers whose nodes and pods streams drop when ours do
 * (test/fuzz/reference.ts `DroppedWatchUpstream`), and (a) allows the earlier of the two schedules,
 * reporting a deletion that only the dropped-watch one allows (`byDroppedWatch`). These tests check
 * the run passes for that reason and no other, and that a drop that did not hide the edit excuses nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Node, Pod } from '../../../src/kube/objects.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence, tolerationsOf } from '../../fuzz/harness.js';
import { DroppedWatchUpstream, UpstreamTaintEviction } from '../../fuzz/reference.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"pod-add","node":0,"tol":{"kind":"everything"},"ds":true,"aff":0}},{"afterS":0,"event":{"kind":"kubelet-stop","node":6}},{"afterS":10,"event":{"kind":"watch-drop","resource":"pods","forS":41,"gone":false}},{"afterS":0,"event":{"kind":"tolerations-edit","pod":33,"tol":{"kind":"seconds","s":61}}}];

test('fuzz run 16855 of seed 20261201: a deletion scheduled from the tolerations a dropped pod watch still held passes, and only because of that', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.deepEqual(r.byDroppedWatch, ['default/fz-6 deleted at +110.0s: upstream with the same watch drops fires at +110.0s (seeing every change at once: +111.0s)'], r.text);
});

test('the same edit with the pod watch back before the taint: the edit counts, and nothing is excused by the drop', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const steps = STEPS.map((s) => (s.event.kind === 'watch-drop' ? { ...s, event: { ...s.event, forS: 20 } } : s));
  const r = await runSequence(steps, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.deepEqual(r.byDroppedWatch, [], r.text);
});

const T = 1_800_000_000_000;
const node = (taints: Node['taints']): Node => ({ name: 'b-n2', labels: {}, taints, conditions: [], resourceVersion: '1' }) as unknown as Node;
const pod = (s: number): Pod => ({ namespace: 'default', name: 'fz-6', uid: 'u6', nodeName: 'b-n2', tolerations: tolerationsOf({ kind: 'seconds', s }) }) as unknown as Pod;
const TAINT = [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' as const, timeAdded: T + 50_000 }];

/** Plays run 16855's API changes into both references; `dropS`: how long the pod watch is down from +10 s. @returns the fire times (s after T). */
function play(dropS: number, gone: boolean): { atOnce: number | undefined; seen: number | undefined } {
  const atOnce = new UpstreamTaintEviction();
  const seen = new DroppedWatchUpstream([node([])], [pod(60)]);
  const events: [number, () => void][] = [
    [10_000, () => seen.drop('pods')],
    [10_000, () => {
      atOnce.podUpdated(pod(60), pod(61), node([]), T + 10_000);
      seen.pod('default/fz-6', pod(61), T + 10_000);
    }],
    [10_000 + dropS * 1000, () => seen.restore('pods', gone, T + 10_000 + dropS * 1000)],
    [50_000, () => {
      atOnce.nodeUpdated(node([]), node(TAINT), [pod(61)], T + 50_000);
      seen.node('b-n2', node(TAINT), T + 50_000);
    }],
  ];
  for (const [, fn] of events.sort((a, b) => a[0] - b[0])) fn();
  const s = (x: { fireAt: number } | undefined): number | undefined => (x ? (x.fireAt - T) / 1000 : undefined);
  return { atOnce: s(atOnce.scheduled('u6')), seen: s(seen.scheduled('u6')) };
}

test('DroppedWatchUpstream: the edit hidden by the drop keeps the schedule made from the old tolerations; a drop over before the taint hides nothing', () => {
  assert.deepEqual(play(41, false), { atOnce: 111, seen: 110 });
  assert.deepEqual(play(41, true), { atOnce: 111, seen: 110 });
  // The stream back at +30 s: both fire at +111 s, so (a) still flags a deletion at +110 s.
  assert.deepEqual(play(20, false), { atOnce: 111, seen: 111 });
  assert.deepEqual(play(20, true), { atOnce: 111, seen: 111 });
});

test('DroppedWatchUpstream: changes made during a drop reach upstream at the return, the last state deciding, whether resumed or relisted', () => {
  for (const gone of [false, true]) {
    const seen = new DroppedWatchUpstream([node(TAINT)], [pod(60)]);
    seen.pod('default/fz-6', pod(60), T);
    assert.equal(seen.scheduled('u6'), undefined, 'no taint change, no tolerations change: nothing scheduled');
    seen.drop('pods');
    seen.pod('default/fz-6', pod(5), T + 1000);
    seen.pod('default/fz-6', pod(30), T + 2000);
    assert.equal(seen.scheduled('u6'), undefined, 'nothing reaches upstream while the stream is down');
    seen.restore('pods', gone, T + 3000);
    // Resumed: both reach processPodOnNode at +3 s in order, the second handled after the first (upstream's
    // time.Now() is later at each handling), so the first's schedule (+3 + 5 s) is kept. Relisted: only
    // the last state arrives: +3 + 30 s.
    assert.equal(seen.scheduled('u6')?.fireAt, gone ? T + 33_000 : T + 8_000, `gone=${gone}`);
  }
});
