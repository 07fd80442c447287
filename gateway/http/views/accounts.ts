// What the admin API and /v1/me answer about users, teams and API keys: one zod schema per shape,
// registered as the routes' response schemas (checked before an answer is sent: checked-json.ts)
// and the source of the Playground's types (web/api.ts imports them, type-only). Every object is
// strict: a field the schema does not name (a key's hash, say) fails the check instead of
// reaching the caller. Only zod, core/resources and lists.ts are imported, so the Playground's
// type check can read this file.
import { z } from 'zod';
import { BUDGET_PERIODS } from '../../../core/resources/kinds.ts';
import { RateLimitPolicy } from '../../../core/resources/limits.ts';
import { ROLES } from '../../../core/resources/user.ts';
import { pageOf } from './lists.ts';

/** Money: a JSON number, exact to the 6 decimals of a cost. */
const Amount = z.number();
const IsoTime = z.string();

/** Where a budget (a user's, a key's, a team's) stands this period. */
export const SpendView = z.strictObject({
  spent: Amount,
  reserved: Amount,
  remaining: Amount.nullable().describe('Budget minus spent and reserved, never below 0; null for an unlimited one.'),
  period_start: IsoTime.nullable(),
  period_end: IsoTime.nullable(),
});
export type SpendView = z.output<typeof SpendView>;

/** A budget and what goes with it, as users, teams and keys show them. */
const budgetShown = {
  budget: Amount.nullable().describe('null: unlimited.'),
  budget_period: z.enum(BUDGET_PERIODS).nullable(),
  allowed_routers: z.array(z.string()).nullable(),
  rate_limits: RateLimitPolicy.nullable(),
};

export const UserView = z.strictObject({
  object: z.literal('user'),
  id: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  team: z.string().nullable(),
  ...budgetShown,
  priority: z.number().nullable().describe("Order of the user's waiting requests in queue mode, higher first; null takes the team's."),
  subjects: z
    .array(z.string())
    .nullable()
    .describe('Identities that call as this user with a token, each `<issuer>#<subject>` (docs/identity.md); null for none.'),
  created_at: IsoTime,
  ...SpendView.shape,
});
export type UserView = z.output<typeof UserView>;

export const UserList = pageOf(UserView);
export type UserList = z.output<typeof UserList>;

/** A key as its user's team shows it. */
export const TeamKeyView = z.strictObject({
  id: z.string(),
  user_id: z.string(),
  name: z.string(),
  hint: z.string(),
  budget: Amount.nullable(),
});
export type TeamKeyView = z.output<typeof TeamKeyView>;

export const TeamView = z.strictObject({
  object: z.literal('team'),
  id: z.string(),
  name: z.string(),
  ...budgetShown,
  priority: z.number(),
  oidc_groups: z
    .array(z.string())
    .nullable()
    .describe('Groups whose members belong to the team when they call with a token; null for none.'),
  oidc_admin_groups: z.array(z.string()).nullable().describe("Groups whose members are the team's team admins; null for none."),
  created_at: IsoTime,
  members: z.array(z.string()).describe("Ids of the team's users."),
  keys: z.array(TeamKeyView).describe("Their keys still in use (neither revoked nor expired), with each key's own budget."),
  ...SpendView.shape,
});
export type TeamView = z.output<typeof TeamView>;

export const TeamList = pageOf(TeamView);
export type TeamList = z.output<typeof TeamList>;

/** Everything of an API key but its hash (and its secret, shown once: NewKeyView). */
export const KeyView = z.strictObject({
  object: z.literal('api_key'),
  id: z.string(),
  user_id: z.string(),
  name: z.string(),
  hint: z.string(),
  created_at: IsoTime,
  expires_at: IsoTime.nullable(),
  revoked_at: IsoTime.nullable(),
  ...budgetShown,
  spend: SpendView.optional().describe("Where the key's own budget stands; absent for a key without budget or limits."),
});
export type KeyView = z.output<typeof KeyView>;

/** The answer that creates a key: the only one that carries its secret. */
export const NewKeyView = KeyView.extend({ key: z.string().describe('The secret, shown this once.') });
export type NewKeyView = z.output<typeof NewKeyView>;

export const KeyList = pageOf(KeyView);
export type KeyList = z.output<typeof KeyList>;

/** GET /v1/me: the caller, and the key they called with. */
export const MeView = UserView.extend({ key: KeyView });
export type MeView = z.output<typeof MeView>;

export const DeletedUser = z.strictObject({ object: z.literal('user'), id: z.string(), deleted: z.literal(true) });
export const DeletedTeam = z.strictObject({ object: z.literal('team'), id: z.string(), deleted: z.literal(true) });
