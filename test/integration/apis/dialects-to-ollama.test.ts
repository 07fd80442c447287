// Anthropic's Messages API and OpenAI's Responses API on a router served by Ollama (a fake of its
// native API on loopback): both are translated to chat, which the Ollama adapter speaks as
// /api/chat, and back, whole and streamed, with Ollama's token counts in the usage and the cost.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { DEFAULT_TEXT, PROMPT_TOKENS, startFakeOllama } from '../../support/fake-ollama.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const key = generateKey().secret;
let fake: FakeBackend;
let gw: TestGateway;
// 11 prompt tokens at 1000 and 5 answered words at 2000, per million.
const COST = 0.021;

before(async () => {
  fake = await startFakeOllama();
  gw = await bed.gateway(
    {
      users: [{ id: 'dev', name: 'Dev', keys: [{ name: 'k', key: '${KEY}' }] }],
      models: [
        {
          id: 'local',
          type: 'text-generation',
          costs: { prompt_tokens: 1000, completion_tokens: 2000 },
          providers: [{ model: 'llama3.2', type: 'ollama', args: { api_url: '${FAKE}' } }],
        },
      ],
    },
    { env: { KEY: key, FAKE: fake.url } },
  );
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

describe('Messages and Responses on a router served by Ollama', () => {
  test("Anthropic's SDK: a message and a stream, translated to /api/chat and back, with Ollama's counts and the cost", async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const message = await client.messages.create({
      model: 'local',
      max_tokens: 40,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: DEFAULT_TEXT }]);
    assert.equal(message.usage.input_tokens, PROMPT_TOKENS);
    assert.equal((message.usage as unknown as { cost: number }).cost, COST);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/api/chat');
    assert.deepEqual(sent.body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
    const final = await client.messages
      .stream({ model: 'local', max_tokens: 40, messages: [{ role: 'user', content: 'Say hello' }] })
      .finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: DEFAULT_TEXT }]);
    assert.equal(final.stop_reason, 'end_turn');
  });

  test("OpenAI's SDK: a Response and its event stream, translated the same way", async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const response = await client.responses.create({ model: 'local', input: 'Say hello', store: false });
    assert.equal(response.output_text, DEFAULT_TEXT);
    assert.equal(response.usage?.input_tokens, PROMPT_TOKENS);
    assert.equal((response.usage as unknown as { cost: number }).cost, COST);
    assert.equal(fake.requests.at(-1)!.path, '/api/chat');
    const stream = await client.responses.create({ model: 'local', input: 'Say hello', stream: true, store: false });
    let text = '';
    let completed = false;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = true;
    }
    assert.equal(text, DEFAULT_TEXT);
    assert.ok(completed);
  });
});
