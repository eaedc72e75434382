/**
 * Shadow mode's overlay: the cluster as the shadow would have left it. The shadow's would-be writes
 * (taints, node conditions and labels, pod conditions, pod and VolumeAttachment deletions) are kept
 * here and applied over the informers' real objects, so the shadow's own state machine advances as
 * if they had landed: after "would taint", the taint eviction controller sees the taint and later
 * decides "would delete pod"; a would-be-deleted pod disappears from every cache view and is not
 * deleted again.
 *
 * Running beside kube-controller-manager, the real objects also carry *its* writes. Seen as they
 * are, those would pre-empt the shadow (a node kube-controller-manager already tainted is never
 * "would taint"), and the comparison would say nothing. So on the fields the node controllers own,
 * the overlay shows the shadow's own version of the node, not kube-controller-manager's:
 * - the node controller's taint keys ({@link SHADOW_OWNED_TAINT_KEYS}): the values they had when the
 *   shadow first saw the node, then only the shadow's own changes;
 * - node conditions written by a node controller (reason `NodeStatusUnknown` /
 *   `NodeStatusNeverUpdated`): replaced by the last condition of that type the kubelet posted, unless
 *   the shadow itself would have written one; the shadow's own condition gives way once the kubelet
 *   posts a newer heartbeat, or renews its Lease {@link KUBELET_STATUS_UPDATE_MS} after the write
 *   (a live kubelet overwrites a controller's Unknown within its status period; beside no real
 *   controller, nothing in the cluster shows the Unknown, so the kubelet has nothing to overwrite);
 * - a pod that a taint manager or the pod GC is deleting (`deletionTimestamp` with a
 *   `DisruptionTarget` condition of reason `DeletionByTaintManager` / `DeletionByPodGC` that the
 *   shadow did not write) is shown as not terminating.
 * Other entries drop once the real cluster has caught up (a pod's would-be condition once the real
 * pod has that status; deletions once the real object is gone).
 *
 * {@link ShadowView} wraps an informer with the overlay: same reads and events, with would-be
 * changes applied and synthetic `update`/`delete` events when the overlay changes an object.
 *
 * Not upstream: kube-controller-manager has no dry-run mode.
 */
import type { Informer } from '../kube/informer.js';
import type { Node, NodeCondition, PodCondition, Taint, VolumeAttachment } from '../kube/objects.js';
import { taintsEqual } from '../kube/taints.js';
import { CONDITION_TAINT_KEYS } from '../nodelifecycle/taints.js';
import { REASON_NODE_STATUS_NEVER_UPDATED, REASON_NODE_STATUS_UNKNOWN } from '../nodelifecycle/health.js';
import { DELETION_BY_TAINT_MANAGER_REASON, DISRUPTION_TARGET_CONDITION_TYPE } from '../tainteviction/events.js';

/** The public surface of an {@link Informer} the controllers' wiring uses; {@link ShadowView} implements it too. */
export type InformerLike<T> = Pick<
  Informer<T>,
  'start' | 'stop' | 'isWatching' | 'blindForMs' | 'hasSynced' | 'waitForSync' | 'get' | 'list' | 'keys' | 'byIndex' | 'on' | 'stats'
>;

/**
 * Taint keys the node lifecycle controller writes, with either effect (the NoSchedule pass's keys
 * include `unreachable` and `not-ready`, the NoExecute ones): the shadow keeps its own values of them.
 */
export const SHADOW_OWNED_TAINT_KEYS: ReadonlySet<string> = CONDITION_TAINT_KEYS;

/**
 * The kubelet's `nodeStatusUpdateFrequency` default (10 s), milliseconds: a live kubelet that finds a
 * controller's Unknown on its node replaces it within this long (`tryUpdateNodeStatus` compares with
 * the node it GETs).
 */
export const KUBELET_STATUS_UPDATE_MS = 10_000;

/** Node condition reasons only a node controller writes (`tryUpdateNodeHealth`). */
const CONTROLLER_CONDITION_REASONS: ReadonlySet<string> = new Set([REASON_NODE_STATUS_UNKNOWN, REASON_NODE_STATUS_NEVER_UPDATED]);

