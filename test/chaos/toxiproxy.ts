/**
 * Toxiproxy (github.com/Shopify/toxiproxy/v2, v2.12.0) for the chaos suite: starts its server from
 * the binary scripts/go-tool.sh builds and caches, and speaks its HTTP API (`/proxies`,
 * `/proxies/<name>/toxics`, `/reset`, `/version`).
 *
 * What Toxiproxy can and cannot do here, read from its v2.12.0 sources (toxics/*.go,
 * toxic_collection.go):
 * - a toxic belongs to a proxy and applies to every connection of it, established or new (the
 *   collection adds it to each link and builds new links with the whole chain), so it cannot pick
 *   one HTTP stream among a process's connections; the suite gives each controller replica its own
 *   proxy, which is the granularity it needs for partitions;
 * - `bandwidth` with `rate: 0` is no limit at all (`if t.Rate <= 0 { sleep = 0 }`), not a stall;
 * - `timeout` with `timeout: 0` keeps every connection open and drops the bytes on the floor until
 *   the toxic is removed: a blackhole, which is how a partition looks to both sides;
 * - `latency` delays each chunk and keeps it (a removed toxic flushes what it held);
 * - `reset_peer` closes with RST after `timeout` ms; `slicer` cuts the stream into small writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const GO_TOOL = join(import.meta.dirname, '..', '..', 'scripts', 'go-tool.sh');

/** Direction of a toxic: `upstream` is client → server (requests), `downstream` server → client (responses). */
export type ToxicStream = 'upstream' | 'downstream';

/** A toxic as the API takes it; `attributes` are the type's own (all durations in milliseconds). */
export interface Toxic {
  name: string;
  type: 'latency' | 'bandwidth' | 'slow_close' | 'timeout' | 'reset_peer' | 'slicer' | 'limit_data';
  stream: ToxicStream;
  /** Probability, per connection, that the toxic applies to it (default 1). */
  toxicity?: number;
  attributes: Record<string, number>;
}

/** A proxy as the API reports it. */
export interface ProxyInfo {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
  toxics: Toxic[];
}

/**
 * Builds the Toxiproxy server on first use (the Go module proxy and the machine's Go, about a minute
 * on 2 cores) and returns its path.
 * @throws {Error} when the build fails (the script's output says why).
 */
export async function toxiproxyBinary(): Promise<string> {
  const { stdout } = await run('bash', [GO_TOOL, '--print-path', 'toxiproxy-server'], { timeout: 600_000 });
  return stdout.trim();
}

/**
 * A running Toxiproxy server on `127.0.0.1:<apiPort>` and a client of its API. Start one with
 * {@link Toxiproxy.start}; {@link stop} ends it.
 */
export class Toxiproxy {
  readonly #child: ChildProcess;
  readonly #base: string;
  #log = '';

  private constructor(child: ChildProcess, readonly apiPort: number) {
    this.#child = child;
    this.#base = `http://127.0.0.1:${apiPort}`;
    const keep = (d: Buffer): void => {
      this.#log = (this.#log + d.toString()).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /**
   * Starts `toxiproxy-server -host 127.0.0.1 -port <apiPort>` and waits until its API answers.
   * @param apiPort the API port (the suite's default is 8474)
   * @throws {Error} when the binary cannot be built or the API does not answer within 10 s.
   */
  static async start(apiPort: number): Promise<Toxiproxy> {
    const bin = await toxiproxyBinary();
    const child = spawn(bin, ['-host', '127.0.0.1', '-port', String(apiPort)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } });
    const t = new Toxiproxy(child, apiPort);
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`toxiproxy-server exited (${child.exitCode}):\n${t.#log}`);
      try {
        await t.version();
        return t;
      } catch {
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`toxiproxy-server did not answer on port ${apiPort} within 10 s:\n${t.#log}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** @throws {Error} with the status and body of a non-2xx answer. */
  async #call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.#base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`toxiproxy ${method} ${path}: HTTP ${res.status} ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  /** The server's version string. @throws {Error} when the API does not answer. */
  async version(): Promise<string> {
    const res = await fetch(`${this.#base}/version`, { signal: AbortSignal.timeout(1000) });
    if (!res.ok) throw new Error(`toxiproxy /version: HTTP ${res.status}`);
    return (await res.text()).trim();
  }

  /**
   * Creates (or replaces) a proxy listening on `listen` (`127.0.0.1:7500`) and forwarding to `upstream`.
   * @throws {Error} when the API refuses it (a port in use, for one).
   */
  async createProxy(name: string, listen: string, upstream: string): Promise<ProxyInfo> {
    await this.#call('DELETE', `/proxies/${name}`).catch(() => undefined);
    return (await this.#call('POST', '/proxies', { name, listen, upstream, enabled: true })) as ProxyInfo;
  }

  /** Enables or disables a proxy (disabled: it closes every connection and refuses new ones). @throws {Error} from the API. */
  async setEnabled(name: string, enabled: boolean): Promise<void> {
    await this.#call('POST', `/proxies/${name}`, { enabled });
  }

  /** Adds a toxic to a proxy (it applies at once to every connection). @throws {Error} from the API. */
  async addToxic(proxy: string, toxic: Toxic): Promise<void> {
    await this.#call('POST', `/proxies/${proxy}/toxics`, { toxicity: 1, ...toxic });
  }

  /** Removes a toxic. @throws {Error} from the API (404 when it is not there). */
  async removeToxic(proxy: string, toxic: string): Promise<void> {
    await this.#call('DELETE', `/proxies/${proxy}/toxics/${toxic}`);
  }

  /** Removes every toxic and enables every proxy. @throws {Error} from the API. */
  async reset(): Promise<void> {
    await this.#call('POST', '/reset');
  }

  /** A proxy's state. @throws {Error} from the API. */
  async proxy(name: string): Promise<ProxyInfo> {
    return (await this.#call('GET', `/proxies/${name}`)) as ProxyInfo;
  }

  /** The server's last output (for failure messages). */
  log(): string {
    return this.#log;
  }

  /** Ends the server (SIGTERM, SIGKILL after 3 s). Never throws. */
  async stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise((r) => this.#child.once('exit', r));
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}
