// The layout's version on a real redis-server (core/store/redis/layout-check.ts): written on an
// empty Redis, recorded as layout 1 on one written before the version was kept (and its data
// read), an older layout still read goes on, a newer or unknown one refused with a message that
// says what to do, and processes opening the store together agree on one version. Usage entries
// of every shape layout 1 holds are read as their builds meant them.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { keys } from '../../../../core/store/redis/keys.ts';
import { LAYOUT_VERSION, LAYOUT_VERSION_KEY } from '../../../../core/store/redis/layout.ts';
import { checkLayout, logLayout, RedisLayoutError } from '../../../../core/store/redis/layout-check.ts';
import { RedisStore, type RedisStoreOptions } from '../../../../core/store/redis/redis-store.ts';
import { useRedis } from '../../../support/use-redis.ts';
import { RETENTION_MS, usageRecord, userSpec } from './contract.ts';
import { eventually } from '../../../support/eventually.ts';

const OPTIONS: RedisStoreOptions = { usageRetentionMs: RETENTION_MS };

const redis = useRedis({ emptyBeforeEach: true });

/** Opens a store, hands it to `use`, and closes it. */
async function withStore<T>(use: (store: RedisStore) => Promise<T>): Promise<T> {
  const store = await RedisStore.connect(redis.url, OPTIONS);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

describe('redis layout: opening the store', () => {
  test('an empty Redis gets the version of this build', async () => {
    const found = await withStore(async (store) => store.layout);
    assert.deepEqual(found, { version: LAYOUT_VERSION, outcome: 'written' });
    assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), String(LAYOUT_VERSION));
  });

  test('a Redis holding its version opens as it is, and the version stays', async () => {
    await withStore(async () => {});
    assert.deepEqual(await withStore(async (store) => store.layout), { version: LAYOUT_VERSION, outcome: 'current' });
    assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), String(LAYOUT_VERSION));
  });

  test('a Redis written before the version was kept is layout 1: it gets the version, and its data are read', async () => {
    await withStore((store) => store.accounts.createUser(userSpec('alice', { budget: '5' }), new Date()));
    await redis.admin.del(LAYOUT_VERSION_KEY); // as a Redis written by an earlier build holds it
    const [found, alice] = await withStore(async (store) => [store.layout, await store.accounts.getUser('alice')] as const);
    assert.deepEqual(found, { version: 1, outcome: 'adopted' });
    assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), '1');
    assert.equal(alice?.budget, '5');
  });

  const REFUSED: readonly [stored: string, message: RegExp][] = [
    [
      String(LAYOUT_VERSION + 1),
      new RegExp(
        `^Redis holds Tollgate layout ${LAYOUT_VERSION + 1}; this build reads layout ${LAYOUT_VERSION}: upgrade this process, or point it at another Redis$`,
      ),
    ],
    ['99', /^Redis holds Tollgate layout 99; this build reads layout 1: upgrade this process/],
    ['0', /^Redis holds an unknown Tollgate layout \(tg:layout is "0"\); this build reads layout 1: upgrade this process/],
    ['two', /^Redis holds an unknown Tollgate layout \(tg:layout is "two"\); this build reads layout 1: upgrade this process/],
    ['1.0', /^Redis holds an unknown Tollgate layout \(tg:layout is "1\.0"\)/],
    ['', /^Redis holds an unknown Tollgate layout \(tg:layout is ""\)/],
  ];
  for (const [stored, message] of REFUSED) {
    test(`a Redis holding layout ${JSON.stringify(stored)} is refused, and left as it was`, async () => {
      await redis.admin.set(LAYOUT_VERSION_KEY, stored);
      await assert.rejects(RedisStore.connect(redis.url, OPTIONS), (error: unknown) => {
        assert.ok(error instanceof RedisLayoutError, String(error));
        assert.match(error.message, message);
        assert.equal(error.found, stored);
        return true;
      });
      assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), stored);
      assert.equal(await redis.admin.dbsize(), 1, 'the refused process wrote nothing');
      // Earlier tests' stores dropped their connections without waiting: only this one is left in the end.
      await eventually(
        async () => ((await redis.admin.client('LIST')) as string).trim().split('\n').length === 1,
        'no connection kept open',
      );
    });
  }

  test('stores opening together on an empty Redis agree: one writes the version, the others read it', async () => {
    const stores = await Promise.all(Array.from({ length: 8 }, () => RedisStore.connect(redis.url, OPTIONS)));
    try {
      const outcomes = stores.map((store) => store.layout.outcome).sort();
      assert.deepEqual(outcomes, ['current', 'current', 'current', 'current', 'current', 'current', 'current', 'written']);
      assert.ok(stores.every((store) => store.layout.version === LAYOUT_VERSION));
      assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), String(LAYOUT_VERSION));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  test('stores opening together on a Redis written before the version was kept agree on layout 1', async () => {
    await redis.admin.hset('tg:{u:alice}:user', 'spec', '{}');
    const stores = await Promise.all(Array.from({ length: 4 }, () => RedisStore.connect(redis.url, OPTIONS)));
    try {
      assert.deepEqual(stores.map((store) => store.layout.outcome).sort(), ['adopted', 'current', 'current', 'current']);
      assert.ok(stores.every((store) => store.layout.version === 1));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});

describe('redis layout: builds that read several layouts', () => {
  const connections: Redis[] = [];
  const client = () => {
    const connection = new Redis(redis.url);
    connections.push(connection);
    return connection;
  };
  after(() => {
    for (const connection of connections) connection.disconnect();
  });

  test('an older layout this build still reads: it goes on, says so, and leaves the version as it is', async () => {
    await redis.admin.set(LAYOUT_VERSION_KEY, '1');
    const found = await checkLayout(client(), { oldest: 1, newest: 2 });
    assert.deepEqual(found, { version: 1, outcome: 'older' });
    assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), '1');
    const lines: string[] = [];
    const record = (level: string) => (details: object, message: string) => lines.push(`${level} ${JSON.stringify(details)} ${message}`);
    logLayout({ debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') }, found);
    assert.deepEqual(lines, [
      'info {"redisLayout":1} Redis holds Tollgate layout 1, older than the one this build writes; this build reads it: going on',
    ]);
  });

  test('a layout older than this build reads is refused, with what to do', async () => {
    await redis.admin.set(LAYOUT_VERSION_KEY, '1');
    await assert.rejects(checkLayout(client(), { oldest: 2, newest: 3 }), {
      name: 'RedisLayoutError',
      message:
        'Redis holds Tollgate layout 1; this build reads layouts 2 to 3: run a build that reads layout 1 on it, or point this process at another Redis',
    });
  });

  test('a Redis written before the version was kept is recorded as layout 1 even by a build that writes a later one', async () => {
    await redis.admin.set('tg:catalog', '{}');
    assert.deepEqual(await checkLayout(client(), { oldest: 1, newest: 2 }), { version: 1, outcome: 'adopted' });
    assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), '1');
  });

  test('builds proposing different versions at once agree on the first one written', async () => {
    // Half would write 2 and read 1 to 2, half would write 3 and read 1 to 3: one of them wins.
    const builds = Array.from({ length: 8 }, (_, i) => ({ oldest: 1, newest: 2 + (i % 2) }));
    const results = await Promise.allSettled(builds.map((build) => checkLayout(client(), build)));
    const stored = await redis.admin.get(LAYOUT_VERSION_KEY);
    assert.ok(stored === '2' || stored === '3', `stored ${stored}`);
    const seen = results.map((result) => {
      if (result.status === 'fulfilled') return String(result.value.version);
      assert.ok(result.reason instanceof RedisLayoutError, String(result.reason));
      return result.reason.found; // a build reading 1 to 2 refuses the 3 another wrote
    });
    assert.deepEqual(seen, Array(8).fill(stored), 'every build saw the one version stored');
    const written = results.filter((result) => result.status === 'fulfilled' && result.value.outcome === 'written');
    assert.equal(written.length, 1);
  });

  test('keys of other applications are not Tollgate data', async () => {
    await redis.admin.set('someone-else:config', '{}');
    await redis.admin.set('router', 'x');
    assert.deepEqual(await checkLayout(client()), { version: LAYOUT_VERSION, outcome: 'written' });
  });
});

