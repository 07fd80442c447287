// Which work-queue keys an event touches: most Secrets none; a provider's key Secret the routing
// key; a user's key Secret that user; a GatewayUser itself and every other of its name. An update
// of status alone (the operator's own write) or an identical object (a resync) touches none.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SecretObject } from '../../../operator/kube/resources.ts';
import type { ProviderObject } from '../../../operator/reconcile/routing.ts';
import type { UserObject } from '../../../operator/reconcile/user-state.ts';
import { keysForSecret, keysForUser, worthReconciling } from '../../../operator/work-keys.ts';

const secret = (name: string, namespace = 'team'): SecretObject => ({ metadata: { name, namespace } });
const provider = (name: string, secretName: string, namespace = 'team'): ProviderObject => ({
  metadata: { name, namespace },
  spec: { apiKeySecretRef: { name: secretName, key: 'k' } },
});
const user = (name: string, namespace = 'team', spec: object = {}): UserObject => ({ metadata: { name, namespace }, spec });

describe('keysForSecret', () => {
  const providers = [provider('vllm', 'vllm-key')];
  const users = [user('alice'), user('bob', 'team', { apiKeySecret: { name: 'shared-name' } }), user('carol', 'other')];
  const cases: [string, SecretObject, string[]][] = [
    ['a Secret nothing names', secret('unrelated'), []],
    ["a provider's key Secret", secret('vllm-key'), ['routing']],
    ['a Secret of that name in another namespace', secret('vllm-key', 'other'), []],
    ["a user's default key Secret", secret('alice-api-key'), ['user:team/alice']],
    ["a user's named key Secret", secret('shared-name'), ['user:team/bob']],
    ["a user's key Secret name in another namespace", secret('alice-api-key', 'other'), []],
  ];
  for (const [name, changed, keys] of cases) {
    test(name, () => assert.deepEqual(keysForSecret(changed, providers, users), keys));
  }
});

test('keysForUser: the user, and the others of its name, whose ownership of the id may change', () => {
  const users = [user('alice'), user('alice', 'other'), user('bob')];
  assert.deepEqual(keysForUser(users[0]!, users), ['user:team/alice', 'user:other/alice']);
  assert.deepEqual(keysForUser(user('dave'), users), ['user:team/dave']);
});

describe('worthReconciling', () => {
  const object = (generation: number, extra: object = {}, status: object = {}) => ({
    metadata: { name: 'x', namespace: 'team', generation, ...extra },
    status,
  });
  const update = (previous: ReturnType<typeof object>, next: ReturnType<typeof object>) =>
    worthReconciling({ type: 'update', previous, object: next });
  test('adds and deletes always are', () => {
    assert.equal(worthReconciling({ type: 'add', object: object(1) }), true);
    assert.equal(worthReconciling({ type: 'delete', object: object(1) }), true);
  });
  test('a new generation, a deletion begun or finalizers changed are; status alone or a resync is not', () => {
    assert.equal(update(object(1), object(2)), true);
    assert.equal(update(object(1), object(1, { deletionTimestamp: '2026-11-01T00:00:00Z' })), true);
    assert.equal(update(object(1), object(1, { finalizers: ['tollgate.dev/redis-cleanup'] })), true);
    assert.equal(update(object(1), object(1, {}, { conditions: [] })), false);
    assert.equal(update(object(1), object(1)), false);
  });
});
