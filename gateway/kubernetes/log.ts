// The logger the Kubernetes plumbing needs: the shape of pino's (and so Fastify's) methods, so
// the operator passes its own logger and tests pass a silent or recording one.
export interface Log {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

const ignore = () => {};
export const silentLog: Log = { debug: ignore, info: ignore, warn: ignore, error: ignore };
