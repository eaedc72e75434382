/**
 * The `node-affinity-enforcer` controller: enforces a pod's required-during-execution node affinity
 * (docs/node-affinity.md). The thin I/O shell around decision.ts.
 *
 * Level-based and event-driven: node and pod handlers only record pod keys; a pump re-decides each
 * dirty pod from the caches. A violating pod gets a grace timer; when it fires the pod is decided
 * again, and if it still violates (continuously, node Ready) it joins the eviction queue. The queue
 * drains through one token bucket (`--affinity-eviction-rate`; the project's TokenBucket from
 * src/util/tokenbucket.ts) and the per-node / total caps, and each eviction is re-decided
 * from the caches right before it is sent.
 *
 * Outcomes: evicted → `EvictedForNodeAffinity`; refused by a PDB → `EvictionBlockedByPDB` and a
 * capped exponential backoff (default 5 s → 5 min) before the next attempt; any other error →
 * retried with backoff (1 s → 1 min); 404/409 → the pod is gone or replaced, forgotten.
 *
 * Safety (each can only delay or prevent an eviction):
 * - nothing is decided while the caches cannot be trusted (`canSeeCluster()` false), and every
 *   remembered violation is dropped when sight is lost, so the grace period never includes time
 *   the controller could not see (docs/node-affinity.md);
 * - a DaemonSet or mirror pod, a malformed rule, a node that is not Ready: never evicted.
 *
 * Dry-run / shadow mode: not built. The only write is {@link AffinityEvictor.evict}; a shadow
 * writer can be injected there (it should answer `evicted` without writing).
 */
import type { Logger } from '../log/logger.js';
import type { Node } from '../kube/objects.js';
import { describeError } from '../kube/client.js';
import { isFenced, isNotCalledFor } from '../kube/throttle.js';
import type { NodeAffinityMetrics } from '../metrics/registry.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import { rateLimiterFor, type RateLimiter } from '../util/tokenbucket.js';
import { steadyClock, type Clock, type TimerHandle } from '../util/clock.js';
import { decideAffinity, evictionCapReached, type AffinityDecision, type Violation } from './decision.js';
import type { AffinityPod } from './rule.js';
import type { AffinityEvictor } from './writer.js';

/** The `--controllers` name. */
export const NODE_AFFINITY_ENFORCER_NAME = 'node-affinity-enforcer';

/** Event reasons. */
export const EVENT_VIOLATED = 'NodeAffinityViolated';
export const EVENT_EVICTED = 'EvictedForNodeAffinity';
export const EVENT_BLOCKED_BY_PDB = 'EvictionBlockedByPDB';
export const EVENT_MALFORMED = 'MalformedNodeAffinityRule';

/** The caches the controller reads. Pod keys are `namespace/name`. */
export interface NodeAffinityCaches {
  nodes: ReadStore<Node>;
  pods: ReadStore<AffinityPod> & { podsOnNode(nodeName: string): readonly AffinityPod[] };
}

/** Tuning; durations in **milliseconds**, rates in pods per **second**. */
export interface NodeAffinityOptions {
  /** `--affinity-violation-grace` (default 60 000). */
  graceMs?: number;
  /** `--affinity-eviction-rate`, pods per second (default 0.1; 0 never evicts). */
  evictionRate?: number;
  /** `--affinity-max-evictions-per-node` (0: no cap; default 0). */
  maxEvictionsPerNode?: number;
  /** `--affinity-max-evictions-total` (0: no cap; default 0). */
  maxEvictionsTotal?: number;
  /** Window over which the caps count evictions (default 600 000 = 10 min). */
  capWindowMs?: number;
  /** Backoff after a PDB refusal: first and largest wait (defaults 5 000 and 300 000). */
  pdbBackoffInitialMs?: number;
  pdbBackoffMaxMs?: number;
  /** Backoff after another error: first and largest wait (defaults 1 000 and 60 000). */
  errorBackoffInitialMs?: number;
  errorBackoffMaxMs?: number;
}

/** Everything the controller needs, injected. */
export interface NodeAffinityDeps {
  clock: Clock;
  log: Logger;
  caches: NodeAffinityCaches;
  evictor: AffinityEvictor;
  events: EventSink;
  metrics: NodeAffinityMetrics;
  /** True while the node and pod caches reflect the cluster; call {@link NodeAffinityEnforcer.sightChanged} when it may have changed. */
  canSeeCluster: () => boolean;
  options?: NodeAffinityOptions;
}

