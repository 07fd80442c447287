// The caller a bearer JWT stands for (issue 32): the token verified (jwt-verifier.ts), its
// identity read (token-identity.ts), the user listing that identity found, or made at its first
// token, and its team and role set from its groups. What comes out is a Caller like an API key's,
// so budgets, limits, priorities and allowed routers apply to it exactly as to a key's; its "key"
// is the token's issuer (`jwt-<issuer name>`), which carries no budget of its own.
//
// Groups decide, when the issuer's tokens carry them: the teams listing one of the caller's groups
// (oidc_groups; the first by id when several do) give the team, the identity configuration's
// admin_groups the admin role and the team's oidc_admin_groups the team_admin role. A user whose
// groups map to nothing gets the default team and role, or is refused (unmapped: refuse). A user
// whose record says otherwise is brought in line (a write only when it differs). When the tokens
// carry no groups, the user's own team and role stand.
//
// A caller is kept for its token until the token expires, at most `freshMs`, and forgotten at once
// when its user or team changes anywhere (the store's change notices), as API keys are
// (accounts/key-cache.ts): most requests verify nothing and read nothing.
import type { Logger } from 'pino';
import { UserSpec, type Role } from '../../core/resources/user.ts';
import type { AccountStore, ApiKeyRecord, TeamRecord, UserRecord } from '../../core/store/accounts.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import type { Caller } from '../accounts/caller.ts';
import { errors } from '../api/api-error.ts';
import type { IdentityConfig } from './identity-config.ts';
import type { IdentityDirectory } from './identity-directory.ts';
import type { JwtRefusal, JwtVerifier } from './jwt-verifier.ts';
import { identityOf, userIdFor, type TokenIdentity } from './token-identity.ts';

type CallerStore = Pick<AccountStore, 'getUser' | 'getTeam' | 'createUser' | 'updateUser' | 'onAccountChange'>;

export interface TokenCallersOptions {
  readonly verifier: JwtVerifier;
  readonly config: IdentityConfig;
  readonly directory: IdentityDirectory;
  readonly store: CallerStore;
  readonly now: () => number;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  /** Longest a caller is kept for its token (ms). */
  readonly freshMs?: number;
  readonly maxEntries?: number;
}

/** What a refused token is told, by why it was refused; `keys_unavailable` is a 503 instead. */
const REFUSALS: Record<Exclude<JwtRefusal, 'keys_unavailable'>, string> = {
  malformed: 'it is not a valid JWT',
  unknown_issuer: 'its issuer (iss) is not one this gateway trusts',
  bad_signature: 'its signature does not verify',
  algorithm_not_allowed: 'it is signed with an algorithm this gateway does not accept',
  unknown_key: 'it is signed with a key its issuer does not publish',
  expired: 'it has expired',
  not_yet_valid: 'it is not valid yet',
  wrong_audience: 'it is not meant for this gateway (aud)',
};

/** A team and role the caller's groups give. */
interface Placement {
  readonly team: string | null;
  readonly role: Role;
}

export class TokenCallers {
  readonly #options: TokenCallersOptions;
  readonly #entries = new Map<string, { readonly caller: Caller; readonly until: number }>();
  readonly #freshMs: number;
  readonly #maxEntries: number;
  readonly #unsubscribe: () => void;

  constructor(options: TokenCallersOptions) {
    this.#options = options;
    this.#freshMs = options.freshMs ?? 30_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#unsubscribe = options.store.onAccountChange((subject) => this.#drop(subject));
  }

