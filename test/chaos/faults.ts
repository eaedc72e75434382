/**
 * The chaos suite's faults, each a real injection that can be switched on and off: Toxiproxy
 * toxics on a replica's proxy (latency, reset_peer), etcd compaction, a ValidatingAdmissionPolicy,
 * API Priority and Fairness with a noisy neighbour, and a stalled Lease watch (the stall relay).
 * The scenarios (scenarios.ts, scenarios-more.ts) switch one on during a failure wave; the soak
 * (soak.ts) switches a random one on every 1–3 minutes.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent as UndiciAgent, fetch } from 'undici';
import { sleep } from './common.js';
import { informersOf, leaseInformerOf, type ChaosWorld, type Replica } from './harness.js';

/** A fault: switched on, and off again later. `on` may start a loop that `off` ends. */
export interface Fault {
  /** Short name, as reports and the soak's table show it. */
  readonly name: string;
  on(replica: Replica, dead: readonly string[]): Promise<void>;
  off(replica: Replica): Promise<void>;
}

/** Toxiproxy `latency` of `ms` on every answer to the replica (downstream: responses and watch events arrive late). */
export function latencyFault(world: ChaosWorld, ms = 2000): Fault {
  return {
    name: `latency ${ms / 1000} s`,
    on: (r) => world.toxiproxy.addToxic(r.proxy, { name: 'latency', type: 'latency', stream: 'downstream', attributes: { latency: ms, jitter: 0 } }),
    off: (r) => world.toxiproxy.removeToxic(r.proxy, 'latency').catch(() => undefined),
  };
}

/**
 * Toxiproxy `reset_peer` every 10 s while on: the toxic is on for 1 s each time, so every connection
 * that carries a byte meanwhile, and every new one, is reset.
 */
export function resetPeerFault(world: ChaosWorld): Fault & { rounds(): number } {
  let stop = false;
  let rounds = 0;
  let loop: Promise<void> = Promise.resolve();
  return {
    name: 'reset_peer every 10 s',
    rounds: () => rounds,
    on: async (r) => {
      stop = false;
      loop = (async () => {
        while (!stop) {
          rounds++;
          await world.toxiproxy.addToxic(r.proxy, { name: 'reset', type: 'reset_peer', stream: 'downstream', attributes: { timeout: 0 } });
          await sleep(1000);
          await world.toxiproxy.removeToxic(r.proxy, 'reset').catch(() => undefined);
          for (let i = 0; i < 90 && !stop; i++) await sleep(100);
        }
      })();
    },
    off: async () => {
      stop = true;
      await loop;
    },
  };
}

/** A ValidatingAdmissionPolicy (GA since 1.30) and its binding denying `user`'s deletion of pods bound to `nodes` (every pod when `nodes` is undefined). */
export function denyPodDeletions(user: string, nodes: readonly string[] | undefined): string {
  const onNodes = nodes === undefined ? 'true' : `oldObject.spec.nodeName in ${JSON.stringify(nodes)}`;
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'nlc-chaos-deny-pod-deletions' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] }] },
      validations: [{ expression: `request.userInfo.username != '${user}' || !(${onNodes})`, message: 'chaos: the controller may not delete pods of these nodes now' }],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'nlc-chaos-deny-pod-deletions' },
    spec: { policyName: 'nlc-chaos-deny-pod-deletions', validationActions: ['Deny'] },
  };
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [policy, binding] });
}

/**
 * A ValidatingAdmissionPolicy denies the replica's pod deletions while on: of the nodes `pick`
 * chooses from the dead ones (every pod when it returns undefined).
 */
export function admissionDenialFault(world: ChaosWorld, pick: (dead: readonly string[]) => readonly string[] | undefined = () => undefined): Fault & { denied(): readonly string[] | undefined } {
  let policy = '';
  let denied: readonly string[] | undefined;
  return {
    name: 'admission policy denies pod deletions',
    denied: () => denied,
    on: async (r, dead) => {
      denied = pick(dead);
      policy = denyPodDeletions(r.user, denied);
      await world.kubectl(['apply', '-f', '-'], policy);
      // Admission policies take effect once the API server's informer has them; a second is plenty here.
      await sleep(2000);
    },
    off: async () => {
      if (policy) await world.kubectl(['delete', '--ignore-not-found', '-f', '-'], policy);
      policy = '';
    },
  };
}

/** Informer relists of a replica so far (summed over its informers, from /debug/state). */
export async function relists(r: Replica): Promise<number> {
  return (await informersOf(r)).reduce((sum, i) => sum + (i.relists ?? 0), 0);
}

