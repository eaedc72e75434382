/**
 * The NoExecute fence (src/nodelifecycle/fence.ts, `fencedTaintSwap` in taints.ts): while the
 * all-zones stop is on, no taint write adds a NoExecute taint, even one already in flight when the
 * stop began. A refused addition is dropped and explained; the node is decided again once the stop
 * ends. Driven on the real controller shell over the in-memory world
 * (test/support/nodelifecycle-world.ts), whose recording writer holds a taint write mid-flight.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiException } from '@kubernetes/client-node';
import type { KubeClients } from '../../src/kube/client.js';
import type { WriteScheduler } from '../../src/kube/throttle.js';
import { NodeLifecycleWriter } from '../../src/nodelifecycle/writer.js';
import { FakeClock } from '../../src/util/clock.js';
import type { Node, Taint } from '../../src/kube/objects.js';
import { TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE, taintExists } from '../../src/kube/taints.js';
import { applyTaintSwap, fencedTaintSwap, NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE } from '../../src/nodelifecycle/taints.js';
import { NOEXECUTE_FENCED_REASON } from '../../src/nodelifecycle/fence.js';
import { GRACE_MS, LEASE_RENEW_MS, started, World } from '../support/nodelifecycle-world.js';

const UNREACHABLE = `+${TAINT_NODE_UNREACHABLE}:NoExecute`;
const NOT_READY = `+${TAINT_NODE_NOT_READY}:NoExecute`;
const noExecute = (w: World, name: string): Taint[] => (w.nodes.get(name)?.taints ?? []).filter((t) => t.effect === 'NoExecute');

/**
 * Holds the first taint write to `node` that asks to add `adds` (e.g. `+…unreachable:NoExecute`),
 * until `release` is called. Every other taint write goes through at once.
 */
function holdFirstAdd(w: World, node: string, adds: string): { held: () => boolean; release: () => void } {
  let held = false;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  w.taintWriteGate = (name, asked) => {
    if (held || name !== node || !asked.split(' ').includes(adds)) return undefined;
    held = true;
    return gate;
  };
  return { held: () => held, release: () => release() };
}

/**
 * One zone, `a-n0` and `a-n1`, both Ready; the kubelets renew every 10 s. The stop begins when both
 * are not Ready (the only zone is then FullDisruption).
 */
async function twoNodes(t: TestContext): Promise<World> {
  const w = started(t, {}, (w) => {
    w.addNode('a-n0', 'a');
    w.addNode('a-n1', 'a');
  });
  await w.run(20_000, 500);
  return w;
}

/** Records, on every node update, a NoExecute taint seen while the all-zones stop is on. */
function watchStop(w: World): string[] {
  const seen: string[] = [];
  w.cluster.on('nodes', {
    update: (_o, n) => {
      if (!w.ctl.view().allZonesDisrupted) return;
      for (const t of n.taints) if (t.effect === 'NoExecute') seen.push(`${n.name} ${t.key} at ${new Date(w.clock.now()).toISOString()}`);
    },
  });
  return seen;
}

/** Kills `a-n1` and runs until the all-zones stop is on; returns when it began (epoch ms, to the step). */
async function startTheStop(w: World): Promise<number> {
  w.alive.delete('a-n1');
  for (let i = 0; i < 200 && !w.ctl.view().allZonesDisrupted; i++) await w.run(500, 500);
  assert.ok(w.ctl.view().allZonesDisrupted, 'the all-zones stop began');
  return w.clock.now();
}

