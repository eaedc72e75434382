/**
 * The silent-Ready count (deliberate difference 3 of docs/node-lifecycle.md) on the real node
 * lifecycle controller shell, driven by FakeClock over the in-memory world
 * (test/support/nodelifecycle-world.ts): a Ready node counts as not Ready for zone states only once
 * it has been silent for longer than its kubelet's Lease renew interval allows (a quarter of the
 * Lease's duration, plus 4 % jitter, plus a 2 s margin), and at least half the grace period; where that
 * is not shorter than the grace period the count is off, and the log says so at start.
 * Pure bound: src/nodelifecycle/silence.ts.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../../src/log/logger.js';
import { DEFAULT_LEASE_DURATION_SECONDS, normalRenewalGapMs, silentAfterMs } from '../../src/nodelifecycle/silence.js';
import { DEFAULT_CONFIG, World, zoneNodes } from '../support/nodelifecycle-world.js';
import type { NodeLifecycleConfig } from '../../src/nodelifecycle/controller.js';

interface LogLine {
  level: string;
  obj: object;
  msg: string;
}

function recordingLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (obj: object, msg: string): void => {
      lines.push({ level, obj, msg });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const ZONES = ['a', 'b', 'c'];

/**
 * A world of `perZone` Ready nodes in each of 3 zones (one pod each), a recording logger, the
 * controller started. Kubelets are not started: each test renews Leases on its own schedule.
 */
function world(t: TestContext, config: Partial<NodeLifecycleConfig>, perZone: number): { w: World; nodes: string[]; logs: LogLine[] } {
  const w = new World({ ...DEFAULT_CONFIG, ...config });
  const logs: LogLine[] = [];
  w.log = recordingLogger(logs);
  const nodes = ZONES.flatMap((z) => zoneNodes(z, perZone));
  for (const n of nodes) {
    w.addNode(n, n.slice(0, 1));
    w.putPod(`pod-${n}`, n);
  }
  w.build().start();
  t.after(() => w.ctl.stop());
  return { w, nodes, logs };
}

/**
 * Renews the Lease of every node in `alive` every `everyMs`, all at the same instant (lockstep),
 * the first time `everyMs + PHASE_MS` from now. The phase keeps the renewals off the monitor pass's
 * 5 s grid, as in a real cluster: on it, every pass would land exactly on a renewal.
 */
function lockstepKubelets(w: World, alive: Set<string>, everyMs: number, leaseDurationSeconds?: number): void {
  const tick = (): void => {
    for (const n of alive) w.renew(n, leaseDurationSeconds);
    w.clock.setTimeout(tick, everyMs);
  };
  w.clock.setTimeout(tick, everyMs + PHASE_MS);
}
const PHASE_MS = 300;

/** What the zone part did, sampled every `stepMs` and from its log lines. */
interface Watch {
  /** Sampled: the all-zones stop was on at some step. */
  stopSeen: boolean;
  /** Sampled: zone states other than Normal, as `zone=state`. */
  notNormal: Set<string>;
}

async function runWatching(w: World, ms: number, stepMs = 100): Promise<Watch> {
  const seen: Watch = { stopSeen: false, notNormal: new Set() };
  for (let t = 0; t < ms; t += stepMs) {
    await w.clock.advanceAsync(Math.min(stepMs, ms - t));
    const v = w.ctl.view();
    if (v.allZonesDisrupted) seen.stopSeen = true;
    for (const z of v.zones) if (z.state !== 'Normal') seen.notNormal.add(`${z.zoneLabel}=${z.state}`);
  }
  return seen;
}

const zoneTransitions = (logs: LogLine[]): LogLine[] => logs.filter((l) => l.msg === 'Controller detected that zone is now in new state' && (l.obj as { to?: string }).to !== 'Normal');
const stopLines = (logs: LogLine[]): LogLine[] => logs.filter((l) => /Entering master disruption mode/.test(l.msg));

