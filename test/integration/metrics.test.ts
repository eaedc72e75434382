/**
 * Issue 17 item 3: a running controller serves the component-base families kubernetes-mixin's
 * "Controller Manager" dashboard reads (`workqueue_*{name}`, `rest_client_*`) and its build info,
 * filled by its real requests to the real API server and its real queues.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import type { RunningController } from '../../src/cli/run.js';
import { loadKubeConfig } from '../../src/kube/client.js';
import { toNode } from '../../src/kube/objects.js';
import { buildStamp } from '../../src/buildinfo.js';
import { PROGRAM_VERSION } from '../../src/version.js';
import { createTestNamespace, kubeconfigPath, testClients, uniquePrefix, waitFor } from '../support/cluster.js';
import { metricValue, scrapeMetrics, startTestController } from '../support/controller.js';

const GRACE_S = 4;
const clients = testClients();

const FAMILIES: [name: string, type: string][] = [
  ['workqueue_depth', 'gauge'],
  ['workqueue_adds_total', 'counter'],
  ['workqueue_queue_duration_seconds', 'histogram'],
  ['workqueue_work_duration_seconds', 'histogram'],
  ['workqueue_unfinished_work_seconds', 'gauge'],
  ['workqueue_longest_running_processor_seconds', 'gauge'],
  ['workqueue_retries_total', 'counter'],
  ['rest_client_requests_total', 'counter'],
  ['rest_client_request_duration_seconds', 'histogram'],
  ['rest_client_rate_limiter_duration_seconds', 'histogram'],
  ['node_lifecycle_controller_build_info', 'gauge'],
];

describe('component-base metrics from a running controller (issue 17 item 3)', { concurrency: false }, () => {
  const prefix = uniquePrefix('cbm');
  const host = new URL(loadKubeConfig(kubeconfigPath()).getCurrentCluster()?.server ?? 'https://none').host;
  let fleet: Fleet;
  let controller: RunningController;
  let dead: string;

  before(async () => {
    await createTestNamespace(clients, prefix);
    fleet = new Fleet({
      clients,
      prefix,
      namespace: prefix,
      zones: 1,
      nodesPerZone: 3,
      podsPerNode: 1,
      leaseRenewIntervalMs: 1000,
      leaseDurationSeconds: GRACE_S,
      nodeStatusUpdateFrequencyMs: 60_000,
    });
    await fleet.start();
    controller = await startTestController(prefix, [`--node-monitor-grace-period=${GRACE_S}s`, '--node-monitor-period=1s']);
    dead = fleet.nodeNames()[0] as string;
    fleet.killNode(dead);
    // Marking the node Unknown is a PATCH through the write throttle.
    await waitFor(
      `${dead} Ready=Unknown`,
      async () => toNode(await clients.core.readNode({ name: dead }))?.conditions.find((c) => c.type === 'Ready')?.status === 'Unknown',
      60_000,
    );
  });

  after(async () => {
    await controller?.stop();
    await fleet?.stop();
    await fleet?.cleanup();
  });

  test('every new family is served with its type', async () => {
    const text = await scrapeMetrics(controller);
    for (const [name, type] of FAMILIES) {
      assert.ok(text.includes(`# TYPE ${name} ${type}\n`), `${name} (${type}) missing`);
    }
  });

  test('requests are counted by code, method and host; writes report their throttle wait', async () => {
    let text = '';
    await waitFor(
      'a PATCH counted',
      async () => {
        text = await scrapeMetrics(controller);
        return (metricValue(text, 'rest_client_requests_total', { code: '200', method: 'PATCH', host }) ?? 0) > 0;
      },
      30_000,
    );
    // Informers alone make ≥ 2 GETs per informer (a list, then a watch) before the controller starts.
    assert.ok((metricValue(text, 'rest_client_requests_total', { code: '200', method: 'GET', host }) ?? 0) >= 2 * 4, 'informer lists and watches counted');
    assert.ok((metricValue(text, 'rest_client_request_duration_seconds_count', { verb: 'PATCH', host }) ?? 0) > 0);
    assert.ok((metricValue(text, 'rest_client_rate_limiter_duration_seconds_count', { verb: 'PATCH', host }) ?? 0) > 0);
    const build = buildStamp();
    assert.equal(metricValue(text, 'node_lifecycle_controller_build_info', { version: PROGRAM_VERSION, git_commit: build.gitCommit, git_tree_state: build.gitTreeState, node_version: process.version }), 1);
  });

  test('the queues report under their names; the node update queue saw adds', async () => {
    const text = await scrapeMetrics(controller);
    for (const name of ['node_lifecycle_controller', 'node_lifecycle_controller_pods']) {
      assert.notEqual(metricValue(text, 'workqueue_depth', { name }), undefined, `workqueue_depth{name="${name}"}`);
      assert.notEqual(metricValue(text, 'workqueue_retries_total', { name }), undefined, `workqueue_retries_total{name="${name}"}`);
    }
    assert.ok((metricValue(text, 'workqueue_adds_total', { name: 'node_lifecycle_controller' }) ?? 0) > 0);
    assert.ok((metricValue(text, 'workqueue_work_duration_seconds_count', { name: 'node_lifecycle_controller' }) ?? 0) > 0);
  });
});
