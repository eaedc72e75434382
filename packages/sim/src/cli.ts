/**
 * `npm run sim -- …` (this package's `sim` command): run a simulated kubelet fleet against a cluster from the
 * command line, print a stats line every 10 s, and take fault commands on stdin.
 */
import { createInterface, type Interface } from 'node:readline';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import yargs from 'yargs';
import { pino } from 'pino';
import { loadKubeConfig, makeClients, describeError, type KubeClients } from '../../../src/kube/client.js';
import { parseGoDuration, formatGoDuration } from '../../../src/util/duration.js';
import { Fleet, resolveFleetOptions, type FleetOptions } from './fleet.js';
import {
  EVICTION_FLAGS, evictionConfigFromFlags, type EvictionConfig, type KubeletEvictionConfiguration,
} from '../../../src/kubelet/thresholds.js';
import { applySimCommand, CommandSyntaxError, formatStats, parseSimCommand } from './commands.js';

/** Where the CLI writes and reads; injectable for tests. */
export interface SimCliIo {
  /** one line of normal output */
  out: (line: string) => void;
  /** one line of error output */
  err: (line: string) => void;
  /** command input; default `process.stdin` */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Thrown for bad command-line input; maps to exit code 2. */
class UsageError extends Error {}

/** Interval of the periodic stats line, milliseconds. */
const STATS_EVERY_MS = 10_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function durationMs(flag: string, text: string, opts: { min?: number; wholeSeconds?: boolean } = {}): number {
  let ms: number;
  try {
    ms = parseGoDuration(text);
  } catch (err) {
    throw new UsageError(`--${flag}: ${describeError(err)}`);
  }
  if (ms <= (opts.min ?? 0)) throw new UsageError(`--${flag}: must be positive, got ${text}`);
  if (opts.wholeSeconds && ms % 1000 !== 0) throw new UsageError(`--${flag}: must be whole seconds, got ${text}`);
  return ms;
}

/** How a numeric flag's value reads in an error (yargs turns non-numbers into NaN). */
const shown = (v: number): string => (Number.isNaN(v) ? 'a non-number' : String(v));

function intFlag(flag: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min) throw new UsageError(`--${flag}: must be an integer >= ${min}, got ${shown(v)}`);
  return v;
}

function weightFlag(flag: string, v: number): number {
  if (!Number.isFinite(v) || v < 0) throw new UsageError(`--${flag}: must be a non-negative number, got ${shown(v)}`);
  return v;
}

