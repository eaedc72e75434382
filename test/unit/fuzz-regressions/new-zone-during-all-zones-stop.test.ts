/**
 * FIXED: run #95603 of seed 20261201 (the 100,000-run campaign), invariant (c) "no NoExecute taint
 * during the all-zones stop", shrunk by fast-check (`shrinkRun`) to:
 *   +0s every node of zones a and b stops or reports NotReady (a-n0 reports NotReady);
 *   +14s a DaemonSet pod-add on a-n0 (it only makes the shrunk run keep its shape);
 *   +57s a-n0 is relabelled into zone c, a zone never seen before
 *   → (c) `not-ready:NoExecute` added to a-n0 at +57 s while every zone had been FullDisruption since +50 s.
 * Ours created zone c's queue with a full token bucket and the Initial state (as upstream's
 * `addPodEvictorForNewZone`), and the Initial state ended ours' view of the stop: the NoExecute fence
 * (node-lifecycle.md difference 22) opened and the tainting pass tainted a-n0 at once; the monitor
 * pass at +60 s re-entered the stop and removed the taint. Upstream builds the new zone's queue at its
 * next pass and re-enters the stop at that pass's end (`handleDisruption`: the Initial state makes
 * `allWasFullyDisrupted` false), so only its 100 ms tainting pass racing that pass can taint a-n0, and
 * the stop then removes the taint. A controller bug (an extra taint; a pod tolerating not-ready for 0 s
 * would have been deleted), fixed in src/nodelifecycle/tainting.ts: a zone first seen during the stop
 * starts with rate 0 and keeps the stop on until the next zone-state computation decides
 * (node-lifecycle.md difference 25, reduce-only).
 * Replay: `runSequence(STEPS, config)` below, or `runSequence(runSteps(20261201, 95603), config)`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"report-not-ready","node":4}},{"afterS":0,"event":{"kind":"report-not-ready","node":3}},{"afterS":0,"event":{"kind":"kubelet-stop","node":2}},{"afterS":0,"event":{"kind":"report-not-ready","node":0}},{"afterS":0,"event":{"kind":"kubelet-stop","node":1}},{"afterS":0,"event":{"kind":"report-not-ready","node":5}},{"afterS":0,"event":{"kind":"kubelet-stop","node":7}},{"afterS":0,"event":{"kind":"kubelet-stop","node":6}},{"afterS":14,"event":{"kind":"pod-add","node":0,"tol":{"kind":"everything"},"ds":true,"aff":0}},{"afterS":43,"event":{"kind":"zone-change","node":0,"zone":2}}];
/** Run #95603 of seed 20261201 as generated (`runSteps(20261201, 95603)`), kept as data: the vocabulary may change. */
const RUN_95603: Step[] = [{"afterS":53,"event":{"kind":"write-fault","method":"deletePod","forS":118,"code":404}},{"afterS":32,"event":{"kind":"kubelet-stop","node":7}},{"afterS":24,"event":{"kind":"pod-add","node":1,"tol":{"kind":"none"}}},{"afterS":9,"event":{"kind":"zone-change","node":5,"zone":0}},{"afterS":64,"event":{"kind":"report-not-ready","node":4}},{"afterS":29,"event":{"kind":"report-not-ready","node":3}},{"afterS":68,"event":{"kind":"kubelet-start","node":6}},{"afterS":19,"event":{"kind":"failover","gapS":1}},{"afterS":3,"event":{"kind":"failover","gapS":25}},{"afterS":79,"event":{"kind":"tolerations-edit","pod":23,"tol":{"kind":"forever"}}},{"afterS":29,"event":{"kind":"report-ready","node":6}},{"afterS":18,"event":{"kind":"kubelet-stop","node":2}},{"afterS":15,"event":{"kind":"watch-drop","resource":"leases","forS":31,"gone":false}},{"afterS":65,"event":{"kind":"report-not-ready","node":0}},{"afterS":90,"event":{"kind":"watch-drop","resource":"volumeAttachments","forS":19,"gone":true}},{"afterS":90,"event":{"kind":"clock-step","offsetMs":-464}},{"afterS":47,"event":{"kind":"kubelet-stop","node":1}},{"afterS":90,"event":{"kind":"read-fault","method":"getVolumeAttachment","forS":13,"code":429}},{"afterS":65,"event":{"kind":"report-ready","node":7}},{"afterS":86,"event":{"kind":"report-not-ready","node":5}},{"afterS":49,"event":{"kind":"pod-add","node":4,"tol":{"kind":"everything"},"ds":true,"aff":0}},{"afterS":21,"event":{"kind":"kubelet-stop","node":7}},{"afterS":78,"event":{"kind":"kubelet-stop","node":7}},{"afterS":84,"event":{"kind":"kubelet-stop","node":6}},{"afterS":64,"event":{"kind":"pod-add","node":4,"tol":{"kind":"none"},"vol":"ephemeral"}},{"afterS":23,"event":{"kind":"watch-drop","resource":"leases","forS":4,"gone":true}},{"afterS":43,"event":{"kind":"zone-change","node":3,"zone":2}},{"afterS":60,"event":{"kind":"tolerations-edit","pod":23,"tol":{"kind":"forever"}}},{"afterS":22,"event":{"kind":"watch-drop","resource":"pods","forS":30,"gone":false}},{"afterS":0,"event":{"kind":"write-fault","method":"updateNodeConditions","forS":85,"code":409}}];

test('a node relabelled into a new zone during the all-zones stop is not tainted (run #95603, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});

test('run #95603 of seed 20261201 as generated passes', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(RUN_95603, config);
  assert.deepEqual(r.violations, [], r.text);
});
