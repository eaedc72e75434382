/**
 * One controller process's view of the in-memory cluster's caches, with watch drops: what
 * src/whatif/sources.ts `clusterSources` gives, its handlers cut off once the process stops, and
 * each of the nodes, pods, Leases and VolumeAttachments caches able to lose its watch stream for a
 * while. During a drop the cache is stale (reads answer what it held when the stream ended),
 * `isWatching()` is false and `blindForMs()` grows, and no change is delivered. At the end the
 * stream resumes (the missed changes are delivered in order, as a watch resumed from its
 * resourceVersion replays them) or, for a 410 Gone, the cache relists (the difference between what
 * it held and the API is delivered as adds, updates and deletes, as client-go's Replace does).
 *
 * Malformed objects follow src/kube/informercache.ts: a Pod or VolumeAttachment is absent; a Node or
 * Lease keeps its last readable version, marked `newestUnreadable`; and a Node or Lease cache whose
 * process started while one of its objects was malformed (so it has no readable version of it) is
 * not synced until that object can be read: its first list fails as a whole, as the informer's (and
 * client-go's reflector's) does. `run` starts no controller before every cache synced; the harness
 * waits the same way ({@link ProcessCaches.whenSynced}).
 *
 * An API server outage (harness `api-outage`) drops every stream at once and ends each with a 410
 * relist at the time the harness computes from client-go's backoff; a drop that another is still
 * holding (a watch drop inside an outage) ends only when the last of them does, with a relist if any
 * was a 410. A process that starts while the API server is down has listed nothing: each cache is
 * empty and unsynced until its first list succeeds (the harness ends it as a relist).
 *
 * A paused process (harness `process-pause`) runs none of its code: what its caches would deliver
 * waits, in order, until it resumes. Its streams stay open (`isWatching()` true), as a frozen
 * process's sockets do. Its reads see the API's objects; a resumed process is fenced (it lost its
 * leader Lease), so nothing it reads then reaches the cluster.
 *
 * Times: epoch milliseconds.
 */
import type { ControllerSources, SourceHandlers } from '../../src/controllers/context.js';
import type { Clock } from '../../src/util/clock.js';
import { clusterSources, type ClusterReads } from '../../src/whatif/sources.js';
import { KEEPS_LAST_READABLE } from '../../src/kube/informerfactory.js';
import type { PodRule } from '../../src/nodeaffinity/rule.js';
import type { Pod } from '../../src/kube/objects.js';

/** The caches a watch drop can hit. */
export type WatchedResource = 'nodes' | 'pods' | 'leases' | 'volumeAttachments';
export const WATCHED: readonly WatchedResource[] = ['nodes', 'pods', 'leases', 'volumeAttachments'];

interface Drop {
  since: number;
  held: Map<string, unknown>;
  missed: { old: unknown; cur: unknown }[];
  leaseRV: string;
  /** While the end of the drop is being delivered: reads are live, the stream not yet back. */
  catchingUp: boolean;
  /** How many drops hold the stream down (a watch drop inside an outage): it comes back when the last ends. */
  holds: number;
  /** Whether one of the drops ended in a 410 (the stream comes back by a relist). */
  gone: boolean;
  /** The cache has never listed (its process started while the API server was down): unsynced, empty. */
  unlisted: boolean;
}

type AnyHandlers = SourceHandlers<unknown>;

/** The cache key of an object of `resource`: `namespace/name` for pods and Leases, else the name. */
export function keyOf(resource: WatchedResource, o: unknown): string {
  const { namespace, name } = o as { namespace?: string; name: string };
  return resource === 'pods' || resource === 'leases' ? `${namespace ?? ''}/${name}` : name;
}

/** The caches of one process (see the file header). */
export class ProcessCaches {
  readonly sources: ControllerSources;
  readonly #drops = new Map<WatchedResource, Drop>();
  readonly #handlers = new Map<WatchedResource, AnyHandlers[]>();
  readonly #cluster: ClusterReads;
  readonly #clock: Clock;
  #live = true;
  /**
   * Objects the API holds malformed (`resource:key`): the informer's converter rejects them, so the
   * cache treats each as absent (src/kube/informercache.ts `applyEvent`: a delete when it turns
   * malformed, nothing while it stays so, an add when a readable version comes), or, for Nodes and
   * Leases, keeps its last readable version (an update when a readable version comes).
   */
  readonly #malformed: Set<string>;
  /**
   * For Nodes and Leases (src/kube/informerfactory.ts `keepLastReadable`): the last readable version
   * of each malformed object, which the cache keeps instead of dropping it (`resource:key` → object).
   */
  readonly #lastReadable = new Map<string, unknown>();
  /** Called once every cache has synced ({@link whenSynced}). */
  #onSynced: (() => void) | undefined;
  /** node-affinity-enforcer's pod source (unwrapped `get`) and handlers, when it is enabled. */
  #affinitySource: ((k: string) => unknown) | undefined;
  readonly #affinityHandlers: AnyHandlers[] = [];
  /** When the process (and so its informers) started, epoch ms. */
  readonly #createdAt: number;
  /** The process is paused: deliveries wait here, in order, until {@link resume}. */
  #paused = false;
  readonly #waiting: (() => void)[] = [];

