/**
 * `npm run release -- --dry-run`: builds every release artifact into dist/release/ and checks each,
 * exiting non-zero when any check fails. The release workflow (.github/workflows/release.yml) runs
 * the same command on a tag before it builds the image and publishes; docs/release.md lists the
 * artifacts.
 *
 *   npm run release -- --dry-run            build and check locally (no git or tag requirement)
 *   npm run release                         the same, and also require a clean tree at tag v<version>
 *   npm run release -- --dry-run --out DIR  somewhere else than dist/release
 *   npm run release -- --dry-run --no-image without the image steps
 *
 * A dry run also builds the controller's OCI image without a Docker engine, runs it against the
 * lane's API server, writes its SBOM, and signs it with a key generated for the run
 * (scripts/release/image.ts; root, Debian's umoci and runc, crane and cosign from their Go modules,
 * provisioned by scripts/image-tools.sh). A step that cannot run here is reported as skipped, with
 * its reason, not as passed.
 *
 * The kubeconform step (scripts/release/kubeconform.ts) validates against the 1.37 lane's own API
 * server's /openapi/v2, fetched through scripts/with-control-plane.sh (which reuses a running local
 * control plane, or starts one on the NLC_* ports and stops it again) and cached per server
 * version under ~/.cache/node-lifecycle-controller/openapi/.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { PLUGIN_ARCHIVE_FILES, PLUGIN_FILE, PLUGIN_LAUNCHER, PLUGIN_PLATFORMS, checkKrewManifest, pluginArchiveName, renderKrewManifest } from './krew.js';
import { changelogProblems, checkChecksumFile, checkImageSbom, checkSbom, checksumLine, imageSbom, releaseNotes, sha256File, type ImageSbomInput, type PackageFiles } from './artifacts.js';
import { gitStamp, stampedVersionLine, type BuildStamp } from '../../src/buildinfo.js';
import { validateManifests } from './kubeconform.js';
import { packageVersion, versionMismatches } from './version.js';
import { buildImage, checkImage, imageTools, ImageStepSkipped, ociArchitecture, signImage, type BuiltImage, type ImageTools } from './image.js';
import { must, sh } from './exec.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CHART_DIR = 'charts/node-lifecycle-controller';
/** The bundle `npm run build:bundle` writes (the Dockerfile's build stage runs the same script). */
export const BUNDLE_PATH = 'dist/bundle/node-lifecycle-controller.mjs';
/**
 * ws's optional native speed-ups: it requires them inside try/catch and falls back to JavaScript
 * when they are absent (they are never installed here), so the bundle leaves them as they are.
 */
const OPTIONAL_NATIVE = new Set(['bufferutil', 'utf-8-validate']);

/** The outcome of one step. */
interface StepResult {
  name: string;
  problems: string[];
  notes: string[];
  seconds: number;
  /** Why the step could not run here (scripts/release/image.ts `ImageStepSkipped`); it then has no problems. */
  skipped?: string;
}

/** The commit time of HEAD (seconds), for reproducible archive timestamps; SOURCE_DATE_EPOCH wins. */
function sourceDateEpoch(): string {
  if (process.env['SOURCE_DATE_EPOCH']) return process.env['SOURCE_DATE_EPOCH'];
  const r = sh('git', ['log', '-1', '--format=%ct']);
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : '0';
}

