/**
 * The deadline behind `Informer.expectResourceVersion` (src/kube/informer.ts): the newest
 * resourceVersion the API server has shown for an object of the collection, and one timer that
 * fires `catchUpMs` after the first of the calls it gathers. The informer decides at the deadline
 * whether its watch is still behind (and so stalled). Not in client-go (see the informer's method).
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import { compareResourceVersions } from './listwatch.js';

/** One pending catch-up deadline at a time; later calls raise the awaited resourceVersion, not the deadline. */
export class CatchUpDeadline {
  #pending: { rv: string; timer: TimerHandle } | undefined;

  /**
   * @param clock the informer's clock
   * @param catchUpMs how long, in milliseconds, a watch may stay behind a shown resourceVersion
   */
  constructor(
    private readonly clock: Clock,
    readonly catchUpMs: number,
  ) {}

  /**
   * Awaits `rv` unless the cache is already there (or the two cannot be compared). The first call
   * starts the timer; `due(rv)` is called once at the deadline with the newest `rv` given meanwhile.
   * @param rv the resourceVersion the API server showed
   * @param cacheRv the informer's resourceVersion now
   */
  expect(rv: string, cacheRv: string, due: (rv: string) => void): void {
    if (compareResourceVersions(rv, cacheRv) !== 1) return;
    if (this.#pending) {
      if (compareResourceVersions(rv, this.#pending.rv) === 1) this.#pending.rv = rv;
      return;
    }
    const pending = {
      rv,
      timer: this.clock.setTimeout(() => {
        this.#pending = undefined;
        due(pending.rv);
      }, this.catchUpMs),
    };
    this.#pending = pending;
  }

  /** Drops the pending deadline (the informer stopped). */
  cancel(): void {
    this.#pending?.timer.cancel();
    this.#pending = undefined;
  }
}
