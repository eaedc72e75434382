/**
 * The program's version, from package.json (tsx reads it from the checkout, `tsc` copies it into
 * dist/, esbuild inlines it into the plugin bundle).
 */
import packageJson from '../package.json' with { type: 'json' };

/** The version of this program, e.g. `0.1.0` (package.json `version`). */
export const PROGRAM_VERSION: string = packageJson.version;

/**
 * The `--version` line, in kube-controller-manager's shape (`Kubernetes v1.37.2`).
 * @param program the program name to print (`node-lifecycle-controller`, `kubectl-node_lifecycle`).
 * @returns e.g. `node-lifecycle-controller v0.1.0` (no trailing newline). Never throws.
 */
export function versionLine(program = 'node-lifecycle-controller'): string {
  return `${program} v${PROGRAM_VERSION}`;
}
