/**
 * The secure port's decision and caches (src/metrics/delegation.ts) with FakeClock and a recording
 * ReviewApi; the always-allow path table ported from upstream `authorization/path/path_test.go`
 * (`TestNewAuthorizer`); the HTTPS server with an access check (src/metrics/server.ts); the serving
 * certificate (src/metrics/tls.ts); `startServing` (src/metrics/serving.ts) start-up failures.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import {
  DEFAULT_ALWAYS_ALLOW_PATHS,
  DelegatedAccess,
  alwaysAllowPathMatcher,
  bearerToken,
  type ReviewApi,
  type ReviewedUser,
} from '../../src/metrics/delegation.js';
import { startMetricsServer } from '../../src/metrics/server.js';
import { secureListenAddress, startServing, type ServingConfig } from '../../src/metrics/serving.js';
import { SELF_SIGNED_VALIDITY_MS, selfSignedCertificate, servingCertificate } from '../../src/metrics/tls.js';

/** A ReviewApi that answers from tables and records every review it was asked for. */
class RecordingReviews implements ReviewApi {
  readonly tokenReviews: string[] = [];
  readonly accessReviews: { user: string; path: string; verb: string }[] = [];
  /** token → user (absent: not authenticated). */
  users = new Map<string, ReviewedUser>();
  /** `${username} ${verb} ${path}` that are allowed. */
  allowed = new Set<string>();
  failTokenReviews = false;
  failAccessReviews = false;

  reviewToken(token: string): Promise<ReviewedUser | undefined> {
    this.tokenReviews.push(token);
    if (this.failTokenReviews) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443'));
    return Promise.resolve(this.users.get(token));
  }

  reviewAccess(user: ReviewedUser, path: string, verb: string): Promise<boolean> {
    this.accessReviews.push({ user: user.username, path, verb });
    if (this.failAccessReviews) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443'));
    return Promise.resolve(this.allowed.has(`${user.username} ${verb} ${path}`));
  }
}

const user = (username: string, groups: string[] = ['system:authenticated']): ReviewedUser => ({ username, uid: `uid-${username}`, groups, extra: {} });

/** A logger that keeps its warnings. */
function recordingLog(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { ...silentLogger, warnings, warn: (_obj: object, msg: string) => void warnings.push(msg) };
}

function setup(ttls: { token?: number; allow?: number; deny?: number } = {}) {
  const clock = new FakeClock(1_700_000_000_000);
  const reviews = new RecordingReviews();
  reviews.users.set('reader-token', user('reader'));
  reviews.users.set('nobody-token', user('nobody'));
  reviews.users.set('admin-token', user('admin', ['system:masters', 'system:authenticated']));
  reviews.allowed.add('reader get /debug/state');
  reviews.allowed.add('reader get /metrics');
  const log = recordingLog();
  const access = new DelegatedAccess({
    api: reviews,
    clock,
    tokenCacheTtlMs: ttls.token ?? 10_000,
    allowCacheTtlMs: ttls.allow ?? 10_000,
    denyCacheTtlMs: ttls.deny ?? 10_000,
    alwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS,
    log,
  });
  return { clock, reviews, access, log };
}

