/**
 * The taint eviction controller's deletion queue: how due deletions are attempted and retried.
 *
 * Upstream (`pkg/controller/tainteviction/taint_eviction.go` `deletePodHandler`) retries a failed
 * deletion 5 times, 10 ms apart, inside its timed worker, then gives up (kubernetes/kubernetes#140639).
 * Ours retries until the pod is gone or the eviction is no longer called for, and each retry is a
 * new turn of a rate-limited work queue (src/kube/workqueue.ts, client-go's workqueue semantics):
 * a failed attempt gives its slot back, so pods whose deletion keeps failing (a webhook or
 * admission policy denying us, missing RBAC) never hold up the other due deletions.
 */
import type { Clock } from '../util/clock.js';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, WorkQueue } from '../kube/workqueue.js';

/**
 * Failed attempts in a row after which a deletion gets its one Warning Event: upstream's retry
 * count in `deletePodHandler`, where it gives up; ours says so and goes on.
 */
export const FAILING_EVENT_AFTER = 5;

/**
 * Overall rate of retried attempts, per second, and its burst: client-go
 * `DefaultTypedControllerRateLimiter`'s bucket, so thousands of failing pods cannot take the whole
 * `--kube-api-qps` budget from deletions that would succeed.
 */
export const RETRY_QPS = 10;
export const RETRY_BURST = 100;

/** What {@link newDeletionQueue} needs. Durations in **milliseconds**. */
export interface DeletionQueueOptions {
  clock: Clock;
  /** Attempts running at once (a positive integer). */
  concurrency: number;
  /** A pod's first retry delay; doubles per failure of that pod. */
  initialDelayMs: number;
  /** Largest per-pod retry delay. */
  maxDelayMs: number;
  /** One attempt for a pod key (`namespace/name`); throw to have it retried with backoff. */
  sync: (key: string) => Promise<void>;
}

/**
 * A work queue named `taint_eviction_controller_pod_deletions` whose rate limiter is the max of
 * per-pod exponential backoff (`initialDelayMs` × 2^failures, capped at `maxDelayMs`) and an
 * overall bucket of {@link RETRY_QPS} per second, burst {@link RETRY_BURST}: client-go's
 * `DefaultTypedControllerRateLimiter` with our delays. A first attempt (`add`) is not rate limited;
 * only retries (`addRateLimited`, when `sync` throws) are.
 * @throws {RangeError} when `concurrency` is not a positive integer.
 */
export function newDeletionQueue(o: DeletionQueueOptions): WorkQueue {
  return new WorkQueue({
    name: 'taint_eviction_controller_pod_deletions',
    clock: o.clock,
    concurrency: o.concurrency,
    rateLimiter: new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(o.initialDelayMs, o.maxDelayMs), new BucketRateLimiter(RETRY_QPS, RETRY_BURST, o.clock)),
    sync: o.sync,
  });
}
