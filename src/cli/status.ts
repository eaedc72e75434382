/**
 * `node-lifecycle-controller status`: the running controller's view — leader, zones (state, size,
 * unhealthy count, rate, queue), the next node due for NoExecute tainting, pending pod deletions
 * with their deadlines, and paused zones with the reason — as a table or as JSON (`-o json`).
 *
 * The data is `/debug/state` (see inspect.ts for how it is reached). The report itself is a pure
 * function of that document and "now" ({@link buildStatusReport}), so it is unit-testable.
 * Not upstream: kube-controller-manager offers nothing like it.
 */
import yargs from 'yargs';
import { loadKubeConfig, makeClients, type KubeClients } from '../kube/client.js';
import { FlagError } from './flags.js';
import {
  checkEndpoint,
  ENDPOINT_YARGS_OPTIONS,
  fetchDebugState,
  formatEta,
  formatRate,
  leaderPodName,
  renderTable,
  rfc3339,
  secondsFromNow,
  zoneName,
  type DebugState,
  type EndpointOptions,
  type StateSource,
} from './inspect.js';
import type { EvictionGuardView } from '../nodelifecycle/guard.js';

/** Where the inspection commands write; injectable for tests. */
export interface CommandIo {
  /** Writes text to stdout as is (callers add newlines). */
  out: (text: string) => void;
  /** Writes text to stderr as is. */
  err: (text: string) => void;
  /** "Now" in epoch milliseconds; default `Date.now`. */
  now?: () => number;
}

/** The default {@link CommandIo}: the process's stdout and stderr and its clock. */
export const processIo: CommandIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};

/** One zone in the report. Rates in nodes per **second**. */
export interface ZoneStatus {
  /** `region:zone` (the label-less zone is `"" (nodes without zone labels)`). */
  zone: string;
  state: string;
  size: number;
  unhealthy: number;
  ratePerSecond: number;
  queueLength: number;
  /** The zone queue's head and the earliest time it can be processed. */
  next: { node: string; at: string; inSeconds: number } | null;
  pausedReason: string | null;
}

/** One cluster-wide eviction guard (`--max-unhealthy-nodes` or storm detection). */
export interface EvictionGuardStatus {
  guard: string;
  open: boolean;
  openedAt: string | null;
  /** When it closes if nothing changes; null unless it is open and closing. */
  closesAt: string | null;
  closesInSeconds: number | null;
  /** Nodes not Ready (breaker) or that became not Ready within the window (storm). */
  count: number;
  /** Above this many nodes the guard opens. */
  limit: number;
  total: number;
  settings: string;
  reason: string;
}

/**
 * The eviction guards of a `/debug/state` document (issue 16). Read narrowly: a controller
 * without the guards, or with the node lifecycle controller off, has none.
 * @returns the guards, possibly empty. Never throws.
 */
export function evictionGuardsOf(state: DebugState | undefined): readonly EvictionGuardView[] {
  // Absent in the /debug/state of a controller older than issue 16, whatever the type says.
  const guards: unknown = state?.nodeLifecycle?.evictionGuards;
  return Array.isArray(guards) ? (guards as EvictionGuardView[]) : [];
}

/** One pending pod deletion. `deadline` is RFC 3339; `deadlineInSeconds` is negative once past. */
export interface PendingDeletionStatus {
  pod: string;
  node: string;
  deadline: string;
  deadlineInSeconds: number;
  /** `scheduled` (waiting for the deadline) or `deleting` (due; being written or retried). */
  state: string;
  taints: string[];
  reason: string;
}

/** The `status -o json` document. Field names are stable; times are RFC 3339 plus seconds from `generatedAt`. */
export interface StatusReport {
  generatedAt: string;
  source: StateSource;
  /** The leader as the answering process sees it; `pod` is the hostname part of the identity. */
  leader: { identity: string; pod: string | null };
  /** The process that answered (the leader when reached through the Lease). */
  answeredBy: string;
  /** False while the controller cannot trust its caches (it then judges no node); null without the node lifecycle controller. */
  canSeeCluster: boolean | null;
  allZonesDisrupted: boolean;
  /** The cluster-wide eviction guards (issue 16); empty when both are off. While one is open no NoExecute taint is added anywhere. */
  evictionGuards: EvictionGuardStatus[];
  zones: ZoneStatus[];
  /** The earliest node due for NoExecute tainting in a zone that is not paused; null when none. */
  nextTaint: { node: string; zone: string; at: string; inSeconds: number } | null;
  pendingDeletions: PendingDeletionStatus[];
  pausedZones: { zone: string; state: string; reason: string }[];
  /** Volumes no running pod uses on a not-Ready node, with when the timeout path would force-detach them. */
  volumesAwaitingDetach: { volumeAttachment: string; node: string; persistentVolume: string; timeoutAt: string | null; timeoutInSeconds: number | null }[];
  /** Deleted nodes whose pods are in PodGC's orphan quarantine. */
  orphanQuarantine: { node: string; endsAt: string; endsInSeconds: number }[];
  /** Only for a `--dry-run` (shadow) process: what it would have done since `since` (see `shadow-report`). */
  shadow?: { since: string; decisions: number; totals: Record<string, number> };
}

