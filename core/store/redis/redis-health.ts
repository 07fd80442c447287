// Whether Redis answers, and whether it still holds what was seeded, found in the background:
// a connection can stay open to a Redis that answers nothing (a stopped or stuck process, a
// network that drops packets), which ioredis does not notice. One probe a second (EXISTS of the
// seed marker, under the command timeout) tells both, without a round trip per request.
import type { RedisClient } from './redis-client.ts';
import { keys } from './keys.ts';
import { isTimeout } from './unavailable.ts';

export class RedisHealth {
  readonly #client: RedisClient;
  readonly #timer: NodeJS.Timeout;
  readonly #lostListeners = new Set<() => void>();
  #answering = true;
  #probing = false;
  /** This process seeded the store (or found it seeded): an absent marker now means data lost. */
  #seeded = false;

  constructor(client: RedisClient, probeIntervalMs: number) {
    this.#client = client;
    this.#timer = setInterval(() => this.probe(), probeIntervalMs).unref();
    client.on('ready', () => {
      // The ready check (INFO) was answered; a Redis restarted empty is noticed at once.
      this.#answering = true;
      this.probe();
    });
  }

  /** False from a command's timeout until Redis answers a probe again. */
  get answering(): boolean {
    return this.#answering;
  }

  /** A command got no answer in time: requests are refused at once until a probe is answered. */
  timedOut(): void {
    this.#answering = false;
  }

  async markSeeded(): Promise<void> {
    await this.#client.set(keys.seeded, new Date().toISOString());
    this.#seeded = true;
  }

  onDataLost(listener: () => void): () => void {
    this.#lostListeners.add(listener);
    return () => {
      this.#lostListeners.delete(listener);
    };
  }

  probe(): void {
    if (this.#probing || this.#client.status !== 'ready') return;
    this.#probing = true;
    this.#client
      .exists(keys.seeded)
      .then(
        (found) => {
          this.#answering = true;
          if (found === 0 && this.#seeded) for (const listener of this.#lostListeners) queueMicrotask(listener);
        },
        (error: unknown) => {
          if (isTimeout(error)) this.#answering = false;
          // Other failures are a dropped connection: the client's status says so already.
        },
      )
      .finally(() => {
        this.#probing = false;
      });
  }

  close(): void {
    clearInterval(this.#timer);
    this.#lostListeners.clear();
  }
}
