/**
 * The chaos scenarios (issue 30's numbering), each a function over a {@link ChaosWorld} that injects
 * one real fault, checks the expected outcome under the safety rule and returns what it measured.
 * test/integration/chaos.test.ts runs 2, 3 and 5 at CI size; test/chaos/main.ts (`npm run chaos`)
 * runs any of them. Sizes and durations are parameters so CI can run them small; every result says
 * the size it ran at.
 *
 * Measured in every scenario:
 * - wrongful actions: a write the scenario forbids (a live node marked Unknown or tainted, a pod on
 *   a live node deleted, a write of a deposed leader that landed);
 * - lost actions: an action the faults must not prevent, missing at the end (a dead node not marked
 *   or tainted, a pod of a dead node not deleted);
 * - time to regain sight after the fault, ms;
 * - requests/s of the controller (its `rest_client_requests_total`) in steady state, during the
 *   fault and after it;
 * - RSS of the controller process after the fault.
 */
import { holdsFor, waitFor } from '../support/cluster.js';
import { awaitWave, CONTROLLER_FLAGS, GRACE_S, LEASE_RENEW_MS, mib, round, sleep, stage, waveVictims, wronglyJudged, type ScenarioResult, type WaveOptions } from './common.js';
import { apf429Fault, LEASE_WATCH } from './faults.js';
import { scenarioAdmissionDenial, scenarioCompaction, scenarioLatency, scenarioResetPeer } from './scenarios-more.js';
import { landedWrite, leaseInformerOf, RequestMeter, rssBytes, type AuditEvent, type ChaosWorld, type Replica } from './harness.js';

/** Options of {@link scenarioStalledLeaseWatch}. Durations ms. */
export interface StallOptions {
  zones: number;
  perZone: number;
  /** How long the server-side stall (phase 2) lasts; longer than the grace period. */
  stallMs: number;
}

/** Scenario 5's election timings (the test helper's): lease 6 s, renew deadline 4 s, retry 0.5 s. */
const ELECTION_FLAGS = ['--leader-elect-lease-duration=6s', '--leader-elect-renew-deadline=4s', '--leader-elect-retry-period=0.5s'];

/** The bound within which a stuck Lease watch must be replaced, ms (see {@link scenarioStalledLeaseWatch}). */
export const STALL_DETECTION_BOUND_MS = GRACE_S * 1000 + 5000 + 5000;


/**
 * Scenario 2: the controller's Lease watch stalls (connection open, nothing arrives) while every
 * other request, writes included, goes on and the simulated kubelets keep renewing.
 * - Phase 1, a stuck stream: only the open Lease watch is held; a new one would pass. It must be
 *   given up and replaced within {@link STALL_DETECTION_BOUND_MS}: the Lease circuit breaker's live
 *   read of the first node whose cached Lease expired (a grace period after the stall began) proves
 *   the cache is behind, and the informer restarts a watch still behind 5 s later
 *   (`expectResourceVersion`); client-node's 30 s inactivity timeout is the fallback.
 * - Phase 2, a server-side stall for `stallMs`: every Lease watch, new ones too, connects and hears
 *   nothing. No node may be marked Unknown on the stale cache (the breaker holds), for the whole
 *   stall and two grace periods after it.
 * Then one real failure must still be acted on.
 */
