// A GatewayUser's API key: the Secret that holds it (created here with a new key when missing)
// and its hash in the store. Only the hash goes to Redis. A key the operator registered that is
// no longer the Secret's (the Secret was deleted and a new key made) is revoked.
import { FIELD_MANAGER, isStatus, resourcePath, type KubeClient } from '../../core/kubernetes/kube-client.ts';
import type { Log } from '../../core/log.ts';
import { generateKey, hashKey, hintOf } from '../../core/accounts/api-keys.ts';
import type { AccountStore } from '../../core/store/accounts.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import { SECRETS, type Cache, type SecretObject } from '../kube/resources.ts';
import { condition, type DesiredCondition } from './conditions.ts';
import { KEY_ID_PREFIX, keySecretName, keySecretObject, readKeySecret, type UserObject } from './user-state.ts';

export type KeyStore = Pick<AccountStore, 'addKey' | 'findKey' | 'listKeys' | 'revokeKey'>;

export interface KeyDeps {
  readonly client: KubeClient;
  readonly secrets: Cache<SecretObject>;
  readonly store: KeyStore;
  readonly log: Log;
}

/** Makes the key Secret exist and its key be the user's; returns the ResolvedRefs condition. */
export async function ensureApiKey(deps: KeyDeps, user: UserObject, now: Date, signal?: AbortSignal): Promise<DesiredCondition> {
  const name = keySecretName(user);
  const secret = (await findSecret(deps, user.metadata.namespace, name, signal)) ?? (await createKeySecret(deps, user, name, now, signal));
  const content = readKeySecret(secret);
  if (!content.ok) return content.condition;
  const registered = await registerKey(deps.store, user.metadata.name, secret, content.secret, now);
  if (registered.status !== 'True') return registered;
  await revokeOthers(deps.store, user.metadata.name, hashKey(content.secret), now);
  return registered;
}

/** The informer's copy, or, when it has none yet (one just created), the server's. */
async function findSecret(deps: KeyDeps, namespace: string, name: string, signal?: AbortSignal): Promise<SecretObject | undefined> {
  const cached = deps.secrets.get(`${namespace}/${name}`);
  if (cached) return cached;
  try {
    return await deps.client.request<SecretObject>({ path: resourcePath(SECRETS, { namespace, name }), signal });
  } catch (error) {
    if (isStatus(error, 404)) return undefined;
    throw error;
  }
}

/**
 * A new key: its hash goes to the store first, so the key works as soon as someone can read it.
 * A create, not an apply: it must fail rather than replace a key that exists (409), and a hash
 * registered for nothing in that case is revoked on the next pass.
 */
async function createKeySecret(deps: KeyDeps, user: UserObject, name: string, now: Date, signal?: AbortSignal): Promise<SecretObject> {
  const key = generateKey();
  const { namespace } = user.metadata;
  await deps.store.addKey(keyRecord(user.metadata.name, `${namespace}/${name}`, key.hash, key.hint, now));
  const created = await deps.client.request<SecretObject>({
    method: 'POST',
    path: resourcePath(SECRETS, { namespace }),
    query: { fieldManager: FIELD_MANAGER },
    body: keySecretObject(user, name, key.secret),
    signal,
  });
  deps.log.info({ user: user.metadata.name, secret: `${namespace}/${name}` }, 'API key Secret created');
  return created;
}

async function registerKey(store: KeyStore, userId: string, secret: SecretObject, value: string, now: Date): Promise<DesiredCondition> {
  const where = `${secret.metadata.namespace}/${secret.metadata.name}`;
  const hash = hashKey(value);
  const found = await store.findKey(hash);
  if (found && found.user.id !== userId)
    return condition('ResolvedRefs', false, 'KeyInUse', `The key in Secret ${secret.metadata.name} belongs to another user`);
  if (found?.key.revoked_at)
    return condition(
      'ResolvedRefs',
      false,
      'KeyRevoked',
      `The key in Secret ${secret.metadata.name} was revoked; delete the Secret to get a new one`,
    );
  if (!found) {
    try {
      await store.addKey(keyRecord(userId, where, hash, hintOf(value), now));
    } catch (error) {
      // Registered meanwhile by another pass; the next one checks whose it is.
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  return condition('ResolvedRefs', true, 'ResolvedRefs', `The API key is in Secret ${secret.metadata.name}`);
}

/** Revokes the keys the operator registered for the user but the one of `currentHash` (all of them without it). */
async function revokeOthers(store: KeyStore, userId: string, currentHash: string | undefined, now: Date): Promise<void> {
  for (const key of await store.listKeys(userId)) {
    if (key.id.startsWith(KEY_ID_PREFIX) && key.hash !== currentHash && !key.revoked_at) await store.revokeKey(userId, key.id, now);
  }
}

/**
 * A user that calls with tokens (it lists `subjects`, and names no key Secret) gets no API key: a
 * static key it never uses could only leak. A key the operator registered before is revoked (its
 * Secret, owned by the GatewayUser, stays until the user goes).
 */
export async function withoutApiKey(store: KeyStore, userId: string, now: Date): Promise<DesiredCondition> {
  await revokeOthers(store, userId, undefined, now);
  return condition(
    'ResolvedRefs',
    true,
    TOKENS_ONLY,
    'The user calls with tokens of its spec.subjects: no API key is made (name spec.apiKeySecret for one)',
  );
}

/** The ResolvedRefs reason of a user that calls with tokens only. */
export const TOKENS_ONLY = 'TokensOnly';

function keyRecord(userId: string, secret: string, hash: string, hint: string, now: Date) {
  return {
    id: `${KEY_ID_PREFIX}${hash.slice(0, 16)}`,
    user_id: userId,
    name: `Secret ${secret}`,
    hash,
    hint,
    created_at: now.toISOString(),
    expires_at: null,
    revoked_at: null,
  };
}