describe('alwaysAllowPathMatcher (upstream TestNewAuthorizer)', () => {
  const cases: { name: string; paths: string[]; allowed: string[]; notAllowed: string[]; wantErr: boolean }[] = [
    { name: 'inner star', paths: ['/foo*bar'], allowed: [], notAllowed: [], wantErr: true },
    { name: 'double star', paths: ['/foo**'], allowed: [], notAllowed: [], wantErr: true },
    { name: 'empty', paths: [], allowed: [], notAllowed: ['/'], wantErr: false },
    { name: 'slash', paths: ['/'], allowed: ['/'], notAllowed: ['/foo', '//'], wantErr: false },
    { name: 'foo', paths: ['/foo'], allowed: ['/foo', 'foo'], notAllowed: ['/', '', '/bar', '/foo/', '/fooooo', '//foo'], wantErr: false },
    { name: 'foo slash', paths: ['/foo/'], allowed: ['/foo/'], notAllowed: ['/', '', '/bar', '/foo', '/fooooo'], wantErr: false },
    { name: 'foo slash star', paths: ['/foo/*'], allowed: ['/foo/', '/foo/bar/bla'], notAllowed: ['/', '', '/foo', '/bar', '/fooooo'], wantErr: false },
    { name: 'foo bar', paths: ['/foo', '/bar'], allowed: ['/foo', '/bar'], notAllowed: ['/', '', '/foo/', '/bar/', '/fooooo'], wantErr: false },
    { name: 'foo star', paths: ['/foo*'], allowed: ['/foo', '/foooo'], notAllowed: ['/', '', '/fo', '/bar'], wantErr: false },
    { name: 'star', paths: ['/*'], allowed: ['/', '', '/foo', '/foooo'], notAllowed: [], wantErr: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      if (c.wantErr) {
        assert.throws(() => alwaysAllowPathMatcher(c.paths), /only a trailing \*/);
        return;
      }
      const match = alwaysAllowPathMatcher(c.paths);
      for (const p of c.allowed) assert.equal(match(p), true, `${JSON.stringify(c.paths)} allows ${JSON.stringify(p)}`);
      for (const p of c.notAllowed) assert.equal(match(p), false, `${JSON.stringify(c.paths)} does not allow ${JSON.stringify(p)}`);
    });
  }
});

describe('bearerToken', () => {
  test('takes the token of a Bearer header (scheme case-insensitive); anything else has none', () => {
    assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
    assert.equal(bearerToken('bearer abc'), 'abc');
    assert.equal(bearerToken('BEARER  abc '), 'abc');
    for (const h of [undefined, '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwdw==', 'Bearer a b', 'abc']) assert.equal(bearerToken(h), undefined, String(h));
  });
});

describe('DelegatedAccess: decisions', () => {
  test('always-allow paths are served without a token and without asking the API server', async () => {
    const { access, reviews } = setup();
    for (const p of ['/healthz', '/readyz', '/livez']) assert.deepEqual(await access.check(p, 'get', undefined), { allowed: true, user: undefined });
    reviews.failTokenReviews = true;
    assert.equal((await access.check('/healthz', 'get', 'Bearer garbage')).allowed, true, 'even with a bad token and the API down');
    assert.deepEqual(reviews.tokenReviews, []);
    assert.deepEqual(reviews.accessReviews, []);
  });

  test('no bearer token: 401 without any review', async () => {
    const { access, reviews } = setup();
    for (const h of [undefined, 'Basic dXNlcjpwdw==', 'Bearer ']) {
      const d = await access.check('/metrics', 'get', h);
      assert.equal(d.allowed, false);
      assert.equal(!d.allowed && d.status, 401);
    }
    assert.deepEqual(reviews.tokenReviews, []);
  });

  test('an unknown token: 401; a known user without the right: 403 naming user, verb and path; with it: allowed', async () => {
    const { access, reviews } = setup();
    assert.deepEqual(await access.check('/debug/state', 'get', 'Bearer stolen'), { allowed: false, status: 401, reason: 'Unauthorized' });
    assert.deepEqual(await access.check('/debug/state', 'get', 'Bearer nobody-token'), {
      allowed: false,
      status: 403,
      reason: 'forbidden: User "nobody" cannot get path "/debug/state"',
    });
    assert.deepEqual(await access.check('/debug/state', 'get', 'Bearer reader-token'), { allowed: true, user: 'reader' });
    assert.deepEqual(reviews.accessReviews, [
      { user: 'nobody', path: '/debug/state', verb: 'get' },
      { user: 'reader', path: '/debug/state', verb: 'get' },
    ]);
  });

  test('system:masters is allowed without a SubjectAccessReview (upstream AlwaysAllowGroups)', async () => {
    const { access, reviews } = setup();
    assert.deepEqual(await access.check('/debug/state', 'get', 'Bearer admin-token'), { allowed: true, user: 'admin' });
    assert.deepEqual(reviews.accessReviews, []);
  });

  test('the right is per path: /metrics allowed does not allow /debug/state', async () => {
    const { access, reviews } = setup();
    reviews.allowed.delete('reader get /debug/state');
    assert.equal((await access.check('/metrics', 'get', 'Bearer reader-token')).allowed, true);
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, false);
  });
});

