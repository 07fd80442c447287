// Pub/sub for change notices, on one subscriber connection of its own, opened on first use. A
// notice published while it was not subscribed is lost, so every listener is also told
// `resync` once its subscription is live and after each reconnection: it then re-reads what it
// follows and misses nothing.
//
// caughtUp() waits until the notices published before it have been heard: it publishes a marker
// of its own and waits for it to come back, after them, as Redis delivers one channel's messages
// to a subscriber in the order it took them (on a Redis Cluster, as long as they are published
// through one node: publish()).
import { randomUUID } from 'node:crypto';
import { StoreUnavailableError } from '../store-errors.ts';
import type { Cluster, Redis } from 'ioredis';
import { duplicateClient, type RedisClient } from './redis-client.ts';

export type ChannelListener = (message: string | null) => void;

/** What begins a caughtUp() marker: never a notice (ids are letters, digits, `-` and `:`), never told to listeners. */
const MARKER = '\u0000caught-up:';

/** Longest caughtUp() waits for its marker: far beyond a round trip, even on a busy machine. */
const CAUGHT_UP_MS = 5000;

export class RedisChannels {
  readonly #redis: RedisClient;
  readonly #listeners = new Map<string, Set<ChannelListener>>();
  /** Each channel's subscription, resolved once it is live (or failed: the subscriber was closed). */
  readonly #subscribed = new Map<string, Promise<void>>();
  /** caughtUp() markers not heard back yet, each with what ends its wait. */
  readonly #markers = new Map<string, () => void>();
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
      const subscribed = subscriber.subscribe(channel).then(
        () => this.#tell(channel, null),
        () => {},
      ); // fails only when closed first
      this.#subscribed.set(channel, subscribed);
    } else {
      const current = listeners;
      queueMicrotask(() => current.has(listener) && listener(null)); // unless unsubscribed at once
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  /**
   * Resolves once the listeners of `channel` have heard every message published on it before the
   * call, or been told to resync; at once when nothing listens. StoreUnavailableError when its
   * marker does not come back within CAUGHT_UP_MS (the subscriber is cut off).
   */
  async caughtUp(channel: string): Promise<void> {
    const subscribed = this.#subscribed.get(channel);
    if (!subscribed) return;
    await subscribed;
    const marker = `${MARKER}${randomUUID()}`;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => {
        this.#markers.delete(marker);
        reject(new StoreUnavailableError(`the store's change notices were not heard within ${CAUGHT_UP_MS} ms`));
      }, CAUGHT_UP_MS);
      // Set before publishing: the marker may come back before PUBLISH answers.
      this.#markers.set(marker, () => {
        clearTimeout(timer);
        this.#markers.delete(marker);
        resolve();
      });
    });
    try {
      await this.publish(channel, marker);
    } catch (error) {
      this.#markers.get(marker)?.();
      throw error;
    }
    await heard;
  }

  /**
   * Publishes `message` on `channel`. On a cluster, through one primary, the first by address (the
   * same for every process that sees the same nodes): a message published on one node reaches
   * another's subscribers over the cluster bus, so two published on two nodes may arrive in either
   * order; through one node they arrive in the order it took them.
   */
  async publish(channel: string, message: string): Promise<void> {
    if (!this.#redis.isCluster) {
      await this.#redis.publish(channel, message);
      return;
    }
    const primaries = (this.#redis as Cluster).nodes('master');
    const address = (node: Redis) => `${node.options.host}:${node.options.port}`;
    const first = [...primaries].sort((a, b) => address(a).localeCompare(address(b)))[0];
    await (first ?? this.#redis).publish(channel, message);
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
    subscriber.on('message', (channel: string, message: string) => {
      // Another gateway's marker is nothing to this one.
      if (message.startsWith(MARKER)) this.#markers.get(message)?.();
      else this.#tell(channel, message);
    });
    let connections = 0;
    subscriber.on('ready', () => {
      if (connections++ === 0) return;
      for (const channel of this.#listeners.keys()) this.#tell(channel, null);
      // Told to resync, the listeners will read everything again: nothing is left to wait for.
      for (const heard of [...this.#markers.values()]) heard();
    });
    return subscriber;
  }

  /** Each listener runs in a microtask of its own: it can neither delay nor break the connection. */
  #tell(channel: string, message: string | null): void {
    for (const listener of this.#listeners.get(channel) ?? []) queueMicrotask(() => listener(message));
  }
}
