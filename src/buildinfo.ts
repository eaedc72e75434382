/**
 * Where this build came from: the git commit and whether the tree was dirty, stamped when the
 * program is built, so that `--version`, `kubectl node-lifecycle --version` and the
 * `node_lifecycle_controller_build_info{git_commit,git_tree_state}` metric say which build runs
 * (issue 56: every build used to say only 0.1.0).
 *
 * Three ways the stamp gets here, first match wins:
 * 1. **esbuild bundles** (`npm run build:bundle`, `npm run build:plugin`: what the image and the
 *    krew archive ship): package.json's scripts pass `--define:__NLC_BUILD_STAMP__=$(node
 *    src/buildinfo.ts)`, so the stamp is a constant inside the one file;
 * 2. **the `tsc` build** (`npm run build`, npm's `bin`): the same command writes
 *    `dist/src/build-stamp.json` beside the compiled module, read here once;
 * 3. **a checkout run from source** (`npm start`, tsx): not a build, so git is asked when the stamp
 *    is first needed.
 * Where git cannot answer (no `.git`, as in the image's build context), `NLC_GIT_COMMIT` and
 * `NLC_GIT_TREE_STATE` from the environment stand in (the image passes its REVISION build
 * argument), else `unknown`.
 *
 * The tree is dirty when `git status --porcelain` lists anything (untracked files too; ignored ones
 * such as dist/ never), as Kubernetes' `hack/lib/version.sh` decides `gitTreeState`.
 *
 * Run as a script (`node src/buildinfo.ts [--write FILE]`), it prints the stamp of the checkout it
 * sits in as JSON (or writes it to FILE): the value the build scripts stamp with. Node strips the
 * types itself (22.18+), so this file imports nothing but Node built-ins.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a build records about its sources. */
export interface BuildStamp {
  /** The full 40-hex-digit commit, or `unknown`. */
  gitCommit: string;
  /** `clean`, `dirty`, or `unknown` (Kubernetes' gitTreeState words). */
  gitTreeState: 'clean' | 'dirty' | 'unknown';
}

/** The esbuild `define` of the bundles; absent (typeof 'undefined') everywhere else. */
declare const __NLC_BUILD_STAMP__: BuildStamp | undefined;

const UNKNOWN: BuildStamp = Object.freeze({ gitCommit: 'unknown', gitTreeState: 'unknown' });

/**
 * Asks git about the checkout at `root`.
 * @param root a directory inside the work tree.
 * @param env where `NLC_GIT_COMMIT` / `NLC_GIT_TREE_STATE` come from when git cannot answer.
 * @returns the stamp; `unknown` parts when neither git nor the environment knows. Never throws.
 */
export function gitStamp(root: string, env: Record<string, string | undefined> = process.env): BuildStamp {
  const git = (args: string[]): string | undefined => {
    const r = spawnSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return r.status === 0 ? r.stdout : undefined;
  };
  const head = git(['rev-parse', '--verify', 'HEAD'])?.trim();
  if (head === undefined || !/^[0-9a-f]{40}$/.test(head)) {
    const state = env['NLC_GIT_TREE_STATE'];
    return {
      gitCommit: env['NLC_GIT_COMMIT'] || UNKNOWN.gitCommit,
      gitTreeState: state === 'clean' || state === 'dirty' ? state : UNKNOWN.gitTreeState,
    };
  }
  const status = git(['status', '--porcelain']);
  return { gitCommit: head, gitTreeState: status === undefined ? 'unknown' : status.trim() === '' ? 'clean' : 'dirty' };
}

/** Checks that a parsed value is a stamp (a hand-edited or truncated build-stamp.json is not used). */
function isStamp(v: unknown): v is BuildStamp {
  const s = v as Partial<BuildStamp> | null;
  return typeof s === 'object' && s !== null && typeof s.gitCommit === 'string' && (s.gitTreeState === 'clean' || s.gitTreeState === 'dirty' || s.gitTreeState === 'unknown');
}

let cached: BuildStamp | undefined;

/**
 * This program's build stamp (see the module comment for where it comes from).
 * @returns the stamp; computed once per process. Never throws.
 */
export function buildStamp(): BuildStamp {
  if (cached !== undefined) return cached;
  cached = readStamp();
  return cached;
}

function readStamp(): BuildStamp {
  if (typeof __NLC_BUILD_STAMP__ !== 'undefined' && isStamp(__NLC_BUILD_STAMP__)) return withEnvCommit(__NLC_BUILD_STAMP__);
  const here = dirname(fileURLToPath(import.meta.url));
  try {
    const stamped: unknown = JSON.parse(readFileSync(join(here, 'build-stamp.json'), 'utf8'));
    if (isStamp(stamped)) return withEnvCommit(stamped);
  } catch {
    // Not a tsc build (or no stamp written): a checkout run from source.
  }
  return gitStamp(here);
}

/**
 * A build made where git could not answer (the image's build stage has no `.git`) still gets the
 * commit the image was built from, which the image passes as `NLC_GIT_COMMIT` at run time.
 */
function withEnvCommit(stamp: BuildStamp): BuildStamp {
  const commit = process.env['NLC_GIT_COMMIT'];
  return stamp.gitCommit === 'unknown' && commit ? { ...stamp, gitCommit: commit } : stamp;
}

/**
 * The build part of the `--version` line.
 * @returns e.g. `git commit 0123…(40 hex digits), tree clean`. Never throws.
 */
export function buildStampText(stamp: BuildStamp = buildStamp()): string {
  return `git commit ${stamp.gitCommit}, tree ${stamp.gitTreeState}`;
}

/**
 * A `--version` line for `program` at `version` built from `stamp`: what {@link versionLine} in
 * src/version.ts prints for this build, and what the release expects of a build it made elsewhere
 * (the bundle, the plugin archives, the image).
 * @param program e.g. `node-lifecycle-controller`; @param version e.g. `0.1.0` (no `v`).
 * @returns e.g. `node-lifecycle-controller v0.1.0 (git commit 0123…, tree clean)`, no newline. Never throws.
 */
export function stampedVersionLine(program: string, version: string, stamp: BuildStamp): string {
  return `${program} v${version} (${buildStampText(stamp)})`;
}

// Run as a script; never inside a bundle, which is itself the main module (and already stamped).
if (typeof __NLC_BUILD_STAMP__ === 'undefined' && import.meta.main) {
  const stamp = gitStamp(dirname(fileURLToPath(import.meta.url)));
  const at = process.argv.indexOf('--write');
  const file = at >= 0 ? process.argv[at + 1] : undefined;
  if (file !== undefined) writeFileSync(file, `${JSON.stringify(stamp)}\n`);
  else process.stdout.write(JSON.stringify(stamp));
}
