/**
 * The simulated kubelet's eviction manager (packages/sim/src/evictionmanager.ts) on a FakeClock.
 *
 * Ported from k8s.io/kubernetes v1.37.2 pkg/kubelet/eviction/eviction_manager_test.go, with
 * upstream's names, running the same SimEvictionManager the simulator uses with upstream's
 * summaries (`summaryProvider`) and GC mocks (`nodeReclaim`):
 *   TestMemoryPressure_VerifyPodStatus, TestPIDPressure_VerifyPodStatus, TestMemoryPressure (without its
 *   Admit checks), TestPIDPressure, TestMinReclaim, TestNodeReclaimFuncs (cases "eviction due to disk
 *   pressure; no image fs", "eviction due to image disk pressure; image fs"), TestStaticCriticalPodsAreNotEvicted.
 * Skipped, and why:
 *   TestAdmitUnderNodeConditions and the Admit checks inside TestMemoryPressure — pod admission is the
 *     scheduler-facing side of the kubelet, which the simulator does not run (pods are bound by the API).
 *   TestDiskPressureNodeFs_VerifyPodStatus, TestDiskPressureNodeFs, TestInodePressureFsInodes — their disk
 *     ranking is ported through helpers_test.go (TestOrderedByPriorityDisk, TestOrderedbyInodes) and the node-level
 *     reclaim flow through TestNodeReclaimFuncs; the remaining steps repeat TestMemoryPressure's.
 *   TestNodeReclaimFuncs split-filesystem cases — need KubeletSeparateDiskGC layouts the simulator does not model.
 *   TestStorageLimitEvictions, TestEmptyDirLimitEviction, TestManagerWithLocalStorageCapacityIsolationOpen,
 *     TestContainerEphemeralStorageLimitEvictionForRestartableInitContainers — local ephemeral-storage
 *     limit eviction (LocalStorageCapacityIsolation), not node pressure; not in issue 20.
 *   TestAllocatableMemoryPressure — allocatableMemory.available needs the `pods` cgroup stats the simulator does not make.
 *   TestUpdateMemcgThreshold and memory_threshold_notifier_test.go — cgroup v1 memcg notifier internals.
 * Plus the simulator's own behaviour: usage profiles and faults, pace, transition period, Events.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { parseQuantity } from '../../src/kube/quantity.js';
import type { PodStats, PressureConditionType, Summary } from '../../src/kubelet/signals.js';
import { evictionConfigFromFlags, type EvictionConfig, type Threshold } from '../../src/kubelet/thresholds.js';
import type { NodeReclaimAction } from '@node-lifecycle-controller/sim/nodepressure/manager';
import {
  SimEvictionManager, parseFaults, parseUsageProfile, type EvictedStatus, type KubeletPort,
} from '@node-lifecycle-controller/sim/evictionmanager';
import {
  defaultPriority, highPriority, lowPriority, newContainer, newPod, newPodDiskStats, newPodMemoryStats, newPodProcessStats, newResourceList,
} from '../support/nodepressure.js';

const qv = (q: string): number => Math.ceil(parseQuantity(q));
const MIN = 60_000;

/** A recording kubelet: conditions posted, Events, kills (instant, like upstream's mockPodKiller). */
class FakePort implements KubeletPort {
  pods: V1Pod[] = [];
  conditions: PressureConditionType[] = [];
  posts = 0;
  events: { pod?: string; reason: string; message: string }[] = [];
  kills: { pod: V1Pod; grace: number; status: EvictedStatus; atMs: number }[] = [];
  constructor(readonly clock: FakeClock, readonly removeKilled = false) {}
  activePods(): Promise<V1Pod[]> {
    return Promise.resolve([...this.pods]);
  }
  setPressureConditions(c: readonly PressureConditionType[]): Promise<void> {
    this.conditions = [...c];
    this.posts++;
    return Promise.resolve();
  }
  recordEvent(pod: V1Pod | undefined, _t: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    this.events.push({ ...(pod ? { pod: pod.metadata?.name ?? '' } : {}), reason, message });
    return Promise.resolve();
  }
  killPod(pod: V1Pod, grace: number, status: EvictedStatus): Promise<void> {
    this.kills.push({ pod, grace, status, atMs: this.clock.now() });
    if (this.removeKilled) this.pods = this.pods.filter((p) => p !== pod);
    return Promise.resolve();
  }
  get killed(): string | undefined {
    return this.kills.at(-1)?.pod.metadata?.name;
  }
}

