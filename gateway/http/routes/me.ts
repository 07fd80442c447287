// The caller's own account, for any valid key: who they are, what they may spend and have
// spent, and their API keys (made and revoked by themselves; a new key's secret is shown once).
import type { FastifyInstance } from 'fastify';
import type { UserKeys } from '../../accounts/account-directory.ts';
import { callerOf, requireKeyCaller } from '../auth.ts';
import { errors } from '../../api/api-error.ts';
import { KeyLimits, keyLimitsOf } from '../../../core/resources/key-limits.ts';
import { bodyObject, mergePatch, parseWith } from '../../api/payloads.ts';
import { assertNarrower, createKey, keyPage, keyView, keyViewWithSpend, userView, type Balances } from './account-views.ts';
import { KeyList, KeyView, MeView, NewKeyView } from '../views/accounts.ts';
import { responds, withResponseSchemas } from '../views/checked-json.ts';

export interface MeDeps {
  /** Where the caller's keys are read and written. */
  readonly keys: UserKeys;
  /** Where the caller's and their keys' spend is read. */
  readonly ledger: Balances;
  readonly now: () => number;
  /** Most active keys a user may hold. */
  readonly maxKeysPerUser: number;
}

/** The caller's own account: a plugin for any valid key. */
export async function meApi(instance: FastifyInstance, deps: MeDeps): Promise<void> {
  const app = withResponseSchemas(instance);
  app.get('/v1/me', responds({ 200: MeView }), async (request) => {
    const { user, key } = callerOf(request);
    const now = deps.now();
    const view = await userView(user, deps.ledger, now);
    return { ...view, key: await keyViewWithSpend(key, deps.ledger, now) };
  });

  app.get('/v1/me/keys', responds({ 200: KeyList }), async (request) => {
    const { user } = callerOf(request);
    return keyPage(await deps.keys.listKeys(user.id), request.query, deps.ledger, deps.now());
  });

  app.post('/v1/me/keys', responds({ 201: NewKeyView }), async (request, reply) => {
    requireKeyCaller(request);
    const created = await createKey(deps.keys, callerOf(request).user, request.body ?? {}, deps.now(), deps.maxKeysPerUser);
    reply.code(201);
    return created;
  });

  // A user gives each of their applications' keys a budget and limits of its own, narrower than theirs.
  app.patch<{ Params: { keyId: string } }>('/v1/me/keys/:keyId', responds({ 200: KeyView }), async (request) => {
    const { user } = callerOf(request);
    const { keyId } = request.params;
    const key = (await deps.keys.listKeys(user.id)).find((k) => k.id === keyId);
    if (!key) throw errors.notFound(`You have no API key "${keyId}"`);
    const limits = parseWith(KeyLimits, mergePatch(keyLimitsOf(key), bodyObject(request.body)));
    assertNarrower(limits, user);
    const updated = await deps.keys.updateKey(user.id, keyId, limits);
    if (!updated) throw errors.notFound(`You have no API key "${keyId}"`);
    return keyViewWithSpend(updated, deps.ledger, deps.now());
  });

  app.delete<{ Params: { keyId: string } }>('/v1/me/keys/:keyId', responds({ 200: KeyView }), async (request) => {
    const { keyId } = request.params;
    // Scoped to the caller: someone else's key id is as unknown as one that never existed.
    const revoked = await deps.keys.revokeKey(callerOf(request).user.id, keyId, new Date(deps.now()));
    if (!revoked) throw errors.notFound(`You have no API key "${keyId}"`);
    return keyView(revoked);
  });
}
