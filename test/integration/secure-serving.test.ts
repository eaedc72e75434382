/**
 * Issue 17 item 2: the secure port on the real API server. The controller runs with the chart's
 * RBAC (its ServiceAccount's token, so the system:auth-delegator binding is what lets it send
 * TokenReviews and SubjectAccessReviews); two ServiceAccounts get bound tokens from the TokenRequest
 * API: `nobody` has no rights, `reader` is bound to a ClusterRole with get on /debug/state.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import type { RunningController } from '../../src/cli/run.js';
import { runStatusCommand } from '../../src/cli/status.js';
import type { StatusReport } from '../../src/explain/status.js';
import { createTestNamespace, kubeconfigPath, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { startTestController } from '../support/controller.js';
import { freePort } from '../support/private-cluster.js';
import { createProxiedLeaderPod, hostIPv4 } from '../support/proxy-pod.js';
import { applyChartRbac, deleteChartRbac, kubectl, serviceAccountKubeconfig, type ChartRbac } from '../support/process.js';

const clients = testClients();

interface Reply {
  status: number;
  body: string;
  peerCertificate: string;
}

/** GET over HTTPS from the secure port, accepting its self-signed certificate. */
function get(port: number, path: string, token?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
    const req = request({ host: '127.0.0.1', port, path, headers, rejectUnauthorized: false, agent: false }, (res) => {
      const peer = res.socket && 'getPeerX509Certificate' in res.socket ? (res.socket as TLSSocket).getPeerX509Certificate()?.toString() : undefined;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peerCertificate: peer ?? '' }));
    });
    req.setTimeout(20_000, () => req.destroy(new Error(`GET ${path}: no answer within 20 s`)));
    req.on('error', reject);
    req.end();
  });
}

async function boundToken(namespace: string, serviceAccount: string): Promise<string> {
  const tr = await clients.core.createNamespacedServiceAccountToken({ name: serviceAccount, namespace, body: { spec: { expirationSeconds: 3600 } } });
  const token = tr.status?.token;
  assert.ok(token, `a token for ${namespace}/${serviceAccount}`);
  return token;
}

/** A kubeconfig whose server refuses connections: the API server as the controller sees it during an outage. */
async function unreachableKubeconfig(dir: string): Promise<string> {
  const port = await freePort();
  const path = join(dir, 'unreachable.kubeconfig');
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'down', cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 'x' } }],
      contexts: [{ name: 'c', context: { cluster: 'down', user: 'u' } }],
      'current-context': 'c',
    }),
  );
  return path;
}

