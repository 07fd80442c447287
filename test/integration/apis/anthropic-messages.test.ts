// Anthropic's Messages API, spoken by the official @anthropic-ai/sdk changed only in its base URL
// and key, against a gateway whose router's backend speaks OpenAI's format (a fake on loopback):
// text, a system prompt, images, a tool_use and tool_result round trip, streaming with
// messages.stream() and its final message, the spec's two errors as the SDK's classes, and the
// request charged to the caller's budget with its usage recorded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const key = generateKey().secret;
const brokeKey = generateKey().secret;
const limitedKey = generateKey().secret;
let fake: FakeBackend;
let gw: TestGateway;
let client: Anthropic;

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [
        { id: 'coder', name: 'Coder', budget: '10', keys: [{ name: 'k', key: '${KEY}' }] },
        { id: 'broke', name: 'Broke', budget: '0.001', keys: [{ name: 'k', key: '${BROKE}' }] },
        { id: 'limited', name: 'Limited', rate_limits: { requests_per_minute: 1 }, keys: [{ name: 'k', key: '${LIMITED}' }] },
      ],
      models: [
        {
          id: 'claude-like',
          type: 'text-generation',
          costs: { prompt_tokens: 1000, completion_tokens: 2000 },
          providers: [{ model: 'upstream-model', type: 'vllm', args: { api_url: '${FAKE}' } }],
        },
        { id: 'embedder', type: 'text-embeddings-inference', providers: [{ model: 'e', type: 'simulator' }] },
      ],
    },
    { env: { KEY: key, BROKE: brokeKey, LIMITED: limitedKey, FAKE: fake.url } },
  );
  client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

