// Why this file is over 500 lines: the zone key, ComputeZoneState, the disruption plan and the two "stricter of" pickers (real/effective, and legacy mode's 1.20 master-name view) are one pure decision, tested together in test/unit/zones.test.ts; split candidate: the stricter-of pickers.
/**
 * Zones and zone disruption: which zone a node is in, how healthy a zone is, and what the
 * controller must do when zone health changes (per-zone NoExecute tainting rates, and the
 * all-zones stop when every zone is fully disrupted).
 *
 * Pure functions; the controller applies the returned plan. Mirrors
 * `pkg/controller/nodelifecycle/node_lifecycle_controller.go` (`ComputeZoneState`,
 * `handleDisruption`, `setLimiterInZone`, `ReducedQPSFunc`, `HealthyQPSFunc`,
 * `isNodeExcludedFromDisruptionChecks`) and
 * `staging/src/k8s.io/component-helpers/node/topology/helpers.go` (`GetZoneKey`).
 */

/** Stable zone label. */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';
/** Stable region label. */
export const LABEL_TOPOLOGY_REGION = 'topology.kubernetes.io/region';
/** Deprecated beta zone label; wins over the stable one when present. */
export const LABEL_FAILURE_DOMAIN_BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
/** Deprecated beta region label; wins over the stable one when present. */
export const LABEL_FAILURE_DOMAIN_BETA_REGION = 'failure-domain.beta.kubernetes.io/region';

/**
 * A node with this label (any value) is left out of zone health: it counts neither as ready nor
 * as not ready. Mirrors `labelNodeDisruptionExclusion`.
 */
export const EXCLUDE_DISRUPTION_LABEL = 'node.kubernetes.io/exclude-disruption';

/** The separator upstream puts between region and zone; the NUL avoids clashes with colons. */
const ZONE_KEY_SEPARATOR = ':\x00:';

/**
 * The zone key of a node: `region + ":\x00:" + zone`, or `""` when the node has neither label.
 * A beta label wins over the stable one if it is present, even with an empty value.
 * Mirrors `topology.GetZoneKey` (component-helpers `node/topology/helpers.go`).
 * @param labels the node's labels (undefined is treated as no labels).
 * @returns the key; nodes without zone labels share the key `""`.
 */
export function getZoneKey(labels: Readonly<Record<string, string>> | undefined): string {
  if (!labels) return '';
  // Called for every node on every pass: no per-call closure.
  const zone = pickLabel(labels, LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_TOPOLOGY_ZONE);
  const region = pickLabel(labels, LABEL_FAILURE_DOMAIN_BETA_REGION, LABEL_TOPOLOGY_REGION);
  if (region === '' && zone === '') return '';
  return region + ZONE_KEY_SEPARATOR + zone;
}

function pickLabel(labels: Readonly<Record<string, string>>, beta: string, stable: string): string {
  return Object.hasOwn(labels, beta) ? (labels[beta] ?? '') : (labels[stable] ?? '');
}

/**
 * A zone key for humans: `"region:zone"` in quotes, or a note for the label-less zone `""`.
 * Not upstream (upstream logs the raw key, whose NUL byte does not print).
 */
export function formatZoneKey(zone: string): string {
  if (zone === '') return '"" (nodes without zone labels)';
  return `"${zone.replace(ZONE_KEY_SEPARATOR, ':')}"`;
}

/**
 * Whether the node is left out of zone disruption checks: it has the
 * {@link EXCLUDE_DISRUPTION_LABEL} label, whatever its value. The old name-based exclusion of
 * masters is gone upstream (1.22) and here; legacy mode applies it only where it makes a zone
 * decision stricter ({@link isLegacyMasterName}, {@link legacyStricterZoneStatuses}).
 * Mirrors `isNodeExcludedFromDisruptionChecks`.
 */
export function isExcludedFromDisruption(node: { readonly labels: Readonly<Record<string, string>> }): boolean {
  return Object.hasOwn(node.labels, EXCLUDE_DISRUPTION_LABEL);
}

