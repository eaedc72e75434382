/**
 * The one place that loads a KubeConfig and builds client-node API objects, plus helpers to read
 * `ApiException`s. Everything else receives a {@link KubeClients} bundle (injected, so tests can
 * point it at the local control plane).
 *
 * Library: `@kubernetes/client-node` 2.x (see docs/client-node.md for why 2.x rather than 1.4.x).
 */
import { createHash } from 'node:crypto';
import type { AgentOptions } from 'node:https';
import { fetch } from 'undici';
import {
  ApiException,
  AppsV1Api,
  HttpMethod,
  RequestContext,
  CoordinationV1Api,
  CoreV1Api,
  EventsV1Api,
  KubeConfig,
  StorageV1Api,
} from '@kubernetes/client-node';

/** Typed API clients sharing one KubeConfig. */
export interface KubeClients {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  coordination: CoordinationV1Api;
  storage: StorageV1Api;
  events: EventsV1Api;
}

/**
 * Loads a KubeConfig: the file at `kubeconfigPath` when given, else in-cluster config when
 * `KUBERNETES_SERVICE_HOST` is set, else client-node's default chain (`$KUBECONFIG`, `~/.kube/config`).
 * @throws {Error} when the file cannot be read or parsed, or in-cluster files are missing.
 */
export function loadKubeConfig(kubeconfigPath?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else if (process.env['KUBERNETES_SERVICE_HOST']) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('kubeconfig has no current cluster');
  return kc;
}

/**
 * Workaround for client-node 2.0.1: `KubeConfig.createDispatcher` builds a new undici `Agent` for
 * every request and every watch, so no TLS connection is ever reused (each call pays a handshake;
 * measured: open FDs 35 → 232 after 200 calls, reclaimed ~6 s later). The 2.x fix for #2893 caches
 * the `https.Agent` only. We memoise the dispatcher per cluster server and TLS material, so a
 * rotated client certificate still gets a new one. Remove once client-node caches it itself.
 * Idempotent; {@link makeClients} applies it, so every client in the project gets it. Never throws.
 * @param kc the KubeConfig to patch in place.
 */
export function reuseConnections(kc: KubeConfig): void {
  if (patchedConfigs.has(kc)) return;
  patchedConfigs.add(kc);
  type CreateDispatcher = (cluster: unknown, agentOptions: AgentOptions) => unknown;
  const target = kc as unknown as { createDispatcher?: CreateDispatcher };
  const original = target.createDispatcher;
  if (typeof original !== 'function') return; // a future client-node without it: nothing to patch
  const cache = new Map<string, unknown>();
  target.createDispatcher = (cluster, agentOptions) => {
    const h = createHash('sha256');
    h.update(String((cluster as { server?: unknown } | null)?.server ?? ''));
    for (const v of [agentOptions.ca, agentOptions.cert, agentOptions.key, agentOptions.pfx, agentOptions.passphrase, agentOptions.servername]) {
      h.update('\0');
      if (v !== undefined) h.update(Array.isArray(v) ? v.map(String).join('\0') : typeof v === 'string' || Buffer.isBuffer(v) ? v : String(v));
    }
    h.update(String(agentOptions.rejectUnauthorized));
    const key = h.digest('hex');
    let dispatcher = cache.get(key);
    if (dispatcher === undefined) {
      dispatcher = original.call(kc, cluster, agentOptions);
      if (dispatcher !== undefined) {
        if (cache.size >= 8) cache.clear(); // rotated credentials: drop the old entries
        cache.set(key, dispatcher);
      }
    }
    return dispatcher;
  };
}

const patchedConfigs = new WeakSet<KubeConfig>();

/** Builds the typed API clients for a KubeConfig, with connection reuse ({@link reuseConnections}). Never throws. */
export function makeClients(kubeConfig: KubeConfig): KubeClients {
  reuseConnections(kubeConfig);
  return {
    kubeConfig,
    core: kubeConfig.makeApiClient(CoreV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    coordination: kubeConfig.makeApiClient(CoordinationV1Api),
    storage: kubeConfig.makeApiClient(StorageV1Api),
    events: kubeConfig.makeApiClient(EventsV1Api),
  };
}

/** HTTP status of an API error, or `undefined` when `err` is not an `ApiException` (e.g. a network error). */
export function apiStatusCode(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** True for 404 Not Found. */
export const isNotFound = (err: unknown): boolean => apiStatusCode(err) === 404;
/** True for 409 Conflict (resourceVersion or UID precondition failed, or AlreadyExists). */
export const isConflict = (err: unknown): boolean => apiStatusCode(err) === 409;
/** True for 403 Forbidden. */
export const isForbidden = (err: unknown): boolean => apiStatusCode(err) === 403;

/**
 * The `Status.reason` of an API error (`"Conflict"`, `"AlreadyExists"`, `"NotFound"`, …), parsed from
 * the raw body that client-node leaves as a string (typescript-notes.md §1.2).
 */
export function apiStatusReason(err: unknown): string | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const body: unknown = err.body;
  try {
    const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    const reason = (parsed as { reason?: unknown } | null)?.reason;
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}

/** A short one-line description of any error, for logs. */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) {
    const reason = apiStatusReason(err);
    return `HTTP ${err.code}${reason ? ` ${reason}` : ''}`;
  }
  if (err instanceof Error) return err.message.split('\n')[0] ?? err.name;
  return String(err);
}

/**
 * GETs `path` from the current cluster and returns the parsed JSON, with client-node's own
 * authentication, TLS and (reused) connection. Used for informer lists: client-node's typed list
 * calls deserialise every item into generated model classes (Date objects and all), which for
 * 30,000 pods costs seconds of CPU that the slim converters then throw away. Watch events arrive
 * as plain JSON already (client-node's `Watch` does the same fetch), so lists and watches now feed
 * the converters the same shape.
 * @param query query parameters; `undefined` and `""` values are left out.
 * @param signal aborts the request.
 * @throws {ApiException} with the HTTP status for a non-2xx answer (body as text, like client-node's);
 *   network errors and aborts as thrown by fetch.
 */
export async function getJson(
  kc: KubeConfig,
  path: string,
  query: Readonly<Record<string, string | number | undefined>>,
  signal?: AbortSignal,
): Promise<unknown> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/$/, '') + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const ctx = new RequestContext(url.toString(), HttpMethod.GET);
  await kc.applySecurityAuthentication(ctx);
  const dispatcher = ctx.getDispatcher();
  const res = await fetch(url, { headers: ctx.getHeaders(), ...(dispatcher ? { dispatcher } : {}), ...(signal ? { signal } : {}) });
  const text = await res.text();
  if (!res.ok) {
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => (headers[k] = v));
    throw new ApiException<string>(res.status, `HTTP-Code: ${res.status}\nBody: ${text.slice(0, 500)}`, text, headers);
  }
  return JSON.parse(text) as unknown;
}
