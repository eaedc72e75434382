/**
 * A skipping protobuf decoder for Pod, Node and Lease: it walks the wire bytes once and reads only
 * the fields src/kube/objects.ts's converters read, stepping over everything else (container specs,
 * managedFields, images, ...) without building it. @bufbuild/protobuf's reflective `fromBinary`
 * builds every nested message of a Pod and measured about 2.5× the CPU of `JSON.parse` + slimming
 * (bench/wire-decode.ts); reading a third of the fields and skipping the rest is what makes protobuf
 * cheaper than JSON on the client too.
 *
 * Every field number comes from the code generated from k8s.io/api v0.37.2 (./gen, checked against
 * the .proto files by test/unit/protobuf-generated.test.ts), looked up once at load; none is typed
 * in by hand. The JSON semantics the views restore are listed in ./views.ts.
 *
 * Pure: no I/O. Every decoder throws {@link MalformedMessage} on bytes that do not parse (truncated,
 * a length past its parent's end, an unknown wire type).
 */
import type { DescMessage } from '@bufbuild/protobuf';
import {
  ContainerStateSchema,
  ContainerStatusSchema,
  NodeConditionSchema,
  NodeSchema,
  NodeSpecSchema,
  NodeStatusSchema,
  PersistentVolumeClaimVolumeSourceSchema,
  CSIVolumeSourceSchema,
  PodConditionSchema,
  PodSchema,
  PodSpecSchema,
  PodStatusSchema,
  TaintSchema,
  TolerationSchema,
  VolumeSchema,
  VolumeSourceSchema,
} from './gen/k8s.io/api/core/v1/generated_pb.js';
import { LeaseSchema, LeaseSpecSchema } from './gen/k8s.io/api/coordination/v1/generated_pb.js';
import { ObjectMetaSchema, OwnerReferenceSchema, TimeSchema, WatchEventSchema } from './gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';
import { RawExtensionSchema, TypeMetaSchema, UnknownSchema } from './gen/k8s.io/apimachinery/pkg/runtime/generated_pb.js';
import { SharedFrozen } from '../../util/sharedfrozen.js';

/** A JSON-shaped view of an object (see ./views.ts). */
export type View = Record<string, unknown>;

/** Bytes that do not parse as the message they should be. */
export class MalformedMessage extends Error {
  override readonly name = 'MalformedMessage';
}

/** The field numbers of `schema`, by the names given; throws at load when the generated code lacks one. */
function numbers<K extends string>(schema: DescMessage, names: readonly K[]): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const n of names) {
    const f = schema.field[n];
    if (!f) throw new Error(`${schema.typeName} has no field ${n}: regenerate src/kube/protobuf/gen`);
    out[n] = f.number;
  }
  return out;
}

