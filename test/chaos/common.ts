/**
 * What the chaos scenarios share (test/chaos/scenarios.ts, test/chaos/scenarios-more.ts): the result
 * every scenario returns, the shortened node lifecycle timings, the fleet and its observer, and the
 * checks for wrongful and lost actions.
 */
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { waitFor } from '../support/cluster.js';
import { NodeObserver } from '../support/observe.js';
import type { ChaosWorld } from './harness.js';

/** What one scenario measured. Durations ms, rates requests/s, memory MiB. */
export interface ScenarioResult {
  scenario: number;
  title: string;
  /** The size and durations it ran at (CI runs reduced ones). */
  size: string;
  wrongful: number;
  lost: number;
  regainSightMs: number | undefined;
  rate: { steady: number; during: number; after: number };
  rssMiB: number | undefined;
  /** Scenario-specific figures (named, with units in the name). */
  figures: Record<string, number | string>;
  /** What went wrong, one line each (empty when the scenario passed). */
  failures: string[];
}

/** Node lifecycle timings shared by the scenarios: grace 10 s, monitor period 1 s, leases renewed every 2 s. */
export const GRACE_S = 10;
export const LEASE_RENEW_MS = 2000;
/**
 * The flags of every replica: the shortened node lifecycle timings, and leader election at
 * kube-controller-manager's defaults (lease 15 s, renew deadline 10 s, retry 2 s) rather than the
 * test helper's 6 s / 4 s / 0.5 s, which a loaded 2-core machine under a fault can miss by itself
 * (seen: a single replica lost its Lease to a 2 s PUT timeout during scenario 2). Scenario 5, which is
 * about election timing, sets its own.
 */
export const CONTROLLER_FLAGS = [
  `--node-monitor-grace-period=${GRACE_S}s`,
  '--node-monitor-period=1s',
  '--node-eviction-rate=10',
  '--secondary-node-eviction-rate=10',
  '--leader-elect-lease-duration=15s',
  '--leader-elect-renew-deadline=10s',
  '--leader-elect-retry-period=2s',
];
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const mib = (b: number | undefined): number | undefined => (b === undefined ? undefined : Math.round((b / 1048576) * 10) / 10);
export const round = (n: number): number => Math.round(n * 10) / 10;

export interface Stage {
  fleet: Fleet;
  observer: NodeObserver;
  prefix: string;
  stop: () => Promise<void>;
}

/** What {@link stage} builds beyond the zones and nodes; the defaults are the scenarios' (small, fast). Durations ms. */
export interface StageOptions {
  /** Default 1. */
  podsPerNode?: number;
  /** Default {@link LEASE_RENEW_MS}. */
  leaseRenewIntervalMs?: number;
  /** The pods' NoExecute tolerations, seconds. Default 2. */
  tolerationSeconds?: number;
  /** How often the observer lists the fleet's nodes. Default 250. */
  observeIntervalMs?: number;
  /** Default 60,000. */
  nodeStatusUpdateFrequencyMs?: number;
}

/** A fleet of `zones × perZone` nodes (by default 1 pod each, `tolerationSeconds: 2`) and an observer of its nodes. */
export async function stage(world: ChaosWorld, prefix: string, zones: number, perZone: number, o: StageOptions = {}): Promise<Stage> {
  await world.admin.core.createNamespace({ body: { metadata: { name: prefix } } }).catch(() => undefined);
  await world.admin.core.createNamespacedServiceAccount({ namespace: prefix, body: { metadata: { name: 'default' } } }).catch(() => undefined);
  const fleet = new Fleet({
    clients: world.admin,
    prefix,
    namespace: prefix,
    zones,
    nodesPerZone: perZone,
    podsPerNode: o.podsPerNode ?? 1,
    podMix: { tolerationSeconds: 1 },
    tolerationSeconds: o.tolerationSeconds ?? 2,
    leaseRenewIntervalMs: o.leaseRenewIntervalMs ?? LEASE_RENEW_MS,
    nodeStatusUpdateFrequencyMs: o.nodeStatusUpdateFrequencyMs ?? 60_000,
  });
  await fleet.start();
  const observer = new NodeObserver(world.admin, `nlc.sim/fleet=${prefix}`, o.observeIntervalMs ?? 250);
  await observer.start();
  return {
    fleet,
    observer,
    prefix,
    stop: async () => {
      observer.stop();
      await fleet.stop();
    },
  };
}

/** Nodes of the fleet other than `dead` that were ever seen not Ready or with a NoExecute taint. */
export function wronglyJudged(s: Stage, dead: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const c of s.observer.changes) if (!dead.has(c.node) && (c.ready !== 'True' || c.noExecute.length > 0)) out.add(c.node);
  return [...out];
}

/** Pods of the fleet's namespace still present, by name. */
export async function podNames(world: ChaosWorld, ns: string): Promise<Set<string>> {
  const list = await world.admin.core.listNamespacedPod({ namespace: ns });
  return new Set(list.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name ?? ''));
}

/**
 * Kills `dead` and waits (up to `timeoutMs`) until each is Unknown, tainted unreachable and its pods
 * are gone. @returns the dead nodes (or their pods) still not acted on at the end: the lost actions.
 */
export async function awaitWave(world: ChaosWorld, s: Stage, dead: readonly string[], pods: ReadonlyMap<string, string[]>, timeoutMs: number): Promise<string[]> {
  const missing = async (): Promise<string[]> => {
    const left = await podNames(world, s.prefix);
    const out: string[] = [];
    for (const n of dead) {
      if (s.observer.firstAt(n, (c) => c.ready === 'Unknown') === undefined) out.push(`${n}: not marked Unknown`);
      if (!s.observer.taintedWith('node.kubernetes.io/unreachable').has(n)) out.push(`${n}: not tainted unreachable`);
      for (const p of pods.get(n) ?? []) if (left.has(p)) out.push(`${n}: pod ${p} not deleted`);
    }
    return out;
  };
  let last: string[] = [];
  await waitFor('the wave is acted on', async () => (last = await missing()).length === 0, timeoutMs, 500).catch(() => undefined);
  return last;
}


/** Options of {@link scenarioApf429} and {@link scenarioLeaderPartition}. Durations ms. */
export interface WaveOptions {
  zones: number;
  perZone: number;
  /** Nodes killed per zone (at most half a zone, so every zone stays Normal and tainting runs at the normal rate). */
  deadPerZone: number;
  /** How long the fault lasts. */
  faultMs: number;
}

/** The dead nodes of a wave: the first `deadPerZone` of each zone. */
export function waveVictims(fleet: Fleet, deadPerZone: number): string[] {
  return fleet.zones().flatMap((z) => fleet.nodesInZone(z).slice(0, deadPerZone));
}