function makeMemoryStats(nodeAvailable: string, pods: PodStats[]): Summary {
  const b = qv(nodeAvailable);
  return { node: { nodeName: 'test', memory: { availableBytes: b, workingSetBytes: b }, systemContainers: [{ name: 'pods', memory: { availableBytes: b, workingSetBytes: b } }] }, pods };
}
function makePIDStats(maxPid: string, running: string, pods: PodStats[]): Summary {
  return { node: { nodeName: 'test', rlimit: { maxpid: qv(maxPid), curproc: qv(running) } }, pods };
}
function makeDiskStats(rootFs: string, imageFs: string, pods: PodStats[]): Summary {
  const fs = (a: string) => ({ availableBytes: qv(a), capacityBytes: qv(a) * 2 });
  return { node: { nodeName: 'test', fs: fs(rootFs), runtime: { imageFs: fs(imageFs), containerFs: fs(imageFs) } }, pods };
}

const memThreshold = (q: string, graceMs = 0, minReclaim?: string): Threshold => ({
  signal: 'memory.available', operator: 'LessThan', value: { quantity: qv(q) }, gracePeriodMs: graceMs,
  ...(minReclaim ? { minReclaim: { quantity: qv(minReclaim) } } : {}),
});

interface Harness { clock: FakeClock; port: FakePort; manager: SimEvictionManager; set(s: Summary): void; pressure(t: PressureConditionType): boolean }
function harness(config: EvictionConfig, pods: V1Pod[], initial: Summary, extra: Partial<ConstructorParameters<typeof SimEvictionManager>[0]> = {}): Harness {
  const clock = new FakeClock();
  const port = new FakePort(clock);
  port.pods = pods;
  let summary = initial;
  const manager = new SimEvictionManager({ nodeName: 'test', config, clock, port, summaryProvider: () => summary, ...extra });
  return { clock, port, manager, set: (s) => { summary = s; }, pressure: (t) => manager.conditions().includes(t) };
}

/** The five pods of TestMemoryPressure / TestMinReclaim, with their working sets. */
function memoryPods(): { pods: V1Pod[]; stats: PodStats[] } {
  const make: [string, number, Record<string, string>, Record<string, string>, string][] = [
    ['guaranteed-low-priority-high-usage', lowPriority, newResourceList('100m', '1Gi', ''), newResourceList('100m', '1Gi', ''), '900Mi'],
    ['burstable-below-requests', defaultPriority, newResourceList('100m', '100Mi', ''), newResourceList('200m', '1Gi', ''), '50Mi'],
    ['burstable-above-requests', defaultPriority, newResourceList('100m', '100Mi', ''), newResourceList('200m', '1Gi', ''), '400Mi'],
    ['best-effort-high-priority-high-usage', highPriority, {}, {}, '400Mi'],
    ['best-effort-low-priority-low-usage', lowPriority, {}, {}, '100Mi'],
  ];
  const pods = make.map(([n, p, r, l]) => newPod(n, p, [newContainer(n, r, l)]));
  return { pods, stats: pods.map((pod, i) => newPodMemoryStats(pod, (make[i] as [string, number, unknown, unknown, string])[4])) };
}

const cfg = (thresholds: Threshold[], maxPodGracePeriodSeconds = 5): EvictionConfig => ({ thresholds, pressureTransitionPeriodMs: 5 * MIN, maxPodGracePeriodSeconds });

test('TestMemoryPressure_VerifyPodStatus', async () => {
  const below = newPod('below-requests', 0, [newContainer('below-requests', newResourceList('', '1Gi', ''), newResourceList('', '1Gi', ''))]);
  const above = newPod('above-requests', 0, [newContainer('above-requests', newResourceList('', '100Mi', ''), newResourceList('', '1Gi', ''))]);
  const h = harness(cfg([memThreshold('2Gi')], 0), [below, above], makeMemoryStats('1500Mi', [newPodMemoryStats(below, '900Mi'), newPodMemoryStats(above, '700Mi')]));
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'), 'Manager should have detected memory pressure');
  const msg = 'The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. ';
  assert.deepEqual(h.port.kills[0]?.status, { phase: 'Failed', reason: 'Evicted', message: msg, condition: { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: msg } });
  assert.deepEqual(h.port.events.find((e) => e.reason === 'Evicted'), { pod: 'above-requests', reason: 'Evicted', message: msg });
});

