/**
 * The Fleet's heartbeat behaviour on a FakeClock, against recording stub API clients (no cluster):
 * spread schedules, kill/revive, heartbeat modes, pressure posts, retries and lag accounting.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import type { KubeClients } from '../../src/kube/client.js';
import { toMillis } from '../../src/kube/objects.js';
import { Fleet, resolveFleetOptions } from '@node-lifecycle-controller/sim/fleet';

interface Call {
  method: string;
  name?: string;
  body?: unknown;
  at: number;
}

/** Stub API clients that record calls and answer like an empty cluster. */
function stubClients(clock: FakeClock, failLeaseOnce = new Set<string>()) {
  const calls: Call[] = [];
  const record = (method: string) => async (req: { name?: string; body?: unknown }) => {
    calls.push({ method, name: req.name ?? (req.body as { metadata?: { name?: string } })?.metadata?.name, body: req.body, at: clock.now() });
    if (method === 'patchNamespacedLease' && req.name && failLeaseOnce.delete(req.name)) {
      throw Object.assign(new Error('server error'), { code: 503 });
    }
    if (method.startsWith('list')) return { items: [], metadata: { resourceVersion: '1' } };
    return { metadata: { name: req.name, uid: `uid-${req.name ?? 'x'}` } };
  };
  const api = new Proxy({}, { get: (_t, method: string) => record(method) });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:9', skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const clients = { kubeConfig, core: api, apps: api, coordination: api, storage: api, events: api } as unknown as KubeClients;
  return { calls, clients };
}

async function startFleet(opts: { failLeaseOnce?: Set<string> } = {}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const { calls, clients } = stubClients(clock, opts.failLeaseOnce);
  const fleet = new Fleet({
    clients,
    clock,
    prefix: 'f',
    zones: 2,
    nodesPerZone: 2,
    podsPerNode: 0,
    leaseRenewIntervalMs: 1000,
    nodeStatusUpdateFrequencyMs: 4000,
  });
  const started = fleet.start();
  await clock.advanceAsync(0);
  await started;
  const t0 = clock.now();
  const renewals = (node: string, since = t0) =>
    calls.filter((c) => c.method === 'patchNamespacedLease' && c.name === node && c.at >= since).length;
  const statusPosts = (node: string, since = t0) =>
    calls.filter((c) => c.method === 'patchNodeStatus' && c.name === node && c.at >= since);
  return { clock, calls, fleet, renewals, statusPosts };
}

