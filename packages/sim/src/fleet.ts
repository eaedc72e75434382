/**
 * The kubelet fleet simulator: plays many kubelets against a real kube-apiserver.
 *
 * A {@link Fleet} registers Nodes across zones, renews each node's Lease and posts its NodeStatus
 * on the kubelet's schedule, creates pods of a configurable mix bound to those nodes and reports
 * them Running, confirms graceful pod deletions on live nodes, plays the CSI external-attacher for
 * its VolumeAttachments, and injects faults (power loss, heartbeat cuts, pressure, cordon,
 * graceful shutdown, zone outage). It contains no controller logic: it only does what kubelets
 * (and, for volumes, the attacher sidecar) would do.
 *
 * Scale: one heap-driven scheduler ({@link HeartbeatScheduler}) drives every heartbeat, and all
 * writes go through one bounded, prioritised queue (p-queue) so heartbeats overtake bulk creation.
 */
import PQueue from 'p-queue';
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../../../src/util/clock.js';
import { realClock } from '../../../src/util/clock.js';
import { apiStatusCode, apiStatusReason, describeError, isNotFound, type KubeClients } from '../../../src/kube/client.js';
import { toMicroTime, toPod, toVolumeAttachment, type Pod } from '../../../src/kube/objects.js';
import { silentLogger, type SimLogger } from './log.js';
import {
  DEFAULT_CSI_DRIVER,
  DEFAULT_POD_MIX,
  FLEET_LABEL,
  KUBELET_CONDITION_TYPES,
  NODE_LEASE_NAMESPACE,
  PRESSURE_CONDITIONS,
  assertDnsLabel,
  assignPodKinds,
  attachedStatusPatch,
  attacherFinalizer,
  boundPvStatusPatch,
  boundPvcStatusPatch,
  buildDaemonSet,
  buildLease,
  buildNode,
  buildPod,
  buildPv,
  buildPvc,
  buildVolumeAttachment,
  conditionToWire,
  defaultZoneNames,
  initialConditions,
  nodeIp,
  podIp,
  pressureCondition,
  readyCondition,
  runningPodStatusPatch,
  shutdownPodStatusPatch,
  simNodeName,
  simPodName,
  simVolumeFor,
  type PodKind,
  type PodMix,
  type PressureCondition,
  type SimCondition,
  type SimVolume,
} from './objects.js';
import { HeartbeatScheduler, SampleWindow, spreadStart, type HeartbeatKind, type LagSummary } from './schedule.js';
import { startListWatch, type ListWatchHandle, type WatchEventType } from './watch.js';
import { reuseConnections } from '../../../src/kube/client.js';
import { NodePressure, STATS_HOUSEKEEPING_INTERVAL_MS } from './evictionmanager.js';
import { KubeletServer, type KubeletEndpoint } from './kubeletserver.js';
import { evictionConfigFromKubeletConfiguration, type EvictionConfig } from '../../../src/kubelet/thresholds.js';

export type { PodKind, PodMix, PressureCondition } from './objects.js';
export { POD_KINDS, PRESSURE_CONDITIONS, FLEET_LABEL, POD_KIND_LABEL } from './objects.js';
export type { LagSummary } from './schedule.js';
export type { SimLogger } from './log.js';

/** Which heartbeats a live node sends: both, only its Lease, or only NodeStatus posts. */
export type HeartbeatMode = 'both' | 'lease-only' | 'status-only';

/** Options of {@link Fleet}. Durations are in the unit their name says. */
export interface FleetOptions {
  /**
   * API clients for the cluster. Their KubeConfig is patched in place to reuse connections
   * ({@link reuseConnections}), which also benefits other clients sharing it.
   */
  clients: KubeClients;
  /** Fleet prefix: node names are `${prefix}-<zone>-<i>`; every other object carries label `nlc.sim/fleet=<prefix>`. DNS label, ≤ 40 chars. */
  prefix: string;
  /** Namespace for pods, PVCs and DaemonSets; created (with its `default` ServiceAccount) if missing. Default `nlc-sim`. */
  namespace?: string;
  /** Zone count (names `zone-a`, `zone-b`, …) or explicit zone names. Default 3. */
  zones?: number | readonly string[];
  /** Nodes per zone. Default 10. */
  nodesPerZone?: number;
  /** Pods per node (0–110). Default 5. */
  podsPerNode?: number;
  /** Region label value. Default `region-1`. */
  region?: string;
  /** Lease `leaseDurationSeconds`, seconds. Default 40 (kubelet's `nodeLeaseDurationSeconds`). */
  leaseDurationSeconds?: number;
  /** Lease renew interval, ms. Default 10 000 (kubelet: 25 % of the 40 s lease duration). */
  leaseRenewIntervalMs?: number;
  /**
   * Period of unconditional NodeStatus posts, ms. Default 300 000 (5 min): kubelet computes status
   * every `nodeStatusUpdateFrequency` (10 s) but, with leases on, only PATCHes it when something
   * changed or `nodeStatusReportFrequency` (5 min) has passed. The simulator posts every change at
   * once, so this period plays the role of `nodeStatusReportFrequency`.
   */
  nodeStatusUpdateFrequencyMs?: number;
  /** Relative weights of pod kinds. Default one of each (see {@link DEFAULT_POD_MIX}). */
  podMix?: PodMix;
  /** `tolerationSeconds` of `tolerationSeconds` pods, seconds. Default 30. */
  tolerationSeconds?: number;
  /** CSI driver name of PVs and VolumeAttachments. Default `sim.csi.nlc.dev`. */
  csiDriver?: string;
  /** Delay before a live node's kubelet confirms a graceful pod deletion (delete with grace 0), ms. Default 1 000. */
  podTerminationDelayMs?: number;
  /**
   * Whether {@link Fleet.gracefulShutdown} deletes the pods it terminated. Default true.
   * Set false to leave them as Failed pods, which is what a real kubelet does (PodGC removes them).
   */
  shutdownDeletesPods?: boolean;
  /** Maximum concurrent writes for creating objects, faults and pod status. Default 32. */
  writeConcurrency?: number;
  /**
   * Maximum concurrent heartbeat writes (Lease renewals and status posts), kept apart from
   * {@link FleetOptions.writeConcurrency} so bulk work never delays a heartbeat. Real kubelets have
   * no shared limit at all; the cap only bounds a burst after an API server stall. Default 128.
   */
  heartbeatConcurrency?: number;
  /** How far back {@link Fleet.stats} looks, ms. Default 60 000. */
  statsWindowMs?: number;
  /** Time source. Default the process clock. */
  clock?: Clock;
  /** pino-compatible logger. Default silent. */
  logger?: SimLogger;
  /** Called with a one-line progress message at each phase of {@link Fleet.start} (for CLIs). */
  onProgress?: (message: string) => void;
  /** The simulated kubelets' eviction configuration (packages/sim/src/evictionmanager.ts). Default: the kubelet's defaults. */
  eviction?: EvictionConfig;
  /**
   * Serve each node's `/stats/summary` and `/configz` over HTTPS (packages/sim/src/kubeletserver.ts), one port per
   * node on this machine's address, which the node then reports as its InternalIP and kubelet port so
   * that the API server's node proxy reaches it. Default false (a port per node; large fleets skip it).
   */
  kubeletServer?: boolean;
}

