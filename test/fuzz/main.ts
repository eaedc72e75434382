/**
 * `npm run fuzz -- --runs N --seed S [--max-steps M] [--workers W] [--concurrency C] [--max-seconds T]`: an invariant
 * fuzzing campaign on a simulated clock (./harness.ts). `--workers` spreads the runs over W
 * processes (./worker.ts; run i goes to worker i mod W, and a run's sequence depends only on S and
 * i, so the figures do not depend on W); `--concurrency` is the runs in flight per process (default 4: measured the cheapest in CPU per run, see docs/safety.md "Speed");
 * `--max-seconds` starts no run after T seconds (a campaign bounded by time reports the runs made);
 * `--no-shrink` (with `--workers`) lists the failing runs without shrinking the first. Prints
 * the runs, the events, the coverage of each vocabulary item and the violations (the first failing
 * run shrunk to a minimal sequence, readable and as JSON); exits 1 on a violation.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { FUZZ_FLAGS, campaignText, emptyFigures, mergeFigures, runCampaign, shrinkRun, type CampaignFigures, type CampaignOptions, type CampaignResult } from './campaign.js';
import type { WorkerArgs, WorkerMessage } from './worker.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} wants a whole number, got ${process.argv[i + 1] ?? '(nothing)'}`);
  return v;
}

/** Forks one worker and resolves with its figures. @throws Error when it exits without them. */
function runWorker(args: WorkerArgs): Promise<CampaignFigures> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./worker.ts', import.meta.url)), [JSON.stringify(args)], { execArgv: ['--import', 'tsx'] });
    let figures: CampaignFigures | undefined;
    child.on('message', (m: WorkerMessage) => {
      if (m.kind === 'done') figures = m.figures;
      else console.error(`  worker ${args.worker}: ${m.runs} runs, ${m.failed} failing`);
    });
    child.on('exit', (code) => (figures ? resolve(figures) : reject(new Error(`fuzz: worker ${args.worker} exited ${code ?? '?'} without figures`))));
  });
}

const opts: CampaignOptions = { runs: flag('runs', 100), seed: flag('seed', Date.now() % 2 ** 31), maxSteps: flag('max-steps', 30), concurrency: flag('concurrency', 4) };
const maxSeconds = flag('max-seconds', 0);
if (maxSeconds > 0) opts.deadlineMs = Date.now() + maxSeconds * 1000;
const workers = Math.max(1, flag('workers', 1));
// With --no-shrink a campaign lists its failing runs and leaves shrinking to a later replay.
const noShrink = process.argv.includes('--no-shrink');
const config = await parseControllerFlags([...FUZZ_FLAGS], {});
console.log(`fuzz: ${opts.runs} runs, seed ${opts.seed}, at most ${opts.maxSteps} steps each, ${workers} worker(s) × ${opts.concurrency} in flight`);
let r: CampaignResult;
if (workers === 1) {
  r = await runCampaign(config, opts);
} else {
  const started = performance.now();
  r = emptyFigures();
  for (const f of await Promise.all(Array.from({ length: workers }, (_, worker) => runWorker({ ...opts, worker, workers })))) mergeFigures(r, f);
  r.seconds = (performance.now() - started) / 1000;
  const first = r.failedRuns[0];
  if (first && !noShrink) r.failure = await shrinkRun(config, opts, first.index);
}
console.log(campaignText(r));
process.exitCode = r.failedRuns.length > 0 ? 1 : 0;
