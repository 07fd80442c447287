// Who is making a request: the user, the key it authenticated with and the user's team, looked up
// once by the HTTP layer and handed to billing and the routes; and what follows from the three
// together: the routers it may call, its priority, and the levels its requests are charged at.
import type { FoundKey } from '../../core/store/accounts.ts';
import type { OtherLevel } from '../../core/store/ledger.ts';
import { isKeyLevel } from '../../core/resources/key-limits.ts';

export type Caller = FoundKey;

/**
 * Forgets, of callers kept by some key (an API key's hash, a token), those of one user, or of a
 * team's users (`team:<id>`), or all of them when `subject` is null: what the store's change
 * notices (AccountStore.onAccountChange) say may have changed.
 */
export function forgetCallers<K, E>(entries: Map<K, E>, subject: string | null, callerOf: (entry: E) => Caller): void {
  if (subject === null) {
    entries.clear();
    return;
  }
  const team = subject.startsWith('team:') ? subject.slice(5) : undefined;
  for (const [key, entry] of entries) {
    const { user } = callerOf(entry);
    if (team === undefined ? user.id === subject : user.team === team) entries.delete(key);
  }
}

/** A router is allowed when the key, the user and the team all allow it (null allows all). */
export function mayCall(caller: Caller, router: string): boolean {
  const { key, user, team } = caller;
  return (
    (user.allowed_routers === null || user.allowed_routers.includes(router)) &&
    (key.allowed_routers == null || key.allowed_routers.includes(router)) &&
    (team === undefined || team.allowed_routers === null || team.allowed_routers.includes(router))
  );
}

/** The user's own priority, else the team's, else 0. */
export function priorityOf(caller: Caller): number {
  return caller.user.priority ?? caller.team?.priority ?? 0;
}

/** A caller's levels besides the user's, and whether any of them has a budget. */
export interface CallerLevels {
  /** Undefined when neither the key nor the team has a budget or limits (most callers). */
  readonly levels: readonly OtherLevel[] | undefined;
  readonly budgeted: boolean;
}

const NO_LEVELS: CallerLevels = Object.freeze({ levels: undefined, budgeted: false });

/** By caller: the key cache hands out the same records until they change, so this is worked out once per key. */
const known = new WeakMap<Caller, CallerLevels>();

/** The key's and the team's levels (ledger.ts), those that have a budget or rate limits, key first. */
export function levelsOf(caller: Caller): CallerLevels {
  let found = known.get(caller);
  if (found === undefined) {
    const levels: OtherLevel[] = [];
    let budgeted = false;
    const { key, team } = caller;
    if (isKeyLevel(key)) {
      levels.push({ level: 'key', id: key.id, policy: key.rate_limits ?? undefined });
      budgeted ||= (key.budget ?? null) !== null;
    }
    if (team !== undefined && (team.budget !== null || team.rate_limits !== null)) {
      levels.push({ level: 'team', id: team.id, policy: team.rate_limits ?? undefined });
      budgeted ||= team.budget !== null;
    }
    found = levels.length === 0 ? NO_LEVELS : { levels, budgeted };
    known.set(caller, found);
  }
  return found;
}
