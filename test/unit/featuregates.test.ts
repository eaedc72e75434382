/**
 * `--feature-gates` as kube-controller-manager 1.37.2 parses it (src/cli/featuregates.ts, issue 53
 * item 3): every gate of its registry accepted, what it refuses refused with its message, AllAlpha
 * and AllBeta, locked gates, dependencies, the `kube:` prefix, repeats; and the gates that change
 * something here resolved with 1.37's defaults.
 *
 * The expectations are written out, so the tests run without Go. Where Go and k8s.io/kubernetes
 * v1.37.2 are in the module cache, the same inputs (and a few hundred generated ones) also go
 * through kube-controller-manager's own code (scripts/k8s-1.37/featuregates `check`: its flag, Set
 * and Validate on a copy of its registry), and the generated registry
 * (src/cli/kcm-feature-gates.gen.ts) is regenerated and compared.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { DEFAULT_FEATURE_GATES, kcmFeatureGateValues, parseFeatureGates } from '../../src/cli/featuregates.js';
import { KCM_FEATURE_GATES } from '../../src/cli/kcm-feature-gates.gen.js';
import type { FeatureGates } from '../../src/controllers/config.js';
import { ROOT, runCommand } from '../support/command.js';

const goModCache = ((): string | undefined => {
  const r = spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' });
  const dir = r.status === 0 ? r.stdout.trim() : '';
  return dir && existsSync(join(dir, 'k8s.io/kubernetes@v1.37.2')) ? dir : undefined;
})();
const noUpstream = goModCache === undefined && 'Go or k8s.io/kubernetes@v1.37.2 in its module cache is missing';

/** kube-controller-manager 1.37.2's verdict on one command line's --feature-gates values. */
type KcmVerdict = { error: string } | { enabled: Record<string, boolean> };

