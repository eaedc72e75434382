/**
 * The structural check of the fields ./decoder.ts does not read: upstream's gogo-generated
 * `Unmarshal` decodes the whole message, so bytes it refuses anywhere (a wrong wire type of a known
 * field, a truncated container spec, an unparsable resource quantity) fail the whole object there,
 * and must here too, or the two would disagree on whether an object is readable (issue 53).
 *
 * What is checked, per field of the schema (the descriptors generated from k8s.io/api v0.37.2 in
 * ./gen, so no field number is typed in by hand), with nothing built:
 * - a known field's wire type: varint for numbers and bools (a repeated number also packed), length
 *   for strings, bytes, messages and maps, fixed 32/64 for the fixed types; anything else is an error;
 * - messages recursively, by their own schema; map entries as the generated code reads them (no
 *   field-number or wire-type check inside an entry, and a key or value may run past the entry to
 *   the end of its message: the position then goes back to the entry's end);
 * - a packed list's varints may run past the list's length (the generated loop reads to the
 *   message's end, and goes on from where the last varint ended);
 * - `resource.Quantity`, whose hand-written `Unmarshal` (k8s.io/apimachinery `pkg/api/resource/quantity_proto.go`)
 *   fails on a string `ParseQuantity` refuses ({@link quantityParses});
 * - `metav1.Time` and `MicroTime` as the `Timestamp` message they carry;
 * - unknown fields as `skipGenerated` (./reader.ts). Strings are bytes: never checked for UTF-8.
 *
 * Pure: no I/O. {@link skipField} and {@link validateMessage} throw `MalformedMessage` where upstream's `Unmarshal` fails.
 */
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { MalformedMessage, type Reader } from './reader.js';

/** How a known field is read (and so which wire type it must have). */
const enum Kind {
  Varint,
  Varints,
  Fixed64,
  Fixed64s,
  Fixed32,
  Fixed32s,
  Bytes,
  Message,
  Quantity,
  Map,
}

/**
 * One known field's rule: its kind; for a message or a map's message value, the message. Every
 * rule has every property (one object shape: the checks run for every field of every object).
 */
interface Rule {
  readonly kind: Kind;
  readonly message: DescMessage | undefined;
  /** The message's rules, built on first use (messages may nest recursively). */
  rules: Rules | undefined;
  /** A map's value. */
  readonly value: Rule | undefined;
}

function rule(kind: Kind, message?: DescMessage, value?: Rule): Rule {
  return { kind, message, rules: undefined, value };
}

/** A message's rules, by field number. */
export type Rules = ReadonlyArray<Rule | undefined>;

const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';

const rulesByMessage = new Map<string, Rules>();

/** The rules of `desc` (built once per message type). */
export function rulesOf(desc: DescMessage): Rules {
  let rules = rulesByMessage.get(desc.typeName);
  if (rules === undefined) {
    const out: (Rule | undefined)[] = [];
    for (const f of desc.fields) out[f.number] = ruleOf(f);
    rules = out;
    rulesByMessage.set(desc.typeName, rules);
  }
  return rules;
}

function scalarRule(t: ScalarType, repeated: boolean): Rule {
  switch (t) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return rule(Kind.Bytes);
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return rule(repeated ? Kind.Fixed64s : Kind.Fixed64);
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return rule(repeated ? Kind.Fixed32s : Kind.Fixed32);
    default:
      return rule(repeated ? Kind.Varints : Kind.Varint);
  }
}

function messageRule(m: DescMessage): Rule {
  return m.typeName === QUANTITY ? rule(Kind.Quantity) : rule(Kind.Message, m);
}

function ruleOf(f: DescField): Rule {
  switch (f.fieldKind) {
    case 'scalar':
      return scalarRule(f.scalar, false);
    case 'enum':
      return rule(Kind.Varint);
    case 'message':
      return messageRule(f.message);
    case 'list':
      if (f.listKind === 'message') return messageRule(f.message);
      return f.listKind === 'enum' ? rule(Kind.Varints) : scalarRule(f.scalar, true);
    case 'map':
      return rule(Kind.Map, undefined, f.mapKind === 'message' ? messageRule(f.message) : f.mapKind === 'enum' ? rule(Kind.Varint) : scalarRule(f.scalar, false));
  }
}

