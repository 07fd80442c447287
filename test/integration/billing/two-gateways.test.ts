// The budget guarantee across processes: two gateways share one Redis, and one user whose budget
// covers exactly N requests sends 500 at once through both. Exactly N are served, the rest are
// refused with 402, the spent total is N times the cost to the micro-unit, and no hold is left.
// The same holds for a budget large enough that the gateways admit on leases (room taken ahead)
// until they near its end.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { keys } from '../../../core/store/redis/keys.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import { eventually } from '../../support/eventually.ts';

// Every request asks for 10 completion tokens at 1000 per million: 0.01 each, reserved and
// charged alike (the simulator generates exactly max_tokens, and prompts are free).
const COST_MICROS = 10_000n;
const SERVED = 37;
const REQUESTS = 500;
const userKey = generateKey().secret;
const LEASED_SERVED = 1_000;
const leasedKey = generateKey().secret;

const config: GatewayConfig = {
  users: [
    { id: 'bob', name: 'Bob', budget: '0.37', keys: [{ name: "bob's key", key: '${BOB_KEY}' }] },
    { id: 'carol', name: 'Carol', budget: '10', keys: [{ name: "carol's key", key: '${CAROL_KEY}' }] },
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

const bed = testBed({ redis: true });
const gateways: GatewayProcess[] = [];

before(async () => {
  // One after the other: both seed the same user, and the second must find it already there.
  gateways.push(await bed.process(config, { env: { BOB_KEY: userKey, CAROL_KEY: leasedKey } }));
  gateways.push(await bed.process(config, { env: { BOB_KEY: userKey, CAROL_KEY: leasedKey } }));
});

/** One chat request of 0.01 through the i-th gateway (alternating); its status, after checking its body. */
async function chat(key: string, i: number): Promise<number> {
  const response = await fetch(`${gateways[i % 2]!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'priced-chat', messages: [{ role: 'user', content: `request ${i}` }], max_tokens: 10 }),
  });
  const body = (await response.json()) as { usage?: { cost: number }; error?: { code: string; message: string } };
  if (response.status === 200) assert.equal(body.usage?.cost, 0.01);
  if (response.status === 402) {
    assert.equal(body.error?.code, 'insufficient_budget');
    assert.match(body.error?.message ?? '', /^Insufficient budget: 0(\.\d+)? remaining/);
  }
  return response.status;
}

/** Waits until the user's last hold is gone, then checks that nothing is held and `served` requests were charged. */
async function assertSettled(userId: string, served: number): Promise<void> {
  // Settlement runs just after each answer, and leases close within BUDGET_LEASES.openMs.
  const store = await RedisStore.connect(bed.redis.url, { usageRetentionMs: 86_400_000 });
  const raw = new Redis(bed.redis.url);
  try {
    const balance = await eventually(async () => {
      const now = await store.ledger.balance(userId, Date.now());
      return now.reservedMicros === 0n && now;
    }, 'every hold released');
    assert.equal(balance.reservedMicros, 0n, 'no hold is left');
    assert.equal(balance.spentMicros, BigInt(served) * COST_MICROS);
    assert.equal(await raw.zcard(keys.holds(userId)), 0);
    assert.equal(await raw.hget(keys.ledger(userId), 'reserved'), '0');
  } finally {
    raw.disconnect();
    await store.close();
  }
}

test(`${REQUESTS} concurrent requests through two gateways: exactly ${SERVED} served, the rest 402, spent exactly ${SERVED} x cost`, async () => {
  const statuses = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => chat(userKey, i)));
  assert.equal(statuses.filter((s) => s === 200).length, SERVED);
  assert.equal(statuses.filter((s) => s === 402).length, REQUESTS - SERVED);
  await assertSettled('bob', SERVED);
});

test(`a budget for ${LEASED_SERVED} requests, spent through two gateways on leases by 100 clients at a time: exactly ${LEASED_SERVED} served`, async () => {
  const statuses: number[] = [];
  let next = 0;
  // Each client sends its next request when the last is answered, until the requests run out.
  await Promise.all(
    Array.from({ length: 100 }, async () => {
      while (next < LEASED_SERVED + 300) statuses.push(await chat(leasedKey, next++));
    }),
  );
  assert.equal(statuses.filter((s) => s === 200).length, LEASED_SERVED);
  assert.equal(statuses.filter((s) => s === 402).length, 300);
  await assertSettled('carol', LEASED_SERVED);
});
