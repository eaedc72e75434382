/**
 * The controller's build and image contain nothing of the repository's simulation workspace
 * (packages/sim: the kubelet fleet simulator, the kubelet's eviction loop it runs, the demo), and
 * no file under src/ imports it: the simulator depends on the controller, never the other way.
 * Static, like dockerfile.test.ts: the TypeScript program of tsconfig.build.json, the sources'
 * import specifiers, the Dockerfile and .dockerignore.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { main as controllerMain } from '../../src/cli/program.js';
import { main as simMain } from '@node-lifecycle-controller/sim/program';

const ROOT = realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
const WORKSPACE_DIR = 'packages/sim';
/** Where the simulator lived before it became a workspace; nothing may come back there either. */
const OLD_SIM_DIR = 'sim';

interface RootPackage {
  workspaces?: string[];
  scripts: Record<string, string>;
}
const rootPkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as RootPackage;
const workspacePkg = JSON.parse(readFileSync(join(ROOT, WORKSPACE_DIR, 'package.json'), 'utf8')) as { name: string; private?: boolean };

/** Whether `file` (absolute) lies in the workspace or the old sim/ directory. */
function inSimulation(file: string): boolean {
  const rel = relative(ROOT, file).split(sep).join('/');
  return rel === WORKSPACE_DIR || rel.startsWith(`${WORKSPACE_DIR}/`) || rel === OLD_SIM_DIR || rel.startsWith(`${OLD_SIM_DIR}/`);
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Every module specifier of `text`: static imports and re-exports, `import type`, dynamic `import('…')`. */
function specifiers(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      // A computed specifier would hide what is imported: src/ has none, and must not start to.
      assert.ok(arg && ts.isStringLiteralLike(arg), `${relative(ROOT, file)}: dynamic import of a computed specifier`);
      out.push(arg.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('the simulation is a workspace of its own', () => {
  test('packages/sim is the root package\'s workspace, private, and npm run sim / demo run its entry point', () => {
    assert.deepEqual(rootPkg.workspaces, [WORKSPACE_DIR]);
    assert.equal(workspacePkg.name, '@node-lifecycle-controller/sim');
    assert.equal(workspacePkg.private, true, 'never published');
    assert.match(rootPkg.scripts['sim'] ?? '', new RegExp(`^tsx ${WORKSPACE_DIR}/src/main\\.ts sim$`));
    assert.match(rootPkg.scripts['demo'] ?? '', new RegExp(`^tsx ${WORKSPACE_DIR}/src/main\\.ts demo$`));
  });
});

/** Runs `fn` with stdout and stderr captured. */
async function captured(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const write = (sink: string[]) => (chunk: string | Uint8Array): boolean => (sink.push(String(chunk)), true);
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = write(out) as typeof process.stdout.write;
  process.stderr.write = write(err) as typeof process.stderr.write;
  try {
    const code = await fn();
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}

describe('sim and demo are the workspace\'s commands, not the controller\'s', () => {
  test('node-lifecycle-controller sim|demo exit 2 and name the npm script; neither is in its help', async () => {
    for (const command of ['sim', 'demo']) {
      const r = await captured(() => controllerMain([command, '--help']));
      assert.equal(r.code, 2, command);
      assert.equal(r.out, '');
      assert.equal(r.err, `node-lifecycle-controller: \`${command}\` is a development tool, not part of the controller: in a checkout of the repository run \`npm run ${command} -- [flags]\` (packages/sim)\n`);
    }
    const help = await captured(() => controllerMain(['help']));
    assert.equal(help.code, 0);
    assert.match(help.out, /^ {2}status /m, 'the help lists the commands');
    assert.doesNotMatch(help.out, /^ {2}(sim|demo) /m);
  });

  test('the workspace\'s program runs sim (help: exit 0) and refuses a missing or unknown command with exit 2', async () => {
    const help = await captured(() => simMain(['sim', '--help']));
    assert.equal(help.code, 0, help.err);
    assert.match(help.out, /^npm run sim -- \[options\]/m);
    assert.match(help.out, /--nodes-per-zone/);
    const bad = await captured(() => simMain(['sim', '--bogus']));
    assert.equal(bad.code, 2);
    assert.match(bad.err, /unknown argument --bogus/);
    const none = await captured(() => simMain([]));
    assert.equal(none.code, 2);
    assert.match(none.err, /^nlc-sim: a command is required\nUsage: nlc-sim <command>/);
    const unknown = await captured(() => simMain(['run']));
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /^nlc-sim: unknown command "run"/);
  });
});

describe('the controller\'s build contains none of it', () => {
  test('no file under src/ imports the workspace (by path or package name) or sim/', () => {
    const files = walk(join(ROOT, 'src')).filter((f) => /\.[cm]?ts$/.test(f));
    assert.ok(files.length > 50, `found ${files.length} files under src/`);
    const offending: string[] = [];
    for (const file of files) {
      for (const spec of specifiers(file, readFileSync(file, 'utf8'))) {
        const bad = spec === workspacePkg.name || spec.startsWith(`${workspacePkg.name}/`) || (spec.startsWith('.') && inSimulation(resolve(dirname(file), spec)));
        if (bad) offending.push(`${relative(ROOT, file)}: ${spec}`);
      }
    }
    assert.deepEqual(offending, []);
  });

  test('tsconfig.build.json compiles src/ only, and its program (tsc --listFilesOnly) holds no workspace file', () => {
    const raw = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[]; files?: string[] };
    assert.deepEqual(raw.include, ['src']);
    assert.equal(raw.files, undefined);
    const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    });
    assert.ok(parsed);
    assert.deepEqual(parsed.errors, []);
    // The program follows every import from the root files: what `npm run build` compiles and emits.
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
    const ours = program.getSourceFiles().map((s) => realpathSync(s.fileName)).filter((f) => !f.split(sep).includes('node_modules'));
    assert.ok(ours.some((f) => f === join(ROOT, 'src', 'cli', 'main.ts')), 'the program holds the controller\'s entry point');
    assert.deepEqual(ours.filter(inSimulation).map((f) => relative(ROOT, f)), []);
    assert.deepEqual(ours.filter((f) => !relative(ROOT, f).startsWith(`src${sep}`) && relative(ROOT, f) !== 'package.json').map((f) => relative(ROOT, f)), [], 'only src/ (and package.json, for the version)');
  });
});

describe('the production image contains none of it', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

  test('the Dockerfile copies nothing of the workspace or sim/ and installs without workspaces', () => {
    const copies = dockerfile.filter((l) => /^(COPY|ADD)\s/i.test(l));
    assert.ok(copies.length > 0);
    for (const c of copies) {
      const sources = c.split(/\s+/).slice(1, -1).filter((a) => !a.startsWith('--'));
      for (const s of sources) {
        assert.ok(!inSimulation(join(ROOT, s)) && !/^packages\b/.test(s) && s !== '.', `${c}: copies ${s}`);
      }
    }
    const npm = dockerfile.filter((l) => /^RUN\s/i.test(l)).flatMap((l) => l.split(/&&/).map((p) => p.replace(/^RUN\s+/i, '').trim())).filter((p) => /^npm (ci|prune|install)\b/.test(p));
    // The runtime stage copies only the esbuild bundle, so nothing installed needs pruning.
    assert.ok(npm.some((p) => p.startsWith('npm ci')), npm.join(' | '));
    for (const p of npm) assert.match(p, /\s--workspaces=false\b/, `${p}: the workspace is no dependency of the image`);
  });

  test('.dockerignore keeps packages/ out of the build context', () => {
    const entries = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    assert.ok(entries.includes('packages'), '.dockerignore lacks packages');
  });
});
