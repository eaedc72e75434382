/**
 * Least-squares lines: the soak's RSS slope (test/chaos/soakstats.ts) and the limits scenario's
 * extrapolation from smaller sizes (bench/limits-fit.ts) share this one implementation.
 */

/** A least-squares line `y = intercept + slope · x` over `n` points. */
export interface LinearFit {
  slope: number;
  intercept: number;
  /** coefficient of determination, 1 for a perfect line (NaN when every y is equal) */
  r2: number;
  n: number;
}

/**
 * Fits `y = intercept + slope · x` by least squares. Pure.
 * @returns slope and intercept NaN with fewer than two distinct x.
 */
export function linearFit(points: readonly { x: number; y: number }[]): LinearFit {
  const n = points.length;
  if (n < 2) return { slope: Number.NaN, intercept: Number.NaN, r2: Number.NaN, n };
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (const p of points) {
    sxx += (p.x - mx) ** 2;
    sxy += (p.x - mx) * (p.y - my);
    syy += (p.y - my) ** 2;
  }
  if (sxx === 0) return { slope: Number.NaN, intercept: Number.NaN, r2: Number.NaN, n };
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 ? Number.NaN : (sxy * sxy) / (sxx * syy), n };
}
