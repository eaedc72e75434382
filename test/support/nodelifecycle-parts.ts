/**
 * Small fakes for testing one part of the node lifecycle controller through the interfaces of
 * src/nodelifecycle/parts.ts: a map-backed cache, a recording EventSink, a settable health reader
 * and node/pod builders. A test builds one part from its deps slice and these, and drives it
 * directly; no controller, no other part.
 */
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import type { Node, NodeCondition, Pod } from '../../src/kube/objects.js';
import type { EventObjectRef, EventSink, ReadStore } from '../../src/kube/types.js';
import { createMetrics, type NodeCollectorMetrics } from '../../src/metrics/registry.js';
import type { NodeHealth } from '../../src/nodelifecycle/health.js';
import type { NodeHealthReader } from '../../src/nodelifecycle/parts.js';

export const T0 = Date.UTC(2026, 2, 1, 12);

/** A cache keyed by name (nodes) or `ns/name` (pods). */
export class MapStore<T extends { name: string; namespace?: string }> implements ReadStore<T> {
  readonly items = new Map<string, T>();
  set(o: T): void {
    this.items.set(o.namespace !== undefined ? `${o.namespace}/${o.name}` : o.name, o);
  }
  get(key: string): T | undefined {
    return this.items.get(key);
  }
  list(): readonly T[] {
    return [...this.items.values()];
  }
}

/** A pod cache with the `podsOnNode` index the controller reads. */
export class PodStore extends MapStore<Pod> {
  podsOnNode(nodeName: string): readonly Pod[] {
    return this.list().filter((p) => p.nodeName === nodeName);
  }
}

/** Every Event recorded, in order. */
export class RecordingEvents implements EventSink {
  readonly recorded: { ref: EventObjectRef; type: string; reason: string; message: string }[] = [];
  record(ref: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorded.push({ ref, type, reason, message });
  }
  reasons(): string[] {
    return this.recorded.map((e) => e.reason);
  }
}

/** A health reader whose records the test sets (the health part's view, without the health part). */
export class FakeHealth implements NodeHealthReader {
  readonly records = new Map<string, NodeHealth>();
  readonly registrations = new Map<string, { uid: string; zone: string }>();
  /** Registers `name` (uid `uid-<name>`) in `zone` with a saved Ready condition of `ready` (undefined: none). */
  set(name: string, zone: string, ready: string | undefined, probeTimestamp = T0): void {
    this.registrations.set(name, { uid: `uid-${name}`, zone });
    const conditions: NodeCondition[] = ready === undefined ? [] : [{ type: 'Ready', status: ready }];
    this.records.set(name, { probeTimestamp, readyTransitionTimestamp: probeTimestamp, conditions });
  }
  health(name: string): NodeHealth | undefined {
    return this.records.get(name);
  }
  registration(name: string): { uid: string; zone: string } | undefined {
    return this.registrations.get(name);
  }
  lastReady(name: string): string | undefined {
    return this.records.get(name)?.conditions.find((c) => c.type === 'Ready')?.status;
  }
  registered(): IterableIterator<[name: string, registration: { uid: string; zone: string }]> {
    return this.registrations.entries();
  }
  /** Nodes whose verdict the test puts on hold (the health part's difference 28), with why. */
  readonly held = new Map<string, string>();
  rejudging(name: string): string | undefined {
    return this.held.get(name);
  }
}

/** A node with the given Ready status (undefined: no Ready condition) and optional labels/taints. */
export function node(name: string, ready: string | undefined, o: Partial<Node> = {}): Node {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: T0 - 3_600_000,
    labels: {},
    unschedulable: false,
    taints: [],
    conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }],
    ...o,
  };
}

/** A Ready, running pod bound to `nodeName` in namespace `default`. */
export function pod(name: string, nodeName: string, o: Partial<Pod> = {}): Pod {
  return {
    name,
    namespace: 'default',
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

/** A fresh clock, a silent logger and a fresh node collector metrics set. */
export function basics(): { clock: FakeClock; log: Logger; metrics: NodeCollectorMetrics } {
  return { clock: new FakeClock(T0), log: silentLogger, metrics: createMetrics({ defaultMetrics: false }).nodeCollector };
}

/** The value of a gauge or counter series whose labels include `labels`; undefined when it has none. */
export async function metricValue(
  m: { get(): Promise<{ values: { labels: Record<string, string | number>; value: number }[] }> },
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const { values } = await m.get();
  return values.find((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))?.value;
}

/** Lets queued work (workers, promise chains) run: advances the fake clock in small steps. */
export async function settle(clock: FakeClock, ms = 0): Promise<void> {
  await clock.advanceAsync(ms);
  for (let i = 0; i < 5; i++) await clock.advanceAsync(0);
}
