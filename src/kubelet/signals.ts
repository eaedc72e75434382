/**
 * Eviction signals and the kubelet Summary API shapes they are observed from.
 * Mirrors pkg/kubelet/eviction/api/types.go (signals), helpers.go (`signalToNodeCondition`,
 * `signalToResource`, `makeSignalObservations`) and helpers_others.go (`memory.available`).
 * The Summary types are the JSON of k8s.io/kubelet/pkg/apis/stats/v1alpha1, reduced to the fields
 * the eviction manager reads; a `/stats/summary` server can serve them as they are.
 */
import { formatBytes, formatDecimal } from '../kube/quantity.js';

/** An eviction signal name, as in `--eviction-hard` keys. */
export type Signal =
  | 'memory.available'
  | 'allocatableMemory.available'
  | 'nodefs.available'
  | 'nodefs.inodesFree'
  | 'imagefs.available'
  | 'imagefs.inodesFree'
  | 'containerfs.available'
  | 'containerfs.inodesFree'
  | 'pid.available';

/** Every signal, in upstream's declaration order. */
export const SIGNALS: readonly Signal[] = [
  'memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree',
  'containerfs.available', 'containerfs.inodesFree', 'allocatableMemory.available', 'pid.available',
];

/** The node condition a signal drives (helpers.go `signalToNodeCondition`). */
export type PressureConditionType = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** The resource a signal starves (helpers.go `signalToResource`): `memory`, `ephemeral-storage`, `inodes` or `pids`. */
export type StarvedResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

/** helpers.go `signalToNodeCondition`. */
export const SIGNAL_TO_NODE_CONDITION: Readonly<Record<Signal, PressureConditionType>> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'imagefs.available': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'nodefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** helpers.go `signalToResource`. */
export const SIGNAL_TO_RESOURCE: Readonly<Record<Signal, StarvedResource>> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'containerfs.available': 'ephemeral-storage',
  'containerfs.inodesFree': 'inodes',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/**
 * Formats a quantity of `resource` (base units: bytes, inodes, PIDs) as the kubelet's eviction
 * messages print it: Go's `resource.Quantity` String, BinarySI for bytes (`100Mi`), DecimalSI for
 * inodes and PIDs (`5k`). Used by the eviction message and by `explain`'s thresholds, which must
 * read the same as the kubelet's. Throws nothing.
 */
export function formatResourceQuantity(resource: StarvedResource, value: number): string {
  return resource === 'memory' || resource === 'ephemeral-storage' ? formatBytes(value) : formatDecimal(value);
}

/** helpers.go `validSignal`: whether `name` is a signal with a resource to reclaim. */
export function isSignal(name: string): name is Signal {
  return Object.hasOwn(SIGNAL_TO_RESOURCE, name);
}

/** stats/v1alpha1 `MemoryStats` (bytes). */
export interface MemoryStats { time?: string; availableBytes?: number; usageBytes?: number; workingSetBytes?: number }
/** stats/v1alpha1 `FsStats` (bytes and inode counts). */
export interface FsStats {
  time?: string; availableBytes?: number; capacityBytes?: number; usedBytes?: number;
  inodesFree?: number; inodes?: number; inodesUsed?: number;
}
/** stats/v1alpha1 `ContainerStats`, eviction fields only. */
export interface ContainerStats { name: string; startTime?: string; memory?: MemoryStats; rootfs?: FsStats; logs?: FsStats }
/** stats/v1alpha1 `VolumeStats`, eviction fields only. */
export interface VolumeStats extends FsStats { name: string }
/** stats/v1alpha1 `PodStats`, eviction fields only. */
export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime?: string;
  containers: ContainerStats[];
  memory?: MemoryStats;
  volume?: VolumeStats[];
  'ephemeral-storage'?: FsStats;
  process_stats?: { process_count?: number };
}
/** stats/v1alpha1 `Summary`, eviction fields only. */
export interface Summary {
  node: {
    nodeName: string;
    startTime?: string;
    systemContainers?: ContainerStats[];
    memory?: MemoryStats;
    fs?: FsStats;
    runtime?: { imageFs?: FsStats; containerFs?: FsStats };
    rlimit?: { time?: string; maxpid?: number; curproc?: number };
  };
  pods: PodStats[];
}

/** One observed signal (helpers.go `signalObservation`): available and capacity in base units; `timeMs` of the stats (epoch ms), if known. */
export interface SignalObservation { available: number; capacity: number; timeMs?: number }

/** Observations by signal (helpers.go `signalObservations`). */
export type SignalObservations = Partial<Record<Signal, SignalObservation>>;

/** Looks up a pod's stats by UID (helpers.go `statsFunc`). */
export type StatsFunc = (podUid: string) => PodStats | undefined;

function timeMs(t: string | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

function fsObservations(fs: FsStats | undefined, bytes: Signal, inodes: Signal, out: SignalObservations): void {
  if (!fs) return;
  if (fs.availableBytes !== undefined && fs.capacityBytes !== undefined) {
    out[bytes] = { available: fs.availableBytes, capacity: fs.capacityBytes, timeMs: timeMs(fs.time) };
  }
  if (fs.inodesFree !== undefined && fs.inodes !== undefined) {
    out[inodes] = { available: fs.inodesFree, capacity: fs.inodes, timeMs: timeMs(fs.time) };
  }
}

/** helpers.go `cachedStatsFunc`: pod stats by `podRef.uid`. */
export function cachedStatsFunc(pods: readonly PodStats[]): StatsFunc {
  const byUid = new Map(pods.map((p) => [p.podRef.uid, p]));
  return (uid) => byUid.get(uid);
}

/**
 * helpers.go `makeSignalObservations` (with helpers_others.go `makeMemoryAvailableSignalObservation`):
 * `memory.available` = node availableBytes, capacity = available + workingSet; `allocatableMemory.available`
 * from the `pods` system container; `nodefs.*` from node.fs; `imagefs.*` / `containerfs.*` from
 * node.runtime; `pid.available` = maxpid − curproc. A signal whose stats are missing is not observed.
 * @returns the observations and a stats lookup by pod UID
 */
export function makeSignalObservations(summary: Summary): { observations: SignalObservations; stats: StatsFunc } {
  const out: SignalObservations = {};
  const mem = summary.node.memory;
  if (mem?.availableBytes !== undefined && mem.workingSetBytes !== undefined) {
    out['memory.available'] = { available: mem.availableBytes, capacity: mem.availableBytes + mem.workingSetBytes, timeMs: timeMs(mem.time) };
  }
  const podsMem = summary.node.systemContainers?.find((c) => c.name === 'pods')?.memory;
  if (podsMem?.availableBytes !== undefined && podsMem.workingSetBytes !== undefined) {
    out['allocatableMemory.available'] = {
      available: podsMem.availableBytes, capacity: podsMem.availableBytes + podsMem.workingSetBytes, timeMs: timeMs(podsMem.time),
    };
  }
  fsObservations(summary.node.fs, 'nodefs.available', 'nodefs.inodesFree', out);
  fsObservations(summary.node.runtime?.imageFs, 'imagefs.available', 'imagefs.inodesFree', out);
  fsObservations(summary.node.runtime?.containerFs, 'containerfs.available', 'containerfs.inodesFree', out);
  const rl = summary.node.rlimit;
  if (rl?.curproc !== undefined && rl.maxpid !== undefined) {
    out['pid.available'] = { available: rl.maxpid - rl.curproc, capacity: rl.maxpid, timeMs: timeMs(rl.time) };
  }
  return { observations: out, stats: cachedStatsFunc(summary.pods) };
}