describe('the NoExecute fence: no NoExecute taint is added while the all-zones stop is on', () => {
  test('a not-ready→unreachable swap held mid-flight, the stop begins, the swap is released: no unreachable taint during the stop; tainted after it', async (t) => {
    const w = await twoNodes(t);
    // a-n0's kubelet reports NotReady: the node is tainted not-ready:NoExecute.
    w.postReady('a-n0', 'False');
    await w.run(5000, 500);
    assert.deepEqual(noExecute(w, 'a-n0').map((x) => x.key), [TAINT_NODE_NOT_READY]);
    // Its kubelet then goes silent: after the grace period it is Unknown and the swap to
    // unreachable starts; the recording writer holds that swap before it reads the node.
    const swap = holdFirstAdd(w, 'a-n0', UNREACHABLE);
    w.alive.delete('a-n0');
    for (let i = 0; i < 200 && !swap.held(); i++) await w.run(500, 500);
    assert.ok(swap.held(), 'the swap to unreachable is in flight');
    assert.equal(w.ctl.view().allZonesDisrupted, false);
    const seen = watchStop(w);

    // a-n1 dies too: every zone is FullDisruption, the stop removes a-n0's not-ready taint.
    const stopAt = await startTheStop(w);
    assert.deepEqual(noExecute(w, 'a-n0'), [], "the stop removed a-n0's NoExecute taint");

    // The swap resumes during the stop.
    swap.release();
    await w.run(30_000, 500);
    assert.ok(w.ctl.view().allZonesDisrupted, 'still in the stop');
    assert.deepEqual(seen, [], 'no node carried a NoExecute taint during the stop');
    assert.deepEqual(noExecute(w, 'a-n0'), []);
    assert.deepEqual(w.noExecuteAdds().filter((x) => x.atMs >= stopAt), [], 'no NoExecute taint was added during the stop');
    const fenced = w.events.filter((e) => e.reason === NOEXECUTE_FENCED_REASON);
    assert.deepEqual(fenced.map((e) => [e.ref.name, e.type]), [['a-n0', 'Warning']], 'the refused taint is explained on the node');
    assert.match(fenced[0]?.message ?? '', /node\.kubernetes\.io\/unreachable:NoExecute.*all-zones stop/);

    // a-n1 comes back: the stop ends, and a-n0 (still silent) is decided again and tainted, once
    // its fresh grace period from the end of the stop has passed.
    w.alive.add('a-n1');
    w.renew('a-n1');
    w.postReady('a-n1', 'True');
    await w.run(5000, 500);
    assert.equal(w.ctl.view().allZonesDisrupted, false, 'the stop ended');
    await w.run(GRACE_MS + 3 * LEASE_RENEW_MS, 500);
    assert.deepEqual(noExecute(w, 'a-n0').map((x) => x.key), [TAINT_NODE_UNREACHABLE], 'a-n0 is tainted after the stop');
    assert.deepEqual(noExecute(w, 'a-n1'), []);
  });

  test('a NoExecute taint of the tainting pass held mid-flight (its token taken before the stop) is not added during the stop', async (t) => {
    const w = await twoNodes(t);
    // a-n0 goes silent: Unknown after the grace period, queued, and the pass takes its token; the
    // taint write is held before it reads the node.
    const add = holdFirstAdd(w, 'a-n0', UNREACHABLE);
    w.alive.delete('a-n0');
    for (let i = 0; i < 200 && !add.held(); i++) await w.run(500, 500);
    assert.ok(add.held(), 'the NoExecute taint write is in flight');
    assert.equal(w.ctl.view().allZonesDisrupted, false);
    const seen = watchStop(w);
    const stopAt = await startTheStop(w);

    add.release();
    await w.run(30_000, 500);
    assert.ok(w.ctl.view().allZonesDisrupted, 'still in the stop');
    assert.deepEqual(seen, [], 'no node carried a NoExecute taint during the stop');
    assert.deepEqual(w.noExecuteAdds().filter((x) => x.atMs >= stopAt), [], 'no NoExecute taint was added during the stop');
    assert.ok(w.events.some((e) => e.reason === NOEXECUTE_FENCED_REASON && e.ref.name === 'a-n0'));
    // The NoSchedule condition taints of the same write are not fenced: a-n0 carries unreachable:NoSchedule.
    assert.ok(w.nodes.get('a-n0')?.taints.some((x) => x.key === TAINT_NODE_UNREACHABLE && x.effect === 'NoSchedule'));
  });

  test('an unreachable→not-ready swap during the stop removes the old taint and does not add the new one', async (t) => {
    // The stop's own removal failed for a-n0 (here: held until after the swap), so the node still
    // carries unreachable when its kubelet reports NotReady during the stop. Removing is always
    // allowed; adding not-ready is not.
    const w = await twoNodes(t);
    w.alive.delete('a-n0');
    for (let i = 0; i < 200 && noExecute(w, 'a-n0').length === 0; i++) await w.run(500, 500);
    assert.deepEqual(noExecute(w, 'a-n0').map((x) => x.key), [TAINT_NODE_UNREACHABLE]);
    let releaseRemoval: () => void = () => undefined;
    const removalHeld = new Promise<void>((r) => (releaseRemoval = r));
    w.taintWriteGate = (name, asked) => (name === 'a-n0' && asked === `-${TAINT_NODE_UNREACHABLE}:NoExecute -${TAINT_NODE_NOT_READY}:NoExecute` ? removalHeld : undefined);
    const stopAt = await startTheStop(w);
    assert.deepEqual(noExecute(w, 'a-n0').map((x) => x.key), [TAINT_NODE_UNREACHABLE], 'the removal is held');
    w.taintWriteGate = undefined;
    // a-n0's kubelet reports NotReady (its heartbeat posts, its Lease still silent).
    w.postReady('a-n0', 'False');
    await w.run(5000, 500);
    assert.deepEqual(noExecute(w, 'a-n0'), [], 'the swap removed unreachable and did not add not-ready');
    assert.deepEqual(w.noExecuteAdds().filter((x) => x.atMs >= stopAt && x.detail.includes(NOT_READY)), []);
    releaseRemoval();
    await w.run(5000, 500);
    assert.deepEqual(noExecute(w, 'a-n0'), []);
    assert.ok(w.ctl.view().allZonesDisrupted);
  });
});

