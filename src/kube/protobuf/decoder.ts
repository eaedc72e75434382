/**
 * A skipping protobuf decoder for Pod, Node and Lease: it walks the wire bytes once and builds only
 * the fields src/kube/objects.ts's converters read, stepping over everything else (container specs,
 * managedFields, images, ...) without building it. @bufbuild/protobuf's reflective `fromBinary`
 * builds every nested message of a Pod and measured about 2.5× the CPU of `JSON.parse` + slimming
 * (bench/wire-decode.ts); reading a third of the fields and skipping the rest is what makes protobuf
 * cheaper than JSON on the client too.
 *
 * The wire format never changes a decision (issue 53): what a view holds is what the API server's
 * JSON of the same object gives the converters, and an object is unreadable here exactly when
 * upstream's gogo-generated `Unmarshal` refuses it.
 * - Bytes are read by upstream's rules (./reader.ts): strings are bytes, rendered as the API
 *   server's JSON encoder renders them (U+FFFD per invalid byte); varints, tags and lengths as Go reads them.
 * - The fields stepped over are checked against the schema as upstream decodes them (./validate.ts).
 * - Proto merge rules, as the generated code applies them: a message field that appears twice is
 *   merged (metadata, spec, status, a volume's source, a container's state), a scalar or string keeps
 *   its last value (an empty `omitempty` string then removes the earlier one), a repeated field
 *   appends, and a map adds its entries (the last one of a key wins).
 * - `metav1.Time` and `MicroTime` as their hand-written `Unmarshal` and `MarshalJSON` give them
 *   (k8s.io/apimachinery `pkg/apis/meta/v1/time_proto.go`, `micro_time_proto.go`, `time.go`,
 *   `micro_time.go`): a second occurrence replaces the first; a Time drops its nanoseconds, a
 *   MicroTime truncates them to microseconds; the zero time (an empty message, or 0001-01-01) is
 *   JSON's `null`, and a time outside the years 0000-9999, which Go writes in a form `Date.parse`
 *   refuses, is absent too.
 *
 * Every field number comes from the code generated from k8s.io/api v0.37.2 (./gen, checked against
 * the .proto files by test/unit/protobuf-generated.test.ts), looked up once at load; none is typed
 * in by hand. The JSON semantics the views restore are listed in ./views.ts.
 *
 * Pure: no I/O. Every decoder throws {@link MalformedMessage} where upstream's `Unmarshal` fails.
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
import { MicroTimeSchema, ObjectMetaSchema, OwnerReferenceSchema, TimeSchema, WatchEventSchema } from './gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';
import { RawExtensionSchema, TypeMetaSchema, UnknownSchema } from './gen/k8s.io/apimachinery/pkg/runtime/generated_pb.js';
import { SharedFrozen } from '../../util/sharedfrozen.js';
import { goJsonString, MalformedMessage, Reader } from './reader.js';
import { rulesOf, skipField, type Rules } from './validate.js';

export { MalformedMessage } from './reader.js';

/** A JSON-shaped view of an object (see ./views.ts). */
export type View = Record<string, unknown>;

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
const MICRO_TIME = numbers(MicroTimeSchema, ['seconds', 'nanos']);
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

/** The rules of each message whose unread fields are checked (./validate.ts). */
const R = {
  unknown: rulesOf(UnknownSchema),
  typeMeta: rulesOf(TypeMetaSchema),
  watchEvent: rulesOf(WatchEventSchema),
  rawExtension: rulesOf(RawExtensionSchema),
  pod: rulesOf(PodSchema),
  node: rulesOf(NodeSchema),
  lease: rulesOf(LeaseSchema),
  meta: rulesOf(ObjectMetaSchema),
  owner: rulesOf(OwnerReferenceSchema),
  time: rulesOf(TimeSchema),
  microTime: rulesOf(MicroTimeSchema),
  podSpec: rulesOf(PodSpecSchema),
  podStatus: rulesOf(PodStatusSchema),
  podCondition: rulesOf(PodConditionSchema),
  toleration: rulesOf(TolerationSchema),
  volume: rulesOf(VolumeSchema),
  volumeSource: rulesOf(VolumeSourceSchema),
  pvcSource: rulesOf(PersistentVolumeClaimVolumeSourceSchema),
  csiSource: rulesOf(CSIVolumeSourceSchema),
  containerStatus: rulesOf(ContainerStatusSchema),
  containerState: rulesOf(ContainerStateSchema),
  nodeSpec: rulesOf(NodeSpecSchema),
  nodeStatus: rulesOf(NodeStatusSchema),
  nodeCondition: rulesOf(NodeConditionSchema),
  taint: rulesOf(TaintSchema),
  leaseSpec: rulesOf(LeaseSpecSchema),
} satisfies Record<string, Rules>;

