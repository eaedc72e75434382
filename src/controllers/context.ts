/**
 * What the registry hands every controller descriptor: the {@link ControllerContext} (configuration,
 * clock, log, metrics, the caches as {@link ControllerSources}, and the writes and Event sink of
 * each controller as {@link ControllerIO}), and the {@link ControllerDescriptor} shape itself.
 *
 * Three callers build a context: `run` (live informers, one write throttle per controller), `run
 * --dry-run` (the same informers seen through the shadow overlay, dry-run writers: src/shadow/) and
 * `what-if` (the in-memory cluster's maps and writes: src/whatif/). A descriptor never asks which:
 * shadow mode and what-if are properties of the context, not branches in the controllers' wiring.
 *
 * Upstream analogue: kube-controller-manager's `ControllerContext` and `ControllerDescriptor`
 * (`cmd/kube-controller-manager/app/controllermanager.go`, `controller_descriptor.go`).
 */
import type { DaemonSet, Lease, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from '../kube/objects.js';
import type { NodeJudgements, NodeJudgementSink } from '../kube/judgements.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/registry.js';
import type { NodeAffinityEnforcer } from '../nodeaffinity/controller.js';
import type { AffinityPod } from '../nodeaffinity/rule.js';
import type { AffinityEvictor } from '../nodeaffinity/writer.js';
import type { NodeLifecycleController, NodeLifecycleWrites } from '../nodelifecycle/controller.js';
import type { PodGCController, PodGCWrites } from '../podgc/controller.js';
import type { TaintEvictionController, TaintEvictionWrites } from '../tainteviction/controller.js';
import type { Clock } from '../util/clock.js';
import type { ForceDetachController, ForceDetachWrites } from '../volumes/controller.js';
import type { ControllerConfig } from './config.js';

/** Handlers of one cache, as an informer calls them (each optional). */
export interface SourceHandlers<T> {
  add?: (obj: T) => void;
  update?: (oldObj: T, newObj: T) => void;
  delete?: (obj: T) => void;
  /** The cache's watch stream connected or ended (its `isWatching()` changed). */
  watching?: () => void;
}

/**
 * One cache a controller reads and subscribes to: a live informer (possibly seen through the shadow
 * overlay) or one of the in-memory cluster's maps. Keys are `namespace/name` (cluster-scoped: `name`).
 */
export interface Source<T> extends ReadStore<T> {
  /** Adds handlers; they are called for every later change, in subscription order per event. */
  subscribe(handlers: SourceHandlers<T>): void;
  /** The initial list has been read. */
  hasSynced(): boolean;
  /** A watch stream is connected right now. */
  isWatching(): boolean;
  /** How long (milliseconds) the cache has been without a watch stream; 0 while watching. */
  blindForMs(): number;
}

/** The caches by name, as descriptors declare them in {@link ControllerDescriptor.informers}. */
export interface ControllerSources {
  /**
   * `newestUnreadable(name)`: the cache holds only the last readable version of the node, its newest
   * being malformed (src/kube/informercache.ts `keepLastReadable`): count it, but decide nothing on it.
   */
  nodes: Source<Node> & { newestUnreadable(name: string): boolean };
  /**
   * Node heartbeat Leases (`kube-node-lease/<node>`); `resourceVersion`: the cache's last list/watch
   * resourceVersion; `expectResourceVersion`: a live read showed this resourceVersion, so a watch
   * still behind it a few seconds later is stalled and restarted (src/kube/informer.ts; live caches only).
   */
  leases: Source<Lease> & { resourceVersion(): string; expectResourceVersion?(rv: string): void };
  /** The shared slim pods; `onNode`: the pods bound to one node. */
  pods: Source<Pod> & { onNode(nodeName: string): Pod[] };
  /** DaemonSets: `has` by `namespace/name`, `inNamespace` for 1.20's selector rule. */
  daemonSets: { has(key: string): boolean; inNamespace(namespace: string): DaemonSet[] };
  /** Present only when an enabled controller declares it. */
  volumeAttachments?: Source<VolumeAttachment> & { onNode(nodeName: string): VolumeAttachment[] };
  pvcs?: Source<PersistentVolumeClaim>;
  pvs?: Source<PersistentVolume>;
  /** The node affinity enforcer's own pods (annotations and affinity kept); present only when it is enabled. */
  affinityPods?: Source<AffinityPod> & { onNode(nodeName: string): AffinityPod[] };
}

/** A cache name of {@link ControllerSources}. */
export type SourceName = keyof ControllerSources;

/**
 * The writes and Event sink of one controller. In `run` every writer of one controller shares that
 * controller's write throttle (its own `--kube-api-qps` budget); with `--dry-run` the writers only
 * record what they would do; in what-if they apply to the in-memory cluster.
 */
export interface ControllerIO {
  /** Events of this controller (its Event source in `run` and what-if; its controller name in shadow mode). */
  events: EventSink;
  nodeLifecycleWrites(): NodeLifecycleWrites;
  /** Reads a node's Lease live (the Lease circuit breaker; also live in shadow mode, a read). */
  readNodeLease(nodeName: string): Promise<{ resourceVersion: string } | undefined>;
  taintEvictionWrites(): TaintEvictionWrites;
  podGCWrites(): PodGCWrites;
  forceDetachWrites(): ForceDetachWrites;
  affinityEvictor(): AffinityEvictor;
}

/** The controllers by the field `run` exposes them under (`RunningController`, `/debug/state`). */
export interface Controllers {
  nodeLifecycle: NodeLifecycleController;
  taintEviction: TaintEvictionController;
  podGC: PodGCController;
  forceDetach: ForceDetachController;
  nodeAffinity: NodeAffinityEnforcer;
}

/** A field of {@link Controllers}. */
export type ControllerKey = keyof Controllers;

/**
 * The decisions a controller reads when acting (src/controllers/serverdecisions.ts
 * `ServerDecisions` has them and more; declared here so the context does not import the registry's names).
 */
export interface ServerDecisionsView {
  /** The taint eviction controller adds `DisruptionTarget` before each deletion. */
  disruptionConditions: boolean;
}

/** Everything a descriptor's `build` reads. */
export interface ControllerContext {
  /** The parsed flags (durations in milliseconds). */
  config: ControllerConfig;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** This process's identity (the Event `host`, the Lease holder). */
  identity: string;
  /** The caches the enabled descriptors declared (the optional ones exist only then). */
  sources: ControllerSources;
  /** Opens one controller's writes and Event sink; call once per controller (one write throttle each in `run`). */
  io(controller: { name: string; eventSource: string }): ControllerIO;
  /**
   * "Can see the cluster" for the node lifecycle controller: the node and lease caches are synced
   * and neither has been without a watch stream for longer than a normal reconnect.
   */
  canSeeCluster(): boolean;
  /** @returns a check that every one of `sources` is synced and watching now. */
  sees(sources: readonly Pick<Source<unknown>, 'hasSynced' | 'isWatching'>[]): () => boolean;
  /**
   * This process's one board of node judgements (src/kube/judgements.ts `NodeJudgementBoard`): the
   * node lifecycle controller writes it, the taint eviction controller reads it (the start hold).
   */
  judgements: NodeJudgements & NodeJudgementSink;
  /**
   * What differs between Kubernetes minors, decided from the API server's `/version`
   * (src/controllers/serverdecisions.ts); asked when acting, since `run` reads the version once the
   * caches synced. Undefined where no API server is read (what-if): the configuration decides.
   */
  serverDecisions?: () => ServerDecisionsView;
}

/**
 * One controller this program can run: kube-controller-manager's name and aliases, what it needs,
 * how it is built and which cache events it handles. One lives in each controller's folder
 * (`src/<controller>/descriptor.ts`); src/controllers/registry.ts lists them in start order.
 * @typeParam K the field the built controller is exposed under.
 */
export interface ControllerDescriptor<K extends ControllerKey = ControllerKey> {
  /** Canonical name (`cmd/kube-controller-manager/names/controller_names.go`). */
  readonly name: string;
  /** Older names still accepted in `--controllers` (upstream `ControllerDescriptor.aliases`). */
  readonly aliases: readonly string[];
  /** Whether `*` leaves it off (upstream `isDisabledByDefault`). */
  readonly disabledByDefault: boolean;
  /** A controller of this project that kube-controller-manager does not have (nothing there to switch off). */
  readonly ourOwn?: boolean;
  /** The `source.component` of its Events. */
  readonly eventSource: string;
  /** The field of `RunningController` and `/debug/state` it is exposed under. */
  readonly key: K;
  /** The caches it reads; the optional ones of {@link ControllerSources} are built only when an enabled controller lists them. */
  readonly informers: readonly SourceName[];
  /**
   * Why it does not run although `--controllers` enables it (a flag switches it off; `run` logs
   * this); undefined when it runs. Upstream: the `(nil, false, nil)` return of an init function.
   */
  notStartedBecause?(config: ControllerConfig): string | undefined;
  /** Whether the shared pod cache must keep pod labels for it (they cost memory on every pod). */
  needsPodLabels?(config: ControllerConfig): boolean;
  /** Builds the controller (not started). Upstream: the descriptor's `initFunc`. */
  build(ctx: ControllerContext): Controllers[K];
  /** Registers the controller's cache handlers on `sources` (the declared ones are present). */
  subscribe(controller: Controllers[K], sources: ControllerSources): void;
}

/**
 * The optional cache `name` of `sources`.
 * @throws {Error} when it is absent: the descriptor did not list it in `informers` (a programming error).
 */
export function requireSource<N extends SourceName>(sources: ControllerSources, name: N): NonNullable<ControllerSources[N]> {
  const s = sources[name];
  if (s === undefined) throw new Error(`controller registry: the ${name} cache was not built (missing from a descriptor's informers)`);
  return s as NonNullable<ControllerSources[N]>;
}