/**
 * Whether kube-controller-manager 1.19–1.20 took the node for a master by its name alone: the name
 * ends in `master`, or it has at least 10 characters and ends in `master-` plus any 3 characters
 * (upstream's "master(-...)?$" written without a regexp). With the feature gate
 * LegacyNodeRoleBehavior (Beta, on by default in 1.19 and 1.20; off in 1.21, removed in 1.22) such a
 * node was left out of zone health. Node names are DNS subdomains (ASCII), so UTF-16 length equals
 * Go's byte length.
 * Mirrors 1.20 `legacyIsMasterNode` (pkg/controller/nodelifecycle/node_lifecycle_controller.go).
 * Used only in legacy mode, and only where it makes a zone decision stricter
 * ({@link legacyStricterZoneStatuses}).
 * @param nodeName the node's name.
 * @returns true when 1.20 would have excluded the node from zone disruption checks by its name.
 */
export function isLegacyMasterName(nodeName: string): boolean {
  if (nodeName.endsWith('master')) return true;
  if (nodeName.length >= 10) return nodeName.slice(0, -3).endsWith('master-');
  return false;
}

/** Zone health state. `Initial` is a zone seen for the first time, before any health pass. */
export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** Result of {@link computeZoneState}. */
export interface ZoneHealth {
  /** Nodes whose Ready status is not `True` (including nodes with no Ready condition). */
  unhealthy: number;
  state: ZoneState;
}

/**
 * Classifies a zone from its nodes' Ready statuses.
 * - FullDisruption: no node is Ready and there is at least one node.
 * - PartialDisruption: more than 2 nodes are not Ready and their share is at least
 *   `unhealthyZoneThreshold`.
 * - Normal: otherwise (including an empty list).
 *
 * Mirrors `Controller.ComputeZoneState`. Upstream compares in float32
 * (`float32(notReady)/float32(notReady+ready) >= unhealthyZoneThreshold`); `Math.fround` on both
 * sides gives the same result, because a quotient of small integers rounded once from float64 to
 * float32 equals the float32 quotient.
 * @param readyStatuses the Ready condition status of each non-excluded node in the zone
 *   (`'True'`, `'False'`, `'Unknown'`); `undefined` means no Ready condition and counts as not ready.
 * @param unhealthyZoneThreshold a fraction (default flag value 0.55).
 */
export function computeZoneState(
  readyStatuses: readonly (string | undefined)[],
  unhealthyZoneThreshold: number,
): ZoneHealth {
  const ready = countReady(readyStatuses);
  return zoneHealthOfCounts(ready, readyStatuses.length - ready, unhealthyZoneThreshold);
}

/** How many of `readyStatuses` are `'True'`. */
export function countReady(readyStatuses: readonly (string | undefined)[]): number {
  let ready = 0;
  for (const s of readyStatuses) if (s === 'True') ready++;
  return ready;
}

/** {@link computeZoneState} from the counts of Ready and not-Ready nodes. */
function zoneHealthOfCounts(ready: number, notReady: number, unhealthyZoneThreshold: number): ZoneHealth {
  if (ready === 0 && notReady > 0) return { unhealthy: notReady, state: 'FullDisruption' };
  if (notReady > 2 && Math.fround(notReady / (notReady + ready)) >= Math.fround(unhealthyZoneThreshold)) {
    return { unhealthy: notReady, state: 'PartialDisruption' };
  }
  return { unhealthy: notReady, state: 'Normal' };
}

/** The rate settings (flag values) that pick a zone's tainting rate. */
export interface ZoneRateConfig {
  /** `--node-eviction-rate`, nodes per **second** (default 0.1). */
  nodeEvictionRate: number;
  /** `--secondary-node-eviction-rate`, nodes per **second** (default 0.01). */
  secondaryNodeEvictionRate: number;
  /** `--large-cluster-size-threshold`, a node count (default 50). */
  largeClusterSizeThreshold: number;
}

/**
 * The NoExecute tainting rate for a zone in a given state.
 * Mirrors `setLimiterInZone` with `ReducedQPSFunc` (PartialDisruption: the secondary rate above
 * the large-cluster threshold, else 0) and `HealthyQPSFunc` (FullDisruption: the normal rate, so a
 * single dead zone is still evicted while other zones are healthy).
 * @param zoneSize number of non-excluded nodes in the zone.
 * @returns nodes per **second**, or undefined for `Initial` (leave the rate unchanged).
 */
