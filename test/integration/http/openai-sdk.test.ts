// The official `openai` npm client works against the gateway with only its baseURL and apiKey
// changed: listing models, chat (whole and streamed), embeddings, and the SDK's own error classes
// for the two errors of spec section 7.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../../support/gateway.ts';
import { exactCost } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

/** Fields the gateway adds to OpenAI's usage object (spec 2.5). */
interface GatewayUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  carbon: { kWh: number; kgCO2eq: number };
}

const CONFIG: GatewayConfig = {
  models: [
    {
      id: 'tollgate-chat',
      type: 'text-generation',
      aliases: ['gpt-4o-mini'],
      max_context_length: 8192,
      costs: { prompt_tokens: '0.15', completion_tokens: '0.6' },
      providers: [
        { model: 'simulated-llama-3.1-8b', type: 'simulator', args: { completion_tokens: 12 }, carbon: { params_total_b: 8, zone: 'FRA' } },
      ],
    },
    { id: 'meta-llama/Llama-3.1-8B', type: 'text-generation', providers: [{ model: 'llama', type: 'simulator' }] },
    {
      id: 'tollgate-embed',
      type: 'text-embeddings-inference',
      aliases: ['text-embedding-3-small'],
      costs: { prompt_tokens: '0.02', completion_tokens: '0' },
      providers: [{ model: 'bge', type: 'simulator' }],
    },
  ],
};

let gw: TestGateway;
let client: OpenAI;

before(async () => {
  gw = await bed.gateway(CONFIG);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.adminKey, maxRetries: 0 });
});

function assertUsage(usage: unknown, prices: [string, string]): GatewayUsage {
  const u = usage as GatewayUsage;
  assert.ok(u, 'the answer has usage');
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
  assert.equal(u.cost, Number(exactCost(u.prompt_tokens, u.completion_tokens, ...prices)));
  assert.equal(typeof u.carbon.kWh, 'number');
  assert.equal(typeof u.carbon.kgCO2eq, 'number');
  return u;
}

describe('the openai SDK, pointed at the gateway', () => {
  test('models.list() returns the routers, with the spec 2.4 fields', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    assert.deepEqual(
      models.map((m) => m.id),
      ['tollgate-chat', 'meta-llama/Llama-3.1-8B', 'tollgate-embed'],
    );
    const chat = models[0] as unknown as { type: string; aliases: string[]; max_context_length: number; object: string };
    assert.deepEqual(
      { object: chat.object, type: chat.type, aliases: chat.aliases, max_context_length: chat.max_context_length },
      {
        object: 'model',
        type: 'text-generation',
        aliases: ['gpt-4o-mini'],
        max_context_length: 8192,
      },
    );
  });

  test('models.retrieve() finds a model by alias and by a name with a slash', async () => {
    assert.equal((await client.models.retrieve('gpt-4o-mini')).id, 'tollgate-chat');
    assert.equal((await client.models.retrieve('meta-llama/Llama-3.1-8B')).id, 'meta-llama/Llama-3.1-8B');
  });

  test('chat.completions.create() answers with the router id and a priced usage block', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.model, 'tollgate-chat');
    assert.equal(completion.choices.length, 1);
    assert.equal(completion.choices[0]!.message.role, 'assistant');
    assert.equal(completion.choices[0]!.message.content!.split(' ').length, 12);
    const usage = assertUsage(completion.usage, ['0.15', '0.6']);
    assert.equal(usage.completion_tokens, 12);
    assert.ok(usage.carbon.kWh > 0 && usage.carbon.kgCO2eq > 0);
  });

  test('a streamed chat yields the chunks, then a final chunk with the usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'tollgate-chat',
      messages: [{ role: 'user', content: 'Hello there' }],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      assert.equal(chunk.model, 'tollgate-chat');
      text += chunk.choices[0]?.delta.content ?? '';
    }
    assert.equal(text.split(' ').length, 6);
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    const usage = assertUsage(last.usage, ['0.15', '0.6']);
    assert.equal(usage.completion_tokens, 6);
    assert.equal(chunks.filter((c) => c.usage).length, 1);
  });

  test('embeddings.create() returns one vector per input, with usage', async () => {
    const answer = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['first', 'second'] });
    assert.equal(answer.model, 'tollgate-embed');
    assert.equal(answer.data.length, 2);
    for (const [i, item] of answer.data.entries()) {
      assert.equal(item.index, i);
      assert.equal(item.embedding.length, 16);
      assert.ok(item.embedding.every((x) => typeof x === 'number' && Number.isFinite(x)));
    }
    const usage = assertUsage(answer.usage, ['0.02', '0']);
    assert.ok(usage.prompt_tokens > 0);
  });

  test('embeddings.create() with explicit float and base64 encodings give the same vectors', async () => {
    const floats = await client.embeddings.create({ model: 'tollgate-embed', input: 'same text', encoding_format: 'float' });
    const decoded = await client.embeddings.create({ model: 'tollgate-embed', input: 'same text' });
    const expected = floats.data[0]!.embedding;
    const actual = decoded.data[0]!.embedding;
    assert.equal(actual.length, expected.length);
    for (const [i, x] of actual.entries()) assert.ok(Math.abs(x - expected[i]!) < 1e-6, `component ${i}`);
  });

  test('an unknown model raises OpenAI.NotFoundError with the gateway message and code', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.NotFoundError, `got ${String(error)}`);
        assert.equal(error.status, 404);
        assert.equal(error.code, 'model_not_found');
        assert.equal(error.param, 'model');
        assert.match(error.message, /Model not found/);
        return true;
      },
    );
  });

  test('an unknown model on models.retrieve() raises OpenAI.NotFoundError', async () => {
    await assert.rejects(client.models.retrieve('no-such-model'), OpenAI.NotFoundError);
  });

  test('the wrong model type raises OpenAI.BadRequestError', async () => {
    await assert.rejects(client.embeddings.create({ model: 'tollgate-chat', input: 'x' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, `got ${String(error)}`);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'wrong_model_type');
      assert.match(error.message, /Wrong model type/);
      return true;
    });
    await assert.rejects(
      client.chat.completions.create({ model: 'tollgate-embed', messages: [{ role: 'user', content: 'Hi' }] }),
      OpenAI.BadRequestError,
    );
  });

  test('an invalid request raises OpenAI.BadRequestError naming the field', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'tollgate-chat', messages: [] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.param, 'messages');
      return true;
    });
  });
});
