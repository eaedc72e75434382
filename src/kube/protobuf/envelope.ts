/**
 * The Kubernetes protobuf wire format around a message: the 4-byte envelope magic, the
 * `runtime.Unknown` envelope, and the length-delimited frames of a protobuf watch stream.
 *
 * Mirrors k8s.io/apimachinery v0.37.2 `pkg/runtime/serializer/protobuf/protobuf.go` (`Serializer.Decode`:
 * the prefix `k8s\x00`, then a `runtime.Unknown` whose `raw` holds the object and whose `typeMeta`
 * names it) and `pkg/util/framer/framer.go` (`lengthDelimitedFrameReader`: a 4-byte big-endian length,
 * then that many bytes). A watch frame is a `metav1.WatchEvent` written by the raw serializer (no
 * prefix) whose `object.raw` is an enveloped object. Pure: no I/O.
 */
import { unknownFields, type UnknownFields } from './decoder.js';
import { PROTOBUF_CONTENT_TYPE } from '../contenttype.js';

/** The envelope prefix: `k8s` and the encoding style 0 (`protoEncodingPrefix`). */
export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/**
 * Largest watch frame we accept, bytes. A corrupted length prefix would otherwise make the reader
 * wait for (and buffer) up to 4 GiB; etcd's own request limit is 1.5 MiB per object, and a frame holds one.
 */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** An error of the wire format itself (bad magic, bad frame, undecodable envelope): the whole stream or body is unusable. */
export class WireFormatError extends Error {
  override readonly name = 'WireFormatError';
}

/** One decoded envelope: the object's `apiVersion` and `kind` and its protobuf bytes. */
export interface Envelope {
  apiVersion: string;
  kind: string;
  /** The object's own message bytes (a view into the input, not a copy). */
  raw: Uint8Array;
}

/** True when `bytes` starts with {@link PROTOBUF_MAGIC}. */
export function hasProtobufMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00;
}

/**
 * Opens an enveloped object (`k8s\x00` + `runtime.Unknown`).
 * @throws {WireFormatError} when the magic is missing, the Unknown does not decode, or it carries a
 *   `contentEncoding` (none is defined; upstream rejects them too) or a non-protobuf `contentType`.
 */
export function unwrapEnvelope(bytes: Uint8Array): Envelope {
  if (!hasProtobufMagic(bytes)) throw new WireFormatError('protobuf envelope: missing the k8s\\x00 prefix');
  let unknown: UnknownFields;
  try {
    // The skipping reader of ./decoder.ts, not @bufbuild/protobuf's reflective fromBinary: one
    // envelope per object (30,060 at a 1,002 × 30 start), and the reflective decode built a message
    // and its typeMeta for each (3–5 % of the start-up profile's CPU to caches synced, issue 29).
    unknown = unknownFields(bytes.subarray(4));
  } catch (err) {
    throw new WireFormatError(`protobuf envelope: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (unknown.contentEncoding !== '') throw new WireFormatError(`protobuf envelope: unsupported contentEncoding ${unknown.contentEncoding}`);
  if (unknown.contentType !== '' && unknown.contentType !== PROTOBUF_CONTENT_TYPE) {
    throw new WireFormatError(`protobuf envelope: unexpected contentType ${unknown.contentType}`);
  }
  // The reader's result is already an Envelope (and more): no second object per event.
  return unknown;
}

/**
 * Splits a byte stream into length-delimited frames (framer.go `lengthDelimitedFrameReader`). Feed it
 * chunks as they arrive; each call returns the frames completed so far.
 *
 * Frames are views, not copies: into the chunk itself while nothing is buffered (the common case,
 * a chunk of whole frames), else into the reader's buffer. A watch-list start of 30,060 pods copied
 * every byte twice before (into the buffer, then out of it), about 45 MB of short-lived garbage for
 * the young generation (issue 29's start-up CPU).
 */
export class FrameReader {
  #buf: Uint8Array = new Uint8Array(0);
  #start = 0;
  #end = 0;

  /**
   * Takes `chunk` and returns every complete frame. Each frame is a view that stays valid only until
   * the next `push` (which may reuse the buffer, and the caller may reuse its chunk): decode it, or
   * copy it (`slice()`) to keep it.
   * @throws {WireFormatError} when a length prefix exceeds {@link MAX_FRAME_BYTES}: the stream can
   *   no longer be split reliably.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    const direct = this.#end === this.#start;
    let b: Uint8Array;
    let s: number;
    let end: number;
    if (direct) {
      b = chunk;
      s = 0;
      end = chunk.length;
    } else {
      this.#append(chunk);
      b = this.#buf;
      s = this.#start;
      end = this.#end;
    }
    const frames: Uint8Array[] = [];
    for (;;) {
      const avail = end - s;
      if (avail < 4) break;
      const len = ((b[s]! << 24) | (b[s + 1]! << 16) | (b[s + 2]! << 8) | b[s + 3]!) >>> 0;
      if (len > MAX_FRAME_BYTES) throw new WireFormatError(`watch frame of ${len} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`);
      if (avail < 4 + len) break;
      frames.push(b.subarray(s + 4, s + 4 + len));
      s += 4 + len;
    }
    if (direct) {
      // Only the chunk's incomplete tail is kept, copied: the chunk is the caller's.
      this.#start = this.#end = 0;
      if (s < end) this.#append(chunk.subarray(s, end));
    } else if (s === end) this.#start = this.#end = 0;
    else this.#start = s;
    return frames;
  }

  /** Bytes of an incomplete frame still buffered (a stream that ends with some was cut mid-frame). */
  get pending(): number {
    return this.#end - this.#start;
  }

  #append(chunk: Uint8Array): void {
    const need = this.#end - this.#start + chunk.length;
    if (this.#end + chunk.length > this.#buf.length) {
      // Compact, and grow geometrically so a large frame arriving in small chunks stays linear.
      const next = need > this.#buf.length ? new Uint8Array(Math.max(need, this.#buf.length * 2, 64 * 1024)) : this.#buf;
      // TypedArray.set copies correctly when source and target share a buffer.
      next.set(this.#buf.subarray(this.#start, this.#end), 0);
      this.#buf = next;
      this.#end -= this.#start;
      this.#start = 0;
    }
    this.#buf.set(chunk, this.#end);
    this.#end += chunk.length;
  }
}

/**
 * Frames `messages` as a protobuf watch stream does (4-byte big-endian length + bytes). The inverse
 * of {@link FrameReader}; used by tests and the decode benchmark.
 */
export function frame(messages: readonly Uint8Array[]): Uint8Array {
  const total = messages.reduce((n, m) => n + 4 + m.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const m of messages) {
    view.setUint32(at, m.length, false);
    out.set(m, at + 4);
    at += 4 + m.length;
  }
  return out;
}
