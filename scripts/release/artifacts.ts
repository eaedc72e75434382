/**
 * Checks of the release artifacts that need no tool but Node: the SBOM's contents against
 * package.json and the lockfile, the changelog's section for a version (the release notes), and
 * checksum files. Pure functions of text, so unit tests can feed them broken inputs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The sha256 of a file.
 * @returns 64 lower-case hex digits.
 * @throws {Error} when the file cannot be read.
 */
export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** A checksum file's line, as `sha256sum` writes it: `<sum>  <file name>`. */
export function checksumLine(sum: string, fileName: string): string {
  return `${sum}  ${fileName}\n`;
}

/**
 * Checks a `sha256sum`-style file against the files it names.
 * @param text the checksum file's content.
 * @param actual file name → its sha256, as computed.
 * @returns one message per problem (a line that does not parse, a file not built, a wrong sum).
 */
export function checkChecksumFile(text: string, actual: ReadonlyMap<string, string>): string[] {
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines.length === 0) return ['checksum file is empty'];
  return lines.flatMap((l) => {
    const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l);
    if (!m) return [`checksum line does not parse: ${l}`];
    const [, sum = '', name = ''] = m;
    const want = actual.get(name);
    if (want === undefined) return [`${name}: named in a checksum file but not built`];
    return want === sum ? [] : [`${name}: checksum ${sum} but the file's is ${want}`];
  });
}

/** The parts of a CycloneDX JSON document read here. */
interface CycloneDx {
  bomFormat?: string;
  specVersion?: string;
  metadata?: { component?: { name?: string; version?: string } };
  components?: { name?: string; group?: string; version?: string; scope?: string }[];
}

/** The parts of package.json and package-lock.json read here. */
export interface PackageFiles {
  pkg: { name: string; version: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  lock: { packages: Record<string, { version?: string; dev?: boolean }> };
}

/**
 * Checks an SBOM of the production dependencies.
 * @param text the CycloneDX JSON.
 * @param files package.json and package-lock.json, parsed.
 * @returns one message per problem: not CycloneDX 1.5+, the wrong root component, a production
 *   dependency missing or at another version than the lockfile's, a development-only package
 *   present.
 */
export function checkSbom(text: string, files: PackageFiles): string[] {
  let bom: CycloneDx;
  try {
    bom = JSON.parse(text) as CycloneDx;
  } catch (e) {
    return [`SBOM is not JSON: ${(e as Error).message}`];
  }
  const problems: string[] = [];
  if (bom.bomFormat !== 'CycloneDX') problems.push(`SBOM bomFormat ${bom.bomFormat}`);
  if (!/^1\.[5-9]$/.test(bom.specVersion ?? '')) problems.push(`SBOM specVersion ${bom.specVersion}, want 1.5 or later`);
  if (bom.metadata?.component?.name !== files.pkg.name || bom.metadata.component.version !== files.pkg.version) {
    problems.push(`SBOM root component ${bom.metadata?.component?.name}@${bom.metadata?.component?.version}, want ${files.pkg.name}@${files.pkg.version}`);
  }
  const components = new Map<string, string[]>();
  for (const c of bom.components ?? []) {
    const name = c.group ? `${c.group}/${c.name ?? ''}` : (c.name ?? '');
    components.set(name, [...(components.get(name) ?? []), c.version ?? '']);
  }
  for (const dep of Object.keys(files.pkg.dependencies ?? {})) {
    const locked = files.lock.packages[`node_modules/${dep}`]?.version;
    const versions = components.get(dep);
    if (versions === undefined) problems.push(`SBOM lacks production dependency ${dep}`);
    else if (locked !== undefined && !versions.includes(locked)) problems.push(`SBOM has ${dep}@${versions.join(',')}, the lockfile ${locked}`);
  }
  // Development-only packages (the lockfile's dev: true) must not be listed as shipped.
  for (const [path, entry] of Object.entries(files.lock.packages)) {
    if (entry.dev !== true || !path.startsWith('node_modules/')) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (components.get(name)?.includes(entry.version ?? '') && Object.keys(files.pkg.devDependencies ?? {}).includes(name)) {
      problems.push(`SBOM lists development dependency ${name}`);
    }
  }
  return problems;
}

/**
 * Checks that CHANGELOG.md releases `version`: a `## [X.Y.Z] - YYYY-MM-DD` heading (Keep a
 * Changelog's, with a real calendar date) whose section is not empty. `## [Unreleased]` is not a
 * release, nor is a heading without a date (`## [0.2.0]` written ahead of time).
 * @param changelog CHANGELOG.md's text.
 * @param version package.json's version, e.g. `0.1.0`.
 * @returns one message per problem; empty when the version has its section. Never throws.
 */
export function changelogProblems(changelog: string, version: string): string[] {
  const headings = changelog.split('\n').filter((l) => l.startsWith(`## [${version}]`));
  if (headings.length === 0) return [`CHANGELOG.md has no "## [${version}] - YYYY-MM-DD" section: add one (from ## [Unreleased]) before releasing ${version}`];
  if (headings.length > 1) return [`CHANGELOG.md has ${headings.length} sections for ${version}`];
  const heading = headings[0] ?? '';
  const dated = /^## \[[^\]]+\] - (\d{4})-(\d{2})-(\d{2})\s*$/.exec(heading);
  const date = dated ? new Date(Date.UTC(Number(dated[1]), Number(dated[2]) - 1, Number(dated[3]))) : undefined;
  if (!dated || !date || date.getUTCMonth() !== Number(dated[2]) - 1 || date.getUTCDate() !== Number(dated[3])) {
    return [`CHANGELOG.md: "${heading}" is not "## [${version}] - YYYY-MM-DD" with a real date`];
  }
  return releaseNotes(changelog, version) === undefined ? [`CHANGELOG.md's section for ${version} is empty`] : [];
}

/**
 * The release notes of a version: its section of CHANGELOG.md (Keep a Changelog), without the
 * heading.
 * @param changelog CHANGELOG.md's text.
 * @param version e.g. `0.1.0`.
 * @returns the section's body, trimmed; undefined when there is no `## [version]` section or it is empty.
 */
export function releaseNotes(changelog: string, version: string): string | undefined {
  const lines = changelog.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`## [${version}]`));
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && (l.startsWith('## ') || /^\[[^\]]+\]: /.test(l)));
  const body = lines.slice(start + 1, end < 0 ? undefined : end).join('\n').trim();
  return body === '' ? undefined : body;
}

