/**
 * The taint eviction controller's pure rule that holds a deletion whose deadline passed while it
 * could not see the cluster (the blind-time rule: time the controller could not see the cluster
 * never counts). Its record of that time is src/kube/sight.ts `SightTracker`, shared with the node
 * lifecycle controller.
 *
 * No upstream counterpart: kube-controller-manager's taint manager fires its in-memory timers
 * blindly, and during an API outage the deletion fails and is given up after five tries
 * (kubernetes/kubernetes#140639). Ours retries until done and anchors deadlines on the taint's
 * `timeAdded` (#108268), so without this rule it would delete, the moment sight returns, every pod
 * whose toleration ran out during the outage — before the node lifecycle controller has seen the
 * node's heartbeat again and removed the taint. See docs/taint-eviction.md, "Deliberate
 * differences", for the rule and why it can only delay.
 */
import type { BlindInterval } from '../kube/sight.js';

/**
 * What the decision needs to know about sight. `lastBlind` is the most recent blind interval that
 * has ended (`undefined`: none since the controller started); `holdMs` is how long after sight
 * returned the node lifecycle controller needs to re-judge a node (`--node-monitor-grace-period`),
 * in **milliseconds**.
 */
export interface SightInput {
  lastBlind: BlindInterval | undefined;
  holdMs: number;
}

/**
 * When a deletion that became due at `dueMs` (epoch ms) may run, given sight: `undefined` when it
 * need not wait; otherwise `lastBlind.toMs + holdMs` (epoch ms).
 *
 * The rule: a deletion due at or before the end of the last blind interval waits until sight has
 * been back for a full `holdMs` (the node monitor grace period). By then the node lifecycle
 * controller, which gives every node a fresh grace period when sight returns (nodelifecycle
 * controller.ts `#checkSight`), has either seen the node heartbeat and removed the taint, or not;
 * the caller re-decides on the taints it sees then. Only the *last* interval matters: a deletion
 * due before an earlier interval is due before the last one too, and waiting for the later end
 * covers both.
 *
 * Pure; never throws. Mirrors nothing upstream (see the module comment).
 */
export function sightHoldUntilMs(dueMs: number, sight: SightInput | undefined): number | undefined {
  if (sight?.lastBlind === undefined || dueMs > sight.lastBlind.toMs) return undefined;
  return sight.lastBlind.toMs + sight.holdMs;
}