test('TestPIDPressure_VerifyPodStatus', async () => {
  const pod = newPod('pod', 0, [newContainer('pod', {}, {})]);
  const t: Threshold = { signal: 'pid.available', operator: 'LessThan', value: { quantity: 1200 }, gracePeriodMs: 0 };
  const h = harness(cfg([t], 0), [pod], makePIDStats('1500', '1000', [newPodProcessStats(pod, 500)]));
  await h.manager.synchronize();
  assert.ok(h.pressure('PIDPressure'));
  assert.equal(h.port.kills[0]?.status.message, 'The node was low on resource: pids. Threshold quantity: 1200, available: 500. ');
});

test('TestMemoryPressure', async () => {
  const { pods, stats } = memoryPods();
  const podToEvict = 'best-effort-low-priority-low-usage';
  const h = harness(cfg([memThreshold('1Gi'), memThreshold('2Gi', 2 * MIN)]), pods, makeMemoryStats('2Gi', stats));
  await h.manager.synchronize();
  assert.ok(!h.pressure('MemoryPressure'), 'Manager should not report memory pressure');
  // induce soft threshold
  h.clock.advance(MIN);
  h.set(makeMemoryStats('1500Mi', stats));
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'), 'Manager should report memory pressure since soft threshold was met');
  assert.equal(h.port.kills.length, 0, 'Manager should not have killed a pod yet');
  // step forward in time past the grace period
  h.clock.advance(3 * MIN);
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'));
  assert.equal(h.port.killed, podToEvict);
  assert.equal(h.port.kills.at(-1)?.grace, 5, 'soft eviction: min(max-pod-grace-period, pod grace)');
  // remove memory pressure
  h.clock.advance(20 * MIN);
  h.set(makeMemoryStats('3Gi', stats));
  h.port.kills = [];
  await h.manager.synchronize();
  assert.ok(!h.pressure('MemoryPressure'), 'Manager should not report memory pressure');
  // induce memory pressure (hard)
  h.clock.advance(MIN);
  h.set(makeMemoryStats('500Mi', stats));
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'));
  assert.equal(h.port.killed, podToEvict);
  assert.equal(h.port.kills.at(-1)?.grace, 1, 'hard eviction: immediateEvictionGracePeriodSeconds');
  // reduce memory pressure: the condition holds for the transition period, nobody is killed
  h.clock.advance(MIN);
  h.set(makeMemoryStats('2Gi', stats));
  h.port.kills = [];
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'), 'Manager should report memory pressure');
  assert.equal(h.port.kills.length, 0, 'no pod should have been killed');
  // move the clock past the transition period
  h.clock.advance(5 * MIN);
  await h.manager.synchronize();
  assert.ok(!h.pressure('MemoryPressure'), 'Manager should not report memory pressure');
  assert.equal(h.port.kills.length, 0);
});

