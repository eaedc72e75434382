/**
 * `npm run chaos -- --scenario N [--scenario M ...] [--json FILE]`: runs chaos scenarios on a
 * private control plane (test/chaos/harness.ts) and prints each one's figures as a table row.
 * Scenarios: 1 (2 s latency), 2 (stalled Lease watch), 3 (APF 429s during a failure wave), 4 (etcd
 * compaction), 5 (leader partitioned), 6 (reset_peer every 10 s), 7 (admission policy denies pod
 * deletions); the soak is not written yet. Default: 2, 3 and 5.
 * `--size ci` runs the CI subset's sizes and durations instead of the fuller ones (each result says
 * the size it ran at).
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ChaosWorld } from './harness.js';
import { runScenario, formatTable } from './scenarios.js';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', multiple: true, default: ['2', '3', '5'] },
    json: { type: 'string' },
    size: { type: 'string', default: 'full' },
  },
});
const world = await ChaosWorld.up();
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
