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
import { Watch } from '@kubernetes/client-node';
import { getJson, instrumentWatch, loadKubeConfig, makeClients, uncompressedWatchConfig, type KubeClients } from '../kube/client.js';
import { EventRecorder, type ObjectReference } from '../kube/events.js';
import type { NodeLifecycleController } from '../nodelifecycle/controller.js';
import { ApiWriteThrottle } from '../kube/throttle.js';
import { coordinationLeaseApi, defaultLeaderIdentity, leaseRequestTimeoutMs, LeaseElector } from '../kube/leaderelection.js';
import { createLogger, type Logger } from '../log/logger.js';
import { createMetrics, type Metrics } from '../metrics/registry.js';
import { startServing } from '../metrics/serving.js';
import { setWorkQueueMetricsProvider } from '../kube/workqueue.js';
import type { TaintEvictionController } from '../tainteviction/controller.js';
import type { PodGCController } from '../podgc/controller.js';
import type { ForceDetachController } from '../volumes/controller.js';
import type { NodeAffinityEnforcer } from '../nodeaffinity/controller.js';
import { pendingRealTimers, realClock, type Clock } from '../util/clock.js';
import { ShadowMode } from '../shadow/mode.js';
import type { ControllerConfig } from '../controllers/config.js';
import type { ControllerContext, ControllerKey } from '../controllers/context.js';
import { liveIO, liveSources, NO_OVERLAY, type LiveInformer } from '../controllers/live.js';
import { buildControllers, enabledControllers, neededSources, sightOf, type BuiltControllers, type RunnableController } from '../controllers/registry.js';
import { NodeJudgementBoard } from '../kube/judgements.js';
import { SecondActorCheck } from '../secondactor/check.js';
import { fieldManagerOf, WATCHED_COMPONENTS, type Decider, type SecondActorEvidence } from '../secondactor/decision.js';
import { EventTail } from '../secondactor/eventtail.js';
import { OwnWrites } from '../secondactor/ownwrites.js';
import { decideForServer, type ServerDecisions } from '../controllers/serverdecisions.js';
import { readServerVersion } from '../kube/serverversion.js';
import { parseControllerFlags } from './flags.js';

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

/**
 * Events a controller's throttle starts together once its bucket is empty and only Events wait
 * (src/kube/throttle.ts `eventBatch`). Deliberate difference from kube-controller-manager, which
 * paces each Event on its own token: it can only delay an Event, by at most this many tokens
 * (0.4 s at the default `--kube-api-qps` 20), and saves a wake of this process per Event
 * (docs/node-lifecycle.md, difference 26). At most {@link WRITES_IN_FLIGHT_PER_CONTROLLER}.
 */