test('TestPIDPressure', async () => {
  const make: [string, number, number][] = [
    ['high-priority-high-usage', highPriority, 900], ['default-priority-low-usage', defaultPriority, 100], ['default-priority-medium-usage', defaultPriority, 400],
    ['low-priority-high-usage', lowPriority, 600], ['low-priority-low-usage', lowPriority, 50],
  ];
  const pods = make.map(([n, p]) => newPod(n, p, [newContainer(n, {}, {})]));
  const stats = pods.map((pod, i) => newPodProcessStats(pod, (make[i] as [string, number, number])[2]));
  const t = (q: number, g = 0): Threshold => ({ signal: 'pid.available', operator: 'LessThan', value: { quantity: q }, gracePeriodMs: g });
  const h = harness(cfg([t(1200), t(1500, 2 * MIN)]), pods, makePIDStats('2000', '300', stats));
  await h.manager.synchronize();
  assert.ok(!h.pressure('PIDPressure'));
  h.clock.advance(MIN);
  h.set(makePIDStats('2000', '700', stats));
  await h.manager.synchronize();
  assert.ok(h.pressure('PIDPressure'), 'soft threshold met: condition at once');
  assert.equal(h.port.kills.length, 0);
  h.clock.advance(3 * MIN);
  await h.manager.synchronize();
  assert.equal(h.port.killed, 'low-priority-high-usage', 'PID ranking: priority, then processes');
  assert.equal(h.port.kills.at(-1)?.grace, 5);
  h.clock.advance(20 * MIN);
  h.set(makePIDStats('2000', '300', stats));
  h.port.kills = [];
  await h.manager.synchronize();
  assert.ok(!h.pressure('PIDPressure'));
  h.clock.advance(MIN);
  h.set(makePIDStats('2000', '1200', stats));
  await h.manager.synchronize();
  assert.equal(h.port.killed, 'low-priority-high-usage');
  assert.equal(h.port.kills.at(-1)?.grace, 1);
  h.clock.advance(MIN);
  h.set(makePIDStats('2000', '300', stats));
  h.port.kills = [];
  await h.manager.synchronize();
  assert.ok(h.pressure('PIDPressure'), 'transition period holds the condition');
  h.clock.advance(5 * MIN);
  await h.manager.synchronize();
  assert.ok(!h.pressure('PIDPressure'));
  assert.equal(h.port.kills.length, 0);
});

test('TestMinReclaim', async () => {
  const { pods, stats } = memoryPods();
  const h = harness(cfg([memThreshold('1Gi', 0, '500Mi')]), pods, makeMemoryStats('2Gi', stats));
  await h.manager.synchronize();
  assert.ok(!h.pressure('MemoryPressure'));
  h.clock.advance(MIN);
  h.set(makeMemoryStats('500Mi', stats));
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'));
  assert.equal(h.port.killed, 'best-effort-low-priority-low-usage');
  assert.equal(h.port.kills.at(-1)?.grace, 1);
  // 1.2Gi is above the threshold but below threshold + min reclaim: still evicting
  h.clock.advance(MIN);
  h.set(makeMemoryStats('1.2Gi', stats));
  h.port.kills = [];
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'));
  assert.equal(h.port.killed, 'best-effort-low-priority-low-usage');
  // min reclaim reached
  h.clock.advance(MIN);
  h.set(makeMemoryStats('2Gi', stats));
  h.port.kills = [];
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'));
  assert.equal(h.port.kills.length, 0);
  h.clock.advance(5 * MIN);
  await h.manager.synchronize();
  assert.ok(!h.pressure('MemoryPressure'));
  assert.equal(h.port.kills.length, 0);
});

