// Which work-queue keys an informer event touches. The queue holds keys, never objects: the
// reconcile of a key reads the current state from the caches. One key, "routing", covers every
// router and provider (the routing state is rebuilt whole); each GatewayUser has its own.
import { isDeepStrictEqual } from 'node:util';
import type { InformerEvent } from '../core/kubernetes/informer.ts';
import { objectKey } from '../core/kubernetes/kube-client.ts';
import type { NamespacedObject, SecretObject } from './kube/resources.ts';
import { ROUTING_KEY, type ProviderObject } from './reconcile/routing.ts';
import { keySecretName, type UserObject } from './reconcile/user-state.ts';
import { USER_KEY_PREFIX } from './reconcile/users.ts';
import { TEAM_KEY_PREFIX, teamRefOf, type TeamObject } from './reconcile/teams.ts';

export const userKey = (user: NamespacedObject) => `${USER_KEY_PREFIX}${objectKey(user)}`;
export const teamKey = (team: NamespacedObject) => `${TEAM_KEY_PREFIX}${objectKey(team)}`;

/** A Secret matters if a provider names it (its key) or it is a user's key Secret; most match nothing. */
export function keysForSecret(secret: SecretObject, providers: readonly ProviderObject[], users: readonly UserObject[]): string[] {
  const { name, namespace } = secret.metadata;
  const keys: string[] = [];
  const named = (provider: ProviderObject) =>
    (provider.spec as { apiKeySecretRef?: { name?: unknown } } | undefined)?.apiKeySecretRef?.name === name;
  if (providers.some((provider) => provider.metadata.namespace === namespace && named(provider))) keys.push(ROUTING_KEY);
  for (const user of users) {
    if (user.metadata.namespace === namespace && keySecretName(user) === name) keys.push(userKey(user));
  }
  return keys;
}

/**
 * The user, every other GatewayUser of the same name (who owns the user id may have changed), and
 * the team it names (its member count).
 */
export function keysForUser(user: UserObject, users: readonly UserObject[], teams: readonly TeamObject[] = []): string[] {
  const keys = new Set([userKey(user)]);
  for (const other of users) if (other.metadata.name === user.metadata.name) keys.add(userKey(other));
  const team = teamRefOf(user);
  for (const t of teams) if (t.metadata.name === team && t.metadata.namespace === user.metadata.namespace) keys.add(teamKey(t));
  return [...keys];
}

/** The team, and every other GatewayTeam of the same name (who owns the team id may have changed). */
export function keysForTeam(team: TeamObject, teams: readonly TeamObject[]): string[] {
  const keys = new Set([teamKey(team)]);
  for (const other of teams) if (other.metadata.name === team.metadata.name) keys.add(teamKey(other));
  return [...keys];
}

/**
 * False for an update that changed nothing a reconcile reads: the operator's own status writes
 * (which would otherwise each cause one more pass) and identical objects from a resync (the
 * status period's pass heals what a missed event left behind).
 */
export function worthReconciling(event: InformerEvent<NamespacedObject>): boolean {
  if (event.type !== 'update') return true;
  const [before, after] = [event.previous.metadata, event.object.metadata];
  return (
    before.generation !== after.generation ||
    before.deletionTimestamp !== after.deletionTimestamp ||
    !isDeepStrictEqual(before.finalizers, after.finalizers)
  );
}
