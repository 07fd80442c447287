// A client that goes away mid-stream: the backend's request is aborted, and the user is billed
// for the tokens that were streamed to them, no more and no less.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { countTextTokens } from '../../../gateway/metering/tokens.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { sseEvents, type TestGateway } from '../../support/gateway.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const key = generateKey().secret;
const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);

let backend: FakeBackend;
let gw: TestGateway;
before(async () => {
  backend = await startFakeOpenAI();
  backend.behave({ text: WORDS.join(' '), chunkDelayMs: 50 });
  gw = await bed.gateway(
    {
      users: [{ id: 'carol', name: 'Carol', budget: 10, keys: [{ name: 'c', key: '${CAROL}' }] }],
      models: [
        {
          id: 'priced',
          type: 'text-generation',
          costs: { prompt_tokens: 0, completion_tokens: 1000 },
          providers: [{ model: 'upstream-model', type: 'vllm', args: { api_url: backend.url } }],
        },
      ],
    },
    { env: { CAROL: key } },
  );
});
after(async () => {
  await backend.close();
});

test('a client that disconnects mid-stream is billed for what it received, and the backend request is aborted', async () => {
  const abort = new AbortController();
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'count' }], stream: true, max_tokens: 100 }),
    signal: abort.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (sseEvents(text).length < 5) text += decoder.decode((await reader.read()).value, { stream: true });
  abort.abort();
  const received = sseEvents(text)
    .flatMap((event) => event.choices?.map((c: any) => c.delta?.content ?? '') ?? [])
    .join('');
  assert.ok(received.length > 0);

  // The backend sees its request cut off.
  await eventually(() => backend.abortedRequests > 0, 'the backend saw its request cut off');
  assert.equal(backend.abortedRequests, 1);

  // The usage record: cut short, with the completion tokens the gateway relayed before the cut.
  const record: any = await eventually(async () => (await gw.get('/v1/usage?user=carol')).body.data?.[0], 'the usage record');
  assert.equal(record.status, 499);
  assert.equal(record.incomplete, true);
  // The gateway may have relayed a chunk or two more than this client had read when it left.
  assert.ok(
    record.completion_tokens >= countTextTokens(received),
    `${record.completion_tokens} tokens billed, ${countTextTokens(received)} received`,
  );
  assert.ok(record.completion_tokens < countTextTokens(WORDS.join(' ')), 'not the whole answer');
  assert.equal(record.cost, record.completion_tokens / 1000); // 1000 per million tokens

  const me = (await gw.get('/v1/me', { authorization: `Bearer ${key}` })).body;
  assert.equal(me.spent, record.cost);
  assert.equal(me.reserved, 0);
});
