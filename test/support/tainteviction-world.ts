/**
 * The taint eviction controller's unit-test world: the shared in-memory cluster
 * (src/inmemory/cluster.ts) whose node and pod maps are the caches, its recording writer
 * (src/inmemory/writer.ts) as the `TaintEvictionWrites` double, an event sink, metrics, and the
 * `FakeClock` that drives src/tainteviction/controller.ts. Shared by
 * test/unit/tainteviction-controller.test.ts and test/unit/upstream-tainteviction.test.ts.
 * Times are epoch **milliseconds**.
 */
import type { TestContext } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { podKey, type Node, type Pod, type Taint, type Toleration } from '../../src/kube/objects.js';
import type { EventSink } from '../../src/kube/types.js';
import { createMetrics, type TaintEvictionMetrics } from '../../src/metrics/registry.js';
import {
  TaintEvictionController,
  type TaintEvictionCaches,
  type TaintEvictionOptions,
  type TaintEvictionWrites,
} from '../../src/tainteviction/controller.js';
import { InMemoryCluster } from '../../src/inmemory/cluster.js';
import { RecordingEventSink, type RecordedEvent } from '../../src/inmemory/events.js';
import type { RecordedWrite } from '../../src/inmemory/writer.js';

export type { RecordedEvent } from '../../src/inmemory/events.js';

export const START = Date.UTC(2026, 2, 1, 12);
export const NS = 'default';

/** A recorded write (`kind` 'condition' or 'delete', `target` the pod's `namespace/name`). */
export type Recorded = RecordedWrite;

/**
 * What the taint eviction controller is built from: the same inputs a registry descriptor's
 * `build(ctx)` takes (caches, writes, events, clock, metrics, config).
 */
export interface TaintEvictionBuildInputs {
  caches: TaintEvictionCaches;
  writes: TaintEvictionWrites;
  events: EventSink;
  clock: FakeClock;
  metrics: TaintEvictionMetrics;
  config: TaintEvictionOptions;
}

/** An in-memory cluster: node and pod caches, a recording writes double, an event sink. */
export class World {
  readonly clock = new FakeClock(START);
  /** The shared in-memory cluster: its maps are the informers' caches and the API's objects. */
  readonly cluster = InMemoryCluster.empty(this.clock);
  readonly nodes: Map<string, Node> = this.cluster.nodes;
  readonly pods: Map<string, Pod> = this.cluster.pods;
  readonly eventSink = new RecordingEventSink(this.clock);
  readonly events: RecordedEvent[] = this.eventSink.list;
  readonly metrics: TaintEvictionMetrics = createMetrics({ defaultMetrics: false }).taintEviction;
  sight = true;
  /** Errors thrown by the next `addDisruptionCondition` calls, in order. */
  failures: unknown[] = [];
  /**
   * Pod keys (`ns/name`) whose DELETE always throws `deniedError` (an admission policy or webhook
   * denying us); their condition writes succeed, as the API server's status subresource would.
   */
  readonly denyDelete = new Set<string>();
  /** DELETE calls per pod key, including denied ones. */
  readonly deleteCalls = new Map<string, number>();
  readonly writesDouble: TaintEvictionWrites = this.cluster.writer.taintEvictionWrites();
  #controllers: TaintEvictionController[] = [];
  #uid = 0;

  constructor() {
    this.cluster.writer.fail = (call) => {
      if (call.method === 'addDisruptionCondition') return this.failures.shift();
      if (call.method !== 'deletePod') return undefined;
      this.deleteCalls.set(call.target, (this.deleteCalls.get(call.target) ?? 0) + 1);
      return this.denyDelete.has(call.target) ? deniedError() : undefined;
    };
    // As src/whatif/run.ts subscribes the controller; every controller built over this world hears.
    this.cluster.on('nodes', {
      add: (n) => this.#each((c) => c.nodeChanged(n)),
      update: (o, n) => this.#each((c) => c.nodeChanged(n, o)),
      delete: (n) => this.#each((c) => c.nodeDeleted(n)),
    });
    this.cluster.on('pods', {
      add: (p) => this.#each((c) => c.podChanged(p)),
      update: (o, p) => this.#each((c) => c.podChanged(p, o)),
      delete: (p) => this.#each((c) => c.podDeleted(p)),
    });
  }

  /** The writes that landed, in order (failed attempts are in {@link attempts} only). */
  get writes(): Recorded[] {
    return this.cluster.writer.writes.filter((x) => !x.failed);
  }

  /** When each `addDisruptionCondition` call was made (epoch ms), failed ones included. */
  get attempts(): number[] {
    return this.cluster.writer.calls.filter((c) => c.method === 'addDisruptionCondition').map((c) => c.atMs);
  }

  /** The controller's inputs over this world (what a registry descriptor's `build(ctx)` receives). */
  buildInputs(options: TaintEvictionOptions = {}): TaintEvictionBuildInputs {
    const c = this.cluster;
    return {
      caches: {
        nodes: { get: (k) => c.nodes.get(k), list: () => c.nodeList() },
        pods: { get: (k) => c.pods.get(k), list: () => c.podList(), podsOnNode: (n) => c.podsOnNode(n) },
      },
      writes: this.writesDouble,
      events: this.eventSink,
      clock: this.clock,
      metrics: this.metrics,
      config: { retryInitialDelayMs: 100, retryMaxDelayMs: 1600, ...options },
    };
  }

