/**
 * Controller processes under test: how to launch upstream kube-controller-manager (1.37.2, or 1.20.2)
 * and ours with the same flags, their log lines as they arrive, and their CPU and memory from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** The peer's Kubernetes minor version: one of the control-plane lanes (scripts/control-plane.sh). */
export type UpstreamVersion = '1.37' | '1.20';

/** The full version each lane builds. */
export const UPSTREAM_FULL_VERSION: Readonly<Record<UpstreamVersion, string>> = { '1.37': 'v1.37.2', '1.20': 'v1.20.2' };

/**
 * Upstream's `--controllers` for the peer: the controllers ours replaces. 1.37 names them as
 * `cmd/kube-controller-manager/names/controller_names.go` does (the taint eviction controller is its
 * own controller since 1.29); in 1.20 the taint manager runs inside `nodelifecycle`, and the forced
 * detach after 6 minutes lives in `attachdetach`.
 */
export const UPSTREAM_CONTROLLERS: Readonly<Record<UpstreamVersion, string>> = {
  '1.37': 'node-lifecycle-controller,taint-eviction-controller,pod-garbage-collector-controller',
  '1.20': 'nodelifecycle,podgc,attachdetach',
};

/** The two implementations under test. */
export type ControllerKind = 'upstream' | 'ours';

/**
 * How ours' code is laid out for the run: `bundle`, the esbuild bundle the image ships (one file,
 * `npm run build:bundle`); `dist`, tsc's output resolving packages from node_modules (readable CPU
 * profiles; docs/release.md measured it at about twice the bundle's start-up CPU and +56 MiB RSS);
 * `tsx`, src/cli/main.ts through tsx.
 */
export type OursMode = 'bundle' | 'dist' | 'tsx';

/** Flags both controllers get, in kube-controller-manager's syntax (durations in Go syntax). */
export interface SharedControllerFlags {
  nodeMonitorPeriod: string;
  nodeMonitorGracePeriod: string;
  nodeStartupGracePeriod: string;
  /** nodes per second */
  nodeEvictionRate: number;
  /** nodes per second */
  secondaryNodeEvictionRate: number;
  /** requests per second */
  kubeApiQps: number;
  kubeApiBurst: number;
}

/** Everything needed to start one controller process. */
export interface ControllerLaunch {
  kind: ControllerKind;
  kubeconfig: string;
  flags: SharedControllerFlags;
  /** path of the cached kube-controller-manager binary */
  upstreamBinary: string;
  /** upstream's `--controllers` value */
  upstreamControllers: string;
  /** the peer's version: decides which serving flags it takes */
  upstreamVersion: UpstreamVersion;
  /** ours: how its code is laid out (see {@link OursMode}) */
  oursMode: OursMode;
  /** ours: the entry script (the bundle, compiled main.js, or src/cli/main.ts for tsx) */
  oursEntry: string;
  /** ours: `--metrics-bind-address` port on 127.0.0.1 */
  metricsPort: number;
  /** ours: pino level; `debug` adds one "monitor pass done" line per health pass */
  logLevel: 'info' | 'debug';
  /** ours: write a V8 CPU profile there on exit (`node --cpu-prof`) */
  cpuProfDir?: string;
  /** ours: extra flags after the shared ones (e.g. `--feature-gates=PodDisruptionConditions=false`) */
  oursArgs?: readonly string[];
  /** ours: extra `node` options before the entry script (e.g. `--max-old-space-size=256`) */
  oursNodeArgs?: readonly string[];
  /** ours: `NODE_COMPILE_CACHE`, as the image sets it; primed first by {@link primeCompileCache} */
  oursCompileCache?: string;
}

/**
 * The command line for a launch. Pure.
 * @returns the executable, its arguments and the environment variables it adds (ours' `NODE_COMPILE_CACHE`).
 * Upstream flags follow the peer set-up of issue 9 and local-control-plane.md ("Upstream as a peer").
 */
