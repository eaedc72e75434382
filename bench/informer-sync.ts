/**
 * Time to sync the pods informer alone (src/kube/informerfactory.ts `podInformer`, the controller's own)
 * against one private control plane and fleet: the streaming watch-list (the default) and the
 * paginated list at several page sizes, alternating so that all see the same machine load. Issue 18: time to caches synced; this separates the informer's own
 * listing from everything else the controller does while it starts.
 *
 *   node --import tsx bench/informer-sync.ts [--nodes 300] [--pods-per-node 30] [--rounds 4] [--page-sizes 500,5000] [--no-watch-list] [--raw]
 *
 * `--raw` adds variants that decode nothing, gzip-compressed as both clients accept, as JSON (what
 * client-node asks for) and as protobuf (what client-go asks for): one unpaginated `GET /api/v1/pods`
 * timed to its last byte (`raw:list-json`, `raw:list-protobuf`), and the streaming watch-list timed to its
 * `k8s.io/initial-events-end` bookmark, found by a byte search after gunzip (`raw:watchlist-json`,
 * `raw:watchlist-protobuf`). They measure the API server's own time to serve the pods in each
 * encoding: the floor under any informer of that encoding on this machine.
 *
 * Prints one JSON line per sync and a summary (median and min–max per variant, ms, with the load
 * average). Needs the cached binaries of `scripts/control-plane.sh`; never touches the shared cluster.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { request, type RequestOptions } from 'node:https';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { podInformer } from '../src/kube/informerfactory.js';
import type { KubeClients } from '../src/kube/client.js';
import { realClock } from '../src/util/clock.js';
import { cleanupAll, controlPlaneOnlyContext, startFleet, withControlPlane } from './lib/harness.js';
import { benchParser } from './lib/options.js';
import { median } from './lib/report.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** `watchlist`, `list:<pageSize>`, or `raw:<list|watchlist>-<json|protobuf>`. */
type Variant = string;

const RAW_ACCEPT: Readonly<Record<string, string>> = { json: 'application/json', protobuf: 'application/vnd.kubernetes.protobuf' };

const INITIAL_EVENTS_END = Buffer.from('k8s.io/initial-events-end');

/** One timed read: ms from its start to the end, and either the pods cached or the (gzip) bytes received. */
type SyncResult = { ms: number; pods: number } | { ms: number; gzipBytes: number };

/**
 * One undecoded read of every pod: `list-<encoding>` is an unpaginated list read to its last byte;
 * `watchlist-<encoding>` is the streaming watch-list read (after gunzip) until the bookmark that
 * ends the initial events, then closed.
 * @returns ms from the request to the end, and the compressed bytes received (no pods are counted).
 * @throws {Error} on a status other than 200, or a watch that ends without the bookmark.
 */
