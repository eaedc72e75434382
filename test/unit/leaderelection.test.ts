import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import {
  LeaseElector,
  LEADER_ELECTION_EVENT_REASON,
  type LeaseApi,
  type LeaseElectorOptions,
  type LeaseObject,
} from '../../src/kube/leaderelection.js';

const NS = 'nlc-system';
const NAME = 'node-lifecycle-controller';
const L = 15_000;
const RD = 10_000;
const RP = 2_000;

/** An HTTP-status error shaped like client-node's ApiException (numeric `code`). */
class HttpError extends Error {
  constructor(readonly code: number) {
    super(`HTTP ${code}`);
  }
}

/**
 * In-memory double of the narrow LeaseApi with the API server's optimistic concurrency: every
 * write bumps resourceVersion, create of an existing Lease is 409, replace with a stale
 * resourceVersion is 409 and replace of a missing Lease is 404.
 */
class MemoryLeaseApi implements LeaseApi {
  readonly store = new Map<string, LeaseObject>();
  #rv = 100;
  #listeners = new Set<() => void>();
  writes = 0;

  constructor(readonly withWatch = false) {
    if (!withWatch) this.watch = undefined;
  }

  async get(namespace: string, name: string): Promise<LeaseObject | undefined> {
    const l = this.store.get(`${namespace}/${name}`);
    return l ? structuredClone(l) : undefined;
  }
  async create(lease: LeaseObject): Promise<LeaseObject> {
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    if (this.store.has(key)) throw new HttpError(409);
    return this.#put(key, lease);
  }
  async replace(lease: LeaseObject): Promise<LeaseObject> {
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    const cur = this.store.get(key);
    if (!cur) throw new HttpError(404);
    if (lease.metadata.resourceVersion !== cur.metadata.resourceVersion) throw new HttpError(409);
    return this.#put(key, lease);
  }
  async delete(namespace: string, name: string): Promise<void> {
    if (!this.store.delete(`${namespace}/${name}`)) throw new HttpError(404);
  }
  watch?: (namespace: string, name: string, onChange: () => void) => () => void = (_ns, _name, onChange) => {
    this.#listeners.add(onChange);
    return () => this.#listeners.delete(onChange);
  };
  lease(): LeaseObject | undefined {
    return this.store.get(`${NS}/${NAME}`);
  }
  #put(key: string, lease: LeaseObject): LeaseObject {
    const stored = structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.#rv) } });
    this.store.set(key, stored);
    this.writes++;
    for (const l of this.#listeners) l();
    return structuredClone(stored);
  }
}

type Mode = 'ok' | 'fail' | 'hang';

/** One candidate's view of the shared API; its mode simulates that candidate losing API access. */
class CandidateApi implements LeaseApi {
  mode: Mode = 'ok';
  watch: LeaseApi['watch'];
  constructor(readonly inner: MemoryLeaseApi) {
    this.watch = inner.watch?.bind(inner);
  }
  #gate<T>(fn: () => Promise<T>): Promise<T> {
    if (this.mode === 'fail') return Promise.reject(new HttpError(503));
    if (this.mode === 'hang') return new Promise<T>(() => undefined);
    return fn();
  }
  get(ns: string, name: string) {
    return this.#gate(() => this.inner.get(ns, name));
  }
  create(lease: LeaseObject) {
    return this.#gate(() => this.inner.create(lease));
  }
  replace(lease: LeaseObject) {
    return this.#gate(() => this.inner.replace(lease));
  }
  delete(ns: string, name: string) {
    return this.#gate(() => this.inner.delete(ns, name));
  }
}

interface Candidate {
  elector: LeaseElector;
  api: CandidateApi;
  started: number[];
  stopped: number[];
  newLeaders: string[];
  status: number[];
  events: string[];
}

