// A gateway process's side of the routing queue: it adds a request to its router's stream and
// waits for the worker's answer on the process's one reply channel, dispatched by request id (no
// polling, no connection per request). It keeps the slots its requests hold alive while they
// run, and gives each back once, with how the provider did.
import { randomBytes } from 'node:crypto';
import type { Log } from '../../core/log.ts';
import type { RedisRoutingQueue, SlotEnding } from '../../core/store/redis/redis-routing-queue.ts';
import { realTimers, type Timers } from '../../core/timers.ts';

export type QueueAnswer =
  | { readonly status: 'ok'; readonly provider: string; readonly requestId: string }
  | { readonly status: 'busy'; readonly retryAfterSeconds: number }
  | { readonly status: 'none' }
  | { readonly status: 'aborted' }
  /** Redis stopped answering while the request waited. */
  | { readonly status: 'unavailable' };

export interface QueueAsk {
  readonly router: string;
  readonly endpoint: string;
  readonly priority: number;
  readonly exclude: readonly string[];
  readonly maxWaitMs: number;
  readonly maxWaiting: number;
}

export interface QueueClientOptions {
  /** How long a slot lives without renewal (ms): a gateway that dies loses its slots after this. */
  readonly slotTtlMs: number;
  /** What one priority level is worth in waiting time (ms). */
  readonly agingMs: number;
  /** How long past the router's wait the gateway waits for a worker's answer before giving up itself. */
  readonly graceMs: number;
  readonly timers?: Timers;
  readonly log: Log;
}

/** A slot given back without having served (no metrics recorded against the provider). */
const UNUSED: SlotEnding = { outcome: 'none', threshold: 1, cooldownMs: 0 };

interface Waiter {
  readonly ask: QueueAsk;
  readonly resolve: (answer: QueueAnswer) => void;
  settled: boolean;
}

export class QueueClient {
  /** This process's reply channel id: unique per process start. */
  readonly gatewayId = randomBytes(6).toString('hex');
  readonly #queue: RedisRoutingQueue;
  readonly #options: QueueClientOptions;
  readonly #timers: Timers;
  readonly #waiters = new Map<string, Waiter>();
  /** Slots held by requests of this process: request id -> [router, provider]. */
  readonly #held = new Map<string, readonly [string, string]>();
  readonly #unlisten: () => void;
  #renewTimer: unknown;
  #next = 0;
  #closed = false;

  constructor(queue: RedisRoutingQueue, options: QueueClientOptions) {
    this.#queue = queue;
    this.#options = options;
    this.#timers = options.timers ?? realTimers;
    this.#unlisten = queue.listenReplies(this.gatewayId, (message) => (message === null ? this.#recheck() : this.#heard(message)));
    this.#scheduleRenewal();
  }

