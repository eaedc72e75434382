/**
 * Component-base metrics (issue 17 item 3): `workqueue_*{name}` recorded by src/kube/workqueue.ts,
 * `rest_client_*` recorded by src/kube/client.ts (the typed clients' HTTP library) and the write
 * throttle's wait (src/kube/throttle.ts), and `node_lifecycle_controller_build_info`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpMethod, Observable, RequestContext, ResponseContext, type HttpLibrary } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { WorkQueue } from '../../src/kube/workqueue.js';
import { KubeConfig } from '@kubernetes/client-node';
import { instrumentHttpLibrary, instrumentWatch, makeClients, type WatchStarter } from '../../src/kube/client.js';
import { ApiWriteThrottle } from '../../src/kube/throttle.js';
import { createMetrics, type Metrics } from '../../src/metrics/registry.js';
import { buildStamp } from '../../src/buildinfo.js';
import { PROGRAM_VERSION } from '../../src/version.js';

/** Value of the sample `name{labels}` in the registry's text output (labels must match exactly). */
async function sample(m: Metrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  for (const metric of await m.registry.getMetricsAsJSON()) {
    for (const v of metric.values as { metricName?: string; labels: Record<string, string | number>; value: number }[]) {
      const n = v.metricName ?? metric.name;
      if (n !== name) continue;
      const keys = Object.keys(v.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => String(v.labels[k]) === labels[k])) return v.value;
    }
  }
  return undefined;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

describe('workqueue_* metrics', () => {
  test('adds, depth, queue and work duration, unfinished work and retries move as upstream queue.go does', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const clock = new FakeClock();
    let release!: () => void;
    let fail = true;
    const q = new WorkQueue({
      name: 'node_lifecycle_controller',
      clock,
      metrics: m.workqueue.provider,
      sync: async (key) => {
        if (key === 'blocked') await new Promise<void>((r) => (release = r));
        if (key === 'flaky' && fail) {
          fail = false;
          throw new Error('boom');
        }
      },
    });
    const name = { name: 'node_lifecycle_controller' };
    // Series exist at 0 before the first add, as client-go's WithLabelValues creates them.
    assert.equal(await sample(m, 'workqueue_adds_total', name), 0);
    assert.equal(await sample(m, 'workqueue_depth', name), 0);

    q.add('blocked');
    q.add('a');
    q.add('a'); // a duplicate of a waiting key is no add
    assert.equal(await sample(m, 'workqueue_adds_total', name), 2);
    await settle(); // 'blocked' runs and holds the only worker
    assert.equal(await sample(m, 'workqueue_depth', name), 1, "'a' waits");

    clock.advance(1500);
    assert.equal(await sample(m, 'workqueue_unfinished_work_seconds', name), 1.5);
    assert.equal(await sample(m, 'workqueue_longest_running_processor_seconds', name), 1.5);
    release();
    await q.onIdle();
    assert.equal(await sample(m, 'workqueue_depth', name), 0);
    assert.equal(await sample(m, 'workqueue_unfinished_work_seconds', name), 0);
    assert.equal(await sample(m, 'workqueue_work_duration_seconds_count', name), 2);
    assert.equal(await sample(m, 'workqueue_work_duration_seconds_sum', name), 1.5, "'blocked' ran 1.5 s, 'a' 0 s");
    assert.equal(await sample(m, 'workqueue_queue_duration_seconds_count', name), 2);
    assert.equal(await sample(m, 'workqueue_queue_duration_seconds_sum', name), 1.5, "'a' waited 1.5 s for the worker");
    assert.equal(await sample(m, 'workqueue_queue_duration_seconds_bucket', { ...name, le: '10' }), 2);
    assert.equal(await sample(m, 'workqueue_queue_duration_seconds_bucket', { ...name, le: '1' }), 1);

    // A failing handler is re-added through addRateLimited: one retry.
    assert.equal(await sample(m, 'workqueue_retries_total', name), 0);
    q.add('flaky');
    await q.onIdle();
    assert.equal(await sample(m, 'workqueue_retries_total', name), 1);
    await clock.advanceAsync(1000);
    await q.onIdle();
    assert.equal(await sample(m, 'workqueue_adds_total', name), 4, "'flaky' added twice");
    await q.shutDown();
  });

  test('a queue without a provider records nothing and works as before', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const q = new WorkQueue({ name: 'unmetered', clock: new FakeClock(), sync: async () => {} });
    q.add('x');
    await q.onIdle();
    assert.equal(await sample(m, 'workqueue_adds_total', { name: 'unmetered' }), undefined);
    assert.equal(q.stats().succeeded, 1);
  });
});

/** An HTTP library that answers every request with `status` (or rejects with `error`), for the wrapper only. */
function answering(status: number | Error): HttpLibrary {
  return {
    send: () =>
      new Observable(
        status instanceof Error ? Promise.reject(status) : Promise.resolve(new ResponseContext(status, {}, { text: async () => '{}', binary: async () => Buffer.alloc(0), stream: () => null })),
      ),
  };
}

