/**
 * Eviction thresholds: parsing the kubelet's flags and KubeletConfiguration fields, the default hard
 * thresholds, and the pure threshold/condition bookkeeping of the eviction manager.
 * Mirrors pkg/kubelet/eviction/helpers.go, eviction/api/types.go, eviction/defaults_linux.go and
 * cmd/kubelet/app/server.go (defaults of evictionHard). Durations in milliseconds, grace periods of
 * pods in seconds; quantities in base units (bytes, inodes, PIDs).
 */
import { parseGoDuration } from '../util/duration.js';
import { parseQuantity } from '../kube/quantity.js';
import {
  SIGNAL_TO_NODE_CONDITION, SIGNAL_TO_RESOURCE, isSignal,
  type PressureConditionType, type Signal, type SignalObservations, type StarvedResource,
} from './signals.js';

/** A threshold value: an absolute quantity (base units) or a fraction of capacity (0–1, float32 as upstream). */
export interface ThresholdValue { quantity?: number; percentage?: number }

/** eviction/api `Threshold`. `gracePeriodMs` 0 means hard. The only operator upstream has is `LessThan`. */
export interface Threshold {
  signal: Signal;
  operator: 'LessThan';
  value: ThresholdValue;
  gracePeriodMs: number;
  minReclaim?: ThresholdValue;
}

/** Thrown for an invalid eviction flag or configuration field; the message names the signal and value. */
export class EvictionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EvictionConfigError';
  }
}

/** eviction/defaults_linux.go `DefaultEvictionHard`. */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = {
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
};

/** KubeletConfiguration default of `evictionPressureTransitionPeriod`: 5 m (apis/config/v1beta1/defaults.go), in ms. */
export const DEFAULT_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;

/** The eviction manager's housekeeping interval, ms (kubelet.go `evictionMonitoringPeriod`, 10 s; not configurable). */
export const EVICTION_MONITORING_PERIOD_MS = 10_000;

/**
 * The grace a hard eviction kills with, seconds: eviction_manager.go `immediateEvictionGracePeriodSeconds`.
 * 1 in v1.37.2; the project's source documents say 0 (older kubelets) — current upstream wins.
 */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;

/** cmd/kubelet/app/options/options.go: the eviction flags this module understands, by kubelet flag name. */
export const EVICTION_FLAGS = [
  'eviction-hard', 'eviction-soft', 'eviction-soft-grace-period', 'eviction-max-pod-grace-period',
  'eviction-minimum-reclaim', 'eviction-pressure-transition-period',
] as const;

/** The KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields of eviction, by their JSON names. */
export interface KubeletEvictionConfiguration {
  evictionHard?: Record<string, string>;
  evictionSoft?: Record<string, string>;
  evictionSoftGracePeriod?: Record<string, string>;
  /** seconds */
  evictionMaxPodGracePeriod?: number;
  evictionMinimumReclaim?: Record<string, string>;
  /** Go duration, e.g. `5m0s` */
  evictionPressureTransitionPeriod?: string;
  mergeDefaultEvictionSettings?: boolean;
}

/** The eviction manager's configuration (eviction/types.go `Config`, the parts the simulator uses). */
export interface EvictionConfig {
  thresholds: Threshold[];
  /** ms */
  pressureTransitionPeriodMs: number;
  /** seconds */
  maxPodGracePeriodSeconds: number;
}

