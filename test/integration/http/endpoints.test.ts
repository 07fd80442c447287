// The other inference endpoints, each through a real backend on loopback (the fake OpenAI server,
// and a fake TEI server) and through the built-in simulator: /v1/completions, /v1/embeddings and
// /v1/rerank. Each answer carries the router's name and a usage block priced by spec 8.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { DEFAULT_TEXT, startFakeOpenAI } from '../../support/fake-openai.ts';
import { fakeVector, startFakeTei } from '../../support/fake-tei.ts';
import type { FakeBackend, RecordedRequest } from '../../support/fake-server.ts';
import { assertError, exactCost, postJson, printedCosts } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

const API_KEY = 'sk-endpoints-key-9876';
const NO_CARBON = { kWh: 0, kgCO2eq: 0 };

let fake: FakeBackend;
let tei: FakeBackend;
let gw: TestGateway;

before(async () => {
  fake = await startFakeOpenAI();
  tei = await startFakeTei();
  const args = { api_url: fake.url, api_key: '${KEY}' };
  const config: GatewayConfig = {
    models: [
      {
        id: 'gpt-instruct',
        type: 'text-generation',
        costs: { prompt_tokens: '1.5', completion_tokens: '2' },
        providers: [{ model: 'gpt-3.5-turbo-instruct', type: 'openai', args }],
      },
      {
        id: 'openai-embed',
        type: 'text-embeddings-inference',
        costs: { prompt_tokens: '2', completion_tokens: '0' },
        providers: [{ model: 'text-embedding-3-small', type: 'openai', args }],
      },
      {
        id: 'vllm-embed',
        type: 'text-embeddings-inference',
        costs: { prompt_tokens: '0.13', completion_tokens: '0' },
        providers: [{ model: 'BAAI/bge-m3', type: 'vllm', args }],
      },
      {
        id: 'vllm-rerank',
        type: 'text-classification',
        aliases: ['reranker'],
        costs: { prompt_tokens: '5', completion_tokens: '0' },
        providers: [{ model: 'BAAI/bge-reranker-v2-m3', type: 'vllm', args }],
      },
      { id: 'mistral-only', type: 'text-generation', providers: [{ model: 'mistral-small', type: 'mistral', args }] },
      {
        id: 'tei-embed',
        type: 'text-embeddings-inference',
        costs: { prompt_tokens: '1', completion_tokens: '0' },
        providers: [{ model: 'bge-small', type: 'tei', args: { api_url: tei.url } }],
      },
      {
        id: 'tei-rerank',
        type: 'text-classification',
        costs: { prompt_tokens: '1', completion_tokens: '0' },
        providers: [{ model: 'bge-reranker', type: 'tei', args: { api_url: tei.url } }],
      },
      {
        id: 'sim-chat',
        type: 'text-generation',
        costs: { prompt_tokens: '0.15', completion_tokens: '0.6' },
        providers: [{ model: 'sim-llm', type: 'simulator' }],
      },
      {
        id: 'sim-embed',
        type: 'text-embeddings-inference',
        costs: { prompt_tokens: '0.02', completion_tokens: '0' },
        providers: [{ model: 'sim-embed', type: 'simulator' }],
      },
      {
        id: 'sim-rerank',
        type: 'text-classification',
        costs: { prompt_tokens: '0.02', completion_tokens: '0' },
        providers: [{ model: 'sim-rerank', type: 'simulator' }],
      },
    ],
  };
  gw = await bed.gateway(config, { env: { KEY: API_KEY } });
});

after(async () => {
  await fake.close();
  await tei.close();
});

function lastRequest(backend: FakeBackend): RecordedRequest {
  const request = backend.requests.at(-1);
  assert.ok(request, 'the backend received no request');
  return request;
}

/** Checks the usage block is consistent with itself and priced exactly by spec 8. */
function assertPricedUsage(text: string, prices: [string, string]): { prompt_tokens: number; completion_tokens: number } {
  const usage = JSON.parse(text).usage;
  assert.ok(Number.isInteger(usage.prompt_tokens) && Number.isInteger(usage.completion_tokens), JSON.stringify(usage));
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.deepEqual(printedCosts(text), [exactCost(usage.prompt_tokens, usage.completion_tokens, ...prices)]);
  assert.equal(typeof usage.carbon.kWh, 'number');
  assert.equal(typeof usage.carbon.kgCO2eq, 'number');
  return usage;
}

