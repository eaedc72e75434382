/**
 * What the taint eviction controller should do with one pod on a node with NoExecute taints, and
 * how that decision combines with a deletion that is already pending.
 *
 * Mirrors `pkg/controller/tainteviction/taint_eviction.go` `processPodOnNode`, split into a pure
 * decision ({@link decidePodEviction}) and a pure reconciliation with the pending queue entry
 * ({@link planEviction}).
 */
import type { Pod, Taint } from '../kube/objects.js';
import { formatTaint } from '../kube/taints.js';
import { FOREVER, firstToleratingToleration, noExecuteTaints, tolerationTimeMs } from './tolerations.js';
import { sightHoldUntilMs, type SightInput } from './blindhold.js';
import { isNodeLifecycleNoExecuteTaint } from '../kube/judgements.js';

/**
 * The outcome for one pod.
 * - `none`: nothing to evict for (no NoExecute taint, or every one tolerated forever); cancel
 *   anything pending.
 * - `delete-now`: a taint is not tolerated, or a toleration has already run out.
 * - `delete-at`: delete at `atMs` (epoch **milliseconds**) unless something changes first.
 *
 * `taint` is the taint that drives the outcome; `reason` is a human-readable sentence for logs.
 * `expired` is set on a `delete-now` whose toleration ran out (absent: a taint is not tolerated).
 * `held`: a deletion is due for a taint the node lifecycle controller manages, but that controller has
 * not confirmed the node not Ready since its start (see {@link DecideOptions.judgement}); nothing is
 * deleted until a new decision says otherwise.
 * `heldForSightFromMs` is set on a `delete-at` that is a sight hold (see {@link DecideOptions.sight}):
 * the deletion was due then (epoch ms), during or before the last blind interval, and waits until
 * `atMs`, a full node monitor grace period after sight returned.
 */
export type Decision =
  | { kind: 'none' }
  | { kind: 'delete-now'; reason: string; taint: Taint; expired?: true }
  | { kind: 'held'; reason: string; taint: Taint }
  | { kind: 'delete-at'; atMs: number; reason: string; taint: Taint; heldForSightFromMs?: number };

/** Options for {@link decidePodEviction}. */
export interface DecideOptions {
  /**
   * For a taint without `timeAdded`: when this controller first saw that taint on the pod's node,
   * in epoch **milliseconds**, or `undefined` if unknown (then "now" is used).
   */
  firstSeen?: (taint: Taint) => number | undefined;
  /**
   * The controller's last blind interval and the hold after it (blindhold.ts). A deletion due at or
   * before the end of that interval becomes a `delete-at` the hold's end (deliberate difference:
   * no eviction decided on time the controller could not see). `undefined`: no hold.
   */
  sight?: SightInput;
  /**
   * When this process first saw the pod's current tolerations, epoch **milliseconds**, if it saw
   * them change (an update whose tolerations differ from the copy it had); `undefined` for the
   * tolerations the pod had when this process first saw it. No deadline is earlier than this plus
   * the toleration's seconds (see {@link decidePodEviction}).
   */
  tolerationsSeenMs?: number;
  /**
   * The start hold for the NoExecute taints the node lifecycle controller manages
   * (`node.kubernetes.io/unreachable`, `node.kubernetes.io/not-ready`; src/kube/judgements.ts).
   * `undefined`: no hold (that controller has confirmed the pod's node not Ready since its start).
   * - `heldBecause`: the node lifecycle controller of this process has not confirmed the node not
   *   Ready since its start (why, as a clause): a deletion those taints make due now is `held`.
   * - `firstSightMs` and `holdMs` (epoch ms, ms): no node lifecycle controller runs in this process;
   *   the time before this process first saw the cluster counts as blind, so a deletion those taints
   *   made due at or before `firstSightMs` waits until `firstSightMs + holdMs`
   *   (`--node-monitor-grace-period`) for the other process's controller to remove a stale taint.
   */
  judgement?: { heldBecause: string } | { firstSightMs: number; holdMs: number };
  /**
   * The `TaintTolerationComparisonOperators` feature gate (`--feature-gates`): `Lt`/`Gt`
   * tolerations tolerate a taint only when it is on (tolerations.ts `toleratesTaint`). Default
   * false, upstream's default in 1.37; the controller always passes its configured value.
   */
  comparisonOperators?: boolean;
}

/**
 * When the pod can first have been exposed to a taint: its creation, or its binding to the node
 * (the PodScheduled=True transition) if that is later. Both are persisted on the pod, so the value
 * survives a restart of this controller.
 */
