/**
 * LeaseElector against the real kube-apiserver: two candidates in one process, short durations
 * (lease 3 s, renew deadline 2 s, retry 0.5 s), a unique Lease per test.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { coordinationLeaseApi, LeaseElector, type LeaseApi } from '../../src/kube/leaderelection.js';
import type { KubeClients } from '../../src/kube/client.js';
import { createTestNamespace, testClients, uniquePrefix, waitFor } from '../support/cluster.js';

const LEASE_MS = 3_000;
const RENEW_DEADLINE_MS = 2_000;
const RETRY_MS = 500;

interface Candidate {
  elector: LeaseElector;
  startedAt: number[];
  lostAt: number[];
  events: string[];
}

let clients: KubeClients;
let namespace: string;

function candidate(api: LeaseApi, name: string, identity: string): Candidate {
  const c = { startedAt: [] as number[], lostAt: [] as number[], events: [] as string[] } as Candidate;
  c.elector = new LeaseElector({
    api,
    name,
    namespace,
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryPeriodMs: RETRY_MS,
    onStartedLeading: () => void c.startedAt.push(Date.now()),
    onStoppedLeading: () => void c.lostAt.push(Date.now()),
    onEvent: (_reason, message) => void c.events.push(message),
  });
  void c.elector.run();
  return c;
}

/** Samples both candidates for `ms` milliseconds and fails if both ever pass isLeader(). */
async function assertNeverTwoLeaders(cs: Candidate[], ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    assert.ok(cs.filter((c) => c.elector.isLeader()).length <= 1, 'two candidates pass isLeader() at once');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function readLease(name: string) {
  return clients.coordination.readNamespacedLease({ name, namespace });
}

describe('LeaseElector on the real API server', () => {
  before(async () => {
    clients = testClients();
    namespace = uniquePrefix('le');
    await createTestNamespace(clients, namespace);
  });

  after(async () => {
    // Namespaces never finish terminating without a controller-manager; leave it (labelled nlc-test).
  });

  for (const watch of [true, false]) {
    const label = watch ? 'with the Lease watch' : 'polling only';
    test(`exactly one leads; a crashed leader is replaced within lease duration + retry period; release hands over (${label})`, async (t) => {
      const api = coordinationLeaseApi(clients.coordination, watch ? { kubeConfig: clients.kubeConfig } : {});
      const name = uniquePrefix('lease');
      const a = candidate(api, name, `${name}-a`);
      const b = candidate(api, name, `${name}-b`);
      const cs = [a, b];
      try {
        const first = await waitFor('a leader', () => cs.find((c) => c.elector.isLeader()), 10_000, 20);
        const second = first === a ? b : a;
        await assertNeverTwoLeaders(cs, 2 * LEASE_MS);
        assert.equal(first.elector.isLeader(), true);
        assert.equal(second.startedAt.length, 0);

        const lease = await readLease(name);
        assert.equal(lease.spec?.holderIdentity, first.elector.identity);
        assert.equal(lease.spec?.leaseDurationSeconds, LEASE_MS / 1000);
        assert.equal(lease.spec?.leaseTransitions, 0);
        // Read-back MicroTimes are strings with six fractional digits (typescript-notes.md §1.7).
        const renewTime: unknown = lease.spec?.renewTime;
        assert.equal(typeof renewTime, 'string');
        assert.match(String(renewTime), /\.\d{6}Z$/);
        assert.deepEqual(first.events, [`${first.elector.identity} became leader`]);

        // Crash: stop renewing without releasing.
        first.elector.stop();
        const crashedAt = Date.now();
        await waitFor('takeover after the crash', () => second.elector.isLeader(), 2 * LEASE_MS, 10);
        const takeoverMs = (second.startedAt[0] ?? NaN) - crashedAt;
        const bound = watch ? LEASE_MS + RETRY_MS : LEASE_MS + 2 * 2.2 * RETRY_MS;
        t.diagnostic(`takeover ${takeoverMs} ms after the crash`);
        assert.ok(takeoverMs <= bound, `takeover ${takeoverMs} ms after the crash (bound ${bound} ms)`);
        assert.ok(takeoverMs >= LEASE_MS - RETRY_MS - 100, `takeover ${takeoverMs} ms after the crash is before the lease expired`);
        const taken = await readLease(name);
        assert.equal(taken.spec?.holderIdentity, second.elector.identity);
        assert.equal(taken.spec?.leaseTransitions, 1);
        assert.equal(first.lostAt.length, 0, 'a requested stop is not reported as a loss');

        // Release: a fresh standby takes over in about one retry period.
        const third = candidate(api, name, `${name}-c`);
        cs.push(third);
        await assertNeverTwoLeaders(cs, 2 * RETRY_MS);
        assert.equal(await second.elector.release(), true);
        const releasedAt = Date.now();
        assert.equal(second.elector.isLeader(), false);
        await waitFor('takeover after release', () => third.elector.isLeader(), 5_000, 10);
        const handoverMs = (third.startedAt[0] ?? NaN) - releasedAt;
        const handoverBound = watch ? RETRY_MS : 2.2 * RETRY_MS + 200;
        t.diagnostic(`takeover ${handoverMs} ms after release`);
        assert.ok(handoverMs <= handoverBound, `takeover ${handoverMs} ms after release (bound ${handoverBound} ms)`);
        const handed = await readLease(name);
        assert.equal(handed.spec?.holderIdentity, third.elector.identity);
        assert.equal(handed.spec?.leaseTransitions, 2);
        assert.deepEqual(second.events, [`${second.elector.identity} became leader`, `${second.elector.identity} stopped leading`]);

        assert.equal(await third.elector.release(), true);
        const released = await readLease(name);
        assert.equal(released.spec?.holderIdentity, '');
        assert.equal(released.spec?.leaseDurationSeconds, 1);
      } finally {
        for (const c of cs) c.elector.stop();
        await api.delete(namespace, name).catch(() => undefined);
      }
    });
  }

  test('a leader that loses API access is fenced by the renew deadline and reports the loss before the standby leads', async (t) => {
    const good = coordinationLeaseApi(clients.coordination, { kubeConfig: clients.kubeConfig });
    let cut = false;
    // Same server; every call fails once `cut` is set, as when the leader's network or RBAC goes away.
    const cuttable: LeaseApi = {
      get: (ns, n) => (cut ? Promise.reject(Object.assign(new Error('cut'), { code: 503 })) : good.get(ns, n)),
      create: (l) => (cut ? Promise.reject(Object.assign(new Error('cut'), { code: 503 })) : good.create(l)),
      replace: (l) => (cut ? Promise.reject(Object.assign(new Error('cut'), { code: 503 })) : good.replace(l)),
      delete: (ns, n) => good.delete(ns, n),
    };
    const name = uniquePrefix('lease');
    const a = candidate(cuttable, name, `${name}-a`);
    await waitFor('a leads', () => a.elector.isLeader(), 10_000, 20);
    const b = candidate(good, name, `${name}-b`);
    try {
      await assertNeverTwoLeaders([a, b], 1_000);
      cut = true;
      const cutAt = Date.now();
      await waitFor('b leads', () => b.elector.isLeader(), 3 * LEASE_MS, 10);
      assert.equal(a.lostAt.length, 1);
      const lostAt = a.lostAt[0] ?? NaN;
      t.diagnostic(`fenced ${lostAt - cutAt} ms after the cut; new leader ${(b.startedAt[0] ?? NaN) - lostAt} ms later`);
      assert.ok(lostAt - cutAt <= RENEW_DEADLINE_MS + 100, `fenced ${lostAt - cutAt} ms after the cut`);
      assert.ok(lostAt < (b.startedAt[0] ?? NaN), 'the old leader stopped before the new one started');
      assert.equal(a.elector.isLeader(), false);
      assert.equal((await readLease(name)).spec?.leaseTransitions, 1);
    } finally {
      a.elector.stop();
      b.elector.stop();
      await good.delete(namespace, name).catch(() => undefined);
    }
  });
});
