/**
 * A Node.js that is too old gets one line, not a source dump (issue 56, item 4). Under Node 20 the
 * plugin's bundle printed its 75 KB of minified source with a SyntaxError, and `--version` a
 * SyntaxError: every entry point now starts with bin/node-check.cjs, which parses on any Node.js and
 * exits 2 with one line naming the required version (package.json's engines) when it is older:
 * - bin/node-lifecycle-controller.cjs, npm's `bin` for the controller (then dist/, `npm run build`);
 * - dist/plugin/kubectl-node_lifecycle.cjs, the krew archive's launcher (`npm run build:plugin`);
 * - bin/kubectl-node_lifecycle, the checkout's shell script, when it has no node of its own.
 * They run here under every older Node.js this machine can get: Debian's (/usr/bin/node, v20 here)
 * and Node 14 and 16 from the npm registry's `node` package (`npx -p node@14`); a version that
 * cannot be fetched is skipped, saying why. The project's own Node 24 runs them to the end.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildStampText, gitStamp } from '../../src/buildinfo.js';
import { PROGRAM_VERSION } from '../../src/version.js';
import { PLUGIN_FILE, PLUGIN_LAUNCHER } from '../../scripts/release/krew.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** bin/node-check.cjs's exports (CommonJS, read with require). */
interface NodeCheck {
  REQUIRED_NODE: string;
  atLeast: (have: string, want: string) => boolean;
}
const check = createRequire(import.meta.url)('../../bin/node-check.cjs') as NodeCheck;

/** An older Node.js to run the launchers under: its version and path, or why there is none. */
interface OldNode {
  label: string;
  path?: string;
  version?: string;
  skip?: string;
}

function nodeVersion(path: string): string | undefined {
  const r = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Debian's node, and Node 14 and 16 from the npm registry (npx caches them under ~/.npm/_npx). */
function oldNodes(): OldNode[] {
  const found: OldNode[] = [];
  const debian = '/usr/bin/node';
  const v = existsSync(debian) ? nodeVersion(debian) : undefined;
  if (v === undefined) found.push({ label: 'Debian\'s node', skip: 'no /usr/bin/node on this machine' });
  else if (check.atLeast(v, check.REQUIRED_NODE)) found.push({ label: `Debian's node ${v}`, skip: `/usr/bin/node is ${v}, not older than ${check.REQUIRED_NODE}` });
  else found.push({ label: `Debian's node ${v}`, path: debian, version: v });
  for (const major of [14, 16]) {
    const r = spawnSync('npx', ['-y', '-p', `node@${major}`, 'node', '-p', 'process.execPath'], { encoding: 'utf8', timeout: 300_000 });
    const path = r.stdout.trim();
    const version = r.status === 0 && path !== '' ? nodeVersion(path) : undefined;
    if (version === undefined) found.push({ label: `Node ${major}`, skip: `npx -p node@${major} failed (no npm registry?): ${r.stderr.trim().split('\n').at(-1) ?? ''}` });
    else found.push({ label: `Node ${version} (npm's node@${major})`, path, version });
  }
  return found;
}

/** The one line an old Node.js gets from `program`. */
function tooOldLine(program: string, version: string): RegExp {
  const v = version.replaceAll('.', '\\.');
  return new RegExp(`^${program}: needs Node\\.js ${check.REQUIRED_NODE.replaceAll('.', '\\.')} or later; this is Node\\.js ${v} \\(.+\\): install a newer Node\\.js or put it first on PATH\\n$`);
}

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'nlc-launcher-'));
  // The plugin's launcher and bundle, as the krew archive holds them.
  const build = spawnSync('npm', ['run', '-s', 'build:plugin'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('REQUIRED_NODE is package.json\'s engines.node, and the comparison is numeric', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(pkg.engines.node, `>=${check.REQUIRED_NODE}`);
  assert.equal(check.atLeast('22.19.0', '22.19.0'), true);
  assert.equal(check.atLeast('v24.21.0', '22.19.0'), true);
  assert.equal(check.atLeast('22.20.1', '22.19.0'), true);
  assert.equal(check.atLeast('22.18.9', '22.19.0'), false);
  assert.equal(check.atLeast('20.20.2', '22.19.0'), false);
  assert.equal(check.atLeast('9.99.99', '22.19.0'), false, 'numbers, not strings');
  assert.equal(check.atLeast('not a version', '22.19.0'), false, 'an unreadable version counts as too old');
});

describe('under an older Node.js: one line on stderr, exit 2', () => {
  for (const old of oldNodes()) {
    describe(old.label, { skip: old.skip ?? false }, () => {
      const node = old.path ?? '';
      const version = old.version ?? '';

      test('every launcher file parses (node --check)', () => {
        for (const f of [join(ROOT, 'bin/node-check.cjs'), join(ROOT, 'bin/node-lifecycle-controller.cjs'), join(ROOT, 'bin/plugin-launcher.cjs'), join(ROOT, 'dist/plugin', PLUGIN_LAUNCHER)]) {
          const r = spawnSync(node, ['--check', f], { encoding: 'utf8' });
          assert.equal(r.status, 0, `${f}: ${r.stderr}`);
        }
      });

      test('node-lifecycle-controller --version (npm\'s bin)', () => {
        const r = spawnSync(node, [join(ROOT, 'bin/node-lifecycle-controller.cjs'), '--version'], { encoding: 'utf8' });
        assert.equal(r.status, 2);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, tooOldLine('node-lifecycle-controller', version));
      });

      test('the krew launcher, with the bundle beside it: --version and a command', () => {
        for (const args of [['--version'], ['status']]) {
          const r = spawnSync(node, [join(ROOT, 'dist/plugin', PLUGIN_LAUNCHER), ...args], { encoding: 'utf8' });
          assert.equal(r.status, 2, r.stderr);
          assert.equal(r.stdout, '');
          assert.match(r.stderr, tooOldLine('kubectl-node_lifecycle', version));
        }
      });

      test('bin/kubectl-node_lifecycle in a checkout without node_modules, with this node first on PATH', () => {
        const root = join(dir, `checkout-${version}`);
        mkdirSync(join(root, 'bin'), { recursive: true });
        mkdirSync(join(root, 'dist/plugin'), { recursive: true });
        for (const f of ['kubectl-node_lifecycle', 'node-check.cjs']) copyFileSync(join(ROOT, 'bin', f), join(root, 'bin', f));
        chmodSync(join(root, 'bin/kubectl-node_lifecycle'), 0o755);
        for (const f of [PLUGIN_LAUNCHER, PLUGIN_FILE]) copyFileSync(join(ROOT, 'dist/plugin', f), join(root, 'dist/plugin', f));
        const r = spawnSync(join(root, 'bin/kubectl-node_lifecycle'), ['--version'], { encoding: 'utf8', env: { ...process.env, PATH: `${dirname(node)}:${process.env['PATH'] ?? ''}` } });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, tooOldLine('kubectl-node_lifecycle', version));
      });
    });
  }
});

