/**
 * Upstream's own table tests of the taint manager, ported case by case onto our controller shell.
 *
 * Upstream file: k8s.io/kubernetes v1.37.2 `pkg/controller/tainteviction/taint_eviction_test.go`.
 * Every upstream test is a `describe` of the same name and every table row a `test` named with
 * upstream's `description`, so the two tables can be diffed. Tests with unnamed rows
 * (`TestGetMinTolerationTime`) are numbered in upstream's order.
 *
 * How upstream's fakes map onto ours (test/support/tainteviction-world.ts):
 * - `fake.NewSimpleClientset(pods…)` + `podIndexer.Add/Update` + `controller.PodUpdated(old, new)`
 *   → `World.putPod` (the in-memory pod cache, then `TaintEvictionController.podChanged`);
 *   `PodUpdated(pod, nil)` → `World.removePod` / `podDeleted`.
 * - `nodeIndexer.Add/Update` + `controller.NodeUpdated(old, new)` → `World.putNode` (node cache,
 *   then `nodeChanged`); `NodeUpdated(node, nil)` → `World.deleteNode`.
 * - `controller.taintedNodes = {node1: taints}` (upstream writes the private map) → `World.putNode`
 *   with those taints: our shell fills its `#taintedNodes` only from the node cache, and its
 *   re-check before deleting (docs/taint-eviction.md difference 5) needs the node in the cache.
 * - The fake clientset's recorded `patch pods` / `delete pods` actions → the recording
 *   `TaintEvictionWrites` double: `addDisruptionCondition` is upstream's status patch
 *   (`expectPatch`), `deletePod` its delete (`expectDelete`).
 * - `controller.taintEvictionQueue.GetWorkerUnsafe(pod)` (is a deletion scheduled?) →
 *   `TaintEvictionController.view()`.
 * - Wall-clock waits (`verifyPodActions` polls up to 5 s, `time.Sleep`, `additionalSleep`) →
 *   `FakeClock` advances. Where upstream's "no action" only means "not within its 5 s poll", we
 *   also check the exact later time at which the action happens (upstream would act then too).
 * - `createNoExecuteTaint(i)` stamps `TimeAdded: now`; ours stamps the FakeClock's now. Our
 *   deadlines count from `timeAdded` (difference 1), upstream's from when it processes the pod;
 *   in these tables both are the same instant, so no expected result changes.
 * - `testutil.NewPod` has no UID; ours has one (the double guards by it, difference 7).
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Taint, Toleration } from '../../src/kube/objects.js';
import { getMinTolerationTimeMs, FOREVER, noExecuteTaints } from '../../src/tainteviction/tolerations.js';
import { cancelPodDeletionEvent, podDeletionEvent } from '../../src/tainteviction/events.js';
import type { TaintEvictionController } from '../../src/tainteviction/controller.js';
import { NS, START, started, taint, type World } from '../support/tainteviction-world.js';

/** `verifyPodActions`' poll timeout: upstream's window for an expected action (and its only window for an absent one). */
const UPSTREAM_POLL_MS = 5_000;

/** upstream `addToleration(pod, i, d)`: no operator (so `Equal`), `d < 0` means no `tolerationSeconds` (forever). */
function addToleration(i: number, seconds: number): Toleration[] {
  return [{ key: `testTaint${i}`, value: `test${i}`, effect: 'NoExecute', ...(seconds >= 0 ? { tolerationSeconds: seconds } : {}) }];
}

/** upstream `createNoExecuteTaint(i)`: `timeAdded` is now. */
function createNoExecuteTaint(w: World, i: number): Taint {
  return taint(i, w.clock.now());
}

/** upstream `addTaintsToNode(node, …, indices)`: the node's taints become `createNoExecuteTaint(i)` for each index. */
function taintsFor(w: World, indices: number[]): Taint[] {
  return indices.map((i) => createNoExecuteTaint(w, i));
}

/** Whether a status patch (DisruptionTarget) and a delete were recorded, for any pod (as upstream's `verifyPodActions`). */
function podActions(w: World): { patched: boolean; deleted: boolean } {
  return { patched: w.writes.some((x) => x.kind === 'condition'), deleted: w.writes.some((x) => x.kind === 'delete') };
}

