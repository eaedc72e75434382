/**
 * Records core/v1 Events (the kind `kubectl describe node|pod` and `kubectl get events` show),
 * with client-go's correlation so repeats do not flood etcd.
 *
 * Mirrors client-go `tools/record`:
 * - `event.go` `recorder.makeEvent`: name `<object name>.<hex unix nanos>`, namespace of the
 *   involved object or `default` for cluster-scoped objects such as Nodes, `source`,
 *   `reportingComponent` (= component) and `reportingInstance` (= host), count 1.
 * - `events_cache.go` `eventLogger.eventObserve`: a repeat of the same (source, object, type,
 *   reason, message) PATCHes `count` and `lastTimestamp` of the Event it already wrote.
 * - `events_cache.go` `EventSourceObjectSpamFilter`: a token bucket per (source, object), burst
 *   25, refilled one token per 5 min; events over the limit are dropped.
 * - `event.go` `recordToSink`: a PATCH that finds the Event gone (404, e.g. expired by
 *   `--event-ttl`) falls back to creating it.
 *
 * Deliberate differences from upstream: a repeat is only merged into an Event last written
 * within `aggregationWindowMs` (10 min); older ones start a new Event (client-go's LRU has no time
 * limit, but the apiserver's event TTL is 1 h, so very old Events are usually gone anyway). The
 * `EventAggregator` step that merges *similar* events with different messages into
 * "(combined from similar events)" is not implemented. Failed writes are not retried (client-go
 * retries 12 times, 10 s apart); they are logged and counted.
 */
import type { Clock } from '../util/clock.js';
import { TokenBucket } from '../util/tokenbucket.js';
import { describeError, isNotFound, type KubeClients } from './client.js';
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import type { Logger } from '../log/logger.js';
import { isFenced, type WriteScheduler } from './throttle.js';

/** The object an Event is about (`involvedObject`). Cluster-scoped objects have no namespace. */
export interface ObjectReference {
  kind: string;
  apiVersion: string;
  name: string;
  namespace?: string;
  uid?: string;
}

/** Event type as the API spells it. */
export type EventType = 'Normal' | 'Warning';

/** Reference to a Node (apiVersion v1, kind Node, no namespace), as upstream's `RecordNodeEvent` builds it. */
export function nodeRef(node: { name: string; uid?: string }): ObjectReference {
  const ref: ObjectReference = { kind: 'Node', apiVersion: 'v1', name: node.name };
  if (node.uid) ref.uid = node.uid;
  return ref;
}

/** Reference to a Pod (apiVersion v1, kind Pod). */
export function podRef(pod: { namespace: string; name: string; uid?: string }): ObjectReference {
  const ref: ObjectReference = { kind: 'Pod', apiVersion: 'v1', name: pod.name, namespace: pod.namespace };
  if (pod.uid) ref.uid = pod.uid;
  return ref;
}

/** Options of {@link EventRecorder}. Durations are milliseconds. */
export interface EventRecorderOptions {
  clients: Pick<KubeClients, 'core'>;
  /** The write path (the shared {@link ApiWriteThrottle}); events are throttled and fenced like other writes. */
  throttle: WriteScheduler;
  /** `source.component`: `node-controller` (node lifecycle), `taint-eviction-controller`, … */
  component: string;
  /** `source.host` and `reportingInstance` (e.g. the pod name); optional. */
  host?: string;
  /** `reportingComponent`; default = `component` (as client-go's `makeEvent`). */
  reportingComponent?: string;
  clock: Clock;
  log: Logger;
  /** Merge repeats into an Event written within this window (default 600 000 = 10 min). */
  aggregationWindowMs?: number;
  /** Spam filter burst per object (default 25). */
  spamBurst?: number;
  /** Spam filter refill: one token per this many ms (default 300 000 = 5 min). */
  spamRefillMs?: number;
  /** Maximum remembered events and spam buckets (default 4096, client-go `maxLruCacheEntries`). */
  cacheSize?: number;
}

/** Counters of an {@link EventRecorder}. */
export interface EventCounters {
  /** `record` calls. */
  recorded: number;
  /** Events created (POST). */
  created: number;
  /** Repeats merged into an existing Event (PATCH). */
  patched: number;
  /** Dropped by the spam filter. */
  dropped: number;
  /** Refused by the fencing gate. */
  fenced: number;
  /** Writes that failed. */
  failed: number;
}

interface CachedEvent {
  name: string;
  namespace: string;
  count: number;
  firstMs: number;
  lastMs: number;
  /** Writes for one Event are chained so a PATCH never overtakes its CREATE. */
  chain: Promise<void>;
}

/** One write of an Event (a create or a patch), with everything needed to build its body. */
interface EventWrite {
  key: string;
  entry: CachedEvent;
  ref: ObjectReference;
  type: EventType;
  reason: string;
  message: string;
  count: number;
  lastMs: number;
}

/** A Map used as an LRU: `touch` moves a key to the back; the oldest entries are evicted. */
function lruSet<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
}

function toWireTime(ms: number): Date {
  // metav1.Time has whole seconds on the wire.
  return new Date(Math.floor(ms / 1000) * 1000);
}

/**
 * Writes core/v1 Events for one component. `record` never throws and never waits: the write
 * happens in the background through the write throttle; failures are logged at warn level.
 */
export class EventRecorder {
  readonly component: string;
  readonly #o: EventRecorderOptions;
  readonly #windowMs: number;
  readonly #burst: number;
  readonly #refillMs: number;
  readonly #cacheSize: number;
  readonly #events = new Map<string, CachedEvent>();
  readonly #spam = new Map<string, TokenBucket>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #counters: EventCounters = { recorded: 0, created: 0, patched: 0, dropped: 0, fenced: 0, failed: 0 };
  #seq = 0;

