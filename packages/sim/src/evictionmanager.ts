/**
 * The simulated kubelet's eviction manager: per-pod usage profiles and the faults that drive them
 * (memory leak, log flood, fork bomb), a node's Summary built from them, and the kubelet's eviction
 * loop (pkg/kubelet/eviction/eviction_manager.go `Start` / `synchronize` / `evictPod` /
 * `waitForPodsCleanup`) over the pure decision step in nodepressure/manager.ts.
 *
 * I/O goes through a {@link KubeletPort} (list the node's pods, post pressure conditions, write the
 * evicted pod's status, record Events), so the loop runs on a FakeClock in unit tests and against
 * the API server through {@link apiKubeletPort}. Times are epoch ms; rates per second.
 */
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../../src/util/clock.js';
import type { KubeClients } from '../../../src/kube/client.js';
import { describeError, isNotFound } from '../../../src/kube/client.js';
import { retryWithBackoff } from '../../../src/kube/retry.js';
import { parseQuantity } from '../../../src/kube/quantity.js';
import { podRequest } from '../../../src/kubelet/ranking.js';
import type { FsLayout } from '../../../src/kubelet/ranking.js';
import type { PodStats, PressureConditionType, StarvedResource, Summary } from '../../../src/kubelet/signals.js';
import { EVICTION_MONITORING_PERIOD_MS, updateContainerFsThresholds, type EvictionConfig } from '../../../src/kubelet/thresholds.js';
import {
  EVICTION_REASON, chooseEviction, initialEvictionState, nodeLevelReclaimFor, nodeReclaimSatisfied, observe,
  type EvictionChoice, type EvictionManagerState, type NodeReclaimAction, type Observation,
} from './nodepressure/manager.js';
import { silentLogger, type SimLogger } from './log.js';

/** cadvisor's default `--housekeeping_interval`: how often container stats (and so the Summary's times) refresh, ms. */
export const STATS_HOUSEKEEPING_INTERVAL_MS = 10_000;

/** Annotation a pod can carry to set its usage at start: `memory=300Mi,ephemeral-storage=1Gi,inodes=5000,pids=20`; `memory=150%` is relative to the request. */
export const USAGE_ANNOTATION = 'nlc.sim/usage';
/** Annotation a pod can carry to start faulty: `memory-leak=20Mi,log-flood=50Mi,fork-bomb=10` (each per second). */
export const FAULT_ANNOTATION = 'nlc.sim/fault';

/** What a pod uses now, base units. `rootfs`/`logs` are its (one) container's writable layer and logs; `volumes` its emptyDir data. */
export interface PodUsage { workingSetBytes: number; rootfsBytes: number; logsBytes: number; volumeBytes: number; inodes: number; pids: number }

/** A fault that grows a pod's usage every second: memory leak (working set), log flood (log bytes and a log inode per MiB), fork bomb (processes). */
export type UsageFaultKind = 'memory-leak' | 'log-flood' | 'fork-bomb';
export const USAGE_FAULT_KINDS: readonly UsageFaultKind[] = ['memory-leak', 'log-flood', 'fork-bomb'];

/** The node's own resources and what is not pods' (system daemons, images, dead containers). Base units. */
export interface SimNodeResources {
  memoryCapacityBytes: number;
  /** system daemons' working set */
  systemWorkingSetBytes: number;
  nodefsCapacityBytes: number;
  nodefsInodes: number;
  /** used by the OS and images on nodefs (no dedicated image fs) */
  systemNodefsBytes: number;
  systemNodefsInodes: number;
  /** freed by image GC */
  unusedImageBytes: number;
  /** freed by container GC */
  deadContainerBytes: number;
  deadContainerInodes: number;
  /** /proc/sys/kernel/pid_max */
  maxPid: number;
  systemProcesses: number;
}

/** Defaults shaped like the simulator's Node (`memory: 16393220Ki`, `ephemeral-storage: 104845292Ki`) and a small pid_max, so a fork bomb is quick. */
export const DEFAULT_NODE_RESOURCES: Readonly<SimNodeResources> = {
  memoryCapacityBytes: 16393220 * 1024,
  systemWorkingSetBytes: 1024 ** 3,
  nodefsCapacityBytes: 104845292 * 1024,
  nodefsInodes: 6_553_600,
  systemNodefsBytes: 20 * 1024 ** 3,
  systemNodefsInodes: 400_000,
  unusedImageBytes: 4 * 1024 ** 3,
  deadContainerBytes: 1024 ** 3,
  deadContainerInodes: 20_000,
  maxPid: 32_768,
  systemProcesses: 400,
};

