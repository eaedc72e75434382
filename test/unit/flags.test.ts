import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { FlagError, HelpRequested, VersionRequested, controllerFlagsHelp, flagEnvVar, parseControllerFlags } from '../../src/cli/flags.js';
import type { ControllerConfig } from '../../src/controllers/config.js';
import { KNOWN_CONTROLLERS, isControllerEnabled, kubeControllerManagerDisableFlags } from '../../src/controllers/names.js';
import { labelSelectorMatches, parseLabelSelector } from '../../src/kube/labelselector.js';
import { parseGoDuration } from '../../src/util/duration.js';
import { main } from '../../src/cli/program.js';
import { PROGRAM_VERSION, versionLine } from '../../src/version.js';

const parse = (argv: string[], env: Record<string, string | undefined> = {}): Promise<ControllerConfig> =>
  parseControllerFlags(argv, env);

/** Runs the parser and returns the FlagError it must throw. */
async function flagError(argv: string[], env: Record<string, string | undefined> = {}): Promise<FlagError> {
  try {
    await parse(argv, env);
  } catch (err) {
    assert.ok(err instanceof FlagError, `expected FlagError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(argv)} to be rejected`);
}

/**
 * Upstream defaults: flag, default as written, config field, value in config units.
 * Sources: kube-controller-manager options (`nodelifecyclecontroller.go`, `generic.go`,
 * component-base leader election defaults), NLC `config/v1alpha1/defaults.go` (50s since 1.32),
 * A/D `DefaultTimerConfig` (6 min), and this project's extensions (metrics address, logging, selector).
 */
const DEFAULTS: [flag: string, text: string, field: keyof ControllerConfig, value: unknown][] = [
  ['node-monitor-period', '5s', 'nodeMonitorPeriod', parseGoDuration('5s')],
  ['node-monitor-grace-period', '50s', 'nodeMonitorGracePeriod', 50 * 1000],
  ['node-startup-grace-period', '1m', 'nodeStartupGracePeriod', 60 * 1000],
  ['node-eviction-rate', '0.1', 'nodeEvictionRate', 0.1],
  ['secondary-node-eviction-rate', '0.01', 'secondaryNodeEvictionRate', 0.01],
  ['large-cluster-size-threshold', '50', 'largeClusterSizeThreshold', 50],
  ['unhealthy-zone-threshold', '0.55', 'unhealthyZoneThreshold', 0.55],
  ['enable-taint-manager', 'true', 'enableTaintManager', true],
  ['pod-eviction-timeout', '5m', 'podEvictionTimeout', 5 * 60 * 1000],
  ['max-unhealthy-nodes', '""', 'maxUnhealthyNodes', undefined],
  ['storm-threshold', '""', 'stormThreshold', undefined],
  ['storm-window', '1m', 'stormWindow', 60 * 1000],
  ['storm-hold', '5m', 'stormHold', 5 * 60 * 1000],
  ['kube-api-qps', '20', 'kubeApiQps', 20],
  ['kube-api-burst', '30', 'kubeApiBurst', 30],
  ['kube-api-content-type', 'application/vnd.kubernetes.protobuf', 'kubeApiContentType', 'application/vnd.kubernetes.protobuf'],
  ['leader-elect', 'true', 'leaderElect', true],
  ['leader-elect-lease-duration', '15s', 'leaderElectLeaseDuration', 15 * 1000],
  ['leader-elect-renew-deadline', '10s', 'leaderElectRenewDeadline', 10 * 1000],
  ['leader-elect-retry-period', '2s', 'leaderElectRetryPeriod', 2 * 1000],
  ['leader-elect-resource-name', 'node-lifecycle-controller', 'leaderElectResourceName', 'node-lifecycle-controller'],
  ['leader-elect-resource-namespace', 'kube-system', 'leaderElectResourceNamespace', 'kube-system'],
  ['terminated-pod-gc-threshold', '12500', 'terminatedPodGCThreshold', 12500],
  ['force-detach-timeout', '6m', 'forceDetachTimeout', 6 * 60 * 1000],
  ['disable-force-detach-on-timeout', 'false', 'disableForceDetachOnTimeout', false],
  ['affinity-violation-grace', '60s', 'affinityViolationGrace', 60 * 1000],
  ['affinity-eviction-rate', '0.1', 'affinityEvictionRate', 0.1],
  ['affinity-max-evictions-per-node', '0', 'affinityMaxEvictionsPerNode', 0],
  ['affinity-max-evictions-total', '0', 'affinityMaxEvictionsTotal', 0],
  ['metrics-bind-address', '""', 'metricsBindAddress', ''],
  ['secure-port', '10267', 'securePort', 10267],
  ['bind-address', '0.0.0.0', 'bindAddress', '0.0.0.0'],
  ['tls-cert-file', '""', 'tlsCertFile', ''],
  ['tls-private-key-file', '""', 'tlsPrivateKeyFile', ''],
  ['authentication-kubeconfig', '""', 'authenticationKubeconfig', ''],
  ['authorization-kubeconfig', '""', 'authorizationKubeconfig', ''],
  ['authentication-token-webhook-cache-ttl', '10s', 'authenticationTokenWebhookCacheTtl', 10_000],
  ['authorization-webhook-cache-authorized-ttl', '10s', 'authorizationWebhookCacheAuthorizedTtl', 10_000],
  ['authorization-webhook-cache-unauthorized-ttl', '10s', 'authorizationWebhookCacheUnauthorizedTtl', 10_000],
  ['authorization-always-allow-paths', '/healthz,/readyz,/livez', 'authorizationAlwaysAllowPaths', ['/healthz', '/readyz', '/livez']],
  ['log-level', 'info', 'logLevel', 'info'],
  ['log-format', 'json', 'logFormat', 'json'],
  ['controllers', '*', 'controllers', ['*']],
  ['node-selector', '""', 'nodeSelector', ''],
  ['dry-run', 'false', 'dryRun', false],
  ['feature-gates', '""', 'featureGates', { PodDisruptionConditions: true, NodeControllerLeaseCircuitBreaker: true, TaintTolerationComparisonOperators: false, WatchListClient: true }],
  ['kubeconfig', '""', 'kubeconfig', undefined],
  ['config', '""', 'configFile', undefined],
];

describe('defaults', () => {
  test('with no flags, every field has the upstream (or documented) default, durations in ms', async () => {
    const config = await parse([]);
    for (const [flag, , field, value] of DEFAULTS) assert.deepEqual(config[field], value, `--${flag}`);
  });

  test('the config has exactly the documented fields', async () => {
    const config = await parse([]);
    assert.deepEqual(Object.keys(config).sort(), DEFAULTS.map(([, , field]) => field).sort());
  });

  test('a leading "run" command word is accepted', async () => {
    assert.deepEqual(await parse(['run', '--node-eviction-rate=0.2']), await parse(['--node-eviction-rate', '0.2']));
  });
});

describe('help', () => {
  test('lists every flag with its default and environment variable', () => {
    // Each entry starts on a line "  --flag   description…" and continues on indented lines.
    const entries = new Map<string, string>();
    let current: string | undefined;
    for (const line of controllerFlagsHelp().split('\n')) {
      const start = /^\s+(?:-h, )?--([a-z-]+)\s{2,}(.*)$/.exec(line);
      if (start) {
        current = start[1] ?? '';
        entries.set(current, start[2] ?? '');
      } else if (current !== undefined && /^\s{10,}\S/.test(line)) {
        entries.set(current, `${entries.get(current) ?? ''} ${line.trim()}`);
      } else {
        current = undefined;
      }
    }
    for (const [flag, text] of DEFAULTS) {
      const entry = entries.get(flag);
      assert.ok(entry !== undefined, `--${flag} missing from help`);
      assert.ok(entry.includes(`Default: ${text}.`), `--${flag} default: ${entry}`);
      assert.ok(entry.includes(`Env: ${flagEnvVar(flag)}.`), `--${flag} env`);
      assert.ok(entry.includes('Unit: '), `--${flag} unit`);
    }
  });

  test('--help and -h throw HelpRequested (exit 0) with the help text', async () => {
    for (const argv of [['--help'], ['-h'], ['run', '--help']]) {
      await assert.rejects(parse(argv), (err: unknown) => {
        assert.ok(err instanceof HelpRequested);
        assert.equal(err.exitCode, 0);
        assert.equal(err.text, controllerFlagsHelp());
        return true;
      });
    }
  });
});

describe('value syntax', () => {
  test('durations use Go syntax and become milliseconds', async () => {
    const c = await parse(['--node-monitor-period=1500ms', '--node-monitor-grace-period', '1m30s']);
    assert.equal(c.nodeMonitorPeriod, 1500);
    assert.equal(c.nodeMonitorGracePeriod, 90_000);
  });

  test('booleans: bare flag, =value and separate value, Go ParseBool words', async () => {
    assert.equal((await parse(['--disable-force-detach-on-timeout'])).disableForceDetachOnTimeout, true);
    assert.equal((await parse(['--leader-elect=false'])).leaderElect, false);
    assert.equal((await parse(['--leader-elect', 'false'])).leaderElect, false);
    assert.equal((await parse(['--enable-taint-manager=0'])).enableTaintManager, false);
    assert.equal((await parse(['--enable-taint-manager=F'])).enableTaintManager, false);
    assert.equal((await parse([], { NLC_LEADER_ELECT: 'False' })).leaderElect, false);
  });

  test('a repeated scalar flag keeps the last value (pflag)', async () => {
    assert.equal((await parse(['--node-eviction-rate=0.3', '--node-eviction-rate=0.4'])).nodeEvictionRate, 0.4);
  });

  test('--kubeconfig is passed through; empty means default loading', async () => {
    assert.equal((await parse(['--kubeconfig=/tmp/kc'])).kubeconfig, '/tmp/kc');
    assert.equal((await parse(['--kubeconfig='])).kubeconfig, undefined);
  });

  test('accepted edge values', async () => {
    const c = await parse([
      '--unhealthy-zone-threshold=1',
      '--large-cluster-size-threshold=0',
      '--node-eviction-rate=0',
      '--kube-api-burst=1',
      '--node-monitor-grace-period=5s',
      '--metrics-bind-address=[::1]:0',
      '--node-selector=pool in (a,b),!excluded',
    ]);
    assert.equal(c.unhealthyZoneThreshold, 1);
    assert.equal(c.largeClusterSizeThreshold, 0);
    assert.equal(c.nodeEvictionRate, 0);
    assert.equal(c.nodeMonitorGracePeriod, c.nodeMonitorPeriod);
    assert.equal(c.metricsBindAddress, '[::1]:0');
  });

  test('lease rules apply only with --leader-elect (as upstream validation)', async () => {
    const c = await parse(['--leader-elect=false', '--leader-elect-renew-deadline=20s', '--leader-elect-retry-period=0']);
    assert.equal(c.leaderElectRenewDeadline, 20_000);
  });
});

describe('validation errors: FlagError, exit code 2, one line naming the flag', () => {
  const cases: [argv: string[], flag: string][] = [
    [['--node-monitor-period=5x'], 'node-monitor-period'],
    [['--node-monitor-period=0'], 'node-monitor-period'],
    [['--node-startup-grace-period=-1s'], 'node-startup-grace-period'],
    [['--node-monitor-grace-period=4s'], 'node-monitor-grace-period'],
    [['--node-monitor-period=1m', '--node-monitor-grace-period=50s'], 'node-monitor-grace-period'],
    [['--pod-eviction-timeout=-5m'], 'pod-eviction-timeout'],
    [['--force-detach-timeout=6'], 'force-detach-timeout'],
    [['--node-eviction-rate=-0.1'], 'node-eviction-rate'],
    [['--secondary-node-eviction-rate=-1'], 'secondary-node-eviction-rate'],
    [['--node-eviction-rate=fast'], 'node-eviction-rate'],
    [['--unhealthy-zone-threshold=0'], 'unhealthy-zone-threshold'],
    [['--unhealthy-zone-threshold=1.01'], 'unhealthy-zone-threshold'],
    [['--large-cluster-size-threshold=-1'], 'large-cluster-size-threshold'],
    [['--large-cluster-size-threshold=2.5'], 'large-cluster-size-threshold'],
    [['--kube-api-qps=0'], 'kube-api-qps'],
    [['--kube-api-qps=-5'], 'kube-api-qps'],
    [['--kube-api-burst=0'], 'kube-api-burst'],
    [['--kube-api-burst=1.5'], 'kube-api-burst'],
    [['--kube-api-content-type=application/cbor'], 'kube-api-content-type'],
    [['--leader-elect-lease-duration=0'], 'leader-elect-lease-duration'],
    [['--leader-elect-renew-deadline=15s'], 'leader-elect-renew-deadline'],
    [['--leader-elect-lease-duration=10s'], 'leader-elect-renew-deadline'],
    [['--leader-elect-retry-period=9s'], 'leader-elect-retry-period'],
    [['--leader-elect-retry-period=10s'], 'leader-elect-retry-period'],
    [['--leader-elect-resource-name=Bad_Name'], 'leader-elect-resource-name'],
    [['--leader-elect-resource-namespace=kube.system'], 'leader-elect-resource-namespace'],
    [['--leader-elect=maybe'], 'leader-elect'],
    [['--log-level=verbose'], 'log-level'],
    [['--log-format=xml'], 'log-format'],
    [['--feature-gates=NoSuchGate=true'], 'feature-gates'],
    [['--feature-gates=PodDisruptionConditions'], 'feature-gates'],
    [['--feature-gates=PodDisruptionConditions=maybe'], 'feature-gates'],
    [['--metrics-bind-address=10267'], 'metrics-bind-address'],
    [['--metrics-bind-address=:70000'], 'metrics-bind-address'],
    [['--metrics-bind-address=::1:80'], 'metrics-bind-address'],
    [['--secure-port=65536'], 'secure-port'],
    [['--secure-port=-1'], 'secure-port'],
    [['--bind-address=localhost'], 'bind-address'],
    [['--bind-address=10.0.0.1:80'], 'bind-address'],
    [['--tls-cert-file=/tmp/c.pem'], 'tls-private-key-file'],
    [['--tls-private-key-file=/tmp/k.pem'], 'tls-cert-file'],
    [['--authorization-always-allow-paths=/healthz,/de*bug'], 'authorization-always-allow-paths'],
    [['--authentication-token-webhook-cache-ttl=10'], 'authentication-token-webhook-cache-ttl'],
    [['--controllers=nodelifecycle,bogus'], 'controllers'],
    [['--controllers=-*'], 'controllers'],
    [['--node-selector=a in b'], 'node-selector'],
    [['--node-selector=a,,b'], 'node-selector'],
  ];
  for (const [argv, flag] of cases) {
    test(`${argv.join(' ')} → --${flag}`, async () => {
      const err = await flagError(argv);
      assert.equal(err.exitCode, 2);
      assert.equal(err.flag, flag);
      assert.ok(err.message.includes(`--${flag}`), err.message);
      assert.ok(!err.message.includes('\n'), 'one line');
    });
  }

  test('unknown flags are rejected by name (yargs strict)', async () => {
    for (const bad of ['--bogus', '--no-leader-elect', '--nodeMonitorPeriod=5s', '-x']) {
      const err = await flagError([bad]);
      assert.ok(err.message.includes(bad.split('=')[0] ?? bad), err.message);
    }
  });

  test('a dash-led separate value gets a hint to use --flag=value', async () => {
    const err = await flagError(['--controllers', '-podgc']);
    assert.ok(err.message.includes('--controllers=-podgc'), err.message);
  });

  test('positional arguments are rejected', async () => {
    for (const argv of [['extra'], ['--', 'extra'], ['--leader-elect', 'false', 'extra']]) {
      const err = await flagError(argv);
      assert.match(err.message, /extra/);
      assert.equal(err.exitCode, 2);
    }
  });
});

describe('environment and config file precedence', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nlc-flags-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, text: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  test('NLC_<FLAG> sets a flag; the command line wins over it', async () => {
    const env = { NLC_NODE_MONITOR_GRACE_PERIOD: '1m', NLC_KUBE_API_QPS: '50' };
    const fromEnv = await parse([], env);
    assert.equal(fromEnv.nodeMonitorGracePeriod, 60_000);
    assert.equal(fromEnv.kubeApiQps, 50);
    assert.equal((await parse(['--node-monitor-grace-period=2m'], env)).nodeMonitorGracePeriod, 120_000);
  });

  test('empty and unknown NLC_* variables are ignored (service links such as NLC_PORT)', async () => {
    const c = await parse([], { NLC_NODE_EVICTION_RATE: '', NLC_PORT: 'tcp://10.0.0.1:10267', NLC_SERVICE_HOST: '10.0.0.1' });
    assert.equal(c.nodeEvictionRate, 0.1);
  });

  test('a bad environment value names the flag and the variable', async () => {
    const err = await flagError([], { NLC_UNHEALTHY_ZONE_THRESHOLD: '2' });
    assert.equal(err.flag, 'unhealthy-zone-threshold');
    assert.ok(err.message.includes('NLC_UNHEALTHY_ZONE_THRESHOLD'), err.message);
  });

  test('YAML config file: keys are flag names; env and command line override it', async () => {
    const path = await file(
      'config.yaml',
      [
        'node-monitor-grace-period: 40s',
        'node-eviction-rate: 0.5',
        'large-cluster-size-threshold: 20',
        'leader-elect: false',
        'controllers: [nodelifecycle, "-podgc"]',
        'log-format: text',
        '',
      ].join('\n'),
    );
    const c = await parse([`--config=${path}`]);
    assert.equal(c.configFile, path);
    assert.equal(c.nodeMonitorGracePeriod, 40_000);
    assert.equal(c.nodeEvictionRate, 0.5);
    assert.equal(c.largeClusterSizeThreshold, 20);
    assert.equal(c.leaderElect, false);
    assert.deepEqual(c.controllers, ['node-lifecycle-controller', '-pod-garbage-collector-controller']);
    assert.equal(c.logFormat, 'text');

    const env = { NLC_NODE_EVICTION_RATE: '0.25', NLC_CONFIG: path };
    const layered = await parse(['--large-cluster-size-threshold=30'], env);
    assert.equal(layered.nodeEvictionRate, 0.25, 'env over file');
    assert.equal(layered.largeClusterSizeThreshold, 30, 'command line over file');
    assert.equal(layered.nodeMonitorGracePeriod, 40_000, 'file over default');
    assert.equal(layered.configFile, path, 'NLC_CONFIG names the file');
  });

  test('--kube-api-content-type=application/json and NLC_KUBE_API_CONTENT_TYPE force JSON', async () => {
    assert.equal((await parse(['--kube-api-content-type=application/json'])).kubeApiContentType, 'application/json');
    assert.equal((await parse([], { NLC_KUBE_API_CONTENT_TYPE: 'application/json' })).kubeApiContentType, 'application/json');
  });

  test('JSON config file', async () => {
    const path = await file('config.json', JSON.stringify({ 'kube-api-burst': 100, 'controllers': '*,-attachdetach' }));
    const c = await parse(['--config', path]);
    assert.equal(c.kubeApiBurst, 100);
    assert.deepEqual(c.controllers, ['*', '-persistentvolume-attach-detach-controller']);
  });

  test('config file errors name --config, or the flag whose value is bad', async () => {
    const unknownKey = await flagError([`--config=${await file('unknown.yaml', 'node-monitor-grace: 40s\n')}`]);
    assert.equal(unknownKey.flag, 'config');
    assert.match(unknownKey.message, /node-monitor-grace/);

    const malformed = await flagError([`--config=${await file('bad.yaml', 'a: [1, 2\n')}`]);
    assert.equal(malformed.flag, 'config');
    assert.ok(!malformed.message.includes('\n'));

    const notMapping = await flagError([`--config=${await file('list.yaml', '- a\n- b\n')}`]);
    assert.equal(notMapping.flag, 'config');

    const missing = await flagError([`--config=${join(dir, 'absent.yaml')}`]);
    assert.equal(missing.flag, 'config');

    const badValue = await flagError([`--config=${await file('value.yaml', 'node-monitor-period: 5\n')}`]);
    assert.equal(badValue.flag, 'node-monitor-period');
    assert.ok(badValue.message.includes('config file'), badValue.message);

    const nested = await flagError([`--config=${await file('nested.yaml', 'kube-api-qps: {a: 1}\n')}`]);
    assert.equal(nested.flag, 'kube-api-qps');
  });

  test('an empty config file changes nothing', async () => {
    const c = await parse([`--config=${await file('empty.yaml', '\n')}`]);
    assert.equal(c.nodeMonitorGracePeriod, (await parse([])).nodeMonitorGracePeriod);
  });
});

