/**
 * An object, or a watch event, whose wire bytes the protobuf decoder (src/kube/protobuf/) could not
 * read (issue 53: the wire format never changes a decision). Upstream's reflector fails the list or
 * the watch that carries one; here it reaches the informer's cache keyed, as a malformed object of
 * that key, so the JSON path's rules apply unchanged (src/kube/informercache.ts: a Pod is absent,
 * a Node or Lease keeps its last readable version marked unreadable, or fails the list when none is
 * cached), and a watch stream that carried one ends and relists, as client-go's does.
 *
 * Pure: no I/O.
 */

/** An object that did not decode, with the name and namespace read from its bytes first (src/kube/protobuf/decoder.ts `undecodableMeta`). */
export class UndecodableObject {
  /** `{name, namespace}` as far as they could be read; what src/kube/listwatch.ts `rawKey` keys it by. */
  readonly metadata: { name?: string; namespace?: string };
  /** Why it did not decode (for logs). */
  readonly reason: string;

  constructor(metadata: { name?: string; namespace?: string }, reason: string) {
    this.metadata = metadata;
    this.reason = reason;
  }
}

/**
 * Ends a watch stream that carried an event the decoder could not read: the informer relists, as
 * client-go's reflector does after its `StreamWatcher` turns a decode error into a watch.Error
 * (a 500 `InternalError` from `NewClientErrorReporter`) and stops.
 */
export class UndecodableEventError extends Error {
  /** @param detail the event type and why it did not decode. */
  constructor(detail: string) {
    super(`unable to decode an event from the watch stream: ${detail}`);
    this.name = 'UndecodableEventError';
  }
}