export async function scenarioStalledLeaseWatch(world: ChaosWorld, o: StallOptions): Promise<ScenarioResult> {
  const prefix = `chaos-s2-${Date.now().toString(36).slice(-4)}`;
  const s = await stage(world, prefix, o.zones, o.perZone);
  const failures: string[] = [];
  const noneJudged = (): boolean => wronglyJudged(s, new Set()).length === 0;
  let replica: Replica | undefined;
  let meter: RequestMeter | undefined;
  try {
    replica = await world.startReplica('s2', prefix, `${prefix}-election`, CONTROLLER_FLAGS);
    await replica.proc.waitReady(120_000);
    meter = new RequestMeter(replica.proc);
    await sleep(15_000);
    const steadyEnd = Date.now();

    // Phase 1: one stuck stream.
    const stuckAt = Date.now();
    world.relay.stall(LEASE_WATCH, { newStreams: false });
    let replacedAfterMs: number | undefined;
    await waitFor(
      'a new Lease watch',
      () => {
        const next = world.relay.watchStarts.find((w) => w.atMs > stuckAt && LEASE_WATCH.test(w.path));
        if (next) replacedAfterMs = next.atMs - stuckAt;
        return next !== undefined && noneJudged();
      },
      60_000,
      100,
    ).catch((err: unknown) => failures.push(`phase 1: ${String(err)}`));
    world.relay.unstall();
    if (replacedAfterMs === undefined || replacedAfterMs > STALL_DETECTION_BOUND_MS) {
      failures.push(`phase 1: the stuck Lease watch was replaced after ${replacedAfterMs ?? 'never'} ms (bound ${STALL_DETECTION_BOUND_MS} ms)`);
    }
    const stallsPhase1 = (await leaseInformerOf(replica))?.stalls ?? 0;
    await waitFor('the Lease informer watching again', async () => (await leaseInformerOf(replica as Replica))?.watching === true, 30_000, 250).catch(() => undefined);
    await sleep(2 * GRACE_S * 1000);

    // Phase 2: a server-side stall longer than the grace period.
    const stallAt = Date.now();
    world.relay.stall(LEASE_WATCH, { newStreams: true });
    // The stall itself must hold: the Lease informer's resourceVersion does not move after the
    // stall's first 2 s (a relay that let new streams through made phase 2 prove nothing once a
    // watch was replaced; a restart of the watch is no event, so its progress clock cannot tell).
    const early = sleep(2000).then(async () => (await leaseInformerOf(replica as Replica))?.resourceVersion);
    await holdsFor('phase 2: no node judged on the stalled Lease watch', noneJudged, o.stallMs, 250).catch((err: unknown) => failures.push(String(err)));
    const rvEarly = await early;
    const rvLate = (await leaseInformerOf(replica))?.resourceVersion;
    if (rvEarly !== rvLate) failures.push(`phase 2: the stall did not hold: the Lease informer moved from resourceVersion ${rvEarly ?? '-'} to ${rvLate ?? '-'} during it`);
    const restarts = world.relay.watchStarts.filter((w) => w.atMs > stallAt && LEASE_WATCH.test(w.path)).length;
    world.relay.unstall();
    const unstallAt = Date.now();
    // Sight is back when the Lease informer's watch delivers again: its lastEventMs moves past the end of the stall.
    let regain: number | undefined;
    await waitFor(
      'the Lease informer hears events again',
      async () => {
        const l = await leaseInformerOf(replica as Replica);
        if (l?.watching && (l.lastEventMs ?? 0) > unstallAt) regain = (l.lastEventMs ?? 0) - unstallAt;
        return regain !== undefined;
      },
      60_000,
      250,
    ).catch((err: unknown) => failures.push(String(err)));
    // Two more grace periods: a node judged on what the stall left behind would show here.
    await holdsFor('no node judged after the stall', noneJudged, 2 * GRACE_S * 1000, 250).catch((err: unknown) => failures.push(String(err)));
    const afterEnd = Date.now();

    // It still acts: one real failure after the stall.
    const victim = s.fleet.nodeNames()[0] ?? '';
    const pods = new Map([[victim, s.fleet.podsOn(victim)]]);
    s.fleet.killNode(victim);
    const lost = await awaitWave(world, s, [victim], pods, GRACE_S * 1000 + 60_000);
    failures.push(...lost);
    const wrongful = wronglyJudged(s, new Set([victim]));
    failures.push(...wrongful.map((n) => `${n}: a live node was judged`));
    const rss = await rssBytes(replica.proc.child.pid);
    return {
      scenario: 2,
      title: 'stalled Lease watch while writes succeed',
      size: `${o.zones * o.perZone} nodes, stuck stream then a ${o.stallMs / 1000} s server-side stall, grace ${GRACE_S} s, leases renewed every ${LEASE_RENEW_MS / 1000} s`,
      wrongful: wrongful.length,
      lost: lost.length,
      regainSightMs: regain,
      rate: { steady: round(meter.rate(steadyEnd - 15_000, steadyEnd)), during: round(meter.rate(stallAt, unstallAt)), after: round(meter.rate(unstallAt, afterEnd)) },
      rssMiB: mib(rss),
      figures: {
        stuckStreamReplacedAfterMs: replacedAfterMs ?? 'never',
        stallRestartsPhase1: stallsPhase1,
        leaseWatchesDuringServerStall: restarts,
      },
      failures,
    };
  } finally {
    meter?.stop();
    world.relay.unstall();
    await replica?.proc.stop(3000);
    await s.stop();
  }
}


