/**
 * `npm run bench`: our controller side by side with upstream kube-controller-manager (1.37.2 by default,
 * 1.20.2 with `--upstream-version 1.20`), each run on a fresh private control plane of the same
 * Kubernetes version and a freshly created simulated fleet.
 *
 *   node --import tsx bench/run.ts [--scenario steady,failure,eviction,scale,failure-qps | limits] [--nodes 1000]
 *       [--pods-per-node 30] [--evict-nodes 100] [--scale-nodes 5000] [--repeat 1] [--quick] …
 *
 * Writes bench/results/latest.json, latest.md and latency.png (see --help for every flag).
 * Exit code 0 when every scenario ran (targets are reported, not enforced), 1 when one failed,
 * 2 for bad flags.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PodMix } from '@node-lifecycle-controller/sim/fleet';
import { parseGoDuration } from '../src/util/duration.js';
import { renderCdfChart, OURS_COLOR, UPSTREAM_COLOR } from './lib/chart.js';
import { cleanupAll, type BenchContext } from './lib/harness.js';
import { UPSTREAM_CONTROLLERS, UPSTREAM_FULL_VERSION, type ControllerKind, type SharedControllerFlags } from './lib/procs.js';
import { evaluateTargets, ONE_DELETE_GATE, renderMarkdown, upstreamVersionOf, type BenchResults } from './lib/report.js';
import { runEviction } from './scenarios/eviction.js';
import { runFailure } from './scenarios/failure.js';
import { runScale } from './scenarios/scale.js';
import { runSteady } from './scenarios/steady.js';
import { benchParser, DEFAULT_CONTROLLER_FLAGS, DEFAULT_SCENARIOS, OURS_NODE_OPTIONS, orderOf, parsePodMix, parseScaleSizes, parseScenarios, SCENARIOS, splitNodeOptions, type Scenario } from './lib/options.js';
import { runLimits } from './scenarios/limits.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Builds ours into a private temp directory: `bundle` runs the image's `npm run build:bundle` and
 * copies the one file; `dist` compiles with tsc (tsconfig.build.json) beside a node_modules link.
 * @param mode the layout (`tsx` needs no build)
 * @param log progress lines
 * @returns the entry script's absolute path.
 * @throws {Error} when the build fails (bundle) or produces no entry (dist).
 */
async function buildOurs(mode: 'bundle' | 'dist', log: (m: string) => void): Promise<string> {
  const dir = join(tmpdir(), `nlc-bench-build-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  if (mode === 'bundle') {
    // The image's build step (package.json build:bundle, run by the Dockerfile), then a private copy,
    // so that a rebuild in the working tree during a long run cannot change what runs.
    const t0 = Date.now();
    const err = await new Promise<string | undefined>((res) =>
      execFile('npm', ['run', '--silent', 'build:bundle'], { cwd: REPO }, (e, _stdout, stderr) => res(e ? String(stderr).split('\n').slice(0, 5).join('\n') : undefined)),
    );
    if (err !== undefined) throw new Error(`npm run build:bundle failed: ${err}`);
    const entry = join(dir, 'node-lifecycle-controller.mjs');
    copyFileSync(join(REPO, 'dist/bundle/node-lifecycle-controller.mjs'), entry);
    log(`built ours' bundle (as the image) in ${((Date.now() - t0) / 1000).toFixed(0)} s → ${entry}`);
    return entry;
  }
  // The compiled files resolve packages through this link and are ESM through this package.json.
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  const t0 = Date.now();
  const err = await new Promise<string | undefined>((res) =>
    execFile(join(REPO, 'node_modules/.bin/tsc'), ['-p', join(REPO, 'tsconfig.build.json'), '--outDir', join(dir, 'out')], { cwd: REPO }, (e, stdout) =>
      res(e ? String(stdout).split('\n').slice(0, 5).join('\n') : undefined),
    ),
  );
  const entry = join(dir, 'out/src/cli/main.js');
  if (!existsSync(entry)) throw new Error(`tsc did not produce ${entry}: ${err ?? ''}`);
  if (err) log(`warning: tsc reported errors (compiled output used anyway):\n${err}`);
  log(`built ours with tsc in ${((Date.now() - t0) / 1000).toFixed(0)} s → ${entry}`);
  return entry;
}

