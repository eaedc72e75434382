/**
 * `npm run fuzz -- --runs N --seed S [--max-steps M]`: an invariant fuzzing campaign on a simulated
 * clock (./harness.ts). Prints the runs, the events, the coverage of each vocabulary item and the
 * violations (a violation shrunk to a minimal sequence, readable and as JSON); exits 1 on a violation.
 */
import { parseControllerFlags } from '../../src/cli/flags.js';
import { campaignText, runCampaign } from './campaign.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} wants a whole number, got ${process.argv[i + 1] ?? '(nothing)'}`);
  return v;
}

const runs = flag('runs', 100);
const seed = flag('seed', Date.now() % 2 ** 31);
const maxSteps = flag('max-steps', 30);
const config = await parseControllerFlags(['--leader-elect=false', '--secure-port=0'], {});
console.log(`fuzz: ${runs} runs, seed ${seed}, at most ${maxSteps} steps each`);
const r = await runCampaign(config, { runs, seed, maxSteps });
console.log(campaignText(r));
process.exitCode = r.failure ? 1 : 0;
