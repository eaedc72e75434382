/**
 * Runs a command of the repository (Helm through scripts/helm.sh, kubectl, the program) as a child
 * process from the repository root and collects its output: the one helper the chart and manifest
 * tests share.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** How a command ended: its exit code (-1 when killed by a signal) and its whole output. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `cmd args` in the repository root, feeding `opts.input` (or nothing) on stdin.
 * @param opts.env variables added to this process's environment.
 * @returns the exit code and output; never rejects on a non-zero exit, nor when the child exits
 *   before reading its stdin (EPIPE).
 * @throws {Error} (rejects) when the command cannot be spawned, or on a stdin error other than EPIPE.
 */
export function runCommand(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    // A child that exits without reading its stdin (tar -t, helm show) closes the pipe, and the
    // write of even an empty input then fails with EPIPE on a loaded machine (CI, release.test.ts).
    // Its exit code and output already say how it ended; any other stdin error still rejects.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin.end(opts.input ?? '');
  });
}
