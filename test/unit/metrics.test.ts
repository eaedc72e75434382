import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log/logger.js';
import {
  FORCED_DETACHES_METRIC,
  FORCED_DETACH_REASONS,
  LEGACY_FORCED_DETACHES_METRIC,
  POD_DELETION_DURATION_BUCKETS_SECONDS,
  POD_GC_REASONS,
  createMetrics,
  type Metrics,
} from '../../src/metrics/registry.js';
import { parseBindAddress, startMetricsServer } from '../../src/metrics/server.js';

/** Go's `prometheus.ExponentialBuckets`: start, start*factor, … (repeated multiplication). */
function goExponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, b = start; i < count; i++, b *= factor) out.push(b);
  return out;
}

/** One metric family parsed from the text exposition. */
interface Family {
  help: string;
  type: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { help: '', type: '', samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    let m: RegExpExecArray | null;
    if ((m = /^# HELP (\S+) (.*)$/.exec(line))) family(m[1] ?? '').help = m[2] ?? '';
    else if ((m = /^# TYPE (\S+) (\S+)$/.exec(line))) family(m[1] ?? '').type = m[2] ?? '';
    else if ((m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line))) {
      const name = m[1] ?? '';
      const labels: Record<string, string> = {};
      for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] ?? ''] = l[2] ?? '';
      const base = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
      family(base).samples.push({ name, labels, value: Number(m[3]) });
    }
  }
  return families;
}

/** Touches every labelled metric once so that it appears in the output with its label names. */
function touchAll(m: Metrics): void {
  const nc = m.nodeCollector;
  nc.zoneHealth.set({ zone: 'r\x00z' }, 100);
  nc.zoneSize.set({ zone: 'r\x00z' }, 3);
  nc.unhealthyNodesInZone.set({ zone: 'r\x00z' }, 0);
  nc.evictionsTotal.inc({ zone: 'r\x00z' }, 0);
  nc.zoneTaintingRate.set({ zone: 'r\x00z' }, 0.1);
  nc.zoneEvictionPaused.set({ zone: 'r\x00z', reason: 'partial-disruption' }, 0);
  nc.zoneTaintingQueueLength.set({ zone: 'r\x00z' }, 0);
  m.podGC.forceDeletePodsTotal.inc({ namespace: 'default', reason: 'orphaned' });
  m.podGC.forceDeletePodErrorsTotal.inc({ namespace: 'default', reason: 'out-of-service' });
  m.attachDetach.forcedDetaches.inc({ reason: 'timeout' });
  m.leaderElection.masterStatus.set({ name: 'node-lifecycle-controller' }, 1);
  m.leaderElection.slowpathTotal.inc({ name: 'node-lifecycle-controller' });
  nc.podMarkingHeldNodes.set(0);
  nc.evictionCircuitOpen.set({ guard: 'storm' }, 0);
  nc.evictionCircuitStartHold.set({ guard: 'storm' }, 0);
  m.podGC.liveReadFailuresTotal.inc({ resource: 'node', reason: 'error' }, 0);
  m.attachDetach.liveReadFailuresTotal.inc({ resource: 'volumeattachment', reason: 'unparsable' }, 0);
  m.nodeAffinity.evictions.inc({ result: 'evicted' }, 0);
  m.workqueue.provider.forQueue('node_lifecycle_controller', () => ({ depth: 0, unfinishedWorkSeconds: 0, longestRunningProcessorSeconds: 0 }));
  m.restClient.sink.request('GET', '127.0.0.1:6443', '200', 0.01);
  m.restClient.sink.rateLimiterWait('PATCH', '127.0.0.1:6443', 0);
  m.restClient.sink.wireFallback?.('pods', 'refused');
  m.restClient.sink.wireMalformed?.('pods');
}

describe('metric names, types, labels and buckets match upstream', () => {
  const expected: [name: string, type: string, labels: string[]][] = [
    ['node_collector_zone_health', 'gauge', ['zone']],
    ['node_collector_zone_size', 'gauge', ['zone']],
    ['node_collector_unhealthy_nodes_in_zone', 'gauge', ['zone']],
    ['node_collector_evictions_total', 'counter', ['zone']],
    ['node_collector_update_node_health_duration_seconds', 'histogram', []],
    ['node_collector_update_all_nodes_health_duration_seconds', 'histogram', []],
    ['node_collector_zone_tainting_rate', 'gauge', ['zone']],
    ['node_collector_zone_eviction_paused', 'gauge', ['zone', 'reason']],
    ['node_collector_zone_tainting_queue_length', 'gauge', ['zone']],
    ['node_collector_pod_marking_held_nodes', 'gauge', []],
    ['node_collector_eviction_circuit_open', 'gauge', ['guard']],
    ['node_collector_eviction_circuit_start_hold', 'gauge', ['guard']],
    ['taint_eviction_controller_pod_deletions_total', 'counter', []],
    ['taint_eviction_controller_pod_deletion_duration_seconds', 'histogram', []],
    ['taint_eviction_controller_pending_pod_deletions', 'gauge', []],
    ['taint_eviction_controller_failing_pod_deletions', 'gauge', []],
    ['pod_gc_collector_force_delete_pods_total', 'counter', ['namespace', 'reason']],
    ['pod_gc_collector_force_delete_pod_errors_total', 'counter', ['namespace', 'reason']],
    ['pod_gc_collector_live_read_failures_total', 'counter', ['resource', 'reason']],
    ['attachdetach_controller_forced_detaches', 'counter', ['reason']],
    ['attachdetach_controller_live_read_failures_total', 'counter', ['resource', 'reason']],
    ['attach_detach_controller_attachdetach_controller_forced_detaches', 'counter', ['reason']],
    ['leader_election_master_status', 'gauge', ['name']],
    ['leader_election_slowpath_total', 'counter', ['name']],
    // Our own (src/nodeaffinity/).
    ['node_affinity_enforcer_violating_pods', 'gauge', []],
    ['node_affinity_enforcer_violations_total', 'counter', []],
    ['node_affinity_enforcer_evictions_total', 'counter', ['result']],
    ['node_affinity_enforcer_malformed_rules_total', 'counter', []],
    // component-base (issue 17 item 3).
    ['workqueue_depth', 'gauge', ['name']],
    ['workqueue_adds_total', 'counter', ['name']],
    ['workqueue_queue_duration_seconds', 'histogram', ['name']],
    ['workqueue_work_duration_seconds', 'histogram', ['name']],
    ['workqueue_unfinished_work_seconds', 'gauge', ['name']],
    ['workqueue_longest_running_processor_seconds', 'gauge', ['name']],
    ['workqueue_retries_total', 'counter', ['name']],
    ['rest_client_requests_total', 'counter', ['code', 'method', 'host']],
    ['rest_client_request_duration_seconds', 'histogram', ['verb', 'host']],
    ['rest_client_rate_limiter_duration_seconds', 'histogram', ['verb', 'host']],
    // Our own: the informers' protobuf codec (src/kube/wire.ts).
    ['node_lifecycle_controller_informer_wire_fallback_total', 'counter', ['resource', 'reason']],
    ['node_lifecycle_controller_informer_wire_malformed_total', 'counter', ['resource']],
    // Our counterpart of kubernetes_build_info.
    ['node_lifecycle_controller_build_info', 'gauge', ['version', 'git_commit', 'git_tree_state', 'node_version']],
    // Ours: the continuous second-actor check (src/secondactor/check.ts); every kind starts at 0.
    ['node_lifecycle_second_actor_actions_total', 'counter', ['kind']],
  ];

  test('every metric is exposed with its type and label names', async () => {
    const m = createMetrics({ defaultMetrics: false });
    touchAll(m);
    const families = parseExposition(await m.registry.metrics());
    for (const [name, type, labels] of expected) {
      const f = families.get(name);
      assert.ok(f, `${name} missing`);
      assert.equal(f.type, type, `${name} type`);
      assert.ok(f.help.length > 0, `${name} help`);
      const sample = f.samples.find((s) => !s.name.endsWith('_bucket')) ?? f.samples[0];
      assert.ok(sample, `${name} has a sample`);
      assert.deepEqual(Object.keys(sample.labels).sort(), [...labels].sort(), `${name} labels`);
    }
    assert.deepEqual([...families.keys()].sort(), expected.map(([n]) => n).sort(), 'no other metrics without defaults');
  });

  test('upstream help texts are kept verbatim', async () => {
    const m = createMetrics({ defaultMetrics: false });
    touchAll(m);
    const families = parseExposition(await m.registry.metrics());
    assert.equal(families.get('node_collector_evictions_total')?.help, 'Number of Node evictions that happened since current instance of NodeController started.');
    assert.equal(
      families.get('taint_eviction_controller_pod_deletion_duration_seconds')?.help,
      'Latency, in seconds, between the time when a taint effect has been activated for the Pod and its deletion via TaintEvictionController.',
    );
    assert.equal(families.get('pod_gc_collector_force_delete_pods_total')?.help, 'Number of pods that are being forcefully deleted since the Pod GC Controller started.');
  });

  const bucketsOf = async (m: Metrics, name: string): Promise<number[]> => {
    const f = parseExposition(await m.registry.metrics()).get(name);
    return (f?.samples ?? []).filter((s) => s.name === `${name}_bucket` && s.labels['le'] !== '+Inf').map((s) => Number(s.labels['le']));
  };

  test('NLC histogram buckets are ExponentialBuckets(0.001,4,8) and (0.01,4,8)', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const single = await bucketsOf(m, 'node_collector_update_node_health_duration_seconds');
    assert.deepEqual(single, goExponentialBuckets(0.001, 4, 8));
    assert.equal(single[0], 0.001);
    assert.equal(single.at(-1), 16.384);
    const all = await bucketsOf(m, 'node_collector_update_all_nodes_health_duration_seconds');
    assert.deepEqual(all, goExponentialBuckets(0.01, 4, 8));
    assert.equal(all.at(-1), 163.84);
  });

  test('workqueue durations use ExponentialBuckets(10e-9, 10, 10); rest_client latencies upstream\'s 5 ms … 60 s', async () => {
    const m = createMetrics({ defaultMetrics: false });
    touchAll(m);
    const wq = await bucketsOf(m, 'workqueue_queue_duration_seconds');
    assert.deepEqual(wq, goExponentialBuckets(10e-9, 10, 10));
    assert.equal(wq.length, 10);
    assert.ok(Math.abs((wq.at(-1) ?? 0) - 10) < 1e-9);
    assert.deepEqual(await bucketsOf(m, 'workqueue_work_duration_seconds'), wq);
    const rest = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
    assert.deepEqual(await bucketsOf(m, 'rest_client_request_duration_seconds'), rest);
    assert.deepEqual(await bucketsOf(m, 'rest_client_rate_limiter_duration_seconds'), rest);
  });

  test('taint eviction deletion latency uses the upstream buckets and records seconds', async () => {
    const m = createMetrics({ defaultMetrics: false });
    assert.deepEqual(await bucketsOf(m, 'taint_eviction_controller_pod_deletion_duration_seconds'), [...POD_DELETION_DURATION_BUCKETS_SECONDS]);
    assert.deepEqual([...POD_DELETION_DURATION_BUCKETS_SECONDS], [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240]);
    // A 7.5 s latency (observed in seconds) lands in the le=10 bucket, not le=2.5.
    m.taintEviction.podDeletionDuration.observe(7.5);
    const f = parseExposition(await m.registry.metrics()).get('taint_eviction_controller_pod_deletion_duration_seconds');
    const bucket = (le: string): number | undefined => f?.samples.find((s) => s.name.endsWith('_bucket') && s.labels['le'] === le)?.value;
    assert.equal(bucket('2.5'), 0);
    assert.equal(bucket('10'), 1);
  });

  test('the zone label keeps the raw zone key including \\x00', async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.nodeCollector.evictionsTotal.inc({ zone: 'region\x00zone-a' });
    assert.ok((await m.registry.metrics()).includes('node_collector_evictions_total{zone="region\x00zone-a"} 1'));
  });

