/**
 * A keyed work queue with client-go semantics, using p-queue only as the bounded worker pool.
 *
 * Mirrors `k8s.io/client-go/util/workqueue`:
 * - `queue.go` `Typed[T]`: the *dirty* set (keys waiting) and the *processing* set (keys being
 *   handled). Adding a key that is already waiting is a no-op (dedup); adding a key that is being
 *   handled marks it dirty, and it is queued again only when its handler returns, so **a key is
 *   never handled concurrently with itself**.
 * - `delaying_queue.go`: `addAfter` keeps only the earliest pending time per key.
 * - `rate_limiting_queue.go` + `default_rate_limiters.go`: `addRateLimited`, `forget`,
 *   `numRequeues`, with `DefaultTypedControllerRateLimiter` = max(per-item exponential
 *   5 ms → 1000 s, overall token bucket 10 qps / burst 100).
 *
 * Workers are not goroutines calling `Get()`/`Done()`: the queue calls the `sync` handler itself.
 * A handler that resolves forgets the key's failures; one that throws gets the key re-added through
 * `addRateLimited` (the usual `processNextWorkItem` pattern of upstream controllers).
 *
 * Metrics: `queue.go` `queueMetrics` (adds, depth, queue and work duration, unfinished work, longest
 * running processor) and `delaying_queue.go` (retries), reported to a {@link WorkQueueMetricsProvider}
 * (client-go `MetricsProvider` / `SetProvider`); src/metrics/registry.ts serves them as
 * `workqueue_*{name}`.
 */
import PQueue from 'p-queue';
import type { Clock, TimerHandle } from '../util/clock.js';
import { TokenBucket } from '../util/tokenbucket.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { describeError } from './client.js';

// ---------------------------------------------------------------------------
// Rate limiters (client-go util/workqueue/default_rate_limiters.go)
// ---------------------------------------------------------------------------

/** client-go `TypedRateLimiter`: how long a key should wait before it is retried. */
export interface RateLimiter {
  /** Delay in milliseconds before `key` may be processed again; records a failure. */
  when(key: string): number;
  /** Clears `key`'s failure history. */
  forget(key: string): void;
  /** Number of failures recorded for `key` since the last `forget`. */
  numRequeues(key: string): number;
}

/**
 * Per-key exponential backoff: `baseMs × 2^failures`, capped at `maxMs`.
 * Mirrors client-go `ItemExponentialFailureRateLimiter` (defaults 5 ms and 1000 s).
 */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();

  /**
   * @param baseMs first delay in milliseconds (default 5)
   * @param maxMs largest delay in milliseconds (default 1 000 000 = 1000 s)
   */
  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const exp = this.#failures.get(key) ?? 0;
    this.#failures.set(key, exp + 1);
    const backoff = this.baseMs * 2 ** exp;
    return Number.isFinite(backoff) && backoff < this.maxMs ? backoff : this.maxMs;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/**
 * One token bucket shared by all keys: `qps` per second, `burst` tokens, starting full. `when`
 * reserves a token and returns how long to wait for it (golang.org/x/time/rate `Reserve().Delay()`),
 * so a storm of failures is spread out. Mirrors client-go `TypedBucketRateLimiter`; the bucket is
 * the project's one token bucket (src/util/tokenbucket.ts, its `reserve` mode).
 */
export class BucketRateLimiter implements RateLimiter {
  readonly #bucket: TokenBucket;

  /**
   * @param qps tokens per second (finite, > 0)
   * @param burst bucket size (a positive integer)
   * @param clock time source (epoch ms)
   * @throws {RangeError} when qps is not finite and > 0, or burst is not a positive integer.
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
    clock: Clock,
  ) {
    this.#bucket = new TokenBucket(clock, qps, burst);
  }

  when(_key: string): number {
    return this.#bucket.reserve();
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The largest delay of several limiters. Mirrors client-go `TypedMaxOfRateLimiter`. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(key: string): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.when(key));
    return max;
  }

  forget(key: string): void {
    for (const l of this.#limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/**
 * client-go `DefaultTypedControllerRateLimiter`: max of per-item exponential backoff
 * (5 ms → 1000 s) and an overall bucket of 10 qps with burst 100.
 */
export function defaultControllerRateLimiter(clock: Clock): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1_000_000), new BucketRateLimiter(10, 100, clock));
}

// ---------------------------------------------------------------------------
// Metrics (client-go util/workqueue/metrics.go)
// ---------------------------------------------------------------------------

/** What a queue reports when scraped (the gauges are computed then, not kept up to date on every add). */
export interface WorkQueueGaugeValues {
  /** Keys added and not yet handed to a worker (`workqueue_depth`), including keys re-added while running. */
  depth: number;
  /** Sum over running handlers of the seconds they have been running (`workqueue_unfinished_work_seconds`). */
  unfinishedWorkSeconds: number;
  /** Seconds the longest running handler has been running, 0 when none runs (`workqueue_longest_running_processor_seconds`). */
  longestRunningProcessorSeconds: number;
}

