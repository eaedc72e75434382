/**
 * Issue 17 item 2: `status` / `explain` reach the leader's /debug/state through a port-forward with
 * the CALLER's token. Everything around the tunnel: the tunnel as a Duplex over client-node's
 * PortForward (its WebSocket connector injected), the kubeconfig's bearer token (static, token file,
 * exec plugin; none for a client certificate), the TLS options and what they verify, leader-pod
 * discovery from the Lease, and fetchDebugState over an injected tunnel to a real HTTPS server
 * (the controller's self-signed certificate). The tunnel through the real API server is in
 * test/integration/portforward.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import {
  controllerTlsOptions,
  fetchDebugState,
  findLeaderPod,
  kubeconfigCredential,
  noTokenMessage,
  tlsVerificationNote,
  type EndpointOptions,
  type PodStreamOpener,
} from '../../src/cli/inspect.js';
import type { KubeClients } from '../../src/kube/client.js';
import { openPodPortStream, portForwardRefusal, upgradeStatus, type PortForwardConnector } from '../../src/kube/portforward.js';
import { selfSignedCertificate } from '../../src/metrics/tls.js';

type BinaryHandler = (stream: number, data: Buffer) => boolean;

/** A WebSocket as client-node's PortForward uses it: `send`, `close`, and the `close`/`error` events. */
class FakeSocket extends EventEmitter {
  sent: Buffer[] = [];
  closed = false;
  protocol = 'v4.channel.k8s.io';
  send(b: Buffer): void {
    this.sent.push(Buffer.from(b));
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }
}

/** A connector that records the path and hands the binary handler to the test ("the kubelet"). */
function fakeConnector(opts: { refuse?: Error; never?: boolean } = {}): { connector: PortForwardConnector; paths: string[]; socket: FakeSocket; kubelet: () => BinaryHandler } {
  const socket = new FakeSocket();
  const paths: string[] = [];
  let handler: BinaryHandler | undefined;
  const connector = {
    connect: (path: string, _text: unknown, binary: BinaryHandler) => {
      paths.push(path);
      handler = binary;
      if (opts.refuse) return Promise.reject(opts.refuse);
      if (opts.never) return new Promise(() => undefined);
      return Promise.resolve(socket);
    },
  } as unknown as PortForwardConnector;
  return { connector, paths, socket, kubelet: () => handler as BinaryHandler };
}

function portPrefix(port: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(port);
  return b;
}

const kcWith = (user: Record<string, unknown>): KubeConfig => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
};

