/**
 * The context pieces of a live process (`run`): the informers the enabled controllers need, as
 * {@link ControllerSources}, optionally seen through an overlay (shadow mode), and each
 * controller's writers and Event recorder behind its own write throttle.
 *
 * Upstream analogue: kube-controller-manager's shared informer factory (`ControllerContext.InformerFactory`,
 * whose informers exist only once a controller asks for them) and its `ClientBuilder`, which gives
 * each controller its own client and so its own `--kube-api-qps`/`--kube-api-burst` budget.
 */
import type { KubeClients } from '../kube/client.js';
import { EventRecorder, type ObjectReference } from '../kube/events.js';
import type { Informer } from '../kube/informer.js';
import {
  DAEMON_SET_NAMESPACE_INDEX,
  daemonSetInformer,
  leaseInformer,
  nodeInformer,
  podInformer,
  POD_NODE_NAME_INDEX,
  pvcInformer,
  pvInformer,
  VOLUME_ATTACHMENT_NODE_NAME_INDEX,
  volumeAttachmentInformer,
} from '../kube/informerfactory.js';
import type { Lease, Node, Pod, VolumeAttachment } from '../kube/objects.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import type { ApiWriteThrottle } from '../kube/throttle.js';
import type { Logger } from '../log/logger.js';
import { AFFINITY_POD_NODE_INDEX, affinityPodInformer } from '../nodeaffinity/informer.js';
import type { AffinityPod } from '../nodeaffinity/rule.js';
import { AffinityEvictionWriter } from '../nodeaffinity/writer.js';
import { NodeLifecycleWriter } from '../nodelifecycle/writer.js';
import { PodGCWriter } from '../podgc/writer.js';
import { TaintEvictionWriter } from '../tainteviction/writer.js';
import type { OwnWriteNotes } from '../secondactor/ownwrites.js';
import type { Clock } from '../util/clock.js';
import { ForceDetachWriter } from '../volumes/writer.js';
import type { ControllerConfig } from './config.js';
import type { ControllerIO, ControllerSources, Source, SourceName } from './context.js';

/** What the live process uses of an informer (also what the shadow overlay's views implement). */
export type LiveInformer<T> = Pick<
  Informer<T>,
  'start' | 'stop' | 'isWatching' | 'blindForMs' | 'hasSynced' | 'waitForSync' | 'get' | 'list' | 'keys' | 'byIndex' | 'on' | 'stats'
>;

/**
 * How the controllers see the informers. In `run` every view is the informer itself; with
 * `--dry-run` it is the shadow overlay (src/shadow/mode.ts `ShadowMode`), whose views show what
 * the shadow's controllers would have written.
 */
export interface SourceOverlay {
  nodeView(source: LiveInformer<Node>): LiveInformer<Node>;
  podView(source: LiveInformer<Pod>): LiveInformer<Pod>;
  extraPodView(source: LiveInformer<AffinityPod>): LiveInformer<AffinityPod>;
  volumeAttachmentView(source: LiveInformer<VolumeAttachment>): LiveInformer<VolumeAttachment>;
  /** Reads the node heartbeat Leases (shadow mode: a renewal makes a would-be Unknown give way). */
  useLeases(leases: ReadStore<Lease>): void;
}

/** The overlay of a process that writes: every view is the informer. */
export const NO_OVERLAY: SourceOverlay = {
  nodeView: (s) => s,
  podView: (s) => s,
  extraPodView: (s) => s,
  volumeAttachmentView: (s) => s,
  useLeases: () => undefined,
};

/**
 * A {@link Source} over an informer (or an overlay view of one).
 * @param informer the informer; handlers go to its `on`.
 */
export function informerSource<T>(informer: LiveInformer<T>): Source<T> {
  return {
    get: (k) => informer.get(k),
    list: () => informer.list(),
    hasSynced: () => informer.hasSynced(),
    isWatching: () => informer.isWatching(),
    blindForMs: () => informer.blindForMs(),
    subscribe(h) {
      if (h.add) informer.on('add', h.add);
      if (h.update) informer.on('update', h.update);
      if (h.delete) informer.on('delete', h.delete);
      const watching = h.watching;
      if (watching) informer.on('watching', () => watching());
    },
  };
}

/**
 * Builds (does not start) the informers `needed` names, in a fixed order (nodes, leases, pods,
 * DaemonSets, then VolumeAttachments, claims, volumes, the affinity pods), and their sources.
 * The node, lease, pod and DaemonSet informers are always built: `run` has always watched them,
 * whichever controllers run, and its readiness and `caches synced` log read them.
 * @param needed the optional caches the enabled controllers declared.
 * @param podLabels whether pods keep their labels (legacy eviction's DaemonSet selector rule).
 * @param watchList whether an informer's (re)list tries a watch-list first, asked at each relist
 *   (src/controllers/serverdecisions.ts); default: the informers' own default.
 * @param overlay {@link NO_OVERLAY}, or the shadow mode.
 * @returns `sources` for the controllers and `informers` (the real ones, to start, stop, wait for
 *   and show on `/debug/state`). Never throws.
 */
