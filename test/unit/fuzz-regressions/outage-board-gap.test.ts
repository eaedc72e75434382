/**
 * FIXED (issue 57): run #823 of seed 20270301 (the wire vocabulary's first 2,000-run campaign),
 * invariant (m) "after an outage, no action on a node before this process's first judgement of it
 * from post-outage data", shrunk by fast-check (`fc.check` from the run's seed) to:
 *   +0s kubelet-stop a-n0; +0s wire-truncated nodes #0 for 1s (the last field cut by 1 byte);
 *   +60s api-outage for 8s (reconnect jitter seed 0)
 *   → (m) default/fz-0 deleted for node.kubernetes.io/unreachable at +110.0s: the caches relisted at
 *     +105.7s and a-n0 had no judgement from post-outage data (on both the protobuf and JSON paths).
 * a-n0 was tainted `unreachable` at +50 s; over the wire its `timeAdded` has whole seconds, so the
 * pod's 60 s toleration ran out at +110.000 s, the very millisecond of the first monitor pass after
 * the relist. The judgement board still held the node's confirmation from before the outage: sight's
 * return had been noticed on another node's Lease event (every node got a fresh grace period), but
 * the board learns of a node only when that node is observed, at that pass. The deletion ran first.
 * A controller bug, fixed in src/nodelifecycle/monitor.ts (`sightChanged`, `#sightReturned`;
 * node-lifecycle.md difference 28): sight is recorded from the informers' `watching` transitions as
 * they happen, and its return clears the board at once, so the taint eviction controller's start
 * hold keeps the deletion until the node is confirmed again. Fails without the fix.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"wire-truncated","resource":"nodes","index":0,"forS":1,"cut":1}},{"afterS":60,"event":{"kind":"api-outage","forS":8,"seed":0}}];

test('a deletion due on the first pass after an outage waits for the node to be judged again (run #823, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});
