// Why this file is over 500 lines: the taint manager shell is one class whose loops (node and pod handlers, the pump, deletions, the sight hold) share the per-node and per-pod deadline state; the decisions are already in decision.ts, tolerations.ts and blindhold.ts, first-sight records in seen.ts, the retry queue in retry.ts.
/**
 * The NoExecute taint eviction controller ("taint manager"): the thin I/O shell around the pure
 * decision core (decision.ts) and the one-timer deadline heap (src/util/scheduler.ts).
 *
 * Mirrors upstream `pkg/controller/tainteviction/taint_eviction.go` (`Controller`, `NodeUpdated`,
 * `PodUpdated`, `handleNodeUpdate`, `handlePodUpdate`, `processPodOnNode`, `cancelWorkWithEvent`,
 * `deletePodHandler`) and `timed_workers.go` (`TimedWorkerQueue`).
 *
 * Data flow: informer handlers only record node names and pod keys. A single in-memory pump handles
 * them, **every pending node before any pod** (upstream §5.1: each worker drains its node channel
 * before it takes a pod). Node and pod handling only read the caches and change the pending-deletion
 * heap; nothing there waits for the API, so one pump replaces upstream's eight sharded workers and
 * the priority holds globally, not per shard. When a deadline passes, the pod's key goes to a
 * rate-limited work queue (src/kube/workqueue.ts) whose bounded pool makes one attempt per turn;
 * every write goes through the `--kube-api-qps` throttle.
 *
 * Deliberate differences from upstream, each commented where it happens and listed, with the test
 * that pins it, in docs/taint-eviction.md: 1. restart-safe deadlines from the taint's `timeAdded`
 * (kubernetes/kubernetes#108268; decision.ts); 2. (no longer a difference) a pending deadline is
 * never moved, as upstream (`planEviction`); 3. failed deletions retry with per-pod backoff until done, holding no slot, with
 * one Warning Event after {@link FAILING_EVENT_AFTER} failures and the `failing_pod_deletions` gauge
 * (#140639; retry.ts); 4. deletion durations in seconds (PR #141311); 5. a due deletion is re-checked
 * against the caches, and a pod already terminating with `DisruptionTarget=True` is left alone;
 * 6. nothing is written while the caches cannot be trusted; 7. pending entries remember the pod UID
 * and node; 8. the sight hold: a deletion due at or before the end of a blind interval waits until
 * sight has been back for `--node-monitor-grace-period`, then is decided again (blindhold.ts);
 * 9. an edited toleration counts from when this process saw the edit (seen.ts); 10. the start hold:
 * a deletion due for a taint the node lifecycle controller manages waits until that controller has
 * confirmed the node not Ready since its start, then is decided again (src/kube/judgements.ts,
 * held.ts); without one in this process, the time before the first sight counts as blind; 11. first
 * sights, edits, blind intervals and the start are kept on the monotonic clock (`wallOf`), and the
 * deadline heap waits for both clocks, so no NTP step makes a deletion sooner (docs difference 14).
 */
import { isDeepStrictEqual } from 'node:util';
import { describeError, isNotFound } from '../kube/client.js';
import type { Logger } from '../log/logger.js';
import { podKey, type Node, type Pod, type Taint } from '../kube/objects.js';
import { formatTaint } from '../kube/taints.js';
import { isFenced, isNotCalledFor, type WriteRecheck } from '../kube/throttle.js';
import type { WorkQueue } from '../kube/workqueue.js';
import type { TaintEvictionMetrics } from '../metrics/registry.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import type { NodeJudgements } from '../kube/judgements.js';
import { wallOf, type Clock, type TimerHandle } from '../util/clock.js';
import { DeadlineScheduler, type ScheduledEviction } from '../util/scheduler.js';
import { decidePodEviction, planEviction, type DecideOptions, type Decision, type PendingEviction } from './decision.js';
import { TaintFirstSeen, TolerationEdits } from './seen.js';
import { cancelPodDeletionEvent, podDeletionEvent, podDeletionFailingEvent, type PodEvent } from './events.js';
import { sightHoldUntilMs, type SightInput } from './blindhold.js';
import { DEFAULT_MIN_BLIND_MS, SightTracker } from '../kube/sight.js';
import { FAILING_EVENT_AFTER, newDeletionQueue } from './retry.js';
import { HeldDeletions } from './held.js';
import type { Payload, PendingPodDeletion, RunningDeletion } from './running.js';
import { recordOutcome, type AttemptResult } from './outcome.js';
import { DEFAULT_DELETION_CONCURRENCY, DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS, type TaintEvictionOptions } from './options.js';
import { noExecuteTaints, sameNoExecuteTaints } from './tolerations.js';
import { hasDisruptionTarget, type TaintEvictionWriter } from './writer.js';

