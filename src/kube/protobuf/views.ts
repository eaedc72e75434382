/**
 * Decodes Kubernetes protobuf objects, lists and watch frames into **JSON-shaped views**: plain
 * objects with the field names and value forms the API server's JSON has (RFC 3339 times become
 * epoch-ms numbers, which src/kube/objects.ts `toMillis` reads too), holding only the fields the
 * slim converters of objects.ts read. The converters stay the one definition of the slim shape:
 * an informer feeds them a view exactly as it feeds them parsed JSON.
 *
 * JSON semantics that protobuf does not carry are restored here, field by field, as the Go types
 * define them (k8s.io/api v0.37.2 core/v1 and coordination/v1 `types.go`):
 * - `omitempty` strings (condition reason and message, toleration fields, nodeName, phase) are left
 *   out when empty, as JSON leaves them out;
 * - pointer fields (tolerationSeconds, deletionGracePeriodSeconds, holderIdentity,
 *   leaseDurationSeconds, leaseTransitions, ownerReference controller) appear only when set;
 * - a zero `metav1.Time` / `MicroTime` (an empty message: `time_proto.go` writes nothing for it) is
 *   absent, as JSON's `null` is.
 *
 * One thing JSON does not do: a Pod's `spec.tolerations` and `metadata.ownerReferences` lists are
 * frozen and shared by every pod whose list has the same wire bytes (./decoder.ts), which the
 * converter then finds by identity (objects.ts `SharedPodList`). Never mutate a view.
 *
 * An object whose bytes do not decode (upstream's `Unmarshal` would refuse them too: ./decoder.ts)
 * is not left out: a list item or watch event carries an `UndecodableObject` (src/kube/undecodable.ts)
 * keyed by the name and namespace read from its bytes first, so the informer's cache applies the
 * JSON path's rules for a malformed object of that key (issue 53).
 *
 * Pure: no I/O. Errors: {@link decodeObject} throws on bytes that do not decode.
 */
import { fromBinary } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { ListMetaSchema, StatusSchema } from './gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';
import { leaseView, nodeView, podView, undecodableMeta, watchEventFields, type MetaOptions, type View } from './decoder.js';
import { unwrapEnvelope, WireFormatError } from './envelope.js';
import { UndecodableObject } from '../undecodable.js';

export type { View } from './decoder.js';

/** The collections served in protobuf, by the kind of their items. */
export type ProtobufKind = 'Pod' | 'Node' | 'Lease';

const READ = { readUnknownFields: false } as const;

/** The skipping decoders of ./decoder.ts: only the fields the converters read are decoded. */
const decodeFns: Record<ProtobufKind, (raw: Uint8Array, meta: MetaOptions) => View> = { Pod: podView, Node: nodeView, Lease: leaseView };

/** The metadata options of an object or list item (labels as asked, no annotations). */
const ITEM: Readonly<Record<'labels' | 'noLabels', MetaOptions>> = { labels: { annotations: false, labels: true }, noLabels: { annotations: false, labels: false } };

/**
 * Decodes one enveloped object of `kind` into its view.
 * @param withAnnotations keep `metadata.annotations` (a watch bookmark's initial-events-end mark; no converter reads them).
 * @param withLabels keep `metadata.labels` (default true; false where the converter drops them, see {@link MetaOptions}).
 * @throws {WireFormatError} when the envelope is malformed or names another kind; a
 *   `MalformedMessage` (./decoder.ts) when the object's bytes do not decode.
 */
export function decodeObject(kind: ProtobufKind, bytes: Uint8Array, withAnnotations = false, withLabels = true): View {
  const env = unwrapEnvelope(bytes);
  if (env.kind !== kind) throw new WireFormatError(`expected a ${kind}, got ${env.kind || 'no kind'}`);
  return decodeFns[kind](env.raw, withAnnotations ? { annotations: true, labels: withLabels } : withLabels ? ITEM.labels : ITEM.noLabels);
}

/** One decoded page of a list: the JSON list shape src/kube/listwatch.ts `ListPage` reads. */
export interface ListView {
  metadata: { resourceVersion: string; continue?: string };
  /** Each item's view, or for an item that did not decode its keyed `UndecodableObject`. */
  items: (View | UndecodableObject)[];
  /** Items whose bytes did not decode (each is in `items` as an `UndecodableObject`). */
  malformed: number;
}

/**
 * The keyed unreadable object of an enveloped or bare object's bytes that did not decode.
 * @param raw the object's message bytes (the envelope's `raw`).
 */
function undecodable(raw: Uint8Array, err: unknown): UndecodableObject {
  return new UndecodableObject(undecodableMeta(raw), err instanceof Error ? err.message : String(err));
}

