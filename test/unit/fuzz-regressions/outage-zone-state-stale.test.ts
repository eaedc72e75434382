/**
 * FIXED (issue 57): run #14831 of seed 20271207 (a bounded campaign on the final code), invariant (c)
 * "no NoExecute taint while the node's zone has rate 0 by upstream's rate table", shrunk by fast-check
 * to (the steps that matter):
 *   +3s report-not-ready b-n2; +213s zone-change a-n0 to zone b (5 nodes); +343s api-outage for 44s;
 *   +343s report-not-ready a-n0 and b-n1
 *   → (c) at +476.0s: node.kubernetes.io/not-ready:NoExecute added to b-n1 while its zone b has been
 *     PartialDisruption (3 of 5 not Ready, rate 0) since the API server came back.
 * The caches relisted at +475.7s and delivered the nodes one by one. Each node is judged as its
 * event comes (differences 1 and 2), so b-n1 was judged first, with the zone states still those of
 * the pre-outage view (1 of 5 not Ready, then 2 of 5 with b-n1: Normal), and tainted; a-n0 came
 * 0.4 s later and the zone turned PartialDisruption. Upstream judges every node in one pass and only
 * then sets the zones' rates (`monitorNodeHealth`, `handleDisruption`), so it does not taint b-n1.
 * A controller bug by the safety rule, fixed in src/nodelifecycle/monitor.ts (node-lifecycle.md
 * difference 28): after sight returns, nothing is acted on until a full monitor pass has judged
 * every node and computed the zone states. Fails without the fix.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":3,"event":{"kind":"report-not-ready","node":6}},{"afterS":76,"event":{"kind":"pod-end","pod":0,"phase":"Succeeded"}},{"afterS":59,"event":{"kind":"pod-add","node":0,"tol":{"kind":"everything"},"ds":true,"aff":0}},{"afterS":75,"event":{"kind":"zone-change","node":0,"zone":1}},{"afterS":1,"event":{"kind":"oos-add","node":0}},{"afterS":45,"event":{"kind":"pod-add","node":0,"tol":{"kind":"everything"},"ds":true,"aff":0}},{"afterS":39,"event":{"kind":"kubelet-start","node":0}},{"afterS":45,"event":{"kind":"api-outage","forS":44,"seed":30}},{"afterS":0,"event":{"kind":"report-not-ready","node":0}},{"afterS":0,"event":{"kind":"report-not-ready","node":5}}];

test('after an outage no NoExecute taint on zone states from before it: the zone is PartialDisruption once every node is judged (run #14831, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});