/** The event side of one queue's metrics (client-go `queueMetrics` + `retryMetrics`). */
export interface WorkQueueMetrics {
  /** A key was added (not a duplicate of a waiting key): `adds_total` += 1. */
  added(): void;
  /** A worker took a key that had waited `queuedSeconds` seconds since it was added (`queue_duration_seconds`). */
  started(queuedSeconds: number): void;
  /** A handler returned (or threw) after `workSeconds` seconds (`work_duration_seconds`). */
  finished(workSeconds: number): void;
  /** `addAfter` / `addRateLimited` was called (`retries_total`, counted as upstream's `AddAfter` does). */
  retried(): void;
}

/**
 * Makes one queue's metrics. Mirrors client-go `workqueue.MetricsProvider` (one `New*Metric(name)`
 * per metric there; here one call per queue, plus a probe for the gauges that upstream refreshes
 * every 500 ms and we compute at scrape time).
 */
export interface WorkQueueMetricsProvider {
  /**
   * @param name the queue name (the `name` label).
   * @param probe returns the queue's gauge values now; called at scrape time.
   * @returns the event sink the queue calls on its hot path (must be cheap).
   */
  forQueue(name: string, probe: () => WorkQueueGaugeValues): WorkQueueMetrics;
}

const noopWorkQueueMetrics: WorkQueueMetrics = { added() {}, started() {}, finished() {}, retried() {} };
/** The default provider: records nothing (client-go's `noopMetricsProvider`). */
export const noopWorkQueueMetricsProvider: WorkQueueMetricsProvider = { forQueue: () => noopWorkQueueMetrics };

let defaultProvider: WorkQueueMetricsProvider = noopWorkQueueMetricsProvider;

/**
 * Sets the provider for queues created afterwards without an explicit `metrics` option. Mirrors
 * client-go `workqueue.SetProvider` (which component-base's Prometheus package calls at start-up);
 * `run` calls it before building the controllers, whose constructors create their queues. A queue
 * keeps the provider it was created with. Never throws.
 * @param provider the provider; pass {@link noopWorkQueueMetricsProvider} to turn metrics off again.
 */
export function setWorkQueueMetricsProvider(provider: WorkQueueMetricsProvider): void {
  defaultProvider = provider;
}

// ---------------------------------------------------------------------------
// WorkQueue
// ---------------------------------------------------------------------------

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** Queue name for logs (upstream: `node_lifecycle_controller_pods`, …). */
  name: string;
  /**
   * Handles one key. Throw (reject) to have the key retried with `addRateLimited`. `run.queuedMs`:
   * how long the key waited in the queue before this run, milliseconds (what
   * `queue_duration_seconds` observes).
   */
  sync: (key: string, run: { queuedMs: number }) => Promise<void>;
  /** Maximum number of keys handled at once (upstream: the worker count). Default 1. */
  concurrency?: number;
  /** Clock for `addAfter` / `addRateLimited` delays. */
  clock: Clock;
  /** Default: {@link defaultControllerRateLimiter}. */
  rateLimiter?: RateLimiter;
  log?: Logger;
  /** Metrics provider; default the one last set with {@link setWorkQueueMetricsProvider} (initially none). */
  metrics?: WorkQueueMetricsProvider;
}

/** Counters of a {@link WorkQueue}. */
export interface WorkQueueStats {
  /** Keys waiting to be handled. */
  queued: number;
  /** Keys being handled. */
  processing: number;
  /** Keys waiting for an `addAfter` delay. */
  delayed: number;
  /** Handler calls that resolved. */
  succeeded: number;
  /** Handler calls that threw. */
  failed: number;
}

/**
 * A deduplicating, rate-limited work queue (see the module comment for the upstream mapping).
 * Keys are strings such as `node-a` or `namespace/pod`.
 */
export class WorkQueue {
  readonly name: string;
  readonly #sync: WorkQueueOptions['sync'];
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #log: Logger;
  readonly #pool: PQueue;
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #waiting = new Map<string, { at: number; timer: TimerHandle }>();
  readonly #metrics: WorkQueueMetrics;
  /** When each dirty key was added (epoch ms), for `queue_duration_seconds` (upstream `addTimes`). */
  readonly #addedAt = new Map<string, number>();
  /** When each running key's handler started (epoch ms), upstream `processingStartTimes`. */
  readonly #startedAt = new Map<string, number>();
  #shuttingDown = false;
  #succeeded = 0;
  #failed = 0;

