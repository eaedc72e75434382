/**
 * `node-lifecycle-controller shadow-report` (also `kubectl node-lifecycle shadow-report`): a
 * `--dry-run` shadow's decisions beside what kube-controller-manager really did over the same
 * window, per node and per pod, with the difference and a summary of disagreements
 * (src/shadow/report.ts builds it; this file fetches and prints).
 *
 * The shadow's decisions come from its `/debug/state` (`--endpoint`, or through the API server's
 * pod proxy from the holder of the shadow's Lease, `node-lifecycle-controller-shadow` by default, as
 * `status` does). The cluster side is read with the caller's credentials: nodes (in the shadow's
 * `--node-selector`), pods and Events of all namespaces (list only).
 *
 * Not upstream.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import { loadKubeConfig, makeClients, type KubeClients } from '../kube/client.js';
import { toNode, toPod, type Node, type Pod } from '../kube/objects.js';
import type { ShadowState } from '../shadow/decisions.js';
import { buildShadowReport, observeCluster, type ObservedEvent, type ReportRow, type ShadowReport } from '../shadow/report.js';
import { DurationSyntaxError, parseGoDuration } from '../util/duration.js';
import { FlagError, SHADOW_LEASE_NAME } from './flags.js';
import { formatDuration, rfc3339 } from '../util/format.js';
import { fetchDebugState, renderTable, type EndpointOptions } from './inspect.js';
import { parseInspectFlags, processIo, type CommandIo } from './status.js';

const USAGE = `$0 [--endpoint URL | --kubeconfig FILE [--namespace NS --lease NAME --port PORT]] [--node-selector SEL] [--tolerance 10s] [--min-history 10m] [--event-ttl 1h] [-o table|json]

Compares what a --dry-run shadow would have done with what kube-controller-manager did over the
same window: per node (mark Unknown, NoExecute/NoSchedule taints) and per pod (taint-manager
deletions), KCM's time (taint timeAdded, Ready condition, Events), the shadow's would-be time and the
difference. Other shadow decisions (untaint, force-delete, detach, evict) are listed, not compared.
The shadow is found as \`status\` finds the controller (the options below), through its own Lease,
${SHADOW_LEASE_NAME} unless --lease is given.

Report options (Go durations):
  --node-selector SEL  the shadow's --node-selector: only these nodes and their pods are compared  [default: ""]
  --tolerance D        times closer than this agree                                               [default: 10s]
  --min-history D      a shorter shadow window is reported as not enough history                  [default: 10m]
  --event-ttl D        the API server's --event-ttl: older Events are gone                        [default: 1h]`;

/** The report's own flags (the endpoint flags are `status`'s), with their defaults. */
const REPORT_FLAGS = { 'node-selector': '', tolerance: '10s', 'min-history': '10m', 'event-ttl': '1h' } as const;
type ReportFlag = keyof typeof REPORT_FLAGS;

/**
 * Takes the report's own flags (`--x v`, `--x=v`) out of `argv`, before a `--`.
 * @returns their values (defaults filled in) and the other words.
 * @throws {FlagError} for a report flag without a value.
 */
export function splitReportFlags(argv: readonly string[]): { own: Record<ReportFlag, string>; rest: string[] } {
  const own: Record<ReportFlag, string> = { ...REPORT_FLAGS };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i] ?? '';
    if (w === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(w);
    const name = m?.[1];
    if (!m || name === undefined || !Object.hasOwn(REPORT_FLAGS, name)) {
      rest.push(w);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new FlagError(`--${name}: needs a value`, name);
    own[name as ReportFlag] = value;
  }
  return { own, rest };
}

/** Parsed flags. Durations **ms**. */
interface ShadowReportFlags extends EndpointOptions {
  output: 'table' | 'json';
  nodeSelector: string;
  toleranceMs: number;
  minHistoryMs: number;
  eventTtlMs: number;
}

function durationFlag(name: ReportFlag, text: string): number {
  try {
    return parseGoDuration(text);
  } catch (err) {
    if (err instanceof DurationSyntaxError) throw new FlagError(`--${name}: ${err.message}`, name);
    throw err;
  }
}

/**
 * The report's flags: its own, then `status`'s endpoint flags (one parser for both commands), with
 * the shadow's Lease as the default `--lease`.
 * @returns the flags, or undefined after printing `--help`. @throws {FlagError} for bad flags.
 */
async function parseFlags(argv: string[], io: CommandIo): Promise<ShadowReportFlags | undefined> {
  const { own, rest } = splitReportFlags(argv);
  const leaseGiven = rest.some((w) => /^--(lease|leader-elect-resource-name)(=|$)/.test(w));
  const flags = await parseInspectFlags('shadow-report', leaseGiven ? rest : [...rest, `--lease=${SHADOW_LEASE_NAME}`], USAGE, io, Object.keys(REPORT_FLAGS));
  if (!flags) return undefined;
  if (flags.args.length > 0) throw new FlagError(`shadow-report takes no arguments, got ${flags.args.join(' ')}`);
  const { args: _args, ...endpoint } = flags;
  return {
    ...endpoint,
    nodeSelector: own['node-selector'],
    toleranceMs: durationFlag('tolerance', own.tolerance),
    minHistoryMs: durationFlag('min-history', own['min-history']),
    eventTtlMs: durationFlag('event-ttl', own['event-ttl']),
  };
}