/** One violating pod as `/debug/state` and `explain pod` show it. Times are epoch **milliseconds**. */
export interface AffinityViolationView {
  /** `namespace/name`. */
  pod: string;
  uid: string;
  node: string;
  sinceMs: number;
  /** When the grace period ends (the earliest eviction). */
  evictAtMs: number;
  /** `waiting` (grace), `held` (see reason), `queued`, `evicting`, `blocked-by-pdb`, `retrying`, `evicted`. */
  state: 'waiting' | 'held' | 'queued' | 'evicting' | 'blocked-by-pdb' | 'retrying' | 'evicted';
  reason: string;
  /** Next attempt after a PDB refusal or an error. */
  nextAttemptMs?: number;
  /** Attempts refused by a PDB so far. */
  pdbRefusals: number;
}

interface Entry {
  violation: Violation;
  evictAtMs: number;
  state: AffinityViolationView['state'];
  reason: string;
  timer?: TimerHandle;
  nextAttemptMs?: number;
  pdbRefusals: number;
  errors: number;
}

const DEFAULTS = {
  graceMs: 60_000,
  evictionRate: 0.1,
  maxEvictionsPerNode: 0,
  maxEvictionsTotal: 0,
  capWindowMs: 600_000,
  pdbBackoffInitialMs: 5_000,
  pdbBackoffMaxMs: 300_000,
  errorBackoffInitialMs: 1_000,
  errorBackoffMaxMs: 60_000,
} as const satisfies Required<NodeAffinityOptions>;

/** The controller. Call {@link start} once the caches have synced and this process leads. */
export class NodeAffinityEnforcer {
  readonly #d: NodeAffinityDeps;
  readonly #o: Required<NodeAffinityOptions>;
  readonly #limiter: RateLimiter;
  readonly #entries = new Map<string, Entry>();
  readonly #dirty = new Set<string>();
  /** Keys due for eviction, FIFO. */
  readonly #queue: string[] = [];
  readonly #recent: { node: string; atMs: number }[] = [];
  /** `uid → reason` already reported as malformed (one Event per pod and reason). */
  readonly #malformed = new Map<string, string>();
  #pumpTimer: TimerHandle | undefined;
  #drainTimer: TimerHandle | undefined;
  #running = false;
  #sighted = false;
  readonly #inFlight = new Set<Promise<void>>();