/** The `sim` flags, as yargs options. */
const SIM_OPTIONS = {
  kubeconfig: { type: 'string', describe: 'kubeconfig file (default: $KUBECONFIG or ~/.kube/config)' },
  zones: { type: 'number', default: 3, describe: 'number of zones' },
  'nodes-per-zone': { type: 'number', default: 10, describe: 'nodes in each zone' },
  'pods-per-node': { type: 'number', default: 5, describe: 'pods bound to each node (0-110)' },
  prefix: { type: 'string', default: 'sim', describe: 'fleet prefix: node names are PREFIX-ZONE-I; label nlc.sim/fleet=PREFIX' },
  namespace: { type: 'string', default: 'nlc-sim', describe: 'namespace for pods, PVCs and DaemonSets' },
  region: { type: 'string', default: 'region-1', describe: 'region label value' },
  'lease-duration': { type: 'string', default: '40s', describe: 'Lease leaseDurationSeconds (Go duration, whole seconds)' },
  'lease-renew-interval': { type: 'string', default: '10s', describe: 'Lease renew interval (Go duration)' },
  'node-status-update-frequency': {
    type: 'string',
    default: '5m',
    describe: "period of unconditional NodeStatus posts (kubelet's nodeStatusReportFrequency; changes are posted at once)",
  },
  'mix-plain': { type: 'number', default: 1, describe: 'weight of plain pods (API server adds 300s tolerations)' },
  'mix-toleration-seconds': { type: 'number', default: 1, describe: 'weight of pods with explicit tolerationSeconds' },
  'mix-tolerate-forever': { type: 'number', default: 1, describe: 'weight of pods tolerating not-ready/unreachable forever' },
  'mix-daemonset': { type: 'number', default: 1, describe: 'weight of DaemonSet-owned pods' },
  'mix-pvc': { type: 'number', default: 1, describe: 'weight of pods with a CSI PVC, PV and VolumeAttachment' },
  'toleration-seconds': { type: 'number', default: 30, describe: 'tolerationSeconds of the explicit-toleration pods (seconds)' },
  'write-concurrency': { type: 'number', default: 32, describe: 'maximum concurrent writes creating objects and injecting faults' },
  'heartbeat-concurrency': { type: 'number', default: 128, describe: 'maximum concurrent Lease renewals and status posts' },
  duration: { type: 'string', describe: 'run this long (Go duration), then exit; default: until SIGINT/SIGTERM' },
  cleanup: { type: 'boolean', default: false, describe: 'delete the fleet on exit' },
  'commands-from-stdin': { type: 'boolean', default: false, describe: 'read fault commands from stdin even when it is not a TTY' },
  'log-level': { type: 'string', default: 'warn', choices: LOG_LEVELS, describe: 'simulator log level (logs go to stderr)' },
  // The simulated kubelets' node-pressure eviction, under the kubelet's own flag names (packages/sim/src/evictionmanager.ts).
  'kubelet-server': { type: 'boolean', default: false, describe: 'serve each node\'s /stats/summary and /configz over HTTPS (one port per node on this machine\'s address) so that kubectl get --raw /api/v1/nodes/NODE/proxy/stats/summary works' },
  'kubelet-config': { type: 'string', describe: 'KubeletConfiguration file (YAML/JSON); its eviction fields (evictionHard, evictionSoft, ...) configure the simulated kubelets' },
  'eviction-hard': { type: 'string', describe: 'kubelet --eviction-hard, e.g. memory.available<100Mi,nodefs.available<10% (setting it drops the other defaults)' },
  'eviction-soft': { type: 'string', describe: 'kubelet --eviction-soft, e.g. memory.available<1.5Gi' },
  'eviction-soft-grace-period': { type: 'string', describe: 'kubelet --eviction-soft-grace-period, e.g. memory.available=1m30s' },
  'eviction-max-pod-grace-period': { type: 'string', describe: 'kubelet --eviction-max-pod-grace-period (seconds)' },
  'eviction-minimum-reclaim': { type: 'string', describe: 'kubelet --eviction-minimum-reclaim, e.g. memory.available=0Mi,nodefs.available=500Mi' },
  'eviction-pressure-transition-period': { type: 'string', describe: 'kubelet --eviction-pressure-transition-period (Go duration; default 5m)' },
} as const;

/**
 * Names the offending command-line words for yargs' strict-mode failure, whose own message
 * reports `--no-foo` as `foo, foo` (boolean negation and camel-case expansion).
 */
function unknownArgumentsMessage(args: string[], known: ReadonlySet<string>): string | undefined {
  const bad: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (word === '--') break;
    if (!word.startsWith('-')) {
      const prev = args[i - 1];
      // A word right after a `--flag` is taken as that flag's value.
      if (prev?.startsWith('-') && !prev.includes('=')) continue;
      bad.push(word);
      continue;
    }
    const name = word.replace(/^-+/, '').split('=')[0] as string;
    if (!known.has(name) && !(name.startsWith('no-') && known.has(name.slice(3)))) bad.push(word);
  }
  if (bad.length === 0) return undefined;
  return `unknown argument${bad.length > 1 ? 's' : ''} ${bad.join(' ')} (see --help)`;
}

