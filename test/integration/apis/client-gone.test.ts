// A client of Anthropic's Messages API or of OpenAI's Responses API that goes away mid-stream is
// treated as a chat client would be: the backend's request is aborted, and the caller is charged
// for what was produced up to then, no more, with nothing left held.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);
const keys = { messages: generateKey().secret, responses: generateKey().secret };

let backend: FakeBackend;
let gw: TestGateway;
before(async () => {
  backend = await startFakeOpenAI();
  backend.behave({ text: WORDS.join(' '), chunkDelayMs: 50 });
  gw = await bed.gateway(
    {
      users: [
        { id: 'anthropic-client', name: 'A', budget: 10, keys: [{ name: 'k', key: '${MESSAGES}' }] },
        { id: 'responses-client', name: 'R', budget: 10, keys: [{ name: 'k', key: '${RESPONSES}' }] },
      ],
      models: [
        {
          id: 'priced',
          type: 'text-generation',
          costs: { prompt_tokens: 0, completion_tokens: 1000 },
          providers: [{ model: 'upstream-model', type: 'vllm', args: { api_url: '${BACKEND}' } }],
        },
      ],
    },
    { env: { MESSAGES: keys.messages, RESPONSES: keys.responses, BACKEND: backend.url } },
  );
});
after(async () => {
  await backend.close();
});

const CASES = [
  {
    api: "Anthropic's Messages",
    user: 'anthropic-client',
    key: keys.messages,
    path: '/v1/messages',
    body: { model: 'priced', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'count' }] },
    delta: 'content_block_delta',
  },
  {
    api: "OpenAI's Responses",
    user: 'responses-client',
    key: keys.responses,
    path: '/v1/responses',
    body: { model: 'priced', max_output_tokens: 100, stream: true, input: 'count', store: false },
    delta: 'response.output_text.delta',
  },
];

describe('a client that goes away mid-stream', () => {
  for (const { api, user, key, path, body, delta } of CASES) {
    test(`${api}: the backend request is aborted, and what was produced is charged, nothing left held`, async () => {
      const abortedBefore = backend.abortedRequests;
      const abort = new AbortController();
      const response = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: abort.signal,
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (text.split(`event: ${delta}`).length - 1 < 3) text += decoder.decode((await reader.read()).value, { stream: true });
      abort.abort();

      await eventually(() => backend.abortedRequests > abortedBefore, 'the backend saw its request cut off');
      const record: any = await eventually(async () => (await gw.get(`/v1/usage?user=${user}`)).body.data?.[0], 'the usage record');
      assert.equal(record.status, 499);
      assert.equal(record.incomplete, true);
      assert.ok(record.completion_tokens >= 3, `${record.completion_tokens} tokens billed for at least 3 deltas received`);
      assert.ok(record.completion_tokens < WORDS.length, 'not the whole answer');
      assert.equal(record.cost, record.completion_tokens / 1000);
      const me = await eventually(async () => {
        const now = (await gw.get('/v1/me', { authorization: `Bearer ${key}` })).body;
        return now.reserved === 0 && now;
      }, 'nothing left held');
      assert.equal(me.spent, record.cost);
    });
  }
});