describe('POST /v1/completions', () => {
  test('through an openai backend: prompt and provider model go upstream, the text and priced usage come back', async () => {
    const answer = await postJson(gw, '/v1/completions', {
      model: 'gpt-instruct',
      prompt: 'Once upon a time',
      max_tokens: 16,
      temperature: 0,
    });
    assert.equal(answer.status, 200, answer.text);
    const request = lastRequest(fake);
    assert.equal(request.path, '/v1/completions');
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    assert.deepEqual(request.body, { model: 'gpt-3.5-turbo-instruct', prompt: 'Once upon a time', max_tokens: 16, temperature: 0 });
    const body = JSON.parse(answer.text);
    assert.equal(body.object, 'text_completion');
    assert.equal(body.model, 'gpt-instruct');
    assert.deepEqual(body.choices, [{ index: 0, text: DEFAULT_TEXT, finish_reason: 'stop', logprobs: null }]);
    assert.deepEqual(body.usage, {
      prompt_tokens: 11,
      completion_tokens: 5,
      total_tokens: 16,
      cost: Number(exactCost(11, 5, '1.5', '2')),
      carbon: NO_CARBON,
    });
    assert.deepEqual(printedCosts(answer.text), ['0.000027']);
  });

  test('through the simulator: max_tokens words, finish_reason length, priced usage', async () => {
    const answer = await postJson(gw, '/v1/completions', { model: 'sim-chat', prompt: 'The gateway', max_tokens: 6 });
    assert.equal(answer.status, 200, answer.text);
    const body = JSON.parse(answer.text);
    assert.equal(body.object, 'text_completion');
    assert.equal(body.model, 'sim-chat');
    assert.equal(body.choices.length, 1);
    assert.equal(body.choices[0].text.split(' ').length, 6);
    assert.equal(body.choices[0].finish_reason, 'length');
    const usage = assertPricedUsage(answer.text, ['0.15', '0.6']);
    assert.equal(usage.completion_tokens, 6);
    assert.ok(usage.prompt_tokens > 0);
  });

  test('a router whose providers cannot serve the endpoint (Mistral has no legacy completions) is a 400 that says so', async () => {
    const before = fake.requests.length;
    const answer = await postJson(gw, '/v1/completions', { model: 'mistral-only', prompt: 'Hi' });
    assertError(answer, { status: 400, code: 'unsupported_endpoint', message: /mistral-only.*\/v1\/completions/, param: 'model' });
    assert.equal(fake.requests.length, before, 'nothing was sent upstream');
  });
});

describe('POST /v1/embeddings', () => {
  test('through an openai backend: vectors pass through, usage has the prompt tokens, a cost and zero carbon', async () => {
    const answer = await postJson(gw, '/v1/embeddings', {
      model: 'openai-embed',
      input: ['first text', 'second text'],
      encoding_format: 'float',
    });
    assert.equal(answer.status, 200, answer.text);
    const request = lastRequest(fake);
    assert.equal(request.path, '/v1/embeddings');
    assert.deepEqual(request.body, { model: 'text-embedding-3-small', input: ['first text', 'second text'], encoding_format: 'float' });
    const body = JSON.parse(answer.text);
    assert.equal(body.object, 'list');
    assert.equal(body.model, 'openai-embed');
    assert.deepEqual(body.data, [
      { object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] },
      { object: 'embedding', index: 1, embedding: [0.1, 0.2, 0.3] },
    ]);
    assert.deepEqual(body.usage, { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7, cost: 0.000014, carbon: NO_CARBON });
    assert.deepEqual(printedCosts(answer.text), [exactCost(7, 0, '2', '0')]);
  });

  test('through a vllm backend: a cost below one micro-unit rounds to the nearest 0.000001', async () => {
    const answer = await postJson(gw, '/v1/embeddings', { model: 'vllm-embed', input: 'hello' });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(lastRequest(fake).body.model, 'BAAI/bge-m3');
    // 7 tokens at 0.13 per million is 0.91e-6, which rounds to 0.000001.
    assert.deepEqual(printedCosts(answer.text), ['0.000001']);
  });

  test('a backend that reports no usage: the gateway counts the input tokens', async () => {
    fake.once({ omitUsage: true });
    const answer = await postJson(gw, '/v1/embeddings', { model: 'openai-embed', input: ['one two three', 'four five'] });
    assert.equal(answer.status, 200, answer.text);
    const usage = assertPricedUsage(answer.text, ['2', '0']);
    assert.equal(usage.prompt_tokens, 5, 'five common English words are five tokens');
    assert.equal(usage.completion_tokens, 0);
  });

  test('through a TEI backend (which reports no usage): vectors in input order, tokens counted by the gateway', async () => {
    const answer = await postJson(gw, '/v1/embeddings', { model: 'tei-embed', input: ['alpha beta', 'gamma'] });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(lastRequest(tei).path, '/embed');
    const body = JSON.parse(answer.text);
    assert.equal(body.model, 'tei-embed');
    assert.deepEqual(
      body.data.map((d: { index: number; embedding: number[] }) => [d.index, d.embedding]),
      [
        [0, fakeVector(0)],
        [1, fakeVector(1)],
      ],
    );
    const usage = assertPricedUsage(answer.text, ['1', '0']);
    assert.ok(usage.prompt_tokens > 0);
    assert.deepEqual(body.usage.carbon, NO_CARBON);
  });

  test('through the simulator: one unit vector per input, of the requested dimensions, repeatable', async () => {
    const ask = () => postJson(gw, '/v1/embeddings', { model: 'sim-embed', input: ['same text', 'other text'], dimensions: 8 });
    const first = await ask();
    assert.equal(first.status, 200, first.text);
    const body = JSON.parse(first.text);
    assert.equal(body.object, 'list');
    assert.equal(body.model, 'sim-embed');
    assert.deepEqual(
      body.data.map((d: { index: number }) => d.index),
      [0, 1],
    );
    for (const { embedding } of body.data) {
      assert.equal(embedding.length, 8);
      assert.ok(Math.abs(Math.hypot(...embedding) - 1) < 1e-9, 'unit length');
    }
    assert.notDeepEqual(body.data[0].embedding, body.data[1].embedding);
    assert.deepEqual(JSON.parse((await ask()).text).data, body.data, 'the same input gives the same vectors');
    const usage = assertPricedUsage(first.text, ['0.02', '0']);
    assert.ok(usage.prompt_tokens > 0);
    assert.equal(usage.completion_tokens, 0);
    assert.deepEqual(body.usage.carbon, NO_CARBON);
  });
});

