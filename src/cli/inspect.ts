/**
 * Shared plumbing of the inspection commands (`status`, `explain`): where the controller's
 * `/debug/state` comes from, how it is fetched, and the small text-formatting helpers both
 * commands (and the demo's live view) use.
 *
 * Two ways to reach a controller:
 * - `--endpoint URL`: the controller directly: `https://127.0.0.1:10267` (its secure port, e.g.
 *   through `kubectl port-forward`; a bearer token from `--token` or the kubeconfig, TLS checked
 *   unless `--insecure-skip-tls-verify`, or against `--certificate-authority`) or
 *   `http://127.0.0.1:PORT` (its plain port, `--metrics-bind-address`: a local process, the demo);
 * - through the cluster: read the leader-election Lease (`--namespace`/`--lease`, the controller's
 *   `--leader-elect-resource-namespace`/`--leader-elect-resource-name`), take the pod name from its
 *   `holderIdentity` (`<hostname>_<uuid>`; a pod's hostname is its name) and fetch
 *   `/api/v1/namespaces/<ns>/pods/https:<pod>:<port>/proxy/debug/state` through the API server
 *   (RBAC: `get` on `pods/proxy` in that namespace). The API server does not pass the caller's
 *   credentials on to the pod, so the controller answers 401 unless `/debug/state` is in its
 *   `--authorization-always-allow-paths` (docs/secure-serving.md).
 *
 * Not upstream: kube-controller-manager has no such endpoint or command.
 */
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { describeError, isNotFound, type KubeClients } from '../kube/client.js';
import { toLease } from '../kube/objects.js';
import type { NodeLifecycleView } from '../nodelifecycle/controller.js';
import type { PodGCView } from '../podgc/controller.js';
import type { PendingPodDeletion } from '../tainteviction/controller.js';
import type { ForceDetachView } from '../volumes/controller.js';
import type { ShadowDebugState } from '../shadow/mode.js';
import { DEFAULT_SECURE_PORT, FlagError } from './flags.js';

/**
 * The JSON document `/debug/state` serves (built in src/cli/run.ts `startController`). Times are
 * epoch **milliseconds**. A controller that is switched off is absent.
 */
export interface DebugState {
  /** Identity of the process that answered (`hostname_uuid`). */
  identity: string;
  /** Identity of the current leader as that process sees it (its own identity with election off; '' when unknown). */
  leader: string;
  nodeLifecycle?: NodeLifecycleView;
  taintEviction?: PendingPodDeletion[];
  podGC?: PodGCView;
  forceDetach?: ForceDetachView;
  /** Present only on a `--dry-run` (shadow) process: its decisions (src/shadow/). */
  shadow?: ShadowDebugState;
  informers?: unknown[];
}

/**
 * Checks that a parsed JSON value looks like a {@link DebugState} (the fields the commands read).
 * @returns the same value, typed.
 * @throws {Error} naming the first missing or mistyped field.
 */
export function asDebugState(json: unknown): DebugState {
  const o = json as Record<string, unknown> | null;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error('/debug/state did not return a JSON object');
  if (typeof o['identity'] !== 'string') throw new Error('/debug/state has no "identity" string: is this a node-lifecycle-controller?');
  const nlc = o['nodeLifecycle'] as Record<string, unknown> | undefined;
  if (nlc !== undefined && (!Array.isArray(nlc['zones']) || !Array.isArray(nlc['nodes']))) {
    throw new Error('/debug/state "nodeLifecycle" lacks "zones" or "nodes"');
  }
  if (o['taintEviction'] !== undefined && !Array.isArray(o['taintEviction'])) throw new Error('/debug/state "taintEviction" is not a list');
  return { ...(o as unknown as DebugState), leader: typeof o['leader'] === 'string' ? o['leader'] : '' };
}

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
}

