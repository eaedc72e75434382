import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Node, NodeCondition, Taint } from '../../src/kube/objects.js';
import {
  CONDITION_TAINT_KEYS,
  NOT_READY_TAINT_TEMPLATE,
  UNREACHABLE_TAINT_TEMPLATE,
  addOrUpdateTaint,
  applyTaintSwap,
  conditionTaintDiff,
  desiredConditionTaints,
  isConditionTaint,
  removeTaints,
} from '../../src/nodelifecycle/taints.js';
import {
  TAINT_NODE_DISK_PRESSURE,
  TAINT_NODE_MEMORY_PRESSURE,
  TAINT_NODE_NETWORK_UNAVAILABLE,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_OUT_OF_SERVICE,
  TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_UNSCHEDULABLE,
  taintExists,
  taintKeyExists,
  taintMatches,
} from '../../src/kube/taints.js';

const NOW = Date.UTC(2015, 0, 1, 12);

function makeNode(conditions: NodeCondition[], taints: Taint[] = [], unschedulable = false): Node {
  return {
    name: 'node0',
    uid: 'uid-0',
    resourceVersion: '1',
    creationTimestamp: Date.UTC(2012, 0, 1),
    labels: {},
    unschedulable,
    taints,
    conditions,
  };
}

function cond(type: string, status: string): NodeCondition {
  return { type, status, lastHeartbeatTime: NOW, lastTransitionTime: NOW };
}

/** Runs doNoScheduleTaintingPass on a node and returns the node with its new taints. */
function noScheduleTaintingPass(node: Node, nowMs: number): Node {
  const { toAdd, toRemove } = conditionTaintDiff(node);
  if (toAdd.length === 0 && toRemove.length === 0) return node;
  const taints = applyTaintSwap(node.taints, toAdd, toRemove, nowMs);
  return taints === undefined ? node : { ...node, taints };
}

const keysOf = (taints: readonly Taint[]): string[] => taints.map((t) => `${t.key}:${t.effect}`);

