/**
 * The node-pressure part of `explain node` and `explain pod` (docs/node-pressure.md
 * "Explained"): for a node with MemoryPressure / DiskPressure / PIDPressure, the signal, its observed
 * value and threshold, since when, and the kubelet's eviction order of the node's pods with the
 * reasons; for a pod the kubelet evicted, the signal and threshold from its status message.
 *
 * The live ranking needs the kubelet's Summary API (`/stats/summary`) and configuration (`/configz`),
 * read through the API server's node proxy, which needs `get` on `nodes/proxy`: a powerful right (it
 * reaches every kubelet API, including exec and logs of every pod on the node), never part of the
 * chart's read-only role. Without it the ranking is static (QoS class, priority, requests) and says so.
 *
 * Pure functions ({@link explainNodePressure}, {@link explainKubeletEviction}, renderers) over one I/O
 * function ({@link readKubeletView}). The ranking rules are src/kubelet's port of
 * pkg/kubelet/eviction/helpers.go (v1.37.2); not upstream as a tool: kubectl has nothing like it.
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { describeError, makeReviewClients } from '../kube/client.js';
import type { NodeCondition } from '../kube/objects.js';
import { formatReadableBytes, parseQuantity } from '../kube/quantity.js';
import { rankPodsForEviction, type RankedPod } from '../kubelet/ranking.js';
import {
  SIGNAL_TO_NODE_CONDITION, SIGNAL_TO_RESOURCE, formatResourceQuantity, makeSignalObservations,
  type PressureConditionType, type Signal, type SignalObservations, type StarvedResource, type Summary,
} from '../kubelet/signals.js';
import {
  evictionConfigFromKubeletConfiguration, getThresholdQuantity, sortByEvictionPriority,
  type KubeletEvictionConfiguration, type Threshold,
} from '../kubelet/thresholds.js';
import { formatGoDuration } from '../util/duration.js';
import { apiServerGet, renderTable } from './inspect.js';

const PRESSURE_CONDITIONS: readonly PressureConditionType[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];
const QOS_ORDER = { BestEffort: 0, Burstable: 1, Guaranteed: 2 } as const;
/**
 * How often a kubelet's Summary API stats refresh, ms: cadvisor's default `--housekeeping_interval`
 * (10 s), which is also the eviction manager's monitoring period. A stats document can be that old.
 */
export const KUBELET_STATS_REFRESH_MS = 10_000;

/**
 * A quantity of `resource` for people: bytes in binary units with up to two decimals (`20.0Gi`,
 * {@link formatReadableBytes}); inodes and PIDs as plain counts. Exact values stay in the `*Value`
 * fields of `-o json`; the kubelet's own messages keep Go's form ({@link formatResourceQuantity}).
 */
export function formatReadableQuantity(resource: StarvedResource, value: number): string {
  return resource === 'memory' || resource === 'ephemeral-storage' ? formatReadableBytes(value) : String(Math.ceil(value));
}

/** What could be read from the node's kubelet through the node proxy. */
export interface KubeletView {
  /** `allowed`: the caller may `get nodes/proxy`; `denied`: it may not; `unknown`: the review failed */
  access: 'allowed' | 'denied' | 'unknown';
  summary?: Summary;
  /** the eviction fields of `/configz` */
  kubeletConfig?: KubeletEvictionConfiguration;
  /** why something is missing, one line each */
  notes: string[];
}

/**
 * One signal of a pressure condition. `observed`, `capacity` and `thresholdResolved` are for people
 * ({@link formatReadableQuantity}: `20.0Gi`, plain counts); the `*Value` fields are exact, in base
 * units (`unit`: bytes, or a count of inodes / PIDs).
 */
