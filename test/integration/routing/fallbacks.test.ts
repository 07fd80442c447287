// Fallbacks across routers: when every provider of the router asked for failed before the first
// byte, or is cooling down, or the request is too long for its context, the request goes to the
// router's fallbacks in order (each followed by its own). The answer names the router that served
// (`model`, x-tollgate-served-model) and the one asked for (x-tollgate-requested-model); the
// caller pays the serving router's price, its rate limits apply, and the usage record keeps both
// names. Fallbacks a user may not call are passed over; loops and unknown names are refused.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig, ModelEntry } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { chat, receivedModels } from '../../support/routing.ts';
import { eventually } from '../../support/eventually.ts';

interface Backends {
  readonly primary: FakeBackend;
  readonly second: FakeBackend;
  readonly third: FakeBackend;
}

async function backends(t: TestContext): Promise<Backends> {
  const [primary, second, third] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
  t.after(() => Promise.all([primary.close(), second.close(), third.close()]));
  return { primary, second, third };
}

const bed = testBed();
const alice = generateKey().secret;
const aliceAuth = { authorization: `Bearer ${alice}` };

/**
 * `primary` (0.5/1 per million) falls back to `second` (2/4), which falls back to `third` (10/20).
 * Alice may call every router unless `allowed` says otherwise; her budget is `budget`.
 */
function config(
  b: Backends,
  options: { primary?: Partial<ModelEntry>; second?: Partial<ModelEntry>; allowed?: string[]; budget?: string } = {},
): GatewayConfig {
  return {
    users: [
      {
        id: 'alice',
        name: 'Alice',
        budget: options.budget ?? '100',
        ...(options.allowed && { allowed_routers: options.allowed }),
        keys: [{ name: 'a', key: '${ALICE}' }],
      },
    ],
    models: [
      {
        id: 'primary',
        type: 'text-generation',
        costs: { prompt_tokens: 0.5, completion_tokens: 1 },
        max_context_length: 1000,
        fallbacks: ['second'],
        ...options.primary,
        providers: [{ model: 'primary-backend', type: 'vllm', args: { api_url: b.primary.url } }],
      },
      {
        id: 'second',
        type: 'text-generation',
        costs: { prompt_tokens: 2, completion_tokens: 4 },
        max_context_length: 100000,
        fallbacks: ['third'],
        ...options.second,
        providers: [{ model: 'second-backend', type: 'vllm', args: { api_url: b.second.url } }],
      },
      {
        id: 'third',
        type: 'text-generation',
        costs: { prompt_tokens: 10, completion_tokens: 20 },
        max_context_length: 100000,
        providers: [{ model: 'third-backend', type: 'vllm', args: { api_url: b.third.url } }],
      },
      {
        id: 'embed',
        type: 'text-embeddings-inference',
        providers: [{ model: 'embed-backend', type: 'tei', args: { api_url: b.third.url } }],
      },
    ],
  };
}

/** A gateway that does not retry a provider (retries are test/integration/routing/retries.test.ts's): one request per failing backend. */
function gateway(t: TestContext, config: GatewayConfig, settings: Record<string, unknown> = {}): Promise<TestGateway> {
  return bed.gateway(config, { t, env: { ALICE: alice }, settings: { retries: 0, ...settings } });
}

/** Alice's account and usage records once `records` requests are settled and recorded (both happen just after the answer). */
async function settled(gw: TestGateway, records = 1): Promise<{ me: any; usage: any[] }> {
  return eventually(async () => {
    const me = (await gw.get('/v1/me', aliceAuth)).body;
    const usage = (await gw.get('/v1/usage', aliceAuth)).body.data;
    return me.reserved === 0 && usage.length >= records && { me, usage };
  }, `${records} requests settled and recorded`);
}

/** What a router's prices make of an answer's usage block, in the money of budgets. */
const priced = (usage: { prompt_tokens: number; completion_tokens: number }, prompt: number, completion: number) =>
  (usage.prompt_tokens * prompt + usage.completion_tokens * completion) / 1e6;

