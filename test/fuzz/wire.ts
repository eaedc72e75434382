/**
 * The wire between the API server and a run's informers, for the runs that hold wire events
 * (issue 57: `wire-bytes`, `wire-truncated`, and invariant (n), ./harness.ts). Such a run is played
 * twice, once through each path, and every Node, Pod and Lease version the in-memory cluster makes
 * reaches the processes' caches (./watch.ts) through a {@link WireMirror}:
 * - `protobuf`: the object encoded with @bufbuild/protobuf from the generated schemas
 *   (src/kube/protobuf/gen), strings that are not UTF-8 spliced in as raw bytes, cut short while a
 *   `wire-truncated` window holds it, enveloped, framed as a `WatchEvent` and decoded by the
 *   project's decoder (src/kube/protobuf/views.ts `decodeWatchEvent`, then the JSON path's
 *   converter, src/kube/objects.ts). An event whose object does not decode ends the stream and the
 *   informer relists (src/kube/wire.ts, as client-go's StreamWatcher and reflector): the object is
 *   then read from a `<Kind>List` by `decodeList`. The first fill of the mirror is a `decodeList` of
 *   every object.
 * - `json`: the same bytes read as kube-apiserver would serve them in JSON: decoded by upstream's
 *   gogo rules and written as encoding/json writes the Go struct (test/support/gogo-reference.ts,
 *   written apart from src/kube/protobuf/), parsed, and given to the same converter. Bytes upstream's
 *   `Unmarshal` refuses make the object malformed (the converter's rejection: the JSON path's rule).
 *
 * What the mirror does with each verdict is what src/kube/informercache.ts does with it: an object
 * is stored and its add or update delivered; a keyed unreadable object (`UndecodableObject`, or the
 * JSON path's malformed object) is handed to the processes' caches as a malformed object of that key
 * ({@link WireHooks.unreadable}: a Pod absent, a Node or Lease kept at its last readable version and
 * marked, a first list failing), and a readable version later ends that; an object the list leaves
 * out is deleted (client-go's Replace); an event that carries nothing changes nothing. So a decoder
 * that dropped an object it cannot read, instead of yielding it keyed, changes what the controllers
 * see, and (n) compares what they then decide with the JSON path's run.
 *
 * VolumeAttachments, DaemonSets, claims and volumes are not served in protobuf (src/kube/wire.ts
 * covers Pods, Nodes and Leases): the mirror hands the cluster's own objects through.
 *
 * Modelling limits: the relist after an undecodable event is instantaneous and changes only that
 * object (the stream is not counted as lost); a relist the harness makes (a 410, an outage) reads
 * the mirror's versions, each decoded once, when the API server made it.
 *
 * Times: epoch milliseconds.
 */