  constructor(opts: EventRecorderOptions) {
    this.component = opts.component;
    this.#o = opts;
    this.#windowMs = opts.aggregationWindowMs ?? 600_000;
    this.#burst = opts.spamBurst ?? 25;
    this.#refillMs = opts.spamRefillMs ?? 300_000;
    this.#cacheSize = opts.cacheSize ?? 4096;
  }

  /**
   * Records an event about `ref` (client-go `EventRecorder.Event`). Fire-and-forget: never throws.
   * @param type `Normal` or `Warning`
   * @param reason short CamelCase reason, e.g. `NodeNotReady`
   * @param message human-readable text
   */
  record(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    this.#counters.recorded++;
    try {
      this.#record(ref, type, reason, message);
    } catch (err) {
      this.#counters.failed++;
      this.#o.log.error({ reason, object: ref.name, err: describeError(err) }, 'failed to record event');
    }
  }

  /** Counters (see {@link EventCounters}); a copy. */
  recorded(): EventCounters {
    return { ...this.#counters };
  }

  /** Resolves when every write started so far has finished (for tests and shutdown). */
  async flush(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  #sourceKey(ref: ObjectReference): string {
    return [this.component, this.#o.host ?? '', ref.kind, ref.namespace ?? '', ref.name, ref.uid ?? '', ref.apiVersion].join('\u0000');
  }

  /** The spam filter: true when the event may pass (a token was taken from the object's full-at-start bucket). */
  #allow(sourceKey: string): boolean {
    const b = this.#spam.get(sourceKey) ?? new TokenBucket(this.#o.clock, 1000 / this.#refillMs, this.#burst);
    const ok = b.tryAccept();
    lruSet(this.#spam, sourceKey, b, this.#cacheSize);
    return ok;
  }

  #record(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    const now = this.#o.clock.now();
    const sourceKey = this.#sourceKey(ref);
    if (!this.#allow(sourceKey)) {
      this.#counters.dropped++;
      this.#o.log.debug({ object: ref.name, kind: ref.kind, reason }, 'event dropped by the spam filter');
      return;
    }
    const key = [sourceKey, type, reason, message].join('\u0000');
    const cached = this.#events.get(key);
    if (cached && now - cached.lastMs <= this.#windowMs) {
      cached.count++;
      cached.lastMs = now;
      lruSet(this.#events, key, cached, this.#cacheSize);
      const w: EventWrite = { key, entry: cached, ref, type, reason, message, count: cached.count, lastMs: now };
      this.#enqueue(cached, () => this.#patch(w));
      return;
    }
    const namespace = ref.namespace || 'default';
    const name = `${ref.name}.${this.#uniqueHex(now)}`;
    const entry: CachedEvent = { name, namespace, count: 1, firstMs: now, lastMs: now, chain: Promise.resolve() };
    lruSet(this.#events, key, entry, this.#cacheSize);
    const w: EventWrite = { key, entry, ref, type, reason, message, count: 1, lastMs: now };
    this.#enqueue(entry, () => this.#create(w));
  }

  /** client-go uses `%x` of UnixNano; the sequence number keeps names unique within a millisecond. */
  #uniqueHex(nowMs: number): string {
    this.#seq = (this.#seq + 1) % 1_000_000;
    return (BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(this.#seq)).toString(16);
  }

  #enqueue(entry: CachedEvent, write: () => Promise<void>): void {
    const p = entry.chain.then(write);
    entry.chain = p;
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  #body({ entry, ref, type, reason, message, count, lastMs }: EventWrite) {
    const source: { component: string; host?: string } = { component: this.component };
    if (this.#o.host) source.host = this.#o.host;
    return {
      metadata: { name: entry.name, namespace: entry.namespace },
      involvedObject: { ...ref },
      reason,
      message,
      type,
      source,
      firstTimestamp: toWireTime(entry.firstMs),
      lastTimestamp: toWireTime(lastMs),
      count,
      reportingComponent: this.#o.reportingComponent ?? this.component,
      reportingInstance: this.#o.host ?? '',
    };
  }

  async #create(w: EventWrite): Promise<void> {
    try {
      await this.#o.throttle.schedule(
        () => this.#o.clients.core.createNamespacedEvent({ namespace: w.entry.namespace, body: this.#body(w) }),
        'event',
      );
      this.#counters.created++;
    } catch (err) {
      // Forget it, so the next repeat creates a fresh Event rather than patching a missing one.
      if (this.#events.get(w.key) === w.entry) this.#events.delete(w.key);
      this.#failed(err, w);
    }
  }

  async #patch(w: EventWrite): Promise<void> {
    const body = { count: w.count, lastTimestamp: toWireTime(w.lastMs).toISOString(), message: w.message };
    try {
      await this.#o.throttle.schedule(
        () =>
          this.#o.clients.core.patchNamespacedEvent(
            { name: w.entry.name, namespace: w.entry.namespace, body },
            setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
          ),
        'event',
      );
      this.#counters.patched++;
    } catch (err) {
      // The Event is gone (TTL expired or deleted): create it again, as recordToSink does.
      if (isNotFound(err)) await this.#create(w);
      else this.#failed(err, w);
    }
  }

  #failed(err: unknown, { ref, reason }: EventWrite): void {
    if (isFenced(err)) {
      this.#counters.fenced++;
      this.#o.log.debug({ object: ref.name, kind: ref.kind, reason }, 'event not written: fenced');
      return;
    }
    this.#counters.failed++;
    this.#o.log.warn({ object: ref.name, kind: ref.kind, namespace: ref.namespace, reason, err: describeError(err) }, 'failed to write event');
  }
}
