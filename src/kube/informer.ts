// Why this file is over 500 lines: the Informer class is the list/watch loop of one collection (watch-list start with list+watch fallback, paging, 410 relist, bookmarks, backoff, watchdog, the sight signal), all sharing one resourceVersion and epoch; its wire helpers are in listwatch.ts and its store, indexes and handlers in informercache.ts.
/**
 * A self-healing list+watch informer that keeps **one slim copy** of each object.
 *
 * Design. client-node 2.0.1's `ListWatch` (dist/cache.js) is not used; only its `Watch`
 * (dist/watch.js, the streaming GET `?watch=true` with a 30 s inactivity timeout) is. The list side
 * is a paginated typed-API call supplied by the caller. This class owns the store:
 * `Map<key, {obj: T, rv}>` where `T` is the slim object from src/kube/objects.ts and `rv` the
 * object's resourceVersion. Wrapping `ListWatch` instead would have needed a converting `Watch`
 * adapter plus a wrapper object per item, and still left these gaps, each handled here:
 *
 * | client-node 2.0.1 gap (upstream issue) | what this class does |
 * |---|---|
 * | any error other than 410/timeout fires `error` and **stops** the informer (#1496, #680) | every error restarts the loop with client-go's reflector backoff (`backoff.ts`: each wait d to 2d, d from 800 ms doubling to 30 s), and a 410 waits one step before its relist |
 * | a watch can hang silently on a half-open connection (#596, #958, #2432) | `Watch`'s own 30 s inactivity timeout ends it, and a watchdog restarts the loop when nothing (event, bookmark, connect, list page) happened for `watchdogMs` |
 * | a stream that stalls or lags while connected is only noticed by that 30 s timer, and not at all while it still trickles | `expectResourceVersion(rv)`: a reader that saw a newer object from the API server says so, and a connected watch that has not caught up `catchUpMs` later is restarted (counted in `stalls`) |
 * | reconnect storms (#1933; 2.x backs off only after clean closes) | a watch that ends with no event in under `backoffInitialMs` counts as a failure and backs off |
 * | no `hasSynced`; `start()` resolves even when the list failed | `hasSynced()` turns true only after a complete, successful initial list |
 * | `update` gets only the new object (cache already overwritten) | `update(oldObj, newObj)` |
 * | no streaming watch-list (client-go's `WatchListClient`, default since 1.35) | the first sync and every relist are one watch with `sendInitialEvents=true`, synced at the `k8s.io/initial-events-end` bookmark; a server that refuses it gets the paginated list below |
 * | the initial list has no `limit` / `continue` | pages of `pageSize` (default 500); a 410 on a continue token falls back to one full list, as client-go's `pager.List` (`FullListIfExpired`) does |
 * | no indexers (`ObjectCache` has only `get`/`list`) | `indexers` + `byIndex` |
 * | `Date` from lists but `string` from watches (#655) | the slim converters normalise both to epoch ms |
 * | full objects cached, `managedFields` included | only the converter's output is kept |
 * | no bookmarks requested | `allowWatchBookmarks=true`; bookmarks advance the resourceVersion |
 * | after a restart only new changes are seen (#795) | a relist diffs against the store and delivers `add`, `update(old, new)` and `delete` for what changed, so level-based handlers converge |
 *
 * Mirrors client-go `tools/cache/reflector.go` (`ListAndWatch`, `watchHandler`, the backoff
 * manager), `delta_fifo.go` `Replace` (deletions for vanished objects) and `shared_informer.go`
 * (`HasSynced`, `OnUpdate(old, new)`).
 *
 * Deliberate difference from upstream: there is no periodic "resync" that replays the cache to
 * handlers (controllers here run their own periodic passes); instead `relistIntervalMs` optionally
 * re-reads the whole collection from the API server, which also repairs a cache that a watch bug
 * could have left stale.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { sleepUnlessAborted, type Clock, type TimerHandle } from '../util/clock.js';
import { ReflectorBackoff } from './backoff.js';
import { CatchUpDeadline } from './catchup.js';
import { apiStatusCode, describeError, instrumentWatch, uncompressedWatchConfig } from './client.js';
import type { Logger } from '../log/logger.js';
import { UndecodableEventError, UndecodableObject } from './undecodable.js';
import { InformerCache, UnreadableObjectError, type AddHandler, type DeleteHandler, type Entry, type ResyncHandler, type UpdateHandler, type WatchingHandler } from './informercache.js';
import {
  asObj,
  compareResourceVersions,
  httpStatus,
  INITIAL_EVENTS_END_ANNOTATION,
  isTimeout,
  rawResourceVersion,
  refusesWatchList,
  watchListClientEnabled,
  type ListPage,
  type ListPageFn,
  type WatchLike,
  type WatchResult,
} from './listwatch.js';

/** Options of {@link Informer}. All durations are milliseconds. */
export interface InformerOptions<T> {
  /** Short name for logs and stats, e.g. `nodes`. */
  name: string;
  /** Collection path for the watch, e.g. `/api/v1/nodes`. */
  path: string;
  /** Paginated list function. */
  list: ListPageFn;
  /** Wire/typed object → slim object; `undefined` marks it malformed (logged and skipped). */
  convert: (raw: unknown) => T | undefined;
  /** Cache key of a slim object, e.g. `name` or `namespace/name` (client-go `MetaNamespaceKeyFunc`). */
  keyOf: (obj: T) => string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Named index functions; `byIndex(name, value)` returns the objects whose function yields `value`. */
  indexers?: Record<string, (obj: T) => readonly string[]>;
  /** See {@link InformerCacheOptions.keepLastReadable}. */
  keepLastReadable?: boolean;
  log: Logger;
  clock: Clock;
  /** Used to build client-node's `Watch` when `watch` is not given. */
  kubeConfig?: KubeConfig;
  /** The watch implementation (tests inject a fake). Default client-node's `Watch` on `kubeConfig`, asking for uncompressed streams (src/kube/client.ts `uncompressedWatchConfig`). */
  watch?: WatchLike;
  /** List page size (default 500, client-go's pager default). */
  pageSize?: number;
  /**
   * Start (and relist) with a streaming watch-list (`sendInitialEvents=true`) instead of a
   * paginated list, falling back to the list when the server refuses it (default
   * {@link watchListClientEnabled}: true unless `KUBE_FEATURE_WatchListClient=false`). A function
   * is asked at each (re)list, so a decision made after start-up from the server's version
   * (src/controllers/serverdecisions.ts) applies from the next relist on.
   */
  watchList?: boolean | (() => boolean);
  /** Restart when nothing was heard for this long (default 300 000 = 5 min). */
  watchdogMs?: number;
  /**
   * How long a connected watch may stay behind a resourceVersion given to
   * {@link Informer.expectResourceVersion} before it counts as stalled and is restarted (default 5000).
   */
  catchUpMs?: number;
  /** Re-list the whole collection this often (default 0 = never). */
  relistIntervalMs?: number;
  /** First backoff after a failure (default 800, as client-go's reflector; the wait is this to twice this). */
  backoffInitialMs?: number;
  /** Largest backoff base (default 30 000: waits of 30 to 60 s, as client-go). */
  backoffMaxMs?: number;
  /** `[0, 1)` source for jitter (default `Math.random`). */
  random?: () => number;
}

