/**
 * Shadow mode (`--dry-run`): the record of what the controller would have written. Each decision
 * goes to three places: a log line ("would taint", with object, detail and reason), a counter
 * `node_lifecycle_controller_dry_run_decisions_total{controller,action}`, and a bounded ring buffer
 * served under `shadow` in `/debug/state`, which `shadow-report` reads. Events a shadow would have
 * recorded are counted in `node_lifecycle_controller_dry_run_events_total{controller,reason}` and
 * logged at debug level; they are not decisions.
 *
 * Not upstream: kube-controller-manager has no dry-run mode.
 */
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';

/** What a shadow would have done. The label value of the decisions counter is the key. */
export const SHADOW_ACTIONS = {
  'mark-unknown': 'would mark Unknown',
  'update-condition': 'would update condition',
  taint: 'would taint',
  untaint: 'would untaint',
  label: 'would label',
  'mark-pod-not-ready': 'would mark pod NotReady',
  'delete-pod': 'would delete pod',
  'force-delete': 'would force-delete',
  detach: 'would detach',
  evict: 'would evict',
} as const;

/** One of {@link SHADOW_ACTIONS}' keys. */
export type ShadowAction = keyof typeof SHADOW_ACTIONS;

/** The object a decision is about. */
export interface ShadowObjectRef {
  kind: 'Node' | 'Pod' | 'VolumeAttachment';
  name: string;
  /** Pods only. */
  namespace?: string;
  uid?: string;
}

/** One decision. Times are epoch **milliseconds**. */
export interface ShadowDecision {
  /** When the write would have been sent. */
  atMs: number;
  /** The `--controllers` name of the controller that decided. */
  controller: string;
  action: ShadowAction;
  object: ShadowObjectRef;
  /** The node the object is on (pods, attachments) or is (nodes). */
  node?: string;
  /** What would have been written, e.g. `node.kubernetes.io/unreachable:NoExecute`, `Ready=Unknown`. */
  detail: string;
  /** Why, in one phrase (the state the decision was made on). */
  reason: string;
}

/** What `/debug/state` serves under `shadow`. Times are epoch **milliseconds**. */
export interface ShadowState {
  /** Always true: present only on a controller started with `--dry-run`. */
  dryRun: true;
  /** When the shadow started recording. */
  startedAtMs: number;
  /** The window the buffer covers: from the start, or from the oldest kept decision once older ones were dropped. */
  window: { fromMs: number; toMs: number };
  /** Buffer size (decisions). */
  capacity: number;
  /** Decisions dropped from the buffer because it was full (oldest first). */
  dropped: number;
  /** Total decisions per action since start (dropped ones included). */
  totals: Partial<Record<ShadowAction, number>>;
  /** Kept decisions, oldest first. */
  decisions: ShadowDecision[];
}

/** Default ring buffer size (decisions): about 2 MB of JSON. */
export const DEFAULT_DECISION_CAPACITY = 10_000;

/** Options of {@link ShadowDecisionLog}. */
export interface ShadowDecisionLogOptions {
  clock: Clock;
  log: Logger;
  /** Where the two counters are registered (the process's registry); omitted in unit tests that do not scrape. */
  registry?: Registry;
  /** Ring buffer size, decisions (default {@link DEFAULT_DECISION_CAPACITY}). @throws {RangeError} if < 1. */
  capacity?: number;
}

/**
 * The decisions of one shadow process: a ring buffer, two counters and log lines.
 * Not upstream.
 */
export class ShadowDecisionLog {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #capacity: number;
  readonly #buffer: ShadowDecision[] = [];
  /** Index of the oldest entry once the buffer is full. */
  #head = 0;
  #dropped = 0;
  readonly #totals: Partial<Record<ShadowAction, number>> = {};
  readonly #startedAtMs: number;
  readonly #decisions: Counter<'controller' | 'action'> | undefined;
  readonly #events: Counter<'controller' | 'reason'> | undefined;

  /** @throws {RangeError} when `capacity` is not an integer ≥ 1. */
  constructor(opts: ShadowDecisionLogOptions) {
    const capacity = opts.capacity ?? DEFAULT_DECISION_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`shadow decision capacity must be an integer >= 1, got ${capacity}`);
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#capacity = capacity;
    this.#startedAtMs = opts.clock.now();
    if (opts.registry) {
      const registers = [opts.registry];
      this.#decisions = new Counter({
        name: 'node_lifecycle_controller_dry_run_decisions_total',
        help: 'Writes the controller would have made in --dry-run (shadow) mode, by controller and action. None was sent.',
        labelNames: ['controller', 'action'],
        registers,
      });
      this.#events = new Counter({
        name: 'node_lifecycle_controller_dry_run_events_total',
        help: 'Events the controller would have recorded in --dry-run (shadow) mode, by controller and reason. None was sent.',
        labelNames: ['controller', 'reason'],
        registers,
      });
    }
  }

  /**
   * Records one decision at the clock's now: buffer (dropping the oldest when full), counter, log line.
   * @returns the stored decision. Never throws.
   */
  record(controller: string, action: ShadowAction, object: ShadowObjectRef, detail: string, reason: string, node?: string): ShadowDecision {
    const d: ShadowDecision = { atMs: this.#clock.now(), controller, action, object, detail, reason, ...(node !== undefined ? { node } : {}) };
    if (this.#buffer.length < this.#capacity) {
      this.#buffer.push(d);
    } else {
      this.#buffer[this.#head] = d;
      this.#head = (this.#head + 1) % this.#capacity;
      this.#dropped++;
    }
    this.#totals[action] = (this.#totals[action] ?? 0) + 1;
    this.#decisions?.inc({ controller, action });
    const target = object.namespace !== undefined ? `${object.namespace}/${object.name}` : object.name;
    this.#log.info({ dryRun: true, controller, action, kind: object.kind, object: target, detail, reason, ...(node !== undefined ? { node } : {}) }, `dry-run: ${SHADOW_ACTIONS[action]}`);
    return d;
  }

  /** Counts and logs (debug) an Event the shadow would have recorded. Never throws. */
  event(controller: string, kind: string, name: string, type: string, reason: string, message: string): void {
    this.#events?.inc({ controller, reason });
    this.#log.debug({ dryRun: true, controller, kind, object: name, type, reason, message }, 'dry-run: would record Event');
  }

  /** Kept decisions, oldest first. */
  decisions(): ShadowDecision[] {
    return [...this.#buffer.slice(this.#head), ...this.#buffer.slice(0, this.#head)];
  }

  /** The document `/debug/state` serves under `shadow`. */
  state(): ShadowState {
    const decisions = this.decisions();
    const fromMs = this.#dropped > 0 ? (decisions[0]?.atMs ?? this.#startedAtMs) : this.#startedAtMs;
    return {
      dryRun: true,
      startedAtMs: this.#startedAtMs,
      window: { fromMs, toMs: this.#clock.now() },
      capacity: this.#capacity,
      dropped: this.#dropped,
      totals: { ...this.#totals },
      decisions,
    };
  }
}
