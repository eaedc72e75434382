/**
 * What differs between Kubernetes minors is decided from the API server's /version
 * (src/controllers/serverdecisions.ts, src/kube/serverversion.ts): one test per decision, over
 * every supported minor, plus the reading of /version itself (retried while the server is
 * unavailable, given up on a refusal).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decideForServer } from '../../src/controllers/serverdecisions.js';
import { kubeControllerManagerDisableFlags } from '../../src/controllers/names.js';
import { parseServerVersion, readServerVersion, type ServerVersion } from '../../src/kube/serverversion.js';
import { DEFAULT_FEATURE_GATES, parseControllerFlags, parseFeatureGates } from '../../src/cli/flags.js';
import type { FeatureGates } from '../../src/controllers/config.js';
import { kubeConfigFor } from '../support/hung-server.js';
import type { Logger } from '../../src/log/logger.js';

const v = (minor: number): ServerVersion => ({ gitVersion: `v1.${minor}.0`, major: 1, minor });
const MINORS = [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37];
const defaults = { featureGates: { ...DEFAULT_FEATURE_GATES } };
const gates = (g: Partial<FeatureGates>): { featureGates: FeatureGates; explicitFeatureGates: (keyof FeatureGates)[] } => ({
  featureGates: { ...DEFAULT_FEATURE_GATES, ...g },
  explicitFeatureGates: Object.keys(g) as (keyof FeatureGates)[],
});

describe('parseServerVersion', () => {
  test('reads major and minor, a managed "27+" minor, and falls back to gitVersion', () => {
    assert.deepEqual(parseServerVersion({ major: '1', minor: '34', gitVersion: 'v1.34.4' }), { gitVersion: 'v1.34.4', major: 1, minor: 34 });
    assert.deepEqual(parseServerVersion({ major: '1', minor: '27+', gitVersion: 'v1.27.3-gke.100' }), { gitVersion: 'v1.27.3-gke.100', major: 1, minor: 27 });
    assert.deepEqual(parseServerVersion({ major: '', minor: '', gitVersion: 'v1.20.2' }), { gitVersion: 'v1.20.2', major: 1, minor: 20 });
    assert.equal(parseServerVersion({ gitVersion: 'unknown' }), undefined);
    assert.equal(parseServerVersion('not an object'), undefined);
  });
});

describe('decideForServer', () => {
  test("controller names: kube-controller-manager's canonical names from 1.29, the short aliases before, both when unknown", () => {
    const { canonical, short } = kubeControllerManagerDisableFlags();
    for (const m of MINORS) assert.equal(decideForServer(v(m), defaults).kubeControllerManagerFlags, m >= 29 ? canonical : short, `1.${m}`);
    assert.match(short, /-nodelifecycle/);
    assert.doesNotMatch(short, /taint-eviction-controller/, 'before 1.29 that name is unknown and stops kube-controller-manager');
    assert.match(canonical, /-taint-eviction-controller/);
    assert.equal(decideForServer(undefined, defaults).kubeControllerManagerFlags, undefined);
  });

  test('watch-list: not tried below 1.27 (every such server refuses it), tried from 1.27, never with KUBE_FEATURE_WatchListClient=false', () => {
    for (const m of MINORS) assert.equal(decideForServer(v(m), defaults, {}).watchList, m >= 27, `1.${m}`);
    for (const m of MINORS) assert.equal(decideForServer(v(m), defaults, { KUBE_FEATURE_WatchListClient: 'false' }).watchList, false, `1.${m}`);
    assert.equal(decideForServer(undefined, defaults, {}).watchList, true, 'unknown server: tried, the informer falls back when refused');
  });

  test('watch-list: --feature-gates=WatchListClient (how kube-controller-manager takes client-go\'s gates) wins over KUBE_FEATURE_WatchListClient', () => {
    for (const m of MINORS) assert.equal(decideForServer(v(m), gates({ WatchListClient: false }), {}).watchList, false, `1.${m} gate off`);
    for (const m of MINORS) assert.equal(decideForServer(v(m), gates({ WatchListClient: true }), { KUBE_FEATURE_WatchListClient: 'false' }).watchList, m >= 27, `1.${m} gate on, variable off`);
    assert.equal(decideForServer(v(37), gates({ WatchListClient: false }), {}).reasons.watchList, '--feature-gates WatchListClient=false');
  });

  test('DisruptionTarget: off below 1.26 (one write per eviction, as that kube-controller-manager), on from 1.26; an explicit gate wins', () => {
    for (const m of MINORS) assert.equal(decideForServer(v(m), defaults).disruptionConditions, m >= 26, `1.${m}`);
    for (const m of MINORS) assert.equal(decideForServer(v(m), gates({ PodDisruptionConditions: true })).disruptionConditions, true, `1.${m} explicit on`);
    for (const m of MINORS) assert.equal(decideForServer(v(m), gates({ PodDisruptionConditions: false })).disruptionConditions, false, `1.${m} explicit off`);
    assert.equal(decideForServer(undefined, defaults).disruptionConditions, true, 'unknown server: the flag (default on)');
    assert.match(decideForServer(v(25), defaults).reasons.disruptionConditions, /before 1\.26/);
  });

  test('Lease circuit breaker: on for every minor unless the flag switches it off (off would act sooner than v1.37.2)', () => {
    for (const m of MINORS) assert.equal(decideForServer(v(m), defaults).leaseCircuitBreaker, true, `1.${m}`);
    for (const m of MINORS) assert.equal(decideForServer(v(m), gates({ NodeControllerLeaseCircuitBreaker: false })).leaseCircuitBreaker, false, `1.${m}`);
    assert.equal(decideForServer(undefined, defaults).leaseCircuitBreaker, true);
  });

  test('--feature-gates records which gates it names; an unnamed gate follows the server', async () => {
    assert.deepEqual(parseFeatureGates('').explicit, []);
    assert.deepEqual(parseFeatureGates(' PodDisruptionConditions=true , NodeControllerLeaseCircuitBreaker=false,PodDisruptionConditions=true').explicit, ['NodeControllerLeaseCircuitBreaker', 'PodDisruptionConditions']);
    const named = await parseControllerFlags(['--feature-gates=PodDisruptionConditions=true']);
    assert.deepEqual(named.explicitFeatureGates, ['PodDisruptionConditions']);
    assert.equal(decideForServer(v(20), named).disruptionConditions, true);
    const unnamed = await parseControllerFlags([]);
    assert.equal(unnamed.explicitFeatureGates, undefined);
    assert.equal(decideForServer(v(20), unnamed).disruptionConditions, false);
  });
});

const quiet: Logger = { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Logger;

/** A loopback HTTP server answering GET /version with `answers` in turn (the last one repeats). */
async function versionServer(answers: { status: number; body: unknown }[]): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    const a = answers[Math.min(hits, answers.length - 1)] ?? { status: 500, body: {} };
    hits++;
    assert.equal(req.url, '/version');
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, hits: () => hits };
}