const UNKNOWN = numbers(UnknownSchema, ['typeMeta', 'raw', 'contentEncoding', 'contentType']);
const TYPE_META = numbers(TypeMetaSchema, ['apiVersion', 'kind']);
const WATCH_EVENT = numbers(WatchEventSchema, ['type', 'object']);
const RAW_EXTENSION = numbers(RawExtensionSchema, ['raw']);
const POD = numbers(PodSchema, ['metadata', 'spec', 'status']);
const NODE = numbers(NodeSchema, ['metadata', 'spec', 'status']);
const LEASE = numbers(LeaseSchema, ['metadata', 'spec']);
const META = numbers(ObjectMetaSchema, [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
]);
const OWNER = numbers(OwnerReferenceSchema, ['apiVersion', 'kind', 'name', 'uid', 'controller']);
const TIME = numbers(TimeSchema, ['seconds', 'nanos']);
const POD_SPEC = numbers(PodSpecSchema, ['nodeName', 'tolerations', 'volumes']);
const POD_STATUS = numbers(PodStatusSchema, ['phase', 'reason', 'conditions', 'initContainerStatuses', 'containerStatuses', 'ephemeralContainerStatuses']);
const POD_CONDITION = numbers(PodConditionSchema, ['type', 'status', 'reason', 'message', 'lastTransitionTime', 'lastProbeTime']);
const TOLERATION = numbers(TolerationSchema, ['key', 'operator', 'value', 'effect', 'tolerationSeconds']);
const VOLUME = numbers(VolumeSchema, ['name', 'volumeSource']);
const PVC_SOURCE = numbers(PersistentVolumeClaimVolumeSourceSchema, ['claimName']);
const CSI_SOURCE = numbers(CSIVolumeSourceSchema, ['driver']);
const CONTAINER_STATUS = numbers(ContainerStatusSchema, ['state']);
const CONTAINER_STATE = numbers(ContainerStateSchema, ['waiting', 'running', 'terminated']);
const NODE_SPEC = numbers(NodeSpecSchema, ['unschedulable', 'taints']);
const NODE_STATUS = numbers(NodeStatusSchema, ['conditions']);
const NODE_CONDITION = numbers(NodeConditionSchema, ['type', 'status', 'reason', 'message', 'lastHeartbeatTime', 'lastTransitionTime']);
const TAINT = numbers(TaintSchema, ['key', 'value', 'effect', 'timeAdded']);
const LEASE_SPEC = numbers(LeaseSpecSchema, ['holderIdentity', 'leaseDurationSeconds', 'acquireTime', 'renewTime', 'leaseTransitions']);
/** VolumeSource field number → its JSON key (the proto names are the JSON names). */
const VOLUME_SOURCE_KEYS: ReadonlyMap<number, string> = new Map(VolumeSourceSchema.fields.map((f) => [f.number, f.name]));
const PVC_SOURCE_NO = VolumeSourceSchema.field['persistentVolumeClaim']!.number;
const CSI_SOURCE_NO = VolumeSourceSchema.field['csi']!.number;

// ---- the reader ---------------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A cursor over one message: bytes `[pos, end)` of `b`. */
class Reader {
  constructor(
    readonly b: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  /** A reader over all of `bytes` (a Buffer view of the same memory, not a copy, when it is not one). */
  static of(bytes: Uint8Array): Reader {
    const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return new Reader(b, 0, b.length);
  }

  get more(): boolean {
    return this.pos < this.end;
  }

  /** An unsigned varint up to 2^53 (lengths, tags, bools, non-negative ints). */
  uvarint(): number {
    const b = this.b;
    let x = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new MalformedMessage('truncated varint');
      const c = b[this.pos++]!;
      x += (c & 0x7f) * mul;
      if (c < 0x80) return x;
      mul *= 128;
    }
    throw new MalformedMessage('varint longer than 10 bytes');
  }

  /** A signed int64/int32 varint as a number (two's complement over 64 bits; exact below 2^53). */
  int64(): number {
    const start = this.pos;
    const x = this.uvarint();
    if (this.pos - start < 8) return x; // < 2^49: positive
    // Rare: large or negative. Re-read exactly with BigInt.
    let big = 0n;
    for (let i = this.pos - 1; i >= start; i--) big = (big << 7n) | BigInt(this.b[i]! & 0x7f);
    return Number(BigInt.asIntN(64, big));
  }

  /** The next field's tag (`number << 3 | wireType`). */
  tag(): number {
    return this.uvarint();
  }

  /** Reads a length prefix and steps over that many bytes. @returns where they start (they end at `pos`). */
  #lengthDelimited(what: string): number {
    const len = this.uvarint();
    const start = this.pos;
    const end = start + len;
    if (end > this.end) throw new MalformedMessage(`${what} past the end of its message`);
    this.pos = end;
    return start;
  }

  /** A length-delimited field's sub-reader. */
  sub(): Reader {
    const start = this.#lengthDelimited('length');
    return new Reader(this.b, start, this.pos);
  }

  string(): string {
    const s = this.#lengthDelimited('string');
    const e = this.pos;
    const b = this.b;
    // Nearly every string here is ASCII (names, uids, reasons, keys), where latin1 and UTF-8 agree:
    // one native slice gives a flat one-byte string. Building it a character at a time (`out +=`)
    // gave a cons string that every later hash (intern, the caches' Maps) had to flatten again,
    // and cost about twice the CPU in a cold start (issue 29, 340,000 strings per 15,030 pods).
    for (let i = s; i < e; i++) if (b[i]! >= 0x80) return utf8.decode(b.subarray(s, e));
    return b.toString('latin1', s, e);
  }

  /** A length-delimited `bytes` field: a view into the input, not a copy. */
  bytes(): Uint8Array {
    const s = this.#lengthDelimited('bytes');
    return this.b.subarray(s, this.pos);
  }

  skip(wt: number): void {
    switch (wt) {
      case 0:
        this.uvarint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2: {
        // Not `this.pos += this.uvarint()`: that reads `pos` before the length moves it.
        const len = this.uvarint();
        this.pos += len;
        break;
      }
      case 5:
        this.pos += 4;
        break;
      default:
        throw new MalformedMessage(`unsupported wire type ${wt}`);
    }
    if (this.pos > this.end) throw new MalformedMessage('field past the end of its message');
  }
}

