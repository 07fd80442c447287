// Queue mode while Redis does not answer: a router falls back to routing in the gateway (logged
// and counted) and goes back to its queue by itself once Redis is back; a router that says
// `when_redis_down: refuse` answers 503 instead.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { queueChat, queueConfig } from '../../support/queue.ts';
import { eventually } from '../../support/eventually.ts';
import { Redis } from 'ioredis';
import { keys as storeKeys } from '../../../core/store/redis/keys.ts';

const bed = testBed({ redis: true });
let backend: FakeBackend;

before(async () => {
  backend = await startFakeOpenAI();
});

after(async () => {
  await backend.close();
});

/** The value of a counter series in the gateway's /metrics, 0 when absent. */
async function counter(gw: TestGateway, series: string): Promise<number> {
  const text = (await gw.get('/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/**
 * Waits until the gateway follows account changes: its key cache starts over once then, and a
 * key it found before would not be known during the outage (a gateway does not trust a key it
 * cannot check).
 */
async function followingAccounts(): Promise<void> {
  const client = new Redis(bed.redis.url);
  try {
    await eventually(
      async () => Number(((await client.pubsub('NUMSUB', storeKeys.accountsChanged)) as [string, number])[1]) > 0,
      'subscribed',
    );
  } finally {
    client.disconnect();
  }
}

const FALLBACKS = 'tollgate_queue_fallbacks_total{router="chat"}';
const ASSIGNED = 'tollgate_queue_assignments_total{router="chat",provider="only"}';

describe('Redis stopped and restarted', () => {
  test('requests are routed in the gateway meanwhile, then through the queue again by themselves', async (t) => {
    const setup = queueConfig({ providers: [{ id: 'only', backend, maxConcurrent: 4 }], priorities: { app: 0 } });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 } });
    const key = setup.keys.app!;
    await followingAccounts();
    assert.equal((await queueChat(gw.url, key)).status, 200);
    assert.equal(await counter(gw, ASSIGNED), 1, 'served through the queue');
    await bed.redis.kill();
    await eventually(async () => (await gw.get('/readyz')).status === 503, 'the gateway sees Redis gone');
    const during = await queueChat(gw.url, key);
    assert.equal(during.status, 200, during.message);
    assert.ok((await counter(gw, FALLBACKS)) >= 1, 'the fallback is counted');
    await bed.redis.restart();
    await eventually(
      async () => (await queueChat(gw.url, key)).status === 200 && (await counter(gw, ASSIGNED)) >= 2,
      'requests go through the queue again',
    );
  });

  test('a router that refuses while Redis is down answers 503, with a Retry-After', async (t) => {
    const setup = queueConfig({
      providers: [{ id: 'only', backend, maxConcurrent: 4 }],
      queue: { when_redis_down: 'refuse' },
      priorities: { app: 0 },
    });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 } });
    const key = setup.keys.app!;
    try {
      await followingAccounts();
      assert.equal((await queueChat(gw.url, key)).status, 200);
      await bed.redis.kill();
      await eventually(async () => (await gw.get('/readyz')).status === 503, 'the gateway sees Redis gone');
      const refused = await queueChat(gw.url, key);
      assert.equal(refused.status, 503);
      assert.equal(refused.code, 'routing_unavailable');
      assert.equal(refused.retryAfter, '1');
      assert.equal(await counter(gw, 'tollgate_queue_rejections_total{router="chat",reason="unavailable"}'), 1);
    } finally {
      await bed.redis.restart();
    }
  });
});