function expect(wt: number, want: number, no: number): void {
  if (wt !== want) throw new MalformedMessage(`field ${no}: wire type ${wt}, expected ${want}`);
}

/**
 * Steps over field `no` of wire type `wt` (its tag read) of a message with `rules`, checking it as
 * upstream's `Unmarshal` would read it: a known field by its rule, an unknown one as `skipGenerated`.
 * @throws {MalformedMessage} where upstream's `Unmarshal` fails.
 */
export function skipField(r: Reader, rules: Rules, no: number, wt: number): void {
  const rule = rules[no];
  if (rule === undefined) r.skip(wt);
  else readRule(r, rule, no, wt);
}

function readRule(r: Reader, rule: Rule, no: number, wt: number): void {
  switch (rule.kind) {
    case Kind.Varint:
      expect(wt, 0, no);
      r.skipVarint();
      return;
    case Kind.Bytes:
      expect(wt, 2, no);
      skipBytes(r);
      return;
    case Kind.Message:
      expect(wt, 2, no);
      nested(r, (rule.rules ??= rulesOf(rule.message!)));
      return;
    case Kind.Quantity:
      expect(wt, 2, no);
      nested(r, undefined);
      return;
    case Kind.Map:
      expect(wt, 2, no);
      mapEntry(r, rule.value!);
      return;
    case Kind.Varints:
      if (wt === 0) r.skipVarint();
      else if (wt === 2) packed(r, (x) => x.skipVarint());
      else expect(wt, 0, no);
      return;
    case Kind.Fixed64:
    case Kind.Fixed32: {
      const size = rule.kind === Kind.Fixed64 ? 8 : 4;
      expect(wt, size === 8 ? 1 : 5, no);
      fixed(r, size);
      return;
    }
    case Kind.Fixed64s:
    case Kind.Fixed32s: {
      const size = rule.kind === Kind.Fixed64s ? 8 : 4;
      if (wt === (size === 8 ? 1 : 5)) fixed(r, size);
      else if (wt === 2) packed(r, (x) => fixed(x, size));
      else expect(wt, size === 8 ? 1 : 5, no);
      return;
    }
  }
}

/** Steps over a string or bytes field's length and bytes (not `r.pos += r.length()`: that reads `pos` before the length moves it). */
function skipBytes(r: Reader): void {
  const n = r.length();
  r.pos += n;
}

function fixed(r: Reader, size: number): void {
  if (r.pos + size > r.end) throw new MalformedMessage('fixed field past the end of its message');
  r.pos += size;
}

/** A packed list: elements are read until the list's length is reached, each bounded only by the message's end. */
function packed(r: Reader, element: (r: Reader) => void): void {
  const len = r.length();
  const post = r.pos + len;
  while (r.pos < post) element(r);
}

/**
 * One map entry (its tag read), as the generated code reads it: field 1 is the key and field 2 the
 * value whatever their wire types; each may run past the entry up to the message's end; any other
 * field is stepped over and must end within the entry; the position then goes to the entry's end.
 */
function mapEntry(r: Reader, value: Rule): void {
  const len = r.length();
  const post = r.pos + len;
  while (r.pos < post) {
    const tg = r.entryTag();
    const no = tg >>> 3;
    if (no === 1) skipBytes(r);
    else if (no === 2) mapValue(r, value);
    else {
      r.skip(tg & 7);
      if (r.pos > post) throw new MalformedMessage('map entry field past the end of its entry');
    }
  }
  r.pos = post;
}

function mapValue(r: Reader, value: Rule): void {
  switch (value.kind) {
    case Kind.Message:
      nested(r, (value.rules ??= rulesOf(value.message!)));
      return;
    case Kind.Quantity:
      nested(r, undefined);
      return;
    case Kind.Bytes:
      skipBytes(r);
      return;
    case Kind.Fixed64:
    case Kind.Fixed32:
      fixed(r, value.kind === Kind.Fixed64 ? 8 : 4);
      return;
    default:
      r.skipVarint();
  }
}

/**
 * Checks the length-delimited message at `r` (its length prefix next) with `rules`, or as a
 * `resource.Quantity` when `rules` is undefined, and moves past it. The reader is narrowed to the
 * message and widened back, not copied: this runs for every nested message of every object.
 */
