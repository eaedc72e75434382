/**
 * The API server connections' HTTP/2 flow-control windows (src/kube/client.ts `HTTP2_WINDOWS`):
 * what a client built by `makeClients` advertises to a real TLS HTTP/2 server (node:http2), read on
 * the server's side of the connection, for a plain request and for a watch stream.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, ProxyAgent } from 'undici';
import { getRaw, HTTP2_WINDOWS, makeClients, openWatchStream } from '../../src/kube/client.js';
import { selfSignedCertificate } from '../../src/metrics/tls.js';

describe('HTTP/2 flow-control windows of the API server connections', () => {
  let server: Http2SecureServer;
  let caPem = '';
  const sessions: ServerHttp2Session[] = [];
  /** The SETTINGS each session's client sent, in session order. */
  const clientSettings: Promise<{ initialWindowSize?: number }>[] = [];

  before(async () => {
    const { cert, key } = await selfSignedCertificate(Date.now());
    caPem = cert;
    server = createSecureServer({ cert, key, allowHTTP1: true });
    server.on('session', (s: ServerHttp2Session) => {
      sessions.push(s);
      clientSettings.push(new Promise((resolve) => s.once('remoteSettings', resolve)));
    });
    server.on('stream', (stream, headers) => {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      // A watch gets one event and stays open until the client cancels; anything else a small body.
      if (String(headers[':path']).includes('watch=true')) stream.write('{"type":"ADDED","object":{}}\n');
      else stream.end('{"major":"1","minor":"37"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    for (const s of sessions) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  }

  test("a request and a watch on one connection advertise client-go's windows: 4 MiB per stream, 1 GiB per connection", async () => {
    assert.deepEqual({ ...HTTP2_WINDOWS }, { streamBytes: 4 * 1024 * 1024, connectionBytes: 1024 * 1024 * 1024 });
    const kc = kubeConfig();
    makeClients(kc);
    const before = sessions.length;
    const res = await getRaw(kc, '/version', {});
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { major: '1', minor: '37' });
    const watch = await openWatchStream(kc, '/api/v1/pods', { sendInitialEvents: true });
    assert.equal(watch.status, 200);
    for await (const chunk of watch.body) {
      assert.match(Buffer.from(chunk).toString(), /ADDED/);
      break;
    }
    await watch.cancel();

    // One HTTP/2 session (ALPN chose h2, and the watch reused the request's connection).
    assert.equal(sessions.length - before, 1);
    const session = sessions.at(-1)!;
    const settings = await clientSettings.at(-1)!;
    // Without ours: undici 8's own, 262,144 per stream and 524,288 per connection (lib/dispatcher/client.js).
    assert.equal(settings.initialWindowSize, HTTP2_WINDOWS.streamBytes);
    // What the server may still send on the connection: the client's connection window, less the
    // few hundred bytes it has sent (the WINDOW_UPDATE that raised it comes with the connect).
    const remote = session.state.remoteWindowSize ?? 0;
    assert.ok(remote > HTTP2_WINDOWS.connectionBytes - 64 * 1024 && remote <= HTTP2_WINDOWS.connectionBytes, `connection window the server sees: ${remote}`);
  });

  test("a proxied cluster keeps client-node's own dispatcher, a direct one gets ours, each memoised", () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'proxied', server: 'https://127.0.0.1:1', proxyUrl: 'http://127.0.0.1:2', skipTLSVerify: true },
        { name: 'direct', server: 'https://127.0.0.1:3', skipTLSVerify: true },
      ],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'proxied', user: 'u' }],
      currentContext: 'x',
    });
    makeClients(kc);
    // The patched (private) method, as client-node's applySecurityAuthentication calls it.
    const createDispatcher = (kc as unknown as { createDispatcher(c: unknown, o: object): unknown }).createDispatcher.bind(kc);
    const proxied = createDispatcher(kc.getCluster('proxied'), { rejectUnauthorized: false });
    assert.ok(proxied instanceof ProxyAgent);
    const direct = createDispatcher(kc.getCluster('direct'), { rejectUnauthorized: false });
    assert.ok(direct instanceof Agent && !(direct instanceof ProxyAgent));
    assert.equal(createDispatcher(kc.getCluster('direct'), { rejectUnauthorized: false }), direct);
  });
});
