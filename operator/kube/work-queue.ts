// A keyed work queue in the manner of client-go's: it holds keys, never objects, so processing
// always reads the current state (from an informer's cache) and a key queued many times while
// it waits runs once. A key never runs concurrently with itself: one added while it runs is run
// again afterwards. A failing key is retried with exponential backoff; its count resets on
// success. An add() of a key that waits for its retry runs it now (the new state may fix it)
// while keeping its failure count, so a key that keeps failing still backs off further.
import { backoffDelay, type BackoffPolicy } from '../../core/kubernetes/backoff.ts';
import { silentLog, type Log } from '../../core/log.ts';
import { realTimers, type Timers } from '../../core/timers.ts';

export interface WorkQueueOptions {
  readonly process: (key: string) => Promise<void>;
  /** Keys processed at once (distinct keys only). Default 1. */
  readonly concurrency?: number;
  /** Default 200 ms doubling up to 5 minutes. */
  readonly backoff?: BackoffPolicy;
  readonly timers?: Timers;
  readonly log?: Log;
}

export class WorkQueue {
  readonly #options: WorkQueueOptions;
  readonly #concurrency: number;
  readonly #backoff: BackoffPolicy;
  readonly #timers: Timers;
  readonly #log: Log;
  /** Keys waiting for a worker, in the order they were first added (a Set keeps that order). */
  readonly #ready = new Set<string>();
  readonly #active = new Map<string, Promise<void>>();
  /** Keys added again while they ran: they run once more when they finish. */
  readonly #dirty = new Set<string>();
  readonly #retries = new Map<string, unknown>();
  readonly #failures = new Map<string, number>();
  #idleWaiters: (() => void)[] = [];
  #stopped = false;

  constructor(options: WorkQueueOptions) {
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`concurrency must be a positive integer, got ${concurrency}`);
    this.#options = options;
    this.#concurrency = concurrency;
    this.#backoff = options.backoff ?? { baseMs: 200, maxMs: 300_000 };
    this.#timers = options.timers ?? realTimers;
    this.#log = options.log ?? silentLog;
  }

  add(key: string): void {
    if (this.#stopped) return;
    this.#cancelRetry(key);
    if (this.#active.has(key)) this.#dirty.add(key);
    else this.#ready.add(key);
    this.#pump();
  }

  /** How many times a key has failed in a row (0 once it succeeds). */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Resolves once nothing is queued, running or waiting for a retry. */
  drain(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Drops queued keys and pending retries, ignores later adds, and waits for running keys. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#ready.clear();
    this.#dirty.clear();
    for (const key of [...this.#retries.keys()]) this.#cancelRetry(key);
    await Promise.all(this.#active.values());
    this.#notifyIfIdle();
  }

  #pump(): void {
    for (const key of this.#ready) {
      if (this.#active.size >= this.#concurrency) break;
      this.#ready.delete(key);
      this.#active.set(key, this.#run(key));
    }
    this.#notifyIfIdle();
  }

  async #run(key: string): Promise<void> {
    // Let add() return before the processor starts, so a burst of adds is seen as a burst.
    await Promise.resolve();
    try {
      await this.#options.process(key);
      this.#failures.delete(key);
    } catch (error) {
      this.#failed(key, error);
    } finally {
      this.#active.delete(key);
      if (this.#dirty.delete(key) && !this.#stopped) this.#ready.add(key);
      this.#pump();
    }
  }

  #failed(key: string, error: unknown): void {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    // Added again while it ran: it runs again at once with the new state, no timer needed.
    if (this.#dirty.has(key) || this.#stopped) return;
    const retryInMs = backoffDelay(failures, this.#backoff);
    this.#log.warn({ key, failures, retryInMs, err: error }, 'work queue: processing failed; will retry');
    const handle = this.#timers.setTimeout(() => {
      this.#retries.delete(key);
      this.add(key);
    }, retryInMs);
    this.#retries.set(key, handle);
  }

  #cancelRetry(key: string): void {
    if (!this.#retries.has(key)) return;
    this.#timers.clearTimeout(this.#retries.get(key));
    this.#retries.delete(key);
  }

  #idle(): boolean {
    return this.#ready.size === 0 && this.#active.size === 0 && this.#retries.size === 0;
  }

  #notifyIfIdle(): void {
    if (!this.#idle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
