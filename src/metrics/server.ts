/**
 * The observability endpoint: `/metrics`, `/healthz`, `/livez`, `/readyz` and `/debug/state`.
 *
 * Two instances may run (src/cli/run.ts): the secure port (`--bind-address`:`--secure-port`, HTTPS,
 * every request but the always-allow paths authenticated and authorized through the API server, see
 * src/metrics/delegation.ts), as kube-controller-manager serves on 10257
 * (`k8s.io/controller-manager/app/serve.go` `BuildHandlerChain`); and, only when
 * `--metrics-bind-address` is set, the same routes over plain HTTP without authentication (for the
 * local demo and tests; upstream has no plain port since 1.24).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/logger.js';
import type { AccessDecision } from './delegation.js';
import type { Metrics } from './registry.js';

/** A parsed `host:port` listen address. */
export interface BindAddress {
  /** Host or IP to listen on (IPv6 without brackets); undefined means every interface (IPv4 and IPv6). */
  host: string | undefined;
  /** TCP port, 0–65535; 0 asks the OS for a free port. */
  port: number;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9A-Fa-f:.]+(%[\w.-]+)?$/;

/**
 * Parses a listen address in Go's `net.JoinHostPort` form.
 * @param text `host:port`, `[ipv6]:port` or `:port` (empty host = all interfaces), e.g. `:10267`,
 *   `127.0.0.1:0`, `[::1]:9090`, `localhost:8080`.
 * @returns the host (undefined for all interfaces) and the port.
 * @throws {Error} with a one-line reason when the text is not of that form or the port is not an integer in 0–65535.
 * Upstream analogue: `net.SplitHostPort` as used for kube-controller-manager's `--bind-address`/`--secure-port`.
 */
export function parseBindAddress(text: string): BindAddress {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):([^:]*)$/.exec(text);
  if (!m) throw new Error(`"${text}" is not of the form host:port, [ipv6]:port or :port`);
  const [, bracketed, plain, portText = ''] = m;
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new Error(`port "${portText}" in "${text}" is not an integer between 0 and 65535`);
  }
  const port = Number(portText);
  if (bracketed !== undefined) {
    if (!bracketed.includes(':') || !IPV6.test(bracketed)) throw new Error(`"[${bracketed}]" in "${text}" is not an IPv6 address`);
    return { host: bracketed, port };
  }
  const host = plain ?? '';
  if (host === '') return { host: undefined, port };
  if (!IPV4.test(host) && !(HOSTNAME.test(host) && !/^[\d.]+$/.test(host))) {
    throw new Error(`host "${host}" in "${text}" is neither an IPv4 address nor a host name`);
  }
  return { host, port };
}

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** Listen address, see {@link parseBindAddress}; port 0 picks a free port. */
  bindAddress: string;
  /** The registry served on `/metrics`. */
  metrics: Pick<Metrics, 'registry'>;
  /** `/readyz` answers 200 only while this returns true (e.g. informers synced and, with leader election, leading or standing by). */
  isReady: () => boolean;
  /** `/healthz` answers 200 while this returns true; default always true (the process is serving). */
  isHealthy?: () => boolean;
  /** JSON for `/debug/state`; when absent, `/debug/state` answers 404. */
  debugState?: () => unknown;
  /** Logger for request errors and the listen line. */
  log: Logger;
  /** Serve HTTPS with this PEM certificate (chain) and key; absent: plain HTTP. */
  tls?: { cert: string; key: string };
  /**
   * Decides each GET/HEAD before it is served (the secure port: src/metrics/delegation.ts
   * `DelegatedAccess.check`); absent: every request is served. Must not reject.
   */
  access?: { check(path: string, verb: string, authorization: string | undefined): Promise<AccessDecision> };
}

/** A running metrics server. */
export interface MetricsServer {
  /** The port actually bound (the real one when 0 was asked for). */
  port: number;
  /** Stops listening and drops open keep-alive connections; resolves when the server is closed. Never rejects. */
  close(): Promise<void>;
}

/**
 * Starts the observability HTTP(S) server.
 *
 * Routes (GET or HEAD; other methods get 405; with `access`, a refused request gets its 401 or 403
 * before any route is looked at):
 * - `/metrics`: Prometheus text exposition of the registry;
 * - `/healthz`, `/livez`: 200 `ok` / 500 `unhealthy`;
 * - `/readyz`: 200 `ok` / 503 `not ready`;
 * - `/debug/state`: `debugState()` as JSON, 404 when no `debugState` was given;
 * - anything else: 404.
 *
 * @param opts see {@link MetricsServerOptions}.
 * @returns the bound port and a close function.
 * @throws {Error} (rejects) when the bind address is malformed or listening fails (e.g. EADDRINUSE).
 * Upstream analogue: `genericcontrollermanager.NewBaseHandler` (`/healthz`, `/metrics`) in kube-controller-manager.
 */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const { host, port } = parseBindAddress(opts.bindAddress);
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(opts, req, res).catch((err: unknown) => {
      opts.log.error({ err, path: req.url }, 'metrics server request failed');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.destroy();
    });
  };
  const server: Server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, onRequest) : createServer(onRequest);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(new Error(`cannot listen on ${opts.bindAddress}: ${err.message}`));
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (err) => opts.log.error({ err }, 'metrics server error'));
  const bound = (server.address() as AddressInfo).port;
  const scheme = opts.tls ? 'https' : 'http';
  const auth = opts.access ? 'authenticated and authorized through the API server' : 'without authentication';
  opts.log.info({ address: opts.bindAddress, port: bound, scheme }, `serving /metrics, /healthz, /livez, /readyz and /debug/state over ${scheme}, ${auth}`);
  let closing: Promise<void> | undefined;
  return {
    port: bound,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function handle(opts: MetricsServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    return;
  }
  if (opts.access) {
    const decision = await opts.access.check(path, 'get', req.headers.authorization);
    if (!decision.allowed) {
      if (decision.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      send(res, decision.status, 'text/plain; charset=utf-8', `${decision.reason}\n`);
      return;
    }
  }
  switch (path) {
    case '/metrics': {
      const registry = opts.metrics.registry;
      send(res, 200, registry.contentType, await registry.metrics());
      return;
    }
    case '/healthz':
    case '/livez': {
      const healthy = opts.isHealthy ? opts.isHealthy() : true;
      send(res, healthy ? 200 : 500, 'text/plain; charset=utf-8', healthy ? 'ok\n' : 'unhealthy\n');
      return;
    }
    case '/readyz': {
      const ready = opts.isReady();
      send(res, ready ? 200 : 503, 'text/plain; charset=utf-8', ready ? 'ok\n' : 'not ready\n');
      return;
    }
    case '/debug/state': {
      if (!opts.debugState) {
        send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
        return;
      }
      send(res, 200, 'application/json; charset=utf-8', `${JSON.stringify(opts.debugState(), null, 2)}\n`);
      return;
    }
    default:
      send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
