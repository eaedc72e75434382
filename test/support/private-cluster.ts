/**
 * A throwaway control plane for one test (its own state dir and ports), for tests that must stop
 * the API server. Never the shared default cluster.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { makeClients, type KubeClients } from '../../src/kube/client.js';
import { freeLocalPort } from '../../scripts/release/image.js';

const run = promisify(execFile);
const CONTROL_PLANE = join(import.meta.dirname, '../../scripts/control-plane.sh');

/** A free TCP port on 127.0.0.1 (the kernel's pick, released again): scripts/release/image.ts `freeLocalPort`. */
export const freePort: () => Promise<number> = freeLocalPort;

/** A throwaway control plane of this test only; never the shared default cluster. */
export class PrivateControlPlane {
  constructor(
    readonly stateDir: string,
    readonly apiserverPort: number,
    readonly etcdPort: number,
    readonly etcdPeerPort: number,
  ) {
    if (!stateDir.startsWith(tmpdir())) throw new Error(`refusing to manage a control plane outside ${tmpdir()}: ${stateDir}`);
  }

  static async create(): Promise<PrivateControlPlane> {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-private-cp-'));
    return new PrivateControlPlane(dir, await freePort(), await freePort(), await freePort());
  }

  async run(cmd: 'up' | 'down' | 'stop-apiserver' | 'start-apiserver'): Promise<void> {
    await run('bash', [CONTROL_PLANE, cmd], {
      env: {
        ...process.env,
        NLC_STATE_DIR: this.stateDir,
        NLC_APISERVER_PORT: String(this.apiserverPort),
        NLC_ETCD_PORT: String(this.etcdPort),
        NLC_ETCD_PEER_PORT: String(this.etcdPeerPort),
      },
      timeout: 180_000,
    });
  }

  /**
   * A second kube-apiserver on the same etcd (another port and state dir, same credentials), to
   * change objects while the first one is down.
   */
  async sibling(): Promise<PrivateControlPlane> {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-private-cp2-'));
    await mkdir(join(dir, 'logs'), { recursive: true });
    await cp(join(this.stateDir, 'pki'), join(dir, 'pki'), { recursive: true });
    await cp(join(this.stateDir, 'tokens.csv'), join(dir, 'tokens.csv'));
    await cp(join(this.stateDir, 'admin.token'), join(dir, 'admin.token'));
    return new PrivateControlPlane(dir, await freePort(), this.etcdPort, this.etcdPeerPort);
  }

  async clients(): Promise<KubeClients> {
    const token = (await readFile(join(this.stateDir, 'admin.token'), 'utf8')).trim();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${this.apiserverPort}`, skipTLSVerify: true }],
      users: [{ name: 'u', token }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    return makeClients(kc);
  }

  /** Path of the kubeconfig the script wrote. */
  get kubeconfig(): string {
    return join(this.stateDir, 'kubeconfig');
  }

  async remove(): Promise<void> {
    await rm(this.stateDir, { recursive: true, force: true });
  }
}
