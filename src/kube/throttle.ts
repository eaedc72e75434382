/**
 * The request throttle that every API write of the controller goes through
 * ({@link ApiWriteThrottle.schedule}, behind the {@link WriteScheduler} interface the controllers'
 * writers take):
 *
 * - admission: the `--kube-api-qps` / `--kube-api-burst` token bucket (client-go's
 *   `flowcontrol.NewTokenBucketRateLimiter`, which `rest.Config` installs on every client): the
 *   project's token bucket for admission, the priority order (node, pod, event) in its own heap
 *   until a token is handed over, bottleneck for the in-flight cap;
 * - the fencing gate: refuses a write with {@link FencedError} once this process may no longer act
 *   (leader election supplies "am I still leader");
 * - `Retry-After`: a write answered 429 or 5xx with a `Retry-After` header is sent again after that
 *   many seconds, up to 10 times, as client-go's REST client does (`rest/with_retry.go`); each
 *   retry takes a new token and passes the fencing gate again. Every write of the controller goes
 *   through that one method, so this is the one place for it;
 * - the send-time re-decision (ours, issue 53 item 4): a write may carry a {@link WriteRecheck}, its
 *   caller's decision taken again from the current view; it runs right after the fencing gate,
 *   each time the write is about to be sent (its first send, each `Retry-After` resend), and a
 *   write it no longer calls for is not sent ({@link NotCalledForError}). A retry re-decides; it
 *   never replays a decision taken before a wait in this queue.
 *
 * The caller-side retries (conflict retry, retry until the work no longer matters) are in
 * src/kube/retry.ts. Every sleep uses the injected {@link Clock}, so unit tests drive the throttle
 * with `FakeClock`.
 */
import Bottleneck from 'bottleneck';
import { realClock, sleepUnlessAborted, type Clock } from '../util/clock.js';
import { MinHeap } from '../util/heap.js';
import { TokenBucket } from '../util/tokenbucket.js';
import { apiStatusCode, runAfterThrottleWait } from './client.js';
import { ApiException } from '@kubernetes/client-node';

// ---------------------------------------------------------------------------
// Fencing
// ---------------------------------------------------------------------------

/**
 * Thrown (as a promise rejection) by {@link ApiWriteThrottle.schedule} when the fencing gate says
 * this process must not write any more (for example it lost its leader lease). The write function
 * was not called.
 */
export class FencedError extends Error {
  constructor(message = 'API write refused: this process is fenced (not the leader)') {
    super(message);
    this.name = 'FencedError';
  }
}

/** True when `err` is a {@link FencedError}. */
export function isFenced(err: unknown): boolean {
  return err instanceof FencedError;
}

/**
 * A write's decision taken again, synchronously, from the current view (caches, sight, judgements,
 * holds, fences), right before the write is sent.
 * @returns `undefined` while the write is still called for; otherwise why it no longer is (a clause
 *   for logs, e.g. `the node is Ready again`). May throw: the write is then not sent either (fail
 *   closed) and the caller gets that error.
 */
export type WriteRecheck = () => string | undefined;

/**
 * Thrown (as a promise rejection) by {@link ApiWriteThrottle.schedule} when the write's
 * {@link WriteRecheck} said, right before the write would have been sent, that it is no longer
 * called for. The write function was not called. Deliberate difference from upstream (client-go
 * sends a request once its token arrives, on the decision taken before the wait): it can only
 * withhold a write, never add one (issue 53 item 4).
 */
export class NotCalledForError extends Error {
  /** Why the write is no longer called for (the recheck's answer). */
  readonly reason: string;

  /** @param reason the recheck's answer. */
  constructor(reason: string) {
    super(`API write not sent: no longer called for (${reason})`);
    this.name = 'NotCalledForError';
    this.reason = reason;
  }
}

/** True when `err` is a {@link NotCalledForError}. */
export function isNotCalledFor(err: unknown): err is NotCalledForError {
  return err instanceof NotCalledForError;
}