export function zoneRate(state: ZoneState, zoneSize: number, cfg: ZoneRateConfig): number | undefined {
  switch (state) {
    case 'Normal':
    case 'FullDisruption':
      return cfg.nodeEvictionRate;
    case 'PartialDisruption':
      return zoneSize > cfg.largeClusterSizeThreshold ? cfg.secondaryNodeEvictionRate : 0;
    case 'Initial':
      return undefined;
  }
}

/**
 * The lowest {@link zoneRate} (nodes per **second**) of a zone of `size` nodes with any number of
 * Ready nodes from `minReady` to `maxReady` (clamped to 0..size). For deciding whether recomputing on
 * every one of several Ready flips could have passed the zone through a lower rate than the one
 * recomputing once gives it (for example a small zone dying: Normal, PartialDisruption at rate 0,
 * then FullDisruption). O(size).
 */
export function lowestZoneRate(size: number, minReady: number, maxReady: number, cfg: DisruptionConfig): number {
  let lowest = Infinity;
  for (let ready = Math.max(0, minReady); ready <= Math.min(size, maxReady); ready++) {
    const rate = zoneRate(zoneHealthOfCounts(ready, size - ready, cfg.unhealthyZoneThreshold).state, size, cfg) ?? cfg.nodeEvictionRate;
    if (rate < lowest) lowest = rate;
  }
  return lowest;
}

/** Everything {@link planDisruption} needs from the flags. */
export interface DisruptionConfig extends ZoneRateConfig {
  /** `--unhealthy-zone-threshold`, a fraction (default 0.55). */
  unhealthyZoneThreshold: number;
}

/**
 * What a health pass does to the all-zones stop ("master disruption mode"):
 * - `enter-all-disrupted`: every zone is now FullDisruption and some zone was not. Set every
 *   zone's rate to 0 and strip the unreachable/not-ready NoExecute taints from every node.
 * - `exit-all-disrupted`: every zone was FullDisruption and some zone no longer is. Reset the
 *   probe timestamp and ready-transition timestamp of every node to now, then apply the rate swaps.
 * - `stay-all-disrupted`: every zone was and still is FullDisruption. Do nothing.
 * - `none`: apply the rate swaps of the zones that changed state.
 */
export type DisruptionMode = 'enter-all-disrupted' | 'exit-all-disrupted' | 'stay-all-disrupted' | 'none';

/** Metric values for one zone (`node_collector_zone_size`, `_zone_health`, `_unhealthy_nodes_in_zone`). */
export interface ZoneMetrics {
  zone: string;
  /** non-excluded nodes */
  size: number;
  /** percent of Ready nodes, 0–100 */
  healthPercent: number;
  /** nodes not Ready */
  unhealthy: number;
}

/** A zone whose state changed in this pass. */
export interface ZoneTransition {
  zone: string;
  from: ZoneState;
  to: ZoneState;
}

/** A `SwapLimiter` call for a zone's queue. */
export interface RateSwap {
  zone: string;
  /** nodes per **second** (0 = stop). */
  rate: number;
}

/**
 * Why tainting stopped or slowed (or why the all-zones stop ended), for a Warning event.
 * - `zone-stopped`: a PartialDisruption zone at or below the large-cluster threshold (rate 0).
 * - `zone-slowed`: a PartialDisruption zone above the threshold (secondary rate).
 * - `all-zones-stopped` / `all-zones-resumed`: the all-zones stop starts or ends (`zone` unset).
 */
export interface DisruptionPause {
  kind: 'zone-stopped' | 'zone-slowed' | 'all-zones-stopped' | 'all-zones-resumed';
  zone?: string;
  reason: string;
}

/** Result of {@link planDisruption}. */
export interface DisruptionPlan {
  /** The zone states to keep after this pass (replaces the previous map). */
  zoneStates: Map<string, ZoneState>;
  /** One entry per zone in this pass's input. */
  metrics: ZoneMetrics[];
  /** Zones dropped because no non-excluded node is in them now. Set their size 0, health 100, unhealthy 0. */
  removedZones: string[];
  mode: DisruptionMode;
  /** Rate changes to apply with `swapLimiter`, in zone-state order. */
  rateSwaps: RateSwap[];
  /** Zones whose state changed (new zones start from `Initial`). */
  transitions: ZoneTransition[];
  /** Explanations of every stop or slow-down, and of the all-zones stop starting or ending. */
  pauses: DisruptionPause[];
}

