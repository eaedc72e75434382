/**
 * A binary min-heap over an array. Used by {@link DeadlineScheduler} so that one timer can serve
 * 100,000 pending evictions with O(log n) insertion and removal of the earliest item.
 *
 * Plays the role of Go's `container/heap` (upstream's timed queues use it, e.g.
 * `pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go` `TimedQueue`).
 */
export class MinHeap<T> {
  #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;

  /** @param less strict ordering: true when `a` must come out before `b`. */
  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  /** Number of items held. */
  get size(): number {
    return this.#items.length;
  }

  /** The smallest item without removing it, or `undefined` when empty. O(1). */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds an item. O(log n). Never throws. */
  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(items[i] as T, items[parent] as T)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** Removes and returns the smallest item, or `undefined` when empty. O(log n). */
  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.#siftDown(0);
    }
    return top;
  }

  /** Replaces the contents with `items` (taken over, not copied). O(n). */
  rebuild(items: T[]): void {
    this.#items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  /** Removes every item. */
  clear(): void {
    this.#items = [];
  }

  #siftDown(start: number): void {
    const items = this.#items;
    const n = items.length;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && this.#less(items[l] as T, items[smallest] as T)) smallest = l;
      if (r < n && this.#less(items[r] as T, items[smallest] as T)) smallest = r;
      if (smallest === i) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }

  #swap(i: number, j: number): void {
    const items = this.#items;
    const t = items[i] as T;
    items[i] = items[j] as T;
    items[j] = t;
  }
}
