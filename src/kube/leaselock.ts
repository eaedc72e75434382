/**
 * The narrow Lease API the leader elector uses: get, create and update one
 * `coordination.k8s.io/v1` Lease (updates guarded by `metadata.resourceVersion`), and a watch of it.
 *
 * Mirrors `staging/src/k8s.io/client-go/tools/leaderelection/resourcelock/leaselock.go`
 * (`LeaseLock`: `Get`, `Create`, `Update`, `LeaseSpecToLeaderElectionRecord`,
 * `LeaderElectionRecordToLeaseSpec`). Split from leaderelection.ts, which re-exports it.
 */
import { Watch, type CoordinationV1Api, type KubeConfig, type V1Lease, type V1MicroTime } from '@kubernetes/client-node';
import { realClock, type Clock, type TimerHandle } from '../util/clock.js';
import { isNotFound } from './client.js';
import { toMicroTime } from './objects.js';

/** The part of a Lease's metadata the elector reads and writes back. */
export interface LeaseMeta {
  name: string;
  namespace: string;
  /** Opaque; sent back on update so that the write fails with 409 if anyone wrote in between. */
  resourceVersion?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * `LeaseSpec` on the wire. Times are metav1.MicroTime **strings** (six fractional digits), as the
 * API server returns them and as {@link toMicroTime} writes them.
 */
export interface LeaseSpecRecord {
  holderIdentity?: string;
  /** seconds */
  leaseDurationSeconds?: number;
  /** MicroTime string */
  acquireTime?: string;
  /** MicroTime string */
  renewTime?: string;
  leaseTransitions?: number;
}

/** A Lease as the narrow API moves it. */
export interface LeaseObject {
  metadata: LeaseMeta;
  spec: LeaseSpecRecord;
}

/**
 * The Lease operations the elector needs. Errors carry the HTTP status in a numeric `code`
 * (client-node's `ApiException`, or any error with `code`), read with `isConflict`.
 */
export interface LeaseApi {
  /** Reads a Lease. @returns the Lease, or `undefined` on 404. @throws on any other error. */
  get(namespace: string, name: string): Promise<LeaseObject | undefined>;
  /** Creates a Lease. @returns the stored object (with its resourceVersion). @throws 409 when it already exists. */
  create(lease: LeaseObject): Promise<LeaseObject>;
  /**
   * Replaces a Lease, guarded by `lease.metadata.resourceVersion`.
   * @returns the stored object. @throws 409 when the resourceVersion is stale, 404 when it is gone.
   */
  replace(lease: LeaseObject): Promise<LeaseObject>;
  /** Deletes a Lease. @throws 404 when it does not exist. */
  delete(namespace: string, name: string): Promise<void>;
  /**
   * Optional: calls `onChange` (with no payload) whenever the Lease may have changed, until the
   * returned function is called. Only a hint; the elector still reads the Lease itself.
   */
  watch?(namespace: string, name: string, onChange: () => void): () => void;
}

function microTimeString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v instanceof Date && !Number.isNaN(v.getTime())) return toMicroTime(v.getTime());
  return undefined;
}

function fromV1Lease(lease: V1Lease, fallbackNamespace: string, fallbackName: string): LeaseObject {
  const m = lease.metadata ?? {};
  const s = lease.spec ?? {};
  const metadata: LeaseMeta = { name: m.name ?? fallbackName, namespace: m.namespace ?? fallbackNamespace };
  if (m.resourceVersion !== undefined) metadata.resourceVersion = m.resourceVersion;
  if (m.uid !== undefined) metadata.uid = m.uid;
  if (m.labels !== undefined) metadata.labels = m.labels;
  if (m.annotations !== undefined) metadata.annotations = m.annotations;
  const spec: LeaseSpecRecord = {};
  if (s.holderIdentity !== undefined) spec.holderIdentity = s.holderIdentity;
  if (s.leaseDurationSeconds !== undefined) spec.leaseDurationSeconds = s.leaseDurationSeconds;
  const acquire = microTimeString(s.acquireTime);
  if (acquire !== undefined) spec.acquireTime = acquire;
  const renew = microTimeString(s.renewTime);
  if (renew !== undefined) spec.renewTime = renew;
  if (s.leaseTransitions !== undefined) spec.leaseTransitions = s.leaseTransitions;
  return { metadata, spec };
}

