// Why this file is over 500 lines: it is the slim object model, one interface and one converter per kind (Node, Pod, Lease, DaemonSet, VolumeAttachment, PVC, PV) that every module imports; split candidate: types vs converters.
/**
 * The slim object model: the few fields of each Kubernetes object that the controller keeps in
 * memory, with every timestamp normalised to epoch **milliseconds**.
 *
 * Why: client-node hands out timestamps as `Date` from typed list calls but as `string` from watch
 * events (typescript-notes.md §1.10, kubernetes-client/javascript#655), and full objects carry
 * `managedFields` and other bulk that a 30,000-pod cache cannot afford. Every object entering the
 * controller goes through one of the `to*` converters here. A converter returns `undefined` for a
 * malformed object, so the informer can log and skip it instead of crashing.
 */
import { CACHED_POD_CONDITION_TYPES } from './podconditions.js';
import { SharedFrozen } from '../util/sharedfrozen.js';

/** Condition status values as the API spells them. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A node condition. Timestamps are epoch milliseconds. */
export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: number;
  lastTransitionTime?: number;
}

/** Taint effects. */
export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

/** A node taint. `timeAdded` is epoch milliseconds (whole seconds on the wire). */
export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect | string;
  timeAdded?: number;
}

/** A pod toleration. `tolerationSeconds` is in **seconds**, as in the API. */
export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: TaintEffect | string;
  tolerationSeconds?: number;
}

/** What the controller keeps of a Node. */
export interface Node {
  name: string;
  uid: string;
  resourceVersion: string;
  /** epoch ms */
  creationTimestamp: number;
  labels: Readonly<Record<string, string>>;
  unschedulable: boolean;
  taints: readonly Taint[];
  conditions: readonly NodeCondition[];
}

/** A pod condition. Timestamps are epoch milliseconds. */
export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: number;
  lastProbeTime?: number;
  /**
   * `metadata.generation` of the pod this condition was decided on (Kubernetes ≥ 1.33). Only set on
   * conditions this controller writes; {@link toPod} does not read it back.
   */
  observedGeneration?: number;
}

/** An owner reference, trimmed. */
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** What the controller keeps of a Pod. */
export interface Pod {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** `metadata.generation`; absent on servers before 1.33, which do not set it for pods. */
  generation?: number;
  /** `spec.nodeName`; `""` when unscheduled. */
  nodeName: string;
  phase: string;
  /** epoch ms */
  creationTimestamp: number;
  /** `status.reason` (for example `Evicted`); absent when empty. */
  statusReason?: string;
  /** epoch ms; set once the pod is terminating. */
  deletionTimestamp?: number;
  /** seconds */
  deletionGracePeriodSeconds?: number;
  /** Only the types in `CACHED_POD_CONDITION_TYPES` (./podconditions.ts), in wire order. */
  conditions: readonly PodCondition[];
  /** Frozen, and shared by every pod with an equal list ({@link toPod}): never mutate. */
  tolerations: readonly Toleration[];
  /** Frozen, and shared by every pod with an equal list ({@link toPod}): never mutate. */
  ownerReferences: readonly OwnerRef[];
  /** Names of the PersistentVolumeClaims the pod mounts through `persistentVolumeClaim` volumes. */
  pvcNames: readonly string[];
  /**
   * Names of the claims of the pod's generic ephemeral volumes (`ephemeral.volumeClaimTemplate`):
   * `<pod>-<volume>`, upstream `ephemeral.VolumeClaimName`. Such a claim is the pod's only when the
   * pod controls it (`ephemeral.VolumeIsForPod`); {@link toPod} always sets this, absent means none.
   */
  ephemeralClaimNames?: readonly string[];
  /**
   * Inline volumes that might be backed by an attachment: the driver of each `csi` volume, and
   * {@link UNKNOWN_INLINE_DRIVER} for any other source not known to be node-local (in-tree disks,
   * flexVolume, sources this model does not know). Node-local sources (emptyDir, configMap, secret,
   * downwardAPI, projected, hostPath, gitRepo, image, nfs) are left out. Absent means none.
   */
  inlineVolumeDrivers?: readonly string[];
  finalizers: readonly string[];
  /**
   * True when no container, init container or ephemeral container status is running: each one is
   * `terminated` or `waiting`, or there are none. Upstream `notRunning` over the three lists
   * (`pkg/volume/util/util.go`, used by `IsPodTerminated`). {@link toPod} always sets it; a pod
   * built without it counts as "containers may be running" (the safe reading for volume decisions).
   */
  containersNotRunning?: boolean;
  /**
   * `metadata.labels`, kept only by {@link toPodWithLabels} (the pod informer of legacy eviction,
   * which needs them for 1.20's DaemonSet selector rule); absent otherwise and when the pod has none.
   * Frozen and shared by every pod with the same labels (see {@link internLabels}): never mutate.
   */
  labels?: Readonly<Record<string, string>>;
}