/** What {@link Fleet.stats} reports. Lags and latencies are in milliseconds over the recent window. */
export interface FleetStats {
  nodes: number;
  liveNodes: number;
  /** pods the simulator currently sees in its namespace on fleet nodes */
  pods: number;
  /** successful Lease renewals since start */
  leaseRenewals: number;
  /** successful NodeStatus posts since start */
  statusPosts: number;
  /** API calls that failed after retries (heartbeats, pod status, faults) since start */
  errors: number;
  /** graceful pod deletions confirmed by the simulated kubelets */
  podDeletionsConfirmed: number;
  /** actual minus scheduled start of every heartbeat (Lease renewals and status posts), ms */
  heartbeatLagMs: LagSummary;
  /** the same, Lease renewals only, ms */
  leaseLagMs: LagSummary;
  /** the same, NodeStatus posts only, ms */
  statusLagMs: LagSummary;
  /** API round trip of heartbeat writes, ms */
  writeLatencyMs: LagSummary;
  /** heartbeats that came due while the previous one of the same node was still in flight, plus whole periods skipped */
  lateHeartbeats: number;
  /** writes waiting in the queue right now */
  queuedWrites: number;
  /** writes in flight right now */
  inFlightWrites: number;
  /** window of the lag summaries, ms */
  windowMs: number;
}

interface BeatState {
  inFlight: boolean;
  /** scheduled epoch ms of a heartbeat that came due while one was in flight */
  pendingAt: number | undefined;
}

interface SimNode {
  name: string;
  zone: string;
  index: number;
  uid: string | undefined;
  alive: boolean;
  deleted: boolean;
  shuttingDown: boolean;
  mode: HeartbeatMode;
  conditions: Map<string, SimCondition>;
  /** condition types changed since the last status post */
  dirty: Set<string>;
  /** CSI unique volume names attached to and in use on this node */
  volumes: Set<string>;
  volumesDirty: boolean;
  nextPodIp: number;
  beats: Record<HeartbeatKind, BeatState>;
}

interface PlannedPod {
  name: string;
  node: string;
  kind: PodKind;
  /** index of the pod on its node */
  slot: number;
  volume?: SimVolume;
  /** which of the fleet's DaemonSets owns it */
  daemonSetIndex?: number;
}

/** Within the heartbeat queue, Lease renewals (what node health is judged by) go before status posts. */
const PRIORITY_LEASE = 1;
const PRIORITY_STATUS = 0;
const PRIORITY_FAULT = 5;
const PRIORITY_BULK = 0;
const MAX_ATTEMPTS = 4;

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STRATEGIC_MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** True for errors worth retrying: resourceVersion conflicts, throttling, server errors, network errors. */
function isRetryable(err: unknown): boolean {
  const code = apiStatusCode(err);
  if (code === undefined) return true;
  if (code === 409) return apiStatusReason(err) !== 'AlreadyExists';
  return code === 429 || code >= 500;
}

const isAlreadyExists = (err: unknown): boolean => apiStatusCode(err) === 409 && apiStatusReason(err) !== 'Conflict';

function checkInt(what: string, v: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`${what} must be an integer between ${min} and ${max}, got ${v}`);
  }
  return v;
}