describe('the fence covers every path that adds a NoExecute taint', () => {
  const arbKey = fc.constantFrom(TAINT_NODE_UNREACHABLE, TAINT_NODE_NOT_READY, 'node.kubernetes.io/memory-pressure', 'example.com/x');
  const arbTaint: fc.Arbitrary<Taint> = fc.record(
    { key: arbKey, effect: fc.constantFrom('NoSchedule', 'PreferNoSchedule', 'NoExecute'), timeAdded: fc.integer({ min: 0, max: 1e6 }) },
    { requiredKeys: ['key', 'effect'] },
  );
  const arbList = fc.uniqueArray(arbTaint, { selector: (x) => `${x.key}\u0000${x.effect}`, maxLength: 6 });
  const arbAsk = fc.array(arbTaint, { maxLength: 4 });

  test('fencedTaintSwap (every writer applies it): fenced, no NoExecute taint appears that was not there; removals and other taints as applyTaintSwap; open, exactly applyTaintSwap', () => {
    fc.assert(
      fc.property(arbList, arbAsk, arbAsk, (current, toAdd, toRemove) => {
        const open = fencedTaintSwap(current, toAdd, toRemove, 2e6, false);
        assert.deepEqual(open, { next: applyTaintSwap(current, toAdd, toRemove, 2e6), refused: [] });
        const fenced = fencedTaintSwap(current, toAdd, toRemove, 2e6, true);
        const after = fenced.next ?? current;
        for (const x of after) if (x.effect === 'NoExecute') assert.ok(taintExists(current, x), `${x.key} added during the stop`);
        for (const x of toRemove) assert.equal(taintExists(after, x), false, 'every removal is still made');
        for (const x of toAdd) if (x.effect !== 'NoExecute' && !taintExists(toRemove, x)) assert.ok(taintExists(after, x), 'other additions are still made');
        assert.deepEqual(
          fenced.refused.map((x) => x.key),
          toAdd.filter((x) => x.effect === 'NoExecute' && !taintExists(current, x)).map((x) => x.key),
        );
      }),
    );
  });

  test('every interleaving of a NoExecute-adding write (plain taint, swap either way) with the start of the stop: nothing added during the stop', async () => {
    // The adding paths: the tainting pass (plain add: unreachable or not-ready on an untainted
    // node) and the instant swap (not-ready→unreachable, unreachable→not-ready). Each is held at
    // the writer and released before, at or after the stop's start (and its removal).
    type Path = 'add-unreachable' | 'add-not-ready' | 'swap-to-unreachable' | 'swap-to-not-ready';
    type Release = 'before-stop' | 'after-stop';
    const runs: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Path>('add-unreachable', 'add-not-ready', 'swap-to-unreachable', 'swap-to-not-ready'),
        fc.constantFrom<Release>('before-stop', 'after-stop'),
        fc.integer({ min: 0, max: 4 }),
        async (path, release, delaySteps) => {
          const w = new World();
          w.addNode('a-n0', 'a');
          w.addNode('a-n1', 'a');
          w.build().start();
          w.startKubelets();
          try {
            await w.run(20_000, 500);
            // Bring a-n0 to the state from which `path` adds its taint.
            if (path === 'swap-to-unreachable') {
              w.postReady('a-n0', 'False');
              await w.run(5000, 500);
            } else if (path === 'swap-to-not-ready') {
              w.alive.delete('a-n0');
              for (let i = 0; i < 200 && noExecute(w, 'a-n0').length === 0; i++) await w.run(500, 500);
            }
            const adds = path === 'add-not-ready' || path === 'swap-to-not-ready' ? NOT_READY : UNREACHABLE;
            const gate = holdFirstAdd(w, 'a-n0', adds);
            if (path === 'add-not-ready' || path === 'swap-to-not-ready') w.postReady('a-n0', 'False');
            else w.alive.delete('a-n0');
            for (let i = 0; i < 200 && !gate.held(); i++) await w.run(500, 500);
            assert.ok(gate.held(), `${path}: the write is in flight`);
            const seen = watchStop(w);
            if (release === 'before-stop') {
              await w.run(500 * delaySteps, 500);
              gate.release();
            }
            w.alive.delete('a-n1');
            let stopAt = Number.POSITIVE_INFINITY;
            for (let i = 0; i < 200 && !w.ctl.view().allZonesDisrupted; i++) {
              await w.run(500, 500);
              if (w.ctl.view().allZonesDisrupted) stopAt = w.clock.now();
            }
            assert.ok(w.ctl.view().allZonesDisrupted, 'the stop began');
            if (release === 'after-stop') {
              await w.run(500 * delaySteps, 500);
              gate.release();
            }
            await w.run(20_000, 500);
            assert.ok(w.ctl.view().allZonesDisrupted);
            assert.deepEqual(seen, [], `${path}/${release}/${delaySteps}: no NoExecute taint on a node during the stop`);
            assert.deepEqual(w.noExecuteAdds().filter((x) => x.atMs >= stopAt), []);
            runs.push(`${path}/${release}`);
          } finally {
            w.ctl.stop();
          }
        },
      ),
      // Every path × release point once (delay 0), then random delays.
      {
        numRuns: 8,
        examples: (['add-unreachable', 'add-not-ready', 'swap-to-unreachable', 'swap-to-not-ready'] as const).flatMap((p) =>
          (['before-stop', 'after-stop'] as const).map((r): [Path, Release, number] => [p, r, 0]),
        ),
      },
    );
    assert.equal(new Set(runs).size, 8, 'every path and release point was run');
  });
});

