/**
 * Draws the chart's Grafana dashboard without Grafana (which neither Debian nor the npm registry
 * ships): every panel's PromQL, with the dashboard's variables substituted, is evaluated by a real
 * Prometheus (`/api/v1/query_range`) over a time window, and drawn as SVG on one HTML page laid
 * out by the panels' `gridPos`: time series as lines, state timelines as coloured bands with the
 * panel's value mappings. scripts/dashboard-screenshot.sh runs it after a demo run and screenshots
 * the page with headless Chromium (docs/dashboard.png).
 *
 *   tsx bench/dashboard/render.ts --prometheus http://127.0.0.1:9090 --from 1764000000 --to 1764000300 \
 *     --step 1 --rate-interval 10s --out /tmp/dashboard.html
 *
 * Prints `WIDTH HEIGHT` (pixels) of the page on stdout. Not upstream.
 */
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import yargs from 'yargs';
import { dashboardPanels, labelValuesQuery, readDashboard, substituteVariables, type Dashboard, type DashboardPanel } from './dashboard.js';

/** One series of a `query_range` answer: labels and `[unix seconds, value]` samples. */
export interface RangeSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

/** Page geometry, pixels. Grafana's grid: 24 columns, 30 px per row unit. */
const PAGE_WIDTH = 1600;
const MARGIN = 16;
const ROW_UNIT = 30;
const HEADER = 64;
const COLORS = ['#73bf69', '#f2cc0c', '#5794f2', '#ff9830', '#f2495c', '#b877d9', '#8ab8ff', '#ffcb7d', '#96d98d', '#ff7383', '#ca95e5', '#fade2a'];
const NAMED: Record<string, string> = { green: '#73bf69', orange: '#ff9830', red: '#f2495c', yellow: '#fade2a', blue: '#5794f2' };

/**
 * Asks Prometheus for one expression over a window.
 * @param base Prometheus URL, e.g. `http://127.0.0.1:9090`.
 * @param fromS window start, unix **seconds**; `toS` its end; `stepS` the resolution, **seconds**.
 * @returns the matrix (empty when the expression selects nothing).
 * @throws {Error} when Prometheus rejects the query (a syntax error in the dashboard) or is unreachable.
 */
export async function queryRange(base: string, expr: string, fromS: number, toS: number, stepS: number): Promise<RangeSeries[]> {
  const url = new URL('/api/v1/query_range', base);
  url.search = new URLSearchParams({ query: expr, start: String(fromS), end: String(toS), step: String(stepS) }).toString();
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: RangeSeries[] } };
  if (body.status !== 'success' || body.data?.resultType !== 'matrix') throw new Error(`Prometheus rejected ${expr}: ${body.error ?? res.status}`);
  return body.data.result;
}

/**
 * What a `label_values(match, label)` variable offers: `/api/v1/label/<label>/values` over the window.
 * @param fromS window start, unix **seconds**; `toS` its end.
 * @returns the label's values, sorted.
 * @throws {Error} when Prometheus answers with an error or is unreachable.
 */
export async function labelValues(base: string, match: string, label: string, fromS: number, toS: number): Promise<string[]> {
  const url = new URL(`/api/v1/label/${encodeURIComponent(label)}/values`, base);
  url.search = new URLSearchParams({ 'match[]': match, start: String(fromS), end: String(toS) }).toString();
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; error?: string; data?: string[] };
  if (body.status !== 'success' || !body.data) throw new Error(`Prometheus rejected label_values(${match}, ${label}): ${body.error ?? res.status}`);
  return [...body.data].sort();
}

/** Grafana's `{{label}}` legend; control characters (upstream's zone key has a NUL) are dropped. */
export function legend(format: string | undefined, metric: Record<string, string>): string {
  const text = format ? format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l: string) => metric[l] ?? '') : JSON.stringify(metric);
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x1f]/g, '').trim();
}

