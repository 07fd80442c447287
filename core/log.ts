// The logger the Kubernetes plumbing needs: the shape of pino's (and so Fastify's) methods, so
// the operator passes its own logger and tests pass a silent or recording one.
/** Level names, pino's: both planes take them from --log-level. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Log {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

const ignore = () => {};
export const silentLog: Log = { debug: ignore, info: ignore, warn: ignore, error: ignore };