describe('openPodPortStream: one connection through pods/portforward as a Duplex', () => {
  test('asks the API server for the pod and port, strips the port prefix, carries data both ways and ends with the tunnel', async () => {
    const f = fakeConnector();
    const s = await openPodPortStream(kcWith({ token: 't' }), 'nlc', 'leader-0', 10267, { connector: f.connector });
    assert.deepEqual(f.paths, ['/api/v1/namespaces/nlc/pods/leader-0/portforward?ports=10267']);
    const kubelet = f.kubelet();
    kubelet(0, portPrefix(10267));
    kubelet(1, portPrefix(10267));
    kubelet(0, Buffer.from('hello from the pod'));
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => s.once('end', r));
    s.write(Buffer.from('to the pod'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(f.socket.sent.map((b) => [b[0], b.subarray(1).toString()]), [[0, 'to the pod']], 'written bytes go on data channel 0');
    f.socket.close();
    await ended;
    assert.equal(Buffer.concat(chunks).toString(), 'hello from the pod');
  });

  test("the kubelet's error channel destroys the stream with its text", async () => {
    const f = fakeConnector();
    const s = await openPodPortStream(kcWith({ token: 't' }), 'nlc', 'p', 10267, { connector: f.connector });
    const failed = new Promise<Error>((r) => s.once('error', r));
    f.kubelet()(1, portPrefix(10267));
    f.kubelet()(1, Buffer.from('dial tcp4 127.0.0.1:10267: connect: connection refused'));
    const err = await failed;
    assert.match(err.message, /^port-forward to nlc\/p:10267: dial tcp4 .*connection refused$/);
    assert.equal(f.socket.closed, true, 'destroying the stream closes the WebSocket');
  });

  test('a refused upgrade becomes one line naming what is missing', async () => {
    const f = fakeConnector({ refuse: new Error('Unexpected server response: 403') });
    await assert.rejects(openPodPortStream(kcWith({ token: 't' }), 'nlc', 'p', 10267, { connector: f.connector }), (err: Error) => {
      assert.match(err.message, /forbidden \(403\): your user needs create and get on pods\/portforward in namespace nlc/);
      assert.ok(!err.message.includes('\n'));
      return true;
    });
  });

  test('an API server that never opens the tunnel fails after timeoutMs', async () => {
    const f = fakeConnector({ never: true });
    await assert.rejects(openPodPortStream(kcWith({ token: 't' }), 'nlc', 'p', 10267, { connector: f.connector, timeoutMs: 50 }), /did not open it within 50 ms/);
  });

  test('upgradeStatus and portForwardRefusal', () => {
    assert.equal(upgradeStatus(new Error('Unexpected server response: 401')), 401);
    assert.equal(upgradeStatus({ message: 'Unexpected server response: 404' }), 404);
    assert.equal(upgradeStatus(new Error('ECONNREFUSED')), undefined);
    assert.match(portForwardRefusal(401, 'n/p:1', 'n', ''), /did not accept your kubeconfig's credentials/);
    assert.match(portForwardRefusal(404, 'n/p:1', 'n', ''), /pod not found/);
    assert.match(portForwardRefusal(400, 'n/p:1', 'n', ''), /no node yet/);
    assert.equal(portForwardRefusal(undefined, 'n/p:1', 'n', 'connect ECONNREFUSED'), 'port-forward to n/p:1: connect ECONNREFUSED');
  });
});

describe("kubeconfigCredential: the caller's bearer token", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nlc-cred-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a static token', async () => {
    assert.deepEqual(await kubeconfigCredential(kcWith({ token: 'static-1' })), { token: 'static-1', user: 'u', clientCertificate: false });
  });

  test("a token file (client-node's in-cluster user: the pod's ServiceAccount token)", async () => {
    const file = join(dir, 'token');
    await writeFile(file, 'from-file-2\n');
    assert.equal((await kubeconfigCredential(kcWith({ authProvider: { name: 'tokenFile', config: { tokenFile: file } } }))).token, 'from-file-2');
  });

  test('an exec plugin: its token is a bearer token', async () => {
    const script = join(dir, 'plugin.mjs');
    await writeFile(script, `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'exec-3' } }));\n`);
    const cred = await kubeconfigCredential(kcWith({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script], interactiveMode: 'Never' } }));
    assert.equal(cred.token, 'exec-3');
  });

  test('a client certificate only: no token, and the message names both ways out in one line', async () => {
    const cert = await selfSignedCertificate(Date.now());
    const cred = await kubeconfigCredential(kcWith({ certData: Buffer.from(cert.cert).toString('base64'), keyData: Buffer.from(cert.key).toString('base64') }));
    assert.deepEqual(cred, { user: 'u', clientCertificate: true });
    const msg = noTokenMessage(cred);
    assert.ok(!msg.includes('\n'));
    assert.match(msg, /client certificate/);
    assert.match(msg, /--token/);
    assert.match(msg, /--authorization-always-allow-paths/);
    assert.match(msg, /NetworkPolicy/);
    assert.match(noTokenMessage({ user: 'basic', clientCertificate: false }), /^kubeconfig user "basic" has no bearer token: /);
  });
});

