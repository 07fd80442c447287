// Cached prompt tokens through the real gateway (issue 28, part 5): a vLLM backend (fake, on a
// real socket) reports prompt_tokens_details.cached_tokens, whole and streamed; an Anthropic one
// reports cache reads and writes to /v1/messages. The answer's usage, what the user's budget was
// charged and the usage record (GET /v1/usage) agree: with a cached price set, the cached part
// costs its price; unset, the answer costs what it would without the report. A report past the
// prompt is not believed, and the record names it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { countChatPromptTokens } from '../../../gateway/metering/tokens.ts';
import { startFakeAnthropic } from '../../support/fake-anthropic.ts';
import { DEFAULT_TEXT, startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { sseEvents, type TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { waitUntil } from '../http/helpers.ts';

const bed = testBed();
const key = generateKey().secret;
const as = { authorization: `Bearer ${key}` };

/** A long shared system prompt and a short question: what a prefix cache serves. */
const MESSAGES = [
  { role: 'system', content: Array.from({ length: 400 }, (_, i) => `rule${i}`).join(' ') },
  { role: 'user', content: 'Hello' },
];
/** The gateway's count of MESSAGES: the backend reports the same, so it is believed. */
const PROMPT = countChatPromptTokens(MESSAGES);
const CACHED = 400;
const COMPLETION = 5;

let vllm: FakeBackend;
let anthropic: FakeBackend;
let gw: TestGateway;

// Prices per million: prompt 1000, completion 1000 (0.001 a token); cached 250, writes 1250 where set.
before(async () => {
  vllm = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  vllm.behave({
    usage: {
      prompt_tokens: PROMPT,
      completion_tokens: COMPLETION,
      total_tokens: PROMPT + COMPLETION,
      prompt_tokens_details: { cached_tokens: CACHED },
    },
  });
  const upstream = { model: 'llama', type: 'vllm' as const, args: { api_url: vllm.url } };
  gw = await bed.gateway(
    {
      users: [{ id: 'dana', name: 'Dana', budget: 100, keys: [{ name: 'd', key: '${KEY}' }] }],
      models: [
        {
          id: 'priced',
          type: 'text-generation',
          costs: { prompt_tokens: 1000, completion_tokens: 1000, cached_prompt_tokens: 250 },
          providers: [upstream],
        },
        { id: 'plain', type: 'text-generation', costs: { prompt_tokens: 1000, completion_tokens: 1000 }, providers: [upstream] },
        {
          id: 'claude',
          type: 'text-generation',
          costs: { prompt_tokens: 1000, completion_tokens: 1000, cached_prompt_tokens: 250, cache_write_prompt_tokens: 1250 },
          providers: [{ model: 'claude-sonnet', type: 'anthropic', args: { api_url: anthropic.url, api_key: 'sk-ant' } }],
        },
      ],
    },
    { env: { KEY: key } },
  );
});

after(async () => {
  await vllm?.close();
  await anthropic?.close();
});

/** The usage block of a chat answer, whole or streamed (its last chunk before [DONE]). */
async function chatUsage(model: string, stream: boolean) {
  const answer = await gw.post('/v1/chat/completions', { model, messages: MESSAGES, ...(stream && { stream: true }) }, as);
  assert.equal(answer.status, 200);
  if (!stream) {
    assert.equal(answer.body.choices[0].message.content, DEFAULT_TEXT);
    return answer.body.usage;
  }
  const events = sseEvents(answer.body as string);
  assert.equal(events.at(-1), '[DONE]');
  return events.at(-2).usage;
}

async function spent(): Promise<number> {
  return (await gw.get('/v1/me', as)).body.spent;
}

/** The user's newest record once there are `count`. */
async function newestRecord(count: number) {
  const page = await waitUntil(
    () => gw.get('/v1/usage?limit=100', as).then((r) => r.body),
    (body) => body.data.length >= count,
  );
  return page.data[0];
}

let recorded = 0;

/** The answer's cost, the charge to the budget and the record agree; returns the record. */
async function agree(usage: { cost: number }, spentBefore: number) {
  const record = await newestRecord(++recorded);
  assert.equal(record.cost, usage.cost, 'the record costs what the answer said');
  assert.equal(record.charged, usage.cost, 'all of it charged');
  assert.equal(Math.round(((await spent()) - spentBefore) * 1e6), Math.round(usage.cost * 1e6), 'the budget charged the cost');
  return record;
}

describe('cached prompt tokens from a vLLM backend', () => {
  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'whole';

    test(`${how}, a cached price set: the cached part at its price, passed on and recorded`, async () => {
      const before = await spent();
      const usage = await chatUsage('priced', stream);
      assert.equal(usage.prompt_tokens, PROMPT);
      assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: CACHED });
      // ((PROMPT - 400) x 1000 + 400 x 250 + 5 x 1000) / 1e6, in micro-units.
      const micros = (PROMPT - CACHED) * 1000 + CACHED * 250 + COMPLETION * 1000;
      assert.equal(usage.cost, micros / 1e6);
      const record = await agree(usage, before);
      assert.equal(record.model, 'priced');
      assert.equal(record.cached_tokens, CACHED);
      assert.equal(record.cache_write_tokens, 0);
      assert.equal(record.usage_anomaly, null);
    });

    test(`${how}, no cached price: the same cost as without the report`, async () => {
      const before = await spent();
      const usage = await chatUsage('plain', stream);
      assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: CACHED });
      assert.equal(usage.cost, ((PROMPT + COMPLETION) * 1000) / 1e6);
      const record = await agree(usage, before);
      assert.equal(record.cached_tokens, CACHED);

      // The same answer without cached tokens reported costs the same, and its usage has no details.
      const without = { prompt_tokens: PROMPT, completion_tokens: COMPLETION, total_tokens: PROMPT + COMPLETION };
      vllm.once({ usage: without });
      const plain = await chatUsage('plain', stream);
      assert.equal(plain.cost, usage.cost);
      assert.equal('prompt_tokens_details' in plain, false);
      assert.equal((await agree(plain, before + usage.cost)).cached_tokens, 0);
    });

    test(`${how}, more cached than the prompt: not believed, charged as uncached, the anomaly recorded`, async () => {
      const before = await spent();
      vllm.once({
        usage: {
          prompt_tokens: PROMPT,
          completion_tokens: COMPLETION,
          total_tokens: PROMPT + COMPLETION,
          prompt_tokens_details: { cached_tokens: PROMPT + 1 },
        },
      });
      const usage = await chatUsage('priced', stream);
      assert.equal(usage.cost, ((PROMPT + COMPLETION) * 1000) / 1e6);
      // The details say what was charged as cached: none.
      assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: 0 });
      const record = await agree(usage, before);
      assert.equal(record.cached_tokens, 0);
      assert.equal(record.usage_anomaly, 'cached_over_limit');
    });
  }
});