  /**
   * Asks the router's workers for a provider. Rejects only when the entry cannot be added (Redis
   * unavailable); the caller then falls back or refuses. A request whose signal aborts leaves the
   * queue (a slot given meanwhile goes back).
   */
  async ask(ask: QueueAsk, signal: AbortSignal): Promise<QueueAnswer> {
    if (signal.aborted) return { status: 'aborted' };
    const id = `${this.gatewayId}.${(this.#next++).toString(36)}`;
    const answered = new Promise<QueueAnswer>((resolve) => this.#waiters.set(id, { ask, resolve, settled: false }));
    try {
      await this.#queue.enqueue(ask.router, {
        id,
        gw: this.gatewayId,
        endpoint: ask.endpoint,
        priority: ask.priority,
        maxWaitMs: ask.maxWaitMs,
        agingMs: this.#options.agingMs,
        maxWaiting: ask.maxWaiting,
        exclude: ask.exclude,
        slotTtlMs: this.#options.slotTtlMs,
      });
    } catch (error) {
      this.#waiters.delete(id);
      throw error;
    }
    const guard = this.#timers.setTimeout(() => void this.#giveUp(id, false), ask.maxWaitMs + this.#options.graceMs);
    const onAbort = () => void this.#giveUp(id, true);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await answered;
    } finally {
      this.#timers.clearTimeout(guard);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Gives the slot back (once per request), with how the request ended; resolves with whether the provider now cools down. */
  async release(requestId: string, ending: SlotEnding): Promise<boolean> {
    const held = this.#held.get(requestId);
    if (!held) return false;
    this.#held.delete(requestId);
    try {
      return await this.#queue.release(held[0], held[1], requestId, ending);
    } catch (error) {
      // The slot expires by itself within the slot lifetime.
      this.#options.log.warn({ provider: held[1] }, `queue slot not given back (it expires by itself): ${(error as Error).message}`);
      return false;
    }
  }

  close(): void {
    this.#closed = true;
    this.#unlisten();
    this.#timers.clearTimeout(this.#renewTimer);
    for (const [id, waiter] of this.#waiters) this.#settle(id, waiter, { status: 'none' });
  }

  #heard(message: string): void {
    const [id = '', status, detail = ''] = message.split('|');
    const waiter = this.#waiters.get(id);
    if (status === 'ok') {
      const router = waiter?.ask.router;
      if (waiter && !waiter.settled) {
        this.#held.set(id, [waiter.ask.router, detail]);
        this.#settle(id, waiter, { status: 'ok', provider: detail, requestId: id });
      } else if (!this.#held.has(id)) {
        // An answer no one waits for any more (a duplicate, or after the request gave up): the
        // slot goes back at once.
        void this.#queue.release(router ?? '', detail, id, UNUSED).catch(() => {});
      }
    } else if (waiter && status === 'busy') {
      this.#settle(id, waiter, { status: 'busy', retryAfterSeconds: Math.max(1, Number(detail) || 1) });
    } else if (waiter && status === 'none') {
      this.#settle(id, waiter, { status: 'none' });
    }
  }

  /** After a reconnection answers may have been missed: what became of each request is read back. */
  #recheck(): void {
    for (const [id, waiter] of this.#waiters) {
      this.#queue.outcome(id).then(
        (outcome) => {
          if (outcome === null || waiter.settled) return;
          if (outcome === '-') this.#settle(id, waiter, { status: 'busy', retryAfterSeconds: 1 });
          else {
            this.#held.set(id, [waiter.ask.router, outcome]);
            this.#settle(id, waiter, { status: 'ok', provider: outcome, requestId: id });
          }
        },
        () => {},
      );
    }
  }

  /** The client went away, or no answer came in time: the request leaves the queue. */
  async #giveUp(id: string, aborted: boolean): Promise<void> {
    const waiter = this.#waiters.get(id);
    if (!waiter || waiter.settled) return;
    let answer: QueueAnswer = aborted
      ? { status: 'aborted' }
      : { status: 'busy', retryAfterSeconds: Math.ceil(waiter.ask.maxWaitMs / 1000) };
    try {
      const cancelled = await this.#queue.cancel(waiter.ask.router, id, waiter.ask.maxWaitMs);
      if (waiter.settled) return;
      if (cancelled.status === 'assigned') {
        this.#held.set(id, [waiter.ask.router, cancelled.provider]);
        if (aborted) void this.release(id, UNUSED);
        else answer = { status: 'ok', provider: cancelled.provider, requestId: id };
      } else if (cancelled.status === 'cancelled' && !aborted) {
        answer = { status: 'busy', retryAfterSeconds: cancelled.retryAfterSeconds };
      }
    } catch {
      // Redis unavailable: the entry leaves the queue by its deadline.
      if (!aborted) answer = { status: 'unavailable' };
    }
    this.#settle(id, waiter, answer);
  }

  #settle(id: string, waiter: Waiter, answer: QueueAnswer): void {
    if (waiter.settled) return;
    waiter.settled = true;
    this.#waiters.delete(id);
    waiter.resolve(answer);
  }

  #scheduleRenewal(): void {
    if (this.#closed) return;
    this.#renewTimer = this.#timers.setTimeout(() => {
      const slots = [...this.#held].map(([id, [, provider]]) => [provider, id] as const);
      this.#queue
        .renew(this.#options.slotTtlMs, slots)
        .catch((error: unknown) => this.#options.log.warn({}, `queue slots not renewed: ${(error as Error).message}`))
        .finally(() => this.#scheduleRenewal());
    }, this.#options.slotTtlMs / 3);
  }
}
