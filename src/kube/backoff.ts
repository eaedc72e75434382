/**
 * The reflector's backoff manager: how long an informer waits before it lists or watches again.
 *
 * Mirrors client-go v1.37 `tools/cache/reflector.go` (`defaultBackoffInit` 800 ms,
 * `defaultBackoffFactor` 2, `defaultBackoffJitter` 1.0, `defaultBackoffMax` 30 s,
 * `defaultBackoffReset` 2 min) built with apimachinery `wait.Backoff.DelayWithReset`
 * (`backoffManager.Step`, `delay`). Two properties matter for the safety rule, because they decide
 * how soon an informer sees the cluster again after an API server outage, and so how soon its
 * controller can act: each wait is uniform in [d, 2d) (never less than the base), and the base keeps
 * doubling across healthy streams until 2 minutes have passed since the last reset, so a relist that
 * a 410 forces right after an outage waits one more (long) step, exactly as kube-controller-manager's
 * informers do.
 */
import type { Clock } from '../util/clock.js';

/** Options of {@link ReflectorBackoff}; every duration in **milliseconds**. */
export interface ReflectorBackoffOptions {
  /** Monotonic time source ({@link Clock.monotonic}). */
  clock: Pick<Clock, 'monotonic'>;
  /** First base (default 800: client-go's `defaultBackoffInit`). */
  initialMs?: number;
  /** Largest base (default 30 000: `defaultBackoffMax`; waits of 30 to 60 s). */
  maxMs?: number;
  /** The bases start again from `initialMs` at the first step more than this long after the last reset (default 120 000: `defaultBackoffReset`). */
  resetMs?: number;
  /** `[0, 1)` source for the jitter (default `Math.random`). */
  random?: () => number;
}

/**
 * client-go's reflector backoff manager (`wait.Backoff{800ms, ×2, jitter 1.0, cap 30s}.DelayWithReset(clock, 2min)`).
 * Not thread-shared state of several informers: one per informer, as one per reflector upstream.
 */
export class ReflectorBackoff {
  readonly #clock: Pick<Clock, 'monotonic'>;
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #resetMs: number;
  readonly #random: () => number;
  #baseMs: number;
  #lastResetMs: number;
  #steps = 0;

  /** @param opts see {@link ReflectorBackoffOptions}. Never throws. */
  constructor(opts: ReflectorBackoffOptions) {
    this.#clock = opts.clock;
    this.#initialMs = opts.initialMs ?? 800;
    this.#maxMs = opts.maxMs ?? 30_000;
    this.#resetMs = opts.resetMs ?? 120_000;
    this.#random = opts.random ?? Math.random;
    this.#baseMs = this.#initialMs;
    // `DelayWithReset` starts its reset interval when the manager is made (`lastStart: c.Now()`).
    this.#lastResetMs = this.#clock.monotonic();
  }

  /**
   * The next wait, **milliseconds**: uniform in [base, 2·base), after which the base doubles up to
   * the cap. Mirrors `backoffManager.Step` + `delay`: more than `resetMs` after the last reset the
   * bases start again from `initialMs`.
   */
  step(): number {
    const now = this.#clock.monotonic();
    if (now - this.#lastResetMs > this.#resetMs) {
      this.#baseMs = this.#initialMs;
      this.#lastResetMs = now;
      this.#steps = 0;
    }
    const d = this.#baseMs;
    this.#baseMs = Math.min(this.#maxMs, d * 2);
    this.#steps++;
    return Math.round(d + this.#random() * d);
  }

  /** Steps taken since the last reset (for logs). */
  get steps(): number {
    return this.#steps;
  }
}