/**
 * The view lists of a Pod's tolerations and owner references, shared by the exact wire bytes of
 * their fields: pods of one ReplicaSet or DaemonSet carry byte-for-byte the same lists, so after
 * the first such pod the rest cost one latin1 slice and a lookup instead of a decode (issue 29:
 * the start-up's watch-list of 15,030 pods). Equal bytes decode to an equal list (the decode is a
 * function of the bytes alone), and a list whose bytes do not decode throws and is never stored,
 * so a pod is malformed exactly when it was without the table. The lists are frozen (their
 * readers, src/kube/objects.ts `toPod`, only read them); objects.ts keeps each one alive while a
 * cached pod holds the slim list made from it, and then both go.
 */
const sharedTolerationViews = new SharedFrozen<readonly View[]>();
const sharedOwnerViews = new SharedFrozen<readonly View[]>();

/** The sub-messages of one repeated field of a message, and whether their bytes form one run. */
class RepeatedField {
  readonly #items: Reader[] = [];
  #start = -1;
  #end = -1;
  #oneRun = true;

  /**
   * Adds the field whose tag starts at `fieldStart`; `r` stands at its length prefix and is
   * moved past it. @throws {MalformedMessage} when the length runs past the message.
   */
  add(fieldStart: number, r: Reader): void {
    if (this.#end !== -1 && fieldStart !== this.#end) this.#oneRun = false;
    if (this.#start === -1) this.#start = fieldStart;
    this.#items.push(r.sub());
    this.#end = r.pos;
  }

  /**
   * The decoded list: the frozen one of `table` for these exact bytes (tags and lengths included)
   * when they form one run, as the API server writes them; else (or without a table) decoded on its own.
   * @throws {MalformedMessage} when an item does not decode.
   */
  views(b: Buffer, table: SharedFrozen<readonly View[]> | undefined, decode: (r: Reader) => View): readonly View[] {
    if (!table || !this.#oneRun) return this.#items.map(decode);
    return table.get(b.toString('latin1', this.#start, this.#end), () => Object.freeze(this.#items.map((item) => Object.freeze(decode(item)))));
  }
}

/** Requires wire type `want` for field `no` (a mismatch means the bytes are not this message). */
function expect(wt: number, want: number, no: number): void {
  if (wt !== want) throw new MalformedMessage(`field ${no}: wire type ${wt}, expected ${want}`);
}

// ---- field readers ------------------------------------------------------------------------------

/** A `metav1.Time` / `MicroTime` as epoch ms; a zero time (empty message) is undefined, as JSON's null. */
function time(r: Reader): number | undefined {
  let seconds = 0;
  let nanos = 0;
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === TIME.seconds && wt === 0) seconds = r.int64();
    else if (no === TIME.nanos && wt === 0) nanos = r.int64();
    else r.skip(wt);
  }
  if (seconds === 0 && nanos === 0) return undefined;
  return seconds * 1000 + Math.floor(nanos / 1e6);
}

/** A `map<string,string>` entry `{key = 1, value = 2}` into `into`. */
function mapEntry(r: Reader, into: Record<string, string>): void {
  let k = '';
  let v = '';
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === 1 && wt === 2) k = r.string();
    else if (no === 2 && wt === 2) v = r.string();
    else r.skip(wt);
  }
  // An own property even for `__proto__`, as JSON.parse makes it (assignment would set the
  // prototype and lose the entry). The API server refuses such a key; the two encodings still agree.
  if (k === '__proto__') Object.defineProperty(into, k, { value: v, enumerable: true, writable: true, configurable: true });
  else into[k] = v;
}

/** Reads a length-delimited string field (wire type checked). */
function str(r: Reader, wt: number, no: number): string {
  expect(wt, 2, no);
  return r.string();
}

/** Sets `o[k] = v` unless `v` is undefined or (for `omitempty` strings) empty. */
function putNz(o: View, k: string, v: string): void {
  if (v !== '') o[k] = v;
}

/** What a view keeps of `metadata` beyond the fields every converter reads. */
export interface MetaOptions {
  /** `metadata.annotations` (a watch bookmark's initial-events-end mark; no converter reads them). */
  annotations: boolean;
  /**
   * `metadata.labels`. Nodes need them (zone, exclusion labels); a Pod's are read only with
   * `keepLabels` (src/kube/informerfactory.ts), a Lease's never: skipping them there saves a map
   * per object that the converter would drop.
   */
  labels: boolean;
}

/**
 * @param ownerTable where owner-reference view lists are shared by their bytes: Pods only. A Node's
 *   or Lease's converter never reads them, and a node Lease's owner (its Node, by uid) is unique to
 *   it, so sharing there would only churn the table on every Lease renewal.
 */
function objectMeta(r: Reader, o: MetaOptions, ownerTable?: SharedFrozen<readonly View[]>): View {
  const m: View = {};
  let labels: Record<string, string> | undefined;
  let annotations: Record<string, string> | undefined;
  let owners: RepeatedField | undefined;
  let finalizers: string[] | undefined;
  while (r.more) {
    const at = r.pos;
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    switch (no) {
      case META.name:
        putNz(m, 'name', str(r, wt, no));
        break;
      case META.namespace:
        putNz(m, 'namespace', str(r, wt, no));
        break;
      case META.uid:
        putNz(m, 'uid', str(r, wt, no));
        break;
      case META.resourceVersion:
        putNz(m, 'resourceVersion', str(r, wt, no));
        break;
      case META.generation: {
        expect(wt, 0, no);
        const g = r.int64();
        if (g !== 0) m['generation'] = g;
        break;
      }
      case META.creationTimestamp:
      case META.deletionTimestamp: {
        expect(wt, 2, no);
        const t = time(r.sub());
        if (t !== undefined) m[no === META.creationTimestamp ? 'creationTimestamp' : 'deletionTimestamp'] = t;
        break;
      }
      case META.deletionGracePeriodSeconds:
        expect(wt, 0, no);
        m['deletionGracePeriodSeconds'] = r.int64();
        break;
      case META.labels:
        expect(wt, 2, no);
        if (o.labels) mapEntry(r.sub(), (labels ??= {}));
        else r.skip(wt);
        break;
      case META.annotations:
        expect(wt, 2, no);
        if (o.annotations) mapEntry(r.sub(), (annotations ??= {}));
        else r.skip(wt);
        break;
      case META.ownerReferences:
        expect(wt, 2, no);
        (owners ??= new RepeatedField()).add(at, r);
        break;
      case META.finalizers:
        (finalizers ??= []).push(str(r, wt, no));
        break;
      default:
        r.skip(wt);
    }
  }
  if (labels) m['labels'] = labels;
  if (annotations) m['annotations'] = annotations;
  if (owners) m['ownerReferences'] = owners.views(r.b, ownerTable, ownerReference);
  if (finalizers) m['finalizers'] = finalizers;
  return m;
}

function ownerReference(r: Reader): View {
  const o: View = { apiVersion: '', kind: '', name: '', uid: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === OWNER.apiVersion) o['apiVersion'] = str(r, wt, no);
    else if (no === OWNER.kind) o['kind'] = str(r, wt, no);
    else if (no === OWNER.name) o['name'] = str(r, wt, no);
    else if (no === OWNER.uid) o['uid'] = str(r, wt, no);
    else if (no === OWNER.controller && wt === 0) o['controller'] = r.uvarint() !== 0;
    else r.skip(wt);
  }
  return o;
}

