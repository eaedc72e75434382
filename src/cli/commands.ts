/**
 * The program's commands and the texts about them that more than one place prints: `help`, `--help`
 * (flags.ts lays them out with the flags) and the message for a mistyped command, also the plugin's.
 * A module of its own, importing nothing of the CLI, so that flags.ts and command.ts can both use it.
 */
import { nearestName } from '../util/nearest.js';

/**
 * The one-line message for an unknown command, with the nearest command when it looks like a typo.
 * @param typed the word given as the command.
 * @param commands the commands there are, in `--help` order.
 * @param help the command that lists them.
 * @returns e.g. `unknown command "stauts" (did you mean status?; want status, explain, shadow-report or what-if; see … --help)`.
 */
export function unknownCommandMessage(typed: string, commands: readonly string[], help: string): string {
  const near = nearestName(typed, commands);
  const list = `${commands.slice(0, -1).join(', ')} or ${commands.at(-1) ?? ''}`;
  return `unknown command "${typed}" (${near === undefined ? '' : `did you mean ${near}?; `}want ${list}; see ${help})`;
}

/**
 * The program's commands, in the order `node-lifecycle-controller help` and `--help` list them
 * (program.ts dispatches them). `run` is the default: flags alone run the controller.
 */
export const PROGRAM_COMMANDS: readonly { name: string; summary: string }[] = [
  { name: 'run', summary: 'run the controller (the default; see `node-lifecycle-controller run --help`)' },
  { name: 'status', summary: "show a running controller's view: leader, zones, next taint, pending deletions, paused zones (`status --help`)" },
  { name: 'explain', summary: 'explain what will happen to a pod or node, and why: `explain pod NS/NAME`, `explain node NAME`' },
  { name: 'shadow-report', summary: "a --dry-run shadow's decisions beside what kube-controller-manager did, per node and pod (`shadow-report --help`)" },
  {
    name: 'what-if',
    summary: 'play a scenario (node failures, Lease pauses, out-of-service) on the controllers\' logic with a simulated clock, over the cluster (read only) or a snapshot (`what-if --help`)',
  },
  { name: 'completion', summary: 'print a bash/zsh completion script: `node-lifecycle-controller completion >> ~/.bashrc`' },
];

/**
 * The `Commands:` block of the program's help texts.
 * @returns the block, one command a line, without a trailing newline. Never throws.
 */
export function commandsHelp(): string {
  const width = Math.max(...PROGRAM_COMMANDS.map((c) => c.name.length)) + 2;
  return ['Commands:', ...PROGRAM_COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`)].join('\n');
}
