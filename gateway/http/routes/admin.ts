// The admin API (/v1/admin): one plugin that registers its routes and decides who may call them.
// Users and teams are open to admins and team admins, each route confining a team admin to their
// own team (team-scope.ts); routers, providers and the routing state are the admins' alone. The
// hooks of this plugin's scopes (auth.ts: managersOnly, adminOnly) declare that access on every
// route registered in them; the authentication hook checks it on the route a request matched,
// before its body is read. Each group of routes is handed only the services it uses.
import type { FastifyInstance } from 'fastify';
import { adminOnly, managersOnly } from '../auth.ts';
import { adminProviders } from './admin-providers.ts';
import { adminRouters } from './admin-routers.ts';
import { adminRouting, type AdminRoutingDeps } from './admin-routing.ts';
import { adminTeams, type AdminTeamsDeps } from './admin-teams.ts';
import { adminUsers, type AdminUsersDeps } from './admin-users.ts';
import type { CatalogEditDeps } from './catalog-edits.ts';

export interface AdminDeps {
  readonly users: AdminUsersDeps;
  readonly teams: AdminTeamsDeps;
  /** Routers and providers: the catalog they are edited in, and the routing that serves them. */
  readonly catalog: CatalogEditDeps;
  readonly routing: AdminRoutingDeps;
}

export async function adminApi(admin: FastifyInstance, deps: AdminDeps): Promise<void> {
  managersOnly(admin);
  await admin.register(adminUsers, deps.users);
  await admin.register(adminTeams, deps.teams);
  await admin.register(async function adminsOnly(admins) {
    adminOnly(admins);
    await admins.register(adminRouters, deps.catalog);
    await admins.register(adminProviders, deps.catalog);
    await admins.register(adminRouting, deps.routing);
  });
}
