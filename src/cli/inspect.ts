/**
 * Shared plumbing of the inspection commands (`status`, `explain`, `shadow-report`): where the
 * controller's `/debug/state` comes from, how it is fetched, and the table rendering they (and the
 * demo's live view) print with. The document's shape and the reports built from it live in
 * src/explain/; times and durations are formatted by src/util/format.ts.
 *
 * Two ways to reach a controller:
 * - `--endpoint URL`: the controller directly: `https://127.0.0.1:10267` (its secure port, e.g.
 *   through `kubectl port-forward`; a bearer token from `--token` or the kubeconfig, TLS checked
 *   unless `--insecure-skip-tls-verify`, or against `--certificate-authority`) or
 *   `http://127.0.0.1:PORT` (its plain port, `--metrics-bind-address`: a local process, the demo);
 * - through the cluster: read the leader-election Lease (`--namespace`/`--lease`, the controller's
 *   `--leader-elect-resource-namespace`/`--leader-elect-resource-name`), take the pod name from its
 *   `holderIdentity` (`<hostname>_<uuid>`; a pod's hostname is its name), then
 *   - `--via port-forward` (default): open one port-forward connection to the pod's secure port
 *     through the API server (src/kube/portforward.ts, RBAC `create`+`get` on `pods/portforward`)
 *     and send the CALLER's bearer token over TLS inside it, so the controller reviews the caller
 *     (`get` on `/debug/state`); the certificate is checked as for `--endpoint`, against the pod
 *     name or `--tls-server-name`;
 *   - `--via proxy`: fetch `/api/v1/namespaces/<ns>/pods/https:<pod>:<port>/proxy/debug/state`
 *     (RBAC: `get` on `pods/proxy`). The API server does not pass the caller's credentials on to
 *     the pod, so the controller answers 401 unless `/debug/state` is in its
 *     `--authorization-always-allow-paths` (docs/secure-serving.md).
 *
 * Not upstream: kube-controller-manager has no such endpoint or command.
 */
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFile } from 'node:fs/promises';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';
import { describeError, isNotFound, type KubeClients } from '../kube/client.js';
import { openPodPortStream } from '../kube/portforward.js';
import { toLease } from '../kube/objects.js';
import { asDebugState, leaderPodName, type DebugState, type StateSource } from '../explain/state.js';
import { DEFAULT_SECURE_PORT, FlagError } from './flags.js';

/** Where the inspection commands get the controller's state from. */
export interface EndpointOptions {
  /** Base URL of the controller: `https://127.0.0.1:10267` (secure port) or `http://…` (plain port); when set, the cluster is not asked. */
  endpoint?: string | undefined;
  /** kubeconfig path; undefined: in-cluster config or `$KUBECONFIG` / `~/.kube/config`. */
  kubeconfig?: string | undefined;
  /** Namespace of the leader-election Lease and of the controller's pods. */
  namespace: string;
  /** Name of the leader-election Lease. */
  lease: string;
  /** The controller's secure port (`--secure-port`), for the pod proxy. */
  port: number;
  /** `--token`: bearer token for an `https:` `--endpoint`; default: the kubeconfig's token, if it has one. */
  token?: string | undefined;
  /** `--insecure-skip-tls-verify`: accept any certificate from an `https:` `--endpoint` (the self-signed default). */
  insecureSkipTlsVerify?: boolean | undefined;
  /** `--certificate-authority`: PEM file of the CA that signed the `--endpoint`'s certificate. */
  certificateAuthority?: string | undefined;
  /** `--via`: how to reach the leader pod without `--endpoint` (default `port-forward`). */
  via?: 'port-forward' | 'proxy' | undefined;
  /** `--tls-server-name`: the name the certificate must carry over a port-forward (default: the pod name). */
  tlsServerName?: string | undefined;
}

/** Namespace the shipped manifests (manifests/) install the controller and its Lease into. */
export const DEFAULT_CONTROLLER_NAMESPACE = 'node-lifecycle-controller';
/** Default Lease name (the controller's `--leader-elect-resource-name` default). */
export const DEFAULT_LEASE_NAME = 'node-lifecycle-controller';
/** Default port of the controller pods (the controller's `--secure-port` default, 10267; HTTPS). */
export const DEFAULT_METRICS_PORT = DEFAULT_SECURE_PORT;

