/**
 * kube-controller-manager of the lane, for the integration tests that run it beside ours (always on
 * a private control plane: its controllers act on every object of the cluster).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const CONTROL_PLANE = join(import.meta.dirname, '../../scripts/control-plane.sh');

/**
 * The path of the lane's kube-controller-manager binary, built on first use (up to ~5 min on 2 cores
 * when cold; cached afterwards, and then only checked).
 * @throws {Error} when the build fails.
 */
export function kubeControllerManagerBinary(): string {
  execFileSync('bash', [CONTROL_PLANE, 'install', '--with-kcm'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 1_200_000 });
  return execFileSync('bash', [CONTROL_PLANE, 'bin', 'kube-controller-manager'], { encoding: 'utf8' }).trim();
}
