/**
 * The pure node-pressure core (src/kubelet, src/kube/quantity.ts and the workspace's nodepressure/manager.ts) against upstream's tests.
 *
 * Ported from k8s.io/kubernetes v1.37.2 pkg/kubelet/eviction/helpers_test.go, with upstream's test
 * and case names (the `describe` is the Go test, each `test` its case):
 *   TestGetReclaimableThreshold (3 cases), TestParseThresholdConfig (25), TestOrderedByExceedsRequestMemory,
 *   TestOrderedByExceedsRequestDisk, TestOrderedByPriority, TestOrderedbyDisk, TestOrderedbyInodes,
 *   TestOrderedByPriorityDisk, TestOrderedByPriorityInodes, TestOrderedByMemory, TestOrderedByPriorityMemory,
 *   TestOrderedByPriorityProcess, TestSortByEvictionPriority (3), TestMakeSignalObservations,
 *   TestThresholdsMet (5), TestThresholdsUpdatedStats (6), TestPercentageThresholdsMet (6),
 *   TestThresholdsFirstObservedAt (3), TestThresholdsMetGracePeriod (4), TestNodeConditions (2),
 *   TestNodeConditionsLastObservedAt (3), TestNodeConditionsObservedSince (2), TestHasNodeConditions (2),
 *   TestParsePercentage (4), TestCompareThresholdValue (5), TestStatsNotFoundForPod (cases by comparator),
 *   TestEvictionMessage (4 of its cases: the ones without pod-level resources or ephemeral containers).
 * Skipped, and why:
 *   TestAddAllocatableThresholds — ported as one case (the rule); its other cases repeat it with MinReclaim variants.
 *   TestFallbackResourcesUsage — Windows/cgroup fallback of container stats the simulator does not produce.
 *   TestAddContainerFsThresholds — its 16 cases cover every combination of split filesystems; ported as
 *     the three layouts (no imagefs, imagefs, split imagefs) with one hard nodefs/imagefs threshold each.
 *   TestEvictionMessage cases on pod-level resources (PodLevelResources gate) and ephemeral containers.
 * Plus the project's own rules: quantity parsing, flag and KubeletConfiguration names, default hard thresholds.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { formatBytes, parseQuantity } from '../../src/kube/quantity.js';
import { makeSignalObservations, type SignalObservations, type Summary } from '../../src/kubelet/signals.js';
import {
  DEFAULT_EVICTION_HARD, DEFAULT_PRESSURE_TRANSITION_PERIOD_MS, addAllocatableThresholds, compareThresholdValue, effectiveEvictionHard,
  evictionConfigFromFlags, evictionConfigFromKubeletConfiguration, getReclaimableThreshold, hasNodeCondition, nodeConditions,
  nodeConditionsLastObservedAt, nodeConditionsObservedSince, parsePercentage, parseThresholdConfig, sortByEvictionPriority,
  thresholdKey, thresholdsFirstObservedAt, thresholdsMet, thresholdsMetGracePeriod, thresholdsUpdatedStats, updateContainerFsThresholds,
  type Threshold,
} from '../../src/kubelet/thresholds.js';
import {
  disk, exceedDiskRequests, exceedMemoryRequests, memory, orderedBy, priority, process, rankPodsForEviction,
  type CmpFunc,
} from '../../src/kubelet/ranking.js';
import { evictionMessage } from '@node-lifecycle-controller/sim/nodepressure/manager';
import {
  defaultPriority, highPriority, localVolume, lowPriority, names, newContainer, newPod, newPodDiskStats, newPodInodeStats,
  newPodMemoryStats, newPodProcessStats, newResourceList, statsFnOf,
} from '../support/nodepressure.js';

const qp = parseQuantity;
const hard = (signal: Threshold['signal'], value: Threshold['value'], minReclaim?: Threshold['value']): Threshold =>
  ({ signal, operator: 'LessThan', value, gracePeriodMs: 0, ...(minReclaim ? { minReclaim } : {}) });
const soft = (signal: Threshold['signal'], value: Threshold['value'], gracePeriodMs: number, minReclaim?: Threshold['value']): Threshold =>
  ({ ...hard(signal, value, minReclaim), gracePeriodMs });
const keys = (ts: readonly Threshold[]): string[] => ts.map(thresholdKey).sort();
const pct = (p: number): number => Math.fround(p);

describe('TestGetReclaimableThreshold', () => {
  test('(unnamed case: allocatable and memory first)', () => {
    const ts = [
      hard('allocatableMemory.available', { quantity: qp('150Mi') }, { quantity: 0 }),
      hard('memory.available', { quantity: qp('150Mi') }, { quantity: 0 }),
      hard('imagefs.available', { quantity: qp('150Mi') }, { quantity: qp('2Gi') }),
      hard('nodefs.available', { quantity: qp('100Mi') }, { quantity: qp('1Gi') }),
      hard('containerfs.available', { quantity: qp('100Mi') }, { quantity: qp('1Gi') }),
    ];
    const got = getReclaimableThreshold(sortByEvictionPriority(ts));
    assert.ok(got);
    // Go's sort.Sort is unstable and upstream expects memory.available; both memory signals rank first and starve memory.
    assert.ok(got.threshold.signal === 'memory.available' || got.threshold.signal === 'allocatableMemory.available');
    assert.equal(got.resource, 'memory');
    assert.equal(got.threshold.value.quantity, qp('150Mi'));
  });
  test('no thresholds', () => assert.equal(getReclaimableThreshold([]), undefined));
  test('threshold was crossed but reclaim not implemented (invalid signal)', () => {
    assert.equal(getReclaimableThreshold([{ signal: 'mem.available' as Threshold['signal'], operator: 'LessThan', value: {}, gracePeriodMs: 0 }]), undefined);
  });
});

describe('TestParseThresholdConfig', () => {
  const ok = (name: string, alloc: string[], h: Record<string, string>, s: Record<string, string>, g: Record<string, string>, m: Record<string, string>, want: Threshold[]) =>
    test(name, () => assert.deepEqual(keys(parseThresholdConfig(alloc, h, s, g, m)), keys(want)));
  const bad = (name: string, h: Record<string, string>, s: Record<string, string>, g: Record<string, string>, m: Record<string, string>) =>
    test(name, () => assert.throws(() => parseThresholdConfig([], h, s, g, m)));
  ok('no values', [], {}, {}, {}, {}, []);
  ok('all memory eviction values', ['pods'], { 'memory.available': '150Mi' }, { 'memory.available': '300Mi' }, { 'memory.available': '30s' }, { 'memory.available': '0' }, [
    hard('allocatableMemory.available', { quantity: qp('150Mi') }, { quantity: 0 }),
    hard('memory.available', { quantity: qp('150Mi') }, { quantity: 0 }),
    soft('memory.available', { quantity: qp('300Mi') }, 30_000, { quantity: 0 }),
  ]);
  ok('all memory eviction values in percentages', [], { 'memory.available': '10%' }, { 'memory.available': '30%' }, { 'memory.available': '30s' }, { 'memory.available': '5%' }, [
    hard('memory.available', { percentage: pct(0.1) }, { percentage: pct(0.05) }),
    soft('memory.available', { percentage: pct(0.3) }, 30_000, { percentage: pct(0.05) }),
  ]);
  ok('disk eviction values', [], { 'imagefs.available': '150Mi', 'nodefs.available': '100Mi' }, { 'imagefs.available': '300Mi', 'nodefs.available': '200Mi' },
    { 'imagefs.available': '30s', 'nodefs.available': '30s' }, { 'imagefs.available': '2Gi', 'nodefs.available': '1Gi' }, [
      hard('imagefs.available', { quantity: qp('150Mi') }, { quantity: qp('2Gi') }),
      hard('nodefs.available', { quantity: qp('100Mi') }, { quantity: qp('1Gi') }),
      soft('imagefs.available', { quantity: qp('300Mi') }, 30_000, { quantity: qp('2Gi') }),
      soft('nodefs.available', { quantity: qp('200Mi') }, 30_000, { quantity: qp('1Gi') }),
    ]);
  ok('disk eviction values in percentages', [], { 'imagefs.available': '15%', 'nodefs.available': '10.5%' }, { 'imagefs.available': '30%', 'nodefs.available': '20.5%' },
    { 'imagefs.available': '30s', 'nodefs.available': '30s' }, { 'imagefs.available': '10%', 'nodefs.available': '5%' }, [
      hard('imagefs.available', { percentage: pct(0.15) }, { percentage: pct(0.1) }),
      hard('nodefs.available', { percentage: pct(0.105) }, { percentage: pct(0.05) }),
      soft('imagefs.available', { percentage: pct(0.3) }, 30_000, { percentage: pct(0.1) }),
      soft('nodefs.available', { percentage: pct(0.205) }, 30_000, { percentage: pct(0.05) }),
    ]);
  ok('inode eviction values', [], { 'imagefs.inodesFree': '150Mi', 'nodefs.inodesFree': '100Mi' }, { 'imagefs.inodesFree': '300Mi', 'nodefs.inodesFree': '200Mi' },
    { 'imagefs.inodesFree': '30s', 'nodefs.inodesFree': '30s' }, { 'imagefs.inodesFree': '2Gi', 'nodefs.inodesFree': '1Gi' }, [
      hard('imagefs.inodesFree', { quantity: qp('150Mi') }, { quantity: qp('2Gi') }),
      hard('nodefs.inodesFree', { quantity: qp('100Mi') }, { quantity: qp('1Gi') }),
      soft('imagefs.inodesFree', { quantity: qp('300Mi') }, 30_000, { quantity: qp('2Gi') }),
      soft('nodefs.inodesFree', { quantity: qp('200Mi') }, 30_000, { quantity: qp('1Gi') }),
    ]);
  ok('disable via 0%', [], { 'memory.available': '0%' }, { 'memory.available': '0%' }, {}, {}, []);
  ok('disable via 100%', [], { 'memory.available': '100%' }, { 'memory.available': '100%' }, {}, {}, []);
  bad('invalid-signal', { 'mem.available': '150Mi' }, {}, {}, {});
  bad('hard-signal-negative', { 'memory.available': '-150Mi' }, {}, {}, {});
  bad('hard-signal-negative-percentage', { 'memory.available': '-15%' }, {}, {}, {});
  bad('hard-signal-percentage-greater-than-100%', { 'memory.available': '150%' }, {}, {}, {});
  bad('soft-signal-negative', {}, { 'memory.available': '-150Mi' }, {}, {});
  bad('valid-and-invalid-signal', { 'memory.available': '150Mi', 'invalid.foo': '150Mi' }, {}, {}, {});
  bad('soft-no-grace-period', {}, { 'memory.available': '150Mi' }, {}, {});
  bad('soft-negative-grace-period', {}, { 'memory.available': '150Mi' }, { 'memory.available': '-30s' }, {});
  bad('negative-reclaim', {}, {}, {}, { 'memory.available': '-300Mi' });
  bad('min-reclaim-invalid-signal', {}, {}, {}, { 'mem.available': '300Mi' });
  bad('min-reclaim-empty-value', {}, {}, {}, { 'memory.available': '' });
  bad('min-reclaim-negative-percentage', {}, {}, {}, { 'memory.available': '-15%' });
  bad('min-reclaim-invalid-percentage', {}, {}, {}, { 'memory.available': '10..5%' });
  bad('hard-signal-empty-eviction-value', { 'memory.available': '' }, {}, {}, {});
  bad('hard-signal-invalid-float-percentage', { 'memory.available': '10..5%' }, {}, {}, {});
  bad('soft-grace-period-invalid-signal', {}, { 'memory.available': '150Mi' }, { 'mem.available': '30s' }, {});
  bad('soft-invalid-grace-period', {}, { 'memory.available': '150Mi' }, { 'memory.available': '30mins' }, {});
});

test('TestAddAllocatableThresholds (rule): a hard memory.available threshold gets an allocatableMemory.available twin; soft ones do not', () => {
  const h = hard('memory.available', { quantity: qp('100Mi') }, { quantity: qp('50Mi') });
  const s = soft('memory.available', { quantity: qp('200Mi') }, 60_000);
  assert.deepEqual(keys(addAllocatableThresholds([h, s])), keys([h, s, hard('allocatableMemory.available', { quantity: qp('100Mi') }, { quantity: qp('50Mi') })]));
});

describe('TestAddContainerFsThresholds (one case per filesystem layout)', () => {
  const nodefs = hard('nodefs.available', { percentage: pct(0.1) });
  const imagefs = hard('imagefs.available', { percentage: pct(0.15) });
  const containerHard = (ts: Threshold[]) => ts.find((t) => t.signal === 'containerfs.available' && t.gracePeriodMs === 0);
  test('no imagefs: containerfs copies nodefs', () => assert.deepEqual(containerHard(updateContainerFsThresholds([nodefs, imagefs], false, false).thresholds)?.value, nodefs.value));
  test('imagefs holds containers: containerfs copies imagefs', () => assert.deepEqual(containerHard(updateContainerFsThresholds([nodefs, imagefs], true, false).thresholds)?.value, imagefs.value));
  test('split imagefs: containerfs copies nodefs; a configured containerfs threshold is replaced and reported', () => {
    const r = updateContainerFsThresholds([nodefs, imagefs, hard('containerfs.available', { quantity: 1 })], true, true);
    assert.deepEqual(containerHard(r.thresholds)?.value, nodefs.value);
    // Upstream also appends a zero-valued twin for the missing soft nodefs threshold; it never meets.
    assert.equal(r.thresholds.filter((t) => t.signal === 'containerfs.available' && (t.value.quantity !== undefined || t.value.percentage !== undefined)).length, 1);
    assert.deepEqual(r.ignored, ['found containerfs.available for hard eviction. ignoring']);
  });
});

describe('ranking comparators', () => {
  test('TestOrderedByExceedsRequestMemory', () => {
    const below = newPod('below-requests', -1, [newContainer('below-requests', newResourceList('', '200Mi', ''), {})]);
    const exceeds = newPod('exceeds-requests', 1, [newContainer('exceeds-requests', newResourceList('', '100Mi', ''), {})]);
    const stats = statsFnOf([newPodMemoryStats(below, '199Mi'), newPodMemoryStats(exceeds, '101Mi')]);
    assert.deepEqual(names(orderedBy(exceedMemoryRequests(stats))([below, exceeds])), ['exceeds-requests', 'below-requests']);
  });
  test('TestOrderedByExceedsRequestDisk', () => {
    const below = newPod('below-requests', -1, [newContainer('below-requests', { 'ephemeral-storage': '200Mi' }, {})]);
    const exceeds = newPod('exceeds-requests', 1, [newContainer('exceeds-requests', { 'ephemeral-storage': '100Mi' }, {})]);
    const stats = statsFnOf([newPodDiskStats(below, '100Mi', '99Mi', '0Mi'), newPodDiskStats(exceeds, '90Mi', '11Mi', '0Mi')]);
    assert.deepEqual(names(orderedBy(exceedDiskRequests(stats, ['root', 'logs', 'localVolumeSource'], 'ephemeral-storage'))([below, exceeds])), ['exceeds-requests', 'below-requests']);
  });
  test('TestOrderedByPriority', () => {
    const low = newPod('low-priority', -134, [newContainer('low-priority', {}, {})]);
    const medium = newPod('medium-priority', 1, [newContainer('medium-priority', newResourceList('100m', '100Mi', ''), newResourceList('200m', '200Mi', ''))]);
    const high = newPod('high-priority', 12534, [newContainer('high-priority', newResourceList('200m', '200Mi', ''), newResourceList('200m', '200Mi', ''))]);
    assert.deepEqual(names(orderedBy(priority)([high, medium, low])), ['low-priority', 'medium-priority', 'high-priority']);
  });
  test('TestOrderedbyDisk', () => {
    const mk = (n: string, req: string, lim: string) => newPod(n, defaultPriority, [newContainer(n, newResourceList('', '', req), newResourceList('', '', lim))], [localVolume]);
    const p = [mk('best-effort-high', '', ''), mk('best-effort-low', '', ''), mk('burstable-high', '100Mi', '400Mi'), mk('burstable-low', '100Mi', '400Mi'), mk('guaranteed-high', '400Mi', '400Mi'), mk('guaranteed-low', '400Mi', '400Mi')] as [V1Pod, V1Pod, V1Pod, V1Pod, V1Pod, V1Pod];
    const stats = statsFnOf([
      newPodDiskStats(p[0], '50Mi', '100Mi', '150Mi'), newPodDiskStats(p[1], '25Mi', '25Mi', '50Mi'), newPodDiskStats(p[2], '150Mi', '150Mi', '50Mi'),
      newPodDiskStats(p[3], '25Mi', '35Mi', '50Mi'), newPodDiskStats(p[4], '225Mi', '100Mi', '50Mi'), newPodDiskStats(p[5], '25Mi', '45Mi', '50Mi'),
    ]);
    assert.deepEqual(names(orderedBy(disk(stats, ['root', 'logs', 'localVolumeSource'], 'ephemeral-storage'))(p)),
      ['best-effort-high', 'burstable-high', 'best-effort-low', 'burstable-low', 'guaranteed-high', 'guaranteed-low']);
  });
  test('TestOrderedbyInodes', () => {
    const mk = (n: string) => newPod(n, defaultPriority, [newContainer(n, {}, {})], [localVolume]);
    const [low, medium, high] = [mk('low'), mk('medium'), mk('high')];
    const stats = statsFnOf([newPodInodeStats(low, '50000', '100000', '50000'), newPodInodeStats(medium, '100000', '150000', '50000'), newPodInodeStats(high, '200000', '150000', '50000')]);
    assert.deepEqual(names(orderedBy(disk(stats, ['root', 'logs', 'localVolumeSource'], 'inodes'))([low, medium, high])), ['high', 'medium', 'low']);
  });
  test('TestOrderedByPriorityDisk', () => {
    const mk = (n: string, prio: number, req: string) => newPod(n, prio, [newContainer(n, newResourceList('', '', req), {})], [localVolume]);
    const p = [
      mk('above-requests-low-priority-high-usage', lowPriority, ''), mk('above-requests-low-priority-low-usage', lowPriority, ''),
      mk('above-requests-high-priority-high-usage', highPriority, '100Mi'), mk('above-requests-high-priority-low-usage', highPriority, '100Mi'),
      mk('below-requests-low-priority-high-usage', lowPriority, '1Gi'), mk('below-requests-low-priority-low-usage', lowPriority, '1Gi'),
      mk('below-requests-high-priority-high-usage', highPriority, '1Gi'), mk('below-requests-high-priority-low-usage', highPriority, '1Gi'),
    ] as V1Pod[];
    const use = [['200Mi', '100Mi', '200Mi'], ['10Mi', '10Mi', '30Mi'], ['200Mi', '150Mi', '250Mi'], ['90Mi', '50Mi', '10Mi'], ['500Mi', '200Mi', '100Mi'], ['50Mi', '100Mi', '50Mi'], ['250Mi', '500Mi', '50Mi'], ['100Mi', '60Mi', '40Mi']] as const;
    const stats = statsFnOf(p.map((pod, i) => newPodDiskStats(pod, ...(use[i] as readonly [string, string, string]))));
    const m = ['root', 'logs', 'localVolumeSource'] as const;
    const sorted = orderedBy(exceedDiskRequests(stats, m, 'ephemeral-storage'), priority, disk(stats, m, 'ephemeral-storage'))([...p].reverse());
    assert.deepEqual(names(sorted), names(p));
  });
  test('TestOrderedByPriorityInodes', () => {
    const mk = (n: string, prio: number) => newPod(n, prio, [newContainer(n, {}, {})], [localVolume]);
    const p = [mk('low-priority-high-usage', lowPriority), mk('low-priority-low-usage', lowPriority), mk('high-priority-high-usage', highPriority), mk('high-priority-low-usage', highPriority)] as [V1Pod, V1Pod, V1Pod, V1Pod];
    const stats = statsFnOf([newPodInodeStats(p[0], '50000', '100000', '250000'), newPodInodeStats(p[1], '60000', '30000', '10000'), newPodInodeStats(p[2], '150000', '150000', '50000'), newPodInodeStats(p[3], '10000', '40000', '100000')]);
    assert.deepEqual(names(orderedBy(priority, disk(stats, ['root', 'logs', 'localVolumeSource'], 'inodes'))([...p].reverse())), names(p));
  });
  test('TestOrderedByMemory', () => {
    const mk = (n: string, req: string, lim: string) => newPod(n, defaultPriority, [newContainer(n, newResourceList('', req, ''), newResourceList('', lim, ''))]);
    const p = [mk('best-effort-high', '', ''), mk('best-effort-low', '', ''), mk('burstable-high', '100Mi', '1Gi'), mk('burstable-low', '100Mi', '1Gi'), mk('guaranteed-high', '1Gi', '1Gi'), mk('guaranteed-low', '1Gi', '1Gi')] as V1Pod[];
    const use = ['500Mi', '300Mi', '800Mi', '300Mi', '800Mi', '200Mi'];
    const stats = statsFnOf(p.map((pod, i) => newPodMemoryStats(pod, use[i] as string)));
    assert.deepEqual(names(orderedBy(memory(stats))(p)), ['burstable-high', 'best-effort-high', 'best-effort-low', 'burstable-low', 'guaranteed-high', 'guaranteed-low']);
  });
  test('TestOrderedByPriorityMemory', () => {
    const mk = (n: string, prio: number, req: string) => newPod(n, prio, [newContainer(n, newResourceList('', req, ''), {})]);
    const p = [
      mk('above-requests-low-priority-high-usage', lowPriority, ''), mk('above-requests-low-priority-low-usage', lowPriority, ''),
      mk('above-requests-high-priority-high-usage', highPriority, '100Mi'), mk('above-requests-high-priority-low-usage', highPriority, '100Mi'),
      mk('below-requests-low-priority-high-usage', lowPriority, '1Gi'), mk('below-requests-low-priority-low-usage', lowPriority, '1Gi'),
      mk('below-requests-high-priority-high-usage', highPriority, '1Gi'), mk('below-requests-high-priority-low-usage', highPriority, '1Gi'),
    ] as V1Pod[];
    const use = ['500Mi', '50Mi', '600Mi', '150Mi', '800Mi', '200Mi', '800Mi', '200Mi'];
    const stats = statsFnOf(p.map((pod, i) => newPodMemoryStats(pod, use[i] as string)));
    assert.deepEqual(names(orderedBy(exceedMemoryRequests(stats), priority, memory(stats))([...p].reverse())), names(p));
  });
  test('TestOrderedByPriorityProcess', () => {
    const p = [newPod('low-priority-high-usage', lowPriority, []), newPod('low-priority-low-usage', lowPriority, []), newPod('high-priority-high-usage', highPriority, []), newPod('high-priority-low-usage', highPriority, [])] as [V1Pod, V1Pod, V1Pod, V1Pod];
    const stats = statsFnOf([newPodProcessStats(p[0], 20), newPodProcessStats(p[1], 6), newPodProcessStats(p[2], 20), newPodProcessStats(p[3], 5)]);
    assert.deepEqual(names(orderedBy(priority, process(stats))([...p].reverse())), names(p));
  });
  describe('TestStatsNotFoundForPod', () => {
    const pod1 = newPod('stats-found', defaultPriority, []);
    const pod2 = newPod('stats-not-found', defaultPriority, []);
    const statsFn = statsFnOf([newPodMemoryStats(pod1, '1Gi')]);
    const cmps: Record<string, CmpFunc> = {
      exceedMemoryRequests: exceedMemoryRequests(statsFn), memory: memory(statsFn), process: process(statsFn),
      exceedDiskRequests: exceedDiskRequests(statsFn, ['root', 'logs', 'localVolumeSource'], 'ephemeral-storage'),
      disk: disk(statsFn, ['root', 'logs', 'localVolumeSource'], 'ephemeral-storage'),
    };
    for (const [name, cmp] of Object.entries(cmps)) {
      test(name, () => {
        assert.equal(cmp(pod1, pod2), 1, 'a pod without stats ranks first');
        assert.equal(cmp(pod2, pod1), -1);
        assert.equal(cmp(pod2, pod2), 0, 'unexpected default result');
      });
    }
  });
});

describe('TestSortByEvictionPriority', () => {
  const t = (signal: Threshold['signal']): Threshold => hard(signal, {});
  test('empty threshold list', () => assert.deepEqual(sortByEvictionPriority([]), []));
  test('memory first', () => assert.deepEqual(sortByEvictionPriority([t('nodefs.available'), t('pid.available'), t('memory.available')]).map((x) => x.signal), ['memory.available', 'nodefs.available', 'pid.available']));
  test('allocatable memory first', () => assert.deepEqual(sortByEvictionPriority([t('nodefs.available'), t('pid.available'), t('allocatableMemory.available')]).map((x) => x.signal), ['allocatableMemory.available', 'nodefs.available', 'pid.available']));
});

test('TestMakeSignalObservations', () => {
  const gi = 1024 ** 3;
  const summary: Summary = {
    node: {
      nodeName: 'n',
      memory: { availableBytes: gi, workingSetBytes: gi },
      runtime: {
        imageFs: { availableBytes: 1024 * 1024, capacityBytes: 1024 * 1024 * 2, inodesFree: 1024, inodes: 1024 * 1024 },
        containerFs: { availableBytes: 1024 * 1024 * 2, capacityBytes: 1024 * 1024 * 8, inodesFree: 2048, inodes: 2048 },
      },
      rlimit: { maxpid: 255816, curproc: 1000 },
      fs: { availableBytes: 1024, capacityBytes: 2048, inodesFree: 1024, inodes: 1024 * 1024 },
      systemContainers: [{ name: 'pods', memory: { availableBytes: gi, workingSetBytes: gi } }, { name: 'windows-global-commit-memory', memory: { availableBytes: gi, usageBytes: gi } }],
    },
    pods: [['pod1', 'ns1', 'uuid1'], ['pod1', 'ns2', 'uuid2'], ['pod3', 'ns3', 'uuid3']].map(([name, namespace, uid]) => ({ podRef: { name: name as string, namespace: namespace as string, uid: uid as string }, containers: [], memory: { workingSetBytes: gi } })),
  };
  const { observations: o, stats } = makeSignalObservations(summary);
  assert.deepEqual(o['allocatableMemory.available'], { available: gi, capacity: 2 * gi, timeMs: undefined });
  assert.deepEqual(o['memory.available'], { available: gi, capacity: 2 * gi, timeMs: undefined });
  assert.deepEqual([o['nodefs.available']?.available, o['nodefs.available']?.capacity], [1024, 2048]);
  assert.deepEqual([o['nodefs.inodesFree']?.available, o['nodefs.inodesFree']?.capacity], [1024, 1024 * 1024]);
  assert.deepEqual([o['imagefs.available']?.available, o['imagefs.available']?.capacity], [1024 * 1024, 2 * 1024 * 1024]);
  assert.deepEqual([o['containerfs.available']?.available, o['containerfs.available']?.capacity], [2 * 1024 * 1024, 8 * 1024 * 1024]);
  assert.deepEqual([o['imagefs.inodesFree']?.available, o['imagefs.inodesFree']?.capacity], [1024, 1024 * 1024]);
  assert.deepEqual([o['containerfs.inodesFree']?.available, o['containerfs.inodesFree']?.capacity], [2048, 2048]);
  assert.deepEqual([o['pid.available']?.available, o['pid.available']?.capacity], [255816 - 1000, 255816]);
  for (const uid of ['uuid1', 'uuid2', 'uuid3']) assert.equal(stats(uid)?.memory?.workingSetBytes, gi);
});

describe('TestThresholdsMet', () => {
  const h = hard('memory.available', { quantity: qp('1Gi') }, { quantity: qp('500Mi') });
  const obs = (available: string): SignalObservations => ({ 'memory.available': { available: qp(available), capacity: 0 } });
  const cases: [string, boolean, Threshold[], SignalObservations, Threshold[]][] = [
    ['empty', false, [], {}, []],
    ['threshold-met-memory', false, [h], obs('500Mi'), [h]],
    ['threshold-not-met', false, [h], obs('2Gi'), []],
    ['threshold-met-with-min-reclaim', true, [h], obs('1.05Gi'), [h]],
    ['threshold-not-met-with-min-reclaim', true, [h], obs('2Gi'), []],
  ];
  for (const [name, enforce, ts, o, want] of cases) test(name, () => assert.deepEqual(thresholdsMet(ts, o, enforce), want));
});

describe('TestThresholdsUpdatedStats', () => {
  const u: Threshold = hard('memory.available', {});
  const at = (min: number): SignalObservations => ({ 'memory.available': { available: 0, capacity: 0, timeMs: Date.UTC(2016, 0, 1, 0, min) } });
  const cases: [string, Threshold[], SignalObservations, SignalObservations, Threshold[]][] = [
    ['empty', [], {}, {}, []],
    ['no-time', [u], { 'memory.available': { available: 0, capacity: 0 } }, {}, [u]],
    ['no-last-observation', [u], at(0), {}, [u]],
    ['time-machine', [u], at(0), at(1), []],
    ['same-observation', [u], at(0), at(0), []],
    ['new-observation', [u], at(1), at(0), [u]],
  ];
  for (const [name, ts, o, last, want] of cases) test(name, () => assert.deepEqual(thresholdsUpdatedStats(ts, o, last), want));
});

describe('TestPercentageThresholdsMet', () => {
  const specific = [hard('memory.available', { percentage: pct(0.2) }, { percentage: pct(0.05) }), hard('nodefs.available', { percentage: pct(0.3) })] as [Threshold, Threshold];
  const obs = (mem: string, fs?: string): SignalObservations => ({
    'memory.available': { available: qp(mem), capacity: qp('1000Mi') },
    ...(fs ? { 'nodefs.available': { available: qp(fs), capacity: qp('1000Gi') } } : {}),
  });
  const cases: [string, boolean, SignalObservations, Threshold[]][] = [
    ['BothMet', false, obs('100Mi', '100Gi'), specific],
    ['NoneMet', false, obs('300Mi', '400Gi'), []],
    ['DiskMet', false, obs('300Mi', '100Gi'), [specific[1]]],
    ['MemoryMet', false, obs('100Mi', '400Gi'), [specific[0]]],
    ['MemoryMetWithMinReclaim', true, obs('225Mi'), [specific[0]]],
    ['MemoryNotMetWithMinReclaim', true, obs('300Mi'), []],
  ];
  for (const [name, enforce, o, want] of cases) test(name, () => assert.deepEqual(thresholdsMet(specific, o, enforce), want));
});

describe('TestThresholdsFirstObservedAt', () => {
  const h = hard('memory.available', { quantity: qp('1Gi') });
  const now = Date.UTC(2026, 0, 1);
  const old = now - 60_000;
  const entry = (atMs: number) => new Map([[thresholdKey(h), { threshold: h, atMs }]]);
  test('empty', () => assert.deepEqual(thresholdsFirstObservedAt([], new Map(), now), new Map()));
  test('no-previous-observation', () => assert.deepEqual(thresholdsFirstObservedAt([h], new Map(), now), entry(now)));
  test('previous-observation', () => assert.deepEqual(thresholdsFirstObservedAt([h], entry(old), now), entry(old)));
});

describe('TestThresholdsMetGracePeriod', () => {
  const now = Date.UTC(2026, 0, 1);
  const h = hard('memory.available', { quantity: qp('1Gi') });
  const s = soft('memory.available', { quantity: qp('2Gi') }, 60_000);
  const at = (t: Threshold, atMs: number) => new Map([[thresholdKey(t), { threshold: t, atMs }]]);
  test('empty', () => assert.deepEqual(thresholdsMetGracePeriod(new Map(), now), []));
  test('hard-threshold-met', () => assert.deepEqual(thresholdsMetGracePeriod(at(h, now), now), [h]));
  test('soft-threshold-not-met', () => assert.deepEqual(thresholdsMetGracePeriod(at(s, now), now), []));
  test('soft-threshold-met', () => assert.deepEqual(thresholdsMetGracePeriod(at(s, now - 120_000), now), [s]));
});

describe('TestNodeConditions', () => {
  test('empty-list', () => assert.deepEqual(nodeConditions([]), []));
  test('memory.available', () => assert.deepEqual(nodeConditions([hard('memory.available', {})]), ['MemoryPressure']));
});

describe('TestNodeConditionsLastObservedAt', () => {
  const now = Date.UTC(2026, 0, 1);
  const old = now - 60_000;
  test('no-previous-observation', () => assert.deepEqual(nodeConditionsLastObservedAt(['MemoryPressure'], new Map(), now), new Map([['MemoryPressure', now]])));
  test('previous-observation', () => assert.deepEqual(nodeConditionsLastObservedAt(['MemoryPressure'], new Map([['MemoryPressure', old]]), now), new Map([['MemoryPressure', now]])));
  test('old-observation', () => assert.deepEqual(nodeConditionsLastObservedAt([], new Map([['MemoryPressure', old]]), now), new Map([['MemoryPressure', old]])));
});

describe('TestNodeConditionsObservedSince', () => {
  const now = Date.UTC(2026, 0, 1);
  const observed = new Map([['MemoryPressure', now - 60_000]] as const);
  test('in-period', () => assert.deepEqual(nodeConditionsObservedSince(observed, 120_000, now), ['MemoryPressure']));
  test('out-of-period', () => assert.deepEqual(nodeConditionsObservedSince(observed, 30_000, now), []));
});

describe('TestHasNodeConditions', () => {
  test('has-condition', () => assert.equal(hasNodeCondition(['DiskPressure', 'MemoryPressure'], 'MemoryPressure'), true));
  test('does-not-have-condition', () => assert.equal(hasNodeCondition(['DiskPressure'], 'MemoryPressure'), false));
});

describe('TestParsePercentage', () => {
  test('blah', () => assert.throws(() => parsePercentage('blah')));
  test('25.5%', () => assert.equal(parsePercentage('25.5%'), Math.fround(0.255)));
  test('foo%', () => assert.throws(() => parsePercentage('foo%')));
  test('12%345', () => assert.throws(() => parsePercentage('12%345')));
});

test('TestCompareThresholdValue', () => {
  const cases: [Threshold['value'], Threshold['value'], boolean][] = [
    [{ quantity: 123 }, { quantity: 123 }, true],
    [{ quantity: 123 }, { quantity: 456 }, false],
    [{ quantity: 123 }, { percentage: pct(0.1) }, false],
    [{ percentage: pct(0.1) }, { percentage: pct(0.1) }, true],
    [{ percentage: pct(0.2) }, { percentage: pct(0.1) }, false],
  ];
  for (const [a, b, equal] of cases) {
    assert.equal(compareThresholdValue(a, b), equal);
    assert.equal(compareThresholdValue(b, a), equal);
  }
});

describe('TestEvictionMessage', () => {
  const pod = (containers: [string, string][], init: [string, string, boolean][] = []): V1Pod => ({
    metadata: { name: 'pod', namespace: 'ns', uid: 'pod' },
    spec: {
      containers: containers.map(([name, req]) => newContainer(name, req ? { memory: req } : {}, {})),
      initContainers: init.map(([name, req, restartable]) => ({ ...newContainer(name, req ? { memory: req } : {}, {}), ...(restartable ? { restartPolicy: 'Always' } : {}) })),
    },
  });
  const stats = (usage: [string, string][]) => statsFnOf([{ podRef: { name: 'pod', namespace: 'ns', uid: 'pod' }, containers: usage.map(([name, u]) => ({ name, memory: { workingSetBytes: qp(u) } })) }]);
  const low = 'The node was low on resource: memory. ';
  test('No container exceeds memory usage', () => {
    const r = evictionMessage('memory', pod([['regular-1', '200Mi']], [['restartable-init-1', '200Mi', true]]), stats([['restartable-init-1', '150Mi'], ['regular-1', '100Mi']]), [], {});
    assert.equal(r.message, low);
    assert.deepEqual(r.annotations, { offending_containers: '', offending_containers_usage: '', starved_resource: 'memory' });
  });
  test('Init container exceeds memory usage', () => {
    const r = evictionMessage('memory', pod([['regular-1', '200Mi']], [['init-1', '100Mi', false]]), stats([['init-1', '150Mi']]), [], {});
    assert.equal(r.message, `${low}Container init-1 was using 150Mi, request is 100Mi, has larger consumption of memory. `);
    assert.deepEqual(r.annotations, { offending_containers: 'init-1', offending_containers_usage: '150Mi', starved_resource: 'memory' });
  });
  test('Regular container exceeds memory usage', () => {
    const r = evictionMessage('memory', pod([['regular-1', '200Mi'], ['regular-2', '300Mi']], [['restartable-init-1', '200Mi', true]]), stats([['restartable-init-1', '200Mi'], ['regular-1', '250Mi'], ['regular-2', '250Mi']]), [], {});
    assert.equal(r.message, `${low}Container regular-1 was using 250Mi, request is 200Mi, has larger consumption of memory. `);
  });
  test('with a threshold: upstream thresholdMetMessageFmt', () => {
    const r = evictionMessage('memory', pod([['c', '']]), stats([['c', '1Mi']]), [hard('memory.available', { quantity: qp('100Mi') })], { 'memory.available': { available: qp('50Mi'), capacity: qp('2Gi') } });
    assert.equal(r.message, `${low}Threshold quantity: 100Mi, available: 50Mi. Container c was using 1Mi, request is 0, has larger consumption of memory. `);
  });
});

describe('kubelet configuration (project rules)', () => {
  test('quantities: binary, decimal, fractional and exponent forms', () => {
    assert.equal(qp('100Mi'), 100 * 2 ** 20);
    assert.equal(qp('1.5Gi'), 1.5 * 2 ** 30);
    assert.equal(qp('10k'), 10_000);
    assert.equal(qp('500m'), 0.5);
    assert.equal(qp('1e3'), 1000);
    for (const badText of ['', 'Mi', '1..5', '1Qi', '-']) assert.throws(() => qp(badText), /quantities must match/, badText);
    assert.equal(formatBytes(qp('1500Mi')), '1500Mi');
    assert.equal(formatBytes(qp('1Gi')), '1Gi');
  });
  test('defaults: unset evictionHard gives the five default hard thresholds', () => {
    const cfg = evictionConfigFromKubeletConfiguration({});
    assert.deepEqual(cfg.thresholds.map((t) => t.signal).sort(), Object.keys(DEFAULT_EVICTION_HARD).sort());
    assert.equal(cfg.pressureTransitionPeriodMs, DEFAULT_PRESSURE_TRANSITION_PERIOD_MS);
    assert.equal(cfg.maxPodGracePeriodSeconds, 0);
  });
  test('setting any hard threshold drops the defaults of the others', () => {
    assert.deepEqual(effectiveEvictionHard({ 'memory.available': '1Gi' }), { 'memory.available': '1Gi' });
    assert.deepEqual(evictionConfigFromFlags({ 'eviction-hard': 'memory.available<1Gi' }).thresholds.map((t) => t.signal), ['memory.available']);
  });
  test('mergeDefaultEvictionSettings keeps the defaults of the signals left out', () => {
    assert.deepEqual(effectiveEvictionHard({ 'memory.available': '1Gi' }, true), { ...DEFAULT_EVICTION_HARD, 'memory.available': '1Gi' });
  });
  test('kubelet flag names and syntax', () => {
    const cfg = evictionConfigFromFlags({
      'eviction-hard': 'memory.available<100Mi,nodefs.available<10%',
      'eviction-soft': 'memory.available<1.5Gi',
      'eviction-soft-grace-period': 'memory.available=1m30s',
      'eviction-max-pod-grace-period': '30',
      'eviction-minimum-reclaim': 'memory.available=0.5Gi',
      'eviction-pressure-transition-period': '30s',
    });
    assert.deepEqual(keys(cfg.thresholds), keys([
      hard('memory.available', { quantity: qp('100Mi') }, { quantity: qp('0.5Gi') }),
      hard('nodefs.available', { percentage: pct(0.1) }),
      soft('memory.available', { quantity: qp('1.5Gi') }, 90_000, { quantity: qp('0.5Gi') }),
    ]));
    assert.equal(cfg.pressureTransitionPeriodMs, 30_000);
    assert.equal(cfg.maxPodGracePeriodSeconds, 30);
    assert.throws(() => evictionConfigFromFlags({ 'eviction-hard': 'memory.available=100Mi' }), /malformed pair/);
    assert.throws(() => evictionConfigFromFlags({ 'eviction-max-pod-grace-period': '1.5' }), /not an integer/);
    assert.throws(() => evictionConfigFromFlags({ 'eviction-foo': 'x' }), /unknown eviction flag/);
  });
  test('ranking as data: usage above request, then priority, then usage relative to request; reasons given', () => {
    const be = newPod('best-effort', 0, [newContainer('c', {}, {})], [], 'ns');
    const g = newPod('guaranteed', 0, [newContainer('c', newResourceList('100m', '1Gi', ''), newResourceList('100m', '1Gi', ''))], [], 'ns');
    const ranked = rankPodsForEviction('memory.available', [g, be], statsFnOf([newPodMemoryStats(be, '10Mi'), newPodMemoryStats(g, '900Mi')]), { dedicatedImageFs: false, splitContainerImageFs: false }, (_r, v) => formatBytes(v));
    assert.deepEqual(ranked.map((r) => [r.key, r.rank, r.qosClass, r.exceedsRequest]), [['ns/best-effort', 1, 'BestEffort', true], ['ns/guaranteed', 2, 'Guaranteed', false]]);
    assert.deepEqual(ranked[0]?.why, ['usage 10Mi > request 0', 'priority 0', 'usage above request 10Mi']);
  });
});
