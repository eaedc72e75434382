/**
 * The NoSchedule condition-taint pass of the node lifecycle controller, with label
 * reconciliation: a work queue of node names and the one piece of state it needs.
 *
 * Mirrors upstream `pkg/controller/nodelifecycle/node_lifecycle_controller.go`
 * (`doNoScheduleTaintingPass`, `reconcileNodeLabels`, the `nodeUpdateQueue` workers).
 */
import type { Node, Taint } from '../kube/objects.js';
import { WorkQueue } from '../kube/workqueue.js';
import { isNotCalledFor } from '../kube/throttle.js';
import { TAINT_NODE_UNREACHABLE } from '../kube/taints.js';
import { conditionTaintDiff } from './taints.js';
import { NODE_WORKERS, type NoScheduleDeps, type NoScheduleLinks } from './parts.js';
import { newestUnreadable } from './unreadable.js';

const LABEL_RECONCILE: readonly [primary: string, secondary: string][] = [
  ['kubernetes.io/os', 'beta.kubernetes.io/os'],
  ['kubernetes.io/arch', 'beta.kubernetes.io/arch'],
];

/**
 * The longest, in **milliseconds**, a condition-taint write waits for the node's coming NoExecute
 * taint write, which carries the same taints (deliberate difference 13 in docs/node-lifecycle.md).
 */
export const NOSCHEDULE_WAIT_FOR_NOEXECUTE_MS = 1000;

/** How often, in **milliseconds**, a node whose pass found the controller blind is tried again. */
export const NOSCHEDULE_BLIND_RETRY_MS = 1000;

/** Why a condition-taint write is not sent (its send-time recheck). */
const BLIND = 'the controller cannot see the cluster';

/** The NoSchedule pass. Mirrors upstream's `nodeUpdateQueue` and its workers. */
export class NoScheduleTaintPass {
  readonly #d: NoScheduleDeps;
  readonly #l: NoScheduleLinks;
  /** Nodes whose NoSchedule pass waits for their running health sync (see #doNoScheduleTaintingPass). */
  readonly #afterHealth = new Set<string>();
  /** Nodes whose condition-taint write waits for their NoExecute taint write: since when, epoch ms. */
  readonly #afterNoExecute = new Map<string, number>();
  readonly #queue: WorkQueue;

