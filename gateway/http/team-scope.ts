// What a team admin may reach through the admin API: their own team's users, keys and usage, and
// nothing else. An admin's scope is everything. Routes open to both (access `manager`, auth.ts)
// ask here before they read or write, so "outside the team" is decided in one place and always
// answered the same way: 403 forbidden.
import type { FastifyRequest } from 'fastify';
import type { TeamRecord, UserRecord } from '../../core/store/accounts.ts';
import type { Role } from '../../core/resources/user.ts';
import { parseDecimal } from '../../core/money/decimal.ts';
import { requireManager } from './auth.ts';
import { errors } from './api-error.ts';

/** null: an admin, who may reach everything; else the id of the team a team admin is confined to. */
export type Scope = string | null;

export function scopeOf(request: FastifyRequest): Scope {
  const { user } = requireManager(request);
  return user.role === 'admin' ? null : user.team;
}

/** Throws 403 unless the user is within the scope. */
export function assertUserInScope(scope: Scope, user: Pick<UserRecord, 'id' | 'team'>): void {
  if (scope !== null && user.team !== scope) throw errors.forbidden(`User "${user.id}" is not in your team`, 'id');
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
 * A budget a team admin sets (a user's or a key's) must fit within what the team holds: never
 * above the team's budget. None (null) is allowed: the team's budget still bounds it.
 */
export function assertBudgetInScope(scope: Scope, team: TeamRecord | undefined, budget: string | null, field = 'budget'): void {
  if (scope === null || team === undefined || team.budget === null || budget === null) return;
  if (micros(budget) > micros(team.budget))
    throw errors.forbidden(`${field}: a team admin cannot set a budget above the team's (${team.budget})`, field);
}

function micros(text: string): bigint {
  const parsed = parseDecimal(text, 6);
  return parsed.ok ? parsed.value : 0n;
}
