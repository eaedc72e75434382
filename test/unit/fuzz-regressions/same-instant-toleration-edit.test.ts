/**
 * Fuzz campaign seed 20261201, runs 44556 and 45228: invariant (a), "no taint-eviction deletion
 * before upstream's schedule". Both shrink (`shrinkRun`) to the same two steps at the same instant:
 *   +0s report-not-ready a-n2 (run 45228: b-n2); +0s tolerations-edit fz-2 (60 s) to 61 s (45228: fz-6)
 *   → default/fz-2 deleted at +60 s (not-ready:NoExecute on a-n2 since +0 s); the reference said +61 s.
 * A harness reference error, not a controller bug. The node lifecycle controller's taint reached the
 * API before the edit, and ours, as upstream, scheduled the deletion from the 60 s it held: +60 s.
 * Upstream's `processPodOnNode` then keeps that schedule on the edit (`startTime =
 * scheduledEviction.CreatedAt; if startTime.Add(minTolerationTime).Before(triggerTime) { return }`,
 * triggerTime = now + 61 s with `now` the edit's handling time, which is time.Now() taken afresh and so
 * strictly after CreatedAt). The reference ran both handlings at the same simulated millisecond, where
 * `Before` is false, and replaced the schedule with +61 s. Fix: the reference counts a handling in the
 * same millisecond as later (test/fuzz/reference.ts `processPodOnNode`: `<=`). These tests check that
 * both runs pass, that an edit reaching the API before the taint still counts (+61 s), and that the
 * reference still puts an early deletion's limit where upstream would.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import type { Node, Pod } from '../../../src/kube/objects.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence, tolerationsOf } from '../../fuzz/harness.js';
import { UpstreamTaintEviction } from '../../fuzz/reference.js';

const RUN_44556: Step[] = [{"afterS":0,"event":{"kind":"report-not-ready","node":2}},{"afterS":0,"event":{"kind":"tolerations-edit","pod":10,"tol":{"kind":"seconds","s":61}}}];
const RUN_45228: Step[] = [{"afterS":0,"event":{"kind":"report-not-ready","node":6}},{"afterS":0,"event":{"kind":"tolerations-edit","pod":38,"tol":{"kind":"seconds","s":61}}}];

test('fuzz runs 44556 and 45228 of seed 20261201: a toleration edit in the taint\'s millisecond keeps the schedule made from the old tolerations', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  for (const steps of [RUN_44556, RUN_45228]) {
    const r = await runSequence(steps, config);
    assert.deepEqual(r.violations, [], r.text);
    // The deletion happened (at +60 s, the campaign's violation before the fix) and is no longer flagged.
    assert.equal(r.outcomes.deletions, 1, r.text);
  }
});

test('the edit made before the taint (same instant, other order) counts: no deletion before +61 s', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence([RUN_44556[1]!, RUN_44556[0]!], config);
  assert.deepEqual(r.violations, [], r.text);
  assert.equal(r.outcomes.deletions, 1, r.text);
});

const T = 1_800_000_000_000;
const node = (taints: Node['taints']): Node => ({ name: 'a-n2', labels: {}, taints, conditions: [], resourceVersion: '1' }) as unknown as Node;
const pod = (s: number): Pod => ({ namespace: 'default', name: 'fz-2', uid: 'u2', nodeName: 'a-n2', tolerations: tolerationsOf({ kind: 'seconds', s }) }) as unknown as Pod;
const TAINT = [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' as const, timeAdded: T }];

/** The taint at +0 s, then the edit to `s` seconds at `editAtMs`, or the edit first when `editFirst`. @returns the fire time (s after T). */
function play(s: number, editAtMs: number, editFirst = false): number | undefined {
  const up = new UpstreamTaintEviction();
  const taint = (): void => up.nodeUpdated(node([]), node(TAINT), [editFirst ? pod(s) : pod(60)], T);
  const edit = (): void => up.podUpdated(pod(60), pod(s), editFirst ? node([]) : node(TAINT), T + editAtMs);
  if (editFirst) { edit(); taint(); } else { taint(); edit(); }
  const x = up.scheduled('u2');
  return x ? (x.fireAt - T) / 1000 : undefined;
}

test('UpstreamTaintEviction: a schedule is kept by a later handling, the same millisecond included; an edit before the taint decides', () => {
  assert.equal(play(61, 0), 60, 'edit in the taint\'s millisecond: upstream handles it later and keeps +60 s');
  assert.equal(play(61, 1), 60, 'edit 1 ms later: kept as before');
  assert.equal(play(30, 0), 60, 'a shortened toleration does not move the schedule either');
  // The edit before the taint: the taint's handling schedules from 61 s, so (a) still flags a deletion at +60 s.
  assert.equal(play(61, 0, true), 61);
});