  /**
   * @param deps the slice of the controller's deps the NoSchedule part uses.
   * @param links asks the health part whether the node's health sync is running.
   * Never throws.
   */
  constructor(deps: NoScheduleDeps, links: NoScheduleLinks) {
    this.#d = deps;
    this.#l = links;
    this.#queue = new WorkQueue({
      name: 'node_lifecycle_controller',
      concurrency: NODE_WORKERS,
      clock: deps.clock,
      log: deps.log,
      sync: (name) => this.#doNoScheduleTaintingPass(name),
    });
  }

  /** Queues the node (level-based: the worker re-reads the cache). */
  enqueue(name: string): void {
    this.#queue.add(name);
  }

  /** The node's health sync finished: runs the pass it deferred, if any. */
  healthSyncDone(name: string): void {
    if (this.#afterHealth.delete(name)) this.#queue.add(name);
  }

  /** Shuts the workers down; in-flight writes finish. */
  stop(): Promise<void> {
    return this.#queue.shutDown();
  }

  /** Mirrors `doNoScheduleTaintingPass` + `reconcileNodeLabels`. Throws to request a retry. */
  async #doNoScheduleTaintingPass(name: string): Promise<void> {
    // Kept across a health-sync deferral, so that the wait's bound counts from its first pass.
    const waitingSince = this.#afterNoExecute.get(name);
    if (this.#l.healthSyncRunning(name)) {
      // Our own status write's watch event often arrives before its response. Wait for the
      // health sync: the NoExecute taint it queues carries the condition taints in the same
      // patch (deliberate difference 12), and would otherwise queue behind this one's write.
      this.#afterHealth.add(name);
      return;
    }
    this.#afterNoExecute.delete(name);
    // Deliberate difference 29 (docs/node-lifecycle.md): no condition taint is written from a view
    // the controller cannot trust (an API server outage, a lost watch past the reconnect allowance):
    // the cached conditions may be older than the outage. Upstream writes from its lister whatever
    // its age. The node is tried again until sight returns, then decided from the current view.
    if (!this.#d.canSeeCluster()) {
      this.#queue.addAfter(name, NOSCHEDULE_BLIND_RETRY_MS);
      return;
    }
    const node = this.#d.caches.nodes.get(name);
    // A node whose newest version could not be read gets no write (difference 24, unreadable.ts);
    // its readable version arrives as a node event, which queues it again.
    if (!node || newestUnreadable(this.#d.caches.nodes, name)) return;
    const cachedDiff = conditionTaintDiff(node);
    if (cachedDiff.toAdd.length > 0 || cachedDiff.toRemove.length > 0) {
      // Difference 29, continued (issue 57, fuzz seed 20271208 run 19451): the Ready=Unknown the
      // cached node carries may be this controller's own verdict from before an outage, which
      // difference 28 holds until the node is judged again from what it sees since. The
      // unreachable taint mirrors that verdict, so it waits too (as the NoExecute one does); the
      // node is tried again until the verdict is renewed or dropped. Can only delay a taint.
      // Asked of the node as cached when asked (at send time too), not of the copy decided on: a
      // Ready=Unknown that reached the cache while the write waited is held as well.
      const onHold = (): string | undefined =>
        conditionTaintDiff(this.#d.caches.nodes.get(name) ?? node).toAdd.some((t) => t.key === TAINT_NODE_UNREACHABLE) ? this.#l.rejudging(name) : undefined;
      if (onHold() !== undefined) {
        this.#queue.addAfter(name, NOSCHEDULE_BLIND_RETRY_MS);
        return;
      }
      if (this.#waitForNoExecute(node, waitingSince)) return;
      // The diff is recomputed on the copy the patch starts from (our own last write's response
      // when the cache lags): a cache-based diff would re-add a taint that write already added,
      // re-stamping its timeAdded in a second, useless patch.
      let applied: { added: readonly Taint[]; removed: readonly Taint[] } = { added: [], removed: [] };
      const r = await this.#d.writes
        .swapNodeTaints(name, [], [], node, {
          conditionTaints: true,
          onConditionTaints: (added, removed) => (applied = { added, removed }),
          // Behind status and NoExecute writes in the throttle (src/kube/throttle.ts `WritePriority`):
          // later only; a NoExecute taint write carries these taints too (difference 12).
          priority: 'noschedule-taint',
          // A write that waits in the throttle into an outage is not sent then (difference 29).
          recheck: () => (this.#d.canSeeCluster() ? onHold() : BLIND),
        })
        .catch((err: unknown) => {
          if (!isNotCalledFor(err)) throw err;
          // Withheld at send time: tried again, and decided from the view as it is then.
          this.#queue.addAfter(name, NOSCHEDULE_BLIND_RETRY_MS);
          return 'withheld' as const;
        });
      if (r === 'withheld') return;
      if (r === 'written') {
        this.#d.log.info(
          { node: name, added: applied.added.map((t) => t.key), removed: applied.removed.map((t) => t.key) },
          'Updated NoSchedule condition taints',
        );
      }
    }
    const wanted = (n: Node): Record<string, string> | undefined => {
      const labels: Record<string, string> = {};
      for (const [primary, secondary] of LABEL_RECONCILE) {
        const v = n.labels[primary];
        if (v !== undefined && n.labels[secondary] !== v) labels[secondary] = v;
      }
      return Object.keys(labels).length > 0 ? labels : undefined;
    };
    if (wanted(node)) await this.#d.writes.patchNodeLabels(name, node, wanted);
  }

  /**
   * Deliberate difference 13 (only delays a NoSchedule taint, by at most
   * {@link NOSCHEDULE_WAIT_FOR_NOEXECUTE_MS}): while the node's NoExecute taint write is coming,
   * its condition taints are left to that write. Our writes to one node run one after another
   * (writer.ts), so a condition-taint write that took the node first, and waits in the throttle
   * behind other nodes' status and NoExecute writes (`noschedule-taint` priority), holds the
   * NoExecute taint back with it, and costs a write the NoExecute patch makes anyway: in a 17-node
   * wave at 100/200 those nodes were the taint latency's tail (0.6–1.0 s, issue 29, measured
   * while bottleneck's submit step still queued them behind pod writes too).
   * The zone part re-queues the node when its taint attempt ends; the wait is re-queued here too,
   * so a NoExecute taint that does not come (a 409 loop, a guard's hold) costs at most the bound.
   * @param since when this node's wait began (epoch ms), if it was waiting already.
   * @returns true when the write waits (the node is queued again).
   */
  #waitForNoExecute(node: Node, since: number | undefined): boolean {
    if (!this.#l.noExecuteTaintPending(node)) return false;
    const now = this.#d.clock.now();
    const began = since ?? now;
    const left = began + NOSCHEDULE_WAIT_FOR_NOEXECUTE_MS - now;
    if (left <= 0) return false;
    this.#afterNoExecute.set(node.name, began);
    this.#queue.addAfter(node.name, left);
    return true;
  }
}