export const EVENTS_PER_BATCH = 8;

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
  const clock = opts.clock ?? realClock;
  // Before anything builds a client or a queue: requests and queues report to this registry.
  const metrics = createMetrics();
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
  // In dry-run the gate stays shut: a write that got past the dry-run writers fails, unsent.
  const throttles = writeThrottles(config, clock, () => !shadow && (config.leaderElect ? (elector?.isLeader() ?? false) : true));

  // The informers the enabled controllers declared, then the controllers (src/controllers/registry.ts).
  const enabled = enabledControllers(config, log);
  const needed = neededSources(config, enabled);
  // What differs between Kubernetes minors: the configuration decides until the server's /version
  // is read (below, once serving; no request is sent before the port is bound), and the
  // controllers start only after that.
  let decisions: ServerDecisions = decideForServer(undefined, config);
  const watchList = (): boolean => decisions.watchList;
  const { sources, informers: all } = liveSources(clients, config, needed.sources, { log, clock, podLabels: needed.podLabels, watchList }, shadow ?? NO_OVERLAY);
  // The taints, conditions and deletions this process sends (the writers note them), so the
  // second-actor check can tell them from another actor's. None in --dry-run, which sends none.
  const own = shadow ? undefined : new OwnWrites(clock);
  const ctx: ControllerContext = {
    config,
    clock,
    log,
    metrics,
    identity,
    sources,
    ...sightOf(sources),
    judgements: new NodeJudgementBoard(),
    serverDecisions: () => decisions,
    io: (d) => {
      const live = liveIO({ clients, throttle: throttles.next(), identity, clock, log, ...(own ? { own } : {}) }, d);
      return shadow ? shadow.io(d, live) : live;
    },
  };
  const { byKey: controllers, list: running } = buildControllers(ctx, enabled);
  // Signs of kube-controller-manager (or another copy) still deciding what we decide, for as long as
  // this process acts. Not in --dry-run: there kube-controller-manager is meant to act. It only
  // counts, logs and warns (docs/second-actor.md).
  const secondActor = own
    ? new SecondActorCheck({
        identity,
        clock,
        log,
        events: liveIO({ clients, throttle: throttles.next(), identity, clock, log }, { eventSource: 'node-lifecycle-controller' }).events,
        actions: metrics.secondActorActions,
        own,
        // Not overlaid: without --dry-run the sources are the informers themselves.
        nodes: sources.nodes,
        pods: sources.pods,
        // Only the loops this process runs, on its nodes: upstream's others are meant to run.
        deciders: new Set(enabled.flatMap((d) => DECIDER_OF_CONTROLLER[d.name] ?? [])),
        scoped: config.nodeSelector.trim() !== '',
        eventWatches: (onEvent) => eventTails(clients, { clock, log, onEvent }),
        fieldManager: (ev) => readFieldManager(clients, ev),
      })
    : undefined;

  // Leader election (Lease, coordination.k8s.io/v1). A standby keeps its caches warm and takes no
  // action until it leads.
  const { leading, resolveLeading, lost, resolveLost } = leadershipSignals();
  let lostLeadership = false;
  void lost.then(() => {
    lostLeadership = true;
  });
  if (electionClients) {
    elector = leaseElector(config, { clients, electionClients, identity, clock, log, metrics, shadow: shadow !== undefined, onStartedLeading: resolveLeading, onStoppedLeading: resolveLost });
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
    debugState: () => ({ identity, leader: elector ? elector.getLeader() : identity, featureGates: config.featureGates, ...controllerViews(controllers), ...(shadow ? { shadow: shadow.state() } : {}), ...(secondActor ? { secondActor: secondActor.view() } : {}), informers: all.map((i) => i.stats()), timers: pendingRealTimers(), server: decisions }),
    log,
  }, { clock, sink: metrics.restClient.sink });
  log.info({ identity, securePort: server.securePort, metrics: config.metricsBindAddress ? `${config.metricsBindAddress} (port ${server.plainPort})` : 'off' }, 'node-lifecycle-controller starting');

  // A standby keeps its caches warm and takes no action until it leads.
  void elector?.run();
  for (const i of all) void i.start();
  const abort = new AbortController();
  let resolveFailed: (err: unknown) => void = () => undefined;
  const failed = new Promise<unknown>((r) => (resolveFailed = r));
  const versionRead = readServerVersion(clients, log, abort.signal);
  const started = (async () => {
    await Promise.all(all.map((i) => i.waitForSync(abort.signal)));
    synced = true;
    log.info({ nodes: sources.nodes.list().length, pods: sources.pods.list().length }, 'caches synced');
    decisions = decideForServer(await versionRead, config);
    logServerDecisions(log, decisions);
    await Promise.race([leading, lost]);
    if (lostLeadership || abort.signal.aborted) return;
    log.info({ identity }, 'starting controllers');
    for (const r of running) r.controller.start();
    secondActor?.start();
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
    ...controllers,
    started,
    identity,
    lost,
    failed,
    stop() {
      secondActor?.stop();
      stopping ??= shutdown({ abort, resolveLeading, elector, lostLeadership: () => lostLeadership, running, informers: all, server, throttles, log });
      return stopping;
    },
  };
}

/** The second-actor check's decider of each of our controllers that makes one (src/secondactor/decision.ts `inRemit`). */
const DECIDER_OF_CONTROLLER: Readonly<Record<string, Decider>> = {
  'node-lifecycle-controller': 'node-lifecycle',
  'taint-eviction-controller': 'taint-eviction',
  'pod-garbage-collector-controller': 'pod-gc',
};

/**
 * The second-actor check's Event watches: one store-less watch (src/secondactor/eventtail.ts) per
 * deciding source, from "now", through the controller's KubeConfig and request metrics.
 * @returns the watches, not started. Never throws.
 */