// ---------------------------------------------------------------------------
// Token bucket settings
// ---------------------------------------------------------------------------

/** kube-controller-manager's `--kube-api-qps` default (requests per second). */
export const DEFAULT_KUBE_API_QPS = 20;
/** kube-controller-manager's `--kube-api-burst` default (requests). */
export const DEFAULT_KUBE_API_BURST = 30;
/** client-go `rest.DefaultQPS`, used when qps is 0. */
export const CLIENT_GO_DEFAULT_QPS = 5;
/** client-go `rest.DefaultBurst`, used when burst is 0. */
export const CLIENT_GO_DEFAULT_BURST = 10;

/** The token bucket for one qps/burst pair, after client-go's defaulting. */
export interface ThrottleSettings {
  /** Effective writes per **second**: the bucket's continuous refill rate. */
  qps: number;
  /** Effective burst (writes): the bucket's size; it starts full. */
  burst: number;
}

/**
 * Computes the token bucket for `--kube-api-qps` / `--kube-api-burst`, with client-go's defaulting
 * (`rest.RESTClientFor`): qps 0 → 5, burst 0 → 10, and qps < 0 → no rate limit at all.
 *
 * @param qps writes per second (fractions allowed, e.g. 0.5)
 * @param burst bucket size in writes (an integer ≥ 0)
 * @returns the settings, or `null` when writes are not rate-limited (qps < 0)
 * @throws {RangeError} when qps is not finite, or burst is negative or not an integer.
 */
export function throttleSettings(qps: number, burst: number): ThrottleSettings | null {
  if (!Number.isFinite(qps)) throw new RangeError(`kube-api-qps must be a finite number, got ${qps}`);
  if (!Number.isInteger(burst) || burst < 0) throw new RangeError(`kube-api-burst must be an integer >= 0, got ${burst}`);
  if (qps < 0) return null;
  return { qps: qps === 0 ? CLIENT_GO_DEFAULT_QPS : qps, burst: burst === 0 ? CLIENT_GO_DEFAULT_BURST : burst };
}

// ---------------------------------------------------------------------------
// ApiWriteThrottle
// ---------------------------------------------------------------------------

/**
 * Which writes go first when the QPS budget is short: node status and NoExecute taints first, then
 * NoSchedule condition-taint writes, then pod writes, Events last. A node marked Unknown late
 * delays every decision after it; an Event delayed a few seconds delays nothing. A NoSchedule
 * write (`noschedule-taint`) waits behind the NoExecute taints: in a wave of n nodes failing at
 * once, the n NoSchedule writes sent FIFO among them held each NoExecute taint back by up to n
 * tokens (issue 29: 17 nodes at 20/30, taint p99 1.7 s), while a node's NoExecute taint write
 * carries its NoSchedule condition taints too (deliberate difference 12). Only delays NoSchedule.
 */
export type WritePriority = 'node' | 'noschedule-taint' | 'pod' | 'event';

/** bottleneck priorities (0 runs first, 9 last; 5 is its default). */
const BOTTLENECK_PRIORITY: Readonly<Record<WritePriority, number>> = { node: 1, 'noschedule-taint': 2, pod: 5, event: 8 };

/** The bottleneck priority of Events, the only writes {@link ApiWriteThrottle} hands over as one bottleneck job. */
const EVENT_RANK = BOTTLENECK_PRIORITY.event;

/** A write held back from bottleneck until a token is handed over for it (see {@link ApiWriteThrottle}). */
interface HeldWrite {
  /** Its bottleneck priority (lower first). */
  readonly rank: number;
  /** Arrival order, first come first served within a rank. */
  readonly seq: number;
  /** Runs the write and settles its caller's promise; never rejects (bottleneck's job function). */
  start(): Promise<void>;
  /** Rejects the write without running it (stop, or bottleneck refused its job). */
  drop(err: unknown): void;
}