/** What the controller keeps of a node heartbeat Lease (`coordination.k8s.io/v1`). */
export interface Lease {
  namespace: string;
  name: string;
  resourceVersion: string;
  holderIdentity?: string;
  /** seconds */
  leaseDurationSeconds?: number;
  /** epoch ms (MicroTime on the wire; sub-millisecond precision is dropped) */
  renewTime?: number;
  /** epoch ms */
  acquireTime?: number;
  leaseTransitions?: number;
}

/** One `matchExpressions` entry of a `metav1.LabelSelector`. */
export interface LabelSelectorRequirement {
  key: string;
  /** `In`, `NotIn`, `Exists` or `DoesNotExist`; anything else makes the selector invalid. */
  operator: string;
  values?: readonly string[];
}

/** A `metav1.LabelSelector`. */
export interface LabelSelector {
  matchLabels?: Readonly<Record<string, string>>;
  matchExpressions?: readonly LabelSelectorRequirement[];
}

/** What the controller keeps of a DaemonSet. */
export interface DaemonSet {
  namespace: string;
  name: string;
  uid: string;
  /** `spec.selector`; absent when the object has none (it then selects nothing). */
  selector?: LabelSelector;
}

/** What the controller keeps of a VolumeAttachment (`storage.k8s.io/v1`). */
export interface VolumeAttachment {
  name: string;
  uid: string;
  resourceVersion: string;
  attacher: string;
  nodeName: string;
  persistentVolumeName?: string;
  attached: boolean;
  /** epoch ms */
  deletionTimestamp?: number;
}

/** What the controller keeps of a PersistentVolumeClaim. */
export interface PersistentVolumeClaim {
  namespace: string;
  name: string;
  uid: string;
  volumeName?: string;
  /** UID of the claim's controller owner reference (for a generic ephemeral volume's claim: its pod). */
  controllerUid?: string;
}

/** What the controller keeps of a PersistentVolume. */
export interface PersistentVolume {
  name: string;
  uid: string;
  claimRef?: { namespace: string; name: string };
}

// ---------------------------------------------------------------------------
// Converters from the wire (or client-node's typed objects) to the slim model.
// ---------------------------------------------------------------------------

type Json = Record<string, unknown>;

