/**
 * The byte-level reading rules of upstream's protobuf decoder, for ./decoder.ts and ./validate.ts:
 * kube-controller-manager reads Pods, Nodes and Leases with the gogo-generated `Unmarshal` methods
 * of k8s.io/api v0.37.2 (`core/v1/generated.pb.go`, `coordination/v1/generated.pb.go`,
 * k8s.io/apimachinery `pkg/apis/meta/v1/generated.pb.go`), so a byte string is readable here
 * exactly when it is readable there, and reads as the same value (issue 53: the wire format never
 * changes a decision). What that means, rule by rule:
 *
 * - Varints are read into a uint64, at most 10 bytes (`ErrIntOverflowGenerated` after); bits past
 *   63 are dropped. A length is Go's `int` of that: negative (bit 63 set) is
 *   `ErrInvalidLengthGenerated`, past the message's end is `io.ErrUnexpectedEOF`.
 * - A tag's field number is `int32(wire >> 3)` (bits 3..34, signed); `<= 0` is an illegal tag, wire
 *   type 4 (end group) where a field starts is an error, and so are wire types 6 and 7.
 * - An unknown field is stepped over as `skipGenerated` does, groups (wire types 3 and 4) included.
 * - Strings are bytes in Go: never refused for their encoding. What the JSON path sees of them is
 *   what kube-apiserver's JSON encoder writes (encoding/json `appendString`): every byte that does
 *   not start a valid UTF-8 sequence becomes U+FFFD, one per byte ({@link goJsonString}).
 *
 * Pure: no I/O. Every reader throws {@link MalformedMessage} where upstream's `Unmarshal` returns an error.
 */
import { isUtf8 } from 'node:buffer';

/** Bytes that do not parse as the message they should be (upstream's `Unmarshal` would return an error). */
export class MalformedMessage extends Error {
  override readonly name = 'MalformedMessage';
}

/**
 * The largest field number a tag reports: k8s.io/api's field numbers are far below it, so a larger
 * one (Go reads up to 2^31 - 1) is an unknown field either way, and `tag >>> 3` stays exact.
 */
const FIELD_CLAMP = 1 << 28;

const TWO_POW_7I = [1, 2 ** 7, 2 ** 14, 2 ** 21, 2 ** 28];

/**
 * The string kube-apiserver's JSON encoder writes for the bytes `b[s, e)`: valid UTF-8 as it is
 * (a leading U+FEFF included), and U+FFFD for every byte where `utf8.DecodeRune` reports an
 * invalid encoding (`RuneError` with size 1), as encoding/json's `appendString` does. So a
 * truncated three-byte sequence `E2 82` gives two U+FFFD, where a WHATWG decoder gives one.
 * Never throws.
 */
export function goJsonString(b: Buffer, s: number, e: number): string {
  for (let i = s; i < e; i++) {
    if (b[i]! >= 0x80) {
      // Nearly every string is ASCII (names, uids, reasons, keys), where latin1 and UTF-8 agree:
      // one native slice gives a flat one-byte string (issue 29: building one a character at a time
      // cost about twice the CPU in a cold start).
      return isUtf8(b.subarray(s, e)) ? b.toString('utf8', s, e) : replaceInvalid(b, s, e);
    }
  }
  return b.toString('latin1', s, e);
}

/** {@link goJsonString} of bytes that are not valid UTF-8: valid runs as they are, U+FFFD per invalid byte. */
function replaceInvalid(b: Buffer, s: number, e: number): string {
  let out = '';
  let run = s;
  let i = s;
  while (i < e) {
    const n = goRuneLength(b, i, e);
    if (n > 0) {
      i += n;
      continue;
    }
    out += b.toString('utf8', run, i) + '\uFFFD';
    i++;
    run = i;
  }
  return out + b.toString('utf8', run, e);
}

/**
 * The length of the valid UTF-8 sequence at `b[i]` (1 to 4), or 0 where Go's `utf8.DecodeRune`
 * reports `RuneError` with size 1 (unicode/utf8 `first` and `acceptRanges`).
 */
