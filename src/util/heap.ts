/**
 * The project's one binary min-heap over an array: O(log n) insertion and removal of the earliest
 * item, and, when built with a `keyOf` function, O(log n) lookup and removal by key through a
 * position index.
 *
 * Used by {@link DeadlineScheduler} (src/util/scheduler.ts: lazy deletion, no key index) and by the
 * node lifecycle controller's `UniqueQueue` (src/nodelifecycle/timedqueue.ts: keyed by node name).
 *
 * Plays the role of Go's `container/heap` (`Push`, `Pop`, `Remove`, `Fix`, `Init`) as upstream's
 * timed queues use it: `pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go` `TimedQueue`.
 */
export class MinHeap<T> {
  #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;
  readonly #keyOf: ((item: T) => string) | undefined;
  /** key → position in #items; only when built with `keyOf`. */
  readonly #pos: Map<string, number> | undefined;

  /**
   * @param less strict ordering: true when `a` must come out before `b`. Items that are neither
   *   less nor greater than each other come out in an unspecified order (as with Go's heap); give
   *   `less` a sequence tie-break where the order matters.
   * @param opts.keyOf a unique string key per item; enables {@link has}, {@link getByKey} and
   *   {@link removeByKey}. Without it those throw.
   */
  constructor(less: (a: T, b: T) => boolean, opts: { keyOf?: (item: T) => string } = {}) {
    this.#less = less;
    this.#keyOf = opts.keyOf;
    this.#pos = opts.keyOf ? new Map() : undefined;
  }

  /** Number of items held. */
  get size(): number {
    return this.#items.length;
  }

  /** The smallest item without removing it, or `undefined` when empty. O(1). */
  peek(): T | undefined {
    return this.#items[0];
  }

  /**
   * Adds an item. O(log n).
   * @throws Error on a keyed heap when an item with the same key is already held.
   */
  push(item: T): void {
    const items = this.#items;
    if (this.#pos && this.#keyOf) {
      const key = this.#keyOf(item);
      if (this.#pos.has(key)) throw new Error(`MinHeap: duplicate key ${key}`);
      this.#pos.set(key, items.length);
    }
    items.push(item);
    this.#siftUp(items.length - 1);
  }

  /** Removes and returns the smallest item, or `undefined` when empty. O(log n). */
  pop(): T | undefined {
    return this.#items.length === 0 ? undefined : this.#removeAt(0);
  }

  /** Whether an item with `key` is held. O(1). @throws Error on a heap built without `keyOf`. */
  has(key: string): boolean {
    return this.#index().has(key);
  }

  /** The item with `key`, or `undefined`. O(1). @throws Error on a heap built without `keyOf`. */
  getByKey(key: string): T | undefined {
    const i = this.#index().get(key);
    return i === undefined ? undefined : this.#items[i];
  }

  /**
   * Removes the item with `key` (Go's `heap.Remove`). O(log n).
   * @returns the removed item, or `undefined` when none has that key.
   * @throws Error on a heap built without `keyOf`.
   */
  removeByKey(key: string): T | undefined {
    const i = this.#index().get(key);
    return i === undefined ? undefined : this.#removeAt(i);
  }

  /** Replaces the contents with `items` (taken over, not copied; Go's `heap.Init`). O(n). */
  rebuild(items: T[]): void {
    this.#items = items;
    if (this.#pos && this.#keyOf) {
      this.#pos.clear();
      for (let i = 0; i < items.length; i++) {
        const key = this.#keyOf(items[i] as T);
        if (this.#pos.has(key)) throw new Error(`MinHeap: duplicate key ${key}`);
        this.#pos.set(key, i);
      }
    }
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  /** Removes every item. */
  clear(): void {
    this.#items = [];
    this.#pos?.clear();
  }

  /** The items in heap (not sorted) order. A copy. O(n). */
  toArray(): T[] {
    return [...this.#items];
  }

  #index(): Map<string, number> {
    if (!this.#pos) throw new Error('MinHeap: built without keyOf');
    return this.#pos;
  }

  #removeAt(i: number): T {
    const items = this.#items;
    const last = items.length - 1;
    const removed = items[i] as T;
    if (i !== last) {
      this.#swap(i, last);
      items.pop();
      if (!this.#siftDown(i)) this.#siftUp(i);
    } else {
      items.pop();
    }
    if (this.#pos && this.#keyOf) this.#pos.delete(this.#keyOf(removed));
    return removed;
  }

  #siftUp(start: number): void {
    const items = this.#items;
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(items[i] as T, items[parent] as T)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** @returns true if the item at `start` moved. */
  #siftDown(start: number): boolean {
    const items = this.#items;
    const n = items.length;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && this.#less(items[l] as T, items[smallest] as T)) smallest = l;
      if (r < n && this.#less(items[r] as T, items[smallest] as T)) smallest = r;
      if (smallest === i) return i > start;
      this.#swap(i, smallest);
      i = smallest;
    }
  }

  #swap(i: number, j: number): void {
    const items = this.#items;
    const a = items[i] as T;
    const b = items[j] as T;
    items[i] = b;
    items[j] = a;
    if (this.#pos && this.#keyOf) {
      this.#pos.set(this.#keyOf(b), i);
      this.#pos.set(this.#keyOf(a), j);
    }
  }
}
