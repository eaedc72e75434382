/**
 * Shadow mode's writers: the same interfaces the controllers take from their real writers
 * (src/nodelifecycle/writer.ts, src/tainteviction/writer.ts, src/podgc/writer.ts,
 * src/volumes/writer.ts, src/nodeaffinity/writer.ts) and the Event sink, but nothing is sent. Each
 * would-be write is recorded as a decision (src/shadow/decisions.ts) and applied to the overlay
 * (src/shadow/overlay.ts), so the controllers see it as if it had landed. Live reads (the re-checks
 * before a destructive write) still go to the API server, seen through the overlay.
 *
 * These are the one place where dry-run differs from a real run; as a second guard, src/cli/run.ts
 * closes every write throttle's fencing gate in dry-run, so a write that reached the API path
 * anyway would fail with `FencedError` instead of being sent.
 *
 * Not upstream: kube-controller-manager has no dry-run mode.
 */
import type { KubeClients } from '../kube/client.js';
import { getCondition, type Node, type NodeCondition, type Pod, type PodCondition, type Taint } from '../kube/objects.js';
import { readNode, readPod, readVolumeAttachment } from '../kube/reads.js';
import { formatTaint, taintMatches } from '../kube/taints.js';
import { assertStillCalledFor, type WriteRecheck } from '../kube/throttle.js';
import type { EventSink, ReadStore } from '../kube/types.js';
import type { NodeLifecycleWrites } from '../nodelifecycle/controller.js';
import { conditionTaintDiff, fencedTaintSwap } from '../nodelifecycle/taints.js';
import type { SwapNodeTaintsOptions, TaintWriteResult, WriteResult } from '../nodelifecycle/writer.js';
import type { AffinityEvictor, EvictionOutcome, EvictionTarget } from '../nodeaffinity/writer.js';
import type { PodGCWrites } from '../podgc/controller.js';
import type { ForceDeleteRecheck, ForceDeleteResult } from '../podgc/writer.js';
import type { TaintEvictionWrites } from '../tainteviction/controller.js';
import { taintEvictionDisruptionCondition } from '../tainteviction/events.js';
import { hasDisruptionTarget, type ConditionWriteResult, type DeleteResult } from '../tainteviction/writer.js';
import type { ForceDetachWrites } from '../volumes/controller.js';
import { listPodsOnNode, type LivePodsOnNode } from '../volumes/writer.js';
import type { Clock } from '../util/clock.js';
import type { ShadowDecisionLog } from './decisions.js';
import type { PodLike, ShadowOverlay } from './overlay.js';

/** What every dry-run writer shares. */
export interface ShadowWriterDeps {
  overlay: ShadowOverlay;
  decisions: ShadowDecisionLog;
  clock: Clock;
  /** For live reads only; nothing is written through them. */
  clients: Pick<KubeClients, 'core' | 'storage'>;
  /** The overlaid node view (src/shadow/overlay.ts `ShadowView`), for the newest would-be copy. */
  nodes: ReadStore<Node>;
  /** The overlaid pod view. */
  pods: ReadStore<Pod>;
}

/** `Ready=Unknown (NodeStatusUnknown)`-style summary of a node's Ready condition, for decision reasons. */
function readySummary(node: Node): string {
  const ready = getCondition(node.conditions, 'Ready');
  if (!ready) return 'node has no Ready condition';
  const since = ready.lastTransitionTime !== undefined ? ` since ${new Date(ready.lastTransitionTime).toISOString()}` : '';
  return `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ''}${since}`;
}

/** The node's NoExecute taints as `key=value:effect`, for decision reasons. */
function noExecuteSummary(node: Node | undefined): string {
  const t = node?.taints.filter((x) => x.effect === 'NoExecute') ?? [];
  return t.length === 0 ? 'no NoExecute taint on its node' : `NoExecute ${t.map(formatTaint).join(', ')} not tolerated`;
}

const NODE_LIFECYCLE = 'node-lifecycle-controller';

/**
 * The node lifecycle controller's writes in dry-run: taint swaps, Unknown-marking, pod NotReady
 * marks, legacy evictions and labels become decisions and overlay entries.
 * Mirrors {@link NodeLifecycleWriter}'s contract (results and "unchanged" rules), without the API.
 */
export class DryRunNodeLifecycleWriter implements NodeLifecycleWrites {
  readonly #d: ShadowWriterDeps;

  constructor(deps: ShadowWriterDeps) {
    this.#d = deps;
  }