function eventTails(clients: KubeClients, deps: { clock: Clock; log: Logger; onEvent: (raw: unknown) => void }): EventTail[] {
  const kc = clients.kubeConfig;
  const watch = instrumentWatch(kc, new Watch(uncompressedWatchConfig(kc)));
  return WATCHED_COMPONENTS.map(
    (component) =>
      new EventTail({
        component,
        // One item is enough: the list's resourceVersion is where the watch starts.
        currentResourceVersion: async (fieldSelector, signal) => {
          const list = (await getJson(kc, '/api/v1/events', { fieldSelector, limit: 1 }, AbortSignal.any([signal, AbortSignal.timeout(60_000)]))) as { metadata?: { resourceVersion?: unknown } };
          const rv = list.metadata?.resourceVersion;
          if (typeof rv !== 'string' || rv === '') throw new Error('the Event list has no resourceVersion');
          return rv;
        },
        watch,
        onEvent: deps.onEvent,
        clock: deps.clock,
        log: deps.log,
      }),
  );
}

/**
 * Who owns the field a second-actor evidence is about: one GET of the Node or Pod (JSON, with its
 * `managedFields`), read by src/secondactor/decision.ts `fieldManagerOf`. At most once per kind and
 * minute (the check's report).
 * @returns `manager (operation at time)`, or undefined (the object is gone, or nothing owns the field).
 * @throws whatever the GET throws but a 404.
 */
async function readFieldManager(clients: KubeClients, ev: SecondActorEvidence): Promise<string | undefined> {
  const o = ev.object;
  const path = o.kind === 'Node' ? `/api/v1/nodes/${encodeURIComponent(o.name)}` : `/api/v1/namespaces/${encodeURIComponent(o.namespace ?? '')}/pods/${encodeURIComponent(o.name)}`;
  try {
    return fieldManagerOf(await getJson(clients.kubeConfig, path, {}, AbortSignal.timeout(10_000)), ev.kind);
  } catch (err) {
    if ((err as { code?: unknown }).code === 404) return undefined;
    throw err;
  }
}

/**
 * The stop order of {@link startController}: abort the start-up, fence every write, stop the
 * controllers (bounded by {@link CONTROLLER_STOP_BOUND_MS}), release the Lease (unless lost), stop
 * the informers, close the servers, stop the throttles.
 * @throws whatever releasing the Lease or closing the servers throws.
 */
async function shutdown(s: {
  abort: AbortController;
  resolveLeading: () => void;
  elector: LeaseElector | undefined;
  lostLeadership: () => boolean;
  running: readonly { controller: RunnableController }[];
  informers: readonly LiveInformer<unknown>[];
  server: { close(): Promise<void> };
  throttles: { stopAll(): Promise<void> };
  log: Logger;
}): Promise<void> {
  s.abort.abort();
  s.resolveLeading();
  // Fence first: no write starts after this point, whatever the controllers still do.
  s.elector?.stop();
  const stopControllers = async (): Promise<void> => {
    for (const r of s.running) {
      try {
        await r.controller.stop();
      } catch (err) {
        s.log.error({ err: String(err) }, 'a controller failed to stop');
      }
    }
  };
  // Bounded: a write still in flight must not keep the Lease from being released.
  await Promise.race([stopControllers(), new Promise((r) => setTimeout(r, CONTROLLER_STOP_BOUND_MS).unref())]);
  // Release the lease so a standby takes over in about one retry period (client-go's
  // ReleaseOnCancel). Skipped when leadership was lost: the lease is no longer ours.
  if (s.elector && !s.lostLeadership()) await s.elector.release();
  for (const i of s.informers) i.stop();
  await s.server.close();
  await s.throttles.stopAll();
}

/** Logs what was decided for this API server's minor (src/controllers/serverdecisions.ts), once. */
function logServerDecisions(log: Logger, d: ServerDecisions): void {
  log.info(
    {
      server: d.server?.gitVersion ?? 'unknown',
      watchList: `${d.watchList} (${d.reasons.watchList})`,
      disruptionTarget: `${d.disruptionConditions} (${d.reasons.disruptionConditions})`,
      leaseCircuitBreaker: `${d.leaseCircuitBreaker} (${d.reasons.leaseCircuitBreaker})`,
    },
    'decided for this API server',
  );
  // The double-action risk: kube-controller-manager running the same loops. Its flag spelling depends on its minor.
  log.info({ kubeControllerManager: d.kubeControllerManagerFlags ?? 'see --help', why: d.reasons.kubeControllerManagerFlags }, 'kube-controller-manager must run without the loops this program replaces');
}

/** Every controller's `/debug/state` section, in the order the page has always had (undefined when not running). */
function controllerViews(c: BuiltControllers): Record<ControllerKey, unknown> {
  return { nodeLifecycle: c.nodeLifecycle?.view(), taintEviction: c.taintEviction?.view(), podGC: c.podGC?.view(), forceDetach: c.forceDetach?.view(), nodeAffinity: c.nodeAffinity?.view() };
}

