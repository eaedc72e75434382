/**
 * Issue 14 item 8: a replica that cannot run never holds the Lease.
 * - Start-up failures (a metrics port in use, an unreadable kubeconfig) throw before the process
 *   sends a single request: in particular no Lease GET/POST, so it never campaigns.
 * - `superviseController`: a failure to start the controllers, an uncaught error, a lost lease or
 *   a signal each stop the controller (which releases the Lease when still held) and give the
 *   documented exit code; a start-up failure stops nothing, since nothing was started.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { startController, superviseController, type Supervised } from '../../src/cli/run.js';
import { createLogger } from '../../src/log/logger.js';
import { HungServer, kubeconfigYaml } from '../support/hung-server.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const quietLog = (): ReturnType<typeof createLogger> => createLogger({ level: 'error', format: 'json', destination: { write: () => undefined } });

describe('start-up failures happen before the campaign', () => {
  let api: HungServer;
  let dir: string;
  let kubeconfig: string;
  let taken: Server;
  let takenPort: number;

  beforeEach(async () => {
    api = new HungServer();
    const apiPort = await api.listen();
    dir = await mkdtemp(join(tmpdir(), 'nlc-startup-'));
    kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, kubeconfigYaml(apiPort));
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    takenPort = (taken.address() as AddressInfo).port;
  });
  afterEach(async () => {
    await new Promise<void>((r) => taken.close(() => r()));
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  const flags = (extra: string[]): string[] => [
    '--leader-elect=true',
    '--leader-elect-resource-name=nlc-startup',
    '--leader-elect-resource-namespace=default',
    '--secure-port=0',
    ...extra,
  ];

  test('metrics port in use (EADDRINUSE): startController rejects and no request (no Lease read or write) was ever sent', { timeout: 10_000 }, async () => {
    const config = await parseControllerFlags(flags([`--kubeconfig=${kubeconfig}`, `--metrics-bind-address=127.0.0.1:${takenPort}`]));
    await assert.rejects(startController(config, { log: quietLog() }), /cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    // The elector's first attempt is immediate; give any stray campaign time to reach the server.
    await sleep(500);
    assert.deepEqual(api.requestLines, [], 'a replica that cannot serve sent no request: it never campaigned');
  });

  test('secure port in use (EADDRINUSE): startController rejects and no request was ever sent', { timeout: 10_000 }, async () => {
    const config = await parseControllerFlags(flags([`--kubeconfig=${kubeconfig}`, `--secure-port=${takenPort}`, '--bind-address=127.0.0.1']));
    await assert.rejects(startController(config, { log: quietLog() }), /cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    await sleep(500);
    assert.deepEqual(api.requestLines, [], 'a replica that cannot serve HTTPS sent no request: it never campaigned');
  });

  test('unreadable --tls-cert-file: startController rejects naming the flag, before any request', { timeout: 10_000 }, async () => {
    const config = await parseControllerFlags(
      flags([`--kubeconfig=${kubeconfig}`, '--secure-port=10267', '--bind-address=127.0.0.1', `--tls-cert-file=${join(dir, 'missing.crt')}`, `--tls-private-key-file=${join(dir, 'missing.key')}`]),
    );
    await assert.rejects(startController(config, { log: quietLog() }), /--tls-cert-file: cannot read/);
    await sleep(200);
    assert.deepEqual(api.requestLines, []);
  });

  test('unreadable kubeconfig: startController rejects before any request', { timeout: 10_000 }, async () => {
    const config = await parseControllerFlags(flags([`--kubeconfig=${join(dir, 'missing')}`, '--metrics-bind-address=127.0.0.1:0']));
    await assert.rejects(startController(config, { log: quietLog() }), /ENOENT|no such file/);
    await sleep(200);
    assert.deepEqual(api.requestLines, []);
  });
});

describe('superviseController: exit rules', () => {
  /** A started controller whose `lost`/`failed` the test settles, recording `stop()` calls. */
  function stub(stopMs = 0): Supervised & { stops: number; lose(): void; fail(err: unknown): void } {
    let lose: () => void = () => undefined;
    let fail: (err: unknown) => void = () => undefined;
    const s = {
      stops: 0,
      lost: new Promise<void>((r) => (lose = r)),
      failed: new Promise<unknown>((r) => (fail = r)),
      stop: async () => {
        s.stops++;
        if (stopMs > 0) await sleep(stopMs);
      },
      lose: () => lose(),
      fail: (err: unknown) => fail(err),
    };
    return s;
  }

  test('controllers fail to start → stop (which releases the Lease) → exit 1', async () => {
    const events = new EventEmitter();
    const s = stub();
    const code = superviseController(async () => s, { log: quietLog(), events });
    await sleep(10);
    assert.equal(s.stops, 0);
    s.fail(new Error('start failed'));
    assert.equal(await code, 1);
    assert.equal(s.stops, 1);
  });

  test('an uncaught exception or unhandled rejection while running → stop → exit 1', async () => {
    for (const kind of ['uncaughtException', 'unhandledRejection']) {
      const events = new EventEmitter();
      const s = stub();
      const code = superviseController(async () => s, { log: quietLog(), events });
      await sleep(10);
      events.emit(kind, new Error('boom'));
      assert.equal(await code, 1, kind);
      assert.equal(s.stops, 1, kind);
      assert.equal(events.listenerCount(kind), 0, `${kind} listener removed`);
    }
  });

  test('SIGTERM → stop → exit 0; lost leadership → stop → exit 1', async () => {
    const events = new EventEmitter();
    const s = stub();
    const code = superviseController(async () => s, { log: quietLog(), events });
    await sleep(10);
    events.emit('SIGTERM');
    assert.equal(await code, 0);
    assert.equal(s.stops, 1);
    const l = stub();
    const lostCode = superviseController(async () => l, { log: quietLog(), events });
    await sleep(10);
    l.lose();
    assert.equal(await lostCode, 1);
    assert.equal(l.stops, 1);
  });

  test('a signal during start-up still ends in an orderly stop once started', async () => {
    const events = new EventEmitter();
    const s = stub();
    const code = superviseController(
      async () => {
        events.emit('SIGTERM');
        return s;
      },
      { log: quietLog(), events },
    );
    assert.equal(await code, 0);
    assert.equal(s.stops, 1);
  });

  test('a start-up failure rejects and stops nothing (nothing was started)', async () => {
    const events = new EventEmitter();
    await assert.rejects(
      superviseController(async () => {
        throw new Error('cannot listen on 127.0.0.1:1: EADDRINUSE');
      }, { log: quietLog(), events }),
      /EADDRINUSE/,
    );
    assert.equal(events.listenerCount('SIGTERM'), 0);
  });

  test('a stop that hangs is abandoned after the shutdown bound', async () => {
    const events = new EventEmitter();
    const s = stub(60_000);
    const code = superviseController(async () => s, { log: quietLog(), events, shutdownBoundMs: 50 });
    await sleep(10);
    s.fail(new Error('x'));
    assert.equal(await code, 1);
  });
});
