/**
 * A TCP listener that accepts connections, counts the HTTP requests it reads, and never answers:
 * the one behaviour of a hung API server that unit tests need (a request timeout, or proof that no
 * request was sent at all), and one a real kube-apiserver cannot be made to show on demand. It is
 * not a fake API server: it never answers anything.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/** A listener that accepts every connection and never writes a byte back. */
export class HungServer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  /** Request lines seen (`PATCH /api/v1/nodes/n1 HTTP/1.1`, …), in arrival order. */
  readonly requestLines: string[] = [];

  constructor() {
    this.#server = createServer((socket) => {
      this.#sockets.add(socket);
      socket.on('data', (d) => this.requestLines.push(...(d.toString().match(/^(GET|POST|PUT|PATCH|DELETE) \S+/gm) ?? [])));
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => undefined);
    });
  }

  /** Number of requests seen. */
  get requests(): number {
    return this.requestLines.length;
  }

  /** Listens on a free loopback port. @returns the port. */
  async listen(): Promise<number> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    return (this.#server.address() as AddressInfo).port;
  }

  /** Drops every connection and stops listening. Never rejects. */
  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

/** A KubeConfig for `http://127.0.0.1:<port>` (plain HTTP needs skipTLSVerify in client-node). */
export function kubeConfigFor(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(port));
  return kc;
}

/** The same kubeconfig as YAML, for a `--kubeconfig` file. */
export function kubeconfigYaml(port: number): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: hung`,
    `  cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}`,
    'users:',
    '- name: u',
    '  user: {token: t}',
    'contexts:',
    '- name: c',
    '  context: {cluster: hung, user: u}',
    'current-context: c',
    '',
  ].join('\n');
}
