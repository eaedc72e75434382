/**
 * The eviction manager's decision step, pure: one `synchronize` of pkg/kubelet/eviction/eviction_manager.go
 * split at its two I/O points (node-level reclaim and killing the pod), for the simulator's kubelets
 * (evictionmanager.ts). Only the simulator runs the loop; the rules it applies (signals, thresholds,
 * ranking: src/kubelet/) are the controller's too, because `explain` reports them. Times are epoch
 * milliseconds; pod grace periods are seconds.
 *
 * A caller runs, once per housekeeping interval ({@link EVICTION_MONITORING_PERIOD_MS}):
 *   1. {@link observe} with a fresh Summary → new state, the node conditions to report, and maybe a
 *      `reclaim` target (the signal and resource to reclaim now);
 *   2. if `reclaim`: the node-level actions {@link nodeLevelReclaimFor} names (container GC, image GC),
 *      then {@link nodeReclaimSatisfied} on a fresh Summary; if satisfied, stop;
 *   3. otherwise {@link chooseEviction}: the ranked pods and the one to evict, with grace and message.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { formatBytes, parseQuantity } from '../../../../src/kube/quantity.js';
import { isCriticalPod, rankPodsForEviction, type FsLayout, type RankedPod } from '../../../../src/kubelet/ranking.js';
import {
  SIGNAL_TO_RESOURCE, formatResourceQuantity, makeSignalObservations,
  type PressureConditionType, type Signal, type SignalObservations, type StarvedResource, type StatsFunc, type Summary,
} from '../../../../src/kubelet/signals.js';
import {
  IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, getReclaimableThreshold, getThresholdQuantity, isHardEvictionThreshold, mergeThresholds,
  nodeConditions, nodeConditionsLastObservedAt, nodeConditionsObservedSince, sortByEvictionPriority, thresholdsFirstObservedAt,
  thresholdsMet, thresholdsMetGracePeriod, thresholdsUpdatedStats,
  type EvictionConfig, type NodeConditionsObservedAt, type Threshold, type ThresholdsObservedAt,
} from '../../../../src/kubelet/thresholds.js';

/** helpers.go `Reason`: the pod status reason and Event reason of a kubelet eviction. */
export const EVICTION_REASON = 'Evicted';

/** What the manager remembers between synchronizes (managerImpl fields). */
export interface EvictionManagerState {
  /** conditions currently reported (after the transition period) */
  nodeConditions: PressureConditionType[];
  thresholdsFirstObservedAt: ThresholdsObservedAt;
  nodeConditionsLastObservedAt: NodeConditionsObservedAt;
  /** thresholds met after their grace period at the last synchronize (min reclaim is enforced on these) */
  thresholdsMet: Threshold[];
  lastObservations: SignalObservations;
}

/** A manager that has never synchronized. */
export function initialEvictionState(): EvictionManagerState {
  return { nodeConditions: [], thresholdsFirstObservedAt: new Map(), nodeConditionsLastObservedAt: new Map(), thresholdsMet: [], lastObservations: {} };
}

/** What {@link observe} found. */
export interface Observation {
  state: EvictionManagerState;
  observations: SignalObservations;
  stats: StatsFunc;
  /** thresholds met ignoring grace periods, plus those not yet reclaimed to their minimum (what drives conditions) */
  thresholdsObserved: Threshold[];
  /** thresholds past their grace period with fresh stats, in eviction priority (memory first) */
  thresholdsToAct: Threshold[];
  /** the first of `thresholdsToAct` with a resource: what to reclaim now; undefined when nothing is starved */
  reclaim?: { threshold: Threshold; resource: StarvedResource };
}

/**
 * The decision part of eviction_manager.go `synchronize` up to "attempting to reclaim": signals,
 * thresholds met (with min reclaim for those not yet resolved), first-observed times, node conditions
 * held for `pressureTransitionPeriodMs`, grace periods, and the fresh-stats filter.
 */
export function observe(config: EvictionConfig, state: EvictionManagerState, summary: Summary, nowMs: number): Observation {
  const { observations, stats } = makeSignalObservations(summary);
  let thresholds = thresholdsMet(config.thresholds, observations, false);
  if (state.thresholdsMet.length > 0) {
    thresholds = mergeThresholds(thresholds, thresholdsMet(state.thresholdsMet, observations, true));
  }
  const firstObservedAt = thresholdsFirstObservedAt(thresholds, state.thresholdsFirstObservedAt, nowMs);
  const lastObservedAt = nodeConditionsLastObservedAt(nodeConditions(thresholds), state.nodeConditionsLastObservedAt, nowMs);
  const conditions = nodeConditionsObservedSince(lastObservedAt, config.pressureTransitionPeriodMs, nowMs);
  const metGrace = thresholdsMetGracePeriod(firstObservedAt, nowMs);
  const next: EvictionManagerState = {
    nodeConditions: conditions,
    thresholdsFirstObservedAt: firstObservedAt,
    nodeConditionsLastObservedAt: lastObservedAt,
    thresholdsMet: metGrace,
    lastObservations: observations,
  };
  const toAct = sortByEvictionPriority(thresholdsUpdatedStats(metGrace, observations, state.lastObservations));
  const reclaim = getReclaimableThreshold(toAct);
  return { state: next, observations, stats, thresholdsObserved: thresholds, thresholdsToAct: toAct, ...(reclaim ? { reclaim } : {}) };
}

