/**
 * docs/migration.md's Cluster API snippet against Cluster API v1.14.2's own KubeadmControlPlane CRD
 * on a real API server (issue 56, item 1): the unit test (test/unit/cutover.test.ts) runs Cluster
 * API's Go code on it, which cannot evaluate the CRD's CEL rules (`extraArgs` names unique, at most
 * 100) nor its OpenAPI bounds; the API server does, on a server-side dry run. The CRD comes from the
 * sigs.k8s.io/cluster-api module (`go mod download`, the Go module proxy), as published in
 * controlplane/kubeadm/config/crd/bases. Skips without Go, and below 1.25 (no CEL).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { runCommand, type RunResult } from '../support/command.js';
import { kubeconfigPath, waitFor } from '../support/cluster.js';
import { laneMinor, skipBelow } from '../support/lane.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CAPI = 'sigs.k8s.io/cluster-api@v1.14.2';
const CRD_NAME = 'kubeadmcontrolplanes.controlplane.cluster.x-k8s.io';
const haveGo = spawnSync('go', ['version']).status === 0;
// Cluster API's CRDs carry CEL rules (x-kubernetes-validations), which API servers serve from 1.25.
const SKIP = haveGo ? skipBelow(await laneMinor(), 25, "Cluster API v1.14's CRD (CEL validation rules)") : 'needs Go to fetch the Cluster API module';

const kubectl = (args: string[], input?: string): Promise<RunResult> =>
  runCommand('kubectl', args, { env: { KUBECONFIG: kubeconfigPath() }, ...(input === undefined ? {} : { input }) });

/** The `<!-- cutover: cluster-api -->` block of docs/migration.md. */
function snippet(): string {
  const m = /<!-- cutover: cluster-api -->\n```yaml\n([\s\S]*?)\n```\n/.exec(readFileSync(join(ROOT, 'docs', 'migration.md'), 'utf8'));
  assert.ok(m?.[1], 'docs/migration.md has the Cluster API snippet');
  return `${m[1]}\n`;
}

let dir = '';
let installed = false;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'nlc-cutover-crd-'));
});
after(async () => {
  if (installed) await kubectl(['delete', 'crd', CRD_NAME, '--ignore-not-found', '--wait=false']);
  rmSync(dir, { recursive: true, force: true });
});

test('the KubeadmControlPlane snippet passes Cluster API v1.14.2\'s CRD (schema and CEL) on the API server; a duplicate extraArgs name does not', { skip: SKIP, timeout: 600_000 }, async () => {
  const download = spawnSync('go', ['mod', 'download', '-json', CAPI], { cwd: dir, encoding: 'utf8', timeout: 300_000 });
  assert.equal(download.status, 0, download.stderr);
  const moduleDir = (JSON.parse(download.stdout) as { Dir: string }).Dir;
  const crd = join(moduleDir, 'controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml');
  const apply = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', crd]);
  assert.equal(apply.code, 0, apply.stderr);
  installed = true;
  // The API server's own establishing controller marks it; until then creates are refused.
  await waitFor(
    `${CRD_NAME} Established`,
    async () => (await kubectl(['get', 'crd', CRD_NAME, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}'])).stdout === 'True',
    60_000,
    250,
  );

  const kcp = yaml.load(snippet()) as { metadata: Record<string, unknown>; spec: { kubeadmConfigSpec: { clusterConfiguration: { controllerManager: { extraArgs: { name: string; value: string }[] } } } } };
  kcp.metadata['namespace'] = 'default';
  const good = await kubectl(['create', '--dry-run=server', '--validate=strict', '-o', 'name', '-f', '-'], JSON.stringify(kcp));
  assert.equal(good.code, 0, good.stderr);
  assert.match(good.stdout, /kubeadmcontrolplane\.controlplane\.cluster\.x-k8s\.io\/prod-control-plane/);

  // The CEL rule the Go code cannot check: one entry per name (an upgrade of the snippet that adds a
  // second `controllers` instead of editing the first is refused, not merged).
  const args = kcp.spec.kubeadmConfigSpec.clusterConfiguration.controllerManager.extraArgs;
  args.push({ name: 'controllers', value: '*' });
  const duplicate = await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(kcp));
  assert.notEqual(duplicate.code, 0);
  assert.match(duplicate.stderr, /extraArgs name must be unique/);
});
