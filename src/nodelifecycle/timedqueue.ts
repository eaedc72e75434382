/**
 * The per-zone NoExecute tainting queue: a deduplicating min-heap of node names ordered by the
 * time each should next be processed, drained through a swappable rate limiter.
 *
 * Mirrors `pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go` (`TimedValue`,
 * `TimedQueue`, `UniqueQueue`, `RateLimitedTimedQueue`). All times are epoch **milliseconds**
 * read from the injected {@link Clock}.
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import { MinHeap } from '../util/heap.js';
import type { SwappableRateLimiter } from './ratelimit.js';

/**
 * A value (a node name) to process at a given time. Immutable; the queue stores its own copies.
 * Mirrors `scheduler.TimedValue`.
 */
export interface TimedValue {
  /** The node name. Dedup key. */
  readonly value: string;
  /** The node UID when queued (upstream's `UID interface{}`). */
  readonly uid: string;
  /** epoch ms when the value was added. */
  readonly addedAt: number;
  /** epoch ms before which the value must not be processed. */
  readonly processAt: number;
}

/** What an action tells {@link RateLimitedTimedQueue.try}: done, or retry after `waitMs` **milliseconds**. */
export interface TryResult {
  done: boolean;
  waitMs: number;
}

interface Entry {
  readonly v: TimedValue;
  /** Insertion order, to break processAt ties. */
  readonly seq: number;
}

function before(a: Entry, b: Entry): boolean {
  return a.v.processAt < b.v.processAt || (a.v.processAt === b.v.processAt && a.seq < b.seq);
}

/**
 * A min-heap by `processAt` plus a dedup set. A value can be added only once until it is
 * `remove`d (or popped by `get`, or cleared). Processed values (`removeFromQueue`) stay in the set.
 *
 * Mirrors `scheduler.UniqueQueue`. Deliberate difference from upstream: values with equal
 * `processAt` come out in insertion order (Go's heap leaves ties unordered), and removal by value
 * is O(log n) through a position index rather than a linear scan.
 */
export class UniqueQueue {
  /** Waiting entries, keyed by value (the position index gives O(log n) removal by value). */
  readonly #heap = new MinHeap<Entry>(before, { keyOf: (e) => e.v.value });
  /** Heap values are always a subset of #set. */
  #set = new Set<string>();
  #seq = 0;

  /** Number of values waiting in the heap. */
  get length(): number {
    return this.#heap.size;
  }

  /** Number of values in the dedup set (waiting plus processed-but-not-removed). */
  get setSize(): number {
    return this.#set.size;
  }

  /** Whether `value` is in the dedup set, so {@link add} would refuse it. */
  has(value: string): boolean {
    return this.#set.has(value);
  }

  /** Whether `value` is waiting in the heap. */
  inQueue(value: string): boolean {
    return this.#heap.has(value);
  }