/** A node-level reclaim action (eviction_manager.go `nodeReclaimFuncs`): delete dead containers, or unused images. */
export type NodeReclaimAction = 'deleteAllUnusedContainers' | 'deleteUnusedImages';

/** helpers.go `buildSignalToNodeReclaimFuncs`: what the kubelet frees before evicting pods for `signal` (none for memory and PIDs). */
export function nodeLevelReclaimFor(signal: Signal, layout: FsLayout): NodeReclaimAction[] {
  const both: NodeReclaimAction[] = ['deleteAllUnusedContainers', 'deleteUnusedImages'];
  const kind = signal.split('.')[0];
  if (kind !== 'nodefs' && kind !== 'imagefs' && kind !== 'containerfs') return [];
  if (layout.dedicatedImageFs && !layout.splitContainerImageFs) {
    return kind === 'nodefs' ? [] : both;
  }
  if (layout.dedicatedImageFs && layout.splitContainerImageFs) {
    return kind === 'imagefs' ? ['deleteUnusedImages'] : ['deleteAllUnusedContainers'];
  }
  return both;
}

/** eviction_manager.go `reclaimNodeLevelResources`, after the actions ran: true when no threshold is met even with min reclaim added. */
export function nodeReclaimSatisfied(config: EvictionConfig, summaryAfterReclaim: Summary): boolean {
  return thresholdsMet(config.thresholds, makeSignalObservations(summaryAfterReclaim).observations, true).length === 0;
}

/** eviction_manager.go `synchronize`: grace of the kill, seconds — 1 for hard, min(max-pod-grace-period, the pod's own) for soft. */
export function evictionGracePeriodSeconds(threshold: Threshold, pod: V1Pod, maxPodGracePeriodSeconds: number): number {
  if (isHardEvictionThreshold(threshold)) return IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
  const own = pod.spec?.terminationGracePeriodSeconds;
  return own === undefined ? maxPodGracePeriodSeconds : Math.min(maxPodGracePeriodSeconds, own);
}

/**
 * helpers.go `evictionMessage`: `The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. `
 * then one `Container C was using U, request is R, has larger consumption of memory. ` per container over its request.
 * Annotations as upstream's Event (`offending_containers`, `offending_containers_usage`, `starved_resource`).
 */
export function evictionMessage(
  resource: StarvedResource, pod: V1Pod, stats: StatsFunc, thresholds: readonly Threshold[], observations: SignalObservations,
): { message: string; annotations: Record<string, string> } {
  let message = `The node was low on resource: ${resource}. `;
  for (const t of thresholds) {
    if (SIGNAL_TO_RESOURCE[t.signal] !== resource) continue;
    const observed = observations[t.signal];
    if (!observed) continue;
    message += `Threshold quantity: ${formatResourceQuantity(resource, getThresholdQuantity(t.value, observed.capacity))}, available: ${formatResourceQuantity(resource, observed.available)}. `;
    break;
  }
  const annotations: Record<string, string> = {};
  const podStats = stats(pod.metadata?.uid ?? '');
  if (!podStats) return { message, annotations };
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  const exceeded: string[] = [];
  const usages: string[] = [];
  for (const cs of podStats.containers) {
    const c = containers.find((x) => x.name === cs.name);
    if (!c) continue;
    const reqText = c.resources?.requests?.[resource];
    const request = reqText === undefined ? 0 : parseQuantity(reqText);
    let usage: number | undefined;
    if (resource === 'ephemeral-storage' && cs.rootfs?.usedBytes !== undefined && cs.logs?.usedBytes !== undefined) usage = cs.rootfs.usedBytes + cs.logs.usedBytes;
    if (resource === 'memory' && cs.memory?.workingSetBytes !== undefined) usage = cs.memory.workingSetBytes;
    if (usage !== undefined && usage > request) {
      message += `Container ${c.name} was using ${formatBytes(usage)}, request is ${formatResourceQuantity(resource, request)}, has larger consumption of ${resource}. `;
      exceeded.push(c.name);
      usages.push(formatBytes(usage));
    }
  }
  annotations.offending_containers = exceeded.join(',');
  annotations.offending_containers_usage = usages.join(',');
  annotations.starved_resource = resource;
  return { message, annotations };
}

/** What {@link chooseEviction} decided. */
export interface EvictionChoice {
  /** every pod in the kubelet's order, first = next */
  ranking: RankedPod[];
  /** the pod to evict now: the first non-critical one; undefined when none can be evicted */
  victim?: RankedPod;
  /** seconds */
  gracePeriodSeconds?: number;
  message?: string;
  annotations?: Record<string, string>;
}

/**
 * eviction_manager.go `synchronize` after node-level reclaim failed: rank the active pods for the
 * reclaim signal and pick the first one that is not critical (`evictPod` refuses critical pods and
 * the loop moves on). The grace and the status message come with it.
 */
export function chooseEviction(config: EvictionConfig, observation: Observation, activePods: readonly V1Pod[], layout: FsLayout): EvictionChoice {
  const target = observation.reclaim;
  if (!target) return { ranking: [] };
  const ranking = rankPodsForEviction(target.threshold.signal, activePods, observation.stats, layout, formatResourceQuantity);
  const victim = ranking.find((r) => !isCriticalPod(r.pod));
  if (!victim) return { ranking };
  const { message, annotations } = evictionMessage(target.resource, victim.pod, observation.stats, observation.thresholdsToAct, observation.observations);
  return { ranking, victim, gracePeriodSeconds: evictionGracePeriodSeconds(target.threshold, victim.pod, config.maxPodGracePeriodSeconds), message, annotations };
}