/**
 * A core/v1 Event as the report reads it.
 * @returns undefined when it has no usable time. Never throws.
 */
export function toObservedEvent(e: CoreV1Event): ObservedEvent | undefined {
  const t = e.eventTime ?? e.firstTimestamp ?? e.lastTimestamp ?? e.metadata.creationTimestamp;
  const atMs = t === undefined ? NaN : new Date(t as unknown as string).getTime();
  if (!Number.isFinite(atMs)) return undefined;
  return {
    reason: e.reason ?? '',
    message: e.message ?? '',
    component: e.source?.component ?? e.reportingComponent ?? '',
    involved: { kind: e.involvedObject.kind ?? '', name: e.involvedObject.name ?? '', ...(e.involvedObject.namespace ? { namespace: e.involvedObject.namespace } : {}) },
    atMs,
  };
}

/**
 * Reads the cluster side: nodes (by selector), every pod and every Event (list calls only).
 * @throws the API error of a failed list.
 */
async function readCluster(clients: KubeClients, nodeSelector: string): Promise<{ nodes: Node[]; pods: Pod[]; events: ObservedEvent[] }> {
  const [nodeList, podList, eventList] = await Promise.all([
    clients.core.listNode(nodeSelector ? { labelSelector: nodeSelector } : {}),
    clients.core.listPodForAllNamespaces({}),
    clients.core.listEventForAllNamespaces({}),
  ]);
  const defined = <T>(x: T | undefined): x is T => x !== undefined;
  return {
    nodes: nodeList.items.map((n) => toNode(n)).filter(defined),
    pods: podList.items.map((p) => toPod(p)).filter(defined),
    events: eventList.items.map(toObservedEvent).filter(defined),
  };
}

function asShadowState(v: unknown, where: string): ShadowState {
  const s = v as Partial<ShadowState> | undefined;
  if (!s || s.dryRun !== true || !Array.isArray(s.decisions) || typeof s.window?.fromMs !== 'number') {
    throw new Error(`${where}: the controller there is not running with --dry-run (no "shadow" section in /debug/state)`);
  }
  return s as ShadowState;
}

const at = (ms: number | undefined): string => (ms === undefined ? '—' : rfc3339(ms).slice(11, 23));
const diff = (ms: number | undefined): string => (ms === undefined ? '' : `${ms >= 0 ? '+' : '-'}${formatDuration(ms)}`);

/**
 * The report as text: window and notes, a table per node and per pod, the summary.
 * @returns the text, ending in a newline.
 */
export function renderShadowReport(r: ShadowReport): string {
  const lines = [
    `Shadow report: ${rfc3339(r.window.fromMs)} → ${rfc3339(r.window.toMs)} (${formatDuration(r.window.lengthMs)}), tolerance ±${formatDuration(r.toleranceMs)}`,
  ];
  for (const n of r.notes) lines.push(`note: ${n}`);
  const cells = (x: ReportRow): string[] => [x.action, at(x.kcmAtMs), at(x.oursAtMs), diff(x.diffMs), x.verdict];
  lines.push('', 'Nodes (times UTC):');
  lines.push(...(r.nodes.length === 0 ? ['  (none)'] : renderTable(['node', 'action', 'KCM', 'ours (would)', 'diff', 'verdict'], r.nodes.map((x) => [x.object, ...cells(x)])).map((l) => `  ${l}`)));
  lines.push('', 'Pods (times UTC):');
  lines.push(...(r.pods.length === 0 ? ['  (none)'] : renderTable(['pod', 'node', 'action', 'KCM', 'ours (would)', 'diff', 'verdict'], r.pods.map((x) => [x.object, x.node ?? '', ...cells(x)])).map((l) => `  ${l}`)));
  const s = r.summary;
  lines.push(
    '',
    `Summary: ${s.rows} rows: ${s.agree} agree, ${s['ours later']} ours later, ${s['ours earlier']} ours earlier, ${s['KCM only']} KCM only, ${s['ours only']} ours only, ${s['not compared']} not compared; ${s.disagreements} disagreement(s).`,
  );
  if (!r.enoughHistory) lines.push('Not enough history for a verdict over a longer period: see the notes above.');
  return `${lines.join('\n')}\n`;
}

/**
 * Runs `shadow-report`.
 * @param argv the words after `shadow-report`.
 * @returns 0.
 * @throws {FlagError} for bad flags (exit 2); {Error} with a one-line reason when the shadow or the
 *   cluster cannot be read, or the controller is not a shadow (exit 1).
 */
export async function runShadowReportCommand(argv: string[], io: CommandIo = processIo): Promise<number> {
  const flags = await parseFlags(argv, io);
  if (!flags) return 0;
  const clients = makeClients(loadKubeConfig(flags.kubeconfig));
  const { state, source } = await fetchDebugState(flags, clients);
  const shadow = asShadowState((state as unknown as Record<string, unknown>)['shadow'], source.url);
  const cluster = await readCluster(clients, flags.nodeSelector);
  const report = buildShadowReport(shadow, observeCluster(cluster.nodes, cluster.pods, cluster.events), {
    toleranceMs: flags.toleranceMs,
    minHistoryMs: flags.minHistoryMs,
    eventTtlMs: flags.eventTtlMs,
    nowMs: (io.now ?? Date.now)(),
  });
  io.out(flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderShadowReport(report));
  return 0;
}
