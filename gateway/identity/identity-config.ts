// Who may call the gateway with a token rather than an API key (issue 32): the issuers whose
// bearer JWTs are believed, which claims name the user and their groups, and how groups become a
// team and a role. Read at start-up from the file --identity-file names (YAML), in file mode and
// in Kubernetes mode alike (the chart writes it from its values); a change needs a restart.
import { readFile } from 'node:fs/promises';
import { load } from 'js-yaml';
import { z } from 'zod';
import { ResourceId } from '../../core/resources/fields.ts';
import { GroupName } from '../../core/resources/team.ts';
import { ROLES } from '../../core/resources/user.ts';
import { issuesToLines, yamlReason } from '../config/config-file.ts';
import { expansionProblem } from '../config/yaml-bounds.ts';
import { JWT_ALGORITHMS } from './jwt-verifier.ts';

/** A claim's name in a token's payload (`sub`, `email`, `groups`, `preferred_username`...). */
const ClaimName = z.string().min(1).max(100);

export const IssuerConfig = z
  .strictObject({
    name: ResourceId.describe('A short name for the issuer: usage records name the way a caller signed in `jwt-<name>`.'),
    issuer: z
      .string()
      .min(1)
      .max(500)
      .describe("The `iss` its tokens carry, exactly (for Kubernetes: `kubectl get --raw /.well-known/openid-configuration`'s issuer)."),
    kubernetes: z
      .boolean()
      .default(false)
      .describe(
        "The issuer is the cluster's API server: its keys are read from the API (`/openid/v1/jwks`) with the gateway's own credentials, and a service account's namespace is its group `system:serviceaccounts:<namespace>`.",
      ),
    jwks_url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        "Where the issuer's keys are; by default the `jwks_uri` of its discovery document (`<issuer>/.well-known/openid-configuration`).",
      ),
    audiences: z
      .array(z.string().min(1).max(500))
      .min(1)
      .max(20)
      .describe("Values of `aud` meant for this gateway: a token's `aud` must hold one."),
    algorithms: z
      .array(z.enum(JWT_ALGORITHMS))
      .min(1)
      .default(['RS256', 'ES256'])
      .describe('Signature algorithms accepted; asymmetric ones only.'),
    user_claim: ClaimName.default('sub').describe('The claim naming the user (`sub` or `email`, say).'),
    name_claim: ClaimName.default('name').describe("The claim holding the user's display name, for a user made at their first request."),
    groups_claim: ClaimName.nullable()
      .default(null)
      .describe("The claim listing the user's groups; null when the issuer's tokens carry none (team and role are then the user's own)."),
    clock_tolerance_seconds: z.number().int().min(0).max(300).default(30).describe('Leeway on `exp` and `nbf`, for clocks apart.'),
  })
  .superRefine((issuer, context) => {
    if (issuer.kubernetes && issuer.jwks_url !== undefined)
      context.addIssue({
        code: 'custom',
        path: ['jwks_url'],
        message: "not with kubernetes: true (the API server's keys are read from the API)",
      });
  });
export type IssuerConfig = z.output<typeof IssuerConfig>;

/** Where single sign-on answers: this path of the gateway (its public URL is `redirect_url`). */
export const CALLBACK_PATH = '/auth/callback';

export const SignInConfig = z.strictObject({
  issuer: ResourceId.describe('The name of the issuer (of `issuers`) people sign in with: its discovery document, claims and groups.'),
  client_id: z.string().min(1).max(500).describe('The client id the identity provider gave the gateway.'),
  redirect_url: z
    .url({ protocol: /^https?$/ })
    .refine((url) => new URL(url).pathname.endsWith(CALLBACK_PATH), `must be the gateway's public URL of ${CALLBACK_PATH}`)
    .describe(`The gateway's public URL of ${CALLBACK_PATH}, as registered with the identity provider.`),
  scopes: z
    .array(z.string().min(1).max(200))
    .max(30)
    .default(['openid', 'profile', 'email'])
    .refine((scopes) => scopes.includes('openid'), 'must include openid')
    .describe('Scopes asked for (add the one that gives the groups claim, `groups` on many providers).'),
  session_hours: z.number().min(0.05).max(720).default(12).describe('How long a session lasts after sign-in.'),
  key_sign_in: z
    .boolean()
    .default(true)
    .describe('false: the Playground offers single sign-on only, and the admin API refuses API keys (tokens and sessions only).'),
  cookie_secure: z
    .boolean()
    .default(true)
    .describe('Mark the cookies Secure (sent over HTTPS only, and http://localhost); false only for a gateway served over plain HTTP.'),
  max_pending_sign_ins: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10_000)
    .describe(
      'Sign-ins begun and not yet back from the provider (each kept ten minutes), at most, across the gateways; past it /auth/login answers 429.',
    ),
  max_pending_sign_ins_per_client: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(50)
    .describe('Of those, at most this many from one client address (an IPv6 address by its /64), as the gateway sees it.'),
});
export type SignInConfig = z.output<typeof SignInConfig>;

