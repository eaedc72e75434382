/**
 * The latency chart: empirical CDFs of detection latency and taint latency, upstream against ours,
 * with the targets as dashed lines. Rendered with the dependency-free {@link Raster}.
 */
import { Raster, type Rgb } from './png.js';

/** One series of samples (seconds) to plot. */
export interface Series {
  label: string;
  color: Rgb;
  values: readonly number[];
}

/** One panel: a title, series and optional vertical marker lines. */
export interface CdfPanel {
  title: string;
  xLabel: string;
  series: readonly Series[];
  markers?: readonly { x: number; label: string }[];
}

export const UPSTREAM_COLOR: Rgb = [31, 119, 180];
export const OURS_COLOR: Rgb = [230, 110, 20];
const INK: Rgb = [40, 40, 40];
const GRID: Rgb = [225, 225, 225];
const MARKER: Rgb = [200, 30, 30];

/**
 * "Nice" axis ticks covering [lo, hi] (steps of 1, 2 or 5 × 10^k). Pure.
 * @returns ascending tick values, at least two.
 */
export function niceTicks(lo: number, hi: number, target = 6): number[] {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const start = Math.floor(lo / step) * step;
  const n = Math.max(1, Math.ceil((hi - start) / step - 1e-9));
  return Array.from({ length: n + 1 }, (_, i) => Number((start + i * step).toPrecision(12)));
}

/** Short tick label: no trailing zeros, at most 3 decimals. */
function fmt(v: number): string {
  return String(Math.round(v * 1000) / 1000);
}

/** Grid lines and labels at the ticks, both axes, and the x axis's label. */
function drawFrame(r: Raster, box: { left: number; right: number; top: number; bottom: number }, xTicks: readonly number[], yTicks: readonly number[], sx: (v: number) => number, sy: (v: number) => number, xLabel: string): void {
  const { left, right, top, bottom } = box;
  for (const t of yTicks) {
    r.line(left, sy(t), right, sy(t), GRID);
    r.text(left - 8, sy(t) - 7, fmt(t), INK, 2, 'right');
  }
  for (const t of xTicks) {
    r.line(sx(t), top, sx(t), bottom, GRID);
    r.text(sx(t), bottom + 8, fmt(t), INK, 2, 'center');
  }
  r.line(left, bottom, right, bottom, INK, 2);
  r.line(left, top, left, bottom, INK, 2);
  r.text((left + right) / 2, bottom + 32, xLabel, INK, 2, 'center');
}

function drawPanel(r: Raster, p: CdfPanel, x0: number, y0: number, w: number, h: number): void {
  const left = x0 + 70;
  const right = x0 + w - 30;
  const top = y0 + 90;
  const bottom = y0 + h - 70;
  const all = p.series.flatMap((s) => s.values).concat((p.markers ?? []).map((m) => m.x));
  const lo = Math.min(...all, Infinity);
  const hi = Math.max(...all, 0.001);
  // Latencies that all sit far from zero (detection ≈ grace) get an axis that starts near them.
  const ticks = niceTicks(Number.isFinite(lo) && lo > 0.3 * hi ? lo - 0.05 * (hi - lo) - 0.001 : Math.min(0, lo), hi);
  const xmin = ticks[0] as number;
  const xmax = ticks.at(-1) as number;
  const sx = (v: number): number => left + ((v - xmin) / (xmax - xmin)) * (right - left);
  const sy = (f: number): number => bottom - f * (bottom - top);

  r.text(x0 + w / 2, y0 + 8, p.title, INK, 2, 'center');
  drawFrame(r, { left, right, top, bottom }, ticks, [0, 0.25, 0.5, 0.75, 1], sx, sy, p.xLabel);

  for (const m of p.markers ?? []) {
    r.line(sx(m.x), top, sx(m.x), bottom, MARKER, 2, [8, 6]);
    r.text(sx(m.x), top - 20, m.label, MARKER, 2, 'center');
  }
  let lx = left;
  p.series.forEach((s) => {
    const v = [...s.values].sort((a, b) => a - b);
    let px = sx(xmin);
    let py = sy(0);
    v.forEach((x, k) => {
      const nx = sx(x);
      const ny = sy((k + 1) / v.length);
      r.line(px, py, nx, py, s.color, 3);
      r.line(nx, py, nx, ny, s.color, 3);
      px = nx;
      py = ny;
    });
    if (v.length > 0) r.line(px, py, right, py, s.color, 3);
    const ly = y0 + 36;
    const label = `${s.label} (N=${v.length})`;
    r.fillRect(lx, ly + 3, 24, 8, s.color);
    r.text(lx + 32, ly, label, INK, 2, 'left');
    lx += 32 + Raster.textWidth(label, 2) + 30;
  });
}

