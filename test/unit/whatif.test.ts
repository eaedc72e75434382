/**
 * The what-if command (src/whatif/): known timelines of the real controllers on a FakeClock over
 * the in-memory cluster, the scenario format's strict validation (line and field in every error),
 * snapshots, and the command's flags.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseControllerFlags, FlagError } from '../../src/cli/flags.js';
import { parseScenario, ScenarioError, selectNodes } from '../../src/whatif/scenario.js';
import { InputError } from '../../src/util/errors.js';
import { runCommand } from '../../src/cli/command.js';
import { runWhatIf, type WhatIfResult } from '../../src/whatif/run.js';
import type { TimelineEntry } from '../../src/whatif/cluster.js';
import { syntheticSnapshot } from '../../src/whatif/synthetic.js';
import { loadSnapshot, saveSnapshot } from '../../src/whatif/snapshot.js';
import { whatIfJson, whatIfText } from '../../src/whatif/report.js';
import { runWhatIfCommand, splitWhatIfFlags } from '../../src/cli/what-if.js';

const GRACE_MS = 50_000; // --node-monitor-grace-period default
const TOLERATION_MS = 300_000; // DefaultTolerationSeconds

async function whatIf(scenarioYaml: string, opts: { nodesPerZone?: number; flags?: string[] } = {}): Promise<WhatIfResult> {
  const snapshot = syntheticSnapshot({ zones: ['a', 'b', 'c'], nodesPerZone: opts.nodesPerZone ?? 3, podsPerNode: 2, daemonSetPods: true, volumeEvery: 1 });
  const config = await parseControllerFlags(opts.flags ?? [], {});
  return runWhatIf(snapshot, parseScenario(scenarioYaml, 's.yaml'), config);
}

type Kind = TimelineEntry['kind'];
const of = <K extends Kind>(r: WhatIfResult, kind: K): Extract<TimelineEntry, { kind: K }>[] =>
  r.timeline.filter((e): e is Extract<TimelineEntry, { kind: K }> => e.kind === kind);
const noExecuteAdds = (r: WhatIfResult): Extract<TimelineEntry, { kind: 'taint' }>[] =>
  of(r, 'taint').filter((e) => e.added.some((t) => /^node\.kubernetes\.io\/(unreachable|not-ready):NoExecute$/.test(t)));
const near = (actual: number | undefined, expected: number, toleranceMs: number, what: string): void => {
  assert.ok(actual !== undefined, `${what}: missing`);
  assert.ok(Math.abs(actual - expected) <= toleranceMs, `${what}: at ${actual} ms, expected ${expected} ± ${toleranceMs} ms`);
};

describe('what-if: known timelines', () => {
  test('one node dies in a 3-zone cluster: Unknown at grace, NoExecute taint with it, pods deleted 300 s later, DaemonSet pod kept', async () => {
    const r = await whatIf('duration: 8m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a-n0]\n');
    const unknown = of(r, 'condition').filter((e) => e.to === 'Unknown');
    assert.deepEqual(unknown.map((e) => e.node), ['a-n0']);
    // The controller first sees every node at T+0 (a fresh probe timestamp), so Unknown lands at grace.
    near(unknown[0]?.atMs, GRACE_MS, 1000, 'Ready=Unknown');
    const noExec = noExecuteAdds(r);
    assert.deepEqual(noExec.map((e) => [e.node, e.added.filter((t) => t.endsWith('NoExecute'))]), [['a-n0', ['node.kubernetes.io/unreachable:NoExecute']]]);
    // Zone "a" is Normal (1 of 3 not Ready), its token bucket starts full: the taint goes on at once.
    near(noExec[0]?.atMs, GRACE_MS, 1000, 'NoExecute taint');
    const deleted = of(r, 'pod-deleted');
    assert.deepEqual(deleted.map((e) => e.pod).sort(), ['default/db-a-n0', 'default/web-0-0', 'default/web-1-1']);
    for (const d of deleted) {
      near(d.atMs, (noExec[0]?.atMs ?? 0) + TOLERATION_MS, 1000, `deletion of ${d.pod}`);
      assert.equal(d.force, false);
      assert.equal(d.by, 'taint-eviction-controller');
      assert.equal(d.node, 'a-n0');
    }
    assert.deepEqual(deleted.find((d) => d.pod === 'default/web-0-0')?.owners, ['ReplicaSet/web-0']);
    assert.deepEqual(deleted.find((d) => d.pod === 'default/db-a-n0')?.owners, ['StatefulSet/db']);
    assert.equal(r.summary.podsMarkedNotReady, 4, "every pod of a-n0 (3 + the DaemonSet's) is marked NotReady");
    assert.ok(of(r, 'zone').every((z) => z.to === 'Normal'), 'every zone stays Normal');
    assert.equal(of(r, 'detach').length, 0, 'no detach before --force-detach-timeout');
    const text = whatIfText(r);
    assert.match(text, /T\+50\.001s\s+node\s+a-n0: Ready True -> Unknown \(NodeStatusUnknown\)/);
    assert.match(text, /T\+5m50\.001s\s+delete\s+default\/web-0-0 on a-n0 \(owner ReplicaSet\/web-0\) by taint-eviction-controller/);
  });

  test('zone "a" loses 60 % of its nodes: PartialDisruption pauses its tainting (rate 0 at ≤ 50 nodes); nothing deleted', async () => {
    const r = await whatIf('duration: 8m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    zone: a\n    percent: 60\n', { nodesPerZone: 10 });
    assert.deepEqual(of(r, 'step')[0]?.nodes, ['a-n0', 'a-n1', 'a-n2', 'a-n3', 'a-n4', 'a-n5']);
    assert.equal(of(r, 'condition').filter((e) => e.to === 'Unknown').length, 6);
    const zoneA = of(r, 'zone').filter((z) => z.zone === '"r:a"');
    const partial = zoneA.find((z) => z.to === 'PartialDisruption');
    // Deliberate difference 3: for the tainting gate, Ready nodes silent for more than half the grace
    // period already count, so the zone pauses between grace/2 and the Unknown marking.
    assert.ok(partial && partial.atMs >= GRACE_MS / 2 && partial.atMs <= GRACE_MS + 1000, `zone a PartialDisruption at ${partial?.atMs} ms`);
    assert.equal(partial?.rate, 0);
    assert.ok(of(r, 'event').some((e) => e.reason === 'ZoneEvictionPaused' && e.type === 'Warning'), 'the pause is explained with an Event');
    assert.equal(r.summary.zonePauses >= 1, true);
    assert.deepEqual(noExecuteAdds(r), [], 'no NoExecute taint in a paused zone');
    assert.deepEqual(of(r, 'pod-deleted'), []);
    assert.ok(of(r, 'zone').filter((z) => z.zone !== '"r:a"').every((z) => z.to === 'Normal'));
  });

  test('every Lease stops for 90 s: all zones FullDisruption, the all-zones stop holds every taint and deletion, nodes recover', async () => {
    const r = await whatIf('duration: 6m\nsteps:\n  - at: 0s\n    action: pause-heartbeats\n    for: 90s\n    all: true\n');
    assert.equal(of(r, 'condition').filter((e) => e.to === 'Unknown').length, 9, 'every node goes Unknown at grace');
    assert.equal(of(r, 'condition').filter((e) => e.to === 'True').length, 9, 'and Ready again when the kubelets post status after the pause');
    assert.ok(of(r, 'zone').some((z) => z.to === 'FullDisruption'));
    assert.ok(of(r, 'event').some((e) => e.reason === 'AllZonesDisrupted'));
    assert.deepEqual(noExecuteAdds(r), []);
    assert.equal(r.summary.podsMarkedNotReady, 0, 'pod readiness is left alone during the all-zones stop');
    assert.deepEqual(of(r, 'pod-deleted'), []);
  });

  test('out-of-service at T+2m on a dead node: taint eviction deletes the pods that do not tolerate it, pod GC force-deletes them, the volume is detached', async () => {
    const r = await whatIf('duration: 4m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [b-n1]\n  - at: 2m\n    action: out-of-service\n    nodes: [b-n1]\n');
    const onB1 = ['default/db-b-n1', 'default/web-8-8', 'default/web-9-9'];
    const graceful = of(r, 'pod-deleted').filter((e) => !e.force);
    const forced = of(r, 'pod-deleted').filter((e) => e.force);
    assert.deepEqual(graceful.map((e) => e.pod).sort(), onB1);
    assert.deepEqual(forced.map((e) => e.pod).sort(), onB1, 'the DaemonSet pod tolerates every NoExecute taint: never terminating, never force-deleted');
    for (const e of [...graceful, ...forced]) near(e.atMs, 120_000, 1000, `${e.force ? 'force-' : ''}deletion of ${e.pod}`);
    assert.ok(graceful.every((e) => e.by === 'taint-eviction-controller' && e.reason.includes('node.kubernetes.io/out-of-service=nodeshutdown:NoExecute')));
    assert.ok(forced.every((e) => e.by === 'pod-garbage-collector-controller'));
    const detach = of(r, 'detach');
    assert.deepEqual(detach.map((d) => [d.volumeAttachment, d.node, d.persistentVolume]), [['va-b-n1', 'b-n1', 'pv-b-n1']]);
    assert.ok((detach[0]?.atMs ?? 0) >= Math.max(...forced.map((f) => f.atMs)), 'the detach comes after the pod using the volume is gone');
    near(detach[0]?.atMs, 120_000, 1000, 'detach');
    assert.ok(of(r, 'event').some((e) => e.reason === 'ForceDetachedOutOfService' && e.object === 'Node/b-n1'));
    assert.ok(of(r, 'pod-deleted').every((e) => e.atMs >= 120_000), 'nothing deleted before the out-of-service taint (toleration 300 s)');
  });

  test('a node that comes back at T+3m: Ready again, NoExecute taint removed, no pod deleted', async () => {
    const r = await whatIf('duration: 8m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [c-n2]\n  - at: 3m\n    action: start-kubelet\n    nodes: [c-n2]\n');
    const back = of(r, 'condition').find((e) => e.node === 'c-n2' && e.to === 'True');
    near(back?.atMs, 180_000, 1000, 'Ready=True');
    const removal = of(r, 'taint').find((e) => e.node === 'c-n2' && e.removed.includes('node.kubernetes.io/unreachable:NoExecute'));
    assert.ok(removal && removal.atMs >= 180_000 && removal.atMs < 190_000, 'the NoExecute taint is removed once the node is Ready');
    assert.deepEqual(of(r, 'pod-deleted'), [], 'pods tolerate the taint for 300 s; it was gone after 130 s');
  });

  test('--max-unhealthy-nodes=2: three nodes die in three zones (each zone Normal); the breaker trips and no NoExecute taint is added', async () => {
    const yaml = 'duration: 3m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a-n0, b-n0, c-n0]\n';
    const open = await whatIf(yaml, { flags: ['--max-unhealthy-nodes=2'] });
    const trips = of(open, 'event').filter((e) => e.reason === 'EvictionCircuitOpen');
    assert.equal(trips.length >= 1, true, 'EvictionCircuitOpen is in the timeline');
    assert.ok(trips.every((e) => e.type === 'Warning'));
    assert.ok((trips[0]?.atMs ?? Infinity) <= GRACE_MS + 1000, `the breaker opens by the time the nodes are Unknown (at ${trips[0]?.atMs} ms)`);
    assert.equal(open.summary.guardTrips, trips.length);
    assert.deepEqual(noExecuteAdds(open), [], 'no NoExecute taint while more than 2 nodes are not Ready');
    assert.equal(of(open, 'condition').filter((e) => e.to === 'Unknown').length, 3, 'condition marking goes on');
    assert.match(whatIfText(open), /--max-unhealthy-nodes=2/);
    // The same cluster without the flag: each of the three zones taints its node (the guard only held them back).
    const off = await whatIf(yaml);
    assert.equal(noExecuteAdds(off).length, 3);
    assert.equal(off.summary.guardTrips, 0);
  });

  test('--enable-taint-manager=false (1.20 legacy eviction): no NoExecute taint; pods but the DaemonSet one deleted --pod-eviction-timeout after the ready transition the controller saw', async () => {
    const r = await whatIf('duration: 7m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a-n0]\n', { flags: ['--enable-taint-manager=false'] });
    assert.deepEqual(noExecuteAdds(r), []);
    assert.ok(!r.controllers.includes('taint-eviction-controller'));
    const deleted = of(r, 'pod-deleted');
    assert.deepEqual(deleted.map((e) => e.pod).sort(), ['default/db-a-n0', 'default/web-0-0', 'default/web-1-1']);
    // 1.20's readyTransitionTimestamp of a node first seen at T+0 is T+0 (a controller start), so
    // eviction is due at T+0 + 5m, not at Unknown + 5m.
    for (const d of deleted) {
      near(d.atMs, 300_000, 1000, `legacy eviction of ${d.pod}`);
      assert.equal(d.by, 'node-lifecycle-controller');
    }
    assert.ok(of(r, 'event').some((e) => e.reason === 'DeletingAllPods' && e.object === 'Node/a-n0'));
  });

  test('the same flags as the controller: --node-monitor-grace-period=20s moves Unknown to T+20s; --controllers=-taint-eviction-controller deletes nothing', async () => {
    const r = await whatIf('duration: 7m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a-n0]\n', {
      flags: ['--node-monitor-grace-period=20s', '--controllers=*,-taint-eviction-controller'],
    });
    near(of(r, 'condition').find((e) => e.to === 'Unknown')?.atMs, 20_000, 1000, 'Ready=Unknown');
    assert.equal(noExecuteAdds(r).length, 1);
    assert.deepEqual(of(r, 'pod-deleted'), []);
    assert.ok(!r.controllers.includes('taint-eviction-controller'));
    assert.equal(r.config['nodeMonitorGracePeriodMs'], 20_000);
  });
});

// Issue 53, item 3: --feature-gates reaches the taint eviction controller through the registry.
describe('what-if: --feature-gates=TaintTolerationComparisonOperators', () => {
  async function slaRun(flags: string[]): Promise<WhatIfResult> {
    const snapshot = syntheticSnapshot({ zones: ['a', 'b', 'c'], nodesPerZone: 1, podsPerNode: 0 });
    const n = snapshot.nodes.find((x) => x.name === 'a-n0');
    assert.ok(n);
    n.taints = [{ key: 'sla', value: '950', effect: 'NoExecute', timeAdded: snapshot.takenAt - 60_000 }];
    snapshot.pods.push({
      namespace: 'default', name: 'sla-pod', uid: 'sla-pod-uid', resourceVersion: '1', nodeName: 'a-n0', phase: 'Running',
      creationTimestamp: snapshot.takenAt - 3_600_000, conditions: [{ type: 'Ready', status: 'True' }],
      tolerations: [{ key: 'sla', operator: 'Gt', value: '750', effect: 'NoExecute' }], ownerReferences: [], pvcNames: [], finalizers: [],
    });
    return runWhatIf(snapshot, parseScenario('duration: 10m\nsteps: []\n', 's.yaml'), await parseControllerFlags(flags, {}));
  }

  test('off (the default): the pod that only a Gt toleration covers is deleted at once', async () => {
    for (const flags of [[], ['--feature-gates=TaintTolerationComparisonOperators=false']]) {
      const deleted = of(await slaRun(flags), 'pod-deleted');
      assert.deepEqual(deleted.map((d) => d.pod), ['default/sla-pod'], flags.join(' '));
      near(deleted[0]?.atMs, 0, 1000, 'deletion');
    }
  });

  test('on: the Gt toleration tolerates sla=950 and the pod stays', async () => {
    assert.deepEqual(of(await slaRun(['--feature-gates=TaintTolerationComparisonOperators=true']), 'pod-deleted'), []);
  });
});

describe('what-if: scenario format', () => {
  const fails = (yaml: string, pattern: RegExp): void => {
    assert.throws(
      () => parseScenario(yaml, 'bad.yaml'),
      (err: unknown) => {
        assert.ok(err instanceof ScenarioError, String(err));
        assert.ok(err instanceof InputError && err.exitCode === 2, 'exits 2 as invalid input');
        assert.match(err.message, pattern);
        return true;
      },
    );
  };

  test('the CLI turns a malformed scenario into exit 2 and one `<program>: <file>:<line>: …` line on stderr', async (t) => {
    const written: string[] = [];
    t.mock.method(process.stderr, 'write', (chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const code = await runCommand('node-lifecycle-controller', async () => {
      parseScenario('steps:\n  - at: 0s\n    action: explode\n    all: true\n', 'bad.yaml');
      return 0;
    });
    t.mock.restoreAll();
    assert.equal(code, 2);
    assert.deepEqual(written, ['node-lifecycle-controller: bad.yaml:3: steps[0].action: unknown action "explode": one of stop-kubelet, start-kubelet, pause-heartbeats, report-not-ready, report-ready, out-of-service, delete-node\n']);
  });

  test('a valid file: defaults, Go durations, steps sorted by time', () => {
    const s = parseScenario('steps:\n  - at: 5m\n    action: out-of-service\n    nodes: [n1]\n  - at: 0\n    action: pause-heartbeats\n    for: 1m30s\n    all: true\n', 'ok.yaml');
    assert.equal(s.durationMs, 15 * 60_000);
    assert.deepEqual(
      s.steps.map((x) => [x.atMs, x.action, x.forMs, x.line]),
      [
        [0, 'pause-heartbeats', 90_000, 5],
        [300_000, 'out-of-service', undefined, 2],
      ],
    );
  });

  test('each malformed file names the line and the field', () => {
    fails('duration: 10m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    zone: a\n    percnt: 40\n', /^bad\.yaml:6: steps\[0\]\.percnt: unknown field/);
    fails('steps:\n  - at: 0s\n    action: stop-kubelet\n    zone: a\n    percent: 140\n', /^bad\.yaml:5: steps\[0\]\.percent: must be a number in \(0, 100\], got 140/);
    fails('steps:\n  - at: 0s\n    action: explode\n    all: true\n', /^bad\.yaml:3: steps\[0\]\.action: unknown action "explode"/);
    fails('steps:\n  - at: 0s\n    action: stop-kubelet\n    all: true\n  - at: 90\n    action: start-kubelet\n    all: true\n', /^bad\.yaml:5: steps\[1\]\.at: must be a Go duration such as 90s or 5m, got 90/);
    fails('steps:\n  - at: 5 min\n    action: stop-kubelet\n    all: true\n', /^bad\.yaml:2: steps\[0\]\.at: invalid duration "5 min"/);
    fails('steps:\n  - action: stop-kubelet\n    all: true\n', /^bad\.yaml:2: steps\[0\]\.at: missing/);
    fails('steps:\n  - at: 0s\n    action: pause-heartbeats\n    all: true\n', /^bad\.yaml:2: steps\[0\]\.for: missing/);
    fails('steps:\n  - at: 0s\n    action: stop-kubelet\n    for: 10s\n    all: true\n', /^bad\.yaml:4: steps\[0\]\.for: only pause-heartbeats takes `for`/);
    fails('steps:\n  - at: 0s\n    action: stop-kubelet\n', /^bad\.yaml:2: steps\[0\]: missing node selector/);
    fails('steps:\n  - at: 0s\n    action: stop-kubelet\n    zone: a\n    all: true\n', /^bad\.yaml:5: steps\[0\]: give only one of/);
    fails('steps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a, 7]\n', /^bad\.yaml:4: steps\[0\]\.nodes\[1\]: must be a node name, got 7/);
    fails('steps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a]\n    count: 1\n', /^bad\.yaml:5: steps\[0\]\.count: only with `zone` or `all`/);
    fails('duration: 1m\nsteps:\n  - at: 2m\n    action: stop-kubelet\n    all: true\n', /^bad\.yaml:3: steps\[0\]\.at: 2m is after the scenario's duration/);
    fails('duration: -1m\nsteps: []\n', /^bad\.yaml:1: duration: must not be negative/);
    fails('durations: 1m\nsteps: []\n', /^bad\.yaml:1: durations: unknown field/);
    fails('steps:\n  - at: 0s\n  action: x\n', /^bad\.yaml:3: invalid YAML/);
    fails('- 1\n- 2\n', /^bad\.yaml:1: expected a mapping/);
    fails('', /^bad\.yaml:1: empty file/);
  });

  test('selectors: a percentage of a zone rounds up over the sorted names; unknown node or zone names the step line', () => {
    const nodes = ['z-3', 'z-1', 'z-2', 'y-1'].map((name) => ({ name, zone: name[0] === 'z' ? 'z' : 'y', region: 'r' }));
    const where = { file: 'f.yaml', line: 7, field: 'steps[2]' };
    assert.deepEqual(selectNodes({ kind: 'zone', zone: 'z', percent: 40 }, nodes, where), ['z-1', 'z-2']);
    assert.deepEqual(selectNodes({ kind: 'zone', zone: 'r:z', count: 1 }, nodes, where), ['z-1']);
    assert.deepEqual(selectNodes({ kind: 'all', percent: 100 }, nodes, where), ['y-1', 'z-1', 'z-2', 'z-3']);
    assert.throws(() => selectNodes({ kind: 'nodes', names: ['z-9'] }, nodes, where), /^Error|f\.yaml:7: steps\[2\]\.nodes: no such node in the cluster: z-9/);
    assert.throws(() => selectNodes({ kind: 'zone', zone: 'x' }, nodes, where), /f\.yaml:7: steps\[2\]\.zone: no node is in zone "x"/);
  });
});

describe('what-if: snapshots and the command', () => {
  test('a snapshot round-trips; a malformed one names the collection and index', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'whatif-'));
    const s = syntheticSnapshot({ zones: ['a'], nodesPerZone: 2, podsPerNode: 1 });
    await saveSnapshot(join(dir, 's.json'), s);
    assert.deepEqual(await loadSnapshot(join(dir, 's.json')), s);
    const raw = JSON.parse(await readFile(join(dir, 's.json'), 'utf8')) as Record<string, unknown[]>;
    raw['pods'] = [{ namespace: 'x' }];
    await writeFile(join(dir, 'bad.json'), JSON.stringify(raw));
    await assert.rejects(loadSnapshot(join(dir, 'bad.json')), (e: unknown) => e instanceof InputError && e.exitCode === 2 && e.flag === 'snapshot' && /--snapshot: .*bad\.json: pods\[0\]: not an object with a string name/.test(e.message));
    await writeFile(join(dir, 'other.json'), '{"kind":"List"}');
    await assert.rejects(loadSnapshot(join(dir, 'other.json')), /not a snapshot/);
  });

  test('flags: own flags split from the run flags; bad --output and a missing value exit 2', () => {
    const f = splitWhatIfFlags(['--scenario', 's.yaml', '-o', 'json', '--snapshot=x.json', '--node-eviction-rate=1']);
    assert.deepEqual(f, { scenario: 's.yaml', snapshot: 'x.json', output: 'json', rest: ['--node-eviction-rate=1'] });
    assert.throws(() => splitWhatIfFlags(['-o', 'yaml']), (e: unknown) => e instanceof FlagError && /--output: must be text or json, got "yaml"/.test(e.message));
    assert.throws(() => splitWhatIfFlags(['--scenario']), (e: unknown) => e instanceof FlagError && /--scenario: needs a value/.test(e.message));
  });

  test('runWhatIfCommand over a snapshot file prints JSON with the timeline; a bad controller flag is a FlagError', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'whatif-'));
    await saveSnapshot(join(dir, 's.json'), syntheticSnapshot({ zones: ['a', 'b'], nodesPerZone: 2, podsPerNode: 1 }));
    await writeFile(join(dir, 'sc.yaml'), 'duration: 2m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a-n0]\n');
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (out.push(chunk), true)) as typeof process.stdout.write;
    let code: number;
    try {
      code = await runWhatIfCommand(['--scenario', join(dir, 'sc.yaml'), '--snapshot', join(dir, 's.json'), '-o', 'json']);
    } finally {
      process.stdout.write = write;
    }
    assert.equal(code, 0);
    const parsed = JSON.parse(out.join('')) as { timeline: TimelineEntry[]; startedAt: string };
    assert.equal(parsed.startedAt, '2026-11-24T12:00:00.000Z');
    assert.ok(parsed.timeline.some((e) => e.kind === 'condition' && e.node === 'a-n0' && e.to === 'Unknown'));
    await assert.rejects(runWhatIfCommand(['--scenario', join(dir, 'sc.yaml'), '--snapshot', join(dir, 's.json'), '--node-eviction-rate=fast']), FlagError);
    await assert.rejects(runWhatIfCommand(['--snapshot', join(dir, 's.json')]), /--scenario: required/);
  });

  test('the JSON report carries the same entries as the text one', async () => {
    const r = await whatIf('duration: 1m\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a-n0]\n');
    const j = JSON.parse(whatIfJson(r)) as WhatIfResult;
    assert.equal(j.timeline.length, r.timeline.length);
    assert.deepEqual(j.summary, r.summary);
  });
});
