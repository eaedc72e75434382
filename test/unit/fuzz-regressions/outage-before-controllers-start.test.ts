/**
 * Fuzz campaign seed 20271208, run 20502 (a bounded campaign on the final code): invariant (m), "after
 * an API server outage, no action on a node before this process's first judgement of it from
 * post-outage data", shrunk by fast-check to:
 *   +0s kubelet-stop b-n2; +51s process-pause for 16s, no standby (restarted after it exits);
 *   +51s pod-add on b-n2; +68s api-outage for 1s
 *   → (m) at +83.0s: default/fz-8 marked NotReady, the Node cache relisted at +71.5s (Leases +72.1s).
 * An invariant drawn too wide, not a controller bug. The process that marked the pod was the one
 * restarted after the pause: its caches listed an instant before the outage, relisted after it, and
 * its controllers started (it won the leader Lease) at +83.0s, after both relists. It never judged
 * anything from a view older than the outage; its first sight is after it, and the start rules
 * apply, as to upstream restarted then, whose pod worker marks the pods of a node whose Ready is
 * Unknown NotReady at once (`processPod`, `MarkPodsNotReady`), and whose first pass queues such a
 * node for its NoExecute taint (`processTaintBaseEviction`). The unshrunk run is the same case with
 * controllers started 3 s into a 38 s outage, blind until the relist. (m) now leaves out a process
 * whose controllers started once the outage had begun; (l) still checks its deletions.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS, runSteps } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":6}},{"afterS":51,"event":{"kind":"process-pause","forS":16,"standby":false}},{"afterS":0,"event":{"kind":"pod-add","node":6,"tol":{"kind":"everything"},"ds":true,"aff":0}},{"afterS":17,"event":{"kind":"api-outage","forS":1,"seed":0}}];

test('(m) does not apply to a process whose controllers started once the outage had begun (run #20502, shrunk and whole)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  const whole = await runSequence(runSteps(20271208, 20502), config);
  assert.deepEqual(whole.violations, [], whole.text);
});