describe('node-affinity-enforcer (issue 19): off by default, its flags', () => {
  test('* leaves it off; naming it turns it on; it is not a kube-controller-manager loop to switch off', async () => {
    assert.equal(isControllerEnabled(await parse([]), 'node-affinity-enforcer'), false);
    assert.equal(isControllerEnabled(await parse(['--controllers=*,node-affinity-enforcer']), 'node-affinity-enforcer'), true);
    assert.doesNotMatch(JSON.stringify(kubeControllerManagerDisableFlags()), /affinity/);
  });
  test('--affinity-* flags parse and reject bad values with exit 2', async () => {
    const c = await parse(['--affinity-violation-grace=1m30s', '--affinity-eviction-rate=2.5', '--affinity-max-evictions-per-node=3', '--affinity-max-evictions-total=10']);
    assert.deepEqual([c.affinityViolationGrace, c.affinityEvictionRate, c.affinityMaxEvictionsPerNode, c.affinityMaxEvictionsTotal], [90_000, 2.5, 3, 10]);
    assert.match((await flagError(['--affinity-eviction-rate=-1'])).message, /--affinity-eviction-rate: must not be negative/);
    assert.match((await flagError(['--affinity-max-evictions-per-node=1.5'])).message, /must be an integer/);
    assert.match((await flagError(['--affinity-violation-grace=soon'])).message, /--affinity-violation-grace/);
    assert.equal((await flagError(['--affinity-max-evictions-total=-2'])).exitCode, 2);
  });
});

