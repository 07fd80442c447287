// The catalog of a single process, with the same compare-and-set as the Redis one.
import type { ProviderSpec } from '../../resources/provider.ts';
import type { RouterSpec } from '../../resources/router.ts';
import type { Catalog, CatalogStore } from '../catalog.ts';
import { notify } from '../notify.ts';

export class MemoryCatalog implements CatalogStore {
  #catalog: Catalog = { revision: 0, routers: [], providers: [] };
  readonly #listeners = new Set<() => void>();

  async readCatalog(): Promise<Catalog> {
    return structuredClone(this.#catalog);
  }

  async writeCatalog(expectedRevision: number, next: { routers: RouterSpec[]; providers: ProviderSpec[] }): Promise<number | 'conflict'> {
    if (expectedRevision !== this.#catalog.revision) return 'conflict';
    const revision = expectedRevision + 1;
    this.#catalog = { revision, routers: structuredClone(next.routers), providers: structuredClone(next.providers) };
    notify(this.#listeners);
    return revision;
  }

  onCatalogChange(listener: () => void): () => void {
    // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
    const subscription = () => listener();
    this.#listeners.add(subscription);
    return () => {
      this.#listeners.delete(subscription);
    };
  }
}
