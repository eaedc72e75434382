/**
 * The node affinity enforcer's entry in the controller registry (src/controllers/registry.ts). Off
 * by default. It needs pod annotations and affinity, which the shared slim pods drop, so it reads
 * its own pod cache (`affinityPods`), which exists only when it is enabled.
 *
 * Not upstream: kube-controller-manager has no such controller (its descriptor shape is the model).
 */
import type { ControllerDescriptor } from '../controllers/context.js';
import { requireSource } from '../controllers/context.js';
import { NODE_AFFINITY_ENFORCER_NAME, NodeAffinityEnforcer } from './controller.js';

/** `node-affinity-enforcer` (ours; no alias). */
export const nodeAffinityDescriptor = {
  name: NODE_AFFINITY_ENFORCER_NAME,
  aliases: [],
  disabledByDefault: true,
  ourOwn: true,
  eventSource: NODE_AFFINITY_ENFORCER_NAME,
  key: 'nodeAffinity',
  informers: ['nodes', 'affinityPods'],
  build(ctx) {
    const { nodes } = ctx.sources;
    const pods = requireSource(ctx.sources, 'affinityPods');
    const io = ctx.io(nodeAffinityDescriptor);
    return new NodeAffinityEnforcer({
      clock: ctx.clock,
      log: ctx.log,
      caches: { nodes, pods: { get: (k) => pods.get(k), list: () => pods.list(), podsOnNode: (n) => pods.onNode(n) } },
      evictor: io.affinityEvictor(),
      events: io.events,
      metrics: ctx.metrics.nodeAffinity,
      canSeeCluster: ctx.sees([nodes, pods]),
      options: {
        graceMs: ctx.config.affinityViolationGrace,
        evictionRate: ctx.config.affinityEvictionRate,
        maxEvictionsPerNode: ctx.config.affinityMaxEvictionsPerNode,
        maxEvictionsTotal: ctx.config.affinityMaxEvictionsTotal,
      },
    });
  },
  subscribe(na, sources) {
    const { nodes } = sources;
    const pods = requireSource(sources, 'affinityPods');
    for (const s of [nodes, pods]) s.subscribe({ watching: () => na.sightChanged() });
    nodes.subscribe({ add: (n) => na.nodeChanged(n), update: (o, n) => na.nodeChanged(n, o), delete: (n) => na.nodeChanged(n) });
    pods.subscribe({ add: (p) => na.podChanged(p), update: (_o, p) => na.podChanged(p), delete: (p) => na.podDeleted(p) });
  },
} as const satisfies ControllerDescriptor<'nodeAffinity'>;