describe('eviction guards (issue 16): off by default, counts or percentages, Go durations', () => {
  test('parse counts, percentages and durations; empty is off', async () => {
    const c = await parse(['--max-unhealthy-nodes=20%', '--storm-threshold=5', '--storm-window=90s', '--storm-hold=2m30s']);
    assert.deepEqual(c.maxUnhealthyNodes, { kind: 'percent', percent: 20 });
    assert.deepEqual(c.stormThreshold, { kind: 'count', count: 5 });
    assert.deepEqual([c.stormWindow, c.stormHold], [90_000, 150_000]);
    const env = await parse([], { NLC_MAX_UNHEALTHY_NODES: '12', NLC_STORM_THRESHOLD: '' });
    assert.deepEqual([env.maxUnhealthyNodes, env.stormThreshold], [{ kind: 'count', count: 12 }, undefined]);
    assert.equal((await parse(['--max-unhealthy-nodes='])).maxUnhealthyNodes, undefined);
  });
  const bad: [argv: string, flag: string, value: string][] = [
    ['--max-unhealthy-nodes=20 percent', 'max-unhealthy-nodes', '20 percent'],
    ['--max-unhealthy-nodes=120%', 'max-unhealthy-nodes', '120%'],
    ['--max-unhealthy-nodes=-3', 'max-unhealthy-nodes', '-3'],
    ['--max-unhealthy-nodes=2.5', 'max-unhealthy-nodes', '2.5'],
    ['--storm-threshold=10%%', 'storm-threshold', '10%%'],
    ['--storm-threshold=lots', 'storm-threshold', 'lots'],
    ['--storm-window=30', 'storm-window', '30'],
    ['--storm-window=0s', 'storm-window', '0s'],
    ['--storm-window=1mm', 'storm-window', '1mm'],
    ['--storm-hold=5 minutes', 'storm-hold', '5 minutes'],
    ['--storm-hold=-1m', 'storm-hold', '-1m'],
  ];
  for (const [argv, flag, value] of bad) {
    test(`${argv} exits 2 naming --${flag} and "${value}"`, async () => {
      const err = await flagError([argv]);
      assert.equal(err.exitCode, 2);
      assert.equal(err.flag, flag);
      assert.ok(err.message.startsWith(`--${flag}: `), err.message);
      assert.ok(err.message.includes(value), err.message);
      assert.ok(!err.message.includes('\n'), 'one line');
    });
  }
});

