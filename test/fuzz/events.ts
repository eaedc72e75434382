/**
 * The fuzz vocabulary: the events a sequence is made of, their fast-check arbitraries (fast-check
 * shrinks them; no shrinker of ours), and a readable text form of a sequence for failures and the
 * regression tests under test/unit/fuzz-regressions/.
 *
 * Times are in **seconds** here (small integers shrink to readable sequences); the harness
 * (./harness.ts) turns them into milliseconds of the FakeClock.
 */
import fc from 'fast-check';
import type { WatchedResource } from './watch.js';
import { WIRE_BAD_BYTES, type WireResource } from './wire.js';

/** The nodes of the fuzz cluster: two zones of four (four, so a zone can be partially disrupted: more than 2 not Ready and some Ready). */
export const ZONES = ['a', 'b'] as const;
export const NODES_PER_ZONE = 4;
export const NODE_NAMES: readonly string[] = ZONES.flatMap((z) => Array.from({ length: NODES_PER_ZONE }, (_, i) => `${z}-n${i}`));

/**
 * A pod's NoExecute tolerations: none at all; `seconds` (unreachable and not-ready, `s` seconds,
 * as DefaultTolerationSeconds gives them with another value); `forever` (the same without
 * seconds); `everything` (one `operator: Exists` toleration, as a DaemonSet pod has).
 */
export type Tol = { kind: 'none' } | { kind: 'seconds'; s: number } | { kind: 'forever' } | { kind: 'everything' };

/** A pod's volume: none; a claim bound to a PV with a VolumeAttachment on the pod's node; a generic ephemeral volume's claim (the same, the claim controlled by the pod); a claim that does not exist (unresolvable: it holds every volume on the node). */
export type Vol = 'none' | 'pvc' | 'ephemeral' | 'unresolvable';

/** A node pressure condition the kubelet reports. */
export type Pressure = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** The API answer of an injected fault: an HTTP status, or a request that times out. */
export type FaultCode = 500 | 404 | 409 | 422 | 429 | 'timeout';

/** The zones a node can be relabelled into (the third one exists only through relabelling). */
export const ZONE_LABELS = ['a', 'b', 'c'] as const;

