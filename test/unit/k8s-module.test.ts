/**
 * The 1.37 lane's build module (scripts/k8s-1.37) must replace exactly the staging modules that
 * k8s.io/kubernetes itself replaces with ./staging/src/k8s.io/<name> — a missing one fails the
 * build with a v0.0.0 requirement, an extra one is dead weight. scripts/k8s-module.sh derives the
 * block from that go.mod (fetched by `go mod download`); these tests run its --check mode.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../..');
const script = join(root, 'scripts/k8s-module.sh');
const moduleDir = join(root, 'scripts/k8s-1.37');
const haveGo = spawnSync('go', ['version']).status === 0;

test('build module: requires k8s.io/kubernetes v1.37.2 and builds the control plane as tools', () => {
  const mod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  assert.match(mod, /^\s*k8s\.io\/kubernetes v1\.37\.2\b/m);
  assert.match(mod, /^(require )?\s*go\.etcd\.io\/etcd\/server\/v3 v3\.7\.0\b/m);
  assert.match(mod, /^\s*k8s\.io\/kubernetes\/cmd\/kube-apiserver$/m);
  assert.match(mod, /^\s*k8s\.io\/kubernetes\/cmd\/kube-controller-manager$/m);
  const replaces = [...mod.matchAll(/^\t(k8s\.io\/[\w-]+) => (k8s\.io\/[\w-]+) (v\S+)$/gm)];
  assert.ok(replaces.length > 20, `only ${replaces.length} replace lines`);
  for (const [, from, to, v] of replaces) {
    assert.equal(to, from);
    assert.equal(v, 'v0.37.2');
  }
});

test("build module: the replace block is k8s.io/kubernetes's staging list (k8s-module.sh --check)", { skip: !haveGo && 'go is not on PATH' }, () => {
  execFileSync('bash', [script, '--check'], { stdio: 'pipe', timeout: 300_000 });
});

test('k8s-module.sh --check fails when a staging replace is missing', { skip: !haveGo && 'go is not on PATH' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'nlc-k8s-module-'));
  try {
    const mod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
    writeFileSync(join(dir, 'go.mod'), mod.replace(/^\tk8s\.io\/client-go => .*\n/m, ''));
    copyFileSync(join(moduleDir, 'go.sum'), join(dir, 'go.sum'));
    const r = spawnSync('bash', [script, '--check'], { env: { ...process.env, NLC_K8S_MODULE_DIR: dir }, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /^\+\tk8s\.io\/client-go => k8s\.io\/client-go v0\.37\.2$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
