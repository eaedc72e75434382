/**
 * The start hold (docs/taint-eviction.md, the start hold; src/kube/judgements.ts): after a start,
 * a deletion due for a NoExecute taint the node lifecycle controller manages goes ahead only once
 * that controller has confirmed the node not Ready from its own observations since the start, and
 * is decided again then.
 *
 * On the real shells, wired as `run` wires them (src/controllers/registry.ts, one context with one
 * judgement board): FakeClock, the in-memory cluster's caches, its simulated kubelets and its
 * recording writer (src/inmemory/). The process "restarts" at T0: the cluster already carries an
 * `unreachable:NoExecute` taint whose toleration ran out 100 s before.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseControllerFlags } from '../../src/cli/flags.js';
import type { ControllerConfig } from '../../src/controllers/config.js';
import type { ControllerIO } from '../../src/controllers/context.js';
import type { NodeLifecycleWrites } from '../../src/nodelifecycle/controller.js';
import { buildControllers, enabledControllers, sightOf, type BuiltControllers } from '../../src/controllers/registry.js';
import { InMemoryCluster } from '../../src/inmemory/cluster.js';
import { NodeJudgementBoard, notConfirmedBecause } from '../../src/kube/judgements.js';
import type { Lease, Node, NodeCondition, Pod, Taint } from '../../src/kube/objects.js';
import { TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE } from '../../src/kube/taints.js';
import { silentLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { FakeClock } from '../../src/util/clock.js';
import { clusterIO, clusterSources } from '../../src/whatif/sources.js';

const T0 = Date.UTC(2026, 2, 1, 12);
const GRACE_MS = 50_000;
const TOLERATION_S = 300;
/** The taint was added 400 s before the start: the 300 s toleration ran out at T0 − 100 s. */
const TAINTED_AT = T0 - 400_000;

type Health = 'ready' | 'unknown' | 'not-ready';

function nodeOf(name: string, health: Health, taintKey: string): Node {
  const heartbeat = health === 'unknown' ? TAINTED_AT - 40_000 : T0 - 1000;
  const ready: NodeCondition = {
    type: 'Ready',
    status: health === 'ready' ? 'True' : health === 'not-ready' ? 'False' : 'Unknown',
    reason: health === 'unknown' ? 'NodeStatusUnknown' : 'KubeletReady',
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: TAINTED_AT - 40_000,
  };
  const taint: Taint = { key: taintKey, effect: 'NoExecute', timeAdded: TAINTED_AT };
  return { name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: T0 - 86_400_000, labels: {}, unschedulable: false, taints: [taint], conditions: [ready] };
}

function leaseOf(name: string, health: Health): Lease {
  return { namespace: 'kube-node-lease', name, resourceVersion: '1', holderIdentity: name, leaseDurationSeconds: 40, renewTime: health === 'unknown' ? TAINTED_AT - 40_000 : T0 - 1000 };
}

function podOf(name: string, node: string): Pod {
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    nodeName: node,
    phase: 'Running',
    creationTimestamp: T0 - 86_400_000,
    conditions: [],
    tolerations: [
      { key: TAINT_NODE_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_S },
      { key: TAINT_NODE_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_S },
    ],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
  } as Pod;
}

interface Process {
  clock: FakeClock;
  cluster: InMemoryCluster;
  byKey: BuiltControllers;
  deletedAt(pod: string): number | undefined;
  taintsOf(node: string): string[];
}

/** How long the node lifecycle controller's taint writes take to land (a throttled or slow API server), ms. */
const NLC_WRITE_LAG_MS = 2000;

/**
 * A process starting at T0 over a cluster with one node per entry of `nodes` (each tainted with
 * `taintKey`, timeAdded T0 − 400 s) and one pod on each, tolerating it 300 s. The node lifecycle
 * controller's taint writes land {@link NLC_WRITE_LAG_MS} after they are sent, as behind a write
 * throttle at start, when every node's first look queues a write: the race the start hold closes.
 */
