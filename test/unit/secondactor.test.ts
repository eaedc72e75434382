/**
 * The continuous second-actor check (src/secondactor/): the pure judgements (a node's NoExecute
 * taint, a pod's DisruptionTarget condition, its deletion, an Event; ours vs theirs, before we acted,
 * older than the ledger), the own-writes ledger and the writers that fill it (noted at send time
 * only), the field manager read from managedFields, the shell (counted per kind, logged and raised
 * as an Event once per kind and minute, one deletion counted once, nothing before start or after
 * stop), the store-less Event watch, and a property: whatever this process writes is never counted.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Logger } from '../../src/log/logger.js';
import type { Node, Pod, PodCondition, Taint } from '../../src/kube/objects.js';
import type { WatchLike } from '../../src/kube/listwatch.js';
import type { WriteScheduler } from '../../src/kube/throttle.js';
import { NotCalledForError } from '../../src/kube/throttle.js';
import { SecondActorCheck, toObservedEvent } from '../../src/secondactor/check.js';
import {
  describeEvidence,
  eventEvidence,
  fieldManagerOf,
  podDeleteEvidence,
  podUpdateEvidence,
  SECOND_ACTOR_REASON,
  SECOND_ACTOR_REPORT_INTERVAL_MS,
  taintEvidence,
  inRemit,
  type Decider,
  type JudgeContext,
  type ObservedEvent,
} from '../../src/secondactor/decision.js';
import { EventTail } from '../../src/secondactor/eventtail.js';
import { OWN_WRITE_TTL_MS, OwnWrites } from '../../src/secondactor/ownwrites.js';
import { TaintEvictionWriter } from '../../src/tainteviction/writer.js';
import { PodGCWriter } from '../../src/podgc/writer.js';
import { NodeLifecycleWriter } from '../../src/nodelifecycle/writer.js';
import { FakeClock } from '../../src/util/clock.js';
import { RecordingEventSink } from '../../src/inmemory/events.js';
import type { KubeClients } from '../../src/kube/client.js';

const OURS = 'nlc-7d9f_0b5c1c9e-1111-4222-8333-444455556666';
/** When this process started acting (a whole second, as object times are). */
const T0 = Date.UTC(2026, 10, 27, 8, 0, 0);
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';

function node(name: string, taints: Taint[] = []): Node {
  return { name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: T0 - 3_600_000, labels: {}, unschedulable: false, taints, conditions: [] };
}
function pod(name: string, extra: Partial<Pod> = {}): Pod {
  return {
    namespace: 'shop',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    nodeName: 'n1',
    phase: 'Running',
    creationTimestamp: T0 - 3_600_000,
    conditions: [{ type: 'Ready', status: 'True' }],
    tolerations: [],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
    ...extra,
  };
}
const dt = (reason: string, at = T0 + 10_000): PodCondition => ({ type: 'DisruptionTarget', status: 'True', reason, message: 'x', lastTransitionTime: at });

function ctx(now = T0 + 20_000, own = new OwnWrites(new FakeClock(now))): JudgeContext & { own: OwnWrites } {
  return { sinceMs: T0, nowMs: now, own };
}

describe('taintEvidence: a NoExecute taint appearing on a node', () => {
  const rows: { name: string; old: Taint[] | undefined; cur: Taint[]; ours?: [string, string]; theirs: number }[] = [
    { name: "kube-controller-manager's unreachable:NoExecute", old: [], cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 5000 }], theirs: 1 },
    { name: "kube-controller-manager's not-ready:NoExecute", old: [], cur: [{ key: NOT_READY, effect: 'NoExecute', timeAdded: T0 + 5000 }], theirs: 1 },
    { name: 'the swap not-ready → unreachable (SwapNodeControllerTaint)', old: [{ key: NOT_READY, effect: 'NoExecute', timeAdded: T0 + 1000 }], cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 5000 }], theirs: 1 },
    { name: 'ours (in the ledger)', old: [], cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 5000 }], ours: [UNREACHABLE, 'NoExecute'], theirs: 0 },
    { name: 'ours for another effect does not cover NoExecute', old: [], cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 5000 }], ours: [UNREACHABLE, 'NoSchedule'], theirs: 1 },
    { name: 'NoSchedule (the condition taints) is not judged', old: [], cur: [{ key: UNREACHABLE, effect: 'NoSchedule' }], theirs: 0 },
    { name: "the operator's out-of-service taint is not judged", old: [], cur: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute', timeAdded: T0 + 5000 }], theirs: 0 },
    { name: 'already there before the change', old: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 1000 }], cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 1000 }], theirs: 0 },
    { name: 'added before we started acting (the previous leader, kube-controller-manager before the cut-over)', old: [], cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 - 1000 }], theirs: 0 },
    { name: 'added in our first second (timeAdded is whole seconds)', old: [], cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 }], theirs: 1 },
    { name: 'no timeAdded: judged at the time it is seen', old: [], cur: [{ key: UNREACHABLE, effect: 'NoExecute' }], theirs: 1 },
    { name: 'a node seen for the first time (added): its creator\'s taints', old: undefined, cur: [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 5000 }], theirs: 0 },
  ];
  for (const r of rows) {
    test(r.name, () => {
      const c = ctx();
      if (r.ours) c.own.noteTaint('n1', r.ours[0], r.ours[1]);
      const got = taintEvidence(r.old === undefined ? undefined : node('n1', r.old), node('n1', r.cur), c);
      assert.equal(got.length, r.theirs);
      for (const e of got) assert.equal(e.kind, 'taint');
    });
  }

  test('older than the ledger remembers: not judged (ours might have expired from it)', () => {
    const now = T0 + OWN_WRITE_TTL_MS + 60_000;
    assert.equal(taintEvidence(node('n1'), node('n1', [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: T0 + 30_000 }]), ctx(now)).length, 0);
    assert.equal(taintEvidence(node('n1'), node('n1', [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: now - 1000 }]), ctx(now)).length, 1);
  });
});

