/**
 * The what-if driver: runs our real controllers (the same classes `node-lifecycle-controller run`
 * starts, with the same configuration) on a FakeClock over an {@link InMemoryCluster} built from a
 * snapshot, plays a scenario, and returns the timeline.
 *
 * The wiring is `run`'s: both build the controllers through the controller registry
 * (src/controllers/registry.ts), so the same flags run the same controllers with the same
 * configuration and cache handlers; only the context is the in-memory cluster's (src/whatif/sources.ts).
 * The API server is never written to: the what-if has no client.
 */
import type { ZoneView } from '../nodelifecycle/controller.js';
import { silentLogger } from '../log/logger.js';
import { createMetrics } from '../metrics/registry.js';
import { EVENT_EVICTION_CIRCUIT_OPEN, formatCountOrPercent } from '../nodelifecycle/guard.js';
import { FakeClock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';
import { labelSelectorMatches, parseLabelSelector } from '../kube/labelselector.js';
import type { ControllerConfig } from '../controllers/config.js';
import { nodeLifecycleConfigFrom } from '../controllers/nodelifecycleconfig.js';
import { isControllerEnabled } from '../controllers/names.js';
import { buildControllers, enabledControllers, sightOf } from '../controllers/registry.js';
import { CONTROLLER_REGISTRY } from '../controllers/table.js';
import { InMemoryCluster, type TimelineEntry } from './cluster.js';
import { selectNodes, type Scenario } from './scenario.js';
import type { ClusterSnapshot } from './snapshot.js';
import { NodeJudgementBoard } from '../kube/judgements.js';
import { clusterIO, clusterSources } from './sources.js';

/**
 * The result of a what-if run. Times: `startedAt` epoch ms; every `atMs` milliseconds after T+0.
 * `cluster` counts the nodes `--node-selector` keeps and the pods and attachments on them.
 */
export interface WhatIfResult {
  startedAt: number;
  durationMs: number;
  scenario: string;
  cluster: { nodes: number; pods: number; volumeAttachments: number; kubeletsRunningAtStart: number };
  /** Controllers that ran, in start order (`--controllers`; the taint eviction controller not with `--enable-taint-manager=false`). */
  controllers: string[];
  /** The other controllers of the registry and why they did not run. */
  controllersNotRun: { name: string; reason: string }[];
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
  const sources = clusterSources(cluster);
  const enabled = enabledControllers(config);
  const { byKey, list: running } = buildControllers(
    { config, clock, log: silentLogger, metrics, identity: 'what-if', sources, ...sightOf(sources), judgements: new NodeJudgementBoard(), io: (d) => clusterIO(cluster, d) },
    enabled,
  );
  const nlcConfig = nodeLifecycleConfigFrom(config);
  const sampleZones = (): ZoneView[] => byKey.nodeLifecycle?.view().zones ?? [];

  // As in `run`: the caches are synced (here: filled) before any controller starts.
  for (const r of running) r.controller.start();
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
  for (const r of running) await r.controller.stop();

  const timeline = cluster.timeline.slice().sort((a, b) => a.atMs - b.atMs);
  const count = (f: (e: TimelineEntry) => boolean): number => timeline.filter(f).length;
  return {
    startedAt: snapshot.takenAt,
    durationMs: scenario.durationMs,
    scenario: scenario.file,
    cluster: { nodes: scoped.nodes.length, pods: inScope.pods, volumeAttachments: inScope.volumeAttachments, kubeletsRunningAtStart },
    controllers: running.map((r) => r.name),
    controllersNotRun: notRun(config, new Set(running.map((r) => r.name))),
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

/** The registry's controllers that did not run under `config`, each with why. */
function notRun(config: ControllerConfig, ran: ReadonlySet<string>): { name: string; reason: string }[] {
  return CONTROLLER_REGISTRY.filter((d) => !ran.has(d.name)).map((d) => {
    if (!isControllerEnabled(config, d.name)) return { name: d.name, reason: d.disabledByDefault ? 'off by default (--controllers)' : 'off (--controllers)' };
    const why: string | undefined = 'notStartedBecause' in d ? d.notStartedBecause(config) : undefined;
    return { name: d.name, reason: why ?? 'not started' };
  });
}
