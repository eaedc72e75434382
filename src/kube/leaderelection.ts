// Why this file is over 500 lines: LeaseElector is one state machine (client-go LeaderElector: acquire, renew, release, transitions) plus fencing, with client-go's semantics in its docstrings; the Lease I/O is already in leaselock.ts.
/**
 * Leader election over a `coordination.k8s.io/v1` Lease, with client-go's semantics, plus a
 * fencing check for writers.
 *
 * Mirrors `staging/src/k8s.io/client-go/tools/leaderelection/leaderelection.go` (`LeaderElector`:
 * `acquire`, `renew`, `tryAcquireOrRenew`, `release`, `isLeaseValid`, `maybeReportTransition`) and
 * `resourcelock/leaselock.go` (`LeaseLock`, whose Lease I/O is leaselock.ts). As in client-go:
 * - every create/update is guarded by `metadata.resourceVersion`, so a 409 means another candidate
 *   won the race;
 * - a lease held by another identity is taken over only once this process has seen **no change**
 *   of the record for `leaseDurationSeconds`, measured on the local clock from the moment the
 *   change was observed (never from `renewTime`), which tolerates clock skew between hosts;
 * - `leaseTransitions` is incremented on every change of holder;
 * - while not leading, attempts are spaced by `wait.Jitter(retryPeriod, 1.2)`; while leading, the
 *   lease is renewed every `retryPeriod`;
 * - release (`ReleaseOnCancel`) writes an empty `holderIdentity` and `leaseDurationSeconds: 1`.
 *
 * Fencing (our addition; client-go says "this implementation does not guarantee that only one
 * client is acting as a leader"): {@link LeaseElector.isLeader} is computed from the clock at call
 * time, so it turns false as soon as `renewDeadline` has passed since the start of the last
 * successful renewal, even if the renew loop is stuck on a hung request. Because
 * `renewDeadline < leaseDuration` and a standby measures expiry from when it observed that renewal
 * (which is after the renewal started), a writer that checks `isLeader()` just before each write
 * stops writing before any other candidate may take over.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { realClock, type Clock, type TimerHandle } from '../util/clock.js';
import { describeError, isConflict } from './client.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { toMicroTime } from './objects.js';
import type { LeaseApi, LeaseMeta, LeaseObject, LeaseSpecRecord } from './leaselock.js';

// The narrow Lease API (client-go resourcelock/leaselock.go) lives in leaselock.ts.
export {
  coordinationLeaseApi,
  type CoordinationLeaseApiOptions,
  type LeaseApi,
  type LeaseMeta,
  type LeaseObject,
  type LeaseSpecRecord,
} from './leaselock.js';

// ---------------------------------------------------------------------------------------------
// The elector

/** client-go `leaderelection.JitterFactor`: a non-leader waits `retryPeriod × (1 + random × 1.2)`. */
export const LEADER_ELECTION_JITTER_FACTOR = 1.2;
/** Default lease duration, **milliseconds** (kube-controller-manager `--leader-elect-lease-duration` 15s). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
/** Default renew deadline, **milliseconds** (`--leader-elect-renew-deadline` 10s). */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
/** Default retry period, **milliseconds** (`--leader-elect-retry-period` 2s). */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/**
 * Timeout of each request of the leader-election client, **milliseconds**: half the renew deadline,
 * at least 1 s, so a hung renewal fails in time for a retry within the deadline. Mirrors client-go
 * `resourcelock.NewFromKubeconfig` (`config.Timeout = renewDeadline / 2`, minimum 1 s), which
 * kube-controller-manager's `leaderElectAndRun` uses.
 * @param renewDeadlineMs `--leader-elect-renew-deadline`, milliseconds.
 */
export function leaseRequestTimeoutMs(renewDeadlineMs: number): number {
  return Math.max(1000, Math.floor(renewDeadlineMs / 2));
}

/** Event reason client-go uses for "became leader" / "stopped leading" (`LeaseLock.RecordEvent`). */
export const LEADER_ELECTION_EVENT_REASON = 'LeaderElection';

