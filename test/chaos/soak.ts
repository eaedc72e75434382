/**
 * The soak (`npm run chaos -- --soak 2h`): one controller replica on a 1,002-node × 30-pod fleet for
 * the given time, with a random fault from the chaos suite's catalogue (faults.ts) switched on every
 * 1–3 minutes and a failure wave every 10 minutes. It samples the process every 15 s (RSS, heap,
 * libuv handles, active resources such as timers and sockets, and the per-node and per-pod state
 * the controllers hold, counted from `/debug/state`) and judges:
 * - RSS slope after the first 15 minutes under 5 MiB/h;
 * - no counted figure growing from the first to the last quarter;
 * - 0 wrongful actions (a node never killed judged, a pod of one deleted) and 0 lost ones (a dead
 *   node not marked Unknown and tainted, or a pod of one not deleted, within the wave's limit);
 * - no crash: an unhandled rejection or uncaught exception ends the process with 1 ("uncaught
 *   error" in its log). A process that exits because it lost its leader election (a fault can keep
 *   its renewals from landing within the renew deadline, as it would kube-controller-manager's) is
 *   restarted, as its Deployment would, and counted; the verdicts on growth judge the longest-lived
 *   process.
 *
 * Not in the random list, and why: the leader partition (scenario 5) needs a standby, and a
 * takeover would end the one process whose growth the soak measures; API server and etcd restarts
 * take the simulated kubelets' heartbeats down too, so every node would go silent at once.
 * Node timings are kube-controller-manager's defaults (grace 50 s, monitor period 5 s, eviction
 * rate 0.1/s) with the kubelet's 10 s Lease renewal.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeClients } from '../../src/kube/client.js';
import { renderTimeChart } from '../../bench/lib/chart.js';
import { OURS_NODE_OPTIONS } from '../../bench/lib/options.js';
import { mib, sleep, stage, type Stage } from './common.js';
import { admissionDenialFault, apf429Fault, compactionFault, latencyFault, leaseWatchStallFault, resetPeerFault, type Fault } from './faults.js';
import { allWatching, CHAOS_NAMESPACE, RequestMeter, rssBytes, type ChaosWorld, type Replica } from './harness.js';
import { counted, countedNames, faultTable, faultTableMarkdown, growth, growthMarkdown, judgedSegment, slopePerHour, waveTableMarkdown, type FaultRecord, type GrowthVerdict, type SoakSample, type WaveRecord } from './soakstats.js';
import { metricValue } from '../support/controller.js';

/** The soak's sizes and timings. Durations ms. */
export interface SoakOptions {
  durationMs: number;
  zones: number;
  perZone: number;
  podsPerNode: number;
  /** The pods' NoExecute tolerations, seconds. */
  tolerationSeconds: number;
  firstWaveMs: number;
  waveEveryMs: number;
  waveSize: number;
  /** How long a wave may take before what is left counts as lost. */
  waveLimitMs: number;
  /** Gap between fault starts, drawn uniformly from [min, max]. */
  faultGapMs: [number, number];
  /** A fault's length, drawn uniformly from [min, max] (and at most the gap − 20 s). */
  faultLengthMs: [number, number];
  sampleEveryMs: number;
  /** Slopes and growth are judged after this. */
  warmupMs: number;
  /** Extra controller flags (upstream syntax). */
  flags: string[];
  /** Node's own flags for the controller process (absent in reports before 2026-11-28: none). */
  nodeArgs?: string[];
}

/**
 * Node's flags as the product ships them with the chart's defaults: the image ENTRYPOINT's
 * `--max-semi-space-size=16` (MiB; the bench's OURS_NODE_OPTIONS, which dockerfile.test.ts ties to
 * the Dockerfile) and the chart's `NODE_OPTIONS=--max-old-space-size=384` (MiB: heapLimitPercent 75 of
 * resources.limits.memory 512Mi; chaos-soak.test.ts ties it to manifests/03-deployment.yaml). The soaks until
 * 2026-11-28 ran Node's defaults, whose young generation alone may grow to 128 MiB: their RSS was
 * not the RSS an operator's pod would have.
 */
export const SHIPPED_NODE_ARGS: readonly string[] = [...OURS_NODE_OPTIONS.split(' '), '--max-old-space-size=384'];

