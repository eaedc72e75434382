// Why this file is over 500 lines: it reads every flag of the table (flagtable.ts) from the command line, the environment and the config file, with kube-controller-manager's precedence, boolean syntax and log-flag spellings, and validates them into one ControllerConfig; the checks sit beside the one mapping they guard.
/**
 * Flags of `node-lifecycle-controller [run]`: kube-controller-manager's flag names, defaults and
 * Go duration syntax, parsed with yargs and validated into a {@link ControllerConfig}.
 *
 * Sources, highest precedence first:
 * 1. the command line (`--node-monitor-grace-period=50s`; a repeated flag keeps its last value,
 *    except `--controllers` and `--feature-gates`, whose repeats append, as pflag's StringSlice and
 *    component-base's ColonSeparatedMultimapStringString do);
 * 2. environment variables `NLC_<FLAG_NAME_UPPER_SNAKE>` (`NLC_NODE_MONITOR_GRACE_PERIOD=50s`);
 *    empty values count as unset, and unknown `NLC_*` variables are ignored, because Kubernetes
 *    injects service-link variables such as `NLC_PORT` for a Service named `nlc`;
 * 3. the `--config` file, a YAML (or JSON) mapping whose keys are flag names
 *    (`node-monitor-grace-period: 50s`); unknown keys are errors;
 * 4. the defaults below (upstream's, unless marked as our extension).
 *
 * Deliberate difference from upstream: the environment and config-file layers do not exist in
 * kube-controller-manager (it has `--config` for a KubeControllerManagerConfiguration object).
 * We read `NLC_*` ourselves rather than with yargs `.env('NLC')` so that tests can inject the
 * environment and so that an error can name the variable that carried the bad value.
 *
 * Checked against k8s.io/kubernetes v1.37.2 (see docs/upstream-1.37.md). Upstream sources:
 * `cmd/kube-controller-manager/app/options/*.go` (flags and defaults),
 * `pkg/controller/nodelifecycle/config/v1alpha1/defaults.go`,
 * `staging/src/k8s.io/controller-manager/options/generic.go` (`--controllers`, aliases, validation),
 * `staging/src/k8s.io/component-base/config/validation` and client-go `leaderelection.NewLeaderElector`
 * (leader-election checks).
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { extname } from 'node:path';
import yargs, { type Argv } from 'yargs';
import { LOG_FORMATS, LOG_LEVELS, logLevelForVerbosity } from '../log/logger.js';
import { alwaysAllowPathMatcher } from '../metrics/delegation.js';
import { parseBindAddress } from '../metrics/server.js';
import { DurationSyntaxError, formatGoDuration, parseGoDuration } from '../util/duration.js';
import { CountOrPercentSyntaxError, parseCountOrPercent, type CountOrPercent } from '../nodelifecycle/guard.js';
import { versionLine } from '../version.js';
import { didYouMean } from '../util/nearest.js';
import { PROGRAM_COMMANDS } from './commands.js';
import type { ControllerConfig, FeatureGates } from '../controllers/config.js';
import { canonicalControllerName, KNOWN_CONTROLLERS, kubeControllerManagerDisableFlags } from '../controllers/names.js';
import { DEFAULT_FEATURE_GATES, parseFeatureGates } from './featuregates.js';
import { FLAG_BY_NAME, FLAGS, flagEnvVar, SHADOW_LEASE_NAME, SHADOW_LEASE_SUFFIX, DEFAULT_METRICS_BIND_ADDRESS, DEFAULT_SECURE_PORT, type FlagName, type FlagSpec } from './flagtable.js';

// Importers of the flags take these from here, beside the parser.
export { DEFAULT_METRICS_BIND_ADDRESS, DEFAULT_SECURE_PORT, flagEnvVar, SHADOW_LEASE_NAME, SHADOW_LEASE_SUFFIX };
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, parseLabelSelector } from '../kube/labelselector.js';
import { parseKubeContentType, PROTOBUF_CONTENT_TYPE } from '../kube/contenttype.js';

// ---------------------------------------------------------------------------------------------
// Errors

/**
 * An invalid command line, environment variable or config file. `message` is one line that names
 * the offending flag; the entry point prints `node-lifecycle-controller: <message>` and exits with
 * {@link FlagError.exitCode} (2, as Go's pflag does on a usage error).
 */