/** For each 429 answer to a write of a named object, the wait until the same write (verb and object) was sent again, ms. */
export function retryGaps(events: readonly AuditEvent[]): { key: string; gapMs: number }[] {
  const key = (e: AuditEvent): string => [e.verb, e.resource, e.subresource ?? '', e.namespace ?? '', e.name ?? ''].join('/');
  const gaps: { key: string; gapMs: number }[] = [];
  const sorted = [...events].sort((a, b) => a.receivedMs - b.receivedMs);
  sorted.forEach((e, i) => {
    // A create without a name (an Event with generateName) cannot be told from the next one.
    if (e.code !== 429 || !MUTATING_VERBS.has(e.verb) || !e.name) return;
    const next = sorted.slice(i + 1).find((n) => key(n) === key(e));
    if (next) gaps.push({ key: key(e), gapMs: next.receivedMs - e.completedMs });
  });
  return gaps;
}

const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete']);

/**
 * For each dead node, whether the controller's first landed write to the node (status or taint)
 * came before its first landed write to one of the node's pods. @returns the nodes where a pod went first.
 */
export function podsBeforeNode(events: readonly AuditEvent[], pods: ReadonlyMap<string, string[]>): string[] {
  const landed = events.filter(landedWrite).sort((a, b) => a.receivedMs - b.receivedMs);
  const out: string[] = [];
  for (const [node, names] of pods) {
    const nodeAt = landed.find((e) => e.resource === 'nodes' && e.name === node)?.receivedMs;
    const podAt = landed.find((e) => e.resource === 'pods' && names.includes(e.name ?? ''))?.receivedMs;
    if (podAt !== undefined && (nodeAt === undefined || podAt < nodeAt)) out.push(node);
  }
  return out;
}

/**
 * Scenario 3: API Priority and Fairness puts the controller's core-group requests in a one-seat
 * priority level that a noisy neighbour keeps busy, so most are answered 429 with Retry-After, for
 * `faultMs`, starting as a failure wave begins. Expected: nothing lost (every dead
 * node Unknown and tainted, its pods deleted, once the fault is over), no live node judged, writes
 * retried no sooner than Retry-After allows (at least 1 s, the smallest value APF sends), and for
 * each dead node its own writes land before its pods'.
 */
