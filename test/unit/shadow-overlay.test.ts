/**
 * Shadow mode (issue 16 item 3): the overlay over the informer caches, the dry-run writers and the
 * decision log, driven with FakeClock and in-memory informers. The real taint eviction controller
 * runs on the overlaid views, so "would taint" must lead to "would delete pod" after the
 * toleration, exactly once, without one API call.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import type { Informer } from '../../src/kube/informer.js';
import { podKey, type Node, type NodeCondition, type Pod, type Taint, type Toleration } from '../../src/kube/objects.js';
import type { KubeClients } from '../../src/kube/client.js';
import { TaintEvictionController } from '../../src/tainteviction/controller.js';
import { ShadowMode } from '../../src/shadow/mode.js';
import { pod as basePod } from '../support/outofservice-world.js';
import { ShadowDecisionLog } from '../../src/shadow/decisions.js';
import type { InformerLike } from '../../src/shadow/overlay.js';

const START = Date.UTC(2026, 10, 24, 10);
const UNREACHABLE_NOEXECUTE: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };

type Handlers<T> = { add: ((o: T) => void)[]; update: ((a: T, b: T) => void)[]; delete: ((o: T) => void)[] };

/** An informer over a Map: `put`/`remove` update the cache and call handlers synchronously, like the real one. */
class MemoryInformer<T> {
  readonly store = new Map<string, T>();
  readonly #h: Handlers<T> = { add: [], update: [], delete: [] };
  constructor(readonly keyOf: (o: T) => string, readonly indexOf: (o: T) => string = () => '') {}
  put(o: T): void {
    const k = this.keyOf(o);
    const old = this.store.get(k);
    this.store.set(k, o);
    if (old === undefined) for (const f of this.#h.add) f(o);
    else for (const f of this.#h.update) f(old, o);
  }
  remove(k: string): void {
    const old = this.store.get(k);
    this.store.delete(k);
    if (old !== undefined) for (const f of this.#h.delete) f(old);
  }
  asInformer(): InformerLike<T> {
    const { store, indexOf } = this;
    const handlers = this.#h;
    const on = (event: string, handler: never): (() => void) => {
      if (event === 'add' || event === 'update' || event === 'delete') (handlers[event] as unknown[]).push(handler);
      return () => undefined;
    };
    const like = {
      start: async () => undefined,
      stop: () => undefined,
      isWatching: () => true,
      blindForMs: () => 0,
      hasSynced: () => true,
      waitForSync: async () => undefined,
      get: (k: string) => store.get(k),
      list: () => [...store.values()],
      keys: () => [...store.keys()],
      byIndex: (_i: string, v: string) => [...store.values()].filter((o) => indexOf(o) === v),
      on,
      stats: () => ({}) as ReturnType<Informer<T>['stats']>,
    };
    return like as unknown as InformerLike<T>;
  }
}

/** Clients whose every use fails the test: the dry-run paths under test must not touch the API. */
const NO_API = new Proxy({}, {
  get(_t, prop) {
    throw new Error(`API client used in dry-run: ${String(prop)}`);
  },
}) as Pick<KubeClients, 'core' | 'storage'>;

function node(name: string, taints: Taint[] = [], ready: Partial<NodeCondition> = {}): Node {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: START - 3_600_000,
    labels: {},
    unschedulable: false,
    taints,
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: START - 1000, lastTransitionTime: START - 3_600_000, ...ready }],
  };
}

/** The shared pod builder, with tolerations. */
function pod(name: string, nodeName: string, tolerations: Toleration[] = [], extra: Partial<Pod> = {}): Pod {
  return basePod(name, nodeName, { tolerations, ...extra });
}

