// Why this file is over 500 lines: every metric under its upstream name, with its help text and buckets, is declared in one place so dashboards can be checked against one file.
/**
 * Every Prometheus metric the controller exposes, on one non-global prom-client `Registry`
 * (so tests and several controller instances in one process never share state).
 *
 * Names, types, labels, help texts and buckets follow upstream exactly:
 * - `pkg/controller/nodelifecycle/metrics.go` (subsystem `node_collector`);
 * - `pkg/controller/tainteviction/metrics/metrics.go` (subsystem `taint_eviction_controller`);
 * - `pkg/controller/podgc/metrics/metrics.go` (subsystem `pod_gc_collector`);
 * - `pkg/controller/volume/attachdetach/metrics/metrics.go`: the forced-detach counter, under both
 *   the name 1.37.2 registers (`attach_detach_controller_attachdetach_controller_forced_detaches{reason}`)
 *   and the pre-1.28 name (`attachdetach_controller_forced_detaches`), see {@link AttachDetachMetrics};
 * - client-go `tools/leaderelection/metrics.go` via component-base (`leader_election_master_status`,
 *   `leader_election_slowpath_total`);
 * - component-base `metrics/prometheus/workqueue/metrics.go` (`workqueue_*{name}`, fed by
 *   src/kube/workqueue.ts) and `metrics/prometheus/restclient/metrics.go` (`rest_client_*`, fed by
 *   src/kube/client.ts and the write throttle in src/kube/throttle.ts);
 * - `node_lifecycle_controller_build_info`, our counterpart of component-base's
 *   `kubernetes_build_info` (`metrics/version.go`), which carries Kubernetes' own version.
 * Metrics that upstream does not have are marked "our own" below. Checked against the
 * k8s.io/kubernetes v1.37.2 sources; docs/upstream-1.37.md lists what changed since 1.20.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, exponentialBuckets } from 'prom-client';
import type { RestClientMetricsSink } from '../kube/client.js';
import type { WorkQueueGaugeValues, WorkQueueMetrics, WorkQueueMetricsProvider } from '../kube/workqueue.js';
import { SECOND_ACTOR_KINDS } from '../secondactor/kinds.js';
import { PROGRAM_VERSION } from '../version.js';
import { buildStamp, type BuildStamp } from '../buildinfo.js';

/**
 * Sampling period of the `nodejs_eventloop_lag_*` default metrics, **milliseconds**. prom-client's
 * default (10 ms) wakes the main thread 100 times a second (a libuv timer feeding an HDR histogram,
 * outside JavaScript, so invisible in a V8 profile): measured 0.10 s of CPU per minute in an idle
 * process, against 0.016 s at 100 ms (bench; the steady-state CPU gap to kube-controller-manager
 * was ~0.07 s/min). A blocked event loop still shows: a 100 ms sample period sees any stall longer
 * than that, so only the percentiles of sub-100 ms jitter lose detail. Not upstream (Go has none).
 */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 100;

/** `node_collector_update_node_health_duration_seconds` buckets: Go `ExponentialBuckets(0.001, 4, 8)`, 1 ms … 16.384 s. */
export const UPDATE_NODE_HEALTH_BUCKETS_SECONDS: readonly number[] = exponentialBuckets(0.001, 4, 8);
/** `node_collector_update_all_nodes_health_duration_seconds` buckets: Go `ExponentialBuckets(0.01, 4, 8)`, 10 ms … 163.84 s. */
export const UPDATE_ALL_NODES_HEALTH_BUCKETS_SECONDS: readonly number[] = exponentialBuckets(0.01, 4, 8);
/** `taint_eviction_controller_pod_deletion_duration_seconds` buckets (seconds), 5 ms … 4 min, as upstream. */
export const POD_DELETION_DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240,
];

/**
 * `workqueue_queue_duration_seconds` / `workqueue_work_duration_seconds` buckets: Go
 * `ExponentialBuckets(10e-9, 10, 10)`, 10 ns … 10 s (repeated multiplication, as Go computes them).
 */
