/**
 * Fuzz campaign seed 20261127, run 809 (not shrunk: found at the end of a session). Invariant (a):
 * default/fz-0 (on a-n0, unreachable since +221 s) had its tolerations edited to 167 s at +701 s,
 * so upstream's schedule fires at +868.0 s; ours deleted it at +867.6 s. Between the edit and the
 * deadline the controllers' wall clock was stepped from -60 ms to +329 ms (within NTP's ±500 ms).
 * Upstream arms a monotonic timer once (timed_workers.go `CreateWorker`,
 * `time.AfterFunc(fireAt.Sub(now))`), which a wall-clock step does not move; ours compared the wall
 * clock with a deadline noted in wall-clock time, so a step forward between first sight and the
 * deadline made it act up to the step (≤ 1 s) sooner. A controller bug, fixed: observations are kept
 * on the monotonic clock (`Clock.monotonic`) and the deadline heap waits for both clocks
 * (docs/taint-eviction.md difference 14; unit tests in tainteviction-clock-steps.test.ts). The sequence:
 * +78s tolerations-edit fz-0 to everything
 * +87s report-not-ready a-n1
 * +174s kubelet-stop a-n0
 * +209s report-ready a-n1
 * +218s tolerations-edit fz-7 to forever
 * +256s watch-drop leases for 39s, then the watch resumes
 * +340s pod-add on b-n0 tolerating none with a ephemeral volume
 * +361s kubelet-start b-n3
 * +403s kubelet-stop a-n0
 * +484s watch-drop volumeAttachments for 34s, then the watch resumes
 * +535s clock-step to -60ms
 * +549s oos-add b-n2
 * +611s kubelet-stop b-n1
 * +623s watch-drop leases for 39s, then 410 Gone and a relist
 * +659s kubelet-start b-n2
 * +701s tolerations-edit fz-0 to 167s
 * +770s clock-step to +329ms
 * +818s write-fault deletePod 429 for 4s
 * +883s kubelet-start a-n1
 * +897s tolerations-edit fz-2 to 331s
 * +927s report-not-ready b-n0
 * +984s kubelet-start b-n3
 * +1034s pod-add on b-n1 tolerating 378s with a pvc volume
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":78,"event":{"kind":"tolerations-edit","pod":0,"tol":{"kind":"everything"}}},{"afterS":9,"event":{"kind":"report-not-ready","node":1}},{"afterS":87,"event":{"kind":"kubelet-stop","node":0}},{"afterS":35,"event":{"kind":"report-ready","node":1}},{"afterS":9,"event":{"kind":"tolerations-edit","pod":31,"tol":{"kind":"forever"}}},{"afterS":38,"event":{"kind":"watch-drop","resource":"leases","forS":39,"gone":false}},{"afterS":84,"event":{"kind":"pod-add","node":4,"tol":{"kind":"none"},"vol":"ephemeral"}},{"afterS":21,"event":{"kind":"kubelet-start","node":7}},{"afterS":42,"event":{"kind":"kubelet-stop","node":0}},{"afterS":81,"event":{"kind":"watch-drop","resource":"volumeAttachments","forS":34,"gone":false}},{"afterS":51,"event":{"kind":"clock-step","offsetMs":-60}},{"afterS":14,"event":{"kind":"oos-add","node":6}},{"afterS":62,"event":{"kind":"kubelet-stop","node":5}},{"afterS":12,"event":{"kind":"watch-drop","resource":"leases","forS":39,"gone":true}},{"afterS":36,"event":{"kind":"kubelet-start","node":6}},{"afterS":42,"event":{"kind":"tolerations-edit","pod":0,"tol":{"kind":"seconds","s":167}}},{"afterS":69,"event":{"kind":"clock-step","offsetMs":329}},{"afterS":48,"event":{"kind":"write-fault","method":"deletePod","forS":4,"code":429}},{"afterS":65,"event":{"kind":"kubelet-start","node":1}},{"afterS":14,"event":{"kind":"tolerations-edit","pod":11,"tol":{"kind":"seconds","s":331}}},{"afterS":30,"event":{"kind":"report-not-ready","node":4}},{"afterS":57,"event":{"kind":"kubelet-start","node":7}},{"afterS":50,"event":{"kind":"pod-add","node":5,"tol":{"kind":"seconds","s":378},"vol":"pvc"}}];

test('fuzz run 809: a clock step forward after first sight does not delete sooner than upstream', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});
