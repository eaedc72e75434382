/**
 * The out-of-service controllers' unit-test world: object builders, in-memory caches, an event
 * sink, and the PodGC and force-detach shells (src/podgc/controller.ts, src/volumes/controller.ts)
 * wired to the recording writer (src/inmemory/writer.ts) of a shared in-memory cluster
 * (src/inmemory/cluster.ts) that stands for the API server, and driven by `FakeClock`. The caches
 * are separate stores here, so a test can let the API and the caches disagree. Shared by test/unit/outofservice.test.ts and the upstream ports
 * test/unit/upstream-podgc.test.ts and test/unit/upstream-attachdetach.test.ts.
 * Times are epoch **milliseconds**.
 */
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, PodCondition, Taint, VolumeAttachment } from '../../src/kube/objects.js';
import type { LivePodsOnNode } from '../../src/volumes/writer.js';
import { createMetrics, type Metrics } from '../../src/metrics/registry.js';
import { ORPHAN_QUARANTINE_MS, DEFAULT_TERMINATED_POD_GC_THRESHOLD } from '../../src/podgc/decision.js';
import { PodGCController, type PodGCWrites } from '../../src/podgc/controller.js';
import type { ForceDeleteRecheck, ForceDeleteResult } from '../../src/podgc/writer.js';
import type { WriteRecheck } from '../../src/kube/throttle.js';
import { ForceDetachController, type ForceDetachWrites } from '../../src/volumes/controller.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Clock } from '../../src/util/clock.js';
import { InMemoryCluster } from '../../src/inmemory/cluster.js';
import { RecordingEventSink } from '../../src/inmemory/events.js';

export type { RecordedEvent } from '../../src/inmemory/events.js';

export const T0 = Date.UTC(2026, 0, 1);
export const OOS = 'node.kubernetes.io/out-of-service';

export function node(name: string, ready: 'True' | 'False' | 'Unknown' | undefined, taints: Taint[] = []): Node {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: T0 - 3_600_000,
    labels: {},
    unschedulable: false,
    taints,
    conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }],
  };
}

export function pod(name: string, nodeName: string, o: Partial<Pod> = {}): Pod {
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    nodeName,
    phase: 'Running',
    creationTimestamp: T0 - 60_000,
    conditions: [{ type: 'Ready', status: 'True' }],
    tolerations: [],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
    ...o,
  };
}

/**
 * A pod gracefully deleted at `requestMs` with a 30 s grace period, as the API server stores it:
 * deletionTimestamp = request + 30 s, truncated to whole seconds.
 */
export const terminating = (requestMs: number): Partial<Pod> => ({
  deletionTimestamp: Math.floor((requestMs + 30_000) / 1000) * 1000,
  deletionGracePeriodSeconds: 30,
  containersNotRunning: false,
});

/** A pod deleted at `requestMs` whose containers have all been reported terminated (upstream `IsPodTerminated`). */
export const terminated = (requestMs: number): Partial<Pod> => ({ ...terminating(requestMs), containersNotRunning: true });

export class Store<T extends { name: string; namespace?: string }> {
  readonly m = new Map<string, T>();
  key = (o: T): string => (o.namespace !== undefined ? `${o.namespace}/${o.name}` : o.name);
  put(o: T): void {
    this.m.set(this.key(o), o);
  }
  del(o: T): void {
    this.m.delete(this.key(o));
  }
  get = (k: string): T | undefined => this.m.get(k);
  list = (): T[] => [...this.m.values()];
}

export class PodStore extends Store<Pod> {
  podsOnNode = (n: string): Pod[] => this.list().filter((p) => p.nodeName === n);
}

/** The recording event sink (`list` holds the Events); construct with the harness's clock. */
export { RecordingEventSink as Events };

/** Lets queued work, promise chains and due timers run. */
export async function settle(clock: FakeClock, ms = 0): Promise<void> {
  await clock.advanceAsync(ms);
  for (let i = 0; i < 5; i++) await clock.advanceAsync(0);
}

export async function counter(m: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = m.registry.getSingleMetric(name);
  assert.ok(metric, name);
  const got = await metric.get();
  const v = got.values.find((s) => Object.entries(labels).every(([k, val]) => (s.labels as Record<string, unknown>)[k] === val));
  return v?.value ?? 0;
}

export const TIMEOUT = 360_000;

