/**
 * The node affinity enforcer: the pure decision (decision.ts) and the controller shell
 * (controller.ts) with FakeClock, in-memory caches, a recording evictor and a recording event sink.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { silentLogger } from '../../src/log/logger.js';
import type { Node } from '../../src/kube/objects.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { FakeClock } from '../../src/util/clock.js';
import { decideAffinity, evictionCapReached, isNodeReady } from '../../src/nodeaffinity/decision.js';
import { LazyErrorNodeSelector } from '../../src/nodeaffinity/matcher.js';
import {
  EVENT_BLOCKED_BY_PDB,
  EVENT_EVICTED,
  EVENT_MALFORMED,
  EVENT_VIOLATED,
  NodeAffinityEnforcer,
  type NodeAffinityOptions,
} from '../../src/nodeaffinity/controller.js';
import { REQUIRED_DURING_EXECUTION_ANNOTATION, toAffinityPod, type AffinityPod } from '../../src/nodeaffinity/rule.js';
import { pdbRefusal, type EvictionOutcome, type EvictionTarget } from '../../src/nodeaffinity/writer.js';

const RULE = JSON.stringify({ nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['gold'] }] }] });

function mkNode(name: string, labels: Record<string, string>, ready = true, rv = '1'): Node {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: rv,
    creationTimestamp: 0,
    labels,
    unschedulable: false,
    taints: [],
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'Unknown' }],
  };
}

function mkPod(name: string, opts: { node?: string; annotations?: Record<string, string>; daemonSet?: boolean; uid?: string } = {}): AffinityPod {
  const pod = toAffinityPod({
    metadata: {
      namespace: 'ns',
      name,
      uid: opts.uid ?? `uid-${name}`,
      resourceVersion: '1',
      creationTimestamp: '2026-01-01T00:00:00Z',
      annotations: opts.annotations ?? { [REQUIRED_DURING_EXECUTION_ANNOTATION]: RULE },
      ...(opts.daemonSet ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'd', controller: true }] } : {}),
    },
    spec: { nodeName: opts.node ?? 'n1' },
    status: { phase: 'Running' },
  });
  assert.ok(pod);
  return pod;
}

const GRACE = 60_000;

describe('decideAffinity (pure, fake clock)', () => {
  const clock = new FakeClock();
  const gold = mkNode('n1', { pool: 'gold' });
  const silver = mkNode('n1', { pool: 'silver' });
  test('satisfied while the label matches', () => {
    assert.deepEqual(decideAffinity(mkPod('a'), gold, undefined, clock.now(), GRACE), { action: 'satisfied' });
  });
  test('grace: wait until since + grace, then evict', () => {
    const t0 = clock.now();
    const d1 = decideAffinity(mkPod('a'), silver, undefined, t0, GRACE);
    assert.equal(d1.action, 'wait');
    assert.ok(d1.action === 'wait');
    assert.equal(d1.evictAtMs, t0 + GRACE);
    clock.advance(GRACE - 1);
    const d2 = decideAffinity(mkPod('a'), silver, d1.violation, clock.now(), GRACE);
    assert.equal(d2.action, 'wait');
    clock.advance(1);
    const d3 = decideAffinity(mkPod('a'), silver, d1.violation, clock.now(), GRACE);
    assert.equal(d3.action, 'evict');
  });
  test('flapping labels: a match in between restarts the grace', () => {
    const t0 = clock.now();
    const d1 = decideAffinity(mkPod('a'), silver, undefined, t0, GRACE);
    assert.ok(d1.action === 'wait');
    clock.advance(40_000);
    // The label comes back: the controller forgets the violation (satisfied).
    assert.equal(decideAffinity(mkPod('a'), gold, d1.violation, clock.now(), GRACE).action, 'satisfied');
    clock.advance(1_000);
    const d2 = decideAffinity(mkPod('a'), silver, undefined, clock.now(), GRACE);
    assert.ok(d2.action === 'wait');
    assert.equal(d2.evictAtMs, clock.now() + GRACE, 'the grace counts from the new violation');
  });
  test('a violation remembered for another uid or node does not carry over', () => {
    const old = { uid: 'other', node: 'n1', sinceMs: clock.now() - 10 * GRACE };
    assert.equal(decideAffinity(mkPod('a'), silver, old, clock.now(), GRACE).action, 'wait');
    const moved = { uid: 'uid-a', node: 'n0', sinceMs: clock.now() - 10 * GRACE };
    assert.equal(decideAffinity(mkPod('a'), silver, moved, clock.now(), GRACE).action, 'wait');
  });
  test('a DaemonSet pod is never evicted', () => {
    const old = { uid: 'uid-d', node: 'n1', sinceMs: clock.now() - 10 * GRACE };
    assert.equal(decideAffinity(mkPod('d', { daemonSet: true }), silver, old, clock.now(), GRACE).action, 'ignore');
  });
  test('a mirror pod is never evicted', () => {
    const p = mkPod('m', { annotations: { [REQUIRED_DURING_EXECUTION_ANNOTATION]: RULE, 'kubernetes.io/config.mirror': 'x' } });
    assert.equal(decideAffinity(p, silver, { uid: p.uid, node: 'n1', sinceMs: 0 }, clock.now(), GRACE).action, 'ignore');
  });
  test('a malformed annotation is reported, never evicts', () => {
    const p = mkPod('bad', { annotations: { [REQUIRED_DURING_EXECUTION_ANNOTATION]: '{"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"Gt","values":["x"]}]}]}' } });
    const d = decideAffinity(p, silver, { uid: p.uid, node: 'n1', sinceMs: 0 }, clock.now(), GRACE);
    assert.equal(d.action, 'malformed');
  });
  test('a node that is not Ready holds the eviction; a node outside the cache is not ours (ignored)', () => {
    const since = { uid: 'uid-a', node: 'n1', sinceMs: clock.now() - 10 * GRACE };
    const d = decideAffinity(mkPod('a'), mkNode('n1', { pool: 'silver' }, false), since, clock.now(), GRACE);
    assert.equal(d.action, 'hold');
    assert.ok(d.action === 'hold' && /not Ready/.test(d.reason));
    assert.equal(decideAffinity(mkPod('a'), undefined, since, clock.now(), GRACE).action, 'ignore');
  });
  test('no annotations: ignored', () => {
    assert.equal(decideAffinity(mkPod('plain', { annotations: {} }), silver, undefined, clock.now(), GRACE).action, 'ignore');
  });
  test('caps: per node and total over the window', () => {
    const now = 1_000_000;
    const recent = [
      { node: 'n1', atMs: now - 1000 },
      { node: 'n2', atMs: now - 500 },
    ];
    assert.equal(evictionCapReached(recent, 'n1', now, 60_000, 0, 0), undefined);
    assert.match(evictionCapReached(recent, 'n1', now, 60_000, 1, 0)?.reason ?? '', /per-node=1/);
    assert.equal(evictionCapReached(recent, 'n3', now, 60_000, 1, 0), undefined);
    assert.equal(evictionCapReached(recent, 'n3', now, 60_000, 1, 2)?.retryAtMs, now - 1000 + 60_000);
    assert.equal(evictionCapReached(recent, 'n1', now + 60_000, 60_000, 1, 2), undefined, 'old evictions leave the window');
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", nodeaffinity/decision.ts): every
// rule that keeps the enforcer from evicting (a terminal, terminating or unscheduled pod, a rule that
// cannot be evaluated, a node whose Ready condition is not True) and the exact caps.
describe('decideAffinity: what never evicts, and why (pure)', () => {
  const NOW = 10 * GRACE;
  const silver = mkNode('n1', { pool: 'silver' });
  const long = (p: AffinityPod) => ({ uid: p.uid, node: 'n1', sinceMs: NOW - 2 * GRACE });

  test('each ignored pod says why', () => {
    const plain = mkPod('plain', { annotations: {} });
    assert.deepEqual(decideAffinity(plain, silver, undefined, NOW, GRACE), { action: 'ignore', reason: 'no during-execution rule' });
    const m = mkPod('m', { annotations: { [REQUIRED_DURING_EXECUTION_ANNOTATION]: RULE, 'kubernetes.io/config.mirror': 'x' } });
    assert.deepEqual(decideAffinity(m, silver, long(m), NOW, GRACE), { action: 'ignore', reason: 'mirror (static) pod' });
    const d = mkPod('d', { daemonSet: true });
    assert.deepEqual(decideAffinity(d, silver, long(d), NOW, GRACE), { action: 'ignore', reason: 'DaemonSet pod' });
    const a = mkPod('a');
    assert.deepEqual(decideAffinity(a, undefined, long(a), NOW, GRACE), { action: 'ignore', reason: 'node n1 is not in the cache' });
  });

  test('a terminating pod is never evicted', () => {
    const p: AffinityPod = { ...mkPod('a'), deletionTimestamp: NOW - 1 };
    assert.deepEqual(decideAffinity(p, silver, long(p), NOW, GRACE), { action: 'ignore', reason: 'terminating' });
  });

  test('a Succeeded or Failed pod is never evicted', () => {
    for (const phase of ['Succeeded', 'Failed']) {
      const p: AffinityPod = { ...mkPod('a'), phase };
      assert.deepEqual(decideAffinity(p, silver, long(p), NOW, GRACE), { action: 'ignore', reason: `phase ${phase}` });
    }
  });

  test('an unscheduled pod is never evicted, even with a node at hand', () => {
    const p: AffinityPod = { ...mkPod('a'), nodeName: '' };
    assert.deepEqual(decideAffinity(p, silver, { uid: p.uid, node: '', sinceMs: 0 }, NOW, GRACE), { action: 'ignore', reason: 'not scheduled' });
  });

  test('a rule with a term that cannot be evaluated holds, and never counts as violated', () => {
    const selector = new LazyErrorNodeSelector({ nodeSelectorTerms: [{ matchExpressions: [{ key: 'bad key', operator: 'In', values: ['x'] }] }] });
    const p: AffinityPod = { ...mkPod('a'), rule: { kind: 'rule', selectors: [{ source: 'required-during-scheduling', selector }] } };
    const d = decideAffinity(p, silver, long(p), NOW, GRACE);
    assert.deepEqual(d, { action: 'hold', violation: long(p), reason: 'the rule has terms that cannot be evaluated' });
  });

  test('a node counts as Ready only by a Ready condition that is True, among other conditions', () => {
    const cond = (type: string, status: string) => ({ type, status: status as 'True' | 'False' | 'Unknown' });
    assert.equal(isNodeReady({ ...silver, conditions: [cond('MemoryPressure', 'False'), cond('Ready', 'True')] }), true);
    assert.equal(isNodeReady({ ...silver, conditions: [cond('Ready', 'False'), cond('MemoryPressure', 'True')] }), false);
    const notReady = { ...silver, conditions: [cond('Ready', 'False'), cond('DiskPressure', 'True')] };
    const p = mkPod('a');
    assert.equal(decideAffinity(p, notReady, long(p), NOW, GRACE).action, 'hold');
  });
});

describe('evictionCapReached: the window edge, the reasons, the retry times (pure)', () => {
  const now = 1_000_000;
  test('an eviction exactly one window old has left it', () => {
    assert.equal(evictionCapReached([{ node: 'n1', atMs: now - 60_000 }], 'n1', now, 60_000, 1, 1), undefined);
  });
  test('the total cap: its reason and when the oldest counted eviction leaves the window', () => {
    const recent = [
      { node: 'n1', atMs: now - 3000 },
      { node: 'n2', atMs: now - 2000 },
      { node: 'n3', atMs: now - 1000 },
    ];
    assert.deepEqual(evictionCapReached(recent, 'n9', now, 60_000, 0, 2), {
      reason: '3 evictions in the last 60s reach --affinity-max-evictions-total=2',
      retryAtMs: now - 2000 + 60_000,
    });
  });
  test('the per-node cap: its reason and when the oldest counted eviction of the node leaves the window', () => {
    const recent = [
      { node: 'n1', atMs: now - 3000 },
      { node: 'n1', atMs: now - 2000 },
      { node: 'n2', atMs: now - 1000 },
    ];
    assert.deepEqual(evictionCapReached(recent, 'n1', now, 60_000, 1, 0), {
      reason: '2 evictions from node n1 in the last 60s reach --affinity-max-evictions-per-node=1',
      retryAtMs: now - 2000 + 60_000,
    });
  });
});

/** A harness: caches, a scripted evictor, recorded events, FakeClock. */
function harness(options: NodeAffinityOptions = {}) {
  const clock = new FakeClock();
  const nodes = new Map<string, Node>();
  const pods = new Map<string, AffinityPod>();
  const events: { reason: string; message: string; pod: string }[] = [];
  const evictions: EvictionTarget[] = [];
  const answers: (EvictionOutcome | Error)[] = [];
  let sight = true;
  const metrics = createMetrics({ defaultMetrics: false });
  const c = new NodeAffinityEnforcer({
    clock,
    log: silentLogger,
    caches: {
      nodes: { get: (k) => nodes.get(k), list: () => [...nodes.values()] },
      pods: { get: (k) => pods.get(k), list: () => [...pods.values()], podsOnNode: (n) => [...pods.values()].filter((p) => p.nodeName === n) },
    },
    evictor: {
      evict(t) {
        evictions.push(t);
        const a = answers.shift() ?? { kind: 'evicted' };
        return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
      },
    },
    events: { record: (ref, _type, reason, message) => events.push({ reason, message, pod: ref.name }) },
    metrics: metrics.nodeAffinity,
    canSeeCluster: () => sight,
    options: { graceMs: GRACE, evictionRate: 1, ...options },
  });
  const setNode = (n: Node): void => {
    const old = nodes.get(n.name);
    nodes.set(n.name, n);
    c.nodeChanged(n, old);
  };
  const setPod = (p: AffinityPod): void => {
    pods.set(`${p.namespace}/${p.name}`, p);
    c.podChanged(p);
  };
  const settle = async (ms = 0): Promise<void> => {
    await clock.advanceAsync(ms);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  const reasons = (): string[] => events.map((e) => e.reason);
  return { clock, nodes, pods, events, evictions, answers, metrics, c, setNode, setPod, settle, reasons, setSight: (s: boolean) => ((sight = s), c.sightChanged()) };
}

describe('NodeAffinityEnforcer (shell, FakeClock)', () => {
  test('a label change evicts after the grace, with NodeAffinityViolated then EvictedForNodeAffinity', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'gold' }));
    h.setPod(mkPod('a'));
    h.c.start();
    await h.settle();
    assert.equal(h.evictions.length, 0);
    h.setNode(mkNode('n1', { pool: 'silver' }, true, '2'));
    await h.settle();
    assert.deepEqual(h.reasons(), [EVENT_VIOLATED]);
    assert.equal(h.c.view().violations[0]?.state, 'waiting');
    await h.settle(GRACE - 1);
    assert.equal(h.evictions.length, 0, 'not before the grace ends');
    await h.settle(1);
    assert.deepEqual(h.evictions, [{ namespace: 'ns', name: 'a', uid: 'uid-a' }]);
    assert.deepEqual(h.reasons(), [EVENT_VIOLATED, EVENT_EVICTED]);
    const m = await h.metrics.registry.getSingleMetricAsString('node_affinity_enforcer_evictions_total');
    assert.match(m, /result="evicted"} 1/);
    await h.c.stop();
  });

  test('a +900 ms NTP step of the wall clock does not shorten the grace (it counts elapsed time, src/util/clock.ts steadyClock)', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'gold' }));
    h.setPod(mkPod('a'));
    h.c.start();
    h.setNode(mkNode('n1', { pool: 'silver' }, true, '2'));
    await h.settle(10_000);
    h.clock.step(900);
    await h.settle(GRACE - 10_000 - 500);
    h.setNode(mkNode('n1', { pool: 'silver', other: 'x' }, true, '3')); // decided again, 0.5 s before the grace has elapsed
    await h.settle(400);
    assert.equal(h.evictions.length, 0, 'not before the grace has elapsed, though the wall clock says it has');
    await h.settle(200);
    assert.equal(h.evictions.length, 1);
    await h.c.stop();
  });

  test('a two-step relabel within the grace never evicts', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'gold' }));
    h.setPod(mkPod('a'));
    h.c.start();
    h.setNode(mkNode('n1', {}, true, '2'));
    await h.settle(30_000);
    h.setNode(mkNode('n1', { pool: 'gold' }, true, '3'));
    await h.settle(10 * GRACE);
    assert.equal(h.evictions.length, 0);
    assert.equal(h.c.view().violations.length, 0);
    await h.c.stop();
  });

  test('flapping labels restart the grace each time', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'gold' }));
    h.setPod(mkPod('a'));
    h.c.start();
    for (let i = 0; i < 5; i++) {
      h.setNode(mkNode('n1', { pool: 'silver' }, true, `${2 * i + 2}`));
      await h.settle(GRACE - 5_000);
      h.setNode(mkNode('n1', { pool: 'gold' }, true, `${2 * i + 3}`));
      await h.settle(1_000);
    }
    assert.equal(h.evictions.length, 0, 'never violated for a whole grace period');
    await h.c.stop();
  });

  test('a DaemonSet pod and a pod without annotations are never evicted', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'gold' }));
    h.setPod(mkPod('ds', { daemonSet: true }));
    h.setPod(mkPod('plain', { annotations: {} }));
    h.c.start();
    h.setNode(mkNode('n1', { pool: 'silver' }, true, '2'));
    await h.settle(10 * GRACE);
    assert.equal(h.evictions.length, 0);
    assert.deepEqual(h.events, []);
    await h.c.stop();
  });

  test('a malformed annotation: one Warning Event and a metric, never an eviction', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'silver' }));
    h.setPod(mkPod('bad', { annotations: { [REQUIRED_DURING_EXECUTION_ANNOTATION]: '{"nodeSelectorTerms": 3}' } }));
    h.c.start();
    await h.settle(10 * GRACE);
    h.setPod({ ...mkPod('bad', { annotations: { [REQUIRED_DURING_EXECUTION_ANNOTATION]: '{"nodeSelectorTerms": 3}' } }), resourceVersion: '2' });
    await h.settle(GRACE);
    assert.equal(h.evictions.length, 0);
    assert.deepEqual(h.reasons(), [EVENT_MALFORMED]);
    assert.match(await h.metrics.registry.getSingleMetricAsString('node_affinity_enforcer_malformed_rules_total'), / 1$/m);
    await h.c.stop();
  });

  test('a PDB refusal backs off (5 s, 10 s, …) and explains; the eviction goes through once allowed', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'silver' }));
    h.setPod(mkPod('a'));
    h.answers.push({ kind: 'blocked-by-pdb', message: "Cannot evict pod as it would violate the pod's disruption budget." });
    h.answers.push({ kind: 'blocked-by-pdb', message: "Cannot evict pod as it would violate the pod's disruption budget." });
    h.c.start();
    await h.settle(GRACE);
    assert.equal(h.evictions.length, 1);
    assert.deepEqual(h.reasons(), [EVENT_VIOLATED, EVENT_BLOCKED_BY_PDB]);
    assert.match(h.events[1]?.message ?? '', /disruption budget.*next in 5s/);
    assert.equal(h.c.view().violations[0]?.state, 'blocked-by-pdb');
    await h.settle(4_999);
    assert.equal(h.evictions.length, 1, 'waits for the backoff');
    await h.settle(1);
    assert.equal(h.evictions.length, 2);
    assert.match(h.events[2]?.message ?? '', /next in 10s/);
    await h.settle(10_000);
    assert.equal(h.evictions.length, 3);
    assert.deepEqual(h.reasons(), [EVENT_VIOLATED, EVENT_BLOCKED_BY_PDB, EVENT_BLOCKED_BY_PDB, EVENT_EVICTED]);
    await h.c.stop();
  });

  test('other errors are retried with backoff; 404 forgets the pod', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'silver' }));
    h.setPod(mkPod('a'));
    h.answers.push(new Error('ECONNRESET'), { kind: 'gone', detail: '404' });
    h.c.start();
    await h.settle(GRACE);
    assert.equal(h.evictions.length, 1);
    assert.equal(h.c.view().violations[0]?.state, 'retrying');
    await h.settle(1_000);
    assert.equal(h.evictions.length, 2);
    assert.equal(h.c.view().violations.length, 0);
    await h.settle(10 * GRACE);
    assert.equal(h.evictions.length, 2);
    await h.c.stop();
  });

  test('a node that is not Ready holds; Ready again (still violating) evicts', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'silver' }, false));
    h.setPod(mkPod('a'));
    h.c.start();
    await h.settle(10 * GRACE);
    assert.equal(h.evictions.length, 0);
    assert.equal(h.c.view().violations[0]?.state, 'held');
    assert.match(h.events[0]?.message ?? '', /not evicted while node n1 is not Ready/);
    h.setNode(mkNode('n1', { pool: 'silver' }, true, '2'));
    await h.settle();
    assert.equal(h.evictions.length, 1);
    await h.c.stop();
  });

  test('rate limit and per-node cap: one pod per second, at most 2 per node per window', async () => {
    const h = harness({ evictionRate: 1, maxEvictionsPerNode: 2, capWindowMs: 600_000 });
    h.setNode(mkNode('n1', { pool: 'silver' }));
    for (const n of ['a', 'b', 'c', 'd']) h.setPod(mkPod(n));
    h.c.start();
    await h.settle(GRACE);
    assert.equal(h.evictions.length, 1);
    await h.settle(999);
    assert.equal(h.evictions.length, 1);
    await h.settle(1);
    assert.equal(h.evictions.length, 2);
    await h.settle(60_000);
    assert.equal(h.evictions.length, 2, 'the per-node cap holds');
    assert.match(h.c.view().violations.find((v) => v.state === 'queued')?.reason ?? '', /per-node=2/);
    await h.settle(600_000);
    assert.equal(h.evictions.length, 4, 'the window frees the cap');
    await h.c.stop();
  });

  test('losing sight forgets violations: the grace restarts when sight returns', async () => {
    const h = harness();
    h.setNode(mkNode('n1', { pool: 'silver' }));
    h.setPod(mkPod('a'));
    h.c.start();
    await h.settle(GRACE - 10_000);
    h.setSight(false);
    await h.settle(20_000);
    assert.equal(h.evictions.length, 0);
    h.setSight(true);
    await h.settle(GRACE - 1);
    assert.equal(h.evictions.length, 0, 'blind time does not count');
    await h.settle(1);
    assert.equal(h.evictions.length, 1);
    await h.c.stop();
  });

  test('the label restored while the eviction is queued cancels it (re-decided before the write)', async () => {
    const h = harness({ evictionRate: 0.001 });
    h.setNode(mkNode('n1', { pool: 'silver' }));
    h.setPod(mkPod('a'));
    h.setPod(mkPod('b'));
    h.c.start();
    await h.settle(GRACE);
    assert.equal(h.evictions.length, 1, 'the bucket starts with one token');
    h.setNode(mkNode('n1', { pool: 'gold' }, true, '2'));
    await h.settle(2_000_000);
    assert.equal(h.evictions.length, 1);
    await h.c.stop();
  });
});

