/**
 * FIXED (issue 57): run #256 of seed 20270301, invariant (m) "after an outage, no action on a node
 * before this process's first judgement of it from post-outage data", shrunk by fast-check
 * (`fc.check` from the run's seed, a property failing on (m) only) to:
 *   +0s kubelet-stop b-n0; +18s oos-remove (no node carries the taint: a no-op);
 *   +49s api-outage for 1s (reconnect jitter seed 0); +50s pod-add on b-n0 (a DaemonSet pod)
 *   → (m) default/fz-8 marked NotReady at +53.4s: the Node cache relisted at +51.9s (Leases +52.6s),
 *     and b-n0 has no judgement from post-outage data (no Ready=False, and not 50 s without a Lease
 *     renewal since both relisted).
 * b-n0 was marked Unknown at +50.0 s, inside the first 2 s of the lost streams (a reconnect by the
 * project's definition, node-lifecycle.md difference 5, which (m) allows), on the view from before
 * the outage; after the relist the new pod was marked NotReady on that verdict. The same holds for a
 * NoExecute taint queued before an outage (the second sequence below, written by hand: two nodes of
 * a zone die together, the zone's bucket taints one at once and queues the other, a 10 s outage
 * comes, and both taints were sent 8 and 18 s after the Lease cache relisted, on the pre-outage
 * verdicts). Upstream acts on such a verdict at its first pass after its informers relist; the safety
 * rule says the controller never acts on a view older than its last outage. A controller bug, fixed
 * in src/nodelifecycle/monitor.ts (`rejudging`, node-lifecycle.md difference 28): when sight returns,
 * every node marked Unknown before is held (no NoExecute taint, no pod NotReady mark) until judged
 * again (its kubelet's report, or a grace period of silence from sight's return). All three fail
 * without the fix. Replay: `runSequence(STEPS, config)`, or `runSequence(runSteps(20270301, 256), config)`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":4}},{"afterS":18,"event":{"kind":"oos-remove","node":0}},{"afterS":31,"event":{"kind":"api-outage","forS":1,"seed":0}},{"afterS":1,"event":{"kind":"pod-add","node":4,"tol":{"kind":"everything"},"ds":true,"aff":0}}];
const QUEUED_TAINT: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"kubelet-stop","node":1}},{"afterS":52,"event":{"kind":"api-outage","forS":10,"seed":1}}];
/** Run #256 of seed 20270301 as generated (`runSteps(20270301, 256)`), kept as data: the vocabulary may change. */
const RUN_256: Step[] = [{"afterS":84,"event":{"kind":"process-pause","forS":87,"standby":true}},{"afterS":46,"event":{"kind":"report-ready","node":5}},{"afterS":53,"event":{"kind":"report-not-ready","node":7}},{"afterS":14,"event":{"kind":"pod-delete","pod":8}},{"afterS":75,"event":{"kind":"process-pause","forS":88,"standby":true}},{"afterS":52,"event":{"kind":"pressure","node":0,"condition":"MemoryPressure","on":true}},{"afterS":75,"event":{"kind":"kubelet-start","node":1}},{"afterS":24,"event":{"kind":"kubelet-stop","node":4}},{"afterS":8,"event":{"kind":"process-pause","forS":42,"standby":true}},{"afterS":14,"event":{"kind":"pod-end","pod":19,"phase":"Succeeded"}},{"afterS":72,"event":{"kind":"tolerations-edit","pod":13,"tol":{"kind":"none"}}},{"afterS":69,"event":{"kind":"pod-add","node":2,"tol":{"kind":"everything"},"vol":"pvc"}},{"afterS":38,"event":{"kind":"kubelet-stop","node":0}},{"afterS":72,"event":{"kind":"restart"}},{"afterS":62,"event":{"kind":"oos-add","node":6}},{"afterS":36,"event":{"kind":"report-ready","node":2}},{"afterS":40,"event":{"kind":"report-ready","node":6}},{"afterS":10,"event":{"kind":"report-ready","node":0}},{"afterS":8,"event":{"kind":"pod-add","node":1,"tol":{"kind":"forever"},"vol":"ephemeral","aff":2}},{"afterS":57,"event":{"kind":"api-outage","forS":54,"seed":1325951526}},{"afterS":72,"event":{"kind":"oos-remove","node":3}},{"afterS":22,"event":{"kind":"pod-end","pod":40,"phase":"Evicted"}},{"afterS":55,"event":{"kind":"oos-remove","node":5}},{"afterS":31,"event":{"kind":"api-outage","forS":23,"seed":908468562}},{"afterS":62,"event":{"kind":"watch-drop","resource":"pods","forS":57,"gone":false}},{"afterS":46,"event":{"kind":"pod-add","node":4,"tol":{"kind":"everything"},"ds":true,"vol":"unresolvable"}},{"afterS":21,"event":{"kind":"kubelet-stop","node":6}}];

test('a pod added to a node marked Unknown just before an outage is not marked NotReady on that verdict (run #256, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});

test('a NoExecute taint queued before an outage waits for the node to be judged again, and still comes', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(QUEUED_TAINT, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.equal(r.outcomes.noExecuteTaints, 2, `both nodes tainted once judged again:\n${r.text}`);
  assert.ok(r.outcomes.deletions >= 2, r.text);
});

test('run #256 of seed 20270301 as generated passes', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(RUN_256, config);
  assert.deepEqual(r.violations, [], r.text);
});