export async function scenarioApf429(world: ChaosWorld, o: WaveOptions): Promise<ScenarioResult> {
  const prefix = `chaos-s3-${Date.now().toString(36).slice(-4)}`;
  const s = await stage(world, prefix, o.zones, o.perZone);
  const failures: string[] = [];
  let replica: Replica | undefined;
  let meter: RequestMeter | undefined;
  const apf = apf429Fault(world, 'nlc-chaos');
  try {
    replica = await world.startReplica('s3', prefix, `${prefix}-election`, CONTROLLER_FLAGS);
    await replica.proc.waitReady(120_000);
    meter = new RequestMeter(replica.proc);
    await sleep(10_000);
    const faultAt = Date.now();
    await apf.on(replica, []);
    const dead = waveVictims(s.fleet, o.deadPerZone);
    const pods = new Map(dead.map((n) => [n, s.fleet.podsOn(n)]));
    for (const n of dead) s.fleet.killNode(n);
    await sleep(o.faultMs);
    await apf.off(replica);
    const recoveredAt = Date.now();
    const lost = await awaitWave(world, s, dead, pods, 120_000);
    const doneAt = Date.now();
    failures.push(...lost);
    const wrongful = wronglyJudged(s, new Set(dead));
    failures.push(...wrongful.map((n) => `${n}: a live node was judged`));
    const events = (await world.audit()).filter((e) => e.user === replica?.user);
    const rejected = events.filter((e) => e.code === 429);
    const gaps = retryGaps(events);
    const early = gaps.filter((g) => g.gapMs < 950);
    if (rejected.length === 0) failures.push('APF rejected nothing: the fault did not happen');
    if (early.length > 0) failures.push(`${early.length} writes sent again sooner than 1 s after a 429 (${early.slice(0, 5).map((g) => `${g.key} after ${g.gapMs} ms`).join(', ')})`);
    const podsFirst = podsBeforeNode(events, pods);
    failures.push(...podsFirst.map((n) => `${n}: a pod write landed before the node's`));
    const rss = await rssBytes(replica.proc.child.pid);
    return {
      scenario: 3,
      title: 'APF 429s with Retry-After during a failure wave',
      size: `${o.zones * o.perZone} nodes, ${dead.length} killed, the controller's core requests in a one-seat APF level with a noisy neighbour (6 loops) for ${o.faultMs / 1000} s`,
      wrongful: wrongful.length + podsFirst.length,
      lost: lost.length,
      // Here: from the end of the fault until the whole wave was acted on (0 when it was during the fault).
      regainSightMs: doneAt - recoveredAt,
      rate: { steady: round(meter.rate(faultAt - 10_000, faultAt)), during: round(meter.rate(faultAt, recoveredAt)), after: round(meter.rate(recoveredAt, doneAt)) },
      rssMiB: mib(rss),
      figures: {
        rejected429: rejected.length,
        controllerRequestsDuringFault: events.filter((e) => e.receivedMs >= faultAt && e.receivedMs <= recoveredAt).length,
        noisyNeighbourRequests: apf.neighbourRequests(),
        writesRetriedAfter429: gaps.length,
        minRetryGapMs: gaps.length ? Math.min(...gaps.map((g) => g.gapMs)) : '-',
        lastNodeUnknownAfterKillMs: Math.max(...dead.map((n) => (s.observer.firstAt(n, (c) => c.ready === 'Unknown') ?? Number.NaN) - faultAt)),
      },
      failures,
    };
  } finally {
    meter?.stop();
    if (replica) await apf.off(replica).catch(() => undefined);
    await replica?.proc.stop(3000);
    await s.stop();
  }
}

/**
 * Scenario 5: the leader's answers from the API server stop (Toxiproxy `timeout` toxic, timeout 0,
 * on the downstream of its proxy: its requests still arrive and are carried out, it hears nothing
 * back: the one-way partition in which a deposed leader's writes can still land), while the standby
 * is not cut off; nodes die a grace period before, so the leader is writing as the cut begins. Expected: the old leader
 * stops acting (its renew deadline, 4 s, is shorter than the lease, 6 s), no write of the old
 * leader lands after the standby's first write of the Lease (the takeover; counted from the audit
 * log), and the new leader finishes the wave.
 */
