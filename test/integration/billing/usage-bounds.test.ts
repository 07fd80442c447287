// What a backend reports as usage is held to what the request could have used, and the hold is
// a real worst case: absurd or malformed token counts are replaced and recorded as anomalies, a
// request that cannot fit the model's context is refused as OpenAI refuses it, a backend whose
// template costs more prompt tokens than the gateway counts raises the holds that follow, and a
// cost the budget had no room for is recorded and counted rather than hidden.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { countChatPromptTokens, countTextTokens } from '../../../gateway/metering/tokens.ts';
import { DEFAULT_TEXT, startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { sseEvents, type TestGateway } from '../../support/gateway.ts';
import type { ModelEntry } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { assertError, JSON_HEADERS, parsePrometheus, sampleValue, send, waitUntil } from '../http/helpers.ts';

const bed = testBed();
const rich = generateKey().secret;
const tight = generateKey().secret;
const poor = generateKey().secret;
const MESSAGES = [{ role: 'user', content: 'Hello' }];
/** The gateway's count of MESSAGES (OpenAI's accounting), and with the template overhead it holds for (3 more per message, 5 per request). */
const COUNTED = countChatPromptTokens(MESSAGES);
const BASE = COUNTED + 3 + 5;
/** The most prompt tokens believed for MESSAGES: twice the base, plus 32. */
const PLAUSIBLE = 2 * BASE + 32;
const LONG_TEXT = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

let backend: FakeBackend;
let gw: TestGateway;

/** Every router costs 0.001 per prompt token; `chat` and `small` as much per completion token. */
const router = (id: string, completion: number, fields: Partial<ModelEntry> = {}): ModelEntry => ({
  id,
  type: 'text-generation',
  ...fields,
  costs: { prompt_tokens: 1000, completion_tokens: completion },
  providers: [{ model: 'upstream-model', type: 'vllm', args: { api_url: backend.url } }],
});

before(async () => {
  backend = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [
        { id: 'carol', name: 'Carol', budget: 100, keys: [{ name: 'c', key: '${RICH}' }] },
        { id: 'dave', name: 'Dave', budget: '0.02', keys: [{ name: 'd', key: '${TIGHT}' }] },
        { id: 'erin', name: 'Erin', budget: '0.000001', keys: [{ name: 'e', key: '${POOR}' }] },
      ],
      models: [router('chat', 1000), router('small', 1000, { max_context_length: 40 }), router('over', 0), router('learn', 0)],
    },
    { env: { RICH: rich, TIGHT: tight, POOR: poor }, settings: { promptRatioSyncSeconds: 0.05 } },
  );
});
after(async () => {
  await backend.close();
});

const as = (key: string) => ({ authorization: `Bearer ${key}` });

async function chat(key: string, model: string, fields: Record<string, unknown> = {}) {
  return gw.post('/v1/chat/completions', { model, messages: MESSAGES, ...fields }, as(key));
}

/** The usage block of a streamed answer (its last chunk before [DONE]). */
async function streamedUsage(key: string, model: string, fields: Record<string, unknown>) {
  const answer = await chat(key, model, { ...fields, stream: true });
  assert.equal(answer.status, 200);
  const events = sseEvents(answer.body as string);
  assert.equal(events.at(-1), '[DONE]');
  return events.at(-2).usage;
}

/** The newest usage record of a user, once it has been written after the answer. */
async function newestRecord(key: string, count: number) {
  const page = await waitUntil(
    () => gw.get('/v1/usage', as(key)).then((r) => r.body),
    (body) => body.data.length >= count,
  );
  assert.equal(page.data.length, count);
  return page;
}

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  return sampleValue(parsePrometheus((await send(gw, 'GET', '/metrics')).text), name, labels);
}