async function rawReadOnce(clients: KubeClients, variant: string): Promise<SyncResult> {
  const [kind, encoding] = variant.split('-') as [string, string];
  const kc = clients.kubeConfig;
  const server = kc.getCurrentCluster()?.server ?? '';
  const opts: RequestOptions = { headers: { Accept: RAW_ACCEPT[encoding] ?? 'application/json', 'Accept-Encoding': 'gzip' } };
  await kc.applyToHTTPSOptions(opts);
  const path = kind === 'watchlist' ? '/api/v1/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan' : '/api/v1/pods';
  const t0 = performance.now();
  const bytes = await new Promise<number>((resolveBytes, reject) => {
    const req = request(new URL(path, server), opts, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${path}: ${res.statusCode}`));
        return;
      }
      let n = 0;
      res.on('data', (chunk: Buffer) => (n += chunk.length));
      res.on('error', reject);
      if (kind !== 'watchlist') {
        res.on('end', () => resolveBytes(n));
        return;
      }
      const body: Readable = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
      let tail = Buffer.alloc(0);
      body.on('data', (chunk: Buffer) => {
        const window = Buffer.concat([tail, chunk]);
        if (window.includes(INITIAL_EVENTS_END)) {
          resolveBytes(n);
          req.destroy();
          return;
        }
        tail = window.subarray(Math.max(0, window.length - INITIAL_EVENTS_END.length));
      });
      // After the bookmark the destroy below ends the stream with an error; the promise is settled by then.
      body.on('error', reject);
      body.on('end', () => reject(new Error(`GET ${path}: ended before the initial-events-end bookmark`)));
    });
    req.on('error', reject);
    req.end();
  });
  return { ms: Math.round(performance.now() - t0), gzipBytes: bytes };
}

/** One sync of a fresh pods informer (or a raw read). @returns ms from start to synced, and the pods cached. */
async function syncOnce(clients: KubeClients, variant: Variant): Promise<SyncResult> {
  if (variant.startsWith('raw:')) return rawReadOnce(clients, variant.slice('raw:'.length));
  const watchList = variant === 'watchlist';
  const pageSize = watchList ? undefined : Number(variant.slice('list:'.length));
  const informer = podInformer(clients, { log: quiet, clock: realClock, pageSize, watchList });
  const t0 = performance.now();
  await informer.start();
  await informer.waitForSync();
  const ms = performance.now() - t0;
  const pods = informer.list().length;
  informer.stop();
  return { ms: Math.round(ms), pods };
}

async function main(): Promise<number> {
  let argv;
  try {
    argv = await benchParser(process.argv.slice(2))
      .usage('Usage: bench/informer-sync.ts [flags]\n\nPods informer sync time, watch-list and list at several page sizes, on one private control plane.')
      .options({
        nodes: { type: 'number', default: 300 },
        'pods-per-node': { type: 'number', default: 30 },
        rounds: { type: 'number', default: 4, describe: 'syncs per variant, alternating' },
        'page-sizes': { type: 'string', default: '500', describe: 'comma-separated list page sizes to compare (paginated list+watch)' },
        'watch-list': { type: 'boolean', default: true, describe: 'also time the streaming watch-list (sendInitialEvents)' },
        raw: { type: 'boolean', default: false, describe: 'also time an undecoded pod list and watch-list, as JSON and as protobuf (the API server\'s floor per encoding)' },
      })
      .parseAsync();
    if (argv.help === true) return 0;
  } catch (err) {
    process.stderr.write(`informer-sync: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const ctx = controlPlaneOnlyContext(REPO, 'informer-sync');
  process.once('SIGINT', () => void cleanupAll().finally(() => process.exit(130)));
  const sizes = argv['page-sizes'].split(',').map(Number);
  if (sizes.some((x) => !Number.isInteger(x) || x < 1)) {
    process.stderr.write('informer-sync: --page-sizes must be positive integers\n');
    return 2;
  }
  const variants: Variant[] = [...(argv['watch-list'] ? ['watchlist'] : []), ...sizes.map((x) => `list:${x}`), ...(argv.raw ? ['raw:list-json', 'raw:list-protobuf', 'raw:watchlist-json', 'raw:watchlist-protobuf'] : [])];
  const out = new Map<Variant, number[]>(variants.map((x) => [x, []]));
  await withControlPlane(ctx, async (env) => {
    const shape = { prefix: 'is', nodes: argv.nodes, zones: 3, podsPerNode: argv['pods-per-node'], podMix: { plain: 1 }, statsWindowMs: 60_000 };
    const { fleet } = await startFleet(ctx, env, shape, 5000);
    try {
      for (let i = 0; i < argv.rounds; i++) {
        for (const variant of i % 2 === 0 ? variants : [...variants].reverse()) {
          const r = await syncOnce(env.clients, variant);
          out.get(variant)?.push(r.ms);
          const { ms, ...count } = r;
          process.stdout.write(`${JSON.stringify({ variant, round: i + 1, syncMs: ms, ...count, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) })}\n`);
        }
      }
    } finally {
      await fleet.stop();
    }
  });
  const summary = (v: number[]): string => `median ${median(v)} ms (${Math.min(...v)}–${Math.max(...v)})`;
  process.stdout.write(`${JSON.stringify({ ...Object.fromEntries([...out].map(([k, v]) => [k, summary(v)])), loadavg: loadavg().map((x) => Math.round(x * 100) / 100) })}\n`);
  return 0;
}

if (process.argv[1]?.endsWith('informer-sync.ts')) process.exitCode = await main();
