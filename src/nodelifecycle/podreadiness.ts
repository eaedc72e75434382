/**
 * Pod readiness, the node lifecycle controller's pod loop: the pod queue that marks the pods of
 * not-Ready nodes NotReady (in legacy mode it also deletes pods that land on evicted nodes), the
 * level-based resync on every monitor pass and its hold during the all-zones stop.
 *
 * Mirrors upstream `pkg/controller/nodelifecycle/node_lifecycle_controller.go` (`processPod`, the
 * `podUpdateQueue` workers, the `MarkPodsNotReady` call of `monitorNodeHealth`). Deliberate
 * differences 11, 14 and 15 of docs/node-lifecycle.md live here. Node health is the health part's
 * (monitor.ts), read through the `NodeHealthReader` of parts.ts.
 */
import type { Pod } from '../kube/objects.js';
import { podKey } from '../kube/objects.js';
import { WorkQueue } from '../kube/workqueue.js';
import { isNotCalledFor } from '../kube/throttle.js';
import { EVENT_POD_MARKING_HELD, podNeedsNotReadyMark, podNeedsNotReadyOnNode, podNodeNotReadyEvent, savedReadyCondition } from './health.js';
import type { WriteResult } from './writer.js';
import { recordEvent, type PodQueue, type PodReadinessDeps, type PodReadinessLinks } from './parts.js';
import { newestUnreadable } from './unreadable.js';

// Upstream podUpdateWorkerSize is 4, but its pod workers only handle pod updates; ours also mark a
// failed node's pods NotReady (deliberate difference 11), which needs as many writes in flight as
// the --kube-api-qps budget allows at the API server's latency.
const POD_WORKERS = 32;

/** The pod readiness part. Implements {@link PodQueue} for legacy eviction. */
export class PodReadiness implements PodQueue {
  readonly #d: PodReadinessDeps;
  readonly #l: PodReadinessLinks;
  readonly #podQueue: WorkQueue;
  /** Not-Ready nodes whose held pod readiness was explained with an Event in the current all-zones stop. */
  readonly #podMarkingHeldExplained = new Set<string>();
  /**
   * Epoch ms before which no pod is marked NotReady (or, in legacy mode, deleted) after the
   * all-zones stop ended: the full grace period every node gets on the way out (see #resyncPodReadiness).
   */
  #podMarkingResumesAt = 0;

