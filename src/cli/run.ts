// Why this file is over 500 lines: it is the start-up wiring of every informer, controller, writer, the elector and the servers, in one startController whose order is the content (everything that can fail runs before the process campaigns); split candidate: per-controller wiring functions.
/**
 * `node-lifecycle-controller run`: wires informers → controllers → writers, serves metrics and
 * health, and handles signals. This is the I/O shell; every decision lives in the controllers'
 * pure cores.
 *
 * Startup order mirrors kube-controller-manager: parse flags, load the kubeconfig, bind the metrics
 * server, and only then campaign for the Lease (`Run` serves before `leaderElectAndRun`). So any
 * start-up failure (bad flags, an unreadable kubeconfig, a port in use) exits non-zero before this
 * process could hold the Lease. Then start informers, wait until every cache has synced (no action
 * before that), and start the enabled controllers once leading. A leader whose controllers fail to
 * start, or that hits an uncaught error, releases the Lease and exits 1 (kube-controller-manager
 * 1.37 with `ControllerManagerReleaseLeaderElectionLockOnExit`: `startedLeading` cancels the
 * context, the lock is released, and the process exits 1).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { loadKubeConfig, makeClients } from '../kube/client.js';
import { EventRecorder, type ObjectReference } from '../kube/events.js';
import {
  DAEMON_SET_NAMESPACE_INDEX,
  daemonSetInformer,
  leaseInformer,
  nodeInformer,
  podInformer,
  POD_NODE_NAME_INDEX,
  pvcInformer,
  pvInformer,
  VOLUME_ATTACHMENT_NODE_NAME_INDEX,
  volumeAttachmentInformer,
} from '../kube/informerfactory.js';
import type { Lease, Node, Pod } from '../kube/objects.js';
import { ApiWriteThrottle } from '../kube/throttle.js';
import { coordinationLeaseApi, defaultLeaderIdentity, leaseRequestTimeoutMs, LeaseElector } from '../kube/leaderelection.js';
import { createLogger, type Logger } from '../log/logger.js';
import { createMetrics, type Metrics } from '../metrics/registry.js';
import { startServing } from '../metrics/serving.js';
import { setWorkQueueMetricsProvider } from '../kube/workqueue.js';
import { NodeLifecycleController } from '../nodelifecycle/controller.js';
import type { EventSink } from '../kube/types.js';
import { podSelectedByDaemonSet } from '../nodelifecycle/daemonsets.js';
import { NodeLifecycleWriter } from '../nodelifecycle/writer.js';
import { TaintEvictionController } from '../tainteviction/controller.js';
import { TAINT_EVICTION_CONTROLLER_NAME } from '../tainteviction/events.js';
import { TaintEvictionWriter } from '../tainteviction/writer.js';
import { PodGCController } from '../podgc/controller.js';
import { GC_CHECK_PERIOD_MS, ORPHAN_QUARANTINE_MS, POD_GC_CONTROLLER_NAME } from '../podgc/decision.js';
import { PodGCWriter } from '../podgc/writer.js';
import { ForceDetachController } from '../volumes/controller.js';
import { ATTACH_DETACH_EVENT_SOURCE, FORCE_DETACH_RESYNC_PERIOD_MS } from '../volumes/decision.js';
import { ForceDetachWriter } from '../volumes/writer.js';
import { NODE_AFFINITY_ENFORCER_NAME, NodeAffinityEnforcer } from '../nodeaffinity/controller.js';
import { AFFINITY_POD_NODE_INDEX, affinityPodInformer } from '../nodeaffinity/informer.js';
import { AffinityEvictionWriter } from '../nodeaffinity/writer.js';
import { realClock, type Clock } from '../util/clock.js';
import type { InformerLike } from '../shadow/overlay.js';
import { ShadowMode } from '../shadow/mode.js';
import { isControllerEnabled, parseControllerFlags, type ControllerConfig } from './flags.js';
import { nodeLifecycleConfigFrom } from './nodelifecycleconfig.js';

/**
 * How long (milliseconds) the node or lease informer may be without a watch stream before the
 * controller stops judging nodes. Reconnects take milliseconds; an API outage takes longer.
 */
