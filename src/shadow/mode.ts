/**
 * Shadow mode (`--dry-run`) as src/cli/run.ts wires it (a property of the controllers' context,
 * src/controllers/context.ts, never a branch in a controller's wiring): one overlay, one decision log, the
 * overlaid informer views and the dry-run writers and Event sinks of every controller.
 *
 * Not upstream: kube-controller-manager has no dry-run mode.
 */
import type { Registry } from 'prom-client';
import type { KubeClients } from '../kube/client.js';
import { leaseKey } from '../kube/informerfactory.js';
import type { Lease, Node, Pod, VolumeAttachment } from '../kube/objects.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';
import type { ControllerIO } from '../controllers/context.js';
import { ShadowDecisionLog, type ShadowState } from './decisions.js';
import { ShadowOverlay, type InformerLike, type PodLike, type ShadowView } from './overlay.js';
import {
  DryRunAffinityEvictor,
  DryRunForceDetachWriter,
  DryRunNodeLifecycleWriter,
  DryRunPodGCWriter,
  DryRunTaintEvictionWriter,
  shadowEventSink,
  type ShadowWriterDeps,
} from './writers.js';

/** Options of {@link ShadowMode}. */
export interface ShadowModeOptions {
  clock: Clock;
  log: Logger;
  /** For live reads only. */
  clients: Pick<KubeClients, 'core' | 'storage'>;
  /** The process's metrics registry (the two dry-run counters are registered there). */
  registry?: Registry;
  /** Decision ring buffer size (default 10 000). */
  capacity?: number;
}

/** What `/debug/state` serves under `shadow`: the decisions plus the overlay's size. */
export interface ShadowDebugState extends ShadowState {
  overlay: { nodes: number; pods: number; volumeAttachments: number };
}

/**
 * Everything a `--dry-run` process needs. Call {@link nodeView} and {@link podView} on the shared
 * node and pod informers first: the writers read the overlaid views.
 * @throws {Error} from a writer factory called before both views exist.
 */
export class ShadowMode {
  readonly overlay = new ShadowOverlay();
  readonly decisions: ShadowDecisionLog;
  readonly #opts: ShadowModeOptions;
  #nodes: ShadowView<Node> | undefined;
  #pods: ShadowView<Pod> | undefined;

  constructor(opts: ShadowModeOptions) {
    this.#opts = opts;
    this.decisions = new ShadowDecisionLog({
      clock: opts.clock,
      log: opts.log,
      ...(opts.registry ? { registry: opts.registry } : {}),
      ...(opts.capacity !== undefined ? { capacity: opts.capacity } : {}),
    });
    opts.log.info({ dryRun: true }, 'dry-run (shadow mode): every controller runs, nothing is written but the leader-election Lease');
  }

  /** Wraps the shared node informer (once). @returns the overlaid view. */
  nodeView(source: InformerLike<Node>): ShadowView<Node> {
    this.#nodes = this.overlay.nodeView(source);
    return this.#nodes;
  }

  /** Reads the node heartbeat Leases (cache keys `kube-node-lease/<node>`): a renewal makes a would-be Unknown give way. */
  useLeases(leases: ReadStore<Lease>): void {
    this.overlay.useLeaseRenewals((node) => leases.get(leaseKey(node))?.renewTime);
  }

  /** Wraps the shared pod informer (once). @returns the overlaid view. */
  podView(source: InformerLike<Pod>): ShadowView<Pod> {
    this.#pods = this.overlay.podView(source);
    return this.#pods;
  }

  /** Wraps another pod informer (the node affinity enforcer's). @returns the overlaid view. */
  extraPodView<P extends PodLike>(source: InformerLike<P>): ShadowView<P> {
    return this.overlay.podView(source);
  }

  /** Wraps the VolumeAttachment informer. @returns the overlaid view. */
  volumeAttachmentView(source: InformerLike<VolumeAttachment>): ShadowView<VolumeAttachment> {
    return this.overlay.volumeAttachmentView(source);
  }

  #deps(): ShadowWriterDeps {
    if (!this.#nodes || !this.#pods) throw new Error('shadow mode: nodeView and podView must be set up before the writers');
    return { overlay: this.overlay, decisions: this.decisions, clock: this.#opts.clock, clients: this.#opts.clients, nodes: this.#nodes, pods: this.#pods };
  }

  /** @returns the node lifecycle controller's dry-run writer. */
  nodeLifecycleWrites(): DryRunNodeLifecycleWriter {
    return new DryRunNodeLifecycleWriter(this.#deps());
  }
  /** @returns the taint eviction controller's dry-run writer. */
  taintEvictionWrites(): DryRunTaintEvictionWriter {
    return new DryRunTaintEvictionWriter(this.#deps());
  }
  /** @returns the pod GC's dry-run writer. */
  podGCWrites(): DryRunPodGCWriter {
    return new DryRunPodGCWriter(this.#deps());
  }
  /** @returns the force-detach controller's dry-run writer. */
  forceDetachWrites(): DryRunForceDetachWriter {
    return new DryRunForceDetachWriter(this.#deps());
  }
  /** @returns the node affinity enforcer's dry-run evictor. */
  affinityEvictor(controller: string): DryRunAffinityEvictor {
    return new DryRunAffinityEvictor(this.#deps(), controller);
  }
  /** @returns an Event sink that only counts and logs, labelled with `controller`. */
  events(controller: string): EventSink {
    return shadowEventSink(this.decisions, controller);
  }

  /**
   * One controller's writes and Events in shadow mode: the dry-run writers and the counting Event
   * sink, labelled with the controller's name; live reads (the Lease circuit breaker's) stay live.
   * @param controller the descriptor (`name` labels the decisions and Events).
   * @param live the controller's live IO (only its reads are used).
   * @throws {Error} from a writer built before {@link nodeView} and {@link podView}.
   */
  io(controller: { name: string }, live: ControllerIO): ControllerIO {
    return {
      events: this.events(controller.name),
      nodeLifecycleWrites: () => this.nodeLifecycleWrites(),
      readNodeLease: (n) => live.readNodeLease(n),
      taintEvictionWrites: () => this.taintEvictionWrites(),
      podGCWrites: () => this.podGCWrites(),
      forceDetachWrites: () => this.forceDetachWrites(),
      affinityEvictor: () => this.affinityEvictor(controller.name),
    };
  }

  /** The `shadow` section of `/debug/state`. */
  state(): ShadowDebugState {
    return { ...this.decisions.state(), overlay: this.overlay.size() };
  }
}