describe('rest_client_* metrics', () => {
  const host = '127.0.0.1:6443';
  const req = (method: HttpMethod): RequestContext => new RequestContext(`https://${host}/api/v1/nodes/n1`, method);

  test('a request through the typed clients\' HTTP library counts code, method and host, and its latency', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const ok = instrumentHttpLibrary(answering(200), host, m.restClient.sink);
    const conflict = instrumentHttpLibrary(answering(409), host, m.restClient.sink);
    const broken = instrumentHttpLibrary(answering(new Error('ECONNRESET')), host, m.restClient.sink);
    assert.equal((await ok.send(req(HttpMethod.GET)).toPromise()).httpStatusCode, 200);
    await ok.send(req(HttpMethod.GET)).toPromise();
    await conflict.send(req(HttpMethod.PATCH)).toPromise();
    await assert.rejects(broken.send(req(HttpMethod.DELETE)).toPromise(), /ECONNRESET/);
    assert.equal(await sample(m, 'rest_client_requests_total', { code: '200', method: 'GET', host }), 2);
    assert.equal(await sample(m, 'rest_client_requests_total', { code: '409', method: 'PATCH', host }), 1);
    assert.equal(await sample(m, 'rest_client_requests_total', { code: '<error>', method: 'DELETE', host }), 1);
    assert.equal(await sample(m, 'rest_client_request_duration_seconds_count', { verb: 'GET', host }), 2);
    assert.equal(await sample(m, 'rest_client_request_duration_seconds_count', { verb: 'DELETE', host }), 1);
    // Outside the write throttle a request waited for no token.
    assert.equal(await sample(m, 'rest_client_rate_limiter_duration_seconds_count', { verb: 'GET', host }), 2);
    assert.equal(await sample(m, 'rest_client_rate_limiter_duration_seconds_sum', { verb: 'GET', host }), 0);
  });

  test('the write throttle\'s wait is observed as the rate limiter latency of the request it admitted', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const lib = instrumentHttpLibrary(answering(200), host, m.restClient.sink);
    // Real time: bottleneck refills on real 250 ms beats. Burst 1 at 4 qps: the second write waits ~250 ms.
    const throttle = new ApiWriteThrottle({ qps: 4, burst: 1 });
    try {
      await throttle.schedule(() => lib.send(req(HttpMethod.PATCH)).toPromise(), 'node');
      await throttle.schedule(async () => {
        await lib.send(req(HttpMethod.PATCH)).toPromise();
        await lib.send(req(HttpMethod.PATCH)).toPromise(); // a second request of the same write took no token
      }, 'node');
    } finally {
      await throttle.stop();
    }
    assert.equal(await sample(m, 'rest_client_rate_limiter_duration_seconds_count', { verb: 'PATCH', host }), 3);
    const waited = (await sample(m, 'rest_client_rate_limiter_duration_seconds_sum', { verb: 'PATCH', host })) ?? 0;
    // Documented tolerance: the token arrives on bottleneck's next 250 ms beat after the first write.
    assert.ok(waited >= 0.1 && waited < 5, `waited ${waited} s`);
    // Tolerance: the first write has a token at once (bottleneck still takes a few ms to start it on a busy machine).
    assert.equal(await sample(m, 'rest_client_rate_limiter_duration_seconds_bucket', { verb: 'PATCH', host, le: '0.1' }), 2, 'two requests did not wait for a token');
  });
});

describe('watch requests (informers)', () => {
  test('a watch counts 200 once open, or the status its failure carries, once per request', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    makeClients(kc, {}, m.restClient.sink);
    const host = '127.0.0.1:6443';
    const closes: ((err: unknown) => void)[] = [];
    // Shaped like client-node's Watch: a failed request calls done(err) and still resolves.
    const stub = (status: number): WatchStarter => ({
      async watch(_path, _q, _cb, done) {
        if (status !== 200) done(Object.assign(new Error('Gone'), { statusCode: status }));
        else closes.push(done);
        return new AbortController();
      },
    });
    const doneErrors: unknown[] = [];
    await instrumentWatch(kc, stub(200)).watch('/api/v1/nodes', {}, () => {}, (e) => doneErrors.push(e));
    await instrumentWatch(kc, stub(410)).watch('/api/v1/nodes', {}, () => {}, (e) => doneErrors.push(e));
    for (const close of closes) close(new Error('stream reset later')); // not a second request
    assert.equal(await sample(m, 'rest_client_requests_total', { code: '200', method: 'GET', host }), 1);
    assert.equal(await sample(m, 'rest_client_requests_total', { code: '410', method: 'GET', host }), 1);
    assert.equal(await sample(m, 'rest_client_requests_total', { code: '<error>', method: 'GET', host }), undefined);
    assert.equal(doneErrors.length, 2, 'done is still called');
    // Without a sink the watch is returned as is.
    const plain = new KubeConfig();
    plain.loadFromOptions({ clusters: [{ name: 'c', server: 'https://h:1' }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const w = stub(200);
    assert.equal(instrumentWatch(plain, w), w);
  });
});

test('node_lifecycle_controller_build_info is 1 with version, git_commit, git_tree_state and node_version', async () => {
  const m = createMetrics({ defaultMetrics: false, build: { gitCommit: 'abc123', gitTreeState: 'dirty' } });
  assert.equal(
    await sample(m, 'node_lifecycle_controller_build_info', { version: PROGRAM_VERSION, git_commit: 'abc123', git_tree_state: 'dirty', node_version: process.version }),
    1,
  );
  // By default this program's own build: from source (tsx), the checkout's commit and tree state.
  const own = buildStamp();
  const d = createMetrics({ defaultMetrics: false });
  assert.equal(await sample(d, 'node_lifecycle_controller_build_info', { version: PROGRAM_VERSION, git_commit: own.gitCommit, git_tree_state: own.gitTreeState, node_version: process.version }), 1);
});
