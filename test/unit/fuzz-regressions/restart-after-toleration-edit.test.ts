/**
 * Fuzz campaign seed 20261128, runs 469 and 1930: invariant (a), "no deletion after a restart
 * before max(timeAdded, tolerations set) + tolerationSeconds". Shrunk:
 *   469:  +0s report-not-ready a-n0; +2s tolerations-edit fz-0 to 2s; +2s restart
 *         → fz-0 deleted at +2 s; upstream deletes at the edit + 2 s = +4 s (restarted: +4 s too).
 *   1930: +0s kubelet-stop b-n1; +0s pod-add on a-n0 tolerating everything (DaemonSet);
 *         +52s tolerations-edit fz-5 (on b-n1) to 58s; +52s failover (the new leader starts 1 s later)
 *         → fz-5 deleted at +108 s = the unreachable taint's timeAdded (+50 s) + 58 s; upstream at
 *         the edit + 58 s = +110 s (restarted: +111 s).
 * A controller bug: the edit's time lived only in the old process (seen.ts `TolerationEdits`), so
 * the new one counted the edited toleration from the taint's timeAdded (restart-safe deadlines,
 * docs/taint-eviction.md difference 1), sooner than upstream, restarted or not. Fixed: a pod whose
 * spec had changed before this process first saw it (`metadata.generation` > 1, which the API
 * server sets from 1.33) counts from that first sight (difference 11); the harness's pods carry a
 * generation as the API server sets it. This replays both (shrunk, and run 1930 in full) and asserts
 * no violation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';

const RUN_469: Step[] = [{"afterS":0,"event":{"kind":"report-not-ready","node":0}},{"afterS":2,"event":{"kind":"tolerations-edit","pod":0,"tol":{"kind":"seconds","s":2}}},{"afterS":0,"event":{"kind":"restart"}}];
/** Run 1930 as generated (`runSteps(20261128, 1930)` before the vocabulary grew). */
const RUN_1930_FULL: Step[] = [{"afterS":8,"event":{"kind":"kubelet-start","node":4}},{"afterS":0,"event":{"kind":"tolerations-edit","pod":39,"tol":{"kind":"seconds","s":6}}},{"afterS":6,"event":{"kind":"report-not-ready","node":2}},{"afterS":64,"event":{"kind":"kubelet-start","node":0}},{"afterS":73,"event":{"kind":"report-ready","node":7}},{"afterS":90,"event":{"kind":"kubelet-start","node":7}},{"afterS":82,"event":{"kind":"report-ready","node":6}},{"afterS":89,"event":{"kind":"oos-remove","node":5}},{"afterS":71,"event":{"kind":"report-not-ready","node":5}},{"afterS":16,"event":{"kind":"kubelet-stop","node":5}},{"afterS":25,"event":{"kind":"watch-drop","resource":"pods","forS":57,"gone":true}},{"afterS":89,"event":{"kind":"pod-add","node":2,"tol":{"kind":"seconds","s":304},"vol":"ephemeral"}},{"afterS":36,"event":{"kind":"watch-drop","resource":"pods","forS":34,"gone":false}},{"afterS":6,"event":{"kind":"tolerations-edit","pod":0,"tol":{"kind":"everything"}}},{"afterS":6,"event":{"kind":"pod-add","node":6,"tol":{"kind":"everything"},"vol":"pvc"}},{"afterS":2,"event":{"kind":"kubelet-stop","node":2}},{"afterS":86,"event":{"kind":"pod-add","node":1,"tol":{"kind":"none"},"vol":"unresolvable"}},{"afterS":85,"event":{"kind":"lease-pause","node":4,"forS":119}},{"afterS":88,"event":{"kind":"pod-add","node":5,"tol":{"kind":"everything"},"ds":true}},{"afterS":86,"event":{"kind":"tolerations-edit","pod":23,"tol":{"kind":"seconds","s":392}}},{"afterS":27,"event":{"kind":"lease-pause","node":7,"forS":78}},{"afterS":6,"event":{"kind":"failover","gapS":5}},{"afterS":86,"event":{"kind":"report-not-ready","node":3}}];
const RUN_1930: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":5}},{"afterS":0,"event":{"kind":"pod-add","node":0,"tol":{"kind":"everything"},"ds":true}},{"afterS":52,"event":{"kind":"tolerations-edit","pod":23,"tol":{"kind":"seconds","s":58}}},{"afterS":0,"event":{"kind":"failover","gapS":1}}];

test('fuzz run 469 (shrunk): a toleration edited just before a restart counts from the restart, not from the taint', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(RUN_469, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.ok(r.outcomes.deletions >= 1, 'the pod is still deleted, later');
});

test('fuzz run 1930 (shrunk): a toleration edited just before a failover counts from the new leader\'s first sight', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(RUN_1930, config);
  assert.deepEqual(r.violations, [], r.text);
});

test('fuzz run 1930 (the whole generated sequence)', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(RUN_1930_FULL, config);
  assert.deepEqual(r.violations, [], r.text);
});
