// OpenAI's Responses API through the official `openai` SDK, against a gateway whose router's
// backend only has chat completions (a fake on loopback): text, instructions, a function call
// round trip, previous_response_id continuing a stored conversation, streaming events, retrieve
// and delete, another user's response refused, hosted tools refused, and what it cost charged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const key = generateKey().secret;
const otherKey = generateKey().secret;
const brokeKey = generateKey().secret;
const limitedKey = generateKey().secret;
let fake: FakeBackend;
let gw: TestGateway;
let client: OpenAI;

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [
        { id: 'dev', name: 'Dev', budget: '1000', keys: [{ name: 'k', key: '${KEY}' }] },
        { id: 'other', name: 'Other', keys: [{ name: 'k', key: '${OTHER}' }] },
        { id: 'broke', name: 'Broke', budget: '0.001', keys: [{ name: 'k', key: '${BROKE}' }] },
        { id: 'limited', name: 'Limited', rate_limits: { requests_per_minute: 1 }, keys: [{ name: 'k', key: '${LIMITED}' }] },
      ],
      models: [
        {
          id: 'gpt-like',
          type: 'text-generation',
          costs: { prompt_tokens: 1000, completion_tokens: 2000 },
          providers: [{ model: 'upstream-model', type: 'vllm', args: { api_url: '${FAKE}' } }],
        },
      ],
    },
    { env: { KEY: key, OTHER: otherKey, BROKE: brokeKey, LIMITED: limitedKey, FAKE: fake.url } },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

describe('the Responses API through the official SDK', () => {
  test('text with instructions: a completed Response with output_text and usage with cost', async () => {
    const response = await client.responses.create({
      model: 'gpt-like',
      instructions: 'Be brief.',
      input: 'Say hello',
      max_output_tokens: 40,
    });
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'completed');
    assert.equal(response.model, 'gpt-like');
    assert.equal(response.output_text, 'Hello from the fake backend');
    assert.equal(response.usage?.input_tokens, 11);
    assert.equal(response.usage?.output_tokens, 5);
    assert.equal((response.usage as unknown as { cost: number }).cost, 0.021);
    const sent = fake.requests.at(-1)!.body;
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
    assert.equal(sent.max_tokens, 40);
  });

  test('a function call round trip, then previous_response_id continues the stored conversation', async () => {
    const tools = [
      { type: 'function' as const, name: 'get_time', description: 'Now', parameters: { type: 'object', properties: {} }, strict: false },
    ];
    fake.once({ toolCall: { id: 'call_9', name: 'get_time', arguments: '{}' } });
    const first = await client.responses.create({ model: 'gpt-like', input: 'What time is it?', tools });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    assert.deepEqual([call.call_id, call.name, call.arguments], ['call_9', 'get_time', '{}']);

    const second = await client.responses.create({
      model: 'gpt-like',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_9', output: '12:00' }],
      tools,
    });
    assert.equal(second.output_text, 'Hello from the fake backend');
    assert.equal(second.previous_response_id, first.id);
    assert.deepEqual(fake.requests.at(-1)!.body.messages, [
      { role: 'user', content: 'What time is it?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_9', content: '12:00' },
    ]);
  });

  test('streaming emits the Responses events, ending with response.completed and its usage', async () => {
    const stream = await client.responses.create({ model: 'gpt-like', input: 'Say hello', stream: true });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(text, 'Hello from the fake backend');
    assert.equal(types[0], 'response.created');
    assert.ok(types.includes('response.output_item.added') && types.includes('response.output_item.done'));
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(completed?.usage?.output_tokens, 5);
    // Stored like a whole one.
    assert.equal((await client.responses.retrieve(completed!.id)).output_text, 'Hello from the fake backend');
  });

  test('retrieve and delete a stored response; another user never reaches it; store: false keeps nothing', async () => {
    const response = await client.responses.create({ model: 'gpt-like', input: 'Say hello', metadata: { ticket: 'T-1' } });
    const read = await client.responses.retrieve(response.id);
    assert.equal(read.id, response.id);
    assert.deepEqual(read.metadata, { ticket: 'T-1' });
    const other = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: otherKey, maxRetries: 0 });
    await assert.rejects(other.responses.retrieve(response.id), OpenAI.NotFoundError);
    await assert.rejects(
      other.responses.create({ model: 'gpt-like', input: 'continue', previous_response_id: response.id }),
      OpenAI.NotFoundError,
    );
    await client.responses.delete(response.id);
    await assert.rejects(client.responses.retrieve(response.id), OpenAI.NotFoundError);
    const unstored = await client.responses.create({ model: 'gpt-like', input: 'Say hello', store: false });
    await assert.rejects(client.responses.retrieve(unstored.id), OpenAI.NotFoundError);
  });

  test("hosted tools are refused with a 400 that says so, and the spec's errors keep their classes", async () => {
    await assert.rejects(
      client.responses.create({ model: 'gpt-like', input: 'search', tools: [{ type: 'web_search_preview' }] }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /hosted tools \(web_search_preview\)/.test(error.message),
    );
    await assert.rejects(client.responses.create({ model: 'nope', input: 'hi' }), OpenAI.NotFoundError);
  });

  test('text.format json_schema reaches the backend as response_format', async () => {
    await client.responses.create({
      model: 'gpt-like',
      input: 'give json',
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
      },
    });
    assert.deepEqual(fake.requests.at(-1)!.body.response_format, {
      type: 'json_schema',
      json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
    });
  });

  test("a budget too small is a 402 and a rate limit a 429, in OpenAI's envelope, as for chat", async () => {
    const broke = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: brokeKey, maxRetries: 0 });
    await assert.rejects(
      broke.responses.create({ model: 'gpt-like', input: 'hi', max_output_tokens: 500 }),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 402 && error.code === 'insufficient_budget',
    );
    const limited = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: limitedKey, maxRetries: 0 });
    await limited.responses.create({ model: 'gpt-like', input: 'hi', max_output_tokens: 5 });
    await assert.rejects(
      limited.responses.create({ model: 'gpt-like', input: 'hi', max_output_tokens: 5 }),
      (error: unknown) => error instanceof OpenAI.RateLimitError && error.code === 'rate_limit_exceeded',
    );
  });

  test('a stream the backend breaks off ends with response.failed, whose usage is what was produced and charged', async () => {
    fake.once({ breakAfterChunks: 2 });
    const stream = await client.responses.create({ model: 'gpt-like', input: 'Say hello', stream: true });
    let failed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.failed') failed = event.response;
    assert.equal(failed?.status, 'failed');
    assert.ok((failed?.usage?.output_tokens ?? 0) >= 1);
    const record = await eventually(async () => {
      const data = (await gw.get('/v1/usage?limit=1', { authorization: `Bearer ${key}` })).body.data;
      return data[0]?.incomplete === true && data[0];
    }, 'the cut stream recorded');
    assert.equal(record.completion_tokens, failed!.usage!.output_tokens);
  });
});
