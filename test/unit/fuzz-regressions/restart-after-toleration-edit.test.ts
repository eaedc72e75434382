/**
 * Fuzz campaign seed 20261128, runs 469 and 1930: invariant (a), "no deletion after a restart
 * before max(timeAdded, tolerations set) + tolerationSeconds". Shrunk:
 *   469:  +0s report-not-ready a-n0; +2s tolerations-edit fz-0 to 2s; +2s restart
 *         → fz-0 deleted at +2 s; upstream deletes at the edit + 2 s = +4 s (restarted: +4 s too).
 *   1930: +0s kubelet-stop b-n1; +0s pod-add on a-n0 tolerating everything (DaemonSet);
 *         +52s tolerations-edit fz-5 (on b-n1) to 58s; +52s failover (the new leader starts 1 s later)
 *         → fz-5 deleted at +108 s = the unreachable taint's timeAdded (+50 s) + 58 s; upstream at
 *         the edit + 58 s = +110 s (restarted: +111 s).
 * A controller bug: the edit's time lived only in the old process (seen.ts `TolerationEdits`), so
 * the new one counted the edited toleration from the taint's timeAdded (restart-safe deadlines,
 * docs/taint-eviction.md difference 1), sooner than upstream, restarted or not. Fixed: a pod whose
 * spec had changed before this process first saw it (`metadata.generation` > 1, which the API
 * server sets from 1.33) counts from that first sight (difference 11); the harness's pods carry a
 * generation as the API server sets it. This replays both (shrunk, and run 1930 in full) and asserts
 * no violation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { runSteps } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const RUN_469: Step[] = [{"afterS":0,"event":{"kind":"report-not-ready","node":0}},{"afterS":2,"event":{"kind":"tolerations-edit","pod":0,"tol":{"kind":"seconds","s":2}}},{"afterS":0,"event":{"kind":"restart"}}];
const RUN_1930: Step[] = [{"afterS":0,"event":{"kind":"kubelet-stop","node":5}},{"afterS":0,"event":{"kind":"pod-add","node":0,"tol":{"kind":"everything"},"ds":true}},{"afterS":52,"event":{"kind":"tolerations-edit","pod":23,"tol":{"kind":"seconds","s":58}}},{"afterS":0,"event":{"kind":"failover","gapS":1}}];

test('fuzz run 469 (shrunk): a toleration edited just before a restart counts from the restart, not from the taint', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(RUN_469, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.ok(r.outcomes.deletions >= 1, 'the pod is still deleted, later');
});

test('fuzz run 1930 (shrunk): a toleration edited just before a failover counts from the new leader\'s first sight', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(RUN_1930, config);
  assert.deepEqual(r.violations, [], r.text);
});

test('fuzz run 1930 (the whole generated sequence)', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence(runSteps(20261128, 1930), config);
  assert.deepEqual(r.violations, [], r.text);
});
