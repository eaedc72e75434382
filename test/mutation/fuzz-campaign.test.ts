/**
 * The fixed-seed fuzz campaign of mutation testing (docs/safety.md, "Mutation testing"): the
 * invariant fuzzing harness (test/fuzz/) at a fixed seed and a budget small enough to run once per
 * mutant. It fails on any invariant violation or any error a run throws, without shrinking (a
 * mutant only needs to be caught, not explained). Not part of `npm run test:unit` (whose
 * test/unit/fuzz.test.ts runs a larger campaign); the mutation configurations run it after each
 * core's unit tests. `NLC_MUTATION_FUZZ_RUNS` and `NLC_MUTATION_FUZZ_SEED` change the budget and the
 * seed (defaults below).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { FUZZ_FLAGS, runShare } from '../fuzz/campaign.js';

const SEED = Number(process.env.NLC_MUTATION_FUZZ_SEED ?? 57);
const RUNS = Number(process.env.NLC_MUTATION_FUZZ_RUNS ?? 24);

test(`fixed-seed fuzz campaign (seed ${SEED}, ${RUNS} runs): no invariant violated`, async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runShare(config, { runs: RUNS, seed: SEED, concurrency: 4 }, Array.from({ length: RUNS }, (_, i) => i));
  assert.deepEqual(r.failedRuns, [], `violations in runs ${JSON.stringify(r.failedRuns)} (replay: npm run fuzz -- --runs ${RUNS} --seed ${SEED})`);
  assert.equal(r.runs, RUNS);
  // A harness that silently did nothing would let every mutant survive here.
  assert.ok(r.outcomes.deletions > 0 && r.outcomes.noExecuteTaints > 0, `outcomes: ${JSON.stringify(r.outcomes)}`);
});
