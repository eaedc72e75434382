/**
 * Issue 19 acceptance: the node-affinity-enforcer against the real kube-apiserver.
 *
 * No kubelet runs: the test creates its Nodes (labelled into its own fleet, Ready set through the
 * status subresource) and binds Pods to them directly. Only `node-affinity-enforcer` runs, so
 * nothing else judges the nodes. "Evicted" means the pod has a deletionTimestamp (or is gone): the
 * Eviction API deletes gracefully and no kubelet confirms it. No kube-controller-manager runs
 * either, so the test plays the disruption controller: it writes the PodDisruptionBudget's status
 * (observedGeneration, disruptionsAllowed), which is all the eviction subresource reads.
 *
 * Skipped below Kubernetes 1.22 (the 1.20 lane): policy/v1 Eviction does not exist there and the
 * controller has no v1beta1 fallback (docs/node-affinity.md).
 *
 * Timing: acceptance asks for an eviction within grace + 2 s of the label change. The tolerance
 * covers the watch delay (ms), the pump (0 ms timer) and one write; the lower bound (not before the
 * grace) is the safety property and has no tolerance.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { getJson } from '../../src/kube/client.js';
import type { RunningController } from '../../src/cli/run.js';
import { EVENT_BLOCKED_BY_PDB, EVENT_EVICTED, EVENT_VIOLATED, NODE_AFFINITY_ENFORCER_NAME } from '../../src/nodeaffinity/controller.js';
import { REQUIRED_DURING_EXECUTION_ANNOTATION } from '../../src/nodeaffinity/rule.js';
import { createTestNamespace, holdsFor, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricValue, scrapeMetrics, startTestController } from '../support/controller.js';

const clients = testClients();
const policy = clients.kubeConfig.makeApiClient(PolicyV1Api);
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const GRACE_MS = 3000;
const RULE = JSON.stringify({ nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['gold'] }] }] });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function serverMinor(): Promise<number> {
  const v = (await getJson(clients.kubeConfig, '/version', {})) as { major?: string; minor?: string };
  return Number.parseInt(v.minor ?? '0', 10);
}
// An unreachable server is not a reason to skip: the tests then fail and say so.
const minor = await serverMinor().catch(() => undefined);
const skip = minor !== undefined && minor < 22 ? `policy/v1 Eviction needs Kubernetes >= 1.22; this server is 1.${minor} (the controller has no v1beta1 fallback)` : false;

describe('node-affinity-enforcer (issue 19) on the real API server', { skip }, () => {
  const prefix = uniquePrefix('affinity');
  const namespace = prefix;
  const nodes: string[] = [];
  let controller: RunningController | undefined;

  async function createNode(name: string, pool: string): Promise<void> {
    await clients.core.createNode({ body: { metadata: { name, labels: { 'nlc.sim/fleet': prefix, pool } } } });
    nodes.push(name);
    const now = new Date();
    await clients.core.patchNodeStatus(
      { name, body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'test', lastHeartbeatTime: now, lastTransitionTime: now }] } } },
      STRATEGIC,
    );
  }

  async function setPool(node: string, pool: string): Promise<void> {
    await clients.core.patchNode({ name: node, body: { metadata: { labels: { pool } } } }, MERGE);
  }

  /** A Running, Ready pod bound to `node` (Ready so the PDB counts it healthy). */
  async function createPod(name: string, node: string, opts: { rule?: boolean; labels?: Record<string, string> } = {}): Promise<void> {
    await clients.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name, labels: opts.labels ?? {}, annotations: opts.rule === false ? {} : { [REQUIRED_DURING_EXECUTION_ANNOTATION]: RULE } },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    const now = new Date();
    await clients.core.patchNamespacedPodStatus(
      { name, namespace, body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } } },
      STRATEGIC,
    );
  }

  async function podState(name: string): Promise<'running' | 'evicted'> {
    try {
      const p = await clients.core.readNamespacedPod({ namespace, name });
      return p.metadata?.deletionTimestamp ? 'evicted' : 'running';
    } catch (err) {
      if ((err as { code?: number }).code === 404) return 'evicted';
      throw err;
    }
  }

  async function eventReasons(pod: string): Promise<string[]> {
    const list = await clients.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod}` });
    return list.items.filter((e) => e.source?.component === NODE_AFFINITY_ENFORCER_NAME).map((e) => e.reason ?? '');
  }

  async function eventMessages(pod: string, reason: string): Promise<string[]> {
    const list = await clients.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod},reason=${reason}` });
    return list.items.map((e) => e.message ?? '');
  }

  /** Plays the disruption controller: the status the eviction subresource checks. */
  async function setPdbStatus(name: string, disruptionsAllowed: number, currentHealthy: number): Promise<void> {
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name, namespace });
    await policy.replaceNamespacedPodDisruptionBudgetStatus({
      name,
      namespace,
      body: {
        ...pdb,
        status: { observedGeneration: pdb.metadata?.generation ?? 1, disruptionsAllowed, currentHealthy, desiredHealthy: 1, expectedPods: currentHealthy, disruptedPods: pdb.status?.disruptedPods ?? {} },
      },
    });
  }

  before(async () => {
    await createTestNamespace(clients, namespace);
    for (const n of ['evict', 'pdb', 'restore']) await createNode(`${prefix}-${n}`, 'gold');
    controller = await startTestController(prefix, [
      `--controllers=${NODE_AFFINITY_ENFORCER_NAME}`,
      `--affinity-violation-grace=${GRACE_MS}ms`,
      '--affinity-eviction-rate=20',
    ]);
  });

  after(async () => {
    await controller?.stop();
    await clients.core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0 } }).catch(() => undefined);
    for (const n of nodes) await clients.core.deleteNode({ name: n }).catch(() => undefined);
    await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  test('a label change evicts within grace + 2 s through the Eviction API; a pod without the annotations is never touched', async () => {
    const node = `${prefix}-evict`;
    await createPod('ruled', node);
    await createPod('plain', node, { rule: false });
    await sleep(500); // the informers see the pods
    const changedAt = Date.now();
    await setPool(node, 'silver');
    const evictedAt = await waitFor('ruled evicted', async () => ((await podState('ruled')) === 'evicted' ? Date.now() : undefined), GRACE_MS + 10_000, 50);
    const took = evictedAt - changedAt;
    assert.ok(took >= GRACE_MS - 100, `not before the grace period (took ${took} ms; 100 ms covers the poll and the clocks' start)`);
    assert.ok(took <= GRACE_MS + 2000, `within grace + 2 s (took ${took} ms)`);
    await waitFor('events', async () => {
      const r = await eventReasons('ruled');
      return r.includes(EVENT_VIOLATED) && r.includes(EVENT_EVICTED) ? r : undefined;
    });
    const text = await scrapeMetrics(controller as RunningController);
    assert.ok((metricValue(text, 'node_affinity_enforcer_evictions_total', { result: 'evicted' }) ?? 0) >= 1);
    // Absence: had the pod without annotations been judged, it would have gone with 'ruled', a grace
    // after the same label change; observe one more grace period.
    await holdsFor('the pod without annotations is never evicted', async () => (await podState('plain')) === 'running', GRACE_MS);
    assert.deepEqual(await eventReasons('plain'), []);
  });

  test('a PDB at its limit blocks the eviction (EvictionBlockedByPDB) until a replica comes back', async () => {
    const node = `${prefix}-pdb`;
    await policy.createNamespacedPodDisruptionBudget({
      namespace,
      body: { metadata: { name: 'guard' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } },
    });
    await createPod('guarded-0', node, { labels: { app: 'guarded' } });
    await setPdbStatus('guard', 0, 1);
    await sleep(500);
    await setPool(node, 'silver');
    await waitFor('EvictionBlockedByPDB', async () => ((await eventReasons('guarded-0')).includes(EVENT_BLOCKED_BY_PDB) ? true : undefined), GRACE_MS + 10_000);
    const [message] = await eventMessages('guarded-0', EVENT_BLOCKED_BY_PDB);
    assert.match(message ?? '', /disruption budget guard needs 1 healthy pods and has 1 currently/i, "the Event explains the refusal with the server's cause");
    assert.match(message ?? '', /next in \d+s/, 'and says when it tries again');
    // Absence: the refusal is retried (the Event's "next in Ns"); observe a grace period: a retry
    // that ignored the budget would evict within it.
    await holdsFor('the PDB holds', async () => (await podState('guarded-0')) === 'running', GRACE_MS);
    const view = controller?.nodeAffinity?.view().violations.find((v) => v.pod === `${namespace}/guarded-0`);
    assert.equal(view?.state, 'blocked-by-pdb');

    // A replica comes back (on a node that still matches): the budget allows one disruption.
    await createPod('guarded-1', `${prefix}-restore`, { labels: { app: 'guarded' } });
    await setPdbStatus('guard', 1, 2);
    await waitFor('guarded-0 evicted after the replica came back', async () => ((await podState('guarded-0')) === 'evicted' ? true : undefined), 60_000, 200);
    // The Event is recorded after the eviction returns, through the asynchronous Event sink (as
    // client-go's broadcaster): it may reach the API server a moment after the pod is evicted.
    await waitFor('the Evicted Event', async () => ((await eventReasons('guarded-0')).includes(EVENT_EVICTED) ? true : undefined), 10_000, 200);
    assert.equal(await podState('guarded-1'), 'running');
  });

  test('a label restored within the grace cancels the eviction', async () => {
    const node = `${prefix}-restore`;
    await createPod('flap', node);
    await sleep(500);
    await setPool(node, 'silver');
    await waitFor('NodeAffinityViolated', async () => ((await eventReasons('flap')).includes(EVENT_VIOLATED) ? true : undefined), 10_000);
    await setPool(node, 'gold');
    // Absence: an eviction that was not cancelled comes a grace after the change (+ the 2 s the
    // acceptance allows): observe that long.
    await holdsFor('the restored pod stays', async () => (await podState('flap')) === 'running', GRACE_MS + 2000);
    assert.ok(!(await eventReasons('flap')).includes(EVENT_EVICTED));
    assert.equal(controller?.nodeAffinity?.view().violations.find((v) => v.pod === `${namespace}/flap`), undefined);
  });
});
