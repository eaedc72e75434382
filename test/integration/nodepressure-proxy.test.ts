/**
 * The Summary API through the API server's node proxy, and `explain node` on a node under pressure
 * (issue 20, docs/node-pressure.md "The Summary API" and "Explained"), on the real API server.
 *
 * The fleet serves its kubelets' `/stats/summary` and `/configz` (packages/sim/src/kubeletserver.ts). A soft
 * threshold with a 10 min grace period keeps the node under MemoryPressure without any eviction,
 * so the test can read a stable state: a BestEffort hog of 13Gi, a Burstable pod over its request
 * and a Guaranteed pod. Shared cluster, own fleet prefix and namespace; no controller needed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RbacAuthorizationV1Api, type V1Pod, type V1ResourceRequirements } from '@kubernetes/client-node';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { FLEET_LABEL, SIM_IMAGE } from '@node-lifecycle-controller/sim/objects';
import { USAGE_ANNOTATION } from '@node-lifecycle-controller/sim/evictionmanager';
import { evictionConfigFromFlags } from '../../src/kubelet/thresholds.js';
import { parseQuantity } from '../../src/kube/quantity.js';
import type { Summary } from '../../src/kubelet/signals.js';
import { apiServerGet } from '../../src/cli/inspect.js';
import { runExplainCommand, type NodeReport } from '../../src/cli/explain.js';
import { getCondition, toNode } from '../../src/kube/objects.js';
import { loadKubeConfig } from '../../src/kube/client.js';
import { createTestNamespace, kubeconfigPath, testClients, uniquePrefix, waitFor } from '../support/cluster.js';

const clients = testClients();
const rbac = clients.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
const prefix = uniquePrefix('pproxy');
const namespace = prefix;
/** A read-only ClusterRole for `explain node` without nodes/proxy (cluster-scoped: removed in after()). */
const readerRole = `${prefix}-explain-reader`;
let fleet: Fleet;
let tmp: string | undefined;

function pod(name: string, node: string, resources: V1ResourceRequirements | undefined, usage: string): V1Pod {
  return {
    metadata: { name, namespace, labels: { [FLEET_LABEL]: prefix }, annotations: { [USAGE_ANNOTATION]: usage } },
    spec: {
      nodeName: node, automountServiceAccountToken: false, terminationGracePeriodSeconds: 30,
      containers: [{ name: 'app', image: SIM_IMAGE, ...(resources ? { resources } : {}) }],
    },
  };
}

async function explain(args: string[], kubeconfig = kubeconfigPath()): Promise<string> {
  let out = '';
  await runExplainCommand([...args, '--kubeconfig', kubeconfig], { out: (t) => void (out += t), err: () => undefined });
  return out;
}

/** A kubeconfig for a ServiceAccount that may read nodes, pods and leases but not get nodes/proxy. */
async function readerKubeconfig(): Promise<string> {
  await clients.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'reader' } } });
  await rbac.createClusterRole({ body: { metadata: { name: readerRole }, rules: [
    { apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get', 'list'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list'] },
  ] } });
  await rbac.createClusterRoleBinding({ body: {
    metadata: { name: readerRole },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: readerRole },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace }],
  } });
  const token = (await clients.core.createNamespacedServiceAccountToken({ name: 'reader', namespace, body: { spec: { expirationSeconds: 3600 } } })).status?.token;
  assert.ok(token, 'a token for the reader');
  const cluster = clients.kubeConfig.getCurrentCluster();
  assert.ok(cluster);
  tmp = await mkdtemp(join(tmpdir(), 'nlc-pproxy-'));
  const path = join(tmp, 'reader.kubeconfig');
  await writeFile(path, JSON.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: cluster.server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'reader', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'reader' } }],
    'current-context': 'c',
  }));
  return path;
}

before(async () => {
  await createTestNamespace(clients, namespace);
  fleet = new Fleet({
    clients, prefix, namespace, zones: 1, nodesPerZone: 2, podsPerNode: 0,
    leaseRenewIntervalMs: 2000, nodeStatusUpdateFrequencyMs: 10_000, kubeletServer: true,
    eviction: evictionConfigFromFlags({
      'eviction-hard': 'memory.available<100Mi',
      'eviction-soft': 'memory.available<2Gi',
      'eviction-soft-grace-period': 'memory.available=10m',
    }),
  });
  await fleet.start();
});