describe('under the project\'s Node.js the launchers load the program', () => {
  const stamped = (program: string) => `${program} v${PROGRAM_VERSION} (${buildStampText(gitStamp(ROOT))})\n`;

  test('the krew launcher loads the bundle beside it, through a symlink as krew installs it', () => {
    const store = join(dir, 'store');
    mkdirSync(store, { recursive: true });
    for (const f of [PLUGIN_LAUNCHER, PLUGIN_FILE]) copyFileSync(join(ROOT, 'dist/plugin', f), join(store, f));
    chmodSync(join(store, PLUGIN_LAUNCHER), 0o755);
    const binDir = join(dir, 'krew-bin');
    mkdirSync(binDir, { recursive: true });
    spawnSync('ln', ['-s', join(store, PLUGIN_LAUNCHER), join(binDir, 'kubectl-node_lifecycle')]);
    const r = spawnSync(join(binDir, 'kubectl-node_lifecycle'), ['--version'], { encoding: 'utf8', env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, stamped('kubectl-node_lifecycle'));
  });

  test('npm\'s bin runs the tsc build (npm run build), stamped with the commit and tree state', () => {
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr + build.stdout);
    assert.deepEqual(JSON.parse(readFileSync(join(ROOT, 'dist/src/build-stamp.json'), 'utf8')), gitStamp(ROOT));
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/node-lifecycle-controller.cjs'), '--version'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, stamped('node-lifecycle-controller'));
    const bad = spawnSync(process.execPath, [join(ROOT, 'bin/node-lifecycle-controller.cjs'), '--no-such-flag'], { encoding: 'utf8' });
    assert.equal(bad.status, 2, 'the program\'s own exit codes come through the launcher');
  });
});
