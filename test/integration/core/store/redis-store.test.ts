// The store contract on a real redis-server, and what only the Redis store has to get right:
// the user fields the ledger's scripts read, and living through Redis going away and back.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { keys } from '../../../../core/store/redis/keys.ts';
import { RedisStore, type RedisStoreOptions } from '../../../../core/store/redis/redis-store.ts';
import { StoreUnavailableError } from '../../../../core/store/store-errors.ts';
import { utcDay } from '../../../../core/store/usage-days.ts';
import { useRedis } from '../../../support/use-redis.ts';
import { apiKey, describeStoreContract, RESPONSE_LIMITS, RETENTION_MS, usageRecord, userSpec } from './contract.ts';
import { eventually } from '../../../support/eventually.ts';
import { HANG_MS } from '../../../support/patience.ts';

const OPTIONS: RedisStoreOptions = { usageRetentionMs: RETENTION_MS, maxReconnectDelayMs: 100, responseLimits: RESPONSE_LIMITS };

const redis = useRedis({ restarts: true }); // restarted below

describeStoreContract('redis store', {
  make: async () => {
    await redis.empty();
    return RedisStore.connect(redis.url, OPTIONS);
  },
  dispose: (store) => store.close(),
  peer: () => RedisStore.connect(redis.url, OPTIONS),
});

