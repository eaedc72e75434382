/**
 * An HTTPS relay in front of kube-apiserver that can stall chosen watch streams: the request is
 * forwarded, the server's 200 and headers come back, and then no byte of the body is passed on
 * while the connection stays open. Everything else (writes, gets, other watches) is relayed as is.
 *
 * Why not Toxiproxy alone: its toxics act on every connection of a proxy (see ./toxiproxy.ts), so
 * stalling the Lease watch there stalls the writes too, and its `bandwidth` toxic at rate 0 does
 * not stall at all. What a stalled watch is in a real cluster is one stream whose events stop while
 * the process's other requests go on: a watch-cache or etcd watch that stops delivering, an HTTP/2
 * stream out of flow-control window, a middlebox that drops one long-lived flow. The relay holds the
 * stream's body by pausing the upstream response, so the API server's writes back up as a stuck
 * consumer's would; nothing is dropped or invented.
 *
 * Chain: controller → Toxiproxy (one proxy per replica) → this relay → kube-apiserver. It serves TLS
 * with the API server's own self-generated serving certificate (`<state>/certs/apiserver.crt`,
 * whose SANs include 127.0.0.1), so a client that verified the server would accept it too.
 */
import { readFileSync } from 'node:fs';
import { Agent, request, createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

/** One stalled watch request, as {@link StallRelay.stalled} reports it. */
export interface StalledStream {
  path: string;
  /** Epoch ms when its headers were passed on and its body held. */
  atMs: number;
}

/**
 * The relay. {@link StallRelay.start} listens on `127.0.0.1:<port>`; {@link stall} holds matching
 * watch streams (open ones at once, new ones after their headers) until {@link unstall}.
 */
export class StallRelay {
  readonly #server: Server;
  readonly #agent: Agent;
  /** Held for new streams too (a stall of the server side), not only for the open ones. */
  #pattern: RegExp | undefined;
  /** Open watch streams: the upstream response, the request path and the client's response. */
  readonly #streams = new Map<IncomingMessage, { path: string; res: ServerResponse }>();
  readonly #held = new Set<IncomingMessage>();
  /** Every stream held since the relay started (the scenario's record). */
  readonly stalled: StalledStream[] = [];
  /** Every watch request relayed, epoch ms (a stalled watch's reconnects show here). */
  readonly watchStarts: { path: string; atMs: number }[] = [];

  private constructor(server: Server, agent: Agent, readonly port: number, readonly upstreamPort: number) {
    this.#server = server;
    this.#agent = agent;
  }

  /**
   * Starts the relay.
   * @param stateDir the control plane's state directory (its `certs/` holds the serving key pair)
   * @param port where to listen
   * @param upstreamPort kube-apiserver's secure port on 127.0.0.1
   * @throws {Error} when the certificate cannot be read or the port is taken.
   */
  static async start(stateDir: string, port: number, upstreamPort: number): Promise<StallRelay> {
    const agent = new Agent({ keepAlive: true, rejectUnauthorized: false, maxSockets: 256 });
    const server = createServer({ cert: readFileSync(join(stateDir, 'certs', 'apiserver.crt')), key: readFileSync(join(stateDir, 'certs', 'apiserver.key')) });
    const relay = new StallRelay(server, agent, port, upstreamPort);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => relay.forward(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return relay;
  }

  /** Relays one request (public for the server callback only). */
  forward(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '/';
    const isWatch = /[?&]watch=(true|1)\b/.test(path);
    const up = request(
      { host: '127.0.0.1', port: this.upstreamPort, method: req.method, path, headers: { ...req.headers, host: `127.0.0.1:${this.upstreamPort}` }, agent: this.#agent },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        res.flushHeaders();
        if (isWatch) {
          this.#streams.set(upRes, { path, res });
          upRes.once('close', () => {
            this.#streams.delete(upRes);
            // A held stream's body is no longer piped, so its end does not reach the client by itself.
            if (this.#held.delete(upRes)) res.destroy();
          });
        }
        upRes.pipe(res);
        // After the pipe: holding unpipes and pauses, and a pipe made after it would resume the
        // stream (it did, until the full-size scenario 4 saw its "stalled" watches deliver).
        if (isWatch && this.#pattern?.test(path)) this.#hold(upRes, path);
      },
    );
    if (isWatch) this.watchStarts.push({ path, atMs: Date.now() });
    up.on('error', () => res.destroy());
    // The client gave up (its inactivity timeout): end the upstream request too, as a closed socket would.
    res.on('close', () => up.destroy());
    req.pipe(up);
  }

  #hold(upRes: IncomingMessage, path: string): void {
    if (this.#held.has(upRes)) return;
    this.#held.add(upRes);
    // Unpiping first: a piped stream resumes itself on the destination's 'drain'.
    upRes.unpipe();
    upRes.pause();
    this.stalled.push({ path, atMs: Date.now() });
  }

  /**
   * Holds every open watch whose request path (with its query) matches `pattern`: a stuck stream.
   * With `newStreams`, watches opened later are held too (the server side stalls: every new watch
   * connects and then hears nothing); without it they pass, as a reconnect does past a stuck flow.
   */
  stall(pattern: RegExp, opts: { newStreams: boolean }): void {
    this.#pattern = opts.newStreams ? pattern : undefined;
    for (const [upRes, { path }] of this.#streams) if (pattern.test(path)) this.#hold(upRes, path);
  }

  /**
   * Stops holding: new watches pass, and held streams still open are ended on both sides (the client
   * has usually given up on them already; a stuck flow does not come back either).
   */
  unstall(): void {
    this.#pattern = undefined;
    for (const upRes of this.#held) {
      this.#streams.get(upRes)?.res.destroy();
      upRes.destroy();
    }
    this.#held.clear();
  }

  /** Closes the relay and every connection. Never throws. */
  async stop(): Promise<void> {
    this.unstall();
    for (const upRes of this.#streams.keys()) upRes.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
    this.#agent.destroy();
  }
}
