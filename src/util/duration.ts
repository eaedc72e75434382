/**
 * Go `time.Duration` syntax, as kube-controller-manager's flags take it (`50s`, `1m30s`, `500ms`, `1h`).
 *
 * Mirrors Go's `time.ParseDuration` (`src/time/format.go`): an optional sign, then one or more
 * decimal numbers each with a unit out of `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`. A bare `0` is allowed.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Thrown by {@link parseGoDuration} for text that is not a Go duration. */
export class DurationSyntaxError extends Error {
  constructor(text: string, why: string) {
    super(`invalid duration "${text}": ${why}`);
    this.name = 'DurationSyntaxError';
  }
}

/**
 * Parses a Go duration string.
 * @param text for example `"50s"`, `"1m30s"`, `"-1.5h"`, `"0"`.
 * @returns the duration in **milliseconds** (fractions of a millisecond are kept as a fraction).
 * @throws {DurationSyntaxError} when the text is empty, has a missing or unknown unit, or a malformed number.
 */
export function parseGoDuration(text: string): number {
  const s = text.trim();
  if (s === '') throw new DurationSyntaxError(text, 'empty');
  let i = 0;
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (s.slice(i) === '0') return 0;
  if (i >= s.length) throw new DurationSyntaxError(text, 'no number');
  let total = 0;
  const re = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (i < s.length) {
    const m = re.exec(s.slice(i));
    if (!m) {
      const rest = s.slice(i);
      if (/^(\d+\.?\d*|\.\d+)$/.test(rest)) throw new DurationSyntaxError(text, `missing unit in "${rest}"`);
      if (/^(\d+\.?\d*|\.\d+)/.test(rest)) throw new DurationSyntaxError(text, `unknown unit in "${rest}"`);
      throw new DurationSyntaxError(text, `unexpected "${rest}"`);
    }
    const value = Number(m[1]);
    const unit = UNIT_MS[m[2] as string];
    if (unit === undefined || !Number.isFinite(value)) throw new DurationSyntaxError(text, `bad component "${m[0]}"`);
    total += value * unit;
    i += m[0].length;
  }
  return sign * total;
}

/**
 * Formats milliseconds the way Go's `Duration.String()` does (`1m30s`, `500ms`, `0s`).
 * @param ms duration in **milliseconds**.
 * @returns the Go duration text.
 */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  let out: string;
  if (rest < 1000) {
    out = rest >= 1 ? `${trimFloat(rest)}ms` : rest >= 1e-3 ? `${trimFloat(rest * 1e3)}µs` : `${trimFloat(rest * 1e6)}ns`;
  } else {
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const sec = rest / 1000;
    out = `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${trimFloat(sec)}s`;
  }
  return neg ? `-${out}` : out;
}

function trimFloat(n: number): string {
  return String(Number(n.toFixed(9)));
}
