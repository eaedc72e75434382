/**
 * What kube-controller-manager did during a scenario, read from the API server: the fleet's nodes are
 * watched (every version: an Unknown or a NoSchedule taint that lasts less than a poll still counts),
 * and so are the pods (a graceful delete that pod GC's force delete follows within one poll, as on
 * an out-of-service node, still counts: a poll saw only the pod vanish, and the taint manager's
 * deletion went unrecorded, so ours' matching one was reported "ours only"); with the
 * VolumeAttachments they are also polled every 200 ms; successive versions are diffed.
 * Polling keeps working through an API server restart (a failed poll is simply skipped) and sees
 * removals (an untaint, a force-deleted pod), which the shadow report's after-the-fact view cannot.
 *
 * Each decision's time is epoch **ms**: the poll that first saw it, or, when the object carries its
 * own second-precision stamp (taint `timeAdded`, condition `lastTransitionTime`, the pod's
 * `deletionTimestamp` minus its grace period), that stamp + 999 ms if it is earlier (after an outage
 * the poll can be late). Both are upper bounds of kube-controller-manager's real time, so the
 * comparison never credits ours with being later than it was.
 *
 * Not upstream: test tooling.
 */
import type { KubeClients } from '../../src/kube/client.js';
import { realClock } from '../../src/util/clock.js';
import { silentLogger } from '../../packages/sim/src/log.js';
import { startListWatch, type ListWatchHandle } from '../../packages/sim/src/watch.js';
import { toNode, toPod, toVolumeAttachment, type Node, type Pod, type VolumeAttachment } from '../../src/kube/objects.js';

/** The actions compared (the shadow's action names). */
export type DiffAction = 'mark-unknown' | 'taint' | 'untaint' | 'mark-pod-not-ready' | 'delete-pod' | 'force-delete' | 'detach';

/** One decision of either side. Times epoch **ms**. */
export interface Decision {
  atMs: number;
  action: DiffAction;
  /** Node name, `namespace/name` of a pod, or a VolumeAttachment's name. */
  object: string;
  /** Pods: their node. */
  node?: string;
  /** Taints: `key:effect`; otherwise `''`. */
  detail: string;
}

/** The node controller's condition taint keys (upstream `nodelifecycle` `UnreachableTaintTemplate`, `NotReadyTaintTemplate`). */
export const COMPARED_TAINT_KEYS = new Set(['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready']);

const POLL_MS = 200;

function stamped(pollMs: number, stampMs: number | undefined): number {
  return stampMs === undefined ? pollMs : Math.min(pollMs, stampMs + 999);
}

function taintSet(n: Node): Map<string, number | undefined> {
  const m = new Map<string, number | undefined>();
  for (const t of n.taints) if (COMPARED_TAINT_KEYS.has(t.key)) m.set(`${t.key}:${t.effect}`, t.timeAdded);
  return m;
}

/**
 * Polls the fleet's nodes and pods and records kube-controller-manager's decisions.
 * `nodeAlive(name)` tells whether the simulator's kubelet of a node runs: a pod that vanishes from a
 * running node was confirmed deleted by that kubelet, from a dead one it was force-deleted (pod GC).
 */
export class DecisionRecorder {
  readonly decisions: Decision[] = [];
  /** Polls that failed (API server down, timeouts). */
  failedPolls = 0;
  /**
   * When a poll succeeded again after failed ones, epoch **ms**: an upper bound (by one poll) of when
   * kube-apiserver answered again after an outage, which its `/readyz` may follow by seconds.
   */
  readonly answeredAgainMs: number[] = [];
  #failing = false;
  readonly #clients: KubeClients;
  readonly #selector: string;
  readonly #namespace: string;
  readonly #alive: (node: string) => boolean;
  #nodes = new Map<string, Node>();
  #pods = new Map<string, Pod>();
  #attachments = new Map<string, VolumeAttachment>();
  #primed = false;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #watch: ListWatchHandle | undefined;
  #podWatch: ListWatchHandle | undefined;
  /** Pods (uid) whose graceful delete is recorded already, by the watch or a poll. */
  readonly #deleteRecorded = new Set<string>();

