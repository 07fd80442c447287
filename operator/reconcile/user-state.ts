// The pure parts of reconciling a GatewayUser: which object owns a user id, whether the store's
// copy is current, what its API key Secret holds and looks like, and the status to write.
import { isDeepStrictEqual } from 'node:util';
import type { Balance } from '../../core/store/ledger.ts';
import { API_VERSION, type Condition, type GatewayUserStatus } from '../../core/resources/kubernetes/crd-schemas.ts';
import type { UserSpec } from '../../core/resources/user.ts';
import { formatScaled } from '../../core/money/decimal.ts';
import { MANAGED_BY, type CustomObject, type NamespacedObject, type SecretObject } from '../kube/resources.ts';
import { keyOf } from './desired-routing.ts';
import { condition, mergeConditions, type DesiredCondition } from './conditions.ts';
import type { StatusPatch } from './status.ts';

export type UserObject = CustomObject<GatewayUserStatus>;

/** Holds the user's Redis state until the operator has removed it. */
export const FINALIZER = 'tollgate.dev/redis-cleanup';
/** The field of the key Secret that holds the API key. */
export const API_KEY_FIELD = 'api-key';
/** Ids of the keys the operator registers; only those does it ever revoke. */
export const KEY_ID_PREFIX = 'k8s-';

export function keySecretName(user: UserObject): string {
  const named = (user.spec as { apiKeySecret?: { name?: unknown } } | undefined)?.apiKeySecret?.name;
  return typeof named === 'string' && named ? named : `${user.metadata.name}-api-key`;
}

/**
 * The user id is metadata.name, so GatewayUsers of one name in several namespaces share it: the
 * oldest (creationTimestamp, then namespace/name) owns it, as with router names. Objects being
 * deleted still count, so a newer one takes over only once the old one's state is gone.
 */
export function idOwner(users: readonly NamespacedObject[], id: string): string | undefined {
  const candidates = users.filter((user) => user.metadata.name === id);
  candidates.sort(
    (a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      keyOf(a.metadata).localeCompare(keyOf(b.metadata)),
  );
  return candidates[0] && keyOf(candidates[0].metadata);
}

const SPEC_FIELDS = [
  'id',
  'name',
  'role',
  'team',
  'priority',
  'budget',
  'budget_period',
  'budget_alerts',
  'soft_budget',
  'allowed_routers',
  'rate_limits',
] as const satisfies readonly (keyof UserSpec)[];

/** True when the store's record already says what the spec says (so no write, no cache flush on every gateway). */
export function sameUserSpec(stored: UserSpec, wanted: UserSpec): boolean {
  return SPEC_FIELDS.every((field) => isDeepStrictEqual(stored[field] ?? null, wanted[field] ?? null));
}

export type KeySecretContent = { ok: true; secret: string } | { ok: false; condition: DesiredCondition };

export function readKeySecret(secret: SecretObject): KeySecretContent {
  const encoded = secret.data?.[API_KEY_FIELD];
  const value = encoded === undefined ? '' : Buffer.from(encoded, 'base64').toString('utf8');
  if (!value)
    return {
      ok: false,
      condition: condition('ResolvedRefs', false, 'KeySecretInvalid', `Secret ${secret.metadata.name} has no "${API_KEY_FIELD}" entry`),
    };
  return { ok: true, secret: value };
}

/** The Secret that hands a new key to the user's owner; deleted with the GatewayUser (owner reference). */
export function keySecretObject(user: UserObject, name: string, secret: string) {
  const { name: owner, namespace, uid } = user.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: { ...MANAGED_BY, 'tollgate.dev/gateway-user': owner },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'GatewayUser', name: owner, uid, controller: true, blockOwnerDeletion: true }],
    },
    type: 'Opaque',
    data: { [API_KEY_FIELD]: Buffer.from(secret, 'utf8').toString('base64') },
  };
}

export interface Usage {
  readonly balance: Balance;
  /** Requests in the current budget period (in all, without one). */
  readonly requests: number;
  readonly lastRequestTime: string | undefined;
}

/** Money as decimal strings; a field that no longer applies is null, which the merge patch removes. */
export function usageStatus(usage: Usage) {
  const { budgetMicros, spentMicros, periodStart } = usage.balance;
  const remaining = budgetMicros === null ? null : budgetMicros > spentMicros ? budgetMicros - spentMicros : 0n;
  return {
    spent: formatScaled(spentMicros, 6),
    remaining: remaining === null ? null : formatScaled(remaining, 6),
    periodStart: periodStart?.toISOString() ?? null,
    requests: usage.requests,
    lastRequestTime: usage.lastRequestTime ?? null,
  };
}

/** The status of a GatewayUser (or GatewayTeam): `fields`, and the conditions merged into those it has. */
export function userStatus(
  user: CustomObject<{ conditions?: Condition[] | undefined }>,
  desired: readonly DesiredCondition[],
  fields: Record<string, unknown>,
  now: Date,
): StatusPatch {
  const generation = user.metadata.generation ?? 0;
  return { ...fields, observedGeneration: generation, conditions: mergeConditions(user.status?.conditions, desired, generation, now) };
}
