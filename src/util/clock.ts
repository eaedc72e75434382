/**
 * The injected clock. Every decision in the controller reads time through a {@link Clock}
 * so that unit tests can drive it with {@link FakeClock} instead of real timers.
 *
 * Mirrors upstream's injectable `now func() metav1.Time` in
 * `pkg/controller/nodelifecycle/node_lifecycle_controller.go` (`Controller.now`).
 */

/** A cancellable timer handle returned by {@link Clock.setTimeout}. */
export interface TimerHandle {
  /** Cancels the timer; a no-op if it already fired. */
  cancel(): void;
}

/**
 * Time source and timer factory.
 * All values are epoch **milliseconds**; all delays are **milliseconds**.
 *
 * Two readings, as Go's `time.Now()` carries two: {@link Clock.now} is the wall clock, which NTP
 * may step; {@link Clock.monotonic} is elapsed time, which no step moves. A deadline that is a
 * duration measured from something this process observed (upstream arms `time.AfterFunc(d)` or
 * compares two `time.Now()` readings, which Go does on the monotonic reading) must follow
 * {@link Clock.monotonic}, or a forward step would make it act sooner; a deadline anchored on a
 * persisted timestamp (a taint's `timeAdded`, a restart-safe record) can only be a wall time,
 * since after a restart nothing else exists.
 */
export interface Clock {
  /** Current time in epoch milliseconds (the wall clock: may step). */
  now(): number;
  /**
   * Elapsed time in **milliseconds** from an arbitrary origin (the monotonic clock: never steps,
   * never goes back). Only differences of two readings of the same clock mean anything.
   * Timers ({@link Clock.setTimeout}) run on this clock.
   */
  monotonic(): number;
  /**
   * Calls `fn` once after `delayMs` milliseconds (negative delays run as soon as possible).
   * Real timers are `unref`'d, so a pending timer never keeps the process alive on its own.
   */
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  /** Resolves after `delayMs` milliseconds. Never rejects. */
  sleep(delayMs: number): Promise<void>;
}

// Real timers are unref'd, so Node's own counts (process.getActiveResourcesInfo, prom-client's
// nodejs_active_resources) leave them out; this count is how the soak sees a timer leak.
let pendingReal = 0;

/**
 * Timers of {@link realClock} set and neither fired nor cancelled yet (its sleeps included): the
 * process's pending controller timers, for `/debug/state`. Never throws.
 */
export function pendingRealTimers(): number {
  return pendingReal;
}

/** The process clock: `Date.now()` and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, delayMs) {
    let pending = true;
    const settle = (): boolean => {
      if (!pending) return false;
      pending = false;
      pendingReal--;
      return true;
    };
    pendingReal++;
    const t = setTimeout(() => {
      settle();
      fn();
    }, Math.max(0, delayMs));
    t.unref();
    return {
      cancel: () => {
        if (settle()) clearTimeout(t);
      },
    };
  },
  sleep: (delayMs) =>
    new Promise<void>((resolve) => {
      pendingReal++;
      const t = setTimeout(() => {
        pendingReal--;
        resolve();
      }, Math.max(0, delayMs));
      t.unref();
    }),
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A manually advanced clock for unit tests. Time moves only through {@link FakeClock.advance}
 * or {@link FakeClock.set}; due timers fire in time order (ties in creation order).
 * {@link FakeClock.step} models an NTP step: it moves the wall clock ({@link FakeClock.now}) only,
 * not the monotonic one nor the timers.
 */
export class FakeClock implements Clock {
  #now: number;
  /** The wall clock's offset from the monotonic timeline, ms (moved by {@link FakeClock.step}). */
  #wallOffset = 0;
  #seq = 0;
  #timers: PendingTimer[] = [];

