/**
 * Issue 17 item 2: `status` / `explain` / the plugin reach the leader's /debug/state through a
 * port-forward with the CALLER's token, on the real API server, as a person bound to the chart's
 * read-only roles (`<release>-viewer` + `<release>-debug-reader` + `<release>-explain-reader`,
 * rendered from the chart).
 *
 * No kubelet runs here, and kube-apiserver sends a port-forward to the pod's node's kubelet. So the
 * leader "pod" is bound to a Node whose address and kubelet port are those of a kubelet stand-in
 * (test/support/portforward-kubelet.ts) that speaks the kubelet's WebSocket port-forward protocol
 * and connects to 127.0.0.1:<port>, where the test's controller serves its secure port. Everything
 * before the kubelet (RBAC on pods/portforward, the upgrade, the caller's credentials) is the real
 * API server's; the controller's TokenReview and SubjectAccessReview are real too.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RunningController } from '../../src/cli/run.js';
import { PatchStrategy, setHeaderOptions, V1MicroTime } from '@kubernetes/client-node';
import { runExplainCommand, type NodeReport, type PodReport } from '../../src/cli/explain.js';
import { runStatusCommand } from '../../src/cli/status.js';
import type { StatusReport } from '../../src/explain/status.js';
import { createTestNamespace, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { startPortForwardKubelet, type PortForwardKubelet } from '../support/portforward-kubelet.js';
import { freePort } from '../support/private-cluster.js';
import { createProxiedLeaderPod, hostIPv4 } from '../support/proxy-pod.js';
import { applyChartRbac, deleteChartRbac, kubectl, serviceAccountKubeconfig, type ChartRbac } from '../support/process.js';

const clients = testClients();
const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

type Kubeconfig = { path: string; remove: () => Promise<void> };

async function status(argv: string[]): Promise<{ report: StatusReport; text: string }> {
  let out = '';
  await runStatusCommand([...argv, '-o', 'json'], { out: (s) => (out += s), err: () => undefined });
  let text = '';
  await runStatusCommand(argv, { out: (s) => (text += s), err: () => undefined });
  return { report: JSON.parse(out) as StatusReport, text };
}

/** `kubectl auth can-i`; `resource` may be `pods/portforward` (can-i wants the subresource as a flag). */
const canI = async (verb: string, resource: string, namespace: string, as: string): Promise<boolean> => {
  const [res = '', sub] = resource.split('/');
  const args = ['auth', 'can-i', verb, res, ...(sub ? [`--subresource=${sub}`] : []), '-n', namespace, `--as=${as}`];
  return (await kubectl(args).catch(() => 'no')).trim() === 'yes';
};