function heldBefore(a: HeldWrite, b: HeldWrite): boolean {
  return a.rank < b.rank || (a.rank === b.rank && a.seq < b.seq);
}

/** Anything that can run a write under the throttle and the fencing gate (tests pass a stub). */
export interface WriteScheduler {
  /**
   * @param priority default `'pod'`; see {@link WritePriority}.
   * @param recheck the write's decision taken again right before each send (see {@link WriteRecheck});
   *   an implementation must call it immediately before `fn` and not call `fn` when it answers a reason.
   */
  schedule<T>(fn: () => Promise<T>, priority?: WritePriority, recheck?: WriteRecheck): Promise<T>;
}

/**
 * Runs `recheck` for a write about to be sent (see {@link WriteRecheck}).
 * @throws {NotCalledForError} when it answers a reason; whatever it throws.
 */
export function assertStillCalledFor(recheck: WriteRecheck | undefined): void {
  const why = recheck?.();
  if (why !== undefined) throw new NotCalledForError(why);
}

/** Options of {@link ApiWriteThrottle}. */
export interface ApiWriteThrottleOptions {
  /** `--kube-api-qps`: writes per second (0 → 5, negative → unlimited). */
  qps: number;
  /** `--kube-api-burst`: bucket size in writes (0 → 10). */
  burst: number;
  /** The fencing gate, checked immediately before each write runs. Default: always true. */
  canWrite?: () => boolean;
  /**
   * Writes in flight at once; default unlimited (client-go has no such cap). A cap keeps the API
   * server's queue short, so a high-priority write admitted behind a burst of pod writes waits for
   * a free slot rather than sharing the server with every write already sent.
   */
  maxInFlight?: number;
  /** Clock for the `Retry-After` waits (default: the real clock). */
  clock?: Clock;
  /**
   * How many times one write is sent again after a 429/5xx answer with `Retry-After`; default
   * {@link MAX_RETRY_AFTER_RETRIES} (client-go `rest.Request.maxRetries`). 0 turns retries off.
   */
  maxRetryAfterRetries?: number;
  /**
   * Event writes handed over together once the bucket is empty and only Events wait: the feeder
   * waits until this many tokens are due (at most `burst − 1`, and no more than the Events waiting
   * with a free in-flight slot) and starts them at once, instead of one per token. Default 1: one
   * per token, as client-go. A node or pod write that arrives during such a wait ends it at once.
   * See {@link ApiWriteThrottle} for why and what it may delay.
   */
  eventBatch?: number;
}

/** client-go `rest.Request.maxRetries`: a request is sent again at most 10 times on `Retry-After`. */
export const MAX_RETRY_AFTER_RETRIES = 10;

/**
 * The wait a failed request asks for: the `Retry-After` header in whole seconds, when the status is
 * 429 or any 5xx. Mirrors client-go `rest.checkWait` + `retryAfterSeconds` (only the integer form:
 * an HTTP-date or a malformed value means "no wait", as `strconv.Atoi` fails on them).
 * @param err anything thrown by a client-node call (an `ApiException` carries status and headers).
 * @returns the wait in **milliseconds** (0 for `Retry-After: 0`), or `undefined` when the answer
 *   does not ask for a retry (other statuses, no header, a network error, a timeout).
 */
export function retryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const code = apiStatusCode(err);
  if (code === undefined || (code !== 429 && code < 500)) return undefined;
  const headers = (err.headers ?? {}) as Record<string, string | undefined>;
  const value = headers['retry-after'] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === 'retry-after')?.[1];
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value.trim()) * 1000;
}

/** Counters of an {@link ApiWriteThrottle}. */
export interface ApiWriteThrottleStats {
  /** Writes waiting for a token (or, with a token, for bottleneck to start them). */
  queued: number;
  /** Of those, writes bottleneck has received but not queued yet (its submit step takes a timer turn each). */
  received: number;
  /** Tokens taken from the bucket for waiting writes that have not started yet. */
  admitted: number;
  /** Writes currently running. */
  running: number;
  /** Writes whose function was called. */
  executed: number;
  /** Writes refused by the fencing gate. */
  fenced: number;
  /** Writes sent again after a 429/5xx answer with `Retry-After`. */
  retriedAfter: number;
  /** Writes not sent because their recheck said they were no longer called for ({@link NotCalledForError}). */
  notCalledFor: number;
}