describe('fallbacks across routers', () => {
  test('the primary failing, the fallback serves at its own price, named in the answer, its headers and the usage record', async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 503 });
    const gw = await gateway(t, config(b));

    const answer = await chat(gw, 'primary', aliceAuth);

    assert.equal(answer.status, 200);
    assert.equal(answer.body.model, 'second', 'model is the router that served');
    assert.equal(answer.headers.get('x-tollgate-requested-model'), 'primary');
    assert.equal(answer.headers.get('x-tollgate-served-model'), 'second');
    assert.deepEqual(receivedModels(b.primary), ['primary-backend'], 'the primary was tried first');
    assert.deepEqual(receivedModels(b.second), ['second-backend']);
    assert.equal(answer.body.usage.cost, priced(answer.body.usage, 2, 4), "the fallback's price, not the primary's");

    const { me, usage } = await settled(gw);
    assert.equal(usage.length, 1, 'one record for the request, however many routers it went through');
    const [record] = usage;
    assert.equal(record.model, 'second');
    assert.equal(record.requested_model, 'primary');
    assert.equal(record.status, 200);
    assert.equal(record.cost, answer.body.usage.cost);
    assert.equal(record.charged, answer.body.usage.cost, 'charged what the caller was told');
    assert.equal(me.spent, answer.body.usage.cost, 'the hold on the primary was given back whole');

    const metrics = await gw.get('/metrics');
    assert.match(metrics.body, /tollgate_fallbacks_total\{from="primary",to="second",reason="failed"\} 1/);
  });

  test('a streamed answer from a fallback names it in its chunks and headers', async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 500 });
    const gw = await gateway(t, config(b));

    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...aliceAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'primary', stream: true, messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    const text = await response.text();

    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-tollgate-served-model'), 'second');
    const models = new Set([...text.matchAll(/"model":"([^"]+)"/g)].map((m) => m[1]));
    assert.deepEqual([...models], ['second']);
    assert.match(text, /data: \[DONE\]/);
  });

  test("a fallback's own fallbacks follow it: with the primary and the second down, the third serves", async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 500 });
    b.second.behave({ status: 502 });
    const gw = await gateway(t, config(b));

    const answer = await chat(gw, 'primary', aliceAuth);

    assert.equal(answer.status, 200);
    assert.equal(answer.body.model, 'third');
    assert.equal(answer.body.usage.cost, priced(answer.body.usage, 10, 20));
    assert.equal(b.primary.requests.length, 1);
    assert.equal(b.second.requests.length, 1);
  });

  test('with every router of the chain down the caller gets the last failure, 502, and is charged nothing', async (t) => {
    const b = await backends(t);
    for (const fake of [b.primary, b.second, b.third]) fake.behave({ status: 500 });
    const gw = await gateway(t, config(b));

    const answer = await chat(gw, 'primary', aliceAuth);

    assert.equal(answer.status, 502);
    assert.match(answer.body.error.message, /third/);
    const { me, usage } = await settled(gw);
    assert.equal(me.spent, 0, 'every hold was given back, nothing charged');
    const [record] = usage;
    assert.equal(record.status, 502);
    assert.equal(record.requested_model, 'primary');
  });

  test('a primary cooling down is passed over without a request to it', async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 500 });
    const gw = await gateway(t, config(b), { failureThreshold: 1, cooldownSeconds: 600 });

    assert.equal((await chat(gw, 'primary', aliceAuth)).body.model, 'second', 'the failure starts the cool-down');
    const next = await chat(gw, 'primary', aliceAuth);

    assert.equal(next.status, 200);
    assert.equal(next.body.model, 'second');
    assert.equal(b.primary.requests.length, 1, 'the cooling primary got no second request');
    const metrics = await gw.get('/metrics');
    assert.match(metrics.body, /tollgate_fallbacks_total\{from="primary",to="second",reason="unavailable"\} 1/);
  });

  test('a request too long for the primary context goes to the first fallback it fits, the primary never called', async (t) => {
    const b = await backends(t);
    const gw = await gateway(t, config(b));

    const answer = await chat(gw, 'primary', aliceAuth, { max_tokens: 2000 });

    assert.equal(answer.status, 200);
    assert.equal(answer.body.model, 'second');
    assert.equal(b.primary.requests.length, 0);
    assert.match((await gw.get('/metrics')).body, /tollgate_fallbacks_total\{from="primary",to="second",reason="context"\} 1/);
  });

  test('with context_fallback off, a request too long for the primary is refused as before', async (t) => {
    const b = await backends(t);
    const gw = await gateway(t, config(b, { primary: { context_fallback: false } }));

    const answer = await chat(gw, 'primary', aliceAuth, { max_tokens: 2000 });

    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'context_length_exceeded');
    assert.equal(b.second.requests.length, 0);
  });

  test('a user allowed only the primary is not sent to its fallbacks', async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 503 });
    const gw = await gateway(t, config(b, { allowed: ['primary'] }));

    const answer = await chat(gw, 'primary', aliceAuth);

    assert.equal(answer.status, 502);
    assert.equal(b.second.requests.length, 0);
    assert.equal(b.third.requests.length, 0);
  });

  test('a user allowed the primary and the third skips the second', async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 503 });
    const gw = await gateway(t, config(b, { allowed: ['primary', 'third'] }));

    const answer = await chat(gw, 'primary', aliceAuth);

    assert.equal(answer.body.model, 'third');
    assert.equal(b.second.requests.length, 0);
  });

  test("a fallback's rate limits apply to the requests it serves", async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 503 });
    const gw = await gateway(t, config(b, { second: { rate_limits: { requests_per_minute: 1 } } }));

    const first = await chat(gw, 'primary', aliceAuth);
    assert.equal(first.body.model, 'second');
    assert.equal(first.headers.get('x-ratelimit-limit-requests'), '1', "the second's limit, in its headers");
    assert.equal(first.headers.get('x-ratelimit-remaining-requests'), '0');

    // The second's limit is spent: the next request passes over it to the third.
    const next = await chat(gw, 'primary', aliceAuth);
    assert.equal(next.status, 200);
    assert.equal(next.body.model, 'third');
    assert.equal(b.second.requests.length, 1);
  });
});

