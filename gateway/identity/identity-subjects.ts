// Which users list a token's identity (issue 46): those listing it scoped by its issuer
// (`okta#ann@example.com`, core/resources/subjects.ts), and, for the issuer the identity file's
// `unscoped_subjects` names (by default the only issuer), those listing it as subjects were
// written before they were scoped (`ann@example.com`). An unscoped subject no issuer is named for
// is no one's: its token is refused (401), naming the user, rather than given a new user beside
// the one an admin made for it.
import { isScoped, scopedSubject } from '../../core/resources/subjects.ts';
import type { UserRecord } from '../../core/store/accounts.ts';
import { errors } from '../api/api-error.ts';
import type { IdentityConfig } from './identity-config.ts';
import type { IdentityDirectory } from './identity-directory.ts';
import type { TokenIdentity } from './token-identity.ts';

/** The issuer whose identities the unscoped subjects are; null for none. */
export function unscopedIssuer(config: Pick<IdentityConfig, 'issuers' | 'unscoped_subjects'>): string | null {
  if (config.unscoped_subjects !== undefined) return config.unscoped_subjects;
  return config.issuers.length === 1 ? config.issuers[0]!.name : null;
}

/** The ways users may list `identity`: scoped, and unscoped when its issuer is the one named for those. */
function writings(identity: TokenIdentity, unscoped: string | null): { readonly scoped: string; readonly bare: string | undefined } {
  // A claim that reads as scoped (`a#b`) is never matched unscoped: `a#b` listed is issuer a's.
  const bare = isScoped(identity.subject) ? undefined : identity.subject;
  return { scoped: scopedSubject(identity.issuer.name, identity.subject), bare: unscoped === identity.issuer.name ? bare : undefined };
}

/**
 * The ids of the users listing `identity`. When none does, the directory first catches up with
 * every change made before (another gateway may have just made the user), so a token is given a
 * new user only when no user made before it lists it.
 */
export async function usersListing(directory: IdentityDirectory, config: IdentityConfig, identity: TokenIdentity): Promise<string[]> {
  const unscoped = unscopedIssuer(config);
  const { scoped, bare } = writings(identity, unscoped);
  const read = async () => [
    ...new Set([...(await directory.usersOf(scoped)), ...(bare === undefined ? [] : await directory.usersOf(bare))]),
  ];
  let listing = await read();
  if (listing.length > 0) return listing;
  await directory.caughtUp();
  listing = await read();
  if (listing.length > 0 || unscoped !== null || isScoped(identity.subject)) return listing;
  const unclaimed = await directory.usersOf(identity.subject);
  if (unclaimed.length > 0)
    throw errors.invalidToken(
      `the user "${unclaimed.join('", "')}" lists its identity without its issuer: an admin must write it "${scoped}" (or name the issuer in the identity file's unscoped_subjects)`,
    );
  return listing;
}

/** Whether `user` lists `identity`, in one of the ways usersListing reads. */
export function listsIdentity(user: UserRecord, config: IdentityConfig, identity: TokenIdentity): boolean {
  const { scoped, bare } = writings(identity, unscopedIssuer(config));
  return (user.subjects ?? []).some((subject) => subject === scoped || subject === bare);
}
