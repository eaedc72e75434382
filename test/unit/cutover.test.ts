/**
 * The cut-over lasts (issue 56, item 1): docs/migration.md step 2a tells each installer's users where
 * kube-controller-manager's `--controllers` must be changed so that an upgrade does not turn its node
 * lifecycle, taint eviction and pod GC back on. Each snippet there (the fenced block after a
 * `<!-- cutover: NAME -->` line) is rendered here by the installer's own code and the result is
 * parsed by kube-controller-manager 1.37.2 itself:
 * - kubeadm v1.37.2 (`scripts/go-tool.sh kubeadm`): `kubeadm init phase control-plane
 *   controller-manager --dry-run` into a temporary directory (KUBEADM_INIT_DRYRUN_DIR), the function
 *   `kubeadm upgrade` renders with too; with the ClusterConfiguration, and with the JSON patch;
 * - Cluster API v1.14.2 (`scripts/go-tool.sh capi-render`): strict decoding, the KubeadmControlPlane
 *   webhook, the conversion to kubeadm's configuration; then kubeadm renders it;
 * - k3s (`scripts/go-tool.sh k3s-render`): its config-file parser, server flags and argument merge;
 * - kOps: not buildable here (the Go module proxy refuses k8s.io/kops); its documented format, and
 *   its flag builder's comma join, restated.
 * The `--controllers` flags that come out are given to the cached kube-controller-manager 1.37.2
 * (scripts/control-plane.sh bin) with a kubeconfig that does not exist and `-v=1`: it prints the
 * parsed flags (`FLAG: --controllers="[…]"`), validates the controller names, and only then fails
 * on the kubeconfig. The list it parsed must leave KCM's three loops off and its attach/detach on
 * (isControllerEnabled is upstream's IsControllerEnabled).
 *
 * The Go tools are built on first use (minutes; cached in ~/.cache/node-lifecycle-controller/tools).
 * Without Go the installers' parts skip and say so. Without a built kube-controller-manager
 * (`scripts/control-plane.sh install --with-kcm`, which the integration tests run; a unit test does
 * not build the control plane) the flags are read as pflag reads a repeated string slice (values
 * appended) instead, and the test says so.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { isControllerEnabled } from '../../src/controllers/names.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MIGRATION = readFileSync(join(ROOT, 'docs', 'migration.md'), 'utf8');
/** Building a Go tool the first time takes minutes on 2 cores. */
const BUILD_TIMEOUT_MS = 20 * 60_000;

const haveGo = spawnSync('go', ['version']).status === 0;
const KCM = spawnSync('bash', [join(ROOT, 'scripts/control-plane.sh'), 'bin', 'kube-controller-manager'], { encoding: 'utf8', env: { ...process.env, NLC_K8S_VERSION: '1.37' } }).stdout.trim();
const haveKcm = KCM !== '' && existsSync(KCM);
const skipTools = haveGo ? false : 'needs the Go toolchain to build kubeadm, Cluster API\'s and k3s\'s code';
const noKcm = `kube-controller-manager 1.37.2 is not built (bash scripts/control-plane.sh install --with-kcm; not at ${KCM || '?'})`;

/** KCM's three loops that ours replaces, and its attach/detach controller that must stay on. */
const OFF = ['node-lifecycle-controller', 'taint-eviction-controller', 'pod-garbage-collector-controller'] as const;
const ON = 'persistentvolume-attach-detach-controller';

/**
 * The code of the fenced block right after `<!-- cutover: NAME -->` in docs/migration.md.
 * @throws AssertionError when there is no such block (the docs and this test must name the same snippets).
 */
function snippet(name: string): string {
  const m = new RegExp(`<!-- cutover: ${name} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(MIGRATION);
  assert.ok(m?.[1], `docs/migration.md has no \`<!-- cutover: ${name} -->\` block`);
  return `${m[1]}\n`;
}

