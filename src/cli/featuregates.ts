/**
 * `--feature-gates`, parsed as kube-controller-manager 1.37.2 parses it: an operator passes ours the
 * string of their kube-controller-manager, so ours accepts what it accepts and refuses what it
 * refuses, with its wording, against its own registry (kcm-feature-gates.gen.ts, generated from
 * k8s.io/kubernetes v1.37.2 by scripts/gen-feature-gates.sh). Of the gates it accepts, the ones that
 * change something of the controllers we replace are resolved into {@link FeatureGates}; the rest are
 * accepted and change nothing here (docs/upstream-1.37.md, "Feature gates").
 *
 * Upstream, in the order kube-controller-manager applies them:
 * - component-base `cli/flag` `ColonSeparatedMultimapStringString` (AllowDefaultEmptyKey): the flag
 *   may repeat; each value is split at `,` and each entry at its first `:` into component and
 *   `name=value` (no `:`: the default component);
 * - component-base `compatibility` `(*componentGlobalsRegistry).Set`: only the `kube` component is
 *   registered in kube-controller-manager; the empty and the `kube:` prefix must not be mixed;
 * - component-base `featuregate` `(*featureGate).Set`/`unsafeSetFromMap`/`featureEnabled` at
 *   emulation version 1.37: `strconv.ParseBool` values, unknown gates, gates locked to their default,
 *   PreAlpha gates, `AllAlpha`/`AllBeta` (every alpha/beta gate not named takes that value), then the
 *   gates' dependencies (`AddDependencies`).
 * Where upstream's message depends on Go's random map order (two unknown gates, say), ours names the
 * first in the order given; the accepted set is the same.
 *
 * Deliberate difference: `PodDisruptionConditions` (GA in 1.31, removed from 1.37's registry, which
 * refuses it as unrecognized) is still ours; see src/controllers/config.ts.
 */
import type { FeatureGates } from '../controllers/config.js';
import { KCM_FEATURE_GATE_DEPENDENCIES, KCM_FEATURE_GATES, type KcmFeatureGateSpec } from './kcm-feature-gates.gen.js';

/** Defaults of {@link FeatureGates}: kube-controller-manager 1.37.2's, and ours for PodDisruptionConditions. */
export const DEFAULT_FEATURE_GATES: Readonly<FeatureGates> = {
  PodDisruptionConditions: true,
  NodeControllerLeaseCircuitBreaker: gateDefault('NodeControllerLeaseCircuitBreaker'),
  TaintTolerationComparisonOperators: gateDefault('TaintTolerationComparisonOperators'),
  WatchListClient: gateDefault('WatchListClient'),
};

/** The gates of {@link FeatureGates} that kube-controller-manager 1.37.2's registry has (all but ours). */
const KCM_HONOURED = ['NodeControllerLeaseCircuitBreaker', 'TaintTolerationComparisonOperators', 'WatchListClient'] as const satisfies readonly (keyof FeatureGates)[];

/** Ours alone: kube-controller-manager 1.37.2 no longer knows it. */
const OURS = 'PodDisruptionConditions';

/** The one component kube-controller-manager registers (component-base compatibility `DefaultKubeComponent`). */
const KUBE_COMPONENT = 'kube';

const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

function gateDefault(name: string): boolean {
  const spec = KCM_FEATURE_GATES[name];
  if (spec === undefined) throw new Error(`feature gate ${name} is not in kube-controller-manager 1.37.2's registry`);
  return spec.default;
}

/** What {@link parseFeatureGates} resolves. */
export interface ParsedFeatureGates {
  /** Every gate of {@link FeatureGates}, resolved (defaults filled in). */
  gates: FeatureGates;
  /** The gates of {@link FeatureGates} the flag set: by name, or through `AllAlpha`/`AllBeta`; in name order. */
  explicit: (keyof FeatureGates)[];
}

