// Cached prompt tokens (issue 28, part 5): their price, exact to the micro-unit, and how far the
// backend's report of them is believed. A router that sets no cached or cache-write price costs
// exactly what it cost before the report was read; one that does charges each part at its price.
// A report that is not a count, or that claims more of the prompt than was charged, is dropped
// (all of the prompt charged as uncached) and named in the anomaly list.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RouterCosts } from '../../../core/resources/router.ts';
import { costMicros, microsToDecimal, pricesFrom, type PromptCache } from '../../../gateway/metering/cost.ts';
import { usageFor, type PromptCounts } from '../../../gateway/billing/usage-block.ts';
import { isPriced, worstCaseMicros } from '../../../gateway/billing/worst-case.ts';
import { readUsage, withCache } from '../../../gateway/wire/openai-wire.ts';
import { messagesUsage } from '../../../gateway/translators/chat-over-messages.ts';
import type { ProviderRoute, RouterRoute } from '../../../gateway/routing/routing-table.ts';

type Price = number | string;

function cost(costs: Record<string, Price>, prompt: number, completion: number, cache?: PromptCache): string {
  return microsToDecimal(costMicros(pricesFrom(RouterCosts.parse(costs)), prompt, completion, 0, cache));
}

describe('the cost of cached prompt tokens', () => {
  const cases: { name: string; costs: Record<string, Price>; prompt: number; completion: number; cache: PromptCache; cost: string }[] = [
    {
      name: 'no cached price: every prompt token at the prompt price, as without the report',
      costs: { prompt_tokens: '2.5', completion_tokens: '10' },
      prompt: 1000,
      completion: 100,
      cache: { cached: 800, writes: 0 },
      cost: '0.0035',
    },
    {
      name: 'a cached price: (200 x 2.5 + 800 x 1.25 + 100 x 10) / 1e6',
      costs: { prompt_tokens: '2.5', completion_tokens: '10', cached_prompt_tokens: '1.25' },
      prompt: 1000,
      completion: 100,
      cache: { cached: 800, writes: 0 },
      cost: '0.0025',
    },
    {
      name: 'cached tokens free',
      costs: { prompt_tokens: '3', completion_tokens: '15', cached_prompt_tokens: 0 },
      prompt: 113,
      completion: 5,
      cache: { cached: 100, writes: 0 },
      cost: '0.000114',
    },
    {
      name: "Anthropic's prices: 13 x 3 + 100 reads x 0.3 + 50 writes x 3.75 + 5 x 15, per million",
      costs: { prompt_tokens: '3', completion_tokens: '15', cached_prompt_tokens: '0.3', cache_write_prompt_tokens: '3.75' },
      prompt: 163,
      completion: 5,
      cache: { cached: 100, writes: 50 },
      // 39 + 30 + 187.5 + 75 = 331.5 millionths: 0.0003315, rounded half-up.
      cost: '0.000332',
    },
    {
      name: 'a write price without a cached price: reads at the prompt price',
      costs: { prompt_tokens: '3', completion_tokens: '15', cache_write_prompt_tokens: '3.75' },
      prompt: 163,
      completion: 5,
      cache: { cached: 100, writes: 50 },
      // 13 x 3 + 100 x 3 + 50 x 3.75 + 75 = 601.5 millionths.
      cost: '0.000602',
    },
    {
      name: 'just under the half: rounded down',
      costs: { prompt_tokens: '1', completion_tokens: '0', cached_prompt_tokens: '0.499999999' },
      prompt: 1,
      completion: 0,
      cache: { cached: 1, writes: 0 },
      // One cached token at 0.499999999 per million: 0.499999999 of a micro-unit, down to 0.
      cost: '0',
    },
    {
      name: 'exactly the half: rounded up',
      costs: { prompt_tokens: '0.5', completion_tokens: '0', cached_prompt_tokens: '0.25' },
      prompt: 2,
      completion: 0,
      cache: { cached: 2, writes: 0 },
      // 2 x 0.25 = 0.5 millionths: half a micro-unit, up to one.
      cost: '0.000001',
    },
    {
      name: 'nine decimals of a cached price, exactly',
      costs: { prompt_tokens: '0.15', completion_tokens: '0.6', cached_prompt_tokens: '0.075000001' },
      prompt: 2_000_000,
      completion: 1_000_000,
      cache: { cached: 1_000_000, writes: 0 },
      // 0.15 + 0.075000001 + 0.6 = 0.825000001, rounded to 6 decimals.
      cost: '0.825',
    },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.cost}`, () => {
      assert.equal(cost(c.costs, c.prompt, c.completion, c.cache), c.cost);
    });
  }

  test('unset prices give the cost of no cache at all, to the last micro-unit, for any split', () => {
    const costs = { prompt_tokens: '0.123456789', completion_tokens: '0.987654321' };
    for (const [prompt, cached, writes] of [
      [1, 1, 0],
      [999_999, 12_345, 678],
      [7_000_001, 7_000_000, 1],
    ] as const) {
      assert.equal(cost(costs, prompt, 321, { cached, writes }), cost(costs, prompt, 321));
    }
  });

  test('a router sets the prices, or refuses them as it refuses the others', () => {
    assert.deepEqual(RouterCosts.parse({ cached_prompt_tokens: 0.075, cache_write_prompt_tokens: '3.75' }), {
      prompt_tokens: '0',
      completion_tokens: '0',
      audio_minutes: '0',
      cached_prompt_tokens: '0.075',
      cache_write_prompt_tokens: '3.75',
    });
    for (const [field, value, message] of [
      ['cached_prompt_tokens', -1, 'price per million tokens must not be negative'],
      ['cache_write_prompt_tokens', '-0.5', 'price per million tokens must not be negative'],
      ['cached_prompt_tokens', 'cheap', 'price per million tokens must be a decimal number, got "cheap"'],
      ['cached_prompt_tokens', '0.0000000001', 'price per million tokens must have at most 9 decimal places, got "0.0000000001"'],
    ] as const) {
      const parsed = RouterCosts.safeParse({ [field]: value });
      assert.equal(parsed.success, false, `${field}: ${value}`);
      assert.deepEqual(
        parsed.error?.issues.map((i) => ({ path: i.path, message: i.message })),
        [{ path: [field], message }],
      );
    }
    assert.equal(RouterCosts.safeParse({ cached_prompt_tokens: null }).success, false);
  });
});

/** 1 per million prompt tokens, 0.25 per million cached, 2 per million written, 4 per million completion tokens. */
const router = {
  spec: { max_context_length: 8192 },
  prices: pricesFrom({
    prompt_tokens: '1',
    completion_tokens: '4',
    audio_minutes: '0',
    cached_prompt_tokens: '0.25',
    cache_write_prompt_tokens: '2',
  }),
} as unknown as RouterRoute;
const provider = { carbon: undefined } as unknown as ProviderRoute;
const COUNTS: PromptCounts = { promptTokens: 1000, fewestPrompt: 1000, promptBase: 1000, heldPrompt: 1000 };

function usageOfReport(usage: unknown) {
  return usageFor({
    router,
    provider,
    endpoint: 'chat',
    reported: readUsage(usage),
    request: { messages: [{ role: 'user', content: 'Hello' }] },
    counts: COUNTS,
    completionTokens: () => 10,
    latencySeconds: 1,
  });
}

describe('usageFor: how much of a cache report is believed', () => {
  const base = { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010 };
  const cases: { name: string; details: unknown; cache: PromptCache; anomaly: string | null; micros: bigint }[] = [
    // (200 x 1 + 800 x 0.25 + 10 x 4) / 1e6 = 440 / 1e6
    { name: 'a count within the prompt', details: { cached_tokens: 800 }, cache: { cached: 800, writes: 0 }, anomaly: null, micros: 440n },
    { name: 'all of the prompt cached', details: { cached_tokens: 1000 }, cache: { cached: 1000, writes: 0 }, anomaly: null, micros: 290n },
    { name: '0 cached', details: { cached_tokens: 0, audio_tokens: 0 }, cache: { cached: 0, writes: 0 }, anomaly: null, micros: 1040n },
    { name: 'no details', details: undefined, cache: { cached: 0, writes: 0 }, anomaly: null, micros: 1040n },
    { name: 'cached_tokens null', details: { cached_tokens: null }, cache: { cached: 0, writes: 0 }, anomaly: null, micros: 1040n },
    {
      name: 'more than the prompt',
      details: { cached_tokens: 1001 },
      cache: { cached: 0, writes: 0 },
      anomaly: 'cached_over_limit',
      micros: 1040n,
    },
    { name: 'negative', details: { cached_tokens: -5 }, cache: { cached: 0, writes: 0 }, anomaly: 'cached_invalid', micros: 1040n },
    { name: 'not an integer', details: { cached_tokens: 12.5 }, cache: { cached: 0, writes: 0 }, anomaly: 'cached_invalid', micros: 1040n },
    { name: 'a string', details: { cached_tokens: '800' }, cache: { cached: 0, writes: 0 }, anomaly: 'cached_invalid', micros: 1040n },
    {
      name: 'not finite',
      details: { cached_tokens: Number.POSITIVE_INFINITY },
      cache: { cached: 0, writes: 0 },
      anomaly: 'cached_invalid',
      micros: 1040n,
    },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.anomaly ?? 'believed'}`, () => {
      const usage = usageOfReport({ ...base, ...(c.details !== undefined && { prompt_tokens_details: c.details }) });
      assert.deepEqual(usage.cache, c.cache);
      assert.equal(usage.anomaly, c.anomaly);
      assert.equal(usage.costMicros, c.micros);
      assert.equal(usage.block.prompt_tokens, 1000);
      if (c.cache.cached > 0) assert.deepEqual(usage.block.prompt_tokens_details, { cached_tokens: c.cache.cached });
      else if (c.anomaly) assert.deepEqual(usage.block.prompt_tokens_details, { cached_tokens: 0 }, 'a report not believed says 0');
      else assert.equal('prompt_tokens_details' in usage.block, false, 'absent when none was reported, or 0');
    });
  }

  test('the block without cached tokens is the block of before, key for key', () => {
    const usage = usageOfReport({ ...base, prompt_tokens_details: { cached_tokens: 0 } });
    assert.deepEqual(Object.keys(usage.block), ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost', 'carbon']);
  });

  test('cached tokens are bounded by the prompt charged: a prompt cut to its limit leaves none believed past it', () => {
    const usage = usageOfReport({ prompt_tokens: 100_000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 90_000 } });
    assert.equal(usage.anomaly, 'prompt_over_limit,cached_over_limit');
    assert.deepEqual(usage.cache, { cached: 0, writes: 0 });
  });

  test("Anthropic's reads and writes: each at its price, both in the details", () => {
    const reported = messagesUsage({
      input_tokens: 100,
      cache_read_input_tokens: 600,
      cache_creation_input_tokens: 300,
      output_tokens: 10,
    });
    assert.deepEqual(reported, { prompt_tokens: 1000, completion_tokens: 10, cached_tokens: 600, cache_write_tokens: 300 });
    const usage = usageFor({
      router,
      provider,
      endpoint: 'chat',
      reported,
      request: { messages: [{ role: 'user', content: 'Hello' }] },
      counts: COUNTS,
      completionTokens: () => 10,
      latencySeconds: 1,
    });
    // 100 x 1 + 600 x 0.25 + 300 x 2 + 10 x 4 = 890 millionths.
    assert.equal(usage.costMicros, 890n);
    assert.equal(usage.anomaly, null);
    assert.deepEqual(usage.block.prompt_tokens_details, { cached_tokens: 600, cache_write_tokens: 300 });
  });

  test('reads and writes together past the prompt: neither believed', () => {
    const reported = withCache({ prompt_tokens: 1000, completion_tokens: 10 }, 600, 401);
    const usage = usageFor({
      router,
      provider,
      endpoint: 'chat',
      reported,
      request: { messages: [{ role: 'user', content: 'Hello' }] },
      counts: COUNTS,
      completionTokens: () => 10,
      latencySeconds: 1,
    });
    assert.equal(usage.anomaly, 'cached_over_limit');
    assert.deepEqual(usage.cache, { cached: 0, writes: 0 });
    assert.equal(usage.costMicros, 1040n);
  });

  test('a negative cache write from Anthropic: not believed, the prompt charged as uncached', () => {
    const reported = messagesUsage({ input_tokens: 100, cache_read_input_tokens: 600, cache_creation_input_tokens: -3, output_tokens: 10 });
    const usage = usageFor({
      router,
      provider,
      endpoint: 'chat',
      reported,
      request: { messages: [{ role: 'user', content: 'Hello' }] },
      counts: COUNTS,
      completionTokens: () => 10,
      latencySeconds: 1,
    });
    assert.equal(usage.anomaly, 'cached_invalid');
    assert.equal(usage.block.prompt_tokens, 700);
    assert.equal(usage.costMicros, 740n);
  });
});