describe('TestNodeReclaimFuncs', () => {
  const cases: [string, boolean, 'nodefs' | 'imagefs', NodeReclaimAction[]][] = [
    ['eviction due to disk pressure; no image fs', false, 'nodefs', ['deleteAllUnusedContainers', 'deleteUnusedImages']],
    ['eviction due to image disk pressure; image fs', true, 'imagefs', ['deleteAllUnusedContainers', 'deleteUnusedImages']],
  ];
  for (const [name, dedicatedImageFs, fs, wantActions] of cases) {
    test(name, async () => {
      const make: [string, number, Record<string, string>, Record<string, string>, string, string, string][] = [
        ['low-priority-high-usage', lowPriority, newResourceList('100m', '1Gi', ''), newResourceList('100m', '1Gi', ''), '900Mi', '', ''],
        ['below-requests', defaultPriority, newResourceList('100m', '100Mi', ''), newResourceList('200m', '1Gi', ''), '', '50Mi', ''],
        ['above-requests', defaultPriority, newResourceList('100m', '100Mi', ''), newResourceList('200m', '1Gi', ''), '400Mi', '', ''],
        ['high-priority-high-usage', highPriority, {}, {}, '', '', '400Mi'],
        ['low-priority-low-usage', lowPriority, {}, {}, '100Mi', '', ''],
      ];
      const pods = make.map(([n, p, r, l]) => newPod(n, p, [newContainer(n, r, l)]));
      const stats = pods.map((pod, i) => { const m = make[i] as (typeof make)[number]; return newPodDiskStats(pod, m[4] || '0', m[5] || '0', m[6] || '0'); });
      const signal = fs === 'nodefs' ? 'nodefs.available' : 'imagefs.available';
      const t: Threshold = { signal, operator: 'LessThan', value: { quantity: qv('1Gi') }, gracePeriodMs: 0, minReclaim: { quantity: qv('500Mi') } };
      const at = (pressure: string): Summary => makeDiskStats(fs === 'nodefs' ? pressure : '16Gi', fs === 'imagefs' ? pressure : '16Gi', stats);
      let afterGc: Summary | undefined;
      const gcCalls: NodeReclaimAction[][] = [];
      const h = harness(cfg([t]), pods, at('16Gi'), {
        layout: { dedicatedImageFs, splitContainerImageFs: false },
        nodeReclaim: (a) => { gcCalls.push([...a]); if (afterGc) h.set(afterGc); },
      });
      await h.manager.synchronize();
      assert.ok(!h.pressure('DiskPressure'));
      // induce hard pressure; GC frees enough: no pod killed
      h.clock.advance(MIN);
      h.set(at('750Mi'));
      afterGc = at('16Gi');
      await h.manager.synchronize();
      assert.ok(h.pressure('DiskPressure'));
      assert.deepEqual(gcCalls, [wantActions]);
      assert.equal(h.port.kills.length, 0, 'node-level reclaim was enough');
      // clear; then pressure again where GC only reaches the threshold, not threshold + min reclaim: evict
      h.clock.advance(20 * MIN);
      h.set(at('16Gi'));
      afterGc = undefined;
      await h.manager.synchronize();
      assert.ok(!h.pressure('DiskPressure'));
      h.clock.advance(MIN);
      h.set(at('750Mi'));
      afterGc = at('1.1G');
      gcCalls.length = 0;
      await h.manager.synchronize();
      assert.ok(h.pressure('DiskPressure'));
      assert.deepEqual(gcCalls, [wantActions]);
      assert.equal(h.port.killed, 'low-priority-high-usage');
      assert.equal(h.port.kills.at(-1)?.grace, 1);
      // pressure gone: GC is not run, nobody is killed, the condition clears after the transition period
      h.clock.advance(MIN);
      h.set(at('16Gi'));
      afterGc = undefined;
      gcCalls.length = 0;
      h.port.kills = [];
      await h.manager.synchronize();
      assert.ok(h.pressure('DiskPressure'));
      assert.deepEqual(gcCalls, [], 'Manager chose to perform image gc when it was not needed');
      h.clock.advance(5 * MIN);
      await h.manager.synchronize();
      assert.ok(!h.pressure('DiskPressure'));
      assert.equal(h.port.kills.length, 0);
    });
  }
});

test('TestStaticCriticalPodsAreNotEvicted', async () => {
  const critical = newPod('critical', 2_000_000_000, [newContainer('critical', newResourceList('100m', '1Gi', ''), newResourceList('100m', '1Gi', ''))]);
  const stat = newPodMemoryStats(critical, '800Mi');
  const h = harness(cfg([memThreshold('1Gi')]), [critical], makeMemoryStats('500Mi', [stat]));
  await h.manager.synchronize();
  assert.ok(h.pressure('MemoryPressure'));
  assert.equal(h.port.kills.length, 0, 'a critical pod is never evicted');
  // a static pod (config.source != api) is critical whatever its priority
  const staticPod = newPod('static', 0, [newContainer('static', {}, {})]);
  staticPod.metadata = { ...staticPod.metadata, annotations: { 'kubernetes.io/config.source': 'file' } };
  h.port.pods = [staticPod];
  h.set(makeMemoryStats('500Mi', [newPodMemoryStats(staticPod, '800Mi')]));
  h.clock.advance(MIN);
  await h.manager.synchronize();
  assert.equal(h.port.kills.length, 0);
});

