/**
 * The table of the controller registry: every controller this program can run, in start order
 * (stop order too). Each descriptor lives in its controller's folder. Canonical names are
 * kube-controller-manager's (1.29+), with its aliases (the pre-1.29 names).
 *
 * Deliberate difference from upstream: `attach-detach-controller` is an extra alias of ours, and our
 * attach/detach controller only performs the force-detach half of upstream's (the timeout and
 * out-of-service paths of `reconciler.go`), so keep upstream's `attachdetach` running for attaching
 * volumes.
 *
 * Upstream analogue: `NewControllerDescriptors` (`cmd/kube-controller-manager/app/controllermanager.go`).
 */
import { nodeAffinityDescriptor } from '../nodeaffinity/descriptor.js';
import { nodeLifecycleDescriptor } from '../nodelifecycle/descriptor.js';
import { podGCDescriptor } from '../podgc/descriptor.js';
import { taintEvictionDescriptor } from '../tainteviction/descriptor.js';
import { forceDetachDescriptor } from '../volumes/descriptor.js';

/** Every controller, in start order (and stop order). */
export const CONTROLLER_REGISTRY = [nodeLifecycleDescriptor, taintEvictionDescriptor, podGCDescriptor, forceDetachDescriptor, nodeAffinityDescriptor] as const;