function nested(r: Reader, rules: Rules | undefined): void {
  const len = r.length();
  const end = r.end;
  r.end = r.pos + len;
  if (rules === undefined) validateQuantity(r);
  else fields(r, rules);
  r.end = end;
}

/** Checks every field from the reader's position to its end. */
function fields(r: Reader, rules: Rules): void {
  while (r.pos < r.end) {
    const tg = r.tag();
    const no = tg >>> 3;
    const rule = rules[no];
    if (rule === undefined) r.skip(tg & 7);
    else readRule(r, rule, no, tg & 7);
  }
}

/**
 * Checks a whole message of type `desc` (the reader covers exactly its bytes).
 * @throws {MalformedMessage} where upstream's `Unmarshal` fails.
 */
export function validateMessage(r: Reader, desc: DescMessage): void {
  fields(r, rulesOf(desc));
}

/** `resource.Quantity.Unmarshal`: the generated loop, with `ParseQuantity` on field 1. */
function validateQuantity(r: Reader): void {
  while (r.more) {
    const tg = r.tag();
    const no = tg >>> 3;
    const wt = tg & 7;
    if (no === 1) {
      expect(wt, 2, no);
      const s = r.rawString();
      if (!quantityParses(s)) throw new MalformedMessage(`quantity ${JSON.stringify(s)} does not parse`);
    } else r.skip(wt);
  }
}

const isDigit = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  return c >= 0x30 && c <= 0x39;
};
const SUFFIX_LETTERS = 'eEinumkKMGTP';
const DECIMAL_SUFFIX: Readonly<Record<string, number>> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Whether `resource.ParseQuantity` (k8s.io/apimachinery v0.37.2 `pkg/api/resource/quantity.go`)
 * accepts `s` (its bytes, one character each). It fails in three places: the grammar
 * (`parseQuantityString`: after the suffix letters only a sign and digits), the suffix (`interpret`:
 * a decimal or binary SI suffix, or `e`/`E` and an int64), and the slow path's `inf.Dec.SetString`
 * of the number's text when that holds no digit (taken when the fast int64 path does not apply: a
 * binary suffix over `Ti`, an exponent below -9).
 */
export function quantityParses(s: string): boolean {
  if (s === '') return false;
  if (s === '0') return true;
  const end = s.length;
  let pos = 0;
  if (s[0] === '-' || s[0] === '+') pos++;
  const zerosFrom = pos;
  while (pos < end && s[pos] === '0') pos++;
  if (pos >= end) return true; // "0" (all zeros, or a lone sign): the fast path
  const zeros = pos - zerosFrom;
  const numFrom = pos;
  while (pos < end && isDigit(s, pos)) pos++;
  if (pos >= end) return true; // digits only: DecimalSI, the fast path or a slow path with digits
  const numDigits = pos - numFrom;
  let denomDigits = 0;
  if (s[pos] === '.') {
    pos++;
    const denomFrom = pos;
    while (pos < end && isDigit(s, pos)) pos++;
    denomDigits = pos - denomFrom;
    if (pos >= end) return true; // no suffix: as above
  }
  const sufFrom = pos;
  while (pos < end && SUFFIX_LETTERS.includes(s[pos]!)) pos++;
  if (pos < end && (s[pos] === '-' || s[pos] === '+')) pos++;
  while (pos < end && isDigit(s, pos)) pos++;
  if (pos < end) return false; // ErrFormatWrong
  const suffix = s.slice(sufFrom);
  let exponent: number;
  let binary = false;
  if (suffix in DECIMAL_SUFFIX) exponent = DECIMAL_SUFFIX[suffix]!;
  else if (suffix in BINARY_SUFFIX) {
    exponent = BINARY_SUFFIX[suffix]!;
    binary = true;
  } else if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    const parsed = BigInt(suffix.slice(1));
    if (parsed > INT64_MAX || parsed < -INT64_MAX - 1n) return false; // strconv.ParseInt: out of range
    exponent = Number(BigInt.asIntN(32, parsed)); // int32(parsed)
  } else return false; // ErrSuffix
  if (zeros + numDigits + denomDigits > 0) return true; // the slow path parses any text with a digit
  // No digit: num is "0" and denom "". Would ParseQuantity take the slow path (SetString fails there)?
  if (binary) return 15 - 1 - Math.trunc((exponent * 3) / 10) - 1 >= 0;
  return exponent >= -9;
}
