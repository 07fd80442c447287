// The caller's own account, for any valid key: who they are, what they may spend and have
// spent, and their API keys (made and revoked by themselves; a new key's secret is shown once).
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../core/store/store.ts';
import { callerOf } from '../auth.ts';
import { errors } from '../api-error.ts';
import { createKey, keyPage, keyView, userView } from './account-views.ts';

export interface MeDeps {
  readonly store: Store;
  readonly now: () => number;
  /** Most active keys a user may hold. */
  readonly maxKeysPerUser: number;
}

export function registerMe(app: FastifyInstance, deps: MeDeps): void {
  app.get('/v1/me', async (request) => {
    const { user, key } = callerOf(request);
    const view = await userView(user, deps.store.ledger, deps.now());
    return { ...view, key: { id: key.id, name: key.name, hint: key.hint, created_at: key.created_at, expires_at: key.expires_at } };
  });

  app.get('/v1/me/keys', async (request) => {
    const { user } = callerOf(request);
    return keyPage(await deps.store.accounts.listKeys(user.id), request.query);
  });

  app.post('/v1/me/keys', async (request, reply) => {
    const created = await createKey(deps.store.accounts, callerOf(request).user.id, request.body ?? {}, deps.now(), deps.maxKeysPerUser);
    reply.code(201);
    return created;
  });

  app.delete<{ Params: { keyId: string } }>('/v1/me/keys/:keyId', async (request) => {
    const { keyId } = request.params;
    // Scoped to the caller: someone else's key id is as unknown as one that never existed.
    const revoked = await deps.store.accounts.revokeKey(callerOf(request).user.id, keyId, new Date(deps.now()));
    if (!revoked) throw errors.notFound(`You have no API key "${keyId}"`);
    return keyView(revoked);
  });
}
