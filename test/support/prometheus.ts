/**
 * A real Prometheus for integration tests: Debian's `prometheus` package (installed by
 * scripts/promtool.sh, the package the promtool tests and scripts/dashboard-screenshot.sh use),
 * scraping given targets every second and evaluating the chart's rendered rules every second, on a
 * free port and a throwaway data directory. Tests read its alerts (`/api/v1/alerts`) and queries.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { ROOT, runCommand } from './command.js';
import { waitFor } from './cluster.js';
import { freePort } from './private-cluster.js';

/** One alert as `/api/v1/alerts` lists it. */
export interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing' | string;
  value: string;
}

/** A running Prometheus (see the module comment). */
export class TestPrometheus {
  private constructor(
    readonly url: string,
    private readonly proc: ChildProcess,
    private readonly dir: string,
  ) {}

  /**
   * Installs the package if needed (scripts/promtool.sh --install: root or sudo), then starts it.
   * @param targets `host:port` of the plain-HTTP metrics endpoints to scrape (job `node-lifecycle-controller`).
   * @param groups the rule groups (the rendered PrometheusRule's `spec.groups`).
   * @param logFile where its output goes (default: a file in its data directory).
   * @returns once it answers /-/ready. @throws when it cannot be installed or does not start in 60 s.
   */
  static async start(targets: string[], groups: unknown[], logFile?: string): Promise<TestPrometheus> {
    const install = await runCommand('bash', [join(ROOT, 'scripts', 'promtool.sh'), '--install']);
    if (install.code !== 0) throw new Error(`scripts/promtool.sh --install failed: ${install.stderr}`);
    const bin = existsSync('/usr/bin/prometheus') ? '/usr/bin/prometheus' : 'prometheus';
    const dir = await mkdtemp(join(tmpdir(), 'nlc-prometheus-'));
    await writeFile(join(dir, 'rules.yaml'), yaml.dump({ groups }, { lineWidth: -1 }));
    await writeFile(
      join(dir, 'prometheus.yml'),
      yaml.dump({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [join(dir, 'rules.yaml')],
        scrape_configs: [{ job_name: 'node-lifecycle-controller', static_configs: [{ targets }] }],
      }),
    );
    const port = await freePort();
    const out = createWriteStream(logFile ?? join(dir, 'prometheus.log'), { flags: 'a' });
    const proc = spawn(bin, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout?.pipe(out);
    proc.stderr?.pipe(out);
    const p = new TestPrometheus(`http://127.0.0.1:${port}`, proc, dir);
    await waitFor('Prometheus is ready', async () => (await fetch(`${p.url}/-/ready`).catch(() => undefined))?.ok === true, 60_000, 250);
    return p;
  }

  /** Every alert, pending or firing. */
  async alerts(): Promise<PromAlert[]> {
    const body = (await (await fetch(`${this.url}/api/v1/alerts`)).json()) as { data?: { alerts?: PromAlert[] } };
    return body.data?.alerts ?? [];
  }

  /** An instant query's vector as `{labels, value}`. */
  async query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]> {
    const body = (await (await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { data?: { result?: { metric: Record<string, string>; value: [number, string] }[] } };
    return (body.data?.result ?? []).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** Stops it and removes its data directory. */
  async stop(): Promise<void> {
    if (this.proc.exitCode === null) {
      const exited = new Promise((r) => this.proc.once('exit', r));
      this.proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