function buildParser(args: string[]) {
  return yargs(args)
    .parserConfiguration({ 'camel-case-expansion': false })
    .scriptName('npm run sim --')
    .usage('$0 [options]\n\nRun a simulated kubelet fleet against a cluster. Fault commands are read from stdin (type help).')
    .strict()
    .exitProcess(false)
    .version(false)
    .help()
    .wrap(null)
    .fail((msg: string | undefined, err: Error | undefined) => {
      throw new UsageError(msg ?? err?.message ?? 'invalid arguments');
    })
    .options(SIM_OPTIONS);
}

/**
 * The simulated kubelets' eviction configuration from `--kubelet-config` and the kubelet's eviction flags (flags win).
 * @throws Error (one line) for an unreadable file or an invalid value
 */
function evictionFlags(parsed: Readonly<Record<string, unknown>>): EvictionConfig {
  let base: KubeletEvictionConfiguration = {};
  const file = parsed['kubelet-config'];
  if (typeof file === 'string') {
    const doc = yaml.load(readFileSync(file, 'utf8'));
    if (doc === null || typeof doc !== 'object') throw new Error(`--kubelet-config ${file}: not a KubeletConfiguration object`);
    base = doc as KubeletEvictionConfiguration;
  }
  const flags: Record<string, string> = {};
  for (const name of EVICTION_FLAGS) {
    const v = parsed[name];
    if (typeof v === 'string') flags[name] = v;
  }
  return evictionConfigFromFlags(flags, base);
}

/**
 * Runs the `sim` subcommand.
 * @param argv the arguments after `sim` (a leading `sim` is ignored), for example `['--zones', '3']`.
 * @param io output and input streams; default stdout, stderr and stdin.
 * @returns the exit code: 0 on a clean run (or `--help`), 2 for bad command-line input (one-line
 *   message on stderr), 1 when the cluster cannot be reached or the fleet cannot be created.
 *   Never throws.
 */
