// The store's contracts on a Redis Cluster: three primaries with a replica each, made by
// `redis-cli --cluster create` from real redis-server processes. Everything the store promises on
// one Redis it promises here: accounts, teams, responses, the catalog, usage and its reports,
// prompt ratios, gateway reports, the ledger at every level with its races, and budget alerts,
// though the keys of one request lie in one slot and the rest spread over three nodes; and what
// only a cluster has: each user's money home (the team's slot for a member), moved with the user.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { KeyLimits } from '../../../../core/resources/key-limits.ts';
import { TeamSpec } from '../../../../core/resources/team.ts';
import { keys } from '../../../../core/store/redis/keys.ts';
import { scanAll, slotOf } from '../../../../core/store/redis/redis-client.ts';
import { RedisStore, type RedisStoreOptions } from '../../../../core/store/redis/redis-store.ts';
import { useRedisCluster } from '../../../support/redis-cluster.ts';
import { apiKey, describeStoreContract, RESPONSE_LIMITS, RETENTION_MS, userSpec } from './contract.ts';
import { describeLedgerContract } from './ledger-contract.ts';
import { describeAlertsContract, describeLevelsContract } from './levels-contract.ts';

const OPTIONS: RedisStoreOptions = { usageRetentionMs: RETENTION_MS, maxReconnectDelayMs: 100, responseLimits: RESPONSE_LIMITS };

const redis = useRedisCluster();

const factory = {
  make: async () => {
    await redis.empty();
    return RedisStore.connect(redis.cluster.url, OPTIONS);
  },
  dispose: (store: RedisStore) => store.close(),
};

describeStoreContract('redis cluster', { ...factory, peer: () => RedisStore.connect(redis.cluster.url, OPTIONS) });
describeLedgerContract('redis cluster', factory);
describeLevelsContract('redis cluster', factory);
describeAlertsContract('redis cluster', factory);

describe('redis cluster: a user money home', () => {
  let store: RedisStore;
  beforeEach(async () => {
    store = await factory.make();
  });
  afterEach(() => store.close());

  const T0 = Date.UTC(2026, 2, 2, 12);
  const charge = async (team: string | undefined, micros: bigint, id: string) => {
    const reservation = { id, micros, ttlMs: 60_000 };
    const levels = [
      { level: 'key' as const, id: 'app', policy: undefined },
      ...(team ? [{ level: 'team' as const, id: team, policy: undefined }] : []),
    ];
    const admitted = await store.ledger.admit('alice', { now: T0, reservation, levels, team });
    assert.ok(
      admitted.ok,
      JSON.stringify(admitted, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
    );
    return store.ledger.settle('alice', { now: T0, reservation, actualMicros: micros, levels, team });
  };

  test("a member's money lives in the team's slot; moving teams moves it, with the key's, and its budget still holds", async () => {
    for (const id of ['red', 'blue']) await store.accounts.createTeam(TeamSpec.parse({ id, name: id, budget: '10' }), new Date(T0));
    await store.accounts.createUser(userSpec('alice', { team: 'red', budget: '1' }), new Date(T0));
    await store.accounts.addKey({ ...apiKey('alice', 'app'), ...KeyLimits.parse({ budget: '0.9' }) });
    await charge('red', 600_000n, 'h-1');
    const slots = [keys.team('red'), 'tg:{t:red}:u:alice:ledger', 'tg:{t:red}:k:app:ledger'].map(slotOf);
    assert.equal(new Set(slots).size, 1, "the user's and the key's ledgers are in the team's slot");
    assert.equal(await redis.admin.hget('tg:{t:red}:u:alice:ledger', 'spent'), '600000');

    await store.accounts.updateUser(userSpec('alice', { team: 'blue', budget: '1' }));
    for (const [subject, spent] of [
      ['alice', 600_000n],
      ['key:app', 600_000n],
      ['team:red', 600_000n], // the old team keeps what was spent in it
      ['team:blue', 0n],
    ] as const)
      assert.equal((await store.ledger.balance(subject, T0, 'alice')).spentMicros, spent, subject);
    assert.equal(await redis.admin.exists('tg:{t:red}:u:alice:ledger', 'tg:{t:red}:k:app:ledger'), 0);

    // The key's budget moved with it: 0.3 of its 0.9 is left, at the new home.
    const refused = await store.ledger.admit('alice', {
      now: T0,
      reservation: { id: 'h-2', micros: 400_000n, ttlMs: 60_000 },
      levels: [{ level: 'key', id: 'app', policy: undefined }],
      team: 'blue',
    });
    assert.deepEqual(refused, { ok: false, reason: 'budget', level: 'key', remainingMicros: 300_000n });

    // Out of any team: the user's own slot.
    await store.accounts.updateUser(userSpec('alice', { budget: '1' }));
    await charge(undefined, 100_000n, 'h-3');
    assert.equal((await store.ledger.balance('alice', T0)).spentMicros, 700_000n);
    assert.equal((await store.ledger.balance('key:app', T0, 'alice')).spentMicros, 700_000n);
  });

  test("deleting a team leaves its members' money where it is; deleting the user removes it", async () => {
    await store.accounts.createTeam(TeamSpec.parse({ id: 'red', name: 'red', budget: '10' }), new Date(T0));
    await store.accounts.createUser(userSpec('alice', { team: 'red' }), new Date(T0));
    await store.accounts.addKey({ ...apiKey('alice', 'app'), ...KeyLimits.parse({ budget: '5' }) });
    await charge('red', 200_000n, 'h-1');
    assert.equal(await store.accounts.deleteTeam('red'), true);
    assert.equal((await store.ledger.balance('alice', T0)).spentMicros, 200_000n);
    assert.equal(await store.accounts.deleteUser('alice'), true);
    assert.deepEqual(await scanAll(redis.admin, 'tg:{t:red}:*'), []);
  });
});
