/**
 * The program's version, from package.json (tsx reads it from the checkout, `tsc` copies it into
 * dist/, esbuild inlines it into the bundles), and the build it came from (src/buildinfo.ts: the git
 * commit and whether the tree was dirty, stamped at build and bundle time).
 */
import packageJson from '../package.json' with { type: 'json' };
import { buildStamp, stampedVersionLine } from './buildinfo.js';

/** The version of this program, e.g. `0.1.0` (package.json `version`). */
export const PROGRAM_VERSION: string = packageJson.version;

/**
 * The `--version` line, in kube-controller-manager's shape (`Kubernetes v1.37.2`) followed by the
 * build: its git commit and tree state, as Kubernetes' `--version=raw` names them (gitCommit,
 * gitTreeState).
 * @param program the program name to print (`node-lifecycle-controller`, `kubectl-node_lifecycle`).
 * @returns e.g. `node-lifecycle-controller v0.1.0 (git commit 0123…, tree clean)` (no trailing
 *   newline; the commit has 40 hex digits, or is `unknown`). Never throws.
 */
export function versionLine(program = 'node-lifecycle-controller'): string {
  return stampedVersionLine(program, PROGRAM_VERSION, buildStamp());
}
