/**
 * The force-detach controller: the force-detach half of upstream's attach/detach reconciler, as a
 * thin I/O shell around src/volumes/decision.ts. It deletes a VolumeAttachment (which makes the
 * CSI external-attacher detach the volume) once no pod on the node holds the volume any more (every
 * user pod is gone or terminated: terminal, or deleted with no container still running), and then
 * either the node is out of service or it is not Ready and `--force-detach-timeout` has passed
 * since the last holder let go.
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
 * 2. The timeout clock starts when this controller sees the last holder terminated or gone (like
 *    upstream's first reconcile after the pod left the desired state of the world), confirmed by a
 *    live list of the node's pods (7); after a restart it starts again from then (later, never earlier).
 * 3. Node status (`volumesAttached`) is left to kube-controller-manager (see writer.ts).
 * 4. Under `--node-selector`, only attachments on nodes this process has seen are considered.
 * 5. A Warning event on the node names the volume and the attachment (upstream only logs).
 * 6. Fail closed: a live read that is neither a parsable object nor a 404 stops the detach; it is
 *    counted (`attachdetach_controller_live_read_failures_total`) and retried with backoff.
 * 7. Every doubt is a holder (all only delay a detach): a pod holds a volume it names through any
 *    source (a claim, a generic ephemeral volume's claim `<pod>-<volume>` that the pod controls,
 *    an inline CSI volume of the attachment's driver, an inline source that cannot be mapped); a
 *    claim that is missing, unbound, not the pod's, or bound to a missing PV holds every volume on
 *    the node. The timeout clock starts only when a live list of the node's pods (quorum read)
 *    finds no holder and no pod it cannot parse, and the same list is taken again before the
 *    delete; a holder there stops the clock.
 */
import { podKey, type Node, type PersistentVolume, type PersistentVolumeClaim, type Pod, type VolumeAttachment } from '../kube/objects.js';
import type { Logger } from '../log/logger.js';
import { WorkQueue } from '../kube/workqueue.js';
import type { AttachDetachMetrics, ForcedDetachReasonLabel } from '../metrics/registry.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import { noteLiveReadFailure } from '../kube/reads.js';
import { isNotCalledFor } from '../kube/throttle.js';
import { steadyClock, type Clock, type TimerHandle } from '../util/clock.js';
import { decideForceDetach, FORCE_DETACH_EVENT_REASONS, nextReleasedAt, volumeHolders, type ForceDetachDecision } from './decision.js';
import type { ForceDetachWriter, LivePodsOnNode } from './writer.js';

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
  pvs: { get(name: string): PersistentVolume | undefined };
}

