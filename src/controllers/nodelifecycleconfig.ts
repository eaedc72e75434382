/**
 * The node lifecycle controller's configuration from the parsed flags: one mapping, used by the node
 * lifecycle controller's descriptor (src/nodelifecycle/descriptor.ts) for `run` and `what-if`, and by
 * what-if's report (src/whatif/run.ts), so a what-if runs exactly the
 * configuration `run` would.
 */
import { evictionGuardsConfig } from '../nodelifecycle/guard.js';
import type { NodeLifecycleConfig } from '../nodelifecycle/controller.js';
import type { ControllerConfig } from './config.js';

/**
 * Maps the `run` flags to {@link NodeLifecycleConfig}.
 * @param config the parsed flags (durations in **milliseconds**).
 * @returns the controller's configuration (durations in **milliseconds**, rates in nodes per second). Never throws.
 * Upstream analogue: kube-controller-manager's `startNodeLifecycleController`, which passes the
 * `NodeLifecycleControllerConfiguration` fields to `nodelifecycle.NewNodeLifecycleController`.
 */
export function nodeLifecycleConfigFrom(config: ControllerConfig): NodeLifecycleConfig {
  return {
    nodeMonitorPeriodMs: config.nodeMonitorPeriod,
    nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriod,
    nodeStartupGracePeriodMs: config.nodeStartupGracePeriod,
    nodeEvictionRate: config.nodeEvictionRate,
    secondaryNodeEvictionRate: config.secondaryNodeEvictionRate,
    largeClusterSizeThreshold: config.largeClusterSizeThreshold,
    unhealthyZoneThreshold: config.unhealthyZoneThreshold,
    enableTaintManager: config.enableTaintManager,
    podEvictionTimeoutMs: config.podEvictionTimeout,
    // Guards against mass eviction: --max-unhealthy-nodes and storm detection; {} (off) unless a flag is set.
    evictionGuards: evictionGuardsConfig(config),
  };
}
