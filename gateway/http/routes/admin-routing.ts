// GET /v1/admin/routing: how routing stands now, for admins and the Playground: each router's
// routing mode and (queue mode) how many requests wait, each provider's capacity, slots in use
// and live numbers. Fleet-wide for queue-mode routers (read from Redis), this gateway's own
// otherwise.
import type { FastifyInstance } from 'fastify';
import type { RoutingLive } from '../../queue/queue-mode.ts';

export interface AdminRoutingDeps {
  /** The live state of routing (queue/queue-mode.ts). */
  live(): Promise<RoutingLive>;
}

/** The routing state's route, a plugin of the admin API's admins-only scope (admin.ts). */
export async function adminRouting(admin: FastifyInstance, deps: AdminRoutingDeps): Promise<void> {
  admin.get('/v1/admin/routing', () => deps.live());
}