export interface PressureSignalView {
  signal: Signal;
  condition: PressureConditionType;
  unit: 'bytes' | 'count';
  /** available at `statsTime` (Summary API); null without it */
  observed: string | null;
  observedValue: number | null;
  capacity: string | null;
  capacityValue: number | null;
  /** the threshold as configured (Go's canonical quantity or a percentage), e.g. `1Gi` or `10%` */
  threshold: string;
  /** the threshold in base units (a percentage resolved against the capacity, float32 as upstream); null when unknown */
  thresholdValue: number | null;
  /** `thresholdValue` for people; null when unknown */
  thresholdResolved: string | null;
  kind: 'hard' | 'soft';
  /** Go duration of a soft threshold's grace period */
  gracePeriod: string | null;
  /** whether `observed < threshold` as of `statsTime`; null without the Summary API */
  met: boolean | null;
  /** when the kubelet took the stats of this signal (ISO 8601); null when unknown */
  statsTime: string | null;
}

/** One pod in the eviction order, for output. `usage`/`request` for people; `*Value` exact, in base units. */
export interface RankedPodView {
  rank: number;
  pod: string;
  qosClass: RankedPod['qosClass'];
  priority: number;
  usage: string | null;
  usageValue: number | null;
  request: string;
  requestValue: number;
  exceedsRequest: boolean | null;
  critical: boolean;
  /** the pod's deletionTimestamp (ISO 8601) when it is being deleted: it is never named as next; null otherwise */
  terminating: string | null;
  why: string[];
}

/** A pod the stats still count but that no longer runs: left out of the ranking. */
export interface NotRankedPodView {
  pod: string;
  /** `Failed (Evicted)`, `Succeeded`, `no longer exists` */
  why: string;
}

/** The `pressure` part of `explain node -o json`. */
export interface NodePressureExplanation {
  conditions: { type: PressureConditionType; since: string | null; sinceSeconds: number | null; message: string | null }[];
  /** `summary-api`: live usage through the node proxy; `static`: no usage, the static order */
  source: 'summary-api' | 'static';
  /** `configz`: the node's kubelet; `kubelet-defaults`: assumed (the node's own were not readable) */
  thresholdsFrom: 'configz' | 'kubelet-defaults';
  /** `evictionPressureTransitionPeriod`, Go duration */
  transitionPeriod: string;
  /**
   * When the kubelet took the stats the signals and ranking are computed from (the ranking signal's,
   * else the oldest shown), their age at `nowMs` in seconds (one decimal) and how often the kubelet
   * refreshes them (seconds); null without the Summary API or without times in it.
   */
  stats: { time: string; ageSeconds: number; refreshSeconds: number } | null;
  signals: PressureSignalView[];
  ranking: {
    signal: Signal; resource: StarvedResource; static: boolean;
    /** the stats time the live ranking is as of (= `stats.time`); null for the static order */
    asOf: string | null;
    /**
     * the first pod the kubelet would evict: never a critical, terminating, terminal or vanished pod.
     * When `staleStats`, only if the threshold is still met on the kubelet's next stats.
     */
    next: string | null;
    /** true when the stats still count a pod that is terminal or gone: the signal may already have recovered */
    staleStats: boolean;
    pods: RankedPodView[];
    notRanked: NotRankedPodView[];
  };
  notes: string[];
  explanation: string[];
}

/** Inputs of {@link explainNodePressure}. */
export interface NodePressureInput {
  conditions: readonly NodeCondition[];
  /** the pods bound to the node, as read from the API */
  pods: readonly V1Pod[];
  kubelet: KubeletView;
  /** epoch ms */
  nowMs: number;
}

const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
/** `04:15:31Z` of an ISO 8601 time (the date is in `-o json`). */
const clockTime = (iso: string): string => `${iso.slice(11, 19)}Z`;

/** The threshold as configured (`1Gi`, `10%`) and in base units (a percentage needs the capacity). */
function thresholdOf(t: Threshold, capacity: number | undefined): { text: string; value: number | null } {
  if (t.value.percentage !== undefined) {
    return { text: `${Number((t.value.percentage * 100).toPrecision(6))}%`, value: capacity === undefined ? null : getThresholdQuantity(t.value, capacity) };
  }
  const value = getThresholdQuantity(t.value, 0);
  return { text: formatResourceQuantity(SIGNAL_TO_RESOURCE[t.signal], value), value };
}