describe('controllerTlsOptions: what the TLS check verifies', () => {
  test('default: verified against the system CAs for the server name', async () => {
    const { tls, note } = await controllerTlsOptions({}, 'leader-0');
    assert.deepEqual(tls, { rejectUnauthorized: true, servername: 'leader-0' });
    assert.equal(note, 'certificate verified against the system CAs for "leader-0"');
  });
  test('--certificate-authority: that CA; unreadable: one-line error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-ca-'));
    try {
      await writeFile(join(dir, 'ca.pem'), 'PEM');
      const { tls, note } = await controllerTlsOptions({ certificateAuthority: join(dir, 'ca.pem') }, undefined);
      assert.deepEqual(tls, { rejectUnauthorized: true, ca: 'PEM' });
      assert.match(note, /verified against .*ca\.pem for the host name/);
      await assert.rejects(controllerTlsOptions({ certificateAuthority: join(dir, 'missing.pem') }, 'x'), /^Error: --certificate-authority: cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  test('--insecure-skip-tls-verify: says that nothing is verified', () => {
    assert.match(tlsVerificationNote({ insecureSkipTlsVerify: true }, 'p'), /NOT verified/);
  });
});

/** Clients with only what leader discovery reads: a Lease, or a read error. */
function leaseClients(lease: { holderIdentity?: string } | Error, kc = kcWith({ token: 'caller-token' })): KubeClients {
  return {
    kubeConfig: kc,
    coordination: {
      readNamespacedLease: ({ name, namespace }: { name: string; namespace: string }) =>
        lease instanceof Error
          ? Promise.reject(lease)
          : Promise.resolve({ metadata: { name, namespace, resourceVersion: '1' }, spec: { ...lease, leaseDurationSeconds: 15 } }),
    },
  } as unknown as KubeClients;
}

describe('findLeaderPod: from the election Lease', () => {
  test('the holder identity without its _uuid', async () => {
    assert.equal(await findLeaderPod(leaseClients({ holderIdentity: 'nlc-7d9f-abcde_0c1d2e3f-aaaa-bbbb-cccc-000000000000' }), 'ns', 'l'), 'nlc-7d9f-abcde');
  });
  test('no holder, missing Lease: one line with what to do', async () => {
    await assert.rejects(findLeaderPod(leaseClients({ holderIdentity: '' }), 'ns', 'l'), /Lease ns\/l has no holder/);
    await assert.rejects(findLeaderPod(leaseClients(new ApiException(404, 'nf', '{}', {})), 'ns', 'l'), /Lease ns\/l not found: .*--namespace\/--lease/);
    await assert.rejects(findLeaderPod(leaseClients(new ApiException(403, 'forbidden', '{}', {})), 'ns', 'l'), /cannot read Lease ns\/l/);
  });
});

describe('fetchDebugState --via port-forward, over an injected tunnel to an HTTPS server with a self-signed certificate', () => {
  let server: Server;
  let port: number;
  let certPem: string;
  const seen: (string | undefined)[] = [];
  const opened: string[] = [];
  const open: PodStreamOpener = (_kc, namespace, pod, p) => {
    opened.push(`${namespace}/${pod}:${p}`);
    return Promise.resolve(connect({ host: '127.0.0.1', port }) as Duplex);
  };
  const base: EndpointOptions = { namespace: 'nlc', lease: 'nlc', port: 10267 };
  const clients = leaseClients({ holderIdentity: 'localhost_0c1d2e3f-aaaa-bbbb-cccc-000000000000' });

  before(async () => {
    const cert = await selfSignedCertificate(Date.now());
    certPem = cert.cert;
    server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      seen.push(req.headers.authorization);
      if (req.headers.authorization !== 'Bearer caller-token') {
        res.writeHead(401, { 'Content-Type': 'text/plain' }).end('Unauthorized\n');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ identity: 'localhost_x', leader: 'localhost_x' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  test("the caller's kubeconfig token reaches the controller; the source says what TLS verified", async () => {
    const { state, source } = await fetchDebugState({ ...base, insecureSkipTlsVerify: true }, clients, open);
    assert.equal(state.identity, 'localhost_x');
    assert.equal(seen.at(-1), 'Bearer caller-token');
    assert.equal(opened.at(-1), 'nlc/localhost:10267', 'the tunnel goes to the Lease holder\'s pod and the --port');
    assert.equal(source.kind, 'port-forward');
    assert.deepEqual(source.pod, { namespace: 'nlc', name: 'localhost' });
    assert.match(source.tls ?? '', /NOT verified/);
  });

  test('the certificate is checked by default: a self-signed one fails with what to pass', async () => {
    await assert.rejects(fetchDebugState(base, clients, open), /via port-forward: .*self[- ]signed.*--certificate-authority .*--insecure-skip-tls-verify/s);
  });

  test('--certificate-authority with the certificate: verified for the pod name (the default certificate carries localhost)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-ca-'));
    try {
      await writeFile(join(dir, 'ca.pem'), certPem);
      const { source } = await fetchDebugState({ ...base, certificateAuthority: join(dir, 'ca.pem') }, clients, open);
      assert.match(source.tls ?? '', /verified against .*ca\.pem for "localhost"/);
      await assert.rejects(
        fetchDebugState({ ...base, certificateAuthority: join(dir, 'ca.pem'), tlsServerName: 'nlc.nlc.svc' }, clients, open),
        /Hostname\/IP does not match|altnames/,
        'a name the certificate does not carry is refused',
      );
      // --endpoint: the URL's host (127.0.0.1 is in the default certificate), or --tls-server-name.
      const endpoint = `https://127.0.0.1:${port}`;
      const direct = await fetchDebugState({ ...base, endpoint, token: 'caller-token', certificateAuthority: join(dir, 'ca.pem') });
      assert.equal(direct.source.kind, 'endpoint');
      await assert.rejects(
        fetchDebugState({ ...base, endpoint, token: 'caller-token', certificateAuthority: join(dir, 'ca.pem'), tlsServerName: 'nlc.nlc.svc' }),
        /Hostname\/IP does not match|altnames/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('--token wins over the kubeconfig; a refused token gets the hint', async () => {
    await assert.rejects(fetchDebugState({ ...base, insecureSkipTlsVerify: true, token: 'wrong' }, clients, open), /HTTP 401: Unauthorized \(pass --token/);
    assert.equal(seen.at(-1), 'Bearer wrong');
  });

  test('a client-certificate user without --token: the one-line error, and no tunnel is opened', async () => {
    const cert = await selfSignedCertificate(Date.now());
    const certUser = leaseClients(
      { holderIdentity: 'localhost_0c1d2e3f-aaaa-bbbb-cccc-000000000000' },
      kcWith({ certData: Buffer.from(cert.cert).toString('base64'), keyData: Buffer.from(cert.key).toString('base64') }),
    );
    const before = opened.length;
    await assert.rejects(fetchDebugState({ ...base, insecureSkipTlsVerify: true }, certUser, open), /client certificate.*--token.*--authorization-always-allow-paths/);
    assert.equal(opened.length, before);
    const { state } = await fetchDebugState({ ...base, insecureSkipTlsVerify: true, token: 'caller-token' }, certUser, open);
    assert.equal(state.identity, 'localhost_x', 'with --token it works');
  });
});
