/**
 * Start-up side by side (issue 29, section 3): kube-controller-manager 1.37.2 and one or more builds
 * of ours, started again and again on one private control plane and one fleet (the limits
 * scenario's: Leases renewed every 10 s, its pod mix), taking turns, the order rotated each round,
 * so every build sees the same API server, the same objects and the same load.
 *
 *   node --import tsx bench/startup.ts [--nodes 1000] [--pods-per-node 30] [--rounds 5]
 *     [--ours a.mjs,b.mjs] [--node-options "A;B"] [--compile-cache on|off|both] [--first-minute] [--steady S]
 *     [--cpu-profile] [--out FILE]
 *
 * Each start: spawn → the synced log line (upstream's third `"Caches are synced"`, ours'
 * `caches synced`, as bench/run.ts reads them), the process's CPU seconds (user + sys, /proc) at that
 * line and its VmHWM; with `--first-minute`, also CPU and VmHWM 60 s after the spawn (the start-up
 * writes included); with `--steady S`, also the CPU of the S seconds after that first minute, as
 * s per minute (a steady-state A/B: every build on the same fleet in the same run). Then the process
 * is stopped and the next one starts after a 5 s pause.
 *
 * `--node-options` gives ours' node options as `;`-separated variants (each space-separated; an
 * empty variant is none), default the image's: every bundle runs once per variant and round.
 * `--compile-cache` (default `on`, as the image ships it: bench/lib/harness.ts primes the bundle's V8
 * code cache and passes `NODE_COMPILE_CACHE`) with `off` runs the bundle without it and with `both`
 * runs each variant both ways.
 *
 * `--ours` takes bundles built elsewhere (e.g. `npm run build:bundle` at two commits), so a change's
 * start-up cost is measured against its parent in one run; without it, the working tree's bundle is
 * built. Never used for the limits scenario's figures, which come from bench/run.ts: this is the
 * quick A/B, with kube-controller-manager in the same run as the yardstick.
 *
 * Prints a progress line per start and a Markdown table of medians (min–max); writes every sample
 * as JSON to `--out` when given. Needs the cached binaries of `scripts/control-plane.sh install --with-kcm`.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupAll, launchSynced, sleep, startFleet, withControlPlane, type BenchContext } from './lib/harness.js';
import { benchParser, DEFAULT_CONTROLLER_FLAGS, nodeOptionsLabel, nodeOptionVariants, OURS_NODE_OPTIONS, splitNodeOptions } from './lib/options.js';
import { procUsage, UPSTREAM_CONTROLLERS, type SharedControllerFlags } from './lib/procs.js';
import { median } from './lib/report.js';
import { clearAdmissionTaints, LIMITS_POD_MIX } from './scenarios/limits.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** One start of one build. Seconds and MiB. */
export interface StartSample {
  build: string;
  round: number;
  /** spawn → synced log line, s */
  syncS: number;
  /** CPU (user + sys) at the synced line, s */
  cpuAtSyncS: number;
  /** VmHWM at the synced line, MiB */
  hwmAtSyncMiB: number;
  /** with --first-minute: CPU and VmHWM 60 s after the spawn */
  firstMinuteCpuS?: number;
  firstMinuteHwmMiB?: number;
  /** with --steady: CPU over the steady window after the first minute, s per minute */
  steadyCpuPerMin?: number;
}

/** Median and range of `xs`, as `m (lo–hi)` with `digits` decimals. Pure. */
export function summarize(xs: readonly number[], digits = 2): string {
  if (xs.length === 0) return '—';
  const r = (x: number): string => x.toFixed(digits);
  return `${r(median(xs) ?? Number.NaN)} (${r(Math.min(...xs))}–${r(Math.max(...xs))})`;
}

