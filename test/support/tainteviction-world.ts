/**
 * The taint eviction controller's unit-test world: node and pod caches in memory, a recording
 * `TaintEvictionWrites` double, an event sink, metrics, and the `FakeClock` that drives
 * src/tainteviction/controller.ts. Shared by test/unit/tainteviction-controller.test.ts and
 * test/unit/upstream-tainteviction.test.ts. Times are epoch **milliseconds**.
 */
import type { TestContext } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { podKey, type Node, type Pod, type Taint, type Toleration } from '../../src/kube/objects.js';
import { createMetrics, type TaintEvictionMetrics } from '../../src/metrics/registry.js';
import {
  TaintEvictionController,
  type TaintEvictionOptions,
  type TaintEvictionWrites,
} from '../../src/tainteviction/controller.js';
import type { EventObjectRef } from '../../src/kube/types.js';

export const START = Date.UTC(2026, 2, 1, 12);
export const NS = 'default';

export interface Recorded {
  kind: 'condition' | 'delete';
  pod: string;
  uid: string;
  atMs: number;
}

export interface RecordedEvent {
  ref: EventObjectRef;
  type: string;
  reason: string;
  message: string;
  atMs: number;
}

/** An in-memory cluster: node and pod caches, a recording writes double, an event sink. */
export class World {
  readonly clock = new FakeClock(START);
  readonly nodes = new Map<string, Node>();
  readonly pods = new Map<string, Pod>();
  readonly writes: Recorded[] = [];
  readonly attempts: number[] = [];
  readonly events: RecordedEvent[] = [];
  readonly metrics: TaintEvictionMetrics = createMetrics({ defaultMetrics: false }).taintEviction;
  sight = true;
  /** Errors thrown by the next write calls, in order. */
  failures: unknown[] = [];
  /**
   * Pod keys (`ns/name`) whose DELETE always throws `deniedError` (an admission policy or webhook
   * denying us); their condition writes succeed, as the API server's status subresource would.
   */
  readonly denyDelete = new Set<string>();
  /** DELETE calls per pod key, including denied ones. */
  readonly deleteCalls = new Map<string, number>();
  #controllers: TaintEvictionController[] = [];
  #uid = 0;

  readonly writesDouble: TaintEvictionWrites = {
    addDisruptionCondition: async (namespace, name, uid) => {
      this.attempts.push(this.clock.now());
      const failure = this.failures.shift();
      if (failure !== undefined) throw failure;
      const pod = this.pods.get(podKey({ namespace, name }));
      if (!pod || pod.uid !== uid) return 'gone';
      this.writes.push({ kind: 'condition', pod: `${namespace}/${name}`, uid, atMs: this.clock.now() });
      return 'written';
    },
    deletePod: async (namespace, name, uid) => {
      const key = podKey({ namespace, name });
      this.deleteCalls.set(key, (this.deleteCalls.get(key) ?? 0) + 1);
      if (this.denyDelete.has(key)) throw deniedError();
      const pod = this.pods.get(podKey({ namespace, name }));
      if (!pod || pod.uid !== uid) return 'gone';
      this.writes.push({ kind: 'delete', pod: `${namespace}/${name}`, uid, atMs: this.clock.now() });
      // The API server sets deletionTimestamp; the kubelet's confirmation is not modelled.
      this.pods.set(podKey(pod), {
        ...pod,
        deletionTimestamp: this.clock.now(),
        conditions: [...pod.conditions, { type: 'DisruptionTarget', status: 'True' }],
      });
      return 'deleted';
    },
  };

  controller(options: TaintEvictionOptions = {}): TaintEvictionController {
    const c = new TaintEvictionController({
      clock: this.clock,
      log: silentLogger,
      caches: {
        nodes: { get: (k) => this.nodes.get(k), list: () => [...this.nodes.values()] },
        pods: {
          get: (k) => this.pods.get(k),
          list: () => [...this.pods.values()],
          podsOnNode: (n) => [...this.pods.values()].filter((p) => p.nodeName === n),
        },
      },
      writes: this.writesDouble,
      events: { record: (ref, type, reason, message) => void this.events.push({ ref, type, reason, message, atMs: this.clock.now() }) },
      metrics: this.metrics,
      canSeeCluster: () => this.sight,
      options: { retryInitialDelayMs: 100, retryMaxDelayMs: 1600, ...options },
    });
    this.#controllers.push(c);
    return c;
  }

  /** Adds or updates a node, notifying the controllers like the informer does. */
  putNode(name: string, taints: Taint[]): void {
    const old = this.nodes.get(name);
    const node: Node = {
      name,
      uid: old?.uid ?? `node-uid-${name}`,
      resourceVersion: String(++this.#uid),
      creationTimestamp: START - 3_600_000,
      labels: {},
      unschedulable: false,
      taints,
      conditions: [],
    };
    this.nodes.set(name, node);
    for (const c of this.#controllers) c.nodeChanged(node, old);
  }

  deleteNode(name: string): void {
    const old = this.nodes.get(name);
    this.nodes.delete(name);
    if (old) for (const c of this.#controllers) c.nodeDeleted(old);
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
      resourceVersion: String(++this.#uid),
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
    this.pods.set(key, pod);
    for (const c of this.#controllers) c.podChanged(pod, old);
    return pod;
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
    const key = podKey({ namespace: NS, name });
    const old = this.pods.get(key);
    this.pods.delete(key);
    if (old) for (const c of this.#controllers) c.podDeleted(old);
  }

  deletedPods(): string[] {
    return this.writes.filter((w) => w.kind === 'delete').map((w) => w.pod);
  }

  deletionTimes(name: string): number[] {
    return this.writes.filter((w) => w.kind === 'delete' && w.pod === `${NS}/${name}`).map((w) => w.atMs - START);
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