/**
 * Renders panels side by side as one PNG.
 * @returns PNG bytes. Never throws for empty series (they draw nothing).
 */
export function renderCdfChart(title: string, panels: readonly CdfPanel[], subtitle = ''): Buffer {
  const pw = 640;
  const ph = 500;
  const r = new Raster(pw * panels.length, ph + 60);
  r.text((pw * panels.length) / 2, 10, title, INK, 3, 'center');
  if (subtitle) r.text((pw * panels.length) / 2, 38, subtitle, INK, 2, 'center');
  panels.forEach((p, i) => drawPanel(r, p, i * pw, 60, pw, ph));
  return r.toPng();
}

/** One line of a time chart: points (x ascending). */
export interface TimeSeries {
  label: string;
  color: Rgb;
  points: readonly { x: number; y: number }[];
}

/** One panel of a time chart; `markers` are x positions drawn as dashed vertical lines. */
export interface TimePanel {
  title: string;
  series: readonly TimeSeries[];
  markers?: readonly number[];
}

function drawTimePanel(r: Raster, p: TimePanel, x0: number, y0: number, w: number, h: number, xLabel: string): void {
  const left = x0 + 80;
  const right = x0 + w - 30;
  const top = y0 + 70;
  const bottom = y0 + h - 60;
  const pts = p.series.flatMap((s) => s.points);
  const xt = niceTicks(Math.min(0, ...pts.map((q) => q.x)), Math.max(1, ...pts.map((q) => q.x)));
  const yt = niceTicks(Math.min(0, ...pts.map((q) => q.y)), Math.max(1, ...pts.map((q) => q.y)), 5);
  const [xmin, xmax] = [xt[0] as number, xt.at(-1) as number];
  const [ymin, ymax] = [yt[0] as number, yt.at(-1) as number];
  const sx = (v: number): number => left + ((v - xmin) / (xmax - xmin)) * (right - left);
  const sy = (v: number): number => bottom - ((v - ymin) / (ymax - ymin)) * (bottom - top);
  r.text(x0 + w / 2, y0 + 8, p.title, INK, 2, 'center');
  drawFrame(r, { left, right, top, bottom }, xt, yt, sx, sy, xLabel);
  for (const m of p.markers ?? []) r.line(sx(m), top, sx(m), bottom, MARKER, 1, [6, 6]);
  let lx = left;
  for (const s of p.series) {
    for (let i = 1; i < s.points.length; i++) {
      const a = s.points[i - 1] as { x: number; y: number };
      const b = s.points[i] as { x: number; y: number };
      r.line(sx(a.x), sy(a.y), sx(b.x), sy(b.y), s.color, 2);
    }
    r.fillRect(lx, y0 + 39, 24, 8, s.color);
    r.text(lx + 32, y0 + 36, s.label, INK, 2, 'left');
    lx += 32 + Raster.textWidth(s.label, 2) + 30;
  }
}

/**
 * Renders time panels stacked vertically as one PNG (the soak's memory, handles and timers over time).
 * @param xLabel the x axis's label, shown under every panel.
 * @returns PNG bytes. Never throws for empty series (they draw nothing).
 */
export function renderTimeChart(title: string, panels: readonly TimePanel[], xLabel: string): Buffer {
  const pw = 1100;
  const ph = 420;
  const r = new Raster(pw, ph * panels.length + 50);
  r.text(pw / 2, 10, title, INK, 3, 'center');
  panels.forEach((p, i) => drawTimePanel(r, p, 0, 50 + i * ph, pw, ph, xLabel));
  return r.toPng();
}