// ---- field readers ------------------------------------------------------------------------------

/** 0000-01-01T00:00:00Z, the first second whose RFC 3339 form `Date.parse` reads (Go writes year 0 as `0000`). */
const FIRST_JSON_SECOND = -62_167_219_200;
/** 10000-01-01T00:00:00Z: from here Go writes a five-digit year, which `Date.parse` refuses. */
const END_JSON_SECOND = 253_402_300_800;
/** 0001-01-01T00:00:00Z, Go's zero `time.Time`: `MarshalJSON` writes `null`. */
const ZERO_TIME_SECOND = -62_135_596_800;

/**
 * The epoch ms the JSON path reads (src/kube/objects.ts `toMillis` of what `MarshalJSON` writes)
 * for the normalised instant `seconds` + `nanos` (0 ≤ nanos < 1e9); `undefined` where it reads none.
 */
function jsonMillis(seconds: number, nanos: number): number | undefined {
  if (seconds === ZERO_TIME_SECOND && nanos === 0) return undefined;
  if (!(seconds >= FIRST_JSON_SECOND && seconds < END_JSON_SECOND)) return undefined;
  return seconds * 1000 + Math.floor(nanos / 1e6);
}

/**
 * A `metav1.Time`: `time.Unix(seconds, 0)` (its `Unmarshal` drops the nanoseconds, and JSON has
 * whole seconds); an empty message is the zero time. @returns epoch ms as the JSON path reads it, or `undefined` (JSON's `null`).
 */
function time(r: Reader): number | undefined {
  if (!r.more) return undefined;
  let seconds = 0;
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === TIME.seconds) {
      expect(wt, 0, no);
      seconds = r.int64();
    } else skipField(r, R.time, no, wt);
  }
  return jsonMillis(seconds, 0);
}

/**
 * A `metav1.MicroTime`: nanoseconds truncated toward zero to microseconds, then `time.Unix`
 * normalises them into the second. @returns epoch ms as the JSON path reads it, or `undefined`.
 */
function microTime(r: Reader): number | undefined {
  if (!r.more) return undefined;
  let seconds = 0;
  let nanos = 0;
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === MICRO_TIME.seconds) {
      expect(wt, 0, no);
      seconds = r.int64();
    } else if (no === MICRO_TIME.nanos) {
      expect(wt, 0, no);
      nanos = r.int32();
    } else skipField(r, R.microTime, no, wt);
  }
  const truncated = nanos - (nanos % 1000);
  const carry = Math.floor(truncated / 1e9);
  return jsonMillis(seconds + carry, truncated - carry * 1e9);
}

/** Sets `o[k] = v`, or removes `o[k]` when `v` is undefined (a later zero value replaces an earlier one). */
function put(o: View, k: string, v: unknown): void {
  if (v !== undefined) o[k] = v;
  else if (o[k] !== undefined) delete o[k]; // rare: `delete` slows the object down
}

/** Sets `o[k] = v` for an `omitempty` string, removing it when `v` is empty (JSON leaves it out). */
function putNz(o: View, k: string, v: string): void {
  put(o, k, v === '' ? undefined : v);
}

/** Reads a length-delimited string field (wire type checked). */
function str(r: Reader, wt: number, no: number): string {
  expect(wt, 2, no);
  return r.string();
}

/**
 * A `map<string,string>` as the generated code fills it and kube-apiserver's JSON encoder writes it.
 * Keys are kept as byte ranges until the end: when one is not ASCII, encoding/json writes the keys
 * sorted by their bytes, each rendered as a string (./reader.ts `goJsonString`), so two keys that
 * render alike collide and JSON.parse keeps the later one, the larger in bytes.
 */
class StringMap {
  readonly #from: number[] = [];
  readonly #to: number[] = [];
  readonly #values: string[] = [];
  #ascii = true;