describe('the hold, before the backend says what it cached', () => {
  const request = { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10 };

  test('a cache-write price above the prompt price: every held prompt token at it, so the hold covers any split', () => {
    // 1000 x 2 + 10 x 4, per million: the dearest a 1000-token prompt and 10 tokens can cost.
    assert.equal(worstCaseMicros(router, 'chat', request, 1000), 2040n);
    const dearest = usageFor({
      router,
      provider,
      endpoint: 'chat',
      reported: withCache({ prompt_tokens: 1000, completion_tokens: 10 }, 0, 1000),
      request,
      counts: COUNTS,
      completionTokens: () => 10,
      latencySeconds: 1,
    });
    assert.equal(dearest.costMicros, 2040n);
  });

  test('cache prices below the prompt price: the hold is what it was', () => {
    const cheaper = {
      spec: { max_context_length: 8192 },
      prices: pricesFrom({ prompt_tokens: '1', completion_tokens: '4', audio_minutes: '0', cached_prompt_tokens: '0.25' }),
    } as unknown as RouterRoute;
    const plain = {
      spec: { max_context_length: 8192 },
      prices: pricesFrom({ prompt_tokens: '1', completion_tokens: '4', audio_minutes: '0' }),
    } as unknown as RouterRoute;
    assert.equal(worstCaseMicros(cheaper, 'chat', request, 1000), worstCaseMicros(plain, 'chat', request, 1000));
    assert.equal(worstCaseMicros(plain, 'chat', request, 1000), 1040n);
  });

  test('a router priced only for cached tokens is priced: its requests are held for', () => {
    const onlyCached = {
      spec: { max_context_length: 8192 },
      prices: pricesFrom({ prompt_tokens: '0', completion_tokens: '0', audio_minutes: '0', cached_prompt_tokens: '1' }),
    } as unknown as RouterRoute;
    assert.equal(isPriced(onlyCached), true);
  });
});
