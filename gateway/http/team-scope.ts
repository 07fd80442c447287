// What a team admin may reach through the admin API: their own team's users, keys and usage, and
// nothing else. An admin's scope is everything. Routes open to both (access `manager`, auth.ts)
// ask here before they read or write, so "outside the team" is decided in one place: a user of
// another team is answered as one that does not exist (404), any other step out 403 forbidden.
// Within the team, a team admin may only narrow what an admin set for a user (the routers, the
// priority, a hard budget, the rate limits), never widen it.
import type { FastifyRequest } from 'fastify';
import type { TeamRecord, UserRecord } from '../../core/store/accounts.ts';
import type { Role, UserSpec } from '../../core/resources/user.ts';
import type { RouterSpec } from '../../core/resources/router.ts';
import { RATE_LIMIT_NAMES, type RateLimitName, type RateLimitPolicy } from '../../core/resources/limits.ts';
import { parseDecimal } from '../../core/money/decimal.ts';
import { requireManager } from './auth.ts';
import { errors } from '../api/api-error.ts';

/** null: an admin, who may reach everything; else the id of the team a team admin is confined to. */
export type Scope = string | null;

export function scopeOf(request: FastifyRequest): Scope {
  const { user } = requireManager(request);
  return user.role === 'admin' ? null : user.team;
}

/**
 * Throws 404 unless the user is within the scope: to a team admin, a user of another team looks
 * exactly like one that does not exist, so no answer tells them which ids are taken elsewhere.
 */
export function assertUserInScope(scope: Scope, user: Pick<UserRecord, 'id' | 'team'>): void {
  if (scope !== null && user.team !== scope) throw userNotFound(user.id);
}

export const userNotFound = (id: string) => errors.notFound(`User "${id}" not found`, 'id');

/**
 * The id a team admin chooses for a new user starts with their team's id and a hyphen (`red-ann`).
 * A taken id is answered 409, so were any id allowed, a team admin could probe for other teams'
 * users; within the prefix, a 409 only tells them about ids of their own team's namespace. An id
 * left out is generated (admin-users.ts), and taken by no one.
 */
export function assertNewIdInScope(scope: Scope, id: string): void {
  if (scope !== null && !id.startsWith(`${scope}-`))
    throw errors.forbidden(`id: a team admin's users have ids that start with "${scope}-"; leave id out to have one generated`, 'id');
}

/** Throws 403 unless the team is within the scope. */
export function assertTeamInScope(scope: Scope, teamId: string): void {
  if (scope !== null && teamId !== scope) throw errors.forbidden(`Team "${teamId}" is not your team`, 'id');
}

/** Throws 403 for a team admin: the route is the admins' alone (managing teams themselves). */
export function assertAdmin(scope: Scope): void {
  if (scope !== null) throw errors.forbidden("Only an admin may do this; a team admin manages their own team's users and keys");
}

/** Roles a team admin may give: never `admin`. */
export function assertRoleInScope(scope: Scope, role: Role): void {
  if (scope !== null && role === 'admin') throw errors.forbidden('role: a team admin cannot make an admin', 'role');
}

/**
 * A team admin changes nothing of an admin who sits in their team (deleting the user, revoking or
 * changing its keys): an admin is managed by admins alone. Throws 403.
 */
export function assertNotAnAdminInScope(scope: Scope, user: Pick<UserRecord, 'id' | 'role'>): void {
  if (scope !== null && user.role === 'admin')
    throw errors.forbidden(`User "${user.id}" is an admin: only an admin may change it or its keys`);
}

/**
 * Only an admin writes the identities a user is (`subjects`, issue 46): a team admin who could
 * would point another person's identity (an admin's, another team's user's) at a user whose key
 * they hold, and that person's groups, at their next token, would make the user theirs: an admin,
 * or of their team. A write leaving the subjects as they are passes. Throws 403.
 */
export function assertSubjectsInScope(scope: Scope, current: readonly string[] | null, next: readonly string[] | null): void {
  if (scope === null) return;
  const [before, after] = [current ?? [], next ?? []];
  if (before.length !== after.length || before.some((subject, i) => subject !== after[i]))
    throw errors.forbidden("subjects: only an admin may set the identities a user is; a team admin's users keep theirs", 'subjects');
}

/**
 * A team admin makes no key for a user listing subjects, nor for an admin: a person's groups set
 * such a user's team and role at each of their tokens (up to admin), and a key someone else holds
 * would carry it. Throws 403.
 */
export function assertKeyMakerInScope(scope: Scope, user: Pick<UserRecord, 'id' | 'role' | 'subjects'>): void {
  if (scope === null) return;
  if ((user.subjects ?? []).length > 0)
    throw errors.forbidden(`User "${user.id}" calls with tokens (it lists subjects): only an admin may make it an API key`);
  if (user.role === 'admin') throw errors.forbidden(`User "${user.id}" is an admin: only an admin may make it an API key`);
}

/**
 * A budget a team admin sets (a user's or a key's) must fit within what the team holds: never
 * above the team's budget. None (null) is allowed: the team's budget still bounds it.
 */
export function assertBudgetInScope(scope: Scope, team: TeamRecord | undefined, budget: string | null, field = 'budget'): void {
  if (scope === null || team === undefined || team.budget === null || budget === null) return;
  if (micros(budget) > micros(team.budget))
    throw errors.forbidden(`${field}: a team admin cannot set a budget above the team's (${team.budget})`, field);
}

