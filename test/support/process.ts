/**
 * Runs the real program (`src/cli/main.ts run`) as a child process for process-level integration
 * tests (leader election, fencing, RBAC), plus the cluster-side helpers those tests share: a Lease
 * holder tracker, chart RBAC installed for a unique release, and ServiceAccount kubeconfigs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllYaml, PatchStrategy, setHeaderOptions, Watch, type KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, type KubeClients } from '../../src/kube/client.js';
import { kubeconfigPath } from './cluster.js';
import { ROOT, runCommand as runRepoCommand } from './command.js';
import { metricValue } from './controller.js';
import { freePort } from './private-cluster.js';

const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const CHART = join(ROOT, 'charts', 'node-lifecycle-controller');

/** How a child process ended, and when (test-process wall clock, epoch ms). */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  atMs: number;
}

/** Options of {@link ControllerProcess.spawn}. */
export interface ControllerProcessOptions {
  /** Log file stem (`$NLC_TEST_LOG_DIR/<name>.log`); also names the process in assertion messages. */
  name: string;
  /** Kubeconfig path. Default: the shared cluster's admin kubeconfig. */
  kubeconfig?: string;
  /** Only nodes labelled `nlc.sim/fleet=<fleetPrefix>` are managed (`--node-selector`). */
  fleetPrefix: string;
  /** `--leader-elect-resource-name` and `--leader-elect-resource-namespace`. */
  leaseName: string;
  leaseNamespace: string;
  /** Extra flags (upstream syntax), appended last. */
  flags?: string[];
  /** Port of `--metrics-bind-address=127.0.0.1:<port>`. Default: a free port. */
  metricsPort?: number;
  /** Node's own flags, before `--import tsx` (the soak passes the image's and the chart's). Default: none. */
  nodeArgs?: string[];
}

/** The parts of `/debug/state` these tests read. */
export interface DebugState {
  identity: string;
  leader: string;
}

/**
 * The controller program in a child process: `node --import tsx src/cli/main.ts run` with leader
 * election on (lease 3 s, renew deadline 2 s, retry 0.5 s unless overridden), JSON logs, and
 * `/metrics`, `/readyz` and `/debug/state` on a free loopback port. Its stdout and stderr are kept in
 * memory and, when `$NLC_TEST_LOG_DIR` is set, appended to `<dir>/<name>.log`.
 */
