// Why this file is over 500 lines: every workaround client-node needs (a reused connection dispatcher, request timeouts, ApiException reading) is wrapped here, in the one module the library rule allows it.
/**
 * The one place that loads a KubeConfig and builds client-node API objects, plus helpers to read
 * `ApiException`s. Everything else receives a {@link KubeClients} bundle (injected, so tests can
 * point it at the local control plane).
 *
 * Library: `@kubernetes/client-node` 2.x (see docs/client-node.md for why 2.x rather than 1.4.x).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { AgentOptions } from 'node:https';
import { Agent as UndiciAgent, fetch, request as undiciRequest, type Dispatcher } from 'undici';
import { STATUS_CODES } from 'node:http';
import {
  ApiException,
  AppsV1Api,
  AuthenticationV1Api,
  AuthorizationV1Api,
  HttpMethod,
  Observable,
  RequestContext,
  ResponseContext,
  CoordinationV1Api,
  CoreV1Api,
  createConfiguration,
  EventsV1Api,
  KubeConfig,
  ServerConfiguration,
  type Cluster,
  setHeaderMiddleware,
  StorageV1Api,
  type Configuration,
  type HttpLibrary,
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
 * @param kubeconfigPath the file a flag named, or undefined/empty for the defaults.
 * @param flag the flag that named it, without dashes (`kubeconfig`, `authentication-kubeconfig`), for
 *   the message.
 * @throws {Error} with one line that names where the file came from (`--kubeconfig: cannot read
 *   "/x": no such file or directory`, or `$KUBECONFIG: …`) when it cannot be read or parsed, or
 *   when in-cluster files are missing.
 */
export function loadKubeConfig(kubeconfigPath?: string, flag = 'kubeconfig'): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) {
    try {
      kc.loadFromFile(kubeconfigPath);
    } catch (err) {
      throw new Error(`--${flag}: cannot read "${kubeconfigPath}": ${fileErrorText(err)}`, { cause: err });
    }
  } else if (process.env['KUBERNETES_SERVICE_HOST']) {
    kc.loadFromCluster();
  } else {
    const fromEnv = process.env['KUBECONFIG'];
    try {
      kc.loadFromDefault();
    } catch (err) {
      throw new Error(`${fromEnv ? `$KUBECONFIG (${fromEnv})` : 'the default kubeconfig (~/.kube/config)'}: ${fileErrorText(err)}`, { cause: err });
    }
  }
  if (!kc.getCurrentCluster()) throw new Error(kubeconfigPath ? `--${flag}: "${kubeconfigPath}" has no current cluster` : 'kubeconfig has no current cluster');
  return kc;
}

/**
 * One line for a file error: `no such file or directory` for Node's `ENOENT: no such file or
 * directory, open '/x'`, the first line of a YAML parse error.
 */
function fileErrorText(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.trim() ?? '';
  return /^E[A-Z]+: (.*?)(?:, \w+ '.*')?$/.exec(text)?.[1] ?? text;
}

/**
 * HTTP/2 flow-control windows of the connections to the API server, bytes: per stream and per
 * connection, as client-go's transport has them (golang.org/x/net v0.57.0, the version
 * k8s.io/kubernetes v1.37.2 builds with, `http2/transport.go` `transportDefaultStreamFlow` and
 * `transportDefaultConnFlow`; k8s.io/apimachinery `SetTransportDefaults` keeps them). undici 8's
 * defaults are 256 KiB and 512 KiB, and the informers' watch streams share one connection.
 *
 * Why (issue 29, the start-up): Node tells the server it may send more only while the stream is
 * read; while this thread decodes a burst of the Pods watch-list, undici's body buffer fills, the
 * stream pauses, and the API server could run only 256 KiB ahead before it stalled, so on two
 * cores the server and this process took turns instead of working at once (the start-up profile's
 * idle gaps during the stream). With client-go's windows the server keeps sending while we decode.
 * Memory: unread data is bounded by the stream window, 4 MiB per watch, as in client-go.
 */
