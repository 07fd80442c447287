// The hold is a real worst case, tried as a new user would: a chat router priced 2.5 / 10 per
// million tokens whose backend reports 12 prompt tokens for a one-word message (what a Llama 3
// chat template really costs: the gateway's own count is 7) and 9 completion tokens for
// max_tokens 9, a budget of 40.5 such requests, and 300 concurrent requests through two gateways
// on one Redis. The hold (15 prompt tokens with the template overhead: 0.000128) covers the real
// cost, so every served caller is told the real cost, the spent total is the number served times
// that cost to the micro-unit, and the usage records say the same. How many are served depends
// on how many holds overlap: 37 when all are in flight at once (37 x 0.000128 fit in the budget),
// up to 40 when some settle before others are admitted; never 41.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import { eventually } from '../../support/eventually.ts';

// 12 x 2.5 + 9 x 10 per million tokens: 0.00012 a request.
const COST_MICROS = 120n;
const BUDGET = '0.00486'; // 40.5 requests
/** Served when every hold is in flight at once, and at most. */
const SERVED_AT_LEAST = 37;
const SERVED_AT_MOST = 40;
const REQUESTS = 300;
const key = generateKey().secret;

const bed = testBed({ redis: true });
let backend: FakeBackend;
const gateways: GatewayProcess[] = [];

before(async () => {
  backend = await startFakeOpenAI();
  backend.behave({ usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } });
  const config: GatewayConfig = {
    users: [{ id: 'newcomer', name: 'New user', budget: BUDGET, keys: [{ name: 'k', key: '${USER_KEY}' }] }],
    models: [
      {
        id: 'llama-chat',
        type: 'text-generation',
        costs: { prompt_tokens: 2.5, completion_tokens: 10 },
        providers: [{ model: 'meta-llama/Llama-3.1-8B-Instruct', type: 'vllm', args: { api_url: backend.url } }],
      },
    ],
  };
  gateways.push(await bed.process(config, { env: { USER_KEY: key } }));
  gateways.push(await bed.process(config, { env: { USER_KEY: key } }));
});

after(async () => {
  await backend.close();
});

async function chat(i: number): Promise<{ status: number; cost?: number }> {
  const response = await fetch(`${gateways[i % 2]!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'llama-chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 9 }),
  });
  const body = (await response.json()) as { usage?: { cost: number }; error?: { code: string } };
  if (response.status === 402) assert.equal(body.error?.code, 'insufficient_budget');
  return { status: response.status, cost: body.usage?.cost };
}

test(`${REQUESTS} concurrent one-word chats through two gateways on a budget of 40.5: each served caller told the real cost, spent = served x cost`, async () => {
  const answers = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => chat(i)));
  const served = answers.filter((a) => a.status === 200);
  const SERVED = served.length;
  assert.ok(SERVED >= SERVED_AT_LEAST && SERVED <= SERVED_AT_MOST, `${SERVED} served`);
  assert.equal(answers.filter((a) => a.status === 402).length, REQUESTS - SERVED);
  for (const answer of served) assert.equal(answer.cost, 0.00012);

  const store = await RedisStore.connect(bed.redis.url, { usageRetentionMs: 86_400_000 });
  try {
    const balance = await eventually(async () => {
      const now = await store.ledger.balance('newcomer', Date.now());
      return now.reservedMicros === 0n && now;
    }, 'every hold released');
    assert.equal(balance.reservedMicros, 0n, 'no hold is left');
    assert.equal(balance.spentMicros, BigInt(SERVED) * COST_MICROS);

    // Every record's cost is its tokens times the prices, all of it charged.
    const page = await eventually(async () => {
      const now = await store.usage.query('newcomer', { limit: 1000 });
      return now.totals.requests >= REQUESTS && now;
    }, 'every usage record written');
    const ok = page.records.filter((r) => r.status === 200);
    assert.equal(ok.length, SERVED);
    for (const record of ok) {
      assert.deepEqual(
        [record.prompt_tokens, record.completion_tokens, record.cost_micros, record.charged_micros, record.uncovered_micros],
        [12, 9, COST_MICROS, COST_MICROS, 0n],
      );
    }
    assert.equal(page.totals.cost_micros, BigInt(SERVED) * COST_MICROS);
    assert.equal(page.totals.uncovered_micros, 0n);
  } finally {
    await store.close();
  }
});
