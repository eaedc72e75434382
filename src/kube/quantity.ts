/**
 * Kubernetes resource quantities (`100Mi`, `1.5Gi`, `10k`, `500m`, `1e3`) as plain numbers of base
 * units (bytes, inodes, PIDs), for the eviction signals and thresholds.
 *
 * Why our own: `@kubernetes/client-node` 2.0.1's `quantityToScalar` is not exported from the
 * package index, and throws on a fractional value with a suffix (`1.5Gi`: "Cannot convert 1.5 to a
 * BigInt", measured 2026-11-24), which the eviction docs use as their example (`memory.available<1.5Gi`);
 * the only npm parser for the grammar (`kubernetes-resource-parser`) has one release and no upkeep.
 * Numbers are exact for every integer up to 2^53 (8 PiB), far above any node's capacity.
 */

const BINARY_SUFFIXES: Readonly<Record<string, number>> = {
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
};

/** Thrown by {@link parseQuantity} for text that is not a Kubernetes quantity. */
export class QuantityError extends Error {
  constructor(text: string) {
    super(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(text)}`);
    this.name = 'QuantityError';
  }
}

const QUANTITY_RE = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$/;

/**
 * Parses a quantity into base units (may be fractional, e.g. `500m` → 0.5).
 * Mirrors apimachinery `resource.ParseQuantity` (pkg/api/resource/quantity.go): a signed decimal
 * number and one binary-SI (`Ki`…`Ei`), decimal-SI (`n`…`E`) or exponent (`e3`, `E-2`) suffix.
 * @throws QuantityError for empty or malformed text
 */
export function parseQuantity(text: string): number {
  const m = QUANTITY_RE.exec(text);
  if (!m) throw new QuantityError(text);
  const num = Number(m[1]);
  const suffix = m[2] ?? '';
  const binary = BINARY_SUFFIXES[suffix];
  if (binary !== undefined) return num * binary;
  const decimal = DECIMAL_SUFFIXES[suffix];
  if (decimal !== undefined) return num * decimal;
  const exp = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  if (exp) return num * 10 ** Number(exp[1]);
  throw new QuantityError(text);
}

/** `Quantity.Value()`: the value rounded up to an integer (quantity.go `Value` → `ScaledValue(0)`, which rounds up). */
export function quantityValue(q: number): number {
  return Math.ceil(q);
}

/**
 * Canonical text of an integer quantity of bytes, as Go's `Quantity.String()` prints a BinarySI
 * quantity: the largest binary suffix that divides it exactly (`100Mi`, `1500Mi`); below 1024 the
 * decimal form; otherwise the plain integer.
 */
export function formatBytes(bytes: number): string {
  const v = Math.ceil(bytes);
  if (Math.abs(v) < 1024) return formatDecimal(v);
  for (const [suffix, factor] of Object.entries(BINARY_SUFFIXES).reverse()) {
    if (v % factor === 0) return `${v / factor}${suffix}`;
  }
  return String(v);
}

/**
 * Bytes for people (`explain node`, the demo), not Go's canonical text: an exact multiple of a binary
 * unit as it is (`512Mi`, `1Gi`); otherwise the largest unit below the value, truncated (never rounded
 * up, so a value just under a threshold never reads as the threshold) to two decimals under 10 units and
 * one decimal above (`1.46Gi`, `20.0Gi`, `1023.9Mi`); below 1Ki the plain number of bytes.
 * @param bytes a number of bytes (fractions are rounded up first, as {@link formatBytes})
 */
export function formatReadableBytes(bytes: number): string {
  const v = Math.ceil(bytes);
  const abs = Math.abs(v);
  if (abs < 1024) return String(v);
  const [suffix, factor] = Object.entries(BINARY_SUFFIXES).reverse().find(([, f]) => abs >= f) as [string, number];
  if (abs % factor === 0) return `${v / factor}${suffix}`;
  const decimals = abs / factor < 10 ? 2 : 1;
  const scale = 10 ** decimals;
  return `${v < 0 ? '-' : ''}${(Math.trunc((abs / factor) * scale) / scale).toFixed(decimals)}${suffix}`;
}

/** Canonical text of an integer DecimalSI quantity (inodes, PIDs): `5k`, `2M`, or the plain integer. */
export function formatDecimal(count: number): string {
  const v = Math.ceil(count);
  if (v === 0) return '0';
  for (const suffix of ['E', 'P', 'T', 'G', 'M', 'k']) {
    const factor = DECIMAL_SUFFIXES[suffix] as number;
    if (v % factor === 0) return `${v / factor}${suffix}`;
  }
  return String(v);
}
