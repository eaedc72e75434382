/**
 * The what-if scenario file: a small YAML format (docs/what-if.md), parsed strictly. Every error
 * names the file, the line and the field (`scenario.yaml:7: steps[1].percent: …`), so a typo never
 * silently becomes a different scenario.
 *
 * Not upstream: kube-controller-manager has no what-if. Durations use Go's syntax (src/util/duration.ts),
 * like every duration flag of the controller.
 */
import yaml from 'js-yaml';
import { InputError } from '../util/errors.js';
import { DurationSyntaxError, parseGoDuration } from '../util/duration.js';

/** What a step does to the nodes it selects. */
export const SCENARIO_ACTIONS = [
  /** The kubelet stops: no Lease renewal, no status update (a dead or partitioned node). */
  'stop-kubelet',
  /** The kubelet comes back: renews its Lease at once and posts Ready=True. */
  'start-kubelet',
  /** Lease renewals (and status updates) stop for `for`, then resume (a control-plane or network blip). */
  'pause-heartbeats',
  /** The kubelet keeps renewing its Lease but reports Ready=False. */
  'report-not-ready',
  /** The kubelet reports Ready=True again. */
  'report-ready',
  /** An operator adds `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`. */
  'out-of-service',
  /** The Node object is deleted (e.g. by the cloud node controller). */
  'delete-node',
] as const;

/** One of {@link SCENARIO_ACTIONS}. */
export type ScenarioAction = (typeof SCENARIO_ACTIONS)[number];

/** Which nodes a step acts on: named ones, or those of a zone (or all), optionally a share of them. */
export type NodeSelector =
  | { kind: 'nodes'; names: readonly string[] }
  | { kind: 'zone'; zone: string; percent?: number; count?: number }
  | { kind: 'all'; percent?: number; count?: number };

/** One parsed step. Times in **milliseconds** after T+0. */
export interface ScenarioStep {
  atMs: number;
  action: ScenarioAction;
  select: NodeSelector;
  /** `pause-heartbeats` only: how long, milliseconds. */
  forMs?: number;
  /** 1-based line of the step in the file, for errors found later (a node name that does not exist). */
  line: number;
}

/** A parsed scenario. `durationMs`: simulated time after T+0, milliseconds. */
export interface Scenario {
  file: string;
  durationMs: number;
  steps: ScenarioStep[];
}

/** Simulated time when the file gives no `duration`, milliseconds (covers grace + 300 s toleration + detach). */
export const DEFAULT_SCENARIO_DURATION_MS = 15 * 60_000;

/** Longest simulated time accepted, milliseconds (a day; a typo like `15h` for `15m` is caught by the 24 h limit only). */
const MAX_DURATION_MS = 24 * 3_600_000;

/**
 * A malformed scenario file. The message is one line: `<file>:<line>: <field>: <reason>`.
 * An {@link InputError} for the `--scenario` flag, so the program exits 2 (invalid input).
 */
export class ScenarioError extends InputError {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly field: string,
    reason: string,
  ) {
    super(`${file}${line !== undefined ? `:${line}` : ''}: ${field ? `${field}: ` : ''}${reason}`, 'scenario');
    this.name = 'ScenarioError';
  }
}

/** Where js-yaml found a mapping's keys or a sequence's items (1-based lines). */
interface Positions {
  line: number;
  keys: Map<string, number>;
  items: number[];
}

/**
 * Parses YAML and records, for every mapping and sequence, the line of each key or item, through
 * js-yaml's `listener` (its `open`/`close` events nest like the document; a mapping's children
 * alternate key, value).
 */
function loadWithPositions(text: string): { doc: unknown; positions: WeakMap<object, Positions> } {
  interface Frame {
    line: number;
    children: { line: number; result: unknown }[];
  }
  const stack: Frame[] = [];
  const positions = new WeakMap<object, Positions>();
  const listener = (event: 'open' | 'close', state: { line: number; result: unknown; kind: string | null }): void => {
    if (event === 'open') {
      stack.push({ line: state.line + 1, children: [] });
      return;
    }
    const frame = stack.pop();
    if (!frame) return;
    const result = state.result;
    if (result !== null && typeof result === 'object' && !positions.has(result)) {
      const p: Positions = { line: frame.line, keys: new Map(), items: [] };
      if (Array.isArray(result)) p.items = frame.children.map((c) => c.line);
      else for (let i = 0; i + 1 < frame.children.length; i += 2) p.keys.set(String(frame.children[i]?.result), frame.children[i]?.line ?? frame.line);
      positions.set(result, p);
    }
    stack.at(-1)?.children.push({ line: frame.line, result });
  };
  const doc = yaml.load(text, { listener } as yaml.LoadOptions);
  return { doc, positions };
}

