// Shared by the admin routes that edit routers and providers: a change goes through the catalog
// (compare-and-set, consistency checks) and the answer waits until this gateway serves it, so
// the caller's next request sees the change.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CatalogContent, RoutingCatalog } from '../../catalog/catalog-service.ts';
import type { RouterSpec } from '../../../core/resources/router.ts';
import type { ServedRouting } from '../../routing/served-routing.ts';
import { errors } from '../../api/api-error.ts';

export interface CatalogEditDeps {
  readonly catalog: RoutingCatalog;
  readonly routing: ServedRouting;
}

/** Longest an answer waits for the gateway to load the snapshot it wrote. */
const SERVE_WAIT_MS = 2000;
const SERVE_POLL_MS = 2;

/**
 * Applies `edit` (which may run more than once, on concurrent writes) and waits until the
 * routing table serves the result. The gateway follows catalog changes by itself; waiting here
 * only makes the change visible to the caller's next request. If another write lands first the
 * table moves past this version, and the wait ends at its bound.
 */
export async function commit(deps: CatalogEditDeps, edit: (current: CatalogContent) => CatalogContent): Promise<void> {
  const snapshot = await deps.catalog.change(edit);
  // Kubernetes mode: the change is written as resources, and served once the operator publishes it.
  if (snapshot === undefined) return;
  const deadline = performance.now() + SERVE_WAIT_MS;
  while (deps.routing.table.version !== snapshot.version && performance.now() < deadline) await sleep(SERVE_POLL_MS);
}

/** The router named `name` (names only: aliases are for calling, not for administering). */
export function routerOr404(routers: readonly RouterSpec[], name: string, param: string | null = null): RouterSpec {
  const router = routers.find((r) => r.name === name);
  if (!router) throw errors.notFound(`Router "${name}" not found`, param);
  return router;
}