describe('POST /v1/rerank', () => {
  const documents = ['Paris is the capital of France', 'The cat sleeps', 'France has many cities'];

  test('through a vllm backend: results pass through unchanged, cost from the reported tokens', async () => {
    const answer = await postJson(gw, '/v1/rerank', { model: 'reranker', query: 'capital of France', documents, top_n: 3 });
    assert.equal(answer.status, 200, answer.text);
    const request = lastRequest(fake);
    assert.equal(request.path, '/v1/rerank');
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    assert.deepEqual(request.body, { model: 'BAAI/bge-reranker-v2-m3', query: 'capital of France', documents, top_n: 3 });
    const body = JSON.parse(answer.text);
    assert.equal(body.model, 'vllm-rerank');
    assert.equal(body.id, 'rerank-1');
    // What the fake backend answered, untouched.
    assert.deepEqual(
      body.results,
      documents.map((document, index) => ({ index, relevance_score: 1 / (index + 1), document: { text: document } })),
    );
    // The backend reports total_tokens only (9): all of it is input.
    assert.deepEqual(body.usage, {
      total_tokens: 9,
      prompt_tokens: 9,
      completion_tokens: 0,
      cost: Number(exactCost(9, 0, '5', '0')),
      carbon: NO_CARBON,
    });
    assert.deepEqual(printedCosts(answer.text), ['0.000045']);
  });

  test('through a TEI backend: best first, top_n kept, tokens counted by the gateway', async () => {
    const answer = await postJson(gw, '/v1/rerank', { model: 'tei-rerank', query: 'capital of France', documents, top_n: 2 });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(lastRequest(tei).path, '/rerank');
    const body = JSON.parse(answer.text);
    assert.equal(body.model, 'tei-rerank');
    assert.deepEqual(
      body.results.map((r: { index: number }) => r.index),
      [0, 2],
    );
    assert.deepEqual(body.results[0].document, { text: documents[0] });
    const usage = assertPricedUsage(answer.text, ['1', '0']);
    assert.ok(usage.prompt_tokens > 0);
  });

  test('through the simulator: results sorted by relevance, top_n respected, priced usage', async () => {
    const answer = await postJson(gw, '/v1/rerank', { model: 'sim-rerank', query: 'capital of France', documents, top_n: 2 });
    assert.equal(answer.status, 200, answer.text);
    const body = JSON.parse(answer.text);
    assert.equal(body.model, 'sim-rerank');
    assert.equal(body.results.length, 2);
    assert.ok(body.results[0].relevance_score >= body.results[1].relevance_score);
    assert.equal(body.results[0].index, 0, 'the document sharing most words with the query ranks first');
    assert.deepEqual(body.results[0].document, { text: documents[0] });
    const usage = assertPricedUsage(answer.text, ['0.02', '0']);
    assert.ok(usage.prompt_tokens > 0);
    assert.deepEqual(body.usage.carbon, NO_CARBON);
  });
});