describe('podUpdateEvidence and podDeleteEvidence: DisruptionTarget and deletions', () => {
  test("kube-controller-manager's taint manager: the condition, then the DELETE (two actions)", () => {
    const c = ctx();
    const before = pod('web-0');
    const marked = pod('web-0', { conditions: [...before.conditions, dt('DeletionByTaintManager')] });
    assert.deepEqual(podUpdateEvidence(before, marked, c).map((e) => e.kind), ['disruption-target']);
    const deleting = { ...marked, deletionTimestamp: T0 + 40_000, deletionGracePeriodSeconds: 30 };
    const got = podUpdateEvidence(marked, deleting, c);
    assert.deepEqual(got.map((e) => e.kind), ['pod-deletion']);
    assert.equal(got[0]?.atMs, T0 + 10_000, "the DELETE's time: deletionTimestamp minus the grace period");
  });

  test('condition and deletion in one change (the watch coalesced them)', () => {
    const got = podUpdateEvidence(pod('a'), pod('a', { conditions: [dt('DeletionByTaintManager')], deletionTimestamp: T0 + 10_000, deletionGracePeriodSeconds: 0 }), ctx());
    assert.deepEqual(got.map((e) => e.kind), ['disruption-target', 'pod-deletion']);
  });

  test("pod GC's orphan: DeletionByPodGC, then gone without terminating (grace 0)", () => {
    const c = ctx();
    const marked = pod('orphan', { phase: 'Failed', conditions: [dt('DeletionByPodGC')] });
    assert.deepEqual(podUpdateEvidence(pod('orphan'), marked, c).map((e) => e.kind), ['disruption-target']);
    assert.equal(podDeleteEvidence(marked, c)?.kind, 'pod-deletion');
  });

  test('ours: condition and deletion in the ledger', () => {
    const c = ctx();
    c.own.notePodCondition('uid-web-0');
    c.own.notePodDelete('uid-web-0');
    const marked = pod('web-0', { conditions: [dt('DeletionByTaintManager')] });
    assert.deepEqual(podUpdateEvidence(pod('web-0'), marked, c), []);
    assert.deepEqual(podUpdateEvidence(marked, { ...marked, deletionTimestamp: T0 + 15_000 }, c), []);
    assert.equal(podDeleteEvidence(marked, c), undefined);
  });

  test('we wrote the condition, someone else deleted: the deletion counts', () => {
    const c = ctx();
    c.own.notePodCondition('uid-web-0');
    const marked = pod('web-0', { conditions: [dt('DeletionByTaintManager')] });
    assert.deepEqual(podUpdateEvidence(marked, { ...marked, deletionTimestamp: T0 + 15_000 }, c).map((e) => e.kind), ['pod-deletion']);
  });

  for (const reason of ['PreemptionByScheduler', 'EvictionByEvictionAPI', 'TerminationByKubelet', 'DeletionByTaintManagerX']) {
    test(`a DisruptionTarget of another writer (${reason}) is no decision of ours: not judged`, () => {
      const marked = pod('p', { conditions: [dt(reason)] });
      assert.deepEqual(podUpdateEvidence(pod('p'), marked, ctx()), []);
      assert.deepEqual(podUpdateEvidence(marked, { ...marked, deletionTimestamp: T0 + 15_000 }, ctx()), []);
      assert.equal(podDeleteEvidence(marked, ctx()), undefined);
    });
  }

  test('a deletion without a decider\'s condition (a user, a ReplicaSet) cannot be told: not judged', () => {
    assert.deepEqual(podUpdateEvidence(pod('p'), pod('p', { deletionTimestamp: T0 + 15_000 }), ctx()), []);
    assert.equal(podDeleteEvidence(pod('p'), ctx()), undefined);
  });

  test('a pod that was terminating when it vanished: its deletion was judged when it began', () => {
    assert.equal(podDeleteEvidence(pod('p', { conditions: [dt('DeletionByTaintManager')], deletionTimestamp: T0 + 5000 }), ctx()), undefined);
  });

  test('a condition from before we acted, or older than the ledger: history', () => {
    assert.deepEqual(podUpdateEvidence(pod('p'), pod('p', { conditions: [dt('DeletionByTaintManager', T0 - 2000)] }), ctx()), []);
    const now = T0 + OWN_WRITE_TTL_MS + 60_000;
    assert.deepEqual(podUpdateEvidence(pod('p'), pod('p', { conditions: [dt('DeletionByTaintManager', T0 + 1000)] }), ctx(now)), []);
    assert.equal(podDeleteEvidence(pod('p', { conditions: [dt('DeletionByPodGC', T0 + 1000)] }), ctx(now)), undefined);
  });

  test('an unchanged condition (a status update by the kubelet) is not judged again', () => {
    const marked = pod('p', { conditions: [dt('DeletionByTaintManager')] });
    assert.deepEqual(podUpdateEvidence(marked, { ...marked, phase: 'Failed' }, ctx()), []);
  });
});