/** Informer counters. Times are epoch milliseconds. */
export interface InformerStats {
  name: string;
  synced: boolean;
  cacheSize: number;
  /** Recoveries from a failure (list/watch error, stream error, watchdog). */
  restarts: number;
  /** Completed full lists (initial one included). */
  relists: number;
  /** Watch streams restarted because they stayed behind a resourceVersion the API server had shown ({@link Informer.expectResourceVersion}). */
  stalls: number;
  /** Watch streams that connected (HTTP 200). */
  watchConnects: number;
  /** A watch stream is connected right now (see {@link Informer.isWatching}). */
  watching: boolean;
  /** Objects skipped because the converter rejected them. */
  malformed: number;
  /** Last time anything was heard from the server (event, bookmark, connect, list page). */
  lastEventMs: number | undefined;
  /** The resourceVersion the next watch resumes from (`""` = relist). */
  resourceVersion: string;
  lastError: string | undefined;
}

/** Collected initial events of a watch-list stream, applied at its end bookmark. */
interface InitialEvents<T> {
  fresh: Map<string, Entry<T>>;
  ended: boolean;
}

/**
 * A self-healing informer over one collection (see the module comment).
 *
 * Lifecycle: `start()` begins listing and watching and returns at once; `hasSynced()` /
 * `waitForSync()` tell when the first full list is in; `stop()` ends everything. Handlers are
 * called synchronously and must only record keys (they are level-based: after a restart they may
 * see an `update` whose old and new objects differ by several changes). A handler that throws is
 * logged and does not affect the informer.
 *
 * @typeParam T the slim object type.
 */