/** How many zones a reason lists before "and N more". */
const MAX_ZONES_IN_REASON = 5;

function percent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

function countsText(h: ZoneHealthSummary): string {
  return `${h.unhealthy}/${h.size} nodes not Ready`;
}

interface ZoneHealthSummary {
  size: number;
  unhealthy: number;
  state: ZoneState;
}

function listZones(zones: [string, ZoneHealthSummary][], withState: boolean): string {
  const shown = zones
    .slice(0, MAX_ZONES_IN_REASON)
    .map(([z, h]) => `zone ${formatZoneKey(z)}: ${withState ? `${h.state}, ` : ''}${countsText(h)}`);
  const more = zones.length - shown.length;
  return shown.join('; ') + (more > 0 ? `; and ${more} more` : '');
}

function partialPause(zone: string, h: ZoneHealthSummary, rate: number, cfg: DisruptionConfig): DisruptionPause | undefined {
  if (h.state !== 'PartialDisruption' || !(rate < cfg.nodeEvictionRate)) return undefined;
  const why =
    `Zone ${formatZoneKey(zone)} is PartialDisruption: ${h.unhealthy} of ${h.size} nodes are not Ready ` +
    `(${percent(h.unhealthy / h.size)}, at least the unhealthy-zone-threshold ${percent(cfg.unhealthyZoneThreshold)}, ` +
    `and more than 2 nodes).`;
  if (rate <= 0) {
    return {
      kind: 'zone-stopped',
      zone,
      reason:
        `${why} The zone has ${h.size} nodes, not more than the large-cluster-size-threshold ` +
        `${cfg.largeClusterSizeThreshold}, so NoExecute tainting in this zone is paused (0 nodes/s) ` +
        `until the share of not-Ready nodes falls below the threshold or every node in it is down.`,
    };
  }
  return {
    kind: 'zone-slowed',
    zone,
    reason:
      `${why} The zone has ${h.size} nodes, more than the large-cluster-size-threshold ` +
      `${cfg.largeClusterSizeThreshold}, so NoExecute tainting in this zone slows to the ` +
      `secondary-node-eviction-rate of ${rate} nodes/s (normal rate ${cfg.nodeEvictionRate} nodes/s).`,
  };
}

/**
 * Decides what one health pass does about zone disruption, without doing it.
 *
 * Mirrors `Controller.handleDisruption`:
 * 1. Classify each zone in `zoneReadyStatuses` with {@link computeZoneState}; a zone missing from
 *    `prevStates` starts as `Initial`.
 * 2. Drop zones of `prevStates` that have no nodes in this pass; `allWasFullyDisrupted` is true
 *    when every remaining previous state is FullDisruption. `Initial` is not FullDisruption, so
 *    the first pass with every zone fully disrupted (for example, fresh nodes without status)
 *    enters the all-zones stop.
 * 3. Enter, exit, stay, or (mode `none`) set the rate of each zone whose state changed with
 *    {@link zoneRate}. On enter every zone becomes FullDisruption with rate 0. On exit every zone
 *    gets the rate for its new state.
 * With no zones at all the mode is `none` (upstream takes its "stay" branch; both do nothing).
 *
 * Deliberate difference from upstream: upstream's loop over previous zones `break`s at the first
 * zone that is not FullDisruption, in Go's random map order, so stale zones after it are not
 * dropped in that pass. We drop every stale zone every pass. The decisions are the same; only
 * metrics and the stale entries differ.
 *
 * Not upstream: {@link DisruptionPlan.pauses} explains each stop or slow-down and the start and
 * end of the all-zones stop, naming zone, state, not-Ready counts and thresholds. Upstream only
 * logs that a zone changed state.
 * @param prevStates zone states kept from the previous pass (plus `Initial` for new zones).
 * @param zoneReadyStatuses per zone, the Ready status of each node that is not excluded by
 *   {@link isExcludedFromDisruption} (undefined = no Ready condition).
 * @param cfg flag values; rates in nodes per **second**.
 * @param outsideAllZonesStop zones that neither keep the all-zones stop from starting nor end it
 *   (legacy mode: zones of only `*master` nodes, which 1.20 does not see; from
 *   {@link legacyStricterZoneStatuses}). They still get their own state and rate, and the stop covers
 *   them too. Ignored when it holds every zone of this pass. Empty (the default) in taint mode.
 * @returns the plan; `prevStates` is not modified.
 */