function podExposureStartMs(pod: Pod): number {
  const scheduled = pod.conditions.find((c) => c.type === 'PodScheduled' && c.status === 'True');
  return Math.max(pod.creationTimestamp, scheduled?.lastTransitionTime ?? Number.NEGATIVE_INFINITY);
}

/**
 * Decides whether and when to delete `pod` because of the NoExecute taints of its node.
 *
 * @param pod the pod; only `nodeName`, `tolerations`, `creationTimestamp` and `conditions` are read.
 * @param taints the node's taints; entries whose effect is not NoExecute are ignored.
 * @param nowMs the current time, epoch milliseconds.
 * @param opts see {@link DecideOptions}.
 * @returns a {@link Decision}. Never throws.
 *
 * Upstream (`processPodOnNode`, §5.5) checks that every taint is tolerated (else delete now), takes
 * the minimum `tolerationSeconds` over the tolerations used, and schedules deletion at
 * `now + min`, where `now` is when the controller processed the update. A restart or leader change
 * therefore restarts every toleration clock (kubernetes/kubernetes#108268).
 *
 * Deliberate difference from upstream (restart-safe deadlines): each NoExecute taint `i` is
 * matched to the first toleration that tolerates it (as upstream does), and that toleration's
 * `tolerationSeconds` counts from the moment the pod became exposed to taint `i`:
 *
 *     anchor_i   = min(now, max(taint_i.timeAdded ?? firstSeen(taint_i) ?? now, podExposureStart, tolerationsSeen))
 *     deadline   = min over i of (anchor_i + tolerationSeconds_i)
 *
 * This is the faithful generalisation because upstream's single clock is exactly this formula in
 * the case upstream was designed for — all taints appear together and the controller sees them at
 * once, so every `anchor_i` equals upstream's `now` and `min_i(now + s_i) = now + min_i(s_i)`. It
 * differs when taints carry different `timeAdded`, e.g. taint A (tolerated 300 s) added at t=0
 * and taint B (tolerated 60 s) at t=200:
 * - upstream evicts at t=300: the t=0 schedule is never shortened, so B's 60 s is ignored (and
 *   after a restart at t=250 it would evict at t=310);
 * - this function says min(0+300, 200+60) = t=260: each toleration is charged exactly the time its
 *   own taint has been present. A running controller still keeps its pending t=300
 *   ({@link planEviction} never moves a pending deadline); only a controller that first sees both
 *   taints after a restart decides t=260. Anchoring every taint at the earliest
 *   `timeAdded` would instead charge B for 200 s before B existed (evicting at once), and
 *   anchoring at the latest would let any unrelated new taint extend A's budget.
 * The two clamps keep the anchor honest: `podExposureStart` because a pod bound to an
 * already-tainted node starts its clock when it arrives (as upstream's does), and `now` because a
 * `timeAdded` in the future (clock skew) must not delay eviction beyond what upstream would do.
 * `timeAdded` has whole-second precision on the wire, so a deadline may come up to 1 s earlier
 * than upstream's.
 *
 * A third clamp keeps an edited toleration from acting sooner than upstream: with
 * `opts.tolerationsSeenMs` (this process saw the pod's tolerations change then), every anchor is
 * at least that time, so the deadline is never earlier than `tolerationsSeen + tolerationSeconds`
 * (upstream restarts its timer when it handles the pod update). A pod that tolerated a taint
 * forever and is edited an hour later to 300 s is therefore deleted 300 s after the edit was seen,
 * not at once. Tolerations the pod already had when this process first saw it keep the
 * restart-safe anchor above.
 *
 * Deliberate difference from upstream (no eviction decided on time the controller could not see,
 * the blind-time rule): with `opts.sight`, a `delete-now` whose due time — the deadline, or for an
 * untolerated taint the moment the pod was first exposed to it — is at or before the end of the
 * controller's last blind interval becomes a `delete-at` the end of the hold (blindhold.ts
 * `sightHoldUntilMs`: sight regained + `--node-monitor-grace-period`), marked with
 * `heldForSightFromMs`. It can only delay: the outcome at the hold's end is decided again on the
 * taints then present, and a deadline after the blind interval is untouched.
 *
 * Following upstream, a pod that is already terminating (`deletionTimestamp` set) is decided like
 * any other: `processPodOnNode` does not look at it, and a repeated graceful delete is harmless.
 * An unscheduled pod (`nodeName` empty) gets `none`, as `handlePodUpdate` ignores it. An empty
 * NoExecute taint list gives `none` because upstream's callers cancel without calling
 * `processPodOnNode` in that case.
 */
