/**
 * The release's own checks (scripts/release/): the OpenAPI → kubeconform schema conversion, the
 * SBOM, checksum files and release notes. Each is fed a right and a broken input, so a check that
 * stopped checking would fail here.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeconformSchemas, parseApiVersion, schemaFileName, standaloneSchema, type OpenApiV2 } from '../../scripts/release/schemas.js';
import { changelogProblems, checkChecksumFile, checkSbom, checksumLine, releaseNotes, type PackageFiles } from '../../scripts/release/artifacts.js';
import { syncVersionSites, VERSION_SITES } from '../../scripts/release/version.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A miniature /openapi/v2: a Deployment-like kind, a self-referencing type, IntOrString and Quantity. */
const DOC: OpenApiV2 = {
  definitions: {
    'io.k8s.api.apps.v1.Deployment': {
      description: 'dropped',
      type: 'object',
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, spec: { $ref: '#/definitions/io.k8s.api.apps.v1.DeploymentSpec' } },
      'x-kubernetes-group-version-kind': [{ group: 'apps', version: 'v1', kind: 'Deployment' }],
    },
    'io.k8s.api.apps.v1.DeploymentSpec': {
      type: 'object',
      properties: {
        replicas: { type: 'integer', format: 'int32' },
        maxSurge: { $ref: '#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString' },
        memory: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        tree: { $ref: '#/definitions/io.k8s.Tree' },
      },
    },
    'io.k8s.Tree': { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/definitions/io.k8s.Tree' } } } },
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { type: 'string', format: 'int-or-string' },
    'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'string' },
    'io.k8s.api.core.v1.Service': { type: 'object', properties: {}, 'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Service' }] },
  },
};

