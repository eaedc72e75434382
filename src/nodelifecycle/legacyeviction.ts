/**
 * Legacy eviction (`--enable-taint-manager=false`): 1.20's direct deletion of a not-Ready node's
 * pods after `--pod-eviction-timeout`, at the zone's rate. The zone queues are the zone part's
 * (tainting.ts); this part decides what goes into them, drains their entries, and keeps 1.20's
 * `evicted` state per node.
 *
 * Mirrors kubernetes v1.20 `pkg/controller/nodelifecycle/node_lifecycle_controller.go`
 * (`processNoTaintBaseEviction`, `doEvictionPass`, `evictPods`, `cancelPodEviction`) and
 * `pkg/controller/util/node/controller_utils.go` (`DeletePods`). Deliberate difference 17 of
 * docs/node-lifecycle.md lives here.
 */
import type { Node, NodeCondition, Pod } from '../kube/objects.js';
import { podKey } from '../kube/objects.js';
import { describeError } from '../kube/client.js';
import { isNotCalledFor } from '../kube/throttle.js';
import { savedReadyCondition, type NodeHealth } from './health.js';
import type { TimedValue, TryResult } from './timedqueue.js';
import type { WriteResult } from './writer.js';
import { formatZoneKey, getZoneKey } from './zones.js';
import {
  GATE_HOLD_RETRY_MS,
  recordEvent,
  type LegacyEvictionDeps,
  type LegacyEvictionForZones,
  type LegacyEvictionLinks,
  type NodeHealthReader,
  type NodeReaction,
  type PodQueue,
  type ZoneQueuesForEviction,
} from './parts.js';
import { newestUnreadable } from './unreadable.js';

/**
 * The legacy eviction part: the health part's {@link NodeReaction} in legacy mode, and the zone
 * part's {@link LegacyEvictionForZones}.
 */
export class LegacyEviction implements NodeReaction, LegacyEvictionForZones {
  readonly #d: LegacyEvictionDeps;
  readonly #health: NodeHealthReader;
  readonly #pods: PodQueue;
  readonly #zones: ZoneQueuesForEviction;
  /**
   * Nodes whose pods were evicted by the zone queue and that have not been Ready since
   * (1.20's `nodeEvictionMap` state `evicted`); pods that land on them are deleted at once.
   */
  readonly #evicted = new Set<string>();

  /**
   * @param deps the slice of the controller's deps legacy eviction uses; @param links the health
   * part, the pod queue, the zone queues and the gate. Never throws.
   */
  constructor(deps: LegacyEvictionDeps, links: LegacyEvictionLinks) {
    this.#d = deps;
    this.#health = links.health;
    this.#pods = links.pods;
    this.#zones = links.zones;
  }

  /** The node left the cluster (1.20: `nodeEvictionMap.unregister`). */
  forgetNode(name: string): void {
    this.#evicted.delete(name);
  }

  forgetEvictions(): void {
    this.#evicted.clear();
  }

  /** Whether the not-Ready node's pods are past `--pod-eviction-timeout` (for the Lease circuit breaker). */
  wouldAct(node: Node, ready: NodeCondition): boolean {
    const h = this.#health.health(node.name);
    return h !== undefined && this.#pastPodEvictionTimeout(h, ready.status);
  }

  /** Legacy eviction needs no API call to decide: always acts and returns true. */
  actSync(node: Node, ready: NodeCondition): boolean {
    this.act(node, ready);
    return true;
  }