export const WORKQUEUE_DURATION_BUCKETS_SECONDS: readonly number[] = goExponentialBuckets(10e-9, 10, 10);
/** `rest_client_request_duration_seconds` / `rest_client_rate_limiter_duration_seconds` buckets, 5 ms … 60 s, as upstream. */
export const REST_CLIENT_DURATION_BUCKETS_SECONDS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

/** Go `prometheus.ExponentialBuckets` (start, start×factor, … by repeated multiplication). */
function goExponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, b = start; i < count; i++, b *= factor) out.push(b);
  return out;
}

/** `reason` label values of the pod GC counters (upstream `podgc/metrics` constants). */
export const POD_GC_REASONS = ['terminated', 'out-of-service', 'orphaned', 'unscheduled'] as const;
/** A pod GC `reason` label value. */
export type PodGCReason = (typeof POD_GC_REASONS)[number];

/** `reason` label values of `attachdetach_controller_forced_detaches` (upstream, since 1.28). */
export const FORCED_DETACH_REASONS = ['timeout', 'out-of-service'] as const;
/** A forced-detach `reason` label value (the decision's own reasons are src/volumes/decision.ts `ForcedDetachReason`). */
export type ForcedDetachReasonLabel = (typeof FORCED_DETACH_REASONS)[number];

/**
 * The forced-detach counter's full name in kube-controller-manager 1.37.2: upstream's subsystem
 * `attach_detach_controller` is prefixed to a name that already starts with `attachdetach_controller_`.
 */
export const FORCED_DETACHES_METRIC = 'attach_detach_controller_attachdetach_controller_forced_detaches';
/** The forced-detach counter's name before 1.28 (1.20: no labels); ours since the first release. */
export const LEGACY_FORCED_DETACHES_METRIC = 'attachdetach_controller_forced_detaches';
const FORCED_DETACH_LABELS = ['reason'] as const;

/**
 * `reason` label values of our own `node_collector_zone_eviction_paused{zone,reason}`:
 * - `all-zones-fully-disrupted`: every zone is FullDisruption, so tainting stopped everywhere
 *   ("master disruption mode", `handleDisruption`);
 * - `partial-disruption`: the zone is PartialDisruption and not larger than
 *   `--large-cluster-size-threshold`, so `ReducedQPSFunc` gives 0 nodes/s.
 */
export const ZONE_EVICTION_PAUSED_REASONS = ['all-zones-fully-disrupted', 'partial-disruption'] as const;
/** A `node_collector_zone_eviction_paused` `reason` label value. */
export type ZoneEvictionPausedReason = (typeof ZONE_EVICTION_PAUSED_REASONS)[number];

