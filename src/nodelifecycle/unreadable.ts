/**
 * Nodes whose newest version could not be read: the Node informer keeps the last readable version of
 * a node whose update is malformed (src/kube/informercache.ts `keepLastReadable`), so that zone
 * states still count it, and marks it (`newestUnreadable`). The controller takes no decision on such
 * a node and writes nothing to it or to its pods until a readable version arrives (fail closed).
 *
 * Why: upstream's lister holds the same stale copy, but nothing upstream writes from it lands. Its
 * status update (`tryUpdateNodeHealth`) from the stale copy conflicts, and the re-GET that follows
 * cannot be decoded, so `monitorNodeHealth` logs "Update health of Node from Controller error,
 * Skipping - no pods will be evicted" and gives up on the node for the pass; its taint writes
 * (`SwapNodeControllerTaint`, `AddOrUpdateTaintOnNode`, `RemoveTaintOffNode` in
 * `pkg/controller/controller_utils.go`) start with a GET of the node, which fails the same way.
 * Ours would patch from the kept copy (a resourceVersion-guarded patch still conflicts on a real
 * API server, but an in-memory one, a what-if or a write started before the node turned malformed
 * need not), so the parts check first. Reduce-only: docs/node-lifecycle.md difference 24.
 *
 * Upstream: `pkg/controller/nodelifecycle/node_lifecycle_controller.go` `monitorNodeHealth`.
 */
import type { NodeLifecycleCaches, NodeLifecycleWrites } from './parts.js';
import type { WriteRecheck } from '../kube/throttle.js';

/** Refused: a write to a node (or to a pod on a node) whose newest version could not be read. */
export class UnreadableNodeError extends Error {
  /** @param node the node's name. */
  constructor(readonly node: string) {
    super(`node ${node}: its newest version could not be read; nothing is written until it can be`);
    this.name = 'UnreadableNodeError';
  }
}

/**
 * Whether the node cache holds only the last readable version of `name` (its newest is malformed).
 * @returns false for a readable or absent node, and for a cache that cannot tell (tests' worlds).
 */
export function newestUnreadable(nodes: NodeLifecycleCaches['nodes'], name: string): boolean {
  return nodes.newestUnreadable?.(name) === true;
}

/**
 * Wraps the controller's writes so that none reaches a node whose newest version could not be read:
 * the node writes (status, taints, labels) and the pod writes on such a node (NotReady, legacy
 * eviction) throw {@link UnreadableNodeError} instead; every caller already treats a thrown write as
 * "not done, try again later" (the callers that can check first do, to avoid the retry churn).
 * @param writes the writes to wrap.
 * @param nodes the node cache (its `newestUnreadable`, read when a write is asked for and again
 *   right before each send: a node that became unreadable while its write waited is not written, and
 *   the write rejects with `NotCalledForError`).
 * @returns writes with the same contract. Throws (rejects) {@link UnreadableNodeError} as above.
 */
export function withUnreadableNodeGuard(writes: NodeLifecycleWrites, nodes: NodeLifecycleCaches['nodes']): NodeLifecycleWrites {
  const check = (name: string): void => {
    if (newestUnreadable(nodes, name)) throw new UnreadableNodeError(name);
  };
  // Read again right before each send (src/kube/throttle.ts `WriteRecheck`): a node whose newest
  // version became unreadable while the write waited is not written either.
  const sendTime =
    (name: string, recheck: WriteRecheck | undefined): WriteRecheck =>
    () =>
      newestUnreadable(nodes, name) ? `the newest version of node ${name} cannot be read` : recheck?.();
  return {
    swapNodeTaints: async (name, toAdd, toRemove, cached, opts = {}) => (check(name), writes.swapNodeTaints(name, toAdd, toRemove, cached, { ...opts, recheck: sendTime(name, opts.recheck) })),
    updateNodeConditions: async (name, cached, compute, recheck) => (check(name), writes.updateNodeConditions(name, cached, compute, sendTime(name, recheck))),
    markPodNotReady: async (pod, nodeName, recheck) => (check(nodeName), writes.markPodNotReady(pod, nodeName, sendTime(nodeName, recheck))),
    evictPodLegacy: async (pod, nodeName, recheck) => (check(nodeName), writes.evictPodLegacy(pod, nodeName, sendTime(nodeName, recheck))),
    patchNodeLabels: async (name, cached, compute, recheck) => (check(name), writes.patchNodeLabels(name, cached, compute, sendTime(name, recheck))),
    forgetNode: (name) => writes.forgetNode(name),
  };
}