/** The fields of a user that bound what they may call, how often, in which order, and past their budget. */
export type UserPolicy = Pick<UserSpec, 'allowed_routers' | 'priority' | 'soft_budget' | 'rate_limits'>;

/** What a user's policy is measured against. */
export interface PolicyContext {
  readonly team: TeamRecord | undefined;
  /** The routers served now, whose limits apply to a user without their own; undefined until routing is loaded. */
  readonly routers: readonly Pick<RouterSpec, 'name' | 'rate_limits'>[] | undefined;
}

/**
 * A team admin may only narrow what an admin set for a user, never widen it: each field of `next`
 * allows at most what is in force for the user now (`current`), or, for a new user (`current`
 * undefined), what they would have with the field left out. A field left as it was always
 * passes, so a team admin may still change a user's name or budget whatever an admin set beside.
 * Throws 403 naming the field.
 */
export function assertNarrowerInScope(scope: Scope, current: UserPolicy | undefined, next: UserPolicy, context: PolicyContext): void {
  if (scope === null) return;
  const { team } = context;
  // A new user without a list has the team's routers; one given a list gets none the team lacks.
  if (current !== undefined) assertRoutersNarrower(current.allowed_routers ?? null, next.allowed_routers);
  else if (next.allowed_routers !== null) assertRoutersNarrower(team?.allowed_routers ?? null, next.allowed_routers);
  assertPriorityNarrower(current?.priority ?? null, next.priority, team);
  if (next.soft_budget && !(current?.soft_budget ?? false))
    throw errors.forbidden(
      "soft_budget: a team admin cannot make a user's budget soft; only an admin may let a user spend past it",
      'soft_budget',
    );
  assertRateLimitsNarrower(current?.rate_limits ?? null, next, context);
}

/** The routers in force (null: all) may lose names, never gain one, and a list is never lifted. */
function assertRoutersNarrower(held: readonly string[] | null, next: readonly string[] | null): void {
  if (held === null) return;
  if (next === null)
    throw errors.forbidden(
      `allowed_routers: a team admin may only narrow a user's routers, not lift the list (in force: ${quoted(held)})`,
      'allowed_routers',
    );
  const added = next.filter((router) => !held.includes(router));
  if (added.length > 0)
    throw errors.forbidden(
      `allowed_routers: a team admin may only narrow a user's routers; ${quoted(added)} not among those in force (${quoted(held)})`,
      'allowed_routers',
    );
}

/** The priority a user's requests wait with (theirs, else the team's) may go down, never up. */
function assertPriorityNarrower(held: number | null, next: number | null, team: TeamRecord | undefined): void {
  const teams = team?.priority ?? 0;
  const inForce = held ?? teams;
  if ((next ?? teams) > inForce)
    throw errors.forbidden(`priority: a team admin may only lower a user's priority (in force: ${inForce})`, 'priority');
}

/**
 * A user's own rate limits replace the router's (billing.ts), so the policy a team admin writes
 * must hold every limit in force, no higher. With limits of the user's own on both sides they are
 * compared as they are; where the routers' apply (before, after, or for a new user), on each
 * router the user may call. A team's own limits apply on top either way.
 */
function assertRateLimitsNarrower(held: RateLimitPolicy | null, next: UserPolicy, { team, routers }: PolicyContext): void {
  const asked = next.rate_limits;
  if (held === null && asked === null) return;
  if (held !== null && asked !== null) {
    const name = loosened(held, asked);
    if (name !== undefined) throw looserLimit(name, held[name]!, '');
    return;
  }
  // Fail closed: without the routers' limits nothing tells a narrower policy from a wider one.
  if (routers === undefined)
    throw errors.forbidden("rate_limits: the routers' limits are not loaded yet; try again once the gateway is ready", 'rate_limits');
  const callable = routers.filter(
    (router) =>
      (next.allowed_routers === null || next.allowed_routers.includes(router.name)) &&
      (team === undefined || team.allowed_routers === null || team.allowed_routers.includes(router.name)),
  );
  for (const router of callable) {
    const inForce = held ?? router.rate_limits ?? {};
    const name = loosened(inForce, asked ?? router.rate_limits ?? {});
    if (name === undefined) continue;
    if (asked === null)
      throw errors.forbidden(
        `rate_limits: a team admin cannot drop a user's limits for the routers' own, looser on "${router.name}" (${name} in force: ${inForce[name]})`,
        'rate_limits',
      );
    throw looserLimit(name, inForce[name]!, ` on router "${router.name}"`);
  }
}

/** The first limit of `inForce` that `next` lifts or raises. */
function loosened(inForce: RateLimitPolicy, next: RateLimitPolicy): RateLimitName | undefined {
  return RATE_LIMIT_NAMES.find((name) => inForce[name] !== undefined && (next[name] === undefined || next[name] > inForce[name]));
}

function looserLimit(name: RateLimitName, inForce: number, where: string) {
  const field = `rate_limits.${name}`;
  return errors.forbidden(`${field}: a team admin may only narrow a user's limits (in force${where}: ${inForce})`, field);
}

const quoted = (names: readonly string[]) => (names.length === 0 ? 'none' : names.map((name) => `"${name}"`).join(', '));

function micros(text: string): bigint {
  const parsed = parseDecimal(text, 6);
  return parsed.ok ? parsed.value : 0n;
}