  test('default process metrics are registered unless turned off; registries are independent', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.podGC.forceDeletePodsTotal.inc({ namespace: 'ns', reason: 'terminated' });
    const textA = await a.registry.metrics();
    assert.ok(textA.includes('process_cpu_user_seconds_total'));
    assert.ok(textA.includes('process_start_time_seconds'));
    assert.ok(!(await b.registry.metrics()).includes('pod_gc_collector_force_delete_pods_total{'));
    assert.ok(!(await createMetrics({ defaultMetrics: false }).registry.metrics()).includes('process_'));
  });
});

// Every value below is copied from the k8s.io/kubernetes v1.37.2 module source (the file is named
// with each group); docs/upstream-1.37.md lists how they differ from 1.20.
describe('kube-controller-manager 1.37.2 metric names, labels and help texts', () => {
  const upstream137: [file: string, name: string, labels: string[], help: string][] = [
    ['pkg/controller/nodelifecycle/metrics.go', 'node_collector_zone_health', ['zone'], 'Gauge measuring percentage of healthy nodes per zone.'],
    ['pkg/controller/nodelifecycle/metrics.go', 'node_collector_zone_size', ['zone'], 'Gauge measuring number of registered Nodes per zones.'],
    ['pkg/controller/nodelifecycle/metrics.go', 'node_collector_unhealthy_nodes_in_zone', ['zone'], 'Gauge measuring number of not Ready Nodes per zones.'],
    [
      'pkg/controller/nodelifecycle/metrics.go',
      'node_collector_evictions_total',
      ['zone'],
      'Number of Node evictions that happened since current instance of NodeController started.',
    ],
    [
      'pkg/controller/nodelifecycle/metrics.go',
      'node_collector_update_node_health_duration_seconds',
      [],
      'Duration in seconds for NodeController to update the health of a single node.',
    ],
    [
      'pkg/controller/nodelifecycle/metrics.go',
      'node_collector_update_all_nodes_health_duration_seconds',
      [],
      'Duration in seconds for NodeController to update the health of all nodes.',
    ],
    [
      'pkg/controller/tainteviction/metrics/metrics.go',
      'taint_eviction_controller_pod_deletions_total',
      [],
      'Total number of Pods deleted by TaintEvictionController since its start.',
    ],
    [
      'pkg/controller/tainteviction/metrics/metrics.go',
      'taint_eviction_controller_pod_deletion_duration_seconds',
      [],
      'Latency, in seconds, between the time when a taint effect has been activated for the Pod and its deletion via TaintEvictionController.',
    ],
    [
      'pkg/controller/podgc/metrics/metrics.go',
      'pod_gc_collector_force_delete_pods_total',
      ['namespace', 'reason'],
      'Number of pods that are being forcefully deleted since the Pod GC Controller started.',
    ],
    [
      'pkg/controller/podgc/metrics/metrics.go',
      'pod_gc_collector_force_delete_pod_errors_total',
      ['namespace', 'reason'],
      'Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.',
    ],
    [
      'pkg/controller/volume/attachdetach/metrics/metrics.go (Subsystem attach_detach_controller + Name attachdetach_controller_forced_detaches)',
      'attach_detach_controller_attachdetach_controller_forced_detaches',
      ['reason'],
      'Number of times the A/D Controller performed a forced detach',
    ],
    [
      'k8s.io/component-base@v0.37.2 metrics/prometheus/clientgo/leaderelection/metrics.go',
      'leader_election_master_status',
      ['name'],
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    ],
    [
      'k8s.io/component-base@v0.37.2 metrics/prometheus/clientgo/leaderelection/metrics.go',
      'leader_election_slowpath_total',
      ['name'],
      "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
    ],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/workqueue/metrics.go', 'workqueue_depth', ['name'], 'Current depth of workqueue'],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/workqueue/metrics.go', 'workqueue_adds_total', ['name'], 'Total number of adds handled by workqueue'],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/workqueue/metrics.go', 'workqueue_queue_duration_seconds', ['name'], 'How long in seconds an item stays in workqueue before being requested.'],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/workqueue/metrics.go', 'workqueue_work_duration_seconds', ['name'], 'How long in seconds processing an item from workqueue takes.'],
    [
      'k8s.io/component-base@v0.37.2 metrics/prometheus/workqueue/metrics.go',
      'workqueue_unfinished_work_seconds',
      ['name'],
      "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    ],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/workqueue/metrics.go', 'workqueue_longest_running_processor_seconds', ['name'], 'How many seconds has the longest running processor for workqueue been running.'],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/workqueue/metrics.go', 'workqueue_retries_total', ['name'], 'Total number of retries handled by workqueue'],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/restclient/metrics.go', 'rest_client_requests_total', ['code', 'method', 'host'], 'Number of HTTP requests, partitioned by status code, method, and host.'],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/restclient/metrics.go', 'rest_client_request_duration_seconds', ['verb', 'host'], 'Request latency in seconds. Broken down by verb, and host.'],
    ['k8s.io/component-base@v0.37.2 metrics/prometheus/restclient/metrics.go', 'rest_client_rate_limiter_duration_seconds', ['verb', 'host'], 'Client side rate limiter latency in seconds. Broken down by verb, and host.'],
  ];

  test('each upstream metric is exposed under its 1.37.2 name with its labels and help, verbatim', async () => {
    const m = createMetrics({ defaultMetrics: false });
    touchAll(m);
    const families = parseExposition(await m.registry.metrics());
    for (const [file, name, labels, help] of upstream137) {
      const f = families.get(name);
      assert.ok(f, `${name} (${file}) missing`);
      assert.equal(f.help, help, `${name} help (${file})`);
      const sample = f.samples.find((s) => !s.name.endsWith('_bucket')) ?? f.samples[0];
      assert.ok(sample, `${name} has a sample`);
      assert.deepEqual(Object.keys(sample.labels).sort(), [...labels].sort(), `${name} labels (${file})`);
    }
  });

  test('reason label values are the 1.37.2 constants', () => {
    // pkg/controller/podgc/metrics/metrics.go: PodGCReasonTerminated, …TerminatingOutOfService, …Orphaned, …TerminatingUnscheduled
    assert.deepEqual([...POD_GC_REASONS], ['terminated', 'out-of-service', 'orphaned', 'unscheduled']);
    // pkg/controller/volume/attachdetach/metrics/metrics.go: ForceDetachReasonTimeout, ForceDetachReasonOutOfService
    assert.deepEqual([...FORCED_DETACH_REASONS], ['timeout', 'out-of-service']);
  });

  test('node_collector_evictions_number (1.20) is gone, as from 1.37.2 pkg/controller/nodelifecycle/metrics.go', async () => {
    const m = createMetrics({ defaultMetrics: false });
    touchAll(m);
    assert.ok(!(await m.registry.metrics()).includes('node_collector_evictions_number'));
  });

  test('forced detaches: one increment shows under the 1.37.2 name and the pre-1.28 name, equal per reason', async () => {
    assert.equal(FORCED_DETACHES_METRIC, 'attach_detach_controller_attachdetach_controller_forced_detaches');
    assert.equal(LEGACY_FORCED_DETACHES_METRIC, 'attachdetach_controller_forced_detaches');
    const m = createMetrics({ defaultMetrics: false });
    const valuesOf = async (name: string): Promise<Record<string, number>> => {
      const f = parseExposition(await m.registry.metrics()).get(name);
      return Object.fromEntries((f?.samples ?? []).map((s) => [s.labels['reason'] ?? '', s.value]));
    };
    assert.deepEqual(await valuesOf(FORCED_DETACHES_METRIC), {});
    m.attachDetach.forcedDetaches.inc({ reason: 'out-of-service' });
    m.attachDetach.forcedDetaches.inc({ reason: 'out-of-service' });
    m.attachDetach.forcedDetaches.inc({ reason: 'timeout' });
    assert.deepEqual(await valuesOf(FORCED_DETACHES_METRIC), { 'out-of-service': 2, timeout: 1 });
    assert.deepEqual(await valuesOf(LEGACY_FORCED_DETACHES_METRIC), { 'out-of-service': 2, timeout: 1 });
    // Scraping twice must not double the mirrored values.
    m.attachDetach.forcedDetaches.inc({ reason: 'timeout' });
    assert.deepEqual(await valuesOf(FORCED_DETACHES_METRIC), { 'out-of-service': 2, timeout: 2 });
    // A reason seen only at zero still appears under both names.
    const z = createMetrics({ defaultMetrics: false });
    z.attachDetach.forcedDetaches.inc({ reason: 'timeout' }, 0);
    assert.ok((await z.registry.metrics()).includes(`${FORCED_DETACHES_METRIC}{reason="timeout"} 0`));
  });
});