describe('a cached_tokens that is not a count (finding 21)', () => {
  for (const cached of [-3, 12.5, 'many']) {
    test(`${JSON.stringify(cached)}: the same usage whole and streamed, 0 cached shown, charged as uncached, cached_invalid recorded`, async () => {
      const report = {
        prompt_tokens: PROMPT,
        completion_tokens: COMPLETION,
        total_tokens: PROMPT + COMPLETION,
        prompt_tokens_details: { cached_tokens: cached },
      };
      const answers = [];
      for (const stream of [false, true]) {
        const before = await spent();
        vllm.once({ usage: report });
        const usage = await chatUsage('priced', stream);
        const record = await agree(usage, before);
        assert.equal(record.cached_tokens, 0);
        assert.equal(record.usage_anomaly, 'cached_invalid');
        // Carbon follows the latency, which differs from one answer to the next.
        const { carbon: _, ...rest } = usage;
        answers.push(rest);
      }
      const [whole, streamed] = answers;
      assert.deepEqual(streamed, whole, 'the streamed usage is the whole answer’s');
      assert.deepEqual(whole!.prompt_tokens_details, { cached_tokens: 0 });
      assert.equal(whole!.cost, ((PROMPT + COMPLETION) * 1000) / 1e6);
    });
  }
});

