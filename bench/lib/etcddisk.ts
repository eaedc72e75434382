/**
 * How long the private control plane's etcd waits for its disk, from etcd's own histograms
 * `etcd_disk_wal_fsync_duration_seconds` (each WAL fsync: every commit, with fsync on) and
 * `etcd_disk_backend_commit_duration_seconds` (bbolt commits). Read before and after a phase, so a
 * failure wave's watch lag can be laid beside the disk wait of the writes it watched
 * (`--realistic-etcd`, issue 29).
 */
import { parseLabels } from './apimetrics.js';

/** One Prometheus histogram: cumulative bucket counts by upper bound (seconds), sum (s) and count. */
export interface Histogram {
  buckets: { le: number; count: number }[];
  sum: number;
  count: number;
}

/** A phase's disk waits: how many, their mean and the p99's bucket upper bound, in milliseconds. */
export interface DiskLatency {
  count: number;
  meanMs: number;
  /** the upper bound of the bucket holding the 99th percentile (Infinity when it is the +Inf bucket); 0 with no samples */
  p99UpperMs: number;
}

/** The disk figures of one phase. */
export interface EtcdDiskFigures {
  walFsyncMs: DiskLatency;
  backendCommitMs: DiskLatency;
}

/**
 * Reads histogram `name` from a `/metrics` text. Pure.
 * @returns buckets sorted by upper bound; an empty histogram when `name` is absent.
 */
export function parseHistogram(metricsText: string, name: string): Histogram {
  const h: Histogram = { buckets: [], sum: 0, count: 0 };
  for (const line of metricsText.split('\n')) {
    if (line.startsWith(`${name}_bucket{`)) {
      const close = line.lastIndexOf('}');
      const le = parseLabels(line.slice(name.length + '_bucket{'.length, close))['le'];
      const count = Number(line.slice(close + 1).trim().split(/\s+/)[0]);
      if (le === undefined || !Number.isFinite(count)) continue;
      h.buckets.push({ le: le === '+Inf' ? Infinity : Number(le), count });
    } else if (line.startsWith(`${name}_sum `)) h.sum = Number(line.slice(name.length + 5).trim());
    else if (line.startsWith(`${name}_count `)) h.count = Number(line.slice(name.length + 7).trim());
  }
  h.buckets.sort((a, b) => a.le - b.le);
  return h;
}

/**
 * The samples a histogram gained between two readings. Pure.
 * @param before the earlier reading; @param after the later one (same bucket bounds).
 * @returns count, mean (ms) and the 99th percentile's bucket upper bound (ms).
 */
export function latencyBetween(before: Histogram, after: Histogram): DiskLatency {
  const count = after.count - before.count;
  if (count <= 0) return { count: 0, meanMs: 0, p99UpperMs: 0 };
  const earlier = new Map(before.buckets.map((b) => [b.le, b.count]));
  const p99 = after.buckets.find((b) => b.count - (earlier.get(b.le) ?? 0) >= 0.99 * count);
  return {
    count,
    meanMs: Math.round(((after.sum - before.sum) / count) * 1e6) / 1e3,
    p99UpperMs: p99 ? p99.le * 1000 : Infinity,
  };
}

/** Both of etcd's disk histograms from one `/metrics` reading. */
export interface EtcdDiskReading {
  walFsync: Histogram;
  backendCommit: Histogram;
}

/**
 * Reads etcd's `/metrics` (plain HTTP on the client URL).
 * @param etcdUrl e.g. `http://127.0.0.1:2379`.
 * @throws {Error} on a network error, a non-200 answer or after 10 s.
 */
export async function scrapeEtcdDisk(etcdUrl: string): Promise<EtcdDiskReading> {
  const res = await fetch(`${etcdUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${etcdUrl}/metrics: HTTP ${res.status}`);
  const text = await res.text();
  return { walFsync: parseHistogram(text, 'etcd_disk_wal_fsync_duration_seconds'), backendCommit: parseHistogram(text, 'etcd_disk_backend_commit_duration_seconds') };
}

/** The disk waits between two readings. Pure. */
export function etcdDiskBetween(before: EtcdDiskReading, after: EtcdDiskReading): EtcdDiskFigures {
  return { walFsyncMs: latencyBetween(before.walFsync, after.walFsync), backendCommitMs: latencyBetween(before.backendCommit, after.backendCommit) };
}
