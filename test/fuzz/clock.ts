/**
 * The fuzz harness's clock: the same contract as src/util/clock.ts `FakeClock` (time moves only
 * through {@link FuzzClock.advanceAsync}; due timers fire in time order, ties in creation order;
 * the work a fired timer starts settles before the next one fires), made cheap enough for
 * 100,000-run campaigns. A run fires some 20,000 timers (the node lifecycle controller's tainting
 * pass alone runs every 100 ms, upstream's `NodeEvictionPeriod`), and `FakeClock` filters and sorts
 * every pending timer and yields eleven times per fired timer.
 *
 * Here: a binary heap (src/util/heap.ts) with lazy cancellation, and one full settle per fired
 * timer: a `setImmediate` turn, which Node only reaches once the microtask queue is empty, so every
 * promise chain the timer started (however deep) has run when the next timer fires.
 *
 * Times are epoch **milliseconds**; delays **milliseconds**.
 */
import type { Clock, TimerHandle } from '../../src/util/clock.js';
import { MinHeap } from '../../src/util/heap.js';

// A class and function declarations, not closures: tsx wraps every arrow function it creates in a
// naming helper, which at 20,000 timers a run was a tenth of the run's time.
class Timer implements TimerHandle {
  cancelled = false;
  constructor(
    readonly at: number,
    readonly seq: number,
    readonly fn: () => void,
  ) {}
  cancel(): void {
    this.cancelled = true;
  }
}

function onNextTurn(resolve: () => void): void {
  setImmediate(resolve);
}

function settle(): Promise<void> {
  return new Promise<void>(onNextTurn);
}

function earlier(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** A manually advanced clock for the fuzz harness (see the file header). */
export class FuzzClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new MinHeap<Timer>(earlier);
  /** Timers fired since construction (for the speed figures). */
  fired = 0;

  /** @param startMs the initial time, epoch ms. */
  constructor(startMs: number) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  /** The same timeline: the harness steps the controllers' wall clock in a wrapper (harness.ts), never this one. */
  monotonic(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const timer = new Timer(this.#now + Math.max(0, delayMs), this.#seq++, fn);
    this.#timers.push(timer);
    return timer;
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, delayMs));
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due (also those set by fired
   * timers inside the window), each after the previous one's work has settled.
   * @throws {RangeError} if `ms` is negative.
   */
  async advanceAsync(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError(`FuzzClock.advanceAsync: negative step ${ms}`);
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#timers.peek();
      if (!next || next.at > target) break;
      this.#timers.pop();
      if (next.cancelled) continue;
      next.cancel();
      if (next.at > this.#now) this.#now = next.at;
      this.fired++;
      next.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }
}
