/**
 * Times, durations and rates for people: the formatting the inspection commands (status, explain,
 * shadow-report), the shadow report, what-if and the demo share. Pure; no upstream counterpart.
 */

/**
 * Epoch milliseconds as RFC 3339 with milliseconds, e.g. `2026-01-02T03:04:05.678Z`.
 * @throws never (invalid input gives `invalid`).
 */
export function rfc3339(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? 'invalid' : d.toISOString();
}

/**
 * Seconds from `nowMs` to `atMs`, rounded to 0.1 s (negative when `atMs` is past).
 * @param atMs epoch ms; @param nowMs epoch ms.
 */
export function secondsFromNow(atMs: number, nowMs: number): number {
  return Math.round((atMs - nowMs) / 100) / 10;
}

/**
 * A duration in milliseconds for people: `850ms`, `12.3s`, `4m05s`, `2h03m`, `3d04h`.
 * Negative durations are formatted by magnitude.
 */
export function formatDuration(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)}ms`;
  if (a < 60_000) return `${(Math.floor(a / 100) / 10).toFixed(1)}s`;
  const s = Math.floor(a / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  const m = Math.floor(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
  const h = Math.floor(m / 60);
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/**
 * An ETA relative to now: `in 12.3s`, `now` (within 50 ms either side), `4.0s ago`.
 * @param atMs epoch ms; @param nowMs epoch ms.
 */
export function formatEta(atMs: number, nowMs: number): string {
  const d = atMs - nowMs;
  if (Math.abs(d) < 50) return 'now';
  return d > 0 ? `in ${formatDuration(d)}` : `${formatDuration(d)} ago`;
}

/** A rate in nodes per second without float noise: `0.1`, `1`, `0`. */
export function formatRate(r: number): string {
  return String(Math.round(r * 1000) / 1000);
}