export class FlagError extends Error {
  /** Process exit code for usage errors. */
  readonly exitCode = 2;
  /** The flag the message is about, without dashes (undefined for errors about no single flag). */
  readonly flag: string | undefined;
  constructor(message: string, flag?: string) {
    super(message);
    this.name = 'FlagError';
    this.flag = flag;
  }
}

/**
 * Thrown by {@link parseControllerFlags} for `--help`/`-h`. Not a {@link FlagError}: the entry point
 * prints {@link HelpRequested.text} to stdout and exits with {@link HelpRequested.exitCode} (0).
 */
export class HelpRequested extends Error {
  /** Process exit code after printing help. */
  readonly exitCode = 0;
  /** The full help text, as {@link controllerFlagsHelp} returns it. */
  readonly text: string;
  constructor(text: string) {
    super('help requested');
    this.name = 'HelpRequested';
    this.text = text;
  }
}

/**
 * Thrown by {@link parseControllerFlags} for `--version`: like {@link HelpRequested}, the entry point
 * prints {@link HelpRequested.text} (`node-lifecycle-controller v0.1.0`) to stdout and exits 0.
 * Upstream: kube-controller-manager's `--version` (`component-base/version/verflag`).
 */
export class VersionRequested extends HelpRequested {
  constructor() {
    super(versionLine());
    this.name = 'VersionRequested';
  }
}

// ---------------------------------------------------------------------------------------------
// The parsed configuration

export { DEFAULT_FEATURE_GATES, parseFeatureGates };

// ---------------------------------------------------------------------------------------------
// Parsing

/** A raw flag value and where it came from (for error messages). */
interface RawValue {
  value: string | string[];
  /** '' for the command line and the default; otherwise ` (from NLC_X)` or ` (from config file F)`. */
  origin: string;
  /** True when no layer gave the flag (the value is its default). */
  defaulted?: true;
}

function buildParser(argv: string[], ownFlags: readonly string[] = []): Argv {
  let parser = yargs(argv)
    .scriptName('node-lifecycle-controller')
    .usage(
      '$0 [command] [flags]\n\n' +
        "With no command, or `run`: runs Kubernetes' node lifecycle, taint eviction, pod GC (out-of-service) and force-detach controllers " +
        'outside kube-controller-manager, with its flags and semantics (the flags below).',
    )
    .epilogue(
      'Precedence: command line, then NLC_<FLAG_NAME> environment variables (e.g. NLC_NODE_MONITOR_GRACE_PERIOD=50s), ' +
        'then the --config file, then the defaults shown. Durations use Go syntax and are held in milliseconds internally.\n\n' +
        'Switch the loops this program replaces off in kube-controller-manager first (running both doubles every taint, eviction, force-delete and Event):\n' +
        `Kubernetes 1.29 and later:\n  ${kubeControllerManagerDisableFlags().canonical}\n` +
        `Kubernetes 1.20 to 1.28:\n  ${kubeControllerManagerDisableFlags().short}\n` +
        'Keep its persistentvolume-attach-detach-controller on (ours only force-detaches).',
    )
    .parserConfiguration({
      'camel-case-expansion': false,
      'boolean-negation': false,
      'dot-notation': false,
      'duplicate-arguments-array': true,
      'parse-numbers': false,
      'parse-positional-numbers': false,
      'short-option-groups': false,
    })
    .strict()
    .exitProcess(false)
    .help(false)
    .version(false)
    .wrap(110)
    .fail((msg, err) => {
      throw new FlagError(describeYargsFailure(argv, msg, err, ownFlags));
    });
  for (const f of FLAGS) {
    parser = parser.option(f.name, {
      type: f.kind === 'boolean' ? 'boolean' : 'string',
      describe: `${f.help} Unit: ${f.unit}. Default: ${f.default === '' ? '""' : f.default}. Env: ${flagEnvVar(f.name)}.`,
    });
  }
  return parser
    .option('help', { alias: 'h', type: 'boolean', describe: 'Show this help and exit.' })
    .option('version', { type: 'boolean', describe: 'Print the version and exit.' });
}