describe('NodeLifecycleWriter.swapNodeTaints reads the fence right before each patch', () => {
  const wireNode = (taints: Taint[], rv: string): object => ({
    metadata: { name: 'n1', uid: 'uid-n1', resourceVersion: rv, creationTimestamp: new Date(0) },
    spec: { taints: taints.map((x) => ({ key: x.key, effect: x.effect, ...(x.timeAdded !== undefined ? { timeAdded: new Date(x.timeAdded) } : {}) })) },
    status: { conditions: [{ type: 'Ready', status: 'Unknown' }] },
  });
  const cached = (taints: Taint[], rv: string): Node => ({
    name: 'n1',
    uid: 'uid-n1',
    resourceVersion: rv,
    creationTimestamp: 0,
    labels: {},
    unschedulable: false,
    taints,
    conditions: [{ type: 'Ready', status: 'Unknown' }],
  });
  const notReady: Taint = { ...NOT_READY_TAINT_TEMPLATE, timeAdded: 1000 };

  test('the stop begins while the first patch conflicts: the retry, from a fresh GET, adds nothing', async () => {
    const clock = new FakeClock(1_000_000);
    let stop = false;
    const patches: { taints: { key: string; effect: string }[] }[] = [];
    const core = {
      patchNode: async ({ body }: { body: { spec: { taints: { key: string; effect: string }[] } } }) => {
        patches.push({ taints: body.spec.taints });
        if (patches.length === 1) {
          // Meanwhile every zone went FullDisruption and the stop removed the node's taints.
          stop = true;
          throw new ApiException(409, 'Conflict', JSON.stringify({ reason: 'Conflict' }), {});
        }
        return wireNode([], '9');
      },
      readNode: async () => wireNode([], '8'),
    };
    const writes: WriteScheduler = { schedule: (fn) => fn() };
    const writer = new NodeLifecycleWriter({ core } as unknown as KubeClients, writes, clock);
    const done = writer.swapNodeTaints('n1', [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], cached([notReady], '5'), { noExecuteFence: () => stop });
    for (let i = 0; i < 50 && patches.length < 2; i++) await clock.advanceAsync(100);
    const r = await done;
    assert.equal(patches.length, 1, 'no second patch: nothing is left to write once the addition is refused');
    assert.deepEqual(patches[0]?.taints.map((x) => x.key), [TAINT_NODE_UNREACHABLE], 'the first attempt (stop off) asked for the swap');
    assert.equal(r, 'fenced');
  });

  test('the stop is on at the first attempt: the opposite taint is removed, the new one not added', async () => {
    const patches: { key: string; effect: string }[][] = [];
    const core = {
      patchNode: async ({ body }: { body: { spec: { taints: { key: string; effect: string }[] } } }) => {
        patches.push(body.spec.taints);
        return wireNode([], '6');
      },
    };
    const writer = new NodeLifecycleWriter({ core } as unknown as KubeClients, { schedule: (fn) => fn() }, new FakeClock(1_000_000));
    const r = await writer.swapNodeTaints('n1', [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], cached([notReady], '5'), { noExecuteFence: () => true });
    assert.equal(r, 'fenced');
    assert.deepEqual(patches, [[]]);
  });

  describe('issue 29: the throttle order of node writes', () => {
    test('a taint swap goes at node priority unless it asks for another; the NoSchedule pass asks for noschedule-taint', async () => {
      const core = { patchNode: async () => wireNode([], '6') };
      const priorities: (string | undefined)[] = [];
      const writes: WriteScheduler = { schedule: (fn, priority) => (priorities.push(priority), fn()) };
      const writer = new NodeLifecycleWriter({ core } as unknown as KubeClients, writes, new FakeClock(1_000_000));
      await writer.swapNodeTaints('n1', [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], cached([notReady], '5'));
      await writer.swapNodeTaints('n2', [UNREACHABLE_TAINT_TEMPLATE], [], cached([notReady], '5'), { conditionTaints: true, priority: 'noschedule-taint' });
      assert.deepEqual(priorities, ['node', 'noschedule-taint']);
    });
  });
});
