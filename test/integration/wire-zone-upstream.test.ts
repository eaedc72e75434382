/**
 * Issue 53 item 1, the control: kube-controller-manager 1.37.2's node lifecycle and taint eviction
 * controllers and ours, one after the other on a private control plane (kube-controller-manager's
 * node lifecycle controller acts on every node, so never the shared cluster), on the zone:
 * 5 nodes, the first carrying `KernelDeadlock=False` with a message that is not UTF-8 (written in
 * protobuf: Go strings are bytes and the API server stores them as they are), 3 of them die, that node
 * among them. kube-controller-manager reads that node (its protobuf decoder takes the bytes as they
 * are), counts 3 of 5 not Ready: PartialDisruption, rate 0 (a zone of at most
 * `--large-cluster-size-threshold` nodes), no NoExecute taint. Ours must leave the cluster the same.
 *
 * Each side gets a fresh fleet and the same steps and flags (grace 4 s, monitor period 1 s). The
 * three dead nodes' last Lease renewals are written together: kube-controller-manager reads Leases in
 * its monitor pass, and renewals spread over the 1 s renew interval would be seen in two passes; the
 * first dead node would then be marked Unknown alone, its zone still Normal (1 or 2 of 5), and tainted
 * with the zone's free token before the others follow. Ours counts such deaths together (deliberate
 * difference 3 of docs/node-lifecycle.md) and does not taint there either; that case, ours alone, is
 * test/integration/wire-zone.test.ts, which runs on every lane.
 *
 * The 1.37 lane only: the control is kube-controller-manager 1.37.2.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControllerProcess, UPSTREAM_CONTROLLERS, type SharedControllerFlags } from '../../bench/lib/procs.js';
import type { RunningController } from '../../src/cli/run.js';
import type { KubeClients } from '../../src/kube/client.js';
import { getCondition, toNode } from '../../src/kube/objects.js';
import { createTestNamespace, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { kubeControllerManagerBinary } from '../support/kube-controller-manager.js';
import { NodeObserver } from '../support/observe.js';
import { PrivateControlPlane } from '../support/private-cluster.js';
import { nodeHoldsBytes, putKernelDeadlockCondition, renewLeasesTogether, WIRE_ZONE_GRACE_MS as GRACE_MS, wireZoneFleet } from '../support/wire-zone.js';

const ROOT = join(import.meta.dirname, '..', '..');
const LANE = process.env['NLC_K8S_VERSION'] ?? '1.37';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
/** Both sides run these controllers (upstream's names; ours takes them too). */
const CONTROLLERS = 'node-lifecycle-controller,taint-eviction-controller';
const MONITOR_PERIOD_MS = 1000;
/** The flags both controllers get; the rates are upstream's defaults. */
const FLAGS: SharedControllerFlags = {
  nodeMonitorPeriod: `${MONITOR_PERIOD_MS / 1000}s`,
  nodeMonitorGracePeriod: `${GRACE_MS / 1000}s`,
  nodeStartupGracePeriod: '1m',
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  kubeApiQps: 20,
  kubeApiBurst: 30,
};
/** kube-controller-manager's log line at each zone state change (`handleDisruption`), e.g. `... newState="PartialDisruption"`. */
const ZONE_STATE_LINE = /"Controller detected that zone is now in new state".*\bnewState="([A-Za-z]+)"/;

let cp: PrivateControlPlane | undefined;
const running: Side[] = [];

after(async () => {
  for (const side of running) await side.stop();
  await cp?.run('down').catch(() => undefined);
  await cp?.remove();
});

/** One controller as the scenario drives it. */
interface Side {
  name: string;
  /** Starts it for the fleet `prefix`; resolves once it counts the zone's 5 nodes Ready (zone Normal). */
  start(prefix: string): Promise<void>;
  /** The zone's state as the controller last told it (its log line, or its view). */
  zoneState(): string | undefined;
  /** Stops it. Idempotent; never throws. */
  stop(): Promise<void>;
}

function upstreamSide(kubeconfig: string, binary: string): Side {
  let proc: ControllerProcess | undefined;
  const states: string[] = [];
  return {
    name: 'kube-controller-manager',
    async start(prefix) {
      proc = new ControllerProcess(
        {
          kind: 'upstream',
          kubeconfig,
          flags: FLAGS,
          upstreamBinary: binary,
          upstreamControllers: CONTROLLERS,
          upstreamVersion: '1.37',
          oursMode: 'tsx',
          oursEntry: '',
          metricsPort: 0,
          logLevel: 'info',
        },
        join(process.env['NLC_TEST_LOG_DIR'] ?? tmpdir(), `${prefix}-kcm.log`),
        ROOT,
      );
      proc.onLine((l) => {
        const m = ZONE_STATE_LINE.exec(l.text);
        if (m) states.push(m[1] as string);
      });
      // Its first monitor pass after the caches synced counts the 5 nodes: Initial -> Normal.
      await proc.waitForLine(/"Controller detected that zone is now in new state".*\bnewState="Normal"/, 60_000);
    },
    zoneState: () => states.at(-1),
    async stop() {
      await proc?.stop();
    },
  };
}