export function decidePodEviction(pod: Pod, taints: readonly Taint[], nowMs: number, opts: DecideOptions = {}): Decision {
  const d = decideUnheld(pod, taints, nowMs, opts);
  const j = opts.judgement;
  if (j === undefined || d.kind !== 'delete-now') return d;
  const noExecute = noExecuteTaints(taints);
  const managed = noExecute.filter(isNodeLifecycleNoExecuteTaint);
  if (managed.length === 0) return d;
  // Another taint may call for the deletion on its own: that one is not held.
  const others = decideUnheld(pod, noExecute.filter((t) => !isNodeLifecycleNoExecuteTaint(t)), nowMs, opts);
  if (others.kind === 'delete-now') return others;
  if ('heldBecause' in j) {
    const held = `${d.reason}; held: ${j.heldBecause}`;
    return others.kind === 'delete-at' ? { ...others, reason: `${others.reason} (${held})` } : { kind: 'held', reason: held, taint: d.taint };
  }
  // No node lifecycle controller here: the time before this process's first sight is blind.
  const start = { lastBlind: opts.sight?.lastBlind ?? { fromMs: j.firstSightMs, toMs: j.firstSightMs }, holdMs: j.holdMs };
  const mine = decideUnheld(pod, managed, nowMs, { ...opts, sight: start });
  if (mine.kind === 'delete-now' || others.kind === 'none') return mine;
  if (mine.kind === 'none') return others;
  return mine.atMs < others.atMs ? mine : others;
}

/**
 * {@link decidePodEviction} without the start hold (`opts.judgement`): the restart-safe deadline,
 * the edit clamp and the sight hold. Pure; never throws.
 */
function decideUnheld(pod: Pod, taints: readonly Taint[], nowMs: number, opts: DecideOptions): Exclude<Decision, { kind: 'held' }> {
  if (pod.nodeName === '') return { kind: 'none' };
  const noExecute = noExecuteTaints(taints);
  const comparisonOperators = opts.comparisonOperators ?? false;
  const matched = noExecute.map((taint) => ({ taint, toleration: firstToleratingToleration(taint, pod.tolerations, comparisonOperators) }));

  // Upstream checks "all tolerated" before looking at any duration, so an untolerated taint wins
  // over an expired toleration.
  const exposureStart = podExposureStartMs(pod);
  const edited = opts.tolerationsSeenMs ?? Number.NEGATIVE_INFINITY;
  const anchorOf = (taint: Taint): number => Math.min(nowMs, Math.max(taint.timeAdded ?? opts.firstSeen?.(taint) ?? nowMs, exposureStart, edited));
  const untolerated = matched.find((m) => m.toleration === undefined);
  if (untolerated) {
    // Due since the pod was first exposed to an untolerated taint: what the sight hold compares.
    const dueMs = Math.min(...matched.filter((m) => m.toleration === undefined).map((m) => anchorOf(m.taint)));
    const { taint } = untolerated;
    return holdForSight({ kind: 'delete-now', reason: `NoExecute taint ${formatTaint(taint)} is not tolerated`, taint }, dueMs, nowMs, opts.sight);
  }

  let earliest: { atMs: number; taint: Taint } | undefined;
  for (const { taint, toleration } of matched) {
    const budgetMs = toleration === undefined ? 0 : tolerationTimeMs(toleration);
    if (budgetMs === FOREVER) continue;
    const atMs = anchorOf(taint) + budgetMs;
    if (earliest === undefined || atMs < earliest.atMs) earliest = { atMs, taint };
  }
  if (earliest === undefined) return { kind: 'none' };

  const { atMs, taint } = earliest;
  const when = new Date(atMs).toISOString();
  if (atMs <= nowMs) {
    return holdForSight({ kind: 'delete-now', reason: `toleration of NoExecute taint ${formatTaint(taint)} ran out at ${when}`, taint, expired: true }, atMs, nowMs, opts.sight);
  }
  return { kind: 'delete-at', atMs, reason: `toleration of NoExecute taint ${formatTaint(taint)} runs out at ${when}`, taint };
}

/**
 * Turns a `delete-now` that became due at `dueMs` (epoch ms) into a sight hold when
 * {@link sightHoldUntilMs} says so and the hold has not ended by `nowMs`; else returns it as is.
 * A `delete-at` never needs this: its deadline is after `nowMs`, so after any ended blind interval.
 */
