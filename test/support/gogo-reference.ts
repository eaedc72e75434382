/**
 * The reference for the protobuf property test (test/unit/wire-equivalence.test.ts, issue 53): a
 * full reflective decode of a Pod, Node or Lease by the rules of upstream's gogo-generated
 * `Unmarshal` (k8s.io/api v0.37.2 `generated.pb.go`, k8s.io/apimachinery's `time_proto.go`,
 * `micro_time_proto.go`, `quantity_proto.go`), followed by what kube-apiserver's JSON encoder
 * writes for it (encoding/json with the Go types' json tags, `metav1.Time.MarshalJSON`), as text.
 * The test parses that text and runs the JSON path's converters on it.
 *
 * Written apart from src/kube/protobuf/ on purpose, and plainly rather than fast: varints are
 * BigInts, every field of every message is built (nothing is skipped), strings stay bytes until
 * the JSON is written. @bufbuild/protobuf's `fromBinary` is not the reference here because it
 * reads some bytes differently from gogo: it checks no wire type of a known field, merges a
 * repeated `metav1.Time` field by field (gogo replaces it and drops the nanoseconds), reads a
 * map entry only within the entry, takes a length's low 32 bits, matches a group's end field
 * number, and knows no `ParseQuantity`. Where the two agree (well-formed messages),
 * test/unit/wire-equivalence.test.ts also checks this reference against it.
 */
import type { DescField, DescMessage } from '@bufbuild/protobuf';
import { ScalarType } from '@bufbuild/protobuf';

/** Upstream's `Unmarshal` would return an error for these bytes. */
export class GoDecodeError extends Error {}

type GoValue = GoMessage | GoTime | Buffer | bigint | GoValue[] | Map<string, GoValue>;
interface GoMessage {
  kind: 'message';
  desc: DescMessage;
  fields: Map<number, GoValue>;
}
interface GoTime {
  kind: 'time';
  micro: boolean;
  /** Empty message: the zero time. */
  zero: boolean;
  seconds: bigint;
  nanos: bigint;
}

const TIME = 'k8s.io.apimachinery.pkg.apis.meta.v1.Time';
const MICRO_TIME = 'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime';
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';

/** A bounded cursor; `l` is the end of the message being read (gogo's `l`). */
class Cursor {
  constructor(
    readonly b: Buffer,
    public i: number,
    readonly l: number,
  ) {}

  /** gogo's varint loop into a uint64: at most 10 bytes, bits past 63 dropped. */
  varint(): bigint {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (shift >= 64n) throw new GoDecodeError('ErrIntOverflowGenerated');
      if (this.i >= this.l) throw new GoDecodeError('io.ErrUnexpectedEOF');
      const c = this.b[this.i++]!;
      v |= BigInt(c & 0x7f) << shift;
      if (c < 0x80) break;
    }
    return BigInt.asUintN(64, v);
  }

  /** A length as Go's `int`, checked against the end `l`. */
  length(): number {
    const n = BigInt.asIntN(64, this.varint());
    if (n < 0n) throw new GoDecodeError('ErrInvalidLengthGenerated');
    if (BigInt(this.i) + n > BigInt(this.l)) throw new GoDecodeError('io.ErrUnexpectedEOF');
    return Number(n);
  }
}

/** skipGenerated, from the tag at `c.i`; returns the position after the field (which may be past `l`). */
function skipGenerated(c: Cursor): number {
  let depth = 0;
  while (c.i < c.l) {
    const wt = Number(c.varint() & 7n);
    if (wt === 0) {
      c.varint();
    } else if (wt === 1) c.i += 8;
    else if (wt === 2) {
      const n = BigInt.asIntN(64, c.varint());
      if (n < 0n) throw new GoDecodeError('ErrInvalidLengthGenerated');
      c.i += Number(n);
    } else if (wt === 3) depth++;
    else if (wt === 4) {
      if (depth === 0) throw new GoDecodeError('ErrUnexpectedEndOfGroupGenerated');
      depth--;
    } else if (wt === 5) c.i += 4;
    else throw new GoDecodeError(`illegal wireType ${wt}`);
    if (depth === 0) return c.i;
  }
  throw new GoDecodeError('io.ErrUnexpectedEOF');
}

function isVarintScalar(t: ScalarType): boolean {
  return ![ScalarType.STRING, ScalarType.BYTES, ScalarType.DOUBLE, ScalarType.FLOAT, ScalarType.FIXED32, ScalarType.FIXED64, ScalarType.SFIXED32, ScalarType.SFIXED64].includes(t);
}

