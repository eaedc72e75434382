/**
 * Condition taints and taint-set helpers of the node lifecycle controller, as pure functions.
 *
 * Nothing here does I/O or reads a clock: the caller passes "now" in epoch **milliseconds**.
 * The controller shell GETs the node, calls {@link applyTaintSwap} and PATCHes the returned list.
 *
 * Upstream sources mirrored:
 * - `pkg/controller/nodelifecycle/node_lifecycle_controller.go` (`doNoScheduleTaintingPass`,
 *   `nodeConditionToTaintKeyStatusMap`, `taintKeyToNodeConditionMap`, the NoExecute templates);
 * - `pkg/controller/controller_utils.go` (`SwapNodeControllerTaint`, `AddOrUpdateTaintOnNode`,
 *   `RemoveTaintOffNode`);
 * - `pkg/util/taints/taints.go` (`AddOrUpdateTaint`, `RemoveTaint`, `TaintExists`,
 *   `TaintKeyExists`, `TaintSetDiff`).
 */

import type { Node, Taint } from '../kube/objects.js';
// The well-known keys, condition types, taint-set predicates and the taint formatter live in
// src/kube/taints.ts (shared with src/kube/predicates.ts and the other controllers): import them
// from there. This file holds only what the node lifecycle controller decides about taints.
import {
  NODE_DISK_PRESSURE,
  NODE_MEMORY_PRESSURE,
  NODE_NETWORK_UNAVAILABLE,
  NODE_PID_PRESSURE,
  NODE_READY,
  TAINT_NODE_DISK_PRESSURE,
  TAINT_NODE_MEMORY_PRESSURE,
  TAINT_NODE_NETWORK_UNAVAILABLE,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_UNSCHEDULABLE,
  taintExists,
  taintMatches,
  taintsEqual,
} from '../kube/taints.js';

/**
 * The NoExecute taint added to a node whose Ready condition is Unknown.
 * Mirrors upstream `UnreachableTaintTemplate` (no value; `timeAdded` is stamped when it is added).
 */
export const UNREACHABLE_TAINT_TEMPLATE: Readonly<Taint> = Object.freeze({
  key: TAINT_NODE_UNREACHABLE,
  effect: 'NoExecute',
});

/**
 * The NoExecute taint added to a node whose Ready condition is False.
 * Mirrors upstream `NotReadyTaintTemplate`.
 */
export const NOT_READY_TAINT_TEMPLATE: Readonly<Taint> = Object.freeze({
  key: TAINT_NODE_NOT_READY,
  effect: 'NoExecute',
});

/**
 * Condition type → condition status → NoSchedule taint key.
 * Mirrors upstream `nodeConditionToTaintKeyStatusMap`.
 */
const CONDITION_TO_TAINT_KEY: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  [
    NODE_READY,
    new Map([
      ['False', TAINT_NODE_NOT_READY],
      ['Unknown', TAINT_NODE_UNREACHABLE],
    ]),
  ],
  [NODE_MEMORY_PRESSURE, new Map([['True', TAINT_NODE_MEMORY_PRESSURE]])],
  [NODE_DISK_PRESSURE, new Map([['True', TAINT_NODE_DISK_PRESSURE]])],
  [NODE_NETWORK_UNAVAILABLE, new Map([['True', TAINT_NODE_NETWORK_UNAVAILABLE]])],
  [NODE_PID_PRESSURE, new Map([['True', TAINT_NODE_PID_PRESSURE]])],
]);

/**
 * Every taint key the NoSchedule pass owns: the condition keys (upstream
 * `taintKeyToNodeConditionMap`) plus `unschedulable`. NoSchedule taints with any other key belong
 * to someone else and are never touched.
 */
export const CONDITION_TAINT_KEYS: ReadonlySet<string> = new Set([
  TAINT_NODE_NOT_READY,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_NETWORK_UNAVAILABLE,
  TAINT_NODE_MEMORY_PRESSURE,
  TAINT_NODE_DISK_PRESSURE,
  TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNSCHEDULABLE,
]);

// ---------------------------------------------------------------------------
// Condition → NoSchedule taints (doNoScheduleTaintingPass).
// ---------------------------------------------------------------------------

