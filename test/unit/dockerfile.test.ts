/**
 * Static checks of the Dockerfile and .dockerignore. No Docker engine runs here and hadolint is in
 * neither registry this project may use (Debian bookworm has no package; the npm `hadolint`
 * package downloads the binary from GitHub at run time), so this test asserts the properties the
 * image must have instead: the two stages and what crosses between them, the base images' digest
 * pins, the user, the labels, and the ENTRYPOINT's node flags and bundle, run here as the image
 * would run them.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SECURE_PORT } from '../../src/cli/flags.js';
import { OURS_NODE_OPTIONS } from '../../bench/lib/options.js';
import { execForm, instructionsOf, labelsOf, parseDockerfile, runtimeImageSpec } from '../../scripts/release/dockerfile.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const ops = instructionsOf;

describe('Dockerfile', () => {
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const build = stages[0];
  const runtime = stages.at(-1);
  assert.ok(build && runtime);

  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    license: string;
    scripts: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  /** The bundle `npm run build:bundle` writes, which the runtime stage copies and runs. */
  const bundleOut = /--outfile=(\S+)/.exec(pkg.scripts['build:bundle'] ?? '')?.[1] ?? '';
  const bundleEntry = /^esbuild (\S+\.ts) /.exec(pkg.scripts['build:bundle'] ?? '')?.[1] ?? '';
  /** `name@sha256:<64 hex>` → [name, digest]. */
  const pinned = (from: string): [string, string] => {
    const m = /^(\S+)@(sha256:[0-9a-f]{64})$/.exec(from);
    assert.ok(m, `FROM ${from}: pin the base image by digest (name:tag@sha256:…)`);
    return [m[1] ?? '', m[2] ?? ''];
  };
  /** The Node.js major the project runs on: its `node` devDependency (`^24.21.0` → 24). */
  const nodeMajor = /^\D*(\d+)\./.exec(pkg.devDependencies['node'] ?? '')?.[1];

  test('two stages: build on node:<major> (the build platform), run on distroless Node.js of the same major and Debian, :nonroot', () => {
    assert.ok(nodeMajor, 'package.json devDependencies.node');
    assert.equal(stages.length, 2);
    // gcr.io/distroless/nodejs<major>-debian<N>:nonroot; Debian 13 is trixie.
    const m = /^gcr\.io\/distroless\/nodejs(\d+)-debian(\d+):nonroot$/.exec(pinned(runtime.from)[0]);
    assert.ok(m, `runtime FROM ${runtime.from}`);
    assert.equal(m[1], nodeMajor, 'the runtime Node major is the one tests run on');
    const codename: Record<string, string> = { '12': 'bookworm', '13': 'trixie' };
    assert.equal(pinned(build.from)[0], `node:${nodeMajor}-${codename[m[2] ?? ''] ?? '?'}-slim`, 'build stage: same Node major and Debian release (glibc) as the runtime');
    assert.equal(build.platform, '$BUILDPLATFORM', 'the build stage runs natively under buildx (its output is platform-independent JavaScript)');
    assert.equal(runtime.platform, undefined, 'the runtime stage is the target platform');
    assert.equal(build.name, 'build');
    assert.equal(ops(runtime, 'ADD').length + ops(build, 'ADD').length, 0, 'ADD fetches URLs and unpacks archives; COPY is explicit');
  });

  test('both base images are pinned by digest, and the labels name the runtime base and its digest', () => {
    const [buildName, buildDigest] = pinned(build.from);
    const [runtimeName, runtimeDigest] = pinned(runtime.from);
    assert.match(buildName, /:[\w.-]+$/, 'keep the tag beside the digest: it says which image the digest is');
    assert.match(runtimeName, /:[\w.-]+$/);
    assert.notEqual(buildDigest, runtimeDigest);
    const labels = labelsOf(runtime);
    assert.equal(labels.get('org.opencontainers.image.base.name'), runtimeName);
    assert.equal(labels.get('org.opencontainers.image.base.digest'), runtimeDigest);
  });

  test('the runtime stage holds only the bundle and LICENSE, from the build stage', () => {
    assert.match(bundleOut, /^dist\/bundle\/[\w.-]+\.mjs$/);
    const copies = ops(runtime, 'COPY');
    for (const c of copies) assert.match(c.args, /^--from=build\s/, `runtime COPY ${c.args} must come from the build stage`);
    assert.deepEqual(
      copies.map((c) => c.args.split(/\s+/).slice(1)),
      [
        [`/app/${bundleOut}`, `./${basename(bundleOut)}`],
        ['/app/LICENSE', './LICENSE'],
      ],
    );
    assert.deepEqual(ops(runtime, 'WORKDIR').map((w) => w.args), ['/app']);
  });

  test('builds with npm ci, then npm run build:bundle (esbuild); never npm install', () => {
    const runs = ops(build, 'RUN').map((r) => r.args).join(' && ');
    const at = (x: string): number => runs.indexOf(x);
    assert.ok(at('npm ci') >= 0);
    assert.ok(at('npm run build:bundle') > at('npm ci'));
    assert.equal(/npm install\b/.test(runs), false, 'npm ci, never npm install (lockfile-exact)');
  });

  test('copies what the bundle is built from: the lockfile, tsconfig.json, the entry point\'s tree, LICENSE', () => {
    const copied = ops(build, 'COPY').map((c) => c.args.split(/\s+/));
    const sources = new Set(copied.flatMap((parts) => parts.slice(0, -1)));
    assert.match(bundleEntry, /^src\//);
    assert.ok(sources.has('src'), `build stage does not COPY src (the bundle's entry ${bundleEntry})`);
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'LICENSE']) assert.ok(sources.has(f), `build stage does not COPY ${f}`);
  });

  test('runs as distroless\'s numeric nonroot user 65532, as the chart and manifests/ do', () => {
    const users = ops(runtime, 'USER');
    assert.equal(users.length, 1);
    const m = /^(\d+)(?::(\d+))?$/.exec(users[0]?.args ?? '');
    assert.ok(m, `USER ${users[0]?.args} must be numeric so that runAsNonRoot can verify it`);
    assert.equal(m[1], '65532');
    assert.equal(m[2], '65532');
    for (const file of ['manifests/03-deployment.yaml', 'charts/node-lifecycle-controller/values.yaml']) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      assert.deepEqual([...text.matchAll(/runAs(?:User|Group): (\d+)/g)].map((r) => r[1]), ['65532', '65532', '65532', '65532'], `${file} runs as the image user`);
    }
  });

  test('no shell in the runtime stage: one exec-form RUN, which primes the compile cache; ENTRYPOINT is distroless node with its flags on the bundle, so Pod args are flags', () => {
    // distroless has no shell: the one RUN is exec form, the ENTRYPOINT's own node and flags on the
    // bundle with --version, after USER (node files the cache under the uid), into NODE_COMPILE_CACHE.
    const runs = ops(runtime, 'RUN');
    assert.equal(runs.length, 1, 'only the compile-cache RUN');
    assert.deepEqual(execForm(runs[0]), [...execForm(ops(runtime, 'ENTRYPOINT').at(-1)), '--version']);
    const user = ops(runtime, 'USER').at(-1);
    assert.ok(user !== undefined && runs[0] !== undefined && user.line < runs[0].line, 'the RUN comes after USER 65532:65532');
    const cacheDir = /\bNODE_COMPILE_CACHE=(\S+)/.exec(ops(runtime, 'ENV').map((e) => e.args).join(' '))?.[1];
    assert.ok(cacheDir?.startsWith('/home/nonroot/'), `NODE_COMPILE_CACHE under the nonroot user's home (0700, its own), got ${cacheDir}`);
    // The V8 young-generation cap is the one node option; the bench runs ours with the same.
    const entrypoint = execForm(ops(runtime, 'ENTRYPOINT').at(-1));
    assert.deepEqual(entrypoint, ['/nodejs/bin/node', OURS_NODE_OPTIONS, basename(bundleOut)]);
    // The chart and manifests/ set container `args` (which replace CMD) and never `command`.
    assert.deepEqual(execForm(ops(runtime, 'CMD').at(-1)), []);
    for (const file of ['manifests/03-deployment.yaml', 'charts/node-lifecycle-controller/templates/deployment.yaml']) {
      assert.doesNotMatch(readFileSync(join(ROOT, file), 'utf8'), /^\s+command:/m, `${file} must not replace the ENTRYPOINT`);
    }
  });

  /** Builds the bundle and runs `fn` in a temporary directory holding it alone, as the image's /app does. */
  function inImageApp(fn: (app: string) => void): void {
    const build = spawnSync('npm', ['run', '-s', 'build:bundle'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);
    const app = mkdtempSync(join(tmpdir(), 'nlc-image-app-'));
    try {
      copyFileSync(join(ROOT, bundleOut), join(app, basename(bundleOut)));
      fn(app);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  }

  test('the ENTRYPOINT runs: its node flags are accepted and the bundle answers --version alone in /app, as in the image', () => {
    inImageApp((app) => {
      const [, ...args] = execForm(ops(runtime, 'ENTRYPOINT').at(-1));
      const r = spawnSync(process.execPath, [...args, '--version'], { cwd: app, encoding: 'utf8', env: { PATH: '', NODE_ENV: 'production' } });
      assert.equal(r.status, 0, r.stderr);
      // The version and the build stamp (src/buildinfo.ts; `unknown` where the build had no git).
      assert.match(r.stdout, new RegExp(`^node-lifecycle-controller v${pkg.version.replaceAll('.', '\\.')} \\(git commit ([0-9a-f]{40}|unknown), tree (clean|dirty|unknown)\\)\n$`));
      // A misspelt node flag would stop the container before the program starts.
      assert.equal(r.stderr, '');
    });
  });

  test("the RUN's cache is the one the ENTRYPOINT's start reads: V8 accepts it and node writes nothing more", () => {
    inImageApp((app) => {
      const env = { PATH: '', NODE_ENV: 'production', NODE_COMPILE_CACHE: join(app, 'compile-cache') };
      const [, ...primeArgs] = execForm(ops(runtime, 'RUN')[0]);
      const prime = spawnSync(process.execPath, primeArgs, { cwd: app, encoding: 'utf8', env });
      assert.equal(prime.status, 0, prime.stderr);
      const [, ...args] = execForm(ops(runtime, 'ENTRYPOINT').at(-1));
      // NODE_DEBUG_NATIVE=COMPILE_CACHE: node's own account of the cache, on stderr.
      const start = spawnSync(process.execPath, [...args, '--version'], { cwd: app, encoding: 'utf8', env: { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' } });
      assert.equal(start.status, 0, start.stderr);
      assert.match(start.stderr, new RegExp(`V8 code cache for ESM \\S*${basename(bundleOut).replace(/\./g, '\\.')} was accepted`));
      assert.match(start.stderr, /skip persisting ESM \S+ because cache was the same/);
    });
  });

  test('OCI labels: title, description, version, revision, created, licenses (package.json\'s), base name', () => {
    const labels = labelsOf(runtime);
    for (const key of ['title', 'description', 'version', 'revision', 'created', 'licenses', 'source', 'base.name', 'base.digest']) {
      assert.ok(labels.get(`org.opencontainers.image.${key}`), `org.opencontainers.image.${key}`);
    }
    assert.equal(labels.get('org.opencontainers.image.licenses'), pkg.license);
    assert.equal(labels.get('org.opencontainers.image.base.name'), runtime.from.replace(/@sha256:.*$/, ''));
    const version = ops(runtime, 'ARG').find((a) => a.args.startsWith('VERSION='));
    assert.equal(version?.args, `VERSION=${pkg.version}`, 'the default VERSION is package.json\'s');
  });

  test('sets NODE_ENV=production and exposes the secure port', () => {
    assert.ok(ops(runtime, 'ENV').some((e) => /^NODE_ENV[= ]production\b/.test(e.args)));
    // build_info{git_commit} comes from the REVISION build argument.
    assert.ok(ops(runtime, 'ENV').some((e) => /\bNLC_GIT_COMMIT=\$\{REVISION\}/.test(e.args)));
    const port = String(DEFAULT_SECURE_PORT);
    assert.ok(ops(runtime, 'EXPOSE').some((e) => e.args.split(/\s+/).includes(port ?? '')), `EXPOSE ${port}`);
  });

  test('runtimeImageSpec: the configuration the image built here takes from the runtime stage (scripts/release/image.ts)', () => {
    const spec = runtimeImageSpec(stages, { REVISION: 'abc123', CREATED: '2026-12-07T00:00:00Z' });
    assert.equal(spec.base, runtime.from);
    assert.equal(spec.user, '65532:65532');
    assert.equal(spec.workdir, '/app');
    assert.deepEqual(spec.env, [
      ['NODE_ENV', 'production'],
      ['NLC_GIT_COMMIT', 'abc123'],
      ['NODE_COMPILE_CACHE', '/home/nonroot/.cache/node-compile-cache'],
    ]);
    assert.deepEqual(spec.entrypoint, execForm(ops(runtime, 'ENTRYPOINT')[0]));
    assert.deepEqual(spec.cmd, []);
    assert.deepEqual(spec.exposedPorts, [`${DEFAULT_SECURE_PORT}/tcp`]);
    assert.equal(spec.labels.get('org.opencontainers.image.version'), pkg.version, 'the ARG default, substituted');
    assert.equal(spec.labels.get('org.opencontainers.image.revision'), 'abc123', 'a build argument, substituted');
    assert.equal(spec.labels.get('org.opencontainers.image.licenses'), pkg.license);
    assert.deepEqual(spec.copies, [
      { from: 'build', src: `/app/${bundleOut}`, dest: `/app/${basename(bundleOut)}` },
      { from: 'build', src: '/app/LICENSE', dest: '/app/LICENSE' },
    ]);
    assert.deepEqual(spec.runs, [execForm(ops(runtime, 'RUN')[0])]);
    assert.throws(() => runtimeImageSpec(parseDockerfile('FROM scratch\nCMD ["x"]\n')), /needs USER, WORKDIR and an exec-form ENTRYPOINT/);
    assert.throws(() => parseDockerfile('RUN x\n'), /RUN before FROM/);
  });
});

describe('.dockerignore', () => {
  const entries = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

  test('keeps node_modules, build output and git metadata out of the context', () => {
    for (const e of ['node_modules', 'dist', '.git']) assert.ok(entries.includes(e), `.dockerignore lacks ${e}`);
  });

  test('does not exclude anything the build copies', () => {
    for (const needed of ['src', 'package.json', 'package-lock.json', 'tsconfig.json', 'LICENSE']) {
      assert.ok(!entries.includes(needed), `.dockerignore excludes ${needed}`);
    }
  });
});