/** A shadow over in-memory node and pod informers, with the real taint eviction controller wired as run.ts does. */
function world() {
  const clock = new FakeClock(START);
  const nodeSrc = new MemoryInformer<Node>((n) => n.name);
  const podSrc = new MemoryInformer<Pod>((p) => podKey(p), (p) => p.nodeName);
  const shadow = new ShadowMode({ clock, log: silentLogger, clients: NO_API });
  const nodes = shadow.nodeView(nodeSrc.asInformer());
  const pods = shadow.podView(podSrc.asInformer());
  return { clock, nodeSrc, podSrc, shadow, nodes, pods };
}

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('overlay: would-be writes over the real objects', () => {
  test('a would-be taint shows in get/list and is delivered as an update; the real node is untouched', async () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    const updates: Node[] = [];
    w.nodes.on('update', (_o, n) => updates.push(n));
    const writer = w.shadow.nodeLifecycleWrites();
    assert.equal(await writer.swapNodeTaints('n1', [UNREACHABLE_NOEXECUTE], [], w.nodes.get('n1')), 'written');
    assert.deepEqual(w.nodes.get('n1')?.taints.map((t) => [t.key, t.effect, t.timeAdded]), [[UNREACHABLE_NOEXECUTE.key, 'NoExecute', START]]);
    assert.deepEqual(w.nodeSrc.store.get('n1')?.taints, []);
    await flush();
    assert.equal(updates.length, 1);
    assert.equal(updates[0]?.taints.length, 1);
    // The same swap again changes nothing: no second decision.
    assert.equal(await writer.swapNodeTaints('n1', [UNREACHABLE_NOEXECUTE], [], w.nodes.get('n1')), 'unchanged');
    assert.deepEqual(w.shadow.decisions.decisions().map((d) => [d.action, d.detail]), [['taint', 'node.kubernetes.io/unreachable:NoExecute']]);
  });

  test('the NoExecute fence: while it is up no would-be NoExecute taint is added (no decision), and it answers fenced', async () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    const writer = w.shadow.nodeLifecycleWrites();
    assert.equal(await writer.swapNodeTaints('n1', [UNREACHABLE_NOEXECUTE], [], w.nodes.get('n1'), { noExecuteFence: () => true }), 'fenced');
    assert.deepEqual(w.nodes.get('n1')?.taints, []);
    assert.deepEqual(w.shadow.decisions.decisions(), []);
    assert.equal(await writer.swapNodeTaints('n1', [UNREACHABLE_NOEXECUTE], [], w.nodes.get('n1'), { noExecuteFence: () => false }), 'written');
  });

  test("kube-controller-manager's taints on the owned keys are masked; other taints show through", () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    w.nodes.get('n1'); // first sight: the owned taints are none
    w.nodeSrc.put(node('n1', [{ ...UNREACHABLE_NOEXECUTE, timeAdded: START }, { key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }]));
    assert.deepEqual(w.nodes.get('n1')?.taints.map((t) => t.key), ['node.kubernetes.io/out-of-service']);
  });

  test('owned taints present at first sight are adopted, and a would-be untaint removes them', async () => {
    const w = world();
    w.nodeSrc.put(node('n1', [{ ...UNREACHABLE_NOEXECUTE, timeAdded: START - 5000 }]));
    assert.equal(w.nodes.get('n1')?.taints.length, 1);
    await w.shadow.nodeLifecycleWrites().swapNodeTaints('n1', [], [UNREACHABLE_NOEXECUTE], w.nodes.get('n1'));
    assert.deepEqual(w.nodes.get('n1')?.taints, []);
    assert.deepEqual(w.shadow.decisions.decisions().map((d) => d.action), ['untaint']);
  });

  test('would mark Unknown: the view shows Unknown until the kubelet posts a newer heartbeat', async () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    const unknown: NodeCondition = { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: START - 1000, lastTransitionTime: START };
    const r = await w.shadow.nodeLifecycleWrites().updateNodeConditions('n1', w.nodes.get('n1'), () => [unknown]);
    assert.equal(r.result, 'written');
    assert.equal(w.nodes.get('n1')?.conditions[0]?.status, 'Unknown');
    const [d] = w.shadow.decisions.decisions();
    assert.deepEqual([d?.action, d?.detail, d?.atMs], ['mark-unknown', 'Ready=Unknown', START]);
    // kube-controller-manager writes its own Unknown: the shadow keeps its own (same) view.
    w.nodeSrc.put(node('n1', [], { status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: START + 2000 }));
    assert.equal(w.nodes.get('n1')?.conditions[0]?.lastTransitionTime, START);
    // The kubelet comes back: its heartbeat is newer than the one the shadow decided on.
    w.nodeSrc.put(node('n1', [], { lastHeartbeatTime: START + 30_000 }));
    assert.equal(w.nodes.get('n1')?.conditions[0]?.status, 'True');
  });

  test('would mark Unknown, alone: a Lease renewed a kubelet status period after the write makes it give way', async () => {
    const w = world();
    const renew = new Map<string, number>();
    w.shadow.useLeases({ get: (k) => (renew.has(k) ? { namespace: 'kube-node-lease', name: k, resourceVersion: '1', renewTime: renew.get(k) } : undefined), list: () => [] });
    w.nodeSrc.put(node('n1'));
    const unknown: NodeCondition = { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', lastHeartbeatTime: START - 1000, lastTransitionTime: START };
    await w.shadow.nodeLifecycleWrites().updateNodeConditions('n1', w.nodes.get('n1'), () => [unknown]);
    renew.set('kube-node-lease/n1', START + 9_999);
    assert.equal(w.nodes.get('n1')?.conditions[0]?.status, 'Unknown', 'not yet: the kubelet may not have posted');
    renew.set('kube-node-lease/n1', START + 10_000);
    assert.equal(w.nodes.get('n1')?.conditions[0]?.status, 'True', "a live kubelet would have replaced the controller's Unknown by now");
  });

  test("a node controller's Unknown that the shadow did not write is replaced by the kubelet's last condition", () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    w.nodes.get('n1');
    w.nodeSrc.put(node('n1', [], { status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: START + 1 }));
    const ready = w.nodes.get('n1')?.conditions[0];
    assert.deepEqual([ready?.status, ready?.reason], ['True', 'KubeletReady']);
  });

  test('a would-be-deleted pod leaves every view, is delivered as a delete once, and is not deleted again', async () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    w.podSrc.put(pod('p1', 'n1'));
    const deleted: string[] = [];
    w.pods.on('delete', (p) => deleted.push(p.name));
    const te = w.shadow.taintEvictionWrites();
    assert.equal(await te.deletePod('default', 'p1', 'uid-p1'), 'deleted');
    assert.equal(w.pods.get('default/p1'), undefined);
    assert.deepEqual(w.pods.byIndex('nodeName', 'n1'), []);
    assert.deepEqual(w.pods.list(), []);
    await flush();
    assert.deepEqual(deleted, ['p1']);
    assert.equal(await te.deletePod('default', 'p1', 'uid-p1'), 'gone');
    // The real deletion later is not delivered a second time, and the overlay forgets the pod.
    w.podSrc.remove('default/p1');
    assert.deepEqual(deleted, ['p1']);
    assert.deepEqual(w.shadow.overlay.size().pods, 0);
  });

  test("a pod another taint manager is deleting is seen as still running", () => {
    const w = world();
    w.podSrc.put(
      pod('p1', 'n1', [], {
        deletionTimestamp: START,
        deletionGracePeriodSeconds: 30,
        conditions: [{ type: 'Ready', status: 'True' }, { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }],
      }),
    );
    const seen = w.pods.get('default/p1');
    assert.equal(seen?.deletionTimestamp, undefined);
    assert.equal(seen?.deletionGracePeriodSeconds, undefined);
    assert.deepEqual(seen?.conditions.map((c) => c.type), ['Ready']);
  });

  test('would mark pod NotReady: overlaid until the real pod is NotReady too', async () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    w.podSrc.put(pod('p1', 'n1'));
    const p = w.pods.get('default/p1');
    assert.ok(p);
    assert.equal(await w.shadow.nodeLifecycleWrites().markPodNotReady(p, 'n1'), 'written');
    assert.equal(w.pods.get('default/p1')?.conditions[0]?.status, 'False');
    assert.equal(await w.shadow.nodeLifecycleWrites().markPodNotReady(w.pods.get('default/p1') as Pod, 'n1'), 'unchanged');
    w.podSrc.put(pod('p1', 'n1', [], { conditions: [{ type: 'Ready', status: 'False' }] }));
    assert.equal(w.pods.get('default/p1')?.conditions[0]?.status, 'False');
    assert.equal(w.shadow.overlay.size().pods, 1); // the entry stays (empty) until the pod is deleted
    assert.deepEqual(w.shadow.decisions.decisions().map((d) => d.action), ['mark-pod-not-ready']);
  });
});