  /**
   * Reads one entry (its tag read; `r` at its length prefix) as the generated code does: field 1 is
   * the key and field 2 the value whatever their wire types, each may run past the entry up to the
   * end of the message, any other field is stepped over within the entry, and the position then
   * goes to the entry's end. An absent key or value is `""`.
   */
  entry(r: Reader): void {
    const len = r.length();
    const post = r.pos + len;
    let from = 0;
    let to = 0;
    let value = '';
    while (r.pos < post) {
      const tg = r.entryTag();
      const no = tg >>> 3;
      if (no === 1) {
        const n = r.length();
        from = r.pos;
        to = r.pos += n;
      } else if (no === 2) value = r.string();
      else {
        r.skip(tg & 7);
        if (r.pos > post) throw new MalformedMessage('map entry field past the end of its entry');
      }
    }
    r.pos = post;
    for (let i = from; i < to && this.#ascii; i++) if (r.b[i]! >= 0x80) this.#ascii = false;
    this.#from.push(from);
    this.#to.push(to);
    this.#values.push(value);
  }

  /** The JSON object of the entries read (an own `__proto__` key as JSON.parse makes it). */
  view(b: Buffer): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.#ascii) {
      for (let i = 0; i < this.#values.length; i++) setOwn(out, b.toString('latin1', this.#from[i], this.#to[i]), this.#values[i]!);
      return out;
    }
    const byBytes = new Map<string, string>(); // the Go map: the last value of each key's exact bytes
    for (let i = 0; i < this.#values.length; i++) byBytes.set(b.toString('latin1', this.#from[i], this.#to[i]), this.#values[i]!);
    for (const raw of [...byBytes.keys()].sort()) setOwn(out, goJsonString(Buffer.from(raw, 'latin1'), 0, raw.length), byBytes.get(raw)!);
    return out;
  }
}

/** `o[k] = v`, as an own property even for `__proto__` (assignment would set the prototype and lose the entry). */
function setOwn(o: Record<string, string>, k: string, v: string): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
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

/** The `metadata` of one object, read from every occurrence of the field (they merge). */
class ObjectMetaAcc {
  readonly m: View = {};
  labels: StringMap | undefined;
  annotations: StringMap | undefined;
  owners: RepeatedField | undefined;
  finalizers: string[] | undefined;

  /** Reads one occurrence of `metadata` (the reader covers exactly its bytes). */
  read(r: Reader, o: MetaOptions): void {
    const m = this.m;
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
          put(m, 'generation', g !== 0 ? g : undefined);
          break;
        }
        case META.creationTimestamp:
          expect(wt, 2, no);
          put(m, 'creationTimestamp', time(r.sub()));
          break;
        case META.deletionTimestamp:
          expect(wt, 2, no);
          put(m, 'deletionTimestamp', time(r.sub()));
          break;
        case META.deletionGracePeriodSeconds:
          expect(wt, 0, no);
          m['deletionGracePeriodSeconds'] = r.int64();
          break;
        case META.labels:
          expect(wt, 2, no);
          if (o.labels) (this.labels ??= new StringMap()).entry(r);
          else skipField(r, R.meta, no, wt);
          break;
        case META.annotations:
          expect(wt, 2, no);
          if (o.annotations) (this.annotations ??= new StringMap()).entry(r);
          else skipField(r, R.meta, no, wt);
          break;
        case META.ownerReferences:
          expect(wt, 2, no);
          (this.owners ??= new RepeatedField()).add(at, r);
          break;
        case META.finalizers:
          (this.finalizers ??= []).push(str(r, wt, no));
          break;
        default:
          skipField(r, R.meta, no, wt);
      }
    }
  }

  /**
   * The view. @param ownerTable where owner-reference view lists are shared by their bytes: Pods
   * only. A Node's or Lease's converter never reads them, and a node Lease's owner (its Node, by
   * uid) is unique to it, so sharing there would only churn the table on every Lease renewal.
   * @throws {MalformedMessage} when an owner reference does not decode.
   */
  view(b: Buffer, ownerTable?: SharedFrozen<readonly View[]>): View {
    const m = this.m;
    // Go's encoding/json leaves out an empty map or list (omitempty).
    const labels = this.labels?.view(b);
    if (labels && Object.keys(labels).length > 0) m['labels'] = labels;
    const annotations = this.annotations?.view(b);
    if (annotations && Object.keys(annotations).length > 0) m['annotations'] = annotations;
    if (this.owners) m['ownerReferences'] = this.owners.views(b, ownerTable, ownerReference);
    if (this.finalizers) m['finalizers'] = this.finalizers;
    return m;
  }
}

