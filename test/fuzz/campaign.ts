/**
 * A fuzz campaign: `runs` random sequences (./events.ts) through the harness (./harness.ts).
 * Shared by `npm run fuzz` (./main.ts, which also spreads a campaign over worker processes) and the
 * fixed-seed unit test (test/unit/fuzz.test.ts).
 *
 * Run `i` of a campaign with seed `S` plays the first sequence fast-check generates from
 * {@link runSeed}(S, i): the same whatever the number of workers or of runs in flight, so a
 * campaign's figures do not depend on how it was spread. Runs in flight in one process interleave
 * only at the clock's settle points (each run has its own cluster, clock and controllers), which
 * lets one event-loop turn settle many runs at once. A run that violates an invariant is replayed
 * by `fc.check` from its own seed, and fast-check shrinks it (no shrinker of ours).
 */
import fc from 'fast-check';
import type { ControllerConfig } from '../../src/controllers/config.js';
import { VOCABULARY, sequenceArb, type Step, type VocabularyItem } from './events.js';
import { runSequence, type Invariant, type RunResult, type Violation } from './harness.js';

/** The figures of a campaign (or of a worker's share). `seconds`: wall clock. */
export interface CampaignFigures {
  runs: number;
  events: number;
  /** Timers fired on the runs' clocks (the simulated work). */
  timers: number;
  seconds: number;
  /** CPU seconds (user + system) of the processes that ran the runs: the figure that does not depend on the machine's other load. */
  cpuSeconds: number;
  coverage: Record<VocabularyItem, number>;
  outcomes: RunResult['outcomes'];
  /** Runs (by index) that violated an invariant, and which invariants. */
  failedRuns: { index: number; invariants: Invariant[] }[];
}

/** A campaign's figures and, on a violation, the first failing run shrunk. */
export interface CampaignResult extends CampaignFigures {
  failure?: { index: number; seed: number; path: string | undefined; steps: Step[]; violations: Violation[]; text: string };
}

/** Options of a campaign: `runs` sequences of at most `maxSteps` steps from `seed`; `concurrency` runs in flight at once. */
export interface CampaignOptions {
  runs: number;
  seed: number;
  maxSteps?: number;
  concurrency?: number;
  /** Start no run after this time (epoch ms, wall clock): a campaign bounded by time reports the runs it made. */
  deadlineMs?: number;
}

/**
 * The flags of every fuzz run: `run`'s defaults in one process (no serving; leader election is the
 * harness's own, process.ts), node-affinity-enforcer on (it is off by default), as
 * `--controllers=*,node-affinity-enforcer` enables it, and `--terminated-pod-gc-threshold=2` (upstream's
 * default is 12,500: a run has some 40 pods, so pod GC's terminated pass would never run).
 */
export const FUZZ_FLAGS: readonly string[] = ['--leader-elect=false', '--secure-port=0', '--controllers=*,node-affinity-enforcer', '--terminated-pod-gc-threshold=2'];

/** The fast-check seed of run `index` of a campaign seeded `seed` (a 31-bit mix of both). */
export function runSeed(seed: number, index: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) & 0x7fffffff;
}

/** The steps of run `index` (fast-check's first sequence from {@link runSeed}). */
export function runSteps(seed: number, index: number, maxSteps = 30): Step[] {
  const [steps] = fc.sample(sequenceArb(maxSteps), { seed: runSeed(seed, index), numRuns: 1 });
  if (!steps) throw new Error('fuzz: fast-check generated no sequence');
  return steps;
}

/** Empty figures, to add runs to. */
export function emptyFigures(): CampaignFigures {
  return {
    runs: 0,
    events: 0,
    timers: 0,
    seconds: 0,
    cpuSeconds: 0,
    coverage: Object.fromEntries(VOCABULARY.map((k) => [k, 0])) as Record<VocabularyItem, number>,
    outcomes: { deletions: 0, forceDeletions: 0, noExecuteTaints: 0, detaches: 0, affinityEvictions: 0, gcTerminated: 0, gcOrphaned: 0 },
    failedRuns: [],
  };
}

/** Adds `b` into `a` (a worker's share into the campaign); `seconds` is the larger (they ran side by side). */
export function mergeFigures(a: CampaignFigures, b: CampaignFigures): void {
  a.runs += b.runs;
  a.events += b.events;
  a.timers += b.timers;
  a.seconds = Math.max(a.seconds, b.seconds);
  a.cpuSeconds += b.cpuSeconds;
  for (const k of VOCABULARY) a.coverage[k] += b.coverage[k];
  for (const k of Object.keys(a.outcomes) as (keyof RunResult['outcomes'])[]) a.outcomes[k] += b.outcomes[k];
  a.failedRuns.push(...b.failedRuns);
  a.failedRuns.sort((x, y) => x.index - y.index);
}