/**
 * Client-side rate limit for the controller's own API writes, plus the fencing gate.
 *
 * Mirrors client-go `rest.Config{QPS, Burst}` → `flowcontrol.NewTokenBucketRateLimiter(qps, burst)`
 * (a bucket that starts full with `burst` tokens and refills continuously at `qps` tokens per
 * second; callers wait for a token). The bucket is the project's one token bucket
 * (src/util/tokenbucket.ts, {@link TokenBucket.reserve}, as `rate.Limiter.Wait` uses it).
 *
 * How a write is admitted: the waiting writes are kept in priority order, and this class caps the
 * writes in flight (`maxInFlight`: a write is handed over only to a free slot, and its slot is freed
 * when it is answered); bottleneck's reservoir (no heartbeat, no refill of its own)
 * is fed from the token bucket, one taken token per write that is waiting and has a free slot. When
 * the bucket is empty the feeder reserves the next token and sleeps on the injected clock until it
 * is due; only then is it handed, with the write first in priority order, to bottleneck. The
 * admitted rate over any window of T seconds is therefore at most `burst + qps × T` and, while
 * writes wait, at least `qps × T − 1`, or `qps × T − eventBatch` while only Events wait (unit
 * tests: test/unit/throttle.test.ts).
 *
 * With `eventBatch` N > 1 and only Events waiting on an empty bucket, the feeder waits until N
 * tokens are due and hands them over together: one wake of this process per N Events instead of
 * one per Event. Each Event still takes its own token, no sooner than one by one, so the bound
 * above holds; an Event starts up to N tokens later. A node or pod write ends such a wait. Events
 * handed over together go to bottleneck as one job of weight = their count (`#submit`); each
 * Event's slot is still freed when that Event is answered.
 *
 * Writes wait in this class's own priority heap, not in bottleneck's queue, until a token is handed
 * over for them: one write, first in priority order, per token (with the bucket off, one per free
 * in-flight slot). Workaround for bottleneck 2.19.5's submit step: each `schedule` call passes a
 * lock (`_submitLock`) one at a time, and inside it `LocalDatastore.__submit__` and the drain that
 * follows each yield a `setTimeout(0)` turn, so a burst of N writes reaches bottleneck's priority
 * queues only after N or more timer turns, and a node write submitted behind them waits that long
 * whatever its priority: in a failure wave at 100/200 (24 pod marks per node) node status and taint
 * writes waited 200–340 ms with 28 writes still in that step and 15 tokens unused (issue 29).
 * Bottleneck still orders the few writes handed over at once and takes their tokens from its
 * reservoir; it has no `maxConcurrent` of its own, because its slots are freed per job, and a job of
 * several Events would keep all of them until its last Event is answered (see {@link #submit}).
 *
 * Why not bottleneck's own refill: `reservoirIncreaseInterval` runs on a 250 ms `setInterval`
 * heartbeat that sets `_lastReservoirIncrease = now` and compares with `>=`, so a late beat drops
 * its lateness and a beat whose `Date.now()` lags the timer by a millisecond is skipped; under load
 * it admitted 17.8–18.2 writes/s of a 20/s budget (bench). The token bucket reads the clock
 * when a token is taken, so a late timer delays a write but never loses a token.
 *
 * A write answered 429 or 5xx with `Retry-After: N` is sent again after N seconds (client-go
 * `rest/with_retry.go`: `checkWait`, then `Before` throttles the retry through the same limiter).
 * During the wait the write holds neither a token nor an in-flight slot; the retry waits for a new
 * token and a free slot, and passes the fencing gate again, so a process that lost its lease while
 * waiting never sends it. A write that times out (src/kube/client.ts `RequestTimeoutError`) or
 * fails any other way rejects at once: the caller's own retry (work queue, `retryWithBackoff`)
 * handles it, and no caller counts it as success or as "gone" (only a 404 or 409 is).
 *
 * Deliberate difference from upstream: client-go throttles reads too; here informers' list/watch
 * calls are not throttled (they are few, and backoff already bounds them).
 */