export class ControllerProcess {
  readonly #output: string[] = [];
  readonly #file: WriteStream | undefined;
  #identity: string | undefined;

  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<ProcessExit>;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
    /** Port of the metrics/health server. */
    readonly port: number,
  ) {
    const dir = process.env['NLC_TEST_LOG_DIR'];
    this.#file = dir ? createWriteStream(join(dir, `${name}.log`), { flags: 'a' }) : undefined;
    const keep = (d: Buffer): void => {
      const s = d.toString();
      this.#output.push(s);
      this.#file?.write(s);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        const atMs = Date.now();
        this.#file?.end();
        resolve({ code, signal, atMs });
      });
    });
  }

  /**
   * Starts the program. Resolves once the child was spawned (not yet listening: see {@link waitReady}).
   * Environment variables `NLC_*` of the test run are not passed on, so that only the flags given
   * here configure the child (the program also reads `NLC_<FLAG>` variables).
   */
  static async spawn(opts: ControllerProcessOptions): Promise<ControllerProcess> {
    const port = opts.metricsPort ?? (await freePort());
    const args = [
      ...(opts.nodeArgs ?? []),
      '--import',
      'tsx',
      join(ROOT, 'src', 'cli', 'main.ts'),
      'run',
      `--kubeconfig=${opts.kubeconfig ?? kubeconfigPath()}`,
      '--leader-elect=true',
      `--leader-elect-resource-name=${opts.leaseName}`,
      `--leader-elect-resource-namespace=${opts.leaseNamespace}`,
      '--leader-elect-lease-duration=6s',
      '--leader-elect-renew-deadline=4s',
      '--leader-elect-retry-period=0.5s',
      `--node-selector=nlc.sim/fleet=${opts.fleetPrefix}`,
      `--metrics-bind-address=127.0.0.1:${port}`,
      '--secure-port=0',
      '--log-format=json',
      '--log-level=debug',
      ...(opts.flags ?? []),
    ];
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NLC_')));
    const child = spawn(NODE, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    return new ControllerProcess(opts.name, child, port);
  }

  /** Everything the process wrote to stdout and stderr so far. */
  output(): string {
    return this.#output.join('');
  }

  /** The JSON log lines written so far, parsed (lines that are not JSON are skipped). */
  logEntries(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const line of this.output().split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a line cut in the middle of a chunk: the rest arrives later
      }
    }
    return out;
  }

  /** Holder identity (`hostname_uuid`), known once {@link waitReady} resolved. @throws {Error} before that. */
  get identity(): string {
    if (this.#identity === undefined) throw new Error(`${this.name}: identity not known yet (call waitReady first)`);
    return this.#identity;
  }

  /** GETs a path of the metrics server. @throws {Error} when the server does not answer. */
  async #get(path: string): Promise<Response> {
    return fetch(`http://127.0.0.1:${this.port}${path}`, { signal: AbortSignal.timeout(2000) });
  }

  /** `/debug/state` (identity and the observed lease holder). @throws {Error} when unreachable. */
  async debugState(): Promise<DebugState> {
    return (await (await this.#get('/debug/state')).json()) as DebugState;
  }

  /** Prometheus text from `/metrics`. @throws {Error} when unreachable. */
  async metrics(): Promise<string> {
    return (await this.#get('/metrics')).text();
  }

  /** `leader_election_master_status{name=<lease>}`: 1 while leading, 0 otherwise, undefined when absent. */
  async masterStatus(leaseName: string): Promise<number | undefined> {
    return metricValue(await this.metrics(), 'leader_election_master_status', { name: leaseName });
  }

  /**
   * Waits until `/readyz` answers 200 (every cache synced) and records the identity.
   * @param timeoutMs milliseconds
   * @throws {Error} when the process exits first or the timeout passes (with the output's tail).
   */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited: ProcessExit | undefined;
    void this.exited.then((e) => (exited = e));
    for (;;) {
      if (exited) throw new Error(`${this.name} exited (${exited.code ?? exited.signal}) before it was ready:\n${this.output().slice(-3000)}`);
      try {
        if ((await this.#get('/readyz')).status === 200) {
          this.#identity = (await this.debugState()).identity;
          return;
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${this.name} not ready after ${timeoutMs} ms:\n${this.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Sends a signal (no-op once exited). @returns the test-process wall clock at sending, epoch ms. */
  signal(sig: NodeJS.Signals): number {
    const at = Date.now();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(sig);
    return at;
  }

  /**
   * Ends the process if it still runs: SIGTERM, then SIGKILL after `graceMs`. Never throws.
   * @param graceMs milliseconds
   */
  async stop(graceMs = 7000): Promise<ProcessExit> {
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    const e = await this.exited;
    clearTimeout(timer);
    return e;
  }
}

/** Lines of the JSON log that show the API server refusing a request (HTTP 403 / Forbidden). */
export function forbiddenLines(output: string): string[] {
  return output.split('\n').filter((l) => /HTTP 403|forbidden|"(code|status|statusCode)":403\b/i.test(l));
}

// ---------------------------------------------------------------------------------------------
// Lease holder tracking

/** One observed version of the Lease. */
export interface LeaseVersion {
  holder: string;
  /** etcd revision of this version (metadata.resourceVersion as a number). */
  rv: bigint;
  /** test-process wall clock when the watch delivered it, epoch ms */
  atMs: number;
}

/**
 * Watches one Lease and records every version (holder, resourceVersion, arrival time). A watch sees
 * every modification in order, so the exact version at which the holder changed is known.
 */
export class LeaseTracker {
  readonly versions: LeaseVersion[] = [];
  #abort: AbortController | undefined;
  #stopped = false;
  #lastRv: string | undefined;

  constructor(
    private readonly kubeConfig: KubeConfig,
    readonly namespace: string,
    readonly name: string,
  ) {}

  /** Starts watching (the Lease need not exist yet). Resolves once the watch request was accepted. */
  async start(): Promise<void> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${this.namespace}/leases`;
    const query: Record<string, string> = { fieldSelector: `metadata.name=${this.name}` };
    if (this.#lastRv !== undefined) query['resourceVersion'] = this.#lastRv;
    this.#abort = await new Watch(this.kubeConfig).watch(
      path,
      query,
      (type: string, obj: { metadata?: { resourceVersion?: string }; spec?: { holderIdentity?: string } }) => {
        const rv = obj.metadata?.resourceVersion;
        if ((type !== 'ADDED' && type !== 'MODIFIED') || rv === undefined) return;
        this.#lastRv = rv;
        this.versions.push({ holder: obj.spec?.holderIdentity ?? '', rv: BigInt(rv), atMs: Date.now() });
      },
      () => {
        // The server ended the watch: resume from the last version seen.
        if (!this.#stopped) setTimeout(() => void this.start().catch(() => undefined), 200);
      },
    );
  }

  stop(): void {
    this.#stopped = true;
    this.#abort?.abort();
  }

  /** The current holder as last observed (`""` when none). */
  holder(): string {
    return this.versions.at(-1)?.holder ?? '';
  }

  /** The first version at or after `afterMs` whose holder satisfies `pred`. */
  firstAfter(afterMs: number, pred: (holder: string) => boolean): LeaseVersion | undefined {
    return this.versions.find((v) => v.atMs >= afterMs && pred(v.holder));
  }

  /** The holders in order, with consecutive repeats (renewals) collapsed. */
  holders(): string[] {
    const out: string[] = [];
    for (const v of this.versions) if (out.at(-1) !== v.holder) out.push(v.holder);
    return out;
  }

  /**
   * The terms of office: for each holder, the resourceVersion at which it took the Lease and the one
   * at which the next holder (or `""`, a release) replaced it (`end` undefined while it still holds).
   * Released (`""`) and {@link PLACEHOLDER_HOLDER} terms are left out.
   */
  terms(): { holder: string; start: bigint; end: bigint | undefined }[] {
    const out: { holder: string; start: bigint; end: bigint | undefined }[] = [];
    for (const v of this.versions) {
      const last = out.at(-1);
      if (last && last.holder === v.holder) continue;
      if (last) last.end = v.rv;
      out.push({ holder: v.holder, start: v.rv, end: undefined });
    }
    return out.filter((t) => t.holder !== '' && t.holder !== PLACEHOLDER_HOLDER);
  }
}

/** Holder identity of a Lease held by the test itself (no process has it). */
export const PLACEHOLDER_HOLDER = 'nlc-test-placeholder';

/**
 * Creates the election Lease held by {@link PLACEHOLDER_HOLDER} for an hour, so that candidates
 * started now stand by until {@link releasePlaceholderLease}. Why: a freshly started process is busy
 * with its initial lists, and `LeaseElector` counts the renew deadline from the start of the
 * acquiring attempt (its GET included), so on a loaded machine a first acquisition slower than the
 * renew deadline (2 s here) is fenced and lost at once. Tests let the candidates sync first.
 * @throws {Error} when the Lease cannot be created.
 */
export async function holdPlaceholderLease(clients: KubeClients, namespace: string, name: string): Promise<void> {
  await clients.coordination.createNamespacedLease({
    namespace,
    body: { metadata: { name }, spec: { holderIdentity: PLACEHOLDER_HOLDER, leaseDurationSeconds: 3600 } },
  });
}

/**
 * Hands the placeholder's Lease back (empty holderIdentity, as a released lease), so a standby takes it.
 * @throws {Error} when the patch fails.
 */
export async function releasePlaceholderLease(clients: KubeClients, namespace: string, name: string): Promise<void> {
  await clients.coordination.patchNamespacedLease(
    { name, namespace, body: { spec: { holderIdentity: '', leaseDurationSeconds: 1 } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

// ---------------------------------------------------------------------------------------------
// Chart RBAC and ServiceAccount credentials

/** A rendered object: just what `kubectl apply/delete` and the tests need. */
interface RenderedObject {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  subjects?: { kind?: string; name?: string; namespace?: string }[];
}

/**
 * Runs a command from the repository root, feeding `input` on stdin (support/command.ts's
 * runCommand, which this wraps). @returns stdout.
 * @throws {Error} with stderr and stdout on a non-zero exit, or when it cannot be spawned.
 */
export async function runCommand(cmd: string, args: string[], input = '', env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const r = await runRepoCommand(cmd, args, { env, input });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** `kubectl` against the shared cluster as admin. */
export function kubectl(args: string[], input = ''): Promise<string> {
  return runCommand('kubectl', args, input, { ...process.env, KUBECONFIG: kubeconfigPath() });
}

/** The chart's RBAC objects for one release, applied to the cluster. */
export interface ChartRbac {
  release: string;
  namespace: string;
  /** The ServiceAccount the chart creates (the release's full name). */
  serviceAccount: string;
  /** The election Lease the chart's Role grants (`leaderElection.resourceName`). */
  leaseName: string;
  /** `kind/name` (plus namespace) of every object applied. */
  objects: { kind: string; name: string; namespace?: string }[];
  /** The applied objects as one JSON `List` (for `kubectl delete -f -`). */
  yaml: string;
}

const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/**
 * Renders the chart (`scripts/helm.sh template <release> … --namespace <namespace>` with the given
 * Lease name, plus `--set` for each of `extraSet`) and applies only its ServiceAccount, ClusterRole,
 * Roles and bindings as admin.
 * @throws {Error} when helm or kubectl fails (what was applied is deleted again first).
 */
export async function applyChartRbac(release: string, namespace: string, leaseName: string, extraSet: string[] = []): Promise<ChartRbac> {
  const rendered = await runCommand('bash', [
    'scripts/helm.sh',
    'template',
    release,
    CHART,
    '--namespace',
    namespace,
    '--set',
    `leaderElection.resourceName=${leaseName}`,
    ...extraSet.flatMap((s) => ['--set', s]),
  ]);
  // Round-trip through JSON: client-node's loader returns typed models with camelCase copies.
  const docs = (loadAllYaml(rendered) as unknown[])
    .filter((d): d is RenderedObject => d !== null && typeof d === 'object')
    .map((d) => JSON.parse(JSON.stringify(d)) as RenderedObject)
    .filter((d) => RBAC_KINDS.has(d.kind ?? ''));
  const yaml = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs });
  try {
    await kubectl(['apply', '-f', '-'], yaml);
  } catch (err) {
    // Leave no half-applied cluster-scoped objects behind.
    await kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], yaml).catch(() => undefined);
    throw err;
  }
  const sa = docs.find((d) => d.kind === 'ServiceAccount');
  if (!sa?.metadata?.name) throw new Error('the chart rendered no ServiceAccount');
  return {
    release,
    namespace,
    serviceAccount: sa.metadata.name,
    leaseName,
    objects: docs.map((d) => ({
      kind: d.kind ?? '',
      name: d.metadata?.name ?? '',
      ...(d.metadata?.namespace !== undefined ? { namespace: d.metadata.namespace } : {}),
    })),
    yaml,
  };
}

/** Deletes every object {@link applyChartRbac} applied (cluster-scoped ones included). Never throws. */
export async function deleteChartRbac(rbac: ChartRbac): Promise<void> {
  await kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], rbac.yaml).catch(() => undefined);
}

/**
 * Gets a bound token for a ServiceAccount (TokenRequest API, `POST …/serviceaccounts/<sa>/token`,
 * default audiences, 1 hour) and writes a kubeconfig that uses it against the shared cluster.
 * @returns the kubeconfig path and a function that removes its directory.
 * @throws {Error} when the TokenRequest fails.
 */
export async function serviceAccountKubeconfig(
  clients: KubeClients,
  namespace: string,
  serviceAccount: string,
): Promise<{ path: string; remove: () => Promise<void> }> {
  const tr = await clients.core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = tr.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  const cluster = loadKubeConfig(kubeconfigPath()).getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const clusterEntry: Record<string, unknown> = { server: cluster.server };
  if (cluster.skipTLSVerify) clusterEntry['insecure-skip-tls-verify'] = true;
  if (cluster.caData) clusterEntry['certificate-authority-data'] = cluster.caData;
  if (cluster.caFile) clusterEntry['certificate-authority'] = cluster.caFile;
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'nlc', cluster: clusterEntry }],
    users: [{ name: serviceAccount, user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: 'nlc', user: serviceAccount } }],
    'current-context': 'sa',
  };
  const dir = await mkdtemp(join(tmpdir(), 'nlc-sa-kubeconfig-'));
  const path = join(dir, 'kubeconfig');
  await writeFile(path, JSON.stringify(kubeconfig), { mode: 0o600 });
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}