/** One event of a sequence. `node` and `pod` are indexes, taken modulo the nodes and the pods added so far. */
export type FuzzEvent =
  | { kind: 'kubelet-stop'; node: number }
  | { kind: 'kubelet-start'; node: number }
  | { kind: 'report-not-ready'; node: number }
  | { kind: 'report-ready'; node: number }
  /** The kubelet reports (or clears) a pressure condition. */
  | { kind: 'pressure'; node: number; condition: Pressure; on: boolean }
  /** The kubelet's Lease renewals and status posts pause for `forS` seconds. */
  | { kind: 'lease-pause'; node: number; forS: number }
  /** The node's `topology.kubernetes.io/zone` label changes to `ZONE_LABELS[zone]`. */
  | { kind: 'zone-change'; node: number; zone: number }
  /**
   * A pod; `ds`: owned by a DaemonSet (with its tolerations: everything); `vol`: its volume; `aff`:
   * a node-affinity-enforcer rule requiring zone `ZONE_LABELS[aff]` during execution.
   */
  | { kind: 'pod-add'; node: number; tol: Tol; ds?: boolean; vol?: Vol; aff?: number }
  /** A user deletes the pod (graceful: it stays Terminating on a node whose kubelet is down). */
  | { kind: 'pod-delete'; pod: number }
  /** The pod's tolerations are replaced (tolerationSeconds edited, a toleration added or dropped). */
  | { kind: 'tolerations-edit'; pod: number; tol: Tol }
  | { kind: 'oos-add'; node: number }
  | { kind: 'oos-remove'; node: number }
  /** For `forS` seconds every write of `method` (or every write) fails with `code` (500 when absent). */
  | { kind: 'write-fault'; method: FaultMethod; forS: number; code?: FaultCode }
  /** For `forS` seconds every live read of `method` (or every live read) fails with `code`. */
  | { kind: 'read-fault'; method: ReadMethod; forS: number; code: FaultCode }
  /** The process's `resource` cache loses its watch stream for `forS` seconds; then it resumes, or (`gone`: 410) relists. */
  | { kind: 'watch-drop'; resource: WatchedResource; forS: number; gone: boolean }
  /** The process restarts: every controller stops, and a new set is built and started (a new leader). */
  | { kind: 'restart' }
  /** The leader stops; another instance takes the lease `gapS` seconds later and starts its controllers. */
  | { kind: 'failover'; gapS: number }
  /** The controllers' clock is stepped to `offsetMs` from the true time (NTP bounds: within ±500 ms). */
  | { kind: 'clock-step'; offsetMs: number }
  /**
   * For `forS` seconds the API holds object `index` of `resource` (a node, a pod, a node's Lease, a
   * VolumeAttachment) in a form the converters reject: the cache drops it, live reads of it answer
   * `unparsable`; then a readable version comes back.
   */
  | { kind: 'malformed'; resource: WatchedResource; index: number; forS: number }
  /**
   * A running pod ends (its kubelet posts the phase): `Succeeded`, `Failed`, or `Evicted` (Failed with
   * reason `Evicted`, as the kubelet's eviction manager leaves it). `pod` indexes the pods still
   * running on a node whose kubelet runs. With the fuzz's low `--terminated-pod-gc-threshold`
   * (campaign.ts `FUZZ_FLAGS`), a few ended pods put pod GC's terminated pass to work.
   */
  | { kind: 'pod-end'; pod: number; phase: 'Succeeded' | 'Failed' | 'Evicted' }
  /**
   * An operator deletes the Node object (its pods stay bound to it: orphans for pod GC); its kubelet
   * has no Node to post to. With `returnS`, the kubelet restarts that many seconds later and
   * registers the node again (a new Node object, Ready); a later `kubelet-start` of it does the same.
   */
  | { kind: 'node-delete'; node: number; returnS?: number }
  /**
   * A pod that was never scheduled is deleted while a finalizer holds it: it stays in the API,
   * terminating, with no node (the API server gives an unscheduled pod grace period 0). Pod GC's
   * unscheduled-terminating pass owns it.
   */
  | { kind: 'unscheduled-terminating' }
  /**
   * The API server answers nothing for `forS` seconds: every request of the controllers fails, the
   * kubelets' heartbeats do not land, and every watch stream ends. Each informer then reconnects as
   * client-go's reflector: its attempts back off (`ReflectorBackoff`, jitter drawn from `seed`), the
   * first one after the return is a watch from the old resourceVersion that the restarted API server
   * answers 410, and the relist comes one more backoff step later.
   */
  | { kind: 'api-outage'; forS: number; seed: number }
  /**
   * The leader process stops running (a stop-the-world pause, a frozen VM) for `forS` seconds,
   * longer than its leader Lease: its timers and watch events wait, its Lease is not renewed. With
   * `standby`, another replica takes the lapsed Lease and starts its controllers; without, the
   * paused one, once resumed, finds it has lost the Lease, exits, and its Deployment starts it again.
   */
  | { kind: 'process-pause'; forS: number; standby: boolean }
  /**
   * A string of node `node` carries bytes that are not UTF-8 (`WIRE_BAD_BYTES[bad]`, ./wire.ts), as a
   * Go client (a kubelet, node-problem-detector) writes them and the API server stores them: with
   * `zone`, its zone label becomes `ZONE_LABELS[zone]` followed by them (a zone of its own, as a
   * zone-change makes one); without, a `KernelDeadlock=False` condition carries them in its message.
   * The API's JSON holds them as Go's encoding/json renders them (one U+FFFD per invalid byte).
   */
  | { kind: 'wire-bytes'; node: number; zone?: number; bad: number }
  /**
   * For `forS` seconds the API server holds object `index` of `resource` (a node, a pod, a node's
   * Lease) with its last field cut short by up to `cut` bytes (./wire.ts `truncateLastField`), bytes
   * upstream's `Unmarshal` refuses: the protobuf path's decoder must yield it as a keyed unreadable
   * object, the JSON path has it malformed; then a readable version comes back.
   */
  | { kind: 'wire-truncated'; resource: WireResource; index: number; forS: number; cut: number };

export type FaultMethod = 'all' | 'deletePod' | 'swapNodeTaints' | 'updateNodeConditions' | 'addDisruptionCondition' | 'deleteVolumeAttachment' | 'forceDeletePod';
export type ReadMethod = 'all' | 'getNode' | 'listPodsOnNode' | 'getVolumeAttachment';

