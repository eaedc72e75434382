/**
 * Watch streams are asked for uncompressed (src/kube/client.ts `WATCH_ACCEPT_ENCODING`,
 * `openWatchStream`), on a real API server: since 1.37 kube-apiserver gzips a watch-list stream one member per flush when the
 * client accepts gzip (`WatchListCompression`), which undici's fetch does by default. The control
 * case shows the server would compress this very request, so the first case is not vacuous there;
 * on an older server (the 1.20 lane) nothing is compressed and only the first case runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getRaw, openWatchStream } from '../../src/kube/client.js';
import { testClients } from '../support/cluster.js';
import { laneMinor, skipBelow } from '../support/lane.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
/** A streaming watch-list, as the informers open it (src/kube/informer.ts, src/kube/listwatch.ts). */
const WATCH_LIST = { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersionMatch: 'NotOlderThan', resourceVersion: '' } as const;
const PROTOBUF_ACCEPT = 'application/vnd.kubernetes.protobuf,application/json';

const minor = await laneMinor();

// Servers before 1.34 here (the 1.20 lane) refuse a watch-list with 422, as the informers expect
// (they fall back to list + watch): there the plain watch the informers then open is checked.
const servesWatchList = minor === undefined || minor >= 34;

test('a watch opened by openWatchStream is answered uncompressed, in protobuf (a watch-list where the server serves one)', async () => {
  const controller = new AbortController();
  const query = servesWatchList ? WATCH_LIST : { allowWatchBookmarks: true };
  const res = await openWatchStream(testClients().kubeConfig, LEASES, query, { accept: PROTOBUF_ACCEPT, signal: controller.signal });
  try {
    assert.equal(res.status, 200);
    assert.equal(res.statusText, 'OK');
    assert.equal(res.contentEncoding, undefined, `content-encoding ${res.contentEncoding}`);
    assert.equal(res.contentType, 'application/vnd.kubernetes.protobuf');
    if (servesWatchList) {
      // The first frame is there and starts with the length prefix of a WatchEvent (the initial
      // events end with a bookmark even when kube-node-lease holds no Lease; a plain watch on an
      // empty namespace may send nothing, so it is not read).
      for await (const chunk of res.body) {
        assert.ok(chunk.byteLength >= 4);
        break;
      }
    }
  } finally {
    controller.abort();
    await res.cancel();
  }
});

test(
  "control: the same watch-list with fetch's default Accept-Encoding is gzipped",
  { skip: skipBelow(minor, 37, 'watch-list compression (WatchListCompression)') },
  async () => {
    // getRaw sends undici's fetch with its default Accept-Encoding (`gzip, deflate`), as a watch did before.
    const controller = new AbortController();
    const res = await getRaw(testClients().kubeConfig, LEASES, { ...WATCH_LIST, watch: true }, { accept: PROTOBUF_ACCEPT, signal: controller.signal });
    try {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-encoding'), 'gzip');
    } finally {
      controller.abort();
      await res.body?.cancel().catch(() => undefined);
    }
  },
);
