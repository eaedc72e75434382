/**
 * Which pod the kubelet evicts next under node pressure, and why, as data.
 * Mirrors pkg/kubelet/eviction/helpers.go: the comparators `exceedMemoryRequests`, `priority`,
 * `memory`, `process`, `exceedDiskRequests`, `disk`, the multi-key sort `orderedBy`, the rankers
 * `rankMemoryPressure`, `rankPIDPressure`, `rankDiskPressureFunc` and `buildSignalToRankFunc`;
 * pkg/api/v1/resource `GetResourceRequestQuantity`; pkg/kubelet/types `IsCriticalPod`.
 * Quantities are base units (bytes, inodes, PIDs). Pure: no I/O, no clock.
 */
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import { parseQuantity } from '../kube/quantity.js';
import type { PodStats, Signal, StarvedResource, StatsFunc } from './signals.js';

/** helpers.go `fsStatsType`: which pod filesystem usage counts for a disk signal. */
export type FsStatsType = 'root' | 'logs' | 'localVolumeSource' | 'images';

/** helpers.go `cmpFunc`: negative when `a` is evicted before `b`. */
export type CmpFunc = (a: V1Pod, b: V1Pod) => number;

/** scheduling `SystemCriticalPriority` (2 000 000 000): at or above it a pod is critical and never evicted. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

function uidOf(pod: V1Pod): string {
  return pod.metadata?.uid ?? '';
}

function q(v: string | undefined): number {
  if (v === undefined) return 0;
  try {
    return parseQuantity(v);
  } catch {
    // A malformed request cannot pass API validation; treat it as absent rather than throw mid-sort.
    return 0;
  }
}

function containerRequest(c: V1Container, resource: string): number {
  return q(c.resources?.requests?.[resource]);
}

/**
 * pkg/api/v1/resource `GetResourceRequestQuantity` (through component-helpers `PodRequests`):
 * pod-level `spec.resources.requests` when set; otherwise the larger of the app containers plus
 * sidecars and the largest init container (plus the sidecars started before it); plus
 * `spec.overhead` when the total is non-zero. Base units.
 */
export function podRequest(pod: V1Pod, resource: string): number {
  const podLevel = pod.spec?.resources?.requests?.[resource];
  let total: number;
  if (podLevel !== undefined) {
    total = q(podLevel);
  } else {
    let containers = 0;
    for (const c of pod.spec?.containers ?? []) containers += containerRequest(c, resource);
    let sidecars = 0;
    let initMax = 0;
    for (const c of pod.spec?.initContainers ?? []) {
      const r = containerRequest(c, resource);
      if (c.restartPolicy === 'Always') {
        sidecars += r;
        initMax = Math.max(initMax, sidecars);
      } else {
        initMax = Math.max(initMax, sidecars + r);
      }
    }
    total = Math.max(containers + sidecars, initMax);
  }
  const overhead = pod.spec?.overhead?.[resource];
  if (overhead !== undefined && total !== 0) total += q(overhead);
  return total;
}

/** component-helpers `PodPriority`: `spec.priority`, 0 when unset. */
export function podPriority(pod: V1Pod): number {
  return pod.spec?.priority ?? 0;
}

/** pkg/kubelet/types `IsCriticalPod`: static, mirror, or priority ≥ {@link SYSTEM_CRITICAL_PRIORITY}. The kubelet never evicts these. */
export function isCriticalPod(pod: V1Pod): boolean {
  const ann = pod.metadata?.annotations ?? {};
  const source = ann['kubernetes.io/config.source'];
  if (source !== undefined && source !== 'api') return true;
  if (ann['kubernetes.io/config.mirror'] !== undefined) return true;
  return podPriority(pod) >= SYSTEM_CRITICAL_PRIORITY;
}