/** The parts of a CycloneDX component read and written here. */
interface CdxComponent {
  type?: string;
  name?: string;
  group?: string;
  version?: string;
  'bom-ref'?: string;
  purl?: string;
  description?: string;
  hashes?: { alg: string; content: string }[];
  [k: string]: unknown;
}

/** What the image SBOM describes besides the npm packages: the image itself and its base. */
export interface ImageSbomInput {
  version: string;
  /** The image manifest's digest, `sha256:…`. */
  digest: string;
  /** OCI architecture (`amd64`). */
  architecture: string;
  /** Where the release publishes it (`ghcr.io/<owner>/node-lifecycle-controller`). */
  repository: string;
  /** Debian's major version of the packages. */
  debian: string;
  debs: { name: string; version: string; architecture: string; sha256: string }[];
  node: { version: string; npmPackage: string; npmVersion: string };
}

/** `pkg:deb/debian/NAME@VERSION?arch=…&distro=debian-N` (purl-spec's deb type). */
export function debPurl(d: { name: string; version: string; architecture: string }, debian: string): string {
  return `pkg:deb/debian/${d.name}@${encodeURIComponent(d.version)}?arch=${d.architecture}&distro=debian-${debian}`;
}

/**
 * The image's SBOM (CycloneDX 1.6): the image as the described component (`pkg:oci/…@<digest>`), the
 * controller's npm production dependencies (from the npm SBOM, as bundled), Node.js, Debian and each
 * Debian package of the base layer with its .deb's sha256.
 * @param npmSbomText the npm SBOM (`@cyclonedx/cyclonedx-npm --omit dev`).
 * @returns the JSON text (reproducible: no serial number, no timestamp).
 * @throws {SyntaxError} when the npm SBOM is not JSON.
 */