/** Decodes the message `desc` from `b[start, end)` into `into` (merging), as the generated `Unmarshal`. */
export function goDecode(desc: DescMessage, b: Buffer, start = 0, end = b.length, into?: GoMessage): GoMessage {
  const m: GoMessage = into ?? { kind: 'message', desc, fields: new Map() };
  const c = new Cursor(b, start, end);
  while (c.i < end) {
    const pre = c.i;
    const wire = c.varint();
    const no = Number(BigInt.asIntN(32, wire >> 3n));
    const wt = Number(wire & 7n);
    if (wt === 4) throw new GoDecodeError('wiretype end group for non-group');
    if (no <= 0) throw new GoDecodeError(`illegal tag ${no}`);
    const f = desc.fields.find((x) => x.number === no);
    if (f === undefined) {
      c.i = pre;
      const next = skipGenerated(c);
      if (next > end) throw new GoDecodeError('io.ErrUnexpectedEOF');
      c.i = next;
      continue;
    }
    readKnown(m, f, c, wt);
  }
  return m;
}

function wrongWireType(f: DescField, wt: number): GoDecodeError {
  return new GoDecodeError(`wrong wireType = ${wt} for field ${f.name}`);
}

function readKnown(m: GoMessage, f: DescField, c: Cursor, wt: number): void {
  switch (f.fieldKind) {
    case 'scalar':
    case 'enum': {
      const varint = f.fieldKind === 'enum' || isVarintScalar(f.scalar);
      if (varint) {
        if (wt !== 0) throw wrongWireType(f, wt);
        m.fields.set(f.number, c.varint());
      } else {
        if (wt !== 2) throw wrongWireType(f, wt); // strings and bytes (k8s has no fixed-width scalars here)
        const n = c.length();
        m.fields.set(f.number, c.b.subarray(c.i, c.i + n));
        c.i += n;
      }
      return;
    }
    case 'message': {
      if (wt !== 2) throw wrongWireType(f, wt);
      const n = c.length();
      m.fields.set(f.number, readMessageValue(f.message, c.b, c.i, c.i + n, m.fields.get(f.number)));
      c.i += n;
      return;
    }
    case 'list': {
      const list = (m.fields.get(f.number) as GoValue[] | undefined) ?? [];
      m.fields.set(f.number, list);
      if (f.listKind === 'message') {
        if (wt !== 2) throw wrongWireType(f, wt);
        const n = c.length();
        list.push(readMessageValue(f.message, c.b, c.i, c.i + n, undefined));
        c.i += n;
      } else if (f.listKind === 'scalar' && !isVarintScalar(f.scalar)) {
        if (wt !== 2) throw wrongWireType(f, wt);
        const n = c.length();
        list.push(c.b.subarray(c.i, c.i + n));
        c.i += n;
      } else if (wt === 0) list.push(c.varint());
      else if (wt === 2) {
        const n = c.length();
        const post = c.i + n;
        while (c.i < post) list.push(c.varint()); // bounded by the message's end, not the list's
      } else throw wrongWireType(f, wt);
      return;
    }
    case 'map': {
      if (wt !== 2) throw wrongWireType(f, wt);
      const n = c.length();
      const post = c.i + n;
      let key: Buffer = Buffer.alloc(0);
      let value: GoValue | undefined;
      while (c.i < post) {
        const pre = c.i;
        const entryNo = Number(BigInt.asIntN(32, c.varint() >> 3n));
        if (entryNo === 1) {
          const k = c.length();
          key = c.b.subarray(c.i, c.i + k);
          c.i += k;
        } else if (entryNo === 2) {
          if (f.mapKind === 'message') {
            const k = c.length();
            value = readMessageValue(f.message, c.b, c.i, c.i + k, undefined);
            c.i += k;
          } else if (f.mapKind === 'scalar' && !isVarintScalar(f.scalar)) {
            const k = c.length();
            value = c.b.subarray(c.i, c.i + k);
            c.i += k;
          } else value = c.varint();
        } else {
          c.i = pre;
          const next = skipGenerated(c);
          if (next > post) throw new GoDecodeError('io.ErrUnexpectedEOF');
          c.i = next;
        }
      }
      c.i = post;
      const map = (m.fields.get(f.number) as Map<string, GoValue> | undefined) ?? new Map<string, GoValue>();
      m.fields.set(f.number, map);
      map.set(key.toString('latin1'), value ?? (f.mapKind === 'message' ? readMessageValue(f.message, c.b, 0, 0, undefined) : Buffer.alloc(0)));
      return;
    }
  }
}

