/**
 * The logger shape the simulator accepts: pino-compatible `(obj, msg)` methods, so a pino logger
 * can be passed straight in. The default is silent.
 */

/** A pino-compatible logger: each method takes a context object and an optional message. */
export interface SimLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => undefined;

/** A logger that drops everything. */
export const silentLogger: SimLogger = { debug: noop, info: noop, warn: noop, error: noop };