function oursSide(kubeconfig: string): Side {
  let controller: RunningController | undefined;
  const zones = (): string[] => controller?.nodeLifecycle?.view().zones.map((z) => z.state) ?? [];
  return {
    name: 'ours',
    async start(prefix) {
      controller = await startTestController(
        prefix,
        [
          `--controllers=${CONTROLLERS}`,
          `--node-monitor-period=${FLAGS.nodeMonitorPeriod}`,
          `--node-monitor-grace-period=${FLAGS.nodeMonitorGracePeriod}`,
          `--node-startup-grace-period=${FLAGS.nodeStartupGracePeriod}`,
          `--node-eviction-rate=${FLAGS.nodeEvictionRate}`,
          `--secondary-node-eviction-rate=${FLAGS.secondaryNodeEvictionRate}`,
        ],
        { kubeconfig },
      );
      await waitFor('ours counts the 5 nodes, the zone Normal', () => controller?.nodeLifecycle?.view().nodes.length === 5 && zones().join() === 'Normal', 20_000);
    },
    zoneState: () => (zones().length === 1 ? zones()[0] : zones().join()),
    async stop() {
      const c = controller;
      controller = undefined;
      await c?.stop();
    },
  };
}

/** What a side left, node by node in the fleet's order (nodes 0–2 died, node 0 carries the bytes). */
interface Outcome {
  zoneState: string | undefined;
  nodes: { dead: boolean; ready: string | undefined; reason: string | undefined; taints: string[] }[];
  /** Nodes (by index) seen with a NoExecute taint at any time from the fleet's start on. */
  noExecuteEver: number[];
  /** Nodes (by index) with a `NodeNotReady` Event from `node-controller`. */
  nodeNotReadyEvents: number[];
  /**
   * Node 0 still holds the message's bytes as they are (read in protobuf). kube-controller-manager's
   * Unknown mark is a protobuf `UpdateStatus` of the node as it read it, so they stay. Ours' is a
   * strategic-merge patch of `nodes/status` carrying only the conditions it changes, so the
   * node-problem-detector condition is not sent back and they stay too (before, every condition was
   * sent back as ours decoded it, U+FFFD per invalid byte: issue 53, "every write carries exactly the
   * fields upstream's write carries").
   */
  bytesKept: boolean;
}

/** What the run showed besides the outcome: reported, not compared. */
interface Extras {
  /** The earliest and latest instants at which the 3 dead nodes' Ready=Unknown can have been written, ms apart. */
  marksWithinMs: number;
}

