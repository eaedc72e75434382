/**
 * Per-request timeouts of the typed clients (src/kube/client.ts `makeClients`): a request that gets
 * no answer fails with `RequestTimeoutError` instead of waiting undici's 300 s, frees its in-flight
 * write slot, and the work queue retries it. The "API server" here is a TCP listener that accepts
 * connections and never answers: the one behaviour of a hung server these tests need, and one a
 * real kube-apiserver cannot be made to show on demand.
 */
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpMethod, Observable, PatchStrategy, RequestContext, ResponseContext, setHeaderOptions, type HttpLibrary } from '@kubernetes/client-node';
import {
  DEFAULT_READ_TIMEOUT_MS,
  DEFAULT_WRITE_TIMEOUT_MS,
  isNotFound,
  isRequestTimeout,
  makeClients,
  RequestTimeoutError,
  type KubeClients,
  withRequestTimeout,
} from '../../src/kube/client.js';
import { ApiWriteThrottle } from '../../src/kube/throttle.js';
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

describe('withRequestTimeout: the deadline of a finished request', () => {
  const answering = (text: string): HttpLibrary => ({
    send: () => new Observable(Promise.resolve(new ResponseContext(200, {}, { text: async () => text, binary: async () => Buffer.from(text), stream: () => null }))),
  });
  const failing: HttpLibrary = { send: () => new Observable(Promise.reject(new Error('ECONNREFUSED'))) };
  const request = (method: HttpMethod) => new RequestContext('https://127.0.0.1:1/api/v1/nodes/n1', method);
  const t = { writeTimeoutMs: 30_000, readTimeoutMs: 60_000 };
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test('is cleared once the body has been read: the old signal is never aborted 30 s later', async () => {
    const write = request(HttpMethod.PATCH);
    const res = await withRequestTimeout(answering('{}'), t).send(write).toPromise();
    assert.equal(await res.body.text(), '{}');
    const read = request(HttpMethod.GET);
    await (await withRequestTimeout(answering('{}'), t).send(read).toPromise()).body.binary();
    mock.timers.tick(61_000);
    assert.equal(write.getSignal()?.aborted, false, 'cleared after text()');
    assert.equal(read.getSignal()?.aborted, false, 'cleared after binary()');
  });

  test('still fires while the body is unread, with RequestTimeoutError as the reason', async () => {
    const write = request(HttpMethod.PATCH);
    await withRequestTimeout(answering('{}'), t).send(write).toPromise();
    mock.timers.tick(29_999);
    assert.equal(write.getSignal()?.aborted, false);
    mock.timers.tick(1);
    assert.ok(write.getSignal()?.reason instanceof RequestTimeoutError);
  });

  test('is cleared when the request fails, and the error is passed on unchanged', async () => {
    const del = request(HttpMethod.DELETE);
    await assert.rejects(withRequestTimeout(failing, t).send(del).toPromise(), /ECONNREFUSED/);
    mock.timers.tick(31_000);
    assert.equal(del.getSignal()?.aborted, false);
  });

  test('0 means no timeout: no signal is set', async () => {
    const req = request(HttpMethod.GET);
    await withRequestTimeout(answering('{}'), { writeTimeoutMs: 30_000, readTimeoutMs: 0 }).send(req).toPromise();
    assert.equal(req.getSignal(), undefined);
  });
});
