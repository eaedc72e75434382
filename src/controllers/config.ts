/**
 * The validated configuration of the `run` command, as the registry (src/controllers/registry.ts)
 * and every controller descriptor read it. src/cli/flags.ts parses and validates the flags into it;
 * this file only holds the shape, so that nothing below the command line imports the flag parser.
 *
 * Upstream analogue: kube-controller-manager's `config.CompletedConfig`
 * (`cmd/kube-controller-manager/app/config/config.go`), which the controller init functions read.
 */
import type { KubeContentType } from '../kube/contenttype.js';
import type { LogFormat, LogLevel } from '../log/logger.js';
import type { ServingConfig } from '../metrics/serving.js';
import type { CountOrPercent } from '../nodelifecycle/guard.js';

/** The validated configuration of the `run` command (the serving flags: {@link ServingConfig}). All durations are in **milliseconds**. */
export interface ControllerConfig extends ServingConfig {
  /** `--kubeconfig`: path, or undefined for in-cluster / default loading. */
  kubeconfig: string | undefined;
  /** `--config`: the config file that was read, if any. */
  configFile: string | undefined;
  /** `--controllers`, with aliases replaced by canonical names (`-` prefixes and `*` kept); see `isControllerEnabled` (src/controllers/names.ts). */
  controllers: readonly string[];
  /** `--node-monitor-period` in **milliseconds** (> 0). */
  nodeMonitorPeriod: number;
  /** `--node-monitor-grace-period` in **milliseconds** (>= nodeMonitorPeriod). */
  nodeMonitorGracePeriod: number;
  /** `--node-startup-grace-period` in **milliseconds**. */
  nodeStartupGracePeriod: number;
  /** `--node-eviction-rate` in **nodes per second**. */
  nodeEvictionRate: number;
  /** `--secondary-node-eviction-rate` in **nodes per second**. */
  secondaryNodeEvictionRate: number;
  /** `--large-cluster-size-threshold` in **nodes** (integer >= 0). */
  largeClusterSizeThreshold: number;
  /** `--unhealthy-zone-threshold`: fraction in (0, 1]. */
  unhealthyZoneThreshold: number;
  /** `--enable-taint-manager`: false selects the legacy 1.20 direct-eviction mode. */
  enableTaintManager: boolean;
  /** `--pod-eviction-timeout` in **milliseconds** (legacy mode only). */
  podEvictionTimeout: number;
  /** `--max-unhealthy-nodes`: the circuit breaker's limit; undefined (empty flag) = off. */
  maxUnhealthyNodes: CountOrPercent | undefined;
  /** `--storm-threshold`: undefined (empty flag) = storm detection off. */
  stormThreshold: CountOrPercent | undefined;
  /** `--storm-window` in **milliseconds** (> 0). */
  stormWindow: number;
  /** `--storm-hold` in **milliseconds** (>= 0). */
  stormHold: number;
  /** `--kube-api-qps` in **requests per second** (> 0). */
  kubeApiQps: number;
  /** `--kube-api-burst` in **requests** (integer >= 1). */
  kubeApiBurst: number;
  /** `--kube-api-content-type`: what the Pod, Node and Lease informers read (src/kube/wire.ts); absent = that module's default. */
  kubeApiContentType?: KubeContentType;
  /** `--leader-elect`. */
  leaderElect: boolean;
  /** `--leader-elect-lease-duration` in **milliseconds**. */
  leaderElectLeaseDuration: number;
  /** `--leader-elect-renew-deadline` in **milliseconds**. */
  leaderElectRenewDeadline: number;
  /** `--leader-elect-retry-period` in **milliseconds**. */
  leaderElectRetryPeriod: number;
  /** `--leader-elect-resource-name`: Lease name (with `--dry-run` and no explicit name: src/cli/flags.ts `SHADOW_LEASE_NAME`). */
  leaderElectResourceName: string;
  /** `--leader-elect-resource-namespace`: Lease namespace. */
  leaderElectResourceNamespace: string;
  /** `--terminated-pod-gc-threshold` in **pods**; 0 or less disables the terminated-pod pass (as upstream). */
  terminatedPodGCThreshold: number;
  /** `--force-detach-timeout` in **milliseconds**. */
  forceDetachTimeout: number;
  /** `--disable-force-detach-on-timeout`. */
  disableForceDetachOnTimeout: boolean;
  /** `--affinity-violation-grace` in **milliseconds** (node-affinity-enforcer). */
  affinityViolationGrace: number;
  /** `--affinity-eviction-rate` in **pods per second** (>= 0). */
  affinityEvictionRate: number;
  /** `--affinity-max-evictions-per-node` in **pods** (0: no cap). */
  affinityMaxEvictionsPerNode: number;
  /** `--affinity-max-evictions-total` in **pods** (0: no cap). */
  affinityMaxEvictionsTotal: number;
  /** `--log-level`. */
  logLevel: LogLevel;
  /** `--log-format`. */
  logFormat: LogFormat;
  /** `--node-selector`: label selector text; '' selects all nodes. Parse with `parseLabelSelector` (src/kube/labelselector.ts). */
  nodeSelector: string;
  /** `--dry-run`: shadow mode, no writes (src/shadow/). */
  dryRun: boolean;
  /**
   * `--feature-gates`, every gate that changes something here resolved to its value (defaults
   * filled in); see src/cli/featuregates.ts `parseFeatureGates`, which accepts every gate of
   * kube-controller-manager 1.37.2 and refuses what it refuses.
   */
  featureGates: FeatureGates;
  /**
   * The gates `--feature-gates` sets, by name or through `AllAlpha`/`AllBeta` (the others hold their defaults). A gate whose default
   * depends on the API server's minor (src/controllers/serverdecisions.ts) follows the server
   * unless named here. Undefined: none named.
   */
  explicitFeatureGates?: readonly (keyof FeatureGates)[];
}

/**
 * The feature gates that change a decision or the behaviour of these controllers, with upstream's
 * names (docs/upstream-1.37.md, "Feature gates"). kube-controller-manager's other gates are accepted
 * and change nothing here.
 */
export interface FeatureGates {
  /**
   * Upstream `PodDisruptionConditions` (beta and on by default in 1.26, GA in 1.31): add the
   * `DisruptionTarget` condition to a pod before the taint eviction controller deletes it.
   * Default true. Off, each eviction is one DELETE, as in kube-controller-manager 1.20–1.25.
   */
  PodDisruptionConditions: boolean;
  /**
   * Upstream `NodeControllerLeaseCircuitBreaker` (beta and on by default in 1.37, kubernetes
   * #138698): the node lifecycle controller reads an expired node's Lease live before acting on it
   * (docs/node-lifecycle.md). Default true. Off, the Lease cache decides alone, as in 1.36.
   */
  NodeControllerLeaseCircuitBreaker: boolean;
  /**
   * Upstream `TaintTolerationComparisonOperators` (alpha since 1.35, off by default in 1.37): the
   * `Lt` and `Gt` toleration operators compare a taint's value as an integer. Off, a toleration
   * with either operator tolerates no taint, so the taint eviction controller deletes a pod it left
   * uncovered (src/tainteviction/tolerations.ts `toleratesTaint`). Default false.
   */
  TaintTolerationComparisonOperators: boolean;
  /**
   * client-go `WatchListClient` (beta, on by default since 1.35; kube-controller-manager takes
   * client-go's gates in its --feature-gates): informers try a streaming watch-list before a list.
   * Default true. Off, informers list then watch (src/controllers/serverdecisions.ts).
   */
  WatchListClient: boolean;
}
