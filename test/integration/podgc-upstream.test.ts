/**
 * Issue 53 item 2, the control: kube-controller-manager 1.37.2's pod GC and ours, one after the
 * other on a private control plane (kube-controller-manager's pod GC acts on every pod, so never the
 * shared cluster), on the two passes whose write issue 53 fixed:
 * - out-of-service (`gcTerminating`): a pod bound to a node without a kubelet (no Ready condition,
 *   so not Ready) tainted `node.kubernetes.io/out-of-service`, deleted gracefully and held by a
 *   finalizer;
 * - unscheduled terminating (`gcUnscheduledTerminating`): a pod that was never scheduled, deleted
 *   (the API server gives it grace 0 itself) and held by a finalizer.
 * Both controllers must leave each pod with the same fields: phase `Failed`,
 * `deletionGracePeriodSeconds` 0, `status.observedGeneration` = `metadata.generation`, and the same
 * conditions, none of them `DisruptionTarget` (upstream's `markFailedAndDeletePod` writes none; ours
 * added `DisruptionTarget`/`DeletionByPodGC` before issue 53, which a Job's `podFailurePolicy` acts on).
 *
 * The 1.37 lane only: the control is kube-controller-manager 1.37.2. (1.20's pod GC has no
 * out-of-service pass and deletes unscheduled pods without marking them Failed.) Ours alone runs
 * both cases on every lane in test/integration/outofservice.test.ts.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ControllerProcess, UPSTREAM_CONTROLLERS } from '../../bench/lib/procs.js';
import type { RunningController } from '../../src/cli/run.js';
import type { KubeClients } from '../../src/kube/client.js';
import { createTestNamespace, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { kubeControllerManagerBinary } from '../support/kube-controller-manager.js';
import { PrivateControlPlane } from '../support/private-cluster.js';

const ROOT = join(import.meta.dirname, '..', '..');
const LANE = process.env['NLC_K8S_VERSION'] ?? '1.37';
const OOS = 'node.kubernetes.io/out-of-service';
const FINALIZER = 'nlc.test/hold';
/** Pod GC's pass period (`gcCheckPeriod`), ms: kube-controller-manager acts on its first pass after its caches synced. */
const GC_CHECK_PERIOD_MS = 20_000;
const POD_GC = 'pod-garbage-collector-controller';

let cp: PrivateControlPlane | undefined;
let kcm: ControllerProcess | undefined;
let ours: RunningController | undefined;

after(async () => {
  await ours?.stop();
  await kcm?.stop();
  await cp?.run('down').catch(() => undefined);
  await cp?.remove();
});

/** The two pods of one side: one on the out-of-service node, one never scheduled; both deleted and held by the finalizer. */
async function terminatingPods(clients: KubeClients, namespace: string, node: string, side: string): Promise<{ outOfService: string; unscheduled: string }> {
  const names = { outOfService: `${side}-oos`, unscheduled: `${side}-unscheduled` };
  const spec = { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] };
  await clients.core.createNamespacedPod({ namespace, body: { metadata: { name: names.outOfService, finalizers: [FINALIZER] }, spec: { ...spec, nodeName: node } } });
  await clients.core.createNamespacedPod({ namespace, body: { metadata: { name: names.unscheduled, finalizers: [FINALIZER] }, spec } });
  for (const name of Object.values(names)) await clients.core.deleteNamespacedPod({ namespace, name });
  return names;
}

/** What pod GC leaves on a pod, as compared here. */
interface Left {
  phase: string | undefined;
  deletionGracePeriodSeconds: number | undefined;
  /** `status.observedGeneration` equals `metadata.generation` (the server sets pod generations since 1.33). */
  observedGenerationIsGeneration: boolean;
  /** Every condition as type=status/reason, sorted. */
  conditions: string[];
}

