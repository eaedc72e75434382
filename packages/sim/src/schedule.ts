/**
 * Timing machinery of the kubelet fleet simulator: one heap-driven scheduler for every node's
 * periodic heartbeats, and a sliding window of heartbeat lag samples.
 *
 * Why one scheduler: thousands of `setInterval`s cost a timer each and fire in bursts; one
 * timer armed for the earliest due entry of a binary heap scales to tens of thousands of
 * periodic jobs with O(log n) work per tick. Time comes from the injected {@link Clock}, so
 * unit tests drive it with `FakeClock`.
 */
import type { Clock, TimerHandle } from '../../../src/util/clock.js';
import { MinHeap } from '../../../src/util/heap.js';

/** Which periodic heartbeat a schedule entry drives. */
export type HeartbeatKind = 'lease' | 'status';

interface Entry {
  /** epoch ms the job is due */
  at: number;
  seq: number;
  key: string;
  gen: number;
}

/** Called when a periodic job comes due. `scheduledAt` is the epoch ms it was due (lag = now − scheduledAt). */
export type DueHandler = (name: string, kind: HeartbeatKind, scheduledAt: number) => void;

/**
 * Fixed-rate periodic jobs for many nodes behind one timer.
 *
 * Each `(name, kind)` pair has at most one live schedule. A job's next due time is its previous
 * *scheduled* time plus the interval (fixed rate, not fixed delay), so a simulator that falls
 * behind shows it as lag instead of silently stretching the period. When a whole interval was
 * missed (the event loop stalled), the schedule skips ahead to the next future slot rather than
 * firing a burst of catch-up heartbeats, which a kubelet would not do either; skipped slots are
 * counted in {@link HeartbeatScheduler.missed}.
 *
 * Mirrors the role of kubelet's `wait.JitterUntil` loops in `pkg/kubelet/nodelease/controller.go`
 * (`Run`) and `pkg/kubelet/kubelet.go` (`syncNodeStatus` loop), one per node, multiplexed here.
 */
export class HeartbeatScheduler {
  readonly #clock: Clock;
  readonly #onDue: DueHandler;
  readonly #heap = new MinHeap<Entry>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  readonly #live = new Map<string, { gen: number; intervalMs: number; name: string; kind: HeartbeatKind }>();
  #seq = 0;
  #gen = 0;
  #timer: TimerHandle | undefined;
  #armedAt = Infinity;
  #stopped = false;
  /** Number of whole periods skipped because the scheduler fell more than one interval behind. */
  missed = 0;

  /**
   * @param clock time source (epoch ms) and timer factory.
   * @param onDue called synchronously for each due job; it must not throw (errors are swallowed
   *   so one bad job cannot stop every heartbeat).
   */
  constructor(clock: Clock, onDue: DueHandler) {
    this.#clock = clock;
    this.#onDue = onDue;
  }

