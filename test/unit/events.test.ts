import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { EventRecorder, nodeRef, podRef } from '../../src/kube/events.js';
import type { KubeClients } from '../../src/kube/client.js';
import { silentLogger } from '../../src/log/logger.js';
import { FencedError, type WriteScheduler } from '../../src/kube/throttle.js';

interface Call {
  verb: 'create' | 'patch';
  namespace: string;
  name: string;
  body: Record<string, unknown>;
}

function stubCore(opts: { failCreate?: () => unknown; failPatch?: () => unknown; createGate?: Promise<void> } = {}) {
  const calls: Call[] = [];
  const core = {
    createNamespacedEvent: async (p: { namespace: string; body: Record<string, unknown> }) => {
      await opts.createGate;
      const err = opts.failCreate?.();
      if (err) throw err;
      const meta = p.body['metadata'] as { name: string };
      calls.push({ verb: 'create', namespace: p.namespace, name: meta.name, body: p.body });
      return p.body;
    },
    patchNamespacedEvent: async (p: { name: string; namespace: string; body: Record<string, unknown> }) => {
      const err = opts.failPatch?.();
      if (err) throw err;
      calls.push({ verb: 'patch', namespace: p.namespace, name: p.name, body: p.body });
      return p.body;
    },
  };
  return { calls, clients: { core } as unknown as Pick<KubeClients, 'core'> };
}

const direct: WriteScheduler = { schedule: (fn) => fn() };

function recorder(clients: Pick<KubeClients, 'core'>, clock: FakeClock, throttle: WriteScheduler = direct) {
  return new EventRecorder({ clients, throttle, component: 'node-controller', host: 'nlc-0', clock, log: silentLogger });
}

const node = { name: 'node-a', uid: 'uid-a' };

