/**
 * The enforcer's own pod informer. The shared pod informer (src/kube/informerfactory.ts) keeps the slim
 * `Pod` of src/kube/objects.ts, which has no annotations and no affinity; this one keeps
 * {@link AffinityPod} (the rule parsed once per pod version). It only exists when
 * `node-affinity-enforcer` is enabled, and watches scheduled pods only (`spec.nodeName!=`).
 */
import { getJson, type KubeClients } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import type { ListPage } from '../kube/listwatch.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';
import { toAffinityPod, type AffinityPod } from './rule.js';

/** Index of {@link affinityPodInformer} by `spec.nodeName`. */
export const AFFINITY_POD_NODE_INDEX = 'nodeName';

/**
 * Builds (does not start) the informer over scheduled Pods of all namespaces, keyed
 * `namespace/name`, indexed by {@link AFFINITY_POD_NODE_INDEX}.
 * @param clients the typed clients (their KubeConfig authenticates list and watch).
 */
export function affinityPodInformer(clients: KubeClients, opts: { log: Logger; clock: Clock }): Informer<AffinityPod> {
  const path = '/api/v1/pods';
  return new Informer<AffinityPod>({
    name: 'pods(node-affinity)',
    path,
    list: async (o) =>
      (await getJson(
        clients.kubeConfig,
        path,
        { limit: o.limit, continue: o._continue, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector },
        o.signal,
      )) as ListPage,
    convert: toAffinityPod,
    keyOf: (p) => `${p.namespace}/${p.name}`,
    indexers: { [AFFINITY_POD_NODE_INDEX]: (p) => (p.nodeName ? [p.nodeName] : []) },
    fieldSelector: 'spec.nodeName!=',
    kubeConfig: clients.kubeConfig,
    log: opts.log,
    clock: opts.clock,
  });
}