  /**
   * Adds `v` unless its value is already in the set. Mirrors `UniqueQueue.Add`.
   * @returns true if added.
   */
  add(v: TimedValue): boolean {
    if (this.#set.has(v.value)) return false;
    this.#push(v);
    this.#set.add(v.value);
    return true;
  }

  /**
   * Replaces the waiting entry that has the same value with `v`; the set is untouched.
   * Mirrors `UniqueQueue.Replace`.
   * @returns true if an entry was found and replaced; false (and nothing changes) otherwise.
   */
  replace(v: TimedValue): boolean {
    if (this.#heap.removeByKey(v.value) === undefined) return false;
    this.#push(v);
    return true;
  }

  /**
   * Removes `value` from the heap but keeps it in the set, so it cannot be added again until
   * {@link remove}. Mirrors `UniqueQueue.RemoveFromQueue`.
   * @returns true if it was in the set and in the heap.
   */
  removeFromQueue(value: string): boolean {
    if (!this.#set.has(value)) return false;
    return this.#heap.removeByKey(value) !== undefined;
  }

  /**
   * Puts `v` back into the heap when its value is still in the set but no longer waiting (it was
   * taken out with {@link removeFromQueue} while its action ran). Ours: upstream has no
   * concurrent pass, so it needs no such step.
   * @returns true if pushed; false when the value left the set or is already waiting.
   */
  restore(v: TimedValue): boolean {
    if (!this.#set.has(v.value) || this.#heap.has(v.value)) return false;
    this.#push(v);
    return true;
  }

  /**
   * Removes `value` from the set and, if present, from the heap, so it can be added again.
   * Mirrors `UniqueQueue.Remove`.
   * @returns true if it was in the set, even when it was no longer in the heap.
   */
  remove(value: string): boolean {
    if (!this.#set.delete(value)) return false;
    this.#heap.removeByKey(value);
    return true;
  }

  /**
   * Pops the earliest value and drops it from the set. Mirrors `UniqueQueue.Get`.
   * @returns the value, or undefined when the heap is empty.
   */
  get(): TimedValue | undefined {
    const top = this.#heap.pop();
    if (!top) return undefined;
    this.#set.delete(top.v.value);
    return top.v;
  }

  /** The earliest value without removing it, or undefined. Mirrors `UniqueQueue.Head`. */
  head(): TimedValue | undefined {
    return this.#heap.peek()?.v;
  }

  /** Empties the heap and the set. Mirrors `UniqueQueue.Clear`. */
  clear(): void {
    this.#heap.clear();
    this.#set.clear();
  }

  /** Waiting values in processing order (processAt, then insertion order). A copy. */
  values(): TimedValue[] {
    return this.#heap
      .toArray()
      .sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
      .map((e) => e.v);
  }

  #push(v: TimedValue): void {
    this.#heap.push({ v, seq: this.#seq++ });
  }
}

/**
 * A {@link UniqueQueue} drained by {@link try}/{@link tryAsync} through a swappable rate limiter.
 * One per zone; the NoExecute tainting pass drains it every 100 ms.
 *
 * Mirrors `scheduler.RateLimitedTimedQueue`. Semantics kept from upstream:
 * - each loop step takes a token BEFORE checking the head's `processAt`, so a not-yet-due head
 *   wastes a token;
 * - a value whose action returns `done` leaves the heap but stays in the dedup set, so a later
 *   `add` returns false until `remove` is called;
 * - a value whose action returns not done is re-queued at `now + waitMs + 1 ms`, where `now` is
 *   read before the action runs, unless it was removed meanwhile; then the retry is dropped.
 *
 * Deliberate difference from upstream: the retry offset is 1 ms instead of 1 ns, because our
 * clock has millisecond resolution.
 */
export class RateLimitedTimedQueue {
  readonly #queue = new UniqueQueue();
  readonly #clock: Clock;
  readonly #limiter: SwappableRateLimiter;
  #busy = false;
  #tail: Promise<void> = Promise.resolve();
  /** Values whose action runs in a concurrent pass, and whether they were removed meanwhile. */
  readonly #running = new Map<string, { removed: boolean }>();
  /** Wakes a concurrent pass that waits for its actions, so a value added meanwhile starts at once. */
  #wakeConcurrentPass: (() => void) | undefined;

  /**
   * @param clock time source for `addedAt`, `processAt` and the due check (epoch ms).
   * @param limiter the zone's limiter, for example `new SwappableTokenBucket(clock, 0.1)`.
   */
  constructor(clock: Clock, limiter: SwappableRateLimiter) {
    this.#clock = clock;
    this.#limiter = limiter;
  }

  /**
   * Queues `value` for processing now, unless it is already in the dedup set.
   * Mirrors `RateLimitedTimedQueue.Add`.
   * @param value node name.
   * @param uid node UID.
   * @returns true if added.
   */
  add(value: string, uid: string): boolean {
    const now = this.#clock.now();
    const added = this.#queue.add({ value, uid, addedAt: now, processAt: now });
    if (added) this.#wakeConcurrentPass?.();
    return added;
  }

  /**
   * Whether `value` is waiting in the queue or its action is running in a concurrent pass, i.e. it
   * will be processed (again) without being added. Ours: lets a caller that re-evaluates often
   * avoid upstream's remove-and-add, which would move the value to the back of the queue.
   */
  isPending(value: string): boolean {
    return this.#queue.inQueue(value) || this.#running.has(value);
  }

  /**
   * Drops `value` from the queue and the dedup set, so it is not processed until added again.
   * Mirrors `RateLimitedTimedQueue.Remove`.
   * @returns true if it was in the dedup set (even if already processed).
   */
  remove(value: string): boolean {
    const running = this.#running.get(value);
    if (running) running.removed = true;
    return this.#queue.remove(value);
  }

  /** Empties the queue and the dedup set. Mirrors `RateLimitedTimedQueue.Clear`. */
  clear(): void {
    for (const running of this.#running.values()) running.removed = true;
    this.#queue.clear();
  }

  /**
   * Processes due values synchronously while the limiter gives tokens. Mirrors
   * `RateLimitedTimedQueue.Try`; see the class comment for the rules.
   * @param fn the action; `waitMs` is in **milliseconds**.
   * @throws {Error} if an async pass ({@link tryAsync}) is running, since both would take the
   *   same head; {@link RangeError} if `fn` returns a non-finite `waitMs`; and whatever `fn`
   *   throws. After a throw the value stays queued unchanged (its token is spent).
   */
  try(fn: (v: TimedValue) => TryResult): void {
    if (this.#busy) throw new Error('RateLimitedTimedQueue.try: another pass is running');
    this.#busy = true;
    try {
      for (let head = this.#queue.head(); head; head = this.#queue.head()) {
        const now = this.#takeTokenIfDue(head);
        if (now === undefined) break;
        this.#settle(head, now, fn(head));
      }
    } finally {
      this.#busy = false;
    }
  }

  /**
   * Like {@link try}, for an async action (an API call). Passes run one at a time: a call made
   * while a pass runs waits for it, as upstream's `Try` waits on `limiterLock`. Values may be
   * added or removed while the action runs; a value removed meanwhile is not retried.
   *
   * Deliberate difference from upstream: {@link swapLimiter} does not wait for a running pass.
   * The next token is taken from the new limiter, so entering all-zones disruption (rate 0)
   * stops a long pass at once.
   *
   * With `concurrency` > 1 (ours; deliberate difference 12 in docs/node-lifecycle.md), tokens are
   * still taken one value at a time in queue order, but the pass does not wait for one action to
   * finish before starting the next: up to `concurrency` run at once, each taken out of the heap
   * (kept in the dedup set) while it runs and put back for a retry when it is not done. The rate
   * limiter, not the API server's latency, then sets the tainting rate. The pass ends when the
   * queue has no due value or no token and every action it started has finished.
   * @param fn the action; `waitMs` is in **milliseconds**.
   * @param concurrency actions in flight at once; default 1 (upstream's serial pass).
   * @returns a promise that settles when this pass ends.
   * @throws {RangeError} at once when `concurrency` is not a positive integer.
   * @throws (rejects) {RangeError} if `fn` returns a non-finite `waitMs`, or whatever `fn` rejects
   *   with (the first such error of a concurrent pass, after all its actions ended). The value
   *   stays queued unchanged, and later passes still run.
   */
  tryAsync(fn: (v: TimedValue) => Promise<TryResult>, concurrency = 1): Promise<void> {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`RateLimitedTimedQueue: concurrency must be a positive integer, got ${concurrency}`);
    const run = this.#tail.then(() => (concurrency === 1 ? this.#runAsync(fn) : this.#runConcurrent(fn, concurrency)));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Changes the zone's tainting rate (nodes per **second**); see
   * {@link SwappableRateLimiter.swap}. Mirrors `RateLimitedTimedQueue.SwapLimiter`.
   * @returns true if the limiter changed.
   * @throws {RangeError} when `qps` is NaN.
   */
  swapLimiter(qps: number): boolean {
    return this.#limiter.swap(qps);
  }

  /** Current rate in nodes per **second** (0 = stopped). */
  get qps(): number {
    return this.#limiter.qps;
  }

  /** Number of values waiting (not yet processed). */
  get length(): number {
    return this.#queue.length;
  }

  /** Whether `value` is in the dedup set (waiting, or processed and not removed since). */
  has(value: string): boolean {
    return this.#queue.has(value);
  }

  /** The next value to process, or undefined. */
  peek(): TimedValue | undefined {
    return this.#queue.head();
  }

  /** Waiting values in processing order. A copy. */
  values(): readonly TimedValue[] {
    return this.#queue.values();
  }

  async #runAsync(fn: (v: TimedValue) => Promise<TryResult>): Promise<void> {
    this.#busy = true;
    try {
      for (let head = this.#queue.head(); head; head = this.#queue.head()) {
        const now = this.#takeTokenIfDue(head);
        if (now === undefined) break;
        this.#settle(head, now, await fn(head));
      }
    } finally {
      this.#busy = false;
    }
  }

  async #runConcurrent(fn: (v: TimedValue) => Promise<TryResult>, concurrency: number): Promise<void> {
    this.#busy = true;
    const inFlight = new Set<Promise<void>>();
    let firstError: { err: unknown } | undefined;
    try {
      // As in the serial pass, a value is processed at most once per pass (a retry waits for the next).
      const seen = new Set<string>();
      for (;;) {
        if (firstError !== undefined) break;
        if (inFlight.size >= concurrency) {
          await Promise.race(inFlight);
          continue;
        }
        const head = this.#queue.head();
        const fresh = head !== undefined && !seen.has(head.value);
        const gotToken = fresh && this.#limiter.tryAccept();
        const now = this.#clock.now();
        if (head === undefined || !gotToken || now < head.processAt) {
          if (inFlight.size === 0) break;
          // Wait for an action to end, for a new value, or (when only the token was missing) for
          // the next token: one slow write must not hold up values that are due meanwhile.
          const waits: Promise<unknown>[] = [...inFlight, new Promise<void>((resolve) => (this.#wakeConcurrentPass = resolve))];
          let tokenTimer: TimerHandle | undefined;
          if (fresh && !gotToken && this.#limiter.qps > 0) {
            waits.push(new Promise<void>((resolve) => (tokenTimer = this.#clock.setTimeout(resolve, Math.ceil(1000 / this.#limiter.qps)))));
          }
          await Promise.race(waits);
          tokenTimer?.cancel();
          this.#wakeConcurrentPass = undefined;
          continue;
        }
        seen.add(head.value);
        this.#queue.removeFromQueue(head.value);
        const running = { removed: false };
        this.#running.set(head.value, running);
        const p: Promise<void> = this.#runOne(fn, head, now, running)
          .catch((err: unknown) => {
            firstError ??= { err };
          })
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await Promise.all(inFlight);
    } finally {
      this.#busy = false;
    }
    if (firstError) throw firstError.err;
  }

  /** One action of a concurrent pass; puts the value back for its retry unless it was removed meanwhile. */
  async #runOne(fn: (v: TimedValue) => Promise<TryResult>, head: TimedValue, now: number, running: { removed: boolean }): Promise<void> {
    let retry: TimedValue | undefined = head;
    try {
      const r = await fn(head);
      if (r.done) retry = undefined;
      else if (!Number.isFinite(r.waitMs)) throw new RangeError(`RateLimitedTimedQueue: waitMs must be finite, got ${r.waitMs}`);
      else retry = { ...head, processAt: now + r.waitMs + 1 };
    } finally {
      if (this.#running.get(head.value) === running) this.#running.delete(head.value);
      // Removed while the action ran: drop the retry, as the serial pass's Replace does.
      if (retry && !running.removed) this.#queue.restore(retry);
    }
  }

  /** @returns the time (epoch ms) if a token was taken and `head` is due, else undefined. */
  #takeTokenIfDue(head: TimedValue): number | undefined {
    if (!this.#limiter.tryAccept()) return undefined;
    const now = this.#clock.now();
    return now < head.processAt ? undefined : now;
  }

  #settle(v: TimedValue, now: number, r: TryResult): void {
    if (r.done) {
      this.#queue.removeFromQueue(v.value);
      return;
    }
    if (!Number.isFinite(r.waitMs)) throw new RangeError(`RateLimitedTimedQueue: waitMs must be finite, got ${r.waitMs}`);
    // Replace finds nothing if the value was removed while fn ran, which drops the retry.
    this.#queue.replace({ ...v, processAt: now + r.waitMs + 1 });
  }
}
