/**
 * The pending-deletion store of the taint eviction controller: pod key → (uid, deadline, payload),
 * driven by ONE timer on the injected clock over a min-heap of deadlines.
 *
 * Mirrors `pkg/controller/tainteviction/timed_workers.go` (`TimedWorkerQueue`). Upstream keeps one
 * `time.AfterFunc` per pod; at 100,000 pending pods that is 100,000 runtime timers, so we keep a
 * heap and arm a single timer for its head.
 */
import type { Clock, TimerHandle } from './clock.js';
import { MinHeap } from './heap.js';

/**
 * Node's `setTimeout` turns any delay above 2^31−1 ms (~24.8 days) into 1 ms, so a long
 * `tolerationSeconds` would fire at once. We never arm further ahead than this; waking early just
 * re-arms.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** One pending deletion. All times are epoch **milliseconds**. */
export interface ScheduledEviction<P> {
  /** `namespace/name` (src/kube/objects.ts `podKey`). */
  readonly key: string;
  /** The pod UID the deletion was decided for. */
  readonly uid: string;
  /** When the deletion is due (upstream `FireAt`). */
  readonly atMs: number;
  /** Clock time when it was scheduled (upstream `CreatedAt`); `atMs <= scheduledAtMs` means "immediate". */
  readonly scheduledAtMs: number;
  readonly payload: P;
}

/** Called once for each due entry, in deadline order. */
export type DueCallback<P> = (entry: ScheduledEviction<P>) => void;

/** Options for {@link DeadlineScheduler}. */
export interface DeadlineSchedulerOptions<P> {
  /**
   * Receives an error thrown by an `onDue` callback. Without it, the scheduler finishes delivering
   * the batch, re-arms, and then rethrows (an `AggregateError` if several threw) so a bug is loud.
   */
  onError?: (err: unknown, entry: ScheduledEviction<P>) => void;
}

interface Slot<P> {
  entry: ScheduledEviction<P>;
  /** Tie-breaker: equal deadlines fire in scheduling order. */
  seq: number;
  /** The deadline on the monotonic clock ({@link Clock.monotonic}), fixed when scheduled. */
  atMono: number;
  /**
   * The (monotonic deadline, seq) the heap orders this slot by: `atMono` and `seq` when it was
   * pushed. A later deadline for the same key only updates `entry`, `atMono` and `seq` and leaves
   * these behind, so they are never later than the slot's true order; the slot is re-pushed when it
   * surfaces.
   */
  heapAtMono: number;
  heapSeq: number;
  /** Whether this slot is in the heap; false once popped for delivery (a reschedule then needs a new slot). */
  queued: boolean;
}

/**
 * Pending pod deletions keyed by `namespace/name`, each with a uid, a deadline and a payload.
 *
 * Semantics relative to upstream `TimedWorkerQueue` (`timed_workers.go`):
 * - {@link schedule} behaves like `UpdateWork`: it always replaces the key's entry (deadline, uid
 *   and payload), earlier or later. {@link scheduleIfAbsent} behaves like `AddWork`: it keeps an
 *   existing entry, whatever its deadline. The "never lengthen" policy of `processPodOnNode` is not
 *   the store's business; it lives in `decision.ts` `planEviction`.
 * - The deadline is absolute (`atMs`), never `fireAt - createdAt` relative to the scheduling time.
 *   Deliberate difference from upstream: `createWorker` arms `AfterFunc(fireAt - createdAt)` from
 *   *now*, which is only right when `createdAt == now`.
 * - An entry is due only once both clocks say so: the monotonic clock has run `atMs - now` since it
 *   was scheduled (upstream's `time.AfterFunc(fireAt.Sub(now))`, which a wall-clock step does not
 *   move) and the wall clock has reached `atMs`. Deliberate difference from upstream, which looks
 *   at the monotonic clock only: after a backward NTP step ours waits for the wall clock too, so it
 *   can only fire later (by at most the step), never sooner; a forward step makes neither sooner.
 * - An entry at or before now fires on the next timer turn (delay 0), like upstream's immediate
 *   goroutine, so callers never re-enter their own callback synchronously.
 * - An entry leaves the store *before* its callback runs. Deliberate difference from upstream:
 *   upstream deletes the key after the work function returns, which also deletes a replacement
 *   added meanwhile (the pending `TestRunningWorkerCompletionDoesNotRemoveReplacement`). Callers
 *   that must suppress re-scheduling while a deletion runs track that themselves.
 * - The key ignores the uid, as upstream's does; the uid travels with the entry so the caller can
 *   tell a recreated pod from the one the deletion was decided for.
 *
 * Cost: schedule O(log n), and O(1) when it moves a pending deadline later (the common case: a
 * node's probe deadline moves with every heartbeat; the slot keeps its place in the heap under its
 * earlier deadline and is re-pushed under the true one only if it surfaces first); cancel O(1)
 * (lazy: the heap node is dropped when it surfaces, and the heap is rebuilt when stale nodes
 * outnumber live ones); due delivery O(log n) per entry.
 */
