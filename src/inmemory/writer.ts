/**
 * The recording writer: every controller's writes interface over an in-memory cluster. Each call is
 * logged ({@link RecordingWriter.calls}, reads included, in the order made), each write that lands
 * or fails is recorded ({@link RecordingWriter.writes}), and each applies to the cluster's objects
 * as the API server would (the same taint arithmetic, `applyTaintSwap`, as the real writer), after
 * which the cluster notifies its handlers as an informer would. Tests inject failures, hold writes
 * open, or lose them through the hooks. Pure model over the injected clock: no I/O.
 *
 * Mirrors, as doubles: src/nodelifecycle/writer.ts, src/tainteviction/writer.ts,
 * src/podgc/writer.ts and src/volumes/writer.ts.
 */
import type { Node, Pod, PodCondition, Taint, VolumeAttachment } from '../kube/objects.js';
import { getCondition, podKey } from '../kube/objects.js';
import { formatTaint } from '../kube/taints.js';
import { LiveReadError } from '../kube/reads.js';
import { assertStillCalledFor } from '../kube/throttle.js';
import type { NodeLifecycleWrites } from '../nodelifecycle/controller.js';
import { conditionTaintDiff, fencedTaintSwap } from '../nodelifecycle/taints.js';
import type { TaintEvictionWrites } from '../tainteviction/controller.js';
import { hasDisruptionTarget } from '../tainteviction/writer.js';
import { taintEvictionDisruptionCondition } from '../tainteviction/events.js';
import type { PodGCWrites } from '../podgc/controller.js';
import type { ForceDetachWrites } from '../volumes/controller.js';
import type { Clock } from '../util/clock.js';
import type { PodDeletion, TimelineEntry } from './types.js';

/** The cluster a {@link RecordingWriter} applies to (an `InMemoryCluster`). */
export interface WritableCluster {
  readonly nodes: ReadonlyMap<string, Node>;
  readonly pods: ReadonlyMap<string, Pod>;
  readonly volumeAttachments: ReadonlyMap<string, VolumeAttachment>;
  readonly timeline: TimelineEntry[];
  elapsed(): number;
  putNode(node: Node): Node;
  putPod(pod: Pod): Pod;
  deletePod(pod: Pod, how: PodDeletion): void;
  removeVolumeAttachment(name: string): void;
  podsOnNode(node: string): Pod[];
  recordTaints(node: string, before: readonly Taint[], after: readonly Taint[], by: string): void;
}

/** Every method of the four controllers' writes interfaces. */
export type WriteMethod = keyof NodeLifecycleWrites | keyof TaintEvictionWrites | keyof PodGCWrites | keyof ForceDetachWrites;

/**
 * One call to the writer: the method, its object (node name, `namespace/name`, or VolumeAttachment
 * name), when (epoch ms); for `swapNodeTaints`, `asked` is the taints asked for, as
 * `+key:effect -key:effect` (not the condition taints).
 */
export interface WriteCall {
  method: WriteMethod;
  target: string;
  atMs: number;
  asked?: string;
}

/** What a recorded write did. */
export type WriteKind = 'taint' | 'status' | 'podNotReady' | 'evict' | 'labels' | 'condition' | 'delete' | 'forceDelete' | 'detach';

/**
 * One write that landed (or failed: `failed` set, `detail` 'failed'). `atMs`: epoch milliseconds.
 * `detail` by kind: taint `+key:effect -key:effect` (the asked-for taints, not the condition
 * taints), status the written Ready status, podNotReady and evict the node, labels the JSON of the
 * labels, others ''. `uid` for pod and VolumeAttachment writes; `condition` for a force deletion
 * whose `Failed` patch carries one (the orphan pass's `DisruptionTarget`; no other pass writes one).
 */
export interface RecordedWrite {
  kind: WriteKind;
  target: string;
  atMs: number;
  detail: string;
  uid?: string;
  condition?: PodCondition;
  failed?: true;
}

const BY_NODE_LIFECYCLE = 'node-lifecycle-controller';
const BY_TAINT_EVICTION = 'taint-eviction-controller';
const BY_POD_GC = 'pod-garbage-collector-controller';