function ownerReference(r: Reader): View {
  const o: View = { apiVersion: '', kind: '', name: '', uid: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === OWNER.apiVersion) o['apiVersion'] = str(r, wt, no);
    else if (no === OWNER.kind) o['kind'] = str(r, wt, no);
    else if (no === OWNER.name) o['name'] = str(r, wt, no);
    else if (no === OWNER.uid) o['uid'] = str(r, wt, no);
    else if (no === OWNER.controller) {
      expect(wt, 0, no);
      o['controller'] = r.bool();
    } else skipField(r, R.owner, no, wt);
  }
  return o;
}

/** The field numbers a Pod and a Node condition share, and the rules of the condition's message. */
interface ConditionFields {
  type: number;
  status: number;
  reason: number;
  message: number;
  rules: Rules;
}

/** A Pod or Node condition (the two share type/status/reason/message; each has its own time fields). */
function condition(r: Reader, nums: ConditionFields, times: ReadonlyMap<number, string>): View {
  const c: View = { type: '', status: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === nums.type) c['type'] = str(r, wt, no);
    else if (no === nums.status) c['status'] = str(r, wt, no);
    else if (no === nums.reason) putNz(c, 'reason', str(r, wt, no));
    else if (no === nums.message) putNz(c, 'message', str(r, wt, no));
    else if (times.has(no)) {
      expect(wt, 2, no);
      put(c, times.get(no)!, time(r.sub()));
    } else skipField(r, nums.rules, no, wt);
  }
  return c;
}
const POD_CONDITION_FIELDS: ConditionFields = { ...POD_CONDITION, rules: R.podCondition };
const NODE_CONDITION_FIELDS: ConditionFields = { ...NODE_CONDITION, rules: R.nodeCondition };
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
    else if (no === TOLERATION.tolerationSeconds) {
      expect(wt, 0, no);
      t['tolerationSeconds'] = r.int64();
    } else skipField(r, R.toleration, no, wt);
  }
  return t;
}

/** A volume as JSON has it: `name` plus the key of each set source (JSON inlines VolumeSource). */
function volume(r: Reader): View {
  const v: View = { name: '' };
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === VOLUME.name) v['name'] = str(r, wt, no);
    else if (no === VOLUME.volumeSource) {
      expect(wt, 2, no);
      volumeSource(r.sub(), v);
    } else skipField(r, R.volume, no, wt);
  }
  return v;
}

/** One occurrence of a VolumeSource, merged into `into` (a source seen twice is merged, its last claimName or driver wins). */
function volumeSource(r: Reader, into: View): void {
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    const key = VOLUME_SOURCE_KEYS.get(no);
    if (key === undefined) {
      skipField(r, R.volumeSource, no, wt);
      continue;
    }
    expect(wt, 2, no);
    if (no === PVC_SOURCE_NO) {
      const cur = (into[key] as View | undefined) ?? { claimName: '' };
      lastString(r.sub(), PVC_SOURCE.claimName, R.pvcSource, cur, 'claimName');
      into[key] = cur;
    } else if (no === CSI_SOURCE_NO) {
      const cur = (into[key] as View | undefined) ?? { driver: '' };
      lastString(r.sub(), CSI_SOURCE.driver, R.csiSource, cur, 'driver');
      into[key] = cur;
    } else {
      into[key] ??= {};
      skipField(r, R.volumeSource, no, wt);
    }
  }
}

/** Sets `into[k]` to the last value of string field `want` of the message, if it has one (proto: the last one wins). */
function lastString(r: Reader, want: number, rules: Rules, into: View, k: string): void {
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === want) into[k] = str(r, wt, no);
    else skipField(r, rules, no, wt);
  }
}

/** A container status reduced to which of its state's members are set (objects.ts `containerNotRunning`). */
function containerStatus(r: Reader): View {
  let state: View | undefined;
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === CONTAINER_STATUS.state) {
      expect(wt, 2, no);
      state ??= {};
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === CONTAINER_STATE.waiting) state['waiting'] = {};
        else if (sno === CONTAINER_STATE.running) state['running'] = {};
        else if (sno === CONTAINER_STATE.terminated) state['terminated'] = {};
        skipField(s, R.containerState, sno, swt);
      }
    } else skipField(r, R.containerStatus, no, wt);
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
    else if (no === TAINT.timeAdded) {
      expect(wt, 2, no);
      put(t, 'timeAdded', time(r.sub()));
    } else skipField(r, R.taint, no, wt);
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
 * Mirrors `runtime.Unknown.Unmarshal` (k8s.io/apimachinery v0.37.2 `pkg/runtime/generated.pb.go`).
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
        else skipField(t, R.typeMeta, tno, twt);
      }
    } else if (no === UNKNOWN.raw) {
      expect(wt, 2, no);
      out.raw = r.bytes();
    } else if (no === UNKNOWN.contentEncoding) out.contentEncoding = str(r, wt, no);
    else if (no === UNKNOWN.contentType) out.contentType = str(r, wt, no);
    else skipField(r, R.unknown, no, wt);
  }
  return out;
}

