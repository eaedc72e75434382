/**
 * The kubectl plugin (src/cli/plugin.ts): kubectl's `--context`, cobra-style completion for
 * `kubectl_complete-node_lifecycle`, the one-file esbuild bundle and the krew manifest template (rendered);
 * and the program's yargs completion (src/cli/program.ts).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadYaml } from '@kubernetes/client-node';
import { FlagError } from '../../src/cli/flags.js';
import { pinKubeContext, pluginCompletions, splitContextFlag, type CompletionLookups } from '../../src/cli/plugin.js';
import { loadKubeConfig } from '../../src/kube/client.js';
import { PROGRAM_VERSION, versionLine } from '../../src/version.js';
import { buildStampText, gitStamp } from '../../src/buildinfo.js';
import { PLUGIN_ARCHIVE_FILES, PLUGIN_FILE, PLUGIN_LAUNCHER, PLUGIN_PLATFORMS, checkKrewManifest, checksumPlaceholder, pluginArchiveName, renderKrewManifest } from '../../scripts/release/krew.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE = process.execPath;

const run = (cmd: string, args: string[], cwd = ROOT) => spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, KUBECONFIG: '/nonexistent' } });

describe('--context (kubectl\'s global flag, read by the plugin)', () => {
  test('taken out of the words in both spellings; the last one wins; words after -- are kept', () => {
    assert.deepEqual(splitContextFlag(['status', '--context', 'a', '-o', 'json']), { context: 'a', rest: ['status', '-o', 'json'] });
    assert.deepEqual(splitContextFlag(['--context=a', 'explain', 'node', 'n1', '--context=b']), { context: 'b', rest: ['explain', 'node', 'n1'] });
    assert.deepEqual(splitContextFlag(['status']), { context: undefined, rest: ['status'] });
    assert.deepEqual(splitContextFlag(['status', '--', '--context', 'x']), { context: undefined, rest: ['status', '--', '--context', 'x'] });
  });

  test('without a name it is a FlagError (exit 2)', () => {
    for (const argv of [['status', '--context'], ['status', '--context', '-o'], ['--context=']]) {
      assert.throws(() => splitContextFlag(argv), (e: unknown) => e instanceof FlagError && e.exitCode === 2 && e.flag === 'context', argv.join(' '));
    }
  });

  describe('pinKubeContext', () => {
    let dir = '';
    let file = '';
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'nlc-plugin-'));
      file = join(dir, 'kubeconfig');
      const cluster = (name: string, server: string) => ({ name, cluster: { server, 'insecure-skip-tls-verify': true } });
      writeFileSync(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [cluster('one', 'https://one.example:6443'), cluster('two', 'https://two.example:6443')],
          users: [{ name: 'u', user: { token: 't' } }],
          contexts: [
            { name: 'ctx-one', context: { cluster: 'one', user: 'u' } },
            { name: 'ctx-two', context: { cluster: 'two', user: 'u' } },
          ],
          'current-context': 'ctx-one',
        }),
      );
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('every kubeconfig the process loads then uses that context; an unknown one is an error', () => {
      assert.equal(loadKubeConfig(file).getCurrentCluster()?.server, 'https://one.example:6443', 'before: the file\'s current-context');
      pinKubeContext('ctx-two');
      assert.equal(loadKubeConfig(file).getCurrentCluster()?.server, 'https://two.example:6443');
      pinKubeContext('missing');
      assert.throws(() => loadKubeConfig(file), /context "missing" is not in the kubeconfig/);
      pinKubeContext('ctx-one');
      assert.equal(loadKubeConfig(file).getCurrentCluster()?.server, 'https://one.example:6443');
    });
  });
});

describe('pluginCompletions (cobra __complete format, for kubectl_complete-node_lifecycle)', () => {
  const asked: string[] = [];
  const lookups: CompletionLookups = {
    contexts: () => ['prod', 'staging'],
    nodes: async () => (asked.push('nodes'), ['node-a', 'node-b', 'worker-1']),
    namespaces: async () => ['default', 'kube-system'],
    pods: async (ns) => (asked.push(`pods ${ns}`), ['web-1', 'web-2']),
  };
  const complete = async (...words: string[]): Promise<string[]> => (await pluginCompletions(words, lookups)).trimEnd().split('\n');

  test('commands, then explain\'s kinds, then names from the cluster; ends with :4 (no file names)', async () => {
    assert.deepEqual(await complete(''), ['status', 'explain', 'shadow-report', 'what-if', ':4']);
    assert.deepEqual(await complete('ex'), ['explain', ':4']);
    assert.deepEqual(await complete('explain', ''), ['pod', 'node', ':4']);
    assert.deepEqual(await complete('explain', 'node', 'node-'), ['node-a', 'node-b', ':4']);
    assert.deepEqual(await complete('explain', 'pod', 'kube'), ['kube-system/', ':4']);
    assert.deepEqual(await complete('explain', 'pod', 'default/w'), ['default/web-1', 'default/web-2', ':4']);
    assert.deepEqual(await complete('explain', 'node', 'node-a', ''), [':4'], 'nothing after the target');
    assert.deepEqual(asked, ['nodes', 'pods default']);
  });

  test('flags, flag values and kubectl\'s --context', async () => {
    const flags = await complete('status', '--');
    for (const f of ['--context', '--endpoint', '--kubeconfig', '--namespace', '--lease', '--port', '--output']) assert.ok(flags.includes(f), f);
    assert.deepEqual(await complete('status', '-o', ''), ['table', 'json', ':4']);
    assert.deepEqual(await complete('--context', ''), ['prod', 'staging', ':4']);
    assert.deepEqual(await complete('--context', 'prod', 'explain', '-n', 'kube-system', ''), ['pod', 'node', ':4'], 'flag values are not positional words');
    assert.ok(flags.includes('--via') && flags.includes('--tls-server-name'));
    assert.deepEqual(await complete('status', '--via', ''), ['port-forward', 'proxy', ':4']);
    assert.deepEqual(await complete('explain', '--insecure-skip-tls-verify', ''), ['pod', 'node', ':4'], 'a boolean flag takes no value');
  });

  test('a failing lookup only means no candidates', async () => {
    const failing: CompletionLookups = { ...lookups, nodes: () => Promise.reject(new Error('connection refused')) };
    assert.equal(await pluginCompletions(['explain', 'node', ''], failing), ':4\n');
  });
});

describe('bin/ scripts (from source in this checkout)', () => {
  test('kubectl-node_lifecycle: --version, help, unknown command exits 2', () => {
    const version = run(join(ROOT, 'bin', 'kubectl-node_lifecycle'), ['--version']);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, `${versionLine('kubectl-node_lifecycle')}\n`);
    const help = run(join(ROOT, 'bin', 'kubectl-node_lifecycle'), []);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /--context NAME/);
    const bad = run(join(ROOT, 'bin', 'kubectl-node_lifecycle'), ['bogus']);
    assert.equal(bad.status, 2);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
  });

  test('kubectl_complete-node_lifecycle answers in cobra\'s format', () => {
    const r = run(join(ROOT, 'bin', 'kubectl_complete-node_lifecycle'), ['explain', '']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'pod\nnode\n:4\n');
  });
});

describe('the plugin bundle (npm run build:plugin) and the krew manifest', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; scripts: Record<string, string> };
  const outfile = /--outfile=(\S+)/.exec(pkg.scripts['build:plugin'] ?? '')?.[1] ?? '';
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nlc-bundle-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('is one file and its launcher that run without node_modules: --version (stamped), completion, and exit 2 for a bad command', () => {
    assert.match(outfile, /^dist\/plugin\/kubectl-node_lifecycle\.mjs$/);
    const build = spawnSync('npm', ['run', '-s', 'build:plugin'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);
    // Alone in an empty directory: nothing to resolve at run time.
    const alone = join(dir, 'kubectl-node_lifecycle.mjs');
    copyFileSync(join(ROOT, outfile), alone);
    copyFileSync(join(ROOT, 'dist/plugin', PLUGIN_LAUNCHER), join(dir, PLUGIN_LAUNCHER));
    assert.match(readFileSync(alone, 'utf8').slice(0, 30), /^#!\/usr\/bin\/env node\n/);
    assert.match(readFileSync(join(dir, PLUGIN_LAUNCHER), 'utf8').slice(0, 30), /^#!\/usr\/bin\/env node\n/);
    // Stamped at bundle time with this checkout's commit and tree state (src/buildinfo.ts).
    const stamped = `kubectl-node_lifecycle v${PROGRAM_VERSION} (${buildStampText(gitStamp(ROOT))})\n`;
    const version = run(NODE, [alone, '--version'], dir);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, stamped);
    const launched = run(NODE, [join(dir, PLUGIN_LAUNCHER), '--version'], dir);
    assert.equal(launched.status, 0, launched.stderr);
    assert.equal(launched.stdout, stamped, 'the launcher loads the bundle beside it');
    const completion = run(NODE, [alone, '__complete', 'explain', 'n'], dir);
    assert.equal(completion.stdout, 'node\n:4\n');
    const help = run(NODE, [alone, 'status', '--help'], dir);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /--endpoint/);
    const bad = run(NODE, [alone, 'status', '--bogus'], dir);
    assert.equal(bad.status, 2);
  });

  test('krew/node-lifecycle.yaml renders (scripts/release/krew.ts) into a krew Plugin per platform whose bin is the launcher, beside the bundle', () => {
    const template = readFileSync(join(ROOT, 'krew', 'node-lifecycle.yaml'), 'utf8');
    const placeholders = [...new Set([...template.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => m[1]))].sort();
    assert.deepEqual(placeholders, ['VERSION', ...PLUGIN_PLATFORMS.map((p) => checksumPlaceholder(p.os, p.arch))].sort());
    const sums = new Map(PLUGIN_PLATFORMS.map((p, i) => [pluginArchiveName(pkg.version, p.os, p.arch), String(i).repeat(64)]));
    const filled = renderKrewManifest(template, pkg.version, sums);
    assert.deepEqual(checkKrewManifest(filled, pkg.version, sums), []);
    const manifest = JSON.parse(JSON.stringify(loadYaml(filled))) as {
      metadata: { name: string };
      spec: { version: string; shortDescription: string; platforms: { uri: string; sha256: string; bin: string; files: { from: string; to: string }[] }[] };
    };
    // krew runs the plugin as kubectl-<name with - as _>: kubectl-node_lifecycle.
    assert.equal(manifest.metadata.name, 'node-lifecycle');
    assert.equal(manifest.spec.version, `v${pkg.version}`);
    assert.ok(manifest.spec.shortDescription.length > 0 && manifest.spec.shortDescription.length <= 80);
    const bundleName = outfile.split('/').at(-1);
    assert.equal(bundleName, PLUGIN_FILE);
    for (const p of manifest.spec.platforms) {
      assert.equal(p.bin, PLUGIN_LAUNCHER);
      assert.deepEqual(p.files.map((f) => f.from).sort(), [...PLUGIN_ARCHIVE_FILES]);
    }
    assert.deepEqual(manifest.spec.platforms.map((p) => p.sha256), [...sums.values()]);
    // The checker notices a wrong checksum and a missing archive.
    const wrong = new Map(sums);
    wrong.set(pluginArchiveName(pkg.version, 'darwin', 'arm64'), 'f'.repeat(64));
    assert.equal(checkKrewManifest(filled, pkg.version, wrong).length, 1);
    assert.throws(() => renderKrewManifest(template, pkg.version, new Map()), /no value for \$\{SHA256_LINUX_AMD64\}/);
  });
});

describe('yargs completion of node-lifecycle-controller', () => {
  const cli = (...args: string[]) => run(NODE, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args]);

  test('completion prints a script that calls the program back; the program answers with commands and flags', () => {
    const script = cli('completion');
    assert.equal(script.status, 0, script.stderr);
    assert.match(script.stdout, /node-lifecycle-controller --get-yargs-completions/);
    const commands = cli('--get-yargs-completions', 'node-lifecycle-controller', '').stdout.split('\n');
    for (const c of ['run', 'status', 'explain', 'completion']) assert.ok(commands.includes(c), c);
    const runFlags = cli('--get-yargs-completions', 'node-lifecycle-controller', 'run', '--').stdout.split('\n');
    for (const f of ['--node-monitor-grace-period', '--log-level', '--logging-format', '--version']) assert.ok(runFlags.includes(f), f);
    const statusFlags = cli('--get-yargs-completions', 'node-lifecycle-controller', 'status', '--').stdout.split('\n');
    assert.ok(statusFlags.includes('--endpoint'));
    assert.ok(!statusFlags.includes('--node-monitor-grace-period'), 'run flags are not offered for status');
  });
});
