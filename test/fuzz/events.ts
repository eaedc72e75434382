/**
 * The fuzz vocabulary: the events a sequence is made of, their fast-check arbitraries (fast-check
 * shrinks them; no shrinker of ours), and a readable text form of a sequence for failures and the
 * regression tests under test/unit/fuzz-regressions/.
 *
 * Times are in **seconds** here (small integers shrink to readable sequences); the harness
 * (./harness.ts) turns them into milliseconds of the FakeClock.
 */
import fc from 'fast-check';

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

/** One event of a sequence. `node` and `pod` are indexes, taken modulo the nodes and the pods added so far. */
export type FuzzEvent =
  | { kind: 'kubelet-stop'; node: number }
  | { kind: 'kubelet-start'; node: number }
  | { kind: 'report-not-ready'; node: number }
  | { kind: 'report-ready'; node: number }
  /** The kubelet's Lease renewals and status posts pause for `forS` seconds. */
  | { kind: 'lease-pause'; node: number; forS: number }
  | { kind: 'pod-add'; node: number; tol: Tol }
  /** The pod's tolerations are replaced (tolerationSeconds edited, a toleration added or dropped). */
  | { kind: 'tolerations-edit'; pod: number; tol: Tol }
  | { kind: 'oos-add'; node: number }
  | { kind: 'oos-remove'; node: number }
  /** For `forS` seconds every write of `method` (or every write) fails with a 500. */
  | { kind: 'write-fault'; method: FaultMethod; forS: number }
  /** The process restarts: every controller stops, and a new set is built and started (a new leader). */
  | { kind: 'restart' };

export type FaultMethod = 'all' | 'deletePod' | 'swapNodeTaints' | 'updateNodeConditions' | 'addDisruptionCondition';

/** The vocabulary items, for the coverage report. */
export const VOCABULARY: readonly FuzzEvent['kind'][] = [
  'kubelet-stop',
  'kubelet-start',
  'report-not-ready',
  'report-ready',
  'lease-pause',
  'pod-add',
  'tolerations-edit',
  'oos-add',
  'oos-remove',
  'write-fault',
  'restart',
];

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

/** Any one event (kubelet events weighted up: they drive everything else). */
export const eventArb: fc.Arbitrary<FuzzEvent> = fc.oneof(
  { weight: 4, arbitrary: node.map((n): FuzzEvent => ({ kind: 'kubelet-stop', node: n })) },
  { weight: 3, arbitrary: node.map((n): FuzzEvent => ({ kind: 'kubelet-start', node: n })) },
  { weight: 2, arbitrary: node.map((n): FuzzEvent => ({ kind: 'report-not-ready', node: n })) },
  { weight: 2, arbitrary: node.map((n): FuzzEvent => ({ kind: 'report-ready', node: n })) },
  { weight: 2, arbitrary: fc.record({ node, forS: fc.integer({ min: 1, max: 120 }) }).map((r): FuzzEvent => ({ kind: 'lease-pause', ...r })) },
  { weight: 3, arbitrary: fc.record({ node, tol }).map((r): FuzzEvent => ({ kind: 'pod-add', ...r })) },
  { weight: 2, arbitrary: fc.record({ pod: fc.nat({ max: 40 }), tol }).map((r): FuzzEvent => ({ kind: 'tolerations-edit', ...r })) },
  { weight: 1, arbitrary: node.map((n): FuzzEvent => ({ kind: 'oos-add', node: n })) },
  { weight: 1, arbitrary: node.map((n): FuzzEvent => ({ kind: 'oos-remove', node: n })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ method: fc.constantFrom<FaultMethod>('all', 'deletePod', 'swapNodeTaints', 'updateNodeConditions', 'addDisruptionCondition'), forS: fc.integer({ min: 1, max: 120 }) })
      .map((r): FuzzEvent => ({ kind: 'write-fault', ...r })),
  },
  { weight: 1, arbitrary: fc.constant<FuzzEvent>({ kind: 'restart' }) },
);

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
  switch (e.kind) {
    case 'lease-pause':
      return `lease-pause ${n(e.node)} for ${e.forS}s`;
    case 'pod-add':
      return `pod-add on ${n(e.node)} tolerating ${tolText(e.tol)}`;
    case 'tolerations-edit':
      return `tolerations-edit ${pods.length > 0 ? (pods[e.pod % pods.length] ?? '') : '(no pod)'} to ${tolText(e.tol)}`;
    case 'write-fault':
      return `write-fault ${e.method} for ${e.forS}s`;
    case 'restart':
      return 'restart';
    case 'oos-remove':
      return `oos-remove (tainted node #${e.node})`;
    default:
      return `${e.kind} ${n(e.node)}`;
  }
}