describe('cache reads and writes from an Anthropic backend, through the Messages API', () => {
  // 100 input tokens besides the cache, 600 read from it, 300 written to it: 1000 in all, of a
  // prompt the gateway counts more of (a report above its count may be cut to a plausible bound).
  const INPUT = { input_tokens: 100, cache_read_input_tokens: 600, cache_creation_input_tokens: 300 };
  const system = Array.from({ length: 1200 }, (_, i) => `rule${i}`).join(' ');
  const request = { model: 'claude', max_tokens: 64, system, messages: [{ role: 'user', content: 'Hello' }] };
  // (100 x 1000 + 600 x 250 + 300 x 1250 + 5 x 1000) / 1e6
  const COST = (100 * 1000 + 600 * 250 + 300 * 1250 + 5 * 1000) / 1e6;

  test('whole: Anthropic’s own fields kept, the cost of each part at its price, the record with reads and writes', async () => {
    const before = await spent();
    anthropic.once({ usage: INPUT });
    const answer = await gw.post('/v1/messages', request, as);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.usage.input_tokens, 100);
    assert.equal(answer.body.usage.cache_read_input_tokens, 600);
    assert.equal(answer.body.usage.cache_creation_input_tokens, 300);
    assert.equal(answer.body.usage.cost, COST);
    const record = await agree(answer.body.usage, before);
    assert.deepEqual([record.prompt_tokens, record.cached_tokens, record.cache_write_tokens], [1000, 600, 300]);
  });

  test('streamed: the closing message_delta carries the cost of each part at its price', async () => {
    const before = await spent();
    anthropic.once({ usage: INPUT });
    const answer = await gw.post('/v1/messages', { ...request, stream: true }, as);
    assert.equal(answer.status, 200);
    const closing = sseEvents(answer.body as string).find((event) => event.type === 'message_delta');
    assert.equal(closing.usage.cost, COST);
    const record = await agree(closing.usage, before);
    assert.deepEqual([record.prompt_tokens, record.cached_tokens, record.cache_write_tokens], [1000, 600, 300]);
  });

  test('chat to the same backend: OpenAI’s prompt_tokens_details, the writes beside the reads', async () => {
    const before = await spent();
    anthropic.once({ usage: INPUT });
    const messages = [{ role: 'system', content: system }, ...request.messages];
    const answer = await gw.post('/v1/chat/completions', { model: 'claude', messages }, as);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.usage.prompt_tokens, 1000);
    assert.deepEqual(answer.body.usage.prompt_tokens_details, { cached_tokens: 600, cache_write_tokens: 300 });
    assert.equal(answer.body.usage.cost, COST);
    await agree(answer.body.usage, before);
  });
});

describe('the prices through the admin API', () => {
  test('a router takes cached and cache-write prices, shows them only when set, and refuses a negative or malformed one', async () => {
    const created = await gw.post('/v1/admin/routers', {
      name: 'cache-priced',
      type: 'text-generation',
      costs: { prompt_tokens: 3, completion_tokens: 15, cached_prompt_tokens: '0.3', cache_write_prompt_tokens: 3.75 },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.costs, {
      prompt_tokens: 3,
      completion_tokens: 15,
      audio_minutes: 0,
      cached_prompt_tokens: 0.3,
      cache_write_prompt_tokens: 3.75,
    });
    const unset = await gw.patch('/v1/admin/routers/cache-priced', { costs: { cached_prompt_tokens: null } });
    assert.equal(unset.status, 200, JSON.stringify(unset.body));
    assert.deepEqual(unset.body.costs, { prompt_tokens: 3, completion_tokens: 15, audio_minutes: 0, cache_write_prompt_tokens: 3.75 });
    for (const [price, reason] of [
      [-1, /must not be negative/],
      ['cheap', /must be a decimal number/],
    ] as const) {
      const refused = await gw.patch('/v1/admin/routers/cache-priced', { costs: { cached_prompt_tokens: price } });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, reason);
      assert.match(refused.body.error.message, /cached_prompt_tokens/);
    }
  });
});

describe('reports', () => {
  test("the user's totals and the spend report by router sum the cached tokens the records hold", async () => {
    const page = (await gw.get('/v1/usage?limit=100', as)).body;
    const cached = page.data.reduce((sum: number, r: { cached_tokens: number }) => sum + r.cached_tokens, 0);
    const writes = page.data.reduce((sum: number, r: { cache_write_tokens: number }) => sum + r.cache_write_tokens, 0);
    assert.ok(cached > 0 && writes > 0);
    assert.deepEqual([page.totals.cached_tokens, page.totals.cache_write_tokens], [cached, writes]);
    const today = new Date().toISOString().slice(0, 10);
    const report = await gw.get(`/v1/usage?group_by=router&from=${today}&to=${today}`);
    assert.equal(report.status, 200, JSON.stringify(report.body));
    const claude = report.body.data.find((row: { router: string }) => row.router === 'claude');
    // Three Anthropic answers of 600 reads and 300 writes each.
    assert.deepEqual([claude.cached_tokens, claude.cache_write_tokens], [1800, 900]);
  });
});
