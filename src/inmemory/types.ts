/**
 * The shapes of the in-memory cluster (./cluster.ts) that its writer (./writer.ts) and its users
 * share: the timeline, the informer-like handlers, the starting contents, and how a change is
 * delivered. Types only.
 */
import type { DaemonSet, Lease, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from '../kube/objects.js';

/** One thing that happened, at `atMs` milliseconds after T+0. */
export type TimelineEntry =
  | { atMs: number; kind: 'step'; action: string; nodes: string[]; detail: string }
  | { atMs: number; kind: 'condition'; node: string; from: string; to: string; reason?: string }
  | { atMs: number; kind: 'taint'; node: string; added: string[]; removed: string[]; by: string }
  | { atMs: number; kind: 'pod-not-ready'; node: string; pod: string }
  | { atMs: number; kind: 'pod-deleted'; node: string; pod: string; owners: string[]; force: boolean; by: string; reason: string }
  | { atMs: number; kind: 'detach'; node: string; volumeAttachment: string; persistentVolume?: string }
  | { atMs: number; kind: 'zone'; zone: string; from: string; to: string; size: number; unhealthy: number; rate: number; pausedReason?: string }
  | { atMs: number; kind: 'event'; type: string; reason: string; object: string; message: string; by: string };

/** Informer-like handlers for one resource. */
export interface ResourceHandlers<T> {
  add?(o: T): void;
  update?(old: T, o: T): void;
  delete?(o: T): void;
}

/** The handlers by resource, for {@link InMemoryCluster.on}. */
export interface ClusterHandlers {
  nodes: ResourceHandlers<Node>;
  leases: ResourceHandlers<Lease>;
  pods: ResourceHandlers<Pod>;
  volumeAttachments: ResourceHandlers<VolumeAttachment>;
}

/** The objects a cluster starts with; `takenAt` (epoch ms) is T+0. A what-if `ClusterSnapshot` is one. */
export interface ClusterContents {
  takenAt: number;
  nodes: Node[];
  leases: Lease[];
  pods: Pod[];
  daemonSets: DaemonSet[];
  volumeAttachments: VolumeAttachment[];
  pvcs: PersistentVolumeClaim[];
  pvs: PersistentVolume[];
}

/** How a change reaches the handlers: `sync` delivers before the call returns, otherwise on a microtask. */
export interface Delivery {
  sync?: boolean;
}

/** How a pod deletion is asked for, and who asked (for the timeline). */
export interface PodDeletion {
  force: boolean;
  by: string;
  reason: string;
}