/**
 * The API as the PodGC controller sees it: an in-memory cluster's live nodes and pods, and its
 * recording writer's force deletes. `failures`: how many force deletions fail next (HTTP 500),
 * each after its recheck.
 */
export class FakePodGCApi implements PodGCWrites {
  readonly cluster: InMemoryCluster;
  readonly nodes: Map<string, Node>;
  readonly pods: Map<string, Pod>;
  failures = 0;
  readonly #writes: PodGCWrites;

  /** @param clock the harness's clock. */
  constructor(clock: Clock) {
    this.cluster = InMemoryCluster.empty(clock);
    this.nodes = this.cluster.nodes;
    this.pods = this.cluster.pods;
    this.cluster.writer.fail = (call) => {
      if (call.method !== 'forceDeletePod' || this.failures <= 0) return undefined;
      this.failures--;
      return new ApiException(500, 'InternalError', '{"reason":"InternalError"}', {});
    };
    this.#writes = this.cluster.writer.podGCWrites();
  }

  /**
   * The force deletions that landed, in order: `namespace/name`, and the DisruptionTarget condition
   * of the `Failed` patch when it carried one (orphans only, as upstream).
   */
  get deleted(): { key: string; condition?: PodCondition }[] {
    return this.cluster.writer.writes.flatMap((w) => (w.kind === 'forceDelete' && !w.failed ? [{ key: w.target, ...(w.condition ? { condition: w.condition } : {}) }] : []));
  }

  /** The node names read live, in order. */
  get nodeGets(): string[] {
    return this.cluster.writer.calls.filter((c) => c.method === 'getNode').map((c) => c.target);
  }

  getNode(name: string): Promise<Node | undefined> {
    return this.#writes.getNode(name);
  }

  forceDeletePod(namespace: string, name: string, uid: string, recheck: ForceDeleteRecheck, sendCheck?: WriteRecheck): Promise<ForceDeleteResult> {
    return this.#writes.forceDeletePod(namespace, name, uid, recheck, sendCheck);
  }
}

export class PodGCHarness {
  readonly clock = new FakeClock(T0);
  readonly nodes = new Store<Node>();
  readonly pods = new PodStore();
  readonly api = new FakePodGCApi(this.clock);
  readonly events = new RecordingEventSink(this.clock);
  readonly metrics = createMetrics({ defaultMetrics: false });
  readonly gc: PodGCController;

  constructor(o: { quarantineMs?: number; scoped?: boolean; terminatedPodThreshold?: number } = {}) {
    this.gc = new PodGCController({
      config: {
        orphanQuarantineMs: o.quarantineMs ?? ORPHAN_QUARANTINE_MS,
        sweepPeriodMs: 20_000,
        scoped: o.scoped ?? false,
        terminatedPodThreshold: o.terminatedPodThreshold ?? DEFAULT_TERMINATED_POD_GC_THRESHOLD,
      },
      clock: this.clock,
      log: silentLogger,
      caches: { nodes: this.nodes, pods: this.pods },
      writes: this.api,
      events: this.events,
      metrics: this.metrics.podGC,
      canSeeCluster: () => true,
    });
  }

  /** A node in both the cache and the API. */
  addNode(n: Node): void {
    this.nodes.put(n);
    this.api.nodes.set(n.name, n);
  }

  /** A pod in both the cache and the API. */
  addPod(p: Pod): void {
    this.pods.put(p);
    this.api.pods.set(`${p.namespace}/${p.name}`, p);
  }

  /** Applies a node change to the cache and the API, then tells the controller (an informer update). */
  updateNode(n: Node): void {
    this.addNode(n);
    this.gc.nodeChanged(n);
  }

  deletedNames(): string[] {
    return this.api.deleted.map((d) => d.key.split('/')[1] as string).sort();
  }
}

/** The API as the force-detach controller sees it: an in-memory cluster's nodes and VolumeAttachments, and its recording writer's deletions. */
export class FakeDetachApi implements ForceDetachWrites {
  readonly cluster: InMemoryCluster;
  readonly nodes: Map<string, Node>;
  readonly vas: Map<string, VolumeAttachment>;
  readonly #writes: ForceDetachWrites;

  /** @param clock the harness's clock. */
  constructor(clock: Clock) {
    this.cluster = InMemoryCluster.empty(clock);
    this.nodes = this.cluster.nodes;
    this.vas = this.cluster.volumeAttachments;
    this.#writes = this.cluster.writer.forceDetachWrites();
  }

