// The admin API's teams: admins create, change and delete them; a team admin reads their own team
// (budget, spent, remaining, members) and nothing else. A team's budget and limits bound all its
// users together, beside each user's own (store/ledger.ts levels). In Kubernetes mode
// (deps.resources) writes go to GatewayTeam resources, which the operator puts into Redis.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TeamSpec } from '../../../core/resources/team.ts';
import type { Store } from '../../../core/store/store.ts';
import type { TeamResources } from '../../kubernetes/cr-catalog.ts';
import type { TeamRecord } from '../../../core/store/accounts.ts';
import { teamMembers } from '../../../core/store/team-members.ts';
import { isActiveKey } from '../../../core/store/paging.ts';
import { ConflictError } from '../../../core/store/store-errors.ts';
import { managersOnly } from '../auth.ts';
import { errors } from '../../api/api-error.ts';
import { assertSameIdentity, bodyObject, mergePatch, PageLimit, parseWith } from '../../api/payloads.ts';
import { assertAdmin, assertTeamInScope, scopeOf } from '../team-scope.ts';
import { teamView } from './account-views.ts';

export interface AdminTeamsDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly resources?: TeamResources | undefined;
}

const ListQuery = z.strictObject({ limit: PageLimit, after: z.string().min(1).optional() });

type IdParams = { Params: { id: string } };

export function registerAdminTeams(app: FastifyInstance, deps: AdminTeamsDeps): void {
  app.register(async (admin) => {
    managersOnly(admin);

    admin.post('/v1/admin/teams', async (request, reply) => {
      assertAdmin(scopeOf(request));
      const spec = parseWith(TeamSpec, mergePatch({}, bodyObject(request.body)));
      const taken = () => errors.conflict(`A team with id "${spec.id}" already exists`, 'id');
      if (deps.resources) {
        if (await deps.store.accounts.getTeam(spec.id)) throw taken();
        try {
          await deps.resources.createTeam(spec);
        } catch (error) {
          if (error instanceof ConflictError) throw taken();
          throw error;
        }
        reply.code(201);
        return view(deps, { ...spec, created_at: new Date(deps.now()).toISOString() });
      }
      let created: TeamRecord;
      try {
        created = await deps.store.accounts.createTeam(spec, new Date(deps.now()));
      } catch (error) {
        if (error instanceof ConflictError) throw taken();
        throw error;
      }
      reply.code(201);
      return view(deps, created);
    });

    admin.get('/v1/admin/teams', async (request) => {
      const scope = scopeOf(request);
      const query = parseWith(ListQuery, request.query);
      if (scope !== null) {
        const own = await deps.store.accounts.getTeam(scope);
        return { object: 'list', data: own ? [await view(deps, own)] : [], next: null };
      }
      const page = await deps.store.accounts.listTeams(query.after ?? null, query.limit);
      return { object: 'list', data: await Promise.all(page.items.map((team) => view(deps, team))), next: page.next };
    });

    admin.get<IdParams>('/v1/admin/teams/:id', async (request) => {
      assertTeamInScope(scopeOf(request), request.params.id);
      return view(deps, await teamOr404(deps.store, request.params.id));
    });

    admin.patch<IdParams>('/v1/admin/teams/:id', async (request) => {
      assertAdmin(scopeOf(request));
      const { id } = request.params;
      const patch = bodyObject(request.body);
      const current = await teamOr404(deps.store, id);
      assertSameIdentity(patch, 'id', id, 'team');
      const { created_at: createdAt, ...spec } = current;
      const next = parseWith(TeamSpec, mergePatch(spec, patch));
      if (deps.resources) {
        await deps.resources.updateTeam(next);
        return view(deps, { ...next, created_at: createdAt });
      }
      return view(deps, await deps.store.accounts.updateTeam(next));
    });

    admin.delete<IdParams>('/v1/admin/teams/:id', async (request) => {
      assertAdmin(scopeOf(request));
      const { id } = request.params;
      await teamOr404(deps.store, id);
      const members = await membersOf(deps.store, id);
      if (members.length > 0)
        throw errors.conflict(`Team "${id}" still has users (${members.join(', ')}): move or delete them first`, 'id');
      const deleted = (deps.resources && (await deps.resources.deleteTeam(id))) || (await deps.store.accounts.deleteTeam(id));
      if (!deleted) throw teamNotFound(id);
      return { object: 'team', id, deleted: true };
    });
  });
}

async function view(deps: AdminTeamsDeps, team: TeamRecord) {
  const members = await membersOf(deps.store, team.id);
  const now = deps.now();
  const at = new Date(now).toISOString();
  const keys = (await Promise.all(members.map((id) => deps.store.accounts.listKeys(id)))).flat().filter((key) => isActiveKey(key, at));
  return teamView(team, members, keys, deps.store.ledger, now);
}

/** Ids of the team's users. */
async function membersOf(store: Store, team: string): Promise<string[]> {
  return (await teamMembers(store.accounts, team)).map((user) => user.id);
}

async function teamOr404(store: Store, id: string): Promise<TeamRecord> {
  const team = await store.accounts.getTeam(id);
  if (!team) throw teamNotFound(id);
  return team;
}

const teamNotFound = (id: string) => errors.notFound(`Team "${id}" not found`, 'id');
