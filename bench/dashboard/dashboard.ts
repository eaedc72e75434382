/**
 * Reads the chart's Grafana dashboard (charts/node-lifecycle-controller/dashboards/node-lifecycle-controller.json):
 * its panels, their PromQL, its template variables, and the metric names the PromQL uses. Shared by
 * the dashboard tests (every name is served) and the renderer that draws the README screenshot
 * (bench/dashboard/render.ts). Not upstream; Grafana's own dashboard model is far larger: only the
 * fields the chart's dashboard uses are typed here.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The dashboard file in the chart. */
export const DASHBOARD_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'charts', 'node-lifecycle-controller', 'dashboards', 'node-lifecycle-controller.json');

/** A Grafana data source reference. */
export interface DataSourceRef {
  type?: string;
  uid?: string;
}

/** One query of a panel. */
export interface DashboardTarget {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: DataSourceRef;
}

/** A Grafana value mapping of the `value` kind: value -> text and colour. */
export interface ValueMapping {
  type: string;
  options: Record<string, { text?: string; color?: string; index?: number }>;
}

/** A panel (or a row, `type: 'row'`). `gridPos` is in Grafana grid units: 24 columns, rows of 30 px. */
export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: DataSourceRef;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: DashboardTarget[];
  fieldConfig?: { defaults?: { unit?: string; min?: number; decimals?: number; mappings?: ValueMapping[] } };
  /** A collapsed row's panels. */
  panels?: DashboardPanel[];
}

/** A template variable. */
export interface DashboardVariable {
  name: string;
  type: string;
  /** A string for `datasource`/`textbox`; `{ query }` for a `query` variable. */
  query?: string | { query?: string };
  includeAll?: boolean;
  allValue?: string;
  current?: { text?: string | string[]; value?: string | string[] };
}

/** The dashboard, as far as this project uses it. */
export interface Dashboard {
  title: string;
  uid: string;
  panels: DashboardPanel[];
  templating: { list: DashboardVariable[] };
}

/**
 * Reads and parses the dashboard JSON.
 * @param path the file; default {@link DASHBOARD_PATH}.
 * @returns the parsed dashboard (not validated beyond JSON syntax: the tests check its shape).
 * @throws when the file cannot be read or is not JSON.
 */
export async function readDashboard(path: string = DASHBOARD_PATH): Promise<Dashboard> {
  return JSON.parse(await readFile(path, 'utf8')) as Dashboard;
}

/**
 * Every panel that is not a row, in order, including the panels of collapsed rows.
 * @returns the panels (the same objects, not copies).
 */
export function dashboardPanels(d: Dashboard): DashboardPanel[] {
  return d.panels.flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]));
}

/**
 * Every PromQL expression of the dashboard: each target's `expr`, and the metric selector of each
 * `label_values(METRIC, label)` variable query (Grafana's function, not PromQL).
 * @returns expressions, in panel order, then the variables'.
 */
export function dashboardExprs(d: Dashboard): string[] {
  const fromPanels = dashboardPanels(d).flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  const fromVariables = d.templating.list.flatMap((v) => {
    const q = labelValuesQuery(v);
    return q ? [q.match] : [];
  });
  return [...fromPanels, ...fromVariables];
}

/** PromQL words that look like metric names: keywords, aggregation modifiers, literals. */
const PROMQL_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan', 'atan2']);

/**
 * The metric names a PromQL expression selects, in order of first use, without duplicates.
 * String literals, label matchers (`{…}`), range and subquery brackets (`[…]`), grouping clauses
 * (`by (…)`, `on (…)`, …), Grafana variables (`$job`, `${x}`, `$__rate_interval`), keywords, numbers
 * and function names (an identifier followed by `(`) are not names. Histogram series keep their
 * `_bucket`/`_sum`/`_count` suffix (see {@link metricFamily}).
 * @param expr a PromQL expression (may contain Grafana variables).
 * @returns metric names.
 */
export function metricNamesInPromQL(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ');
  const names: string[] = [];
  for (const m of stripped.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()/g)) {
    const name = m[1] ?? '';
    if (PROMQL_KEYWORDS.has(name.toLowerCase()) || names.includes(name)) continue;
    names.push(name);
  }
  return names;
}

/**
 * The family a series name belongs to, given the families and their types (`# TYPE` lines of an
 * exposition, or a registry): the name itself, or for a histogram's `_bucket`/`_sum`/`_count`
 * series (and a summary's `_sum`/`_count`) the name without the suffix.
 * @param types family name -> Prometheus type (`counter`, `gauge`, `histogram`, `summary`, …).
 * @returns the family's name, or undefined when no family serves this series.
 */
export function metricFamily(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (types.has(name)) return name;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (!m?.[1]) return undefined;
  const type = types.get(m[1]);
  if (type === 'histogram') return m[1];
  if (type === 'summary' && m[2] !== 'bucket') return m[1];
  return undefined;
}

/**
 * Family types from a Prometheus text exposition (its `# TYPE name type` lines): the families a
 * `/metrics` endpoint serves, including those with no sample yet.
 * @returns family name -> type.
 */
export function exposedFamilies(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

/**
 * The `label_values(METRIC, LABEL)` query of a `query` variable, or undefined for other variables.
 * @returns the metric selector and the label whose values the variable offers.
 */
export function labelValuesQuery(v: DashboardVariable): { match: string; label: string } | undefined {
  const q = typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
  const m = v.type === 'query' ? /^label_values\(\s*([^,]+?)\s*,\s*(\w+)\s*\)$/.exec(q) : null;
  return m?.[1] && m[2] ? { match: m[1], label: m[2] } : undefined;
}

/**
 * Replaces the dashboard's template variables in `expr` by the values a renderer without Grafana
 * uses: an `includeAll` variable set to All by its `allValue`, or else as Grafana does by the regex
 * `(v1|v2|…)` of its options (`options`, e.g. the jobs that serve the build info); any other
 * variable by its current value; `$__rate_interval` (and `$__interval`) by `rateInterval`.
 * @param rateInterval a PromQL duration, e.g. `15s`.
 * @param options variable name -> the values its query offers (needed for All without `allValue`).
 * @returns the expression Prometheus can evaluate.
 * @throws {Error} when the expression uses a variable the dashboard does not define, or an All
 *   variable whose options are not given.
 */
export function substituteVariables(expr: string, d: Dashboard, rateInterval: string, options: ReadonlyMap<string, readonly string[]> = new Map()): string {
  const values = new Map<string, string | (() => string)>();
  for (const v of d.templating.list) {
    const current = Array.isArray(v.current?.value) ? v.current.value[0] : v.current?.value;
    if (!(v.includeAll && (current === undefined || current === '$__all'))) {
      if (current !== undefined) values.set(v.name, current);
      continue;
    }
    values.set(v.name, () => {
      if (v.allValue !== undefined) return v.allValue;
      const offered = options.get(v.name);
      if (!offered || offered.length === 0) throw new Error(`$${v.name} is All, and its values are not known`);
      return `(${offered.map((o) => o.replace(/[\\^$.*+?()[\]{}|]/g, '\\\\$&')).join('|')})`;
    });
  }
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare ?? '';
    if (name === '__rate_interval' || name === '__interval') return rateInterval;
    const value = values.get(name);
    if (value === undefined) throw new Error(`${whole} is not a variable of dashboard ${d.uid}`);
    return typeof value === 'string' ? value : value();
  });
}