export const IdentityConfig = z
  .strictObject({
    issuers: z.array(IssuerConfig).min(1).max(20),
    sign_in: SignInConfig.optional().describe('Single sign-on (OpenID Connect) for the Playground and the admin API.'),
    admin_groups: z.array(GroupName).max(100).default([]).describe('Groups whose members are admins.'),
    unmapped: z
      .enum(['default', 'refuse'])
      .default('default')
      .describe('A token whose groups map to no team: `default` (the default team and role) or `refuse` (403).'),
    default_team: ResourceId.nullable().default(null).describe('The team of a user whose groups map to none; null for no team.'),
    default_role: z.enum(ROLES).default('user').describe('The role of a user whose groups give none.'),
    create_users: z
      .boolean()
      .default(true)
      .describe(
        'A token of a user the gateway does not know makes the user; false refuses it (users are then made by an admin, with `subjects`).',
      ),
    unscoped_subjects: ResourceId.nullable()
      .optional()
      .describe(
        "The issuer (its name) whose identities are the subjects written without `<issuer>#`, as they were before subjects were scoped; default: the only issuer, when there is one. null, or several issuers and none named: such a subject is no one's, and its token is refused.",
      ),
    max_new_users_per_minute: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(60)
      .describe(
        "Most users an issuer's tokens and sign-ins make a minute on one gateway (a burst of that many, then that pace); past it, a new identity gets 429 and people already known are served.",
      ),
    jwks_timeout_ms: z
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(5000)
      .describe('A fetch of an issuer’s keys is given up after this long.'),
    jwks_min_refresh_seconds: z
      .number()
      .int()
      .min(1)
      .max(3600)
      .default(60)
      .describe('At most one fetch of an issuer’s keys per this long for tokens naming a key not held.'),
    jwks_max_age_seconds: z
      .number()
      .int()
      .min(60)
      .max(86_400)
      .default(3600)
      .describe('Keys older than this are read again, in the background.'),
  })
  .superRefine((config, context) => {
    const names = new Set<string>();
    const issuers = new Set<string>();
    config.issuers.forEach((issuer, i) => {
      if (names.has(issuer.name))
        context.addIssue({ code: 'custom', path: ['issuers', i, 'name'], message: `"${issuer.name}" is named twice` });
      if (issuers.has(issuer.issuer))
        context.addIssue({ code: 'custom', path: ['issuers', i, 'issuer'], message: `"${issuer.issuer}" is configured twice` });
      names.add(issuer.name);
      issuers.add(issuer.issuer);
    });
    const unscoped = config.unscoped_subjects;
    if (typeof unscoped === 'string' && !names.has(unscoped))
      context.addIssue({ code: 'custom', path: ['unscoped_subjects'], message: `names no issuer of issuers ("${unscoped}")` });
    const signIn = config.sign_in;
    if (signIn) {
      const issuer = config.issuers.find((candidate) => candidate.name === signIn.issuer);
      if (!issuer)
        context.addIssue({ code: 'custom', path: ['sign_in', 'issuer'], message: `names no issuer of issuers ("${signIn.issuer}")` });
      else if (issuer.kubernetes)
        context.addIssue({ code: 'custom', path: ['sign_in', 'issuer'], message: 'people cannot sign in with the Kubernetes API server' });
    }
  });
export type IdentityConfig = z.output<typeof IdentityConfig>;
export type IdentityConfigInput = z.input<typeof IdentityConfig>;

/** The identity file is wrong: each line says where and why. */
export class IdentityConfigError extends Error {
  override name = 'IdentityConfigError';
  constructor(file: string, problems: readonly string[]) {
    super(`${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export async function loadIdentityConfig(file: string): Promise<IdentityConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new IdentityConfigError(file, [`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`]);
  }
  return parseIdentityConfig(file, text);
}

export function parseIdentityConfig(file: string, text: string): IdentityConfig {
  let raw: unknown;
  try {
    raw = load(text, { filename: file });
  } catch (error) {
    throw new IdentityConfigError(file, [`is not valid YAML: ${yamlReason(error)}`]);
  }
  const tooBig = expansionProblem(raw);
  if (tooBig) throw new IdentityConfigError(file, [tooBig]);
  const parsed = IdentityConfig.safeParse(raw ?? {});
  if (!parsed.success) throw new IdentityConfigError(file, issuesToLines(parsed.error.issues, []));
  return parsed.data;
}