export class DeadlineScheduler<P> {
  readonly #clock: Clock;
  readonly #onError: DeadlineSchedulerOptions<P>['onError'];
  readonly #slots = new Map<string, Slot<P>>();
  readonly #heap = new MinHeap<Slot<P>>((a, b) => a.heapAtMono < b.heapAtMono || (a.heapAtMono === b.heapAtMono && a.heapSeq < b.heapSeq));
  readonly #listeners = new Set<DueCallback<P>>();
  #seq = 0;
  #timer: TimerHandle | undefined;
  /** Monotonic ms ({@link Clock.monotonic}) at which {@link #timer} wakes. */
  #timerAtMono = 0;
  #delivering = false;

  /**
   * @param clock time source and timer factory (epoch ms); use `FakeClock` in tests.
   * @param options see {@link DeadlineSchedulerOptions}.
   */
  constructor(clock: Clock, options: DeadlineSchedulerOptions<P> = {}) {
    this.#clock = clock;
    this.#onError = options.onError;
  }

  /** Number of pending entries. */
  get size(): number {
    return this.#slots.size;
  }

  /** Whether `key` (`namespace/name`) has a pending entry. */
  has(key: string): boolean {
    return this.#slots.has(key);
  }

  /** The pending entry of `key`, or `undefined`. Upstream `GetWorkerUnsafe`. */
  get(key: string): ScheduledEviction<P> | undefined {
    return this.#slots.get(key)?.entry;
  }

  /**
   * Sets `key`'s deadline to `atMs` (epoch milliseconds), replacing any pending entry for the key.
   * @returns the new entry.
   * @throws {RangeError} if `atMs` is not a finite number.
   * Mirrors `TimedWorkerQueue.UpdateWork` (minus its "same FireAt → keep" shortcut, which is
   * indistinguishable here because the deadline is absolute).
   */
  schedule(key: string, uid: string, atMs: number, payload: P): ScheduledEviction<P> {
    if (!Number.isFinite(atMs)) throw new RangeError(`DeadlineScheduler.schedule(${key}): deadline ${atMs} is not finite`);
    const now = this.#clock.now();
    const entry: ScheduledEviction<P> = { key, uid, atMs, scheduledAtMs: now, payload };
    const seq = this.#seq++;
    const atMono = this.#clock.monotonic() + (atMs - now);
    const pending = this.#slots.get(key);
    if (pending !== undefined && pending.queued && pending.heapAtMono <= atMono) {
      // Later (or equal) deadline: the slot's heap position stays valid as a lower bound, and the
      // armed timer wakes no later than needed. #peekLive re-pushes it if it surfaces early.
      pending.entry = entry;
      pending.seq = seq;
      pending.atMono = atMono;
      return entry;
    }
    const slot: Slot<P> = { entry, seq, atMono, heapAtMono: atMono, heapSeq: seq, queued: true };
    this.#slots.set(key, slot);
    this.#heap.push(slot);
    this.#compactIfStale();
    this.#arm();
    return entry;
  }

