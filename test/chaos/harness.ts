/**
 * The chaos suite's world: a private control plane (its own ports and state directory, with an
 * audit log), Toxiproxy with one proxy per controller replica, the stall relay behind them, a
 * ServiceAccount per replica (so the API server's audit log and API Priority and Fairness tell the
 * replicas apart, and neither is in `system:masters`, which APF exempts), the simulator fleet (direct
 * to the API server: it plays the kubelets, not the controller) and the controller replicas as child
 * processes whose kubeconfig's server is their proxy.
 *
 *   controller replica a ─▶ toxiproxy :7501 ─┐
 *   controller replica b ─▶ toxiproxy :7502 ─┴─▶ stall relay :7500 ─▶ kube-apiserver :7443 ─▶ etcd :7379
 *   simulator fleet (kubelets) ─────────────────────────────────────▶ kube-apiserver
 *
 * Ports default to the ones above and move with NLC_CHAOS_APISERVER_PORT, NLC_CHAOS_ETCD_PORT
 * (the peer port is the next one), NLC_CHAOS_TOXIPROXY_PORT and NLC_CHAOS_PROXY_BASE_PORT (relay on
 * it, replicas on the next ones).
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { isConflict, makeClients, type KubeClients } from '../../src/kube/client.js';
import { metricValue } from '../support/controller.js';
import { ControllerProcess, runCommand } from '../support/process.js';
import { freePort } from '../support/private-cluster.js';
import { StallRelay } from './stallrelay.js';
import { Toxiproxy } from './toxiproxy.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const CONTROL_PLANE = join(ROOT, 'scripts', 'control-plane.sh');
/** Namespace of the replicas' ServiceAccounts and of the election Lease. */
export const CHAOS_NAMESPACE = 'nlc-chaos';

/** The audit policy: every request of a ServiceAccount (the replicas), metadata only; nothing else. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts:${CHAOS_NAMESPACE}"]
- level: None
`;

/** The ports of one chaos world. */
export interface ChaosPorts {
  apiserver: number;
  etcd: number;
  etcdPeer: number;
  toxiproxy: number;
  /** The stall relay; replica proxies listen on the following ports. */
  proxyBase: number;
  /** Replica proxies on free ports instead of `proxyBase + n` (the CI test, which runs beside other tests). */
  dynamicProxies?: boolean;
}

/** Free loopback ports for every part (the CI test's choice: it never collides with a fixed-port run). */
export async function freeChaosPorts(): Promise<ChaosPorts> {
  const etcd = await freePort();
  return { apiserver: await freePort(), etcd, etcdPeer: await freePort(), toxiproxy: await freePort(), proxyBase: await freePort(), dynamicProxies: true };
}

/** The ports from the environment, or the defaults (7443, 7379/7380, 8474, 7500–7510). */
export function chaosPorts(env: NodeJS.ProcessEnv = process.env): ChaosPorts {
  const num = (k: string, d: number): number => (env[k] ? Number(env[k]) : d);
  const etcd = num('NLC_CHAOS_ETCD_PORT', 7379);
  return { apiserver: num('NLC_CHAOS_APISERVER_PORT', 7443), etcd, etcdPeer: etcd + 1, toxiproxy: num('NLC_CHAOS_TOXIPROXY_PORT', 8474), proxyBase: num('NLC_CHAOS_PROXY_BASE_PORT', 7500) };
}

/** One line of the audit log, the fields the suite reads. Times are epoch ms. */
export interface AuditEvent {
  user: string;
  verb: string;
  resource: string;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  code: number;
  receivedMs: number;
  completedMs: number;
}

/** A controller replica: its process, its proxy's name and its API user. */
export interface Replica {
  name: string;
  proc: ControllerProcess;
  /** The Toxiproxy proxy between it and the API server. */
  proxy: string;
  /** `system:serviceaccount:nlc-chaos:<name>`, as the audit log names it. */
  user: string;
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** True for an audit event of a write the API server accepted (2xx). */
export function landedWrite(e: AuditEvent): boolean {
  return MUTATING.has(e.verb) && e.code >= 200 && e.code < 300;
}

/** The chaos world (see the module comment). Build with {@link ChaosWorld.up}; end with {@link down}. */
export class ChaosWorld {
  readonly replicas: Replica[] = [];
  #nextProxy = 1;

  private constructor(
    readonly ports: ChaosPorts,
    readonly stateDir: string,
    readonly admin: KubeClients,
    readonly toxiproxy: Toxiproxy,
    readonly relay: StallRelay,
  ) {}