describe('--dry-run (issue 16, shadow mode): its own Lease unless one is named', () => {
  test('off by default; on, the Lease defaults to node-lifecycle-controller-shadow', async () => {
    assert.equal((await parse([])).dryRun, false);
    const shadow = await parse(['--dry-run']);
    assert.equal(shadow.dryRun, true);
    assert.equal(shadow.leaderElectResourceName, 'node-lifecycle-controller-shadow');
    assert.equal((await parse(['--dry-run=true'], {})).leaderElectResourceName, 'node-lifecycle-controller-shadow');
    assert.equal((await parse(['--dry-run=false'])).leaderElectResourceName, 'node-lifecycle-controller');
  });
  test('an explicit --leader-elect-resource-name that ends in -shadow (flag or NLC_*) wins', async () => {
    assert.equal((await parse(['--dry-run', '--leader-elect-resource-name=mine-shadow'])).leaderElectResourceName, 'mine-shadow');
    assert.equal((await parse(['--dry-run'], { NLC_LEADER_ELECT_RESOURCE_NAME: 'env-shadow' })).leaderElectResourceName, 'env-shadow');
  });
  // A shadow that wins the acting controller's Lease leaves nothing acting: with --dry-run the Lease
  // must end in -shadow, and without it must not, so the two can never campaign for one Lease.
  const refused: [argv: string[], env: Record<string, string>, value: string][] = [
    [['--dry-run', '--leader-elect-resource-name=node-lifecycle-controller'], {}, 'node-lifecycle-controller'],
    [['--dry-run', '--leader-elect-resource-name=mine'], {}, 'mine'],
    [['--dry-run'], { NLC_LEADER_ELECT_RESOURCE_NAME: 'env' }, 'env'],
    [['--dry-run=true', '--leader-elect-resource-name=shadow-of-nlc'], {}, 'shadow-of-nlc'],
    [['--leader-elect-resource-name=node-lifecycle-controller-shadow'], {}, 'node-lifecycle-controller-shadow'],
    [['--dry-run=false'], { NLC_LEADER_ELECT_RESOURCE_NAME: 'x-shadow' }, 'x-shadow'],
  ];
  for (const [argv, env, value] of refused) {
    test(`${[...argv, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].join(' ')} exits 2 naming --leader-elect-resource-name and "${value}"`, async () => {
      const err = await flagError(argv, env);
      assert.equal(err.exitCode, 2);
      assert.equal(err.flag, 'leader-elect-resource-name');
      assert.ok(err.message.startsWith('--leader-elect-resource-name: '), err.message);
      assert.ok(err.message.includes(`"${value}"`), err.message);
      assert.ok(!err.message.includes('\n'), 'one line');
    });
  }
  test('without leader election no Lease is campaigned for, so no name is refused', async () => {
    assert.equal((await parse(['--dry-run', '--leader-elect=false', '--leader-elect-resource-name=mine'])).dryRun, true);
  });
  test('an invalid boolean exits 2 naming the flag', async () => {
    assert.equal((await flagError(['--dry-run=maybe'])).flag, 'dry-run');
  });
});

