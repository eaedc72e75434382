import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { testClients } from '../support/cluster.js';

// client-node 2.0.1 builds a new undici Agent per call (see reuseConnections in src/kube/client.ts);
// without our memoisation 200 calls leave ~200 extra sockets open for seconds.
test('API calls reuse TLS connections instead of opening one per call', async () => {
  const clients = testClients();
  await clients.core.listNamespace({ limit: 1 });
  const before = readdirSync('/proc/self/fd').length;
  for (let i = 0; i < 200; i++) await clients.core.listNamespace({ limit: 1 });
  const after = readdirSync('/proc/self/fd').length;
  assert.ok(after - before < 20, `open file descriptors grew by ${after - before} over 200 calls`);
});