/** Default usage of a pod without a profile: its memory request (16Mi without one), 10Mi rootfs, 1Mi logs, 200 inodes, 5 processes. */
export function defaultPodUsage(pod: V1Pod): PodUsage {
  const mem = podRequest(pod, 'memory');
  return { workingSetBytes: mem > 0 ? mem : 16 * 1024 ** 2, rootfsBytes: 10 * 1024 ** 2, logsBytes: 1024 ** 2, volumeBytes: 0, inodes: 200, pids: 5 };
}

/**
 * Parses a usage profile (`memory=300Mi,ephemeral-storage=1Gi,inodes=5000,pids=20`; memory and
 * ephemeral-storage may be `NNN%` of the pod's request) into the usage it sets.
 * @throws Error naming the bad item
 */
export function parseUsageProfile(text: string, pod: V1Pod): Partial<PodUsage> {
  const out: Partial<PodUsage> = {};
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [key, value = ''] = item.split('=').map((s) => s.trim()) as [string, string | undefined];
    let v: number;
    try {
      v = value.endsWith('%') ? (Number(value.slice(0, -1)) / 100) * podRequest(pod, key) : parseQuantity(value);
    } catch {
      throw new Error(`bad usage "${item}": not a quantity`);
    }
    if (!Number.isFinite(v) || v < 0) throw new Error(`bad usage "${item}": must be a non-negative quantity`);
    switch (key) {
      case 'memory': out.workingSetBytes = v; break;
      case 'ephemeral-storage': out.rootfsBytes = v; break;
      case 'inodes': out.inodes = v; break;
      case 'pids': out.pids = v; break;
      default: throw new Error(`bad usage "${item}": one of memory, ephemeral-storage, inodes, pids`);
    }
  }
  return out;
}

/** Parses faults (`memory-leak=20Mi,log-flood=50Mi,fork-bomb=10`, each per second). @throws Error naming the bad item */
export function parseFaults(text: string): Map<UsageFaultKind, number> {
  const out = new Map<UsageFaultKind, number>();
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [key, value = ''] = item.split('=').map((s) => s.trim()) as [string, string | undefined];
    if (!USAGE_FAULT_KINDS.includes(key as UsageFaultKind)) throw new Error(`bad fault "${item}": one of ${USAGE_FAULT_KINDS.join(', ')}`);
    let rate: number;
    try {
      rate = parseQuantity(value.replace(/\/s$/, ''));
    } catch {
      throw new Error(`bad fault "${item}": rate must be a quantity per second`);
    }
    if (rate < 0) throw new Error(`bad fault "${item}": rate must be >= 0`);
    out.set(key as UsageFaultKind, rate);
  }
  return out;
}

/** The evicted pod's status, as eviction_manager.go `evictPod` sets it through `killPodFunc`. */
export interface EvictedStatus {
  phase: 'Failed';
  reason: typeof EVICTION_REASON;
  message: string;
  /** the DisruptionTarget condition (reason TerminationByKubelet) */
  condition: { type: 'DisruptionTarget'; status: 'True'; reason: 'TerminationByKubelet'; message: string };
}

/** What the eviction manager needs from its kubelet and the API. */
export interface KubeletPort {
  /** the node's pods that are not terminal (kubelet `GetActivePods`) */
  activePods(): Promise<V1Pod[]>;
  /** posts the node's MemoryPressure/DiskPressure/PIDPressure: True for the listed ones, False for the rest */
  setPressureConditions(conditions: readonly PressureConditionType[]): Promise<void>;
  /** records an Event (source component `kubelet`) on the pod or, without `pod`, on the node */
  recordEvent(pod: V1Pod | undefined, type: 'Normal' | 'Warning', reason: string, message: string, annotations?: Record<string, string>): Promise<void>;
  /**
   * kubelet `killPodFunc`: kills the pod with `gracePeriodSeconds` and writes `status` once its
   * containers are gone; resolves then (the eviction manager's wait for the pod's cleanup).
   */
  killPod(pod: V1Pod, gracePeriodSeconds: number, status: EvictedStatus): Promise<void>;
}

