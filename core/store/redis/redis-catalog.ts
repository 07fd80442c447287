// The catalog on Redis: one JSON value (keys.catalog), replaced by compare-and-set on its
// revision in a Lua script that also publishes the change (lua/catalog-write.lua).
import type { Redis } from 'ioredis';
import type { ProviderSpec } from '../../resources/provider.ts';
import type { RouterSpec } from '../../resources/router.ts';
import type { Catalog, CatalogStore } from '../catalog.ts';
import type { RedisChannels } from './redis-channels.ts';
import { keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';

const EMPTY: Catalog = { revision: 0, routers: [], providers: [] };

export class RedisCatalog implements CatalogStore {
  readonly #redis: Redis;
  readonly #write: LuaScript;
  readonly #channels: RedisChannels;
  readonly #beforeWrite: () => Promise<unknown>;

  /** `beforeWrite` runs before every write (the ledger gives back this gateway's leases, taken under the old prices). */
  constructor(redis: Redis, channels: RedisChannels, beforeWrite: () => Promise<unknown> = async () => {}) {
    this.#redis = redis;
    this.#write = defineScript(redis, 'catalog-write', 1);
    this.#channels = channels;
    this.#beforeWrite = beforeWrite;
  }

  async readCatalog(): Promise<Catalog> {
    const raw = await this.#redis.get(keys.catalog);
    return raw === null ? structuredClone(EMPTY) : (JSON.parse(raw) as Catalog);
  }

  async writeCatalog(expectedRevision: number, next: { routers: RouterSpec[]; providers: ProviderSpec[] }): Promise<number | 'conflict'> {
    await this.#beforeWrite();
    const catalog: Catalog = { revision: expectedRevision + 1, routers: next.routers, providers: next.providers };
    const revision = Number(await this.#write.run(keys.catalog, expectedRevision, JSON.stringify(catalog), keys.catalogChanged));
    return revision < 0 ? 'conflict' : revision;
  }

  /** Listeners re-read the catalog on each notice, and after every reconnection (see RedisChannels). */
  onCatalogChange(listener: () => void): () => void {
    return this.#channels.listen(keys.catalogChanged, () => listener());
  }
}