/**
 * The writes of every controller over one cluster. The hooks are read at each call, so a test may
 * set them at any time:
 * - `fail(call)`: an error to throw instead of the write (undefined: no failure). It is asked when
 *   the mutating request would reach the API: at the start of each call, except for
 *   `forceDeletePod`, whose recheck (a read) comes first, and the taint eviction controller's two
 *   writes, where it is asked after their gate and send-time recheck. A failure is recorded in
 *   {@link writes}.
 * - `gate(call)`: awaited, when it returns a promise, before `updateNodeConditions`,
 *   `swapNodeTaints`, `markPodNotReady`, `addDisruptionCondition` or `deletePod` reaches the API (holds a write open
 *   mid-flight, as a wait for a token in the real throttle would); returning `undefined` lets the
 *   call through in the same tick. A taint eviction write's recheck (src/kube/throttle.ts
 *   `WriteRecheck`) runs after the gate, as the real throttle runs it after the wait; a write it
 *   no longer calls for throws `NotCalledForError` and is neither failed nor recorded.
 * - `lose(call)`: true makes `updateNodeConditions` answer 'unchanged' without writing (a write
 *   that never lands).
 * - `failRead(call)`: an error to throw instead of a live read (`getNode`, `listPodsOnNode`,
 *   `getVolumeAttachment`; undefined: no failure), as a read the API server refuses or times out.
 * - `unreadable(resource, key)`: true for an object the API holds but the converters cannot parse
 *   (a malformed object): a live read of it throws `LiveReadError` `unparsable`, as the real readers
 *   do (src/kube/reads.ts), `listPodsOnNode` counts such a pod as `unparsable` instead of returning
 *   it, and `forceDeletePod`'s re-read of such a pod throws the same.
 */
export class RecordingWriter {
  /**
   * Whether {@link calls} and {@link writes} are kept: on for tests; off for a what-if, where a
   * large cluster's hundreds of thousands of writes would only cost memory (the timeline says it).
   */
  recording = true;
  /** Every call made, in order (reads too), before it was applied. */
  readonly calls: WriteCall[] = [];
  /** Every write that landed or failed, in order. */
  readonly writes: RecordedWrite[] = [];
  fail: ((call: WriteCall) => unknown) | undefined;
  gate: ((call: WriteCall) => Promise<void> | undefined) | undefined;
  lose: ((call: WriteCall) => boolean) | undefined;
  failRead: ((call: WriteCall) => unknown) | undefined;
  unreadable: ((resource: 'node' | 'pod' | 'volumeattachment', key: string) => boolean) | undefined;
  readonly #cluster: WritableCluster;
  readonly #clock: Clock;

  /** @param cluster the objects the writes apply to. @param clock the run's clock (epoch ms). */
  constructor(cluster: WritableCluster, clock: Clock) {
    this.#cluster = cluster;
    this.#clock = clock;
  }