export const HTTP2_WINDOWS = Object.freeze({ streamBytes: 4 << 20, connectionBytes: 1 << 30 });

/**
 * Workaround for client-node 2.0.1: `KubeConfig.createDispatcher` builds a new undici `Agent` for
 * every request and every watch, so no TLS connection is ever reused (each call pays a handshake;
 * measured: open FDs 35 → 232 after 200 calls, reclaimed ~6 s later). The 2.x fix for #2893 caches
 * the `https.Agent` only. We memoise the dispatcher per cluster server and TLS material, so a
 * rotated client certificate still gets a new one. Remove once client-node caches it itself.
 *
 * A direct connection (client-node's `agent` dispatcher: no proxy) is built here as client-node
 * builds it (`new Agent({ connect })` from its public `createDispatcherOptions`), plus
 * {@link HTTP2_WINDOWS}, which client-node 2.0.1 has no option for. Proxied and SOCKS connections
 * are client-node's own, unchanged.
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
      const options = kc.createDispatcherOptions(cluster as Cluster | null, agentOptions);
      dispatcher =
        options.type === 'agent'
          ? new UndiciAgent({ connect: options.connect, initialWindowSize: HTTP2_WINDOWS.streamBytes, connectionWindowSize: HTTP2_WINDOWS.connectionBytes })
          : original.call(kc, cluster, agentOptions);
      if (dispatcher !== undefined) {
        if (cache.size >= 8) cache.clear(); // rotated credentials: drop the old entries
        cache.set(key, dispatcher);
      }
    }
    return dispatcher;
  };
}

const patchedConfigs = new WeakSet<KubeConfig>();

/**
 * Default timeout of one write request (POST, PUT, PATCH, DELETE), **milliseconds**.
 *
 * client-go's `rest.Config.Timeout` is 0 for kube-controller-manager's controller clients: a request
 * waits for the API server, which ends a non-long-running request itself after `--request-timeout`
 * (60 s by default) with a 504. undici, which client-node uses, waits up to 300 s for the headers,
 * so one hung write would hold one of a controller's in-flight write slots (run.ts
 * `WRITES_IN_FLIGHT_PER_CONTROLLER`) for five minutes. 30 s is half the server's own limit: a
 * healthy API server answers a single-object write in milliseconds, and under APF pressure it
 * answers 429 at once rather than queueing a write for 30 s. A timed-out write rejects with
 * {@link RequestTimeoutError}: an error like any other (retried by the caller), never a success
 * and never "gone" (only a 404 proves that).
 */
export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;
/**
 * Default timeout of one read request (GET), **milliseconds**: kube-apiserver's default
 * `--request-timeout` (60 s), past which the server has given up on it anyway.
 */
export const DEFAULT_READ_TIMEOUT_MS = 60_000;

/** Per-request timeouts of {@link makeClients}, **milliseconds**; 0 means none. */
export interface RequestTimeouts {
  /** POST, PUT, PATCH, DELETE. Default {@link DEFAULT_WRITE_TIMEOUT_MS}. */
  writeTimeoutMs?: number;
  /** GET and HEAD. Default {@link DEFAULT_READ_TIMEOUT_MS}. */
  readTimeoutMs?: number;
}

/**
 * A request that got no complete answer within its timeout (see {@link DEFAULT_WRITE_TIMEOUT_MS}).
 * The write may or may not have been applied by the server: callers treat it as a failure and try
 * again, deciding afresh from the current object.
 */