/**
 * Turns yargs' "Unknown argument(s): …" into a message naming the flag as it was typed, with the
 * nearest known flag when it looks like a typo (`unknown flag: --node-monitor-grace-perod (did you
 * mean --node-monitor-grace-period?)`).
 * @param ownFlags the calling command's own flags (what-if's), offered as suggestions too.
 */
function describeYargsFailure(argv: readonly string[], msg: string | undefined, err: Error | undefined, ownFlags: readonly string[] = []): string {
  let previous: FlagSpec | undefined;
  for (const token of argv) {
    if (token === '--') break;
    if (!token.startsWith('-') || token === '-') {
      previous = undefined;
      continue;
    }
    const name = token.replace(/^--?/, '').split('=')[0] ?? '';
    if (!FLAG_BY_NAME.has(name) && name !== 'help' && name !== 'h') {
      // yargs, unlike pflag, never takes a dash-led word as the value of the flag before it.
      const hint = previous && previous.kind !== 'boolean' ? ` (to pass it as the value of --${previous.name}, write --${previous.name}=${token})` : '';
      const guess = hint === '' ? didYouMean(name, [...FLAGS.map((f) => f.name), ...ownFlags, 'help', 'version']) : '';
      return `unknown flag: ${token.split('=')[0]}${hint}${guess}`;
    }
    previous = token.includes('=') ? undefined : FLAG_BY_NAME.get(name);
  }
  const text = msg ?? err?.message ?? 'invalid arguments';
  const positional = /^Unknown arguments?: (.*)$/.exec(text);
  if (positional) return `unexpected argument(s) ${positional[1]}: node-lifecycle-controller takes flags only`;
  return text;
}

/**
 * The `--help` text: the commands (`status`, `explain`, `shadow-report`, `what-if`, …), then every
 * flag with its meaning, unit, default and environment variable.
 * @returns the help text (no trailing newline).
 * @throws never.
 */
export function controllerFlagsHelp(): string {
  let text = '';
  // The commands appear in the help only (yargs lays them out with the flags): program.ts
  // dispatches them before this parser sees the words, so parsing never meets one.
  let parser = buildParser([]);
  for (const c of PROGRAM_COMMANDS) parser = parser.command(c.name, c.summary);
  parser.showHelp((s) => {
    text = s;
  });
  return text;
}

/**
 * Parses and validates the `run` command's flags.
 *
 * @param argv arguments after the program name (`process.argv.slice(2)`); a leading `run` is skipped.
 * @param env environment to read `NLC_*` variables from; defaults to `process.env`.
 * @param opts.ownFlags flags of a command that passes its other flags here (what-if's), without
 *   dashes: offered, with the `run` flags, as the nearest name of an unknown flag.
 * @returns the validated configuration (durations in **milliseconds**).
 * @throws {FlagError} (exit code 2) with a one-line message naming the flag, for: unknown flags or
 *   positional arguments; unparsable values (durations, numbers, booleans, enums, bind address, label
 *   selector, controller names); negative durations; `--node-monitor-period` <= 0;
 *   `--node-monitor-grace-period` < `--node-monitor-period`; negative rates;
 *   `--unhealthy-zone-threshold` outside (0, 1]; `--large-cluster-size-threshold` not an integer >= 0;
 *   `--kube-api-qps` <= 0; `--kube-api-burst` not an integer >= 1; with `--leader-elect`, client-go's
 *   lease rules (all three durations > 0, lease duration > renew deadline > 1.2 × retry period) and
 *   a valid Lease name and namespace, and a Lease name that ends in `-shadow` exactly when
 *   `--dry-run` is on; an unreadable or malformed `--config` file.
 * @throws {HelpRequested} for `--help` / `-h`.
 * Deliberate difference from upstream: validation is stricter. In 1.37.2
 * `NodeLifecycleControllerOptions.Validate` (`cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go`)
 * checks nothing, so kube-controller-manager starts with, say, a grace period below the monitor period or
 * a zone threshold of 0; we refuse to start instead (exit 2), which can only prevent actions.
 * Upstream: `NewControllerManagerCommand` / `KubeControllerManagerOptions.Validate` (kube-controller-manager).
 */
