// Leases on a real redis-server: while a user is far from every limit, a gateway takes room for
// the next requests in advance and admits them without asking Redis; what it does not use goes
// back. The room is held in Redis all along, so two gateways never admit more than the budget
// covers, and a refusal waits for another gateway's open lease rather than refuse room it holds.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { keys } from '../../../../core/store/redis/keys.ts';
import { BUDGET_LEASES } from '../../../../core/store/redis/redis-budget-lease.ts';
import { RedisStore, type RedisStoreOptions } from '../../../../core/store/redis/redis-store.ts';
import type { Admission, OtherLevel } from '../../../../core/store/ledger.ts';
import { TeamSpec } from '../../../../core/resources/team.ts';
import type { RateLimitPolicy } from '../../../../core/resources/limits.ts';
import { useRedis } from '../../../support/use-redis.ts';
import { RETENTION_MS, userSpec } from './contract.ts';
import { eventually } from '../../../support/eventually.ts';
import { HANG_MS } from '../../../support/patience.ts';

const SIZE = BUDGET_LEASES.requests;
const HOLD = 10_000n; // 0.01 a request
const HOUR = 3_600_000;

const redis = useRedis({ emptyBeforeEach: true, restarts: true }); // the outage test below stops it

let stores: RedisStore[] = [];
const connect = async (leaseRequests?: number, options: Partial<RedisStoreOptions> = {}) => {
  const store = await RedisStore.connect(redis.url, { usageRetentionMs: RETENTION_MS, leaseRequests, ...options });
  stores.push(store);
  return store;
};
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});

let holds = 0;
const admission = (policy?: RateLimitPolicy, tokens = 0): Admission => ({
  now: Date.now(),
  reservation: { id: `hold-${++holds}`, micros: HOLD, ttlMs: HOUR },
  rate: policy ? { scope: 'chat', policy, tokens } : undefined,
});
/** Members of the user's holds zset: each request admitted in Redis adds one, a lease one more. */
const holdsInRedis = () => redis.admin.zcard(keys.holds('alice'));

