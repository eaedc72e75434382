/**
 * The invariant fuzzing harness: plays one event sequence (./events.ts) on the real controllers,
 * built through the controller registry as `run` and `what-if` build them (src/controllers/registry.ts,
 * src/whatif/sources.ts), over the in-memory cluster (src/inmemory/) on a simulated clock (./clock.ts), and checks the
 * invariants at the moment each write lands (every timeline entry is seen as it is pushed) and,
 * for "nothing lost", after a quiet tail.
 *
 * The invariants compare with the references of ./reference.ts (upstream's definitions), never
 * with our own decision functions (docs/safety.md states each with its citation and bound):
 * - (a) no pod is deleted by the taint eviction controller before upstream's schedule for it
 *   (`processPodOnNode`, fed the same changes at the same times, or through informers whose nodes
 *   and pods watches drop as ours do, whichever fires first); after a restart that lost that
 *   schedule, before `max(taint timeAdded, when its current tolerations were set) + tolerationSeconds`
 *   (less the largest clock step seen);
 * - (b) no pod is deleted by the taint eviction or node lifecycle controller on a node whose API Ready
 *   condition has been True for longer than one monitor period (+1 s), unless a NoExecute taint the
 *   node lifecycle controller does not manage (out-of-service) calls for it;
 * - (c) no `unreachable`/`not-ready` NoExecute taint is added while every zone has been in
 *   FullDisruption, or while the node's zone has had rate 0 by upstream's rate table
 *   (`setLimiterInZone`, `ReducedQPSFunc`), for longer than one monitor period (+1 s);
 * - (d) nothing lost: once events and faults stop, a pod with finite tolerations on a node whose
 *   kubelet stays down or NotReady, in a zone upstream evicts from, is deleted within
 *   {@link lostBoundMs} (a pod whose deletion the harness answered 404 is exempt: the controller, as
 *   upstream's, takes it for gone); every Ready node's NoExecute taints go within {@link readyUntaintBoundMs};
 * - (e) no zone's first NoExecute taints come faster than its token bucket allows
 *   (`flowcontrol.NewTokenBucketRateLimiter(qps, 1)`, a fresh one at each zone state change);
 * - (f) no VolumeAttachment is deleted while a pod holds its volume (an unresolvable claim holds
 *   every volume), nor from a Ready node that is not out of service (reconciler.go);
 * - (g) no taint-eviction deletion while the nodes, pods or Leases cache has no watch stream;
 * - (h) nothing is done to or because of an object the API holds malformed (settled): no deletion
 *   of such a pod, no taint added to such a node, no detach of such a VolumeAttachment nor from a
 *   node with such a pod, no force delete of a pod whose node is such (not gone), except one that
 *   upstream's `gcTerminated` chooses: it lists pods only, so the node is no input to it;
 * - (i) node-affinity-enforcer evicts only a pod whose rule has not matched its node's labels for a
 *   whole `--affinity-violation-grace`, on a node not settled not-Ready, never a DaemonSet pod, and
 *   no faster than its token bucket (`--affinity-eviction-rate`, burst 1) allows;
 * - (j) pod GC's terminated pass deletes only the oldest terminated pods beyond
 *   `--terminated-pod-gc-threshold`, in upstream's order (`gcTerminated`, `byEvictionAndCreationTimestamp`);
 * - (k) every pod GC force deletion is one of upstream's four passes; an orphan never before the 40 s
 *   quarantine and never without a live 404 for its node (`gcOrphaned`, `discoverDeletedNodes`,
 *   `checkIfNodeExists`); a `DisruptionTarget` condition exactly where upstream's patch carries one
 *   (`markFailedAndDeletePodWithCondition`: orphans that are not terminal yet);
 * - (l) the start hold: after a (re)start or failover, no deletion for `unreachable`/`not-ready` before
 *   this process could have judged the node not Ready from its own observations (the kubelet's
 *   Ready=False, or a grace period without a renewal from its start: `tryUpdateNodeHealth`'s
 *   first-sight probe timestamp), unless upstream restarted at the same instant could delete it by
 *   then (its taint manager's fresh schedule: `processPodOnNode`, `getMinTolerationTime`);
 * - (m) after an API server outage: no taint, Unknown mark, pod NotReady mark or deletion on a node
 *   before this process's first judgement of it from post-outage data (its Node cache relisted and the
 *   kubelet's Ready=False, or a whole grace period without a renewal since its Node and Lease caches
 *   relisted); the first 2 s of the lost streams are a reconnect (node-lifecycle.md difference 5); not
 *   for a process whose controllers started once the outage had begun (its first sight: (l) applies);
 * - (n) wire: a run holding a wire event (`wire-bytes`, `wire-truncated`) is played twice, its Nodes,
 *   Pods and Leases reaching the caches once through the protobuf path (@bufbuild/protobuf encode →
 *   the project's decoder) and once through the JSON path (./wire.ts); the two runs' decisions (every
 *   taint and untaint, condition mark, pod NotReady mark, deletion, force deletion and detach, with
 *   its time) must be identical ({@link WIRE_ACTIONS}, {@link runSequence}).
 *
 * Times: epoch milliseconds unless named otherwise.
 */
