/**
 * The `node-lifecycle-controller` program: dispatches subcommands.
 *
 *   node-lifecycle-controller [run] [flags]   the controller (kube-controller-manager's flags)
 *   node-lifecycle-controller sim [flags]     the kubelet fleet simulator
 *
 * Exit codes: 0 success, 1 runtime failure (including lost leadership), 2 invalid input.
 */
import { FlagError, HelpRequested } from './flags.js';

const USAGE = `Usage: node-lifecycle-controller [command] [flags]

Commands:
  run      run the controller (the default; see \`node-lifecycle-controller run --help\`)
  sim      run a simulated kubelet fleet against a cluster (\`sim --help\`)
`;

/**
 * Runs the program for `argv` (without node and script path).
 * @returns the process exit code. Never throws: errors are reported on stderr.
 */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === 'sim') {
      const { runSimCommand } = await import('../../sim/cli.js');
      return await runSimCommand(rest);
    }
    if (first === 'help') {
      process.stdout.write(USAGE);
      return 0;
    }
    const { runController } = await import('./run.js');
    return await runController(first === 'run' ? rest : argv);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(`${err.text}\n`);
      return 0;
    }
    if (err instanceof FlagError) {
      process.stderr.write(`node-lifecycle-controller: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`node-lifecycle-controller: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