/**
 * upstream `verifyPodActions`: lets the controller run for upstream's 5 s poll window, then checks
 * that a status patch and a delete were (or were not) sent.
 */
async function verifyPodActions(w: World, expectPatch: boolean, expectDelete: boolean): Promise<void> {
  await w.settle(UPSTREAM_POLL_MS);
  assert.deepEqual(podActions(w), { patched: expectPatch, deleted: expectDelete });
}

/** Milliseconds since START of every delete of `pod`. */
function deleteTimes(w: World, pod: string): number[] {
  return w.deletionTimes(pod);
}

/** A started controller with nothing in its caches. */
function newWorld(t: TestContext): { w: World; ctl: TaintEvictionController } {
  return started(t);
}

// -------------------------------------------------------------------------------------------------

describe('TestFilterNoExecuteTaints', () => {
  test('only the NoExecute taint is kept', () => {
    const taints: Taint[] = [
      { key: 'one', value: 'one', effect: 'NoExecute' },
      { key: 'two', value: 'two', effect: 'NoSchedule' },
    ];
    assert.deepEqual(noExecuteTaints(taints).map((x) => x.key), ['one']);
  });
});

describe('TestCreatePod', () => {
  const cases: { description: string; nodeName: string; tolerations: Toleration[]; taintedNodes: number[]; expectPatch: boolean; expectDelete: boolean }[] = [
    { description: 'not scheduled - ignore', nodeName: '', tolerations: [], taintedNodes: [], expectPatch: false, expectDelete: false },
    { description: 'scheduled on untainted Node', nodeName: 'node1', tolerations: [], taintedNodes: [], expectPatch: false, expectDelete: false },
    { description: 'schedule on tainted Node', nodeName: 'node1', tolerations: [], taintedNodes: [1], expectPatch: true, expectDelete: true },
    {
      description: 'schedule on tainted Node with finite toleration',
      nodeName: 'node1',
      tolerations: addToleration(1, 100),
      taintedNodes: [1],
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'schedule on tainted Node with infinite toleration',
      nodeName: 'node1',
      tolerations: addToleration(1, -1),
      taintedNodes: [1],
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'schedule on tainted Node with infinite invalid toleration',
      nodeName: 'node1',
      tolerations: addToleration(2, -1),
      taintedNodes: [1],
      expectPatch: true,
      expectDelete: true,
    },
  ];
  for (const item of cases) {
    test(item.description, async (t) => {
      const { w } = newWorld(t);
      // controller.taintedNodes = item.taintedNodes
      if (item.taintedNodes.length > 0) w.putNode('node1', taintsFor(w, item.taintedNodes));
      else w.putNode('node1', []);
      await w.settle();
      w.putPod('pod1', item.nodeName, item.tolerations);
      await verifyPodActions(w, item.expectPatch, item.expectDelete);
      if (item.expectDelete) {
        assert.deepEqual(deleteTimes(w, 'pod1'), [0], 'deleted at once');
        assert.deepEqual(w.messages(), [`Marking for deletion Pod ${NS}/pod1`]);
      }
    });
  }

  test('schedule on tainted Node with finite toleration: beyond upstream\'s window, deleted when the 100 s run out (upstream too)', async (t) => {
    const { w } = newWorld(t);
    w.putNode('node1', taintsFor(w, [1]));
    w.putPod('pod1', 'node1', addToleration(1, 100));
    await w.settle(100_000 - 1);
    assert.deepEqual(w.writes, []);
    await w.settle(1);
    assert.deepEqual(deleteTimes(w, 'pod1'), [100_000]);
  });

  test('schedule on tainted Node with infinite toleration: never deleted (a week later)', async (t) => {
    const { w } = newWorld(t);
    w.putNode('node1', taintsFor(w, [1]));
    w.putPod('pod1', 'node1', addToleration(1, -1));
    await w.settle(7 * 24 * 3_600_000);
    assert.deepEqual(w.writes, [], 'a pod that tolerates forever is never patched nor deleted');
  });
});

