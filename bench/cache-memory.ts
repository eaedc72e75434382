/**
 * Bytes per cached object (issue 18, memory): builds a simulated fleet's Nodes, Leases and Pods in
 * their wire form (as kube-apiserver returns them, with uid, resourceVersion, timestamps, the
 * DefaultTolerationSeconds tolerations and a Running status), feeds them page by page through
 * `JSON.parse` and the slim converters of src/kube/objects.ts into `Map`s shaped like the
 * informer's store and index, and prints the V8 heap growth per object and the heap spaces.
 * No API server: it isolates what the informer caches hold from everything else in the process.
 *
 *   node --expose-gc --import tsx bench/cache-memory.ts [--nodes 1002] [--pods-per-node 30] [--objects FILE]
 *
 * Prints one JSON line: bytes per Node, Lease and Pod (heapUsed delta after a full GC divided by
 * the count), the total, and `v8.getHeapSpaceStatistics()` used/size per space (MiB).
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import * as current from '../src/kube/objects.js';
import { assignPodKinds, buildLease, buildNode, buildPod, initialConditions, simNodeName, simPodName, runningPodStatusPatch } from '@node-lifecycle-controller/sim/objects';

const PAGE = 500;
let rv = 1_000_000;

/** Adds what kube-apiserver sets on create (uid, resourceVersion, creationTimestamp, managedFields-free). */
function serverSide<T extends { metadata?: object }>(o: T): T {
  const metadata = { ...(o.metadata ?? {}), uid: randomUUID(), resourceVersion: String(rv++), creationTimestamp: new Date().toISOString() };
  return { ...o, metadata };
}

/** JSON.parse of each page's body, as the informer's list does, then convert and store. */
function load<T>(wire: readonly unknown[], convert: (raw: unknown) => T | undefined, keyOf: (t: T) => string, index?: (t: T) => string): { size: number; clear: () => void } {
  const store = new Map<string, { obj: T; rv: string }>();
  const byIndex = new Map<string, Set<string>>();
  for (let i = 0; i < wire.length; i += PAGE) {
    const page = JSON.parse(JSON.stringify({ items: wire.slice(i, i + PAGE) })) as { items: unknown[] };
    for (const raw of page.items) {
      const obj = convert(raw);
      if (obj === undefined) continue;
      const key = keyOf(obj);
      store.set(key, { obj, rv: (obj as { resourceVersion?: string }).resourceVersion ?? '' });
      if (index) {
        const v = index(obj);
        let keys = byIndex.get(v);
        if (!keys) byIndex.set(v, (keys = new Set()));
        keys.add(key);
      }
    }
  }
  return {
    size: store.size,
    clear: () => {
      store.clear();
      byIndex.clear();
    },
  };
}

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

type Converters = Pick<typeof current, 'toNode' | 'toLease' | 'toPod' | 'podKey'>;

async function main(): Promise<void> {
  // --objects FILE: compare with another version of objects.ts (e.g. `git show REV:src/kube/objects.ts > /tmp/old.ts`).
  const i = process.argv.indexOf('--objects');
  const { toNode, toLease, toPod, podKey } = (i >= 0 ? await import(resolve(process.argv[i + 1] ?? '')) : current) as Converters;
  const nodes = arg('nodes', 1002);
  const ppn = arg('pods-per-node', 30);
  const prefix = 'cm';
  const now = Date.now();
  const zones = ['zone-a', 'zone-b', 'zone-c'];
  const nodeNames = Array.from({ length: nodes }, (_, i) => simNodeName(prefix, zones[i % 3] ?? 'zone-a', i));
  const wireNodes = nodeNames.map((name, index) =>
    serverSide(buildNode({ prefix, name, zone: zones[index % 3] ?? 'zone-a', region: 'region-1', index, conditions: initialConditions(now), volumes: [] }, now)),
  );
  const wireLeases = nodeNames.map((name) => serverSide(buildLease(prefix, name, randomUUID(), 40, now)));
  const kinds = assignPodKinds({ plain: 1, tolerationSeconds: 1, tolerateForever: 1, daemonSet: 1 }, ppn);
  const dsUid = randomUUID();
  const defaultTolerations = ['not-ready', 'unreachable'].map((t) => ({ key: `node.kubernetes.io/${t}`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }));
  const wirePods = nodeNames.flatMap((nodeName, index) =>
    kinds.map((kind, j) => {
      const name = simPodName(nodeName, kind, j);
      const pod = serverSide(buildPod({ prefix, namespace: `${prefix}-fleet`, name, nodeName, kind, tolerationSeconds: 60, daemonSet: { name: 'ds', uid: dsUid } }));
      const status = (runningPodStatusPatch(name, '172.16.0.1', `10.64.${index & 255}.${j + 2}`, now) as { status: object }).status;
      const spec = pod.spec ?? { containers: [] };
      return { ...pod, spec: { ...spec, tolerations: spec.tolerations ?? defaultTolerations }, status };
    }),
  );

  // Measured by dropping each store after all are loaded: the heap freed is what the store held
  // (loading first and diffing instead counts start-up garbage collected on the way).
  const stores = {
    nodes: load(wireNodes, toNode, (n) => n.name),
    leases: load(wireLeases, toLease, (l) => `${l.namespace}/${l.name}`),
    pods: load(wirePods, toPod, podKey, (p) => p.nodeName),
  };
  const counts = { nodes: stores.nodes.size, leases: stores.leases.size, pods: stores.pods.size };
  const spacesLoaded = getHeapSpaceStatistics();
  const freed: Record<string, number> = {};
  let before = heapUsed();
  for (const kind of ['pods', 'leases', 'nodes'] as const) {
    stores[kind].clear();
    const after = heapUsed();
    freed[kind] = before - after;
    before = after;
  }
  const spaces = Object.fromEntries(
    spacesLoaded.map((s) => [s.space_name, { usedMiB: +(s.space_used_size / 2 ** 20).toFixed(1), sizeMiB: +(s.space_size / 2 ** 20).toFixed(1) }]),
  );
  const mem = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({
      ...counts,
      bytesPerNode: Math.round((freed['nodes'] ?? 0) / counts.nodes),
      bytesPerLease: Math.round((freed['leases'] ?? 0) / counts.leases),
      bytesPerPod: Math.round((freed['pods'] ?? 0) / counts.pods),
      cachesMiB: +(Object.values(freed).reduce((x, y) => x + y, 0) / 2 ** 20).toFixed(1),
      rssMiB: +(mem.rss / 2 ** 20).toFixed(1),
      spaces,
    })}\n`,
  );
}

await main();
