// A gateway process's side of the routing queue: it adds a request to its router's stream and
// waits for the worker's answer on the process's one reply channel, dispatched by request id (no
// polling, no connection per request). It keeps the slots its requests hold alive while they
// run, and gives each back once, with how the provider did. After its connection to Redis comes
// back it asks what became of each request still waiting, and asks again for those Redis lost
// (restarted empty) or dropped while this process was not listening.
import { randomBytes } from 'node:crypto';
import type { Log } from '../../core/log.ts';
import type { CoolingPolicy } from '../../core/store/provider-health.ts';
import type { QueueForGateways, QueueRequest, SlotEnding } from '../../core/store/routing-queue.ts';
import { realTimers, type Timers } from '../../core/timers.ts';
import { LogThrottle } from '../observability/log-throttle.ts';

export type QueueAnswer =
  | { readonly status: 'ok'; readonly provider: string; readonly requestId: string }
  | { readonly status: 'busy'; readonly retryAfterSeconds: number }
  | { readonly status: 'none' }
  | { readonly status: 'aborted' }
  /** Redis stopped answering while the request waited. */
  | { readonly status: 'unavailable' };

export interface QueueAsk {
  readonly router: string;
  /** Who asks (a user id): a full waiting list is shared fairly between callers. */
  readonly caller: string;
  readonly endpoint: string;
  readonly priority: number;
  readonly exclude: readonly string[];
  readonly maxWaitMs: number;
  readonly maxWaiting: number;
  /** The traceparent of the request's queue span, when traced: the worker's answer is a span of that trace. */
  readonly traceparent?: string | undefined;
}

export interface QueueClientOptions {
  /** How long a slot lives without renewal (ms): a gateway that dies loses its slots after this. */
  readonly slotTtlMs: number;
  /** What one priority level is worth in waiting time (ms). */
  readonly agingMs: number;
  /** How long past the router's wait the gateway waits for a worker's answer before giving up itself. */
  readonly graceMs: number;
  /** How the failures of this gateway's requests cool their providers down, fleet-wide: its provider health's policy. */
  readonly cooling: CoolingPolicy;
  readonly timers?: Timers;
  /** Monotonic clock (ms), for what is left of a request's wait when it is asked for again. */
  readonly now?: () => number;
  readonly log: Log;
}

/** A slot given back without having served (no metrics recorded against the provider). */
const UNUSED: SlotEnding = { outcome: 'none' };

/**
 * Entries a router's stream may hold that no worker has taken, beyond the router's waiting list:
 * with no worker running, requests past it are refused at once rather than piling up in Redis.
 */
export const STREAM_SLACK = 1000;
/** How soon a request's state is read again when Redis did not answer the last read. */
const RECHECK_AGAIN_MS = 200;

interface Waiter {
  /** The request's id now: a request asked for again gets a new one. */
  id: string;
  /** Its entry's id in the stream, to find it there. */
  streamId: string;
  readonly ask: QueueAsk;
  /** When the wait ends (the clock's time). */
  readonly until: number;
  readonly resolve: (answer: QueueAnswer) => void;
  settled: boolean;
}

export class QueueClient {
  /** This process's reply channel id: unique per process start. */
  readonly gatewayId = randomBytes(6).toString('hex');
  readonly #queue: QueueForGateways;
  readonly #options: QueueClientOptions;
  readonly #timers: Timers;
  readonly #now: () => number;
  readonly #waiters = new Map<string, Waiter>();
  /** Slots held by requests of this process: request id -> [router, provider]. */
  readonly #held = new Map<string, readonly [string, string]>();
  /** Warnings collapse by kind: during a Redis outage every request ending would write its own. */
  readonly #throttle = new LogThrottle();
  readonly #unlisten: () => void;
  #renewTimer: unknown;
  #next = 0;
  #closed = false;