  /** @throws {RangeError} for a negative grace or rate. */
  constructor(deps: NodeAffinityDeps) {
    // The grace counts from when this process saw the rule stop matching: a forward NTP step of the
    // wall clock must not shorten it (steadyClock never runs ahead of the monotonic clock).
    this.#d = { ...deps, clock: steadyClock(deps.clock) };
    this.#o = { ...DEFAULTS, ...Object.fromEntries(Object.entries(deps.options ?? {}).filter(([, v]) => v !== undefined)) };
    if (!(this.#o.graceMs >= 0)) throw new RangeError(`graceMs must be >= 0, got ${this.#o.graceMs}`);
    if (!(this.#o.evictionRate >= 0)) throw new RangeError(`evictionRate must be >= 0, got ${this.#o.evictionRate}`);
    this.#limiter = rateLimiterFor(this.#d.clock, this.#o.evictionRate);
  }

  /** Starts acting: decides every pod in the cache. */
  start(): void {
    this.#running = true;
    this.#sighted = this.#d.canSeeCluster();
    for (const p of this.#d.caches.pods.list()) if (p.rule.kind !== 'none') this.#dirty.add(key(p));
    this.#schedulePump();
  }

  /** Stops: cancels timers, waits for evictions in flight. */
  async stop(): Promise<void> {
    this.#running = false;
    for (const e of this.#entries.values()) e.timer?.cancel();
    this.#pumpTimer?.cancel();
    this.#drainTimer?.cancel();
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Pod informer add/update. */
  podChanged(pod: AffinityPod): void {
    if (pod.rule.kind === 'none' && !this.#entries.has(key(pod))) return;
    this.#mark(key(pod));
  }

  /** Pod informer delete. */
  podDeleted(pod: AffinityPod): void {
    this.#malformed.delete(pod.uid);
    this.#mark(key(pod));
  }

  /** Node informer add/update/delete: re-decide the node's pods (a label may have changed). */
  nodeChanged(node: Node, old?: Node): void {
    if (old && old.resourceVersion === node.resourceVersion) return;
    for (const p of this.#d.caches.pods.podsOnNode(node.name)) if (p.rule.kind !== 'none') this.#mark(key(p));
  }

  /** Called when `canSeeCluster()` may have changed. Losing sight forgets every violation. */
  sightChanged(): void {
    const now = this.#d.canSeeCluster();
    if (now === this.#sighted) return;
    this.#sighted = now;
    if (!now) {
      // The grace period must not include time we could not see: start it again after sight returns.
      for (const [k, e] of this.#entries) {
        if (e.state === 'evicting' || e.state === 'evicted') continue;
        e.timer?.cancel();
        this.#entries.delete(k);
      }
      this.#queue.length = 0;
      this.#d.log.warn({}, 'node-affinity-enforcer: lost sight of the cluster; pending violations forgotten, their grace restarts when sight returns');
    } else if (this.#running) {
      for (const p of this.#d.caches.pods.list()) if (p.rule.kind !== 'none') this.#dirty.add(key(p));
      this.#schedulePump();
    }
    this.#updateGauge();
  }

  /** Violations as `/debug/state` shows them. */
  view(): { violations: AffinityViolationView[]; queued: number; graceMs: number; evictionRate: number } {
    const violations = [...this.#entries].map(([k, e]) => ({
      pod: k,
      uid: e.violation.uid,
      node: e.violation.node,
      sinceMs: e.violation.sinceMs,
      evictAtMs: e.evictAtMs,
      state: e.state,
      reason: e.reason,
      ...(e.nextAttemptMs !== undefined ? { nextAttemptMs: e.nextAttemptMs } : {}),
      pdbRefusals: e.pdbRefusals,
    }));
    return { violations, queued: this.#queue.length, graceMs: this.#o.graceMs, evictionRate: this.#o.evictionRate };
  }

  #mark(k: string): void {
    this.#dirty.add(k);
    this.#schedulePump();
  }

  #schedulePump(): void {
    if (!this.#running || this.#pumpTimer) return;
    this.#pumpTimer = this.#d.clock.setTimeout(() => {
      this.#pumpTimer = undefined;
      this.#pump();
    }, 0);
  }

  #pump(): void {
    if (!this.#running) return;
    const keys = [...this.#dirty];
    this.#dirty.clear();
    for (const k of keys) this.#sync(k);
    this.#drain();
  }

  #sync(k: string): void {
    if (!this.#d.canSeeCluster()) return; // re-marked by sightChanged() when sight returns
    const entry = this.#entries.get(k);
    const pod = this.#d.caches.pods.get(k);
    if (!pod) {
      this.#forget(k);
      return;
    }
    // An eviction in flight or made: leave it to its own outcome (the pod will terminate).
    if (entry && entry.violation.uid === pod.uid && (entry.state === 'evicting' || entry.state === 'evicted')) return;
    const node = pod.nodeName ? this.#d.caches.nodes.get(pod.nodeName) : undefined;
    const now = this.#d.clock.now();
    const decision = decideAffinity(pod, node, entry?.violation, now, this.#o.graceMs);
    this.#apply(k, pod, decision, entry, now);
  }

  #apply(k: string, pod: AffinityPod, d: AffinityDecision, entry: Entry | undefined, now: number): void {
    switch (d.action) {
      case 'ignore':
      case 'satisfied':
        if (entry) this.#d.log.info({ pod: k, why: d.action === 'ignore' ? d.reason : 'the rule matches again' }, 'node affinity violation cleared');
        this.#forget(k);
        return;
      case 'malformed':
        this.#forget(k);
        if (this.#malformed.get(pod.uid) !== d.reason) {
          this.#malformed.set(pod.uid, d.reason);
          this.#d.metrics.malformedRules.inc();
          this.#d.log.warn({ pod: k, reason: d.reason }, 'malformed node affinity rule: not enforced');
          this.#d.events.record(podRef(pod), 'Warning', EVENT_MALFORMED, `Node affinity rule not enforced: ${d.reason}`);
        }
        return;
      default:
        break;
    }
    const fresh = !entry || entry.violation.uid !== d.violation.uid || entry.violation.node !== d.violation.node || entry.violation.sinceMs !== d.violation.sinceMs;
    const e: Entry = fresh
      ? { violation: d.violation, evictAtMs: d.violation.sinceMs + this.#o.graceMs, state: 'waiting', reason: '', pdbRefusals: 0, errors: 0 }
      : (entry as Entry);
    if (fresh) {
      entry?.timer?.cancel();
      this.#entries.set(k, e);
      this.#d.metrics.violations.inc();
      const then =
        d.action === 'hold'
          ? `not evicted while ${d.reason}`
          : `evicts at ${iso(e.evictAtMs)} (grace ${this.#o.graceMs / 1000}s) unless the labels match again`;
      this.#d.events.record(podRef(pod), 'Warning', EVENT_VIOLATED, `Node ${d.violation.node} no longer satisfies the pod's during-execution node affinity; ${then}`);
      this.#updateGauge();
    }
    if (d.action === 'hold') {
      e.timer?.cancel();
      e.timer = undefined;
      this.#dequeue(k);
      e.state = 'held';
      e.reason = d.reason;
      return;
    }
    if (d.action === 'wait') {
      e.state = 'waiting';
      e.reason = 'within the grace period';
      this.#dequeue(k);
      this.#arm(k, e, d.evictAtMs - now);
      return;
    }
    // evict: unless a backoff is running, queue it.
    if (e.nextAttemptMs !== undefined && e.nextAttemptMs > now) {
      this.#arm(k, e, e.nextAttemptMs - now);
      return;
    }
    if (e.state !== 'queued') {
      e.state = 'queued';
      e.reason = 'waiting for the eviction rate limit';
      this.#queue.push(k);
    }
  }

  #arm(k: string, e: Entry, delayMs: number): void {
    e.timer?.cancel();
    e.timer = this.#d.clock.setTimeout(() => {
      e.timer = undefined;
      this.#mark(k);
    }, Math.max(0, delayMs));
  }

  #dequeue(k: string): void {
    const i = this.#queue.indexOf(k);
    if (i >= 0) this.#queue.splice(i, 1);
  }

  #forget(k: string): void {
    const e = this.#entries.get(k);
    if (!e) return;
    e.timer?.cancel();
    this.#entries.delete(k);
    this.#dequeue(k);
    this.#updateGauge();
  }

  #updateGauge(): void {
    this.#d.metrics.violatingPods.set([...this.#entries.values()].filter((e) => e.state !== 'evicted').length);
  }

  /** Sends queued evictions while the rate limit and the caps allow. */
  #drain(): void {
    this.#drainTimer?.cancel();
    this.#drainTimer = undefined;
    if (!this.#running || !this.#d.canSeeCluster()) return;
    const now = this.#d.clock.now();
    while (this.#recent.length > 0 && (this.#recent[0]?.atMs ?? now) <= now - this.#o.capWindowMs) this.#recent.shift();
    let retryAtMs: number | undefined;
    for (let i = 0; i < this.#queue.length; ) {
      const k = this.#queue[i] as string;
      const e = this.#entries.get(k);
      if (!e) {
        this.#queue.splice(i, 1);
        continue;
      }
      const cap = evictionCapReached(this.#recent, e.violation.node, now, this.#o.capWindowMs, this.#o.maxEvictionsPerNode, this.#o.maxEvictionsTotal);
      if (cap) {
        e.reason = cap.reason;
        retryAtMs = Math.min(retryAtMs ?? Infinity, cap.retryAtMs);
        i++;
        continue;
      }
      if (!this.#limiter.tryAccept()) {
        if (this.#limiter.qps > 0) retryAtMs = Math.min(retryAtMs ?? Infinity, now + Math.ceil(1000 / this.#limiter.qps));
        break;
      }
      this.#queue.splice(i, 1);
      const p = this.#evict(k, e).finally(() => this.#inFlight.delete(p));
      this.#inFlight.add(p);
    }
    if (retryAtMs !== undefined && this.#queue.length > 0) {
      this.#drainTimer = this.#d.clock.setTimeout(() => this.#drain(), Math.max(1, retryAtMs - now));
    }
  }

  /**
   * The eviction of `k` decided again from the caches: sight, the pod (same UID) and whether its
   * node still violates its affinity past the grace.
   * @returns why it is no longer called for, or `undefined`.
   */
  #stillEvicts(k: string, e: Entry): string | undefined {
    if (!this.#running || !this.#d.canSeeCluster()) return 'the controller is stopped or cannot see the cluster';
    const pod = this.#d.caches.pods.get(k);
    const node = pod?.nodeName ? this.#d.caches.nodes.get(pod.nodeName) : undefined;
    if (!pod || pod.uid !== e.violation.uid) return 'the pod is gone';
    return decideAffinity(pod, node, e.violation, this.#d.clock.now(), this.#o.graceMs).action === 'evict' ? undefined : 'the node satisfies the affinity again';
  }

  async #evict(k: string, e: Entry): Promise<void> {
    // Re-decide from the caches right before the write (the label may have come back), and again
    // when its turn in the throttle comes (src/kube/throttle.ts `WriteRecheck`, issue 53 item 4).
    const pod = this.#d.caches.pods.get(k);
    if (!pod || this.#stillEvicts(k, e) !== undefined) {
      e.state = 'waiting';
      this.#mark(k);
      return;
    }
    e.state = 'evicting';
    e.reason = 'eviction sent';
    const target = { namespace: pod.namespace, name: pod.name, uid: pod.uid };
    try {
      const out = await this.#d.evictor.evict(target, () => this.#stillEvicts(k, e));
      if (this.#entries.get(k) !== e) return;
      if (out.kind === 'evicted') {
        e.state = 'evicted';
        e.reason = 'evicted';
        this.#recent.push({ node: e.violation.node, atMs: this.#d.clock.now() });
        this.#d.metrics.evictions.inc({ result: 'evicted' });
        this.#d.log.info({ pod: k, node: e.violation.node }, 'evicted pod for violating its during-execution node affinity');
        this.#d.events.record(
          podRef(pod),
          'Normal',
          EVENT_EVICTED,
          `Evicted: node ${e.violation.node} has not satisfied the pod's during-execution node affinity since ${iso(e.violation.sinceMs)}`,
        );
        this.#updateGauge();
      } else if (out.kind === 'gone') {
        this.#d.metrics.evictions.inc({ result: 'gone' });
        this.#forget(k);
      } else {
        e.pdbRefusals++;
        const wait = backoff(this.#o.pdbBackoffInitialMs, this.#o.pdbBackoffMaxMs, e.pdbRefusals);
        e.state = 'blocked-by-pdb';
        e.nextAttemptMs = this.#d.clock.now() + wait;
        e.reason = out.message;
        this.#d.metrics.evictions.inc({ result: 'blocked_by_pdb' });
        this.#d.log.info({ pod: k, refusals: e.pdbRefusals, retryInMs: wait, why: out.message }, 'eviction for node affinity refused by a PodDisruptionBudget; backing off');
        this.#d.events.record(
          podRef(pod),
          'Warning',
          EVENT_BLOCKED_BY_PDB,
          `Eviction for node affinity refused by a PodDisruptionBudget (${out.message}); attempt ${e.pdbRefusals}, next in ${Math.round(wait / 1000)}s`,
        );
        this.#arm(k, e, wait);
      }
    } catch (err) {
      if (this.#entries.get(k) !== e) return;
      if (isFenced(err)) {
        e.state = 'waiting';
        e.reason = 'not the leader';
        return;
      }
      if (isNotCalledFor(err)) {
        e.state = 'waiting';
        e.reason = `not sent: ${err.reason}`;
        this.#mark(k);
        return;
      }
      e.errors++;
      const wait = backoff(this.#o.errorBackoffInitialMs, this.#o.errorBackoffMaxMs, e.errors);
      e.state = 'retrying';
      e.nextAttemptMs = this.#d.clock.now() + wait;
      e.reason = `eviction failed: ${describeError(err)}`;
      this.#d.metrics.evictions.inc({ result: 'error' });
      this.#d.log.warn({ pod: k, err: describeError(err), retryInMs: wait }, 'eviction for node affinity failed; retrying');
      this.#arm(k, e, wait);
    }
  }
}

function key(p: { namespace: string; name: string }): string {
  return `${p.namespace}/${p.name}`;
}

function podRef(p: AffinityPod): { kind: 'Pod'; name: string; namespace: string; uid: string } {
  return { kind: 'Pod', name: p.name, namespace: p.namespace, uid: p.uid };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Capped exponential backoff: `initial × 2^(attempt-1)`, at most `max` (milliseconds). */
function backoff(initialMs: number, maxMs: number, attempt: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
}
