/**
 * Watches a fleet's nodes from the test's side (by polling the API every `intervalMs`) and records
 * when each node's Ready status and NoExecute taints change, in the test process's wall clock (ms).
 */
import type { KubeClients } from '../../src/kube/client.js';
import { getCondition, toNode, type Node } from '../../src/kube/objects.js';

/** One observed change. */
export interface NodeChange {
  node: string;
  /** When the poll that saw the change returned (ms): the change happened at or before this. */
  atMs: number;
  /**
   * When the previous poll's request was sent (ms): the change happened after this, or that poll
   * would have seen it. For the first sight of a node, the same as `atMs`'s own request start.
   */
  notBeforeMs: number;
  ready: string | undefined;
  noExecute: string[];
}

/** Polls nodes with a label selector and records changes until stopped. */
export class NodeObserver {
  readonly changes: NodeChange[] = [];
  readonly #latest = new Map<string, Node>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  #lastRequestMs: number | undefined;

  constructor(
    private readonly clients: KubeClients,
    private readonly labelSelector: string,
    private readonly intervalMs = 100,
  ) {}

  /** Starts polling; resolves after the first poll. */
  async start(): Promise<void> {
    await this.#poll();
    this.#timer = setInterval(() => void this.#poll(), this.intervalMs);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** The node as last seen. */
  node(name: string): Node | undefined {
    return this.#latest.get(name);
  }

  /** First time (ms) at which `pred` held for `node`, or undefined. */
  firstAt(node: string, pred: (c: NodeChange) => boolean): number | undefined {
    return this.changes.find((c) => c.node === node && pred(c))?.atMs;
  }

  /** Every node that ever had a NoExecute taint with `key`, with the first time it was seen. */
  taintedWith(key: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const [node, c] of this.firstTaintChanges(key)) out.set(node, c.atMs);
    return out;
  }

  /**
   * Every node that ever had a NoExecute taint with `key`, with the change that first showed it: the
   * taint was added in `(notBeforeMs, atMs]`, whatever the observer's own lag was.
   */
  firstTaintChanges(key: string): Map<string, NodeChange> {
    const out = new Map<string, NodeChange>();
    for (const c of this.changes) if (c.noExecute.includes(key) && !out.has(c.node)) out.set(c.node, c);
    return out;
  }

  async #poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const requestMs = Date.now();
      const list = await this.clients.core.listNode({ labelSelector: this.labelSelector });
      const now = Date.now();
      const notBeforeMs = this.#lastRequestMs ?? requestMs;
      this.#lastRequestMs = requestMs;
      for (const raw of list.items) {
        const n = toNode(raw);
        if (!n) continue;
        const prev = this.#latest.get(n.name);
        this.#latest.set(n.name, n);
        const ready = getCondition(n.conditions, 'Ready')?.status;
        const noExecute = n.taints.filter((t) => t.effect === 'NoExecute').map((t) => t.key).sort();
        const prevReady = prev ? getCondition(prev.conditions, 'Ready')?.status : undefined;
        const prevNoExecute = prev ? prev.taints.filter((t) => t.effect === 'NoExecute').map((t) => t.key).sort() : [];
        if (!prev || prevReady !== ready || prevNoExecute.join() !== noExecute.join()) {
          this.changes.push({ node: n.name, atMs: now, notBeforeMs, ready, noExecute });
        }
      }
    } catch {
      // transient API errors: the next poll retries
    } finally {
      this.#busy = false;
    }
  }
}