function candidate(clock: FakeClock, store: MemoryLeaseApi, identity: string, over: Partial<LeaseElectorOptions> = {}): Candidate {
  const api = new CandidateApi(store);
  const c: Candidate = { api, started: [], stopped: [], newLeaders: [], status: [], events: [] } as unknown as Candidate;
  c.elector = new LeaseElector({
    api,
    name: NAME,
    namespace: NS,
    identity,
    leaseDurationMs: L,
    renewDeadlineMs: RD,
    retryPeriodMs: RP,
    clock,
    random: () => 0,
    onStartedLeading: () => void c.started.push(clock.now()),
    onStoppedLeading: () => void c.stopped.push(clock.now()),
    onNewLeader: (id) => void c.newLeaders.push(id),
    setLeaderStatus: (name, s) => {
      assert.equal(name, NAME);
      c.status.push(s);
    },
    onEvent: (reason, message) => {
      assert.equal(reason, LEADER_ELECTION_EVENT_REASON);
      c.events.push(message);
    },
    ...over,
  });
  return c;
}

/** Advances in small steps so that state can be checked between timers. */
async function advance(clock: FakeClock, ms: number, step = 100, check?: () => void): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    await clock.advanceAsync(Math.min(step, ms - done));
    check?.();
  }
}

/** Like {@link advance}, but moves time first and checks before the overdue timers fire. */
async function stalledAdvance(clock: FakeClock, ms: number, step: number, check: () => void): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    clock.set(clock.now() + step);
    check();
    await clock.advanceAsync(0);
    check();
  }
}

/**
 * A FakeClock, a shared in-memory Lease and candidate "a" that has already acquired it;
 * `standby()` starts another candidate.
 */
async function withLeader(opts: { watch?: boolean } = {}) {
  const clock = new FakeClock();
  const store = new MemoryLeaseApi(opts.watch ?? false);
  const a = candidate(clock, store, 'a');
  void a.elector.run();
  await clock.advanceAsync(0);
  const standby = (identity = 'b', over: Partial<LeaseElectorOptions> = {}): Candidate => {
    const c = candidate(clock, store, identity, over);
    void c.elector.run();
    return c;
  };
  return { clock, store, a, standby };
}