  /**
   * @param clock the true clock (the API's), epoch ms.
   * @param malformed `resource:key` of the objects that are malformed when this process starts.
   * @param ruleOf each pod's node affinity rule, for node-affinity-enforcer's pod source.
   * @param unlisted the API server is down: no cache has listed yet (each is empty and unsynced until {@link restore}).
   */
  constructor(cluster: ClusterReads, clock: Clock, malformed: Iterable<string> = [], ruleOf?: (p: Pod) => PodRule, unlisted = false) {
    this.#cluster = cluster;
    this.#clock = clock;
    this.#createdAt = clock.now();
    this.#malformed = new Set(malformed);
    if (unlisted) {
      for (const r of WATCHED) this.#drops.set(r, { since: clock.now(), held: new Map(), missed: [], leaseRV: '', catchingUp: false, holds: 1, gone: true, unlisted: true });
    }
    const base = clusterSources(cluster, ruleOf) as unknown as Record<string, Record<string, unknown>>;
    const out: Record<string, unknown> = { ...base };
    for (const [name, source] of Object.entries(base)) {
      if (typeof source.subscribe !== 'function') continue;
      const watched = (WATCHED as readonly string[]).includes(name) ? (name as WatchedResource) : undefined;
      out[name] = name === 'affinityPods' ? this.#wrapAffinityPods(source) : this.#wrap(source, watched);
    }
    this.sources = out as unknown as ControllerSources;
  }

  /** The process stopped: its handlers hear nothing more. */
  stop(): void {
    this.#live = false;
    this.#onSynced = undefined;
  }