/**
 * Writes `latest.md` and `latency.png` for `results` into `outDir` (targets are recomputed).
 * @throws {Error} when the files cannot be written.
 */
function render(results: BenchResults, outDir: string, flags: SharedControllerFlags): void {
  results.targets = evaluateTargets(results, parseGoDuration(flags.nodeMonitorGracePeriod) / 1000);
  writeFileSync(join(outDir, 'latest.md'), renderMarkdown(results));
  if (results.failure) {
    const samples = (k: ControllerKind, f: 'detectionS' | 'taintS'): number[] => (results.failure?.[k] ?? []).filter((r) => !r.sim.flagged).flatMap((r) => r.samples[f]);
    const graceS = parseGoDuration(flags.nodeMonitorGracePeriod) / 1000;
    const png = renderCdfChart(
      'Failure wave: detection and taint latency',
      [
        {
          title: 'Detection: heartbeat -> Ready=Unknown (CDF)',
          xLabel: 'seconds',
          series: [
            { label: `upstream ${upstreamVersionOf(results).replace(/^v/, '')}`, color: UPSTREAM_COLOR, values: samples('upstream', 'detectionS') },
            { label: 'ours', color: OURS_COLOR, values: samples('ours', 'detectionS') },
          ],
          markers: [{ x: graceS + 1, label: 'grace+1s' }],
        },
        {
          title: 'Taint: Unknown -> NoExecute taint (CDF)',
          xLabel: 'seconds',
          series: [
            { label: `upstream ${upstreamVersionOf(results).replace(/^v/, '')}`, color: UPSTREAM_COLOR, values: samples('upstream', 'taintS') },
            { label: 'ours', color: OURS_COLOR, values: samples('ours', 'taintS') },
          ],
          markers: [{ x: 0.5, label: '0.5s' }],
        },
      ],
      `grace ${flags.nodeMonitorGracePeriod}, monitor period ${flags.nodeMonitorPeriod}, ${results.failure.upstream[0]?.failedNodes ?? results.failure.ours[0]?.failedNodes ?? '?'} failed nodes per run`,
    );
    writeFileSync(join(outDir, 'latency.png'), png);
  }
}