describe('DelegatedAccess: fail closed when the API server cannot answer', () => {
  test('TokenReview fails: 401, logged, not cached (the next request asks again)', async () => {
    const { access, reviews, log } = setup();
    reviews.failTokenReviews = true;
    const d = await access.check('/debug/state', 'get', 'Bearer reader-token');
    assert.equal(d.allowed, false);
    assert.equal(!d.allowed && d.status, 401);
    assert.ok(!d.allowed && d.reason.includes('TokenReview failed'));
    assert.equal(log.warnings.length, 1);
    reviews.failTokenReviews = false;
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, true);
    assert.equal(reviews.tokenReviews.length, 2, 'the failure was not cached');
  });

  test('SubjectAccessReview fails: 403, logged, not cached', async () => {
    const { access, reviews, log } = setup();
    reviews.failAccessReviews = true;
    const d = await access.check('/debug/state', 'get', 'Bearer reader-token');
    assert.equal(!d.allowed && d.status, 403);
    assert.ok(!d.allowed && d.reason.includes('SubjectAccessReview failed'));
    assert.equal(log.warnings.length, 1);
    reviews.failAccessReviews = false;
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, true);
    assert.equal(reviews.accessReviews.length, 2);
  });

  test('property: with the reviews failing (nothing cached), no path outside the always-allow list is ever served', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/metrics', '/debug/state', '/', '/healthzz', '/healthz/x', '/debug/state/x'),
        fc.option(fc.constantFrom('Bearer reader-token', 'Bearer nobody-token', 'Bearer admin-token', 'Bearer x', 'Basic y'), { nil: undefined }),
        fc.constantFrom('token', 'access'),
        async (path, header, failing) => {
          const { access, reviews } = setup();
          reviews.failTokenReviews = failing === 'token';
          reviews.failAccessReviews = failing === 'access';
          const d = await access.check(path, 'get', header);
          // system:masters needs no SubjectAccessReview (upstream), so only it passes a failing authorizer.
          const exempt = failing === 'access' && header === 'Bearer admin-token';
          assert.equal(d.allowed, exempt, `${path} ${header} (${failing} reviews failing)`);
        },
      ),
      { numRuns: 200 },
    );
  });

  test('with every cache off and the API server down, nothing but the always-allow paths is served', async () => {
    const { access, reviews } = setup({ token: 0, allow: 0, deny: 0 });
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, true, 'works while the API answers');
    reviews.failTokenReviews = true;
    for (const p of ['/metrics', '/debug/state']) for (const h of ['Bearer reader-token', 'Bearer admin-token', undefined]) assert.equal((await access.check(p, 'get', h)).allowed, false, `${p} ${h}`);
    reviews.failTokenReviews = false;
    reviews.failAccessReviews = true;
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, false);
  });
});

describe('DelegatedAccess: caches (upstream cachedTokenAuthenticator and WebhookAuthorizer TTLs)', () => {
  test('a token is reviewed once per TTL; unauthenticated answers are cached as long', async () => {
    const { access, reviews, clock } = setup({ token: 10_000 });
    for (let i = 0; i < 3; i++) await access.check('/debug/state', 'get', 'Bearer reader-token');
    for (let i = 0; i < 3; i++) await access.check('/debug/state', 'get', 'Bearer stolen');
    assert.deepEqual(reviews.tokenReviews, ['reader-token', 'stolen']);
    clock.advance(9_999);
    await access.check('/debug/state', 'get', 'Bearer reader-token');
    assert.equal(reviews.tokenReviews.length, 2, 'still cached at 9.999 s');
    clock.advance(1);
    await access.check('/debug/state', 'get', 'Bearer reader-token');
    await access.check('/debug/state', 'get', 'Bearer stolen');
    assert.deepEqual(reviews.tokenReviews, ['reader-token', 'stolen', 'reader-token', 'stolen'], 'reviewed again at 10 s');
  });

  test('a revoked token stops working within the TTL', async () => {
    const { access, reviews, clock } = setup({ token: 10_000, allow: 10_000 });
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, true);
    reviews.users.delete('reader-token');
    clock.advance(10_000);
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, false);
  });

  test('allow and deny answers are cached for their own TTLs, per user and path', async () => {
    const { access, reviews, clock } = setup({ token: 60_000, allow: 10_000, deny: 2_000 });
    await access.check('/debug/state', 'get', 'Bearer reader-token');
    await access.check('/debug/state', 'get', 'Bearer nobody-token');
    await access.check('/metrics', 'get', 'Bearer reader-token');
    assert.equal(reviews.accessReviews.length, 3, 'one review per (user, path)');
    await access.check('/debug/state', 'get', 'Bearer reader-token');
    await access.check('/debug/state', 'get', 'Bearer nobody-token');
    assert.equal(reviews.accessReviews.length, 3, 'both cached');
    // A binding granted to nobody shows after the deny TTL (2 s); the allow stays cached for 10 s.
    reviews.allowed.add('nobody get /debug/state');
    reviews.allowed.delete('reader get /debug/state');
    clock.advance(2_000);
    assert.equal((await access.check('/debug/state', 'get', 'Bearer nobody-token')).allowed, true);
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, true, 'allow still cached at 2 s');
    clock.advance(8_000);
    assert.equal((await access.check('/debug/state', 'get', 'Bearer reader-token')).allowed, false, 'revocation seen at 10 s');
  });
});

