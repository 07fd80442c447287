// The admin API's users (spec 4: create and update a user, with its budget) and their API keys.
// Admins manage everyone; a team admin manages their own team's users and keys, within the team's
// budget, only narrowing what an admin set for a user (team-scope.ts); to them a user of another
// team does not exist (404), and every other step outside the team is refused with 403. A PATCH merges
// onto the stored user (JSON Merge Patch) and the result is validated whole by UserSpec, so a
// budget change applies to the user's very next request.
// Users and keys are read and written through the account directory, which in Kubernetes mode
// writes a user's GatewayUser resource for the operator to put into Redis (cr-accounts.ts).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isScoped, SUBJECT_FORMAT } from '../../../core/resources/subjects.ts';
import { UserSpec } from '../../../core/resources/user.ts';
import { KeyLimits, keyLimitsOf } from '../../../core/resources/key-limits.ts';
import type { AccountDirectory } from '../../accounts/account-directory.ts';
import type { UserRecord } from '../../../core/store/accounts.ts';
import { teamMembers } from '../../../core/store/team-members.ts';
import { ConflictError } from '../../../core/store/store-errors.ts';
import { requireKeyCaller, requireManager } from '../auth.ts';
import { errors } from '../../api/api-error.ts';
import { assertSameIdentity, bodyObject, identityIn, mergePatch, PageLimit, parseWith } from '../../api/payloads.ts';
import type { ServedRouting } from '../../routing/served-routing.ts';
import {
  assertBudgetInScope,
  assertKeyMakerInScope,
  assertNarrowerInScope,
  assertNewIdInScope,
  assertNotAnAdminInScope,
  assertRoleInScope,
  assertSubjectsInScope,
  assertUserInScope,
  scopeOf,
  userNotFound,
  type Scope,
  type UserPolicy,
} from '../team-scope.ts';
import { assertNarrower, createKey, keyPage, keyView, keyViewWithSpend, userView, type Balances } from './account-views.ts';
import { DeletedUser, KeyList, KeyView, NewKeyView, UserList, UserView } from '../views/accounts.ts';
import { responds, withResponseSchemas } from '../views/checked-json.ts';
import { page } from '../views/lists.ts';

/** What the users' routes read and write of the account directory: users and their keys, and their teams read. */
export type UserDirectory = Omit<AccountDirectory, 'listTeams' | 'createTeam' | 'updateTeam' | 'deleteTeam'>;

export interface AdminUsersDeps {
  /** Where users and their keys are read and written. */
  readonly accounts: UserDirectory;
  /** Where each user's and key's spend is read. */
  readonly ledger: Balances;
  readonly now: () => number;
  /** Most active keys a user may hold. */
  readonly maxKeysPerUser: number;
  /** The routers served, whose rate limits a team admin may only narrow for a user. */
  readonly routing: ServedRouting;
}

const ListQuery = z.strictObject({ limit: PageLimit, after: z.string().min(1).optional() });

type IdParams = { Params: { id: string } };
type KeyParams = { Params: { id: string; keyId: string } };

