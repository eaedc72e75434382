/**
 * `explain node` / `explain pod` under node pressure (src/cli/explain-pressure.ts) and the simulated
 * kubelet endpoint's pure parts (packages/sim/src/kubeletserver.ts): live ranking from a Summary, the static order
 * without one (and that it says so), thresholds from /configz or the kubelet's defaults, the evicted
 * pod's message, and that the chart's read-only role never grants nodes/proxy.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import {
  explainKubeletEviction, explainNodePressure, formatReadableQuantity, kubeletEvictionSentence, renderNodePressure, type KubeletView,
} from '../../src/cli/explain-pressure.js';
import { hostAddress, isProxyableIPv4, kubeletConfigurationOf } from '@node-lifecycle-controller/sim/kubeletserver';
import { evictionConfigFromFlags, evictionConfigFromKubeletConfiguration } from '../../src/kubelet/thresholds.js';
import { evictionMessage } from '@node-lifecycle-controller/sim/nodepressure/manager';
import { makeSignalObservations, type PodStats, type Summary } from '../../src/kubelet/signals.js';
import { formatReadableBytes, parseQuantity } from '../../src/kube/quantity.js';
import type { NodeCondition } from '../../src/kube/objects.js';

const NOW = Date.parse('2026-11-24T10:00:00Z');
const Gi = parseQuantity('1Gi');
const Mi = parseQuantity('1Mi');
const Ki = (n: number): number => n * 1024;

function pod(name: string, memRequest: string | undefined, opts: { limit?: string; priority?: number; phase?: string } = {}): V1Pod {
  const resources = memRequest === undefined ? undefined : { requests: { memory: memRequest, cpu: '100m' }, limits: { memory: opts.limit ?? memRequest, ...(opts.limit ? {} : { cpu: '100m' }) } };
  return {
    metadata: { name, namespace: 'ns', uid: name },
    spec: { containers: [{ name: 'app', ...(resources ? { resources } : {}) }], ...(opts.priority !== undefined ? { priority: opts.priority } : {}) },
    status: { phase: opts.phase ?? 'Running' },
  };
}
const besteffort = pod('besteffort', undefined);
const burstable = pod('burstable', '256Mi', { limit: '1Gi' });
const guaranteed = pod('guaranteed', '512Mi');
const highBestEffort = pod('important-besteffort', undefined, { priority: 1000 });
const evictedAlready = pod('gone', undefined, { phase: 'Failed' });
const pods = [guaranteed, burstable, besteffort, highBestEffort, evictedAlready];

const podStats = (p: V1Pod, workingSet: number): PodStats => ({
  podRef: { name: p.metadata?.name ?? '', namespace: 'ns', uid: p.metadata?.uid ?? '' },
  containers: [{ name: 'app', memory: { workingSetBytes: workingSet } }], memory: { workingSetBytes: workingSet },
});
const summary: Summary = {
  node: { nodeName: 'n1', memory: { time: '2026-11-24T09:59:55Z', availableBytes: 800 * Mi, workingSetBytes: 14 * Gi } },
  pods: [podStats(guaranteed, 500 * Mi), podStats(burstable, 384 * Mi), podStats(besteffort, 100 * Mi), podStats(highBestEffort, 12 * Gi)],
};
const pressure: NodeCondition[] = [
  { type: 'Ready', status: 'True' },
  { type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory', lastTransitionTime: NOW - 90_000 },
];
const configz = kubeletConfigurationOf(evictionConfigFromFlags({ 'eviction-hard': 'memory.available<1Gi', 'eviction-pressure-transition-period': '30s' }));
const live: KubeletView = { access: 'allowed', summary, kubeletConfig: configz, notes: [] };
const denied: KubeletView = { access: 'denied', notes: ['you may not get nodes/proxy (deliberately not in the read-only role): no live usage, static order'] };

describe('explainNodePressure', () => {
  test('no pressure condition → undefined (explain node unchanged)', () => {
    assert.equal(explainNodePressure({ conditions: [{ type: 'MemoryPressure', status: 'False' }], pods, kubelet: live, nowMs: NOW }), undefined);
  });

  test('with the Summary API: signal, observed value, threshold, since when, and the kubelet\'s ranking (usage over request first, then priority, then usage − request)', () => {
    const e = explainNodePressure({ conditions: pressure, pods, kubelet: live, nowMs: NOW });
    assert.ok(e);
    assert.equal(e.source, 'summary-api');
    assert.equal(e.thresholdsFrom, 'configz');
    assert.equal(e.transitionPeriod, '30s');
    assert.deepEqual(e.conditions, [{ type: 'MemoryPressure', since: new Date(NOW - 90_000).toISOString(), sinceSeconds: 90, message: null }]);
    assert.deepEqual(e.signals, [{
      signal: 'memory.available', condition: 'MemoryPressure', unit: 'bytes',
      observed: '800Mi', observedValue: 800 * Mi, capacity: '14.7Gi', capacityValue: 800 * Mi + 14 * Gi,
      threshold: '1Gi', thresholdValue: Gi, thresholdResolved: '1Gi', kind: 'hard', gracePeriod: null, met: true,
      statsTime: '2026-11-24T09:59:55.000Z',
    }]);
    assert.deepEqual(e.stats, { time: '2026-11-24T09:59:55.000Z', ageSeconds: 5, refreshSeconds: 10 });
    assert.equal(e.ranking.asOf, '2026-11-24T09:59:55.000Z');
    assert.equal(e.ranking.staleStats, false);
    assert.deepEqual(e.ranking.notRanked, []);
    assert.equal(e.ranking.signal, 'memory.available');
    assert.equal(e.ranking.static, false);
    // All three over their requests come first, by priority (the high-priority BestEffort last of them),
    // then by usage above request; the Guaranteed pod is under its request. The Failed pod is not ranked.
    assert.deepEqual(e.ranking.pods.map((p) => p.pod), ['ns/burstable', 'ns/besteffort', 'ns/important-besteffort', 'ns/guaranteed']);
    assert.deepEqual(e.ranking.pods.map((p) => p.exceedsRequest), [true, true, true, false]);
    assert.equal(e.ranking.next, 'ns/burstable');
    assert.deepEqual(e.ranking.pods[0]?.why, ['usage 384Mi > request 256Mi', 'priority 0', 'usage above request 128Mi']);
    assert.ok(e.explanation.some((s) => s.includes('memory.available is 800Mi, below its hard threshold 1Gi')));
    assert.ok(e.explanation.some((s) => s.startsWith('Next (as of the stats at 09:59:55Z) to be evicted for memory.available: ns/burstable')));
    assert.ok(e.explanation.some((s) => s.includes('stats are from 09:59:55Z, 5 s old (it refreshes them every 10 s)')));
    assert.ok(!e.explanation.some((s) => s.includes('STATIC')));
    const text = renderNodePressure(e).join('\n');
    assert.match(text, /Pressure: +MemoryPressure=True since 2026-11-24T09:58:30.000Z \(90s ago\)/);
    assert.match(text, /Source: +Summary API through the node proxy; thresholds from the kubelet's \/configz; transition period 30s/);
    assert.match(text, /Stats: +from 09:59:55Z, 5 s old; the kubelet refreshes them every 10 s/);
    assert.match(text, /memory\.available +800Mi +14\.7Gi +1Gi hard +yes/);
    assert.match(text, /Eviction order for memory\.available \(the kubelet's ranking, live usage\) as of the stats at 09:59:55Z:/);
    assert.match(text, /1 +ns\/burstable +Burstable +0 +384Mi +256Mi +usage 384Mi > request 256Mi/);
  });

  test('without nodes/proxy: the static order (QoS class, priority, requests), said to be static, thresholds assumed from the kubelet defaults', () => {
    const e = explainNodePressure({ conditions: pressure, pods, kubelet: denied, nowMs: NOW });
    assert.ok(e);
    assert.equal(e.source, 'static');
    assert.equal(e.ranking.static, true);
    assert.equal(e.thresholdsFrom, 'kubelet-defaults');
    assert.deepEqual(e.ranking.pods.map((p) => p.pod), ['ns/besteffort', 'ns/important-besteffort', 'ns/burstable', 'ns/guaranteed']);
    assert.deepEqual(e.ranking.pods.map((p) => p.usage), [null, null, null, null]);
    assert.deepEqual(e.ranking.pods[2]?.why, ['Burstable', 'priority 0', 'request 256Mi']);
    assert.deepEqual(e.signals.map((s) => [s.signal, s.threshold, s.observed, s.met]), [['memory.available', '100Mi', null, null]]);
    assert.equal(e.stats, null);
    assert.equal(e.ranking.asOf, null);
    assert.doesNotMatch(renderNodePressure(e).join('\n'), /Stats:|as of the stats/);
    assert.ok(e.explanation.some((s) => s.includes('STATIC') && s.includes('you may not get nodes/proxy')));
    assert.ok(e.explanation.some((s) => s.startsWith('Likely next to be evicted for memory.available: ns/besteffort')));
    assert.ok(e.notes.some((n) => n.includes("kubelet's defaults")));
    assert.match(renderNodePressure(e).join('\n'), /Eviction order for memory\.available \(STATIC: QoS class, priority, requests; not live usage\)/);
  });

  test('a condition held for the transition period after recovery says no pod is evicted unless the threshold is met again', () => {
    const recovered: Summary = { ...summary, node: { nodeName: 'n1', memory: { availableBytes: 3 * Gi, workingSetBytes: 12 * Gi } } };
    const e = explainNodePressure({ conditions: pressure, pods, kubelet: { ...live, summary: recovered }, nowMs: NOW });
    assert.equal(e?.signals[0]?.met, false);
    assert.ok(e?.explanation.some((s) => s.includes('above its hard threshold 1Gi now: the condition is held for 30s')));
  });

  test('DiskPressure with percentage thresholds resolves them against the observed capacity (float32 percentages, as GetThresholdQuantity)', () => {
    const disk: Summary = { node: { nodeName: 'n1', fs: { availableBytes: 5 * Gi, capacityBytes: 100 * Gi, inodesFree: 900_000, inodes: 1_000_000 } }, pods: [] };
    const e = explainNodePressure({
      conditions: [{ type: 'DiskPressure', status: 'True' }], pods: [besteffort],
      kubelet: { access: 'allowed', summary: disk, kubeletConfig: { evictionHard: { 'nodefs.available': '10%', 'nodefs.inodesFree': '5%' } }, notes: [] }, nowMs: NOW,
    });
    assert.deepEqual(e?.signals.map((s) => [s.signal, s.threshold, s.thresholdValue, s.thresholdResolved, s.observed, s.met]), [
      ['nodefs.available', '10%', 10737418400, '10.0Gi', '5Gi', true],
      ['nodefs.inodesFree', '5%', 50000, '50000', '900000', false],
    ]);
    assert.equal(e?.ranking.signal, 'nodefs.available');
    assert.match(renderNodePressure(e as NonNullable<typeof e>).join('\n'), /nodefs\.available +5Gi +100Gi +10% \(10\.0Gi\) hard +yes/);
  });

  test('usage that is not a whole number of Ki reads as binary units (20.0Gi), exact bytes stay in the *Value fields', () => {
    const leak = pod('leak', undefined);
    const usage = 21502351115; // the demo's leaking pod, seen raw as `21502351115` before
    const s: Summary = { node: { nodeName: 'n1', memory: { time: '2026-11-24T09:59:59Z', availableBytes: 0, workingSetBytes: 16393220 * 1024 } }, pods: [podStats(leak, usage), podStats(guaranteed, 512 * Mi)] };
    const e = explainNodePressure({ conditions: pressure, pods: [leak, guaranteed], kubelet: { ...live, summary: s }, nowMs: NOW });
    assert.ok(e);
    assert.deepEqual([e.signals[0]?.observed, e.signals[0]?.capacity, e.signals[0]?.capacityValue], ['0', '15.6Gi', 16393220 * 1024]);
    assert.deepEqual(e.ranking.pods[0], {
      rank: 1, pod: 'ns/leak', qosClass: 'BestEffort', priority: 0, usage: '20.0Gi', usageValue: usage, request: '0', requestValue: 0,
      exceedsRequest: true, critical: false, terminating: null, why: ['usage 20.0Gi > request 0', 'priority 0', 'usage above request 20.0Gi'],
    });
    assert.equal(e.ranking.pods[1]?.usage, '512Mi');
    const text = renderNodePressure(e).join('\n');
    assert.match(text, /1 +ns\/leak +BestEffort +0 +20\.0Gi +0 +usage 20\.0Gi > request 0/);
    assert.doesNotMatch(text, /21502351115/);
  });

  test('formatReadableQuantity: bytes in binary units, truncated (never up to a threshold), exact multiples as they are; inodes and PIDs plain counts', () => {
    assert.deepEqual([0, 512, Ki(1), 512 * Mi, 21502351115, 1.5 * Gi, Gi - 1, 100 * Gi + 1, -1.5 * Mi].map(formatReadableBytes),
      ['0', '512', '1Ki', '512Mi', '20.0Gi', '1.50Gi', '1023.9Mi', '100.0Gi', '-1.50Mi']);
    assert.equal(formatReadableQuantity('memory', 21502351115), '20.0Gi');
    assert.equal(formatReadableQuantity('ephemeral-storage', 10 * Gi), '10Gi');
    assert.equal(formatReadableQuantity('inodes', 50_000), '50000');
    assert.equal(formatReadableQuantity('pids', 32768), '32768');
  });

  test('stale stats after an eviction (seen 1.6 s after it in a real run): stats time and age shown, the evicted and vanished pods are not ranked, next only if still met on fresh stats', () => {
    const leak = { ...pod('leak', undefined), status: { phase: 'Failed', reason: 'Evicted' } };
    const vanished = pod('vanished', undefined);
    const s: Summary = {
      node: { nodeName: 'n1', memory: { time: new Date(NOW - 1600).toISOString(), availableBytes: 0, workingSetBytes: 16 * Gi } },
      pods: [podStats(leak, 20 * Gi), podStats(vanished, 10 * Mi), podStats(guaranteed, 512 * Mi)],
    };
    const e = explainNodePressure({ conditions: pressure, pods: [leak, guaranteed], kubelet: { ...live, summary: s }, nowMs: NOW });
    assert.ok(e);
    assert.deepEqual(e.stats, { time: '2026-11-24T09:59:58.400Z', ageSeconds: 1.6, refreshSeconds: 10 });
    assert.deepEqual(e.ranking.pods.map((p) => p.pod), ['ns/guaranteed']);
    assert.deepEqual(e.ranking.notRanked, [{ pod: 'ns/leak', why: 'Failed (Evicted)' }, { pod: 'ns/vanished', why: 'no longer exists' }]);
    assert.equal(e.ranking.staleStats, true);
    assert.equal(e.ranking.next, 'ns/guaranteed');
    assert.ok(!e.explanation.some((x) => x.startsWith('Next')), 'no unconditional "Next" on stale stats');
    assert.ok(e.explanation.some((x) => x.startsWith("Only if memory.available is still below its threshold on the kubelet's next stats, next to be evicted for memory.available: ns/guaranteed")));
    assert.ok(e.explanation.some((x) => x.includes('still count ns/leak (Failed (Evicted)), ns/vanished (no longer exists)')));
    const text = renderNodePressure(e).join('\n');
    assert.match(text, /Stats: +from 09:59:58Z, 1\.6 s old; the kubelet refreshes them every 10 s/);
    assert.match(text, /not ranked: ns\/leak \(Failed \(Evicted\); the stats above still count it\)/);
    assert.match(text, /as of the stats at 09:59:58Z:/);
  });

  test('a pod being deleted (deletionTimestamp) keeps its place, marked, and is never named as next', () => {
    const deleting = { ...besteffort, metadata: { ...besteffort.metadata, deletionTimestamp: new Date(NOW - 2000) } };
    const e = explainNodePressure({ conditions: pressure, pods: [guaranteed, burstable, deleting], kubelet: live, nowMs: NOW });
    assert.ok(e);
    assert.deepEqual(e.ranking.pods.map((p) => [p.pod, p.terminating]), [['ns/burstable', null], ['ns/besteffort', '2026-11-24T09:59:58.000Z'], ['ns/guaranteed', null]]);
    assert.equal(e.ranking.next, 'ns/burstable');
    const only = explainNodePressure({ conditions: pressure, pods: [deleting], kubelet: live, nowMs: NOW });
    assert.equal(only?.ranking.next, null);
    assert.ok(only?.explanation.some((x) => x.includes('ns/besteffort is being deleted')));
    assert.match(renderNodePressure(only as NonNullable<typeof only>).join('\n'), /ns\/besteffort .*\(being deleted since 2026-11-24T09:59:58\.000Z, not next\)/);
  });

  test('a /configz that does not parse falls back to the defaults with a note', () => {
    const e = explainNodePressure({ conditions: pressure, pods, kubelet: { ...live, kubeletConfig: { evictionHard: { 'memory.available': 'lots' } } }, nowMs: NOW });
    assert.equal(e?.thresholdsFrom, 'kubelet-defaults');
    assert.ok(e?.notes.some((n) => n.includes('do not parse')));
  });
});

describe('explainKubeletEviction (explain pod)', () => {
  test('names the signal and threshold from the kubelet\'s status message', () => {
    const thresholds = evictionConfigFromFlags({ 'eviction-hard': 'memory.available<1Gi' }).thresholds;
    const { observations, stats } = makeSignalObservations(summary);
    const { message } = evictionMessage('memory', besteffort, stats, thresholds, observations);
    const v = explainKubeletEviction({ phase: 'Failed', reason: 'Evicted', message });
    assert.ok(v);
    assert.deepEqual([v.resource, v.signals, v.threshold, v.available], ['memory', ['memory.available', 'allocatableMemory.available'], '1Gi', '800Mi']);
    assert.deepEqual(v.containers, [{ name: 'app', usage: '100Mi', request: '0' }]);
    assert.match(kubeletEvictionSentence(v), /signal memory\.available or allocatableMemory\.available .*threshold 1Gi, available 800Mi; app used 100Mi over its request 0/);
  });

  test('explain pod reads the message\'s raw byte counts in binary units; the view keeps the message\'s exact text', () => {
    const message = 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 1048575Ki. Container app was using 21502351115, request is 0, has larger consumption of memory. ';
    const v = explainKubeletEviction({ phase: 'Failed', reason: 'Evicted', message });
    assert.ok(v);
    assert.deepEqual(v.containers, [{ name: 'app', usage: '21502351115', request: '0' }]);
    assert.equal(v.available, '1048575Ki');
    assert.match(kubeletEvictionSentence(v), /threshold 1Gi, available 1023\.9Mi; app used 20\.0Gi over its request 0\./);
  });

  test('pods not evicted by the kubelet (or with another message) → undefined', () => {
    assert.equal(explainKubeletEviction({ phase: 'Running' }), undefined);
    assert.equal(explainKubeletEviction({ phase: 'Failed', reason: 'Evicted', message: 'Pod was evicted by an admin' }), undefined);
    assert.equal(explainKubeletEviction(undefined), undefined);
  });
});

describe('sim/kubeletserver pure parts', () => {
  test('kubeletConfigurationOf gives back the same eviction configuration (what /configz serves)', () => {
    for (const flags of <Record<string, string>[]>[
      {},
      { 'eviction-hard': 'memory.available<1Gi,nodefs.available<10%', 'eviction-pressure-transition-period': '15s' },
      { 'eviction-soft': 'memory.available<1.5Gi', 'eviction-soft-grace-period': 'memory.available=1m30s', 'eviction-minimum-reclaim': 'memory.available=500Mi', 'eviction-max-pod-grace-period': '30' },
    ]) {
      const config = evictionConfigFromFlags(flags);
      assert.deepEqual(evictionConfigFromKubeletConfiguration(kubeletConfigurationOf(config)), config, JSON.stringify(flags));
    }
  });

  test('isProxyableIPv4 refuses what kube-apiserver\'s node proxy refuses (loopback, link-local, unspecified, multicast)', () => {
    assert.deepEqual(['127.0.0.1', '127.3.0.7', '169.254.1.1', '0.0.0.0', '224.0.0.1', '192.0.2.2', '10.1.2.3'].map(isProxyableIPv4), [false, false, false, false, false, true, true]);
  });

  test('hostAddress: the environment wins, else the first proxyable external IPv4', () => {
    const ifs = {
      lo: [{ address: '127.0.0.1', family: 'IPv4' as const, internal: true, netmask: '255.0.0.0', mac: '', cidr: null }],
      eth0: [
        { address: 'fd00::2', family: 'IPv6' as const, internal: false, netmask: '', mac: '', cidr: null, scopeid: 0 },
        { address: '192.0.2.2', family: 'IPv4' as const, internal: false, netmask: '255.255.255.0', mac: '', cidr: null },
      ],
    };
    assert.equal(hostAddress({}, ifs), '192.0.2.2');
    assert.equal(hostAddress({ NLC_SIM_KUBELET_ADDRESS: '10.9.8.7' }, ifs), '10.9.8.7');
    assert.equal(hostAddress({}, { lo: ifs.lo }), undefined);
  });
});

test('the chart\'s read-only viewer role never grants nodes/proxy (it reaches every kubelet API: exec, logs, stats)', () => {
  const text = readFileSync(new URL('../../charts/node-lifecycle-controller/templates/clusterrole-viewer.yaml', import.meta.url), 'utf8');
  assert.doesNotMatch(text, /nodes\/proxy/);
  assert.doesNotMatch(text, /resources: \[[^\]]*"nodes\/\*"/);
});
