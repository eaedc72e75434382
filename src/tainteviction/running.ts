/**
 * The shapes of the taint eviction controller's pending and running deletions (controller.ts):
 * what a heap entry carries, what a due deletion keeps while it is attempted and retried, and how
 * `status` and `/debug/state` show one. Types only.
 */

/** One pending deletion as `status` and `/debug/state` show it. Times are epoch **milliseconds**. */
export interface PendingPodDeletion {
  /** `namespace/name`. */
  pod: string;
  uid: string;
  node: string;
  /** When the deletion is (or was) due. */
  deadlineMs: number;
  /** The node's NoExecute taints when it was decided, as `key=value:effect`. */
  taints: string[];
  /** Why, in one sentence (from `decidePodEviction`). */
  reason: string;
  /**
   * `scheduled`: waiting for its deadline; `deleting`: due, being written (or retried, or waiting
   * for sight); `held`: due, held until the node lifecycle controller confirms the node not Ready
   * (`deadlineMs`: when it was first held).
   */
  state: 'scheduled' | 'deleting' | 'held';
}

/** What a pending heap entry carries besides key, uid and deadline. */
export interface Payload {
  namespace: string;
  name: string;
  node: string;
  taints: readonly string[];
  reason: string;
}

/** A deletion that is due and running (or retrying). Upstream's nil "immediate" worker. */
export interface RunningDeletion extends Payload {
  key: string;
  uid: string;
  /** When it became due (the deadline, or the decision time for an immediate one), epoch ms. */
  dueAtMs: number;
  abort: AbortController;
  /** The "Marking for deletion" event was emitted. */
  announced: boolean;
  /** Attempts that failed since the deletion became due (reset never: a success ends it). */
  failures: number;
}