  /** @param startMs initial time, epoch milliseconds (default 2026-01-01T00:00:00Z). */
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now + this.#wallOffset;
  }

  /** The monotonic reading: the timers' timeline, in the same epoch milliseconds as the start (no step moves it). */
  monotonic(): number {
    return this.#now;
  }

  /**
   * Steps the wall clock by `ms` (positive: forward), as NTP does; the monotonic clock and the
   * pending timers do not move.
   */
  step(ms: number): void {
    this.#wallOffset += ms;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const timer: PendingTimer = { at: this.#now + Math.max(0, delayMs), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, delayMs));
  }

  /** Number of timers that are still pending (not fired, not cancelled). */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /**
   * Moves time forward by `ms` milliseconds, firing every timer that becomes due, in order.
   * Timers scheduled by fired callbacks also fire if they fall inside the window.
   * @throws {RangeError} if `ms` is negative.
   */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError(`FakeClock.advance: negative step ${ms}`);
    const target = this.#now + ms;
    for (let due = this.#takeDue(target); due; due = this.#takeDue(target)) due.fn();
    this.#finish(target);
  }

  /** Like {@link advance}, but yields to the microtask queue after each fired timer so awaited work settles. */
  async advanceAsync(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError(`FakeClock.advanceAsync: negative step ${ms}`);
    const target = this.#now + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.#takeDue(target);
      if (!due) break;
      due.fn();
    }
    this.#finish(target);
    await flushMicrotasks();
  }

  /** The earliest timer due at or before `target` (ties in creation order), marked fired, with time moved to it. */
  #takeDue(target: number): PendingTimer | undefined {
    const due = this.#timers.filter((t) => !t.cancelled && t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
    if (!due) return undefined;
    due.cancelled = true;
    this.#now = Math.max(this.#now, due.at);
    return due;
  }

  #finish(target: number): void {
    this.#timers = this.#timers.filter((t) => !t.cancelled);
    this.#now = target;
  }

  /** Sets the absolute time (epoch ms) without firing timers in between, wall and monotonic alike (no step). For table-driven tests. */
  set(nowMs: number): void {
    this.#now = nowMs - this.#wallOffset;
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Sleeps `delayMs` milliseconds on `clock`, waking early when `signal` aborts.
 * @returns true when the full sleep elapsed, false when aborted.
 */
export function sleepUnlessAborted(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve(false);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A clock for deadlines that are durations measured from this process's own observations (a
 * heartbeat seen, a node first missed, a volume released), where upstream compares two
 * `time.Now()` readings or arms `time.AfterFunc`, both on Go's monotonic clock.
 *
 * `now()` is the wall clock, except that it never runs ahead of the monotonic clock since the
 * previous reading: `now_k = min(wall_k, now_{k-1} + (monotonic_k − monotonic_{k-1}))`. So the time
 * between two readings never exceeds the elapsed time (a forward NTP step cannot make a deadline
 * measured in it come sooner), and `now()` is never ahead of the wall clock (a deadline anchored on
 * a persisted timestamp comes no sooner than on the wall clock). It follows a backward step at once
 * (which only delays), and after a forward step it lags the wall clock by the step until a
 * backward one takes it back: the cost is that wall-anchored deadlines come that much later.
 * Never use it to stamp a persisted timestamp (a taint's `timeAdded`): there the lag would move a
 * restart-safe anchor earlier. Writers keep the wall clock.
 *
 * @param clock the wall and monotonic source; its timers are used as they are.
 * @returns a {@link Clock}; all values epoch **milliseconds**. Never throws.
 */
export function steadyClock(clock: Clock): Clock {
  let last = clock.now();
  let lastMono = clock.monotonic();
  return {
    now(): number {
      const wall = clock.now();
      const mono = clock.monotonic();
      last = Math.min(wall, last + (mono - lastMono));
      lastMono = mono;
      return last;
    },
    monotonic: () => clock.monotonic(),
    setTimeout: (fn, delayMs) => clock.setTimeout(fn, delayMs),
    sleep: (delayMs) => clock.sleep(delayMs),
  };
}

/**
 * An observation this process made at monotonic time `mono` (a {@link Clock.monotonic} reading),
 * as the wall time it would be had the wall clock not stepped since: now less the elapsed time.
 * A deadline computed from it (`+ tolerationSeconds`, `+ grace`) follows elapsed time, as upstream's
 * `time.AfterFunc` does, and a deadline mixing it with a persisted wall time (`max(timeAdded, it)`)
 * is due only once each part has passed on its own clock.
 * @returns epoch **milliseconds**. Never throws.
 */
export function wallOf(clock: Clock, mono: number): number {
  return clock.now() - (clock.monotonic() - mono);
}
