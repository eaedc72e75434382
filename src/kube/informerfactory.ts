/**
 * Ready-made {@link Informer}s for the collections the controllers watch, each with its
 * paginated typed-API list function, slim converter, cache key and indexes.
 *
 * Keys follow client-go `cache.MetaNamespaceKeyFunc`: `name` for cluster-scoped objects,
 * `namespace/name` for namespaced ones (see {@link leaseKey} for node heartbeat Leases).
 */
import { Observable, type ConfigurationOptions, type RequestContext, type ResponseContext } from '@kubernetes/client-node';
import type { Clock } from '../util/clock.js';
import { getJson, instrumentWatch, type KubeClients } from './client.js';
import { Informer, type InformerOptions } from './informer.js';
import type { ListPage, ListPageFn } from './listwatch.js';
import type { Logger } from '../log/logger.js';
import { WireCodec } from './wire.js';
import { defaultKubeContentType, type KubeContentType } from './contenttype.js';
import type { ProtobufKind } from './protobuf/views.js';
import {
  podKey,
  toDaemonSet,
  toLease,
  toNode,
  toPersistentVolume,
  toPersistentVolumeClaim,
  toPod,
  toPodWithLabels,
  toVolumeAttachment,
  type DaemonSet,
  type Lease,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type VolumeAttachment,
} from './objects.js';

/** Namespace of node heartbeat Leases (`v1.NamespaceNodeLease`). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/**
 * Name of the pod index by `spec.nodeName` (upstream `nodeNameKeyIndex` in
 * node_lifecycle_controller.go). Unscheduled pods are not indexed.
 */
export const POD_NODE_NAME_INDEX = 'nodeName';

/** Name of the VolumeAttachment index by `spec.nodeName`. */
export const VOLUME_ATTACHMENT_NODE_NAME_INDEX = 'nodeName';

/** Cache key of a node's heartbeat Lease in {@link leaseInformer} (`kube-node-lease/<node>`). */
export function leaseKey(nodeName: string, namespace = NODE_LEASE_NAMESPACE): string {
  return `${namespace}/${nodeName}`;
}

/** Options shared by the factories. Durations are milliseconds. */
export interface InformerFactoryOptions {
  log: Logger;
  clock: Clock;
  labelSelector?: string;
  fieldSelector?: string;
  /** List page size (default 500). */
  pageSize?: number;
  /** See {@link InformerOptions.watchdogMs} (default 5 min). */
  watchdogMs?: number;
  /** See {@link InformerOptions.relistIntervalMs} (default: never). */
  relistIntervalMs?: number;
  /** Backoff bounds (defaults 1 s and 30 s). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** See {@link InformerOptions.watchList}. */
  watchList?: boolean | (() => boolean);
  /**
   * What the Pod, Node and Lease informers ask for (`--kube-api-content-type`; default
   * {@link defaultKubeContentType}: protobuf unless `NLC_KUBE_API_CONTENT_TYPE=application/json`).
   * The other collections always read JSON. See src/kube/wire.ts.
   */
  contentType?: KubeContentType;
}

/**
 * client-node `ConfigurationOptions` whose middleware attaches `signal` to the request, so a list
 * call is aborted when the informer stops or restarts (client-node has no per-call signal option;
 * `RequestContext.setSignal` is what its fetch layer reads).
 */
