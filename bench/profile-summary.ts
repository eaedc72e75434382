/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, as `bench/run.ts --cpu-profile` writes them):
 * self time by function and by package/file, and inclusive time of our own functions, to say what
 * dominates our controller's CPU.
 *
 *   node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top 25] [--from S] [--to S]
 *
 * `--from` / `--to` keep only the samples in that window, in seconds after the profile started
 * (the process start for `node --cpu-prof`): e.g. `--to 5` for start-up up to caches synced, and
 * `--from 60` for the steady state.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a URL's code comes from: a package name, `node:internal`, or the file. Pure. */
export function origin(url: string): string {
  if (url === '') return '(native / VM)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1] as string;
  if (url.startsWith('node:')) return 'node core';
  const ours = /\/out\/((?:src|sim|packages\/sim)\/.*)$/.exec(url) ?? /\/work\/main\/((?:src|sim|packages\/sim)\/.*)$/.exec(url);
  return ours ? (ours[1] as string) : url;
}

/** A window of a profile, seconds after its start (either end open). */
export interface ProfileWindow {
  fromS?: number;
  toS?: number;
}

/**
 * Self time (ms) per function and per origin, over the samples inside `window` (default: all). Pure.
 * @returns both maps, sorted descending, and the total ms of the samples counted.
 */
export function selfTimes(p: CpuProfile, window: ProfileWindow = {}): { totalMs: number; byFunction: [string, number][]; byOrigin: [string, number][] } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const org = new Map<string, number>();
  let total = 0;
  const fromUs = (window.fromS ?? -Infinity) * 1e6;
  const toUs = (window.toS ?? Infinity) * 1e6;
  let atUs = 0; // sample time, µs after startTime (timeDeltas are µs since the previous sample)
  p.samples.forEach((id, i) => {
    const deltaUs = p.timeDeltas[i] ?? 0;
    atUs += deltaUs;
    if (atUs < fromUs || atUs > toUs) return;
    const ms = deltaUs / 1000;
    const n = byId.get(id);
    if (!n) return;
    total += ms;
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${origin(f.url)}:${f.lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + ms);
    const o = f.functionName === '(garbage collector)' ? '(garbage collector)' : f.functionName === '(idle)' ? '(idle)' : origin(f.url);
    org.set(o, (org.get(o) ?? 0) + ms);
  });
  const sort = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);
  return { totalMs: total, byFunction: sort(fn), byOrigin: sort(org) };
}

/**
 * Inclusive (self + callees) time per function of our own code (src/ and sim/), over the samples
 * inside `window`: how much CPU descends from, say, the informer's event handler or the monitor
 * pass, whatever library or core code it calls. A function that recurses counts once per sample. Pure.
 * @returns [function key, ms] sorted descending.
 */
export function inclusiveOwnTimes(p: CpuProfile, window: ProfileWindow = {}): [string, number][] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n: ProfileNode): string | undefined => {
    const o = origin(n.callFrame.url);
    return o.startsWith('src/') || o.startsWith('sim/') || o.startsWith('packages/sim/') ? `${n.callFrame.functionName || '(anonymous)'} ${o}:${n.callFrame.lineNumber + 1}` : undefined;
  };
  const total = new Map<string, number>();
  const fromUs = (window.fromS ?? -Infinity) * 1e6;
  const toUs = (window.toS ?? Infinity) * 1e6;
  let atUs = 0;
  p.samples.forEach((id, i) => {
    const deltaUs = p.timeDeltas[i] ?? 0;
    atUs += deltaUs;
    if (atUs < fromUs || atUs > toUs) return;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      const k = n && key(n);
      if (k && !seen.has(k)) {
        seen.add(k);
        total.set(k, (total.get(k) ?? 0) + deltaUs / 1000);
      }
    }
  });
  return [...total].sort((a, b) => b[1] - a[1]);
}

function main(): number {
  const file = process.argv[2];
  const arg = (name: string): number | undefined => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  const top = arg('--top') ?? 25;
  const window: ProfileWindow = { ...(arg('--from') !== undefined ? { fromS: arg('--from') } : {}), ...(arg('--to') !== undefined ? { toS: arg('--to') } : {}) };
  if (!file || [top, window.fromS, window.toS].some((x) => x !== undefined && !Number.isFinite(x))) {
    process.stderr.write('usage: bench/profile-summary.ts FILE.cpuprofile [--top N] [--from S] [--to S]\n');
    return 2;
  }
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const { totalMs, byFunction, byOrigin } = selfTimes(p, window);
  const idle = byOrigin.find(([k]) => k === '(idle)')?.[1] ?? 0;
  const busy = totalMs - idle;
  const pct = (ms: number): string => `${((ms / busy) * 100).toFixed(1)}%`;
  const span = window.fromS !== undefined || window.toS !== undefined ? `, window ${window.fromS ?? 0}–${window.toS ?? 'end'} s` : '';
  process.stdout.write(`profile ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s${span}, busy ${(busy / 1000).toFixed(2)} s (idle excluded from %)\n\nby origin:\n`);
  for (const [k, v] of byOrigin.filter(([k]) => k !== '(idle)').slice(0, top)) process.stdout.write(`  ${pct(v).padStart(6)}  ${(v / 1000).toFixed(2)} s  ${k}\n`);
  process.stdout.write('\nby function (self time):\n');
  for (const [k, v] of byFunction.filter(([k]) => !k.startsWith('(idle)')).slice(0, top)) process.stdout.write(`  ${pct(v).padStart(6)}  ${k}\n`);
  process.stdout.write('\nour functions, inclusive (self + everything they call):\n');
  for (const [k, v] of inclusiveOwnTimes(p, window).slice(0, top)) process.stdout.write(`  ${pct(v).padStart(6)}  ${k}\n`);
  return 0;
}

if (process.argv[1]?.endsWith('profile-summary.ts')) process.exitCode = main();
