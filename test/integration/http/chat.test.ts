// POST /v1/chat/completions, not streamed, through OpenAI-format backends (provider types
// openai, vllm and mistral, played by the fake OpenAI server): what the backend receives, and the
// answer the client gets back with the router's name and a usage block carrying cost and carbon.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { DEFAULT_TEXT, startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend, RecordedRequest } from '../../support/fake-server.ts';
import { exactCost, postJson, printedCosts } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig, ModelEntry } from '../../support/gateway-config.ts';

const bed = testBed();

const API_KEY = 'sk-fake-provider-key-0123456789';
const USER = [{ role: 'user', content: 'Say hello' }];
/** The fake reports 11 prompt tokens and one completion token per word of its text. */
const FAKE_PROMPT_TOKENS = 11;
const wordsOf = (text: string) => text.split(' ').length;

let fake: FakeBackend;
let gw: TestGateway;

/** The routers of this file: one per provider type, and a few price and carbon variants. */
const PROVIDER_TYPES = [
  { type: 'openai', router: 'openai-chat', model: 'gpt-4o-mini-2024-07-18' },
  { type: 'vllm', router: 'vllm-chat', model: 'meta-llama/Llama-3.1-8B-Instruct' },
  { type: 'mistral', router: 'mistral-chat', model: 'mistral-small-latest' },
] as const;

before(async () => {
  fake = await startFakeOpenAI();
  const args = { api_url: fake.url, api_key: '${FAKE_API_KEY}', timeout: 10 };
  const config: GatewayConfig = {
    models: [
      ...PROVIDER_TYPES.map(
        ({ type, router, model }): ModelEntry => ({
          id: router,
          type: 'text-generation',
          aliases: [`${router}-alias`],
          costs: { prompt_tokens: '0.15', completion_tokens: '0.6' },
          providers: [{ model, type, args }],
        }),
      ),
      {
        id: 'priced-3-10',
        type: 'text-generation',
        costs: { prompt_tokens: '3', completion_tokens: '10' },
        providers: [{ model: 'm', type: 'vllm', args }],
      },
      {
        id: 'priced-0.15-0.45',
        type: 'text-generation',
        costs: { prompt_tokens: '0.15', completion_tokens: '0.45' },
        providers: [{ model: 'm', type: 'vllm', args }],
      },
      {
        id: 'priced-2.5-10',
        type: 'text-generation',
        costs: { prompt_tokens: '2.5', completion_tokens: '10' },
        providers: [{ model: 'm', type: 'openai', args }],
      },
      { id: 'free', type: 'text-generation', providers: [{ model: 'm', type: 'vllm', args }] },
      {
        id: 'green',
        type: 'text-generation',
        costs: { prompt_tokens: '0.15', completion_tokens: '0.6' },
        providers: [{ model: 'llama-8b', type: 'vllm', args, carbon: { params_total_b: 8, zone: 'FRA' } }],
      },
      { id: 'keyless', type: 'text-generation', providers: [{ model: 'm', type: 'vllm', args: { api_url: fake.url } }] },
    ],
  };
  gw = await bed.gateway(config, { env: { FAKE_API_KEY: API_KEY } });
});

after(async () => {
  await fake.close();
});

function lastRequest(): RecordedRequest {
  const request = fake.requests.at(-1);
  assert.ok(request, 'the backend received no request');
  return request;
}