/**
 * Parses `--feature-gates` as kube-controller-manager 1.37.2 does.
 * @param values the flag's values, one per occurrence (a repeated flag adds to the earlier ones);
 *   `[]` or `['']` gives the defaults.
 * @returns every gate of {@link FeatureGates} with its value, and which the flag set.
 * @throws {Error} with kube-controller-manager's one-line reason: `unrecognized feature gate: X`,
 *   `cannot set feature gate X to false, feature is locked to true`, `missing bool value for X`,
 *   `invalid value of X=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`,
 *   `component not registered: X`, `X is enabled, but depends on features that are disabled: [Y]`,
 *   and the others of the functions named in the module comment.
 */
export function parseFeatureGates(values: string | readonly string[]): ParsedFeatureGates {
  const { ours, explicit: named, enabled } = resolveFeatureGates(values);
  const gates: FeatureGates = { ...DEFAULT_FEATURE_GATES };
  const explicit: (keyof FeatureGates)[] = [];
  if (ours !== undefined) {
    gates[OURS] = ours;
    explicit.push(OURS);
  }
  for (const name of KCM_HONOURED) {
    gates[name] = enabled.get(name) ?? false;
    if (named.has(name)) explicit.push(name);
  }
  explicit.sort();
  return { gates, explicit };
}

/**
 * kube-controller-manager 1.37.2's value of every gate of its registry that is available at 1.37
 * (`featureGate.Enabled` for each name of `GetAll`) after `--feature-gates` `values`; used by
 * {@link parseFeatureGates}, and by the tests that compare it with kube-controller-manager's own.
 * @returns gate name → value; PodDisruptionConditions (ours) is left out.
 * @throws {Error} as {@link parseFeatureGates}.
 */
export function kcmFeatureGateValues(values: string | readonly string[]): Map<string, boolean> {
  return resolveFeatureGates(values).enabled;
}

/** The flag's gates: ours, which kcm gates the flag set (named or by AllAlpha/AllBeta), and every available kcm gate's value. */
function resolveFeatureGates(values: string | readonly string[]): { ours: boolean | undefined; explicit: Set<string>; enabled: Map<string, boolean> } {
  const byComponent = splitComponents(typeof values === 'string' ? [values] : values);
  if (byComponent.has('') && byComponent.has(KUBE_COMPONENT)) {
    throw new Error('set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use');
  }
  for (const component of byComponent.keys()) {
    if (component !== '' && component !== KUBE_COMPONENT) throw new Error(`component not registered: ${component}`);
  }
  const raw = parseGateValues([...byComponent.values()].flat().join(','));
  const ours = raw.get(OURS);
  raw.delete(OURS);
  const set = setFromMap(raw);
  const enabled = new Map<string, boolean>();
  for (const [name, spec] of Object.entries(KCM_FEATURE_GATES)) {
    if (spec.preRelease !== 'PRE-ALPHA') enabled.set(name, set.get(name) ?? spec.default);
  }
  return { ours, explicit: new Set(set.keys()), enabled };
}

/**
 * component-base `ColonSeparatedMultimapStringString.Set` with AllowDefaultEmptyKey, over every
 * occurrence of the flag: component (`''` without a prefix) → its `name=value` entries, in order.
 */
function splitComponents(values: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const value of values) {
    for (const pair of value.split(',')) {
      if (pair.length === 0) continue;
      const colon = pair.indexOf(':');
      const component = colon < 0 ? '' : goTrim(pair.slice(0, colon));
      const entry = goTrim(colon < 0 ? pair : pair.slice(colon + 1));
      const list = out.get(component) ?? [];
      list.push(entry);
      out.set(component, list);
    }
  }
  return out;
}

