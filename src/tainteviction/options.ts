/**
 * The taint eviction controller's tuning knobs and their defaults (controller.ts re-exports them).
 * Kept apart so the controller shell stays under the project's file-size limit.
 */

/** Tuning knobs; every one has a default. Durations in **milliseconds**. */
export interface TaintEvictionOptions {
  /** Deletion attempts running at once (each is at most two throttled writes). Default 32. */
  deletionConcurrency?: number;
  /** A pod's first retry delay after a failed deletion attempt, ms; doubles per failure. Default 100. */
  retryInitialDelayMs?: number;
  /** Largest per-pod retry delay, ms. Default 10 000. */
  retryMaxDelayMs?: number;
  /** How often a due deletion re-checks `canSeeCluster()` while the caches cannot be trusted, ms (it holds no slot meanwhile). Default 500. */
  sightPollMs?: number;
  /** Node/pod updates handled per event-loop turn before yielding. Default 500. */
  pumpBatchSize?: number;
  /**
   * Add `DisruptionTarget=True` before each deletion (the `PodDisruptionConditions` feature gate,
   * on by default upstream since 1.26). Default true. False halves the writes per eviction (one
   * DELETE, as kube-controller-manager 1.20–1.25), which matters at a low `--kube-api-qps`.
   * A function is asked at each eviction: `run` decides it from the API server's version once the
   * caches synced, before the controller starts (src/controllers/serverdecisions.ts).
   */
  disruptionConditions?: boolean | (() => boolean);
  /**
   * `--node-monitor-grace-period`, ms (default 50 000, upstream's default since 1.32): how long a
   * deletion due during (or before the end of) a blind interval waits after sight returned, so the
   * node lifecycle controller can re-judge the node first (the sight hold; docs/taint-eviction.md
   * difference 10).
   */
  nodeMonitorGracePeriodMs?: number;
  /** Shortest loss of sight that counts as blind, ms (default 2000; see src/kube/sight.ts `SightTracker`). */
  minBlindMs?: number;
  /**
   * The `TaintTolerationComparisonOperators` feature gate: `Lt`/`Gt` tolerations tolerate a taint
   * only when it is on (tolerations.ts `toleratesTaint`). Default false, as upstream's in 1.37;
   * the descriptor passes `--feature-gates`' value.
   */
  tolerationComparisonOperators?: boolean;
}

/** Default deletion concurrency (see {@link TaintEvictionOptions.deletionConcurrency}). */
export const DEFAULT_DELETION_CONCURRENCY = 32;

/** Upstream's `--node-monitor-grace-period` default since 1.32, ms (see {@link TaintEvictionOptions.nodeMonitorGracePeriodMs}). */
export const DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS = 50_000;