/**
 * Decodes an enveloped `<kind>List`. Items are decoded one by one, so a malformed item becomes a
 * keyed `UndecodableObject` (and is counted in `malformed`) instead of failing the page: the
 * informer's cache then applies the JSON path's rules to it (src/kube/informercache.ts).
 * @param withLabels keep each item's `metadata.labels` (default true).
 * @throws {WireFormatError} when the envelope or the list's own framing is malformed, or it is not a `<kind>List`.
 */
export function decodeList(kind: ProtobufKind, bytes: Uint8Array, withLabels = true): ListView {
  const env = unwrapEnvelope(bytes);
  if (env.kind !== `${kind}List`) throw new WireFormatError(`expected a ${kind}List, got ${env.kind || 'no kind'}`);
  const decode = decodeFns[kind];
  const meta = withLabels ? ITEM.labels : ITEM.noLabels;
  const out: ListView = { metadata: { resourceVersion: '' }, items: [], malformed: 0 };
  try {
    // PodList, NodeList and LeaseList all are `metadata = 1 (ListMeta)`, `items = 2 (repeated <kind>)`.
    const r = new BinaryReader(env.raw);
    while (r.pos < r.len) {
      const [no, wt] = r.tag();
      if (no === 1 && wt === WireType.LengthDelimited) {
        const lm = fromBinary(ListMetaSchema, r.bytes(), READ);
        out.metadata.resourceVersion = lm.resourceVersion;
        if (lm.continue !== '') out.metadata.continue = lm.continue;
      } else if (no === 2 && wt === WireType.LengthDelimited) {
        const item = r.bytes();
        try {
          out.items.push(decode(item, meta));
        } catch (err) {
          out.items.push(undecodable(item, err));
          out.malformed++;
        }
      } else {
        r.skip(wt, no);
      }
    }
  } catch (err) {
    throw new WireFormatError(`${kind}List: ${err instanceof Error ? err.message : String(err)}`);
  }
  return out;
}

/** One decoded watch frame: the event type and its object's view. */
export interface WatchEventView {
  type: string;
  /**
   * The object's view; when {@link WatchEventView.undecodable} is set, the keyed
   * `UndecodableObject` of an ADDED, MODIFIED or DELETED event, else `undefined`.
   */
  object: View | UndecodableObject | undefined;
  /** Why the event could not be read (its object did not decode, or its type is none of client-go's). */
  undecodable?: string;
}

/** The event types client-go's watch decoder accepts (k8s.io/client-go v0.37.2 `rest/watch/decoder.go`). */
const EVENT_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'ERROR', 'BOOKMARK']);

/**
 * Decodes one watch frame (a `metav1.WatchEvent` without envelope). An ERROR event's object is a
 * `metav1.Status` (`{code, reason, message}`); a BOOKMARK keeps its annotations.
 * @param withLabels keep the object's `metadata.labels` (default true).
 * @throws {WireFormatError} when the frame is not a WatchEvent (the stream is unusable). An event
 *   whose object does not decode, or whose type client-go refuses, is returned with `undecodable`
 *   set (the stream ends there and the informer relists, as client-go's reflector does).
 */
export function decodeWatchEvent(kind: ProtobufKind, frameBytes: Uint8Array, withLabels = true): WatchEventView {
  let ev;
  try {
    // The skipping reader (./decoder.ts) rather than the reflective fromBinary: one frame per event.
    ev = watchEventFields(frameBytes);
  } catch (err) {
    throw new WireFormatError(`watch frame: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (ev.type === '') throw new WireFormatError('watch frame: WatchEvent without a type');
  if (!EVENT_TYPES.has(ev.type)) return { type: ev.type, object: undefined, undecodable: `invalid watch event type ${JSON.stringify(ev.type)}` };
  const raw = ev.raw;
  try {
    if (ev.type === 'ERROR') return { type: ev.type, object: statusView(raw) };
    return { type: ev.type, object: decodeObject(kind, raw, ev.type === 'BOOKMARK', withLabels) };
  } catch (err) {
    const why = `${ev.type} event: ${err instanceof Error ? err.message : String(err)}`;
    if (ev.type === 'ERROR' || ev.type === 'BOOKMARK') return { type: ev.type, object: undefined, undecodable: why };
    let object: UndecodableObject;
    try {
      object = undecodable(unwrapEnvelope(raw).raw, err);
    } catch {
      object = new UndecodableObject({}, why); // not even the envelope: no key
    }
    return { type: ev.type, object, undecodable: why };
  }
}

/** A watch ERROR event's enveloped `metav1.Status`. */
function statusView(raw: Uint8Array): View {
  const env = unwrapEnvelope(raw);
  const s = fromBinary(StatusSchema, env.raw, READ);
  return { kind: 'Status', code: s.code, reason: s.reason, message: s.message };
}
