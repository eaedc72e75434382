/**
 * The controllers' context over the in-memory cluster (src/whatif/cluster.ts): its maps as the
 * caches (always synced and watching), its writes as every controller's writers, its Event sinks.
 * With this context, src/whatif/run.ts builds the controllers through the same registry as `run`
 * (src/controllers/registry.ts), so both run the same controllers with the same wiring.
 */
import type { ControllerIO, ControllerSources, Source, SourceHandlers } from '../controllers/context.js';
import { leaseKey } from '../kube/informerfactory.js';
import type { Pod } from '../kube/objects.js';
import type { AffinityPod, PodRule } from '../nodeaffinity/rule.js';
import type { InMemoryCluster, ResourceHandlers } from './cluster.js';

/** A source that is always synced and watching: the in-memory maps are the API. */
function mapSource<T>(store: { get(k: string): T | undefined; list(): readonly T[] }, subscribe: (h: ResourceHandlers<T>) => void): Source<T> {
  return {
    get: (k) => store.get(k),
    list: () => store.list(),
    hasSynced: () => true,
    isWatching: () => true,
    blindForMs: () => 0,
    subscribe(h: SourceHandlers<T>) {
      // `watching` never fires: the in-memory cluster has no watch stream to lose.
      const r: ResourceHandlers<T> = {};
      if (h.add) r.add = h.add;
      if (h.update) r.update = h.update;
      if (h.delete) r.delete = h.delete;
      if (r.add || r.update || r.delete) subscribe(r);
    },
  };
}

const NO_RULE: PodRule = { kind: 'none' };

/**
 * What {@link clusterSources} reads of a cluster: its maps, lists and subscriptions. An
 * {@link InMemoryCluster}, or a view of one (the fuzz harness's wire mirror, test/fuzz/wire.ts,
 * which holds the objects as they came through the protobuf or JSON path).
 */
export type ClusterReads = Pick<
  InMemoryCluster,
  'nodes' | 'leases' | 'pods' | 'daemonSets' | 'volumeAttachments' | 'pvcs' | 'pvs' | 'nodeList' | 'podList' | 'podsOnNode' | 'volumeAttachmentsOnNode' | 'leaseResourceVersion' | 'on'
>;

/**
 * What the node affinity enforcer keeps of a pod, from the snapshot's slim pod. The snapshot keeps
 * neither annotations nor affinity, so a pod has no rule to enforce (`kind: 'none'`) unless
 * `ruleOf` gives one (the fuzz harness does).
 */
function affinityPodOf(p: Pod, ruleOf: (p: Pod) => PodRule): AffinityPod {
  return {
    namespace: p.namespace,
    name: p.name,
    uid: p.uid,
    resourceVersion: p.resourceVersion,
    nodeName: p.nodeName,
    phase: p.phase,
    ...(p.deletionTimestamp !== undefined ? { deletionTimestamp: p.deletionTimestamp } : {}),
    daemonSet: p.ownerReferences.some((o) => o.kind === 'DaemonSet' && o.controller === true),
    mirror: false,
    rule: ruleOf(p),
  };
}

/**
 * The caches of `cluster` as {@link ControllerSources}, every optional one included.
 * @param ruleOf each pod's node affinity rule (default: none, as the snapshot keeps no annotations).
 * @returns the sources. Never throws.
 */
export function clusterSources(cluster: ClusterReads, ruleOf: (p: Pod) => PodRule = () => NO_RULE): ControllerSources {
  // One AffinityPod per pod version: list() and events hand out the same object for the same pod.
  const affinity = new WeakMap<Pod, AffinityPod>();
  const asAffinity = (p: Pod): AffinityPod => {
    let a = affinity.get(p);
    if (!a) affinity.set(p, (a = affinityPodOf(p, ruleOf)));
    return a;
  };
  const podsOf = {
    get: (k: string) => {
      const p = cluster.pods.get(k);
      return p && p.nodeName !== '' ? asAffinity(p) : undefined;
    },
    // Scheduled pods only, as the enforcer's informer watches `spec.nodeName!=`.
    list: () => cluster.podList().filter((p) => p.nodeName !== '').map(asAffinity),
  };
  return {
    // The in-memory cluster's nodes are objects, not wire data: every one is readable.
    nodes: { ...mapSource({ get: (k) => cluster.nodes.get(k), list: () => cluster.nodeList() }, (h) => cluster.on('nodes', h)), newestUnreadable: () => false },
    leases: {
      ...mapSource({ get: (k) => cluster.leases.get(k), list: () => [...cluster.leases.values()] }, (h) => cluster.on('leases', h)),
      resourceVersion: () => cluster.leaseResourceVersion(),
    },
    pods: { ...mapSource({ get: (k) => cluster.pods.get(k), list: () => cluster.podList() }, (h) => cluster.on('pods', h)), onNode: (n) => cluster.podsOnNode(n) },
    daemonSets: { has: (k) => cluster.daemonSets.has(k), inNamespace: (ns) => [...cluster.daemonSets.values()].filter((d) => d.namespace === ns) },
    volumeAttachments: {
      ...mapSource({ get: (k) => cluster.volumeAttachments.get(k), list: () => [...cluster.volumeAttachments.values()] }, (h) => cluster.on('volumeAttachments', h)),
      onNode: (n) => cluster.volumeAttachmentsOnNode(n),
    },
    // Claims and volumes do not change during a what-if: nothing to subscribe to.
    pvcs: mapSource({ get: (k) => cluster.pvcs.get(k), list: () => [...cluster.pvcs.values()] }, () => undefined),
    pvs: mapSource({ get: (k) => cluster.pvs.find((v) => v.name === k), list: () => cluster.pvs }, () => undefined),
    affinityPods: {
      ...mapSource(podsOf, (h) =>
        cluster.on('pods', {
          ...(h.add ? { add: (p: Pod) => p.nodeName !== '' && h.add?.(asAffinity(p)) } : {}),
          ...(h.update ? { update: (o: Pod, p: Pod) => p.nodeName !== '' && h.update?.(asAffinity(o), asAffinity(p)) } : {}),
          ...(h.delete ? { delete: (p: Pod) => p.nodeName !== '' && h.delete?.(asAffinity(p)) } : {}),
        }),
      ),
      onNode: (n) => cluster.podsOnNode(n).map(asAffinity),
    },
  };
}

/**
 * One controller's writes and Events in the in-memory cluster.
 * @param controller `eventSource` labels its timeline Events (`by`).
 * @returns the controller's {@link ControllerIO}. Never throws.
 */
export function clusterIO(cluster: InMemoryCluster, controller: { eventSource: string }): ControllerIO {
  return {
    events: cluster.eventSink(controller.eventSource),
    nodeLifecycleWrites: () => cluster.nodeLifecycleWrites(),
    readNodeLease: async (n) => {
      const l = cluster.leases.get(leaseKey(n));
      return l && { resourceVersion: l.resourceVersion };
    },
    taintEvictionWrites: () => cluster.taintEvictionWrites(),
    podGCWrites: () => cluster.podGCWrites(),
    forceDetachWrites: () => cluster.forceDetachWrites(),
    affinityEvictor: () => cluster.affinityEvictions(),
  };
}