/** Go's `strings.TrimSpace` (unicode.IsSpace: JS's `trim` also strips U+FEFF, and keeps U+0085). */
function goTrim(s: string): string {
  return s.replace(/^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, '');
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * featuregate `(*featureGate).Set`'s parsing: `name=value` entries, Go booleans; a name given twice
 * keeps its last value (a Go map).
 */
function parseGateValues(text: string): Map<string, boolean> {
  const m = new Map<string, boolean>();
  for (const s of text.split(',')) {
    if (s.length === 0) continue;
    const eq = s.indexOf('=');
    const k = goTrim(eq < 0 ? s : s.slice(0, eq));
    if (eq < 0) throw new Error(`missing bool value for ${k}`);
    const v = goTrim(s.slice(eq + 1));
    if (GO_TRUE.has(v)) m.set(k, true);
    else if (GO_FALSE.has(v)) m.set(k, false);
    else throw new Error(`invalid value of ${k}=${v}, err: strconv.ParseBool: parsing ${goQuote(v)}: invalid syntax`);
  }
  return m;
}

/** Go's `strconv.Quote` for the ASCII a flag value carries (JSON's escapes, but \a, \v and \xNN as Go writes them). */
function goQuote(s: string): string {
  return JSON.stringify(s)
    .replaceAll('\\u0007', '\\a')
    .replaceAll('\\u000b', '\\v')
    .replace(/\\u00([0-9a-f]{2})/g, '\\x$1')
    .replaceAll('\x7f', '\\x7f');
}

/**
 * featuregate `unsafeSetFromMap`: validates the named gates against the registry and returns the
 * gates whose value the flag decides (named, or reached by `AllAlpha`/`AllBeta`); then checks the
 * dependencies of every gate that ends up on.
 * @throws {Error} upstream's message; several errors as utilerrors' aggregate (`[a, b]`).
 */
function setFromMap(raw: ReadonlyMap<string, boolean>): Map<string, boolean> {
  const enabled = new Map<string, boolean>();
  const errors: string[] = [];
  const unknown = [...raw.keys()].find((k) => specOf(k) === undefined);
  if (unknown !== undefined) throw new Error(`unrecognized feature gate: ${unknown}`);
  for (const [k, v] of raw) {
    const spec = specOf(k) as KcmFeatureGateSpec;
    if (spec.locked && spec.default !== v) {
      errors.push(`cannot set feature gate ${k} to ${v}, feature is locked to ${spec.default}`);
      continue;
    }
    if (k === ALL_ALPHA || k === ALL_BETA) continue;
    if (spec.preRelease === 'PRE-ALPHA') {
      errors.push(`cannot set feature gate ${k} to ${v}, feature is PreAlpha at emulated version 1.37, min compatibility version 1.36`);
      continue;
    }
    enabled.set(k, v);
  }
  // The special gates fill in only what no entry named, whatever the order of the entries.
  for (const [special, stage] of [[ALL_ALPHA, 'ALPHA'], [ALL_BETA, 'BETA']] as const) {
    const v = raw.get(special);
    if (v === undefined || errors.length > 0) continue;
    for (const [name, spec] of Object.entries(KCM_FEATURE_GATES)) {
      if (name !== ALL_ALPHA && name !== ALL_BETA && spec.preRelease === stage && !raw.has(name)) enabled.set(name, v);
    }
    enabled.set(special, v);
  }
  if (errors.length > 0) throw new Error(aggregate(errors));

  const isOn = (name: string): boolean => enabled.get(name) ?? specOf(name)?.default ?? false;
  for (const [feature, deps] of Object.entries(KCM_FEATURE_GATE_DEPENDENCIES)) {
    if (!isOn(feature)) continue;
    const off = deps.filter((d) => !isOn(d));
    if (off.length > 0) errors.push(`${feature} is enabled, but depends on features that are disabled: [${off.join(' ')}]`);
  }
  if (errors.length > 0) throw new Error(aggregate(errors));
  return enabled;
}

function specOf(name: string): KcmFeatureGateSpec | undefined {
  return Object.hasOwn(KCM_FEATURE_GATES, name) ? KCM_FEATURE_GATES[name] : undefined;
}

/** apimachinery `utilerrors.NewAggregate(errs).Error()`: one message alone, several deduplicated in brackets. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}