  /**
   * Starts the control plane (audit log on), Toxiproxy and the stall relay, and creates the
   * replicas' namespace. Takes 15–40 s on a loaded 2-core machine (the binaries are cached).
   * @throws {Error} when any part fails to start (what started is stopped again).
   */
  static async up(ports: ChaosPorts = chaosPorts()): Promise<ChaosWorld> {
    const stateDir = await mkdtemp(join(tmpdir(), 'nlc-chaos-cp-'));
    const policy = join(stateDir, 'audit-policy.yaml');
    await writeFile(policy, AUDIT_POLICY);
    const env = cpEnv(stateDir, ports, { NLC_AUDIT_POLICY_FILE: policy });
    let toxiproxy: Toxiproxy | undefined;
    try {
      await run('bash', [CONTROL_PLANE, 'up'], { env, timeout: 600_000 });
      toxiproxy = await Toxiproxy.start(ports.toxiproxy);
      const relay = await StallRelay.start(stateDir, ports.proxyBase, ports.apiserver);
      const token = (await readFile(join(stateDir, 'admin.token'), 'utf8')).trim();
      const admin = makeClients(kubeConfigOf(`https://127.0.0.1:${ports.apiserver}`, token));
      await admin.core.createNamespace({ body: { metadata: { name: CHAOS_NAMESPACE } } }).catch(ignoreConflict);
      return new ChaosWorld(ports, stateDir, admin, toxiproxy, relay);
    } catch (err) {
      await toxiproxy?.stop();
      await run('bash', [CONTROL_PLANE, 'down'], { env }).catch(() => undefined);
      await rm(stateDir, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * Starts a controller replica behind its own proxy: a ServiceAccount `<name>` bound to
   * cluster-admin, a token for it, a kubeconfig whose server is the proxy, and the program with
   * leader election on the Lease `nlc-chaos/<leaseName>` (lease 6 s, renew deadline 4 s, retry
   * 0.5 s), managing only the fleet `fleetPrefix`.
   * @param flags extra flags (upstream syntax), appended last
   * @param nodeArgs Node's own flags (before the program), e.g. the image's `--max-semi-space-size=16`
   * @throws {Error} when the API objects cannot be made or the process does not start.
   */
  async startReplica(name: string, fleetPrefix: string, leaseName: string, flags: string[] = [], nodeArgs: string[] = []): Promise<Replica> {
    const listen = this.ports.dynamicProxies ? await freePort() : this.ports.proxyBase + this.#nextProxy++;
    const proxy = `replica-${name}`;
    await this.toxiproxy.createProxy(proxy, `127.0.0.1:${listen}`, `127.0.0.1:${this.ports.proxyBase}`);
    const token = await this.serviceAccountToken(name);
    const kubeconfig = join(this.stateDir, `kubeconfig-${name}`);
    await writeFile(kubeconfig, kubeConfigOf(`https://127.0.0.1:${listen}`, token).exportConfig(), { mode: 0o600 });
    const proc = await ControllerProcess.spawn({ name: `chaos-${name}`, kubeconfig, fleetPrefix, leaseName, leaseNamespace: CHAOS_NAMESPACE, flags, nodeArgs });
    const replica = { name, proc, proxy, user: `system:serviceaccount:${CHAOS_NAMESPACE}:${name}` };
    this.replicas.push(replica);
    return replica;
  }

  /**
   * Creates the ServiceAccount `nlc-chaos/<name>` bound to cluster-admin (if missing) and returns a
   * 2-hour token for it.
   * @throws {Error} when the API refuses.
   */
  async serviceAccountToken(name: string): Promise<string> {
    await this.admin.core.createNamespacedServiceAccount({ namespace: CHAOS_NAMESPACE, body: { metadata: { name } } }).catch(ignoreConflict);
    await this.kubectl(['create', 'clusterrolebinding', `nlc-chaos-${name}`, '--clusterrole=cluster-admin', `--serviceaccount=${CHAOS_NAMESPACE}:${name}`]).catch((err: unknown) => {
      if (!kubectlSaysAlreadyExists(err)) throw err;
    });
    // A day: the 2-hour soak (plus its fleet and wave tail) outlived a 2-hour token on 2026-11-28 and its
    // replica lost the election on 401s. In a cluster the kubelet rotates a projected token; here nothing does.
    const tr = await this.admin.core.createNamespacedServiceAccountToken({ name, namespace: CHAOS_NAMESPACE, body: { spec: { audiences: [], expirationSeconds: 86_400 } } });
    const token = tr.status?.token;
    if (!token) throw new Error(`TokenRequest for ${name} returned no token`);
    return token;
  }

  /**
   * Runs kubectl as the cluster's admin (directly, not through a proxy), feeding `input` on stdin.
   * @returns stdout. @throws {Error} with stderr on a non-zero exit.
   */
  async kubectl(args: string[], input = ''): Promise<string> {
    return runCommand('kubectl', args, input, { ...process.env, KUBECONFIG: join(this.stateDir, 'kubeconfig') });
  }

  /** Every event of the audit log so far (the replicas' requests only, by the policy). */
  async audit(): Promise<AuditEvent[]> {
    const text = await readFile(join(this.stateDir, 'logs', 'audit.log'), 'utf8').catch(() => '');
    const out: AuditEvent[] = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(toAuditEvent(JSON.parse(line) as RawAuditEvent));
      } catch {
        // the last line may be half-written
      }
    }
    return out;
  }

  /** Stops the replicas, the relay, Toxiproxy and the control plane, and removes the state. Never throws. */
  async down(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.proc.stop(3000)));
    await this.relay.stop().catch(() => undefined);
    await this.toxiproxy.stop();
    await run('bash', [CONTROL_PLANE, 'down'], { env: cpEnv(this.stateDir, this.ports, {}) }).catch(() => undefined);
    // Kept with the test logs: the audit log is the record a failed scenario is read from.
    const logDir = process.env['NLC_TEST_LOG_DIR'];
    if (logDir) await cp(join(this.stateDir, 'logs'), join(logDir, `chaos-cp-${Date.now()}`), { recursive: true }).catch(() => undefined);
    await rm(this.stateDir, { recursive: true, force: true });
  }
}