describe('eventEvidence: one Event', () => {
  function ev(o: Partial<ObservedEvent> = {}): ObservedEvent {
    return {
      component: 'taint-eviction-controller',
      instance: '',
      reason: 'TaintManagerEviction',
      message: 'Marking for deletion Pod shop/web-0',
      timeMs: T0 + 60_000,
      involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' },
      ...o,
    };
  }
  const rows: { name: string; e: ObservedEvent; kind: string | undefined }[] = [
    { name: "kube-controller-manager's taint eviction marking a pod (no instance)", e: ev(), kind: 'pod-deletion' },
    { name: "kube-controller-manager's taint eviction cancelling a deletion", e: ev({ message: 'Cancelling deletion of Pod shop/web-0' }), kind: 'event' },
    { name: "kube-controller-manager's node-controller NodeNotReady on a node", e: ev({ component: 'node-controller', reason: 'NodeNotReady', message: 'Node n1 status is now: NodeNotReady', involvedObject: { kind: 'Node', name: 'n1', uid: 'n' } }), kind: 'event' },
    { name: "kube-controller-manager's node-controller RegisteredNode (every node at its start)", e: ev({ component: 'node-controller', reason: 'RegisteredNode', message: 'Node n1 event: Registered Node n1 in Controller', involvedObject: { kind: 'Node', name: 'n1', uid: 'n' } }), kind: 'event' },
    { name: '1.20 legacy eviction (node-controller NodeControllerEviction)', e: ev({ component: 'node-controller', reason: 'NodeControllerEviction', message: 'Marking for deletion Pod web-0 from Node n1' }), kind: 'pod-deletion' },
    { name: '1.20 taint manager (taint-controller)', e: ev({ component: 'taint-controller' }), kind: 'pod-deletion' },
    { name: 'another copy of this program (another instance) doing pod GC', e: ev({ component: 'pod-garbage-collector', instance: 'nlc-other_9', reason: 'ForceDeletedOrphan', message: 'x' }), kind: 'event' },
    { name: 'ours (our identity as instance)', e: ev({ instance: OURS }), kind: undefined },
    { name: 'before we started acting', e: ev({ timeMs: T0 - 1001 }), kind: undefined },
    { name: 'in our first second', e: ev({ timeMs: T0 }), kind: 'pod-deletion' },
    { name: 'long after the start: the check has no window', e: ev({ timeMs: T0 + 30 * 86_400_000 }), kind: 'pod-deletion' },
    { name: 'no time at all', e: ev({ timeMs: undefined }), kind: undefined },
    { name: 'a source that makes none of our decisions (kubelet)', e: ev({ component: 'kubelet', reason: 'Killing' }), kind: undefined },
    { name: 'the attach/detach controller (kube-controller-manager keeps it on)', e: ev({ component: 'attachdetach-controller', reason: 'SuccessfulAttachVolume' }), kind: undefined },
  ];
  for (const r of rows) {
    test(r.name, () => assert.equal(eventEvidence(r.e, OURS, T0)?.kind, r.kind));
  }

  test("toObservedEvent reads kube-controller-manager's core/v1 Event (no instance) and ours", () => {
    const theirs = toObservedEvent({
      involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' },
      reason: 'TaintManagerEviction',
      message: 'Marking for deletion Pod shop/web-0',
      source: { component: 'taint-eviction-controller' },
      lastTimestamp: new Date(T0 + 5000).toISOString(),
    });
    assert.deepEqual(theirs, { component: 'taint-eviction-controller', instance: '', reason: 'TaintManagerEviction', message: 'Marking for deletion Pod shop/web-0', timeMs: T0 + 5000, involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' } });
    const ours = toObservedEvent({ involvedObject: { kind: 'Node', name: 'n1', uid: 'n' }, reason: 'NodeNotReady', source: { component: 'node-controller', host: OURS }, reportingInstance: OURS, eventTime: new Date(T0 + 7000) });
    assert.equal(ours?.instance, OURS);
    assert.equal(ours && eventEvidence(ours, OURS, T0), undefined);
    assert.equal(toObservedEvent({ reason: 'x' }), undefined, 'no involvedObject: malformed');
  });
});

describe('fieldManagerOf: who owns the field, from managedFields', () => {
  // As kube-apiserver 1.37 returns them after kube-controller-manager's writes (its User-Agent
  // prefix is the manager; Update operations).
  const kcmNode = {
    metadata: {
      managedFields: [
        { manager: 'kubelet', operation: 'Update', time: '2026-11-27T07:59:00Z', fieldsV1: { 'f:status': { 'f:conditions': {} } } },
        { manager: 'node-lifecycle-controller (kubernetes-client-javascript)', operation: 'Update', time: '2026-11-27T08:00:01Z', fieldsV1: { 'f:spec': { 'f:taints': {} } } },
        { manager: 'kube-controller-manager', operation: 'Update', time: '2026-11-27T08:00:05Z', fieldsV1: { 'f:spec': { 'f:taints': {} } } },
      ],
    },
  };
  const kcmPod = {
    metadata: {
      managedFields: [
        { manager: 'kubelet', operation: 'Update', subresource: 'status', time: '2026-11-27T07:59:00Z', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': {} } } } },
        { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', time: '2026-11-27T08:00:10Z', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"DisruptionTarget"}': {} } } } },
      ],
    },
  };
  test('the newest owner of spec.taints', () => assert.equal(fieldManagerOf(kcmNode, 'taint'), 'kube-controller-manager (Update at 2026-11-27T08:00:05Z)'));
  test('the owner of the DisruptionTarget condition', () => {
    assert.equal(fieldManagerOf(kcmPod, 'disruption-target'), 'kube-controller-manager (Update at 2026-11-27T08:00:10Z)');
    assert.equal(fieldManagerOf(kcmPod, 'pod-deletion'), 'kube-controller-manager (Update at 2026-11-27T08:00:10Z)');
  });
  test('nothing owns it, or not an object', () => {
    assert.equal(fieldManagerOf(kcmPod, 'taint'), undefined);
    assert.equal(fieldManagerOf({ metadata: {} }, 'taint'), undefined);
    assert.equal(fieldManagerOf('x', 'taint'), undefined);
    assert.equal(fieldManagerOf(null, 'taint'), undefined);
  });
  test('describeEvidence names it, and how many more since the last report', () => {
    const text = describeEvidence({ kind: 'taint', decider: 'node-lifecycle', object: { kind: 'Node', name: 'n1', uid: 'u' }, atMs: T0, what: `added taint ${UNREACHABLE}:NoExecute` }, 'kube-controller-manager (Update)', 3);
    assert.match(text, /^another actor \(field manager kube-controller-manager \(Update\)\) added taint node\.kubernetes\.io\/unreachable:NoExecute on Node n1 at 2026-11-27T08:00:00\.000Z/);
    assert.match(text, /3 more action\(s\) of this kind since the last report/);
  });
});

