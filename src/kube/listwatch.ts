/**
 * The list and watch requests an informer (src/kube/informer.ts) makes, and how it reads their answers: the
 * paginated list function and the streaming watch it is given, what one watch stream came to
 * ({@link WatchResult}), the watch-list protocol (`sendInitialEvents`, the initial-events-end
 * bookmark, when a server refuses it) and the raw-object readers shared by the list and watch paths.
 *
 * Mirrors client-go `tools/cache/listwatch.go` (`ListerWatcher`), the watch-list parts of
 * `reflector.go` and `features/envvar.go`. Pure: no state, no I/O of its own.
 */
import { apiStatusCode, type WatchStarter } from './client.js';

/** Options passed to a {@link ListPageFn} for one page. */
export interface ListPageOptions {
  /** Page size; `undefined` means "no limit" (the fallback after an expired continue token). */
  limit?: number;
  /** Continue token from the previous page. */
  _continue?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Aborted when the informer stops or restarts; pass it to the HTTP call. */
  signal: AbortSignal;
}

/** One page of a list response (a client-node `V1NodeList` etc. fits). */
export interface ListPage {
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
  items: readonly unknown[];
}

/** Fetches one page of the collection. Built from the typed API in src/kube/informerfactory.ts. */
export type ListPageFn = (opts: ListPageOptions) => Promise<ListPage>;

/**
 * The streaming watch, shaped like client-node's `Watch.watch`: `callback(type, object)` per event,
 * `done(err)` exactly once when the stream ends (`null`/`undefined` for a clean close).
 * Resolves with a controller that aborts the stream. Declared in src/kube/client.ts, whose
 * `instrumentWatch` wraps one for the request metrics.
 */
export type WatchLike = WatchStarter;

/** What one watch stream came to (the list/watch loop decides from it whether to relist, back off or fall back). */
export interface WatchResult {
  /** The error that ended the stream (`undefined` for a clean close or a timeout). */
  err: unknown;
  /** The server said our resourceVersion is too old (410 Gone). */
  gone: boolean;
  /** Events (including bookmarks) received. */
  events: number;
  /** How long the stream lasted, ms. */
  durationMs: number;
  /** We ended it ourselves (stop, watchdog, relist timer). */
  cancelled: boolean;
  /** A watch-list stream delivered its `k8s.io/initial-events-end` bookmark (always false for a plain watch). */
  initialEventsEnded: boolean;
}

/** The annotation of the bookmark that ends a watch-list's initial events (metav1.InitialEventsAnnotationKey). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** A JSON object as read from the wire. */
export type Json = Record<string, unknown>;

/** `v` as a JSON object, or `undefined` when it is not one. */
export function asObj(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null ? (v as Json) : undefined;
}

/** `metadata.resourceVersion` of a raw or typed object, or `""`. */
export function rawResourceVersion(raw: unknown): string {
  const rv = asObj(asObj(raw)?.['metadata'])?.['resourceVersion'];
  return typeof rv === 'string' ? rv : '';
}

/** `{namespace, name}` of a raw or typed object, for logs and the malformed-delete fallback. */
export function rawMeta(raw: unknown): { namespace?: string; name?: string } {
  const m = asObj(asObj(raw)?.['metadata']);
  const out: { namespace?: string; name?: string } = {};
  if (typeof m?.['namespace'] === 'string' && m['namespace']) out.namespace = m['namespace'];
  if (typeof m?.['name'] === 'string') out.name = m['name'];
  return out;
}

/** HTTP status of a watch or list error: `statusCode` (client-node Watch, watch ERROR events) or `code` (ApiException). */
export function httpStatus(err: unknown): number | undefined {
  const sc = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof sc === 'number' ? sc : apiStatusCode(err);
}

/**
 * client-go's `WatchListClient` feature (on by default since 1.35), switched off as upstream
 * binaries without their own gate set do it (client-go features/envvar.go): the environment
 * variable `KUBE_FEATURE_WatchListClient=false`.
 * @returns false only when that variable holds one of Go's `strconv.ParseBool` false values.
 */
export function watchListClientEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return !['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(env['KUBE_FEATURE_WatchListClient'] ?? '');
}

/** True for the `TimeoutError` that ends a watch at client-node's inactivity timeout (not a failure). */
export function isTimeout(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === 'TimeoutError';
}

/**
 * Whether a watch-list stream that ended before its initial-events-end bookmark means "this server
 * does not serve watch-lists" (fall back to list+watch now) rather than a transient failure (back
 * off, then try the watch-list again). A server without the WatchList feature answers 4xx: 1.20–1.26
 * forbid `resourceVersionMatch` on a watch and 1.27–1.33 with the gate off forbid
 * `sendInitialEvents`, both with 422 Invalid. A stream that closes cleanly without a single event
 * counts too (reflector.go `VeryShortWatchError`, which is not retriable and so falls back).
 * Network errors, timeouts, 410, 429 and 5xx are transient.
 */
export function refusesWatchList(w: WatchResult): boolean {
  if (w.cancelled || w.gone) return false;
  if (w.err === undefined || w.err === null) return w.events === 0;
  const status = httpStatus(w.err);
  return status !== undefined && status >= 400 && status < 500 && status !== 410 && status !== 429;
}

/**
 * Compares two resourceVersions as apimachinery does: positive decimal integers without leading
 * zeros; a shorter one is smaller, equal lengths compare lexically.
 * @returns -1, 0 or 1 (a < b, a == b, a > b), or `undefined` when either is not well formed. Never throws.
 * Mirrors `resourceversion.CompareResourceVersion` (k8s.io/apimachinery/pkg/util/resourceversion);
 * src/nodelifecycle/leasecircuitbreaker.ts has the same for its own layer.
 */
export function compareResourceVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  const wellFormed = (s: string): boolean => /^[1-9][0-9]*$/.test(s);
  if (!wellFormed(a) || !wellFormed(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/**
 * The `namespace/name` or `name` cache key of a raw object (matches the keyOf of every factory),
 * for a deletion or a malformed object the converter rejected; `undefined` without a name.
 */
export function rawKey(raw: unknown): string | undefined {
  const m = rawMeta(raw);
  if (m.name === undefined) return undefined;
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
}
