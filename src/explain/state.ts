/**
 * The controller's `/debug/state` document as the inspection commands read it: its shape, the check
 * that a fetched document has it, and the small readings every report makes of it (the leader's pod,
 * a zone's name, the eviction guards, whether a zone's tainting is held back). Pure.
 *
 * Not upstream: kube-controller-manager has no such endpoint.
 */
import type { Node } from '../kube/objects.js';
import type { EvictionGuardView } from '../nodelifecycle/guard.js';
import type { NodeLifecycleView, ZoneView } from '../nodelifecycle/controller.js';
import { formatZoneKey, getZoneKey } from '../nodelifecycle/zones.js';
import type { PodGCView } from '../podgc/controller.js';
import type { ShadowDebugState } from '../shadow/mode.js';
import type { PendingPodDeletion } from '../tainteviction/controller.js';
import type { ForceDetachView } from '../volumes/controller.js';
import type { FeatureGates } from '../controllers/config.js';

/**
 * The JSON document `/debug/state` serves (built in src/cli/run.ts `startController`). Times are
 * epoch **milliseconds**. A controller that is switched off is absent.
 */
export interface DebugState {
  /** Identity of the process that answered (`hostname_uuid`). */
  identity: string;
  /** Identity of the current leader as that process sees it (its own identity with election off; '' when unknown). */
  leader: string;
  nodeLifecycle?: NodeLifecycleView;
  taintEviction?: PendingPodDeletion[];
  podGC?: PodGCView;
  forceDetach?: ForceDetachView;
  /** The `--feature-gates` the process runs with (absent before issue 53). */
  featureGates?: Partial<FeatureGates>;
  /** Present only on a `--dry-run` (shadow) process: its decisions (src/shadow/). */
  shadow?: ShadowDebugState;
  informers?: unknown[];
}

/**
 * Checks that a parsed JSON value looks like a {@link DebugState} (the fields the commands read).
 * @returns the same value, typed.
 * @throws {Error} naming the first missing or mistyped field.
 */
export function asDebugState(json: unknown): DebugState {
  const o = json as Record<string, unknown> | null;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error('/debug/state did not return a JSON object');
  if (typeof o['identity'] !== 'string') throw new Error('/debug/state has no "identity" string: is this a node-lifecycle-controller?');
  const nlc = o['nodeLifecycle'] as Record<string, unknown> | undefined;
  if (nlc !== undefined && (!Array.isArray(nlc['zones']) || !Array.isArray(nlc['nodes']))) {
    throw new Error('/debug/state "nodeLifecycle" lacks "zones" or "nodes"');
  }
  if (o['taintEviction'] !== undefined && !Array.isArray(o['taintEviction'])) throw new Error('/debug/state "taintEviction" is not a list');
  return { ...(o as unknown as DebugState), leader: typeof o['leader'] === 'string' ? o['leader'] : '' };
}

/** Where a {@link DebugState} came from. */
export interface StateSource {
  kind: 'endpoint' | 'pod-proxy' | 'port-forward';
  /** The URL fetched (for `pod-proxy`, the API server path; for `port-forward`, `https://<server name>:<port>/debug/state` inside the tunnel). */
  url: string;
  /** The leader's pod, for `pod-proxy` and `port-forward`. */
  pod?: { namespace: string; name: string };
  /** For `port-forward`: what the TLS check established (see {@link tlsVerificationNote}). */
  tls?: string;
}

/**
 * The pod name inside a leader-election holder identity `<hostname>_<uuid>` (a pod's hostname is
 * its name; neither a hostname nor a UUID contains `_`).
 * @returns the pod name, or undefined for an empty identity or one without `_`.
 * Mirrors the identity kube-controller-manager builds (`id + "_" + uuid.NewUUID()`).
 */
export function leaderPodName(holderIdentity: string): string | undefined {
  const i = holderIdentity.lastIndexOf('_');
  if (i <= 0) return undefined;
  return holderIdentity.slice(0, i);
}

/**
 * A zone label as `view()` gives it (`"region:zone"` in quotes) without the quotes.
 * @returns e.g. `region-1:zone-a`; the label-less zone stays as its note.
 */
export function zoneName(zoneLabel: string): string {
  return /^".*"$/.test(zoneLabel) ? zoneLabel.slice(1, -1) : zoneLabel;
}

/**
 * The eviction guards of a `/debug/state` document (`--max-unhealthy-nodes` and storm detection). Read narrowly: a controller
 * without the guards, or with the node lifecycle controller off, has none.
 * @returns the guards, possibly empty. Never throws.
 */
export function evictionGuardsOf(state: DebugState | undefined): readonly EvictionGuardView[] {
  // Absent in the /debug/state of a controller older than the eviction guards, whatever the type says.
  const guards: unknown = state?.nodeLifecycle?.evictionGuards;
  return Array.isArray(guards) ? (guards as EvictionGuardView[]) : [];
}

/**
 * The node lifecycle controller's view of a node's zone.
 * @returns the zone from `view.zones` whose label is the node's zone key, or undefined (no view, or
 *   the zone is not in it). Never throws.
 */
export function zoneOf(node: Node, view: NodeLifecycleView | undefined): ZoneView | undefined {
  const label = formatZoneKey(getZoneKey(node.labels));
  return view?.zones.find((z) => z.zoneLabel === label);
}

/**
 * Whether NoExecute tainting is held back for the zone: an open cluster-wide eviction guard (it
 * holds every zone, so it is named first), a pause reason, or a zero rate.
 * @returns where and why tainting is held, or undefined when it is not. Never throws.
 */
export function pauseOf(zone: ZoneView | undefined, guards: readonly EvictionGuardView[]): { zone: string; state: string; reason: string; guard?: string } | undefined {
  const open = guards.find((g) => g.open);
  if (open) return { zone: zone ? zoneName(zone.zoneLabel) : '(every zone)', state: zone?.state ?? '', reason: open.reason, guard: open.guard };
  if (!zone) return undefined;
  if (zone.pausedReason === undefined && zone.rate > 0) return undefined;
  return {
    zone: zoneName(zone.zoneLabel),
    state: zone.state,
    reason: zone.pausedReason ?? `the zone's tainting rate is 0 (zone state ${zone.state})`,
  };
}
