/**
 * Scale benchmark of the kubelet fleet simulator: brings up N nodes with kubelet-rate Leases,
 * lets them heartbeat for a while, and reports whether the simulator kept up — its heartbeat lag
 * (p50/p99/max), renewals done versus due, errors — plus its own CPU and RSS and the machine's
 * CPU use (the API server and etcd share the machine).
 *
 *   npx tsx bench/sim-scale.ts --nodes 1000 [--duration 60s] [--pods-per-node 0]
 *       [--lease-renew-interval 10s] [--node-status-update-frequency 5m] [--kubeconfig FILE] [--keep]
 *
 * Exit code 0 when the simulator kept up, 1 when it did not, 2 for bad flags.
 */
import { cpus } from 'node:os';
import { benchParser } from './lib/options.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { loadKubeConfig, makeClients, describeError } from '../src/kube/client.js';
import { parseGoDuration } from '../src/util/duration.js';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';

/** p99 heartbeat lag above this fraction of the renew interval counts as not keeping up. */
const MAX_P99_LAG_FRACTION = 0.1;
/** Fewer renewals than this fraction of those due counts as not keeping up. */
const MIN_RENEWAL_FRACTION = 0.95;

function machineCpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    idle += c.times.idle;
    total += c.times.idle + c.times.user + c.times.nice + c.times.sys + c.times.irq;
  }
  return { idle, total };
}