/** A message-typed value: Time and MicroTime replaced whole, Quantity parsed, any other merged into `prev`. */
function readMessageValue(desc: DescMessage, b: Buffer, start: number, end: number, prev: GoValue | undefined): GoValue {
  if (desc.typeName === TIME || desc.typeName === MICRO_TIME) {
    const micro = desc.typeName === MICRO_TIME;
    if (start === end) return { kind: 'time', micro, zero: true, seconds: 0n, nanos: 0n };
    const ts = goDecode(desc, b, start, end);
    return { kind: 'time', micro, zero: false, seconds: BigInt.asIntN(64, (ts.fields.get(1) as bigint | undefined) ?? 0n), nanos: BigInt.asIntN(32, (ts.fields.get(2) as bigint | undefined) ?? 0n) };
  }
  if (desc.typeName === QUANTITY) {
    const q = goDecode(desc, b, start, end);
    const s = q.fields.get(1) as Buffer | undefined;
    if (s !== undefined && !parseQuantityOk(s.toString('latin1'))) throw new GoDecodeError(`quantities must match the regular expression: ${s.toString('latin1')}`);
    return q;
  }
  return goDecode(desc, b, start, end, prev as GoMessage | undefined);
}

/**
 * `resource.ParseQuantity` succeeds: the grammar, the suffix, and the slow path's decimal parse
 * (which needs a digit somewhere before the suffix).
 */
function parseQuantityOk(s: string): boolean {
  if (s === '') return false;
  const m = /^([+-]?)(0*)([0-9]*)(?:(\.)([0-9]*))?((?:[eEinumkKMGTP]*)(?:[+-]?[0-9]*))$/.exec(s);
  if (m === null) return false;
  const [, , zeros, num, , denom = '', suffix = ''] = m;
  const bin: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
  const dec: Record<string, number> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
  let exponent: number;
  let binary = false;
  if (Object.hasOwn(dec, suffix)) exponent = dec[suffix]!;
  else if (Object.hasOwn(bin, suffix)) {
    exponent = bin[suffix]!;
    binary = true;
  } else {
    const e = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
    if (!e) return false;
    const v = BigInt(e[1]!);
    if (v >= 2n ** 63n || v < -(2n ** 63n)) return false;
    exponent = Number(BigInt.asIntN(32, v));
  }
  const anyDigit = /[0-9]/.test(zeros! + num! + denom);
  if (anyDigit) return true;
  // No digit: num "0", denom "": the fast path needs precision >= 0 and scale >= -9.
  const precision = binary ? 15 - 1 - Math.trunc((exponent * 3) / 10) - 1 : 18 - 1;
  const scale = binary ? 0 : exponent;
  return precision >= 0 && scale >= -9;
}

// ---- JSON as kube-apiserver writes it -----------------------------------------------------------

/** Fields that are Go pointers: written when set, even to a zero value. */
const POINTERS = new Set([
  'Toleration.tolerationSeconds',
  'ObjectMeta.deletionGracePeriodSeconds',
  'OwnerReference.controller',
  'OwnerReference.blockOwnerDeletion',
  'LeaseSpec.holderIdentity',
  'LeaseSpec.leaseDurationSeconds',
  'LeaseSpec.leaseTransitions',
  'LeaseSpec.preferredHolder',
  'LeaseSpec.strategy',
]);
/** Fields without `omitempty` (k8s.io/api v0.37.2 `types.go`) among those the converters read: written even when zero. */
const ALWAYS = new Set([
  'NodeCondition.type',
  'NodeCondition.status',
  'PodCondition.type',
  'PodCondition.status',
  'Taint.key',
  'Taint.effect',
  'OwnerReference.apiVersion',
  'OwnerReference.kind',
  'OwnerReference.name',
  'OwnerReference.uid',
  'PersistentVolumeClaimVolumeSource.claimName',
  'CSIVolumeSource.driver',
  'Volume.name',
]);
/** Embedded structs whose fields JSON writes inline (`json:",inline"`). */
const INLINE = new Set(['Volume.volumeSource']);

