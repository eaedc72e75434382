/**
 * The commands of the simulation package (`@node-lifecycle-controller/sim`): development tools
 * that run the controller against simulated kubelets, never part of the controller's build or image.
 *
 *   npm run sim -- [flags]    the kubelet fleet simulator (cli.ts)
 *   npm run demo -- [flags]   local control plane + fleet + controller, scripted failures (demo.ts)
 *
 * main.ts runs it: the root package's `sim` and `demo` scripts, and this package's bin (`nlc-sim sim|demo`).
 * Exit codes as the controller's program: 0 success, 1 runtime failure, 2 invalid input.
 */
import { runCommand } from '../../../src/cli/command.js';

const USAGE = `Usage: nlc-sim <command> [flags]   (from the repository: npm run sim -- [flags], npm run demo -- [flags])

Commands:
  sim   run a simulated kubelet fleet against a cluster (\`sim --help\`)
  demo  bring up a local control plane, a simulated fleet and the controller, and play node failures (\`demo --help\`)
`;

/** The commands, imported only when used (the demo pulls in the whole controller). */
const COMMANDS: Readonly<Record<string, () => Promise<(argv: string[]) => Promise<number>>>> = {
  sim: async () => (await import('./cli.js')).runSimCommand,
  demo: async () => (await import('./demo.js')).runDemoCommand,
};

/**
 * Runs `sim` or `demo` for `argv` (without node and script path), e.g. `['demo', '--scenario', 'power-loss']`.
 * @returns the process exit code: the command's, 0 for `help`, 2 for a missing or unknown command.
 *   Never throws: errors are reported on stderr (src/cli/command.ts `runCommand`).
 */
export async function main(argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv;
  return runCommand('nlc-sim', async () => {
    const load = first !== undefined && Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined;
    if (load) return await (await load())(rest);
    if (first === 'help' || first === '--help' || first === '-h') {
      process.stdout.write(USAGE);
      return 0;
    }
    process.stderr.write(`nlc-sim: ${first === undefined ? 'a command is required' : `unknown command ${JSON.stringify(first)}`}\n${USAGE}`);
    return 2;
  });
}
