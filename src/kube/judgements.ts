/**
 * The node lifecycle controller's judgement of each node since this process started it, shared
 * with the taint eviction controller: "has the node lifecycle controller confirmed, from its own
 * observations since the start, that this node is not Ready?".
 *
 * Why it exists: deadlines of the NoExecute taints the node lifecycle controller manages
 * (`node.kubernetes.io/unreachable`, `node.kubernetes.io/not-ready`) count from the taint's
 * `timeAdded`, so they survive a restart or a leader change. A taint is only as current as the last
 * controller that judged the node, though: after a start, the taint may be stale (the kubelet came
 * back while no replica led). Upstream strips both taints of every node it sees for the first time
 * (`monitorNodeHealth`'s `added` loop calls `markNodeAsReachable`,
 * `pkg/controller/nodelifecycle/node_lifecycle_controller.go`) and its taint manager restarts every
 * timer, so it deletes nothing there. Ours holds a due deletion for such a taint until the node
 * lifecycle controller has confirmed the node not Ready since the start, then decides it again.
 *
 * The node lifecycle controller writes ({@link NodeJudgementBoard}); the taint eviction controller
 * reads ({@link NodeJudgements}); the controller registry wires one board per process
 * (src/controllers/context.ts). Pure state, no I/O, no clock: callers pass the time.
 */
import type { Taint } from './objects.js';
import { TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE } from './taints.js';

/**
 * True for the NoExecute taints the node lifecycle controller adds and removes
 * (`node.kubernetes.io/unreachable` and `node.kubernetes.io/not-ready`, effect NoExecute).
 * Pure; never throws.
 */
export function isNodeLifecycleNoExecuteTaint(t: Pick<Taint, 'key' | 'effect'>): boolean {
  return t.effect === 'NoExecute' && (t.key === TAINT_NODE_UNREACHABLE || t.key === TAINT_NODE_NOT_READY);
}

/** What the node lifecycle controller saw of a node in one observation (monitor.ts `#observe`). */
export interface NodeObservation {
  /** The Ready status after the controller's own Unknown-marking; `undefined` when the node has none yet (startup grace). */
  ready: 'True' | 'False' | 'Unknown' | undefined;
  /** `now > probeTimestamp + grace`: no heartbeat for a whole grace period. */
  expired: boolean;
  /** The grace period that applied, **milliseconds** (monitor or startup grace). */
  gracePeriodMs: number;
}

/**
 * Whether an observation, made `sinceFirstMs` **milliseconds** after the controller's first
 * observation of the node since its start, confirms the node not Ready.
 * @returns `undefined` when confirmed; otherwise why not, as a clause for logs and `explain`.
 *
 * The rule: `False` (the kubelet itself reports NotReady) confirms at once. `Unknown` confirms only
 * once the controller has gone a full grace period without a heartbeat since its first observation
 * after the start: a node Unknown at the start gets a fresh grace period, as upstream's first-sight
 * probe timestamp gives it. `True` and a node without a Ready condition never confirm.
 * Pure; never throws.
 */
export function notConfirmedBecause(o: NodeObservation, sinceFirstMs: number): string | undefined {
  switch (o.ready) {
    case 'False':
      return undefined;
    case 'Unknown':
      if (o.expired && sinceFirstMs > o.gracePeriodMs) return undefined;
      return `the node lifecycle controller has not yet seen the node silent for a full grace period (${o.gracePeriodMs / 1000} s) since it started`;
    case 'True':
      return 'the node lifecycle controller judges the node Ready (it removes the stale taint)';
    case undefined:
      return 'the node lifecycle controller has no Ready condition of the node to judge yet';
  }
}

/** The reader side: what the taint eviction controller asks. */
export interface NodeJudgements {
  /** Whether a node lifecycle controller runs in this process and judges nodes (false: another process's does, if any). */
  hasJudge(): boolean;
  /**
   * @returns `undefined` when the node lifecycle controller of this process has confirmed `node`
   *   not Ready from its own observations since its start; otherwise why not (a clause).
   */
  notConfirmedBecause(node: string): string | undefined;
  /** Calls `listener(node)` whenever a node's answer to {@link notConfirmedBecause} may have changed. */
  onChange(listener: (node: string) => void): void;
}

/** The writer side: what the node lifecycle controller tells. */
export interface NodeJudgementSink {
  /** This process runs a node lifecycle controller (called when it is built). */
  attachJudge(): void;
  /**
   * The node lifecycle controller started (or started again), or sight of the cluster returned after
   * a blind stretch: every judgement so far is forgotten (none was made on the view from now on).
   */
  started(): void;
  /** One observation of `node` at `nowMs` (epoch **milliseconds**). Cheap when nothing changed (it runs on every Lease event). */
  observed(node: string, o: NodeObservation, nowMs: number): void;
  /** `node` was deleted, or the controller stopped judging it. */
  forget(node: string): void;
}

/** Why nothing is confirmed for a node the controller has not observed since its start. */
const NOT_YET_JUDGED = 'the node lifecycle controller has not judged the node since it started';
/** Why nothing is confirmed without a node lifecycle controller in this process. */
const NO_JUDGE = 'no node lifecycle controller runs in this process';

/**
 * One process's board of node judgements: the node lifecycle controller writes it through
 * {@link NodeJudgementSink}, the taint eviction controller reads it through {@link NodeJudgements}.
 * Listeners are called synchronously, only when a node's answer changed. Never throws (a listener
 * that throws propagates to the writer, so listeners must not).
 */
export class NodeJudgementBoard implements NodeJudgements, NodeJudgementSink {
  #judge = false;
  /** Per node: epoch ms of the first observation since the start, and the current answer. */
  readonly #nodes = new Map<string, { firstMs: number; why: string | undefined }>();
  readonly #listeners: ((node: string) => void)[] = [];

  hasJudge(): boolean {
    return this.#judge;
  }

  notConfirmedBecause(node: string): string | undefined {
    if (!this.#judge) return NO_JUDGE;
    const n = this.#nodes.get(node);
    return n === undefined ? NOT_YET_JUDGED : n.why;
  }

  onChange(listener: (node: string) => void): void {
    this.#listeners.push(listener);
  }

  attachJudge(): void {
    this.#judge = true;
  }

  started(): void {
    const before = [...this.#nodes.keys()];
    this.#nodes.clear();
    for (const n of before) this.#notify(n);
  }

  observed(node: string, o: NodeObservation, nowMs: number): void {
    const prev = this.#nodes.get(node);
    const firstMs = prev?.firstMs ?? nowMs;
    const why = notConfirmedBecause(o, nowMs - firstMs);
    if (prev !== undefined && prev.why === why) return;
    this.#nodes.set(node, { firstMs, why });
    if (prev === undefined ? why === undefined : (prev.why === undefined) !== (why === undefined)) this.#notify(node);
  }

  forget(node: string): void {
    if (this.#nodes.delete(node)) this.#notify(node);
  }

  #notify(node: string): void {
    for (const l of this.#listeners) l(node);
  }
}
