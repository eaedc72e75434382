/**
 * FIXED (issue 57): run #2683 of seed 20271208 (a bounded campaign on the final code), invariant (m)
 * "after an API server outage, no deletion on a node before this process's first judgement of it
 * from post-outage data", shrunk by fast-check to:
 *   +0s kubelet-stop a-n0; +0s clock-step to -1ms; +51s api-outage for 3s
 *   → (m) at +110.0s: default/fz-0 deleted for node.kubernetes.io/unreachable: the API server was
 *     down +51s–+54s, the caches relisted at +71.5s, and a-n0 was not judged again since.
 * a-n0 was tainted at +50s; fz-0 tolerates 60 s. When sight returned at +71.5s the judgement board
 * forgot a-n0's confirmation, so the deletion due at +110s should have waited for a fresh grace
 * period. But the wall clock had stepped back 1 ms, and the deadline heap (which waits on both
 * clocks) fired with the wall clock 1 ms short of the deadline: the verdict came out `delete-at`, not
 * `delete-now`, the start hold only judged a due deletion, and a `delete-at` counted as "still
 * called for" (the road of a lengthened toleration too). A controller bug by the safety rule, fixed
 * in src/tainteviction/controller.ts `#verdict`: the start hold is asked as of the deadline.
 * Fails without the fix.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"clock-step","offsetMs":-1}},{"afterS":51,"event":{"kind":"api-outage","forS":3,"seed":0}}];

test('a due deletion the wall clock puts 1 ms ahead is still held until the node is judged again after an outage (run #2683, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.equal(r.outcomes.deletions, 1, 'deleted once the node is judged again');
});