/** The vocabulary items, for the coverage report: the event kinds, and the kinds of pod-add. */
export const VOCABULARY = [
  'kubelet-stop',
  'kubelet-start',
  'report-not-ready',
  'report-ready',
  'pressure',
  'lease-pause',
  'zone-change',
  'pod-add',
  'pod-add:daemonset',
  'pod-add:pvc',
  'pod-add:ephemeral',
  'pod-add:unresolvable',
  'pod-add:affinity',
  'pod-delete',
  'tolerations-edit',
  'oos-add',
  'oos-remove',
  'write-fault',
  'write-fault:4xx',
  'write-fault:429',
  'write-fault:timeout',
  'read-fault',
  'watch-drop',
  'watch-drop:410',
  'restart',
  'failover',
  'clock-step',
  'malformed',
  'pod-end',
  'pod-end:evicted',
  'node-delete',
  'node-delete:bound',
  'node-register',
  'unscheduled-terminating',
  'api-outage',
  'api-outage:long',
  'process-pause',
  'process-pause:standby',
  'wire-bytes',
  'wire-bytes:zone',
  'wire-truncated',
  'wire-truncated:node',
] as const;
export type VocabularyItem = (typeof VOCABULARY)[number];

/** An API server outage at least this long (seconds) counts as `api-outage:long`: fuzz:diff's old rule excused everything after one. */
export const LONG_OUTAGE_S = 15;

/** The vocabulary items an event counts for (the harness adds the items that depend on the cluster's state: `node-delete:bound`, `node-register`). */
export function itemsOf(e: FuzzEvent): VocabularyItem[] {
  const out: VocabularyItem[] = [e.kind];
  if (e.kind === 'pod-add') {
    if (e.ds) out.push('pod-add:daemonset');
    if (e.vol && e.vol !== 'none') out.push(`pod-add:${e.vol}`);
    if (e.aff !== undefined) out.push('pod-add:affinity');
  }
  if (e.kind === 'watch-drop' && e.gone) out.push('watch-drop:410');
  if (e.kind === 'pod-end' && e.phase === 'Evicted') out.push('pod-end:evicted');
  if (e.kind === 'api-outage' && e.forS >= LONG_OUTAGE_S) out.push('api-outage:long');
  if (e.kind === 'process-pause' && e.standby) out.push('process-pause:standby');
  if (e.kind === 'wire-bytes' && e.zone !== undefined) out.push('wire-bytes:zone');
  if (e.kind === 'wire-truncated' && e.resource === 'nodes') out.push('wire-truncated:node');
  if (e.kind === 'write-fault' && e.code !== undefined && e.code !== 500) out.push(e.code === 429 ? 'write-fault:429' : e.code === 'timeout' ? 'write-fault:timeout' : 'write-fault:4xx');
  return out;
}

/** One step: wait `afterS` seconds after the previous step, then apply `event`. */
export interface Step {
  afterS: number;
  event: FuzzEvent;
}

const node = fc.nat({ max: NODE_NAMES.length - 1 });
const tol: fc.Arbitrary<Tol> = fc.oneof(
  fc.constant<Tol>({ kind: 'none' }),
  fc.integer({ min: 0, max: 400 }).map((s): Tol => ({ kind: 'seconds', s })),
  fc.constant<Tol>({ kind: 'forever' }),
  fc.constant<Tol>({ kind: 'everything' }),
);

const code = fc.constantFrom<FaultCode>(500, 404, 409, 422, 429, 'timeout');
const vol = fc.constantFrom<Vol>('none', 'none', 'pvc', 'ephemeral', 'unresolvable');

