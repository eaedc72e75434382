/**
 * Rendering the Helm chart in unit tests, with `scripts/helm.sh template` (no API server): a copy of
 * the chart whose NOTES.txt is also rendered, the rendered documents as plain objects, and the
 * GitHub heading anchors of a Markdown file (for the alerts' runbook links). Shared by the chart
 * tests so the NOTES wrapping exists once.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { ROOT, runCommand, type RunResult } from './command.js';

/** The chart's directory in the repository. */
export const CHART = join(ROOT, 'charts', 'node-lifecycle-controller');

/** A temporary copy of the chart; `remove()` deletes it. */
export interface ChartCopy {
  chart: string;
  remove: () => Promise<void>;
}

/**
 * `helm template` renders NOTES.txt only through an install, which needs a cluster: this copies the
 * chart and wraps NOTES.txt, unchanged, in a named template rendered into a `notes:` document.
 * @returns the copy's path and its remover.
 * @throws {Error} (rejects) when the chart cannot be copied.
 */
export async function chartWithNotes(): Promise<ChartCopy> {
  const dir = await mkdtemp(join(tmpdir(), 'nlc-chart-'));
  const chart = join(dir, 'node-lifecycle-controller');
  await cp(CHART, chart, { recursive: true });
  const text = await readFile(join(CHART, 'templates', 'NOTES.txt'), 'utf8');
  await rm(join(chart, 'templates', 'NOTES.txt'));
  await writeFile(join(chart, 'templates', '_notesundertest.tpl'), `{{- define "nlc.notesUnderTest" -}}\n${text}{{- end -}}\n`);
  await writeFile(join(chart, 'templates', 'notesundertest.yaml'), '{{- /* test only */}}\nnotes: {{ include "nlc.notesUnderTest" . | toJson }}\n');
  return { chart, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Runs `helm template nlc CHART --namespace NAMESPACE --set S…`.
 * @param set `key=value` strings, each passed with `--set`.
 * @returns the exit code and output; never rejects on a failed render.
 */
export function helmTemplate(chart: string, namespace: string, set: string[]): Promise<RunResult> {
  return runCommand('bash', ['scripts/helm.sh', 'template', 'nlc', chart, '--namespace', namespace, ...set.flatMap((s) => ['--set', s])]);
}

/**
 * Renders the chart and parses every document (JSON round trip: plain objects only).
 * @returns the non-empty documents, in order.
 * @throws {Error} (rejects) when helm fails, with its stderr.
 */
export async function renderChart(chart: string, namespace: string, set: string[]): Promise<Record<string, unknown>[]> {
  const r = await helmTemplate(chart, namespace, set);
  if (r.code !== 0) throw new Error(`helm template ${set.join(' ')} failed:\n${r.stderr}`);
  return (loadAllYaml(r.stdout) as unknown[])
    .filter((d): d is object => d !== null && typeof d === 'object')
    .map((d) => JSON.parse(JSON.stringify(d)) as Record<string, unknown>);
}

/**
 * The anchors GitHub gives a Markdown file's headings: the heading text lower-cased, with every
 * character that is not a letter, digit, space, `-` or `_` removed (backticks and other
 * punctuation), spaces turned into `-`, and `-1`, `-2`, … appended to repeats. Headings inside
 * fenced code blocks are not headings.
 * @returns the anchors, in document order.
 */
export function githubAnchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = (m[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.push(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}
