// Whose usage a caller may read, group by group: an admin everything; a team admin their team,
// its users and those users' keys; anyone else themselves and their own keys. Routers and
// providers are counted for everyone together, so only admins read them.
import type { FastifyRequest } from 'fastify';
import type { AccountDirectory } from '../accounts/account-directory.ts';
import type { UsageGroup } from '../../core/store/usage-log.ts';
import { teamMembers } from '../../core/store/team-members.ts';
import { callerOf } from './auth.ts';
import { errors } from '../api/api-error.ts';

export interface UsageScope {
  /** Which ids of `group` the caller may see; throws 403 for a group they may not read at all (naming `param`). */
  filter(group: UsageGroup, param?: string): Promise<(id: string) => boolean>;
}

/** The reads a scope needs: a team's users, and users' keys (the account directory). */
export type UsageScopeAccounts = Pick<AccountDirectory, 'listUsers' | 'listKeys'>;

export async function usageScope(request: FastifyRequest, accounts: UsageScopeAccounts): Promise<UsageScope> {
  const { user } = callerOf(request);
  if (user.role === 'admin') return { filter: async () => () => true };
  const team = user.role === 'team_admin' ? user.team : null;
  // The users in view: the team's, or the caller alone.
  const users = async (): Promise<Set<string>> =>
    new Set(team === null ? [user.id] : (await teamMembers(accounts, team)).map((member) => member.id));
  return {
    async filter(group, param = 'group_by') {
      switch (group) {
        case 'router':
        case 'provider':
          throw errors.forbidden(`Only admins may read usage by ${group}: it counts every team's requests`, param);
        case 'team':
          return (id) => team !== null && id === team;
        case 'user': {
          const visible = await users();
          return (id) => visible.has(id);
        }
        case 'key': {
          const keys = new Set<string>();
          for (const id of await users()) for (const key of await accounts.listKeys(id)) keys.add(key.id);
          return (id) => keys.has(id);
        }
      }
    },
  };
}
