/**
 * The Lease circuit breaker of the node lifecycle controller (`NodeControllerLeaseCircuitBreaker`,
 * beta and on by default in kube-controller-manager 1.37, kubernetes #138698): one concept, in two
 * layers.
 * - Pure: {@link liveLeaseVerdict} decides on the live read of an expired node's Lease;
 *   {@link LeaseCacheConsistency} is the controller-wide hold that follows a mismatch: no node is
 *   judged until the Lease informer has caught up with the resourceVersion the API server returned.
 * - The health part's use of it, {@link LeaseCircuitBreaker}: the live read before an expired node
 *   is acted on and the hold, with their log lines, over the injected {@link LeaseCircuitBreakerIO}
 *   (no I/O of its own).
 *
 * Upstream: the `NodeControllerLeaseCircuitBreaker` branch of `tryUpdateNodeHealth` in
 * `pkg/controller/nodelifecycle/node_lifecycle_controller.go` and its `consistencyStore`,
 * `RealConsistencyStore` in `pkg/controller/util/consistency/consistency.go`,
 * `CompareResourceVersion` in `k8s.io/apimachinery/pkg/util/resourceversion/resourceversion.go`.
 */
import { describeError } from '../kube/client.js';
import type { Logger } from '../log/logger.js';
import type { LeaseCircuitBreakerIO } from './parts.js';

/**
 * Compares two resourceVersions as apimachinery does: both must be positive decimal integers without
 * leading zeros; a shorter one is smaller, equal lengths compare lexically.
 * @returns -1, 0 or 1 (a < b, a == b, a > b), or `undefined` when either is not well formed
 *   (upstream returns an `InvalidResourceVersion` error). Never throws.
 * Mirrors `resourceversion.CompareResourceVersion`.
 */
