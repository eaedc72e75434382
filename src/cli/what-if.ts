/**
 * `node-lifecycle-controller what-if`: reads the cluster (list only) or a snapshot file, plays a
 * scenario on our real controllers with a fake clock, and prints what they would do.
 *
 *   node-lifecycle-controller what-if --scenario FILE [--snapshot FILE | --kubeconfig …] [-o text|json] [controller flags…]
 *   node-lifecycle-controller what-if --save-snapshot FILE [--kubeconfig …]
 *
 * Every other flag is a `run` flag (src/cli/flags.ts parses it, with the same names, defaults,
 * NLC_* variables and `--config` file), so a what-if matches a given controller configuration.
 */
import { readFile } from 'node:fs/promises';
import { FlagError, HelpRequested, parseControllerFlags } from './flags.js';
import { loadKubeConfig } from '../kube/client.js';
import { parseScenario } from '../whatif/scenario.js';
import { listCluster, loadSnapshot, saveSnapshot, type ClusterSnapshot } from '../whatif/snapshot.js';
import { runWhatIf } from '../whatif/run.js';
import { whatIfJson, whatIfText } from '../whatif/report.js';

const USAGE = `Usage: node-lifecycle-controller what-if --scenario FILE [--snapshot FILE] [-o text|json] [controller flags]
       node-lifecycle-controller what-if --save-snapshot FILE [--kubeconfig FILE]

Plays a scenario (node failures, Lease pauses, out-of-service taints) on the controller's real logic
with a simulated clock, over the current cluster (read only: lists nodes, leases, pods, daemonsets,
volumeattachments, persistentvolumes and claims; never writes) or a saved snapshot, and prints the
timeline: zone states and pauses, Unknown marking, taints, pod deletions with their owners, detaches.

Flags:
  --scenario FILE        the scenario (YAML; format in docs/what-if.md)
  --snapshot FILE        start from a snapshot written by --save-snapshot instead of the cluster
  --save-snapshot FILE   write the cluster's state to FILE (with --scenario: then run it)
  -o, --output FORMAT    text (default) or json
  every \`run\` flag      e.g. --node-monitor-grace-period, --node-eviction-rate, --controllers,
                         --node-selector, --config; see \`node-lifecycle-controller run --help\`
`;

/** What-if's own flags, taken out of argv before the rest goes to the `run` flag parser. */
interface WhatIfFlags {
  scenario?: string;
  snapshot?: string;
  saveSnapshot?: string;
  output: 'text' | 'json';
  rest: string[];
}

/**
 * Splits what-if's own flags from the `run` flags.
 * @throws {FlagError} for a flag without its value or an unknown `--output`.
 * @throws {HelpRequested} for `--help` / `-h`.
 */
export function splitWhatIfFlags(argv: readonly string[]): WhatIfFlags {
  const out: WhatIfFlags = { output: 'text', rest: [] };
  const own: Record<string, 'scenario' | 'snapshot' | 'saveSnapshot' | 'output'> = {
    scenario: 'scenario',
    snapshot: 'snapshot',
    'save-snapshot': 'saveSnapshot',
    output: 'output',
    o: 'output',
  };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? '';
    if (token === '--help' || token === '-h') throw new HelpRequested(USAGE.trimEnd());
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(token);
    const key = m ? own[m[1] ?? ''] : undefined;
    if (!m || key === undefined) {
      out.rest.push(token);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === '') throw new FlagError(`--${m[1]}: needs a value`, m[1]);
    if (key === 'output') {
      if (value !== 'text' && value !== 'json') throw new FlagError(`--output: must be text or json, got "${value}"`, 'output');
      out.output = value;
    } else out[key] = value;
  }
  return out;
}

/**
 * Runs the command.
 * @param argv arguments after `what-if`.
 * @returns the exit code: 0 after printing the timeline (or writing the snapshot).
 * @throws {FlagError} (exit 2) for bad flags, neither `--scenario` nor `--save-snapshot`, `--snapshot`
 *   with `--save-snapshot`, or an unreadable scenario file; {InputError} (exit 2) for a malformed
 *   scenario (`ScenarioError`: file, line and field) or snapshot; {@link HelpRequested} for `--help`; API errors while listing (exit 1).
 */
export async function runWhatIfCommand(argv: string[]): Promise<number> {
  const flags = splitWhatIfFlags(argv);
  const config = await parseControllerFlags(flags.rest, process.env, { ownFlags: ['scenario', 'snapshot', 'save-snapshot', 'output'] });
  if (!flags.scenario && !flags.saveSnapshot) throw new FlagError('--scenario: required (or --save-snapshot FILE to only write a snapshot)', 'scenario');
  if (flags.snapshot && flags.saveSnapshot) throw new FlagError('--save-snapshot: cannot be combined with --snapshot (it snapshots the live cluster)', 'save-snapshot');
  let scenarioText: string | undefined;
  if (flags.scenario) {
    try {
      scenarioText = await readFile(flags.scenario, 'utf8');
    } catch (err) {
      throw new FlagError(`--scenario: cannot read "${flags.scenario}": ${(err as Error).message}`, 'scenario');
    }
  }
  // Parse before reading the cluster: a typo fails in milliseconds, not after a 100,000-pod list.
  const scenario = scenarioText !== undefined ? parseScenario(scenarioText, flags.scenario) : undefined;
  let snapshot: ClusterSnapshot;
  if (flags.snapshot) snapshot = await loadSnapshot(flags.snapshot);
  else {
    const { snapshot: s, skipped } = await listCluster({ kubeConfig: loadKubeConfig(config.kubeconfig) }, Date.now());
    snapshot = s;
    const skippedText = Object.entries(skipped).map(([k, n]) => `${n} ${k}`);
    if (skippedText.length > 0) process.stderr.write(`what-if: skipped malformed objects: ${skippedText.join(', ')}\n`);
  }
  if (flags.saveSnapshot) {
    await saveSnapshot(flags.saveSnapshot, snapshot);
    process.stderr.write(`what-if: wrote ${flags.saveSnapshot} (${snapshot.nodes.length} nodes, ${snapshot.pods.length} pods)\n`);
  }
  if (!scenario) return 0;
  const result = await runWhatIf(snapshot, scenario, config);
  process.stdout.write(flags.output === 'json' ? `${whatIfJson(result)}\n` : whatIfText(result));
  return 0;
}
