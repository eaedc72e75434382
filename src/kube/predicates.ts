/**
 * Pure predicates on slim Nodes and Pods that more than one controller asks: is a node Ready, is
 * it out of service, is a pod terminal, is it terminated in the attach/detach controller's sense.
 * No I/O, no clock reads.
 *
 * Mirrors `IsNodeReady` (`pkg/controller/util/node/controller_utils.go`), the node test of
 * `gcTerminating` (`pkg/controller/podgc/gc_controller.go`), and `IsPodTerminated`
 * (`pkg/volume/util/util.go`).
 */
import { NODE_READY, TAINT_NODE_OUT_OF_SERVICE, taintKeyExists } from './taints.js';
import { getCondition, type Node, type Pod } from './objects.js';

/**
 * Whether the node's Ready condition exists with status `True`; a missing condition is not Ready.
 * Mirrors `IsNodeReady` (`pkg/controller/util/node/controller_utils.go`'s use in podgc).
 */
export function isNodeReady(node: Pick<Node, 'conditions'>): boolean {
  return getCondition(node.conditions, NODE_READY)?.status === 'True';
}

/**
 * A node is out of service when it is not Ready (a missing Ready condition counts as not Ready)
 * and carries a taint with key `node.kubernetes.io/out-of-service`, whatever its effect or value.
 * Mirrors the node test of `gcTerminating` (`!IsNodeReady(node) && TaintKeyExists(...)`).
 * @returns false for `undefined` (an unknown node is never out of service).
 */
export function isNodeOutOfService(node: Pick<Node, 'conditions' | 'taints'> | undefined): boolean {
  return node !== undefined && !isNodeReady(node) && taintKeyExists(node.taints, TAINT_NODE_OUT_OF_SERVICE);
}

/** True for the terminal phases Succeeded and Failed. Mirrors `podutil.IsPodTerminal`. */
export function isPodTerminal(pod: Pick<Pod, 'phase'>): boolean {
  return pod.phase === 'Succeeded' || pod.phase === 'Failed';
}

/**
 * Whether the attach/detach controller would drop the pod from its desired state of the world:
 * the pod is terminal (Succeeded/Failed), or it is being deleted (deletionTimestamp set) **and** no
 * container, init container or ephemeral container is still running ({@link Pod.containersNotRunning}).
 * A terminating pod whose containers may still run keeps its volumes: on a partitioned node they
 * may still be writing. A pod without `containersNotRunning` (not built by `toPod`) counts as running.
 * Mirrors `IsPodTerminated` (`pkg/volume/util/util.go`), called through `DetermineVolumeAction`
 * (`pkg/controller/volume/attachdetach/util/util.go`).
 */
export function isPodTerminated(pod: Pick<Pod, 'phase' | 'deletionTimestamp' | 'containersNotRunning'>): boolean {
  return isPodTerminal(pod) || (pod.deletionTimestamp !== undefined && pod.containersNotRunning === true);
}