export function planDisruption(
  prevStates: ReadonlyMap<string, ZoneState>,
  zoneReadyStatuses: ReadonlyMap<string, readonly (string | undefined)[]>,
  cfg: DisruptionConfig,
  outsideAllZonesStop: ReadonlySet<string> = new Set(),
): DisruptionPlan {
  // With every zone outside, the stop would start on no evidence at all: then nothing is outside.
  const outside = [...zoneReadyStatuses.keys()].every((z) => outsideAllZonesStop.has(z)) ? new Set<string>() : outsideAllZonesStop;
  const states = new Map(prevStates);
  const health = new Map<string, ZoneHealthSummary>();
  const metrics: ZoneMetrics[] = [];
  let allAreFullyDisrupted = true;
  for (const [zone, statuses] of zoneReadyStatuses) {
    const { unhealthy, state } = computeZoneState(statuses, cfg.unhealthyZoneThreshold);
    const size = statuses.length;
    metrics.push({ zone, size, healthPercent: size > 0 ? (100 * (size - unhealthy)) / size : 100, unhealthy });
    health.set(zone, { size, unhealthy, state });
    if (state !== 'FullDisruption' && !outside.has(zone)) allAreFullyDisrupted = false;
    if (!states.has(zone)) states.set(zone, 'Initial');
  }

  const removedZones: string[] = [];
  let allWasFullyDisrupted = true;
  for (const [zone, state] of states) {
    if (!health.has(zone)) {
      states.delete(zone);
      removedZones.push(zone);
      continue;
    }
    if (state !== 'FullDisruption' && !outside.has(zone)) allWasFullyDisrupted = false;
  }

  const plan: DisruptionPlan = {
    zoneStates: states,
    metrics,
    removedZones,
    mode: 'none',
    rateSwaps: [],
    transitions: [],
    pauses: [],
  };
  const summaryOf = (zone: string): ZoneHealthSummary => health.get(zone) as ZoneHealthSummary;

  if (states.size === 0) return plan;
  if (allAreFullyDisrupted && allWasFullyDisrupted) {
    plan.mode = 'stay-all-disrupted';
    return plan;
  }

  if (allAreFullyDisrupted) {
    plan.mode = 'enter-all-disrupted';
    for (const [zone, state] of states) {
      plan.rateSwaps.push({ zone, rate: 0 });
      if (state !== 'FullDisruption') plan.transitions.push({ zone, from: state, to: 'FullDisruption' });
      states.set(zone, 'FullDisruption');
    }
    const zones = [...states.keys()].filter((z) => !outside.has(z)).map((z): [string, ZoneHealthSummary] => [z, summaryOf(z)]);
    const masters = [...states.keys()].filter((z) => outside.has(z)).map((z): [string, ZoneHealthSummary] => [z, summaryOf(z)]);
    plan.pauses.push({
      kind: 'all-zones-stopped',
      reason:
        `All ${zones.length} zone(s) are FullDisruption, with no Ready node (${listZones(zones, false)}). ` +
        (masters.length > 0
          ? `Not counted, as kube-controller-manager 1.20 (LegacyNodeRoleBehavior) did not count them: ` +
            `zones with only nodes named like masters (${listZones(masters, false)}). `
          : '') +
        `This looks like a control-plane or network problem rather than failed nodes, so NoExecute ` +
        `tainting is paused in every zone and the unreachable/not-ready NoExecute taints are removed ` +
        `from every node, until some node is Ready again.`,
    });
    return plan;
  }

  const exiting = allWasFullyDisrupted;
  plan.mode = exiting ? 'exit-all-disrupted' : 'none';
  for (const [zone, state] of states) {
    const h = summaryOf(zone);
    if (!exiting && state === h.state) continue;
    const rate = zoneRate(h.state, h.size, cfg);
    if (rate !== undefined) {
      plan.rateSwaps.push({ zone, rate });
      const pause = partialPause(zone, h, rate, cfg);
      if (pause) plan.pauses.push(pause);
    }
    if (state !== h.state) plan.transitions.push({ zone, from: state, to: h.state });
    states.set(zone, h.state);
  }
  if (exiting) {
    const recovered = [...states.keys()]
      .filter((z) => summaryOf(z).state !== 'FullDisruption' && !outside.has(z))
      .map((z): [string, ZoneHealthSummary] => [z, summaryOf(z)]);
    plan.pauses.unshift({
      kind: 'all-zones-resumed',
      reason:
        `Some nodes are Ready again (${listZones(recovered, true)}), so the all-zones stop ends: ` +
        `NoExecute tainting resumes at each zone's rate, and every node's probe timestamp is reset ` +
        `so each node gets a full grace period before it is tainted.`,
    });
  }
  return plan;
}