/**
 * Parses and validates a scenario file.
 * @param text the file's contents (YAML; JSON is YAML too).
 * @param file the name to put in error messages.
 * @returns the scenario, steps sorted by time (stable: file order within one time).
 * @throws {ScenarioError} naming the line and the field for: YAML syntax errors; a document that is
 *   not a mapping; unknown fields; a missing or unknown `action`; a missing, negative or unparsable
 *   duration (`duration`, `at`, `for`); a step without exactly one of `nodes`, `zone`, `all`;
 *   `percent` outside (0, 100] or `count` not a positive integer, or both; `percent`/`count` with
 *   `nodes`; `for` on an action other than `pause-heartbeats` or missing on it; a step after `duration`.
 */
export function parseScenario(text: string, file = 'scenario'): Scenario {
  let loaded: ReturnType<typeof loadWithPositions>;
  try {
    loaded = loadWithPositions(text);
  } catch (err) {
    const e = err as { mark?: { line?: number }; reason?: string; message?: string };
    const line = e.mark?.line !== undefined ? e.mark.line + 1 : undefined;
    throw new ScenarioError(file, line, '', `invalid YAML: ${e.reason ?? (e.message ?? String(err)).split('\n')[0]}`);
  }
  const { doc, positions } = loaded;
  const fail = (obj: object | undefined, key: string | number | undefined, field: string, reason: string): never => {
    const p = obj ? positions.get(obj) : undefined;
    const line = p === undefined ? undefined : typeof key === 'string' ? (p.keys.get(key) ?? p.line) : typeof key === 'number' ? (p.items[key] ?? p.line) : p.line;
    throw new ScenarioError(file, line, field, reason);
  };
  if (doc === null || doc === undefined) throw new ScenarioError(file, 1, '', 'empty file: expected a mapping with `steps`');
  if (!isMapping(doc)) throw new ScenarioError(file, 1, '', 'expected a mapping with `steps` (and optionally `duration`)');
  only(doc, ['duration', 'steps'], '', fail);

  const durationMs = doc['duration'] === undefined ? DEFAULT_SCENARIO_DURATION_MS : duration(doc, 'duration', 'duration', fail);
  if (durationMs <= 0 || durationMs > MAX_DURATION_MS) fail(doc, 'duration', 'duration', `must be more than 0s and at most 24h, got ${String(doc['duration'])}`);

  const rawSteps = doc['steps'];
  if (!Array.isArray(rawSteps)) return fail(doc, 'steps', 'steps', rawSteps === undefined ? 'missing: a list of steps' : 'must be a list of steps');
  const steps: ScenarioStep[] = rawSteps.map((raw: unknown, i: number) => {
    const where = `steps[${i}]`;
    if (!isMapping(raw)) return fail(rawSteps, i, where, 'must be a mapping with `at`, `action` and a node selector');
    only(raw, ['at', 'action', 'nodes', 'zone', 'all', 'percent', 'count', 'for'], where, fail);
    const line = positions.get(raw)?.line ?? 0;
    if (raw['at'] === undefined) fail(raw, undefined, `${where}.at`, 'missing: when the step happens, a Go duration after T+0 (e.g. 0s, 5m)');
    const atMs = duration(raw, 'at', `${where}.at`, fail);
    if (atMs > durationMs) fail(raw, 'at', `${where}.at`, `${String(raw['at'])} is after the scenario's duration (${String(doc['duration'] ?? '15m')})`);
    const action = raw['action'];
    if (action === undefined) fail(raw, undefined, `${where}.action`, `missing: one of ${SCENARIO_ACTIONS.join(', ')}`);
    if (typeof action !== 'string' || !(SCENARIO_ACTIONS as readonly string[]).includes(action)) {
      return fail(raw, 'action', `${where}.action`, `unknown action ${JSON.stringify(action)}: one of ${SCENARIO_ACTIONS.join(', ')}`);
    }
    const step: ScenarioStep = { atMs, action: action as ScenarioAction, select: selector(raw, where, fail), line };
    if (action === 'pause-heartbeats') {
      if (raw['for'] === undefined) fail(raw, undefined, `${where}.for`, 'missing: how long the heartbeats pause, a Go duration (e.g. 90s)');
      step.forMs = duration(raw, 'for', `${where}.for`, fail);
      if (step.forMs <= 0) fail(raw, 'for', `${where}.for`, `must be more than 0s, got ${String(raw['for'])}`);
    } else if (raw['for'] !== undefined) {
      fail(raw, 'for', `${where}.for`, `only pause-heartbeats takes \`for\` (this step is ${action})`);
    }
    return step;
  });
  steps.sort((a, b) => a.atMs - b.atMs);
  return { file, durationMs, steps };
}

type Fail = (obj: object | undefined, key: string | number | undefined, field: string, reason: string) => never;

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function only(obj: Record<string, unknown>, allowed: readonly string[], where: string, fail: Fail): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(obj, key, where ? `${where}.${key}` : key, `unknown field (allowed: ${allowed.join(', ')})`);
  }
}

