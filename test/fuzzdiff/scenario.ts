/**
 * Differential scenarios: a small simulated fleet and a timeline of faults, generated from a seed
 * with fast-check's generators and stored as JSON so that any scenario can be replayed exactly
 * (`npm run fuzz:diff -- --replay FILE`). Times in a scenario are **seconds** from the start of play.
 *
 * Not upstream: this is test tooling; the runner plays a scenario against kube-controller-manager
 * 1.37.2 and a `--dry-run` shadow of ours side by side (test/fuzzdiff/runner.ts).
 */
import fc from 'fast-check';

/** One timed step of a scenario. `node` is a node index (zone-major), `zone` a zone index. */
export type Step =
  | { atS: number; op: 'kill'; node: number }
  | { atS: number; op: 'revive'; node: number }
  /** The node keeps posting status (every 60 s) but stops renewing its Lease. */
  | { atS: number; op: 'pause-lease'; node: number }
  | { atS: number; op: 'resume-lease'; node: number }
  /** The kubelet reports Ready=False (still heartbeating). */
  | { atS: number; op: 'not-ready'; node: number }
  | { atS: number; op: 'ready'; node: number }
  /** Sets the unreachable/not-ready NoExecute tolerations of the `slot`-th pod of the node (sorted by name) to `seconds`. */
  | { atS: number; op: 'edit-toleration'; node: number; slot: number; seconds: number }
  | { atS: number; op: 'add-out-of-service'; node: number }
  | { atS: number; op: 'remove-out-of-service'; node: number }
  /** Stops kube-apiserver, starts it again `downS` seconds later (etcd keeps running). */
  | { atS: number; op: 'restart-apiserver'; downS: number }
  /** Stops kube-controller-manager and the shadow, starts both again `downS` seconds later. */
  | { atS: number; op: 'restart-controllers'; downS: number };

/** The operations, for coverage counts. */
export const STEP_OPS = [
  'kill',
  'revive',
  'pause-lease',
  'resume-lease',
  'not-ready',
  'ready',
  'edit-toleration',
  'add-out-of-service',
  'remove-out-of-service',
  'restart-apiserver',
  'restart-controllers',
] as const;

/** A replayable scenario. Durations in **seconds**. */
export interface Scenario {
  version: 1;
  /** `seed/index` it was generated from, or a free name for a hand-written one. */
  id: string;
  zones: number;
  nodesPerZone: number;
  podsPerNode: number;
  /**
   * Pod kind weights of the simulator (plain pods get the API server's default 300 s tolerations;
   * pvc pods hold a CSI volume with its VolumeAttachment, for the forced detach comparison).
   */
  podMix: { plain: number; tolerationSeconds: number; tolerateForever: number; pvc?: number };
  /** `tolerationSeconds` of the simulator's `tolerationSeconds` pods. */
  tolerationS: number;
  /** `--node-monitor-grace-period` of both controllers. */
  graceS: number;
  /** `--node-monitor-period` of both controllers. */
  monitorPeriodS: number;
  /** How long the timeline runs before decisions are collected (a few seconds of tail are added). */
  durationS: number;
  steps: Step[];
}

/** Generation size: `small` for CI (shorter, fewer faults), `normal` for campaigns. */
export type ScenarioSize = 'small' | 'normal';

interface Episode {
  kind: 'kill' | 'pause' | 'not-ready' | 'zone' | 'edit' | 'apiserver' | 'controllers';
  target: number;
  startS: number;
  lengthS: number;
  /** Kill only: out-of-service taint this many seconds after the kill (never when undefined). */
  oosAfterS: number | undefined;
  /** Zone only: how many of the zone's nodes die (partial zones). */
  count: number;
  slot: number;
  seconds: number;
}

const ANY_KIND: readonly Episode['kind'][] = ['kill', 'kill', 'kill', 'pause', 'pause', 'not-ready', 'not-ready', 'zone', 'edit', 'edit', 'apiserver', 'controllers'];
const NODE_FAULT: readonly Episode['kind'][] = ['kill', 'pause', 'not-ready', 'zone'];

function episodeArb(durationS: number, kinds: readonly Episode['kind'][] = ANY_KIND): fc.Arbitrary<Episode> {
  return fc.record({
    kind: fc.constantFrom<Episode['kind']>(...kinds),
    target: fc.nat(99),
    startS: fc.integer({ min: 2, max: Math.max(3, durationS - 20) }),
    lengthS: fc.integer({ min: 4, max: 45 }),
    oosAfterS: fc.option(fc.integer({ min: 12, max: 25 }), { nil: undefined, freq: 3 }),
    count: fc.integer({ min: 1, max: 3 }),
    slot: fc.nat(9),
    seconds: fc.integer({ min: 0, max: 30 }),
  });
}

/**
 * The fast-check arbitrary of scenarios of one size (ids are filled in by {@link generateScenarios}).
 * With `outage`, every scenario also restarts the API server once (`fuzz:diff --outage`: a campaign
 * about what follows an outage); without it the arbitrary is what it always was, so a seed gives the
 * same scenarios as before.
 */