export function controllerCommand(l: ControllerLaunch, nodeExecutable: string): { command: string; args: string[]; env: Record<string, string> } {
  const f = l.flags;
  const shared = [
    `--kubeconfig=${l.kubeconfig}`,
    '--leader-elect=false',
    `--node-monitor-period=${f.nodeMonitorPeriod}`,
    `--node-monitor-grace-period=${f.nodeMonitorGracePeriod}`,
    `--node-startup-grace-period=${f.nodeStartupGracePeriod}`,
    `--node-eviction-rate=${f.nodeEvictionRate}`,
    `--secondary-node-eviction-rate=${f.secondaryNodeEvictionRate}`,
    `--kube-api-qps=${f.kubeApiQps}`,
    `--kube-api-burst=${f.kubeApiBurst}`,
  ];
  if (l.kind === 'upstream') {
    // No serving: `--secure-port=0`; 1.20 also serves insecurely unless `--port=0` (removed in 1.24).
    const serving = l.upstreamVersion === '1.20' ? ['--port=0', '--secure-port=0'] : ['--secure-port=0'];
    return { command: l.upstreamBinary, args: [...shared, `--controllers=${l.upstreamControllers}`, ...serving], env: {} };
  }
  const node = [
    ...(l.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${l.cpuProfDir}`] : []),
    ...(l.oursNodeArgs ?? []),
    ...(l.oursMode === 'tsx' ? ['--import', 'tsx'] : []),
  ];
  return {
    command: nodeExecutable,
    args: [
      ...node,
      l.oursEntry,
      'run',
      ...shared,
      '--controllers=*',
      `--metrics-bind-address=127.0.0.1:${l.metricsPort}`,
      '--secure-port=0',
      `--log-level=${l.logLevel}`,
      '--log-format=json',
      ...(l.oursArgs ?? []),
    ],
    env: l.oursCompileCache !== undefined ? { NODE_COMPILE_CACHE: l.oursCompileCache } : {},
  };
}

/**
 * Writes the V8 code cache of ours' bundle into `dir`, as the image's build does (the Dockerfile's
 * runtime-stage `RUN`: the ENTRYPOINT's node and flags on the bundle, `--version`, with
 * `NODE_COMPILE_CACHE` set), so that the bench's first start of the bundle finds it, as a Pod's first
 * start in the image does. The cache holds what V8 compiles when it loads the bundle, which does not
 * depend on the subcommand. Mirrors no upstream code.
 * @param nodeExecutable the node binary that will run the bundle (its version names the cache's subdirectory).
 * @param nodeArgs the node options it will run with.
 * @throws {Error} when the bundle does not answer `--version`.
 */
export function primeCompileCache(nodeExecutable: string, entry: string, nodeArgs: readonly string[], dir: string): void {
  execFileSync(nodeExecutable, [...nodeArgs, entry, '--version'], { env: { ...process.env, NODE_COMPILE_CACHE: dir }, stdio: 'ignore' });
}

/** CPU and memory of one process. */
export interface ProcUsage {
  /** user + system CPU, seconds */
  cpuSeconds: number;
  /** resident set size now, KiB */
  rssKiB: number;
  /** peak resident set size (VmHWM), KiB */
  hwmKiB: number;
}

/**
 * Parses `/proc/PID/stat`: fields 14 (utime) and 15 (stime), in clock ticks.
 * @returns user + system CPU in seconds. @throws {Error} on malformed text.
 */
export function parseProcStatCpuSeconds(text: string, ticksPerSecond = 100): number {
  // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so field N is rest[N - 3].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('malformed /proc/PID/stat');
  return (utime + stime) / ticksPerSecond;
}

/**
 * Reads a `kB` field (`VmRSS`, `VmHWM`) of `/proc/PID/status`.
 * @returns KiB, or 0 when the field is missing.
 */
export function parseProcStatusKiB(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * CPU and memory of a live process from /proc.
 * @throws {Error} when the process does not exist.
 */
export function procUsage(pid: number): ProcUsage {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    cpuSeconds: parseProcStatCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8')),
    rssKiB: parseProcStatusKiB(status, 'VmRSS'),
    hwmKiB: parseProcStatusKiB(status, 'VmHWM'),
  };
}

/**
 * CPU seconds (user + sys) of a process's live threads, summed by thread name (`comm`): for a
 * Node.js process `MainThread` (JavaScript), `V8Worker` (concurrent and parallel GC, background
 * compilation), `libuv-worker`; a Go process names every thread after itself. Threads that already
 * exited are not counted, so compare two readings of the same long-lived threads.
 * @returns seconds by thread name; empty when the process is gone.
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out[name] = (out[name] ?? 0) + parseProcStatCpuSeconds(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
    } catch {
      // the thread exited meanwhile
    }
  }
  return out;
}

/**
 * Per-thread-name CPU between two {@link threadCpuSeconds} readings, in seconds per minute over
 * `windowS` seconds, rounded to hundredths; names missing from `after` are left out. Pure.
 */
export function threadCpuPerMinute(before: Record<string, number>, after: Record<string, number>, windowS: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, s] of Object.entries(after)) out[name] = Math.round(((s - (before[name] ?? 0)) / Math.max(1e-9, windowS)) * 60 * 100) / 100;
  return out;
}

/** A line a controller printed, with the epoch ms at which the bench read it. */
export interface LogLine {
  atMs: number;
  text: string;
}

/**
 * A ready-made command line, for a controller process the launch table does not describe (the
 * fuzz:diff runner's `--dry-run` shadow). `appendLog` appends to the log file instead of truncating it.
 */
export interface RawControllerLaunch {
  kind: ControllerKind;
  command: string;
  args: readonly string[];
  appendLog?: boolean;
}

/**
 * A running controller process: logs go to a file and to line listeners; usage comes from /proc.
 * Mirrors nothing upstream; it is the bench's process harness.
 */
export class ControllerProcess {
  readonly kind: ControllerKind;
  readonly pid: number;
  /** epoch ms just before spawn */
  readonly startedAtMs: number;
  readonly exited: Promise<number | null>;
  readonly #child: ChildProcess;
  readonly #listeners = new Set<(l: LogLine) => void>();
  #exitCode: number | null | undefined;

  /**
   * Spawns the controller. Environment variables that would configure ours behind the bench's back
   * (`NLC_*`, `KUBECONFIG`) are removed.
   * @throws {Error} when the process cannot be spawned.
   */
  constructor(launch: ControllerLaunch | RawControllerLaunch, logFile: string, cwd: string) {
    const { command, args, env: added } = 'command' in launch ? { ...launch, env: {} } : controllerCommand(launch, process.execPath);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('NLC_') && k !== 'KUBECONFIG' && k !== 'NODE_COMPILE_CACHE') env[k] = v;
    Object.assign(env, added);
    this.kind = launch.kind;
    this.startedAtMs = Date.now();
    this.#child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (this.#child.pid === undefined) throw new Error(`could not start ${command}`);
    this.pid = this.#child.pid;
    const out = createWriteStream(logFile, { flags: 'appendLog' in launch && launch.appendLog === true ? 'a' : 'w' });
    out.write(`# ${command} ${args.join(' ')}\n`);
    for (const stream of [this.#child.stdout, this.#child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (text) => {
        out.write(`${text}\n`);
        const line = { atMs: Date.now(), text };
        for (const l of this.#listeners) l(line);
      });
    }
    this.exited = new Promise((resolve) => {
      this.#child.on('exit', (code) => {
        this.#exitCode = code;
        resolve(code);
        // Give readline a moment to flush the last lines before closing the log file.
        setTimeout(() => out.end(), 200);
      });
    });
  }

  /** Subscribes to log lines; returns an unsubscribe function. */
  onLine(listener: (l: LogLine) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Waits for the `count`-th log line matching `re` from now on (the first by default).
   * @returns that line. @throws {Error} on timeout (ms) or when the process exits first.
   */
  async waitForLine(re: RegExp, timeoutMs: number, count = 1): Promise<LogLine> {
    let seen = 0;
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`${this.kind} controller: ${seen} of ${count} log line(s) matching ${re} within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.onLine((l) => {
        if (!re.test(l.text) || ++seen < count) return;
        clearTimeout(timer);
        off();
        resolve(l);
      });
      void this.exited.then((code) => {
        clearTimeout(timer);
        off();
        reject(new Error(`${this.kind} controller exited with ${code} before logging ${re}`));
      });
    });
  }

  /** CPU and memory now. @throws {Error} when the process is gone. */
  usage(): ProcUsage {
    return procUsage(this.pid);
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs`. Resolves when the process has exited. Never throws.
   */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.#exitCode !== undefined) return;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