function holdForSight(d: Extract<Decision, { kind: 'delete-now' }>, dueMs: number, nowMs: number, sight: SightInput | undefined): Exclude<Decision, { kind: 'held' }> {
  const untilMs = sightHoldUntilMs(dueMs, sight);
  if (untilMs === undefined || untilMs <= nowMs) return d;
  const blind = sight?.lastBlind;
  const gap = blind ? `${new Date(blind.fromMs).toISOString()}–${new Date(blind.toMs).toISOString()}` : '';
  // A zero-length interval is the start hold without a node lifecycle controller here (decidePodEviction).
  const when = blind && blind.fromMs === blind.toMs ? `before this process first saw the cluster at ${new Date(blind.toMs).toISOString()}` : `at or before the end of the controller's blind interval ${gap}`;
  return {
    kind: 'delete-at',
    atMs: untilMs,
    reason: `${d.reason}; due ${new Date(dueMs).toISOString()}, ${when}: held until the node's health has been re-judged for a full grace period after sight returned`,
    taint: d.taint,
    heldForSightFromMs: dueMs,
  };
}

/**
 * The part of a pending deletion that {@link planEviction} needs; a `ScheduledEviction` from
 * `scheduler.ts` fits. Times are epoch **milliseconds**. An entry with `atMs <= scheduledAtMs` is
 * "immediate" (upstream stores those as a nil worker). Pass a deletion that is already running as
 * an immediate entry (`atMs = scheduledAtMs = start time`).
 */
export interface PendingEviction {
  uid: string;
  atMs: number;
  scheduledAtMs: number;
}

/**
 * What to do to the pending-deletion queue.
 * - `keep`: leave it as it is.
 * - `cancel`: drop the pending entry; emit the "Cancelling deletion" event if `emitCancelEvent`.
 * - `delete-now`: drop any pending entry (emitting the cancel event if `emitCancelEvent`), then
 *   start the deletion at once.
 * - `schedule`: set the pending entry to `atMs` (epoch milliseconds), replacing any other.
 */
export type EvictionPlan =
  | { kind: 'keep' }
  | { kind: 'cancel'; emitCancelEvent: boolean }
  | { kind: 'delete-now'; emitCancelEvent: boolean }
  | { kind: 'schedule'; atMs: number };

/**
 * Combines a {@link Decision} for the pod with UID `podUid` with its pending deletion, if any.
 *
 * @returns an {@link EvictionPlan}. Never throws.
 *
 * Mirrors the queue handling of `processPodOnNode` and `cancelWorkWithEvent`:
 * - `none` cancels what is pending; the cancel event is emitted only for a timed entry, because
 *   upstream's `CancelWork` returns false for an immediate (nil) one.
 * - `held` (not upstream: the start hold) drops what is pending without the event; the caller
 *   re-decides when the node lifecycle controller's judgement of the node changes.
 * - `delete-now` cancels a timed entry with the event and deletes at once. An immediate entry for
 *   the same pod is kept: that deletion is already under way (upstream's `AddWork` skips it too).
 * - A pending deadline for the same pod is never moved, by a `delete-at` or by a `delete-now`
 *   whose toleration ran out: upstream keeps the first schedule whatever the update
 *   (`startTime.Add(minTolerationTime).Before(triggerTime)` always holds for a scheduled entry), so
 *   neither a lengthened toleration ("lengthening toleration shouldn't work") nor a shortened one,
 *   nor a later taint with a shorter toleration, moves it. Only an untolerated taint deletes at
 *   once, as upstream's `!allTolerated` branch does. Our deadlines count from persisted
 *   timestamps and can come out earlier than the pending one; keeping the pending one means a
 *   running controller never deletes sooner than upstream would (the safety rule), at the cost of
 *   a restarted one possibly deciding the earlier deadline (docs/taint-eviction.md difference 3).
 * - An immediate entry is kept by any `delete-at`.
 *
 * Deliberate difference from upstream:
 * - A pending entry for another UID (the pod was deleted and recreated under the same name) is
 *   replaced rather than kept. Upstream keys by name only and would delete the new pod on the old
 *   pod's schedule.
 */
export function planEviction(decision: Decision, podUid: string, pending: PendingEviction | undefined): EvictionPlan {
  const immediate = pending !== undefined && pending.atMs <= pending.scheduledAtMs;
  const samePod = pending !== undefined && pending.uid === podUid;
  switch (decision.kind) {
    case 'none':
      return pending === undefined ? { kind: 'keep' } : { kind: 'cancel', emitCancelEvent: !immediate };
    case 'held':
      // Not cancelled from the user's point of view (it goes ahead once confirmed): no event.
      return pending === undefined ? { kind: 'keep' } : { kind: 'cancel', emitCancelEvent: false };
    case 'delete-now':
      if (immediate && samePod) return { kind: 'keep' };
      // Never sooner than the schedule upstream would keep (see above).
      if (samePod && decision.expired === true) return { kind: 'keep' };
      return { kind: 'delete-now', emitCancelEvent: pending !== undefined && !immediate };
    case 'delete-at':
      if (samePod) return { kind: 'keep' };
      return { kind: 'schedule', atMs: decision.atMs };
  }
}