describe('redis store: Redis specifics', () => {
  let store: RedisStore;
  beforeEach(async () => {
    await redis.empty();
    store = await RedisStore.connect(redis.url, OPTIONS);
  });
  afterEach(() => store.close());

  test('the user hash holds what the ledger scripts read: budget in micro-units and the period', async () => {
    await store.accounts.createUser(userSpec('alice', { budget: '12.345678', budget_period: 'weekly' }), new Date());
    await store.accounts.createUser(userSpec('bob'), new Date());
    assert.deepEqual(await redis.admin.hmget(keys.user('alice'), 'budget', 'period'), ['12345678', 'weekly']);
    assert.deepEqual(await redis.admin.hmget(keys.user('bob'), 'budget', 'period'), ['', '']);
    await store.accounts.updateUser(userSpec('bob', { budget: '0.000001', budget_period: 'daily' }));
    assert.deepEqual(await redis.admin.hmget(keys.user('bob'), 'budget', 'period'), ['1', 'daily']);
  });

  test('a batch that fails part-way still writes what its earlier requests did: every hold is counted', async () => {
    await store.accounts.createUser(userSpec('alice', { budget: '1' }), new Date());
    await store.accounts.createUser(userSpec('bob', { budget: '1' }), new Date());
    await redis.admin.set(keys.rate('bob', 'chat'), 'not a hash'); // bob's limits fail with WRONGTYPE
    const now = Date.now();
    const policy = { requests_per_minute: 10 };
    const [alice, bob] = await Promise.allSettled([
      store.ledger.admit('alice', {
        now,
        reservation: { id: 'hold-a', micros: 300_000n, ttlMs: 60_000 },
        rate: { scope: 'chat', policy, tokens: 0 },
      }),
      store.ledger.admit('bob', {
        now,
        reservation: { id: 'hold-b', micros: 300_000n, ttlMs: 60_000 },
        rate: { scope: 'chat', policy, tokens: 0 },
      }),
    ]);
    assert.equal(alice.status, 'rejected', 'one script call: the batch fails as a whole');
    assert.equal(bob.status, 'rejected');
    // Alice's step ran before Bob's failed: her hold is in the sorted set, so her ledger counts it.
    assert.deepEqual(await redis.admin.zrange(keys.holds('alice'), '0', '-1'), ['hold-a|300000']);
    assert.equal((await store.ledger.balance('alice', now)).reservedMicros, 300_000n);
    assert.equal(await redis.admin.hget(keys.rate('alice', 'chat'), 'rpm.c'), '1');
  });

  test('a budget beyond what a double holds exactly is stored to the micro-unit', async () => {
    await store.accounts.createUser(userSpec('alice', { budget: '999999999999999.999999' }), new Date());
    assert.equal(await redis.admin.hget(keys.user('alice'), 'budget'), '999999999999999999999');
  });

  test('deleting a user leaves no key of theirs behind, and nothing of other users is touched', async () => {
    const key = apiKey('alice', 'k1');
    await store.accounts.createUser(userSpec('alice'), new Date());
    await store.accounts.createUser(userSpec('bob'), new Date());
    await store.accounts.addKey(key);
    await store.accounts.addKey(apiKey('bob', 'k1'));
    await store.usage.append(usageRecord('alice', Date.now()));
    await store.usage.append(usageRecord('bob', Date.now()));
    await store.ledger.admit('alice', { now: Date.now(), reservation: { id: 'h1', micros: 10n, ttlMs: 60_000 } });
    // user, keys, usage, daily totals, ledger, holds
    assert.ok((await redis.admin.keys(keys.userPattern('alice'))).length >= 6);
    await store.accounts.deleteUser('alice');
    assert.deepEqual(await redis.admin.keys(keys.userPattern('alice')), []);
    assert.equal(await redis.admin.exists(keys.apiKey(key.hash)), 0);
    assert.deepEqual(await redis.admin.zrange(keys.users, '0', '-1'), ['bob']);
    assert.equal((await store.usage.query('bob', { limit: 10 })).records.length, 1);
    assert.equal((await store.accounts.listKeys('bob')).length, 1);
  });

  test("a catalog an earlier gateway wrote, before routers' costs had audio_minutes, reads with the field's default", async () => {
    const older = {
      revision: 3,
      routers: [
        {
          name: 'chat',
          type: 'text-generation',
          load_balancing_strategy: 'shuffle',
          aliases: [],
          fallbacks: [],
          costs: { prompt_tokens: '0.15', completion_tokens: '0.6' },
          max_context_length: 8192,
        },
      ],
      providers: [{ id: 'sim', router: 'chat', type: 'simulator', model_name: 'sim' }],
    };
    await redis.admin.set(keys.catalog, JSON.stringify(older));
    const catalog = await store.catalog.readCatalog();
    assert.equal(catalog.revision, 3);
    assert.deepEqual(catalog.routers[0]!.costs, { prompt_tokens: '0.15', completion_tokens: '0.6', audio_minutes: '0' });
    assert.equal(catalog.providers[0]!.id, 'sim');
  });

  test('records written in one batch are each kept, the daily totals add them all, and every usage key expires', async () => {
    const now = Date.now();
    // Appended in one turn of the event loop: one script call for the lot.
    await Promise.all([
      store.usage.append(usageRecord('alice', now, { router: 'chat', cost_micros: 1_000n, kwh: 0.25 })),
      store.usage.append(usageRecord('alice', now, { router: 'chat', cost_micros: 2_000n, kwh: 0.5 })),
      store.usage.append(usageRecord('alice', now, { router: 'embed', cost_micros: 4_000n, kwh: 1 })),
      store.usage.append(usageRecord('bob', now, { router: 'chat', cost_micros: 8_000n, kwh: 2 })),
    ]);
    const day = utcDay(now);
    assert.equal((await store.usage.query('alice', { limit: 10 })).records.length, 3);
    assert.deepEqual(await redis.admin.hmget(keys.daily('user', 'alice', day), 'requests', 'cost_micros', 'kwh'), ['3', '7000', '1.75']);
    assert.deepEqual(await redis.admin.hmget(keys.daily('router', 'chat', day), 'requests', 'cost_micros', 'kwh'), ['3', '11000', '2.75']);
    for (const key of [
      keys.usage('alice'),
      keys.usage('bob'),
      keys.daily('user', 'alice', day),
      keys.daily('router', 'chat', day),
      keys.daily('router', 'embed', day),
    ]) {
      assert.ok((await redis.admin.pttl(key)) > 0, `${key} has a lifetime`);
    }
  });

  test('scripts still run after Redis lost them (SCRIPT FLUSH): EVALSHA falls back to EVAL', async () => {
    /** Runs each of the store's own scripts once, for one user. */
    const runEveryScript = async (id: string, revision: number) => {
      const key = apiKey(id, 'k1');
      await store.accounts.createUser(userSpec(id), new Date());
      await store.accounts.updateUser(userSpec(id, { budget: '1' }));
      await store.accounts.addKey(key);
      await store.accounts.revokeKey(id, 'k1', new Date());
      assert.equal((await store.accounts.findKey(key.hash))?.user.id, id);
      assert.equal(await store.catalog.writeCatalog(revision, { routers: [], providers: [] }), revision + 1);
      await store.usage.append(usageRecord(id, Date.now()));
    };
    await runEveryScript('alice', 0); // loaded on this connection: later calls send EVALSHA
    await redis.admin.script('FLUSH');
    await redis.admin.config('RESETSTAT');
    await runEveryScript('bob', 1);
    // Each of the 7 scripts was tried by its SHA, refused (NOSCRIPT), and sent whole.
    const stats = await redis.admin.info('commandstats');
    assert.match(stats, /cmdstat_evalsha:calls=7,.*failed_calls=7\r/);
    assert.match(stats, /cmdstat_eval:calls=7,.*failed_calls=0\r/);
  });

  test('gateway pods report the snapshot they serve with a TTL; the reports are listed by pod, expired ones gone', async () => {
    const at = new Date('2026-03-01T12:00:00.000Z');
    await store.gateways.report('gw-b', 'v1', 30_000, at);
    await store.gateways.report('gw-a', 'v1', 30_000, at);
    await store.gateways.report('gw-a', 'v2', 30_000, at); // a newer load replaces the report
    await store.gateways.report('gw-gone', 'v0', 50, at);
    await redis.admin.set('tg:catalog', '{}'); // other keys are not reports
    assert.equal(await redis.admin.get(keys.gateway('gw-a')), JSON.stringify({ version: 'v2', at: '2026-03-01T12:00:00.000Z' }));
    const ttl = await redis.admin.pttl(keys.gateway('gw-a'));
    assert.ok(ttl > 0 && ttl <= 30_000, `TTL ${ttl} ms`);
    await eventually(async () => (await redis.admin.exists(keys.gateway('gw-gone'))) === 0, 'the short-lived report expired');
    assert.deepEqual(await store.gateways.list(), [
      { pod: 'gw-a', version: 'v2', at: at.toISOString() },
      { pod: 'gw-b', version: 'v1', at: at.toISOString() },
    ]);
    await store.gateways.forget('gw-b');
    assert.deepEqual(
      (await store.gateways.list()).map((g) => g.pod),
      ['gw-a'],
    );
  });

  test('the listing walks the whole key space, however many pods report', async () => {
    const pods = Array.from({ length: 1200 }, (_, i) => `gw-${String(i).padStart(4, '0')}`);
    await Promise.all(pods.map((pod) => store.gateways.report(pod, 'v1', 30_000)));
    const listed = await store.gateways.list();
    assert.deepEqual(
      listed.map((g) => g.pod),
      pods,
    );
  });

  describe('when Redis goes away', () => {
    afterEach(async () => {
      // Leave a running server for the next test, whatever this one did.
      await redis.restart();
      await eventually(async () => redis.admin.status === 'ready', 'the admin client reconnected');
    });

    test('while Redis is down, calls fail at once with StoreUnavailableError and the store says it is unhealthy', {
      timeout: HANG_MS,
    }, async () => {
      await store.accounts.createUser(userSpec('alice'), new Date());
      await redis.stop();
      await eventually(async () => !store.healthy, 'the store noticed');
      await assert.rejects(store.accounts.getUser('alice'), StoreUnavailableError);
      await assert.rejects(store.accounts.createUser(userSpec('bob'), new Date()), StoreUnavailableError);
      await assert.rejects(store.accounts.findKey('0'.repeat(64)), StoreUnavailableError);
      await assert.rejects(store.catalog.readCatalog(), StoreUnavailableError);
      await assert.rejects(store.catalog.writeCatalog(0, { routers: [], providers: [] }), StoreUnavailableError);
      await assert.rejects(store.usage.append(usageRecord('alice', Date.now())), StoreUnavailableError);
      await assert.rejects(store.usage.query('alice', { limit: 10 }), StoreUnavailableError);
      await assert.rejects(store.usage.dailyTotals({ user: 'alice' }, '2026-01-01', '2026-01-02'), StoreUnavailableError);
      await assert.rejects(store.ledger.balance('alice', Date.now()), StoreUnavailableError);
    });

    test('connecting to a Redis that does not answer fails with StoreUnavailableError', { timeout: HANG_MS }, async () => {
      await redis.stop();
      await assert.rejects(RedisStore.connect(redis.url, { ...OPTIONS, connectTimeoutMs: 300 }), StoreUnavailableError);
    });

    test('after Redis restarts, the store reconnects by itself and its scripts work again', { timeout: HANG_MS }, async () => {
      const key = apiKey('alice', 'k1');
      await store.accounts.createUser(userSpec('alice'), new Date());
      await store.accounts.addKey(key);
      await redis.restart(); // empty: data and scripts are gone
      await eventually(async () => store.healthy && (await store.accounts.getUser('alice')) === undefined, 'the store reconnected');
      await store.accounts.createUser(userSpec('alice'), new Date());
      await store.accounts.addKey(key);
      assert.equal((await store.accounts.findKey(key.hash))?.key.id, 'k1');
      assert.equal(await store.catalog.writeCatalog(0, { routers: [], providers: [] }), 1);
      await store.usage.append(usageRecord('alice', Date.now()));
      assert.equal((await store.usage.query('alice', { limit: 10 })).records.length, 1);
    });

    test('after Redis crashes and comes back, change listeners hear of writes again', { timeout: HANG_MS }, async () => {
      const other = await RedisStore.connect(redis.url, OPTIONS);
      try {
        let revision = 0;
        store.catalog.onCatalogChange(() => {
          store.catalog.readCatalog().then(
            (c) => (revision = c.revision),
            () => {},
          );
        });
        await redis.kill();
        await redis.restart();
        await eventually(async () => other.healthy, 'the writer reconnected');
        let written = 0;
        await eventually(async () => {
          written = (await other.catalog.writeCatalog(written, { routers: [], providers: [] })) as number;
          return revision > 0;
        }, 'a write was heard');
      } finally {
        await other.close();
      }
    });
  });
});