/** One synchronize's outcome, for logs, tests and `explain`. */
export interface SynchronizeResult {
  atMs: number;
  conditions: PressureConditionType[];
  observation: Observation;
  reclaimed?: NodeReclaimAction[];
  /** set when node-level reclaim ran and was enough */
  reclaimSatisfied?: boolean;
  choice?: EvictionChoice;
}

/** Options of {@link SimEvictionManager}. */
export interface SimEvictionManagerOptions {
  nodeName: string;
  config: EvictionConfig;
  clock: Clock;
  port: KubeletPort;
  resources?: Partial<SimNodeResources>;
  logger?: SimLogger;
  /**
   * Replaces the usage-profile stats with a given Summary source (upstream's `summaryProvider`),
   * called at every synchronize and again after node-level reclaim; used to run upstream's tests.
   */
  summaryProvider?: () => Summary;
  /** Filesystem layout (upstream's `DiskInfoProvider`); default: no dedicated image fs. */
  layout?: FsLayout;
  /** Replaces the simulated node-level reclaim (upstream's image and container GC mocks). */
  nodeReclaim?: (actions: readonly NodeReclaimAction[]) => void;
}

/**
 * One node's eviction manager. `start()` runs upstream's loop: synchronize; after an eviction wait
 * for the pod's cleanup (≤ 30 s) and synchronize again, else sleep 10 s. Stats refresh every 10 s
 * (cadvisor housekeeping), and `synchronize` only acts on thresholds whose stats are newer than at
 * its last run (`thresholdsUpdatedStats`), so at most one pod goes per stats refresh.
 */
export class SimEvictionManager {
  readonly nodeName: string;
  readonly config: EvictionConfig;
  /** The node's filesystems; the simulated node has none apart from nodefs unless a test says so. */
  readonly layout: FsLayout;
  readonly #clock: Clock;
  readonly #port: KubeletPort;
  readonly #log: SimLogger;
  readonly #res: SimNodeResources;
  readonly #summaryProvider: (() => Summary) | undefined;
  readonly #nodeReclaim: ((actions: readonly NodeReclaimAction[]) => void) | undefined;
  readonly #usage = new Map<string, PodUsage>();
  readonly #faults = new Map<string, Map<UsageFaultKind, number>>();
  readonly #pendingUsage = new Map<string, Partial<PodUsage>>();
  #pods: V1Pod[] = [];
  #state: EvictionManagerState = initialEvictionState();
  #summary: Summary | undefined;
  #statsAtMs = Number.NEGATIVE_INFINITY;
  #posted: PressureConditionType[] = [];
  #last: SynchronizeResult | undefined;
  #running = false;
  #stopped = false;
  #wake: (() => void) | undefined;

  constructor(o: SimEvictionManagerOptions) {
    this.nodeName = o.nodeName;
    this.layout = o.layout ?? { dedicatedImageFs: false, splitContainerImageFs: false };
    // eviction_manager.go synchronize: containerfs thresholds follow the filesystem layout, once.
    this.config = { ...o.config, thresholds: updateContainerFsThresholds(o.config.thresholds, this.layout.dedicatedImageFs, this.layout.splitContainerImageFs).thresholds };
    this.#clock = o.clock;
    this.#port = o.port;
    this.#log = o.logger ?? silentLogger;
    this.#res = { ...DEFAULT_NODE_RESOURCES, ...o.resources };
    this.#summaryProvider = o.summaryProvider;
    this.#nodeReclaim = o.nodeReclaim;
  }

  /** Sets a pod's usage (merged onto its current usage). */
  setUsage(podUid: string, usage: Partial<PodUsage>): void {
    const cur = this.#usage.get(podUid);
    // A pod not seen yet gets it on top of its initial usage at the next stats refresh.
    if (cur) this.#usage.set(podUid, { ...cur, ...usage });
    else this.#pendingUsage.set(podUid, { ...this.#pendingUsage.get(podUid), ...usage });
  }

  /** Starts (rate > 0) or stops (rate 0) a fault on a pod; the rate is per second (bytes, or processes). */
  setFault(podUid: string, kind: UsageFaultKind, ratePerSecond: number): void {
    const f = this.#faults.get(podUid) ?? new Map<UsageFaultKind, number>();
    if (ratePerSecond > 0) f.set(kind, ratePerSecond);
    else f.delete(kind);
    this.#faults.set(podUid, f);
  }

