/**
 * The node lifecycle controller's writes: taint swaps, Unknown-marking of node status, pods marked
 * Ready=False, and (legacy mode) pod deletion. Every call goes through the shared
 * {@link WriteScheduler} (the `--kube-api-qps` throttle plus the leader fencing gate) and retries
 * on 409 Conflict against a fresh GET, as upstream's `RetryOnConflict` loops do.
 *
 * Writes are resourceVersion-guarded merge patches: the patch carries `metadata.resourceVersion`,
 * so the API server rejects it with 409 if the object changed since we read it. This gives the
 * safety of upstream's full-object PUT (`UpdateStatus`, `PatchNodeTaints` with RV) without sending
 * the whole object.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeClients } from '../kube/client.js';
import { isConflict, isNotFound } from '../kube/client.js';
import {
  getCondition,
  nodeConditionToWire,
  taintToWire,
  toNode,
  type Node,
  type NodeCondition,
  type Pod,
  type PodCondition,
  type Taint,
} from '../kube/objects.js';
import { readLease, readNode } from '../kube/reads.js';
import { isUidMismatch, patchPodConditionsByUid } from '../kube/podstatus.js';
import { DEFAULT_RETRY, retryOnConflict, UPDATE_TAINT_BACKOFF, type Backoff } from '../kube/retry.js';
import type { WritePriority, WriteRecheck, WriteScheduler } from '../kube/throttle.js';
import type { OwnWriteNotes } from '../secondactor/ownwrites.js';
import type { Clock } from '../util/clock.js';
import { conditionTaintDiff, fencedTaintSwap } from './taints.js';
import { nodeConditionsEqual } from './health.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** What happened to one write. */
export type WriteResult = 'written' | 'unchanged' | 'gone';

/**
 * What happened to one taint swap: a {@link WriteResult}, or `'fenced'` when the NoExecute fence
 * (`opts.noExecuteFence` of {@link NodeLifecycleWriter.swapNodeTaints}) refused a NoExecute taint
 * the swap would have added; the rest of the swap (removals, NoSchedule taints) was still written
 * if it changed anything.
 */
export type TaintWriteResult = WriteResult | 'fenced';

/** The options of {@link NodeLifecycleWriter.swapNodeTaints} (every writes implementation takes them). */
export interface SwapNodeTaintsOptions {
  /**
   * Also bring the NoSchedule condition taints in line with the node's conditions as read (what
   * `doNoScheduleTaintingPass` would write next), in the same patch. Ours: the NoExecute taint of a
   * node just marked Unknown then carries `unreachable:NoSchedule` with it, one round trip instead
   * of two (deliberate difference 12).
   */
  conditionTaints?: boolean;
  /**
   * Called before the patch is sent with the condition taints that `conditionTaints` adds and
   * removes (as computed on the copy the patch starts from).
   */
  onConditionTaints?: (added: readonly Taint[], removed: readonly Taint[]) => void;
  /**
   * The NoExecute fence: read right before every write attempt (after the throttle, and again on
   * each conflict retry); while it returns true, no NoExecute taint is added (see
   * `fencedTaintSwap` in taints.ts). The controller sets it on every call (fence.ts): true while
   * the all-zones stop is on.
   */
  noExecuteFence?: () => boolean;
  /**
   * The write's place in the throttle's order (src/kube/throttle.ts); default `'node'`. The
   * NoSchedule pass passes `'noschedule-taint'`, which waits behind status and NoExecute writes.
   */
  priority?: WritePriority;
  /**
   * The caller's decision taken again right before each attempt's patch is sent (after the node's
   * lock, the throttle and any conflict's GET; src/kube/throttle.ts `WriteRecheck`): a reason
   * withholds the patch and the swap rejects with `NotCalledForError`.
   */
  recheck?: WriteRecheck;
}


/**
 * Node lifecycle writes over the real API.
 * Mirrors upstream `controller_utils.go` (`SwapNodeControllerTaint`, `AddOrUpdateTaintOnNode`,
 * `RemoveTaintOffNode`, `MarkPodsNotReady`, `DeletePods` [1.20]) and the `UpdateStatus` call in
 * `tryUpdateNodeHealth`.
 */
export class NodeLifecycleWriter {
  readonly #clients: KubeClients;
  readonly #writes: WriteScheduler;
  readonly #clock: Clock;
  readonly #own: OwnWriteNotes | undefined;
  /** Tail of each node's write chain. */
  readonly #locks = new Map<string, Promise<void>>();
  /** The node as our last write to it returned it (cleared when no write to that node is pending). */
  readonly #latest = new Map<string, Node>();