/**
 * Plays the runs `indexes` of a campaign, `concurrency` at a time, without shrinking; `onRun`
 * sees the figures so far after each run.
 * @returns their figures. Never throws for a violation.
 */
export async function runShare(config: ControllerConfig, opts: CampaignOptions, indexes: Iterable<number>, onRun?: (f: CampaignFigures) => void): Promise<CampaignFigures> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const figures = emptyFigures();
  const it = indexes[Symbol.iterator]();
  const lane = async (): Promise<void> => {
    for (let n = it.next(); !n.done && Date.now() < (opts.deadlineMs ?? Infinity); n = it.next()) {
      const index = n.value;
      const r = await runSequence(runSteps(opts.seed, index, opts.maxSteps), config);
      figures.runs++;
      figures.events += r.events;
      figures.timers += r.timers;
      for (const k of VOCABULARY) figures.coverage[k] += r.coverage[k];
      for (const k of Object.keys(figures.outcomes) as (keyof RunResult['outcomes'])[]) figures.outcomes[k] += r.outcomes[k];
      if (r.violations.length > 0) figures.failedRuns.push({ index, invariants: [...new Set(r.violations.map((v) => v.invariant))] });
      onRun?.(figures);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 1) }, lane));
  figures.failedRuns.sort((x, y) => x.index - y.index);
  figures.seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  figures.cpuSeconds = (used.user + used.system) / 1e6;
  return figures;
}

/**
 * Shrinks failing run `index`: `fc.check` replays it from its own seed and shrinks it.
 * @returns the minimal sequence, its violations and its text.
 * @throws Error when the run does not fail again (a harness that is not deterministic).
 */
export async function shrinkRun(config: ControllerConfig, opts: CampaignOptions, index: number): Promise<NonNullable<CampaignResult['failure']>> {
  const property = fc.asyncProperty(sequenceArb(opts.maxSteps), async (steps) => (await runSequence(steps, config)).violations.length === 0);
  const seed = runSeed(opts.seed, index);
  const details = await fc.check(property, { numRuns: 1, seed, endOnFailure: false });
  if (!details.failed || !details.counterexample) throw new Error(`fuzz: run ${index} (seed ${seed}) did not fail again when replayed: ${String(details.errorInstance ?? '')}`);
  const [steps] = details.counterexample;
  const replay = await runSequence(steps, config);
  return { index, seed, path: details.counterexamplePath ?? undefined, steps, violations: replay.violations, text: replay.text };
}

/**
 * Runs a campaign in this process.
 * @returns the figures and, on a violation, the first failing run shrunk. Never throws for a violation.
 */
export async function runCampaign(config: ControllerConfig, opts: CampaignOptions): Promise<CampaignResult> {
  const started = performance.now();
  const figures: CampaignResult = await runShare(config, opts, Array.from({ length: opts.runs }, (_, i) => i));
  const first = figures.failedRuns[0];
  if (first) figures.failure = await shrinkRun(config, opts, first.index);
  figures.seconds = (performance.now() - started) / 1000;
  return figures;
}

/** The campaign's figures as text (runs, events, coverage per vocabulary item, outcomes, the failure). */
export function campaignText(r: CampaignResult): string {
  const lines = [
    `runs: ${r.runs}  events: ${r.events}  timers fired: ${r.timers}  wall: ${r.seconds.toFixed(1)} s (${(r.runs / Math.max(r.seconds, 1e-9)).toFixed(1)} runs/s)  CPU: ${r.cpuSeconds.toFixed(1)} s (${(r.runs / Math.max(r.cpuSeconds, 1e-9)).toFixed(1)} runs per CPU-second)`,
    'coverage (events applied per vocabulary item):',
    ...VOCABULARY.map((k) => `  ${k.padEnd(22)} ${r.coverage[k]}`),
    `outcomes: ${r.outcomes.deletions} deletions, ${r.outcomes.forceDeletions} force deletions (terminated pass ${r.outcomes.gcTerminated}, orphans ${r.outcomes.gcOrphaned}), ${r.outcomes.noExecuteTaints} NoExecute taints added, ${r.outcomes.detaches} forced detaches, ${r.outcomes.affinityEvictions} node affinity evictions`,
  ];
  lines.push(`violations: ${r.failedRuns.length} failing run(s)${r.failedRuns.length > 0 ? `: ${r.failedRuns.slice(0, 20).map((f) => `#${f.index} (${f.invariants.join(',')})`).join(' ')}` : ''}`);
  if (r.failure) {
    lines.push(`first failing run #${r.failure.index} (seed ${r.failure.seed}, path ${r.failure.path ?? '-'}) shrunk:`, r.failure.text, 'as data:', JSON.stringify(r.failure.steps));
  }
  return lines.join('\n');
}