/** The issue's soak: 1,002 nodes × 30 pods, a wave of 12 nodes every 10 minutes. */
export function fullSoak(durationMs: number): SoakOptions {
  return {
    durationMs,
    zones: 3,
    perZone: 334,
    podsPerNode: 30,
    tolerationSeconds: 30,
    firstWaveMs: 5 * 60_000,
    waveEveryMs: 10 * 60_000,
    waveSize: 12,
    waveLimitMs: 8 * 60_000,
    faultGapMs: [60_000, 180_000],
    faultLengthMs: [30_000, 120_000],
    sampleEveryMs: 15_000,
    warmupMs: 15 * 60_000,
    flags: [],
    nodeArgs: [...SHIPPED_NODE_ARGS],
  };
}

/** A small soak to try the machinery (`--size ci`): 30 nodes × 5 pods, grace 20 s, waves every 3 min. */
export function smallSoak(durationMs: number): SoakOptions {
  return {
    ...fullSoak(durationMs),
    zones: 3,
    perZone: 10,
    podsPerNode: 5,
    tolerationSeconds: 5,
    firstWaveMs: 60_000,
    waveEveryMs: 3 * 60_000,
    waveSize: 3,
    waveLimitMs: 150_000,
    faultGapMs: [45_000, 75_000],
    faultLengthMs: [20_000, 40_000],
    sampleEveryMs: 5_000,
    warmupMs: 60_000,
    flags: ['--node-monitor-grace-period=20s', '--node-monitor-period=2s', '--node-eviction-rate=1'],
  };
}

/** Everything the soak measured, and its verdict. Times ms since the start unless named otherwise. */
export interface SoakReport {
  options: SoakOptions;
  startedAt: string;
  endedAt: string;
  fleet: { nodes: number; pods: number; createS: number };
  samples: SoakSample[];
  faults: FaultRecord[];
  waves: WaveRecord[];
  /** Nodes never killed that were judged, and pods of such nodes that were deleted. */
  wrongful: string[];
  lost: string[];
  /** Every exit of a controller process before the end, ms since the start, and why. */
  exits: SoakExit[];
  rssSlopeMiBPerHour: number;
  heapSlopeMiBPerHour: number;
  /** slopes of V8 heap committed and of external memory, MiB/h (absent in reports before 2026-11-28) */
  heapTotalSlopeMiBPerHour?: number;
  externalSlopeMiBPerHour?: number;
  growth: GrowthVerdict[];
  failures: string[];
}

/** One exit of a controller process. */
export interface SoakExit {
  atMs: number;
  code: number | null;
  /** `uncaught error: …` (a crash), `leader election lost`, or `other`. */
  reason: string;
}

/** Allowances of the growth verdicts, absolute, by counted-figure prefix (the rest: 0). */
const ALLOWANCE: [RegExp, number][] = [
  [/^resources:Timeout$/, 20],
  [/^(handles|resources):(Socket|TLSSocket|TCPSocketWrap|TCPWRAP|TLSWRAP)$/, 4],
  [/^(handles|resources):/, 4],
  // Queues and pending deletions breathe with the waves; the medians compare quiet times.
  [/^state:/, 2],
];

/** Counts the entries of each controller's `/debug/state` view (arrays by length, numbers as they are) and each informer's cache. */
export function stateCounts(st: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [ctrl, view] of Object.entries(st)) {
    if (ctrl === 'informers' && Array.isArray(view)) {
      for (const i of view as { name?: string; cacheSize?: number }[]) if (i.name) out[`informer ${i.name}`] = i.cacheSize ?? 0;
      continue;
    }
    if (Array.isArray(view)) out[ctrl] = view.length;
    else if (typeof view === 'number') out[ctrl] = view;
    else if (view && typeof view === 'object' && ctrl !== 'server' && ctrl !== 'shadow') {
      for (const [k, v] of Object.entries(view as Record<string, unknown>)) {
        if (Array.isArray(v)) out[`${ctrl}.${k}`] = v.length;
        else if (typeof v === 'number' && !/At$|Ms$|Since$/.test(k)) out[`${ctrl}.${k}`] = v;
      }
    }
  }
  return out;
}

/** Every `name{type="…"} value` sample of a gauge, by type. */
function byType(metrics: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  const re = new RegExp(`^${name}\\{type="([^"]+)"\\} (\\S+)$`, 'gm');
  for (const m of metrics.matchAll(re)) out[m[1] as string] = Number(m[2]);
  return out;
}