  /** The pods the API has on a node (the harness points it at its cache plus {@link DetachHarness.apiOnlyPods}). */
  livePods: (nodeName: string) => Pod[] = () => [];
  /** Pods per node that the API lists but the converter rejects. */
  readonly unparsablePods = new Map<string, number>();
  /** Node of each live pod list, in order. */
  readonly podLists: string[] = [];

  async listPodsOnNode(nodeName: string): Promise<LivePodsOnNode> {
    this.podLists.push(nodeName);
    return { pods: this.livePods(nodeName), unparsable: this.unparsablePods.get(nodeName) ?? 0 };
  }

  /** The VolumeAttachments deleted, by name, in order. */
  get deleted(): string[] {
    return this.cluster.writer.writes.filter((w) => w.kind === 'detach' && !w.failed).map((w) => w.target);
  }

  getNode(name: string): Promise<Node | undefined> {
    return this.#writes.getNode(name);
  }

  getVolumeAttachment(name: string): Promise<VolumeAttachment | undefined> {
    return this.#writes.getVolumeAttachment(name);
  }

  deleteVolumeAttachment(name: string, uid: string, recheck?: WriteRecheck): Promise<'deleted' | 'gone'> {
    return this.#writes.deleteVolumeAttachment(name, uid, recheck);
  }
}

export class DetachHarness {
  readonly clock = new FakeClock(T0);
  readonly nodes = new Store<Node>();
  readonly pods = new PodStore();
  readonly vas = new Store<VolumeAttachment>();
  readonly pvcs = new Store<PersistentVolumeClaim>();
  readonly pvs = new Store<PersistentVolume>();
  /** Pods the API has but the pod cache has not caught up with. */
  readonly apiOnlyPods = new PodStore();
  readonly api = new FakeDetachApi(this.clock);
  readonly events = new RecordingEventSink(this.clock);
  readonly metrics = createMetrics({ defaultMetrics: false });
  readonly fd: ForceDetachController;

  constructor(o: { timeoutMs?: number; disable?: boolean; scoped?: boolean } = {}) {
    this.fd = new ForceDetachController({
      config: { forceDetachTimeoutMs: o.timeoutMs ?? TIMEOUT, disableForceDetachOnTimeout: o.disable ?? false, resyncPeriodMs: 60_000, scoped: o.scoped ?? false },
      clock: this.clock,
      log: silentLogger,
      caches: {
        nodes: this.nodes,
        pods: this.pods,
        volumeAttachments: { get: this.vas.get, list: this.vas.list, onNode: (n) => this.vas.list().filter((v) => v.nodeName === n) },
        pvcs: this.pvcs,
        pvs: this.pvs,
      },
      writes: this.api,
      events: this.events,
      metrics: this.metrics.attachDetach,
      canSeeCluster: () => true,
    });
    this.api.livePods = (n) => [...this.pods.podsOnNode(n), ...this.apiOnlyPods.podsOnNode(n)];
  }

  /** Node `w` with one pod `p` using PV `pv-1` through claim `data-p`, attached by VA `va-1`. */
  setup(ready: 'True' | 'False' | 'Unknown', podOpts: Partial<Pod> = {}): void {
    this.setNode(node('w', ready));
    this.pvcs.put({ namespace: 'default', name: 'data-p', uid: 'uid-pvc', volumeName: 'pv-1' });
    this.pvs.put({ name: 'pv-1', uid: 'uid-pv-1', claimRef: { namespace: 'default', name: 'data-p' } });
    const va: VolumeAttachment = { name: 'va-1', uid: 'uid-va', resourceVersion: '1', attacher: 'csi', nodeName: 'w', persistentVolumeName: 'pv-1', attached: true };
    this.vas.put(va);
    this.api.vas.set(va.name, va);
    this.pods.put(pod('p', 'w', { pvcNames: ['data-p'], ...podOpts }));
  }

  setNode(n: Node): void {
    this.nodes.put(n);
    this.api.nodes.set(n.name, n);
    this.fd.nodeChanged(n);
  }

  setPod(p: Pod): void {
    this.pods.put(p);
    this.fd.podChanged(p);
  }

  deletePod(p: Pod): void {
    this.pods.del(p);
    this.fd.podChanged(p);
  }

  async forced(reason: string): Promise<number> {
    return counter(this.metrics, 'attachdetach_controller_forced_detaches', { reason });
  }
}