  /**
   * Starts (or restarts) the periodic job `(name, kind)`, first due at `firstAt`.
   * @param firstAt epoch ms of the first run.
   * @param intervalMs period in milliseconds.
   * @throws {RangeError} when `intervalMs` is not a positive finite number.
   */
  schedule(name: string, kind: HeartbeatKind, firstAt: number, intervalMs: number): void {
    if (!(intervalMs > 0) || !Number.isFinite(intervalMs)) {
      throw new RangeError(`heartbeat interval must be a positive number of milliseconds, got ${intervalMs}`);
    }
    if (this.#stopped) return;
    const key = `${kind}\u0000${name}`;
    const gen = ++this.#gen;
    this.#live.set(key, { gen, intervalMs, name, kind });
    this.#heap.push({ at: firstAt, seq: this.#seq++, key, gen });
    if (firstAt < this.#armedAt) this.#arm();
  }

  /** Stops the periodic job `(name, kind)`. A no-op when it is not scheduled. */
  cancel(name: string, kind: HeartbeatKind): void {
    // The heap entry stays until it surfaces; its generation no longer matches, so it is dropped then.
    this.#live.delete(`${kind}\u0000${name}`);
  }

  /** True when `(name, kind)` has a live schedule. */
  isScheduled(name: string, kind: HeartbeatKind): boolean {
    return this.#live.has(`${kind}\u0000${name}`);
  }

  /** Number of live periodic jobs. */
  get size(): number {
    return this.#live.size;
  }

  /** Cancels every job and the timer. Later `schedule` calls are ignored. */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#armedAt = Infinity;
    this.#heap.clear();
    this.#live.clear();
  }

  #arm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#armedAt = Infinity;
    // Drop stale entries at the top so a cancelled job never arms the timer.
    for (let top = this.#heap.peek(); top && this.#live.get(top.key)?.gen !== top.gen; top = this.#heap.peek()) {
      this.#heap.pop();
    }
    const top = this.#heap.peek();
    if (!top || this.#stopped) return;
    this.#armedAt = top.at;
    this.#timer = this.#clock.setTimeout(() => this.#fire(), top.at - this.#clock.now());
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    const now = this.#clock.now();
    for (let top = this.#heap.peek(); top && top.at <= now && !this.#stopped; top = this.#heap.peek()) {
      this.#heap.pop();
      const live = this.#live.get(top.key);
      if (!live || live.gen !== top.gen) continue;
      let next = top.at + live.intervalMs;
      if (next <= now) {
        const skip = Math.floor((now - top.at) / live.intervalMs);
        this.missed += skip;
        next = top.at + (skip + 1) * live.intervalMs;
      }
      this.#heap.push({ at: next, seq: this.#seq++, key: top.key, gen: top.gen });
      try {
        this.#onDue(live.name, live.kind, top.at);
      } catch {
        // The handler owns its error reporting; the scheduler must keep every other node beating.
      }
    }
    this.#arm();
  }
}

/** Percentile summary of a sample window, all values in milliseconds. */
export interface LagSummary {
  /** 50th percentile, ms (0 when there are no samples) */
  p50: number;
  /** 99th percentile, ms (0 when there are no samples) */
  p99: number;
  /** maximum, ms (0 when there are no samples) */
  max: number;
  /** number of samples in the window */
  samples: number;
}

/**
 * Nearest-rank percentile of already sorted values.
 * @param sorted ascending values
 * @param p percentile in (0, 100]
 * @returns the value, or 0 for an empty array.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/**
 * Sliding time window of samples (for example heartbeat lag in ms), pruned by age.
 * Memory is bounded by `maxSamples`; the oldest samples go first.
 */
export class SampleWindow {
  readonly #windowMs: number;
  readonly #maxSamples: number;
  #times: number[] = [];
  #values: number[] = [];
  #head = 0;

  /**
   * @param windowMs how far back samples count, milliseconds.
   * @param maxSamples hard cap on retained samples.
   */
  constructor(windowMs = 60_000, maxSamples = 200_000) {
    this.#windowMs = windowMs;
    this.#maxSamples = maxSamples;
  }

  /** Records `value` observed at epoch ms `atMs`. */
  record(atMs: number, value: number): void {
    this.#times.push(atMs);
    this.#values.push(value);
    if (this.#times.length - this.#head > this.#maxSamples) this.#head++;
    this.#compact();
  }

  /** Summary of the samples newer than `nowMs − windowMs`. */
  summary(nowMs: number): LagSummary {
    this.#prune(nowMs);
    const sorted = this.#values.slice(this.#head).sort((a, b) => a - b);
    return {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.length ? (sorted[sorted.length - 1] as number) : 0,
      samples: sorted.length,
    };
  }

  #prune(nowMs: number): void {
    const cutoff = nowMs - this.#windowMs;
    while (this.#head < this.#times.length && (this.#times[this.#head] as number) < cutoff) this.#head++;
    this.#compact();
  }

  #compact(): void {
    // Amortised O(1): slice the dead prefix away only once it dominates the arrays.
    if (this.#head > 1024 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#values = this.#values.slice(this.#head);
      this.#head = 0;
    }
  }
}

/**
 * Evenly spread first-run offsets: item `index` of `count` starts `index/count` of an interval
 * after `startMs`, so N nodes never heartbeat in one burst.
 * @returns epoch ms of the first run.
 */
export function spreadStart(startMs: number, index: number, count: number, intervalMs: number): number {
  return startMs + (count > 0 ? (index / count) * intervalMs : 0);
}