/**
 * Builds the status report from a `/debug/state` document.
 * @param state the document; @param source where it came from; @param nowMs epoch milliseconds.
 * @returns the report (see {@link StatusReport}). Never throws.
 */
export function buildStatusReport(state: DebugState, source: StateSource, nowMs: number): StatusReport {
  const nlc = state.nodeLifecycle;
  const zones: ZoneStatus[] = (nlc?.zones ?? [])
    .map((z) => ({
      zone: zoneName(z.zoneLabel),
      state: z.state,
      size: z.size,
      unhealthy: z.unhealthy,
      ratePerSecond: z.rate,
      queueLength: z.queueLength,
      next: z.next ? { node: z.next.node, at: rfc3339(z.next.processAt), inSeconds: secondsFromNow(z.next.processAt, nowMs) } : null,
      pausedReason: z.pausedReason ?? null,
    }))
    .sort((a, b) => a.zone.localeCompare(b.zone));
  let nextTaint: StatusReport['nextTaint'] = null;
  let nextAt = Infinity;
  const guards = evictionGuardsOf(state);
  const guardOpen = guards.some((g) => g.open);
  for (const z of nlc?.zones ?? []) {
    if (!z.next || z.rate <= 0 || guardOpen) continue;
    // A head whose time has come waits only for its zone's token; report it as due now.
    const at = Math.max(z.next.processAt, nowMs);
    if (at < nextAt) {
      nextAt = at;
      nextTaint = { node: z.next.node, zone: zoneName(z.zoneLabel), at: rfc3339(at), inSeconds: secondsFromNow(at, nowMs) };
    }
  }
  const leader = state.leader;
  return {
    generatedAt: rfc3339(nowMs),
    source,
    leader: { identity: leader, pod: leaderPodName(leader) ?? null },
    answeredBy: state.identity,
    canSeeCluster: nlc ? nlc.canSeeCluster : null,
    allZonesDisrupted: nlc?.allZonesDisrupted ?? false,
    evictionGuards: guards.map((g) => ({
      guard: g.guard,
      open: g.open,
      openedAt: g.openedAt !== undefined ? rfc3339(g.openedAt) : null,
      closesAt: g.closesAt !== undefined ? rfc3339(g.closesAt) : null,
      closesInSeconds: g.closesAt !== undefined ? secondsFromNow(g.closesAt, nowMs) : null,
      count: g.count,
      limit: g.limit,
      total: g.total,
      settings: g.settings,
      reason: g.reason,
    })),
    zones,
    nextTaint,
    pendingDeletions: (state.taintEviction ?? []).map((p) => ({
      pod: p.pod,
      node: p.node,
      deadline: rfc3339(p.deadlineMs),
      deadlineInSeconds: secondsFromNow(p.deadlineMs, nowMs),
      state: p.state,
      taints: [...p.taints],
      reason: p.reason,
    })),
    pausedZones: zones.filter((z) => z.pausedReason !== null).map((z) => ({ zone: z.zone, state: z.state, reason: z.pausedReason ?? '' })),
    volumesAwaitingDetach: (state.forceDetach?.released ?? []).map((r) => ({
      volumeAttachment: r.volumeAttachment,
      node: r.node,
      persistentVolume: r.persistentVolume,
      timeoutAt: r.timeoutAt !== undefined ? rfc3339(r.timeoutAt) : null,
      timeoutInSeconds: r.timeoutAt !== undefined ? secondsFromNow(r.timeoutAt, nowMs) : null,
    })),
    orphanQuarantine: (state.podGC?.missingNodes ?? []).map((m) => ({
      node: m.node,
      endsAt: rfc3339(m.quarantineEndsAt),
      endsInSeconds: secondsFromNow(m.quarantineEndsAt, nowMs),
    })),
    ...(state.shadow
      ? { shadow: { since: rfc3339(state.shadow.startedAtMs), decisions: Object.values(state.shadow.totals).reduce((a, b) => a + (b ?? 0), 0), totals: { ...state.shadow.totals } as Record<string, number> } }
      : {}),
  };
}

/** Where the report came from, for the `Source:` line (a port-forward also says what its TLS check established). */
function sourceText(s: StateSource): string {
  const pod = `pod ${s.pod?.namespace}/${s.pod?.name}`;
  if (s.kind === 'endpoint') return s.url;
  if (s.kind === 'port-forward') return `port-forward to ${pod}, your token over TLS (${s.tls ?? ''})`;
  return `API server proxy to ${pod}`;
}