/** yargs option definitions shared by `status` and `explain`. */
export const ENDPOINT_YARGS_OPTIONS = {
  endpoint: {
    type: 'string',
    describe: "base URL of a controller: its secure port, e.g. https://127.0.0.1:10267 through kubectl port-forward, or its plain port (--metrics-bind-address) over http (skips the Lease lookup)",
  },
  token: { type: 'string', describe: 'bearer token sent to the controller (default: the kubeconfig\'s token, exec plugin included); needs get on /debug/state' },
  'insecure-skip-tls-verify': { type: 'boolean', describe: "don't check the controller's certificate (its default one is self-signed)" },
  'certificate-authority': { type: 'string', describe: "CA file to check the controller's certificate" },
  'tls-server-name': { type: 'string', describe: "name the controller's certificate must carry (default: the leader pod's name over a port-forward, the URL's host with --endpoint)" },
  via: {
    type: 'string',
    choices: ['port-forward', 'proxy'],
    default: 'port-forward',
    describe: "without --endpoint: port-forward to the leader pod and send your token (needs pods/portforward), or the API server's pod proxy (works only if /debug/state is in the controller's --authorization-always-allow-paths)",
  },
  kubeconfig: { type: 'string', describe: 'kubeconfig file (default: in-cluster config, $KUBECONFIG or ~/.kube/config)' },
  namespace: {
    type: 'string',
    alias: ['n', 'leader-elect-resource-namespace'],
    default: DEFAULT_CONTROLLER_NAMESPACE,
    describe: "namespace of the controller's leader-election Lease and pods (the manifests' namespace)",
  },
  lease: { type: 'string', alias: ['leader-elect-resource-name'], default: DEFAULT_LEASE_NAME, describe: 'name of the leader-election Lease' },
  port: { type: 'number', default: DEFAULT_METRICS_PORT, describe: "the controller pods' secure port (--secure-port), reached through the API server" },
  output: { type: 'string', alias: 'o', choices: ['table', 'json'], default: 'table', describe: 'output format' },
} as const;

/** A raw HTTP response. */
interface RawResponse {
  status: number;
  body: string;
}

/** Request options of {@link rawGet}: TLS material, headers, and `createConnection` for a tunnel. */
type RawGetOptions = RequestOptions & Record<string, unknown>;

