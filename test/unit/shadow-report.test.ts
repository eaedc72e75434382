/**
 * The shadow report (issue 16 item 4): what kube-controller-manager did, read from node
 * conditions, taints, Events and terminating pods, beside the shadow's decisions (recorded with the
 * real decision log on a FakeClock); verdicts, summary, history notes, rendering.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Node, Pod } from '../../src/kube/objects.js';
import { ShadowDecisionLog } from '../../src/shadow/decisions.js';
import { buildShadowReport, observeCluster, type ObservedEvent } from '../../src/shadow/report.js';
import { renderShadowReport, runShadowReportCommand, splitReportFlags, toObservedEvent } from '../../src/cli/shadow-report.js';
import { FlagError } from '../../src/cli/flags.js';
import { renderStatusText } from '../../src/cli/status.js';
import { buildStatusReport } from '../../src/explain/status.js';

const T0 = Date.UTC(2026, 10, 24, 10);
const MIN = 60_000;
const OPTS = { toleranceMs: 10_000, minHistoryMs: 10 * MIN, eventTtlMs: 60 * MIN, nowMs: T0 + 30 * MIN };

function node(name: string, over: Partial<Node> = {}): Node {
  return { name, uid: `u-${name}`, resourceVersion: '1', creationTimestamp: T0 - 86_400_000, labels: {}, unschedulable: false, taints: [], conditions: [], ...over };
}

function pod(ns: string, name: string, nodeName: string, over: Partial<Pod> = {}): Pod {
  return {
    namespace: ns,
    name,
    uid: `u-${name}`,
    resourceVersion: '1',
    nodeName,
    phase: 'Running',
    creationTimestamp: T0 - MIN,
    conditions: [],
    tolerations: [],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
    ...over,
  };
}

const event = (reason: string, component: string, kind: string, name: string, atMs: number, message = '', namespace?: string): ObservedEvent => ({
  reason,
  message,
  component,
  involved: { kind, name, ...(namespace ? { namespace } : {}) },
  atMs,
});

describe('observeCluster: what kube-controller-manager left in the cluster', () => {
  test('Unknown condition, owned taints with timeAdded, TaintManagerEviction Events, terminating pods; out of scope left out', () => {
    const nodes = [
      node('n1', {
        conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: T0 + 41_000 }],
        taints: [
          { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: T0 + 46_000 },
          { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: T0 + 41_500 },
          { key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute', timeAdded: T0 },
          { key: 'dedicated', effect: 'NoSchedule' },
        ],
      }),
      node('n2', { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', lastTransitionTime: T0 }] }),
    ];
    const pods = [
      pod('ns', 'a', 'n1'),
      pod('ns', 'b', 'n1', {
        deletionTimestamp: T0 + 106_000,
        deletionGracePeriodSeconds: 30,
        conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }],
      }),
      pod('ns', 'other', 'elsewhere'),
    ];
    const events = [
      event('TaintManagerEviction', 'taint-eviction-controller', 'Pod', 'a', T0 + 76_000, 'Marking for deletion Pod ns/a', 'ns'),
      event('TaintManagerEviction', 'taint-eviction-controller', 'Pod', 'a', T0 + 70_000, 'Cancelling deletion of Pod ns/a', 'ns'),
      event('TaintManagerEviction', 'taint-eviction-controller', 'Pod', 'other', T0 + 76_000, 'Marking for deletion Pod ns/other', 'ns'),
      event('NodeNotReady', 'node-controller', 'Node', 'n2', T0 + 5000),
      event('NodeNotReady', 'node-controller', 'Node', 'n1', T0 + 42_000),
    ];
    const got = observeCluster(nodes, pods, events).map((o) => [o.action, o.object, o.detail, o.atMs - T0, o.source]);
    assert.deepEqual(got, [
      ['mark-unknown', 'n2', 'Ready=Unknown', 5000, 'Event NodeNotReady'],
      ['mark-unknown', 'n1', 'Ready=Unknown', 41_000, 'Ready condition lastTransitionTime'],
      ['taint', 'n1', 'node.kubernetes.io/unreachable:NoSchedule', 41_500, 'taint timeAdded'],
      ['taint', 'n1', 'node.kubernetes.io/unreachable:NoExecute', 46_000, 'taint timeAdded'],
      ['delete-pod', 'ns/a', '', 76_000, 'Event TaintManagerEviction'],
      ['delete-pod', 'ns/b', '', 76_000, 'pod deletionTimestamp − grace period'],
    ]);
  });

  test('toObservedEvent takes eventTime, else firstTimestamp, and the reporting component', () => {
    const e = toObservedEvent({
      metadata: { name: 'x' },
      involvedObject: { kind: 'Pod', name: 'a', namespace: 'ns' },
      reason: 'TaintManagerEviction',
      message: 'Marking for deletion Pod ns/a',
      source: { component: 'taint-eviction-controller' },
      firstTimestamp: new Date(T0),
    });
    assert.deepEqual(e, { reason: 'TaintManagerEviction', message: 'Marking for deletion Pod ns/a', component: 'taint-eviction-controller', involved: { kind: 'Pod', name: 'a', namespace: 'ns' }, atMs: T0 });
    assert.equal(toObservedEvent({ metadata: {}, involvedObject: {} }), undefined);
  });
});

describe('buildShadowReport: side by side', () => {
  function shadowRun(): ShadowDecisionLog {
    const clock = new FakeClock(T0);
    const log = new ShadowDecisionLog({ clock, log: silentLogger });
    clock.set(T0 + 43_000);
    log.record('node-lifecycle-controller', 'mark-unknown', { kind: 'Node', name: 'n1' }, 'Ready=Unknown', 'Ready was True', 'n1');
    log.record('node-lifecycle-controller', 'taint', { kind: 'Node', name: 'n1' }, 'node.kubernetes.io/unreachable:NoSchedule', 'Ready=Unknown', 'n1');
    clock.set(T0 + 63_000);
    log.record('node-lifecycle-controller', 'taint', { kind: 'Node', name: 'n1' }, 'node.kubernetes.io/unreachable:NoExecute', 'Ready=Unknown', 'n1');
    log.record('node-lifecycle-controller', 'taint', { kind: 'Node', name: 'n1' }, 'node.kubernetes.io/unreachable:NoExecute', 'again', 'n1');
    clock.set(T0 + 93_000);
    log.record('taint-eviction-controller', 'delete-pod', { kind: 'Pod', namespace: 'ns', name: 'c', uid: 'u-c' }, 'graceful delete', 'NoExecute not tolerated', 'n1');
    log.record('pod-garbage-collector-controller', 'force-delete', { kind: 'Pod', namespace: 'ns', name: 'd', uid: 'u-d' }, 'grace 0', 'node out of service', 'n1');
    clock.set(T0 + 20 * MIN);
    return log;
  }
  const observed = [
    { atMs: T0 + 41_000, action: 'mark-unknown' as const, kind: 'Node' as const, object: 'n1', detail: 'Ready=Unknown', source: 'cond' },
    { atMs: T0 + 41_500, action: 'taint' as const, kind: 'Node' as const, object: 'n1', detail: 'node.kubernetes.io/unreachable:NoSchedule', source: 'taint' },
    { atMs: T0 + 46_000, action: 'taint' as const, kind: 'Node' as const, object: 'n1', detail: 'node.kubernetes.io/unreachable:NoExecute', source: 'taint' },
    { atMs: T0 + 76_000, action: 'delete-pod' as const, kind: 'Pod' as const, object: 'ns/a', detail: '', source: 'event' },
    { atMs: T0 - MIN, action: 'taint' as const, kind: 'Node' as const, object: 'n9', detail: 'node.kubernetes.io/not-ready:NoExecute', source: 'before the window' },
  ];

  test('verdicts: agree within the tolerance, ours later beyond it, KCM only, ours only, not compared; earliest of repeats', () => {
    const r = buildShadowReport(shadowRun().state(), observed, OPTS);
    assert.deepEqual(
      r.nodes.map((x) => [x.object, x.action, x.diffMs, x.verdict]),
      [
        ['n1', 'mark Unknown', 2000, 'agree'],
        ['n1', 'taint node.kubernetes.io/unreachable:NoSchedule', 1500, 'agree'],
        ['n1', 'taint node.kubernetes.io/unreachable:NoExecute', 17_000, 'ours later'],
      ],
    );
    assert.deepEqual(
      r.pods.map((x) => [x.object, x.action, x.verdict, x.node]),
      [
        ['ns/a', 'delete pod', 'KCM only', undefined],
        ['ns/c', 'delete pod', 'ours only', 'n1'],
        ['ns/d', 'force-delete grace 0', 'not compared', 'n1'],
      ],
    );
    assert.deepEqual(
      { ...r.summary },
      { rows: 6, disagreements: 3, agree: 2, 'ours later': 1, 'ours earlier': 0, 'KCM only': 1, 'ours only': 1, 'not compared': 1 },
    );
    assert.equal(r.enoughHistory, true);
    assert.deepEqual(r.window, { fromMs: T0, toMs: T0 + 20 * MIN, lengthMs: 20 * MIN });
  });

  test('a wider tolerance turns "ours later" into agreement; never the other way round', () => {
    const r = buildShadowReport(shadowRun().state(), observed, { ...OPTS, toleranceMs: 20_000 });
    assert.equal(r.nodes.every((x) => x.verdict === 'agree'), true);
  });

  test('without enough history it says so and gives the window it has', () => {
    const clock = new FakeClock(T0);
    const log = new ShadowDecisionLog({ clock, log: silentLogger, capacity: 1 });
    clock.advance(60_000);
    log.record('node-lifecycle-controller', 'taint', { kind: 'Node', name: 'n1' }, 'k:NoExecute', 'x');
    clock.advance(60_000);
    log.record('node-lifecycle-controller', 'taint', { kind: 'Node', name: 'n2' }, 'k:NoExecute', 'x');
    clock.advance(60_000);
    const r = buildShadowReport(log.state(), [], { ...OPTS, nowMs: T0 + 3 * MIN });
    assert.equal(r.enoughHistory, false);
    assert.deepEqual(r.window, { fromMs: T0 + 2 * MIN, toMs: T0 + 3 * MIN, lengthMs: MIN });
    assert.ok(r.notes.some((n) => n.includes('1 older decisions are lost')), r.notes.join('\n'));
    assert.ok(r.notes.some((n) => n.includes('not enough history: the shadow has recorded for 1m00s (less than --min-history 10m00s)')), r.notes.join('\n'));
    assert.match(renderShadowReport(r), /Not enough history/);
  });

  test('the text has a table per node and per pod and the summary', () => {
    const text = renderShadowReport(buildShadowReport(shadowRun().state(), observed, OPTS));
    assert.match(text, /^Shadow report: 2026-11-24T10:00:00\.000Z → 2026-11-24T10:20:00\.000Z \(20m00s\), tolerance ±10\.0s$/m);
    assert.match(text, /^ {2}NODE {3}ACTION +KCM +OURS \(WOULD\) +DIFF +VERDICT$/m);
    assert.match(text, /^ {2}n1 {5}taint node\.kubernetes\.io\/unreachable:NoExecute +10:00:46\.000 +10:01:03\.000 +\+17\.0s +ours later$/m);
    assert.match(text, /^ {2}ns\/a +delete pod +10:01:16\.000 +— +KCM only$/m);
    assert.match(text, /^Summary: 6 rows: 2 agree, 1 ours later, 0 ours earlier, 1 KCM only, 1 ours only, 1 not compared; 3 disagreement\(s\)\.$/m);
  });
});

describe('status of a shadow', () => {
  test('status says the process is a --dry-run shadow and counts its would-be writes; absent otherwise', () => {
    const clock = new FakeClock(T0);
    const log = new ShadowDecisionLog({ clock, log: silentLogger });
    log.record('node-lifecycle-controller', 'taint', { kind: 'Node', name: 'n1' }, 'k:NoExecute', 'x');
    log.record('taint-eviction-controller', 'delete-pod', { kind: 'Pod', namespace: 'ns', name: 'p' }, 'graceful delete', 'x');
    const source = { kind: 'endpoint' as const, url: 'http://127.0.0.1:1/debug/state' };
    const shadowState = { ...log.state(), overlay: { nodes: 1, pods: 1, volumeAttachments: 0 } };
    const r = buildStatusReport({ identity: 'me', leader: 'me', shadow: shadowState }, source, T0);
    assert.deepEqual(r.shadow, { since: '2026-11-24T10:00:00.000Z', decisions: 2, totals: { taint: 1, 'delete-pod': 1 } });
    assert.match(renderStatusText(r), /^Shadow mode: {3}--dry-run since 2026-11-24T10:00:00\.000Z: nothing is written; 2 would-be writes \(taint 1, delete-pod 1\) \(see shadow-report\)$/m);
    assert.equal(buildStatusReport({ identity: 'me', leader: 'me' }, source, T0).shadow, undefined);
  });
});

describe('shadow-report flags', () => {
  test("its own flags are taken out (both spellings); the rest goes to status's endpoint parser", () => {
    assert.deepEqual(splitReportFlags(['--tolerance', '5s', '--endpoint=http://x', '--min-history=1h', '-o', 'json', '--node-selector=a=b']), {
      own: { 'node-selector': 'a=b', tolerance: '5s', 'min-history': '1h', 'event-ttl': '1h' },
      rest: ['--endpoint=http://x', '-o', 'json'],
    });
    assert.throws(() => splitReportFlags(['--tolerance']), (e: unknown) => e instanceof FlagError && e.flag === 'tolerance');
  });

  test('a bad duration or a positional word exits 2 (FlagError) naming the flag, before any I/O', async () => {
    const io = { out: () => undefined, err: () => undefined };
    await assert.rejects(runShadowReportCommand(['--endpoint=http://127.0.0.1:1', '--tolerance=zz'], io), (e: unknown) => e instanceof FlagError && e.flag === 'tolerance' && /"zz"/.test(e.message));
    await assert.rejects(runShadowReportCommand(['--endpoint=http://127.0.0.1:1', 'extra'], io), (e: unknown) => e instanceof FlagError && /takes no arguments/.test(e.message));
    let help = '';
    assert.equal(await runShadowReportCommand(['--help'], { out: (s) => (help += s), err: () => undefined }), 0);
    assert.match(help, /--min-history D/);
    assert.match(help, /node-lifecycle-controller-shadow unless --lease is given/);
  });
});