/** What Go's encoding/json writes for a string of these bytes: U+FFFD for each byte that starts no valid UTF-8 sequence. */
export function goJsonText(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const c0 = bytes[i]!;
    const need = c0 < 0x80 ? 0 : c0 >= 0xc0 && c0 < 0xe0 ? 1 : c0 >= 0xe0 && c0 < 0xf0 ? 2 : c0 >= 0xf0 && c0 < 0xf8 ? 3 : -1;
    let cp = need === 0 ? c0 : need === 1 ? c0 & 0x1f : need === 2 ? c0 & 0x0f : c0 & 0x07;
    let ok = need >= 0 && i + need < bytes.length + (need === 0 ? 1 : 0);
    for (let k = 1; ok && k <= need; k++) {
      const ck = bytes[i + k];
      if (ck === undefined || (ck & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (ck & 0x3f);
    }
    const min = [0, 0x80, 0x800, 0x10000][need] ?? 0;
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (ok) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += '\uFFFD';
      i += 1;
    }
  }
  return JSON.stringify(out);
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

/** `MarshalJSON` of a metav1.Time or MicroTime (`null` for the zero time). */
function timeJson(t: GoTime): string {
  if (t.zero) return 'null';
  // time.Unix(seconds, nanos) normalised; a Time drops its nanos, a MicroTime truncates them toward zero to µs.
  const nanos = t.micro ? t.nanos - (t.nanos % 1000n) : 0n;
  let s = t.seconds + nanos / 1_000_000_000n;
  let ns = nanos % 1_000_000_000n;
  if (ns < 0n) {
    ns += 1_000_000_000n;
    s -= 1n;
  }
  if (s === -62_135_596_800n && ns === 0n) return 'null'; // 0001-01-01: Go's zero time
  const ms = Number(s) * 1000;
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  // Go writes the year as it is: a negative or five-digit year, which Date.parse does not read.
  const y = year < 0 ? `-${pad(-year, 4)}` : pad(year, 4);
  const base = `${y}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  if (!Number.isFinite(ms) || Number.isNaN(d.getTime())) return '"+inf"'; // beyond Date's range: unreadable either way
  return JSON.stringify(t.micro ? `${base}.${pad(Number(ns / 1000n), 6)}Z` : `${base}Z`);
}

function scalarJson(f: DescField, v: bigint | Buffer): string {
  if (Buffer.isBuffer(v)) return f.fieldKind === 'scalar' && f.scalar === ScalarType.BYTES ? JSON.stringify(v.toString('base64')) : goJsonText(v);
  const t = f.fieldKind === 'scalar' || (f.fieldKind === 'list' && f.listKind === 'scalar') || (f.fieldKind === 'map' && f.mapKind === 'scalar') ? f.scalar : ScalarType.INT32;
  if (t === ScalarType.BOOL) return v !== 0n ? 'true' : 'false';
  if (t === ScalarType.INT32 || t === ScalarType.SINT32 || t === ScalarType.SFIXED32) return String(BigInt.asIntN(32, v));
  if (t === ScalarType.UINT32 || t === ScalarType.FIXED32) return String(BigInt.asUintN(32, v));
  if (t === ScalarType.UINT64 || t === ScalarType.FIXED64) return String(v);
  return String(BigInt.asIntN(64, v));
}

function isZero(v: GoValue): boolean {
  if (typeof v === 'bigint') return v === 0n;
  if (Buffer.isBuffer(v)) return v.length === 0;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  return false;
}

function valueJson(f: DescField, v: GoValue): string {
  if (typeof v === 'bigint' || Buffer.isBuffer(v)) return scalarJson(f, v);
  if (Array.isArray(v)) return `[${v.map((x) => valueJson(f, x)).join(',')}]`;
  if (v instanceof Map) {
    // encoding/json: keys sorted by their bytes, each written as a string (colliding ones: JSON.parse keeps the last).
    const keys = [...v.keys()].sort();
    return `{${keys.map((k) => `${goJsonText(Buffer.from(k, 'latin1'))}:${valueJson(f, v.get(k)!)}`).join(',')}}`;
  }
  if (v.kind === 'time') return timeJson(v);
  return messageJson(v);
}

/** A message's JSON object text, with the json-tag rules above. */
export function messageJson(m: GoMessage): string {
  const parts: string[] = [];
  const name = m.desc.name;
  for (const f of m.desc.fields) {
    const id = `${name}.${f.name}`;
    const v = m.fields.get(f.number);
    if (v === undefined) {
      if (ALWAYS.has(id)) parts.push(`${JSON.stringify(f.name)}:${f.fieldKind === 'scalar' && f.scalar === ScalarType.STRING ? '""' : '0'}`);
      continue;
    }
    if (INLINE.has(id)) {
      const inner = messageJson(v as GoMessage).slice(1, -1);
      if (inner !== '') parts.push(inner);
      continue;
    }
    if (!POINTERS.has(id) && !ALWAYS.has(id) && f.fieldKind !== 'message' && isZero(v)) continue; // omitempty
    parts.push(`${JSON.stringify(f.name)}:${valueJson(f, v)}`);
  }
  return `{${parts.join(',')}}`;
}