/** The {@link zoneRate} (nodes per **second**) of a zone with these Ready statuses. */
function statusesRate(statuses: readonly (string | undefined)[], cfg: DisruptionConfig): number {
  return zoneRate(computeZoneState(statuses, cfg.unhealthyZoneThreshold).state, statuses.length, cfg) ?? cfg.nodeEvictionRate;
}

/**
 * Per zone, the Ready statuses that give the zone the stricter tainting decision: the lower
 * {@link zoneRate}, and on a tie the `effective` statuses (which count more nodes not Ready, so a
 * zone is FullDisruption sooner and the all-zones stop, rate 0 everywhere, starts sooner).
 *
 * Ours, not upstream: the controller counts a Ready node that has been silent (for more than half its
 * grace period, and never within a normal Lease renewal gap: `silentAfterMs` in silence.ts) as not
 * Ready (`effective`), so that nodes that died together are counted together.
 * Counting more nodes not Ready can also move a small zone from PartialDisruption (rate 0) to
 * FullDisruption (full rate), which would restart tainting that upstream keeps paused. Taking the
 * stricter of the two per zone means the effective count can only lower a zone's rate or pause it,
 * never raise it: every zone's rate is at most upstream's (computed from `real`).
 *
 * The all-zones stop (rate 0 everywhere, NoExecute taints removed) is the strictest decision of all.
 * Once it has started, it lasts while every zone is FullDisruption by `effective`: then the
 * `effective` statuses of every zone are returned. Choosing per zone there would let the stop flap:
 * it can start on the effective count (a tie between FullDisruption and a Normal zone's full rate)
 * and would end as soon as one zone's real count reached PartialDisruption (rate 0 in a small zone,
 * lower than FullDisruption's), so tainting would resume in the other, fully dead zones while the
 * nodes were still dying together (seen in test/integration/zones.test.ts, "every node in every
 * zone dies"). So the stop starts whenever upstream's would (a zone FullDisruption by `real` is
 * FullDisruption by `effective` too) or sooner, and ends only once a silent node heartbeats again
 * and upstream's would have ended too, or later.
 *
 * @param real per zone, the Ready status of each node as upstream sees it (undefined = no Ready condition).
 * @param effective per zone, the same nodes with long-silent Ready nodes counted as not Ready; same
 *   zones and sizes as `real` (a zone missing from `effective` keeps its `real` statuses).
 * @param cfg flag values; rates in nodes per **second**.
 * @param inAllZonesStop whether the all-zones stop is on now (every zone's current state FullDisruption).
 * @returns a new map, per zone of `real`, the chosen list (one of the two inputs, not copied).
 */
export function stricterZoneStatuses(
  real: ReadonlyMap<string, readonly (string | undefined)[]>,
  effective: ReadonlyMap<string, readonly (string | undefined)[]>,
  cfg: DisruptionConfig,
  inAllZonesStop = false,
): Map<string, readonly (string | undefined)[]> {
  const out = new Map<string, readonly (string | undefined)[]>();
  const allFullByEffective =
    inAllZonesStop &&
    real.size > 0 &&
    [...real.keys()].every((zone) => computeZoneState(effective.get(zone) ?? (real.get(zone) as readonly (string | undefined)[]), cfg.unhealthyZoneThreshold).state === 'FullDisruption');
  for (const [zone, realStatuses] of real) {
    const eff = effective.get(zone);
    if (allFullByEffective) {
      out.set(zone, eff ?? realStatuses);
      continue;
    }
    if (eff === undefined) {
      out.set(zone, realStatuses);
      continue;
    }
    out.set(zone, statusesRate(eff, cfg) <= statusesRate(realStatuses, cfg) ? eff : realStatuses);
  }
  return out;
}