describe('OpenAPI v2 → kubeconform schemas', () => {
  test('file names follow kubeconform\'s schemaPath: kind, the group\'s first label, version', () => {
    assert.equal(schemaFileName({ group: 'apps', version: 'v1', kind: 'Deployment' }), 'deployment-apps-v1.json');
    assert.equal(schemaFileName({ group: '', version: 'v1', kind: 'Service' }), 'service-v1.json');
    assert.equal(schemaFileName({ group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy' }), 'networkpolicy-networking-v1.json');
    assert.deepEqual(parseApiVersion('rbac.authorization.k8s.io/v1'), { group: 'rbac.authorization.k8s.io', version: 'v1' });
    assert.deepEqual(parseApiVersion('v1'), { group: '', version: 'v1' });
  });

  test('standalone and strict: refs inlined, unknown fields refused, IntOrString and Quantity as decoded, a cycle accepts anything', () => {
    const s = standaloneSchema(DOC, 'io.k8s.api.apps.v1.Deployment');
    const text = JSON.stringify(s);
    assert.ok(!text.includes('$ref'), 'no $ref left');
    assert.ok(!text.includes('dropped') && !text.includes('x-kubernetes-'), 'descriptions and extensions dropped');
    assert.equal(s['additionalProperties'], false);
    const spec = (s['properties'] as Record<string, Record<string, unknown>>)['spec'] ?? {};
    assert.equal(spec['additionalProperties'], false);
    const props = spec['properties'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(props['maxSurge'], { oneOf: [{ type: 'string' }, { type: 'integer' }] });
    assert.deepEqual(props['memory'], { oneOf: [{ type: 'string' }, { type: 'number' }] });
    assert.deepEqual(props['labels'], { type: 'object', additionalProperties: { type: 'string' } }, 'a map keeps its own additionalProperties');
    const tree = props['tree'] as { properties: { children: { items: unknown } } };
    assert.deepEqual(tree.properties.children.items, {}, 'the recursive reference');
  });

  test('kinds the server lacks are reported, never silently passed', () => {
    const { files, missing } = kubeconformSchemas(DOC, [
      { group: 'apps', version: 'v1', kind: 'Deployment' },
      { group: 'apps', version: 'v1', kind: 'Deployment' },
      { group: '', version: 'v1', kind: 'Service' },
      { group: 'monitoring.coreos.com', version: 'v1', kind: 'ServiceMonitor' },
    ]);
    assert.deepEqual([...files.keys()], ['deployment-apps-v1.json', 'service-v1.json']);
    assert.deepEqual(missing, [{ group: 'monitoring.coreos.com', version: 'v1', kind: 'ServiceMonitor' }]);
    assert.throws(() => standaloneSchema({ definitions: { a: { $ref: '#/definitions/b' } } }, 'a'), /missing definition b/);
  });
});

describe('SBOM check', () => {
  const files: PackageFiles = {
    pkg: { name: 'nlc', version: '1.2.3', dependencies: { yargs: '^18.0.0', '@kubernetes/client-node': '^2.0.0' }, devDependencies: { typescript: '~5.9.0' } },
    lock: {
      packages: {
        'node_modules/yargs': { version: '18.2.0' },
        'node_modules/@kubernetes/client-node': { version: '2.0.1' },
        'node_modules/typescript': { version: '5.9.3', dev: true },
      },
    },
  };
  const bom = (components: { name: string; group?: string; version: string }[], root = { name: 'nlc', version: '1.2.3' }): string =>
    JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.6', metadata: { component: root }, components });
  const good = [{ name: 'yargs', version: '18.2.0' }, { group: '@kubernetes', name: 'client-node', version: '2.0.1' }];

  test('a right SBOM passes', () => {
    assert.deepEqual(checkSbom(bom(good), files), []);
  });

  test('a missing or mis-versioned dependency, a development package, the wrong root: each named', () => {
    assert.deepEqual(checkSbom(bom(good.slice(1)), files), ['SBOM lacks production dependency yargs']);
    assert.match(checkSbom(bom([{ name: 'yargs', version: '17.0.0' }, good[1] ?? good[0]!]), files).join(), /yargs@17\.0\.0, the lockfile 18\.2\.0/);
    assert.deepEqual(checkSbom(bom([...good, { name: 'typescript', version: '5.9.3' }]), files), ['SBOM lists development dependency typescript']);
    assert.match(checkSbom(bom(good, { name: 'nlc', version: '0.0.1' }), files).join(), /root component nlc@0\.0\.1/);
    assert.match(checkSbom('{', files).join(), /not JSON/);
  });
});

describe('checksum files and release notes', () => {
  const sum = 'ab'.repeat(32);
  test('a sha256sum line is checked against the file\'s sum', () => {
    const actual = new Map([['a.tgz', sum]]);
    assert.deepEqual(checkChecksumFile(checksumLine(sum, 'a.tgz'), actual), []);
    assert.match(checkChecksumFile(checksumLine('cd'.repeat(32), 'a.tgz'), actual).join(), /a\.tgz: checksum cdcd/);
    assert.match(checkChecksumFile(checksumLine(sum, 'b.tgz'), actual).join(), /b\.tgz: named in a checksum file but not built/);
    assert.deepEqual(checkChecksumFile('', actual), ['checksum file is empty']);
  });

  test('the notes are CHANGELOG.md\'s section of the version, without the next section or the link list', () => {
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const notes = releaseNotes(changelog, version);
    assert.ok(notes);
    assert.match(notes, /^### Added/m);
    assert.doesNotMatch(notes, /^## |^\[[^\]]+\]: /m);
    assert.equal(releaseNotes(changelog, '99.0.0'), undefined);
    assert.equal(releaseNotes('## [1.0.0] - 2026-01-01\n\n## [0.9.0]\n- x\n', '1.0.0'), undefined, 'an empty section is no notes');
  });
});

describe('a version without its CHANGELOG.md section is refused (issue 56)', () => {
  const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  test('changelogProblems: the released version passes; a missing, undated, misdated, doubled or empty section does not', () => {
    assert.deepEqual(changelogProblems(changelog, version), []);
    assert.match(changelogProblems(changelog, '9.9.9').join(), /no "## \[9\.9\.9\] - YYYY-MM-DD" section/);
    assert.match(changelogProblems('## [Unreleased]\n- x\n', '9.9.9').join(), /no "## \[9\.9\.9\]/, 'Unreleased is not a release');
    assert.match(changelogProblems('## [9.9.9]\n- x\n', '9.9.9').join(), /not "## \[9\.9\.9\] - YYYY-MM-DD" with a real date/);
    assert.match(changelogProblems('## [9.9.9] - 2026-02-30\n- x\n', '9.9.9').join(), /with a real date/);
    assert.match(changelogProblems('## [9.9.9] - 2026-02-03\n- x\n## [9.9.9] - 2026-02-04\n- y\n', '9.9.9').join(), /2 sections/);
    assert.match(changelogProblems('## [9.9.9] - 2026-02-03\n\n## [9.9.8] - 2026-02-01\n- y\n', '9.9.9').join(), /is empty/);
    assert.deepEqual(changelogProblems('## [9.9.9] - 2026-02-03\n- x\n', '9.9.9'), []);
  });

  test('npm run release -- --dry-run of such a version exits 1 before building anything', () => {
    // A copy of what the release reads first (package.json, CHANGELOG.md, the version sites, its own
    // scripts), bumped to 9.9.9 everywhere but CHANGELOG.md, with this checkout's node_modules.
    const dir = mkdtempSync(join(tmpdir(), 'nlc-release-refuse-'));
    try {
      for (const f of new Set(['package.json', 'CHANGELOG.md', 'LICENSE', ...VERSION_SITES.map((v) => v.file)])) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
      cpSync(join(ROOT, 'scripts', 'release'), join(dir, 'scripts', 'release'), { recursive: true });
      cpSync(join(ROOT, 'src', 'buildinfo.ts'), join(dir, 'src', 'buildinfo.ts'));
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, version: '9.9.9' }, null, 2));
      syncVersionSites(dir);
      const out = join(dir, 'out');
      const run = () => spawnSync(process.execPath, ['--import', 'tsx', join(dir, 'scripts/release/main.ts'), '--dry-run', '--out', out], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
      const r = run();
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /CHANGELOG\.md has no "## \[9\.9\.9\] - YYYY-MM-DD" section/);
      assert.match(r.stderr, /refused: v9\.9\.9 is not releasable \(above\); nothing was built/);
      assert.match(r.stdout, /FAILED: release notes \(CHANGELOG\.md\)/);
      assert.deepEqual(existsSync(out) ? readdirSync(out) : [], [], 'no artifact was built');
      // An undated heading written ahead of time is refused the same way.
      writeFileSync(join(dir, 'CHANGELOG.md'), changelog.replace('## [Unreleased]', '## [Unreleased]\n\n## [9.9.9]\n- soon'));
      const undated = run();
      assert.equal(undated.status, 1);
      assert.match(undated.stderr, /"## \[9\.9\.9\]" is not "## \[9\.9\.9\] - YYYY-MM-DD" with a real date/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
