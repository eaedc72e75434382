/**
 * Each lane of the local control plane (NLC_K8S_VERSION=1.37, the default, 1.36, 1.35, 1.34 or 1.20) runs the
 * Kubernetes version it names: the API server's own /version must answer it, so a test run can
 * never silently pass against the other lane's binaries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { VersionApi } from '@kubernetes/client-node';
import { testClients } from '../support/cluster.js';
import { readServerVersion } from '../../src/kube/serverversion.js';
import { decideForServer } from '../../src/controllers/serverdecisions.js';
import { silentLogger } from '../../src/log/logger.js';

const CONTROL_PLANE = join(import.meta.dirname, '../../scripts/control-plane.sh');

test("the API server's /version is the lane's Kubernetes version", async () => {
  const expected = execFileSync('bash', [CONTROL_PLANE, 'version'], { encoding: 'utf8' }).trim();
  assert.match(expected, /^v1\.(37\.2|36\.3|35\.4|34\.4|20\.2)$/);
  const info = await testClients().kubeConfig.makeApiClient(VersionApi).getCode();
  assert.equal(info.gitVersion, expected);
  assert.equal(`v${info.major}.${info.minor.replace(/\+$/, '')}.`, expected.replace(/\d+$/, ''));
});

test('the controller reads the same version, and decides each version-dependent behaviour from it', async () => {
  const expected = execFileSync('bash', [CONTROL_PLANE, 'version'], { encoding: 'utf8' }).trim();
  const server = await readServerVersion(testClients(), silentLogger, AbortSignal.timeout(30_000));
  assert.ok(server, 'GET /version answered');
  assert.equal(server.gitVersion, expected);
  const d = decideForServer(server, { featureGates: { PodDisruptionConditions: true, NodeControllerLeaseCircuitBreaker: true, TaintTolerationComparisonOperators: false, WatchListClient: true } }, {});
  const minor = server.minor;
  assert.equal(d.disruptionConditions, minor >= 26);
  assert.equal(d.watchList, minor >= 27);
  assert.equal(d.leaseCircuitBreaker, true);
  assert.match(d.kubeControllerManagerFlags ?? '', minor >= 29 ? /-taint-eviction-controller/ : /-nodelifecycle,/);
});
