/**
 * Static checks of the Dockerfile and .dockerignore. No Docker engine runs here and hadolint is in
 * neither registry this project may use (Debian bookworm has no package; the npm `hadolint`
 * package downloads the binary from GitHub at run time), so this test asserts the properties the
 * image must have instead.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_METRICS_BIND_ADDRESS } from '../../src/cli/flags.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Instruction {
  op: string;
  args: string;
  line: number;
}

interface Stage {
  from: string;
  name: string | undefined;
  body: Instruction[];
}

/** Parses a Dockerfile into stages: comments dropped, `\` continuations joined. */
function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending !== '' && line.startsWith('#')) return; // comment lines inside a continuation
    if (pending === '') startLine = i + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = pending + line;
    pending = '';
    const m = /^(\S+)\s+(.*)$/.exec(full);
    assert.ok(m, `line ${startLine}: cannot parse "${full}"`);
    instructions.push({ op: (m[1] ?? '').toUpperCase(), args: (m[2] ?? '').trim(), line: startLine });
  });
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      assert.ok(m, `line ${ins.line}: FROM ${ins.args}`);
      stages.push({ from: m[1] ?? '', name: m[2], body: [] });
    } else {
      const current = stages.at(-1);
      assert.ok(current, `line ${ins.line}: ${ins.op} before FROM`);
      current.body.push(ins);
    }
  }
  return stages;
}

const ops = (s: Stage, op: string): Instruction[] => s.body.filter((i) => i.op === op);
const execForm = (i: Instruction | undefined): string[] => {
  assert.ok(i, 'instruction present');
  const parsed: unknown = JSON.parse(i.args);
  assert.ok(Array.isArray(parsed) && parsed.every((p) => typeof p === 'string'), `line ${i.line}: exec (JSON array) form`);
  return parsed as string[];
};

describe('Dockerfile', () => {
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const build = stages[0];
  const runtime = stages.at(-1);
  assert.ok(build && runtime);

  test('is multi-stage on node:24-bookworm-slim, and the runtime stage takes only build outputs', () => {
    assert.ok(stages.length >= 2);
    for (const s of stages) assert.equal(s.from, 'node:24-bookworm-slim');
    assert.equal(build.name, 'build');
    const copies = ops(runtime, 'COPY');
    assert.ok(copies.length > 0);
    for (const c of copies) assert.match(c.args, /^--from=build\s/, `runtime COPY ${c.args} must come from the build stage`);
    assert.ok(copies.some((c) => /\/app\/dist\s/.test(c.args)));
    assert.ok(copies.some((c) => /\/app\/node_modules\s/.test(c.args)));
    assert.equal(ops(runtime, 'ADD').length + ops(build, 'ADD').length, 0, 'ADD fetches URLs and unpacks archives; COPY is explicit');
  });

  test('builds with npm ci, npm run build, then prunes dev dependencies', () => {
    const runs = ops(build, 'RUN').map((r) => r.args).join(' && ');
    const at = (s: string): number => runs.indexOf(s);
    assert.ok(at('npm ci') >= 0);
    assert.ok(at('npm run build') > at('npm ci'));
    assert.ok(at('npm prune --omit=dev') > at('npm run build'));
    assert.equal(/npm install\b/.test(runs), false, 'npm ci, never npm install (lockfile-exact)');
  });

  test('copies everything tsconfig.build.json compiles, and the lockfile', () => {
    const tsconfig = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    const copied = ops(build, 'COPY').map((c) => c.args.split(/\s+/));
    const sources = new Set(copied.flatMap((parts) => parts.slice(0, -1)));
    for (const dir of tsconfig.include) assert.ok(sources.has(dir), `build stage does not COPY ${dir}`);
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) assert.ok(sources.has(f), `build stage does not COPY ${f}`);
  });

  test('runs as a fixed numeric non-root user', () => {
    const users = ops(runtime, 'USER');
    assert.equal(users.length, 1);
    const m = /^(\d+)(?::(\d+))?$/.exec(users[0]?.args ?? '');
    assert.ok(m, `USER ${users[0]?.args} must be numeric so that runAsNonRoot can verify it`);
    assert.notEqual(Number(m[1]), 0);
    if (m[2] !== undefined) assert.notEqual(Number(m[2]), 0);
    const manifest = readFileSync(join(ROOT, 'manifests', '03-deployment.yaml'), 'utf8');
    assert.match(manifest, new RegExp(`runAsUser: ${m[1]}\\b`), 'the Deployment runs as the image user');
  });

  test('tini (from apt) is PID 1 and CMD runs node directly on the package bin', () => {
    const runs = ops(runtime, 'RUN').map((r) => r.args).join(' ');
    assert.match(runs, /apt-get install -y --no-install-recommends tini/);
    assert.match(runs, /rm -rf \/var\/lib\/apt\/lists/);
    assert.deepEqual(execForm(ops(runtime, 'ENTRYPOINT').at(-1)), ['/usr/bin/tini', '--']);
    const cmd = execForm(ops(runtime, 'CMD').at(-1));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    assert.deepEqual(cmd, ['node', pkg.bin['node-lifecycle-controller']]);
  });

  test('sets NODE_ENV=production and exposes the metrics port', () => {
    assert.ok(ops(runtime, 'ENV').some((e) => /^NODE_ENV[= ]production$/.test(e.args)));
    const port = DEFAULT_METRICS_BIND_ADDRESS.split(':').at(-1);
    assert.ok(ops(runtime, 'EXPOSE').some((e) => e.args.split(/\s+/).includes(port ?? '')), `EXPOSE ${port}`);
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
    for (const needed of ['src', 'sim', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
      assert.ok(!entries.includes(needed), `.dockerignore excludes ${needed}`);
    }
  });
});