/** The live reads and the write the controller makes (implemented by {@link ForceDetachWriter}). */
export type ForceDetachWrites = Pick<ForceDetachWriter, 'getNode' | 'getVolumeAttachment' | 'listPodsOnNode' | 'deleteVolumeAttachment'>;

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
  /** Attachments whose volume no pod holds any more, with the time the timeout path would act. */
  released: { volumeAttachment: string; node: string; persistentVolume: string; releasedAt: number; timeoutAt?: number }[];
  queued: number;
  /** Nodes the controller remembers (scoping rule); attachments with a timeout clock are in `released`. */
  trackedNodes: number;
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
  /** VolumeAttachment name → epoch ms since when no pod has held its volume (see {@link nextReleasedAt}). */
  readonly #releasedAt = new Map<string, number>();
  /**
   * Nodes seen in the cache (scoping rule for attachments whose node is gone). A node leaves the set
   * once it is out of the cache and no attachment on it remains, so node churn does not grow it.
   */
  readonly #seen = new Set<string>();
  #resyncTimer: TimerHandle | undefined;
  #stopped = true;

  /** @param deps injected caches, writer, events, metrics, clock and logger. Never throws. */
  constructor(deps: ForceDetachDeps) {
    // The timeout counts from when this process saw the volume released (upstream: time.Since on
    // the monotonic clock), so it reads a clock that a forward NTP step cannot move ahead.
    this.#d = { ...deps, clock: steadyClock(deps.clock) };
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

  /**
   * Queues every cached attachment now and schedules the next resync. Also drops per-attachment and
   * per-node state whose object is gone (in case a delete event was missed).
   */
  resync(): void {
    if (this.#stopped) return;
    const vas = this.#d.caches.volumeAttachments;
    for (const name of [...this.#releasedAt.keys()]) if (!vas.get(name)) this.#releasedAt.delete(name);
    for (const node of [...this.#seen]) this.#forgetNodeIfUnused(node);
    for (const va of vas.list()) this.#queue.add(va.name);
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
    this.#forgetNodeIfUnused(node.name); // deleted (the cache no longer has it) with no attachment left
  }

  /** A pod was added, updated or deleted: if it names a volume that may be attached, the attachments on its node are looked at again. */
  podChanged(pod: Pick<Pod, 'nodeName' | 'pvcNames' | 'ephemeralClaimNames' | 'inlineVolumeDrivers'>): void {
    const names = pod.pvcNames.length + (pod.ephemeralClaimNames?.length ?? 0) + (pod.inlineVolumeDrivers?.length ?? 0);
    if (pod.nodeName !== '' && names > 0) this.#queueNode(pod.nodeName);
  }

  /** A VolumeAttachment was added or updated. */
  volumeAttachmentChanged(va: Pick<VolumeAttachment, 'name'>): void {
    if (!this.#stopped) this.#queue.add(va.name);
  }

  /** A VolumeAttachment was deleted: forget it (and its node, if that is gone with nothing left on it). */
  volumeAttachmentDeleted(va: Pick<VolumeAttachment, 'name' | 'nodeName'>): void {
    this.#releasedAt.delete(va.name);
    this.#forgetNodeIfUnused(va.nodeName);
  }

  #forgetNodeIfUnused(nodeName: string): void {
    if (!this.#d.caches.nodes.get(nodeName) && this.#d.caches.volumeAttachments.onNode(nodeName).length === 0) this.#seen.delete(nodeName);
  }

  #queueNode(nodeName: string): void {
    if (this.#stopped) return;
    for (const va of this.#d.caches.volumeAttachments.onNode(nodeName)) this.#queue.add(va.name);
  }

  // ---------------------------------------------------------------------------------------------
  // The decision and the delete.
  // ---------------------------------------------------------------------------------------------

  /**
   * Fail closed: a claim that is missing, unbound, not controlled by `ownerUid` (a generic ephemeral
   * volume's claim must be its pod's), or bound to a PV missing from the cache resolves to nothing,
   * which counts as holding every volume on the node.
   */
  #resolveClaim = (namespace: string, claim: string, ownerUid?: string): string | undefined => {
    const pvc = this.#d.caches.pvcs.get(`${namespace}/${claim}`);
    if (!pvc?.volumeName) return undefined;
    if (ownerUid !== undefined && pvc.controllerUid !== ownerUid) return undefined;
    return this.#d.caches.pvs.get(pvc.volumeName)?.name;
  };

  #holders(va: VolumeAttachment, pvName: string, pods: readonly Pod[]): Pod[] {
    return volumeHolders(pods, va.nodeName, { pvName, attacher: va.attacher }, this.#resolveClaim);
  }

  #decide(node: Node | undefined, holders: readonly Pod[], releasedAt: number | undefined): ForceDetachDecision {
    return decideForceDetach({
      node,
      holders,
      releasedAt,
      nowMs: this.#d.clock.now(),
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
    if (pvName === undefined) return; // inline volume spec: no claim can be followed to it, so it is never force-detached
    const cachedNode = this.#d.caches.nodes.get(va.nodeName);
    // Deliberate difference 4: a scoped controller leaves nodes outside its selector alone.
    if (!cachedNode && this.#d.config.scoped && !this.#seen.has(va.nodeName)) return;
    if (!this.#d.canSeeCluster()) {
      this.#queue.addAfter(name, BLIND_RETRY_MS);
      return;
    }
    const cachedHolders = this.#holders(va, pvName, this.#d.caches.pods.podsOnNode(va.nodeName));
    if (cachedHolders.length > 0) {
      this.#releasedAt.delete(name); // the clock never runs while a pod holds the volume
      return;
    }
    // Deliberate difference 7: the clock starts only on a live list of the node's pods that finds
    // no holder; once it runs, the cache alone may keep the volume, never detach it.
    const releasedAt = this.#releasedAt.get(name);
    if (releasedAt !== undefined) {
      const first = this.#decide(cachedNode, cachedHolders, releasedAt);
      if (first.action === 'keep') {
        this.#keep(name, first);
        return;
      }
    }
    // Deliberate difference 1: decide again on the node, the attachment and the node's pods as the
    // API has them now. Deliberate difference 6: only a 404 is "gone"; any other answer throws, is
    // counted, and the work queue retries with backoff (a node read as gone would otherwise allow
    // the timeout path).
    let liveNode: Node | undefined;
    let liveVa: VolumeAttachment | undefined;
    let livePods: LivePodsOnNode;
    try {
      [liveNode, liveVa, livePods] = await Promise.all([
        this.#d.writes.getNode(va.nodeName),
        this.#d.writes.getVolumeAttachment(name),
        this.#d.writes.listPodsOnNode(va.nodeName),
      ]);
    } catch (err) {
      noteLiveReadFailure(err, this.#d.metrics.liveReadFailuresTotal, this.#d.log, 'force-detaching');
      throw err;
    }
    if (this.#stopped || !liveVa || liveVa.uid !== va.uid || liveVa.deletionTimestamp !== undefined) return;
    const liveHolders = this.#holders(liveVa, pvName, livePods.pods);
    if (liveHolders.length > 0 || livePods.unparsable > 0) {
      // A pod the cache has not caught up with, or one no converter could read, holds the volume.
      // Nothing tells this controller when that changes, so the periodic resync looks again.
      this.#releasedAt.delete(name);
      const why = liveHolders.length > 0 ? `pod ${podKey(liveHolders[0] as Pod)} holds it (live list)` : `${livePods.unparsable} pod(s) on the node cannot be parsed`;
      this.#d.log.info({ volumeAttachment: name, node: va.nodeName, why }, 'Live re-check: not force-detaching');
      return;
    }
    const clock = nextReleasedAt(releasedAt, liveHolders, this.#d.clock.now()) ?? this.#d.clock.now();
    this.#releasedAt.set(name, clock);
    const second = this.#decide(liveNode, liveHolders, clock);
    if (second.action === 'keep') {
      if (releasedAt !== undefined) this.#d.log.info({ volumeAttachment: name, node: va.nodeName, why: second.why }, 'Live re-check: not force-detaching');
      this.#keep(name, second);
      return;
    }
    let result: 'deleted' | 'gone';
    try {
      result = await this.#d.writes.deleteVolumeAttachment(name, va.uid, () => this.#stillDetaches(name, va.uid, pvName, clock));
    } catch (err) {
      if (!isNotCalledFor(err)) throw err;
      // Decided again when its turn came and no longer called for: not retried here; the resync
      // and the cache's events queue the attachment again.
      this.#d.log.info({ volumeAttachment: name, node: va.nodeName, why: err.reason }, 'Force detach not sent: no longer called for when its turn came');
      return;
    }
    if (result !== 'deleted') {
      // 404 or a uid conflict: someone else deleted or replaced it, so this was not our detach.
      this.#d.log.debug({ volumeAttachment: name, node: va.nodeName }, 'VolumeAttachment already gone: not counted as a forced detach');
      return;
    }
    // Typed so that a reason the decision adds without a label value in the registry fails to compile.
    const reason: ForcedDetachReasonLabel = second.reason;
    this.#d.metrics.forcedDetaches.inc({ reason });
    this.#recordDetach(liveVa, pvName, second.reason, liveNode?.uid ?? cachedNode?.uid ?? '');
  }

  /**
   * A force detach decided again, from the caches, right before its DELETE is sent
   * (src/kube/throttle.ts `WriteRecheck`, issue 53 item 4): the controller runs and sees the
   * cluster, the attachment (same UID) is cached and not deleting, no cached pod holds the volume,
   * and the node as cached still calls for the detach. The live reads stay the decision that
   * counts; this only withholds a DELETE whose wait for its turn outlived it (deliberate
   * difference from upstream, which sends on the decision taken before the client's rate-limiter
   * wait: it can only withhold or delay a detach).
   * @param releasedAt when no pod has held the volume since (epoch ms).
   * @returns why the detach is no longer called for, or `undefined`.
   */
  #stillDetaches(name: string, uid: string, pvName: string, releasedAt: number): string | undefined {
    if (this.#stopped) return 'the controller stopped';
    if (!this.#d.canSeeCluster()) return 'the controller cannot see the cluster';
    const va = this.#d.caches.volumeAttachments.get(name);
    if (!va || va.uid !== uid || va.deletionTimestamp !== undefined) return 'the VolumeAttachment is gone or already detaching';
    const holders = this.#holders(va, pvName, this.#d.caches.pods.podsOnNode(va.nodeName));
    if (holders.length > 0) return `pod ${podKey(holders[0] as Pod)} holds the volume`;
    const d = this.#decide(this.#d.caches.nodes.get(va.nodeName), holders, releasedAt);
    return d.action === 'keep' ? d.why : undefined;
  }

  #keep(name: string, d: Extract<ForceDetachDecision, { action: 'keep' }>): void {
    if (d.recheckAtMs !== undefined) this.#queue.addAfter(name, d.recheckAtMs - this.#d.clock.now());
  }

  #recordDetach(va: VolumeAttachment, pvName: string, reason: 'out-of-service' | 'timeout', nodeUid: string): void {
    const timeout = this.#d.config.forceDetachTimeoutMs;
    const why =
      reason === 'out-of-service'
        ? 'node is out of service (not Ready and tainted node.kubernetes.io/out-of-service) and no pod holds the volume (every user pod is gone or terminated)'
        : `node is not Ready and no pod has held the volume for ${timeout / 1000}s (--force-detach-timeout; every user pod is gone or terminated)`;
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
      if (!this.#d.config.disableForceDetachOnTimeout) entry.timeoutAt = releasedAt + this.#d.config.forceDetachTimeoutMs + 1;
      released.push(entry);
    }
    return { released, queued: this.#queue.len + this.#queue.stats().delayed, trackedNodes: this.#seen.size };
  }
}

