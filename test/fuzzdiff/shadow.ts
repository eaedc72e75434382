/**
 * Ours as the differential runs' `--dry-run` shadow, in **its own process** (`node --import tsx
 * src/cli/main.ts run …`), and a sampler of how far its Node and Lease caches are behind the API
 * server.
 *
 * Why a process of its own: the first campaigns ran the shadow inside the runner's process, beside
 * the simulated fleet (a Lease renewal per node per second) and the decision recorder (three lists
 * every 200 ms, parsed by @kubernetes/client-node). On a machine at load 20–27 that one event loop
 * fell behind: the shadow's Lease cache trailed the API server by ~10 s (campaign scenario 300/14:
 * cached resourceVersion 10209, live 10347), which either started the Lease circuit breaker's
 * controller-wide hold (300/14, 300/16, 500/7) or, with a lag that never let a dead node's expiry
 * come before its revival, made the shadow decide nothing at all (300/20). kube-controller-manager
 * runs as its own process; so does ours in production. bench/lib/procs.ts starts
 * kube-controller-manager the same way.
 *
 * The sampler ({@link CacheLagSampler}) makes such a lag visible in every report instead of leaving
 * it to be guessed from missing decisions.
 *
 * Not upstream: test tooling.
 */
import { join } from 'node:path';
import { ControllerProcess } from '../../bench/lib/procs.js';
import type { KubeClients } from '../../src/kube/client.js';
import type { ShadowState } from '../../src/shadow/decisions.js';
import { compareResourceVersion } from '../../src/nodelifecycle/leasecircuitbreaker.js';

/** The part of the shadow's `/debug/state` the runner reads. */
interface DebugState {
  shadow?: ShadowState;
  nodeLifecycle?: { nodes?: unknown[] };
  informers?: { name: string; resourceVersion: string; lastEventMs?: number; watching: boolean }[];
}

/** A running shadow process (bench/lib/procs.ts `ControllerProcess` with the shadow's command line). */
export class ShadowProcess {
  readonly pid: number;
  readonly exited: Promise<number | null>;
  readonly #proc: ControllerProcess;
  #port: number | undefined;
  readonly #portSeen: Promise<number>;

  /**
   * Spawns `run --dry-run` with `flags` (ours' flag syntax), scoped to the fleet by
   * `--node-selector=nlc.sim/fleet=<prefix>`, serving `/debug/state` on a free loopback port.
   * @param logFile the shadow's JSON log (debug level) is appended there.
   * @throws {Error} when the process cannot be spawned.
   */
  constructor(opts: { root: string; kubeconfig: string; prefix: string; flags: readonly string[]; logFile: string }) {
    const args = [
      '--import',
      'tsx',
      join(opts.root, 'src/cli/main.ts'),
      'run',
      `--kubeconfig=${opts.kubeconfig}`,
      `--node-selector=nlc.sim/fleet=${opts.prefix}`,
      '--metrics-bind-address=127.0.0.1:0',
      '--secure-port=0',
      '--leader-elect=false',
      '--log-level=debug',
      '--log-format=json',
      ...opts.flags,
    ];
    // ControllerProcess keeps the runner's NLC_* and KUBECONFIG away from the shadow.
    this.#proc = new ControllerProcess({ kind: 'ours', command: process.execPath, args, appendLog: true }, opts.logFile, opts.root);
    this.pid = this.#proc.pid;
    this.exited = this.#proc.exited;
    let portSeen: (port: number) => void = () => undefined;
    this.#portSeen = new Promise((resolve) => (portSeen = resolve));
    const off = this.#proc.onLine(({ text }) => {
      if (!text.includes('/debug/state')) return;
      const m = /"port":(\d+)/.exec(text);
      if (!m) return;
      this.#port = Number(m[1]);
      portSeen(this.#port);
      off();
    });
  }

  /** The `/debug/state` port once the shadow logged it. @throws {Error} on timeout (ms) or exit. */
  async port(timeoutMs: number): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the shadow served no /debug/state within ${timeoutMs} ms`)), timeoutMs)));
    const exited = this.exited.then((code) => Promise.reject(new Error(`the shadow exited with ${String(code)} before serving`)));
    try {
      return await Promise.race([this.#portSeen, timeout, exited]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The shadow's `/debug/state`. @throws {Error} before it serves, or on an HTTP error. */
  async state(): Promise<DebugState> {
    if (this.#port === undefined) throw new Error('the shadow does not serve yet');
    const res = await fetch(`http://127.0.0.1:${this.#port}/debug/state`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`/debug/state: HTTP ${res.status}`);
    return (await res.json()) as DebugState;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it exited. Never throws. */
  stop(graceMs = 10_000): Promise<void> {
    return this.#proc.stop(graceMs);
  }
}