/** QoS class (pkg/apis/core/v1/helper/qos `GetPodQOS`, without pod-level resources): `status.qosClass` when the API server set it. */
export function podQosClass(pod: V1Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const reported = pod.status?.qosClass;
  if (reported === 'Guaranteed' || reported === 'Burstable' || reported === 'BestEffort') return reported;
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of all) {
    for (const r of ['cpu', 'memory']) {
      const req = c.resources?.requests?.[r];
      const lim = c.resources?.limits?.[r];
      if (req !== undefined && q(req) !== 0) any = true;
      if (lim !== undefined && q(lim) !== 0) any = true;
      if (lim === undefined || q(req ?? lim) !== q(lim)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** helpers.go `cmpBool`: `true` sorts first. */
export function cmpBool(a: boolean, b: boolean): number {
  if (a === b) return 0;
  return b ? 1 : -1;
}

/** helpers.go `orderedBy(...).Sort`: a sorted copy, ordered by the first comparator that separates two pods. */
export function orderedBy(...cmps: CmpFunc[]): (pods: readonly V1Pod[]) => V1Pod[] {
  return (pods) => [...pods].sort((a, b) => {
    for (const cmp of cmps) {
      const r = cmp(a, b);
      if (r !== 0) return r;
    }
    return 0;
  });
}

/** helpers.go `priority`: lower priority first. */
export const priority: CmpFunc = (a, b) => Math.sign(podPriority(a) - podPriority(b));

/** Working-set bytes of a pod's stats (helpers.go `memoryUsage`), 0 when absent. */
export function memoryUsage(stats: PodStats): number {
  return stats.memory?.workingSetBytes ?? 0;
}

/** Process count of a pod's stats (helpers.go `processUsage`), 0 when absent. */
export function processUsage(stats: PodStats): number {
  return stats.process_stats?.process_count ?? 0;
}

function statsPair(stats: StatsFunc, a: V1Pod, b: V1Pod): [PodStats, PodStats] | number {
  const sa = stats(uidOf(a));
  const sb = stats(uidOf(b));
  if (!sa || !sb) return cmpBool(!sa, !sb);
  return [sa, sb];
}

/** helpers.go `exceedMemoryRequests`: pods using more memory than they request first; pods without stats first of all. */
export function exceedMemoryRequests(stats: StatsFunc): CmpFunc {
  return (a, b) => {
    const p = statsPair(stats, a, b);
    if (typeof p === 'number') return p;
    return cmpBool(memoryUsage(p[0]) > podRequest(a, 'memory'), memoryUsage(p[1]) > podRequest(b, 'memory'));
  };
}

/** helpers.go `memory`: larger working set above request first. */
export function memory(stats: StatsFunc): CmpFunc {
  return (a, b) => {
    const p = statsPair(stats, a, b);
    if (typeof p === 'number') return p;
    return Math.sign((memoryUsage(p[1]) - podRequest(b, 'memory')) - (memoryUsage(p[0]) - podRequest(a, 'memory')));
  };
}

/** helpers.go `process`: more processes first. */
export function process(stats: StatsFunc): CmpFunc {
  return (a, b) => {
    const p = statsPair(stats, a, b);
    if (typeof p === 'number') return p;
    return Math.sign(processUsage(p[1]) - processUsage(p[0]));
  };
}

/** helpers.go `localVolumeNames`: hostPath volumes and local ephemeral ones (gitRepo, disk-backed emptyDir, configMap). */
export function localVolumeNames(pod: V1Pod): string[] {
  const isLocal = (v: V1Volume): boolean =>
    v.hostPath !== undefined || v.gitRepo !== undefined || v.configMap !== undefined ||
    (v.emptyDir !== undefined && (v.emptyDir.medium ?? '') === '');
  return (pod.spec?.volumes ?? []).filter(isLocal).map((v) => v.name);
}

/** helpers.go `podDiskUsage`: bytes and inodes of the measured filesystems (container rootfs, logs, local volumes). */
export function podDiskUsage(stats: PodStats, pod: V1Pod, measure: readonly FsStatsType[]): { 'ephemeral-storage': number; inodes: number } {
  let disk = 0;
  let inodes = 0;
  for (const c of stats.containers) {
    if (measure.includes('root')) {
      disk += c.rootfs?.usedBytes ?? 0;
      inodes += c.rootfs?.inodesUsed ?? 0;
    }
    if (measure.includes('logs')) {
      disk += c.logs?.usedBytes ?? 0;
      inodes += c.logs?.inodesUsed ?? 0;
    }
  }
  if (measure.includes('localVolumeSource')) {
    for (const name of localVolumeNames(pod)) {
      const v = stats.volume?.find((x) => x.name === name);
      disk += v?.usedBytes ?? 0;
      inodes += v?.inodesUsed ?? 0;
    }
  }
  return { 'ephemeral-storage': disk, inodes };
}

/** helpers.go `exceedDiskRequests`: pods using more of `resource` than they request first. */
export function exceedDiskRequests(stats: StatsFunc, measure: readonly FsStatsType[], resource: 'ephemeral-storage' | 'inodes'): CmpFunc {
  return (a, b) => {
    const p = statsPair(stats, a, b);
    if (typeof p === 'number') return p;
    return cmpBool(
      podDiskUsage(p[0], a, measure)[resource] > podRequest(a, resource),
      podDiskUsage(p[1], b, measure)[resource] > podRequest(b, resource),
    );
  };
}

/** helpers.go `disk`: larger usage above the ephemeral-storage request first (upstream subtracts that request for inodes too). */
export function disk(stats: StatsFunc, measure: readonly FsStatsType[], resource: 'ephemeral-storage' | 'inodes'): CmpFunc {
  return (a, b) => {
    const p = statsPair(stats, a, b);
    if (typeof p === 'number') return p;
    const ua = podDiskUsage(p[0], a, measure)[resource] - podRequest(a, 'ephemeral-storage');
    const ub = podDiskUsage(p[1], b, measure)[resource] - podRequest(b, 'ephemeral-storage');
    return Math.sign(ub - ua);
  };
}

/** helpers.go `rankMemoryPressure`: exceeds memory request, then priority, then usage above request. */
export function rankMemoryPressure(pods: readonly V1Pod[], stats: StatsFunc): V1Pod[] {
  return orderedBy(exceedMemoryRequests(stats), priority, memory(stats))(pods);
}

/** helpers.go `rankPIDPressure`: priority, then process count. */
export function rankPIDPressure(pods: readonly V1Pod[], stats: StatsFunc): V1Pod[] {
  return orderedBy(priority, process(stats))(pods);
}

/** helpers.go `rankDiskPressureFunc`: exceeds request, then priority, then usage above request. */
export function rankDiskPressureFunc(measure: readonly FsStatsType[], resource: 'ephemeral-storage' | 'inodes'): (pods: readonly V1Pod[], stats: StatsFunc) => V1Pod[] {
  return (pods, stats) => orderedBy(exceedDiskRequests(stats, measure, resource), priority, disk(stats, measure, resource))(pods);
}

/** Which filesystems the node has: a dedicated image fs, and whether containers live apart from images. */
export interface FsLayout { dedicatedImageFs: boolean; splitContainerImageFs: boolean }

/** helpers.go `buildSignalToRankFunc`: the filesystems that count for each disk signal under `layout`. */
export function diskMeasureFor(signal: Signal, layout: FsLayout): FsStatsType[] | undefined {
  const all: FsStatsType[] = ['images', 'root', 'logs', 'localVolumeSource'];
  const kind = signal.split('.')[0];
  if (layout.dedicatedImageFs && !layout.splitContainerImageFs) {
    if (kind === 'nodefs') return ['logs', 'localVolumeSource'];
    if (kind === 'imagefs' || kind === 'containerfs') return ['root', 'images'];
  } else if (layout.dedicatedImageFs && layout.splitContainerImageFs) {
    if (kind === 'nodefs' || kind === 'containerfs') return ['logs', 'localVolumeSource', 'root'];
    if (kind === 'imagefs') return ['images'];
  } else if (kind === 'nodefs' || kind === 'imagefs' || kind === 'containerfs') {
    return all;
  }
  return undefined;
}

/** One pod in the kubelet's eviction order, with the keys it was ranked by. */
export interface RankedPod {
  pod: V1Pod;
  /** `namespace/name` */
  key: string;
  /** 1-based place in the eviction order */
  rank: number;
  qosClass: 'Guaranteed' | 'Burstable' | 'BestEffort';
  priority: number;
  /** the starved resource the ranking measured */
  resource: StarvedResource;
  /** measured usage in base units; undefined when the kubelet has no stats for the pod (ranked first) */
  usage?: number;
  /** request of the resource, base units (0 for pids, which have no request) */
  request: number;
  /** usage > request (undefined for pids, where the ranking ignores requests) */
  exceedsRequest?: boolean;
  /** critical pods (static, mirror, system-critical priority) are skipped by the kubelet */
  critical: boolean;
  /** the ranking rules as they applied to this pod, in order, e.g. ["usage 150Mi > request 0", "priority 0", "usage above request 150Mi"] */
  why: string[];
}

/**
 * The kubelet's eviction order of `pods` for `signal` (eviction_manager.go `synchronize` → the
 * signal's rank function), as data: one {@link RankedPod} per pod, first = evicted next (unless critical,
 * which the kubelet skips). `stats` may be empty (no Summary API): the order then is the static one
 * (every pod lacks stats, so only priority separates them for memory and disk; see `why`).
 */
export function rankPodsForEviction(signal: Signal, pods: readonly V1Pod[], stats: StatsFunc, layout: FsLayout, fmt: (resource: StarvedResource, v: number) => string = (_r, v) => String(v)): RankedPod[] {
  let ordered: V1Pod[];
  let resource: StarvedResource;
  let measure: FsStatsType[] | undefined;
  if (signal === 'memory.available' || signal === 'allocatableMemory.available') {
    ordered = rankMemoryPressure(pods, stats);
    resource = 'memory';
  } else if (signal === 'pid.available') {
    ordered = rankPIDPressure(pods, stats);
    resource = 'pids';
  } else {
    measure = diskMeasureFor(signal, layout) ?? [];
    resource = signal.endsWith('inodesFree') ? 'inodes' : 'ephemeral-storage';
    ordered = rankDiskPressureFunc(measure, resource)(pods, stats);
  }
  return ordered.map((pod, i) => {
    const s = stats(uidOf(pod));
    const prio = podPriority(pod);
    const request = resource === 'pids' ? 0 : podRequest(pod, resource);
    let usage: number | undefined;
    if (s) {
      if (resource === 'memory') usage = memoryUsage(s);
      else if (resource === 'pids') usage = processUsage(s);
      else usage = podDiskUsage(s, pod, measure ?? [])[resource as 'ephemeral-storage' | 'inodes'];
    }
    const why: string[] = [];
    if (resource === 'pids') {
      why.push(`priority ${prio}`);
      why.push(usage === undefined ? 'no stats' : `${usage} processes`);
    } else {
      why.push(usage === undefined ? 'no stats (ranked before pods with stats)' : `usage ${fmt(resource, usage)} ${usage > request ? '>' : '<='} request ${fmt(resource, request)}`);
      why.push(`priority ${prio}`);
      if (usage !== undefined) {
        const above = usage - (resource === 'inodes' ? podRequest(pod, 'ephemeral-storage') : request);
        why.push(`usage above request ${above < 0 ? '-' : ''}${fmt(resource, Math.abs(above))}`);
      }
    }
    const critical = isCriticalPod(pod);
    if (critical) why.push('critical pod: never evicted by the kubelet');
    return {
      pod, key: `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`, rank: i + 1, qosClass: podQosClass(pod), priority: prio,
      resource, usage, request,
      ...(resource === 'pids' || usage === undefined ? {} : { exceedsRequest: usage > request }),
      critical, why,
    };
  });
}
