/**
 * The error for bad input a user gave (a flag's value, a file named by a flag), thrown by modules
 * below the CLI (what-if's scenario and snapshot readers) that must not import the CLI's own
 * `FlagError`. The CLI maps it to exit code 2, as it does a `FlagError` (src/cli/command.ts).
 * No upstream counterpart: Go's cobra/pflag report usage errors the same way (exit 2).
 */

/** Invalid user input: the program exits 2 and prints the message. */
export class InputError extends Error {
  /** Process exit code for invalid input. */
  readonly exitCode = 2;
  /** The flag the input came through, without dashes (undefined for no single flag). */
  readonly flag: string | undefined;
  /**
   * @param message one line, said to the user as is (prefixed by the program name).
   * @param flag the flag the input came through, without dashes.
   */
  constructor(message: string, flag?: string) {
    super(message);
    this.name = 'InputError';
    this.flag = flag;
  }
}