/** The users' routes, a plugin of the admin API's scope (admin.ts), which decides who may call them. */
export async function adminUsers(instance: FastifyInstance, deps: AdminUsersDeps): Promise<void> {
  const admin = withResponseSchemas(instance);
  admin.post('/v1/admin/users', responds({ 201: UserView }), async (request, reply) => {
    const scope = scopeOf(request);
    const input = mergePatch({}, bodyObject(request.body)) as Record<string, unknown>;
    // A team admin's users join their team unless the body says otherwise (then refused below).
    const spec = parseWith(UserSpec, { ...(scope !== null && { team: scope }), ...input, id: input.id ?? newUserId() });
    if (input.id !== undefined) assertNewIdInScope(scope, spec.id);
    await assertUserFits(deps, scope, spec, undefined);
    let created: UserRecord;
    try {
      created = await deps.accounts.createUser(spec, new Date(deps.now()));
    } catch (error) {
      if (error instanceof ConflictError) throw errors.conflict(`A user with id "${spec.id}" already exists`, 'id');
      throw error;
    }
    reply.code(201);
    return userView(created, deps.ledger, deps.now());
  });

  admin.get('/v1/admin/users', responds({ 200: UserList }), async (request) => {
    const scope = scopeOf(request);
    const query = parseWith(ListQuery, request.query);
    const users =
      scope === null
        ? await deps.accounts.listUsers(query.after ?? null, query.limit)
        : await teamPage(deps.accounts, scope, query.after ?? null, query.limit);
    const now = deps.now();
    return page(await Promise.all(users.items.map((user) => userView(user, deps.ledger, now))), users.next);
  });

  admin.get<IdParams>('/v1/admin/users/:id', responds({ 200: UserView }), async (request) =>
    userView(await userInScope(deps.accounts, scopeOf(request), request.params.id), deps.ledger, deps.now()),
  );

  admin.patch('/v1/admin/users', responds({ 200: UserView }), async (request) => {
    const patch = bodyObject(request.body);
    return update(deps, request.caller!.user.id, scopeOf(request), identityIn(patch, 'id'), patch);
  });

  admin.patch<IdParams>('/v1/admin/users/:id', responds({ 200: UserView }), async (request) =>
    update(deps, requireManager(request).user.id, scopeOf(request), request.params.id, bodyObject(request.body)),
  );

  admin.delete<IdParams>('/v1/admin/users/:id', responds({ 200: DeletedUser }), async (request) => {
    const { id } = request.params;
    const scope = scopeOf(request);
    if (id === requireManager(request).user.id)
      throw errors.invalidRequest("You cannot delete your own user; use another admin's key", 'id');
    if (scope !== null) assertNotAnAdminInScope(scope, await userInScope(deps.accounts, scope, id));
    if (!(await deps.accounts.deleteUser(id))) throw userNotFound(id);
    return { object: 'user', id, deleted: true };
  });

  admin.post<IdParams>('/v1/admin/users/:id/keys', responds({ 201: NewKeyView }), async (request, reply) => {
    const scope = scopeOf(request);
    const user = await userInScope(deps.accounts, scope, request.params.id);
    if (user.id === requireManager(request).user.id) requireKeyCaller(request);
    assertKeyMakerInScope(scope, user);
    const team = await teamOf(deps.accounts, user);
    const created = await createKey(deps.accounts, user, request.body ?? {}, deps.now(), deps.maxKeysPerUser, (limits) =>
      assertBudgetInScope(scope, team, limits.budget),
    );
    reply.code(201);
    return created;
  });

  admin.get<IdParams>('/v1/admin/users/:id/keys', responds({ 200: KeyList }), async (request) => {
    const user = await userInScope(deps.accounts, scopeOf(request), request.params.id);
    return keyPage(await deps.accounts.listKeys(user.id), request.query, deps.ledger, deps.now());
  });

  admin.patch<KeyParams>('/v1/admin/users/:id/keys/:keyId', responds({ 200: KeyView }), async (request) => {
    const { id, keyId } = request.params;
    const scope = scopeOf(request);
    const user = await userInScope(deps.accounts, scope, id);
    assertNotAnAdminInScope(scope, user);
    const key = (await deps.accounts.listKeys(id)).find((k) => k.id === keyId);
    if (!key) throw errors.notFound(`User "${id}" has no API key "${keyId}"`);
    const limits = parseWith(KeyLimits, mergePatch(keyLimitsOf(key), bodyObject(request.body)));
    assertNarrower(limits, user);
    assertBudgetInScope(scope, await teamOf(deps.accounts, user), limits.budget);
    const updated = await deps.accounts.updateKey(id, keyId, limits);
    if (!updated) throw errors.notFound(`User "${id}" has no API key "${keyId}"`);
    return keyViewWithSpend(updated, deps.ledger, deps.now());
  });

  admin.delete<KeyParams>('/v1/admin/users/:id/keys/:keyId', responds({ 200: KeyView }), async (request) => {
    const { id, keyId } = request.params;
    const scope = scopeOf(request);
    assertNotAnAdminInScope(scope, await userInScope(deps.accounts, scope, id));
    const revoked = await deps.accounts.revokeKey(id, keyId, new Date(deps.now()));
    if (!revoked) throw errors.notFound(`User "${id}" has no API key "${keyId}"`);
    return keyView(revoked);
  });
}