/** A port that was free a moment ago on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** GET over HTTPS, accepting the self-signed certificate. */
function httpsGet(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the secure server', () => {
  test('HTTPS with the access check in front of every route: 401 (WWW-Authenticate), 403, 200; health without a token', async () => {
    const { access } = setup();
    const tls = await selfSignedCertificate(Date.now());
    const server = await startMetricsServer({
      bindAddress: '127.0.0.1:0',
      metrics: createMetrics(),
      isReady: () => true,
      debugState: () => ({ identity: 'me' }),
      log: silentLogger,
      tls,
      access,
    });
    try {
      for (const p of ['/healthz', '/livez', '/readyz']) assert.equal((await httpsGet(server.port, p)).status, 200, p);
      const anon = await httpsGet(server.port, '/metrics');
      assert.equal(anon.status, 401);
      assert.equal(anon.headers['www-authenticate'], 'Bearer');
      assert.equal((await httpsGet(server.port, '/debug/state', { Authorization: 'Bearer nobody-token' })).status, 403);
      const ok = await httpsGet(server.port, '/debug/state', { Authorization: 'Bearer reader-token' });
      assert.equal(ok.status, 200);
      assert.deepEqual(JSON.parse(ok.body), { identity: 'me' });
      assert.equal((await httpsGet(server.port, '/metrics', { Authorization: 'Bearer reader-token' })).status, 200);
      assert.equal((await httpsGet(server.port, '/nope')).status, 401, 'unknown paths are not revealed without a token');
    } finally {
      await server.close();
    }
  });
});

