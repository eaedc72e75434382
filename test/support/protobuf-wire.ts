/**
 * The protobuf wire around an object, as kube-apiserver writes it, for tests that feed bytes to the
 * project's decoder (src/kube/protobuf/): the `k8s\x00` envelope, a watch frame, and strings that
 * carry bytes no JavaScript string can (not UTF-8), as a Go client writes them (issue 53).
 *
 * Raw bytes: the object is built with @bufbuild/protobuf with each such string set to a placeholder
 * of the same byte length, encoded, and the placeholders' bytes replaced by the raw bytes, so every
 * length prefix stays right. Pure: no I/O.
 */
import { create, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import { PROTOBUF_MAGIC } from '../../src/kube/protobuf/envelope.js';
import { WatchEventSchema } from '../../src/kube/protobuf/gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';
import { UnknownSchema } from '../../src/kube/protobuf/gen/k8s.io/apimachinery/pkg/runtime/generated_pb.js';

/**
 * A placeholder string of `bytes.length` ASCII bytes, unique enough to be found once in an
 * encoded object, and the raw bytes it stands for.
 */
export interface RawString {
  placeholder: string;
  bytes: Uint8Array;
}

let serial = 0;

/** A {@link RawString} for `bytes` (at least 8 of them: the placeholder must be unique in the object). @throws Error for fewer. */
export function rawString(bytes: readonly number[]): RawString {
  if (bytes.length < 8) throw new Error('rawString: give at least 8 bytes (pad with ASCII)');
  const tag = `~${(serial++).toString(36)}~`;
  return { placeholder: (tag + 'Z'.repeat(bytes.length)).slice(0, bytes.length), bytes: Uint8Array.from(bytes) };
}

/**
 * Replaces, in place, each of `raws`' placeholders in `encoded` (a message's bytes) by its raw bytes.
 * @returns `encoded`. @throws Error when a placeholder is not found exactly once.
 */
export function withRawBytes(encoded: Uint8Array, raws: readonly RawString[]): Uint8Array {
  if (raws.length === 0) return encoded;
  const text = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength).toString('latin1');
  for (const r of raws) {
    const at = text.indexOf(r.placeholder);
    if (at < 0 || text.indexOf(r.placeholder, at + 1) >= 0) throw new Error(`placeholder ${r.placeholder} not found exactly once`);
    encoded.set(r.bytes, at);
  }
  return encoded;
}

/** `k8s\x00` + runtime.Unknown{typeMeta{apiVersion, kind}, raw}: how the API server envelopes an object's message bytes `raw`. */
export function envelopeRaw(kind: string, apiVersion: string, raw: Uint8Array): Uint8Array {
  const unknown = toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion, kind }, raw }));
  const out = new Uint8Array(4 + unknown.length);
  out.set(PROTOBUF_MAGIC, 0);
  out.set(unknown, 4);
  return out;
}

/** {@link envelopeRaw} of the message `init` of `schema`. */
export function envelope<D extends DescMessage>(kind: string, apiVersion: string, schema: D, init: MessageInitShape<D>): Uint8Array {
  return envelopeRaw(kind, apiVersion, toBinary(schema, create(schema, init)));
}

/** A watch frame's message: `metav1.WatchEvent{type, object{raw}}`, `raw` an enveloped object (no length prefix: `frame` adds it). */
export function watchFrame(type: string, raw: Uint8Array): Uint8Array {
  return toBinary(WatchEventSchema, create(WatchEventSchema, { type, object: { raw } }));
}