async function update(deps: AdminUsersDeps, callerId: string, scope: Scope, id: string, patch: Record<string, unknown>) {
  const current = await userInScope(deps.accounts, scope, id);
  assertSameIdentity(patch, 'id', id, 'user');
  const { created_at: _createdAt, ...spec } = current;
  const next = parseWith(UserSpec, mergePatch(spec, patch));
  // An admin who demoted themselves could lock the gateway out of its own admin API.
  if (id === callerId && scope === null && next.role !== 'admin')
    throw errors.invalidRequest("role: you cannot remove your own admin role; use another admin's key", 'role');
  await assertUserFits(deps, scope, next, current);
  return userView(await deps.accounts.updateUser(next), deps.ledger, deps.now());
}

/**
 * A user as written must name a team that exists, and stay within a team admin's team, role and
 * budget, and within what is in force for the user now (`current`; undefined for a new user).
 */
async function assertUserFits(
  deps: AdminUsersDeps,
  scope: Scope,
  spec: UserSpec,
  current: (UserPolicy & Pick<UserSpec, 'subjects'>) | undefined,
): Promise<void> {
  if (scope !== null && spec.team !== scope) throw errors.forbidden(`team: a team admin's users stay in their team ("${scope}")`, 'team');
  assertRoleInScope(scope, spec.role);
  assertSubjectsInScope(scope, current?.subjects ?? null, spec.subjects);
  assertSubjectsScoped(spec.subjects, current?.subjects ?? null);
  const team = spec.team === null ? undefined : await deps.accounts.getTeam(spec.team);
  // In Kubernetes mode the GatewayTeam may be written after its users: the operator reconciles either order.
  if (spec.team !== null && team === undefined && deps.accounts.requiresKnownTeam)
    throw errors.invalidRequest(`team: there is no team "${spec.team}"`, 'team');
  assertBudgetInScope(scope, team, spec.budget);
  assertNarrowerInScope(scope, current, spec, { team, routers: servedRouters(deps.routing) });
}

/** Subjects written now name their issuer (`<issuer>#<subject>`); those written before, unscoped, may stay as they are. */
function assertSubjectsScoped(next: readonly string[] | null, current: readonly string[] | null): void {
  const bare = (next ?? []).find((subject) => !isScoped(subject) && !(current ?? []).includes(subject));
  if (bare !== undefined)
    throw errors.invalidRequest(`subjects: "${bare}" names no issuer; write each identity ${SUBJECT_FORMAT}`, 'subjects');
}

/** The routers' specs as served; undefined until a first routing snapshot is loaded (Kubernetes mode). */
function servedRouters(routing: ServedRouting) {
  return routing.waiting === undefined ? routing.table.routers.map((router) => router.spec) : undefined;
}

async function teamOf(accounts: UserDirectory, user: UserRecord) {
  return user.team === null ? undefined : accounts.getTeam(user.team);
}

/** A team's users, `limit` at a time after `after`. */
async function teamPage(accounts: UserDirectory, team: string, after: string | null, limit: number) {
  const members = (await teamMembers(accounts, team)).filter((user) => after === null || user.id > after);
  const items = members.slice(0, limit);
  return { items, next: members.length > limit ? items.at(-1)!.id : null };
}

/** The user, when the scope reaches them: 404 when there is none, and to a team admin when they are in another team. */
async function userInScope(accounts: UserDirectory, scope: Scope, id: string): Promise<UserRecord> {
  const user = await accounts.getUser(id);
  if (!user) throw userNotFound(id);
  assertUserInScope(scope, user);
  return user;
}

/** `u-` and 12 hex digits: a valid ResourceId that never collides in practice. */
function newUserId(): string {
  return `u-${randomBytes(6).toString('hex')}`;
}