describe('--controllers (kube-controller-manager IsControllerEnabled semantics)', () => {
  // kube-controller-manager's controllers; our own (off by default) are tested above.
  const names = KNOWN_CONTROLLERS.filter((c) => !('ourOwn' in c)).map((c) => c.name);
  const enabled = async (value: string): Promise<string[]> => {
    const config = await parse([`--controllers=${value}`]);
    return names.filter((n) => isControllerEnabled(config, n));
  };

  test('* enables every on-by-default controller', async () => {
    assert.deepEqual(await enabled('*'), names.filter((n) => KNOWN_CONTROLLERS.find((c) => c.name === n)?.disabledByDefault === false));
  });

  test('canonical names are upstream names with upstream aliases', () => {
    assert.deepEqual(names, [
      'node-lifecycle-controller',
      'taint-eviction-controller',
      'pod-garbage-collector-controller',
      'persistentvolume-attach-detach-controller',
    ]);
    const config = { controllers: ['nodelifecycle', 'podgc', 'attachdetach', 'taint-eviction-controller'] };
    for (const n of names) assert.equal(isControllerEnabled(config, n), true, n);
  });

  test('-name disables; name alone enables only that controller; empty enables none', async () => {
    assert.deepEqual(await enabled('*,-podgc'), names.filter((n) => n !== 'pod-garbage-collector-controller'));
    assert.deepEqual(await enabled('nodelifecycle'), ['node-lifecycle-controller']);
    assert.deepEqual(await enabled(''), []);
  });

  test('the first explicit entry wins; later ones never override it', async () => {
    assert.deepEqual(await enabled('podgc,-podgc'), ['pod-garbage-collector-controller']);
    assert.deepEqual(await enabled('-podgc,podgc,*'), names.filter((n) => n !== 'pod-garbage-collector-controller'));
    assert.deepEqual(await enabled('-pod-garbage-collector-controller,*,podgc'), await enabled('*,-podgc'));
  });

  test('aliases are normalised to canonical names; repeated --controllers append', async () => {
    const c = await parse(['--controllers=-attach-detach-controller', '--controllers', '*']);
    assert.deepEqual(c.controllers, ['-persistentvolume-attach-detach-controller', '*']);
    assert.equal(isControllerEnabled(c, 'attachdetach'), false);
    assert.equal(isControllerEnabled(c, 'taint-eviction-controller'), true);
  });

  test('an unknown name passed to isControllerEnabled is a programming error, not a FlagError', () => {
    assert.throws(
      () => isControllerEnabled({ controllers: ['*'] }, 'bogus' as 'podgc'),
      (err: unknown) => err instanceof Error && !(err instanceof FlagError),
    );
  });

  test('property: an explicit entry (any spelling) decides regardless of what follows it', () => {
    const spellings = (c: (typeof KNOWN_CONTROLLERS)[number]): string[] => [c.name, ...c.aliases];
    const entry = fc.constantFrom(...KNOWN_CONTROLLERS.flatMap(spellings), '*');
    const signed = fc.tuple(fc.boolean(), entry).map(([neg, e]) => (neg && e !== '*' ? `-${e}` : e));
    const target = fc.constantFrom(...KNOWN_CONTROLLERS).chain((c) => fc.constantFrom(...spellings(c)).map((spelled) => ({ c, spelled })));
    fc.assert(
      fc.property(target, fc.boolean(), fc.array(signed, { maxLength: 8 }), fc.array(signed, { maxLength: 8 }), ({ c, spelled }, on, prefix, suffix) => {
        fc.pre(!prefix.some((e) => spellings(c).includes(e.replace(/^-/, ''))));
        const controllers = [...prefix, on ? spelled : `-${spelled}`, ...suffix];
        return isControllerEnabled({ controllers }, c.name) === on;
      }),
    );
  });
});