/** A value in the panel's unit (`percent`, `s`, `reqps`, `short`), short enough for an axis. */
export function formatValue(v: number, unit: string | undefined): string {
  const n = (x: number): string => (Math.abs(x) >= 100 || Number.isInteger(x) ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(1) : x.toPrecision(2));
  if (unit === 'percent') return `${n(v)}%`;
  if (unit === 's') return v !== 0 && Math.abs(v) < 1 ? `${n(v * 1000)} ms` : `${n(v)} s`;
  if (unit === 'reqps') return `${n(v)} req/s`;
  return n(v);
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const clock = (s: number): string => new Date(s * 1000).toISOString().slice(11, 19);

interface Drawn {
  series: RangeSeries;
  label: string;
}

/** Time axis ticks: about six, on round seconds. */
function timeTicks(fromS: number, toS: number): number[] {
  const span = toS - fromS;
  const step = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].find((s) => span / s <= 7) ?? 7200;
  const out: number[] = [];
  for (let t = Math.ceil(fromS / step) * step; t <= toS; t += step) out.push(t);
  return out;
}

/** Legend entries laid out in rows, left to right, at most `maxRows` rows; the rest are counted. */
function legendLayout(labels: string[], width: number, maxRows: number): { at: { x: number; row: number }[]; rows: number; hidden: number } {
  const at: { x: number; row: number }[] = [];
  let x = 0;
  let row = 0;
  for (const label of labels) {
    const w = 26 + Math.min(label.length, 48) * 6.8;
    if (x > 0 && x + w > width) {
      row++;
      x = 0;
    }
    if (row >= maxRows) break;
    at.push({ x, row });
    x += w;
  }
  return { at, rows: Math.min(maxRows, row + 1), hidden: labels.length - at.length };
}

function timeseriesSvg(p: DashboardPanel, drawn: Drawn[], w: number, h: number, fromS: number, toS: number): string {
  const left = 64;
  const plotW = w - left - 12;
  const lg = legendLayout(
    drawn.map((d) => d.label),
    plotW,
    3,
  );
  const plot = { x: left, y: 8, w: plotW, h: h - 30 - lg.rows * 16 };
  const values = drawn.flatMap((d) => d.series.values.map(([, v]) => Number(v)).filter(Number.isFinite));
  const max = Math.max(0, ...values);
  const min = Math.min(p.fieldConfig?.defaults?.min ?? 0, ...values);
  const unit = p.fieldConfig?.defaults?.unit;
  // Grafana's soft top: a little headroom, but a percentage ends at 100.
  const top = unit === 'percent' && max <= 100 && max > min ? 100 : max === min ? min + 1 : max + (max - min) * 0.08;
  const sx = (t: number): number => plot.x + ((t - fromS) / (toS - fromS)) * plot.w;
  const sy = (v: number): number => plot.y + plot.h - ((v - min) / (top - min)) * plot.h;
  const out: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = min + ((top - min) * i) / 4;
    out.push(`<line x1="${plot.x}" x2="${plot.x + plot.w}" y1="${sy(v)}" y2="${sy(v)}" class="grid"/><text x="${plot.x - 6}" y="${sy(v) + 4}" class="axis" text-anchor="end">${esc(formatValue(v, unit))}</text>`);
  }
  for (const t of timeTicks(fromS, toS)) out.push(`<text x="${sx(t)}" y="${plot.y + plot.h + 14}" class="axis" text-anchor="middle">${clock(t)}</text>`);
  drawn.forEach((d, i) => {
    const color = COLORS[i % COLORS.length] ?? '#ccc';
    // A NaN sample (0/0 in a quantile with no observations) breaks the line, as in Grafana.
    let path = '';
    let pen = 'M';
    for (const [t, v] of d.series.values) {
      const y = Number(v);
      if (!Number.isFinite(y)) {
        pen = 'M';
        continue;
      }
      path += `${pen}${sx(t).toFixed(1)},${sy(y).toFixed(1)}`;
      pen = 'L';
    }
    out.push(`<path d="${path}" stroke="${color}" fill="none" stroke-width="1.6"/>`);
  });
  lg.at.forEach(({ x, row }, i) => {
    const y = plot.y + plot.h + 30 + row * 16;
    const label = drawn[i]?.label ?? '';
    out.push(`<rect x="${plot.x + x}" y="${y - 8}" width="12" height="3" fill="${COLORS[i % COLORS.length] ?? '#ccc'}"/><text x="${plot.x + x + 16}" y="${y - 3}" class="legend">${esc(label.slice(0, 48))}</text>`);
  });
  if (lg.hidden > 0) out.push(`<text x="${plot.x + plot.w}" y="${h - 4}" class="axis" text-anchor="end">+${lg.hidden} more</text>`);
  return out.join('');
}

