/**
 * The `node-lifecycle-controller` program: dispatches subcommands.
 *
 *   node-lifecycle-controller [run] [flags]   the controller (kube-controller-manager's flags)
 *   node-lifecycle-controller status          the running controller's view (zones, queues, deadlines)
 *   node-lifecycle-controller explain pod NS/NAME | node NAME   what will happen to one pod or node, and why
 *   node-lifecycle-controller shadow-report   a --dry-run shadow's decisions beside kube-controller-manager's actions
 *   node-lifecycle-controller what-if --scenario FILE   what the controllers would do in a scenario (src/whatif/)
 *   node-lifecycle-controller completion      a bash/zsh completion script (yargs)
 *
 * The kubelet fleet simulator and the demo are development tools in the repository's own package
 * (packages/sim: `npm run sim`, `npm run demo`), not commands of this program: the build and the
 * image contain none of them. `sim` and `demo` here only say where they went.
 *
 * Exit codes: 0 success, 1 runtime failure (including lost leadership), 2 invalid input.
 */
import { runCommand } from './command.js';
import { commandsHelp, PROGRAM_COMMANDS, unknownCommandMessage } from './commands.js';
import { nearestName } from '../util/nearest.js';
import { controllerFlagsHelp, FlagError } from './flags.js';

const USAGE = `Usage: node-lifecycle-controller [command] [flags]

${commandsHelp()}
`;

/** Subcommands other than `run`, imported only when used (each pulls in its own dependencies). */
const SUBCOMMANDS: Readonly<Record<string, () => Promise<(argv: string[]) => Promise<number>>>> = {
  status: async () => (await import('./status.js')).runStatusCommand,
  explain: async () => (await import('./explain.js')).runExplainCommand,
  'shadow-report': async () => (await import('./shadow-report.js')).runShadowReportCommand,
  'what-if': async () => (await import('./what-if.js')).runWhatIfCommand,
};

/**
 * Commands that were this program's until the simulator and the demo became a package of the
 * repository of their own (never built into the program nor its image): what to run instead.
 */
const DEVELOPMENT_COMMANDS: Readonly<Record<string, string>> = {
  sim: 'npm run sim -- [flags]',
  demo: 'npm run demo -- [flags]',
};

/** The argument yargs' completion script passes back to the program to ask for candidates. */
const YARGS_COMPLETIONS = '--get-yargs-completions';

/**
 * Runs the program for `argv` (without node and script path).
 * @returns the process exit code. Never throws: errors are reported on stderr.
 */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  return runCommand('node-lifecycle-controller', async () => {
    const load = first !== undefined && Object.hasOwn(SUBCOMMANDS, first) ? SUBCOMMANDS[first] : undefined;
    if (load) return await (await load())(rest);
    const moved = first !== undefined && Object.hasOwn(DEVELOPMENT_COMMANDS, first) ? DEVELOPMENT_COMMANDS[first] : undefined;
    if (moved) {
      throw new FlagError(`\`${first}\` is a development tool, not part of the controller: in a checkout of the repository run \`${moved}\` (packages/sim)`);
    }
    if (first === 'help') {
      process.stdout.write(USAGE);
      return 0;
    }
    if (first === 'completion' || first === YARGS_COMPLETIONS) return await runCompletion(argv);
    // A mistyped command would otherwise reach `run` as a stray argument.
    const commands = PROGRAM_COMMANDS.map((c) => c.name);
    if (first !== undefined && !first.startsWith('-') && first !== 'run' && nearestName(first, commands) !== undefined) {
      throw new FlagError(unknownCommandMessage(first, commands, 'node-lifecycle-controller --help'));
    }
    const { runController } = await import('./run.js');
    return await runController(first === 'run' ? rest : argv);
  });
}

/**
 * The `run` flags, read back from `--help` (flags.ts keeps the one flag table; its help lists each
 * as `--name`, and klog's verbosity as `-v`).
 * @returns flag names without dashes, in help order.
 */
export function runFlagNames(): string[] {
  const names = [...controllerFlagsHelp().matchAll(/^\s+(?:-h, )?--?([a-z][a-z-]*)\s/gm)].map((m) => m[1] ?? '');
  return [...new Set(names)].filter((n) => n !== 'help');
}

/**
 * `completion` prints yargs' bash/zsh completion script; the script calls the program back with
 * `--get-yargs-completions <words…>`, answered here with the commands, the `run` flags, and the
 * `status`/`explain` flags after those words.
 * @param argv `['completion']` or `['--get-yargs-completions', …words]`.
 * @returns 0; yargs writes to stdout.
 * Upstream analogue: cobra's `completion` command in kube-controller-manager and kubectl.
 */
async function runCompletion(argv: string[]): Promise<number> {
  const [{ default: yargs }, { ENDPOINT_YARGS_OPTIONS }] = await Promise.all([import('yargs'), import('./inspect.js')]);
  const runOptions = Object.fromEntries(runFlagNames().map((n) => [n, { type: 'string' as const, global: false }]));
  const parser = yargs(argv)
    .scriptName('node-lifecycle-controller')
    .parserConfiguration({ 'camel-case-expansion': false })
    .exitProcess(false)
    .help(false)
    .version(false)
    // The controller's flags also at the top level (`run` is the default command), but not inherited by the other commands.
    .options(runOptions)
    .command('run', 'run the controller (the default)', (y) => y.options(runOptions))
    .command('status', "show a running controller's view", (y) => y.options(ENDPOINT_YARGS_OPTIONS))
    .command('explain', 'explain what will happen to a pod or node', (y) =>
      y.options(ENDPOINT_YARGS_OPTIONS).command('pod', 'NAMESPACE/NAME').command('node', 'NAME'),
    )
    .command('what-if', 'play a scenario on the controllers with a simulated clock', (y) =>
      y.options({ ...runOptions, ...Object.fromEntries(['scenario', 'snapshot', 'save-snapshot', 'output'].map((n) => [n, { type: 'string' as const }])) }),
    )
    .command('shadow-report', "a --dry-run shadow's decisions beside kube-controller-manager's", (y) => y.options(ENDPOINT_YARGS_OPTIONS))
    .command('help', 'list the commands');
  await parser.completion('completion', 'print a bash/zsh completion script').parseAsync();
  return 0;
}
