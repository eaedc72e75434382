/**
 * `npm run test:mutation -- [--core NAME]... [--sample LINES] [--seed S] [--concurrency C] [--check]`
 *
 * Mutation testing of the decision cores (issue 57 section 4; docs/safety.md, "Mutation testing"):
 * runs StrykerJS (test/mutation/stryker.config.mjs) on each core of test/mutation/cores.json, one
 * core at a time under its own unit tests and the fixed-seed fuzz campaign, and prints each core's
 * figures as a Markdown row (mutants, killed, survived, timed out, no coverage, score) and each
 * mutant that was not detected, marked with its verdict from test/mutation/equivalent.json.
 *
 * - `--core NAME` (repeatable; default: every core) the cores to run, by their cores.json name.
 * - `--sample LINES` mutate only LINES code lines of each core, drawn with a seeded generator
 *   (`--seed`, default 57) from its lines that are neither blank, comments nor imports; the
 *   sample is the same for the same seed and file.
 * - `--check` exit 1 when a mutant survives (or has no coverage) that equivalent.json does not
 *   list as equivalent: a weakened test or a new untested branch fails the run (CI runs a sample
 *   with it).
 * - `--report-only` run nothing: read the cores' last reports and print their figures; where
 *   reports/mutation/<core>.rerun.json exists (a re-run of the survivors' lines after tests were
 *   added), its statuses replace the full run's for the mutants it tested again.
 * - `--report NAME` read or write reports/mutation/NAME.json instead of the core's name (`sample`
 *   for a sample).
 * Reports: reports/mutation/<core>.json and .html (gitignored). Exit 2 on a bad flag.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { seededRandom } from '../support/seeded-random.js';

interface Core {
  name: string;
  file: string;
  fuzz: boolean;
  tests: string[];
  /** false: `--check` reports this core's untriaged survivors without failing (a core not yet triaged). */
  check?: boolean;
}

/** One entry of equivalent.json: a mutant judged equivalent (or not worth a test), found again by its text, not its line. */
interface Equivalent {
  file: string;
  mutator: string;
  /** The source text the mutant replaces (whitespace collapsed). */
  original: string;
  replacement: string;
  /** When the same original and replacement occur more than once in the file: text the mutant's first line must contain. */
  line?: string;
  why: string;
}

/** The parts of Stryker's JSON report (mutation-testing-report-schema) read here. */
interface StrykerMutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}
interface StrykerReport {
  files: Record<string, { source: string; mutants: StrykerMutant[] }>;
}

const here = new URL('.', import.meta.url);
const { cores } = JSON.parse(readFileSync(new URL('cores.json', here), 'utf8')) as { cores: Core[] };
const equivalents = (JSON.parse(readFileSync(new URL('equivalent.json', here), 'utf8')) as { equivalents: Equivalent[] }).equivalents;

