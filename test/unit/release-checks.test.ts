/**
 * The release's own checks (scripts/release/): the OpenAPI → kubeconform schema conversion, the
 * SBOM, checksum files and release notes. Each is fed a right and a broken input, so a check that
 * stopped checking would fail here.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeconformSchemas, parseApiVersion, schemaFileName, standaloneSchema, type OpenApiV2 } from '../../scripts/release/schemas.js';
import { checkChecksumFile, checkSbom, checksumLine, releaseNotes, type PackageFiles } from '../../scripts/release/artifacts.js';

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