describe('Anthropic Messages API through the official SDK', () => {
  test('a message with a system prompt is answered as an Anthropic message, with usage, cost and carbon', async () => {
    const message = await client.messages.create({
      model: 'claude-like',
      max_tokens: 50,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, 'claude-like');
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hello from the fake backend' }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.input_tokens, 11);
    assert.equal(message.usage.output_tokens, 5);
    const usage = message.usage as unknown as { cost: number; carbon: object };
    assert.equal(usage.cost, 0.021, '11 prompt tokens at 1000 and 5 completion tokens at 2000 per million');
    assert.ok(usage.carbon);
    const sent = fake.requests.at(-1)!.body;
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
    assert.equal(sent.max_tokens, 50);
    assert.equal(sent.model, 'upstream-model');
  });

  test('an image block reaches the backend as an image_url part', async () => {
    await client.messages.create({
      model: 'claude-like',
      max_tokens: 20,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    assert.deepEqual(fake.requests.at(-1)!.body.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ]);
  });

  test('tools: the backend calls one, the SDK gets a tool_use block, and the tool_result goes back as a tool message', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ];
    fake.once({ toolCall: { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' } });
    const first = await client.messages.create({
      model: 'claude-like',
      max_tokens: 50,
      tools,
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(first.content, [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]);
    const asked = fake.requests.at(-1)!.body;
    assert.deepEqual(asked.tools, [
      { type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: tools[0]!.input_schema } },
    ]);
    assert.equal(asked.tool_choice, 'required');

    const second = await client.messages.create({
      model: 'claude-like',
      max_tokens: 50,
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny, 21 °C' }] },
      ],
    });
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(fake.requests.at(-1)!.body.messages.slice(1), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21 °C' },
    ]);
  });

  test('messages.stream() gets the whole event sequence: text deltas, then the final message with usage', async () => {
    const stream = client.messages.stream({ model: 'claude-like', max_tokens: 50, messages: [{ role: 'user', content: 'Say hello' }] });
    const types: string[] = [];
    let cost: number | undefined;
    let text = '';
    stream.on('streamEvent', (event) => {
      types.push(event.type);
      if (event.type === 'message_delta') cost = (event.usage as unknown as { cost: number }).cost;
    });
    stream.on('text', (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    assert.equal(text, 'Hello from the fake backend');
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assert.ok(types.includes('content_block_start') && types.includes('content_block_delta') && types.includes('message_delta'));
    assert.deepEqual(final.content, [{ type: 'text', text: 'Hello from the fake backend' }]);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.output_tokens, 5);
    assert.equal(cost, 0.021, "message_delta's usage carries the cost");
  });

  test('a streamed tool call arrives as a tool_use block built from input_json_delta events', async () => {
    fake.once({ toolCall: { id: 'call_2', name: 'get_weather', arguments: '{"city":"Lyon"}' } });
    const final = await client.messages
      .stream({
        model: 'claude-like',
        max_tokens: 50,
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
        messages: [{ role: 'user', content: 'Weather in Lyon?' }],
      })
      .finalMessage();
    assert.deepEqual(final.content, [{ type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Lyon' } }]);
    assert.equal(final.stop_reason, 'tool_use');
  });

  test('count_tokens counts the prompt as the gateway counts a chat prompt, and charges nothing', async () => {
    const params = {
      model: 'claude-like',
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: 'Say hello to everyone here' }],
    };
    const counted = await client.messages.countTokens(params);
    assert.ok(Number.isInteger(counted.input_tokens) && counted.input_tokens > 5, `input_tokens ${counted.input_tokens}`);
    const longer = await client.messages.countTokens({ ...params, system: 'Be brief, and answer in French please.' });
    assert.ok(longer.input_tokens > counted.input_tokens, 'a longer system prompt counts more');
    await assert.rejects(client.messages.countTokens({ ...params, model: 'nope' }), Anthropic.NotFoundError);
  });

  test("the spec's two errors are the SDK's NotFoundError and BadRequestError, in Anthropic's envelope", async () => {
    await assert.rejects(
      client.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => error instanceof Anthropic.NotFoundError && (error.error as { type: string }).type === 'error',
    );
    await assert.rejects(
      client.messages.create({ model: 'embedder', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => error instanceof Anthropic.BadRequestError,
    );
    const raw = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-like', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(raw.status, 400);
    assert.deepEqual(await raw.json(), {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: is required' },
    });
    const anonymous = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as { error: { type: string } }).error.type, 'authentication_error');
  });

  test("a budget too small is the SDK's 402 (billing_error), with the gateway's sentence", async () => {
    const broke = new Anthropic({ baseURL: gw.url, apiKey: brokeKey, maxRetries: 0 });
    await assert.rejects(
      broke.messages.create({ model: 'claude-like', max_tokens: 500, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) =>
        error instanceof Anthropic.APIError &&
        error.status === 402 &&
        (error.error as { error: { type: string; message: string } }).error.type === 'billing_error' &&
        /^Insufficient budget: /.test((error.error as { error: { message: string } }).error.message),
    );
  });

  test("a rate limit is the SDK's RateLimitError (rate_limit_error), with Retry-After", async () => {
    const limited = new Anthropic({ baseURL: gw.url, apiKey: limitedKey, maxRetries: 0 });
    await limited.messages.create({ model: 'claude-like', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    await assert.rejects(
      limited.messages.create({ model: 'claude-like', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) =>
        error instanceof Anthropic.RateLimitError &&
        (error.error as { error: { type: string } }).error.type === 'rate_limit_error' &&
        Number(error.headers?.get('retry-after')) >= 1,
    );
  });

  test('a stream the backend breaks off ends with an error event after the usage of what was produced, and that is what is charged', async () => {
    fake.once({ breakAfterChunks: 2 });
    const events: { type: string; usage?: { output_tokens: number } }[] = [];
    const stream = client.messages.stream({ model: 'claude-like', max_tokens: 50, messages: [{ role: 'user', content: 'Say hello' }] });
    stream.on('streamEvent', (event) => events.push(event as never));
    await assert.rejects(stream.finalMessage());
    const delta = events.find((e) => e.type === 'message_delta');
    assert.ok(delta && delta.usage!.output_tokens >= 1, 'the usage of the words that reached the client');
    const records = await eventually(async () => {
      const data = (await gw.get('/v1/usage?limit=1', { authorization: `Bearer ${key}` })).body.data;
      return data[0]?.incomplete === true && data;
    }, 'the cut stream recorded');
    assert.equal(records[0].completion_tokens, delta!.usage!.output_tokens);
  });

  test('what a message cost is charged to the caller and recorded as a chat request', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const before = (await gw.get('/v1/me', auth)).body.spent;
    await client.messages.create({ model: 'claude-like', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const me = await eventually(async () => {
      const now = (await gw.get('/v1/me', auth)).body;
      return now.spent > before && now;
    }, 'the cost charged');
    assert.ok(Math.abs(me.spent - before - 0.021) < 1e-9);
    const records = (await gw.get('/v1/usage?limit=1', auth)).body.data;
    assert.equal(records[0].endpoint, 'chat');
    assert.equal(records[0].cost, 0.021);
    // The metrics tell the APIs apart: the chat endpoint, spoken in Anthropic's.
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(
      metrics,
      /tollgate_requests_total\{router="claude-like",provider="[^"]+",endpoint="chat",api="anthropic-messages",status="200"\} [1-9]/,
    );
  });
});