  /** Mirrors 1.20 `processNoTaintBaseEviction`: queue for pod deletion after `--pod-eviction-timeout`. */
  act(node: Node, ready: NodeCondition): void {
    const h = this.#health.health(node.name);
    if (!h) return;
    const zone = getZoneKey(node.labels);
    this.#zones.ensureZone(zone);
    if (ready.status === 'True') {
      this.#evicted.delete(node.name); // 1.20 cancelPodEviction: nodeEvictionMap status unmarked
      if (this.#zones.dequeue(zone, node.name)) this.#d.log.info({ node: node.name }, 'Node is Ready again: cancelled pod eviction');
      return;
    }
    if (!this.#pastPodEvictionTimeout(h, ready.status)) return;
    if (this.#evicted.has(node.name)) {
      // 1.20 `evictPods`: the node was evicted already, so pods that landed on it since are deleted
      // at once (through the pod queue, each re-checked), not queued behind the zone's rate.
      if (!this.#pods.podMarkingHeld()) {
        for (const p of this.#d.caches.pods.podsOnNode(node.name)) if (p.deletionTimestamp === undefined) this.#pods.queuePod(podKey(p));
      }
      return;
    }
    if (this.#zones.enqueue(zone, node.name, node.uid)) {
      this.#d.log.info({ node: node.name, zone: formatZoneKey(zone), status: ready.status }, 'Node has been not Ready past the pod eviction timeout. Adding it to the eviction queue');
      this.#zones.kickPass();
    }
  }

  /** The pod eviction deadline of a not-Ready node (epoch ms; Infinity when Ready or unknown). */
  deadline(h: NodeHealth, ready: string | undefined): number {
    if (ready === undefined || ready === 'True') return Infinity;
    const base = ready === 'False' ? h.readyTransitionTimestamp : h.probeTimestamp;
    return base + this.#d.config.podEvictionTimeoutMs + 1;
  }

  /**
   * A pod on a node already evicted (1.20's `evicted` state) that is still past its pod eviction
   * timeout is deleted, as 1.20's `evictPods` does on every monitor pass.
   * @returns the deletion's promise, or undefined when the pod is not this part's.
   */
  processPod(pod: Pod, health: NodeHealth, ready: string | undefined): Promise<unknown> | undefined {
    if (!this.#evicted.has(pod.nodeName) || !this.#pastPodEvictionTimeout(health, ready)) return undefined;
    const zone = this.#health.registration(pod.nodeName)?.zone ?? '';
    if (!this.#zones.admits('LegacyEviction', zone, pod.nodeName)) return Promise.resolve();
    // Not retried when no longer called for at its turn: the next monitor pass queues the pod again if it is.
    return this.#evictPod(pod, pod.nodeName, zone).catch((err: unknown) => {
      if (!isNotCalledFor(err)) throw err;
    });
  }

  /**
   * Whether `nodeName` still calls for the eviction of its pods: this controller sees the cluster,
   * the node is cached and readable, and its saved Ready condition has been not True for longer
   * than `--pod-eviction-timeout` (1.20 `processNoTaintBaseEviction`).
   */
  #stillEvicts(nodeName: string): boolean {
    if (!this.#d.canSeeCluster() || !this.#d.caches.nodes.get(nodeName) || newestUnreadable(this.#d.caches.nodes, nodeName)) return false;
    const h = this.#health.health(nodeName);
    return h !== undefined && this.#pastPodEvictionTimeout(h, savedReadyCondition(h)?.status);
  }

  /**
   * One legacy eviction decided again right before each of its writes is sent (src/kube/throttle.ts
   * `WriteRecheck`, issue 53 item 4): {@link #stillEvicts}, the pod (same UID, same node, not
   * terminating), and the gate. Deliberate difference from 1.20 (whose `DeletePods` sends each
   * delete on the decision taken before the client's rate-limiter wait): it can only withhold one.
   * @returns why the eviction is no longer called for, or `undefined`.
   */
  #stillEvictsPod(pod: Pod, nodeName: string, zone: string): string | undefined {
    if (!this.#stillEvicts(nodeName)) return 'the node is no longer past its pod eviction timeout, or cannot be seen';
    const cur = this.#d.caches.pods.get(podKey(pod));
    if (!cur || cur.uid !== pod.uid || cur.nodeName !== nodeName || cur.deletionTimestamp !== undefined) return 'the pod is gone, moved or terminating';
    if (!this.#zones.admits('LegacyEviction', zone, nodeName)) return 'an eviction guard is open';
    return undefined;
  }

  /**
   * Whether a not-Ready node has been so for longer than `--pod-eviction-timeout`: Ready=False since
   * its ready transition, Unknown since its last heartbeat (1.20 `processNoTaintBaseEviction`).
   */
  #pastPodEvictionTimeout(h: NodeHealth, status: string | undefined): boolean {
    if (status !== 'False' && status !== 'Unknown') return false;
    const since = status === 'False' ? h.readyTransitionTimestamp : h.probeTimestamp;
    return this.#d.clock.now() > since + this.#d.config.podEvictionTimeoutMs;
  }

  /**
   * Legacy mode: delete every non-DaemonSet pod on the node (1.20 `doEvictionPass` + `DeletePods`).
   * Once done, the node is `evicted` (1.20's `nodeEvictionMap`): pods that land on it later are
   * deleted by {@link processPod} without waiting for the zone's rate.
   */
  async evictOne(zone: string, v: TimedValue): Promise<TryResult> {
    const node = this.#d.caches.nodes.get(v.value);
    if (!this.#d.canSeeCluster()) return { done: false, waitMs: 1000 };
    // Its newest version could not be read: held until it can (difference 24, unreadable.ts).
    if (newestUnreadable(this.#d.caches.nodes, v.value)) return { done: false, waitMs: GATE_HOLD_RETRY_MS };
    if (!this.#zones.admits('LegacyEviction', zone, v.value)) return { done: false, waitMs: GATE_HOLD_RETRY_MS };
    // Decided again at its turn: a node no longer past its pod eviction timeout (Ready again) is
    // dropped, as the taint pass drops a Ready node. 1.20's `doEvictionPass` relies on
    // `cancelPodEviction` alone; this can only reduce (issue 53 item 4: a retry re-decides).
    if (!this.#stillEvicts(v.value)) {
      this.#d.log.info({ node: v.value }, "Node was in the eviction queue, but it's no longer past its pod eviction timeout. Ignoring");
      return { done: true, waitMs: 0 };
    }
    const pods = this.#d.caches.pods.podsOnNode(v.value).filter((p) => p.nodeName === v.value);
    // 1.20 `DeletePods` records DeletingAllPods only when the node has pods.
    if (node && pods.length > 0) {
      recordEvent(this.#d.events, { kind: 'Node', name: node.name, uid: v.uid }, {
        type: 'Normal',
        reason: 'DeletingAllPods',
        message: `Node ${node.name} event: Deleting all Pods from Node ${node.name}.`,
      });
    }
    let failed = 0;
    let remaining = 0;
    for (const pod of pods) {
      try {
        if ((await this.#evictPod(pod, v.value, zone)) === 'written') remaining++;
      } catch (err) {
        // A deletion no longer called for when its turn came counts as not done: the retry decides again.
        failed++;
        if (isNotCalledFor(err)) this.#d.log.info({ node: v.value, pod: podKey(pod), why: err.reason }, 'legacy pod eviction not sent: no longer called for when its turn came');
        else this.#d.log.warn({ node: v.value, pod: podKey(pod), err: describeError(err) }, 'legacy pod eviction failed; retrying');
      }
    }
    if (node) this.#d.metrics.evictionsTotal.inc({ zone });
    if (remaining > 0) this.#d.log.info({ node: v.value, remaining }, 'Pods awaiting deletion due to Controller eviction');
    // Keep retrying while pods could not be deleted (upstream retries only on list errors).
    if (failed > 0) return { done: false, waitMs: 1000 };
    this.#evicted.add(v.value);
    return { done: true, waitMs: 0 };
  }

  /**
   * Deletes one pod of an evicted node (1.20 `DeletePods` for one pod), unless it is already being
   * deleted or belongs to a DaemonSet: a controller owner reference to an existing DaemonSet, or,
   * as 1.20's `GetPodDaemonSets`, a DaemonSet of its namespace selecting it (`selectsPod`). Either
   * rule alone skips the pod, so we never delete a pod 1.20 would keep.
   * @param zone the node's zone key (the gate's, read again right before each write).
   * @returns `'written'` when the delete was accepted, `'gone'` (the pod, with that UID, no longer
   *   exists), `'unchanged'` when skipped.
   * @throws a `NotCalledForError` (no longer called for right before a write), or API errors (the caller retries).
   */
  async #evictPod(pod: Pod, nodeName: string, zone: string): Promise<WriteResult> {
    if (pod.nodeName !== nodeName || pod.deletionTimestamp !== undefined) return 'unchanged';
    const owner = pod.ownerReferences.find((r) => r.kind === 'DaemonSet' && r.controller);
    if (owner && this.#d.caches.daemonSets.has(`${pod.namespace}/${owner.name}`)) return 'unchanged';
    if (this.#d.caches.daemonSets.selectsPod?.(pod)) return 'unchanged';
    const r = await this.#d.writes.evictPodLegacy(pod, nodeName, () => this.#stillEvictsPod(pod, nodeName, zone));
    if (r === 'written') {
      recordEvent(this.#d.events, { kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid }, {
        type: 'Normal',
        reason: 'NodeControllerEviction',
        message: `Marking for deletion Pod ${pod.name} from Node ${nodeName}`,
      });
      this.#d.log.info({ node: nodeName, pod: podKey(pod) }, 'Deleted pod (legacy eviction)');
    }
    return r;
  }
}
