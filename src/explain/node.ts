/**
 * `explain node NAME`: a node's health (Ready condition), heartbeat age (Lease renewal and the
 * controller's probe timestamp), zone state, position in the zone's tainting queue, and each taint
 * with why it is there, as a pure function of live API reads and the controller's `/debug/state`
 * ({@link explainNode}, {@link explainTaint}). src/cli/explain.ts reads the inputs, adds the node
 * pressure part and prints.
 *
 * Not upstream: kube-controller-manager offers nothing like it.
 */
import { getCondition, type Lease, type Node, type Pod, type Taint } from '../kube/objects.js';
import {
  formatTaint,
  NODE_DISK_PRESSURE,
  NODE_MEMORY_PRESSURE,
  NODE_NETWORK_UNAVAILABLE,
  NODE_PID_PRESSURE,
  NODE_READY,
  TAINT_NODE_DISK_PRESSURE,
  TAINT_NODE_MEMORY_PRESSURE,
  TAINT_NODE_NETWORK_UNAVAILABLE,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_OUT_OF_SERVICE,
  TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_UNSCHEDULABLE,
} from '../kube/taints.js';
import { formatDuration, formatEta, formatRate, rfc3339, secondsFromNow } from '../util/format.js';
import { evictionGuardsOf, pauseOf, zoneName, zoneOf, type DebugState, type StateSource } from './state.js';

/** One taint of a node and why it is there. */
export interface TaintReason {
  taint: string;
  timeAdded: string | null;
  /** `node-lifecycle-controller`, `administrator`, or `other`. */
  managedBy: 'node-lifecycle-controller' | 'administrator' | 'other';
  why: string;
}

/** The `explain node -o json` document. Times are RFC 3339 plus seconds from `generatedAt`. */
export interface NodeExplanation {
  generatedAt: string;
  source: StateSource | null;
  node: string;
  /** Whether the controller manages the node (it is in its view). */
  managed: boolean;
  ready: { status: string; reason: string | null; message: string | null; lastHeartbeatTime: string | null; lastTransitionTime: string | null } | null;
  heartbeat: {
    leaseRenewTime: string | null;
    leaseAgeSeconds: number | null;
    /** When the controller last saw a heartbeat (its probe timestamp). */
    probeTimestamp: string | null;
    probeAgeSeconds: number | null;
    /** When the controller will mark the node Unknown if no heartbeat comes. */
    probeDeadline: string | null;
    probeDeadlineInSeconds: number | null;
    /** Ready status as the controller last decided it. */
    controllerReady: string | null;
  };
  zone: { zone: string; state: string; size: number; unhealthy: number; ratePerSecond: number; queueLength: number; pausedReason: string | null } | null;
  queue: { queued: boolean; position: number | null; positionExact: boolean; eta: string | null; etaInSeconds: number | null };
  taints: TaintReason[];
  /** Pods bound to the node; `terminating` ones have a deletionTimestamp (on a dead node they stay until force-deleted or the node returns). */
  pods: { total: number; terminating: number; pendingDeletions: number; nextDeadline: string | null; nextDeadlineInSeconds: number | null };
  explanation: string[];
}

/** Inputs of {@link explainNode}. */
export interface NodeExplainInput {
  node: Node;
  /** The node's heartbeat Lease (`kube-node-lease/<name>`), if any. */
  lease: Lease | undefined;
  /** Pods bound to the node (live), or undefined when not read. */
  pods: readonly Pod[] | undefined;
  state: DebugState | undefined;
  source: StateSource | null;
  /** epoch ms */
  nowMs: number;
}

const PRESSURE: ReadonlyMap<string, string> = new Map([
  [TAINT_NODE_MEMORY_PRESSURE, NODE_MEMORY_PRESSURE],
  [TAINT_NODE_DISK_PRESSURE, NODE_DISK_PRESSURE],
  [TAINT_NODE_PID_PRESSURE, NODE_PID_PRESSURE],
  [TAINT_NODE_NETWORK_UNAVAILABLE, NODE_NETWORK_UNAVAILABLE],
]);

/**
 * Why a taint is on a node, judged against the node's current conditions (a taint the conditions
 * no longer call for is called out as about to be removed).
 * @returns the reason and who manages the taint. Never throws.
 * Mirrors the meaning of upstream's `nodeConditionToTaintKeyStatusMap` and the NoExecute templates.
 */
