/**
 * The demo's pure output (issue 8): live view layout, diffs into log lines, the summary, and flag
 * parsing.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  DEMO_STEPS,
  diffControllerView,
  diffNodes,
  formatLogLine,
  kubectlCommands,
  renderLiveView,
  renderSummary,
  tPlus,
  truncateVisible,
  type DemoSummary,
  type LiveModel,
  type ObservedNode,
} from '@node-lifecycle-controller/sim/demo-view';
import { parseDemoFlags, parseScenario } from '@node-lifecycle-controller/sim/demo';
import { FlagError } from '../../src/cli/flags.js';
import { visibleLength } from '../../src/cli/inspect.js';
import type { ZoneView } from '../../src/nodelifecycle/controller.js';

const T0 = Date.parse('2026-01-01T12:00:00.000Z');

function zone(label: string, over: Partial<ZoneView> = {}): ZoneView {
  return { zone: label, zoneLabel: `"${label}"`, state: 'Normal', size: 3, unhealthy: 0, rate: 1, queueLength: 0, ...over };
}

const nodes: ObservedNode[] = [
  { name: 'd-zone-a-0', zone: 'zone-a', ready: 'Unknown', taints: ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule'] },
  { name: 'd-zone-a-1', zone: 'zone-a', ready: 'True', taints: [] },
  { name: 'd-zone-a-10', zone: 'zone-a', ready: 'True', taints: [] },
  { name: 'd-zone-b-0', zone: 'zone-b', ready: 'True', taints: ['node.kubernetes.io/memory-pressure:NoSchedule'] },
];

function model(over: Partial<LiveModel> = {}): LiveModel {
  return {
    title: 'demo',
    phase: '[1/5] power-loss',
    originMs: T0,
    nowMs: T0 + 12_300,
    zones: [zone('region-1:zone-b'), zone('region-1:zone-a', { state: 'PartialDisruption', unhealthy: 2, rate: 0, pausedReason: 'zone paused because reasons' })],
    nodes,
    pending: [{ pod: 'ns/p', uid: 'u', node: 'd-zone-a-0', deadlineMs: T0 + 20_000, taints: [], reason: 'r', state: 'scheduled' }],
    log: Array.from({ length: 40 }, (_, i) => ({ atMs: T0 + i * 100, kind: 'event' as const, text: `line ${i}` })),
    ...over,
  };
}

describe('live view', () => {
  test('zones sorted with their pause reason, a node strip per zone, not-Ready or tainted nodes listed, the newest log lines last', () => {
    const lines = renderLiveView(model(), { columns: 200, rows: 40, color: false });
    assert.ok(lines.length <= 39);
    const text = lines.join('\n');
    assert.match(text, /T\+12\.3s/);
    assert.ok(text.indexOf('region-1:zone-a') < text.indexOf('region-1:zone-b'));
    assert.match(text, /region-1:zone-a +PartialDisruption +3 +2 +0 +0 +zone paused because reasons/);
    assert.match(text, /zone-a +◌●● +2\/3 Ready/);
    assert.match(text, /d-zone-a-0 +Unknown +node\.kubernetes\.io\/unreachable:NoExecute, node\.kubernetes\.io\/unreachable:NoSchedule/);
    assert.match(text, /d-zone-b-0 +Ready +node\.kubernetes\.io\/memory-pressure:NoSchedule/);
    assert.match(text, /PENDING POD DELETIONS 1 +next: ns\/p in 7\.7s/);
    assert.match(lines[lines.length - 1] as string, /line 39$/);
    assert.ok(!lines.some((l) => l.endsWith(' line 0')), 'old log lines scroll away');
  });

  test('property: every line fits the terminal width and the view fits its height (at least 10 rows)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 200 }), fc.integer({ min: 5, max: 80 }), fc.boolean(), (columns, rows, color) => {
        const lines = renderLiveView(model(), { columns, rows, color });
        for (const l of lines) assert.ok(visibleLength(l) <= Math.max(40, columns), `"${l}" is wider than ${columns}`);
        assert.ok(lines.length <= Math.max(rows - 1, 10));
      }),
    );
  });

  test('truncateVisible keeps colours and cuts by visible width', () => {
    assert.equal(truncateVisible('abcdef', 4), 'abc…');
    assert.equal(truncateVisible('abc', 4), 'abc');
    const cut = truncateVisible('\x1b[31mabcdef\x1b[0m', 4);
    assert.equal(visibleLength(cut), 4);
    assert.ok(cut.startsWith('\x1b[31mabc'));
  });

  test('plain log lines are timestamped relative to the scenario start', () => {
    assert.equal(tPlus(T0 + 7100, T0), 'T+7.1s');
    assert.equal(tPlus(T0 - 500, T0), 'T-0.5s');
    assert.equal(formatLogLine({ atMs: T0 + 7100, kind: 'step', text: 'power-loss' }, T0), '12:00:07.100Z   T+7.1s  ==> power-loss');
  });
});

describe('diffs into log lines', () => {
  test('Ready transitions and taints added or removed', () => {
    const before = new Map(nodes.map((n) => [n.name, n]));
    const after = new Map(before);
    after.set('d-zone-a-0', { ...(before.get('d-zone-a-0') as ObservedNode), ready: 'True', taints: ['node.kubernetes.io/unreachable:NoSchedule'] });
    after.set('d-zone-a-1', { ...(before.get('d-zone-a-1') as ObservedNode), taints: ['node.kubernetes.io/memory-pressure:NoSchedule'] });
    assert.deepEqual(
      diffNodes(before, after, T0).map((e) => `${e.kind} ${e.text}`),
      [
        'ok d-zone-a-0  Ready Unknown → True',
        'taint d-zone-a-0  - taint node.kubernetes.io/unreachable:NoExecute',
        'taint d-zone-a-1  + taint node.kubernetes.io/memory-pressure:NoSchedule',
      ],
    );
  });

  test('zone state, rate and pause changes, and newly scheduled deletions', () => {
    const a = zone('region-1:zone-a');
    const before = { zones: [a], pending: [] };
    const after = {
      zones: [{ ...a, state: 'PartialDisruption' as const, unhealthy: 2, rate: 0, pausedReason: 'because' }],
      pending: [{ pod: 'ns/p', uid: 'u', node: 'n', deadlineMs: T0 + 10_000, taints: [], reason: 'toleration runs out', state: 'scheduled' as const }],
    };
    assert.deepEqual(diffControllerView(undefined, after, T0), []);
    assert.deepEqual(
      diffControllerView(before, after, T0).map((e) => e.text),
      [
        'zone region-1:zone-a  Normal → PartialDisruption (2/3 not Ready)',
        'zone region-1:zone-a  tainting rate 1 → 0 node/s',
        'zone region-1:zone-a  tainting paused: because',
        'pod ns/p  deletion due in 10.0s (12:00:10.000Z): toleration runs out',
      ],
    );
    assert.deepEqual(diffControllerView(after, after, T0 + 1), []);
  });
});

describe('summary', () => {
  test('lists each step with its lines and the kubectl commands for the cluster', () => {
    const s: DemoSummary = {
      ok: false,
      error: 'boom',
      interrupted: false,
      prefix: 'demo',
      namespace: 'nlc-demo',
      kubeconfig: '/k',
      controllerEndpoint: null,
      controllerLog: '/tmp/log',
      startedAt: '',
      scenarioStartedAt: '2026-01-01T12:00:00.000Z',
      durationSeconds: 61,
      steps: [
        { step: 'power-loss', ok: true, error: null, tStart: 0, tEnd: 20, nodes: ['n'], lines: ['n lost power'], taints: [], evictions: [], pending: [], pausedReason: null, forceDeletedPods: [], detachedVolumeAttachments: [] },
        { step: 'recover', ok: false, error: 'boom', tStart: 20, tEnd: 21, nodes: ['n'], lines: [], taints: [], evictions: [], pending: [], pausedReason: null, forceDeletedPods: [], detachedVolumeAttachments: [] },
      ],
      kubectl: kubectlCommands('/k', 'demo', 'nlc-demo', ['n']),
      kept: true,
    };
    const text = renderSummary(s).join('\n');
    assert.match(text, /^Summary \(FAILED\): 2 step\(s\) in 1m01s/);
    assert.match(text, /✓ 1\. power-loss +\(T\+0\.0s … T\+20\.0s\)\n +n lost power/);
    assert.match(text, /✗ 2\. recover[^\n]*\n +failed: boom/);
    assert.match(text, /export KUBECONFIG=\/k/);
    assert.match(text, /kubectl get nodes -l nlc\.sim\/fleet=demo -o custom-columns=/);
    assert.match(text, /kubectl describe node n/);
    for (const reason of ['TaintManagerEviction', 'NodeNotReady', 'ZoneEvictionPaused', 'ForceDeletedOutOfService', 'ForceDetachedOutOfService']) {
      assert.ok(text.includes(`--field-selector reason=${reason}`), reason);
    }
  });
});

describe('demo flags', () => {
  test('scenario lists run in canonical order; unknown steps and impossible fleets are rejected', async () => {
    assert.deepEqual(parseScenario('memory-pressure,power-loss'), ['power-loss', 'memory-pressure']);
    assert.deepEqual(parseScenario('node-affinity,node-pressure,memory-pressure'), ['memory-pressure', 'node-pressure', 'node-affinity']);
    assert.equal(parseScenario('all').length, 7);
    assert.throws(() => parseScenario('explode'), FlagError);
    assert.throws(() => parseScenario(' , '), FlagError);
    await assert.rejects(parseDemoFlags(['--scenario', 'recover']), /recover needs power-loss/);
    await assert.rejects(parseDemoFlags(['--scenario', 'zone-outage', '--nodes-per-zone', '3']), /nodes-per-zone >= 4/);
    await assert.rejects(parseDemoFlags(['--zones', '0']), FlagError);
    await assert.rejects(parseDemoFlags(['--prefix', 'Bad_Prefix']), FlagError);
    await assert.rejects(parseDemoFlags(['--nope']), FlagError);
    const o = await parseDemoFlags(['--nodes-per-zone', '4', '--scenario', 'power-loss,recover', '--plain', '--keep']);
    assert.ok(o);
    assert.deepEqual([o.zones, o.nodesPerZone, o.podsPerNode, o.steps, o.plain, o.keep, o.wait, o.prefix], [3, 4, 5, ['power-loss', 'recover'], true, true, false, 'demo']);
    assert.match(o.logFile, /node-lifecycle-controller-demo-demo\.log$/);
  });
});

test('README\'s "What npm run demo shows" lists every step the demo plays, in order, and counts them right (issue 56)', () => {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## What `npm run demo` shows'), readme.indexOf('On a terminal it redraws'));
  const listed = [...section.matchAll(/^(\d+)\. \*\*([a-z-]+)\*\*/gm)].map((m) => [Number(m[1]), m[2]]);
  assert.deepEqual(listed, DEMO_STEPS.map((step, i) => [i + 1, step]));
  const words = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
  assert.match(section, new RegExp(`plays ${words[DEMO_STEPS.length - 1]} steps`), `the count says ${DEMO_STEPS.length}`);
});
