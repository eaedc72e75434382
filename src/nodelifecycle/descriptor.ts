/**
 * The node lifecycle controller's entry in the controller registry (src/controllers/registry.ts):
 * its names, its caches, how it is built from the flags, and which cache events it handles.
 *
 * Upstream: `newNodeLifecycleControllerDescriptor` and `newNodeLifecycleController`
 * (`cmd/kube-controller-manager/app/core.go`), and the informer handlers that
 * `NewNodeLifecycleController` registers (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`).
 */
import type { Lease, Node, Pod } from '../kube/objects.js';
import type { ControllerDescriptor, ControllerSources } from '../controllers/context.js';
import { nodeLifecycleConfigFrom } from '../controllers/nodelifecycleconfig.js';
import { NodeLifecycleController } from './controller.js';
import { podSelectedByDaemonSet } from './daemonsets.js';
import type { LeaseCircuitBreakerIO } from './parts.js';

/**
 * The Lease circuit breaker's I/O over the controller's live read and the Lease cache.
 * `readLease` also hands each live resourceVersion to the cache's `expectResourceVersion` (live
 * caches only): the live Lease proves how far the Lease watch should have got, and one still behind
 * it a few seconds later is stalled and restarted (src/kube/informer.ts), so a stuck stream holds the
 * breaker for seconds rather than until client-node's 30 s inactivity timeout. Not upstream; it
 * changes no decision (the breaker's verdict and hold are as before), it only restarts a watch.
 * @param readNodeLease the quorum GET (`ControllerIO.readNodeLease`): resourceVersion, `undefined` for 404; throws otherwise
 * @returns the {@link LeaseCircuitBreakerIO} the health part uses. Never throws itself.
 */
export function leaseCircuitBreakerIO(
  readNodeLease: (nodeName: string) => Promise<{ resourceVersion: string } | undefined>,
  leases: ControllerSources['leases'],
): LeaseCircuitBreakerIO {
  return {
    readLease: async (n) => {
      const live = await readNodeLease(n);
      if (live) leases.expectResourceVersion?.(live.resourceVersion);
      return live;
    },
    cacheResourceVersion: () => leases.resourceVersion(),
  };
}

/** `node-lifecycle-controller` (alias `nodelifecycle`, the pre-1.29 name). */
export const nodeLifecycleDescriptor = {
  name: 'node-lifecycle-controller',
  aliases: ['nodelifecycle'],
  disabledByDefault: false,
  eventSource: 'node-controller',
  key: 'nodeLifecycle',
  informers: ['nodes', 'leases', 'pods', 'daemonSets'],
  // Pod labels cost memory on every pod; only legacy eviction reads them (1.20's DaemonSet selector rule).
  needsPodLabels: (config) => !config.enableTaintManager,
  build(ctx) {
    const { config, sources } = ctx;
    const { nodes, leases, pods, daemonSets } = sources;
    const legacyEviction = !config.enableTaintManager;
    const io = ctx.io(nodeLifecycleDescriptor);
    return new NodeLifecycleController({
      config: nodeLifecycleConfigFrom(config),
      clock: ctx.clock,
      log: ctx.log,
      caches: {
        nodes,
        leases,
        pods: { get: (k) => pods.get(k), list: () => pods.list(), podsOnNode: (n) => pods.onNode(n) },
        daemonSets: {
          has: (k) => daemonSets.has(k),
          // 1.20 GetPodDaemonSets; the pods carry labels only in legacy mode, the only caller.
          ...(legacyEviction
            ? { selectsPod: (p: Pod) => podSelectedByDaemonSet({ namespace: p.namespace, labels: p.labels ?? {} }, daemonSets.inNamespace(p.namespace)) }
            : {}),
        },
      },
      writes: io.nodeLifecycleWrites(),
      events: io.events,
      metrics: ctx.metrics.nodeCollector,
      canSeeCluster: ctx.canSeeCluster,
      watchingCluster: ctx.sees([nodes, leases]),
      judgements: ctx.judgements,
      ...(config.featureGates.NodeControllerLeaseCircuitBreaker
        ? { leaseCircuitBreaker: leaseCircuitBreakerIO((n) => io.readNodeLease(n), leases) }
        : {}),
    });
  },
  subscribe(nlc, { nodes, leases, pods }) {
    // Sight as it changes, not only when a pass samples it (monitor.ts `sightChanged`).
    for (const s of [nodes, leases]) s.subscribe({ watching: () => nlc.sightChanged() });
    nodes.subscribe({ add: (n: Node) => nlc.nodeChanged(n.name), update: (_o, n) => nlc.nodeChanged(n.name), delete: (n) => nlc.nodeDeleted(n.name) });
    // A Lease of a node the cache does not hold (another controller's scope, or not yet seen) is no news.
    const onLease = (l: Lease): void => {
      if (nodes.get(l.name)) nlc.leaseChanged(l.name);
    };
    leases.subscribe({ add: onLease, update: (_o, l) => onLease(l) });
    pods.subscribe({ add: (p) => nlc.podChanged(p), update: (o, p) => nlc.podChanged(p, o) });
  },
} as const satisfies ControllerDescriptor<'nodeLifecycle'>;