/** A Pod or Node condition (the two share type/status/reason/message; each has its own time fields). */
function condition(r: Reader, nums: { type: number; status: number; reason: number; message: number }, times: ReadonlyMap<number, string>): View {
  const c: View = { type: '', status: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === nums.type) c['type'] = str(r, wt, no);
    else if (no === nums.status) c['status'] = str(r, wt, no);
    else if (no === nums.reason) putNz(c, 'reason', str(r, wt, no));
    else if (no === nums.message) putNz(c, 'message', str(r, wt, no));
    else if (times.has(no) && wt === 2) {
      const t = time(r.sub());
      if (t !== undefined) c[times.get(no)!] = t;
    } else r.skip(wt);
  }
  return c;
}
const POD_CONDITION_TIMES = new Map([
  [POD_CONDITION.lastTransitionTime, 'lastTransitionTime'],
  [POD_CONDITION.lastProbeTime, 'lastProbeTime'],
]);
const NODE_CONDITION_TIMES = new Map([
  [NODE_CONDITION.lastHeartbeatTime, 'lastHeartbeatTime'],
  [NODE_CONDITION.lastTransitionTime, 'lastTransitionTime'],
]);

function toleration(r: Reader): View {
  const t: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === TOLERATION.key) putNz(t, 'key', str(r, wt, no));
    else if (no === TOLERATION.operator) putNz(t, 'operator', str(r, wt, no));
    else if (no === TOLERATION.value) putNz(t, 'value', str(r, wt, no));
    else if (no === TOLERATION.effect) putNz(t, 'effect', str(r, wt, no));
    else if (no === TOLERATION.tolerationSeconds && wt === 0) t['tolerationSeconds'] = r.int64();
    else r.skip(wt);
  }
  return t;
}