  constructor(queue: QueueForGateways, options: QueueClientOptions) {
    this.#queue = queue;
    this.#options = options;
    this.#timers = options.timers ?? realTimers;
    this.#now = options.now ?? (() => performance.now());
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
    let resolve!: (answer: QueueAnswer) => void;
    const answered = new Promise<QueueAnswer>((r) => (resolve = r));
    const waiter: Waiter = { id: this.#newId(), streamId: '', ask, until: this.#now() + ask.maxWaitMs, resolve, settled: false };
    this.#waiters.set(waiter.id, waiter);
    let refused: QueueAnswer | undefined;
    try {
      refused = await this.#enqueue(waiter, ask.maxWaitMs);
    } catch (error) {
      this.#waiters.delete(waiter.id);
      throw error;
    }
    if (refused) {
      this.#settle(waiter, refused);
      return refused;
    }
    const guard = this.#timers.setTimeout(() => void this.#giveUp(waiter, false), ask.maxWaitMs + this.#options.graceMs);
    const onAbort = () => void this.#giveUp(waiter, true);
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
      return await this.#queue.release(held[0], held[1], requestId, ending, this.#options.cooling);
    } catch (error) {
      // The slot expires by itself within the slot lifetime.
      this.#throttle.write(
        'queue slot release',
        'warn',
        this.#options.log,
        { provider: held[1] },
        `queue slot not given back (it expires by itself): ${(error as Error).message}`,
      );
      return false;
    }
  }

  close(): void {
    this.#closed = true;
    this.#unlisten();
    this.#timers.clearTimeout(this.#renewTimer);
    this.#throttle.close();
    for (const waiter of this.#waiters.values()) this.#settle(waiter, { status: 'none' });
  }

  #newId(): string {
    return `${this.gatewayId}.${(this.#next++).toString(36)}`;
  }

  /** Adds the waiter's entry, waiting `maxWaitMs` at most; the answer at once when the stream is full. */
  async #enqueue(waiter: Waiter, maxWaitMs: number): Promise<QueueAnswer | undefined> {
    const { ask } = waiter;
    const request: QueueRequest = {
      id: waiter.id,
      gw: this.gatewayId,
      caller: ask.caller,
      endpoint: ask.endpoint,
      priority: ask.priority,
      maxWaitMs,
      agingMs: this.#options.agingMs,
      maxWaiting: ask.maxWaiting,
      exclude: ask.exclude,
      slotTtlMs: this.#options.slotTtlMs,
      traceparent: ask.traceparent,
    };
    const enqueued = await this.#queue.enqueue(ask.router, request, ask.maxWaiting + STREAM_SLACK);
    if (enqueued.status === 'full') return { status: 'busy', retryAfterSeconds: enqueued.retryAfterSeconds };
    waiter.streamId = enqueued.streamId;
    return undefined;
  }

  #heard(message: string): void {
    const [id = '', status, detail = ''] = message.split('|');
    const waiter = this.#waiters.get(id);
    if (status === 'ok') {
      const router = waiter?.ask.router;
      if (waiter && !waiter.settled) {
        this.#held.set(id, [waiter.ask.router, detail]);
        this.#settle(waiter, { status: 'ok', provider: detail, requestId: id });
      } else if (!this.#held.has(id)) {
        // An answer no one waits for any more (a duplicate, or after the request gave up): the
        // slot goes back at once.
        void this.#queue.release(router ?? '', detail, id, UNUSED, this.#options.cooling).catch(() => {});
      }
    } else if (waiter && status === 'busy') {
      this.#settle(waiter, { status: 'busy', retryAfterSeconds: Math.max(1, Number(detail) || 1) });
    } else if (waiter && status === 'none') {
      this.#settle(waiter, { status: 'none' });
    }
  }

  /**
   * After a reconnection answers may have been missed: what became of each request is read back.
   * One Redis lost (it restarted empty) or dropped while this process did not listen is asked for
   * again, for what is left of its wait.
   */
  #recheck(): void {
    for (const waiter of [...this.#waiters.values()]) this.#checkOn(waiter);
  }

  /** Reads what became of one request; while Redis does not answer yet (the other connections reconnect too), again soon. */
  #checkOn(waiter: Waiter): void {
    const { id } = waiter;
    this.#queue.status(waiter.ask.router, id, waiter.streamId).then(
      (found) => {
        if (waiter.settled || waiter.id !== id) return;
        if (found.status === 'refused') this.#settle(waiter, { status: 'busy', retryAfterSeconds: 1 });
        else if (found.status === 'assigned') {
          this.#held.set(id, [waiter.ask.router, found.provider]);
          this.#settle(waiter, { status: 'ok', provider: found.provider, requestId: id });
        } else if (found.status === 'lost') void this.#askAgain(waiter);
      },
      () => {
        if (waiter.settled || waiter.id !== id || this.#closed || this.#now() >= waiter.until) return;
        this.#timers.setTimeout(() => this.#checkOn(waiter), RECHECK_AGAIN_MS);
      },
    );
  }

  async #askAgain(waiter: Waiter): Promise<void> {
    const left = Math.floor(waiter.until - this.#now());
    if (left <= 0) return this.#settle(waiter, { status: 'busy', retryAfterSeconds: 1 });
    this.#waiters.delete(waiter.id);
    waiter.id = this.#newId();
    this.#waiters.set(waiter.id, waiter);
    try {
      const refused = await this.#enqueue(waiter, left);
      if (refused) this.#settle(waiter, refused);
    } catch {
      this.#settle(waiter, { status: 'unavailable' });
    }
  }

  /** The client went away, or no answer came in time: the request leaves the queue. */
  async #giveUp(waiter: Waiter, aborted: boolean): Promise<void> {
    if (waiter.settled) return;
    const { id } = waiter;
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
    this.#settle(waiter, answer);
  }

  #settle(waiter: Waiter, answer: QueueAnswer): void {
    if (waiter.settled) return;
    waiter.settled = true;
    this.#waiters.delete(waiter.id);
    waiter.resolve(answer);
  }

  #scheduleRenewal(): void {
    if (this.#closed) return;
    this.#renewTimer = this.#timers.setTimeout(() => {
      const slots = [...this.#held].map(([requestId, [router, provider]]) => ({ router, provider, requestId }));
      this.#queue
        .renew(this.#options.slotTtlMs, slots)
        .catch((error: unknown) =>
          this.#throttle.write('queue slot renewal', 'warn', this.#options.log, {}, `queue slots not renewed: ${(error as Error).message}`),
        )
        .finally(() => this.#scheduleRenewal());
    }, this.#options.slotTtlMs / 3);
  }
}