function goRuneLength(b: Buffer, i: number, e: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (j: number, lo = 0x80, hi = 0xbf): boolean => j < e && b[j]! >= lo && b[j]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const lo = c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

/** A cursor over one message: bytes `[pos, end)` of `b`, read by upstream's rules (see the module comment). */
export class Reader {
  /** @param end where the message ends; ./validate.ts narrows and widens it back to check a nested message without a new reader. */
  constructor(
    readonly b: Buffer,
    public pos: number,
    public end: number,
  ) {}

  /** A reader over all of `bytes` (a Buffer view of the same memory, not a copy, when it is not one). */
  static of(bytes: Uint8Array): Reader {
    const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return new Reader(b, 0, b.length);
  }

  get more(): boolean {
    return this.pos < this.end;
  }

  /** The next byte of a varint. @throws {MalformedMessage} at the end of the message. */
  #byte(): number {
    if (this.pos >= this.end) throw new MalformedMessage('truncated varint');
    return this.b[this.pos++]!;
  }

  /** Steps over one varint (at most 10 bytes). */
  skipVarint(): void {
    for (let i = 0; i < 10; i++) if (this.#byte() < 0x80) return;
    throw new MalformedMessage('varint longer than 10 bytes');
  }

  /**
   * A length prefix as Go's `int`. @throws {MalformedMessage} when it is negative (bit 63 set) or
   * runs past the end of the message.
   */
  length(): number {
    let c = this.#byte();
    let x = c & 0x7f;
    if (c >= 0x80) {
      let mul = 128;
      for (let i = 1; ; i++) {
        c = this.#byte();
        if (i === 9) {
          if (c >= 0x80) throw new MalformedMessage('varint longer than 10 bytes');
          if (c & 1) throw new MalformedMessage('negative length');
          break; // the 10th byte's other bits are past bit 63: Go drops them
        }
        x += (c & 0x7f) * mul;
        if (c < 0x80) break;
        mul *= 128;
      }
    }
    if (x > this.end - this.pos) throw new MalformedMessage('length past the end of its message');
    return x;
  }

  /** A non-negative varint that is known to be small (a count, a flag); bits past 63 dropped, exact below 2^53. */
  uvarint(): number {
    let x = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const c = this.#byte();
      x += (i === 9 ? c & 1 : c & 0x7f) * mul;
      if (c < 0x80) return x;
      mul *= 128;
    }
    throw new MalformedMessage('varint longer than 10 bytes');
  }

  /** A `bool` as Go reads it: `v != 0` over the 64 bits of the varint. */
  bool(): boolean {
    let set = false;
    for (let i = 0; i < 10; i++) {
      const c = this.#byte();
      if ((i === 9 ? c & 1 : c & 0x7f) !== 0) set = true;
      if (c < 0x80) return set;
    }
    throw new MalformedMessage('varint longer than 10 bytes');
  }

  /** A signed int64 varint as a number: two's complement over 64 bits, rounded to the nearest double as JSON.parse rounds Go's decimal. */
  int64(): number {
    const start = this.pos;
    const x = this.uvarint();
    if (this.pos - start < 8) return x; // < 2^49: positive and exact
    // Rare: large or negative. Re-read exactly with BigInt (asIntN drops the bits past 63, as Go).
    let big = 0n;
    for (let i = this.pos - 1; i >= start; i--) big = (big << 7n) | BigInt(this.b[i]! & 0x7f);
    return Number(BigInt.asIntN(64, big));
  }

  /** A signed int32 varint as Go reads it: the low 32 bits of the varint. */
  int32(): number {
    let x = 0;
    for (let i = 0; i < 10; i++) {
      const c = this.#byte();
      if (i < 5) x += (c & 0x7f) * TWO_POW_7I[i]!;
      if (c < 0x80) return x | 0; // ToInt32: the low 32 bits, signed (x < 2^35 is exact)
    }
    throw new MalformedMessage('varint longer than 10 bytes');
  }

  /**
   * The next field's tag of a message, as `fieldNumber << 3 | wireType` (the field number clamped
   * to 2^28: see FIELD_CLAMP). @throws {MalformedMessage} for an illegal field number (`<= 0`) or
   * an end-group tag, as the generated `Unmarshal` loop does.
   */
  tag(): number {
    const c = this.#byte();
    if (c < 0x80) {
      if (c < 8) throw new MalformedMessage(`illegal tag ${c}`);
      if ((c & 7) === 4) throw new MalformedMessage('end group for non-group');
      return c;
    }
    const t = this.#wideTag(c);
    const no = Math.floor(t / 8) | 0; // int32(wire >> 3)
    const wt = t % 8;
    if (no <= 0) throw new MalformedMessage(`illegal tag ${no}`);
    if (wt === 4) throw new MalformedMessage('end group for non-group');
    return Math.min(no, FIELD_CLAMP) * 8 + wt;
  }

  /**
   * A tag inside a map entry, where the generated code checks neither field number nor wire type:
   * `fieldNumber << 3 | wireType` with any field number other than 1 and 2 reported as 0.
   */
  entryTag(): number {
    const c = this.#byte();
    const t = c < 0x80 ? c : this.#wideTag(c);
    const no = Math.floor(t / 8) | 0;
    return (no === 1 || no === 2 ? no : 0) * 8 + (t % 8);
  }

  /** Bits 0..34 of a varint whose first byte `c` has its continuation bit set (the rest is read and dropped). */
  #wideTag(c: number): number {
    let t = c & 0x7f;
    for (let i = 1; i < 10; i++) {
      const d = this.#byte();
      if (i < 5) t += (d & 0x7f) * TWO_POW_7I[i]!;
      if (d < 0x80) return t;
    }
    throw new MalformedMessage('varint longer than 10 bytes');
  }

  /** A length-delimited field's sub-reader. */
  sub(): Reader {
    const len = this.length();
    const start = this.pos;
    this.pos += len;
    return new Reader(this.b, start, this.pos);
  }

  /** A string field as the JSON path sees it ({@link goJsonString}). */
  string(): string {
    const len = this.length();
    const s = this.pos;
    this.pos += len;
    return goJsonString(this.b, s, this.pos);
  }

  /** A string field's raw bytes as a latin1 string (one character per byte: exact bytes, for keys and grammars). */
  rawString(): string {
    const len = this.length();
    const s = this.pos;
    this.pos += len;
    return this.b.toString('latin1', s, this.pos);
  }

  /** A length-delimited `bytes` field: a view into the input, not a copy. */
  bytes(): Uint8Array {
    const len = this.length();
    const s = this.pos;
    this.pos += len;
    return this.b.subarray(s, this.pos);
  }

  /**
   * Steps over a field of wire type `wt` whose tag was read, as `skipGenerated` does (groups
   * included: a start group is stepped over up to its matching end group, whatever their field numbers).
   * @throws {MalformedMessage} for wire types 4, 6 and 7 and for a field past the end of the message.
   */
  skip(wt: number): void {
    if (wt === 3) {
      this.#group();
      return;
    }
    this.#one(wt);
    if (this.pos > this.end) throw new MalformedMessage('field past the end of its message');
  }

  /** One non-group field of `skipGenerated` (the position may end past `end`: the caller checks). */
  #one(wt: number): void {
    switch (wt) {
      case 0:
        this.skipVarint();
        return;
      case 1:
        this.pos += 8;
        return;
      case 2: {
        // Not `this.length()`: inside a group, skipGenerated reads past the end and fails at the loop.
        let x = 0;
        let mul = 1;
        for (let i = 0; i < 10; i++) {
          const c = this.#byte();
          if (i === 9) {
            if (c >= 0x80) throw new MalformedMessage('varint longer than 10 bytes');
            if (c & 1) throw new MalformedMessage('negative length');
            break;
          }
          x += (c & 0x7f) * mul;
          if (c < 0x80) break;
          mul *= 128;
        }
        this.pos += x;
        return;
      }
      case 5:
        this.pos += 4;
        return;
      default:
        throw new MalformedMessage(`illegal wire type ${wt}`);
    }
  }

  /** The rest of a group whose start tag was read: `skipGenerated`'s depth count, to the matching end. */
  #group(): void {
    let depth = 1;
    for (;;) {
      if (this.pos >= this.end) throw new MalformedMessage('group past the end of its message');
      let c = this.#byte();
      if (c >= 0x80) c = this.#wideTag(c);
      const wt = c % 8;
      if (wt === 3) depth++;
      else if (wt === 4) {
        if (--depth === 0) return;
      } else this.#one(wt);
    }
  }
}