  /**
   * Schedules `key` only when nothing is pending for it.
   * @returns true if it was added, false if an entry (of any uid and deadline) was kept.
   * @throws {RangeError} if `atMs` is not a finite number.
   * Mirrors `TimedWorkerQueue.AddWork`.
   */
  scheduleIfAbsent(key: string, uid: string, atMs: number, payload: P): boolean {
    if (this.#slots.has(key)) return false;
    this.schedule(key, uid, atMs, payload);
    return true;
  }

  /**
   * Drops `key`'s pending entry.
   * @returns whether something was pending. Never throws.
   * Mirrors `TimedWorkerQueue.CancelWork`, except that upstream returns false for an immediate
   * (nil) entry; `planEviction` reproduces that distinction for the cancel event.
   */
  cancel(key: string): boolean {
    const removed = this.#slots.delete(key);
    if (removed) this.#compactIfStale();
    return removed;
  }

  /**
   * Drops every pending entry and stops the timer.
   * @returns how many entries were dropped.
   * Mirrors `TimedWorkerQueue.CancelAndWait`, without the wait: callbacks run synchronously.
   */
  clear(): number {
    const n = this.#slots.size;
    this.#slots.clear();
    this.#heap.clear();
    this.#disarm();
    return n;
  }

  /**
   * All pending entries sorted by deadline (ties in scheduling order), for a `status` command.
   * O(n log n); returns a new array.
   */
  entries(): ScheduledEviction<P>[] {
    return [...this.#slots.values()].sort((a, b) => a.entry.atMs - b.entry.atMs || a.seq - b.seq).map((s) => s.entry);
  }

  /** The earliest pending deadline (epoch ms), or `undefined` when nothing is pending. */
  nextDeadlineMs(): number | undefined {
    return this.#peekLive()?.entry.atMs;
  }

  /**
   * Registers `callback` to receive each entry once its deadline has passed (`atMs <= now`), in
   * deadline order. The entry is already removed when the callback runs; the callback may schedule
   * or cancel freely, and cancelling or replacing a not-yet-delivered entry of the same batch stops
   * its delivery. With no callback registered, due entries are dropped.
   * @returns a function that unregisters the callback.
   */
  onDue(callback: DueCallback<P>): () => void {
    this.#listeners.add(callback);
    return () => void this.#listeners.delete(callback);
  }

  /**
   * The heap head if it is still the live entry of its key under its true (deadline, seq),
   * discarding cancelled or replaced heads and re-pushing heads whose deadline moved later. Every
   * slot's heap order is no later than its true order, so the first head that is in its true order
   * is the earliest pending entry.
   */
  #peekLive(): Slot<P> | undefined {
    for (;;) {
      const top = this.#heap.peek();
      if (top === undefined) return undefined;
      if (this.#slots.get(top.entry.key) !== top) {
        this.#heap.pop();
        continue;
      }
      if (top.heapAtMono === top.atMono && top.heapSeq === top.seq) return top;
      this.#heap.pop();
      top.heapAtMono = top.atMono;
      top.heapSeq = top.seq;
      this.#heap.push(top);
    }
  }

  #compactIfStale(): void {
    if (this.#heap.size <= 2 * this.#slots.size + 1024) return;
    const live = [...this.#slots.values()];
    for (const slot of live) {
      slot.heapAtMono = slot.atMono;
      slot.heapSeq = slot.seq;
      slot.queued = true;
    }
    this.#heap.rebuild(live);
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#delivering) return;
    const head = this.#peekLive();
    if (head === undefined) {
      this.#disarm();
      return;
    }
    const mono = this.#clock.monotonic();
    // Both clocks must reach the deadline (see the class comment); timers run on the monotonic one.
    const waitMs = Math.max(head.atMono - mono, head.entry.atMs - this.#clock.now());
    const wakeAt = mono + Math.min(waitMs, MAX_TIMER_DELAY_MS);
    // A timer that wakes no later than needed is kept: waking early for a cancelled head is cheap,
    // re-arming on every cancel is not.
    if (this.#timer !== undefined && this.#timerAtMono <= wakeAt) return;
    this.#disarm();
    this.#timerAtMono = wakeAt;
    this.#timer = this.#clock.setTimeout(() => this.#fire(), wakeAt - mono);
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    const mono = this.#clock.monotonic();
    const due: Slot<P>[] = [];
    for (let head = this.#peekLive(); head !== undefined && head.atMono <= mono && head.entry.atMs <= now; head = this.#peekLive()) {
      this.#heap.pop();
      head.queued = false;
      due.push(head);
    }
    const errors: unknown[] = [];
    this.#delivering = true;
    try {
      for (const slot of due) {
        // An earlier callback of this batch may have cancelled or replaced this entry.
        if (this.#slots.get(slot.entry.key) !== slot) continue;
        this.#slots.delete(slot.entry.key);
        for (const listener of [...this.#listeners]) {
          try {
            listener(slot.entry);
          } catch (err) {
            if (this.#onError) this.#onError(err, slot.entry);
            else errors.push(err);
          }
        }
      }
    } finally {
      this.#delivering = false;
      this.#arm();
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'DeadlineScheduler: onDue callbacks threw');
  }
}