  /** The last stats snapshot as the kubelet's `/stats/summary` would serve it; undefined before the first synchronize. */
  summary(): Summary | undefined {
    return this.#summary;
  }

  /** The last synchronize (observations, conditions, ranking and decision), for `explain`. */
  lastResult(): SynchronizeResult | undefined {
    return this.#last;
  }

  /** Conditions the manager currently reports. */
  conditions(): PressureConditionType[] {
    return [...this.#state.nodeConditions];
  }

  /** Starts the loop (idempotent). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#loop();
  }

  /** Stops the loop after the current step. */
  stop(): void {
    this.#stopped = true;
    this.#wake?.();
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      let evicted = false;
      try {
        const r = await this.synchronize();
        evicted = r.choice?.victim !== undefined;
      } catch (err) {
        this.#log.warn({ node: this.nodeName, err: String(err) }, 'sim eviction manager: synchronize failed');
      }
      // eviction_manager.go Start: after an eviction the kill already waited for cleanup; loop at once.
      if (!evicted && !this.#stopped) await this.#sleep(EVICTION_MONITORING_PERIOD_MS);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = this.#clock.setTimeout(() => { this.#wake = undefined; resolve(); }, ms);
      this.#wake = () => { t.cancel(); this.#wake = undefined; resolve(); };
    });
  }

  /** cadvisor housekeeping: advance the faults to now and take a stats snapshot (time = now). */
  #refreshStats(nowMs: number, force: boolean): void {
    if (this.#summaryProvider) {
      this.#summary = this.#summaryProvider();
      return;
    }
    if (!force && nowMs - this.#statsAtMs < STATS_HOUSEKEEPING_INTERVAL_MS) return;
    const dt = this.#statsAtMs === Number.NEGATIVE_INFINITY ? 0 : (nowMs - this.#statsAtMs) / 1000;
    for (const pod of this.#pods) {
      const uid = pod.metadata?.uid ?? '';
      const u = this.#usage.get(uid) ?? this.#initialUsage(pod);
      const f = this.#faults.get(uid);
      if (f && dt > 0) {
        u.workingSetBytes += (f.get('memory-leak') ?? 0) * dt;
        const logBytes = (f.get('log-flood') ?? 0) * dt;
        u.logsBytes += logBytes;
        u.inodes += Math.floor(logBytes / 1024 ** 2);
        u.pids += Math.floor((f.get('fork-bomb') ?? 0) * dt);
      }
      this.#usage.set(uid, u);
    }
    this.#statsAtMs = nowMs;
    this.#summary = this.#buildSummary(nowMs);
  }

  #initialUsage(pod: V1Pod): PodUsage {
    const ann = pod.metadata?.annotations ?? {};
    let u = defaultPodUsage(pod);
    const profile = ann[USAGE_ANNOTATION];
    if (profile) {
      try {
        u = { ...u, ...parseUsageProfile(profile, pod) };
      } catch (err) {
        this.#log.warn({ pod: pod.metadata?.name, err: String(err) }, 'sim eviction manager: bad usage annotation ignored');
      }
    }
    const uid = pod.metadata?.uid ?? '';
    u = { ...u, ...this.#pendingUsage.get(uid) };
    this.#pendingUsage.delete(uid);
    const faults = ann[FAULT_ANNOTATION];
    if (faults && !this.#faults.has(uid)) {
      try {
        this.#faults.set(uid, parseFaults(faults));
      } catch (err) {
        this.#log.warn({ pod: pod.metadata?.name, err: String(err) }, 'sim eviction manager: bad fault annotation ignored');
      }
    }
    return u;
  }

