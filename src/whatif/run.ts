/**
 * The what-if driver: runs our real controllers (the same classes `node-lifecycle-controller run`
 * starts, with the same configuration) on a FakeClock over an {@link InMemoryCluster} built from a
 * snapshot, plays a scenario, and returns the timeline.
 *
 * The wiring mirrors `src/cli/run.ts` `startController` (which controllers run, their
 * configuration, which cache events each handler gets); only the informers and writers are the
 * in-memory cluster's. The API server is never written to: the what-if has no client.
 */
import type { Lease, Node, Pod, VolumeAttachment } from '../kube/objects.js';
import { silentLogger } from '../log/logger.js';
import { createMetrics } from '../metrics/registry.js';
import { NodeLifecycleController, type ZoneView } from '../nodelifecycle/controller.js';
import { podSelectedByDaemonSet } from '../nodelifecycle/daemonsets.js';
import { EVENT_EVICTION_CIRCUIT_OPEN, formatCountOrPercent } from '../nodelifecycle/guard.js';
import { TaintEvictionController } from '../tainteviction/controller.js';
import { TAINT_EVICTION_CONTROLLER_NAME } from '../tainteviction/events.js';
import { PodGCController } from '../podgc/controller.js';
import { GC_CHECK_PERIOD_MS, ORPHAN_QUARANTINE_MS, POD_GC_CONTROLLER_NAME } from '../podgc/decision.js';
import { ForceDetachController } from '../volumes/controller.js';
import { ATTACH_DETACH_EVENT_SOURCE, FORCE_DETACH_RESYNC_PERIOD_MS } from '../volumes/decision.js';
import { FakeClock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';
import { isControllerEnabled, labelSelectorMatches, parseLabelSelector, type ControllerConfig } from '../cli/flags.js';
import { nodeLifecycleConfigFrom } from '../cli/nodelifecycleconfig.js';
import { InMemoryCluster, type TimelineEntry } from './cluster.js';
import { selectNodes, type Scenario } from './scenario.js';
import type { ClusterSnapshot } from './snapshot.js';

/**
 * The result of a what-if run. Times: `startedAt` epoch ms; every `atMs` milliseconds after T+0.
 * `cluster` counts the nodes `--node-selector` keeps and the pods and attachments on them.
 */
export interface WhatIfResult {
  startedAt: number;
  durationMs: number;
  scenario: string;
  cluster: { nodes: number; pods: number; volumeAttachments: number; kubeletsRunningAtStart: number };
  /** Controllers that ran (`--controllers`; the taint eviction controller not with `--enable-taint-manager=false`). */
  controllers: string[];
  /** The controller flags that shape the timeline, as given (durations in milliseconds). */
  config: Record<string, number | boolean | string>;
  timeline: TimelineEntry[];
  summary: {
    nodesMarkedUnknown: number;
    nodesMarkedNotReady: number;
    noExecuteTaintsAdded: number;
    podsMarkedNotReady: number;
    podsDeleted: number;
    podsForceDeleted: number;
    volumeAttachmentsDetached: number;
    zonePauses: number;
    /**
     * `EvictionCircuitOpen` Events: the cluster-wide breaker (`--max-unhealthy-nodes`) or the storm
     * guard (`--storm-*`) tripping. They come from the controller through its Event sink, so they
     * appear as soon as the controller shell applies the guards (src/nodelifecycle/guard.ts).
     */
    guardTrips: number;
  };
  /** How long the simulation took on this machine, milliseconds (wall clock; informational only). */
  wallMs: number;
}

/** Simulated time per step of the driver, milliseconds: zone states are sampled this often. */
const STEP_MS = 1000;

/**
 * Runs a what-if.
 * @param snapshot the starting state (`takenAt` is T+0). Not modified.
 * @param scenario the parsed scenario.
 * @param config the controller configuration (`parseControllerFlags`), as `run` would use it;
 *   `--node-selector` narrows the nodes as it narrows the controller's informer.
 * @returns the timeline and a summary.
 * @throws {ScenarioError} when a step names a node that is not in the snapshot, or a zone without nodes.
 */
export async function runWhatIf(snapshot: ClusterSnapshot, scenario: Scenario, config: ControllerConfig): Promise<WhatIfResult> {
  const wallStart = performance.now();
  const clock = new FakeClock(snapshot.takenAt);
  const selector = parseLabelSelector(config.nodeSelector);
  const scoped: ClusterSnapshot = { ...snapshot, nodes: snapshot.nodes.filter((n) => labelSelectorMatches(selector, n.labels)) };
  const cluster = new InMemoryCluster(scoped, clock, { graceMs: config.nodeMonitorGracePeriod });
  const resolved = scenario.steps.map((s, i) => ({
    step: s,
    nodes: selectNodes(s.select, cluster.nodeZones(), { file: scenario.file, line: s.line, field: `steps[${i}]` }),
  }));
  const kubeletsRunningAtStart = cluster.runningKubelets();
  const scopedNames = new Set(scoped.nodes.map((n) => n.name));
  const inScope = {
    pods: snapshot.pods.filter((p) => scopedNames.has(p.nodeName)).length,
    volumeAttachments: snapshot.volumeAttachments.filter((v) => scopedNames.has(v.nodeName)).length,
  };

  const metrics = createMetrics({ defaultMetrics: false });
  const log = silentLogger;
  const canSeeCluster = (): boolean => true;
  const podsStore = { get: (k: string) => cluster.pods.get(k), list: () => cluster.podList(), podsOnNode: (n: string) => cluster.podsOnNode(n) };
  const nodesStore = { get: (k: string) => cluster.nodes.get(k), list: () => cluster.nodeList() };
  const controllers: string[] = [];
  const stops: (() => Promise<void>)[] = [];
  const starts: (() => void)[] = [];
  let sampleZones: () => ZoneView[] = () => [];

  const nlcConfig = nodeLifecycleConfigFrom(config);
  if (isControllerEnabled(config, 'node-lifecycle-controller')) {
    const legacy = !config.enableTaintManager;
    const nlc = new NodeLifecycleController({
      config: nlcConfig,
      clock,
      log,
      caches: {
        nodes: nodesStore,
        leases: { get: (k) => cluster.leases.get(k), list: () => [...cluster.leases.values()] },
        pods: podsStore,
        daemonSets: {
          has: (k) => cluster.daemonSets.has(k),
          ...(legacy
            ? { selectsPod: (p: Pod) => podSelectedByDaemonSet({ namespace: p.namespace, labels: p.labels ?? {} }, [...cluster.daemonSets.values()].filter((d) => d.namespace === p.namespace)) }
            : {}),
        },
      },
      writes: cluster.nodeLifecycleWrites(),
      events: cluster.eventSink('node-controller'),
      metrics: metrics.nodeCollector,
      canSeeCluster,
      ...(config.featureGates.NodeControllerLeaseCircuitBreaker
        ? {
            leaseCircuitBreaker: {
              readLease: async (n: string) => {
                const l = cluster.leases.get(`kube-node-lease/${n}`);
                return l && { resourceVersion: l.resourceVersion };
              },
              cacheResourceVersion: () => cluster.leaseResourceVersion(),
            },
          }
        : {}),
    });
    cluster.on('nodes', { add: (n: Node) => nlc.nodeChanged(n.name), update: (_o, n) => nlc.nodeChanged(n.name), delete: (n) => nlc.nodeDeleted(n.name) });
    const onLease = (l: Lease): void => {
      if (cluster.nodes.has(l.name)) nlc.leaseChanged(l.name);
    };
    cluster.on('leases', { add: onLease, update: (_o, l) => onLease(l) });
    cluster.on('pods', { add: (p: Pod) => nlc.podChanged(p), update: (o, p) => nlc.podChanged(p, o) });
    controllers.push('node-lifecycle-controller');
    starts.push(() => nlc.start());
    stops.push(() => nlc.stop());
    sampleZones = () => nlc.view().zones;
  }

  if (isControllerEnabled(config, 'taint-eviction-controller') && config.enableTaintManager) {
    const te = new TaintEvictionController({
      clock,
      log,
      caches: { nodes: nodesStore, pods: podsStore },
      writes: cluster.taintEvictionWrites(),
      events: cluster.eventSink(TAINT_EVICTION_CONTROLLER_NAME),
      metrics: metrics.taintEviction,
      canSeeCluster,
      options: { disruptionConditions: config.featureGates.PodDisruptionConditions, nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriod },
    });
    cluster.on('nodes', { add: (n: Node) => te.nodeChanged(n), update: (o, n) => te.nodeChanged(n, o), delete: (n) => te.nodeDeleted(n) });
    cluster.on('pods', { add: (p: Pod) => te.podChanged(p), update: (o, p) => te.podChanged(p, o), delete: (p) => te.podDeleted(p) });
    controllers.push('taint-eviction-controller');
    starts.push(() => te.start());
    stops.push(() => te.stop());
  }

  const scopedToSelector = config.nodeSelector.trim() !== '';
  if (isControllerEnabled(config, 'pod-garbage-collector-controller')) {
    const gc = new PodGCController({
      config: { orphanQuarantineMs: ORPHAN_QUARANTINE_MS, sweepPeriodMs: GC_CHECK_PERIOD_MS, scoped: scopedToSelector },
      clock,
      log,
      caches: { nodes: nodesStore, pods: podsStore },
      writes: cluster.podGCWrites(),
      events: cluster.eventSink(POD_GC_CONTROLLER_NAME),
      metrics: metrics.podGC,
      canSeeCluster,
    });
    cluster.on('nodes', { add: (n: Node) => gc.nodeChanged(n), update: (_o, n) => gc.nodeChanged(n), delete: (n) => gc.nodeDeleted(n) });
    cluster.on('pods', { add: (p: Pod) => gc.podChanged(p), update: (_o, p) => gc.podChanged(p) });
    controllers.push('pod-garbage-collector-controller');
    starts.push(() => gc.start());
    stops.push(() => gc.stop());
  }

  if (isControllerEnabled(config, 'persistentvolume-attach-detach-controller')) {
    const fd = new ForceDetachController({
      config: {
        forceDetachTimeoutMs: config.forceDetachTimeout,
        disableForceDetachOnTimeout: config.disableForceDetachOnTimeout,
        resyncPeriodMs: FORCE_DETACH_RESYNC_PERIOD_MS,
        scoped: scopedToSelector,
      },
      clock,
      log,
      caches: {
        nodes: nodesStore,
        pods: { podsOnNode: (n) => cluster.podsOnNode(n) },
        volumeAttachments: { get: (k) => cluster.volumeAttachments.get(k), list: () => [...cluster.volumeAttachments.values()], onNode: (n) => cluster.volumeAttachmentsOnNode(n) },
        pvcs: { get: (k) => cluster.pvcs.get(k) },
        pvs: { get: (n) => cluster.pvs.find((pv) => pv.name === n) },
      },
      writes: cluster.forceDetachWrites(),
      events: cluster.eventSink(ATTACH_DETACH_EVENT_SOURCE),
      metrics: metrics.attachDetach,
      canSeeCluster,
    });
    cluster.on('nodes', { add: (n: Node) => fd.nodeChanged(n), update: (_o, n) => fd.nodeChanged(n), delete: (n) => fd.nodeChanged(n) });
    cluster.on('pods', { add: (p: Pod) => fd.podChanged(p), update: (_o, p) => fd.podChanged(p), delete: (p) => fd.podChanged(p) });
    cluster.on('volumeAttachments', {
      add: (v: VolumeAttachment) => fd.volumeAttachmentChanged(v),
      update: (_o, v) => fd.volumeAttachmentChanged(v),
      delete: (v) => fd.volumeAttachmentDeleted(v),
    });
    controllers.push('persistentvolume-attach-detach-controller');
    starts.push(() => fd.start());
    stops.push(() => fd.stop());
  }

  // As in `run`: the caches are synced (here: filled) before any controller starts.
  for (const start of starts) start();
  cluster.startKubelets();
  for (const { step, nodes } of resolved) {
    clock.setTimeout(() => {
      cluster.timeline.push({ atMs: cluster.elapsed(), kind: 'step', action: step.action, nodes, detail: stepText(step.action, nodes, step.forMs) });
      cluster.apply(step.action, nodes, step.forMs);
    }, step.atMs);
  }

  const zoneStates = new Map<string, string>();
  const recordZones = (): void => {
    for (const z of sampleZones()) {
      const before = zoneStates.get(z.zoneLabel);
      if (before === z.state) continue;
      zoneStates.set(z.zoneLabel, z.state);
      cluster.timeline.push({
        atMs: cluster.elapsed(),
        kind: 'zone',
        zone: z.zoneLabel,
        from: before ?? '-',
        to: z.state,
        size: z.size,
        unhealthy: z.unhealthy,
        rate: z.rate,
        ...(z.pausedReason ? { pausedReason: z.pausedReason } : {}),
      });
    }
  };
  // T+0: the first monitor pass (zone states) and the steps at 0s.
  await clock.advanceAsync(0);
  recordZones();
  for (let t = 0; t < scenario.durationMs; t += STEP_MS) {
    await clock.advanceAsync(Math.min(STEP_MS, scenario.durationMs - t));
    recordZones();
  }
  for (const stop of stops) await stop();

  const timeline = cluster.timeline.slice().sort((a, b) => a.atMs - b.atMs);
  const count = (f: (e: TimelineEntry) => boolean): number => timeline.filter(f).length;
  return {
    startedAt: snapshot.takenAt,
    durationMs: scenario.durationMs,
    scenario: scenario.file,
    cluster: { nodes: scoped.nodes.length, pods: inScope.pods, volumeAttachments: inScope.volumeAttachments, kubeletsRunningAtStart },
    controllers,
    config: {
      ...Object.fromEntries(Object.entries(nlcConfig).filter(([k]) => k !== 'evictionGuards' && k !== 'nodeStartupGracePeriodMs')),
      forceDetachTimeoutMs: config.forceDetachTimeout,
      nodeSelector: config.nodeSelector,
      maxUnhealthyNodes: config.maxUnhealthyNodes ? formatCountOrPercent(config.maxUnhealthyNodes) : '',
      stormThreshold: config.stormThreshold ? formatCountOrPercent(config.stormThreshold) : '',
      stormWindowMs: config.stormWindow,
      stormHoldMs: config.stormHold,
    },
    timeline,
    summary: {
      nodesMarkedUnknown: count((e) => e.kind === 'condition' && e.to === 'Unknown'),
      nodesMarkedNotReady: count((e) => e.kind === 'condition' && e.to === 'False'),
      noExecuteTaintsAdded: count((e) => e.kind === 'taint' && e.added.some((t) => t.endsWith(':NoExecute') && !t.startsWith('node.kubernetes.io/out-of-service'))),
      podsMarkedNotReady: count((e) => e.kind === 'pod-not-ready'),
      podsDeleted: count((e) => e.kind === 'pod-deleted' && !e.force),
      podsForceDeleted: count((e) => e.kind === 'pod-deleted' && e.force),
      volumeAttachmentsDetached: count((e) => e.kind === 'detach'),
      zonePauses: count((e) => e.kind === 'event' && (e.reason === 'ZoneEvictionPaused' || e.reason === 'ZoneEvictionSlowed' || e.reason === 'AllZonesDisrupted')),
      guardTrips: count((e) => e.kind === 'event' && e.reason === EVENT_EVICTION_CIRCUIT_OPEN),
    },
    wallMs: performance.now() - wallStart,
  };
}

function stepText(action: string, nodes: readonly string[], forMs?: number): string {
  const shown = nodes.length <= 5 ? nodes.join(', ') : `${nodes.slice(0, 5).join(', ')} and ${nodes.length - 5} more`;
  return `${action}${forMs !== undefined ? ` for ${formatGoDuration(forMs)}` : ''} on ${nodes.length} node(s): ${shown}`;
}