export async function parseControllerFlags(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  opts: { ownFlags?: readonly string[] } = {},
): Promise<ControllerConfig> {
  const args = argv[0] === 'run' ? argv.slice(1) : argv;
  const parsed = (await buildParser(args, opts.ownFlags).parseAsync()) as Record<string, unknown>;
  if (parsed['help'] === true || (Array.isArray(parsed['help']) && parsed['help'].includes(true))) {
    throw new HelpRequested(controllerFlagsHelp());
  }
  if (parsed['version'] === true || (Array.isArray(parsed['version']) && parsed['version'].at(-1) === true)) throw new VersionRequested();
  const positional = (parsed['_'] as unknown[] | undefined) ?? [];
  if (positional.length > 0) {
    throw new FlagError(`unexpected argument(s) ${positional.map((p) => JSON.stringify(String(p))).join(', ')}: node-lifecycle-controller takes flags only`);
  }
  checkBooleanSyntax(args);

  const cli = new Map<string, RawValue>();
  for (const f of FLAGS) {
    const v = parsed[f.name];
    if (v === undefined) continue;
    const list = Array.isArray(v) ? v.map(String) : [String(v)];
    cli.set(f.name, { value: f.kind === 'list' ? list : (list[list.length - 1] ?? ''), origin: '' });
  }
  const fromEnv = new Map<string, RawValue>();
  for (const f of FLAGS) {
    const v = env[flagEnvVar(f.name)];
    if (v !== undefined && v !== '') fromEnv.set(f.name, { value: v, origin: ` (from ${flagEnvVar(f.name)})` });
  }
  const configPath = rawString(cli.get('config') ?? fromEnv.get('config'));
  const fromFile = configPath ? await readConfigFile(configPath) : new Map<string, RawValue>();

  const pick = (name: FlagName): RawValue => {
    const spec = FLAG_BY_NAME.get(name);
    return cli.get(name) ?? fromEnv.get(name) ?? fromFile.get(name) ?? { value: spec?.default ?? '', origin: '', defaulted: true };
  };
  const spellings: Spellings = {
    level: chooseSpelling(args, [cli, fromEnv, fromFile], 'log-level', 'v'),
    format: chooseSpelling(args, [cli, fromEnv, fromFile], 'log-format', 'logging-format'),
  };
  return buildConfig(pick, configPath || undefined, spellings);
}

/** Which spelling decides the log level and the log format (ours, or kube-controller-manager's). */
interface Spellings {
  level: 'log-level' | 'v';
  format: 'log-format' | 'logging-format';
}

/**
 * Picks which of two flags that set one thing decides: the highest layer (command line, NLC_*,
 * --config) that gives either; on the command line the later of the two, as if both wrote one
 * pflag variable; in the environment or config file both at once is ambiguous and an error.
 */
function chooseSpelling<O extends FlagName, K extends FlagName>(
  args: readonly string[],
  layers: readonly ReadonlyMap<string, RawValue>[],
  ours: O,
  kcm: K,
): O | K {
  const cli = layers[0];
  if (cli?.has(ours) && cli.has(kcm)) return lastOnCommandLine(args, ours, kcm);
  for (const layer of layers) {
    const a = layer.has(ours);
    const b = layer.has(kcm);
    if (a && b && layer !== cli) {
      throw new FlagError(`--${kcm}: give either it or --${ours}, not both${layer.get(kcm)?.origin ?? ''}`, kcm);
    }
    if (a) return ours;
    if (b) return kcm;
  }
  return ours;
}

/** The one of `a` and `b` whose last occurrence on the command line comes later (`-x`, `--x`, `--x=…`). */
function lastOnCommandLine<A extends string, B extends string>(args: readonly string[], a: A, b: B): A | B {
  let last: A | B = a;
  for (const token of args) {
    if (token === '--') break;
    const name = /^--?([^=]+)/.exec(token)?.[1];
    if (name === a) last = a;
    else if (name === b) last = b;
  }
  return last;
}

function rawString(raw: RawValue | undefined): string {
  if (raw === undefined) return '';
  return Array.isArray(raw.value) ? raw.value.join(',') : raw.value;
}

/**
 * yargs reads `--leader-elect=maybe` as false; Go's pflag rejects it. Check the `=value` forms of
 * boolean flags against Go's `strconv.ParseBool` ourselves.
 */
