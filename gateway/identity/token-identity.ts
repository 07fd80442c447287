// What a verified token says of its caller: who they are (the issuer's user claim), their display
// name and their groups, read from the claims as the issuer's configuration names them; and the
// id of the user made for an identity no user lists.
import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { scopedSubject } from '../../core/resources/subjects.ts';
import type { IssuerConfig } from './identity-config.ts';

export interface TokenIdentity {
  readonly issuer: IssuerConfig;
  /** The user claim's value: what a user's `subjects` list. */
  readonly subject: string;
  readonly name: string;
  /**
   * The caller's groups; undefined when the issuer's tokens name none, or when this token leaves
   * its groups claim out (team and role are then the user's own).
   */
  readonly groups: readonly string[] | undefined;
  /** The issuer's tokens name groups but this one leaves the claim out (its scope was not asked for). */
  readonly groupsLeftOut?: true;
  /** When the token expires (ms since the epoch); undefined when it never does. */
  readonly expiresAt: number | undefined;
}

/** The identity a token's claims give, or why they give none (`bad_groups`: a groups claim that is not a list of groups). */
export function identityOf(
  issuer: IssuerConfig,
  claims: JWTPayload,
): TokenIdentity | { readonly problem: string; readonly refusal?: 'bad_groups' } {
  const subject = claims[issuer.user_claim];
  if (typeof subject !== 'string' || subject === '' || subject.length > 500)
    return { problem: `the token has no claim "${issuer.user_claim}" naming its user` };
  const groups = groupsOf(issuer, claims);
  if (groups === MALFORMED)
    return { problem: `the token's groups claim "${issuer.groups_claim}" is not a list of groups`, refusal: 'bad_groups' };
  const named = claims[issuer.name_claim];
  const name = (typeof named === 'string' && named.trim() !== '' ? named.trim() : subject).slice(0, 200);
  return {
    issuer,
    subject,
    name,
    groups,
    ...(groups === undefined && issuer.groups_claim !== null && { groupsLeftOut: true }),
    expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : undefined,
  };
}

/** A groups claim that is neither a list of groups nor one group. */
const MALFORMED = Symbol('malformed groups claim');

/**
 * The groups claim's values (a list, or one group as text); for the Kubernetes API server, the
 * groups Kubernetes itself gives a service account: `system:serviceaccounts` and
 * `system:serviceaccounts:<namespace>`. A claim left out is not an empty list: providers leave it
 * out when the scope giving it was not asked for (Dex, Keycloak's optional scopes), which says
 * nothing of the caller's groups.
 */
function groupsOf(issuer: IssuerConfig, claims: JWTPayload): readonly string[] | undefined | typeof MALFORMED {
  const claim = issuer.groups_claim;
  const listed = claim === null || !Object.hasOwn(claims, claim) ? undefined : listOf(claims[claim]);
  if (!issuer.kubernetes || listed === MALFORMED) return listed;
  const namespace = (claims['kubernetes.io'] as { namespace?: unknown } | undefined)?.namespace;
  const own = typeof namespace === 'string' ? ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] : [];
  return [...own, ...(listed ?? [])];
}

/** At most 1,000 groups are read: a token listing more is unusual, and each is looked up. */
const MAX_GROUPS = 1000;

function listOf(value: unknown): string[] | typeof MALFORMED {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (!Array.isArray(value) || !value.every((group) => typeof group === 'string')) return MALFORMED;
  return value.slice(0, MAX_GROUPS).filter((group) => group !== '');
}

/**
 * The id of the user made for the identity `subject` of the issuer named `issuer`: the two's
 * letters and digits joined by `-`, with 8 hex digits of the SHA-256 of `<issuer>#<subject>`, so
 * that two subjects written alike (`a.b@x.io`, `a-b@x.io`), and one subject of two issuers, never
 * become the same user (`okta-ann-example-com-1a2b3c4d`).
 */
export function userIdFor(issuer: string, subject: string): string {
  const hash = createHash('sha256').update(scopedSubject(issuer, subject)).digest('hex').slice(0, 8);
  const base = `${issuer}-${subject}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 54)
    .replace(/-+$/, '');
  return `${base}-${hash}`;
}