export function explainTaint(t: Taint, node: Pick<Node, 'conditions' | 'unschedulable'>): TaintReason {
  const base = { taint: formatTaint(t), timeAdded: t.timeAdded !== undefined ? rfc3339(t.timeAdded) : null };
  const ready = getCondition(node.conditions, NODE_READY);
  const readyText = ready ? `Ready is ${ready.status}${ready.reason ? ` (${ready.reason})` : ''}` : 'the node has no Ready condition';
  const nlc = (why: string): TaintReason => ({ ...base, managedBy: 'node-lifecycle-controller', why });
  if (t.key === TAINT_NODE_UNREACHABLE || t.key === TAINT_NODE_NOT_READY) {
    const wants = t.key === TAINT_NODE_UNREACHABLE ? 'Unknown' : 'False';
    const stale = ready?.status !== wants ? ` — stale: ${readyText}, so the controller removes it` : '';
    if (t.effect === 'NoExecute') {
      return nlc(
        `${t.key === TAINT_NODE_UNREACHABLE ? 'the kubelet stopped heartbeating (Ready=Unknown)' : 'the kubelet reports NotReady (Ready=False)'}; ` +
          `pods that do not tolerate it are evicted when their tolerationSeconds run out${stale}`,
      );
    }
    return nlc(`condition taint for Ready=${wants}: no new pods are scheduled here${stale}`);
  }
  const condition = PRESSURE.get(t.key);
  if (condition !== undefined) {
    const c = getCondition(node.conditions, condition);
    const on = c?.status === 'True';
    return nlc(`${condition} is ${c?.status ?? 'absent'}${c?.reason ? ` (${c.reason})` : ''}${on ? ': no new pods are scheduled here' : ' — stale, the controller removes it'}`);
  }
  if (t.key === TAINT_NODE_UNSCHEDULABLE) {
    return nlc(node.unschedulable ? 'the node is cordoned (spec.unschedulable)' : 'stale: the node is no longer cordoned, the controller removes it');
  }
  if (t.key === TAINT_NODE_OUT_OF_SERVICE) {
    return {
      ...base,
      managedBy: 'administrator',
      why:
        'set by an administrator (non-graceful node shutdown): while the node is not Ready, pods not tolerating it are evicted, ' +
        'PodGC force-deletes its terminating pods and the attach/detach controller force-detaches its volumes' +
        (ready?.status === 'True' ? ' — but the node is Ready, so nothing is forced' : ''),
    };
  }
  return { ...base, managedBy: 'other', why: 'not managed by this controller' };
}

/**
 * Explains a node's health, zone, queue position and taints.
 * @returns the explanation (see {@link NodeExplanation}). Never throws.
 */