/**
 * Reads a `metav1.WatchEvent` frame: its `type` and its object's `raw` bytes (a view into the input;
 * empty when absent). The same merge rules as {@link unknownFields}.
 * @throws {MalformedMessage} when the bytes do not parse or a field has the wrong wire type.
 * Mirrors `WatchEvent.Unmarshal` (k8s.io/apimachinery v0.37.2 `pkg/apis/meta/v1/generated.pb.go`).
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
        } else skipField(o, R.rawExtension, ono, owt);
      }
    } else skipField(r, R.watchEvent, no, wt);
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

/** A Pod's `spec`, read from every occurrence of the field (they merge). */
class PodSpecAcc {
  readonly spec: View = {};
  tolerations: RepeatedField | undefined;

  read(r: Reader): void {
    const spec = this.spec;
    while (r.more) {
      const at = r.pos;
      const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
      if (no === POD_SPEC.nodeName) putNz(spec, 'nodeName', str(r, wt, no));
      else if (no === POD_SPEC.tolerations) {
        expect(wt, 2, no);
        (this.tolerations ??= new RepeatedField()).add(at, r);
      } else if (no === POD_SPEC.volumes) {
        expect(wt, 2, no);
        push(spec, 'volumes', volume(r.sub()));
      } else skipField(r, R.podSpec, no, wt);
    }
  }

  /** @throws {MalformedMessage} when a toleration does not decode. */
  view(b: Buffer): View {
    if (this.tolerations) this.spec['tolerations'] = this.tolerations.views(b, sharedTolerationViews, toleration);
    return this.spec;
  }
}

const CONTAINER_STATUS_LISTS = new Map([
  [POD_STATUS.initContainerStatuses, 'initContainerStatuses'],
  [POD_STATUS.containerStatuses, 'containerStatuses'],
  [POD_STATUS.ephemeralContainerStatuses, 'ephemeralContainerStatuses'],
]);

/** One occurrence of a Pod's `status`, merged into `status`. */
function podStatus(r: Reader, status: View): void {
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === POD_STATUS.phase) putNz(status, 'phase', str(r, wt, no));
    // Pod GC orders terminated pods by it (an Evicted pod goes first), so objects.ts reads it.
    else if (no === POD_STATUS.reason) putNz(status, 'reason', str(r, wt, no));
    else if (no === POD_STATUS.conditions) {
      expect(wt, 2, no);
      push(status, 'conditions', condition(r.sub(), POD_CONDITION_FIELDS, POD_CONDITION_TIMES));
    } else if (CONTAINER_STATUS_LISTS.has(no)) {
      expect(wt, 2, no);
      push(status, CONTAINER_STATUS_LISTS.get(no)!, containerStatus(r.sub()));
    } else skipField(r, R.podStatus, no, wt);
  }
}

/**
 * A Pod's view from its message bytes (the envelope's `raw`).
 * @throws {MalformedMessage} where upstream's `Pod.Unmarshal` fails.
 */
export function podView(bytes: Uint8Array, meta: MetaOptions): View {
  const r = Reader.of(bytes);
  const metadata = new ObjectMetaAcc();
  const spec = new PodSpecAcc();
  const status: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === POD.metadata) {
      expect(wt, 2, no);
      metadata.read(r.sub(), meta);
    } else if (no === POD.spec) {
      expect(wt, 2, no);
      spec.read(r.sub());
    } else if (no === POD.status) {
      expect(wt, 2, no);
      podStatus(r.sub(), status);
    } else skipField(r, R.pod, no, wt);
  }
  return { metadata: metadata.view(r.b, sharedOwnerViews), spec: spec.view(r.b), status };
}

/**
 * A Node's view from its message bytes.
 * @throws {MalformedMessage} where upstream's `Node.Unmarshal` fails.
 */
