// The admin API's users (spec 4: create and update a user, with its budget) and their API keys.
// Admins only. A PATCH merges onto the stored user (JSON Merge Patch) and the result is validated
// whole by UserSpec, so a budget change applies to the user's very next request.
// In Kubernetes mode (deps.resources) creating, changing and deleting a user writes its
// GatewayUser resource instead, which the operator puts into Redis; reads, and the key endpoints
// (for keys made through this API), stay on Redis.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { UserSpec } from '../../../core/resources/user.ts';
import type { UserResources } from '../../kubernetes/cr-catalog.ts';
import type { Store } from '../../../core/store/store.ts';
import type { UserRecord } from '../../../core/store/accounts.ts';
import { ConflictError } from '../../../core/store/store-errors.ts';
import { adminOnly, requireAdmin } from '../auth.ts';
import { errors } from '../api-error.ts';
import { assertSameIdentity, bodyObject, identityIn, mergePatch, PageLimit, parseWith } from '../payloads.ts';
import { createKey, keyPage, keyView, userView } from './account-views.ts';

export interface AdminUsersDeps {
  readonly store: Store;
  readonly now: () => number;
  /** Most active keys a user may hold. */
  readonly maxKeysPerUser: number;
  /** Kubernetes mode: where users are written (GatewayUser resources). */
  readonly resources?: UserResources | undefined;
}

const ListQuery = z.strictObject({ limit: PageLimit, after: z.string().min(1).optional() });

type IdParams = { Params: { id: string } };
type KeyParams = { Params: { id: string; keyId: string } };

export function registerAdminUsers(app: FastifyInstance, deps: AdminUsersDeps): void {
  app.register(async (admin) => {
    adminOnly(admin);

    admin.post('/v1/admin/users', async (request, reply) => {
      const input = mergePatch({}, bodyObject(request.body)) as Record<string, unknown>;
      const spec = parseWith(UserSpec, { ...input, id: input.id ?? newUserId() });
      if (deps.resources) {
        if (await deps.store.accounts.getUser(spec.id)) throw errors.conflict(`A user with id "${spec.id}" already exists`, 'id');
        try {
          await deps.resources.create(spec);
        } catch (error) {
          if (error instanceof ConflictError) throw errors.conflict(`A user with id "${spec.id}" already exists`, 'id');
          throw error;
        }
        reply.code(201);
        return userView({ ...spec, created_at: new Date(deps.now()).toISOString() }, deps.store.ledger, deps.now());
      }
      let created: UserRecord;
      try {
        created = await deps.store.accounts.createUser(spec, new Date(deps.now()));
      } catch (error) {
        if (error instanceof ConflictError) throw errors.conflict(`A user with id "${spec.id}" already exists`, 'id');
        throw error;
      }
      reply.code(201);
      return userView(created, deps.store.ledger, deps.now());
    });

    admin.get('/v1/admin/users', async (request) => {
      const query = parseWith(ListQuery, request.query);
      const page = await deps.store.accounts.listUsers(query.after ?? null, query.limit);
      const now = deps.now();
      return { object: 'list', data: await Promise.all(page.items.map((user) => userView(user, deps.store.ledger, now))), next: page.next };
    });

    admin.get<IdParams>('/v1/admin/users/:id', async (request) =>
      userView(await userOr404(deps.store, request.params.id), deps.store.ledger, deps.now()),
    );

    admin.patch('/v1/admin/users', async (request) => {
      const patch = bodyObject(request.body);
      return update(deps, requireAdmin(request).user.id, identityIn(patch, 'id'), patch);
    });

    admin.patch<IdParams>('/v1/admin/users/:id', async (request) =>
      update(deps, requireAdmin(request).user.id, request.params.id, bodyObject(request.body)),
    );

    admin.delete<IdParams>('/v1/admin/users/:id', async (request) => {
      const { id } = request.params;
      if (id === requireAdmin(request).user.id)
        throw errors.invalidRequest("You cannot delete your own user; use another admin's key", 'id');
      // A user without a GatewayUser (the bootstrap admin, say) is deleted from Redis, as in file mode.
      const deleted = (deps.resources && (await deps.resources.delete(id))) || (await deps.store.accounts.deleteUser(id));
      if (!deleted) throw userNotFound(id);
      return { object: 'user', id, deleted: true };
    });

    admin.post<IdParams>('/v1/admin/users/:id/keys', async (request, reply) => {
      const created = await createKey(
        deps.store.accounts,
        (await userOr404(deps.store, request.params.id)).id,
        request.body ?? {},
        deps.now(),
        deps.maxKeysPerUser,
      );
      reply.code(201);
      return created;
    });

    admin.get<IdParams>('/v1/admin/users/:id/keys', async (request) => {
      const user = await userOr404(deps.store, request.params.id);
      return keyPage(await deps.store.accounts.listKeys(user.id), request.query);
    });

    admin.delete<KeyParams>('/v1/admin/users/:id/keys/:keyId', async (request) => {
      const { id, keyId } = request.params;
      await userOr404(deps.store, id);
      const revoked = await deps.store.accounts.revokeKey(id, keyId, new Date(deps.now()));
      if (!revoked) throw errors.notFound(`User "${id}" has no API key "${keyId}"`);
      return keyView(revoked);
    });
  });
}

async function update(deps: AdminUsersDeps, callerId: string, id: string, patch: Record<string, unknown>) {
  const current = await userOr404(deps.store, id);
  assertSameIdentity(patch, 'id', id, 'user');
  const { created_at: _createdAt, ...spec } = current;
  const next = parseWith(UserSpec, mergePatch(spec, patch));
  // An admin who demoted themselves could lock the gateway out of its own admin API.
  if (id === callerId && next.role !== 'admin')
    throw errors.invalidRequest("role: you cannot remove your own admin role; use another admin's key", 'role');
  if (deps.resources) {
    await deps.resources.update(next);
    return userView({ ...next, created_at: current.created_at }, deps.store.ledger, deps.now());
  }
  return userView(await deps.store.accounts.updateUser(next), deps.store.ledger, deps.now());
}

async function userOr404(store: Store, id: string): Promise<UserRecord> {
  const user = await store.accounts.getUser(id);
  if (!user) throw userNotFound(id);
  return user;
}

const userNotFound = (id: string) => errors.notFound(`User "${id}" not found`, 'id');

/** `u-` and 12 hex digits: a valid ResourceId that never collides in practice. */
function newUserId(): string {
  return `u-${randomBytes(6).toString('hex')}`;
}