/** The controller bundle: built by `npm run build:bundle`, native-free, one file, runs alone, stamped with `stamp`. */
function bundleStep(out: string, version: string, stamp: BuildStamp): string[] {
  must('npm', ['run', '-s', 'build:bundle']);
  const problems: string[] = [];
  const meta = JSON.parse(readFileSync(join(ROOT, 'dist/bundle/meta.json'), 'utf8')) as {
    inputs: Record<string, unknown>;
    outputs: Record<string, { imports: { path: string; external?: boolean }[] }>;
  };
  const outputs = Object.keys(meta.outputs).filter((o) => !o.endsWith('.map'));
  if (outputs.length !== 1) problems.push(`bundle: ${outputs.length} output files, want 1`);
  for (const o of Object.values(meta.outputs)) {
    for (const i of o.imports) {
      if (i.external && !isBuiltin(i.path) && !OPTIONAL_NATIVE.has(i.path)) problems.push(`bundle imports ${i.path} at run time`);
    }
  }
  for (const input of Object.keys(meta.inputs)) {
    if (input.endsWith('.node')) problems.push(`bundle includes native addon ${input}`);
    // The simulator workspace is a development tool, never part of the controller.
    if (input.startsWith('packages/') || input.includes('@node-lifecycle-controller/sim')) problems.push(`bundle includes the simulator's ${input}`);
  }
  const target = join(out, 'node-lifecycle-controller.mjs');
  copyFileSync(join(ROOT, BUNDLE_PATH), target);
  // Alone in an empty directory: nothing may resolve from node_modules.
  const alone = mkdtempSync(join(tmpdir(), 'nlc-release-bundle-'));
  try {
    copyFileSync(target, join(alone, 'main.mjs'));
    const v = sh(process.execPath, ['main.mjs', '--version'], { cwd: alone });
    const want = `${stampedVersionLine('node-lifecycle-controller', version, stamp)}\n`;
    if (v.stdout !== want) problems.push(`bundle --version printed ${JSON.stringify(v.stdout)} (exit ${v.status}), want ${JSON.stringify(want)}: ${v.stderr.slice(-300)}`);
    const help = sh(process.execPath, ['main.mjs', 'run', '--help'], { cwd: alone });
    if (help.status !== 0 || !help.stdout.includes('--node-monitor-grace-period')) problems.push(`bundle run --help failed (exit ${help.status}): ${help.stderr.slice(-300)}`);
  } finally {
    rmSync(alone, { recursive: true, force: true });
  }
  return problems;
}

/**
 * The plugin archives (one per platform: the launcher, the bundle, LICENSE), their .sha256 files,
 * and the krew manifest.
 */