/** A volume as JSON has it: `name` plus the key of each set source (JSON inlines VolumeSource). */
function volume(r: Reader): View {
  const v: View = { name: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === VOLUME.name) v['name'] = str(r, wt, no);
    else if (no === VOLUME.volumeSource && wt === 2) volumeSource(r.sub(), v);
    else r.skip(wt);
  }
  return v;
}

function volumeSource(r: Reader, into: View): void {
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    const key = VOLUME_SOURCE_KEYS.get(no);
    if (key === undefined || wt !== 2) {
      r.skip(wt);
      continue;
    }
    const s = r.sub();
    if (no === PVC_SOURCE_NO) into[key] = { claimName: firstString(s, PVC_SOURCE.claimName) };
    else if (no === CSI_SOURCE_NO) into[key] = { driver: firstString(s, CSI_SOURCE.driver) };
    else into[key] = {};
  }
}

/** The last value of string field `want` in the message (proto: the last one wins), or `''`. */
function firstString(r: Reader, want: number): string {
  let out = '';
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === want && wt === 2) out = r.string();
    else r.skip(wt);
  }
  return out;
}

/** A container status reduced to which of its state's members are set (objects.ts `containerNotRunning`). */
function containerStatus(r: Reader): View {
  let state: View | undefined;
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === CONTAINER_STATUS.state && wt === 2) {
      state ??= {};
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === CONTAINER_STATE.waiting) state['waiting'] = {};
        else if (sno === CONTAINER_STATE.running) state['running'] = {};
        else if (sno === CONTAINER_STATE.terminated) state['terminated'] = {};
        s.skip(swt);
      }
    } else r.skip(wt);
  }
  return state ? { state } : {};
}

function taint(r: Reader): View {
  const t: View = { key: '', effect: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === TAINT.key) t['key'] = str(r, wt, no);
    else if (no === TAINT.value) putNz(t, 'value', str(r, wt, no));
    else if (no === TAINT.effect) t['effect'] = str(r, wt, no);
    else if (no === TAINT.timeAdded && wt === 2) {
      const at = time(r.sub());
      if (at !== undefined) t['timeAdded'] = at;
    } else r.skip(wt);
  }
  return t;
}

