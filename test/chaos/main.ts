/**
 * `npm run chaos -- --scenario N [--scenario M ...] [--json FILE]`: runs chaos scenarios on a
 * private control plane (test/chaos/harness.ts) and prints each one's figures as a table row.
 * Scenarios: 1 (2 s latency), 2 (stalled Lease watch), 3 (APF 429s during a failure wave), 4 (etcd
 * compaction), 5 (leader partitioned), 6 (reset_peer every 10 s), 7 (admission policy denies pod
 * deletions). Default: 2, 3 and 5.
 * `--size ci` runs the CI subset's sizes and durations instead of the fuller ones (each result says
 * the size it ran at).
 * `npm run chaos -- --soak 2h [--size ci] [--out DIR]`: the soak instead (./soak.ts; Go duration
 * syntax), its report written to DIR (default bench/results) as soak-<date>.json, .md and .png.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseGoDuration } from '../../src/util/duration.js';
import { ChaosWorld } from './harness.js';
import { runScenario, formatTable } from './scenarios.js';
import { fullSoak, runSoak, smallSoak, soakMarkdown } from './soak.js';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', multiple: true, default: ['2', '3', '5'] },
    json: { type: 'string' },
    size: { type: 'string', default: 'full' },
    soak: { type: 'string' },
    out: { type: 'string', default: join(import.meta.dirname, '..', '..', 'bench', 'results') },
  },
});
const world = await ChaosWorld.up();
if (values.soak !== undefined) {
  const durationMs = parseGoDuration(values.soak);
  const log = (m: string): void => console.log(`${new Date().toISOString().slice(11, 19)} ${m}`);
  try {
    const report = await runSoak(world, values.size === 'ci' ? smallSoak(durationMs) : fullSoak(durationMs), values.out, log);
    console.log(soakMarkdown(report));
    process.exitCode = report.failures.length === 0 ? 0 : 1;
  } finally {
    await world.down();
  }
} else {
  const results = [];
  let failed = false;
  try {
    for (const n of values.scenario) {
      const r = await runScenario(world, Number(n), values.size === 'ci' ? 'ci' : 'full');
      results.push(r);
      console.log(formatTable([r]));
      if (r.failures.length > 0) {
        failed = true;
        for (const f of r.failures) console.log(`  FAILED: ${f}`);
      }
    }
  } finally {
    await world.down();
  }
  console.log(formatTable(results));
  if (values.json) await writeFile(values.json, JSON.stringify(results, null, 2));
  process.exitCode = failed ? 1 : 0;
}