describe('TestDeletePod', () => {
  test('a delete notification for a pod on a tainted node does nothing and does not throw', async (t) => {
    const { w, ctl } = newWorld(t);
    w.putNode('node1', taintsFor(w, [1])); // controller.taintedNodes = {node1: [taint1]}
    await w.settle();
    // controller.PodUpdated(testutil.NewPod("pod1", "node1"), nil): the pod was never in the cache.
    ctl.podDeleted({ namespace: NS, name: 'pod1' });
    await w.settle(20); // upstream: timeForControllerToProgressForSanityCheck
    assert.deepEqual(w.writes, []);
    assert.deepEqual(w.events, []);
  });
});

describe('TestUpdatePod', () => {
  const cases: {
    description: string;
    prev: { nodeName: string; tolerations: Toleration[] };
    awaitForScheduledEviction: boolean;
    next: { nodeName: string; tolerations: Toleration[] };
    expectPatch: boolean;
    expectDelete: boolean;
    /** Our exact delete time (ms after START); upstream only says "within its 5 s poll". */
    deletedAtMs?: number;
  }[] = [
    {
      description: 'scheduling onto tainted Node',
      prev: { nodeName: '', tolerations: [] },
      awaitForScheduledEviction: false,
      next: { nodeName: 'node1', tolerations: [] },
      expectPatch: true,
      expectDelete: true,
      deletedAtMs: 0,
    },
    {
      description: 'scheduling onto tainted Node with toleration',
      prev: { nodeName: '', tolerations: addToleration(1, -1) },
      awaitForScheduledEviction: false,
      next: { nodeName: 'node1', tolerations: addToleration(1, -1) },
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'removing toleration',
      prev: { nodeName: 'node1', tolerations: addToleration(1, 100) },
      awaitForScheduledEviction: true,
      next: { nodeName: 'node1', tolerations: [] },
      expectPatch: true,
      expectDelete: true,
      deletedAtMs: 0,
    },
    {
      description: "lengthening toleration shouldn't work",
      prev: { nodeName: 'node1', tolerations: addToleration(1, 1) },
      awaitForScheduledEviction: true,
      next: { nodeName: 'node1', tolerations: addToleration(1, 100) },
      expectPatch: true,
      expectDelete: true,
      deletedAtMs: 1000, // the original 1 s deadline is kept
    },
  ];
  for (const item of cases) {
    test(item.description, async (t) => {
      const { w, ctl } = newWorld(t);
      w.putNode('node1', taintsFor(w, [1])); // controller.taintedNodes
      await w.settle();
      w.putPod('pod1', item.prev.nodeName, item.prev.tolerations);
      await w.settle();
      if (item.awaitForScheduledEviction) {
        assert.equal(w.writes.length, 0);
        assert.ok(ctl.view().some((p) => p.pod === `${NS}/pod1` && p.state === 'scheduled'), 'a scheduled eviction (GetWorkerUnsafe != nil)');
      }
      w.putPod('pod1', item.next.nodeName, item.next.tolerations);
      await verifyPodActions(w, item.expectPatch, item.expectDelete);
      if (item.deletedAtMs !== undefined) assert.deepEqual(deleteTimes(w, 'pod1'), [item.deletedAtMs]);
      if (item.description === 'removing toleration') {
        // processPodOnNode: cancelWorkWithEvent (a timed worker existed), then AddWork now.
        assert.deepEqual(w.messages(), [`Cancelling deletion of Pod ${NS}/pod1`, `Marking for deletion Pod ${NS}/pod1`]);
      }
    });
  }
});

