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
 * Pure: no I/O. Errors: {@link decodeObject} and friends throw on bytes that do not decode.
 */
import { fromBinary, isFieldSet } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import {
  NodeSchema,
  PodSchema,
  TolerationSchema,
  VolumeSourceSchema,
  type ContainerStatus,
  type Node as PbNode,
  type NodeCondition as PbNodeCondition,
  type Pod as PbPod,
  type PodCondition as PbPodCondition,
  type Taint as PbTaint,
  type Toleration as PbToleration,
  type Volume as PbVolume,
} from './gen/k8s.io/api/core/v1/generated_pb.js';
import { LeaseSchema, LeaseSpecSchema, type Lease as PbLease } from './gen/k8s.io/api/coordination/v1/generated_pb.js';
import {
  ListMetaSchema,
  ObjectMetaSchema,
  OwnerReferenceSchema,
  StatusSchema,
  WatchEventSchema,
  type MicroTime,
  type ObjectMeta,
  type Time,
} from './gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';
import { unwrapEnvelope, WireFormatError } from './envelope.js';

/** A JSON-shaped view of an object. */
export type View = Record<string, unknown>;

/** The collections served in protobuf, by the kind of their items. */
export type ProtobufKind = 'Pod' | 'Node' | 'Lease';

const READ = { readUnknownFields: false } as const;

const decodeFns: Record<ProtobufKind, (raw: Uint8Array, withAnnotations: boolean) => View> = {
  Pod: (raw, a) => podView(fromBinary(PodSchema, raw, READ), a),
  Node: (raw, a) => nodeView(fromBinary(NodeSchema, raw, READ), a),
  Lease: (raw, a) => leaseView(fromBinary(LeaseSchema, raw, READ), a),
};

/**
 * Decodes one enveloped object of `kind` into its view.
 * @param withAnnotations keep `metadata.annotations` (a watch bookmark's initial-events-end mark; no converter reads them).
 * @throws {WireFormatError} when the envelope is malformed or names another kind; an Error from
 *   @bufbuild/protobuf when the object's bytes do not decode.
 */
export function decodeObject(kind: ProtobufKind, bytes: Uint8Array, withAnnotations = false): View {
  const env = unwrapEnvelope(bytes);
  if (env.kind !== kind) throw new WireFormatError(`expected a ${kind}, got ${env.kind || 'no kind'}`);
  return decodeFns[kind](env.raw, withAnnotations);
}

/** One decoded page of a list: the JSON list shape src/kube/listwatch.ts `ListPage` reads. */
export interface ListView {
  metadata: { resourceVersion: string; continue?: string };
  items: View[];
  /** Items skipped because their bytes did not decode (the rest of the page is kept). */
  malformed: number;
}

/**
 * Decodes an enveloped `<kind>List`. Items are decoded one by one, so a malformed item is skipped
 * (and counted in `malformed`) instead of failing the page.
 * @throws {WireFormatError} when the envelope or the list's own framing is malformed, or it is not a `<kind>List`.
 */
