/**
 * One worker process of `npm run fuzz -- --workers N` (./main.ts forks it): plays the runs of the
 * campaign whose index is `worker` modulo `workers`, and sends its figures to the parent, with a
 * progress message every 500 runs. Argument: the JSON of {@link WorkerArgs}.
 */
import { parseControllerFlags } from '../../src/cli/flags.js';
import { FUZZ_FLAGS, runShare, type CampaignFigures, type CampaignOptions } from './campaign.js';

/** What the parent passes: the campaign, and which share of it is this worker's. */
export interface WorkerArgs extends CampaignOptions {
  worker: number;
  workers: number;
}

/** A message to the parent. */
export type WorkerMessage = { kind: 'progress'; runs: number; failed: number } | { kind: 'done'; figures: CampaignFigures };

const args = JSON.parse(process.argv[2] ?? '{}') as WorkerArgs;
const config = await parseControllerFlags([...FUZZ_FLAGS], {});
function* share(): Generator<number> {
  for (let i = args.worker; i < args.runs; i += args.workers) yield i;
}
const send = (m: WorkerMessage): void => void process.send?.(m);
const figures = await runShare(config, args, share(), (f) => {
  if (f.runs % 500 === 0) send({ kind: 'progress', runs: f.runs, failed: f.failedRuns.length });
});
send({ kind: 'done', figures });
process.disconnect?.();
