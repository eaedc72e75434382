/**
 * Running a command from the release scripts: its status and output, or an Error naming it.
 * Shared by scripts/release/main.ts and scripts/release/image.ts.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** Options of {@link sh} and {@link must}. */
export interface ShOptions {
  /** Working directory (default the repository root). */
  cwd?: string;
  /** Added to (or, with `cleanEnv`, instead of) this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Run with `env` only, not this process's environment. */
  cleanEnv?: boolean;
  /** Kill it after this many milliseconds (default none). */
  timeoutMs?: number;
}

/** Runs a command; returns its status and output (never throws on exit code). */
export function sh(cmd: string, args: string[], opts: ShOptions = {}): { status: number; stdout: string; stderr: string } {
  const env = opts.cleanEnv ? { ...opts.env } : { ...process.env, ...opts.env };
  const r = spawnSync(cmd, args, { cwd: opts.cwd ?? ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env, ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}) });
  return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/**
 * Like {@link sh}, but a non-zero exit becomes an Error naming the command and its output's tail.
 * @returns its stdout.
 */
export function must(cmd: string, args: string[], opts: ShOptions = {}): string {
  const r = sh(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${(r.stderr || r.stdout).slice(-1500)}`);
  return r.stdout;
}