/** Node lifecycle controller metrics (subsystem `node_collector`). */
export interface NodeCollectorMetrics {
  /** `node_collector_zone_health{zone}` gauge: percent (0–100) of Ready nodes in the zone; 100 once the zone disappears. */
  zoneHealth: Gauge<'zone'>;
  /** `node_collector_zone_size{zone}` gauge: number of (non-excluded) nodes in the zone. */
  zoneSize: Gauge<'zone'>;
  /** `node_collector_unhealthy_nodes_in_zone{zone}` gauge: not-Ready nodes (a missing Ready condition counts). */
  unhealthyNodesInZone: Gauge<'zone'>;
  /** `node_collector_evictions_total{zone}` counter (STABLE): successful NoExecute taint swaps; `inc({zone}, 0)` when a zone appears. */
  evictionsTotal: Counter<'zone'>;
  /** `node_collector_update_node_health_duration_seconds` histogram: one node's health update, in **seconds**. */
  updateNodeHealthDuration: Histogram<never>;
  /** `node_collector_update_all_nodes_health_duration_seconds` histogram: one `monitorNodeHealth` pass, in **seconds**. */
  updateAllNodesHealthDuration: Histogram<never>;
  /** Our own `node_collector_zone_tainting_rate{zone}` gauge: current NoExecute tainting rate of the zone, in **nodes per second**. */
  zoneTaintingRate: Gauge<'zone'>;
  /** Our own `node_collector_zone_eviction_paused{zone,reason}` gauge: 1 while tainting in the zone is paused for `reason`, else 0. */
  zoneEvictionPaused: Gauge<'zone' | 'reason'>;
  /**
   * Our own `node_collector_zone_tainting_queue_length{zone}` gauge (not upstream's): nodes waiting in
   * the zone's NoExecute tainting queue (legacy mode: its eviction queue), as `status` shows in QUEUE;
   * a node whose taint write is in flight is not counted. 0 when the zone appears.
   */
  zoneTaintingQueueLength: Gauge<'zone'>;
  /**
   * Our own `node_collector_pod_marking_held_nodes` gauge: not-Ready nodes whose pods are left Ready
   * (not marked NotReady) because every zone is FullDisruption, the all-zones stop.
   */
  podMarkingHeldNodes: Gauge<never>;
  /**
   * Our own `node_collector_eviction_circuit_open{guard}` gauge: 1 while the cluster-wide
   * guard `guard` (`max-unhealthy-nodes` or `storm`) stops every new NoExecute taint and legacy
   * eviction, else 0; set to 0 at start for each configured guard, absent for a guard that is off.
   * It is 1 from the moment the controller starts acting: every configured guard begins open.
   */
  evictionCircuitOpen: Gauge<'guard'>;
  /**
   * Our own `node_collector_eviction_circuit_start_hold{guard}` gauge: 1 while the guard is open only
   * because the controller just started (nothing seen since the start has opened it), else 0; absent
   * for a guard that is off. The chart's EvictionCircuitOpen alert ignores such a hold.
   */
  evictionCircuitStartHold: Gauge<'guard'>;
}

/** Taint eviction controller metrics (subsystem `taint_eviction_controller`). */
export interface TaintEvictionMetrics {
  /** `taint_eviction_controller_pod_deletions_total` counter: pods deleted since start. */
  podDeletionsTotal: Counter<never>;
  /**
   * `taint_eviction_controller_pod_deletion_duration_seconds` histogram: time from the moment the
   * taint effect became active for the pod (the scheduled fire time) to its deletion, in **seconds**.
   * Deliberate difference from upstream: upstream observes `float64(time.Since(fireAt) * time.Second)`
   * (nanoseconds × 1e9, overflowing after ~9.2 s; kubernetes PR #141742); observe real seconds here.
   */
  podDeletionDuration: Histogram<never>;
  /** Our own `taint_eviction_controller_pending_pod_deletions` gauge: pods with a scheduled, not yet executed deletion. */
  pendingPodDeletions: Gauge<never>;
  /**
   * Our own `taint_eviction_controller_failing_pod_deletions` gauge: pods whose due deletion failed
   * at its last attempt and is being retried with backoff (upstream gives up after 5 tries and has
   * no such gauge). 0 when every due deletion goes through.
   */
  failingPodDeletions: Gauge<never>;
}

/** Pod GC controller metrics (subsystem `pod_gc_collector`). */
export interface PodGCMetrics {
  /** `pod_gc_collector_force_delete_pods_total{namespace,reason}` counter: force deletions attempted. */
  forceDeletePodsTotal: Counter<'namespace' | 'reason'>;
  /** `pod_gc_collector_force_delete_pod_errors_total{namespace,reason}` counter: force deletions that failed. */
  forceDeletePodErrorsTotal: Counter<'namespace' | 'reason'>;
  /**
   * Our own `pod_gc_collector_live_read_failures_total{resource,reason}` counter: live GETs before a
   * force delete (`resource` node or pod) that answered neither with a parsable object nor with 404
   * (`reason` `unparsable` or `error`); the force delete waited and was retried (src/kube/reads.ts).
   */
  liveReadFailuresTotal: Counter<'resource' | 'reason'>;
}