import { ApiException } from '@kubernetes/client-node';
import type { ControllerConfig } from '../../src/controllers/config.js';
import { buildControllers, enabledControllers, sightOf } from '../../src/controllers/registry.js';
import { InMemoryCluster, type TimelineEntry } from '../../src/inmemory/cluster.js';
import { NodeJudgementBoard } from '../../src/kube/judgements.js';
import { RequestTimeoutError } from '../../src/kube/client.js';
import type { Node, NodeCondition, Pod, Toleration } from '../../src/kube/objects.js';
import { getCondition, podKey } from '../../src/kube/objects.js';
import { silentLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import type { TimerHandle } from '../../src/util/clock.js';
import { syntheticSnapshot } from '../../src/whatif/synthetic.js';
import { clusterIO } from '../../src/whatif/sources.js';
import { NODE_NAMES, NODES_PER_ZONE, VOCABULARY, ZONES, ZONE_LABELS, eventText, hasWireEvent, itemsOf, type FaultCode, type FuzzEvent, type Step, type Tol, type VocabularyItem, type Vol } from './events.js';
import { FuzzClock } from './clock.js';
import { ProcessCaches, WATCHED, type WatchedResource } from './watch.js';
import { REQUIRED_DURING_EXECUTION_ANNOTATION, podRule, type PodRule } from '../../src/nodeaffinity/rule.js';
import {
  DroppedWatchUpstream,
  GC_CHECK_PERIOD_MS,
  ORPHAN_QUARANTINE_MS,
  UpstreamTaintEviction,
  gcPodTerminated,
  gcTerminatedToDelete,
  judgedNotReady,
  noExecuteTaints,
  orphanQuarantineEnd,
  podHoldsVolume,
  restartSafeBound,
  tokenBucketExcess,
  upstreamRestartedEarliestDeletion,
  zoneRate,
  zoneState,
} from './reference.js';
import { MemoryLeaseApi, Proc } from './process.js';
import { seededRandom } from '../support/seeded-random.js';
import { WIRE_BAD_BYTES, WireMirror, goRendered, type WireMode } from './wire.js';

type ZoneStateName = ReturnType<typeof zoneState>;

const T0 = Date.UTC(2026, 2, 1, 12);
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** NTP's step bound: the controllers' clock is never more than this off the true time, ms. */
const MAX_CLOCK_STEP_MS = 500;
/** Tolerance of the restart-safe bound, ms: our deadlines may use `timeAdded`, which has whole-second precision on the wire. */
const TIME_ADDED_PRECISION_MS = 1000;
/** The shortest quiet tail after the last event, fault and Lease pause, ms (the tail runs on to (d)'s last due time). */
export const MIN_TAIL_MS = 60_000;
/** The tolerations every pod starts with before any edit: the kind of the initial pods (one per node). */
const INITIAL_TOL: Tol = { kind: 'seconds', s: 60 };

/** Who the timeline names for pod GC's force deletions (src/inmemory/writer.ts). */
const BY_POD_GC = 'pod-garbage-collector-controller';
/** A decision pod GC took right before (its sweep, then its queue): a terminated pod it deletes was among upstream's at most this long before, ms. */
const GC_IN_FLIGHT_MS = 1000;
/** A watch stream lost for less than this is a reconnect, not blindness (node-lifecycle.md difference 5), ms. */
const RECONNECT_ALLOWANCE_MS = 2000;
/** How long a Deployment takes to start a process that exited (the kubelet restarts its container), ms. */
const DEPLOYMENT_RESTART_MS = 1000;
/** An upper bound of how long after a pause begins the new leader starts (the Lease lapses 15 s after the standby first sees it; +5 s), ms. */
const LEASE_TAKEOVER_MS = 20_000;
/** Events that write to the API: none lands while the API server is down. */
const WRITES_TO_API: ReadonlySet<FuzzEvent['kind']> = new Set(['pressure', 'zone-change', 'pod-add', 'pod-delete', 'tolerations-edit', 'oos-add', 'oos-remove', 'pod-end', 'node-delete', 'unscheduled-terminating', 'wire-bytes']);
/** Events about a node's kubelet or Node object: none applies to a node that is deleted (kubelet-start registers it again). */
const NEEDS_NODE: ReadonlySet<FuzzEvent['kind']> = new Set(['kubelet-stop', 'report-not-ready', 'report-ready', 'pressure', 'lease-pause', 'zone-change', 'pod-add', 'oos-add', 'wire-bytes']);
/**
 * What counts as a judgement from a process's own observations (the start hold (l), and after an
 * outage (m)): the kubelet's own report of Ready=False; an Unknown in the API was written by an
 * earlier process, or before the outage, on what that one saw.
 */
const REPORTED_NOT_READY: ReadonlySet<string> = new Set(['False']);

export type Invariant = 'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g' | 'h' | 'i' | 'j' | 'k' | 'l' | 'm' | 'n';

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
  coverage: Record<VocabularyItem, number>;
  /** Timers fired on the run's clock. */
  timers: number;
  /**
   * Outcomes seen: taint-eviction deletions, force deletions, NoExecute taints added by the node
   * lifecycle controller, forced detaches, node affinity evictions; pod GC's force deletions by the
   * upstream pass that explains them (terminated, orphaned).
   */
  outcomes: {
    deletions: number;
    forceDeletions: number;
    noExecuteTaints: number;
    detaches: number;
    affinityEvictions: number;
    gcTerminated: number;
    gcOrphaned: number;
  };
  /** Pods (d) did not ask to be deleted although their deadline passed, and why (an injected 404 on their deletion). */
  exempt: string[];
  /** Taint-eviction deletions (a) allowed only by the schedule of an upstream whose watches dropped as ours did (earlier than one seeing every change at once), in words. */
  byDroppedWatch: string[];
  /** The run as text, one line per applied event with its time (s after T+0), then the exemptions and the violations. */
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

/**
 * (d)'s bound for a Ready node's NoExecute taints, ms after the later of it turning Ready, the last
 * fault and the last (re)start: a grace period (a restarted controller's start hold), two monitor
 * periods (the pass that sees it Ready, and one more) and 5 s of slack.
 */
export function readyUntaintBoundMs(config: ControllerConfig): number {
  return config.nodeMonitorGracePeriod + 2 * config.nodeMonitorPeriod + 5000;
}

interface KubeletTruth {
  running: boolean;
  reportsReady: boolean;
  /** Since when (epoch ms) the kubelet has been down or reporting NotReady; undefined when healthy. */
  unhealthySince: number | undefined;
}

/** The zone label of a node (`topology.kubernetes.io/zone`), read straight from its labels. */
function zoneLabel(n: Node | undefined): string {
  return n?.labels?.[ZONE_LABEL] ?? '';
}

/** The error an injected fault throws: an ApiException with the status (429 with `Retry-After: 2`), or a request timeout. */
function faultError(code: FaultCode, what: string): unknown {
  if (code === 'timeout') return new RequestTimeoutError('PATCH', `fuzz://${what}`, 10_000);
  return new ApiException(code, `fuzz: injected ${code} on ${what}`, '{}', code === 429 ? { 'retry-after': '2' } : {});
}

/** The timeline entries that are decisions, for (n): taints and untaints, condition marks, pod NotReady marks, deletions and force deletions, detaches. */
export const WIRE_ACTIONS: ReadonlySet<TimelineEntry['kind']> = new Set(['taint', 'condition', 'pod-not-ready', 'pod-deleted', 'detach']);

/** One decision of a run's timeline as text, with its time (ms after T+0), for (n). */
function actionText(e: TimelineEntry): string {
  const { atMs, ...rest } = e;
  return `+${(atMs / 1000).toFixed(3)}s ${JSON.stringify(rest)}`;
}

/**
 * (n) Wire: the decisions of a run do not depend on the wire its objects came by. Upstream decodes
 * protobuf and JSON into the same Go struct (client-go's `rest.Request` hands either body to the
 * negotiated `runtime.Decoder`: k8s.io/apimachinery `pkg/runtime/serializer/protobuf/protobuf.go`
 * `Serializer.Decode`, `pkg/runtime/serializer/json/json.go`), and its gogo-generated `Unmarshal`
 * (k8s.io/api `core/v1/generated.pb.go`, `coordination/v1/generated.pb.go`) reads a string field as
 * its raw bytes (`string(dAtA[iNdEx:postIndex])`, no UTF-8 check), which the API server's JSON then
 * renders with one U+FFFD per invalid byte (encoding/json); bytes `Unmarshal` refuses reach no
 * lister by either path (client-go's reflector fails the watch and the list). So
 * kube-controller-manager decides the same whatever `--kube-api-content-type` says, and ours must:
 * the run through the protobuf path and the run through the JSON path must write the same decisions
 * at the same times.
 * @returns the violation, or `undefined` when the two action logs are identical.
 */
export function wireViolation(protobuf: readonly string[], json: readonly string[]): Violation | undefined {
  const i = protobuf.findIndex((a, k) => a !== json[k]);
  const at = i >= 0 ? i : protobuf.length < json.length ? protobuf.length : -1;
  if (at < 0) return undefined;
  const atMs = Number(/^\+([0-9.]+)s/.exec(protobuf[at] ?? json[at] ?? '')?.[1] ?? 0) * 1000;
  return {
    invariant: 'n',
    atMs,
    detail: `the protobuf and JSON paths decided differently (${protobuf.length} and ${json.length} decisions; the first ${at} alike): decision #${at + 1} through protobuf: ${protobuf[at] ?? '(none)'}; through JSON: ${json[at] ?? '(none)'}`,
  };
}

/**
 * Plays `steps` and checks the invariants. A sequence holding a wire event is played twice, through
 * the protobuf path and through the JSON path (./wire.ts), and (n) compares their decisions
 * ({@link wireViolation}); the result is the protobuf run's, with the JSON run's violations (marked)
 * and its timers added. Any other sequence hands the in-memory objects to the caches as they are.
 * @param config the controller configuration (`parseControllerFlags`), as `run` would use it.
 * @param opts.trace sees every timeline entry as it is pushed (for replays by hand; of both runs of a wire run).
 * @returns the violations, coverage and a readable account. Never throws for a violation.
 */
export async function runSequence(steps: readonly Step[], config: ControllerConfig, opts: { trace?: (e: TimelineEntry) => void } = {}): Promise<RunResult> {
  if (!hasWireEvent(steps)) return playSequence(steps, config, opts);
  const pb = await playSequence(steps, config, { ...opts, wire: 'protobuf' });
  const js = await playSequence(steps, config, { ...opts, wire: 'json' });
  const jsViolations = js.violations.map((v) => ({ ...v, detail: `(JSON path) ${v.detail}` }));
  const wire = wireViolation(pb.actions, js.actions);
  const violations = [...pb.violations, ...jsViolations, ...(wire ? [wire] : [])];
  const extra = [...jsViolations, ...(wire ? [wire] : [])].map((v) => `  VIOLATION (${v.invariant}) at +${(v.atMs / 1000).toFixed(1)}s: ${v.detail}`);
  return { ...pb, violations, timers: pb.timers + js.timers, text: [pb.text, ...extra].join('\n') };
}

/**
 * One play of `steps` (see {@link runSequence}); `opts.wire` routes the Nodes, Pods and Leases
 * through that path (./wire.ts `WireMirror`).
 * @returns the run's result and its decisions as text ({@link WIRE_ACTIONS}).
 */
async function playSequence(steps: readonly Step[], config: ControllerConfig, opts: { trace?: (e: TimelineEntry) => void; wire?: WireMode }): Promise<RunResult & { actions: string[] }> {
  const clock = new FuzzClock(T0);
  // The controllers read time through a clock that NTP may step (clock-step): within ±500 ms of the
  // true time the cluster (kubelets, API timestamps) and the invariants use. A step moves the wall
  // reading only: the monotonic reading and the timers stay on the true timeline.
  let offsetMs = 0;
  let maxSkewMs = 0;
  const snapshot = syntheticSnapshot({ zones: ZONES, nodesPerZone: NODES_PER_ZONE, podsPerNode: 0, takenAt: T0 });
  /** Each node as registered at T+0: a kubelet that registers it again after a deletion posts this (a new uid). */
  const registered = new Map(snapshot.nodes.map((n) => [n.name, n]));
  const tolsSetAt = new Map<string, number>();
  const podNames: string[] = [];
  let podSeq = 0;
  const newPod = (node: string, tol: Tol, ds = false): Pod => {
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
      // As the API server (1.33+) sets it: 1 at creation, one more at each spec change.
      generation: 1,
      conditions: [{ type: 'Ready', status: 'True' }],
      tolerations: tolerationsOf(tol),
      ownerReferences: [ds ? { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-agent', controller: true } : { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-web', controller: true }],
      pvcNames: [],
      finalizers: [],
    };
  };
  for (const n of NODE_NAMES) snapshot.pods.push(newPod(n, INITIAL_TOL));
  snapshot.daemonSets.push({ namespace: 'default', name: 'agent', uid: 'ds-agent' });
  const cluster = new InMemoryCluster(snapshot, clock, { graceMs: config.nodeMonitorGracePeriod });
  // The timeline says everything the invariants need; the writer's call log would only grow.
  cluster.writer.recording = false;
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

  // The same upstream seen through informers whose nodes and pods streams drop when ours do: the
  // schedule kube-controller-manager would have on the observations ours had.
  const upstreamSeen = new DroppedWatchUpstream(cluster.nodeList(), cluster.podList());
  cluster.on('nodes', { add: (n) => upstreamSeen.node(n.name, n, clock.now()), update: (_o, n) => upstreamSeen.node(n.name, n, clock.now()), delete: (n) => upstreamSeen.node(n.name, undefined, clock.now()) });
  cluster.on('pods', { add: (p) => upstreamSeen.pod(podKey(p), p, clock.now()), update: (_o, p) => upstreamSeen.pod(podKey(p), p, clock.now()), delete: (p) => upstreamSeen.pod(podKey(p), undefined, clock.now()) });
  /** Deletions (a) allowed only by {@link upstreamSeen}'s schedule, in words. */
  const byDroppedWatch: string[] = [];
  /** Pod GC conditions (k) would flag that issue 53 item 2 removes, in words. */

  // Zone states as upstream computes them (ComputeZoneState over the Ready conditions the API
  // holds), recomputed at every node change, with since when each has held.
  const rates = { primary: config.nodeEvictionRate, secondary: config.secondaryNodeEvictionRate, largeClusterThreshold: config.largeClusterSizeThreshold };
  type ZoneView = { state: ZoneStateName; size: number; since: number };
  const zoneViews = new Map<string, ZoneView>();
  let allFull = { value: false, since: T0 };
  let lastZoneChangeAt = -Infinity;
  const readyIn = (n: Node): boolean => getCondition(n.conditions, 'Ready')?.status === 'True';
  const recomputeZones = (): void => {
    const byZone = new Map<string, boolean[]>();
    for (const n of cluster.nodeList()) {
      const z = zoneLabel(n);
      const list = byZone.get(z) ?? [];
      list.push(readyIn(n));
      byZone.set(z, list);
    }
    for (const [z, statuses] of byZone) {
      const state = zoneState(statuses, config.unhealthyZoneThreshold);
      const cur = zoneViews.get(z);
      if (!cur || cur.state !== state || cur.size !== statuses.length) {
        zoneViews.set(z, { state, size: statuses.length, since: clock.now() });
        lastZoneChangeAt = clock.now();
      }
    }
    for (const z of [...zoneViews.keys()]) if (!byZone.has(z)) zoneViews.delete(z);
    const full = zoneViews.size > 0 && [...zoneViews.values()].every((v) => v.state === 'FullDisruption');
    if (full !== allFull.value) {
      allFull = { value: full, since: clock.now() };
      lastZoneChangeAt = clock.now();
    }
  };
  recomputeZones();
  cluster.on('nodes', { add: recomputeZones, update: recomputeZones, delete: recomputeZones });

  let lastRestartAt = -Infinity;
  const readyFor = (n: Node | undefined): { ready: boolean; sinceMs: number } => {
    const c = n && getCondition(n.conditions, 'Ready');
    return { ready: c?.status === 'True', sinceMs: c?.lastTransitionTime ?? T0 - 86_400_000 };
  };
  const settled = (): number => clock.now() - config.nodeMonitorPeriod - 1000;
  const outcomes = { deletions: 0, forceDeletions: 0, noExecuteTaints: 0, detaches: 0, affinityEvictions: 0, gcTerminated: 0, gcOrphaned: 0 };

  // Each node's Ready status in the API and its Lease renewals over time, for the start hold (l) and
  // the rule after an outage (m): what a node lifecycle controller could have judged from them.
  const readyHistory = new Map<string, { at: number; status: string }[]>();
  const renewals = new Map<string, number[]>();
  const noteReady = (n: Node, status = getCondition(n.conditions, 'Ready')?.status ?? 'None'): void => {
    const h = readyHistory.get(n.name) ?? [];
    if (h.at(-1)?.status !== status) h.push({ at: clock.now(), status });
    readyHistory.set(n.name, h);
  };
  for (const n of cluster.nodeList()) noteReady(n);
  cluster.on('nodes', { add: (n) => noteReady(n), update: (_o, n) => noteReady(n), delete: (n) => noteReady(n, 'Deleted') });
  const noteRenewal = (name: string): void => {
    const r = renewals.get(name) ?? [];
    r.push(clock.now());
    renewals.set(name, r);
  };
  cluster.on('leases', { add: (l) => noteRenewal(l.name), update: (o, l) => o.renewTime !== l.renewTime && noteRenewal(l.name) });
  const judged = (node: string, from: { status: number; silence: number }, toMs: number, statuses: ReadonlySet<string>): boolean =>
    judgedNotReady(readyHistory.get(node) ?? [], renewals.get(node) ?? [], from, toMs, config.nodeMonitorGracePeriod, statuses);

  // Each pod's tolerations over time, for the start hold (l): upstream restarted keeps the schedule it
  // made from the tolerations it first saw.
  const tolerationHistory = new Map<string, { at: number; tolerations: readonly Toleration[] }[]>();
  const noteTolerations = (p: Pod): void => {
    const h = tolerationHistory.get(p.uid) ?? [];
    if (h.at(-1)?.tolerations !== p.tolerations) h.push({ at: clock.now(), tolerations: p.tolerations });
    tolerationHistory.set(p.uid, h);
  };
  for (const p of cluster.podList()) noteTolerations(p);
  cluster.on('pods', { add: noteTolerations, update: (_o, p) => noteTolerations(p) });
  /** The versions of `pod`'s tolerations in force at some time since `fromMs` (the one at `fromMs` first). */
  const tolerationsSince = (pod: Pod, fromMs: number): (readonly Toleration[])[] => {
    const h = tolerationHistory.get(pod.uid) ?? [];
    const i = h.findLastIndex((x) => x.at <= fromMs);
    return h.slice(Math.max(0, i)).map((x) => x.tolerations);
  };

  // When each node name was missing from the API ([from, to)), for the orphan pass (k).
  const absences = new Map<string, { from: number; to?: number }[]>();
  cluster.on('nodes', {
    delete: (n) => absences.set(n.name, [...(absences.get(n.name) ?? []), { from: clock.now() }]),
    add: (n) => {
      const last = absences.get(n.name)?.at(-1);
      if (last && last.to === undefined) last.to = clock.now();
    },
  });

  // Upstream gcTerminated's choice from the API's pods, and when each pod was last in it: a pass's
  // decision runs on a moment earlier than its deletions (GC_IN_FLIGHT_MS).
  const threshold = config.terminatedPodGCThreshold;
  const lastTerminatedChoice = new Map<string, number>();
  const noteTerminatedChoice = (): void => {
    for (const p of gcTerminatedToDelete(cluster.podList(), threshold)) lastTerminatedChoice.set(p.uid, clock.now());
  };
  cluster.on('pods', { add: noteTerminatedChoice, update: noteTerminatedChoice, delete: noteTerminatedChoice });
  /** Whether upstream's gcTerminated deletes `pod` now (or chose it within GC_IN_FLIGHT_MS), from the API's pods. */
  const upstreamTerminatedChoice = (pod: Pod): boolean =>
    gcPodTerminated(pod) &&
    (gcTerminatedToDelete(cluster.podList(), threshold).some((x) => x.uid === pod.uid) || (lastTerminatedChoice.get(pod.uid) ?? -Infinity) >= clock.now() - GC_IN_FLIGHT_MS);
  // node-affinity-enforcer: each ruled pod's required zone, its rule as the enforcer's pod source
  // hands it out, and since when (epoch ms) its node's zone label has not matched (API truth).
  const required = new Map<string, { key: string; zone: string }>();
  const rules = new Map<string, PodRule>();
  const ruleOf = (p: Pod): PodRule => rules.get(p.uid) ?? { kind: 'none' };
  const mismatchSince = new Map<string, number>();
  const trackAffinity = (): void => {
    for (const [uid, r] of required) {
      const p = cluster.pods.get(r.key);
      if (p?.uid !== uid) {
        required.delete(uid);
        mismatchSince.delete(uid);
        continue;
      }
      if (zoneLabel(cluster.nodes.get(p.nodeName)) === r.zone) mismatchSince.delete(uid);
      else if (!mismatchSince.has(uid)) mismatchSince.set(uid, clock.now());
    }
  };
  cluster.on('nodes', { add: trackAffinity, update: trackAffinity });
  let affinityTimes: number[] = [];
  const relabelled = new Set<string>();
  /** NoExecute taint acceptances per zone (epoch ms), for the token bucket. */
  const taintTimes = new Map<string, number[]>();

  // Objects the API holds malformed, by `resource:key`: since when and until when (epoch ms).
  // `wire`: held truncated on the wire (`wire-truncated`); the caches learn of it through the mirror's verdict, not from here.
  const malformed = new Map<string, { since: number; until: number; wire?: true }>();
  const malformedSettled = (resource: WatchedResource, key: string): number | undefined => {
    const m = malformed.get(`${resource}:${key}`);
    return m && m.since <= settled() ? m.since : undefined;
  };
  // (h) Upstream never acts on an object it cannot decode: client-go's reflector fails the list or
  // watch that carries it, so it never reaches a lister. Ours skips it (src/kube/informercache.ts:
  // logged, counted, treated as absent) and its live reads fail closed (src/kube/reads.ts
  // `unparsable`). In-flight work may land within the settle margin.
  const checkMalformed = (e: TimelineEntry): void => {
    const since = (r: WatchedResource, k: string): string | undefined => {
      const t = malformedSettled(r, k);
      return t === undefined ? undefined : fmt(t);
    };
    if (e.kind === 'pod-deleted' && e.by !== 'user') {
      const p = since('pods', e.pod);
      if (p) violate('h', `${e.pod} deleted by ${e.by} while the API has held it malformed since ${p}`);
      const n = since('nodes', e.node);
      // Upstream's gcTerminated lists pods only: a malformed node (after its start; one malformed
      // at the start holds every controller, WaitForNamedCacheSync) stops its node informer, not
      // that pass. Its choice (checked by (j)) does not depend on the node, so it is not "because of" it.
      const pod = cluster.pods.get(e.pod);
      const byTerminatedPass = e.by === BY_POD_GC && pod !== undefined && upstreamTerminatedChoice(pod);
      if (n && e.force && !byTerminatedPass) violate('h', `${e.pod} force-deleted by ${e.by} while its node ${e.node} is malformed (since ${n}), not gone`);
    }
    if (e.kind === 'taint' && e.by === 'node-lifecycle-controller' && e.added.length > 0) {
      const n = since('nodes', e.node);
      if (n) violate('h', `${e.added.join(', ')} added to ${e.node}, malformed since ${n}`);
    }
    if (e.kind === 'detach') {
      const v = since('volumeAttachments', e.volumeAttachment);
      if (v) violate('h', `${e.volumeAttachment} detached, malformed since ${v}`);
      const bad = cluster.podsOnNode(e.node).filter((p) => since('pods', podKey(p)) !== undefined);
      if (bad.length > 0) violate('h', `${e.volumeAttachment} detached from ${e.node} while ${bad.map(podKey).join(', ')} on it cannot be read (an unreadable pod holds every volume)`);
    }
  };

  const checkAffinity = (e: Extract<TimelineEntry, { kind: 'pod-deleted' }>): void => {
    outcomes.affinityEvictions++;
    const pod = cluster.pods.get(e.pod);
    const r = pod && required.get(pod.uid);
    if (!pod || !r) return violate('i', `${e.pod} evicted by node-affinity-enforcer, which has no rule for it`);
    if (pod.ownerReferences.some((o) => o.kind === 'DaemonSet')) violate('i', `${e.pod} evicted by node-affinity-enforcer: a DaemonSet pod`);
    const since = mismatchSince.get(pod.uid);
    const zone = zoneLabel(cluster.nodes.get(pod.nodeName));
    if (since === undefined) violate('i', `${e.pod} evicted from ${pod.nodeName} (zone ${zone}), which its rule (zone ${r.zone}) matches`);
    else if (clock.now() < since + config.affinityViolationGrace) violate('i', `${e.pod} evicted at ${fmt(clock.now())}: its rule (zone ${r.zone}) stopped matching ${pod.nodeName} only at ${fmt(since)}, less than the grace (${config.affinityViolationGrace / 1000} s) before`);
    const ready = readyFor(cluster.nodes.get(pod.nodeName));
    if (!ready.ready && ready.sinceMs <= settled()) violate('i', `${e.pod} evicted from ${pod.nodeName}, not Ready since ${fmt(ready.sinceMs)}`);
    // The enforcer's one token bucket (src/util/tokenbucket.ts, burst 1), fresh at each (re)start.
    affinityTimes = affinityTimes.filter((t) => t >= lastRestartAt);
    affinityTimes.push(clock.now());
    const x = tokenBucketExcess(affinityTimes, config.affinityEvictionRate, 2 * MAX_CLOCK_STEP_MS);
    if (x) violate('i', `${x.count} node affinity evictions between ${fmt(x.from)} and ${fmt(x.to)}, the token bucket (${config.affinityEvictionRate}/s, burst 1) allows ${x.allowed.toFixed(2)}`);
  };

  // (j), (k) Pod GC's force deletions, each from upstream's gc_controller.go: every one is a pod one of
  // upstream's passes deletes (gcTerminated, gcTerminating, gcOrphaned, gcUnscheduledTerminating);
  // a terminated pod only among the oldest beyond the threshold, in upstream's order (j); an orphan
  // never before upstream's quarantine and never without a live 404 for its node (k); and the
  // DisruptionTarget condition exactly where upstream's patch carries one (k).
  const checkPodGC = (e: Extract<TimelineEntry, { kind: 'pod-deleted' }>): void => {
    const pod = cluster.pods.get(e.pod);
    if (!pod) return;
    const p = actor();
    const now = clock.now();
    const node = pod.nodeName === '' ? undefined : cluster.nodes.get(pod.nodeName);
    const terminal = pod.phase === 'Succeeded' || pod.phase === 'Failed';
    // gcTerminated: among the first (terminated − threshold) of byEvictionAndCreationTimestamp.
    const chosen = gcTerminatedToDelete(cluster.podList(), threshold);
    const byTerminated = upstreamTerminatedChoice(pod);
    // gcTerminating: terminating, on a node that is not Ready and has the out-of-service taint.
    const byOutOfService = pod.deletionTimestamp !== undefined && node !== undefined && !readyIn(node) && node.taints.some((t) => t.key === OUT_OF_SERVICE);
    // gcUnscheduledTerminating: terminating, never scheduled.
    const byUnscheduled = pod.deletionTimestamp !== undefined && pod.nodeName === '';
    // gcOrphaned → discoverDeletedNodes → checkIfNodeExists: the node missing for the quarantine, and a live GET that says 404.
    const orphan = pod.nodeName !== '' && node === undefined;
    let orphanWhyNot: string | undefined;
    if (orphan) {
      const started = p?.startedAt ?? now;
      const gone = absences.get(pod.nodeName) ?? [];
      const since = gone.at(-1)?.from ?? -Infinity;
      const earliest = orphanQuarantineEnd(gone, started);
      const got404 = p?.gcNode404.get(pod.nodeName);
      if (now < earliest) orphanWhyNot = `before upstream's ${ORPHAN_QUARANTINE_MS / 1000} s quarantine: ${pod.nodeName} missing since ${fmt(since)}, this process running since ${fmt(started)}, so not before ${fmt(earliest)}`;
      else if (got404 === undefined || got404 < Math.max(since, started)) orphanWhyNot = `without a live 404 for ${pod.nodeName} since it went missing at ${fmt(since)} (this process's last 404 for it: ${got404 === undefined ? 'none' : fmt(got404)})`;
    }
    const byOrphan = orphan && orphanWhyNot === undefined;
    if (byTerminated) outcomes.gcTerminated++;
    if (byOrphan) outcomes.gcOrphaned++;
    if (!byTerminated && !byOutOfService && !byUnscheduled && !byOrphan) {
      if (orphan) violate('k', `${e.pod} force-deleted as an orphan ${orphanWhyNot ?? ''}`);
      else if (gcPodTerminated(pod)) {
        const terminated = cluster.podList().filter(gcPodTerminated);
        violate('j', `${e.pod} (${pod.phase}${pod.statusReason ? `, ${pod.statusReason}` : ''}, created ${fmt(pod.creationTimestamp)}) force-deleted, not among the ${chosen.length} oldest of the ${terminated.length} terminated pods beyond the threshold (${threshold}): upstream deletes ${chosen.map(podKey).join(', ') || 'none'}`);
      } else violate('k', `${e.pod} (${pod.phase}, on ${pod.nodeName || 'no node'}${node ? ` ${readyIn(node) ? 'Ready' : 'not Ready'}` : ''}${pod.deletionTimestamp !== undefined ? ', terminating' : ''}) force-deleted: no pass of upstream's pod GC deletes it`);
    }
    // markFailedAndDeletePodWithCondition: only gcOrphaned passes a condition, and the Failed patch
    // (and so the condition) is sent only for a pod that is not terminal yet.
    const seen = p?.gcWrites.get(e.pod);
    const written = seen?.uid === pod.uid ? seen.condition : undefined;
    const upstreamWrites = orphan && !terminal;
    if (upstreamWrites) {
      const ok = written?.type === 'DisruptionTarget' && written.status === 'True' && written.reason === 'DeletionByPodGC' && written.message === 'PodGC: node no longer exists';
      if (!ok) violate('k', `${e.pod} (an orphan of ${pod.nodeName}) force-deleted with ${written ? `${written.type}=${written.status} ${written.reason ?? ''} "${written.message ?? ''}"` : 'no condition'}; upstream's gcOrphaned writes DisruptionTarget=True DeletionByPodGC "PodGC: node no longer exists"`);
    } else if (written) {
      const text = `${written.type}=${written.status} ${written.reason ?? ''} "${written.message ?? ''}"`;
      violate('k', `${e.pod} force-deleted with ${text}, where upstream writes no condition (markFailedAndDeletePod${terminal ? ', and no patch for a terminal pod' : ''})`);
    }
  };

  // (l) The start hold: after a start or a failover, no deletion for `unreachable` or `not-ready`
  // before this process could have judged the node not Ready from its own observations (reference.ts
  // judgedNotReady: the kubelet's Ready=False, or a grace period without a renewal from its start, as
  // tryUpdateNodeHealth's first-sight probe timestamp gives it), unless upstream restarted at the same
  // instant could delete it by then (`upstreamEarliest`: its taint manager's fresh schedule,
  // reference.ts upstreamRestartedEarliestDeletion).
  // (m) After an API server outage: no action on a node before this process's first judgement of it
  // from post-outage data: its Node and Lease caches relisted, and then the kubelet's own report of
  // Ready=False, or a whole grace period without a renewal counted from the relist.
  const checkJudged = (nodeName: string, what: string, startHold?: (startedAt: number) => number): void => {
    const p = actor();
    const now = clock.now();
    if (!p) return;
    if (startHold && p.startedAt !== undefined && !judged(nodeName, { status: p.startedAt, silence: p.startedAt }, now + maxSkewMs, REPORTED_NOT_READY)) {
      const earliest = startHold(p.startedAt);
      if (now < earliest - maxSkewMs) {
        violate('l', `${what} at ${fmt(now)}: this process started its controllers at ${fmt(p.startedAt)} and has not judged ${nodeName} not Ready from its own observations since (no Ready=False from its kubelet, never ${config.nodeMonitorGracePeriod / 1000} s without a Lease renewal); upstream restarted then deletes it at ${fmt(earliest)} at the earliest`);
      }
    }
    const o = p.outage;
    // The first 2 s of a lost stream are a reconnect by the project's definition (node-lifecycle.md
    // difference 5, `BLIND_AFTER_MS` of src/controllers/registry.ts): a process still judges on its
    // caches then, as upstream does on its listers, on a view no older than those 2 s.
    if (!o || now < o.from + RECONNECT_ALLOWANCE_MS) return;
    // Controllers started only once the outage had begun: this process never judged from a view
    // older than the outage (blind from its start until the relist, or started after it); what it
    // judges first is its first sight, and the start rules ((l) above) apply, as to upstream
    // restarted then: it taints a node whose Ready is Unknown at its first pass and marks its pods
    // NotReady (seed 20271208 run 20502: restarted after a pause; shrunk, its controllers started
    // 11 s after the relist; unshrunk, 3 s into a 38 s outage).
    if (p.startedAt !== undefined && p.startedAt >= o.from) return;
    if (now < o.nodesAt) violate('m', `${what} at ${fmt(now)}: the API server was down ${fmt(o.from)}–${fmt(o.to)} and this process's Node cache relists only at ${fmt(o.nodesAt)}`);
    else if (!judged(nodeName, { status: o.nodesAt, silence: o.sightAt }, now + maxSkewMs, REPORTED_NOT_READY)) {
      violate('m', `${what} at ${fmt(now)}: the API server was down ${fmt(o.from)}–${fmt(o.to)}, this process's Node cache relisted at ${fmt(o.nodesAt)} (Leases ${fmt(o.sightAt)}), and it has no judgement of ${nodeName} from post-outage data (no Ready=False since, never ${config.nodeMonitorGracePeriod / 1000} s without a Lease renewal since both relisted)`);
    }
  };
  const isManaged = (t: string): boolean => t.startsWith(`${UNREACHABLE}:`) || t.startsWith(`${NOT_READY}:`);

  const check = (e: TimelineEntry): void => {
    if (malformed.size > 0) checkMalformed(e);
    if (e.kind === 'pod-deleted' && e.force && e.by === BY_POD_GC) checkPodGC(e);
    if (e.kind === 'taint' && e.by === 'node-lifecycle-controller') {
      const added = e.added.filter(isManaged);
      if (added.length > 0) checkJudged(e.node, `${added.join(', ')} added to ${e.node}`);
    }
    if (e.kind === 'condition' && e.to === 'Unknown' && !(e.reason ?? '').endsWith('(kubelet)')) checkJudged(e.node, `${e.node} marked Unknown`);
    if (e.kind === 'pod-not-ready') checkJudged(e.node, `${e.pod} marked NotReady`);
    if (e.kind === 'pod-deleted' && !e.force && e.by === 'taint-eviction-controller') {
      const taints = noExecuteTaints(cluster.nodes.get(e.node));
      const pod = cluster.pods.get(e.pod);
      if (pod && taints.length > 0 && taints.every((t) => t.key === UNREACHABLE || t.key === NOT_READY)) {
        checkJudged(e.node, `${e.pod} deleted for ${taints.map((t) => t.key).join(', ')}`, (startedAt) => upstreamRestartedEarliestDeletion(startedAt, taints, tolerationsSince(pod, startedAt)));
      }
    }
    if (e.kind === 'pod-deleted' && e.by === 'node-affinity-enforcer') checkAffinity(e);
    if (e.kind === 'pod-deleted' && e.force) outcomes.forceDeletions++;
    if (e.kind === 'pod-deleted' && !e.force && (e.by === 'taint-eviction-controller' || e.by === 'node-lifecycle-controller')) {
      outcomes.deletions++;
      const pod = cluster.pods.get(e.pod);
      const node = cluster.nodes.get(e.node);
      if (!pod) return;
      // (a) pkg/controller/tainteviction/taint_eviction.go processPodOnNode: the schedule upstream keeps.
      if (e.by === 'taint-eviction-controller') {
        // Upstream whose watches dropped as ours did may have an earlier schedule than one that saw
        // every change at once (a toleration edit it saw only after the taint keeps the schedule made
        // from the tolerations it held: processPodOnNode); either is kube-controller-manager's.
        const atOnce = upstream.scheduled(pod.uid);
        const seen = upstreamSeen.scheduled(pod.uid);
        const bySeen = seen !== undefined && seen.fireAt < (atOnce?.fireAt ?? Infinity);
        const s = bySeen ? seen : atOnce;
        let allowed = s?.fireAt ?? Infinity;
        let why = s ? `upstream's schedule fires at ${fmt(s.fireAt)}` : 'upstream has no deletion scheduled';
        if (bySeen && clock.now() >= allowed - maxSkewMs && clock.now() < (atOnce?.fireAt ?? Infinity) - maxSkewMs) {
          byDroppedWatch.push(`${e.pod} deleted at ${fmt(clock.now())}: upstream with the same watch drops fires at ${fmt(seen.fireAt)} (seeing every change at once: ${atOnce ? fmt(atOnce.fireAt) : 'never'})`);
        }
        if (lastRestartAt > (s?.createdAt ?? -Infinity)) {
          const bound = restartSafeBound(noExecuteTaints(node), pod.tolerations, tolsSetAt.get(pod.uid) ?? -Infinity) - TIME_ADDED_PRECISION_MS;
          if (bound < allowed) {
            allowed = bound;
            why = `restarted at ${fmt(lastRestartAt)}; max(timeAdded, tolerations set) + tolerationSeconds = ${fmt(bound + TIME_ADDED_PRECISION_MS)}`;
          }
        }
        // Through the wire `timeAdded` has whole seconds, as on a real API server: a deadline counted
        // from it may come up to 1 s before upstream's (docs/taint-eviction.md, the documented
        // difference of restart-safe deadlines). The in-memory objects of other runs keep milliseconds.
        if (opts.wire) allowed -= TIME_ADDED_PRECISION_MS;
        // A controller clock stepped ahead acts that much sooner in true time, as upstream's would.
        if (clock.now() < allowed - maxSkewMs) violate('a', `${e.pod} deleted at ${fmt(clock.now())} on ${e.node} (${taintText(node)}): ${why}`);
      }
      // (g) No deletion during blind time: the taint eviction controller deletes nothing while a
      // cache it judges by (nodes, pods, Leases) has no watch stream (the project's blind-time rule,
      // src/tainteviction/blindhold.ts; upstream has no counterpart and fires its timers blindly).
      const blind = (['nodes', 'pods', 'leases'] as const).filter((r) => actor()?.caches.dropped(r));
      if (e.by === 'taint-eviction-controller' && blind.length > 0) violate('g', `${e.pod} deleted on ${e.node} while the ${blind.join(', ')} cache(s) had no watch stream`);
      // (b) A Ready node's NoExecute taints are the node lifecycle controller's to remove
      // (node_lifecycle_controller.go processTaintBaseEviction: markNodeAsReachable when Ready).
      const r = readyFor(node);
      const foreign = noExecuteTaints(node).some((t) => t.key !== UNREACHABLE && t.key !== NOT_READY);
      // Upstream cannot remove the taint either while its taint writes fail or its node/Lease cache
      // is blind: Ready counts from the end of such a fault (markNodeAsReachable retries on the next pass).
      const since = Math.max(r.sinceMs, Math.min(clock.now(), untaintImpededUntil));
      if (r.ready && since <= settled() && !foreign) violate('b', `${e.pod} deleted on ${e.node}, Ready since ${fmt(r.sinceMs)}${since > r.sinceMs ? ` (taint removal impeded until ${fmt(since)})` : ''}`);
    }
    if (e.kind === 'taint' && e.by === 'node-lifecycle-controller') {
      const added = e.added.filter((t) => t.endsWith(':NoExecute') && (t.startsWith(UNREACHABLE) || t.startsWith(NOT_READY)));
      if (added.length === 0) return;
      outcomes.noExecuteTaints++;
      // A swap (not-ready for unreachable or back) is not rate-limited upstream (processTaintBaseEviction
      // swaps at once); only a first NoExecute taint comes through the zone's queue.
      const swap = e.removed.some((t) => t.endsWith(':NoExecute') && (t.startsWith(UNREACHABLE) || t.startsWith(NOT_READY)));
      const settledAt = settled();
      // (c) node_lifecycle_controller.go handleDisruption: every zone in FullDisruption stops all tainting.
      if (allFull.value && allFull.since <= settledAt) violate('c', `${added.join(', ')} added to ${e.node} while every zone has been in FullDisruption since ${fmt(allFull.since)}`);
      if (swap || relabelled.has(e.node)) return;
      // (c) setLimiterInZone / ReducedQPSFunc: a zone whose rate is 0 taints nothing.
      const z = zoneLabel(cluster.nodes.get(e.node));
      const v = zoneViews.get(z);
      if (v && v.since <= settledAt && !allFull.value && zoneRate(v.state, v.size, false, rates) === 0) violate('c', `${added.join(', ')} added to ${e.node} while its zone ${z} (${v.size} nodes) has been ${v.state} (rate 0) since ${fmt(v.since)}`);
      // (e) The zone's token bucket (SwapLimiter: a fresh bucket at each state change, burst 1):
      // only acceptances after the last change of any zone's state (settled) and the last restart count.
      const from = Math.max(lastZoneChangeAt + config.nodeMonitorPeriod + 1000, lastRestartAt);
      const times = (taintTimes.get(z) ?? []).filter((t) => t >= from);
      times.push(clock.now());
      taintTimes.set(z, times);
      const qps = Math.max(rates.primary, rates.secondary);
      const x = tokenBucketExcess(times, qps, 2 * 500);
      if (x) violate('e', `zone ${z}: ${x.count} NoExecute taints between ${fmt(x.from)} and ${fmt(x.to)}, the token bucket (${qps}/s, burst 1) allows ${x.allowed.toFixed(2)}`);
    }
    if (e.kind === 'detach') {
      outcomes.detaches++;
      // (f) reconciler.go: no volume detached while a pod holds it (unresolved claims hold
      // everything), nor from a healthy node that is not out of service.
      const va = e.volumeAttachment;
      const pv = e.persistentVolume ?? '';
      const holders = cluster.podsOnNode(e.node).filter((p) => podHoldsVolume(p, pv, cluster.pvcs, cluster.pvs));
      if (holders.length > 0) violate('f', `${va} (${pv || 'no PV'}) detached from ${e.node} while held by ${holders.map(podKey).join(', ')}`);
      const node = cluster.nodes.get(e.node);
      const oos = noExecuteTaints(node).some((t) => t.key === OUT_OF_SERVICE);
      if (node && readyIn(node) && !oos) violate('f', `${va} detached from ${e.node}, which is Ready and not out of service`);
    }
  };
  const push = cluster.timeline.push.bind(cluster.timeline);
  const actions: string[] = [];
  cluster.timeline.push = (...items: TimelineEntry[]): number => {
    for (const e of items) {
      opts.trace?.(e);
      if (opts.wire && WIRE_ACTIONS.has(e.kind)) actions.push(actionText(e));
      check(e);
    }
    return push(...items);
  };

  // Faults: every call of the method (or every call) fails until the fault's end.
  const faultUntil = new Map<string, { until: number; code: FaultCode }>();
  let lastFaultEnd = -Infinity;
  /** The end (epoch ms) of the last fault that keeps the node lifecycle controller from removing a taint: a taint-write fault, a nodes or Leases watch drop. */
  let untaintImpededUntil = -Infinity;
  const faultFor = (prefix: string, method: string): unknown => {
    const now = clock.now();
    for (const k of [`${prefix}:all`, `${prefix}:${method}`]) {
      const f = faultUntil.get(k);
      if (f && f.until > now) return faultError(f.code, `${method}`);
    }
    return undefined;
  };
  // Pods whose taint-eviction write the harness answered 404: "the pod is gone", said of a pod that
  // is not. The controller (ours, and upstream's `deletePodHandler`, which returns the error of
  // `addConditionAndDeletePod` after its retries and schedules nothing more) takes it at its word,
  // so (d) cannot ask for that pod's deletion; a real API server says 404 only of a pod that is gone.
  const toldGone = new Set<string>();
  cluster.writer.fail = (call) => {
    const err = faultFor('w', call.method);
    if (err instanceof ApiException && err.code === 404 && (call.method === 'deletePod' || call.method === 'addDisruptionCondition')) toldGone.add(call.target);
    return err;
  };
  cluster.writer.failRead = (call) => faultFor('r', call.method);
  const RESOURCE_OF = { node: 'nodes', pod: 'pods', volumeattachment: 'volumeAttachments' } as const;
  cluster.writer.unreadable = (resource, key) => malformed.has(`${RESOURCE_OF[resource]}:${key}`);

  // The processes: every enabled controller, built through the registry; a restart starts another.
  // Each runs a leader elector (process.ts): a restart or failover starts one that takes the Lease at
  // once, a pause leaves the Lease to lapse. Usually one process lives; during and after a pause two
  // may, and only the one holding the Lease can write.
  const leaderLease = new MemoryLeaseApi();
  const procs: Proc[] = [];
  /** Strings that carry raw bytes on the wire (`wire-bytes`): as the API's JSON renders them → the bytes. */
  const wireRaws = new Map<string, Uint8Array>();
  // In a wire run every process's caches read the cluster through the mirror: its Nodes, Pods and
  // Leases as they came through the run's path; what came unreadable is malformed in each cache.
  const mirror = opts.wire
    ? new WireMirror(cluster, opts.wire, wireRaws, {
        unreadable: (r, k) => {
          for (const p of live()) p.caches.malform(r, k);
        },
        readable: (r, k) => {
          for (const p of live()) p.caches.unmalform(r, k);
        },
      })
    : undefined;
  let pendingStart: TimerHandle | undefined;
  const live = (): Proc[] => procs.filter((p) => !p.stopped);
  /** The process events act on: the one started last. */
  const current = (): Proc | undefined => live().at(-1);
  /** The process whose writes land now (it holds the Lease and runs). */
  const actor = (): Proc | undefined => live().find((p) => p.canWrite());
  const startProcess = (): Proc => {
    const p = new Proc(procs.length + 1, clock, () => offsetMs);
    procs.push(p);
    const unlisted = cluster.apiDown();
    // A process lists the objects malformed now: those of `malformed` events, and what the wire gave it unreadable.
    const unreadable = [...[...malformed].filter(([, m]) => !m.wire).map(([id]) => id), ...(mirror?.unreadableIds() ?? [])];
    p.caches = new ProcessCaches(mirror ?? cluster, clock, unreadable, ruleOf, unlisted);
    if (unlisted && outage) {
      // Started while the API server is down: each informer's first list succeeds at its first
      // attempt after the return (process.ts relistTimes).
      for (const [r, at] of p.relistTimes(clock.now(), outage.to, seededRandom(outage.seed ^ p.id), true)) p.clock.setTimeout(() => p.caches.restore(r, true), at - clock.now());
    }
    const sources = p.caches.sources;
    const { list } = buildControllers(
      { config, clock: p.clock, log: silentLogger, metrics: createMetrics({ defaultMetrics: false }), identity: `fuzz-${p.id}`, sources, ...sightOf(sources), judgements: new NodeJudgementBoard(), io: (d) => p.wrapIO(clusterIO(cluster, d), () => cluster.apiDown()) },
      enabledControllers(config),
    );
    p.list = list;
    lastRestartAt = Math.max(lastRestartAt, clock.now());
    p.makeElector(
      leaderLease,
      // As `run`, which starts its controllers once it leads and every cache has synced (upstream's
      // WaitForNamedCacheSync): a Node or Lease that cannot be read when the process starts holds them all.
      () =>
        p.caches.whenSynced(() => {
          if (p.stopped) return;
          for (const r of list) r.controller.start();
          p.startedAt = clock.now();
          lastRestartAt = Math.max(lastRestartAt, clock.now());
        }),
      // `run` exits when it loses the Lease; without a standby its Deployment starts it again.
      () => {
        void stopProc(p);
        if (p.restartOnExit) clock.setTimeout(() => void startProcess(), DEPLOYMENT_RESTART_MS);
      },
    );
    void p.elector.run();
    return p;
  };
  const stopProc = async (p: Proc): Promise<void> => {
    if (p.stopped) return;
    p.stopped = true;
    p.elector.stop();
    p.caches.stop();
    for (const r of p.list) await r.controller.stop();
  };
  /** Stops every process (a restart or failover: the old leader is gone, and its Lease lapsed). */
  const stopProcess = async (): Promise<void> => {
    pendingStart?.cancel();
    pendingStart = undefined;
    for (const p of live()) await stopProc(p);
    leaderLease.clear();
  };

  const truth = new Map<string, KubeletTruth>(NODE_NAMES.map((n) => [n, { running: true, reportsReady: true, unhealthySince: undefined }]));
  // When each zone's health last changed, and when the last all-zones stop ended: upstream's rate
  // for a zone (ComputeZoneState, the rate table) changes only then, so (d)'s clock starts no sooner.
  const zoneChangedAt = new Map<string, number>();
  /** Per zone, when its latest Lease pause ends (see 'lease-pause' below). */
  const pauseEndedAt = new Map<string, number>();
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
    if (wasHealthy !== healthy) zoneChangedAt.set(zoneLabel(cluster.nodes.get(name)), clock.now());
    if (wasAllDown && !everyNodeDown()) allDownEndedAt = clock.now();
  };
  const coverage = Object.fromEntries(VOCABULARY.map((k) => [k, 0])) as Record<VocabularyItem, number>;
  let events = 0;
  let lastPauseEnd = -Infinity;
  let volSeq = 0;

  const addVolume = (pod: Pod, vol: Vol): Pod => {
    if (vol === 'none') return pod;
    const i = volSeq++;
    if (vol === 'unresolvable') return { ...pod, pvcNames: [`missing-${i}`] };
    const claimName = vol === 'ephemeral' ? `${pod.name}-data` : `claim-${i}`;
    const pvName = `pv-${i}`;
    cluster.pvcs.set(`${pod.namespace}/${claimName}`, { namespace: pod.namespace, name: claimName, uid: `pvc-uid-${i}`, volumeName: pvName, ...(vol === 'ephemeral' ? { controllerUid: pod.uid } : {}) });
    cluster.pvs.push({ name: pvName, uid: `pv-uid-${i}`, claimRef: { namespace: pod.namespace, name: claimName } });
    cluster.volumeAttachments.set(`va-${i}`, { name: `va-${i}`, uid: `va-uid-${i}`, resourceVersion: cluster.nextResourceVersion(), attacher: 'fuzz.csi.example.com', nodeName: pod.nodeName, persistentVolumeName: pvName, attached: true });
    return vol === 'ephemeral' ? { ...pod, ephemeralClaimNames: [claimName] } : { ...pod, pvcNames: [claimName] };
  };
  const podAt = (i: number): Pod | undefined => {
    const key = podNames[i % Math.max(1, podNames.length)];
    const cur = key === undefined ? undefined : cluster.pods.get(key);
    return cur && cur.deletionTimestamp === undefined ? cur : undefined;
  };

  /** The key of object `index` of `resource`: a node, a live pod, a node's Lease, a VolumeAttachment. */
  const malformedKey = (resource: WatchedResource, index: number): string | undefined => {
    const node = NODE_NAMES[index % NODE_NAMES.length] ?? '';
    if (resource === 'nodes') return node;
    if (resource === 'leases') return `kube-node-lease/${node}`;
    if (resource === 'pods') {
      const p = podAt(index);
      return p && podKey(p);
    }
    const vas = [...cluster.volumeAttachments.keys()].sort();
    return vas[index % Math.max(1, vas.length)];
  };
  /** What the line of the event just applied adds (a malformed object's key). */
  const note: { text: string; items: VocabularyItem[] } = { text: '', items: [] };
  /** The API server outage in progress or last ended (the reconnect jitter's seed), for a process that starts during it. */
  let outage: { from: number; to: number; seed: number } | undefined;
  /** When a pod last ended ((d) for the terminated pass). */
  let lastPodEndAt = -Infinity;

  /** The kubelet of a deleted node registers it again (a new Node object, Ready). @returns whether it did (not while the API server is down). */
  /** When the last scheduled re-registration of a deleted node falls (epoch ms). */
  let lastRegisterAt = -Infinity;
  const register = (nodeName: string): boolean => {
    const reg = registered.get(nodeName);
    if (!reg || cluster.nodes.has(nodeName) || cluster.apiDown()) return false;
    cluster.registerNode({ ...reg, uid: `${reg.uid}-${clock.now()}`, creationTimestamp: clock.now(), taints: [], conditions: [] });
    truth.set(nodeName, { running: true, reportsReady: true, unhealthySince: undefined });
    zoneChangedAt.set(zoneLabel(reg), clock.now());
    return true;
  };

  const apply = async (e: FuzzEvent): Promise<boolean> => {
    const nodeName = 'node' in e ? (NODE_NAMES[e.node % NODE_NAMES.length] ?? '') : '';
    if (WRITES_TO_API.has(e.kind) && cluster.apiDown()) return false;
    if (NEEDS_NODE.has(e.kind) && !cluster.nodes.has(nodeName)) return false;
    switch (e.kind) {
      case 'kubelet-stop':
        cluster.apply('stop-kubelet', [nodeName]);
        setTruth(nodeName, { running: false });
        return true;
      case 'kubelet-start': {
        if (!cluster.nodes.has(nodeName)) {
          // A kubelet whose Node was deleted registers it again when it starts (a new object).
          if (!register(nodeName)) return false;
          note.items.push('node-register');
          return true;
        }
        cluster.apply('start-kubelet', [nodeName]);
        setTruth(nodeName, { running: true });
        return true;
      }
      case 'report-not-ready':
      case 'report-ready':
        cluster.apply(e.kind, [nodeName]);
        setTruth(nodeName, { reportsReady: e.kind === 'report-ready' });
        return true;
      case 'pressure': {
        // The kubelet posts the condition with its status; it keeps what it reports (the in-memory
        // kubelet only rewrites Ready). A stopped kubelet posts nothing.
        const n = cluster.nodes.get(nodeName);
        if (!n || !cluster.kubeletRunning(nodeName)) return false;
        const old = getCondition(n.conditions, e.condition);
        const status = e.on ? 'True' : 'False';
        const c: NodeCondition = { type: e.condition, status, lastHeartbeatTime: clock.now(), lastTransitionTime: old?.status === status ? (old.lastTransitionTime ?? clock.now()) : clock.now() };
        cluster.putNode({ ...n, conditions: [...n.conditions.filter((x) => x.type !== e.condition), c] });
        return true;
      }
      case 'lease-pause': {
        cluster.apply('pause-heartbeats', [nodeName], e.forS * 1000);
        const end = clock.now() + e.forS * 1000;
        lastPauseEnd = Math.max(lastPauseEnd, end);
        // A Lease pause is a health change of its zone as the controllers see it: upstream marks the
        // node Unknown after the grace period (its zone may turn PartialDisruption, rate 0), and ours
        // counts a Ready node whose Lease went silent before that (node-lifecycle.md, the silent-Ready
        // count) and may hold the zone's tainting. So (d)'s clock for the zone starts no sooner than
        // the pause's end (run 92701 of seed 20261201).
        const zone = zoneLabel(cluster.nodes.get(nodeName));
        pauseEndedAt.set(zone, Math.max(pauseEndedAt.get(zone) ?? -Infinity, end));
        return true;
      }
      case 'zone-change': {
        const n = cluster.nodes.get(nodeName);
        const zone = ZONE_LABELS[e.zone % ZONE_LABELS.length] ?? 'a';
        if (!n || zoneLabel(n) === zone) return false;
        const from = zoneLabel(n);
        relabelled.add(nodeName);
        cluster.putNode({ ...n, labels: { ...n.labels, [ZONE_LABEL]: zone } });
        zoneChangedAt.set(from, clock.now());
        zoneChangedAt.set(zone, clock.now());
        return true;
      }
      case 'pod-add': {
        const pod = addVolume(newPod(nodeName, e.tol, e.ds), e.vol ?? 'none');
        if (e.aff !== undefined) {
          const zone = ZONE_LABELS[e.aff % ZONE_LABELS.length] ?? 'a';
          const selector = { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_LABEL, operator: 'In', values: [zone] }] }] };
          required.set(pod.uid, { key: podKey(pod), zone });
          rules.set(pod.uid, podRule({ [REQUIRED_DURING_EXECUTION_ANNOTATION]: JSON.stringify(selector) }, undefined));
        }
        cluster.putPod(pod);
        if (e.aff !== undefined) trackAffinity();
        return true;
      }
      case 'pod-delete': {
        const cur = podAt(e.pod);
        if (!cur) return false;
        cluster.deletePod(cur, { force: false, by: 'user', reason: 'fuzz: deleted by a user' });
        return true;
      }
      case 'tolerations-edit': {
        const cur = podAt(e.pod);
        if (!cur) return false;
        tolsSetAt.set(cur.uid, clock.now());
        cluster.putPod({ ...cur, tolerations: tolerationsOf(e.tol), generation: (cur.generation ?? 1) + 1 });
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
      case 'write-fault':
      case 'read-fault': {
        const until = clock.now() + e.forS * 1000;
        const key = `${e.kind === 'write-fault' ? 'w' : 'r'}:${e.method}`;
        const cur = faultUntil.get(key);
        faultUntil.set(key, { until: Math.max(cur?.until ?? 0, until), code: e.code ?? 500 });
        lastFaultEnd = Math.max(lastFaultEnd, until);
        if (key === 'w:all' || key === 'w:swapNodeTaints') untaintImpededUntil = Math.max(untaintImpededUntil, until);
        return true;
      }
      case 'restart':
        await stopProcess();
        startProcess();
        return true;
      case 'failover':
        // The old leader stops (its lease lapses); the new one starts when it takes the lease.
        await stopProcess();
        pendingStart = clock.setTimeout(() => {
          pendingStart = undefined;
          startProcess();
        }, e.gapS * 1000);
        lastRestartAt = clock.now() + e.gapS * 1000;
        return true;
      case 'watch-drop': {
        const mine = current()?.caches;
        if (!mine || mine.dropped(e.resource)) return false;
        mine.drop(e.resource);
        const ref = e.resource === 'nodes' || e.resource === 'pods' ? e.resource : undefined;
        if (ref) upstreamSeen.drop(ref);
        clock.setTimeout(() => {
          if (ref) upstreamSeen.restore(ref, e.gone, clock.now());
          mine.restore(e.resource, e.gone);
        }, e.forS * 1000);
        lastFaultEnd = Math.max(lastFaultEnd, clock.now() + e.forS * 1000);
        if (e.resource === 'nodes' || e.resource === 'leases') untaintImpededUntil = Math.max(untaintImpededUntil, clock.now() + e.forS * 1000);
        return true;
      }
      case 'malformed': {
        const key = malformedKey(e.resource, e.index);
        const id = `${e.resource}:${key ?? ''}`;
        const mine = current();
        if (key === undefined || !mine || malformed.has(id) || !mine.caches.malform(e.resource, key)) return false;
        // Every process's informer gets the malformed object (a paused one at its return).
        for (const p of live()) if (p !== mine) p.caches.malform(e.resource, key);
        const until = clock.now() + e.forS * 1000;
        malformed.set(id, { since: clock.now(), until });
        clock.setTimeout(() => {
          malformed.delete(id);
          for (const p of live()) p.caches.unmalform(e.resource, key);
        }, e.forS * 1000);
        // Like a watch drop for that object: (d) and (b) count from its end.
        lastFaultEnd = Math.max(lastFaultEnd, until);
        if (e.resource === 'nodes' || e.resource === 'leases') untaintImpededUntil = Math.max(untaintImpededUntil, until);
        note.text = ` (${key})`;
        return true;
      }
      case 'wire-bytes': {
        const n = cluster.nodes.get(nodeName);
        if (!n) return false;
        const zone = e.zone === undefined ? undefined : (ZONE_LABELS[e.zone % ZONE_LABELS.length] ?? 'a');
        const raw = Uint8Array.from([...Buffer.from(zone ?? 'task blocked '), ...(WIRE_BAD_BYTES[e.bad % WIRE_BAD_BYTES.length] ?? [])]);
        // The cluster holds what the API's JSON gives (Go's rendering); the wire carries the bytes.
        const text = goRendered(raw);
        wireRaws.set(text, raw);
        if (zone === undefined) {
          const now = clock.now();
          const cond: NodeCondition = { type: 'KernelDeadlock', status: 'False', reason: 'KernelHasNoDeadlock', message: text, lastHeartbeatTime: now, lastTransitionTime: now };
          cluster.putNode({ ...n, conditions: [...n.conditions.filter((c) => c.type !== 'KernelDeadlock'), cond] });
          return true;
        }
        // A zone of its own, as zone-change makes one.
        const from = zoneLabel(n);
        if (from === text) return false;
        relabelled.add(nodeName);
        cluster.putNode({ ...n, labels: { ...n.labels, [ZONE_LABEL]: text } });
        zoneChangedAt.set(from, clock.now());
        zoneChangedAt.set(text, clock.now());
        note.text = ` (zone ${JSON.stringify(text)})`;
        return true;
      }
      case 'wire-truncated': {
        const key = malformedKey(e.resource, e.index);
        const id = `${e.resource}:${key ?? ''}`;
        const mine = current();
        // As `malformed`: not while the acting process's stream of that resource is down.
        if (!mirror || key === undefined || !mine || malformed.has(id) || mine.caches.dropped(e.resource)) return false;
        const since = clock.now();
        const until = since + e.forS * 1000;
        // The truth first ((h), live reads), then the wire: what reaches the caches is the decoder's verdict.
        malformed.set(id, { since, until, wire: true });
        if (!mirror.truncate(e.resource, key, e.cut)) {
          malformed.delete(id);
          return false;
        }
        clock.setTimeout(() => {
          malformed.delete(id);
          mirror.untruncate(e.resource, key);
        }, e.forS * 1000);
        lastFaultEnd = Math.max(lastFaultEnd, until);
        if (e.resource === 'nodes' || e.resource === 'leases') untaintImpededUntil = Math.max(untaintImpededUntil, until);
        note.text = ` (${key})`;
        return true;
      }
      case 'clock-step':
        offsetMs = Math.max(-MAX_CLOCK_STEP_MS, Math.min(MAX_CLOCK_STEP_MS, e.offsetMs));
        maxSkewMs = Math.max(maxSkewMs, Math.abs(offsetMs));
        return true;
      case 'pod-end': {
        // The kubelet posts the phase of a pod it runs: only a running pod on a node whose kubelet runs.
        const running = cluster.podList().filter((x) => x.phase === 'Running' && x.deletionTimestamp === undefined && x.nodeName !== '' && cluster.kubeletRunning(x.nodeName));
        const cur = running[e.pod % Math.max(1, running.length)];
        if (!cur) return false;
        const ready = (c: Pod['conditions'][number]): Pod['conditions'][number] => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: clock.now() } : c);
        cluster.putPod({ ...cur, phase: e.phase === 'Evicted' ? 'Failed' : e.phase, ...(e.phase === 'Evicted' ? { statusReason: 'Evicted' } : {}), containersNotRunning: true, conditions: cur.conditions.map(ready) });
        lastPodEndAt = clock.now();
        note.text = ` (${podKey(cur)})`;
        return true;
      }
      case 'node-delete': {
        const n = cluster.nodes.get(nodeName);
        if (!n) return false;
        if (cluster.podsOnNode(nodeName).some((x) => x.phase !== 'Succeeded' && x.phase !== 'Failed')) note.items.push('node-delete:bound');
        cluster.removeNode(nodeName);
        truth.delete(nodeName);
        zoneChangedAt.set(zoneLabel(n), clock.now());
        if (e.returnS !== undefined) {
          clock.setTimeout(() => void register(nodeName), e.returnS * 1000);
          note.items.push('node-register');
          // A health change of its zone to come: (d) counts from it, and the tail runs past it.
          const back = clock.now() + e.returnS * 1000;
          lastRegisterAt = Math.max(lastRegisterAt, back);
          lastPauseEnd = Math.max(lastPauseEnd, back);
          zoneChangedAt.set(zoneLabel(n), back);
        }
        return true;
      }
      case 'unscheduled-terminating': {
        const i = podSeq++;
        cluster.putPod({
          namespace: 'default',
          name: `fz-u${i}`,
          uid: `fz-uid-${i}`,
          resourceVersion: '1',
          nodeName: '',
          phase: 'Pending',
          creationTimestamp: clock.now(),
          generation: 1,
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
          tolerations: [],
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-web', controller: true }],
          pvcNames: [],
          finalizers: ['fuzz.example.com/hold'],
          // The API server gives an unscheduled pod grace period 0; the finalizer keeps it.
          deletionTimestamp: clock.now(),
          deletionGracePeriodSeconds: 0,
        });
        note.text = ` (default/fz-u${i})`;
        return true;
      }
      case 'api-outage': {
        if (cluster.apiDown()) return false;
        const from = clock.now();
        const to = from + e.forS * 1000;
        cluster.apiOutage(e.forS * 1000);
        outage = { from, to, seed: e.seed };
        let sightBack = to;
        for (const p of live()) {
          // Each process's informers reconnect by client-go's backoff (process.ts relistTimes).
          const times = p.relistTimes(from, to, seededRandom(e.seed ^ p.id), false);
          p.outage = { from, to, nodesAt: times.get('nodes') ?? to, sightAt: Math.max(times.get('nodes') ?? to, times.get('leases') ?? to) };
          for (const r of WATCHED) p.caches.drop(r);
          for (const [r, at] of times) {
            p.clock.setTimeout(() => p.caches.restore(r, true), at - from);
            sightBack = Math.max(sightBack, at);
          }
          if (p === current()) {
            // The reference upstream behind dropped watches relists on the same backoff draws.
            for (const r of ['nodes', 'pods'] as const) {
              upstreamSeen.drop(r);
              clock.setTimeout(() => upstreamSeen.restore(r, true, clock.now()), (times.get(r) ?? to) - from);
            }
          }
        }
        // Like a Lease pause of every node, and a fault until every stream is back.
        lastFaultEnd = Math.max(lastFaultEnd, sightBack);
        untaintImpededUntil = Math.max(untaintImpededUntil, sightBack);
        lastPauseEnd = Math.max(lastPauseEnd, to);
        for (const n of cluster.nodeList()) pauseEndedAt.set(zoneLabel(n), Math.max(pauseEndedAt.get(zoneLabel(n)) ?? -Infinity, to));
        return true;
      }
      case 'process-pause': {
        const p = actor();
        if (!p || live().some((x) => x.paused)) return false;
        p.pause();
        if (e.standby) startProcess();
        else p.restartOnExit = true;
        clock.setTimeout(() => p.resume(), e.forS * 1000);
        // The new leader starts once the Lease lapses: from the pause with a standby, else from the resume.
        lastRestartAt = Math.max(lastRestartAt, clock.now() + (e.standby ? 0 : e.forS * 1000) + LEASE_TAKEOVER_MS);
        lastFaultEnd = Math.max(lastFaultEnd, clock.now() + e.forS * 1000);
        return true;
      }
    }
  };

  startProcess();
  cluster.startKubelets();
  await clock.advanceAsync(0);
  for (const s of steps) {
    await clock.advanceAsync(s.afterS * 1000);
    const names = podNames.map((k) => k.slice('default/'.length));
    note.text = '';
    note.items = [];
    if (await apply(s.event)) {
      events++;
      for (const item of [...itemsOf(s.event), ...note.items]) coverage[item]++;
      lines.push(`  +${(at() / 1000).toFixed(0)}s ${eventText(s.event, names)}${note.text}`);
    }
  }

  // (d) Nothing lost: upstream deletes every pod whose toleration ran out on a node it keeps
  // tainted (taint_eviction.go), and taints every not-Ready node of a zone it evicts from
  // (node_lifecycle_controller.go handleDisruption, ComputeZoneState, ReducedQPSFunc: a partially
  // disrupted zone of at most --large-cluster-size-threshold nodes is not evicted from). No event
  // comes after the last step, so each such pod's due time is known now: the quiet tail runs until
  // the last of them (at least MIN_TAIL_MS after the last step, fault and Lease pause).
  // A deleted node's kubelet that registers it again after the last step does so in the quiet
  // tail: the zones are judged with it (seed 20271207 run 21519, seed 20271208 run 24834: a node
  // deleted and back 0 s later, its zone judged FullDisruption without it where upstream sees it
  // Ready and the zone PartialDisruption, rate 0). The tail runs past it anyway.
  if (lastRegisterAt >= clock.now()) await clock.advanceAsync(lastRegisterAt - clock.now() + 1);
  const zoneOfNode = (n: string): string => zoneLabel(cluster.nodes.get(n));
  // A deleted node is in no zone (upstream forgets it); one that registered again counts as new.
  const nodesNow = NODE_NAMES.filter((n) => cluster.nodes.has(n));
  const zoneNames = new Set(nodesNow.map(zoneOfNode));
  const states = new Map<string, string>([...zoneNames].map((z) => [z, zoneState(nodesNow.filter((n) => zoneOfNode(n) === z).map((n) => truth.get(n)?.unhealthySince === undefined), config.unhealthyZoneThreshold)]));
  const allDown = everyNodeDown();
  const dues: { pod: Pod; due: number; detail: string }[] = [];
  const exempt: string[] = [];
  for (const pod of cluster.podList()) {
    const k = truth.get(pod.nodeName);
    const node = cluster.nodes.get(pod.nodeName);
    if (!k || k.unhealthySince === undefined || allDown || pod.deletionTimestamp !== undefined) continue;
    // A relabelled node may sit in its old zone's queue (upstream too): its zone's rate is not known.
    if (relabelled.has(pod.nodeName) || states.get(zoneOfNode(pod.nodeName)) === 'PartialDisruption' || noExecuteTaints(node).some((t) => t.key === OUT_OF_SERVICE)) continue;
    const tol = pod.tolerations.find((t) => t.key === (k.running ? NOT_READY : UNREACHABLE)) ?? pod.tolerations.find((t) => t.key === undefined && t.operator === 'Exists');
    if (tol && tol.tolerationSeconds === undefined) continue;
    const s = Math.max(0, tol?.tolerationSeconds ?? 0);
    const from = Math.max(k.unhealthySince, tolsSetAt.get(pod.uid) ?? -Infinity, lastRestartAt, lastFaultEnd, zoneChangedAt.get(zoneOfNode(pod.nodeName)) ?? -Infinity, pauseEndedAt.get(zoneOfNode(pod.nodeName)) ?? -Infinity, allDownEndedAt);
    dues.push({ pod, due: from + lostBoundMs(config, s), detail: `kubelet ${k.running ? 'reporting NotReady' : 'stopped'} since ${fmt(k.unhealthySince)}, tolerating ${s} s` });
  }
  // (d) Nothing lost by pod GC (gc_controller.go gc, every 20 s): the pods of a node that stays deleted
  // (gcOrphaned: queued at the first pass that misses the node, deleted at the pass after its 40 s),
  // the unscheduled terminating pods (gcUnscheduledTerminating, at the next pass), and the terminated
  // pods beyond the threshold (gcTerminated, at the next pass) are gone within two passes more than
  // that, counted from the later of the condition arising, the last (re)start and the last fault.
  const quiet = Math.max(lastRestartAt, lastFaultEnd);
  const gcDues: { key: string; uid: string; due: number; detail: string; terminated?: true; orphanOf?: string }[] = [];
  for (const pod of cluster.podList()) {
    if (pod.nodeName !== '' && !cluster.nodes.has(pod.nodeName)) {
      const since = absences.get(pod.nodeName)?.at(-1)?.from ?? T0;
      gcDues.push({ key: podKey(pod), uid: pod.uid, due: Math.max(since, quiet) + ORPHAN_QUARANTINE_MS + 3 * GC_CHECK_PERIOD_MS, detail: `an orphan of ${pod.nodeName}, deleted at ${fmt(since)}`, orphanOf: pod.nodeName });
    } else if (pod.nodeName === '' && pod.deletionTimestamp !== undefined) {
      gcDues.push({ key: podKey(pod), uid: pod.uid, due: Math.max(pod.creationTimestamp, quiet) + 2 * GC_CHECK_PERIOD_MS, detail: 'unscheduled and terminating' });
    }
  }
  for (const pod of gcTerminatedToDelete(cluster.podList(), threshold)) {
    gcDues.push({ key: podKey(pod), uid: pod.uid, due: Math.max(lastPodEndAt, quiet) + 2 * GC_CHECK_PERIOD_MS, detail: `terminated (${pod.phase}) beyond the threshold (${threshold})`, terminated: true });
  }
  const tailEnd = Math.max(clock.now(), lastFaultEnd, lastPauseEnd, lastRestartAt) + MIN_TAIL_MS;
  await clock.advanceAsync(Math.max(tailEnd, ...dues.map((d) => d.due + 1000), ...gcDues.map((d) => d.due + 1000)) - clock.now());
  const end = clock.now();
  const stillChosen = new Set(gcTerminatedToDelete(cluster.podList(), threshold).map((x) => x.uid));
  for (const d of gcDues) {
    // A malformed pod is absent from pod GC's cache (h): its clock starts when it is readable again (lastFaultEnd).
    if (cluster.pods.get(d.key)?.uid !== d.uid) continue;
    // Other terminated pods went meanwhile (a taint eviction, a user): not beyond the threshold any more.
    if (d.terminated && !stillChosen.has(d.uid)) continue;
    // Its node registered again meanwhile: not an orphan.
    if (d.orphanOf !== undefined && cluster.nodes.has(d.orphanOf)) continue;
    violations.push({ invariant: 'd', atMs: end - T0, detail: `${d.key} (${d.detail}) not force-deleted by pod GC by ${fmt(d.due)}` });
  }
  for (const { pod, due, detail } of dues) {
    const cur = cluster.pods.get(podKey(pod));
    if (cur?.uid !== pod.uid || cur.deletionTimestamp !== undefined) continue;
    if (toldGone.has(podKey(pod))) {
      exempt.push(`${podKey(pod)}: its deletion was answered 404 (the pod is gone, by the API's word)`);
      continue;
    }
    violations.push({ invariant: 'd', atMs: end - T0, detail: `${podKey(pod)} on ${pod.nodeName} (${detail}) not deleted by ${fmt(due)}` });
  }
  // (d) A Ready node's NoExecute taints go (processTaintBaseEviction → markNodeAsReachable, on the
  // next monitor pass after it is seen Ready) within {@link readyUntaintBoundMs} once faults stop.
  for (const n of cluster.nodeList()) {
    const r = readyFor(n);
    const taints = noExecuteTaints(n).filter((t) => t.key === UNREACHABLE || t.key === NOT_READY);
    if (!r.ready || taints.length === 0) continue;
    const due = Math.max(r.sinceMs, lastFaultEnd, lastRestartAt) + readyUntaintBoundMs(config);
    if (due <= end) violations.push({ invariant: 'd', atMs: end - T0, detail: `${n.name} Ready since ${fmt(r.sinceMs)} still has ${taints.map((t) => t.key).join(', ')} NoExecute at ${fmt(end)} (bound ${fmt(due)})` });
  }
  await stopProcess();

  const text = [...lines, ...exempt.map((x) => `  (d) exempt: ${x}`), ...byDroppedWatch.map((x) => `  (a) by the dropped watch: ${x}`), ...violations.map((v) => `  VIOLATION (${v.invariant}) at +${(v.atMs / 1000).toFixed(1)}s: ${v.detail}`)].join('\n');
  return { violations, exempt, byDroppedWatch, events, timers: clock.fired, coverage, outcomes, text, actions };
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? `+${((ms - T0) / 1000).toFixed(1)}s` : String(ms);
}

function taintText(n: Node | undefined): string {
  const ts = noExecuteTaints(n).map((t) => `${t.key}:NoExecute@${t.timeAdded === undefined ? '?' : fmt(t.timeAdded)}`);
  return ts.length > 0 ? ts.join(', ') : 'no NoExecute taint';
}
