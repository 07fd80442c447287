// The user an identity is (issue 32), for a bearer JWT (token-callers.ts) and a single sign-on
// (sign-in.ts) alike: the user listing the identity in `subjects`, or the one made for it at its
// first sign-in, with its team and role set from its groups.
//
// Groups decide, when the issuer's tokens carry them: the teams listing one of the caller's groups
// (oidc_groups; the first by id when several do) give the team, the identity configuration's
// admin_groups the admin role and the team's oidc_admin_groups the team_admin role. A caller whose
// groups map to nothing gets the default team and role, or is refused (unmapped: refuse). A user
// whose record says otherwise is brought in line (a write only when it differs), so a person
// taken out of a group loses what it gave at their next sign-in. When the tokens carry no groups,
// or a token leaves its groups claim out (a scope not asked for), the user's own team and role stand.
import type { Logger } from 'pino';
import { scopedSubject } from '../../core/resources/subjects.ts';
import { UserSpec, type Role } from '../../core/resources/user.ts';
import type { AccountStore, ApiKeyRecord, TeamRecord, UserRecord } from '../../core/store/accounts.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import type { Caller } from '../accounts/caller.ts';
import { errors } from '../api/api-error.ts';
import type { IdentityConfig, IssuerConfig } from './identity-config.ts';
import type { IdentityDirectory } from './identity-directory.ts';
import { NewUsers } from './new-users.ts';
import { listsIdentity, usersListing } from './identity-subjects.ts';
import { userIdFor, type TokenIdentity } from './token-identity.ts';

export type IdentityStore = Pick<AccountStore, 'getUser' | 'getTeam' | 'createUser' | 'updateUser' | 'onAccountChange'>;

/** A team and role the caller's groups give. */
interface Placement {
  readonly team: string | null;
  readonly role: Role;
}

export interface IdentityAccountsOptions {
  readonly config: IdentityConfig;
  readonly directory: IdentityDirectory;
  /** Where users are read, and written at once (a request must not wait for an operator). */
  readonly store: IdentityStore;
  /** Kubernetes mode: writes the user's GatewayUser after the store (AccountDirectory.publishUser). */
  readonly publish?: ((user: UserSpec) => Promise<void>) | undefined;
  readonly now: () => number;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  /** Told the issuer's name of each user made (a metric's label). */
  readonly onUserMade?: ((issuer: string) => void) | undefined;
}

export class IdentityAccounts {
  readonly #config: IdentityConfig;
  readonly #directory: IdentityDirectory;
  readonly #store: IdentityStore;
  readonly #publish: ((user: UserSpec) => Promise<void>) | undefined;
  readonly #now: () => number;
  readonly #log: Pick<Logger, 'info' | 'warn'>;
  readonly #newUsers: NewUsers;
  readonly #onUserMade: ((issuer: string) => void) | undefined;

  constructor(options: IdentityAccountsOptions) {
    this.#config = options.config;
    this.#directory = options.directory;
    this.#store = options.store;
    this.#publish = options.publish;
    this.#now = options.now;
    this.#log = options.log;
    this.#newUsers = new NewUsers(options.config.max_new_users_per_minute, options.now);
    this.#onUserMade = options.onUserMade;
  }

  /** The user `identity` is, made or brought in line with its groups; throws the ApiError a caller gets when it is none. */
  async userFor(identity: TokenIdentity): Promise<UserRecord> {
    const placement = identity.groups === undefined ? undefined : await this.#placementOf(identity.groups);
    return await this.#userOf(identity, placement);
  }

  /** The user of this id, as the store has it now. */
  user(id: string): Promise<UserRecord | undefined> {
    return this.#store.getUser(id);
  }

  /** The caller a user is, authenticated as `key`: with its team's record when it has one. */
  async callerOf(user: UserRecord, key: ApiKeyRecord): Promise<Caller> {
    const team = user.team === null ? undefined : await this.#store.getTeam(user.team);
    return { key, user, ...(team ? { team } : {}) };
  }