import { create, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { ClusterHandlers, InMemoryCluster, ResourceHandlers } from '../../src/inmemory/cluster.js';
import { ObservedMap } from '../../src/inmemory/maps.js';
import { toLease, toNode, toPod, UNKNOWN_INLINE_DRIVER, type Lease, type Node, type Pod } from '../../src/kube/objects.js';
import { LeaseSchema } from '../../src/kube/protobuf/gen/k8s.io/api/coordination/v1/generated_pb.js';
import { NodeSchema, PodSchema } from '../../src/kube/protobuf/gen/k8s.io/api/core/v1/generated_pb.js';
import { ListMetaSchema } from '../../src/kube/protobuf/gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';
import { decodeList, decodeWatchEvent, type ProtobufKind } from '../../src/kube/protobuf/views.js';
import { rawKey } from '../../src/kube/listwatch.js';
import { UndecodableObject } from '../../src/kube/undecodable.js';
import type { ClusterReads } from '../../src/whatif/sources.js';
import { goDecode, GoDecodeError, goJsonText, messageJson } from '../support/gogo-reference.js';
import { envelopeRaw, rawString, watchFrame, withRawBytes, type RawString } from '../support/protobuf-wire.js';
import { keyOf } from './watch.js';

/** How a wire run's objects reach the caches. */
export type WireMode = 'json' | 'protobuf';

/** The resources served in protobuf. */
export type WireResource = 'nodes' | 'pods' | 'leases';
export const WIRE_RESOURCES: readonly WireResource[] = ['nodes', 'pods', 'leases'];

/**
 * Byte sequences that are not UTF-8, 7 bytes each (with a one-letter zone in front, 8: the least a
 * raw string's placeholder takes). The first two read alike by Go's rule (one U+FFFD per byte that
 * starts no valid sequence: `\uFFFD\uFFFDA\uFFFD…`) but not by WHATWG's (`TextDecoder` makes one
 * U+FFFD of `E2 82`): a decoder rendering them the browser's way would split a zone that upstream
 * keeps whole. Then a bad continuation, a surrogate and an overlong form; a truncated 4-byte
 * sequence and stray continuations; valid `é` and `€` before an invalid byte.
 */
export const WIRE_BAD_BYTES: readonly (readonly number[])[] = [
  [0xe2, 0x82, 0x41, 0xff, 0xff, 0xff, 0xff],
  [0xff, 0xfe, 0x41, 0xff, 0xff, 0xff, 0xff],
  [0xc3, 0x28, 0xed, 0xa0, 0x80, 0xc0, 0xaf],
  [0xf0, 0x9f, 0x98, 0x41, 0x80, 0x80, 0xff],
  [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xff, 0x41],
];

/**
 * The string kube-apiserver's JSON holds for `bytes` (Go's encoding/json: one U+FFFD per invalid
 * byte), from the reference of test/support/gogo-reference.ts, not from the project's decoder.
 */
export function goRendered(bytes: Uint8Array): string {
  return JSON.parse(goJsonText(Buffer.from(bytes))) as string;
}

/** What the mirror tells the processes' caches (./watch.ts `malform` / `unmalform`). */
export interface WireHooks {
  /** Object `key` of `resource` reached the informer as a keyed unreadable object. */
  unreadable(resource: WireResource, key: string): void;
  /** A readable version of `key` came after an unreadable one (the mirror holds it now). */
  readable(resource: WireResource, key: string): void;
}

/** What one object version came through the wire as (see the file header). */
type Verdict<T> = { kind: 'object'; obj: T } | { kind: 'unreadable'; key: string | undefined } | { kind: 'absent' } | { kind: 'none' };

const KIND: Record<WireResource, ProtobufKind> = { nodes: 'Node', pods: 'Pod', leases: 'Lease' };
const API_VERSION: Record<WireResource, string> = { nodes: 'v1', pods: 'v1', leases: 'coordination.k8s.io/v1' };
const SCHEMA: Record<WireResource, DescMessage> = { nodes: NodeSchema, pods: PodSchema, leases: LeaseSchema };
const CONVERT: Record<WireResource, (raw: unknown) => Node | Pod | Lease | undefined> = { nodes: toNode, pods: toPod, leases: toLease };

/** A `metav1.Time` of epoch ms (its nanoseconds too: upstream's `Unmarshal` drops them, and both paths must). */
function time(ms: number | undefined): { seconds: bigint; nanos: number } | undefined {
  if (ms === undefined) return undefined;
  const s = Math.floor(ms / 1000);
  return { seconds: BigInt(s), nanos: (ms - s * 1000) * 1e6 };
}

/** Builds one object's message bytes: its strings through {@link str}, so those with raw bytes get a placeholder. */
class Encoder {
  readonly #raws: ReadonlyMap<string, Uint8Array>;
  readonly used: RawString[] = [];

  constructor(raws: ReadonlyMap<string, Uint8Array>) {
    this.#raws = raws;
  }

  /** `s`, or the placeholder of its raw bytes when a `wire-bytes` event gave it some. */
  str(s: string): string;
  str(s: string | undefined): string | undefined;
  str(s: string | undefined): string | undefined {
    const raw = s === undefined ? undefined : this.#raws.get(s);
    if (raw === undefined) return s;
    const r = rawString([...raw]);
    this.used.push(r);
    return r.placeholder;
  }

  labels(l: Readonly<Record<string, string>> | undefined): Record<string, string> {
    return Object.fromEntries(Object.entries(l ?? {}).map(([k, v]) => [this.str(k), this.str(v)]));
  }

  node(n: Node): MessageInitShape<typeof NodeSchema> {
    return {
      metadata: { name: this.str(n.name), uid: n.uid, resourceVersion: n.resourceVersion, creationTimestamp: time(n.creationTimestamp), labels: this.labels(n.labels) },
      spec: { unschedulable: n.unschedulable, taints: n.taints.map((t) => ({ key: this.str(t.key), value: this.str(t.value), effect: this.str(t.effect), timeAdded: time(t.timeAdded) })) },
      status: {
        conditions: n.conditions.map((c) => ({ type: this.str(c.type), status: this.str(c.status), reason: this.str(c.reason), message: this.str(c.message), lastHeartbeatTime: time(c.lastHeartbeatTime), lastTransitionTime: time(c.lastTransitionTime) })),
      },
    };
  }

  pod(p: Pod): MessageInitShape<typeof PodSchema> {
    const claims = p.pvcNames.map((claimName, i) => ({ name: `claim-${i}`, volumeSource: { persistentVolumeClaim: { claimName } } }));
    // A generic ephemeral volume's claim is `<pod>-<volume>` (objects.ts podVolumes).
    const ephemeral = (p.ephemeralClaimNames ?? []).map((c) => ({ name: c.slice(p.name.length + 1), volumeSource: { ephemeral: {} } }));
    const inline = (p.inlineVolumeDrivers ?? []).map((driver, i) => ({ name: `inline-${i}`, volumeSource: driver === UNKNOWN_INLINE_DRIVER ? { gcePersistentDisk: { pdName: 'disk' } } : { csi: { driver } } }));
    return {
      metadata: {
        namespace: p.namespace,
        name: p.name,
        uid: p.uid,
        resourceVersion: p.resourceVersion,
        generation: p.generation === undefined ? undefined : BigInt(p.generation),
        creationTimestamp: time(p.creationTimestamp),
        deletionTimestamp: time(p.deletionTimestamp),
        deletionGracePeriodSeconds: p.deletionGracePeriodSeconds === undefined ? undefined : BigInt(p.deletionGracePeriodSeconds),
        labels: this.labels(p.labels),
        ownerReferences: p.ownerReferences.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, controller: o.controller })),
        finalizers: [...p.finalizers],
      },
      spec: {
        nodeName: this.str(p.nodeName),
        tolerations: p.tolerations.map((t) => ({ key: this.str(t.key), operator: t.operator, value: this.str(t.value), effect: this.str(t.effect), tolerationSeconds: t.tolerationSeconds === undefined ? undefined : BigInt(t.tolerationSeconds) })),
        volumes: [...claims, ...ephemeral, ...inline],
      },
      status: {
        phase: p.phase,
        reason: p.statusReason,
        conditions: p.conditions.map((c) => ({ type: c.type, status: c.status, reason: this.str(c.reason), message: this.str(c.message), lastTransitionTime: time(c.lastTransitionTime), lastProbeTime: time(c.lastProbeTime) })),
        // objects.ts containersNotRunning: a pod built without it may have containers running.
        containerStatuses: [{ name: 'main', state: p.containersNotRunning === true ? { terminated: {} } : { running: {} } }],
      },
    };
  }

  lease(l: Lease): MessageInitShape<typeof LeaseSchema> {
    // MicroTime: the same message as Time; upstream keeps its microseconds.
    const micro = time;
    return {
      metadata: { namespace: l.namespace, name: this.str(l.name), resourceVersion: l.resourceVersion },
      spec: { holderIdentity: this.str(l.holderIdentity), leaseDurationSeconds: l.leaseDurationSeconds, renewTime: micro(l.renewTime), acquireTime: micro(l.acquireTime), leaseTransitions: l.leaseTransitions },
    };
  }
}

