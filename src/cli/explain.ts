/**
 * `node-lifecycle-controller explain pod NS/NAME` and `explain node NAME`: reads the pod or node
 * (live API reads) and the controller's `/debug/state`, asks src/explain/ what will happen and why
 * ({@link explainPod}, {@link explainNode}: pure), adds what the kubelet's node-pressure eviction
 * says (explain-pressure.ts), and prints the story as text or JSON.
 *
 * Not upstream: kube-controller-manager offers nothing like it.
 */
import { describeError, isNotFound, type KubeClients } from '../kube/client.js';
import { toLease, toNode, toPod, type Pod } from '../kube/objects.js';
import { explainNode, type NodeExplanation } from '../explain/node.js';
import { explainPod, formatToleration, type PodExplanation } from '../explain/pod.js';
import type { DebugState, StateSource } from '../explain/state.js';
import { formatDuration, formatEta, formatRate } from '../util/format.js';
import { FlagError } from './flags.js';
import { fetchDebugState, renderTable } from './inspect.js';
import { inspectClients, parseInspectFlags, processIo, type CommandIo } from './status.js';
import {
  explainKubeletEviction, explainNodePressure, kubeletEvictionSentence, readKubeletView, renderNodePressure,
  type KubeletEvictionView, type NodePressureExplanation,
} from './explain-pressure.js';

/** The `explain pod -o json` document: the pod's explanation plus, when the kubelet evicted it under node pressure, how. */
export type PodReport = PodExplanation & {
  /** Set when the kubelet evicted the pod under node pressure (explain-pressure.ts). */
  kubeletEviction?: KubeletEvictionView;
};

/** The `explain node -o json` document: the node's explanation plus, under a pressure condition, the kubelet's side. */
export type NodeReport = NodeExplanation & {
  /** Set when the node has a pressure condition: signals, thresholds and the kubelet's eviction order (explain-pressure.ts). */
  pressure?: NodePressureExplanation;
};

// ---------------------------------------------------------------------------------------------
// Pod
// ---------------------------------------------------------------------------------------------