export class Informer<T> {
  readonly name: string;
  readonly #o: InformerOptions<T>;
  readonly #watch: WatchLike;
  readonly #pageSize: number;
  readonly #watchList: () => boolean;
  readonly #watchdogMs: number;
  readonly #relistIntervalMs: number;
  readonly #catchUp: CatchUpDeadline;
  readonly #backoffInitialMs: number;
  readonly #backoff: ReflectorBackoff;
  readonly #random: () => number;
  /** The store, its indexes and the handlers (src/kube/informercache.ts). */
  readonly #cache: InformerCache<T>;

  #running = false;
  /** Bumped by every start/stop/restart; a loop whose epoch is stale exits at its next await. */
  #epoch = 0;
  #rv = '';
  #synced = false;
  #syncWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  #abort: AbortController | undefined;
  #cancelWatch: (() => void) | undefined;
  #sleepAbort: AbortController | undefined;
  #ticker: TimerHandle | undefined;
  #lastProgressMs: number | undefined;
  #lastRelistMs = 0;
  #restarts = 0;
  #relists = 0;
  #stalls = 0;
  #watchConnects = 0;
  #watching = false;
  /** Clock time the watch stream was last lost (or the informer started); undefined while watching. */
  #notWatchingSince: number | undefined;
  #lastError: string | undefined;

  /** @throws {Error} when neither `watch` nor `kubeConfig` is given. */
  constructor(opts: InformerOptions<T>) {
    this.name = opts.name;
    this.#o = opts;
    this.#cache = new InformerCache<T>(opts);
    if (opts.watch) this.#watch = opts.watch;
    else if (opts.kubeConfig) this.#watch = instrumentWatch(opts.kubeConfig, new Watch(uncompressedWatchConfig(opts.kubeConfig)));
    else throw new Error(`informer ${opts.name}: either watch or kubeConfig is required`);
    this.#pageSize = opts.pageSize ?? 500;
    const watchList = opts.watchList ?? watchListClientEnabled();
    this.#watchList = typeof watchList === 'function' ? watchList : () => watchList;
    this.#watchdogMs = opts.watchdogMs ?? 300_000;
    this.#relistIntervalMs = opts.relistIntervalMs ?? 0;
    this.#catchUp = new CatchUpDeadline(opts.clock, opts.catchUpMs ?? 5000);
    this.#backoffInitialMs = opts.backoffInitialMs ?? 800;
    this.#random = opts.random ?? Math.random;
    this.#backoff = new ReflectorBackoff({ clock: opts.clock, initialMs: this.#backoffInitialMs, maxMs: opts.backoffMaxMs ?? 30_000, random: this.#random });
  }

  // ---- public API ---------------------------------------------------------------------------

  /** Starts listing and watching in the background. Resolves at once; a no-op when running. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#notWatchingSince = this.#o.clock.now();
    this.#lastProgressMs = this.#o.clock.now();
    this.#scheduleTick();
    void this.#loop(++this.#epoch);
  }

  /**
   * Stops the watch, pending lists and timers. The cache and `hasSynced` keep their values;
   * `start()` may be called again (it resumes from the last resourceVersion). Pending
   * `waitForSync` calls reject if the informer never synced.
   */
  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    this.#setWatching(false);
    this.#epoch++;
    this.#ticker?.cancel();
    this.#ticker = undefined;
    this.#catchUp.cancel();
    this.#interrupt();
    if (!this.#synced) {
      const err = new Error(`informer ${this.name} stopped before it synced`);
      for (const w of this.#syncWaiters.splice(0)) w.reject(err);
    }
  }

