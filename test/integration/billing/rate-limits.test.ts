// Rate limits over HTTP: a router's policy applies to each user, a user's own policy replaces it,
// answers carry OpenAI's x-ratelimit-* headers, and a refusal is a 429 with Retry-After. Each test
// has users of its own, so none depends on what another did or on the order they run in.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

/** One key per user; each test uses its own. */
const keys = { headers: generateKey().secret, refused: generateKey().secret, recorded: generateKey().secret, bob: generateKey().secret };
const ask = { messages: [{ role: 'user', content: 'hello there' }], max_tokens: 5 };

let gw: TestGateway;
before(async () => {
  gw = await bed.gateway(
    {
      users: [
        { id: 'headers', name: 'Headers', keys: [{ name: 'k', key: '${HEADERS}' }] },
        { id: 'refused', name: 'Refused', keys: [{ name: 'k', key: '${REFUSED}' }] },
        { id: 'recorded', name: 'Recorded', keys: [{ name: 'k', key: '${RECORDED}' }] },
        { id: 'bob', name: 'Bob', rate_limits: { requests_per_minute: 5 }, keys: [{ name: 'b', key: '${BOB}' }] },
      ],
      models: [
        {
          id: 'limited',
          type: 'text-generation',
          rate_limits: { requests_per_minute: 2, tokens_per_day: 100000 },
          providers: [{ model: 'sim', type: 'simulator' }],
        },
        { id: 'other', type: 'text-generation', rate_limits: { requests_per_minute: 2 }, providers: [{ model: 'sim', type: 'simulator' }] },
      ],
    },
    { env: { HEADERS: keys.headers, REFUSED: keys.refused, RECORDED: keys.recorded, BOB: keys.bob } },
  );
});

const chat = (key: string, model = 'limited') => gw.post('/v1/chat/completions', { model, ...ask }, { authorization: `Bearer ${key}` });

test('answers say how many requests and tokens remain', async () => {
  const first = await chat(keys.headers);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('x-ratelimit-limit-requests'), '2');
  assert.equal(first.headers.get('x-ratelimit-remaining-requests'), '1');
  assert.match(first.headers.get('x-ratelimit-reset-requests') ?? '', /^\d+s$/);
  assert.equal(first.headers.get('x-ratelimit-limit-tokens'), '100000');
  assert.ok(Number(first.headers.get('x-ratelimit-remaining-tokens')) < 100000, 'the prompt tokens were taken');
});

test("past the limit: 429 with Retry-After, in OpenAI's envelope, and the limit of another router is separate", async () => {
  assert.equal((await chat(keys.refused)).status, 200);
  assert.equal((await chat(keys.refused)).status, 200);
  const refused = await chat(keys.refused);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, 'rate_limit_exceeded');
  assert.equal(refused.body.error.type, 'rate_limit_error');
  assert.match(refused.body.error.message, /^Rate limit reached: 2 requests per minute on this model; retry in \d+s$/);
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 120, `Retry-After ${retryAfter}`);
  assert.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.equal((await chat(keys.refused, 'other')).status, 200);
});

test("a user's own limits replace the router's", async () => {
  for (let i = 0; i < 5; i++) assert.equal((await chat(keys.bob)).status, 200, `request ${i + 1} of 5`);
  assert.equal((await chat(keys.bob)).status, 429);
});

test('a refused request is recorded with its status', async () => {
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await chat(keys.recorded)).status);
  assert.deepEqual(statuses, [200, 200, 429]);
  const records: { status: number; model: string }[] = await eventually(async () => {
    const data: { status: number; model: string }[] = (await gw.get('/v1/usage?user=recorded&limit=50')).body.data;
    return data.some((r) => r.status === 429) && data;
  }, 'a refused request recorded');
  assert.ok(records.some((r) => r.status === 429 && r.model === 'limited'));
});
