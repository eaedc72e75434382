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
import type { Node, VolumeAttachment } from '../kube/objects.js';
import type { WriteScheduler } from '../kube/throttle.js';
import { readNode, readVolumeAttachment } from '../kube/reads.js';

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

  /**
   * Deletes a VolumeAttachment with a UID precondition, so a re-created attachment of the same
   * name is never hit.
   * @returns `'deleted'`, or `'gone'` when it (with that UID) no longer exists.
   * @throws on other API errors, including {@link FencedError} from the write path.
   */
  async deleteVolumeAttachment(name: string, uid: string): Promise<'deleted' | 'gone'> {
    try {
      await this.#writes.schedule(() => this.#clients.storage.deleteVolumeAttachment({ name, body: { preconditions: { uid } } }));
      return 'deleted';
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return 'gone';
      throw err;
    }
  }
}