  constructor(clients: KubeClients, fleetSelector: string, namespace: string, nodeAlive: (node: string) => boolean) {
    this.#clients = clients;
    this.#selector = fleetSelector;
    this.#namespace = namespace;
    this.#alive = nodeAlive;
  }

  /** Takes the first snapshot (no decisions from it) and starts polling. @throws {Error} when the first poll fails. */
  async start(): Promise<void> {
    await this.#poll();
    this.#watch = startListWatch({
      name: 'fuzzdiff-nodes',
      kubeConfig: this.#clients.kubeConfig,
      path: '/api/v1/nodes',
      labelSelector: this.#selector,
      list: async () => {
        const l = await this.#clients.core.listNode({ labelSelector: this.#selector });
        return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
      },
      onSync: (items) => {
        for (const raw of items) this.#onNode(toNode(raw), Date.now());
      },
      onEvent: (type, raw) => {
        if (type !== 'DELETED') this.#onNode(toNode(raw), Date.now());
      },
      clock: realClock,
      logger: silentLogger,
    });
    this.#podWatch = startListWatch({
      name: 'fuzzdiff-pods',
      kubeConfig: this.#clients.kubeConfig,
      path: `/api/v1/namespaces/${this.#namespace}/pods`,
      list: async () => {
        const l = await this.#clients.core.listNamespacedPod({ namespace: this.#namespace });
        return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
      },
      // A (re)list shows no transition; the polls diff what happened meanwhile.
      onSync: () => undefined,
      onEvent: (type, raw) => {
        if (type !== 'DELETED') this.#onPodVersion(toPod(raw), Date.now());
      },
      clock: realClock,
      logger: silentLogger,
    });
    await Promise.all([this.#watch.synced, this.#podWatch.synced]);
    const tick = (): void => {
      if (this.#stopped) return;
      this.#running = this.#poll()
        .then(() => {
          if (this.#failing) this.answeredAgainMs.push(Date.now());
          this.#failing = false;
        })
        .catch(() => {
          this.failedPolls++;
          this.#failing = true;
        })
        .finally(() => {
          if (!this.#stopped) this.#timer = setTimeout(tick, POLL_MS);
        });
    };
    this.#timer = setTimeout(tick, POLL_MS);
  }

  /** Stops polling after a last poll. Never throws. */
  async stop(): Promise<void> {
    this.#watch?.stop();
    this.#podWatch?.stop();
    await this.#running;
    await this.#poll().catch(() => undefined);
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  async #poll(): Promise<void> {
    const [nodeList, podList, vaList] = await Promise.all([
      this.#clients.core.listNode({ labelSelector: this.#selector, timeoutSeconds: 5 }),
      this.#clients.core.listNamespacedPod({ namespace: this.#namespace, timeoutSeconds: 5 }),
      this.#clients.storage.listVolumeAttachment({ labelSelector: this.#selector, timeoutSeconds: 5 }),
    ]);
    const now = Date.now();
    const nodes = new Map(nodeList.items.map(toNode).filter((n): n is Node => n !== undefined).map((n) => [n.name, n]));
    const pods = new Map(podList.items.map(toPod).filter((p): p is Pod => p !== undefined).map((p) => [p.uid, p]));
    const vas = new Map(vaList.items.map(toVolumeAttachment).filter((v): v is VolumeAttachment => v !== undefined).map((v) => [v.name, v]));
    if (this.#primed) this.#diff(now, nodes, pods, vas);
    else this.#nodes = nodes;
    this.#primed = true;
    this.#pods = pods;
    this.#attachments = vas;
  }

  /** One node version, from the watch or a poll: its decisions since the last version seen. Older versions are ignored. */
  #onNode(n: Node | undefined, now: number): void {
    if (!n) return;
    const before = this.#nodes.get(n.name);
    // resourceVersions are etcd revisions here (decimal); a poll may return a version the watch has passed.
    if (before && /^\d+$/.test(before.resourceVersion) && /^\d+$/.test(n.resourceVersion) && BigInt(before.resourceVersion) >= BigInt(n.resourceVersion)) return;
    this.#nodes.set(n.name, n);
    if (!before || !this.#primed) return;
    const ready = n.conditions.find((c) => c.type === 'Ready');
    const readyBefore = before.conditions.find((c) => c.type === 'Ready');
    if (ready?.status === 'Unknown' && readyBefore?.status !== 'Unknown') {
      this.decisions.push({ atMs: stamped(now, ready.lastTransitionTime), action: 'mark-unknown', object: n.name, node: n.name, detail: '' });
    }
    const was = taintSet(before);
    const is = taintSet(n);
    for (const [k, added] of is) {
      // A NoExecute taint whose timeAdded changed was removed and added again (upstream's re-stamp
      // at start): it moves every toleration deadline, so it counts. A NoSchedule taint's new stamp
      // on a taint that stayed (upstream rewrites the condition taints) changes nothing.
      const restamped = was.has(k) && was.get(k) !== added && k.endsWith(':NoExecute');
      if (!was.has(k) || restamped) this.decisions.push({ atMs: stamped(now, added), action: 'taint', object: n.name, node: n.name, detail: k });
    }
    for (const k of was.keys()) if (!is.has(k)) this.decisions.push({ atMs: now, action: 'untaint', object: n.name, node: n.name, detail: k });
  }

  /** One pod version from the watch: a graceful delete of a pod the last poll saw alive. */
  #onPodVersion(p: Pod | undefined, now: number): void {
    if (!p || p.deletionTimestamp === undefined || !this.#primed) return;
    const before = this.#pods.get(p.uid);
    if (before === undefined || before.deletionTimestamp !== undefined) return;
    this.#recordDelete(p, now);
  }

  /** Records the graceful delete of `p` once (the watch and the next poll may both see it). */
  #recordDelete(p: Pod, now: number): void {
    if (p.deletionTimestamp === undefined || this.#deleteRecorded.has(p.uid)) return;
    this.#deleteRecorded.add(p.uid);
    const at = p.deletionTimestamp - (p.deletionGracePeriodSeconds ?? 0) * 1000;
    this.decisions.push({ atMs: stamped(now, at), action: 'delete-pod', object: `${p.namespace}/${p.name}`, node: p.nodeName, detail: '' });
  }

  #diff(now: number, nodes: Map<string, Node>, pods: Map<string, Pod>, vas: Map<string, VolumeAttachment>): void {
    // Detach: the attach/detach controller deletes the VolumeAttachment (the simulated attacher then
    // drops its finalizer). The simulator deletes attachments itself only on a graceful shutdown,
    // which scenarios do not play, so every deletion is kube-controller-manager's.
    for (const v of this.#attachments.values()) {
      const cur = vas.get(v.name);
      if (v.deletionTimestamp !== undefined || (cur !== undefined && cur.deletionTimestamp === undefined)) continue;
      this.decisions.push({ atMs: stamped(now, cur?.deletionTimestamp), action: 'detach', object: v.name, node: v.nodeName, detail: '' });
    }
    for (const n of nodes.values()) this.#onNode(n, now);
    for (const p of pods.values()) {
      const before = this.#pods.get(p.uid);
      if (!before) continue;
      const key = `${p.namespace}/${p.name}`;
      const ready = p.conditions.find((c) => c.type === 'Ready');
      if (ready?.status === 'False' && before.conditions.find((c) => c.type === 'Ready')?.status === 'True') {
        this.decisions.push({ atMs: stamped(now, ready.lastTransitionTime), action: 'mark-pod-not-ready', object: key, node: p.nodeName, detail: '' });
      }
      if (p.deletionTimestamp !== undefined && before.deletionTimestamp === undefined) this.#recordDelete(p, now);
    }
    for (const p of this.#pods.values()) {
      if (pods.has(p.uid) || this.#alive(p.nodeName)) continue;
      const key = `${p.namespace}/${p.name}`;
      // Pod GC force-deletes without a prior graceful delete only for orphans (no node here) and
      // terminating pods on out-of-service nodes, which were already terminating: record the force delete.
      this.decisions.push({ atMs: now, action: 'force-delete', object: key, node: p.nodeName, detail: '' });
    }
  }
}
