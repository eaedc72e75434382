/** bench/lib/etcddisk.ts: etcd's disk histograms read from /metrics text and differenced over a phase. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdDiskBetween, latencyBetween, parseHistogram } from '../../bench/lib/etcddisk.js';

const reading = (fsync: [string, number][], sum: number, commit = 0): string =>
  [
    '# HELP etcd_disk_wal_fsync_duration_seconds The latency distributions of fsync called by WAL.',
    '# TYPE etcd_disk_wal_fsync_duration_seconds histogram',
    ...fsync.map(([le, n]) => `etcd_disk_wal_fsync_duration_seconds_bucket{le="${le}"} ${n}`),
    `etcd_disk_wal_fsync_duration_seconds_sum ${sum}`,
    `etcd_disk_wal_fsync_duration_seconds_count ${fsync.at(-1)?.[1] ?? 0}`,
    `etcd_disk_backend_commit_duration_seconds_bucket{le="0.001"} ${commit}`,
    `etcd_disk_backend_commit_duration_seconds_bucket{le="+Inf"} ${commit}`,
    `etcd_disk_backend_commit_duration_seconds_sum ${commit * 0.0005}`,
    `etcd_disk_backend_commit_duration_seconds_count ${commit}`,
  ].join('\n');

test('parseHistogram reads buckets (with +Inf), sum and count of one histogram only', () => {
  const h = parseHistogram(reading([['0.001', 10], ['0.002', 15], ['+Inf', 16]], 0.05), 'etcd_disk_wal_fsync_duration_seconds');
  assert.deepEqual(h, { buckets: [{ le: 0.001, count: 10 }, { le: 0.002, count: 15 }, { le: Infinity, count: 16 }], sum: 0.05, count: 16 });
  assert.deepEqual(parseHistogram('', 'etcd_disk_wal_fsync_duration_seconds'), { buckets: [], sum: 0, count: 0 });
});

test('latencyBetween counts only the phase: mean in ms and the p99 bucket bound of the new samples', () => {
  const before = parseHistogram(reading([['0.001', 1000], ['0.008', 1000], ['+Inf', 1000]], 0.5), 'etcd_disk_wal_fsync_duration_seconds');
  // 100 new fsyncs: 98 under 1 ms and 2 between 1 and 8 ms; 0.2 s more in all.
  const after = parseHistogram(reading([['0.001', 1098], ['0.008', 1100], ['+Inf', 1100]], 0.7), 'etcd_disk_wal_fsync_duration_seconds');
  assert.deepEqual(latencyBetween(before, after), { count: 100, meanMs: 2, p99UpperMs: 8 });
  assert.deepEqual(latencyBetween(after, after), { count: 0, meanMs: 0, p99UpperMs: 0 }, 'no samples: no figure');
  const slow = parseHistogram(reading([['0.001', 1000], ['0.008', 1000], ['+Inf', 1100]], 10.5), 'etcd_disk_wal_fsync_duration_seconds');
  assert.equal(latencyBetween(before, slow).p99UpperMs, Infinity, 'beyond the last finite bucket');
});

test('etcdDiskBetween reports WAL fsync and backend commit side by side', () => {
  const w = (n: number, commits: number): string => reading([['0.001', n], ['+Inf', n]], n * 0.0004, commits);
  const text0 = w(10, 4);
  const text1 = w(30, 8);
  const r = (t: string) => ({ walFsync: parseHistogram(t, 'etcd_disk_wal_fsync_duration_seconds'), backendCommit: parseHistogram(t, 'etcd_disk_backend_commit_duration_seconds') });
  assert.deepEqual(etcdDiskBetween(r(text0), r(text1)), {
    walFsyncMs: { count: 20, meanMs: 0.4, p99UpperMs: 1 },
    backendCommitMs: { count: 4, meanMs: 0.5, p99UpperMs: 1 },
  });
});