export async function scenarioLeaderPartition(world: ChaosWorld, o: WaveOptions): Promise<ScenarioResult> {
  const prefix = `chaos-s5-${Date.now().toString(36).slice(-4)}`;
  const s = await stage(world, prefix, o.zones, o.perZone);
  const failures: string[] = [];
  const lease = `${prefix}-election`;
  const meters: RequestMeter[] = [];
  const started: Replica[] = [];
  try {
    const a = await world.startReplica('a5', prefix, lease, [...CONTROLLER_FLAGS, ...ELECTION_FLAGS]);
    started.push(a);
    await a.proc.waitReady(120_000);
    await waitFor('replica a5 leads', async () => (await a.proc.masterStatus(lease)) === 1, 60_000, 250);
    const b = await world.startReplica('b5', prefix, lease, [...CONTROLLER_FLAGS, ...ELECTION_FLAGS]);
    started.push(b);
    await b.proc.waitReady(120_000);
    meters.push(new RequestMeter(a.proc), new RequestMeter(b.proc));
    const rate = (from: number, to: number): number => round(meters.reduce((sum, m) => sum + (Number.isNaN(m.rate(from, to)) ? 0 : m.rate(from, to)), 0));
    await sleep(10_000);
    const dead = waveVictims(s.fleet, o.deadPerZone);
    const pods = new Map(dead.map((n) => [n, s.fleet.podsOn(n)]));
    for (const n of dead) s.fleet.killNode(n);
    // The grace period runs out as the cut begins: the leader is busy marking, tainting and (2 s
    // later) evicting when its answers stop, so its requests are in flight and may be retried.
    await sleep(GRACE_S * 1000);
    const cutAt = Date.now();
    await world.toxiproxy.addToxic(a.proxy, { name: 'partition', type: 'timeout', stream: 'downstream', attributes: { timeout: 0 } });
    await waitFor('replica b5 leads', async () => (await b.proc.masterStatus(lease)) === 1, 60_000, 100).catch((err: unknown) => failures.push(String(err)));
    const tookOverSeenAt = Date.now();
    const lost = await awaitWave(world, s, dead, pods, 60_000);
    failures.push(...lost);
    await sleep(Math.max(0, o.faultMs - (Date.now() - cutAt)));
    await world.toxiproxy.removeToxic(a.proxy, 'partition');
    const healedAt = Date.now();
    await sleep(5000);
    const events = await world.audit();
    const takeover = events
      .filter((e) => e.user === b.user && e.resource === 'leases' && e.name === lease && landedWrite(e))
      .sort((x, y) => x.receivedMs - y.receivedMs)[0];
    if (!takeover) failures.push('no takeover write of the standby in the audit log');
    const lateWrites = takeover ? events.filter((e) => e.user === a.user && landedWrite(e) && e.completedMs >= takeover.receivedMs) : [];
    failures.push(...lateWrites.map((e) => `old leader's ${e.verb} ${e.resource}/${e.subresource ?? ''} ${e.name ?? ''} landed after the takeover`));
    const aDuring = takeover ? events.filter((e) => e.user === a.user && landedWrite(e) && e.receivedMs >= cutAt && e.completedMs < takeover.receivedMs) : [];
    const aLast = events.filter((e) => e.user === a.user && landedWrite(e) && e.resource !== 'leases').sort((x, y) => y.completedMs - x.completedMs)[0];
    const aExit = await Promise.race([a.proc.exited, sleep(1).then(() => undefined)]);
    const wrongful = wronglyJudged(s, new Set(dead));
    failures.push(...wrongful.map((n) => `${n}: a live node was judged`));
    const rss = await rssBytes(b.proc.child.pid);
    return {
      scenario: 5,
      title: 'leader cut off from the API server, standby not',
      size: `${o.zones * o.perZone} nodes, ${dead.length} killed ${GRACE_S} s before the cut, lease 6 s / renew deadline 4 s / retry 0.5 s, answers to the leader dropped for ${o.faultMs / 1000} s`,
      wrongful: wrongful.length + lateWrites.length,
      lost: lost.length,
      regainSightMs: takeover ? takeover.completedMs - cutAt : undefined,
      rate: { steady: rate(cutAt - 10_000, cutAt), during: rate(cutAt, healedAt), after: rate(healedAt, Date.now()) },
      rssMiB: mib(rss),
      figures: {
        takeoverAfterCutMs: takeover ? takeover.completedMs - cutAt : 'never',
        standbySawItselfLeadAfterMs: tookOverSeenAt - cutAt,
        oldLeaderLastNonLeaseWriteBeforeTakeoverMs: aLast && takeover ? takeover.receivedMs - aLast.completedMs : '-',
        oldLeaderExit: aExit ? `${aExit.code ?? aExit.signal} after ${aExit.atMs - cutAt} ms` : 'still running',
        oldLeaderWritesLandedDuringCutBeforeTakeover: aDuring.length,
        oldLeaderWritesAfterTakeover: lateWrites.length,
      },
      failures,
    };
  } finally {
    for (const m of meters) m.stop();
    await world.toxiproxy.reset().catch(() => undefined);
    await Promise.all(started.map((r) => r.proc.stop(3000)));
    await s.stop();
  }
}