function stateTimelineSvg(p: DashboardPanel, drawn: Drawn[], w: number, h: number, fromS: number, toS: number, stepS: number): string {
  const left = Math.min(320, Math.max(80, ...drawn.map((d) => Math.min(d.label.length, 48) * 6.4 + 12)));
  const plot = { x: left, y: 6, w: w - left - 12, h: h - 26 };
  const rowH = Math.min(28, plot.h / Math.max(1, drawn.length));
  const sx = (t: number): number => plot.x + ((Math.min(toS, Math.max(fromS, t)) - fromS) / (toS - fromS)) * plot.w;
  const mappings = p.fieldConfig?.defaults?.mappings?.[0]?.options ?? {};
  const out: string[] = [];
  drawn.forEach((d, i) => {
    const y = plot.y + i * rowH;
    out.push(`<text x="${plot.x - 8}" y="${y + rowH / 2 + 4}" class="legend" text-anchor="end">${esc(d.label.slice(0, 48))}</text>`);
    // Merge equal consecutive samples; a gap longer than two steps leaves the band empty.
    let start: number | undefined;
    let value = '';
    let last = 0;
    const flush = (end: number): void => {
      if (start === undefined) return;
      const m = mappings[value];
      const color = NAMED[m?.color ?? ''] ?? m?.color ?? '#5794f2';
      const x = sx(start);
      const width = Math.max(1, sx(end) - x);
      out.push(`<rect x="${x}" y="${y + 1}" width="${width}" height="${rowH - 2}" fill="${color}" fill-opacity="0.8"/>`);
      const text = m?.text ?? value;
      if (width > text.length * 6.5 + 8) out.push(`<text x="${x + 4}" y="${y + rowH / 2 + 4}" class="band">${esc(text)}</text>`);
    };
    for (const [t, v] of d.series.values) {
      if (start !== undefined && (v !== value || t - last > 2 * stepS)) {
        flush(t - last > 2 * stepS ? last + stepS : t);
        start = undefined;
      }
      if (start === undefined) {
        start = t;
        value = v;
      }
      last = t;
    }
    flush(last + stepS);
  });
  for (const t of timeTicks(fromS, toS)) out.push(`<text x="${sx(t)}" y="${h - 6}" class="axis" text-anchor="middle">${clock(t)}</text>`);
  return out.join('');
}

/** Options of {@link renderDashboard}. */
export interface RenderOptions {
  prometheus: string;
  /** Window, unix **seconds**. */
  fromS: number;
  toS: number;
  /** Resolution, **seconds**. */
  stepS: number;
  /** What `$__rate_interval` becomes, a PromQL duration (about four scrape intervals). */
  rateInterval: string;
  /** A line under the title saying what produced the page. */
  caption: string;
}

/**
 * Renders the whole dashboard to one HTML page.
 * @returns the HTML and its size in pixels (the screenshot's window size).
 * @throws {Error} when a query fails (see {@link queryRange}).
 */