function toV1Lease(lease: LeaseObject): V1Lease {
  // client-node's serializer has no entry for V1MicroTime and passes the value through as is
  // (typescript-notes.md §1.7), so the MicroTime strings reach the wire unchanged; the cast only
  // satisfies the generated type, which claims a Date subclass.
  const asMicroTime = (t: string | undefined): V1MicroTime | undefined => t as unknown as V1MicroTime | undefined;
  const { acquireTime, renewTime, ...rest } = lease.spec;
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...lease.metadata },
    spec: {
      ...rest,
      ...(acquireTime !== undefined ? { acquireTime: asMicroTime(acquireTime) } : {}),
      ...(renewTime !== undefined ? { renewTime: asMicroTime(renewTime) } : {}),
    },
  };
}

/** Options of {@link coordinationLeaseApi}. */
export interface CoordinationLeaseApiOptions {
  /** When given, {@link LeaseApi.watch} is provided (a watch on the one Lease, reconnecting with backoff from 1 s to 30 s). */
  kubeConfig?: KubeConfig;
  /** Clock for the reconnect delay. Default {@link realClock}. */
  clock?: Clock;
}

/**
 * The {@link LeaseApi} over client-node's `CoordinationV1Api` (`read/create/replace/deleteNamespacedLease`).
 * Read-back MicroTimes (strings at run time, see typescript-notes.md §1.7) stay strings.
 * @param api a `CoordinationV1Api` (e.g. `KubeClients.coordination`).
 * @param opts see {@link CoordinationLeaseApiOptions}.
 * @returns the narrow API; its methods reject with client-node's `ApiException` on HTTP errors.
 * Mirrors client-go `resourcelock.LeaseLock` (`Get`, `Create`, `Update`).
 */
export function coordinationLeaseApi(api: CoordinationV1Api, opts: CoordinationLeaseApiOptions = {}): LeaseApi {
  const clock = opts.clock ?? realClock;
  const leaseApi: LeaseApi = {
    async get(namespace, name) {
      try {
        return fromV1Lease(await api.readNamespacedLease({ name, namespace }), namespace, name);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async create(lease) {
      const { namespace, name } = lease.metadata;
      return fromV1Lease(await api.createNamespacedLease({ namespace, body: toV1Lease(lease) }), namespace, name);
    },
    async replace(lease) {
      const { namespace, name } = lease.metadata;
      return fromV1Lease(await api.replaceNamespacedLease({ name, namespace, body: toV1Lease(lease) }), namespace, name);
    },
    async delete(namespace, name) {
      await api.deleteNamespacedLease({ name, namespace });
    },
  };
  const kc = opts.kubeConfig;
  if (kc) {
    leaseApi.watch = (namespace, name, onChange) => {
      let stopped = false;
      let controller: AbortController | undefined;
      let retry: TimerHandle | undefined;
      // 1 s after a normal close; doubling up to 30 s while it keeps failing (e.g. 403 without the
      // watch verb), so a missing permission costs little. Any event resets it.
      let delayMs = 1000;
      const reconnect = (): void => {
        if (stopped) return;
        retry = clock.setTimeout(start, delayMs);
        delayMs = Math.min(30_000, delayMs * 2);
      };
      function start(): void {
        if (stopped) return;
        new Watch(kc as KubeConfig)
          .watch(
            `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
            { fieldSelector: `metadata.name=${name}`, allowWatchBookmarks: false },
            () => {
              delayMs = 1000;
              onChange();
            },
            () => reconnect(),
          )
          .then(
            (c) => {
              controller = c;
              if (stopped) c.abort();
            },
            () => reconnect(),
          );
      }
      start();
      return () => {
        stopped = true;
        retry?.cancel();
        controller?.abort();
      };
    };
  }
  return leaseApi;
}