  /**
   * @param clients the API clients.
   * @param writes the throttled, fenced write path (src/kube/writer.ts).
   * @param clock supplies `timeAdded` and transition times (epoch ms).
   * @param own where the taints this process adds are noted right before each patch is sent (the
   *   second-actor check's ledger, src/secondactor/ownwrites.ts); none in tests.
   */
  constructor(clients: KubeClients, writes: WriteScheduler, clock: Clock, own?: OwnWriteNotes) {
    this.#clients = clients;
    this.#writes = writes;
    this.#clock = clock;
    this.#own = own;
  }

  /**
   * Drops what the writer remembers about a deleted node (its last write's response), so node
   * churn does not grow memory: the remembered copy outlives each write until the cache catches up.
   * Never throws.
   */
  forgetNode(name: string): void {
    this.#latest.delete(name);
  }

  /** Quorum GET of a node as a slim object; `undefined` when it is gone. @throws on other API errors. */
  getNode(name: string): Promise<Node | undefined> {
    return readNode(this.#clients, name);
  }

  /**
   * Quorum GET of the node's heartbeat Lease `kube-node-lease/<nodeName>` (the live read of
   * `NodeControllerLeaseCircuitBreaker`; a read, so not throttled, like {@link getNode}).
   * @returns its resourceVersion, or `undefined` only when the API answers 404.
   * @throws {LiveReadError} for any other answer (src/kube/reads.ts: fail closed).
   * Mirrors `kubeClient.CoordinationV1().Leases(v1.NamespaceNodeLease).Get` in `tryUpdateNodeHealth`.
   */
  async readNodeLease(nodeName: string): Promise<{ resourceVersion: string } | undefined> {
    const lease = await readLease(this.#clients, 'kube-node-lease', nodeName);
    return lease === undefined ? undefined : { resourceVersion: lease.resourceVersion };
  }

  /**
   * Adds `toAdd` (stamped `timeAdded = now`) and removes `toRemove` (matched by key and effect) in
   * one resourceVersion-guarded patch of `spec.taints`; every other taint is sent back unchanged.
   * The first attempt may use `cached` (upstream's `resourceVersion=0` GET); a conflict re-reads
   * the node from the API. Makes no API call when nothing would change.
   * Mirrors `SwapNodeControllerTaint` in `pkg/controller/util/node/controller_utils.go`.
   * Deliberate difference from upstream: one patch carries both the additions and the removals
   * (upstream sends `AddOrUpdateTaintOnNode` and `RemoveTaintOffNode` as two patches), so no
   * observer ever sees a node with both or neither of the swapped taints.
   * @param opts see {@link SwapNodeTaintsOptions}: the condition taints, and the NoExecute fence,
   *   read right before each attempt's patch (so also after a conflict, against the fresh GET).
   * @returns `'written'`, `'unchanged'`, `'gone'` when the node no longer exists, or `'fenced'` when
   *   the last attempt's fence refused a NoExecute addition (anything else in the swap was written).
   * @throws the last error after 5 conflicts (backoff 100 ms, jitter 1.0), a `NotCalledForError`
   *   (`opts.recheck` withheld the patch), or any other API error.
   */
  async swapNodeTaints(
    name: string,
    toAdd: readonly Taint[],
    toRemove: readonly Taint[],
    cached?: Node,
    opts: SwapNodeTaintsOptions = {},
  ): Promise<TaintWriteResult> {
    let fenced = false;
    const r = await this.#nodeWrite(name, cached, UPDATE_TAINT_BACKOFF, opts.priority ?? 'node', opts.recheck, async (node) => {
      const d = opts.conditionTaints ? conditionTaintDiff(node) : undefined;
      if (d) opts.onConditionTaints?.(d.toAdd, d.toRemove);
      // The fence is read here, right before the patch, on every attempt: a stop that began while
      // this write waited for the node's lock, the throttle or a conflict's GET is seen.
      const swap = fencedTaintSwap(
        node.taints,
        d ? [...toAdd, ...d.toAdd] : toAdd,
        d ? [...toRemove, ...d.toRemove] : toRemove,
        this.#clock.now(),
        opts.noExecuteFence?.() ?? false,
      );
      fenced = swap.refused.length > 0;
      const next = swap.next;
      if (next === undefined) return undefined;
      // Noted before the send: the watch may deliver the new taint before the response arrives.
      if (this.#own) for (const t of next) if (!node.taints.some((o) => o.key === t.key && o.effect === t.effect)) this.#own.noteTaint(name, t.key, t.effect);
      return this.#clients.core.patchNode(
        { name, body: { metadata: { resourceVersion: node.resourceVersion }, spec: { taints: next.map(taintToWire) } } },
        MERGE,
      );
    });
    return fenced && r.result !== 'gone' ? 'fenced' : r.result;
  }