describe('pdbRefusal (writer.ts)', () => {
  const ex = (code: number, body: object): ApiException<string> => new ApiException(code, 'x', JSON.stringify(body), {});
  test('429 with a DisruptionBudget cause is a PDB refusal (the body kube-apiserver 1.37.2 sends)', () => {
    const e = new ApiException(
      429,
      'Unknown API Status Code!',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod\'s disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget g needs 1 healthy pods and has 1 currently"}]},"code":429}\n',
      {},
    );
    assert.equal(pdbRefusal(e), "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget g needs 1 healthy pods and has 1 currently");
  });
  test('403 with a DisruptionBudget cause is a PDB refusal; a plain 429 or 403 is not', () => {
    assert.ok(pdbRefusal(ex(403, { message: 'forbidden', details: { causes: [{ reason: 'DisruptionBudget', message: 'pdb disruptions allowed is negative' }] } })));
    assert.equal(pdbRefusal(ex(403, { message: 'forbidden', details: { causes: [{ reason: 'NamespaceTerminating', message: 'x' }] } })), undefined);
    assert.equal(pdbRefusal(ex(429, { message: 'Too many requests, please try again later.', reason: 'TooManyRequests' })), undefined);
    assert.equal(pdbRefusal(ex(403, { message: 'pods "a" is forbidden: User cannot create resource "pods/eviction"' })), undefined);
    assert.equal(pdbRefusal(new Error('x')), undefined);
  });
});

