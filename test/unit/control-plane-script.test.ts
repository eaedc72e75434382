/**
 * scripts/control-plane.sh's failure paths for the 1.37 lane: a missing Go toolchain or module
 * proxy fails naming the step (and its log), and a failed build leaves no binary in the cache.
 * Each runs `install` against a throwaway NLC_CACHE_DIR, so the real cache is never touched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(import.meta.dirname, '../../scripts/control-plane.sh');
const haveGo = spawnSync('go', ['version']).status === 0;

function install(env: Record<string, string>): { status: number | null; stderr: string; cache: string } {
  const cache = mkdtempSync(join(tmpdir(), 'nlc-cp-test-'));
  const r = spawnSync('bash', [script, 'install'], {
    env: { ...process.env, NLC_K8S_VERSION: '1.37', NLC_CACHE_DIR: cache, ...env },
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { status: r.status, stderr: r.stderr, cache };
}

test('an unknown NLC_K8S_VERSION exits 2 naming the lanes', () => {
  const r = spawnSync('bash', [script, 'version'], { env: { ...process.env, NLC_K8S_VERSION: '1.99' }, encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.equal(r.stderr, '[control-plane] NLC_K8S_VERSION=1.99: unknown lane (use 1.37 1.36 1.35 1.34 1.20)\n', 'one line');
  assert.equal(r.stdout, '');
});

test('each lane names its version and caches binaries by it', () => {
  const lanes = [['1.37', 'v1.37.2'], ['1.36', 'v1.36.3'], ['1.35', 'v1.35.4'], ['1.34', 'v1.34.4'], ['1.20', 'v1.20.2'], ['v1.35', 'v1.35.4'], ['1.34.4', 'v1.34.4']] as const;
  for (const [lane, version] of lanes) {
    const env = { ...process.env, NLC_K8S_VERSION: lane, NLC_CACHE_DIR: '/nonexistent-cache' };
    assert.equal(spawnSync('bash', [script, 'version'], { env, encoding: 'utf8' }).stdout.trim(), version);
    assert.equal(spawnSync('bash', [script, 'bin', 'kube-apiserver'], { env, encoding: 'utf8' }).stdout.trim(), `/nonexistent-cache/bin/${version}/kube-apiserver`);
  }
  // `lanes` lists each lane's minor, release and etcd (each minor's build/dependencies.yaml).
  const table = spawnSync('bash', [script, 'lanes'], { encoding: 'utf8' }).stdout.trim().split('\n');
  assert.deepEqual(table, ['1.37 v1.37.2 3.7.0', '1.36 v1.36.3 3.6.8', '1.35 v1.35.4 3.6.6', '1.34 v1.34.4 3.6.5', '1.20 v1.20.2 debian']);
  // The default lane is 1.37.
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['NLC_K8S_VERSION'];
  assert.equal(spawnSync('bash', [script, 'version'], { env, encoding: 'utf8' }).stdout.trim(), 'v1.37.2');
});

test('etcd runs with --unsafe-no-fsync unless NLC_ETCD_FSYNC=1 turns fsync on; any other value exits 2', () => {
  const args = (value: string | undefined): { status: number | null; stdout: string; stderr: string } => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env['NLC_ETCD_FSYNC'];
    if (value !== undefined) env['NLC_ETCD_FSYNC'] = value;
    return spawnSync('bash', [script, 'etcd-args'], { env, encoding: 'utf8' });
  };
  assert.equal(args(undefined).stdout, '--unsafe-no-fsync\n', 'the default is the throwaway etcd');
  assert.equal(args('0').stdout, '--unsafe-no-fsync\n');
  const on = args('1');
  assert.equal(on.status, 0);
  assert.equal(on.stdout, '', 'fsync on: no durability flag, etcd\'s production default');
  const bad = args('yes');
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr, '[control-plane] NLC_ETCD_FSYNC=yes: use 0 (--unsafe-no-fsync, the default) or 1 (fsync on)\n', 'one line');
});

test('1.37 lane without a Go toolchain fails naming the step', () => {
  const r = install({ NLC_GO: '/nonexistent/go' });
  try {
    assert.equal(r.status, 1);
    assert.match(r.stderr, /FAILED at step "find the Go toolchain \(\/nonexistent\/go on PATH/);
  } finally {
    rmSync(r.cache, { recursive: true, force: true });
  }
});

test('1.37 lane without the module proxy fails naming the step and its log', { skip: !haveGo && 'go is not on PATH' }, () => {
  const modcache = mkdtempSync(join(tmpdir(), 'nlc-gomod-empty-'));
  const r = install({ GOPROXY: 'off', GOMODCACHE: modcache, GOFLAGS: '-modcacherw' });
  try {
    assert.equal(r.status, 1);
    assert.match(r.stderr, /FAILED at step "go mod download \(k8s\.io\/kubernetes v1\.37\.2[^"]*\)"; see \S+go-mod-download\.log/);
    assert.equal(existsSync(join(r.cache, 'bin/v1.37.2/kube-apiserver')), false);
  } finally {
    rmSync(r.cache, { recursive: true, force: true });
    rmSync(modcache, { recursive: true, force: true });
  }
});

test('1.37 lane: a failed build leaves no binary in the cache', { skip: !haveGo && 'go is not on PATH' }, () => {
  // Every compiler and linker invocation fails, after the modules resolved from the real cache.
  const r = install({ GOFLAGS: '-toolexec=/bin/false' });
  try {
    assert.equal(r.status, 1);
    assert.match(r.stderr, /FAILED at step "go build kube-apiserver v1\.37\.2[^"]*"; see \S+go-build-kube-apiserver\.log/);
    const dir = join(r.cache, 'bin/v1.37.2');
    const left = existsSync(dir) ? readdirSync(dir) : [];
    assert.deepEqual(left.filter((f) => !f.startsWith('.')), [], `cache holds ${left.join(', ')}`);
  } finally {
    rmSync(r.cache, { recursive: true, force: true });
  }
});
