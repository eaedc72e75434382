/**
 * Per-request timeouts of the typed clients (src/kube/client.ts `makeClients`): a request that gets
 * no answer fails with `RequestTimeoutError` instead of waiting undici's 300 s, frees its in-flight
 * write slot, and the work queue retries it. The "API server" here is a TCP listener that accepts
 * connections and never answers: the one behaviour of a hung server these tests need, and one a
 * real kube-apiserver cannot be made to show on demand.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  DEFAULT_READ_TIMEOUT_MS,
  DEFAULT_WRITE_TIMEOUT_MS,
  isNotFound,
  isRequestTimeout,
  makeClients,
  RequestTimeoutError,
  type KubeClients,
} from '../../src/kube/client.js';
import { ApiWriteThrottle } from '../../src/kube/writer.js';
import { ItemExponentialFailureRateLimiter, WorkQueue } from '../../src/kube/workqueue.js';
import { realClock } from '../../src/util/clock.js';
import { HungServer, kubeConfigFor } from '../support/hung-server.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('per-request timeout of the typed clients', () => {
  let server: HungServer;
  let clients: KubeClients;

  beforeEach(async () => {
    server = new HungServer();
    const port = await server.listen();
    clients = makeClients(kubeConfigFor(port), { writeTimeoutMs: 200, readTimeoutMs: 300 });
  });
  afterEach(async () => {
    await server.close();
  });

  test('defaults: 30 s for writes, 60 s for reads (the API server\'s own --request-timeout)', () => {
    assert.equal(DEFAULT_WRITE_TIMEOUT_MS, 30_000);
    assert.equal(DEFAULT_READ_TIMEOUT_MS, 60_000);
  });

  test('a hung write rejects with RequestTimeoutError after its timeout; it is not a 404 ("gone")', { timeout: 10_000 }, async () => {
    const started = Date.now();
    const err = await clients.core.patchNode({ name: 'n1', body: { metadata: { labels: { a: 'b' } } } }, MERGE).then(
      () => assert.fail('a hung write must not succeed'),
      (e: unknown) => e,
    );
    const tookMs = Date.now() - started;
    assert.ok(err instanceof RequestTimeoutError, `got ${String(err)}`);
    assert.ok(isRequestTimeout(err));
    assert.equal(err.method, 'PATCH');
    assert.equal(err.timeoutMs, 200);
    assert.equal(isNotFound(err), false, 'a timeout never proves an object gone');
    assert.ok(tookMs >= 190 && tookMs < 5000, `timed out after ${tookMs} ms`);
    assert.equal(server.requests, 1);
  });

  test('a hung read gets the read timeout', { timeout: 10_000 }, async () => {
    const err = await clients.core.readNode({ name: 'n1' }).then(
      () => assert.fail('a hung read must not succeed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RequestTimeoutError);
    assert.equal(err.method, 'GET');
    assert.equal(err.timeoutMs, 300);
  });

  test('a timed-out write through the throttle and a work queue frees its in-flight slot and is retried', { timeout: 10_000 }, async () => {
    const throttle = new ApiWriteThrottle({ qps: -1, burst: 0, maxInFlight: 1 });
    const seen: unknown[] = [];
    const queue = new WorkQueue({
      name: 'timeouts',
      clock: realClock,
      rateLimiter: new ItemExponentialFailureRateLimiter(1, 10),
      sync: async (key) => {
        try {
          await throttle.schedule(() => clients.core.patchNode({ name: key, body: { metadata: { labels: { a: 'b' } } } }, MERGE), 'node');
        } catch (err) {
          seen.push(err);
          throw err;
        }
      },
    });
    try {
      queue.add('n1');
      const deadline = Date.now() + 8000;
      while (queue.stats().failed < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const stats = queue.stats();
      assert.ok(stats.failed >= 2, `the write was retried after timing out (failed ${stats.failed})`);
      assert.equal(stats.succeeded, 0, 'a timed-out write never counts as success');
      assert.ok(seen.every(isRequestTimeout));
      assert.ok(server.requests >= 2, `the retry reached the server (${server.requests} requests)`);
      // With one slot, the second attempt could only be sent because the first freed it.
      assert.ok(throttle.stats().executed >= 2);
    } finally {
      await queue.shutDown();
      await throttle.stop();
    }
  });
});