export function imageSbom(npmSbomText: string, input: ImageSbomInput): string {
  const npm = JSON.parse(npmSbomText) as { metadata?: { tools?: unknown; component?: CdxComponent }; components?: CdxComponent[]; dependencies?: { ref: string; dependsOn?: string[] }[] };
  const imageRef = 'image';
  const app = npm.metadata?.component ?? { type: 'application', name: 'node-lifecycle-controller', version: input.version, 'bom-ref': 'node-lifecycle-controller' };
  const node: CdxComponent = {
    type: 'platform',
    name: 'node',
    version: input.node.version.replace(/^v/, ''),
    'bom-ref': 'nodejs',
    description: `Node.js, /nodejs/bin/node (from the npm package ${input.node.npmPackage}@${input.node.npmVersion})`,
    purl: `pkg:npm/${input.node.npmPackage}@${input.node.npmVersion}`,
  };
  const os: CdxComponent = { type: 'operating-system', name: 'debian', version: input.debian, 'bom-ref': `os:debian@${input.debian}`, description: 'the base layer\'s Debian packages (distroless-style: no shell, no package manager)' };
  const debs: CdxComponent[] = input.debs.map((d) => ({
    type: 'library',
    name: d.name,
    version: d.version,
    'bom-ref': `deb:${d.name}@${d.version}`,
    purl: debPurl(d, input.debian),
    hashes: [{ alg: 'SHA-256', content: d.sha256 }],
  }));
  const bom = {
    $schema: 'http://cyclonedx.org/schema/bom-1.6.schema.json',
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    version: 1,
    metadata: {
      tools: npm.metadata?.tools,
      component: {
        type: 'container',
        name: 'node-lifecycle-controller',
        version: input.version,
        'bom-ref': imageRef,
        purl: `pkg:oci/node-lifecycle-controller@${encodeURIComponent(input.digest)}?arch=${input.architecture}&repository_url=${encodeURIComponent(input.repository)}&tag=${input.version}`,
      },
    },
    components: [app, ...(npm.components ?? []), node, os, ...debs],
    dependencies: [{ ref: imageRef, dependsOn: [app['bom-ref'] ?? '', 'nodejs', os['bom-ref'] ?? '', ...debs.map((d) => d['bom-ref'] ?? '')] }, ...(npm.dependencies ?? [])],
  };
  return `${JSON.stringify(bom, null, 2)}\n`;
}

/**
 * Checks an image SBOM against what was built and the npm SBOM.
 * @returns one message per problem: not CycloneDX 1.6, not the image (type, version, digest), a
 *   Debian package or Node.js missing or at another version, a component of the npm SBOM missing.
 */
export function checkImageSbom(text: string, npmSbomText: string, input: ImageSbomInput): string[] {
  let bom: { bomFormat?: string; specVersion?: string; metadata?: { component?: CdxComponent }; components?: CdxComponent[] };
  try {
    bom = JSON.parse(text) as typeof bom;
  } catch (e) {
    return [`image SBOM is not JSON: ${(e as Error).message}`];
  }
  const problems: string[] = [];
  if (bom.bomFormat !== 'CycloneDX' || bom.specVersion !== '1.6') problems.push(`image SBOM is ${bom.bomFormat} ${bom.specVersion}, want CycloneDX 1.6`);
  const c = bom.metadata?.component;
  if (c?.type !== 'container' || c.version !== input.version || !(c.purl ?? '').includes(encodeURIComponent(input.digest))) problems.push(`image SBOM describes ${c?.type} ${c?.name}@${c?.version} (${c?.purl}), want the container ${input.version} with digest ${input.digest}`);
  const byRef = new Map((bom.components ?? []).map((x) => [x['bom-ref'] ?? '', x]));
  for (const d of input.debs) {
    const got = byRef.get(`deb:${d.name}@${d.version}`);
    if (!got || got.purl !== debPurl(d, input.debian) || got.hashes?.[0]?.content !== d.sha256) problems.push(`image SBOM lacks Debian package ${d.name} ${d.version} (with its purl and sha256)`);
  }
  if (byRef.get('nodejs')?.version !== input.node.version.replace(/^v/, '')) problems.push(`image SBOM lacks Node.js ${input.node.version}`);
  const npm = JSON.parse(npmSbomText) as { components?: CdxComponent[] };
  for (const x of npm.components ?? []) if (!byRef.has(x['bom-ref'] ?? '')) problems.push(`image SBOM lacks npm component ${x['bom-ref']}`);
  return problems;
}