export class RequestTimeoutError extends Error {
  constructor(
    /** HTTP method, e.g. `PATCH`. */
    readonly method: string,
    /** The request URL. */
    readonly url: string,
    /** The timeout that passed, milliseconds. */
    readonly timeoutMs: number,
  ) {
    super(`${method} ${url}: no answer within ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/** True when `err` is a {@link RequestTimeoutError}. */
export const isRequestTimeout = (err: unknown): boolean => err instanceof RequestTimeoutError;

/**
 * Sends `request` through `inner` and maps the outcome: `onResponse` may replace the response,
 * `onError` sees a failure, which is then passed on unchanged. The one shape of this module's
 * `HttpLibrary` wrappers.
 */
function sendThen(
  inner: HttpLibrary,
  request: RequestContext,
  onResponse: (res: ResponseContext) => ResponseContext,
  onError: (err: unknown) => void,
): Observable<ResponseContext> {
  return new Observable(
    inner
      .send(request)
      .toPromise()
      .then(onResponse, (err: unknown) => {
        onError(err);
        throw err;
      }),
  );
}

/**
 * Sends the typed clients' requests through undici's `request` instead of client-node 2.0.1's
 * `IsomorphicFetchHttpLibrary` (undici's `fetch`), with the same dispatcher, headers, body and
 * signal. Why: a fetch builds a WHATWG Request, Headers and Response and pumps the body through a
 * web stream; for a small JSON write that is most of this process's CPU per request (issue 29,
 * `bench/write-cost.ts`: `fetch` against `request`). Wire and semantics are the same: the same
 * bytes go out, the status, the headers (lower-case names, a repeated header joined with ", " as
 * fetch's `Headers` joins it) and the body come back in client-node's `ResponseContext`.
 *
 * The body is read whole before the response is handed on (client-node reads every body it
 * deserializes, but not, for example, a 401's; an unread undici body would hold its connection).
 * `stream()` serves those bytes as a web stream; no typed call of this project streams.
 *
 * A body that is not a string (client-node sends JSON as a string; form data exists only for
 * calls this project never makes) goes to `fallback`, client-node's own library.
 * An aborted signal rejects with its reason, as fetch does (undici `api/abort-signal.js`), so
 * {@link withRequestTimeout}'s {@link RequestTimeoutError} arrives unchanged.
 * @param fallback the library for any other body (client-node's `IsomorphicFetchHttpLibrary`).
 * @returns an `HttpLibrary` with the same `send` contract.
 */
export function undiciRequestHttpLibrary(fallback: HttpLibrary): HttpLibrary {
  return {
    send(request: RequestContext) {
      const body = request.getBody();
      if (body !== undefined && typeof body !== 'string') return fallback.send(request);
      return new Observable(sendWithRequest(request, body));
    },
  };
}

async function sendWithRequest(request: RequestContext, body: string | undefined): Promise<ResponseContext> {
  const signal = request.getSignal();
  const dispatcher = request.getDispatcher();
  const res = await undiciRequest(request.getUrl(), {
    method: request.getHttpMethod().toString() as Dispatcher.HttpMethod,
    headers: request.getHeaders(),
    ...(body !== undefined ? { body } : {}),
    ...(signal ? { signal } : {}),
    ...(dispatcher ? { dispatcher: dispatcher as Dispatcher } : {}),
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return new ResponseContext(res.statusCode, headers, {
    text: () => Promise.resolve(bytes.toString('utf8')),
    binary: () => Promise.resolve(bytes),
    stream: () => ReadableStream.from([bytes]),
  });
}

/**
 * Wraps a client-node `HttpLibrary` so that each request is aborted after its method's timeout with a
 * {@link RequestTimeoutError} (undici rejects with the abort reason; the body read is covered
 * too). A signal already on the request still aborts it.
 *
 * The timer is cleared once the request fails or its body has been read (`text()`/`binary()`
 * settled): a middleware's `pre` cannot see the response, so the earlier middleware left every
 * timer to fire 30 s (writes) or 60 s (reads) later, keeping each finished request's controller,
 * signal and closure alive that long (2.2–2.5 % of steady-state CPU in a profile, thousands of
 * live timers during mass eviction; bench/README.md). A body handed out as a `stream()` keeps its
 * timer: the deadline then covers the whole stream, as before.
 * @param inner the library that sends ({@link undiciRequestHttpLibrary}).
 * @param timeouts per-method timeouts, **milliseconds**; 0 means none.
 * @returns an `HttpLibrary` with the same `send` contract.
 */
export function withRequestTimeout(inner: HttpLibrary, timeouts: Required<RequestTimeouts>): HttpLibrary {
  return {
    send(request: RequestContext) {
      const method = request.getHttpMethod();
      const ms = method === HttpMethod.GET || method === HttpMethod.HEAD ? timeouts.readTimeoutMs : timeouts.writeTimeoutMs;
      if (ms <= 0) return inner.send(request);
      const controller = new AbortController();
      const url = request.getUrl();
      // unref: a timer must never keep the process alive on its own.
      const timer = setTimeout(() => controller.abort(new RequestTimeoutError(method, url, ms)), ms).unref();
      const clear = () => clearTimeout(timer);
      const prior = request.getSignal();
      request.setSignal(prior ? AbortSignal.any([prior, controller.signal]) : controller.signal);
      return sendThen(inner, request, (res) => {
        const body = res.body;
        res.body = {
          text: () => body.text().finally(clear),
          binary: () => body.binary().finally(clear),
          stream: () => body.stream(),
        };
        return res;
      }, clear);
    },
  };
}

// ---------------------------------------------------------------------------
// Request metrics (client-go tools/metrics, served as rest_client_* by src/metrics/registry.ts)
// ---------------------------------------------------------------------------

/**
 * Where request metrics go. Mirrors the client-go `tools/metrics` adapters that component-base's
 * `restclient` package registers (`RequestResult`, `RequestLatency`, `RateLimiterLatency`).
 */
export interface RestClientMetricsSink {
  /**
   * One request finished (`rest_client_requests_total{code,method,host}` and
   * `rest_client_request_duration_seconds{verb,host}`).
   * @param method upper-case HTTP method, e.g. `PATCH` (client-go's `req.verb`).
   * @param host the API server's `host[:port]` (client-go `url.Host`).
   * @param code the HTTP status as a string, or `<error>` when no response arrived (network error, timeout).
   * @param durationSeconds time until the response (the typed clients: its whole body, which
   *   {@link undiciRequestHttpLibrary} reads before handing it on; the informers' raw reads: its
   *   headers) or the error, **seconds**.
   */
  request(method: string, host: string, code: string, durationSeconds: number): void;
  /**
   * The client-side rate limiter wait before one request (`rest_client_rate_limiter_duration_seconds{verb,host}`),
   * **seconds**; 0 for requests that do not pass our write throttle (reads, lists and watches: client-go
   * throttles those too, we do not, see src/kube/throttle.ts `ApiWriteThrottle`).
   */
  rateLimiterWait(verb: string, host: string, waitSeconds: number): void;
  /**
   * An informer's protobuf codec fell back to JSON (src/kube/wire.ts): our own
   * `node_lifecycle_controller_informer_wire_fallback_total{resource,reason}`.
   */
  wireFallback?(resource: string, reason: string): void;
  /** An object skipped because its protobuf did not decode: our own `node_lifecycle_controller_informer_wire_malformed_total{resource}`. */
  wireMalformed?(resource: string): void;
}

/** The throttle wait of the write being sent, handed from the throttle to the request it admitted. */
const throttleWait = new AsyncLocalStorage<{ seconds: number; taken: boolean }>();

/**
 * Runs `fn` (one write admitted by the client-side throttle) so that the first API request it makes
 * reports `waitSeconds` as its rate limiter wait; any further request in `fn` waited for no token
 * and reports 0. Called by src/kube/throttle.ts `ApiWriteThrottle`, the counterpart of client-go's
 * `Request.tryThrottle`, which observes `RateLimiterLatency` before each request.
 * @param waitSeconds time the write waited for a token and an in-flight slot, **seconds**.
 * @returns what `fn` returns. @throws what `fn` throws.
 */
export function runAfterThrottleWait<T>(waitSeconds: number, fn: () => T): T {
  return throttleWait.run({ seconds: waitSeconds, taken: false }, fn);
}

function takeThrottleWaitSeconds(): number {
  const w = throttleWait.getStore();
  if (!w || w.taken) return 0;
  w.taken = true;
  return w.seconds;
}

/** Metrics sink per KubeConfig, for requests made outside the typed clients ({@link getJson}). */
const sinks = new WeakMap<KubeConfig, RestClientMetricsSink>();

/** Reports one finished request and its throttle wait to `sink`. */
function recordRequest(sink: RestClientMetricsSink, method: string, host: string, code: string, startMs: number): void {
  sink.request(method, host, code, (performance.now() - startMs) / 1000);
}

/**
 * Wraps client-node's HTTP library so that every request of a typed client is measured: the one
 * place every typed request passes with its method, URL and outcome (a middleware's `post` sees the
 * response but not which request it answers). Exported for unit tests.
 * @param inner the library to wrap (the request timeout over {@link undiciRequestHttpLibrary}).
 * @param host the `host` label, the API server's `host[:port]`.
 * @returns an `HttpLibrary` that behaves as `inner` and reports to `sink`. Never throws itself.
 */
export function instrumentHttpLibrary(inner: HttpLibrary, host: string, sink: RestClientMetricsSink): HttpLibrary {
  return {
    send(request: RequestContext) {
      const method = request.getHttpMethod().toString();
      sink.rateLimiterWait(method, host, takeThrottleWaitSeconds());
      const start = performance.now();
      return sendThen(
        inner,
        request,
        (res) => {
          recordRequest(sink, method, host, String(res.httpStatusCode), start);
          return res;
        },
        () => recordRequest(sink, method, host, '<error>', start),
      );
    },
  };
}

/**
 * The streaming watch, shaped like client-node's `Watch.watch` (src/kube/informer.ts `WatchLike`):
 * `callback(type, object)` per event, `done(err)` once when the stream ends; resolves with a
 * controller that aborts the stream.
 */
export interface WatchStarter {
  watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController>;
}

/**
 * The `Accept-Encoding` of every watch request: `identity`, so the API server never compresses a
 * watch stream.
 *
 * Why: undici's fetch asks for `gzip, deflate` by default (as Go's transport asks for gzip), and
 * since 1.37 (`WatchListCompression`, beta, on by default) kube-apiserver gzips a watch-list stream
 * with one gzip member per flush, which in the steady state is one member per event. Node inflates
 * each member through its asynchronous zlib stream: a libuv thread-pool round trip and a second
 * wake of the event loop per Lease renewal (the steady-state profile at 300 × 30: zlib's
 * `processChunk`, 10.8 % self, the largest single function), where Go's gzip reader inflates in the
 * reflector's goroutine. On the loopback or a cluster network the bytes cost less than the CPU; the
 * API server also saves its per-event gzip.
 *
 * Deliberate difference from upstream, on the wire only: client-go accepts gzip. What the informers
 * decode, and so every decision, is the same; only the bytes on the connection differ.
 */
export const WATCH_ACCEPT_ENCODING = 'identity';

/**
 * The configuration client-node's `Watch` is built on, with {@link WATCH_ACCEPT_ENCODING} added to
 * each of its requests. client-node 2.0.1's `Watch.watch` reads exactly two members of its config,
 * `getCurrentCluster()` and `applySecurityAuthentication(ctx)` (dist/watch.js); undici's fetch then
 * keeps an `Accept-Encoding` that is set, and adds its own only when none is.
 * @param kc the controller's KubeConfig (authentication, TLS, the reused dispatcher).
 * @returns a stand-in for `kc` to pass to `new Watch(...)` only. Never throws itself.
 */
export function uncompressedWatchConfig(kc: KubeConfig): KubeConfig {
  const config: Pick<KubeConfig, 'getCurrentCluster' | 'applySecurityAuthentication'> = {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applySecurityAuthentication: async (ctx) => {
      await kc.applySecurityAuthentication(ctx);
      ctx.setHeaderParam('Accept-Encoding', WATCH_ACCEPT_ENCODING);
    },
  };
  return config as KubeConfig;
}

/**
 * Counts each watch request of `watch` in the request metrics of `kc` (when {@link makeClients} gave
 * it a sink; otherwise returns `watch` unchanged): code 200 once the stream is open, the error's
 * `statusCode` or `<error>` otherwise; the latency is the time to the response headers, as client-go
 * records it for a watch. Watches are never throttled (rate limiter wait 0). client-node's
 * `Watch.watch` does not reject a failed request: it calls `done(err)` before it resolves, so a
 * `done` before the promise settles is the request's failure.
 * @returns a watch that behaves as `watch`. Never throws itself.
 */
export function instrumentWatch(kc: KubeConfig, watch: WatchStarter): WatchStarter {
  const sink = sinks.get(kc);
  const server = kc.getCurrentCluster()?.server;
  if (!sink || !server) return watch;
  const host = new URL(server).host;
  return {
    async watch(path, queryParams, callback, done) {
      sink.rateLimiterWait('GET', host, 0);
      const start = performance.now();
      let recorded = false;
      const fail = (err: unknown): void => {
        if (recorded) return;
        recorded = true;
        const sc = (err as { statusCode?: unknown } | null)?.statusCode;
        recordRequest(sink, 'GET', host, typeof sc === 'number' ? String(sc) : '<error>', start);
      };
      try {
        const controller = await watch.watch(path, queryParams, callback, (err) => {
          if (err) fail(err);
          done(err);
        });
        if (!recorded) {
          recorded = true;
          recordRequest(sink, 'GET', host, '200', start);
        }
        return controller;
      } catch (err) {
        fail(err);
        throw err;
      }
    },
  };
}

/** User-Agent of the typed clients (client-node's own is `kubernetes-client-javascript/<version>`). */
const USER_AGENT = 'node-lifecycle-controller (kubernetes-client-javascript)';

/**
 * `KubeConfig.makeApiClient` with one more middleware, the per-request timeout, and (when `sink` is
 * given) request metrics ({@link instrumentHttpLibrary}).
 * @throws {Error} when the KubeConfig has no current cluster.
 */
function apiClient<T>(
  kc: KubeConfig,
  Api: new (configuration: Configuration) => T,
  timeouts: Required<RequestTimeouts>,
  sink: RestClientMetricsSink | undefined,
): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const baseServer = new ServerConfiguration(cluster.server, {});
  const middleware = [setHeaderMiddleware('User-Agent', USER_AGENT)];
  const plain = createConfiguration({ baseServer, authMethods: { default: kc }, middleware });
  const timed = withRequestTimeout(undiciRequestHttpLibrary(plain.httpApi), timeouts);
  const httpApi = sink ? instrumentHttpLibrary(timed, new URL(cluster.server).host, sink) : timed;
  return new Api(createConfiguration({ baseServer, authMethods: { default: kc }, middleware, httpApi }));
}

/**
 * Builds the typed API clients for a KubeConfig, with connection reuse ({@link reuseConnections})
 * and a timeout on every request.
 * @param timeouts per-request timeouts in milliseconds (defaults: writes 30 s, reads 60 s).
 * @param metrics request metrics sink for the typed clients and for {@link getJson} on this
 *   KubeConfig (informer lists); default none.
 * @throws {Error} when the KubeConfig has no current cluster ({@link loadKubeConfig} checks that first).
 */
export function makeClients(kubeConfig: KubeConfig, timeouts: RequestTimeouts = {}, metrics?: RestClientMetricsSink): KubeClients {
  reuseConnections(kubeConfig);
  if (metrics) sinks.set(kubeConfig, metrics);
  const t: Required<RequestTimeouts> = {
    writeTimeoutMs: timeouts.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS,
    readTimeoutMs: timeouts.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS,
  };
  return {
    kubeConfig,
    core: apiClient(kubeConfig, CoreV1Api, t, metrics),
    apps: apiClient(kubeConfig, AppsV1Api, t, metrics),
    coordination: apiClient(kubeConfig, CoordinationV1Api, t, metrics),
    storage: apiClient(kubeConfig, StorageV1Api, t, metrics),
    events: apiClient(kubeConfig, EventsV1Api, t, metrics),
  };
}

/** The clients of the secure port's delegated authentication and authorization (src/metrics/delegation.ts `apiServerReviews`). */
export interface ReviewClients {
  authentication: AuthenticationV1Api;
  authorization: AuthorizationV1Api;
}

/**
 * Builds the TokenReview and SubjectAccessReview clients for a KubeConfig, with connection reuse and
 * one timeout on every review.
 * @param timeoutMs per-review timeout, **milliseconds** (upstream's delegation clients: 10 s).
 * @param metrics request metrics sink; default none.
 * @throws {Error} when the KubeConfig has no current cluster.
 */
export function makeReviewClients(kubeConfig: KubeConfig, timeoutMs: number, metrics?: RestClientMetricsSink): ReviewClients {
  reuseConnections(kubeConfig);
  const t: Required<RequestTimeouts> = { writeTimeoutMs: timeoutMs, readTimeoutMs: timeoutMs };
  return {
    authentication: apiClient(kubeConfig, AuthenticationV1Api, t, metrics),
    authorization: apiClient(kubeConfig, AuthorizationV1Api, t, metrics),
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
  const res = await getRaw(kc, path, query, { signal, record: true });
  const text = await res.text();
  if (!res.ok) throw httpError(res, text);
  return JSON.parse(text) as unknown;
}

/** What one request to the current cluster is sent with: its URL, headers and dispatcher. */
export interface PreparedRequest {
  url: URL;
  headers: Record<string, string>;
  /** client-node's (reused) undici dispatcher for this cluster's TLS; undefined for plain HTTP. */
  dispatcher: ReturnType<RequestContext['getDispatcher']>;
}

/**
 * Builds a request to the current cluster of `kc` with client-node's authentication, TLS and
 * reused dispatcher: the one set-up {@link getRaw} and {@link openWatchStream} share (and the
 * bench's raw writes, bench/write-cost.ts).
 * @param method the HTTP method.
 * @param path the API path, e.g. `/api/v1/pods`.
 * @param query query parameters; `undefined` and `""` values are left out.
 * @param headers headers set before authentication (`Accept`, ...); authentication may add more.
 * @throws {Error} when the kubeconfig has no current cluster; whatever client-node's
 *   authentication throws (an exec plugin that fails, an unreadable token file).
 */
export async function prepareRequest(
  kc: KubeConfig,
  method: HttpMethod,
  path: string,
  query: Readonly<Record<string, string | number | boolean | undefined>> = {},
  headers: Readonly<Record<string, string>> = {},
): Promise<PreparedRequest> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/$/, '') + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const ctx = new RequestContext(url.toString(), method);
  for (const [k, v] of Object.entries(headers)) ctx.setHeaderParam(k, v);
  await kc.applySecurityAuthentication(ctx);
  return { url, headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() };
}

/** The response of {@link getRaw}: undici's fetch `Response`. */
export type RawResponse = Awaited<ReturnType<typeof fetch>>;

/**
 * GETs `path` from the current cluster with client-node's authentication, TLS and (reused)
 * connection, and returns the response unread (status, headers, body stream). The protobuf codec
 * (src/kube/wire.ts) reads lists through it; its watch streams come from {@link openWatchStream}.
 * @param query query parameters; `undefined` and `""` values are left out.
 * @param opts.accept the `Accept` header (default none: the server answers JSON).
 * @param opts.record count the request in the request metrics of `kc` (lists; a watch is counted by {@link instrumentWatch}).
 * @throws network errors and aborts as thrown by fetch; never for an HTTP status.
 */
export async function getRaw(
  kc: KubeConfig,
  path: string,
  query: Readonly<Record<string, string | number | boolean | undefined>>,
  opts: { accept?: string; signal?: AbortSignal | undefined; record?: boolean } = {},
): Promise<RawResponse> {
  const { url, headers, dispatcher } = await prepareRequest(kc, HttpMethod.GET, path, query, opts.accept ? { Accept: opts.accept } : {});
  const sink = opts.record ? sinks.get(kc) : undefined;
  sink?.rateLimiterWait('GET', url.host, 0); // informer lists are not throttled (throttle.ts ApiWriteThrottle)
  const start = performance.now();
  let res: RawResponse;
  try {
    res = await fetch(url, { headers, ...(dispatcher ? { dispatcher } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
  } catch (err) {
    if (sink) recordRequest(sink, 'GET', url.host, '<error>', start);
    throw err;
  }
  if (sink) recordRequest(sink, 'GET', url.host, String(res.status), start);
  return res;
}

/** A watch response opened by {@link openWatchStream}, its body not read yet. */
export interface WatchStream {
  /** The HTTP status code. */
  status: number;
  /** The status's reason phrase (`OK`, `Gone`, ...), from node:http's table. */
  statusText: string;
  /** The response's media type, lower-cased, without parameters (`;stream=watch`); `''` when none. */
  contentType: string;
  /**
   * The response's `Content-Encoding`, lower-cased, when it has one other than `identity` (a server
   * or proxy that compressed although asked not to); the body is then not decoded.
   */
  contentEncoding: string | undefined;
  /** The body as it arrives: one `Uint8Array` per chunk read from the connection. */
  body: AsyncIterable<Uint8Array>;
  /** Stops reading and releases the connection's stream. Never rejects. */
  cancel(): Promise<void>;
}

/**
 * Opens a watch on `path` (`watch=true` is added) with client-node's authentication, TLS and
 * reused dispatcher, as {@link getRaw} does, but through undici's `request` instead of `fetch`:
 * the body is undici's Node stream, not a WHATWG stream fed from it, which saves the web stream's
 * enqueue, pull and promise per chunk, and at steady state a chunk is one Lease renewal (the
 * steady-state profile at 300 × 30 had undici's fetch body pump and the web stream's byte
 * controller among its largest self times). `request` never decodes a `Content-Encoding`, so the
 * stream is asked for uncompressed ({@link WATCH_ACCEPT_ENCODING}).
 * @param query query parameters; `undefined` and `""` values are left out.
 * @param opts.accept the `Accept` header (default none: the server answers JSON).
 * @param opts.signal aborts the request, and the body while it is read.
 * @throws network errors and aborts as thrown by undici; never for an HTTP status.
 */
export async function openWatchStream(
  kc: KubeConfig,
  path: string,
  query: Readonly<Record<string, string | number | boolean | undefined>>,
  opts: { accept?: string; signal?: AbortSignal } = {},
): Promise<WatchStream> {
  const { url, headers, dispatcher } = await prepareRequest(kc, HttpMethod.GET, path, { ...query, watch: true }, opts.accept ? { Accept: opts.accept } : {});
  // After authentication, which must not be able to replace it.
  headers['Accept-Encoding'] = WATCH_ACCEPT_ENCODING;
  const res = await undiciRequest(url, { method: 'GET', headers, ...(dispatcher ? { dispatcher } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
  const header = (name: string): string => {
    const v = res.headers[name];
    return (Array.isArray(v) ? (v[0] ?? '') : (v ?? '')).trim().toLowerCase();
  };
  const encoding = header('content-encoding');
  return {
    status: res.statusCode,
    statusText: STATUS_CODES[res.statusCode] ?? '',
    contentType: header('content-type').split(';')[0]!.trim(),
    contentEncoding: encoding === '' || encoding === 'identity' ? undefined : encoding,
    body: res.body,
    cancel: async () => {
      // undici errors a body destroyed before its end with RequestAbortedError; nobody reads it
      // any more, so that error must not become an uncaught exception.
      res.body.on('error', () => undefined);
      res.body.destroy();
    },
  };
}

/** The `ApiException` client-node throws for a non-2xx answer (body as text), for a response read by {@link getRaw}. */
export function httpError(res: RawResponse, text: string): ApiException<string> {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  return new ApiException<string>(res.status, `HTTP-Code: ${res.status}\nBody: ${text.slice(0, 500)}`, text, headers);
}

/** The request metrics sink {@link makeClients} registered for `kc`, if any (the protobuf codec reports its fallbacks there). */
export function metricsSinkOf(kc: KubeConfig): RestClientMetricsSink | undefined {
  return sinks.get(kc);
}
