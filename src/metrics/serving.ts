/**
 * Starts the process's observability servers from its flags: the secure port (HTTPS, delegated
 * authentication and authorization) and, only when `--metrics-bind-address` is set, the plain-HTTP
 * port. Everything here can fail at start-up and does so before the process campaigns for the Lease.
 *
 * Upstream: kube-controller-manager `Run` → `c.SecureServing.Serve(BuildHandlerChain(...))` with the
 * delegating authenticator and authorizer of `Config` (`cmd/kube-controller-manager/app`).
 */
import { loadKubeConfig, makeReviewClients, type RestClientMetricsSink } from '../kube/client.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';
import { apiServerReviews, DelegatedAccess, type ReviewApi } from './delegation.js';
import { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './server.js';
import { servingCertificate } from './tls.js';

/** Timeout of one TokenReview or SubjectAccessReview, **milliseconds** (upstream: 10 s each). */
export const REVIEW_TIMEOUT_MS = 10_000;

/** The serving flags, part of src/cli/flags.ts `ControllerConfig` (which validates them); durations in **milliseconds**. */
export interface ServingConfig {
  /** `--kubeconfig`: path, or undefined for in-cluster / default loading. */
  kubeconfig: string | undefined;
  /** `--metrics-bind-address`, validated with `parseBindAddress` (src/metrics/server.ts); '' = no plain-HTTP port. */
  metricsBindAddress: string;
  /** `--secure-port`, 0–65535; 0 = no HTTPS port. */
  securePort: number;
  /** `--bind-address`: an IP address; '' or an unspecified one (0.0.0.0, ::) = all interfaces. */
  bindAddress: string;
  /** `--tls-cert-file` and `--tls-private-key-file`: both or neither ('' = self-signed in memory). */
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  /** `--authentication-kubeconfig` / `--authorization-kubeconfig`: '' = the connection of `--kubeconfig`. */
  authenticationKubeconfig: string;
  authorizationKubeconfig: string;
  /** `--authentication-token-webhook-cache-ttl` in **milliseconds**. */
  authenticationTokenWebhookCacheTtl: number;
  /** `--authorization-webhook-cache-authorized-ttl` in **milliseconds**. */
  authorizationWebhookCacheAuthorizedTtl: number;
  /** `--authorization-webhook-cache-unauthorized-ttl` in **milliseconds**. */
  authorizationWebhookCacheUnauthorizedTtl: number;
  /** `--authorization-always-allow-paths` (validated with `alwaysAllowPathMatcher`, src/metrics/delegation.ts). */
  authorizationAlwaysAllowPaths: readonly string[];
}

/** The running servers. */
export interface Serving {
  /** Port of the plain-HTTP server; 0 when `--metrics-bind-address` is empty. */
  plainPort: number;
  /** Port of the HTTPS server; 0 when `--secure-port` is 0. */
  securePort: number;
  /** Closes both. Never rejects. */
  close(): Promise<void>;
}

/** `--bind-address` and `--secure-port` as a listen address for {@link startMetricsServer}. */
export function secureListenAddress(bindAddress: string, port: number): string {
  if (bindAddress === '' || bindAddress === '0.0.0.0' || bindAddress === '::') return `:${port}`;
  return bindAddress.includes(':') ? `[${bindAddress}]:${port}` : `${bindAddress}:${port}`;
}

/**
 * The TokenReview and SubjectAccessReview sender for the secure port: `--authentication-kubeconfig`
 * and `--authorization-kubeconfig`, each defaulting to the connection of `--kubeconfig`.
 * @throws {Error} when a kubeconfig cannot be loaded.
 */
function reviewApi(config: ServingConfig, sink: RestClientMetricsSink | undefined): ReviewApi {
  const load = (path: string, flag: string): ReturnType<typeof loadKubeConfig> => (path ? loadKubeConfig(path, flag) : loadKubeConfig(config.kubeconfig));
  const authn = apiServerReviews(makeReviewClients(load(config.authenticationKubeconfig, 'authentication-kubeconfig'), REVIEW_TIMEOUT_MS, sink));
  const authz = apiServerReviews(makeReviewClients(load(config.authorizationKubeconfig, 'authorization-kubeconfig'), REVIEW_TIMEOUT_MS, sink));
  return { reviewToken: (t) => authn.reviewToken(t), reviewAccess: (u, p, v) => authz.reviewAccess(u, p, v) };
}

/**
 * Starts the secure port (unless `--secure-port=0`) and the plain port (if `--metrics-bind-address`
 * is set) with the same routes.
 * @param config the serving flags.
 * @param routes what both serve (registry, readiness, health, debug state) and the logger.
 * @param opts `clock` for the review caches and the certificate's validity; `reviews` replaces the
 *   API server reviews (tests); `sink` records the reviews' requests as `rest_client_*`.
 * @returns the bound ports and a close function.
 * @throws {Error} (rejects) when a kubeconfig, the certificate files or a bind fails; a server
 *   already started is closed first.
 */
export async function startServing(
  config: ServingConfig,
  routes: Omit<MetricsServerOptions, 'bindAddress' | 'tls' | 'access'>,
  opts: { clock: Clock; reviews?: ReviewApi; sink?: RestClientMetricsSink },
): Promise<Serving> {
  const log: Logger = routes.log;
  const servers: MetricsServer[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.close()));
  };
  try {
    let securePort = 0;
    if (config.securePort > 0) {
      const access = new DelegatedAccess({
        api: opts.reviews ?? reviewApi(config, opts.sink),
        clock: opts.clock,
        tokenCacheTtlMs: config.authenticationTokenWebhookCacheTtl,
        allowCacheTtlMs: config.authorizationWebhookCacheAuthorizedTtl,
        denyCacheTtlMs: config.authorizationWebhookCacheUnauthorizedTtl,
        alwaysAllowPaths: config.authorizationAlwaysAllowPaths,
        log,
      });
      const tls = await servingCertificate({ certFile: config.tlsCertFile, keyFile: config.tlsPrivateKeyFile }, opts.clock.now());
      if (tls.selfSigned) log.info({}, 'secure port: generated a self-signed serving certificate in memory');
      const secure = await startMetricsServer({ ...routes, bindAddress: secureListenAddress(config.bindAddress, config.securePort), tls, access });
      servers.push(secure);
      securePort = secure.port;
    }
    let plainPort = 0;
    if (config.metricsBindAddress !== '') {
      const plain = await startMetricsServer({ ...routes, bindAddress: config.metricsBindAddress });
      servers.push(plain);
      plainPort = plain.port;
    }
    if (servers.length === 0) log.warn({}, 'no --secure-port and no --metrics-bind-address: /metrics, /healthz and /readyz are not served');
    return { plainPort, securePort, close };
  } catch (err) {
    await close();
    throw err;
  }
}
