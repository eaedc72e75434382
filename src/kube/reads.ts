/**
 * Live (quorum) reads of single objects as slim objects, for the re-checks every writer makes
 * right before it acts.
 *
 * Fail closed: only a real 404 means "gone" (`undefined`). Every other answer, an API or network
 * error or an object the converters of objects.ts cannot parse, proves nothing and is thrown as a
 * {@link LiveReadError}, so a destructive path (force-delete an orphan, force-detach from a deleted
 * node) does not act now and the work queue retries it with backoff.
 */
import type { Logger } from '../log/logger.js';
import type { KubeClients } from './client.js';
import { apiStatusCode, describeError, isNotFound } from './client.js';
import { toLease, toNode, toPod, toVolumeAttachment, type Lease, type Node, type Pod, type VolumeAttachment } from './objects.js';

/** The kinds of object read live, as used in the `resource` label of the live-read failure counters. */
export type LiveReadResource = 'node' | 'pod' | 'volumeattachment' | 'lease';

/** Why a live read proved nothing: an object the converters cannot parse, or any other non-404 failure. */
export type LiveReadFailureReason = 'unparsable' | 'error';

/**
 * A live read that answered neither with a parsable object nor with 404 Not Found. `code` is the
 * HTTP status of the underlying API error (so `apiStatusCode`, `isConflict`, … keep working on it),
 * `undefined` for an unparsable object or a network error; `cause` is the original error.
 */
export class LiveReadError extends Error {
  override readonly name = 'LiveReadError';
  /** HTTP status of the underlying API error, if any. */
  readonly code: number | undefined;

  /**
   * @param resource what was read.
   * @param objectName `name` or `namespace/name`.
   * @param reason see {@link LiveReadFailureReason}.
   * @param cause the API or network error (for `'error'`).
   */
  constructor(
    readonly resource: LiveReadResource,
    readonly objectName: string,
    readonly reason: LiveReadFailureReason,
    cause?: unknown,
  ) {
    super(
      reason === 'unparsable'
        ? `live read of ${resource} ${objectName}: the API returned an object that cannot be parsed; not treating it as gone`
        : `live read of ${resource} ${objectName} failed: ${describeError(cause)}`,
      { cause },
    );
    this.code = apiStatusCode(cause);
  }
}

/**
 * Awaits an API read and converts it.
 * @returns the slim object, or `undefined` only when the API answers 404.
 * @throws {LiveReadError} for any other API or network error (`'error'`) and for an object
 *   `convert` rejects (`'unparsable'`): neither proves that the object is gone.
 */
export async function readOrUndefined<T>(
  resource: LiveReadResource,
  objectName: string,
  read: () => Promise<unknown>,
  convert: (raw: unknown) => T | undefined,
): Promise<T | undefined> {
  let raw: unknown;
  try {
    raw = await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new LiveReadError(resource, objectName, 'error', err);
  }
  const out = convert(raw);
  if (out === undefined) throw new LiveReadError(resource, objectName, 'unparsable');
  return out;
}

/** Quorum GET of a Node; `undefined` only on 404. @throws {LiveReadError} otherwise (see {@link readOrUndefined}). */
export function readNode(clients: Pick<KubeClients, 'core'>, name: string): Promise<Node | undefined> {
  return readOrUndefined('node', name, () => clients.core.readNode({ name }), toNode);
}

/** Quorum GET of a Pod; `undefined` only on 404. @throws {LiveReadError} otherwise (see {@link readOrUndefined}). */
export function readPod(clients: Pick<KubeClients, 'core'>, namespace: string, name: string): Promise<Pod | undefined> {
  return readOrUndefined('pod', `${namespace}/${name}`, () => clients.core.readNamespacedPod({ namespace, name }), toPod);
}

/**
 * Quorum GET of a Lease (the node lifecycle controller's `NodeControllerLeaseCircuitBreaker` read);
 * `undefined` only on 404. @throws {LiveReadError} otherwise (see {@link readOrUndefined}).
 */
export function readLease(clients: Pick<KubeClients, 'coordination'>, namespace: string, name: string): Promise<Lease | undefined> {
  return readOrUndefined('lease', `${namespace}/${name}`, () => clients.coordination.readNamespacedLease({ namespace, name }), toLease);
}

/** Quorum GET of a VolumeAttachment; `undefined` only on 404. @throws {LiveReadError} otherwise (see {@link readOrUndefined}). */
export function readVolumeAttachment(clients: Pick<KubeClients, 'storage'>, name: string): Promise<VolumeAttachment | undefined> {
  return readOrUndefined('volumeattachment', name, () => clients.storage.readVolumeAttachment({ name }), toVolumeAttachment);
}

/** The counter {@link noteLiveReadFailure} increments (a prom-client `Counter<'resource' | 'reason'>`). */
export interface LiveReadFailureCounter {
  inc(labels: { resource: LiveReadResource; reason: LiveReadFailureReason }): void;
}

/**
 * If `err` is a {@link LiveReadError}, counts it on `counter` and logs a warning that the action
 * waits; other errors are left alone.
 * @returns true when `err` was a live read failure (the caller then rethrows it to be retried).
 */
export function noteLiveReadFailure(err: unknown, counter: LiveReadFailureCounter, log: Logger, action: string): boolean {
  if (!(err instanceof LiveReadError)) return false;
  counter.inc({ resource: err.resource, reason: err.reason });
  log.warn({ resource: err.resource, object: err.objectName, reason: err.reason, err: err.message }, `Live read proved nothing; not ${action} now, retrying`);
  return true;
}