describe('the real taint eviction controller on the overlay', () => {
  test('would taint → after tolerationSeconds, would delete pod (once); the tolerating-forever pod stays', async (t) => {
    const w = world();
    const metrics = createMetrics({ defaultMetrics: false }).taintEviction;
    const te = new TaintEvictionController({
      clock: w.clock,
      log: silentLogger,
      caches: { nodes: w.nodes, pods: { get: (k) => w.pods.get(k), list: () => w.pods.list(), podsOnNode: (n) => w.pods.byIndex('nodeName', n) } },
      writes: w.shadow.taintEvictionWrites(),
      events: w.shadow.events('taint-eviction-controller'),
      metrics,
      canSeeCluster: () => true,
    });
    w.nodes.on('add', (n) => te.nodeChanged(n));
    w.nodes.on('update', (o, n) => te.nodeChanged(n, o));
    w.pods.on('add', (p) => te.podChanged(p));
    w.pods.on('update', (o, p) => te.podChanged(p, o));
    w.pods.on('delete', (p) => te.podDeleted(p));
    w.nodeSrc.put(node('n1'));
    w.podSrc.put(pod('short', 'n1', [{ key: UNREACHABLE_NOEXECUTE.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }]));
    w.podSrc.put(pod('forever', 'n1', [{ key: UNREACHABLE_NOEXECUTE.key, operator: 'Exists', effect: 'NoExecute' }]));
    te.start();
    t.after(() => te.stop());
    await w.shadow.nodeLifecycleWrites().swapNodeTaints('n1', [UNREACHABLE_NOEXECUTE], [], w.nodes.get('n1'));
    await flush();
    w.clock.advance(29_000);
    await flush();
    assert.deepEqual(w.shadow.decisions.decisions().map((d) => d.action), ['taint']);
    w.clock.advance(1_000);
    for (let i = 0; i < 5; i++) await flush();
    w.clock.advance(10_000);
    for (let i = 0; i < 5; i++) await flush();
    const decisions = w.shadow.decisions.decisions();
    assert.deepEqual(decisions.map((d) => [d.action, d.object.name, d.atMs]), [
      ['taint', 'n1', START],
      ['delete-pod', 'short', START + 30_000],
    ]);
    assert.match(decisions[1]?.reason ?? '', /NoExecute node\.kubernetes\.io\/unreachable:NoExecute not tolerated/);
    assert.equal(w.podSrc.store.size, 2, 'nothing was deleted for real');
  });
});