/** A pod's deletionTimestamp as ISO 8601 (the client gives a Date; plain JSON a string). */
function deletionTime(pod: V1Pod): string | null {
  const d = pod.metadata?.deletionTimestamp as Date | string | undefined;
  if (d === undefined || d === null) return null;
  const ms = new Date(d).getTime();
  return Number.isNaN(ms) ? String(d) : new Date(ms).toISOString();
}

const isTerminal = (pod: V1Pod): boolean => pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';

/**
 * Pods the Summary still has stats for that no longer run: terminal in the API (the kubelet evicted or
 * finished them after taking the stats) or gone from it (a UID the pod list lacks). Their usage is still
 * in the node's signals until the kubelet's next stats.
 */
function podsCountedButGone(summary: Summary | undefined, pods: readonly V1Pod[]): NotRankedPodView[] {
  if (!summary) return [];
  const byUid = new Map(pods.map((p) => [p.metadata?.uid ?? '', p]));
  const out: NotRankedPodView[] = [];
  for (const s of summary.pods) {
    const p = byUid.get(s.podRef.uid);
    const key = `${s.podRef.namespace}/${s.podRef.name}`;
    if (!p) out.push({ pod: key, why: 'no longer exists' });
    else if (isTerminal(p)) out.push({ pod: key, why: `${p.status?.phase ?? ''}${p.status?.reason ? ` (${p.status.reason})` : ''}` });
  }
  return out;
}

/** The signal whose order the kubelet would evict by: a met threshold, memory first; else the condition's first signal. */
function rankingSignal(thresholds: readonly Threshold[], observations: SignalObservations, pressured: readonly PressureConditionType[]): Signal {
  const met = sortByEvictionPriority(thresholds.filter((t) => {
    const o = observations[t.signal];
    return o !== undefined && o.available < getThresholdQuantity(t.value, o.capacity);
  }));
  if (met[0]) return met[0].signal;
  const first = sortByEvictionPriority(thresholds.filter((t) => pressured.includes(SIGNAL_TO_NODE_CONDITION[t.signal])))[0];
  if (first) return first.signal;
  return pressured[0] === 'DiskPressure' ? 'nodefs.available' : pressured[0] === 'PIDPressure' ? 'pid.available' : 'memory.available';
}

/**
 * The static order (no usage): for memory and disk, QoS class (a BestEffort pod is over its zero
 * request as soon as it uses anything, a Guaranteed one cannot exceed its request), then priority,
 * then the smaller request; for PIDs, priority. A prediction, not the kubelet's order, which ranks by usage.
 */
function staticOrder(ranked: readonly RankedPod[], resource: StarvedResource): RankedPod[] {
  const sorted = [...ranked].sort((a, b) =>
    resource === 'pids'
      ? a.priority - b.priority
      : QOS_ORDER[a.qosClass] - QOS_ORDER[b.qosClass] || a.priority - b.priority || a.request - b.request);
  return sorted.map((r, i) => ({
    ...r, rank: i + 1,
    why: resource === 'pids'
      ? [`priority ${r.priority}`]
      : [`${r.qosClass}`, `priority ${r.priority}`, `request ${formatReadableQuantity(resource, r.request)}`],
  }));
}

/**
 * Explains a node's pressure conditions: the signals with observed value and threshold, since when
 * (the condition's lastTransitionTime), and the eviction order of its active pods.
 * @returns undefined when no pressure condition is True. Never throws (a bad `/configz` falls back to
 *   the kubelet's defaults, with a note).
 */