  /**
   * True while a watch stream is connected (the server answered 200 and the stream has not ended).
   * False during list calls, backoff and outages; together with {@link hasSynced} it tells whether
   * the cache is live.
   */
  isWatching(): boolean {
    return this.#watching;
  }

  /**
   * How long, in milliseconds, the informer has been without a connected watch stream: 0 while
   * watching. Normal reconnects (server-side timeouts every few minutes, client-node's 30 s
   * inactivity timeout on quiet collections) last milliseconds; an API outage lasts longer. Callers
   * that must not judge the cluster on a stale cache compare this with a threshold rather than
   * reacting to every reconnect.
   */
  blindForMs(): number {
    if (this.#watching) return 0;
    return this.#o.clock.now() - (this.#notWatchingSince ?? this.#o.clock.now());
  }

  #setWatching(on: boolean): void {
    if (on === this.#watching) return;
    this.#watching = on;
    this.#notWatchingSince = on ? undefined : this.#o.clock.now();
    // Synchronously, so a listener records the transition before anything reads isWatching() again.
    this.#cache.emit('watching', on);
  }

  /** True once a complete initial list was applied (a failed list does not count). Stays true. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /**
   * Resolves once {@link hasSynced} is true.
   * @throws (rejects) with `signal.reason` when `signal` aborts, or an Error when the informer is
   *   stopped before it synced.
   */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#syncWaiters = this.#syncWaiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      const unhook = (): void => signal?.removeEventListener('abort', onAbort);
      const waiter = { resolve: () => (unhook(), resolve()), reject: (err: unknown) => (unhook(), reject(err)) };
      this.#syncWaiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The cached object with this key, or `undefined`. */
  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  /** See {@link InformerCache.newestUnreadable}: `get(key)` is the last readable version of a malformed object. */
  newestUnreadable(key: string): boolean {
    return this.#cache.newestUnreadable(key);
  }

  /** All cached objects (a new array; the objects are shared and must not be mutated). */
  list(): T[] {
    return this.#cache.list();
  }

  /** All cache keys. */
  keys(): string[] {
    return this.#cache.keys();
  }

  /**
   * The cached objects whose indexer `index` yields `value` (client-go `Indexer.ByIndex`).
   * @throws {Error} when `index` is not one of the configured indexers.
   */
  byIndex(index: string, value: string): T[] {
    return this.#cache.byIndex(index, value);
  }

  /**
   * Registers a handler. `add(obj)`, `update(oldObj, newObj)`, `delete(lastKnownObj)`,
   * `resync()` after each completed full list, `watching(on)` synchronously whenever
   * {@link isWatching} changes (a watch stream connected, or ended / the informer stopped) — the
   * sight signal controllers use to know exactly when they lost and regained sight.
   * @returns a function that unregisters the handler.
   */
  on(event: 'add', handler: AddHandler<T>): () => void;
  on(event: 'update', handler: UpdateHandler<T>): () => void;
  on(event: 'delete', handler: DeleteHandler<T>): () => void;
  on(event: 'resync', handler: ResyncHandler): () => void;
  on(event: 'watching', handler: WatchingHandler): () => void;
  on(event: 'add' | 'update' | 'delete' | 'resync' | 'watching', handler: AddHandler<T> | UpdateHandler<T> | ResyncHandler | WatchingHandler): () => void {
    return this.#cache.on(event, handler);
  }

  /**
   * The API server has shown an object of this collection at resourceVersion `rv` (a quorum read:
   * the Lease circuit breaker's live read). A healthy watch passes `rv` within moments, as it
   * delivers every change in order; one still connected and behind `catchUpMs` ms later has stalled
   * (stuck, or lagging while it trickles and so escaping the 30 s inactivity timeout) and is restarted
   * from the cache's resourceVersion, without a relist. Not in client-go, whose consistency store
   * waits however long the watch takes; a restart changes no decision (the breaker still holds until
   * the cache has caught up), it only ends a stall sooner. Never throws.
   */
  expectResourceVersion(rv: string): void {
    if (!this.#running) return;
    const epoch = this.#epoch;
    this.#catchUp.expect(rv, this.#rv, (awaited) => {
      // A restart since the call replaced the stream already; a stream not connected is being replaced.
      if (!this.#alive(epoch) || !this.#watching || compareResourceVersions(awaited, this.#rv) !== 1) return;
      this.#stalls++;
      this.#restart((this.#lastError = `watch stalled: the API server showed resourceVersion ${awaited}, the cache is at ${this.#rv} after ${this.#catchUp.catchUpMs} ms`));
    });
  }

  /** Counters for metrics, logs and tests. */
  stats(): InformerStats {
    return {
      name: this.name,
      synced: this.#synced,
      cacheSize: this.#cache.size,
      restarts: this.#restarts,
      relists: this.#relists,
      stalls: this.#stalls,
      watchConnects: this.#watchConnects,
      watching: this.#watching,
      malformed: this.#cache.malformed,
      lastEventMs: this.#lastProgressMs,
      resourceVersion: this.#rv,
      lastError: this.#lastError,
    };
  }

  // ---- the list/watch loop ------------------------------------------------------------------

  #alive(epoch: number): boolean {
    return this.#running && epoch === this.#epoch;
  }

