/**
 * Shared helpers for integration tests against the real local control plane
 * (scripts/control-plane.sh, started once per run by scripts/with-control-plane.sh).
 * Each test gets its own fleet prefix and namespace so independent test files run concurrently.
 */
import { randomBytes } from 'node:crypto';
import { loadKubeConfig, makeClients, isConflict, type KubeClients } from '../../src/kube/client.js';

/** Path of the kubeconfig for the shared local cluster. @throws {Error} when neither env var is set. */
export function kubeconfigPath(): string {
  const p = process.env['NLC_KUBECONFIG'] ?? process.env['KUBECONFIG'];
  if (!p) throw new Error('NLC_KUBECONFIG is not set: run integration tests through `npm run test:integration`');
  return p;
}

/** API clients for the shared local cluster. */
export function testClients(): KubeClients {
  return makeClients(loadKubeConfig(kubeconfigPath()));
}

/** A short unique DNS-1123 prefix such as `t-sim-3fa2` for one test's fleet and namespace. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${randomBytes(2).toString('hex')}`;
}

/**
 * Creates a namespace plus its `default` ServiceAccount (no controller-manager runs here to create it).
 * Idempotent.
 */
export async function createTestNamespace(clients: KubeClients, name: string): Promise<void> {
  try {
    await clients.core.createNamespace({ body: { metadata: { name, labels: { 'nlc-test': 'true' } } } });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  try {
    await clients.core.createNamespacedServiceAccount({
      namespace: name,
      body: { metadata: { name: 'default' }, automountServiceAccountToken: false },
    });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

/**
 * Polls `probe` until it returns a value other than `undefined`/`false`, or the timeout passes.
 * @param timeoutMs milliseconds
 * @param intervalMs milliseconds between probes
 * @returns the first truthy value
 * @throws {Error} naming `what` (and the last probe error, if any) on timeout.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const why = lastErr instanceof Error ? `; last error: ${lastErr.message.split('\n')[0]}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * The counterpart of {@link waitFor} for absences: polls `probe` for `windowMs` and throws as soon as
 * it returns false (or throws), so a forbidden state is caught when it appears, not only at the end.
 * The window is an observation bound, not a latency: callers derive it from the configured durations
 * that would make the forbidden action happen inside it, and say so where they call it.
 * @param windowMs milliseconds to observe
 * @param intervalMs milliseconds between probes
 * @throws {Error} naming `what` at the first probe that does not hold.
 */
export async function holdsFor(
  what: string,
  probe: () => Promise<boolean> | boolean,
  windowMs: number,
  intervalMs = 250,
): Promise<void> {
  const end = Date.now() + windowMs;
  for (;;) {
    if (!(await probe())) throw new Error(`${what}: stopped holding ${windowMs - Math.max(0, end - Date.now())} ms into a ${windowMs} ms observation window`);
    if (Date.now() >= end) return;
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, end - Date.now()))));
  }
}
