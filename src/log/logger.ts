/**
 * The controller's logger: a thin wrapper over pino so that no other module imports pino directly.
 *
 * Field convention (mirrors upstream's structured logging with `klog.KObj(node)` / `klog.KObj(pod)`
 * and the `"zone"` key used in `pkg/controller/nodelifecycle/node_lifecycle_controller.go`):
 * - a line about a node carries `node: "<node name>"`;
 * - a line about a pod carries `pod: "<namespace>/<name>"`;
 * - a line about a zone carries `zone: "<zone key>"`, the raw key from `GetZoneKey`
 *   (region + "\x00" + zone, which JSON output escapes as `\u0000`).
 * Use {@link forNode} and {@link forPod} to bind them once instead of repeating them per call.
 * Errors go under `err` (pino's standard error serializer prints type, message and stack).
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as PinoInstance, type LoggerOptions as PinoOptions } from 'pino';

/**
 * The one logger type every module takes: pino's `(obj, msg)` call style and nothing else, so a
 * pino logger (or a child of one) is accepted as is and tests can pass a recorder or
 * {@link silentLogger}. Modules that need `child()` take a {@link PinoLogger}.
 * Upstream analogue: `klog.Logger` as passed through `klog.FromContext`.
 */
export interface Logger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that drops everything (the default where a caller passes none). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** What {@link createLogger} returns: pino's `Logger` (a {@link Logger} with `child`, `level`, `flush`). */
export type PinoLogger = PinoInstance;

/** Accepted `--log-level` values, most verbose first. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
/** A `--log-level` value. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Accepted `--log-format` values: `json` (one JSON object a line, for log pipelines) or `text` (for people). */
export const LOG_FORMATS = ['json', 'text'] as const;
/** A `--log-format` value. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * kube-controller-manager's `-v`/`--v` (klog verbosity) mapped onto a {@link LogLevel}. klog always
 * writes errors, warnings and V(0) info; higher levels add detail (clusters commonly run 2; 4 is
 * debug; 6 and above trace HTTP requests). pino levels are coarser, so:
 * 0–3 → `info`, 4–5 → `debug`, 6 and above → `trace`. No verbosity hides warnings or errors, as in klog.
 * @param verbosity klog level, an integer >= 0 (callers validate it).
 * @returns the pino level that writes at least what klog would at that verbosity.
 * @throws never.
 * Upstream: `k8s.io/klog/v2` `Verbose` levels, as used by `component-base/logs` (`-v`).
 */
export function logLevelForVerbosity(verbosity: number): LogLevel {
  if (verbosity >= 6) return 'trace';
  if (verbosity >= 4) return 'debug';
  return 'info';
}

/** A sink for finished log lines: anything with a synchronous `write(line)`, e.g. `process.stdout` or a test buffer. */
export type LogDestination = DestinationStream;

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** Minimum level written. */
  level: LogLevel;
  /** `json` writes pino's JSON lines; `text` writes one human-readable line per entry. */
  format: LogFormat;
  /** Where lines go; defaults to stdout. Tests pass an in-memory sink. */
  destination?: LogDestination;
  /**
   * For `text` only: skip pino-pretty and use the built-in line formatter (tests use this to
   * exercise the fallback). Default false.
   */
  disablePrettyPrinter?: boolean;
}

type LineFormatter = (jsonLine: string) => string;

/**
 * Creates the process logger.
 *
 * `json` lines carry `level` as a label ("info"), `time` as RFC 3339 with milliseconds, `pid`,
 * `hostname` and `msg`. `text` uses pino-pretty when it can be loaded; pino-pretty is a
 * devDependency and is absent from production images, so the fallback is a small built-in
 * formatter producing `<time> <LEVEL> <msg> key=value…`.
 *
 * @param opts level, format and optional destination (see {@link CreateLoggerOptions}).
 * @returns a pino logger.
 * @throws never for valid options; pino throws on an unknown level (the flag parser rejects those first).
 * Upstream analogue: `k8s.io/component-base/logs` (`--logging-format=json|text`, `-v`).
 */
export function createLogger(opts: CreateLoggerOptions): PinoLogger {
  const base: PinoOptions = {
    level: opts.level,
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: pino.stdSerializers.err },
  };
  if (opts.format === 'json') {
    const json: PinoOptions = { ...base, formatters: { level: (label) => ({ level: label }) } };
    return opts.destination ? pino(json, opts.destination) : pino(json);
  }
  const sink: LogDestination = opts.destination ?? process.stdout;
  const prettyFormatter = opts.disablePrettyPrinter ? undefined : loadPinoPretty(sink === process.stdout);
  const format = prettyFormatter ?? formatTextLine;
  // Numeric levels are kept for text output because pino-pretty expects pino's native numbers.
  return pino(base, { write: (line: string) => void sink.write(format(line)) });
}

/**
 * Binds the node (and optionally zone) fields to a child logger.
 * @param log parent logger.
 * @param node node name.
 * @param zone zone key as returned by `GetZoneKey` (optional).
 * @returns a child logger whose lines carry `node` (and `zone`).
 */
export function forNode(log: PinoLogger, node: string, zone?: string): PinoLogger {
  return log.child(zone === undefined ? { node } : { node, zone });
}

/**
 * Binds the pod field to a child logger.
 * @param log parent logger.
 * @param pod the pod, or its `namespace/name` key.
 * @returns a child logger whose lines carry `pod: "namespace/name"`.
 */
export function forPod(log: PinoLogger, pod: string | { namespace: string; name: string }): PinoLogger {
  return log.child({ pod: typeof pod === 'string' ? pod : `${pod.namespace}/${pod.name}` });
}

/** The shape of pino-pretty's `prettyFactory` we use (declared here so the import stays optional). */
type PrettyFactory = (options: Record<string, unknown>) => (input: string) => string;

let prettyLoadFailed = false;

/**
 * Loads pino-pretty synchronously through `createRequire` (it is CommonJS), returning undefined
 * when it is not installed so that production images fall back to {@link formatTextLine}.
 */
function loadPinoPretty(colorize: boolean): LineFormatter | undefined {
  if (prettyLoadFailed) return undefined;
  try {
    const required: unknown = createRequire(import.meta.url)('pino-pretty');
    const factory = (required as { prettyFactory?: unknown }).prettyFactory;
    if (typeof factory !== 'function') throw new Error('pino-pretty has no prettyFactory');
    return (factory as PrettyFactory)({
      colorize: colorize && process.stdout.isTTY === true,
      translateTime: 'SYS:standard',
      ignore: 'pid,hostname',
      singleLine: true,
    });
  } catch {
    prettyLoadFailed = true;
    return undefined;
  }
}

const LEVEL_LABELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/**
 * The built-in text formatter used when pino-pretty is unavailable.
 * @param jsonLine one pino JSON line (with numeric level and ISO `time`).
 * @returns `<time> <LEVEL> <msg> key=value…\n`; values that are not plain words are JSON-quoted,
 *   which also makes the `\x00` in zone keys visible as `\u0000`.
 */
export function formatTextLine(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.endsWith('\n') ? jsonLine : `${jsonLine}\n`;
  }
  const { time, level, msg, pid: _pid, hostname: _hostname, ...fields } = entry;
  const levelText = typeof level === 'number' ? (LEVEL_LABELS[level] ?? String(level)) : String(level ?? '');
  const parts = [String(time ?? ''), levelText.toUpperCase().padEnd(5), typeof msg === 'string' ? msg : ''];
  for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${formatValue(value)}`);
  return `${parts.join(' ')}\n`;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[\w.:/@+-]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? String(value);
}