/** The round's order: the builds rotated by `round`, so each goes first equally often. Pure. */
export function rotation<T>(items: readonly T[], round: number): T[] {
  const k = items.length === 0 ? 0 : round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function main(): Promise<number> {
  const argv = await benchParser(process.argv.slice(2))
    .usage('Usage: bench/startup.ts [flags]\n\nStart-up of kube-controller-manager 1.37.2 and builds of ours, side by side on one fleet.')
    .options({
      nodes: { type: 'number', default: 1000 },
      'pods-per-node': { type: 'number', default: 30 },
      zones: { type: 'number', default: 3 },
      rounds: { type: 'number', default: 5, describe: 'starts of each build' },
      ours: { type: 'string', describe: "bundles of ours, comma-separated (default: the working tree's, built now)" },
      'first-minute': { type: 'boolean', default: false, describe: 'also read CPU and VmHWM 60 s after each spawn' },
      steady: { type: 'number', default: 0, describe: 'also read CPU over this many seconds after the first minute (s per minute); 0: not' },
      'node-options': { type: 'string', default: OURS_NODE_OPTIONS, describe: "ours' node options: ';'-separated variants, each space-separated (default: the image's)" },
      'compile-cache': {
        type: 'string',
        choices: ['on', 'off', 'both'] as const,
        default: 'on' as const,
        describe: "ours' bundle with the image's V8 code cache (on), without it (off), or each start both ways (an A/B)",
      },
      'cpu-profile': { type: 'boolean', default: false, describe: "write a V8 CPU profile of each start of ours (node --cpu-prof) into <work dir>/profiles; pass a tsc build's main.js to --ours for readable names" },
      'kube-api-qps': { type: 'number', default: DEFAULT_CONTROLLER_FLAGS.kubeApiQps },
      'kube-api-burst': { type: 'number', default: DEFAULT_CONTROLLER_FLAGS.kubeApiBurst },
      out: { type: 'string', describe: 'write every sample as JSON here' },
    })
    .parseAsync();
  if (argv.help === true) return 0;
  const upstreamBinary = execFileSync('bash', [join(REPO, 'scripts/control-plane.sh'), 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
  if (!existsSync(upstreamBinary)) {
    process.stderr.write(`startup: ${upstreamBinary} not found; build it with: bash scripts/control-plane.sh install --with-kcm\n`);
    return 2;
  }
  const workDir = join(tmpdir(), `nlc-startup-${process.pid}`);
  mkdirSync(workDir, { recursive: true });
  let bundles = (argv.ours ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (bundles.length === 0) {
    execFileSync('npm', ['run', '--silent', 'build:bundle'], { cwd: REPO, stdio: 'ignore' });
    const copy = join(workDir, 'node-lifecycle-controller.mjs');
    copyFileSync(join(REPO, 'dist/bundle/node-lifecycle-controller.mjs'), copy);
    bundles = [copy];
  }
  const log = (m: string): void => void process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);
  const ctx = (entry: string, nodeArgs: string[] = splitNodeOptions(OURS_NODE_OPTIONS), coldCompile = false): BenchContext => ({
    repoRoot: REPO,
    workDir,
    upstreamBinary,
    upstreamControllers: UPSTREAM_CONTROLLERS['1.37'],
    upstreamVersion: '1.37',
    oursMode: 'bundle',
    oursEntry: resolve(entry),
    cpuProfile: argv['cpu-profile'],
    oursNodeArgs: nodeArgs,
    oursColdCompile: coldCompile,
    maxSimLagMs: 2000,
    log,
  });
  const flags: SharedControllerFlags = { ...DEFAULT_CONTROLLER_FLAGS, kubeApiQps: argv['kube-api-qps'], kubeApiBurst: argv['kube-api-burst'] };
  // Build names: `upstream`, then each bundle by its file name (its directory when names repeat),
  // with its node options when there is more than one variant.
  const names = bundles.map((b) => basename(b));
  const variants = nodeOptionVariants(argv['node-options']);
  const caches = argv['compile-cache'] === 'both' ? [false, true] : [argv['compile-cache'] === 'off'];
  const builds = [
    { name: 'upstream', kind: 'upstream' as const, entry: '', nodeArgs: [] as string[], coldCompile: false },
    ...bundles.flatMap((b, i) =>
      variants.flatMap((nodeArgs) =>
        caches.map((coldCompile) => {
          const bundle = new Set(names).size === names.length ? (names[i] as string) : b;
          const options = variants.length > 1 ? ` [${nodeOptionsLabel(nodeArgs)}]` : '';
          const cache = caches.length > 1 ? (coldCompile ? ' (no code cache)' : ' (code cache)') : '';
          return { name: `${bundle}${options}${cache}`, kind: 'ours' as const, entry: b, nodeArgs, coldCompile };
        }),
      ),
    ),
  ];
  const samples: StartSample[] = [];
  const base = ctx(bundles[0] as string);
  await withControlPlane(base, async (env) => {
    const { fleet } = await startFleet(
      base,
      env,
      { prefix: 'startup', nodes: argv.nodes, zones: argv.zones, podsPerNode: argv['pods-per-node'], podMix: LIMITS_POD_MIX, tolerationSeconds: 0, statsWindowMs: 10 * 60_000 },
      15_000,
    );
    try {
      log(`  took the admission's not-ready:NoSchedule taint off ${await clearAdmissionTaints(env, fleet.nodeNames())} nodes (every start a failover's)`);
      for (let round = 0; round < argv.rounds; round++) {
        for (const b of rotation(builds, round)) {
          const c = ctx(b.entry || (bundles[0] as string), b.nodeArgs, b.coldCompile);
          const synced = await launchSynced(c, env, b.kind, flags, `r${round}-${b.name.replace(/[^\w.-]/g, '_')}`);
          const atSync = procUsage(synced.proc.pid);
          const s: StartSample = { build: b.name, round, syncS: synced.syncMs / 1000, cpuAtSyncS: atSync.cpuSeconds, hwmAtSyncMiB: atSync.hwmKiB / 1024 };
          if (argv['first-minute'] || argv.steady > 0) {
            await sleep(Math.max(0, synced.proc.startedAtMs + 60_000 - Date.now()));
            const u = procUsage(synced.proc.pid);
            s.firstMinuteCpuS = u.cpuSeconds;
            s.firstMinuteHwmMiB = u.hwmKiB / 1024;
            if (argv.steady > 0) {
              const t0 = Date.now();
              await sleep(argv.steady * 1000);
              s.steadyCpuPerMin = ((procUsage(synced.proc.pid).cpuSeconds - u.cpuSeconds) * 60_000) / (Date.now() - t0);
            }
          }
          await synced.proc.stop();
          samples.push(s);
          log(
            `  round ${round + 1} ${b.name}: synced ${s.syncS.toFixed(2)} s, CPU ${s.cpuAtSyncS.toFixed(2)} s` +
              (s.firstMinuteCpuS !== undefined ? `, first minute CPU ${s.firstMinuteCpuS.toFixed(2)} s, VmHWM ${s.firstMinuteHwmMiB?.toFixed(0)} MiB` : '') +
              (s.steadyCpuPerMin !== undefined ? `, steady CPU ${s.steadyCpuPerMin.toFixed(2)} s/min` : '') +
              `; load ${loadavg()[0]?.toFixed(2)}`,
          );
          await sleep(5_000);
        }
      }
    } finally {
      await fleet.stop();
    }
  });
  const up = samples.filter((s) => s.build === 'upstream');
  const rows: string[] = [
    '| build | spawn → synced (s) | CPU at synced (s) | VmHWM at synced (MiB) | first-minute CPU (s) | steady CPU (s/min) | sync / upstream |',
    '|---|---|---|---|---|---|---|',
  ];
  const upSync = median(up.map((s) => s.syncS)) ?? Number.NaN;
  for (const b of builds) {
    const mine = samples.filter((s) => s.build === b.name);
    const fm = mine.flatMap((s) => (s.firstMinuteCpuS !== undefined ? [s.firstMinuteCpuS] : []));
    const steady = mine.flatMap((s) => (s.steadyCpuPerMin !== undefined ? [s.steadyCpuPerMin] : []));
    rows.push(
      `| ${b.name} | ${summarize(mine.map((s) => s.syncS))} | ${summarize(mine.map((s) => s.cpuAtSyncS))} | ${summarize(mine.map((s) => s.hwmAtSyncMiB), 0)} | ${summarize(fm)} | ${summarize(steady)} | ${((median(mine.map((s) => s.syncS)) ?? Number.NaN) / upSync).toFixed(2)}× |`,
    );
  }
  log(`logs${argv['cpu-profile'] ? ' and profiles' : ''} in ${workDir}`);
  process.stdout.write(`\n${argv.nodes} nodes × ${argv['pods-per-node']} pods, ${argv.rounds} rounds, load at end ${loadavg().map((x) => x.toFixed(2)).join(' / ')}\n\n${rows.join('\n')}\n`);
  if (argv.out) writeFileSync(argv.out, `${JSON.stringify({ date: new Date().toISOString(), nodes: argv.nodes, podsPerNode: argv['pods-per-node'], builds: builds.map((b) => b.name), samples }, null, 2)}\n`);
  return 0;
}

if (process.argv[1]?.endsWith('startup.ts')) {
  main()
    .then((code) => process.exit(code))
    .catch(async (err: unknown) => {
      process.stderr.write(`startup: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      await cleanupAll();
      process.exit(1);
    });
}