async function main(): Promise<number> {
  let argv;
  try {
    argv = await benchParser(process.argv.slice(2))
      .options({
        nodes: { type: 'number', default: 1000 },
        zones: { type: 'number', default: 4 },
        'pods-per-node': { type: 'number', default: 0 },
        duration: { type: 'string', default: '60s' },
        'lease-renew-interval': { type: 'string', default: '10s' },
        'node-status-update-frequency': { type: 'string', default: '5m' },
        'write-concurrency': { type: 'number', default: 32 },
        'heartbeat-concurrency': { type: 'number', default: 128 },
        kubeconfig: { type: 'string' },
        prefix: { type: 'string' },
        namespace: { type: 'string', default: 'nlc-bench' },
        keep: { type: 'boolean', default: false },
      })
      .parseAsync();
    // With exitProcess(false), yargs prints --help and then returns; the run must not start.
    if (argv.help === true) return 0;
  } catch (err) {
    process.stderr.write(`error: ${describeError(err).replace(/\s+/g, ' ')}\n`);
    return 2;
  }
  let durationMs: number;
  let renewMs: number;
  let statusMs: number;
  try {
    durationMs = parseGoDuration(argv.duration);
    renewMs = parseGoDuration(argv['lease-renew-interval']);
    statusMs = parseGoDuration(argv['node-status-update-frequency']);
  } catch (err) {
    process.stderr.write(`error: ${describeError(err)}\n`);
    return 2;
  }
  const zones = Math.max(1, Math.min(argv.zones, argv.nodes));
  const nodesPerZone = Math.ceil(argv.nodes / zones);
  const prefix = argv.prefix ?? `bench-${randomBytes(2).toString('hex')}`;

  let fleet: Fleet;
  try {
    fleet = new Fleet({
      clients: makeClients(loadKubeConfig(argv.kubeconfig)),
      prefix,
      namespace: argv.namespace,
      zones,
      nodesPerZone,
      podsPerNode: argv['pods-per-node'],
      leaseRenewIntervalMs: renewMs,
      nodeStatusUpdateFrequencyMs: statusMs,
      writeConcurrency: argv['write-concurrency'],
      heartbeatConcurrency: argv['heartbeat-concurrency'],
      statsWindowMs: durationMs,
    });
  } catch (err) {
    process.stderr.write(`error: ${describeError(err)}\n`);
    return 2;
  }
  const nodes = fleet.nodeNames().length;
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`bench: ${nodes} nodes (${zones} zones), ${argv['pods-per-node']} pods/node, lease renew ${argv['lease-renew-interval']}, ` +
    `status every ${argv['node-status-update-frequency']}, steady window ${argv.duration}, prefix ${prefix}`);

  const t0 = Date.now();
  try {
    await fleet.start();
  } catch (err) {
    process.stderr.write(`error: fleet did not start: ${describeError(err)}\n`);
    await fleet.cleanup().catch(() => undefined);
    return 1;
  }
  log(`bench: fleet up in ${((Date.now() - t0) / 1000).toFixed(1)} s; measuring for ${argv.duration}`);

  // Let the start-up burst drain out of the window before measuring.
  const before = fleet.stats();
  const cpu0 = process.cpuUsage();
  const machine0 = machineCpuTimes();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let maxRss = process.memoryUsage().rss;
  const steadyStart = Date.now();
  const sampler = setInterval(() => {
    maxRss = Math.max(maxRss, process.memoryUsage().rss);
    const s = fleet.stats();
    log(`bench: +${Math.round((Date.now() - steadyStart) / 1000)}s renewals ${s.leaseRenewals - before.leaseRenewals}, ` +
      `lag p99 ${Math.round(s.leaseLagMs.p99)}ms, queued ${s.queuedWrites}, errors ${s.errors - before.errors}`);
  }, 10_000);
  await new Promise((r) => setTimeout(r, durationMs));
  clearInterval(sampler);
  loop.disable();
  const elapsedMs = Date.now() - steadyStart;
  const cpu = process.cpuUsage(cpu0);
  const machine1 = machineCpuTimes();
  const after = fleet.stats();
  const mem = process.memoryUsage();
  maxRss = Math.max(maxRss, mem.rss);

  const renewals = after.leaseRenewals - before.leaseRenewals;
  const due = Math.floor((nodes * elapsedMs) / renewMs);
  const errors = after.errors - before.errors;
  const simCpuPct = ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100;
  const machineBusyPct = (1 - (machine1.idle - machine0.idle) / (machine1.total - machine0.total)) * 100;
  const lag = after.leaseLagMs;
  const keptUp = lag.p99 <= renewMs * MAX_P99_LAG_FRACTION && renewals >= due * MIN_RENEWAL_FRACTION && errors === 0;

  log(`bench: lease renewals ${renewals} of ${due} due (${((renewals / Math.max(1, due)) * 100).toFixed(1)}%), ` +
    `status posts ${after.statusPosts - before.statusPosts}, errors ${errors}, late ${after.lateHeartbeats - before.lateHeartbeats}`);
  log(`bench: heartbeat lag ms  p50 ${lag.p50.toFixed(1)}  p99 ${lag.p99.toFixed(1)}  max ${lag.max.toFixed(1)}  (${lag.samples} samples)`);
  log(`bench: write latency ms  p50 ${after.writeLatencyMs.p50.toFixed(1)}  p99 ${after.writeLatencyMs.p99.toFixed(1)}  max ${after.writeLatencyMs.max.toFixed(1)}`);
  log(`bench: event loop delay ms  p50 ${(loop.percentile(50) / 1e6).toFixed(1)}  p99 ${(loop.percentile(99) / 1e6).toFixed(1)}  max ${(loop.max / 1e6).toFixed(1)}`);
  log(`bench: sim CPU ${simCpuPct.toFixed(1)}% of one core, RSS ${(maxRss / 2 ** 20).toFixed(0)} MiB max ` +
    `(V8 heap ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB used, ${(mem.heapTotal / 2 ** 20).toFixed(0)} MiB reserved); ` +
    `machine CPU busy ${machineBusyPct.toFixed(0)}% of ${cpus().length} cores (API server + etcd + sim)`);
  log(`bench: ${keptUp ? 'KEPT UP' : 'DID NOT KEEP UP'} (criteria: p99 lag <= ${renewMs * MAX_P99_LAG_FRACTION} ms, ` +
    `renewals >= ${MIN_RENEWAL_FRACTION * 100}% of due, no errors)`);
  log(
    JSON.stringify({
      nodes,
      renewIntervalMs: renewMs,
      windowMs: elapsedMs,
      renewals,
      due,
      errors,
      lagMs: lag,
      writeLatencyMs: after.writeLatencyMs,
      simCpuPercentOfCore: Number(simCpuPct.toFixed(1)),
      rssMiB: Math.round(maxRss / 2 ** 20),
      machineBusyPercent: Math.round(machineBusyPct),
      keptUp,
    }),
  );

  if (argv.keep) await fleet.stop();
  else {
    const c0 = Date.now();
    await fleet.cleanup();
    log(`bench: fleet deleted in ${((Date.now() - c0) / 1000).toFixed(1)} s`);
  }
  return keptUp ? 0 : 1;
}

process.exitCode = await main();
