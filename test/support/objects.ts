/**
 * Small read/patch helpers over the real API for integration tests: slim nodes and pods, and taints
 * added with a resourceVersion guard. Every helper takes the clients to use.
 */
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeClients } from '../../src/kube/client.js';
import { taintToWire, toNode, toPod, type Node, type Pod, type Taint } from '../../src/kube/objects.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** GETs a node as a slim object. @throws when it is missing or malformed. */
export async function readNode(clients: KubeClients, name: string): Promise<Node> {
  const n = toNode(await clients.core.readNode({ name }));
  assert.ok(n, `node ${name} converts`);
  return n;
}

/** GETs a pod as a slim object; `undefined` on 404. @throws on other errors. */
export async function readPod(clients: KubeClients, namespace: string, name: string): Promise<Pod | undefined> {
  try {
    return toPod(await clients.core.readNamespacedPod({ namespace, name }));
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** The pods of `namespace` bound to `node` (optionally filtered by a label selector). */
export async function listPodsOnNode(clients: KubeClients, namespace: string, node: string, labelSelector?: string): Promise<Pod[]> {
  const list = await clients.core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${node}`, ...(labelSelector ? { labelSelector } : {}) });
  return list.items.map(toPod).filter((p): p is Pod => p !== undefined);
}

/**
 * Adds `taint` to the node, replacing one with the same key and effect and keeping the others, in a
 * resourceVersion-guarded merge patch retried on 409.
 */
export async function addNodeTaint(clients: KubeClients, name: string, taint: Taint): Promise<void> {
  for (;;) {
    const n = await readNode(clients, name);
    const taints = [...n.taints.filter((t) => !(t.key === taint.key && t.effect === taint.effect)), taint];
    try {
      await clients.core.patchNode({ name, body: { metadata: { resourceVersion: n.resourceVersion }, spec: { taints: taints.map(taintToWire) } } }, MERGE);
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
}