  /** @param deps the slice of the controller's deps the pod readiness part uses; @param links the other parts. Never throws. */
  constructor(deps: PodReadinessDeps, links: PodReadinessLinks) {
    this.#d = deps;
    this.#l = links;
    this.#podQueue = new WorkQueue({
      name: 'node_lifecycle_controller_pods',
      concurrency: POD_WORKERS,
      clock: deps.clock,
      log: deps.log,
      sync: (key) => this.#processPod(key),
    });
  }

  /** Shuts the workers down; in-flight writes finish. */
  stop(): Promise<void> {
    return this.#podQueue.shutDown();
  }

  /** Hands a pod (key `ns/name`) to the pod queue, which re-checks it. */
  queuePod(key: string): void {
    this.#podQueue.add(key);
  }

  /**
   * Mirrors the `MarkPodsNotReady` call of `monitorNodeHealth`, with deliberate difference 11: the
   * node's pods are handed to the pod queue (each re-checked by {@link #processPod}, retried on
   * failure with per-pod backoff) instead of being written inside the node's health sync. Upstream
   * holds its monitor loop (and we held a health worker) until all of a node's pods were patched,
   * so in a failure wave later nodes were marked Unknown and tainted seconds late; upstream's
   * per-node retry on the next pass (`nodesToRetry`) is replaced by the per-pod retry.
   */
  queuePodsNotReady(nodeName: string): void {
    for (const p of this.#d.caches.pods.podsOnNode(nodeName)) {
      if (podNeedsNotReadyMark(p, nodeName)) this.#podQueue.add(podKey(p));
    }
  }

  async #markPodNotReady(pod: Pod, nodeName: string): Promise<WriteResult> {
    let result: WriteResult;
    try {
      result = await this.#d.writes.markPodNotReady(pod, nodeName, () => this.#stillMarksPod(podKey(pod), pod.uid, nodeName));
    } catch (err) {
      // Not retried: what changed the view (a Ready node, sight regained, the stop's end) queues the pod again.
      if (isNotCalledFor(err)) return 'unchanged';
      throw err;
    }
    if (result === 'written') {
      recordEvent(this.#d.events, { kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid }, podNodeNotReadyEvent());
      this.#d.log.info({ node: nodeName, pod: podKey(pod) }, 'Marked pod NotReady');
    }
    return result;
  }

  /**
   * A NotReady mark decided again right before its patch is sent (src/kube/throttle.ts
   * `WriteRecheck`, issue 53 item 4): the controller sees the cluster, the node is cached and
   * readable, its saved Ready condition is still not True, the pod (same UID) still needs the mark,
   * and marking is not held (the all-zones stop). Deliberate difference from upstream (which sends
   * `MarkPodsNotReady`'s patches after the client's rate-limiter wait on the decision taken
   * before it): it can only withhold or delay a mark.
   * @returns why the mark is no longer called for, or `undefined`.
   */
  #stillMarksPod(key: string, uid: string, nodeName: string): string | undefined {
    if (!this.#d.canSeeCluster()) return 'the controller cannot see the cluster';
    const pod = this.#d.caches.pods.get(key);
    if (!pod || pod.uid !== uid || pod.nodeName !== nodeName) return 'the pod is gone or moved';
    if (!this.#d.caches.nodes.get(nodeName) || newestUnreadable(this.#d.caches.nodes, nodeName)) return 'the node is gone or cannot be read';
    if (!podNeedsNotReadyOnNode(this.#l.health.health(nodeName), pod)) return 'the node is Ready, or the pod is marked already';
    if (this.podMarkingHeld()) return 'pod marking is held (the all-zones stop)';
    return this.#l.health.rejudging(nodeName);
  }

  /**
   * Mirrors `processPod`: a pod bound to a node whose saved Ready condition is not True is marked
   * NotReady; in legacy mode, a pod on a node already evicted (1.20's `evicted` state) that is still
   * past its pod eviction timeout is deleted ({@link NodeReaction.processPod}), as 1.20's `evictPods`
   * does on every monitor pass.
   * Deliberate difference (kubernetes #77864/#125824): nothing is done during the
   * all-zones stop; {@link resyncPodReadiness} explains it and queues the pods again when it ends.
   */
  async #processPod(key: string): Promise<void> {
    const pod = this.#d.caches.pods.get(key);
    if (!pod || pod.nodeName === '') return;
    const health = this.#l.health.health(pod.nodeName);
    if (!health) return; // the node's first pass will handle it
    if (!this.#d.caches.nodes.get(pod.nodeName)) return;
    // Nothing is decided on a node whose newest version could not be read (difference 24); the
    // monitor passes queue its pods again once it can be.
    if (newestUnreadable(this.#d.caches.nodes, pod.nodeName)) return;
    if (this.podMarkingHeld()) return;
    // Deliberate difference 28: not on a verdict reached before sight was lost (monitor.ts
    // `#checkSight`); the monitor passes queue the pods again once the node is judged again.
    if (this.#l.health.rejudging(pod.nodeName) !== undefined) return;
    const ready = savedReadyCondition(health)?.status;
    const evicting = this.#l.processPod?.(pod, health, ready);
    if (evicting) {
      await evicting;
      return;
    }
    if (podNeedsNotReadyOnNode(health, pod)) await this.#markPodNotReady(pod, pod.nodeName);
  }

  /** True during the all-zones stop and the grace period after it (see {@link resyncPodReadiness}). */
  podMarkingHeld(): boolean {
    return this.#l.allZonesStopped() || this.#d.clock.now() < this.#podMarkingResumesAt;
  }

  /**
   * The all-zones stop ended at `nowMs` (epoch ms) and every node got a full grace period from then:
   * pods left alone during the stop are marked once it has passed, if their node is still not Ready.
   */
  allZonesStopEnded(nowMs: number): void {
    this.#podMarkingResumesAt = nowMs + this.#d.config.nodeMonitorGracePeriodMs;
    this.resyncPodReadiness();
  }

  /**
   * Level-based NotReady marking, run on every monitor pass (and when the all-zones stop ends).
   * Deliberate difference: upstream marks a node's pods only when its own pass turns a
   * Ready node not-Ready (plus a retry), so pods stay Ready forever on a node whose kubelet reports
   * Ready=False while renewing its Lease (kubernetes #125618), after a False→Unknown flip (#112733)
   * or after a restart in the middle of the marking (#135205). Here every pod on a node whose Ready
   * is not True is handed to the pod queue until it is Ready=False, whatever the transitions were.
   * During the all-zones stop (no Ready node anywhere: a control-plane or network partition) pod
   * readiness is left alone, where upstream marks every pod NotReady and every Service loses every
   * endpoint (#77864, #125824); a Warning event per node and `node_collector_pod_marking_held_nodes`
   * say so. When the stop ends every node gets a full grace period (upstream resets every probe
   * timestamp); the pods of nodes still not Ready after it are marked then, so a node whose
   * recovery we have not seen yet does not get its pods marked on the way out.
   */
  resyncPodReadiness(): void {
    const stopped = this.#l.allZonesStopped();
    if (!stopped) this.#podMarkingHeldExplained.clear();
    const afterStop = !stopped && this.#d.clock.now() < this.#podMarkingResumesAt;
    let held = 0;
    for (const [name, info] of this.#l.health.registered()) {
      const ready = savedReadyCondition(this.#l.health.health(name))?.status;
      if (ready === undefined || ready === 'True' || !this.#d.caches.nodes.get(name) || newestUnreadable(this.#d.caches.nodes, name)) continue;
      if (this.#l.health.rejudging(name) !== undefined) continue;
      const pods = this.#d.caches.pods.podsOnNode(name).filter((p) => podNeedsNotReadyMark(p, name));
      if (pods.length === 0 || afterStop) continue;
      if (!stopped) {
        for (const p of pods) this.#podQueue.add(podKey(p));
        continue;
      }
      held++;
      if (this.#podMarkingHeldExplained.has(name)) continue;
      this.#podMarkingHeldExplained.add(name);
      this.#d.events.record(
        { kind: 'Node', name, uid: info.uid },
        'Warning',
        EVENT_POD_MARKING_HELD,
        `Node ${name} is ${ready === 'False' ? 'NotReady' : 'unreachable'}, but every zone is FullDisruption (no Ready node anywhere), ` +
          `which looks like a control-plane or network partition: its ${pods.length} pod(s) keep their Ready condition, so Services keep ` +
          `their endpoints, until some node is Ready again.`,
      );
      this.#d.log.warn({ node: name, pods: pods.length }, 'All zones are FullDisruption: leaving pod readiness alone');
    }
    this.#d.metrics.podMarkingHeldNodes.set(held);
  }
}
