/**
 * The taint eviction controller's record of deletions held by the start hold: due for a NoExecute
 * taint the node lifecycle controller manages, but that controller has not confirmed the node not
 * Ready from its own observations since its start (src/kube/judgements.ts; decision.ts `held`).
 *
 * A held deletion is not in the deadline heap and holds no deletion slot: it is decided again
 * (level-based: the node's pods are re-read from the cache) whenever the node lifecycle
 * controller's judgement of the node changes, the node's taints change or the pod changes. This
 * record only makes it visible (`status`, `/debug/state`, `explain pod`) and logs it once.
 *
 * No upstream counterpart: upstream strips both taints of every node it sees first after a start
 * (`markNodeAsReachable` in `monitorNodeHealth`) and restarts its taint manager's timers, so it has
 * nothing due at a start; ours keeps the taint's `timeAdded` (restart-safe deadlines) and holds
 * instead. See docs/taint-eviction.md, "Deliberate differences".
 */
import type { Logger } from '../log/logger.js';

/** One held deletion. Times are epoch **milliseconds**. */
export interface HeldDeletion {
  /** `namespace/name`. */
  key: string;
  uid: string;
  node: string;
  /** The node's NoExecute taints when it was held, as `key=value:effect`. */
  taints: readonly string[];
  /** Why it is due and why it is held, in one sentence. */
  reason: string;
  /** When it was first held. */
  sinceMs: number;
}

/** The held deletions of one controller, by pod key. Never throws. */
export class HeldDeletions {
  readonly #byKey = new Map<string, HeldDeletion>();
  readonly #log: Logger;

  /** @param log where a newly held deletion is logged (once, at info). */
  constructor(log: Logger) {
    this.#log = log;
  }

  /** Records `h` (keeps the first `sinceMs` of the same pod); logs when it is new. */
  hold(h: Omit<HeldDeletion, 'sinceMs'>, nowMs: number): void {
    const prev = this.#byKey.get(h.key);
    const same = prev !== undefined && prev.uid === h.uid;
    this.#byKey.set(h.key, { ...h, sinceMs: same ? prev.sinceMs : nowMs });
    if (!same) this.#log.info({ pod: h.key, node: h.node, reason: h.reason }, 'taint eviction: deletion held until the node lifecycle controller confirms the node not Ready');
  }

  /** Forgets `key`'s held deletion, logging `why` (e.g. "released") with how long it was held up to `nowMs` (epoch ms). */
  release(key: string, why: string, nowMs: number): void {
    const h = this.#byKey.get(key);
    if (h === undefined) return;
    this.#byKey.delete(key);
    this.#log.info({ pod: key, node: h.node, heldMs: nowMs - h.sinceMs }, `taint eviction: held deletion ${why}`);
  }

  /** Forgets every held deletion (the controller stopped). */
  clear(): void {
    this.#byKey.clear();
  }

  /** Number held. */
  get size(): number {
    return this.#byKey.size;
  }

  /** Every held deletion (new array). */
  list(): HeldDeletion[] {
    return [...this.#byKey.values()];
  }
}