  /**
   * Writes node conditions computed by `compute` from the node as read (the cache copy first, a
   * fresh GET after a conflict), in a resourceVersion-guarded strategic-merge patch of
   * `nodes/status` (conditions merge by `type`) that carries only the conditions that differ from
   * the node as read. `compute` returns `undefined` when no write is
   * needed any more, for example because a heartbeat arrived in between.
   * Mirrors the `UpdateStatus` retry in `monitorNodeHealth`/`tryUpdateNodeHealth`.
   * @param recheck the caller's decision taken again right before each patch is sent (see
   *   {@link SwapNodeTaintsOptions.recheck}).
   * @returns the result, the conditions written (if any), and the node as the API server returned it.
   * @throws after 5 conflicts, a `NotCalledForError` (`recheck` withheld the patch), or on any other API error.
   */
  async updateNodeConditions(
    name: string,
    cached: Node | undefined,
    compute: (node: Node) => NodeCondition[] | undefined,
    recheck?: WriteRecheck,
  ): Promise<{ result: WriteResult; written?: NodeCondition[]; node?: Node }> {
    let written: NodeCondition[] | undefined;
    const r = await this.#nodeWrite(name, cached, DEFAULT_RETRY, 'node', recheck, async (node) => {
      written = compute(node);
      if (!written) return undefined;
      // Only the conditions that change: they merge by type, so the others stay as the API server
      // holds them, byte for byte, as upstream's PUT of the node it decoded leaves them. Sending them
      // back as decoded would rewrite a message whose bytes are not UTF-8 (shown as U+FFFD; issue 53).
      const changed = written.filter((c) => !nodeConditionsEqual(getCondition(node.conditions, c.type), c));
      if (changed.length === 0) return undefined;
      const conditions = changed.map(nodeConditionToWire);
      return this.#clients.core.patchNodeStatus(
        { name, body: { metadata: { resourceVersion: node.resourceVersion }, status: { conditions } } },
        STRATEGIC,
      );
    });
    return r.result === 'written' ? { result: 'written', written, node: r.node } : { result: r.result, node: r.node };
  }

  /**
   * Sets a pod's Ready condition to False (lastTransitionTime = now) unless the cached pod shows it
   * already is, with a strategic-merge status patch guarded by the pod's UID (see
   * src/kube/podstatus.ts for why not resourceVersion: the taint manager writes the same pods'
   * conditions at the same moment).
   * Mirrors `MarkPodsNotReady` in `controller_utils.go` for one pod.
   * @param recheck the caller's decision taken again right before the patch is sent.
   * @returns `'written'`, `'unchanged'` (no Ready condition, already False, or on another node), or
   *   `'gone'` (deleted, or replaced by a pod of the same name).
   * @throws a `FencedError`, a `NotCalledForError` (`recheck` withheld the patch) or any other API
   *   error (the caller retries on its next pass).
   */
  async markPodNotReady(pod: Pod, nodeName: string, recheck?: WriteRecheck): Promise<WriteResult> {
    if (pod.nodeName !== nodeName) return 'unchanged';
    const ready = getCondition(pod.conditions, 'Ready');
    if (!ready || ready.status === 'False') return 'unchanged';
    const next: PodCondition = { ...ready, status: 'False', lastTransitionTime: this.#clock.now() };
    return patchPodConditionsByUid(this.#clients, this.#writes, pod, [next], {}, 'pod', recheck);
  }

  /**
   * Legacy direct eviction of one pod (`--enable-taint-manager=false`): sets the pod status reason
   * `NodeLost` with upstream's message, then deletes the pod gracefully with a UID precondition, so
   * a recreated pod of the same name is never hit.
   * Mirrors `DeletePods` and `SetPodTerminationReason` in 1.20's `pkg/controller/util/node/controller_utils.go`.
   * @param recheck the caller's decision taken again right before each of the two writes is sent.
   * @returns `'written'` when the delete was accepted, `'gone'` when the pod (with that UID) no longer
   *   exists: 404, or the UID precondition failed — 409 from the delete, 422 "metadata.uid" from the
   *   status patch (a pod recreated under the same name; retrying would fail forever).
   * @throws a `NotCalledForError` (`recheck` withheld a write), or other API errors.
   */
  async evictPodLegacy(pod: Pod, nodeName: string, recheck?: WriteRecheck): Promise<WriteResult> {
    try {
      await this.#writes.schedule(
        () =>
        this.#clients.core.patchNamespacedPodStatus(
          {
            namespace: pod.namespace,
            name: pod.name,
            body: {
              metadata: { uid: pod.uid },
              status: { reason: 'NodeLost', message: `Node ${nodeName} which was running pod ${pod.name} is unresponsive` },
            },
          },
          MERGE,
        ),
        'pod',
        recheck,
      );
      await this.#writes.schedule(
        () => {
          this.#own?.notePodDelete(pod.uid);
          return this.#clients.core.deleteNamespacedPod({ namespace: pod.namespace, name: pod.name, body: { preconditions: { uid: pod.uid } } });
        },
        'pod',
        recheck,
      );
      return 'written';
    } catch (err) {
      if (isNotFound(err) || isConflict(err) || isUidMismatch(err)) return 'gone';
      throw err;
    }
  }

  /**
   * Adds or updates node labels (never removes any) in a resourceVersion-guarded merge patch, retried
   * on conflict. Used for upstream's `reconcileNodeLabels` (beta os/arch twins).
   * Mirrors `AddOrUpdateLabelsOnNode` in `pkg/controller/controller_utils.go`.
   * @param compute returns the labels to set given the node as read, or `undefined` when none are needed.
   * @param recheck the caller's decision taken again right before each patch is sent.
   * @returns `'written'`, `'unchanged'` or `'gone'`.
   * @throws after 5 conflicts, a `NotCalledForError` (`recheck` withheld the patch), or on any other API error.
   */
  async patchNodeLabels(
    name: string,
    cached: Node | undefined,
    compute: (node: Node) => Record<string, string> | undefined,
    recheck?: WriteRecheck,
  ): Promise<WriteResult> {
    const r = await this.#nodeWrite(name, cached, DEFAULT_RETRY, 'node', recheck, async (node) => {
      const labels = compute(node);
      if (!labels) return undefined;
      return this.#clients.core.patchNode({ name, body: { metadata: { resourceVersion: node.resourceVersion, labels } } }, MERGE);
    });
    return r.result;
  }

  /**
   * The shared shape of every node write: one write per node at a time (our own writers never
   * race each other into 409s), starting from the newest copy we know — the informer's, or the
   * one our own last patch returned, which is newer for the few milliseconds until the watch
   * delivers it — and, after a 409, from a fresh GET.
   * @param priority the write's place in the throttle's order.
   * @param recheck run by the throttle right before each attempt (a reason: not sent, `NotCalledForError`).
   * @param attempt returns the API's response to its patch, or `undefined` when nothing needs writing.
   */
  async #nodeWrite(
    name: string,
    cached: Node | undefined,
    backoff: Backoff,
    priority: WritePriority,
    recheck: WriteRecheck | undefined,
    attempt: (node: Node) => Promise<unknown>,
  ): Promise<{ result: WriteResult; node?: Node }> {
    const prev = this.#locks.get(name) ?? Promise.resolve();
    let release: () => void = () => undefined;
    const mine = new Promise<void>((r) => (release = r));
    const chained = prev.then(() => mine);
    this.#locks.set(name, chained);
    await prev;
    try {
      const latest = this.#latest.get(name);
      let hint = newerNode(cached, latest);
      // Once the cache has caught up with our own last write (or lost the node), the remembered response is dropped.
      if (latest !== undefined && (hint !== latest || cached === undefined)) this.#latest.delete(name);
      return await retryOnConflict(
        async () => {
          const node = hint ?? (await this.getNode(name));
          hint = undefined;
          if (!node) return { result: 'gone' as const };
          const response = await this.#writes.schedule(() => attempt(node), priority, recheck);
          if (response === undefined) return { result: 'unchanged' as const, node };
          const updated = toNode(response) ?? node;
          this.#latest.set(name, updated);
          return { result: 'written' as const, node: updated };
        },
        { clock: this.#clock, backoff },
      );
    } catch (err) {
      if (isNotFound(err)) return { result: 'gone' };
      throw err;
    } finally {
      release();
      // The remembered response outlives the lock: a write that follows before the watch delivers
      // ours (under load, hundreds of ms) would otherwise start from the stale cached copy and pay
      // a 409 and a GET; that made the NoExecute taint after an Unknown write three round trips.
      if (this.#locks.get(name) === chained) this.#locks.delete(name);
    }
  }
}

/**
 * The newer of two copies of a node by resourceVersion. resourceVersions are opaque; when either is
 * not a number the cached copy wins. Only a hint: a wrong guess costs one 409 and a fresh GET.
 */
function newerNode(cached: Node | undefined, written: Node | undefined): Node | undefined {
  if (!cached || !written || cached.uid !== written.uid) return cached ?? written;
  try {
    return BigInt(written.resourceVersion) > BigInt(cached.resourceVersion) ? written : cached;
  } catch {
    return cached;
  }
}
