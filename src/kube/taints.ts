/**
 * Taint keys, node condition types and taint-set predicates that more than one controller (and
 * src/kube/predicates.ts) shares, plus the one taint formatter. Pure: no I/O, no clock.
 *
 * Upstream sources mirrored:
 * - `k8s.io/api/core/v1/well_known_taints.go` and `types.go` (`NodeConditionType` values);
 * - `k8s.io/api/core/v1/taint.go` (`(*Taint).MatchTaint`, `(*Taint).ToString`);
 * - `pkg/util/taints/taints.go` (`TaintExists`, `TaintKeyExists`).
 */

import type { Taint } from './objects.js';
// ---------------------------------------------------------------------------
// Well-known keys (upstream-node-lifecycle.md §1.3; `k8s.io/api/core/v1/well_known_taints.go`).
// ---------------------------------------------------------------------------

/** Taint key for a node whose Ready condition is False. */
export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
/** Taint key for a node whose Ready condition is Unknown (the controller lost its heartbeat). */
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
/** Taint key for a cordoned node (`spec.unschedulable: true`). */
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
/** Taint key for MemoryPressure=True. */
export const TAINT_NODE_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
/** Taint key for DiskPressure=True. */
export const TAINT_NODE_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
/** Taint key for PIDPressure=True. */
export const TAINT_NODE_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
/** Taint key for NetworkUnavailable=True. */
export const TAINT_NODE_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
/**
 * Taint key an operator sets on a node that is shut down for good (KEP-2268, non-graceful node
 * shutdown). Matched by key only by PodGC and the attach/detach controller; the NLC never sets it.
 */
export const TAINT_NODE_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

/** Node condition types the controller reads (`k8s.io/api/core/v1` `NodeConditionType`). */
export const NODE_READY = 'Ready';
/** See {@link NODE_READY}. */
export const NODE_MEMORY_PRESSURE = 'MemoryPressure';
/** See {@link NODE_READY}. */
export const NODE_DISK_PRESSURE = 'DiskPressure';
/** See {@link NODE_READY}. */
export const NODE_PID_PRESSURE = 'PIDPressure';
/** See {@link NODE_READY}. */
export const NODE_NETWORK_UNAVAILABLE = 'NetworkUnavailable';

// ---------------------------------------------------------------------------
// Matching and equality.
// ---------------------------------------------------------------------------

/**
 * Whether two taints have the same key and effect (value and timeAdded are ignored).
 * Mirrors `(*Taint).MatchTaint` in `k8s.io/api/core/v1/taint.go`.
 */
export function taintMatches(a: Readonly<Taint>, b: Readonly<Taint>): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/**
 * Semantic equality of two taints: key, effect, value (absent ≡ `""`) and the exact
 * `timeAdded` instant (epoch ms; absent only equals absent).
 * Mirrors `apiequality.Semantic.DeepEqual` on `v1.Taint` as used by `AddOrUpdateTaint`.
 */
export function taintsEqual(a: Readonly<Taint>, b: Readonly<Taint>): boolean {
  return taintMatches(a, b) && (a.value ?? '') === (b.value ?? '') && a.timeAdded === b.timeAdded;
}

/**
 * Whether `list` holds a taint with the key and effect of `t` (value ignored).
 * Mirrors `TaintExists` in `pkg/util/taints/taints.go`.
 */
export function taintExists(list: readonly Taint[], t: Readonly<Taint>): boolean {
  return list.some((x) => taintMatches(x, t));
}

/**
 * Whether `list` holds a taint with the given key, whatever its effect.
 * Mirrors `TaintKeyExists` in `pkg/util/taints/taints.go`.
 */
export function taintKeyExists(list: readonly Taint[], key: string): boolean {
  return list.some((x) => x.key === key);
}


/**
 * A taint as `key=value:effect`, or `key:effect` without a value (an empty value counts as none).
 * Mirrors `(*Taint).ToString()` in `k8s.io/api/core/v1/taint.go`.
 */
export function formatTaint(t: Readonly<Pick<Taint, 'key' | 'value' | 'effect'>>): string {
  return t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`;
}