function obj(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/**
 * The one empty list every cached object shares (a 30,000-pod cache otherwise holds ~100,000
 * empty arrays of 32 bytes each). Frozen: the slim model's lists are `readonly`, and a write would throw.
 */
const EMPTY: readonly never[] = Object.freeze([]);

/**
 * Converts each element of a wire list with `convert`, dropping `undefined` (malformed) results.
 * @returns the converted list, or the shared frozen empty list when nothing is left.
 */
function listOf<T>(v: unknown, convert: (e: unknown) => T | undefined): readonly T[] {
  const items = arr(v);
  if (items.length === 0) return EMPTY;
  const out: T[] = [];
  for (const e of items) {
    const t = convert(e);
    if (t !== undefined) out.push(t);
  }
  return out.length === 0 ? EMPTY : out;
}

/**
 * Strings that repeat across cached objects (node names in every pod and Lease, namespaces,
 * toleration and taint keys, owner references, condition reasons and messages, label keys and
 * values). `JSON.parse` makes a fresh copy of every string value over 10 characters, so without
 * this 30,000 pods hold 30,000 copies of a few hundred node names. The table only shares; it never
 * changes a value, and it is dropped whole once it holds {@link INTERN_TABLE_MAX} strings, so churn
 * (deleted nodes, old ReplicaSet uids) cannot grow it without bound.
 */
const INTERN_TABLE_MAX = 65_536;
let internTable = new Map<string, string>();

/**
 * The shared copy of `s` (equal to `s`; only identity differs).
 * @returns `s` itself the first time a value is seen, the earlier copy after that. Never throws.
 */
export function intern(s: string): string {
  const hit = internTable.get(s);
  if (hit !== undefined) return hit;
  if (internTable.size >= INTERN_TABLE_MAX) internTable = new Map();
  internTable.set(s, s);
  return s;
}

/** {@link str}, interned. */
function istr(v: unknown): string | undefined {
  return typeof v === 'string' ? intern(v) : undefined;
}
function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * Normalises a Kubernetes timestamp (RFC 3339 string, MicroTime string, `Date`, or the epoch-ms number of src/kube/protobuf/views.ts) to epoch ms.
 * @returns epoch milliseconds, or `undefined` for null, undefined or unparsable input.
 */
export function toMillis(t: unknown): number | undefined {
  if (t == null) return undefined;
  if (typeof t === 'number') return Number.isFinite(t) ? t : undefined;
  if (t instanceof Date) {
    const ms = t.getTime();
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (typeof t === 'string') {
    const ms = Date.parse(t);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

/**
 * Formats epoch ms as a metav1.Time (RFC 3339, whole seconds), the wire form of `timeAdded`,
 * `lastTransitionTime` and `lastHeartbeatTime`.
 */
export function toRfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Formats epoch ms as a metav1.MicroTime (six fractional digits), the wire form of Lease and Event times. */
export function toMicroTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-01-01T00:00:00.123Z
  return `${iso.slice(0, 23)}000Z`;
}

function meta(o: Json): Json | undefined {
  return obj(o['metadata']);
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const m = obj(v);
  if (!m) return out;
  for (const [k, val] of Object.entries(m)) if (typeof val === 'string') out[k] = intern(val);
  return out;
}

function toTaint(v: unknown): Taint | undefined {
  const t = obj(v);
  const key = istr(t?.['key']);
  const effect = istr(t?.['effect']);
  if (!t || key === undefined || effect === undefined) return undefined;
  const out: Taint = { key, effect };
  const value = istr(t['value']);
  if (value !== undefined && value !== '') out.value = value;
  const added = toMillis(t['timeAdded']);
  if (added !== undefined) out.timeAdded = added;
  return out;
}

/** Converts a wire Taint list; malformed entries are dropped. */
export function toTaints(v: unknown): Taint[] {
  return arr(v)
    .map(toTaint)
    .filter((t): t is Taint => t !== undefined);
}

/** Serialises a slim taint back to its wire form. */
export function taintToWire(t: Taint): Json {
  const out: Json = { key: t.key, effect: t.effect };
  if (t.value !== undefined && t.value !== '') out['value'] = t.value;
  if (t.timeAdded !== undefined) out['timeAdded'] = toRfc3339(t.timeAdded);
  return out;
}

/**
 * A Node or Pod condition from the wire: type, status, reason, message, then its two time fields
 * `t1` and `t2` as epoch ms (one shape per kind). `undefined` when malformed, or when `keep` is
 * given and lacks its type.
 */
function toCondition<C extends NodeCondition | PodCondition>(v: unknown, t1: string, t2: string, keep?: ReadonlySet<string>): C | undefined {
  const c = obj(v);
  const type = istr(c?.['type']);
  const status = istr(c?.['status']);
  if (!c || type === undefined || status === undefined || (keep !== undefined && !keep.has(type))) return undefined;
  const out: Json = { type, status };
  const reason = istr(c['reason']);
  if (reason !== undefined) out['reason'] = reason;
  const message = istr(c['message']);
  if (message !== undefined) out['message'] = message;
  const a = toMillis(c[t1]);
  if (a !== undefined) out[t1] = a;
  const b = toMillis(c[t2]);
  if (b !== undefined) out[t2] = b;
  return out as C;
}

const toNodeCondition = (v: unknown): NodeCondition | undefined => toCondition(v, 'lastHeartbeatTime', 'lastTransitionTime');
// Conditions no decision reads are not cached (see ./podconditions.ts).
const toPodCondition = (v: unknown): PodCondition | undefined => toCondition(v, 'lastTransitionTime', 'lastProbeTime', CACHED_POD_CONDITION_TYPES);

/** Serialises a slim node condition back to its wire form. */
export function nodeConditionToWire(c: NodeCondition): Json {
  const out: Json = { type: c.type, status: c.status };
  if (c.reason !== undefined) out['reason'] = c.reason;
  if (c.message !== undefined) out['message'] = c.message;
  if (c.lastHeartbeatTime !== undefined) out['lastHeartbeatTime'] = toRfc3339(c.lastHeartbeatTime);
  if (c.lastTransitionTime !== undefined) out['lastTransitionTime'] = toRfc3339(c.lastTransitionTime);
  return out;
}

/**
 * Converts a Node (wire JSON or client-node `V1Node`) to the slim model.
 * @returns `undefined` when name, uid, resourceVersion or creationTimestamp is missing.
 */
export function toNode(raw: unknown): Node | undefined {
  const o = obj(raw);
  const m = o && meta(o);
  const name = istr(m?.['name']);
  const uid = str(m?.['uid']);
  const resourceVersion = str(m?.['resourceVersion']);
  const creationTimestamp = toMillis(m?.['creationTimestamp']);
  if (!o || !m || !name || !uid || !resourceVersion || creationTimestamp === undefined) return undefined;
  const spec = obj(o['spec']) ?? {};
  const status = obj(o['status']) ?? {};
  return {
    name,
    uid,
    resourceVersion,
    creationTimestamp,
    labels: stringMap(m['labels']),
    unschedulable: spec['unschedulable'] === true,
    taints: toTaints(spec['taints']),
    conditions: listOf(status['conditions'], toNodeCondition),
  };
}

function toToleration(v: unknown): Toleration | undefined {
  const t = obj(v);
  if (!t) return undefined;
  const out: Toleration = {};
  const key = istr(t['key']);
  if (key !== undefined) out.key = key;
  const operator = istr(t['operator']);
  if (operator !== undefined) out.operator = operator;
  const value = istr(t['value']);
  if (value !== undefined) out.value = value;
  const effect = istr(t['effect']);
  if (effect !== undefined) out.effect = effect;
  const secs = num(t['tolerationSeconds']);
  if (secs !== undefined) out.tolerationSeconds = secs;
  return out;
}

function toOwnerRef(v: unknown): OwnerRef | undefined {
  const r = obj(v);
  const apiVersion = istr(r?.['apiVersion']);
  const kind = istr(r?.['kind']);
  const name = istr(r?.['name']);
  const uid = istr(r?.['uid']);
  if (!r || !apiVersion || !kind || !name || !uid) return undefined;
  const out: OwnerRef = { apiVersion, kind, name, uid };
  if (r['controller'] === true) out.controller = true;
  return out;
}

/**
 * Upstream `notRunning` for one container status: its state is `terminated` or `waiting`. A status
 * without a state, or with `running` or an empty state, counts as running (Go's zero `State` has
 * neither pointer set).
 */
function containerNotRunning(v: unknown): boolean {
  const state = obj(obj(v)?.['state']);
  return state !== undefined && (obj(state['terminated']) !== undefined || obj(state['waiting']) !== undefined);
}

/**
 * Marks, in {@link Pod.inlineVolumeDrivers}, an inline volume whose source might be attachable but
 * whose CSI driver cannot be named here: it is taken to use every attachment on its node.
 */
export const UNKNOWN_INLINE_DRIVER = '*';

/** Inline sources that never go through an attach (no VolumeAttachment can back them). */
const NODE_LOCAL_SOURCES: ReadonlySet<string> = new Set(['emptyDir', 'configMap', 'secret', 'downwardAPI', 'projected', 'hostPath', 'gitRepo', 'image', 'nfs']);

/**
 * Sorts a pod's volumes by how they can reach a PersistentVolume or an attachment: claims, generic
 * ephemeral claims (`<pod>-<volume>`, upstream `ephemeral.VolumeClaimName`) and inline sources.
 * A volume that cannot be read as any known source counts as an unknown inline one: the safe
 * reading for the force-detach controller, which must not overlook a pod's hold on a volume.
 */
function podVolumes(v: unknown, podName: string): Pick<Pod, 'pvcNames' | 'ephemeralClaimNames' | 'inlineVolumeDrivers'> {
  const volumes = arr(v);
  if (volumes.length === 0) return { pvcNames: EMPTY, ephemeralClaimNames: EMPTY, inlineVolumeDrivers: EMPTY };
  const pvcNames: string[] = [];
  const ephemeralClaimNames: string[] = [];
  const inlineVolumeDrivers: string[] = [];
  for (const raw of volumes) {
    const vol = obj(raw);
    const name = str(vol?.['name']);
    if (!vol || name === undefined) {
      inlineVolumeDrivers.push(UNKNOWN_INLINE_DRIVER);
      continue;
    }
    const claim = str(obj(vol['persistentVolumeClaim'])?.['claimName']);
    const csi = obj(vol['csi']);
    if (claim !== undefined) pvcNames.push(claim);
    else if (obj(vol['ephemeral']) !== undefined) ephemeralClaimNames.push(`${podName}-${name}`);
    else if (csi !== undefined) inlineVolumeDrivers.push(istr(csi['driver']) ?? UNKNOWN_INLINE_DRIVER);
    else if (!isNodeLocal(vol)) inlineVolumeDrivers.push(UNKNOWN_INLINE_DRIVER);
  }
  const list = (xs: string[]): readonly string[] => (xs.length === 0 ? EMPTY : xs);
  return { pvcNames: list(pvcNames), ephemeralClaimNames: list(ephemeralClaimNames), inlineVolumeDrivers: list(inlineVolumeDrivers) };
}

/** True when every source of a volume is node-local (a volume without one is not). Typed objects carry absent sources as `undefined`. */
function isNodeLocal(vol: Json): boolean {
  const sources = Object.keys(vol).filter((k) => k !== 'name' && vol[k] != null);
  return sources.length > 0 && sources.every((k) => NODE_LOCAL_SOURCES.has(k));
}

/**
 * Converts a Pod (wire JSON or client-node `V1Pod`) to the slim model.
 * @returns `undefined` when namespace, name, uid, resourceVersion or creationTimestamp is missing.
 */
export function toPod(raw: unknown): Pod | undefined {
  const o = obj(raw);
  const m = o && meta(o);
  const namespace = istr(m?.['namespace']);
  const name = str(m?.['name']);
  const uid = str(m?.['uid']);
  const resourceVersion = str(m?.['resourceVersion']);
  const creationTimestamp = toMillis(m?.['creationTimestamp']);
  if (!o || !m || !namespace || !name || !uid || !resourceVersion || creationTimestamp === undefined) return undefined;
  const spec = obj(o['spec']) ?? {};
  const status = obj(o['status']) ?? {};
  const pod: Pod = {
    namespace,
    name,
    uid,
    resourceVersion,
    nodeName: istr(spec['nodeName']) ?? '',
    phase: str(status['phase']) ?? '',
    creationTimestamp,
    conditions: listOf(status['conditions'], toPodCondition),
    // Shared and frozen (see SharedFrozen): most pods hold the same few lists.
    tolerations: sharedTolerations.convert(spec['tolerations']),
    ownerReferences: sharedOwnerReferences.convert(m['ownerReferences']),
    ...podVolumes(spec['volumes'], name),
    finalizers: listOf(m['finalizers'], istr),
    containersNotRunning: ['initContainerStatuses', 'containerStatuses', 'ephemeralContainerStatuses'].every((list) =>
      arr(status[list]).every(containerNotRunning),
    ),
  };
  const statusReason = str(status['reason']);
  if (statusReason) pod.statusReason = statusReason;
  const del = toMillis(m['deletionTimestamp']);
  if (del !== undefined) pod.deletionTimestamp = del;
  const grace = num(m['deletionGracePeriodSeconds']);
  if (grace !== undefined) pod.deletionGracePeriodSeconds = grace;
  const generation = num(m['generation']);
  if (generation !== undefined && generation > 0) pod.generation = generation;
  return pod;
}

const sharedLabels = new SharedFrozen<Readonly<Record<string, string>>>();

/**
 * A pod list field (tolerations, owner references) converted to its shared frozen slim list.
 *
 * A frozen input list (of frozen items) converted before gives the same slim list again, found by
 * identity: the protobuf decoder (src/kube/protobuf/decoder.ts) hands every pod whose list has the same wire bytes
 * the same frozen view list, so such a pod costs one lookup instead of a conversion and a JSON key.
 * JSON.parse never freezes an array, so JSON input is converted every time, as before. The slim
 * list keeps its input list alive (`#inputOf`), which keeps the decoder's weak entry for those bytes
 * while any cached pod holds the slim list; when the last such pod goes, both go.
 */
class SharedPodList<T extends object> {
  readonly #table = new SharedFrozen<readonly T[]>();
  readonly #slimOf = new WeakMap<object, readonly T[]>();
  readonly #inputOf = new WeakMap<object, object>();

  constructor(readonly convertItem: (v: unknown) => T | undefined) {}

  /**
   * @param v the field as parsed (JSON) or decoded (a view); anything but an array is an empty list.
   * @returns the shared frozen slim list (the shared empty list for none). Never throws.
   */
  convert(v: unknown): readonly T[] {
    // Frozen items too: only then can the input not have changed since it was converted (the
    // decoder's views are flat, so frozen items are immutable ones).
    const input: readonly unknown[] | undefined = Array.isArray(v) && Object.isFrozen(v) && v.every(Object.isFrozen) ? v : undefined;
    const hit = input && this.#slimOf.get(input);
    if (hit !== undefined) return hit;
    const slim = internList(this.#table, listOf(v, this.convertItem));
    if (!input) return slim;
    this.#slimOf.set(input, slim);
    // Not the shared empty list: it would pin every input that converts to nothing.
    if (slim.length > 0) this.#inputOf.set(slim, input);
    return slim;
  }
}

const sharedTolerations = new SharedPodList<Toleration>(toToleration);
const sharedOwnerReferences = new SharedPodList<OwnerRef>(toOwnerRef);

/**
 * The one frozen object holding exactly these labels (sorted by key), shared by every caller with
 * the same set.
 * @param labels `metadata.labels` as parsed (not retained).
 * @returns the shared frozen copy, or `undefined` for an empty set. Never throws.
 */
export function internLabels(labels: Readonly<Record<string, string>>): Readonly<Record<string, string>> | undefined {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return undefined;
  const entries = keys.map((k): [string, string] => [k, labels[k] ?? '']);
  return sharedLabels.get(JSON.stringify(entries), () => Object.freeze(Object.fromEntries(entries)));
}

/**
 * The one frozen list (of frozen elements) equal to `list`, element by element and in order,
 * shared by every pod with the same one. Order and every field are kept: `list` is what
 * `toToleration` or `toOwnerRef` built, its fields always in the same order, so equal lists have
 * equal JSON.
 * @returns `list` itself when empty (the shared {@link EMPTY}). Never throws.
 */
function internList<T extends object>(table: SharedFrozen<readonly T[]>, list: readonly T[]): readonly T[] {
  if (list.length === 0) return list;
  return table.get(JSON.stringify(list), () => Object.freeze(list.map((e) => Object.freeze(e))));
}

/**
 * {@link toPod} that also keeps `metadata.labels` (interned, see {@link internLabels}). Only the
 * pod informer of legacy eviction uses it; every other pod cache keeps no labels.
 * @returns `undefined` when {@link toPod} does.
 */
export function toPodWithLabels(raw: unknown): Pod | undefined {
  const pod = toPod(raw);
  if (pod === undefined) return undefined;
  const labels = internLabels(stringMap(meta(obj(raw) ?? {})?.['labels']));
  if (labels !== undefined) pod.labels = labels;
  return pod;
}

function toLabelSelector(v: unknown): LabelSelector | undefined {
  const sel = obj(v);
  if (!sel) return undefined;
  const out: LabelSelector = {};
  const matchLabels = stringMap(sel['matchLabels']);
  if (Object.keys(matchLabels).length > 0) out.matchLabels = matchLabels;
  const expressions = arr(sel['matchExpressions']).map((e): LabelSelectorRequirement => {
    const r = obj(e) ?? {};
    const values = arr(r['values']).filter((x): x is string => typeof x === 'string');
    // A malformed entry keeps an empty key/operator, which makes the selector invalid (selects nothing).
    return { key: str(r['key']) ?? '', operator: str(r['operator']) ?? '', ...(values.length > 0 ? { values } : {}) };
  });
  if (expressions.length > 0) out.matchExpressions = expressions;
  return out;
}

/**
 * Converts a Lease (wire JSON or client-node `V1Lease`) to the slim model.
 * @returns `undefined` when namespace, name or resourceVersion is missing.
 */
export function toLease(raw: unknown): Lease | undefined {
  const o = obj(raw);
  const m = o && meta(o);
  const namespace = str(m?.['namespace']);
  const name = str(m?.['name']);
  const resourceVersion = str(m?.['resourceVersion']);
  if (!o || !namespace || !name || !resourceVersion) return undefined;
  const spec = obj(o['spec']) ?? {};
  const lease: Lease = { namespace: intern(namespace), name: intern(name), resourceVersion };
  const holder = istr(spec['holderIdentity']);
  if (holder !== undefined) lease.holderIdentity = holder;
  const dur = num(spec['leaseDurationSeconds']);
  if (dur !== undefined) lease.leaseDurationSeconds = dur;
  const renew = toMillis(spec['renewTime']);
  if (renew !== undefined) lease.renewTime = renew;
  const acquire = toMillis(spec['acquireTime']);
  if (acquire !== undefined) lease.acquireTime = acquire;
  const transitions = num(spec['leaseTransitions']);
  if (transitions !== undefined) lease.leaseTransitions = transitions;
  return lease;
}

/** Converts a DaemonSet to the slim model; `undefined` when malformed. */
export function toDaemonSet(raw: unknown): DaemonSet | undefined {
  const m = meta(obj(raw) ?? {});
  const namespace = str(m?.['namespace']);
  const name = str(m?.['name']);
  const uid = str(m?.['uid']);
  if (!namespace || !name || !uid) return undefined;
  const selector = toLabelSelector(obj(obj(raw)?.['spec'])?.['selector']);
  return selector === undefined ? { namespace, name, uid } : { namespace, name, uid, selector };
}

/** Converts a VolumeAttachment to the slim model; `undefined` when malformed. */
export function toVolumeAttachment(raw: unknown): VolumeAttachment | undefined {
  const o = obj(raw);
  const m = o && meta(o);
  const name = str(m?.['name']);
  const uid = str(m?.['uid']);
  const resourceVersion = str(m?.['resourceVersion']);
  const spec = obj(o?.['spec']);
  const attacher = str(spec?.['attacher']);
  const nodeName = str(spec?.['nodeName']);
  if (!o || !m || !name || !uid || !resourceVersion || !spec || !attacher || !nodeName) return undefined;
  const va: VolumeAttachment = {
    name,
    uid,
    resourceVersion,
    attacher,
    nodeName,
    attached: obj(o['status'])?.['attached'] === true,
  };
  const pv = str(obj(spec['source'])?.['persistentVolumeName']);
  if (pv !== undefined) va.persistentVolumeName = pv;
  const del = toMillis(m['deletionTimestamp']);
  if (del !== undefined) va.deletionTimestamp = del;
  return va;
}

/** Converts a PersistentVolumeClaim to the slim model; `undefined` when malformed. */
export function toPersistentVolumeClaim(raw: unknown): PersistentVolumeClaim | undefined {
  const o = obj(raw);
  const m = o && meta(o);
  const namespace = str(m?.['namespace']);
  const name = str(m?.['name']);
  const uid = str(m?.['uid']);
  if (!o || !namespace || !name || !uid) return undefined;
  const pvc: PersistentVolumeClaim = { namespace, name, uid };
  const vol = str(obj(o['spec'])?.['volumeName']);
  if (vol) pvc.volumeName = vol;
  const controller = arr(m?.['ownerReferences']).map(obj).find((r) => r?.['controller'] === true);
  const controllerUid = str(controller?.['uid']);
  if (controllerUid) pvc.controllerUid = controllerUid;
  return pvc;
}

/** Converts a PersistentVolume to the slim model; `undefined` when malformed. */
export function toPersistentVolume(raw: unknown): PersistentVolume | undefined {
  const o = obj(raw);
  const m = o && meta(o);
  const name = str(m?.['name']);
  const uid = str(m?.['uid']);
  if (!o || !name || !uid) return undefined;
  const pv: PersistentVolume = { name, uid };
  const ref = obj(obj(o['spec'])?.['claimRef']);
  const ns = str(ref?.['namespace']);
  const n = str(ref?.['name']);
  if (ns && n) pv.claimRef = { namespace: ns, name: n };
  return pv;
}

/** Finds a condition by type. */
export function getCondition<C extends { type: string }>(conditions: readonly C[], type: string): C | undefined {
  return conditions.find((c) => c.type === type);
}

/** `namespace/name` key used by pod work queues and caches. */
export function podKey(p: { namespace: string; name: string }): string {
  return `${p.namespace}/${p.name}`;
}