/**
 * Cuts `bytes` (a message) inside its last top-level field, `cut` bytes from the end at most, so
 * that the field's length runs past the message (upstream's `Unmarshal`: `io.ErrUnexpectedEOF`) and
 * the fields before it (metadata, so the object's name) stay whole.
 * @returns the cut bytes, or `undefined` when the last field is too short to cut inside.
 */
export function truncateLastField(bytes: Uint8Array, cut: number): Uint8Array | undefined {
  const r = new BinaryReader(bytes);
  let last = 0;
  while (r.pos < r.len) {
    last = r.pos;
    const [no, wt] = r.tag();
    r.skip(wt, no);
  }
  const size = bytes.length - last;
  if (size < 2) return undefined;
  return bytes.subarray(0, bytes.length - (1 + ((Math.max(1, cut) - 1) % (size - 1))));
}

/** A `<Kind>List` message of items given as bytes (truncated ones too, which `create` could not take). */
function listBytes(items: readonly Uint8Array[]): Uint8Array {
  const w = new BinaryWriter();
  // NodeList, PodList and LeaseList alike: `metadata = 1 (ListMeta)`, `items = 2`.
  w.tag(1, WireType.LengthDelimited).bytes(toBinary(ListMetaSchema, create(ListMetaSchema, { resourceVersion: '1' })));
  for (const item of items) w.tag(2, WireType.LengthDelimited).bytes(item);
  return w.finish();
}