describe('status / explain / plugin through a port-forward with the caller\'s token (issue 17 item 2)', { concurrency: false }, () => {
  const prefix = uniquePrefix('pfw');
  const nodeName = `${prefix}-node`;
  const podName = `${prefix}-leader`;
  let rbac: ChartRbac;
  let sa: Kubeconfig;
  let viewer: Kubeconfig;
  let stateless: Kubeconfig;
  let leaseOnly: Kubeconfig;
  let kubelet: PortForwardKubelet;
  let controller: RunningController;
  let removeLeader: (() => Promise<void>) | undefined;
  let argv: string[];
  const ip = hostIPv4();

  before(async () => {
    if (!ip) return;
    await createTestNamespace(clients, prefix);
    for (const name of ['viewer', 'stateless', 'leaseonly']) {
      await clients.core.createNamespacedServiceAccount({ namespace: prefix, body: { metadata: { name }, automountServiceAccountToken: false } });
    }
    // The chart's roles, bound to `viewer` by the chart itself (rbac.viewer.subjects).
    rbac = await applyChartRbac(prefix, prefix, `${prefix}-lease`, [
      'rbac.viewer.subjects[0].kind=ServiceAccount',
      'rbac.viewer.subjects[0].name=viewer',
      `rbac.viewer.subjects[0].namespace=${prefix}`,
    ]);
    const viewerRole = rbac.objects.find((o) => o.kind === 'ClusterRole' && o.name.endsWith('-viewer'));
    assert.ok(viewerRole, 'the chart renders the viewer ClusterRole');
    // `stateless`: the viewer role but not the debug-reader one. `leaseonly`: may find the leader, not port-forward.
    await kubectl(['-n', prefix, 'create', 'rolebinding', 'stateless', `--clusterrole=${viewerRole.name}`, `--serviceaccount=${prefix}:stateless`]);
    await kubectl(['-n', prefix, 'create', 'role', 'leaseonly', '--verb=get', '--resource=leases.coordination.k8s.io']);
    await kubectl(['-n', prefix, 'create', 'rolebinding', 'leaseonly', '--role=leaseonly', `--serviceaccount=${prefix}:leaseonly`]);
    sa = await serviceAccountKubeconfig(clients, prefix, rbac.serviceAccount);
    viewer = await serviceAccountKubeconfig(clients, prefix, 'viewer');
    stateless = await serviceAccountKubeconfig(clients, prefix, 'stateless');
    leaseOnly = await serviceAccountKubeconfig(clients, prefix, 'leaseonly');
    await waitFor('RBAC caches have the bindings', async () =>
      (await canI('create', 'pods/portforward', prefix, `system:serviceaccount:${prefix}:viewer`)) &&
      (await canI('get', 'pods/portforward', prefix, `system:serviceaccount:${prefix}:stateless`)) &&
      (await canI('get', 'leases.coordination.k8s.io', prefix, `system:serviceaccount:${prefix}:leaseonly`)) &&
      (await kubectl(['auth', 'can-i', 'get', '/debug/state', `--as=system:serviceaccount:${prefix}:viewer`]).catch(() => 'no')).trim() === 'yes' &&
      // rbac.viewer.explainReads: explain's cluster reads.
      (await canI('list', 'pods', 'default', `system:serviceaccount:${prefix}:viewer`)) &&
      (await canI('get', 'leases.coordination.k8s.io', 'kube-node-lease', `system:serviceaccount:${prefix}:viewer`)),
    );
    kubelet = await startPortForwardKubelet();
    await clients.core.createNode({
      body: {
        metadata: { name: nodeName, labels: { 'nlc-test': prefix } },
        status: { addresses: [{ type: 'InternalIP', address: ip }], daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } } },
      },
    });
    // All interfaces (the default --bind-address): the kubelet stand-in dials 127.0.0.1.
    controller = await startTestController(prefix, [`--secure-port=${await freePort()}`], { kubeconfig: sa.path });
    const leader = await createProxiedLeaderPod(clients, prefix, podName, 'nlc-leader', ip, nodeName);
    removeLeader = leader.remove;
    argv = ['--namespace', prefix, '--lease', 'nlc-leader', '--port', String(controller.securePort)];
  });

  after(async () => {
    await controller?.stop();
    await removeLeader?.();
    await kubelet?.close();
    await clients.core.deleteNode({ name: nodeName }).catch(() => undefined);
    await clients.coordination.deleteNamespacedLease({ name: nodeName, namespace: 'kube-node-lease' }).catch(() => undefined);
    if (rbac) await deleteChartRbac(rbac);
    for (const k of [sa, viewer, stateless, leaseOnly]) await k?.remove();
    await clients.core.deleteNamespace({ name: prefix }).catch(() => undefined);
  });

  test("a person bound to the chart's viewer roles: status reads the leader's state through a port-forward with their own token", async (t) => {
    if (!ip) return t.skip('no non-loopback IPv4 address for the API server to reach the kubelet stand-in');
    const before = kubelet.requests.length;
    const { report, text } = await status(['--kubeconfig', viewer.path, ...argv, '--insecure-skip-tls-verify']);
    assert.equal(report.source.kind, 'port-forward');
    assert.deepEqual(report.source.pod, { namespace: prefix, name: podName });
    assert.equal(report.answeredBy, controller.identity, 'the answer came from our controller, through the API server and the kubelet');
    assert.ok(kubelet.requests.slice(before).every((r) => r === `${prefix}/${podName}`) && kubelet.requests.length - before === 2, 'one port-forward per request');
    assert.match(text, /Source: +port-forward to pod .*, your token over TLS \(certificate NOT verified \(--insecure-skip-tls-verify\)/);
  });

  test('the certificate is checked unless told otherwise: the self-signed default fails with what to pass', async (t) => {
    if (!ip) return t.skip('no non-loopback IPv4 address');
    await assert.rejects(status(['--kubeconfig', viewer.path, ...argv]), /via port-forward: .*self[- ]signed.*--insecure-skip-tls-verify/s);
  });

  test('the controller reviews the CALLER: viewer role without the debug-reader binding gets 403 from the controller', async (t) => {
    if (!ip) return t.skip('no non-loopback IPv4 address');
    await assert.rejects(
      status(['--kubeconfig', stateless.path, ...argv, '--insecure-skip-tls-verify']),
      new RegExp(`via port-forward: HTTP 403: forbidden: User "system:serviceaccount:${prefix}:stateless" cannot get path "/debug/state".*needs get on the non-resource URL /debug/state`),
    );
  });

  test('without pods/portforward the API server refuses the tunnel: one line naming the right', async (t) => {
    if (!ip) return t.skip('no non-loopback IPv4 address');
    await assert.rejects(status(['--kubeconfig', leaseOnly.path, ...argv, '--insecure-skip-tls-verify']), /forbidden \(403\): your user needs create and get on pods\/portforward in namespace/);
  });

  test('--via proxy still arrives without the token (401) and says to use the port-forward', async (t) => {
    if (!ip) return t.skip('no non-loopback IPv4 address');
    await kubectl(['-n', prefix, 'create', 'role', 'proxy', '--verb=get', '--resource=pods/proxy']);
    await kubectl(['-n', prefix, 'create', 'rolebinding', 'proxy', '--role=proxy', `--serviceaccount=${prefix}:viewer`]);
    await waitFor('the proxy answers', async () => {
      const err = await status(['--kubeconfig', viewer.path, ...argv, '--via', 'proxy']).then(() => undefined, (e: unknown) => e as Error);
      return err !== undefined && /HTTP 401/.test(err.message) && /--via port-forward/.test(err.message);
    }, 30_000, 500);
  });

  test("explain node and explain pod run as the viewer: the chart's explain-reader grants the node, its Lease and its pods, never nodes/proxy", async (t) => {
    if (!ip) return t.skip('no non-loopback IPv4 address');
    const explainAs = async (kubeconfig: string, args: string[]): Promise<string> => {
      let out = '';
      const errs: string[] = [];
      await runExplainCommand([...args, '--kubeconfig', kubeconfig, ...argv, '--insecure-skip-tls-verify', '-o', 'json'], {
        out: (s) => (out += s),
        err: (s) => errs.push(s),
      });
      assert.deepEqual(errs, [], 'no "controller state unavailable" warning');
      return out;
    };
    // A heartbeat Lease in kube-node-lease (read with get, a 403 would fail the command) and
    // MemoryPressure, so explain also asks whether the caller may get nodes/proxy.
    await clients.coordination.createNamespacedLease({
      namespace: 'kube-node-lease',
      body: { metadata: { name: nodeName }, spec: { holderIdentity: nodeName, leaseDurationSeconds: 40, renewTime: new V1MicroTime(Date.now()) } },
    });
    const now = new Date().toISOString();
    await clients.core.patchNodeStatus(
      { name: nodeName, body: { status: { conditions: [{ type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'test', lastHeartbeatTime: now, lastTransitionTime: now }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const e = JSON.parse(await explainAs(viewer.path, ['node', nodeName])) as NodeReport;
    assert.equal(e.source?.kind, 'port-forward');
    assert.equal(e.node, nodeName);
    assert.ok(e.heartbeat.leaseRenewTime !== null, 'the node Lease was read');
    assert.equal(e.pods.total, 1, 'the pods on the node were listed (the leader pod)');
    assert.equal(e.pressure?.source, 'static', 'no nodes/proxy for the viewer: the static eviction order');
    assert.ok(e.pressure?.notes.some((n) => n.includes('you may not get nodes/proxy')), JSON.stringify(e.pressure?.notes));
    const p = JSON.parse(await explainAs(viewer.path, ['pod', `${prefix}/${podName}`])) as PodReport;
    assert.equal(p.source?.kind, 'port-forward');
    assert.equal(p.node?.name, nodeName);
    assert.equal(p.node?.exists, true);
    // Without the explain-reader binding (`stateless` has the viewer role only) the node read is refused.
    await assert.rejects(
      runExplainCommand(['node', nodeName, '--kubeconfig', stateless.path, ...argv, '--insecure-skip-tls-verify', '-o', 'json'], { out: () => undefined, err: () => undefined }),
      new RegExp(`cannot read node ${nodeName}: HTTP 403`),
    );
  });

  test('the kubectl plugin runs status through the port-forward, from the checkout and as the one-file bundle', async (t) => {
    if (!ip) return t.skip('no non-loopback IPv4 address');
    const { stdout } = await run(`${root}bin/kubectl-node_lifecycle`, ['status', '--kubeconfig', viewer.path, ...argv, '--insecure-skip-tls-verify', '-o', 'json'], {
      cwd: '/',
      timeout: 60_000,
    });
    const r = JSON.parse(stdout) as StatusReport;
    assert.equal(r.source.kind, 'port-forward');
    assert.equal(r.answeredBy, controller.identity);
    // The one-file bundle (npm run build:plugin), alone in an empty directory: ws and client-node's PortForward are in it.
    await run('npm', ['run', '-s', 'build:plugin'], { cwd: root, timeout: 120_000 });
    const dir = await mkdtemp(join(tmpdir(), 'nlc-plugin-'));
    try {
      const alone = join(dir, 'kubectl-node_lifecycle.mjs');
      await copyFile(join(root, 'dist/plugin/kubectl-node_lifecycle.mjs'), alone);
      const bundled = await run(process.execPath, [alone, 'status', '--kubeconfig', viewer.path, ...argv, '--insecure-skip-tls-verify', '-o', 'json'], { cwd: dir, timeout: 60_000 });
      const b = JSON.parse(bundled.stdout) as StatusReport;
      assert.equal(b.source.kind, 'port-forward');
      assert.equal(b.answeredBy, controller.identity);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