export function explainNodePressure(input: NodePressureInput): NodePressureExplanation | undefined {
  const { kubelet, nowMs } = input;
  const pressured = input.conditions.filter((c) => c.status === 'True' && (PRESSURE_CONDITIONS as readonly string[]).includes(c.type));
  if (pressured.length === 0) return undefined;
  const types = pressured.map((c) => c.type as PressureConditionType);
  const notes = [...kubelet.notes];
  let thresholdsFrom: NodePressureExplanation['thresholdsFrom'] = kubelet.kubeletConfig ? 'configz' : 'kubelet-defaults';
  let config;
  try {
    config = evictionConfigFromKubeletConfiguration(kubelet.kubeletConfig ?? {});
  } catch (err) {
    notes.push(`the kubelet's /configz eviction settings do not parse (${(err as Error).message}): assuming the kubelet's defaults`);
    thresholdsFrom = 'kubelet-defaults';
    config = evictionConfigFromKubeletConfiguration({});
  }
  const { observations, stats } = kubelet.summary ? makeSignalObservations(kubelet.summary) : { observations: {}, stats: () => undefined };
  const relevant = config.thresholds.filter((t) => types.includes(SIGNAL_TO_NODE_CONDITION[t.signal]));
  const signals: PressureSignalView[] = relevant.map((t) => {
    const o = observations[t.signal];
    const resource = SIGNAL_TO_RESOURCE[t.signal];
    const threshold = thresholdOf(t, o?.capacity);
    return {
      signal: t.signal, condition: SIGNAL_TO_NODE_CONDITION[t.signal],
      unit: resource === 'memory' || resource === 'ephemeral-storage' ? 'bytes' : 'count',
      observed: o ? formatReadableQuantity(resource, o.available) : null,
      observedValue: o?.available ?? null,
      capacity: o ? formatReadableQuantity(resource, o.capacity) : null,
      capacityValue: o?.capacity ?? null,
      threshold: threshold.text,
      thresholdValue: threshold.value,
      thresholdResolved: threshold.value === null ? null : formatReadableQuantity(resource, threshold.value),
      kind: t.gracePeriodMs === 0 ? 'hard' : 'soft',
      gracePeriod: t.gracePeriodMs === 0 ? null : formatGoDuration(t.gracePeriodMs),
      met: o ? o.available < getThresholdQuantity(t.value, o.capacity) : null,
      statsTime: isoOrNull(o?.timeMs),
    };
  });

  const signal = rankingSignal(relevant, observations, types);
  // The stats are a snapshot (refreshed every 10 s): everything below is as of their time, which can
  // predate an eviction the API already shows.
  const statsMs = observations[signal]?.timeMs
    ?? relevant.map((t) => observations[t.signal]?.timeMs).filter((t): t is number => t !== undefined).sort((a, b) => a - b)[0];
  const statsTime = isoOrNull(statsMs);
  const statsView = statsMs === undefined || statsTime === null
    ? null
    : { time: statsTime, ageSeconds: Math.round((nowMs - statsMs) / 100) / 10, refreshSeconds: KUBELET_STATS_REFRESH_MS / 1000 };
  if (kubelet.summary && !statsView) notes.push('the Summary API gave no time for its stats: their age is unknown');
  // The kubelet ranks its active pods: terminal ones are gone from its view (kubelet_pods.go isPodInactive).
  const active = input.pods.filter((p) => !isTerminal(p));
  const live = rankPodsForEviction(signal, active, stats, { dedicatedImageFs: false, splitContainerImageFs: false }, formatReadableQuantity);
  const resource = SIGNAL_TO_RESOURCE[signal];
  const isStatic = !kubelet.summary;
  const ranked = isStatic ? staticOrder(live, resource) : live;
  const pods: RankedPodView[] = ranked.map((r) => ({
    rank: r.rank, pod: r.key, qosClass: r.qosClass, priority: r.priority,
    usage: r.usage === undefined ? null : formatReadableQuantity(resource, r.usage),
    usageValue: r.usage ?? null,
    request: formatReadableQuantity(resource, r.request),
    requestValue: r.request,
    exceedsRequest: r.exceedsRequest ?? null, critical: r.critical, terminating: deletionTime(r.pod), why: r.why,
  }));
  const notRanked = podsCountedButGone(kubelet.summary, input.pods);
  const staleStats = notRanked.length > 0;
  // A pod being deleted is still active for the kubelet (isPodInactive: not terminal until its
  // containers stop), so it keeps its place in the order; but it is already going, so it is not "next".
  const next = ranked.find((r) => !r.critical && deletionTime(r.pod) === null);

  const explanation: string[] = [];
  for (const c of pressured) {
    const since = c.lastTransitionTime !== undefined ? ` since ${isoOrNull(c.lastTransitionTime)}` : '';
    explanation.push(`The kubelet reports ${c.type}=True${since}: the scheduler avoids the node (NoSchedule taint) and the kubelet evicts pods until the signal recovers.`);
  }
  for (const s of signals) {
    if (s.met === true) explanation.push(`${s.signal} is ${s.observed}, below its ${s.kind} threshold ${s.threshold}${s.gracePeriod ? ` (acts after ${s.gracePeriod} below it)` : ''}.`);
    else if (s.met === false) explanation.push(`${s.signal} is ${s.observed}, above its ${s.kind} threshold ${s.threshold} now: the condition is held for ${formatGoDuration(config.pressureTransitionPeriodMs)} (evictionPressureTransitionPeriod) after the threshold was last met; no pod is evicted unless it is met again.`);
  }
  if (statsView) {
    explanation.push(`The kubelet's stats are from ${clockTime(statsView.time)}, ${statsView.ageSeconds} s old (it refreshes them every ${statsView.refreshSeconds} s): the signals and the eviction order are as of then.`);
  }
  if (staleStats) {
    const gone = notRanked.map((n) => `${n.pod} (${n.why})`).join(', ');
    explanation.push(`These stats still count ${gone}, which no longer ${notRanked.length === 1 ? 'runs' : 'run'}: ${signal} still includes ${notRanked.length === 1 ? 'its' : 'their'} usage and may recover on the kubelet's next stats; the kubelet acts only on stats newer than those it last acted on.`);
  }
  for (const r of ranked) {
    const since = deletionTime(r.pod);
    if (since !== null) explanation.push(`${r.key} is being deleted (since ${since}): it is going anyway and is not named as next.`);
  }
  if (isStatic) {
    explanation.push(`The eviction order below is STATIC (QoS class, priority, requests): the kubelet ranks by live usage, which needs its Summary API through the node proxy (${kubelet.access === 'denied' ? 'you may not get nodes/proxy' : 'not readable'}).`);
  }
  if (next) {
    const lead = isStatic ? 'Likely next'
      : staleStats ? `Only if ${signal} is still below its threshold on the kubelet's next stats, next`
        : `Next (as of the stats at ${statsView ? clockTime(statsView.time) : 'an unknown time'})`;
    explanation.push(`${lead} to be evicted for ${signal}: ${next.key} (${next.qosClass}, priority ${next.priority}${isStatic ? '' : `; ${next.why.join('; ')}`}).`);
  } else if (active.length > 0) {
    explanation.push('Every pod left on the node is critical or being deleted: the kubelet evicts none of them now.');
  }
  if (thresholdsFrom === 'kubelet-defaults') notes.push("thresholds are the kubelet's defaults: the node's own configuration (/configz) was not read");
  return {
    conditions: pressured.map((c) => ({
      type: c.type as PressureConditionType,
      since: isoOrNull(c.lastTransitionTime),
      sinceSeconds: c.lastTransitionTime !== undefined ? Math.round((nowMs - c.lastTransitionTime) / 100) / 10 : null,
      message: c.message ?? null,
    })),
    source: isStatic ? 'static' : 'summary-api',
    thresholdsFrom,
    transitionPeriod: formatGoDuration(config.pressureTransitionPeriodMs),
    stats: statsView,
    signals,
    ranking: { signal, resource, static: isStatic, asOf: isStatic ? null : statsView?.time ?? null, next: next?.key ?? null, staleStats, pods, notRanked },
    notes,
    explanation,
  };
}