/** Builds (first use) and locates a Go tool of the project. */
function goTool(name: string): string {
  const r = spawnSync('bash', [join(ROOT, 'scripts/go-tool.sh'), '--print-path', name], { encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
  assert.equal(r.status, 0, `scripts/go-tool.sh --print-path ${name}:\n${r.stderr}`);
  return r.stdout.trim();
}

/** Runs a program and returns its output; fails the test on a non-zero exit. */
function must(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

let dir = '';
let seq = 0;
/** A fresh file in the test's temporary directory. */
function file(name: string, text: string): string {
  const path = join(dir, `${++seq}-${name}`);
  writeFileSync(path, text);
  return path;
}

/**
 * kubeadm's rendering of KCM's static Pod from a kubeadm config file, into a temporary directory.
 * @returns the container's command (`kube-controller-manager`, then its flags).
 */
function kubeadmRender(kubeadm: string, config: string): string[] {
  const out = join(dir, `${++seq}-manifests`);
  mkdirSync(out);
  must(kubeadm, ['init', 'phase', 'control-plane', 'controller-manager', '--dry-run', '--config', config], { KUBEADM_INIT_DRYRUN_DIR: out });
  assert.deepEqual(readdirSync(out), ['kube-controller-manager.yaml'], 'kubeadm wrote the one manifest, into the temporary directory');
  const pod = yaml.load(readFileSync(join(out, 'kube-controller-manager.yaml'), 'utf8')) as { spec: { containers: { command: string[] }[] } };
  const command = pod.spec.containers[0]?.command ?? [];
  assert.equal(command[0], 'kube-controller-manager');
  return command;
}

/** The `--controllers=` flags of a command line, in order. */
const controllersFlags = (args: readonly string[]): string[] => args.filter((a) => a.startsWith('--controllers='));

/**
 * What kube-controller-manager 1.37.2 makes of `flags`: it parses them and validates the controller
 * names before it reads its kubeconfig, which does not exist here. Without the binary, the flags as
 * pflag's string slice reads them (see the module comment).
 * @returns the `--controllers` list it parsed (repeats appended, as pflag's string slice does).
 */
function kcmControllers(flags: readonly string[]): string[] {
  if (!haveKcm) {
    process.stderr.write(`# ${noKcm}: --controllers read as pflag's string slice (repeats appended)\n`);
    return flags.flatMap((f) => f.slice('--controllers='.length).split(','));
  }
  const r = spawnSync(KCM, [...flags, `--kubeconfig=${join(dir, 'no-such-kubeconfig')}`, '--secure-port=0', '-v=1'], { encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(r.status, 0);
  assert.doesNotMatch(r.stderr, /not in the list of known controllers/, 'KCM accepts every controller name');
  assert.match(r.stderr, /no-such-kubeconfig: no such file or directory/, `KCM got past its flag validation to the kubeconfig:\n${r.stderr.slice(-2000)}`);
  const parsed = /FLAG: --controllers="\[(.*)\]"/.exec(r.stderr)?.[1];
  assert.ok(parsed !== undefined, 'KCM printed its --controllers');
  return parsed.split(',');
}

/** KCM's three loops are off, attach/detach stays on, and `keep` (installer's own) stay explicitly on. */
function assertOneActor(controllers: string[], keep: readonly string[] = []): void {
  for (const name of OFF) assert.equal(isControllerEnabled({ controllers }, name), false, `${name} is off in [${controllers.join(',')}]`);
  assert.equal(isControllerEnabled({ controllers }, ON), true, `${ON} stays on`);
  for (const name of keep) assert.ok(controllers.includes(name), `the installer's own ${name} is still enabled: [${controllers.join(',')}]`);
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'nlc-cutover-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('docs/migration.md names one snippet per installer, and none edits the rendered manifest', () => {
  for (const name of ['kubeadm', 'kubeadm-patch', 'cluster-api', 'k3s', 'kops']) assert.ok(snippet(name).length > 0);
  // The non-durable advice the issue found must not come back as the instruction of step 2a.
  const step2a = MIGRATION.slice(MIGRATION.indexOf('**a. Switch KCM'), MIGRATION.indexOf('**b. Make ours act.**'));
  assert.doesNotMatch(step2a, /^On kubeadm clusters edit/m);
  assert.match(step2a, /kubeadm upgrade/);
});

describe('kubeadm v1.37.2', { skip: skipTools, timeout: BUILD_TIMEOUT_MS }, () => {
  let kubeadm = '';
  before(() => {
    kubeadm = goTool('kubeadm');
  });

  test('the binary is kubeadm v1.37.2', () => {
    assert.equal(must(kubeadm, ['version', '-o', 'short']).trim(), 'v1.37.2');
  });

  test('without the change, kubeadm renders its default --controllers, which runs all three loops (what an upgrade restores)', () => {
    const command = kubeadmRender(kubeadm, file('plain.yaml', 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n'));
    assert.deepEqual(controllersFlags(command), ['--controllers=*,bootstrapsigner,tokencleaner']);
    const controllers = kcmControllers(controllersFlags(command));
    for (const name of OFF) assert.equal(isControllerEnabled({ controllers }, name), true, name);
  });

  test('ClusterConfiguration.controllerManager.extraArgs: one --controllers, the three off, bootstrapsigner and tokencleaner kept', () => {
    const command = kubeadmRender(kubeadm, file('cluster.yaml', snippet('kubeadm')));
    const flags = controllersFlags(command);
    assert.equal(flags.length, 1, flags.join(' '));
    assertOneActor(kcmControllers(flags), ['bootstrapsigner', 'tokencleaner']);
    // kubeadm's other defaults are still there: only --controllers changed.
    assert.ok(command.includes('--use-service-account-credentials=true') && command.includes('--leader-elect=true'), command.join(' '));
  });

  test('a patch directory (patches.directory, as kubeadm upgrade --patches): a second --controllers that KCM appends', () => {
    const patches = join(dir, 'patches');
    mkdirSync(patches, { recursive: true });
    writeFileSync(join(patches, 'kube-controller-manager+json.yaml'), snippet('kubeadm-patch'));
    const config = file(
      'patched.yaml',
      `apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\npatches:\n  directory: ${patches}\n---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n`,
    );
    const flags = controllersFlags(kubeadmRender(kubeadm, config));
    assert.equal(flags.length, 2, flags.join(' '));
    const controllers = kcmControllers(flags);
    assert.deepEqual(controllers.slice(0, 3), ['*', 'bootstrapsigner', 'tokencleaner'], 'the default comes first, the patch is appended');
    assertOneActor(controllers, ['bootstrapsigner', 'tokencleaner']);
  });
});

describe('Cluster API v1.14.2 KubeadmControlPlane', { skip: skipTools, timeout: BUILD_TIMEOUT_MS }, () => {
  let capi = '';
  let kubeadm = '';
  before(() => {
    capi = goTool('capi-render');
    kubeadm = goTool('kubeadm');
  });

  test('passes the webhook (create, and update from the same KCP without the argument), converts for v1.37.2, and kubeadm renders the three off', () => {
    const text = snippet('cluster-api');
    const kcp = yaml.load(text) as { spec: { kubeadmConfigSpec: Record<string, unknown> } };
    kcp.spec.kubeadmConfigSpec = {};
    const before = file('kcp-before.yaml', yaml.dump(kcp));
    const kubeadmConfig = must(capi, [file('kcp.yaml', text), before]);
    assert.match(kubeadmConfig, /^apiVersion: kubeadm\.k8s\.io\/v1beta4$/m, 'Cluster API writes kubeadm v1beta4 for Kubernetes 1.37');
    assert.match(kubeadmConfig, /^kubernetesVersion: v1\.37\.2$/m);
    const flags = controllersFlags(kubeadmRender(kubeadm, file('capi-kubeadm.yaml', kubeadmConfig)));
    assert.equal(flags.length, 1, flags.join(' '));
    assertOneActor(kcmControllers(flags), ['bootstrapsigner', 'tokencleaner']);
  });

  test('a misspelt field is refused (strict decoding), not dropped', () => {
    const r = spawnSync(capi, [file('kcp-typo.yaml', snippet('cluster-api').replace('extraArgs:', 'extraArg:'))], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /unknown field "spec\.kubeadmConfigSpec\.clusterConfiguration\.controllerManager\.extraArg"/);
  });
});

/** The `--controllers` k3s passes by default (k3s for 1.35, pkg/daemons/control/server.go, cloud controller on). */
const K3S_DEFAULT = '--controllers=*,tokencleaner,-service,-route,-cloud-node-lifecycle';

describe('k3s config.yaml kube-controller-manager-arg', { skip: skipTools, timeout: BUILD_TIMEOUT_MS }, () => {
  let k3s = '';
  before(() => {
    k3s = goTool('k3s-render');
  });

  test('controllers+= appends to k3s\'s own --controllers: the three off, tokencleaner and k3s\'s cloud exclusions kept', () => {
    const args = must(k3s, [file('k3s.yaml', snippet('k3s'))]).split('\n').filter(Boolean);
    const flags = controllersFlags(args);
    assert.equal(flags.length, 2, flags.join(' '));
    assert.equal(flags[0], K3S_DEFAULT, "k3s's default comes first");
    // As k3s passes them: the list KCM would parse (pflag appends the second flag to the first).
    const rendered = flags.flatMap((f) => f.slice('--controllers='.length).split(','));
    assertOneActor(rendered, ['tokencleaner', '-cloud-node-lifecycle']);
    // The k3s pinned here is for Kubernetes 1.35, whose default still names three cloud controllers
    // that kube-controller-manager 1.37 no longer has ("service", "route", "cloud-node-lifecycle":
    // 1.37 refuses them as unknown). KCM 1.37.2 checks the rest: k3s's default without those three,
    // and the appended flag exactly as k3s renders it.
    const controllers = kcmControllers(['--controllers=*,tokencleaner', flags[1] ?? '']);
    assertOneActor(controllers, ['tokencleaner']);
  });

  test('also with disable-cloud-controller (k3s then passes a shorter default)', () => {
    const args = must(k3s, [file('k3s-noccm.yaml', `disable-cloud-controller: true\n${snippet('k3s')}`)]).split('\n').filter(Boolean);
    const flags = controllersFlags(args);
    assert.equal(flags[0], '--controllers=*,tokencleaner');
    assertOneActor(kcmControllers(flags), ['tokencleaner']);
  });

  test('a misspelt key, which k3s would skip with a warning, is refused', () => {
    const r = spawnSync(k3s, [file('k3s-typo.yaml', snippet('k3s').replace('kube-controller-manager-arg:', 'kube-controller-manager-args:'))], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /Unknown flag --kube-controller-manager-args/);
  });
});

describe('kOps Cluster spec.kubeControllerManager.controllers (documented format; kOps is not buildable here)', () => {
  test('a kops.k8s.io/v1alpha2 Cluster whose controllers list, joined as kOps\'s flag builder joins it, turns the three off', () => {
    const cluster = yaml.load(snippet('kops')) as { apiVersion?: string; kind?: string; spec?: { kubeControllerManager?: { controllers?: unknown } } };
    assert.equal(cluster.apiVersion, 'kops.k8s.io/v1alpha2');
    assert.equal(cluster.kind, 'Cluster');
    const list = cluster.spec?.kubeControllerManager?.controllers;
    assert.ok(Array.isArray(list) && list.every((c) => typeof c === 'string'), 'controllers is a list of strings (KubeControllerManagerConfig.Controllers []string)');
    // pkg/flagbuilder BuildFlags: a []string without the `repeat` option becomes one --name=a,b,c.
    assertOneActor(kcmControllers([`--controllers=${list.join(',')}`]));
  });
});