/** The informer caches the controller reads. Node keys are names; pod keys `ns/name`. */
export interface TaintEvictionCaches {
  nodes: ReadStore<Node>;
  pods: ReadStore<Pod> & { podsOnNode(nodeName: string): readonly Pod[] };
}

/** The writes the controller makes (implemented by {@link TaintEvictionWriter}). */
export type TaintEvictionWrites = Pick<TaintEvictionWriter, 'addDisruptionCondition' | 'deletePod'>;

export type { TaintEvictionOptions } from './options.js';

/** Everything the controller needs, injected. */
export interface TaintEvictionDeps {
  clock: Clock;
  log: Logger;
  caches: TaintEvictionCaches;
  writes: TaintEvictionWrites;
  events: EventSink;
  metrics: TaintEvictionMetrics;
  /**
   * True while the node and pod caches reflect the cluster (synced, watches connected); src/cli/run.ts
   * also requires the Lease cache, so sight counts as regained only once the node lifecycle
   * controller can re-judge nodes too. Call {@link TaintEvictionController.sightChanged} whenever
   * its value may have changed.
   */
  canSeeCluster: () => boolean;
  /**
   * The node lifecycle controller's judgements since its start (the start hold, decision.ts
   * `DecideOptions.judgement`); the registry always wires it. Absent: no start hold. Call
   * {@link TaintEvictionController.judgementChanged} on each of its changes.
   */
  judgements?: NodeJudgements;
  options?: TaintEvictionOptions;
}

export type { PendingPodDeletion } from './running.js';

export { DEFAULT_DELETION_CONCURRENCY, DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS } from './options.js';

/**
 * The NoExecute taint eviction controller. Construct, then {@link start} once the caches synced;
 * feed it informer events through {@link nodeChanged}, {@link nodeDeleted}, {@link podChanged} and
 * {@link podDeleted}; {@link stop} shuts it down. {@link view} lists pending deletions.
 * Mirrors upstream `tainteviction.Controller` (see the module comment for the differences).
 */
export class TaintEvictionController {
  readonly #d: TaintEvictionDeps;
  readonly #opts: Required<TaintEvictionOptions>;
  /** NoExecute taints of each node, as of the last time the node was handled (upstream `taintedNodes`). */
  readonly #taintedNodes = new Map<string, Taint[]>();
  /** When this process first saw each untimed NoExecute taint (the anchor of its clock). */
  readonly #firstSeen = new TaintFirstSeen();
  readonly #pending: DeadlineScheduler<Payload>;
  readonly #running = new Map<string, RunningDeletion>();
  /** Keys of running deletions whose last attempt failed (the `failing_pod_deletions` gauge). */
  readonly #failing = new Set<string>();
  #deletions: WorkQueue;
  /** When this process saw each pod's tolerations change (never delete sooner than upstream). */
  readonly #edits = new TolerationEdits();
  readonly #dirtyNodes = new Set<string>();
  readonly #dirtyPods = new Set<string>();
  /** Formatted taint lists, shared by every pending entry of a node (memory at 100,000 pending). */
  readonly #taintStrings = new WeakMap<readonly Taint[], readonly string[]>();
  #pumpTimer: TimerHandle | undefined;
  #stopped = true;
  /** Blind intervals (the sight hold, docs/taint-eviction.md difference 10); fed by {@link sightChanged}. */
  readonly #sight: SightTracker;
  /** Whether an eviction first adds `DisruptionTarget` (options.disruptionConditions, asked at each eviction). */
  readonly #disruptionConditions: () => boolean;
  /** Deletions held until the node lifecycle controller confirms their node not Ready. */
  readonly #held: HeldDeletions;
  /** Monotonic ms of the last {@link start} (a standby's sight before it led does not count). */
  #startedMono = 0;

