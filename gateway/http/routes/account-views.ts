// What the admin API and /v1/me show of users, teams and API keys, and how a key is made. Money
// is a JSON number (exact to the 6 decimals of a cost); a key's secret appears once, in the answer
// that creates it, and its hash never. The shapes built here are declared in views/accounts.ts,
// the routes' response schemas.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { ApiKeyRecord, TeamRecord, UserRecord } from '../../../core/store/accounts.ts';
import type { UserKeys } from '../../accounts/account-directory.ts';
import type { Balance, Ledger } from '../../../core/store/ledger.ts';
import { isKeyLevel, KeyLimits } from '../../../core/resources/key-limits.ts';
import { parseDecimal } from '../../../core/money/decimal.ts';
import { COST_SCALE, microsToNumber } from '../../metering/cost.ts';
import { errors } from '../../api/api-error.ts';
import { PageLimit, parseWith } from '../../api/payloads.ts';
import type { KeyList, KeyView, NewKeyView, SpendView, TeamView, UserView } from '../views/accounts.ts';

/** Where the views read how a budget stands. */
export type Balances = Pick<Ledger, 'balance'>;

export function spendView(budget: string | null, balance: Balance): SpendView {
  const budgetMicros = budget === null ? null : moneyMicros(budget);
  const left = budgetMicros === null ? null : budgetMicros - balance.spentMicros - balance.reservedMicros;
  return {
    spent: microsToNumber(balance.spentMicros),
    reserved: microsToNumber(balance.reservedMicros),
    remaining: left === null ? null : microsToNumber(left < 0n ? 0n : left),
    period_start: balance.periodStart?.toISOString() ?? null,
    period_end: balance.periodEnd?.toISOString() ?? null,
  };
}

/** A budget as the views show it: a JSON number, or null for unlimited. */
export function budgetNumber(budget: string | null | undefined): number | null {
  return budget == null ? null : microsToNumber(moneyMicros(budget));
}

export async function userView(user: UserRecord, ledger: Balances, now: number): Promise<UserView> {
  const balance = await ledger.balance(user.id, now);
  return {
    object: 'user',
    id: user.id,
    name: user.name,
    role: user.role,
    // Records written before teams existed have none.
    team: user.team ?? null,
    budget: budgetNumber(user.budget),
    budget_period: user.budget_period,
    allowed_routers: user.allowed_routers,
    rate_limits: user.rate_limits,
    priority: user.priority ?? null,
    // Records written before tokens were believed list no identities.
    subjects: user.subjects ?? null,
    created_at: user.created_at,
    ...spendView(user.budget, balance),
  };
}

export async function teamView(
  team: TeamRecord,
  members: string[],
  keys: readonly ApiKeyRecord[],
  ledger: Balances,
  now: number,
): Promise<TeamView> {
  const balance = await ledger.balance(`team:${team.id}`, now);
  return {
    object: 'team',
    id: team.id,
    name: team.name,
    budget: budgetNumber(team.budget),
    budget_period: team.budget_period,
    allowed_routers: team.allowed_routers,
    rate_limits: team.rate_limits,
    priority: team.priority,
    oidc_groups: team.oidc_groups ?? null,
    oidc_admin_groups: team.oidc_admin_groups ?? null,
    created_at: team.created_at,
    members,
    keys: keys.map((key) => ({ id: key.id, user_id: key.user_id, name: key.name, hint: key.hint, budget: budgetNumber(key.budget) })),
    ...spendView(team.budget, balance),
  };
}

/** A budget as stored (the canonical decimal text UserSpec produces) in micro-units. */
function moneyMicros(text: string): bigint {
  const parsed = parseDecimal(text, COST_SCALE);
  if (!parsed.ok) throw new Error(`stored budget ${parsed.reason}`); // UserSpec validated it
  return parsed.value;
}

/** Everything of a key but its hash; with `balance`, where its budget stands. */
export function keyView(key: ApiKeyRecord, balance?: Balance): KeyView {
  const view: KeyView = {
    object: 'api_key',
    id: key.id,
    user_id: key.user_id,
    name: key.name,
    hint: key.hint,
    created_at: key.created_at,
    expires_at: key.expires_at,
    revoked_at: key.revoked_at,
    budget: budgetNumber(key.budget),
    budget_period: key.budget_period ?? null,
    allowed_routers: key.allowed_routers ?? null,
    rate_limits: key.rate_limits ?? null,
  };
  return balance && isKeyLevel(key) ? { ...view, spend: spendView(key.budget ?? null, balance) } : view;
}

