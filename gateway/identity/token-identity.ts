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
  /** The caller's groups; undefined when the issuer's tokens name none (team and role are then the user's own). */
  readonly groups: readonly string[] | undefined;
  /** When the token expires (ms since the epoch); undefined when it never does. */
  readonly expiresAt: number | undefined;
}

/** The identity a token's claims give, or why they give none. */
export function identityOf(issuer: IssuerConfig, claims: JWTPayload): TokenIdentity | { readonly problem: string } {
  const subject = claims[issuer.user_claim];
  if (typeof subject !== 'string' || subject === '' || subject.length > 500)
    return { problem: `the token has no claim "${issuer.user_claim}" naming its user` };
  const named = claims[issuer.name_claim];
  const name = (typeof named === 'string' && named.trim() !== '' ? named.trim() : subject).slice(0, 200);
  return {
    issuer,
    subject,
    name,
    groups: groupsOf(issuer, claims),
    expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : undefined,
  };
}

/**
 * The groups claim's values (a list, or one group as text); for the Kubernetes API server, the
 * groups Kubernetes itself gives a service account: `system:serviceaccounts` and
 * `system:serviceaccounts:<namespace>`.
 */
function groupsOf(issuer: IssuerConfig, claims: JWTPayload): readonly string[] | undefined {
  if (issuer.kubernetes) {
    const namespace = (claims['kubernetes.io'] as { namespace?: unknown } | undefined)?.namespace;
    const own = typeof namespace === 'string' ? ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] : [];
    return issuer.groups_claim === null ? own : [...own, ...listOf(claims[issuer.groups_claim])];
  }
  if (issuer.groups_claim === null) return undefined;
  return listOf(claims[issuer.groups_claim]);
}

/** At most 1,000 groups are read: a token listing more is unusual, and each is looked up. */
const MAX_GROUPS = 1000;

function listOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return [];
  return value.slice(0, MAX_GROUPS).filter((group): group is string => typeof group === 'string' && group !== '');
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
