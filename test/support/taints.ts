/**
 * Node taint helpers for integration tests: read a node, add or remove a taint the way a user or
 * another tool would (a resourceVersion-guarded merge patch of `spec.taints`).
 */
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { isConflict, type KubeClients } from '../../src/kube/client.js';
import { taintToWire, toNode, type Node, type Taint } from '../../src/kube/objects.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** GET of a node as a slim object. @throws (assertion) when it does not convert; API errors as is. */
export async function readTestNode(clients: KubeClients, name: string): Promise<Node> {
  const n = toNode(await clients.core.readNode({ name }));
  assert.ok(n, `node ${name} converts`);
  return n;
}

/**
 * Adds `taint` to the node, replacing one with the same key and effect and keeping every other,
 * guarded by resourceVersion (retried on 409).
 * @returns the taint as the API server stored it (`timeAdded` has whole seconds).
 * @throws API errors other than 409.
 */
export async function addNodeTaint(clients: KubeClients, name: string, taint: Taint): Promise<Taint> {
  const same = (t: Taint): boolean => t.key === taint.key && t.effect === taint.effect;
  for (;;) {
    const n = await readTestNode(clients, name);
    const taints = [...n.taints.filter((t) => !same(t)), taint].map(taintToWire);
    try {
      const stored = toNode(await clients.core.patchNode({ name, body: { metadata: { resourceVersion: n.resourceVersion }, spec: { taints } } }, MERGE));
      const added = stored?.taints.find(same);
      assert.ok(added, `taint ${taint.key} stored on ${name}`);
      return added;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}

/**
 * Removes every taint with `key` from the node, guarded by resourceVersion (retried on 409).
 * @throws API errors other than 409.
 */
export async function removeNodeTaint(clients: KubeClients, name: string, key: string): Promise<void> {
  for (;;) {
    const n = await readTestNode(clients, name);
    const taints = n.taints.filter((t) => t.key !== key).map(taintToWire);
    try {
      await clients.core.patchNode({ name, body: { metadata: { resourceVersion: n.resourceVersion }, spec: { taints } } }, MERGE);
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}