/**
 * One write throttle per controller, as kube-controller-manager gives each controller its own
 * client (ClientBuilder) and so its own --kube-api-qps/--kube-api-burst budget. All share `canWrite`,
 * the fence every controller write passes just before it is sent.
 * @returns `next`: a new throttle; `stopAll`: stops every throttle handed out. Never throws.
 */
function writeThrottles(config: ControllerConfig, clock: Clock, canWrite: () => boolean): { next(): ApiWriteThrottle; stopAll(): Promise<void> } {
  const throttles: ApiWriteThrottle[] = [];
  return {
    next() {
      const t = new ApiWriteThrottle({ qps: config.kubeApiQps, burst: config.kubeApiBurst, canWrite, maxInFlight: WRITES_IN_FLIGHT_PER_CONTROLLER, eventBatch: EVENTS_PER_BATCH, clock });
      throttles.push(t);
      return t;
    },
    stopAll: async () => {
      await Promise.all(throttles.map((t) => t.stop()));
    },
  };
}

/** The leadership promises: `leading` once this process leads (or runs without election), `lost` once it lost the Lease after holding it. */
function leadershipSignals(): { leading: Promise<void>; resolveLeading: () => void; lost: Promise<void>; resolveLost: () => void } {
  let resolveLeading: () => void = () => undefined;
  const leading = new Promise<void>((r) => (resolveLeading = r));
  let resolveLost: () => void = () => undefined;
  const lost = new Promise<void>((r) => (resolveLost = r));
  return { leading, resolveLeading, lost, resolveLost };
}

/**
 * Builds (does not run) the leader elector; its settings are checked here, before the metrics
 * server binds, and it campaigns only after.
 * @param deps `electionClients`: the election's own clients (their own connection and timeouts);
 *   `shadow`: a shadow writes its Lease and nothing else, so no LeaderElection Events either.
 * @throws {RangeError} when the election durations are invalid.
 * Upstream analogue: kube-controller-manager's `leaderElectAndRun` (client-go `leaderelection.NewLeaderElector`).
 */
function leaseElector(
  config: ControllerConfig,
  deps: {
    clients: ReturnType<typeof makeClients>;
    electionClients: ReturnType<typeof makeClients>;
    identity: string;
    clock: Clock;
    log: Logger;
    metrics: Metrics;
    shadow: boolean;
    onStartedLeading: () => void;
    onStoppedLeading: () => void;
  },
): LeaseElector {
  const { clients, electionClients, identity, clock, log, metrics } = deps;
  // Election events bypass the fence: "stopped leading" must be recorded after the fence closed.
  const leaseEvents = new EventRecorder({
    clients,
    throttle: new ApiWriteThrottle({ qps: config.kubeApiQps, burst: config.kubeApiBurst, clock }),
    component: config.leaderElectResourceName,
    host: identity,
    clock,
    log,
  });
  const e: LeaseElector = new LeaseElector({
    api: coordinationLeaseApi(electionClients.coordination, { kubeConfig: electionClients.kubeConfig, clock }),
    name: config.leaderElectResourceName,
    namespace: config.leaderElectResourceNamespace,
    identity,
    leaseDurationMs: config.leaderElectLeaseDuration,
    renewDeadlineMs: config.leaderElectRenewDeadline,
    retryPeriodMs: config.leaderElectRetryPeriod,
    clock,
    log,
    onStartedLeading: () => {
      log.info({ identity }, 'became leader');
      deps.onStartedLeading();
    },
    onStoppedLeading: () => {
      log.error({ identity }, 'leader election lost: every write is fenced; exiting so the Deployment restarts us');
      deps.onStoppedLeading();
    },
    onNewLeader: (holder) => log.info({ leader: holder }, 'new leader elected'),
    setLeaderStatus: (name, status) => metrics.leaderElection.masterStatus.set({ name }, status),
    onSlowPath: (name, n) => metrics.leaderElection.slowpathTotal.inc({ name }, n),
    onEvent: (reason, message) => {
      const meta = e.getLeaseMeta();
      if (!meta || deps.shadow) return;
      const ref: ObjectReference = { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', name: meta.name, namespace: meta.namespace };
      if (meta.uid) ref.uid = meta.uid;
      leaseEvents.record(ref, 'Normal', reason, message);
    },
  });
  return e;
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
