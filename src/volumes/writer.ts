/**
 * The force-detach controller's live reads and its one write: deleting a VolumeAttachment, which
 * is how a CSI detach is triggered (the external-attacher then calls ControllerUnpublishVolume and
 * removes its finalizer). Writes go through the shared {@link WriteScheduler}.
 *
 * Deliberate difference from upstream: upstream's reconciler first removes the volume from
 * `node.status.volumesAttached` (its `nodeStatusUpdater`). We do not touch node status:
 * kube-controller-manager's attach/detach controller owns that field and keeps running for
 * attaching (see docs/out-of-service.md). Finalizers are never removed here either; that is the
 * external-attacher's job once the volume is really unpublished.
 */
import { isConflict, isNotFound, type KubeClients } from '../kube/client.js';
import { toPod, type Node, type Pod, type VolumeAttachment } from '../kube/objects.js';
import type { WriteRecheck, WriteScheduler } from '../kube/throttle.js';
import { LiveReadError, readNode, readVolumeAttachment } from '../kube/reads.js';

/** The pods a live list found on one node. */
export interface LivePodsOnNode {
  /** The pods the converter accepted. */
  pods: Pod[];
  /** Pods on the node the converter rejected: the caller must count each as holding every volume there. */
  unparsable: number;
}

const POD_LIST_PAGE = 500;

/**
 * Quorum LIST of the pods bound to `nodeName` (field selector `spec.nodeName`), page by page.
 * Why: the pod cache may not have caught up with a pod (a relist, a lagging watch), and drops pods
 * its converter rejects; neither may let a forced detach go ahead, so the decision that starts the
 * timeout clock, and the one that detaches, are taken again on this list.
 * Mirrors no upstream call (upstream trusts its informer cache); see docs/out-of-service.md.
 * @returns the converted pods and the count of unparsable ones.
 * @throws {LiveReadError} (`'error'`) on any API or network failure, including an expired continue token.
 */
export async function listPodsOnNode(clients: Pick<KubeClients, 'core'>, nodeName: string): Promise<LivePodsOnNode> {
  const out: LivePodsOnNode = { pods: [], unparsable: 0 };
  let cont: string | undefined;
  do {
    let page: { items?: unknown; metadata?: { _continue?: string } };
    try {
      page = await clients.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}`, limit: POD_LIST_PAGE, _continue: cont });
    } catch (err) {
      throw new LiveReadError('pod', `(pods on node ${nodeName})`, 'error', err);
    }
    if (!Array.isArray(page.items)) throw new LiveReadError('pod', `(pods on node ${nodeName})`, 'unparsable');
    for (const raw of page.items as unknown[]) {
      const pod = toPod(raw);
      if (pod === undefined) out.unparsable++;
      else out.pods.push(pod);
    }
    cont = page.metadata?._continue || undefined;
  } while (cont !== undefined);
  return out;
}

/**
 * Reads and writes over the real API.
 * Mirrors the VolumeAttachment deletion in upstream `pkg/volume/csi/csi_attacher.go` `Detach`.
 */
export class ForceDetachWriter {
  readonly #clients: KubeClients;
  readonly #writes: WriteScheduler;

  /**
   * @param clients the API clients.
   * @param writes the throttled, fenced write path (src/kube/writer.ts).
   */
  constructor(clients: KubeClients, writes: WriteScheduler) {
    this.#clients = clients;
    this.#writes = writes;
  }

  /** Quorum GET of a node; `undefined` only on 404. @throws {LiveReadError} on any other answer, including an unparsable object. */
  getNode(name: string): Promise<Node | undefined> {
    return readNode(this.#clients, name);
  }

  /** Quorum GET of a VolumeAttachment; `undefined` only on 404. @throws {LiveReadError} on any other answer, including an unparsable object. */
  getVolumeAttachment(name: string): Promise<VolumeAttachment | undefined> {
    return readVolumeAttachment(this.#clients, name);
  }

  /** See {@link listPodsOnNode}. @throws {LiveReadError} on any failure. */
  listPodsOnNode(nodeName: string): Promise<LivePodsOnNode> {
    return listPodsOnNode(this.#clients, nodeName);
  }

  /**
   * Deletes a VolumeAttachment with a UID precondition, so a re-created attachment of the same
   * name is never hit.
   * @param recheck the controller's decision taken again right before the DELETE is sent
   *   (src/kube/throttle.ts `WriteRecheck`).
   * @returns `'deleted'`, or `'gone'` when it (with that UID) no longer exists.
   * @throws a `NotCalledForError` (`recheck` withheld it), or other API errors, including
   *   {@link FencedError} from the write path.
   */
  async deleteVolumeAttachment(name: string, uid: string, recheck?: WriteRecheck): Promise<'deleted' | 'gone'> {
    try {
      await this.#writes.schedule(() => this.#clients.storage.deleteVolumeAttachment({ name, body: { preconditions: { uid } } }), 'pod', recheck);
      return 'deleted';
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return 'gone';
      throw err;
    }
  }
}