/** Counts the Lease reads (attempts past the fast path) of a candidate. */
function countReads(c: Candidate): { n: number } {
  const counter = { n: 0 };
  const get = c.api.get.bind(c.api);
  c.api.get = (ns, name) => {
    counter.n++;
    return get(ns, name);
  };
  return counter;
}

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe('LeaseElector', () => {
  test('acquires an absent lease: creates it with MicroTimes, transitions 0, metric, event and callbacks', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseApi();
    const a = candidate(clock, store, 'host-a_1');
    void a.elector.run();
    await clock.advanceAsync(0);
    assert.equal(a.elector.isLeader(), true);
    const lease = store.lease();
    assert.ok(lease);
    assert.equal(lease.spec.holderIdentity, 'host-a_1');
    assert.equal(lease.spec.leaseDurationSeconds, L / 1000);
    assert.equal(lease.spec.leaseTransitions, 0);
    assert.match(lease.spec.renewTime ?? '', MICRO_TIME);
    assert.match(lease.spec.acquireTime ?? '', MICRO_TIME);
    assert.equal(Date.parse(lease.spec.renewTime ?? ''), clock.now());
    assert.deepEqual(a.started, [clock.now()]);
    assert.deepEqual(a.status, [0, 1]);
    assert.deepEqual(a.events, ['host-a_1 became leader']);
    assert.deepEqual(a.newLeaders, ['host-a_1']);
    assert.equal(a.elector.getLeaseMeta()?.resourceVersion, lease.metadata.resourceVersion);
  });

  test('the leader renews every retry period and keeps acquireTime; a standby stays blocked while the lease is fresh', async () => {
    const { clock, store, a, standby } = await withLeader();
    const acquired = store.lease()?.spec.acquireTime;
    const b = standby();
    await advance(clock, 60_000, 500, () => {
      assert.equal(a.elector.isLeader(), true);
      assert.equal(b.elector.isLeader(), false);
    });
    const lease = store.lease();
    assert.equal(lease?.spec.holderIdentity, 'a');
    assert.equal(lease?.spec.acquireTime, acquired);
    assert.ok(clock.now() - Date.parse(lease?.spec.renewTime ?? '') <= RP, 'renewTime is at most one retry period old');
    assert.equal(lease?.spec.leaseTransitions, 0);
    assert.equal(b.elector.getLeader(), 'a');
    assert.deepEqual(b.started, []);
    assert.deepEqual(b.status, [0]);
  });

  test('takes over a lease whose holder stopped renewing, only after the lease duration, counting a transition', async () => {
    const { clock, store, a, standby } = await withLeader();
    const b = standby();
    await advance(clock, 7_000);
    a.elector.stop(); // crash: no release
    const stoppedAt = clock.now();
    const lastRenew = Date.parse(store.lease()?.spec.renewTime ?? '');
    assert.equal(a.elector.isLeader(), false);
    await advance(clock, L + 2.2 * RP, 50);
    assert.equal(b.started.length, 1);
    const takeover = b.started[0] ?? NaN;
    assert.ok(takeover >= lastRenew + L, `takeover at +${takeover - lastRenew} ms must not precede the lease duration`);
    assert.ok(takeover <= stoppedAt + L + RP, `takeover ${takeover - stoppedAt} ms after the crash`);
    const lease = store.lease();
    assert.equal(lease?.spec.holderIdentity, 'b');
    assert.equal(lease?.spec.leaseTransitions, 1);
    assert.deepEqual(b.newLeaders, ['a', 'b']);
    assert.deepEqual(a.stopped, [], 'a requested stop is not a loss');
    assert.deepEqual(a.events, ['a became leader', 'a stopped leading']);
  });

  test('renewal failing past the renew deadline fences isLeader() at once and calls onStoppedLeading before anyone else may lead', async () => {
    const { clock, store, a, standby } = await withLeader();
    const b = standby();
    await advance(clock, 4_000);
    const lastRenew = Date.parse(store.lease()?.spec.renewTime ?? '');
    a.api.mode = 'fail';
    let fencedAt = Number.NaN;
    await advance(clock, 30_000, 50, () => {
      if (Number.isNaN(fencedAt) && !a.elector.isLeader()) fencedAt = clock.now();
      assert.ok(!(a.elector.isLeader() && b.elector.isLeader()), 'two leaders');
    });
    assert.ok(fencedAt <= lastRenew + RD, `fenced ${fencedAt - lastRenew} ms after the last renewal`);
    assert.ok(fencedAt > lastRenew + RD - 100);
    assert.deepEqual(a.stopped, [fencedAt]);
    assert.equal(a.status.at(-1), 0);
    assert.equal(a.events.at(-1), 'a stopped leading');
    assert.equal(b.started.length, 1);
    assert.ok((b.started[0] ?? NaN) >= lastRenew + L);
    // A's API coming back does not make it leader again.
    a.api.mode = 'ok';
    await advance(clock, 10_000, 500);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.stopped.length, 1);
  });

  test('isLeader() is computed at call time: a renew loop stuck on a hung request is still fenced', async () => {
    const { clock, a } = await withLeader();
    const acquiredAt = clock.now();
    a.api.mode = 'hang';
    await clock.advanceAsync(RP); // the renew attempt starts and never returns
    clock.set(acquiredAt + RD - 1); // time moves, no timer fires
    assert.equal(a.elector.isLeader(), true);
    clock.set(acquiredAt + RD);
    assert.equal(a.elector.isLeader(), false);
    assert.deepEqual(a.stopped, []);
    await clock.advanceAsync(0); // the fence timer is due
    assert.deepEqual(a.stopped, [acquiredAt + RD]);
  });

  test('release hands the lease over: empty holder, 1 s duration, standby acquires within one retry period', async () => {
    const { clock, store, a, standby } = await withLeader();
    const b = standby();
    await advance(clock, 5_000, 250);
    assert.equal(await a.elector.release(), true);
    const releasedAt = clock.now();
    assert.equal(a.elector.isLeader(), false);
    const released = store.lease();
    assert.equal(released?.spec.holderIdentity, '');
    assert.equal(released?.spec.leaseDurationSeconds, 1);
    assert.equal(released?.spec.leaseTransitions, 0);
    assert.deepEqual(a.stopped, []);
    assert.deepEqual(a.status, [0, 1, 0]);
    await advance(clock, RP, 50);
    assert.equal(b.started.length, 1);
    assert.ok((b.started[0] ?? NaN) - releasedAt <= RP);
    assert.equal(store.lease()?.spec.holderIdentity, 'b');
    assert.equal(store.lease()?.spec.leaseTransitions, 1);
    assert.equal(await b.elector.release(), true);
    assert.equal(await a.elector.release(), true, 'releasing a lease not held is a no-op');
    assert.equal(store.lease()?.spec.holderIdentity, '');
  });

  // client-go leaderelection.go tryAcquireOrRenew step 4: slowpathExercised(name) when the leader
  // read the Lease and is about to update it (k8s.io/client-go@v0.37.2; metric
  // leader_election_slowpath_total{name} from k8s.io/component-base@v0.37.2).
  test('leader_election_slowpath_total: counted when the leader has to read the Lease before renewing, never on the fast path, a create or a takeover', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseApi();
    const counts = new Map<string, number[]>();
    const count = (id: string) => (name: string, n: 0 | 1) => {
      assert.equal(name, NAME);
      counts.set(id, [...(counts.get(id) ?? []), n]);
    };
    const a = candidate(clock, store, 'a', { onSlowPath: count('a') });
    void a.elector.run();
    await clock.advanceAsync(0);
    const b = candidate(clock, store, 'b', { onSlowPath: count('b') });
    void b.elector.run();
    await advance(clock, 5 * RP, 250);
    assert.deepEqual(counts.get('a'), [0], 'a create and fast-path renewals are not the slow path; the series starts at 0');
    assert.deepEqual(counts.get('b'), [0], 'a standby blocked by a fresh lease is not counted');

    // Someone else writes the Lease (e.g. a label): the optimistic update answers 409, the leader reads and updates.
    const cur = store.lease();
    assert.ok(cur);
    await store.replace({ ...cur, metadata: { ...cur.metadata, labels: { touched: 'yes' } } });
    await advance(clock, RP, 250);
    assert.deepEqual(counts.get('a'), [0, 1]);
    assert.equal(store.lease()?.spec.holderIdentity, 'a');
    assert.equal(a.elector.isLeader(), true);

    // The optimistic update and the read both fail: nothing is counted (client-go returns before step 4).
    a.api.mode = 'fail';
    await advance(clock, RP, 250);
    assert.deepEqual(counts.get('a'), [0, 1]);
    // Back within the renew deadline: the fast path works again (the observed lease is still valid).
    a.api.mode = 'ok';
    await advance(clock, RP, 250);
    assert.deepEqual(counts.get('a'), [0, 1]);
    assert.equal(a.elector.isLeader(), true);

    // The leader crashes; the standby's takeover is not a slow path (it was not the leader).
    a.elector.stop();
    await advance(clock, L + 3 * RP, 250);
    assert.equal(b.started.length, 1);
    assert.deepEqual(counts.get('b'), [0]);
  });

  test('with a watch, a standby acquires a released lease without waiting for its retry period', async () => {
    const { clock, a, standby } = await withLeader({ watch: true });
    const b = standby();
    await advance(clock, 3_000, 250);
    const at = clock.now();
    await a.elector.release();
    await clock.advanceAsync(0);
    assert.deepEqual(b.started, [at]);
  });

  test('a standby whose API fails after the lease expired retries at the jittered period, not in a busy loop', async () => {
    const { clock, a, standby } = await withLeader();
    const b = standby();
    await advance(clock, 1_000);
    a.elector.stop();
    const reads = countReads(b);
    await advance(clock, 5_000, 50);
    b.api.mode = 'fail';
    await advance(clock, L, 50); // the lease B observed has expired, and B cannot act on it
    assert.equal(b.elector.isLeader(), false);
    reads.n = 0;
    await advance(clock, 10 * RP, 50);
    assert.ok(reads.n <= 11, `${reads.n} attempts in ${10 * RP} ms`);
    assert.ok(reads.n >= 9, `${reads.n} attempts in ${10 * RP} ms`);
    b.api.mode = 'ok';
    await advance(clock, RP, 50);
    assert.equal(b.elector.isLeader(), true);
  });

  test('a failed release leaves the lease to expire and reports false', async () => {
    const { store, a } = await withLeader();
    a.api.mode = 'fail';
    assert.equal(await a.elector.release(), false);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(store.lease()?.spec.holderIdentity, 'a');
  });

  test('two candidates racing to create the lease: exactly one wins (409 for the other)', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseApi();
    const a = candidate(clock, store, 'a');
    const b = candidate(clock, store, 'b');
    void a.elector.run();
    void b.elector.run();
    await advance(clock, 20_000, 100, () => assert.equal(Number(a.elector.isLeader()) + Number(b.elector.isLeader()), 1));
    assert.equal(a.started.length + b.started.length, 1);
    assert.equal(store.lease()?.spec.leaseTransitions, 0);
  });

  test('a non-leader retries after a jittered period: retryPeriod × (1 + random × 1.2)', async () => {
    const { clock, store } = await withLeader();
    const b = candidate(clock, store, 'b', { random: () => 0.5 });
    const reads = countReads(b);
    void b.elector.run();
    await clock.advanceAsync(0);
    assert.equal(reads.n, 1);
    const period = RP * (1 + 0.5 * 1.2);
    await clock.advanceAsync(period - 1);
    assert.equal(reads.n, 1);
    await clock.advanceAsync(1);
    assert.equal(reads.n, 2);
  });

  test('the constructor enforces client-go duration rules', () => {
    const base = { api: new MemoryLeaseApi(), name: NAME, namespace: NS, onStartedLeading: () => undefined, onStoppedLeading: () => undefined };
    assert.throws(() => new LeaseElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }), RangeError);
    assert.throws(() => new LeaseElector({ ...base, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }), RangeError);
    assert.throws(() => new LeaseElector({ ...base, leaseDurationMs: 900, renewDeadlineMs: 500, retryPeriodMs: 100 }), RangeError);
    assert.throws(() => new LeaseElector({ ...base, name: '' }), RangeError);
    const e = new LeaseElector(base);
    assert.match(e.identity, /^.+_[0-9a-f-]{36}$/);
  });

  test('property: whatever API outages happen, two candidates never both pass isLeader() at once', async () => {
    const outage = fc.record({
      who: fc.constantFrom(0, 1),
      mode: fc.constantFrom<Mode>('fail', 'hang'),
      startMs: fc.integer({ min: 0, max: 40_000 }),
      lengthMs: fc.integer({ min: 500, max: 30_000 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(outage, { maxLength: 4 }), fc.integer({ min: 0, max: 1_000 }), async (outages, delayB) => {
        const clock = new FakeClock();
        const store = new MemoryLeaseApi();
        const cs = [candidate(clock, store, 'a', { random: Math.random }), candidate(clock, store, 'b', { random: Math.random })];
        const t0 = clock.now();
        void cs[0]?.elector.run();
        await advance(clock, delayB, 100);
        void cs[1]?.elector.run();
        // Time jumps before due timers run (a stalled event loop), so only the time-based fence
        // of isLeader(), not the fence timer, can keep the old leader from passing the check.
        await stalledAdvance(clock, 60_000, 250, () => {
          const t = clock.now() - t0;
          for (const [i, c] of cs.entries()) {
            const active = outages.filter((o) => o.who === i && t >= o.startMs && t < o.startMs + o.lengthMs);
            // A hung request stays hung; a new one follows the current mode.
            c.api.mode = active.at(-1)?.mode ?? 'ok';
          }
          const leaders = cs.filter((c) => c.elector.isLeader()).length;
          assert.ok(leaders <= 1, `two leaders at +${t} ms`);
        });
      }),
      { numRuns: 25 },
    );
  });
});