describe('Fleet heartbeats (stub API, fake clock)', () => {
  test('registers nodes and leases, then renews each lease once per interval, spread across the interval', async () => {
    const { clock, calls, fleet, renewals } = await startFleet();
    assert.deepEqual(fleet.nodeNames(), ['f-zone-a-0', 'f-zone-a-1', 'f-zone-b-0', 'f-zone-b-1']);
    assert.equal(calls.filter((c) => c.method === 'createNode').length, 4);
    assert.equal(calls.filter((c) => c.method === 'createNamespacedLease').length, 4);
    await clock.advanceAsync(2999);
    for (const n of fleet.nodeNames()) assert.equal(renewals(n), 3, n);
    const firstRenewals = fleet.nodeNames().map((n) => calls.find((c) => c.method === 'patchNamespacedLease' && c.name === n)?.at);
    assert.equal(new Set(firstRenewals).size, 4, 'nodes do not renew at the same instant');
    const patch = calls.find((c) => c.method === 'patchNamespacedLease')?.body as { spec: { renewTime: string; holderIdentity: string } };
    assert.match(patch.spec.renewTime, /\.\d{6}Z$/);
    assert.equal(toMillis(patch.spec.renewTime), firstRenewals[0]);
    const s = fleet.stats();
    assert.equal(s.leaseRenewals, 12);
    assert.equal(s.heartbeatLagMs.max, 0);
    assert.equal(s.errors, 0);
    await fleet.stop();
  });

  test('a killed node stops renewing and posting; revive posts Ready=True and renews at once', async () => {
    const { clock, fleet, renewals, statusPosts } = await startFleet();
    const victim = 'f-zone-a-0';
    await clock.advanceAsync(1);
    fleet.killNode(victim);
    assert.equal(fleet.isAlive(victim), false);
    const killedAt = clock.now();
    await clock.advanceAsync(10_000);
    assert.equal(renewals(victim, killedAt), 0);
    assert.equal(statusPosts(victim, killedAt).length, 0);
    assert.equal(renewals('f-zone-a-1', killedAt), 10);
    const revivedAt = clock.now();
    await fleet.reviveNode(victim);
    assert.equal(renewals(victim, revivedAt), 1);
    const post = statusPosts(victim, revivedAt)[0]?.body as { status: { conditions: Array<{ type: string; status: string; lastHeartbeatTime: string }> } };
    const ready = post.status.conditions.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(toMillis(ready?.lastHeartbeatTime), Math.floor(revivedAt / 1000) * 1000);
    await clock.advanceAsync(3000);
    assert.equal(renewals(victim, revivedAt), 4);
    assert.equal(fleet.stats().liveNodes, 4);
    await fleet.stop();
  });

  test('zone outage and restore act on every node of the zone only', async () => {
    const { clock, fleet, renewals } = await startFleet();
    await clock.advanceAsync(1);
    fleet.killZone('zone-b');
    const t = clock.now();
    await clock.advanceAsync(5000);
    assert.deepEqual(
      fleet.nodeNames().map((n) => renewals(n, t)),
      [5, 5, 0, 0], // due at +1000 … +5000 and +250 … +4250
    );
    await fleet.reviveZone('zone-b');
    assert.equal(fleet.stats().liveNodes, 4);
    assert.throws(() => fleet.killZone('zone-x'), /unknown zone/);
    await fleet.stop();
  });

  test('heartbeat modes cut one heartbeat and keep the other', async () => {
    const { clock, fleet, renewals, statusPosts } = await startFleet();
    await clock.advanceAsync(1);
    await fleet.setHeartbeatMode('f-zone-a-0', 'status-only');
    await fleet.setHeartbeatMode('f-zone-a-1', 'lease-only');
    const t = clock.now();
    await clock.advanceAsync(8000);
    assert.equal(renewals('f-zone-a-0', t), 0);
    assert.equal(statusPosts('f-zone-a-0', t).length, 2);
    assert.equal(renewals('f-zone-a-1', t), 8);
    assert.equal(statusPosts('f-zone-a-1', t).length, 0);
    const back = clock.now();
    await fleet.setHeartbeatMode('f-zone-a-0', 'both');
    assert.equal(renewals('f-zone-a-0', back), 1, 'switching the lease back on renews at once');
    await fleet.stop();
  });

  test('setCondition posts the pressure condition at once, and only kubelet conditions otherwise', async () => {
    const { clock, fleet, statusPosts } = await startFleet();
    const t = clock.now();
    await fleet.setCondition('f-zone-b-1', 'DiskPressure', true);
    await fleet.setCondition('f-zone-b-1', 'NetworkUnavailable', true);
    const [disk, net] = statusPosts('f-zone-b-1', t).map(
      (c) => (c.body as { status: { conditions: Array<{ type: string; status: string; reason: string }> } }).status.conditions,
    );
    assert.equal(disk?.find((c) => c.type === 'DiskPressure')?.reason, 'KubeletHasDiskPressure');
    assert.equal(disk?.find((c) => c.type === 'NetworkUnavailable'), undefined, 'the kubelet does not heartbeat NetworkUnavailable');
    assert.equal(net?.find((c) => c.type === 'NetworkUnavailable')?.status, 'True');
    assert.throws(() => fleet.killNode('nope'), /unknown node/);
    await fleet.stop();
  });

  test('a failed renewal is retried and counted neither as an error nor twice', async () => {
    const { clock, fleet, renewals } = await startFleet({ failLeaseOnce: new Set(['f-zone-a-1']) });
    await clock.advanceAsync(1999);
    assert.equal(renewals('f-zone-a-1'), 3, 'first attempt failed, retry succeeded, then the next period');
    const s = fleet.stats();
    assert.equal(s.errors, 0);
    assert.equal(s.leaseRenewals, 8);
    await fleet.stop();
  });

  test('stop ends every heartbeat', async () => {
    const { clock, calls, fleet } = await startFleet();
    await fleet.stop();
    const n = calls.length;
    await clock.advanceAsync(10_000);
    assert.equal(calls.length, n);
  });

  test('options are validated before any API call', () => {
    assert.throws(() => resolveFleetOptions({ prefix: 'UPPER' }), /fleet prefix/);
    assert.throws(() => resolveFleetOptions({ prefix: 'p', zones: ['a', 'a'] }), /unique/);
    assert.throws(() => resolveFleetOptions({ prefix: 'p', nodesPerZone: 0 }), /nodes per zone/);
    assert.throws(() => resolveFleetOptions({ prefix: 'p', podsPerNode: 111 }), /pods per node/);
    assert.throws(() => resolveFleetOptions({ prefix: 'p', leaseRenewIntervalMs: 0 }), /lease renew interval/);
    assert.throws(() => resolveFleetOptions({ prefix: 'p', podMix: {} }), /no positive weight/);
    assert.throws(() => resolveFleetOptions({ prefix: 'p'.repeat(40), zones: ['z'.repeat(22)], nodesPerZone: 10 }), /longer than 63/);
    const r = resolveFleetOptions({ prefix: 'p' });
    assert.deepEqual([r.zones, r.nodesPerZone, r.leaseDurationSeconds, r.leaseRenewIntervalMs], [['zone-a', 'zone-b', 'zone-c'], 10, 40, 10_000]);
  });
});
