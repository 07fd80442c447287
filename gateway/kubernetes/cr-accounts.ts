// Kubernetes mode's account directory: the admin API creates, changes and deletes users and teams
// as GatewayUser and GatewayTeam resources (server-side apply, field manager `tollgate-gateway`),
// so the resources stay the single source of truth; the operator puts them into Redis, as it does
// for resources applied with kubectl. Reads are of Redis, and so are API keys: the keys made
// through the API live only there (a GatewayUser's own key is the operator's).
import { StoreAccounts } from '../accounts/store-accounts.ts';
import type { ResourceType } from '../../core/kubernetes/kube-client.ts';
import { teamToCR, userToCR } from '../../core/resources/kubernetes/translate.ts';
import type { TeamSpec } from '../../core/resources/team.ts';
import type { UserSpec } from '../../core/resources/user.ts';
import type { AccountStore, TeamRecord, UserRecord } from '../../core/store/accounts.ts';
import { ConflictError, NotFoundError } from '../../core/store/store-errors.ts';
import { kubeErrors, type NamespaceResources } from './namespace-resources.ts';

export const GATEWAY_USERS: ResourceType = { group: 'tollgate.dev', version: 'v1alpha1', plural: 'gatewayusers' };
export const GATEWAY_TEAMS: ResourceType = { group: 'tollgate.dev', version: 'v1alpha1', plural: 'gatewayteams' };

/** Reads and API keys are the store's, as in file mode (StoreAccounts); writes of users and teams are resources. */
export class CrAccounts extends StoreAccounts {
  /** The operator reconciles a GatewayUser and its GatewayTeam in either order. */
  override readonly requiresKnownTeam = false;
  readonly #resources: NamespaceResources;
  readonly #store: AccountStore;

  /** `store`: where the operator puts the resources, read here, and where the API's keys are kept. */
  constructor(resources: NamespaceResources, store: AccountStore) {
    super(store);
    this.#resources = resources;
    this.#store = store;
  }

  // -------------------------------------------------------------------------------------------
  // Users

  /** Taken: a user of that id in Redis, or a GatewayUser of that name the operator has not put there yet. */
  override async createUser(user: UserSpec, now: Date): Promise<UserRecord> {
    const taken = () => new ConflictError(`A user with id "${user.id}" already exists`);
    if (await this.#store.getUser(user.id)) throw taken();
    await kubeErrors(async () => {
      if (await this.#resources.get(GATEWAY_USERS, user.id)) throw taken();
      await this.#resources.apply(GATEWAY_USERS, 'GatewayUser', user.id, userToCR(user));
    });
    return { ...user, created_at: now.toISOString() };
  }

  /** A user in Redis without a GatewayUser (the bootstrap admin, say) gets one. */
  override async updateUser(user: UserSpec): Promise<UserRecord> {
    const current = await this.#store.getUser(user.id);
    if (!current) throw new NotFoundError(`user "${user.id}" does not exist`);
    await kubeErrors(() => this.#resources.apply(GATEWAY_USERS, 'GatewayUser', user.id, userToCR(user)));
    return { ...user, created_at: current.created_at };
  }

  /** The user's GatewayUser, as the store holds the user already (a user made or placed for a token). */
  async publishUser(user: UserSpec): Promise<void> {
    await kubeErrors(() => this.#resources.apply(GATEWAY_USERS, 'GatewayUser', user.id, userToCR(user)));
  }

  /** A user without a GatewayUser (the bootstrap admin, say) is deleted from Redis, as in file mode. */
  override async deleteUser(id: string): Promise<boolean> {
    return (await kubeErrors(() => this.#resources.delete(GATEWAY_USERS, id))) || (await this.#store.deleteUser(id));
  }

  // -------------------------------------------------------------------------------------------
  // Teams

  /** Taken: a team of that id in Redis, or a GatewayTeam of that name the operator has not put there yet. */
  override async createTeam(team: TeamSpec, now: Date): Promise<TeamRecord> {
    const taken = () => new ConflictError(`A team with id "${team.id}" already exists`);
    if (await this.#store.getTeam(team.id)) throw taken();
    await kubeErrors(async () => {
      if (await this.#resources.get(GATEWAY_TEAMS, team.id)) throw taken();
      await this.#resources.apply(GATEWAY_TEAMS, 'GatewayTeam', team.id, teamToCR(team));
    });
    return { ...team, created_at: now.toISOString() };
  }

  override async updateTeam(team: TeamSpec): Promise<TeamRecord> {
    const current = await this.#store.getTeam(team.id);
    if (!current) throw new NotFoundError(`team "${team.id}" does not exist`);
    await kubeErrors(() => this.#resources.apply(GATEWAY_TEAMS, 'GatewayTeam', team.id, teamToCR(team)));
    return { ...team, created_at: current.created_at };
  }

  /** A team in Redis without a GatewayTeam is deleted from Redis, as in file mode. */
  override async deleteTeam(id: string): Promise<boolean> {
    return (await kubeErrors(() => this.#resources.delete(GATEWAY_TEAMS, id))) || (await this.#store.deleteTeam(id));
  }
}