describe('silentAfterMs: the bound of the silent-Ready count', () => {
  test('half the grace period, but never within a normal renewal gap; off where that reaches the grace period', () => {
    assert.equal(normalRenewalGapMs(undefined), 12_400, '40 s Lease: 10 s interval + 4 % jitter + 2 s');
    assert.equal(normalRenewalGapMs(0), 12_400, 'a Lease that does not say counts as the default');
    assert.equal(normalRenewalGapMs(100), 28_000);
    assert.equal(silentAfterMs(50_000, undefined), 25_000, 'the default grace: half of it, as before');
    assert.equal(silentAfterMs(40_000, 40), 20_000);
    assert.equal(silentAfterMs(20_000, 40), 12_400, 'grace 20 s: not half (10 s), which a 10 s renewal can reach');
    assert.equal(silentAfterMs(12_400, 40), undefined, 'off: not shorter than the grace period');
    assert.equal(silentAfterMs(5_000, 40), undefined);
    assert.equal(silentAfterMs(4_000, 4), 3_040, 'a 4 s Lease renewed every second (the integration fleets)');
    assert.equal(silentAfterMs(50_000, 240), undefined, 'a 240 s Lease renews every 60 s: off at a 50 s grace');
  });

  test('at every grace period the flags accept (1 s to 1 h) and every Lease duration (1 s to 1 h), a node renewing within its normal gap is never silent', () => {
    for (let graceMs = 1000; graceMs <= 3_600_000; graceMs += graceMs < 120_000 ? 100 : 10_000) {
      for (const lease of [undefined, 1, 2, 4, 6, 10, 15, 20, 30, 40, 41, 60, 100, 120, 300, 3600]) {
        const after = silentAfterMs(graceMs, lease);
        if (after === undefined) continue;
        assert.ok(after >= normalRenewalGapMs(lease), `grace ${graceMs} lease ${lease}`);
        assert.ok(after >= graceMs / 2 && after < graceMs, `grace ${graceMs} lease ${lease}`);
      }
    }
  });
});