/** One sample: how long the shadow's cache had been missing a write the API server had. Times epoch **ms**. */
export interface LagSample {
  atMs: number;
  informer: 'nodes' | 'leases';
  /** The shadow informer's resourceVersion. */
  cacheResourceVersion: string;
  /** The newest resourceVersion among the fleet's objects of that kind on the API server. */
  liveResourceVersion: string;
  /** Since when the API server had held a write the cache has not reached (0: caught up), ms. */
  lagMs: number;
}

/**
 * Samples, once a second, the shadow's Node and Lease informer resourceVersions against the newest
 * resourceVersion among the fleet's Nodes and Leases on the API server; the lag is how long ago the
 * sampler first saw a write the cache has still not reached (1 s resolution; 0 when caught up).
 * Failed samples (API server restarts) are skipped. Never throws.
 */
export class CacheLagSampler {
  readonly samples: LagSample[] = [];
  readonly #history: Record<'nodes' | 'leases', { atMs: number; rv: string }[]> = { nodes: [], leases: [] };
  readonly #clients: KubeClients;
  readonly #prefix: string;
  readonly #shadow: () => ShadowProcess | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /** @param shadow the current shadow (undefined while the controllers restart). */
  constructor(clients: KubeClients, prefix: string, shadow: () => ShadowProcess | undefined) {
    this.#clients = clients;
    this.#prefix = prefix;
    this.#shadow = shadow;
  }

  start(): void {
    const tick = (): void => {
      void this.#sample().finally(() => {
        if (!this.#stopped) this.#timer = setTimeout(tick, 1000);
      });
    };
    this.#timer = setTimeout(tick, 1000);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** The largest lag of each informer, ms. */
  maxLagMs(): Record<'nodes' | 'leases', number> {
    const max = (i: 'nodes' | 'leases'): number => Math.max(0, ...this.samples.filter((s) => s.informer === i).map((s) => s.lagMs));
    return { nodes: max('nodes'), leases: max('leases') };
  }

  /**
   * The intervals (epoch ms) in which either cache's sampled lag exceeded `thresholdMs`, each
   * reaching back to the write the cache was missing; consecutive samples above it are merged.
   */
  lagIntervals(thresholdMs: number): { fromMs: number; toMs: number; maxLagMs: number }[] {
    const out: { fromMs: number; toMs: number; maxLagMs: number }[] = [];
    for (const x of [...this.samples].sort((a, b) => a.atMs - b.atMs)) {
      if (x.lagMs <= thresholdMs) continue;
      const last = out.at(-1);
      if (last && x.atMs - x.lagMs <= last.toMs + 1500) {
        last.toMs = Math.max(last.toMs, x.atMs);
        last.maxLagMs = Math.max(last.maxLagMs, x.lagMs);
      } else out.push({ fromMs: x.atMs - x.lagMs, toMs: x.atMs, maxLagMs: x.lagMs });
    }
    return out;
  }

  async #sample(): Promise<void> {
    const sh = this.#shadow();
    if (!sh) return;
    try {
      const newest = (items: { metadata?: { name?: string; resourceVersion?: string } }[]): string => {
        let best = '';
        for (const x of items) {
          const rv = x.metadata?.resourceVersion ?? '';
          if (x.metadata?.name?.startsWith(this.#prefix) && (best === '' || compareResourceVersion(rv, best) === 1)) best = rv;
        }
        return best;
      };
      const [leases, nodes] = await Promise.all([
        this.#clients.coordination.listNamespacedLease({ namespace: 'kube-node-lease', timeoutSeconds: 5 }),
        this.#clients.core.listNode({ labelSelector: `nlc.sim/fleet=${this.#prefix}`, timeoutSeconds: 5 }),
      ]);
      const state = await sh.state();
      const atMs = Date.now();
      const live = { leases: newest(leases.items), nodes: newest(nodes.items) };
      for (const informer of ['nodes', 'leases'] as const) {
        const h = this.#history[informer];
        if (live[informer] !== '' && h.at(-1)?.rv !== live[informer]) h.push({ atMs, rv: live[informer] });
        const cache = state.informers?.find((x) => (informer === 'leases' ? x.name.startsWith('leases') : x.name === 'nodes'))?.resourceVersion ?? '';
        // `""`: the informer is relisting (after an outage): the shadow is blind, which its own sight
        // check and the comparison's outage rules account for; no lag can be told.
        if (cache === '') continue;
        // The oldest write on record the cache has not reached: the lag is counted from when it was first seen.
        const missed = h.find((x) => compareResourceVersion(x.rv, cache) === 1);
        this.samples.push({ atMs, informer, cacheResourceVersion: cache, liveResourceVersion: live[informer], lagMs: missed ? atMs - missed.atMs : 0 });
      }
    } catch {
      // An API server restart or a shadow restarting: no sample this second.
    }
  }
}