/** `DisruptionTarget` reasons of the deletions the shadow's controllers make (taint manager, pod GC). */
const CONTROLLER_DELETION_REASONS: ReadonlySet<string> = new Set([DELETION_BY_TAINT_MANAGER_REASON, 'DeletionByPodGC']);

/** What a pod view needs: the slim {@link Pod}, or the node affinity enforcer's own pod type. */
export interface PodLike {
  namespace: string;
  name: string;
  uid: string;
  deletionTimestamp?: number;
  conditions?: readonly PodCondition[];
}

interface NodeShadow {
  uid: string;
  /** The shadow's values of the owned taint keys. */
  ownedTaints: readonly Taint[];
  /** The last condition of each type that the kubelet (not a node controller) posted. */
  kubelet: Map<string, NodeCondition>;
  /** The shadow's own conditions, with the kubelet heartbeat they were decided on and when (epoch ms). */
  written: Map<string, { condition: NodeCondition; heartbeatMs: number; atMs: number }>;
  /** The shadow's would-be labels. */
  labels: Record<string, string>;
}

interface PodShadow {
  /** Would-be conditions by type. */
  conditions: Map<string, PodCondition>;
  /** Set when the shadow would have deleted (or evicted) the pod: epoch ms. */
  deletedAtMs?: number;
}

type Kind = 'node' | 'pod' | 'volumeAttachment';

/**
 * The would-be state of one shadow process (see the module comment). Mutators are called by the
 * dry-run writers (src/shadow/writers.ts); each notifies the views so they emit events.
 * Not upstream.
 */
export class ShadowOverlay {
  readonly #nodes = new Map<string, NodeShadow>();
  /** By pod UID. */
  readonly #pods = new Map<string, PodShadow>();
  /** Deleted VolumeAttachments by UID. */
  readonly #vas = new Set<string>();
  readonly #listeners = new Set<(kind: Kind, key: string) => void>();
  #leaseRenewMs: (nodeName: string) => number | undefined = () => undefined;

  /** Where the node heartbeat Leases' `renewTime` (epoch ms) comes from (src/shadow/mode.ts wires the Lease informer). */
  useLeaseRenewals(fn: (nodeName: string) => number | undefined): void {
    this.#leaseRenewMs = fn;
  }

  /** Calls `fn(kind, key)` after every change (key: node name, `ns/name`, attachment name). @returns unsubscribe. */
  onChange(fn: (kind: Kind, key: string) => void): () => void {
    this.#listeners.add(fn);
    return () => void this.#listeners.delete(fn);
  }

  #changed(kind: Kind, key: string): void {
    for (const fn of this.#listeners) fn(kind, key);
  }