export async function runSimCommand(argv: string[], io?: SimCliIo): Promise<number> {
  const out = io?.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const err = io?.err ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const args = argv[0] === 'sim' ? argv.slice(1) : argv;

  let options: Omit<FleetOptions, 'clients'>;
  let kubeconfig: string | undefined;
  let runForMs: number | undefined;
  let cleanup: boolean;
  let commandsFromStdin: boolean;
  let logLevel: string;
  try {
    const parsed = await buildParser(args).parseAsync();
    if (parsed.help) return 0;
    kubeconfig = parsed.kubeconfig;
    runForMs = parsed.duration !== undefined ? durationMs('duration', parsed.duration) : undefined;
    cleanup = parsed.cleanup;
    commandsFromStdin = parsed['commands-from-stdin'];
    logLevel = parsed['log-level'];
    options = {
      prefix: parsed.prefix,
      namespace: parsed.namespace,
      region: parsed.region,
      zones: intFlag('zones', parsed.zones, 1),
      nodesPerZone: intFlag('nodes-per-zone', parsed['nodes-per-zone'], 1),
      podsPerNode: intFlag('pods-per-node', parsed['pods-per-node'], 0),
      leaseDurationSeconds: durationMs('lease-duration', parsed['lease-duration'], { wholeSeconds: true }) / 1000,
      leaseRenewIntervalMs: durationMs('lease-renew-interval', parsed['lease-renew-interval']),
      nodeStatusUpdateFrequencyMs: durationMs('node-status-update-frequency', parsed['node-status-update-frequency']),
      podMix: {
        plain: weightFlag('mix-plain', parsed['mix-plain']),
        tolerationSeconds: weightFlag('mix-toleration-seconds', parsed['mix-toleration-seconds']),
        tolerateForever: weightFlag('mix-tolerate-forever', parsed['mix-tolerate-forever']),
        daemonSet: weightFlag('mix-daemonset', parsed['mix-daemonset']),
        pvc: weightFlag('mix-pvc', parsed['mix-pvc']),
      },
      tolerationSeconds: intFlag('toleration-seconds', parsed['toleration-seconds'], 0),
      writeConcurrency: intFlag('write-concurrency', parsed['write-concurrency'], 1),
      heartbeatConcurrency: intFlag('heartbeat-concurrency', parsed['heartbeat-concurrency'], 1),
      eviction: evictionFlags(parsed),
      kubeletServer: parsed['kubelet-server'] === true,
    };
  } catch (e) {
    // yargs' messages can span lines; the CLI promises one.
    const message = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').trim();
    const known = new Set([...Object.keys(SIM_OPTIONS), 'help']);
    const unknown = /^Unknown argument/.test(message) ? unknownArgumentsMessage(args, known) : undefined;
    err(`error: ${unknown ?? message}`);
    return 2;
  }

  try {
    resolveFleetOptions(options);
  } catch (e) {
    err(`error: ${describeError(e)}`);
    return 2;
  }
  const logger = pino({ level: logLevel, base: { component: 'sim' } }, pino.destination(2));
  let clients: KubeClients;
  try {
    clients = makeClients(loadKubeConfig(kubeconfig));
  } catch (e) {
    err(`error: cannot load kubeconfig${kubeconfig ? ` ${kubeconfig}` : ''}: ${describeError(e)}`);
    return 1;
  }
  const fleet = new Fleet({ ...options, logger, onProgress: (m) => out(`sim: ${m}`), clients });

  const total = fleet.nodeNames().length;
  out(
    `sim: starting fleet "${fleet.prefix}": ${fleet.zones().length} zones x ${total / fleet.zones().length} nodes, ` +
      `${options.podsPerNode} pods/node, namespace ${fleet.namespace}, lease renew ${formatGoDuration(options.leaseRenewIntervalMs ?? 0)}`,
  );
  const startedAt = Date.now();
  try {
    await fleet.start();
  } catch (e) {
    err(`error: could not start the fleet: ${describeError(e)}`);
    await (cleanup ? fleet.cleanup().catch(() => undefined) : fleet.stop());
    return 1;
  }
  out(`sim: fleet up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; ${fleet.stats().pods} pods. Stats every 10 s.`);

  // A ref'd interval keeps the process alive: the simulator's own timers are unref'd.
  const statsTimer = setInterval(() => out(`sim stats: ${formatStats(fleet.stats())}`), STATS_EVERY_MS);
  let finish: (reason: string) => void = () => undefined;
  const finished = new Promise<string>((resolve) => (finish = resolve));
  const onSignal = (sig: NodeJS.Signals) => finish(sig);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const runTimer = runForMs !== undefined ? setTimeout(() => finish('duration elapsed'), runForMs) : undefined;

  const stdin = io?.stdin ?? process.stdin;
  let rl: Interface | undefined;
  if (stdin.isTTY || commandsFromStdin) {
    rl = createInterface({ input: stdin, terminal: false });
    out('sim: reading fault commands from stdin; type help');
    // Commands run one at a time, in order, so `kill` then `revive` never race.
    let chain = Promise.resolve();
    rl.on('line', (line) => {
      chain = chain.then(async () => {
        try {
          const cmd = parseSimCommand(line);
          if (cmd.op === 'quit') return finish('quit');
          const text = await applySimCommand(fleet, cmd);
          if (text) out(text);
        } catch (e) {
          err(`error: ${e instanceof CommandSyntaxError ? e.message : describeError(e)}`);
        }
      });
    });
  }

  const reason = await finished;
  clearInterval(statsTimer);
  if (runTimer) clearTimeout(runTimer);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  rl?.close();
  out(`sim: stopping (${reason}); final stats: ${formatStats(fleet.stats())}`);
  if (cleanup) {
    try {
      await fleet.cleanup();
      out(`sim: fleet "${fleet.prefix}" deleted`);
    } catch (e) {
      err(`error: cleanup failed: ${describeError(e)}`);
      return 1;
    }
  } else {
    await fleet.stop();
    out(`sim: stopped; objects left in the cluster (rerun with the same --prefix to adopt them, or pass --cleanup)`);
  }
  return 0;
}
