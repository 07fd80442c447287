// The budget guarantee on a Redis Cluster (three primaries, a replica each): two gateway processes
// share it, and two members of one team, each through a key with a budget of its own, send 300
// requests at once through both. The team's budget covers exactly 37: exactly 37 are served, the
// rest refused with 402, and the team's spent total, its members' and their keys' are exactly what
// was served, to the micro-unit, with no hold left, though each member's money and the team's live
// in the team's slot and the usage records in each user's own. /readyz and /metrics name the
// primaries, their slots and replicas.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import { eventually } from '../../support/eventually.ts';
import { useRedisCluster } from '../../support/redis-cluster.ts';

// 10 completion tokens at 1000 per million: 0.01 each, held and charged alike.
const COST_MICROS = 10_000n;
const SERVED = 37;
const REQUESTS = 300;
const annKey = generateKey().secret;
const benKey = generateKey().secret;

const config: GatewayConfig = {
  teams: [{ id: 'red', name: 'Red team', budget: '0.37' }],
  users: [
    { id: 'ann', name: 'Ann', team: 'red', budget: '10', keys: [{ name: 'app', key: '${ANN_KEY}', budget: '5' }] },
    { id: 'ben', name: 'Ben', team: 'red', keys: [{ name: 'app', key: '${BEN_KEY}', budget: '5' }] },
  ],
  models: [
    {
      id: 'priced-chat',
      type: 'text-generation',
      costs: { prompt_tokens: 0, completion_tokens: 1000 },
      providers: [{ model: 'sim', type: 'simulator', args: { latency_ms: 20 } }],
    },
  ],
};

const redis = useRedisCluster();
const bed = testBed();
const gateways: GatewayProcess[] = [];

before(async () => {
  await redis.ready();
  // One after the other: both seed the same users, and the second must find them already there.
  for (let i = 0; i < 2; i++)
    gateways.push(await bed.process(config, { args: ['--redis-url', redis.cluster.url], env: { ANN_KEY: annKey, BEN_KEY: benKey } }));
});

async function chat(key: string, i: number): Promise<number> {
  const response = await fetch(`${gateways[i % 2]!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'priced-chat', messages: [{ role: 'user', content: `request ${i}` }], max_tokens: 10 }),
  });
  const body = (await response.json()) as { usage?: { cost: number }; error?: { code: string } };
  if (response.status === 200) assert.equal(body.usage?.cost, 0.01);
  if (response.status === 402) assert.equal(body.error?.code, 'insufficient_budget');
  return response.status;
}

test(`${REQUESTS} requests of one team's two members through two gateways on a cluster: exactly ${SERVED} served, spent exactly at every level`, async () => {
  const statuses = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => chat(i % 3 === 0 ? benKey : annKey, i)));
  assert.equal(statuses.filter((s) => s === 200).length, SERVED);
  assert.equal(statuses.filter((s) => s === 402).length, REQUESTS - SERVED);

  const store = await RedisStore.connect(redis.cluster.url, { usageRetentionMs: 86_400_000 });
  try {
    const team = await eventually(async () => {
      const now = await store.ledger.balance('team:red', Date.now());
      return now.reservedMicros === 0n && now;
    }, 'every hold released');
    assert.equal(team.spentMicros, BigInt(SERVED) * COST_MICROS);
    const levels = await Promise.all(
      ['ann', 'ben'].map(async (user) => {
        const [key] = await store.accounts.listKeys(user);
        const own = await store.ledger.balance(user, Date.now());
        const keyLevel = await store.ledger.balance(`key:${key!.id}`, Date.now(), user);
        assert.equal(keyLevel.spentMicros, own.spentMicros, `${user}'s key is charged as ${user} is`);
        assert.equal(own.reservedMicros + keyLevel.reservedMicros, 0n);
        return own.spentMicros;
      }),
    );
    assert.equal(levels[0]! + levels[1]!, BigInt(SERVED) * COST_MICROS, 'the members together spent what the team did');
    // Every served request has its usage record, in its user's stream.
    const records = await Promise.all(['ann', 'ben'].map(async (user) => (await store.usage.query(user, { limit: 100 })).totals.requests));
    assert.equal(records[0]! + records[1]!, REQUESTS);
  } finally {
    await store.close();
  }
});

test('/readyz and /metrics name every primary of the cluster, the slots it serves and its replica', async () => {
  type Shard = { primary: string; slots: string[]; replicas: { address: string; state: string }[] };
  const primaries = await redis.cluster.primaries();
  const shards = await eventually(
    async () => {
      const ready = (await (await fetch(`${gateways[0]!.url}/readyz`)).json()) as { redis?: { mode: string; shards?: Shard[] } };
      assert.equal(ready.redis?.mode, 'cluster');
      const read = ready.redis?.shards;
      return read?.length === primaries.length && read.every((shard) => shard.replicas.length === 1) && read;
    },
    'the primaries read',
    { timeoutMs: 15_000 },
  );
  const expected = primaries
    .map(({ port, slots }) => ({ primary: `127.0.0.1:${port}`, slots: slots.map(([from, to]) => `${from}-${to}`) }))
    .sort((a, b) => a.primary.localeCompare(b.primary));
  assert.deepEqual(
    shards.map(({ primary, slots }) => ({ primary, slots })),
    expected,
  );
  for (const shard of shards) assert.equal(shard.replicas[0]!.state, 'online');
  const metrics = await (await fetch(`${gateways[0]!.url}/metrics`)).text();
  for (const { primary, slots } of expected)
    assert.ok(metrics.includes(`tollgate_redis_cluster_primary{primary="${primary}",slots="${slots.join(',')}"} 1`), primary);
});
