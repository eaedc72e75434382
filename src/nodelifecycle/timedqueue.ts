/**
 * The per-zone NoExecute tainting queue: a deduplicating min-heap of node names ordered by the
 * time each should next be processed, drained through a swappable rate limiter.
 *
 * Mirrors `pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go` (`TimedValue`,
 * `TimedQueue`, `UniqueQueue`, `RateLimitedTimedQueue`). All times are epoch **milliseconds**
 * read from the injected {@link Clock}.
 */
import type { Clock } from '../util/clock.js';
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
  #heap: Entry[] = [];
  /** value → position in #heap. Heap values are always a subset of #set. */
  #pos = new Map<string, number>();
  #set = new Set<string>();
  #seq = 0;

  /** Number of values waiting in the heap. */
  get length(): number {
    return this.#heap.length;
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
    return this.#pos.has(value);
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
    const i = this.#pos.get(v.value);
    if (i === undefined) return false;
    this.#removeAt(i);
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
    const i = this.#pos.get(value);
    if (i === undefined) return false;
    this.#removeAt(i);
    return true;
  }

  /**
   * Removes `value` from the set and, if present, from the heap, so it can be added again.
   * Mirrors `UniqueQueue.Remove`.
   * @returns true if it was in the set, even when it was no longer in the heap.
   */
  remove(value: string): boolean {
    if (!this.#set.delete(value)) return false;
    const i = this.#pos.get(value);
    if (i !== undefined) this.#removeAt(i);
    return true;
  }

  /**
   * Pops the earliest value and drops it from the set. Mirrors `UniqueQueue.Get`.
   * @returns the value, or undefined when the heap is empty.
   */
  get(): TimedValue | undefined {
    const top = this.#heap[0];
    if (!top) return undefined;
    this.#removeAt(0);
    this.#set.delete(top.v.value);
    return top.v;
  }

  /** The earliest value without removing it, or undefined. Mirrors `UniqueQueue.Head`. */
  head(): TimedValue | undefined {
    return this.#heap[0]?.v;
  }

  /** Empties the heap and the set. Mirrors `UniqueQueue.Clear`. */
  clear(): void {
    this.#heap = [];
    this.#pos.clear();
    this.#set.clear();
  }

  /** Waiting values in processing order (processAt, then insertion order). A copy. */
  values(): TimedValue[] {
    return [...this.#heap].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)).map((e) => e.v);
  }

  #push(v: TimedValue): void {
    const e: Entry = { v, seq: this.#seq++ };
    this.#heap.push(e);
    const i = this.#heap.length - 1;
    this.#pos.set(v.value, i);
    this.#up(i);
  }

  #removeAt(i: number): void {
    const last = this.#heap.length - 1;
    const removed = this.#heap[i] as Entry;
    if (i !== last) {
      this.#swap(i, last);
      this.#heap.pop();
      if (!this.#down(i)) this.#up(i);
    } else {
      this.#heap.pop();
    }
    this.#pos.delete(removed.v.value);
  }

  #swap(i: number, j: number): void {
    const h = this.#heap;
    const a = h[i] as Entry;
    const b = h[j] as Entry;
    h[i] = b;
    h[j] = a;
    this.#pos.set(b.v.value, i);
    this.#pos.set(a.v.value, j);
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(this.#heap[i] as Entry, this.#heap[parent] as Entry)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** @returns true if the entry moved. */
  #down(i0: number): boolean {
    let i = i0;
    const n = this.#heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let m = l;
      if (r < n && before(this.#heap[r] as Entry, this.#heap[l] as Entry)) m = r;
      if (!before(this.#heap[m] as Entry, this.#heap[i] as Entry)) break;
      this.#swap(i, m);
      i = m;
    }
    return i > i0;
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
    return this.#queue.add({ value, uid, addedAt: now, processAt: now });
  }

  /**
   * Drops `value` from the queue and the dedup set, so it is not processed until added again.
   * Mirrors `RateLimitedTimedQueue.Remove`.
   * @returns true if it was in the dedup set (even if already processed).
   */
  remove(value: string): boolean {
    return this.#queue.remove(value);
  }

  /** Empties the queue and the dedup set. Mirrors `RateLimitedTimedQueue.Clear`. */
  clear(): void {
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
   * @param fn the action; `waitMs` is in **milliseconds**.
   * @returns a promise that settles when this pass ends.
   * @throws (rejects) {RangeError} if `fn` returns a non-finite `waitMs`, or whatever `fn` rejects
   *   with. The value stays queued unchanged, and later passes still run.
   */
  tryAsync(fn: (v: TimedValue) => Promise<TryResult>): Promise<void> {
    const run = this.#tail.then(() => this.#runAsync(fn));
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