  #buildSummary(nowMs: number): Summary {
    const t = new Date(nowMs).toISOString();
    const r = this.#res;
    let ws = r.systemWorkingSetBytes;
    let fsUsed = r.systemNodefsBytes + r.unusedImageBytes + r.deadContainerBytes;
    let inodesUsed = r.systemNodefsInodes + r.deadContainerInodes;
    let procs = r.systemProcesses;
    const pods: PodStats[] = [];
    for (const pod of this.#pods) {
      const uid = pod.metadata?.uid ?? '';
      const u = this.#usage.get(uid);
      if (!u) continue;
      ws += u.workingSetBytes;
      fsUsed += u.rootfsBytes + u.logsBytes + u.volumeBytes;
      inodesUsed += u.inodes;
      procs += u.pids;
      const container = pod.spec?.containers?.[0]?.name ?? 'app';
      pods.push({
        podRef: { name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', uid },
        startTime: t,
        containers: [{
          name: container, startTime: t, memory: { time: t, workingSetBytes: u.workingSetBytes },
          rootfs: { time: t, usedBytes: u.rootfsBytes, inodesUsed: Math.ceil(u.inodes / 2) },
          logs: { time: t, usedBytes: u.logsBytes, inodesUsed: Math.floor(u.inodes / 2) },
        }],
        memory: { time: t, workingSetBytes: u.workingSetBytes },
        'ephemeral-storage': { time: t, usedBytes: u.rootfsBytes + u.logsBytes + u.volumeBytes, inodesUsed: u.inodes },
        process_stats: { process_count: u.pids },
      });
    }
    const memAvailable = Math.max(0, r.memoryCapacityBytes - ws);
    const fs = {
      time: t, capacityBytes: r.nodefsCapacityBytes, usedBytes: fsUsed, availableBytes: Math.max(0, r.nodefsCapacityBytes - fsUsed),
      inodes: r.nodefsInodes, inodesUsed, inodesFree: Math.max(0, r.nodefsInodes - inodesUsed),
    };
    return {
      node: {
        nodeName: this.nodeName,
        memory: { time: t, availableBytes: memAvailable, workingSetBytes: Math.min(ws, r.memoryCapacityBytes) },
        fs,
        // No dedicated image filesystem: the kubelet reports nodefs as imageFs and containerFs.
        runtime: { imageFs: { ...fs }, containerFs: { ...fs } },
        rlimit: { time: t, maxpid: r.maxPid, curproc: Math.min(procs, r.maxPid) },
        systemContainers: [],
      },
      pods,
    };
  }

  /** Runs the node-level reclaim actions on the simulated node. */
  #reclaimNodeLevel(actions: readonly NodeReclaimAction[]): void {
    if (this.#nodeReclaim) {
      this.#nodeReclaim(actions);
      return;
    }
    for (const a of actions) {
      if (a === 'deleteUnusedImages') this.#res.unusedImageBytes = 0;
      if (a === 'deleteAllUnusedContainers') {
        this.#res.deadContainerBytes = 0;
        this.#res.deadContainerInodes = 0;
      }
    }
  }

  /**
   * One eviction_manager.go `synchronize`: refresh the pod list and (every 10 s) the stats; observe;
   * post condition changes; if a threshold is past its grace with fresh stats, reclaim node-level
   * resources first, and if that is not enough evict the first pod of the ranking that is not
   * critical: Event `Evicted`, wait the grace period, then status Failed/Evicted.
   */
  async synchronize(): Promise<SynchronizeResult> {
    this.#pods = await this.#port.activePods();
    const live = new Set(this.#pods.map((p) => p.metadata?.uid ?? ''));
    for (const uid of this.#usage.keys()) if (!live.has(uid)) this.#usage.delete(uid);
    const now = this.#clock.now();
    this.#refreshStats(now, false);
    const summary = this.#summary as Summary;
    const observation = observe(this.config, this.#state, summary, now);
    this.#state = observation.state;
    const result: SynchronizeResult = { atMs: now, conditions: [...observation.state.nodeConditions], observation };
    this.#last = result;
    await this.#postConditions(observation.state.nodeConditions);
    const target = observation.reclaim;
    if (!target) return result;
    await this.#event(undefined, 'Warning', 'EvictionThresholdMet', `Attempting to reclaim ${target.resource}`);
    const actions = nodeLevelReclaimFor(target.threshold.signal, this.layout);
    if (actions.length > 0) {
      this.#reclaimNodeLevel(actions);
      this.#refreshStats(this.#clock.now(), true);
      result.reclaimed = actions;
      result.reclaimSatisfied = nodeReclaimSatisfied(this.config, this.#summary as Summary);
      if (result.reclaimSatisfied) {
        this.#log.info({ node: this.nodeName, resource: target.resource, actions }, 'sim eviction manager: able to reduce resource pressure without evicting pods');
        return result;
      }
    }
    if (this.#pods.length === 0) return result;
    const choice = chooseEviction(this.config, observation, this.#pods, this.layout);
    result.choice = choice;
    if (choice.victim) await this.#evict(choice, target.resource);
    return result;
  }

  /** Events are best effort, as the kubelet's recorder: a failure is logged and the eviction goes on. */
  async #event(pod: V1Pod | undefined, type: 'Normal' | 'Warning', reason: string, message: string, annotations?: Record<string, string>): Promise<void> {
    try {
      await this.#port.recordEvent(pod, type, reason, message, annotations);
    } catch (err) {
      this.#log.warn({ node: this.nodeName, reason, err: String(err) }, 'sim eviction manager: event not recorded');
    }
  }

  async #postConditions(conditions: readonly PressureConditionType[]): Promise<void> {
    const same = conditions.length === this.#posted.length && conditions.every((c) => this.#posted.includes(c));
    if (same) return;
    await this.#port.setPressureConditions(conditions);
    this.#posted = [...conditions];
  }

  async #evict(choice: EvictionChoice, resource: StarvedResource): Promise<void> {
    const victim = choice.victim;
    if (!victim) return;
    const message = choice.message ?? `The node was low on resource: ${resource}. `;
    await this.#event(victim.pod, 'Warning', EVICTION_REASON, message, choice.annotations);
    this.#log.info({ node: this.nodeName, pod: victim.key, grace: choice.gracePeriodSeconds, message }, 'sim eviction manager: evicting pod');
    await this.#port.killPod(victim.pod, choice.gracePeriodSeconds ?? 0, {
      phase: 'Failed', reason: EVICTION_REASON, message,
      condition: { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message },
    });
    const uid = victim.pod.metadata?.uid ?? '';
    this.#usage.delete(uid);
    this.#faults.delete(uid);
    this.#pods = this.#pods.filter((p) => p.metadata?.uid !== uid);
  }
}