export function nodeView(bytes: Uint8Array, meta: MetaOptions): View {
  const r = Reader.of(bytes);
  const metadata = new ObjectMetaAcc();
  const spec: View = {};
  const status: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === NODE.metadata) {
      expect(wt, 2, no);
      metadata.read(r.sub(), meta);
    } else if (no === NODE.spec) {
      expect(wt, 2, no);
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === NODE_SPEC.unschedulable) {
          expect(swt, 0, sno);
          put(spec, 'unschedulable', s.bool() ? true : undefined);
        } else if (sno === NODE_SPEC.taints) {
          expect(swt, 2, sno);
          push(spec, 'taints', taint(s.sub()));
        } else skipField(s, R.nodeSpec, sno, swt);
      }
    } else if (no === NODE.status) {
      expect(wt, 2, no);
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === NODE_STATUS.conditions) {
          expect(swt, 2, sno);
          push(status, 'conditions', condition(s.sub(), NODE_CONDITION_FIELDS, NODE_CONDITION_TIMES));
        } else skipField(s, R.nodeStatus, sno, swt);
      }
    } else skipField(r, R.node, no, wt);
  }
  return { metadata: metadata.view(r.b), spec, status };
}

/**
 * A Lease's view from its message bytes. `holderIdentity`, `leaseDurationSeconds` and
 * `leaseTransitions` are pointers: present exactly when written.
 * @throws {MalformedMessage} where upstream's `Lease.Unmarshal` fails.
 */
export function leaseView(bytes: Uint8Array, meta: MetaOptions): View {
  const r = Reader.of(bytes);
  const metadata = new ObjectMetaAcc();
  const spec: View = {};
  while (r.more) {
    const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
    if (no === LEASE.metadata) {
      expect(wt, 2, no);
      metadata.read(r.sub(), meta);
    } else if (no === LEASE.spec) {
      expect(wt, 2, no);
      const s = r.sub();
      while (s.more) {
        const st = s.tag(), sno = st >>> 3, swt = st & 7;
        if (sno === LEASE_SPEC.holderIdentity) spec['holderIdentity'] = str(s, swt, sno);
        else if (sno === LEASE_SPEC.leaseDurationSeconds) {
          expect(swt, 0, sno);
          spec['leaseDurationSeconds'] = s.int32();
        } else if (sno === LEASE_SPEC.leaseTransitions) {
          expect(swt, 0, sno);
          spec['leaseTransitions'] = s.int32();
        } else if (sno === LEASE_SPEC.acquireTime || sno === LEASE_SPEC.renewTime) {
          expect(swt, 2, sno);
          put(spec, sno === LEASE_SPEC.renewTime ? 'renewTime' : 'acquireTime', microTime(s.sub()));
        } else skipField(s, R.leaseSpec, sno, swt);
      }
    } else skipField(r, R.lease, no, wt);
  }
  return { metadata: metadata.view(r.b), spec };
}

/**
 * The `metadata.name` and `metadata.namespace` of an object whose bytes do not decode, read first
 * as far as its bytes allow (issue 53: an object the decoder cannot read reaches the informer's
 * cache as a keyed unreadable object). Pod, Node and Lease all carry `metadata` as field 1. Only
 * occurrences of `metadata` that read whole count (a name from bytes that do not parse could be
 * another object's); an empty name or namespace is absent, as in JSON. Never throws.
 * @returns the name and namespace read (either may be missing).
 */
export function undecodableMeta(bytes: Uint8Array): { name?: string; namespace?: string } {
  const r = Reader.of(bytes);
  const noMaps: MetaOptions = { labels: false, annotations: false };
  let key: View = {};
  try {
    while (r.more) {
      const tg = r.tag(), no = tg >>> 3, wt = tg & 7;
      if (no === POD.metadata && wt === 2) {
        // Merged into what earlier occurrences gave, and kept only once this one has read whole.
        const one = new ObjectMetaAcc();
        Object.assign(one.m, key);
        one.read(r.sub(), noMaps);
        one.view(r.b);
        key = { name: one.m['name'], namespace: one.m['namespace'] };
      } else r.skip(wt);
    }
  } catch {
    // the rest does not parse: keep what was read whole before it
  }
  const out: { name?: string; namespace?: string } = {};
  if (typeof key['name'] === 'string') out.name = key['name'];
  if (typeof key['namespace'] === 'string') out.namespace = key['namespace'];
  return out;
}