describe('TestCreateNode', () => {
  const cases: { description: string; tolerations: Toleration[]; nodeTaints: number[]; expectPatch: boolean; expectDelete: boolean }[] = [
    { description: 'Creating Node matching already assigned Pod', tolerations: [], nodeTaints: [], expectPatch: false, expectDelete: false },
    { description: 'Creating tainted Node matching already assigned Pod', tolerations: [], nodeTaints: [1], expectPatch: true, expectDelete: true },
    {
      description: 'Creating tainted Node matching already assigned tolerating Pod',
      tolerations: addToleration(1, -1),
      nodeTaints: [1],
      expectPatch: false,
      expectDelete: false,
    },
  ];
  for (const item of cases) {
    test(item.description, async (t) => {
      const { w } = newWorld(t);
      w.putPod('pod1', 'node1', item.tolerations);
      await w.settle();
      w.putNode('node1', taintsFor(w, item.nodeTaints)); // nodeIndexer.Add + NodeUpdated(nil, node)
      await verifyPodActions(w, item.expectPatch, item.expectDelete);
      if (item.expectDelete) assert.deepEqual(deleteTimes(w, 'pod1'), [0]);
      else {
        await w.settle(7 * 24 * 3_600_000);
        assert.deepEqual(w.writes, [], 'never, not only within upstream\'s window');
      }
    });
  }
});

describe('TestDeleteNode', () => {
  test('the deleted node leaves taintedNodes: a pod bound to it afterwards is judged on no taints', async (t) => {
    const { w, ctl } = newWorld(t);
    w.putNode('node1', taintsFor(w, [1])); // controller.taintedNodes = {node1: [taint1]}
    await w.settle();
    w.deleteNode('node1'); // controller.NodeUpdated(testutil.NewNode("node1"), nil)
    await w.settle();
    // upstream polls until taintedNodes has no node1; our map is private, so we observe its effect.
    w.putPod('pod1', 'node1');
    await w.settle(UPSTREAM_POLL_MS);
    assert.deepEqual(w.writes, []);
    assert.deepEqual(ctl.view(), []);
  });
});

describe('TestUpdateNode', () => {
  const cases: {
    description: string;
    tolerations: Toleration[];
    oldTaints: number[];
    newTaints: number[];
    expectPatch: boolean;
    expectDelete: boolean;
    additionalSleepMs?: number;
    /** Our exact delete time (ms after the update); upstream only says "within its 5 s poll". */
    deletedAtMs?: number;
  }[] = [
    { description: 'Added taint, expect node patched and deleted', tolerations: [], oldTaints: [], newTaints: [1], expectPatch: true, expectDelete: true, deletedAtMs: 0 },
    { description: 'Added tolerated taint', tolerations: addToleration(1, 100), oldTaints: [], newTaints: [1], expectPatch: false, expectDelete: false },
    {
      description: 'Only one added taint tolerated',
      tolerations: addToleration(1, 100),
      oldTaints: [],
      newTaints: [1, 2],
      expectPatch: true,
      expectDelete: true,
      deletedAtMs: 0,
    },
    {
      description: 'Taint removed',
      tolerations: addToleration(1, 1),
      oldTaints: [1],
      newTaints: [],
      expectPatch: false,
      expectDelete: false,
      additionalSleepMs: 1500,
    },
    {
      description: 'Pod with multiple tolerations are evicted when first one runs out',
      tolerations: [
        { key: 'testTaint1', value: 'test1', effect: 'NoExecute', tolerationSeconds: 1 },
        { key: 'testTaint2', value: 'test2', effect: 'NoExecute', tolerationSeconds: 100 },
      ],
      oldTaints: [],
      newTaints: [1, 2],
      expectPatch: true,
      expectDelete: true,
      deletedAtMs: 1000,
    },
  ];
  for (const item of cases) {
    test(item.description, async (t) => {
      const { w, ctl } = newWorld(t);
      // Upstream never handled oldNode (its controller starts with an empty taintedNodes). We do let
      // the shell see oldNode first, which makes "Taint removed" stronger: a 1 s deletion is pending
      // when the taint goes, and must be cancelled.
      w.putNode('node1', taintsFor(w, item.oldTaints));
      w.putPod('pod1', 'node1', item.tolerations);
      await w.settle();
      if (item.description === 'Taint removed') assert.equal(ctl.view().length, 1, 'the 1 s deletion is pending before the taint goes');
      w.putNode('node1', taintsFor(w, item.newTaints)); // controller.NodeUpdated(oldNode, newNode)
      await w.settle(item.additionalSleepMs ?? 0);
      await verifyPodActions(w, item.expectPatch, item.expectDelete);
      if (item.deletedAtMs !== undefined) assert.deepEqual(deleteTimes(w, 'pod1'), [item.deletedAtMs]);
      if (item.description === 'Taint removed') assert.deepEqual(w.messages(), [`Cancelling deletion of Pod ${NS}/pod1`]);
      if (item.description === 'Added tolerated taint') {
        await w.settle(100_000 - UPSTREAM_POLL_MS);
        assert.deepEqual(deleteTimes(w, 'pod1'), [100_000], 'beyond upstream\'s window: when the 100 s run out (upstream too)');
      }
    });
  }
});