  /** The newest would-be copy: the overlaid cache, else the caller's copy overlaid, else a live read overlaid. */
  async #current(name: string, cached: Node | undefined): Promise<Node | undefined> {
    const fromCache = this.#d.nodes.get(name);
    if (fromCache) return fromCache;
    const real = cached ?? (await readNode(this.#d.clients, name));
    return real ? this.#d.overlay.node(real) : undefined;
  }

  /** Nothing to forget: the overlay forgets a node when the cluster deletes it. */
  forgetNode(): void {}

  /**
   * See `NodeLifecycleWriter.swapNodeTaints`: records "would taint" / "would untaint" per changed
   * taint; the NoExecute fence (`opts.noExecuteFence`) is read right before the would-be write.
   * @returns `'written'` (would have been), `'unchanged'`, `'gone'` or `'fenced'`. @throws a live read's `LiveReadError`.
   */
  async swapNodeTaints(
    name: string,
    toAdd: readonly Taint[],
    toRemove: readonly Taint[],
    cached?: Node,
    opts: SwapNodeTaintsOptions = {},
  ): Promise<TaintWriteResult> {
    const node = await this.#current(name, cached);
    if (!node) return 'gone';
    assertStillCalledFor(opts.recheck);
    const diff = opts.conditionTaints ? conditionTaintDiff(node) : undefined;
    if (diff) opts.onConditionTaints?.(diff.toAdd, diff.toRemove);
    const now = this.#d.clock.now();
    const swap = fencedTaintSwap(node.taints, [...toAdd, ...(diff?.toAdd ?? [])], [...toRemove, ...(diff?.toRemove ?? [])], now, opts.noExecuteFence?.() ?? false);
    const next = swap.next;
    const fenced = swap.refused.length > 0;
    if (next === undefined) return fenced ? 'fenced' : 'unchanged';
    const reason = readySummary(node);
    const ref = { kind: 'Node' as const, name, uid: node.uid };
    for (const t of next) if (!node.taints.some((o) => taintMatches(o, t))) this.#d.decisions.record(NODE_LIFECYCLE, 'taint', ref, formatTaint(t), reason, name);
    for (const t of node.taints) if (!next.some((n) => taintMatches(n, t))) this.#d.decisions.record(NODE_LIFECYCLE, 'untaint', ref, formatTaint(t), reason, name);
    this.#d.overlay.setNodeTaints(node, next);
    return fenced ? 'fenced' : 'written';
  }

  /**
   * See `NodeLifecycleWriter.updateNodeConditions`: records "would mark Unknown" for each condition
   * that would become Unknown ("would update condition" for any other change).
   * @throws a live read's `LiveReadError`.
   */
  async updateNodeConditions(
    name: string,
    cached: Node | undefined,
    compute: (node: Node) => NodeCondition[] | undefined,
    recheck?: WriteRecheck,
  ): Promise<{ result: WriteResult; written?: NodeCondition[]; node?: Node }> {
    const node = await this.#current(name, cached);
    if (!node) return { result: 'gone' };
    assertStillCalledFor(recheck);
    const written = compute(node);
    if (!written) return { result: 'unchanged', node };
    const ref = { kind: 'Node' as const, name, uid: node.uid };
    // One decision per write, as it would be one status patch: `Ready=Unknown, MemoryPressure=Unknown, …`.
    const changed = written.filter((c) => getCondition(node.conditions, c.type)?.status !== c.status);
    for (const unknown of [true, false]) {
      const these = changed.filter((c) => (c.status === 'Unknown') === unknown);
      if (these.length === 0) continue;
      const detail = these.map((c) => `${c.type}=${c.status}`).join(', ');
      const first = these[0] as NodeCondition;
      const reason = `${first.type} was ${getCondition(node.conditions, first.type)?.status ?? 'absent'}${first.message ? `: ${first.message}` : ''}`;
      this.#d.decisions.record(NODE_LIFECYCLE, unknown ? 'mark-unknown' : 'update-condition', ref, detail, reason, name);
    }
    this.#d.overlay.setNodeConditions(node, written, this.#d.clock.now());
    return { result: 'written', written, node: this.#d.overlay.node(node) };
  }

  /** See `NodeLifecycleWriter.markPodNotReady`: records "would mark pod NotReady". */
  async markPodNotReady(pod: Pod, nodeName: string, recheck?: WriteRecheck): Promise<WriteResult> {
    if (pod.nodeName !== nodeName) return 'unchanged';
    assertStillCalledFor(recheck);
    const current = this.#d.pods.get(`${pod.namespace}/${pod.name}`);
    if (!current || current.uid !== pod.uid) return 'gone';
    const ready = getCondition(current.conditions, 'Ready');
    if (!ready || ready.status === 'False') return 'unchanged';
    const next: PodCondition = { ...ready, status: 'False', lastTransitionTime: this.#d.clock.now() };
    const node = this.#d.nodes.get(nodeName);
    this.#d.decisions.record(NODE_LIFECYCLE, 'mark-pod-not-ready', podRef(pod), 'Ready=False', node ? `node ${nodeName} ${readySummary(node)}` : `node ${nodeName}`, nodeName);
    this.#d.overlay.setPodCondition(pod, next);
    return 'written';
  }

  /** See `NodeLifecycleWriter.evictPodLegacy` (`--enable-taint-manager=false`): records "would evict". */
  async evictPodLegacy(pod: Pod, nodeName: string, recheck?: WriteRecheck): Promise<WriteResult> {
    if (this.#d.overlay.podDeleted(pod.uid)) return 'gone';
    assertStillCalledFor(recheck);
    const node = this.#d.nodes.get(nodeName);
    this.#d.decisions.record(NODE_LIFECYCLE, 'evict', podRef(pod), 'legacy eviction (status reason NodeLost, graceful delete)', node ? readySummary(node) : `node ${nodeName}`, nodeName);
    this.#d.overlay.deletePod(pod, this.#d.clock.now());
    return 'written';
  }

  /** See `NodeLifecycleWriter.patchNodeLabels`: records "would label". */
  async patchNodeLabels(name: string, cached: Node | undefined, compute: (node: Node) => Record<string, string> | undefined, recheck?: WriteRecheck): Promise<WriteResult> {
    const node = await this.#current(name, cached);
    if (!node) return 'gone';
    assertStillCalledFor(recheck);
    const labels = compute(node);
    if (!labels) return 'unchanged';
    const detail = Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');
    this.#d.decisions.record(NODE_LIFECYCLE, 'label', { kind: 'Node', name, uid: node.uid }, detail, 'beta os/arch label twins', name);
    this.#d.overlay.setNodeLabels(node, labels);
    return 'written';
  }
}

function podRef(p: Pick<PodLike, 'namespace' | 'name' | 'uid'>): { kind: 'Pod'; namespace: string; name: string; uid: string } {
  return { kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid };
}

/**
 * The taint eviction controller's writes in dry-run: the `DisruptionTarget` condition goes to the
 * overlay (no decision of its own); the deletion is "would delete pod".
 */
export class DryRunTaintEvictionWriter implements TaintEvictionWrites {
  readonly #d: ShadowWriterDeps;

  constructor(deps: ShadowWriterDeps) {
    this.#d = deps;
  }

  #pod(namespace: string, name: string, uid: string): Pod | undefined {
    const p = this.#d.pods.get(`${namespace}/${name}`);
    return p?.uid === uid ? p : undefined;
  }

  /** See `TaintEvictionWriter.addDisruptionCondition` (`recheck` runs as right before a real send). */
  async addDisruptionCondition(namespace: string, name: string, uid: string, _cached?: Pod, recheck?: WriteRecheck): Promise<ConditionWriteResult> {
    const pod = this.#pod(namespace, name, uid);
    if (!pod) return 'gone';
    if (hasDisruptionTarget(pod)) return 'unchanged';
    assertStillCalledFor(recheck);
    const c = taintEvictionDisruptionCondition(this.#d.clock.now());
    this.#d.overlay.setPodCondition(pod, { type: c.type, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: this.#d.clock.now() });
    return 'written';
  }

  /** See `TaintEvictionWriter.deletePod`: records "would delete pod" (`recheck` runs as right before a real send). */
  async deletePod(namespace: string, name: string, uid: string, recheck?: WriteRecheck): Promise<DeleteResult> {
    const pod = this.#pod(namespace, name, uid);
    if (!pod) return 'gone';
    assertStillCalledFor(recheck);
    const node = pod.nodeName ? this.#d.nodes.get(pod.nodeName) : undefined;
    this.#d.decisions.record('taint-eviction-controller', 'delete-pod', podRef(pod), 'graceful delete', noExecuteSummary(node), pod.nodeName || undefined);
    this.#d.overlay.deletePod(pod, this.#d.clock.now());
    return 'deleted';
  }
}

/** Live reads of the pod GC and force-detach controllers, seen through the overlay. */
class ShadowLiveReads {
  protected readonly d: ShadowWriterDeps;

  constructor(deps: ShadowWriterDeps) {
    this.d = deps;
  }

  /** Quorum GET, overlaid; `undefined` on 404. @throws {LiveReadError} on any other answer. */
  async getNode(name: string): Promise<Node | undefined> {
    const n = await readNode(this.d.clients, name);
    return n ? this.d.overlay.node(n) : undefined;
  }

  /** Quorum GET, overlaid; `undefined` on 404 or when the shadow would have deleted it. @throws {LiveReadError}. */
  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    const p = await readPod(this.d.clients, namespace, name);
    return p ? this.d.overlay.pod(p) : undefined;
  }
}

/** The pod GC's writes in dry-run: "would force-delete". */
export class DryRunPodGCWriter extends ShadowLiveReads implements PodGCWrites {
  /**
   * See `PodGCWriter.forceDeletePod`: the live read and `recheck` run as in a real run; the status
   * patch and the delete become one decision.
   * @throws what the live read or `recheck` throws.
   */
  async forceDeletePod(namespace: string, name: string, uid: string, recheck: ForceDeleteRecheck, sendCheck?: WriteRecheck): Promise<ForceDeleteResult> {
    const live = await this.getPod(namespace, name);
    if (!live || live.uid !== uid) return 'gone';
    const plan = await recheck(live);
    if (!plan) return 'skipped';
    assertStillCalledFor(sendCheck);
    const detail = plan.condition ? `phase Failed and ${plan.condition.type}=${plan.condition.status} (${plan.condition.reason ?? ''}), delete with grace period 0` : 'phase Failed, delete with grace period 0';
    this.d.decisions.record('pod-garbage-collector-controller', 'force-delete', podRef(live), detail, plan.why, live.nodeName || undefined);
    this.d.overlay.deletePod(live, this.d.clock.now());
    return 'deleted';
  }
}

/** The force-detach controller's reads and write in dry-run: "would detach". */
export class DryRunForceDetachWriter extends ShadowLiveReads implements ForceDetachWrites {
  /** Quorum GET, overlaid; `undefined` on 404 or when the shadow would have deleted it. @throws {LiveReadError}. */
  async getVolumeAttachment(name: string): ReturnType<ForceDetachWrites['getVolumeAttachment']> {
    const va = await readVolumeAttachment(this.d.clients, name);
    return va ? this.d.overlay.volumeAttachment(va) : undefined;
  }

  /** Quorum LIST of the node's pods, overlaid (a pod the shadow would have deleted is left out). @throws {LiveReadError}. */
  async listPodsOnNode(nodeName: string): Promise<LivePodsOnNode> {
    const live = await listPodsOnNode(this.d.clients, nodeName);
    const pods: Pod[] = [];
    for (const p of live.pods) {
      const seen = this.d.overlay.pod(p);
      if (seen) pods.push(seen);
    }
    return { pods, unparsable: live.unparsable };
  }

  /** See `ForceDetachWriter.deleteVolumeAttachment`: records "would detach". */
  async deleteVolumeAttachment(name: string, uid: string, recheck?: WriteRecheck): Promise<'deleted' | 'gone'> {
    const va = await this.getVolumeAttachment(name);
    if (!va || va.uid !== uid) return 'gone';
    assertStillCalledFor(recheck);
    const node = this.d.nodes.get(va.nodeName);
    const oos = node?.taints.some((t) => t.key === 'node.kubernetes.io/out-of-service') ? 'node out of service' : `node ${node ? readySummary(node) : 'gone'}`;
    this.d.decisions.record('persistentvolume-attach-detach-controller', 'detach', { kind: 'VolumeAttachment', name, uid }, `delete VolumeAttachment (volume ${va.persistentVolumeName ?? '?'})`, oos, va.nodeName);
    this.d.overlay.deleteVolumeAttachment(va);
    return 'deleted';
  }
}

/** The node affinity enforcer's evictions in dry-run: "would evict". */
export class DryRunAffinityEvictor implements AffinityEvictor {
  readonly #d: ShadowWriterDeps;
  readonly #controller: string;

  constructor(deps: ShadowWriterDeps, controller: string) {
    this.#d = deps;
    this.#controller = controller;
  }

  /** See {@link AffinityEvictor.evict}; never blocked by a PDB (none is asked). */
  async evict(target: EvictionTarget, recheck?: WriteRecheck): Promise<EvictionOutcome> {
    if (this.#d.overlay.podDeleted(target.uid)) return { kind: 'gone', detail: 'the shadow already evicted it' };
    assertStillCalledFor(recheck);
    this.#d.decisions.record(this.#controller, 'evict', podRef(target), 'policy/v1 Eviction', 'required node affinity no longer matches its node');
    this.#d.overlay.deletePod(target, this.#d.clock.now());
    return { kind: 'evicted' };
  }
}

/**
 * An Event sink that records nothing: each Event is counted and logged at debug level.
 * @param controller the `--controllers` name, for the counter's label.
 */
export function shadowEventSink(decisions: ShadowDecisionLog, controller: string): EventSink {
  return {
    record(ref, type, reason, message) {
      decisions.event(controller, ref.kind, ref.namespace !== undefined ? `${ref.namespace}/${ref.name}` : ref.name, type, reason, message);
    },
  };
}
