/**
 * FIXED (issue 53 item 4, found by issue 57's bounded campaign): run #517 of seed 20271208, invariant
 * (j) "terminated-pod GC deletes only the oldest terminated pods beyond the threshold, in upstream's
 * order", shrunk by fast-check (`fc.check` from the run's seed) to:
 *   +0s kubelet-stop a-n0, a-n1; +0s pod-end #15 and #0 Succeeded; +0s write-fault all 500 for 81s;
 *   +15s node-delete b-n1; +20s pod-end #0 Succeeded
 *   → (j) at +101.4s: default/fz-2 force-deleted, not among the 0 oldest of the 2 terminated pods
 *     beyond the threshold (2): upstream deletes none.
 * The gc pass at +20s counted 3 terminated pods (threshold 2) and queued the oldest. Every write
 * failed for 81 s, so its deletion sat in the retry queue; by +101.4s another of the three was gone
 * (node b-n1 was deleted at +15s), and the retry went out with only 2 left. The send-time recheck asked only
 * "still terminated". Upstream's `gcTerminated` counts on every pass and never retries a failed
 * delete, so it deletes none. A controller bug by the safety rule, fixed in src/podgc/controller.ts
 * (`#stillBeyondThreshold`, docs/out-of-service.md): a queued or retried deletion is decided again
 * from the current cache right before the DELETE is sent. Fails without the fix.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"kubelet-stop","node":1}},{"afterS":0,"event":{"kind":"pod-end","pod":15,"phase":"Succeeded"}},{"afterS":0,"event":{"kind":"pod-end","pod":0,"phase":"Succeeded"}},{"afterS":0,"event":{"kind":"write-fault","method":"all","forS":81}},{"afterS":15,"event":{"kind":"node-delete","node":5}},{"afterS":5,"event":{"kind":"pod-end","pod":0,"phase":"Succeeded"}}];

test('a terminated-pod deletion retried after write faults is not sent once the count is at the threshold (run #517, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});
