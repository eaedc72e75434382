/**
 * The logging surface the Kubernetes I/O layer needs: pino's `(obj, msg)` call style, and nothing
 * else, so a pino `Logger` (or a child of one) is accepted as is and tests can pass a recorder.
 */

/** A pino-compatible structured logger: `log.warn({ node: 'n1' }, 'message')`. */
export interface Logger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that drops everything (the default where a caller passes none). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