/** Collapses whitespace, so a re-indented line still matches its equivalent.json entry. */
function squash(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** The source text a mutant replaces (the report's lines and columns are 1-based). */
function originalOf(source: string, m: StrykerMutant): string {
  const lines = source.split('\n');
  const start = { line: m.location.start.line, column: m.location.start.column - 1 };
  const end = { line: m.location.end.line, column: m.location.end.column - 1 };
  if (start.line === end.line) return (lines[start.line - 1] ?? '').slice(start.column, end.column);
  const first = (lines[start.line - 1] ?? '').slice(start.column);
  const middle = lines.slice(start.line, end.line - 1);
  const last = (lines[end.line - 1] ?? '').slice(0, end.column);
  return [first, ...middle, last].join('\n');
}


/**
 * Lines that hold no mutant: a field or parameter declaration (`name?: Type;` or `name: Type,`),
 * the head of an interface, type or function, the close of a signature (`): Type {`), a
 * declaration without a value or with a number (Stryker does not mutate numbers).
 */
const DECLARATION = /^(readonly )?[\w$#]+\??: [^=(]*[;,]$|^(export )?(interface|type) |^\)(: .*)? \{$|^(export )?(async )?function |^(let|const) [\w$]+(: [^=]*)?( = \d+)?;$/;

/** `count` code lines of `file` (1-based), drawn without replacement from a generator seeded `seed` and the file's name. */
function sampleLines(file: string, count: number, seed: number): number[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  let inComment = false;
  const code: number[] = [];
  lines.forEach((raw, i) => {
    const l = raw.trim();
    if (inComment) {
      if (l.includes('*/')) inComment = false;
      return;
    }
    if (l.startsWith('/*')) {
      inComment = !l.includes('*/');
      return;
    }
    if (l === '' || l.startsWith('//') || l.startsWith('import ') || l === '}' || l === '});' || l === '};' || l === '} else {' || DECLARATION.test(l)) return;
    code.push(i + 1);
  });
  let h = seed;
  for (const ch of file) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  const rnd = seededRandom(h); // mulberry32: a sample is the same on every machine
  for (let i = code.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [code[i], code[j]] = [code[j] as number, code[i] as number];
  }
  return code.slice(0, count).sort((a, b) => a - b);
}

interface Figures {
  mutants: number;
  killed: number;
  survived: number;
  timeout: number;
  noCoverage: number;
  other: number;
  /** Survived or no coverage and not listed in equivalent.json. */
  untriaged: string[];
  equivalent: number;
}

/** Reads a report: per mutated file, its figures and the text of every mutant not detected, with its verdict. */
function readReport(path: string, overlayPath?: string): Map<string, { figures: Figures; lines: string[] }> {
  const report = JSON.parse(readFileSync(path, 'utf8')) as StrykerReport;
  if (overlayPath !== undefined) overlay(report, JSON.parse(readFileSync(overlayPath, 'utf8')) as StrykerReport);
  const out = new Map<string, { figures: Figures; lines: string[] }>();
  for (const [file, { source, mutants }] of Object.entries(report.files)) {
    const f: Figures = { mutants: 0, killed: 0, survived: 0, timeout: 0, noCoverage: 0, other: 0, untriaged: [], equivalent: 0 };
    const lines: string[] = [];
    for (const m of [...mutants].sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)) {
      f.mutants++;
      if (m.status === 'Killed') f.killed++;
      else if (m.status === 'Timeout') f.timeout++;
      else if (m.status === 'Survived') f.survived++;
      else if (m.status === 'NoCoverage') f.noCoverage++;
      else f.other++;
      if (m.status !== 'Survived' && m.status !== 'NoCoverage') continue;
      const original = squash(originalOf(source, m));
      const replacement = squash(m.replacement ?? '');
      const lineText = squash(source.split('\n')[m.location.start.line - 1] ?? '');
      const eq = equivalents.find(
        (e) =>
          e.file === file &&
          e.mutator === m.mutatorName &&
          squash(e.original) === original &&
          squash(e.replacement) === replacement &&
          (e.line === undefined || lineText.includes(squash(e.line))),
      );
      const text = `${file}:${m.location.start.line}:${m.location.start.column} ${m.status} ${m.mutatorName}: ${JSON.stringify(original.slice(0, 120))} -> ${JSON.stringify(replacement.slice(0, 120))}`;
      if (eq) {
        f.equivalent++;
        lines.push(`  equivalent ${text}\n      ${eq.why}`);
      } else {
        f.untriaged.push(text);
        lines.push(`  UNTRIAGED  ${text}`);
      }
    }
    out.set(file, { figures: f, lines });
  }
  return out;
}

/** A mutant's identity across runs of the same source: where it is and what it does. */
function mutantKey(m: StrykerMutant): string {
  return `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column} ${m.mutatorName} ${m.replacement ?? ''}`;
}

/**
 * Replaces the status of each mutant of `base` that `rerun` tested again (a re-run of the lines of
 * the survivors, after tests were added: `NLC_MUTATION_MUTATE` with their line ranges). Tests are
 * only ever added, so a mutant killed in `base` stays killed; the re-run says what became of the rest.
 * @throws Error when the two reports were made from different sources of a file.
 */
function overlay(base: StrykerReport, rerun: StrykerReport): void {
  for (const [file, r] of Object.entries(rerun.files)) {
    const b = base.files[file];
    if (b === undefined) continue;
    if (b.source !== r.source) throw new Error(`${file}: the re-run was made from another version of the file than the full run`);
    const statuses = new Map(r.mutants.map((m) => [mutantKey(m), m.status]));
    for (const m of b.mutants) m.status = statuses.get(mutantKey(m)) ?? m.status;
  }
}

/** Stryker's score: detected (killed + timed out) over valid mutants, in percent. */
function score(f: Figures): string {
  const valid = f.killed + f.timeout + f.survived + f.noCoverage;
  return valid === 0 ? 'n/a' : ((100 * (f.killed + f.timeout)) / valid).toFixed(1);
}

function main(): number {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        core: { type: 'string', multiple: true },
        sample: { type: 'string' },
        seed: { type: 'string', default: '57' },
        concurrency: { type: 'string', default: '2' },
        check: { type: 'boolean', default: false },
        'report-only': { type: 'boolean', default: false },
        report: { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`test:mutation: ${(err as Error).message}`);
    return 2;
  }
  const names = values.core ?? cores.map((c) => c.name);
  const unknown = names.filter((n) => !cores.some((c) => c.name === n));
  const sample = values.sample === undefined ? undefined : Number(values.sample);
  const seed = Number(values.seed);
  if (unknown.length > 0) {
    console.error(`test:mutation: unknown core ${unknown.join(', ')} (known: ${cores.map((c) => c.name).join(', ')})`);
    return 2;
  }
  if ((sample !== undefined && !(Number.isInteger(sample) && sample > 0)) || !Number.isInteger(seed) || !/^[12]$/.test(values.concurrency)) {
    console.error('test:mutation: --sample must be a positive integer, --seed an integer, --concurrency 1 or 2');
    return 2;
  }
  const rows: string[] = [];
  const details: string[] = [];
  let untriaged = 0;
  /** Adds the rows of the cores `batch` from the report `report`, run in `seconds` (undefined: not run now). */
  const record = (batch: Core[], report: string, seconds: number | undefined): void => {
    const path = `reports/mutation/${report}.json`;
    if (!existsSync(path)) {
      for (const core of batch) rows.push(`| \`${core.file}\` | not run |||||||||`);
      return;
    }
    const rerun = `reports/mutation/${report}.rerun.json`;
    const perFile = readReport(path, seconds === undefined && existsSync(rerun) ? rerun : undefined);
    for (const core of batch) {
      const r = perFile.get(core.file);
      if (r === undefined) {
        rows.push(`| \`${core.file}\` | no mutant in the sample |||||||||`);
        continue;
      }
      const f = r.figures;
      if (core.check !== false) untriaged += f.untriaged.length;
      else if (f.untriaged.length > 0) details.push(`${core.file}: not checked (cores.json "check": false): its untriaged survivors do not fail --check`);
      const time = seconds === undefined ? '—' : batch.length > 1 ? `${seconds} s (all)` : `${seconds} s`;
      rows.push(`| \`${core.file}\` | ${f.mutants} | ${f.killed} | ${f.survived} | ${f.timeout} | ${f.noCoverage} | ${score(f)} % | ${f.equivalent} | ${f.untriaged.length} | ${time} |`);
      details.push(`${core.file}: ${f.survived + f.noCoverage} not detected`, ...r.lines);
    }
  };
  const selected = names.map((n) => cores.find((c) => c.name === n) as Core);
  // A full run goes one core at a time (its own dry run and report); a sample runs every selected
  // core in one Stryker run, so the dry run of their tests is paid once.
  const batches = sample === undefined ? selected.map((c) => [c]) : [selected];
  for (const batch of batches) {
    const report = values.report ?? (sample === undefined ? (batch[0] as Core).name : 'sample');
    if (values['report-only']) {
      record(batch, report, undefined);
      continue;
    }
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NLC_MUTATION_CORES: batch.map((c) => c.name).join(','),
      NLC_MUTATION_REPORT: report,
      NLC_MUTATION_CONCURRENCY: values.concurrency,
    };
    if (sample !== undefined) env.NLC_MUTATION_MUTATE = JSON.stringify(batch.flatMap((c) => sampleLines(c.file, sample, seed).map((l) => `${c.file}:${l}-${l}`)));
    console.log(`[mutation] ${batch.map((c) => c.file).join(', ')}${sample === undefined ? '' : ` (${sample} sampled lines each, seed ${seed})`}`);
    const started = Date.now();
    const run = spawnSync('stryker', ['run', 'test/mutation/stryker.config.mjs'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    if (run.status !== 0) {
      console.error(`[mutation] stryker exited ${run.status ?? run.signal}`);
      return 1;
    }
    record(batch, report, Math.round((Date.now() - started) / 1000));
  }
  console.log('\n| core | mutants | killed | survived | timed out | no coverage | score | equivalent | untriaged | time |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log('');
  for (const d of details) console.log(d);
  if (values.check && untriaged > 0) {
    console.error(`\n[mutation] ${untriaged} surviving mutant(s) not listed in test/mutation/equivalent.json: kill each with a test, or list it there with why it is equivalent`);
    return 1;
  }
  return 0;
}

process.exitCode = main();
