/**
 * CPU per API write in this process, layer by layer, against one private control plane (issue 29:
 * the first minute's `RegisteredNode` Event POSTs looked like ~5 ms of CPU each). Each variant
 * writes `--writes` Events (distinct names, as `RegisteredNode` for distinct nodes) and reports this
 * process's CPU (user + system, `process.cpuUsage`) per write:
 *
 * - `fetch`: undici `fetch` POSTing the JSON body with the dispatcher and headers client-node would
 *   use (the floor: TLS, HTTP, JSON);
 * - `typed`: client-node's `CoreV1Api.createNamespacedEvent` as `makeClients` builds it (undici's
 *   `request` underneath, timeout and request metrics included, into a real prom-client registry
 *   from `createMetrics`);
 * - `client-node`: the same call on `KubeConfig.makeApiClient(CoreV1Api)`, client-node's own fetch
 *   library with nothing of ours (what `typed` replaced);
 * - `throttled`: the same through `ApiWriteThrottle` with `--qps`/`--burst` (default 20/30, the
 *   controller's default) and the controller's in-flight cap;
 * - `throttled-client-node`: `client-node`'s call through the same throttle (the paced write as it
 *   was before the typed clients sent through undici's `request`);
 * - `recorder`: `EventRecorder.record` (the controller's Event path: spam filter, LRU, body,
 *   throttle, typed client);
 * - `throttle-noop`: the throttle with a write that does nothing (its own cost);
 * - `idle`: no write at all, for as long as the throttle takes to admit `--writes` at `--qps` after
 *   its `--burst` (this process's own background CPU over that time, e.g. reading the control
 *   plane's logs): subtract it from the paced variants (`throttled`, `recorder`, `throttle-noop`).
 *
 *   node --import tsx bench/write-cost.ts [--writes 500] [--rounds 3] [--qps 20] [--burst 30] [--concurrency 16] [--event-batch 1] [--cpu-profile DIR]
 *
 * `--event-batch N` is the throttle's `eventBatch` (src/kube/throttle.ts): Events paced N at a time.
 *
 * Variants alternate per round so all see the same load. `--cpu-profile DIR` writes one V8 CPU
 * profile per variant (first round only) for bench/profile-summary.ts. Prints one JSON line per
 * variant and round, then a summary line (median, min–max of CPU µs per write). Wall time includes
 * the throttle's waits, so CPU, not wall time, is the figure.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fetch } from 'undici';
import { CoreV1Api, HttpMethod } from '@kubernetes/client-node';
import { makeClients, prepareRequest } from '../src/kube/client.js';
import { EventRecorder } from '../src/kube/events.js';
import { ApiWriteThrottle } from '../src/kube/throttle.js';
import { WRITES_IN_FLIGHT_PER_CONTROLLER } from '../src/cli/run.js';
import { createMetrics } from '../src/metrics/registry.js';
import { realClock } from '../src/util/clock.js';
import { silentLogger } from '../src/log/logger.js';
import { cleanupAll, controlPlaneOnlyContext, withControlPlane, type RunEnv } from './lib/harness.js';
import { benchParser } from './lib/options.js';
import { median } from './lib/report.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NAMESPACE = 'default';

/** The variants, in the order of the first round. */
export const VARIANTS = ['fetch', 'typed', 'client-node', 'throttled', 'throttled-client-node', 'recorder', 'throttle-noop', 'idle'] as const;
export type Variant = (typeof VARIANTS)[number];

/** One measured variant run. CPU in microseconds per write; wall in milliseconds. */
export interface WriteCost {
  variant: Variant;
  round: number;
  writes: number;
  cpuUsPerWrite: number;
  wallMs: number;
  loadavg: number[];
}