describe('OwnWrites: the ledger', () => {
  test('remembers each kind of write for the TTL, then forgets it', () => {
    const clock = new FakeClock(T0);
    const own = new OwnWrites(clock);
    own.noteTaint('n1', UNREACHABLE, 'NoExecute');
    own.notePodCondition('u1');
    own.notePodDelete('u2');
    assert.ok(own.wroteTaint('n1', UNREACHABLE, 'NoExecute'));
    assert.ok(!own.wroteTaint('n2', UNREACHABLE, 'NoExecute'));
    assert.ok(own.wrotePodCondition('u1') && !own.deletedPod('u1'));
    assert.ok(own.deletedPod('u2') && !own.wrotePodCondition('u2'));
    clock.set(T0 + OWN_WRITE_TTL_MS);
    assert.ok(!own.wroteTaint('n1', UNREACHABLE, 'NoExecute'));
    own.notePodDelete('u3');
    assert.equal(own.size(), 1, 'expired entries are pruned as new ones come in');
  });
  test('a re-noted write lives a full TTL from its last note', () => {
    const clock = new FakeClock(T0);
    const own = new OwnWrites(clock);
    own.notePodDelete('u1');
    clock.set(T0 + OWN_WRITE_TTL_MS - 1000);
    own.notePodDelete('u1');
    clock.set(T0 + OWN_WRITE_TTL_MS + 4000);
    assert.ok(own.deletedPod('u1'));
  });
});

