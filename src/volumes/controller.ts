/**
 * The force-detach controller: the force-detach half of upstream's attach/detach reconciler, as a
 * thin I/O shell around src/volumes/decision.ts. It deletes a VolumeAttachment (which makes the
 * CSI external-attacher detach the volume) when the node is out of service and no running pod
 * uses the volume, or when the node has been not Ready and the volume unused by running pods for
 * `--force-detach-timeout`.
 *
 * Mirrors upstream `pkg/controller/volume/attachdetach/reconciler/reconciler.go` (`reconcile`,
 * detach half) and the metric of `attachdetach/metrics/metrics.go` (`RecordForcedDetachMetric`).
 *
 * Data flow: informer handlers enqueue VolumeAttachment names (level-based: a node, pod or
 * attachment change queues the attachments on that node); the worker re-reads the caches,
 * decides, re-decides on a live GET of the node and the attachment, and deletes it through
 * {@link ForceDetachWriter}. A volume waiting for its timeout is re-queued at the exact deadline.
 *
 * Deliberate differences from upstream (each is also commented where it happens):
 * 1. Re-check before acting: the node and the VolumeAttachment are read from the API right before
 *    the delete, and the decision is taken again on them.
 * 2. The timeout clock starts when the last user pod began terminating (its deletionTimestamp minus
 *    its grace period), or when the controller saw the volume without users; upstream starts it
 *    when the pod leaves the desired state of the world.
 * 3. Node status (`volumesAttached`) is left to kube-controller-manager (see writer.ts).
 * 4. Under `--node-selector`, only attachments on nodes this process has seen are considered.
 * 5. A Warning event on the node names the volume and the attachment (upstream only logs).
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from '../kube/objects.js';
import type { Logger } from '../kube/logger.js';
import { WorkQueue } from '../kube/workqueue.js';
import type { AttachDetachMetrics } from '../metrics/registry.js';
import type { EventSink, ReadStore } from '../nodelifecycle/controller.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import {
  decideForceDetach,
  FORCE_DETACH_EVENT_REASONS,
  nextReleasedAt,
  volumeUsers,
  type ForceDetachDecision,
  type VolumeUsers,
} from './decision.js';
import type { ForceDetachWriter } from './writer.js';

/** Configuration. Durations in **milliseconds**. */
export interface ForceDetachConfig {
  /** `--force-detach-timeout` (default 360 000 = 6 min). */
  forceDetachTimeoutMs: number;
  /** `--disable-force-detach-on-timeout`. */
  disableForceDetachOnTimeout: boolean;
  /** Period of the safety resync over every attachment (program default 60 000). */
  resyncPeriodMs: number;
  /** True when the process runs under `--node-selector`. */
  scoped: boolean;
}

/** The informer caches the controller reads. PVC keys are `ns/name`; VolumeAttachment and PV keys are names. */
export interface ForceDetachCaches {
  nodes: ReadStore<Node>;
  pods: { podsOnNode(nodeName: string): readonly Pod[] };
  volumeAttachments: ReadStore<VolumeAttachment> & { onNode(nodeName: string): readonly VolumeAttachment[] };
  pvcs: { get(key: string): PersistentVolumeClaim | undefined };
  pvs: { list(): readonly PersistentVolume[] };
}

/** The live reads and the write the controller makes (implemented by {@link ForceDetachWriter}). */
export type ForceDetachWrites = Pick<ForceDetachWriter, 'getNode' | 'getVolumeAttachment' | 'deleteVolumeAttachment'>;

/** Everything the controller needs, injected. */
export interface ForceDetachDeps {
  config: ForceDetachConfig;
  clock: Clock;
  log: Logger;
  caches: ForceDetachCaches;
  writes: ForceDetachWrites;
  events: EventSink;
  metrics: AttachDetachMetrics;
  /** True while the node, pod, VolumeAttachment and claim caches reflect the cluster. */
  canSeeCluster: () => boolean;
}

/** Read-only view for `/debug/state`. Times are epoch ms. */
export interface ForceDetachView {
  /** Attachments whose volume no running pod uses, with the time the timeout path would act. */
  released: { volumeAttachment: string; node: string; persistentVolume: string; releasedAt: number; timeoutAt?: number }[];
  queued: number;
}

const WORKERS = 4;
const BLIND_RETRY_MS = 1000;