export async function renderDashboard(d: Dashboard, o: RenderOptions): Promise<{ html: string; width: number; height: number }> {
  const colW = (PAGE_WIDTH - 2 * MARGIN) / 24;
  const rows = d.panels.filter((p) => p.type === 'row');
  const bottom = Math.max(...[...rows, ...dashboardPanels(d)].map((p) => p.gridPos.y + p.gridPos.h));
  const height = HEADER + bottom * ROW_UNIT + MARGIN;
  // The job variable's All: the jobs that serve the build info, as Grafana would offer them.
  const options = new Map<string, string[]>();
  for (const v of d.templating.list) {
    const q = labelValuesQuery(v);
    if (q) options.set(v.name, await labelValues(o.prometheus, q.match, q.label, o.fromS, o.toS));
  }
  const boxes: string[] = [];
  for (const r of rows) {
    boxes.push(`<div class="row" style="left:${MARGIN}px;top:${HEADER + r.gridPos.y * ROW_UNIT}px">${esc(r.title)}</div>`);
  }
  for (const p of dashboardPanels(d)) {
    const x = MARGIN + p.gridPos.x * colW;
    const y = HEADER + p.gridPos.y * ROW_UNIT;
    const w = p.gridPos.w * colW - 6;
    const h = p.gridPos.h * ROW_UNIT - 6;
    const drawn: Drawn[] = [];
    for (const t of p.targets ?? []) {
      const result = await queryRange(o.prometheus, substituteVariables(t.expr, d, o.rateInterval, options), o.fromS, o.toS, o.stepS);
      for (const series of result) drawn.push({ series, label: legend(t.legendFormat, series.metric) });
    }
    drawn.sort((a, b) => a.label.localeCompare(b.label));
    const plotH = h - 28;
    const svg =
      drawn.length === 0
        ? `<text x="${w / 2}" y="${plotH / 2}" class="nodata" text-anchor="middle">No data</text>`
        : p.type === 'state-timeline'
          ? stateTimelineSvg(p, drawn, w, plotH, o.fromS, o.toS, o.stepS)
          : timeseriesSvg(p, drawn, w, plotH, o.fromS, o.toS);
    boxes.push(
      `<div class="panel" style="left:${x}px;top:${y}px;width:${w}px;height:${h}px"><div class="title">${esc(p.title)}</div><svg width="${w}" height="${plotH}">${svg}</svg></div>`,
    );
  }
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${esc(d.title)}</title><style>
body{margin:0;background:#111217;color:#ccccdc;font:12px/1.3 Inter,Helvetica,Arial,sans-serif;width:${PAGE_WIDTH}px;height:${height}px;position:relative;overflow:hidden}
h1{position:absolute;left:${MARGIN}px;top:6px;margin:0;font-size:19px;font-weight:500;color:#e6e6f0}
.caption{position:absolute;left:${MARGIN}px;top:34px;color:#8e8e9e;font-size:12px}
.row{position:absolute;font-size:14px;font-weight:500;color:#e6e6f0;line-height:30px}
.panel{position:absolute;background:#181b1f;border:1px solid #2b2e36;border-radius:3px;box-sizing:border-box}
.title{font-size:13px;font-weight:500;padding:5px 8px;height:18px;color:#e6e6f0;white-space:nowrap;overflow:hidden}
svg{display:block}.grid{stroke:#2b2e36}.axis{fill:#8e8e9e;font-size:10.5px}.legend{fill:#ccccdc;font-size:11px}.band{fill:#111217;font-size:11px;font-weight:600}.nodata{fill:#8e8e9e;font-size:14px}
</style></head><body><h1>${esc(d.title)}</h1><div class="caption">${esc(o.caption)}</div>${boxes.join('\n')}</body></html>\n`;
  return { html, width: PAGE_WIDTH, height: Math.ceil(height) };
}

async function main(): Promise<void> {
  const argv = await yargs(process.argv.slice(2))
    .strict()
    .option('prometheus', { type: 'string', default: 'http://127.0.0.1:9090', describe: 'Prometheus URL' })
    .option('from', { type: 'number', demandOption: true, describe: 'window start, unix seconds' })
    .option('to', { type: 'number', demandOption: true, describe: 'window end, unix seconds' })
    .option('step', { type: 'number', default: 1, describe: 'resolution, seconds' })
    .option('rate-interval', { type: 'string', default: '10s', describe: 'what $__rate_interval becomes' })
    .option('caption', { type: 'string', default: '', describe: 'line under the title' })
    .option('out', { type: 'string', demandOption: true, describe: 'HTML file to write' })
    .parse();
  const d = await readDashboard();
  const page = await renderDashboard(d, {
    prometheus: argv.prometheus,
    fromS: argv.from,
    toS: argv.to,
    stepS: argv.step,
    rateInterval: argv['rate-interval'],
    caption: argv.caption,
  });
  await writeFile(argv.out, page.html);
  process.stdout.write(`${page.width} ${page.height}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    process.stderr.write(`render-dashboard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
