/**
 * The informer against the real kube-apiserver.
 *
 * - Shared cluster: paginated initial sync, add / update(old, new) / delete delivery.
 * - A private control plane (its own etcd and apiserver on free ports, in a temp dir): the API
 *   server is stopped for 20 s while a second apiserver on the same etcd changes objects, then
 *   restarted. The informer must recover without help and converge to a fresh list.
 */
import { PrivateControlPlane } from '../support/private-cluster.js';
import { reconnectWindowMs } from '../fuzzdiff/compare.js';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { VersionApi } from '@kubernetes/client-node';
import { realClock } from '../../src/util/clock.js';
import { loadKubeConfig, type KubeClients } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import type { ListPageOptions } from '../../src/kube/listwatch.js';
import { abortSignalOptions, leaseInformer } from '../../src/kube/informerfactory.js';
import type { Logger } from '../../src/log/logger.js';
import { toLease, type Lease } from '../../src/kube/objects.js';
import { createTestNamespace, testClients, uniquePrefix, waitFor } from '../support/cluster.js';


const quietLog: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function leaseBody(name: string, holder: string) {
  return { metadata: { name }, spec: { holderIdentity: holder, leaseDurationSeconds: 40 } };
}

async function createLeases(clients: KubeClients, namespace: string, names: string[]): Promise<void> {
  await Promise.all(names.map((n) => clients.coordination.createNamespacedLease({ namespace, body: leaseBody(n, n) })));
}

/** name → resourceVersion of a fresh, unpaginated list. */
async function freshList(clients: KubeClients, namespace: string): Promise<Map<string, string>> {
  const list = await clients.coordination.listNamespacedLease({ namespace });
  return new Map(list.items.map((l) => [l.metadata?.name ?? '', l.metadata?.resourceVersion ?? '']));
}

function cached(informer: Informer<Lease>): Map<string, string> {
  return new Map(informer.list().map((l) => [l.name, l.resourceVersion]));
}

function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