export function renderPodExplanation(e: PodReport): string {
  const lines: string[] = [];
  lines.push(`Pod:       ${e.pod.namespace}/${e.pod.name}  (phase ${e.pod.phase || 'unknown'}${e.pod.terminating ? ', terminating' : ''})`);
  if (e.node) {
    lines.push(`Node:      ${e.node.name}${e.node.exists ? `  Ready=${e.node.ready ?? 'none'}  zone ${e.node.zone ?? '?'} (${e.node.zoneState ?? 'state unknown'})` : '  (does not exist)'}`);
  } else {
    lines.push('Node:      (not bound)');
  }
  lines.push(`Verdict:   ${e.verdict}${e.deadline ? `  deadline ${e.deadline} (${formatEta((e.deadlineInSeconds ?? 0) * 1000, 0)}, ${e.deadlineSource})` : ''}`);
  if (e.nodeAffinity) lines.push(`Affinity:  ${e.nodeAffinity.state} since ${e.nodeAffinity.since}, grace ends ${e.nodeAffinity.evictAt}`);
  if (e.kubeletEviction) lines.push(`Evicted:   by the kubelet: ${e.kubeletEviction.signals.join(' or ')} below ${e.kubeletEviction.threshold ?? '?'} (available ${e.kubeletEviction.available ?? '?'})`);
  if (e.blockedByPausedZone) {
    const b = e.blockedByPausedZone;
    lines.push(b.guard ? `Blocked:   eviction circuit open (${b.guard}): no NoExecute taint is added anywhere` : `Blocked:   zone ${b.zone} is paused (${b.state})`);
  }
  if (e.prospectiveTaint) {
    const p = e.prospectiveTaint;
    lines.push(`Next:      ${p.taint}, tolerated ${p.tolerates === 'not tolerated' ? 'not at all' : p.tolerates === 'forever' ? 'forever' : `for ${p.tolerates}`}${p.toleratedBy ? ` (${formatToleration(p.toleratedBy)})` : ''}`);
  }
  lines.push('');
  if (e.noExecuteTaints.length > 0) {
    lines.push(
      ...renderTable(
        ['noexecute taint', 'added', 'tolerated by', 'tolerates', 'deadline'],
        e.noExecuteTaints.map((t) => [t.taint, t.timeAdded ?? '-', t.toleratedBy ? formatToleration(t.toleratedBy) : '-', t.tolerates, t.deadline ?? '-']),
      ),
    );
  } else {
    lines.push('No NoExecute taints on the node.');
  }
  lines.push('');
  lines.push('Why:');
  for (const s of e.explanation) lines.push(`  - ${s}`);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------------------------

export function renderNodeExplanation(e: NodeReport): string {
  const lines: string[] = [];
  const r = e.ready;
  lines.push(`Node:        ${e.node}${e.managed ? '' : '  (not managed by this controller)'}`);
  lines.push(`Ready:       ${r ? `${r.status}${r.reason ? ` (${r.reason})` : ''}${r.lastTransitionTime ? ` since ${r.lastTransitionTime}` : ''}` : 'no Ready condition'}`);
  const hb = e.heartbeat;
  lines.push(
    `Heartbeat:   lease renewed ${hb.leaseAgeSeconds !== null ? `${formatDuration(hb.leaseAgeSeconds * 1000)} ago` : 'never'}` +
      (hb.probeAgeSeconds !== null ? `; controller's probe ${formatDuration(hb.probeAgeSeconds * 1000)} ago` : '') +
      (hb.probeDeadlineInSeconds !== null ? `; Unknown ${formatEta(hb.probeDeadlineInSeconds * 1000, 0)} without one` : ''),
  );
  if (e.zone) {
    lines.push(
      `Zone:        ${e.zone.zone}  ${e.zone.state}  ${e.zone.unhealthy}/${e.zone.size} unhealthy  rate ${formatRate(e.zone.ratePerSecond)}/s  queue ${e.zone.queueLength}` +
        (e.zone.pausedReason ? `\n             paused: ${e.zone.pausedReason}` : ''),
    );
  }
  lines.push(
    `Queue:       ${e.queue.queued ? `position ${e.queue.position ?? '?'}${e.queue.positionExact ? '' : ' (estimated)'}${e.queue.etaInSeconds !== null ? `, ETA ${formatEta(e.queue.etaInSeconds * 1000, 0)}` : ', no ETA (paused)'}` : 'not queued'}`,
  );
  lines.push(`Pods:        ${e.pods.total}${e.pods.terminating > 0 ? ` (${e.pods.terminating} terminating)` : ''}${e.pods.pendingDeletions > 0 ? `, ${e.pods.pendingDeletions} pending deletion(s), next ${formatEta((e.pods.nextDeadlineInSeconds ?? 0) * 1000, 0)}` : ''}`);
  lines.push('');
  if (e.taints.length > 0) lines.push(...renderTable(['taint', 'added', 'managed by', 'why'], e.taints.map((t) => [t.taint, t.timeAdded ?? '-', t.managedBy, t.why])));
  else lines.push('No taints.');
  if (e.pressure) lines.push('', ...renderNodePressure(e.pressure));
  lines.push('');
  lines.push('Why:');
  for (const s of e.explanation) lines.push(`  - ${s}`);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

const EXPLAIN_USAGE = `$0 pod NAMESPACE/NAME | node NAME [--endpoint URL | --kubeconfig FILE [--namespace NS --lease NAME]] [-o table|json]

Says what will happen to one pod (its node, the NoExecute taints on it, the matching tolerations, the
deletion deadline, and whether a paused zone holds eviction back) or one node (health, heartbeat age,
zone state, tainting queue position, and each taint with the reason), from live API reads and the
controller's /debug/state. A node under Memory/Disk/PIDPressure also gets the signals, thresholds and the
kubelet's eviction order, live through the node proxy if you may get nodes/proxy, else static. The API is always read with the kubeconfig; --namespace/--lease/--endpoint
only say where the controller is.`;

/**
 * Runs `explain pod NS/NAME` or `explain node NAME`.
 * @param argv the arguments after `explain`.
 * @returns exit code 0.
 * @throws {FlagError} for bad flags or arguments (exit code 2 in program.ts); {Error} when the pod
 *   or node does not exist or the API cannot be read (exit code 1). A controller that cannot be
 *   reached is reported in the output, not thrown: the cluster's view is still useful.
 */
export async function runExplainCommand(argv: string[], io: CommandIo = processIo): Promise<number> {
  const flags = await parseInspectFlags('explain', argv, EXPLAIN_USAGE, io);
  if (!flags) return 0;
  const [kind, target, ...extra] = flags.args;
  if ((kind !== 'pod' && kind !== 'node') || target === undefined || extra.length > 0) {
    throw new FlagError('usage: explain pod NAMESPACE/NAME | explain node NAME');
  }
  const clients = inspectClients(flags, true) as KubeClients;
  const now = io.now ?? Date.now;
  let state: DebugState | undefined;
  let source: StateSource | null = null;
  try {
    ({ state, source } = await fetchDebugState(flags, clients));
  } catch (err) {
    io.err(`warning: controller state unavailable: ${describeError(err)}\n`);
  }
  if (kind === 'pod') {
    const slash = target.indexOf('/');
    if (slash <= 0 || slash === target.length - 1) throw new FlagError(`explain pod: expected NAMESPACE/NAME, got "${target}"`);
    const namespace = target.slice(0, slash);
    const name = target.slice(slash + 1);
    const raw = await readOrExplain(() => clients.core.readNamespacedPod({ name, namespace }), `pod ${namespace}/${name}`);
    const pod = toPod(raw);
    if (!pod) throw new Error(`pod ${namespace}/${name}: malformed object`);
    const node = pod.nodeName ? toNode(await readOptional(() => clients.core.readNode({ name: pod.nodeName }))) : undefined;
    const e: PodReport = explainPod({ pod, node, state, source, nowMs: now() });
    const kubeletEviction = explainKubeletEviction(raw.status);
    if (kubeletEviction) {
      e.kubeletEviction = kubeletEviction;
      e.explanation.unshift(kubeletEvictionSentence(kubeletEviction));
    }
    io.out(flags.output === 'json' ? `${JSON.stringify(e, null, 2)}\n` : renderPodExplanation(e));
    return 0;
  }
  const node = toNode(await readOrExplain(() => clients.core.readNode({ name: target }), `node ${target}`));
  if (!node) throw new Error(`node ${target}: malformed object`);
  const lease = toLease(await readOptional(() => clients.coordination.readNamespacedLease({ name: target, namespace: 'kube-node-lease' })));
  const podList = await clients.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${target}` });
  const pods = podList.items.map((p) => toPod(p)).filter((p): p is Pod => p !== undefined);
  const e: NodeReport = explainNode({ node, lease, pods, state, source, nowMs: now() });
  // Only a node under pressure costs the access review and the two node-proxy reads.
  if (node.conditions.some((c) => c.status === 'True' && /^(Memory|Disk|PID)Pressure$/.test(c.type))) {
    const pressure = explainNodePressure({ conditions: node.conditions, pods: podList.items, kubelet: await readKubeletView(clients.kubeConfig, target), nowMs: now() });
    if (pressure) {
      e.pressure = pressure;
      e.explanation.push(...pressure.explanation);
    }
  }
  io.out(flags.output === 'json' ? `${JSON.stringify(e, null, 2)}\n` : renderNodeExplanation(e));
  return 0;
}

async function readOrExplain<T>(read: () => Promise<T>, what: string): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new Error(isNotFound(err) ? `${what} not found` : `cannot read ${what}: ${describeError(err)}`, { cause: err });
  }
}

async function readOptional<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