  /**
   * Whether `resource`'s cache has synced: false for a Node or Lease cache holding a malformed object
   * of which it has no readable version (its first list fails until the object can be read).
   */
  synced(resource: WatchedResource): boolean {
    if (this.#drops.get(resource)?.unlisted === true) return false;
    if (!KEEPS_LAST_READABLE[resource]) return true;
    for (const id of this.#malformed) if (id.startsWith(`${resource}:`) && !this.#lastReadable.has(id)) return false;
    return true;
  }

  /** Calls `start` now when every cache has synced, else once they have (a no-op after {@link stop}). */
  whenSynced(start: () => void): void {
    if (WATCHED.every((r) => this.synced(r))) start();
    else this.#onSynced = start;
  }

  /** The object `key` of `resource` turns malformed: the cache drops it (a no-op while its watch is down). @returns whether it applied. */
  malform(resource: WatchedResource, key: string): boolean {
    if (!this.#live || this.#drops.has(resource) || this.#malformed.has(`${resource}:${key}`)) return false;
    const cur = this.#store(resource).get(key);
    // An unsynced cache holds nothing yet (its lists keep failing): no version to keep.
    const synced = this.synced(resource);
    this.#malformed.add(`${resource}:${key}`);
    if (KEEPS_LAST_READABLE[resource]) {
      if (cur !== undefined && synced) this.#lastReadable.set(`${resource}:${key}`, cur);
      return true;
    }
    if (cur !== undefined) this.#emit(() => this.#deliverTo(this.#handlers.get(resource) ?? [], cur, undefined));
    if (resource === 'pods') this.#tellAffinity(key, 'delete');
    return true;
  }

  /** The process stops running: what its caches would deliver waits until {@link resume}. */
  pause(): void {
    this.#paused = true;
  }

  /** The process runs again: what waited is delivered, in order (a no-op after {@link stop}). */
  resume(): void {
    this.#paused = false;
    for (const f of this.#waiting.splice(0)) if (this.#live) f();
  }

  /** Runs `f` (a delivery to the process's handlers) now, or at {@link resume} while the process is paused. */
  #emit(f: () => void): void {
    if (this.#paused) this.#waiting.push(f);
    else f();
  }

  #deliverTo(hs: readonly AnyHandlers[], old: unknown, cur: unknown): void {
    for (const h of hs) {
      if (old === undefined && cur !== undefined) h.add?.(cur);
      else if (old !== undefined && cur !== undefined) h.update?.(old, cur);
      else if (old !== undefined) h.delete?.(old);
    }
  }

  /**
   * node-affinity-enforcer's own pod informer (src/nodeaffinity/informer.ts) is a second Informer
   * over the same pods with its own converter (`toAffinityPod`, which rejects what `toPod` rejects):
   * a malformed pod is absent from it too (a delete when it turns malformed, an add when a readable
   * version comes). Its watch is not dropped with the shared pods cache (a separate stream).
   */
  #wrapAffinityPods(source: Record<string, unknown>): Record<string, unknown> {
    const subscribe = (source.subscribe as (h: AnyHandlers) => void).bind(source);
    const get = source.get as (k: string) => unknown;
    const list = source.list as () => readonly unknown[];
    const onNode = source.onNode as (n: string) => unknown[];
    const readable = (o: unknown): boolean => !this.#isMalformed('pods', o);
    this.#affinitySource = get;
    return {
      ...source,
      subscribe: (h: AnyHandlers) => {
        this.#affinityHandlers.push(h);
        const gate =
          (kind: 'add' | 'update' | 'delete') =>
          (...args: unknown[]): void => {
            if (!this.#live || !readable(kind === 'update' ? args[1] : args[0])) return;
            this.#emit(() => (h[kind] as ((...a: unknown[]) => void) | undefined)?.(...args));
          };
        subscribe({ ...(h.add ? { add: gate('add') } : {}), ...(h.update ? { update: gate('update') } : {}), ...(h.delete ? { delete: gate('delete') } : {}) });
      },
      get: (k: string) => {
        const o = get(k);
        return o !== undefined && readable(o) ? o : undefined;
      },
      list: () => list().filter(readable),
      onNode: (n: string) => onNode(n).filter(readable),
    };
  }

  /** Tells the enforcer's pod handlers that pod `key` left (`delete`) or came back to (`add`) its cache. */
  #tellAffinity(key: string, kind: 'add' | 'delete'): void {
    const p = this.#affinitySource?.(key);
    if (p === undefined) return;
    this.#emit(() => {
      for (const h of this.#affinityHandlers) h[kind]?.(p);
    });
  }

  /** A readable version of `key` arrives: the cache has it again (an add, or, while the watch is down, on its return). */
  unmalform(resource: WatchedResource, key: string): void {
    if (!this.#malformed.delete(`${resource}:${key}`) || !this.#live) return;
    if (resource === 'pods') this.#tellAffinity(key, 'add');
    this.#deliverReadable(resource, key);
    this.#startIfSynced();
  }

  /** Once every cache has synced (a retried list succeeded), the process starts its controllers. */
  #startIfSynced(): void {
    const start = this.#onSynced;
    if (start && WATCHED.every((r) => this.synced(r))) {
      this.#onSynced = undefined;
      start();
    }
  }

  #deliverReadable(resource: WatchedResource, key: string): void {
    const last = this.#lastReadable.get(`${resource}:${key}`);
    this.#lastReadable.delete(`${resource}:${key}`);
    const cur = this.#store(resource).get(key);
    const d = this.#drops.get(resource);
    if (d) {
      if (last === undefined) d.held.delete(key);
      if (cur !== undefined) d.missed.push({ old: last, cur });
      return;
    }
    if (cur === undefined) return;
    this.#emit(() => this.#deliverTo(this.#handlers.get(resource) ?? [], last, cur));
  }

