/**
 * Toleration matching for NoExecute taint eviction: which toleration covers which taint, and how
 * long a pod may stay on a tainted node.
 *
 * Mirrors `staging/src/k8s.io/api/core/v1/toleration.go` (`Toleration.ToleratesTaint`,
 * `compareNumericValues`), `apimachinery/pkg/api/validate/content` (`IsDecimalInteger`),
 * `pkg/apis/core/v1/helper/helpers.go` (`GetMatchingTolerations`) and
 * `pkg/controller/tainteviction/taint_eviction.go` (`getMinTolerationTime`, `getNoExecuteTaints`).
 */
import type { Taint, Toleration } from '../kube/objects.js';

/**
 * How long a toleration lets a pod stay: a duration in **milliseconds** (≥ 0), or `'forever'`.
 *
 * Why a string and not upstream's `-1` or `Infinity`: `-1` reads as "already expired" when added to
 * a timestamp, and `Infinity` passed to Node's `setTimeout` becomes a 1 ms timer. `'forever'` makes
 * the type checker force every caller to handle the unbounded case.
 */
export type TolerationTimeMs = number | 'forever';

/** The value of {@link TolerationTimeMs} meaning "tolerated forever" (upstream's `-1`). */
export const FOREVER = 'forever' as const;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Whether `value` is a decimal integer in canonical form: `0`, or an optional `-` and a digit 1–9
 * followed by digits; no `+`, no leading zero, no `-0`, no spaces, nothing but ASCII digits. Any
 * length (the range is {@link compareNumericValues}' concern).
 * @returns true when it is. Never throws.
 * Mirrors `k8s.io/apimachinery/pkg/api/validate/content` `IsDecimalInteger` (v0.37.2), which
 * returns error strings where this returns false.
 */
export function isDecimalInteger(value: string): boolean {
  return /^(0|-?[1-9][0-9]*)$/.test(value);
}

/**
 * Go's `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits, within int64.
 * @returns the value as a bigint, or `undefined` where Go returns an error.
 */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

/**
 * The numeric comparison of an `Lt`/`Gt` toleration: both values must be canonical decimal integers
 * ({@link isDecimalInteger}) within int64; then `Lt` matches when the taint's value is less than the
 * toleration's, `Gt` when it is greater. Any other operator, or a value that fails either check,
 * does not match (upstream also logs the parse error).
 * @returns whether the comparison holds. Never throws.
 * Mirrors `k8s.io/api/core/v1/toleration.go` `compareNumericValues` (v0.37.2).
 */
export function compareNumericValues(tolerationValue: string, taintValue: string, operator: string): boolean {
  const tol = isDecimalInteger(tolerationValue) ? parseInt64(tolerationValue) : undefined;
  if (tol === undefined) return false;
  const tnt = isDecimalInteger(taintValue) ? parseInt64(taintValue) : undefined;
  if (tnt === undefined) return false;
  if (operator === 'Lt') return tnt < tol;
  if (operator === 'Gt') return tnt > tol;
  return false;
}

/**
 * Whether `toleration` tolerates `taint`.
 *
 * Rules, in upstream order: a non-empty toleration effect must equal the taint effect; a non-empty
 * toleration key must equal the taint key (so an empty key with `Exists` matches every taint);
 * then by operator: `""`/`Equal` compares values (an absent value is `""`), `Exists` matches any
 * value, `Lt`/`Gt` match only with the `TaintTolerationComparisonOperators` gate on, and then by
 * {@link compareNumericValues}; any other operator never matches. `tolerationSeconds` plays no part.
 *
 * With the gate off (its default in 1.37) an `Lt`/`Gt` toleration tolerates nothing, so a pod that
 * only such a toleration covered is deleted when the taint comes, as kube-controller-manager does
 * (issue 53: ours used to compare unconditionally, and kept such pods).
 *
 * @param comparisonOperators the `TaintTolerationComparisonOperators` gate (src/controllers/config.ts).
 * @returns true if the toleration covers the taint. Never throws.
 * Mirrors `core/v1/toleration.go` `(*Toleration).ToleratesTaint` with `enableComparisonOperators`.
 */
export function toleratesTaint(toleration: Toleration, taint: Taint, comparisonOperators: boolean): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    case 'Lt':
    case 'Gt':
      if (!comparisonOperators) return false;
      return compareNumericValues(toleration.value ?? '', taint.value ?? '', toleration.operator ?? '');
    default:
      return false;
  }
}

