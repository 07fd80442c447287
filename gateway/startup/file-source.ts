// File mode: the configuration file seeds the catalog in the store (and its users) at start-up
// and on SIGHUP; the gateway serves the catalog and follows its changes, whichever gateway on the
// same store made them (through the admin API).
import { loadConfigFile } from '../config/config-file.ts';
import type { GatewaySettings } from '../config/settings.ts';
import { seedUsers } from '../accounts/bootstrap.ts';
import { StoreAccounts } from '../accounts/store-accounts.ts';
import { CatalogService } from '../catalog/catalog-service.ts';
import type { Store } from '../../core/store/store.ts';
import type { SnapshotSource, SourceContext } from './snapshot-source.ts';
import { followCatalog } from '../catalog/follow-catalog.ts';

export async function fileSource(
  settings: GatewaySettings,
  store: Store,
  env: Readonly<Record<string, string | undefined>>,
): Promise<SnapshotSource> {
  let file = settings.config ? await loadConfigFile(settings.config, env) : undefined;
  if (file) await seedUsers(store.accounts, file.teams, file.users, new Date());
  const catalog = new CatalogService(store.catalog);
  const initial = file ? await catalog.seed(file.snapshot) : await catalog.current();
  let context: SourceContext | undefined;
  let unfollow = () => {};
  return {
    initial,
    catalog,
    accounts: new StoreAccounts(store.accounts),
    start(started) {
      context = started;
      const { routing, log } = started;
      unfollow = followCatalog(catalog, routing, log);
    },
    async reload() {
      if (!settings.config || !context) return;
      const { routing, log } = context;
      try {
        const next = await loadConfigFile(settings.config, env);
        const snapshot = await catalog.seed(next.snapshot, file?.snapshot);
        await seedUsers(store.accounts, next.teams, next.users, new Date());
        file = next;
        routing.load(snapshot);
        log.info({ snapshot: snapshot.version, routers: snapshot.routers.length }, 'configuration reloaded');
      } catch (error) {
        log.error({}, `configuration not reloaded, still serving the previous one: ${(error as Error).message}`);
      }
    },
    async reseed() {
      if (!file) return;
      await seedUsers(store.accounts, file.teams, file.users, new Date());
      const snapshot = await catalog.seed(file.snapshot);
      if (context && snapshot.version !== context.routing.table.version) context.routing.load(snapshot);
    },
    async stop() {
      unfollow();
    },
  };
}
