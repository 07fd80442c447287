// OpenAI's Responses API passing through to a router served by OpenAI itself (an `openai`
// provider, a fake on loopback that speaks /v1/responses): the request goes as the caller made it
// (hosted tools included), not stored there, with Tollgate's stored conversation before its input
// on previous_response_id; the Response and its events come back as OpenAI made them, with
// Tollgate's id (stored, retrievable), the router's name, and the cost added and charged.
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
const PROVIDER_KEY = 'sk-openai-provider-key-never-shown';
let fake: FakeBackend;
let gw: TestGateway;
let client: OpenAI;
// 11 input tokens at 1000 and 5 output tokens at 2000, per million.
const COST = 0.021;

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [{ id: 'dev', name: 'Dev', budget: '1000', keys: [{ name: 'k', key: '${KEY}' }] }],
      models: [
        {
          id: 'gpt',
          type: 'text-generation',
          costs: { prompt_tokens: 1000, completion_tokens: 2000 },
          providers: [{ model: 'gpt-upstream', type: 'openai', args: { api_url: '${FAKE}', api_key: '${PROVIDER_KEY}' } }],
        },
      ],
    },
    { env: { KEY: key, FAKE: fake.url, PROVIDER_KEY } },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

describe('the Responses API passing through to OpenAI', () => {
  test("a hosted tool goes through; the Response is OpenAI's, with Tollgate's id, the router's name and the cost", async () => {
    const response = await client.responses.create({
      model: 'gpt',
      input: 'Say hello',
      tools: [{ type: 'web_search' }],
      metadata: { run: '1' },
    });
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/responses');
    assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    assert.deepEqual(sent.body, {
      model: 'gpt-upstream',
      input: 'Say hello',
      tools: [{ type: 'web_search' }],
      metadata: { run: '1' },
      store: false,
    });
    assert.match(response.id, /^resp_[0-9a-f]{24}$/);
    assert.notEqual(response.id, 'resp_fake');
    assert.equal(response.model, 'gpt');
    assert.equal((response as unknown as { store: boolean }).store, true);
    assert.equal(response.output_text, 'Hello from the fake backend');
    assert.equal(response.usage?.input_tokens, 11);
    assert.equal(response.usage?.output_tokens, 5);
    assert.equal((response.usage as unknown as { cost: number }).cost, COST);
    const stored = await client.responses.retrieve(response.id);
    assert.equal(stored.output_text, 'Hello from the fake backend');
    const record = await eventually(async () => {
      const data = (await gw.get('/v1/usage?limit=1', { authorization: `Bearer ${key}` })).body.data;
      return data[0]?.cost === COST && data[0];
    }, 'the usage recorded');
    assert.equal(record.prompt_tokens, 11);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(
      metrics,
      /tollgate_requests_total\{router="gpt",provider="[^"]+",endpoint="chat",api="openai-responses",status="200"\} [1-9]/,
    );
  });

  test('previous_response_id sends the stored conversation to OpenAI as input items, since OpenAI never stored it', async () => {
    const first = await client.responses.create({ model: 'gpt', input: 'Say hello' });
    await client.responses.create({ model: 'gpt', input: 'And again', previous_response_id: first.id });
    const sent = fake.requests.at(-1)!.body;
    assert.equal(sent.previous_response_id, undefined);
    assert.equal(sent.store, false);
    assert.deepEqual(sent.input, [
      { role: 'user', content: 'Say hello' },
      { role: 'assistant', content: 'Hello from the fake backend' },
      { role: 'user', content: 'And again' },
    ]);
  });

  test("streamed, OpenAI's events come through, numbered on, the Response in them Tollgate's, the completed one with the cost", async () => {
    const stream = await client.responses.create({ model: 'gpt', input: 'Say hello', stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    let created: OpenAI.Responses.Response | undefined;
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.created') created = event.response;
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(fake.requests.at(-1)!.body.stream, true);
    assert.equal(text, 'Hello from the fake backend');
    assert.deepEqual(types.slice(0, 3), ['response.created', 'response.in_progress', 'response.output_item.added']);
    assert.deepEqual(types.slice(-2), ['response.output_item.done', 'response.completed']);
    assert.deepEqual(
      sequence,
      sequence.map((_, i) => i),
    );
    assert.equal(created?.model, 'gpt');
    assert.equal(completed?.id, created?.id);
    assert.match(completed!.id, /^resp_/);
    assert.equal((completed!.usage as unknown as { cost: number }).cost, COST);
    assert.equal((await client.responses.retrieve(completed!.id)).output_text, 'Hello from the fake backend');
  });

  test('a server declared openai without a Responses API of its own (404) is sent the chat translation instead', async () => {
    fake.once({ status: 404 });
    const response = await client.responses.create({ model: 'gpt', input: 'Say hello' });
    assert.deepEqual(
      fake.requests.slice(-2).map((request) => request.path),
      ['/v1/responses', '/v1/chat/completions'],
    );
    assert.equal(response.output_text, 'Hello from the fake backend');
    assert.equal((response.usage as unknown as { cost: number }).cost, COST);
    assert.equal((await client.responses.retrieve(response.id)).output_text, 'Hello from the fake backend');
  });

  test('a function call round trip passes through too', async () => {
    fake.once({ toolCall: { id: 'call_7', name: 'get_time', arguments: '{}' } });
    const tools = [{ type: 'function' as const, name: 'get_time', parameters: { type: 'object', properties: {} }, strict: false }];
    const first = await client.responses.create({ model: 'gpt', input: 'What time is it?', tools });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call' && call.call_id === 'call_7');
    await client.responses.create({
      model: 'gpt',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_7', output: 'noon' }],
      tools,
    });
    assert.deepEqual(fake.requests.at(-1)!.body.input, [
      { role: 'user', content: 'What time is it?' },
      { type: 'function_call', call_id: 'call_7', name: 'get_time', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_7', output: 'noon' },
    ]);
  });
});