/** GET `url` with node:http(s); `extra` carries TLS material and headers. Rejects on network errors and after `timeoutMs`. */
function rawGet(url: URL, extra: RawGetOptions, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { ...extra, method: 'GET', headers: { Accept: 'application/json', ...(extra.headers as Record<string, string> | undefined) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer from ${url.origin} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * GET an API server path with the kubeconfig's credentials and TLS settings.
 * @param path absolute API path, e.g. `/api/v1/namespaces/ns/pods/https:p:10267/proxy/debug/state`.
 * @returns status code and body text (any status; the caller decides).
 * @throws {Error} on network errors, unreadable credentials or a 10 s timeout.
 */
export async function apiServerGet(kc: KubeConfig, path: string): Promise<RawResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const opts: RawGetOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const base = cluster.server.replace(/\/+$/, '');
  return rawGet(new URL(base + path), opts, 10_000);
}

/** The first line of an error body (API Status JSON or plain text), for messages. */
function bodyReason(body: string): string {
  try {
    const s = JSON.parse(body) as { message?: unknown };
    if (typeof s.message === 'string') return s.message;
  } catch {
    // not JSON
  }
  return body.trim().split('\n')[0]?.slice(0, 200) ?? '';
}

/** How a kubeconfig's current user authenticates, as far as the controller's secure port cares. */
export interface KubeconfigCredential {
  /** The bearer token (static, `tokenFile`, exec plugin or auth provider, as client-node resolves it), if any. */
  token?: string;
  /** The user's name in the kubeconfig (for messages). */
  user: string;
  /** True when the user has a client certificate (which cannot be passed through a tunnel or proxy). */
  clientCertificate: boolean;
}

/**
 * What the current user of `kc` would present: client-node's `applyToHTTPSOptions` runs exec
 * plugins and reads token files, so their tokens count as bearer tokens.
 * @returns the credential; `token` undefined when the user has none.
 * @throws {Error} when an exec plugin or auth provider fails (its message).
 */
export async function kubeconfigCredential(kc: KubeConfig): Promise<KubeconfigCredential> {
  const user = kc.getCurrentUser();
  const opts: RawGetOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const auth = (opts.headers as Record<string, unknown> | undefined)?.['Authorization'];
  const m = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return {
    ...(m?.[1] ? { token: m[1] } : {}),
    user: user?.name ?? '',
    clientCertificate: Boolean(user?.certData || user?.certFile || opts['cert']),
  };
}

/** The bearer token of the kubeconfig at `path` (default one when undefined), or undefined when it has none or cannot be loaded. */
async function kubeconfigToken(path: string | undefined): Promise<string | undefined> {
  try {
    const kc = new KubeConfig();
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
    return (await kubeconfigCredential(kc)).token;
  } catch {
    return undefined;
  }
}

/**
 * The one-line error for a caller with no bearer token to send (the controller's secure port
 * accepts only bearer tokens: docs/secure-serving.md difference 2).
 */
export function noTokenMessage(cred: KubeconfigCredential): string {
  const who = cred.clientCertificate ? `kubeconfig user "${cred.user}" authenticates with a client certificate, which cannot be passed on to the controller` : `kubeconfig user "${cred.user}" has no bearer token`;
  return (
    `${who}: pass --token (e.g. from \`kubectl create token\`; it needs get on /debug/state), or have an operator add /debug/state ` +
    'to the controller\'s --authorization-always-allow-paths (restrict the port with a NetworkPolicy) and use --via proxy'
  );
}

/**
 * TLS options for the controller's secure port, and a sentence saying what they verify.
 * @param serverName the name the certificate must carry (`servername`, also sent as SNI).
 * @returns node:tls options (`rejectUnauthorized`, `ca` when a CA file is given) and the note.
 * @throws {Error} when `--certificate-authority` cannot be read.
 */
export async function controllerTlsOptions(
  opts: Pick<EndpointOptions, 'insecureSkipTlsVerify' | 'certificateAuthority'>,
  serverName: string | undefined,
): Promise<{ tls: ConnectionOptions; note: string }> {
  const tls: ConnectionOptions = { rejectUnauthorized: opts.insecureSkipTlsVerify !== true };
  if (serverName !== undefined) tls.servername = serverName;
  if (opts.certificateAuthority) {
    try {
      tls.ca = await readFile(opts.certificateAuthority, 'utf8');
    } catch (err) {
      throw new Error(`--certificate-authority: cannot read "${opts.certificateAuthority}": ${describeError(err)}`, { cause: err });
    }
  }
  return { tls, note: tlsVerificationNote(opts, serverName) };
}

/** What a TLS check with these options establishes, in one sentence (shown by `status` and in docs/secure-serving.md). */
export function tlsVerificationNote(opts: Pick<EndpointOptions, 'insecureSkipTlsVerify' | 'certificateAuthority'>, serverName: string | undefined): string {
  const name = serverName === undefined ? 'the host name' : `"${serverName}"`;
  if (opts.insecureSkipTlsVerify === true) return "certificate NOT verified (--insecure-skip-tls-verify): your token goes to whatever answers on the pod's port";
  if (opts.certificateAuthority) return `certificate verified against ${opts.certificateAuthority} for ${name}`;
  return `certificate verified against the system CAs for ${name}`;
}

/** Whether an error text is a certificate failure (the default certificate is self-signed). */
function isCertificateError(text: string): boolean {
  return /certificate|self[- ]signed|altnames|Hostname\/IP does not match/i.test(text);
}

const SELF_SIGNED_HINT =
  " (the controller's default certificate is self-signed: --certificate-authority with the CA of its --tls-cert-file, or --insecure-skip-tls-verify)";

/** What to add to a refusal from the controller's secure port. */
function refusalHint(status: number, viaProxy: boolean): string {
  if (status !== 401 && status !== 403) return '';
  if (viaProxy) {
    return (
      ' (the API server\'s pod proxy does not pass your credentials on: use the default --via port-forward, or --endpoint ' +
      'https://127.0.0.1:PORT after kubectl port-forward, or add /debug/state to the controller\'s --authorization-always-allow-paths)'
    );
  }
  return status === 401 ? ' (pass --token, or use a kubeconfig whose user has a token)' : ' (your user needs get on the non-resource URL /debug/state)';
}

/**
 * The leader's pod: the Lease's holder identity without its `_<uuid>`.
 * @returns the pod name.
 * @throws {Error} (one line) when the Lease is missing, unreadable or has no holder.
 */
export async function findLeaderPod(clients: Pick<KubeClients, 'coordination'>, namespace: string, lease: string): Promise<string> {
  let holder: string | undefined;
  try {
    const raw = await clients.coordination.readNamespacedLease({ name: lease, namespace });
    holder = toLease(raw)?.holderIdentity;
  } catch (err) {
    if (isNotFound(err)) {
      throw new Error(`Lease ${namespace}/${lease} not found: is the controller running with --leader-elect there? (set --namespace/--lease, or use --endpoint)`, {
        cause: err,
      });
    }
    throw new Error(`cannot read Lease ${namespace}/${lease}: ${describeError(err)}`, { cause: err });
  }
  const pod = leaderPodName(holder ?? '');
  if (!pod) throw new Error(`Lease ${namespace}/${lease} has no holder (holderIdentity "${holder ?? ''}"): no leader right now`);
  return pod;
}

/** Opens a connection to a pod's port; {@link openPodPortStream} unless a test injects another. */
export type PodStreamOpener = (kc: KubeConfig, namespace: string, pod: string, port: number) => Promise<Duplex>;

/**
 * GET `/debug/state` from the leader pod through a port-forward, with the caller's token over TLS.
 * @returns the state and its source (`port-forward`).
 * @throws {Error} (one line): no token (see {@link noTokenMessage}); port-forward refused; TLS
 *   failure (with what to pass); the controller's 401/403 (with what is missing).
 */
async function fetchViaPortForward(opts: EndpointOptions, kc: KubeConfig, pod: string, open: PodStreamOpener): Promise<{ state: DebugState; source: StateSource }> {
  let token = opts.token;
  if (!token) {
    const cred = await kubeconfigCredential(kc).catch((err: unknown) => {
      throw new Error(`cannot get a token from the kubeconfig: ${describeError(err)}`, { cause: err });
    });
    if (!cred.token) throw new Error(noTokenMessage(cred));
    token = cred.token;
  }
  const serverName = opts.tlsServerName ?? pod;
  const { tls, note } = await controllerTlsOptions(opts, serverName);
  const stream = await open(kc, opts.namespace, pod, opts.port);
  const url = new URL(`https://${serverName}:${opts.port}/debug/state`);
  const where = `leader pod ${opts.namespace}/${pod} (port ${opts.port}) via port-forward`;
  let res: RawResponse;
  try {
    // The tunnel is the socket: no DNS, no local port; the token travels only inside TLS.
    res = await rawGet(url, { headers: { Authorization: `Bearer ${token}` }, createConnection: () => tlsConnect({ ...tls, socket: stream }) }, 10_000);
  } catch (err) {
    const text = describeError(err);
    throw new Error(`${where}: ${text}${isCertificateError(text) ? SELF_SIGNED_HINT : ''}`, { cause: err });
  } finally {
    stream.destroy();
  }
  if (res.status !== 200) throw new Error(`${where}: HTTP ${res.status}: ${bodyReason(res.body)}${refusalHint(res.status, false)}`);
  return {
    state: asDebugState(parseJson(res.body, where)),
    source: { kind: 'port-forward', url: url.href, pod: { namespace: opts.namespace, name: pod }, tls: note },
  };
}

/**
 * Fetches `/debug/state` from a controller.
 * @param opts where to look (see {@link EndpointOptions}).
 * @param clients API clients; required unless `opts.endpoint` is set.
 * @param open how to open a port-forward connection (tests inject one; default {@link openPodPortStream}).
 * @returns the state and where it came from.
 * @throws {Error} with a one-line reason: endpoint unreachable or not a controller; Lease missing
 *   or without holder; no token for a port-forward; leader pod not reachable (with the HTTP status).
 */
export async function fetchDebugState(
  opts: EndpointOptions,
  clients?: KubeClients,
  open: PodStreamOpener = openPodPortStream,
): Promise<{ state: DebugState; source: StateSource }> {
  if (opts.endpoint) {
    const url = new URL('/debug/state', opts.endpoint);
    let extra: RawGetOptions = {};
    if (url.protocol === 'https:') {
      // Tokens go only over TLS, and only to the endpoint the caller named.
      const token = opts.token ?? (await kubeconfigToken(opts.kubeconfig));
      extra = { ...(await controllerTlsOptions(opts, opts.tlsServerName)).tls };
      if (token) extra.headers = { Authorization: `Bearer ${token}` };
    }
    let res: RawResponse;
    try {
      res = await rawGet(url, extra, 10_000);
    } catch (err) {
      const tlsHint = isCertificateError(describeError(err)) ? SELF_SIGNED_HINT : '';
      throw new Error(`cannot reach ${url.href}: ${describeError(err)}${tlsHint}`, { cause: err });
    }
    if (res.status !== 200) throw new Error(`${url.href} answered HTTP ${res.status}: ${bodyReason(res.body)}${refusalHint(res.status, false)}`);
    return { state: asDebugState(parseJson(res.body, url.href)), source: { kind: 'endpoint', url: url.href } };
  }
  if (!clients) throw new Error('no --endpoint and no cluster connection');
  const pod = await findLeaderPod(clients, opts.namespace, opts.lease);
  if (opts.via !== 'proxy') return fetchViaPortForward(opts, clients.kubeConfig, pod, open);
  // https: the controller pods serve only their secure port (the API server does not check its certificate).
  const path = `/api/v1/namespaces/${encodeURIComponent(opts.namespace)}/pods/https:${encodeURIComponent(pod)}:${opts.port}/proxy/debug/state`;
  let res: RawResponse;
  try {
    res = await apiServerGet(clients.kubeConfig, path);
  } catch (err) {
    throw new Error(`cannot reach the API server for ${path}: ${describeError(err)}`, { cause: err });
  }
  if (res.status !== 200) {
    // A refusal in the API server's own Status JSON is about the caller's pods/proxy right; plain text is the controller's.
    const fromController = !/^\s*\{/.test(res.body);
    throw new Error(
      `leader pod ${opts.namespace}/${pod} (port ${opts.port}) via the API server proxy: HTTP ${res.status}: ${bodyReason(res.body)}${fromController ? refusalHint(res.status, true) : ''}`,
    );
  }
  return {
    state: asDebugState(parseJson(res.body, path)),
    source: { kind: 'pod-proxy', url: path, pod: { namespace: opts.namespace, name: pod } },
  };
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${where} did not return JSON (starts with ${JSON.stringify(text.slice(0, 60))})`);
  }
}

/** Throws the {@link FlagError} for a bad `--endpoint`. */
export function checkEndpoint(endpoint: string | undefined): void {
  if (endpoint === undefined) return;
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    throw new FlagError(`--endpoint: "${endpoint}" is not a URL (e.g. https://127.0.0.1:10267)`, 'endpoint');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new FlagError(`--endpoint: "${endpoint}" must be http:// or https://`, 'endpoint');
}

// ---------------------------------------------------------------------------------------------
// Table rendering (pure).
// ---------------------------------------------------------------------------------------------

/** Length of a string as printed: ANSI colour sequences take no room. */
export function visibleLength(s: string): number {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, '').length;
}

/**
 * Renders rows as a left-aligned table in kubectl's style: upper-case headers, columns separated
 * by three spaces, no borders, trailing spaces trimmed. Cells may contain ANSI colours.
 * @param header column titles; @param rows cells (missing cells are blank).
 * @returns the lines (header first), each without a newline.
 */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ''))));
  const line = (cells: readonly string[]): string =>
    header
      .map((_, i) => {
        const c = cells[i] ?? '';
        return i === header.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - visibleLength(c));
      })
      .join('   ')
      .replace(/\s+$/, '');
  return [line(header.map((h) => h.toUpperCase())), ...rows.map(line)];
}
