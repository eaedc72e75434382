/**
 * FIXED: found by the `malformed` vocabulary item (seed 20261130, runs 701 and 997; #701 shrunk).
 *   +0s the API holds node a-n1 malformed for 51 s
 *   +0s kubelet-stop a-n1
 *   → (h) unreachable:NoExecute and unreachable:NoSchedule added to a-n1 at +50 s, malformed since +0 s.
 * The Node informer keeps a-n1's last readable version (so that zone states still count it), and the
 * node lifecycle controller judged that stale copy: its grace period ran out, it marked the node
 * Unknown and tainted it. Upstream's lister holds the same stale copy, but its status update from it
 * conflicts and the re-GET that follows cannot be decoded, so `monitorNodeHealth` logs "Skipping - no
 * pods will be evicted" and gives up on the node for the pass (and its taint writes start with a GET
 * that fails the same way). A controller bug (acts more), fixed fail-closed: the informer marks a
 * kept copy (`newestUnreadable`, src/kube/informercache.ts) and the controller neither judges nor
 * writes to such a node or its pods (src/nodelifecycle/unreadable.ts; docs/node-lifecycle.md
 * difference 24). Replay: `runSequence(STEPS, config)` below, or
 * `runSequence(runSteps(20261130, 701), config)` on the vocabulary of that campaign.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"malformed","resource":"nodes","index":1,"forS":51}},{"afterS":0,"event":{"kind":"kubelet-stop","node":1}}];

test('a node whose newest version cannot be read is neither marked Unknown nor tainted; once it can be, it is', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  // Fail closed, not forever: zone a (1 of 4 not Ready) is Normal, so a-n1 is tainted once readable.
  assert.ok(r.outcomes.noExecuteTaints >= 1, `a-n1 tainted after it could be read again:\n${r.text}`);
});