describe('decision log', () => {
  test('a full ring buffer drops the oldest and the window starts at the oldest kept decision', () => {
    const clock = new FakeClock(START);
    const log = new ShadowDecisionLog({ clock, log: silentLogger, capacity: 3 });
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      log.record('node-lifecycle-controller', 'taint', { kind: 'Node', name: `n${i}` }, 'k:NoExecute', 'test');
    }
    const s = log.state();
    assert.deepEqual(s.decisions.map((d) => d.object.name), ['n2', 'n3', 'n4']);
    assert.equal(s.dropped, 2);
    assert.deepEqual(s.window, { fromMs: START + 3000, toMs: START + 5000 });
    assert.equal(s.totals.taint, 5);
    assert.equal(new ShadowDecisionLog({ clock, log: silentLogger }).state().window.fromMs, START + 5000);
    assert.throws(() => new ShadowDecisionLog({ clock, log: silentLogger, capacity: 0 }), RangeError);
  });
});

describe('dry-run writers with live reads (pod GC, force detach)', () => {
  const wirePod = {
    metadata: { name: 'p1', namespace: 'default', uid: 'uid-p1', resourceVersion: '7', creationTimestamp: new Date(START - 60_000).toISOString() },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] },
    status: { phase: 'Running' },
  };
  const wireVa = {
    metadata: { name: 'va1', uid: 'uid-va1', resourceVersion: '3' },
    spec: { attacher: 'csi.example', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    status: { attached: true },
  };
  /** Clients with only the reads: any write would be a TypeError. */
  const readsOnly = {
    core: { readNamespacedPod: async () => wirePod, readNode: async () => ({ metadata: { name: 'n1', uid: 'uid-n1', resourceVersion: '1', creationTimestamp: new Date(START).toISOString() }, spec: {}, status: {} }) },
    storage: { readVolumeAttachment: async () => wireVa },
  } as unknown as Pick<KubeClients, 'core' | 'storage'>;

  function shadowWith(clients: Pick<KubeClients, 'core' | 'storage'>) {
    const clock = new FakeClock(START);
    const shadow = new ShadowMode({ clock, log: silentLogger, clients });
    shadow.nodeView(new MemoryInformer<Node>((n) => n.name).asInformer());
    shadow.podView(new MemoryInformer<Pod>((p) => podKey(p)).asInformer());
    return shadow;
  }

  test('would force-delete: the re-check runs on the live pod; the pod is then gone for every later read', async () => {
    const shadow = shadowWith(readsOnly);
    const gc = shadow.podGCWrites();
    const seen: string[] = [];
    const r = await gc.forceDeletePod('default', 'p1', 'uid-p1', async (live) => {
      seen.push(`${live.name}@${live.resourceVersion}`);
      return { why: 'PodGC: node is out of service' };
    });
    assert.equal(r, 'deleted');
    assert.deepEqual(seen, ['p1@7']);
    assert.equal(await gc.getPod('default', 'p1'), undefined);
    assert.equal(await gc.forceDeletePod('default', 'p1', 'uid-p1', async () => assert.fail('not re-checked: already gone')), 'gone');
    assert.equal(await gc.forceDeletePod('default', 'p1', 'other-uid', async () => undefined), 'gone');
    assert.deepEqual(shadow.decisions.decisions().map((d) => [d.controller, d.action, d.detail, d.reason]), [
      ['pod-garbage-collector-controller', 'force-delete', 'phase Failed, delete with grace period 0', 'PodGC: node is out of service'],
    ]);
  });

  test('would force-delete an orphan: the decision names the DisruptionTarget condition its Failed patch would carry', async () => {
    const shadow = shadowWith(readsOnly);
    const r = await shadow.podGCWrites().forceDeletePod('default', 'p1', 'uid-p1', async () => ({
      condition: { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' },
      why: 'PodGC: node no longer exists',
    }));
    assert.equal(r, 'deleted');
    assert.deepEqual(shadow.decisions.decisions().map((d) => [d.detail, d.reason]), [
      ['phase Failed and DisruptionTarget=True (DeletionByPodGC), delete with grace period 0', 'PodGC: node no longer exists'],
    ]);
  });

  test('a re-check that says no is not a decision', async () => {
    const shadow = shadowWith(readsOnly);
    assert.equal(await shadow.podGCWrites().forceDeletePod('default', 'p1', 'uid-p1', async () => undefined), 'skipped');
    assert.deepEqual(shadow.decisions.decisions(), []);
  });

  test('would detach: the attachment is then gone for the live read; a second delete is "gone"', async () => {
    const shadow = shadowWith(readsOnly);
    const fd = shadow.forceDetachWrites();
    assert.equal((await fd.getVolumeAttachment('va1'))?.uid, 'uid-va1');
    assert.equal(await fd.deleteVolumeAttachment('va1', 'uid-va1'), 'deleted');
    assert.equal(await fd.getVolumeAttachment('va1'), undefined);
    assert.equal(await fd.deleteVolumeAttachment('va1', 'uid-va1'), 'gone');
    const [d] = shadow.decisions.decisions();
    assert.deepEqual([d?.action, d?.object.kind, d?.detail, d?.node], ['detach', 'VolumeAttachment', 'delete VolumeAttachment (volume pv1)', 'n1']);
  });

  test('would evict (node affinity enforcer): evicted once, then gone', async () => {
    const shadow = shadowWith(NO_API);
    const ev = shadow.affinityEvictor('node-affinity-enforcer');
    assert.deepEqual(await ev.evict({ namespace: 'default', name: 'p1', uid: 'uid-p1' }), { kind: 'evicted' });
    assert.equal((await ev.evict({ namespace: 'default', name: 'p1', uid: 'uid-p1' })).kind, 'gone');
    assert.deepEqual(shadow.decisions.decisions().map((d) => d.action), ['evict']);
  });

  test('several conditions marked Unknown in one status patch are one decision', async () => {
    const w = world();
    w.nodeSrc.put(node('n1'));
    const base = w.nodes.get('n1') as Node;
    const conds: NodeCondition[] = ['Ready', 'MemoryPressure'].map((type) => ({ type, status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: START }));
    await w.shadow.nodeLifecycleWrites().updateNodeConditions('n1', base, () => conds);
    assert.deepEqual(w.shadow.decisions.decisions().map((d) => [d.action, d.detail]), [['mark-unknown', 'Ready=Unknown, MemoryPressure=Unknown']]);
  });
});