describe('redis layout: usage entries of every shape layout 1 holds', () => {
  // A stream keeps its entries until the retention trims them: entries written by earlier builds,
  // each in the shape of its time (as its writer spelled it), are read with what they meant.
  const T = Date.now() - 60_000;
  const FIRST = {
    id: 'rec-a',
    time: T,
    user_id: 'alice',
    key_id: 'k1',
    router: 'chat',
    provider: 'sim-1',
    endpoint: 'chat',
    status: 200,
    prompt_tokens: 10,
    completion_tokens: 20,
    cost_micros: '1500',
    kwh: 0.5,
    kgco2eq: 0.25,
    latency_ms: 120,
    ttft_ms: 40,
    incomplete: false,
  };
  const MONEY = { charged_micros: '1000', uncovered_micros: '500', usage_anomaly: 'prompt_tokens' };
  const OLDER: readonly [shape: string, entry: object, read: object][] = [
    [
      'a record as one JSON field: what was charged is its cost, all covered, all believed; no fallback, team or audio',
      FIRST,
      {
        ...FIRST,
        cost_micros: 1500n,
        charged_micros: 1500n,
        uncovered_micros: 0n,
        usage_anomaly: null,
        requested_router: 'chat',
        team_id: null,
        audio_seconds: 0,
        cached_tokens: 0,
        cache_write_tokens: 0,
      },
    ],
    [
      'charges told apart from costs',
      { ...FIRST, id: 'rec-b', time: T + 1, ...MONEY },
      {
        ...FIRST,
        id: 'rec-b',
        time: T + 1,
        cost_micros: 1500n,
        charged_micros: 1000n,
        uncovered_micros: 500n,
        usage_anomaly: 'prompt_tokens',
        requested_router: 'chat',
        team_id: null,
        audio_seconds: 0,
        cached_tokens: 0,
        cache_write_tokens: 0,
      },
    ],
    [
      'the router asked for, when a fallback served',
      { ...FIRST, id: 'rec-c', time: T + 2, ...MONEY, requested_router: 'big' },
      {
        ...FIRST,
        id: 'rec-c',
        time: T + 2,
        cost_micros: 1500n,
        charged_micros: 1000n,
        uncovered_micros: 500n,
        usage_anomaly: 'prompt_tokens',
        requested_router: 'big',
        team_id: null,
        audio_seconds: 0,
        cached_tokens: 0,
        cache_write_tokens: 0,
      },
    ],
    [
      "the user's team",
      { ...FIRST, id: 'rec-d', time: T + 3, ...MONEY, requested_router: 'big', team_id: 'red' },
      {
        ...FIRST,
        id: 'rec-d',
        time: T + 3,
        cost_micros: 1500n,
        charged_micros: 1000n,
        uncovered_micros: 500n,
        usage_anomaly: 'prompt_tokens',
        requested_router: 'big',
        team_id: 'red',
        audio_seconds: 0,
        cached_tokens: 0,
        cache_write_tokens: 0,
      },
    ],
  ];

  test('each older shape is read as its build meant it, beside the records this build writes', async () => {
    const current = usageRecord('alice', T + 4, { endpoint: 'transcriptions', audio_seconds: 12, team_id: 'red' });
    const read = await withStore(async (store) => {
      for (const [, entry] of OLDER) {
        await redis.admin.xadd(keys.usage('alice'), `${(entry as { time: number }).time}-0`, 'r', JSON.stringify(entry));
      }
      await store.usage.append(current);
      return store.usage.query('alice', { limit: 10 });
    });
    assert.equal(read.records.length, OLDER.length + 1);
    assert.deepEqual(read.records[0], current);
    const older = read.records.slice(1).reverse(); // the query reads newest first
    for (const [i, [shape, , record]] of OLDER.entries()) assert.deepEqual(older[i], record, shape);
    assert.equal(read.totals.requests, 5);
  });
});
