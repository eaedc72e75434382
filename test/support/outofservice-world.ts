/**
 * The out-of-service controllers' unit-test world: object builders, in-memory caches, an event
 * sink, and the PodGC and force-detach shells (src/podgc/controller.ts, src/volumes/controller.ts)
 * wired to recording doubles of their `PodGCWrites` / `ForceDetachWrites` and driven by
 * `FakeClock`. Shared by test/unit/outofservice.test.ts and the upstream ports
 * test/unit/upstream-podgc.test.ts and test/unit/upstream-attachdetach.test.ts.
 * Times are epoch **milliseconds**.
 */
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, PodCondition, Taint, VolumeAttachment } from '../../src/kube/objects.js';
import type { LivePodsOnNode } from '../../src/volumes/writer.js';
import { createMetrics, type Metrics } from '../../src/metrics/registry.js';
import type { EventObjectRef, EventSink } from '../../src/kube/types.js';
import { ORPHAN_QUARANTINE_MS } from '../../src/podgc/decision.js';
import { PodGCController, type PodGCWrites } from '../../src/podgc/controller.js';
import type { ForceDeleteRecheck, ForceDeleteResult } from '../../src/podgc/writer.js';
import { ForceDetachController, type ForceDetachWrites } from '../../src/volumes/controller.js';
import { silentLogger } from '../../src/log/logger.js';

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

export interface RecordedEvent {
  ref: EventObjectRef;
  type: string;
  reason: string;
  message: string;
}

export class Events implements EventSink {
  readonly list: RecordedEvent[] = [];
  record(ref: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.list.push({ ref, type, reason, message });
  }
}

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

/** The API as the PodGC controller sees it: live nodes and pods, and a record of force deletes. */
export class FakePodGCApi implements PodGCWrites {
  readonly nodes = new Map<string, Node>();
  readonly pods = new Map<string, Pod>();
  readonly deleted: { key: string; condition: PodCondition }[] = [];
  readonly nodeGets: string[] = [];
  failures = 0;

  async getNode(name: string): Promise<Node | undefined> {
    this.nodeGets.push(name);
    return this.nodes.get(name);
  }

  async forceDeletePod(namespace: string, name: string, uid: string, recheck: ForceDeleteRecheck): Promise<ForceDeleteResult> {
    const key = `${namespace}/${name}`;
    const live = this.pods.get(key);
    if (!live || live.uid !== uid) return 'gone';
    const condition = await recheck(live);
    if (!condition) return 'skipped';
    if (this.failures > 0) {
      this.failures--;
      throw new ApiException(500, 'InternalError', '{"reason":"InternalError"}', {});
    }
    this.deleted.push({ key, condition });
    this.pods.delete(key);
    return 'deleted';
  }
}

export class PodGCHarness {
  readonly clock = new FakeClock(T0);
  readonly nodes = new Store<Node>();
  readonly pods = new PodStore();
  readonly api = new FakePodGCApi();
  readonly events = new Events();
  readonly metrics = createMetrics({ defaultMetrics: false });
  readonly gc: PodGCController;

  constructor(o: { quarantineMs?: number; scoped?: boolean } = {}) {
    this.gc = new PodGCController({
      config: { orphanQuarantineMs: o.quarantineMs ?? ORPHAN_QUARANTINE_MS, sweepPeriodMs: 20_000, scoped: o.scoped ?? false },
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

export class FakeDetachApi implements ForceDetachWrites {
  readonly nodes = new Map<string, Node>();
  readonly vas = new Map<string, VolumeAttachment>();
  readonly deleted: string[] = [];
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
  async getNode(name: string): Promise<Node | undefined> {
    return this.nodes.get(name);
  }
  async getVolumeAttachment(name: string): Promise<VolumeAttachment | undefined> {
    return this.vas.get(name);
  }
  async deleteVolumeAttachment(name: string, uid: string): Promise<'deleted' | 'gone'> {
    if (this.vas.get(name)?.uid !== uid) return 'gone';
    this.vas.delete(name);
    this.deleted.push(name);
    return 'deleted';
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
  readonly api = new FakeDetachApi();
  readonly events = new Events();
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
