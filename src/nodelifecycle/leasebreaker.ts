/**
 * The health part's use of the Lease circuit breaker (`NodeControllerLeaseCircuitBreaker`,
 * kubernetes #138698): the live Lease read before an expired node is acted on, and the
 * controller-wide hold while the Lease cache is behind, with their log lines. The decisions are
 * the pure ones of leasecheck.ts; the I/O is the injected {@link LeaseCircuitBreakerIO}.
 *
 * Mirrors the `NodeControllerLeaseCircuitBreaker` branch of upstream `tryUpdateNodeHealth`
 * (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`) and its `consistencyStore`.
 */
import { describeError } from '../kube/client.js';
import type { Logger } from '../log/logger.js';
import type { LeaseCircuitBreakerIO } from './controller.js';
import { LeaseCacheConsistency, liveLeaseVerdict } from './leasecheck.js';

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