describe('TestUpdateNodeWithMultipleTaints', () => {
  test('infinitely tolerated taint ↔ temporarily tolerated taint: queued and dequeued, never deleted', async (t) => {
    const { w, ctl } = newWorld(t);
    const taint1 = createNoExecuteTaint(w, 1);
    const taint2 = createNoExecuteTaint(w, 2);
    const tolerations: Toleration[] = [
      { key: taint1.key, operator: 'Exists', effect: 'NoExecute' },
      { key: taint2.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ];
    w.putPod('pod1', 'node1', tolerations);
    const queued = (): boolean => ctl.view().some((p) => p.pod === `${NS}/pod1`);

    w.putNode('node1', []); // no taint
    await w.settle();
    assert.equal(queued(), false, 'pod queued for deletion with no taints');

    w.putNode('node1', [taint1]); // no taint -> infinitely tolerated taint
    await w.settle();
    assert.equal(queued(), false, 'pod queued for deletion with permanently tolerated taint');

    w.putNode('node1', [taint1, taint2]); // infinitely tolerated taint -> temporarily tolerated taint
    await w.settle();
    assert.equal(queued(), true, 'pod not queued for deletion after addition of temporarily tolerated taint');

    w.putNode('node1', [taint1]); // temporarily tolerated taint -> infinitely tolerated taint
    await w.settle();
    assert.equal(queued(), false, 'pod queued for deletion after removal of temporarily tolerated taint');

    await w.settle(7 * 24 * 3_600_000);
    assert.equal(podActions(w).deleted, false, 'Unexpected deletion');
  });
});

describe('TestUpdateNodeWithMultiplePods', () => {
  const cases: { description: string; newTaints: number[]; expectedDeleteTimes: { names: string[]; timestampMs: number }[] }[] = [
    {
      description: 'Pods with different toleration times are evicted appropriately',
      newTaints: [1],
      expectedDeleteTimes: [
        { names: ['pod1'], timestampMs: 0 },
        { names: ['pod2'], timestampMs: 1000 },
      ],
    },
    {
      description: 'Evict all pods not matching all taints instantly',
      newTaints: [1, 2],
      expectedDeleteTimes: [{ names: ['pod1', 'pod2', 'pod3'], timestampMs: 0 }],
    },
  ];
  for (const item of cases) {
    test(item.description, async (t) => {
      const { w } = newWorld(t);
      w.putNode('node1', []); // oldNode
      w.putPod('pod1', 'node1');
      w.putPod('pod2', 'node1', addToleration(1, 1));
      w.putPod('pod3', 'node1', addToleration(1, -1));
      await w.settle();
      w.putNode('node1', taintsFor(w, item.newTaints));
      // Upstream sleeps to each expected time plus a margin and checks exactly which pods were
      // deleted by then; with the FakeClock the times are exact.
      await w.settle(7 * 24 * 3_600_000);
      const got = new Map<number, string[]>();
      for (const x of w.writes.filter((x) => x.kind === 'delete')) {
        const at = x.atMs - START;
        got.set(at, [...(got.get(at) ?? []), x.target.split('/')[1] as string].sort());
      }
      assert.deepEqual(
        [...got.entries()].map(([timestampMs, names]) => ({ names, timestampMs })),
        item.expectedDeleteTimes,
        'every pod deleted at its time, and no other pod deleted (pod3 tolerates taint 1 forever)',
      );
    });
  }
});

describe('TestGetMinTolerationTime', () => {
  // Upstream returns a time.Duration (-1 = forever); ours returns milliseconds or 'forever'.
  const cases: { tolerations: Toleration[]; expected: number | typeof FOREVER }[] = [
    { tolerations: [], expected: 0 },
    { tolerations: [{}], expected: FOREVER },
    { tolerations: [{ tolerationSeconds: 1 }, { tolerationSeconds: 2 }], expected: 1000 },
    { tolerations: [{ tolerationSeconds: 1 }, {}], expected: 1000 },
    { tolerations: [{}, { tolerationSeconds: 1 }], expected: 1000 },
  ];
  cases.forEach((c, i) => {
    test(`case ${i + 1}: ${JSON.stringify(c.tolerations)} → ${c.expected}`, () => {
      assert.equal(getMinTolerationTimeMs(c.tolerations), c.expected);
    });
  });
});

describe('TestEventualConsistency', () => {
  const cases: {
    description: string;
    prevPod: { tolerations: Toleration[] } | undefined;
    newPod: { tolerations: Toleration[] };
    /** pod2's toleration, s (none: untolerated). Upstream sleeps 20 ms and asserts nothing about pod2. */
    pod2TolerationS?: number;
  }[] = [
    { description: 'existing pod2 scheduled onto tainted Node', prevPod: { tolerations: [] }, newPod: { tolerations: [] } },
    {
      description: 'existing pod2 with taint toleration scheduled onto tainted Node',
      prevPod: { tolerations: addToleration(1, 100) },
      newPod: { tolerations: addToleration(1, 100) },
      pod2TolerationS: 100,
    },
    { description: 'new pod2 created on tainted Node', prevPod: undefined, newPod: { tolerations: [] } },
    { description: 'new pod2 with tait toleration created on tainted Node', prevPod: undefined, newPod: { tolerations: addToleration(1, 100) }, pod2TolerationS: 100 },
  ];
  for (const item of cases) {
    test(item.description, async (t) => {
      const { w } = newWorld(t);
      w.putNode('node1', []); // oldNode
      w.putPod('pod1', 'node1');
      if (item.prevPod) w.putPod('pod2', '', item.prevPod.tolerations);
      await w.settle();
      // First the NodeUpdate that should delete pod1; it does not know about pod2 on node1 yet.
      w.putNode('node1', taintsFor(w, [1]));
      await verifyPodActions(w, true, true);
      assert.deepEqual(w.deletedPods(), [`${NS}/pod1`]);
      // And now the delayed update of pod2 arrives (after upstream's 5 s poll). "We should delete it
      // as well." pod2 carries what the API server gives a pod at that moment: an existing pod is
      // bound (PodScheduled=True now), a new one is created now. Our deadline counts from the later
      // of the taint's timeAdded and the pod's binding (difference 1), so it equals upstream's
      // "when the controller handles pod2" here.
      const boundAtMs = w.clock.now();
      const fields = item.prevPod
        ? { conditions: [{ type: 'Ready', status: 'True' as const }, { type: 'PodScheduled', status: 'True' as const, lastTransitionTime: boundAtMs }] }
        : { creationTimestamp: boundAtMs };
      w.putPod('pod2', 'node1', item.newPod.tolerations, undefined, fields);
      await w.settle(200_000);
      assert.deepEqual(deleteTimes(w, 'pod2'), [boundAtMs - START + (item.pod2TolerationS ?? 0) * 1000]);
    });
  }
});

describe('TestPodDeletionEvent', () => {
  test('emitPodDeletionEvent', () => {
    assert.deepEqual(podDeletionEvent('test', 'test'), {
      type: 'Normal',
      reason: 'TaintManagerEviction',
      message: 'Marking for deletion Pod test/test',
      involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: 'test', name: 'test' },
    });
  });
  test('emitCancelPodDeletionEvent', () => {
    assert.deepEqual(cancelPodDeletionEvent('test', 'test'), {
      type: 'Normal',
      reason: 'TaintManagerEviction',
      message: 'Cancelling deletion of Pod test/test',
      involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: 'test', name: 'test' },
    });
  });
});