describe('label selectors (--node-selector)', () => {
  test('parses equality, set and existence requirements', () => {
    assert.deepEqual(parseLabelSelector('a=b, c!=d,e in (f, g),h notin (i),j,!k,l==m,n>3'), [
      { key: 'a', operator: '=', values: ['b'] },
      { key: 'c', operator: '!=', values: ['d'] },
      { key: 'e', operator: 'in', values: ['f', 'g'] },
      { key: 'h', operator: 'notin', values: ['i'] },
      { key: 'j', operator: 'exists', values: [] },
      { key: 'k', operator: '!exists', values: [] },
      { key: 'l', operator: '=', values: ['m'] },
      { key: 'n', operator: 'gt', values: ['3'] },
    ]);
    assert.deepEqual(parseLabelSelector('  '), []);
  });

  test('rejects malformed selectors', () => {
    for (const bad of ['a in b', 'a=b,', '=b', 'a=b=c', 'Bad_Prefix/x=y', 'a>b', 'a=' + 'v'.repeat(64)]) {
      assert.throws(() => parseLabelSelector(bad), Error, bad);
    }
  });

  test('matches labels like labels.Selector.Matches', () => {
    const labels = { 'topology.kubernetes.io/zone': 'z1', pool: 'canary', cores: '8' };
    const m = (s: string): boolean => labelSelectorMatches(parseLabelSelector(s), labels);
    assert.equal(m(''), true);
    assert.equal(m('pool=canary'), true);
    assert.equal(m('pool!=canary'), false);
    assert.equal(m('topology.kubernetes.io/zone in (z1,z2),!excluded'), true);
    assert.equal(m('pool notin (canary)'), false);
    assert.equal(m('missing!=x'), true);
    assert.equal(m('cores>4,cores<16'), true);
    assert.equal(m('cores>8'), false);
    assert.equal(m('excluded'), false);
  });
});

