/**
 * Live (quorum) reads of single objects as slim objects, for the re-checks every writer makes
 * right before it acts. A 404 is not an error here: it means the object is gone.
 */
import type { KubeClients } from './client.js';
import { isNotFound } from './client.js';
import { toNode, toPod, toVolumeAttachment, type Node, type Pod, type VolumeAttachment } from './objects.js';

/**
 * Awaits an API read and converts it; `undefined` when the API answers 404.
 * @throws any other API or network error.
 */
export async function readOrUndefined<T>(read: Promise<unknown>, convert: (raw: unknown) => T | undefined): Promise<T | undefined> {
  try {
    return convert(await read);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Quorum GET of a Node; `undefined` when it is gone (404). @throws on other API errors. */
export function readNode(clients: Pick<KubeClients, 'core'>, name: string): Promise<Node | undefined> {
  return readOrUndefined(clients.core.readNode({ name }), toNode);
}

/** Quorum GET of a Pod; `undefined` when it is gone (404). @throws on other API errors. */
export function readPod(clients: Pick<KubeClients, 'core'>, namespace: string, name: string): Promise<Pod | undefined> {
  return readOrUndefined(clients.core.readNamespacedPod({ namespace, name }), toPod);
}

/** Quorum GET of a VolumeAttachment; `undefined` when it is gone (404). @throws on other API errors. */
export function readVolumeAttachment(clients: Pick<KubeClients, 'storage'>, name: string): Promise<VolumeAttachment | undefined> {
  return readOrUndefined(clients.storage.readVolumeAttachment({ name }), toVolumeAttachment);
}