/**
 * A holder identity like kube-controller-manager's: `<hostname>_<uuid>`
 * (`cmd/kube-controller-manager/app/controllermanager.go`, `id + "_" + uuid.NewUUID()`).
 */
export function defaultLeaderIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

/** Options of {@link LeaseElector}. All durations are **milliseconds**. */
export interface LeaseElectorOptions {
  /** The Lease operations (production: {@link coordinationLeaseApi}). */
  api: LeaseApi;
  /** Lease name (`--leader-elect-resource-name`); also the `name` label of the metric. */
  name: string;
  /** Lease namespace (`--leader-elect-resource-namespace`). */
  namespace: string;
  /** Holder identity. Default {@link defaultLeaderIdentity}. */
  identity?: string;
  /** ms; whole seconds are written to `leaseDurationSeconds` (rounded down, as client-go). Default 15 000. */
  leaseDurationMs?: number;
  /** ms; how long the leader may fail to renew before it stops leading. Default 10 000. */
  renewDeadlineMs?: number;
  /** ms; spacing of attempts. Default 2 000. */
  retryPeriodMs?: number;
  /** Default {@link realClock}. */
  clock?: Clock;
  /** Default silent. */
  log?: Logger;
  /** Random source in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number;
  /** Called once when this process acquires the lease. A rejection is logged. */
  onStartedLeading: () => void | Promise<void>;
  /**
   * Called once when leadership is **lost** (renewal failed past the renew deadline, or another
   * identity was seen holding the lease). Not called after {@link LeaseElector.release} or
   * {@link LeaseElector.stop}, which the caller asked for. The program should exit non-zero.
   */
  onStoppedLeading: () => void;
  /** Called with the holder identity each time the observed holder changes (`""` once released). */
  onNewLeader?: (identity: string) => void;
  /** Metric hook: `leader_election_master_status{name}` ← 1 while leading, else 0. */
  setLeaderStatus?: (name: string, status: 0 | 1) => void;
  /**
   * Metric hook: `leader_election_slowpath_total{name}` += `count`. Called with 1 where client-go
   * calls `slowpathExercised`: the leader is about to update the Lease it had to read first (its
   * optimistic update failed, or its observed lease had expired on the local clock). Called once
   * with 0 when {@link LeaseElector.run} starts, so the series exists before the first slow path
   * (upstream creates it at the first increment, which a Prometheus `increase()` cannot see).
   */
  onSlowPath?: (name: string, count: 0 | 1) => void;
  /** Event hook: record a Normal Event with this reason and message on the Lease. */
  onEvent?: (reason: string, message: string) => void;
}

interface Observation {
  record: LeaseSpecRecord;
  key: string;
  /** local epoch ms when this record was first seen */
  at: number;
}

function recordKey(r: LeaseSpecRecord): string {
  return JSON.stringify([r.holderIdentity ?? '', r.leaseDurationSeconds ?? 0, r.acquireTime ?? '', r.renewTime ?? '', r.leaseTransitions ?? 0]);
}

/**
 * A leader elector on one Lease. Call {@link run} once; it resolves when the elector is done
 * (leadership lost, or {@link stop}/{@link release} called). API errors never reject it: like
 * client-go, a failed attempt is logged and retried.
 *
 * Deliberate differences from upstream (client-go `LeaderElector`):
 * - `isLeader()` is time-fenced (see the module comment); client-go's `IsLeader()` only compares
 *   the observed holder.
 * - A leader that sees another identity holding the lease stops at once instead of retrying until
 *   the renew deadline; and once the renew deadline has passed it never resumes, even if a late
 *   renewal succeeds.
 * - While not leading, the next attempt is brought forward to the moment the observed lease would
 *   expire, and to any change that {@link LeaseApi.watch} reports, so a standby takes over a
 *   released lease at once and an abandoned one within about `leaseDuration` of the last renewal
 *   (client-go only polls, adding up to two jittered periods).
 * - `onStoppedLeading` is only called when leadership is lost, not on a requested release/stop.
 *
 * @throws {RangeError} from the constructor when the durations break client-go's rules
 *   (`leaseDuration > renewDeadline > 1.2 × retryPeriod > 0`, `leaseDuration ≥ 1 s`) or name,
 *   namespace or identity is empty.
 */