/** Any one event (kubelet events weighted up: they drive everything else). */
export const eventArb: fc.Arbitrary<FuzzEvent> = fc.oneof(
  { weight: 4, arbitrary: node.map((n): FuzzEvent => ({ kind: 'kubelet-stop', node: n })) },
  { weight: 3, arbitrary: node.map((n): FuzzEvent => ({ kind: 'kubelet-start', node: n })) },
  { weight: 2, arbitrary: node.map((n): FuzzEvent => ({ kind: 'report-not-ready', node: n })) },
  { weight: 2, arbitrary: node.map((n): FuzzEvent => ({ kind: 'report-ready', node: n })) },
  { weight: 1, arbitrary: fc.record({ node, condition: fc.constantFrom<Pressure>('MemoryPressure', 'DiskPressure', 'PIDPressure'), on: fc.boolean() }).map((r): FuzzEvent => ({ kind: 'pressure', ...r })) },
  { weight: 2, arbitrary: fc.record({ node, forS: fc.integer({ min: 1, max: 120 }) }).map((r): FuzzEvent => ({ kind: 'lease-pause', ...r })) },
  { weight: 1, arbitrary: fc.record({ node, zone: fc.nat({ max: ZONE_LABELS.length - 1 }) }).map((r): FuzzEvent => ({ kind: 'zone-change', ...r })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ node, tol, ds: fc.nat({ max: 4 }).map((x) => x === 0), vol, aff: fc.nat({ max: 5 }) })
      .map((r): FuzzEvent => ({ kind: 'pod-add', node: r.node, tol: r.ds ? { kind: 'everything' } : r.tol, ...(r.ds ? { ds: true } : {}), ...(r.vol !== 'none' ? { vol: r.vol } : {}), ...(r.aff < ZONE_LABELS.length ? { aff: r.aff } : {}) })),
  },
  { weight: 1, arbitrary: fc.nat({ max: 40 }).map((pod): FuzzEvent => ({ kind: 'pod-delete', pod })) },
  { weight: 2, arbitrary: fc.record({ pod: fc.nat({ max: 40 }), tol }).map((r): FuzzEvent => ({ kind: 'tolerations-edit', ...r })) },
  { weight: 1, arbitrary: node.map((n): FuzzEvent => ({ kind: 'oos-add', node: n })) },
  { weight: 1, arbitrary: node.map((n): FuzzEvent => ({ kind: 'oos-remove', node: n })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ method: fc.constantFrom<FaultMethod>('all', 'deletePod', 'swapNodeTaints', 'updateNodeConditions', 'addDisruptionCondition', 'deleteVolumeAttachment', 'forceDeletePod'), forS: fc.integer({ min: 1, max: 120 }), code })
      .map((r): FuzzEvent => ({ kind: 'write-fault', method: r.method, forS: r.forS, ...(r.code !== 500 ? { code: r.code } : {}) })),
  },
  {
    weight: 1,
    arbitrary: fc.record({ method: fc.constantFrom<ReadMethod>('all', 'getNode', 'listPodsOnNode', 'getVolumeAttachment'), forS: fc.integer({ min: 1, max: 120 }), code }).map((r): FuzzEvent => ({ kind: 'read-fault', ...r })),
  },
  {
    weight: 1,
    arbitrary: fc.record({ resource: fc.constantFrom<WatchedResource>('nodes', 'pods', 'leases', 'volumeAttachments'), forS: fc.integer({ min: 1, max: 60 }), gone: fc.boolean() }).map((r): FuzzEvent => ({ kind: 'watch-drop', ...r })),
  },
  { weight: 1, arbitrary: fc.constant<FuzzEvent>({ kind: 'restart' }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 }).map((gapS): FuzzEvent => ({ kind: 'failover', gapS })) },
  { weight: 1, arbitrary: fc.integer({ min: -500, max: 500 }).map((offsetMs): FuzzEvent => ({ kind: 'clock-step', offsetMs })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ resource: fc.constantFrom<WatchedResource>('nodes', 'pods', 'leases', 'volumeAttachments'), index: fc.nat({ max: 40 }), forS: fc.integer({ min: 1, max: 120 }) })
      .map((r): FuzzEvent => ({ kind: 'malformed', ...r })),
  },
  {
    weight: 3,
    arbitrary: fc.record({ pod: fc.nat({ max: 40 }), phase: fc.constantFrom<'Succeeded' | 'Failed' | 'Evicted'>('Succeeded', 'Failed', 'Evicted') }).map((r): FuzzEvent => ({ kind: 'pod-end', ...r })),
  },
  {
    weight: 1,
    arbitrary: fc.record({ node, returnS: fc.integer({ min: -60, max: 60 }) }).map((r): FuzzEvent => ({ kind: 'node-delete', node: r.node, ...(r.returnS >= 0 ? { returnS: r.returnS } : {}) })),
  },
  { weight: 1, arbitrary: fc.constant<FuzzEvent>({ kind: 'unscheduled-terminating' }) },
  { weight: 1, arbitrary: fc.record({ forS: fc.integer({ min: 1, max: 60 }), seed: fc.nat() }).map((r): FuzzEvent => ({ kind: 'api-outage', ...r })) },
  { weight: 1, arbitrary: fc.record({ forS: fc.integer({ min: 16, max: 120 }), standby: fc.boolean() }).map((r): FuzzEvent => ({ kind: 'process-pause', ...r })) },
  // The wire events share one weight: a run holding one is played twice (harness.ts, invariant (n)).
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc
        .record({ node, zone: fc.nat({ max: 2 * ZONE_LABELS.length - 1 }), bad: fc.nat({ max: WIRE_BAD_BYTES.length - 1 }) })
        .map((r): FuzzEvent => ({ kind: 'wire-bytes', node: r.node, ...(r.zone < ZONE_LABELS.length ? { zone: r.zone } : {}), bad: r.bad })),
      fc
        .record({ resource: fc.constantFrom<WireResource>('nodes', 'nodes', 'pods', 'leases'), index: fc.nat({ max: 40 }), forS: fc.integer({ min: 1, max: 120 }), cut: fc.integer({ min: 1, max: 64 }) })
        .map((r): FuzzEvent => ({ kind: 'wire-truncated', ...r })),
    ),
  },
);

