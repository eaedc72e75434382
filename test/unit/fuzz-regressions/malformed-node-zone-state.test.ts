/**
 * FIXED: found by the `malformed` vocabulary item (seed 12, run 312, shrunk).
 *   +0s kubelet-stop b-n2; +0s kubelet-stop b-n1; +0s kubelet-stop b-n0
 *   +51s the API holds node b-n0 malformed for 11 s
 *   → (c) unreachable:NoExecute added to b-n1 at +61 s while zone b (4 nodes, 3 not Ready) has
 *     been PartialDisruption (rate 0 at or below --large-cluster-size-threshold) since +50 s.
 * The informer treats a malformed object as absent (src/kube/informercache.ts `applyEvent`: a
 * delete), so the node lifecycle controller forgets b-n0 and computes zone b over three nodes, two
 * not Ready: Normal, rate 0.1, and it taints. Upstream's lister keeps the last object it could
 * decode (client-go's reflector fails the watch and the list that carry the bad one, so the store is
 * never told), and zone b stays PartialDisruption. A controller bug (acts more), fixed in the
 * informer cache: Node and Lease informers keep the last readable version of an object whose update
 * is malformed (still logged and counted), `keepLastReadable` in src/kube/informerfactory.ts. Replay:
 * `runSequence(STEPS, config)` below, or `npm run fuzz -- --runs 313 --seed 12` (run 312).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":6}},{"afterS":0,"event":{"kind":"kubelet-stop","node":5}},{"afterS":0,"event":{"kind":"kubelet-stop","node":4}},{"afterS":51,"event":{"kind":"malformed","resource":"nodes","index":20,"forS":11}}];

test('a node turned malformed is not taken for deleted when zone states are computed', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});
