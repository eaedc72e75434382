/**
 * One controller process of a fuzz run, as `run` builds it, with what the vocabulary does to it: a
 * pause (its code stops running: timers and watch events wait), an API server outage (every request
 * fails; each informer reconnects by client-go's backoff), and leader election (the real
 * `LeaseElector` over an in-memory leader Lease, and `run`'s fence: a write is sent only while
 * `isLeader()` holds, as `ApiWriteThrottle`'s `canWrite` checks it right before each write).
 *
 * The leader Lease lives outside the simulated API server's outages: an outage costs no process its
 * leadership, so a process lives through it as one run with `--leader-elect=false` does (the
 * property the post-outage invariant needs). Only a pause outlasts the Lease.
 *
 * Times: epoch milliseconds; durations milliseconds.
 */
import { ApiException } from '@kubernetes/client-node';
import type { ControllerIO } from '../../src/controllers/context.js';
import type { RunnableController } from '../../src/controllers/registry.js';
import { ReflectorBackoff } from '../../src/kube/backoff.js';
import { LeaseElector, type LeaseApi, type LeaseObject } from '../../src/kube/leaderelection.js';
import type { Pod, PodCondition } from '../../src/kube/objects.js';
import { LiveReadError } from '../../src/kube/reads.js';
import { FencedError } from '../../src/kube/throttle.js';
import type { Clock, TimerHandle } from '../../src/util/clock.js';
import type { FuzzClock } from './clock.js';
import { WATCHED, type ProcessCaches, type WatchedResource } from './watch.js';

/** The leader Lease of the fuzz's processes (`--leader-elect-resource-name` / namespace defaults). */
const LEADER_LEASE = { name: 'node-lifecycle-controller', namespace: 'kube-system' };

/**
 * The leader Lease's API, in memory, with the API server's optimistic concurrency: every write
 * bumps the resourceVersion, a create of an existing Lease and a replace with a stale
 * resourceVersion answer 409, a replace of a missing Lease 404.
 */
export class MemoryLeaseApi implements LeaseApi {
  readonly #store = new Map<string, LeaseObject>();
  #rv = 0;

  /** The Lease is gone (a `restart` or `failover`: its holder's Lease lapsed, so the next one takes it at once). */
  clear(): void {
    this.#store.clear();
  }

  async get(namespace: string, name: string): Promise<LeaseObject | undefined> {
    const l = this.#store.get(`${namespace}/${name}`);
    return l && structuredClone(l);
  }

  async create(lease: LeaseObject): Promise<LeaseObject> {
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    if (this.#store.has(key)) throw new ApiException(409, 'fuzz: the Lease exists', '{}', {});
    return this.#put(key, lease);
  }

  async replace(lease: LeaseObject): Promise<LeaseObject> {
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    const cur = this.#store.get(key);
    if (!cur) throw new ApiException(404, 'fuzz: no Lease', '{}', {});
    if (lease.metadata.resourceVersion !== cur.metadata.resourceVersion) throw new ApiException(409, 'fuzz: stale Lease', '{}', {});
    return this.#put(key, lease);
  }

  async delete(namespace: string, name: string): Promise<void> {
    if (!this.#store.delete(`${namespace}/${name}`)) throw new ApiException(404, 'fuzz: no Lease', '{}', {});
  }

  #put(key: string, lease: LeaseObject): LeaseObject {
    const stored = structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.#rv) } });
    this.#store.set(key, stored);
    return structuredClone(stored);
  }
}


/** The error of a request the API server does not answer (connection refused), as undici throws it. */
function refused(): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }) });
}

/** What pod GC decided for one force deletion, as its live re-check returned it (harness.ts reads it at the deletion). */
export interface PodGCWriteSeen {
  uid: string;
  /** The condition its `Failed` patch carries: none when the pod was already terminal (no patch), or when the pass adds none. */
  condition: PodCondition | undefined;
}

/** The condition a pod GC re-check returned: a condition (this tree) or a plan with an optional one (issue 53 item 2's `ForceDeletePlan`). */
function conditionOf(r: unknown): PodCondition | undefined {
  if (r === undefined || r === null || typeof r !== 'object') return undefined;
  if ('type' in r && 'status' in r) return r as PodCondition;
  if ('condition' in r) return (r as { condition?: PodCondition }).condition;
  return undefined;
}