/** Attach/detach (force detach) metrics. */
export interface AttachDetachMetrics {
  /**
   * `attachdetach_controller_forced_detaches{reason}` counter, reason `timeout` or `out-of-service`:
   * VolumeAttachments force-detached. Increment this one; every scrape also shows the same values
   * under {@link FORCED_DETACHES_METRIC}, the name kube-controller-manager 1.37.2 registers
   * (`Subsystem: "attach_detach_controller"`, `Name: "attachdetach_controller_forced_detaches"`
   * in `pkg/controller/volume/attachdetach/metrics/metrics.go`). The short name is 1.20's (a
   * counter without labels there; summing over `reason` gives 1.20's value) and is kept so that
   * dashboards written for it and for our earlier releases keep working.
   */
  forcedDetaches: Counter<'reason'>;
  /**
   * Our own `attachdetach_controller_live_read_failures_total{resource,reason}` counter: live GETs
   * before a force detach (`resource` node or volumeattachment) that answered neither with a
   * parsable object nor with 404 (`reason` `unparsable` or `error`); the detach waited and was retried.
   */
  liveReadFailuresTotal: Counter<'resource' | 'reason'>;
}

/** Leader election metrics. */
export interface LeaderElectionMetrics {
  /** `leader_election_master_status{name}` gauge: 1 while this process holds the lease `name`, 0 otherwise. */
  masterStatus: Gauge<'name'>;
  /**
   * `leader_election_slowpath_total{name}` counter: renewals by the leader that had to read the
   * Lease first (the optimistic update failed, or the observed lease had expired on the local clock).
   * Incremented where client-go calls `slowpathExercised` (src/kube/leaderelection.ts).
   */
  slowpathTotal: Counter<'name'>;
}

/** Our own metrics of the `node-affinity-enforcer` (src/nodeaffinity/; no upstream counterpart). */
export interface NodeAffinityMetrics {
  /** `node_affinity_enforcer_violating_pods` gauge: pods whose during-execution rule does not match their node now (waiting, held, queued or blocked). */
  violatingPods: Gauge<never>;
  /** `node_affinity_enforcer_violations_total` counter: violations seen (each starts a grace period). */
  violations: Counter<never>;
  /** `node_affinity_enforcer_evictions_total{result}` counter: eviction attempts, result `evicted`, `blocked_by_pdb`, `error` or `gone`. */
  evictions: Counter<'result'>;
  /** `node_affinity_enforcer_malformed_rules_total` counter: malformed rules reported (once per pod and reason); never enforced. */
  malformedRules: Counter<never>;
}

/**
 * Work queue metrics (component-base `metrics/prometheus/workqueue`), label `name` = the queue's
 * name (src/kube/workqueue.ts `WorkQueueOptions.name`). Depth, unfinished work and longest running
 * processor are computed from the queues at scrape time.
 */
export interface WorkQueueMetricFamilies {
  /** Pass to src/kube/workqueue.ts `setWorkQueueMetricsProvider` (or a queue's `metrics` option). */
  provider: WorkQueueMetricsProvider;
  /** `workqueue_depth{name}` gauge. */
  depth: Gauge<'name'>;
  /** `workqueue_adds_total{name}` counter. */
  adds: Counter<'name'>;
  /** `workqueue_queue_duration_seconds{name}` histogram, **seconds**. */
  queueDuration: Histogram<'name'>;
  /** `workqueue_work_duration_seconds{name}` histogram, **seconds**. */
  workDuration: Histogram<'name'>;
  /** `workqueue_unfinished_work_seconds{name}` gauge. */
  unfinishedWork: Gauge<'name'>;
  /** `workqueue_longest_running_processor_seconds{name}` gauge. */
  longestRunningProcessor: Gauge<'name'>;
  /** `workqueue_retries_total{name}` counter. */
  retries: Counter<'name'>;
}

