/**
 * client-node's `Watch` asks for uncompressed streams through {@link uncompressedWatchConfig}
 * (src/kube/client.ts): the stand-in adds `Accept-Encoding: identity` after the real
 * configuration's authentication, and passes the current cluster through. The answer of a real
 * API server to that header is tested in test/integration/watch-encoding.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { uncompressedWatchConfig, WATCH_ACCEPT_ENCODING } from '../../src/kube/client.js';

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

test('uncompressedWatchConfig: authentication of the real config, then Accept-Encoding identity', async () => {
  const kc = kubeConfig();
  const config = uncompressedWatchConfig(kc);
  assert.equal(config.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
  const ctx = new RequestContext('https://127.0.0.1:6443/api/v1/pods?watch=true', HttpMethod.GET);
  await config.applySecurityAuthentication(ctx);
  const headers = ctx.getHeaders();
  assert.equal(headers['Accept-Encoding'], WATCH_ACCEPT_ENCODING);
  assert.equal(WATCH_ACCEPT_ENCODING, 'identity');
  assert.equal(headers['Authorization'], 'Bearer secret-token');
  // Without the stand-in nothing sets it, and undici's fetch would add `gzip, deflate`.
  const plain = new RequestContext('https://127.0.0.1:6443/api/v1/pods?watch=true', HttpMethod.GET);
  await kc.applySecurityAuthentication(plain);
  assert.equal(plain.getHeaders()['Accept-Encoding'], undefined);
});
