/**
 * Validates what users apply, the chart rendered with its defaults and with every optional object
 * on, and manifests/, with kubeconform against schemas made from the lane's own API server
 * (scripts/release/schemas.ts). Used by `npm run release` (on the packaged chart) and by
 * `npm run lint` (on the chart directory):
 *
 *   tsx scripts/release/kubeconform.ts     render into dist/lint-manifests/ and validate; exit 1 on failure
 *
 * The OpenAPI document comes from `scripts/with-control-plane.sh kubectl get --raw /openapi/v2` on
 * the 1.37 lane, whichever lane NLC_K8S_VERSION names (reusing a running local control plane of
 * it, or starting one on the NLC_* ports and stopping it after), cached per server version in
 * ~/.cache/node-lifecycle-controller/openapi/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { loadAll as loadAllYaml } from 'js-yaml';
import { kubeconformSchemas, parseApiVersion, type Gvk, type OpenApiV2 } from './schemas.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NAMESPACE = 'node-lifecycle-controller';
/** Kinds served only by a CRD the lane's API server does not have (the Prometheus operator's). */
const CRD_GROUPS = new Set(['monitoring.coreos.com']);
/** Every optional object of the chart switched on (the second rendering kubeconform checks). */
export const ALL_OPTIONAL_VALUES = {
  networkPolicy: {
    enabled: true,
    ingressFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
    egress: [{ to: [{ ipBlock: { cidr: '10.0.0.1/32' } }], ports: [{ port: 443, protocol: 'TCP' }] }],
  },
  serviceMonitor: { enabled: true },
  prometheusRule: { enabled: true },
  dashboard: { enabled: true },
  rbac: { viewer: { create: true, explainReads: true, subjects: [{ kind: 'Group', name: 'sre', apiGroup: 'rbac.authorization.k8s.io' }] } },
  controller: { authorizationAlwaysAllowPaths: ['/healthz', '/readyz', '/livez', '/debug/state'] },
  image: { digest: `sha256:${'0'.repeat(64)}` },
};

/**
 * The lane whose API the manifests are validated against, whatever lane the caller is on: the
 * newest, whose objects (policy/v1, networking.k8s.io/v1) the chart renders by default.
 */
const SCHEMA_LANE = '1.37';