/** One process: its caches, controllers, leader election and what the vocabulary did to it. */
export class Proc {
  readonly id: number;
  /** The process's clock: the controllers' wall clock (NTP steps), and timers that wait while it is paused. */
  readonly clock: Clock;
  caches!: ProcessCaches;
  list: { controller: RunnableController }[] = [];
  elector!: LeaseElector;
  stopped = false;
  paused = false;
  /** Without a standby: once resumed and out of its Lease, it exits and its Deployment starts it again. */
  restartOnExit = false;
  /** When its controllers started (epoch ms); undefined before. */
  startedAt: number | undefined;
  /** The last API server outage it lived through: its start, the API's return, when its Node cache relisted, and when its Node and Lease caches both had (epoch ms). */
  outage: { from: number; to: number; nodesAt: number; sightAt: number } | undefined;
  /** Pod GC's live reads of a node that answered 404, by node name: when (epoch ms). */
  readonly gcNode404 = new Map<string, number>();
  /** Pod GC's last re-check of each pod (`namespace/name`) before a force deletion. */
  readonly gcWrites = new Map<string, PodGCWriteSeen>();
  readonly #deferred: { fn: () => void; cancelled: boolean }[] = [];
  readonly #onResume: (() => void)[] = [];
  readonly #truth: FuzzClock;
  /** Each informer's reflector backoff: the same manager across outages, as one reflector keeps it. */
  readonly #backoffs = new Map<WatchedResource, ReflectorBackoff>();
  #backoffNow = 0;
  #random: () => number = () => 0.5;

  /**
   * @param id the process's number in the run.
   * @param truth the run's clock (the API's time).
   * @param offsetMs the controllers' wall-clock offset (NTP steps), read at each call.
   */
  constructor(id: number, truth: FuzzClock, offsetMs: () => number) {
    this.id = id;
    this.#truth = truth;
    const setTimeout = (fn: () => void, d: number): TimerHandle => {
      const entry = { fn, cancelled: false };
      const inner = truth.setTimeout(() => {
        if (entry.cancelled || this.stopped) return;
        if (this.paused) this.#deferred.push(entry);
        else fn();
      }, d);
      return {
        cancel: () => {
          entry.cancelled = true;
          inner.cancel();
        },
      };
    };
    this.clock = {
      now: () => truth.now() + offsetMs(),
      monotonic: () => truth.now(),
      setTimeout,
      sleep: (d) => new Promise<void>((resolve) => setTimeout(resolve, d)),
    };
    for (const r of WATCHED) this.#backoffs.set(r, new ReflectorBackoff({ clock: { monotonic: () => this.#backoffNow }, random: () => this.#random() }));
  }

  /** The process stops running: its timers and deliveries wait until {@link resume}. */
  pause(): void {
    this.paused = true;
    this.caches.pause();
  }