/** Where a {@link DebugState} came from. */
export interface StateSource {
  kind: 'endpoint' | 'pod-proxy';
  /** The URL fetched (for `pod-proxy`, the API server path). */
  url: string;
  /** The leader's pod, for `pod-proxy`. */
  pod?: { namespace: string; name: string };
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
  token: { type: 'string', describe: 'bearer token for an https --endpoint (default: the kubeconfig\'s token, if any); needs get on /debug/state' },
  'insecure-skip-tls-verify': { type: 'boolean', describe: "don't check the certificate of an https --endpoint (the controller's default one is self-signed)" },
  'certificate-authority': { type: 'string', describe: 'CA file to check the certificate of an https --endpoint' },
  kubeconfig: { type: 'string', describe: 'kubeconfig file (default: in-cluster config, $KUBECONFIG or ~/.kube/config)' },
  namespace: {
    type: 'string',
    alias: ['n', 'leader-elect-resource-namespace'],
    default: DEFAULT_CONTROLLER_NAMESPACE,
    describe: "namespace of the controller's leader-election Lease and pods (the manifests' namespace)",
  },
  lease: { type: 'string', alias: ['leader-elect-resource-name'], default: DEFAULT_LEASE_NAME, describe: 'name of the leader-election Lease' },
  port: { type: 'number', default: DEFAULT_METRICS_PORT, describe: "the controller pods' secure port (--secure-port), reached through the API server's pod proxy" },
  output: { type: 'string', alias: 'o', choices: ['table', 'json'], default: 'table', describe: 'output format' },
} as const;

/**
 * The pod name inside a leader-election holder identity `<hostname>_<uuid>` (a pod's hostname is
 * its name; neither a hostname nor a UUID contains `_`).
 * @returns the pod name, or undefined for an empty identity or one without `_`.
 * Mirrors the identity kube-controller-manager builds (`id + "_" + uuid.NewUUID()`).
 */
export function leaderPodName(holderIdentity: string): string | undefined {
  const i = holderIdentity.lastIndexOf('_');
  if (i <= 0) return undefined;
  return holderIdentity.slice(0, i);
}

/** A raw HTTP response. */
interface RawResponse {
  status: number;
  body: string;
}