export class LeaseElector {
  /** This candidate's holder identity. */
  readonly identity: string;
  readonly #api: LeaseApi;
  readonly #name: string;
  readonly #namespace: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #random: () => number;
  readonly #opts: LeaseElectorOptions;

  #lease: LeaseObject | undefined;
  #observed: Observation | undefined;
  #reportedLeader = '';
  #leading = false;
  /** local epoch ms at which the last successful acquire/renew request was sent */
  #lastRenewAt = Number.NEGATIVE_INFINITY;
  /**
   * Clock time the last create/replace of the Lease was sent. The fence counts from here, not from
   * the start of the attempt: the GET before it can be slow (a loaded API server, or this process's
   * own initial lists), and counting it would fence a new leader moments after it won. Still safe:
   * a standby measures expiry from when it observes the record, which is after this write was sent.
   */
  #writeSentAt = Number.NEGATIVE_INFINITY;
  #stopped = false;
  #fenceTimer: TimerHandle | undefined;
  #wake: (() => void) | undefined;
  #nudged = false;
  #unwatch: (() => void) | undefined;
  #inflight: Promise<boolean> | undefined;
  #running: Promise<void> | undefined;

  constructor(opts: LeaseElectorOptions) {
    this.#opts = opts;
    this.#api = opts.api;
    this.#name = opts.name;
    this.#namespace = opts.namespace;
    this.identity = opts.identity ?? defaultLeaderIdentity();
    this.#leaseDurationMs = opts.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.#renewDeadlineMs = opts.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.#retryPeriodMs = opts.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    this.#clock = opts.clock ?? realClock;
    this.#log = opts.log ?? silentLogger;
    this.#random = opts.random ?? Math.random;
    // client-go NewLeaderElector's checks.
    if (this.#leaseDurationMs <= this.#renewDeadlineMs) throw new RangeError('leaseDuration must be greater than renewDeadline');
    if (this.#renewDeadlineMs <= LEADER_ELECTION_JITTER_FACTOR * this.#retryPeriodMs) {
      throw new RangeError('renewDeadline must be greater than retryPeriod*JitterFactor');
    }
    if (this.#retryPeriodMs <= 0) throw new RangeError('retryPeriod must be greater than zero');
    // leaseDurationSeconds is an integer > 0 on the wire.
    if (this.#leaseDurationMs < 1000) throw new RangeError('leaseDuration must be at least 1 s');
    if (!this.#name || !this.#namespace) throw new RangeError('lease name and namespace must not be empty');
    if (!this.identity) throw new RangeError('identity must not be empty');
  }

  /**
   * True while this process holds the lease **and** less than `renewDeadline` ms have passed since
   * the start of its last successful renewal, judged on the clock at call time. Writers call it just
   * before each write (`ApiWriteThrottle`'s `canWrite`). Never throws.
   */
  isLeader(): boolean {
    return this.#leading && this.#clock.now() - this.#lastRenewAt < this.#renewDeadlineMs;
  }

  /** The holder identity last observed on the Lease (`""` when none or not yet read). */
  getLeader(): string {
    return this.#observed?.record.holderIdentity ?? '';
  }

  /**
   * Metadata of the Lease as last read or written (name, namespace, uid, resourceVersion), for
   * building the Event's involvedObject; `undefined` before the first successful read. Never throws.
   */
  getLeaseMeta(): LeaseMeta | undefined {
    return this.#lease ? { ...this.#lease.metadata } : undefined;
  }

  /**
   * Runs the election: tries to acquire until it succeeds (or {@link stop}/{@link release}), then
   * renews until leadership is lost or released. Idempotent: later calls return the same promise.
   * @returns a promise that resolves when the elector is done; never rejects.
   * Mirrors client-go `LeaderElector.Run` (`acquire` then `renew`).
   */
  run(): Promise<void> {
    this.#running ??= this.#loop();
    return this.#running;
  }

  /**
   * Stops at once without touching the Lease (as a crash would): `isLeader()` turns false, loops
   * end, and the lease expires after `leaseDuration`. Does not call `onStoppedLeading`. Never throws.
   */
  stop(): void {
    this.#stopped = true;
    this.#unwatch?.();
    this.#unwatch = undefined;
    this.#wakeUp();
    if (this.#leading) this.#endLeading('stopped');
  }

  /**
   * Stops and, if this process still holds the lease, hands it back: the Lease is updated with an
   * empty `holderIdentity` and `leaseDurationSeconds: 1`, so a standby takes it over at its next
   * attempt. Writers are fenced (`isLeader()` false) before the update is sent. Waits for an
   * in-flight attempt first so the update carries the latest resourceVersion (so a hung request
   * delays it: callers bound the whole shutdown with their own timeout).
   * @returns true when the lease was released or was not held; false when the update failed
   *   (logged; the lease then expires normally). Never rejects.
   * Mirrors client-go `LeaderElector.release` (`ReleaseOnCancel`).
   */
  async release(): Promise<boolean> {
    this.stop();
    await this.#inflight;
    if (this.#observed?.record.holderIdentity !== this.identity || !this.#lease) return true;
    const now = this.#clock.now();
    const record: LeaseSpecRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: toMicroTime(now),
      renewTime: toMicroTime(now),
      leaseTransitions: this.#observed.record.leaseTransitions ?? 0,
    };
    try {
      this.#lease = await this.#api.replace({ metadata: this.#lease.metadata, spec: record });
      this.#setObserved(record);
      this.#log.info(this.#logFields(), 'released leader lease');
      return true;
    } catch (err) {
      this.#log.error({ ...this.#logFields(), err: describeError(err) }, 'failed to release leader lease');
      return false;
    }
  }

  // -------------------------------------------------------------------------------------------

  async #loop(): Promise<void> {
    this.#setStatus(0);
    this.#countSlowPath(0);
    this.#log.info(this.#logFields(), 'attempting to acquire leader lease');
    if (this.#api.watch && !this.#stopped) {
      this.#unwatch = this.#api.watch(this.#namespace, this.#name, () => {
        if (!this.#leading) this.#wakeUp();
      });
    }
    // acquire: wait.JitterUntil(..., RetryPeriod, JitterFactor, sliding=true)
    while (!this.#stopped) {
      const acquired = await this.#attempt();
      this.#maybeReportTransition();
      if (this.#stopped) return;
      if (acquired) {
        this.#unwatch?.();
        this.#unwatch = undefined;
        this.#startLeading(this.#writeSentAt);
        break;
      }
      this.#log.debug({ ...this.#logFields(), holder: this.getLeader() }, 'lease is held by another candidate and has not yet expired');
      await this.#sleep(this.#nextAcquireDelay());
    }
    // renew: wait.Until(..., RetryPeriod) with each attempt bounded by the renew deadline.
    while (this.#leading && !this.#stopped) {
      await this.#sleep(this.#retryPeriodMs);
      if (!this.#leading || this.#stopped) return;
      if (!this.isLeader()) {
        this.#lose('failed to renew the lease within the renew deadline');
        return;
      }
      const renewed = await this.#attempt();
      this.#maybeReportTransition();
      if (!this.#leading || this.#stopped) return;
      if (renewed) {
        // Once isLeader() could have answered false, never answer true again (see class comment).
        if (this.#clock.now() - this.#lastRenewAt >= this.#renewDeadlineMs) {
          this.#lose('renewal succeeded only after the renew deadline had passed');
          return;
        }
        this.#lastRenewAt = this.#writeSentAt;
        this.#armFence();
        continue;
      }
      const holder = this.getLeader();
      if (holder !== '' && holder !== this.identity) {
        this.#lose(`the lease is now held by ${holder}`);
        return;
      }
    }
  }

  /** One `tryAcquireOrRenew`, tracked so that {@link release} can wait for it. */
  #attempt(): Promise<boolean> {
    const p = this.#tryAcquireOrRenew();
    this.#inflight = p;
    return p;
  }

  /** Mirrors client-go `tryAcquireOrRenew`. @returns true when this process now holds the lease. Never rejects. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const now = this.#clock.now();
    const record: LeaseSpecRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.floor(this.#leaseDurationMs / 1000),
      acquireTime: toMicroTime(now),
      renewTime: toMicroTime(now),
    };
    // 1. Fast path for the leader: update the lease we hold without reading it first.
    if (this.#observedIsMe() && this.#isLeaseValid(now) && this.#lease && this.#observed) {
      const old = this.#observed.record;
      if (old.acquireTime !== undefined) record.acquireTime = old.acquireTime;
      record.leaseTransitions = old.leaseTransitions ?? 0;
      try {
        this.#writeSentAt = this.#clock.now();
        this.#lease = await this.#api.replace({ metadata: this.#lease.metadata, spec: record });
        this.#setObserved(record);
        return true;
      } catch (err) {
        this.#log.warn({ ...this.#logFields(), err: describeError(err) }, 'failed to update lease optimistically, falling back to slow path');
      }
    }
    // 2. Obtain or create the lease.
    let current: LeaseObject | undefined;
    try {
      current = await this.#api.get(this.#namespace, this.#name);
    } catch (err) {
      this.#log.warn({ ...this.#logFields(), err: describeError(err) }, 'error retrieving resource lock');
      return false;
    }
    if (current === undefined) {
      record.leaseTransitions = 0;
      try {
        this.#writeSentAt = this.#clock.now();
        this.#lease = await this.#api.create({ metadata: { name: this.#name, namespace: this.#namespace }, spec: record });
        this.#setObserved(record);
        return true;
      } catch (err) {
        const level = isConflict(err) ? 'info' : 'warn';
        this.#log[level]({ ...this.#logFields(), err: describeError(err) }, 'error initially creating leader election record');
        return false;
      }
    }
    this.#lease = current;
    // 3. Record obtained: note the local time whenever it changed, then check holder and expiry.
    if (this.#observed?.key !== recordKey(current.spec)) this.#setObserved(current.spec);
    if ((current.spec.holderIdentity ?? '') !== '' && this.#isLeaseValid(now) && !this.#observedIsMe()) return false;
    // 4. Update: keep acquireTime/transitions when renewing, count a transition when taking over.
    if (this.#observedIsMe()) {
      if (current.spec.acquireTime !== undefined) record.acquireTime = current.spec.acquireTime;
      record.leaseTransitions = current.spec.leaseTransitions ?? 0;
      // client-go counts here, before the update and whatever its outcome.
      this.#countSlowPath(1);
    } else {
      record.leaseTransitions = (current.spec.leaseTransitions ?? 0) + 1;
    }
    try {
      this.#writeSentAt = this.#clock.now();
      this.#lease = await this.#api.replace({ metadata: current.metadata, spec: record });
      this.#setObserved(record);
      return true;
    } catch (err) {
      const level = isConflict(err) ? 'info' : 'warn';
      this.#log[level]({ ...this.#logFields(), err: describeError(err) }, 'failed to update lease');
      return false;
    }
  }

  #setObserved(record: LeaseSpecRecord): void {
    this.#observed = { record: { ...record }, key: recordKey(record), at: this.#clock.now() };
  }

  #observedIsMe(): boolean {
    return this.#observed?.record.holderIdentity === this.identity;
  }

  /** client-go `isLeaseValid`: observedTime + leaseDurationSeconds is after `now`. */
  #isLeaseValid(now: number): boolean {
    if (!this.#observed) return false;
    return this.#observed.at + (this.#observed.record.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  /** `wait.Jitter(retryPeriod, 1.2)`, brought forward to just after the observed lease expires. */
  #nextAcquireDelay(): number {
    const jittered = this.#retryPeriodMs * (1 + this.#random() * LEADER_ELECTION_JITTER_FACTOR);
    const o = this.#observed;
    if (!o || (o.record.holderIdentity ?? '') === '') return jittered;
    const untilExpiry = o.at + (o.record.leaseDurationSeconds ?? 0) * 1000 - this.#clock.now();
    // Already expired and still not acquired (the API failed or another candidate won): plain
    // jittered retry, never a busy loop.
    if (untilExpiry < 0) return jittered;
    // +1 ms: isLeaseValid uses a strict "after", so the lease is expired one tick past that instant.
    return Math.min(jittered, untilExpiry + 1);
  }

  #maybeReportTransition(): void {
    const holder = this.getLeader();
    if (this.#observed === undefined || holder === this.#reportedLeader) return;
    this.#reportedLeader = holder;
    if (holder !== '') this.#log.info({ ...this.#logFields(), leader: holder }, 'new leader elected');
    try {
      this.#opts.onNewLeader?.(holder);
    } catch (err) {
      this.#log.error({ ...this.#logFields(), err: describeError(err) }, 'onNewLeader callback failed');
    }
  }

  #startLeading(renewStartedAt: number): void {
    this.#leading = true;
    this.#nudged = false;
    this.#lastRenewAt = renewStartedAt;
    this.#armFence();
    this.#log.info(this.#logFields(), 'successfully acquired lease');
    this.#event('became leader');
    this.#setStatus(1);
    try {
      const r = this.#opts.onStartedLeading();
      if (r instanceof Promise) {
        r.catch((err: unknown) => this.#log.error({ ...this.#logFields(), err: describeError(err) }, 'onStartedLeading failed'));
      }
    } catch (err) {
      this.#log.error({ ...this.#logFields(), err: describeError(err) }, 'onStartedLeading failed');
    }
  }

  /** Ends leadership when the renew deadline passes, even if the renew loop is stuck on a request. */
  #armFence(): void {
    this.#fenceTimer?.cancel();
    const dueIn = this.#lastRenewAt + this.#renewDeadlineMs - this.#clock.now();
    this.#fenceTimer = this.#clock.setTimeout(() => {
      if (this.#leading && !this.isLeader()) this.#lose('failed to renew the lease within the renew deadline');
    }, dueIn);
  }

  #endLeading(why: 'lost' | 'stopped'): void {
    this.#leading = false;
    this.#fenceTimer?.cancel();
    this.#fenceTimer = undefined;
    this.#setStatus(0);
    this.#event('stopped leading');
    if (why === 'stopped') this.#log.info(this.#logFields(), 'stopped leading');
  }

  #lose(reason: string): void {
    if (!this.#leading) return;
    this.#endLeading('lost');
    this.#log.error({ ...this.#logFields(), reason }, 'leader election lost');
    this.#wakeUp();
    try {
      this.#opts.onStoppedLeading();
    } catch (err) {
      this.#log.error({ ...this.#logFields(), err: describeError(err) }, 'onStoppedLeading callback failed');
    }
  }

  #event(what: string): void {
    try {
      this.#opts.onEvent?.(LEADER_ELECTION_EVENT_REASON, `${this.identity} ${what}`);
    } catch (err) {
      this.#log.warn({ ...this.#logFields(), err: describeError(err) }, 'failed to record leader election event');
    }
  }

  #setStatus(status: 0 | 1): void {
    try {
      this.#opts.setLeaderStatus?.(this.#name, status);
    } catch (err) {
      this.#log.warn({ ...this.#logFields(), err: describeError(err) }, 'failed to set leader status metric');
    }
  }

  #countSlowPath(count: 0 | 1): void {
    try {
      this.#opts.onSlowPath?.(this.#name, count);
    } catch (err) {
      this.#log.warn({ ...this.#logFields(), err: describeError(err) }, 'failed to count leader election slow path');
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#nudged || this.#stopped) {
      this.#nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = () => {
        timer.cancel();
        this.#wake = undefined;
        resolve();
      };
    });
  }

  /** Ends the current sleep now, or makes the next one return at once. */
  #wakeUp(): void {
    if (this.#wake) this.#wake();
    else this.#nudged = true;
  }

  #logFields(): { lease: string; identity: string } {
    return { lease: `${this.#namespace}/${this.#name}`, identity: this.identity };
  }
}
