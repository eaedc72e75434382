/**
 * Informer logic against a scripted list function and a fake watch, driven by FakeClock.
 * The real API server path is covered by test/integration/informer.test.ts.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { FakeClock } from '../../src/util/clock.js';
import { Informer } from '../../src/kube/informer.js';
import { INITIAL_EVENTS_END_ANNOTATION, watchListClientEnabled, type ListPage, type ListPageOptions, type WatchLike } from '../../src/kube/listwatch.js';
import { toLease, type Lease } from '../../src/kube/objects.js';
import { UndecodableEventError, UndecodableObject } from '../../src/kube/undecodable.js';
import type { Logger } from '../../src/log/logger.js';

const NS = 'kube-node-lease';

function rawLease(name: string, rv: string, holder = name): Record<string, unknown> {
  return {
    metadata: { name, namespace: NS, resourceVersion: rv, managedFields: [{ manager: 'kubelet' }] },
    spec: { holderIdentity: holder, leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' },
  };
}

/** The collection as the fake server holds it. */
class FakeServer {
  objects = new Map<string, Record<string, unknown>>();
  rv = 100;
  listCalls: ListPageOptions[] = [];
  failLists = 0;
  expireContinue = false;

  set(name: string, holder = name): Record<string, unknown> {
    const o = rawLease(name, String(++this.rv), holder);
    this.objects.set(name, o);
    return o;
  }

  list = async (o: ListPageOptions): Promise<ListPage> => {
    this.listCalls.push(o);
    if (this.failLists > 0) {
      this.failLists--;
      throw new ApiException(500, 'Internal Server Error', '{}', {});
    }
    if (o._continue && this.expireContinue) {
      this.expireContinue = false;
      throw new ApiException(410, 'Expired', '{"reason":"Expired"}', {});
    }
    const all = [...this.objects.values()];
    const start = o._continue ? Number(o._continue) : 0;
    const end = o.limit ? start + o.limit : all.length;
    const page: ListPage = { metadata: { resourceVersion: String(this.rv) }, items: all.slice(start, end) };
    if (end < all.length) page.metadata = { resourceVersion: String(this.rv), _continue: String(end) };
    return page;
  };
}

interface FakeStream {
  query: Record<string, string | number | boolean | undefined>;
  emit: (type: string, obj: unknown) => void;
  end: (err?: unknown) => void;
  aborted: boolean;
}

class FakeWatch implements WatchLike {
  streams: FakeStream[] = [];
  failConnect: unknown;
  /** When set, every watch-list request (`sendInitialEvents`) fails with it, as a 1.20 server refuses one. */
  refuseWatchList: unknown;

  async watch(
    _path: string,
    query: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, obj: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const controller = new AbortController();
    let ended = false;
    const stream: FakeStream = {
      query,
      emit: (type, obj) => {
        if (!ended) callback(type, obj);
      },
      end: (err) => {
        if (ended) return;
        ended = true;
        done(err ?? null);
      },
      aborted: false,
    };
    controller.signal.addEventListener('abort', () => {
      stream.aborted = true;
      stream.end();
    });
    this.streams.push(stream);
    if (this.failConnect !== undefined) {
      const err = this.failConnect;
      this.failConnect = undefined;
      stream.end(err);
    } else if (this.refuseWatchList !== undefined && query['sendInitialEvents'] === true) {
      stream.end(this.refuseWatchList);
    }
    return controller;
  }

  get last(): FakeStream {
    const s = this.streams.at(-1);
    assert.ok(s, 'a watch was started');
    return s;
  }
}

