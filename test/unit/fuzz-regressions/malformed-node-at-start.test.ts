/**
 * FIXED: found by the `malformed` vocabulary item (seed 20261130, runs 15, 165 and 184; #15 shrunk).
 *   +0s report-not-ready a-n1; +0s kubelet-stop a-n0; +0s kubelet-stop a-n2
 *   +0s the API holds node a-n1 malformed for 62 s
 *   +0s failover (the new leader starts 1 s later)
 *   → (c) unreachable:NoExecute added to a-n2 at +61 s while zone a (4 nodes, 3 not Ready) has been
 *     PartialDisruption (rate 0 at or below --large-cluster-size-threshold) since +51 s.
 * The new leader's Node informer had no readable version of a-n1 to keep, so its first list left
 * a-n1 out and the controller judged zone a over three nodes (two not Ready: Normal, rate 0.1) and
 * tainted. Upstream's reflector fails the whole list when one item cannot be decoded and retries
 * with backoff; the informer never syncs, and the node lifecycle controller (which waits in
 * `WaitForNamedCacheSync` for nodes, leases, pods and DaemonSets) does not start until every Node can
 * be read. A controller bug (acts more), fixed in the informer (src/kube/informercache.ts
 * `UnreadableObjectError`: for Nodes and Leases such a list fails as a whole and is retried) and
 * modelled by the fuzz caches (test/fuzz/watch.ts: the process starts its controllers once every cache
 * has synced, as `run` does). Replay: `runSequence(STEPS, config)` below, or
 * `runSequence(runSteps(20261130, 15), config)` on the vocabulary of that campaign.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"report-not-ready","node":1}},{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":0,"event":{"kind":"kubelet-stop","node":2}},{"afterS":0,"event":{"kind":"malformed","resource":"nodes","index":1,"forS":62}},{"afterS":0,"event":{"kind":"failover","gapS":1}}];

test('a node that cannot be read when a new leader starts holds the controllers until it can: no zone is judged without it', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
});

test('once the node can be read the controllers start and act (a node of zone b stops 70 s later and is tainted)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  // b-n0 (node 4) stops after a-n1 is readable again; zone b (1 of 4 not Ready) is Normal.
  const r = await runSequence([...STEPS, { afterS: 70, event: { kind: 'kubelet-stop', node: 4 } }], config);
  assert.deepEqual(r.violations, [], r.text);
  assert.ok(r.outcomes.noExecuteTaints >= 1, `the started controllers tainted b-n0:\n${r.text}`);
});
