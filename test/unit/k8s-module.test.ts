/**
 * Each Go-module lane's build module (scripts/k8s-<minor>: 1.34 to 1.37) must require that lane's
 * k8s.io/kubernetes release and the etcd release that minor is tested with (its
 * build/dependencies.yaml), and must replace exactly the staging modules that
 * k8s.io/kubernetes itself replaces with ./staging/src/k8s.io/<name> — a missing one fails the
 * build with a v0.0.0 requirement, an extra one is dead weight. scripts/k8s-module.sh derives the
 * block from that go.mod (fetched by `go mod download`); these tests run its --check mode.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../..');
const script = join(root, 'scripts/k8s-module.sh');
const moduleDir = join(root, 'scripts/k8s-1.37');
const haveGo = spawnSync('go', ['version']).status === 0;
/** The Go-module lanes as control-plane.sh lists them: minor, Kubernetes release, etcd release. */
const lanes = execFileSync('bash', [join(root, 'scripts/control-plane.sh'), 'lanes'], { encoding: 'utf8' })
  .trim()
  .split('\n')
  .map((l) => l.split(' ') as [string, string, string])
  .filter(([minor]) => minor !== '1.20');

test('every Go-module lane has a build module requiring its release, its etcd, and its Go language version', () => {
  assert.deepEqual(lanes.map(([m]) => m), ['1.37', '1.36', '1.35', '1.34']);
  const modcache = haveGo ? execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim() : '';
  for (const [minor, release, etcd] of lanes) {
    const mod = readFileSync(join(root, `scripts/k8s-${minor}/go.mod`), 'utf8');
    assert.match(mod, new RegExp(`^module nlc\\.local/k8s-${minor.replace('.', '\\.')}$`, 'm'));
    assert.match(mod, new RegExp(`^\\s*k8s\\.io/kubernetes ${release.replaceAll('.', '\\.')}\\b`, 'm'), minor);
    assert.match(mod, new RegExp(`^(require )?\\s*go\\.etcd\\.io/etcd/server/v3 v${etcd.replaceAll('.', '\\.')}\\b`, 'm'), minor);
    assert.match(readFileSync(join(root, `scripts/k8s-${minor}/etcd/main.go`), 'utf8'), new RegExp(`tested with \\(${etcd.replaceAll('.', '\\.')}\\)`));
    const staging = `v0.${release.slice('v1.'.length)}`;
    for (const [, from, to, v] of mod.matchAll(/^\t(k8s\.io\/[\w-]+) => (k8s\.io\/[\w-]+) (v\S+)$/gm)) assert.deepEqual([to, v], [from, staging], minor);
    // Where the module cache holds the release, its own files name the etcd and the Go version.
    const upstream = join(modcache, `k8s.io/kubernetes@${release}`);
    if (modcache && existsSync(upstream)) {
      const deps = readFileSync(join(upstream, 'build/dependencies.yaml'), 'utf8');
      assert.match(deps, new RegExp(`name: "etcd"\\n\\s+version: ${etcd.replaceAll('.', '\\.')}\\n`), `${minor}: etcd ${etcd} is what build/dependencies.yaml names`);
      const goLine = /^go (\S+)$/m.exec(readFileSync(join(upstream, 'go.mod'), 'utf8'))?.[1];
      assert.ok(goLine && mod.includes(`\ngo ${goLine}\n`), `${minor}: go ${goLine ?? '?'} as k8s.io/kubernetes's go.mod`);
    }
  }
});

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

test("build modules: each replace block is k8s.io/kubernetes's staging list (k8s-module.sh --check)", { skip: !haveGo && 'go is not on PATH' }, () => {
  execFileSync('bash', [script, '--check'], { stdio: 'pipe', timeout: 300_000 });
  for (const [minor] of lanes) {
    execFileSync('bash', [script, '--check'], { stdio: 'pipe', timeout: 300_000, env: { ...process.env, NLC_K8S_MODULE_DIR: join(root, `scripts/k8s-${minor}`) } });
  }
  // kubeadm's own build module (scripts/go-tool.sh kubeadm; the cut-over test renders with it).
  execFileSync('bash', [script, '--check'], { stdio: 'pipe', timeout: 300_000, env: { ...process.env, NLC_K8S_MODULE_DIR: join(moduleDir, 'kubeadm') } });
});

test("kubeadm's build module: k8s.io/kubernetes v1.37.2's cmd/kubeadm, beside the control plane's module, which it leaves alone", () => {
  const mod = readFileSync(join(moduleDir, 'kubeadm', 'go.mod'), 'utf8');
  assert.match(mod, /^module nlc\.local\/k8s-1\.37\/kubeadm$/m);
  assert.match(mod, /^\s*k8s\.io\/kubernetes v1\.37\.2\b/m);
  assert.match(mod, /^tool k8s\.io\/kubernetes\/cmd\/kubeadm$/m);
  // Its go.sum is its own: the control plane's module (whose go.mod and go.sum are part of
  // kube-apiserver's cached build id) does not list kubeadm's extra dependencies.
  assert.doesNotMatch(readFileSync(join(moduleDir, 'go.sum'), 'utf8'), /^github\.com\/lithammer\/dedent /m);
  assert.match(readFileSync(join(moduleDir, 'kubeadm', 'go.sum'), 'utf8'), /^github\.com\/lithammer\/dedent /m);
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
