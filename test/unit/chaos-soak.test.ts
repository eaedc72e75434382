/**
 * The soak's arithmetic (test/chaos/soakstats.ts) and its reading of `/debug/state`
 * (test/chaos/soak.ts stateCounts), and the time chart it draws (bench/lib/chart.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTimeChart } from '../../bench/lib/chart.js';
import { kubectlSaysAlreadyExists } from '../chaos/harness.js';
import { readFileSync } from 'node:fs';
import { OURS_NODE_OPTIONS } from '../../bench/lib/options.js';
import { fullSoak, SHIPPED_NODE_ARGS, smallSoak, stateCounts } from '../chaos/soak.js';
import { counted, countedNames, faultTable, growth, judgedSegment, slope, slopePerHour, type FaultRecord, type SoakSample } from '../chaos/soakstats.js';

function sample(atMin: number, rssMiB: number, sockets: number, timers: number, nodes = 30, process = 0): SoakSample {
  return { atMs: atMin * 60_000, process, rssMiB, heapUsedMiB: rssMiB / 2, handles: { Socket: sockets }, resources: { Timeout: timers }, state: { 'nodeLifecycle.nodes': nodes }, simLeaseLagP99Ms: 10 };
}

describe('soak arithmetic', () => {
  it('slope is the least-squares slope, NaN without two distinct x', () => {
    assert.equal(slope([{ x: 0, y: 1 }, { x: 1, y: 3 }, { x: 2, y: 5 }]), 2);
    assert.ok(Math.abs(slope([{ x: 0, y: 0 }, { x: 1, y: 2 }, { x: 2, y: 1 }]) - 0.5) < 1e-9);
    assert.ok(Number.isNaN(slope([{ x: 1, y: 1 }])));
    assert.ok(Number.isNaN(slope([{ x: 1, y: 1 }, { x: 1, y: 2 }])));
  });

  it('the RSS slope is per hour and leaves out the warm-up', () => {
    // +10 MiB in the first 15 minutes (start-up), then +3 MiB over the next hour.
    const samples = [sample(0, 100, 5, 50), sample(15, 110, 5, 50), sample(45, 111.5, 5, 50), sample(75, 113, 5, 50)];
    assert.ok(Math.abs(slopePerHour(samples, 15 * 60_000, (s) => s.rssMiB) - 3) < 1e-9);
    assert.ok(slopePerHour(samples, 0, (s) => s.rssMiB) > 5);
  });

  it('a count that breathes with the waves did not grow; one that climbs quarter by quarter did', () => {
    const breathing = Array.from({ length: 40 }, (_, i) => sample(15 + i * 3, 100, i % 10 === 0 ? 12 : 5, 50));
    const v = growth(breathing, 15 * 60_000, 'handles:Socket', (s) => counted(s, 'handles:Socket'), 4);
    assert.equal(v.grew, false);
    assert.equal(v.early, 5);
    assert.equal(v.late, 5);
    assert.equal(v.max, 12);
    const leaking = Array.from({ length: 40 }, (_, i) => sample(15 + i * 3, 100, 5, 50 + i));
    const t = growth(leaking, 15 * 60_000, 'resources:Timeout', (s) => counted(s, 'resources:Timeout'), 20);
    assert.equal(t.grew, true);
    assert.ok(t.late - t.early > 20);
    assert.ok(t.perHour > 15);
  });

  it('the judged segment is the longest-lived process after its own warm-up', () => {
    // Process 0 for 40 min, restarted at 40 min (process 1) until 130 min; warm-up 15 min each.
    const samples = [...Array.from({ length: 40 }, (_, i) => sample(i, 100, 5, 50, 30, 0)), ...Array.from({ length: 90 }, (_, i) => sample(40 + i, 200, 5, 50, 30, 1))];
    const judged = judgedSegment(samples, 15 * 60_000);
    assert.ok(judged.every((s) => s.process === 1));
    assert.equal(judged[0]?.atMs, 55 * 60_000);
    assert.equal(judged.length, 75);
    assert.deepEqual(judgedSegment([], 1000), []);
  });

  it('counted figures are named by source; a figure missing from a sample counts 0', () => {
    const a = sample(0, 1, 2, 3);
    const b: SoakSample = { ...sample(1, 1, 2, 3), handles: { Socket: 2, Pipe: 1 } };
    assert.deepEqual(countedNames([a, b]), ['handles:Pipe', 'handles:Socket', 'resources:Timeout', 'state:nodeLifecycle.nodes']);
    assert.equal(counted(a, 'handles:Pipe'), 0);
    assert.equal(counted(b, 'handles:Pipe'), 1);
  });

  it('the fault table groups by name and gives rates as multiples of steady state', () => {
    const rec = (name: string, regain: number | undefined, after: number, wrongful: string[] = []): FaultRecord => ({ name, startMs: 0, endMs: 30_000, regainSightMs: regain, rate: { steady: 2, during: 1, after }, rssMiBAfter: 100, wrongful });
    const rows = faultTable([rec('latency', 100, 4), rec('latency', 300, 2), { ...rec('stall', undefined, 2, ['n1']), startError: 'kubectl exited 1' }]);
    assert.equal(rows.length, 2);
    const lat = rows.find((r) => r.name === 'latency');
    assert.equal(lat?.count, 2);
    assert.equal(lat?.totalS, 60);
    assert.equal(lat?.regainSightMaxMs, 300);
    assert.equal(lat?.afterMaxX, 2);
    assert.equal(lat?.duringX, 0.5);
    const stall = rows.find((r) => r.name === 'stall');
    assert.equal(stall?.neverRegained, 1);
    assert.equal(stall?.wrongful, 1);
    assert.equal(stall?.failedToStart, 1);
    assert.equal(lat?.failedToStart, 0);
  });
});

describe('soak: /debug/state counts', () => {
  it('counts arrays by length, numeric counters as they are, informer caches by name; skips times and flags', () => {
    const counts = stateCounts({
      identity: 'x',
      nodeLifecycle: { allZonesDisrupted: false, canSeeCluster: true, nodes: [1, 2, 3], zones: [1], evictionGuards: [] },
      taintEviction: [1, 2],
      podGC: { missingNodes: [], queuedPods: 4, lastPassAt: 1_700_000_000_000 },
      informers: [{ name: 'nodes', cacheSize: 30 }, { name: 'leases', cacheSize: 29 }],
      server: { decisions: 5 },
      timers: 12,
    });
    assert.deepEqual(counts, {
      'nodeLifecycle.nodes': 3,
      'nodeLifecycle.zones': 1,
      'nodeLifecycle.evictionGuards': 0,
      taintEviction: 2,
      'podGC.missingNodes': 0,
      'podGC.queuedPods': 4,
      'informer nodes': 30,
      'informer leases': 29,
      timers: 12,
    });
  });
});

describe('time chart', () => {
  it('renders a PNG, with or without points', () => {
    const png = renderTimeChart('t', [{ title: 'a', series: [{ label: 'rss', color: [1, 2, 3], points: [{ x: 0, y: 1 }, { x: 5, y: 3 }] }], markers: [2] }, { title: 'b', series: [] }], 'minutes');
    assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
    // width 1100 in the IHDR chunk
    assert.equal(png.readUInt32BE(16), 1100);
  });
});

describe('chaos harness', () => {
  it('a second token for one ServiceAccount: kubectl\'s "already exists" is not an error, others are', () => {
    const kubectl = new Error('kubectl create clusterrolebinding nlc-chaos-noisy --clusterrole=cluster-admin --serviceaccount=nlc-chaos:noisy exited 1:\nerror: failed to create clusterrolebinding: clusterrolebindings.rbac.authorization.k8s.io "nlc-chaos-noisy" already exists\n');
    assert.equal(kubectlSaysAlreadyExists(kubectl), true);
    assert.equal(kubectlSaysAlreadyExists(new Error('Error from server (AlreadyExists): x')), true);
    assert.equal(kubectlSaysAlreadyExists(new Error('error: failed to create clusterrolebinding: the server could not find the requested resource')), false);
  });
});

describe('soak: the controller runs with the shipped Node flags', () => {
  it("passes the image's --max-semi-space-size and the default deployment's NODE_OPTIONS", () => {
    // manifests/ is the default deployment; test/integration/manifests.test.ts pins the chart's
    // default render to the same NODE_OPTIONS, and dockerfile.test.ts the ENTRYPOINT to OURS_NODE_OPTIONS.
    const manifest = readFileSync(new URL('../../manifests/03-deployment.yaml', import.meta.url), 'utf8');
    const nodeOptions = /- name: NODE_OPTIONS\s+value: "([^"]+)"/.exec(manifest)?.[1];
    assert.ok(nodeOptions, 'manifests/03-deployment.yaml sets no NODE_OPTIONS');
    assert.deepEqual([...SHIPPED_NODE_ARGS], [...OURS_NODE_OPTIONS.split(' '), ...nodeOptions.split(' ')]);
    assert.deepEqual(fullSoak(60_000).nodeArgs, [...SHIPPED_NODE_ARGS]);
    assert.deepEqual(smallSoak(60_000).nodeArgs, [...SHIPPED_NODE_ARGS]);
  });
});