describe('simulated kubelet: profiles, faults, pace, transition period', () => {
  const resources = { memoryCapacityBytes: qv('4Gi'), systemWorkingSetBytes: qv('512Mi') };
  const pod = (name: string, req: Record<string, string>, lim: Record<string, string>, ann: Record<string, string> = {}): V1Pod => {
    const p = newPod(name, 0, [newContainer('app', req, lim)], [], 'ns');
    p.metadata = { ...p.metadata, annotations: ann };
    return p;
  };
  const run = async (clock: FakeClock, ms: number) => { for (let t = 0; t < ms; t += 1000) await clock.advanceAsync(1000); };

  test('a memory leak in a BestEffort pod: MemoryPressure, then that pod alone is evicted (Failed/Evicted, Event), then the condition clears after the transition period', async () => {
    const clock = new FakeClock();
    const port = new FakePort(clock, true);
    const be = pod('best-effort', {}, {}, { 'nlc.sim/fault': 'memory-leak=100Mi' });
    const bu = pod('burstable', { memory: '256Mi' }, { memory: '1Gi' }, { 'nlc.sim/usage': 'memory=200Mi' });
    const gu = pod('guaranteed', { cpu: '100m', memory: '1Gi' }, { cpu: '100m', memory: '1Gi' }, { 'nlc.sim/usage': 'memory=90%' });
    port.pods = [gu, bu, be];
    const config = evictionConfigFromFlags({ 'eviction-hard': 'memory.available<1Gi', 'eviction-pressure-transition-period': '30s' });
    const m = new SimEvictionManager({ nodeName: 'n', config, clock, port, resources });
    m.start();
    // available = 4Gi - 512Mi - (16Mi + 200Mi + ~922Mi) ≈ 2.4Gi; the leak takes ~14 s to cross 1Gi.
    await run(clock, 10_000);
    assert.deepEqual(port.conditions, []);
    await run(clock, 20_000);
    assert.deepEqual(port.conditions, ['MemoryPressure']);
    assert.equal(port.kills.length, 1);
    assert.equal(port.kills[0]?.pod.metadata?.name, 'best-effort');
    assert.equal(port.kills[0]?.grace, 1);
    assert.match(port.kills[0]?.status.message ?? '', /^The node was low on resource: memory\. Threshold quantity: 1Gi, available: \d+(Ki|Mi)?\. Container app was using \d+(Ki|Mi)?, request is 0, has larger consumption of memory\. $/);
    assert.ok(port.events.some((e) => e.reason === 'Evicted' && e.pod === 'best-effort'));
    assert.ok(port.events.some((e) => e.reason === 'EvictionThresholdMet' && e.message === 'Attempting to reclaim memory'));
    // memory is back; the condition holds 30 s after it was last seen, then clears; nobody else goes
    await run(clock, 60_000);
    assert.deepEqual(port.conditions, []);
    assert.equal(port.kills.length, 1);
    m.stop();
    await clock.advanceAsync(10_000);
  });

  test('pace: at most one pod per 10 s stats refresh, however far below the threshold', async () => {
    const clock = new FakeClock();
    const port = new FakePort(clock, true);
    port.pods = ['a', 'b', 'c'].map((n) => pod(n, {}, {}, { 'nlc.sim/usage': 'memory=1200Mi' }));
    const config = evictionConfigFromFlags({ 'eviction-hard': 'memory.available<3Gi' });
    const m = new SimEvictionManager({ nodeName: 'n', config, clock, port, resources });
    m.start();
    await run(clock, 1000);
    assert.equal(port.kills.length, 1, 'first eviction at the first synchronize');
    await run(clock, 8000);
    assert.equal(port.kills.length, 1, 'no second eviction on the same stats');
    await run(clock, 2000);
    assert.equal(port.kills.length, 2);
    const gaps = port.kills.slice(1).map((k, i) => k.atMs - (port.kills[i] as { atMs: number }).atMs);
    for (const g of gaps) assert.ok(g >= 10_000, `gap ${g} ms`);
    m.stop();
    await clock.advanceAsync(10_000);
  });

  test('a log flood causes DiskPressure; node-level reclaim (container and image GC) comes first', async () => {
    const clock = new FakeClock();
    const port = new FakePort(clock, true);
    port.pods = [pod('flood', {}, {}, { 'nlc.sim/fault': 'log-flood=1Gi' }), pod('quiet', {}, {})];
    const config = evictionConfigFromFlags({ 'eviction-hard': 'nodefs.available<10%' });
    const m = new SimEvictionManager({ nodeName: 'n', config, clock, port, resources: { nodefsCapacityBytes: qv('40Gi'), systemNodefsBytes: qv('10Gi'), unusedImageBytes: qv('2Gi'), deadContainerBytes: qv('1Gi') } });
    m.start();
    // 40Gi - 13Gi used leaves 27Gi; 10% = 4Gi; the flood crosses it after ~23 s
    await run(clock, 40_000);
    const first = m.lastResult();
    assert.ok(port.conditions.includes('DiskPressure'));
    assert.equal(port.kills[0]?.pod.metadata?.name, 'flood', 'the flooding pod is evicted once GC is not enough');
    assert.ok(first);
    m.stop();
    await clock.advanceAsync(10_000);
  });

  test('a fork bomb causes PIDPressure and its pod is evicted first', async () => {
    const clock = new FakeClock();
    const port = new FakePort(clock, true);
    port.pods = [pod('bomb', {}, {}, { 'nlc.sim/fault': 'fork-bomb=1000' }), pod('quiet', {}, {}, { 'nlc.sim/usage': 'pids=50' })];
    const config = evictionConfigFromFlags({ 'eviction-hard': 'pid.available<10%' });
    const m = new SimEvictionManager({ nodeName: 'n', config, clock, port, resources: { maxPid: 32_768, systemProcesses: 400 } });
    m.start();
    await run(clock, 40_000);
    assert.ok(port.conditions.includes('PIDPressure'));
    assert.equal(port.kills[0]?.pod.metadata?.name, 'bomb');
    m.stop();
    await clock.advanceAsync(10_000);
  });

  test('soft threshold: waits the grace period; kills with min(max-pod-grace-period, the pod\'s own)', async () => {
    const clock = new FakeClock();
    const port = new FakePort(clock, true);
    const p = pod('big', {}, {}, { 'nlc.sim/usage': 'memory=2Gi' });
    p.spec = { ...p.spec, containers: p.spec?.containers ?? [], terminationGracePeriodSeconds: 7 };
    port.pods = [p];
    const config = evictionConfigFromFlags({
      'eviction-hard': 'memory.available<100Mi', 'eviction-soft': 'memory.available<2Gi', 'eviction-soft-grace-period': 'memory.available=1m', 'eviction-max-pod-grace-period': '30',
    });
    const m = new SimEvictionManager({ nodeName: 'n', config, clock, port, resources });
    m.start();
    await run(clock, 50_000);
    assert.deepEqual(port.conditions, ['MemoryPressure'], 'the condition does not wait for the grace period');
    assert.equal(port.kills.length, 0);
    await run(clock, 20_000);
    assert.equal(port.kills.length, 1);
    assert.equal(port.kills[0]?.grace, 7);
    m.stop();
    await clock.advanceAsync(10_000);
  });

  test('profiles and faults parse; bad ones name the item', () => {
    const p = pod('x', { memory: '1Gi' }, {});
    assert.deepEqual(parseUsageProfile('memory=50%,pids=20', p), { workingSetBytes: qv('512Mi'), pids: 20 });
    assert.deepEqual([...parseFaults('memory-leak=20Mi,fork-bomb=10/s')], [['memory-leak', qv('20Mi')], ['fork-bomb', 10]]);
    assert.throws(() => parseUsageProfile('cpu=1', p), /cpu=1/);
    assert.throws(() => parseFaults('leak=1Mi'), /leak=1Mi/);
  });
});

test('fault commands: memory-leak, log-flood, fork-bomb, usage', async () => {
  const { parseSimCommand, CommandSyntaxError } = await import('@node-lifecycle-controller/sim/commands');
  assert.deepEqual(parseSimCommand('memory-leak web-1 50Mi'), { op: 'usage-fault', pod: 'web-1', kind: 'memory-leak', ratePerSecond: qv('50Mi') });
  assert.deepEqual(parseSimCommand('fork-bomb web-1 100/s'), { op: 'usage-fault', pod: 'web-1', kind: 'fork-bomb', ratePerSecond: 100 });
  assert.deepEqual(parseSimCommand('log-flood web-1 0'), { op: 'usage-fault', pod: 'web-1', kind: 'log-flood', ratePerSecond: 0 });
  assert.deepEqual(parseSimCommand('usage web-1 memory=150%'), { op: 'usage', pod: 'web-1', profile: 'memory=150%' });
  assert.throws(() => parseSimCommand('memory-leak web-1'), CommandSyntaxError);
  assert.throws(() => parseSimCommand('memory-leak web-1 lots'), CommandSyntaxError);
});