after(async () => {
  await fleet?.stop();
  await fleet?.cleanup();
  await rbac.deleteClusterRoleBinding({ name: readerRole }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: readerRole }).catch(() => undefined);
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the Summary API behind the node proxy (issue 20)', () => {
  test('each node reports its kubelet endpoint; /api/v1/nodes/NODE/proxy/stats/summary reaches that node\'s kubelet', async () => {
    for (const name of fleet.nodeNames()) {
      const node = await clients.core.readNode({ name });
      const ep = fleet.kubeletEndpoint(name);
      assert.ok(ep, `${name} serves`);
      assert.deepEqual(node.status?.addresses?.map((a) => ({ type: a.type, address: a.address })), [{ type: 'InternalIP', address: ep.address }]);
      assert.equal(node.status?.daemonEndpoints?.kubeletEndpoint?.Port, ep.port);
      const res = await apiServerGet(clients.kubeConfig, `/api/v1/nodes/${name}/proxy/stats/summary`);
      assert.equal(res.status, 200, res.body);
      assert.equal((JSON.parse(res.body) as Summary).node.nodeName, name, 'the node proxy reaches this node\'s kubelet, not another');
    }
  });

  test('a hog → MemoryPressure, visible through the node proxy; explain node shows the signal, threshold, since when and the ranking', async () => {
    const node = fleet.nodeNames()[0] as string;
    await clients.core.createNamespacedPod({ namespace, body: pod('hog', node, undefined, 'memory=13Gi') });
    await clients.core.createNamespacedPod({ namespace, body: pod('burstable', node, { requests: { memory: '256Mi' }, limits: { memory: '1Gi' } }, 'memory=150%') });
    await clients.core.createNamespacedPod({ namespace, body: pod('guaranteed', node, { requests: { cpu: '100m', memory: '512Mi' }, limits: { cpu: '100m', memory: '512Mi' } }, 'memory=100%') });
    fleet.nodePressure.manager(node);
    await waitFor('MemoryPressure=True', async () => getCondition(toNode(await clients.core.readNode({ name: node }))?.conditions ?? [], 'MemoryPressure')?.status === 'True', 90_000, 200);

    const res = await apiServerGet(clients.kubeConfig, `/api/v1/nodes/${node}/proxy/stats/summary`);
    assert.equal(res.status, 200, res.body);
    const summary = JSON.parse(res.body) as Summary;
    const available = summary.node.memory?.availableBytes ?? Number.NaN;
    assert.ok(available < parseQuantity('2Gi'), `memory.available ${available} is below the 2Gi soft threshold in the Summary read through the proxy`);
    const hog = summary.pods.find((p) => p.podRef.name === 'hog');
    assert.equal(hog?.memory?.workingSetBytes, parseQuantity('13Gi'), 'the hog\'s working set is in the Summary');
    const configz = await apiServerGet(clients.kubeConfig, `/api/v1/nodes/${node}/proxy/configz`);
    assert.equal(configz.status, 200, configz.body);
    assert.deepEqual((JSON.parse(configz.body) as { kubeletconfig: { evictionSoft?: unknown } }).kubeletconfig.evictionSoft, { 'memory.available': String(parseQuantity('2Gi')) });

    const e = JSON.parse(await explain(['node', node, '-o', 'json'])) as NodeReport;
    assert.ok(e.pressure, 'explain node has a pressure part');
    assert.equal(e.pressure.source, 'summary-api');
    assert.equal(e.pressure.thresholdsFrom, 'configz');
    assert.equal(e.pressure.conditions[0]?.type, 'MemoryPressure');
    assert.ok(e.pressure.conditions[0]?.since, 'since when');
    const soft = e.pressure.signals.find((s) => s.signal === 'memory.available' && s.kind === 'soft');
    assert.deepEqual([soft?.threshold, soft?.gracePeriod, soft?.met], ['2Gi', '10m0s', true]);
    assert.equal(e.pressure.ranking.signal, 'memory.available');
    assert.deepEqual(e.pressure.ranking.pods.map((p) => p.pod), [`${namespace}/hog`, `${namespace}/burstable`, `${namespace}/guaranteed`]);
    assert.equal(e.pressure.ranking.next, `${namespace}/hog`);
    assert.deepEqual(e.pressure.ranking.pods.map((p) => p.exceedsRequest), [true, true, false]);
    assert.equal(e.pressure.ranking.pods[0]?.usage, '13Gi');
    assert.equal(e.pressure.ranking.pods[0]?.usageValue, parseQuantity('13Gi'), 'exact bytes in -o json');
    // The stats' own time (node.memory.time) and age: the ranking is as of then.
    assert.ok(e.pressure.stats, 'the stats time is shown');
    assert.equal(e.pressure.stats.refreshSeconds, 10);
    assert.ok(e.pressure.stats.ageSeconds >= 0, `stats age ${e.pressure.stats.ageSeconds} s`);
    assert.equal(e.pressure.ranking.asOf, e.pressure.stats.time);
    assert.equal(soft?.statsTime, e.pressure.stats.time);
    assert.equal(e.pressure.ranking.staleStats, false, 'no pod counted in the stats has gone');

    const text = await explain(['node', node]);
    assert.match(text, /Pressure: +MemoryPressure=True since /);
    assert.match(text, /Eviction order for memory\.available \(the kubelet's ranking, live usage\) as of the stats at \d\d:\d\d:\d\dZ:/);
    assert.match(text, /Stats: +from \d\d:\d\d:\d\dZ, [\d.]+ s old; the kubelet refreshes them every 10 s/);
    assert.match(text, new RegExp(`1 +${namespace}/hog +BestEffort`));
    assert.match(text, /Next \(as of the stats at \d\d:\d\d:\d\dZ\) to be evicted for memory\.available: .*hog/);

    // Without nodes/proxy (a read-only role): the static order, and it says so.
    const reader = await readerKubeconfig();
    const denied = await apiServerGet(loadKubeConfig(reader), `/api/v1/nodes/${node}/proxy/stats/summary`);
    assert.equal(denied.status, 403, 'the reader may not use the node proxy');
    const s = JSON.parse(await explain(['node', node, '-o', 'json'], reader)) as NodeReport;
    assert.equal(s.pressure?.source, 'static');
    assert.equal(s.pressure?.ranking.static, true);
    assert.ok(s.pressure?.notes.some((n) => n.includes('you may not get nodes/proxy')));
    assert.deepEqual(s.pressure?.ranking.pods.map((p) => [p.pod, p.qosClass, p.usage]), [
      [`${namespace}/hog`, 'BestEffort', null], [`${namespace}/burstable`, 'Burstable', null], [`${namespace}/guaranteed`, 'Guaranteed', null],
    ]);
    assert.match(await explain(['node', node], reader), /Eviction order for memory\.available \(STATIC: QoS class, priority, requests; not live usage\)/);
  });
});
