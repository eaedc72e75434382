/**
 * The invariant fuzzing harness: plays one event sequence (./events.ts) on the real controllers,
 * built through the controller registry as `run` and `what-if` build them (src/controllers/registry.ts,
 * src/whatif/sources.ts), over the in-memory cluster (src/inmemory/) on a FakeClock, and checks the
 * invariants at the moment each write lands (every timeline entry is seen as it is pushed) and,
 * for "nothing lost", after a quiet tail.
 *
 * The invariants compare with the references of ./reference.ts (upstream's definitions), never
 * with our own decision functions:
 * - (a) no pod is deleted by the taint eviction controller before upstream's schedule for it
 *   (`processPodOnNode`, fed the same changes at the same times); after a restart that lost that
 *   schedule, before `max(taint timeAdded, when its current tolerations were set) + tolerationSeconds`;
 * - (b) no pod is deleted by the taint eviction or node lifecycle controller on a node whose API Ready
 *   condition has been True for longer than one monitor period (+1 s), unless a NoExecute taint the
 *   node lifecycle controller does not manage (out-of-service) calls for it;
 * - (c) no `unreachable`/`not-ready` NoExecute taint is added while every node has been not Ready
 *   for longer than one monitor period (+1 s): upstream's all-zones stop (`handleDisruption`);
 * - (d) nothing lost: after the last event and the last write fault, a pod with finite tolerations on
 *   a node whose kubelet stays down or NotReady, in a zone upstream evicts from, is deleted within
 *   {@link lostBoundMs}.
 *
 * Times: epoch milliseconds unless named otherwise.
 */
import { ApiException } from '@kubernetes/client-node';
import type { ControllerConfig } from '../../src/controllers/config.js';
import type { ControllerSources } from '../../src/controllers/context.js';
import { buildControllers, enabledControllers, sightOf, type RunnableController } from '../../src/controllers/registry.js';
import { InMemoryCluster, type TimelineEntry } from '../../src/inmemory/cluster.js';
import { NodeJudgementBoard } from '../../src/kube/judgements.js';
import type { Node, Pod, Toleration } from '../../src/kube/objects.js';
import { getCondition, podKey } from '../../src/kube/objects.js';
import { silentLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { syntheticSnapshot } from '../../src/whatif/synthetic.js';
import { clusterIO, clusterSources } from '../../src/whatif/sources.js';
import { NODE_NAMES, NODES_PER_ZONE, VOCABULARY, ZONES, eventText, type FaultMethod, type FuzzEvent, type Step, type Tol } from './events.js';
import { FuzzClock } from './clock.js';
import { UpstreamTaintEviction, noExecuteTaints, restartSafeBound, zoneState } from './reference.js';

const T0 = Date.UTC(2026, 2, 1, 12);
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
/** Tolerance of the restart-safe bound, ms: our deadlines may use `timeAdded`, which has whole-second precision on the wire. */
const TIME_ADDED_PRECISION_MS = 1000;
/** The shortest quiet tail after the last event, fault and Lease pause, ms (the tail runs on to (d)'s last due time). */
export const MIN_TAIL_MS = 60_000;
/** The tolerations every pod starts with before any edit: the kind of the initial pods (one per node). */
const INITIAL_TOL: Tol = { kind: 'seconds', s: 60 };

export type Invariant = 'a' | 'b' | 'c' | 'd';

/** One violation: which invariant, when (ms after T+0), and what happened, in words. */
export interface Violation {
  invariant: Invariant;
  atMs: number;
  detail: string;
}

/** What one run did. */
export interface RunResult {
  violations: Violation[];
  /** Events applied (an edit of a pod already gone is not counted). */
  events: number;
  /** Applied events by vocabulary item. */
  coverage: Record<FuzzEvent['kind'], number>;
  /** Timers fired on the run's clock. */
  timers: number;
  /** Outcomes seen: taint-eviction deletions, force deletions, NoExecute taints added by the node lifecycle controller. */
  outcomes: { deletions: number; forceDeletions: number; noExecuteTaints: number };
  /** The run as text, one line per applied event with its time (s after T+0), then the violations. */
  text: string;
}

/** The tolerations of a {@link Tol}. */
export function tolerationsOf(t: Tol): Toleration[] {
  switch (t.kind) {
    case 'none':
      return [];
    case 'everything':
      return [{ operator: 'Exists' }];
    case 'forever':
      return [UNREACHABLE, NOT_READY].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute' }));
    case 'seconds':
      return [UNREACHABLE, NOT_READY].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: t.s }));
  }
}