  /** The caller `token` stands for; throws the ApiError a caller is answered with when it stands for none. */
  async callerFor(token: string): Promise<Caller> {
    const now = this.#options.now();
    const entry = this.#entries.get(token);
    if (entry && now < entry.until) return entry.caller;
    this.#entries.delete(token);
    const verdict = await this.#options.verifier.verify(token);
    if (!verdict.ok)
      throw verdict.refusal === 'keys_unavailable' ? errors.identityUnavailable() : errors.invalidToken(REFUSALS[verdict.refusal]);
    const issuer = this.#options.config.issuers.find((candidate) => candidate.issuer === verdict.issuer.issuer)!;
    const identity = identityOf(issuer, verdict.claims);
    if ('problem' in identity) throw errors.invalidToken(identity.problem);
    const caller = await this.#callerOf(identity);
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(token, { caller, until: Math.min(identity.expiresAt ?? Number.POSITIVE_INFINITY, now + this.#freshMs) });
    return caller;
  }

  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
  }

  async #callerOf(identity: TokenIdentity): Promise<Caller> {
    const placement = identity.groups === undefined ? undefined : await this.#placementOf(identity.groups);
    const user = await this.#userOf(identity, placement);
    const team = user.team === null ? undefined : await this.#options.store.getTeam(user.team);
    return { key: tokenKey(identity, user), user, ...(team ? { team } : {}) };
  }

  /** The team and role `groups` give, or the defaults; refused (403) when they give nothing and unmapped groups are refused. */
  async #placementOf(groups: readonly string[]): Promise<Placement> {
    const { config } = this.#options;
    const teams = await this.#options.directory.teamsOf(groups);
    const admin = groups.some((group) => config.admin_groups.includes(group));
    const team: TeamRecord | undefined = teams.members[0] ?? teams.admins[0];
    if (team) {
      const teamAdmin = teams.admins.some((t) => t.id === team.id);
      return { team: team.id, role: admin ? 'admin' : teamAdmin ? 'team_admin' : 'user' };
    }
    if (admin) return { team: config.default_team, role: 'admin' };
    if (config.unmapped === 'refuse')
      throw errors.forbidden(
        "None of your groups gives you a team on this gateway: ask an admin to list one of them in a team's oidc_groups",
      );
    return { team: config.default_team, role: config.default_role };
  }

  /** The user listing the identity, or the one made for it; its team and role brought in line with `placement`. */
  async #userOf(identity: TokenIdentity, placement: Placement | undefined): Promise<UserRecord> {
    const { directory, store, config } = this.#options;
    const listing = await directory.usersOf(identity.subject);
    if (listing.length > 1)
      throw errors.invalidToken(`more than one user of this gateway lists its identity (${listing.join(', ')}); an admin must keep one`);
    const id = listing[0] ?? userIdFor(identity.subject);
    let user = await store.getUser(id);
    if (user === undefined) {
      if (!config.create_users) throw errors.invalidToken('no user of this gateway lists its identity in subjects');
      user = await this.#create(id, identity, placement);
    } else if (listing.length === 0 && !(user.subjects ?? []).includes(identity.subject)) {
      // The id made from the identity is another user's, who does not list it.
      throw errors.invalidToken(`its identity would be the user "${id}", which does not list it in subjects`);
    }
    if (placement && (user.team !== placement.team || user.role !== placement.role)) {
      this.#options.log.info(
        `user "${user.id}": team ${user.team ?? 'none'} → ${placement.team ?? 'none'}, role ${user.role} → ${placement.role}, from the groups of a token of ${identity.issuer.name}`,
      );
      const { created_at: _, ...spec } = user;
      user = await store.updateUser({ ...spec, subjects: spec.subjects ?? null, team: placement.team, role: placement.role });
    }
    return user;
  }

  async #create(id: string, identity: TokenIdentity, placement: Placement | undefined): Promise<UserRecord> {
    const { store, config } = this.#options;
    const spec = UserSpec.parse({
      id,
      name: identity.name,
      team: placement?.team ?? config.default_team,
      role: placement?.role ?? config.default_role,
      subjects: [identity.subject],
    });
    try {
      const user = await store.createUser(spec, new Date(this.#options.now()));
      this.#options.log.info(`user "${id}" made for a token of ${identity.issuer.name}`);
      return user;
    } catch (error) {
      // Made meanwhile by another request or gateway: theirs is the user.
      const made = error instanceof ConflictError ? await store.getUser(id) : undefined;
      if (made) return made;
      throw error;
    }
  }

  /** Forgets the callers of a user, or of a team's users (`team:<id>`), or all when null. */
  #drop(subject: string | null): void {
    if (subject === null) {
      this.#entries.clear();
      return;
    }
    const team = subject.startsWith('team:') ? subject.slice(5) : undefined;
    for (const [token, { caller }] of this.#entries)
      if (team === undefined ? caller.user.id === subject : caller.user.team === team) this.#entries.delete(token);
  }
}

/**
 * The caller's "key": how it authenticated, for usage records (`key_id` `jwt-<issuer>`); no
 * budget, limits or routers of its own, and valid as long as the token.
 */
function tokenKey(identity: TokenIdentity, user: UserRecord): ApiKeyRecord {
  return {
    id: `jwt-${identity.issuer.name}`,
    user_id: user.id,
    name: `token of ${identity.issuer.name}`,
    hash: '',
    hint: '',
    created_at: user.created_at,
    expires_at: identity.expiresAt === undefined ? null : new Date(identity.expiresAt).toISOString(),
    revoked_at: null,
  };
}