  /** Ends whatever the current loop is waiting on: the watch, a list call or a backoff sleep. */
  #interrupt(): void {
    this.#abort?.abort(new Error(`informer ${this.name} interrupted`));
    this.#abort = undefined;
    this.#cancelWatch?.();
    this.#sleepAbort?.abort();
  }

  /** Starts a fresh loop (the old one exits at its next await). */
  #restart(reason: string): void {
    this.#restarts++;
    this.#o.log.warn({ informer: this.name, reason }, 'informer restarting');
    this.#epoch++;
    this.#interrupt();
    this.#lastProgressMs = this.#o.clock.now();
    void this.#loop(this.#epoch);
  }

  #touch(): void {
    this.#lastProgressMs = this.#o.clock.now();
  }

  async #sleep(ms: number, epoch: number): Promise<void> {
    if (!this.#alive(epoch)) return;
    const abort = new AbortController();
    this.#sleepAbort = abort;
    await sleepUnlessAborted(this.#o.clock, ms, abort.signal);
    if (this.#sleepAbort === abort) this.#sleepAbort = undefined;
  }

  async #loop(epoch: number): Promise<void> {
    let failures = 0;
    while (this.#alive(epoch)) {
      let failed = false;
      try {
        let w: WatchResult | undefined;
        if (this.#rv === '' && this.#watchList()) {
          w = await this.#watchOnce(epoch, true);
          if (!this.#alive(epoch)) return;
          if (!w.initialEventsEnded && w.err instanceof UndecodableEventError) {
            // reflector.go ListAndWatchWithContext falls back to a list after any watch-list error,
            // here one whose stream carried an event it could not decode: the list's items then
            // take the JSON path's rules (src/kube/informercache.ts), an undecodable one included.
            this.#o.log.warn({ informer: this.name, err: describeError(w.err) }, 'watch-list carried an event that did not decode; listing instead');
            w = undefined;
          } else if (!w.initialEventsEnded && refusesWatchList(w)) {
            // reflector.go ListAndWatchWithContext: "Falling back to regular list. This is expected
            // if watchlist is not supported or disabled in kube-apiserver." Tried again at every relist.
            this.#o.log.info({ informer: this.name, err: describeError(w.err ?? 'no events') }, 'watch-list not served; falling back to list+watch');
            w = undefined;
          } else if (!w.initialEventsEnded && !w.cancelled && !w.gone && (w.err === undefined || w.err === null)) {
            // Ended cleanly part-way through the initial events: try again after a backoff.
            w.err = new Error('watch-list stream ended before the initial-events-end bookmark');
          }
        }
        if (w === undefined) {
          if (this.#rv === '') {
            await this.#relist(epoch);
            if (!this.#alive(epoch)) return;
          }
          w = await this.#watchOnce(epoch, false);
          if (!this.#alive(epoch)) return;
        }
        // An event that did not decode ends the stream (src/kube/wire.ts): relist, as the reflector.
        if (w.err instanceof UndecodableEventError) this.#rv = '';
        // client-node's Watch reports a non-200 answer as an Error with `statusCode`.
        const status = httpStatus(w.err);
        if (status === 410) {
          w.gone = true;
          w.err = undefined;
        }
        if (w.gone) {
          // client-go's `ListAndWatch` returns after a 410 and its `Until` loop waits one more backoff
          // step before it relists: right after an outage that step is long, so relisting at once
          // regained sight (and acted) sooner than kube-controller-manager can.
          const delayMs = this.#backoff.step();
          this.#o.log.info({ informer: this.name, resourceVersion: this.#rv, backoffMs: delayMs }, 'watch: resourceVersion too old (410 Gone); relisting after backoff');
          this.#rv = '';
          await this.#sleep(delayMs, epoch);
        }
        if (w.err !== undefined && w.err !== null && !isTimeout(w.err)) {
          failed = true;
          this.#lastError = status !== undefined ? `watch: HTTP ${status} ${describeError(w.err)}` : describeError(w.err);
        } else if (!w.cancelled && !w.gone && w.events === 0 && w.durationMs < this.#backoffInitialMs) {
          // A stream that closes at once without events: back off instead of spinning (#1933).
          failed = true;
          this.#lastError = 'watch closed immediately';
        } else {
          failures = 0; // consecutive failures, for the log; the backoff's bases reset only by time, as client-go's
        }
      } catch (err) {
        if (!this.#alive(epoch)) return;
        failed = true;
        this.#lastError = describeError(err);
      }
      if (failed) {
        failures++;
        this.#restarts++;
        const delayMs = this.#backoff.step();
        this.#o.log.warn(
          { informer: this.name, err: this.#lastError, failures, backoffMs: delayMs, synced: this.#synced },
          'informer list/watch failed; retrying after backoff',
        );
        await this.#sleep(delayMs, epoch);
      }
    }
  }

  /**
   * Lists the whole collection page by page, then diffs it against the store: `delete` for keys
   * that vanished, `add` for new ones, `update(old, new)` for changed resourceVersions. Objects whose
   * resourceVersion did not change keep their existing copy.
   * Mirrors reflector `list` + `DeltaFIFO.Replace`, and client-go `pager.List` for pagination.
   */
  async #relist(epoch: number): Promise<void> {
    const abort = new AbortController();
    this.#abort = abort;
    const fresh = new Map<string, Entry<T>>();
    let rv: string | undefined;
    let cont: string | undefined;
    let limit: number | undefined = this.#pageSize;
    for (;;) {
      let page: ListPage;
      try {
        page = await this.#o.list({
          limit,
          _continue: cont,
          labelSelector: this.#o.labelSelector,
          fieldSelector: this.#o.fieldSelector,
          signal: abort.signal,
        });
      } catch (err) {
        if (cont !== undefined && apiStatusCode(err) === 410 && this.#alive(epoch)) {
          // The continue token expired mid-list: start over with one unpaginated list (pager.go FullListIfExpired).
          this.#o.log.info({ informer: this.name }, 'list: continue token expired; falling back to a full list');
          fresh.clear();
          rv = undefined;
          cont = undefined;
          limit = undefined;
          continue;
        }
        throw err;
      }
      if (!this.#alive(epoch)) return;
      this.#touch();
      rv ??= page.metadata?.resourceVersion ?? '';
      for (const raw of page.items) {
        const unreadable = this.#cache.collectListItem(fresh, raw, rawResourceVersion(raw));
        if (unreadable) throw unreadable; // the whole list fails, as the reflector's does on one undecodable item
      }
      cont = page.metadata?._continue || page.metadata?.continue || undefined;
      if (!cont) break;
    }
    if (this.#abort === abort) this.#abort = undefined;
    // Without a resourceVersion the watch would start "from now" and miss changes made since the list.
    if (!rv) throw new Error(`list of ${this.#o.path} returned no resourceVersion`);
    this.#completeRelist(fresh, rv);
  }

  /**
   * Applies a complete snapshot (a paginated list, or a watch-list's initial events at its end
   * bookmark): the Replace-style diff, the resourceVersion to watch from, the sync signal and `resync`.
   */
  #completeRelist(fresh: Map<string, Entry<T>>, rv: string): void {
    this.#cache.replace(fresh);
    this.#rv = rv;
    this.#relists++;
    this.#lastRelistMs = this.#o.clock.now();
    if (!this.#synced) {
      this.#synced = true;
      this.#o.log.info({ informer: this.name, objects: this.#cache.size }, 'informer synced');
      for (const w of this.#syncWaiters.splice(0)) w.resolve();
    }
    this.#cache.emit('resync');
  }

  /**
   * Runs one watch stream until it ends; never rejects. A plain watch resumes from `#rv`. A
   * watch-list (`watchList`, reflector.go `watchList`) asks for the current state as synthetic
   * ADDED events ending in a bookmark annotated `k8s.io/initial-events-end: "true"`; those events are
   * collected apart, applied with the Replace-style diff at that bookmark (which syncs the
   * informer), and the same stream then goes on as a plain watch.
   */
  #watchOnce(epoch: number, watchList: boolean): Promise<WatchResult> {
    return new Promise((resolve) => {
      const startedMs = this.#o.clock.now();
      const initial: InitialEvents<T> | undefined = watchList ? { fresh: new Map(), ended: false } : undefined;
      let events = 0;
      let gone = false;
      let streamErr: unknown;
      let settled = false;
      let controller: AbortController | undefined;
      const finish = (err: unknown, cancelled: boolean): void => {
        if (settled) return;
        settled = true;
        if (controller) this.#setWatching(false);
        if (this.#cancelWatch === cancel) this.#cancelWatch = undefined;
        controller?.abort();
        const durationMs = this.#o.clock.now() - startedMs;
        resolve({ err: streamErr ?? err, gone, events, durationMs, cancelled, initialEventsEnded: initial?.ended ?? false });
      };
      const cancel = (): void => finish(undefined, true);
      this.#cancelWatch = cancel;

      const query: Record<string, string | number | boolean | undefined> = {
        // A watch-list always starts from "" (the most recent state, read consistently), as after
        // a 410 the reflector does; the paginated list it replaces never used an older one either.
        resourceVersion: this.#rv,
        ...(initial ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } : {}),
        allowWatchBookmarks: true,
        // Server-side timeout of 5–10 min, like reflector's minWatchTimeout × (1 + rand), so
        // streams are recycled by the server and not only by client-node's 30 s inactivity timer.
        timeoutSeconds: Math.floor(300 * (1 + this.#random())),
        labelSelector: this.#o.labelSelector,
        fieldSelector: this.#o.fieldSelector,
      };
      const onEvent = (phase: string, apiObj: unknown): void => {
        if (settled || !this.#alive(epoch)) return;
        events++;
        this.#touch();
        try {
          const outcome = initial && !initial.ended ? this.#collectInitialEvent(initial, phase, apiObj) : this.#applyWatchEvent(phase, apiObj);
          if (initial?.ended && controller && !this.#watching) this.#setWatching(true);
          if (outcome === 'gone') gone = true;
          else if (outcome !== undefined) streamErr = outcome;
          // A broken initial-events phase would never sync, an unreadable or undecodable object must be relisted: end the stream (the loop backs off and retries).
          if (outcome instanceof Error && ((initial && !initial.ended) || outcome instanceof UnreadableObjectError || outcome instanceof UndecodableEventError)) finish(outcome, false);
        } catch (err) {
          // A converter or indexer bug must not kill the stream silently.
          this.#o.log.error({ informer: this.name, phase, err: describeError(err) }, 'failed to apply watch event');
        }
      };
      this.#watch
        .watch(this.#o.path, query, onEvent, (err) => finish(err, false))
        .then((c) => {
          if (settled) {
            c.abort();
            return;
          }
          controller = c;
          // A watch-list stream counts as watching only from its end bookmark: before that the cache
          // still holds the previous state, exactly as during a paginated relist.
          if (!initial || initial.ended) this.#setWatching(true);
          this.#watchConnects++;
          this.#touch();
        })
        .catch((err: unknown) => finish(err, false));
    });
  }

  /**
   * Records one event of a watch-list's initial phase in `initial.fresh` (nothing reaches the store
   * or the handlers yet); at the initial-events-end bookmark applies the whole snapshot.
   * @returns as {@link #applyWatchEvent}.
   */
  #collectInitialEvent(initial: InitialEvents<T>, phase: string, raw: unknown): 'gone' | Error | undefined {
    if (phase === 'ERROR') return this.#applyWatchEvent(phase, raw);
    const rv = rawResourceVersion(raw);
    if (phase === 'BOOKMARK') {
      const annotations = asObj(asObj(asObj(raw)?.['metadata'])?.['annotations']);
      if (annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true') return undefined;
      if (!rv) return new Error('watch-list initial-events-end bookmark without a resourceVersion');
      initial.ended = true;
      this.#completeRelist(initial.fresh, rv);
      initial.fresh = new Map();
      return undefined;
    }
    if (phase !== 'ADDED' && phase !== 'MODIFIED' && phase !== 'DELETED') return undefined;
    const unreadable = this.#cache.collectEvent(initial.fresh, phase, raw, rv);
    return unreadable ?? undecodableEnd(phase, raw);
  }

  /**
   * Applies one watch event: an ERROR ends the stream, a BOOKMARK advances the resourceVersion,
   * an ADDED/MODIFIED/DELETED goes to the cache ({@link InformerCache.applyEvent}).
   * @returns `'gone'` for a 410 ERROR event, an Error for any other ERROR event or an unreadable object (informercache.ts `UnreadableObjectError`), else `undefined`.
   */
  #applyWatchEvent(phase: string, raw: unknown): 'gone' | Error | undefined {
    if (phase === 'ERROR') {
      const status = asObj(raw) ?? {};
      if (status['code'] === 410) return 'gone';
      const err = new Error(`watch ERROR event: ${String(status['code'])} ${String(status['reason'] ?? '')} ${String(status['message'] ?? '')}`.trim());
      // The Status code, read by httpStatus (e.g. a 422 that refuses a watch-list: refusesWatchList).
      return typeof status['code'] === 'number' ? Object.assign(err, { statusCode: status['code'] }) : err;
    }
    const rv = rawResourceVersion(raw);
    if (phase === 'BOOKMARK') {
      if (rv) this.#rv = rv;
      return undefined;
    }
    if (phase !== 'ADDED' && phase !== 'MODIFIED' && phase !== 'DELETED') return undefined;
    const unreadable = this.#cache.applyEvent(phase, raw, rv);
    const undecodable = undecodableEnd(phase, raw);
    if (unreadable || undecodable) this.#rv = ''; // relist (failing until it can be read), as the reflector after a watch it could not decode
    else if (rv) this.#rv = rv;
    return unreadable ?? undecodable;
  }

  // ---- timers -------------------------------------------------------------------------------

  /** The maintenance tick: watchdog and periodic relist. */
  #scheduleTick(): void {
    const periods = [this.#watchdogMs, this.#relistIntervalMs].filter((p) => p > 0);
    if (periods.length === 0) return;
    const tickMs = Math.max(100, Math.min(30_000, Math.min(...periods) / 4));
    this.#ticker = this.#o.clock.setTimeout(() => {
      if (!this.#running) return;
      this.#onTick();
      this.#scheduleTick();
    }, tickMs);
  }

  #onTick(): void {
    const now = this.#o.clock.now();
    if (this.#watchdogMs > 0 && now - (this.#lastProgressMs ?? now) > this.#watchdogMs) {
      this.#lastError = `watchdog: nothing heard for ${now - (this.#lastProgressMs ?? now)} ms`;
      this.#restart(this.#lastError);
      return;
    }
    if (this.#relistIntervalMs > 0 && this.#synced && this.#rv !== '' && now - this.#lastRelistMs >= this.#relistIntervalMs) {
      this.#o.log.info({ informer: this.name }, 'periodic relist');
      this.#rv = '';
      this.#cancelWatch?.();
    }
  }
}

/**
 * The error that ends a watch stream after an event whose object did not decode (an
 * `UndecodableObject`, applied to the cache first by the JSON path's rules), else `undefined`.
 */
function undecodableEnd(phase: string, raw: unknown): UndecodableEventError | undefined {
  return raw instanceof UndecodableObject ? new UndecodableEventError(`${phase} event: ${raw.reason}`) : undefined;
}