export function decodeList(kind: ProtobufKind, bytes: Uint8Array): ListView {
  const env = unwrapEnvelope(bytes);
  if (env.kind !== `${kind}List`) throw new WireFormatError(`expected a ${kind}List, got ${env.kind || 'no kind'}`);
  const decode = decodeFns[kind];
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
          out.items.push(decode(item, false));
        } catch {
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

/** One decoded watch frame: the event type and its object's view (`undefined` when the object did not decode). */
export interface WatchEventView {
  type: string;
  object: View | undefined;
}

/**
 * Decodes one watch frame (a `metav1.WatchEvent` without envelope). An ERROR event's object is a
 * `metav1.Status` (`{code, reason, message}`); a BOOKMARK keeps its annotations.
 * @throws {WireFormatError} when the frame is not a WatchEvent (the stream is unusable); an object
 *   that does not decode gives `object: undefined` instead (that one event is skipped).
 */
export function decodeWatchEvent(kind: ProtobufKind, frameBytes: Uint8Array): WatchEventView {
  let ev;
  try {
    ev = fromBinary(WatchEventSchema, frameBytes, READ);
  } catch (err) {
    throw new WireFormatError(`watch frame: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (ev.type === '') throw new WireFormatError('watch frame: WatchEvent without a type');
  const raw = ev.object?.raw ?? new Uint8Array(0);
  try {
    if (ev.type === 'ERROR') return { type: ev.type, object: statusView(raw) };
    return { type: ev.type, object: decodeObject(kind, raw, ev.type === 'BOOKMARK') };
  } catch {
    return { type: ev.type, object: undefined };
  }
}

/** A watch ERROR event's enveloped `metav1.Status`. */
function statusView(raw: Uint8Array): View {
  const env = unwrapEnvelope(raw);
  const s = fromBinary(StatusSchema, env.raw, READ);
  return { kind: 'Status', code: s.code, reason: s.reason, message: s.message };
}

// ---- field mapping ------------------------------------------------------------------------------

/** `metav1.Time` / `MicroTime` → epoch ms; a zero time (empty message) → undefined, as JSON's null. */
function time(t: Time | MicroTime | undefined): number | undefined {
  if (t === undefined || (t.seconds === 0n && t.nanos === 0)) return undefined;
  return Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6);
}

/** Sets `o[k] = v` unless `v` is undefined (so a view has no key where JSON has none). */
function put(o: View, k: string, v: unknown): void {
  if (v !== undefined) o[k] = v;
}

/** An `omitempty` string: absent when empty. */
const nz = (s: string): string | undefined => (s === '' ? undefined : s);

function hasEntries(m: Record<string, string>): boolean {
  for (const _ in m) return true;
  return false;
}

function metaView(m: ObjectMeta | undefined, withAnnotations: boolean): View {
  const out: View = {};
  if (m === undefined) return out;
  put(out, 'name', nz(m.name));
  put(out, 'namespace', nz(m.namespace));
  put(out, 'uid', nz(m.uid));
  put(out, 'resourceVersion', nz(m.resourceVersion));
  if (m.generation !== 0n) out['generation'] = Number(m.generation);
  put(out, 'creationTimestamp', time(m.creationTimestamp));
  put(out, 'deletionTimestamp', time(m.deletionTimestamp));
  if (isFieldSet(m, ObjectMetaSchema.field.deletionGracePeriodSeconds!)) out['deletionGracePeriodSeconds'] = Number(m.deletionGracePeriodSeconds);
  if (hasEntries(m.labels)) out['labels'] = m.labels;
  if (withAnnotations && hasEntries(m.annotations)) out['annotations'] = m.annotations;
  if (m.ownerReferences.length > 0) {
    out['ownerReferences'] = m.ownerReferences.map((r) => {
      const v: View = { apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid };
      if (isFieldSet(r, OwnerReferenceSchema.field.controller!)) v['controller'] = r.controller;
      return v;
    });
  }
  if (m.finalizers.length > 0) out['finalizers'] = m.finalizers;
  return out;
}

function conditionView(c: PbNodeCondition | PbPodCondition): View {
  const v: View = { type: c.type, status: c.status };
  put(v, 'reason', nz(c.reason));
  put(v, 'message', nz(c.message));
  put(v, 'lastTransitionTime', time(c.lastTransitionTime));
  if ('lastHeartbeatTime' in c) put(v, 'lastHeartbeatTime', time(c.lastHeartbeatTime));
  if ('lastProbeTime' in c) put(v, 'lastProbeTime', time(c.lastProbeTime));
  return v;
}

function taintView(t: PbTaint): View {
  const v: View = { key: t.key, effect: t.effect };
  put(v, 'value', nz(t.value));
  put(v, 'timeAdded', time(t.timeAdded));
  return v;
}

function tolerationView(t: PbToleration): View {
  const v: View = {};
  put(v, 'key', nz(t.key));
  put(v, 'operator', nz(t.operator));
  put(v, 'value', nz(t.value));
  put(v, 'effect', nz(t.effect));
  if (isFieldSet(t, TolerationSchema.field.tolerationSeconds!)) v['tolerationSeconds'] = Number(t.tolerationSeconds);
  return v;
}

/**
 * A volume as JSON has it: `name` plus the key of each source that is set (JSON inlines
 * `VolumeSource`). Only a claim's `claimName` and a CSI volume's `driver` are read inside a source.
 */
function volumeView(vol: PbVolume): View {
  const v: View = { name: vol.name };
  const src = vol.volumeSource;
  if (src === undefined) return v;
  for (const f of VolumeSourceSchema.fields) {
    if (!isFieldSet(src, f)) continue;
    if (f.localName === 'persistentVolumeClaim') v[f.name] = { claimName: src.persistentVolumeClaim?.claimName ?? '' };
    else if (f.localName === 'csi') v[f.name] = { driver: src.csi?.driver ?? '' };
    else v[f.name] = {};
  }
  return v;
}

/** A container status reduced to which of its state's members are set (objects.ts `containerNotRunning`). */
function containerStatusView(s: ContainerStatus): View {
  const st = s.state;
  if (st === undefined) return {};
  const state: View = {};
  if (st.waiting !== undefined) state['waiting'] = {};
  if (st.running !== undefined) state['running'] = {};
  if (st.terminated !== undefined) state['terminated'] = {};
  return { state };
}

function podView(p: PbPod, withAnnotations: boolean): View {
  const spec: View = {};
  const status: View = {};
  const s = p.spec;
  if (s !== undefined) {
    put(spec, 'nodeName', nz(s.nodeName));
    if (s.tolerations.length > 0) spec['tolerations'] = s.tolerations.map(tolerationView);
    if (s.volumes.length > 0) spec['volumes'] = s.volumes.map(volumeView);
  }
  const st = p.status;
  if (st !== undefined) {
    put(status, 'phase', nz(st.phase));
    if (st.conditions.length > 0) status['conditions'] = st.conditions.map(conditionView);
    if (st.initContainerStatuses.length > 0) status['initContainerStatuses'] = st.initContainerStatuses.map(containerStatusView);
    if (st.containerStatuses.length > 0) status['containerStatuses'] = st.containerStatuses.map(containerStatusView);
    if (st.ephemeralContainerStatuses.length > 0) status['ephemeralContainerStatuses'] = st.ephemeralContainerStatuses.map(containerStatusView);
  }
  return { metadata: metaView(p.metadata, withAnnotations), spec, status };
}

function nodeView(n: PbNode, withAnnotations: boolean): View {
  const spec: View = {};
  const status: View = {};
  if (n.spec !== undefined) {
    if (n.spec.unschedulable) spec['unschedulable'] = true;
    if (n.spec.taints.length > 0) spec['taints'] = n.spec.taints.map(taintView);
  }
  if (n.status !== undefined && n.status.conditions.length > 0) status['conditions'] = n.status.conditions.map(conditionView);
  return { metadata: metaView(n.metadata, withAnnotations), spec, status };
}

function leaseView(l: PbLease, withAnnotations: boolean): View {
  const spec: View = {};
  const s = l.spec;
  if (s !== undefined) {
    const f = LeaseSpecSchema.field;
    if (isFieldSet(s, f.holderIdentity!)) spec['holderIdentity'] = s.holderIdentity;
    if (isFieldSet(s, f.leaseDurationSeconds!)) spec['leaseDurationSeconds'] = s.leaseDurationSeconds;
    put(spec, 'acquireTime', time(s.acquireTime));
    put(spec, 'renewTime', time(s.renewTime));
    if (isFieldSet(s, f.leaseTransitions!)) spec['leaseTransitions'] = s.leaseTransitions;
  }
  return { metadata: metaView(l.metadata, withAnnotations), spec };
}