describe('chat through each OpenAI-format provider type', () => {
  for (const { type, router, model } of PROVIDER_TYPES) {
    test(`type ${type}: the backend gets its own model name, the provider's Bearer key and /v1/chat/completions`, async () => {
      const before = fake.requests.length;
      const answer = await gw.post('/v1/chat/completions', { model: router, messages: USER, temperature: 0.2 });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(fake.requests.length, before + 1, 'exactly one backend call');
      const request = lastRequest();
      assert.equal(request.method, 'POST');
      assert.equal(request.path, '/v1/chat/completions');
      assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
      assert.equal(request.body.model, model);
      assert.deepEqual(request.body.messages, USER);
      assert.equal(request.body.temperature, 0.2);
    });

    test(`type ${type}: the client gets the backend's answer with model = router id and a full usage block`, async () => {
      const answer = await gw.post('/v1/chat/completions', { model: `${router}-alias`, messages: USER });
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
      const { id, object, created, model: answered, choices, usage } = answer.body;
      assert.deepEqual(
        { id, object, created, model: answered },
        { id: 'fake-1', object: 'chat.completion', created: 1700000000, model: router },
      );
      assert.deepEqual(choices, [
        { index: 0, message: { role: 'assistant', content: DEFAULT_TEXT }, finish_reason: 'stop', logprobs: null },
      ]);
      const completion = wordsOf(DEFAULT_TEXT);
      assert.deepEqual(usage, {
        prompt_tokens: FAKE_PROMPT_TOKENS,
        completion_tokens: completion,
        total_tokens: FAKE_PROMPT_TOKENS + completion,
        cost: Number(exactCost(FAKE_PROMPT_TOKENS, completion, '0.15', '0.6')),
        carbon: { kWh: 0, kgCO2eq: 0 },
      });
    });
  }

  test("the client's own API key never reaches the backend", async () => {
    await gw.post('/v1/chat/completions', { model: 'openai-chat', messages: USER });
    assert.equal(lastRequest().headers.authorization, `Bearer ${API_KEY}`);
    assert.equal(JSON.stringify(lastRequest()).includes(gw.adminKey), false);
  });

  test('a provider without api_key sends no Authorization header', async () => {
    const answer = await gw.post('/v1/chat/completions', { model: 'keyless', messages: USER });
    assert.equal(answer.status, 200);
    assert.equal(lastRequest().headers.authorization, undefined);
  });
});

describe('request fields per provider type', () => {
  const extras = {
    seed: 42,
    user: 'user-7',
    stream_options: { include_usage: true },
    top_p: 0.5,
    tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
  };

  test('mistral: seed arrives as random_seed, stream_options and user are dropped, the rest passes', async () => {
    const answer = await gw.post('/v1/chat/completions', { model: 'mistral-chat', messages: USER, ...extras });
    assert.equal(answer.status, 200);
    const sent = lastRequest().body;
    assert.equal(sent.random_seed, 42);
    for (const dropped of ['seed', 'stream_options', 'user']) assert.equal(dropped in sent, false, `${dropped} was sent to Mistral`);
    assert.equal(sent.top_p, 0.5);
    assert.deepEqual(sent.tools, extras.tools);
  });

  for (const router of ['openai-chat', 'vllm-chat']) {
    test(`${router}: seed, user and unknown fields pass through unchanged`, async () => {
      const answer = await gw.post('/v1/chat/completions', { model: router, messages: USER, ...extras });
      assert.equal(answer.status, 200);
      const sent = lastRequest().body;
      assert.equal(sent.seed, 42);
      assert.equal(sent.user, 'user-7');
      assert.equal('random_seed' in sent, false);
      assert.deepEqual(sent.tools, extras.tools);
    });
  }
});

describe('spec 8: usage.cost is the exact formula rounded to 6 decimals', () => {
  /** `naive` is what float arithmetic gives for the same numbers, where it differs from the exact value. */
  const naiveSum = (completion: number, [p, c]: [string, string]) =>
    (FAKE_PROMPT_TOKENS / 1e6) * Number(p) + (completion / 1e6) * Number(c);
  const cases: {
    name: string;
    router: string;
    prices: [string, string];
    text: string;
    printed: string;
    naive?: (completion: number) => string;
  }[] = [
    {
      name: '0.15/0.6 per million, 11 + 5 tokens: 4.65e-6 rounds half up',
      router: 'openai-chat',
      prices: ['0.15', '0.6'],
      text: DEFAULT_TEXT,
      printed: '0.000005',
    },
    {
      name: '3/10 per million, 11 + 5 tokens: naive floats print 0.00008300000000000001',
      router: 'priced-3-10',
      prices: ['3', '10'],
      text: DEFAULT_TEXT,
      printed: '0.000083',
      naive: (n) => String(naiveSum(n, ['3', '10'])),
    },
    {
      name: '0.15/0.45 per million, 11 + 13 tokens: exactly 7.5e-6, which naive float rounding takes down',
      router: 'priced-0.15-0.45',
      prices: ['0.15', '0.45'],
      text: 'one two three four five six seven eight nine ten eleven twelve thirteen',
      printed: '0.000008',
      naive: (n) => String(Math.round(naiveSum(n, ['0.15', '0.45']) * 1e6) / 1e6),
    },
    {
      name: '2.5/10 per million, 11 + 100 tokens',
      router: 'priced-2.5-10',
      prices: ['2.5', '10'],
      text: Array.from({ length: 100 }, () => 'word').join(' '),
      printed: '0.001028',
    },
    { name: 'a router without prices costs 0', router: 'free', prices: ['0', '0'], text: DEFAULT_TEXT, printed: '0' },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const completion = wordsOf(c.text);
      assert.equal(exactCost(FAKE_PROMPT_TOKENS, completion, ...c.prices), c.printed, 'the test expectation follows the formula');
      if (c.naive) assert.notEqual(c.naive(completion), c.printed, 'a case where float arithmetic would be visibly wrong');
      fake.once({ text: c.text });
      const answer = await postJson(gw, '/v1/chat/completions', { model: c.router, messages: USER });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(printedCosts(answer.text), [c.printed], 'the cost as printed in the JSON text');
      const usage = JSON.parse(answer.text).usage;
      assert.equal(usage.completion_tokens, completion);
      assert.equal(usage.cost, Number(c.printed));
    });
  }
});

