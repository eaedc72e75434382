/**
 * The NoExecute fence: while the all-zones stop is on, no NoExecute taint is added to any node, by
 * any path (the tainting pass, the unreachable↔not-ready swap, anything added later).
 *
 * Why at the write and not at each caller: the stop begins in `handleDisruption`, which queues the
 * removal of every NoExecute taint; a swap already in flight (waiting for the node's write lock,
 * the throttle, or a conflict's fresh GET) would otherwise start from the newer copy, which the
 * removal just cleared, and add `unreachable:NoExecute` during the stop. So the writers read the
 * stop right before each write attempt (`noExecuteFence`, `fencedTaintSwap` in taints.ts), and this
 * wrapper hands that flag to every taint write the controller makes. Removing a NoExecute taint is
 * never refused. A refused addition is dropped, not kept: the node is decided again, level-based,
 * by the monitor passes, which queue it once more; the stop's rate 0 holds it until the stop ends.
 *
 * Ours, not upstream's (reduce-only, docs/node-lifecycle.md and docs/upstream-1.37.md): upstream
 * `SwapNodeControllerTaint` (`pkg/controller/util/node/controller_utils.go`), called from
 * `processTaintBaseEviction` and `doNoExecuteTaintingPass` in
 * `pkg/controller/nodelifecycle/node_lifecycle_controller.go`, has no such check.
 */
import type { NodeLifecycleDeps, NodeLifecycleWrites } from './parts.js';
import { formatTaint } from '../kube/taints.js';

/** The Event reason that explains, on the node, a NoExecute taint the fence refused. */
export const NOEXECUTE_FENCED_REASON = 'NoExecuteTaintFenced';

/**
 * Wraps the controller's writes so that every `swapNodeTaints` carries the NoExecute fence. The
 * other writes pass through unchanged.
 * @param deps the writes to wrap, the logger and the Event sink (a refused addition is explained
 *   with a log line and a Warning Event `NoExecuteTaintFenced` on the node).
 * @param stopOn read by the writer right before each write attempt: true while the all-zones stop
 *   is on (the controller passes `ZoneTainting.allZonesStopped`).
 * @returns writes with the same contract, where `swapNodeTaints` may also answer `'fenced'`.
 *   Never throws beyond what the wrapped writes throw.
 */
export function withNoExecuteFence(
  deps: Pick<NodeLifecycleDeps, 'writes' | 'log' | 'events'>,
  stopOn: () => boolean,
): NodeLifecycleWrites {
  const w = deps.writes;
  return {
    swapNodeTaints: async (name, toAdd, toRemove, cached, opts = {}) => {
      const r = await w.swapNodeTaints(name, toAdd, toRemove, cached, { ...opts, noExecuteFence: stopOn });
      if (r === 'fenced') {
        const refused = toAdd.filter((t) => t.effect === 'NoExecute').map(formatTaint);
        const message = `Not adding ${refused.join(', ')}: every zone is FullDisruption (the all-zones stop); the node is decided again when the stop ends`;
        deps.log.warn({ node: name, refused }, 'NoExecute taint refused during the all-zones stop');
        if (cached) deps.events.record({ kind: 'Node', name, uid: cached.uid }, 'Warning', NOEXECUTE_FENCED_REASON, message);
      }
      return r;
    },
    updateNodeConditions: (name, cached, compute, recheck) => w.updateNodeConditions(name, cached, compute, recheck),
    markPodNotReady: (pod, nodeName, recheck) => w.markPodNotReady(pod, nodeName, recheck),
    evictPodLegacy: (pod, nodeName, recheck) => w.evictPodLegacy(pod, nodeName, recheck),
    patchNodeLabels: (name, cached, compute, recheck) => w.patchNodeLabels(name, cached, compute, recheck),
    forgetNode: (name) => w.forgetNode(name),
  };
}
