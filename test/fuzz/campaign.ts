/**
 * A fuzz campaign: `runs` random sequences (./events.ts) through the harness (./harness.ts) with
 * fast-check, which shrinks a failing sequence to a minimal one. Shared by `npm run fuzz`
 * (./main.ts) and the fixed-seed unit test (test/unit/fuzz.test.ts).
 */
import fc from 'fast-check';
import type { ControllerConfig } from '../../src/controllers/config.js';
import { VOCABULARY, sequenceArb, type FuzzEvent, type Step } from './events.js';
import { runSequence, type RunResult, type Violation } from './harness.js';

/** What a campaign did. `seconds`: wall clock. */
export interface CampaignResult {
  runs: number;
  events: number;
  seconds: number;
  coverage: Record<FuzzEvent['kind'], number>;
  outcomes: RunResult['outcomes'];
  /** The shrunk counterexample, when a run violated an invariant. */
  failure?: { seed: number; path: string | undefined; steps: Step[]; violations: Violation[]; text: string };
}

/**
 * Runs a campaign.
 * @param opts `runs` sequences of at most `maxSteps` steps from `seed`.
 * @returns the figures and, on a violation, the shrunk sequence as data and as text. Never throws for a violation.
 */
export async function runCampaign(config: ControllerConfig, opts: { runs: number; seed: number; maxSteps?: number }): Promise<CampaignResult> {
  const started = performance.now();
  const coverage = Object.fromEntries(VOCABULARY.map((k) => [k, 0])) as Record<FuzzEvent['kind'], number>;
  const outcomes = { deletions: 0, forceDeletions: 0, noExecuteTaints: 0 };
  let runs = 0;
  let events = 0;
  let shrinking = false;
  const property = fc.asyncProperty(sequenceArb(opts.maxSteps), async (steps) => {
    const r = await runSequence(steps, config);
    if (!shrinking) {
      runs++;
      events += r.events;
      for (const k of VOCABULARY) coverage[k] += r.coverage[k];
      outcomes.deletions += r.outcomes.deletions;
      outcomes.forceDeletions += r.outcomes.forceDeletions;
      outcomes.noExecuteTaints += r.outcomes.noExecuteTaints;
    }
    if (r.violations.length > 0) shrinking = true;
    return r.violations.length === 0;
  });
  const details = await fc.check(property, { numRuns: opts.runs, seed: opts.seed, endOnFailure: false });
  const result: CampaignResult = { runs, events, seconds: (performance.now() - started) / 1000, coverage, outcomes };
  if (details.failed && details.counterexample) {
    const [steps] = details.counterexample;
    const replay = await runSequence(steps, config);
    result.failure = { seed: details.seed, path: details.counterexamplePath ?? undefined, steps, violations: replay.violations, text: replay.text };
  } else if (details.failed) {
    throw new Error(`fuzz: the property failed without a counterexample: ${String(details.errorInstance)}`);
  }
  return result;
}

/** The campaign's figures as text (runs, events, coverage per vocabulary item, outcomes, the failure). */
export function campaignText(r: CampaignResult): string {
  const lines = [
    `runs: ${r.runs}  events: ${r.events}  wall: ${r.seconds.toFixed(1)} s (${(r.runs / Math.max(r.seconds, 1e-9)).toFixed(1)} runs/s)`,
    'coverage (events applied per vocabulary item):',
    ...VOCABULARY.map((k) => `  ${k.padEnd(18)} ${r.coverage[k]}`),
    `outcomes: ${r.outcomes.deletions} deletions, ${r.outcomes.forceDeletions} force deletions, ${r.outcomes.noExecuteTaints} NoExecute taints added`,
  ];
  if (r.failure) {
    lines.push(`violations: ${r.failure.violations.length} (seed ${r.failure.seed}, path ${r.failure.path ?? '-'}); shrunk sequence:`, r.failure.text, 'as data:', JSON.stringify(r.failure.steps));
  } else {
    lines.push('violations: 0');
  }
  return lines.join('\n');
}
