/**
 * Fuzz campaign seed 20271208, run 3557 (issue 57's bounded campaign on the final code): invariant
 * (h), "no force delete of a pod whose node is malformed", shrunk by fast-check to:
 *   +0s kubelet-stop a-n0, a-n1; +0s pod-end #4 Failed/Evicted (fz-6, on b-n2), #0 Succeeded (fz-2),
 *   +0s malformed node b-n2 for 20s; +0s pod-end #0 Succeeded (fz-3)
 *   → (h) at +20.0s: default/fz-6 force-deleted by pod-garbage-collector-controller while its node
 *     b-n2 is malformed.
 * An invariant drawn too wide, not a controller bug. The deletion is the terminated pass's: 3
 * terminated pods, threshold 2, and fz-6 is the evicted one, first in `byEvictionAndCreationTimestamp`.
 * Upstream's `gcTerminated` lists pods only; a node that turns malformed after kube-controller-manager
 * started breaks its node informer's watch and relist, not that pass, so upstream deletes fz-6 at its
 * pass too (one malformed at the start holds every controller, WaitForNamedCacheSync, and the harness
 * models that). (h) now leaves out a force delete that upstream's gcTerminated chooses, which (j)
 * checks; the node clause still holds for the other passes, whose decisions read the node.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"kubelet-stop","node":1}},{"afterS":0,"event":{"kind":"pod-end","pod":4,"phase":"Evicted"}},{"afterS":0,"event":{"kind":"pod-end","pod":0,"phase":"Succeeded"}},{"afterS":0,"event":{"kind":"malformed","resource":"nodes","index":6,"forS":20}},{"afterS":0,"event":{"kind":"pod-end","pod":0,"phase":"Succeeded"}}];

test("a terminated pod upstream's gcTerminated deletes is not held back by its malformed node (run #3557, shrunk)", async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.equal(r.outcomes.gcTerminated, 1, 'the evicted pod is deleted by the terminated pass, as upstream deletes it');
});
