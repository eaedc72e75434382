/**
 * What one deletion attempt of the taint eviction controller came to, and how each outcome is
 * counted and logged. Split out of controller.ts (the shell) to keep it one screenful shorter.
 *
 * Mirrors the logging and the `taint_eviction_controller_pod_deletions_total` /
 * `..._pod_deletion_duration_seconds` observations of upstream `deletePodHandler`
 * (`pkg/controller/tainteviction/taint_eviction.go`).
 */
import type { Logger } from '../log/logger.js';
import type { TaintEvictionMetrics } from '../metrics/registry.js';

/**
 * The outcome of one attempt: `deleted`; `gone` (the pod, or this UID, no longer exists);
 * `not-needed` (no eviction called for any more); `already-evicted` (terminating with
 * DisruptionTarget); `aborted` (cancelled meanwhile); `held` (the sight hold put it back on the
 * heap); `judged` (the start hold: held until the node lifecycle controller confirms the node not
 * Ready); `blind` (the caches cannot be trusted: try again later).
 */
export type AttemptResult = 'deleted' | 'gone' | 'not-needed' | 'already-evicted' | 'aborted' | 'held' | 'judged' | 'blind';

/** The part of a running deletion an outcome line needs. `dueAtMs`: when it became due, epoch ms. */
export interface OutcomeSubject {
  key: string;
  uid: string;
  node: string;
  reason: string;
  dueAtMs: number;
}

/**
 * Counts and logs the outcome of a finished attempt. `deleted` increments the deletions counter and
 * observes the duration in **seconds** from when the deletion became due (deliberate difference 4:
 * upstream multiplies a Duration by `time.Second`). `aborted`, `blind` and `judged` log nothing
 * here (`judged` is logged once by held.ts). Never throws.
 * @param nowMs epoch milliseconds.
 */
export function recordOutcome(log: Logger, metrics: Pick<TaintEvictionMetrics, 'podDeletionsTotal' | 'podDeletionDuration'>, r: OutcomeSubject, result: AttemptResult, nowMs: number): void {
  switch (result) {
    case 'deleted':
      metrics.podDeletionsTotal.inc();
      metrics.podDeletionDuration.observe(Math.max(0, nowMs - r.dueAtMs) / 1000);
      log.info({ pod: r.key, node: r.node, uid: r.uid, reason: r.reason, latencyMs: nowMs - r.dueAtMs }, 'Deleted pod (NoExecute taint eviction)');
      return;
    case 'gone':
      log.info({ pod: r.key, uid: r.uid }, 'taint eviction: pod already gone');
      return;
    case 'not-needed':
      log.info({ pod: r.key, node: r.node }, 'taint eviction: no longer called for at its deadline; not deleting');
      return;
    case 'already-evicted':
      log.debug({ pod: r.key }, 'taint eviction: pod already terminating with DisruptionTarget; nothing to do');
      return;
    case 'held':
      log.info({ pod: r.key, node: r.node }, 'taint eviction: due while the controller could not see the cluster; held until the node has been re-judged');
      return;
    case 'aborted':
    case 'blind':
    case 'judged':
      return;
  }
}
