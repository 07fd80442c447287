// Routers and providers created at run time (admin API), shared by every gateway on the store.
import type { ProviderSpec } from '../resources/provider.ts';
import type { RouterSpec } from '../resources/router.ts';

export interface Catalog {
  /** Increases with every write; a writer names the revision it read (compare-and-set). */
  readonly revision: number;
  readonly routers: RouterSpec[];
  readonly providers: ProviderSpec[];
}

export interface CatalogStore {
  readCatalog(): Promise<Catalog>;
  /**
   * Replaces the catalog if it is still at `expectedRevision`; returns the new revision, or
   * 'conflict' when someone else wrote first (read again and retry).
   */
  writeCatalog(expectedRevision: number, next: { routers: RouterSpec[]; providers: ProviderSpec[] }): Promise<number | 'conflict'>;
  /** Calls `listener` after any process changed the catalog. Returns the unsubscribe function. */
  onCatalogChange(listener: () => void): () => void;
}
