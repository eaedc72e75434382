/**
 * What this process itself wrote lately: the NoExecute-relevant taints it added to nodes, the
 * `DisruptionTarget` conditions it wrote on pods and the pods it deleted. The second-actor check
 * (./check.ts) reads it to tell its own writes from another actor's: a taint, condition or deletion
 * that shows up in the caches without an entry here was written by someone else.
 *
 * Why a ledger of our own writes and not the objects' `managedFields`: the slim caches drop
 * `managedFields` (src/kube/objects.ts; the protobuf decoder skips them), and a field manager names
 * a program, not a process, so another copy of this program (a second replica without election)
 * would look like us. The writers note each write right before it is sent (inside the throttle's
 * send callback, after the fence and the send-time recheck), so an entry means "this process sent
 * it". Entries live {@link OWN_WRITE_TTL_MS}; the check judges nothing older than that, so an
 * expired entry can never make our own write look foreign.
 *
 * Memory: one Map entry (a short string key and a number) per write for 10 minutes. Writes are
 * capped by each controller's `--kube-api-qps` (default 20/s), so at most ~12,000 entries per
 * controller at a sustained maximum rate, about 1.5 MB. Not upstream: kube-controller-manager has no
 * second-actor check.
 */
import type { WriteScheduler } from '../kube/throttle.js';
import type { Clock } from '../util/clock.js';

/** How long a noted write is remembered, milliseconds; the check judges nothing older (./decision.ts). */
export const OWN_WRITE_TTL_MS = 10 * 60_000;

/** The writers' side: what they note. Optional in every writer (tests and the dry-run writers pass none). */
export interface OwnWriteNotes {
  /** A taint `key:effect` this process is adding to node `nodeName` in the write being sent. */
  noteTaint(nodeName: string, key: string, effect: string): void;
  /** A `DisruptionTarget` condition write on the pod with this UID is being sent. */
  notePodCondition(uid: string): void;
  /** A DELETE of the pod with this UID is being sent. */
  notePodDelete(uid: string): void;
}

/**
 * The ledger (see the module comment). Keys expire {@link OWN_WRITE_TTL_MS} after their last note;
 * expired keys are dropped as new ones come in (insertion order is expiry order, so pruning stops at
 * the first live key: O(1) amortised per note).
 */
export class OwnWrites implements OwnWriteNotes {
  readonly #clock: Pick<Clock, 'now'>;
  readonly #ttlMs: number;
  /** key → expiry, epoch ms; insertion order = expiry order (a re-noted key is moved to the end). */
  readonly #expiry = new Map<string, number>();

  /**
   * @param clock `now()` in epoch ms.
   * @param ttlMs how long an entry lives, milliseconds (default {@link OWN_WRITE_TTL_MS}).
   */
  constructor(clock: Pick<Clock, 'now'>, ttlMs = OWN_WRITE_TTL_MS) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  /** @inheritdoc */
  noteTaint(nodeName: string, key: string, effect: string): void {
    this.#note(`t\0${nodeName}\0${key}\0${effect}`);
  }

  /** @inheritdoc */
  notePodCondition(uid: string): void {
    this.#note(`c\0${uid}`);
  }

  /** @inheritdoc */
  notePodDelete(uid: string): void {
    this.#note(`d\0${uid}`);
  }

  /** Whether this process sent a write adding taint `key:effect` to node `nodeName` in the last TTL. */
  wroteTaint(nodeName: string, key: string, effect: string): boolean {
    return this.#has(`t\0${nodeName}\0${key}\0${effect}`);
  }

  /** Whether this process sent a `DisruptionTarget` condition write for pod `uid` in the last TTL. */
  wrotePodCondition(uid: string): boolean {
    return this.#has(`c\0${uid}`);
  }

  /** Whether this process sent a DELETE of pod `uid` in the last TTL. */
  deletedPod(uid: string): boolean {
    return this.#has(`d\0${uid}`);
  }

  /** Live entries (expired ones not yet pruned included), for /debug/state and tests. */
  size(): number {
    return this.#expiry.size;
  }

  #note(key: string): void {
    const now = this.#clock.now();
    this.#expiry.delete(key);
    this.#expiry.set(key, now + this.#ttlMs);
    for (const [k, at] of this.#expiry) {
      if (at > now) break;
      this.#expiry.delete(k);
    }
  }

  #has(key: string): boolean {
    const at = this.#expiry.get(key);
    return at !== undefined && at > this.#clock.now();
  }
}

/**
 * `writes` with `note` called right before each `fn` is sent (after the throttle, the fence and the
 * send-time recheck), so a ledger entry means "sent", not "meant to send".
 * @returns a {@link WriteScheduler} that schedules through `writes`. Never throws itself.
 */
export function notingOnSend(writes: WriteScheduler, note: () => void): WriteScheduler {
  return {
    schedule: (fn, priority, recheck) =>
      writes.schedule(() => {
        note();
        return fn();
      }, priority, recheck),
  };
}
