/**
 * The pure parts of `status` and `explain` (issue 8): formatting helpers, the status report built
 * from a `/debug/state` document, and the pod and node explanations.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Node, Pod, Taint } from '../../src/kube/objects.js';
import type { NodeLifecycleView, ZoneView } from '../../src/nodelifecycle/controller.js';
import type { PendingPodDeletion } from '../../src/tainteviction/controller.js';
import { renderNodeExplanation, renderPodExplanation } from '../../src/cli/explain.js';
import { explainNode, explainTaint } from '../../src/explain/node.js';
import { explainPod } from '../../src/explain/pod.js';
import { asDebugState, leaderPodName, zoneName, type DebugState, type StateSource } from '../../src/explain/state.js';
import { buildStatusReport } from '../../src/explain/status.js';
import { formatDuration, formatEta, secondsFromNow } from '../../src/util/format.js';
import { renderTable, visibleLength } from '../../src/cli/inspect.js';
import { renderStatusText, runStatusCommand } from '../../src/cli/status.js';
import { FlagError } from '../../src/cli/flags.js';
import type { EvictionGuardView } from '../../src/nodelifecycle/guard.js';

const ESC = String.fromCharCode(27);
const ANSI_SEQ = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');
const NOW = Date.parse('2026-01-01T00:10:00.000Z');
const SOURCE: StateSource = { kind: 'endpoint', url: 'http://127.0.0.1:1/debug/state' };
const ZONE_A = '"region-1:zone-a"';
const ZONE_B = '"region-1:zone-b"';
const UNREACHABLE: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW - 5000 };

function zone(label: string, over: Partial<ZoneView> = {}): ZoneView {
  return { zone: label.replaceAll('"', '').replace(':', '\u0000'), zoneLabel: label, state: 'Normal', size: 4, unhealthy: 0, rate: 1, queueLength: 0, ...over };
}

function node(name: string, over: Partial<Node> = {}): Node {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: NOW - 3_600_000,
    labels: { 'topology.kubernetes.io/zone': name.includes('-b-') ? 'zone-b' : 'zone-a', 'topology.kubernetes.io/region': 'region-1' },
    unschedulable: false,
    taints: [],
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: NOW - 1000, lastTransitionTime: NOW - 3_600_000 }],
    ...over,
  };
}

function pod(name: string, nodeName: string, tolerationSeconds: number | undefined): Pod {
  return {
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    nodeName,
    phase: 'Running',
    creationTimestamp: NOW - 3_600_000,
    conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: NOW - 3_600_000 }],
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', ...(tolerationSeconds !== undefined ? { tolerationSeconds } : {}) },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', ...(tolerationSeconds !== undefined ? { tolerationSeconds } : {}) },
    ],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
  };
}

function state(nlc: Partial<NodeLifecycleView>, pending: PendingPodDeletion[] = []): DebugState {
  return {
    identity: 'host-a_1111',
    leader: 'host-a_1111',
    nodeLifecycle: { allZonesDisrupted: false, canSeeCluster: true, evictionGuards: [], zones: [], nodes: [], ...nlc },
    taintEviction: pending,
  };
}

describe('inspection formatting', () => {
  test('durations and ETAs', () => {
    assert.equal(formatDuration(850), '850ms');
    assert.equal(formatDuration(12_340), '12.3s');
    assert.equal(formatDuration(245_000), '4m05s');
    assert.equal(formatDuration(2 * 3_600_000 + 3 * 60_000), '2h03m');
    assert.equal(formatDuration(-1500), '1.5s');
    assert.equal(formatEta(NOW + 3000, NOW), 'in 3.0s');
    assert.equal(formatEta(NOW - 4000, NOW), '4.0s ago');
    assert.equal(formatEta(NOW + 20, NOW), 'now');
    assert.equal(secondsFromNow(NOW + 1234, NOW), 1.2);
    assert.equal(secondsFromNow(NOW - 1250, NOW), -1.2);
  });

  test('leader pod name and zone names', () => {
    assert.equal(leaderPodName('node-lifecycle-controller-7d9f-abcde_6f1c0e7e-1111-2222-3333-444455556666'), 'node-lifecycle-controller-7d9f-abcde');
    assert.equal(leaderPodName(''), undefined);
    assert.equal(leaderPodName('no-underscore'), undefined);
    assert.equal(zoneName('"region-1:zone-a"'), 'region-1:zone-a');
    assert.equal(zoneName('"" (nodes without zone labels)'), '"" (nodes without zone labels)');
  });

  test('asDebugState rejects documents that are not a controller state', () => {
    assert.throws(() => asDebugState([]), /JSON object/);
    assert.throws(() => asDebugState({ leader: 'x' }), /identity/);
    assert.throws(() => asDebugState({ identity: 'x', nodeLifecycle: { zones: 1 } }), /zones/);
    assert.equal(asDebugState({ identity: 'x' }).leader, '');
  });

  test('property: table columns line up whatever the cells (ANSI colours take no room)', () => {
    const cell = fc.oneof(fc.string({ maxLength: 12 }).map((s) => s.replace(/\s/g, 'x').replaceAll(ESC, 'x')), fc.constant('\x1b[31mred\x1b[0m'));
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 3, maxLength: 3 }), { maxLength: 6 }), (rows) => {
        const lines = renderTable(['a', 'bb', 'c'], rows);
        assert.equal(lines.length, rows.length + 1);
        // Every cell of column 2 starts at the same visible offset.
        const col2 = Math.max(1, ...rows.map((r) => visibleLength(r[0] ?? ''))) + 3;
        const col3 = col2 + Math.max(2, ...rows.map((r) => visibleLength(r[1] ?? ''))) + 3;
        const header = lines[0] as string;
        assert.equal(header.indexOf('BB'), col2);
        assert.equal(header.indexOf('C', col2 + 2), col3);
        rows.forEach((r, i) => {
          const plain = (lines[i + 1] as string).replace(ANSI_SEQ, '');
          if ((r[2] ?? '') !== '') assert.equal(plain.slice(col3), (r[2] as string).replace(ANSI_SEQ, ''));
        });
      }),
    );
  });
});

describe('status report', () => {
  const s = state(
    {
      zones: [
        zone(ZONE_B, { state: 'PartialDisruption', unhealthy: 3, rate: 0, queueLength: 3, next: { node: 'n-b-0', processAt: NOW - 100 }, pausedReason: 'Zone "region-1:zone-b" is PartialDisruption: 3 of 4' }),
        zone(ZONE_A, { unhealthy: 1, queueLength: 1, next: { node: 'n-a-0', processAt: NOW + 2500 } }),
      ],
    },
    [
      { pod: 'ns/p1', uid: 'u1', node: 'n-a-0', deadlineMs: NOW + 30_000, taints: ['node.kubernetes.io/unreachable:NoExecute'], reason: 'toleration runs out', state: 'scheduled' },
    ],
  );

  test('zones are sorted; the next taint skips paused zones; paused zones carry their reason', () => {
    const r = buildStatusReport(s, SOURCE, NOW);
    assert.deepEqual(r.zones.map((z) => z.zone), ['region-1:zone-a', 'region-1:zone-b']);
    assert.deepEqual(r.nextTaint, { node: 'n-a-0', zone: 'region-1:zone-a', at: new Date(NOW + 2500).toISOString(), inSeconds: 2.5 });
    assert.deepEqual(r.pausedZones, [{ zone: 'region-1:zone-b', state: 'PartialDisruption', reason: 'Zone "region-1:zone-b" is PartialDisruption: 3 of 4' }]);
    assert.equal(r.pendingDeletions[0]?.deadline, new Date(NOW + 30_000).toISOString());
    assert.equal(r.pendingDeletions[0]?.deadlineInSeconds, 30);
    assert.deepEqual(r.leader, { identity: 'host-a_1111', pod: 'host-a' });
    assert.equal(r.canSeeCluster, true);
  });

  test('a head whose time has passed is due now', () => {
    const late = state({ zones: [zone(ZONE_A, { queueLength: 1, next: { node: 'n', processAt: NOW - 5000 } })] });
    assert.equal(buildStatusReport(late, SOURCE, NOW).nextTaint?.inSeconds, 0);
  });

  test('text output names the leader, the paused reason and each pending deletion', () => {
    const text = renderStatusText(buildStatusReport(s, SOURCE, NOW));
    assert.match(text, /^Leader: +host-a_1111 +\(pod host-a\)$/m);
    assert.match(text, /region-1:zone-b +PartialDisruption +4 +3 +0 +3 +n-b-0 \(paused\)/);
    assert.match(text, /Next node due for tainting: n-a-0 in zone region-1:zone-a, in 2\.5s/);
    assert.match(text, /region-1:zone-b \(PartialDisruption\): Zone "region-1:zone-b" is PartialDisruption/);
    assert.match(text, /ns\/p1 +n-a-0 +2026-01-01T00:10:30\.000Z +in 30\.0s +scheduled/);
  });

  test('status rejects positional arguments and bad ports before any I/O', async () => {
    const io = { out: () => undefined, err: () => undefined };
    await assert.rejects(runStatusCommand(['extra', '--endpoint', 'http://127.0.0.1:1'], io), FlagError);
    await assert.rejects(runStatusCommand(['--port', '0', '--endpoint', 'http://127.0.0.1:1'], io), FlagError);
    await assert.rejects(runStatusCommand(['--endpoint', 'ftp://x'], io), FlagError);
    await assert.rejects(runStatusCommand(['--bogus'], io), FlagError);
  });
});

describe('explain pod', () => {
  test('a tolerationSeconds pod on an unreachable node: deadline = timeAdded + tolerationSeconds, computed or from the controller', () => {
    const n = node('n-a-0', { taints: [UNREACHABLE], conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] });
    const p = pod('p1', 'n-a-0', 30);
    const computed = explainPod({ pod: p, node: n, state: state({ zones: [zone(ZONE_A)] }), source: SOURCE, nowMs: NOW });
    assert.equal(computed.verdict, 'evict-at');
    assert.equal(computed.deadlineSource, 'computed');
    assert.equal(computed.deadline, new Date(NOW - 5000 + 30_000).toISOString());
    assert.equal(computed.deadlineInSeconds, 25);
    assert.equal(computed.noExecuteTaints[0]?.tolerates, '30s');
    assert.equal(computed.matchingTolerations[0]?.key, 'node.kubernetes.io/unreachable');

    const pending: PendingPodDeletion = { pod: 'ns/p1', uid: 'uid-p1', node: 'n-a-0', deadlineMs: NOW + 24_000, taints: [], reason: 'r', state: 'scheduled' };
    const fromController = explainPod({ pod: p, node: n, state: state({ zones: [zone(ZONE_A)] }, [pending]), source: SOURCE, nowMs: NOW });
    assert.equal(fromController.deadlineSource, 'controller');
    assert.equal(fromController.deadline, new Date(NOW + 24_000).toISOString());
    assert.match(renderPodExplanation(fromController), /Verdict: +evict-at +deadline 2026-01-01T00:10:24\.000Z \(in 24\.0s, controller\)/);
  });

  test('an Lt/Gt toleration matches as the controller\'s TaintTolerationComparisonOperators says (from /debug/state; unknown: off, the 1.37 default)', () => {
    const sla: Taint = { key: 'sla', value: '950', effect: 'NoExecute', timeAdded: NOW - 5000 };
    const n = node('n-a-0', { taints: [sla] });
    const p = { ...pod('p', 'n-a-0', 30), tolerations: [{ key: 'sla', operator: 'Gt', value: '750', effect: 'NoExecute' }] };
    const withGate = (on: boolean | undefined): DebugState => ({ ...state({ zones: [zone(ZONE_A)] }), ...(on === undefined ? {} : { featureGates: { TaintTolerationComparisonOperators: on } }) });
    const gateOn = explainPod({ pod: p, node: n, state: withGate(true), source: SOURCE, nowMs: NOW });
    assert.equal(gateOn.verdict, 'stays');
    assert.equal(gateOn.noExecuteTaints[0]?.tolerates, 'forever');
    assert.ok(gateOn.explanation.some((l) => /TaintTolerationComparisonOperators on/.test(l)));
    for (const off of [false, undefined]) {
      const e = explainPod({ pod: p, node: n, state: withGate(off), source: SOURCE, nowMs: NOW });
      assert.equal(e.verdict, 'evict-now', `gate ${off}`);
      assert.equal(e.noExecuteTaints[0]?.tolerates, 'not tolerated');
      assert.ok(e.explanation.some((l) => /Lt and Gt tolerations tolerate no taint/.test(l)), `gate ${off}`);
    }
  });

  test('a not-Ready node without a NoExecute taint in a paused zone: blocked, with the zone\'s reason', () => {
    const n = node('n-b-0', { conditions: [{ type: 'Ready', status: 'Unknown' }] });
    const reason = 'Zone "region-1:zone-b" is PartialDisruption: 3 of 4 nodes are not Ready';
    const e = explainPod({
      pod: pod('p2', 'n-b-0', 30),
      node: n,
      state: state({ zones: [zone(ZONE_B, { state: 'PartialDisruption', rate: 0, pausedReason: reason })] }),
      source: SOURCE,
      nowMs: NOW,
    });
    assert.equal(e.verdict, 'blocked');
    assert.deepEqual(e.blockedByPausedZone, { zone: 'region-1:zone-b', state: 'PartialDisruption', reason });
    assert.equal(e.deadline, null);
    // Ready=Unknown: the taint to come is unreachable, tolerated for the pod's 30 s.
    assert.equal(e.prospectiveTaint?.taint, 'node.kubernetes.io/unreachable:NoExecute');
    assert.equal(e.prospectiveTaint?.tolerates, '30s');
    assert.match(renderPodExplanation(e), /^Next: +node\.kubernetes\.io\/unreachable:NoExecute, tolerated for 30s/m);
  });

  test('tolerating forever, an untolerated taint, and an unbound pod', () => {
    const n = node('n-a-0', { taints: [UNREACHABLE] });
    assert.equal(explainPod({ pod: pod('p', 'n-a-0', undefined), node: n, state: undefined, source: null, nowMs: NOW }).verdict, 'stays');
    const bare = { ...pod('q', 'n-a-0', 30), tolerations: [] };
    const now = explainPod({ pod: bare, node: n, state: undefined, source: null, nowMs: NOW });
    assert.equal(now.verdict, 'evict-now');
    assert.equal(now.noExecuteTaints[0]?.tolerates, 'not tolerated');
    assert.equal(explainPod({ pod: { ...bare, nodeName: '' }, node: undefined, state: undefined, source: null, nowMs: NOW }).verdict, 'not-bound');
  });
});

describe('explain node', () => {
  test('taint reasons follow the conditions, and stale taints are called out', () => {
    const n = node('n', {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory' },
        { type: 'DiskPressure', status: 'False' },
      ],
    });
    assert.match(explainTaint({ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }, n).why, /^MemoryPressure is True \(KubeletHasInsufficientMemory\)/);
    assert.match(explainTaint({ key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }, n).why, /stale/);
    assert.match(explainTaint(UNREACHABLE, n).why, /stale: Ready is True/);
    assert.equal(explainTaint({ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }, n).managedBy, 'administrator');
    assert.equal(explainTaint({ key: 'example.com/gpu', effect: 'NoSchedule' }, n).managedBy, 'other');
  });

  test('queue position: the head is exact, the others are estimated by heartbeat order; ETA follows the rate', () => {
    const view: Partial<NodeLifecycleView> = {
      zones: [zone(ZONE_A, { unhealthy: 3, rate: 0.5, queueLength: 3, next: { node: 'n-a-2', processAt: NOW - 10 } })],
      nodes: [
        { name: 'n-a-1', zone: ZONE_A, ready: 'Unknown', probeTimestamp: NOW - 9000, queued: true },
        { name: 'n-a-2', zone: ZONE_A, ready: 'Unknown', probeTimestamp: NOW - 9500, queued: true },
        { name: 'n-a-3', zone: ZONE_A, ready: 'Unknown', probeTimestamp: NOW - 8000, queued: true },
      ],
    };
    const down = { conditions: [{ type: 'Ready', status: 'Unknown' }] };
    const head = explainNode({ node: node('n-a-2', down), lease: undefined, pods: [], state: state(view), source: SOURCE, nowMs: NOW });
    assert.deepEqual([head.queue.position, head.queue.positionExact, head.queue.etaInSeconds], [1, true, 0]);
    const third = explainNode({ node: node('n-a-3', down), lease: undefined, pods: [], state: state(view), source: SOURCE, nowMs: NOW });
    assert.deepEqual([third.queue.position, third.queue.positionExact, third.queue.etaInSeconds], [3, false, 4]);
    assert.match(renderNodeExplanation(third), /Queue: +position 3 \(estimated\), ETA in 4\.0s/);
  });

  test('heartbeat ages and pending deletions on the node', () => {
    const nv = { name: 'n-a-0', zone: ZONE_A, ready: 'True', probeTimestamp: NOW - 1500, probeDeadline: NOW + 4500, queued: false };
    const e = explainNode({
      node: node('n-a-0'),
      lease: { namespace: 'kube-node-lease', name: 'n-a-0', resourceVersion: '1', renewTime: NOW - 1200 },
      pods: [pod('p', 'n-a-0', 30)],
      state: state({ zones: [zone(ZONE_A)], nodes: [nv] }, [{ pod: 'ns/p', uid: 'u', node: 'n-a-0', deadlineMs: NOW + 7000, taints: [], reason: 'r', state: 'scheduled' }]),
      source: SOURCE,
      nowMs: NOW,
    });
    assert.equal(e.heartbeat.leaseAgeSeconds, 1.2);
    assert.equal(e.heartbeat.probeAgeSeconds, 1.5);
    assert.equal(e.heartbeat.probeDeadlineInSeconds, 4.5);
    assert.deepEqual(e.pods, { total: 1, terminating: 0, pendingDeletions: 1, nextDeadline: new Date(NOW + 7000).toISOString(), nextDeadlineInSeconds: 7 });
    assert.match(e.explanation[0] ?? '', /^Healthy: Ready=True, last heartbeat 1\.5s ago; marked Unknown in 4\.5s/);
  });

  test('a not-Ready node in a paused zone says it is not tainted, and why', () => {
    const reason = 'Zone "region-1:zone-b" is PartialDisruption: 3 of 4 nodes are not Ready';
    const e = explainNode({
      node: node('n-b-0', { conditions: [{ type: 'Ready', status: 'Unknown' }] }),
      lease: undefined,
      pods: undefined,
      state: state({
        zones: [zone(ZONE_B, { state: 'PartialDisruption', unhealthy: 3, rate: 0, queueLength: 3, pausedReason: reason })],
        nodes: [{ name: 'n-b-0', zone: ZONE_B, ready: 'Unknown', queued: true }],
      }),
      source: SOURCE,
      nowMs: NOW,
    });
    assert.equal(e.zone?.pausedReason, reason);
    assert.equal(e.queue.etaInSeconds, null);
    assert.ok(e.explanation.some((l) => l === `NOT tainted: NoExecute tainting in zone region-1:zone-b is paused: ${reason}`));
  });
});

describe('eviction guards (issue 16) in status and explain', () => {
  const REASON = 'Eviction circuit open: 3 of 8 nodes are not Ready (38%), more than --max-unhealthy-nodes=25% allows (2).';
  const guard: EvictionGuardView = {
    guard: 'max-unhealthy-nodes',
    open: true,
    openedAt: NOW - 20_000,
    count: 3,
    limit: 2,
    total: 8,
    settings: '--max-unhealthy-nodes=25%',
    reason: REASON,
  };
  const withGuards = (nlc: Partial<NodeLifecycleView>, guards: EvictionGuardView[]): DebugState => state({ ...nlc, evictionGuards: guards });

  test('status: an open guard is reported with its reason, and no node is due for tainting', () => {
    const s = withGuards({ zones: [zone(ZONE_A, { unhealthy: 3, queueLength: 1, next: { node: 'n-a-0', processAt: NOW } })] }, [
      guard,
      { guard: 'storm', open: false, count: 0, limit: 1, total: 8, settings: '--storm-threshold=1', reason: 'No storm' },
    ]);
    const r = buildStatusReport(s, SOURCE, NOW);
    assert.equal(r.nextTaint, null);
    assert.deepEqual(r.evictionGuards.map((g) => [g.guard, g.open, g.openedAt]), [
      ['max-unhealthy-nodes', true, new Date(NOW - 20_000).toISOString()],
      ['storm', false, null],
    ]);
    const text = renderStatusText(r);
    assert.ok(text.includes(`Eviction circuit OPEN (max-unhealthy-nodes) since ${new Date(NOW - 20_000).toISOString()}: ${REASON}`), text);
    assert.match(text, /Eviction guard storm: closed, 0\/1/);
    assert.match(text, /queued nodes wait for the eviction circuit to close/);
    assert.deepEqual(buildStatusReport(state({}), SOURCE, NOW).evictionGuards, [], 'none when the guards are off');
  });

  test('explain pod and node: a not-Ready untainted node is blocked by the open guard, with its reason', () => {
    const n = node('n-a-0', { conditions: [{ type: 'Ready', status: 'Unknown' }] });
    const s = withGuards({ zones: [zone(ZONE_A, { unhealthy: 3 })], nodes: [{ name: 'n-a-0', zone: ZONE_A, ready: 'Unknown', queued: true }] }, [guard]);
    const p = explainPod({ pod: pod('p', 'n-a-0', 30), node: n, state: s, source: SOURCE, nowMs: NOW });
    assert.equal(p.verdict, 'blocked');
    assert.deepEqual(p.blockedByPausedZone, { zone: 'region-1:zone-a', state: 'Normal', reason: REASON, guard: 'max-unhealthy-nodes' });
    assert.match(renderPodExplanation(p), /Blocked: +eviction circuit open \(max-unhealthy-nodes\)/);
    const e = explainNode({ node: n, lease: undefined, pods: undefined, state: s, source: SOURCE, nowMs: NOW });
    assert.ok(e.explanation.includes(`NOT tainted: NoExecute tainting in zone region-1:zone-a is paused: ${REASON}`), e.explanation.join('\n'));
    const closed = withGuards({ zones: [zone(ZONE_A)], nodes: [] }, [{ ...guard, open: false }]);
    assert.notEqual(explainPod({ pod: pod('p', 'n-a-0', 30), node: n, state: closed, source: SOURCE, nowMs: NOW }).verdict, 'blocked');
  });
});