/** REST client metrics (component-base `metrics/prometheus/restclient`). */
export interface RestClientMetricFamilies {
  /** Pass to src/kube/client.ts `makeClients` (third argument). */
  sink: RestClientMetricsSink;
  /** `rest_client_requests_total{code,method,host}` counter; `code` is `<error>` when no response came. */
  requestsTotal: Counter<'code' | 'method' | 'host'>;
  /** `rest_client_request_duration_seconds{verb,host}` histogram, **seconds**. */
  requestDuration: Histogram<'verb' | 'host'>;
  /** `rest_client_rate_limiter_duration_seconds{verb,host}` histogram: wait in the client-side write throttle, **seconds**. */
  rateLimiterDuration: Histogram<'verb' | 'host'>;
  /** Our own `node_lifecycle_controller_informer_wire_fallback_total{resource,reason}`: an informer's protobuf codec fell back to JSON (src/kube/wire.ts). */
  wireFallback: Counter<'resource' | 'reason'>;
  /** Our own `node_lifecycle_controller_informer_wire_malformed_total{resource}`: objects skipped because their protobuf did not decode. */
  wireMalformed: Counter<'resource'>;
}

/** Typed handles for every metric, plus the registry that serves them. */
export interface Metrics {
  /** The registry to expose on `/metrics` (`await registry.metrics()`, `registry.contentType`). */
  registry: Registry;
  nodeCollector: NodeCollectorMetrics;
  taintEviction: TaintEvictionMetrics;
  podGC: PodGCMetrics;
  attachDetach: AttachDetachMetrics;
  leaderElection: LeaderElectionMetrics;
  nodeAffinity: NodeAffinityMetrics;
  workqueue: WorkQueueMetricFamilies;
  restClient: RestClientMetricFamilies;
  /** `node_lifecycle_controller_build_info{version,git_commit,git_tree_state,node_version}` gauge, always 1. */
  buildInfo: Gauge<'version' | 'git_commit' | 'git_tree_state' | 'node_version'>;
  /**
   * Our own `node_lifecycle_second_actor_actions_total{kind}` counter: actions of another actor
   * (kube-controller-manager, or another copy of this program) that make this controller's
   * decisions, by kind (`taint`, `disruption-target`, `pod-deletion`, `event`), counted by the
   * continuous second-actor check (src/secondactor/check.ts). Every kind starts at 0, so that
   * `increase()` sees the first action.
   */
  secondActorActions: Counter<'kind'>;
}

/** Options of {@link createMetrics}. */
export interface CreateMetricsOptions {
  /**
   * Register prom-client's default process and Node.js runtime metrics (`process_*`, `nodejs_*`).
   * Default true; tests that build many registries may turn it off.
   */
  defaultMetrics?: boolean;
  /**
   * The build the gauge describes; default this program's own (src/buildinfo.ts: stamped at build
   * and bundle time, `unknown` parts where nothing stamped them). Tests pass their own.
   */
  build?: BuildStamp;
}

/**
 * Creates a fresh registry with every metric registered.
 *
 * `node_collector_evictions_number{zone}` (1.20's name for what `node_collector_evictions_total`
 * counts; the two ran side by side until the old one was removed) is not registered: 1.37.2's
 * `pkg/controller/nodelifecycle/metrics.go` has only `node_collector_evictions_total`.
 *
 * @param opts see {@link CreateMetricsOptions}.
 * @returns typed metric handles and their registry.
 * @throws never (names are constants; a fresh registry cannot hold duplicates).
 * Upstream: the `Register()` functions of the metrics files listed in the module comment.
 */
