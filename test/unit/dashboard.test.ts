/**
 * The chart's Grafana dashboard (issue 17 item 4): its shape (a Prometheus data source variable, a
 * job filter on every selector, panels on the grid without overlap, the panels the issue asks for),
 * the PromQL name extraction the scrape test relies on, and every metric name it queries registered
 * by the program. test/integration/dashboard.test.ts checks the same names against a running
 * controller's /metrics.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  dashboardExprs,
  dashboardPanels,
  exposedFamilies,
  labelValuesQuery,
  metricFamily,
  metricNamesInPromQL,
  readDashboard,
  substituteVariables,
  type Dashboard,
} from '../../bench/dashboard/dashboard.js';
import { formatValue, legend, renderDashboard } from '../../bench/dashboard/render.js';
import { silentLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { ShadowDecisionLog } from '../../src/shadow/decisions.js';
import { FakeClock } from '../../src/util/clock.js';

const dashboard: Dashboard = await readDashboard();

describe('metricNamesInPromQL', () => {
  const cases: [expr: string, names: string[]][] = [
    ['up', ['up']],
    ['sum by (zone) (rate(node_collector_evictions_total{job=~"$job"}[$__rate_interval]))', ['node_collector_evictions_total']],
    [
      'histogram_quantile(0.99, sum by (le, verb) (rate(rest_client_rate_limiter_duration_seconds_bucket{job="a",verb!~"GET|LIST"}[5m]))) > 1e3',
      ['rest_client_rate_limiter_duration_seconds_bucket'],
    ],
    ['(max(a{name="x y"}) == 0) or absent(a{name="by (b)"})', ['a']],
    ['max by (zone) (u) / on (zone) group_left (region) max by (zone) (s) >= bool $threshold', ['u', 's']],
    ['sum without (instance) (b offset 5m) unless ignoring (le) c', ['b', 'c']],
    ['rate(x[5m:30s]) and bool_like_metric', ['x', 'bool_like_metric']],
    ['label_replace(m, "dst", "$1", "src", "(.*)")', ['m']],
  ];
  for (const [expr, names] of cases) {
    test(expr, () => assert.deepEqual(metricNamesInPromQL(expr), names));
  }
});

describe('metricFamily', () => {
  const types = new Map([
    ['h_seconds', 'histogram'],
    ['s_seconds', 'summary'],
    ['c_total', 'counter'],
    ['g_count', 'gauge'],
  ]);
  test('a histogram series maps to its family; a counter or gauge only to itself', () => {
    assert.equal(metricFamily('h_seconds_bucket', types), 'h_seconds');
    assert.equal(metricFamily('h_seconds_sum', types), 'h_seconds');
    assert.equal(metricFamily('s_seconds_count', types), 's_seconds');
    assert.equal(metricFamily('s_seconds_bucket', types), undefined);
    assert.equal(metricFamily('c_total', types), 'c_total');
    assert.equal(metricFamily('c_total_sum', types), undefined);
    assert.equal(metricFamily('g_count', types), 'g_count');
    assert.equal(metricFamily('g', types), undefined);
  });
});

describe('the Grafana dashboard', () => {
  const panels = dashboardPanels(dashboard);

  test('picks its Prometheus with a data source variable, which every panel and query uses', () => {
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    assert.ok(ds, 'no data source variable');
    assert.equal(ds.query, 'prometheus');
    for (const p of panels) {
      assert.deepEqual(p.datasource, { type: 'prometheus', uid: `\${${ds.name}}` }, p.title);
      for (const t of p.targets ?? []) assert.deepEqual(t.datasource, p.datasource, `${p.title} ${t.refId}`);
    }
  });

  test('every panel has a title, a description and queries with distinct refIds', () => {
    assert.ok(panels.length >= 15, `${panels.length} panels`);
    const every = [...new Set([...dashboard.panels, ...panels])];
    assert.equal(new Set(every.map((p) => p.id)).size, every.length, 'panel ids are unique');
    for (const p of panels) {
      assert.ok(p.title.length > 0);
      assert.ok((p.description ?? '').length > 20, `${p.title} has no description`);
      const targets = p.targets ?? [];
      assert.ok(targets.length > 0, `${p.title} has no query`);
      assert.equal(new Set(targets.map((t) => t.refId)).size, targets.length, `${p.title}: duplicate refId`);
      for (const t of targets) assert.ok(t.expr.trim().length > 0 && (t.legendFormat ?? '').length > 0, `${p.title} ${t.refId}`);
    }
  });

  test('has the panels issue 17 asks for', () => {
    const titles = panels.map((p) => p.title);
    for (const title of [
      'Zone state',
      'Unhealthy nodes per zone',
      'NoExecute tainting rate',
      'NoExecute tainting queue',
      'Nodes tainted NoExecute',
      'Pending pod deletions',
      'Evictions (pod deletions)',
      'Force deletes (pod GC)',
      'Force detaches',
      'Pauses and why',
      'Leader',
      'Write throttle delay',
      'Workqueue depth',
      'Shadow mode decisions',
    ]) {
      assert.ok(titles.includes(title), `no panel "${title}"`);
    }
  });

  test('panels lie on the 24-column grid without overlapping', () => {
    const all = [...new Set([...dashboard.panels, ...panels])];
    for (const p of all) {
      const { x, y, w, h } = p.gridPos;
      assert.ok(x >= 0 && w > 0 && x + w <= 24 && y >= 0 && h > 0, `${p.title} ${JSON.stringify(p.gridPos)}`);
    }
    for (const [i, a] of all.entries()) {
      for (const b of all.slice(i + 1)) {
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x || b.gridPos.x + b.gridPos.w <= a.gridPos.x || a.gridPos.y + a.gridPos.h <= b.gridPos.y || b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        assert.ok(apart, `"${a.title}" overlaps "${b.title}"`);
      }
    }
  });

  test('every metric selector is filtered by the job variable', () => {
    for (const p of panels) {
      for (const t of p.targets ?? []) {
        for (const name of metricNamesInPromQL(t.expr)) {
          const uses = [...t.expr.matchAll(new RegExp(`\\b${name}\\b(.?)`, 'g'))];
          for (const u of uses) assert.equal(u[1], '{', `${p.title}: ${name} without a label matcher`);
          assert.equal(t.expr.split(`${name}{job=~"$job"`).length - 1, uses.length, `${p.title}: ${name} not filtered by job=~"$job"`);
        }
      }
    }
  });

  test('the job variable\'s All selects only jobs that serve node_lifecycle_controller_build_info, never every job', () => {
    // kube-controller-manager, kube-scheduler and every client-go program serve rest_client_* and
    // workqueue_* too: an allValue such as .+ would mix their series into the panels.
    const job = dashboard.templating.list.find((v) => v.name === 'job');
    assert.ok(job?.includeAll);
    assert.equal(job.allValue, undefined);
    assert.deepEqual(labelValuesQuery(job), { match: 'node_lifecycle_controller_build_info', label: 'job' });
  });

  test('every variable a query uses is defined; the renderer substitutes them', () => {
    const options = new Map([['job', ['nlc', 'a.b']]]);
    for (const expr of dashboardExprs(dashboard)) {
      const out = substituteVariables(expr, dashboard, '15s', options);
      assert.doesNotMatch(out, /\$/, out);
    }
    assert.equal(substituteVariables('x{job=~"$job"} > $unhealthy_zone_threshold', dashboard, '1m', options), 'x{job=~"(nlc|a\\\\.b)"} > 0.55');
    assert.throws(() => substituteVariables('x{job=~"$job"}', dashboard, '1m'), /\$job is All, and its values are not known/);
    assert.throws(() => substituteVariables('x > $nope', dashboard, '1m', options), /\$nope is not a variable/);
  });

  test('queries only metrics the program registers (histogram series by their family)', async () => {
    const registry = createMetrics({ defaultMetrics: false }).registry;
    // The shadow's two counters are registered only with --dry-run.
    new ShadowDecisionLog({ clock: new FakeClock(0), log: silentLogger, registry });
    const types = exposedFamilies(await registry.metrics());
    const names = [...new Set(dashboardExprs(dashboard).flatMap(metricNamesInPromQL))];
    assert.ok(names.length >= 20, names.join(', '));
    for (const name of names) assert.ok(metricFamily(name, types), `the dashboard queries ${name}, which the program does not register`);
    // Without --dry-run the shadow's counters are absent; the panel says so.
    const plain = exposedFamilies(await createMetrics({ defaultMetrics: false }).registry.metrics());
    assert.equal(plain.has('node_lifecycle_controller_dry_run_decisions_total'), false);
  });
});

describe('the renderer behind docs/dashboard.png (bench/dashboard/render.ts)', () => {
  test('legends fill {{label}} and drop control characters (upstream zone keys hold a NUL)', () => {
    assert.equal(legend('{{zone}} not Ready', { zone: 'region-1:\x00:zone-a' }), 'region-1::zone-a not Ready');
    assert.equal(legend('{{method}} {{code}}', { method: 'PATCH' }), 'PATCH');
  });

  test('values in the panel unit', () => {
    assert.equal(formatValue(100, 'percent'), '100%');
    assert.equal(formatValue(0.25, 's'), '250 ms');
    assert.equal(formatValue(2.5, 's'), '2.5 s');
    assert.equal(formatValue(3, 'reqps'), '3 req/s');
    assert.equal(formatValue(0.0123, 'short'), '0.012');
  });

  test('every panel is drawn from the answer to its own substituted queries; a query Prometheus rejects fails the page', async () => {
    const asked: string[] = [];
    let reject = false;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const q = url.searchParams;
      res.setHeader('content-type', 'application/json');
      if (url.pathname === '/api/v1/label/job/values') {
        assert.equal(q.get('match[]'), 'node_lifecycle_controller_build_info');
        return void res.end(JSON.stringify({ status: 'success', data: ['nlc'] }));
      }
      asked.push(q.get('query') ?? '');
      if (reject) return void res.end(JSON.stringify({ status: 'error', error: 'parse error' }));
      // Only the zone health query has data: the other panels say "No data".
      const data = (q.get('query') ?? '').startsWith('max by (zone) (node_collector_zone_health')
        ? [{ metric: { zone: 'region-1:\x00:zone-a' }, values: [[100, '100'], [101, '90'], [102, 'NaN'], [103, '80']] }]
        : [];
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: data } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const prometheus = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const opts = { prometheus, fromS: 100, toS: 103, stepS: 1, rateInterval: '10s', caption: 'test & caption' };
      const page = await renderDashboard(dashboard, opts);
      const targets = dashboardPanels(dashboard).flatMap((p) => p.targets ?? []);
      assert.equal(asked.length, targets.length);
      assert.deepEqual(asked, targets.map((t) => substituteVariables(t.expr, dashboard, '10s', new Map([['job', ['nlc']]]))));
      assert.ok(asked.every((a) => !a.includes('job=~') || a.includes('job=~"(nlc)"')));
      for (const p of dashboardPanels(dashboard)) assert.ok(page.html.includes(`<div class="title">${p.title.replace(/&/g, '&amp;')}</div>`), p.title);
      assert.equal(page.html.split('No data').length - 1, dashboardPanels(dashboard).length - 1);
      assert.match(page.html, /region-1::zone-a/);
      assert.match(page.html, /test &amp; caption/);
      // The NaN sample breaks the line: two pieces.
      assert.match(page.html, /<path d="M[^"]*L[^"M]*M[^"]*"/);
      assert.equal(page.width, 1600);
      assert.ok(page.height > 1000);
      reject = true;
      await assert.rejects(renderDashboard(dashboard, opts), /Prometheus rejected .*parse error/);
    } finally {
      server.close();
    }
  });
});
