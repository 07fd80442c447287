// A router whose provider is Anthropic's hosted API (a fake speaking its wire format on
// loopback): OpenAI's SDK chats with it, whole and streamed, tool calls included, and Anthropic's
// SDK reaches it through /v1/messages, where its request passes through as it was made (thinking,
// cache_control and all) and the answer comes back as Anthropic gave it; each answer carries the
// gateway's usage with cost, from Anthropic's token counts (cache reads included); the key goes as
// `x-api-key` and never back to the caller.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import {
  ANTHROPIC_CACHE_READ_TOKENS,
  ANTHROPIC_INPUT_TOKENS,
  ANTHROPIC_TEXT,
  ANTHROPIC_THINKING,
  startFakeAnthropic,
} from '../../support/fake-anthropic.ts';
import { eventually } from '../../support/eventually.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const key = generateKey().secret;
const PROVIDER_KEY = 'sk-ant-provider-key-never-shown';
let fake: FakeBackend;
let gw: TestGateway;

before(async () => {
  fake = await startFakeAnthropic();
  gw = await bed.gateway(
    {
      users: [{ id: 'dev', name: 'Dev', keys: [{ name: 'k', key: '${KEY}' }] }],
      models: [
        {
          id: 'claude',
          type: 'text-generation',
          costs: { prompt_tokens: 3, completion_tokens: 15 },
          providers: [{ model: 'claude-sonnet', type: 'anthropic', args: { api_url: '${FAKE}', api_key: '${PROVIDER_KEY}' } }],
        },
      ],
    },
    { env: { KEY: key, FAKE: fake.url, PROVIDER_KEY } },
  );
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

describe('a router served by Anthropic', () => {
  const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

  test("OpenAI's chat is translated to a Message and back, with Anthropic's token counts in the usage and cost", async () => {
    const answer = await openai().chat.completions.create({
      model: 'claude',
      max_tokens: 30,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
    });
    assert.equal(answer.choices[0]!.message.content, ANTHROPIC_TEXT);
    assert.equal(answer.choices[0]!.finish_reason, 'stop');
    assert.equal(answer.usage!.prompt_tokens, ANTHROPIC_INPUT_TOKENS);
    assert.equal(answer.usage!.completion_tokens, 5);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], PROVIDER_KEY);
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.equal(sent.headers.authorization, undefined);
    assert.deepEqual(sent.body, {
      model: 'claude-sonnet',
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
      max_tokens: 30,
    });
  });

  test('a streamed chat arrives as chat chunks, then the usage', async () => {
    const stream = await openai().chat.completions.create({
      model: 'claude',
      max_tokens: 30,
      stream: true,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    let text = '';
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, ANTHROPIC_TEXT);
    assert.equal(usage?.prompt_tokens, ANTHROPIC_INPUT_TOKENS);
  });

  test('a tool call comes back as tool_calls, whole and streamed; the tool result goes to Anthropic as a tool_result block', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }];
    fake.once({ toolCall: { id: 'toolu_1', name: 'lookup', arguments: '{"q":"tollgate"}' } });
    const whole = await openai().chat.completions.create({
      model: 'claude',
      max_tokens: 30,
      tools,
      messages: [{ role: 'user', content: 'look it up' }],
    });
    assert.equal(whole.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(whole.choices[0]!.message.tool_calls, [
      { id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"tollgate"}' } },
    ]);
    assert.deepEqual(fake.requests.at(-1)!.body.tools, [{ name: 'lookup', input_schema: { type: 'object' } }]);

    fake.once({ toolCall: { id: 'toolu_2', name: 'lookup', arguments: '{"q":"more"}' } });
    const stream = await openai().chat.completions.create({
      model: 'claude',
      max_tokens: 30,
      tools,
      stream: true,
      messages: [{ role: 'user', content: 'again' }],
    });
    let args = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) args += call.function?.arguments ?? '';
      finish ??= chunk.choices[0]?.finish_reason;
    }
    assert.equal(args, '{"q":"more"}');
    assert.equal(finish, 'tool_calls');

    await openai().chat.completions.create({
      model: 'claude',
      max_tokens: 30,
      tools,
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: null, tool_calls: whole.choices[0]!.message.tool_calls! },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'found it' },
      ],
    });
    assert.deepEqual(fake.requests.at(-1)!.body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'look it up' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'tollgate' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found it' }] },
    ]);
  });

  test("Anthropic's SDK reaches it through /v1/messages, streamed too, and an error from it never shows its key", async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude', max_tokens: 30, messages: [{ role: 'user', content: 'Say hello' }] });
    assert.deepEqual(message.content, [{ type: 'text', text: ANTHROPIC_TEXT }]);
    assert.equal(message.usage.input_tokens, ANTHROPIC_INPUT_TOKENS);
    const final = await client.messages
      .stream({ model: 'claude', max_tokens: 30, messages: [{ role: 'user', content: 'Say hello' }] })
      .finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: ANTHROPIC_TEXT }]);

    fake.once({ status: 500 });
    const failed = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(failed.status, 502);
    const text = await failed.text();
    assert.equal(JSON.parse(text).type, 'error');
    assert.ok(!text.includes(PROVIDER_KEY));
  });

  describe('/v1/messages passes through to it', () => {
    // Thinking and a cached system prompt (of about the 100 tokens the fake reads from its cache):
    // neither has words in chat completions.
    const system = 'Answer in one short sentence. '.repeat(16);
    const request = {
      model: 'claude',
      max_tokens: 2048,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      system: [{ type: 'text' as const, text: system, cache_control: { type: 'ephemeral' as const } }],
      messages: [{ role: 'user' as const, content: 'Say hello' }],
    };
    // (13 input + 100 read from the cache) x 3 + 5 output x 15, per million.
    const COST = 0.000414;

    test("the request reaches Anthropic as it was made, and its message comes back as Anthropic gave it, the gateway's cost added", async () => {
      const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
      const message = await client.messages.create(request);
      assert.deepEqual(fake.requests.at(-1)!.body, { ...request, model: 'claude-sonnet' });
      assert.equal(message.model, 'claude');
      assert.equal(message.id, 'msg_fake');
      assert.deepEqual(message.content, [
        { type: 'thinking', thinking: ANTHROPIC_THINKING, signature: 'sig-fake' },
        { type: 'text', text: ANTHROPIC_TEXT },
      ]);
      const usage = message.usage as unknown as Record<string, unknown>;
      assert.equal(usage.input_tokens, ANTHROPIC_INPUT_TOKENS);
      assert.equal(usage.cache_read_input_tokens, ANTHROPIC_CACHE_READ_TOKENS);
      assert.equal(usage.output_tokens, 5);
      assert.equal(usage.cost, COST);
      const record = await eventually(async () => {
        const data = (await gw.get('/v1/usage?limit=1', { authorization: `Bearer ${key}` })).body.data;
        return data[0]?.cost === COST && data[0];
      }, 'the usage recorded');
      assert.equal(record.prompt_tokens, ANTHROPIC_INPUT_TOKENS + ANTHROPIC_CACHE_READ_TOKENS);
      assert.equal(record.completion_tokens, 5);
    });

    test("streamed, Anthropic's own events come through (thinking deltas included), the closing usage with the gateway's cost", async () => {
      const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
      const stream = client.messages.stream(request);
      const types: string[] = [];
      let thinking = '';
      let closing: Record<string, unknown> | undefined;
      for await (const event of stream) {
        if (event.type === 'message_delta') closing = event.usage as unknown as Record<string, unknown>;
        types.push(event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'thinking_delta') thinking += event.delta.thinking;
        if (event.type === 'message_start') assert.equal(event.message.model, 'claude');
      }
      const final = await stream.finalMessage();
      assert.equal(fake.requests.at(-1)!.body.thinking.budget_tokens, 1024);
      assert.equal(thinking, ANTHROPIC_THINKING);
      assert.deepEqual(types.slice(0, 6), [
        'message_start',
        'content_block_start',
        'content_block_delta:thinking_delta',
        'content_block_delta:signature_delta',
        'content_block_stop',
        'content_block_start',
      ]);
      assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
      assert.deepEqual(
        final.content.map((block) => block.type),
        ['thinking', 'text'],
      );
      assert.equal(final.stop_reason, 'end_turn');
      assert.equal(closing?.cost, COST);
      assert.equal(closing?.output_tokens, 5);
    });

    test('a router with a provider of another kind translates instead, and refuses what it cannot say', async () => {
      const other = await bed.gateway(
        {
          users: [{ id: 'dev', name: 'Dev', keys: [{ name: 'k', key: '${KEY}' }] }],
          models: [
            {
              id: 'mixed',
              type: 'text-generation',
              providers: [
                { model: 'claude-sonnet', type: 'anthropic', args: { api_url: '${FAKE}' } },
                { model: 'sim', type: 'simulator' },
              ],
            },
          ],
        },
        { env: { KEY: key, FAKE: fake.url } },
      );
      try {
        const client = new Anthropic({ baseURL: other.url, apiKey: key, maxRetries: 0 });
        await assert.rejects(
          client.messages.create({ ...request, model: 'mixed' }),
          (error: unknown) => error instanceof Anthropic.BadRequestError && /thinking/.test(error.message),
        );
      } finally {
        await other.close();
      }
    });
  });
});
