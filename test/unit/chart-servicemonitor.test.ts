/**
 * The chart's ServiceMonitor scrapes the secure port with a bearer token from a Secret (the
 * Prometheus Operator's `authorization`), not with `bearerTokenFile`, which the operator deprecates
 * (issue 56): by default the chart creates the identity it scrapes with (a ServiceAccount, its token
 * Secret, and RBAC for get on /metrics only, in the ServiceMonitor's namespace); with
 * `authorization.create=false` it uses a Secret the values name, and refuses to render without one.
 * The ServiceMonitor and the PrometheusRule are also decoded strictly into the Prometheus Operator's
 * own Go types (`scripts/go-tool.sh monitoring-check`): kubeconform cannot check these kinds.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHART, helmTemplate, renderChart } from '../support/chart.js';
import { ROOT } from '../support/command.js';

const haveGo = spawnSync('go', ['version']).status === 0;

type Doc = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> } };

interface Endpoint {
  port?: string;
  scheme?: string;
  bearerTokenFile?: string;
  authorization?: { type?: string; credentials?: { name?: string; key?: string } };
}

const endpointsOf = (docs: Doc[]): Endpoint[] => ((docs.find((d) => d.kind === 'ServiceMonitor')?.['spec'] as { endpoints?: Endpoint[] } | undefined)?.endpoints ?? []);

describe('ServiceMonitor authorization', () => {
  test('default: the Bearer token of the chart\'s own metrics scraper, whose RBAC allows get on /metrics only', async () => {
    const docs = (await renderChart(CHART, 'nlc', ['serviceMonitor.enabled=true', 'serviceMonitor.namespace=monitoring'])) as Doc[];
    const [endpoint, ...more] = endpointsOf(docs);
    assert.equal(more.length, 0);
    assert.equal(endpoint?.bearerTokenFile, undefined, 'no deprecated bearerTokenFile');
    assert.deepEqual(endpoint?.authorization, { type: 'Bearer', credentials: { name: 'nlc-node-lifecycle-controller-metrics-scraper-token', key: 'token' } });
    const sa = docs.find((d) => d.kind === 'ServiceAccount' && d.metadata?.name === 'nlc-node-lifecycle-controller-metrics-scraper');
    assert.equal(sa?.metadata?.namespace, 'monitoring', 'beside the ServiceMonitor: the operator reads Secrets in its own namespace');
    assert.equal(sa?.['automountServiceAccountToken'], false);
    const secret = docs.find((d) => d.kind === 'Secret' && d.metadata?.name === endpoint?.authorization?.credentials?.name);
    assert.equal(secret?.['type'], 'kubernetes.io/service-account-token');
    assert.equal(secret?.metadata?.namespace, 'monitoring');
    assert.equal(secret?.metadata?.annotations?.['kubernetes.io/service-account.name'], sa?.metadata?.name);
    const role = docs.find((d) => d.kind === 'ClusterRole' && d.metadata?.name === sa?.metadata?.name);
    assert.deepEqual(role?.['rules'], [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const binding = docs.find((d) => d.kind === 'ClusterRoleBinding' && d.metadata?.name === sa?.metadata?.name);
    assert.deepEqual(binding?.['roleRef'], { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: sa?.metadata?.name });
    assert.deepEqual(binding?.['subjects'], [{ kind: 'ServiceAccount', name: sa?.metadata?.name, namespace: 'monitoring' }]);
  });

  test('create=false: a Secret the values name, and nothing created; without one it does not render', async () => {
    const docs = (await renderChart(CHART, 'nlc', ['serviceMonitor.enabled=true', 'serviceMonitor.authorization.create=false', 'serviceMonitor.authorization.secretName=prom-token', 'serviceMonitor.authorization.key=bearer'])) as Doc[];
    assert.deepEqual(endpointsOf(docs)[0]?.authorization, { type: 'Bearer', credentials: { name: 'prom-token', key: 'bearer' } });
    assert.equal(docs.some((d) => d.metadata?.name?.endsWith('-metrics-scraper')), false);
    const none = await helmTemplate(CHART, 'nlc', ['serviceMonitor.enabled=true', 'serviceMonitor.authorization.create=false']);
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /serviceMonitor\.authorization: set create to true, or secretName/);
  });

  test('without the ServiceMonitor, no scraper identity', async () => {
    const docs = (await renderChart(CHART, 'nlc', [])) as Doc[];
    assert.equal(docs.some((d) => d.kind === 'ServiceMonitor' || d.metadata?.name?.endsWith('-metrics-scraper')), false);
  });
});

describe('the Prometheus Operator\'s own types accept what the chart renders', { skip: haveGo ? false : 'needs the Go toolchain to build monitoring-check' }, () => {
  test('ServiceMonitor (both authorization modes) and PrometheusRule decode strictly; a misspelt field does not', { timeout: 20 * 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nlc-monitoring-check-'));
    try {
      const check = (name: string, text: string) => {
        const file = join(dir, name);
        writeFileSync(file, text);
        return spawnSync('bash', [join(ROOT, 'scripts/go-tool.sh'), 'monitoring-check', file], { encoding: 'utf8', timeout: 20 * 60_000 });
      };
      for (const set of [[], ['serviceMonitor.authorization.create=false', 'serviceMonitor.authorization.secretName=prom-token']]) {
        const r = await helmTemplate(CHART, 'nlc', ['serviceMonitor.enabled=true', 'prometheusRule.enabled=true', 'prometheusRule.disabled.NodeLifecycleControllerTwoLeaders=true', ...set]);
        assert.equal(r.code, 0, r.stderr);
        const ok = check('chart.yaml', r.stdout);
        assert.equal(ok.status, 0, ok.stderr);
        assert.deepEqual(ok.stdout.trim().split('\n').sort(), ['PrometheusRule nlc-node-lifecycle-controller: ok', 'ServiceMonitor nlc-node-lifecycle-controller: ok']);
        const typo = check('typo.yaml', r.stdout.replace('credentials:', 'credential:'));
        assert.equal(typo.status, 1);
        assert.match(typo.stderr, /unknown field "spec\.endpoints\[0\]\.authorization\.credential"/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