  /**
   * The process runs again. As Node's event loop after a stall: the timers that fell due fire first
   * (the timers phase), each settling before the next, and then what its watch streams delivered
   * meanwhile (the poll phase), in order; a write it had under way is sent after them.
   */
  resume(): void {
    if (!this.paused || this.stopped) return;
    this.paused = false;
    for (const d of this.#deferred.splice(0)) this.#truth.setTimeout(() => d.cancelled || this.stopped || d.fn(), 0);
    this.#truth.setTimeout(() => this.caches.resume(), 0);
    for (const r of this.#onResume.splice(0)) this.#truth.setTimeout(r, 0);
  }

  /** Resolves once the process runs (at once unless it is paused). */
  #running(): Promise<void> {
    return this.paused ? new Promise<void>((r) => this.#onResume.push(r)) : Promise.resolve();
  }

  /** Whether this process may write now: `run`'s fence (`canWrite`: the elector's `isLeader()`). */
  canWrite(): boolean {
    return !this.stopped && !this.paused && this.elector.isLeader();
  }

  /**
   * When each informer relists after an API server outage of [`fromMs`, `toMs`), epoch ms:
   * client-go's reflector retries the broken watch with its backoff (`ReflectorBackoff`, jitter from
   * `random`); the first attempt at or after the return is a watch from the old resourceVersion,
   * which the restarted API server answers 410, and the relist comes one more step later
   * (reflector.go: `watch` returns on the expired error, `ListAndWatch` returns, `Until` waits
   * `delayHandler()`). With `unlisted` (the process started during the outage) the attempts are
   * lists, and the first one after the return succeeds.
   */
  relistTimes(fromMs: number, toMs: number, random: () => number, unlisted: boolean): Map<WatchedResource, number> {
    this.#random = random;
    const out = new Map<WatchedResource, number>();
    for (const [r, b] of this.#backoffs) {
      let t = fromMs;
      this.#backoffNow = t;
      if (!unlisted) {
        // The broken stream's first retry waits one step.
        t += b.step();
      }
      while (t < toMs) {
        this.#backoffNow = t;
        t += b.step();
      }
      if (!unlisted) {
        // That attempt's watch gets 410; the relist waits one more step.
        this.#backoffNow = t;
        t += b.step();
      }
      out.set(r, t);
    }
    return out;
  }

  /**
   * The process's I/O, as `run` wires it: every write passes the fence right before it is sent
   * (refused with `FencedError` once the elector no longer holds the Lease), waits while the process
   * is paused, and fails while the API server is down; live reads fail then too. Pod GC's live node
   * reads and re-checks are recorded for the invariants.
   * @param io the in-memory cluster's I/O (src/whatif/sources.ts `clusterIO`).
   * @param apiDown whether the API server is down now.
   */
  wrapIO(io: ControllerIO, apiDown: () => boolean): ControllerIO {
    const write = async (): Promise<void> => {
      await this.#running();
      // The fence first, as the throttle checks it before it sends anything.
      if (!this.canWrite()) throw new FencedError();
      if (apiDown()) throw refused();
    };
    const read = async (resource: 'node' | 'pod' | 'volumeattachment' | 'lease', name: string): Promise<void> => {
      await this.#running();
      if (apiDown()) throw new LiveReadError(resource, name, 'error', refused());
    };
    const nl = io.nodeLifecycleWrites();
    const te = io.taintEvictionWrites();
    const gc = io.podGCWrites();
    const fd = io.forceDetachWrites();
    const ev = io.affinityEvictor();
    return {
      events: io.events,
      readNodeLease: async (n) => {
        await read('lease', n);
        return io.readNodeLease(n);
      },
      nodeLifecycleWrites: () => ({
        ...nl,
        swapNodeTaints: async (...a) => (await write(), nl.swapNodeTaints(...a)),
        updateNodeConditions: async (...a) => (await write(), nl.updateNodeConditions(...a)),
        markPodNotReady: async (...a) => (await write(), nl.markPodNotReady(...a)),
        evictPodLegacy: async (...a) => (await write(), nl.evictPodLegacy(...a)),
        patchNodeLabels: async (...a) => (await write(), nl.patchNodeLabels(...a)),
      }),
      taintEvictionWrites: () => ({
        addDisruptionCondition: async (...a) => (await write(), te.addDisruptionCondition(...a)),
        deletePod: async (...a) => (await write(), te.deletePod(...a)),
      }),
      podGCWrites: () => ({
        getNode: async (name) => {
          await read('node', name);
          const n = await gc.getNode(name);
          if (n === undefined) this.gcNode404.set(name, this.#truth.now());
          return n;
        },
        forceDeletePod: async (namespace, name, uid, recheck, sendCheck) => {
          await write();
          const seen: typeof recheck = async (live: Pod) => {
            const r = await recheck(live);
            // The real writer patches only a pod that is not terminal yet (Failed, with the condition).
            if (r !== undefined) this.gcWrites.set(`${namespace}/${name}`, { uid, condition: live.phase === 'Succeeded' || live.phase === 'Failed' ? undefined : conditionOf(r) });
            return r;
          };
          return gc.forceDeletePod(namespace, name, uid, seen, sendCheck);
        },
      }),
      forceDetachWrites: () => ({
        getNode: async (n) => (await read('node', n), fd.getNode(n)),
        listPodsOnNode: async (n) => (await read('pod', n), fd.listPodsOnNode(n)),
        getVolumeAttachment: async (n) => (await read('volumeattachment', n), fd.getVolumeAttachment(n)),
        deleteVolumeAttachment: async (...a) => (await write(), fd.deleteVolumeAttachment(...a)),
      }),
      affinityEvictor: () => ({ evict: async (...a) => (await write(), ev.evict(...a)) }),
    };
  }

  /** A leader elector for this process over `api`, with client-go's default durations on the process's clock. */
  makeElector(api: LeaseApi, onStartedLeading: () => void, onStoppedLeading: () => void): LeaseElector {
    this.elector = new LeaseElector({ api, ...LEADER_LEASE, identity: `fuzz-${this.id}`, clock: this.clock, random: () => 0.5, onStartedLeading, onStoppedLeading });
    return this.elector;
  }
}