  #isMalformed(resource: WatchedResource | undefined, o: unknown): boolean {
    return resource !== undefined && this.#malformed.size > 0 && o !== undefined && this.#malformed.has(`${resource}:${keyOf(resource, o)}`);
  }

  /** Whether `resource`'s cache has no watch stream now. */
  dropped(resource: WatchedResource): boolean {
    return this.#drops.has(resource);
  }

  /** Ends `resource`'s watch stream now; when it is already down, one more drop holds it down until its own {@link restore}. */
  drop(resource: WatchedResource): void {
    if (!this.#live) return;
    const held = this.#drops.get(resource);
    if (held) {
      held.holds++;
      return;
    }
    const map = this.#store(resource);
    this.#drops.set(resource, { since: this.#clock.now(), held: new Map(map), missed: [], leaseRV: this.#cluster.leaseResourceVersion(), catchingUp: false, holds: 1, gone: false, unlisted: false });
    const hs = this.#handlers.get(resource) ?? [];
    this.#emit(() => {
      for (const h of hs) h.watching?.();
    });
  }

  /**
   * Ends one drop of `resource`'s stream (`gone`: it ended in a 410). When no other drop holds it,
   * the stream comes back: the cache replays what it missed or, after any 410, relists.
   */
  restore(resource: WatchedResource, gone: boolean): void {
    const d = this.#drops.get(resource);
    if (!d) return;
    d.gone ||= gone;
    if (--d.holds > 0) return;
    d.catchingUp = true;
    const hs = this.#live ? (this.#handlers.get(resource) ?? []) : [];
    const deliver = (old: unknown, cur: unknown): void => {
      if (this.#isMalformed(resource, cur ?? old)) return; // absent from the cache, as it was when it turned malformed
      this.#emit(() => this.#deliverTo(hs, old, cur));
    };
    if (d.gone) {
      const live = this.#store(resource);
      for (const [k, cur] of live) {
        const old = d.held.get(k);
        if (old !== cur) deliver(old, cur);
      }
      for (const [k, old] of d.held) if (!live.has(k)) deliver(old, undefined);
    } else {
      for (const m of d.missed) deliver(m.old, m.cur);
    }
    this.#drops.delete(resource);
    this.#emit(() => {
      for (const h of hs) h.watching?.();
    });
    this.#startIfSynced();
  }

  #store(resource: WatchedResource): ReadonlyMap<string, unknown> {
    const c = this.#cluster;
    return resource === 'nodes' ? c.nodes : resource === 'pods' ? c.pods : resource === 'leases' ? c.leases : c.volumeAttachments;
  }

  #wrap(source: Record<string, unknown>, resource: WatchedResource | undefined): Record<string, unknown> {
    const subscribe = (source.subscribe as (h: AnyHandlers) => void).bind(source);
    const out: Record<string, unknown> = {
      ...source,
      subscribe: (h: AnyHandlers) => {
        if (resource) this.#handlers.set(resource, [...(this.#handlers.get(resource) ?? []), h]);
        const gate =
          (kind: 'add' | 'update' | 'delete') =>
          (...args: unknown[]): void => {
            if (!this.#live) return;
            // A malformed object is absent from the cache: its changes are not delivered.
            if (this.#isMalformed(resource, kind === 'update' ? args[1] : args[0])) return;
            const d = resource && this.#drops.get(resource);
            if (d) {
              if (!d.catchingUp) d.missed.push(kind === 'add' ? { old: undefined, cur: args[0] } : kind === 'update' ? { old: args[0], cur: args[1] } : { old: args[0], cur: undefined });
              return;
            }
            const f = h[kind] as ((...a: unknown[]) => void) | undefined;
            this.#emit(() => f?.(...args));
          };
        const wrapped: AnyHandlers = {};
        if (h.add) wrapped.add = gate('add');
        if (h.update) wrapped.update = gate('update');
        if (h.delete) wrapped.delete = gate('delete');
        subscribe(wrapped);
      },
    };
    if (!resource) return out;
    const stale = (): Drop | undefined => {
      const d = this.#drops.get(resource);
      return d && !d.catchingUp ? d : undefined;
    };
    const get = source.get as (k: string) => unknown;
    const list = source.list as () => readonly unknown[];
    const readable = (o: unknown): boolean => !this.#isMalformed(resource, o);
    // A malformed Node or Lease reads as its last readable version; any other kind as absent.
    const asCached = (o: unknown): unknown => (readable(o) ? o : this.#lastReadable.get(`${resource}:${keyOf(resource, o)}`));
    out.get = (k: string) => {
      const o = stale()?.held.get(k) ?? (stale() ? undefined : get(k));
      return o === undefined ? undefined : asCached(o);
    };
    out.list = () => {
      const d = stale();
      const all = d ? [...d.held.values()] : list();
      return this.#malformed.size > 0 ? all.map(asCached).filter((o) => o !== undefined) : all;
    };
    out.hasSynced = () => this.synced(resource);
    out.isWatching = () => !this.#drops.has(resource) && this.synced(resource);
    // A Node or Lease whose newest version is malformed is read as its last readable one: count it, decide nothing on it.
    if (resource === 'nodes') out.newestUnreadable = (k: string) => this.#malformed.has(`nodes:${k}`);
    out.blindForMs = () => {
      const d = this.#drops.get(resource);
      if (d) return Math.max(1, this.#clock.now() - d.since);
      return this.synced(resource) ? 0 : Math.max(1, this.#clock.now() - this.#createdAt);
    };
    if (typeof source.onNode === 'function') {
      const onNode = source.onNode as (n: string) => unknown[];
      out.onNode = (n: string) => {
        const d = stale();
        const all = d ? [...d.held.values()].filter((o) => (o as { nodeName?: string }).nodeName === n) : onNode(n);
        return this.#malformed.size > 0 ? all.filter(readable) : all;
      };
    }
    if (typeof source.resourceVersion === 'function') {
      const rv = source.resourceVersion as () => string;
      out.resourceVersion = () => stale()?.leaseRV ?? rv();
    }
    return out;
  }
}