/**
 * The first toleration, in toleration order, that tolerates `taint`.
 * @param comparisonOperators the `TaintTolerationComparisonOperators` gate (see {@link toleratesTaint}).
 * @returns that toleration, or `undefined` if none does. Never throws.
 * Mirrors the inner loop of `pkg/apis/core/v1/helper/helpers.go` `GetMatchingTolerations`.
 */
export function firstToleratingToleration(taint: Taint, tolerations: readonly Toleration[], comparisonOperators: boolean): Toleration | undefined {
  return tolerations.find((t) => toleratesTaint(t, taint, comparisonOperators));
}

/**
 * Matches every taint to the first toleration that tolerates it.
 *
 * @param comparisonOperators the `TaintTolerationComparisonOperators` gate, which upstream reads
 *   here from the global feature gate (see {@link toleratesTaint}).
 * @returns `{ allTolerated: true, used }` with one entry in `used` per taint, in taint order (the
 *   same toleration may appear more than once); `{ allTolerated: false, used: [] }` as soon as one
 *   taint has no tolerating toleration. No taints gives `{ allTolerated: true, used: [] }`.
 *   Never throws.
 * Mirrors `pkg/apis/core/v1/helper/helpers.go` `GetMatchingTolerations`.
 */
export function getMatchingTolerations(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
  comparisonOperators: boolean,
): { allTolerated: boolean; used: Toleration[] } {
  const used: Toleration[] = [];
  for (const taint of taints) {
    const match = firstToleratingToleration(taint, tolerations, comparisonOperators);
    if (match === undefined) return { allTolerated: false, used: [] };
    used.push(match);
  }
  return { allTolerated: true, used };
}

/**
 * How long one toleration lets a pod stay once its taint is present.
 * @returns `'forever'` without `tolerationSeconds`; otherwise `tolerationSeconds × 1000`
 *   **milliseconds**, where zero and negative seconds mean 0 (evict immediately). Never throws.
 * Mirrors the per-toleration step of `taint_eviction.go` `getMinTolerationTime`.
 */
export function tolerationTimeMs(toleration: Toleration): TolerationTimeMs {
  const seconds = toleration.tolerationSeconds;
  if (seconds === undefined) return FOREVER;
  // Deliberate difference from upstream: Go multiplies int64 seconds by time.Second and overflows
  // past ~292 years; we keep the (huge) value, which is still effectively "much later".
  return seconds <= 0 ? 0 : seconds * 1000;
}

/**
 * The shortest toleration time among `used` (the `used` list of {@link getMatchingTolerations}).
 *
 * @returns milliseconds: `0` for an empty list (no toleration was needed, so nothing delays the
 *   eviction — upstream's convention) or when any `tolerationSeconds` is ≤ 0; otherwise the
 *   minimum of the set `tolerationSeconds` × 1000; `'forever'` when none is set (upstream's `-1`).
 *   Never throws.
 * Mirrors `pkg/controller/tainteviction/taint_eviction.go` `getMinTolerationTime`.
 */
export function getMinTolerationTimeMs(used: readonly Toleration[]): TolerationTimeMs {
  if (used.length === 0) return 0;
  return minTolerationTime(used.map(tolerationTimeMs));
}

/** The smaller of toleration times, `'forever'` being larger than any number; `'forever'` for `[]`. */
function minTolerationTime(times: readonly TolerationTimeMs[]): TolerationTimeMs {
  let min: TolerationTimeMs = FOREVER;
  for (const t of times) if (t !== FOREVER && (min === FOREVER || t < min)) min = t;
  return min;
}

/**
 * The NoExecute taints among `taints`, in their original order.
 * @returns a new array (possibly empty). Never throws.
 * Mirrors `pkg/controller/tainteviction/taint_eviction.go` `getNoExecuteTaints`.
 */
export function noExecuteTaints(taints: readonly Taint[]): Taint[] {
  return taints.filter((t) => t.effect === 'NoExecute');
}

/**
 * Semantic equality of two NoExecute taint lists: key, value, effect and exact `timeAdded`, in
 * order. Never throws. Mirrors the `reflect.DeepEqual` of taint lists in upstream `NodeUpdated`.
 */
export function sameNoExecuteTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  return (
    a.length === b.length &&
    a.every((t, i) => {
      const u = b[i];
      return u !== undefined && t.key === u.key && (t.value ?? '') === (u.value ?? '') && t.effect === u.effect && t.timeAdded === u.timeAdded;
    })
  );
}
