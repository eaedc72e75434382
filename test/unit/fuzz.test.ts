/**
 * The invariant fuzzing harness (test/fuzz/) at a fixed seed and a small budget, so every unit run
 * searches a little: random event sequences on the real controllers over the in-memory cluster, the
 * invariants checked at every write (test/fuzz/harness.ts). A failure prints the shrunk sequence.
 * Also pins that the harness drives the cluster (events applied, deletions and taints seen), so a
 * harness that silently did nothing would fail here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { FUZZ_FLAGS, campaignText, runCampaign } from '../fuzz/campaign.js';
import { runSequence } from '../fuzz/harness.js';
import { VOCABULARY } from '../fuzz/events.js';

/** The fixed seed and budget: about 15 s of CPU (some 8 runs per CPU-second), well inside the 2 minutes CI allows. */
const SEED = 27;
const RUNS = 120;

describe('invariant fuzzing (fixed seed, small budget)', () => {
  test(`${RUNS} random sequences from seed ${SEED}: no invariant violated`, async () => {
    const config = await parseControllerFlags([...FUZZ_FLAGS], {});
    const r = await runCampaign(config, { runs: RUNS, seed: SEED, concurrency: 4 });
    assert.equal(r.failure, undefined, campaignText(r));
    assert.equal(r.runs, RUNS);
    assert.ok(r.events > RUNS * 5, `events applied: ${r.events}`);
    assert.ok(r.outcomes.deletions > 0 && r.outcomes.noExecuteTaints > 0, campaignText(r));
    for (const k of VOCABULARY) assert.ok(r.coverage[k] > 0, `vocabulary item ${k} never applied:\n${campaignText(r)}`);
  });

  test('a hand-written sequence: a stopped kubelet gets its pods deleted, after the toleration and never sooner', async () => {
    const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
    const r = await runSequence(
      [
        { afterS: 1, event: { kind: 'pod-add', node: 0, tol: { kind: 'seconds', s: 30 } } },
        { afterS: 1, event: { kind: 'kubelet-stop', node: 0 } },
      ],
      config,
    );
    assert.deepEqual(r.violations, [], r.text);
    // The initial 60 s pod and the 30 s pod on a-n0.
    assert.equal(r.outcomes.deletions, 2, r.text);
    assert.equal(r.outcomes.noExecuteTaints, 1, r.text);
  });
});