/** Result of {@link legacyStricterZoneStatuses}. */
export interface LegacyZoneStatuses {
  /** Per zone of `ours`, the chosen list (one of the two inputs, not copied). */
  statuses: Map<string, readonly (string | undefined)[]>;
  /**
   * Zones that 1.20 does not see (every node in them is a `*master`): pass to {@link planDisruption}
   * as `outsideAllZonesStop`. Empty when 1.20 sees no zone at all.
   */
  outsideLegacyView: Set<string>;
}

/**
 * Legacy mode only (`--enable-taint-manager=false`): per zone, the Ready statuses that give a zone
 * decision at least as strict as both kube-controller-manager 1.20's and ours.
 *
 * Why: 1.20 (feature gate LegacyNodeRoleBehavior, on by default) left nodes named `*master`
 * ({@link isLegacyMasterName}) out of zone health; 1.37, and our taint mode, do not. A Ready master
 * then kept a zone out of FullDisruption here, and we evicted where 1.20 kept the all-zones stop.
 * Switching to 1.20's rule outright would break the safety rule the other way: a NotReady master
 * no longer counted makes its zone look healthier (for example PartialDisruption, rate 0, becomes
 * Normal). So both views are computed and the stricter is taken, in the manner of
 * {@link stricterZoneStatuses}:
 * - 1.20's all-zones stop (every zone it sees FullDisruption) is the strictest decision, so when it
 *   holds every zone 1.20 sees gets `legacy`'s statuses (all FullDisruption), and the zones it does
 *   not see (only masters; 1.20 left their queues at their old rate) are returned in
 *   `outsideLegacyView`, so that they do not keep the stop off. The stop then pauses them too.
 *   Our own all-zones stop implies 1.20's (leaving nodes out of a zone with no Ready node leaves it
 *   with no Ready node, or empty), so it is kept as well.
 * - Otherwise, per zone, the list with the lower {@link zoneRate}; on a tie `legacy`'s if only it is
 *   FullDisruption (it can only start the all-zones stop sooner), else `ours`.
 * Every zone's rate is therefore at most both views' rates, and the all-zones stop starts whenever
 * either view's would and ends only when both views' have ended.
 *
 * @param ours per zone, the statuses the controller uses without the name rule (already
 *   {@link stricterZoneStatuses} of real and effective).
 * @param legacy per zone, the same, computed without the nodes {@link isLegacyMasterName} matches;
 *   a zone with only such nodes is missing. Zones not in `ours` are ignored.
 * @param cfg flag values; rates in nodes per **second**.
 * @returns the chosen statuses and the zones 1.20 does not see; the inputs are not modified.
 */
export function legacyStricterZoneStatuses(
  ours: ReadonlyMap<string, readonly (string | undefined)[]>,
  legacy: ReadonlyMap<string, readonly (string | undefined)[]>,
  cfg: DisruptionConfig,
): LegacyZoneStatuses {
  const stateOf = (statuses: readonly (string | undefined)[]): ZoneState => computeZoneState(statuses, cfg.unhealthyZoneThreshold).state;
  const seen = [...ours.keys()].filter((zone) => legacy.has(zone));
  const legacyAllFull = seen.length > 0 && seen.every((zone) => stateOf(legacy.get(zone) ?? []) === 'FullDisruption');
  const statuses = new Map<string, readonly (string | undefined)[]>();
  const outsideLegacyView = new Set<string>();
  for (const [zone, o] of ours) {
    const l = legacy.get(zone);
    if (l === undefined) {
      if (seen.length > 0) outsideLegacyView.add(zone);
      statuses.set(zone, o);
      continue;
    }
    if (legacyAllFull) {
      statuses.set(zone, l);
      continue;
    }
    const rl = statusesRate(l, cfg);
    const ro = statusesRate(o, cfg);
    const legacyStricter = rl < ro || (rl === ro && stateOf(l) === 'FullDisruption' && stateOf(o) !== 'FullDisruption');
    statuses.set(zone, legacyStricter ? l : o);
  }
  return { statuses, outsideLegacyView };
}
