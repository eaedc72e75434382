/**
 * What differs between the Kubernetes minors this program supports (1.20, 1.34–1.37), decided from
 * the API server's `/version` (src/kube/serverversion.ts) and the configuration, never assumed:
 * - the kube-controller-manager `--controllers` value that switches off the loops this program
 *   replaces (canonical names since 1.29, the short aliases before);
 * - whether informers try a streaming watch-list first;
 * - whether the taint eviction controller adds the `DisruptionTarget` pod condition;
 * - whether the node lifecycle controller's Lease circuit breaker runs.
 * Pure: {@link decideForServer} has no I/O; `run` reads `/version` and logs the result.
 *
 * Upstream: the feature gates' version tables in `pkg/features/kube_features.go`
 * (`PodDisruptionConditions`, `NodeControllerLeaseCircuitBreaker`, `SeparateTaintEvictionController`),
 * client-go's `WatchListClient` (`client-go/features/known_features.go`) and the apiserver's
 * `WatchList` gate.
 */
import { watchListClientEnabled } from '../kube/listwatch.js';
import type { ServerVersion } from '../kube/serverversion.js';
import type { ControllerConfig, FeatureGates } from './config.js';
import { kubeControllerManagerDisableFlags } from './names.js';

/** First minor whose kube-controller-manager names controllers canonically and runs taint eviction as its own controller. */
export const CANONICAL_CONTROLLER_NAMES_SINCE = 29;
/** First minor whose API server knows `sendInitialEvents` (alpha `WatchList` in 1.27); older ones refuse every watch-list. */
export const WATCH_LIST_SERVED_SINCE = 27;
/** First minor whose kube-controller-manager adds `DisruptionTarget` by default (`PodDisruptionConditions` beta, on). */
export const DISRUPTION_CONDITIONS_SINCE = 26;

/** The decisions, each with the one-line reason `run` logs. */
export interface ServerDecisions {
  /** The server's version, or undefined when it could not be read (every decision then follows the configuration). */
  server: ServerVersion | undefined;
  /** `--controllers` for this server's kube-controller-manager; undefined for an unknown server (both forms apply). */
  kubeControllerManagerFlags: string | undefined;
  /** Informers try a watch-list first (and fall back to list+watch when refused). */
  watchList: boolean;
  /** The taint eviction controller adds `DisruptionTarget` before each deletion. */
  disruptionConditions: boolean;
  /** The node lifecycle controller reads an expired node's Lease live before acting. */
  leaseCircuitBreaker: boolean;
  /** Why, per decision. */
  reasons: { kubeControllerManagerFlags: string; watchList: string; disruptionConditions: string; leaseCircuitBreaker: string };
}

/**
 * Decides what differs between minors for one server.
 * - Controller names: canonical (`-node-lifecycle-controller,…,-taint-eviction-controller`) from
 *   1.29, the short aliases before (there the taint manager runs inside `nodelifecycle`).
 * - Watch-list: off with `--feature-gates=WatchListClient=false` (or, when the flag does not set
 *   the gate, `KUBE_FEATURE_WatchListClient=false`); off below 1.27, whose servers refuse
 *   every watch-list (a deliberate difference from client-go, which tries and falls back at each
 *   relist: only fewer requests, the same cache); otherwise tried, and the informer falls back to
 *   list+watch when the server refuses it (its WatchList gate off), as client-go does.
 * - DisruptionTarget: an explicit `--feature-gates=PodDisruptionConditions=…` wins; otherwise on
 *   from 1.26 and off below, as that server's own kube-controller-manager does. Off is one write
 *   fewer per eviction, never an earlier or extra one (docs/taint-eviction.md, difference 13).
 * - Lease circuit breaker: an explicit `NodeControllerLeaseCircuitBreaker=…` wins; otherwise on for
 *   every minor. It needs only a live GET of the node's Lease (coordination.k8s.io/v1, served since
 *   1.14); kube-controller-manager has it only from 1.37, but switching it off for older servers
 *   would act sooner than v1.37.2 does, which the safety rule forbids.
 * @param server the server's version; undefined when it could not be read.
 * @param config `featureGates` and which of them the flags set explicitly.
 * @param env the process environment (`KUBE_FEATURE_WatchListClient`, read when `--feature-gates` does not set the gate).
 * @returns the decisions with their reasons. Never throws.
 */
export function decideForServer(
  server: ServerVersion | undefined,
  config: Pick<ControllerConfig, 'featureGates' | 'explicitFeatureGates'>,
  env: NodeJS.ProcessEnv = process.env,
): ServerDecisions {
  const explicit = (gate: keyof FeatureGates): boolean => config.explicitFeatureGates?.includes(gate) ?? false;
  const minor = server !== undefined && server.major === 1 ? server.minor : undefined;
  const at = server ? `server ${server.gitVersion}` : 'server version unknown';

  const flags = kubeControllerManagerDisableFlags();
  const canonical = minor === undefined || minor >= CANONICAL_CONTROLLER_NAMES_SINCE;
  const kubeControllerManagerFlags = minor === undefined ? undefined : canonical ? flags.canonical : flags.short;
  const namesWhy = minor === undefined ? `${at}: canonical names on 1.29+, short aliases on 1.20–1.28` : canonical ? `${at}: canonical names (1.29+)` : `${at}: short aliases (before 1.29 the taint manager runs inside nodelifecycle)`;

  // kube-controller-manager reads client-go's gates from --feature-gates only; a client-go program
  // from KUBE_FEATURE_*. Ours: a named gate wins, else the variable, else the gate's default (on).
  let watchList = explicit('WatchListClient') ? config.featureGates.WatchListClient : watchListClientEnabled(env);
  let watchWhy = watchList
    ? `${at}: tried first; list+watch when the server refuses it`
    : explicit('WatchListClient') ? '--feature-gates WatchListClient=false' : 'KUBE_FEATURE_WatchListClient=false';
  if (watchList && minor !== undefined && minor < WATCH_LIST_SERVED_SINCE) {
    watchList = false;
    watchWhy = `${at}: servers before 1.${WATCH_LIST_SERVED_SINCE} refuse every watch-list; list+watch`;
  }

  let disruptionConditions = config.featureGates.PodDisruptionConditions;
  let disruptionWhy = `${at}: --feature-gates PodDisruptionConditions=${disruptionConditions}`;
  if (!explicit('PodDisruptionConditions') && minor !== undefined) {
    disruptionConditions = minor >= DISRUPTION_CONDITIONS_SINCE;
    disruptionWhy = disruptionConditions ? `${at}: on by default since 1.${DISRUPTION_CONDITIONS_SINCE}` : `${at}: kube-controller-manager before 1.${DISRUPTION_CONDITIONS_SINCE} deletes without it (one write per eviction)`;
  }

  const leaseCircuitBreaker = config.featureGates.NodeControllerLeaseCircuitBreaker;
  const breakerWhy = explicit('NodeControllerLeaseCircuitBreaker')
    ? `--feature-gates NodeControllerLeaseCircuitBreaker=${leaseCircuitBreaker}`
    : `${at}: on for every minor (needs only a Lease GET; off would act sooner than v1.37.2)`;

  return {
    server,
    kubeControllerManagerFlags,
    watchList,
    disruptionConditions,
    leaseCircuitBreaker,
    reasons: { kubeControllerManagerFlags: namesWhy, watchList: watchWhy, disruptionConditions: disruptionWhy, leaseCircuitBreaker: breakerWhy },
  };
}