async function startProcess(nodes: Record<string, Health>, flags: string[] = [], taintKey = TAINT_NODE_UNREACHABLE): Promise<Process> {
  const clock = new FakeClock(T0);
  const config: ControllerConfig = await parseControllerFlags(['--leader-elect=false', '--secure-port=0', ...flags], {});
  const names = Object.keys(nodes);
  const cluster = new InMemoryCluster(
    {
      takenAt: T0,
      nodes: names.map((n) => nodeOf(n, nodes[n] ?? 'ready', taintKey)),
      leases: names.map((n) => leaseOf(n, nodes[n] ?? 'ready')),
      pods: names.map((n) => podOf(`pod-${n}`, n)),
      daemonSets: [],
      volumeAttachments: [],
      pvcs: [],
      pvs: [],
    },
    clock,
    { graceMs: config.nodeMonitorGracePeriod, record: true },
  );
  const sources = clusterSources(cluster);
  const metrics = createMetrics({ defaultMetrics: false });
  const { byKey, list } = buildControllers(
    { config, clock, log: silentLogger, metrics, identity: 'test', sources, ...sightOf(sources), judgements: new NodeJudgementBoard(), io: (d) => lagged(clusterIO(cluster, d), clock) },
    enabledControllers(config),
  );
  for (const r of list) r.controller.start();
  cluster.startKubelets();
  return {
    clock,
    cluster,
    byKey,
    deletedAt: (pod) => {
      const e = cluster.timeline.find((t) => t.kind === 'pod-deleted' && t.pod === `default/${pod}`);
      return e && T0 + e.atMs;
    },
    taintsOf: (node) => (cluster.nodes.get(node)?.taints ?? []).filter((t) => t.effect === 'NoExecute').map((t) => t.key),
  };
}

/** `io` with the node lifecycle controller's taint writes delayed by {@link NLC_WRITE_LAG_MS} of `clock`. */
function lagged(io: ControllerIO, clock: FakeClock): ControllerIO {
  return {
    ...io,
    nodeLifecycleWrites: () => {
      const w = io.nodeLifecycleWrites();
      const slow: NodeLifecycleWrites = Object.create(w) as NodeLifecycleWrites;
      slow.swapNodeTaints = async (...args) => {
        await clock.sleep(NLC_WRITE_LAG_MS);
        return w.swapNodeTaints(...args);
      };
      return slow;
    },
  };
}

describe('the start hold: a restart past a toleration deadline', () => {
  test('a node that is Ready at the start: nothing is deleted and the stale unreachable taint is removed', async () => {
    const p = await startProcess({ healthy: 'ready' });
    await p.clock.advanceAsync(2 * GRACE_MS + 10_000);
    assert.equal(p.deletedAt('pod-healthy'), undefined, 'the pod of a Ready node is never deleted on a taint the node lifecycle controller removes');
    assert.deepEqual(p.taintsOf('healthy'), [], 'the node lifecycle controller removed the stale NoExecute taint');
    assert.equal(p.byKey.taintEviction?.view().length, 0, 'nothing pending or held once the taint is gone');
  });

  test('a Ready node with a stale not-ready taint: nothing deleted, taint removed', async () => {
    const p = await startProcess({ healthy: 'ready' }, [], TAINT_NODE_NOT_READY);
    await p.clock.advanceAsync(GRACE_MS);
    assert.equal(p.deletedAt('pod-healthy'), undefined);
    assert.deepEqual(p.taintsOf('healthy'), []);
  });

  test('a node still dead (Unknown at the start): held for a fresh grace period from the start, then deleted', async () => {
    const p = await startProcess({ dead: 'unknown', alive: 'ready' });
    await p.clock.advanceAsync(GRACE_MS - 1000);
    assert.equal(p.deletedAt('pod-dead'), undefined, 'not before the node lifecycle controller saw the node silent for a grace period since the start');
    const held = p.byKey.taintEviction?.view().find((v) => v.pod === 'default/pod-dead');
    assert.equal(held?.state, 'held', 'the deletion is shown as held');
    assert.match(held?.reason ?? '', /held: the node lifecycle controller has not yet seen the node silent/);
    assert.deepEqual(p.taintsOf('dead'), [TAINT_NODE_UNREACHABLE], 'the taint stays, with its timeAdded (deadlines are restart-safe)');
    await p.clock.advanceAsync(GRACE_MS);
    const at = p.deletedAt('pod-dead');
    assert.ok(at !== undefined, 'deleted once confirmed');
    assert.ok(at > T0 + GRACE_MS && at <= T0 + GRACE_MS + 6000, `deleted ${(at - T0) / 1000} s after the start; want just after the ${GRACE_MS / 1000} s grace (plus at most a monitor period)`);
    assert.equal(p.deletedAt('pod-alive'), undefined);
  });

  // The road of a deadline the current view puts later (issue 57, fuzz seed 20271208 run 2683 found
  // the clock-step road): a lengthened toleration keeps its old schedule, as upstream's does, but the
  // start hold must still judge it when it fires. Upstream restarted at T0 strips and re-adds the
  // taint, so it deletes nothing before T0 + the new toleration.
  test('a lengthened toleration whose old deadline fires before the node is confirmed: held, not deleted then', async () => {
    const p = await startProcess({ dead: 'unknown', alive: 'ready' });
    const node = p.cluster.nodes.get('dead');
    assert.ok(node);
    // The taint was added 280 s before the start: the 300 s toleration runs out at T0 + 20 s.
    p.cluster.putNode({ ...node, taints: node.taints.map((t) => ({ ...t, timeAdded: T0 - 280_000 })) });
    await p.clock.advanceAsync(5000);
    const pod = p.cluster.pods.get('default/pod-dead');
    assert.ok(pod);
    p.cluster.putPod({ ...pod, tolerations: pod.tolerations.map((t) => ({ ...t, tolerationSeconds: 3600 })) });
    await p.clock.advanceAsync(GRACE_MS - 10_000);
    assert.equal(p.deletedAt('pod-dead'), undefined, 'the old schedule fired at T0 + 20 s, before the node was confirmed: held');
  });

  test('a node whose kubelet reports Ready=False: confirmed at the node lifecycle controller\'s first look, deleted at once', async () => {
    const p = await startProcess({ sick: 'not-ready', alive: 'ready' }, [], TAINT_NODE_NOT_READY);
    await p.clock.advanceAsync(6000);
    const at = p.deletedAt('pod-sick');
    assert.ok(at !== undefined && at <= T0 + 6000, 'deleted within the first monitor period');
  });

  test('without a node lifecycle controller in this process: held one grace period after the first sight, then decided again', async () => {
    const p = await startProcess({ dead: 'unknown' }, ['--controllers=taint-eviction-controller']);
    await p.clock.advanceAsync(GRACE_MS - 1000);
    assert.equal(p.deletedAt('pod-dead'), undefined, 'time before the first sight is blind');
    await p.clock.advanceAsync(2000);
    const at = p.deletedAt('pod-dead');
    assert.ok(at !== undefined && at <= T0 + GRACE_MS + 1000, 'deleted when the hold ends, the taint still there');
  });
});