export function createMetrics(opts: CreateMetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
  const gauge = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> =>
    new Gauge<L>({ name, help, labelNames, registers });
  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> =>
    new Counter<L>({ name, help, labelNames, registers });
  const histogram = (name: string, help: string, buckets: readonly number[]): Histogram<never> =>
    new Histogram<never>({ name, help, buckets: [...buckets], registers });

  const nodeCollector: NodeCollectorMetrics = {
    zoneHealth: gauge('node_collector_zone_health', 'Gauge measuring percentage of healthy nodes per zone.', ['zone']),
    zoneSize: gauge('node_collector_zone_size', 'Gauge measuring number of registered Nodes per zones.', ['zone']),
    unhealthyNodesInZone: gauge('node_collector_unhealthy_nodes_in_zone', 'Gauge measuring number of not Ready Nodes per zones.', ['zone']),
    evictionsTotal: counter(
      'node_collector_evictions_total',
      'Number of Node evictions that happened since current instance of NodeController started.',
      ['zone'],
    ),
    updateNodeHealthDuration: histogram(
      'node_collector_update_node_health_duration_seconds',
      'Duration in seconds for NodeController to update the health of a single node.',
      UPDATE_NODE_HEALTH_BUCKETS_SECONDS,
    ),
    updateAllNodesHealthDuration: histogram(
      'node_collector_update_all_nodes_health_duration_seconds',
      'Duration in seconds for NodeController to update the health of all nodes.',
      UPDATE_ALL_NODES_HEALTH_BUCKETS_SECONDS,
    ),
    zoneTaintingRate: gauge(
      'node_collector_zone_tainting_rate',
      'Current NoExecute tainting rate of the zone, in nodes per second (0 while paused).',
      ['zone'],
    ),
    zoneEvictionPaused: gauge(
      'node_collector_zone_eviction_paused',
      'Whether NoExecute tainting in the zone is paused (1) or not (0), by reason.',
      ['zone', 'reason'],
    ),
    zoneTaintingQueueLength: gauge(
      'node_collector_zone_tainting_queue_length',
      "Number of Nodes waiting in the zone's NoExecute tainting queue (in legacy mode, its eviction queue). node-lifecycle-controller's own metric, not kube-controller-manager's.",
      ['zone'],
    ),
    podMarkingHeldNodes: gauge(
      'node_collector_pod_marking_held_nodes',
      'Number of not Ready Nodes whose Pods are not marked NotReady because every zone is FullDisruption.',
    ),
    evictionCircuitOpen: gauge(
      'node_collector_eviction_circuit_open',
      'Whether a cluster-wide eviction guard (max-unhealthy-nodes or storm) is open (1), stopping every new NoExecute taint and legacy eviction, or closed (0).',
      ['guard'],
    ),
    evictionCircuitStartHold: gauge(
      'node_collector_eviction_circuit_start_hold',
      'Whether a cluster-wide eviction guard is open (1) only because the controller just started: every guard begins open and closes by its own rule over what is seen since the start.',
      ['guard'],
    ),
  };

  const taintEviction: TaintEvictionMetrics = {
    podDeletionsTotal: counter('taint_eviction_controller_pod_deletions_total', 'Total number of Pods deleted by TaintEvictionController since its start.'),
    podDeletionDuration: histogram(
      'taint_eviction_controller_pod_deletion_duration_seconds',
      'Latency, in seconds, between the time when a taint effect has been activated for the Pod and its deletion via TaintEvictionController.',
      POD_DELETION_DURATION_BUCKETS_SECONDS,
    ),
    pendingPodDeletions: gauge(
      'taint_eviction_controller_pending_pod_deletions',
      'Number of Pods whose deletion by TaintEvictionController is scheduled but not yet done.',
    ),
    failingPodDeletions: gauge(
      'taint_eviction_controller_failing_pod_deletions',
      'Number of Pods whose due deletion by TaintEvictionController failed at its last attempt and is being retried with backoff. node-lifecycle-controller\'s own metric, not kube-controller-manager\'s.',
    ),
  };

  const podGC: PodGCMetrics = {
    forceDeletePodsTotal: counter(
      'pod_gc_collector_force_delete_pods_total',
      'Number of pods that are being forcefully deleted since the Pod GC Controller started.',
      ['namespace', 'reason'],
    ),
    forceDeletePodErrorsTotal: counter(
      'pod_gc_collector_force_delete_pod_errors_total',
      'Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.',
      ['namespace', 'reason'],
    ),
    liveReadFailuresTotal: counter(
      'pod_gc_collector_live_read_failures_total',
      'Number of live reads before a force delete that returned neither a parsable object nor 404; the force delete was retried later.',
      ['resource', 'reason'],
    ),
  };

  const forcedDetachesHelp = 'Number of times the A/D Controller performed a forced detach';
  const attachDetach: AttachDetachMetrics = {
    forcedDetaches: counter(LEGACY_FORCED_DETACHES_METRIC, forcedDetachesHelp, FORCED_DETACH_LABELS),
    liveReadFailuresTotal: counter(
      'attachdetach_controller_live_read_failures_total',
      'Number of live reads before a forced detach that returned neither a parsable object nor 404; the detach was retried later.',
      ['resource', 'reason'],
    ),
  };
  // Upstream 1.37.2's name, filled from the handle above at scrape time, so callers increment one
  // counter and the two names can never disagree.
  new Counter<'reason'>({
    name: FORCED_DETACHES_METRIC,
    help: forcedDetachesHelp,
    labelNames: FORCED_DETACH_LABELS,
    registers,
    async collect() {
      this.reset();
      for (const { labels, value } of (await attachDetach.forcedDetaches.get()).values) this.inc(labels, value);
    },
  });

  const leaderElection: LeaderElectionMetrics = {
    masterStatus: gauge(
      'leader_election_master_status',
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      ['name'],
    ),
    slowpathTotal: counter(
      'leader_election_slowpath_total',
      "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
      ['name'],
    ),
  };

  const nodeAffinity: NodeAffinityMetrics = {
    violatingPods: gauge('node_affinity_enforcer_violating_pods', "Number of pods whose during-execution node affinity does not match their node's labels now."),
    violations: counter('node_affinity_enforcer_violations_total', 'Number of during-execution node affinity violations seen; each starts a grace period.'),
    evictions: counter('node_affinity_enforcer_evictions_total', 'Number of evictions attempted for during-execution node affinity, by result.', ['result']),
    malformedRules: counter('node_affinity_enforcer_malformed_rules_total', 'Number of malformed during-execution node affinity rules reported; they are never enforced.'),
  };

  const buildInfo = gauge(
    'node_lifecycle_controller_build_info',
    'A metric with a constant \'1\' value labeled by version, git_commit, git_tree_state and node_version from which node-lifecycle-controller was built.',
    ['version', 'git_commit', 'git_tree_state', 'node_version'],
  );
  const build = opts.build ?? buildStamp();
  buildInfo.set({ version: PROGRAM_VERSION, git_commit: build.gitCommit, git_tree_state: build.gitTreeState, node_version: process.version }, 1);

  const secondActorActions = counter(
    'node_lifecycle_second_actor_actions_total',
    'Number of actions of another actor (kube-controller-manager or another copy of this program) that make this controller\'s decisions, seen while this process acts: NoExecute node taints, DisruptionTarget conditions, pod deletions and Events it did not write, by kind. node-lifecycle-controller\'s own metric.',
    ['kind'],
  );
  for (const kind of SECOND_ACTOR_KINDS) secondActorActions.inc({ kind }, 0);

  return {
    registry,
    secondActorActions,
    nodeCollector,
    taintEviction,
    podGC,
    attachDetach,
    leaderElection,
    nodeAffinity,
    workqueue: workQueueMetrics(registers),
    restClient: restClientMetrics(registers),
    buildInfo,
  };
}

