// The budget guarantee across fallbacks, at the budget's edge, across two gateway processes on one
// Redis: the router asked for is down, its fallback is ten times dearer. Each router is admitted on
// its own before anything is sent to it, so no request reaches the fallback without a hold that
// fits: however many requests race, the spent total never passes the budget, every request served
// is charged the fallback's price to the micro-unit, and none is served for free.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import { eventually } from '../../support/eventually.ts';
import { closedPortUrl } from '../../support/routing.ts';

// 10 completion tokens (the simulator generates exactly max_tokens; prompts are free): 0.001 on
// the router asked for, 0.01 on its fallback. The budget covers 37 requests on the fallback.
const FALLBACK_COST_MICROS = 10_000n;
const BUDGET_REQUESTS = 37;
const REQUESTS = 300;
const key = generateKey().secret;

const bed = testBed({ redis: true });
const gateways: GatewayProcess[] = [];

before(async () => {
  const config: GatewayConfig = {
    users: [{ id: 'erin', name: 'Erin', budget: '0.37', keys: [{ name: 'e', key: '${ERIN_KEY}' }] }],
    models: [
      {
        id: 'cheap',
        type: 'text-generation',
        costs: { prompt_tokens: 0, completion_tokens: 100 },
        fallbacks: ['dear'],
        providers: [{ model: 'gone', type: 'vllm', retries: 0, args: { api_url: await closedPortUrl() } }],
      },
      {
        id: 'dear',
        type: 'text-generation',
        costs: { prompt_tokens: 0, completion_tokens: 1000 },
        providers: [{ model: 'sim', type: 'simulator', args: { latency_ms: 5 } }],
      },
    ],
  };
  gateways.push(await bed.process(config, { env: { ERIN_KEY: key } }));
  gateways.push(await bed.process(config, { env: { ERIN_KEY: key } }));
});

/** One chat of `cheap` through the i-th gateway (alternating): its status, after checking what a served one says. */
async function chat(i: number): Promise<number> {
  const response = await fetch(`${gateways[i % 2]!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'cheap', messages: [{ role: 'user', content: `request ${i}` }], max_tokens: 10 }),
  });
  const body = (await response.json()) as { model?: string; usage?: { cost: number } };
  if (response.status === 200) {
    assert.equal(body.model, 'dear', 'served by the fallback');
    assert.equal(body.usage?.cost, 0.01, "at the fallback's price");
  }
  return response.status;
}

test(`${REQUESTS} racing requests through two gateways, falling back to a router ten times dearer: never past the budget, never free`, async () => {
  const statuses = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => chat(i)));
  const served = statuses.filter((s) => s === 200).length;
  assert.ok(served > 0 && served <= BUDGET_REQUESTS, `${served} served`);
  const others = statuses.filter((s) => s !== 200);
  assert.ok(
    others.every((s) => s === 502 || s === 402),
    `the others get the failure of the router asked for (502: the fallback could not hold what they may cost) or, once the budget cannot hold even its price, 402: ${[...new Set(others)]}`,
  );

  // Then one at a time, until the fallback refuses: every hold of the race was given back, so the
  // budget serves exactly its 37 requests in all.
  let more = 0;
  while ((await chat(REQUESTS + more)) === 200) more++;
  assert.equal(served + more, BUDGET_REQUESTS, 'the budget served exactly what it covers');

  const store = await RedisStore.connect(bed.redis.url, { usageRetentionMs: 86_400_000 });
  try {
    const balance = await eventually(async () => {
      const now = await store.ledger.balance('erin', Date.now());
      return now.reservedMicros === 0n && now;
    }, 'every hold released');
    assert.equal(balance.spentMicros, BigInt(BUDGET_REQUESTS) * FALLBACK_COST_MICROS, 'spent exactly the budget, at the fallback price');
  } finally {
    await store.close();
  }
});
