/**
 * Pure parsing helpers of the bench's command line.
 */
import yargs, { type Argv } from 'yargs';
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import type { ControllerKind, SharedControllerFlags } from './procs.js';

/**
 * The node options ours runs with by default in the bench: the same V8 young-generation cap as the
 * image's ENTRYPOINT (Dockerfile, checked by test/unit/dockerfile.test.ts), so that the bench measures
 * what the chart deploys. Issue 18: Node 24 otherwise grows each semi-space to 64 MiB (128 MiB of RSS).
 */
/** The controller flags bench/run.ts passes both controllers unless told otherwise (its option defaults). */
export const DEFAULT_CONTROLLER_FLAGS: Readonly<SharedControllerFlags> = {
  nodeMonitorPeriod: '5s',
  nodeMonitorGracePeriod: '20s',
  nodeStartupGracePeriod: '1m',
  nodeEvictionRate: 100,
  secondaryNodeEvictionRate: 100,
  kubeApiQps: 20,
  kubeApiBurst: 30,
};

export const OURS_NODE_OPTIONS = '--max-semi-space-size=16';

/** Node options as given on a command line: space-separated words, empty ones dropped. Pure. */
export function splitNodeOptions(options: string): string[] {
  return options.split(/\s+/).filter((o) => o !== '');
}

/**
 * A `--node-options`-style value: `;`-separated variants, each space-separated node options (an
 * empty variant is none), as bench/startup.ts and bench/wire-decode.ts take it. Pure.
 * @returns one argument list per variant, in the order given.
 */
export function nodeOptionVariants(value: string): string[][] {
  return value.split(';').map(splitNodeOptions);
}

/** How a variant of {@link nodeOptionVariants} is named in a report: its options, or `no node options`. Pure. */
export function nodeOptionsLabel(nodeArgs: readonly string[]): string {
  return nodeArgs.join(' ') || 'no node options';
}

/**
 * The scenarios, in issue 9's order, then issue 18's failure wave at the default API QPS, then
 * issue 29's limits scenario (5,000 nodes × 30 pods by default: hours, so never run unless asked).
 */
export const SCENARIOS = ['steady', 'failure', 'eviction', 'scale', 'failure-qps', 'limits'] as const;
/** A scenario name. */
export type Scenario = (typeof SCENARIOS)[number];
/** What `npm run bench` runs without `--scenario`: every scenario but `limits`. */
export const DEFAULT_SCENARIOS: readonly Scenario[] = SCENARIOS.filter((s) => s !== 'limits');

/**
 * Parses `kind=weight,…` into a pod mix. Pure.
 * @throws {Error} for an unknown kind or a non-numeric weight.
 */
export function parsePodMix(text: string): PodMix {
  const kinds = ['plain', 'tolerationSeconds', 'tolerateForever', 'daemonSet', 'pvc'];
  const mix: Record<string, number> = {};
  for (const part of text.split(',').filter(Boolean)) {
    const [k = '', w = ''] = part.split('=');
    if (!kinds.includes(k) || !Number.isFinite(Number(w)) || Number(w) < 0) throw new Error(`--pod-mix: bad entry "${part}" (kinds: ${kinds.join(', ')})`);
    mix[k] = Number(w);
  }
  return mix;
}

/**
 * Parses `--scenario` (names or numbers 1–6, comma-separated). Pure.
 * @throws {Error} for an unknown scenario.
 */
export function parseScenarios(text: string): Scenario[] {
  const out: Scenario[] = [];
  for (const s of text.split(',').map((x) => x.trim()).filter(Boolean)) {
    const name = /^[1-6]$/.test(s) ? SCENARIOS[Number(s) - 1] : (SCENARIOS as readonly string[]).includes(s) ? (s as Scenario) : undefined;
    if (!name) throw new Error(`--scenario: unknown "${s}" (one of ${SCENARIOS.join(', ')} or 1–6)`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** Controller order of repetition `i`: alternates so neither always goes first. */
export function orderOf(i: number): ControllerKind[] {
  return i % 2 === 0 ? ['upstream', 'ours'] : ['ours', 'upstream'];
}


/**
 * Parses `--scale-nodes`: comma-separated `N` or `NxP` (N nodes, P pods per node). Pure.
 * @throws {Error} for anything else.
 */
export function parseScaleSizes(text: string): { nodes: number; podsPerNode: number | undefined }[] {
  return text.split(',').map((part) => {
    const m = /^(\d+)(?:x(\d+))?$/.exec(part.trim());
    if (!m || Number(m[1]) < 1) throw new Error(`--scale-nodes: bad entry "${part}" (N or NxP)`);
    return { nodes: Number(m[1]), podsPerNode: m[2] === undefined ? undefined : Number(m[2]) };
  });
}

/**
 * The yargs parser every bench script starts from: strict, no process exit (the script returns
 * its own exit code), no `--version`, and usage errors thrown as one-line `Error`s.
 * Callers must check `argv.help` after parsing: with `exitProcess(false)`, yargs prints the help
 * and returns instead of exiting.
 * @param args the command line without `node` and the script (`process.argv.slice(2)`).
 * @returns the parser, ready for `.options(...)`.
 */
export function benchParser(args: readonly string[]): Argv {
  return yargs([...args])
    .strict()
    .exitProcess(false)
    .version(false)
    .fail((msg: string | undefined, err: Error | undefined) => {
      throw new Error(msg ?? err?.message ?? 'invalid arguments');
    });
}
