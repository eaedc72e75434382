// @ts-check
/* global process, URL */
/**
 * StrykerJS configuration of the decision cores' mutation testing (docs/safety.md, "Mutation
 * testing"). Do not run it directly: `npm run test:mutation -- --core NAME` (test/mutation/main.ts)
 * sets the environment it reads:
 * - NLC_MUTATION_CORES: comma-separated core names of test/mutation/cores.json (default: all);
 * - NLC_MUTATION_MUTATE: a JSON list of Stryker `mutate` patterns (line ranges of a sample) instead
 *   of the cores' whole files;
 * - NLC_MUTATION_REPORT: the report's base name under reports/mutation/ (gitignored);
 * - NLC_MUTATION_CONCURRENCY: test runner processes (default 2: the machine is shared).
 * The tap runner runs each test file in its own `node --import tsx` process (node:test prints TAP)
 * and records coverage per test file, so each mutant runs only the files that executed its code.
 */
import { readFileSync } from 'node:fs';

const { cores } = JSON.parse(readFileSync(new URL('./cores.json', import.meta.url), 'utf8'));
const wanted = (process.env.NLC_MUTATION_CORES ?? '').split(',').filter(Boolean);
const selected = wanted.length === 0 ? cores : cores.filter((c) => wanted.includes(c.name));
if (selected.length !== (wanted.length || cores.length)) {
  throw new Error(`unknown core in NLC_MUTATION_CORES=${process.env.NLC_MUTATION_CORES}`);
}
const FUZZ = 'test/mutation/fuzz-campaign.test.ts';
const tests = [...new Set([...selected.flatMap((c) => c.tests), ...(selected.some((c) => c.fuzz) ? [FUZZ] : [])])];
const report = process.env.NLC_MUTATION_REPORT ?? 'mutation';

export default {
  testRunner: 'tap',
  tap: {
    testFiles: tests,
    nodeArgs: ['--test-reporter=tap', '--import', 'tsx', '-r', '{{hookFile}}', '{{testFile}}'],
    forceBail: true,
  },
  mutate: process.env.NLC_MUTATION_MUTATE ? JSON.parse(process.env.NLC_MUTATION_MUTATE) : selected.map((c) => c.file),
  coverageAnalysis: 'perTest',
  concurrency: Number(process.env.NLC_MUTATION_CONCURRENCY ?? 2),
  // The fuzz campaign's timers make run time vary on a loaded machine: generous, so a slow run is
  // not taken for a mutant's endless loop.
  timeoutMS: 20000,
  timeoutFactor: 2.5,
  dryRunTimeoutMinutes: 20,
  reporters: ['json', 'html', 'clear-text', 'progress-append-only'],
  jsonReporter: { fileName: `reports/mutation/${report}.json` },
  htmlReporter: { fileName: `reports/mutation/${report}.html` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  // The sandbox needs the sources, the tests, the workspace package and the TypeScript settings.
  ignorePatterns: ['bench/results', 'docs', 'charts', 'reports', 'dist', '.stryker-tmp', 'shared'],
  incremental: false,
  thresholds: { high: 90, low: 75, break: null },
};