/** helpers.go `parsePercentage`: `"10.5%"` → 0.105, as float32. @throws EvictionConfigError if not a number */
export function parsePercentage(input: string): number {
  const text = input.replace(/%+$/, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new EvictionConfigError(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
  return Math.fround(Math.fround(Number(text)) / 100);
}

function quantityOrThrow(val: string): number {
  try {
    return parseQuantity(val);
  } catch (err) {
    throw new EvictionConfigError((err as Error).message);
  }
}

function checkedSignal(name: string): Signal {
  if (!isSignal(name)) throw new EvictionConfigError(`unsupported eviction signal ${name}`);
  return name;
}

/** helpers.go `parseThresholdStatement`: `undefined` for `0%` and `100%` (no threshold). @throws EvictionConfigError */
export function parseThresholdStatement(name: string, val: string): Threshold | undefined {
  const signal = checkedSignal(name);
  if (val.endsWith('%')) {
    if (val === '0%' || val === '100%') return undefined;
    const percentage = parsePercentage(val);
    if (percentage < 0) throw new EvictionConfigError(`eviction percentage threshold ${signal} must be >= 0%: ${val}`);
    if (percentage > 1) throw new EvictionConfigError(`eviction percentage threshold ${signal} must be <= 100%: ${val}`);
    return { signal, operator: 'LessThan', value: { percentage }, gracePeriodMs: 0 };
  }
  const quantity = quantityOrThrow(val);
  if (quantity <= 0) throw new EvictionConfigError(`eviction threshold ${signal} must be positive: ${val}`);
  return { signal, operator: 'LessThan', value: { quantity }, gracePeriodMs: 0 };
}

function parseThresholdStatements(statements: Record<string, string> | undefined): Threshold[] {
  const out: Threshold[] = [];
  for (const [signal, val] of Object.entries(statements ?? {})) {
    const t = parseThresholdStatement(signal, val);
    if (t) out.push(t);
  }
  return out;
}

/** helpers.go `parseGracePeriods`: ms by signal. @throws EvictionConfigError */
export function parseGracePeriods(statements: Record<string, string> | undefined): Map<Signal, number> {
  const out = new Map<Signal, number>();
  for (const [name, val] of Object.entries(statements ?? {})) {
    const signal = checkedSignal(name);
    let ms: number;
    try {
      ms = parseGoDuration(val);
    } catch (err) {
      throw new EvictionConfigError((err as Error).message);
    }
    if (ms < 0) throw new EvictionConfigError(`invalid eviction grace period specified: ${val}, must be a positive value`);
    out.set(signal, ms);
  }
  return out;
}

/** helpers.go `parseMinimumReclaims`. @throws EvictionConfigError */
export function parseMinimumReclaims(statements: Record<string, string> | undefined): Map<Signal, ThresholdValue> {
  const out = new Map<Signal, ThresholdValue>();
  for (const [name, val] of Object.entries(statements ?? {})) {
    const signal = checkedSignal(name);
    if (val.endsWith('%')) {
      const percentage = parsePercentage(val);
      if (percentage <= 0) throw new EvictionConfigError(`eviction percentage minimum reclaim ${signal} must be positive: ${val}`);
      out.set(signal, { percentage });
      continue;
    }
    const quantity = quantityOrThrow(val);
    if (quantity < 0) throw new EvictionConfigError(`negative eviction minimum reclaim specified for ${signal}`);
    out.set(signal, { quantity });
  }
  return out;
}

/**
 * helpers.go `ParseThresholdConfig`: hard thresholds, then soft ones (each needs a grace period),
 * minimum reclaims attached by signal, and `allocatableMemory.available` copies of hard
 * `memory.available` thresholds when `allocatableConfig` has `pods` (NodeAllocatableEnforcementKey).
 * @throws EvictionConfigError for an unknown signal, a bad value, or a soft threshold without grace period
 */
export function parseThresholdConfig(
  allocatableConfig: readonly string[],
  evictionHard: Record<string, string> | undefined,
  evictionSoft: Record<string, string> | undefined,
  evictionSoftGracePeriod: Record<string, string> | undefined,
  evictionMinimumReclaim: Record<string, string> | undefined,
): Threshold[] {
  const results = parseThresholdStatements(evictionHard);
  const soft = parseThresholdStatements(evictionSoft);
  const gracePeriods = parseGracePeriods(evictionSoftGracePeriod);
  const minReclaims = parseMinimumReclaims(evictionMinimumReclaim);
  for (const t of soft) {
    const period = gracePeriods.get(t.signal);
    if (period === undefined) throw new EvictionConfigError(`grace period must be specified for the soft eviction threshold ${t.signal}`);
    t.gracePeriodMs = period;
  }
  results.push(...soft);
  for (const t of results) {
    const min = minReclaims.get(t.signal);
    if (min) t.minReclaim = min;
  }
  return allocatableConfig.includes('pods') ? addAllocatableThresholds(results) : results;
}

/** helpers.go `addAllocatableThresholds`. */
export function addAllocatableThresholds(thresholds: readonly Threshold[]): Threshold[] {
  const extra: Threshold[] = thresholds
    .filter((t) => t.signal === 'memory.available' && isHardEvictionThreshold(t))
    .map((t) => ({ signal: 'allocatableMemory.available', operator: t.operator, value: t.value, gracePeriodMs: 0, ...(t.minReclaim ? { minReclaim: t.minReclaim } : {}) }));
  return [...thresholds, ...extra];
}

/**
 * cmd/kubelet/app/server.go: `evictionHard` as the kubelet uses it. Unset (`undefined`) → the
 * defaults; set (even to `{}`) → only what was set, unless `mergeDefaultEvictionSettings`, which
 * fills the signals left out from the defaults.
 */
export function effectiveEvictionHard(evictionHard: Record<string, string> | undefined, mergeDefaults = false): Record<string, string> {
  if (evictionHard === undefined) return { ...DEFAULT_EVICTION_HARD };
  if (!mergeDefaults) return { ...evictionHard };
  return { ...DEFAULT_EVICTION_HARD, ...evictionHard };
}

/**
 * Parses `--eviction-hard`/`--eviction-soft` syntax (component-base `LangleSeparatedMapStringString`):
 * `memory.available<100Mi,nodefs.available<10%`. @throws EvictionConfigError
 */
export function parseLangleMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const i = pair.indexOf('<');
    if (i < 0) throw new EvictionConfigError(`malformed pair, expect string<string: ${JSON.stringify(pair)}`);
    out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

/** Parses `--eviction-soft-grace-period`/`--eviction-minimum-reclaim` syntax (`MapStringString`): `a=1m30s,b=2Gi`. @throws EvictionConfigError */
export function parseEqualsMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const i = pair.indexOf('=');
    if (i < 0) throw new EvictionConfigError(`malformed pair, expect string=string: ${JSON.stringify(pair)}`);
    out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

/**
 * Builds the eviction configuration from KubeletConfiguration fields (v1beta1 JSON names), applying
 * the kubelet's defaults: evictionHard per {@link effectiveEvictionHard}, transition period 5 m,
 * max pod grace period 0 s.
 * @throws EvictionConfigError for an invalid value
 */
export function evictionConfigFromKubeletConfiguration(cfg: KubeletEvictionConfiguration): EvictionConfig {
  const hard = effectiveEvictionHard(cfg.evictionHard, cfg.mergeDefaultEvictionSettings ?? false);
  const thresholds = parseThresholdConfig([], hard, cfg.evictionSoft, cfg.evictionSoftGracePeriod, cfg.evictionMinimumReclaim);
  let pressureTransitionPeriodMs = DEFAULT_PRESSURE_TRANSITION_PERIOD_MS;
  if (cfg.evictionPressureTransitionPeriod !== undefined) {
    try {
      pressureTransitionPeriodMs = parseGoDuration(cfg.evictionPressureTransitionPeriod);
    } catch (err) {
      throw new EvictionConfigError(`evictionPressureTransitionPeriod: ${(err as Error).message}`);
    }
    if (pressureTransitionPeriodMs < 0) throw new EvictionConfigError('evictionPressureTransitionPeriod must be >= 0');
    // v1beta1 defaults.go: a zero duration means "unset", i.e. 5 m.
    if (pressureTransitionPeriodMs === 0) pressureTransitionPeriodMs = DEFAULT_PRESSURE_TRANSITION_PERIOD_MS;
  }
  const maxPodGracePeriodSeconds = cfg.evictionMaxPodGracePeriod ?? 0;
  if (!Number.isInteger(maxPodGracePeriodSeconds)) throw new EvictionConfigError(`evictionMaxPodGracePeriod must be an integer: ${maxPodGracePeriodSeconds}`);
  return { thresholds, pressureTransitionPeriodMs, maxPodGracePeriodSeconds };
}

/**
 * Builds the eviction configuration from kubelet flags, by flag name without dashes
 * (`{'eviction-hard': 'memory.available<1Gi', 'eviction-pressure-transition-period': '30s'}`).
 * Flags override `base` (a KubeletConfiguration), as on the kubelet.
 * @throws EvictionConfigError for an unknown flag or an invalid value
 */
export function evictionConfigFromFlags(flags: Readonly<Record<string, string>>, base: KubeletEvictionConfiguration = {}): EvictionConfig {
  const cfg: KubeletEvictionConfiguration = { ...base };
  for (const [flag, value] of Object.entries(flags)) {
    switch (flag) {
      case 'eviction-hard': cfg.evictionHard = parseLangleMap(value); break;
      case 'eviction-soft': cfg.evictionSoft = parseLangleMap(value); break;
      case 'eviction-soft-grace-period': cfg.evictionSoftGracePeriod = parseEqualsMap(value); break;
      case 'eviction-minimum-reclaim': cfg.evictionMinimumReclaim = parseEqualsMap(value); break;
      case 'eviction-max-pod-grace-period': {
        if (!/^-?\d+$/.test(value.trim())) throw new EvictionConfigError(`invalid argument ${JSON.stringify(value)} for "--eviction-max-pod-grace-period" flag: not an integer`);
        cfg.evictionMaxPodGracePeriod = Number(value);
        break;
      }
      case 'eviction-pressure-transition-period': cfg.evictionPressureTransitionPeriod = value; break;
      default: throw new EvictionConfigError(`unknown eviction flag --${flag}`);
    }
  }
  return evictionConfigFromKubeletConfiguration(cfg);
}

/** helpers.go `isHardEvictionThreshold`: no grace period. */
export function isHardEvictionThreshold(t: Threshold): boolean {
  return t.gracePeriodMs === 0;
}

/** eviction/api `GetThresholdQuantity`: the threshold in base units against `capacity` (percentages truncate as int64(float64(cap)*float64(pct))). */
export function getThresholdQuantity(value: ThresholdValue, capacity: number): number {
  if (value.quantity !== undefined) return value.quantity;
  return Math.trunc(Math.ceil(capacity) * (value.percentage ?? 0));
}

/** helpers.go `compareThresholdValue`. */
export function compareThresholdValue(a: ThresholdValue, b: ThresholdValue): boolean {
  if (a.quantity !== undefined) return b.quantity !== undefined && a.quantity === b.quantity;
  if (b.quantity !== undefined) return false;
  return (a.percentage ?? 0) === (b.percentage ?? 0);
}

/** A stable identity of a threshold, standing in for Go's struct map key. */
export function thresholdKey(t: Threshold): string {
  const v = (x: ThresholdValue | undefined): string => (x === undefined ? '-' : x.quantity !== undefined ? `q${x.quantity}` : `p${x.percentage ?? 0}`);
  return `${t.signal}|${t.operator}|${v(t.value)}|${t.gracePeriodMs}|${v(t.minReclaim)}`;
}

/**
 * helpers.go `thresholdsMet`: thresholds whose quantity (plus min reclaim when `enforceMinReclaim`)
 * is above the observed available value. Thresholds without an observation are skipped.
 */
export function thresholdsMet(thresholds: readonly Threshold[], observations: SignalObservations, enforceMinReclaim: boolean): Threshold[] {
  const out: Threshold[] = [];
  for (const t of thresholds) {
    const observed = observations[t.signal];
    if (!observed) continue;
    let quantity = getThresholdQuantity(t.value, observed.capacity);
    if (enforceMinReclaim && t.minReclaim) quantity += getThresholdQuantity(t.minReclaim, observed.capacity);
    if (t.operator === 'LessThan' && quantity > observed.available) out.push(t);
  }
  return out;
}

/** helpers.go `thresholdsUpdatedStats`: thresholds whose signal has newer stats than at the last synchronize (or no time). */
export function thresholdsUpdatedStats(thresholds: readonly Threshold[], observations: SignalObservations, last: SignalObservations): Threshold[] {
  return thresholds.filter((t) => {
    const observed = observations[t.signal];
    if (!observed) return false;
    const prev = last[t.signal];
    return !prev || observed.timeMs === undefined || observed.timeMs > (prev.timeMs ?? Number.NEGATIVE_INFINITY);
  });
}

/** When each threshold was first seen met (epoch ms), keyed by {@link thresholdKey}. helpers.go `thresholdsObservedAt`. */
export type ThresholdsObservedAt = Map<string, { threshold: Threshold; atMs: number }>;

/** helpers.go `thresholdsFirstObservedAt`: keeps earlier first-seen times, `nowMs` for new ones. */
export function thresholdsFirstObservedAt(thresholds: readonly Threshold[], last: ThresholdsObservedAt, nowMs: number): ThresholdsObservedAt {
  const out: ThresholdsObservedAt = new Map();
  for (const t of thresholds) {
    const k = thresholdKey(t);
    out.set(k, { threshold: t, atMs: last.get(k)?.atMs ?? nowMs });
  }
  return out;
}

/** helpers.go `thresholdsMetGracePeriod`: thresholds met for at least their grace period. */
export function thresholdsMetGracePeriod(observedAt: ThresholdsObservedAt, nowMs: number): Threshold[] {
  return [...observedAt.values()].filter(({ threshold, atMs }) => nowMs - atMs >= threshold.gracePeriodMs).map((e) => e.threshold);
}

/** helpers.go `nodeConditions`: the distinct conditions of the thresholds, in first-seen order. */
export function nodeConditions(thresholds: readonly Threshold[]): PressureConditionType[] {
  const out: PressureConditionType[] = [];
  for (const t of thresholds) {
    const c = SIGNAL_TO_NODE_CONDITION[t.signal];
    if (c && !out.includes(c)) out.push(c);
  }
  return out;
}

/** When each pressure condition was last observed (epoch ms). helpers.go `nodeConditionsObservedAt`. */
export type NodeConditionsObservedAt = Map<PressureConditionType, number>;

/** helpers.go `nodeConditionsLastObservedAt`: `nowMs` for the current conditions, older times kept for the rest. */
export function nodeConditionsLastObservedAt(conditions: readonly PressureConditionType[], last: NodeConditionsObservedAt, nowMs: number): NodeConditionsObservedAt {
  const out: NodeConditionsObservedAt = new Map(conditions.map((c) => [c, nowMs]));
  for (const [c, at] of last) if (!out.has(c)) out.set(c, at);
  return out;
}

/** helpers.go `nodeConditionsObservedSince`: conditions last observed less than `periodMs` ago (the transition period holds them). */
export function nodeConditionsObservedSince(observedAt: NodeConditionsObservedAt, periodMs: number, nowMs: number): PressureConditionType[] {
  return [...observedAt].filter(([, at]) => nowMs - at < periodMs).map(([c]) => c);
}

/** helpers.go `hasNodeCondition`. */
export function hasNodeCondition(conditions: readonly PressureConditionType[], item: PressureConditionType): boolean {
  return conditions.includes(item);
}

/** helpers.go `hasThreshold`: same signal, operator, grace period and value. */
export function hasThreshold(inputs: readonly Threshold[], item: Threshold): boolean {
  return inputs.some((t) => t.gracePeriodMs === item.gracePeriodMs && t.operator === item.operator && t.signal === item.signal && compareThresholdValue(t.value, item.value));
}

/** helpers.go `mergeThresholds`: `a` plus the thresholds of `b` not in it. */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const out = [...a];
  for (const t of b) if (!hasThreshold(out, t)) out.push(t);
  return out;
}

/**
 * helpers.go `byEvictionPriority` with Go's `sort.Sort`: memory signals first, signals without a
 * resource last. Returns a new array (stable; Go's sort is not, which only matters among equals).
 */
export function sortByEvictionPriority(thresholds: readonly Threshold[]): Threshold[] {
  const rank = (t: Threshold): number => (t.signal === 'memory.available' || t.signal === 'allocatableMemory.available' ? 0 : isSignal(t.signal) ? 1 : 2);
  return [...thresholds].sort((a, b) => rank(a) - rank(b));
}

/** helpers.go `getReclaimableThreshold`: the first threshold with a resource to reclaim. */
export function getReclaimableThreshold(thresholds: readonly Threshold[]): { threshold: Threshold; resource: StarvedResource } | undefined {
  for (const t of thresholds) {
    const resource = SIGNAL_TO_RESOURCE[t.signal] as StarvedResource | undefined;
    if (resource) return { threshold: t, resource };
  }
  return undefined;
}

/**
 * helpers.go `UpdateContainerFsThresholds`: adds (or replaces configured) `containerfs.*` thresholds,
 * copied from nodefs when the container filesystem is the node filesystem (no image fs, or a split
 * image fs), from imagefs when the image fs holds the containers. Configured containerfs thresholds
 * are replaced and reported in `ignored`.
 */
export function updateContainerFsThresholds(thresholds: readonly Threshold[], imageFs: boolean, splitContainerImageFs: boolean): { thresholds: Threshold[]; ignored: string[] } {
  const out = [...thresholds];
  const ignored: string[] = [];
  const pick = (signal: Signal, hard: boolean): Threshold | undefined => {
    let found: Threshold | undefined;
    for (const t of thresholds) if (t.signal === signal && isHardEvictionThreshold(t) === hard) found = t;
    return found;
  };
  const copy = (target: Signal, from: Signal, hard: boolean): void => {
    const src = pick(from, hard);
    const made: Threshold = {
      signal: target, operator: 'LessThan', value: src?.value ?? {}, gracePeriodMs: hard ? 0 : (src?.gracePeriodMs ?? 0),
      ...(src?.minReclaim ? { minReclaim: src.minReclaim } : {}),
    };
    // Without a source upstream appends a zero-valued Threshold; its zero value never meets.
    const idx = out.findIndex((t) => t.signal === target && isHardEvictionThreshold(t) === hard);
    if (idx >= 0) {
      ignored.push(`found ${target} for ${hard ? 'hard' : 'soft'} eviction. ignoring`);
      out[idx] = made;
    } else {
      out.push(made);
    }
  };
  if (imageFs && splitContainerImageFs || !imageFs && !splitContainerImageFs) {
    copy('containerfs.available', 'nodefs.available', true);
    copy('containerfs.available', 'nodefs.available', false);
    copy('containerfs.inodesFree', 'nodefs.inodesFree', true);
    copy('containerfs.inodesFree', 'nodefs.inodesFree', false);
  } else {
    copy('containerfs.available', 'imagefs.available', true);
    copy('containerfs.available', 'imagefs.available', false);
    copy('containerfs.inodesFree', 'imagefs.inodesFree', true);
    copy('containerfs.inodesFree', 'imagefs.inodesFree', false);
  }
  return { thresholds: out, ignored };
}