/** Whether a sequence holds a wire event: the harness then plays it through both paths (invariant (n)). */
export function hasWireEvent(steps: readonly Step[]): boolean {
  return steps.some((s) => s.event.kind === 'wire-bytes' || s.event.kind === 'wire-truncated');
}

/** A sequence of up to `maxSteps` steps, 0–90 s apart. */
export function sequenceArb(maxSteps = 30): fc.Arbitrary<Step[]> {
  return fc.array(fc.record({ afterS: fc.integer({ min: 0, max: 90 }), event: eventArb }), { maxLength: maxSteps, size: 'max' });
}

function tolText(t: Tol): string {
  return t.kind === 'seconds' ? `${t.s}s` : t.kind;
}

/** One event as text, with node indexes resolved to names (`pods`: the pod names added so far). */
export function eventText(e: FuzzEvent, pods: readonly string[] = []): string {
  const n = (i: number): string => NODE_NAMES[i % NODE_NAMES.length] ?? String(i);
  const p = (i: number): string => (pods.length > 0 ? (pods[i % pods.length] ?? '') : '(no pod)');
  switch (e.kind) {
    case 'lease-pause':
      return `lease-pause ${n(e.node)} for ${e.forS}s`;
    case 'pressure':
      return `pressure ${n(e.node)} ${e.condition}=${e.on ? 'True' : 'False'}`;
    case 'zone-change':
      return `zone-change ${n(e.node)} to zone ${ZONE_LABELS[e.zone % ZONE_LABELS.length] ?? ''}`;
    case 'pod-add':
      return `pod-add on ${n(e.node)} tolerating ${tolText(e.tol)}${e.ds ? ' (DaemonSet)' : ''}${e.vol && e.vol !== 'none' ? ` with a ${e.vol} volume` : ''}${e.aff !== undefined ? `, requiring zone ${ZONE_LABELS[e.aff % ZONE_LABELS.length] ?? ''} during execution` : ''}`;
    case 'pod-delete':
      return `pod-delete ${p(e.pod)}`;
    case 'tolerations-edit':
      return `tolerations-edit ${p(e.pod)} to ${tolText(e.tol)}`;
    case 'write-fault':
      return `write-fault ${e.method} ${e.code ?? 500} for ${e.forS}s`;
    case 'read-fault':
      return `read-fault ${e.method} ${e.code} for ${e.forS}s`;
    case 'watch-drop':
      return `watch-drop ${e.resource} for ${e.forS}s, then ${e.gone ? '410 Gone and a relist' : 'the watch resumes'}`;
    case 'restart':
      return 'restart';
    case 'failover':
      return `failover (the new leader starts ${e.gapS}s later)`;
    case 'clock-step':
      return `clock-step to ${e.offsetMs >= 0 ? '+' : ''}${e.offsetMs}ms`;
    case 'oos-remove':
      return `oos-remove (tainted node #${e.node})`;
    case 'malformed':
      return `malformed ${e.resource} #${e.index} for ${e.forS}s`;
    case 'pod-end':
      return `pod-end (running pod #${e.pod}) ${e.phase === 'Evicted' ? 'Failed, reason Evicted' : e.phase}`;
    case 'node-delete':
      return `node-delete ${n(e.node)}${e.returnS !== undefined ? `, its kubelet registers it again ${e.returnS}s later` : ''}`;
    case 'unscheduled-terminating':
      return 'unscheduled-terminating (a never-scheduled pod deleted while a finalizer holds it)';
    case 'api-outage':
      return `api-outage for ${e.forS}s (reconnect jitter seed ${e.seed})`;
    case 'process-pause':
      return `process-pause for ${e.forS}s, ${e.standby ? 'a standby takes the Lease' : 'no standby: restarted after it exits'}`;
    case 'wire-bytes':
      return `wire-bytes ${n(e.node)}: ${e.zone !== undefined ? `zone label ${ZONE_LABELS[e.zone % ZONE_LABELS.length] ?? ''}` : 'a KernelDeadlock condition message'} + bytes ${(WIRE_BAD_BYTES[e.bad % WIRE_BAD_BYTES.length] ?? []).map((b) => b.toString(16)).join(' ')}`;
    case 'wire-truncated':
      return `wire-truncated ${e.resource} #${e.index} for ${e.forS}s (last field cut by up to ${e.cut} bytes)`;
    default:
      return `${e.kind} ${n(e.node)}`;
  }
}
