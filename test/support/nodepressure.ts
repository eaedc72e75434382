/**
 * Builders for node-pressure tests, shaped like the helpers of upstream
 * pkg/kubelet/eviction/helpers_test.go (`newPod`, `newContainer`, `newResourceList`,
 * `newPodMemoryStats`, `newPodDiskStats`, `newPodInodeStats`, `newPodProcessStats`).
 */
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import { parseQuantity } from '../../src/kube/quantity.js';
import type { PodStats, StatsFunc } from '../../src/kubelet/signals.js';
import { localVolumeNames } from '../../src/kubelet/ranking.js';

/** eviction_manager_test.go priorities. */
export const lowPriority = -1;
export const defaultPriority = 0;
export const highPriority = 1;

/** `newResourceList(cpu, memory, disk)`; empty strings are left out. */
export function newResourceList(cpu: string, memory: string, disk: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (cpu) out.cpu = cpu;
  if (memory) out.memory = memory;
  if (disk) out['ephemeral-storage'] = disk;
  return out;
}

/** `newContainer(name, requests, limits)`. */
export function newContainer(name: string, requests: Record<string, string>, limits: Record<string, string>): V1Container {
  return { name, resources: { requests, limits } };
}

/** `newPod(name, priority, containers, volumes)`: UID = name. */
export function newPod(name: string, priority: number, containers: V1Container[], volumes: V1Volume[] = [], namespace = ''): V1Pod {
  return { metadata: { name, namespace, uid: name }, spec: { containers, volumes, priority } };
}

/** An emptyDir volume named `local-volume`. */
export const localVolume: V1Volume = { name: 'local-volume', emptyDir: {} };

const v = (q: string): number => Math.ceil(parseQuantity(q));
const ref = (pod: V1Pod) => ({ name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', uid: pod.metadata?.uid ?? '' });

/** `newPodMemoryStats(pod, workingSet)`: also the same bytes as disk usage everywhere, as upstream. */
export function newPodMemoryStats(pod: V1Pod, workingSet: string): PodStats {
  const b = v(workingSet);
  return {
    podRef: ref(pod), memory: { workingSetBytes: b }, volume: [{ name: 'local-volume', usedBytes: b }],
    containers: [{ name: pod.metadata?.name ?? '', logs: { usedBytes: b }, rootfs: { usedBytes: b } }],
    'ephemeral-storage': { usedBytes: b },
  };
}

/** `newPodDiskStats(pod, rootFsUsed, logsUsed, perLocalVolumeUsed)`. */
export function newPodDiskStats(pod: V1Pod, rootFsUsed: string, logsUsed: string, perLocalVolumeUsed: string): PodStats {
  return {
    podRef: ref(pod),
    containers: (pod.spec?.containers ?? []).map((c) => ({ name: c.name, rootfs: { usedBytes: v(rootFsUsed) }, logs: { usedBytes: v(logsUsed) } })),
    volume: localVolumeNames(pod).map((name) => ({ name, usedBytes: v(perLocalVolumeUsed) })),
  };
}

/** `newPodInodeStats(pod, rootFsInodesUsed, logsInodesUsed, perLocalVolumeInodesUsed)`. */
export function newPodInodeStats(pod: V1Pod, rootFs: string, logs: string, perLocalVolume: string): PodStats {
  return {
    podRef: ref(pod),
    containers: (pod.spec?.containers ?? []).map((c) => ({ name: c.name, rootfs: { inodesUsed: v(rootFs) }, logs: { inodesUsed: v(logs) } })),
    volume: localVolumeNames(pod).map((name) => ({ name, inodesUsed: v(perLocalVolume) })),
  };
}

/** `newPodProcessStats(pod, num)`. */
export function newPodProcessStats(pod: V1Pod, num: number): PodStats {
  return { podRef: ref(pod), containers: [], process_stats: { process_count: num } };
}

/** A stats lookup over the given pod stats (upstream's `statsFn` over a map). */
export function statsFnOf(stats: readonly PodStats[]): StatsFunc {
  const m = new Map(stats.map((s) => [s.podRef.uid, s]));
  return (uid) => m.get(uid);
}

/** Pod names of a list, for order assertions. */
export function names(pods: readonly V1Pod[]): string[] {
  return pods.map((p) => p.metadata?.name ?? '');
}