describe('--feature-gates (component-base featuregate syntax; the parser itself: test/unit/featuregates.test.ts)', () => {
  const defaults = { PodDisruptionConditions: true, NodeControllerLeaseCircuitBreaker: true, TaintTolerationComparisonOperators: false, WatchListClient: true };

  test('PodDisruptionConditions=false turns the gate off; spaces and Go booleans are accepted', async () => {
    assert.deepEqual((await parse(['--feature-gates=PodDisruptionConditions=false'])).featureGates, { ...defaults, PodDisruptionConditions: false });
    assert.deepEqual((await parse(['--feature-gates= PodDisruptionConditions = F ,'])).featureGates, { ...defaults, PodDisruptionConditions: false });
    assert.deepEqual((await parse([], { NLC_FEATURE_GATES: 'PodDisruptionConditions=true' })).featureGates, defaults);
  });

  test('NodeControllerLeaseCircuitBreaker: on by default (beta in 1.37.2), =false turns it off', async () => {
    assert.equal((await parse([])).featureGates.NodeControllerLeaseCircuitBreaker, true);
    assert.deepEqual((await parse(['--feature-gates=NodeControllerLeaseCircuitBreaker=false'])).featureGates, { ...defaults, NodeControllerLeaseCircuitBreaker: false });
    assert.deepEqual((await parse(['--feature-gates=NodeControllerLeaseCircuitBreaker=true,PodDisruptionConditions=false'])).featureGates, { ...defaults, PodDisruptionConditions: false });
  });

  test('TaintTolerationComparisonOperators: off by default (alpha in 1.37.2), =true turns it on, and so does AllAlpha=true', async () => {
    assert.equal((await parse([])).featureGates.TaintTolerationComparisonOperators, false);
    assert.equal((await parse(['--feature-gates=TaintTolerationComparisonOperators=true'])).featureGates.TaintTolerationComparisonOperators, true);
    // AllAlpha=true alone is refused by 1.37.2 (alpha gates that need the beta GenericWorkload); with AllBeta it is not.
    assert.equal((await parse(['--feature-gates=AllAlpha=true,AllBeta=true'])).featureGates.TaintTolerationComparisonOperators, true);
  });

  test('a repeated --feature-gates adds to the earlier ones; NLC_FEATURE_GATES and the config file take the same syntax', async () => {
    const repeated = await parse(['--feature-gates=TaintTolerationComparisonOperators=true', '--feature-gates', 'WatchListClient=false']);
    assert.deepEqual(repeated.featureGates, { ...defaults, TaintTolerationComparisonOperators: true, WatchListClient: false });
    assert.deepEqual(repeated.explicitFeatureGates, ['TaintTolerationComparisonOperators', 'WatchListClient']);
    assert.equal((await parse([], { NLC_FEATURE_GATES: 'kube:TaintTolerationComparisonOperators=true' })).featureGates.TaintTolerationComparisonOperators, true);
  });

  test('a gate kube-controller-manager 1.37.2 knows that changes nothing here is accepted, and leaves ours at their defaults', async () => {
    const c = await parse(['--feature-gates=DynamicResourceAllocation=true,ClientsPreferCBOR=true,SeparateTaintEvictionController=true']);
    assert.deepEqual(c.featureGates, defaults);
    assert.equal(c.explicitFeatureGates, undefined);
  });

  test('refused as kube-controller-manager 1.37.2 refuses it: exit 2, one line, its message', async () => {
    const cases: [string, RegExp][] = [
      ['PodDisruptionConditions=true,Nope=false', /^--feature-gates: unrecognized feature gate: Nope$/],
      ['SeparateTaintEvictionController=false', /^--feature-gates: cannot set feature gate SeparateTaintEvictionController to false, feature is locked to true$/],
      ['AtomicFIFO=false', /^--feature-gates: \[.*NodeControllerLeaseCircuitBreaker is enabled, but depends on features that are disabled: \[AtomicFIFO\]/],
      ['AllAlpha=true', /^--feature-gates: \[.*is enabled, but depends on features that are disabled: \[GenericWorkload\]/],
      ['wardle:Foo=true', /^--feature-gates: component not registered: wardle$/],
      ['TaintTolerationComparisonOperators=yes', /^--feature-gates: invalid value of TaintTolerationComparisonOperators=yes, err: strconv\.ParseBool: parsing "yes": invalid syntax$/],
    ];
    for (const [value, message] of cases) {
      const err = await flagError([`--feature-gates=${value}`]);
      assert.equal(err.flag, 'feature-gates', value);
      assert.equal(err.exitCode, 2, value);
      assert.match(err.message, message, value);
      assert.doesNotMatch(err.message, /\n/, value);
    }
  });
});

// Values copied from the k8s.io/kubernetes v1.37.2 module source (and its staging modules at
// v0.37.2); each row names the file. docs/upstream-1.37.md lists what changed since 1.20.
describe('kube-controller-manager 1.37.2 flags we share', () => {
  const upstream137: [file: string, flag: string, goDefault: string, field: keyof ControllerConfig, value: unknown][] = [
    ['pkg/controller/nodelifecycle/config/v1alpha1/defaults.go', 'node-monitor-period', '5s', 'nodeMonitorPeriod', 5_000],
    ['pkg/controller/nodelifecycle/config/v1alpha1/defaults.go (50s since 1.32; 1.20: 40s)', 'node-monitor-grace-period', '50s', 'nodeMonitorGracePeriod', 50_000],
    ['pkg/controller/nodelifecycle/config/v1alpha1/defaults.go', 'node-startup-grace-period', '1m0s', 'nodeStartupGracePeriod', 60_000],
    ['cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go (Float32Var)', 'node-eviction-rate', '0.1', 'nodeEvictionRate', 0.1],
    ['cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go (Float32Var)', 'secondary-node-eviction-rate', '0.01', 'secondaryNodeEvictionRate', 0.01],
    ['cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go (Int32Var)', 'large-cluster-size-threshold', '50', 'largeClusterSizeThreshold', 50],
    ['cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go (Float32Var)', 'unhealthy-zone-threshold', '0.55', 'unhealthyZoneThreshold', 0.55],
    ['pkg/controller/apis/config/v1alpha1/defaults.go', 'kube-api-qps', '20', 'kubeApiQps', 20],
    ['pkg/controller/apis/config/v1alpha1/defaults.go', 'kube-api-burst', '30', 'kubeApiBurst', 30],
    ['component-base config/v1alpha1/defaults.go (ClientConnection.ContentType)', 'kube-api-content-type', 'application/vnd.kubernetes.protobuf', 'kubeApiContentType', 'application/vnd.kubernetes.protobuf'],
    ['component-base config/v1alpha1/defaults.go', 'leader-elect', 'true', 'leaderElect', true],
    ['component-base config/v1alpha1/defaults.go', 'leader-elect-lease-duration', '15s', 'leaderElectLeaseDuration', 15_000],
    ['component-base config/v1alpha1/defaults.go', 'leader-elect-renew-deadline', '10s', 'leaderElectRenewDeadline', 10_000],
    ['component-base config/v1alpha1/defaults.go', 'leader-elect-retry-period', '2s', 'leaderElectRetryPeriod', 2_000],
    ['cmd/kube-controller-manager/app/options/options.go', 'leader-elect-resource-namespace', 'kube-system', 'leaderElectResourceNamespace', 'kube-system'],
    ['cmd/kube-controller-manager/app/options/attachdetachcontroller.go (since 1.30)', 'disable-force-detach-on-timeout', 'false', 'disableForceDetachOnTimeout', false],
    ['controller-manager config/v1alpha1/defaults.go', 'controllers', '*', 'controllers', ['*']],
  ];

  test('same names and defaults (Go duration text parsed to the same milliseconds)', async () => {
    const defaults = await parse([]);
    for (const [file, flag, goDefault, field, value] of upstream137) {
      assert.deepEqual(defaults[field], value, `--${flag} default (${file})`);
      // Passing upstream's printed default (pflag's "(default 1m0s)") changes nothing.
      assert.deepEqual((await parse([`--${flag}=${goDefault}`]))[field], value, `--${flag}=${goDefault} (${file})`);
    }
  });

  test('controller names and aliases: cmd/kube-controller-manager/names/controller_names.go and app/core.go descriptors', () => {
    const upstream = new Map<string, string[]>([
      ['node-lifecycle-controller', ['nodelifecycle']],
      ['taint-eviction-controller', []],
      ['pod-garbage-collector-controller', ['podgc']],
      ['persistentvolume-attach-detach-controller', ['attachdetach']],
    ]);
    for (const c of KNOWN_CONTROLLERS.filter((k) => !('ourOwn' in k))) {
      const aliases = upstream.get(c.name);
      assert.ok(aliases, `${c.name} is an upstream name`);
      // Ours may add aliases (attach-detach-controller), never drop upstream's.
      for (const a of aliases) assert.ok((c.aliases as readonly string[]).includes(a), `${c.name} accepts ${a}`);
      assert.equal(c.disabledByDefault, false, `${c.name} is on by default upstream`);
    }
    assert.equal(KNOWN_CONTROLLERS.filter((k) => !('ourOwn' in k)).length, upstream.size);
  });

  test('an unknown controller is rejected with upstream\'s wording (controller-manager options/generic.go Validate)', async () => {
    const err = await flagError(['--controllers=*,-bogus']);
    assert.match(err.message, /"bogus" is not in the list of known controllers/);
  });

  test('flags removed upstream in 1.27 (#115840) are still accepted: legacy direct eviction is ours', async () => {
    const c = await parse(['--enable-taint-manager=false', '--pod-eviction-timeout=2m']);
    assert.equal(c.enableTaintManager, false);
    assert.equal(c.podEvictionTimeout, 120_000);
    const help = controllerFlagsHelp().replace(/\s+/g, ' ');
    assert.match(help, /--enable-taint-manager .*Removed upstream in 1\.27 \(kubernetes #115840\)/);
  });

  test('stricter than upstream\'s (empty) NodeLifecycleControllerOptions.Validate: bad values refuse to start', async () => {
    // kube-controller-manager 1.37.2 accepts each of these; we exit 2, which can only prevent actions.
    for (const argv of [['--node-monitor-grace-period=1s'], ['--unhealthy-zone-threshold=0'], ['--large-cluster-size-threshold=-1']]) {
      assert.equal((await flagError(argv)).exitCode, 2, argv.join(' '));
    }
  });
});

// kube-controller-manager's spellings (issue 17 item 6): -v/--v is klog verbosity, --logging-format
// text|json (component-base/logs); --version prints the version and exits 0.
describe('kube-controller-manager conventions: --version, -v/--v, --logging-format', () => {
  test('--version throws VersionRequested (exit 0) with "node-lifecycle-controller v<package.json version> (git commit …, tree …)"', async () => {
    for (const argv of [['--version'], ['run', '--version'], ['--node-monitor-period=1s', '--version']]) {
      await assert.rejects(parse(argv), (err: unknown) => {
        assert.ok(err instanceof VersionRequested && err instanceof HelpRequested);
        assert.equal(err.exitCode, 0);
        assert.equal(err.text, versionLine());
        assert.match(err.text, new RegExp(`^node-lifecycle-controller v${PROGRAM_VERSION.replaceAll('.', '\\.')} \\(git commit ([0-9a-f]{40}|unknown), tree (clean|dirty|unknown)\\)$`));
        return true;
      });
    }
    assert.match(PROGRAM_VERSION, /^\d+\.\d+\.\d+/);
    assert.equal((await parse(['--version=false'])).logLevel, 'info', '--version=false is no request');
  });

  test('main prints the version on stdout and returns 0; a bad -v returns 2 with one line', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const write = (sink: string[]) => (chunk: string | Uint8Array): boolean => (sink.push(String(chunk)), true);
    const [stdout, stderr] = [process.stdout.write, process.stderr.write];
    process.stdout.write = write(out) as typeof process.stdout.write;
    process.stderr.write = write(err) as typeof process.stderr.write;
    let versionCode: number;
    let badCode: number;
    try {
      versionCode = await main(['--version']);
      badCode = await main(['--v=loud']);
    } finally {
      process.stdout.write = stdout;
      process.stderr.write = stderr;
    }
    assert.equal(versionCode, 0);
    assert.equal(out.join(''), `${versionLine()}\n`);
    assert.equal(badCode, 2);
    assert.equal(err.join(''), 'node-lifecycle-controller: --v: must be an integer, got "loud"\n');
  });

  test('klog verbosity maps onto pino levels: 0-3 info, 4-5 debug, 6+ trace; every spelling klog accepts', async () => {
    const table: [string[], string][] = [
      [['--v=0'], 'info'],
      [['-v=2'], 'info'],
      [['-v', '3'], 'info'],
      [['--v', '4'], 'debug'],
      [['--v=5'], 'debug'],
      [['-v=6'], 'trace'],
      [['--v=10'], 'trace'],
    ];
    for (const [argv, level] of table) assert.equal((await parse(argv)).logLevel, level, argv.join(' '));
    assert.equal((await parse([], { NLC_V: '4' })).logLevel, 'debug', 'NLC_V');
  });

  test('--logging-format text|json sets the log format', async () => {
    assert.equal((await parse(['--logging-format=text'])).logFormat, 'text');
    assert.equal((await parse(['--logging-format', 'json'])).logFormat, 'json');
    assert.equal((await parse([], { NLC_LOGGING_FORMAT: 'text' })).logFormat, 'text');
  });

  test('invalid values exit 2 with a one-line reason naming the flag', async () => {
    for (const [argv, flag] of [
      [['--v=x'], 'v'],
      [['--v=-1'], 'v'],
      [['-v=1.5'], 'v'],
      [['--logging-format=yaml'], 'logging-format'],
      [['--logging-format=JSON'], 'logging-format'],
    ] as const) {
      const err = await flagError([...argv]);
      assert.equal(err.exitCode, 2);
      assert.equal(err.flag, flag, argv.join(' '));
      assert.doesNotMatch(err.message, /\n/);
    }
  });

  test('the two spellings set one thing: on the command line the later wins; lower layers yield; one layer with both is an error', async () => {
    assert.equal((await parse(['--log-level=warn', '--v=4'])).logLevel, 'debug');
    assert.equal((await parse(['--v=4', '--log-level=warn'])).logLevel, 'warn');
    assert.equal((await parse(['--log-format=text', '--logging-format=json'])).logFormat, 'json');
    assert.equal((await parse(['--logging-format=json', '--log-format=text'])).logFormat, 'text');
    // The command line beats NLC_*, whichever spelling each uses.
    assert.equal((await parse(['--log-level=error'], { NLC_V: '6' })).logLevel, 'error');
    assert.equal((await parse(['--v=6'], { NLC_LOG_LEVEL: 'error' })).logLevel, 'trace');
    const both = await flagError([], { NLC_V: '4', NLC_LOG_LEVEL: 'warn' });
    assert.equal(both.flag, 'v');
    assert.match(both.message, /give either it or --log-level, not both \(from NLC_V\)/);
    // The spelling that does not decide is still validated.
    assert.equal((await flagError(['--v=x', '--log-level=warn'])).flag, 'v');
  });
});
