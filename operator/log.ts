// The operator's logger: one JSON object per line, with pino's field names (level, time, msg),
// so the operator's and the gateway's logs read alike. Errors are written as name, message and
// stack; nothing else of theirs (a KubeApiError's request body never holds a secret, but a
// caught error's arbitrary fields might).
import type { Log, LogLevel as Level } from '../core/log.ts';

const RANK: Record<Level, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

export function createLog(level: Level, write: (line: string) => void = (line) => process.stdout.write(line)): Log {
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
