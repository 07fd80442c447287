// A "user:<namespace>/<name>" key's reconcile: the GatewayUser into the store the gateways share
// (its spec, its API key's hash), its key Secret (none for a user that calls with tokens), a finalizer that removes the Redis state when
// the resource goes, and its status with usage read back from the store.
import { applyObject, type KubeClient } from '../../core/kubernetes/kube-client.ts';
import type { Log } from '../../core/log.ts';
import { API_VERSION } from '../../core/resources/kubernetes/crd-schemas.ts';
import { describeProblems, userFromCR } from '../../core/resources/kubernetes/translate.ts';
import type { UserSpec } from '../../core/resources/user.ts';
import type { AccountStore } from '../../core/store/accounts.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import type { EventRecorder } from '../kube/events.ts';
import { GATEWAY_USERS, type Cache, type SecretObject } from '../kube/resources.ts';
import { condition, type DesiredCondition } from './conditions.ts';
import { keyOf } from './desired-routing.ts';
import { ensureApiKey, TOKENS_ONLY, withoutApiKey, type KeyStore } from './user-keys.ts';
import { readUsage, type UsageReader } from './user-usage.ts';
import { FINALIZER, idOwner, keySecretName, sameUserSpec, usageStatus, userStatus, type UserObject } from './user-state.ts';
import { writeStatus } from './write-status.ts';

export const USER_KEY_PREFIX = 'user:';

/** The parts of the store the user reconciler uses: accounts (users and keys), the ledger and usage (for status). */
export interface UserStore extends UsageReader {
  readonly accounts: Pick<AccountStore, 'getUser' | 'createUser' | 'updateUser' | 'deleteUser'> & KeyStore;
}

export interface UserDeps {
  readonly client: KubeClient;
  readonly users: Cache<UserObject>;
  readonly secrets: Cache<SecretObject>;
  readonly store: UserStore;
  readonly events: EventRecorder;
  readonly log: Log;
  readonly now?: () => Date;
}

/** `key`: namespace/name of the GatewayUser. */
export async function reconcileUser(deps: UserDeps, key: string, signal?: AbortSignal): Promise<void> {
  const user = deps.users.get(key);
  if (!user) return; // gone: its finalizer already cleaned up
  const now = deps.now?.() ?? new Date();
  if (user.metadata.deletionTimestamp) return finalize(deps, user, signal);
  const translated = userFromCR(user);
  if (!translated.ok) {
    const message = describeProblems(translated.problems);
    await refuse(deps, user, condition('Accepted', false, 'InvalidSpec', message), now, signal);
    return;
  }
  const owner = idOwner(deps.users.list(), user.metadata.name);
  if (owner !== key) {
    const message = `User id "${user.metadata.name}" is already used by GatewayUser ${owner}, which is older; this user is not served`;
    await refuse(deps, user, condition('Accepted', false, 'NameConflict', message), now, signal);
    return;
  }
  await ensureFinalizer(deps.client, user, signal);
  await ensureStoreUser(deps.store.accounts, translated.value, now);
  const tokensOnly = (translated.value.subjects?.length ?? 0) > 0 && !namesKeySecret(user);
  const keyCondition = tokensOnly
    ? await withoutApiKey(deps.store.accounts, user.metadata.name, now)
    : await ensureApiKey({ ...deps, store: deps.store.accounts }, user, now, signal);
  const usage = usageStatus(await readUsage(deps.store, user.metadata.name, now, user.status));
  const conditions = [condition('Accepted', true, 'Accepted', 'The user is valid'), keyCondition, ready(keyCondition)];
  await writeStatus(
    deps,
    GATEWAY_USERS,
    user,
    userStatus(user, conditions, tokensOnly ? usage : { ...usage, apiKeySecretName: keySecretName(user) }, now),
    signal,
  );
}

function ready(keyCondition: DesiredCondition): DesiredCondition {
  if (keyCondition.status !== 'True')
    return condition('Ready', false, keyCondition.reason, "The user exists in the gateways' store, but has no usable API key");
  if (keyCondition.reason === TOKENS_ONLY)
    return condition('Ready', true, 'Ready', "The user is in the gateways' store; it calls with tokens");
  return condition('Ready', true, 'Ready', "The user and its API key are in the gateways' store");
}

/** The GatewayUser names its key Secret (spec.apiKeySecret): it gets a key even when it lists subjects. */
function namesKeySecret(user: UserObject): boolean {
  return (user.spec as { apiKeySecret?: unknown } | undefined)?.apiKeySecret !== undefined;
}

/** Invalid or in conflict: the store is not touched (a valid earlier spec stays in force there). */
async function refuse(deps: UserDeps, user: UserObject, accepted: DesiredCondition, now: Date, signal?: AbortSignal): Promise<void> {
  const notServed = condition('Ready', false, accepted.reason, 'Changes to this user are not applied until it is accepted');
  await writeStatus(deps, GATEWAY_USERS, user, userStatus(user, [accepted, notServed], {}, now), signal);
}

async function ensureStoreUser(store: UserStore['accounts'], spec: UserSpec, now: Date): Promise<void> {
  const stored = await store.getUser(spec.id);
  if (stored && sameUserSpec(stored, spec)) return;
  if (stored) {
    await store.updateUser(spec);
    return;
  }
  try {
    await store.createUser(spec, now);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    await store.updateUser(spec); // created meanwhile: make it ours
  }
}

/**
 * Server-side apply of the finalizer alone: the operator owns that list item and nothing else of
 * the resource, so applying without it later removes exactly it (finalizers are a set).
 */
async function ensureFinalizer(client: KubeClient, user: UserObject, signal?: AbortSignal): Promise<void> {
  if (user.metadata.finalizers?.includes(FINALIZER)) return;
  await applyObject(client, GATEWAY_USERS, userMetadata(user, [FINALIZER]), { force: false, signal });
}

/** Deleted: the user's Redis state goes (if this object owned the id), then the finalizer. */
async function finalize(deps: UserDeps, user: UserObject, signal?: AbortSignal): Promise<void> {
  if (!user.metadata.finalizers?.includes(FINALIZER)) return;
  if (idOwner(deps.users.list(), user.metadata.name) === keyOf(user.metadata)) {
    await deps.store.accounts.deleteUser(user.metadata.name);
    deps.log.info({ user: user.metadata.name, object: keyOf(user.metadata) }, 'user removed from the store');
  }
  await applyObject(deps.client, GATEWAY_USERS, userMetadata(user, []), { force: false, signal });
}

/**
 * With the uid: an apply creates what does not exist, and this one must never bring back a
 * resource deleted since the cache saw it (the API server answers 409 instead), nor touch a new
 * one of the same name (422). Either way the key is retried and finds the cache up to date.
 */
function userMetadata(user: UserObject, finalizers: string[]) {
  const { name, namespace, uid } = user.metadata;
  return {
    apiVersion: API_VERSION,
    kind: 'GatewayUser',
    metadata: { name, namespace, uid, ...(finalizers.length > 0 ? { finalizers } : {}) },
  };
}