function duration(obj: Record<string, unknown>, key: string, field: string, fail: Fail): number {
  const v = obj[key];
  // A bare 0 is a valid Go duration; any other number lacks its unit.
  if (v === 0) return 0;
  if (typeof v !== 'string') return fail(obj, key, field, `must be a Go duration such as 90s or 5m, got ${JSON.stringify(v)}`);
  let ms: number;
  try {
    ms = parseGoDuration(v);
  } catch (err) {
    if (err instanceof DurationSyntaxError) return fail(obj, key, field, err.message);
    throw err;
  }
  return ms < 0 ? fail(obj, key, field, `must not be negative, got ${v}`) : ms;
}

function selector(raw: Record<string, unknown>, where: string, fail: Fail): NodeSelector {
  const given = (['nodes', 'zone', 'all'] as const).filter((k) => raw[k] !== undefined);
  if (given.length !== 1) {
    return fail(raw, given[1], where, given.length === 0 ? 'missing node selector: give one of `nodes`, `zone`, `all: true`' : `give only one of \`nodes\`, \`zone\`, \`all\` (got ${given.join(', ')})`);
  }
  const share = (): { percent?: number; count?: number } => {
    const out: { percent?: number; count?: number } = {};
    const { percent, count } = raw;
    if (percent !== undefined && count !== undefined) fail(raw, 'count', `${where}.count`, 'give `percent` or `count`, not both');
    if (percent !== undefined) {
      if (typeof percent !== 'number' || !(percent > 0 && percent <= 100)) fail(raw, 'percent', `${where}.percent`, `must be a number in (0, 100], got ${JSON.stringify(percent)}`);
      out.percent = percent as number;
    }
    if (count !== undefined) {
      if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) fail(raw, 'count', `${where}.count`, `must be an integer >= 1, got ${JSON.stringify(count)}`);
      out.count = count as number;
    }
    return out;
  };
  if (given[0] === 'nodes') {
    const names = raw['nodes'];
    for (const k of ['percent', 'count']) if (raw[k] !== undefined) fail(raw, k, `${where}.${k}`, 'only with `zone` or `all` (`nodes` names every node itself)');
    if (!Array.isArray(names) || names.length === 0) return fail(raw, 'nodes', `${where}.nodes`, 'must be a non-empty list of node names');
    names.forEach((n: unknown, j: number) => {
      if (typeof n !== 'string' || n === '') fail(names, j, `${where}.nodes[${j}]`, `must be a node name, got ${JSON.stringify(n)}`);
    });
    return { kind: 'nodes', names: names as string[] };
  }
  if (given[0] === 'zone') {
    const zone = raw['zone'];
    if (typeof zone !== 'string' || zone === '') return fail(raw, 'zone', `${where}.zone`, `must be a zone name (the topology.kubernetes.io/zone label, or region:zone), got ${JSON.stringify(zone)}`);
    return { kind: 'zone', zone, ...share() };
  }
  if (raw['all'] !== true) return fail(raw, 'all', `${where}.all`, `must be true, got ${JSON.stringify(raw['all'])}`);
  return { kind: 'all', ...share() };
}

/**
 * The nodes a selector picks, deterministically: the matching names sorted, and of those the first
 * `count`, or the first `ceil(percent/100 × n)`.
 * @param select the step's selector.
 * @param nodes every node: its name and its zone as `region:zone` and as the bare zone label.
 * @returns the node names (sorted).
 * @throws {ScenarioError} (line of the step) when a named node does not exist or a zone has no node.
 */
export function selectNodes(
  select: NodeSelector,
  nodes: readonly { name: string; zone: string; region: string }[],
  where: { file: string; line: number; field: string },
): string[] {
  if (select.kind === 'nodes') {
    const known = new Set(nodes.map((n) => n.name));
    const missing = select.names.filter((n) => !known.has(n));
    if (missing.length > 0) throw new ScenarioError(where.file, where.line, `${where.field}.nodes`, `no such node in the cluster: ${missing.join(', ')}`);
    return [...new Set(select.names)].sort();
  }
  const matching = nodes
    .filter((n) => select.kind === 'all' || n.zone === select.zone || `${n.region}:${n.zone}` === select.zone)
    .map((n) => n.name)
    .sort();
  if (matching.length === 0) {
    if (select.kind === 'all') throw new ScenarioError(where.file, where.line, `${where.field}.all`, 'the cluster has no node');
    throw new ScenarioError(where.file, where.line, `${where.field}.zone`, `no node is in zone ${JSON.stringify(select.zone)}`);
  }
  const n = select.count !== undefined ? Math.min(select.count, matching.length) : select.percent !== undefined ? Math.ceil((select.percent / 100) * matching.length - 1e-9) : matching.length;
  return matching.slice(0, n);
}