/**
 * The force-detach controller. Construct, {@link start} once the caches synced, and feed it
 * informer events through {@link nodeChanged}, {@link podChanged}, {@link volumeAttachmentChanged}
 * and {@link volumeAttachmentDeleted}; {@link stop} ends every loop.
 * Mirrors the detach half of upstream `reconciler.reconcile`.
 */
export class ForceDetachController {
  readonly #d: ForceDetachDeps;
  readonly #queue: WorkQueue;
  /** VolumeAttachment name → epoch ms since when no running pod has used its volume (see {@link nextReleasedAt}). */
  readonly #releasedAt = new Map<string, number>();
  /** Nodes seen in the cache (scoping rule for attachments whose node is gone). */
  readonly #seen = new Set<string>();
  #resyncTimer: TimerHandle | undefined;
  #stopped = true;

  /** @param deps injected caches, writer, events, metrics, clock and logger. Never throws. */
  constructor(deps: ForceDetachDeps) {
    this.#d = deps;
    this.#queue = new WorkQueue({
      name: 'attachdetach_force_detach',
      concurrency: WORKERS,
      clock: deps.clock,
      log: deps.log,
      sync: (name) => this.#sync(name),
    });
  }

  /** Queues every cached attachment and starts the periodic resync. Call after the caches synced. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    for (const n of this.#d.caches.nodes.list()) this.#seen.add(n.name);
    this.resync();
  }

  /** Stops the resync and the workers; in-flight deletes finish. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#resyncTimer?.cancel();
    await this.#queue.shutDown();
  }

  /** Queues every cached attachment now and schedules the next resync. */
  resync(): void {
    if (this.#stopped) return;
    for (const va of this.#d.caches.volumeAttachments.list()) this.#queue.add(va.name);
    this.#resyncTimer?.cancel();
    this.#resyncTimer = this.#d.clock.setTimeout(() => this.resync(), this.#d.config.resyncPeriodMs);
  }

  // ---------------------------------------------------------------------------------------------
  // Informer handlers: enqueue only.
  // ---------------------------------------------------------------------------------------------

  /** A Node was added, updated or deleted: its attachments are looked at again. */
  nodeChanged(node: Pick<Node, 'name'>): void {
    this.#seen.add(node.name);
    this.#queueNode(node.name);
  }

  /** A pod was added, updated or deleted: if it mounts claims, the attachments on its node are looked at again. */
  podChanged(pod: Pick<Pod, 'nodeName' | 'pvcNames'>): void {
    if (pod.nodeName !== '' && pod.pvcNames.length > 0) this.#queueNode(pod.nodeName);
  }

  /** A VolumeAttachment was added or updated. */
  volumeAttachmentChanged(va: Pick<VolumeAttachment, 'name'>): void {
    if (!this.#stopped) this.#queue.add(va.name);
  }

  /** A VolumeAttachment was deleted: forget it. */
  volumeAttachmentDeleted(va: Pick<VolumeAttachment, 'name'>): void {
    this.#releasedAt.delete(va.name);
  }

  #queueNode(nodeName: string): void {
    if (this.#stopped) return;
    for (const va of this.#d.caches.volumeAttachments.onNode(nodeName)) this.#queue.add(va.name);
  }

  // ---------------------------------------------------------------------------------------------
  // The decision and the delete.
  // ---------------------------------------------------------------------------------------------

  #resolveClaim = (namespace: string, claim: string): string | undefined => {
    const pvc = this.#d.caches.pvcs.get(`${namespace}/${claim}`);
    if (pvc?.volumeName) return pvc.volumeName;
    // An unbound or missing claim: a PV may still point at it (claimRef), e.g. while the PVC cache lags.
    return this.#d.caches.pvs.list().find((pv) => pv.claimRef?.namespace === namespace && pv.claimRef.name === claim)?.name;
  };

  #users(va: VolumeAttachment, pvName: string): VolumeUsers {
    return volumeUsers(this.#d.caches.pods.podsOnNode(va.nodeName), va.nodeName, pvName, this.#resolveClaim);
  }

  #decide(va: VolumeAttachment, pvName: string, node: Node | undefined): ForceDetachDecision {
    const now = this.#d.clock.now();
    const users = this.#users(va, pvName);
    const releasedAt = nextReleasedAt(this.#releasedAt.get(va.name), users, now);
    if (releasedAt === undefined) this.#releasedAt.delete(va.name);
    else this.#releasedAt.set(va.name, releasedAt);
    return decideForceDetach({
      node,
      users,
      releasedAt,
      nowMs: now,
      timeoutMs: this.#d.config.forceDetachTimeoutMs,
      disableTimeout: this.#d.config.disableForceDetachOnTimeout,
    });
  }

  async #sync(name: string): Promise<void> {
    if (this.#stopped) return;
    const va = this.#d.caches.volumeAttachments.get(name);
    if (!va || va.deletionTimestamp !== undefined) {
      this.#releasedAt.delete(name); // gone or already detaching
      return;
    }
    const pvName = va.persistentVolumeName;
    if (pvName === undefined) return; // inline volume spec: no claim can be followed to it
    const cachedNode = this.#d.caches.nodes.get(va.nodeName);
    // Deliberate difference 4: a scoped controller leaves nodes outside its selector alone.
    if (!cachedNode && this.#d.config.scoped && !this.#seen.has(va.nodeName)) return;
    if (!this.#d.canSeeCluster()) {
      this.#queue.addAfter(name, BLIND_RETRY_MS);
      return;
    }
    const first = this.#decide(va, pvName, cachedNode);
    if (first.action === 'keep') {
      this.#keep(name, first);
      return;
    }
    // Deliberate difference 1: decide again on the node and the attachment as the API has them now.
    const [liveNode, liveVa] = await Promise.all([this.#d.writes.getNode(va.nodeName), this.#d.writes.getVolumeAttachment(name)]);
    if (!liveVa || liveVa.uid !== va.uid || liveVa.deletionTimestamp !== undefined) return;
    const second = this.#decide(liveVa, pvName, liveNode);
    if (second.action === 'keep') {
      this.#d.log.info({ volumeAttachment: name, node: va.nodeName, why: second.why }, 'Live re-check: not force-detaching');
      this.#keep(name, second);
      return;
    }
    const result = await this.#d.writes.deleteVolumeAttachment(name, va.uid);
    if (result !== 'deleted') return;
    this.#d.metrics.forcedDetaches.inc({ reason: second.reason });
    this.#recordDetach(liveVa, pvName, second.reason, liveNode?.uid ?? cachedNode?.uid ?? '');
  }

  #keep(name: string, d: Extract<ForceDetachDecision, { action: 'keep' }>): void {
    if (d.recheckAtMs !== undefined) this.#queue.addAfter(name, d.recheckAtMs - this.#d.clock.now());
  }

  #recordDetach(va: VolumeAttachment, pvName: string, reason: 'out-of-service' | 'timeout', nodeUid: string): void {
    const timeout = this.#d.config.forceDetachTimeoutMs;
    const why =
      reason === 'out-of-service'
        ? 'node is out of service (not Ready and tainted node.kubernetes.io/out-of-service) and no running pod uses the volume'
        : `node is not Ready and no running pod has used the volume for ${timeout / 1000}s (--force-detach-timeout)`;
    this.#d.events.record(
      { kind: 'Node', name: va.nodeName, uid: nodeUid },
      'Warning',
      FORCE_DETACH_EVENT_REASONS[reason],
      `Force-detached volume ${pvName} (VolumeAttachment ${va.name}) from node ${va.nodeName}: ${why}`,
    );
    this.#d.log.warn(
      { volumeAttachment: va.name, persistentVolume: pvName, node: va.nodeName, reason, releasedAt: this.#releasedAt.get(va.name) },
      'Force-detached volume: deleted its VolumeAttachment',
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Introspection.
  // ---------------------------------------------------------------------------------------------

  /** A snapshot for `/debug/state`. Times are epoch ms. */
  view(): ForceDetachView {
    const released: ForceDetachView['released'] = [];
    for (const [name, releasedAt] of this.#releasedAt) {
      const va = this.#d.caches.volumeAttachments.get(name);
      if (!va) continue;
      const entry: ForceDetachView['released'][number] = {
        volumeAttachment: name,
        node: va.nodeName,
        persistentVolume: va.persistentVolumeName ?? '',
        releasedAt,
      };
      if (!this.#d.config.disableForceDetachOnTimeout) entry.timeoutAt = releasedAt + this.#d.config.forceDetachTimeoutMs;
      released.push(entry);
    }
    return { released, queued: this.#queue.len + this.#queue.stats().delayed };
  }
}