export function compareResourceVersion(a: string, b: string): -1 | 0 | 1 | undefined {
  const wellFormed = (s: string): boolean => /^[1-9][0-9]*$/.test(s);
  if (!wellFormed(a) || !wellFormed(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/** What the live Lease read allows: act on the expiry, or hold because the Lease cache is behind. */
export type LiveLeaseVerdict = { act: true } | { act: false; liveResourceVersion: string };

/**
 * Decides on the live read of an expired node's Lease.
 * - 404 (`live` undefined): the node has no Lease; upstream goes on and marks the node.
 * - the live resourceVersion equals the one saved with the node's health (the Lease seen at its
 *   last renewal; `""` when none was saved): the cache was right, act.
 * - any other resourceVersion: the Lease changed since the renewal the controller saw, so the cache
 *   may be stale; do not act, and hold every node until the cache has caught up.
 * A read that failed otherwise never reaches this function: the shell skips the node (fail closed).
 * @param savedResourceVersion `NodeHealth.lease.resourceVersion`, or undefined when no Lease is saved.
 * @param live the Lease as the API server returned it, or undefined for 404.
 * Mirrors the `NodeControllerLeaseCircuitBreaker` branch of `tryUpdateNodeHealth`, which compares
 * `liveLease.ResourceVersion != nodeHealth.lease.ResourceVersion` (not renewTime).
 */
export function liveLeaseVerdict(savedResourceVersion: string | undefined, live: { resourceVersion: string } | undefined): LiveLeaseVerdict {
  if (live === undefined) return { act: true };
  if (live.resourceVersion === (savedResourceVersion ?? '')) return { act: true };
  return { act: false, liveResourceVersion: live.resourceVersion };
}

/** Why {@link LeaseCacheConsistency.ensureReady} holds: the cache has not yet reached `wroteResourceVersion`. */
export interface LeaseCacheBehind {
  wroteResourceVersion: string;
  readResourceVersion: string;
}

/**
 * The controller-wide hold after a live Lease read found the cache behind. Upstream keys one record
 * by the empty owner name ("a controller wide consistency check") for the `leases` resource only,
 * so this is that one record.
 * Mirrors `RealConsistencyStore` (`WroteAt`, `EnsureReady`, `Clear`) with one deliberate
 * difference, only ever holding longer: an informer resourceVersion of `""` (ours: a relist is in
 * progress) holds, where upstream treats `""` as ready (its store returns `""` only when
 * the feature that tracks it is off).
 */
export class LeaseCacheConsistency {
  #wrote: string | undefined;

  /**
   * Records a resourceVersion the cache must reach; keeps the newer of the recorded and the given
   * one (upstream `ownerRecord.WroteAt`: an incomparable pair replaces the record).
   * @param resourceVersion the live Lease's `metadata.resourceVersion`.
   */
  wroteAt(resourceVersion: string): void {
    if (this.#wrote !== undefined) {
      const cmp = compareResourceVersion(this.#wrote, resourceVersion);
      if (cmp !== undefined && cmp >= 0) return;
    }
    this.#wrote = resourceVersion;
  }

  /**
   * Whether nodes may be judged now. Clears the record once the cache has reached it.
   * @param readResourceVersion the Lease informer's resourceVersion (the last list, event or
   *   bookmark it applied; upstream `LastStoreSyncResourceVersion`).
   * @returns `undefined` when ready, else what is awaited. A pair that cannot be compared counts as
   *   ready, as upstream ("continue so we don't block syncing"). Never throws.
   */
  ensureReady(readResourceVersion: string): LeaseCacheBehind | undefined {
    const wrote = this.#wrote;
    if (wrote === undefined) return undefined;
    if (readResourceVersion !== '') {
      const cmp = compareResourceVersion(wrote, readResourceVersion);
      if (cmp === undefined || cmp <= 0) {
        this.#wrote = undefined;
        return undefined;
      }
    }
    return { wroteResourceVersion: wrote, readResourceVersion };
  }

  /** The resourceVersion being awaited, if any (for `/debug/state`). */
  get awaited(): string | undefined {
    return this.#wrote;
  }
}

// ---------------------------------------------------------------------------------------------
// The health part's use of the breaker: the live read and the hold, over the injected I/O.
// ---------------------------------------------------------------------------------------------

/** The live Lease read and the hold. With no I/O (the feature gate off) it holds nothing and allows everything. */
export class LeaseCircuitBreaker {
  readonly #io: LeaseCircuitBreakerIO | undefined;
  readonly #log: Logger;
  /** The controller-wide hold after a live Lease read found the Lease cache behind (upstream `consistencyStore`). */
  readonly #leaseConsistency = new LeaseCacheConsistency();
  /** The hold was logged (once per hold). */
  #leaseHoldLogged = false;

  /** @param io the API and Lease informer I/O, undefined when the gate is off; @param log the logger. Never throws. */
  constructor(io: LeaseCircuitBreakerIO | undefined, log: Logger) {
    this.#io = io;
    this.#log = log;
  }

  /** Whether the gate is on (the live read is made). */
  get enabled(): boolean {
    return this.#io !== undefined;
  }

  /** True while a hold awaits the Lease informer (without checking whether it has caught up). */
  get holding(): boolean {
    return this.#leaseConsistency.awaited !== undefined;
  }

  /**
   * Upstream `consistencyStore.EnsureReady` at the top of `tryUpdateNodeHealth`: true while a live
   * Lease read has shown the Lease cache to be behind and the informer has not caught up yet; then
   * no node is judged. Logs the start and the end of each hold.
   */
  cacheBehind(): boolean {
    const io = this.#io;
    if (!io || this.#leaseConsistency.awaited === undefined) return false;
    const behind = this.#leaseConsistency.ensureReady(io.cacheResourceVersion());
    if (behind && !this.#leaseHoldLogged) {
      this.#leaseHoldLogged = true;
      this.#log.warn(behind, 'The Lease cache is behind the API server: no node is judged until it catches up');
    } else if (!behind && this.#leaseHoldLogged) {
      this.#leaseHoldLogged = false;
      this.#log.info({}, 'The Lease cache caught up: judging nodes again');
    }
    return behind !== undefined;
  }

  /**
   * The live read of `NodeControllerLeaseCircuitBreaker` for an expired node (upstream
   * `tryUpdateNodeHealth`): a 404 or the resourceVersion saved with the node's last seen renewal
   * lets the controller act; any other resourceVersion starts the controller-wide hold
   * ({@link cacheBehind}) and nothing is done for this node now.
   * @param nodeName the node; @param saved `NodeHealth.lease.resourceVersion` (undefined: none saved).
   * @returns true when the node may be acted on.
   * @throws the read's error for any other failure (fail closed: the health queue retries with
   *   backoff; upstream skips the node until its next pass).
   */
  async allows(nodeName: string, saved: string | undefined): Promise<boolean> {
    const io = this.#io;
    if (!io) return true;
    let live: { resourceVersion: string } | undefined;
    try {
      live = await io.readLease(nodeName);
    } catch (err) {
      this.#log.warn({ node: nodeName, err: describeError(err) }, 'Live read of the node Lease failed: not acting on the node now; retrying');
      throw err;
    }
    const verdict = liveLeaseVerdict(saved, live);
    if (verdict.act) return true;
    this.#leaseConsistency.wroteAt(verdict.liveResourceVersion);
    this.#log.warn(
      { node: nodeName, cachedResourceVersion: saved ?? '', liveResourceVersion: verdict.liveResourceVersion },
      'The node Lease changed on the API server since the cache saw it renew: not marking the node unhealthy',
    );
    return false;
  }
}