export type { ScenarioResult } from './common.js';

/** Sizes: `ci` is the CI subset's (small, short); `full` the issue's where it fits one machine. */
export type ScenarioSize = 'ci' | 'full';

/**
 * Runs scenario `n` at `size`.
 * @throws {Error} for a scenario number not implemented.
 */
export async function runScenario(world: ChaosWorld, n: number, size: ScenarioSize): Promise<ScenarioResult> {
  switch (n) {
    case 2:
      return scenarioStalledLeaseWatch(world, size === 'ci' ? { zones: 2, perZone: 3, stallMs: 25_000 } : { zones: 3, perZone: 10, stallMs: 60_000 });
    case 3:
      return scenarioApf429(world, size === 'ci' ? { zones: 3, perZone: 4, deadPerZone: 2, faultMs: 30_000 } : { zones: 3, perZone: 20, deadPerZone: 10, faultMs: 120_000 });
    case 5:
      return scenarioLeaderPartition(world, size === 'ci' ? { zones: 2, perZone: 3, deadPerZone: 1, faultMs: 20_000 } : { zones: 3, perZone: 10, deadPerZone: 3, faultMs: 60_000 });
    case 1:
      return scenarioLatency(world, size === 'ci' ? { zones: 2, perZone: 3, deadPerZone: 1, faultMs: 40_000 } : { zones: 3, perZone: 10, deadPerZone: 3, faultMs: 300_000 });
    case 4:
      return scenarioCompaction(world, size === 'ci' ? { zones: 2, perZone: 3, deadPerZone: 1, faultMs: 30_000 } : { zones: 3, perZone: 10, deadPerZone: 3, faultMs: 120_000 });
    case 6:
      return scenarioResetPeer(world, size === 'ci' ? { zones: 2, perZone: 3, deadPerZone: 1, faultMs: 40_000 } : { zones: 3, perZone: 10, deadPerZone: 3, faultMs: 180_000 });
    case 7:
      return scenarioAdmissionDenial(world, size === 'ci' ? { zones: 2, perZone: 4, deadPerZone: 2, faultMs: 40_000 } : { zones: 3, perZone: 10, deadPerZone: 4, faultMs: 120_000 });
    default:
      throw new Error(`no scenario ${n} (1 to 7)`);
  }
}

/** The results as a Markdown table (the one docs/reliability.md shows). */
export function formatTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((r) =>
    [
      r.scenario,
      r.title,
      r.size,
      r.wrongful,
      r.lost,
      r.regainSightMs ?? '-',
      `${r.rate.steady} / ${r.rate.during} / ${r.rate.after}`,
      r.rssMiB ?? '-',
      Object.entries(r.figures)
        .map(([k, v]) => `${k}=${v}`)
        .join(', '),
      r.failures.length === 0 ? 'pass' : 'FAIL',
    ].join(' | '),
  );
  return ['| # | scenario | size | wrongful | lost | regain sight ms | req/s steady / during / after | RSS MiB | figures | result |', '|---|---|---|---|---|---|---|---|---|---|', ...rows.map((r) => `| ${r} |`)].join('\n');
}
