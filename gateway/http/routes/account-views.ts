// What the admin API and /v1/me show of users and API keys, and how a key is made. Money is a
// JSON number (exact to the 6 decimals of a cost); a key's secret appears once, in the answer
// that creates it, and its hash never.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { AccountStore, ApiKeyRecord, UserRecord } from '../../../core/store/accounts.ts';
import type { Ledger } from '../../../core/store/ledger.ts';
import { parseDecimal } from '../../../core/money/decimal.ts';
import { COST_SCALE, microsToNumber } from '../../metering/cost.ts';
import { errors } from '../api-error.ts';
import { PageLimit, parseWith } from '../payloads.ts';

export interface UserView {
  readonly object: 'user';
  readonly id: string;
  readonly name: string;
  readonly role: UserRecord['role'];
  readonly budget: number | null;
  readonly budget_period: UserRecord['budget_period'];
  readonly allowed_routers: string[] | null;
  readonly rate_limits: UserRecord['rate_limits'];
  /** Order of the user's waiting requests in queue mode, higher first. */
  readonly priority: number;
  readonly created_at: string;
  readonly spent: number;
  readonly reserved: number;
  /** Budget minus spent and reserved, never below 0; null for an unlimited user. */
  readonly remaining: number | null;
  readonly period_start: string | null;
  readonly period_end: string | null;
}

export async function userView(user: UserRecord, ledger: Ledger, now: number): Promise<UserView> {
  const balance = await ledger.balance(user.id, now);
  const budgetMicros = user.budget === null ? null : moneyMicros(user.budget);
  const left = budgetMicros === null ? null : budgetMicros - balance.spentMicros - balance.reservedMicros;
  return {
    object: 'user',
    id: user.id,
    name: user.name,
    role: user.role,
    budget: budgetMicros === null ? null : microsToNumber(budgetMicros),
    budget_period: user.budget_period,
    allowed_routers: user.allowed_routers,
    rate_limits: user.rate_limits,
    // Records written before priorities existed have none: the default.
    priority: user.priority ?? 0,
    created_at: user.created_at,
    spent: microsToNumber(balance.spentMicros),
    reserved: microsToNumber(balance.reservedMicros),
    remaining: left === null ? null : microsToNumber(left < 0n ? 0n : left),
    period_start: balance.periodStart?.toISOString() ?? null,
    period_end: balance.periodEnd?.toISOString() ?? null,
  };
}

/** A budget as stored (the canonical decimal text UserSpec produces) in micro-units. */
function moneyMicros(text: string): bigint {
  const parsed = parseDecimal(text, COST_SCALE);
  if (!parsed.ok) throw new Error(`stored budget ${parsed.reason}`); // UserSpec validated it
  return parsed.value;
}

export interface KeyView {
  readonly object: 'api_key';
  readonly id: string;
  readonly user_id: string;
  readonly name: string;
  readonly hint: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
}

/** Everything of a key but its hash. */
export function keyView(key: ApiKeyRecord): KeyView {
  return {
    object: 'api_key',
    id: key.id,
    user_id: key.user_id,
    name: key.name,
    hint: key.hint,
    created_at: key.created_at,
    expires_at: key.expires_at,
    revoked_at: key.revoked_at,
  };
}

export const NewKeyBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').describe('What the key is for.'),
  expires_at: z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone, like 2030-01-31T00:00:00Z' })
    .nullable()
    .default(null)
    .describe('When the key stops working; null never.'),
});

/**
 * Makes a key for `userId` from a request body, unless the user already has `maxActive` active
 * keys (409); the answer carries the secret as `key`, once.
 */
export async function createKey(
  accounts: AccountStore,
  userId: string,
  body: unknown,
  now: number,
  maxActive: number,
): Promise<KeyView & { key: string }> {
  const input = parseWith(NewKeyBody, body);
  const expiresAt = input.expires_at === null ? null : new Date(input.expires_at);
  if (expiresAt !== null && expiresAt.getTime() <= now) {
    throw errors.invalidRequest('expires_at: must be in the future', 'expires_at');
  }
  const { secret, hash, hint } = generateKey();
  const record: ApiKeyRecord = {
    id: `k-${randomBytes(6).toString('hex')}`,
    user_id: userId,
    name: input.name,
    hash,
    hint,
    created_at: new Date(now).toISOString(),
    expires_at: expiresAt?.toISOString() ?? null,
    revoked_at: null,
  };
  // A user at maxActive keys: KeyLimitError, answered 409 key_limit_reached (error-map.ts).
  await accounts.addKey(record, maxActive);
  return { ...keyView(record), key: secret };
}

const KeysQuery = z.strictObject({
  limit: PageLimit,
  after: z.string().min(1).max(200).optional(),
});

export interface KeyList {
  readonly object: 'list';
  readonly data: KeyView[];
  /** The id of the page's last key, to pass as `after` for the next page; null on the last page. */
  readonly next: string | null;
}

/**
 * One page of a user's keys (all of them, in the order they were made) for a list query:
 * `limit` keys after the key whose id is `after`. Keys are never removed, only revoked, so an
 * `after` that is not among them was not taken from this list.
 */
export function keyPage(keys: readonly ApiKeyRecord[], query: unknown): KeyList {
  const { limit, after } = parseWith(KeysQuery, query);
  const start = after === undefined ? 0 : keys.findIndex((key) => key.id === after) + 1;
  if (start === 0 && after !== undefined) throw errors.invalidRequest('after: must be the `next` of a previous page of this list', 'after');
  const page = keys.slice(start, start + limit);
  return { object: 'list', data: page.map(keyView), next: start + limit < keys.length ? page.at(-1)!.id : null };
}