test('absurd and malformed usage from a backend is replaced by what the request could have used, and recorded as an anomaly', async () => {
  let records = 0;
  const spentBefore = (await gw.get('/v1/me', as(rich))).body.spent;

  // 1e15 tokens for max_tokens 20: the completion is cut to 20, the prompt to what is plausible.
  backend.once({ usage: { prompt_tokens: 1e15, completion_tokens: 1e15, total_tokens: 2e15 } });
  const absurd = await chat(rich, 'chat', { max_tokens: 20 });
  assert.equal(absurd.status, 200);
  assert.deepEqual(
    [absurd.body.usage.prompt_tokens, absurd.body.usage.completion_tokens, absurd.body.usage.cost],
    [PLAUSIBLE, 20, (PLAUSIBLE + 20) / 1000],
  );
  let page = await newestRecord(rich, ++records);
  assert.equal(page.data[0].usage_anomaly, 'prompt_over_limit,completion_over_limit');
  assert.equal(page.data[0].cost, absurd.body.usage.cost);

  // Negative counts: the gateway counts the prompt and the answer itself; nothing negative anywhere.
  backend.once({ usage: { prompt_tokens: -1e8, completion_tokens: -1e8, total_tokens: -2e8 } });
  const negative = await chat(rich, 'chat', { max_tokens: 20 });
  assert.deepEqual([negative.body.usage.prompt_tokens, negative.body.usage.completion_tokens], [COUNTED, countTextTokens(DEFAULT_TEXT)]);
  assert.ok(negative.body.usage.cost > 0);
  page = await newestRecord(rich, ++records);
  assert.equal(page.data[0].usage_anomaly, 'prompt_invalid,completion_invalid');

  // Not integers (a fraction, a string): counted by the gateway too.
  backend.once({ usage: { prompt_tokens: 12.5, completion_tokens: 'NaN' } });
  const fraction = await chat(rich, 'chat', { max_tokens: 20 });
  assert.deepEqual([fraction.body.usage.prompt_tokens, fraction.body.usage.completion_tokens], [COUNTED, countTextTokens(DEFAULT_TEXT)]);
  page = await newestRecord(rich, ++records);
  assert.equal(page.data[0].usage_anomaly, 'prompt_invalid,completion_invalid');

  // The same in a stream: the usage chunk the client gets is bounded alike.
  backend.once({ usage: { prompt_tokens: 1e15, completion_tokens: 1e15 } });
  const streamed = await streamedUsage(rich, 'chat', { max_tokens: 20 });
  assert.deepEqual([streamed.prompt_tokens, streamed.completion_tokens], [PLAUSIBLE, 20]);
  backend.once({ usage: { prompt_tokens: -1e8, completion_tokens: '12' } });
  const streamedNegative = await streamedUsage(rich, 'chat', { max_tokens: 20 });
  assert.deepEqual([streamedNegative.prompt_tokens, streamedNegative.completion_tokens], [COUNTED, countTextTokens(DEFAULT_TEXT)]);
  records += 2;

  // A stream without usage whose text the gateway counts to more than max_tokens: cut to max_tokens.
  backend.once({ omitUsage: true, text: LONG_TEXT });
  const counted = await streamedUsage(rich, 'chat', { max_tokens: 20 });
  assert.equal(counted.completion_tokens, 20);
  page = await newestRecord(rich, ++records);
  assert.equal(page.data[0].usage_anomaly, 'completion_count_over_limit');

  // What the callers were told, what was charged and what the records say agree.
  const costs = [absurd.body.usage, negative.body.usage, fraction.body.usage, streamed, streamedNegative, counted].map((u) =>
    Math.round(u.cost * 1e6),
  );
  const me = (await gw.get('/v1/me', as(rich))).body;
  assert.equal(
    Math.round((me.spent - spentBefore) * 1e6),
    costs.reduce((a, b) => a + b, 0),
  );
  assert.equal(
    Math.round(page.totals.cost * 1e6),
    costs.reduce((a, b) => a + b, 0),
  );
  assert.equal(page.totals.uncovered, 0);
  assert.equal(await metric('tollgate_usage_anomalies_total', { router: 'chat', kind: 'completion_over_limit' }), 2);
  assert.equal(await metric('tollgate_usage_anomalies_total', { router: 'chat', kind: 'prompt_invalid' }), 3);
  assert.equal(await metric('tollgate_usage_anomalies_total', { router: 'chat', kind: 'completion_count_over_limit' }), 1);
});

