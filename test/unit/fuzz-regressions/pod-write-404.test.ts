/**
 * Fuzz campaign seed 20261128, runs 206, 1882 and 2494: invariant (d), "nothing lost". Each shrank
 * to a node going NotReady (or its kubelet stopping) and, about when its pod's 60 s toleration runs
 * out, every write failing with 404 for a while (the originals hit `deletePod`, `all` and
 * `addDisruptionCondition`, with clock steps that played no part):
 *   206:  +0s report-not-ready a-n0; +53s write-fault all 404 for 8s
 *   1882: +0s report-not-ready a-n0; +6s write-fault all 404 for 55s
 *   2494: +0s kubelet-stop a-n0;     +58s write-fault all 404 for 53s
 * default/fz-0 was never deleted. A harness bound too tight, not a controller bug: a 404 on the
 * pod's DisruptionTarget patch or its deletion says the pod is gone, and the controller stops, as
 * upstream's does (taint_eviction.go `deletePodHandler` returns `addConditionAndDeletePod`'s error
 * after its retries and schedules nothing more; our deletion treats NotFound as "pod gone"). A real
 * API server says 404 only of a pod that is gone; the harness says it of one that is not. (d) now
 * leaves out a pod whose deletion the harness answered 404, and says so (`exempt`): each run passes
 * because of that exemption and for no other reason, which these tests check.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';

const RUNS: Record<string, Step[]> = {
  206: [{"afterS":0,"event":{"kind":"report-not-ready","node":0}},{"afterS":53,"event":{"kind":"write-fault","method":"all","forS":8,"code":404}}],
  1882: [{"afterS":0,"event":{"kind":"report-not-ready","node":0}},{"afterS":6,"event":{"kind":"write-fault","method":"all","forS":55,"code":404}}],
  2494: [{"afterS":0,"event":{"kind":"kubelet-stop","node":0}},{"afterS":58,"event":{"kind":"write-fault","method":"all","forS":53,"code":404}}],
};

for (const [run, steps] of Object.entries(RUNS)) {
  test(`fuzz run ${run}: a pod whose deletion was answered 404 is taken for gone, as upstream takes it; no violation`, async () => {
    const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
    const r = await runSequence(steps, config);
    assert.deepEqual(r.violations, [], r.text);
    assert.deepEqual(r.exempt, ['default/fz-0: its deletion was answered 404 (the pod is gone, by the API\'s word)'], r.text);
  });
}

test('the same node without the 404: the pod is deleted, and nothing is exempt', async () => {
  const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
  const r = await runSequence([{ afterS: 0, event: { kind: 'report-not-ready', node: 0 } }, { afterS: 53, event: { kind: 'write-fault', method: 'all', forS: 8, code: 500 } }], config);
  assert.deepEqual(r.violations, [], r.text);
  assert.deepEqual(r.exempt, []);
  assert.ok(r.outcomes.deletions >= 1, 'a 500 is retried until the deletion lands');
});
