/**
 * Fuzz campaign seed 20271207 run 21519 and seed 20271208 run 24834 (bounded campaigns on the final
 * code): invariant (d), "nothing lost", each shrunk by fast-check to three nodes of zone a (4 nodes)
 * going down and the fourth deleted as the last step, its kubelet registering it again 0 s later:
 *   → (d) default/fz-0 on a-n0 (kubelet stopped since +0.0s, tolerating 60 s) not deleted by +225.0s.
 * A harness error, not a controller bug. (d) judged the zones right after the last step, before the
 * re-registration (a timer of the quiet tail) ran: zone a was 3 nodes, all down, FullDisruption,
 * which upstream evicts from. Upstream, and ours, see the node back and Ready: 3 of 4 down,
 * PartialDisruption at 4 ≤ 50 nodes, rate 0, nothing tainted, nothing to delete. (d) now judges the
 * zones once every re-registration scheduled by the steps has run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const RUN_21519: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":3}},{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"kubelet-stop","node":1}},{"afterS":0,"event":{"kind":"node-delete","node":2,"returnS":0}}];
const RUN_24834: Step[] = [{"afterS":0,"event":{"kind":"report-not-ready","node":1}},{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"report-not-ready","node":2}},{"afterS":0,"event":{"kind":"node-delete","node":3,"returnS":0}}];

test('(d) judges the zones with a node that registers again in the quiet tail (runs #21519 and #24834, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  for (const steps of [RUN_21519, RUN_24834]) {
    const r = await runSequence(steps, config);
    assert.deepEqual(r.violations, [], r.text);
    assert.equal(r.outcomes.noExecuteTaints, steps === RUN_24834 ? 2 : 0, 'zone a tainted only while it was Normal');
  }
});