describe('parseBindAddress', () => {
  const ok: [string, string | undefined, number][] = [
    [':10267', undefined, 10267],
    ['0.0.0.0:10267', '0.0.0.0', 10267],
    ['127.0.0.1:0', '127.0.0.1', 0],
    ['[::]:9090', '::', 9090],
    ['[::1]:80', '::1', 80],
    ['localhost:8080', 'localhost', 8080],
  ];
  for (const [text, host, port] of ok) {
    test(`${text}`, () => assert.deepEqual(parseBindAddress(text), { host, port }));
  }
  for (const bad of ['10267', ':', ':65536', ':-1', '::1:80', '1.2.3.4.5:80', '256.1.1.1:80', 'host:80:90', '[zz]:80', 'a b:80', '']) {
    test(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => parseBindAddress(bad)));
  }
});

/** A logger writing into an array, so server logs stay out of the test output and can be inspected. */
function memoryLogger(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: createLogger({ level: 'info', format: 'json', destination: sink }), lines };
}

interface Reply {
  status: number;
  contentType: string;
  body: string;
}

function get(port: number, path: string, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('metrics server (loopback, port 0)', () => {
  test('serves /metrics, /healthz, /readyz and /debug/state and closes', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const { log, lines } = memoryLogger();
    let ready = false;
    let healthy = true;
    const server = await startMetricsServer({
      bindAddress: '127.0.0.1:0',
      metrics,
      isReady: () => ready,
      isHealthy: () => healthy,
      debugState: () => ({ zones: { 'r\x00z': 'Normal' }, leader: true }),
      log,
    });
    try {
      assert.ok(server.port > 0, 'real port returned');
      assert.ok(lines.some((l) => l.includes(`"port":${server.port}`)), 'listen line logged');

      metrics.nodeCollector.evictionsTotal.inc({ zone: 'z1' });
      const m = await get(server.port, '/metrics');
      assert.equal(m.status, 200);
      assert.match(m.contentType, /^text\/plain; version=0\.0\.4/);
      assert.ok(m.body.includes('node_collector_evictions_total{zone="z1"} 1'));

      assert.equal((await get(server.port, '/readyz')).status, 503);
      ready = true;
      assert.equal((await get(server.port, '/readyz')).status, 200);

      assert.equal((await get(server.port, '/healthz')).status, 200);
      healthy = false;
      assert.equal((await get(server.port, '/healthz')).status, 500);

      const state = await get(server.port, '/debug/state');
      assert.equal(state.status, 200);
      assert.match(state.contentType, /^application\/json/);
      assert.deepEqual(JSON.parse(state.body), { zones: { 'r\x00z': 'Normal' }, leader: true });

      assert.equal((await get(server.port, '/nope')).status, 404);
      assert.equal((await get(server.port, '/metrics', 'POST')).status, 405);
      const head = await get(server.port, '/healthz', 'HEAD');
      assert.equal(head.status, 500);
      assert.equal(head.body, '');
    } finally {
      await server.close();
    }
    await assert.rejects(get(server.port, '/healthz'), 'connection refused after close');
    await server.close();
  });

  test('/debug/state is 404 without debugState; /healthz defaults to healthy', async () => {
    const { log } = memoryLogger();
    const server = await startMetricsServer({ bindAddress: '127.0.0.1:0', metrics: createMetrics({ defaultMetrics: false }), isReady: () => true, log });
    try {
      assert.equal((await get(server.port, '/debug/state')).status, 404);
      assert.equal((await get(server.port, '/healthz')).status, 200);
    } finally {
      await server.close();
    }
  });

  test('a port in use or a malformed address rejects', async () => {
    const { log } = memoryLogger();
    const metrics = createMetrics({ defaultMetrics: false });
    const first = await startMetricsServer({ bindAddress: '127.0.0.1:0', metrics, isReady: () => true, log });
    try {
      await assert.rejects(startMetricsServer({ bindAddress: `127.0.0.1:${first.port}`, metrics, isReady: () => true, log }), /cannot listen/);
      await assert.rejects(startMetricsServer({ bindAddress: 'nonsense', metrics, isReady: () => true, log }));
    } finally {
      await first.close();
    }
  });
});