/**
 * (d)'s bound, ms after the later of the node going down, the tolerations being set, the last
 * restart, the last write fault, the last change of health in the node's zone and the end of the
 * last all-zones stop (upstream's rate for the zone changes only at those last two): the grace period and a monitor period before the taint, the
 * start hold's fresh grace period after a restart, the toleration, the zone's token bucket for every
 * node of the zone (`--node-eviction-rate`), and two more monitor periods and 10 s of slack.
 */
export function lostBoundMs(config: ControllerConfig, tolerationS: number): number {
  const bucketMs = NODES_PER_ZONE * (1000 / config.nodeEvictionRate);
  return config.nodeMonitorGracePeriod * 2 + config.nodeMonitorPeriod * 3 + tolerationS * 1000 + bucketMs + 10_000;
}

/** The controllers' sources, their handlers gated by `live` (a stopped process's handlers are unsubscribed). */
function gated(sources: ControllerSources, live: () => boolean): ControllerSources {
  const out: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(sources) as [string, unknown][]) {
    const s = source as { subscribe?: (h: Record<string, unknown>) => void };
    if (typeof s.subscribe !== 'function') {
      out[name] = source;
      continue;
    }
    const subscribe = s.subscribe.bind(s);
    out[name] = {
      ...(source as object),
      subscribe: (h: Record<string, unknown>) => {
        const wrapped: Record<string, unknown> = {};
        for (const [k, f] of Object.entries(h)) {
          wrapped[k] = typeof f === 'function' ? (...args: unknown[]) => (live() ? (f as (...a: unknown[]) => unknown)(...args) : undefined) : f;
        }
        subscribe(wrapped);
      },
    };
  }
  return out as unknown as ControllerSources;
}

interface KubeletTruth {
  running: boolean;
  reportsReady: boolean;
  /** Since when (epoch ms) the kubelet has been down or reporting NotReady; undefined when healthy. */
  unhealthySince: number | undefined;
}

/**
 * Plays `steps` and checks the invariants.
 * @param config the controller configuration (`parseControllerFlags`), as `run` would use it.
 * @returns the violations, coverage and a readable account. Never throws for a violation.
 */
