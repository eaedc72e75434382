/**
 * How late the bench sees what the simulator wrote, so that a detection figure can be trusted:
 *
 * - **watch fan-out lag**: the bench's own Lease watch receiving a renewal minus the moment the
 *   simulator's PATCH of that renewal returned (both read `Date.now()` in the bench process);
 * - **event-loop lag of the bench process**, which hosts the simulator and the watcher alike
 *   (`perf_hooks.monitorEventLoopDelay`): a late loop delays both the renewals and their sight.
 *
 * Issue 18 saw the last renewal arrive 8.1 s after its PATCH returned at 1,000 nodes; these figures
 * say whether such seconds belong to the API server, the bench process or the controller.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { CoordinationV1Api } from '@kubernetes/client-node';
import type { KubeClients } from '../../src/kube/client.js';
import { toMillis } from '../../src/kube/objects.js';

/** p50 / p99 / max of a set of samples and how many there were; units as the field says. */
export interface LagSummary {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

/**
 * Nearest-rank percentiles of `values`, rounded to 0.1. Pure.
 * @returns zeros and n 0 for no values.
 */
export function lagSummary(values: readonly number[]): LagSummary {
  if (values.length === 0) return { p50: 0, p99: 0, max: 0, n: 0 };
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil((q / 100) * s.length) - 1))] as number;
  const r = (x: number): number => Math.round(x * 10) / 10;
  return { p50: r(at(50)), p99: r(at(99)), max: r(s.at(-1) as number), n: s.length };
}

/** One renewal seen by the watch: when, and how long after its write returned (ms). */
export interface FanOutSample {
  name: string;
  renewMs: number;
  seenAtMs: number;
  lagMs: number;
}

/** Unmatched writes or sightings older than this are dropped (a write whose event never came). */
const UNMATCHED_TTL_MS = 120_000;

/**
 * Pairs Lease writes (their return time) with the watch's first sight of the same renewal
 * (Lease name + renewTime). Either may come first: a watch event can be handled before the
 * PATCH's response. Pure bookkeeping; feed it with {@link withLeaseWriteHook} and the bench's
 * Lease watch.
 */
export class WatchLagMeter {
  readonly #written = new Map<string, number>();
  readonly #seen = new Map<string, number>();
  readonly #samples: FanOutSample[] = [];
  #sinceSweep = 0;

  /** The simulator's write of `name`'s renewal `renewMs` returned at `returnedAtMs` (epoch ms). */
  wrote(name: string, renewMs: number, returnedAtMs: number): void {
    const key = `${name}|${renewMs}`;
    const seenAt = this.#seen.get(key);
    if (seenAt !== undefined) {
      this.#seen.delete(key);
      this.#samples.push({ name, renewMs, seenAtMs: seenAt, lagMs: seenAt - returnedAtMs });
    } else this.#written.set(key, returnedAtMs);
    this.#sweep(returnedAtMs);
  }

  /** The watch delivered `name` with renewTime `renewMs` at `seenAtMs` (only the first sight counts). */
  seen(name: string, renewMs: number, seenAtMs: number): void {
    const key = `${name}|${renewMs}`;
    const wroteAt = this.#written.get(key);
    if (wroteAt !== undefined) {
      this.#written.delete(key);
      this.#samples.push({ name, renewMs, seenAtMs, lagMs: seenAtMs - wroteAt });
    } else if (!this.#seen.has(key)) this.#seen.set(key, seenAtMs);
    this.#sweep(seenAtMs);
  }

  /** Matched samples seen within `[fromMs, toMs]` (epoch ms), optionally only of `names`. */
  samples(fromMs = -Infinity, toMs = Infinity, names?: ReadonlySet<string>): FanOutSample[] {
    return this.#samples.filter((s) => s.seenAtMs >= fromMs && s.seenAtMs <= toMs && (!names || names.has(s.name)));
  }

  /** The fan-out lag (ms) of each named Lease's latest matched renewal (the last one, for a dead node). */
  lastRenewalLags(names: Iterable<string>): number[] {
    const latest = new Map<string, FanOutSample>();
    for (const s of this.#samples) {
      const cur = latest.get(s.name);
      if (!cur || s.renewMs > cur.renewMs) latest.set(s.name, s);
    }
    const out: number[] = [];
    for (const n of names) {
      const s = latest.get(n);
      if (s) out.push(s.lagMs);
    }
    return out;
  }

  #sweep(nowMs: number): void {
    if (++this.#sinceSweep < 1000) return;
    this.#sinceSweep = 0;
    for (const m of [this.#written, this.#seen]) for (const [k, t] of m) if (nowMs - t > UNMATCHED_TTL_MS) m.delete(k);
  }
}

/**
 * The same clients, except that every Lease PATCH or create through `coordination` reports its
 * renewTime and the moment it returned to `onWrite` (only successful writes with a renewTime).
 * The simulator gets these clients, so its heartbeats are timed where they return.
 */
export function withLeaseWriteHook(clients: KubeClients, onWrite: (name: string, renewMs: number, returnedAtMs: number) => void): KubeClients {
  const report = (param: unknown): void => {
    const p = param as { name?: unknown; body?: { metadata?: { name?: unknown }; spec?: { renewTime?: unknown } } } | undefined;
    const name = typeof p?.name === 'string' ? p.name : p?.body?.metadata?.name;
    const renewMs = toMillis(p?.body?.spec?.renewTime);
    if (typeof name === 'string' && renewMs !== undefined) onWrite(name, renewMs, Date.now());
  };
  const hooked = new Set<PropertyKey>(['patchNamespacedLease', 'createNamespacedLease', 'replaceNamespacedLease']);
  const coordination = new Proxy(clients.coordination, {
    get(target, prop, receiver): unknown {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (!hooked.has(prop) || typeof v !== 'function') return v;
      return async (param: unknown, ...rest: unknown[]): Promise<unknown> => {
        const out: unknown = await (v as (...a: unknown[]) => Promise<unknown>).call(target, param, ...rest);
        report(param);
        return out;
      };
    },
  }) as CoordinationV1Api;
  return { ...clients, coordination };
}

/** Event-loop delay of this process over a window, ms. */
export interface EventLoopLag {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * Starts sampling this process's event-loop delay (a 10 ms timer; the lag is how late it fires).
 * @returns a function that stops sampling and returns the window's figures.
 */
export function startEventLoopLag(): () => EventLoopLag {
  const resolutionMs = 10;
  const h = monitorEventLoopDelay({ resolution: resolutionMs });
  h.enable();
  return () => {
    h.disable();
    // The histogram records the whole interval between samples (≈ 10 ms on an idle loop): the lag is the excess.
    const ms = (ns: number): number => Math.max(0, Math.round((ns / 1e6 - resolutionMs) * 10) / 10);
    return { p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) };
  };
}
