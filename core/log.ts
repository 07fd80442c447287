// The logger the planes share: the shape of pino's (and so Fastify's) methods, so
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

// createLog: one JSON object per line, with pino's field names (level, time, msg), so the logs of
// the processes that have no Fastify (the operator, a router worker) read like the gateway's.
// Errors are written as name, message and stack; nothing else of theirs (a caught error's
// arbitrary fields might hold a secret).
const RANK: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

export function createLog(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Log {
  const at = (name: 'debug' | 'info' | 'warn' | 'error') => (details: object, msg: string) => {
    if (RANK[name] < RANK[level]) return;
    write(`${JSON.stringify({ level: RANK[name], time: Date.now(), msg, ...serializable(details) })}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function serializable(details: object): object {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    out[key] = value instanceof Error ? { type: value.name, message: value.message, stack: value.stack } : value;
  }
  return out;
}
