/**
 * The simulated kubelets' HTTPS endpoint: `/stats/summary` (the Summary API) and `/configz`, one port
 * per node, reached the way a real cluster reaches a kubelet: through the API server's node proxy
 * (`/api/v1/nodes/NODE/proxy/stats/summary`). Issue 20, docs/node-pressure.md "The Summary API".
 *
 * Why one port per node on the machine's own address and not one loopback address per node:
 * kube-apiserver v1.37.2 refuses to proxy to any node address that is not global unicast
 * (pkg/registry/core/node/strategy.go `ResourceLocation` → `isProxyableHostname`: `IP.IsGlobalUnicast()`),
 * so 127.x.y.z, `localhost` and link-local addresses answer 400 "address not allowed". The machine's
 * own non-loopback address is allowed and needs no root; nodes are told apart by the local port of
 * the connection (`status.daemonEndpoints.kubeletEndpoint.Port`, which the node proxy uses).
 *
 * One `https.Server` takes the connections of every node's listener (`emit('connection')`), so there
 * is one TLS context and one request handler. Client authentication: none. kube-apiserver presents a
 * client certificate only with `--kubelet-client-certificate` (the project's control plane sets none),
 * so the simulator serves anyone who can reach the port; upstream's kubelet would authenticate and
 * authorize (`nodes/proxy`, `nodes/stats`) the API server. The serving certificate is self-signed;
 * kube-apiserver accepts it because without `--kubelet-certificate-authority` it does not verify
 * kubelet certificates (pkg/kubelet/client/kubelet_client.go `transportConfig`: `Insecure` without a CA).
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, isIPv4, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { networkInterfaces } from 'node:os';
import { selfSignedCertificate } from '../../../src/metrics/tls.js';
import type { Summary } from '../../../src/kubelet/signals.js';
import type { EvictionConfig, KubeletEvictionConfiguration, ThresholdValue } from '../../../src/kubelet/thresholds.js';
import { formatGoDuration } from '../../../src/util/duration.js';
import { silentLogger, type SimLogger } from './log.js';

/** Environment variable that overrides {@link hostAddress} (an IPv4 address of this machine). */
export const KUBELET_ADDRESS_ENV = 'NLC_SIM_KUBELET_ADDRESS';

/**
 * Whether kube-apiserver's node proxy accepts `ip` (Go `net.IP.IsGlobalUnicast` for IPv4: not
 * unspecified, loopback, link-local, multicast or broadcast).
 */
export function isProxyableIPv4(ip: string): boolean {
  if (!isIPv4(ip)) return false;
  const [a = 0, b = 0] = ip.split('.').map(Number);
  if (a === 0 || a === 127 || a >= 224) return false;
  return !(a === 169 && b === 254);
}

/**
 * The address the simulated kubelets serve on and report as InternalIP: `NLC_SIM_KUBELET_ADDRESS`,
 * else the first non-internal IPv4 address of this machine that the node proxy accepts.
 * @param env environment (default `process.env`)
 * @param interfaces `os.networkInterfaces()` shape (default this machine's)
 * @returns the address, or undefined when the machine has none (the node proxy cannot reach the simulator then)
 */
export function hostAddress(
  env: NodeJS.ProcessEnv = process.env,
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces(),
): string | undefined {
  const fromEnv = env[KUBELET_ADDRESS_ENV];
  if (fromEnv) return fromEnv;
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal && isProxyableIPv4(a.address)) return a.address;
  }
  return undefined;
}

function thresholdText(v: ThresholdValue): string {
  if (v.percentage !== undefined) return `${Number((v.percentage * 100).toPrecision(6))}%`;
  return String(v.quantity ?? 0);
}

/**
 * The KubeletConfiguration eviction fields (v1beta1 JSON names) that give `config` back through
 * `evictionConfigFromKubeletConfiguration`: what a kubelet's `/configz` shows. Quantities are written
 * in base units (bytes, inodes, PIDs), percentages as `10%`, durations in Go syntax. `evictionHard` is
 * always present (as on a real kubelet, whose defaults are filled in), so reading it back never
 * brings the defaults back.
 */
export function kubeletConfigurationOf(config: EvictionConfig): KubeletEvictionConfiguration {
  const evictionHard: Record<string, string> = {};
  const evictionSoft: Record<string, string> = {};
  const evictionSoftGracePeriod: Record<string, string> = {};
  const evictionMinimumReclaim: Record<string, string> = {};
  for (const t of config.thresholds) {
    if (t.signal === 'allocatableMemory.available') continue; // derived from memory.available by the kubelet
    if (t.gracePeriodMs === 0) evictionHard[t.signal] = thresholdText(t.value);
    else {
      evictionSoft[t.signal] = thresholdText(t.value);
      evictionSoftGracePeriod[t.signal] = formatGoDuration(t.gracePeriodMs);
    }
    if (t.minReclaim) evictionMinimumReclaim[t.signal] = thresholdText(t.minReclaim);
  }
  return {
    evictionHard,
    ...(Object.keys(evictionSoft).length > 0 ? { evictionSoft, evictionSoftGracePeriod } : {}),
    ...(Object.keys(evictionMinimumReclaim).length > 0 ? { evictionMinimumReclaim } : {}),
    evictionPressureTransitionPeriod: formatGoDuration(config.pressureTransitionPeriodMs),
    evictionMaxPodGracePeriod: config.maxPodGracePeriodSeconds,
  };
}