// ---- the envelope and watch frames --------------------------------------------------------------

/** The fields of a `runtime.Unknown` (the envelope after `k8s\x00`); absent strings are `''`, absent `raw` is empty. */
export interface UnknownFields {
  apiVersion: string;
  kind: string;
  /** The object's message bytes: a view into the input, not a copy. */
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

const NO_BYTES: Uint8Array = new Uint8Array(0);

/**
 * Reads a `runtime.Unknown` from its message bytes. Proto2 merge rules: a scalar written twice keeps
 * its last value, a `typeMeta` written twice merges field by field.
 * @throws {MalformedMessage} when the bytes do not parse or a field has the wrong wire type.
 * Mirrors `runtime.Unknown.Unmarshal` (k8s.io/apimachinery v0.37.2 `pkg/runtime/generated.pb.go`) for the fields read.
 */
export function unknownFields(bytes: Uint8Array): UnknownFields {
  const r = Reader.of(bytes);
  const out: UnknownFields = { apiVersion: '', kind: '', raw: NO_BYTES, contentEncoding: '', contentType: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === UNKNOWN.typeMeta) {
      expect(wt, 2, no);
      const t = r.sub();
      while (t.more) {
        const tt = t.tag(), tno = tt >>> 3, twt = tt & 7;
        if (tno === TYPE_META.apiVersion) out.apiVersion = str(t, twt, tno);
        else if (tno === TYPE_META.kind) out.kind = str(t, twt, tno);
        else t.skip(twt);
      }
    } else if (no === UNKNOWN.raw) {
      expect(wt, 2, no);
      out.raw = r.bytes();
    } else if (no === UNKNOWN.contentEncoding) out.contentEncoding = str(r, wt, no);
    else if (no === UNKNOWN.contentType) out.contentType = str(r, wt, no);
    else r.skip(wt);
  }
  return out;
}

/**
 * Reads a `metav1.WatchEvent` frame: its `type` and its object's `raw` bytes (a view into the input;
 * empty when absent). The same merge rules as {@link unknownFields}.
 * @throws {MalformedMessage} when the bytes do not parse or a field has the wrong wire type.
 * Mirrors `WatchEvent.Unmarshal` (k8s.io/apimachinery v0.37.2 `pkg/apis/meta/v1/generated.pb.go`) for the fields read.
 */
export function watchEventFields(bytes: Uint8Array): { type: string; raw: Uint8Array } {
  const r = Reader.of(bytes);
  let type = '';
  let raw = NO_BYTES;
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === WATCH_EVENT.type) type = str(r, wt, no);
    else if (no === WATCH_EVENT.object) {
      expect(wt, 2, no);
      const o = r.sub();
      while (o.more) {
        const ot = o.tag(), ono = ot >>> 3, owt = ot & 7;
        if (ono === RAW_EXTENSION.raw) {
          expect(owt, 2, ono);
          raw = o.bytes();
        } else o.skip(owt);
      }
    } else r.skip(wt);
  }
  return { type, raw };
}

// ---- objects ------------------------------------------------------------------------------------

/** Appends `v` to the list `o[k]`, creating it. */
function push(o: View, k: string, v: View): void {
  const list = o[k] as View[] | undefined;
  if (list) list.push(v);
  else o[k] = [v];
}

function podSpec(r: Reader): View {
  const spec: View = {};
  let tolerations: RepeatedField | undefined;
  while (r.more) {
    const at = r.pos;
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === POD_SPEC.nodeName) putNz(spec, 'nodeName', str(r, wt, no));
    else if (no === POD_SPEC.tolerations && wt === 2) (tolerations ??= new RepeatedField()).add(at, r);
    else if (no === POD_SPEC.volumes && wt === 2) push(spec, 'volumes', volume(r.sub()));
    else r.skip(wt);
  }
  if (tolerations) spec['tolerations'] = tolerations.views(r.b, sharedTolerationViews, toleration);
  return spec;
}