/** Renders the pressure part of `explain node` (lines, no trailing newline). */
export function renderNodePressure(p: NodePressureExplanation): string[] {
  const lines: string[] = [];
  for (const c of p.conditions) lines.push(`Pressure:    ${c.type}=True${c.since ? ` since ${c.since} (${c.sinceSeconds ?? '?'}s ago)` : ''}`);
  lines.push(`Source:      ${p.source === 'summary-api' ? 'Summary API through the node proxy' : 'STATIC (no Summary API)'}; thresholds from ${p.thresholdsFrom === 'configz' ? "the kubelet's /configz" : "the kubelet's defaults"}; transition period ${p.transitionPeriod}`);
  if (p.stats) lines.push(`Stats:       from ${clockTime(p.stats.time)}, ${p.stats.ageSeconds} s old; the kubelet refreshes them every ${p.stats.refreshSeconds} s`);
  lines.push('');
  lines.push(...renderTable(['signal', 'observed', 'capacity', 'threshold', 'met'], p.signals.map((s) => [
    s.signal, s.observed ?? '?', s.capacity ?? '?',
    `${s.threshold}${s.thresholdResolved !== null && s.thresholdResolved !== s.threshold ? ` (${s.thresholdResolved})` : ''} ${s.kind}${s.gracePeriod ? ` (grace ${s.gracePeriod})` : ''}`,
    s.met === null ? '?' : s.met ? 'yes' : 'no',
  ])));
  lines.push('');
  lines.push(`Eviction order for ${p.ranking.signal}${p.ranking.static ? ' (STATIC: QoS class, priority, requests; not live usage)' : ' (the kubelet\'s ranking, live usage)'}${p.ranking.asOf ? ` as of the stats at ${clockTime(p.ranking.asOf)}` : ''}:`);
  lines.push(...renderTable(['#', 'pod', 'qos', 'priority', 'usage', 'request', 'why'], p.ranking.pods.map((r) => [
    String(r.rank), r.pod, r.qosClass, String(r.priority), r.usage ?? '-', r.request,
    `${r.critical ? '(critical, skipped) ' : ''}${r.terminating ? `(being deleted since ${r.terminating}, not next) ` : ''}${r.why.join('; ')}`,
  ])));
  for (const n of p.ranking.notRanked) lines.push(`not ranked: ${n.pod} (${n.why}; the stats above still count it)`);
  for (const n of p.notes) lines.push(`note: ${n}`);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Evicted pods
// ---------------------------------------------------------------------------------------------

/** The `kubeletEviction` part of `explain pod -o json`: what the kubelet's status message says. */
export interface KubeletEvictionView {
  resource: StarvedResource;
  /** the signals that starve `resource` (the message names the resource only: `memory` → memory.available, …) */
  signals: Signal[];
  threshold: string | null;
  available: string | null;
  /** containers the message names as over their request, with usage and request */
  containers: { name: string; usage: string; request: string }[];
  message: string;
}

const MESSAGE_RE = /^The node was low on resource: ([a-z-]+)\.\s*(?:Threshold quantity: (\S+), available: (\S+)\.)?/;
const CONTAINER_RE = /Container (\S+) was using (\S+), request is (\S+), has larger consumption of/g;

/**
 * Reads a kubelet eviction from a pod's status (phase Failed, reason `Evicted`, the message of
 * helpers.go `evictionMessage`).
 * @returns undefined for a pod the kubelet did not evict (or a message in another format).
 */
export function explainKubeletEviction(status: V1Pod['status']): KubeletEvictionView | undefined {
  if (status?.reason !== 'Evicted' || !status.message) return undefined;
  const m = MESSAGE_RE.exec(status.message);
  if (!m) return undefined;
  const resource = m[1] as StarvedResource;
  const signals = (Object.keys(SIGNAL_TO_RESOURCE) as Signal[]).filter((s) => SIGNAL_TO_RESOURCE[s] === resource);
  if (signals.length === 0) return undefined;
  return {
    resource, signals, threshold: m[2] ?? null, available: m[3] ?? null,
    containers: [...status.message.matchAll(CONTAINER_RE)].map((c) => ({ name: c[1] ?? '', usage: (c[2] ?? '').replace(/,$/, ''), request: (c[3] ?? '').replace(/,$/, '') })),
    message: status.message,
  };
}

/** A quantity from the kubelet's message (Go's form, e.g. `21502351115`) for people; text that does not parse as it is. */
function readableFromMessage(resource: StarvedResource, text: string): string {
  try {
    return formatReadableQuantity(resource, parseQuantity(text));
  } catch {
    return text;
  }
}

/**
 * The sentence `explain pod` leads with for a pod the kubelet evicted. Usage and available in readable
 * units (`20.0Gi`); the threshold as the message gives it (as configured); the exact text stays in `v`.
 */
export function kubeletEvictionSentence(v: KubeletEvictionView): string {
  const signal = v.signals.length === 1 ? v.signals[0] : `${v.signals.join(' or ')} (the message names the resource only)`;
  const r = (text: string): string => readableFromMessage(v.resource, text);
  const over = v.containers.map((c) => `${c.name} used ${r(c.usage)} over its request ${r(c.request)}`).join('; ');
  return `The kubelet evicted the pod under node pressure: signal ${signal}, threshold ${v.threshold ?? '?'}, available ${v.available === null ? '?' : r(v.available)}${over ? `; ${over}` : ''}. ` +
    'Node-pressure eviction is the kubelet\'s, not this controller\'s: it ignores PodDisruptionBudgets and the pod is not recreated unless a controller owns it.';
}

// ---------------------------------------------------------------------------------------------
// I/O
// ---------------------------------------------------------------------------------------------

function isSummary(x: unknown): x is Summary {
  const s = x as { node?: { nodeName?: unknown }; pods?: unknown } | null;
  return typeof s?.node?.nodeName === 'string' && Array.isArray(s.pods);
}

async function getJson(kc: KubeConfig, path: string): Promise<{ ok: true; body: unknown } | { ok: false; why: string }> {
  try {
    const res = await apiServerGet(kc, path);
    if (res.status !== 200) return { ok: false, why: `HTTP ${res.status}: ${res.body.trim().split('\n')[0]?.slice(0, 160) ?? ''}` };
    return { ok: true, body: JSON.parse(res.body) as unknown };
  } catch (err) {
    return { ok: false, why: describeError(err) };
  }
}

/**
 * Reads the node's kubelet through the API server's node proxy, if the caller may: a
 * SelfSubjectAccessReview for `get nodes/proxy` on the node first, then `/stats/summary` and
 * `/configz` (`/api/v1/nodes/NODE/proxy/...`).
 * @returns what could be read, with a note for each part that could not. Never throws.
 */
export async function readKubeletView(kc: KubeConfig, node: string): Promise<KubeletView> {
  const notes: string[] = [];
  let access: KubeletView['access'];
  try {
    const review = await makeReviewClients(kc, 10_000).authorization.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'proxy', name: node } } },
    });
    access = review.status?.allowed ? 'allowed' : 'denied';
  } catch (err) {
    access = 'unknown';
    notes.push(`could not check the nodes/proxy permission: ${describeError(err)}`);
  }
  if (access === 'denied') {
    notes.push('you may not get nodes/proxy (deliberately not in the read-only role): no live usage, static order');
    return { access, notes };
  }
  if (access === 'unknown') return { access, notes };
  const base = `/api/v1/nodes/${encodeURIComponent(node)}/proxy`;
  const [summary, configz] = await Promise.all([getJson(kc, `${base}/stats/summary`), getJson(kc, `${base}/configz`)]);
  const view: KubeletView = { access, notes };
  if (summary.ok && isSummary(summary.body)) view.summary = summary.body;
  else notes.push(`Summary API through the node proxy: ${summary.ok ? 'not a Summary' : summary.why}`);
  const kcfg = configz.ok ? (configz.body as { kubeletconfig?: unknown } | null)?.kubeletconfig : undefined;
  if (kcfg !== null && typeof kcfg === 'object') view.kubeletConfig = kcfg as KubeletEvictionConfiguration;
  else notes.push(`/configz through the node proxy: ${configz.ok ? 'no kubeletconfig' : configz.why}`);
  return view;
}