/** Options of {@link KubeletServer.start}. */
export interface KubeletServerOptions {
  /** the node's current Summary (undefined: not available yet → 503) */
  summary: (node: string) => Promise<Summary | undefined>;
  /** the node's eviction configuration, for `/configz` */
  config: (node: string) => EvictionConfig;
  /** address to serve on and report; default {@link hostAddress} */
  address?: string;
  logger?: SimLogger;
}

/** Where a node's kubelet endpoint is. */
export interface KubeletEndpoint {
  address: string;
  port: number;
}

/**
 * The fleet's kubelet endpoints. `start()` makes the TLS context; `listen(node)` opens the node's port.
 * Routes (GET): `/stats/summary` (stats/v1alpha1 Summary JSON), `/configz` (`{"kubeletconfig": {...}}`
 * with the eviction fields), `/healthz`. Anything else is 404, other methods 405.
 */
export class KubeletServer {
  readonly address: string;
  readonly #https: HttpsServer;
  readonly #o: KubeletServerOptions;
  readonly #log: SimLogger;
  readonly #listeners = new Map<string, NetServer>();
  readonly #nodeByPort = new Map<number, string>();
  /** open connections, destroyed by stop(): the API server keeps its kubelet connections alive */
  readonly #sockets = new Set<Socket>();

  private constructor(address: string, https: HttpsServer, o: KubeletServerOptions) {
    this.address = address;
    this.#https = https;
    this.#o = o;
    this.#log = o.logger ?? silentLogger;
    https.on('request', (req: IncomingMessage, res: ServerResponse) => void this.#serve(req, res));
  }

  /**
   * Makes the self-signed serving certificate and the request handler (no port is open yet).
   * @throws Error when the machine has no address the node proxy accepts and none was given
   *   (set NLC_SIM_KUBELET_ADDRESS), or when certificate generation fails
   */
  static async start(o: KubeletServerOptions): Promise<KubeletServer> {
    const address = o.address ?? hostAddress();
    if (!address) {
      throw new Error(`kubelet server: this machine has no non-loopback IPv4 address; kube-apiserver's node proxy refuses loopback (set ${KUBELET_ADDRESS_ENV})`);
    }
    const { cert, key } = await selfSignedCertificate(Date.now());
    return new KubeletServer(address, createHttpsServer({ cert, key }), o);
  }

  /**
   * Opens the node's port (an ephemeral one on {@link KubeletServer.address}); idempotent.
   * @returns the endpoint to report in the Node's status
   * @throws Error when the port cannot be opened
   */
  async listen(node: string): Promise<KubeletEndpoint> {
    const existing = this.endpoint(node);
    if (existing) return existing;
    const listener = createNetServer((socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
      this.#https.emit('connection', socket);
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, this.address, () => resolve());
    });
    const port = (listener.address() as AddressInfo).port;
    this.#listeners.set(node, listener);
    this.#nodeByPort.set(port, node);
    return { address: this.address, port };
  }

  /** The node's endpoint, if its port is open. */
  endpoint(node: string): KubeletEndpoint | undefined {
    const l = this.#listeners.get(node);
    return l ? { address: this.address, port: (l.address() as AddressInfo).port } : undefined;
  }

  /** Closes every port and open connection. Never throws. */
  async stop(): Promise<void> {
    const closing = [...this.#listeners.values()].map((l) => new Promise<void>((resolve) => l.close(() => resolve())));
    this.#listeners.clear();
    this.#nodeByPort.clear();
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    await Promise.all(closing);
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const node = this.#nodeByPort.get(req.socket.localPort ?? -1);
    const path = new URL(req.url ?? '/', 'https://kubelet').pathname;
    const send = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(code, { 'Content-Type': type }).end(body);
    };
    if (!node) return send(404, 'no node on this port\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    try {
      if (path === '/healthz') return send(200, 'ok');
      if (path === '/configz') {
        return send(200, JSON.stringify({ kubeletconfig: kubeletConfigurationOf(this.#o.config(node)) }), 'application/json');
      }
      if (path === '/stats/summary' || path === '/stats/summary/') {
        const summary = await this.#o.summary(node);
        if (!summary) {
          res.setHeader('Retry-After', '10');
          return send(503, 'stats not available yet\n');
        }
        return send(200, JSON.stringify(summary), 'application/json');
      }
      return send(404, '404 page not found\n');
    } catch (err) {
      this.#log.warn({ node, path, err: (err as Error).message }, 'kubelet server: request failed');
      return send(500, 'internal error\n');
    }
  }
}