describe('secure serving on the real API server (issue 17 item 2)', { concurrency: false }, () => {
  const prefix = uniquePrefix('sec');
  const role = `${prefix}-debug-state`;
  let rbac: ChartRbac;
  let sa: { path: string; remove: () => Promise<void> };
  let dir: string;
  let controller: RunningController;
  let readerToken: string;
  let nobodyToken: string;

  before(async () => {
    await createTestNamespace(clients, prefix);
    dir = await mkdtemp(join(tmpdir(), 'nlc-secure-'));
    rbac = await applyChartRbac(prefix, prefix, `${prefix}-lease`);
    sa = await serviceAccountKubeconfig(clients, prefix, rbac.serviceAccount);
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'reader', namespace: prefix }, automountServiceAccountToken: false },
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nobody', namespace: prefix }, automountServiceAccountToken: false },
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role }, rules: [{ nonResourceURLs: ['/debug/state'], verbs: ['get'] }] },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRoleBinding',
            metadata: { name: role },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
            subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: prefix }],
          },
        ],
      }),
    );
    readerToken = await boundToken(prefix, 'reader');
    nobodyToken = await boundToken(prefix, 'nobody');
    // The binding is in the API server's RBAC cache before the controller can cache a deny.
    await waitFor('reader may get /debug/state', async () =>
      (await kubectl(['auth', 'can-i', 'get', '/debug/state', `--as=system:serviceaccount:${prefix}:reader`]).catch(() => 'no')).trim() === 'yes',
    );
    // All interfaces (the default --bind-address), so that the API server's pod proxy reaches it too.
    controller = await startTestController(prefix, [`--secure-port=${await freePort()}`], { kubeconfig: sa.path });
  });

  after(async () => {
    await controller?.stop();
    await kubectl(['delete', '--ignore-not-found', '--wait=false', 'clusterrole', role]).catch(() => undefined);
    await kubectl(['delete', '--ignore-not-found', '--wait=false', 'clusterrolebinding', role]).catch(() => undefined);
    if (rbac) await deleteChartRbac(rbac);
    await sa?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
    await clients.core.deleteNamespace({ name: prefix }).catch(() => undefined);
  });

  test('a token with no rights gets 403 on /debug/state; a bound one gets 200 with the state', async () => {
    const denied = await get(controller.securePort, '/debug/state', nobodyToken);
    assert.equal(denied.status, 403, denied.body);
    assert.match(denied.body, new RegExp(`User "system:serviceaccount:${prefix}:nobody" cannot get path "/debug/state"`));
    const allowed = await get(controller.securePort, '/debug/state', readerToken);
    assert.equal(allowed.status, 200, allowed.body);
    assert.equal((JSON.parse(allowed.body) as { identity?: string }).identity, controller.identity);
  });

  test('the right is per path: the /debug/state reader gets 403 on /metrics', async () => {
    assert.equal((await get(controller.securePort, '/metrics', readerToken)).status, 403);
  });

  test('/healthz, /livez and /readyz answer 200 without a token', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) assert.equal((await get(controller.securePort, p)).status, 200, p);
  });

  test('/metrics and /debug/state without a token, or with a token the API server does not know: 401', async () => {
    for (const p of ['/metrics', '/debug/state']) {
      assert.equal((await get(controller.securePort, p)).status, 401, `${p} without a token`);
      assert.equal((await get(controller.securePort, p, 'not-a-real-token')).status, 401, `${p} with a bad token`);
    }
  });

  test('HTTPS with the in-memory self-signed certificate for localhost', async () => {
    const r = await get(controller.securePort, '/healthz');
    const cert = new X509Certificate(r.peerCertificate);
    assert.match(cert.subject, /CN=localhost@\d+/);
    assert.equal(cert.checkHost('localhost'), 'localhost');
  });

  test('the API server unreachable for the reviews: refused (401 / 403), never allowed; health still 200', async () => {
    const down = await unreachableKubeconfig(dir);
    for (const [flag, status] of [
      ['--authentication-kubeconfig', 401],
      ['--authorization-kubeconfig', 403],
    ] as const) {
      const c = await startTestController(`${prefix}-${status}`, [`--secure-port=${await freePort()}`, '--bind-address=127.0.0.1', `${flag}=${down}`], { kubeconfig: sa.path });
      try {
        const r = await get(c.securePort, '/debug/state', readerToken);
        assert.equal(r.status, status, `${flag} unreachable: ${r.body}`);
        assert.match(r.body, status === 401 ? /TokenReview failed/ : /SubjectAccessReview failed/);
        assert.equal((await get(c.securePort, '/healthz')).status, 200);
      } finally {
        await c.stop();
      }
    }
  });

  /** `status -o json` in-process: the report, or the error it threw. */
  async function status(argv: string[]): Promise<StatusReport> {
    let text = '';
    const code = await runStatusCommand([...argv, '-o', 'json'], { out: (t) => (text += t), err: () => undefined });
    assert.equal(code, 0);
    return JSON.parse(text) as StatusReport;
  }

  test('status --endpoint https:// with a bound token (the port-forward path) reads the state', async () => {
    const endpoint = `https://127.0.0.1:${controller.securePort}`;
    const r = await status(['--endpoint', endpoint, '--token', readerToken, '--insecure-skip-tls-verify']);
    assert.equal(r.answeredBy, controller.identity);
    await assert.rejects(status(['--endpoint', endpoint, '--token', readerToken]), /self[- ]signed.*--insecure-skip-tls-verify/s, 'the certificate is checked by default');
    await assert.rejects(status(['--endpoint', endpoint, '--token', nobodyToken, '--insecure-skip-tls-verify']), /HTTP 403: forbidden: .*needs get on the non-resource URL \/debug\/state/);
  });

  test("through the API server's pod proxy the caller's token does not arrive: 401, and the error says what to do", async (t) => {
    const ip = hostIPv4();
    if (!ip) return t.skip('no non-loopback IPv4 address for the API server to proxy to');
    const leader = await createProxiedLeaderPod(clients, prefix, `${prefix}-leader`, 'nlc-leader', ip);
    t.after(leader.remove);
    const reader = await serviceAccountKubeconfig(clients, prefix, 'reader');
    try {
      // The reader may use the proxy in this namespace; its token still stays at the API server.
      await kubectl(['-n', prefix, 'create', 'role', 'proxy', '--verb=get', '--resource=pods/proxy,leases.coordination.k8s.io']);
      await kubectl(['-n', prefix, 'create', 'rolebinding', 'proxy', '--role=proxy', `--serviceaccount=${prefix}:reader`]);
      const argv = ['--kubeconfig', reader.path, '--namespace', prefix, '--lease', 'nlc-leader', '--port', String(controller.securePort), '--via', 'proxy'];
      await waitFor('the proxy reaches the controller', async () => {
        const err = await status(argv).then(() => undefined, (e: unknown) => e as Error);
        return err !== undefined && /HTTP 401: Unauthorized/.test(err.message) && /does not pass your credentials on/.test(err.message);
      }, 30_000, 500);
      // As admin, too: a refusal, never the state.
      await assert.rejects(status(['--kubeconfig', kubeconfigPath(), ...argv.slice(2)]), /HTTP 401/);
    } finally {
      await reader.remove();
    }
  });

  test("without the chart's system:auth-delegator binding the controller cannot review tokens: 401, never 200", async () => {
    const binding = rbac.objects.find((o) => o.kind === 'ClusterRoleBinding' && o.name.endsWith('-auth-delegator'));
    assert.ok(binding, 'the chart renders the auth-delegator binding');
    await kubectl(['delete', 'clusterrolebinding', binding.name]);
    await waitFor('the binding is gone from RBAC', async () =>
      (await kubectl(['auth', 'can-i', 'create', 'tokenreviews.authentication.k8s.io', `--as=system:serviceaccount:${prefix}:${rbac.serviceAccount}`]).catch(() => 'no')).trim() === 'no',
    );
    const c = await startTestController(`${prefix}-noad`, [`--secure-port=${await freePort()}`, '--bind-address=127.0.0.1'], { kubeconfig: sa.path });
    try {
      const r = await get(c.securePort, '/debug/state', readerToken);
      assert.equal(r.status, 401, r.body);
      assert.match(r.body, /TokenReview failed/);
    } finally {
      await c.stop();
    }
  });
});