const CONTAINER_STATUS_LISTS = new Map([
  [POD_STATUS.initContainerStatuses, 'initContainerStatuses'],
  [POD_STATUS.containerStatuses, 'containerStatuses'],
  [POD_STATUS.ephemeralContainerStatuses, 'ephemeralContainerStatuses'],
]);

function podStatus(r: Reader): View {
  const status: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === POD_STATUS.phase) putNz(status, 'phase', str(r, wt, no));
    // Pod GC orders terminated pods by it (an Evicted pod goes first), so objects.ts reads it.
    else if (no === POD_STATUS.reason) putNz(status, 'reason', str(r, wt, no));
    else if (no === POD_STATUS.conditions && wt === 2) push(status, 'conditions', condition(r.sub(), POD_CONDITION, POD_CONDITION_TIMES));
    else if (CONTAINER_STATUS_LISTS.has(no) && wt === 2) push(status, CONTAINER_STATUS_LISTS.get(no)!, containerStatus(r.sub()));
    else r.skip(wt);
  }
  return status;
}

/**
 * A Pod's view from its message bytes (the envelope's `raw`).
 * @throws {MalformedMessage} when the bytes do not parse.
 */
export function podView(bytes: Uint8Array, meta: MetaOptions): View {
  const r = Reader.of(bytes);
  let metadata: View = {};
  let spec: View = {};
  let status: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === POD.metadata && wt === 2) metadata = objectMeta(r.sub(), meta, sharedOwnerViews);
    else if (no === POD.spec && wt === 2) spec = podSpec(r.sub());
    else if (no === POD.status && wt === 2) status = podStatus(r.sub());
    else r.skip(wt);
  }
  return { metadata, spec, status };
}

/**
 * A Node's view from its message bytes.
 * @throws {MalformedMessage} when the bytes do not parse.
 */
export function nodeView(bytes: Uint8Array, meta: MetaOptions): View {
  const r = Reader.of(bytes);
  let metadata: View = {};
  const spec: View = {};
  const status: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === NODE.metadata && wt === 2) metadata = objectMeta(r.sub(), meta);
    else if (no === NODE.spec && wt === 2) {
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === NODE_SPEC.unschedulable && swt === 0) {
          if (s.uvarint() !== 0) spec['unschedulable'] = true;
        } else if (sno === NODE_SPEC.taints && swt === 2) push(spec, 'taints', taint(s.sub()));
        else s.skip(swt);
      }
    } else if (no === NODE.status && wt === 2) {
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === NODE_STATUS.conditions && swt === 2) push(status, 'conditions', condition(s.sub(), NODE_CONDITION, NODE_CONDITION_TIMES));
        else s.skip(swt);
      }
    } else r.skip(wt);
  }
  return { metadata, spec, status };
}

/**
 * A Lease's view from its message bytes. `holderIdentity`, `leaseDurationSeconds` and
 * `leaseTransitions` are pointers: present exactly when written.
 * @throws {MalformedMessage} when the bytes do not parse.
 */
export function leaseView(bytes: Uint8Array, meta: MetaOptions): View {
  const r = Reader.of(bytes);
  let metadata: View = {};
  const spec: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === LEASE.metadata && wt === 2) metadata = objectMeta(r.sub(), meta);
    else if (no === LEASE.spec && wt === 2) {
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === LEASE_SPEC.holderIdentity) spec['holderIdentity'] = str(s, swt, sno);
        else if (sno === LEASE_SPEC.leaseDurationSeconds && swt === 0) spec['leaseDurationSeconds'] = s.int64() | 0;
        else if (sno === LEASE_SPEC.leaseTransitions && swt === 0) spec['leaseTransitions'] = s.int64() | 0;
        else if ((sno === LEASE_SPEC.acquireTime || sno === LEASE_SPEC.renewTime) && swt === 2) {
          const t = time(s.sub());
          if (t !== undefined) spec[sno === LEASE_SPEC.renewTime ? 'renewTime' : 'acquireTime'] = t;
        } else s.skip(swt);
      }
    } else r.skip(wt);
  }
  return { metadata, spec };
}
