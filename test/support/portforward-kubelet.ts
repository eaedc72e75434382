/**
 * A stand-in for one kubelet's port-forward endpoint, so that `pods/portforward` through the REAL
 * API server reaches a process on this machine. No kubelet runs here: kube-apiserver v1.37.2 sends a
 * port-forward to `https://<node address>:<status.daemonEndpoints.kubeletEndpoint.Port>/portForward/<ns>/<pod>?port=N`
 * (pkg/registry/core/pod/strategy.go `PortForwardLocation`) and passes the caller's WebSocket upgrade
 * through (pkg/registry/core/pod/rest/subresources.go `PortForwardREST.Connect`: only the SPDY
 * tunnelling sub-protocol is translated; client-node offers `v4.channel.k8s.io`).
 *
 * What it serves: the kubelet's WebSocket port-forward protocol (pkg/kubelet/cri/streaming/portforward/websocket.go,
 * `v4.channel.k8s.io`, binary): two channels per port (0 data, 1 error), each opened with the port
 * as two little-endian bytes; every message starts with its channel number. Each WebSocket is one
 * TCP connection to `127.0.0.1:<port>` (the pod's network namespace is this machine's).
 *
 * Like packages/sim/src/kubeletserver.ts: self-signed certificate (kube-apiserver does not verify kubelet
 * certificates without `--kubelet-certificate-authority`), no client authentication (the control
 * plane gives kube-apiserver no kubelet client certificate).
 */
import { createServer as createHttpsServer } from 'node:https';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { selfSignedCertificate } from '../../src/metrics/tls.js';

/** A running port-forward kubelet stand-in. */
export interface PortForwardKubelet {
  /** The port it listens on (all interfaces): the node's `kubeletEndpoint.Port`. */
  port: number;
  /** `"ns/pod"` of every port-forward it was asked for, in order. */
  requests: string[];
  close: () => Promise<void>;
}

const V4_BINARY = 'v4.channel.k8s.io';

/** Frames `data` for channel `channel`. */
function frame(channel: number, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from([channel]), data]);
}

function serve(ws: WebSocket, port: number): void {
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16LE(port);
  ws.send(frame(0, portBytes));
  ws.send(frame(1, portBytes));
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('data', (d: Buffer) => ws.send(frame(0, d)));
  socket.on('end', () => ws.close());
  socket.on('error', (err) => {
    // The kubelet reports a failed dial on the error channel, then closes.
    ws.send(frame(1, Buffer.from(`error forwarding port ${port}: ${err.message}`)));
    ws.close();
  });
  ws.on('message', (data: Buffer) => {
    if (data.length > 1 && data[0] === 0) socket.write(data.subarray(1));
  });
  ws.on('close', () => socket.destroy());
}

/**
 * Starts the stand-in on all interfaces on a free port.
 * @returns the port, the requests seen and `close`.
 * @throws {Error} when the certificate cannot be made or the port cannot be bound.
 */
export async function startPortForwardKubelet(): Promise<PortForwardKubelet> {
  const cert = await selfSignedCertificate(Date.now());
  const server = createHttpsServer({ cert: cert.cert, key: cert.key });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => (offered.has(V4_BINARY) ? V4_BINARY : false) });
  const requests: string[] = [];
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const m = /^\/portForward\/([^/]+)\/([^/]+)/.exec(url.pathname);
    const port = Number(url.searchParams.get('port'));
    if (!m || !Number.isInteger(port) || port < 1 || port > 65535) {
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    requests.push(`${m[1]}/${m[2]}`);
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, port));
  });
  server.on('request', (_req, res) => {
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
