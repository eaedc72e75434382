/**
 * manifests/ and the Helm chart are valid against the real API server (server-side dry run), pass
 * `helm lint`, and agree with the program: the container args parse with the controller's own flag
 * parser, every flag is a chart value, the RBAC of the chart and manifests/ is the same, and the
 * alerts use metrics the program registers.
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { runCommand, type RunResult } from '../support/command.js';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { DEFAULT_METRICS_BIND_ADDRESS, DEFAULT_SECURE_PORT, controllerFlagsHelp, parseControllerFlags } from '../../src/cli/flags.js';
import type { ControllerConfig } from '../../src/controllers/config.js';
import { KNOWN_CONTROLLERS } from '../../src/controllers/names.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { kubeconfigPath } from '../support/cluster.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHART = join(ROOT, 'charts', 'node-lifecycle-controller');
const MANIFESTS = join(ROOT, 'manifests');
const NAMESPACE = 'node-lifecycle-controller';

function run(cmd: string, args: string[], input?: string): Promise<RunResult> {
  return runCommand(cmd, args, { env: { KUBECONFIG: kubeconfigPath() }, ...(input === undefined ? {} : { input }) });
}

async function ok(cmd: string, args: string[], input?: string): Promise<string> {
  const r = await run(cmd, args, input);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} failed:\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

const helm = (...args: string[]): Promise<string> => ok('bash', ['scripts/helm.sh', ...args]);

/** A Kubernetes object as plain data (the parts these checks read). */
interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata?: { name?: string; namespace?: string };
  rules?: unknown[];
  roleRef?: { kind?: string; name?: string };
  spec?: {
    minAvailable?: number | string;
    template?: {
      spec?: {
        containers?: { image?: string; args?: string[]; env?: { name?: string; value?: string }[]; ports?: { containerPort?: number }[] }[];
        topologySpreadConstraints?: { topologyKey?: string; whenUnsatisfiable?: string; maxSkew?: number }[];
        affinity?: { podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm?: { topologyKey?: string } }[] } };
      };
    };
    ports?: { port?: number }[];
    groups?: { rules?: { alert?: string; expr?: string }[] }[];
  };
}

function parseDocs(text: string): Obj[] {
  // Round-trip through JSON: client-node's typed models use camelCase copies of the wire names.
  return (loadAllYaml(text) as unknown[]).filter((d): d is Obj => d !== null && typeof d === 'object').map((d) => JSON.parse(JSON.stringify(d)) as Obj);
}

async function manifestDocs(): Promise<Obj[]> {
  const files = ['00-namespace.yaml', '01-serviceaccount.yaml', '02-rbac.yaml', '03-deployment.yaml', '04-service.yaml'];
  const docs: Obj[] = [];
  for (const f of files) docs.push(...parseDocs(await readFile(join(MANIFESTS, f), 'utf8')));
  return docs;
}

function find(docs: Obj[], kind: string, nameSuffix = ''): Obj {
  const d = docs.find((o) => o.kind === kind && (o.metadata?.name ?? '').endsWith(nameSuffix));
  assert.ok(d, `no ${kind}${nameSuffix ? ` *${nameSuffix}` : ''}`);
  return d;
}

function containerArgs(docs: Obj[]): string[] {
  const args = find(docs, 'Deployment').spec?.template?.spec?.containers?.[0]?.args;
  assert.ok(args && args.length > 0, 'the Deployment has container args');
  return args;
}

/**
 * Flag names (without dashes) listed by `--help`, less `--help`/`--version` and kube-controller-manager's
 * spellings (`--v`, `--logging-format`) of flags the chart passes in our spelling.
 */
function helpFlags(): string[] {
  const notSettings = new Set(['help', 'version', 'v', 'logging-format']);
  return [...new Set([...controllerFlagsHelp().matchAll(/^\s+--([a-z][a-z-]*)/gm)].map((m) => m[1] ?? ''))].filter((f) => !notSettings.has(f));
}