describe('well-known keys and templates', () => {
  test('the NoSchedule pass owns exactly the condition keys plus unschedulable', () => {
    assert.deepEqual(
      [...CONDITION_TAINT_KEYS].sort(),
      [
        TAINT_NODE_DISK_PRESSURE,
        TAINT_NODE_MEMORY_PRESSURE,
        TAINT_NODE_NETWORK_UNAVAILABLE,
        TAINT_NODE_NOT_READY,
        TAINT_NODE_PID_PRESSURE,
        TAINT_NODE_UNREACHABLE,
        TAINT_NODE_UNSCHEDULABLE,
      ],
    );
    assert.equal(CONDITION_TAINT_KEYS.has(TAINT_NODE_OUT_OF_SERVICE), false);
  });

  test('taint keys match upstream v1 well_known_taints.go', () => {
    assert.deepEqual(
      [
        TAINT_NODE_NOT_READY,
        TAINT_NODE_UNREACHABLE,
        TAINT_NODE_UNSCHEDULABLE,
        TAINT_NODE_MEMORY_PRESSURE,
        TAINT_NODE_DISK_PRESSURE,
        TAINT_NODE_PID_PRESSURE,
        TAINT_NODE_NETWORK_UNAVAILABLE,
        TAINT_NODE_OUT_OF_SERVICE,
      ],
      [
        'node.kubernetes.io/not-ready',
        'node.kubernetes.io/unreachable',
        'node.kubernetes.io/unschedulable',
        'node.kubernetes.io/memory-pressure',
        'node.kubernetes.io/disk-pressure',
        'node.kubernetes.io/pid-pressure',
        'node.kubernetes.io/network-unavailable',
        'node.kubernetes.io/out-of-service',
      ],
    );
  });

  test('NoExecute templates carry no value and no timeAdded, and are frozen', () => {
    assert.deepEqual({ ...UNREACHABLE_TAINT_TEMPLATE }, { key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' });
    assert.deepEqual({ ...NOT_READY_TAINT_TEMPLATE }, { key: TAINT_NODE_NOT_READY, effect: 'NoExecute' });
    assert.ok(Object.isFrozen(UNREACHABLE_TAINT_TEMPLATE));
    assert.ok(Object.isFrozen(NOT_READY_TAINT_TEMPLATE));
  });
});

describe('taint matching', () => {
  test('taintExists matches key and effect and ignores value and timeAdded', () => {
    const list: Taint[] = [{ key: 'k', value: 'v1', effect: 'NoSchedule', timeAdded: 5 }];
    assert.equal(taintExists(list, { key: 'k', effect: 'NoSchedule' }), true);
    assert.equal(taintExists(list, { key: 'k', value: 'other', effect: 'NoSchedule' }), true);
    assert.equal(taintExists(list, { key: 'k', effect: 'NoExecute' }), false);
    assert.equal(taintExists(list, { key: 'x', effect: 'NoSchedule' }), false);
  });

  test('taintKeyExists matches the key whatever the effect', () => {
    const list: Taint[] = [{ key: TAINT_NODE_OUT_OF_SERVICE, value: 'nodeshutdown', effect: 'NoExecute' }];
    assert.equal(taintKeyExists(list, TAINT_NODE_OUT_OF_SERVICE), true);
    assert.equal(taintKeyExists(list, TAINT_NODE_UNREACHABLE), false);
  });
});

describe('desiredConditionTaints (doNoScheduleTaintingPass §2.5 table)', () => {
  const table: { type: string; status: string; key: string | undefined }[] = [
    { type: 'Ready', status: 'False', key: TAINT_NODE_NOT_READY },
    { type: 'Ready', status: 'Unknown', key: TAINT_NODE_UNREACHABLE },
    { type: 'Ready', status: 'True', key: undefined },
    { type: 'MemoryPressure', status: 'True', key: TAINT_NODE_MEMORY_PRESSURE },
    { type: 'MemoryPressure', status: 'Unknown', key: undefined },
    { type: 'DiskPressure', status: 'True', key: TAINT_NODE_DISK_PRESSURE },
    { type: 'DiskPressure', status: 'False', key: undefined },
    { type: 'NetworkUnavailable', status: 'True', key: TAINT_NODE_NETWORK_UNAVAILABLE },
    { type: 'PIDPressure', status: 'True', key: TAINT_NODE_PID_PRESSURE },
    { type: 'PIDPressure', status: 'Unknown', key: undefined },
    { type: 'SomeVendorCondition', status: 'True', key: undefined },
  ];
  for (const row of table) {
    test(`${row.type}=${row.status} → ${row.key ?? 'no taint'}`, () => {
      const got = desiredConditionTaints(makeNode([cond(row.type, row.status)]));
      assert.deepEqual(got, row.key === undefined ? [] : [{ key: row.key, effect: 'NoSchedule' }]);
    });
  }

  test('taints follow condition order, then unschedulable last', () => {
    const node = makeNode([cond('PIDPressure', 'True'), cond('Ready', 'False'), cond('DiskPressure', 'True')], [], true);
    assert.deepEqual(keysOf(desiredConditionTaints(node)), [
      `${TAINT_NODE_PID_PRESSURE}:NoSchedule`,
      `${TAINT_NODE_NOT_READY}:NoSchedule`,
      `${TAINT_NODE_DISK_PRESSURE}:NoSchedule`,
      `${TAINT_NODE_UNSCHEDULABLE}:NoSchedule`,
    ]);
  });
});

describe('TestTaintsNodeByCondition', () => {
  // Upstream applies the cases one after another to the same node; so do we, carrying taints over.
  const cases: { name: string; conditions: NodeCondition[]; expected: string[] }[] = [
    {
      name: 'NetworkUnavailable is true',
      conditions: [cond('Ready', 'True'), cond('NetworkUnavailable', 'True')],
      expected: [`${TAINT_NODE_NETWORK_UNAVAILABLE}:NoSchedule`],
    },
    {
      name: 'NetworkUnavailable is true',
      conditions: [cond('Ready', 'True'), cond('NetworkUnavailable', 'True')],
      expected: [`${TAINT_NODE_NETWORK_UNAVAILABLE}:NoSchedule`],
    },
    { name: 'Ready is false', conditions: [cond('Ready', 'False')], expected: [`${TAINT_NODE_NOT_READY}:NoSchedule`] },
    { name: 'Ready is unknown', conditions: [cond('Ready', 'Unknown')], expected: [`${TAINT_NODE_UNREACHABLE}:NoSchedule`] },
  ];

  test('each case leaves exactly the expected NoSchedule taints', () => {
    let node = makeNode([]);
    let now = NOW;
    for (const c of cases) {
      now += 1000;
      node = noScheduleTaintingPass({ ...node, conditions: c.conditions }, now);
      assert.deepEqual(keysOf(node.taints), c.expected, c.name);
      assert.ok(node.taints.every((t) => t.value === undefined && t.timeAdded !== undefined), c.name);
    }
  });

  test('the repeated case changes nothing (no patch, timeAdded kept)', () => {
    const first = noScheduleTaintingPass(makeNode(cases[0]!.conditions), NOW);
    const again = conditionTaintDiff(first);
    assert.deepEqual(again, { toAdd: [], toRemove: [] });
    assert.equal(applyTaintSwap(first.taints, again.toAdd, again.toRemove, NOW + 5000), undefined);
  });
});

describe('conditionTaintDiff', () => {
  test('only NoSchedule taints with controller keys are removal candidates', () => {
    const foreign: Taint[] = [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: TAINT_NODE_NOT_READY, effect: 'NoExecute', timeAdded: NOW },
      { key: TAINT_NODE_UNREACHABLE, effect: 'PreferNoSchedule' },
      { key: TAINT_NODE_OUT_OF_SERVICE, value: 'nodeshutdown', effect: 'NoSchedule' },
    ];
    const stale: Taint = { key: TAINT_NODE_MEMORY_PRESSURE, effect: 'NoSchedule', timeAdded: NOW - 1000 };
    const node = makeNode([cond('Ready', 'True')], [...foreign, stale]);
    assert.deepEqual(conditionTaintDiff(node), { toAdd: [], toRemove: [stale] });
    assert.ok(foreign.every((t) => !isConditionTaint(t)));
  });

  test('unschedulable is added for a cordoned node and removed on uncordon', () => {
    const cordoned = noScheduleTaintingPass(makeNode([cond('Ready', 'True')], [], true), NOW);
    assert.deepEqual(keysOf(cordoned.taints), [`${TAINT_NODE_UNSCHEDULABLE}:NoSchedule`]);
    const uncordoned = noScheduleTaintingPass({ ...cordoned, unschedulable: false }, NOW + 1);
    assert.deepEqual(uncordoned.taints, []);
  });

  test('an existing condition taint with a value still counts as present (match by key and effect)', () => {
    const withValue: Taint = { key: TAINT_NODE_NOT_READY, value: 'x', effect: 'NoSchedule' };
    assert.deepEqual(conditionTaintDiff(makeNode([cond('Ready', 'False')], [withValue])), { toAdd: [], toRemove: [] });
  });
});

describe('applyTaintSwap (SwapNodeControllerTaint)', () => {
  test('stamps timeAdded=now on added taints, including NoSchedule ones', () => {
    const got = applyTaintSwap([], [{ key: TAINT_NODE_NOT_READY, effect: 'NoSchedule' }], [], NOW);
    assert.deepEqual(got, [{ key: TAINT_NODE_NOT_READY, effect: 'NoSchedule', timeAdded: NOW }]);
  });

  test('re-adding an existing controller taint refreshes timeAdded in place', () => {
    const current: Taint[] = [
      { key: 'a', effect: 'NoSchedule' },
      { ...UNREACHABLE_TAINT_TEMPLATE, timeAdded: NOW - 60_000 },
      { key: 'b', effect: 'NoExecute' },
    ];
    const got = applyTaintSwap(current, [UNREACHABLE_TAINT_TEMPLATE], [], NOW);
    assert.deepEqual(got, [current[0], { ...UNREACHABLE_TAINT_TEMPLATE, timeAdded: NOW }, current[2]]);
  });

  test('re-adding an identical taint (same timeAdded) is a no-op', () => {
    const current: Taint[] = [{ ...UNREACHABLE_TAINT_TEMPLATE, timeAdded: NOW }];
    assert.equal(applyTaintSwap(current, [UNREACHABLE_TAINT_TEMPLATE], [], NOW), undefined);
  });

  test('removes by key and effect, ignoring value; absent removals change nothing', () => {
    const current: Taint[] = [{ key: TAINT_NODE_NOT_READY, value: 'v', effect: 'NoExecute', timeAdded: 1 }];
    assert.deepEqual(applyTaintSwap(current, [], [NOT_READY_TAINT_TEMPLATE], NOW), []);
    assert.equal(applyTaintSwap(current, [], [UNREACHABLE_TAINT_TEMPLATE], NOW), undefined);
  });

  test('does not mutate its inputs', () => {
    const current: Taint[] = [{ key: TAINT_NODE_NOT_READY, effect: 'NoExecute', timeAdded: 1 }];
    const toAdd: Taint[] = [{ ...UNREACHABLE_TAINT_TEMPLATE }];
    const snapshot = structuredClone({ current, toAdd });
    applyTaintSwap(current, toAdd, [NOT_READY_TAINT_TEMPLATE], NOW);
    assert.deepEqual({ current, toAdd }, snapshot);
  });
});

describe('TestSwapUnreachableNotReadyTaints', () => {
  test('unreachable:NoExecute is swapped for not-ready:NoExecute in one step', () => {
    const tainted = applyTaintSwap([], [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], NOW);
    assert.deepEqual(tainted, [{ ...UNREACHABLE_TAINT_TEMPLATE, timeAdded: NOW }]);
    const swapped = applyTaintSwap(tainted, [NOT_READY_TAINT_TEMPLATE], [UNREACHABLE_TAINT_TEMPLATE], NOW + 5000);
    assert.deepEqual(swapped, [{ ...NOT_READY_TAINT_TEMPLATE, timeAdded: NOW + 5000 }]);
  });
});

describe('addOrUpdateTaint / removeTaints', () => {
  test('addOrUpdateTaint appends a new taint and returns undefined for an equal one', () => {
    const t: Taint = { key: 'k', effect: 'NoSchedule', value: 'v', timeAdded: 7 };
    const once = addOrUpdateTaint([], t);
    assert.deepEqual(once, [t]);
    assert.equal(addOrUpdateTaint(once!, { ...t }), undefined);
    // An absent value equals an empty value, as in Go.
    assert.equal(addOrUpdateTaint([{ key: 'k', effect: 'NoSchedule', value: '' }], { key: 'k', effect: 'NoSchedule' }), undefined);
  });

  test('removeTaints returns undefined when nothing matches', () => {
    assert.equal(removeTaints([{ key: 'k', effect: 'NoSchedule' }], [{ key: 'k', effect: 'NoExecute' }]), undefined);
  });
});

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

const controllerKeys = [...CONDITION_TAINT_KEYS];
const arbKey = fc.constantFrom(...controllerKeys, TAINT_NODE_OUT_OF_SERVICE, 'dedicated', 'example.com/gpu');
const arbEffect = fc.constantFrom('NoSchedule', 'PreferNoSchedule', 'NoExecute');
const arbTaint: fc.Arbitrary<Taint> = fc.record(
  {
    key: arbKey,
    effect: arbEffect,
    value: fc.constantFrom('a', 'b'),
    timeAdded: fc.integer({ min: NOW - 1e6, max: NOW }),
  },
  { requiredKeys: ['key', 'effect'] },
);
// The API server rejects two taints with the same key and effect, so node taint lists are unique.
const arbTaintList = fc.uniqueArray(arbTaint, { selector: (t) => `${t.key}\u0000${t.effect}`, maxLength: 8 });
const arbCondition: fc.Arbitrary<NodeCondition> = fc.record({
  type: fc.constantFrom('Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable', 'Other'),
  status: fc.constantFrom('True', 'False', 'Unknown'),
});
const arbNode = fc
  .record({
    conditions: fc.array(arbCondition, { maxLength: 6 }),
    taints: arbTaintList,
    unschedulable: fc.boolean(),
  })
  .map(({ conditions, taints, unschedulable }) => makeNode(conditions, taints, unschedulable));

describe('properties', () => {
  test('applyTaintSwap never drops, changes or reorders foreign taints', () => {
    fc.assert(
      fc.property(arbTaintList, fc.array(arbTaint, { maxLength: 4 }), fc.array(arbTaint, { maxLength: 4 }), (current, toAdd, toRemove) => {
        const result = applyTaintSwap(current, toAdd, toRemove, NOW) ?? current;
        const touched = [...toAdd, ...toRemove];
        const foreign = (list: readonly Taint[]) => list.filter((t) => !touched.some((u) => taintMatches(t, u)));
        assert.deepEqual(foreign(result), foreign(current));
      }),
    );
  });

  test('applyTaintSwap result holds every added taint (unless removed) and no removed one', () => {
    fc.assert(
      fc.property(arbTaintList, fc.array(arbTaint, { maxLength: 4 }), fc.array(arbTaint, { maxLength: 4 }), (current, toAdd, toRemove) => {
        const result = applyTaintSwap(current, toAdd, toRemove, NOW) ?? current;
        for (const t of toRemove) assert.equal(taintExists(result, t), false);
        for (const t of toAdd) if (!taintExists(toRemove, t)) assert.equal(taintExists(result, t), true);
      }),
    );
  });

  test('the NoSchedule condition-taint diff applied once is a fixpoint', () => {
    fc.assert(
      fc.property(arbNode, fc.integer({ min: 0, max: 1e6 }), (node, dt) => {
        const once = noScheduleTaintingPass(node, NOW);
        assert.deepEqual(conditionTaintDiff(once), { toAdd: [], toRemove: [] });
        const { toAdd, toRemove } = conditionTaintDiff(once);
        assert.equal(applyTaintSwap(once.taints, toAdd, toRemove, NOW + dt), undefined);
        // Exactly the desired condition taints are present among the controller's own.
        const own = once.taints.filter(isConditionTaint);
        const desired = desiredConditionTaints(node);
        assert.ok(desired.every((t) => taintExists(own, t)));
        assert.ok(own.every((t) => taintExists(desired, t)));
      }),
    );
  });
});