export class ApiWriteThrottle implements WriteScheduler {
  readonly settings: ThrottleSettings | null;
  /** Priority order of the writes handed over; its reservoir holds tokens handed over by {@link #feed}. */
  #limiter: Bottleneck;
  #bucket: TokenBucket | null;
  readonly #maxInFlight: number;
  #canWrite: () => boolean;
  #executed = 0;
  #fenced = 0;
  #running = 0;
  #retriedAfter = 0;
  #notCalledFor = 0;
  /** Writes scheduled whose function has not started (and that were not dropped by stop). */
  #waiting = 0;
  /** Of those, node and pod writes (not Events): while any waits, no Event batch is waited for. */
  #waitingUrgent = 0;
  readonly #eventBatch: number;
  /** Aborted when a node or pod write arrives while the feeder waits for an Event batch's tokens. */
  #batchWait: AbortController | undefined;
  /** Tokens in bottleneck's reservoir that no write has taken yet. */
  #granted = 0;
  /** Writes waiting for a token, in priority order; only {@link #handOver} passes them to bottleneck. */
  readonly #held = new MinHeap<HeldWrite>(heldBefore);
  #heldSeq = 0;
  /** Writes handed to bottleneck whose function has not started. */
  #handedOver = 0;
  #feeding = false;
  readonly #clock: Clock;
  readonly #maxRetryAfterRetries: number;
  /** Aborted by {@link stop}: ends the feeder's and `Retry-After` waits. */
  readonly #stopping = new AbortController();

  /**
   * @throws {RangeError} for an invalid qps/burst (see {@link throttleSettings}), a `maxInFlight` that
   *   is not a positive integer, or a `maxRetryAfterRetries` that is not an integer ≥ 0.
   */
  constructor(opts: ApiWriteThrottleOptions) {
    if (opts.maxInFlight !== undefined && !(Number.isInteger(opts.maxInFlight) && opts.maxInFlight > 0)) {
      throw new RangeError(`ApiWriteThrottle: maxInFlight must be a positive integer, got ${opts.maxInFlight}`);
    }
    if (opts.maxRetryAfterRetries !== undefined && !(Number.isInteger(opts.maxRetryAfterRetries) && opts.maxRetryAfterRetries >= 0)) {
      throw new RangeError(`ApiWriteThrottle: maxRetryAfterRetries must be an integer >= 0, got ${opts.maxRetryAfterRetries}`);
    }
    if (opts.eventBatch !== undefined && !(Number.isInteger(opts.eventBatch) && opts.eventBatch > 0)) {
      throw new RangeError(`ApiWriteThrottle: eventBatch must be a positive integer, got ${opts.eventBatch}`);
    }
    this.#eventBatch = opts.eventBatch ?? 1;
    this.settings = throttleSettings(opts.qps, opts.burst);
    this.#canWrite = opts.canWrite ?? (() => true);
    this.#clock = opts.clock ?? realClock;
    this.#maxRetryAfterRetries = opts.maxRetryAfterRetries ?? MAX_RETRY_AFTER_RETRIES;
    this.#maxInFlight = opts.maxInFlight ?? Infinity;
    this.#bucket = this.settings ? new TokenBucket(this.#clock, this.settings.qps, this.settings.burst) : null;
    // No reservoirIncrease*/reservoirRefresh* options: bottleneck starts no heartbeat, and this class
    // never calls updateSettings (bottleneck#185); only incrementReservoir, from the feeder.
    // No maxConcurrent either: the in-flight cap is this class's (#running + #handedOver, see
    // #handOver and #feedLoop), so that each Event of a group frees its own slot when it is answered.
    this.#limiter = new Bottleneck({ reservoir: this.#bucket ? 0 : null, maxConcurrent: null, minTime: 0 });
  }