export async function runSequence(steps: readonly Step[], config: ControllerConfig): Promise<RunResult> {
  const clock = new FuzzClock(T0);
  const snapshot = syntheticSnapshot({ zones: ZONES, nodesPerZone: NODES_PER_ZONE, podsPerNode: 0, takenAt: T0 });
  const tolsSetAt = new Map<string, number>();
  const podNames: string[] = [];
  let podSeq = 0;
  const newPod = (node: string, tol: Tol): Pod => {
    const i = podSeq++;
    const uid = `fz-uid-${i}`;
    tolsSetAt.set(uid, clock.now());
    podNames.push(`default/fz-${i}`);
    return {
      namespace: 'default',
      name: `fz-${i}`,
      uid,
      resourceVersion: '1',
      nodeName: node,
      phase: 'Running',
      creationTimestamp: clock.now(),
      conditions: [{ type: 'Ready', status: 'True' }],
      tolerations: tolerationsOf(tol),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-web', controller: true }],
      pvcNames: [],
      finalizers: [],
    };
  };
  for (const n of NODE_NAMES) snapshot.pods.push(newPod(n, INITIAL_TOL));
  const cluster = new InMemoryCluster(snapshot, clock, { graceMs: config.nodeMonitorGracePeriod });
  const violations: Violation[] = [];
  const lines: string[] = [];
  const at = (): number => clock.now() - T0;
  const violate = (invariant: Invariant, detail: string): void => {
    violations.push({ invariant, atMs: at(), detail });
  };

  // The reference sees every change first: its handlers are subscribed before any controller's.
  const upstream = new UpstreamTaintEviction();
  cluster.on('nodes', { add: (n) => upstream.nodeUpdated(undefined, n, cluster.podsOnNode(n.name), clock.now()), update: (o, n) => upstream.nodeUpdated(o, n, cluster.podsOnNode(n.name), clock.now()) });
  cluster.on('pods', {
    add: (p) => upstream.podUpdated(undefined, p, cluster.nodes.get(p.nodeName), clock.now()),
    update: (o, p) => upstream.podUpdated(o, p, cluster.nodes.get(p.nodeName), clock.now()),
    delete: (p) => upstream.podUpdated(p, undefined, undefined, clock.now()),
  });

  let lastRestartAt = -Infinity;
  const readyFor = (n: Node | undefined): { ready: boolean; sinceMs: number } => {
    const c = n && getCondition(n.conditions, 'Ready');
    return { ready: c?.status === 'True', sinceMs: c?.lastTransitionTime ?? T0 - 86_400_000 };
  };
  const settled = (): number => clock.now() - config.nodeMonitorPeriod - 1000;
  const outcomes = { deletions: 0, forceDeletions: 0, noExecuteTaints: 0 };

  const check = (e: TimelineEntry): void => {
    if (e.kind === 'pod-deleted' && e.force) outcomes.forceDeletions++;
    if (e.kind === 'pod-deleted' && !e.force && (e.by === 'taint-eviction-controller' || e.by === 'node-lifecycle-controller')) {
      outcomes.deletions++;
      const pod = cluster.pods.get(e.pod);
      const node = cluster.nodes.get(e.node);
      if (!pod) return;
      // (a) pkg/controller/tainteviction/taint_eviction.go processPodOnNode: the schedule upstream keeps.
      if (e.by === 'taint-eviction-controller') {
        const s = upstream.scheduled(pod.uid);
        let allowed = s?.fireAt ?? Infinity;
        let why = s ? `upstream's schedule fires at ${fmt(s.fireAt)}` : 'upstream has no deletion scheduled';
        if (lastRestartAt > (s?.createdAt ?? -Infinity)) {
          const bound = restartSafeBound(noExecuteTaints(node), pod.tolerations, tolsSetAt.get(pod.uid) ?? -Infinity) - TIME_ADDED_PRECISION_MS;
          if (bound < allowed) {
            allowed = bound;
            why = `restarted at ${fmt(lastRestartAt)}; max(timeAdded, tolerations set) + tolerationSeconds = ${fmt(bound + TIME_ADDED_PRECISION_MS)}`;
          }
        }
        if (clock.now() < allowed) violate('a', `${e.pod} deleted at ${fmt(clock.now())} on ${e.node} (${taintText(node)}): ${why}`);
      }
      // (b) A Ready node's NoExecute taints are the node lifecycle controller's to remove
      // (node_lifecycle_controller.go processTaintBaseEviction: markNodeAsReachable when Ready).
      const r = readyFor(node);
      const foreign = noExecuteTaints(node).some((t) => t.key !== UNREACHABLE && t.key !== NOT_READY);
      if (r.ready && r.sinceMs <= settled() && !foreign) violate('b', `${e.pod} deleted on ${e.node}, Ready since ${fmt(r.sinceMs)}`);
    }
    if (e.kind === 'taint' && e.by === 'node-lifecycle-controller') {
      const added = e.added.filter((t) => t.endsWith(':NoExecute') && (t.startsWith(UNREACHABLE) || t.startsWith(NOT_READY)));
      if (added.length === 0) return;
      outcomes.noExecuteTaints++;
      // (c) node_lifecycle_controller.go handleDisruption: every zone in FullDisruption stops all tainting.
      const nodes = cluster.nodeList();
      const allDown = nodes.length > 0 && nodes.every((n) => !readyFor(n).ready && readyFor(n).sinceMs <= settled());
      if (allDown) violate('c', `${added.join(', ')} added to ${e.node} while every node has been not Ready for over a monitor period`);
    }
  };
  const push = cluster.timeline.push.bind(cluster.timeline);
  cluster.timeline.push = (...items: TimelineEntry[]): number => {
    for (const e of items) check(e);
    return push(...items);
  };

  // Write faults: a 500 on every call of the method (or every call) until the fault's end.
  const faultUntil = new Map<FaultMethod, number>();
  let lastFaultEnd = -Infinity;
  let lastPauseEnd = -Infinity;
  cluster.writer.fail = (call) => {
    const now = clock.now();
    if ((faultUntil.get('all') ?? 0) > now || (faultUntil.get(call.method as FaultMethod) ?? 0) > now) {
      return new ApiException(500, `fuzz: injected failure of ${call.method}`, '{}', {});
    }
    return undefined;
  };

  // One process: every enabled controller, built through the registry; a restart starts another.
  let generation = 0;
  let running: { controller: RunnableController }[] = [];
  const startProcess = (): void => {
    const mine = ++generation;
    const sources = gated(clusterSources(cluster), () => generation === mine);
    const { list } = buildControllers(
      { config, clock, log: silentLogger, metrics: createMetrics({ defaultMetrics: false }), identity: `fuzz-${mine}`, sources, ...sightOf(sources), judgements: new NodeJudgementBoard(), io: (d) => clusterIO(cluster, d) },
      enabledControllers(config),
    );
    for (const r of list) r.controller.start();
    running = list;
  };

  const truth = new Map<string, KubeletTruth>(NODE_NAMES.map((n) => [n, { running: true, reportsReady: true, unhealthySince: undefined }]));
  // When each zone's health last changed, and when the last all-zones stop ended: upstream's rate
  // for a zone (ComputeZoneState, the rate table) changes only then, so (d)'s clock starts no sooner.
  const zoneChangedAt = new Map<string, number>();
  let allDownEndedAt = -Infinity;
  const everyNodeDown = (): boolean => [...truth.values()].every((k) => k.unhealthySince !== undefined);
  const setTruth = (name: string, change: Partial<KubeletTruth>): void => {
    const k = truth.get(name);
    if (!k) return;
    const wasAllDown = everyNodeDown();
    const wasHealthy = k.running && k.reportsReady;
    Object.assign(k, change);
    const healthy = k.running && k.reportsReady;
    if (wasHealthy && !healthy) k.unhealthySince = clock.now();
    if (healthy) k.unhealthySince = undefined;
    if (wasHealthy !== healthy) zoneChangedAt.set(name.split('-')[0] ?? '', clock.now());
    if (wasAllDown && !everyNodeDown()) allDownEndedAt = clock.now();
  };
  const coverage = Object.fromEntries(VOCABULARY.map((k) => [k, 0])) as Record<FuzzEvent['kind'], number>;
  let events = 0;

  const apply = async (e: FuzzEvent): Promise<boolean> => {
    const nodeName = 'node' in e ? (NODE_NAMES[e.node % NODE_NAMES.length] ?? '') : '';
    switch (e.kind) {
      case 'kubelet-stop':
        cluster.apply('stop-kubelet', [nodeName]);
        setTruth(nodeName, { running: false });
        return true;
      case 'kubelet-start':
        cluster.apply('start-kubelet', [nodeName]);
        setTruth(nodeName, { running: true });
        return true;
      case 'report-not-ready':
      case 'report-ready':
        cluster.apply(e.kind, [nodeName]);
        setTruth(nodeName, { reportsReady: e.kind === 'report-ready' });
        return true;
      case 'lease-pause':
        cluster.apply('pause-heartbeats', [nodeName], e.forS * 1000);
        lastPauseEnd = Math.max(lastPauseEnd, clock.now() + e.forS * 1000);
        return true;
      case 'pod-add':
        cluster.putPod(newPod(nodeName, e.tol));
        return true;
      case 'tolerations-edit': {
        const key = podNames[e.pod % podNames.length];
        const cur = key === undefined ? undefined : cluster.pods.get(key);
        if (!cur || cur.deletionTimestamp !== undefined) return false;
        tolsSetAt.set(cur.uid, clock.now());
        cluster.putPod({ ...cur, tolerations: tolerationsOf(e.tol) });
        return true;
      }
      case 'oos-add':
        cluster.apply('out-of-service', [nodeName]);
        return true;
      case 'oos-remove': {
        // The index picks among the nodes that carry the taint: a random node rarely does.
        const tainted = cluster.nodeList().filter((x) => x.taints.some((t) => t.key === OUT_OF_SERVICE));
        const n = tainted[e.node % Math.max(1, tainted.length)];
        if (!n) return false;
        cluster.putNode({ ...n, taints: n.taints.filter((t) => t.key !== OUT_OF_SERVICE) });
        return true;
      }
      case 'write-fault': {
        const until = clock.now() + e.forS * 1000;
        faultUntil.set(e.method, Math.max(faultUntil.get(e.method) ?? 0, until));
        lastFaultEnd = Math.max(lastFaultEnd, until);
        return true;
      }
      case 'restart':
        for (const r of running) await r.controller.stop();
        startProcess();
        lastRestartAt = clock.now();
        return true;
    }
  };

  startProcess();
  cluster.startKubelets();
  await clock.advanceAsync(0);
  for (const s of steps) {
    await clock.advanceAsync(s.afterS * 1000);
    const names = podNames.map((k) => k.slice('default/'.length));
    if (await apply(s.event)) {
      events++;
      coverage[s.event.kind]++;
      lines.push(`  +${(at() / 1000).toFixed(0)}s ${eventText(s.event, names)}`);
    }
  }
  // (d) Nothing lost: upstream deletes every pod whose toleration ran out on a node it keeps
  // tainted (taint_eviction.go), and taints every not-Ready node of a zone it evicts from
  // (node_lifecycle_controller.go handleDisruption, ComputeZoneState, ReducedQPSFunc: a partially
  // disrupted zone of at most --large-cluster-size-threshold nodes is not evicted from). No event
  // comes after the last step, so each such pod's due time is known now: the quiet tail runs until
  // the last of them (at least MIN_TAIL_MS after the last step, fault and Lease pause).
  const zoneOf = (n: string): string => n.split('-')[0] ?? '';
  const states = new Map<string, string>(ZONES.map((z) => [z, zoneState(NODE_NAMES.filter((n) => zoneOf(n) === z).map((n) => truth.get(n)?.unhealthySince === undefined), config.unhealthyZoneThreshold)]));
  const allDown = everyNodeDown();
  const dues: { pod: Pod; due: number; detail: string }[] = [];
  for (const pod of cluster.podList()) {
    const k = truth.get(pod.nodeName);
    const node = cluster.nodes.get(pod.nodeName);
    if (!k || k.unhealthySince === undefined || allDown || pod.deletionTimestamp !== undefined) continue;
    if (states.get(zoneOf(pod.nodeName)) === 'PartialDisruption' || noExecuteTaints(node).some((t) => t.key === OUT_OF_SERVICE)) continue;
    const tol = pod.tolerations.find((t) => t.key === (k.running ? NOT_READY : UNREACHABLE)) ?? pod.tolerations.find((t) => t.key === undefined && t.operator === 'Exists');
    if (tol && tol.tolerationSeconds === undefined) continue;
    const s = Math.max(0, tol?.tolerationSeconds ?? 0);
    const from = Math.max(k.unhealthySince, tolsSetAt.get(pod.uid) ?? -Infinity, lastRestartAt, lastFaultEnd, zoneChangedAt.get(zoneOf(pod.nodeName)) ?? -Infinity, allDownEndedAt);
    dues.push({ pod, due: from + lostBoundMs(config, s), detail: `kubelet ${k.running ? 'reporting NotReady' : 'stopped'} since ${fmt(k.unhealthySince)}, tolerating ${s} s` });
  }
  const tailEnd = Math.max(clock.now(), lastFaultEnd, lastPauseEnd) + MIN_TAIL_MS;
  await clock.advanceAsync(Math.max(tailEnd, ...dues.map((d) => d.due + 1000)) - clock.now());
  const end = clock.now();
  for (const { pod, due, detail } of dues) {
    const cur = cluster.pods.get(podKey(pod));
    if (cur?.uid !== pod.uid || cur.deletionTimestamp !== undefined) continue;
    violations.push({ invariant: 'd', atMs: end - T0, detail: `${podKey(pod)} on ${pod.nodeName} (${detail}) not deleted by ${fmt(due)}` });
  }
  for (const r of running) await r.controller.stop();

  const text = [...lines, ...violations.map((v) => `  VIOLATION (${v.invariant}) at +${(v.atMs / 1000).toFixed(1)}s: ${v.detail}`)].join('\n');
  return { violations, events, timers: clock.fired, coverage, outcomes, text };
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? `+${((ms - T0) / 1000).toFixed(1)}s` : String(ms);
}

function taintText(n: Node | undefined): string {
  const ts = noExecuteTaints(n).map((t) => `${t.key}:NoExecute@${t.timeAdded === undefined ? '?' : fmt(t.timeAdded)}`);
  return ts.length > 0 ? ts.join(', ') : 'no NoExecute taint';
}
