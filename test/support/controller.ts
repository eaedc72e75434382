/**
 * Runs the real controller in-process for integration tests, scoped to one simulated fleet with
 * `--node-selector nlc.sim/fleet=<prefix>` so test files can share the control plane concurrently.
 */
import { createWriteStream } from 'node:fs';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { startController, type RunningController } from '../../src/cli/run.js';
import { createLogger } from '../../src/log/logger.js';
import { kubeconfigPath, waitFor } from './cluster.js';

/**
 * Starts a controller for `fleetPrefix` with `extraFlags` (upstream flag syntax) and waits until its
 * caches synced (against `opts.kubeconfig`, default the shared cluster). Logs go to `$NLC_TEST_LOG_DIR/<prefix>.log` when that is set, else nowhere.
 */
export async function startTestController(
  fleetPrefix: string,
  extraFlags: string[] = [],
  opts: { kubeconfig?: string } = {},
): Promise<RunningController> {
  const config = await parseControllerFlags(
    [
      `--kubeconfig=${opts.kubeconfig ?? kubeconfigPath()}`,
      `--node-selector=nlc.sim/fleet=${fleetPrefix}`,
      // The plain port (tests read it without a token); no secure port unless a test asks for one.
      '--metrics-bind-address=127.0.0.1:0',
      '--secure-port=0',
      '--leader-elect=false',
      '--log-level=debug',
      ...extraFlags,
    ],
    {},
  );
  const dir = process.env['NLC_TEST_LOG_DIR'];
  const log = createLogger({
    level: dir ? config.logLevel : 'error',
    format: 'json',
    destination: dir ? createWriteStream(`${dir}/${fleetPrefix}.log`, { flags: 'a' }) : createWriteStream('/dev/null'),
  });
  const running = await startController(config, { log });
  await running.started;
  return running;
}

/** Fetches the controller's Prometheus text exposition. */
export async function scrapeMetrics(running: RunningController): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${running.port}/metrics`);
  return res.text();
}

/** Reads one sample value from Prometheus text, e.g. `metricValue(text, 'node_collector_evictions_total', {zone})`. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const body = m[3] ?? '';
    // prom-client writes label values as-is apart from escaping \\, " and newlines.
    const ok = Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`));
    if (ok) return Number(m[4]);
  }
  return undefined;
}

/**
 * Waits until the counter `name{labels}` reaches at least `want` (missing counts as 0), polling every
 * 50 ms for up to `timeoutMs` **milliseconds**, and returns its last value. The controller counts a
 * write once the API server's response arrives, while a test may see the write's effect in the API
 * first (another watch or list can be faster than the response), so a count read right after the
 * effect can still be one short. Callers assert on the returned value (equal, or at least).
 */
export async function metricReaching(running: RunningController, name: string, labels: Record<string, string>, want: number, timeoutMs = 10_000): Promise<number> {
  let value = 0;
  const reached = async (): Promise<boolean> => {
    value = metricValue(await scrapeMetrics(running), name, labels) ?? 0;
    return value >= want;
  };
  // On timeout the caller's assertion reports the last value, which says more than "timed out".
  await waitFor(`${name} ≥ ${want}`, reached, timeoutMs, 50).catch(() => undefined);
  return value;
}