/** The scenario, for one side, on a fresh fleet. */
async function runScenario(clients: KubeClients, side: Side): Promise<{ outcome: Outcome; extras: Extras }> {
  const prefix = uniquePrefix(side.name === 'ours' ? 'wzu-ours' : 'wzu-kcm');
  await createTestNamespace(clients, prefix);
  const fleet = wireZoneFleet(clients, prefix);
  await fleet.start();
  const observer = new NodeObserver(clients, `nlc.sim/fleet=${prefix}`, 100);
  running.push(side);
  try {
    await observer.start();
    const nodes = fleet.nodesInZone(fleet.zones()[0] as string);
    const raw = await putKernelDeadlockCondition(clients, nodes[0] as string);
    await side.start(prefix);
    const victims = nodes.slice(0, 3);
    for (const v of victims) fleet.killNode(v);
    // A renewal already in flight lands first; then the last renewals, together.
    await sleep(500);
    await renewLeasesTogether(clients, victims);

    const unknownAt = (v: string): { atMs: number; notBeforeMs: number } | undefined => observer.changes.find((c) => c.node === v && c.ready === 'Unknown');
    await waitFor(`${side.name}: the 3 dead nodes Ready=Unknown`, () => victims.every((v) => unknownAt(v) !== undefined), GRACE_MS + MONITOR_PERIOD_MS + 15_000);
    const marks = victims.map((v) => unknownAt(v)!);
    const marksWithinMs = Math.max(...marks.map((m) => m.atMs)) - Math.min(...marks.map((m) => m.notBeforeMs));
    // The premise: the deaths were seen together. kube-controller-manager's passes are at least a
    // monitor period apart, so marks less than one apart were written in one pass.
    assert.ok(marksWithinMs < MONITOR_PERIOD_MS, `${side.name} marked the dead nodes Unknown up to ${marksWithinMs} ms apart: not in one monitor pass, so the deaths were not seen together (the scenario's premise)`);
    // Were the zone Normal, the first dead node would be tainted within 100 ms of its mark (the
    // tainting pass's period; the first token is free): 2 x grace is ample. The observer has recorded
    // every node since the fleet started, so a taint before this window counts too. The zone state is
    // read after it (both sides set it in the step that marks the nodes).
    await sleep(2 * GRACE_MS);

    const zoneState = side.zoneState();
    const listed = (await clients.core.listNode({ labelSelector: `nlc.sim/fleet=${prefix}` })).items.map((r) => toNode(r)!);
    const events = (await clients.core.listEventForAllNamespaces({ fieldSelector: 'reason=NodeNotReady,involvedObject.kind=Node' })).items;
    const outcome: Outcome = {
      zoneState,
      nodes: nodes.map((name, i) => {
        const n = listed.find((x) => x.name === name);
        const ready = n ? getCondition(n.conditions, 'Ready') : undefined;
        return { dead: i < 3, ready: ready?.status, reason: ready?.reason, taints: (n?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort() };
      }),
      noExecuteEver: nodes.flatMap((name, i) => (observer.taintedWith(UNREACHABLE).has(name) || observer.taintedWith(NOT_READY).has(name) ? [i] : [])),
      nodeNotReadyEvents: nodes.flatMap((name, i) =>
        events.some((e) => e.involvedObject.name === name && (e.source?.component ?? e.reportingComponent) === 'node-controller') ? [i] : [],
      ),
      bytesKept: await nodeHoldsBytes(clients, nodes[0] as string, raw.bytes),
    };
    return { outcome, extras: { marksWithinMs } };
  } finally {
    observer.stop();
    await side.stop();
    await fleet.stop();
    await fleet.cleanup();
  }
}

test('3 of 5 nodes die, one of them with a condition message that is not UTF-8: kube-controller-manager 1.37.2 and ours both count PartialDisruption, mark the 3 Unknown and taint none NoExecute', { timeout: 1_800_000 }, async (t) => {
  if (LANE !== '1.37') {
    t.skip(`the control is kube-controller-manager 1.37.2: it runs on the 1.37 lane only (lane ${LANE}); ours alone runs in wire-zone.test.ts`);
    return;
  }
  for (const c of CONTROLLERS.split(',')) assert.ok(UPSTREAM_CONTROLLERS['1.37'].split(',').includes(c), `${c}: a controller name kube-controller-manager 1.37 knows`);
  const binary = kubeControllerManagerBinary();
  cp = await PrivateControlPlane.create();
  await cp.run('up');
  const clients = await cp.clients();

  // kube-controller-manager first, alone; then ours, alone, on a fresh fleet.
  const upstream = await runScenario(clients, upstreamSide(cp.kubeconfig, binary));
  t.diagnostic(`kube-controller-manager: ${JSON.stringify(upstream)}`);
  const mine = await runScenario(clients, oursSide(cp.kubeconfig));
  t.diagnostic(`ours: ${JSON.stringify(mine)}`);

  // kube-controller-manager's result as issue 53 describes it: it acted (marked the 3 dead nodes
  // Unknown, as node-controller) and saw the zone PartialDisruption: it counted the node whose
  // message is not UTF-8, the point of the control.
  assert.equal(upstream.outcome.zoneState, 'PartialDisruption', "kube-controller-manager's zone state");
  for (const [i, n] of upstream.outcome.nodes.entries()) {
    assert.deepEqual([n.ready, n.reason], n.dead ? ['Unknown', 'NodeStatusUnknown'] : ['True', n.reason], `kube-controller-manager: node ${i}'s Ready condition`);
  }
  assert.deepEqual(upstream.outcome.nodeNotReadyEvents, [0, 1, 2], 'kube-controller-manager (node-controller) reports the 3 dead nodes NodeNotReady');
  assert.equal(upstream.outcome.bytesKept, true, "kube-controller-manager's status writes keep node 0's message bytes as they are");
  // Its NoExecute taints are reported, not asserted: on a quiet machine it taints none (the issue's
  // run and this test's, 4 of 4), but its tainting pass runs every 100 ms on the zone's rate as it
  // stood before the pass that marked the nodes ends with `handleDisruption`, so under load (CI at
  // load average 13) it tainted a dead node whose mark it had queued in that pass. Ours decides the
  // zone state before the first taint of the wave (docs/node-lifecycle.md), and taints none.
  if (upstream.outcome.noExecuteEver.length > 0) {
    t.diagnostic(`kube-controller-manager tainted nodes ${JSON.stringify(upstream.outcome.noExecuteEver)} NoExecute: its tainting pass ran before the pass that marked them set the zone PartialDisruption`);
  }
  assert.deepEqual(mine.outcome.noExecuteEver, [], 'ours taints no node NoExecute');
  for (const [i, n] of mine.outcome.nodes.entries()) assert.equal(n.taints.some((k) => k.endsWith(':NoExecute')), false, `ours: node ${i} has no NoExecute taint`);

  const withoutNoExecute = (o: Outcome): Outcome => ({ ...o, noExecuteEver: [], nodes: o.nodes.map((n) => ({ ...n, taints: n.taints.filter((k) => !k.endsWith(':NoExecute')) })) });
  assert.deepEqual(withoutNoExecute(mine.outcome), withoutNoExecute(upstream.outcome), 'ours leaves the cluster as kube-controller-manager does (its NoExecute taints aside, above)');
});