/** `in 3.0s` / `2.0s ago` from a seconds-from-now value. */
function etaText(inSeconds: number): string {
  return formatEta(inSeconds * 1000, 0);
}

/**
 * Renders a status report as text: a header, the zone table, the next taint, paused zones, and
 * the pending deletions (at most `maxDeletions` rows, then a count).
 * @returns the text, ending in a newline.
 */
export function renderStatusText(r: StatusReport, maxDeletions = 50): string {
  const lines: string[] = [];
  const leaderText = r.leader.identity === '' ? '(unknown)' : r.leader.identity;
  lines.push(`Leader:        ${leaderText}${r.leader.pod ? `  (pod ${r.leader.pod})` : ''}`);
  if (r.answeredBy !== r.leader.identity) lines.push(`Answered by:   ${r.answeredBy}`);
  lines.push(`Source:        ${sourceText(r.source)}`);
  if (r.shadow) {
    const totals = Object.entries(r.shadow.totals).map(([a, n]) => `${a} ${n}`).join(', ');
    lines.push(`Shadow mode:   --dry-run since ${r.shadow.since}: nothing is written; ${r.shadow.decisions} would-be writes${totals ? ` (${totals})` : ''} (see shadow-report)`);
  }
  if (r.canSeeCluster === null) lines.push('Node lifecycle controller: not running in this process');
  else lines.push(`Cluster sight: ${r.canSeeCluster ? 'caches current' : 'BLIND — no node is judged until the caches are current again'}`);
  if (r.allZonesDisrupted) lines.push('All zones are fully disrupted: NoExecute tainting is stopped everywhere (the controller assumes its own view is broken).');
  for (const g of r.evictionGuards) {
    lines.push(
      g.open
        ? `Eviction circuit OPEN (${g.guard}) since ${g.openedAt ?? '?'}: ${g.reason}`
        : `Eviction guard ${g.guard}: closed, ${g.count}/${g.limit} (${g.settings})`,
    );
  }
  lines.push('');
  if (r.zones.length > 0) {
    lines.push(
      ...renderTable(
        ['zone', 'state', 'size', 'unhealthy', 'rate/s', 'queue', 'next in queue'],
        r.zones.map((z) => [
          z.zone,
          z.state,
          String(z.size),
          String(z.unhealthy),
          formatRate(z.ratePerSecond),
          String(z.queueLength),
          z.next ? `${z.next.node} (${z.ratePerSecond > 0 ? etaText(Math.max(0, z.next.inSeconds)) : 'paused'})` : '',
        ]),
      ),
    );
  } else {
    lines.push('No zones yet.');
  }
  lines.push('');
  lines.push(
    r.nextTaint
      ? `Next node due for tainting: ${r.nextTaint.node} in zone ${r.nextTaint.zone}, ${etaText(r.nextTaint.inSeconds)} (${r.nextTaint.at})`
      : `Next node due for tainting: none${r.zones.some((z) => z.queueLength > 0) ? (r.evictionGuards.some((g) => g.open) ? ' (queued nodes wait for the eviction circuit to close)' : ' (queued nodes wait in paused zones)') : ''}`,
  );
  if (r.pausedZones.length > 0) {
    lines.push('Paused zones:');
    for (const p of r.pausedZones) lines.push(`  ${p.zone} (${p.state}): ${p.reason}`);
  } else {
    lines.push('Paused zones: none');
  }
  lines.push('');
  if (r.pendingDeletions.length === 0) {
    lines.push('Pending pod deletions: none');
  } else {
    lines.push(`Pending pod deletions: ${r.pendingDeletions.length}`);
    const shown = r.pendingDeletions.slice(0, maxDeletions);
    lines.push(
      ...renderTable(
        ['pod', 'node', 'deadline', 'eta', 'state', 'why'],
        shown.map((p) => [p.pod, p.node, p.deadline, etaText(p.deadlineInSeconds), p.state, p.reason]),
      ),
    );
    if (r.pendingDeletions.length > shown.length) lines.push(`… and ${r.pendingDeletions.length - shown.length} more (use -o json for all)`);
  }
  if (r.volumesAwaitingDetach.length > 0) {
    lines.push('');
    lines.push('Volumes awaiting force-detach:');
    lines.push(
      ...renderTable(
        ['volumeattachment', 'node', 'persistentvolume', 'timeout'],
        r.volumesAwaitingDetach.map((v) => [
          v.volumeAttachment,
          v.node,
          v.persistentVolume,
          v.timeoutInSeconds === null ? 'never (--disable-force-detach-on-timeout)' : `${etaText(v.timeoutInSeconds)}`,
        ]),
      ),
    );
  }
  if (r.orphanQuarantine.length > 0) {
    lines.push('');
    lines.push('Deleted nodes in orphan quarantine (their pods are force-deleted when it ends):');
    for (const o of r.orphanQuarantine) lines.push(`  ${o.node}: ends ${etaText(o.endsInSeconds)} (${o.endsAt})`);
  }
  return `${lines.join('\n')}\n`;
}

