// The endpoint registry: what each inference endpoint is, in one table the routes, metering,
// billing and the OpenAI-compatible adapters read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENDPOINTS, ROUTER_TYPES } from '../../../core/resources/kinds.ts';
import { ENDPOINT_SPECS } from '../../../gateway/endpoints/registry.ts';
import { TokenCount } from '../../../gateway/metering/tokens.ts';

test('every endpoint has an entry, on its own /v1 path, serving known router types', () => {
  assert.deepEqual(Object.keys(ENDPOINT_SPECS).sort(), [...ENDPOINTS].sort());
  const paths = ENDPOINTS.map((endpoint) => ENDPOINT_SPECS[endpoint].path);
  assert.equal(new Set(paths).size, paths.length);
  for (const endpoint of ENDPOINTS) {
    assert.match(ENDPOINT_SPECS[endpoint].path, /^\/v1\//);
    for (const type of ENDPOINT_SPECS[endpoint].routerTypes) assert.ok(ROUTER_TYPES.includes(type), `${endpoint}: ${type}`);
  }
});

test('only text generation streams, when asked, with chunks named as OpenAI names them', () => {
  const { chat, completions, embeddings, rerank } = ENDPOINT_SPECS;
  assert.equal(chat.streams({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }), true);
  assert.equal(chat.streams({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), false);
  assert.equal(completions.streams({ model: 'm', prompt: 'hi', stream: true }), true);
  assert.equal(embeddings.streams({ model: 'm', input: 'hi', stream: true }), false);
  assert.equal(rerank.streams({ model: 'm', query: 'q', documents: ['d'], stream: true }), false);
  assert.deepEqual([chat.chunkObject, completions.chunkObject], ['chat.completion.chunk', 'text_completion']);
});

test("each endpoint's prompt is counted from its own fields", () => {
  const count = (endpoint: keyof typeof ENDPOINT_SPECS, body: object) =>
    ENDPOINT_SPECS[endpoint].countPrompt(ENDPOINT_SPECS[endpoint].schema.parse(body), new TokenCount()).tokens;
  const hello = count('embeddings', { model: 'm', input: 'hello world' });
  assert.ok(hello > 0);
  assert.equal(count('completions', { model: 'm', prompt: 'hello world' }), hello);
  assert.equal(count('rerank', { model: 'm', query: 'hello world', documents: [{ text: 'hello world' }] }), 2 * hello);
  // OpenAI's accounting: 3 tokens per message and 3 to prime the reply, beyond the content.
  assert.equal(count('chat', { model: 'm', messages: [{ role: 'user', content: 'hello world' }] }), hello + 3 + 3);
});

test('a chat is templated per message; several completion prompts do not share one context', () => {
  const { chat, completions } = ENDPOINT_SPECS;
  assert.equal(
    chat.templated({
      model: 'm',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
    }),
    2,
  );
  assert.equal(completions.templated({ model: 'm', prompt: 'a' }), undefined);
  assert.equal(completions.oneContext({ model: 'm', prompt: 'a' }), true);
  assert.equal(completions.oneContext({ model: 'm', prompt: ['a', 'b'] }), false);
});