describe('redis store: leases', () => {
  test(`far from the budget, one admission in Redis takes room for ${SIZE} more, admitted without Redis`, async () => {
    const store = await connect();
    await store.accounts.createUser(userSpec('alice', { budget: '100' }), new Date());
    assert.equal((await store.ledger.admit('alice', admission())).ok, true);
    assert.equal(await holdsInRedis(), 2, "the request's hold and the lease's");
    assert.equal((await store.ledger.balance('alice', Date.now())).reservedMicros, HOLD * BigInt(1 + SIZE));
    for (let i = 0; i < SIZE; i++) assert.equal((await store.ledger.admit('alice', admission())).ok, true);
    assert.equal(await holdsInRedis(), 2, 'the lease admitted them');
    assert.equal((await store.ledger.admit('alice', admission())).ok, true);
    assert.equal(await holdsInRedis(), 4, 'the lease was used up: the next admission went to Redis and took a new one');
  });

  test('what a lease did not use goes back when it closes, and its requests are charged what they cost', async () => {
    const store = await connect();
    await store.accounts.createUser(userSpec('alice', { budget: '100' }), new Date());
    const policy = { requests_per_minute: 100_000, tokens_per_minute: 10_000_000 };
    const admitted = [admission(policy, 7), admission(policy, 7), admission(policy, 7)];
    for (const a of admitted) assert.equal((await store.ledger.admit('alice', a)).ok, true);
    for (const a of admitted)
      await store.ledger.settle('alice', {
        now: Date.now(),
        reservation: a.reservation,
        actualMicros: 4_000n,
        rate: { ...a.rate!, tokens: 5 },
      });
    await store.close(); // gives its leases back
    const balance = await (await connect()).ledger.balance('alice', Date.now());
    assert.equal(balance.spentMicros, 12_000n);
    assert.equal(balance.reservedMicros, 0n);
    assert.equal(await holdsInRedis(), 0);
    const windows = await redis.admin.hgetall(keys.rate('alice', 'chat'));
    assert.equal(windows['rpm.c'], '3', "three requests counted, the lease's unused ones given back");
    assert.equal(windows['tpm.c'], String(3 * 7 + 3 * 5), 'prompt and completion tokens of the three');
  });

  test('the x-ratelimit figures of requests admitted on a lease count down as in Redis', async () => {
    const store = await connect();
    await store.accounts.createUser(userSpec('alice'), new Date());
    const policy = { requests_per_minute: 1_000 };
    const remaining = [];
    for (let i = 0; i < 5; i++) {
      const result = await store.ledger.admit('alice', admission(policy));
      assert.ok(result.ok);
      remaining.push(result.rate.requests_per_minute?.remaining);
    }
    assert.deepEqual(remaining, [999, 998, 997, 996, 995]);
  });

  test('near a limit no lease is granted: every admission is made in Redis', async () => {
    const store = await connect();
    await store.accounts.createUser(userSpec('alice', { budget: '1' }), new Date()); // 100 requests: less than a lease's headroom
    for (let i = 0; i < 3; i++) assert.equal((await store.ledger.admit('alice', admission())).ok, true);
    assert.equal(await holdsInRedis(), 3);
    const policy = { requests_per_minute: 50 };
    await store.accounts.createUser(userSpec('bob'), new Date());
    await store.ledger.admit('bob', { ...admission(policy), reservation: undefined });
    assert.equal(await redis.admin.hget(keys.rate('bob', 'chat'), 'rpm.c'), '1');
  });

  test("two gateways with leases admit exactly what the budget covers: a refusal waits for the other's lease to come back", async () => {
    const [first, second] = [await connect(), await connect()];
    const covered = 300;
    await first.accounts.createUser(userSpec('alice', { budget: String((covered * Number(HOLD)) / 1e6) }), new Date());
    assert.equal((await first.ledger.admit('alice', admission())).ok, true); // the first takes a lease, and then stops
    let admitted = 1;
    for (;;) {
      const result = await second.ledger.admit('alice', admission());
      if (!result.ok) {
        assert.equal(result.reason, 'budget');
        break;
      }
      admitted++;
    }
    assert.equal(admitted, covered);
    await first.close();
    await second.close();
    const balance = await (await connect()).ledger.balance('alice', Date.now());
    assert.equal(balance.reservedMicros, BigInt(covered) * HOLD);
  });

  test('users of one team on two gateways admit exactly what the team covers: a lease never takes room a teammate needs', async () => {
    const [first, second] = [await connect(), await connect()];
    const covered = 300;
    await first.accounts.createTeam(TeamSpec.parse({ id: 'red', name: 'Red', budget: String((covered * Number(HOLD)) / 1e6) }), new Date());
    for (const id of ['alice', 'bob']) await first.accounts.createUser(userSpec(id, { team: 'red' }), new Date());
    const levels: OtherLevel[] = [{ level: 'team', id: 'red', policy: undefined }];
    assert.equal((await first.ledger.admit('alice', { ...admission(), levels })).ok, true);
    assert.equal(await redis.admin.zcard('tg:{t:red}:holds'), 2, "alice's first request took a lease at the team's level too");
    let admitted = 1;
    for (;;) {
      const result = await second.ledger.admit('bob', { ...admission(), levels });
      if (!result.ok) {
        assert.ok(result.reason === 'budget' && result.level === 'team');
        break;
      }
      admitted++;
    }
    assert.equal(admitted, covered);
    await first.close();
    await second.close();
    const team = await (await connect()).ledger.balance('team:red', Date.now());
    assert.equal(team.reservedMicros, BigInt(covered) * HOLD);
  });

  test('with leases off, every admission is made in Redis', async () => {
    const store = await connect(0);
    await store.accounts.createUser(userSpec('alice', { budget: '100' }), new Date());
    for (let i = 0; i < 3; i++) assert.equal((await store.ledger.admit('alice', admission())).ok, true);
    assert.equal(await holdsInRedis(), 3);
  });

  test('once the connection to Redis is lost, requests on a lease are refused like the others', async () => {
    const store = await connect();
    await store.accounts.createUser(userSpec('alice', { budget: '100' }), new Date());
    assert.equal((await store.ledger.admit('alice', admission())).ok, true);
    await redis.kill();
    try {
      // The client learns of the lost connection when its socket closes, a moment after the kill.
      await eventually(() => !store.healthy, 'the store noticed the lost connection');
      await assert.rejects(store.ledger.admit('alice', admission()), { name: 'StoreUnavailableError' });
    } finally {
      await redis.restart();
    }
  });

  // A stopped Redis keeps its connections open: only the command timeout tells. The test has a
  // timeout of its own, so a store that waits for Redis fails it instead of hanging.
  test('once Redis stops answering, commands fail within the command timeout and requests on a lease are refused', {
    timeout: HANG_MS,
  }, async () => {
    const store = await connect(undefined, { commandTimeoutMs: 100, probeIntervalMs: 20 });
    await store.accounts.createUser(userSpec('alice', { budget: '100' }), new Date());
    assert.equal((await store.ledger.admit('alice', admission())).ok, true);
    redis.pause();
    try {
      await assert.rejects(store.ledger.balance('alice', Date.now()), { name: 'StoreUnavailableError' });
      assert.equal(store.healthy, false);
      await assert.rejects(store.ledger.admit('alice', admission()), { name: 'StoreUnavailableError' });
    } finally {
      redis.resume();
    }
    await eventually(() => store.healthy, 'a probe was answered');
    assert.equal((await store.ledger.admit('alice', admission())).ok, true);
  });
});