  #nodeState(real: Node): NodeShadow {
    let st = this.#nodes.get(real.name);
    if (!st || st.uid !== real.uid) {
      st = { uid: real.uid, ownedTaints: real.taints.filter((t) => SHADOW_OWNED_TAINT_KEYS.has(t.key)), kubelet: new Map(), written: new Map(), labels: {} };
      this.#nodes.set(real.name, st);
    }
    for (const c of real.conditions) if (!CONTROLLER_CONDITION_REASONS.has(c.reason ?? '')) st.kubelet.set(c.type, c);
    const renewedMs = this.#leaseRenewMs(real.name) ?? 0;
    for (const [type, w] of st.written) {
      // The kubelet posted after the shadow's write, or is alive long enough to have: a real write
      // would have been overwritten.
      if ((st.kubelet.get(type)?.lastHeartbeatTime ?? 0) > w.heartbeatMs || renewedMs >= w.atMs + KUBELET_STATUS_UPDATE_MS) st.written.delete(type);
    }
    for (const [k, v] of Object.entries(st.labels)) if (real.labels[k] === v) delete st.labels[k];
    return st;
  }

  /**
   * The node as the shadow would see it.
   * @param real the informer's (or a live read's) copy.
   * @returns `real` itself when nothing differs, else a new object. Never throws.
   */
  node(real: Node): Node {
    const st = this.#nodeState(real);
    const realOwned = real.taints.filter((t) => SHADOW_OWNED_TAINT_KEYS.has(t.key));
    const sameTaints = realOwned.length === st.ownedTaints.length && realOwned.every((t, i) => st.ownedTaints[i] !== undefined && taintsEqual(t, st.ownedTaints[i]));
    let conditionsChanged = false;
    const conditions = real.conditions.map((c) => {
      const mine = st.written.get(c.type)?.condition ?? (CONTROLLER_CONDITION_REASONS.has(c.reason ?? '') ? st.kubelet.get(c.type) : undefined);
      if (mine === undefined || mine === c) return c;
      conditionsChanged = true;
      return mine;
    });
    for (const [type, w] of st.written) {
      if (!real.conditions.some((c) => c.type === type)) {
        conditions.push(w.condition);
        conditionsChanged = true;
      }
    }
    const labelsChanged = Object.keys(st.labels).length > 0;
    if (sameTaints && !conditionsChanged && !labelsChanged) return real;
    return {
      ...real,
      taints: sameTaints ? real.taints : [...real.taints.filter((t) => !SHADOW_OWNED_TAINT_KEYS.has(t.key)), ...st.ownedTaints],
      conditions: conditionsChanged ? conditions : real.conditions,
      labels: labelsChanged ? { ...real.labels, ...st.labels } : real.labels,
    };
  }

  /**
   * Records the node's would-be taints.
   * @param base the view the decision was made on.
   * @param next its complete would-be taint list.
   */
  setNodeTaints(base: Node, next: readonly Taint[]): void {
    const st = this.#nodeState(base);
    st.ownedTaints = next.filter((t) => SHADOW_OWNED_TAINT_KEYS.has(t.key));
    this.#changed('node', base.name);
  }

  /**
   * Records would-be node conditions (merged by type, as the strategic-merge status patch does).
   * @param base the view the decision was made on (its kubelet heartbeats decide when they give way).
   * @param atMs when the write would have been sent, epoch ms.
   */
  setNodeConditions(base: Node, written: readonly NodeCondition[], atMs: number): void {
    const st = this.#nodeState(base);
    for (const c of written) st.written.set(c.type, { condition: c, heartbeatMs: st.kubelet.get(c.type)?.lastHeartbeatTime ?? 0, atMs });
    this.#changed('node', base.name);
  }

  /** Records would-be labels (added or updated, never removed). */
  setNodeLabels(base: Node, labels: Readonly<Record<string, string>>): void {
    Object.assign(this.#nodeState(base).labels, labels);
    this.#changed('node', base.name);
  }

  /** Forgets a node the cluster deleted. */
  forgetNode(name: string): void {
    this.#nodes.delete(name);
  }

  /**
   * The pod as the shadow would see it.
   * @returns `undefined` when the shadow would have deleted it; `real` itself when nothing differs.
   */
  pod<P extends PodLike>(real: P): P | undefined {
    const st = this.#pods.get(real.uid);
    if (st?.deletedAtMs !== undefined) return undefined;
    let conditions = real.conditions;
    let out = real;
    if (conditions !== undefined && real.deletionTimestamp !== undefined && !st?.conditions.has(DISRUPTION_TARGET_CONDITION_TYPE)) {
      const dt = conditions.find((c) => c.type === DISRUPTION_TARGET_CONDITION_TYPE && c.status === 'True' && CONTROLLER_DELETION_REASONS.has(c.reason ?? ''));
      if (dt) {
        // Another controller's eviction: the shadow decides on the pod as if it were still running.
        conditions = conditions.filter((c) => c !== dt);
        const { deletionTimestamp: _d, ...rest } = real as P & { deletionGracePeriodSeconds?: number };
        delete (rest as { deletionGracePeriodSeconds?: number }).deletionGracePeriodSeconds;
        out = { ...rest, conditions } as unknown as P;
      }
    }
    if (!st || st.conditions.size === 0 || conditions === undefined) return out;
    for (const [type, c] of st.conditions) {
      const r = real.conditions?.find((x) => x.type === type);
      // Caught up: the real pod has that status now.
      if (r?.status === c.status) st.conditions.delete(type);
    }
    if (st.conditions.size === 0) return out;
    const merged = conditions.map((c) => st.conditions.get(c.type) ?? c);
    for (const [type, c] of st.conditions) if (!merged.some((m) => m.type === type)) merged.push(c);
    return { ...out, conditions: merged };
  }

  /** Records a would-be pod condition. */
  setPodCondition(pod: PodLike, condition: PodCondition): void {
    const st = this.#podState(pod.uid);
    st.conditions.set(condition.type, condition);
    this.#changed('pod', `${pod.namespace}/${pod.name}`);
  }

  /** Records a would-be deletion (or eviction) of the pod with this UID. */
  deletePod(pod: Pick<PodLike, 'namespace' | 'name' | 'uid'>, atMs: number): void {
    this.#podState(pod.uid).deletedAtMs = atMs;
    this.#changed('pod', `${pod.namespace}/${pod.name}`);
  }

  /** True when the shadow would have deleted the pod with this UID. */
  podDeleted(uid: string): boolean {
    return this.#pods.get(uid)?.deletedAtMs !== undefined;
  }

  /** Forgets a pod the cluster deleted. */
  forgetPod(uid: string): void {
    this.#pods.delete(uid);
  }

  #podState(uid: string): PodShadow {
    let st = this.#pods.get(uid);
    if (!st) {
      st = { conditions: new Map() };
      this.#pods.set(uid, st);
    }
    return st;
  }

  /** The attachment as the shadow would see it: `undefined` once the shadow would have deleted it. */
  volumeAttachment(real: VolumeAttachment): VolumeAttachment | undefined {
    return this.#vas.has(real.uid) ? undefined : real;
  }

  /** Records a would-be VolumeAttachment deletion (a detach). */
  deleteVolumeAttachment(va: Pick<VolumeAttachment, 'name' | 'uid'>): void {
    this.#vas.add(va.uid);
    this.#changed('volumeAttachment', va.name);
  }

  /** Forgets an attachment the cluster deleted. */
  forgetVolumeAttachment(uid: string): void {
    this.#vas.delete(uid);
  }

  /** Entries held, for `/debug/state` and tests. */
  size(): { nodes: number; pods: number; volumeAttachments: number } {
    return { nodes: this.#nodes.size, pods: this.#pods.size, volumeAttachments: this.#vas.size };
  }

  /**
   * Wraps a node informer. @returns the overlaid view.
   */
  nodeView(source: InformerLike<Node>): ShadowView<Node> {
    return new ShadowView(this, 'node', source, (n) => n.name, (n) => this.node(n), (n) => this.forgetNode(n.name));
  }

  /** Wraps a pod informer (the shared slim pods, or the node affinity enforcer's). @returns the overlaid view. */
  podView<P extends PodLike>(source: InformerLike<P>): ShadowView<P> {
    return new ShadowView(this, 'pod', source, (p) => `${p.namespace}/${p.name}`, (p) => this.pod(p), (p) => this.forgetPod(p.uid));
  }

  /** Wraps a VolumeAttachment informer. @returns the overlaid view. */
  volumeAttachmentView(source: InformerLike<VolumeAttachment>): ShadowView<VolumeAttachment> {
    return new ShadowView(this, 'volumeAttachment', source, (v) => v.name, (v) => this.volumeAttachment(v), (v) => this.forgetVolumeAttachment(v.uid));
  }
}