describe('usage.carbon', () => {
  test('a provider with a parameter count and a zone reports energy and emissions above 0', async () => {
    const answer = await gw.post('/v1/chat/completions', { model: 'green', messages: USER });
    assert.equal(answer.status, 200);
    const { carbon } = answer.body.usage;
    assert.deepEqual(Object.keys(carbon).sort(), ['kWh', 'kgCO2eq']);
    assert.ok(Number.isFinite(carbon.kWh) && carbon.kWh > 0, `kWh ${carbon.kWh}`);
    assert.ok(Number.isFinite(carbon.kgCO2eq) && carbon.kgCO2eq > 0, `kgCO2eq ${carbon.kgCO2eq}`);
  });

  test('a longer answer from the same provider takes more energy', async () => {
    fake.once({ text: 'one two' });
    const short = await gw.post('/v1/chat/completions', { model: 'green', messages: USER });
    fake.once({ text: Array.from({ length: 200 }, () => 'word').join(' ') });
    const long = await gw.post('/v1/chat/completions', { model: 'green', messages: USER });
    assert.ok(long.body.usage.carbon.kWh > short.body.usage.carbon.kWh, `${long.body.usage.carbon.kWh} <= ${short.body.usage.carbon.kWh}`);
    assert.ok(long.body.usage.carbon.kgCO2eq > short.body.usage.carbon.kgCO2eq);
  });

  test('a provider without a parameter count reports 0 kWh and 0 kgCO2eq', async () => {
    const answer = await gw.post('/v1/chat/completions', { model: 'vllm-chat', messages: USER });
    assert.deepEqual(answer.body.usage.carbon, { kWh: 0, kgCO2eq: 0 });
  });
});

describe('a backend that reports no usage', () => {
  const TEXT = 'one two three four five six seven eight';

  test('the gateway counts the tokens itself and still computes the cost', async () => {
    fake.once({ omitUsage: true, text: TEXT });
    const answer = await postJson(gw, '/v1/chat/completions', { model: 'priced-3-10', messages: USER });
    assert.equal(answer.status, 200, answer.text);
    const { usage, choices } = JSON.parse(answer.text);
    assert.equal(choices[0].message.content, TEXT);
    assert.ok(Number.isInteger(usage.prompt_tokens) && usage.prompt_tokens > 0, `prompt_tokens ${usage.prompt_tokens}`);
    assert.equal(usage.completion_tokens, 8, 'eight common English words are eight tokens');
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    assert.deepEqual(printedCosts(answer.text), [exactCost(usage.prompt_tokens, usage.completion_tokens, '3', '10')]);
    assert.ok(usage.cost > 0);
  });

  test('a longer prompt is counted as more prompt tokens', async () => {
    fake.once({ omitUsage: true, text: TEXT });
    const short = await gw.post('/v1/chat/completions', { model: 'vllm-chat', messages: USER });
    fake.once({ omitUsage: true, text: TEXT });
    const longMessages = [{ role: 'system', content: 'You are a helpful assistant who answers briefly.' }, ...USER];
    const long = await gw.post('/v1/chat/completions', { model: 'vllm-chat', messages: longMessages });
    assert.ok(
      long.body.usage.prompt_tokens > short.body.usage.prompt_tokens + 5,
      `${long.body.usage.prompt_tokens} vs ${short.body.usage.prompt_tokens}`,
    );
    assert.equal(long.body.usage.completion_tokens, short.body.usage.completion_tokens);
  });
});
