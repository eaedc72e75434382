/**
 * FIXED (issue 57): run #19451 of seed 20271208 (a bounded campaign on the final code), invariant (m)
 * "after an API server outage, no taint on a node before this process's first judgement of it from
 * post-outage data", shrunk by fast-check to:
 *   +0s write-fault swapNodeTaints 500 for 51s; +0s kubelet-stop a-n0; +51s api-outage for 2s
 *   → (m) node.kubernetes.io/unreachable:NoSchedule added to a-n0 at +61.0s: the Node cache relisted
 *     at +58.8s (Leases +59.6s), and a-n0 was not judged again from post-outage data.
 * a-n0 was marked Unknown at +50s, but its taint writes failed until +51s, and then the API server
 * was down. Once the caches relisted, the NoSchedule pass mirrored the Ready=Unknown it found, which
 * was this controller's own verdict from before the outage, held by difference 28 for the NoExecute
 * taint but not for the NoSchedule one. A controller bug by the safety rule, fixed in
 * src/nodelifecycle/noschedule.ts (node-lifecycle.md difference 29): the unreachable condition taint
 * waits, as the NoExecute one does, until the node is judged again. Fails without the fix.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"write-fault","method":"swapNodeTaints","forS":51}},{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":51,"event":{"kind":"api-outage","forS":2,"seed":0}}];

test('no unreachable NoSchedule taint from a pre-outage Unknown verdict before the node is judged again (run #19451, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.ok(r.outcomes.noExecuteTaints >= 1, 'the node is tainted once judged again');
});
