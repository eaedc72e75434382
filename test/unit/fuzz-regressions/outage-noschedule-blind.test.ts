/**
 * FIXED (issue 57): run #1033 of seed 20270301 (the wire vocabulary's 2,000-run campaign), invariant
 * (m) "after an API server outage, no taint on a node before this process's first judgement of it
 * from post-outage data", shrunk by fast-check (`fc.check` from the run's seed) to:
 *   +0s process-pause for 16s (restarted after it); +0s report-not-ready a-n0; +3s kubelet-start a-n0;
 *   +5s kubelet-stop a-n0; +6s pod-delete fz-0; +22s pod-end fz-1 Succeeded; +23s api-outage for 1s
 *   → (m) node.kubernetes.io/not-ready:NoSchedule added to a-n0 at +32.0s: the API server was down
 *     +23.0s–+24.0s and this process's Node cache relists only at +32.7s.
 * The NoSchedule pass wrote a condition taint from the Node cache while that cache was still blind
 * (its reflector waiting out the backoff after the outage): conditions older than the outage. A
 * controller bug by the safety rule, fixed in src/nodelifecycle/noschedule.ts (node-lifecycle.md
 * difference 29): no condition taint while the controller cannot see the cluster, at decision and at
 * send time; the node is tried again and decided from the current view. Fails without the fix.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"process-pause","forS":16,"standby":false}},{"afterS":0,"event":{"kind":"report-not-ready","node":0}},{"afterS":3,"event":{"kind":"kubelet-start","node":0}},{"afterS":2,"event":{"kind":"kubelet-stop","node":0}},{"afterS":1,"event":{"kind":"pod-delete","pod":0}},{"afterS":16,"event":{"kind":"pod-end","pod":0,"phase":"Succeeded"}},{"afterS":1,"event":{"kind":"api-outage","forS":1,"seed":563806927}}];

test('no condition taint from a Node cache still blind after an outage (run #1033, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});
