/**
 * The controller's esbuild bundle against the node_modules layout: start-up time and resident
 * memory of each, so the image ships the bundle only if neither gets worse.
 *
 *   tsx bench/bundle-startup.ts --bundle dist/release/controller/node-lifecycle-controller.mjs \
 *     [--kubeconfig FILE] [--runs 5]
 *
 * For each layout (`node dist/src/cli/main.js`, from `npm run build`, and `node BUNDLE`), run by
 * turns to share the machine's noise fairly, with the image's node option:
 * - `--version` and `run --help`: wall time from spawn to exit (milliseconds);
 * - with --kubeconfig, `run --leader-elect=false` against that cluster: wall time from spawn to the
 *   `caches synced` log line, the CPU time used by then (less sensitive than wall time to a busy
 *   machine), and VmRSS (MiB, /proc) at that moment and 5 s later.
 * Prints a Markdown table of medians and writes it as JSON to stdout's last line.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { OURS_NODE_OPTIONS } from './lib/options.js';

const ROOT = join(import.meta.dirname, '..');

/** One layout's entry point, as `node` arguments. */
interface Layout {
  name: string;
  entry: string;
}

/** Spawns `node NODE_OPTION entry args` and resolves with the wall time to exit (ms). */
function timeToExit(entry: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [OURS_NODE_OPTIONS, entry, ...args], { cwd: ROOT, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${entry} ${args.join(' ')}: exit ${code}`))));
  });
}

/** VmRSS of a process in MiB. */
function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? Number.NaN) / 1024;
}

/** CPU time (user + system) a process has used so far, in milliseconds (/proc, 100 ticks a second). */
function cpuMs(pid: number): number {
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Runs the controller until its caches synced: ms to `caches synced`, its CPU time by then, RSS then and 5 s later. */
function startToSynced(entry: string, kubeconfig: string, port: number): Promise<{ syncedMs: number; cpuSyncedMs: number; rssSynced: number; rssSettled: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [OURS_NODE_OPTIONS, entry, 'run', `--kubeconfig=${kubeconfig}`, '--leader-elect=false', `--secure-port=${port}`, '--bind-address=127.0.0.1'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } },
    );
    let out = '';
    let settled = false;
    const timer = setTimeout(() => finish(new Error(`no "caches synced" within 60 s:\n${out.slice(-2000)}`)), 60_000);
    const finish = (err: Error | undefined, value?: { syncedMs: number; cpuSyncedMs: number; rssSynced: number; rssSettled: number }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGTERM');
      if (err) reject(err);
      else if (value) resolve(value);
    };
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (!out.includes('caches synced') || child.pid === undefined) return;
      const syncedMs = performance.now() - t0;
      const pid = child.pid;
      const rssSynced = rssMiB(pid);
      const cpuSyncedMs = cpuMs(pid);
      out = '';
      setTimeout(() => {
        try {
          finish(undefined, { syncedMs, cpuSyncedMs, rssSynced, rssSettled: rssMiB(pid) });
        } catch (e) {
          finish(e as Error);
        }
      }, 5000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => finish(new Error(`exited ${code} before its caches synced:\n${out.slice(-2000)}`)));
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const bundle = arg('bundle') ?? 'dist/release/controller/node-lifecycle-controller.mjs';
const kubeconfig = arg('kubeconfig');
const runs = Number(arg('runs') ?? 5);
const layouts: Layout[] = [
  { name: 'node_modules (dist/src/cli/main.js)', entry: 'dist/src/cli/main.js' },
  { name: `bundle (${bundle})`, entry: bundle },
];
const results = new Map<string, Record<string, number[]>>(layouts.map((l) => [l.name, {}]));
const add = (layout: string, key: string, v: number): void => {
  const r = results.get(layout);
  if (r) (r[key] ??= []).push(v);
};
for (let i = 0; i < runs; i++) {
  for (const l of layouts) {
    add(l.name, '--version (ms)', await timeToExit(l.entry, ['--version']));
    add(l.name, 'run --help (ms)', await timeToExit(l.entry, ['run', '--help']));
    if (kubeconfig) {
      const s = await startToSynced(l.entry, kubeconfig, 27000 + i);
      add(l.name, 'run: spawn to caches synced (ms)', s.syncedMs);
      add(l.name, 'run: CPU time to caches synced (ms)', s.cpuSyncedMs);
      add(l.name, 'RSS at caches synced (MiB)', s.rssSynced);
      add(l.name, 'RSS 5 s later (MiB)', s.rssSettled);
    }
  }
}
const keys = Object.keys(results.get(layouts[0]?.name ?? '') ?? {});
process.stdout.write(`| median of ${runs} | ${layouts.map((l) => l.name).join(' | ')} |\n|---|${layouts.map(() => '---').join('|')}|\n`);
for (const k of keys) process.stdout.write(`| ${k} | ${layouts.map((l) => median(results.get(l.name)?.[k] ?? []).toFixed(1)).join(' | ')} |\n`);
const summary = Object.fromEntries(layouts.map((l) => [l.name, Object.fromEntries(Object.entries(results.get(l.name) ?? {}).map(([k, v]) => [k, median(v)]))]));
process.stdout.write(`${JSON.stringify(summary)}\n`);