describe('serving certificate', () => {
  test('self-signed: localhost, this host, 127.0.0.1 and ::1; one year; the key matches', async () => {
    const now = Date.UTC(2026, 10, 24);
    const pair = await selfSignedCertificate(now);
    const x = new X509Certificate(pair.cert);
    assert.equal(pair.selfSigned, true);
    assert.ok(x.subject.includes(`CN=localhost@${now / 1000}`), x.subject);
    for (const name of ['DNS:localhost', 'IP Address:127.0.0.1']) assert.ok(x.subjectAltName?.includes(name), `${name} in ${x.subjectAltName}`);
    assert.equal(new Date(x.validFrom).getTime(), now);
    assert.equal(new Date(x.validTo).getTime(), now + SELF_SIGNED_VALIDITY_MS);
    assert.equal(x.checkHost('localhost'), 'localhost');
    assert.equal(x.checkIP('127.0.0.1'), '127.0.0.1');
  });

  test('files: a matching pair is used; a missing file, a non-certificate or a foreign key is a one-line start-up error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-tls-'));
    try {
      const pair = await selfSignedCertificate(Date.now());
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      await writeFile(join(dir, 'tls.crt'), pair.cert);
      await writeFile(join(dir, 'tls.key'), pair.key);
      await writeFile(join(dir, 'other.key'), other);
      await writeFile(join(dir, 'junk.crt'), 'not a certificate');
      const used = await servingCertificate({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') }, Date.now());
      assert.deepEqual(used, { cert: pair.cert, key: pair.key, selfSigned: false });
      await assert.rejects(servingCertificate({ certFile: join(dir, 'missing.crt'), keyFile: join(dir, 'tls.key') }, 0), /^Error: --tls-cert-file: cannot read/);
      await assert.rejects(servingCertificate({ certFile: join(dir, 'junk.crt'), keyFile: join(dir, 'tls.key') }, 0), /--tls-cert-file: .* holds no PEM certificate/);
      await assert.rejects(servingCertificate({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'other.key') }, 0), /--tls-private-key-file: .*does not match/);
      assert.equal((await servingCertificate({ certFile: '', keyFile: '' }, Date.now())).selfSigned, true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('startServing', () => {
  const base: ServingConfig = {
    kubeconfig: undefined,
    metricsBindAddress: '',
    securePort: 0,
    bindAddress: '127.0.0.1',
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    authenticationKubeconfig: '',
    authorizationKubeconfig: '',
    authenticationTokenWebhookCacheTtl: 10_000,
    authorizationWebhookCacheAuthorizedTtl: 10_000,
    authorizationWebhookCacheUnauthorizedTtl: 10_000,
    authorizationAlwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS,
  };
  const routes = { metrics: createMetrics(), isReady: () => true, log: silentLogger };

  test('the listen address of --bind-address and --secure-port', () => {
    assert.equal(secureListenAddress('0.0.0.0', 10267), ':10267');
    assert.equal(secureListenAddress('::', 10267), ':10267');
    assert.equal(secureListenAddress('', 1), ':1');
    assert.equal(secureListenAddress('10.0.0.1', 2), '10.0.0.1:2');
    assert.equal(secureListenAddress('fd00::1', 3), '[fd00::1]:3');
  });

  test('--secure-port=0 and --metrics-bind-address set: only the plain port', async () => {
    const { reviews } = setup();
    const serving = await startServing({ ...base, metricsBindAddress: '127.0.0.1:0' }, routes, { clock: new FakeClock(Date.now()), reviews });
    try {
      assert.equal(serving.securePort, 0);
      assert.ok(serving.plainPort > 0);
    } finally {
      await serving.close();
    }
  });

  test('both ports: HTTPS behind the access check, plain HTTP without it', async () => {
    const { reviews } = setup();
    const port = await freePort();
    const serving = await startServing({ ...base, securePort: port, metricsBindAddress: '127.0.0.1:0' }, { ...routes, debugState: () => ({}) }, { clock: new FakeClock(Date.now()), reviews });
    try {
      assert.equal(serving.securePort, port);
      assert.equal((await httpsGet(port, '/debug/state')).status, 401);
      assert.equal((await httpsGet(port, '/healthz')).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${serving.plainPort}/debug/state`)).status, 200);
    } finally {
      await serving.close();
    }
  });

  test('secure port in use: rejects (EADDRINUSE) before anything else starts', async () => {
    const { reviews } = setup();
    const first = await startServing({ ...base, metricsBindAddress: '127.0.0.1:0' }, routes, { clock: new FakeClock(Date.now()), reviews });
    try {
      await assert.rejects(
        startServing({ ...base, securePort: first.plainPort }, routes, { clock: new FakeClock(Date.now()), reviews }),
        /cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/,
      );
    } finally {
      await first.close();
    }
  });

  test('unreadable certificate files: rejects with the flag named', async () => {
    const { reviews } = setup();
    await assert.rejects(
      startServing({ ...base, securePort: await freePort(), tlsCertFile: '/nonexistent/c', tlsPrivateKeyFile: '/nonexistent/k' }, routes, { clock: new FakeClock(0), reviews }),
      /--tls-cert-file: cannot read "\/nonexistent\/c"/,
    );
  });

  test('plain port in use after the secure port bound: rejects and closes the secure port again', async () => {
    const { reviews } = setup();
    const first = await startServing({ ...base, metricsBindAddress: '127.0.0.1:0' }, routes, { clock: new FakeClock(Date.now()), reviews });
    const port = await freePort();
    try {
      await assert.rejects(
        startServing({ ...base, securePort: port, metricsBindAddress: `127.0.0.1:${first.plainPort}` }, routes, { clock: new FakeClock(Date.now()), reviews }),
        /EADDRINUSE/,
      );
      await assert.rejects(httpsGet(port, '/healthz'), /ECONNREFUSED/, 'the secure port was closed');
    } finally {
      await first.close();
    }
  });
});
