/**
 * The `status` report: the running controller's view (leader, zones, the next node due for its
 * NoExecute taint, pending pod deletions, paused zones, eviction guards, volumes awaiting a forced
 * detach, PodGC's orphan quarantine) as a pure function of a `/debug/state` document and "now"
 * ({@link buildStatusReport}). src/cli/status.ts fetches the document and prints the report.
 *
 * Not upstream: kube-controller-manager offers nothing like it.
 */
import { rfc3339, secondsFromNow } from '../util/format.js';
import { evictionGuardsOf, leaderPodName, zoneName, type DebugState, type StateSource } from './state.js';

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
  /** The cluster-wide eviction guards (`--max-unhealthy-nodes`, storm detection); empty when both are off. While one is open no NoExecute taint is added anywhere. */
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