/** The Event body `EventRecorder` writes for `RegisteredNode` (src/kube/events.ts `#body`). */
function eventBody(name: string, now: Date) {
  return {
    metadata: { name, namespace: NAMESPACE },
    involvedObject: { kind: 'Node', apiVersion: 'v1', name: name.split('.')[0] ?? name },
    reason: 'RegisteredNode',
    message: `Node ${name} event: Registered Node ${name} in Controller`,
    type: 'Normal',
    source: { component: 'node-controller' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    reportingComponent: 'node-controller',
    reportingInstance: '',
  };
}

/** Runs `n` tasks with at most `concurrency` at once; rejects on the first failure. */
async function runPool(n: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}

/**
 * How long the token bucket takes to admit `writes` after its full burst, **milliseconds**:
 * `(writes - burst) / qps` seconds (0 when the burst covers them all).
 */
export function pacedWallMs(o: { writes: number; qps: number; burst: number }): number {
  return (Math.max(0, o.writes - o.burst) / o.qps) * 1000;
}

/** Headers and dispatcher of one request as client-node builds them (auth, TLS), for the `fetch` floor. */
async function fetchSetup(env: RunEnv): Promise<{ url: string; init: { headers: Record<string, string>; dispatcher?: unknown } }> {
  const req = await prepareRequest(env.kc, HttpMethod.POST, `/api/v1/namespaces/${NAMESPACE}/events`, {}, { 'content-type': 'application/json', accept: 'application/json' });
  return { url: req.url.toString(), init: { headers: req.headers, ...(req.dispatcher ? { dispatcher: req.dispatcher } : {}) } };
}

/**
 * Measures one variant: `writes` Event creations (or no-op writes), CPU per write.
 * @throws {Error} when a write fails (any status but 201 for `fetch`; a client-node error otherwise).
 */
export async function measureVariant(env: RunEnv, variant: Variant, o: { writes: number; round: number; qps: number; burst: number; concurrency: number; eventBatch?: number; profileDir?: string }): Promise<WriteCost> {
  const metrics = createMetrics();
  const clients = makeClients(env.kc, {}, metrics.restClient.sink);
  const throttle = new ApiWriteThrottle({ qps: o.qps, burst: o.burst, maxInFlight: WRITES_IN_FLIGHT_PER_CONTROLLER, clock: realClock, eventBatch: o.eventBatch ?? 1 });
  const prefix = `wc-${variant}-${o.round}-${Date.now().toString(36)}`;
  const fs = variant === 'fetch' ? await fetchSetup(env) : undefined;
  const plainCore = env.kc.makeApiClient(CoreV1Api);
  // One write outside the measurement: connection set-up and first-call compilation are not per-write costs.
  await clients.core.createNamespacedEvent({ namespace: NAMESPACE, body: eventBody(`${prefix}-warm.0`, new Date()) });
  const session = o.profileDir ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  // The real clock's timers are unref'd (src/util/clock.ts): while the throttle sleeps for a token
  // nothing else would keep this process's event loop alive.
  const keepAlive = setInterval(() => undefined, 1000);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const one = async (i: number): Promise<unknown> => {
    const name = `${prefix}-n${i}.1`;
    switch (variant) {
      case 'fetch': {
        if (!fs) throw new Error('no fetch set-up');
        const res = await fetch(fs.url, { method: 'POST', body: JSON.stringify(eventBody(name, new Date())), ...fs.init } as Parameters<typeof fetch>[1]);
        const text = await res.text();
        if (res.status !== 201) throw new Error(`POST ${res.status}: ${text.slice(0, 200)}`);
        return JSON.parse(text);
      }
      case 'typed':
        return clients.core.createNamespacedEvent({ namespace: NAMESPACE, body: eventBody(name, new Date()) });
      case 'client-node':
        return plainCore.createNamespacedEvent({ namespace: NAMESPACE, body: eventBody(name, new Date()) });
      case 'throttled':
        return throttle.schedule(() => clients.core.createNamespacedEvent({ namespace: NAMESPACE, body: eventBody(name, new Date()) }), 'event');
      case 'throttled-client-node':
        return throttle.schedule(() => plainCore.createNamespacedEvent({ namespace: NAMESPACE, body: eventBody(name, new Date()) }), 'event');
      case 'throttle-noop':
        return throttle.schedule(async () => undefined, 'event');
      case 'recorder':
      case 'idle':
        throw new Error(`${variant} is measured as a whole`);
    }
  };
  if (variant === 'idle') {
    await new Promise((r) => setTimeout(r, pacedWallMs(o)));
  } else if (variant === 'recorder') {
    const recorder = new EventRecorder({ clients, throttle, component: 'node-controller', clock: realClock, log: silentLogger });
    for (let i = 0; i < o.writes; i++) recorder.record({ kind: 'Node', apiVersion: 'v1', name: `${prefix}-n${i}` }, 'Normal', 'RegisteredNode', `Node ${prefix}-n${i} event: Registered Node ${prefix}-n${i} in Controller`);
    await recorder.flush();
    const c = recorder.recorded();
    if (c.created !== o.writes) throw new Error(`recorder created ${c.created} of ${o.writes} Events (failed ${c.failed}, dropped ${c.dropped})`);
  } else {
    // The throttled variants are fire-and-forget like the controller's writers: queue them all, then wait.
    const concurrency = variant === 'throttled' || variant === 'throttled-client-node' || variant === 'throttle-noop' ? o.writes : o.concurrency;
    await runPool(o.writes, concurrency, one);
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(keepAlive);
  if (session && o.profileDir) {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(o.profileDir, { recursive: true });
    writeFileSync(join(o.profileDir, `write-cost-${variant}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
  await throttle.stop();
  return {
    variant,
    round: o.round,
    writes: o.writes,
    cpuUsPerWrite: Math.round((cpu.user + cpu.system) / o.writes),
    wallMs: Math.round(wallMs),
    loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

async function main(): Promise<number> {
  let argv;
  try {
    argv = await benchParser(process.argv.slice(2))
      .usage('Usage: bench/write-cost.ts [flags]\n\nCPU per API write, layer by layer (fetch, typed client, throttle, Event recorder), on one private control plane.')
      .options({
        writes: { type: 'number', default: 500, describe: 'writes per variant and round' },
        rounds: { type: 'number', default: 3, describe: 'rounds, variants alternating' },
        qps: { type: 'number', default: 20, describe: 'the throttle\'s --kube-api-qps' },
        burst: { type: 'number', default: 30, describe: 'the throttle\'s --kube-api-burst' },
        concurrency: { type: 'number', default: WRITES_IN_FLIGHT_PER_CONTROLLER, describe: 'writes in flight for fetch and typed' },
        'event-batch': { type: 'number', default: 1, describe: 'the throttle\'s eventBatch: paced Events started this many at a time' },
        'cpu-profile': { type: 'string', describe: 'write a CPU profile per variant (first round) into this directory' },
      })
      .check((a) => {
        for (const k of ['writes', 'rounds', 'concurrency', 'event-batch'] as const) if (!Number.isInteger(a[k]) || a[k] < 1) throw new Error(`--${k} must be a positive integer`);
        return true;
      })
      .parseAsync();
    if (argv.help === true) return 0;
  } catch (err) {
    process.stderr.write(`write-cost: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const ctx = controlPlaneOnlyContext(REPO, 'write-cost');
  process.once('SIGINT', () => void cleanupAll().finally(() => process.exit(130)));
  const out = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
  await withControlPlane(ctx, async (env) => {
    for (let round = 1; round <= argv.rounds; round++) {
      for (const variant of round % 2 === 1 ? VARIANTS : [...VARIANTS].reverse()) {
        const profileDir = round === 1 ? argv['cpu-profile'] : undefined;
        const r = await measureVariant(env, variant, { writes: argv.writes, round, qps: argv.qps, burst: argv.burst, concurrency: argv.concurrency, eventBatch: argv['event-batch'], ...(profileDir ? { profileDir } : {}) });
        out.get(variant)?.push(r.cpuUsPerWrite);
        process.stdout.write(`${JSON.stringify(r)}\n`);
      }
    }
  });
  const summary = (v: number[]): string => `median ${median(v)} µs (${Math.min(...v)}–${Math.max(...v)})`;
  process.stdout.write(`${JSON.stringify({ cpuPerWrite: Object.fromEntries([...out].map(([k, v]) => [k, summary(v)])), loadavg: loadavg().map((x) => Math.round(x * 100) / 100) })}\n`);
  return 0;
}

if (process.argv[1]?.endsWith('write-cost.ts')) process.exitCode = await main();
