/**
 * The API server's `/version`, read once at start-up, so that what differs between Kubernetes
 * minors is decided from the server this process talks to rather than assumed
 * (src/controllers/serverdecisions.ts makes the decisions).
 *
 * Upstream analogue: client-go's `DiscoveryClient.ServerVersion` (`discovery/discovery_client.go`)
 * and `version.Info` (`apimachinery/pkg/version/types.go`).
 */
import { describeError, getJson, type KubeClients } from './client.js';
import { httpStatus } from './listwatch.js';
import type { Logger } from '../log/logger.js';

/** The parts of `/version` the decisions use. */
export interface ServerVersion {
  /** `gitVersion` as the server reports it, e.g. `v1.34.4` or `v1.27.3-gke.100`. */
  gitVersion: string;
  major: number;
  /** The minor version as a number: `27` for `"27+"` (managed offerings append `+`). */
  minor: number;
}

/**
 * Reads major and minor from a `/version` answer: the `major`/`minor` fields first (their digits,
 * so `"27+"` is 27), `gitVersion` (`v1.27.3…`) when those are empty or not numbers.
 * @param info the JSON body of `GET /version`.
 * @returns the version, or `undefined` when neither gives a major and a minor. Never throws.
 */
export function parseServerVersion(info: unknown): ServerVersion | undefined {
  const o = typeof info === 'object' && info !== null ? (info as Record<string, unknown>) : {};
  const gitVersion = typeof o['gitVersion'] === 'string' ? o['gitVersion'] : '';
  const digits = (v: unknown): number | undefined => {
    const m = typeof v === 'string' ? /^(\d+)/.exec(v) : null;
    return m ? Number(m[1]) : undefined;
  };
  let major = digits(o['major']);
  let minor = digits(o['minor']);
  if (major === undefined || minor === undefined) {
    const m = /^v?(\d+)\.(\d+)/.exec(gitVersion);
    if (!m) return undefined;
    major = Number(m[1]);
    minor = Number(m[2]);
  }
  return { gitVersion: gitVersion || `v${major}.${minor}`, major, minor };
}

/** Each attempt's bound, milliseconds. */
const ATTEMPT_TIMEOUT_MS = 5000;
/** Pause between attempts, milliseconds. */
const RETRY_PAUSE_MS = 1000;

/**
 * Reads `GET /version` until the server answers or `signal` aborts. A network error, a timeout,
 * 429 or 5xx is retried after {@link RETRY_PAUSE_MS}; any other answer that is not a version (a
 * 4xx, an unparsable body) ends the reading.
 * @param signal stops the retries and the request in flight.
 * @returns the version; `undefined` when the server answered without one (logged as a warning) or
 *   `signal` aborted. Never throws.
 */
export async function readServerVersion(clients: Pick<KubeClients, 'kubeConfig'>, log: Logger, signal: AbortSignal): Promise<ServerVersion | undefined> {
  while (!signal.aborted) {
    try {
      const body = await getJson(clients.kubeConfig, '/version', {}, AbortSignal.any([signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]));
      const v = parseServerVersion(body);
      if (v === undefined) log.warn({ body: JSON.stringify(body).slice(0, 200) }, 'GET /version: no major.minor in the answer; deciding as for an unknown server');
      return v;
    } catch (err) {
      if (signal.aborted) return undefined;
      const status = httpStatus(err);
      if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
        log.warn({ err: describeError(err) }, 'GET /version refused; deciding as for an unknown server');
        return undefined;
      }
      log.info({ err: describeError(err) }, 'GET /version failed; retrying');
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, RETRY_PAUSE_MS);
      t.unref();
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      }, { once: true });
    });
  }
  return undefined;
}