function checkBooleanSyntax(args: readonly string[]): void {
  for (const token of args) {
    if (token === '--') break;
    const m = /^--?([^=]+)=(.*)$/.exec(token);
    if (!m) continue;
    const spec = FLAG_BY_NAME.get(m[1] ?? '');
    if (spec?.kind === 'boolean') parseBool(spec.name, m[2] ?? '', '');
  }
}

const TRUE_WORDS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function parseBool(flag: string, text: string, origin: string): boolean {
  if (TRUE_WORDS.has(text)) return true;
  if (FALSE_WORDS.has(text)) return false;
  throw new FlagError(`--${flag}: invalid boolean "${text}"${origin} (use true or false)`, flag);
}

async function readConfigFile(path: string): Promise<Map<string, RawValue>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new FlagError(`--config: cannot read "${path}": ${(err as Error).message}`, 'config');
  }
  const data = await parseConfigText(path, text);
  if (data === null || data === undefined) return new Map();
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new FlagError(`--config: "${path}" must hold a mapping of flag names to values`, 'config');
  }
  const origin = ` (from config file ${path})`;
  const out = new Map<string, RawValue>();
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    const spec = FLAG_BY_NAME.get(key);
    if (!spec || key === 'config') {
      throw new FlagError(`--config: unknown key "${key}" in "${path}" (keys are flag names without dashes)`, 'config');
    }
    if (value === null) continue;
    if (Array.isArray(value) && spec.kind === 'list' && value.every((v) => typeof v === 'string')) {
      out.set(key, { value: value.join(','), origin });
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out.set(key, { value: String(value), origin });
    } else {
      throw new FlagError(`--${key}: config file value must be a string, number or boolean${origin}`, key);
    }
  }
  return out;
}

/** Parses YAML with js-yaml when it can be imported, else JSON only. */
async function parseConfigText(path: string, text: string): Promise<unknown> {
  if (text.trim() === '') return null;
  const asJson = extname(path).toLowerCase() === '.json';
  let loadYaml: ((t: string) => unknown) | undefined;
  if (!asJson) {
    try {
      // js-yaml is not our direct dependency: it is present because @kubernetes/client-node depends on it.
      const yaml = await import('js-yaml');
      loadYaml = (t) => yaml.load(t);
    } catch {
      loadYaml = undefined;
    }
  }
  try {
    return loadYaml ? loadYaml(text) : JSON.parse(text);
  } catch (err) {
    const what = loadYaml ? 'YAML' : asJson ? 'JSON' : 'JSON (YAML needs the js-yaml package, which is not installed)';
    const reason = ((err as Error).message.split('\n')[0] ?? '').trim();
    throw new FlagError(`--config: cannot parse "${path}" as ${what}: ${reason}`, 'config');
  }
}