/** Runs each command line's --feature-gates values through kube-controller-manager's own parsing (one Go process). */
async function kcmVerdicts(inputs: readonly (readonly string[])[]): Promise<KcmVerdict[]> {
  const r = await runCommand('nice', ['-n', '10', 'go', '-C', 'scripts/k8s-1.37', 'run', '-trimpath', './featuregates', 'check'], {
    input: inputs.map((v) => JSON.stringify(v)).join('\n') + '\n',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as KcmVerdict);
  assert.equal(out.length, inputs.length);
  return out;
}

/** Ours, in the oracle's terms: the error message, or every available gate's value. */
function ours(values: readonly string[]): KcmVerdict {
  try {
    return { enabled: Object.fromEntries(kcmFeatureGateValues(values)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const on = { ...DEFAULT_FEATURE_GATES };

/** Written-out cases: --feature-gates values, then the error, or the gates of FeatureGates and which the flag set. */
const CASES: [name: string, values: string[], expect: string | { gates: Partial<FeatureGates>; explicit: (keyof FeatureGates)[] }][] = [
  ['no flag: 1.37 defaults', [], { gates: {}, explicit: [] }],
  ['empty value', [''], { gates: {}, explicit: [] }],
  ['empty entries are skipped', [',,'], { gates: {}, explicit: [] }],
  ['TaintTolerationComparisonOperators=true', ['TaintTolerationComparisonOperators=true'], { gates: { TaintTolerationComparisonOperators: true }, explicit: ['TaintTolerationComparisonOperators'] }],
  ['TaintTolerationComparisonOperators=false (its default, named)', ['TaintTolerationComparisonOperators=false'], { gates: {}, explicit: ['TaintTolerationComparisonOperators'] }],
  ['NodeControllerLeaseCircuitBreaker=false', ['NodeControllerLeaseCircuitBreaker=false'], { gates: { NodeControllerLeaseCircuitBreaker: false }, explicit: ['NodeControllerLeaseCircuitBreaker'] }],
  ['WatchListClient=false (client-go\'s gate)', ['WatchListClient=false'], { gates: { WatchListClient: false }, explicit: ['WatchListClient'] }],
  ['the kube: prefix', ['kube:TaintTolerationComparisonOperators=true'], { gates: { TaintTolerationComparisonOperators: true }, explicit: ['TaintTolerationComparisonOperators'] }],
  ['spaces and Go booleans (T, 0)', [' kube : TaintTolerationComparisonOperators = T , kube:WatchListClient=0 '], { gates: { TaintTolerationComparisonOperators: true, WatchListClient: false }, explicit: ['TaintTolerationComparisonOperators', 'WatchListClient'] }],
  ['a repeated flag adds to the earlier ones', ['TaintTolerationComparisonOperators=true', 'WatchListClient=false'], { gates: { TaintTolerationComparisonOperators: true, WatchListClient: false }, explicit: ['TaintTolerationComparisonOperators', 'WatchListClient'] }],
  ['a gate named twice keeps its last value', ['TaintTolerationComparisonOperators=true,TaintTolerationComparisonOperators=false'], { gates: {}, explicit: ['TaintTolerationComparisonOperators'] }],
  ['a gate that changes nothing here is accepted (alpha)', ['DynamicResourceAllocation=true'], { gates: {}, explicit: [] }],
  ['a gate that changes nothing here is accepted (GA, not locked)', ['AllowServiceExternalIPs=false'], { gates: {}, explicit: [] }],
  ['a locked gate at its default is accepted', ['SeparateTaintEvictionController=true'], { gates: {}, explicit: [] }],
  ['AllAlpha=true with GenericWorkload=true: every alpha gate on', ['AllAlpha=true,GenericWorkload=true'], { gates: { TaintTolerationComparisonOperators: true }, explicit: ['TaintTolerationComparisonOperators'] }],
  ['AllAlpha=true,AllBeta=true', ['AllAlpha=true,AllBeta=true'], { gates: { TaintTolerationComparisonOperators: true }, explicit: ['NodeControllerLeaseCircuitBreaker', 'TaintTolerationComparisonOperators', 'WatchListClient'] }],
  ['AllAlpha=true leaves a named alpha gate alone', ['TaintTolerationComparisonOperators=false,AllAlpha=true,GenericWorkload=true'], { gates: {}, explicit: ['TaintTolerationComparisonOperators'] }],
  ['AllBeta=false turns every beta gate off, the Lease circuit breaker and watch-list too', ['AllBeta=false'], { gates: { NodeControllerLeaseCircuitBreaker: false, WatchListClient: false }, explicit: ['NodeControllerLeaseCircuitBreaker', 'WatchListClient'] }],
  ['AllBeta=false leaves a named beta gate alone', ['AllBeta=false,AtomicFIFO=true,NodeControllerLeaseCircuitBreaker=true'], { gates: { WatchListClient: false }, explicit: ['NodeControllerLeaseCircuitBreaker', 'WatchListClient'] }],
  ['PodDisruptionConditions (ours; 1.37.2 refuses it)', ['PodDisruptionConditions=false'], { gates: { PodDisruptionConditions: false }, explicit: ['PodDisruptionConditions'] }],
  ['PodDisruptionConditions with a kube: prefix', ['kube:PodDisruptionConditions=false,kube:AllBeta=true'], { gates: { PodDisruptionConditions: false }, explicit: ['NodeControllerLeaseCircuitBreaker', 'PodDisruptionConditions', 'WatchListClient'] }],
  ['an unknown gate', ['TaintTolerationComparisonOperators=true,Nope=false'], 'unrecognized feature gate: Nope'],
  ['an empty gate name', ['=true'], 'unrecognized feature gate: '],
  ['a gate locked to its default, set to the other value', ['SeparateTaintEvictionController=false'], 'cannot set feature gate SeparateTaintEvictionController to false, feature is locked to true'],
  ['two locked gates: both named, as utilerrors aggregates them', ['SeparateTaintEvictionController=false,InOrderInformers=false'], '[cannot set feature gate SeparateTaintEvictionController to false, feature is locked to true, cannot set feature gate InOrderInformers to false, feature is locked to true]'],
  ['a missing value', ['TaintTolerationComparisonOperators'], 'missing bool value for TaintTolerationComparisonOperators'],
  ['a value that is not a Go boolean', ['TaintTolerationComparisonOperators=yes'], 'invalid value of TaintTolerationComparisonOperators=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'],
  ['another component', ['wardle:Foo=true'], 'component not registered: wardle'],
  ['the empty and the kube: prefix mixed', ['kube:WatchListClient=false', 'TaintTolerationComparisonOperators=true'], 'set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use'],
  ['a dependency switched off under a gate that needs it', ['AtomicFIFO=false,StaleControllerConsistencyDaemonSet=false,StaleControllerConsistencyHPA=false,StaleControllerConsistencyJob=false,StaleControllerConsistencyReplicaSet=false,StaleControllerConsistencyStatefulSet=false'], 'NodeControllerLeaseCircuitBreaker is enabled, but depends on features that are disabled: [AtomicFIFO]'],
  ['AllAlpha=true alone: alpha gates whose beta dependency is off (GenericWorkload)', ['AllAlpha=true'], '[CompositePodGroup is enabled, but depends on features that are disabled: [GenericWorkload], PodGroupPreemptionPolicy is enabled, but depends on features that are disabled: [GenericWorkload], TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload], WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]]'],
];

describe('parseFeatureGates: the written-out cases', () => {
  for (const [name, values, expect] of CASES) {
    test(name, () => {
      if (typeof expect === 'string') {
        assert.throws(() => parseFeatureGates(values), (err: Error) => err.message === expect);
        return;
      }
      assert.deepEqual(parseFeatureGates(values), { gates: { ...on, ...expect.gates }, explicit: expect.explicit });
    });
  }

  test('defaults: 1.37.2\'s for its gates (TaintTolerationComparisonOperators alpha/off, NodeControllerLeaseCircuitBreaker and WatchListClient beta/on), ours for PodDisruptionConditions', () => {
    assert.deepEqual(DEFAULT_FEATURE_GATES, { PodDisruptionConditions: true, NodeControllerLeaseCircuitBreaker: true, TaintTolerationComparisonOperators: false, WatchListClient: true });
    assert.deepEqual(KCM_FEATURE_GATES['TaintTolerationComparisonOperators'], { default: false, preRelease: 'ALPHA', locked: false });
    assert.deepEqual(KCM_FEATURE_GATES['NodeControllerLeaseCircuitBreaker'], { default: true, preRelease: 'BETA', locked: false });
    assert.deepEqual(KCM_FEATURE_GATES['WatchListClient'], { default: true, preRelease: 'BETA', locked: false });
    assert.deepEqual(KCM_FEATURE_GATES['SeparateTaintEvictionController'], { default: true, preRelease: 'GA', locked: true });
    assert.equal(KCM_FEATURE_GATES['PodDisruptionConditions'], undefined);
  });
});

/** Generated command lines: gates of every kind, prefixes, spacing, bad values, repeats. */
const flagValues: fc.Arbitrary<string[]> = (() => {
  const names = [
    'TaintTolerationComparisonOperators', 'NodeControllerLeaseCircuitBreaker', 'WatchListClient', 'AtomicFIFO', 'AllAlpha', 'AllBeta',
    'GenericWorkload', 'WorkloadWithJob', 'DynamicResourceAllocation', 'DRAAdminAccess', 'SeparateTaintEvictionController', 'InOrderInformers',
    'AllowServiceExternalIPs', 'AggregatedDiscoveryRemoveBetaType', 'ClientsPreferCBOR', 'Nope', '',
  ];
  // Mostly one prefix per command line (mixing is refused outright), Go booleans, a few bad values.
  const value = fc.constantFrom('=true', '=false', '=true', '=false', '=true', '=false', '= T ', '=0', '=maybe', '');
  const entry = fc.tuple(fc.oneof({ arbitrary: fc.constant(undefined), weight: 12 }, { arbitrary: fc.constantFrom('kube:', 'foo:', ''), weight: 1 }), fc.constantFrom(...names), value);
  const line = fc.tuple(fc.constantFrom('', '', 'kube:', ' kube : '), fc.array(entry, { maxLength: 5 }), fc.array(entry, { maxLength: 2 }));
  return line.map(([prefix, first, second]) => {
    const text = (entries: typeof first): string => entries.map(([p, n, v]) => `${p ?? prefix}${n}${v}`).join(',');
    return second.length > 0 ? [text(first), text(second)] : [text(first)];
  });
})();

describe('against kube-controller-manager 1.37.2 itself (scripts/k8s-1.37/featuregates check)', { skip: noUpstream }, () => {
  test('the written-out cases: the same verdict, message and every gate\'s value', async () => {
    const inputs = CASES.filter(([, values]) => !values.join(',').includes('PodDisruptionConditions')).map(([, values]) => values);
    const theirs = await kcmVerdicts(inputs);
    inputs.forEach((values, i) => {
      const t = theirs[i] as KcmVerdict;
      const o = ours(values);
      if ('error' in t && 'error' in o && t.error.startsWith('[')) {
        // Several errors: Go's map order decides theirs; the same messages, in any order.
        assert.equal(o.error.length, t.error.length, JSON.stringify(values));
        for (const m of o.error.slice(1, -1).split(/, (?=[A-Z][A-Za-z]+ is enabled|cannot set)/)) assert.ok(t.error.includes(m), `${JSON.stringify(values)}: ${m}`);
      } else {
        assert.deepEqual(o, t, JSON.stringify(values));
      }
    });
  });

  test('generated command lines: accepted and refused alike, the same value of every gate when accepted', async () => {
    const inputs = fc.sample(flagValues, { numRuns: 400, seed: 53 });
    const theirs = await kcmVerdicts(inputs);
    inputs.forEach((values, i) => {
      const t = theirs[i] as KcmVerdict;
      const o = ours(values);
      assert.equal('error' in o, 'error' in t, `${JSON.stringify(values)}: ours ${JSON.stringify('error' in o ? o.error : 'accepted')}, kube-controller-manager ${JSON.stringify('error' in t ? t.error : 'accepted')}`);
      if ('enabled' in o && 'enabled' in t) assert.deepEqual(o.enabled, t.enabled, JSON.stringify(values));
    });
  });

  test('src/cli/kcm-feature-gates.gen.ts is what scripts/gen-feature-gates.sh generates', async (t: TestContext) => {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-gen-feature-gates-'));
    try {
      const out = join(dir, 'kcm-feature-gates.gen.ts');
      const r = await runCommand('nice', ['-n', '10', 'bash', 'scripts/gen-feature-gates.sh', out]);
      if (r.code === 2) {
        t.skip(`generator inputs missing: ${r.stderr.trim()}`);
        return;
      }
      assert.equal(r.code, 0, r.stderr);
      const same = (await readFile(out, 'utf8')) === (await readFile(join(ROOT, 'src/cli/kcm-feature-gates.gen.ts'), 'utf8'));
      assert.ok(same, 'src/cli/kcm-feature-gates.gen.ts is stale: run scripts/gen-feature-gates.sh');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
