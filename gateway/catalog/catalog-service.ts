// Routers and providers at run time. The config file seeds the catalog at start-up; the admin
// API edits it; every gateway on the same store follows its changes and serves the same snapshot.
import type { ProviderSpec } from '../../core/resources/provider.ts';
import type { RouterSpec } from '../../core/resources/router.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../core/resources/snapshot.ts';
import { findConflicts } from '../../core/resources/consistency.ts';
import { snapshotVersion } from '../../core/resources/snapshot-version.ts';
import type { Catalog, CatalogStore } from '../../core/store/catalog.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import { serviceRefOutsideKubernetes } from '../../core/resources/service-ref.ts';
import { errors } from '../api/api-error.ts';

export interface CatalogContent {
  readonly routers: RouterSpec[];
  readonly providers: ProviderSpec[];
}

/**
 * What the admin API reads routers and providers from and edits them through: the catalog in the
 * store (file mode), or in Kubernetes mode the snapshot served, edits being written as custom
 * resources (../kubernetes/cr-catalog.ts).
 */
export interface RoutingCatalog {
  current(): Promise<Snapshot>;
  /**
   * Applies `edit` to the current content. Resolves to the snapshot this gateway will serve, or
   * to undefined when another party publishes the result (the operator, in Kubernetes mode).
   */
  change(edit: (current: CatalogContent) => CatalogContent): Promise<Snapshot | undefined>;
  /** The id a provider created with the id `requested` is served under; absent: the same. */
  providerId?(requested: string): string;
}

/** How often a write is retried when another writer got in first. */
const MAX_WRITE_ATTEMPTS = 20;

export class CatalogService implements RoutingCatalog {
  readonly #store: CatalogStore;

  constructor(store: CatalogStore) {
    this.#store = store;
  }

  async current(): Promise<Snapshot> {
    return toSnapshot(await this.#store.readCatalog());
  }

  /**
   * Applies `edit` to the current catalog and writes the result, retrying on concurrent writes.
   * `edit` throws (NotFoundError, ConflictError, ...) to refuse; a result whose names or aliases
   * collide, or whose provider names a missing router, is refused with ConflictError.
   */
  async change(edit: (current: CatalogContent) => CatalogContent): Promise<Snapshot> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const catalog = await this.#store.readCatalog();
      const next = edit({ routers: [...catalog.routers], providers: [...catalog.providers] });
      const conflicts = findConflicts(next.routers, next.providers);
      if (conflicts.length > 0) throw new ConflictError(conflicts.map((c) => c.message).join('; '));
      const named = serviceRefOutsideKubernetes(next.providers);
      if (named) throw errors.invalidRequest(`Provider "${next.providers[named.index]?.id}" ${named.message}`, 'service_ref');
      const revision = await this.#store.writeCatalog(catalog.revision, next);
      if (revision !== 'conflict') return toSnapshot({ revision, ...next });
    }
    throw new ConflictError('the catalog is being changed by others too often; try again');
  }

  /**
   * Puts the config file's routers and providers in the catalog, replacing those of the same
   * name; routers the file declared before (`previous`) and no longer does are removed.
   */
  seed(file: CatalogContent, previous?: CatalogContent): Promise<Snapshot> {
    const routerNames = new Set([...file.routers, ...(previous?.routers ?? [])].map((r) => r.name));
    const providerIds = new Set(file.providers.map((p) => p.id));
    return this.change((current) => ({
      routers: [...current.routers.filter((r) => !routerNames.has(r.name)), ...file.routers],
      providers: [...current.providers.filter((p) => !providerIds.has(p.id) && !routerNames.has(p.router)), ...file.providers],
    }));
  }

  /**
   * Calls `onSnapshot` with the new snapshot whenever any gateway changes the catalog. A catalog
   * never written (revision 0) is not followed: read after a reconnection, it is one the store
   * lost (Redis restarted empty, or flushed), and the gateway serves what it has until the
   * catalog is seeded again (../startup/reseed.ts) or written.
   */
  follow(onSnapshot: (snapshot: Snapshot) => void, onError: (error: unknown) => void): () => void {
    return this.#store.onCatalogChange(() => {
      this.#store.readCatalog().then((catalog) => {
        if (catalog.revision > 0) onSnapshot(toSnapshot(catalog));
      }, onError);
    });
  }
}

function toSnapshot(catalog: Catalog): Snapshot {
  const content = { routers: catalog.routers, providers: catalog.providers };
  return { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content };
}
