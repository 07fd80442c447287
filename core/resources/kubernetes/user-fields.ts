// How a user (user.ts) and a team (team.ts) appear in a GatewayUser and a GatewayTeam: the field
// tables their spec schemas and their translation both ways are derived from (field-table.ts).
// Each field is the resource's own under its camelCase name, but for the id (metadata.name), the
// display name (metadata.name unless set), the team (a reference to a GatewayTeam) and money (a
// decimal string); a null of the resource is an absent field, as Kubernetes has no null.
import { z } from 'zod';
import { ModelName } from '../fields.ts';
import { TeamSpec } from '../team.ts';
import { PRIORITY_RANGE, UserSpec } from '../user.ts';
import { fieldTable, type Rule } from './field-table.ts';
import { MoneyString, ObjectName, UserObjectName } from './kube-fields.ts';

/** A GatewayUser's or GatewayTeam's budget, its period and alerts (`whose`: who spends it). */
function budgetRules(whose: string): Record<'budget' | 'budget_period' | 'budget_alerts' | 'soft_budget', Rule> {
  return {
    budget: {
      cr: 'budget',
      schema: MoneyString.optional().describe(
        `Most ${whose} may spend in a budget period (in all, without budgetPeriod), in the money of router prices, as a decimal string with at most 6 decimal places, e.g. "25.50". Absent: unlimited.`,
      ),
    },
    budget_period: {
      cr: 'budgetPeriod',
      describe: 'When spending resets, on UTC calendar boundaries (weeks start on Monday). Absent: it never resets.',
    },
    budget_alerts: {
      cr: 'budgetAlerts',
      schema: z
        .array(z.number().int().min(1).max(1000).meta({ format: 'int32' }))
        .max(10)
        .optional()
        .describe(
          'Percentages of the budget at which a BudgetThresholdReached event (and webhook) is raised, once per period each, e.g. [50, 80, 100]. Absent: none.',
        ),
    },
    soft_budget: {
      cr: 'softBudget',
      optional: true,
      omitIf: false,
      describe: 'true: the budget only alerts, it never refuses a request. Absent: false.',
    },
  };
}

/** Routers by the names clients call, as a list bounded for the API server. */
const allowedRouters = (description: string) => z.array(ModelName).max(256).optional().describe(description);

const METADATA_NAME = ['metadata', 'name'];

export const USER_FIELDS = fieldTable(
  UserSpec,
  {
    id: { kind: 'given', at: METADATA_NAME },
    name: { kind: 'object-name', cr: 'displayName', describe: 'Display name; defaults to metadata.name.' },
    role: 'role',
    ...budgetRules('the user'),
    allowed_routers: {
      cr: 'allowedRouters',
      schema: allowedRouters(
        'Routers the user may call, by the names clients call (ModelRouter spec.name, or metadata.name). Absent: all routers; empty: none.',
      ),
    },
    team: {
      kind: 'reference',
      cr: 'teamRef',
      schema: z
        .strictObject({ name: UserObjectName.describe('Name of the GatewayTeam, in the same namespace.') })
        .optional()
        .describe("The GatewayTeam the user belongs to: the team's budget and limits apply too. Absent: no team."),
    },
    priority: {
      cr: 'priority',
      describe: `Order of the user's requests waiting for a queue-mode router, from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}: higher first. Absent: the team's, or 0 without a team.`,
    },
    rate_limits: { cr: 'rateLimits', describe: "Replaces the routers' rate limits for this user. Absent: each router's own apply." },
    subjects: {
      cr: 'subjects',
      describe:
        "Identities that call as this user with a token, each <issuer>#<subject>: the name of an issuer of the gateway's identity file, #, and the value of its user claim (sub, or an email), e.g. kubernetes#system:serviceaccount:apps:summarizer. One written without <issuer># (before subjects were scoped) is the identity file's unscoped_subjects issuer's. A user listing subjects calls with tokens: the operator makes no API key for it unless apiKeySecret names a Secret. Absent: none.",
    },
  },
  {
    apiKeySecret: z
      .strictObject({ name: ObjectName.describe('Name of the Secret, in the same namespace.') })
      .optional()
      .describe(
        "The Secret the operator writes the user's API key to. Absent: <metadata.name>-api-key, or no key at all for a user listing subjects (it calls with tokens).",
      ),
  },
);

export const TEAM_FIELDS = fieldTable(TeamSpec, {
  id: { kind: 'given', at: METADATA_NAME },
  name: { kind: 'object-name', cr: 'displayName', describe: 'Display name; defaults to metadata.name.' },
  ...budgetRules("all the team's users together"),
  allowed_routers: {
    cr: 'allowedRouters',
    schema: allowedRouters("Routers the team's users may call (besides each user's own list). Absent: all routers; empty: none."),
  },
  // No default, and left out while 0: the API server would write `priority: 0` into every GatewayTeam.
  priority: {
    cr: 'priority',
    optional: true,
    omitIf: 0,
    describe: "Priority of the team's users who have none of their own (queue mode). Absent: 0.",
  },
  rate_limits: {
    cr: 'rateLimits',
    describe: "Limits on all the team's users together, per router, besides each user's own. Absent: none.",
  },
  oidc_groups: {
    cr: 'oidcGroups',
    describe:
      "Groups whose members belong to this team when they call with a token or sign in: a groups claim's values, or system:serviceaccounts:<namespace> for a Kubernetes service account's token. Absent: none.",
  },
  oidc_admin_groups: {
    cr: 'oidcAdminGroups',
    describe: "Groups whose members are this team's team admins when they call with a token or sign in. Absent: none.",
  },
});
