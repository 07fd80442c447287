// The catalog on Redis: one JSON value (keys.catalog), replaced by compare-and-set on its
// revision in a Lua script that also publishes the change (lua/catalog-write.lua). Listeners
// hear of changes through a subscriber connection of their own, opened on first use.
import type { Redis } from 'ioredis';
import type { ProviderSpec } from '../../resources/provider.ts';
import type { RouterSpec } from '../../resources/router.ts';
import type { Catalog, CatalogStore } from '../catalog.ts';
import { notify } from '../notify.ts';
import { keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';

const EMPTY: Catalog = { revision: 0, routers: [], providers: [] };

export class RedisCatalog implements CatalogStore {
  readonly #redis: Redis;
  readonly #write: LuaScript;
  readonly #listeners = new Set<() => void>();
  #subscriber: Redis | undefined;

  constructor(redis: Redis) {
    this.#redis = redis;
    this.#write = defineScript(redis, 'catalog-write', 1);
  }

  async readCatalog(): Promise<Catalog> {
    const raw = await this.#redis.get(keys.catalog);
    return raw === null ? structuredClone(EMPTY) : (JSON.parse(raw) as Catalog);
  }

  async writeCatalog(expectedRevision: number, next: { routers: RouterSpec[]; providers: ProviderSpec[] }): Promise<number | 'conflict'> {
    const catalog: Catalog = { revision: expectedRevision + 1, routers: next.routers, providers: next.providers };
    const revision = Number(await this.#write.run(keys.catalog, expectedRevision, JSON.stringify(catalog), keys.catalogChanged));
    return revision < 0 ? 'conflict' : revision;
  }

  onCatalogChange(listener: () => void): () => void {
    const subscription = () => listener();
    this.#listeners.add(subscription);
    this.#subscribe();
    return () => {
      this.#listeners.delete(subscription);
    };
  }

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    subscriber?.disconnect();
  }

  /**
   * Opens the subscriber connection once; it queues SUBSCRIBE until connected and subscribes
   * again after every reconnection. A change published while it was not subscribed is lost,
   * so the listeners are also told once the subscription is live, and after each reconnection:
   * they read the catalog again and so miss nothing (even a change made between their own
   * first read and subscribing).
   */
  #subscribe(): void {
    if (this.#subscriber) return;
    const subscriber = this.#redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, lazyConnect: false });
    this.#subscriber = subscriber;
    subscriber.on('error', () => {}); // the shared client reports outages; this one reconnects quietly
    subscriber.on('message', () => notify(this.#listeners));
    let connections = 0;
    subscriber.on('ready', () => {
      if (connections++ > 0) notify(this.#listeners);
    });
    subscriber.subscribe(keys.catalogChanged).then(
      () => notify(this.#listeners),
      () => {}, // only when closed before subscribing
    );
  }
}