function buildConfig(pick: (name: FlagName) => RawValue, configFile: string | undefined, spellings: Spellings): ControllerConfig {
  const str = (name: FlagName): string => rawString(pick(name));
  const fail = (name: FlagName, detail: string): never => {
    throw new FlagError(`--${name}: ${detail}${pick(name).origin}`, name);
  };
  const duration = (name: FlagName): number => {
    const text = str(name);
    let ms: number;
    try {
      ms = parseGoDuration(text);
    } catch (err) {
      if (err instanceof DurationSyntaxError) return fail(name, err.message);
      throw err;
    }
    return ms < 0 ? fail(name, `must not be negative, got ${text}`) : ms;
  };
  const number = (name: FlagName): number => {
    const text = str(name).trim();
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return fail(name, `invalid number "${text}"`);
    return Number(text);
  };
  const integer = (name: FlagName): number => {
    const text = str(name).trim();
    if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return fail(name, `must be an integer, got "${text}"`);
    return Number(text);
  };
  const bool = (name: FlagName): boolean => {
    const raw = pick(name);
    // A bare `--leader-elect` arrives from yargs as true, which String() turns into "true".
    return parseBool(name, rawString(raw), raw.origin);
  };
  const oneOf = <T extends string>(name: FlagName, allowed: readonly T[]): T => {
    const text = str(name);
    return (allowed as readonly string[]).includes(text) ? (text as T) : fail(name, `must be one of ${allowed.join(', ')}, got "${text}"`);
  };

  const controllers = controllerList(pick('controllers'));
  const nodeMonitorPeriod = duration('node-monitor-period');
  if (nodeMonitorPeriod <= 0) fail('node-monitor-period', 'must be greater than 0');
  const nodeMonitorGracePeriod = duration('node-monitor-grace-period');
  if (nodeMonitorGracePeriod < nodeMonitorPeriod) {
    fail(
      'node-monitor-grace-period',
      `must not be shorter than --node-monitor-period (${formatGoDuration(nodeMonitorPeriod)}), got ${formatGoDuration(nodeMonitorGracePeriod)}`,
    );
  }
  const nodeEvictionRate = number('node-eviction-rate');
  if (nodeEvictionRate < 0) fail('node-eviction-rate', `must not be negative, got ${nodeEvictionRate}`);
  const secondaryNodeEvictionRate = number('secondary-node-eviction-rate');
  if (secondaryNodeEvictionRate < 0) fail('secondary-node-eviction-rate', `must not be negative, got ${secondaryNodeEvictionRate}`);
  const largeClusterSizeThreshold = integer('large-cluster-size-threshold');
  if (largeClusterSizeThreshold < 0) fail('large-cluster-size-threshold', `must not be negative, got ${largeClusterSizeThreshold}`);
  const unhealthyZoneThreshold = number('unhealthy-zone-threshold');
  if (!(unhealthyZoneThreshold > 0 && unhealthyZoneThreshold <= 1)) {
    fail('unhealthy-zone-threshold', `must be greater than 0 and at most 1, got ${unhealthyZoneThreshold}`);
  }
  // Empty means the guard is off; a bad value names the flag and the value.
  const countOrPercent = (name: FlagName): CountOrPercent | undefined => {
    const text = str(name).trim();
    if (text === '') return undefined;
    try {
      return parseCountOrPercent(text);
    } catch (err) {
      if (err instanceof CountOrPercentSyntaxError) return fail(name, err.message);
      throw err;
    }
  };
  const stormWindow = duration('storm-window');
  if (stormWindow <= 0) fail('storm-window', `must be greater than 0, got ${str('storm-window')}`);
  const kubeApiQps = number('kube-api-qps');
  if (!(kubeApiQps > 0)) fail('kube-api-qps', `must be greater than 0, got ${kubeApiQps}`);
  const kubeApiBurst = integer('kube-api-burst');
  if (kubeApiBurst < 1) fail('kube-api-burst', `must be at least 1, got ${kubeApiBurst}`);
  const kubeApiContentType = parseKubeContentType(str('kube-api-content-type')) ?? fail('kube-api-content-type', `must be ${PROTOBUF_CONTENT_TYPE} or application/json, got ${str('kube-api-content-type')}`);

  const leaderElect = bool('leader-elect');
  const leaderElectLeaseDuration = duration('leader-elect-lease-duration');
  const leaderElectRenewDeadline = duration('leader-elect-renew-deadline');
  const leaderElectRetryPeriod = duration('leader-elect-retry-period');
  const dryRun = bool('dry-run');
  // A shadow beside a real controller must not campaign for the real controller's Lease.
  const leaderElectResourceName = dryRun && pick('leader-elect-resource-name').defaulted ? SHADOW_LEASE_NAME : str('leader-elect-resource-name');
  const leaderElectResourceNamespace = str('leader-elect-resource-namespace');
  if (leaderElect) {
    // component-base ValidateLeaderElectionConfiguration and client-go NewLeaderElector (JitterFactor 1.2);
    // upstream checks them only when leader election is on.
    for (const name of ['leader-elect-lease-duration', 'leader-elect-renew-deadline', 'leader-elect-retry-period'] as const) {
      if (duration(name) <= 0) fail(name, 'must be greater than 0 when --leader-elect is true');
    }
    if (leaderElectLeaseDuration <= leaderElectRenewDeadline) {
      fail(
        'leader-elect-renew-deadline',
        `must be less than --leader-elect-lease-duration (${formatGoDuration(leaderElectLeaseDuration)}), got ${formatGoDuration(leaderElectRenewDeadline)}`,
      );
    }
    if (leaderElectRenewDeadline <= 1.2 * leaderElectRetryPeriod) {
      fail(
        'leader-elect-retry-period',
        `1.2 × --leader-elect-retry-period must be less than --leader-elect-renew-deadline (${formatGoDuration(leaderElectRenewDeadline)}), got ${formatGoDuration(leaderElectRetryPeriod)}`,
      );
    }
    if (!DNS1123_SUBDOMAIN.test(leaderElectResourceName)) {
      fail('leader-elect-resource-name', `"${leaderElectResourceName}" is not a valid Lease name (DNS-1123 subdomain)`);
    }
    if (!DNS1123_LABEL.test(leaderElectResourceNamespace)) {
      fail('leader-elect-resource-namespace', `"${leaderElectResourceNamespace}" is not a valid namespace (DNS-1123 label)`);
    }
    // A shadow that won the real controller's Lease would leave the cluster with no controller acting
    // (it writes nothing): a --dry-run process campaigns only for a Lease named *-shadow, and an
    // acting process never for one, so the two can never share a Lease. Refusing to start only
    // prevents actions.
    if (dryRun && !leaderElectResourceName.endsWith(SHADOW_LEASE_SUFFIX)) {
      fail(
        'leader-elect-resource-name',
        `"${leaderElectResourceName}" does not end in "${SHADOW_LEASE_SUFFIX}": with --dry-run the Lease must be a shadow's own (e.g. "${SHADOW_LEASE_NAME}"), never the acting controller's`,
      );
    }
    if (!dryRun && leaderElectResourceName.endsWith(SHADOW_LEASE_SUFFIX)) {
      fail(
        'leader-elect-resource-name',
        `"${leaderElectResourceName}" ends in "${SHADOW_LEASE_SUFFIX}", the suffix kept for --dry-run shadows: an acting controller must not share a Lease with a shadow`,
      );
    }
  }

  const affinityEvictionRate = number('affinity-eviction-rate');
  if (affinityEvictionRate < 0) fail('affinity-eviction-rate', `must not be negative, got ${affinityEvictionRate}`);
  const affinityMaxEvictionsPerNode = integer('affinity-max-evictions-per-node');
  if (affinityMaxEvictionsPerNode < 0) fail('affinity-max-evictions-per-node', `must not be negative, got ${affinityMaxEvictionsPerNode}`);
  const affinityMaxEvictionsTotal = integer('affinity-max-evictions-total');
  if (affinityMaxEvictionsTotal < 0) fail('affinity-max-evictions-total', `must not be negative, got ${affinityMaxEvictionsTotal}`);

  const metricsBindAddress = str('metrics-bind-address');
  try {
    if (metricsBindAddress !== '') parseBindAddress(metricsBindAddress);
  } catch (err) {
    fail('metrics-bind-address', (err as Error).message);
  }
  const securePort = integer('secure-port');
  if (securePort < 0 || securePort > 65535) fail('secure-port', `must be between 0 and 65535, got ${securePort}`);
  const bindAddress = str('bind-address');
  if (bindAddress !== '' && isIP(bindAddress) === 0) fail('bind-address', `"${bindAddress}" is not an IP address`);
  const tlsCertFile = str('tls-cert-file');
  const tlsPrivateKeyFile = str('tls-private-key-file');
  if ((tlsCertFile === '') !== (tlsPrivateKeyFile === '')) {
    fail(tlsCertFile === '' ? 'tls-cert-file' : 'tls-private-key-file', 'give both --tls-cert-file and --tls-private-key-file, or neither (self-signed)');
  }
  const alwaysAllow = pick('authorization-always-allow-paths');
  const authorizationAlwaysAllowPaths = (Array.isArray(alwaysAllow.value) ? alwaysAllow.value : [alwaysAllow.value])
    .flatMap((p) => p.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
  try {
    alwaysAllowPathMatcher(authorizationAlwaysAllowPaths);
  } catch (err) {
    fail('authorization-always-allow-paths', (err as Error).message);
  }
  const nodeSelector = str('node-selector');
  try {
    parseLabelSelector(nodeSelector);
  } catch (err) {
    fail('node-selector', `invalid label selector "${nodeSelector}": ${(err as Error).message}`);
  }
  // Both spellings are validated whenever given, also the one that does not decide.
  const logLevelFlag = oneOf('log-level', LOG_LEVELS);
  const verbosity = str('v') === '' ? undefined : integer('v');
  if (verbosity !== undefined && (verbosity < 0 || verbosity > 2 ** 31 - 1)) fail('v', `must be an integer >= 0, got ${verbosity}`);
  const logFormatFlag = oneOf('log-format', LOG_FORMATS);
  const loggingFormat = str('logging-format') === '' ? undefined : oneOf('logging-format', LOG_FORMATS);
  const logLevel = spellings.level === 'v' && verbosity !== undefined ? logLevelForVerbosity(verbosity) : logLevelFlag;
  const logFormat = spellings.format === 'logging-format' && loggingFormat !== undefined ? loggingFormat : logFormatFlag;

  let featureGates: FeatureGates = { ...DEFAULT_FEATURE_GATES };
  let explicitFeatureGates: (keyof FeatureGates)[] = [];
  try {
    // Repeats add to each other (component-base's ColonSeparatedMultimapStringString).
    const raw = pick('feature-gates').value;
    ({ gates: featureGates, explicit: explicitFeatureGates } = parseFeatureGates(Array.isArray(raw) ? raw : [raw]));
  } catch (err) {
    fail('feature-gates', (err as Error).message);
  }

  return {
    kubeconfig: str('kubeconfig') || undefined,
    configFile,
    controllers,
    nodeMonitorPeriod,
    nodeMonitorGracePeriod,
    nodeStartupGracePeriod: duration('node-startup-grace-period'),
    nodeEvictionRate,
    secondaryNodeEvictionRate,
    largeClusterSizeThreshold,
    unhealthyZoneThreshold,
    enableTaintManager: bool('enable-taint-manager'),
    podEvictionTimeout: duration('pod-eviction-timeout'),
    maxUnhealthyNodes: countOrPercent('max-unhealthy-nodes'),
    stormThreshold: countOrPercent('storm-threshold'),
    stormWindow,
    stormHold: duration('storm-hold'),
    kubeApiQps,
    kubeApiBurst,
    kubeApiContentType,
    leaderElect,
    leaderElectLeaseDuration,
    leaderElectRenewDeadline,
    leaderElectRetryPeriod,
    leaderElectResourceName,
    leaderElectResourceNamespace,
    terminatedPodGCThreshold: integer('terminated-pod-gc-threshold'),
    forceDetachTimeout: duration('force-detach-timeout'),
    disableForceDetachOnTimeout: bool('disable-force-detach-on-timeout'),
    affinityViolationGrace: duration('affinity-violation-grace'),
    affinityEvictionRate,
    affinityMaxEvictionsPerNode,
    affinityMaxEvictionsTotal,
    metricsBindAddress,
    securePort,
    bindAddress,
    tlsCertFile,
    tlsPrivateKeyFile,
    authenticationKubeconfig: str('authentication-kubeconfig'),
    authorizationKubeconfig: str('authorization-kubeconfig'),
    authenticationTokenWebhookCacheTtl: duration('authentication-token-webhook-cache-ttl'),
    authorizationWebhookCacheAuthorizedTtl: duration('authorization-webhook-cache-authorized-ttl'),
    authorizationWebhookCacheUnauthorizedTtl: duration('authorization-webhook-cache-unauthorized-ttl'),
    authorizationAlwaysAllowPaths,
    logLevel,
    logFormat,
    nodeSelector,
    featureGates,
    ...(explicitFeatureGates.length > 0 ? { explicitFeatureGates } : {}),
    dryRun,
  };
}

/**
 * Splits `--controllers` (repeats already collected) into entries and replaces aliases with
 * canonical names, as upstream's `ApplyTo`; rejects unknown names as upstream's `Validate` does.
 */
function controllerList(raw: RawValue): string[] {
  const parts = Array.isArray(raw.value) ? raw.value : [raw.value];
  const entries = parts.flatMap((p) => (p.trim() === '' ? [] : p.split(',').map((e) => e.trim())));
  return entries.map((entry) => {
    if (entry === '*') return entry;
    const negated = entry.startsWith('-');
    const bare = negated ? entry.slice(1) : entry;
    const canonical = canonicalControllerName(bare);
    if (canonical === undefined) {
      throw new FlagError(
        `--controllers: "${bare}" is not in the list of known controllers (${KNOWN_CONTROLLERS.map((c) => c.name).join(', ')})${raw.origin}`,
        'controllers',
      );
    }
    return negated ? `-${canonical}` : canonical;
  });
}