/** The port the chart and manifests/ serve on: the secure port (the plain port is off). */
const securePort = DEFAULT_SECURE_PORT;

/** A NetworkPolicy with both peers and egress rules (API server and DNS), for the server dry run. */
const NETWORK_POLICY_VALUES = `
networkPolicy:
  enabled: true
  ingressFrom:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: monitoring
  egress:
    - ports:
        - port: 443
          protocol: TCP
        - port: 6443
          protocol: TCP
    - to:
        - namespaceSelector:
            matchLabels:
              kubernetes.io/metadata.name: kube-system
      ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
`;

describe('manifests/ and the Helm chart', () => {
  before(async () => {
    // Namespaced objects can only be dry-run into a namespace that exists: create it for real.
    await ok('kubectl', ['apply', '-f', join(MANIFESTS, '00-namespace.yaml')]);
  });

  test('helm lint --strict passes with the defaults and with every optional object enabled', async () => {
    await helm('lint', '--strict', CHART);
    await helm('lint', '--strict', CHART, '--set', 'networkPolicy.enabled=true,serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true');
  });

  test('values.schema.json: a mistyped key or a bad duration, rate, level or format fails helm template and helm lint', async () => {
    const bad: [set: string, reason: RegExp][] = [
      ['controller.nodeMonitorGracePerod=50s', /Additional property nodeMonitorGracePerod is not allowed/],
      ['replica=3', /Additional property replica is not allowed/],
      ['leaderElection.leaseDurations=15s', /Additional property leaseDurations is not allowed/],
      ['podDisruptionBudget.minAvailible=1', /Additional property minAvailible is not allowed/],
      ['controller.nodeMonitorGracePeriod=50 seconds', /controller.nodeMonitorGracePeriod: Does not match pattern/],
      ['leaderElection.retryPeriod=2', /leaderElection.retryPeriod: Invalid type/],
      ['controller.nodeEvictionRate=fast', /controller.nodeEvictionRate: Does not match pattern/],
      ['controller.logLevel=verbose', /controller.logLevel must be one of the following/],
      ['controller.logFormat=yaml', /controller.logFormat must be one of the following/],
      ['image.digest=latest', /image.digest: Does not match pattern/],
      ['controller.maxUnhealthyNodes=40 percent', /controller.maxUnhealthyNodes: Does not match pattern/],
      ['controller.stormThreshold=101%', /controller.stormThreshold: Does not match pattern/],
      ['controller.stormWindow=1 minute', /controller.stormWindow: Does not match pattern/],
    ];
    for (const [set, reason] of bad) {
      const r = await run('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--set', set]);
      assert.notEqual(r.code, 0, `--set ${set} rendered`);
      assert.match(r.stderr, reason, `--set ${set}`);
    }
    const lint = await run('bash', ['scripts/helm.sh', 'lint', '--strict', CHART, '--set', 'controller.nodeMonitorGracePerod=50s']);
    assert.notEqual(lint.code, 0, 'helm lint --strict accepts a typo');
    // Well-formed values of every kind pass (decimals arrive from --set as strings).
    await helm('template', 'nlc', CHART, '--set', 'controller.nodeMonitorGracePeriod=1m30s,controller.nodeEvictionRate=0.2,controller.logLevel=debug,controller.logFormat=text');
  });

  test('kubectl apply --dry-run=server -f manifests/ succeeds for every object', async () => {
    const out = await ok('kubectl', ['apply', '--dry-run=server', '-f', MANIFESTS]);
    const docs = await manifestDocs();
    assert.equal(out.trim().split('\n').filter((l) => l.endsWith('(server dry run)')).length, docs.length, out);
  });

  test('helm template | kubectl apply --dry-run=server succeeds (defaults with the PDB, and NetworkPolicy + digest)', async () => {
    // --validate reads the API server's versions, so the PDB (on by default) uses one this server
    // serves: policy/v1, or policy/v1beta1 on the 1.20 lane.
    for (const extra of [[], ['--set', 'networkPolicy.enabled=true,image.digest=sha256:' + 'a'.repeat(64)], ['-f', '-']]) {
      const values = extra[0] === '-f' ? NETWORK_POLICY_VALUES : undefined;
      const rendered = await ok('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--namespace', NAMESPACE, '--validate', ...extra], values);
      const docs = parseDocs(rendered);
      const out = await ok('kubectl', ['apply', '--dry-run=server', '-f', '-'], rendered);
      assert.equal(out.trim().split('\n').filter((l) => l.endsWith('(server dry run)')).length, docs.length, out);
      assert.ok(docs.some((d) => d.kind === 'PodDisruptionBudget'), 'the PDB is on by default');
      if (extra.length > 0) assert.ok(docs.some((d) => d.kind === 'NetworkPolicy'), 'NetworkPolicy rendered');
    }
  });

  test('defaults: zone spread (ScheduleAnyway), hostname anti-affinity, PDB minAvailable 1, heap limit from the memory limit', async () => {
    const docs = parseDocs(await helm('template', 'nlc', CHART, '--namespace', NAMESPACE));
    const pod = find(docs, 'Deployment').spec?.template?.spec;
    assert.deepEqual(
      pod?.topologySpreadConstraints?.map((t) => [t.topologyKey, t.whenUnsatisfiable, t.maxSkew]),
      [['topology.kubernetes.io/zone', 'ScheduleAnyway', 1]],
    );
    assert.equal(pod?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm?.topologyKey, 'kubernetes.io/hostname');
    assert.equal(find(docs, 'PodDisruptionBudget').spec?.minAvailable, 1);
    // 75% of the 512Mi limit.
    const env = pod?.containers?.[0]?.env ?? [];
    assert.deepEqual(env.find((e) => e.name === 'NODE_OPTIONS'), { name: 'NODE_OPTIONS', value: '--max-old-space-size=384' });
    const oneGi = parseDocs(await helm('template', 'nlc', CHART, '--set', 'resources.limits.memory=1Gi,heapLimitPercent=50'));
    assert.equal(find(oneGi, 'Deployment').spec?.template?.spec?.containers?.[0]?.env?.[0]?.value, '--max-old-space-size=512');
    const noLimit = parseDocs(await helm('template', 'nlc', CHART, '--set', 'resources.limits=null'));
    assert.equal(find(noLimit, 'Deployment').spec?.template?.spec?.containers?.[0]?.env, undefined, 'no limit: Node decides');
    // One replica: a PDB with minAvailable 1 would block every drain, so none is rendered.
    const single = parseDocs(await helm('template', 'nlc', CHART, '--set', 'replicas=1'));
    assert.equal(single.filter((d) => d.kind === 'PodDisruptionBudget').length, 0);
    // image.digest wins over the tag.
    const digest = `sha256:${'b'.repeat(64)}`;
    const pinned = parseDocs(await helm('template', 'nlc', CHART, '--set', `image.repository=r.example/nlc,image.digest=${digest}`));
    assert.equal(find(pinned, 'Deployment').spec?.template?.spec?.containers?.[0]?.image, `r.example/nlc@${digest}`);
  });

  test('the chart refuses replicas > 1 without leader election', async () => {
    const r = await run('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--set', 'leaderElection.enabled=false']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /requires leaderElection.enabled/);
    await helm('template', 'nlc', CHART, '--set', 'leaderElection.enabled=false,replicas=1');
  });

  test('controller.controllers: an unknown name fails helm template (string and list form), naming the known ones', async () => {
    for (const set of ['controller.controllers=*\\,-bogus', 'controller.controllers={*,-podgc,bogus}', 'controller.controllers=nodelifecycle\\,taint-manager']) {
      const r = await run('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--set', set]);
      assert.notEqual(r.code, 0, `--set ${set} rendered`);
      assert.match(r.stderr, /controller\.controllers/, `--set ${set}`);
      assert.match(r.stderr, /pod-garbage-collector-controller/, `--set ${set}: the message lists the known names`);
    }
    // Every known name and alias, enabled and disabled, in both forms, renders and reaches --controllers.
    const all = KNOWN_CONTROLLERS.flatMap((c) => [c.name, ...c.aliases]);
    const list = ['*', ...all.map((n) => `-${n}`)];
    const asString = parseDocs(await helm('template', 'nlc', CHART, '--set', `controller.controllers=${list.join('\\,')}`));
    assert.ok(containerArgs(asString).includes(`--controllers=${list.join(',')}`));
    const asList = parseDocs(await helm('template', 'nlc', CHART, '--set', `controller.controllers={${all.join(',')}}`));
    assert.ok(containerArgs(asList).includes(`--controllers=${all.join(',')}`));
  });

  test('values.schema.json lists exactly the registry\'s controller names and aliases (src/controllers/names.ts)', async () => {
    const schema = JSON.parse(await readFile(join(CHART, 'values.schema.json'), 'utf8')) as {
      properties: { controller: { properties: { controllers: { oneOf: { type: string; pattern?: string; items?: { enum?: string[] } }[] } } } };
    };
    const names = KNOWN_CONTROLLERS.flatMap((c) => [c.name, ...c.aliases]);
    const forms = schema.properties.controller.properties.controllers.oneOf;
    const listForm = forms.find((f) => f.type === 'array')?.items?.enum;
    assert.deepEqual([...(listForm ?? [])].sort(), ['*', ...names, ...names.map((n) => `-${n}`)].sort(), 'the list form\'s enum');
    const pattern = forms.find((f) => f.type === 'string')?.pattern;
    assert.ok(pattern);
    const alternatives = [...pattern.matchAll(/-\?\(([^)]*)\)/g)].map((m) => (m[1] ?? '').split('|').sort());
    assert.ok(alternatives.length > 0, 'the string form names its alternatives');
    for (const a of alternatives) assert.deepEqual(a, [...names].sort(), 'the string form\'s pattern');
  });

  test('leaderElection.renewDeadline not less than leaseDuration fails helm template, naming both', async () => {
    for (const [set, re] of [
      ['leaderElection.renewDeadline=20s', /leaderElection\.renewDeadline \(20s\) must be less than leaderElection\.leaseDuration \(15s\)/],
      ['leaderElection.renewDeadline=15s', /leaderElection\.renewDeadline \(15s\) must be less than leaderElection\.leaseDuration \(15s\)/],
      ['leaderElection.leaseDuration=1m,leaderElection.renewDeadline=1m0.5s', /renewDeadline \(1m0\.5s\) must be less than leaderElection\.leaseDuration \(1m\)/],
    ] as const) {
      const r = await run('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--set', set]);
      assert.notEqual(r.code, 0, `--set ${set} rendered`);
      assert.match(r.stderr, re);
    }
    const docs = parseDocs(await helm('template', 'nlc', CHART, '--set', 'leaderElection.leaseDuration=1m30s,leaderElection.renewDeadline=1m'));
    assert.ok(containerArgs(docs).includes('--leader-elect-renew-deadline=1m'));
    // Without leader election the durations are not passed, and nothing checks them (as the binary).
    await helm('template', 'nlc', CHART, '--set', 'leaderElection.enabled=false,replicas=1,leaderElection.renewDeadline=20s');
  });

  test('podDisruptionBudget.minAvailable that keeps every replica fails helm template', async () => {
    for (const set of ['podDisruptionBudget.minAvailable=2', 'podDisruptionBudget.minAvailable=3', 'podDisruptionBudget.minAvailable=51%', 'replicas=3,podDisruptionBudget.minAvailable=100%']) {
      const r = await run('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--set', set]);
      assert.notEqual(r.code, 0, `--set ${set} rendered`);
      assert.match(r.stderr, /podDisruptionBudget\.minAvailable \S+ keeps all \d+ replicas: no voluntary eviction could pass/, `--set ${set}`);
    }
    for (const set of ['podDisruptionBudget.minAvailable=50%', 'replicas=3,podDisruptionBudget.minAvailable=2', 'podDisruptionBudget.minAvailable=5,podDisruptionBudget.maxUnavailable=1']) {
      const docs = parseDocs(await helm('template', 'nlc', CHART, '--set', set));
      assert.ok(docs.some((d) => d.kind === 'PodDisruptionBudget'), `--set ${set}: a PDB`);
    }
  });

  test('controller.terminatedPodGCThreshold reaches --terminated-pod-gc-threshold; a non-integer fails', async () => {
    const docs = parseDocs(await helm('template', 'nlc', CHART, '--set', 'controller.terminatedPodGCThreshold=10'));
    assert.equal((await parseControllerFlags(containerArgs(docs), {})).terminatedPodGCThreshold, 10);
    const off = parseDocs(await helm('template', 'nlc', CHART, '--set', 'controller.terminatedPodGCThreshold=0'));
    assert.ok(containerArgs(off).includes('--terminated-pod-gc-threshold=0'));
    const r = await run('bash', ['scripts/helm.sh', 'template', 'nlc', CHART, '--set', 'controller.terminatedPodGCThreshold=lots']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /controller\.terminatedPodGCThreshold: Invalid type/);
  });

  test('the chart passes every controller flag, with upstream defaults the program parses back', async () => {
    const docs = parseDocs(
      await helm('template', 'nlc', CHART, '--namespace', NAMESPACE, '--set', 'controller.managedNodeSelector=pool=a', '--set', 'controller.featureGates=PodDisruptionConditions=true'),
    );
    const args = containerArgs(docs);
    const passed = new Set(args.map((a) => /^--([a-z-]+)=/.exec(a)?.[1]));
    for (const flag of helpFlags()) {
      if (flag === 'kubeconfig' || flag === 'config') continue; // in-cluster config; no file
      // Files (the delegation kubeconfigs default to the in-cluster connection; the TLS pair is passed
      // only with controller.tlsSecretName), the plain port (off unless set) and the review caches
      // (upstream's 10 s; extraArgs can change them).
      if (/^(authentication-kubeconfig|authorization-kubeconfig|tls-cert-file|tls-private-key-file|metrics-bind-address)$/.test(flag)) continue;
      if (/^(authentication-token-webhook-cache-ttl|authorization-webhook-cache-(un)?authorized-ttl)$/.test(flag)) continue;
      assert.ok(passed.has(flag), `the chart does not pass --${flag}`);
    }
    const fromChart = await parseControllerFlags(args, {});
    const defaults = await parseControllerFlags([], {});
    const differs = (Object.keys(defaults) as (keyof ControllerConfig)[]).filter(
      (k) => JSON.stringify(fromChart[k]) !== JSON.stringify(defaults[k]),
    );
    // The chart turns the eviction guards on (issue 16; off in the binary): --max-unhealthy-nodes,
    // --storm-threshold and a shorter --storm-hold than the binary's default.
    assert.deepEqual(
      differs.sort(),
      ['leaderElectResourceNamespace', 'nodeSelector', 'maxUnhealthyNodes', 'stormThreshold', 'stormHold'].sort(),
      'only the Lease namespace, the set node selector and the eviction guards differ from the defaults',
    );
    assert.equal(fromChart.leaderElectResourceNamespace, NAMESPACE);
    const port = find(docs, 'Deployment').spec?.template?.spec?.containers?.[0]?.ports?.[0]?.containerPort;
    assert.equal(port, securePort);
    assert.equal(find(docs, 'Service').spec?.ports?.[0]?.port, securePort);
  });

  test('manifests/ runs leader election in its own namespace on the secure port, without the plain port', async () => {
    const docs = await manifestDocs();
    const config = await parseControllerFlags(containerArgs(docs), {});
    assert.equal(config.leaderElect, true);
    assert.equal(config.leaderElectResourceNamespace, NAMESPACE);
    assert.equal(config.metricsBindAddress, DEFAULT_METRICS_BIND_ADDRESS);
    assert.equal(config.securePort, securePort);
    assert.equal(find(docs, 'Deployment').spec?.template?.spec?.containers?.[0]?.ports?.[0]?.containerPort, securePort);
  });

  test('the chart grants exactly the RBAC rules of manifests/', async () => {
    const chart = parseDocs(await helm('template', 'nlc', CHART, '--namespace', NAMESPACE));
    const plain = await manifestDocs();
    assert.deepEqual(find(chart, 'ClusterRole', 'node-lifecycle-controller').rules, find(plain, 'ClusterRole', 'node-lifecycle-controller').rules);
    // The secure port's TokenReview and SubjectAccessReview (issue 17 item 2).
    assert.deepEqual(find(chart, 'ClusterRoleBinding', '-auth-delegator').roleRef, find(plain, 'ClusterRoleBinding', '-auth-delegator').roleRef);
    assert.equal(find(chart, 'ClusterRoleBinding', '-auth-delegator').roleRef?.name, 'system:auth-delegator');
    assert.deepEqual(find(chart, 'Role', ':node-heartbeats').rules, find(plain, 'Role', ':node-heartbeats').rules);
    assert.deepEqual(find(chart, 'Role', ':leader-election').rules, find(plain, 'Role', ':leader-election').rules);
    assert.equal(find(chart, 'Role', ':node-heartbeats').metadata?.namespace, 'kube-node-lease');
  });

  test('the PrometheusRule alerts on metrics the program registers', async () => {
    const docs = parseDocs(await helm('template', 'nlc', CHART, '--set', 'prometheusRule.enabled=true'));
    const rules = find(docs, 'PrometheusRule').spec?.groups?.[0]?.rules ?? [];
    assert.deepEqual(
      rules.map((r) => r.alert),
      [
        'NodeLifecycleControllerNoLeader',
        'NodeLifecycleControllerTwoLeaders',
        'NodeLifecycleControllerSecondActor',
        'NodeLifecycleControllerForceDeleteErrors',
        'NodeLifecycleControllerThrottleDelayHigh',
        'NodeLifecycleControllerZoneEvictionsPaused',
        'NodeLifecycleControllerEvictionCircuitOpen',
        'NodeLifecycleControllerHighUnhealthyShare',
      ],
    );
    const registered = new Set(createMetrics({ defaultMetrics: false }).registry.getMetricsAsArray().map((m) => m.name));
    for (const r of rules) {
      // A histogram's series carry the _bucket / _sum / _count suffix; the family is registered without it.
      const names = [...(r.expr ?? '').matchAll(/\b((?:node_collector|node_lifecycle|leader_election|pod_gc_collector|rest_client)_\w+)\b/g)].map((m) =>
        (m[1] ?? '').replace(/_(bucket|sum|count)$/, ''),
      );
      assert.ok(names.length > 0, `${r.alert} uses no controller metric`);
      for (const n of names) assert.ok(registered.has(n), `${r.alert} uses ${n}, which the program does not register`);
    }
  });

  test('the chart README documents every value, and nothing else', async () => {
    const readme = await readFile(join(CHART, 'README.md'), 'utf8');
    const documented = [...readme.matchAll(/^\| `([A-Za-z0-9.]+)` \|/gm)].map((m) => m[1] ?? '');
    const values = parseDocs(await readFile(join(CHART, 'values.yaml'), 'utf8'))[0] as Record<string, unknown>;
    const paths: string[] = [];
    const walk = (o: Record<string, unknown>, prefix: string): void => {
      for (const [k, v] of Object.entries(o)) {
        const p = prefix + k;
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0 && !documented.includes(p)) {
          walk(v as Record<string, unknown>, `${p}.`);
        } else paths.push(p);
      }
    };
    walk(values, '');
    for (const p of paths) assert.ok(documented.includes(p), `values.yaml key ${p} is not in the README table`);
    for (const d of documented) assert.ok(paths.includes(d), `README documents ${d}, which values.yaml lacks`);
  });
});
