/**
 * Fuzz campaign seed 20261127, run 553 (not shrunk: found at the end of the session). The harness
 * reported invariant (b), "a pod deleted on a node Ready for over a monitor period": default/fz-3
 * was deleted on a-n3 at +744 s, Ready again since +733 s. The node's unreachable taint could not
 * be removed because every swapNodeTaints write failed with a 409 from +699 s to +777 s; upstream's
 * markNodeAsReachable fails the same way and its taint manager deletes the pod too. A harness false
 * positive: (b) now counts Ready from the end of a taint-write fault or a nodes/Leases watch drop.
 * This replays the run and asserts no violation. The sequence:
 * +71s tolerations-edit fz-2 to everything
 * +139s tolerations-edit fz-4 to forever
 * +206s clock-step to -160ms
 * +293s report-not-ready b-n2
 * +362s oos-add b-n2
 * +430s tolerations-edit fz-1 to forever
 * +453s kubelet-stop b-n2
 * +502s report-ready a-n3
 * +532s pod-add on a-n1 tolerating everything
 * +590s kubelet-stop b-n1
 * +636s lease-pause a-n3 for 97s
 * +657s read-fault listPodsOnNode timeout for 53s
 * +690s write-fault deletePod timeout for 52s
 * +699s write-fault swapNodeTaints 409 for 78s
 * +762s clock-step to -244ms
 * +848s watch-drop pods for 25s, then the watch resumes
 * +889s report-not-ready a-n0
 * +940s pod-delete fz-2
 * +1020s oos-add a-n3
 * +1105s zone-change a-n2 to zone c
 * +1141s pod-add on b-n1 tolerating 197s with a ephemeral volume
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":71,"event":{"kind":"tolerations-edit","pod":2,"tol":{"kind":"everything"}}},{"afterS":68,"event":{"kind":"tolerations-edit","pod":4,"tol":{"kind":"forever"}}},{"afterS":67,"event":{"kind":"clock-step","offsetMs":-160}},{"afterS":87,"event":{"kind":"report-not-ready","node":6}},{"afterS":69,"event":{"kind":"oos-add","node":6}},{"afterS":68,"event":{"kind":"tolerations-edit","pod":33,"tol":{"kind":"forever"}}},{"afterS":23,"event":{"kind":"kubelet-stop","node":6}},{"afterS":49,"event":{"kind":"report-ready","node":3}},{"afterS":30,"event":{"kind":"pod-add","node":1,"tol":{"kind":"everything"}}},{"afterS":58,"event":{"kind":"kubelet-stop","node":5}},{"afterS":46,"event":{"kind":"lease-pause","node":3,"forS":97}},{"afterS":21,"event":{"kind":"read-fault","method":"listPodsOnNode","forS":53,"code":"timeout"}},{"afterS":33,"event":{"kind":"write-fault","method":"deletePod","forS":52,"code":"timeout"}},{"afterS":9,"event":{"kind":"write-fault","method":"swapNodeTaints","forS":78,"code":409}},{"afterS":63,"event":{"kind":"clock-step","offsetMs":-244}},{"afterS":86,"event":{"kind":"watch-drop","resource":"pods","forS":25,"gone":false}},{"afterS":41,"event":{"kind":"report-not-ready","node":0}},{"afterS":51,"event":{"kind":"pod-delete","pod":2}},{"afterS":80,"event":{"kind":"oos-add","node":3}},{"afterS":85,"event":{"kind":"zone-change","node":2,"zone":2}},{"afterS":36,"event":{"kind":"pod-add","node":5,"tol":{"kind":"seconds","s":197},"vol":"ephemeral"}}];

test('fuzz run 553: a Ready node whose taint removal is refused (409) for a while is no violation', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});
