// Pub/sub for change notices, on one subscriber connection of its own, opened on first use. A
// notice published while it was not subscribed is lost, so every listener is also told
// `resync` once its subscription is live and after each reconnection: it then re-reads what it
// follows and misses nothing.
import { duplicateClient, type RedisClient } from './redis-client.ts';

export type ChannelListener = (message: string | null) => void;

export class RedisChannels {
  readonly #redis: RedisClient;
  readonly #listeners = new Map<string, Set<ChannelListener>>();
  #subscriber: RedisClient | undefined;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  /** Calls `listener` with each message on `channel`, and with null when it should resync. */
  listen(channel: string, listener: ChannelListener): () => void {
    let listeners = this.#listeners.get(channel);
    const subscriber = this.#connect();
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
      subscriber.subscribe(channel).then(
        () => this.#tell(channel, null),
        () => {},
      ); // fails only when closed first
    } else {
      const current = listeners;
      queueMicrotask(() => current.has(listener) && listener(null)); // unless unsubscribed at once
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  close(): void {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    subscriber?.disconnect();
  }

  #connect(): RedisClient {
    if (this.#subscriber) return this.#subscriber;
    // No command timeout: a subscription waits for Redis however long it takes, and a timed-out
    // SUBSCRIBE would leave the channel unheard.
    const subscriber = duplicateClient(this.#redis, {
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      lazyConnect: false,
      commandTimeout: undefined,
    });
    this.#subscriber = subscriber;
    subscriber.on('error', () => {}); // the shared client reports outages; this one reconnects quietly
    subscriber.on('message', (channel: string, message: string) => this.#tell(channel, message));
    let connections = 0;
    subscriber.on('ready', () => {
      if (connections++ > 0) for (const channel of this.#listeners.keys()) this.#tell(channel, null);
    });
    return subscriber;
  }

  /** Each listener runs in a microtask of its own: it can neither delay nor break the connection. */
  #tell(channel: string, message: string | null): void {
    for (const listener of this.#listeners.get(channel) ?? []) queueMicrotask(() => listener(message));
  }
}