/** keyView with where the key's own budget stands, for a key that has budget or limits. */
export async function keyViewWithSpend(key: ApiKeyRecord, ledger: Balances, now: number): Promise<KeyView> {
  return isKeyLevel(key) ? keyView(key, await ledger.balance(`key:${key.id}`, now, key.user_id)) : keyView(key);
}

/**
 * A key is narrower than its user: its budget no larger than theirs, its routers among theirs.
 * Throws 400 otherwise.
 */
export function assertNarrower(limits: KeyLimits, user: UserRecord): void {
  if (limits.budget !== null && user.budget !== null && moneyMicros(limits.budget) > moneyMicros(user.budget))
    throw errors.invalidRequest(`budget: a key's budget cannot exceed its user's (${user.budget})`, 'budget');
  if (limits.allowed_routers !== null && user.allowed_routers !== null) {
    const outside = limits.allowed_routers.filter((router) => !user.allowed_routers!.includes(router));
    if (outside.length > 0)
      throw errors.invalidRequest(`allowed_routers: the user may not call ${outside.map((r) => `"${r}"`).join(', ')}`, 'allowed_routers');
  }
}

export const NewKeyBody = z.strictObject({
  ...KeyLimits.shape,
  name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').describe('What the key is for.'),
  expires_at: z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone, like 2030-01-31T00:00:00Z' })
    .nullable()
    .default(null)
    .describe('When the key stops working; null never.'),
});

/**
 * Makes a key for `user` from a request body, unless the user already has `maxActive` active
 * keys (409); the answer carries the secret as `key`, once. `check` vets the key's limits first
 * (a team admin's scope), after they are found narrower than the user's.
 */
export async function createKey(
  keys: Pick<UserKeys, 'addKey'>,
  user: UserRecord,
  body: unknown,
  now: number,
  maxActive: number,
  check: (limits: KeyLimits) => void = () => {},
): Promise<NewKeyView> {
  const { name, expires_at, ...limits } = parseWith(NewKeyBody, body);
  assertNarrower(limits, user);
  check(limits);
  const input = { name, expires_at };
  const expiresAt = input.expires_at === null ? null : new Date(input.expires_at);
  if (expiresAt !== null && expiresAt.getTime() <= now) {
    throw errors.invalidRequest('expires_at: must be in the future', 'expires_at');
  }
  const { secret, hash, hint } = generateKey();
  const record: ApiKeyRecord = {
    ...limits,
    id: `k-${randomBytes(6).toString('hex')}`,
    user_id: user.id,
    name: input.name,
    hash,
    hint,
    created_at: new Date(now).toISOString(),
    expires_at: expiresAt?.toISOString() ?? null,
    revoked_at: null,
  };
  // A user at maxActive keys: KeyLimitError, answered 409 key_limit_reached (error-map.ts).
  await keys.addKey(record, maxActive);
  return { ...keyView(record), key: secret };
}

const KeysQuery = z.strictObject({
  limit: PageLimit,
  after: z.string().min(1).max(200).optional(),
});

/**
 * One page of a user's keys (all of them, in the order they were made) for a list query:
 * `limit` keys after the key whose id is `after`. Keys are never removed, only revoked, so an
 * `after` that is not among them was not taken from this list.
 */
export async function keyPage(keys: readonly ApiKeyRecord[], query: unknown, ledger: Balances, now: number): Promise<KeyList> {
  const { limit, after } = parseWith(KeysQuery, query);
  const start = after === undefined ? 0 : keys.findIndex((key) => key.id === after) + 1;
  if (start === 0 && after !== undefined) throw errors.invalidRequest('after: must be the `next` of a previous page of this list', 'after');
  const page = keys.slice(start, start + limit);
  const data = await Promise.all(page.map((key) => keyViewWithSpend(key, ledger, now)));
  return { object: 'list', data, next: start + limit < keys.length ? page.at(-1)!.id : null };
}
