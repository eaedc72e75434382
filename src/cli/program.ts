/**
 * The `node-lifecycle-controller` program: dispatches subcommands.
 *
 *   node-lifecycle-controller [run] [flags]   the controller (kube-controller-manager's flags)
 *   node-lifecycle-controller sim [flags]     the kubelet fleet simulator
 *   node-lifecycle-controller demo [flags]    local control plane + fleet + controller, scripted failures
 *   node-lifecycle-controller status          the running controller's view (zones, queues, deadlines)
 *   node-lifecycle-controller explain pod NS/NAME | node NAME   what will happen to one pod or node, and why
 *
 * Exit codes: 0 success, 1 runtime failure (including lost leadership), 2 invalid input.
 */
import { FlagError, HelpRequested } from './flags.js';

const USAGE = `Usage: node-lifecycle-controller [command] [flags]

Commands:
  run      run the controller (the default; see \`node-lifecycle-controller run --help\`)
  sim      run a simulated kubelet fleet against a cluster (\`sim --help\`)
  demo     bring up a local control plane, a simulated fleet and the controller, and play node failures (\`demo --help\`)
  status   show a running controller's view: leader, zones, next taint, pending deletions, paused zones (\`status --help\`)
  explain  explain what will happen to a pod or node, and why: \`explain pod NS/NAME\`, \`explain node NAME\`
`;

/** Subcommands other than `run`, imported only when used (each pulls in its own dependencies). */
const SUBCOMMANDS: Readonly<Record<string, () => Promise<(argv: string[]) => Promise<number>>>> = {
  sim: async () => (await import('../../sim/cli.js')).runSimCommand,
  demo: async () => (await import('./demo.js')).runDemoCommand,
  status: async () => (await import('./status.js')).runStatusCommand,
  explain: async () => (await import('./explain.js')).runExplainCommand,
};

/**
 * Runs the program for `argv` (without node and script path).
 * @returns the process exit code. Never throws: errors are reported on stderr.
 */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  try {
    const load = first !== undefined && Object.hasOwn(SUBCOMMANDS, first) ? SUBCOMMANDS[first] : undefined;
    if (load) return await (await load())(rest);
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