/** etcd's v3 HTTP gateway (the control plane's build has no etcdctl): one JSON POST. @throws {Error} on a non-2xx answer. */
async function etcd(port: number, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Compacts etcd at its current revision (physical) and defragments it. @returns the revision compacted at. */
export async function compactEtcd(port: number): Promise<number> {
  // key "\0" with range_end "\0": every key; count_only: only the header (its revision) is wanted.
  const range = await etcd(port, '/v3/kv/range', { key: 'AA==', range_end: 'AA==', count_only: true });
  const revision = Number((range['header'] as { revision?: string } | undefined)?.revision);
  if (!Number.isFinite(revision)) throw new Error('etcd /v3/kv/range returned no revision');
  await etcd(port, '/v3/kv/compaction', { revision, physical: true });
  await etcd(port, '/v3/maintenance/defragment', {});
  return revision;
}

/**
 * etcd compacted at its current revision and defragmented every `everyMs` (default 5 s) while on
 * (with `everyMs` 0: once, as the API server's own periodic compaction and an operator's defrag
 * would); right after the first compaction every connection of the replica is reset, so each watch
 * resumes from a resourceVersion older than the compaction.
 */
export function compactionFault(world: ChaosWorld, everyMs = 5000): Fault & { compactions(): number; relistsDuring(): number | undefined } {
  let stop = false;
  let compactions = 0;
  let loop: Promise<void> = Promise.resolve();
  let before = 0;
  let after: number | undefined;
  return {
    name: everyMs > 0 ? `etcd compaction + defrag every ${everyMs / 1000} s` : 'etcd compaction + defrag',
    compactions: () => compactions,
    relistsDuring: () => (after === undefined ? undefined : after - before),
    on: async (r) => {
      stop = false;
      after = undefined;
      before = await relists(r);
      await compactEtcd(world.ports.etcd);
      compactions++;
      await world.toxiproxy.addToxic(r.proxy, { name: 'reset', type: 'reset_peer', stream: 'downstream', attributes: { timeout: 0 } });
      await sleep(500);
      await world.toxiproxy.removeToxic(r.proxy, 'reset');
      loop = (async () => {
        while (!stop && everyMs > 0) {
          for (let i = 0; i < everyMs / 100 && !stop; i++) await sleep(100);
          if (stop) break;
          await compactEtcd(world.ports.etcd)
            .then(() => compactions++)
            .catch(() => undefined);
        }
      })();
    },
    off: async (r) => {
      stop = true;
      await loop;
      after ??= await relists(r);
    },
  };
}

/**
 * APF objects: a FlowSchema for the replica's ServiceAccount and a noisy neighbour's, core API group
 * only, into a priority level of zero nominal shares (the smallest the API allows; the server still
 * gives it one seat), so whatever the neighbour leaves is all the controller gets.
 */
export function apfObjects(serviceAccounts: readonly string[], namespace: string): string {
  const plc = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name: 'nlc-chaos-jail' },
    // Zero shares, nothing lent or borrowed: the "jail" the v1 API allows. A request that finds no
    // free seat is rejected with 429 and a Retry-After the server computes from its recent rejections.
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
  };
  const fs = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'nlc-chaos-controller' },
    spec: {
      priorityLevelConfiguration: { name: 'nlc-chaos-jail' },
      matchingPrecedence: 100,
      distinguisherMethod: { type: 'ByUser' },
      // Nodes, pods and the rest of the core group; Leases (election, the live Lease read) and Events
      // are left to the default schemas, as kube-controller-manager's leader election has its own.
      rules: [
        {
          subjects: serviceAccounts.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { name, namespace } })),
          resourceRules: [{ verbs: ['*'], apiGroups: [''], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        },
      ],
    },
  };
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [plc, fs] });
}

const INSECURE = new UndiciAgent({ connect: { rejectUnauthorized: false } });

/**
 * A noisy neighbour in the controller's priority level: `loops` concurrent clients listing pods
 * as fast as they are served (50 ms pause after a 429), until `signal` aborts. @returns requests sent.
 */
