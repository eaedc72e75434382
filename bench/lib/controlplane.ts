/**
 * A private, throwaway control plane (etcd + kube-apiserver of the lane in `NLC_K8S_VERSION`: 1.37.2 by
 * default, or 1.20.2) per benchmark run, started with
 * the project's own `scripts/control-plane.sh` on free loopback ports and a fresh state directory,
 * so a benchmark never shares an API server with other engineers' tests and every run starts from
 * an empty etcd.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running private control plane. */
export interface PrivateControlPlane {
  /** Throwaway state directory (etcd data, certs, logs, kubeconfig). */
  stateDir: string;
  /** Admin kubeconfig for this control plane. */
  kubeconfig: string;
  /** Admin bearer token (for `/metrics`). */
  token: string;
  /** `https://127.0.0.1:PORT` */
  apiserverUrl: string;
  apiserverPid: number;
  etcdPid: number;
  /** etcd's client URL (plain HTTP on loopback), for its `/metrics` */
  etcdUrl: string;
  /** Stops etcd and the API server and removes the state directory. Idempotent; never throws. */
  down(): Promise<void>;
}

/**
 * Asks the OS for `count` distinct free TCP ports on 127.0.0.1 (listen on port 0, read, close).
 * @returns port numbers. @throws {Error} when listening fails.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const a = s.address();
    if (a === null || typeof a === 'string') throw new Error('no port');
    return a.port;
  });
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}

/**
 * Runs `bash scripts/control-plane.sh ARGS` with the private control plane's environment.
 * @returns the combined output. @throws {Error} with the output's tail when the script fails.
 */
async function runScript(repoRoot: string, env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = spawn('bash', [join(repoRoot, 'scripts/control-plane.sh'), ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`control-plane.sh ${args.join(' ')} exited ${code}:\n${out.split('\n').slice(-15).join('\n')}`));
    });
  });
}

/**
 * Starts a private control plane: a fresh `mktemp -d` state directory and free ports for the API
 * server, etcd and etcd's peer listener, then `control-plane.sh up`. Takes 15–30 s.
 * @param repoRoot the repository (for `scripts/control-plane.sh`).
 * @param onTeardownReady receives the teardown function before `up` runs, so an interrupt during
 *   start-up can still stop whatever `up` started.
 * @throws {Error} when the script fails (the state directory is removed first).
 */
export async function startPrivateControlPlane(repoRoot: string, onTeardownReady: (down: () => Promise<void>) => void = () => undefined): Promise<PrivateControlPlane> {
  const stateDir = await mkdtemp(join(tmpdir(), 'nlc-bench-cp-'));
  const [apiPort, etcdPort, peerPort] = (await freePorts(3)) as [number, number, number];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NLC_STATE_DIR: stateDir,
    NLC_APISERVER_PORT: String(apiPort),
    NLC_ETCD_PORT: String(etcdPort),
    NLC_ETCD_PEER_PORT: String(peerPort),
  };
  let stopped = false;
  const down = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await runScript(repoRoot, env, ['down']).catch(() => undefined);
    await rm(stateDir, { recursive: true, force: true }).catch(() => undefined);
  };
  onTeardownReady(down);
  try {
    await runScript(repoRoot, env, ['up']);
    const pid = async (f: string): Promise<number> => Number((await readFile(join(stateDir, f), 'utf8')).trim());
    return {
      stateDir,
      kubeconfig: join(stateDir, 'kubeconfig'),
      token: (await readFile(join(stateDir, 'admin.token'), 'utf8')).trim(),
      apiserverUrl: `https://127.0.0.1:${apiPort}`,
      apiserverPid: await pid('apiserver.pid'),
      etcdPid: await pid('etcd.pid'),
      etcdUrl: `http://127.0.0.1:${etcdPort}`,
      down,
    };
  } catch (err) {
    await down();
    throw err;
  }
}