const BLIND_AFTER_MS = 2000;

/** Adapts the EventRecorder to the controllers' narrow sink. */
function eventSink(recorder: EventRecorder): EventSink {
  return {
    record(ref, type, reason, message) {
      const r: ObjectReference = { kind: ref.kind, apiVersion: 'v1', name: ref.name, uid: ref.uid };
      if (ref.namespace !== undefined) r.namespace = ref.namespace;
      recorder.record(r, type, reason, message);
    },
  };
}

/** A running controller process, for tests and the demo. */
export interface RunningController {
  config: ControllerConfig;
  metrics: Metrics;
  /** The plain-HTTP metrics/health port (`--metrics-bind-address`, e.g. `127.0.0.1:0`); 0 when that is empty. */
  port: number;
  nodeLifecycle?: NodeLifecycleController;
  /** The HTTPS port (`--secure-port`); 0 when that is 0. */
  securePort: number;
  taintEviction?: TaintEvictionController;
  podGC?: PodGCController;
  forceDetach?: ForceDetachController;
  nodeAffinity?: NodeAffinityEnforcer;
  /** Resolves once every cache synced and (with election) this process leads, and the controllers started. */
  started: Promise<void>;
  /** This process's identity (`hostname_uuid`, the Lease holder identity with election on). */
  identity: string;
  /** Resolves if leadership is lost after being held; the program then exits non-zero. */
  lost: Promise<void>;
  /**
   * Resolves with the error if the controllers could not be started; the program then stops
   * (releasing the Lease) and exits 1.
   */
  failed: Promise<unknown>;
  /** Stops controllers, informers and the server. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Writes one controller keeps in flight at once. Deliberate difference from kube-controller-manager
 * (whose clients cap only the rate): in a failure wave the pod writes of dead nodes would otherwise
 * pile up in the API server, and the node writes that the priority queue sends first would still
 * wait behind all of them there (docs/node-lifecycle.md, difference 13).
 */
export const WRITES_IN_FLIGHT_PER_CONTROLLER = 16;

/** How long shutdown waits for the controllers' in-flight work before it releases the Lease, milliseconds. */
const CONTROLLER_STOP_BOUND_MS = 3000;

/**
 * Starts the controller from parsed configuration. Returns once the server listens and (with
 * `--leader-elect`) the campaign has begun; controllers start when the caches have synced and this
 * process leads (`started`). Everything that can fail at start-up (kubeconfig, the elector's
 * settings, the metrics address) is done before the campaign, so a throw means this process never
 * wrote the Lease and left nothing running.
 * @throws {Error} when the kubeconfig cannot be loaded, the election durations are invalid
 *   (RangeError), or the metrics address cannot be bound (e.g. EADDRINUSE).
 */
export async function startController(config: ControllerConfig, opts: { log?: Logger; clock?: Clock } = {}): Promise<RunningController> {
  const log = opts.log ?? createLogger({ level: config.logLevel, format: config.logFormat });
  const ioLog: Logger = log;
  const clock = opts.clock ?? realClock;
  // Before anything builds a client or a queue: requests and queues report to this registry.
  const metrics = createMetrics({ gitCommit: process.env['NLC_GIT_COMMIT'] ?? '' });
  setWorkQueueMetricsProvider(metrics.workqueue.provider);
  const clients = makeClients(loadKubeConfig(config.kubeconfig), {}, metrics.restClient.sink);
  // Like kube-controller-manager's separate leader-election client (resourcelock.NewFromKubeconfig):
  // its own KubeConfig, hence its own connection, so renewals never queue behind the controllers'
  // traffic on a busy shared (HTTP/2-multiplexed) connection; and a timeout of renewDeadline / 2
  // (at least 1 s) on each request, so a hung renewal cannot outlast the renew deadline. Loaded here,
  // before anything runs: an unreadable kubeconfig fails the start-up, not the campaign.
  const electionTimeoutMs = leaseRequestTimeoutMs(config.leaderElectRenewDeadline);
  const electionClients = config.leaderElect
    ? makeClients(loadKubeConfig(config.kubeconfig), { writeTimeoutMs: electionTimeoutMs, readTimeoutMs: electionTimeoutMs }, metrics.restClient.sink)
    : undefined;
  const identity = config.leaderElect ? defaultLeaderIdentity() : `${hostname()}_${randomUUID()}`;
  // --dry-run (src/shadow/): the controllers run on overlaid caches and dry-run writers; nothing is written.
  const shadow = config.dryRun ? new ShadowMode({ clock, log, clients, registry: metrics.registry }) : undefined;
  // Fencing: every controller write passes this gate just before it is sent. With election on, a
  // process writes only while its lease is fresh (src/kube/leaderelection.ts `isLeader`).
  let elector: LeaseElector | undefined;
  // One write throttle per controller, as kube-controller-manager gives each controller its own
  // client (ClientBuilder) and so its own --kube-api-qps/--kube-api-burst budget. All share the gate.
  const throttles: ApiWriteThrottle[] = [];
  const newThrottle = (): ApiWriteThrottle => {
    const t = new ApiWriteThrottle({
      qps: config.kubeApiQps,
      burst: config.kubeApiBurst,
      // In dry-run the gate stays shut: a write that got past the dry-run writers fails, unsent.
      canWrite: () => !shadow && (config.leaderElect ? (elector?.isLeader() ?? false) : true),
      maxInFlight: WRITES_IN_FLIGHT_PER_CONTROLLER,
      clock,
    });
    throttles.push(t);
    return t;
  };

  const informerOpts = { log: ioLog, clock };
  const realNodes = nodeInformer(clients, { ...informerOpts, ...(config.nodeSelector ? { labelSelector: config.nodeSelector } : {}) });
  const nodes: InformerLike<Node> = shadow ? shadow.nodeView(realNodes) : realNodes;
  const leases = leaseInformer(clients, informerOpts);
  shadow?.useLeases(leases);
  // Pod labels cost memory on every pod; only legacy eviction reads them (1.20's DaemonSet selector rule).
  const legacyEviction = !config.enableTaintManager && isControllerEnabled(config, 'node-lifecycle-controller');
  const realPods = podInformer(clients, { ...informerOpts, keepLabels: legacyEviction });
  const pods: InformerLike<Pod> = shadow ? shadow.podView(realPods) : realPods;
  const daemonSets = daemonSetInformer(clients, informerOpts);
  const all = [realNodes, leases, realPods, daemonSets] as InformerLike<unknown>[];

  // "Can see the cluster": the node and lease caches are synced and neither has been without a
  // watch stream for longer than a normal reconnect takes. Reacting to every reconnect would reset
  // every probe timestamp each time client-node ends a quiet watch (every 30 s).
  // Asked on every Lease event and for every node of every pass (issue 18): no array per call.
  const canSeeCluster = (): boolean =>
    nodes.hasSynced() && nodes.blindForMs() < BLIND_AFTER_MS && leases.hasSynced() && leases.blindForMs() < BLIND_AFTER_MS;

  let nodeLifecycle: NodeLifecycleController | undefined;
  if (isControllerEnabled(config, 'node-lifecycle-controller')) {
    const throttle = newThrottle();
    const recorder = new EventRecorder({ clients, throttle, component: 'node-controller', host: identity, clock, log: ioLog });
    const nlcWriter = new NodeLifecycleWriter(clients, throttle, clock);
    nodeLifecycle = new NodeLifecycleController({
      config: nodeLifecycleConfigFrom(config),
      clock,
      log: ioLog,
      caches: {
        nodes,
        leases,
        pods: {
          get: (k) => pods.get(k),
          list: () => pods.list(),
          podsOnNode: (n) => pods.byIndex(POD_NODE_NAME_INDEX, n),
        },
        daemonSets: {
          has: (k) => daemonSets.get(k) !== undefined,
          // 1.20 GetPodDaemonSets; the pods carry labels only in legacy mode, the only caller.
          ...(legacyEviction
            ? { selectsPod: (p: Pod) => podSelectedByDaemonSet({ namespace: p.namespace, labels: p.labels ?? {} }, daemonSets.byIndex(DAEMON_SET_NAMESPACE_INDEX, p.namespace)) }
            : {}),
        },
      },
      writes: shadow ? shadow.nodeLifecycleWrites() : nlcWriter,
      events: shadow ? shadow.events('node-lifecycle-controller') : eventSink(recorder),
      metrics: metrics.nodeCollector,
      canSeeCluster,
      ...(config.featureGates.NodeControllerLeaseCircuitBreaker
        ? { leaseCircuitBreaker: { readLease: (n: string) => nlcWriter.readNodeLease(n), cacheResourceVersion: () => leases.stats().resourceVersion } }
        : {}),
    });
    const nlc = nodeLifecycle;
    nodes.on('add', (n: Node) => nlc.nodeChanged(n.name));
    nodes.on('update', (_o: Node, n: Node) => nlc.nodeChanged(n.name));
    nodes.on('delete', (n: Node) => nlc.nodeDeleted(n.name));
    const onLease = (l: Lease): void => {
      if (nodes.get(l.name)) nlc.leaseChanged(l.name);
    };
    leases.on('add', onLease);
    leases.on('update', (_o: Lease, l: Lease) => onLease(l));
    pods.on('add', (p: Pod) => nlc.podChanged(p));
    pods.on('update', (o: Pod, p: Pod) => nlc.podChanged(p, o));
  }

  // <<wiring: taint-eviction-controller>> (src/tainteviction/; see issue 5)
  let taintEviction: TaintEvictionController | undefined;
  if (isControllerEnabled(config, 'taint-eviction-controller') && !config.enableTaintManager) {
    // As in 1.20, --enable-taint-manager=false means no NoExecute-based eviction at all.
    log.info({}, 'taint-eviction-controller not started: --enable-taint-manager=false');
  } else if (isControllerEnabled(config, 'taint-eviction-controller')) {
    const throttle = newThrottle();
    const recorder = new EventRecorder({ clients, throttle, component: TAINT_EVICTION_CONTROLLER_NAME, host: identity, clock, log: ioLog });
    const te = new TaintEvictionController({
      clock,
      log: ioLog,
      caches: {
        nodes,
        pods: { get: (k) => pods.get(k), list: () => pods.list(), podsOnNode: (n) => pods.byIndex(POD_NODE_NAME_INDEX, n) },
      },
      writes: shadow ? shadow.taintEvictionWrites() : new TaintEvictionWriter(clients, throttle, clock),
      events: shadow ? shadow.events('taint-eviction-controller') : eventSink(recorder),
      metrics: metrics.taintEviction,
      // A pod is only deleted while its node's taints, the pod itself and the node heartbeats (the
      // node lifecycle controller's view; see the sight hold in src/tainteviction/blindhold.ts) are current.
      canSeeCluster: () => ([nodes, pods, leases] as InformerLike<unknown>[]).every((i) => i.hasSynced() && i.isWatching()),
      options: { disruptionConditions: config.featureGates.PodDisruptionConditions, nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriod },
    });
    taintEviction = te;
    for (const i of [nodes, pods, leases] as InformerLike<unknown>[]) i.on('watching', () => te.sightChanged());
    nodes.on('add', (n: Node) => te.nodeChanged(n));
    nodes.on('update', (o: Node, n: Node) => te.nodeChanged(n, o));
    nodes.on('delete', (n: Node) => te.nodeDeleted(n));
    pods.on('add', (p: Pod) => te.podChanged(p));
    pods.on('update', (o: Pod, p: Pod) => te.podChanged(p, o));
    pods.on('delete', (p: Pod) => te.podDeleted(p));
  }

  // <<wiring: pod-garbage-collector-controller and attach-detach-controller>> (src/podgc/, src/volumes/; see issue 6)
  const scoped = config.nodeSelector.trim() !== '';
  const podsOnNode = (n: string): Pod[] => pods.byIndex(POD_NODE_NAME_INDEX, n);
  let podGC: PodGCController | undefined;
  if (isControllerEnabled(config, 'pod-garbage-collector-controller')) {
    const throttle = newThrottle();
    const recorder = new EventRecorder({ clients, throttle, component: POD_GC_CONTROLLER_NAME, host: identity, clock, log: ioLog });
    const gc = new PodGCController({
      config: { orphanQuarantineMs: ORPHAN_QUARANTINE_MS, sweepPeriodMs: GC_CHECK_PERIOD_MS, scoped },
      clock,
      log: ioLog,
      caches: { nodes, pods: { get: (k) => pods.get(k), list: () => pods.list(), podsOnNode } },
      writes: shadow ? shadow.podGCWrites() : new PodGCWriter(clients, throttle, clock),
      events: shadow ? shadow.events('pod-garbage-collector-controller') : eventSink(recorder),
      metrics: metrics.podGC,
      canSeeCluster: () => [nodes, pods].every((i) => i.hasSynced() && i.isWatching()),
    });
    podGC = gc;
    nodes.on('add', (n: Node) => gc.nodeChanged(n));
    nodes.on('update', (_o: Node, n: Node) => gc.nodeChanged(n));
    nodes.on('delete', (n: Node) => gc.nodeDeleted(n));
    pods.on('add', (p: Pod) => gc.podChanged(p));
    pods.on('update', (_o: Pod, p: Pod) => gc.podChanged(p));
  }
  let forceDetach: ForceDetachController | undefined;
  if (isControllerEnabled(config, 'persistentvolume-attach-detach-controller')) {
    // Only this controller needs attachments and claims; the program waits for their sync too.
    const realVas = volumeAttachmentInformer(clients, informerOpts);
    const vas = shadow ? shadow.volumeAttachmentView(realVas) : realVas;
    const pvcs = pvcInformer(clients, informerOpts);
    const pvs = pvInformer(clients, informerOpts);
    all.push(...([realVas, pvcs, pvs] as InformerLike<unknown>[]));
    const throttle = newThrottle();
    const recorder = new EventRecorder({ clients, throttle, component: ATTACH_DETACH_EVENT_SOURCE, host: identity, clock, log: ioLog });
    const fd = new ForceDetachController({
      config: {
        forceDetachTimeoutMs: config.forceDetachTimeout,
        disableForceDetachOnTimeout: config.disableForceDetachOnTimeout,
        resyncPeriodMs: FORCE_DETACH_RESYNC_PERIOD_MS,
        scoped,
      },
      clock,
      log: ioLog,
      caches: {
        nodes,
        pods: { podsOnNode },
        volumeAttachments: { get: (k) => vas.get(k), list: () => vas.list(), onNode: (n) => vas.byIndex(VOLUME_ATTACHMENT_NODE_NAME_INDEX, n) },
        pvcs,
        pvs,
      },
      writes: shadow ? shadow.forceDetachWrites() : new ForceDetachWriter(clients, throttle),
      events: shadow ? shadow.events('persistentvolume-attach-detach-controller') : eventSink(recorder),
      metrics: metrics.attachDetach,
      // "No running pod uses the volume" is only trusted while pods, claims and attachments are current.
      canSeeCluster: () => ([nodes, pods, vas, pvcs, pvs] as InformerLike<unknown>[]).every((i) => i.hasSynced() && i.isWatching()),
    });
    forceDetach = fd;
    nodes.on('add', (n: Node) => fd.nodeChanged(n));
    nodes.on('update', (_o: Node, n: Node) => fd.nodeChanged(n));
    nodes.on('delete', (n: Node) => fd.nodeChanged(n));
    pods.on('add', (p: Pod) => fd.podChanged(p));
    pods.on('update', (_o: Pod, p: Pod) => fd.podChanged(p));
    pods.on('delete', (p: Pod) => fd.podChanged(p));
    vas.on('add', (v) => fd.volumeAttachmentChanged(v));
    vas.on('update', (_o, v) => fd.volumeAttachmentChanged(v));
    vas.on('delete', (v) => fd.volumeAttachmentDeleted(v));
  }

  // <<wiring: node-affinity-enforcer>> (src/nodeaffinity/; issue 19). Off by default. It needs pod
  // annotations and affinity, which the shared slim Pod drops, so it has its own pod informer.
  let nodeAffinity: NodeAffinityEnforcer | undefined;
  if (isControllerEnabled(config, NODE_AFFINITY_ENFORCER_NAME)) {
    const realAffinityPods = affinityPodInformer(clients, informerOpts);
    const affinityPods = shadow ? shadow.extraPodView(realAffinityPods) : realAffinityPods;
    all.push(realAffinityPods as InformerLike<unknown>);
    const throttle = newThrottle();
    const recorder = new EventRecorder({ clients, throttle, component: NODE_AFFINITY_ENFORCER_NAME, host: identity, clock, log: ioLog });
    const na = new NodeAffinityEnforcer({
      clock,
      log: ioLog,
      caches: {
        nodes,
        pods: { get: (k) => affinityPods.get(k), list: () => affinityPods.list(), podsOnNode: (n) => affinityPods.byIndex(AFFINITY_POD_NODE_INDEX, n) },
      },
      evictor: shadow ? shadow.affinityEvictor(NODE_AFFINITY_ENFORCER_NAME) : new AffinityEvictionWriter(clients, throttle),
      events: shadow ? shadow.events(NODE_AFFINITY_ENFORCER_NAME) : eventSink(recorder),
      metrics: metrics.nodeAffinity,
      canSeeCluster: () => ([nodes, affinityPods] as InformerLike<unknown>[]).every((i) => i.hasSynced() && i.isWatching()),
      options: {
        graceMs: config.affinityViolationGrace,
        evictionRate: config.affinityEvictionRate,
        maxEvictionsPerNode: config.affinityMaxEvictionsPerNode,
        maxEvictionsTotal: config.affinityMaxEvictionsTotal,
      },
    });
    nodeAffinity = na;
    for (const i of [nodes, affinityPods] as InformerLike<unknown>[]) i.on('watching', () => na.sightChanged());
    nodes.on('add', (n: Node) => na.nodeChanged(n));
    nodes.on('update', (o: Node, n: Node) => na.nodeChanged(n, o));
    nodes.on('delete', (n: Node) => na.nodeChanged(n));
    affinityPods.on('add', (p) => na.podChanged(p));
    affinityPods.on('update', (_o, p) => na.podChanged(p));
    affinityPods.on('delete', (p) => na.podDeleted(p));
  }

  // Leader election (Lease, coordination.k8s.io/v1). A standby keeps its caches warm and takes no
  // action until it leads.
  let resolveLeading: () => void = () => undefined;
  const leading = new Promise<void>((r) => (resolveLeading = r));
  let resolveLost: () => void = () => undefined;
  const lost = new Promise<void>((r) => (resolveLost = r));
  let lostLeadership = false;
  void lost.then(() => {
    lostLeadership = true;
  });
  if (electionClients) {
    // Election events bypass the fence: "stopped leading" must be recorded after the fence closed.
    const leaseEvents = new EventRecorder({
      clients,
      throttle: new ApiWriteThrottle({ qps: config.kubeApiQps, burst: config.kubeApiBurst, clock }),
      component: config.leaderElectResourceName,
      host: identity,
      clock,
      log: ioLog,
    });
    // Built (and its settings checked) before the metrics server binds; it campaigns only after.
    const e: LeaseElector = new LeaseElector({
      api: coordinationLeaseApi(electionClients.coordination, { kubeConfig: electionClients.kubeConfig, clock }),
      name: config.leaderElectResourceName,
      namespace: config.leaderElectResourceNamespace,
      identity,
      leaseDurationMs: config.leaderElectLeaseDuration,
      renewDeadlineMs: config.leaderElectRenewDeadline,
      retryPeriodMs: config.leaderElectRetryPeriod,
      clock,
      log: ioLog,
      onStartedLeading: () => {
        log.info({ identity }, 'became leader');
        resolveLeading();
      },
      onStoppedLeading: () => {
        log.error({ identity }, 'leader election lost: every write is fenced; exiting so the Deployment restarts us');
        resolveLost();
      },
      onNewLeader: (holder) => log.info({ leader: holder }, 'new leader elected'),
      setLeaderStatus: (name, status) => metrics.leaderElection.masterStatus.set({ name }, status),
      onSlowPath: (name, n) => metrics.leaderElection.slowpathTotal.inc({ name }, n),
      onEvent: (reason, message) => {
        const meta = e.getLeaseMeta();
        // A shadow writes its Lease and nothing else: no LeaderElection Events either.
        if (!meta || shadow) return;
        const ref: ObjectReference = { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', name: meta.name, namespace: meta.namespace };
        if (meta.uid) ref.uid = meta.uid;
        leaseEvents.record(ref, 'Normal', reason, message);
      },
    });
    elector = e;
  } else {
    resolveLeading();
  }

  let synced = false;
  // Binding the port is the last thing that can fail at start-up: a replica that cannot serve
  // (EADDRINUSE: a second replica on the same host; unreadable serving certificates or review
  // kubeconfigs) throws here, before it ever campaigns.
  const server = await startServing(config, {
    metrics,
    isReady: () => synced,
    isHealthy: () => !(elector && lostLeadership),
    debugState: () => ({ identity, leader: elector ? elector.getLeader() : identity, nodeLifecycle: nodeLifecycle?.view(), taintEviction: taintEviction?.view(), podGC: podGC?.view(), forceDetach: forceDetach?.view(), nodeAffinity: nodeAffinity?.view(), ...(shadow ? { shadow: shadow.state() } : {}), informers: all.map((i) => i.stats()) }),
    log,
  }, { clock, sink: metrics.restClient.sink });
  log.info({ identity, securePort: server.securePort, metrics: config.metricsBindAddress ? `${config.metricsBindAddress} (port ${server.plainPort})` : 'off' }, 'node-lifecycle-controller starting');

  // A standby keeps its caches warm and takes no action until it leads.
  void elector?.run();
  for (const i of all) void i.start();
  const abort = new AbortController();
  let resolveFailed: (err: unknown) => void = () => undefined;
  const failed = new Promise<unknown>((r) => (resolveFailed = r));
  const started = (async () => {
    await Promise.all(all.map((i) => i.waitForSync(abort.signal)));
    synced = true;
    log.info({ nodes: nodes.list().length, pods: pods.list().length }, 'caches synced');
    await Promise.race([leading, lost]);
    if (lostLeadership || abort.signal.aborted) return;
    log.info({ identity }, 'starting controllers');
    nodeLifecycle?.start();
    taintEviction?.start();
    // <<start: other controllers>>
    podGC?.start();
    forceDetach?.start();
    nodeAffinity?.start();
  })();
  started.catch((err: unknown) => {
    if (abort.signal.aborted) return; // stopped while waiting for the caches: not a failure
    log.error({ err: String(err) }, 'controllers did not start: releasing the lease and exiting');
    resolveFailed(err);
  });

  let stopping: Promise<void> | undefined;
  return {
    config,
    metrics,
    port: server.plainPort,
    securePort: server.securePort,
    ...(nodeLifecycle ? { nodeLifecycle } : {}),
    ...(taintEviction ? { taintEviction } : {}),
    ...(podGC ? { podGC } : {}),
    ...(forceDetach ? { forceDetach } : {}),
    ...(nodeAffinity ? { nodeAffinity } : {}),
    started,
    identity,
    lost,
    failed,
    stop() {
      stopping ??= (async () => {
        abort.abort();
        resolveLeading();
        // Fence first: no write starts after this point, whatever the controllers still do.
        elector?.stop();
        const stopControllers = async (): Promise<void> => {
          for (const c of [nodeLifecycle, taintEviction, /* <<stop: other controllers>> */ podGC, forceDetach, nodeAffinity]) {
            try {
              await c?.stop();
            } catch (err) {
              log.error({ err: String(err) }, 'a controller failed to stop');
            }
          }
        };
        // Bounded: a write still in flight must not keep the Lease from being released.
        await Promise.race([stopControllers(), new Promise((r) => setTimeout(r, CONTROLLER_STOP_BOUND_MS).unref())]);
        // Release the lease so a standby takes over in about one retry period (client-go's
        // ReleaseOnCancel). Skipped when leadership was lost: the lease is no longer ours.
        if (elector && !lostLeadership) await elector.release();
        for (const i of all) i.stop();
        await server.close();
        await Promise.all(throttles.map((t) => t.stop()));
      })();
      return stopping;
    },
  };
}

/** Why `run` ends, and its exit code: 0 after a signal, 1 after lost leadership or a failure. */
type RunEnd = { why: 'signal' } | { why: 'lost' } | { why: 'failed'; err: unknown };

/** What {@link superviseController} needs of a started controller (tests pass a stub). */
export type Supervised = Pick<RunningController, 'lost' | 'failed' | 'stop'>;

/** Options of {@link superviseController}. */
export interface SuperviseOptions {
  log: Pick<Logger, 'error' | 'info'>;
  /** Where signals and uncaught errors are heard. Default `process`; tests pass an EventEmitter. */
  events?: NodeJS.EventEmitter;
  /** How long shutdown may take, milliseconds. Default {@link SHUTDOWN_BOUND_MS}. */
  shutdownBoundMs?: number;
}

/**
 * Starts the controller and runs it until it must end, then stops it within a bound.
 *
 * Exit rules: a start-up failure rejects before this process campaigns (`start` throws; nothing was
 * started, so nothing is stopped). SIGTERM/SIGINT stops the controllers, releases the Lease and
 * returns 0. Lost leadership returns 1 without touching the Lease. Controllers that fail to start
 * (`failed`), and any uncaught exception or unhandled rejection while running, stop everything,
 * release the Lease (when still held) and return 1, so a standby takes over in about one retry
 * period rather than a whole lease duration. Listeners are installed before `start` runs, so a
 * signal that arrives during start-up still ends in an orderly stop.
 * @param start starts the controller (production: {@link startController}).
 * @returns the exit code: 0 after a signal, 1 after lost leadership or a failure.
 * @throws whatever `start` throws.
 * Upstream analogue: kube-controller-manager `Run` (`startedLeading` cancels the context on a
 * controller error; the lock is released and the process exits 1).
 */
export async function superviseController(start: () => Promise<Supervised>, opts: SuperviseOptions): Promise<number> {
  const events = opts.events ?? process;
  const { log } = opts;
  let end: (e: RunEnd) => void = () => undefined;
  const ended = new Promise<RunEnd>((resolve) => (end = resolve));
  const onSignal = (): void => end({ why: 'signal' });
  const onFatal = (err: unknown): void => {
    log.error({ err: err instanceof Error ? (err.stack ?? err.message) : String(err) }, 'uncaught error: releasing the lease and exiting');
    end({ why: 'failed', err });
  };
  events.once('SIGTERM', onSignal);
  events.once('SIGINT', onSignal);
  events.on('uncaughtException', onFatal);
  events.on('unhandledRejection', onFatal);
  try {
    const running = await start();
    void running.lost.then(() => end({ why: 'lost' }));
    void running.failed.then((err) => end({ why: 'failed', err }));
    const e = await ended;
    log.info({ reason: e.why }, 'shutting down');
    // Finish or abandon in-flight work within a bound; a hung write must not block the exit.
    await Promise.race([running.stop(), new Promise((r) => setTimeout(r, opts.shutdownBoundMs ?? SHUTDOWN_BOUND_MS).unref())]);
    return e.why === 'signal' ? 0 : 1;
  } finally {
    events.off('SIGTERM', onSignal);
    events.off('SIGINT', onSignal);
    events.off('uncaughtException', onFatal);
    events.off('unhandledRejection', onFatal);
  }
}

/**
 * The `run` command: parse flags, start, and run until SIGTERM/SIGINT ({@link superviseController}
 * gives the exit rules).
 * @returns the exit code: 0 after a signal, 1 after lost leadership or a failure.
 * @throws {FlagError} / {HelpRequested} from flag parsing (the caller maps them to exit codes);
 *   any start-up error of {@link startController} (mapped to 1), always before the campaign.
 */
export async function runController(argv: string[]): Promise<number> {
  const config = await parseControllerFlags(argv);
  const log = createLogger({ level: config.logLevel, format: config.logFormat });
  return superviseController(() => startController(config, { log }), { log });
}

/** How long shutdown may wait for in-flight writes and the lease release, milliseconds. */
const SHUTDOWN_BOUND_MS = 5000;