/**
 * Registers the `workqueue_*` families. Upstream: component-base `metrics/prometheus/workqueue/metrics.go`
 * (names, help texts, buckets and the `name` label verbatim). The three gauges read the queues'
 * probes at scrape time instead of upstream's 500 ms `updateUnfinishedWorkLoop`, so the hot path
 * only increments a counter and observes two histograms per key.
 */
function workQueueMetrics(registers: Registry[]): WorkQueueMetricFamilies {
  const probes = new Map<string, () => WorkQueueGaugeValues>();
  const probeGauge = (name: string, help: string, pick: (v: WorkQueueGaugeValues) => number): Gauge<'name'> =>
    new Gauge<'name'>({
      name,
      help,
      labelNames: ['name'],
      registers,
      collect() {
        this.reset();
        for (const [queue, probe] of probes) this.set({ name: queue }, pick(probe()));
      },
    });
  const histogram = (name: string, help: string): Histogram<'name'> =>
    new Histogram<'name'>({ name, help, labelNames: ['name'], buckets: [...WORKQUEUE_DURATION_BUCKETS_SECONDS], registers });
  const depth = probeGauge('workqueue_depth', 'Current depth of workqueue', (v) => v.depth);
  const adds = new Counter<'name'>({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
  const queueDuration = histogram('workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested.');
  const workDuration = histogram('workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes.');
  const unfinishedWork = probeGauge(
    'workqueue_unfinished_work_seconds',
    "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    (v) => v.unfinishedWorkSeconds,
  );
  const longestRunningProcessor = probeGauge(
    'workqueue_longest_running_processor_seconds',
    'How many seconds has the longest running processor for workqueue been running.',
    (v) => v.longestRunningProcessorSeconds,
  );
  const retries = new Counter<'name'>({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers });
  const provider: WorkQueueMetricsProvider = {
    forQueue(name, probe): WorkQueueMetrics {
      // A queue created later under the same name (a restarted controller) takes the name over.
      probes.set(name, probe);
      // Series exist from the start, at 0, as client-go's `WithLabelValues` creates them.
      adds.inc({ name }, 0);
      retries.inc({ name }, 0);
      queueDuration.zero({ name });
      workDuration.zero({ name });
      const a = adds.labels({ name });
      const r = retries.labels({ name });
      const q = queueDuration.labels({ name });
      const w = workDuration.labels({ name });
      return { added: () => a.inc(), started: (s) => q.observe(s), finished: (s) => w.observe(s), retried: () => r.inc() };
    },
  };
  return { provider, depth, adds, queueDuration, workDuration, unfinishedWork, longestRunningProcessor, retries };
}

/**
 * Registers the `rest_client_*` families this controller can fill. Upstream: component-base
 * `metrics/prometheus/restclient/metrics.go` (names, help texts, labels and buckets verbatim).
 */
function restClientMetrics(registers: Registry[]): RestClientMetricFamilies {
  const requestsTotal = new Counter<'code' | 'method' | 'host'>({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers,
  });
  const requestDuration = new Histogram<'verb' | 'host'>({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: [...REST_CLIENT_DURATION_BUCKETS_SECONDS],
    registers,
  });
  const rateLimiterDuration = new Histogram<'verb' | 'host'>({
    name: 'rest_client_rate_limiter_duration_seconds',
    help: 'Client side rate limiter latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: [...REST_CLIENT_DURATION_BUCKETS_SECONDS],
    registers,
  });
  // Not upstream (client-go has no fallback from protobuf): the informers' wire codec, src/kube/wire.ts.
  const wireFallback = new Counter<'resource' | 'reason'>({
    name: 'node_lifecycle_controller_informer_wire_fallback_total',
    help: 'Number of times an informer fell back from protobuf to JSON, by resource and reason (refused, content-type, decode-error). Our own.',
    labelNames: ['resource', 'reason'],
    registers,
  });
  const wireMalformed = new Counter<'resource'>({
    name: 'node_lifecycle_controller_informer_wire_malformed_total',
    help: 'Number of objects an informer skipped because their protobuf did not decode, by resource. Our own.',
    labelNames: ['resource'],
    registers,
  });
  const sink: RestClientMetricsSink = {
    request(method, host, code, durationSeconds) {
      requestsTotal.inc({ code, method, host });
      requestDuration.observe({ verb: method, host }, durationSeconds);
    },
    rateLimiterWait(verb, host, waitSeconds) {
      rateLimiterDuration.observe({ verb, host }, waitSeconds);
    },
    wireFallback(resource, reason) {
      wireFallback.inc({ resource, reason });
    },
    wireMalformed(resource) {
      wireMalformed.inc({ resource });
    },
  };
  return { sink, requestsTotal, requestDuration, rateLimiterDuration, wireFallback, wireMalformed };
}
