// Usage a backend reports without a completion count, or with 0 for an answer that has text, is
// not believed: a 200-word answer reported as `{prompt_tokens: 10}` is charged the gateway's own
// count of its text, whole or streamed, and the usage record names the anomaly. What the caller
// is told, what is charged and what the record says agree. Embeddings and reranking, which
// report only prompt or total tokens, are charged as they report.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { countChatPromptTokens, countTextTokens } from '../../../gateway/metering/tokens.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { sseEvents, type TestGateway } from '../../support/gateway.ts';
import type { ModelEntry } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import type { RouterType } from '../../../core/resources/kinds.ts';
import { parsePrometheus, sampleValue, send, waitUntil } from '../http/helpers.ts';

const bed = testBed();
const key = generateKey().secret;
const MESSAGES = [{ role: 'user', content: 'Hello' }];
/** The gateway's count of MESSAGES: what admission counted. */
const COUNTED = countChatPromptTokens(MESSAGES);
/** A 200-word answer, and the gateway's count of it. */
const ANSWER = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
const ANSWER_TOKENS = countTextTokens(ANSWER);

let backend: FakeBackend;
let gw: TestGateway;

/** 0.001 per token, prompt and completion. */
const router = (id: string, type: RouterType): ModelEntry => ({
  id,
  type,
  costs: { prompt_tokens: 1000, completion_tokens: 1000 },
  providers: [{ model: 'upstream-model', type: 'vllm', args: { api_url: backend.url } }],
});

before(async () => {
  backend = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [{ id: 'carol', name: 'Carol', budget: 100, keys: [{ name: 'c', key: '${KEY}' }] }],
      models: [router('chat', 'text-generation'), router('embed', 'text-embeddings-inference'), router('rank', 'text-classification')],
    },
    { env: { KEY: key } },
  );
});
after(async () => {
  await backend.close();
});

const as = { authorization: `Bearer ${key}` };

/** The usage block of a whole answer, or of a streamed one (its last chunk before [DONE]). */
async function usageOf(path: string, body: Record<string, unknown>, stream: boolean) {
  const answer = await gw.post(path, { ...body, ...(stream ? { stream: true } : {}) }, as);
  assert.equal(answer.status, 200);
  if (!stream) return answer.body.usage;
  const events = sseEvents(answer.body as string);
  assert.equal(events.at(-1), '[DONE]');
  const text = events
    .slice(0, -2)
    .map((chunk) => chunk.choices[0]?.delta?.content ?? chunk.choices[0]?.text ?? '')
    .join('');
  assert.equal(text, ANSWER, 'the whole answer was streamed');
  return events.at(-2).usage;
}

/** The user's usage records, newest first, once `count` have been written. */
async function records(count: number) {
  const page = await waitUntil(
    () => gw.get('/v1/usage?limit=100', as).then((r) => r.body),
    (body) => body.data.length >= count,
  );
  assert.equal(page.data.length, count);
  return page;
}

async function metric(kind: string): Promise<number | undefined> {
  return sampleValue(parsePrometheus((await send(gw, 'GET', '/metrics')).text), 'tollgate_usage_anomalies_total', { router: 'chat', kind });
}

test("a 200-word answer reported without completion_tokens, or with 0, is charged the gateway's count of it, whole and streamed", async () => {
  const spentBefore = (await gw.get('/v1/me', as)).body.spent;
  const chat = { model: 'chat', messages: MESSAGES };
  const completion = { model: 'chat', prompt: 'Hello' };
  const cases = [
    { path: '/v1/chat/completions', body: chat, usage: { prompt_tokens: 10 }, expected: [10, 'completion_missing'] },
    { path: '/v1/completions', body: completion, usage: { prompt_tokens: 10 }, expected: [10, 'completion_missing'] },
    {
      path: '/v1/chat/completions',
      body: chat,
      usage: { prompt_tokens: 10, completion_tokens: null },
      expected: [10, 'completion_missing'],
    },
    { path: '/v1/chat/completions', body: chat, usage: { prompt_tokens: 10, completion_tokens: 0 }, expected: [10, 'completion_zero'] },
    { path: '/v1/chat/completions', body: chat, usage: { prompt_tokens: 0, completion_tokens: 0 }, expected: [COUNTED, 'usage_zero'] },
  ] as const;
  const told: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost: number }[] = [];
  const anomalies: string[] = [];
  for (const stream of [false, true]) {
    for (const { path, body, usage, expected } of cases) {
      const [prompt, anomaly] = expected;
      backend.once({ usage, text: ANSWER });
      const got = await usageOf(path, body, stream);
      const what = `${path} ${JSON.stringify(usage)}${stream ? ' streamed' : ''}`;
      assert.deepEqual(
        [got.prompt_tokens, got.completion_tokens, got.total_tokens, got.cost],
        [prompt, ANSWER_TOKENS, prompt + ANSWER_TOKENS, (prompt + ANSWER_TOKENS) / 1000],
        what,
      );
      told.push(got);
      anomalies.push(anomaly);
    }
  }
  assert.ok(ANSWER_TOKENS > 200);

  // The records say what the callers were told, each with its anomaly (compared in any order).
  const page = await records(told.length);
  const sorted = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort();
  assert.deepEqual(
    sorted(page.data.map((r: any) => [r.prompt_tokens, r.completion_tokens, r.cost, r.usage_anomaly])),
    sorted(told.map((u, i) => [u.prompt_tokens, u.completion_tokens, u.cost, anomalies[i]])),
  );
  // And what was charged: the user's spent grew by the sum of the costs told.
  const micros = told.reduce((sum, u) => sum + Math.round(u.cost * 1e6), 0);
  const me = (await gw.get('/v1/me', as)).body;
  assert.equal(Math.round((me.spent - spentBefore) * 1e6), micros);
  assert.equal(Math.round(page.totals.cost * 1e6), micros);
  assert.equal(page.totals.uncovered, 0);
  assert.equal(await metric('completion_missing'), 6);
  assert.equal(await metric('completion_zero'), 2);
  assert.equal(await metric('usage_zero'), 2);
});

test('embeddings and reranking, which report no completion tokens, are charged the prompt or total they report, nothing anomalous', async () => {
  const before = (await gw.get('/v1/usage?limit=100', as)).body.data.length;
  const embedded = await gw.post('/v1/embeddings', { model: 'embed', input: 'Hello' }, as);
  assert.equal(embedded.status, 200);
  assert.deepEqual([embedded.body.usage.prompt_tokens, embedded.body.usage.completion_tokens, embedded.body.usage.cost], [7, 0, 0.007]);
  const ranked = await gw.post('/v1/rerank', { model: 'rank', query: 'q', documents: ['a', 'b'] }, as);
  assert.equal(ranked.status, 200);
  assert.deepEqual([ranked.body.usage.prompt_tokens, ranked.body.usage.completion_tokens, ranked.body.usage.cost], [9, 0, 0.009]);
  const page = await records(before + 2);
  assert.deepEqual(
    page.data.slice(0, 2).map((r: any) => [r.prompt_tokens, r.completion_tokens, r.usage_anomaly]),
    [
      [9, 0, null],
      [7, 0, null],
    ],
  );
});
