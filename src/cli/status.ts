/**
 * `node-lifecycle-controller status`: the running controller's view — leader, zones (state, size,
 * unhealthy count, rate, queue), the next node due for NoExecute tainting, pending pod deletions
 * with their deadlines, and paused zones with the reason — as a table or as JSON (`-o json`).
 *
 * The data is `/debug/state` (see inspect.ts for how it is reached). The report itself is a pure
 * function of that document and "now" (src/explain/status.ts `buildStatusReport`); this file
 * parses the flags, fetches, and prints.
 * Not upstream: kube-controller-manager offers nothing like it.
 */
import yargs from 'yargs';
import { loadKubeConfig, makeClients, type KubeClients } from '../kube/client.js';
import type { StateSource } from '../explain/state.js';
import { buildStatusReport, type StatusReport } from '../explain/status.js';
import { formatEta, formatRate } from '../util/format.js';
import { didYouMean } from '../util/nearest.js';
import { FlagError } from './flags.js';
import { checkEndpoint, ENDPOINT_YARGS_OPTIONS, fetchDebugState, renderTable, type EndpointOptions } from './inspect.js';

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
export async function parseInspectFlags(
  command: 'status' | 'explain' | 'shadow-report',
  argv: string[],
  usage: string,
  io: CommandIo,
  ownFlags: readonly string[] = [],
): Promise<InspectFlags | undefined> {
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
      throw new FlagError(unknownInspectFlag(argv, ownFlags) ?? (msg ?? err?.message ?? 'invalid arguments').replace(/\s+/g, ' ').trim());
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

/** Every flag name (and alias) of the inspection commands, without dashes. */
function inspectFlagNames(): string[] {
  const names = ['help', 'h'];
  for (const [name, spec] of Object.entries(ENDPOINT_YARGS_OPTIONS)) {
    names.push(name);
    if ('alias' in spec) names.push(...(typeof spec.alias === 'string' ? [spec.alias] : spec.alias));
  }
  return names;
}

/**
 * The first dash-led word that is no flag of the command, as `unknown flag: --x`, with the nearest
 * known flag when it looks like a typo; undefined when yargs failed for another reason.
 * @param ownFlags the command's own flags, taken out before yargs sees the rest (shadow-report's).
 */
function unknownInspectFlag(argv: readonly string[], ownFlags: readonly string[]): string | undefined {
  const known = new Set([...inspectFlagNames(), ...ownFlags]);
  for (const token of argv) {
    if (token === '--') break;
    if (!token.startsWith('-') || token === '-' || /^-\d/.test(token)) continue;
    const name = token.replace(/^--?/, '').split('=')[0] ?? '';
    if (!known.has(name)) return `unknown flag: ${token.split('=')[0]}${didYouMean(name, known)}`;
  }
  return undefined;
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
