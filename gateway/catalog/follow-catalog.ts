// A process serving routing follows the catalog: each change of routers or providers, from the
// admin API of any gateway, is loaded into the table it serves. Used by gateways and router workers.
import type { Log } from '../../core/log.ts';
import type { ServedRouting } from '../routing/served-routing.ts';
import type { CatalogService } from './catalog-service.ts';

/** Serves each catalog change that makes a different snapshot, whichever process made it; returns how to stop. */
export function followCatalog(catalog: CatalogService, routing: ServedRouting, log: Log): () => void {
  return catalog.follow(
    (snapshot) => {
      if (snapshot.version !== routing.table.version) routing.load(snapshot);
    },
    (error) => log.error({}, `catalog change not loaded: ${(error as Error).message}`),
  );
}