describe('EventRecorder', () => {
  test('creates a core/v1 Event for a node in namespace default, with source and involvedObject', async () => {
    const clock = new FakeClock();
    const { calls, clients } = stubCore();
    const r = recorder(clients, clock);
    r.record(nodeRef(node), 'Normal', 'RegisteredNode', 'Node node-a event: Registered Node node-a in Controller');
    await r.flush();
    assert.equal(calls.length, 1);
    const c = calls[0];
    assert.ok(c);
    assert.equal(c.verb, 'create');
    assert.equal(c.namespace, 'default');
    assert.match(c.name, /^node-a\.[0-9a-f]+$/);
    assert.deepEqual(c.body['involvedObject'], { kind: 'Node', apiVersion: 'v1', name: 'node-a', uid: 'uid-a' });
    assert.deepEqual(c.body['source'], { component: 'node-controller', host: 'nlc-0' });
    assert.equal(c.body['reportingComponent'], 'node-controller');
    assert.equal(c.body['reportingInstance'], 'nlc-0');
    assert.equal(c.body['count'], 1);
    assert.equal(c.body['type'], 'Normal');
    assert.equal((c.body['firstTimestamp'] as Date).getTime(), clock.now());
    assert.deepEqual(r.recorded(), { recorded: 1, created: 1, patched: 0, dropped: 0, fenced: 0, failed: 0 });
  });

  test('a pod event goes to the pod namespace', async () => {
    const clock = new FakeClock();
    const { calls, clients } = stubCore();
    const r = recorder(clients, clock);
    r.record(podRef({ namespace: 'ns1', name: 'p', uid: 'u' }), 'Warning', 'NodeNotReady', 'Node is not ready');
    await r.flush();
    assert.equal(calls[0]?.namespace, 'ns1');
    assert.deepEqual(calls[0]?.body['involvedObject'], { kind: 'Pod', apiVersion: 'v1', name: 'p', namespace: 'ns1', uid: 'u' });
  });

  test('a repeat within 10 min patches count and lastTimestamp of the same Event; later ones create anew', async () => {
    const clock = new FakeClock();
    const { calls, clients } = stubCore();
    const r = recorder(clients, clock);
    const msg = 'Node node-a status is now: NodeNotReady';
    r.record(nodeRef(node), 'Normal', 'NodeNotReady', msg);
    await clock.advanceAsync(60_000);
    r.record(nodeRef(node), 'Normal', 'NodeNotReady', msg);
    await clock.advanceAsync(60_000);
    r.record(nodeRef(node), 'Normal', 'NodeNotReady', msg);
    await r.flush();
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['create', 'patch', 'patch'],
    );
    assert.equal(calls[1]?.name, calls[0]?.name);
    assert.equal(calls[2]?.body['count'], 3);
    assert.equal(calls[2]?.body['lastTimestamp'], new Date(clock.now()).toISOString());
    // A different message is a different Event.
    r.record(nodeRef(node), 'Normal', 'NodeNotReady', 'other');
    // More than 10 min after the last repeat: a new Event.
    await clock.advanceAsync(600_001);
    r.record(nodeRef(node), 'Normal', 'NodeNotReady', msg);
    await r.flush();
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['create', 'patch', 'patch', 'create', 'create'],
    );
    assert.notEqual(calls[4]?.name, calls[0]?.name);
    assert.equal(calls[4]?.body['count'], 1);
  });

  test('the patch of a repeat never overtakes the create of the first event', async () => {
    const clock = new FakeClock();
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { calls, clients } = stubCore({ createGate: gate });
    const r = recorder(clients, clock);
    r.record(nodeRef(node), 'Normal', 'X', 'm');
    r.record(nodeRef(node), 'Normal', 'X', 'm');
    await new Promise<void>((res) => setImmediate(res));
    assert.equal(calls.length, 0);
    open();
    await r.flush();
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['create', 'patch'],
    );
  });

  test('a patch that finds the Event gone (404) creates it again', async () => {
    const clock = new FakeClock();
    const { calls, clients } = stubCore({ failPatch: () => new ApiException(404, 'NotFound', '{}', {}) });
    const r = recorder(clients, clock);
    r.record(nodeRef(node), 'Normal', 'X', 'm');
    r.record(nodeRef(node), 'Normal', 'X', 'm');
    await r.flush();
    assert.deepEqual(
      calls.map((c) => [c.verb, c.body['count']]),
      [
        ['create', 1],
        ['create', 2],
      ],
    );
  });

  test('per-object spam filter: burst 25, then one event per 5 min', async () => {
    const clock = new FakeClock();
    const { calls, clients } = stubCore();
    const r = recorder(clients, clock);
    for (let i = 0; i < 30; i++) r.record(nodeRef(node), 'Normal', `R${i}`, 'm');
    r.record(nodeRef({ name: 'node-b', uid: 'uid-b' }), 'Normal', 'R', 'other object has its own bucket');
    await r.flush();
    assert.equal(calls.length, 26);
    assert.equal(r.recorded().dropped, 5);
    await clock.advanceAsync(299_000);
    r.record(nodeRef(node), 'Normal', 'late', 'm');
    await clock.advanceAsync(1_000);
    r.record(nodeRef(node), 'Normal', 'later', 'm');
    await r.flush();
    assert.equal(calls.length, 27);
    assert.equal(calls.at(-1)?.body['reason'], 'later');
    assert.equal(r.recorded().dropped, 6);
  });

  test('failures are counted and logged, never thrown; a failed create is not patched later', async () => {
    const clock = new FakeClock();
    let fail = true;
    const { calls, clients } = stubCore({ failCreate: () => (fail ? new ApiException(500, 'boom', '{}', {}) : undefined) });
    const r = recorder(clients, clock);
    assert.doesNotThrow(() => r.record(nodeRef(node), 'Normal', 'X', 'm'));
    await r.flush();
    assert.equal(r.recorded().failed, 1);
    fail = false;
    r.record(nodeRef(node), 'Normal', 'X', 'm');
    await r.flush();
    assert.deepEqual(
      calls.map((c) => [c.verb, c.body['count']]),
      [['create', 1]],
    );
  });

  test('a fenced write is counted as fenced', async () => {
    const clock = new FakeClock();
    const { calls, clients } = stubCore();
    const fenced: WriteScheduler = { schedule: () => Promise.reject(new FencedError()) };
    const r = recorder(clients, clock, fenced);
    r.record(nodeRef(node), 'Normal', 'X', 'm');
    await r.flush();
    assert.equal(calls.length, 0);
    assert.equal(r.recorded().fenced, 1);
    assert.equal(r.recorded().failed, 0);
  });
});
