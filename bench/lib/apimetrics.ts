/**
 * API request accounting from kube-apiserver's own `apiserver_request_total` counter.
 *
 * Method (1.20's counter has no user-agent or user label): each controller runs alone on its own
 * control plane, the bench scrapes the counter before and after each phase, and the simulator's
 * (and the bench's) own traffic is removed by subtracting the per-key rate measured in a baseline
 * window with no controller running, scaled to the phase's length.
 */
import { request } from 'node:https';

/** Request counts keyed `VERB resource[/subresource]` (group omitted; resources are unambiguous here). */
export type RequestCounts = Map<string, number>;

/** Verbs that change state. */
export const WRITE_VERBS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION', 'APPLY']);

/**
 * Parses Prometheus text labels `{a="x",b="y"}` (with `\"`, `\\` and `\n` escapes).
 * @returns label name → value.
 */
export function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
  }
  return out;
}

/**
 * Sums `apiserver_request_total` samples of a `/metrics` text by verb, resource and subresource.
 * @returns counts keyed `VERB resource` or `VERB resource/subresource`.
 */
export function parseRequestTotals(metricsText: string): RequestCounts {
  const counts: RequestCounts = new Map();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const labels = parseLabels(line.slice('apiserver_request_total{'.length, close));
    const value = Number(line.slice(close + 1).trim().split(/\s+/)[0]);
    if (!Number.isFinite(value)) continue;
    const res = labels['resource'] ?? '';
    const key = `${labels['verb'] ?? '?'} ${res === '' ? '(non-resource)' : res}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** `after − before` per key (keys only in `after` count from 0). */
export function diffCounts(after: RequestCounts, before: RequestCounts): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0) out.set(k, d);
  }
  return out;
}

/**
 * A controller's own requests: the phase's delta minus the baseline's per-key rate times the
 * phase's length. Keys whose corrected count rounds to ≤ 0 are dropped.
 * @param phaseMs phase length, ms; @param baselineMs baseline window length, ms (> 0).
 */
export function subtractBaseline(phase: RequestCounts, phaseMs: number, baseline: RequestCounts, baselineMs: number): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [k, v] of phase) {
    const corrected = Math.round(v - ((baseline.get(k) ?? 0) * phaseMs) / baselineMs);
    if (corrected > 0) out.set(k, corrected);
  }
  return out;
}

/** Totals per verb (`GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `DELETE`, …). */
export function byVerb(counts: RequestCounts): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of counts) {
    const verb = k.split(' ')[0] as string;
    out[verb] = (out[verb] ?? 0) + v;
  }
  return out;
}

/** Sum of the write verbs. */
export function totalWrites(counts: RequestCounts): number {
  let n = 0;
  for (const [k, v] of counts) if (WRITE_VERBS.has(k.split(' ')[0] as string)) n += v;
  return n;
}

/** Plain object of a count map, keys sorted (for JSON). */
export function countsToObject(counts: RequestCounts): Record<string, number> {
  return Object.fromEntries([...counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Scrapes the API server's `/metrics` with a bearer token (the private control plane's
 * self-signed certificate is not verified) and returns its request totals.
 * @throws {Error} on a network error or a non-200 answer.
 */
export async function scrapeRequestTotals(apiserverUrl: string, token: string): Promise<RequestCounts> {
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(
      `${apiserverUrl}/metrics`,
      { headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 30_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET /metrics: HTTP ${res.statusCode}`))));
      },
    );
    req.on('timeout', () => req.destroy(new Error('GET /metrics timed out')));
    req.on('error', reject);
    req.end();
  });
  return parseRequestTotals(text);
}

/**
 * Drops request keys that only the simulator makes: Lease writes (neither controller writes Leases
 * with `--leader-elect=false`), so baseline noise on the fleet's heartbeats never counts as a
 * controller's request.
 */
export function withoutSimulatorOnly(counts: RequestCounts): RequestCounts {
  return new Map([...counts].filter(([k]) => !(WRITE_VERBS.has(k.split(' ')[0] as string) && k.split(' ')[1] === 'leases')));
}

/** `counts` minus exact known requests (for example the bench's own writes), clamped at 0. */
export function subtractKnown(counts: RequestCounts, known: RequestCounts): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [k, v] of counts) {
    const d = v - (known.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}