/** Runs a command from the repository root; throws with its output's tail on a non-zero exit. */
function must(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${(r.stderr || r.stdout || String(r.error)).slice(-1500)}`);
  return r.stdout;
}

/**
 * The lane's /openapi/v2, from the cache or the lane's API server.
 * @param notes where to say which.
 * @throws {Error} when no API server of the lane's version can be reached or started.
 */
export function openApiDocument(notes: string[]): OpenApiV2 {
  const lane = { NLC_K8S_VERSION: SCHEMA_LANE };
  const laneVersion = must('bash', ['scripts/control-plane.sh', 'version'], lane).trim();
  const cacheDir = join(process.env['NLC_CACHE_DIR'] ?? join(homedir(), '.cache/node-lifecycle-controller'), 'openapi');
  const cached = join(cacheDir, `${laneVersion}.json`);
  if (!existsSync(cached)) {
    const raw = must('bash', ['scripts/with-control-plane.sh', 'bash', '-c', 'kubectl get --raw /version && printf "\\n----\\n" && kubectl get --raw /openapi/v2'], lane);
    const cut = raw.indexOf('\n----\n');
    const server = (JSON.parse(raw.slice(0, cut)) as { gitVersion?: string }).gitVersion;
    if (server !== laneVersion) throw new Error(`the API server is ${server}, the lane ${laneVersion}: is another lane's cluster on these ports?`);
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${cached}.tmp`, raw.slice(cut + 6));
    renameSync(`${cached}.tmp`, cached);
    notes.push(`fetched /openapi/v2 from the ${laneVersion} API server`);
  } else {
    notes.push(`/openapi/v2 of ${laneVersion} from ${cached}`);
  }
  return JSON.parse(readFileSync(cached, 'utf8')) as OpenApiV2;
}

/**
 * Renders the chart twice and manifests/ into `opts.dir`, writes the schemas into
 * `opts.schemaDir` (both emptied first) and runs kubeconform -strict on the three files.
 * @param opts.chart the chart: a directory or a `helm package` archive.
 * @param opts.notes receives what was skipped and kubeconform's summary.
 * @returns one message per invalid object or failure; empty when everything is valid.
 */
export function validateManifests(opts: { dir: string; chart: string; schemaDir: string; notes: string[] }): string[] {
  const { dir, chart, schemaDir, notes } = opts;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const allOptional = join(tmpdir(), `nlc-all-optional-${process.pid}.json`);
  writeFileSync(allOptional, JSON.stringify(ALL_OPTIONAL_VALUES));
  try {
    writeFileSync(join(dir, 'chart-default.yaml'), must('bash', ['scripts/helm.sh', 'template', 'nlc', chart, '--namespace', NAMESPACE]));
    writeFileSync(join(dir, 'chart-all-optional.yaml'), must('bash', ['scripts/helm.sh', 'template', 'nlc', chart, '--namespace', NAMESPACE, '-f', allOptional]));
  } finally {
    rmSync(allOptional, { force: true });
  }
  const plain = readdirSync(join(ROOT, 'manifests')).filter((f) => f.endsWith('.yaml')).sort();
  writeFileSync(join(dir, 'manifests.yaml'), plain.map((f) => `# manifests/${f}\n${readFileSync(join(ROOT, 'manifests', f), 'utf8').trimEnd()}\n`).join('---\n'));
  const rendered = ['chart-default.yaml', 'chart-all-optional.yaml', 'manifests.yaml'].map((f) => join(dir, f));
  const kinds: Gvk[] = rendered.flatMap((f) =>
    (loadAllYaml(readFileSync(f, 'utf8')) as ({ apiVersion?: unknown; kind?: unknown } | null)[])
      .filter((d): d is { apiVersion: string; kind: string } => typeof d?.apiVersion === 'string' && typeof d.kind === 'string')
      .map((d) => ({ ...parseApiVersion(d.apiVersion), kind: d.kind })),
  );
  const problems: string[] = [];
  const { files, missing } = kubeconformSchemas(openApiDocument(notes), kinds);
  for (const m of missing) if (!CRD_GROUPS.has(m.group)) problems.push(`${m.group || 'core'}/${m.version} ${m.kind}: the API server has no schema`);
  if (missing.length > 0) notes.push(`not validated (CRDs the API server does not serve): ${missing.map((m) => m.kind).join(', ')}`);
  rmSync(schemaDir, { recursive: true, force: true });
  mkdirSync(schemaDir, { recursive: true });
  for (const [name, schema] of files) writeFileSync(join(schemaDir, name), JSON.stringify(schema));
  const args = ['-strict', '-summary', '-output', 'json', '-schema-location', `${schemaDir}/{{ .ResourceKind }}{{ .KindSuffix }}.json`];
  if (missing.length > 0) args.push('-skip', [...new Set(missing.map((m) => m.kind))].join(','));
  const r = spawnSync('bash', ['scripts/go-tool.sh', 'kubeconform', ...args, ...rendered], { cwd: ROOT, encoding: 'utf8' });
  let report: { resources?: { filename: string; kind: string; name: string; status: string; msg: string }[]; summary?: Record<string, number> } = {};
  try {
    report = JSON.parse(r.stdout || '{}') as typeof report;
  } catch {
    problems.push(`kubeconform printed no JSON (exit ${r.status}): ${(r.stderr || r.stdout).slice(-800)}`);
  }
  for (const res of report.resources ?? []) {
    if (res.status !== 'statusValid' && res.status !== 'statusSkipped') problems.push(`kubeconform ${basename(res.filename)} ${res.kind}/${res.name}: ${res.status} ${res.msg}`);
  }
  if (r.status !== 0 && problems.length === 0) problems.push(`kubeconform exited ${r.status}: ${(r.stderr ?? '').slice(-800)}`);
  const s = report.summary ?? {};
  notes.push(`kubeconform: ${s['valid'] ?? 0} valid, ${s['invalid'] ?? 0} invalid, ${s['errors'] ?? 0} errors, ${s['skipped'] ?? 0} skipped, against ${files.size} schemas from /openapi/v2`);
  if ((s['valid'] ?? 0) === 0) problems.push('kubeconform validated nothing');
  return problems;
}

if (import.meta.main) {
  const notes: string[] = [];
  let problems: string[];
  try {
    problems = validateManifests({ dir: join(ROOT, 'dist/lint-manifests'), chart: join(ROOT, 'charts/node-lifecycle-controller'), schemaDir: join(ROOT, 'dist/kubeconform-schemas'), notes });
  } catch (e) {
    problems = [(e as Error).message];
  }
  for (const n of notes) process.stderr.write(`[kubeconform] ${n}\n`);
  for (const p of problems) process.stderr.write(`[kubeconform] FAIL ${p}\n`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