const uniform = ([lo, hi]: [number, number]): number => lo + Math.random() * (hi - lo);

/** Pods still bound to `node` in `namespace` and not terminating. */
async function podsLeft(admin: KubeClients, namespace: string, node: string): Promise<string[]> {
  const list = await admin.core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${node}` });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name ?? '');
}

/**
 * Runs the soak on `world` (see the module comment) and writes `soak-<date>.json`, `.md` and
 * `.png` into `outDir`.
 * @param log progress lines.
 * @returns the report; its `failures` list every goal not met (empty: passed).
 * @throws {Error} when the fleet or the replica cannot be started.
 */
export async function runSoak(world: ChaosWorld, o: SoakOptions, outDir: string, log: (m: string) => void): Promise<SoakReport> {
  const prefix = `chaos-soak-${Date.now().toString(36).slice(-4)}`;
  const createStart = Date.now();
  const s: Stage = await stage(world, prefix, o.zones, o.perZone, { podsPerNode: o.podsPerNode, tolerationSeconds: o.tolerationSeconds, leaseRenewIntervalMs: 10_000, observeIntervalMs: 5000, nodeStatusUpdateFrequencyMs: 60_000 });
  const createS = Math.round((Date.now() - createStart) / 1000);
  log(`fleet ${prefix}: ${o.zones * o.perZone} nodes × ${o.podsPerNode} pods in ${createS} s`);
  const flags = ['--log-level=info', '--leader-elect-lease-duration=15s', '--leader-elect-renew-deadline=10s', '--leader-elect-retry-period=2s', ...o.flags];
  let gen = 0;
  const start = async (): Promise<Replica> => {
    const r = await world.startReplica(gen === 0 ? 'soak' : `soak-${gen}`, prefix, `${prefix}-election`, flags, o.nodeArgs ?? []);
    await r.proc.waitReady(300_000);
    return r;
  };
  let replica = await start();
  let meter = new RequestMeter(replica.proc, 5000);
  const meters = [meter];
  const t0 = Date.now();
  const at = (): number => Date.now() - t0;
  const end = t0 + o.durationMs;
  const killedAt = new Map<string, number>();
  const samples: SoakSample[] = [];
  const faults: FaultRecord[] = [];
  const waves: WaveRecord[] = [];
  const exits: SoakExit[] = [];
  let stopping = false;
  // As a Deployment would: a process that exits is started again (and the exit recorded).
  const supervise = (r: Replica): void => {
    void r.proc.exited.then(async (e) => {
      if (stopping) return;
      const tail = r.proc.logEntries().slice(-30);
      const fatal = tail.find((l) => String(l['msg']).startsWith('uncaught error'));
      const lost = tail.some((l) => String(l['msg']).startsWith('leader election lost'));
      const reason = fatal ? `uncaught error: ${String(fatal['err']).split('\n')[0] ?? ''}` : lost ? 'leader election lost' : 'other';
      exits.push({ atMs: e.atMs - t0, code: e.code, reason });
      log(`the controller exited ${e.code ?? e.signal} (${reason}); starting it again`);
      if (Date.now() >= end) return;
      gen++;
      try {
        replica = await start();
      } catch (err) {
        // Recorded as a crash of its own: the waves after it show what no controller did.
        exits.push({ atMs: Date.now() - t0, code: null, reason: `restart failed: ${String(err).split('\n')[0] ?? ''}` });
        log(`the controller could not be started again: ${String(err)}`);
        return;
      }
      meter = new RequestMeter(replica.proc, 5000);
      meters.push(meter);
      supervise(replica);
    });
  };
  supervise(replica);
  const running = (): boolean => Date.now() < end;

  // Wrongful: a change of a node not (yet) killed that shows it judged.
  const judgedLive = (fromMs: number, toMs: number): string[] => {
    const out = new Set<string>();
    for (const c of s.observer.changes) {
      const k = killedAt.get(c.node);
      if ((k === undefined || c.atMs < k) && c.atMs >= fromMs && c.atMs <= toMs && (c.ready !== 'True' || c.noExecute.length > 0)) out.add(c.node);
    }
    return [...out];
  };

  const sampler = (async () => {
    while (running()) {
      const metrics = await replica.proc.metrics().catch(() => '');
      const st = (await replica.proc.debugState().catch(() => ({}))) as unknown as Record<string, unknown>;
      samples.push({
        atMs: at(),
        process: gen,
        rssMiB: mib(await rssBytes(replica.proc.child.pid)),
        heapUsedMiB: mib(metricValue(metrics, 'nodejs_heap_size_used_bytes')),
        // RSS grew ~10 MiB/h in the 2026-11-27 2-hour run while heap used was flat: these say where.
        heapTotalMiB: mib(metricValue(metrics, 'nodejs_heap_size_total_bytes')),
        externalMiB: mib(metricValue(metrics, 'nodejs_external_memory_bytes')),
        handles: byType(metrics, 'nodejs_active_handles'),
        resources: byType(metrics, 'nodejs_active_resources'),
        state: stateCounts(st),
        simLeaseLagP99Ms: s.fleet.stats().leaseLagMs.p99,
      });
      await sleep(o.sampleEveryMs);
    }
  })();

  const catalogue: Fault[] = [latencyFault(world, 2000), resetPeerFault(world), compactionFault(world, 0), admissionDenialFault(world), apf429Fault(world, CHAOS_NAMESPACE), leaseWatchStallFault(world)];
  const faultLoop = (async () => {
    await sleep(Math.min(o.warmupMs, 60_000));
    while (running()) {
      const gap = uniform(o.faultGapMs);
      const length = Math.min(uniform(o.faultLengthMs), gap - 20_000);
      const fault = catalogue[Math.floor(Math.random() * catalogue.length)] as Fault;
      const startAbs = Date.now();
      const startMs = at();
      log(`fault ${fault.name} for ${Math.round(length / 1000)} s at ${Math.round(startMs / 1000)} s`);
      let startError: string | undefined;
      await fault.on(replica, []).catch((err: unknown) => {
        startError = String(err).split('\n').slice(0, 2).join(' ');
        log(`fault ${fault.name} did not start: ${String(err)}`);
      });
      await sleep(length);
      await fault.off(replica).catch((err: unknown) => log(`fault ${fault.name} did not end cleanly: ${String(err)}`));
      const endAbs = Date.now();
      let regain: number | undefined;
      for (let i = 0; i < 480 && regain === undefined; i++) {
        if (await allWatching(replica)) regain = Date.now() - endAbs;
        else await sleep(250);
      }
      const waitUntil = startAbs + gap;
      await sleep(Math.max(0, Math.min(waitUntil, end) - Date.now()));
      faults.push({
        name: fault.name,
        startMs,
        endMs: endAbs - t0,
        regainSightMs: regain,
        rate: { steady: meter.rate(startAbs - 30_000, startAbs), during: meter.rate(startAbs, endAbs), after: meter.rate(endAbs, Math.min(endAbs + 60_000, Date.now())) },
        rssMiBAfter: mib(await rssBytes(replica.proc.child.pid)),
        wrongful: [],
        ...(startError === undefined ? {} : { startError }),
      });
    }
  })();

  const waveLoop = (async () => {
    let next = t0 + o.firstWaveMs;
    let round = 0;
    while (next < end) {
      await sleep(Math.max(0, next - Date.now()));
      // Never-killed nodes, spread over the zones in turn.
      const fresh = s.fleet.zones().map((z) => s.fleet.nodesInZone(z).filter((n) => !killedAt.has(n)));
      const dead: string[] = [];
      for (let i = 0; dead.length < o.waveSize && i < o.waveSize * o.zones; i++) {
        const n = fresh[(i + round) % fresh.length]?.shift();
        if (n) dead.push(n);
      }
      round++;
      const pods = new Map(dead.map((n) => [n, s.fleet.podsOn(n)]));
      const kill = Date.now();
      for (const n of dead) killedAt.set(n, kill);
      for (const n of dead) s.fleet.killNode(n);
      log(`wave ${round}: ${dead.length} nodes, ${[...pods.values()].flat().length} pods killed at ${Math.round((kill - t0) / 1000)} s`);
      const missing = async (): Promise<string[]> => {
        const out: string[] = [];
        for (const n of dead) {
          if (s.observer.firstAt(n, (c) => c.ready === 'Unknown' && c.atMs >= kill) === undefined) out.push(`${n}: not marked Unknown`);
          if (!s.observer.changes.some((c) => c.node === n && c.atMs >= kill && c.noExecute.includes('node.kubernetes.io/unreachable'))) out.push(`${n}: not tainted unreachable`);
          const left = await podsLeft(world.admin, prefix, n).catch(() => pods.get(n) ?? []);
          out.push(...left.map((p) => `${n}: pod ${p} not deleted`));
        }
        return out;
      };
      let lost = await missing();
      while (lost.length > 0 && Date.now() - kill < o.waveLimitMs) {
        await sleep(2000);
        lost = await missing();
      }
      const doneAt = Date.now();
      const killMs = kill - t0;
      waves.push({
        killedAtMs: killMs,
        nodes: dead,
        pods: [...pods.values()].flat().length,
        lost,
        doneAfterMs: lost.length === 0 ? doneAt - kill : undefined,
        faults: [],
      });
      log(`wave ${round}: ${lost.length === 0 ? `done after ${Math.round((doneAt - kill) / 1000)} s` : `${lost.length} lost`}`);
      // Back to life, so the fleet keeps its size and the untainting path runs too.
      await Promise.all(dead.map((n) => s.fleet.reviveNode(n).catch(() => undefined)));
      next += o.waveEveryMs;
    }
  })();

  try {
    await Promise.all([faultLoop, waveLoop]);
    await sampler;
    // A minute more for judgements of the last moments to show.
    await sleep(Math.min(60_000, o.warmupMs));
  } finally {
    for (const m of meters) m.stop();
  }
  for (const f of faults) f.wrongful = judgedLive(f.startMs + t0, f.endMs + t0 + 60_000);
  for (const w of waves) {
    const wEnd = w.killedAtMs + (w.doneAfterMs ?? o.waveLimitMs);
    w.faults = [...new Set(faults.filter((f) => f.startMs < wEnd && f.endMs > w.killedAtMs).map((f) => f.name))];
  }
  const wrongful = judgedLive(0, Date.now()).map((n) => `${n}: a live node was judged`);
  // Pods of nodes never killed must all be there.
  const present = await world.admin.core.listNamespacedPod({ namespace: prefix }).then((l) => new Set(l.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name ?? '')));
  for (const n of s.fleet.nodeNames()) if (!killedAt.has(n)) for (const p of s.fleet.podsOn(n)) if (!present.has(p)) wrongful.push(`pod ${p} of live node ${n} deleted`);
  const lost = waves.flatMap((w) => w.lost);
  const judged = judgedSegment(samples, o.warmupMs);
  const verdicts = countedNames(judged).map((name) => growth(judged, 0, name, (x) => counted(x, name), ALLOWANCE.find(([re]) => re.test(name))?.[1] ?? 0));
  const rssSlope = slopePerHour(judged, 0, (x) => x.rssMiB);
  const heapSlope = slopePerHour(judged, 0, (x) => x.heapUsedMiB);
  const heapTotalSlope = slopePerHour(judged, 0, (x) => x.heapTotalMiB);
  const externalSlope = slopePerHour(judged, 0, (x) => x.externalMiB);
  const failures: string[] = [];
  if (!(rssSlope < 5)) failures.push(`RSS slope ${rssSlope.toFixed(2)} MiB/h after ${o.warmupMs / 60_000} min (goal < 5)`);
  const judgedMin = judged.length > 1 ? ((judged.at(-1)?.atMs ?? 0) - (judged[0]?.atMs ?? 0)) / 60_000 : 0;
  if (judgedMin < Math.min(60, o.durationMs / 120_000)) failures.push(`no process lived long enough to judge growth (the longest: ${Math.round(judgedMin)} min after its warm-up)`);
  for (const v of verdicts) if (v.grew) failures.push(`${v.name} grew: median ${v.early} → ${v.late}`);
  failures.push(...wrongful, ...lost);
  for (const x of exits) if (x.reason !== 'leader election lost') failures.push(`the controller exited ${x.code ?? '?'} at ${Math.round(x.atMs / 1000)} s: ${x.reason}`);
  const report: SoakReport = {
    options: o,
    startedAt: new Date(t0).toISOString(),
    endedAt: new Date().toISOString(),
    fleet: { nodes: s.fleet.nodeNames().length, pods: o.zones * o.perZone * o.podsPerNode, createS },
    samples,
    faults,
    waves,
    wrongful,
    lost,
    exits,
    rssSlopeMiBPerHour: Math.round(rssSlope * 100) / 100,
    heapSlopeMiBPerHour: Math.round(heapSlope * 100) / 100,
    heapTotalSlopeMiBPerHour: Math.round(heapTotalSlope * 100) / 100,
    externalSlopeMiBPerHour: Math.round(externalSlope * 100) / 100,
    growth: verdicts,
    failures,
  };
  stopping = true;
  await replica.proc.stop(5000);
  await s.stop();
  await writeSoakReport(report, outDir);
  return report;
}

/** The report as Markdown: verdict, per-fault table, waves, growth. */
export function soakMarkdown(r: SoakReport): string {
  const hours = r.options.durationMs / 3_600_000;
  return [
    `# Soak ${r.startedAt.slice(0, 10)}: ${Math.round(hours * 100) / 100} h, ${r.fleet.nodes} nodes × ${r.options.podsPerNode} pods`,
    '',
    `Started ${r.startedAt}, ended ${r.endedAt}; fleet created in ${r.fleet.createS} s. ${r.faults.length} faults, ${r.waves.length} waves. Node flags: ${r.options.nodeArgs && r.options.nodeArgs.length > 0 ? r.options.nodeArgs.map((a) => `\`${a}\``).join(' ') : "none (Node's defaults)"}.`,
    '',
    `**Verdict: ${r.failures.length === 0 ? 'passed' : 'FAILED'}.** RSS slope after ${r.options.warmupMs / 60_000} min: ${r.rssSlopeMiBPerHour} MiB/h (goal < 5); heap used ${r.heapSlopeMiBPerHour} MiB/h${r.heapTotalSlopeMiBPerHour !== undefined ? `, heap committed ${r.heapTotalSlopeMiBPerHour} MiB/h, external ${r.externalSlopeMiBPerHour ?? '?'} MiB/h` : ''}; wrongful ${r.wrongful.length}; lost ${r.lost.length}; process exits ${r.exits.length === 0 ? 'none' : r.exits.map((x) => `${Math.round(x.atMs / 60_000)} min: ${x.reason}`).join('; ')} (a lost election is restarted, as by a Deployment; growth judged on the longest-lived process).`,
    ...r.failures.map((f) => `- ${f}`),
    '',
    '## Faults',
    '',
    faultTableMarkdown(faultTable(r.faults)),
    '',
    '## Waves',
    '',
    waveTableMarkdown(r.waves),
    '',
    '## Counted resources (first against last quarter after the warm-up)',
    '',
    growthMarkdown(r.growth),
    '',
  ].join('\n');
}

/** Writes `soak-<date>.json`, `.md` and the chart `.png` into `dir`. @returns the base path. */
export async function writeSoakReport(r: SoakReport, dir: string): Promise<string> {
  const base = join(dir, `soak-${r.startedAt.slice(0, 10)}`);
  await writeFile(`${base}.json`, JSON.stringify(r, null, 1));
  await writeFile(`${base}.md`, soakMarkdown(r));
  const minutes = (x: SoakSample): number => x.atMs / 60_000;
  const line = (pick: (x: SoakSample) => number | undefined): { x: number; y: number }[] =>
    r.samples.flatMap((x) => {
      const y = pick(x);
      return y === undefined ? [] : [{ x: minutes(x), y }];
    });
  const sockets = (x: SoakSample): number => Object.entries(x.handles).reduce((sum, [k, v]) => sum + (/Socket/.test(k) ? v : 0), 0);
  const png = renderTimeChart(`Soak ${r.startedAt.slice(0, 16)}Z: ${r.fleet.nodes} nodes x ${r.options.podsPerNode} pods`, [
    { title: 'Memory (MiB)', series: [{ label: 'RSS', color: [230, 110, 20], points: line((x) => x.rssMiB) }, { label: 'heap used', color: [31, 119, 180], points: line((x) => x.heapUsedMiB) }, { label: 'heap committed', color: [120, 170, 210], points: line((x) => x.heapTotalMiB) }, { label: 'external', color: [44, 160, 44], points: line((x) => x.externalMiB) }], markers: r.waves.map((w) => w.killedAtMs / 60_000) },
    { title: 'Handles and timers', series: [{ label: 'handles', color: [44, 160, 44], points: line((x) => Object.values(x.handles).reduce((a, b) => a + b, 0)) }, { label: 'sockets', color: [148, 103, 189], points: line(sockets) }, { label: 'controller timers', color: [214, 39, 40], points: line((x) => x.state['timers']) }], markers: r.waves.map((w) => w.killedAtMs / 60_000) },
  ], 'minutes since start (dashed: failure waves)');
  await writeFile(`${base}.png`, png);
  return base;
}

