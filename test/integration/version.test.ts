/**
 * Each lane of the local control plane (NLC_K8S_VERSION=1.37, the default, or 1.20) runs the
 * Kubernetes version it names: the API server's own /version must answer it, so a test run can
 * never silently pass against the other lane's binaries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { VersionApi } from '@kubernetes/client-node';
import { testClients } from '../support/cluster.js';

const CONTROL_PLANE = join(import.meta.dirname, '../../scripts/control-plane.sh');

test("the API server's /version is the lane's Kubernetes version", async () => {
  const expected = execFileSync('bash', [CONTROL_PLANE, 'version'], { encoding: 'utf8' }).trim();
  assert.match(expected, /^v1\.(37|20)\.2$/);
  const info = await testClients().kubeConfig.makeApiClient(VersionApi).getCode();
  assert.equal(info.gitVersion, expected);
  assert.equal(`v${info.major}.${info.minor.replace(/\+$/, '')}.2`, expected);
});