export function scenarioArb(size: ScenarioSize, outage = false): fc.Arbitrary<Scenario> {
  const durationS = size === 'small' ? 30 : 60;
  const withOutage = (es: Episode[], o: Episode | undefined): Episode[] => (o ? [...es, o] : es);
  return fc
    .record({
      outage: outage ? episodeArb(durationS, ['apiserver']) : fc.constant(undefined),
      zones: fc.integer({ min: 2, max: 3 }),
      nodesPerZone: fc.integer({ min: 2, max: 3 }),
      plain: fc.integer({ min: 0, max: 1 }),
      forever: fc.integer({ min: 0, max: 1 }),
      pvc: fc.integer({ min: 0, max: 1 }),
      tolerationS: fc.integer({ min: 3, max: 25 }),
      graceS: fc.integer({ min: 6, max: 10 }),
      monitorPeriodS: fc.integer({ min: 1, max: 2 }),
      // At least one node fault, so that every scenario makes both sides decide something.
      first: episodeArb(durationS, NODE_FAULT),
      episodes: fc.array(episodeArb(durationS), { minLength: 1, maxLength: size === 'small' ? 3 : 6 }),
    })
    .map((r) => {
      const nodes = r.zones * r.nodesPerZone;
      return {
        version: 1 as const,
        id: '',
        zones: r.zones,
        nodesPerZone: r.nodesPerZone,
        podsPerNode: 3,
        podMix: { plain: r.plain, tolerationSeconds: 2, tolerateForever: r.forever, pvc: r.pvc },
        tolerationS: r.tolerationS,
        graceS: r.graceS,
        monitorPeriodS: r.monitorPeriodS,
        durationS,
        steps: expand(withOutage([r.first, ...r.episodes], r.outage), nodes, r.zones, r.nodesPerZone, durationS),
      };
    });
}

/**
 * Turns episodes into a timeline that never contradicts itself: a node has at most one fault at a
 * time (a later episode on a busy node is dropped), every fault ends (or lasts to the end), and the
 * API server and controllers are restarted at most once each.
 */
function expand(episodes: readonly Episode[], nodes: number, zones: number, perZone: number, durationS: number): Step[] {
  const steps: Step[] = [];
  const busyUntil = new Array<number>(nodes).fill(-1);
  let apiserver = false;
  let controllers = false;
  const free = (n: number, from: number): boolean => (busyUntil[n] ?? Infinity) < from;
  for (const e of [...episodes].sort((a, b) => a.startS - b.startS)) {
    const end = e.startS + e.lengthS;
    const node = e.target % nodes;
    if (e.kind === 'kill' && free(node, e.startS)) {
      steps.push({ atS: e.startS, op: 'kill', node });
      const oos = e.oosAfterS !== undefined && e.startS + e.oosAfterS < Math.min(end, durationS);
      if (oos) steps.push({ atS: e.startS + (e.oosAfterS ?? 0), op: 'add-out-of-service', node });
      if (end < durationS) {
        if (oos) steps.push({ atS: end, op: 'remove-out-of-service', node });
        steps.push({ atS: end, op: 'revive', node });
      }
      busyUntil[node] = end;
    } else if (e.kind === 'pause' && free(node, e.startS)) {
      steps.push({ atS: e.startS, op: 'pause-lease', node });
      if (end < durationS) steps.push({ atS: end, op: 'resume-lease', node });
      busyUntil[node] = end;
    } else if (e.kind === 'not-ready' && free(node, e.startS)) {
      steps.push({ atS: e.startS, op: 'not-ready', node });
      if (end < durationS) steps.push({ atS: end, op: 'ready', node });
      busyUntil[node] = end;
    } else if (e.kind === 'zone') {
      // Partial zones: `count` nodes of one zone at once (all of it when count ≥ its size).
      const zone = e.target % zones;
      const members = Array.from({ length: Math.min(e.count, perZone) }, (_, i) => zone * perZone + i);
      if (!members.every((n) => free(n, e.startS))) continue;
      for (const n of members) {
        steps.push({ atS: e.startS, op: 'kill', node: n });
        if (end < durationS) steps.push({ atS: end, op: 'revive', node: n });
        busyUntil[n] = end;
      }
    } else if (e.kind === 'edit') {
      steps.push({ atS: e.startS, op: 'edit-toleration', node, slot: e.slot, seconds: e.seconds });
    } else if (e.kind === 'apiserver' && !apiserver) {
      apiserver = true;
      steps.push({ atS: e.startS, op: 'restart-apiserver', downS: 3 + (e.lengthS % 6) });
    } else if (e.kind === 'controllers' && !controllers) {
      controllers = true;
      steps.push({ atS: e.startS, op: 'restart-controllers', downS: 2 + (e.lengthS % 4) });
    }
  }
  return steps.sort((a, b) => a.atS - b.atS);
}

/**
 * The `count` scenarios of `seed` at `size`, ids `<seed>/<i>` (`<seed>/<i>o` with `outage`: each
 * restarts the API server once, {@link scenarioArb}). Deterministic: the same arguments always give
 * the same scenarios (fast-check's seeded generator).
 */
export function generateScenarios(seed: number, count: number, size: ScenarioSize, outage = false): Scenario[] {
  // noBias: fast-check's first samples are otherwise its smallest values (one-step scenarios).
  return fc.sample(fc.noBias(scenarioArb(size, outage)), { seed, numRuns: count }).map((s, i) => ({ ...s, id: `${seed}/${i}${outage ? 'o' : ''}` }));
}

/**
 * Parses and checks a scenario file's text.
 * @throws {Error} when it is not a version-1 scenario or a step names a node or op that does not exist.
 */
export function parseScenario(text: string): Scenario {
  const s = JSON.parse(text) as Scenario;
  if (s.version !== 1 || !Array.isArray(s.steps)) throw new Error('not a version-1 fuzz:diff scenario');
  const nodes = s.zones * s.nodesPerZone;
  for (const st of s.steps) {
    if (!(STEP_OPS as readonly string[]).includes(st.op)) throw new Error(`unknown step op "${st.op}"`);
    if ('node' in st && (st.node < 0 || st.node >= nodes)) throw new Error(`step ${st.op} at ${st.atS}s names node ${st.node} of ${nodes}`);
  }
  return s;
}
