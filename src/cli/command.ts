/**
 * Exit codes for commands, shared by the program (program.ts) and the kubectl plugin (plugin.ts).
 * A module of its own so that the plugin's bundle does not pull in the program's other commands.
 */
import { InputError } from '../util/errors.js';
import { FlagError, HelpRequested } from './flags.js';

/**
 * Runs one command and turns what it throws into an exit code: {@link HelpRequested} (also
 * `--version`) prints its text to stdout and gives 0; {@link FlagError} (or an {@link InputError}
 * from below the CLI: a what-if scenario or snapshot file) prints `<program>: <message>` to stderr
 * and gives 2; any other error prints its message and gives 1.
 * @param program the name to prefix messages with (`node-lifecycle-controller`, `kubectl node-lifecycle`).
 * @param command the command; resolves to its exit code.
 * @returns the exit code. Never throws.
 */
export async function runCommand(program: string, command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(`${err.text}\n`);
      return 0;
    }
    if (err instanceof FlagError || err instanceof InputError) {
      process.stderr.write(`${program}: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`${program}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