/**
 * A {@link KubeletPort} over the API server for one node: pods listed by `spec.nodeName`, pressure
 * posted through `setPressure` (the fleet's status path), status written with a merge patch on
 * `pods/status`, Events created in the pod's namespace (node Events in `default`) with source
 * `kubelet`. A pod gone (404) is not an error.
 */
export function apiKubeletPort(
  clients: Pick<KubeClients, 'core'>,
  nodeName: string,
  setPressure: (type: PressureConditionType, on: boolean) => Promise<void>,
  clock: Clock,
): KubeletPort {
  const { core } = clients;
  let seq = 0;
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  // Conflicts, 429 (Retry-After) and timeouts are retried with backoff; a 404 (the pod is gone) ends it quietly.
  const write = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
    const r = await retryWithBackoff(fn, { clock, isDone: isNotFound, maxAttempts: 5 });
    if (r.status === 'aborted') throw new Error(`${what}: ${describeError(r.error)}`);
  };
  return {
    async activePods() {
      const list = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` });
      return list.items.filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
    },
    async setPressureConditions(conditions) {
      for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const) await setPressure(type, conditions.includes(type));
    },
    async recordEvent(pod, type, reason, message, annotations) {
      const now = new Date(clock.now());
      const namespace = pod?.metadata?.namespace ?? 'default';
      const involved = pod
        ? { kind: 'Pod', apiVersion: 'v1', name: pod.metadata?.name, namespace, uid: pod.metadata?.uid }
        : { kind: 'Node', apiVersion: 'v1', name: nodeName, uid: nodeName };
      const base = pod?.metadata?.name ?? nodeName;
      await write(`event ${reason} on ${base}`, () => core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { name: `${base}.${clock.now().toString(16)}${(seq++).toString(16)}`, namespace, ...(annotations ? { annotations } : {}) },
          involvedObject: involved, reason, message, type, count: 1, firstTimestamp: now, lastTimestamp: now,
          source: { component: 'kubelet', host: nodeName }, reportingComponent: 'kubelet', reportingInstance: nodeName,
        },
      }));
    },
    async killPod(pod, gracePeriodSeconds, status) {
      // The containers get their grace period, then the status manager writes the final status.
      if (gracePeriodSeconds > 0) await clock.sleep(gracePeriodSeconds * 1000);
      const t = new Date(clock.now()).toISOString();
      const containers = (pod.spec?.containers ?? []).map((c) => ({
        name: c.name, ready: false, started: false, restartCount: 0, image: c.image ?? '', imageID: '',
        state: { terminated: { exitCode: 137, reason: 'Error', startedAt: t, finishedAt: t } },
      }));
      await write(`evicted status of ${pod.metadata?.name ?? ''}`, () => core.patchNamespacedPodStatus({
          name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '',
          body: {
            status: {
              phase: status.phase, reason: status.reason, message: status.message,
              conditions: [
                { type: 'Initialized', status: 'True', lastTransitionTime: t },
                { type: 'PodScheduled', status: 'True', lastTransitionTime: t },
                { type: 'Ready', status: 'False', reason: 'PodFailed', lastTransitionTime: t },
                { type: 'ContainersReady', status: 'False', reason: 'PodFailed', lastTransitionTime: t },
                { ...status.condition, lastTransitionTime: t },
              ],
              containerStatuses: containers,
            },
          },
        }, mergePatch));
    },
  };
}

/** Options of {@link NodePressure}. */
export interface NodePressureOptions {
  clients: Pick<KubeClients, 'core'>;
  clock: Clock;
  /** every simulated kubelet's eviction configuration (kubelet flags / KubeletConfiguration, see src/kubelet/thresholds.ts) */
  config: EvictionConfig;
  /** posts a pressure condition on a node (the fleet's `setCondition`) */
  setCondition: (node: string, type: PressureConditionType, on: boolean) => Promise<void>;
  resources?: Partial<SimNodeResources>;
  logger?: SimLogger;
}

/**
 * The fleet's eviction managers, one per node, started on first use (a fault or usage on one of
 * the node's pods, or {@link NodePressure.manager}): each lists its node's pods every 10 s, so a
 * large fleet only pays for the nodes under test.
 */
export class NodePressure {
  readonly config: EvictionConfig;
  readonly #o: NodePressureOptions;
  readonly #managers = new Map<string, SimEvictionManager>();

  constructor(o: NodePressureOptions) {
    this.#o = o;
    this.config = o.config;
  }

  /** The node's eviction manager, created and started if needed. */
  manager(node: string): SimEvictionManager {
    let m = this.#managers.get(node);
    if (!m) {
      const { clients, clock, setCondition } = this.#o;
      m = new SimEvictionManager({
        nodeName: node, config: this.config, clock, logger: this.#o.logger, resources: this.#o.resources,
        port: apiKubeletPort(clients, node, (type, on) => setCondition(node, type, on), clock),
      });
      this.#managers.set(node, m);
      m.start();
    }
    return m;
  }

  /** Nodes whose eviction manager runs. */
  nodes(): string[] {
    return [...this.#managers.keys()];
  }

  async #podAndManager(namespace: string, name: string): Promise<{ pod: V1Pod; manager: SimEvictionManager }> {
    const pod = await this.#o.clients.core.readNamespacedPod({ name, namespace });
    const node = pod.spec?.nodeName;
    if (!node) throw new Error(`pod ${namespace}/${name} is not bound to a node`);
    return { pod, manager: this.manager(node) };
  }

  /**
   * Starts (rate > 0) or stops a usage fault on a pod, per second: `memory-leak` bytes of working
   * set, `log-flood` bytes of logs, `fork-bomb` processes.
   * @returns the pod's node
   * @throws Error when the pod does not exist or is not bound
   */
  async fault(namespace: string, name: string, kind: UsageFaultKind, ratePerSecond: number): Promise<string> {
    const { pod, manager } = await this.#podAndManager(namespace, name);
    manager.setFault(pod.metadata?.uid ?? '', kind, ratePerSecond);
    return manager.nodeName;
  }

  /**
   * Sets a pod's usage from a profile (`memory=300Mi,pids=20`, `memory=150%` of its request).
   * @returns the pod's node
   * @throws Error for a bad profile, or when the pod does not exist or is not bound
   */
  async usage(namespace: string, name: string, profile: string): Promise<string> {
    const { pod, manager } = await this.#podAndManager(namespace, name);
    manager.setUsage(pod.metadata?.uid ?? '', parseUsageProfile(profile, pod));
    return manager.nodeName;
  }

  /** Stops every manager. */
  stop(): void {
    for (const m of this.#managers.values()) m.stop();
  }
}
