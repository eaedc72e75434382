/**
 * The demo's terminal output, as pure functions: the live view (zones, nodes, pending deletions
 * and a scrolling event log, redrawn in place on a TTY), the plain timestamped lines used without
 * a TTY, the diffs that turn successive snapshots into log lines, and the final summary.
 *
 * Nothing here reads a clock or writes to a stream: callers pass "now" (epoch **milliseconds**)
 * and print the returned lines. Not upstream (kube-controller-manager has no demo).
 */
import type { NodeLifecycleView } from '../../../src/nodelifecycle/controller.js';
import type { PendingPodDeletion } from '../../../src/tainteviction/controller.js';
import { zoneName } from '../../../src/explain/state.js';
import { formatDuration, formatEta, formatRate } from '../../../src/util/format.js';
import { renderTable, visibleLength } from '../../../src/cli/inspect.js';

/** A fleet node as the demo observes it through its watch. */
export interface ObservedNode {
  name: string;
  /** The zone label value (`topology.kubernetes.io/zone`). */
  zone: string;
  /** Ready condition status, undefined when absent. */
  ready: string | undefined;
  /** Taints as `key=value:effect`, sorted. */
  taints: string[];
}

/** Kinds of log lines; they choose the colour and the marker. */
export type LogKind = 'step' | 'action' | 'node' | 'taint' | 'zone' | 'deletion' | 'event' | 'info' | 'ok' | 'error';

/** One line of the demo's event log. `atMs` is epoch ms. */
export interface LogEntry {
  atMs: number;
  kind: LogKind;
  text: string;
}

/** What the live view shows at one moment. Times are epoch ms. */
export interface LiveModel {
  title: string;
  /** The running step's headline, or a setup phase. */
  phase: string;
  /** When the scenario started (the `T+` origin). */
  originMs: number;
  nowMs: number;
  zones: NodeLifecycleView['zones'];
  nodes: readonly ObservedNode[];
  pending: readonly PendingPodDeletion[];
  log: readonly LogEntry[];
}

/** Terminal geometry and whether to colour. */
export interface ViewOptions {
  columns: number;
  rows: number;
  color: boolean;
}

const ANSI = {
  reset: '\x1b[0m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
  red: '\x1b[31m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
  blue: '\x1b[34m',
  magenta: '\x1b[35m',
  cyan: '\x1b[36m',
} as const;

type Paint = (code: keyof typeof ANSI, s: string) => string;

function painter(color: boolean): Paint {
  return (code, s) => (color ? `${ANSI[code]}${s}${ANSI.reset}` : s);
}

/**
 * `T+12.3s`-style offset of `atMs` from `originMs` (milliseconds); `T-…` before the origin.
 */
export function tPlus(atMs: number, originMs: number): string {
  const d = atMs - originMs;
  return `T${d < 0 ? '-' : '+'}${(Math.abs(d) / 1000).toFixed(1)}s`;
}

/** Wall-clock time of day in UTC with milliseconds, e.g. `12:00:01.234Z`. */
export function clockTime(atMs: number): string {
  return new Date(atMs).toISOString().slice(11, 23) + 'Z';
}

const KIND_COLOR: Readonly<Record<LogKind, keyof typeof ANSI>> = {
  step: 'bold',
  action: 'magenta',
  node: 'yellow',
  taint: 'cyan',
  zone: 'yellow',
  deletion: 'blue',
  event: 'reset',
  info: 'dim',
  ok: 'green',
  error: 'red',
};

/**
 * One plain log line: `12:00:01.234Z T+7.1s  text` (steps get a leading `==>`).
 * @param e the entry; @param originMs the `T+` origin (epoch ms); @param color ANSI colours on/off.
 */
export function formatLogLine(e: LogEntry, originMs: number, color = false): string {
  const paint = painter(color);
  const text = e.kind === 'step' ? `==> ${e.text}` : e.text;
  return `${paint('dim', `${clockTime(e.atMs)} ${tPlus(e.atMs, originMs).padStart(8)}`)}  ${paint(KIND_COLOR[e.kind], text)}`;
}

/**
 * Cuts a string to `width` visible characters (ANSI sequences are kept and take no room), adding
 * `…` when it was cut.
 */
