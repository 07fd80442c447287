// A "team:<namespace>/<name>" key's reconcile: the GatewayTeam into the store the gateways share
// (its spec: budget, limits, allowed routers, priority), a finalizer that removes its Redis state
// when the resource goes, and its status: what the team spent and has left this period, and how
// many GatewayUsers name it in spec.teamRef. A team id is metadata.name, owned by the oldest
// GatewayTeam of that name, as user ids are (user-state.ts idOwner).
import { isDeepStrictEqual } from 'node:util';
import { applyObject, type KubeClient } from '../../core/kubernetes/kube-client.ts';
import type { Log } from '../../core/log.ts';
import { API_VERSION, type GatewayTeamStatus } from '../../core/resources/kubernetes/crd-schemas.ts';
import { describeProblems, teamFromCR } from '../../core/resources/kubernetes/translate.ts';
import type { TeamSpec } from '../../core/resources/team.ts';
import type { AccountStore } from '../../core/store/accounts.ts';
import type { Ledger } from '../../core/store/ledger.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import type { EventRecorder } from '../kube/events.ts';
import { GATEWAY_TEAMS, type Cache, type CustomObject } from '../kube/resources.ts';
import { condition, type DesiredCondition } from './conditions.ts';
import { keyOf } from './desired-routing.ts';
import { FINALIZER, idOwner, userStatus, type UserObject } from './user-state.ts';
import { writeStatus } from './write-status.ts';
import { formatScaled } from '../../core/money/decimal.ts';

export const TEAM_KEY_PREFIX = 'team:';

export type TeamObject = CustomObject<GatewayTeamStatus>;

export interface TeamStore {
  readonly accounts: Pick<AccountStore, 'getTeam' | 'createTeam' | 'updateTeam' | 'deleteTeam'>;
  readonly ledger: Pick<Ledger, 'balance'>;
}

export interface TeamDeps {
  readonly client: KubeClient;
  readonly teams: Cache<TeamObject>;
  /** To count each team's members. */
  readonly users: Cache<UserObject>;
  readonly store: TeamStore;
  readonly events: EventRecorder;
  readonly log: Log;
  readonly now?: () => Date;
}

/** `key`: namespace/name of the GatewayTeam. */
export async function reconcileTeam(deps: TeamDeps, key: string, signal?: AbortSignal): Promise<void> {
  const team = deps.teams.get(key);
  if (!team) return;
  const now = deps.now?.() ?? new Date();
  if (team.metadata.deletionTimestamp) return finalize(deps, team, signal);
  const translated = teamFromCR(team);
  if (!translated.ok) {
    await refuse(deps, team, condition('Accepted', false, 'InvalidSpec', describeProblems(translated.problems)), now, signal);
    return;
  }
  const owner = idOwner(deps.teams.list(), team.metadata.name);
  if (owner !== key) {
    const message = `Team id "${team.metadata.name}" is already used by GatewayTeam ${owner}, which is older; this team is not served`;
    await refuse(deps, team, condition('Accepted', false, 'NameConflict', message), now, signal);
    return;
  }
  await ensureFinalizer(deps.client, team, signal);
  await ensureStoreTeam(deps.store.accounts, translated.value, now);
  const balance = await deps.store.ledger.balance(`${TEAM_KEY_PREFIX}${team.metadata.name}`, now.getTime());
  const { budgetMicros, spentMicros, periodStart } = balance;
  const remaining = budgetMicros === null ? null : budgetMicros > spentMicros ? budgetMicros - spentMicros : 0n;
  const members = deps.users
    .list()
    .filter((user) => user.metadata.namespace === team.metadata.namespace && teamRefOf(user) === team.metadata.name).length;
  const conditions = [
    condition('Accepted', true, 'Accepted', 'The team is valid'),
    condition('Ready', true, 'Ready', "The team is in the gateways' store"),
  ];
  const fields = {
    spent: formatScaled(spentMicros, 6),
    remaining: remaining === null ? null : formatScaled(remaining, 6),
    periodStart: periodStart?.toISOString() ?? null,
    members,
  };
  await writeStatus(deps, GATEWAY_TEAMS, team, userStatus(team, conditions, fields, now), signal);
}

/** The team a GatewayUser's spec.teamRef names, if any. */
export function teamRefOf(user: UserObject): string | undefined {
  const name = (user.spec as { teamRef?: { name?: unknown } } | undefined)?.teamRef?.name;
  return typeof name === 'string' ? name : undefined;
}

async function refuse(deps: TeamDeps, team: TeamObject, accepted: DesiredCondition, now: Date, signal?: AbortSignal): Promise<void> {
  const notServed = condition('Ready', false, accepted.reason, 'Changes to this team are not applied until it is accepted');
  await writeStatus(deps, GATEWAY_TEAMS, team, userStatus(team, [accepted, notServed], {}, now), signal);
}

async function ensureStoreTeam(store: TeamStore['accounts'], spec: TeamSpec, now: Date): Promise<void> {
  const stored = await store.getTeam(spec.id);
  if (stored) {
    const { created_at: _createdAt, ...current } = stored;
    if (!isDeepStrictEqual(current, spec)) await store.updateTeam(spec);
    return;
  }
  try {
    await store.createTeam(spec, now);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    await store.updateTeam(spec);
  }
}

async function ensureFinalizer(client: KubeClient, team: TeamObject, signal?: AbortSignal): Promise<void> {
  if (team.metadata.finalizers?.includes(FINALIZER)) return;
  await applyObject(client, GATEWAY_TEAMS, teamMetadata(team, [FINALIZER]), { force: false, signal });
}

/** Deleted: the team's Redis state goes (if this object owned the id), then the finalizer. Its users stay, in no team. */
async function finalize(deps: TeamDeps, team: TeamObject, signal?: AbortSignal): Promise<void> {
  if (!team.metadata.finalizers?.includes(FINALIZER)) return;
  if (idOwner(deps.teams.list(), team.metadata.name) === keyOf(team.metadata)) {
    await deps.store.accounts.deleteTeam(team.metadata.name);
    deps.log.info({ team: team.metadata.name, object: keyOf(team.metadata) }, 'team removed from the store');
  }
  await applyObject(deps.client, GATEWAY_TEAMS, teamMetadata(team, []), { force: false, signal });
}

/** With the uid, as for users (users.ts userMetadata): never brings back a deleted resource. */
function teamMetadata(team: TeamObject, finalizers: string[]) {
  const { name, namespace, uid } = team.metadata;
  return {
    apiVersion: API_VERSION,
    kind: 'GatewayTeam',
    metadata: { name, namespace, uid, ...(finalizers.length > 0 ? { finalizers } : {}) },
  };
}