  /** Starts the feeder unless it runs already (or writes are not rate-limited). */
  #wakeFeeder(): void {
    if (!this.#bucket || this.#feeding || this.#stopping.signal.aborted) return;
    this.#feeding = true;
    void this.#feed(this.#bucket);
  }

  /**
   * Moves tokens from the bucket into bottleneck's reservoir while writes wait for one: as many as
   * there are waiting writes with a free in-flight slot, minus tokens already handed over. With the
   * bucket empty it reserves the next token and hands it over when it is due.
   */
  async #feed(bucket: TokenBucket): Promise<void> {
    // Cleared in the same turn as the last look at the demand, so a wake-up right after is never lost.
    try {
      await this.#feedLoop(bucket);
    } finally {
      this.#feeding = false;
    }
  }

  async #feedLoop(bucket: TokenBucket): Promise<void> {
    for (;;) {
      const want = Math.min(this.#waiting, this.#maxInFlight - this.#running) - this.#granted;
      if (want <= 0 || this.#stopping.signal.aborted) return;
      let n = 0;
      while (n < want && bucket.tryAccept()) n++;
      // One token short of the burst: a wake up to one token late then loses none to the bucket's cap.
      const batch = Math.min(want, this.#eventBatch, bucket.burst - 1);
      if (n === 0 && this.#waitingUrgent === 0 && batch > 1) {
        // Deliberate difference from upstream (it can only delay an Event, never send one sooner
        // or send more): with only Events waiting, wait until a batch's tokens are due and start
        // the batch together. Each Event still takes its own token, no sooner than one-by-one
        // pacing would give it that token, so the rate bound holds; what changes is one wake of
        // this process per batch instead of per Event (issue 29, bench/write-cost.ts: 3.4 ms of CPU
        // per Event paced one by one, 2.2 ms eight at a time, at start-up's RegisteredNode wave).
        const dueMs = Math.ceil(bucket.msUntil(batch) - 1e-6);
        if (dueMs > 0) {
          const interrupt = new AbortController();
          this.#batchWait = interrupt;
          try {
            await sleepUnlessAborted(this.#clock, dueMs, AbortSignal.any([this.#stopping.signal, interrupt.signal]));
          } finally {
            this.#batchWait = undefined;
          }
          continue;
        }
      }
      if (n === 0) {
        // The bucket is empty: take the next token now, in debt (rate.Limiter.Reserve, as client-go's
        // Wait does), and hand it over when it is due. Bottleneck gives it to whichever write is
        // first in priority order at that moment, and a late timer costs no token. Demand cannot
        // fall meanwhile: a waiting write only leaves the queue with a token (or at stop).
        // Whole milliseconds, rounded up (less float noise): a real timer never fires before the token is due.
        const dueMs = Math.ceil(bucket.reserve() - 1e-6);
        if (dueMs > 0 && !(await sleepUnlessAborted(this.#clock, dueMs, this.#stopping.signal))) return;
        n = 1;
      }
      this.#granted += n;
      await this.#limiter.incrementReservoir(n);
      this.#handOver();
    }
  }

  /**
   * Hands the first held writes in priority order to bottleneck: as many as there are tokens in its
   * reservoir not yet claimed by a handed-over write (with the bucket off, as many as there are free
   * in-flight slots), so bottleneck's submit step never holds more than that.
   *
   * This is where the in-flight cap is kept: `#running + #handedOver ≤ maxInFlight`. With the bucket
   * off, `room` says so directly; with it on, the feeder grants a token only to a free slot
   * (`#running + #granted ≤ maxInFlight`, and a write that starts moves one from granted to running),
   * and `#handedOver ≤ #granted`.
   */
  #handOver(): void {
    const room = (this.#bucket ? this.#granted : this.#maxInFlight - this.#running) - this.#handedOver;
    let events: HeldWrite[] = [];
    for (let i = 0; i < room; i++) {
      const write = this.#held.pop();
      if (!write) break;
      this.#handedOver++;
      if (write.rank !== EVENT_RANK) this.#submit([write]);
      else if (events.push(write) === this.#maxInFlight) {
        this.#submit(events);
        events = [];
      }
    }
    if (events.length > 0) this.#submit(events);
  }

  /**
   * Hands writes to bottleneck as one job of weight `writes.length` (at most `maxInFlight`), which
   * starts them together. Only Events are grouped ({@link #handOver}: Events handed over at once,
   * an Event batch's tokens); every other write is a job of its own.
   *
   * Workaround for bottleneck 2.19.5's per-job cost: every datastore step of a job (`__submit__`,
   * `__register__`, `__free__`, and the drains between them) awaits a `setTimeout(0)` turn
   * (`LocalDatastore.yieldLoop`), and `schedule` calls pass its submit lock one at a time, so a
   * batch of eight paced Events took about 44 timer wakes and 0.6 ms of CPU per Event with a write
   * that does nothing (issue 29, the first minute's RegisteredNode Events). As one job the batch
   * takes a job's few turns. The weight takes one reservoir token per Event. Bottleneck's own slots
   * would be freed per job, when the group's last Event is answered, so an Event that hung until its
   * 30 s write timeout would hold back every write behind its group's slots; the in-flight cap is
   * therefore kept by this class, which frees each Event's slot (`#running`) when it is answered and
   * hands the slot on at once.
   */
  #submit(writes: readonly HeldWrite[]): void {
    const [first] = writes;
    if (!first) return;
    const job = writes.length === 1 ? first.start : (): Promise<unknown> => Promise.all(writes.map((w) => w.start()));
    // A job function never rejects (start settles its own write), so a rejection is bottleneck
    // refusing the job (stopped); dropping a write that already settled changes nothing.
    this.#limiter.schedule({ priority: first.rank, weight: writes.length }, job).catch((err: unknown) => {
      for (const w of writes) w.drop(err);
    });
  }

  /**
   * Replaces the fencing gate (leader election installs "am I still leader" once it exists).
   * @param canWrite called immediately before each write; `false` refuses it with {@link FencedError}.
   */
  setCanWrite(canWrite: () => boolean): void {
    this.#canWrite = canWrite;
  }

  /**
   * Runs `fn` once a token is available and the fencing gate allows it. Queued writes wait in
   * `priority` order (node, then pod, then event), first come first served within a priority.
   * When `fn` fails with 429 or 5xx and a `Retry-After` header ({@link retryAfterMs}), it is called
   * again after that wait, at most `maxRetryAfterRetries` times, each time through the token bucket,
   * the in-flight cap and the fencing gate (client-go `rest.Request` with `withRetry`).
   * @param recheck the write's decision taken again right after the fencing gate, before each send
   *   (the first and each `Retry-After` resend): a write no longer called for is not sent.
   * @returns what `fn` resolves to.
   * @throws {FencedError} (rejection) when the gate refuses the write (also before a retry); `fn` is not called.
   * @throws {NotCalledForError} when `recheck` answers a reason (also before a retry); `fn` is not
   *   called. Whatever `recheck` throws, likewise without calling `fn`.
   * @throws whatever `fn` rejects with (the last answer once the `Retry-After` retries run out);
   *   a bottleneck error, or an `Error` "throttle stopped", when the throttle was stopped.
   */
  async schedule<T>(fn: () => Promise<T>, priority: WritePriority = 'pod', recheck?: WriteRecheck): Promise<T> {
    for (let retries = 0; ; retries++) {
      try {
        return await this.#scheduleOnce(fn, priority, recheck);
      } catch (err) {
        const waitMs = retries < this.#maxRetryAfterRetries && !isFenced(err) ? retryAfterMs(err) : undefined;
        if (waitMs === undefined) throw err;
        // Waits outside the limiter: no token and no in-flight slot is held meanwhile.
        if (!(await sleepUnlessAborted(this.#clock, waitMs, this.#stopping.signal))) throw err;
        this.#retriedAfter++;
      }
    }
  }

  async #scheduleOnce<T>(fn: () => Promise<T>, priority: WritePriority, recheck: WriteRecheck | undefined): Promise<T> {
    const queuedAt = this.#clock.now();
    let started = false;
    const run = async (): Promise<T> => {
      started = true;
      this.#handedOver--;
      this.#waiting--;
      if (priority !== 'event') this.#waitingUrgent--;
      if (this.#bucket) this.#granted--;
      if (!this.#canWrite()) {
        this.#fenced++;
        this.#wakeFeeder();
        throw new FencedError();
      }
      try {
        // Decided again now, after every wait (token, slot, Retry-After): a retry never replays.
        assertStillCalledFor(recheck);
      } catch (err) {
        if (isNotCalledFor(err)) this.#notCalledFor++;
        this.#wakeFeeder();
        if (!this.#bucket) this.#handOver();
        throw err;
      }
      this.#executed++;
      this.#running++;
      try {
        // client-go observes `rest_client_rate_limiter_duration_seconds` where the request waits for
        // its token (`Request.tryThrottle`); here that wait (token and in-flight slot) is handed to
        // the request `fn` sends, which knows its verb and host (src/kube/client.ts).
        return await runAfterThrottleWait(Math.max(0, this.#clock.now() - queuedAt) / 1000, fn);
      } finally {
        this.#running--;
        // A freed slot may let a waiting write take a token (or, with the bucket off, be handed over).
        this.#wakeFeeder();
        if (!this.#bucket) this.#handOver();
      }
    };
    this.#waiting++;
    if (priority !== 'event') {
      this.#waitingUrgent++;
      // A node or pod write never waits for an Event batch: the feeder goes back to one token at a time.
      this.#batchWait?.abort();
    }
    const rank = BOTTLENECK_PRIORITY[priority];
    const done = new Promise<T>((resolve, reject) => {
      const write: HeldWrite = { rank, seq: this.#heldSeq++, start: () => run().then(resolve, reject), drop: reject };
      // Once stopped nothing is handed over any more: bottleneck rejects the write at once.
      if (this.#stopping.signal.aborted) {
        this.#handedOver++;
        this.#submit([write]);
      } else this.#held.push(write);
    });
    this.#handOver();
    this.#wakeFeeder();
    try {
      return await done;
    } catch (err) {
      if (!started) {
        this.#waiting--;
        if (priority !== 'event') this.#waitingUrgent--;
      }
      throw err;
    }
  }

  /** Current counters (see {@link ApiWriteThrottleStats}). */
  stats(): ApiWriteThrottleStats {
    return {
      queued: this.#waiting,
      received: this.#limiter.counts().RECEIVED ?? 0,
      admitted: this.#granted,
      running: this.#running,
      executed: this.#executed,
      fenced: this.#fenced,
      retriedAfter: this.#retriedAfter,
      notCalledFor: this.#notCalledFor,
    };
  }

  /**
   * Tokens available: in the bucket (fractional) plus those handed to bottleneck that no write has
   * taken yet; `null` when unlimited.
   */
  async tokens(): Promise<number | null> {
    return this.#bucket ? this.#bucket.tokens() + this.#granted : null;
  }

  /**
   * Stops the throttle: writes still waiting for a token or a `Retry-After` wait are rejected;
   * running writes finish.
   */
  async stop(): Promise<void> {
    this.#stopping.abort();
    for (let write = this.#held.pop(); write; write = this.#held.pop()) write.drop(new Error('throttle stopped'));
    await this.#limiter.stop({ dropWaitingJobs: true });
  }
}
