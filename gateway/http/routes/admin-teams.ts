// The admin API's teams: admins create, change and delete them; a team admin reads their own team
// (budget, spent, remaining, members) and nothing else. A team's budget and limits bound all its
// users together, beside each user's own (store/ledger.ts levels). Teams are read and written
// through the account directory, which in Kubernetes mode writes GatewayTeam resources for the
// operator to put into Redis (cr-accounts.ts).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TeamSpec } from '../../../core/resources/team.ts';
import type { AccountDirectory } from '../../accounts/account-directory.ts';
import type { TeamRecord } from '../../../core/store/accounts.ts';
import { teamMembers } from '../../../core/store/team-members.ts';
import { isActiveKey } from '../../../core/store/paging.ts';
import { ConflictError } from '../../../core/store/store-errors.ts';
import { errors } from '../../api/api-error.ts';
import { assertSameIdentity, bodyObject, mergePatch, PageLimit, parseWith } from '../../api/payloads.ts';
import { assertAdmin, assertTeamInScope, scopeOf } from '../team-scope.ts';
import { teamView, type Balances } from './account-views.ts';
import { DeletedTeam, TeamList, TeamView } from '../views/accounts.ts';
import { responds, withResponseSchemas } from '../views/checked-json.ts';
import { page } from '../views/lists.ts';

/** What the teams' routes read and write of the account directory: teams, and their users' keys. */
export type TeamDirectory = Pick<
  AccountDirectory,
  'getTeam' | 'listTeams' | 'createTeam' | 'updateTeam' | 'deleteTeam' | 'listUsers' | 'listKeys'
>;

export interface AdminTeamsDeps {
  /** Where teams, their users and keys are read, and teams written. */
  readonly accounts: TeamDirectory;
  /** Where each team's spend is read. */
  readonly ledger: Balances;
  readonly now: () => number;
}

const ListQuery = z.strictObject({ limit: PageLimit, after: z.string().min(1).optional() });

type IdParams = { Params: { id: string } };

/** The teams' routes, a plugin of the admin API's scope (admin.ts), which decides who may call them. */
export async function adminTeams(instance: FastifyInstance, deps: AdminTeamsDeps): Promise<void> {
  const admin = withResponseSchemas(instance);
  admin.post('/v1/admin/teams', responds({ 201: TeamView }), async (request, reply) => {
    assertAdmin(scopeOf(request));
    const spec = parseWith(TeamSpec, mergePatch({}, bodyObject(request.body)));
    const taken = () => errors.conflict(`A team with id "${spec.id}" already exists`, 'id');
    let created: TeamRecord;
    try {
      created = await deps.accounts.createTeam(spec, new Date(deps.now()));
    } catch (error) {
      if (error instanceof ConflictError) throw taken();
      throw error;
    }
    reply.code(201);
    return view(deps, created);
  });

  admin.get('/v1/admin/teams', responds({ 200: TeamList }), async (request) => {
    const scope = scopeOf(request);
    const query = parseWith(ListQuery, request.query);
    if (scope !== null) {
      const own = await deps.accounts.getTeam(scope);
      return page(own ? [await view(deps, own)] : [], null);
    }
    const teams = await deps.accounts.listTeams(query.after ?? null, query.limit);
    return page(await Promise.all(teams.items.map((team) => view(deps, team))), teams.next);
  });

  admin.get<IdParams>('/v1/admin/teams/:id', responds({ 200: TeamView }), async (request) => {
    assertTeamInScope(scopeOf(request), request.params.id);
    return view(deps, await teamOr404(deps.accounts, request.params.id));
  });

  admin.patch<IdParams>('/v1/admin/teams/:id', responds({ 200: TeamView }), async (request) => {
    assertAdmin(scopeOf(request));
    const { id } = request.params;
    const patch = bodyObject(request.body);
    const current = await teamOr404(deps.accounts, id);
    assertSameIdentity(patch, 'id', id, 'team');
    const { created_at: _createdAt, ...spec } = current;
    const next = parseWith(TeamSpec, mergePatch(spec, patch));
    return view(deps, await deps.accounts.updateTeam(next));
  });

  admin.delete<IdParams>('/v1/admin/teams/:id', responds({ 200: DeletedTeam }), async (request) => {
    assertAdmin(scopeOf(request));
    const { id } = request.params;
    await teamOr404(deps.accounts, id);
    const members = await membersOf(deps.accounts, id);
    if (members.length > 0) throw errors.conflict(`Team "${id}" still has users (${members.join(', ')}): move or delete them first`, 'id');
    if (!(await deps.accounts.deleteTeam(id))) throw teamNotFound(id);
    return { object: 'team', id, deleted: true };
  });
}

async function view(deps: AdminTeamsDeps, team: TeamRecord) {
  const members = await membersOf(deps.accounts, team.id);
  const now = deps.now();
  const at = new Date(now).toISOString();
  const keys = (await Promise.all(members.map((id) => deps.accounts.listKeys(id)))).flat().filter((key) => isActiveKey(key, at));
  return teamView(team, members, keys, deps.ledger, now);
}

/** Ids of the team's users. */
async function membersOf(accounts: TeamDirectory, team: string): Promise<string[]> {
  return (await teamMembers(accounts, team)).map((user) => user.id);
}

async function teamOr404(accounts: TeamDirectory, id: string): Promise<TeamRecord> {
  const team = await accounts.getTeam(id);
  if (!team) throw teamNotFound(id);
  return team;
}

const teamNotFound = (id: string) => errors.notFound(`Team "${id}" not found`, 'id');