describe('readServerVersion', () => {
  test('retries a 503, then returns the version', async () => {
    const s = await versionServer([{ status: 503, body: { kind: 'Status', code: 503 } }, { status: 200, body: { major: '1', minor: '35', gitVersion: 'v1.35.4' } }]);
    try {
      const got = await readServerVersion({ kubeConfig: kubeConfigFor(s.port) }, quiet, new AbortController().signal);
      assert.deepEqual(got, { gitVersion: 'v1.35.4', major: 1, minor: 35 });
      assert.equal(s.hits(), 2);
    } finally {
      s.server.close();
    }
  });

  test('a 403 ends the reading with no version (decided as for an unknown server)', async () => {
    const s = await versionServer([{ status: 403, body: { kind: 'Status', code: 403 } }]);
    try {
      assert.equal(await readServerVersion({ kubeConfig: kubeConfigFor(s.port) }, quiet, new AbortController().signal), undefined);
      assert.equal(s.hits(), 1);
    } finally {
      s.server.close();
    }
  });

  test('an abort ends the retries', async () => {
    const s = await versionServer([{ status: 503, body: {} }]);
    const abort = new AbortController();
    try {
      const reading = readServerVersion({ kubeConfig: kubeConfigFor(s.port) }, quiet, abort.signal);
      await new Promise((r) => setTimeout(r, 200));
      abort.abort();
      assert.equal(await reading, undefined);
    } finally {
      s.server.close();
    }
  });
});