  /**
   * @param deps injected caches, writes, events, metrics, clock, logger and sight check.
   * @throws {RangeError} when `options.deletionConcurrency` is not a positive integer, or
   *   `options.minBlindMs` is negative.
   */
  constructor(deps: TaintEvictionDeps) {
    this.#d = deps;
    const o = deps.options ?? {};
    this.#opts = {
      deletionConcurrency: o.deletionConcurrency ?? DEFAULT_DELETION_CONCURRENCY,
      retryInitialDelayMs: o.retryInitialDelayMs ?? 100,
      retryMaxDelayMs: o.retryMaxDelayMs ?? 10_000,
      sightPollMs: o.sightPollMs ?? 500,
      pumpBatchSize: o.pumpBatchSize ?? 500,
      disruptionConditions: o.disruptionConditions ?? true,
      nodeMonitorGracePeriodMs: o.nodeMonitorGracePeriodMs ?? DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS,
      minBlindMs: o.minBlindMs ?? DEFAULT_MIN_BLIND_MS,
      tolerationComparisonOperators: o.tolerationComparisonOperators ?? false,
    };
    const dc = this.#opts.disruptionConditions;
    this.#disruptionConditions = typeof dc === 'function' ? dc : () => dc;
    this.#sight = new SightTracker(this.#opts.minBlindMs);
    this.#held = new HeldDeletions(deps.log);
    const c = this.#opts.deletionConcurrency;
    if (!Number.isInteger(c) || c < 1) throw new RangeError(`taint eviction: deletion concurrency must be a positive integer, got ${c}`);
    this.#deletions = this.#newDeletionQueue();
    this.#pending = new DeadlineScheduler<Payload>(deps.clock, {
      onError: (err, e) => deps.log.error({ pod: e.key, err: describeError(err) }, 'taint eviction: due handler failed'),
    });
    this.#pending.onDue((e) => this.#onDue(e));
  }

  #newDeletionQueue(): WorkQueue {
    const o = this.#opts;
    const sync = (key: string): Promise<void> => this.#syncDeletion(key);
    return newDeletionQueue({ clock: this.#d.clock, concurrency: o.deletionConcurrency, initialDelayMs: o.retryInitialDelayMs, maxDelayMs: o.retryMaxDelayMs, sync });
  }

  /** Queues every cached node once (upstream's initial informer adds) and starts the pump. Call after the caches synced. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#startedMono = this.#d.clock.monotonic();
    if (this.#d.judgements?.hasJudge() === false) {
      this.#d.log.warn({}, 'taint eviction: no node lifecycle controller runs in this process; deletions for its NoExecute taints that fell due before this start wait one node monitor grace period after it');
    }
    this.sightChanged();
    for (const n of this.#d.caches.nodes.list()) this.#dirtyNodes.add(n.name);
    this.#kick();
    this.#d.log.info({ nodes: this.#dirtyNodes.size }, 'taint eviction controller started');
  }

  /**
   * Stops the pump, drops every pending deletion, aborts running ones (a write already sent
   * completes) and resolves when the deletion pool is idle. Idempotent.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#pumpTimer?.cancel();
    this.#pumpTimer = undefined;
    this.#dirtyNodes.clear();
    this.#dirtyPods.clear();
    this.#pending.clear();
    this.#held.clear();
    for (const r of this.#running.values()) r.abort.abort();
    const deletions = this.#deletions;
    // A fresh queue for a later start (a regained lease); the old one drops its delayed retries.
    this.#deletions = this.#newDeletionQueue();
    await deletions.shutDown();
    this.#running.clear();
    this.#failing.clear();
    this.#updateGauge();
  }

  // ---------------------------------------------------------------------------------------------
  // Informer handlers: record keys only.
  // ---------------------------------------------------------------------------------------------

  /**
   * An informer behind `canSeeCluster()` gained or lost its watch stream (`Informer.on('watching')`): records
   * the transition of `canSeeCluster()` at the current clock time, so a blind interval is known to
   * the millisecond (the sight hold; docs/taint-eviction.md difference 10). Must be called
   * synchronously on each transition, before anything else reads `canSeeCluster()`; extra calls are
   * harmless. Works while stopped.
   */
  sightChanged(): void {
    const ended = this.#sight.observe(this.#d.canSeeCluster(), this.#d.clock.monotonic());
    if (ended) {
      const holdUntil = new Date(wallOf(this.#d.clock, ended.toMs) + this.#opts.nodeMonitorGracePeriodMs).toISOString();
      this.#d.log.warn(
        { blindMs: ended.toMs - ended.fromMs, holdUntil },
        'taint eviction: sight of the cluster regained; deletions due while blind wait until the node lifecycle controller has re-judged the nodes',
      );
    }
  }

  #sightInput(): SightInput {
    const b = this.#sight.lastBlind();
    return { lastBlind: b && { fromMs: wallOf(this.#d.clock, b.fromMs), toMs: wallOf(this.#d.clock, b.toMs) }, holdMs: this.#opts.nodeMonitorGracePeriodMs };
  }

  /**
   * A Node was added (`old` undefined) or updated. Ignored when its NoExecute taints are
   * semantically unchanged (key, value, effect, exact `timeAdded`). Mirrors `NodeUpdated`.
   */
  nodeChanged(node: Node, old?: Node): void {
    if (this.#stopped) return;
    if (old && sameNoExecuteTaints(noExecuteTaints(old.taints), noExecuteTaints(node.taints))) return;
    this.#dirtyNodes.add(node.name);
    this.#kick();
  }

  /**
   * The node lifecycle controller's judgement of `nodeName` changed (src/kube/judgements.ts
   * `NodeJudgements.onChange`): its pods are decided again, from the caches (level-based).
   */
  judgementChanged(nodeName: string): void {
    if (this.#stopped) return;
    this.#dirtyNodes.add(nodeName);
    this.#kick();
  }

  /** A Node was deleted. Mirrors `NodeUpdated(old, nil)`. */
  nodeDeleted(node: Pick<Node, 'name'>): void {
    if (this.#stopped) return;
    this.#dirtyNodes.add(node.name);
    this.#kick();
  }

  /**
   * A Pod was added (`old` undefined) or updated. Ignored when `nodeName` and the tolerations are
   * unchanged (Semantic.DeepEqual). Mirrors `PodUpdated`.
   */
  podChanged(pod: Pod, old?: Pod): void {
    // Recorded while stopped too (a standby), so a process that takes over counts an edit it saw from then.
    this.#edits.observe(pod, old, this.#d.clock.monotonic());
    if (this.#stopped) return;
    if (old && old.nodeName === pod.nodeName && isDeepStrictEqual(old.tolerations, pod.tolerations)) return;
    this.#dirtyPods.add(podKey(pod));
    this.#kick();
  }

  /** A Pod was deleted: its pending deletion is cancelled. Mirrors `PodUpdated(old, nil)`. */
  podDeleted(pod: Pick<Pod, 'namespace' | 'name'>): void {
    this.#edits.forget(podKey(pod));
    if (this.#stopped) return;
    this.#dirtyPods.add(podKey(pod));
    this.#kick();
  }

  // ---------------------------------------------------------------------------------------------
  // The pump: nodes before pods.
  // ---------------------------------------------------------------------------------------------

  #kick(): void {
    if (this.#stopped || this.#pumpTimer !== undefined) return;
    this.#pumpTimer = this.#d.clock.setTimeout(() => {
      this.#pumpTimer = undefined;
      this.#pump();
    }, 0);
  }

  /**
   * Handles queued updates, every pending node before the next pod (upstream §5.1: node updates have
   * priority, so a pod is never judged on taints that a queued node update has already changed).
   * Yields after `pumpBatchSize` items so 100,000 pods never block the event loop in one turn.
   */
  #pump(): void {
    const now = this.#d.clock.now();
    for (let budget = this.#opts.pumpBatchSize; budget > 0 && !this.#stopped; budget--) {
      const node = first(this.#dirtyNodes);
      if (node !== undefined) {
        this.#dirtyNodes.delete(node);
        this.#guard(() => this.#handleNode(node, now), { node });
        continue;
      }
      const pod = first(this.#dirtyPods);
      if (pod === undefined) break;
      this.#dirtyPods.delete(pod);
      this.#guard(() => this.#handlePod(pod, now), { pod });
    }
    if (this.#dirtyNodes.size > 0 || this.#dirtyPods.size > 0) this.#kick();
    this.#updateGauge();
  }

  #guard(fn: () => void, what: Record<string, string>): void {
    try {
      fn();
    } catch (err) {
      this.#d.log.error({ ...what, err: describeError(err) }, 'taint eviction: handler failed');
    }
  }

  /**
   * Mirrors `handleNodeUpdate`: records the node's NoExecute taints (before looking at its pods),
   * then re-evaluates every pod bound to it. A node with no NoExecute taint cancels its pods'
   * pending deletions, with the cancel event.
   */
  #handleNode(name: string, now: number): void {
    const node = this.#d.caches.nodes.get(name);
    if (!node) {
      // As upstream: pending deletions are not cancelled here; the due-time re-check drops them
      // (the node is gone), and pod GC removes the orphaned pods.
      this.#taintedNodes.delete(name);
      this.#firstSeen.forget(name);
      return;
    }
    const taints = noExecuteTaints(node.taints);
    this.#firstSeen.record(name, taints, this.#d.clock.monotonic());
    if (taints.length === 0) this.#taintedNodes.delete(name);
    else this.#taintedNodes.set(name, taints);
    for (const pod of this.#d.caches.pods.podsOnNode(name)) {
      if (pod.nodeName === name) this.#processPod(pod, now);
    }
  }

  /** Mirrors `handlePodUpdate`; a pod that is gone from the cache cancels its pending deletion. */
  #handlePod(key: string, now: number): void {
    const pod = this.#d.caches.pods.get(key);
    if (!pod) {
      this.#apply(key, { kind: 'none' }, undefined, now);
      return;
    }
    this.#processPod(pod, now);
  }

  #decideOptions(pod: Pod): DecideOptions {
    const judgement = this.#judgementOf(pod.nodeName);
    const edited = this.#edits.seenForDecision(pod, this.#d.clock.monotonic());
    const firstSeen = (t: Taint): number | undefined => {
      const m = this.#firstSeen.of(pod.nodeName, t);
      return m === undefined ? undefined : wallOf(this.#d.clock, m);
    };
    return { firstSeen, sight: this.#sightInput(), comparisonOperators: this.#opts.tolerationComparisonOperators, ...(edited === undefined ? {} : { tolerationsSeenMs: wallOf(this.#d.clock, edited) }), ...(judgement ? { judgement } : {}) };
  }

  /** The start hold's input for a pod on `node` (decision.ts `DecideOptions.judgement`). */
  #judgementOf(node: string): DecideOptions['judgement'] {
    const j = this.#d.judgements;
    if (j === undefined) return undefined;
    if (j.hasJudge()) {
      const why = j.notConfirmedBecause(node);
      return why === undefined ? undefined : { heldBecause: why };
    }
    // A standby saw the cluster long before it led: only sight since this start counts.
    const first = Math.max(this.#sight.firstSeenMs() ?? this.#d.clock.monotonic(), this.#startedMono);
    return { firstSightMs: wallOf(this.#d.clock, first), holdMs: this.#opts.nodeMonitorGracePeriodMs };
  }

  /** Mirrors `processPodOnNode` over the pure {@link decidePodEviction}. */
  #processPod(pod: Pod, now: number): void {
    const key = podKey(pod);
    const pendingNode = this.#pending.get(key)?.payload.node ?? this.#running.get(key)?.node;
    if (pendingNode !== undefined && pendingNode !== pod.nodeName) {
      // Deliberate difference 7: the pod now lives elsewhere (or is a recreated pod bound elsewhere);
      // what was pending for the old binding no longer applies.
      this.#apply(key, { kind: 'none' }, undefined, now);
    }
    if (pod.nodeName === '') return;
    // Upstream reads `taintedNodes`, not the node cache: the taints as of the node's last handling,
    // which the nodes-first pump keeps current.
    const taints = this.#taintedNodes.get(pod.nodeName) ?? [];
    const decision = decidePodEviction(pod, taints, now, this.#decideOptions(pod));
    this.#apply(key, decision, { pod, taints }, now);
  }

  /** The pending entry of `key` in {@link planEviction}'s terms: a timed one, or a running (immediate) one. */
  #pendingOf(key: string): PendingEviction | undefined {
    const timed = this.#pending.get(key);
    if (timed) return { uid: timed.uid, atMs: timed.atMs, scheduledAtMs: timed.scheduledAtMs };
    const running = this.#running.get(key);
    return running && { uid: running.uid, atMs: running.dueAtMs, scheduledAtMs: running.dueAtMs };
  }

  /** Applies {@link planEviction}'s plan for `decision` to the pending heap and the running set. */
  #apply(key: string, decision: Decision, subject: { pod: Pod; taints: readonly Taint[] } | undefined, now: number): void {
    const plan = planEviction(decision, subject?.pod.uid ?? '', this.#pendingOf(key));
    if (decision.kind === 'held' && subject) this.#hold(subject.pod, subject.taints, decision.reason, now);
    else this.#held.release(key, decision.kind === 'none' ? 'no longer called for' : 'released', now);
    switch (plan.kind) {
      case 'keep':
        return;
      case 'cancel':
        this.#cancel(key, plan.emitCancelEvent);
        return;
      case 'delete-now':
        this.#cancel(key, plan.emitCancelEvent);
        if (subject && decision.kind === 'delete-now') this.#startDeletion(subject.pod, subject.taints, decision.reason, now);
        return;
      case 'schedule': {
        if (!subject || decision.kind !== 'delete-at') return;
        const { pod, taints } = subject;
        const running = this.#running.get(key);
        if (running && running.uid !== pod.uid) running.abort.abort(); // the old pod is gone
        this.#schedule(pod, taints, plan.atMs, decision.reason);
      }
    }
  }

  #schedule(pod: Pod, taints: readonly Taint[], atMs: number, reason: string): void {
    const key = podKey(pod);
    this.#pending.schedule(key, pod.uid, atMs, { namespace: pod.namespace, name: pod.name, node: pod.nodeName, taints: this.#formatTaints(taints), reason });
    this.#d.log.debug({ pod: key, node: pod.nodeName, at: new Date(atMs).toISOString(), reason }, 'Pod deletion scheduled');
  }

  #formatTaints(taints: readonly Taint[]): readonly string[] {
    let s = this.#taintStrings.get(taints);
    if (!s) {
      s = taints.map(formatTaint);
      this.#taintStrings.set(taints, s);
    }
    return s;
  }

  #hold(pod: Pod, taints: readonly Taint[], reason: string, now: number): void {
    this.#held.hold({ key: podKey(pod), uid: pod.uid, node: pod.nodeName, taints: this.#formatTaints(taints), reason }, now);
  }

  /**
   * Drops `key`'s pending deletion; a running one is aborted (its in-flight write completes).
   * Mirrors `cancelWorkWithEvent`: the event is emitted only when asked, i.e. for a timed entry.
   */
  #cancel(key: string, emitEvent: boolean): void {
    const timed = this.#pending.get(key);
    if (timed) {
      this.#pending.cancel(key);
      if (emitEvent) {
        this.#emit(timed.uid, cancelPodDeletionEvent(timed.payload.namespace, timed.payload.name));
        this.#d.log.info({ pod: key, node: timed.payload.node }, 'Cancelling deletion of pod');
      }
    }
    const running = this.#running.get(key);
    if (running) {
      running.abort.abort();
      this.#dropRunning(running);
    }
    this.#updateGauge();
  }

  /** Forgets `r` if it is still `r.key`'s running deletion (a newer one for the key is kept). */
  #dropRunning(r: RunningDeletion): void {
    if (this.#running.get(r.key) !== r) return;
    this.#running.delete(r.key);
    this.#failing.delete(r.key);
  }

  // ---------------------------------------------------------------------------------------------
  // Deletion.
  // ---------------------------------------------------------------------------------------------

  #onDue(e: ScheduledEviction<Payload>): void {
    if (this.#stopped) return;
    this.#run({ ...e.payload, key: e.key, uid: e.uid, dueAtMs: e.atMs, abort: new AbortController(), announced: false, failures: 0 });
  }

  #startDeletion(pod: Pod, taints: readonly Taint[], reason: string, now: number): void {
    this.#run({
      key: podKey(pod),
      uid: pod.uid,
      namespace: pod.namespace,
      name: pod.name,
      node: pod.nodeName,
      taints: this.#formatTaints(taints),
      reason,
      dueAtMs: now,
      abort: new AbortController(),
      announced: false,
      failures: 0,
    });
  }

  #run(r: RunningDeletion): void {
    const previous = this.#running.get(r.key);
    if (previous) previous.abort.abort();
    this.#running.set(r.key, r);
    this.#failing.delete(r.key);
    this.#updateGauge();
    // A new deletion starts with a clean backoff; the queue never runs a key twice at once.
    this.#deletions.forget(r.key);
    this.#deletions.add(r.key);
  }

  /**
   * One turn of the deletion queue for `key`: one attempt of its running deletion, mirroring
   * `deletePodHandler` with deliberate difference 3. A failed attempt throws, so the queue gives
   * the slot back and re-adds the key with per-pod exponential backoff (client-go
   * `processNextWorkItem` + `AddRateLimited`); no attempt limit. Waiting for sight holds no slot
   * either: the key comes back after `sightPollMs`.
   * @throws the attempt's API error, for the queue's backoff (never a 404 or a fenced write).
   */
  async #syncDeletion(key: string): Promise<void> {
    const r = this.#running.get(key);
    if (!r || r.abort.signal.aborted || this.#stopped) return;
    const { log } = this.#d;
    let result: AttemptResult;
    try {
      result = await this.#attempt(r);
    } catch (err) {
      if (isFenced(err) || isNotFound(err)) {
        log.info({ pod: r.key, err: describeError(err) }, 'taint eviction: pod deletion stopped (pod gone, or this process may no longer write)');
        this.#dropRunning(r);
        this.#updateGauge();
        return;
      }
      if (this.#running.get(key) !== r || r.abort.signal.aborted) return; // cancelled meanwhile
      this.#failed(r, err);
      throw err;
    }
    if (result === 'blind') {
      this.#deletions.addAfter(key, this.#opts.sightPollMs);
      return;
    }
    recordOutcome(this.#d.log, this.#d.metrics, r, result, this.#d.clock.now());
    this.#dropRunning(r);
    this.#updateGauge();
  }

  /** Counts a failed attempt of `r`: the failing gauge, a log line, and the one Warning Event. */
  #failed(r: RunningDeletion, err: unknown): void {
    r.failures++;
    this.#failing.add(r.key);
    this.#updateGauge();
    const error = describeError(err);
    this.#d.log.warn({ pod: r.key, failures: r.failures, err: error }, 'taint eviction: pod deletion failed; retrying with backoff');
    // Once per deletion, not per retry: the Event recorder would merge the repeats anyway, but a
    // pod that cannot be deleted for a day should not cost a write per retry.
    if (r.failures === FAILING_EVENT_AFTER) this.#emit(r.uid, podDeletionFailingEvent(r.namespace, r.name, r.failures, error));
  }

  /**
   * The due-time decision for `r` from the current view: the caches, sight, the start hold and the
   * sight hold. Reads only; what a verdict asks for (hold the pod, put it back on the heap) is in
   * its `then`, for the caller to run.
   * @returns `undefined` while the deletion is still called for; otherwise the outcome it comes to.
   */
  #verdict(r: RunningDeletion): { result: Exclude<AttemptResult, 'deleted'>; then?: () => void } | undefined {
    const { caches, clock } = this.#d;
    if (!this.#d.canSeeCluster()) return { result: 'blind' };
    if (r.abort.signal.aborted || this.#running.get(r.key) !== r) return { result: 'aborted' };
    const pod = caches.pods.get(r.key);
    if (!pod || pod.uid !== r.uid) return { result: 'gone' };
    const node = caches.nodes.get(r.node);
    if (pod.nodeName !== r.node || !node) return { result: 'not-needed' };
    // Only "is an eviction still called for" is re-checked, not the deadline: upstream keeps a
    // finite schedule when a toleration is lengthened ("lengthening toleration shouldn't work").
    const now = clock.now();
    const sight = this.#sightInput();
    const decision = decidePodEviction(pod, node.taints, now, this.#decideOptions(pod));
    if (decision.kind === 'none') return { result: 'not-needed' };
    if (decision.kind === 'held') return { result: 'judged', then: () => this.#hold(pod, noExecuteTaints(node.taints), decision.reason, now) };
    // The sight hold (docs/taint-eviction.md difference 10). A deletion that became due at or before
    // the end of the last blind interval was decided on a view of the cluster older than the outage:
    // it is decided again, and a `delete-at` (a sight hold, or a later deadline from taints that
    // changed meanwhile) goes back to the heap instead of running now. Sight was regained
    // synchronously before canSeeCluster() turned true (sightChanged), so `sight` already includes
    // the interval that just ended.
    if (decision.kind === 'delete-at' && (decision.heldForSightFromMs !== undefined || sightHoldUntilMs(r.dueAtMs, sight) !== undefined)) {
      return { result: 'held', then: () => this.#schedule(pod, noExecuteTaints(node.taints), decision.atMs, decision.reason) };
    }
    if (decision.kind === 'delete-at') {
      // Still called for although the view puts the deadline later (a lengthened toleration, whose
      // old schedule upstream keeps; or the wall clock stepped back behind the deadline heap, which
      // waits on both clocks). The start hold judges only a deletion that is due, so it is asked as of
      // that deadline: a pod on a node the node lifecycle controller has not confirmed not Ready since
      // its start or since sight returned is held, as a due one is (fuzz seed 20271208 run 2683: a
      // 1 ms step back made the due deletion a `delete-at`, and it went out 38 s after an outage,
      // before the node was judged again from post-outage data). Can only hold.
      const atDue = decidePodEviction(pod, node.taints, Math.max(now, decision.atMs), this.#decideOptions(pod));
      if (atDue.kind === 'held') return { result: 'judged', then: () => this.#hold(pod, noExecuteTaints(node.taints), atDue.reason, now) };
    }
    if (pod.deletionTimestamp !== undefined && hasDisruptionTarget(pod)) return { result: 'already-evicted' };
    return undefined;
  }

  /**
   * One try: {@link #verdict} first (`blind` while the caches cannot be trusted, difference 6; the
   * cache re-check, difference 5; the start and sight holds), then add the condition and delete.
   * Each write takes the verdict again right before it is sent (src/kube/throttle.ts
   * `WriteRecheck`: after its wait for a token, and before each `Retry-After` resend), so a write
   * queued or retried across a change of view (sight lost or regained, the node judged Ready, the
   * pod edited) is decided again, never replayed (issue 53 item 4: a deletion decided just before
   * the node lifecycle controller judged the node Ready went out 34 ms after that judgement held
   * it). The "Marking for deletion" Event goes out with the first write that is sent. Throws on API
   * errors so the queue retries; the retry starts again from the verdict.
   */
  async #attempt(r: RunningDeletion): Promise<AttemptResult> {
    const stop = this.#verdict(r);
    if (stop) {
      stop.then?.();
      return stop.result;
    }
    const recheck: WriteRecheck = () => {
      const v = this.#verdict(r);
      if (v) return `the deletion comes to '${v.result}' now`;
      if (!r.announced) {
        // Upstream emits this once, before its retries; ours with the first write actually sent.
        r.announced = true;
        this.#emit(r.uid, podDeletionEvent(r.namespace, r.name));
        this.#d.log.info({ pod: r.key, node: r.node, reason: r.reason }, 'Deleting pod');
      }
      return undefined;
    };
    const pod = this.#d.caches.pods.get(r.key);
    try {
      if (this.#disruptionConditions() && (await this.#d.writes.addDisruptionCondition(r.namespace, r.name, r.uid, pod, recheck)) === 'gone') return 'gone';
      if ((await this.#d.writes.deletePod(r.namespace, r.name, r.uid, recheck)) === 'gone') return 'gone';
    } catch (err) {
      if (!isNotCalledFor(err)) throw err;
      const v = this.#verdict(r);
      this.#d.log.info({ pod: r.key, node: r.node, why: err.reason }, 'taint eviction: write not sent: the deletion was decided again when its turn came');
      if (!v) return 'blind'; // called for again already: one more turn after the sight poll
      v.then?.();
      return v.result;
    }
    return 'deleted';
  }

  /**
   * Records a pod event. Deliberate difference: the reference carries the pod UID (upstream sets
   * none), so `kubectl describe pod` lists the event for this pod and not for a namesake.
   */
  #emit(uid: string, e: PodEvent): void {
    const o = e.involvedObject;
    this.#d.events.record({ kind: 'Pod', namespace: o.namespace, name: o.name, uid }, e.type, e.reason, e.message);
  }

  #updateGauge(): void {
    this.#d.metrics.pendingPodDeletions.set(this.#pending.size + this.#running.size);
    this.#d.metrics.failingPodDeletions.set(this.#failing.size);
  }

  // ---------------------------------------------------------------------------------------------
  // Introspection.
  // ---------------------------------------------------------------------------------------------

  /** Number of pending deletions (scheduled plus running), what the pending gauge shows. */
  get pendingCount(): number {
    return this.#pending.size + this.#running.size;
  }

  /**
   * Pending deletions, scheduled and running, sorted by deadline (epoch ms), for the `status`
   * command and `/debug/state`. O(n log n); returns new objects.
   */
  view(): PendingPodDeletion[] {
    const out: PendingPodDeletion[] = this.#pending.entries().map((e) => ({
      pod: e.key,
      uid: e.uid,
      node: e.payload.node,
      deadlineMs: e.atMs,
      taints: [...e.payload.taints],
      reason: e.payload.reason,
      state: 'scheduled' as const,
    }));
    for (const r of this.#running.values()) {
      out.push({ pod: r.key, uid: r.uid, node: r.node, deadlineMs: r.dueAtMs, taints: [...r.taints], reason: r.reason, state: 'deleting' });
    }
    for (const h of this.#held.list()) out.push({ pod: h.key, uid: h.uid, node: h.node, deadlineMs: h.sinceMs, taints: [...h.taints], reason: h.reason, state: 'held' });
    return out.sort((a, b) => a.deadlineMs - b.deadlineMs);
  }
}

function first(set: ReadonlySet<string>): string | undefined {
  for (const v of set) return v;
  return undefined;
}
