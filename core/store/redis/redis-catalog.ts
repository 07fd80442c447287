// The catalog on Redis: one JSON value (keys.catalog), replaced by compare-and-set on its
// revision in a Lua script that also publishes the change (lua/catalog-write.lua). What is read
// is parsed by the resource schemas: a catalog an older gateway wrote lacks the fields added
// since (a router's `costs.audio_minutes`), which their defaults fill in.
import type { RedisClient } from './redis-client.ts';
import { ProviderSpec } from '../../resources/provider.ts';
import { RouterSpec } from '../../resources/router.ts';
import type { Catalog, CatalogStore } from '../catalog.ts';
import type { RedisChannels } from './redis-channels.ts';
import { keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';

const EMPTY: Catalog = { revision: 0, routers: [], providers: [] };

export class RedisCatalog implements CatalogStore {
  readonly #redis: RedisClient;
  readonly #write: LuaScript;
  readonly #channels: RedisChannels;
  readonly #beforeWrite: () => Promise<unknown>;

  /** `beforeWrite` runs before every write (the ledger gives back this gateway's leases, taken under the old prices). */
  constructor(redis: RedisClient, channels: RedisChannels, beforeWrite: () => Promise<unknown> = async () => {}) {
    this.#redis = redis;
    this.#write = defineScript(redis, 'catalog-write', 1);
    this.#channels = channels;
    this.#beforeWrite = beforeWrite;
  }

  async readCatalog(): Promise<Catalog> {
    const raw = await this.#redis.get(keys.catalog);
    if (raw === null) return structuredClone(EMPTY);
    const stored = JSON.parse(raw) as Catalog;
    return {
      revision: stored.revision,
      routers: stored.routers.map((router) => RouterSpec.parse(router)),
      providers: stored.providers.map((provider) => ProviderSpec.parse(provider)),
    };
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