export function explainNode(input: NodeExplainInput): NodeExplanation {
  const { node, lease, pods, state, nowMs } = input;
  const view = state?.nodeLifecycle;
  const nv = view?.nodes.find((n) => n.name === node.name);
  const zone = zoneOf(node, view);
  const ready = getCondition(node.conditions, NODE_READY);
  const pending = (state?.taintEviction ?? []).filter((p) => p.node === node.name);
  const nextPending = pending.reduce<number | undefined>((m, p) => (m === undefined || p.deadlineMs < m ? p.deadlineMs : m), undefined);

  // Queue order is by when a node was queued, which follows when it went silent: the head is
  // exact (from the queue itself), other positions are estimated by heartbeat order.
  let position: number | null = null;
  let exact = false;
  let etaMs: number | undefined;
  if (nv?.queued && zone) {
    const queuedHere = (view?.nodes ?? [])
      .filter((n) => n.queued && n.zone === zone.zoneLabel)
      .sort((a, b) => (a.probeTimestamp ?? 0) - (b.probeTimestamp ?? 0) || a.name.localeCompare(b.name));
    if (zone.next?.node === node.name) {
      position = 1;
      exact = true;
    } else {
      const others = queuedHere.filter((n) => n.name !== zone.next?.node);
      position = others.findIndex((n) => n.name === node.name) + (zone.next ? 2 : 1);
    }
    if (zone.rate > 0) {
      const headAt = Math.max(zone.next?.processAt ?? nowMs, nowMs);
      etaMs = headAt + ((position - 1) * 1000) / zone.rate;
    }
  }

  const out: NodeExplanation = {
    generatedAt: rfc3339(nowMs),
    source: input.source,
    node: node.name,
    managed: nv !== undefined,
    ready: ready
      ? {
          status: ready.status,
          reason: ready.reason ?? null,
          message: ready.message ?? null,
          lastHeartbeatTime: ready.lastHeartbeatTime !== undefined ? rfc3339(ready.lastHeartbeatTime) : null,
          lastTransitionTime: ready.lastTransitionTime !== undefined ? rfc3339(ready.lastTransitionTime) : null,
        }
      : null,
    heartbeat: {
      leaseRenewTime: lease?.renewTime !== undefined ? rfc3339(lease.renewTime) : null,
      leaseAgeSeconds: lease?.renewTime !== undefined ? -secondsFromNow(lease.renewTime, nowMs) : null,
      probeTimestamp: nv?.probeTimestamp !== undefined ? rfc3339(nv.probeTimestamp) : null,
      probeAgeSeconds: nv?.probeTimestamp !== undefined ? -secondsFromNow(nv.probeTimestamp, nowMs) : null,
      probeDeadline: nv?.probeDeadline !== undefined ? rfc3339(nv.probeDeadline) : null,
      probeDeadlineInSeconds: nv?.probeDeadline !== undefined ? secondsFromNow(nv.probeDeadline, nowMs) : null,
      controllerReady: nv?.ready ?? null,
    },
    zone: zone
      ? {
          zone: zoneName(zone.zoneLabel),
          state: zone.state,
          size: zone.size,
          unhealthy: zone.unhealthy,
          ratePerSecond: zone.rate,
          queueLength: zone.queueLength,
          pausedReason: zone.pausedReason ?? null,
        }
      : null,
    queue: {
      queued: nv?.queued ?? false,
      position,
      positionExact: exact,
      eta: etaMs !== undefined ? rfc3339(etaMs) : null,
      etaInSeconds: etaMs !== undefined ? secondsFromNow(etaMs, nowMs) : null,
    },
    taints: node.taints.map((t) => explainTaint(t, node)),
    pods: {
      total: pods?.length ?? 0,
      terminating: pods?.filter((p) => p.deletionTimestamp !== undefined).length ?? 0,
      pendingDeletions: pending.length,
      nextDeadline: nextPending !== undefined ? rfc3339(nextPending) : null,
      nextDeadlineInSeconds: nextPending !== undefined ? secondsFromNow(nextPending, nowMs) : null,
    },
    explanation: [],
  };
  const say = (s: string): void => void out.explanation.push(s);
  if (!state) say('The controller could not be asked: only the cluster\'s view is shown.');
  else if (!view) say('The node lifecycle controller is not running in that process.');
  else if (!nv) say('The controller does not manage this node (it is outside its --node-selector, or not yet seen).');

  const noExec = node.taints.filter((t) => t.effect === 'NoExecute' && (t.key === TAINT_NODE_UNREACHABLE || t.key === TAINT_NODE_NOT_READY));
  const heartbeatAge = nv?.probeTimestamp !== undefined ? nowMs - nv.probeTimestamp : lease?.renewTime !== undefined ? nowMs - lease.renewTime : undefined;
  if (ready?.status === 'True') {
    say(
      `Healthy: Ready=True, last heartbeat ${heartbeatAge !== undefined ? `${formatDuration(heartbeatAge)} ago` : 'unknown'}` +
        (nv?.probeDeadline !== undefined ? `; marked Unknown ${formatEta(nv.probeDeadline, nowMs)} unless a heartbeat comes first.` : '.'),
    );
  } else {
    say(
      `Not healthy: Ready=${ready?.status ?? 'absent'}${ready?.reason ? ` (${ready.reason})` : ''}` +
        (heartbeatAge !== undefined ? `, last heartbeat ${formatDuration(heartbeatAge)} ago.` : '.'),
    );
    const pause = pauseOf(zone, evictionGuardsOf(state));
    if (noExec.length > 0) {
      say(`Tainted ${noExec.map((t) => formatTaint(t)).join(', ')}${noExec[0]?.timeAdded !== undefined ? ` at ${rfc3339(noExec[0].timeAdded)}` : ''}: its pods are evicted as their tolerations run out.`);
    } else if (pause) {
      say(`NOT tainted: NoExecute tainting in zone ${pause.zone} is paused: ${pause.reason}`);
    } else if (out.queue.queued) {
      say(
        `Queued for its NoExecute taint in zone ${out.zone?.zone ?? '?'}: position ${position ?? '?'}${exact ? '' : ' (estimated)'} of ${zone?.queueLength ?? '?'}` +
          (etaMs !== undefined ? `, ETA ${formatEta(etaMs, nowMs)} at ${formatRate(zone?.rate ?? 0)} node/s.` : '.'),
      );
    } else if (view && !view.canSeeCluster) {
      say('The controller cannot see the cluster right now (caches not current): it judges no node until it can.');
    }
  }
  if (out.zone) {
    say(`Zone ${out.zone.zone}: ${out.zone.state}, ${out.zone.unhealthy} of ${out.zone.size} not Ready, tainting rate ${formatRate(out.zone.ratePerSecond)} node/s, ${out.zone.queueLength} queued.`);
  }
  if (pending.length > 0 && nextPending !== undefined) say(`${pending.length} pod deletion(s) pending on this node; the next ${formatEta(nextPending, nowMs)}.`);
  return out;
}

/** Renders a node explanation as text (ends in a newline). */