describe('explain pod shows the enforcer\'s view', () => {
  test('waiting: "violates its during-execution affinity since …; evicts at … unless the label comes back"', async () => {
    const { explainPod } = await import('../../src/explain/pod.js');
    const { renderPodExplanation } = await import('../../src/cli/explain.js');
    const now = Date.UTC(2026, 0, 1, 12);
    const pod = { namespace: 'ns', name: 'a', uid: 'uid-a', resourceVersion: '1', nodeName: 'n1', phase: 'Running', creationTimestamp: 0, conditions: [], tolerations: [], ownerReferences: [], pvcNames: [], finalizers: [] };
    const violation = { pod: 'ns/a', uid: 'uid-a', node: 'n1', sinceMs: now - 20_000, evictAtMs: now + 40_000, state: 'waiting' as const, reason: 'within the grace period', pdbRefusals: 0 };
    const state = { identity: 'me', leader: 'me', nodeAffinity: { violations: [violation], queued: 0, graceMs: 60_000, evictionRate: 0.1 } };
    const e = explainPod({ pod, node: mkNode('n1', { pool: 'silver' }), state, source: null, nowMs: now });
    assert.match(e.explanation[0] ?? '', /violates its during-execution node affinity on node n1 since 2026-01-01T11:59:40(\.000)?Z; evicts at 2026-01-01T12:00:40(\.000)?Z \(in 40(\.0)?s\) unless the label comes back/);
    assert.equal(e.nodeAffinity?.state, 'waiting');
    assert.match(renderPodExplanation(e), /Affinity: {2}waiting since/);
    const other = explainPod({ pod: { ...pod, uid: 'other' }, node: mkNode('n1', {}), state, source: null, nowMs: now });
    assert.equal(other.nodeAffinity, undefined, 'a violation of another pod with the same name is not shown');
  });
});