/**
 * The NoSchedule taints a node's conditions call for, in condition order, then `unschedulable`
 * when `spec.unschedulable` is set. The taints carry no value and no timeAdded.
 * A condition listed twice yields its taint twice, as upstream does; the swap is idempotent on it.
 * Mirrors the first half of `doNoScheduleTaintingPass` (upstream-node-lifecycle.md §2.5 step 2).
 */
export function desiredConditionTaints(node: Pick<Node, 'conditions' | 'unschedulable'>): Taint[] {
  const out: Taint[] = [];
  for (const c of node.conditions) {
    const key = CONDITION_TO_TAINT_KEY.get(c.type)?.get(c.status);
    if (key !== undefined) out.push({ key, effect: 'NoSchedule' });
  }
  if (node.unschedulable) out.push({ key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' });
  return out;
}

/**
 * Whether the NoSchedule pass owns this taint: effect NoSchedule and a key in
 * {@link CONDITION_TAINT_KEYS}. Mirrors the `TaintSetFilter` predicate in `doNoScheduleTaintingPass`.
 */
export function isConditionTaint(t: Readonly<Taint>): boolean {
  return t.effect === 'NoSchedule' && CONDITION_TAINT_KEYS.has(t.key);
}

/** The taints to add and remove to bring a node's condition taints in line with its conditions. */
export interface TaintDiff {
  /** Desired condition taints that are absent (no value, no timeAdded; stamp before adding). */
  toAdd: Taint[];
  /** Existing condition taints that are no longer desired, as they are on the node. */
  toRemove: Taint[];
}

/**
 * Computes the NoSchedule condition-taint diff of a node, matching by (key, effect) only.
 * Only taints for which {@link isConditionTaint} holds are candidates for removal; every other
 * taint on the node is left alone. Both lists are empty when the node is already in line.
 * Mirrors `doNoScheduleTaintingPass` steps 2–4 and `TaintSetDiff` (upstream-node-lifecycle.md §2.5).
 */
export function conditionTaintDiff(node: Pick<Node, 'conditions' | 'unschedulable' | 'taints'>): TaintDiff {
  const desired = desiredConditionTaints(node);
  const existing = node.taints.filter(isConditionTaint);
  return {
    toAdd: desired.filter((t) => !taintExists(existing, t)),
    toRemove: existing.filter((t) => !taintExists(desired, t)).map((t) => ({ ...t })),
  };
}

// ---------------------------------------------------------------------------
// Add / remove / swap on a taint list (controller_utils.go).
// ---------------------------------------------------------------------------

/**
 * Adds or updates one taint in a list.
 * - A taint with the same (key, effect) that is semantically equal ({@link taintsEqual}) ⇒ no change.
 * - One that differs is replaced **in place** (every matching entry, in its position).
 * - Otherwise the taint is appended.
 * @returns the new list, or `undefined` when nothing changes. The input is never mutated.
 * Mirrors `AddOrUpdateTaint` in `pkg/util/taints/taints.go`.
 */
export function addOrUpdateTaint(list: readonly Taint[], taint: Readonly<Taint>): Taint[] | undefined {
  const out: Taint[] = [];
  let replaced = false;
  for (const existing of list) {
    if (taintMatches(existing, taint)) {
      if (taintsEqual(existing, taint)) return undefined;
      out.push({ ...taint });
      replaced = true;
    } else {
      out.push(existing);
    }
  }
  if (!replaced) out.push({ ...taint });
  return out;
}

/**
 * Applies {@link addOrUpdateTaint} for each taint in turn. Does **not** stamp `timeAdded`.
 * @returns the new list, or `undefined` when no taint changed anything.
 * Mirrors the loop inside `AddOrUpdateTaintOnNode` (`pkg/controller/controller_utils.go`).
 */
export function addOrUpdateTaints(list: readonly Taint[], taints: readonly Taint[]): Taint[] | undefined {
  let current: readonly Taint[] = list;
  let changed = false;
  for (const t of taints) {
    const next = addOrUpdateTaint(current, t);
    if (next) {
      current = next;
      changed = true;
    }
  }
  return changed ? [...current] : undefined;
}

/**
 * Removes every taint whose (key, effect) matches one of `taints`; values are ignored.
 * @returns the new list, or `undefined` when none of `taints` is present (upstream then makes no
 * API call). Mirrors `RemoveTaintOffNode` / `RemoveTaint` (`controller_utils.go`, `taints.go`).
 */
export function removeTaints(list: readonly Taint[], taints: readonly Taint[]): Taint[] | undefined {
  const out = list.filter((x) => !taintExists(taints, x));
  return out.length === list.length ? undefined : out;
}

/**
 * The full taint list after swapping controller taints: every taint in `toAdd` is stamped with
 * `timeAdded = nowMs` and added or updated in place (so re-adding an existing controller taint
 * refreshes its timeAdded, while an identical one is a no-op); then every taint matching a
 * `toRemove` entry by (key, effect) is dropped. Taints matching neither list are kept exactly,
 * in their order.
 *
 * Upstream issues two patches (add, then remove), so a failure between them leaves the node
 * half-swapped. This function yields the combined end state, which a caller can write with one
 * patch; whether it does is the controller's choice (and a deliberate difference if it does).
 *
 * @param current the node's taints (not mutated).
 * @param toAdd taints to add; their `timeAdded` is overwritten.
 * @param toRemove taints to remove, matched by key and effect.
 * @param nowMs epoch milliseconds to stamp on the added taints.
 * @returns the new list, or `undefined` when the result equals `current` (no patch needed).
 * Mirrors `SwapNodeControllerTaint` + `AddOrUpdateTaintOnNode` + `RemoveTaintOffNode`
 * (`pkg/controller/controller_utils.go`; upstream-node-lifecycle.md §2.6).
 */
export function applyTaintSwap(
  current: readonly Taint[],
  toAdd: readonly Taint[],
  toRemove: readonly Taint[],
  nowMs: number,
): Taint[] | undefined {
  const stamped = toAdd.map((t) => ({ ...t, timeAdded: nowMs }));
  const added = addOrUpdateTaints(current, stamped) ?? current;
  const result = removeTaints(added, toRemove) ?? added;
  const same = result.length === current.length && result.every((t, i) => taintsEqual(t, current[i] as Taint));
  return same ? undefined : [...result];
}

/** What {@link fencedTaintSwap} makes of a swap: the list to write and the additions it refused. */
export interface FencedTaintSwap {
  /** The new taint list, or `undefined` when what is left of the swap changes nothing (no write). */
  next: Taint[] | undefined;
  /** The NoExecute taints the fence refused to add (empty when it refused nothing). */
  refused: Taint[];
}

/**
 * {@link applyTaintSwap} behind the NoExecute fence. While `noExecuteFenced` is true (the
 * all-zones stop is on), every NoExecute taint of `toAdd` whose (key, effect) is not already on
 * `current` is dropped from the swap; the rest of it (every removal, NoSchedule additions, and
 * re-stamping a NoExecute taint the node already carries) is applied as usual. Removal of a
 * NoExecute taint is never refused.
 *
 * Ours, not upstream's (reduce-only): upstream's `SwapNodeControllerTaint` has no such check, so a
 * swap already in flight when `handleDisruption` removes the taints can add one back during the
 * stop. The writers (writer.ts, src/inmemory/writer.ts, src/shadow/writers.ts) call this right
 * before each write attempt, with the flag read at that moment.
 *
 * @param current the node's taints (not mutated); @param toAdd taints to add (`timeAdded` is
 * overwritten with `nowMs`, epoch milliseconds); @param toRemove taints to remove by key and effect.
 * @returns the list to write (or `undefined`) and the refused additions. Never throws.
 */
export function fencedTaintSwap(
  current: readonly Taint[],
  toAdd: readonly Taint[],
  toRemove: readonly Taint[],
  nowMs: number,
  noExecuteFenced: boolean,
): FencedTaintSwap {
  const refused = noExecuteFenced ? toAdd.filter((t) => t.effect === 'NoExecute' && !taintExists(current, t)) : [];
  const allowed = refused.length === 0 ? toAdd : toAdd.filter((t) => !refused.includes(t));
  return { next: applyTaintSwap(current, allowed, toRemove, nowMs), refused: refused.map((t) => ({ ...t })) };
}
