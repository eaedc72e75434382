/**
 * One TCP connection to a pod's port through the API server's `pods/portforward` subresource, as a
 * Node.js Duplex stream: the mechanism of `kubectl port-forward`, without a local listening port
 * (nothing else on this machine can ride the tunnel). The only module that uses client-node's
 * `PortForward`.
 *
 * Protocol (client-node 2.x `PortForward`): a WebSocket to
 * `/api/v1/namespaces/NS/pods/POD/portforward?ports=PORT` with the kubeconfig's credentials,
 * sub-protocol `v4.channel.k8s.io`; kube-apiserver passes it to the node's kubelet
 * (pkg/registry/core/pod/rest/subresources.go `PortForwardREST.Connect`), which opens channel 0
 * (data) and 1 (error), each starting with the port number. A non-empty error channel means the
 * kubelet could not connect to the port. RBAC: `create` on `pods/portforward` (since 1.35 a
 * WebSocket upgrade, a GET, is also checked for `create`: `AuthorizePodWebsocketUpgradeCreatePermission`),
 * plus `get`, the verb of the GET itself.
 */
import { Duplex, PassThrough, Writable } from 'node:stream';
import { PortForward, type KubeConfig } from '@kubernetes/client-node';

/** client-node's injectable WebSocket connector (its `WebSocketInterface`), for tests. */
export type PortForwardConnector = ConstructorParameters<typeof PortForward>[2];

/** What this module needs of the WebSocket client-node returns (`ws`'s `WebSocket`). */
interface TunnelSocket {
  close(): void;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** Options of {@link openPodPortStream}. */
export interface PodPortStreamOptions {
  /** Milliseconds to wait for the API server to open the WebSocket (default 10,000). */
  timeoutMs?: number;
  /** Replaces client-node's WebSocket connector (unit tests). */
  connector?: PortForwardConnector;
}

/** The message of an Error or of a WebSocket error event (an object with `message`). */
function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'object' && err !== null && 'message' in err ? String((err as { message: unknown }).message) : String(err);
}

/** The HTTP status in a failed WebSocket upgrade (`ws`: "Unexpected server response: 403"), if any. */
export function upgradeStatus(err: unknown): number | undefined {
  const m = /Unexpected server response: (\d{3})/.exec(messageOf(err));
  return m ? Number(m[1]) : undefined;
}

/**
 * Why the API server refused a port-forward, in one line, with what to do.
 * @param status HTTP status of the refused upgrade (undefined: no HTTP answer); @param where `NS/POD:PORT`;
 * @param namespace the pod's namespace (named in the 403 hint); @param cause the error text used when there is no status.
 * @returns the message, without a newline.
 */
export function portForwardRefusal(status: number | undefined, where: string, namespace: string, cause: string): string {
  if (status === 401) return `port-forward to ${where}: the API server did not accept your kubeconfig's credentials (401)`;
  if (status === 403) {
    return `port-forward to ${where}: forbidden (403): your user needs create and get on pods/portforward in namespace ${namespace} (the chart's <release>-viewer ClusterRole, bound in that namespace)`;
  }
  if (status === 404) return `port-forward to ${where}: pod not found (404)`;
  if (status === 400) return `port-forward to ${where}: the API server refused it (400: the pod has no node yet, or the port is invalid)`;
  return `port-forward to ${where}: ${status ? `HTTP ${status}` : cause}`;
}

/**
 * Opens one connection to `port` of pod `namespace/pod` through the API server.
 * @param kc the caller's kubeconfig: the API server checks ITS credentials for `pods/portforward`.
 * @param port the pod's port (1-65535).
 * @returns a Duplex: bytes written go to the pod's port, bytes read come from it; it ends when the
 *   tunnel closes and is destroyed with an Error when the kubelet reports one on the error channel
 *   (e.g. nothing listens on the port). Destroying it closes the WebSocket.
 * @throws {Error} (one line, see {@link portForwardRefusal}) when the API server refuses or does not
 *   answer within `timeoutMs`.
 * Mirrors kubectl's `port-forward` (staging/src/k8s.io/kubectl/pkg/cmd/portforward), one connection.
 */
export async function openPodPortStream(kc: KubeConfig, namespace: string, pod: string, port: number, options: PodPortStreamOptions = {}): Promise<Duplex> {
  const where = `${namespace}/${pod}:${port}`;
  const toPod = new PassThrough();
  const fromPod = new PassThrough();
  let errorText = '';
  // The error channel can speak before the Duplex exists: the text is kept and checked once it does.
  const holder: { stream?: Duplex } = {};
  const errorChannel = new Writable({
    write(chunk: Buffer, _enc, done) {
      errorText += chunk.toString('utf8');
      if (errorText.trim() !== '') holder.stream?.destroy(new Error(`port-forward to ${where}: ${errorText.trim()}`));
      done();
    },
  });
  const timeoutMs = options.timeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  let ws: TunnelSocket;
  try {
    const opened = new PortForward(kc, true, options.connector).portForward(namespace, pod, [port], fromPod, errorChannel, toPod);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`port-forward to ${where}: the API server did not open it within ${timeoutMs} ms`)), timeoutMs);
    });
    // retryCount 0: client-node returns the socket itself, not a reconnecting getter.
    ws = (await Promise.race([opened, timeout])) as unknown as TunnelSocket;
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('port-forward to ')) throw err;
    throw new Error(portForwardRefusal(upgradeStatus(err), where, namespace, messageOf(err)), { cause: err });
  } finally {
    clearTimeout(timer);
  }
  const duplex = new Duplex({
    write(chunk: Buffer, _enc, done) {
      toPod.write(chunk, () => done());
    },
    read() {
      fromPod.resume();
    },
    destroy(err, done) {
      ws.close();
      done(err);
    },
  });
  holder.stream = duplex;
  fromPod.on('data', (d: Buffer) => {
    if (!duplex.push(d)) fromPod.pause();
  });
  fromPod.on('end', () => duplex.push(null));
  ws.on('close', () => fromPod.end());
  ws.on('error', (err) => duplex.destroy(err));
  if (errorText.trim() !== '') duplex.destroy(new Error(`port-forward to ${where}: ${errorText.trim()}`));
  return duplex;
}