type Handler = (...args: never[]) => void;

/**
 * An informer seen through the overlay: reads return overlaid objects (would-be-deleted ones are
 * absent), events carry overlaid objects, and an overlay change of an object is delivered as an
 * `update` (or a `delete`, for a would-be deletion) on the next microtask, as a watch event follows
 * a real write. Lifecycle calls go to the real informer.
 * @typeParam T the slim object type.
 */
export class ShadowView<T> implements InformerLike<T> {
  readonly #source: InformerLike<T>;
  readonly #apply: (o: T) => T | undefined;
  readonly #handlers = { add: new Set<(o: T) => void>(), update: new Set<(a: T, b: T) => void>(), delete: new Set<(o: T) => void>() };
  /** What the handlers last saw of each key. */
  readonly #seen = new Map<string, T>();

  /**
   * @param overlay whose changes of `kind` this view delivers.
   * @param keyOf the informer's cache key.
   * @param apply the overlay for one object.
   * @param forget drops overlay state when the real object is deleted.
   */
  constructor(overlay: ShadowOverlay, kind: Kind, source: InformerLike<T>, keyOf: (o: T) => string, apply: (o: T) => T | undefined, forget: (o: T) => void) {
    this.#source = source;
    this.#apply = apply;
    source.on('add', (o) => this.#deliver(keyOf(o), apply(o)));
    source.on('update', (_old, o) => this.#deliver(keyOf(o), apply(o)));
    source.on('delete', (o) => {
      const key = keyOf(o);
      const seen = this.#seen.get(key);
      this.#seen.delete(key);
      forget(o);
      if (seen !== undefined) for (const h of this.#handlers.delete) h(seen);
    });
    overlay.onChange((k, key) => {
      if (k !== kind) return;
      queueMicrotask(() => {
        const real = this.#source.get(key);
        this.#deliver(key, real === undefined ? undefined : this.#apply(real));
      });
    });
  }

  #deliver(key: string, next: T | undefined): void {
    const seen = this.#seen.get(key);
    if (next === undefined) {
      if (seen === undefined) return;
      this.#seen.delete(key);
      for (const h of this.#handlers.delete) h(seen);
      return;
    }
    if (seen === next) return;
    this.#seen.set(key, next);
    if (seen === undefined) for (const h of this.#handlers.add) h(next);
    else for (const h of this.#handlers.update) h(seen, next);
  }

  /** See {@link Informer.start}. */
  start(): Promise<void> {
    return this.#source.start();
  }
  /** See {@link Informer.stop}. */
  stop(): void {
    this.#source.stop();
  }
  /** See {@link Informer.isWatching}. */
  isWatching(): boolean {
    return this.#source.isWatching();
  }
  /** See {@link Informer.blindForMs}; milliseconds. */
  blindForMs(): number {
    return this.#source.blindForMs();
  }
  /** See {@link Informer.hasSynced}. */
  hasSynced(): boolean {
    return this.#source.hasSynced();
  }
  /** See {@link Informer.waitForSync}. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#source.waitForSync(signal);
  }
  /** The overlaid object with this key, or `undefined` (also when the shadow would have deleted it). */
  get(key: string): T | undefined {
    const real = this.#source.get(key);
    return real === undefined ? undefined : this.#apply(real);
  }
  /** Every overlaid object (would-be-deleted ones left out). */
  list(): T[] {
    return this.#overlaid(this.#source.list());
  }
  /** Keys of the real cache (a would-be-deleted object's key included). */
  keys(): string[] {
    return this.#source.keys();
  }
  /** See {@link Informer.byIndex}, overlaid. @throws {Error} for an unknown index. */
  byIndex(index: string, value: string): T[] {
    return this.#overlaid(this.#source.byIndex(index, value));
  }
  /** See {@link Informer.stats} (of the real informer). */
  stats(): ReturnType<Informer<T>['stats']> {
    return this.#source.stats();
  }

  #overlaid(real: readonly T[]): T[] {
    const out: T[] = [];
    for (const o of real) {
      const v = this.#apply(o);
      if (v !== undefined) out.push(v);
    }
    return out;
  }

  /** See {@link Informer.on}: `add`/`update`/`delete` carry overlaid objects; `resync` and `watching` are the real informer's. */
  on(event: 'add', handler: (obj: T) => void): () => void;
  on(event: 'update', handler: (oldObj: T, newObj: T) => void): () => void;
  on(event: 'delete', handler: (obj: T) => void): () => void;
  on(event: 'resync', handler: () => void): () => void;
  on(event: 'watching', handler: (watching: boolean) => void): () => void;
  on(event: 'add' | 'update' | 'delete' | 'resync' | 'watching', handler: Handler): () => void {
    if (event === 'resync') return this.#source.on('resync', handler as () => void);
    if (event === 'watching') return this.#source.on('watching', handler as (w: boolean) => void);
    const set = this.#handlers[event] as Set<Handler>;
    set.add(handler);
    return () => void set.delete(handler);
  }
}
