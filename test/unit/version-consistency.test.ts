/**
 * One version everywhere: package.json's `version` is what the controller's `--version`, its
 * build_info metric, the plugin's `--version`, the chart's version and appVersion, the image's OCI
 * version label (the Dockerfile's default VERSION build argument), manifests/' image tag and the
 * rendered krew manifest say. Each is read the way a user meets it; any disagreement fails.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load as loadYaml } from 'js-yaml';
import { createMetrics } from '../../src/metrics/registry.js';
import { buildStampText, gitStamp } from '../../src/buildinfo.js';
import { runPlugin } from '../../src/cli/plugin.js';
import { packageVersion, readVersionSites, syncVersionSites, versionMismatches, VERSION_SITES } from '../../scripts/release/version.js';
import { PLUGIN_PLATFORMS, pluginArchiveName, renderKrewManifest } from '../../scripts/release/krew.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE = process.execPath;
const version = packageVersion(ROOT);

/** Runs `fn` with stdout captured. */
async function stdoutOf(fn: () => Promise<number>): Promise<{ code: number; out: string }> {
  const chunks: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((c: string | Uint8Array) => (chunks.push(String(c)), true)) as typeof process.stdout.write;
  try {
    return { code: await fn(), out: chunks.join('') };
  } finally {
    process.stdout.write = write;
  }
}

describe('one version: package.json\'s', () => {
  test('package.json has a semantic version', () => {
    assert.match(version, /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/);
  });

  test('node-lifecycle-controller --version (the program, as a process)', () => {
    const r = spawnSync(NODE, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), '--version'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `node-lifecycle-controller v${version} (${buildStampText(gitStamp(ROOT))})\n`);
  });

  test('node_lifecycle_controller_build_info{version}', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const info = (await m.registry.getSingleMetric('node_lifecycle_controller_build_info')?.get())?.values;
    assert.equal(info?.length, 1);
    assert.equal(info[0]?.labels['version'], version);
    assert.equal(info[0]?.value, 1);
  });

  test('kubectl node-lifecycle --version', async () => {
    const r = await stdoutOf(() => runPlugin(['--version']));
    assert.equal(r.code, 0);
    assert.equal(r.out, `kubectl-node_lifecycle v${version} (${buildStampText(gitStamp(ROOT))})\n`);
  });

  test('the chart\'s version and appVersion, the image\'s VERSION argument, manifests/\' image tag', () => {
    const chart = loadYaml(readFileSync(join(ROOT, 'charts/node-lifecycle-controller/Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    assert.equal(chart.version, version);
    assert.equal(chart.appVersion, version);
    const readings = readVersionSites(ROOT);
    assert.equal(readings.length, VERSION_SITES.length);
    for (const r of readings) assert.equal(r.found, version, `${r.site.file}: ${r.site.what}`);
    assert.deepEqual(versionMismatches(ROOT), []);
    // The OCI label reads the argument (and nothing else may hard-code a version there).
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /org\.opencontainers\.image\.version="\$\{VERSION\}"/);
  });

  test('the krew manifest renders package.json\'s version into spec.version and every archive URI', () => {
    const template = readFileSync(join(ROOT, 'krew/node-lifecycle.yaml'), 'utf8');
    const sums = new Map(PLUGIN_PLATFORMS.map((p) => [pluginArchiveName(version, p.os, p.arch), '0'.repeat(64)]));
    const manifest = loadYaml(renderKrewManifest(template, version, sums)) as { spec: { version: string; platforms: { uri: string }[] } };
    assert.equal(manifest.spec.version, `v${version}`);
    for (const p of manifest.spec.platforms) assert.match(p.uri, new RegExp(`/v${version.replaceAll('.', '\\.')}/kubectl-node_lifecycle-v${version.replaceAll('.', '\\.')}-`));
  });

  test('a disagreeing site is named, and the sync (npm version\'s hook) rewrites only the version', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nlc-version-'));
    try {
      for (const f of new Set(['package.json', ...VERSION_SITES.map((s) => s.file)])) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
      pkg.version = '9.8.7';
      writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
      const bad = versionMismatches(dir);
      assert.equal(bad.length, VERSION_SITES.length);
      assert.match(bad[0] ?? '', /Chart\.yaml: chart version is .*, package\.json says 9\.8\.7/);
      const before = readFileSync(join(dir, 'Dockerfile'), 'utf8');
      syncVersionSites(dir);
      assert.deepEqual(versionMismatches(dir), []);
      assert.equal(readFileSync(join(dir, 'Dockerfile'), 'utf8'), before.replace(`ARG VERSION=${version}`, 'ARG VERSION=9.8.7'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('npm version runs the sync, so a bump is one command', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.match(pkg.scripts['version'] ?? '', /scripts\/release\/version\.ts/);
  });
});