async function left(clients: KubeClients, namespace: string, name: string): Promise<Left> {
  const raw = await clients.core.readNamespacedPod({ namespace, name });
  return {
    phase: raw.status?.phase,
    deletionGracePeriodSeconds: raw.metadata?.deletionGracePeriodSeconds,
    observedGenerationIsGeneration: raw.status?.observedGeneration !== undefined && raw.status.observedGeneration === raw.metadata?.generation,
    conditions: (raw.status?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`).sort(),
  };
}

async function markedFailed(clients: KubeClients, namespace: string, names: readonly string[], who: string): Promise<void> {
  await waitFor(
    `${who} marks ${names.join(' and ')} Failed`,
    async () => {
      for (const name of names) if ((await clients.core.readNamespacedPod({ namespace, name })).status?.phase !== 'Failed') return false;
      return true;
    },
    GC_CHECK_PERIOD_MS + 60_000,
    250,
  );
}

test('kube-controller-manager 1.37.2 and ours leave an out-of-service and an unscheduled terminating pod with the same fields: Failed, grace 0, observedGeneration, no DisruptionTarget', { timeout: 1_800_000 }, async (t) => {
  if (LANE !== '1.37') {
    t.skip(`the control is kube-controller-manager 1.37.2: it runs on the 1.37 lane only (lane ${LANE}); ours alone runs in outofservice.test.ts`);
    return;
  }
  const upstreamBinary = kubeControllerManagerBinary();
  cp = await PrivateControlPlane.create();
  await cp.run('up');
  const clients = await cp.clients();
  const prefix = uniquePrefix('gcfields');
  await createTestNamespace(clients, prefix);
  const node = `${prefix}-oos-node`;
  // No kubelet: no Ready condition (not Ready for both), and the operator's taint. The fleet label
  // puts the node in our --node-selector scope (startTestController).
  await clients.core.createNode({ body: { metadata: { name: node, labels: { 'nlc.sim/fleet': prefix } }, spec: { taints: [{ key: OOS, value: 'nodeshutdown', effect: 'NoExecute' }] } } });

  // kube-controller-manager's pod GC first, alone.
  const upstreamPods = await terminatingPods(clients, prefix, node, 'kcm');
  const logDir = process.env['NLC_TEST_LOG_DIR'] ?? tmpdir();
  kcm = new ControllerProcess(
    {
      kind: 'upstream',
      kubeconfig: cp.kubeconfig,
      flags: { nodeMonitorPeriod: '5s', nodeMonitorGracePeriod: '50s', nodeStartupGracePeriod: '1m', nodeEvictionRate: 0.1, secondaryNodeEvictionRate: 0.01, kubeApiQps: 20, kubeApiBurst: 30 },
      upstreamBinary,
      upstreamControllers: POD_GC,
      upstreamVersion: '1.37',
      oursMode: 'tsx',
      oursEntry: '',
      metricsPort: 0,
      logLevel: 'info',
    },
    join(logDir, `${prefix}-kcm.log`),
    ROOT,
  );
  assert.ok(UPSTREAM_CONTROLLERS['1.37'].split(',').includes(POD_GC), 'the controller name kube-controller-manager 1.37 knows');
  await markedFailed(clients, prefix, Object.values(upstreamPods), 'kube-controller-manager');
  await kcm.stop();
  kcm = undefined;

  // Then ours, alone, on fresh pods (kube-controller-manager's, Failed and only waiting for their
  // finalizer, are left alone by ours: isOnlyWaitingForFinalizers).
  const ourPods = await terminatingPods(clients, prefix, node, 'ours');
  ours = await startTestController(prefix, [`--controllers=${POD_GC}`], { kubeconfig: cp.kubeconfig });
  await markedFailed(clients, prefix, Object.values(ourPods), 'ours');
  await ours.stop();
  ours = undefined;

  for (const pass of ['outOfService', 'unscheduled'] as const) {
    const upstream = await left(clients, prefix, upstreamPods[pass]);
    const mine = await left(clients, prefix, ourPods[pass]);
    t.diagnostic(`${pass}: kube-controller-manager ${JSON.stringify(upstream)}; ours ${JSON.stringify(mine)}`);
    assert.deepEqual(
      upstream,
      { phase: 'Failed', deletionGracePeriodSeconds: 0, observedGenerationIsGeneration: true, conditions: upstream.conditions },
      `${pass}: kube-controller-manager's result as issue 53 describes it`,
    );
    assert.equal(upstream.conditions.some((c) => c.startsWith('DisruptionTarget=')), false, `${pass}: kube-controller-manager writes no DisruptionTarget`);
    assert.deepEqual(mine, upstream, `${pass}: ours leaves the same fields as kube-controller-manager`);
  }
  for (const name of [...Object.values(upstreamPods), ...Object.values(ourPods)]) {
    await clients.core.patchNamespacedPod({ namespace: prefix, name, body: [{ op: 'remove', path: '/metadata/finalizers' }] }).catch(() => undefined);
  }
});