export function truncateVisible(s: string, width: number): string {
  if (visibleLength(s) <= width) return s;
  let out = '';
  let seen = 0;
  for (let i = 0; i < s.length; ) {
    // eslint-disable-next-line no-control-regex
    const m = /^\x1b\[[0-9;]*m/.exec(s.slice(i));
    if (m) {
      out += m[0];
      i += m[0].length;
      continue;
    }
    if (seen >= width - 1) break;
    out += s[i];
    seen++;
    i++;
  }
  return `${out}…${s.includes('\x1b[') ? ANSI.reset : ''}`;
}

/** The glyph of a node in the zone strip: Ready, Unknown, NotReady, or no condition yet. */
function nodeGlyph(n: ObservedNode, paint: Paint): string {
  const noExecute = n.taints.some((t) => t.endsWith(':NoExecute'));
  if (n.ready === 'True') return paint(noExecute ? 'yellow' : 'green', '●');
  if (n.ready === 'Unknown') return paint('red', noExecute ? '◌' : '○');
  if (n.ready === 'False') return paint('yellow', '✕');
  return paint('dim', '·');
}

/** Natural order of node names ending in an index (`…-2` before `…-10`). */
function byNodeIndex(a: ObservedNode, b: ObservedNode): number {
  const ia = Number(/(\d+)$/.exec(a.name)?.[1] ?? NaN);
  const ib = Number(/(\d+)$/.exec(b.name)?.[1] ?? NaN);
  if (!Number.isNaN(ia) && !Number.isNaN(ib) && a.name.replace(/\d+$/, '') === b.name.replace(/\d+$/, '')) return ia - ib;
  return a.name.localeCompare(b.name);
}

/**
 * Renders the live view: header, zone table, a strip of node glyphs per zone, details of nodes
 * that are not Ready or carry taints, pending deletions, and as much of the log as fits.
 * @returns lines without newlines, each at most `columns` visible characters, at most `rows` lines.
 */
export function renderLiveView(m: LiveModel, o: ViewOptions): string[] {
  const paint = painter(o.color);
  const width = Math.max(40, o.columns);
  const out: string[] = [];
  out.push(`${paint('bold', m.title)}  ${paint('dim', `${clockTime(m.nowMs)}  ${tPlus(m.nowMs, m.originMs)}`)}`);
  out.push(paint('magenta', m.phase));
  out.push('');
  if (m.zones.length > 0) {
    const zones = [...m.zones].sort((a, b) => a.zoneLabel.localeCompare(b.zoneLabel));
    const table = renderTable(
      ['zone', 'state', 'size', 'unhealthy', 'rate/s', 'queue', 'paused because'],
      zones.map((z) => {
        const stateColor = z.state === 'Normal' ? 'green' : z.state === 'Initial' ? 'dim' : 'red';
        return [
          zoneName(z.zoneLabel),
          paint(stateColor, z.state),
          String(z.size),
          z.unhealthy > 0 ? paint('red', String(z.unhealthy)) : '0',
          z.rate > 0 ? formatRate(z.rate) : paint('red', formatRate(z.rate)),
          String(z.queueLength),
          z.pausedReason ? paint('yellow', z.pausedReason) : '',
        ];
      }),
    );
    out.push(...table);
  } else {
    out.push(paint('dim', 'zones: waiting for the controller…'));
  }
  out.push('');
  out.push(`${paint('bold', 'NODES')}  ${paint('dim', '● Ready  ○ Unknown  ◌ Unknown+NoExecute  ✕ NotReady')}`);
  const byZone = new Map<string, ObservedNode[]>();
  for (const n of m.nodes) byZone.set(n.zone, [...(byZone.get(n.zone) ?? []), n]);
  const zoneWidth = Math.max(4, ...[...byZone.keys()].map((z) => z.length));
  for (const zone of [...byZone.keys()].sort()) {
    const nodes = (byZone.get(zone) ?? []).sort(byNodeIndex);
    const ready = nodes.filter((n) => n.ready === 'True').length;
    out.push(`  ${zone.padEnd(zoneWidth)}  ${nodes.map((n) => nodeGlyph(n, paint)).join('')}  ${paint('dim', `${ready}/${nodes.length} Ready`)}`);
  }
  const notable = [...m.nodes].filter((n) => n.ready !== 'True' || n.taints.length > 0).sort(byNodeIndex);
  const maxNotable = 8;
  const nameWidth = Math.max(0, ...notable.map((n) => n.name.length));
  for (const n of notable.slice(0, maxNotable)) {
    const readyText = n.ready === 'True' ? paint('green', 'Ready') : paint('red', (n.ready ?? 'none').padEnd(7));
    out.push(`    ${n.name.padEnd(nameWidth)}  ${readyText}  ${n.taints.map((t) => (t.endsWith(':NoExecute') ? paint('cyan', t) : t)).join(', ')}`);
  }
  if (notable.length > maxNotable) out.push(paint('dim', `    … and ${notable.length - maxNotable} more not Ready or tainted`));
  out.push('');
  if (m.pending.length > 0) {
    const next = m.pending[0] as PendingPodDeletion;
    out.push(
      `${paint('bold', 'PENDING POD DELETIONS')} ${m.pending.length}  ${paint('dim', `next: ${next.pod} ${formatEta(next.deadlineMs, m.nowMs)}`)}`,
    );
  } else {
    out.push(`${paint('bold', 'PENDING POD DELETIONS')} 0`);
  }
  out.push('');
  out.push(paint('bold', 'EVENTS'));
  const room = Math.max(3, o.rows - out.length - 1);
  for (const e of m.log.slice(-room)) out.push(formatLogLine(e, m.originMs, o.color));
  return out.slice(0, Math.max(o.rows - 1, 10)).map((l) => truncateVisible(l, width));
}

/**
 * The log lines for changes between two observations of the fleet's nodes: Ready transitions and
 * taints added or removed. New nodes and vanished nodes give no lines.
 * @param before previous snapshot by name; @param after current one; @param atMs epoch ms.
 */
export function diffNodes(before: ReadonlyMap<string, ObservedNode>, after: ReadonlyMap<string, ObservedNode>, atMs: number): LogEntry[] {
  const out: LogEntry[] = [];
  for (const [name, n] of after) {
    const b = before.get(name);
    if (!b) continue;
    if (b.ready !== n.ready) out.push({ atMs, kind: n.ready === 'True' ? 'ok' : 'node', text: `${name}  Ready ${b.ready ?? 'none'} → ${n.ready ?? 'none'}` });
    for (const t of n.taints) if (!b.taints.includes(t)) out.push({ atMs, kind: 'taint', text: `${name}  + taint ${t}` });
    for (const t of b.taints) if (!n.taints.includes(t)) out.push({ atMs, kind: 'taint', text: `${name}  - taint ${t}` });
  }
  return out;
}

/**
 * The log lines for changes in the controller's view: zone state and rate changes, pauses set or
 * cleared, and pending pod deletions scheduled.
 * @param before previous view and pending list (undefined on the first call: no lines);
 * @param after current ones; @param atMs epoch ms.
 */
export function diffControllerView(
  before: { zones: NodeLifecycleView['zones']; pending: readonly PendingPodDeletion[] } | undefined,
  after: { zones: NodeLifecycleView['zones']; pending: readonly PendingPodDeletion[] },
  atMs: number,
): LogEntry[] {
  if (!before) return [];
  const out: LogEntry[] = [];
  const prevZones = new Map(before.zones.map((z) => [z.zone, z]));
  for (const z of after.zones) {
    const p = prevZones.get(z.zone);
    const name = zoneName(z.zoneLabel);
    if (!p) continue;
    if (p.state !== z.state) out.push({ atMs, kind: 'zone', text: `zone ${name}  ${p.state} → ${z.state} (${z.unhealthy}/${z.size} not Ready)` });
    if (p.rate !== z.rate) out.push({ atMs, kind: 'zone', text: `zone ${name}  tainting rate ${formatRate(p.rate)} → ${formatRate(z.rate)} node/s` });
    if (!p.pausedReason && z.pausedReason) out.push({ atMs, kind: 'zone', text: `zone ${name}  tainting paused: ${z.pausedReason}` });
    if (p.pausedReason && !z.pausedReason) out.push({ atMs, kind: 'ok', text: `zone ${name}  tainting resumed` });
  }
  const known = new Set(before.pending.map((p) => `${p.uid}@${p.deadlineMs}`));
  for (const p of after.pending) {
    if (known.has(`${p.uid}@${p.deadlineMs}`) || p.state !== 'scheduled') continue;
    out.push({ atMs, kind: 'deletion', text: `pod ${p.pod}  deletion due ${formatEta(p.deadlineMs, atMs)} (${clockTime(p.deadlineMs)}): ${p.reason}` });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------------------------

/** The scenario steps, in the order they always run. */
export const DEMO_STEPS = ['power-loss', 'recover', 'zone-outage', 'out-of-service', 'memory-pressure', 'node-pressure', 'node-affinity'] as const;
/** One scenario step. */
export type DemoStep = (typeof DEMO_STEPS)[number];

/** What one step did. Times (`t…`) are seconds since the scenario started. */
export interface DemoStepSummary {
  step: DemoStep;
  ok: boolean;
  /** Why the step failed, when it did. */
  error: string | null;
  tStart: number;
  tEnd: number;
  /** The nodes the step acted on. */
  nodes: string[];
  /** What happened, one sentence a line, with `T+` times. */
  lines: string[];
  /** Taints that appeared on the step's nodes, with when they were first seen. */
  taints: { node: string; taint: string; t: number }[];
  /** Pods the taint eviction controller marked for deletion during the step. */
  evictions: { pod: string; tolerationSeconds: number | null; t: number; afterTaintSeconds: number | null }[];
  /** Pod deletions still pending when the step ended. */
  pending: { pod: string; deadline: string }[];
  /** The zone pause explanation (zone-outage). */
  pausedReason: string | null;
  /** Pods PodGC force-deleted (out-of-service). */
  forceDeletedPods: string[];
  /** VolumeAttachments force-detached (out-of-service). */
  detachedVolumeAttachments: string[];
}

/** The demo's machine-readable summary (`--summary-json`). */
export interface DemoSummary {
  ok: boolean;
  error: string | null;
  interrupted: boolean;
  prefix: string;
  namespace: string;
  kubeconfig: string;
  /** Where the controller served /metrics and /debug/state while the demo ran. */
  controllerEndpoint: string | null;
  controllerLog: string;
  startedAt: string;
  scenarioStartedAt: string | null;
  durationSeconds: number;
  steps: DemoStepSummary[];
  /** kubectl commands that show the same from the cluster. */
  kubectl: string[];
  /** Whether the cluster and fleet were left running (`--keep`). */
  kept: boolean;
}

/**
 * The kubectl commands that show what the demo did, from the cluster.
 * @param kubeconfig path; @param prefix the fleet prefix (node label `nlc.sim/fleet`);
 * @param namespace the fleet's namespace; @param nodes nodes worth describing.
 */
export function kubectlCommands(kubeconfig: string, prefix: string, namespace: string, nodes: readonly string[]): string[] {
  const cmds = [
    `export KUBECONFIG=${kubeconfig}`,
    `kubectl get nodes -l nlc.sim/fleet=${prefix} -o custom-columns='NAME:.metadata.name,ZONE:.metadata.labels.topology\\.kubernetes\\.io/zone,READY:.status.conditions[?(@.type=="Ready")].status,TAINTS:.spec.taints[*].key,EFFECTS:.spec.taints[*].effect'`,
  ];
  for (const n of nodes) cmds.push(`kubectl describe node ${n}`);
  cmds.push(
    `kubectl get events -n ${namespace} --field-selector reason=TaintManagerEviction`,
    'kubectl get events --field-selector reason=NodeNotReady',
    'kubectl get events --field-selector reason=ZoneEvictionPaused',
    `kubectl get events -n ${namespace} --field-selector reason=ForceDeletedOutOfService`,
    'kubectl get events --field-selector reason=ForceDetachedOutOfService',
  );
  return cmds;
}

/**
 * Renders the end-of-demo summary text.
 * @returns lines without newlines.
 */
export function renderSummary(s: DemoSummary, color = false): string[] {
  const paint = painter(color);
  const out: string[] = [];
  out.push(paint('bold', `Summary${s.interrupted ? ' (interrupted)' : s.ok ? '' : ' (FAILED)'}: ${s.steps.length} step(s) in ${formatDuration(s.durationSeconds * 1000)}; T+ counts from ${s.scenarioStartedAt ?? 'the start'}`));
  s.steps.forEach((st, i) => {
    out.push(`${paint(st.ok ? 'green' : 'red', st.ok ? '✓' : '✗')} ${i + 1}. ${paint('bold', st.step)}  (T+${st.tStart.toFixed(1)}s … T+${st.tEnd.toFixed(1)}s)`);
    for (const l of st.lines) out.push(`     ${l}`);
    if (st.error) out.push(`     ${paint('red', `failed: ${st.error}`)}`);
  });
  if (s.error && !s.steps.some((st) => st.error === s.error)) out.push(paint('red', `Error: ${s.error}`));
  out.push('');
  out.push(paint('bold', s.kept ? 'See the same from the cluster (it is still running):' : 'See the same from the cluster (rerun with --keep to leave it running):'));
  for (const c of s.kubectl) out.push(`  ${c}`);
  out.push('');
  out.push(`Controller log: ${s.controllerLog}`);
  return out;
}
