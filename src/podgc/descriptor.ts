/**
 * The pod garbage collector's entry in the controller registry (src/controllers/registry.ts).
 *
 * Upstream: `newPodGarbageCollectorControllerDescriptor` and `newPodGarbageCollectorController`
 * (`cmd/kube-controller-manager/app/core.go`), and the handlers `podgc.NewPodGC` registers
 * (`pkg/controller/podgc/gc_controller.go`).
 */
import type { ControllerDescriptor } from '../controllers/context.js';
import { PodGCController } from './controller.js';
import { GC_CHECK_PERIOD_MS, ORPHAN_QUARANTINE_MS, POD_GC_CONTROLLER_NAME } from './decision.js';

/** `pod-garbage-collector-controller` (alias `podgc`, the pre-1.29 name). */
export const podGCDescriptor = {
  name: 'pod-garbage-collector-controller',
  aliases: ['podgc'],
  disabledByDefault: false,
  eventSource: POD_GC_CONTROLLER_NAME,
  key: 'podGC',
  informers: ['nodes', 'pods'],
  build(ctx) {
    const { nodes, pods } = ctx.sources;
    const io = ctx.io(podGCDescriptor);
    return new PodGCController({
      // With --node-selector the node cache holds only some nodes: a pod on another is not an orphan.
      config: {
        orphanQuarantineMs: ORPHAN_QUARANTINE_MS,
        sweepPeriodMs: GC_CHECK_PERIOD_MS,
        scoped: ctx.config.nodeSelector.trim() !== '',
        terminatedPodThreshold: ctx.config.terminatedPodGCThreshold,
      },
      clock: ctx.clock,
      log: ctx.log,
      caches: { nodes, pods: { get: (k) => pods.get(k), list: () => pods.list(), podsOnNode: (n) => pods.onNode(n) } },
      writes: io.podGCWrites(),
      events: io.events,
      metrics: ctx.metrics.podGC,
      canSeeCluster: ctx.sees([nodes, pods]),
    });
  },
  subscribe(gc, { nodes, pods }) {
    nodes.subscribe({ add: (n) => gc.nodeChanged(n), update: (_o, n) => gc.nodeChanged(n), delete: (n) => gc.nodeDeleted(n) });
    pods.subscribe({ add: (p) => gc.podChanged(p), update: (_o, p) => gc.podChanged(p) });
  },
} as const satisfies ControllerDescriptor<'podGC'>;
