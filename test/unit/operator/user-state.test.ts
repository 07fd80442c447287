// The pure parts of reconciling GatewayUsers: who owns a user id, when the store's copy is
// current, the key Secret's name, content and shape, and usage as status shows it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UserSpec } from '../../../core/resources/user.ts';
import type { Balance } from '../../../core/store/ledger.ts';
import type { SecretObject } from '../../../operator/kube/resources.ts';
import {
  idOwner,
  keySecretName,
  keySecretObject,
  readKeySecret,
  sameUserSpec,
  usageStatus,
  type UserObject,
} from '../../../operator/reconcile/user-state.ts';

const user = (name: string, namespace = 'team', created = '2026-11-01T00:00:00Z', spec: object = {}): UserObject => ({
  apiVersion: 'tollgate.dev/v1alpha1',
  kind: 'GatewayUser',
  metadata: { name, namespace, uid: `uid-${namespace}-${name}`, creationTimestamp: created },
  spec,
});

describe('idOwner', () => {
  test('the oldest GatewayUser of a name owns the user id; a tie goes to namespace/name order', () => {
    const users = [
      user('alice', 'b', '2026-11-02T00:00:00Z'),
      user('alice', 'z', '2026-11-01T00:00:00Z'),
      user('alice', 'a', '2026-11-02T00:00:00Z'),
      user('bob'),
    ];
    assert.equal(idOwner(users, 'alice'), 'z/alice');
    assert.equal(idOwner(users.slice(0, 1).concat(users.slice(2)), 'alice'), 'a/alice');
    assert.equal(idOwner(users, 'carol'), undefined);
  });
});

describe('sameUserSpec', () => {
  const spec: UserSpec = {
    id: 'alice',
    name: 'Alice',
    role: 'user',
    team: null,
    budget: '25',
    budget_period: 'monthly',
    allowed_routers: ['chat'],
    budget_alerts: null,
    soft_budget: false,
    priority: 0,
    rate_limits: null,
    subjects: null,
  };
  test('a stored record with its created_at is the same spec', () => {
    assert.equal(sameUserSpec({ ...spec, created_at: '2026-11-01T00:00:00Z' } as UserSpec, spec), true);
  });
  for (const [field, value] of [
    ['budget', '30'],
    ['budget_period', null],
    ['allowed_routers', ['chat', 'embed']],
    ['rate_limits', { requests_per_minute: 10 }],
    ['role', 'admin'],
  ] as const) {
    test(`another ${field} is not`, () => {
      assert.equal(sameUserSpec(spec, { ...spec, [field]: value }), false);
    });
  }
});

describe('the key Secret', () => {
  test('is named by spec.apiKeySecret.name, else <name>-api-key', () => {
    assert.equal(keySecretName(user('alice')), 'alice-api-key');
    assert.equal(keySecretName(user('alice', 'team', undefined, { apiKeySecret: { name: 'keys' } })), 'keys');
  });

  test("is the user's: owner reference with the uid, the key in base64 under api-key", () => {
    const secret = keySecretObject(user('alice'), 'alice-api-key', 'tg-secret');
    assert.deepEqual(secret.metadata.ownerReferences, [
      {
        apiVersion: 'tollgate.dev/v1alpha1',
        kind: 'GatewayUser',
        name: 'alice',
        uid: 'uid-team-alice',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(Buffer.from(secret.data['api-key']!, 'base64').toString(), 'tg-secret');
    assert.equal(secret.metadata.namespace, 'team');
  });

  test('without an api-key entry (or an empty one) it is refused with a reason', () => {
    const secret = (data: Record<string, string>): SecretObject => ({ metadata: { name: 'keys', namespace: 'team' }, data });
    assert.deepEqual(readKeySecret(secret({ 'api-key': Buffer.from('tg-x').toString('base64') })), { ok: true, secret: 'tg-x' });
    for (const data of [{}, { 'api-key': '' }, { token: 'eA==' }] as Record<string, string>[]) {
      const read = readKeySecret(secret(data));
      assert.ok(!read.ok && read.condition.reason === 'KeySecretInvalid', JSON.stringify(data));
    }
  });
});

describe('usageStatus', () => {
  const balance = (budgetMicros: bigint | null, spentMicros: bigint, periodStart: Date | null = null): Balance => ({
    budgetMicros,
    spentMicros,
    reservedMicros: 0n,
    period: periodStart ? 'monthly' : null,
    periodStart,
    periodEnd: null,
    history: {},
  });
  test('money as decimal strings, remaining what is left of the budget', () => {
    const status = usageStatus({
      balance: balance(25_000_000n, 1_500_000n, new Date('2026-11-01T00:00:00Z')),
      requests: 3,
      lastRequestTime: '2026-11-10T10:00:00.000Z',
    });
    assert.deepEqual(status, {
      spent: '1.5',
      remaining: '23.5',
      periodStart: '2026-11-01T00:00:00.000Z',
      requests: 3,
      lastRequestTime: '2026-11-10T10:00:00.000Z',
    });
  });
  test('remaining is 0, never negative, when spending went past the budget', () => {
    assert.equal(usageStatus({ balance: balance(1_000_000n, 1_200_000n), requests: 1, lastRequestTime: undefined }).remaining, '0');
  });
  test('without a budget or a period, remaining and periodStart are removed (null); no request yet, no time', () => {
    const status = usageStatus({ balance: balance(null, 0n), requests: 0, lastRequestTime: undefined });
    assert.deepEqual([status.spent, status.remaining, status.periodStart, status.lastRequestTime], ['0', null, null, null]);
  });
});
