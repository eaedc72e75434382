/**
 * A store-less watch on the core/v1 Events of one source (`fieldSelector=source=<component>`, all
 * namespaces), from "now" on: it lists one item to learn the collection's resourceVersion, then
 * watches from there and hands every ADDED or MODIFIED Event to a callback. Nothing is cached: an
 * informer would keep every Event of the source for its hour of life, ours included (a failure wave
 * at 150,000 pods records one `NodeNotReady` per pod), only to be read once.
 *
 * Reconnects from the last resourceVersion (bookmarks advance it) after a stream ends; after a 410
 * Gone or an error it backs off as an informer's reflector does (src/kube/backoff.ts) and, on 410,
 * starts again from "now": Events in that gap are not seen, which the second-actor check accepts
 * (it counts, it never acts; its object evidence comes from the informers, which relist).
 *
 * Mirrors nothing upstream (client-go's `watchtools.NewRetryWatcher` is the nearest: a watch resumed
 * from its last resourceVersion without a store).
 */
import type { Logger } from '../log/logger.js';
import { isTimeout, type WatchLike } from '../kube/listwatch.js';
import { ReflectorBackoff } from '../kube/backoff.js';
import type { Clock, TimerHandle } from '../util/clock.js';

/** How long one watch request may stay open, seconds (random in [5, 10) min, as a reflector's `timeoutSeconds`). */
const MIN_WATCH_TIMEOUT_S = 300;

/** What an {@link EventTail} needs, injected. */
export interface EventTailDeps {
  /** The source, e.g. `node-controller`: the watch's `fieldSelector` is `source=<component>`. */
  component: string;
  /**
   * The Event collection's current resourceVersion for that selector (`GET /api/v1/events?limit=1`).
   * May throw; the tail backs off and tries again.
   */
  currentResourceVersion(fieldSelector: string, signal: AbortSignal): Promise<string>;
  watch: WatchLike;
  /** Called for every ADDED or MODIFIED Event (its JSON). Must not throw (a throw is logged). */
  onEvent(raw: unknown): void;
  clock: Clock;
  log: Logger;
  /** `[0, 1)` source for the watch timeout and the backoff jitter (default `Math.random`). */
  random?: () => number;
}

/** Counters of one tail, for /debug/state and tests. */
export interface EventTailStats {
  component: string;
  watching: boolean;
  /** Events handed to the callback. */
  events: number;
  /** Times it started again from "now" (410 Gone, or an error before any resourceVersion). */
  restarts: number;
  lastError: string | undefined;
}

const rvOf = (o: unknown): string => {
  const rv = (o as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === 'string' ? rv : '';
};

/** The tail (see the module comment). {@link start} once; {@link stop} at shutdown. */
export class EventTail {
  readonly #d: EventTailDeps;
  readonly #backoff: ReflectorBackoff;
  readonly #random: () => number;
  readonly #stats: EventTailStats;
  #rv = '';
  #stopped = true;
  #abort: AbortController | undefined;
  #stream: AbortController | undefined;
  #timer: TimerHandle | undefined;

  /** @param deps see {@link EventTailDeps}. Never throws. */
  constructor(deps: EventTailDeps) {
    this.#d = deps;
    this.#random = deps.random ?? Math.random;
    this.#backoff = new ReflectorBackoff({ clock: deps.clock, random: this.#random });
    this.#stats = { component: deps.component, watching: false, events: 0, restarts: 0, lastError: undefined };
  }

  /** Starts watching from now. Idempotent. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#abort = new AbortController();
    void this.#run();
  }

  /** Stops the watch and any pending retry. Idempotent. */
  stop(): void {
    this.#stopped = true;
    this.#abort?.abort();
    this.#stream?.abort();
    this.#timer?.cancel();
    this.#stats.watching = false;
  }

  /** A copy of the counters. */
  stats(): EventTailStats {
    return { ...this.#stats };
  }

  get #selector(): string {
    return `source=${this.#d.component}`;
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    try {
      if (this.#rv === '') {
        this.#rv = await this.#d.currentResourceVersion(this.#selector, this.#abort?.signal ?? AbortSignal.timeout(60_000));
      }
      const openedMs = this.#d.clock.monotonic();
      const result = await this.#watchOnce();
      if (this.#stopped) return;
      if (result === 'gone') {
        this.#rv = '';
        this.#stats.restarts++;
        this.#d.log.info({ component: this.#d.component }, 'second-actor check: the Event watch fell behind (410 Gone); watching again from now (Events in between are not seen)');
      } else if (result === 'closed') {
        // A clean end (the server's timeout): resume at once from the last resourceVersion, unless
        // the stream ended within a second (a proxy that closes at once must not make a hot loop).
        if (this.#d.clock.monotonic() - openedMs >= 1000) {
          void this.#run();
          return;
        }
      } else {
        throw result;
      }
    } catch (err) {
      if (this.#stopped) return;
      this.#stats.lastError = String(err);
      this.#d.log.debug({ component: this.#d.component, err: String(err) }, 'second-actor check: the Event watch failed; trying again');
    }
    this.#timer = this.#d.clock.setTimeout(() => void this.#run(), this.#backoff.step());
  }

  /** One watch stream. @returns `'closed'` (clean end), `'gone'` (410), or the error that ended it. */
  #watchOnce(): Promise<'closed' | 'gone' | Error> {
    return new Promise((resolve) => {
      let gone = false;
      let settled = false;
      const settle = (r: 'closed' | 'gone' | Error): void => {
        if (settled) return;
        settled = true;
        this.#stats.watching = false;
        resolve(r);
      };
      const query = {
        fieldSelector: this.#selector,
        resourceVersion: this.#rv,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(MIN_WATCH_TIMEOUT_S * (1 + this.#random())),
      };
      this.#d.watch
        .watch(
          '/api/v1/events',
          query,
          (phase, obj) => {
            if (phase === 'ERROR') {
              if ((obj as { code?: unknown } | null)?.code === 410) gone = true;
              return;
            }
            const rv = rvOf(obj);
            if (rv !== '') this.#rv = rv;
            if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
            this.#stats.events++;
            try {
              this.#d.onEvent(obj);
            } catch (err) {
              this.#d.log.error({ component: this.#d.component, err: String(err) }, 'second-actor check: an Event handler threw');
            }
          },
          (err) => {
            const code = (err as { statusCode?: unknown; code?: unknown } | null)?.statusCode ?? (err as { code?: unknown } | null)?.code;
            if (gone || code === 410) settle('gone');
            // client-node ends a quiet stream at its inactivity timeout: a clean end, as for the informers.
            else if (err && !isTimeout(err)) settle(err instanceof Error ? err : new Error(String(err)));
            else settle('closed');
          },
        )
        .then(
          (controller) => {
            if (settled || this.#stopped) {
              controller.abort();
              return;
            }
            this.#stream = controller;
            this.#stats.watching = true;
          },
          (err: unknown) => settle(err instanceof Error ? err : new Error(String(err))),
        );
    });
  }
}
