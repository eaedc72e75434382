/**
 * The kubectl plugin's release archives and krew manifest: their names, the platforms they are
 * built for, and the rendering of krew/node-lifecycle.yaml (its ${VERSION} and
 * ${SHA256_<OS>_<ARCH>} placeholders) with the checksums of the archives actually built.
 */
import { load as loadYaml } from 'js-yaml';

/** The platforms a plugin archive is built for: krew's `os` and `arch` selector values. */
export const PLUGIN_PLATFORMS: readonly { os: string; arch: string }[] = [
  { os: 'linux', arch: 'amd64' },
  { os: 'linux', arch: 'arm64' },
  { os: 'darwin', arch: 'amd64' },
  { os: 'darwin', arch: 'arm64' },
];

/** The bundled plugin's file name inside each archive. */
export const PLUGIN_FILE = 'kubectl-node_lifecycle.mjs';

/**
 * The launcher beside it (bin/plugin-launcher.cjs, bundled by `npm run build:plugin`): the
 * manifest's `bin`, which checks the Node.js version before it loads {@link PLUGIN_FILE} (an older
 * Node.js gets one line and exit 2 instead of a SyntaxError over the bundle's source).
 */
export const PLUGIN_LAUNCHER = 'kubectl-node_lifecycle.cjs';

/** Every file of an archive, sorted as tar lists them with --sort=name. */
export const PLUGIN_ARCHIVE_FILES: readonly string[] = ['LICENSE', PLUGIN_LAUNCHER, PLUGIN_FILE].sort();

/**
 * The archive's file name, e.g. `kubectl-node_lifecycle-v0.1.0-linux-amd64.tar.gz`.
 * @param version package.json's version, without `v`.
 */
export function pluginArchiveName(version: string, os: string, arch: string): string {
  return `kubectl-node_lifecycle-v${version}-${os}-${arch}.tar.gz`;
}

/** The placeholder for one platform's checksum, e.g. `SHA256_LINUX_AMD64`. */
export function checksumPlaceholder(os: string, arch: string): string {
  return `SHA256_${os.toUpperCase()}_${arch.toUpperCase()}`;
}

/**
 * Fills the template's placeholders.
 * @param template krew/node-lifecycle.yaml's text.
 * @param version package.json's version, without `v`.
 * @param checksums archive file name → its sha256 (64 hex digits).
 * @returns the manifest's text.
 * @throws {Error} when a placeholder has no value (an unknown name, or a platform without archive).
 */
export function renderKrewManifest(template: string, version: string, checksums: ReadonlyMap<string, string>): string {
  const values = new Map<string, string>([['VERSION', version]]);
  for (const { os, arch } of PLUGIN_PLATFORMS) {
    const sum = checksums.get(pluginArchiveName(version, os, arch));
    if (sum !== undefined) values.set(checksumPlaceholder(os, arch), sum);
  }
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (_m, name: string) => {
    const value = values.get(name);
    if (value === undefined) throw new Error(`krew manifest: no value for \${${name}}`);
    return value;
  });
}

/** The parts of a krew Plugin the checks read. */
interface KrewPlugin {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string };
  spec?: {
    version?: string;
    homepage?: string;
    shortDescription?: string;
    platforms?: { selector?: { matchLabels?: Record<string, string> }; uri?: string; sha256?: string; bin?: string; files?: { from?: string; to?: string }[] }[];
  };
}

/**
 * Checks a rendered manifest against the version and the archives built.
 * @param text the rendered manifest.
 * @param version package.json's version.
 * @param checksums archive file name → sha256, of the archives built.
 * @returns one message per problem; empty when the manifest is right. Never throws.
 */
export function checkKrewManifest(text: string, version: string, checksums: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  let plugin: KrewPlugin;
  try {
    plugin = loadYaml(text) as KrewPlugin;
  } catch (e) {
    return [`krew manifest is not YAML: ${(e as Error).message}`];
  }
  if (text.includes('${')) problems.push('krew manifest still has a ${…} placeholder');
  if (plugin.apiVersion !== 'krew.googlecontainertools.github.com/v1alpha2' || plugin.kind !== 'Plugin') problems.push('krew manifest: not a krew v1alpha2 Plugin');
  if (plugin.metadata?.name !== 'node-lifecycle') problems.push(`krew manifest: name ${plugin.metadata?.name}, want node-lifecycle`);
  if (plugin.spec?.version !== `v${version}`) problems.push(`krew manifest: spec.version ${plugin.spec?.version}, want v${version}`);
  const platforms = plugin.spec?.platforms ?? [];
  for (const { os, arch } of PLUGIN_PLATFORMS) {
    const name = pluginArchiveName(version, os, arch);
    const entry = platforms.find((p) => p.selector?.matchLabels?.['os'] === os && p.selector.matchLabels['arch'] === arch);
    if (entry === undefined) {
      problems.push(`krew manifest: no platform ${os}/${arch}`);
      continue;
    }
    if (!entry.uri?.endsWith(`/v${version}/${name}`)) problems.push(`krew manifest ${os}/${arch}: uri ${entry.uri} does not end in /v${version}/${name}`);
    if (entry.sha256 !== checksums.get(name)) problems.push(`krew manifest ${os}/${arch}: sha256 ${entry.sha256} is not ${name}'s (${checksums.get(name) ?? 'not built'})`);
    if (entry.bin !== PLUGIN_LAUNCHER) problems.push(`krew manifest ${os}/${arch}: bin ${entry.bin}, want the launcher ${PLUGIN_LAUNCHER}`);
    for (const f of [PLUGIN_LAUNCHER, PLUGIN_FILE]) if (!entry.files?.some((e) => e.from === f)) problems.push(`krew manifest ${os}/${arch}: files do not install ${f}`);
    if (!entry.files?.some((f) => f.from === 'LICENSE')) problems.push(`krew manifest ${os}/${arch}: LICENSE not installed`);
  }
  if (platforms.length !== PLUGIN_PLATFORMS.length) problems.push(`krew manifest: ${platforms.length} platforms, want ${PLUGIN_PLATFORMS.length}`);
  return problems;
}
