/**
 * One version everywhere: package.json's `version` is the project's version, and every file that
 * states it again (the chart, the image's default VERSION build argument and
 * manifests/' image tag) is found and rewritten here. The program (`--version`, the build_info
 * metric, the plugin's `--version`) reads package.json itself (src/version.ts), and the krew
 * manifest is rendered from it (scripts/release/krew.ts), so neither needs a rewrite.
 *
 *   tsx scripts/release/version.ts           rewrite every site to package.json's version
 *   tsx scripts/release/version.ts --check   exit 1, naming each site, when one disagrees
 *
 * `npm version X.Y.Z` runs the rewrite through package.json's `version` script, so a bump is one
 * command; test/unit/version-consistency.test.ts fails when a site disagrees.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A place outside package.json that states the version. */
export interface VersionSite {
  /** Repository-relative path. */
  file: string;
  /** What the value is, for messages (`Chart.yaml version`). */
  what: string;
  /** Matches the line; group 1 is the version text (without a leading `v`). */
  pattern: RegExp;
}

/** Every site, in the order a reader meets them. Each pattern must match exactly once. */
export const VERSION_SITES: readonly VersionSite[] = [
  { file: 'charts/node-lifecycle-controller/Chart.yaml', what: 'chart version', pattern: /^version: (\S+)$/m },
  { file: 'charts/node-lifecycle-controller/Chart.yaml', what: 'chart appVersion', pattern: /^appVersion: "([^"]+)"$/m },
  { file: 'Dockerfile', what: 'image VERSION build argument (org.opencontainers.image.version)', pattern: /^ARG VERSION=(\S+)$/m },
  { file: 'manifests/03-deployment.yaml', what: 'manifests/ image tag', pattern: /^\s+image: node-lifecycle-controller:(\S+)$/m },
];

/**
 * Reads package.json's version.
 * @param root the repository root (absolute path).
 * @returns e.g. `0.1.0`.
 * @throws {Error} when package.json has no string `version`.
 */
export function packageVersion(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof pkg.version !== 'string' || pkg.version === '') throw new Error('package.json has no version');
  return pkg.version;
}

/** What one site says. */
export interface SiteReading {
  site: VersionSite;
  /** The version found, or undefined when the pattern matched zero or several times. */
  found: string | undefined;
}

/**
 * Reads every site.
 * @param root the repository root.
 * @returns one reading per entry of {@link VERSION_SITES}, in order. Throws only on unreadable files.
 */
export function readVersionSites(root: string): SiteReading[] {
  return VERSION_SITES.map((site) => {
    const text = readFileSync(join(root, site.file), 'utf8');
    const global = new RegExp(site.pattern.source, `${site.pattern.flags}g`);
    const matches = [...text.matchAll(global)];
    return { site, found: matches.length === 1 ? matches[0]?.[1] : undefined };
  });
}

/**
 * Lists every disagreement with package.json's version.
 * @param root the repository root.
 * @returns one message per site that disagrees or cannot be found; empty when all agree.
 */
export function versionMismatches(root: string): string[] {
  const want = packageVersion(root);
  return readVersionSites(root)
    .filter((r) => r.found !== want)
    .map((r) => `${r.site.file}: ${r.site.what} is ${r.found ?? '(not found exactly once)'}, package.json says ${want}`);
}

/**
 * Rewrites every site to package.json's version (the group 1 of each pattern only).
 * @param root the repository root.
 * @returns the files changed (repository-relative).
 * @throws {Error} when a site's pattern does not match exactly once.
 */
export function syncVersionSites(root: string): string[] {
  const want = packageVersion(root);
  const changed = new Set<string>();
  for (const site of VERSION_SITES) {
    const path = join(root, site.file);
    const text = readFileSync(path, 'utf8');
    const global = new RegExp(site.pattern.source, `${site.pattern.flags}g`);
    const count = [...text.matchAll(global)].length;
    if (count !== 1) throw new Error(`${site.file}: ${site.what}: pattern ${site.pattern} matched ${count} times`);
    const next = text.replace(site.pattern, (line: string, found: string) => line.replace(found, want));
    if (next !== text) {
      writeFileSync(path, next);
      changed.add(site.file);
    }
  }
  return [...changed];
}

if (import.meta.main) {
  const root = join(import.meta.dirname, '..', '..');
  if (process.argv.includes('--check')) {
    const bad = versionMismatches(root);
    for (const m of bad) process.stderr.write(`${m}\n`);
    process.exitCode = bad.length === 0 ? 0 : 1;
  } else {
    const changed = syncVersionSites(root);
    process.stdout.write(changed.length === 0 ? `every site says ${packageVersion(root)}\n` : `set ${packageVersion(root)} in ${changed.join(', ')}\n`);
  }
}