/** GET `url` with node:http(s); `extra` carries TLS material and headers. Rejects on network errors and after `timeoutMs`. */
function rawGet(url: URL, extra: RequestOptions & Record<string, unknown>, timeoutMs: number): Promise<RawResponse> {
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
  const opts: RequestOptions & Record<string, unknown> = {};
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

/**
 * The bearer token of a kubeconfig's current user (static, file, exec or OIDC, as client-node
 * resolves it), or undefined when it has none (client certificates) or cannot be loaded.
 */
async function kubeconfigToken(path: string | undefined): Promise<string | undefined> {
  try {
    const kc = new KubeConfig();
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
    const opts: RequestOptions & Record<string, unknown> = {};
    await kc.applyToHTTPSOptions(opts);
    const auth = (opts.headers as Record<string, unknown> | undefined)?.['Authorization'];
    const m = typeof auth === 'string' ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
    return m?.[1];
  } catch {
    return undefined;
  }
}

/** What to add to a refusal from the controller's secure port. */
function refusalHint(status: number, viaProxy: boolean): string {
  if (status !== 401 && status !== 403) return '';
  if (viaProxy) {
    return (
      ' (the API server\'s pod proxy does not pass your credentials on: use `kubectl port-forward` to the pod and ' +
      '--endpoint https://127.0.0.1:PORT with your token, or add /debug/state to the controller\'s --authorization-always-allow-paths)'
    );
  }
  return status === 401 ? ' (pass --token, or use a kubeconfig whose user has a token)' : ' (your user needs get on the non-resource URL /debug/state)';
}

/**
 * Fetches `/debug/state` from a controller.
 * @param opts where to look (see {@link EndpointOptions}).
 * @param clients API clients; required unless `opts.endpoint` is set.
 * @returns the state and where it came from.
 * @throws {Error} with a one-line reason: endpoint unreachable or not a controller; Lease missing
 *   or without holder; leader pod not reachable through the API server (with the HTTP status).
 */
export async function fetchDebugState(opts: EndpointOptions, clients?: KubeClients): Promise<{ state: DebugState; source: StateSource }> {
  if (opts.endpoint) {
    const url = new URL('/debug/state', opts.endpoint);
    const extra: RequestOptions & Record<string, unknown> = {};
    if (url.protocol === 'https:') {
      // Tokens go only over TLS, and only to the endpoint the caller named.
      const token = opts.token ?? (await kubeconfigToken(opts.kubeconfig));
      if (token) extra.headers = { Authorization: `Bearer ${token}` };
      extra['rejectUnauthorized'] = opts.insecureSkipTlsVerify !== true;
      if (opts.certificateAuthority) extra['ca'] = await readFile(opts.certificateAuthority, 'utf8');
    }
    let res: RawResponse;
    try {
      res = await rawGet(url, extra, 10_000);
    } catch (err) {
      const tlsHint = /certificate|self[- ]signed/i.test(describeError(err)) ? ' (the controller\'s default certificate is self-signed: --insecure-skip-tls-verify or --certificate-authority)' : '';
      throw new Error(`cannot reach ${url.href}: ${describeError(err)}${tlsHint}`, { cause: err });
    }
    if (res.status !== 200) throw new Error(`${url.href} answered HTTP ${res.status}: ${bodyReason(res.body)}${refusalHint(res.status, false)}`);
    return { state: asDebugState(parseJson(res.body, url.href)), source: { kind: 'endpoint', url: url.href } };
  }
  if (!clients) throw new Error('no --endpoint and no cluster connection');
  let holder: string | undefined;
  try {
    const raw = await clients.coordination.readNamespacedLease({ name: opts.lease, namespace: opts.namespace });
    holder = toLease(raw)?.holderIdentity;
  } catch (err) {
    if (isNotFound(err)) {
      throw new Error(
        `Lease ${opts.namespace}/${opts.lease} not found: is the controller running with --leader-elect there? ` +
          '(set --namespace/--lease, or use --endpoint)',
        { cause: err },
      );
    }
    throw new Error(`cannot read Lease ${opts.namespace}/${opts.lease}: ${describeError(err)}`, { cause: err });
  }
  const pod = leaderPodName(holder ?? '');
  if (!pod) throw new Error(`Lease ${opts.namespace}/${opts.lease} has no holder (holderIdentity "${holder ?? ''}"): no leader right now`);
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
// Formatting helpers (pure).
// ---------------------------------------------------------------------------------------------

/**
 * A zone label as `view()` gives it (`"region:zone"` in quotes) without the quotes.
 * @returns e.g. `region-1:zone-a`; the label-less zone stays as its note.
 */
export function zoneName(zoneLabel: string): string {
  return /^".*"$/.test(zoneLabel) ? zoneLabel.slice(1, -1) : zoneLabel;
}

/**
 * Epoch milliseconds as RFC 3339 with milliseconds, e.g. `2026-01-02T03:04:05.678Z`.
 * @throws never (invalid input gives `invalid`).
 */
export function rfc3339(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? 'invalid' : d.toISOString();
}

/**
 * Seconds from `nowMs` to `atMs`, rounded to 0.1 s (negative when `atMs` is past).
 * @param atMs epoch ms; @param nowMs epoch ms.
 */
export function secondsFromNow(atMs: number, nowMs: number): number {
  return Math.round((atMs - nowMs) / 100) / 10;
}

/**
 * A duration in milliseconds for people: `850ms`, `12.3s`, `4m05s`, `2h03m`, `3d04h`.
 * Negative durations are formatted by magnitude.
 */
export function formatDuration(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)}ms`;
  if (a < 60_000) return `${(Math.floor(a / 100) / 10).toFixed(1)}s`;
  const s = Math.floor(a / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  const m = Math.floor(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
  const h = Math.floor(m / 60);
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/**
 * An ETA relative to now: `in 12.3s`, `now` (within 50 ms either side), `4.0s ago`.
 * @param atMs epoch ms; @param nowMs epoch ms.
 */
export function formatEta(atMs: number, nowMs: number): string {
  const d = atMs - nowMs;
  if (Math.abs(d) < 50) return 'now';
  return d > 0 ? `in ${formatDuration(d)}` : `${formatDuration(d)} ago`;
}

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

/** A rate in nodes per second without float noise: `0.1`, `1`, `0`. */
export function formatRate(r: number): string {
  return String(Math.round(r * 1000) / 1000);
}