export function abortSignalOptions(signal: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (ctx: RequestContext) => {
          ctx.setSignal(signal);
          return new Observable(Promise.resolve(ctx));
        },
        post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

const nameKey = (o: { name: string }): string => o.name;
const namespacedKey = podKey;

/**
 * Lists one page of `path` as raw JSON ({@link getJson}): the same shape watch events have, without
 * client-node's typed deserialisation of every item.
 */
function rawPaged(clients: KubeClients, path: string): ListPageFn {
  return async (o) =>
    (await getJson(
      clients.kubeConfig,
      path,
      { limit: o.limit, continue: o._continue, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector },
      o.signal,
    )) as ListPage;
}

function make<T>(
  clients: KubeClients,
  opts: InformerFactoryOptions,
  spec: Pick<InformerOptions<T>, 'name' | 'path' | 'convert' | 'keyOf' | 'indexers' | 'keepLastReadable'> & {
    list?: ListPageFn;
    protobufKind?: ProtobufKind;
    /** whether `convert` reads `metadata.labels` (default true): when not, the protobuf decoder skips them */
    convertReadsLabels?: boolean;
  },
): Informer<T> {
  const { protobufKind, convertReadsLabels, ...informerSpec } = spec;
  const jsonList = spec.list ?? rawPaged(clients, spec.path);
  const contentType = opts.contentType ?? defaultKubeContentType();
  // The codec only where the server has protobuf for the kind and a KubeConfig to reach it with.
  const codec =
    protobufKind !== undefined && contentType !== 'application/json'
      ? new WireCodec({ kubeConfig: clients.kubeConfig, kind: protobufKind, path: spec.path, resource: spec.name, contentType, labels: convertReadsLabels ?? true, jsonList, log: opts.log })
      : undefined;
  return new Informer<T>({
    ...informerSpec,
    list: codec ? codec.list : jsonList,
    ...(codec ? { watch: instrumentWatch(clients.kubeConfig, { watch: codec.watch }) } : {}),
    kubeConfig: clients.kubeConfig,
    log: opts.log,
    clock: opts.clock,
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
    pageSize: opts.pageSize,
    watchdogMs: opts.watchdogMs,
    relistIntervalMs: opts.relistIntervalMs,
    backoffInitialMs: opts.backoffInitialMs,
    backoffMaxMs: opts.backoffMaxMs,
    watchList: opts.watchList,
  });
}

/**
 * Which informers keep an object's last readable version when a newer one is malformed
 * ({@link InformerOptions.keepLastReadable}): Nodes and Leases, whose absence would make the node
 * lifecycle controller act more; Pods and VolumeAttachments are left out (absent), which only
 * withholds actions on them. Test worlds that stand in for the informers read this table too.
 */
export const KEEPS_LAST_READABLE = { nodes: true, leases: true, pods: false, volumeAttachments: false } as const;

/** Informer over all Nodes, keyed by name. */
export function nodeInformer(clients: KubeClients, opts: InformerFactoryOptions): Informer<Node> {
  return make(clients, opts, { name: 'nodes', path: '/api/v1/nodes', convert: toNode, keyOf: nameKey, protobufKind: 'Node', keepLastReadable: KEEPS_LAST_READABLE.nodes });
}

/**
 * Informer over the Leases of one namespace (default `kube-node-lease`, the node heartbeats),
 * keyed `namespace/name` (see {@link leaseKey}).
 */
export function leaseInformer(clients: KubeClients, opts: InformerFactoryOptions & { namespace?: string }): Informer<Lease> {
  const namespace = opts.namespace ?? NODE_LEASE_NAMESPACE;
  return make(clients, opts, {
    name: `leases(${namespace})`,
    path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
    convert: toLease,
    keyOf: (l) => leaseKey(l.name, l.namespace),
    protobufKind: 'Lease',
    convertReadsLabels: false, // toLease reads none
    keepLastReadable: KEEPS_LAST_READABLE.leases,
  });
}

/**
 * Informer over the Pods of all namespaces, keyed `namespace/name`, indexed by {@link POD_NODE_NAME_INDEX}.
 * @param opts.keepLabels keep each pod's labels (interned: {@link toPodWithLabels}); only legacy
 *   eviction needs them (1.20's DaemonSet selector rule), so by default pods carry none.
 */
export function podInformer(clients: KubeClients, opts: InformerFactoryOptions & { keepLabels?: boolean }): Informer<Pod> {
  const indexers = { [POD_NODE_NAME_INDEX]: (p: Pod) => (p.nodeName ? [p.nodeName] : []) };
  const convert = opts.keepLabels === true ? toPodWithLabels : toPod;
  return make(clients, opts, {
    name: 'pods',
    path: '/api/v1/pods',
    convert,
    keyOf: namespacedKey,
    indexers,
    protobufKind: 'Pod',
    // toPod reads no labels: with 30 pods a node, a label map per pod decoded only to be dropped.
    convertReadsLabels: opts.keepLabels === true,
    keepLastReadable: KEEPS_LAST_READABLE.pods,
  });
}

/** Name of the DaemonSet index by namespace (1.20's `GetPodDaemonSets` lists the pod's namespace). */
export const DAEMON_SET_NAMESPACE_INDEX = 'namespace';

/** Informer over the DaemonSets of all namespaces, keyed `namespace/name`, indexed by {@link DAEMON_SET_NAMESPACE_INDEX}. */
export function daemonSetInformer(clients: KubeClients, opts: InformerFactoryOptions): Informer<DaemonSet> {
  const indexers = { [DAEMON_SET_NAMESPACE_INDEX]: (d: DaemonSet) => [d.namespace] };
  return make(clients, opts, { name: 'daemonsets', path: '/apis/apps/v1/daemonsets', convert: toDaemonSet, keyOf: namespacedKey, indexers });
}

/**
 * Informer over all VolumeAttachments, keyed by name, indexed by {@link VOLUME_ATTACHMENT_NODE_NAME_INDEX}
 * (the apiserver cannot field-select on `spec.nodeName` for this resource, so the index does it).
 */
export function volumeAttachmentInformer(clients: KubeClients, opts: InformerFactoryOptions): Informer<VolumeAttachment> {
  const indexers = { [VOLUME_ATTACHMENT_NODE_NAME_INDEX]: (v: VolumeAttachment) => [v.nodeName] };
  const path = '/apis/storage.k8s.io/v1/volumeattachments';
  return make(clients, opts, { name: 'volumeattachments', path, convert: toVolumeAttachment, keyOf: nameKey, indexers, keepLastReadable: KEEPS_LAST_READABLE.volumeAttachments });
}

/** Informer over the PersistentVolumeClaims of all namespaces, keyed `namespace/name`. */
export function pvcInformer(clients: KubeClients, opts: InformerFactoryOptions): Informer<PersistentVolumeClaim> {
  const path = '/api/v1/persistentvolumeclaims';
  return make(clients, opts, { name: 'persistentvolumeclaims', path, convert: toPersistentVolumeClaim, keyOf: namespacedKey });
}

/** Informer over all PersistentVolumes, keyed by name. */
export function pvInformer(clients: KubeClients, opts: InformerFactoryOptions): Informer<PersistentVolume> {
  return make(clients, opts, { name: 'persistentvolumes', path: '/api/v1/persistentvolumes', convert: toPersistentVolume, keyOf: nameKey });
}