/** Parsed inspection flags (shared by `status` and `explain`). */
export interface InspectFlags extends EndpointOptions {
  output: 'table' | 'json';
  /** Positional words after the command. */
  args: string[];
}

/**
 * Parses the inspection flags for `command` (`status` or `explain`).
 * @returns the flags, or undefined after printing `--help`.
 * @throws {FlagError} for unknown flags, bad values or (for `status`) positional words.
 */
export async function parseInspectFlags(command: 'status' | 'explain' | 'shadow-report', argv: string[], usage: string, io: CommandIo): Promise<InspectFlags | undefined> {
  let helpText = '';
  const parser = yargs(argv)
    .scriptName(`node-lifecycle-controller ${command}`)
    .usage(usage)
    .parserConfiguration({ 'camel-case-expansion': false, 'boolean-negation': false })
    // Positional words (explain's `pod NS/NAME`) are checked by the commands themselves.
    .strictOptions()
    .exitProcess(false)
    .version(false)
    .help(false)
    .option('help', { alias: 'h', type: 'boolean', describe: 'show this help' })
    .wrap(110)
    .fail((msg: string | undefined, err: Error | undefined) => {
      throw new FlagError((msg ?? err?.message ?? 'invalid arguments').replace(/\s+/g, ' ').trim());
    })
    .options(ENDPOINT_YARGS_OPTIONS);
  const parsed = await parser.parseAsync();
  if (parsed.help) {
    parser.showHelp((s) => (helpText = s));
    io.out(`${helpText}\n`);
    return undefined;
  }
  checkEndpoint(parsed.endpoint);
  if (!Number.isInteger(parsed.port) || parsed.port < 1 || parsed.port > 65535) throw new FlagError(`--port: must be 1-65535, got ${String(parsed.port)}`, 'port');
  return {
    endpoint: parsed.endpoint,
    kubeconfig: parsed.kubeconfig,
    namespace: parsed.namespace,
    lease: parsed.lease,
    port: parsed.port,
    token: parsed.token,
    insecureSkipTlsVerify: parsed['insecure-skip-tls-verify'],
    certificateAuthority: parsed['certificate-authority'],
    tlsServerName: parsed['tls-server-name'],
    via: parsed.via === 'proxy' ? 'proxy' : 'port-forward',
    output: parsed.output === 'json' ? 'json' : 'table',
    args: parsed._.map(String),
  };
}

/**
 * API clients for the inspection commands, or undefined when `--endpoint` makes them unnecessary
 * and no `--kubeconfig` was given.
 * @param required true when the command needs the API (explain always does).
 * @throws {Error} when the kubeconfig cannot be loaded and the API is required.
 */
export function inspectClients(flags: EndpointOptions, required: boolean): KubeClients | undefined {
  if (!required && flags.endpoint && !flags.kubeconfig) return undefined;
  return makeClients(loadKubeConfig(flags.kubeconfig));
}

const STATUS_USAGE = `$0 [--endpoint URL | --kubeconfig FILE [--namespace NS --lease NAME --port PORT]] [-o table|json]

Shows the running controller's view: the leader, each zone's state, size, unhealthy count, tainting
rate and queue, the next node due for NoExecute tainting, pending pod deletions with their deadlines,
and paused zones with the reason. Reads /debug/state directly (--endpoint) or, in a cluster, from the
leader (found through its leader-election Lease) through a port-forward with your own token
(--via port-forward, the default) or the API server's pod proxy (--via proxy).`;

/**
 * Runs `status`.
 * @param argv the arguments after `status`.
 * @returns exit code 0.
 * @throws {FlagError} for bad flags (exit code 2 in program.ts); {Error} with a one-line reason
 *   when the state cannot be fetched (exit code 1).
 */
export async function runStatusCommand(argv: string[], io: CommandIo = processIo): Promise<number> {
  const flags = await parseInspectFlags('status', argv, STATUS_USAGE, io);
  if (!flags) return 0;
  if (flags.args.length > 0) throw new FlagError(`status takes no arguments, got ${flags.args.join(' ')}`);
  const clients = inspectClients(flags, false);
  const { state, source } = await fetchDebugState(flags, clients);
  const report = buildStatusReport(state, source, (io.now ?? Date.now)());
  io.out(flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderStatusText(report));
  return 0;
}
