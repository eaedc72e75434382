/**
 * Prints a what-if result: a text timeline for people, or the same data as JSON (`-o json`).
 */
import { formatGoDuration } from '../util/duration.js';
import type { TimelineEntry } from './cluster.js';
import type { WhatIfResult } from './run.js';

/**
 * The result as JSON (stable field names: `timeline[].kind` is one of step, condition, taint,
 * pod-not-ready, pod-deleted, detach, zone, event; times `atMs` in milliseconds after T+0).
 */
export function whatIfJson(r: WhatIfResult): string {
  return JSON.stringify({ ...r, startedAt: new Date(r.startedAt).toISOString() }, null, 2);
}

/**
 * The result as a text timeline: a header, one line per entry (the pods a node's pass marks
 * NotReady at one time are one line), and a summary.
 * @returns the text, ending in a newline.
 */
export function whatIfText(r: WhatIfResult): string {
  const out: string[] = [];
  const c = r.cluster;
  out.push(
    `What-if ${r.scenario}: ${c.nodes} nodes (${c.kubeletsRunningAtStart} kubelets heartbeating at T+0), ${c.pods} pods, ${c.volumeAttachments} volume attachments; ` +
      `T+0 = ${new Date(r.startedAt).toISOString()}; ${formatGoDuration(r.durationMs)} simulated in ${(r.wallMs / 1000).toFixed(1)} s`,
  );
  out.push(`Controllers: ${r.controllers.join(', ') || '(none)'}`);
  if (r.controllersNotRun.length > 0) out.push(`Not run: ${r.controllersNotRun.map((c) => `${c.name} (${c.reason})`).join(', ')}`);
  out.push(`Flags: ${flagText(r.config)}`);
  out.push('');
  const rows: [string, string, string][] = [];
  for (let i = 0; i < r.timeline.length; i++) {
    const e = r.timeline[i] as TimelineEntry;
    if (e.kind === 'pod-not-ready') {
      let n = 1;
      while (i + 1 < r.timeline.length) {
        const next = r.timeline[i + 1] as TimelineEntry;
        if (next.kind !== 'pod-not-ready' || next.node !== e.node || next.atMs !== e.atMs) break;
        n++;
        i++;
      }
      rows.push([time(e.atMs), 'pods', `${e.node}: ${n} pod(s) marked NotReady`]);
      continue;
    }
    rows.push([time(e.atMs), ...entryText(e)]);
  }
  const w0 = Math.max(4, ...rows.map((x) => x[0].length));
  const w1 = Math.max(4, ...rows.map((x) => x[1].length));
  out.push(`${'TIME'.padEnd(w0)}  ${'WHAT'.padEnd(w1)}  DETAIL`);
  for (const [t, what, detail] of rows) out.push(`${t.padEnd(w0)}  ${what.padEnd(w1)}  ${detail}`);
  out.push('');
  const s = r.summary;
  out.push(
    `Summary: ${s.nodesMarkedUnknown} node(s) marked Unknown, ${s.nodesMarkedNotReady} NotReady; ${s.noExecuteTaintsAdded} NoExecute taint(s) added; ` +
      `${s.podsMarkedNotReady} pod(s) marked NotReady; ${s.podsDeleted} pod(s) deleted, ${s.podsForceDeleted} force-deleted; ` +
      `${s.volumeAttachmentsDetached} volume attachment(s) detached; ${s.zonePauses} zone pause event(s); ${s.guardTrips} eviction guard trip(s).`,
  );
  return `${out.join('\n')}\n`;
}

function time(ms: number): string {
  return `T+${formatGoDuration(Math.round(ms))}`;
}

function entryText(e: Exclude<TimelineEntry, { kind: 'pod-not-ready' }>): [string, string] {
  switch (e.kind) {
    case 'step':
      return ['scenario', e.detail];
    case 'condition':
      return ['node', `${e.node}: Ready ${e.from} -> ${e.to}${e.reason ? ` (${e.reason})` : ''}`];
    case 'taint':
      return ['taint', `${e.node}: ${[...e.added.map((t) => `+${t}`), ...e.removed.map((t) => `-${t}`)].join(' ')}`];
    case 'pod-deleted':
      return [e.force ? 'force-delete' : 'delete', `${e.pod} on ${e.node} (owner ${e.owners.join(', ') || 'none'}) by ${e.by}: ${e.reason}`];
    case 'detach':
      return ['detach', `${e.volumeAttachment}${e.persistentVolume ? ` (${e.persistentVolume})` : ''} from ${e.node}`];
    case 'zone':
      return [
        'zone',
        // The counts are upstream's (Ready condition not True); the pause reason (JSON `pausedReason`,
        // and the Event line) gives the count the controller decided on.
        `${e.zone}: ${e.from === '-' ? '' : `${e.from} -> `}${e.to} (${e.size} nodes, ${e.unhealthy} with Ready not True; tainting rate ${e.rate}/s${e.pausedReason ? ', paused' : ''})`,
      ];
    case 'event':
      return ['event', `${e.type} ${e.reason} on ${e.object} (${e.by}): ${e.message}`];
  }
}

function flagText(cfg: WhatIfResult['config']): string {
  const names: Record<string, string> = {
    nodeMonitorPeriodMs: 'node-monitor-period',
    nodeMonitorGracePeriodMs: 'node-monitor-grace-period',
    nodeEvictionRate: 'node-eviction-rate',
    secondaryNodeEvictionRate: 'secondary-node-eviction-rate',
    largeClusterSizeThreshold: 'large-cluster-size-threshold',
    unhealthyZoneThreshold: 'unhealthy-zone-threshold',
    enableTaintManager: 'enable-taint-manager',
    podEvictionTimeoutMs: 'pod-eviction-timeout',
    forceDetachTimeoutMs: 'force-detach-timeout',
    nodeSelector: 'node-selector',
    maxUnhealthyNodes: 'max-unhealthy-nodes',
    stormThreshold: 'storm-threshold',
    stormWindowMs: 'storm-window',
    stormHoldMs: 'storm-hold',
  };
  return Object.entries(cfg)
    // Empty string flags (no --node-selector, a guard off) and the storm durations of an off storm guard are left out.
    .filter(([k, v]) => v !== '' && !(k.startsWith('storm') && k !== 'stormThreshold' && cfg['stormThreshold'] === ''))
    .map(([k, v]) => `--${names[k] ?? k}=${k.endsWith('Ms') && typeof v === 'number' ? formatGoDuration(v) : String(v)}`)
    .join(' ');
}