  /** The node lifecycle controller's writes (src/nodelifecycle/writer.ts `NodeLifecycleWriter`). */
  nodeLifecycleWrites(): NodeLifecycleWrites {
    const c = this.#cluster;
    return {
      swapNodeTaints: async (name, toAdd, toRemove, _cached, opts = {}) => {
        const call = this.#call('swapNodeTaints', name, 'taint');
        call.asked = [...toAdd.map((t) => `+${t.key}:${t.effect}`), ...toRemove.map((t) => `-${t.key}:${t.effect}`)].join(' ');
        const held = this.gate?.(call);
        if (held) await held;
        // As the real writer: the recheck and then the fence are read right before the write, after
        // any hold, and the node is read after them (reading the fence may start the stop, which
        // removes taints first).
        assertStillCalledFor(opts.recheck);
        const fence = opts.noExecuteFence?.() ?? false;
        const node = c.nodes.get(name);
        if (!node) return 'gone';
        const d = opts.conditionTaints ? conditionTaintDiff(node) : undefined;
        if (d) opts.onConditionTaints?.(d.toAdd, d.toRemove);
        const swap = fencedTaintSwap(node.taints, [...toAdd, ...(d?.toAdd ?? [])], [...toRemove, ...(d?.toRemove ?? [])], this.#clock.now(), fence);
        const next = swap.next;
        const fenced = swap.refused.length > 0;
        if (next === undefined) return fenced ? 'fenced' : 'unchanged';
        const refused = new Set(swap.refused.map((t) => `${t.key}:${t.effect}`));
        const asked = toAdd.filter((t) => !refused.has(`${t.key}:${t.effect}`));
        const detail = [...asked.map((t) => `+${t.key}:${t.effect}`), ...toRemove.map((t) => `-${t.key}:${t.effect}`)].join(' ');
        this.#record('taint', name, detail);
        c.recordTaints(name, node.taints, next, BY_NODE_LIFECYCLE);
        c.putNode({ ...node, taints: next });
        return fenced ? 'fenced' : 'written';
      },
      updateNodeConditions: async (name, cached, compute, recheck) => {
        const call = this.#call('updateNodeConditions', name, 'status');
        const held = this.gate?.(call);
        if (held) await held;
        assertStillCalledFor(recheck);
        const node = c.nodes.get(name) ?? cached;
        if (!node || !c.nodes.has(name)) return { result: 'gone' };
        if (this.lose?.(call)) return { result: 'unchanged', node };
        const written = compute(node);
        if (!written) return { result: 'unchanged', node };
        const byType = new Map(node.conditions.map((x) => [x.type, x]));
        for (const x of written) byType.set(x.type, x);
        const before = getCondition(node.conditions, 'Ready');
        const after = getCondition(written, 'Ready');
        if (after && before?.status !== after.status) {
          c.timeline.push({ atMs: c.elapsed(), kind: 'condition', node: name, from: before?.status ?? '-', to: after.status, ...(after.reason ? { reason: after.reason } : {}) });
        }
        const updated = c.putNode({ ...node, conditions: [...byType.values()] });
        this.#record('status', name, after?.status ?? '');
        return { result: 'written', written, node: updated };
      },
      markPodNotReady: async (pod, nodeName, recheck) => {
        const key = podKey(pod);
        const call = this.#call('markPodNotReady', key, 'podNotReady');
        const held = this.gate?.(call);
        if (held) await held;
        assertStillCalledFor(recheck);
        const cur = c.pods.get(key);
        if (!cur || cur.uid !== pod.uid) return 'gone';
        if (cur.nodeName !== nodeName) return 'unchanged';
        const ready = getCondition(cur.conditions, 'Ready');
        if (!ready || ready.status === 'False') return 'unchanged';
        this.#record('podNotReady', key, nodeName);
        c.timeline.push({ atMs: c.elapsed(), kind: 'pod-not-ready', node: nodeName, pod: key });
        c.putPod({ ...cur, conditions: cur.conditions.map((x) => (x.type === 'Ready' ? { ...x, status: 'False', lastTransitionTime: this.#clock.now() } : x)) });
        return 'written';
      },
      evictPodLegacy: async (pod, nodeName, recheck) => {
        const key = podKey(pod);
        this.#call('evictPodLegacy', key, 'evict');
        assertStillCalledFor(recheck);
        const cur = c.pods.get(key);
        if (!cur || cur.uid !== pod.uid) return 'gone';
        this.#record('evict', key, nodeName);
        c.deletePod(cur, { force: false, by: BY_NODE_LIFECYCLE, reason: `NodeLost: node ${nodeName} is unresponsive (legacy eviction)` });
        return 'written';
      },
      patchNodeLabels: async (name, cached, compute, recheck) => {
        this.#call('patchNodeLabels', name, 'labels');
        assertStillCalledFor(recheck);
        const node = c.nodes.get(name) ?? cached;
        if (!node || !c.nodes.has(name)) return 'gone';
        const labels = compute(node);
        if (!labels) return 'unchanged';
        this.#record('labels', name, JSON.stringify(labels));
        c.putNode({ ...node, labels: { ...node.labels, ...labels } });
        return 'written';
      },
      forgetNode: () => undefined,
    };
  }

  /** The taint eviction controller's writes (src/tainteviction/writer.ts). */
  taintEvictionWrites(): TaintEvictionWrites {
    const c = this.#cluster;
    return {
      addDisruptionCondition: async (namespace, name, uid, _cached, recheck) => {
        const key = `${namespace}/${name}`;
        const call = this.#log('addDisruptionCondition', key);
        const held = this.gate?.(call);
        if (held) await held;
        // As the real write path: decided again right before the write would reach the API.
        assertStillCalledFor(recheck);
        this.#failIfAsked(call, 'condition', uid);
        const cur = c.pods.get(key);
        if (!cur || cur.uid !== uid) return 'gone';
        if (hasDisruptionTarget(cur)) return 'unchanged';
        this.#record('condition', key, '', uid);
        c.putPod({ ...cur, conditions: [...cur.conditions, taintEvictionDisruptionCondition(this.#clock.now())] });
        return 'written';
      },
      deletePod: async (namespace, name, uid, recheck) => {
        const key = `${namespace}/${name}`;
        const call = this.#log('deletePod', key);
        const held = this.gate?.(call);
        if (held) await held;
        assertStillCalledFor(recheck);
        this.#failIfAsked(call, 'delete', uid);
        const cur = c.pods.get(key);
        if (!cur || cur.uid !== uid) return 'gone';
        this.#record('delete', key, '', uid);
        const taints = (c.nodes.get(cur.nodeName)?.taints ?? []).filter((t) => t.effect === 'NoExecute').map(formatTaint);
        c.deletePod(cur, { force: false, by: BY_TAINT_EVICTION, reason: `NoExecute taint(s) on the node: ${taints.join(', ') || '(none left)'}` });
        return 'deleted';
      },
    };
  }

  /** The pod garbage collector's writes (src/podgc/writer.ts). */
  podGCWrites(): PodGCWrites {
    const c = this.#cluster;
    return {
      getNode: async (name) => {
        this.#call('getNode', name);
        return c.nodes.get(name);
      },
      forceDeletePod: async (namespace, name, uid, recheck, sendCheck) => {
        const key = `${namespace}/${name}`;
        const call = this.#log('forceDeletePod', key);
        const cur = c.pods.get(key);
        if (!cur || cur.uid !== uid) return 'gone';
        if (this.unreadable?.('pod', key)) throw new LiveReadError('pod', key, 'unparsable');
        const plan = await recheck(cur);
        if (!plan) return 'skipped';
        assertStillCalledFor(sendCheck);
        this.#failIfAsked(call, 'forceDelete', uid);
        if (this.recording) this.writes.push({ kind: 'forceDelete', target: key, atMs: this.#clock.now(), detail: '', uid, ...(plan.condition ? { condition: plan.condition } : {}) });
        c.deletePod(cur, { force: true, by: BY_POD_GC, reason: plan.why });
        return 'deleted';
      },
    };
  }

  /** The forced-detach controller's writes (src/volumes/writer.ts). */
  forceDetachWrites(): ForceDetachWrites {
    const c = this.#cluster;
    return {
      getNode: async (name) => {
        this.#call('getNode', name);
        return c.nodes.get(name);
      },
      // The in-memory API and cache are one store: the live list is the cache's pods, none unparsable.
      listPodsOnNode: async (name) => {
        this.#call('listPodsOnNode', name);
        const all = c.podsOnNode(name);
        const pods = all.filter((p) => this.unreadable?.('pod', podKey(p)) !== true);
        return { pods, unparsable: all.length - pods.length };
      },
      getVolumeAttachment: async (name) => {
        this.#call('getVolumeAttachment', name);
        return c.volumeAttachments.get(name);
      },
      deleteVolumeAttachment: async (name, uid, recheck) => {
        this.#call('deleteVolumeAttachment', name, 'detach', uid);
        assertStillCalledFor(recheck);
        const va = c.volumeAttachments.get(name);
        if (!va || va.uid !== uid) return 'gone';
        this.#record('detach', name, '', uid);
        c.timeline.push({ atMs: c.elapsed(), kind: 'detach', node: va.nodeName, volumeAttachment: name, ...(va.persistentVolumeName ? { persistentVolume: va.persistentVolumeName } : {}) });
        c.removeVolumeAttachment(name);
        return 'deleted';
      },
    };
  }

  /** Logs the call, then throws the failure the `fail` hook asks for (recorded as a failed `kind` write). */
  #call(method: WriteMethod, target: string, kind?: WriteKind, uid?: string): WriteCall {
    const call = this.#log(method, target);
    if (kind) this.#failIfAsked(call, kind, uid);
    else {
      const error = this.failRead?.(call);
      if (error !== undefined) throw error;
      const resource = method === 'getNode' ? 'node' : method === 'getVolumeAttachment' ? 'volumeattachment' : undefined;
      if (resource && this.unreadable?.(resource, target)) throw new LiveReadError(resource, target, 'unparsable');
    }
    return call;
  }

  #log(method: WriteMethod, target: string): WriteCall {
    const call: WriteCall = { method, target, atMs: this.#clock.now() };
    if (this.recording) this.calls.push(call);
    return call;
  }

  #failIfAsked(call: WriteCall, kind: WriteKind, uid?: string): void {
    const error = this.fail?.(call);
    if (error === undefined) return;
    if (this.recording) this.writes.push({ kind, target: call.target, atMs: call.atMs, detail: 'failed', ...(uid !== undefined ? { uid } : {}), failed: true });
    throw error;
  }

  #record(kind: WriteKind, target: string, detail: string, uid?: string): void {
    if (this.recording) this.writes.push({ kind, target, atMs: this.#clock.now(), detail, ...(uid !== undefined ? { uid } : {}) });
  }
}