export async function noisyNeighbour(apiserverPort: number, token: string, loops: number, signal: AbortSignal): Promise<number> {
  let sent = 0;
  const loop = async (): Promise<void> => {
    while (!signal.aborted) {
      sent++;
      const res = await fetch(`https://127.0.0.1:${apiserverPort}/api/v1/pods?limit=500`, { headers: { authorization: `Bearer ${token}` }, signal, dispatcher: INSECURE }).catch(() => undefined);
      await res?.arrayBuffer().catch(() => undefined);
      if (res?.status !== 200) await sleep(50);
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  return sent;
}

/**
 * The replica's core-group requests in a one-seat APF level with a noisy neighbour (`loops`
 * clients) while on: most are answered 429 with Retry-After. The neighbour is the ServiceAccount
 * `noisy` of the chaos namespace.
 */
export function apf429Fault(world: ChaosWorld, namespace: string, loops = 6): Fault & { neighbourRequests(): number } {
  let noise: AbortController | undefined;
  let noisy: Promise<number> = Promise.resolve(0);
  let sent = 0;
  let objects = '';
  return {
    name: 'APF 429s (one-seat level, noisy neighbour)',
    neighbourRequests: () => sent,
    on: async (r) => {
      objects = apfObjects([r.name, 'noisy'], namespace);
      await world.kubectl(['apply', '-f', '-'], objects);
      noise = new AbortController();
      noisy = noisyNeighbour(world.ports.apiserver, await world.serviceAccountToken('noisy'), loops, noise.signal);
    },
    off: async () => {
      noise?.abort();
      sent += await noisy;
      noisy = Promise.resolve(0);
      if (objects) await world.kubectl(['delete', '--ignore-not-found', '-f', '-'], objects);
      objects = '';
    },
  };
}

export const LEASE_WATCH = /\/apis\/coordination\.k8s\.io\/v1\/namespaces\/kube-node-lease\/leases\?.*watch=/;

/** Every watch request (`watch=true` or `watch=1` in the query). */
export const ALL_WATCHES = /[?&]watch=(true|1)(&|$)/;

/** Every watch matching `pattern` stalls while on (connected, nothing arrives: new streams too), as scenario 2's phase 2. */
export function watchStallFault(world: ChaosWorld, pattern: RegExp, name: string): Fault {
  return {
    name,
    on: () => {
      world.relay.stall(pattern, { newStreams: true });
      return Promise.resolve();
    },
    off: () => {
      world.relay.unstall();
      return Promise.resolve();
    },
  };
}

/** Every Lease watch stalls while on (the server side). */
export function leaseWatchStallFault(world: ChaosWorld): Fault {
  return watchStallFault(world, LEASE_WATCH, 'stalled Lease watch (server side)');
}

/**
 * Whether kube-apiserver would answer a Lease watch resumed from `resourceVersion` with 410 Gone:
 * one watch request (with the admin's `token`, straight to the API server, 1 s timeout), answered 410 or with an
 * ERROR event of code 410 (the watch cache no longer holds that version; etcd's compaction has
 * removed it too). Never throws (false on any other answer).
 */
export async function leaseWatchWouldBeGone(world: ChaosWorld, resourceVersion: string, token: string): Promise<boolean> {
  const url = `https://127.0.0.1:${world.ports.apiserver}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=${encodeURIComponent(resourceVersion)}`;
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, dispatcher: INSECURE, signal: AbortSignal.timeout(10_000) });
    const body = await res.text();
    return res.status === 410 || /"code":\s*410/.test(body);
  } catch {
    return false;
  }
}

/**
 * Every watch of the replica stalled until a resume of its Lease watch would be answered 410 Gone
 * (probed every 5 s with {@link leaseWatchWouldBeGone} from the Lease informer's resourceVersion,
 * after at least `minMs`), at most `maxMs`; `off` waits for that moment before it unstalls. The API
 * server's watch cache keeps at least 75 s of events (`DefaultEventFreshDuration`; its capacity
 * doubles while the oldest event is younger, so at a steady rate it holds 75–150 s), so the stall
 * lasts as long as the cache's window really is, not a guess of it.
 */
export function stallUntilGoneFault(world: ChaosWorld, minMs: number, maxMs: number): Fault & { goneAfterMs(): number | undefined } {
  const stall = watchStallFault(world, ALL_WATCHES, 'every watch stalled');
  let startedAt = 0;
  let goneAt: number | undefined;
  return {
    name: 'every watch stalled until a resume is answered 410',
    goneAfterMs: () => (goneAt === undefined ? undefined : goneAt - startedAt),
    on: async (r, dead) => {
      startedAt = Date.now();
      goneAt = undefined;
      await stall.on(r, dead);
    },
    off: async (r) => {
      await sleep(Math.max(0, startedAt + minMs - Date.now()));
      const token = (await readFile(join(world.stateDir, 'admin.token'), 'utf8')).trim();
      while (goneAt === undefined && Date.now() - startedAt < maxMs) {
        const rv = (await leaseInformerOf(r))?.resourceVersion;
        if (rv && (await leaseWatchWouldBeGone(world, rv, token))) goneAt = Date.now();
        else await sleep(5000);
      }
      await stall.off(r);
    },
  };
}