export function liveSources(
  clients: KubeClients,
  config: Pick<ControllerConfig, 'nodeSelector' | 'kubeApiContentType'>,
  needed: ReadonlySet<SourceName>,
  opts: { log: Logger; clock: Clock; podLabels: boolean; watchList?: () => boolean },
  overlay: SourceOverlay,
): { sources: ControllerSources; informers: LiveInformer<unknown>[] } {
  const informerOpts = { log: opts.log, clock: opts.clock, ...(opts.watchList ? { watchList: opts.watchList } : {}) };
  // Only the node, lease and pod informers read protobuf; the others stay JSON (src/kube/wire.ts).
  const wireOpts = { ...informerOpts, ...(config.kubeApiContentType ? { contentType: config.kubeApiContentType } : {}) };
  const realNodes = nodeInformer(clients, { ...wireOpts, ...(config.nodeSelector ? { labelSelector: config.nodeSelector } : {}) });
  const nodes = overlay.nodeView(realNodes);
  const leases = leaseInformer(clients, wireOpts);
  overlay.useLeases(leases);
  const realPods = podInformer(clients, { ...wireOpts, keepLabels: opts.podLabels });
  const pods = overlay.podView(realPods);
  const daemonSets = daemonSetInformer(clients, informerOpts);
  const informers = [realNodes, leases, realPods, daemonSets] as LiveInformer<unknown>[];
  const sources: ControllerSources = {
    // Asked of the real informer: the shadow overlay changes what a node looks like, not whether it could be read.
    nodes: { ...informerSource(nodes), newestUnreadable: (n) => realNodes.newestUnreadable(n) },
    leases: { ...informerSource(leases), resourceVersion: () => leases.stats().resourceVersion, expectResourceVersion: (rv) => leases.expectResourceVersion(rv) },
    pods: { ...informerSource(pods), onNode: (n) => pods.byIndex(POD_NODE_NAME_INDEX, n) },
    daemonSets: { has: (k) => daemonSets.get(k) !== undefined, inNamespace: (ns) => daemonSets.byIndex(DAEMON_SET_NAMESPACE_INDEX, ns) },
  };
  if (needed.has('volumeAttachments') || needed.has('pvcs') || needed.has('pvs')) {
    const realVas = volumeAttachmentInformer(clients, informerOpts);
    const vas = overlay.volumeAttachmentView(realVas);
    const pvcs = pvcInformer(clients, informerOpts);
    const pvs = pvInformer(clients, informerOpts);
    informers.push(...([realVas, pvcs, pvs] as LiveInformer<unknown>[]));
    sources.volumeAttachments = { ...informerSource(vas), onNode: (n) => vas.byIndex(VOLUME_ATTACHMENT_NODE_NAME_INDEX, n) };
    sources.pvcs = informerSource(pvcs);
    sources.pvs = informerSource(pvs);
  }
  if (needed.has('affinityPods')) {
    const realAffinityPods = affinityPodInformer(clients, informerOpts);
    const affinityPods = overlay.extraPodView(realAffinityPods);
    informers.push(realAffinityPods as LiveInformer<unknown>);
    sources.affinityPods = { ...informerSource(affinityPods), onNode: (n) => affinityPods.byIndex(AFFINITY_POD_NODE_INDEX, n) };
  }
  return { sources, informers };
}

/** Adapts the EventRecorder to the controllers' narrow sink. */
export function eventSink(recorder: EventRecorder): EventSink {
  return {
    record(ref, type, reason, message) {
      const r: ObjectReference = { kind: ref.kind, apiVersion: 'v1', name: ref.name, uid: ref.uid };
      if (ref.namespace !== undefined) r.namespace = ref.namespace;
      recorder.record(r, type, reason, message);
    },
  };
}

/**
 * One controller's live writers and Event recorder, all behind `throttle` (that controller's own).
 * Each writer is built on first use, once. `deps.own`: the second-actor check's ledger, where the
 * writers note the taints, conditions and deletions they send (src/secondactor/ownwrites.ts).
 * @param controller `eventSource`: the Events' `source.component`.
 * @returns the controller's {@link ControllerIO}. Never throws.
 */
export function liveIO(
  deps: { clients: KubeClients; throttle: ApiWriteThrottle; identity: string; clock: Clock; log: Logger; own?: OwnWriteNotes },
  controller: { eventSource: string },
): ControllerIO {
  const { clients, throttle, clock, own } = deps;
  const recorder = new EventRecorder({ clients, throttle, component: controller.eventSource, host: deps.identity, clock, log: deps.log });
  let nlcWriter: NodeLifecycleWriter | undefined;
  const nodeLifecycle = (): NodeLifecycleWriter => (nlcWriter ??= new NodeLifecycleWriter(clients, throttle, clock, own));
  return {
    events: eventSink(recorder),
    nodeLifecycleWrites: nodeLifecycle,
    readNodeLease: (n) => nodeLifecycle().readNodeLease(n),
    taintEvictionWrites: () => new TaintEvictionWriter(clients, throttle, clock, own),
    podGCWrites: () => new PodGCWriter(clients, throttle, clock, own),
    forceDetachWrites: () => new ForceDetachWriter(clients, throttle),
    affinityEvictor: () => new AffinityEvictionWriter(clients, throttle),
  };
}
