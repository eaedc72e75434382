/**
 * The taint eviction controller's entry in the controller registry (src/controllers/registry.ts).
 *
 * Upstream: `newTaintEvictionControllerDescriptor` and `newTaintEvictionController`
 * (`cmd/kube-controller-manager/app/core.go`, 1.29+), and the handlers `tainteviction.New`
 * registers (`pkg/controller/tainteviction/taint_eviction.go`). Before 1.29 the taint manager ran
 * inside `nodelifecycle` and had no name of its own, hence no alias.
 */
import type { ControllerDescriptor } from '../controllers/context.js';
import { TaintEvictionController } from './controller.js';
import { TAINT_EVICTION_CONTROLLER_NAME } from './events.js';

/** `taint-eviction-controller`. */
export const taintEvictionDescriptor = {
  name: 'taint-eviction-controller',
  aliases: [],
  disabledByDefault: false,
  eventSource: TAINT_EVICTION_CONTROLLER_NAME,
  key: 'taintEviction',
  informers: ['nodes', 'pods', 'leases'],
  // As in 1.20, --enable-taint-manager=false means no NoExecute-based eviction at all.
  notStartedBecause: (config) => (config.enableTaintManager ? undefined : '--enable-taint-manager=false'),
  build(ctx) {
    const { nodes, pods, leases } = ctx.sources;
    const io = ctx.io(taintEvictionDescriptor);
    const decisions = ctx.serverDecisions;
    const te = new TaintEvictionController({
      clock: ctx.clock,
      log: ctx.log,
      caches: { nodes, pods: { get: (k) => pods.get(k), list: () => pods.list(), podsOnNode: (n) => pods.onNode(n) } },
      writes: io.taintEvictionWrites(),
      events: io.events,
      metrics: ctx.metrics.taintEviction,
      // A pod is only deleted while its node's taints, the pod itself and the node heartbeats (the
      // node lifecycle controller's view; see the sight hold in src/tainteviction/sight.ts) are current.
      canSeeCluster: ctx.sees([nodes, pods, leases]),
      // The start hold: deletions for the node lifecycle controller's taints wait for its confirmation.
      judgements: ctx.judgements,
      // Decided from the API server's version where `run` reads it; the flag alone elsewhere (what-if).
      options: {
        disruptionConditions: decisions ? () => decisions().disruptionConditions : ctx.config.featureGates.PodDisruptionConditions,
        nodeMonitorGracePeriodMs: ctx.config.nodeMonitorGracePeriod,
        tolerationComparisonOperators: ctx.config.featureGates.TaintTolerationComparisonOperators,
      },
    });
    // Level-based: a changed judgement re-decides the node's pods from the caches.
    ctx.judgements.onChange((node) => te.judgementChanged(node));
    return te;
  },
  subscribe(te, { nodes, pods, leases }) {
    for (const s of [nodes, pods, leases]) s.subscribe({ watching: () => te.sightChanged() });
    nodes.subscribe({ add: (n) => te.nodeChanged(n), update: (o, n) => te.nodeChanged(n, o), delete: (n) => te.nodeDeleted(n) });
    pods.subscribe({ add: (p) => te.podChanged(p), update: (o, p) => te.podChanged(p, o), delete: (p) => te.podDeleted(p) });
  },
} as const satisfies ControllerDescriptor<'taintEviction'>;