describe('Informer on the shared cluster', () => {
  let clients: KubeClients;
  let namespace: string;
  before(async () => {
    clients = testClients();
    namespace = uniquePrefix('inf');
    await createTestNamespace(clients, namespace);
  });
  after(async () => {
    await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  test('initial sync lists in pages of 10 and matches a fresh list', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `lease-${String(i).padStart(2, '0')}`);
    await createLeases(clients, namespace, names);
    const pages: ListPageOptions[] = [];
    const informer = new Informer<Lease>({
      name: 'leases',
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      list: (o) => {
        pages.push(o);
        return clients.coordination.listNamespacedLease({ namespace, limit: o.limit, _continue: o._continue }, abortSignalOptions(o.signal));
      },
      convert: toLease,
      keyOf: (l) => l.name,
      log: quietLog,
      clock: realClock,
      kubeConfig: clients.kubeConfig,
      pageSize: 10,
      watchList: false,
    });
    let adds = 0;
    informer.on('add', () => adds++);
    await informer.start();
    assert.equal(informer.hasSynced(), false, 'start() does not wait for the sync');
    await informer.waitForSync(AbortSignal.timeout(30_000));
    assert.equal(pages.length, 3);
    assert.equal(pages[0]?._continue, undefined);
    assert.ok(pages[1]?._continue && pages[2]?._continue, 'continue tokens are passed on');
    assert.equal(adds, 25);
    assert.ok(sameMap(cached(informer), await freshList(clients, namespace)));
    informer.stop();
  });

  test('initial sync by streaming watch-list where the server serves it (1.34+): no list call, synced at the end bookmark, matches a fresh list; a 1.20 server: falls back to list+watch', async () => {
    // The 1.20 CI lane's API server refuses the watch-list (422): the same informer must then list.
    const minor = Number.parseInt((await clients.kubeConfig.makeApiClient(VersionApi).getCode()).minor, 10);
    const served = minor >= 34;
    const ns = `${namespace}-wl`;
    await createTestNamespace(clients, ns);
    try {
      await createLeases(clients, ns, ['wl-a', 'wl-b', 'wl-c']);
      let lists = 0;
      const informer = new Informer<Lease>({
        name: 'leases',
        path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
        list: (o: ListPageOptions) => {
          lists++;
          if (served) return Promise.reject(new Error('a watch-list must not list'));
          return clients.coordination.listNamespacedLease({ namespace: ns, limit: o.limit, _continue: o._continue }, abortSignalOptions(o.signal));
        },
        convert: toLease,
        keyOf: (l) => l.name,
        log: quietLog,
        clock: realClock,
        kubeConfig: clients.kubeConfig,
        watchList: true,
      });
      await informer.start();
      await informer.waitForSync(AbortSignal.timeout(30_000));
      if (served) assert.equal(lists, 0, `server minor version ${minor}`);
      else assert.ok(lists >= 1, `server minor version ${minor}: fell back to a list`);
      // A watch-list is watching at its end bookmark; the fallback opens its watch after the list.
      if (served) assert.equal(informer.isWatching(), true);
      else await waitFor('the fallback watch is open', () => informer.isWatching());
      assert.ok(sameMap(cached(informer), await freshList(clients, ns)));
      await createLeases(clients, ns, ['wl-d']);
      const deadline = Date.now() + 30_000;
      while (!informer.get('wl-d') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.ok(informer.get('wl-d'), 'the same stream goes on as the watch');
      informer.stop();
    } finally {
      await clients.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
  });

  test('delivers add, update(old, new) and delete from the watch (leaseInformer factory)', async () => {
    const ns = `${namespace}-w`;
    await createTestNamespace(clients, ns);
    try {
      await createLeases(clients, ns, ['a']);
      const informer = leaseInformer(clients, { namespace: ns, log: quietLog, clock: realClock, pageSize: 10 });
      const seen: string[] = [];
      let updateOld: Lease | undefined;
      let updateNew: Lease | undefined;
      informer.on('add', (l) => seen.push(`add ${l.name}`));
      informer.on('update', (o, n) => {
        seen.push(`update ${n.name}`);
        updateOld = o;
        updateNew = n;
      });
      informer.on('delete', (l) => seen.push(`delete ${l.name}`));
      await informer.start();
      await informer.waitForSync(AbortSignal.timeout(30_000));
      assert.deepEqual(seen, ['add a']);
      await waitFor('watch connected', () => informer.stats().watchConnects > 0, 10_000);

      await createLeases(clients, ns, ['b']);
      await waitFor('add b', () => seen.includes('add b'), 10_000);
      await clients.coordination.patchNamespacedLease(
        { name: 'a', namespace: ns, body: [{ op: 'replace', path: '/spec/holderIdentity', value: 'new-holder' }] },
      );
      await waitFor('update a', () => seen.includes('update a'), 10_000);
      assert.equal(updateOld?.holderIdentity, 'a');
      assert.equal(updateNew?.holderIdentity, 'new-holder');
      assert.equal(informer.get(`${ns}/a`)?.holderIdentity, 'new-holder');
      await clients.coordination.deleteNamespacedLease({ name: 'b', namespace: ns });
      await waitFor('delete b', () => seen.includes('delete b'), 10_000);
      assert.deepEqual(informer.keys(), [`${ns}/a`]);
      informer.stop();
    } finally {
      await clients.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
  });
});

describe('Informer across an API server outage (private control plane)', { timeout: 420_000 }, () => {
  let cpA: PrivateControlPlane | undefined;
  let cpB: PrivateControlPlane | undefined;

  after(async () => {
    await cpB?.run('stop-apiserver').catch(() => undefined);
    await cpB?.remove();
    await cpA?.run('down').catch(() => undefined);
    await cpA?.remove();
  });

  test('stopped for 20 s and restarted: recovers by itself and converges to a fresh list', { timeout: 400_000 }, async () => {
    cpA = await PrivateControlPlane.create();
    await cpA.run('up');
    const a = await cpA.clients();
    // Sanity: the kubeconfig the script wrote points at the same server.
    assert.ok(loadKubeConfig(join(cpA.stateDir, 'kubeconfig')).getCurrentCluster()?.server.endsWith(`:${cpA.apiserverPort}`));
    const ns = 'outage';
    await createTestNamespace(a, ns);
    await createLeases(
      a,
      ns,
      Array.from({ length: 15 }, (_, i) => `l${i}`),
    );

    const warns: string[] = [];
    const infos: string[] = [];
    const log: Logger = { ...quietLog, warn: (_o, msg) => void warns.push(msg), info: (_o, msg) => void infos.push(msg) };
    // The factory starts with a watch-list: 1.37 serves it; 1.20 refuses it (422) and gets list+watch.
    const minor = Number.parseInt((await a.kubeConfig.makeApiClient(VersionApi).getCode()).minor, 10);
    const informer = leaseInformer(a, { namespace: ns, log, clock: realClock, pageSize: 10 });
    const seen: string[] = [];
    const updates = new Map<string, [string | undefined, string | undefined]>();
    informer.on('add', (l) => seen.push(`add ${l.name}`));
    informer.on('update', (o, n) => updates.set(n.name, [o.holderIdentity, n.holderIdentity]));
    informer.on('delete', (l) => seen.push(`delete ${l.name}`));
    await informer.start();
    await informer.waitForSync(AbortSignal.timeout(30_000));
    await waitFor('watch connected', () => informer.stats().watchConnects > 0, 10_000);
    assert.equal(informer.list().length, 15);
    assert.equal(infos.includes('watch-list not served; falling back to list+watch'), minor < 27, `server minor version ${minor}`);
    seen.length = 0;

    await cpA.run('stop-apiserver');
    const downAt = Date.now();

    // While A is down, a second apiserver on the same etcd changes the collection.
    cpB = await cpA.sibling();
    await cpB.run('start-apiserver');
    const b = await cpB.clients();
    await createLeases(b, ns, ['born-during-outage']);
    await b.coordination.deleteNamespacedLease({ name: 'l0', namespace: ns });
    await b.coordination.patchNamespacedLease({
      name: 'l1',
      namespace: ns,
      body: [{ op: 'replace', path: '/spec/holderIdentity', value: 'changed-during-outage' }],
    });
    await cpB.run('stop-apiserver');

    const remaining = 20_000 - (Date.now() - downAt);
    if (remaining > 0) await new Promise((r) => setTimeout(r, remaining));
    assert.equal(informer.hasSynced(), true, 'hasSynced stays true through the outage');
    assert.ok(informer.stats().restarts > 0, 'the informer noticed the outage');
    assert.equal(informer.isWatching(), false, 'no live watch while the server is away');
    assert.deepEqual(informer.keys().length, 15, 'the stale cache is kept while the server is away');

    await cpA.run('start-apiserver');
    // client-go's reflector backoff: the first attempt after the return, then one more step before
    // the relist the restarted watch cache's 410 forces (reconnectWindowMs).
    await waitFor(
      'cache to equal a fresh list',
      async () => sameMap(cached(informer), await freshList(a, ns)),
      reconnectWindowMs(Date.now() - downAt) + 10_000,
      500,
    );
    await waitFor('watch live again', () => informer.isWatching(), 30_000);
    assert.ok(seen.includes('add born-during-outage'));
    assert.ok(seen.includes('delete l0'));
    assert.deepEqual(updates.get('l1'), ['l1', 'changed-during-outage']);
    assert.ok(warns.some((w) => /retrying after backoff/.test(w)));

    // And the watch is live again: a new change arrives without another restart.
    const restarts = informer.stats().restarts;
    await createLeases(a, ns, ['after-recovery']);
    await waitFor('add after recovery', () => seen.includes('add after-recovery'), 15_000);
    assert.equal(informer.stats().restarts, restarts);
    informer.stop();
  });
});