describe('the budget across fallbacks', () => {
  test("a budget that covers the primary's hold but not the fallback's: nothing is forwarded to the fallback, nothing charged", async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 503 });
    // The hold of a chat of ~20 prompt tokens and max_tokens 100: about 0.00011 on the primary,
    // 0.00044 on the second, 0.0022 on the third.
    const gw = await gateway(t, config(b, { budget: '0.0002' }));

    const answer = await chat(gw, 'primary', aliceAuth, { max_tokens: 100 });

    assert.equal(answer.status, 502, "the primary's failure: the fallbacks refused to hold what they may cost");
    assert.equal(b.second.requests.length, 0, 'never forwarded without a hold that fits');
    assert.equal(b.third.requests.length, 0);
    const { me } = await settled(gw);
    assert.equal(me.spent, 0, 'every hold was given back, nothing charged');
  });

  test('a budget that covers the fallback: served and charged its price, to the micro-unit', async (t) => {
    const b = await backends(t);
    b.primary.behave({ status: 503 });
    const gw = await gateway(t, config(b, { budget: '0.0005' }));

    const answer = await chat(gw, 'primary', aliceAuth, { max_tokens: 100 });

    assert.equal(answer.status, 200);
    assert.equal(answer.body.model, 'second');
    const { me } = await settled(gw);
    assert.equal(me.spent, answer.body.usage.cost);
  });
});

describe('fallbacks are checked where routers are written', () => {
  test('an unknown fallback, a loop and a router of another type are refused by the admin API, naming them', async (t) => {
    const b = await backends(t);
    const gw = await gateway(t, config(b));

    const unknown = await gw.patch('/v1/admin/routers/third', { fallbacks: ['nowhere'] });
    assert.equal(unknown.status, 409);
    assert.match(unknown.body.error.message, /fallback "nowhere" of router "third" does not exist/);

    const loop = await gw.patch('/v1/admin/routers/third', { fallbacks: ['primary'] });
    assert.equal(loop.status, 409);
    assert.match(loop.body.error.message, /fallback "primary" of router "third" would close a loop: third → primary → second → third/);

    const wrongType = await gw.patch('/v1/admin/routers/third', { fallbacks: ['embed'] });
    assert.equal(wrongType.status, 409);
    assert.match(wrongType.body.error.message, /fallback "embed" of router "third" is of type text-embeddings-inference/);

    const deleted = await gw.delete('/v1/admin/routers/second');
    assert.equal(deleted.status, 409, 'a router another names as its fallback stays');
    assert.match(deleted.body.error.message, /fallback "second" of router "primary" does not exist/);

    const fine = await gw.patch('/v1/admin/routers/third', { fallbacks: [], context_fallback: false });
    assert.equal(fine.status, 200);
    assert.deepEqual([fine.body.fallbacks, fine.body.context_fallback], [[], false]);
    assert.equal((await gw.get('/v1/admin/routers/primary')).body.fallbacks[0], 'second');
  });

  test('the config file refuses a loop, naming the field and the routers', async () => {
    await assert.rejects(
      bed.gateway(`
models:
  - id: a
    type: text-generation
    fallbacks: [b]
    providers: [{ model: sim, type: simulator }]
  - id: b
    type: text-generation
    fallbacks: [a]
    providers: [{ model: sim, type: simulator }]
`),
      /models\[1\]\.fallbacks\[0\]: fallback "a" of router "b" would close a loop: b → a → b/,
    );
  });
});