  /** The team and role `groups` give, or the defaults; refused (403) when they give nothing and unmapped groups are refused. */
  async #placementOf(groups: readonly string[]): Promise<Placement> {
    const config = this.#config;
    const teams = await this.#directory.teamsOf(groups);
    const admin = groups.some((group) => config.admin_groups.includes(group));
    const team: TeamRecord | undefined = teams.members[0] ?? teams.admins[0];
    if (team) {
      const teamAdmin = teams.admins.some((t) => t.id === team.id);
      return { team: team.id, role: admin ? 'admin' : teamAdmin ? 'team_admin' : 'user' };
    }
    if (admin) return { team: config.default_team, role: 'admin' };
    if (config.unmapped === 'refuse') throw errors.forbidden(UNMAPPED);
    return { team: config.default_team, role: config.default_role };
  }

  /** The user listing the identity, or the one made for it; its team and role brought in line with `placement`. */
  async #userOf(identity: TokenIdentity, placement: Placement | undefined): Promise<UserRecord> {
    const listing = await usersListing(this.#directory, this.#config, identity);
    if (listing.length > 1)
      throw errors.invalidToken(`more than one user of this gateway lists its identity (${listing.join(', ')}); an admin must keep one`);
    const id = listing[0] ?? userIdFor(identity.issuer.name, identity.subject);
    let user = await this.#store.getUser(id);
    if (user === undefined) {
      if (!this.#config.create_users) throw errors.invalidToken('no user of this gateway lists its identity in subjects');
      user = await this.#create(id, identity, placement);
    } else if (listing.length === 0 && !listsIdentity(user, this.#config, identity)) {
      // The id made from the identity is another user's, who does not list it.
      throw errors.invalidToken(`its identity would be the user "${id}", which does not list it in subjects`);
    }
    if (placement && (user.team !== placement.team || user.role !== placement.role)) {
      this.#log.info(
        `user "${user.id}": team ${user.team ?? 'none'} → ${placement.team ?? 'none'}, role ${user.role} → ${placement.role}, from the groups of a token of ${identity.issuer.name}`,
      );
      const { created_at: _, ...spec } = user;
      user = await this.#store.updateUser({ ...spec, subjects: spec.subjects ?? null, team: placement.team, role: placement.role });
      await this.#published(user);
    }
    return user;
  }

  /**
   * In Kubernetes mode, the user written to the store is written as its GatewayUser too, so that
   * the operator, putting the resource back into the store, keeps what the groups gave. A failure
   * is logged, not the caller's: the store has the user, and the next change publishes again.
   */
  async #published(user: UserRecord): Promise<void> {
    if (!this.#publish) return;
    const { created_at: _, ...spec } = user;
    try {
      await this.#publish(spec);
    } catch (error) {
      this.#log.warn(`user "${user.id}" is in the store but its GatewayUser could not be written: ${(error as Error).message}`);
    }
  }

  async #create(id: string, identity: TokenIdentity, placement: Placement | undefined): Promise<UserRecord> {
    // Without its groups, a token places a new user as no groups would: refused, when those are.
    if (identity.groupsLeftOut && this.#config.unmapped === 'refuse') throw errors.forbidden(groupsLeftOut(identity.issuer));
    this.#newUsers.take(identity.issuer.name);
    const spec = UserSpec.parse({
      id,
      name: identity.name,
      team: placement?.team ?? this.#config.default_team,
      role: placement?.role ?? this.#config.default_role,
      subjects: [scopedSubject(identity.issuer.name, identity.subject)],
    });
    try {
      const user = await this.#store.createUser(spec, new Date(this.#now()));
      this.#log.info(`user "${id}" made for a token of ${identity.issuer.name}`);
      this.#onUserMade?.(identity.issuer.name);
      await this.#published(user);
      return user;
    } catch (error) {
      // Made meanwhile by another request or gateway: theirs is the user.
      const made = error instanceof ConflictError ? await this.#store.getUser(id) : undefined;
      if (made) return made;
      throw error;
    }
  }
}

/** What a person new to the gateway whose token leaves its groups claim out is told (403) when unmapped groups are refused. */
function groupsLeftOut(issuer: IssuerConfig): string {
  return `Your token does not carry your groups (claim "${issuer.groups_claim}"), which place a person new to this gateway: the identity provider must be asked for them (a scope such as "groups"), or an admin must make your user`;
}

/** What a caller whose groups map to no team is told (403), on the API and on the sign-in page. */
export const UNMAPPED = "None of your groups gives you a team on this gateway: ask an admin to list one of them in a team's oidc_groups";
