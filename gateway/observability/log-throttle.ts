// Repeated warnings and errors collapse into one line per interval: during a Redis outage every
// refused request would otherwise write its own lines (measured before: about 4,200 in 15 s).
// The first line of a kind goes through; the others within the interval are counted, and their
// number is written in one line when the interval ends.

type Level = 'warn' | 'error';

/** pino's (and so Fastify's) shape of the two methods used. */
export interface LineLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** A log whose lines are collapsed by kind (a name for what went wrong, without ids or details). */
export interface KindLog {
  warn(kind: string, message: string): void;
  error(kind: string, message: string): void;
}

export interface LogThrottleOptions {
  /** At most one line per kind per interval, plus one saying how many were left out. Default 10 s. */
  readonly intervalMs?: number;
  readonly now?: () => number;
  /** Runs `callback` after `ms` and returns its cancel; default an unref'd setTimeout. */
  readonly schedule?: (callback: () => void, ms: number) => () => void;
}

interface Window {
  readonly until: number;
  /** The line that went through, named again in the count of those left out. */
  readonly message: string;
  left: number;
  log: LineLog;
  level: Level;
  cancel: (() => void) | undefined;
}

const unrefTimeout = (callback: () => void, ms: number) => {
  const timer = setTimeout(callback, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export class LogThrottle {
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #schedule: (callback: () => void, ms: number) => () => void;
  readonly #windows = new Map<string, Window>();

  constructor(options: LogThrottleOptions = {}) {
    this.#intervalMs = options.intervalMs ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#schedule = options.schedule ?? unrefTimeout;
  }

  /** Writes the line to `log`, unless a line of this kind was written less than an interval ago. */
  write(kind: string, level: Level, log: LineLog, details: object, message: string): void {
    const now = this.#now();
    const open = this.#windows.get(kind);
    if (open && now < open.until) {
      open.left++;
      open.log = log;
      open.level = level;
      open.cancel ??= this.#schedule(() => this.#end(kind), open.until - now);
      return;
    }
    if (open) this.#end(kind);
    this.#windows.set(kind, { until: now + this.#intervalMs, message, left: 0, log, level, cancel: undefined });
    log[level](details, message);
  }

  /** A KindLog writing to `log` through this throttle. */
  kindLog(log: LineLog): KindLog {
    return {
      warn: (kind, message) => this.write(kind, 'warn', log, {}, message),
      error: (kind, message) => this.write(kind, 'error', log, {}, message),
    };
  }

  /** Writes the counts of lines left out so far. */
  close(): void {
    for (const kind of [...this.#windows.keys()]) this.#end(kind);
  }

  #end(kind: string): void {
    const window = this.#windows.get(kind);
    if (!window) return;
    this.#windows.delete(kind);
    window.cancel?.();
    if (window.left === 0) return;
    const seconds = this.#intervalMs / 1000;
    window.log[window.level]({ kind, repeated: window.left }, `${window.left} more like this in the last ${seconds} s: ${window.message}`);
  }
}