describe('the writers note what they send, and only that', () => {
  /** A scheduler that runs the recheck, then the write (as ApiWriteThrottle does), or withholds it. */
  const scheduler = (withhold = false): WriteScheduler => ({
    schedule: (fn, _p, recheck) => {
      if (withhold) return Promise.reject(new NotCalledForError('no longer called for'));
      const why = recheck?.();
      if (why !== undefined) return Promise.reject(new NotCalledForError(why));
      return fn();
    },
  });
  const core = { patchNamespacedPodStatus: () => Promise.resolve({}), deleteNamespacedPod: () => Promise.resolve({}), readNamespacedPod: () => Promise.resolve({}) };

  test('taint eviction: the condition and the DELETE, at send time', async () => {
    const own = new OwnWrites(new FakeClock(T0));
    const w = new TaintEvictionWriter({ core } as unknown as KubeClients, scheduler(), new FakeClock(T0), own);
    await w.addDisruptionCondition('shop', 'web-0', 'u1');
    await w.deletePod('shop', 'web-0', 'u1');
    assert.ok(own.wrotePodCondition('u1') && own.deletedPod('u1'));
    const held = new TaintEvictionWriter({ core } as unknown as KubeClients, scheduler(true), new FakeClock(T0), own);
    await assert.rejects(held.deletePod('shop', 'web-1', 'u2'));
    await assert.rejects(held.addDisruptionCondition('shop', 'web-1', 'u2'));
    assert.ok(!own.deletedPod('u2') && !own.wrotePodCondition('u2'), 'a withheld write is not ours');
  });

  test('pod GC: the orphan condition and the force delete', async () => {
    const own = new OwnWrites(new FakeClock(T0));
    const live = pod('orphan', { uid: 'u9' });
    const w = new PodGCWriter({ core } as unknown as KubeClients, scheduler(), new FakeClock(T0), own);
    (w as unknown as { getPod: () => Promise<Pod> }).getPod = () => Promise.resolve(live);
    assert.equal(await w.forceDeletePod('shop', 'orphan', 'u9', () => Promise.resolve({ condition: dt('DeletionByPodGC'), why: 'orphan' })), 'deleted');
    assert.ok(own.wrotePodCondition('u9') && own.deletedPod('u9'));
    const own2 = new OwnWrites(new FakeClock(T0));
    const w2 = new PodGCWriter({ core } as unknown as KubeClients, scheduler(), new FakeClock(T0), own2);
    (w2 as unknown as { getPod: () => Promise<Pod> }).getPod = () => Promise.resolve(live);
    await w2.forceDeletePod('shop', 'orphan', 'u9', () => Promise.resolve({ why: 'out of service' }));
    assert.ok(!own2.wrotePodCondition('u9') && own2.deletedPod('u9'), 'no condition sent, none noted');
  });

  test('node lifecycle: the taints the patch adds, not those it keeps', async () => {
    const own = new OwnWrites(new FakeClock(T0));
    const patched: unknown[] = [];
    const clients = { core: { patchNode: (a: unknown) => (patched.push(a), Promise.resolve({ metadata: { name: 'n1', uid: 'uid-n1', resourceVersion: '2' }, spec: {}, status: {} })) } };
    const w = new NodeLifecycleWriter(clients as unknown as KubeClients, scheduler(), new FakeClock(T0), own);
    const cached = node('n1', [{ key: 'example.com/keep', effect: 'NoSchedule' }, { key: NOT_READY, effect: 'NoExecute', timeAdded: T0 - 5000 }]);
    await w.swapNodeTaints('n1', [{ key: UNREACHABLE, effect: 'NoExecute' }], [{ key: NOT_READY, effect: 'NoExecute' }], cached);
    assert.equal(patched.length, 1);
    assert.ok(own.wroteTaint('n1', UNREACHABLE, 'NoExecute'));
    assert.ok(!own.wroteTaint('n1', 'example.com/keep', 'NoSchedule') && !own.wroteTaint('n1', NOT_READY, 'NoExecute'));
  });
});

/** Handlers a fake informer source holds, and its cache (`get`). */
class FakeSource<T> {
  h: { add?: (o: T) => void; update?: (old: T, cur: T) => void; delete?: (o: T) => void }[] = [];
  readonly cache = new Map<string, T>();
  get(key: string): T | undefined {
    return this.cache.get(key);
  }
  subscribe(h: { add?: (o: T) => void; update?: (old: T, cur: T) => void; delete?: (o: T) => void }): void {
    this.h.push(h);
  }
  update(old: T, cur: T): void {
    for (const h of this.h) h.update?.(old, cur);
  }
  delete(o: T): void {
    for (const h of this.h) h.delete?.(o);
  }
}

function recordingLogger(): Logger & { warns: { obj: Record<string, unknown>; msg: string }[] } {
  const warns: { obj: Record<string, unknown>; msg: string }[] = [];
  return { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (obj, msg) => warns.push({ obj: obj as Record<string, unknown>, msg }), warns };
}

const ALL_DECIDERS: ReadonlySet<Decider> = new Set(['node-lifecycle', 'taint-eviction', 'pod-gc']);

function harness(opts: { deciders?: ReadonlySet<Decider>; scoped?: boolean } = {}) {
  const clock = new FakeClock(T0);
  const events = new RecordingEventSink(clock);
  const counts: string[] = [];
  const log = recordingLogger();
  const nodes = new FakeSource<Node>();
  const pods = new FakeSource<Pod>();
  const own = new OwnWrites(clock);
  let onEvent: (raw: unknown) => void = () => undefined;
  const watches = { started: 0, stopped: 0 };
  const managerAsked: string[] = [];
  const check = new SecondActorCheck({
    identity: OURS,
    clock,
    log,
    events,
    actions: { inc: ({ kind }) => counts.push(kind) },
    own,
    nodes,
    pods,
    deciders: opts.deciders ?? ALL_DECIDERS,
    scoped: opts.scoped ?? false,
    eventWatches: (f) => {
      onEvent = f;
      return [{ start: () => watches.started++, stop: () => watches.stopped++ }];
    },
    fieldManager: (ev) => {
      managerAsked.push(ev.kind);
      return Promise.resolve('kube-controller-manager (Update)');
    },
  });
  return { clock, events, counts, log, nodes, pods, own, check, watches, managerAsked, event: (raw: unknown) => onEvent(raw) };
}
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const taintUpdate = (at: number): [Node, Node] => [node('n1'), node('n1', [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: at }])];