describe('the silent-Ready count never fires on a healthy cluster (deliberate difference 3)', () => {
  test('36 nodes in 3 zones renewing in lockstep every 10.5 s, grace 20 s, 10 simulated minutes: no all-zones stop, every zone Normal, no PodReadinessKept; a node that dies is Unknown within grace + 1 s', async (t) => {
    const { w, nodes, logs } = world(t, { nodeMonitorGracePeriodMs: 20_000 }, 12);
    const alive = new Set(nodes);
    lockstepKubelets(w, alive, 10_500);
    // Let every node get its first sight and the zones settle (zones start Initial).
    await w.clock.advanceAsync(1000);
    assert.ok(w.ctl.view().zones.every((z) => z.state === 'Normal'), 'zones Normal after start');
    const before = await runWatching(w, 5 * 60_000);
    // One node dies after 5 minutes, right after a lockstep renewal; a single dead node of 12 leaves
    // its zone Normal, so this still must not pause or stop anything.
    const victim = 'b-n3';
    alive.delete(victim);
    const lastRenewal = w.leases.get(`kube-node-lease/${victim}`)?.renewTime ?? 0;
    const after = await runWatching(w, 5 * 60_000);
    for (const seen of [before, after]) {
      assert.equal(seen.stopSeen, false, 'never in the all-zones stop');
      assert.deepEqual([...seen.notNormal], [], 'no zone ever leaves Normal');
    }
    assert.deepEqual(zoneTransitions(logs), [], 'no zone transition logged');
    assert.deepEqual(stopLines(logs), [], 'the all-zones stop never started');
    assert.deepEqual(w.events.filter((e) => e.reason === 'PodReadinessKept' || e.reason === 'AllZonesDisrupted' || e.reason === 'ZoneEvictionPaused'), []);
    // The victim was detected at grace after its last renewal (the monitor's exact deadline), tainted,
    // and its pod marked NotReady: nothing delayed it.
    const unknownWrite = w.writes.find((x) => x.kind === 'status' && x.target === victim);
    assert.ok(unknownWrite, 'the dead node was marked Unknown');
    const unknownAt = w.nodes.get(victim)?.conditions.find((c) => c.type === 'Ready')?.lastTransitionTime ?? 0;
    assert.ok(unknownAt - lastRenewal <= 20_000 + 1000, `Unknown ${unknownAt - lastRenewal} ms after the last renewal`);
    assert.ok(unknownAt - lastRenewal > 20_000, 'not before the grace period');
    assert.deepEqual(
      w.noExecuteAdds().map((x) => x.target),
      [victim],
      'the dead node, and only it, is tainted',
    );
    assert.equal(w.podReady(`default/pod-${victim}`), 'False', "the dead node's pod is marked NotReady");
    for (const n of nodes.filter((x) => x !== victim)) assert.equal(w.podReady(`default/pod-${n}`), 'True');
  });

  test('a kubelet with nodeLeaseDurationSeconds=100 renews every 25 s (+ jitter): at the default grace 50 s it is not silent, so lockstep renewals at 25.5 s stop nothing', async (t) => {
    const { w, nodes, logs } = world(t, {}, 4);
    for (const n of nodes) w.renew(n, 100);
    lockstepKubelets(w, new Set(nodes), 25_500, 100);
    await w.clock.advanceAsync(1000);
    const seen = await runWatching(w, 5 * 60_000, 250);
    assert.equal(seen.stopSeen, false, 'never in the all-zones stop');
    assert.deepEqual([...seen.notNormal], []);
    assert.deepEqual(stopLines(logs), []);
  });

  test('the count still works where it can: grace 120 s, every node silent: the all-zones stop starts once they have been silent past 60 s, before any is Unknown', async (t) => {
    const { w, nodes, logs } = world(t, { nodeMonitorGracePeriodMs: 120_000 }, 3);
    const alive = new Set(nodes);
    lockstepKubelets(w, alive, 10_000);
    await w.clock.advanceAsync(30_000);
    assert.equal(w.ctl.view().allZonesDisrupted, false);
    // A partition: every kubelet goes silent right after a renewal.
    alive.clear();
    const silentFrom = Math.max(...nodes.map((n) => w.leases.get(`kube-node-lease/${n}`)?.renewTime ?? 0));
    await w.clock.advanceAsync(silentFrom + 59_000 - w.clock.now());
    assert.equal(w.ctl.view().allZonesDisrupted, false, 'not before half the grace period (60 s)');
    await runWatching(w, 6000, 500);
    assert.equal(w.ctl.view().allZonesDisrupted, true, 'the all-zones stop is on before any node is Unknown');
    assert.ok(w.ctl.view().nodes.every((n) => n.ready === 'True'), 'no node is Unknown yet: the silent count started the stop');
    assert.equal(stopLines(logs).length, 1);
    // The explanation says the nodes counted not Ready still report Ready.
    const stop = w.events.find((e) => e.reason === 'AllZonesDisrupted');
    assert.match(stop?.message ?? '', /9\/9 nodes not Ready|3\/3 nodes not Ready/);
    assert.match(stop?.message ?? '', /9 of the nodes counted not Ready still report Ready but have sent no heartbeat/);
    assert.equal(logs.filter((l) => /silent-Ready count is off/.test(l.msg)).length, 0, 'not logged as off');
  });

  test('grace 12 s is too short to tell a silent node from one renewing every 10 s: the count is off (logged once at start), every node silent: no stop before the grace period', async (t) => {
    assert.equal(silentAfterMs(12_000, DEFAULT_LEASE_DURATION_SECONDS), undefined);
    const { w, nodes, logs } = world(t, { nodeMonitorGracePeriodMs: 12_000 }, 3);
    const alive = new Set(nodes);
    lockstepKubelets(w, alive, 10_000);
    await w.clock.advanceAsync(30_000);
    alive.clear();
    const silentFrom = Math.max(...nodes.map((n) => w.leases.get(`kube-node-lease/${n}`)?.renewTime ?? 0));
    // Half the grace period (6 s), where the count used to start, and up to the grace period itself.
    const seen = await runWatching(w, silentFrom + 11_900 - w.clock.now(), 100);
    assert.equal(seen.stopSeen, false, 'no all-zones stop while every node is still within its grace period');
    assert.ok(w.ctl.view().nodes.every((n) => n.ready === 'True'));
    // Past the grace period the nodes are Unknown and the stop starts on the real count, as upstream.
    await runWatching(w, 3000, 100);
    assert.equal(w.ctl.view().allZonesDisrupted, true, 'the stop starts on the real count');
    const off = logs.filter((l) => /silent-Ready count is off/.test(l.msg));
    assert.equal(off.length, 1, 'logged once');
    assert.equal(off[0]?.level, 'info');
  });
});