test("a request that cannot fit the model's context is refused with 400 context_length_exceeded, and never forwarded", async () => {
  const asRich = (body: unknown) => send(gw, 'POST', '/v1/chat/completions', JSON.stringify(body), { ...JSON_HEADERS, ...as(rich) });
  const forwarded = backend.requests.length;
  const withMax = await asRich({ model: 'small', messages: MESSAGES, max_tokens: 50 });
  assertError(withMax, {
    status: 400,
    code: 'context_length_exceeded',
    param: 'messages',
    message: `This model's maximum context length is 40 tokens. However, you requested ${COUNTED + 50} tokens (${COUNTED} in the messages, 50 in the completion). Please reduce the length of the messages or completion.`,
  });
  const long = [{ role: 'user', content: LONG_TEXT }];
  const prompt = countChatPromptTokens(long);
  assert.ok(prompt > 40);
  const withoutMax = await asRich({ model: 'small', messages: long });
  assertError(withoutMax, {
    status: 400,
    code: 'context_length_exceeded',
    param: 'messages',
    message: `This model's maximum context length is 40 tokens. However, you requested ${prompt} tokens (${prompt} in the messages, 0 in the completion). Please reduce the length of the messages or completion.`,
  });
  assert.equal(backend.requests.length, forwarded);
  // One that fits is served.
  assert.equal((await chat(rich, 'small', { max_tokens: 20 })).status, 200);
});

test('a cost beyond the room left in the budget is charged as far as it goes, and the rest is recorded and counted, not hidden', async () => {
  // The hold covers BASE prompt tokens (0.015 of Dave's 0.02); the backend reports 60, which is plausible.
  backend.once({ usage: { prompt_tokens: 60, completion_tokens: 5 } });
  const answer = await chat(tight, 'over', { max_tokens: 20 });
  assert.equal(answer.status, 200);
  assert.equal(answer.body.usage.cost, 0.06);
  const page = await newestRecord(tight, 1);
  const record = page.data[0];
  assert.deepEqual(
    [record.prompt_tokens, record.cost, record.charged, record.uncovered, record.usage_anomaly],
    [60, 0.06, 0.02, 0.04, null],
  );
  assert.deepEqual([page.totals.cost, page.totals.charged, page.totals.uncovered], [0.06, 0.02, 0.04]);
  const me = (await gw.get('/v1/me', as(tight))).body;
  assert.deepEqual([me.spent, me.reserved], [0.02, 0]);
  assert.equal(await metric('tollgate_uncovered_cost_total', { router: 'over' }), 0.04);
  assert.equal(await metric('tollgate_uncovered_requests_total', { router: 'over' }), 1);
});

test('after a backend reports more prompt tokens than the gateway counts, holds on that router cover what it reports', async () => {
  const holdOf = async () => {
    const refused = await chat(poor, 'learn', { max_tokens: 20 });
    assert.equal(refused.status, 402);
    return /may cost up to ([0-9.]+)/.exec(refused.body.error.message)![1];
  };
  assert.equal(await holdOf(), String(BASE / 1000));
  // A template (a default system prompt, say) that makes 3 times the base.
  backend.behave({ usage: { prompt_tokens: 3 * BASE, completion_tokens: 5 } });
  try {
    assert.equal((await chat(rich, 'learn', { max_tokens: 20 })).status, 200);
    assert.equal(await waitUntil(holdOf, (hold) => hold !== String(BASE / 1000)), String((3 * BASE) / 1000));
  } finally {
    backend.behave({});
  }
});
