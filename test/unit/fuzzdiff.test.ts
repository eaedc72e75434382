/**
 * `npm run fuzz:diff`'s pure parts: the seeded scenario generator (deterministic, self-consistent,
 * replayable through JSON), the comparison of kube-controller-manager's decisions with the shadow's
 * (tolerance, pairing, documented differences, violations) and the campaign report.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ShadowDecision } from '../../src/shadow/decisions.js';
import { compareDecisions, fromShadow, postOutageEndMs, reconnectWindowMs, type CompareContext } from '../fuzzdiff/compare.js';
import type { Decision } from '../fuzzdiff/recorder.js';
import { buildCampaignReport, renderMarkdown } from '../fuzzdiff/report.js';
import { generateScenarios, parseScenario, type Step } from '../fuzzdiff/scenario.js';

const T = 1_800_000_000_000;
const ctx = (over: Partial<CompareContext> = {}): CompareContext => ({
  toleranceMs: 2000,
  graceMs: 8000,
  maxTolerationMs: 20_000,
  controllerRestarts: [],
  apiserverRestarts: [],
  tolerationEdits: [],
  endMs: T + 120_000,
  ...over,
});
const d = (atS: number, action: Decision['action'], object: string, detail = ''): Decision => ({ atMs: T + atS * 1000, action, object, detail });

describe('scenario generator', () => {
  test('the same seed gives the same scenarios, another seed others; JSON round-trips', () => {
    const a = generateScenarios(7, 4, 'normal');
    assert.deepEqual(generateScenarios(7, 4, 'normal'), a);
    assert.notDeepEqual(generateScenarios(8, 4, 'normal'), a);
    assert.deepEqual(a.map((s) => s.id), ['7/0', '7/1', '7/2', '7/3']);
    for (const s of a) assert.deepEqual(parseScenario(JSON.stringify(s)), s);
  });

  test('timelines are self-consistent: sorted, within the duration, one fault per node at a time, restarts at most once, every scenario has a node fault', () => {
    for (const size of ['small', 'normal'] as const) {
      for (const s of generateScenarios(3, 60, size)) {
        const nodes = s.zones * s.nodesPerZone;
        assert.ok(s.graceS >= 6 && s.graceS <= 10 && nodes >= 4 && nodes <= 9, JSON.stringify(s));
        assert.deepEqual(s.steps.map((x) => x.atS), [...s.steps.map((x) => x.atS)].sort((x, y) => x - y));
        assert.ok(s.steps.every((x) => x.atS >= 0 && x.atS < s.durationS));
        assert.ok(s.steps.some((x) => x.op === 'kill' || x.op === 'pause-lease' || x.op === 'not-ready'), `${s.id} has a node fault`);
        assert.ok(s.steps.filter((x) => x.op === 'restart-apiserver').length <= 1);
        assert.ok(s.steps.filter((x) => x.op === 'restart-controllers').length <= 1);
        const faulty = new Map<number, string>();
        const start: Record<string, string> = { kill: 'revive', 'pause-lease': 'resume-lease', 'not-ready': 'ready' };
        for (const st of s.steps.filter((x): x is Extract<Step, { node: number }> => 'node' in x)) {
          if (st.op in start) {
            // A node's next fault starts only after its previous one ended.
            assert.ok(!faulty.has(st.node), `${s.id}: node ${st.node} faulted twice at ${st.atS}`);
            faulty.set(st.node, start[st.op] as string);
          } else if (st.op === faulty.get(st.node)) {
            faulty.delete(st.node);
          }
        }
      }
    }
  });

  test('parseScenario rejects other documents and unknown nodes', () => {
    assert.throws(() => parseScenario('{"version":2,"steps":[]}'), /version-1/);
    const s = generateScenarios(1, 1, 'small')[0];
    assert.ok(s);
    assert.throws(() => parseScenario(JSON.stringify({ ...s, steps: [{ atS: 1, op: 'kill', node: 99 }] })), /node 99/);
  });
});

describe('comparison', () => {
  test('within the tolerance agrees, later is "ours later", earlier beyond upstream\'s own window is a violation', () => {
    // Tolerance 2 s = one 1 s monitor period + 1 s; upstream's window (node-lifecycle.md #1/#2) 3 periods + 1 s = 4 s.
    const rows = compareDecisions(
      [d(10, 'mark-unknown', 'n1'), d(10, 'taint', 'n1', 'node.kubernetes.io/unreachable:NoExecute'), d(30, 'delete-pod', 'ns/p1'), d(30, 'delete-pod', 'ns/p2')],
      [d(8.5, 'mark-unknown', 'n1'), d(15, 'taint', 'n1', 'node.kubernetes.io/unreachable:NoExecute'), d(25, 'delete-pod', 'ns/p1'), d(27, 'delete-pod', 'ns/p2')],
      ctx(),
    );
    assert.deepEqual(
      rows.map((r) => [r.action, r.object, r.outcome, r.violation, r.diffMs]),
      [
        ['mark-unknown', 'n1', 'agree', false, -1500],
        ['taint', 'n1', 'ours later', false, 5000],
        ['delete-pod', 'ns/p1', 'ours earlier', true, -5000],
        ['delete-pod', 'ns/p2', 'ours earlier', false, -3000],
      ],
    );
    assert.match(rows.find((r) => r.object === 'ns/p2')?.difference ?? '', /node-lifecycle\.md #1\/#2/);
  });

  test('a deletion ours alone made is explained only when upstream untainted the node within its window after it', () => {
    const untaint = (atS: number): Decision => ({ ...d(atS, 'untaint', 'n1', 'node.kubernetes.io/unreachable:NoExecute'), node: 'n1' });
    const del = (atS: number, object: string): Decision => ({ ...d(atS, 'delete-pod', object), node: 'n1' });
    const near = compareDecisions([untaint(31)], [del(29, 'ns/p1')], ctx());
    assert.match(near.find((r) => r.action === 'delete-pod')?.difference ?? '', /recovered between/);
    const far = compareDecisions([untaint(40)], [del(29, 'ns/p1')], ctx());
    assert.equal(far.find((r) => r.action === 'delete-pod')?.violation, true);
  });

  test('a deletion ours never decides is a lost eviction; one ours decides alone is a violation', () => {
    const rows = compareDecisions([d(30, 'delete-pod', 'ns/p1')], [d(40, 'delete-pod', 'ns/p2')], ctx());
    assert.deepEqual(
      rows.map((r) => [r.object, r.outcome, r.violation]),
      [
        ['ns/p1', 'KCM only', true],
        ['ns/p2', 'ours only', true],
      ],
    );
  });

  test('pairs each decision with the nearest one of the same action, object and detail', () => {
    const taint = 'node.kubernetes.io/unreachable:NoExecute';
    const rows = compareDecisions([d(10, 'taint', 'n1', taint), d(50, 'taint', 'n1', taint)], [d(51, 'taint', 'n1', taint), d(11, 'taint', 'n1', taint)], ctx());
    assert.deepEqual(rows.map((r) => [r.outcome, r.diffMs]), [['agree', 1000], ['agree', 1000]]);
  });

  test('documented differences explain rows, and name their docs entry', () => {
    const rows = compareDecisions(
      [d(60, 'delete-pod', 'ns/p1'), d(31, 'taint', 'n1', 'node.kubernetes.io/unreachable:NoExecute'), d(40, 'force-delete', 'ns/p2')],
      [d(5, 'mark-pod-not-ready', 'ns/p3'), d(45, 'delete-pod', 'ns/p1'), d(25, 'force-delete', 'ns/p2')],
      ctx({ controllerRestarts: [{ fromMs: T + 20_000, toMs: T + 30_000 }] }),
    );
    const by = new Map(rows.map((r) => [r.object + r.action, r]));
    assert.match(by.get('ns/p3mark-pod-not-ready')?.difference ?? '', /node-lifecycle\.md #14/);
    assert.match(by.get('ns/p1delete-pod')?.difference ?? '', /taint-eviction\.md #1/);
    assert.match(by.get('n1taint')?.difference ?? '', /node-lifecycle\.md #6/);
    assert.match(by.get('ns/p2force-delete')?.difference ?? '', /out-of-service\.md #10/);
    assert.ok(rows.every((r) => !r.violation));
  });

  test('a restart explains an earlier deletion only when KCM deleted after the restart began and ours after it ended', () => {
    const rows = compareDecisions([d(60, 'delete-pod', 'ns/p1')], [d(45, 'delete-pod', 'ns/p1')], ctx({ controllerRestarts: [{ fromMs: T + 50_000, toMs: T + 55_000 }] }));
    assert.equal(rows[0]?.violation, true, 'ours decided before the restart ended: not explained');
  });

  test('decisions near the end are "cut off", untaints are never violations', () => {
    const rows = compareDecisions([d(118, 'delete-pod', 'ns/p1'), d(20, 'untaint', 'n1', 'node.kubernetes.io/not-ready:NoSchedule')], [d(119, 'taint', 'n2', 'node.kubernetes.io/unreachable:NoExecute')], ctx());
    assert.deepEqual(rows.map((r) => [r.outcome, r.violation]), [['untaint', false], ['cut off', false], ['cut off', false]]);
  });

  test("700/11: a lone mark of ours within upstream's detection window (3 monitor periods + 1 s) before the end is cut off; one before that window is a violation; a lone detach gets only the tolerance", () => {
    // toleranceMs 2000 → monitor period 1 s → upstream's window 3 × 1 s + 1 s = 4 s; endMs = T + 120 s.
    const rows = compareDecisions([], [d(116.5, 'mark-unknown', 'n1'), d(115, 'mark-unknown', 'n2'), d(116.5, 'detach', 'csi-x')], ctx());
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.deepEqual([by.get('n1')?.outcome, by.get('n1')?.violation], ['cut off', false]);
    assert.deepEqual([by.get('n2')?.outcome, by.get('n2')?.violation], ['ours only', true]);
    assert.deepEqual([by.get('csi-x')?.outcome, by.get('csi-x')?.violation], ['ours only', true]);
  });

  test("700/19: the all-zones stop race: ours' NoExecute taint its own stop removed at once, and upstream's taint just before its own stop, are explained; the same node's taint after the stop pairs with upstream's", () => {
    // Campaign scenario 700/19 (2 zones × 2 nodes, all four killed, zone a revived at +23 s), times in s
    // from play, monitor period 2 s (tolerance 3 s, upstream's window 7 s).
    const NS = 'node.kubernetes.io/unreachable:NoSchedule';
    const NE = 'node.kubernetes.io/unreachable:NoExecute';
    const nodeZones = { a0: 'a', a1: 'a', b0: 'b', b1: 'b' };
    const on = (side: Decision[]): Decision[] => side.map((x) => ({ ...x, node: x.object }));
    const ours = on([
      d(16.51, 'mark-unknown', 'a0'), d(16.62, 'taint', 'a0', NS), d(16.69, 'taint', 'a0', NE), d(16.8, 'mark-unknown', 'a1'), d(16.8, 'taint', 'a1', NS),
      d(17.75, 'mark-unknown', 'b0'), d(17.86, 'taint', 'b0', NS), d(18.12, 'taint', 'b0', NE), d(18.25, 'mark-unknown', 'b1'),
      d(18.29, 'untaint', 'a0', NE), d(18.29, 'untaint', 'b0', NE), d(18.36, 'taint', 'b1', NS),
      d(23.12, 'untaint', 'a0', NS), d(23.34, 'untaint', 'a1', NS), d(25.11, 'taint', 'b1', NE), d(27.2, 'taint', 'b0', NE),
    ]);
    const kcm = on([
      d(16.11, 'mark-unknown', 'a0'), d(16.11, 'taint', 'a0', NS), d(16.11, 'taint', 'a0', NE), d(18.5, 'mark-unknown', 'a1'), d(18.5, 'mark-unknown', 'b0'),
      d(18.77, 'mark-unknown', 'b1'), d(18.83, 'taint', 'a1', NS), d(18.86, 'taint', 'b0', NS), d(18.94, 'taint', 'b1', NS), d(19.11, 'taint', 'a1', NE),
      d(19.24, 'untaint', 'a0', NE), d(23.26, 'untaint', 'a0', NS), d(23.33, 'untaint', 'a1', NS), d(25.23, 'untaint', 'a1', NE),
      d(25.27, 'taint', 'b0', NE), d(27.32, 'taint', 'b1', NE),
    ]);
    const c = ctx({ toleranceMs: 3000, nodeZones });
    const rows = compareDecisions(kcm, ours, c);
    assert.deepEqual(rows.filter((r) => r.violation), []);
    const ne = rows.filter((r) => r.action === 'taint' && r.detail === NE);
    const raced = ne.find((r) => r.object === 'b0' && r.oursAtMs === T + 18_120);
    assert.equal(raced?.outcome, 'ours only');
    assert.match(raced?.difference ?? '', /all-zones stop race: ours/);
    assert.deepEqual([ne.find((r) => r.object === 'b0' && r.oursAtMs === T + 27_200)?.outcome, ne.find((r) => r.object === 'b1')?.outcome], ['agree', 'agree']);
    assert.match(ne.find((r) => r.object === 'a1')?.difference ?? '', /all-zones stop race: upstream/);
    // Without the stop (b1 never marked, so not every node is down), ours' quick taint is not explained.
    const noStop = compareDecisions(kcm, ours.filter((x) => x.object !== 'b1'), c);
    assert.ok(noStop.some((r) => r.violation && r.object === 'b0' && r.detail === NE), 'a taint removed without an all-zones stop stays a violation');
  });

  test('fromShadow keeps the compared actions in the recorder\'s form', () => {
    const base: Omit<ShadowDecision, 'action' | 'detail'> = { atMs: T, controller: 'x', object: { kind: 'Node', name: 'n1' }, reason: '' };
    assert.deepEqual(fromShadow({ ...base, action: 'taint', detail: 'node.kubernetes.io/unreachable:NoExecute' }), { atMs: T, object: 'n1', action: 'taint', detail: 'node.kubernetes.io/unreachable:NoExecute' });
    assert.equal(fromShadow({ ...base, action: 'taint', detail: 'node.kubernetes.io/memory-pressure:NoSchedule' }), undefined);
    assert.equal(fromShadow({ ...base, action: 'mark-unknown', detail: 'MemoryPressure=Unknown' }), undefined);
    assert.equal(fromShadow({ ...base, action: 'mark-unknown', detail: 'Ready=Unknown, MemoryPressure=Unknown' })?.action, 'mark-unknown');
    assert.equal(fromShadow({ ...base, action: 'label', detail: 'x' }), undefined);
    const pod = fromShadow({ ...base, action: 'delete-pod', detail: '', object: { kind: 'Pod', name: 'p', namespace: 'ns' }, node: 'n1' });
    assert.deepEqual(pod, { atMs: T, object: 'ns/p', node: 'n1', action: 'delete-pod', detail: '' });
  });
});

describe('campaign report', () => {
  test('sums outcomes, the ours-later distribution, documented differences and violations with their files', () => {
    const [s] = generateScenarios(1, 1, 'small');
    assert.ok(s);
    const rows = compareDecisions([d(10, 'taint', 'n1', 'node.kubernetes.io/unreachable:NoExecute'), d(30, 'delete-pod', 'ns/p1')], [d(17, 'taint', 'n1', 'node.kubernetes.io/unreachable:NoExecute'), d(5, 'mark-pod-not-ready', 'ns/p3')], ctx());
    const r = buildCampaignReport([{ scenario: s, file: '/x/1-0.json', wallMs: 60_000, kcm: [], ours: [], rows, notes: [] }]);
    assert.equal(r.outcomes['ours later'], 1);
    assert.equal(r.oursLater.max, 7000);
    assert.equal(r.oursLater.buckets['≤10 s'], 1);
    assert.deepEqual(r.violations.map((v) => [v.file, v.row.outcome]), [['/x/1-0.json', 'KCM only']]);
    assert.equal(Object.values(r.documented).reduce((a, b) => a + b, 0), 1);
    const md = renderMarkdown(r);
    assert.match(md, /\| 1 \| 0 \/ 0 \| 1 \| 0 \| 1 \|/);
    assert.match(md, /\| KCM only \| \/x\/1-0\.json \| delete-pod {2}\| ns\/p1 \|/);
  });
});

describe('comparison: the shadow overlay and force detach', () => {
  test("a force delete kube-controller-manager made of a pod ours had decided to delete is the overlay's limit; one of a pod ours never deleted is a violation", () => {
    const rows = compareDecisions([d(40, 'force-delete', 'ns/p1'), d(40, 'force-delete', 'ns/p2')], [d(20, 'delete-pod', 'ns/p1')], ctx());
    const by = new Map(rows.map((r) => [r.object + r.action, r]));
    assert.match(by.get('ns/p1force-delete')?.difference ?? '', /shadow-mode\.md/);
    assert.equal(by.get('ns/p2force-delete')?.violation, true);
  });

  test("a detach up to pod GC's 20 s pass (+ tolerance) earlier is out-of-service.md #10; earlier than that is a violation", () => {
    const rows = compareDecisions([d(40, 'detach', 'csi-a'), d(60, 'detach', 'csi-b')], [d(21, 'detach', 'csi-a'), d(30, 'detach', 'csi-b')], ctx());
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('csi-a')?.difference ?? '', /out-of-service\.md #10/);
    assert.equal(by.get('csi-b')?.violation, true);
  });
});

describe('comparison: restarts cutting upstream short', () => {
  test("a mark ours made within upstream's window before an API server stop is explained; one made earlier than that is not", () => {
    const api = { apiserverRestarts: [{ fromMs: T + 20_000, toMs: T + 30_000 }] };
    const rows = compareDecisions([], [{ ...d(17, 'mark-unknown', 'n1'), node: 'n1' }, { ...d(10, 'mark-unknown', 'n2'), node: 'n2' }], ctx(api));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('n1')?.difference ?? '', /cut short/);
    assert.equal(by.get('n2')?.violation, true);
  });
});

describe('comparison: deletions upstream dropped in an API outage', () => {
  test("ours' deletion of a pod whose node upstream had tainted before the outage is taint-eviction.md #3; without upstream's taint it is a violation", () => {
    const api = { apiserverRestarts: [{ fromMs: T + 20_000, toMs: T + 60_000 }] };
    const taint = { ...d(15, 'taint', 'n1', 'node.kubernetes.io/not-ready:NoExecute'), node: 'n1' };
    const del = (node: string): Decision => ({ ...d(70, 'delete-pod', `ns/p-${node}`), node });
    const rows = compareDecisions([taint], [del('n1'), del('n2')], ctx(api));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('ns/p-n1')?.difference ?? '', /taint-eviction\.md #3/);
    assert.equal(by.get('ns/p-n2')?.violation, true);
  });
});

describe('comparison: restart-safe deadlines', () => {
  test("a deletion ours alone made after a restart at which upstream re-stamped the node's taint is taint-eviction.md #1; without the re-stamp it is a violation", () => {
    const restart = { controllerRestarts: [{ fromMs: T + 10_000, toMs: T + 18_000 }] };
    const restamp = { ...d(19, 'taint', 'n1', 'node.kubernetes.io/not-ready:NoExecute'), node: 'n1' };
    const del = (node: string): Decision => ({ ...d(24, 'delete-pod', `ns/p-${node}`), node });
    const rows = compareDecisions([restamp], [del('n1'), del('n2')], ctx(restart));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('ns/p-n1')?.difference ?? '', /restart-safe deadline kept/);
    assert.equal(by.get('ns/p-n2')?.violation, true);
  });
});

describe('comparison: the open rows of the first campaigns (test/fuzzdiff/regressions/README.md)', () => {
  test('300/26: a deletion by the restarted shadow before the runner saw both controllers up is taint-eviction.md #1/#12; one before the restart began starting is a violation', () => {
    const restart = { controllerRestarts: [{ fromMs: T + 19_000, startedMs: T + 23_000, toMs: T + 24_000 }] };
    const rows = compareDecisions([d(33, 'delete-pod', 'ns/p1'), d(33, 'delete-pod', 'ns/p2')], [d(23.5, 'delete-pod', 'ns/p1'), d(22, 'delete-pod', 'ns/p2')], ctx(restart));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('ns/p1')?.difference ?? '', /taint-eviction\.md #1\/#12: restart-safe deadlines/);
    assert.equal(by.get('ns/p2')?.violation, true);
  });

  test("300/18: a detach ours alone made on an out-of-service node is explained only when the taint went before upstream's 20 s pod GC pass could come", () => {
    const det = (atS: number, va: string, node: string): Decision => ({ ...d(atS, 'detach', va), node });
    const outOfService = [
      { node: 'n1', fromMs: T + 20_000, toMs: T + 28_000 },
      { node: 'n2', fromMs: T + 20_000, toMs: T + 60_000 },
    ];
    const rows = compareDecisions([], [det(21, 'csi-short', 'n1'), det(21, 'csi-long', 'n2'), det(30, 'csi-after', 'n1'), det(21, 'csi-none', 'n3')], ctx({ outOfService }));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('csi-short')?.difference ?? '', /out-of-service\.md #10, cut short/);
    // The taint stayed 39 s after ours' detach: upstream's pass came within it and did not detach.
    assert.equal(by.get('csi-long')?.violation, true);
    // After the taint was removed, and on a node that never had it: nothing explains a detach.
    assert.equal(by.get('csi-after')?.violation, true);
    assert.equal(by.get('csi-none')?.violation, true);
  });

  test("700/8: a detach ours alone made less than upstream's pod GC period before the end, the taint still on, is cut off by the end; one made earlier than that is a violation", () => {
    const det = (atS: number, va: string, node: string): Decision => ({ ...d(atS, 'detach', va), node });
    const outOfService = [
      { node: 'n1', fromMs: T + 20_000, toMs: Number.POSITIVE_INFINITY },
      { node: 'n2', fromMs: T + 20_000, toMs: T + 119_000 },
    ];
    // endMs is T + 120 s; the tolerance 2 s: upstream's pass may come up to 22 s after ours.
    const rows = compareDecisions([], [det(105, 'csi-late', 'n1'), det(60, 'csi-early', 'n1'), det(105, 'csi-removed', 'n2'), det(105, 'csi-none', 'n3')], ctx({ outOfService }));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.equal(by.get('csi-late')?.violation, false);
    assert.match(by.get('csi-late')?.difference ?? '', /out-of-service\.md #10, cut off by the end/);
    // 60 s before the end: upstream's pass had time and did not detach.
    assert.equal(by.get('csi-early')?.violation, true);
    // The taint removed before the end: that is the cut-short rule's case (removed 14 s after ours, inside the window), not this one.
    assert.doesNotMatch(by.get('csi-removed')?.difference ?? '', /cut off by the end/);
    assert.equal(by.get('csi-none')?.violation, true);
  });

  test("500/10: upstream's NoExecute taint recorded up to 1 s after the API server stop began (a whole-second stamp) still counts as before the outage; 1.5 s after does not", () => {
    const api = { apiserverRestarts: [{ fromMs: T + 28_000, toMs: T + 60_000 }] };
    const taint = (atS: number, node: string): Decision => ({ ...d(atS, 'taint', node, 'node.kubernetes.io/unreachable:NoExecute'), node });
    const del = (node: string): Decision => ({ ...d(30, 'delete-pod', `ns/p-${node}`), node });
    const rows = compareDecisions([taint(28.3, 'n1'), taint(29.5, 'n2')], [del('n1'), del('n2')], ctx(api));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('ns/p-n1')?.difference ?? '', /taint-eviction\.md #3/);
    assert.equal(by.get('ns/p-n2')?.violation, true);
  });

  test("300/20: a KCM-only decision while the shadow's caches trailed the API server is named as the harness's; without a measured lag it stays a lost eviction; a lag never excuses ours earlier", () => {
    const shadowLag = [{ fromMs: T + 30_000, toMs: T + 45_000, maxLagMs: 9000 }];
    const unknown = (atS: number, node: string): Decision => ({ ...d(atS, 'mark-unknown', node), node });
    const lagged = compareDecisions([unknown(42, 'n1')], [], ctx({ shadowLag }));
    assert.match(lagged[0]?.difference ?? '', /^harness: the shadow's Node or Lease cache trailed/);
    assert.equal(lagged[0]?.violation, false);
    assert.equal(compareDecisions([unknown(42, 'n1')], [], ctx())[0]?.violation, true);
    // Long after the lag ended (beyond grace + longest toleration + tolerance), it explains nothing.
    assert.equal(compareDecisions([unknown(80, 'n1')], [], ctx({ shadowLag }))[0]?.violation, true);
    const earlier = compareDecisions([{ ...d(60, 'delete-pod', 'ns/p'), node: 'n1' }], [{ ...d(40, 'delete-pod', 'ns/p'), node: 'n1' }], ctx({ shadowLag }));
    assert.equal(earlier[0]?.violation, true);
  });
});

describe('comparison: a zone NoExecute taints in sequence', () => {
  test("500/10: the same three taints of a zone 2 s apart in another node order are explained; a zone tainted faster than upstream's is not", () => {
    const nodeZones = { a0: 'zone-a', a1: 'zone-a', a2: 'zone-a' };
    const ne = (atS: number, node: string): Decision => ({ ...d(atS, 'taint', node, 'node.kubernetes.io/unreachable:NoExecute'), node });
    // Upstream's order a1, a2, a0; ours' a0, a1, a2: each k-th taint at the same pace.
    const same = compareDecisions([ne(50, 'a1'), ne(52, 'a2'), ne(54.7, 'a0')], [ne(50, 'a0'), ne(52, 'a1'), ne(54, 'a2')], ctx({ nodeZones }));
    const a0 = same.find((r) => r.object === 'a0');
    assert.equal(a0?.outcome, 'ours earlier');
    assert.match(a0?.difference ?? '', /zone order/);
    assert.ok(same.every((r) => !r.violation));
    // Ours taints the whole zone at once where upstream's bucket spaced them 10 s apart: the third is far too early.
    const fast = compareDecisions([ne(50, 'a1'), ne(60, 'a2'), ne(70, 'a0')], [ne(50, 'a0'), ne(50.5, 'a1'), ne(51, 'a2')], ctx({ nodeZones }));
    assert.ok(fast.some((r) => r.violation), JSON.stringify(fast));
    // Without the zones the rule cannot apply.
    assert.equal(compareDecisions([ne(50, 'a1'), ne(52, 'a2'), ne(54.7, 'a0')], [ne(50, 'a0'), ne(52, 'a1'), ne(54, 'a2')], ctx()).find((r) => r.object === 'a0')?.violation, true);
  });
});

describe('comparison: start skew after a controller restart', () => {
  test('300/19: a KCM-only Unknown mark within grace + tolerance after the restart ended is the start skew; one later is a violation; ours earlier is never excused by it', () => {
    const restart = { controllerRestarts: [{ fromMs: T + 10_000, startedMs: T + 12_000, toMs: T + 22_000 }] };
    const mark = (atS: number, node: string): Decision => ({ ...d(atS, 'mark-unknown', node), node });
    const rows = compareDecisions([mark(21, 'n1'), mark(40, 'n2')], [], ctx(restart));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('n1')?.difference ?? '', /^harness: start skew/);
    assert.equal(by.get('n2')?.violation, true);
    const earlier = compareDecisions([mark(30, 'n1')], [mark(20, 'n1')], ctx(restart));
    assert.equal(earlier[0]?.violation, true);
  });
});

describe('comparison: recovery within upstream window', () => {
  test("300/5: ours' Unknown mark and taints of a node that was Ready again within upstream's window are explained; a recovery after that window is not", () => {
    const n = (atS: number, action: Decision['action'], detail = ''): Decision => ({ ...d(atS, action, 'n1', detail), node: 'n1' });
    const ns = 'node.kubernetes.io/unreachable:NoSchedule';
    // Window: 3 monitor periods + 1 s = 4 s with the test's 2 s tolerance.
    const quick = compareDecisions([], [n(10, 'mark-unknown'), n(10, 'taint', ns), n(12, 'untaint', ns)], ctx());
    assert.ok(quick.filter((r) => r.outcome === 'ours only').every((r) => /cut short by recovery/.test(r.difference ?? '')), JSON.stringify(quick));
    const slow = compareDecisions([], [n(10, 'mark-unknown'), n(10, 'taint', ns), n(20, 'untaint', ns)], ctx());
    assert.ok(slow.filter((r) => r.outcome === 'ours only').every((r) => r.violation));
  });
  test("7200/35: ours' Unknown mark at the expiry with no condition taint yet, the kubelet revived within upstream's window (the runner's silent fault ended), is explained; a revival after that window, or a NotReady fault, is not", () => {
    const mark = (atS: number): Decision => ({ ...d(atS, 'mark-unknown', 'n1'), node: 'n1' });
    const fault = (toS: number, silent = true) => ctx({ nodeFaults: [{ node: 'n1', fromMs: T + 2_000, toMs: T + toS * 1000, silent }] });
    assert.match(compareDecisions([], [mark(7.96)], fault(8.0))[0]?.difference ?? '', /cut short by recovery/);
    assert.equal(compareDecisions([], [mark(7.96)], fault(20))[0]?.violation, true);
    assert.equal(compareDecisions([], [mark(7.96)], fault(8.0, false))[0]?.violation, true);
  });
});

describe('comparison: a pass taken away by an outage, upstream deciding after it', () => {
  test("ci 2/0: ours' mark 0.2 s before the API server stop, upstream's only after the stop began, is cut short; a mark of ours long before the stop is not", () => {
    const api = { apiserverRestarts: [{ fromMs: T + 20_000, toMs: T + 30_000 }] };
    const mark = (atS: number): Decision => ({ ...d(atS, 'mark-unknown', 'n1'), node: 'n1' });
    const after = compareDecisions([mark(29.5)], [mark(19.8)], ctx(api));
    assert.match(after[0]?.difference ?? '', /cut short: ours decided within upstream's own window before/);
    // 10 s before the stop: beyond upstream's window (4 s here), upstream's pass could have come before it.
    const long = compareDecisions([mark(29.5)], [mark(10)], ctx(api));
    assert.equal(long[0]?.violation, true);
  });
});

describe('comparison: the reconnect race after an API server outage', () => {
  // Outage 10 s (T+20 s to T+30 s): upstream's informers may be blind until reconnectWindowMs(10 s) =
  // 21.6 + 43.2 = 64.8 s after the return (+ the 2 s tolerance): to T+96.8 s.
  const api = { apiserverRestarts: [{ fromMs: T + 20_000, toMs: T + 30_000 }], endMs: T + 200_000 };
  const n = (atS: number, action: Decision['action'], node: string, detail = ''): Decision => ({ ...d(atS, action, node, detail), node });
  const pod = (atS: number, node: string, name = `ns/p-${node}`): Decision => ({ ...d(atS, 'delete-pod', name), node });
  const NE = 'node.kubernetes.io/not-ready:NoExecute';
  const race = /reconnect race after an API server outage/;

  test('reconnectWindowMs: first attempt min(2·D + 1.6 s, 60 s) after the return, plus the relist step a 410 forces', () => {
    assert.equal(reconnectWindowMs(10_000), 21_600 + 43_200);
    assert.equal(reconnectWindowMs(18_500), 38_600 + 60_000);
    assert.equal(reconnectWindowMs(40_000), 60_000 + 60_000);
  });

  test("reconnectWindowMs bounds client-go's reflector (800 ms × 2, jitter 1.0, cap 30 s) after any outage, tightly; 2·D + 1.6 s alone does not bound the relist", () => {
    // apimachinery wait.delay: the wait of a step is uniform in [base, 2·base); the next base is min(2·base, 30 s).
    // Jitter fractions in [0, 1): failures from the stop, the first attempt after the return (a 410), one more step, the relist.
    const sight = (outageMs: number, jitter: (i: number) => number): number => {
      let at = 0;
      let base = 800;
      let i = 0;
      const step = (): void => {
        at += base + jitter(i++) * base;
        base = Math.min(2 * base, 30_000);
      };
      while (at < outageMs) step(); // each attempt before the return is refused
      step(); // the attempt after the return got 410 Gone: ListAndWatch returns, Until waits once more
      return at - outageMs;
    };
    let rnd = 42;
    const random = (): number => ((rnd = (rnd * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    let tightest = 0;
    let beyondFirstAttempt = 0;
    for (let outageMs = 500; outageMs <= 90_000; outageMs += 250) {
      const bound = reconnectWindowMs(outageMs);
      for (let k = 0; k < 20; k++) assert.ok(sight(outageMs, random) < bound, `outage ${outageMs} ms`);
      // The worst case: the shortest waits during the outage (the last refused attempt as late and its
      // base as large as can be), then the longest ones: to the attempt after the return, and to the relist.
      let at = 0;
      let base = 800;
      while (at + base < outageMs) {
        at += base;
        base = Math.min(2 * base, 30_000);
      }
      const longest = 0.999_999;
      const worst = at + (1 + longest) * base + (1 + longest) * Math.min(2 * base, 30_000) - outageMs;
      assert.ok(worst < bound);
      tightest = Math.max(tightest, worst / bound);
      if (worst > Math.min(2 * outageMs + 1600, 60_000)) beyondFirstAttempt++;
    }
    assert.ok(tightest > 0.99, `the bound is tight (worst/bound ${tightest})`);
    assert.ok(beyondFirstAttempt > 0, 'the relist step goes beyond the first-attempt formula');
  });

  test("ours' Unknown mark and taints after the return, within upstream's window, are explained; before the return or after the window they are not", () => {
    const mark = (atS: number): Decision => n(atS, 'mark-unknown', 'n1');
    const within = compareDecisions([mark(60)], [mark(40)], ctx(api));
    assert.match(within[0]?.difference ?? '', race);
    // During the outage (before the runner saw /readyz): judged on the pre-outage view, not explained.
    const during = compareDecisions([mark(60)], [mark(28)], ctx(api));
    assert.equal(during[0]?.violation, true);
    // After the window (upstream surely saw by T+96.8 s): a real difference.
    const late = compareDecisions([mark(120)], [mark(100)], ctx(api));
    assert.equal(late[0]?.violation, true);
    // Upstream's counterpart long after its sight returned (window end + grace + 4 s): not its blindness.
    const far = compareDecisions([mark(115)], [mark(40)], ctx(api));
    assert.equal(far[0]?.violation, true);
  });

  test("the return is the recorder's first answered poll when recorded (the API server serves before its /readyz); a decision before it is not explained", () => {
    const served = { apiserverRestarts: [{ fromMs: T + 20_000, toMs: T + 30_000, servingMs: T + 26_000 }], endMs: T + 200_000 };
    const taint = (atS: number): Decision => n(atS, 'taint', 'n1', NE);
    assert.match(compareDecisions([taint(40)], [taint(27)], ctx(served))[0]?.difference ?? '', race);
    assert.equal(compareDecisions([taint(40)], [taint(25)], ctx(served))[0]?.violation, true);
    assert.equal(compareDecisions([taint(40)], [taint(27)], ctx(api))[0]?.violation, true);
  });

  test('an ours-only taint after the return is explained only when the recovery ours saw came within the window; never by the end of the run (issue 57)', () => {
    const taint = n(40, 'taint', 'n1', NE);
    // The run ended inside the reconnect window: no longer an excuse (the runner plays on past it).
    assert.equal(compareDecisions([], [taint], ctx({ ...api, endMs: T + 90_000 }))[0]?.violation, true);
    const recovered = compareDecisions([], [taint, n(50, 'untaint', 'n1', NE)], ctx(api)).find((r) => r.outcome === 'ours only');
    assert.match(recovered?.difference ?? '', race);
    // The scenario went on long after upstream's sight had to return, and upstream never tainted: a violation.
    assert.equal(compareDecisions([], [taint], ctx(api))[0]?.violation, true);
  });

  test("an earlier deletion is explained only when both clocks started after the outage and ours' is no shorter than upstream's", () => {
    // Ours tainted at 35 s and deleted 17 s later; upstream tainted at 50 s and deleted 17 s later.
    const same = compareDecisions([n(50, 'taint', 'n1', NE), pod(67, 'n1')], [n(35, 'taint', 'n1', NE), pod(52, 'n1')], ctx(api));
    assert.match(same.find((r) => r.action === 'delete-pod')?.difference ?? '', race);
    // Ours' clock 5 s where upstream's is 17 s: ours' deadline earlier than upstream's would be.
    const short = compareDecisions([n(50, 'taint', 'n1', NE), pod(67, 'n1')], [n(35, 'taint', 'n1', NE), pod(40, 'n1')], ctx(api));
    assert.equal(short.find((r) => r.action === 'delete-pod')?.violation, true);
    // Ours' clock started before the outage: a timer, not the view at reconnect.
    const before = compareDecisions([n(50, 'taint', 'n1', NE), pod(67, 'n1')], [n(15, 'taint', 'n1', NE), pod(45, 'n1')], ctx(api));
    assert.equal(before.find((r) => r.action === 'delete-pod')?.violation, true);
    // The pod's tolerations were edited after ours' taint: the clocks cannot be compared.
    const edited = compareDecisions([n(50, 'taint', 'n1', NE), pod(67, 'n1')], [n(35, 'taint', 'n1', NE), pod(52, 'n1')], ctx({ ...api, tolerationEdits: [{ pod: 'ns/p-n1', atMs: T + 40_000 }] }));
    assert.equal(edited.find((r) => r.action === 'delete-pod')?.violation, true);
  });

  test("an ours-only deletion is explained when upstream's own later clock would run out after the end or was cancelled; not when it had time", () => {
    const ours = [n(35, 'taint', 'n1', NE), pod(52, 'n1')];
    // Upstream tainted at 50 s; with ours' 17 s clock its deletion would come at 67 s, after the end at 60 s.
    const cut = compareDecisions([n(50, 'taint', 'n1', NE)], ours, ctx({ ...api, endMs: T + 60_000 }));
    assert.match(cut.find((r) => r.action === 'delete-pod')?.difference ?? '', race);
    // Upstream removed its taint 10 s after adding it (the node recovered in its view): its clock never ran out.
    const cancelled = compareDecisions([n(50, 'taint', 'n1', NE), n(60, 'untaint', 'n1', NE)], ours, ctx(api));
    assert.match(cancelled.find((r) => r.action === 'delete-pod')?.difference ?? '', race);
    // Upstream's clock had 130 s to run out and never did: ours deleted where upstream would not.
    const kept = compareDecisions([n(50, 'taint', 'n1', NE)], ours, ctx(api));
    assert.equal(kept.find((r) => r.action === 'delete-pod')?.violation, true);
    // Upstream's taint came before ours' (its clock started first) and it never deleted: not a race.
    const first = compareDecisions([n(31, 'taint', 'n1', NE)], ours, ctx({ ...api, endMs: T + 60_000 }));
    assert.equal(first.find((r) => r.action === 'delete-pod')?.violation, true);
  });
});

describe('comparison: out-of-service deletions after an API server outage (campaign scenario 1100/1)', () => {
  // Outage T+8 s to T+22 s (D = 14 s: upstream may be blind until 29.6 + 59.2 = 88.8 s after the return).
  const api = { apiserverRestarts: [{ fromMs: T + 8_000, toMs: T + 22_000, servingMs: T + 21_000 }], endMs: T + 46_000 };
  const pod = (atS: number, node: string, name: string): Decision => ({ ...d(atS, 'delete-pod', name), node });
  const race = /reconnect race after an API server outage/;

  test("ours' deletion on an out-of-service node it saw after the return is the race, ours only when the taint went first; one before the return, or with no out-of-service taint, is not", () => {
    const outOfService = [{ node: 'n0', fromMs: T + 16_000, toMs: T + 28_000 }, { node: 'n1', fromMs: T + 25_000, toMs: Number.POSITIVE_INFINITY }];
    const ours = [pod(21.9, 'n0', 'ns/a'), pod(25.3, 'n1', 'ns/b'), pod(20.5, 'n0', 'ns/early'), pod(25.3, 'n2', 'ns/none')];
    const kcm = [pod(30.3, 'n1', 'ns/b')];
    const rows = compareDecisions(kcm, ours, ctx({ ...api, outOfService }));
    const by = new Map(rows.map((r) => [r.object, r]));
    assert.match(by.get('ns/a')?.difference ?? '', race);
    assert.match(by.get('ns/b')?.difference ?? '', race);
    assert.equal(by.get('ns/b')?.outcome, 'ours earlier');
    // Before the API server answered again: decided on the view from before the outage.
    assert.equal(by.get('ns/early')?.violation, true);
    // No out-of-service taint and no NoExecute taint of ours on n2: nothing started a clock.
    assert.equal(by.get('ns/none')?.violation, true);
    // The taint stayed on past upstream's window (a long run): upstream had to see it and did not delete.
    const long = compareDecisions([], [pod(21.9, 'n0', 'ns/a')], ctx({ ...api, endMs: T + 300_000, outOfService: [{ node: 'n0', fromMs: T + 16_000, toMs: Number.POSITIVE_INFINITY }] }));
    assert.equal(long[0]?.violation, true);
  });
});

describe('comparison: recovery seen at the update (campaign scenario 900/35)', () => {
  test("upstream's deletion between ours' removal of the NoExecute taint at the Ready report and upstream's own removal at its pass is a reduction; with no removal of ours, or upstream's removal long after, it is a lost eviction", () => {
    const NE = 'node.kubernetes.io/not-ready:NoExecute';
    const n = (atS: number, action: Decision['action'], detail = ''): Decision => ({ ...d(atS, action, 'b1', detail), node: 'b1' });
    const del: Decision = { ...d(16.3, 'delete-pod', 'ns/p'), node: 'b1' };
    const c = ctx({ toleranceMs: 3000 }); // monitor period 2 s: upstream's window 7 s
    const rows = compareDecisions([n(10.09, 'taint', NE), del, n(16.3, 'untaint', NE)], [n(10.06, 'taint', NE), n(15.02, 'untaint', NE)], c);
    const row = rows.find((r) => r.object === 'ns/p');
    assert.equal(row?.outcome, 'KCM only');
    assert.match(row?.difference ?? '', /node-lifecycle\.md #1, recovery/);
    const kept = compareDecisions([n(10.09, 'taint', NE), del, n(16.3, 'untaint', NE)], [n(10.06, 'taint', NE)], c);
    assert.equal(kept.find((r) => r.object === 'ns/p')?.violation, true);
    const late = compareDecisions([n(10.09, 'taint', NE), del, n(40, 'untaint', NE)], [n(10.06, 'taint', NE), n(15.02, 'untaint', NE)], c);
    assert.equal(late.find((r) => r.object === 'ns/p')?.violation, true);
  });
});

describe('comparison: a NoExecute taint re-stamped in place (campaign scenario 700/40)', () => {
  test("upstream's second stamp of a taint it never removed is no lost taint; a second taint after a removal is", () => {
    const NE = 'node.kubernetes.io/unreachable:NoExecute';
    const n = (atS: number, action: Decision['action']): Decision => ({ ...d(atS, action, 'b1', NE), node: 'b1' });
    const restamp = compareDecisions([n(13.54, 'taint'), n(15.77, 'taint'), n(18.01, 'untaint')], [n(12.2, 'taint'), n(16.11, 'untaint')], ctx({ toleranceMs: 3000 }));
    const kcmOnly = restamp.filter((r) => r.outcome === 'KCM only');
    assert.equal(kcmOnly.length, 1);
    assert.match(kcmOnly[0]?.difference ?? '', /re-stamped in place/);
    // A second taint after a removal is no re-stamp; since issue 57 it is named only while ours' own
    // taint stayed on (upstream stripped and re-added it), and lost when ours had removed its taint too.
    const readded = compareDecisions([n(13.54, 'taint'), n(14, 'untaint'), n(15.77, 'taint')], [n(12.2, 'taint')], ctx({ toleranceMs: 3000 }));
    assert.match(readded.find((r) => r.outcome === 'KCM only' && r.action === 'taint')?.difference ?? '', /stripped and re-added/);
    const lost = compareDecisions([n(13.54, 'taint'), n(14, 'untaint'), n(15.77, 'taint')], [n(12.2, 'taint'), n(14.1, 'untaint')], ctx({ toleranceMs: 3000 }));
    assert.equal(lost.find((r) => r.outcome === 'KCM only' && r.action === 'taint')?.violation, true);
  });
});

describe('comparison: ours regains sight by the same reconnect race (node-lifecycle.md #5)', () => {
  // Outage 20 s (T+10 s to T+30 s): reconnectWindowMs = 41.6 + 60 = 101.6 s; grace 8 s, longest toleration 20 s.
  const outage = { apiserverRestarts: [{ fromMs: T + 10_000, toMs: T + 30_000 }], endMs: T + 400_000 };
  const at = (s: number): Decision => ({ ...d(s, 'mark-unknown', 'n1'), node: 'n1' });
  test('a KCM-only decision after an outage is named by its own node: healthy again within ours\' fresh grace after the return (issue 57: not the whole window)', () => {
    // n1's kubelet was killed before the outage and revived 10 s after the API server's return.
    const c = ctx({ ...outage, nodeFaults: [{ node: 'n1', fromMs: T + 5_000, toMs: T + 40_000 }] });
    const row = compareDecisions([at(32)], [], c)[0];
    assert.equal(row?.violation, false);
    assert.match(row?.difference ?? '', /node-lifecycle\.md #5/);
  });
  test('a KCM-only decision on a node that stayed down is a lost decision, whenever it came', () => {
    const down = ctx({ ...outage, nodeFaults: [{ node: 'n1', fromMs: T + 5_000, toMs: Number.POSITIVE_INFINITY }] });
    assert.equal(compareDecisions([at(32)], [], down)[0]?.violation, true);
    // Revived only after ours' fresh grace had run out, whatever its sight: ours should have judged it first.
    const late = ctx({ ...outage, nodeFaults: [{ node: 'n1', fromMs: T + 5_000, toMs: T + 30_000 + 101_600 + 8_000 + 5_000 }] });
    assert.equal(compareDecisions([at(32)], [], late)[0]?.violation, true);
    // Without the runner's fault record nothing names it.
    assert.equal(compareDecisions([at(32)], [], ctx(outage))[0]?.violation, true);
  });
  test('postOutageEndMs: the run goes on until every post-outage decision is due', () => {
    const c = ctx(outage);
    // return + reconnect window + grace + upstream's window (3 × 1 s + 1 s) + longest toleration + pod GC's 20 s + tolerance.
    assert.equal(postOutageEndMs({ fromMs: T + 10_000, toMs: T + 30_000 }, c), T + 30_000 + 101_600 + 8_000 + 4_000 + 20_000 + 20_000 + c.toleranceMs);
    assert.equal(postOutageEndMs({ fromMs: T + 10_000, toMs: Number.POSITIVE_INFINITY }, c), Number.POSITIVE_INFINITY);
  });
});

describe('comparison: a zone NoExecute taints in sequence, from upstream\'s side (campaign scenario 2000/18)', () => {
  test("upstream's k-th taint of a zone on a node ours did not taint is explained when ours made a k-th taint of that zone; without it, it is a lost taint", () => {
    const NE = 'node.kubernetes.io/unreachable:NoExecute';
    const nodeZones = { b0: 'b', b1: 'b', b2: 'b', a0: 'a' };
    const t = (atS: number, node: string, action: Decision['action'] = 'taint'): Decision => ({ ...d(atS, action, node, NE), node });
    const c = ctx({ nodeZones });
    const rows = compareDecisions([t(16.39, 'b2'), t(17.47, 'b2', 'untaint')], [t(15.37, 'b0'), t(17.05, 'b0', 'untaint')], c);
    const kcm = rows.find((r) => r.object === 'b2' && r.action === 'taint');
    assert.equal(kcm?.outcome, 'KCM only');
    assert.match(kcm?.difference ?? '', /zone order: upstream's k-th/);
    // Ours tainted no node of zone b (only zone a): upstream's taint is a lost one.
    const lost = compareDecisions([t(16.39, 'b2')], [t(15.37, 'a0')], c).find((r) => r.object === 'b2');
    assert.equal(lost?.violation, true);
    // Upstream's second taint of the zone when ours made only one: lost.
    const second = compareDecisions([t(16.39, 'b2'), t(18.39, 'b1')], [t(15.37, 'b0')], c).find((r) => r.object === 'b1');
    assert.equal(second?.violation, true);
  });
});

describe('comparison: pairs taken closest first (campaign scenario 2200/26)', () => {
  test("ours' brief mark cut short by the node's status post does not take the counterpart of ours' next mark of the same node", () => {
    const NS = 'node.kubernetes.io/unreachable:NoSchedule';
    const n = (atS: number, action: Decision['action'], detail = ''): Decision => ({ ...d(atS, action, 'b1', detail), node: 'b1' });
    const ours = [n(13.69, 'mark-unknown'), n(13.71, 'taint', NS), n(13.88, 'untaint', NS), n(20.91, 'mark-unknown'), n(20.91, 'taint', NS)];
    const kcm = [n(22.43, 'mark-unknown'), n(22.49, 'taint', NS)];
    const rows = compareDecisions(kcm, ours, ctx({ toleranceMs: 2000 }));
    assert.deepEqual(rows.filter((r) => r.violation), []);
    const marks = rows.filter((r) => r.action === 'mark-unknown');
    assert.deepEqual(marks.map((r) => [r.oursAtMs! - T, r.outcome]), [[13_690, 'ours only'], [20_910, 'agree']]);
    assert.match(marks[0]?.difference ?? '', /cut short by recovery/);
    // Without the recovery (no NoSchedule removal), the brief mark is not explained.
    const noRecovery = compareDecisions(kcm, ours.filter((x) => x.action !== 'untaint'), ctx({ toleranceMs: 2000 }));
    assert.ok(noRecovery.some((r) => r.violation && r.action === 'mark-unknown' && r.oursAtMs === T + 13_690));
  });
});

describe('comparison: a zone bucket ahead, cut short by recovery (campaign scenario 2200/29)', () => {
  test("ours' one extra NoExecute taint of a zone whose node was Ready again within upstream's window is explained; an extra taint that stayed is not", () => {
    const NE = 'node.kubernetes.io/unreachable:NoExecute';
    const NS = 'node.kubernetes.io/unreachable:NoSchedule';
    const nodeZones = { c0: 'c', c1: 'c', c2: 'c' };
    const x = (atS: number, node: string, action: Decision['action'], detail: string): Decision => ({ ...d(atS, action, node, detail), node });
    const kcm = [x(15.1, 'c1', 'taint', NE), x(17.03, 'c2', 'taint', NE), x(19.08, 'c0', 'untaint', NS), x(19.32, 'c1', 'untaint', NE), x(19.32, 'c2', 'untaint', NE)];
    const recovered = [x(14.29, 'c0', 'taint', NE), x(16.36, 'c1', 'taint', NE), x(18.4, 'c2', 'taint', NE), x(19.02, 'c0', 'untaint', NS), x(19.04, 'c1', 'untaint', NS), x(19.25, 'c2', 'untaint', NS)];
    const c = ctx({ nodeZones }); // tolerance 2 s: upstream's window 4 s
    const rows = compareDecisions(kcm, recovered, c);
    assert.deepEqual(rows.filter((r) => r.violation), []);
    assert.match(rows.find((r) => r.object === 'c0' && r.action === 'taint')?.difference ?? '', /zone order cut short by recovery/);
    // c2 never recovered (no removal of its condition taint): the extra taint stayed, a violation.
    const stayed = compareDecisions(kcm, recovered.filter((o) => !(o.object === 'c2' && o.action === 'untaint')), c);
    assert.ok(stayed.some((r) => r.violation && r.action === 'taint'));
  });
});

describe('comparison: a decision at the moment an API server stop began (campaign scenario 2400/23)', () => {
  test("ours' taint within the tolerance after the stop began, upstream's landing after the outage, is cut short; one later than that is not", () => {
    const NE = 'node.kubernetes.io/not-ready:NoExecute';
    const x = (atS: number, node: string): Decision => ({ ...d(atS, 'taint', node, NE), node });
    const c = ctx({ apiserverRestarts: [{ fromMs: T + 5_040, toMs: T + 17_450 }], endMs: T + 45_000 });
    const at = compareDecisions([x(13.32, 'n1')], [x(5.29, 'n1')], c)[0];
    assert.equal(at?.outcome, 'ours earlier');
    assert.match(at?.difference ?? '', /cut short/);
    const later = compareDecisions([x(20.32, 'n1')], [x(9, 'n1')], c)[0];
    assert.equal(later?.violation, true);
  });
});

describe('comparison: a toleration edit racing the taint (campaign scenario 2000/70)', () => {
  test("upstream's deletion by the edited (shorter) toleration, before ours' pre-edit deadline, when ours tainted before the edit landed, is explained; after ours' deadline it is a lost eviction", () => {
    const NE = 'node.kubernetes.io/not-ready:NoExecute';
    const x = (atS: number, action: Decision['action'], object: string, detail = ''): Decision => ({ ...d(atS, action, object, detail), node: 'c0' });
    const c = ctx({ toleranceMs: 3000, maxTolerationMs: 5000, tolerationEdits: [{ pod: 'ns/tolsec-1', atMs: T + 6_035 }] });
    const ours = [x(6.09, 'taint', 'c0', NE), x(11.1, 'delete-pod', 'ns/tolsec-2')];
    const kcm = [x(6.27, 'taint', 'c0', NE), x(8.36, 'delete-pod', 'ns/tolsec-1'), x(11.35, 'delete-pod', 'ns/tolsec-2')];
    const row = compareDecisions(kcm, ours, c).find((r) => r.object === 'ns/tolsec-1');
    assert.equal(row?.outcome, 'KCM only');
    assert.match(row?.difference ?? '', /the edit raced the taint/);
    // Upstream's deletion after ours' pre-edit deadline (6.09 + 5 s): ours should have deleted by then.
    const late = compareDecisions([x(6.27, 'taint', 'c0', NE), x(12, 'delete-pod', 'ns/tolsec-1')], ours, c).find((r) => r.object === 'ns/tolsec-1');
    assert.equal(late?.violation, true);
    // No edit of that pod: nothing raced.
    const noEdit = compareDecisions(kcm, ours, { ...c, tolerationEdits: [] }).find((r) => r.object === 'ns/tolsec-1');
    assert.equal(noEdit?.violation, true);
  });
});

describe('comparison: a decision of upstream that ours had already made, named per row (campaign scenarios 5700/3o and 5700/4o, issue 57)', () => {
  const NE = 'node.kubernetes.io/unreachable:NoExecute';
  const n = (atS: number, action: Decision['action'], node: string, detail = NE): Decision => ({ ...d(atS, action, node, detail), node });
  const pod = (atS: number, node: string): Decision => ({ ...d(atS, 'delete-pod', `ns/p-${node}`), node });
  test("upstream's strip-and-re-add of a NoExecute taint is named when ours' same taint stayed on; not when ours had removed it", () => {
    const kcm = [n(8.2, 'taint', 'a2'), n(24.3, 'untaint', 'a2'), n(27.4, 'taint', 'a2')];
    const kept = compareDecisions(kcm, [n(7.1, 'taint', 'a2')], ctx()).find((r) => r.outcome === 'KCM only' && r.action === 'taint');
    assert.equal(kept?.violation, false);
    assert.match(kept?.difference ?? '', /stripped and re-added/);
    const removed = compareDecisions(kcm, [n(7.1, 'taint', 'a2'), n(20, 'untaint', 'a2')], ctx()).find((r) => r.outcome === 'KCM only' && r.action === 'taint' && r.kcmAtMs === T + 27_400);
    assert.equal(removed?.violation, true);
  });
  test("upstream's real deletion before ours' own later deadline is named only when ours' taint was on and no earlier than upstream's", () => {
    // Upstream tainted at 23.4 s and deleted at 48.6 s; ours tainted at 28.2 s (its deadline 53.2 s never came: the pod was gone).
    const named = compareDecisions([n(23.4, 'taint', 'a1'), pod(48.6, 'a1')], [n(28.2, 'taint', 'a1')], ctx()).find((r) => r.action === 'delete-pod');
    assert.equal(named?.violation, false);
    assert.match(named?.difference ?? '', /upstream first/);
    // Ours' taint came 10 s before upstream's: its deadline was earlier, and it never deleted: lost.
    const earlier = compareDecisions([n(23.4, 'taint', 'a1'), pod(48.6, 'a1')], [n(13.4, 'taint', 'a1')], ctx()).find((r) => r.action === 'delete-pod');
    assert.equal(earlier?.violation, true);
    // Ours had removed its taint before upstream's deletion: nothing of ours was coming.
    const gone = compareDecisions([n(23.4, 'taint', 'a1'), pod(48.6, 'a1')], [n(28.2, 'taint', 'a1'), n(40, 'untaint', 'a1')], ctx()).find((r) => r.action === 'delete-pod');
    assert.equal(gone?.violation, true);
    // No taint of ours at all.
    assert.equal(compareDecisions([n(23.4, 'taint', 'a1'), pod(48.6, 'a1')], [], ctx()).find((r) => r.action === 'delete-pod')?.violation, true);
  });
});

describe("comparison: evidence from the shadow's own log and upstream's own record (campaign scenarios 5700/5o, 5700/9o, 5700/10o, issue 57)", () => {
  const NE = 'node.kubernetes.io/not-ready:NoExecute';
  const outage = { apiserverRestarts: [{ fromMs: T + 9_000, toMs: T + 22_600, servingMs: T + 21_400 }], endMs: T + 400_000 };
  const del = (atS: number): Decision => ({ ...d(atS, 'delete-pod', 'ns/p'), node: 'b0' });
  const taint = (atS: number): Decision => ({ ...d(atS, 'taint', 'b0', NE), node: 'b0' });
  test("upstream's real deletion before ours' own scheduled (later) deletion, by the shadow's log", () => {
    const later = ctx({ ...outage, oursScheduled: [{ pod: 'ns/p', loggedMs: T + 6_000, atMs: T + 30_000 }], oursBlind: [] });
    assert.match(compareDecisions([taint(6.7), del(26.8)], [taint(6)], later).find((r) => r.action === 'delete-pod')?.difference ?? '', /upstream first/);
    // Ours' schedule was earlier and nothing held it: ours should have deleted first (a lost eviction).
    const earlier = ctx({ ...outage, oursScheduled: [{ pod: 'ns/p', loggedMs: T + 6_000, atMs: T + 26_000 }], oursBlind: [] });
    assert.equal(compareDecisions([taint(6.7), del(26.8)], [taint(6)], earlier).find((r) => r.action === 'delete-pod')?.violation, true);
    // The same earlier schedule, due in a blind stretch of ours whose hold ended after upstream's deletion: the sight hold.
    const held = ctx({ ...outage, oursScheduled: [{ pod: 'ns/p', loggedMs: T + 6_000, atMs: T + 26_000 }], oursBlind: [{ loggedMs: T + 32_000, blindMs: 10_000, holdUntilMs: T + 40_000 }] });
    assert.match(compareDecisions([taint(6.7), del(26.8)], [taint(6)], held).find((r) => r.action === 'delete-pod')?.difference ?? '', /upstream first/);
    // Ours had cancelled its schedule before upstream's deletion: nothing of ours was coming.
    const cancelled = ctx({ ...outage, oursScheduled: [{ pod: 'ns/p', loggedMs: T + 6_000, atMs: T + 30_000 }, { pod: 'ns/p', loggedMs: T + 20_000 }], oursBlind: [] });
    assert.equal(compareDecisions([taint(6.7), del(26.8)], [taint(6)], cancelled).find((r) => r.action === 'delete-pod')?.violation, true);
  });
  test("upstream's deletion on its pre-outage view while ours was blind: named when ours' NoExecute taint of the node came only after it, in the same episode (campaign scenario 7600/8o)", () => {
    const UN = 'node.kubernetes.io/unreachable:NoExecute';
    const taintU = (atS: number): Decision => ({ ...d(atS, 'taint', 'b0', UN), node: 'b0' });
    const untaintU = (atS: number): Decision => ({ ...d(atS, 'untaint', 'b0', UN), node: 'b0' });
    const blind = ctx({ ...outage, oursScheduled: [], oursBlind: [{ loggedMs: T + 28_900, blindMs: 18_500, holdUntilMs: T + 38_900 }] });
    const row = (kcm: Decision[], ours: Decision[]) => compareDecisions(kcm, ours, blind).find((r) => r.action === 'delete-pod');
    // Upstream tainted at 20.6 and deleted the 4 s-toleration pod at 24.6; ours tainted at 38.9.
    assert.match(row([taintU(20.6), del(24.6)], [taintU(38.9)])?.difference ?? '', /upstream first/);
    // Ours never tainted the node: a lost eviction.
    assert.equal(row([taintU(20.6), del(24.6)], [])?.violation, true);
    // Ours' taint came only after upstream had removed its own (another episode): a lost eviction.
    assert.equal(row([taintU(20.6), del(24.6), untaintU(30)], [taintU(38.9)])?.violation, true);
    // Ours had logged a schedule and cancelled it before upstream's deletion: nothing of ours was coming.
    const cancelled = ctx({ ...outage, oursScheduled: [{ pod: 'ns/p', loggedMs: T + 20_000, atMs: T + 40_000 }, { pod: 'ns/p', loggedMs: T + 22_000 }], oursBlind: [] });
    assert.equal(compareDecisions([taintU(20.6), del(24.6)], [taintU(38.9)], cancelled).find((r) => r.action === 'delete-pod')?.violation, true);
  });
  test("upstream's out-of-service force delete before ours had marked the node Unknown: named only when ours marked it after, in the same episode (campaign scenario 7600/10o)", () => {
    const mark = (atS: number): Decision => ({ ...d(atS, 'mark-unknown', 'b0'), node: 'b0' });
    const force = (atS: number): Decision => ({ ...d(atS, 'force-delete', 'ns/p'), node: 'b0' });
    const untaintU = (atS: number): Decision => ({ ...d(atS, 'untaint', 'b0', 'node.kubernetes.io/unreachable:NoSchedule'), node: 'b0' });
    const oos = ctx({ ...outage, outOfService: [{ node: 'b0', fromMs: T + 25_000, toMs: Number.POSITIVE_INFINITY }], oursScheduled: [], oursBlind: [] });
    const row = (kcm: Decision[], ours: Decision[], c = oos) => compareDecisions(kcm, ours, c).find((r) => r.action === 'force-delete');
    assert.match(row([mark(18), force(33.1)], [mark(33.4)])?.difference ?? '', /ours' mark later/);
    // Ours never marked the node: a lost force delete.
    assert.equal(row([mark(18), force(33.1)], [])?.violation, true);
    // Ours' mark of another episode (upstream saw the node Ready again in between): a lost force delete.
    assert.equal(row([mark(18), force(33.1), untaintU(34)], [mark(40)])?.violation, true);
    // No out-of-service taint on the node then: not this rule.
    assert.equal(row([mark(18), force(33.1)], [mark(33.4)], ctx({ ...outage, oursScheduled: [], oursBlind: [] }))?.violation, true);
  });
  test("ours' deletion at its cut-short NoExecute taint + the toleration, upstream's taint only after the outage: named (campaign scenario 7000/43); a shorter clock, an upstream taint before the outage, or a toleration edit are not", () => {
    const NE2 = 'node.kubernetes.io/not-ready:NoExecute';
    const taintN = (atS: number): Decision => ({ ...d(atS, 'taint', 'b0', NE2), node: 'b0' });
    const early = ctx({ apiserverRestarts: [{ fromMs: T + 2_009, toMs: T + 13_837, servingMs: T + 12_590 }], maxTolerationMs: 22_000, endMs: T + 400_000 });
    const row = (kcm: Decision[], ours: Decision[], c = early) => compareDecisions(kcm, ours, c).find((r) => r.action === 'delete-pod');
    // Ours tainted 15 ms after the stop began and deleted 22 s later; upstream tainted at 25.1 (after its reconnect) and deleted at 47.5.
    assert.match(row([taintN(25.1), del(47.5)], [taintN(2.024), del(24.04)])?.difference ?? '', /carried into the deadline/);
    // Ours' clock shorter than the toleration: not this rule.
    assert.equal(row([taintN(25.1), del(47.5)], [taintN(2.024), del(15)])?.violation, true);
    // Upstream's own taint landed before the outage: its clock ran too, so ours earlier is unexplained.
    assert.equal(row([taintN(1.5), del(47.5)], [taintN(2.024), del(24.04)])?.violation, true);
    // The pod's toleration was edited: not this rule.
    assert.equal(row([taintN(25.1), del(47.5)], [taintN(2.024), del(24.04)], { ...early, tolerationEdits: [{ pod: 'ns/p', atMs: T + 1_000 }] })?.violation, true);
  });
  test("ours' held deletion before upstream's, when upstream's own deletion was dropped in the outage and it deleted only on a taint re-made after the stop: named (campaign scenario 7200/57); otherwise not", () => {
    const NE2 = 'node.kubernetes.io/not-ready:NoExecute';
    const taintN = (atS: number): Decision => ({ ...d(atS, 'taint', 'b0', NE2), node: 'b0' });
    const c57 = ctx({ apiserverRestarts: [{ fromMs: T + 10_000, toMs: T + 22_474, servingMs: T + 21_292 }], maxTolerationMs: 9_000, endMs: T + 400_000 });
    const row = (kcm: Decision[], ours: Decision[], c = c57) => compareDecisions(kcm, ours, c).find((r) => r.action === 'delete-pod');
    // Both tainted at 4.5 s (9 s toleration, due in the outage); upstream re-made its taint at 46.9 and deleted at 55.6; ours held to 42.4.
    assert.match(row([taintN(4.5), taintN(46.9), del(55.6)], [taintN(4.0), del(42.4)])?.difference ?? '', /taint-eviction\.md #3/);
    // Upstream's deletion came from its pre-outage taint (nothing re-made after the stop): unexplained.
    assert.equal(row([taintN(4.5), del(55.6)], [taintN(4.0), del(42.4)])?.violation, true);
    // Ours deleted before upstream's dropped deadline (4.5 + 9 s): unexplained.
    assert.equal(row([taintN(4.5), taintN(46.9), del(55.6)], [taintN(4.0), del(11)])?.violation, true);
  });
  test("campaign scenario 7600/27o: upstream's brief NoExecute taint stripped by itself and made again, ours' taint after; an out-of-service deletion while ours was blind, scheduled at its sight's return; a force delete across upstream's NoExecute-only removal", () => {
    const UN = 'node.kubernetes.io/unreachable:NoExecute';
    const t = (atS: number, action: Decision['action'], detail = UN): Decision => ({ ...d(atS, action, 'b0', detail), node: 'b0' });
    const base = ctx({ ...outage, oursScheduled: [], oursBlind: [{ loggedMs: T + 30_100, blindMs: 21_000, holdUntilMs: T + 37_100 }], outOfService: [{ node: 'b0', fromMs: T + 27_000, toMs: Number.POSITIVE_INFINITY }] });
    // Upstream tainted at 28.66, stripped it at 28.74 (its all-zones stop), tainted again at 37.88; ours tainted once at 37.11.
    const brief = compareDecisions([t(28.66, 'taint'), t(28.74, 'untaint'), t(37.88, 'taint')], [t(37.11, 'taint')], base).find((r) => r.outcome === 'KCM only');
    assert.match(brief?.difference ?? '', /upstream's own brief taint/);
    // Ours never tainted the node: both of upstream's taints are lost ones.
    const none = compareDecisions([t(28.66, 'taint'), t(28.74, 'untaint'), t(37.88, 'taint')], [], base).filter((r) => r.outcome === 'KCM only');
    assert.equal(none.length, 2);
    assert.ok(none.every((r) => r.violation));
    // Upstream deleted at 27.9 while ours was blind; ours scheduled at its sight's return (30.1), due 37.1.
    const sched = { ...base, oursScheduled: [{ pod: 'ns/p', loggedMs: T + 30_105, atMs: T + 37_103 }] };
    assert.match(compareDecisions([del(27.9)], [], sched)[0]?.difference ?? '', /upstream first/);
    // Ours could see at upstream's deletion: not this case.
    assert.equal(compareDecisions([del(27.9)], [], { ...sched, oursBlind: [] })[0]?.violation, true);
    // Ours' first word on the pod after it was a cancellation: nothing of ours was coming.
    assert.equal(compareDecisions([del(27.9)], [], { ...sched, oursScheduled: [{ pod: 'ns/p', loggedMs: T + 30_105 }] })[0]?.violation, true);
    // A force delete before ours' mark, upstream's NoExecute-only removal in between is no sign of Ready.
    const force = (atS: number): Decision => ({ ...d(atS, 'force-delete', 'ns/p'), node: 'b0' });
    const mark = (atS: number): Decision => ({ ...d(atS, 'mark-unknown', 'b0'), node: 'b0' });
    assert.match(compareDecisions([mark(16.4), t(28.66, 'taint'), t(28.74, 'untaint'), force(34.6)], [mark(37.1)], base).find((r) => r.action === 'force-delete')?.difference ?? '', /ours' mark later/);
  });
  test('a KCM-only Unknown mark after an outage is named when a NotReady kubelet heartbeated (not silent), or when upstream itself saw a heartbeat before marking it again', () => {
    const mark = (atS: number): Decision => ({ ...d(atS, 'mark-unknown', 'n1'), node: 'n1' });
    // A kubelet reporting NotReady still renews its Lease: not silent.
    const notReady = ctx({ ...outage, nodeFaults: [{ node: 'n1', fromMs: T + 6_000, toMs: Number.POSITIVE_INFINITY, silent: false }] });
    assert.equal(compareDecisions([mark(21.7)], [], notReady)[0]?.violation, false);
    const silent = ctx({ ...outage, nodeFaults: [{ node: 'n1', fromMs: T + 6_000, toMs: Number.POSITIVE_INFINITY, silent: true }] });
    assert.equal(compareDecisions([mark(21.7)], [], silent)[0]?.violation, true);
    // Upstream marked it again 19 s later (grace 8 s): a status heartbeat fell between, within ours' fresh grace.
    const again = compareDecisions([mark(21.7), mark(40.7)], [mark(42)], silent).find((r) => r.outcome === 'KCM only');
    assert.equal(again?.violation, false);
    assert.match(again?.difference ?? '', /node-lifecycle\.md #5/);
  });
  test("a KCM-only taint in the episode of upstream's pre-outage mark is named by the heartbeat upstream's later mark shows (campaign scenario 7600/5o); without it, a violation", () => {
    const mark = (atS: number): Decision => ({ ...d(atS, 'mark-unknown', 'n1'), node: 'n1' });
    const noSchedule = (atS: number): Decision => ({ ...d(atS, 'taint', 'n1', 'node.kubernetes.io/unreachable:NoSchedule'), node: 'n1' });
    const silent = ctx({ ...outage, nodeFaults: [{ node: 'n1', fromMs: T + 6_000, toMs: Number.POSITIVE_INFINITY, silent: true }] });
    const untaint = (atS: number): Decision => ({ ...d(atS, 'untaint', 'n1', 'node.kubernetes.io/unreachable:NoSchedule'), node: 'n1' });
    // Upstream marked n1 at 21.4 on its pre-outage view, tainted it at 32.5, untainted it at 35.9 (a
    // status post) and marked it again at 46.3 (grace 8 s: that post came in (21.4, 38.3], within
    // ours' fresh grace after the return); ours, blind until 43, marked and tainted it at 52.
    const rows = compareDecisions([mark(21.4), noSchedule(32.5), untaint(35.9), mark(46.3), noSchedule(46.4)], [mark(52), noSchedule(52)], silent);
    const lone = rows.find((r) => r.outcome === 'KCM only' && r.action === 'taint');
    assert.equal(lone?.violation, false);
    assert.match(lone?.difference ?? '', /node-lifecycle\.md #5/);
    // No later mark by upstream: nothing shows a heartbeat of the Lease-paused node, so ours lost the taint.
    const lost = compareDecisions([mark(21.4), noSchedule(32.5)], [], silent).find((r) => r.action === 'taint');
    assert.equal(lost?.violation, true);
    // A later mark whose heartbeat could only come before the episode's own mark proves nothing about it.
    const early = compareDecisions([mark(21.4), noSchedule(25), mark(27)], [], silent).find((r) => r.action === 'taint');
    assert.equal(early?.violation, true);
  });
});
