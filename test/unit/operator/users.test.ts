// Reconciling one GatewayUser, against the in-memory store and a recording fake of the API: what
// is written when (a new user, a steady one, an invalid one, a name taken by an older one, a
// deleted one, a lost key Secret), and that a steady state writes nothing at all.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hashKey } from '../../../core/accounts/api-keys.ts';
import { KubeApiError, type KubeClient, type KubeRequest } from '../../../core/kubernetes/kube-client.ts';
import { silentLog } from '../../../core/log.ts';
import { MemoryStore } from '../../../core/store/memory/memory-store.ts';
import { EventRecorder } from '../../../operator/kube/events.ts';
import type { Cache, SecretObject } from '../../../operator/kube/resources.ts';
import { FINALIZER, type UserObject } from '../../../operator/reconcile/user-state.ts';
import { reconcileUser, type UserDeps } from '../../../operator/reconcile/users.ts';

const NOW = new Date('2026-11-10T12:00:00Z');

/** Answers like the API server would, and remembers every request. */
class FakeApi implements KubeClient {
  readonly requests: { method: string; path: string; body?: any }[] = [];
  request<T>(request: KubeRequest): Promise<T> {
    const method = request.method ?? 'GET';
    this.requests.push({ method, path: request.path, body: request.body });
    if (method === 'GET') return Promise.reject(new KubeApiError(request, 404, '{"reason":"NotFound"}', null));
    return Promise.resolve(request.body as T);
  }
  stream(): Promise<AsyncIterable<string>> {
    throw new Error('no watches here');
  }
  writes(path: RegExp) {
    return this.requests.filter((r) => r.method !== 'GET' && path.test(r.path));
  }
}

class MapCache<T extends { metadata: { name: string; namespace: string } }> implements Cache<T> {
  readonly objects = new Map<string, T>();
  constructor(objects: T[] = []) {
    for (const object of objects) this.put(object);
  }
  put(object: T): void {
    this.objects.set(`${object.metadata.namespace}/${object.metadata.name}`, object);
  }
  list(): T[] {
    return [...this.objects.values()];
  }
  get(key: string): T | undefined {
    return this.objects.get(key);
  }
}

const gatewayUser = (
  name: string,
  spec: object = { budget: '25.00', budgetPeriod: 'monthly' },
  extra: Partial<UserObject['metadata']> = {},
  namespace = 'team',
): UserObject => ({
  apiVersion: 'tollgate.dev/v1alpha1',
  kind: 'GatewayUser',
  metadata: { name, namespace, uid: `uid-${namespace}-${name}`, generation: 1, creationTimestamp: '2026-11-01T00:00:00Z', ...extra },
  spec,
});

function setup(users: UserObject[]) {
  const api = new FakeApi();
  const store = new MemoryStore({ usageRetentionMs: 86_400_000 });
  const userCache = new MapCache(users);
  const secrets = new MapCache<SecretObject>();
  const deps: UserDeps = {
    client: api,
    users: userCache,
    secrets,
    store,
    events: new EventRecorder(api, 'test', silentLog),
    log: silentLog,
    now: () => NOW,
  };
  /** The state the informers would show after the fake's writes: the Secret created, finalizer and status applied. */
  const observeWrites = (key: string) => {
    const user = userCache.get(key)!;
    for (const write of api.requests) {
      if (write.method === 'POST' && write.path.endsWith('/secrets')) secrets.put(write.body);
      if (write.path.endsWith(`/gatewayusers/${user.metadata.name}`) && write.body.metadata.finalizers)
        user.metadata.finalizers = write.body.metadata.finalizers;
      if (write.path.endsWith(`/gatewayusers/${user.metadata.name}/status`))
        user.status = { ...user.status, ...withoutNulls(write.body.status) };
    }
    api.requests.length = 0;
  };
  return { api, store, deps, secrets, users: userCache, observeWrites };
}

const withoutNulls = (status: Record<string, unknown>) => Object.fromEntries(Object.entries(status).filter(([, v]) => v !== null));
const secretValue = (secret: SecretObject) => Buffer.from(secret.data!['api-key']!, 'base64').toString();