describe('node judgements (src/kube/judgements.ts)', () => {
  test('False confirms at once; Unknown only after a full grace period since the first look; True never', () => {
    assert.equal(notConfirmedBecause({ ready: 'False', expired: false, gracePeriodMs: GRACE_MS }, 0), undefined);
    assert.notEqual(notConfirmedBecause({ ready: 'Unknown', expired: false, gracePeriodMs: GRACE_MS }, GRACE_MS + 1), undefined);
    assert.notEqual(notConfirmedBecause({ ready: 'Unknown', expired: true, gracePeriodMs: GRACE_MS }, GRACE_MS), undefined, 'expired on first look (startup grace from creation) is not enough');
    assert.equal(notConfirmedBecause({ ready: 'Unknown', expired: true, gracePeriodMs: GRACE_MS }, GRACE_MS + 1), undefined);
    assert.notEqual(notConfirmedBecause({ ready: 'True', expired: true, gracePeriodMs: GRACE_MS }, 10 * GRACE_MS), undefined);
    assert.notEqual(notConfirmedBecause({ ready: undefined, expired: true, gracePeriodMs: GRACE_MS }, 10 * GRACE_MS), undefined);
  });

  test('the board: nothing confirmed without a judge, or before a look since the start; listeners hear confirmation changes only', () => {
    const b = new NodeJudgementBoard();
    const heard: string[] = [];
    b.onChange((n) => heard.push(n));
    assert.match(b.notConfirmedBecause('n') ?? '', /no node lifecycle controller/);
    b.attachJudge();
    b.started();
    assert.match(b.notConfirmedBecause('n') ?? '', /not judged the node since it started/);
    b.observed('n', { ready: 'Unknown', expired: false, gracePeriodMs: 10 }, 0);
    b.observed('n', { ready: 'Unknown', expired: false, gracePeriodMs: 10 }, 5);
    assert.deepEqual(heard, []);
    b.observed('n', { ready: 'Unknown', expired: true, gracePeriodMs: 10 }, 11);
    assert.equal(b.notConfirmedBecause('n'), undefined);
    assert.deepEqual(heard, ['n']);
    b.started();
    assert.notEqual(b.notConfirmedBecause('n'), undefined, 'a new start forgets every judgement');
    assert.deepEqual(heard, ['n', 'n']);
  });
});