describe('SecondActorCheck: the shell', () => {
  test('judges nothing before start() and after stop(); starts and stops the Event watches', async () => {
    const h = harness();
    h.nodes.update(...taintUpdate(T0 + 1000));
    assert.deepEqual(h.counts, [], 'not acting yet');
    h.check.start();
    assert.equal(h.watches.started, 1);
    h.clock.set(T0 + 2000);
    h.nodes.update(...taintUpdate(T0 + 2000));
    assert.deepEqual(h.counts, ['taint']);
    h.check.stop();
    assert.equal(h.watches.stopped, 1);
    h.nodes.update(...taintUpdate(T0 + 2000));
    assert.deepEqual(h.counts, ['taint']);
    await settle();
  });

  test('counts every action, logs and raises an Event once per kind and minute, naming the field manager', async () => {
    const h = harness();
    h.check.start();
    h.clock.set(T0 + 5000);
    for (let i = 0; i < 3; i++) h.nodes.update(...taintUpdate(T0 + 5000));
    const marked = pod('web-0', { conditions: [dt('DeletionByTaintManager', T0 + 5000)] });
    h.pods.update(pod('web-0'), marked);
    await settle();
    assert.deepEqual(h.counts, ['taint', 'taint', 'taint', 'disruption-target']);
    assert.equal(h.log.warns.length, 2, 'one line per kind');
    assert.equal(h.log.warns[0]?.obj['fieldManager'], 'kube-controller-manager (Update)');
    assert.deepEqual(h.managerAsked, ['taint', 'disruption-target']);
    const warnings = h.events.list.filter((e) => e.reason === SECOND_ACTOR_REASON);
    assert.deepEqual(warnings.map((e) => [e.type, e.ref.kind, e.ref.name]), [['Warning', 'Node', 'n1'], ['Warning', 'Pod', 'web-0']]);
    assert.match(warnings[0]?.message ?? '', /field manager kube-controller-manager \(Update\)\) added taint node\.kubernetes\.io\/unreachable:NoExecute on Node n1/);
    // A minute later the next one is reported, with the two suppressed since.
    h.clock.set(h.clock.now() + SECOND_ACTOR_REPORT_INTERVAL_MS);
    h.nodes.update(...taintUpdate(h.clock.now()));
    await settle();
    assert.equal(h.log.warns.length, 3);
    assert.equal(h.log.warns[2]?.obj['more'], 2);
    assert.equal(h.check.view().kinds.taint.count, 4);
    assert.match(h.check.view().kinds.taint.lastReport ?? '', /2 more action/);
  });

  test('one pod deletion is counted once, whether the pod, its vanishing or the Event tells it', async () => {
    const h = harness();
    h.check.start();
    h.clock.set(T0 + 5000);
    const marked = pod('web-0', { conditions: [dt('DeletionByTaintManager', T0 + 5000)] });
    h.pods.update(marked, { ...marked, deletionTimestamp: T0 + 5000 });
    // Upstream's emitPodDeletionEvent references the pod by namespace and name only (no UID).
    h.event({ involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop' }, reason: 'TaintManagerEviction', message: 'Marking for deletion Pod shop/web-0', source: { component: 'taint-eviction-controller' }, lastTimestamp: new Date(T0 + 5000).toISOString() });
    h.event({ involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'shop' }, reason: 'TaintManagerEviction', message: 'Marking for deletion Pod shop/web-1', source: { component: 'taint-eviction-controller' }, lastTimestamp: new Date(T0 + 5000).toISOString() });
    h.event({ involvedObject: { kind: 'Node', name: 'n1', uid: 'uid-n1' }, reason: 'RegisteredNode', message: 'Registered', source: { component: 'node-controller' }, lastTimestamp: new Date(T0 + 5000).toISOString() });
    h.event({ involvedObject: { kind: 'Node', name: 'n1', uid: 'uid-n1' }, reason: 'NodeNotReady', source: { component: 'node-controller', host: OURS }, reportingInstance: OURS, lastTimestamp: new Date(T0 + 5000).toISOString() });
    h.event({ reason: 'malformed' });
    await settle();
    assert.deepEqual(h.counts, ['pod-deletion', 'pod-deletion', 'event']);
    assert.deepEqual(h.managerAsked, ['pod-deletion'], 'an Event names its own recorder: no GET for it');
    assert.match(h.log.warns.find((w) => w.obj['kind'] === 'event')?.msg ?? '', /node-controller \(no instance: kube-controller-manager records none\) recorded Event RegisteredNode on Node n1/);
  });

  test('our own writes, noted by the writers, are never counted', async () => {
    const h = harness();
    h.check.start();
    h.clock.set(T0 + 5000);
    h.own.noteTaint('n1', UNREACHABLE, 'NoExecute');
    h.own.notePodCondition('uid-web-0');
    h.own.notePodDelete('uid-web-0');
    h.nodes.update(...taintUpdate(T0 + 5000));
    const marked = pod('web-0', { conditions: [dt('DeletionByTaintManager', T0 + 5000)] });
    h.pods.update(pod('web-0'), marked);
    h.pods.update(marked, { ...marked, deletionTimestamp: T0 + 5000 });
    await settle();
    assert.deepEqual(h.counts, []);
    assert.equal(h.events.list.length, 0);
  });

  test("only the loops this process runs: another actor's taint eviction and pod GC are not judged when ours runs neither", async () => {
    const h = harness({ deciders: new Set<Decider>(['node-lifecycle']) });
    h.check.start();
    h.clock.set(T0 + 5000);
    h.nodes.update(...taintUpdate(T0 + 5000));
    const marked = pod('web-0', { conditions: [dt('DeletionByTaintManager', T0 + 5000)] });
    h.pods.update(pod('web-0'), marked);
    h.pods.update(marked, { ...marked, deletionTimestamp: T0 + 5000 });
    h.pods.delete(pod('orphan', { conditions: [dt('DeletionByPodGC', T0 + 5000)] }));
    h.event({ involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'shop' }, reason: 'TaintManagerEviction', message: 'Marking for deletion Pod shop/web-1', source: { component: 'taint-eviction-controller' }, lastTimestamp: new Date(T0 + 5000).toISOString() });
    h.event({ involvedObject: { kind: 'Node', name: 'n1', uid: 'uid-n1' }, reason: 'NodeNotReady', source: { component: 'node-controller' }, lastTimestamp: new Date(T0 + 5000).toISOString() });
    await settle();
    assert.deepEqual(h.counts, ['taint', 'event'], 'the node lifecycle decisions only');
  });

  test('under --node-selector: only nodes in the cache (or deleted from it lately) are this process\'s', async () => {
    const h = harness({ scoped: true });
    h.nodes.cache.set('n1', node('n1'));
    h.check.start();
    h.clock.set(T0 + 5000);
    const mine = pod('mine', { nodeName: 'n1', conditions: [dt('DeletionByTaintManager', T0 + 5000)] });
    const theirs = pod('theirs', { nodeName: 'other-pool-0', conditions: [dt('DeletionByTaintManager', T0 + 5000)] });
    h.pods.update(pod('mine', { nodeName: 'n1' }), mine);
    h.pods.update(pod('theirs', { nodeName: 'other-pool-0' }), theirs);
    // An orphan of a node that left our cache lately is ours; of one we never had, not.
    h.nodes.delete(node('n2'));
    h.pods.delete(pod('orphan', { nodeName: 'n2', conditions: [dt('DeletionByPodGC', T0 + 5000)] }));
    h.pods.delete(pod('stranger', { nodeName: 'n9', conditions: [dt('DeletionByPodGC', T0 + 5000)] }));
    // An Event about a pod: its node from the pod cache; unknown under a selector: not judged.
    h.pods.cache.set('shop/cached', pod('cached', { nodeName: 'n1' }));
    const ev = (name: string) => ({ involvedObject: { kind: 'Pod', name, namespace: 'shop' }, reason: 'TaintManagerEviction', message: `Marking for deletion Pod shop/${name}`, source: { component: 'taint-eviction-controller' }, lastTimestamp: new Date(T0 + 5000).toISOString() });
    h.event(ev('cached'));
    h.event(ev('uncached'));
    await settle();
    assert.deepEqual(h.counts.sort(), ['disruption-target', 'pod-deletion', 'pod-deletion'].sort());
    assert.deepEqual(h.check.view().kinds['pod-deletion'].count, 2, 'the orphan and the cached pod');
  });

  test('inRemit: decider and scope', () => {
    const all = { deciders: ALL_DECIDERS };
    assert.ok(inRemit({ decider: 'pod-gc' }, all), 'unscoped: every node, known or not');
    assert.ok(!inRemit({ decider: 'pod-gc' }, { deciders: new Set<Decider>(['node-lifecycle']) }));
    const scoped = { deciders: ALL_DECIDERS, nodeInScope: (n: string) => n === 'n1' };
    assert.ok(inRemit({ decider: 'taint-eviction', nodeName: 'n1' }, scoped));
    assert.ok(!inRemit({ decider: 'taint-eviction', nodeName: 'n2' }, scoped));
    assert.ok(!inRemit({ decider: 'taint-eviction' }, scoped), 'scoped and the node unknown: not judged');
  });

  test('property: whatever mix of our and their actions, exactly theirs are counted', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ what: fc.constantFrom('taint', 'condition', 'delete', 'gc-orphan'), ours: fc.boolean(), dtMs: fc.integer({ min: 0, max: 120_000 }) }), { maxLength: 25 }),
        async (actions) => {
          const h = harness();
          h.check.start();
          h.clock.set(T0 + 150_000);
          let want = 0;
          actions.forEach((a, i) => {
            const name = `p${i}`;
            const at = Math.floor((T0 + a.dtMs) / 1000) * 1000;
            if (a.what === 'taint') {
              if (a.ours) h.own.noteTaint(`n${i}`, UNREACHABLE, 'NoExecute');
              else want++;
              h.nodes.update(node(`n${i}`), node(`n${i}`, [{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: at }]));
            } else if (a.what === 'condition') {
              if (a.ours) h.own.notePodCondition(`uid-${name}`);
              else want++;
              h.pods.update(pod(name), pod(name, { conditions: [dt('DeletionByTaintManager', at)] }));
            } else if (a.what === 'delete') {
              if (a.ours) h.own.notePodDelete(`uid-${name}`);
              else want++;
              const marked = pod(name, { conditions: [dt('DeletionByTaintManager', at)] });
              h.own.notePodCondition(`uid-${name}`);
              h.pods.update(marked, { ...marked, deletionTimestamp: at });
            } else {
              if (a.ours) h.own.notePodDelete(`uid-${name}`);
              else want++;
              h.own.notePodCondition(`uid-${name}`);
              h.pods.delete(pod(name, { conditions: [dt('DeletionByPodGC', at)] }));
            }
          });
          await settle();
          assert.equal(h.counts.length, want);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('EventTail: the store-less Event watch', () => {
  type Call = { rv: unknown; fieldSelector: unknown; cb: (phase: string, obj: unknown) => void; done: (err: unknown) => void };
  function fakeWatch(): WatchLike & { calls: Call[] } {
    const calls: Call[] = [];
    return {
      calls,
      watch(_path, q, cb, done) {
        calls.push({ rv: q['resourceVersion'], fieldSelector: q['fieldSelector'], cb, done });
        return Promise.resolve(new AbortController());
      },
    };
  }

  test('starts from the list\'s resourceVersion, hands over ADDED/MODIFIED, follows bookmarks, resumes, and starts again after 410', async () => {
    const clock = new FakeClock(T0);
    const watch = fakeWatch();
    const lists: string[] = [];
    const got: unknown[] = [];
    const tail = new EventTail({
      component: 'node-controller',
      currentResourceVersion: (fs) => (lists.push(fs), Promise.resolve(`${100 * lists.length}`)),
      watch,
      onEvent: (raw) => got.push((raw as { reason: string }).reason),
      clock,
      log: recordingLogger(),
      random: () => 0,
    });
    tail.start();
    await settle();
    assert.deepEqual(lists, ['source=node-controller']);
    assert.equal(watch.calls[0]?.rv, '100');
    assert.equal(watch.calls[0]?.fieldSelector, 'source=node-controller');
    watch.calls[0]?.cb('ADDED', { metadata: { resourceVersion: '101' }, reason: 'RegisteredNode' });
    watch.calls[0]?.cb('MODIFIED', { metadata: { resourceVersion: '102' }, reason: 'NodeNotReady' });
    watch.calls[0]?.cb('DELETED', { metadata: { resourceVersion: '103' }, reason: 'Gone' });
    watch.calls[0]?.cb('BOOKMARK', { metadata: { resourceVersion: '150' } });
    clock.set(clock.now() + 2000);
    watch.calls[0]?.done(null);
    await settle();
    assert.deepEqual(got, ['RegisteredNode', 'NodeNotReady']);
    assert.equal(watch.calls[1]?.rv, '150', 'a clean end resumes from the last resourceVersion at once');
    clock.set(clock.now() + 30_000);
    watch.calls[1]?.done(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }));
    await settle();
    assert.equal(watch.calls[2]?.rv, '150', "client-node's inactivity timeout is a clean end too: resumed at once");
    watch.calls.splice(1, 1);
    watch.calls[1]?.cb('ERROR', { code: 410, reason: 'Expired' });
    watch.calls[1]?.done(null);
    await settle();
    assert.equal(watch.calls.length, 2, 'after 410 it backs off first');
    await clock.advanceAsync(2000);
    await settle();
    assert.deepEqual(lists.length, 2, 'then lists again');
    assert.equal(watch.calls[2]?.rv, '200');
    assert.equal(tail.stats().restarts, 1);
    assert.equal(tail.stats().events, 2);
    tail.stop();
  });

  test('a failing list or watch backs off and tries again; stop() ends it', async () => {
    const clock = new FakeClock(T0);
    const watch = fakeWatch();
    let lists = 0;
    const tail = new EventTail({
      component: 'taint-eviction-controller',
      currentResourceVersion: () => (++lists === 1 ? Promise.reject(new Error('503')) : Promise.resolve('7')),
      watch,
      onEvent: () => undefined,
      clock,
      log: recordingLogger(),
      random: () => 0,
    });
    tail.start();
    await settle();
    assert.equal(watch.calls.length, 0);
    assert.match(tail.stats().lastError ?? '', /503/);
    await clock.advanceAsync(1000);
    await settle();
    assert.equal(watch.calls.length, 1);
    watch.calls[0]?.done(new Error('connection reset'));
    await settle();
    await clock.advanceAsync(1600);
    await settle();
    assert.equal(watch.calls.length, 2);
    assert.equal(watch.calls[1]?.rv, '7', 'an error keeps the resourceVersion');
    watch.calls[1]?.done(null);
    await settle();
    assert.equal(watch.calls.length, 2, 'a stream that ended within a second backs off rather than loop');
    tail.stop();
    await clock.advanceAsync(120_000);
    await settle();
    assert.equal(watch.calls.length, 2, 'nothing after stop()');
  });
});