describe('reconcileUser', () => {
  test('a new user: finalizer (applied with the uid), the user and its key hash in the store, the key Secret, then status', async () => {
    const { api, store, deps, secrets, observeWrites } = setup([gatewayUser('alice')]);
    await reconcileUser(deps, 'team/alice');
    const [finalizer] = api.writes(/gatewayusers\/alice$/);
    assert.deepEqual(finalizer?.body.metadata, { name: 'alice', namespace: 'team', uid: 'uid-team-alice', finalizers: [FINALIZER] });
    const [created] = api.writes(/\/namespaces\/team\/secrets$/);
    assert.equal(created?.method, 'POST');
    const [status] = api.writes(/gatewayusers\/alice\/status$/);
    assert.deepEqual(
      status?.body.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
      ['Accepted=True', 'ResolvedRefs=True', 'Ready=True'],
    );
    assert.deepEqual(
      [status?.body.status.apiKeySecretName, status?.body.status.spent, status?.body.status.remaining, status?.body.status.requests],
      ['alice-api-key', '0', '25', 0],
    );
    observeWrites('team/alice');
    const found = await store.accounts.findKey(hashKey(secretValue(secrets.get('team/alice-api-key')!)));
    assert.deepEqual([found?.user.id, found?.user.budget], ['alice', '25']);
  });

  test('a steady user: nothing is written, to the API or to the store', async () => {
    const { api, store, deps, observeWrites } = setup([gatewayUser('alice')]);
    await reconcileUser(deps, 'team/alice');
    observeWrites('team/alice');
    let storeWrites = 0;
    for (const method of ['createUser', 'updateUser', 'addKey', 'revokeKey', 'deleteUser'] as const) {
      const original = store.accounts[method].bind(store.accounts) as (...args: unknown[]) => Promise<unknown>;
      (store.accounts as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        storeWrites++;
        return original(...args);
      };
    }
    await reconcileUser(deps, 'team/alice');
    assert.deepEqual(api.requests, []);
    assert.equal(storeWrites, 0);
  });

  test("a changed spec updates the store's user and keeps its key", async () => {
    const { store, deps, users, secrets, observeWrites } = setup([gatewayUser('alice')]);
    await reconcileUser(deps, 'team/alice');
    observeWrites('team/alice');
    const user = users.get('team/alice')!;
    users.put({ ...user, metadata: { ...user.metadata, generation: 2 }, spec: { budget: '40' } });
    await reconcileUser(deps, 'team/alice');
    assert.deepEqual(
      [(await store.accounts.getUser('alice'))?.budget, (await store.accounts.getUser('alice'))?.budget_period],
      ['40', null],
    );
    assert.equal((await store.accounts.findKey(hashKey(secretValue(secrets.get('team/alice-api-key')!))))?.key.revoked_at, null);
  });

  test('an invalid spec: Accepted=False with the field and why, and nothing else written', async () => {
    const { api, store, deps } = setup([gatewayUser('alice', { budget: '-3' })]);
    await reconcileUser(deps, 'team/alice');
    assert.deepEqual(
      api
        .writes(/./)
        .filter((w) => !w.path.includes('/events'))
        .map((w) => w.path),
      ['/apis/tollgate.dev/v1alpha1/namespaces/team/gatewayusers/alice/status'],
    );
    const accepted = api.writes(/status$/)[0]?.body.status.conditions[0];
    assert.deepEqual([accepted.status, accepted.reason], ['False', 'InvalidSpec']);
    assert.match(accepted.message, /^spec\.budget: /);
    assert.equal(await store.accounts.getUser('alice'), undefined);
  });

  test('a user id already owned by an older GatewayUser in another namespace: NameConflict, the store untouched', async () => {
    const older = gatewayUser('alice', { budget: '5' }, { creationTimestamp: '2026-10-01T00:00:00Z' }, 'first');
    const { api, store, deps } = setup([older, gatewayUser('alice')]);
    await reconcileUser(deps, 'team/alice');
    assert.equal(api.writes(/status$/)[0]?.body.status.conditions[0].reason, 'NameConflict');
    assert.equal(await store.accounts.getUser('alice'), undefined);
  });

  test('a deleted user: its Redis state goes, then the finalizer (applied without it)', async () => {
    const { api, store, deps, users, secrets, observeWrites } = setup([gatewayUser('alice')]);
    await reconcileUser(deps, 'team/alice');
    observeWrites('team/alice');
    const key = secretValue(secrets.get('team/alice-api-key')!);
    const user = users.get('team/alice')!;
    users.put({ ...user, metadata: { ...user.metadata, deletionTimestamp: NOW.toISOString() } });
    await reconcileUser(deps, 'team/alice');
    assert.equal(await store.accounts.getUser('alice'), undefined);
    assert.equal(await store.accounts.findKey(hashKey(key)), undefined);
    assert.deepEqual(
      api.writes(/gatewayusers\/alice$/).map((w) => w.body.metadata),
      [{ name: 'alice', namespace: 'team', uid: 'uid-team-alice' }],
    );
  });

  test('a key Secret deleted: a new key, and the old one revoked', async () => {
    const { store, deps, secrets, observeWrites } = setup([gatewayUser('alice')]);
    await reconcileUser(deps, 'team/alice');
    observeWrites('team/alice');
    const oldKey = secretValue(secrets.get('team/alice-api-key')!);
    secrets.objects.delete('team/alice-api-key');
    await reconcileUser(deps, 'team/alice');
    observeWrites('team/alice');
    const newKey = secretValue(secrets.get('team/alice-api-key')!);
    assert.notEqual(newKey, oldKey);
    assert.ok((await store.accounts.findKey(hashKey(oldKey)))?.key.revoked_at);
    assert.equal((await store.accounts.findKey(hashKey(newKey)))?.key.revoked_at, null);
  });
});