function pluginStep(out: string, version: string, stamp: BuildStamp): string[] {
  must('npm', ['run', '-s', 'build:plugin']);
  const problems: string[] = [];
  const stage = mkdtempSync(join(tmpdir(), 'nlc-release-plugin-'));
  const sums = new Map<string, string>();
  try {
    for (const f of [PLUGIN_FILE, PLUGIN_LAUNCHER]) {
      copyFileSync(join(ROOT, 'dist/plugin', f), join(stage, f));
      chmodSync(join(stage, f), 0o755);
    }
    copyFileSync(join(ROOT, 'LICENSE'), join(stage, 'LICENSE'));
    chmodSync(join(stage, 'LICENSE'), 0o644);
    const epoch = sourceDateEpoch();
    for (const { os, arch } of PLUGIN_PLATFORMS) {
      const name = pluginArchiveName(version, os, arch);
      // Reproducible: sorted names, fixed owner and time, gzip without a name or time stamp.
      must('bash', ['-c', `set -o pipefail; tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@${epoch} -C "$1" -cf - ${PLUGIN_ARCHIVE_FILES.join(' ')} | gzip -n -9 > "$2"`, 'tar', stage, join(out, name)]);
      const sum = sha256File(join(out, name));
      sums.set(name, sum);
      writeFileSync(join(out, `${name}.sha256`), checksumLine(sum, name));
      problems.push(...checkChecksumFile(readFileSync(join(out, `${name}.sha256`), 'utf8'), sums));
      const listing = must('tar', ['-tzf', join(out, name)]).split('\n').filter(Boolean).sort();
      if (listing.join(',') !== PLUGIN_ARCHIVE_FILES.join(',')) problems.push(`${name} holds ${listing.join(', ')}, want ${PLUGIN_ARCHIVE_FILES.join(', ')}`);
      const unpacked = mkdtempSync(join(tmpdir(), 'nlc-release-unpack-'));
      try {
        must('tar', ['-xzf', join(out, name), '-C', unpacked]);
        // Through the launcher, as krew runs it.
        const v = sh(process.execPath, [PLUGIN_LAUNCHER, '--version'], { cwd: unpacked });
        const want = `${stampedVersionLine('kubectl-node_lifecycle', version, stamp)}\n`;
        if (v.stdout !== want) problems.push(`${name}: --version printed ${JSON.stringify(v.stdout)}, want ${JSON.stringify(want)}`);
        if (sha256File(join(unpacked, 'LICENSE')) !== sha256File(join(ROOT, 'LICENSE'))) problems.push(`${name}: LICENSE differs from the repository's`);
      } finally {
        rmSync(unpacked, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  const identical = new Set(sums.values()).size;
  if (identical !== 1) problems.push(`the ${sums.size} plugin archives differ (${identical} checksums) although they hold the same files: the archive is not reproducible`);
  const manifest = renderKrewManifest(readFileSync(join(ROOT, 'krew/node-lifecycle.yaml'), 'utf8'), version, sums);
  writeFileSync(join(out, 'node-lifecycle.yaml'), manifest);
  problems.push(...checkKrewManifest(readFileSync(join(out, 'node-lifecycle.yaml'), 'utf8'), version, sums));
  return problems;
}

/** The chart, `helm package`d: with its schema, its version package.json's, lint-clean. */
function chartStep(out: string, version: string): string[] {
  must('bash', ['scripts/helm.sh', 'package', CHART_DIR, '--destination', out]);
  const problems: string[] = [];
  const tgz = join(out, `node-lifecycle-controller-${version}.tgz`);
  if (!existsSync(tgz)) return [`helm package wrote no ${relative(ROOT, tgz)}`];
  const files = must('tar', ['-tzf', tgz]).split('\n');
  for (const f of ['Chart.yaml', 'values.yaml', 'values.schema.json', 'templates/deployment.yaml']) {
    if (!files.includes(`node-lifecycle-controller/${f}`)) problems.push(`chart package lacks ${f}`);
  }
  const chart = loadYaml(must('bash', ['scripts/helm.sh', 'show', 'chart', tgz])) as { version?: string; appVersion?: string; home?: string };
  if (chart.version !== version || chart.appVersion !== version) problems.push(`packaged chart ${chart.version}/${chart.appVersion}, want ${version}`);
  const lint = sh('bash', ['scripts/helm.sh', 'lint', '--strict', tgz]);
  if (lint.status !== 0) problems.push(`helm lint --strict of the package failed: ${lint.stdout.slice(-800)}`);
  // The schema rejects a mistyped value in the package too.
  const typo = sh('bash', ['scripts/helm.sh', 'template', 'nlc', tgz, '--set', 'replicas=two']);
  if (typo.status === 0) problems.push('the packaged chart accepted replicas=two: values.schema.json is not applied');
  return problems;
}

/** The SBOM of the production dependencies (CycloneDX JSON, @cyclonedx/cyclonedx-npm). */
function sbomStep(out: string): string[] {
  const file = join(out, 'node-lifecycle-controller.cdx.json');
  // --no-workspaces: packages/sim (the simulator) is a development workspace, never shipped.
  must(join(ROOT, 'node_modules/.bin/cyclonedx-npm'), ['--omit', 'dev', '--no-workspaces', '--spec-version', '1.6', '--output-reproducible', '--output-format', 'JSON', '--output-file', file]);
  const files: PackageFiles = {
    pkg: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageFiles['pkg'],
    lock: JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as PackageFiles['lock'],
  };
  return checkSbom(readFileSync(file, 'utf8'), files);
}

/** File names of the image artifacts (the build machine's architecture only). */
export function imageArtifactNames(version: string, architecture = ociArchitecture()): { archive: string; sbom: string; publicKey: string } {
  const base = `node-lifecycle-controller-image-${version}-linux-${architecture}`;
  return { archive: `${base}.oci.tar`, sbom: `${base}.cdx.json`, publicKey: 'cosign.pub' };
}

/** The image steps' shared state: the tools, then the image, then its SBOM. */
interface ImageState {
  work: string;
  tools?: ImageTools;
  built?: BuiltImage;
  sbom?: string;
}

/** The image, as the Dockerfile's runtime stage, built with umoci; checked. */
function imageBuildStep(state: ImageState, version: string, notes: string[]): string[] {
  if (!state.tools) throw new ImageStepSkipped('no image tools (see the step before)');
  const revision = sh('git', ['rev-parse', 'HEAD']).stdout.trim() || 'unknown';
  const built = buildImage(state.tools, { work: state.work, version, revision, epoch: sourceDateEpoch(), bundle: join(ROOT, BUNDLE_PATH) });
  state.built = built;
  notes.push(`${built.digest} (linux/${built.architecture}), 3 layers, ${(built.layerBytes / 1024 / 1024).toFixed(1)} MiB compressed; Node.js ${built.node.version}; Debian ${built.debs.map((d) => `${d.name} ${d.version}`).join(', ')}`);
  notes.push(`phases: ${Object.entries(built.timings).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ')}`);
  return checkImage(state.tools, built, state.work, join(ROOT, BUNDLE_PATH));
}

/**
 * The image run with runc against the lane's API server (scripts/release/image-run.ts, through
 * with-control-plane.sh). The image holds the bundle built here, so its `--version` line is the one
 * `stamp` gives.
 */
function imageRunStep(state: ImageState, version: string, stamp: BuildStamp, notes: string[]): string[] {
  if (!state.tools || !state.built) throw new ImageStepSkipped('no image (see the steps before)');
  const r = sh('bash', ['scripts/with-control-plane.sh', process.execPath, '--import', 'tsx', 'scripts/release/image-run.ts', '--layout', state.built.layout, '--tag', state.built.tag, '--version-line', stampedVersionLine('node-lifecycle-controller', version, stamp), '--work', state.work], { timeoutMs: 10 * 60_000 });
  const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).at(-1);
  if (!line) return [`image-run.ts printed no result (exit ${r.status}): ${(r.stderr || r.stdout).slice(-1500)}`];
  const out = JSON.parse(line) as { problems?: string[]; notes?: string[]; skipped?: string };
  if (out.skipped) throw new ImageStepSkipped(out.skipped);
  notes.push(...(out.notes ?? []));
  return out.problems ?? [];
}

/** The image's SBOM: the npm SBOM (the step before) plus the image, Node.js and the Debian packages. */
function imageSbomStep(state: ImageState, out: string, version: string): string[] {
  if (!state.built) throw new ImageStepSkipped('no image (see the steps before)');
  const npmSbom = readFileSync(join(out, 'node-lifecycle-controller.cdx.json'), 'utf8');
  const b = state.built;
  const input: ImageSbomInput = {
    version,
    digest: b.digest,
    architecture: b.architecture,
    repository: 'ghcr.io/node-lifecycle-controller/node-lifecycle-controller',
    debian: b.debian,
    debs: b.debs,
    node: b.node,
  };
  const file = join(out, imageArtifactNames(version, b.architecture).sbom);
  writeFileSync(file, imageSbom(npmSbom, input));
  state.sbom = file;
  return checkImageSbom(readFileSync(file, 'utf8'), npmSbom, input);
}

/** Signs the image and attests its SBOM with a key made for the run; the archive and the public key. */
async function imageSignStep(state: ImageState, out: string, version: string, notes: string[]): Promise<string[]> {
  if (!state.tools || !state.built || !state.sbom) throw new ImageStepSkipped('no image or SBOM (see the steps before)');
  const names = imageArtifactNames(version, state.built.architecture);
  const signed = await signImage(state.tools, state.built, { work: state.work, sbom: state.sbom, archive: join(out, names.archive), publicKey: join(out, names.publicKey), epoch: sourceDateEpoch() });
  notes.push(`${names.archive}: ${(statSync(signed.archive).size / 1024 / 1024).toFixed(1)} MiB; verified: ${signed.verified.join('; ')}`);
  return [];
}

/** A release (not a dry run) is cut from a clean tree at tag v<version>. */
function gitStep(version: string): string[] {
  const problems: string[] = [];
  if (sh('git', ['status', '--porcelain']).stdout.trim() !== '') problems.push('the working tree is not clean');
  const tags = sh('git', ['tag', '--points-at', 'HEAD']).stdout.split('\n');
  if (!tags.includes(`v${version}`)) problems.push(`HEAD is not tagged v${version}`);
  return problems;
}

/**
 * Runs every step.
 * @param opts.out the output directory (emptied first).
 * @param opts.dryRun false also requires a clean tree at tag v<version>.
 * @returns each step's problems and notes; the release is good when no step has a problem.
 */
export async function release(opts: { out: string; dryRun: boolean; image?: boolean }): Promise<StepResult[]> {
  const version = packageVersion(ROOT);
  rmSync(opts.out, { recursive: true, force: true });
  mkdirSync(opts.out, { recursive: true });
  const results: StepResult[] = [];
  const step = async (name: string, fn: (notes: string[]) => string[] | Promise<string[]>): Promise<void> => {
    const t0 = Date.now();
    const notes: string[] = [];
    let problems: string[];
    let skipped: string | undefined;
    try {
      problems = await fn(notes);
    } catch (e) {
      if (e instanceof ImageStepSkipped) skipped = e.message;
      problems = skipped ? [] : [(e as Error).message];
    }
    results.push({ name, problems, notes, seconds: (Date.now() - t0) / 1000, ...(skipped ? { skipped } : {}) });
    const status = skipped ? 'skip' : problems.length === 0 ? 'ok  ' : 'FAIL';
    process.stderr.write(`[release] ${status} ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)${skipped ? `\n    skipped: ${skipped}` : ''}${problems.map((p) => `\n    ${p}`).join('')}${notes.map((n) => `\n    note: ${n}`).join('')}\n`);
  };
  await step('one version (scripts/release/version.ts)', () => versionMismatches(ROOT));
  await step('release notes (CHANGELOG.md)', () => {
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
    const problems = changelogProblems(changelog, version);
    if (problems.length > 0) return problems;
    writeFileSync(join(opts.out, 'RELEASE_NOTES.md'), `${releaseNotes(changelog, version) ?? ''}\n`);
    return [];
  });
  // A version the repository does not agree on, or one CHANGELOG.md does not release, is refused
  // before anything is built: a dry run too, so that its artifacts never carry such a version.
  if (results.some((r) => r.problems.length > 0)) {
    process.stderr.write(`[release] refused: v${version} is not releasable (above); nothing was built\n`);
    return results;
  }
  if (!opts.dryRun) await step('git: clean tree at the version tag', () => gitStep(version));
  // What the bundles are stamped with (package.json's build scripts ask the same git, src/buildinfo.ts).
  const stamp = gitStamp(ROOT);
  await step('controller bundle (esbuild)', () => bundleStep(opts.out, version, stamp));
  await step('plugin archives and krew manifest', () => pluginStep(opts.out, version, stamp));
  await step('chart package (helm package)', () => chartStep(opts.out, version));
  await step('SBOM (CycloneDX, production dependencies)', () => sbomStep(opts.out));
  await step('manifests validated by kubeconform', (notes) => validateManifests({ dir: join(opts.out, 'manifests'), chart: join(opts.out, `node-lifecycle-controller-${version}.tgz`), schemaDir: join(dirname(opts.out), 'kubeconform-schemas'), notes }));
  // The image, built, run and signed here (scripts/release/image.ts): a dry run's check. A release
  // does not publish it: the release workflow's image job builds, signs and attests the image it
  // pushes (buildx for both architectures, cosign keyless).
  if (opts.dryRun && opts.image !== false) {
    const state: ImageState = { work: join(dirname(opts.out), 'image-work') };
    rmSync(state.work, { recursive: true, force: true });
    mkdirSync(state.work, { recursive: true });
    try {
      await step('image tools (umoci, runc from Debian; crane, cosign from their Go modules)', (notes) => {
        state.tools = imageTools();
        notes.push(Object.entries(state.tools).map(([k, v]) => `${k} ${v}`).join(', '));
        return [];
      });
      await step("image: built with umoci as the Dockerfile's runtime stage (distroless-style base)", (notes) => imageBuildStep(state, version, notes));
      await step("image: runs with runc (--version, /healthz, /readyz against the lane's API server)", (notes) => imageRunStep(state, version, stamp, notes));
      await step('image: SBOM (CycloneDX 1.6: Debian packages, Node.js, npm production dependencies)', () => imageSbomStep(state, opts.out, version));
      await step('image: signed and SBOM attested with cosign (a key generated for this run), archived, verified', (notes) => imageSignStep(state, opts.out, version, notes));
    } finally {
      rmSync(state.work, { recursive: true, force: true });
    }
  } else {
    await step('image', () => {
      throw new ImageStepSkipped(opts.dryRun ? '--no-image' : "not part of a release's artifacts: the release workflow's image job builds, signs and attests the published image");
    });
  }
  await step('SHA256SUMS', () => {
    const sums = new Map<string, string>();
    for (const f of readdirSync(opts.out).sort()) if (statSync(join(opts.out, f)).isFile() && !f.endsWith('.sha256')) sums.set(f, sha256File(join(opts.out, f)));
    writeFileSync(join(opts.out, 'SHA256SUMS'), [...sums].map(([f, s]) => checksumLine(s, f)).join(''));
    return checkChecksumFile(readFileSync(join(opts.out, 'SHA256SUMS'), 'utf8'), sums);
  });
  return results;
}

if (import.meta.main) {
  const dryRun = process.argv.includes('--dry-run');
  const image = !process.argv.includes('--no-image');
  const outAt = process.argv.indexOf('--out');
  const out = outAt >= 0 ? (process.argv[outAt + 1] ?? 'dist/release') : join(ROOT, 'dist/release');
  const results = await release({ out, dryRun, image });
  const failed = results.filter((r) => r.problems.length > 0);
  process.stdout.write(`\n${relative(ROOT, out) || out}/ (${dryRun ? 'dry run' : 'release'} of v${packageVersion(ROOT)}):\n`);
  for (const f of readdirSync(out).sort()) {
    const s = statSync(join(out, f));
    process.stdout.write(`  ${f}${s.isDirectory() ? '/' : ''}  ${s.isDirectory() ? '' : `${(s.size / 1024).toFixed(1)} KiB`}\n`);
  }
  const skipped = results.filter((r) => r.skipped !== undefined);
  const skips = skipped.length > 0 ? `; ${skipped.length} skipped: ${skipped.map((r) => `${r.name} (${r.skipped})`).join('; ')}` : '';
  // The failures' problems again, last: a CI log often keeps only the tail.
  const failures = failed.map((f) => `${f.name}${f.problems.map((p) => `\n    ${p.slice(0, 1500)}`).join('')}`).join('\n  ');
  process.stdout.write(failed.length === 0 ? `every check passed (${results.length - skipped.length} steps${skips})\n` : `FAILED: ${failures}${skips}\n`);
  process.exitCode = failed.length === 0 ? 0 : 1;
}
