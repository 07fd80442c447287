// GET /v1/admin/routing: how routing stands now, for admins and the Playground: each router's
// routing mode and (queue mode) how many requests wait, each provider's capacity, slots in use
// and live numbers. Fleet-wide for queue-mode routers (read from Redis), this gateway's own
// otherwise.
import type { FastifyInstance } from 'fastify';
import type { RoutingLive } from '../../routing/assembly/routing-live.ts';
import { RoutingLiveView } from '../views/catalog.ts';
import { responds, withResponseSchemas } from '../views/checked-json.ts';

export interface AdminRoutingDeps {
  /** The live state of routing (routing/assembly/routing-live.ts). */
  live(): Promise<RoutingLive>;
}

/** The state as routing-live.ts builds it and as its schema declares it name the same fields: one added to either alone fails to compile. */
const sameFields = true satisfies [RoutingLive] extends [RoutingLiveView]
  ? [RoutingLiveView] extends [RoutingLive]
    ? true
    : never
  : never;
void sameFields;

/** The routing state's route, a plugin of the admin API's admins-only scope (admin.ts). */
export async function adminRouting(instance: FastifyInstance, deps: AdminRoutingDeps): Promise<void> {
  const admin = withResponseSchemas(instance);
  admin.get('/v1/admin/routing', responds({ 200: RoutingLiveView }), () => deps.live());
}
