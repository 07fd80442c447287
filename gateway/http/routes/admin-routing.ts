// GET /v1/admin/routing: how routing stands now, for admins and the Playground: each router's
// routing mode and (queue mode) how many requests wait, each provider's capacity, slots in use
// and live numbers. Fleet-wide for queue-mode routers (read from Redis), this gateway's own
// otherwise.
import type { FastifyInstance } from 'fastify';
import type { RoutingLive } from '../../routing/assembly/routing-live.ts';
import { adminOnly } from '../auth.ts';

export function registerAdminRouting(app: FastifyInstance, live: () => Promise<RoutingLive>): void {
  app.register(async (admin) => {
    adminOnly(admin);
    admin.get('/v1/admin/routing', () => live());
  });
}