function checkPositiveMs(what: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${what} must be a positive number of milliseconds, got ${v}`);
  return v;
}

/** {@link FleetOptions} with every default applied and every value checked. Durations as named. */
export interface ResolvedFleetOptions {
  prefix: string;
  namespace: string;
  region: string;
  zones: string[];
  nodesPerZone: number;
  podsPerNode: number;
  podMix: PodMix;
  /** seconds */
  leaseDurationSeconds: number;
  leaseRenewIntervalMs: number;
  nodeStatusUpdateFrequencyMs: number;
  /** seconds */
  tolerationSeconds: number;
  csiDriver: string;
  podTerminationDelayMs: number;
  shutdownDeletesPods: boolean;
  writeConcurrency: number;
  heartbeatConcurrency: number;
  statsWindowMs: number;
}

/**
 * Applies defaults to fleet options and validates them without touching the cluster, so a CLI
 * can reject bad input before it loads a kubeconfig.
 * @returns the resolved options.
 * @throws {RangeError} for an invalid option (the message names it).
 */
export function resolveFleetOptions(options: Omit<FleetOptions, 'clients'>): ResolvedFleetOptions {
  const prefix = options.prefix;
  assertDnsLabel('fleet prefix', prefix, 40);
  const namespace = options.namespace ?? 'nlc-sim';
  assertDnsLabel('namespace', namespace);
  const region = options.region ?? 'region-1';
  assertDnsLabel('region', region);
  const zonesOpt = options.zones ?? 3;
  const zones = typeof zonesOpt === 'number' ? defaultZoneNames(checkInt('zone count', zonesOpt, 1, 1000)) : [...zonesOpt];
  if (zones.length === 0) throw new RangeError('at least one zone is required');
  if (new Set(zones).size !== zones.length) throw new RangeError(`zone names must be unique, got ${zones.join(',')}`);
  for (const z of zones) assertDnsLabel('zone name', z);
  const nodesPerZone = checkInt('nodes per zone', options.nodesPerZone ?? 10, 1, 100_000);
  const podsPerNode = checkInt('pods per node', options.podsPerNode ?? 5, 0, 110);
  const longest = simNodeName(prefix, zones.reduce((a, b) => (b.length > a.length ? b : a)), nodesPerZone - 1);
  if (longest.length > 63) throw new RangeError(`node name "${longest}" is longer than 63 characters; use a shorter prefix or zone names`);
  const podMix = options.podMix ?? DEFAULT_POD_MIX;
  assignPodKinds(podMix, podsPerNode > 0 ? 1 : 0);
  const csiDriver = options.csiDriver ?? DEFAULT_CSI_DRIVER;
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(csiDriver) || csiDriver.length > 63) {
    throw new RangeError(`CSI driver name "${csiDriver}" must be a DNS subdomain of at most 63 characters`);
  }
  return {
    prefix,
    namespace,
    region,
    zones,
    nodesPerZone,
    podsPerNode,
    podMix,
    leaseDurationSeconds: checkInt('lease duration (seconds)', options.leaseDurationSeconds ?? 40, 1),
    leaseRenewIntervalMs: checkPositiveMs('lease renew interval', options.leaseRenewIntervalMs ?? 10_000),
    nodeStatusUpdateFrequencyMs: checkPositiveMs('node status update frequency', options.nodeStatusUpdateFrequencyMs ?? 300_000),
    tolerationSeconds: checkInt('toleration seconds', options.tolerationSeconds ?? 30, 0),
    csiDriver,
    podTerminationDelayMs: Math.max(0, options.podTerminationDelayMs ?? 1000),
    shutdownDeletesPods: options.shutdownDeletesPods ?? true,
    writeConcurrency: checkInt('write concurrency', options.writeConcurrency ?? 32, 1, 1000),
    heartbeatConcurrency: checkInt('heartbeat concurrency', options.heartbeatConcurrency ?? 128, 1, 10_000),
    statsWindowMs: checkPositiveMs('stats window', options.statsWindowMs ?? 60_000),
  };
}

/**
 * A simulated kubelet fleet. Construct, `await start()`, inject faults, read `stats()`, then
 * `await stop()` (objects stay) or `await cleanup()` (objects go).
 *
 * Mirrors the kubelet's node-facing behaviour: `pkg/kubelet/kubelet_node_status.go`
 * (`registerWithAPIServer`, `syncNodeStatus`), `pkg/kubelet/nodelease/controller.go` (lease
 * renewal), `pkg/kubelet/status/status_manager.go` (pod status, deletion confirmation) and
 * `pkg/kubelet/nodeshutdown` (graceful shutdown); and the CSI external-attacher for VolumeAttachments.
 */
export class Fleet {
  readonly #clients: KubeClients;
  readonly #clock: Clock;
  readonly #log: SimLogger;
  readonly #progress: (message: string) => void;
  readonly #queue: PQueue;
  readonly #heartbeatQueue: PQueue;
  readonly #scheduler: HeartbeatScheduler;
  readonly #opts: ResolvedFleetOptions;
  readonly #zones: string[];
  readonly #nodes = new Map<string, SimNode>();
  readonly #plannedPods: PlannedPod[] = [];
  readonly #daemonSetUids: string[] = [];
  /** pods in the namespace bound to fleet nodes, by name (fed by create responses and the watch) */
  readonly #pods = new Map<string, Pod>();
  readonly #runningRequested = new Set<string>();
  readonly #confirming = new Set<string>();
  readonly #timers = new Set<TimerHandle>();
  readonly #watches: ListWatchHandle[] = [];
  readonly #lag: SampleWindow;
  readonly #leaseLag: SampleWindow;
  readonly #statusLag: SampleWindow;
  readonly #latency: SampleWindow;
  #started = false;
  #stopped = false;
  #leaseRenewals = 0;
  #statusPosts = 0;
  #errors = 0;
  #late = 0;
  #podDeletions = 0;
  /** The simulated kubelets' eviction managers (node-pressure eviction), started per node on first use. */
  readonly nodePressure: NodePressure;
  /** The kubelet endpoints (`/stats/summary`), when {@link FleetOptions.kubeletServer}. */
  #kubeletServer: KubeletServer | undefined;
  readonly #serveKubelets: boolean;

  /**
   * Validates the options and plans the fleet (no API calls).
   * @throws {RangeError} for an invalid option (the message names it).
   */
  constructor(options: FleetOptions) {
    const resolved = resolveFleetOptions(options);
    const { zones, nodesPerZone, podsPerNode, prefix } = resolved;
    this.#opts = resolved;
    this.#clients = options.clients;
    // Without this client-node 2.0.1 opens a new TLS connection per request (see src/kube/client.ts).
    reuseConnections(options.clients.kubeConfig);
    this.#clock = options.clock ?? realClock;
    this.#log = options.logger ?? silentLogger;
    this.#progress = options.onProgress ?? (() => undefined);
    this.#zones = zones;
    this.#queue = new PQueue({ concurrency: resolved.writeConcurrency });
    this.#heartbeatQueue = new PQueue({ concurrency: resolved.heartbeatConcurrency });
    this.#scheduler = new HeartbeatScheduler(this.#clock, (name, kind, at) => this.#onDue(name, kind, at));
    this.#lag = new SampleWindow(this.#opts.statsWindowMs);
    this.#leaseLag = new SampleWindow(this.#opts.statsWindowMs);
    this.#statusLag = new SampleWindow(this.#opts.statsWindowMs);
    this.#latency = new SampleWindow(this.#opts.statsWindowMs);
    this.nodePressure = new NodePressure({
      clients: options.clients, clock: this.#clock, logger: this.#log,
      config: options.eviction ?? evictionConfigFromKubeletConfiguration({}),
      setCondition: (node, type, on) => this.setCondition(node, type, on),
    });
    this.#serveKubelets = options.kubeletServer ?? false;

    let index = 0;
    for (const zone of zones) {
      for (let i = 0; i < nodesPerZone; i++) {
        const name = simNodeName(prefix, zone, i);
        this.#nodes.set(name, {
          name,
          zone,
          index: index++,
          uid: undefined,
          alive: false,
          deleted: false,
          shuttingDown: false,
          mode: 'both',
          conditions: new Map(),
          dirty: new Set(),
          volumes: new Set(),
          volumesDirty: false,
          nextPodIp: podsPerNode,
          beats: { lease: { inFlight: false, pendingAt: undefined }, status: { inFlight: false, pendingAt: undefined } },
        });
      }
    }
    const kinds = assignPodKinds(resolved.podMix, this.#nodes.size * podsPerNode);
    let k = 0;
    for (const node of this.#nodes.values()) {
      let daemonPods = 0;
      for (let slot = 0; slot < podsPerNode; slot++) {
        const kind = kinds[k++] as PodKind;
        const plan: PlannedPod = { name: simPodName(node.name, kind, slot), node: node.name, kind, slot };
        if (kind === 'pvc') {
          plan.volume = simVolumeFor(plan.name, node.name, this.#opts.csiDriver);
          node.volumes.add(plan.volume.uniqueName);
        }
        // A DaemonSet runs one pod per node, so a node's second daemon pod belongs to a second DaemonSet.
        if (kind === 'daemonSet') plan.daemonSetIndex = daemonPods++;
        this.#plannedPods.push(plan);
      }
    }
  }

  // -------------------------------------------------------------------------
  // Lifecycle
  // -------------------------------------------------------------------------

  /**
   * Creates the namespace (if needed), Nodes with full status, Leases, DaemonSets, PVCs, PVs,
   * VolumeAttachments and pods; reports the pods Running; starts heartbeats and the pod and
   * VolumeAttachment watches. Objects that already exist (a restarted simulator with the same
   * prefix) are adopted. Resolves once every pod has been reported Running.
   * @throws {Error} when called twice, or when some objects could not be created after retries
   *   (the message gives the count and the first error).
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error('Fleet.start() was already called');
    this.#started = true;
    const failures: unknown[] = [];
    const settle = async (tasks: Promise<unknown>[]): Promise<void> => {
      for (const r of await Promise.allSettled(tasks)) if (r.status === 'rejected') failures.push(r.reason);
    };
    const check = (): void => {
      if (failures.length > 0) {
        throw new Error(`sim start: ${failures.length} object(s) could not be created; first error: ${describeError(failures[0])}`);
      }
    };

    await this.#ensureNamespace();
    const nodes = [...this.#nodes.values()];
    if (this.#serveKubelets) await this.#startKubeletServer(nodes.map((n) => n.name));
    await settle(nodes.map((n) => this.#registerNode(n)));
    check();
    const now = this.#clock.now();
    for (const n of nodes) {
      n.alive = true;
      this.#scheduler.schedule(n.name, 'lease', spreadStart(now, n.index, nodes.length, this.#opts.leaseRenewIntervalMs), this.#opts.leaseRenewIntervalMs);
      this.#scheduler.schedule(
        n.name,
        'status',
        spreadStart(now, n.index, nodes.length, this.#opts.nodeStatusUpdateFrequencyMs),
        this.#opts.nodeStatusUpdateFrequencyMs,
      );
    }
    this.#log.info({ fleet: this.#opts.prefix, nodes: nodes.length }, 'sim nodes registered; heartbeats started');
    this.#progress(`registered ${nodes.length} nodes with leases; heartbeats started`);

    const daemonSets = this.#plannedPods.reduce((n, p) => Math.max(n, (p.daemonSetIndex ?? -1) + 1), 0);
    await settle(Array.from({ length: daemonSets }, (_, i) => this.#createDaemonSet(i)));
    check();
    const total = this.#plannedPods.length;
    let done = 0;
    let reported = 0;
    await settle(
      this.#plannedPods.map(async (p) => {
        await this.#createPod(p);
        done++;
        if (done === total || done - reported >= Math.max(500, total / 10)) {
          reported = done;
          this.#progress(`pods running: ${done}/${total}`);
        }
      }),
    );
    check();
    this.#log.info({ fleet: this.#opts.prefix, pods: this.#plannedPods.length }, 'sim pods running');

    this.#startWatches();
    await Promise.all(this.#watches.map((w) => w.synced));
  }

  /**
   * Stops every heartbeat, timer and watch, and waits for in-flight writes. Objects stay in the
   * cluster (nodes will go NotReady under a node lifecycle controller). Idempotent; never throws.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.nodePressure.stop();
    await this.#kubeletServer?.stop();
    this.#scheduler.stop();
    for (const w of this.#watches.splice(0)) w.stop();
    for (const t of this.#timers) t.cancel();
    this.#timers.clear();
    this.#queue.clear();
    this.#heartbeatQueue.clear();
    await Promise.all([this.#queue.onIdle(), this.#heartbeatQueue.onIdle()]);
  }

  /**
   * Stops the fleet, then deletes everything carrying its label: pods (grace period 0),
   * VolumeAttachments, PVCs and PVs (finalizers removed first, since no controller would), the
   * DaemonSets, the node Leases and the Nodes. The namespace is kept: with no namespace
   * controller running, a deleted namespace would stay Terminating forever.
   * @throws {Error} when a delete fails for a reason other than NotFound.
   */
  async cleanup(): Promise<void> {
    await this.stop();
    const labelSelector = `${FLEET_LABEL}=${this.#opts.prefix}`;
    const { core, storage, apps, coordination } = this.#clients;
    const namespace = this.#opts.namespace;
    const unfinalize = { metadata: { finalizers: null } };
    // Bounded like every other bulk write: thousands of finalizer patches must not flood the API server.
    const unfinalizeAll = (names: string[], patch: (name: string) => Promise<unknown>) =>
      Promise.all(names.map((name) => this.#write(`remove finalizers of ${name}`, () => this.#ignoreNotFound(patch(name)), PRIORITY_BULK)));
    await core.deleteCollectionNamespacedPod({ namespace, labelSelector, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0 } });
    const vas = await storage.listVolumeAttachment({ labelSelector });
    await unfinalizeAll(
      vas.items.map((va) => va.metadata?.name ?? ''),
      (name) => storage.patchVolumeAttachment({ name, body: unfinalize }, MERGE_PATCH),
    );
    await storage.deleteCollectionVolumeAttachment({ labelSelector });
    const pvcs = await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector });
    await unfinalizeAll(
      pvcs.items.map((c) => c.metadata?.name ?? ''),
      (name) => core.patchNamespacedPersistentVolumeClaim({ name, namespace, body: unfinalize }, MERGE_PATCH),
    );
    await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace, labelSelector });
    const pvs = await core.listPersistentVolume({ labelSelector });
    await unfinalizeAll(
      pvs.items.map((v) => v.metadata?.name ?? ''),
      (name) => core.patchPersistentVolume({ name, body: unfinalize }, MERGE_PATCH),
    );
    await core.deleteCollectionPersistentVolume({ labelSelector });
    await apps.deleteCollectionNamespacedDaemonSet({ namespace, labelSelector });
    await coordination.deleteCollectionNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, labelSelector });
    await core.deleteCollectionNode({ labelSelector });
    this.#pods.clear();
  }

  // -------------------------------------------------------------------------
  // Faults
  // -------------------------------------------------------------------------

  /**
   * Power loss: the node's Lease renewals and status posts stop at once; its pods are left as they are.
   * @throws {Error} for an unknown or deleted node.
   */
  killNode(name: string): void {
    const node = this.#node(name);
    node.alive = false;
    this.#scheduler.cancel(name, 'lease');
    this.#scheduler.cancel(name, 'status');
    this.#log.info({ node: name }, 'sim node killed');
  }

  /**
   * Power back on: posts Ready=True (`KubeletReady`) with a fresh heartbeat and renews the Lease at
   * once (each as the heartbeat mode allows), then resumes the periodic schedule. Pods on the node
   * that got a deletionTimestamp meanwhile are confirmed deleted, pending ones are started.
   * Resolves after the immediate heartbeats finished (errors are logged and counted, not thrown).
   * @throws {Error} for an unknown or deleted node.
   */
  async reviveNode(name: string): Promise<void> {
    const node = this.#node(name);
    node.alive = true;
    node.shuttingDown = false;
    this.#setCondition(node, readyCondition(true, this.#clock.now()));
    await this.#resumeHeartbeats(node);
    for (const pod of this.#pods.values()) if (pod.nodeName === name) this.#kubeletReact(pod);
    this.#log.info({ node: name }, 'sim node revived');
  }

  /**
   * Chooses which heartbeats a node sends. Switching a heartbeat back on sends it at once.
   * @throws {Error} for an unknown or deleted node, or an unknown mode.
   */
  async setHeartbeatMode(name: string, mode: HeartbeatMode): Promise<void> {
    if (mode !== 'both' && mode !== 'lease-only' && mode !== 'status-only') throw new Error(`unknown heartbeat mode "${String(mode)}"`);
    const node = this.#node(name);
    const before = node.mode;
    node.mode = mode;
    if (!node.alive) return;
    if (!this.#sends(node, 'lease')) this.#scheduler.cancel(name, 'lease');
    if (!this.#sends(node, 'status')) this.#scheduler.cancel(name, 'status');
    const resumeLease = this.#sends(node, 'lease') && before === 'status-only';
    const resumeStatus = this.#sends(node, 'status') && before === 'lease-only';
    await Promise.all([
      resumeLease ? this.#beatNowAndSchedule(node, 'lease') : undefined,
      resumeStatus ? this.#beatNowAndSchedule(node, 'status') : undefined,
    ]);
  }

  /**
   * Sets a pressure condition (or NetworkUnavailable) with the kubelet's reason and message, and
   * posts it at once when the node is alive and posting status.
   * @throws {Error} for an unknown or deleted node, or an unknown condition type.
   */
  async setCondition(name: string, type: PressureCondition, on: boolean): Promise<void> {
    if (!PRESSURE_CONDITIONS.includes(type)) throw new Error(`unknown condition "${String(type)}"; one of ${PRESSURE_CONDITIONS.join(', ')}`);
    const node = this.#node(name);
    this.#setCondition(node, pressureCondition(type, on, this.#clock.now()));
    if (node.alive && this.#sends(node, 'status')) await this.#beatNow(node, 'status');
  }

  /**
   * Reports Ready=False (`KubeletNotReady`, as a kubelet whose runtime or network plugin is down) or
   * Ready=True again, while the node keeps heartbeating as its mode allows; posts it at once when the
   * node is alive and posting status. A later {@link reviveNode} reports Ready=True.
   * @throws {Error} for an unknown or deleted node.
   */
  async setReady(name: string, ready: boolean): Promise<void> {
    const node = this.#node(name);
    this.#setCondition(node, readyCondition(ready, this.#clock.now()));
    if (node.alive && this.#sends(node, 'status')) await this.#beatNow(node, 'status');
  }

  /**
   * Cordons (`spec.unschedulable=true`) or uncordons the node, as `kubectl cordon` does.
   * @throws {Error} for an unknown or deleted node, or when the patch fails after retries.
   */
  async cordon(name: string, unschedulable = true): Promise<void> {
    this.#node(name);
    await this.#write(
      `cordon ${name}`,
      () => this.#clients.core.patchNode({ name, body: { spec: { unschedulable: unschedulable ? true : null } } }, MERGE_PATCH),
      PRIORITY_FAULT,
    );
  }

  /**
   * Graceful node shutdown, as the kubelet's node shutdown manager performs it:
   * 1. posts Ready=False, reason `KubeletNotReady`, message `node is shutting down`;
   * 2. terminates the node's pods: phase Failed, reason `Terminated`, message
   *    `Pod was terminated in response to imminent node shutdown.`, plus a `DisruptionTarget` condition;
   * 3. deletes those pods (unless `shutdownDeletesPods: false`);
   * 4. detaches its volumes cleanly: drops them from `volumesInUse`/`volumesAttached` and deletes
   *    the node's VolumeAttachments (the simulated external-attacher then removes its finalizer);
   * 5. powers off: heartbeats stop, as {@link killNode}.
   *
   * Deliberate difference from upstream: a real kubelet leaves the Failed pods for PodGC, and the
   * attach/detach controller (not the kubelet) deletes the VolumeAttachments once the volumes are
   * unmounted; the simulator does both itself so a shut-down node ends up clean.
   *
   * The NotReady status is posted even when the heartbeat mode cuts status posts.
   * @throws {Error} for an unknown, deleted or already powered-off node. API errors are logged and counted.
   */
  async gracefulShutdown(name: string): Promise<void> {
    const node = this.#node(name);
    if (!node.alive) throw new Error(`node "${name}" is powered off; only a running kubelet can shut down gracefully`);
    node.shuttingDown = true;
    this.#setCondition(node, readyCondition(false, this.#clock.now()));
    await this.#beatNow(node, 'status', true);
    const pods = [...this.#pods.values()].filter((p) => p.nodeName === name);
    await Promise.allSettled(pods.map((p) => this.#terminatePodForShutdown(p)));
    if (node.volumes.size > 0) {
      node.volumes.clear();
      node.volumesDirty = true;
      await this.#beatNow(node, 'status', true);
    }
    await this.#detachNodeVolumes(name);
    this.killNode(name);
    this.#log.info({ node: name, pods: pods.length }, 'sim node shut down gracefully');
  }

  /** Kills every node of `zone`. @throws {Error} for an unknown zone. */
  killZone(zone: string): void {
    for (const n of this.nodesInZone(zone)) this.killNode(n);
  }

  /** Revives every node of `zone`. @throws {Error} for an unknown zone. */
  async reviveZone(zone: string): Promise<void> {
    await Promise.all(this.nodesInZone(zone).map((n) => this.reviveNode(n)));
  }

  /**
   * Brings the pods of the live nodes back to the fleet's plan after a fault, so that one fleet can
   * carry several measured waves (the bench's limits scenario):
   * - a planned pod that is gone is created again and reported Running (its owner, a ReplicaSet
   *   or the DaemonSet, would replace it);
   * - a Running pod whose Ready condition is not True (the node lifecycle controller marked it
   *   NotReady while its node was Unknown) is reported Running and Ready again, as the kubelet's
   *   status manager writes its own status back (`pkg/kubelet/status/status_manager.go` `syncPod`).
   * Terminating pods and the pods of dead, deleted or shutting-down nodes are left alone: wait until
   * {@link terminatingPods} is 0 first.
   * @returns how many pods were created and how many reported Ready again.
   * @throws {Error} when some pods could not be written after retries (the count and the first error).
   */
  async restore(): Promise<{ created: number; readied: number }> {
    let created = 0;
    let readied = 0;
    const tasks: Promise<void>[] = [];
    for (const plan of this.#plannedPods) {
      const node = this.#nodes.get(plan.node);
      if (!node || node.deleted || !node.alive || node.shuttingDown) continue;
      const pod = this.#pods.get(plan.name);
      if (!pod) {
        tasks.push(this.#createPod(plan).then(() => void created++));
      } else if (pod.deletionTimestamp === undefined && pod.phase === 'Running' && pod.conditions.find((c) => c.type === 'Ready')?.status !== 'True') {
        tasks.push(this.#reportRunning(pod, node, plan.slot).then(() => void readied++));
      }
    }
    const failures = (await Promise.allSettled(tasks)).filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failures.length > 0) throw new Error(`sim restore: ${failures.length} pod(s) could not be written; first error: ${describeError(failures[0]?.reason)}`);
    this.#log.info({ fleet: this.#opts.prefix, created, readied }, 'sim pods restored');
    return { created, readied };
  }

  /** How many of the fleet's pods the simulator sees terminating (deletionTimestamp set, not yet gone). */
  terminatingPods(): number {
    let n = 0;
    for (const p of this.#pods.values()) if (p.deletionTimestamp !== undefined && this.#nodes.has(p.nodeName)) n++;
    return n;
  }

  /**
   * Stops the node's heartbeats and deletes its Node and Lease objects (its pods stay, as orphans).
   * @throws {Error} for an unknown or already deleted node, or when a delete fails after retries.
   */
  async deleteNode(name: string): Promise<void> {
    this.killNode(name);
    const node = this.#node(name);
    node.deleted = true;
    await this.#write(
      `delete node ${name}`,
      () => this.#ignoreNotFound(this.#clients.core.deleteNode({ name })),
      PRIORITY_FAULT,
    );
    await this.#write(
      `delete lease ${name}`,
      () => this.#ignoreNotFound(this.#clients.coordination.deleteNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE })),
      PRIORITY_FAULT,
    );
  }

  // -------------------------------------------------------------------------
  // Introspection
  // -------------------------------------------------------------------------

  /** Names of the fleet's (not deleted) nodes, zone by zone. */
  nodeNames(): string[] {
    return [...this.#nodes.values()].filter((n) => !n.deleted).map((n) => n.name);
  }

  /** The fleet's zone names. */
  zones(): string[] {
    return [...this.#zones];
  }

  /** Names of the (not deleted) nodes in `zone`. @throws {Error} for an unknown zone. */
  nodesInZone(zone: string): string[] {
    if (!this.#zones.includes(zone)) throw new Error(`unknown zone "${zone}"; zones are ${this.#zones.join(', ')}`);
    return [...this.#nodes.values()].filter((n) => n.zone === zone && !n.deleted).map((n) => n.name);
  }

  /** Zone of a fleet node. @throws {Error} for an unknown node. */
  zoneOf(name: string): string {
    const node = this.#nodes.get(name);
    if (!node) throw new Error(`unknown node "${name}"`);
    return node.zone;
  }

  /** True when the node is powered on (heartbeating as its mode allows). @throws {Error} for an unknown node. */
  isAlive(name: string): boolean {
    const node = this.#nodes.get(name);
    if (!node) throw new Error(`unknown node "${name}"`);
    return node.alive;
  }

  /** Names of the pods the simulator sees on `node` (including Terminating ones), sorted. */
  podsOn(node: string): string[] {
    return [...this.#pods.values()]
      .filter((p) => p.nodeName === node)
      .map((p) => p.name)
      .sort();
  }

  /** The fleet's namespace. */
  get namespace(): string {
    return this.#opts.namespace;
  }

  /** The fleet's prefix (value of the `nlc.sim/fleet` label). */
  get prefix(): string {
    return this.#opts.prefix;
  }

  /** Heartbeat counters and the simulator's own lag over the recent window. Never throws. */
  stats(): FleetStats {
    const now = this.#clock.now();
    const nodes = [...this.#nodes.values()].filter((n) => !n.deleted);
    return {
      nodes: nodes.length,
      liveNodes: nodes.filter((n) => n.alive).length,
      pods: [...this.#pods.values()].filter((p) => this.#nodes.has(p.nodeName)).length,
      leaseRenewals: this.#leaseRenewals,
      statusPosts: this.#statusPosts,
      errors: this.#errors,
      podDeletionsConfirmed: this.#podDeletions,
      heartbeatLagMs: this.#lag.summary(now),
      leaseLagMs: this.#leaseLag.summary(now),
      statusLagMs: this.#statusLag.summary(now),
      writeLatencyMs: this.#latency.summary(now),
      lateHeartbeats: this.#late + this.#scheduler.missed,
      queuedWrites: this.#queue.size + this.#heartbeatQueue.size,
      inFlightWrites: this.#queue.pending + this.#heartbeatQueue.pending,
      windowMs: this.#opts.statsWindowMs,
    };
  }

  // -------------------------------------------------------------------------
  // Internals: writes
  // -------------------------------------------------------------------------

  #node(name: string): SimNode {
    const node = this.#nodes.get(name);
    if (!node) throw new Error(`unknown node "${name}"`);
    if (node.deleted) throw new Error(`node "${name}" was deleted`);
    return node;
  }

  async #ignoreNotFound(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * Runs one API write through the bounded queue, retrying conflicts, throttling, server and
   * network errors with exponential backoff (100 ms, 200 ms, 400 ms). A final failure is logged,
   * counted and rethrown.
   * @param onStart called when the first attempt leaves the queue (heartbeat lag is measured there).
   */
  async #write<T>(what: string, fn: () => Promise<T>, priority: number, onStart?: () => void, queue = this.#queue): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await queue.add(
          () => {
            if (attempt === 1) onStart?.();
            return fn();
          },
          { priority },
        );
      } catch (err) {
        if (attempt < MAX_ATTEMPTS && isRetryable(err) && !this.#stopped) {
          this.#log.debug({ what, attempt, err: describeError(err) }, 'sim write failed; retrying');
          await this.#clock.sleep(100 * 2 ** (attempt - 1));
          continue;
        }
        if (!(err instanceof DOMException && err.name === 'AbortError')) {
          this.#errors++;
          this.#log.warn({ what, err: describeError(err) }, 'sim write failed');
        }
        throw err;
      }
    }
  }

  async #ensureNamespace(): Promise<void> {
    const { core } = this.#clients;
    const namespace = this.#opts.namespace;
    await this.#write(
      `create namespace ${namespace}`,
      () => this.#ignoreAlreadyExists(core.createNamespace({ body: { metadata: { name: namespace } } })),
      PRIORITY_BULK,
    );
    // No controller-manager runs to create it, and pods are rejected without it.
    await this.#write(
      `create serviceaccount ${namespace}/default`,
      () =>
        this.#ignoreAlreadyExists(
          core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' }, automountServiceAccountToken: false } }),
        ),
      PRIORITY_BULK,
    );
  }

  /** Where a node's simulated kubelet serves `/stats/summary`, when the fleet serves them. */
  kubeletEndpoint(node: string): KubeletEndpoint | undefined {
    return this.#kubeletServer?.endpoint(node);
  }

  async #startKubeletServer(nodes: readonly string[]): Promise<void> {
    const server = await KubeletServer.start({
      logger: this.#log,
      config: () => this.nodePressure.config,
      // The first request starts the node's eviction manager; its first stats refresh follows at once.
      summary: async (node) => {
        const manager = this.nodePressure.manager(node);
        // Wall time on purpose: this bounds a network request, whatever clock drives the fleet.
        const until = Date.now() + STATS_HOUSEKEEPING_INTERVAL_MS;
        while (!manager.summary() && Date.now() < until && !this.#stopped) await new Promise((r) => setTimeout(r, 100));
        return manager.summary();
      },
    });
    this.#kubeletServer = server;
    for (const n of nodes) await server.listen(n);
    this.#log.info({ fleet: this.#opts.prefix, address: server.address, nodes: nodes.length }, 'sim kubelet endpoints serving /stats/summary');
  }

  async #ignoreAlreadyExists(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  async #registerNode(node: SimNode): Promise<void> {
    const { core, coordination } = this.#clients;
    const now = this.#clock.now();
    for (const c of initialConditions(now)) node.conditions.set(c.type, c);
    const body = buildNode(
      {
        prefix: this.#opts.prefix,
        name: node.name,
        zone: node.zone,
        region: this.#opts.region,
        index: node.index,
        conditions: [...node.conditions.values()],
        volumes: [...node.volumes],
        ...(this.#kubeletServer ? { kubeletEndpoint: this.#kubeletServer.endpoint(node.name) } : {}),
      },
      now,
    );
    node.uid = await this.#write(
      `register node ${node.name}`,
      async () => {
        try {
          return (await core.createNode({ body })).metadata?.uid;
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          // Adopt a node left by an earlier run with this prefix: take over its status.
          const existing = await core.readNode({ name: node.name });
          await core.patchNodeStatus({ name: node.name, body: { status: body.status } }, STRATEGIC_MERGE_PATCH);
          return existing.metadata?.uid;
        }
      },
      PRIORITY_BULK,
    );
    const lease = buildLease(this.#opts.prefix, node.name, node.uid, this.#opts.leaseDurationSeconds, now);
    await this.#write(
      `create lease ${node.name}`,
      async () => {
        try {
          await coordination.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: lease });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          await this.#patchLease(node.name, now);
        }
      },
      PRIORITY_BULK,
    );
  }

  async #createDaemonSet(i: number): Promise<void> {
    const name = `${this.#opts.prefix}-ds-${i}`;
    const namespace = this.#opts.namespace;
    const body = buildDaemonSet(this.#opts.prefix, namespace, name);
    this.#daemonSetUids[i] = await this.#write(
      `create daemonset ${name}`,
      async () => {
        try {
          return (await this.#clients.apps.createNamespacedDaemonSet({ namespace, body })).metadata?.uid ?? '';
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          return (await this.#clients.apps.readNamespacedDaemonSet({ name, namespace })).metadata?.uid ?? '';
        }
      },
      PRIORITY_BULK,
    );
  }

  /** PVC, then the PV bound to it, both marked Bound, then the VolumeAttachment marked attached. */
  async #createVolume(plan: PlannedPod, vol: SimVolume): Promise<void> {
    const { core, storage } = this.#clients;
    const { prefix, namespace, csiDriver } = this.#opts;
    const pvc = buildPvc(prefix, namespace, vol);
    const pvcUid = await this.#write(
      `create pvc ${vol.pvcName}`,
      async () => {
        try {
          return (await core.createNamespacedPersistentVolumeClaim({ namespace, body: pvc })).metadata?.uid;
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          return (await core.readNamespacedPersistentVolumeClaim({ name: vol.pvcName, namespace })).metadata?.uid;
        }
      },
      PRIORITY_BULK,
    );
    const pv = buildPv(prefix, namespace, vol, csiDriver, pvcUid);
    await this.#write(`create pv ${vol.pvName}`, () => this.#ignoreAlreadyExists(core.createPersistentVolume({ body: pv })), PRIORITY_BULK);
    await this.#write(
      `bind pv ${vol.pvName}`,
      () => core.patchPersistentVolumeStatus({ name: vol.pvName, body: boundPvStatusPatch() }, MERGE_PATCH),
      PRIORITY_BULK,
    );
    await this.#write(
      `bind pvc ${vol.pvcName}`,
      () => core.patchNamespacedPersistentVolumeClaimStatus({ name: vol.pvcName, namespace, body: boundPvcStatusPatch() }, MERGE_PATCH),
      PRIORITY_BULK,
    );
    const va = buildVolumeAttachment(prefix, vol, csiDriver, plan.node);
    await this.#write(
      `create volumeattachment ${vol.attachmentName}`,
      () => this.#ignoreAlreadyExists(storage.createVolumeAttachment({ body: va })),
      PRIORITY_BULK,
    );
    await this.#write(
      `attach ${vol.attachmentName}`,
      () => storage.patchVolumeAttachmentStatus({ name: vol.attachmentName, body: attachedStatusPatch() }, MERGE_PATCH),
      PRIORITY_BULK,
    );
  }

  async #createPod(plan: PlannedPod): Promise<void> {
    const namespace = this.#opts.namespace;
    if (plan.volume) await this.#createVolume(plan, plan.volume);
    const dsIndex = plan.daemonSetIndex;
    const body = buildPod({
      prefix: this.#opts.prefix,
      namespace,
      name: plan.name,
      nodeName: plan.node,
      kind: plan.kind,
      tolerationSeconds: this.#opts.tolerationSeconds,
      ...(dsIndex !== undefined ? { daemonSet: { name: `${this.#opts.prefix}-ds-${dsIndex}`, uid: this.#daemonSetUids[dsIndex] ?? '' } } : {}),
      ...(plan.volume ? { pvcName: plan.volume.pvcName } : {}),
    });
    const created: V1Pod = await this.#write(
      `create pod ${plan.name}`,
      async () => {
        try {
          return await this.#clients.core.createNamespacedPod({ namespace, body });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          return await this.#clients.core.readNamespacedPod({ name: plan.name, namespace });
        }
      },
      PRIORITY_BULK,
    );
    const pod = toPod(created);
    if (!pod) throw new Error(`API server returned a malformed pod for ${plan.name}`);
    this.#pods.set(pod.name, pod);
    const node = this.#nodes.get(plan.node) as SimNode;
    if (pod.phase !== 'Running' && pod.deletionTimestamp === undefined) await this.#reportRunning(pod, node, plan.slot);
  }

  async #reportRunning(pod: Pod, node: SimNode, slot: number, priority = PRIORITY_BULK): Promise<void> {
    this.#runningRequested.add(pod.uid);
    await this.#write(
      `report pod ${pod.name} running`,
      () =>
        this.#clients.core.patchNamespacedPodStatus(
          {
            name: pod.name,
            namespace: pod.namespace,
            body: runningPodStatusPatch(pod.name, nodeIp(node.index), podIp(node.index, slot), this.#clock.now()),
          },
          MERGE_PATCH,
        ),
      priority,
    );
  }

  async #terminatePodForShutdown(pod: Pod): Promise<void> {
    const { core } = this.#clients;
    if (pod.phase !== 'Succeeded' && pod.phase !== 'Failed') {
      await this.#write(
        `terminate pod ${pod.name} for shutdown`,
        () =>
          this.#ignoreNotFound(
            core.patchNamespacedPodStatus(
              { name: pod.name, namespace: pod.namespace, body: shutdownPodStatusPatch(this.#clock.now()) },
              MERGE_PATCH,
            ),
          ),
        PRIORITY_FAULT,
      );
    }
    if (this.#opts.shutdownDeletesPods) await this.#forceDeletePod(pod.name, pod.namespace, pod.uid);
  }

  async #forceDeletePod(name: string, namespace: string, uid: string): Promise<void> {
    await this.#write(
      `delete pod ${name}`,
      async () => {
        try {
          await this.#clients.core.deleteNamespacedPod({
            name,
            namespace,
            gracePeriodSeconds: 0,
            body: { gracePeriodSeconds: 0, preconditions: { uid } },
          });
        } catch (err) {
          // Gone already, or replaced by a pod with the same name: nothing to confirm.
          const code = apiStatusCode(err);
          if (code !== 404 && code !== 409) throw err;
        }
      },
      PRIORITY_FAULT,
    );
  }

  async #detachNodeVolumes(nodeName: string): Promise<void> {
    const { storage } = this.#clients;
    let names: string[];
    try {
      const list = await this.#write(
        `list volumeattachments`,
        () => storage.listVolumeAttachment({ labelSelector: `${FLEET_LABEL}=${this.#opts.prefix}` }),
        PRIORITY_FAULT,
      );
      names = list.items.filter((va) => va.spec?.nodeName === nodeName).map((va) => va.metadata?.name ?? '');
    } catch {
      return;
    }
    await Promise.allSettled(
      names.map(async (name) => {
        await this.#write(`detach ${name}`, () => this.#ignoreNotFound(storage.deleteVolumeAttachment({ name })), PRIORITY_FAULT);
        await this.#releaseAttachment(name);
      }),
    );
  }

  /** The external-attacher's last step after ControllerUnpublish: drop its finalizer. */
  async #releaseAttachment(name: string): Promise<void> {
    const finalizer = attacherFinalizer(this.#opts.csiDriver);
    await this.#write(
      `release volumeattachment ${name}`,
      async () => {
        try {
          const va = await this.#clients.storage.readVolumeAttachment({ name });
          const rest = (va.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
          if (rest.length === (va.metadata?.finalizers ?? []).length) return;
          await this.#clients.storage.patchVolumeAttachment(
            { name, body: { metadata: { finalizers: rest.length ? rest : null, resourceVersion: va.metadata?.resourceVersion } } },
            MERGE_PATCH,
          );
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      },
      PRIORITY_FAULT,
    );
  }

  // -------------------------------------------------------------------------
  // Internals: heartbeats
  // -------------------------------------------------------------------------

  #sends(node: SimNode, kind: HeartbeatKind): boolean {
    return kind === 'lease' ? node.mode !== 'status-only' : node.mode !== 'lease-only';
  }

  #intervalOf(kind: HeartbeatKind): number {
    return kind === 'lease' ? this.#opts.leaseRenewIntervalMs : this.#opts.nodeStatusUpdateFrequencyMs;
  }

  #setCondition(node: SimNode, c: SimCondition): void {
    const prev = node.conditions.get(c.type);
    if (prev && prev.status === c.status && prev.reason === c.reason && prev.message === c.message) return;
    node.conditions.set(c.type, prev && prev.status === c.status ? { ...c, lastTransitionTime: prev.lastTransitionTime } : c);
    node.dirty.add(c.type);
  }

  #onDue(name: string, kind: HeartbeatKind, scheduledAt: number): void {
    const node = this.#nodes.get(name);
    if (!node || !node.alive || !this.#sends(node, kind)) {
      this.#scheduler.cancel(name, kind);
      return;
    }
    const beat = node.beats[kind];
    if (beat.inFlight) {
      // Like a kubelet's sequential loop, never overlap two writes of one kind for one node; run it right after.
      beat.pendingAt ??= scheduledAt;
      this.#late++;
      return;
    }
    void this.#beat(node, kind, scheduledAt);
  }

  /** Heartbeats the node allows, sent at once and then on schedule again. */
  async #resumeHeartbeats(node: SimNode): Promise<void> {
    await Promise.all((['lease', 'status'] as const).filter((kind) => this.#sends(node, kind)).map((kind) => this.#beatNowAndSchedule(node, kind)));
  }

  async #beatNowAndSchedule(node: SimNode, kind: HeartbeatKind): Promise<void> {
    this.#scheduler.schedule(node.name, kind, this.#clock.now() + this.#intervalOf(kind), this.#intervalOf(kind));
    await this.#beatNow(node, kind);
  }

  /** One heartbeat now; waits for an in-flight one first so the new state is what gets written. */
  async #beatNow(node: SimNode, kind: HeartbeatKind, force = false): Promise<void> {
    for (let i = 0; i < 100 && node.beats[kind].inFlight; i++) await this.#clock.sleep(5);
    if (!force && (!node.alive || !this.#sends(node, kind))) return;
    await this.#beat(node, kind, this.#clock.now());
  }

  async #beat(node: SimNode, kind: HeartbeatKind, scheduledAt: number): Promise<void> {
    const beat = node.beats[kind];
    beat.inFlight = true;
    let startedAt = 0;
    try {
      await this.#write(
        `${kind} heartbeat ${node.name}`,
        () => (kind === 'lease' ? this.#renewLease(node) : this.#postStatus(node)),
        kind === 'lease' ? PRIORITY_LEASE : PRIORITY_STATUS,
        () => {
          startedAt = this.#clock.now();
          const lag = Math.max(0, startedAt - scheduledAt);
          this.#lag.record(startedAt, lag);
          (kind === 'lease' ? this.#leaseLag : this.#statusLag).record(startedAt, lag);
        },
        this.#heartbeatQueue,
      );
      const done = this.#clock.now();
      this.#latency.record(done, done - startedAt);
      if (kind === 'lease') this.#leaseRenewals++;
      else this.#statusPosts++;
    } catch {
      // #write logged and counted it; the next period tries again, as a kubelet would.
    } finally {
      beat.inFlight = false;
      const pending = beat.pendingAt;
      beat.pendingAt = undefined;
      if (pending !== undefined && !this.#stopped && node.alive && this.#sends(node, kind)) void this.#beat(node, kind, pending);
    }
  }

  async #patchLease(name: string, nowMs: number): Promise<void> {
    await this.#clients.coordination.patchNamespacedLease(
      {
        name,
        namespace: NODE_LEASE_NAMESPACE,
        body: { spec: { holderIdentity: name, leaseDurationSeconds: this.#opts.leaseDurationSeconds, renewTime: toMicroTime(nowMs) } },
      },
      MERGE_PATCH,
    );
  }

  /**
   * Deliberate difference from upstream: the kubelet's lease controller PUTs its cached Lease
   * (`pkg/kubelet/nodelease/controller.go` `retryUpdateLease`); the simulator sends a small merge
   * patch instead. The stored object and the watch event a controller sees are the same, and the
   * simulator saves a read or a full object per renewal. A missing Lease is re-created, as the
   * kubelet's `ensureLease` does.
   */
  async #renewLease(node: SimNode): Promise<void> {
    const now = this.#clock.now();
    try {
      await this.#patchLease(node.name, now);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const lease = buildLease(this.#opts.prefix, node.name, node.uid, this.#opts.leaseDurationSeconds, now);
      await this.#ignoreAlreadyExists(this.#clients.coordination.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: lease }));
    }
  }

  /** Strategic-merge patch of `nodes/status`: kubelet conditions with a fresh heartbeat, plus whatever changed. */
  async #postStatus(node: SimNode): Promise<void> {
    const now = this.#clock.now();
    const dirty = [...node.dirty];
    node.dirty.clear();
    const volumesDirty = node.volumesDirty;
    node.volumesDirty = false;
    const conditions = [...node.conditions.values()]
      .filter((c) => KUBELET_CONDITION_TYPES.has(c.type) || dirty.includes(c.type))
      .map((c) => conditionToWire(c, now));
    const status: Record<string, unknown> = { conditions };
    if (volumesDirty) {
      status['volumesInUse'] = [...node.volumes];
      status['volumesAttached'] = [...node.volumes].map((name) => ({ name, devicePath: '' }));
    }
    try {
      await this.#clients.core.patchNodeStatus({ name: node.name, body: { status } }, STRATEGIC_MERGE_PATCH);
    } catch (err) {
      for (const t of dirty) node.dirty.add(t);
      if (volumesDirty) node.volumesDirty = true;
      throw err;
    }
  }

  // -------------------------------------------------------------------------
  // Internals: kubelet pod handling and the external-attacher
  // -------------------------------------------------------------------------

  #startWatches(): void {
    const { core, storage, kubeConfig } = this.#clients;
    const namespace = this.#opts.namespace;
    const labelSelector = `${FLEET_LABEL}=${this.#opts.prefix}`;
    this.#watches.push(
      startListWatch({
        name: 'pods',
        kubeConfig,
        path: `/api/v1/namespaces/${namespace}/pods`,
        list: async () => {
          const l = await core.listNamespacedPod({ namespace });
          return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
        },
        onSync: (items) => {
          this.#pods.clear();
          for (const raw of items) this.#onPod('ADDED', raw);
        },
        onEvent: (type, raw) => this.#onPod(type, raw),
        clock: this.#clock,
        logger: this.#log,
      }),
      startListWatch({
        name: 'volumeattachments',
        kubeConfig,
        path: '/apis/storage.k8s.io/v1/volumeattachments',
        labelSelector,
        list: async () => {
          const l = await storage.listVolumeAttachment({ labelSelector });
          return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
        },
        onSync: (items) => {
          for (const raw of items) this.#onVolumeAttachment('ADDED', raw);
        },
        onEvent: (type, raw) => this.#onVolumeAttachment(type, raw),
        clock: this.#clock,
        logger: this.#log,
      }),
    );
  }

  #onPod(type: WatchEventType, raw: unknown): void {
    const pod = toPod(raw);
    if (!pod) {
      this.#log.warn({ event: type }, 'sim ignored a malformed pod');
      return;
    }
    if (!this.#nodes.has(pod.nodeName)) return;
    if (type === 'DELETED') {
      if (this.#pods.get(pod.name)?.uid === pod.uid) this.#pods.delete(pod.name);
      return;
    }
    this.#pods.set(pod.name, pod);
    this.#kubeletReact(pod);
  }

  /** What the node's kubelet would do about this pod: confirm a graceful deletion, or start it. */
  #kubeletReact(pod: Pod): void {
    const node = this.#nodes.get(pod.nodeName);
    if (!node || node.deleted || !node.alive || this.#stopped) return;
    if (pod.deletionTimestamp !== undefined) {
      this.#scheduleDeletionConfirm(pod);
    } else if ((pod.phase === '' || pod.phase === 'Pending') && !node.shuttingDown && !this.#runningRequested.has(pod.uid)) {
      const slot = node.nextPodIp++;
      this.#reportRunning(pod, node, slot, PRIORITY_FAULT).catch(() => undefined);
    }
  }

  #scheduleDeletionConfirm(pod: Pod): void {
    if (this.#confirming.has(pod.uid)) return;
    this.#confirming.add(pod.uid);
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(timer);
      void this.#confirmDeletion(pod.name, pod.uid);
    }, this.#opts.podTerminationDelayMs);
    this.#timers.add(timer);
  }

  /**
   * The kubelet's final step of a graceful deletion once containers stopped: delete with grace 0
   * (`pkg/kubelet/status/status_manager.go` `syncPod` → `canBeDeleted`). Skipped if the node died meanwhile.
   */
  async #confirmDeletion(name: string, uid: string): Promise<void> {
    const pod = this.#pods.get(name);
    const node = pod && this.#nodes.get(pod.nodeName);
    if (!pod || pod.uid !== uid || !node?.alive || this.#stopped) {
      this.#confirming.delete(uid);
      return;
    }
    try {
      await this.#forceDeletePod(name, pod.namespace, uid);
      this.#podDeletions++;
    } catch {
      this.#confirming.delete(uid);
    }
  }

  #onVolumeAttachment(type: WatchEventType, raw: unknown): void {
    if (type === 'DELETED') return;
    const va = toVolumeAttachment(raw);
    if (!va) {
      this.#log.warn({ event: type }, 'sim ignored a malformed VolumeAttachment');
      return;
    }
    if (va.attacher !== this.#opts.csiDriver || !this.#nodes.has(va.nodeName) || this.#stopped) return;
    const finalizers = (raw as { metadata?: { finalizers?: unknown } }).metadata?.finalizers;
    const held = Array.isArray(finalizers) && finalizers.includes(attacherFinalizer(this.#opts.csiDriver));
    if (va.deletionTimestamp !== undefined && held) {
      this.#releaseAttachment(va.name).catch(() => undefined);
    }
  }
}