  /** @throws {RangeError} when concurrency is not a positive integer. */
  constructor(opts: WorkQueueOptions) {
    const concurrency = opts.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`WorkQueue ${opts.name}: concurrency must be a positive integer, got ${concurrency}`);
    }
    this.name = opts.name;
    this.#sync = opts.sync;
    this.#clock = opts.clock;
    this.#limiter = opts.rateLimiter ?? defaultControllerRateLimiter(opts.clock);
    this.#log = opts.log ?? silentLogger;
    this.#pool = new PQueue({ concurrency });
    this.#metrics = (opts.metrics ?? defaultProvider).forQueue(this.name, () => this.#gaugeValues());
  }

  #gaugeValues(): WorkQueueGaugeValues {
    const now = this.#clock.now();
    let unfinishedMs = 0;
    let longestMs = 0;
    for (const t of this.#startedAt.values()) {
      const ms = Math.max(0, now - t);
      unfinishedMs += ms;
      longestMs = Math.max(longestMs, ms);
    }
    return { depth: this.#dirty.size, unfinishedWorkSeconds: unfinishedMs / 1000, longestRunningProcessorSeconds: longestMs / 1000 };
  }

  /**
   * Queues `key` unless it is already waiting. A key being handled is marked dirty and handled
   * again after its current run (never concurrently). No-op after shutdown. Mirrors `Typed.Add`.
   */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#metrics.added();
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, this.#clock.now());
    this.#dirty.add(key);
    if (!this.#processing.has(key)) this.#enqueue(key);
  }

  /**
   * Adds `key` after `delayMs` milliseconds (at once when ≤ 0). If the key already waits for an
   * earlier time, that time wins. Mirrors `delayingType.AddAfter`.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    this.#metrics.retried();
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const at = this.#clock.now() + delayMs;
    const existing = this.#waiting.get(key);
    if (existing && existing.at <= at) return;
    existing?.timer.cancel();
    const timer = this.#clock.setTimeout(() => {
      this.#waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.#waiting.set(key, { at, timer });
  }

  /** Adds `key` after the rate limiter's delay for it (records a failure). Mirrors `AddRateLimited`. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.addAfter(key, this.#limiter.when(key));
  }

  /** Clears `key`'s failure history (its next backoff starts at the base delay). */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  /** Number of rate-limited requeues of `key` since the last `forget`. */
  numRequeues(key: string): number {
    return this.#limiter.numRequeues(key);
  }

  /** Number of keys waiting to be handled (not counting delayed or running ones). Mirrors `Len`. */
  get len(): number {
    return this.#pool.size;
  }

  /** True once `shutDown` or `drain` was called. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Counters (see {@link WorkQueueStats}). */
  stats(): WorkQueueStats {
    return {
      queued: this.#pool.size,
      processing: this.#processing.size,
      delayed: this.#waiting.size,
      succeeded: this.#succeeded,
      failed: this.#failed,
    };
  }

  /** Resolves when no key is queued or being handled (delayed keys are not waited for). */
  onIdle(): Promise<void> {
    return this.#pool.onIdle();
  }

  /**
   * Stops at once: refuses new keys, cancels delayed ones, drops queued ones, and resolves when the
   * handlers that are running have returned. For losing leadership, where no more writes may start.
   */
  async shutDown(): Promise<void> {
    this.#stopAccepting();
    this.#pool.clear();
    this.#dirty.clear();
    this.#addedAt.clear();
    await this.#pool.onIdle();
  }

  /**
   * Stops gracefully: refuses new keys and cancels delayed ones, but handles every key already
   * queued, and resolves when all are done. Mirrors `ShutDownWithDrain`.
   */
  async drain(): Promise<void> {
    this.#stopAccepting();
    await this.#pool.onIdle();
  }

  #stopAccepting(): void {
    this.#shuttingDown = true;
    for (const w of this.#waiting.values()) w.timer.cancel();
    this.#waiting.clear();
  }

  #enqueue(key: string): void {
    // `clear()` rejects dropped tasks with an AbortError; nothing else can reject (run() catches).
    this.#pool.add(() => this.#run(key)).catch(() => undefined);
  }

  async #run(key: string): Promise<void> {
    if (!this.#dirty.delete(key)) return; // dropped by shutDown
    this.#processing.add(key);
    const start = this.#clock.now();
    const queuedMs = Math.max(0, start - (this.#addedAt.get(key) ?? start));
    this.#metrics.started(queuedMs / 1000);
    this.#addedAt.delete(key);
    this.#startedAt.set(key, start);
    try {
      await this.#sync(key, { queuedMs });
      this.#succeeded++;
      this.#limiter.forget(key);
    } catch (err) {
      this.#failed++;
      this.#log.warn(
        { queue: this.name, key, requeues: this.#limiter.numRequeues(key), err: describeError(err) },
        'sync failed; requeueing with backoff',
      );
      this.addRateLimited(key);
    } finally {
      this.#startedAt.delete(key);
      this.#metrics.finished(Math.max(0, this.#clock.now() - start) / 1000);
      this.#processing.delete(key);
      // Added while it ran: queue it again now that this run is over (`Typed.Done`).
      if (this.#dirty.has(key)) this.#enqueue(key);
    }
  }
}