/**
 * A cluster's Nodes, Pods and Leases as one run's informers receive them through the wire (see the
 * file header); the rest is the cluster's own. Handed to ./watch.ts `ProcessCaches` in place of the
 * cluster. Subscribe it before any process starts.
 */
export class WireMirror implements ClusterReads {
  readonly nodes = new ObservedMap<Node>(() => (this.#nodeList = undefined));
  readonly pods = new ObservedMap<Pod>(() => (this.#podList = undefined));
  readonly leases = new Map<string, Lease>();
  readonly volumeAttachments: InMemoryCluster['volumeAttachments'];
  readonly daemonSets: InMemoryCluster['daemonSets'];
  readonly pvcs: InMemoryCluster['pvcs'];
  readonly pvs: InMemoryCluster['pvs'];
  readonly mode: WireMode;
  /** Object versions that went through the wire, and of them those that came out unreadable. */
  readonly counts = { delivered: 0, unreadable: 0 };
  readonly #cluster: InMemoryCluster;
  readonly #raws: ReadonlyMap<string, Uint8Array>;
  readonly #hooks: WireHooks;
  readonly #handlers: { nodes: ResourceHandlers<Node>[]; pods: ResourceHandlers<Pod>[]; leases: ResourceHandlers<Lease>[] } = { nodes: [], pods: [], leases: [] };
  /** `resource:key` of the objects whose newest version reached the caches unreadable. */
  readonly #unreadable = new Set<string>();
  /** `resource:key` → bytes to cut: the API server holds these objects truncated now. */
  readonly #truncated = new Map<string, number>();
  #nodeList: Node[] | undefined;
  #podList: Pod[] | undefined;
  #leaseRV = '';

  /**
   * @param raws the strings that carry raw bytes on the wire: the rendered string (the cluster's, as
   *   JSON gives it) → its bytes. Read at each encode (a later `wire-bytes` event adds to it).
   */
  constructor(cluster: InMemoryCluster, mode: WireMode, raws: ReadonlyMap<string, Uint8Array>, hooks: WireHooks) {
    this.#cluster = cluster;
    this.mode = mode;
    this.#raws = raws;
    this.#hooks = hooks;
    this.volumeAttachments = cluster.volumeAttachments;
    this.daemonSets = cluster.daemonSets;
    this.pvcs = cluster.pvcs;
    this.pvs = cluster.pvs;
    for (const r of WIRE_RESOURCES) {
      this.#fill(r);
      const h: ResourceHandlers<Node | Pod | Lease> = { add: (o) => this.#change(r, o), update: (_old, o) => this.#change(r, o), delete: (o) => this.#remove(r, o) };
      cluster.on(r, h as never);
    }
  }

  nodeList(): readonly Node[] {
    return (this.#nodeList ??= [...this.nodes.values()]);
  }

  podList(): readonly Pod[] {
    return (this.#podList ??= [...this.pods.values()]);
  }

  podsOnNode(node: string): Pod[] {
    return this.podList().filter((p) => p.nodeName === node);
  }

  volumeAttachmentsOnNode(node: string): ReturnType<InMemoryCluster['volumeAttachmentsOnNode']> {
    return this.#cluster.volumeAttachmentsOnNode(node);
  }

  leaseResourceVersion(): string {
    return this.#leaseRV;
  }

  on<K extends keyof ClusterHandlers>(resource: K, h: ClusterHandlers[K]): void {
    if (resource === 'volumeAttachments') this.#cluster.on(resource, h);
    else (this.#handlers[resource as WireResource] as unknown[]).push(h);
  }

  /** `resource:key` of every object whose newest version reached the caches unreadable (a process starting now lists them so). */
  unreadableIds(): string[] {
    return [...this.#unreadable];
  }

  /**
   * The API server holds object `key` of `resource` cut `cut` bytes short in its last field from
   * now (every version, until {@link untruncate}): its current version goes through the wire again.
   * @returns false when the cluster has no such object, or it is too short to cut.
   */
  truncate(resource: WireResource, key: string, cut: number): boolean {
    const cur = this.#store(resource).get(key);
    if (cur === undefined || truncateLastField(this.#encode(resource, cur), cut) === undefined) return false;
    this.#truncated.set(`${resource}:${key}`, cut);
    this.#change(resource, cur);
    return true;
  }

  /** The API server holds a readable version of `key` again: its current version goes through the wire. */
  untruncate(resource: WireResource, key: string): void {
    this.#truncated.delete(`${resource}:${key}`);
    const cur = this.#store(resource).get(key);
    if (cur !== undefined) this.#change(resource, cur);
  }

  #store(resource: WireResource): ReadonlyMap<string, Node | Pod | Lease> {
    const c = this.#cluster;
    return resource === 'nodes' ? c.nodes : resource === 'pods' ? c.pods : c.leases;
  }

  #mine(resource: WireResource): Map<string, Node | Pod | Lease> {
    return (resource === 'nodes' ? this.nodes : resource === 'pods' ? this.pods : this.leases) as Map<string, Node | Pod | Lease>;
  }

  /** The message bytes of `o` as the API server stores it: raw strings spliced in, cut while truncated. */
  #encode(resource: WireResource, o: Node | Pod | Lease): Uint8Array {
    const e = new Encoder(this.#raws);
    const bytes =
      resource === 'nodes' ? toBinary(NodeSchema, create(NodeSchema, e.node(o as Node))) : resource === 'pods' ? toBinary(PodSchema, create(PodSchema, e.pod(o as Pod))) : toBinary(LeaseSchema, create(LeaseSchema, e.lease(o as Lease)));
    return withRawBytes(bytes, e.used);
  }

  #wireBytes(resource: WireResource, o: Node | Pod | Lease): Uint8Array {
    const bytes = this.#encode(resource, o);
    const cut = this.#truncated.get(`${resource}:${keyOf(resource, o)}`);
    return (cut !== undefined && truncateLastField(bytes, cut)) || bytes;
  }

  /** The verdict of a `<Kind>List` item (a view, a keyed unreadable object, or nothing when the list left it out). */
  #listItem(resource: WireResource, item: unknown): Verdict<Node | Pod | Lease> {
    if (item === undefined) return { kind: 'absent' };
    if (item instanceof UndecodableObject) return { kind: 'unreadable', key: rawKey(item) };
    const obj = CONVERT[resource](item);
    return obj === undefined ? { kind: 'unreadable', key: rawKey(item) } : { kind: 'object', obj };
  }

  /** One version of `o` through this run's path (see the file header). */
  #read(resource: WireResource, o: Node | Pod | Lease): Verdict<Node | Pod | Lease> {
    const bytes = this.#wireBytes(resource, o);
    if (this.mode === 'json') {
      let json: unknown;
      try {
        json = JSON.parse(messageJson(goDecode(SCHEMA[resource], Buffer.from(bytes))));
      } catch (err) {
        if (err instanceof GoDecodeError) return { kind: 'unreadable', key: keyOf(resource, o) };
        throw err;
      }
      const obj = CONVERT[resource](json);
      return obj === undefined ? { kind: 'unreadable', key: keyOf(resource, o) } : { kind: 'object', obj };
    }
    const kind = KIND[resource];
    const ev = decodeWatchEvent(kind, watchFrame('MODIFIED', envelopeRaw(kind, API_VERSION[resource], bytes)));
    if (ev.undecodable === undefined) return ev.object === undefined ? { kind: 'none' } : this.#listItem(resource, ev.object);
    // The stream ends on it and the informer relists (src/kube/wire.ts): the list's verdict stands.
    const list = decodeList(kind, envelopeRaw(`${kind}List`, API_VERSION[resource], listBytes([bytes])));
    return this.#listItem(resource, list.items[0]);
  }

  /** The first list of `resource`: every object in one `<Kind>List` (JSON: each through the reference). */
  #fill(resource: WireResource): void {
    const all = [...this.#store(resource).values()];
    const verdicts =
      this.mode === 'json'
        ? all.map((o) => this.#read(resource, o))
        : (() => {
            const kind = KIND[resource];
            const list = decodeList(kind, envelopeRaw(`${kind}List`, API_VERSION[resource], listBytes(all.map((o) => this.#wireBytes(resource, o)))));
            return all.map((_, i) => this.#listItem(resource, list.items[i]));
          })();
    for (const v of verdicts) if (v.kind === 'object') this.#put(resource, v.obj);
  }

  #put(resource: WireResource, o: Node | Pod | Lease): Node | Pod | Lease | undefined {
    const key = keyOf(resource, o);
    const old = this.#mine(resource).get(key);
    this.#mine(resource).set(key, o);
    if (resource === 'leases') this.#leaseRV = o.resourceVersion;
    return old;
  }

  #notify(resource: WireResource, old: unknown, cur: unknown): void {
    for (const h of this.#handlers[resource] as ResourceHandlers<unknown>[]) {
      if (old === undefined && cur !== undefined) h.add?.(cur);
      else if (old !== undefined && cur !== undefined) h.update?.(old, cur);
      else if (old !== undefined) h.delete?.(old);
    }
  }

  /** A new version of `o` in the API: through the wire, then what the informer's cache does with it. */
  #change(resource: WireResource, o: Node | Pod | Lease): void {
    const v = this.#read(resource, o);
    this.counts.delivered++;
    if (v.kind === 'object') {
      const key = keyOf(resource, v.obj);
      const old = this.#put(resource, v.obj);
      if (this.#unreadable.delete(`${resource}:${key}`)) this.#hooks.readable(resource, key);
      else this.#notify(resource, old, v.obj);
    } else if (v.kind === 'unreadable') {
      this.counts.unreadable++;
      // Without a name the cache cannot place it (a Node or Lease list then fails as a whole); our cuts keep the metadata whole.
      if (v.key === undefined || this.#unreadable.has(`${resource}:${v.key}`)) return;
      this.#unreadable.add(`${resource}:${v.key}`);
      this.#hooks.unreadable(resource, v.key);
    } else if (v.kind === 'absent') {
      this.#drop(resource, keyOf(resource, o));
    }
  }

  /** The object left the API (or a relist left it out): the cache deletes it, by key. */
  #remove(resource: WireResource, o: Node | Pod | Lease): void {
    this.#drop(resource, keyOf(resource, o));
  }

  #drop(resource: WireResource, key: string): void {
    // A malformed object's cache entry ends with its deletion (informercache.ts applyEvent DELETED).
    if (this.#unreadable.delete(`${resource}:${key}`)) this.#hooks.readable(resource, key);
    const old = this.#mine(resource).get(key);
    if (old === undefined) return;
    this.#mine(resource).delete(key);
    this.#notify(resource, old, undefined);
  }
}