  controller(options: TaintEvictionOptions = {}): TaintEvictionController {
    const { caches, writes, events, clock, metrics, config } = this.buildInputs(options);
    const c = new TaintEvictionController({ clock, log: silentLogger, caches, writes, events, metrics, canSeeCluster: () => this.sight, options: config });
    this.#controllers.push(c);
    return c;
  }

  #each(f: (c: TaintEvictionController) => void): void {
    for (const c of this.#controllers) f(c);
  }

  /** Adds or updates a node, notifying the controllers like the informer does. */
  putNode(name: string, taints: Taint[]): void {
    const old = this.nodes.get(name);
    const node: Node = {
      name,
      uid: old?.uid ?? `node-uid-${name}`,
      resourceVersion: '0',
      creationTimestamp: START - 3_600_000,
      labels: {},
      unschedulable: false,
      taints,
      conditions: [],
    };
    this.cluster.putNode(node, { sync: true });
  }

  deleteNode(name: string): void {
    this.cluster.removeNode(name, { sync: true });
  }

  /**
   * Adds or updates a pod (a new UID unless `uid` is given and the pod exists). `fields` overrides
   * any other field (e.g. `creationTimestamp`, `conditions`).
   */
  putPod(name: string, nodeName: string, tolerations: Toleration[] = [], uid?: string, fields: Partial<Pod> = {}): Pod {
    const key = podKey({ namespace: NS, name });
    const old = this.pods.get(key);
    const pod: Pod = {
      namespace: NS,
      name,
      uid: uid ?? old?.uid ?? `pod-uid-${++this.#uid}`,
      resourceVersion: '0',
      nodeName,
      phase: 'Running',
      creationTimestamp: START - 600_000,
      conditions: [{ type: 'Ready', status: 'True' }],
      tolerations,
      ownerReferences: [],
      pvcNames: [],
      finalizers: [],
      ...fields,
    };
    return this.cluster.putPod(pod, { sync: true });
  }

  /**
   * The informers lose or regain their watch streams: `canSeeCluster()` flips, and each controller
   * hears of it synchronously, as the `watching` informer event delivers it in src/cli/run.ts.
   */
  setSight(on: boolean): void {
    this.sight = on;
    for (const c of this.#controllers) c.sightChanged();
  }

  removePod(name: string): void {
    this.cluster.removePod(podKey({ namespace: NS, name }), { sync: true });
  }

  deletedPods(): string[] {
    return this.writes.filter((w) => w.kind === 'delete').map((w) => w.target);
  }

  deletionTimes(name: string): number[] {
    return this.writes.filter((w) => w.kind === 'delete' && w.target === `${NS}/${name}`).map((w) => w.atMs - START);
  }

  messages(): string[] {
    return this.events.map((e) => e.message);
  }

  async settle(ms = 0): Promise<void> {
    await this.clock.advanceAsync(ms);
  }
}

/** upstream createNoExecuteTaint(i), stamped `timeAdded` (default: START). */
export function taint(i: number, timeAdded = START): Taint {
  return { ...untimedTaint(i), timeAdded };
}

/** The same taint without `timeAdded` (as some tools write them). */
export function untimedTaint(i: number): Taint {
  return { key: `testTaint${i}`, value: `test${i}`, effect: 'NoExecute' };
}

/** upstream addToleration(pod, i, d): seconds < 0 means forever. */
export function tol(i: number, seconds: number): Toleration {
  return { key: `testTaint${i}`, operator: 'Equal', value: `test${i}`, effect: 'NoExecute', ...(seconds >= 0 ? { tolerationSeconds: seconds } : {}) };
}

export async function metricValue(m: { get(): Promise<{ values: { value: number; metricName?: string }[] }> }, suffix = ''): Promise<number> {
  const got = await m.get();
  const v = suffix ? got.values.find((x) => x.metricName?.endsWith(suffix)) : got.values[0];
  return v?.value ?? 0;
}

/** What a ValidatingAdmissionPolicy denial looks like to a client: 422 Invalid. */
export const deniedError = (): ApiException<string> =>
  new ApiException(422, 'Invalid', '{"reason":"Invalid","message":"ValidatingAdmissionPolicy \'deny\' denied request"}', {});

export const serverError = (): ApiException<string> => new ApiException(500, 'Internal', '{"reason":"InternalError"}', {});

/** A world with a started controller, stopped when the test ends. */
export function started(t: TestContext, options: TaintEvictionOptions = {}, setup?: (w: World) => void): { w: World; ctl: TaintEvictionController } {
  const w = new World();
  setup?.(w);
  const ctl = w.controller(options);
  ctl.start();
  t.after(() => ctl.stop());
  return { w, ctl };
}

/** {@link started}, plus node1 tainted with testTaint1 (timeAdded START) and pod1 on it with `tolerations`. */
export function podOnTaintedNode(t: TestContext, tolerations: Toleration[] = [], setup?: (w: World) => void): { w: World; ctl: TaintEvictionController } {
  const started_ = started(t, {}, setup);
  started_.w.putNode('node1', [taint(1)]);
  started_.w.putPod('pod1', 'node1', tolerations);
  return started_;
}