interface Recorded {
  warns: { obj: object; msg: string }[];
}
function recordingLogger(): Logger & Recorded {
  const warns: { obj: object; msg: string }[] = [];
  return { warns, debug: () => {}, info: () => {}, error: () => {}, warn: (obj, msg) => void warns.push({ obj, msg }) };
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** The first backoff step (random() = 0.5: 800 + 400 ms), which a 410 now waits before its relist, as client-go's `Until` loop. */
async function goneBackoff(clock: FakeClock): Promise<void> {
  await clock.advanceAsync(1200);
  await flush();
}

function setup(opts: { pageSize?: number; watchdogMs?: number; relistIntervalMs?: number; watchList?: boolean | (() => boolean); keepLastReadable?: boolean } = {}) {
  const clock = new FakeClock();
  const server = new FakeServer();
  const watch = new FakeWatch();
  const log = recordingLogger();
  const events: string[] = [];
  const informer = new Informer<Lease>({
    name: 'leases',
    path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
    list: server.list,
    convert: toLease,
    keyOf: (l) => `${l.namespace}/${l.name}`,
    indexers: { holder: (l) => (l.holderIdentity ? [l.holderIdentity] : []) },
    log,
    clock,
    watch,
    pageSize: opts.pageSize ?? 10,
    watchdogMs: opts.watchdogMs ?? 60_000,
    relistIntervalMs: opts.relistIntervalMs ?? 0,
    // The list+watch tests below predate the watch-list; 'Informer: watch-list' covers it.
    watchList: opts.watchList ?? false,
    random: () => 0.5,
    ...(opts.keepLastReadable !== undefined ? { keepLastReadable: opts.keepLastReadable } : {}),
  });
  informer.on('add', (l) => events.push(`add ${l.name}@${l.resourceVersion}`));
  informer.on('update', (o, n) => events.push(`update ${n.name} ${o.resourceVersion}->${n.resourceVersion}`));
  informer.on('delete', (l) => events.push(`delete ${l.name}`));
  return { clock, server, watch, log, events, informer };
}

describe('Informer: initial list', () => {
  test('lists in pages, syncs, and watches from the list resourceVersion', async () => {
    const { server, watch, informer, events } = setup({ pageSize: 10 });
    for (let i = 0; i < 25; i++) server.set(`n${String(i).padStart(2, '0')}`);
    assert.equal(informer.hasSynced(), false);
    await informer.start();
    await informer.waitForSync();
    await flush();
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(
      server.listCalls.map((c) => [c.limit, c._continue]),
      [
        [10, undefined],
        [10, '10'],
        [10, '20'],
      ],
    );
    assert.equal(informer.list().length, 25);
    assert.equal(events.filter((e) => e.startsWith('add ')).length, 25);
    assert.equal(watch.last.query['resourceVersion'], String(server.rv));
    assert.equal(watch.last.query['allowWatchBookmarks'], true);
    const cached = informer.get(`${NS}/n03`);
    assert.ok(cached);
    assert.equal('managedFields' in cached, false, 'only the slim object is cached');
    assert.equal(cached.renewTime, Date.UTC(2026, 0, 1));
    informer.stop();
  });

  test('a failed list does not count as synced; it is retried after backoff', async () => {
    const { clock, server, informer } = setup();
    server.set('a');
    server.failLists = 1;
    await informer.start();
    await flush();
    assert.equal(informer.hasSynced(), false);
    assert.equal(informer.stats().restarts, 1);
    assert.match(informer.stats().lastError ?? '', /500/);
    // client-go's backoff with random() = 0.5: the first wait is 800 + 0.5 × 800 = 1200 ms.
    await clock.advanceAsync(1199);
    assert.equal(server.listCalls.length, 1);
    await clock.advanceAsync(1);
    await flush();
    assert.equal(server.listCalls.length, 2);
    assert.equal(informer.hasSynced(), true);
    assert.equal(informer.list().length, 1);
    informer.stop();
  });

  test('an expired continue token falls back to one unpaginated list', async () => {
    const { server, informer } = setup({ pageSize: 2 });
    for (const n of ['a', 'b', 'c', 'd', 'e']) server.set(n);
    server.expireContinue = true;
    await informer.start();
    await informer.waitForSync();
    await flush();
    assert.deepEqual(
      server.listCalls.map((c) => [c.limit, c._continue]),
      [
        [2, undefined],
        [2, '2'],
        [undefined, undefined],
      ],
    );
    assert.equal(informer.list().length, 5);
    informer.stop();
  });

  test('malformed objects are logged with their name and skipped', async () => {
    const { server, watch, informer, log } = setup();
    server.set('good');
    server.objects.set('bad', { metadata: { name: 'bad', namespace: NS } }); // no resourceVersion
    await informer.start();
    await informer.waitForSync();
    await flush();
    assert.deepEqual(informer.keys(), [`${NS}/good`]);
    assert.equal(informer.stats().malformed, 1);
    assert.ok(log.warns.some((w) => (w.obj as { name?: string }).name === 'bad' && /malformed/.test(w.msg)));
    watch.last.emit('ADDED', { metadata: { name: 'worse' } });
    watch.last.emit('MODIFIED', 'not even an object');
    assert.equal(informer.stats().malformed, 3);
    assert.equal(informer.list().length, 1);
    informer.stop();
  });

  for (const keepLastReadable of [false, true]) {
    test(`a known object whose update is malformed: ${keepLastReadable ? 'keeps its last readable version (Nodes, Leases)' : 'is absent (the default)'}, through a watch event and a relist`, async () => {
      const { clock, server, watch, informer, events } = setup({ keepLastReadable });
      server.set('a', 'kubelet-a');
      server.set('b');
      await informer.start();
      await informer.waitForSync();
      await flush();
      events.length = 0;
      // `a` turns malformed on the watch (no resourceVersion, so toLease rejects it).
      watch.last.emit('MODIFIED', { metadata: { name: 'a', namespace: NS }, spec: { holderIdentity: 'unreadable' } });
      assert.equal(informer.stats().malformed, 1, 'logged and counted either way');
      assert.equal(informer.newestUnreadable(`${NS}/a`), keepLastReadable, 'the kept copy is marked: nobody may act on it');
      if (keepLastReadable) {
        assert.equal(informer.get(`${NS}/a`)?.holderIdentity, 'kubelet-a');
        assert.deepEqual(events, []);
      } else {
        assert.equal(informer.get(`${NS}/a`), undefined);
        assert.deepEqual(events, ['delete a']);
      }
      // A relist that still carries the malformed `a` (and, for the default, a new malformed `c`,
      // which nothing can keep; with keepLastReadable that fails the whole list: the next test).
      server.objects.set('a', { metadata: { name: 'a', namespace: NS }, spec: {} });
      if (!keepLastReadable) server.objects.set('c', { metadata: { name: 'c', namespace: NS } });
      events.length = 0;
      watch.last.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
      watch.last.end();
      await flush();
      await goneBackoff(clock); // client-go waits one backoff step before the relist a 410 forces
      assert.equal(server.listCalls.length, 2, 'relisted');
      assert.deepEqual(informer.keys().sort(), keepLastReadable ? [`${NS}/a`, `${NS}/b`] : [`${NS}/b`]);
      assert.deepEqual(events, [], 'the kept copy is unchanged, so the relist tells nobody');
      assert.equal(informer.stats().malformed, keepLastReadable ? 2 : 3);
      assert.equal(informer.newestUnreadable(`${NS}/a`), keepLastReadable, 'still unreadable after the relist');
      // A readable version comes back: an update from the kept copy, or an add.
      server.set('a', 'kubelet-a2');
      watch.last.emit('MODIFIED', server.objects.get('a'));
      assert.equal(informer.get(`${NS}/a`)?.holderIdentity, 'kubelet-a2');
      assert.equal(informer.newestUnreadable(`${NS}/a`), false);
      assert.equal(events.length, 1);
      assert.match(String(events[0]), keepLastReadable ? /^update a / : /^add a@/);
      informer.stop();
    });
  }

  test('keepLastReadable: a first list carrying a malformed object it has no version of fails and is retried with backoff; the informer syncs once it can be read', async () => {
    const { clock, server, informer, events } = setup({ keepLastReadable: true });
    server.set('a');
    server.objects.set('b', { metadata: { name: 'b', namespace: NS } }); // no resourceVersion: malformed
    await informer.start();
    await flush();
    assert.equal(informer.hasSynced(), false, 'not synced: the controllers do not start (WaitForNamedCacheSync)');
    assert.deepEqual(informer.keys(), [], 'nothing applied: `a` is not judged without `b`');
    assert.deepEqual(events, []);
    assert.equal(informer.isWatching(), false);
    assert.equal(informer.stats().malformed, 1, 'logged and counted');
    assert.equal(informer.stats().restarts, 1);
    assert.match(informer.stats().lastError ?? '', /b is malformed and no readable version of it is cached/);
    // Retried after client-go's backoff (1200 ms with random() = 0.5): still malformed, fails again.
    await clock.advanceAsync(1200);
    await flush();
    assert.equal(server.listCalls.length, 2);
    assert.equal(informer.hasSynced(), false);
    assert.equal(informer.stats().malformed, 2);
    // Readable again: the next retry (1600 + 800 ms) syncs with both.
    server.set('b');
    await clock.advanceAsync(2400);
    await flush();
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(informer.keys().sort(), [`${NS}/a`, `${NS}/b`]);
    assert.equal(informer.newestUnreadable(`${NS}/b`), false);
    informer.stop();
  });

  test('keepLastReadable: after sync, a malformed object with no cached version (a watch event, then the relist) leaves the cache as it was and the informer without a watch stream until it can be read', async () => {
    const { clock, server, watch, informer, events } = setup({ keepLastReadable: true });
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    assert.equal(informer.isWatching(), true);
    events.length = 0;
    const bad = { metadata: { name: 'c', namespace: NS } };
    server.objects.set('c', bad);
    watch.last.emit('ADDED', bad);
    await flush();
    assert.equal(informer.isWatching(), false, 'the stream ended: blind (blindForMs grows), as the reflector whose watch could not decode it');
    assert.deepEqual(informer.keys(), [`${NS}/a`]);
    assert.deepEqual(events, []);
    // The retry relists (resourceVersion ""), and that list fails too while `c` is malformed.
    await clock.advanceAsync(1200);
    await flush();
    assert.equal(server.listCalls.length, 2, 'relisted');
    assert.equal(informer.isWatching(), false);
    assert.ok(informer.blindForMs() >= 1200);
    assert.deepEqual(informer.keys(), [`${NS}/a`], 'the old cache stays');
    // Readable: the next relist applies it and the watch resumes.
    server.set('c');
    await clock.advanceAsync(2400);
    await flush();
    assert.deepEqual(informer.keys().sort(), [`${NS}/a`, `${NS}/c`]);
    assert.equal(informer.isWatching(), true);
    assert.deepEqual(events, [`add c@${String(server.rv)}`]);
    informer.stop();
  });

  test('stop before sync rejects waitForSync; an aborted signal rejects it too', async () => {
    const { server, informer } = setup();
    server.failLists = 100;
    await informer.start();
    const ac = new AbortController();
    const w1 = informer.waitForSync(ac.signal);
    const w2 = informer.waitForSync();
    ac.abort(new Error('gave up'));
    await assert.rejects(w1, /gave up/);
    informer.stop();
    await assert.rejects(w2, /stopped before it synced/);
  });
});

describe('Informer: watch events', () => {
  test('add, update(old, new), delete, bookmarks and indexes', async () => {
    const { server, watch, informer, events } = setup();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    events.length = 0;
    const s = watch.last;
    s.emit('ADDED', server.set('b', 'holder-1'));
    const aOld = informer.get(`${NS}/a`);
    s.emit('MODIFIED', server.set('a', 'holder-1'));
    assert.equal(informer.byIndex('holder', 'holder-1').length, 2);
    assert.equal(informer.byIndex('holder', 'a').length, 0, 'old index value removed');
    const same = server.objects.get('a');
    s.emit('MODIFIED', same); // same resourceVersion: no update
    s.emit('DELETED', server.objects.get('b'));
    server.objects.delete('b');
    s.emit('BOOKMARK', { metadata: { resourceVersion: '999' } });
    assert.deepEqual(events, [`add b@${server.rv - 1}`, `update a ${aOld?.resourceVersion}->${server.rv}`, 'delete b']);
    assert.deepEqual(informer.byIndex('holder', 'holder-1').map((l) => l.name), ['a']);
    assert.equal(informer.stats().resourceVersion, '999');
    assert.throws(() => informer.byIndex('nope', 'x'), /unknown index/);
    informer.stop();
  });

  test('a handler that throws is logged and does not stop delivery', async () => {
    const { server, watch, informer, events } = setup();
    informer.on('add', () => {
      throw new Error('handler bug');
    });
    await informer.start();
    await informer.waitForSync();
    await flush();
    watch.last.emit('ADDED', server.set('x'));
    watch.last.emit('ADDED', server.set('y'));
    assert.deepEqual(events.filter((e) => e.startsWith('add')).length, 2);
    assert.equal(informer.list().length, 2);
    informer.stop();
  });
});

describe('Informer: recovery', () => {
  test('a watch error backs off and resumes from the last resourceVersion without relisting', async () => {
    const { clock, server, watch, informer } = setup();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    watch.last.emit('ADDED', server.set('b'));
    const rv = String(server.rv);
    assert.equal(informer.isWatching(), true);
    watch.last.end(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    await flush();
    assert.equal(informer.isWatching(), false, 'not watching during the backoff');
    assert.equal(informer.hasSynced(), true, 'still synced');
    assert.equal(watch.streams.length, 1, 'no reconnect before the backoff');
    assert.equal(informer.stats().restarts, 1);
    await clock.advanceAsync(1200);
    await flush();
    assert.equal(watch.streams.length, 2);
    assert.equal(watch.last.query['resourceVersion'], rv);
    assert.equal(server.listCalls.length, 1, 'no relist');
    assert.equal(informer.isWatching(), true);
    informer.stop();
    assert.equal(informer.isWatching(), false);
  });

  test('410 Gone relists and delivers what changed meanwhile as update/delete/add', async () => {
    const { clock, server, watch, informer, events } = setup();
    for (const n of ['keep', 'change', 'vanish']) server.set(n);
    await informer.start();
    await informer.waitForSync();
    await flush();
    const old = informer.get(`${NS}/change`);
    events.length = 0;
    // Changes the watch never delivered:
    server.set('change', 'someone-else');
    server.objects.delete('vanish');
    server.set('new');
    watch.last.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    watch.last.end();
    await flush();
    await goneBackoff(clock); // client-go waits one backoff step before the relist a 410 forces
    assert.equal(server.listCalls.length, 2, 'relisted at once');
    assert.deepEqual(events.sort(), [`add new@${server.rv}`, 'delete vanish', `update change ${old?.resourceVersion}->${server.rv - 1}`].sort());
    assert.deepEqual(informer.keys().sort(), [`${NS}/change`, `${NS}/keep`, `${NS}/new`]);
    assert.equal(informer.get(`${NS}/change`)?.holderIdentity, 'someone-else');
    assert.equal(informer.stats().relists, 2);
    informer.stop();
  });

  test("after an outage the relist a 410 forces waits the next, longer step (client-go's reflector: the bases reset only 2 min after the last reset, not on a healthy stream)", async () => {
    const { clock, server, watch, informer } = setup();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    // The outage: the stream breaks, then two reconnects are refused (waits 1200, 2400 with random() = 0.5).
    watch.last.end(refused());
    await flush();
    for (const waitMs of [1200, 2400]) {
      watch.failConnect = refused();
      await clock.advanceAsync(waitMs);
      await flush();
    }
    // Back: the reconnect after the 4800 ms step is answered 410 (the restarted watch cache).
    watch.failConnect = Object.assign(new Error('Gone'), { statusCode: 410 });
    await clock.advanceAsync(4800);
    await flush();
    assert.equal(server.listCalls.length, 1, 'the 410 does not relist at once');
    // The next step: base 6400 ms, 9600 ms with random() = 0.5. Relisting sooner regained sight, and
    // acted, sooner than kube-controller-manager's informers can.
    await clock.advanceAsync(9599);
    await flush();
    assert.equal(server.listCalls.length, 1, 'not before the step');
    await clock.advanceAsync(1);
    await flush();
    assert.equal(server.listCalls.length, 2, 'relisted after the step');
    assert.equal(informer.isWatching(), true);
    // More than 2 min after the last reset the bases start again: a 410 then waits 1200 ms.
    await clock.advanceAsync(121_000);
    watch.last.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    watch.last.end();
    await flush();
    await clock.advanceAsync(1199);
    await flush();
    assert.equal(server.listCalls.length, 2);
    await clock.advanceAsync(1);
    await flush();
    assert.equal(server.listCalls.length, 3);
    informer.stop();
  });

  test('a watch answered with HTTP 410 relists instead of retrying the old resourceVersion', async () => {
    const { clock, server, watch, informer } = setup();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    await clock.advanceAsync(5_000);
    watch.failConnect = Object.assign(new Error('Gone'), { statusCode: 410 });
    watch.last.end(); // clean close after a long life: reconnect at once, which gets the 410
    await flush();
    await goneBackoff(clock); // client-go waits one backoff step before the relist a 410 forces
    assert.equal(server.listCalls.length, 2, 'relisted');
    assert.equal(watch.last.query['resourceVersion'], String(server.rv));
    assert.equal(informer.stats().restarts, 0);
    informer.stop();
  });

  test('a stream that closes at once without events backs off instead of spinning', async () => {
    const { clock, watch, informer } = setup();
    await informer.start();
    await informer.waitForSync();
    await flush();
    const gaps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = watch.streams.length;
      const endedAt = clock.now();
      watch.last.end();
      await flush();
      assert.equal(watch.streams.length, before, 'waits for the backoff');
      while (watch.streams.length === before) await clock.advanceAsync(100);
      gaps.push(clock.now() - endedAt);
    }
    assert.deepEqual(gaps, [1200, 2400, 4800]);
    informer.stop();
  });

  test('a long-lived stream that ends cleanly (server timeout) reconnects at once', async () => {
    const { clock, watch, informer } = setup({ watchdogMs: 0 });
    await informer.start();
    await informer.waitForSync();
    await flush();
    await clock.advanceAsync(60_000);
    watch.last.end(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    await flush();
    assert.equal(watch.streams.length, 2);
    assert.equal(informer.stats().restarts, 0);
    informer.stop();
  });

  test('connect failures back off with growing, capped delays', async () => {
    const { clock, watch, informer } = setup({ watchdogMs: 300_000 }); // the default: the waits reach 45 s
    await informer.start();
    await informer.waitForSync();
    await flush();
    const err = Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const gaps: number[] = [];
    let last = clock.now();
    watch.failConnect = err;
    watch.last.end(err);
    for (let i = 0; i < 7; i++) {
      const before = watch.streams.length;
      while (watch.streams.length === before) {
        watch.failConnect = err;
        await clock.advanceAsync(100);
      }
      gaps.push(clock.now() - last);
      last = clock.now();
    }
    // random() = 0.5 → 1.5 × min(30 s, 800 ms × 2^(n-1)) (client-go's [d, 2d]), on the 100 ms step.
    assert.deepEqual(gaps, [1200, 2400, 4800, 9600, 19200, 38400, 45000]);
    informer.stop();
  });

  test('the watchdog restarts a silent, hung watch', async () => {
    const { clock, watch, informer } = setup({ watchdogMs: 60_000 });
    await informer.start();
    await informer.waitForSync();
    await flush();
    const hung = watch.last;
    await clock.advanceAsync(59_000);
    assert.equal(watch.streams.length, 1);
    await clock.advanceAsync(20_000);
    await flush();
    assert.equal(hung.aborted, true, 'the hung stream was aborted');
    assert.equal(watch.streams.length, 2);
    assert.equal(informer.stats().restarts, 1);
    assert.match(informer.stats().lastError ?? '', /watchdog/);
    informer.stop();
  });

  test('a connected watch still behind a resourceVersion the API server showed is restarted after catchUpMs, without a relist', async () => {
    const { clock, server, watch, informer, log } = setup();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    const stuck = watch.last;
    const cacheRv = String(server.rv);
    // The kubelet renewed "a", but the stream delivers nothing: the live read shows the newer version.
    server.set('a');
    informer.expectResourceVersion(String(server.rv));
    await clock.advanceAsync(4900);
    await flush();
    assert.equal(watch.streams.length, 1, 'not before catchUpMs (5 s)');
    await clock.advanceAsync(200);
    await flush();
    assert.equal(stuck.aborted, true, 'the stalled stream was given up');
    assert.equal(watch.streams.length, 2, 'and a new watch started');
    assert.equal(watch.last.query['resourceVersion'], cacheRv, 'resuming from the cache, which missed the renewal');
    assert.equal(server.listCalls.length, 1, 'no relist');
    assert.equal(informer.stats().stalls, 1);
    assert.match(informer.stats().lastError ?? '', /watch stalled/);
    assert.ok(log.warns.some((w) => w.msg === 'informer restarting'));
    informer.stop();
  });

  test('a watch that catches up in time, an older or unreadable resourceVersion, and a stopped informer restart nothing', async () => {
    const { clock, server, watch, informer } = setup();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    const renewed = server.set('a');
    informer.expectResourceVersion(String(server.rv));
    informer.expectResourceVersion('1'); // older than the cache: nothing awaited
    informer.expectResourceVersion('not-a-number');
    await clock.advanceAsync(1000);
    watch.last.emit('MODIFIED', renewed);
    await clock.advanceAsync(10_000);
    await flush();
    assert.equal(watch.streams.length, 1, 'caught up: the stream stays');
    assert.equal(informer.stats().stalls, 0);
    // Stopped with a deadline pending: the timer is dropped and nothing restarts.
    server.set('a');
    informer.expectResourceVersion(String(server.rv));
    informer.stop();
    await clock.advanceAsync(10_000);
    await flush();
    assert.equal(watch.streams.length, 1);
    assert.equal(informer.stats().stalls, 0);
  });

  test('relistIntervalMs re-reads the collection periodically and repairs the cache', async () => {
    const { clock, server, informer, events } = setup({ relistIntervalMs: 600_000, watchdogMs: 0 });
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    events.length = 0;
    server.set('missed'); // an event the watch lost
    await clock.advanceAsync(600_000 + 150_000);
    await flush();
    assert.equal(server.listCalls.length, 2);
    assert.deepEqual(events, [`add missed@${server.rv}`]);
    informer.stop();
  });

  test('stop aborts the stream and nothing restarts afterwards', async () => {
    const { clock, server, watch, informer } = setup();
    await informer.start();
    await informer.waitForSync();
    await flush();
    informer.stop();
    await flush();
    assert.equal(watch.last.aborted, true);
    await clock.advanceAsync(600_000);
    assert.equal(watch.streams.length, 1);
    assert.equal(server.listCalls.length, 1);
    assert.equal(informer.hasSynced(), true, 'hasSynced stays true');
  });
});

/** Streams the fake server's objects as a watch-list's synthetic ADDED events, then (unless `end` is false) the end bookmark. */
function streamInitialEvents(stream: FakeStream, server: FakeServer, end = true): void {
  for (const o of server.objects.values()) stream.emit('ADDED', o);
  if (end) stream.emit('BOOKMARK', { metadata: { resourceVersion: String(server.rv), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } } });
}

/** HTTP 422 Invalid, as kube-apiserver 1.20 answers `resourceVersionMatch` on a watch (and 1.27–1.33 `sendInitialEvents` with WatchList off). */
const refusal = (): Error => Object.assign(new Error('Unprocessable Entity'), { statusCode: 422 });

describe('Informer: watch-list (reflector.go watchList)', () => {
  test('streams the initial events, syncs at the initial-events-end bookmark, then watches on the same stream', async () => {
    const { server, watch, informer, events } = setup({ watchList: true });
    for (const n of ['a', 'b', 'c']) server.set(n, 'holder-1');
    const watching: boolean[] = [];
    informer.on('watching', (on) => watching.push(on));
    await informer.start();
    await flush();
    const s = watch.last;
    assert.deepEqual(
      [s.query['sendInitialEvents'], s.query['resourceVersionMatch'], s.query['resourceVersion'], s.query['allowWatchBookmarks']],
      [true, 'NotOlderThan', '', true],
    );
    streamInitialEvents(s, server, false);
    s.emit('BOOKMARK', { metadata: { resourceVersion: '101' } }); // an ordinary bookmark does not end the initial events
    assert.equal(informer.hasSynced(), false, 'not synced before the end bookmark');
    assert.equal(informer.isWatching(), false, 'not watching before the end bookmark');
    assert.deepEqual(events, [], 'handlers see nothing before the end bookmark');
    assert.equal(informer.list().length, 0);
    const synced = informer.waitForSync();
    s.emit('BOOKMARK', { metadata: { resourceVersion: String(server.rv), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } } });
    await synced;
    assert.equal(informer.isWatching(), true);
    assert.deepEqual(watching, [true]);
    assert.deepEqual(events.sort(), ['add a@101', 'add b@102', 'add c@103']);
    assert.equal(informer.stats().resourceVersion, '103');
    assert.equal(informer.byIndex('holder', 'holder-1').length, 3);
    s.emit('MODIFIED', server.set('a', 'holder-2'));
    s.emit('BOOKMARK', { metadata: { resourceVersion: '200' } });
    assert.equal(informer.get(`${NS}/a`)?.holderIdentity, 'holder-2');
    assert.equal(informer.byIndex('holder', 'holder-2').length, 1);
    assert.equal(informer.stats().resourceVersion, '200', 'bookmarks advance the resourceVersion after the initial events');
    assert.equal(watch.streams.length, 1, 'the same stream goes on as the watch');
    assert.equal(server.listCalls.length, 0, 'no LIST request');
    assert.equal(informer.stats().relists, 1);
    informer.stop();
  });

  test('a server that refuses the watch-list (1.20: HTTP 422) falls back to a paginated list and a plain watch, at every relist', async () => {
    const { clock, server, watch, informer } = setup({ watchList: true, pageSize: 2 });
    watch.refuseWatchList = refusal();
    for (const n of ['a', 'b', 'c']) server.set(n);
    await informer.start();
    await informer.waitForSync();
    await flush();
    assert.equal(server.listCalls.length, 2, 'paginated list');
    assert.equal(watch.streams.length, 2, 'the refused watch-list, then the plain watch');
    assert.equal(watch.last.query['sendInitialEvents'], undefined);
    assert.equal(watch.last.query['resourceVersionMatch'], undefined);
    assert.equal(watch.last.query['resourceVersion'], String(server.rv));
    assert.equal(informer.isWatching(), true);
    assert.equal(informer.stats().restarts, 0, 'a refusal is not a failure');
    // 410 Gone: the relist tries the watch-list again, as the reflector does, and falls back again.
    server.set('d');
    watch.last.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    watch.last.end();
    await flush();
    await goneBackoff(clock); // client-go waits one backoff step before the relist a 410 forces
    assert.equal(watch.streams.length, 4);
    assert.equal(watch.streams[2]?.query['sendInitialEvents'], true);
    assert.equal(informer.list().length, 4);
    informer.stop();
  });

  test('a watchList function is asked at each relist: decided off (a server before 1.27), the next relist lists without trying a watch-list', async () => {
    let tryWatchList = true;
    const { clock, server, watch, informer } = setup({ watchList: () => tryWatchList });
    watch.refuseWatchList = refusal();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    assert.equal(watch.streams.length, 2, 'the refused watch-list, then the plain watch');
    assert.equal(watch.streams[0]?.query['sendInitialEvents'], true);
    // The server's version is read: it cannot serve watch-lists.
    tryWatchList = false;
    watch.last.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    watch.last.end();
    await flush();
    await goneBackoff(clock); // client-go waits one backoff step before the relist a 410 forces
    assert.equal(watch.streams.length, 3, 'the relist went straight to list+watch');
    assert.equal(watch.last.query['sendInitialEvents'], undefined);
    assert.equal(server.listCalls.length, 2);
    informer.stop();
  });

  test('an ERROR event that refuses the watch-list (422) falls back too', async () => {
    const { server, watch, informer } = setup({ watchList: true });
    server.set('a');
    await informer.start();
    await flush();
    watch.last.emit('ERROR', { kind: 'Status', code: 422, reason: 'Invalid', message: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled' });
    watch.last.end();
    await informer.waitForSync();
    await flush();
    assert.equal(server.listCalls.length, 1);
    assert.equal(watch.last.query['sendInitialEvents'], undefined);
    informer.stop();
  });

  test('a transient failure (HTTP 503, reset part-way) backs off and tries the watch-list again without listing', async () => {
    const { clock, server, watch, informer } = setup({ watchList: true });
    for (const n of ['a', 'b']) server.set(n);
    watch.failConnect = Object.assign(new Error('Service Unavailable'), { statusCode: 503 });
    await informer.start();
    await flush();
    assert.equal(watch.streams.length, 1, 'waits for the backoff');
    await clock.advanceAsync(1200);
    await flush();
    assert.equal(watch.streams.length, 2);
    streamInitialEvents(watch.last, server, false);
    watch.last.end(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    await flush();
    assert.equal(informer.hasSynced(), false, 'events before the end bookmark are not applied');
    assert.equal(informer.list().length, 0);
    await clock.advanceAsync(2400);
    await flush();
    assert.equal(watch.streams.length, 3);
    assert.equal(watch.last.query['sendInitialEvents'], true);
    streamInitialEvents(watch.last, server);
    await informer.waitForSync();
    assert.equal(informer.list().length, 2);
    assert.equal(server.listCalls.length, 0);
    assert.equal(informer.stats().restarts, 2);
    informer.stop();
  });

  test('a relist by watch-list (410 Gone) applies the Replace diff at the end bookmark and is not watching until then', async () => {
    const { clock, server, watch, informer, events } = setup({ watchList: true });
    for (const n of ['keep', 'change', 'vanish']) server.set(n);
    await informer.start();
    await flush();
    streamInitialEvents(watch.last, server);
    await informer.waitForSync();
    const old = informer.get(`${NS}/change`);
    events.length = 0;
    server.set('change', 'someone-else');
    server.objects.delete('vanish');
    server.set('new');
    watch.last.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    watch.last.end();
    await flush();
    await goneBackoff(clock); // client-go waits one backoff step before the relist a 410 forces
    assert.equal(watch.streams.length, 2);
    assert.equal(watch.last.query['resourceVersion'], '', 'the relist reads the most recent state');
    assert.equal(informer.isWatching(), false, 'blind while the initial events stream');
    streamInitialEvents(watch.last, server, false);
    assert.deepEqual(events, [], 'nothing applied before the end bookmark');
    assert.equal(informer.get(`${NS}/vanish`)?.name, 'vanish', 'the old state stays until the end bookmark');
    watch.last.emit('BOOKMARK', { metadata: { resourceVersion: String(server.rv), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } } });
    assert.deepEqual(events.sort(), [`add new@${server.rv}`, 'delete vanish', `update change ${old?.resourceVersion}->${server.rv - 1}`].sort());
    assert.deepEqual(informer.keys().sort(), [`${NS}/change`, `${NS}/keep`, `${NS}/new`]);
    assert.equal(informer.isWatching(), true);
    assert.equal(informer.stats().relists, 2);
    assert.equal(server.listCalls.length, 0);
    informer.stop();
  });

  test('malformed objects in the initial events are skipped and counted', async () => {
    const { server, watch, informer } = setup({ watchList: true });
    server.set('good');
    await informer.start();
    await flush();
    watch.last.emit('ADDED', { metadata: { name: 'bad', namespace: NS } });
    streamInitialEvents(watch.last, server);
    await informer.waitForSync();
    assert.deepEqual(informer.keys(), [`${NS}/good`]);
    assert.equal(informer.stats().malformed, 1);
    informer.stop();
  });

  test('keepLastReadable: a malformed initial event it has no version of ends the watch-list unsynced; the retry syncs once it can be read', async () => {
    const { clock, server, watch, informer } = setup({ watchList: true, keepLastReadable: true });
    server.set('good');
    await informer.start();
    await flush();
    watch.last.emit('ADDED', { metadata: { name: 'bad', namespace: NS } });
    assert.equal(watch.last.aborted, true, 'the stream ended at the unreadable event');
    await flush();
    assert.equal(informer.hasSynced(), false);
    assert.deepEqual(informer.keys(), []);
    assert.equal(informer.stats().malformed, 1);
    server.set('bad');
    await clock.advanceAsync(1200);
    await flush();
    streamInitialEvents(watch.last, server);
    await informer.waitForSync();
    assert.deepEqual(informer.keys().sort(), [`${NS}/bad`, `${NS}/good`]);
    informer.stop();
  });

  test('an initial-events-end bookmark without a resourceVersion ends the stream; the retry syncs', async () => {
    const { clock, server, watch, informer } = setup({ watchList: true });
    server.set('a');
    await informer.start();
    await flush();
    streamInitialEvents(watch.last, server, false);
    watch.last.emit('BOOKMARK', { metadata: { annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } } });
    await flush();
    assert.equal(watch.streams[0]?.aborted, true, 'the broken stream is closed');
    assert.equal(informer.hasSynced(), false);
    await clock.advanceAsync(1200);
    await flush();
    streamInitialEvents(watch.last, server);
    await informer.waitForSync();
    assert.equal(informer.list().length, 1);
    informer.stop();
  });

  test('KUBE_FEATURE_WatchListClient=false turns the watch-list off, as in client-go', () => {
    assert.equal(watchListClientEnabled({}), true);
    assert.equal(watchListClientEnabled({ KUBE_FEATURE_WatchListClient: 'true' }), true);
    for (const v of ['false', 'False', 'FALSE', 'f', '0']) assert.equal(watchListClientEnabled({ KUBE_FEATURE_WatchListClient: v }), false, v);
  });
});

describe('Informer: objects whose wire bytes did not decode (issue 53)', () => {
  const undecodable = (name: string): UndecodableObject => new UndecodableObject({ name, namespace: NS }, 'field 3: wire type 0, expected 2');

  for (const keepLastReadable of [false, true]) {
    test(`a list item that did not decode takes the JSON path's rules by its key: ${keepLastReadable ? 'the last readable version is kept, marked' : 'absent'}`, async () => {
      const { clock, server, watch, informer, events } = setup({ keepLastReadable });
      server.set('a', 'kubelet-a');
      server.set('b');
      await informer.start();
      await informer.waitForSync();
      await flush();
      events.length = 0;
      server.objects.set('a', undecodable('a') as unknown as Record<string, unknown>);
      watch.last.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
      watch.last.end();
      await flush();
      await goneBackoff(clock);
      assert.equal(server.listCalls.length, 2, 'relisted');
      assert.deepEqual(informer.keys().sort(), keepLastReadable ? [`${NS}/a`, `${NS}/b`] : [`${NS}/b`], 'never dropped for being undecodable where JSON would keep it');
      assert.equal(informer.newestUnreadable(`${NS}/a`), keepLastReadable);
      assert.deepEqual(events, keepLastReadable ? [] : ['delete a']);
      assert.equal(informer.stats().malformed, 1, 'counted as malformed');
      informer.stop();
    });

    test(`a watch event that did not decode reaches the cache by its key (${keepLastReadable ? 'kept, marked' : 'absent'}), ends the stream and relists after the backoff`, async () => {
      const { clock, server, watch, informer, events } = setup({ keepLastReadable });
      server.set('a', 'kubelet-a');
      await informer.start();
      await informer.waitForSync();
      await flush();
      events.length = 0;
      const stream = watch.last;
      stream.emit('MODIFIED', undecodable('a'));
      assert.equal(stream.aborted, true, 'the stream ends at the event, as client-go StreamWatcher stops');
      assert.equal(informer.newestUnreadable(`${NS}/a`), keepLastReadable);
      assert.deepEqual(events, keepLastReadable ? [] : ['delete a']);
      assert.equal(informer.stats().resourceVersion, '', 'the next round lists');
      await flush();
      assert.equal(server.listCalls.length, 1, 'not before the backoff');
      await clock.advanceAsync(1200);
      await flush();
      assert.equal(server.listCalls.length, 2, 'relisted, as the reflector after a watch.Error');
      informer.stop();
    });
  }

  test('a DELETED event that did not decode removes the object by its key: no ghost', async () => {
    const { server, watch, informer, events } = setup();
    server.set('a');
    server.set('b');
    await informer.start();
    await informer.waitForSync();
    await flush();
    events.length = 0;
    server.objects.delete('b');
    watch.last.emit('DELETED', undecodable('b'));
    assert.deepEqual(informer.keys(), [`${NS}/a`]);
    assert.deepEqual(events, ['delete b']);
    informer.stop();
  });

  test('the codec ending a stream for an event without an object (ERROR, BOOKMARK) relists too', async () => {
    const { clock, server, watch, informer } = setup();
    server.set('a');
    await informer.start();
    await informer.waitForSync();
    await flush();
    watch.last.end(new UndecodableEventError('BOOKMARK event: truncated varint'));
    await flush();
    await clock.advanceAsync(1200);
    await flush();
    assert.equal(server.listCalls.length, 2);
    informer.stop();
  });

  test('a watch-list whose initial events carry one that did not decode falls back to a list at once, as the reflector after a watch-list error', async () => {
    const { server, watch, informer } = setup({ watchList: true });
    server.set('a');
    server.set('b');
    await informer.start();
    await flush();
    const s = watch.last;
    s.emit('ADDED', server.objects.get('a'));
    s.emit('ADDED', undecodable('b'));
    assert.equal(s.aborted, true);
    await flush();
    assert.equal(server.listCalls.length, 1, 'listed in the same round');
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(informer.keys().sort(), [`${NS}/a`, `${NS}/b`]);
    informer.stop();
  });
});