async function main(): Promise<number> {
  let argv;
  try {
    argv = await benchParser(process.argv.slice(2))
      .usage('Usage: bench/run.ts [flags]\n\nOurs vs upstream kube-controller-manager (1.37.2 by default, 1.20.2 with --upstream-version 1.20) on private control planes of the same Kubernetes version.')
      .options({
        scenario: {
          type: 'string',
          default: DEFAULT_SCENARIOS.join(','),
          describe: 'comma-separated: steady, failure, eviction, scale, failure-qps, limits (or 1–6; failure-qps is the failure wave at --kube-api-qps/--kube-api-burst; limits, never by default, is issue 29\'s 5,000 × 30 on one shared fleet)',
        },
        quick: { type: 'boolean', default: false, describe: 'small sizes and short windows (a few minutes); explicit size flags still win' },
        nodes: { type: 'number', describe: 'nodes in scenarios 1 and 2 (default 1000; --quick 100)' },
        'pods-per-node': { type: 'number', default: 30, describe: 'pods per node in every scenario' },
        zones: { type: 'number', default: 3 },
        'evict-nodes': { type: 'number', describe: 'tainted nodes in scenario 3 (default 100; --quick 20)' },
        'scale-nodes': { type: 'string', describe: 'fleet sizes for scenario 4, comma-separated: N (× --scale-pods-per-node) or NxP (default 5000; --quick 300)' },
        'scale-pods-per-node': { type: 'number', describe: 'pods per node in scenario 4 (default --pods-per-node)' },
        'limits-nodes': { type: 'number', describe: 'nodes of the limits scenario (default 5000; --quick 100), × --pods-per-node' },
        'limits-evict-pods': { type: 'number', default: 300, describe: "the limits scenario's mass eviction, pods (whole nodes)" },
        repeat: { type: 'number', default: 1, describe: 'runs per controller and scenario, alternating which goes first' },
        only: { choices: ['upstream', 'ours'] as const, describe: 'run one controller only (for example to profile ours); no ratios then' },
        window: { type: 'string', describe: 'steady-state measurement window (default 60s; --quick 20s)' },
        baseline: { type: 'string', describe: 'no-controller baseline window (default 30s; --quick 10s)' },
        warmup: { type: 'string', default: '10s', describe: 'wait after caches synced before measuring or injecting faults' },
        'pod-mix': { type: 'string', default: 'plain=1,tolerationSeconds=1,tolerateForever=1,daemonSet=1', describe: 'scenario 1 pod mix (kind=weight,…; add pvc=1 for volumes)' },
        'node-monitor-period': { type: 'string', default: DEFAULT_CONTROLLER_FLAGS.nodeMonitorPeriod },
        'node-monitor-grace-period': { type: 'string', default: DEFAULT_CONTROLLER_FLAGS.nodeMonitorGracePeriod },
        'node-startup-grace-period': { type: 'string', default: DEFAULT_CONTROLLER_FLAGS.nodeStartupGracePeriod },
        'node-eviction-rate': { type: 'number', default: DEFAULT_CONTROLLER_FLAGS.nodeEvictionRate },
        'secondary-node-eviction-rate': { type: 'number', default: DEFAULT_CONTROLLER_FLAGS.secondaryNodeEvictionRate },
        'kube-api-qps': { type: 'number', default: DEFAULT_CONTROLLER_FLAGS.kubeApiQps, describe: 'both controllers, scenarios 1, 3, 4 and 5 (kube-controller-manager default)' },
        'kube-api-burst': { type: 'number', default: DEFAULT_CONTROLLER_FLAGS.kubeApiBurst },
        'failure-kube-api-qps': { type: 'number', default: 100, describe: 'both controllers in scenario 2 (high, so API throttling does not dominate)' },
        'failure-kube-api-burst': { type: 'number', default: 200 },
        'realistic-etcd': { type: 'boolean', default: false, describe: "etcd fsyncs its WAL as in production (NLC_ETCD_FSYNC=1) instead of the default --unsafe-no-fsync; most telling with --scenario failure" },
        'max-sim-lag': { type: 'string', default: '2s', describe: 'simulator lease lag p99 above this flags a run' },
        ours: {
          choices: ['bundle', 'dist', 'tsx'] as const,
          default: 'bundle' as const,
          describe: "ours' code as the image ships it (esbuild bundle), compiled by tsc against node_modules (readable --cpu-profile), or through tsx",
        },
        'ours-node-options': { type: 'string', default: OURS_NODE_OPTIONS, describe: 'node options for ours, space-separated (default: the image ENTRYPOINT\'s; "" for none)' },
        'cpu-profile': { type: 'boolean', default: false, describe: 'write a V8 CPU profile of ours (node --cpu-prof) per run into the work dir' },
        'upstream-version': {
          choices: ['1.37', '1.20'] as const,
          default: (process.env['NLC_K8S_VERSION'] === '1.20' ? '1.20' : '1.37') as '1.37' | '1.20',
          describe: 'the peer: kube-controller-manager of this version, on a control plane of the same version (default $NLC_K8S_VERSION, else 1.37)',
        },
        'upstream-binary': { type: 'string', describe: "kube-controller-manager binary (default: the lane's cached build, `control-plane.sh bin kube-controller-manager`)" },
        'upstream-controllers': { type: 'string', describe: `upstream's --controllers (default for 1.37: ${UPSTREAM_CONTROLLERS['1.37']}; for 1.20: ${UPSTREAM_CONTROLLERS['1.20']})` },
        out: { type: 'string', default: join(REPO, 'bench/results'), describe: 'results directory' },
        'render-only': { type: 'boolean', default: false, describe: 'only re-render latest.md and latency.png from an existing latest.json' },
        'eviction-one-delete': {
          type: 'boolean',
          describe: `scenario 3: also run ours with ${'--feature-gates=PodDisruptionConditions=false'} (one DELETE per pod, as kube-controller-manager 1.20–1.25; default: only with --upstream-version 1.20)`,
        },
        merge: { type: 'boolean', default: false, describe: 'keep the other scenarios of an existing latest.json (replace only those run now)' },
      })
      .parseAsync();
    // With exitProcess(false), yargs prints --help and then returns; the run must not start.
    if (argv.help === true) return 0;
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const q = argv.quick;
  let scenarios: Scenario[];
  let podMix: PodMix;
  let windowMs: number;
  let baselineMs: number;
  let warmupMs: number;
  let maxSimLagMs: number;
  let scaleSizes: { nodes: number; podsPerNode: number | undefined }[];
  try {
    scenarios = parseScenarios(argv.scenario);
    podMix = parsePodMix(argv['pod-mix']);
    windowMs = parseGoDuration(argv.window ?? (q ? '20s' : '60s'));
    baselineMs = parseGoDuration(argv.baseline ?? (q ? '10s' : '30s'));
    warmupMs = parseGoDuration(argv.warmup);
    maxSimLagMs = parseGoDuration(argv['max-sim-lag']);
    parseGoDuration(argv['node-monitor-grace-period']);
    scaleSizes = parseScaleSizes(argv['scale-nodes'] ?? (q ? '300' : '5000'));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  if (argv['render-only']) {
    const file = join(argv.out, 'latest.json');
    const old = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
    const flags = old.options['flags'] as SharedControllerFlags | undefined;
    if (!flags) throw new Error(`${file} has no options.flags`);
    render(old, argv.out, flags);
    writeFileSync(file, `${JSON.stringify(old, null, 2)}\n`);
    return 0;
  }
  const nodes = argv.nodes ?? (q ? 100 : 1000);
  const evictNodes = argv['evict-nodes'] ?? (q ? 20 : 100);
  const limitsNodes = argv['limits-nodes'] ?? (q ? 100 : 5000);
  const ppn = argv['pods-per-node'];
  const upstreamVersion = argv['upstream-version'];
  // Every private control plane of this run (scripts/control-plane.sh) is of the peer's version.
  process.env['NLC_K8S_VERSION'] = upstreamVersion;
  // Production etcd never runs with --unsafe-no-fsync; with fsync on, every watcher sees a Lease
  // renewal later, and detection from the heartbeat seen is judged under that lag (issue 29).
  process.env['NLC_ETCD_FSYNC'] = argv['realistic-etcd'] ? '1' : '0';
  const upstreamBinary =
    argv['upstream-binary'] ?? execFileSync('bash', [join(REPO, 'scripts/control-plane.sh'), 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
  const upstreamControllers = argv['upstream-controllers'] ?? UPSTREAM_CONTROLLERS[upstreamVersion];
  const evictionOneDelete = argv['eviction-one-delete'] ?? upstreamVersion === '1.20';
  if (!existsSync(upstreamBinary) && scenarios.some((s) => s !== 'scale')) {
    process.stderr.write(`bench: ${upstreamBinary} not found; build it with: NLC_K8S_VERSION=${upstreamVersion} bash scripts/control-plane.sh install --with-kcm\n`);
    return 2;
  }

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      process.stderr.write(`bench: ${sig}: stopping controllers and private control planes\n`);
      void cleanupAll().finally(() => {
        rmSync(join(tmpdir(), `nlc-bench-build-${process.pid}`), { recursive: true, force: true });
        process.exit(130);
      });
    });
  }
  const started = Date.now();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const workDir = join(argv.out, 'runs', stamp);
  mkdirSync(workDir, { recursive: true });
  const log = (m: string): void => {
    process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);
  };
  const oursEntry = argv.ours === 'tsx' ? join(REPO, 'src/cli/main.ts') : await buildOurs(argv.ours, log);
  if (argv['cpu-profile'] && argv.ours === 'bundle') log("note: ours' bundle is minified; --ours dist gives a CPU profile with readable names");
  const ctx: BenchContext = {
    repoRoot: REPO,
    workDir,
    upstreamBinary,
    upstreamControllers,
    upstreamVersion,
    oursMode: argv.ours,
    oursEntry,
    cpuProfile: argv['cpu-profile'],
    oursNodeArgs: splitNodeOptions(argv['ours-node-options']),
    maxSimLagMs,
    log,
  };
  const base: SharedControllerFlags = {
    nodeMonitorPeriod: argv['node-monitor-period'],
    nodeMonitorGracePeriod: argv['node-monitor-grace-period'],
    nodeStartupGracePeriod: argv['node-startup-grace-period'],
    nodeEvictionRate: argv['node-eviction-rate'],
    secondaryNodeEvictionRate: argv['secondary-node-eviction-rate'],
    kubeApiQps: argv['kube-api-qps'],
    kubeApiBurst: argv['kube-api-burst'],
  };
  const results: BenchResults = {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model ?? 'unknown',
      memGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadavgStart: loadavg().map((x) => Math.round(x * 100) / 100),
      loadavgEnd: [],
    },
    command: `node --import tsx bench/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
    durationS: 0,
    options: { scenarios, only: argv.only, cpuProfile: argv['cpu-profile'], oursNodeOptions: argv['ours-node-options'], nodes, podsPerNode: ppn, evictNodes, scaleSizes, limitsNodes, limitsEvictPods: argv['limits-evict-pods'], repeat: argv.repeat, windowMs, baselineMs, warmupMs, podMix, flags: base, failureQps: argv['failure-kube-api-qps'], etcdFsync: argv['realistic-etcd'], ours: argv.ours, upstreamControllers, upstreamVersion: UPSTREAM_FULL_VERSION[upstreamVersion] },
    errors: [],
  };
  if (argv.merge && existsSync(join(argv.out, 'latest.json'))) {
    const old = JSON.parse(readFileSync(join(argv.out, 'latest.json'), 'utf8')) as BenchResults;
    const resultKey = (s: Scenario): 'steady' | 'failure' | 'eviction' | 'scale' | 'failureQps' | 'limits' => (s === 'failure-qps' ? 'failureQps' : s);
    for (const s of SCENARIOS) if (!scenarios.includes(s) && old[resultKey(s)]) Object.assign(results, { [resultKey(s)]: old[resultKey(s)] });
    results.mergedFrom = [...(old.mergedFrom ?? []), { date: old.date, command: old.command, durationS: old.durationS }];
    results.errors.push(...old.errors);
    results.options = { ...old.options, [`merged ${results.date}`]: results.options };
  }
  const write = (): void => {
    results.durationS = Math.round((Date.now() - started) / 1000);
    results.machine.loadavgEnd = loadavg().map((x) => Math.round(x * 100) / 100);
    results.targets = evaluateTargets(results, parseGoDuration(base.nodeMonitorGracePeriod) / 1000);
    mkdirSync(argv.out, { recursive: true });
    writeFileSync(join(argv.out, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
    render(results, argv.out, base);
  };

  let failed = false;
  const attempt = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (err) {
      failed = true;
      const msg = `${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      results.errors.push(msg);
      log(`ERROR ${msg}`);
      return undefined;
    }
  };

  for (const scenario of scenarios) {
    log(`=== scenario ${scenario}`);
    if (scenario === 'limits') {
      // One control plane and one fleet for every run: the scenario repeats and alternates itself.
      const r = await attempt('limits', () =>
        runLimits(
          ctx,
          {
            nodes: limitsNodes,
            podsPerNode: ppn,
            zones: argv.zones,
            repeat: argv.repeat,
            ...(argv.only ? { only: argv.only } : {}),
            windowMs,
            baselineMs,
            warmupMs,
            flags: base,
            fastQps: { kubeApiQps: argv['failure-kube-api-qps'], kubeApiBurst: argv['failure-kube-api-burst'] },
            massEvictionPods: argv['limits-evict-pods'],
          },
          (partial) => {
            results.limits = partial;
            write();
          },
        ),
      );
      if (r) results.limits = r;
      write();
      continue;
    }
    for (let i = 0; i < (scenario === 'scale' ? 1 : argv.repeat); i++) {
      if (scenario === 'scale') {
        results.scale = [];
        for (const size of scaleSizes) {
          const n = size.nodes;
          const p = size.podsPerNode ?? argv['scale-pods-per-node'] ?? ppn;
          log(`--- scale: ours at ${n} nodes × ${p} pods`);
          const r = await attempt(`scale ${n}x${p}`, () =>
            runScale(ctx, { nodes: n, podsPerNode: p, zones: argv.zones, podMix: { plain: 1 }, warmupMs: Math.max(warmupMs, 15_000), windowMs, flags: base }, `s4n${n}`),
          );
          if (r) results.scale.push(r);
          write();
        }
        continue;
      }
      for (const kind of orderOf(i).filter((k) => argv.only === undefined || k === argv.only)) {
        log(`--- ${scenario} #${i + 1}: ${kind}`);
        const tag = `${scenario === 'failure-qps' ? 'fq' : scenario.slice(0, 2)}${i + 1}`;
        if (scenario === 'steady') {
          const r = await attempt(`steady ${kind} #${i + 1}`, () =>
            runSteady(ctx, kind, { nodes, podsPerNode: ppn, zones: argv.zones, podMix, windowMs, baselineMs, warmupMs, flags: base }, tag),
          );
          results.steady ??= { upstream: [], ours: [] };
          if (r) results.steady[kind].push(r);
        } else if (scenario === 'failure' || scenario === 'failure-qps') {
          // Scenario 5 is the same wave at the default API QPS: node status and taint writes must go first while pod writes queue.
          const qpsFlags = scenario === 'failure' ? { kubeApiQps: argv['failure-kube-api-qps'], kubeApiBurst: argv['failure-kube-api-burst'] } : {};
          const r = await attempt(`${scenario} ${kind} #${i + 1}`, () =>
            runFailure(
                ctx,
                kind,
                {
                  nodes,
                  podsPerNode: ppn,
                  zones: argv.zones,
                  // 80 % of the pods have no usable toleration (tolerationSeconds 0: evict at once); the rest tolerate forever.
                  podMix: { tolerationSeconds: 8, tolerateForever: 1, daemonSet: 1 },
                  tolerationSeconds: 0,
                  evictedKinds: ['tolerationSeconds'],
                  failFraction: 0.1,
                  secondWave: scenario === 'failure-qps',
                  baselineMs,
                  warmupMs,
                  flags: { ...base, ...qpsFlags },
                },
                tag,
              ),
          );
          const key = scenario === 'failure' ? 'failure' : 'failureQps';
          results[key] ??= { upstream: [], ours: [] };
          if (r) results[key][kind].push(r);
        } else {
          const evictionOptions = { nodes: evictNodes, podsPerNode: ppn, zones: 1, podMix: { plain: 1 }, baselineMs: Math.min(baselineMs, 20_000), warmupMs, flags: base };
          const r = await attempt(`eviction ${kind} #${i + 1}`, () => runEviction(ctx, kind, evictionOptions, tag));
          results.eviction ??= { upstream: [], ours: [] };
          if (r) results.eviction[kind].push(r);
          if (kind === 'ours' && evictionOneDelete) {
            // Ours again with the DisruptionTarget write off: the same writes per pod as the 1.20 peer.
            log(`--- ${scenario} #${i + 1}: ours ${ONE_DELETE_GATE}`);
            const r1 = await attempt(`eviction ours ${ONE_DELETE_GATE} #${i + 1}`, () =>
              runEviction(ctx, 'ours', { ...evictionOptions, oursArgs: [ONE_DELETE_GATE] }, `${tag}g`),
            );
            if (r1) (results.eviction.oursOneDelete ??= []).push(r1);
          }
        }
        write();
      }
    }
  }
  write();
  rmSync(join(tmpdir(), `nlc-bench-build-${process.pid}`), { recursive: true, force: true });
  log(`done in ${Math.round((Date.now() - started) / 60_000)} min → ${join(argv.out, 'latest.md')}`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
