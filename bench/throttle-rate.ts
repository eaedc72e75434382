/**
 * The API write throttle's admitted rate on the real clock, with this process's event loop kept
 * busy the way a controller's is while it handles watch events: does `--kube-api-qps` 20 admit 20
 * writes a second, or fewer (issue 18 measured 17.8–18.2/s with bottleneck's heartbeat refill)?
 * No API server: each write is a no-op, so only admission is measured.
 *
 *   node --import tsx bench/throttle-rate.ts [--qps 20] [--burst 30] [--seconds 20] [--block-ms 37] [--every-ms 60]
 *
 * `--block-ms` of busy work every `--every-ms` (0: an idle loop). Prints one JSON line: writes
 * admitted after the burst window per second, and within the first 2 s (a token bucket: burst + 2 × qps).
 */
import { loadavg } from 'node:os';
import { ApiWriteThrottle } from '../src/kube/throttle.js';
import { benchParser } from './lib/options.js';

/** What one measurement found. Rates in writes per second, times in seconds. */
export interface ThrottleRate {
  qps: number;
  burst: number;
  windowS: number;
  /** writes admitted per second from 1.5 s after the start to the window's end */
  ratePerS: number;
  /** writes admitted within the first 2 s (a token bucket: burst + 2 × qps) */
  first2s: number;
  blockMs: number;
  everyMs: number;
  loadavg: number[];
}

/**
 * Schedules more writes than the window can admit and counts when each one runs.
 * @throws {RangeError} for an invalid qps/burst (see `ApiWriteThrottle`).
 */
export async function measureThrottleRate(o: { qps: number; burst: number; seconds: number; blockMs: number; everyMs: number }): Promise<ThrottleRate> {
  const throttle = new ApiWriteThrottle({ qps: o.qps, burst: o.burst });
  const t0 = Date.now();
  const times: number[] = [];
  const busy =
    o.blockMs > 0
      ? setInterval(() => {
          const until = Date.now() + o.blockMs;
          while (Date.now() < until) {
            // the controller's own work, holding the event loop
          }
        }, o.everyMs)
      : undefined;
  const count = o.burst + Math.ceil(o.qps * (o.seconds + 2)) + 10;
  const jobs = Array.from({ length: count }, () => throttle.schedule(async () => void times.push(Date.now() - t0)).catch(() => undefined));
  const settleMs = 1500;
  await new Promise((r) => setTimeout(r, o.seconds * 1000 + settleMs));
  if (busy) clearInterval(busy);
  await throttle.stop();
  await Promise.all(jobs);
  const inWindow = times.filter((x) => x > settleMs && x <= settleMs + o.seconds * 1000).length;
  return {
    qps: o.qps,
    burst: o.burst,
    windowS: o.seconds,
    ratePerS: Math.round((inWindow / o.seconds) * 100) / 100,
    first2s: times.filter((x) => x <= 2000).length,
    blockMs: o.blockMs,
    everyMs: o.everyMs,
    loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

async function main(): Promise<number> {
  let argv;
  try {
    argv = await benchParser(process.argv.slice(2))
      .usage('Usage: bench/throttle-rate.ts [flags]\n\nThe API write throttle\'s admitted rate on the real clock under a busy event loop.')
      .options({
        qps: { type: 'number', default: 20 },
        burst: { type: 'number', default: 30 },
        seconds: { type: 'number', default: 20, describe: 'measurement window after the burst' },
        'block-ms': { type: 'number', default: 37, describe: 'busy work per block, ms (0: idle loop)' },
        'every-ms': { type: 'number', default: 60, describe: 'one block every this many ms' },
      })
      .parseAsync();
    if (argv.help === true) return 0;
  } catch (err) {
    process.stderr.write(`throttle-rate: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const r = await measureThrottleRate({ qps: argv.qps, burst: argv.burst, seconds: argv.seconds, blockMs: argv['block-ms'], everyMs: argv['every-ms'] });
  process.stdout.write(`${JSON.stringify(r)}\n`);
  return 0;
}

if (process.argv[1]?.endsWith('throttle-rate.ts')) process.exitCode = await main();