interface RawAuditEvent {
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

function toAuditEvent(r: RawAuditEvent): AuditEvent {
  return {
    user: r.user?.username ?? '',
    verb: r.verb ?? '',
    resource: r.objectRef?.resource ?? '',
    subresource: r.objectRef?.subresource,
    namespace: r.objectRef?.namespace,
    name: r.objectRef?.name,
    code: r.responseStatus?.code ?? 0,
    receivedMs: Date.parse(r.requestReceivedTimestamp ?? ''),
    completedMs: Date.parse(r.stageTimestamp ?? ''),
  };
}

function cpEnv(stateDir: string, ports: ChaosPorts, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NLC_STATE_DIR: stateDir,
    NLC_APISERVER_PORT: String(ports.apiserver),
    NLC_ETCD_PORT: String(ports.etcd),
    NLC_ETCD_PEER_PORT: String(ports.etcdPeer),
    ...extra,
  };
}

function kubeConfigOf(server: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'chaos', server, skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'chaos', cluster: 'chaos', user: 'u' }],
    currentContext: 'chaos',
  });
  return kc;
}

/**
 * True for kubectl's error on creating an object that exists. kubectl prints `… "x" already exists`,
 * not the API's reason `AlreadyExists` (the soak's second APF fault failed on that: its second token
 * for the same ServiceAccount). Pure.
 */
export function kubectlSaysAlreadyExists(err: unknown): boolean {
  return /AlreadyExists|already exists/.test(String(err));
}

function ignoreConflict(err: unknown): void {
  if (!isConflict(err)) throw err;
}

// ---------------------------------------------------------------------------------------------
// Measurements

/** Resident set size of a process, bytes, from /proc (undefined when it is gone). */
export async function rssBytes(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** Sum of every `rest_client_requests_total` sample (all codes, methods, hosts) in a Prometheus text. */
export function totalRequests(metrics: string): number {
  let sum = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('rest_client_requests_total')) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) sum += v;
  }
  return sum;
}

/**
 * Samples a replica's `rest_client_requests_total` (summed) once a second, so the request rate of
 * any window can be read afterwards: steady state, during a fault, after it.
 */
export class RequestMeter {
  readonly samples: { atMs: number; total: number }[] = [];
  readonly #timer: NodeJS.Timeout;

  /** @param everyMs sampling interval, ms (default 1,000). */
  constructor(
    readonly proc: ControllerProcess,
    everyMs = 1000,
  ) {
    this.#timer = setInterval(() => {
      void proc
        .metrics()
        .then((m) => this.samples.push({ atMs: Date.now(), total: totalRequests(m) }))
        .catch(() => undefined);
    }, everyMs);
  }

  /** Requests per second between two epoch-ms times (from the nearest samples), or NaN without two samples. */
  rate(fromMs: number, toMs: number): number {
    const inWindow = this.samples.filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
    const first = inWindow[0];
    const last = inWindow.at(-1);
    if (!first || !last || last.atMs === first.atMs) return Number.NaN;
    return ((last.total - first.total) * 1000) / (last.atMs - first.atMs);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** One informer of a replica, the fields of its `/debug/state` entry the suite reads. Times are epoch ms. */
export interface InformerState {
  name: string;
  watching?: boolean;
  relists?: number;
  restarts?: number;
  stalls?: number;
  lastEventMs?: number;
  resourceVersion?: string;
}

/** The informers of a replica, from its /debug/state (none when it does not answer). */
export async function informersOf(r: Replica): Promise<InformerState[]> {
  const st = (await r.proc.debugState().catch(() => ({}))) as unknown as { informers?: InformerState[] };
  return st.informers ?? [];
}

/** The replica's Lease informer (`leases(kube-node-lease)`), or undefined. */
export async function leaseInformerOf(r: Replica): Promise<InformerState | undefined> {
  return (await informersOf(r)).find((i) => i.name.startsWith('leases'));
}

/** True when the replica answers and every informer of it is watching. */
export async function allWatching(r: Replica): Promise<boolean> {
  const all = await informersOf(r);
  return all.length > 0 && all.every((i) => i.watching === true);
}

/** One metric of a replica, e.g. `leader_election_master_status`, or undefined when unreachable. */
export async function replicaMetric(r: Replica, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  return metricValue(await r.proc.metrics().catch(() => ''), name, labels);
}
