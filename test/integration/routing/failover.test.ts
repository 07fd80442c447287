// Failover (the forwarder): a provider that fails before anything reached the client
// (connection refused, timeout, 429, 5xx) is replaced by another provider of the same router;
// a request the backend refuses as malformed (400, 422) is the caller's to fix and is not
// retried; attempts are bounded; when every attempt fails the client gets 502, or 504 when the
// last one timed out. round_robin makes the first pick the first declared provider.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway, TestGatewayOptions } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { Behaviour, FakeBackend } from '../../support/fake-server.ts';
import { waitUntil } from '../http/helpers.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { chat, closedPortUrl, countByModel, modelEntry, receivedModels, type ProviderEntry } from '../../support/routing.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

async function fakeBackend(t: TestContext, behaviour: Behaviour = {}): Promise<FakeBackend> {
  const fake = await startFakeOpenAI();
  fake.behave(behaviour);
  t.after(() => fake.close());
  return fake;
}

/** A gateway that does not retry a provider (retries.test.ts has those): each failing backend is asked once. */
async function gateway(t: TestContext, id: string, providers: ProviderEntry[], options: TestGatewayOptions = {}): Promise<TestGateway> {
  const settings = { retries: 0, ...options.settings };
  return bed.gateway({ models: [modelEntry(id, 'round_robin', providers)] }, { ...options, settings, t });
}

describe('failover to the next provider', () => {
  const failures: { name: string; broken: (t: TestContext) => Promise<{ url: string; fake?: FakeBackend }> }[] = [
    {
      name: 'answers 500',
      broken: async (t) => {
        const fake = await fakeBackend(t, { status: 500 });
        return { url: fake.url, fake };
      },
    },
    {
      name: 'answers 503',
      broken: async (t) => {
        const fake = await fakeBackend(t, { status: 503 });
        return { url: fake.url, fake };
      },
    },
    {
      name: 'answers 429',
      broken: async (t) => {
        const fake = await fakeBackend(t, { status: 429 });
        return { url: fake.url, fake };
      },
    },
    {
      name: 'answers 502',
      broken: async (t) => {
        const fake = await fakeBackend(t, { status: 502 });
        return { url: fake.url, fake };
      },
    },
    { name: 'refuses the connection (closed port)', broken: async () => ({ url: await closedPortUrl() }) },
  ];
  for (const { name, broken } of failures) {
    test(`when the first provider ${name}, the client gets 200 from the second`, async (t) => {
      const first = await broken(t);
      const second = await fakeBackend(t);
      const gw = await gateway(t, 'chat', [
        { model: 'first-backend', url: first.url },
        { model: 'second-backend', url: second.url },
      ]);

      const answer = await chat(gw, 'chat');

      assert.equal(answer.status, 200);
      assert.equal(answer.body.model, 'chat');
      assert.equal(answer.body.object, 'chat.completion');
      assert.deepEqual(receivedModels(second), ['second-backend']);
      if (first.fake) assert.deepEqual(receivedModels(first.fake), ['first-backend'], 'the first provider was tried first');
    });
  }

  test('a provider that times out is replaced too', async (t) => {
    const slow = await fakeBackend(t, { delayMs: 60_000 });
    const healthy = await fakeBackend(t);
    const gw = await gateway(t, 'chat', [
      { model: 'slow-backend', url: slow.url, timeout: 0.2 },
      { model: 'healthy-backend', url: healthy.url },
    ]);

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 200);
    assert.deepEqual(countByModel(slow, healthy), { 'slow-backend': 1, 'healthy-backend': 1 });
  });
});

describe('no failover when the backend refuses the request itself', () => {
  for (const status of [400, 422]) {
    test(`a ${status} from the backend reaches the client as a 400 envelope, and no other provider is tried`, async (t) => {
      const refusing = await fakeBackend(t, { status });
      const other = await fakeBackend(t);
      const gw = await gateway(t, 'chat', [
        { model: 'refusing-backend', url: refusing.url },
        { model: 'other-backend', url: other.url },
      ]);

      const answer = await chat(gw, 'chat');

      assert.equal(answer.status, 400);
      assert.deepEqual(answer.body, {
        error: {
          message: `The provider rejected the request: the backend answered ${status}: fake failure ${status}`,
          type: 'invalid_request_error',
          param: null,
          code: 'upstream_rejected',
        },
      });
      assert.equal(refusing.requests.length, 1);
      assert.equal(other.requests.length, 0);
    });
  }
});

describe('when every provider fails', () => {
  test('the client gets 502 saying all providers of the model failed', async (t) => {
    const a = await fakeBackend(t, { status: 500 });
    const b = await fakeBackend(t, { status: 503 });
    const gw = await gateway(t, 'flaky', [
      { model: 'backend-a', url: a.url },
      { model: 'backend-b', url: b.url },
    ]);

    const answer = await chat(gw, 'flaky');

    assert.equal(answer.status, 502);
    assert.deepEqual(answer.body, {
      error: {
        message: 'All providers of model "flaky" failed (2 attempts); last error: the backend answered 503: fake failure 503',
        type: 'upstream_error',
        param: null,
        code: 'upstream_failed',
      },
    });
    assert.deepEqual(countByModel(a, b), { 'backend-a': 1, 'backend-b': 1 });
  });

  test('the client gets 504 when they all time out', async (t) => {
    const slow = await fakeBackend(t, { delayMs: 60_000 });
    const gw = await gateway(t, 'slow', [
      { model: 'backend-a', url: slow.url, timeout: 0.2 },
      { model: 'backend-b', url: slow.url, timeout: 0.2 },
    ]);

    const answer = await chat(gw, 'slow');

    assert.equal(answer.status, 504);
    assert.deepEqual(answer.body, {
      error: {
        message: 'No provider of model "slow" answered within its timeout (2 attempts)',
        type: 'timeout_error',
        param: null,
        code: 'upstream_timeout',
      },
    });
    assert.deepEqual(countByModel(slow), { 'backend-a': 1, 'backend-b': 1 });
  });

  test('attempts are bounded by maxAttempts: 2 of 3 failing providers are tried', async (t) => {
    const failing = await fakeBackend(t, { status: 500 });
    const gw = await gateway(
      t,
      'flaky',
      ['backend-a', 'backend-b', 'backend-c'].map((model) => ({ model, url: failing.url })),
      { settings: { maxAttempts: 2 } },
    );

    const answer = await chat(gw, 'flaky');

    assert.equal(answer.status, 502);
    assert.match(answer.body.error.message, /^All providers of model "flaky" failed \(2 attempts\)/);
    assert.deepEqual(receivedModels(failing), ['backend-a', 'backend-b']);
  });

  test('each provider is tried at most once per request', async (t) => {
    const failing = await fakeBackend(t, { status: 500 });
    const gw = await gateway(
      t,
      'flaky',
      ['backend-a', 'backend-b'].map((model) => ({ model, url: failing.url })),
      { settings: { maxAttempts: 5 } },
    );

    const answer = await chat(gw, 'flaky');

    assert.equal(answer.status, 502);
    assert.match(answer.body.error.message, /\(2 attempts\)/);
    assert.deepEqual(receivedModels(failing), ['backend-a', 'backend-b']);
  });
});

describe('timeout of a single provider', () => {
  test('a provider timeout of 0.3 s against a backend that takes 1 s gives 504', async (t) => {
    const slow = await fakeBackend(t, { delayMs: 1000 });
    const gw = await gateway(t, 'slow', [{ model: 'only-backend', url: slow.url, timeout: 0.3 }]);

    const answer = await chat(gw, 'slow');

    assert.equal(answer.status, 504);
    assert.deepEqual(answer.body, {
      error: {
        message: 'No provider of model "slow" answered within its timeout (1 attempt)',
        type: 'timeout_error',
        param: null,
        code: 'upstream_timeout',
      },
    });
    assert.equal(slow.requests.length, 1);
  });

  test('the same backend within the timeout answers 200', async (t) => {
    const slowish = await fakeBackend(t, { delayMs: 100 });
    const gw = await gateway(t, 'slowish', [{ model: 'only-backend', url: slowish.url, timeout: 5 }]);

    assert.equal((await chat(gw, 'slowish')).status, 200);
  });
});

describe('answers the gateway does not relay', () => {
  // A 1 MiB bound against a 4 MiB answer: the fake writes it in pieces, never holding it.
  const BOUND = { maxUpstreamBodyBytes: 1024 * 1024 };
  const HUGE = 4 * 1024 * 1024;

  test('an answer larger than --max-upstream-body-bytes is dropped unread and the next provider answers', async (t) => {
    const huge = await fakeBackend(t, { hugeBodyBytes: HUGE });
    const healthy = await fakeBackend(t);
    const gw = await gateway(
      t,
      'chat',
      [
        { model: 'huge-backend', url: huge.url },
        { model: 'healthy-backend', url: healthy.url },
      ],
      { settings: BOUND },
    );

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 200);
    assert.equal(answer.body.object, 'chat.completion');
    assert.equal('pad' in answer.body, false, 'the answer is not the huge one');
    assert.deepEqual(countByModel(huge, healthy), { 'huge-backend': 1, 'healthy-backend': 1 });
    assert.equal(huge.abortedRequests, 1, 'the gateway stopped reading the huge answer');
  });

  test('an error body larger than the bound is not read to its end either: the next provider answers', async (t) => {
    const huge = await fakeBackend(t, { status: 500, hugeBodyBytes: HUGE });
    const healthy = await fakeBackend(t);
    const gw = await gateway(
      t,
      'chat',
      [
        { model: 'huge-backend', url: huge.url },
        { model: 'healthy-backend', url: healthy.url },
      ],
      { settings: BOUND },
    );

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 200);
    assert.deepEqual(countByModel(huge, healthy), { 'huge-backend': 1, 'healthy-backend': 1 });
    assert.equal(
      await waitUntil(
        () => huge.abortedRequests,
        (n) => n === 1,
      ),
      1,
      'the gateway stopped reading the error body',
    );
  });

  test('when every answer is too large the client gets 502 saying so', async (t) => {
    const huge = await fakeBackend(t, { hugeBodyBytes: HUGE });
    const gw = await gateway(t, 'chat', [{ model: 'huge-backend', url: huge.url }], { settings: BOUND });

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 502);
    assert.deepEqual(answer.body.error, {
      message:
        'All providers of model "chat" failed (1 attempt); last error: the backend\'s answer is larger than 1048576 bytes (--max-upstream-body-bytes)',
      type: 'upstream_error',
      param: null,
      code: 'upstream_failed',
    });
  });

  const streamChat = (gw: TestGateway) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...gw.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Say hello' }], stream: true }),
    });

  test('a JSON answer to a streamed request fails over before anything reached the client', async (t) => {
    const plain = await fakeBackend(t, { jsonForStream: true });
    const streaming = await fakeBackend(t);
    const gw = await gateway(t, 'chat', [
      { model: 'plain-backend', url: plain.url },
      { model: 'streaming-backend', url: streaming.url },
    ]);

    const response = await streamChat(gw);
    const text = await response.text();

    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(text.endsWith('data: [DONE]\n\n'), `the stream ends with [DONE]: ${text.slice(-200)}`);
    assert.ok(!text.includes('upstream_interrupted'));
    assert.deepEqual(countByModel(plain, streaming), { 'plain-backend': 1, 'streaming-backend': 1 });
  });

  test('when every provider answers a streamed request with JSON, the client gets a 502 and is charged nothing', async (t) => {
    const plain = await fakeBackend(t, { jsonForStream: true });
    const gw = await gateway(t, 'chat', [{ model: 'plain-backend', url: plain.url }]);

    const response = await streamChat(gw);
    const body = (await response.json()) as any;

    assert.equal(response.status, 502);
    assert.equal(body.error.code, 'upstream_failed');
    assert.match(body.error.message, /the backend answered a streamed request with application\/json instead of text\/event-stream$/);
    // The request is recorded as refused: no provider, no tokens (the stream of the old code
    // was recorded with the prompt's tokens, as produced).
    const usage = await waitUntil(
      () => gw.get('/v1/usage'),
      (u) => u.body.data?.length === 1,
    );
    assert.deepEqual(
      usage.body.data.map((r: any) => ({
        status: r.status,
        provider: r.provider,
        prompt_tokens: r.prompt_tokens,
        completion_tokens: r.completion_tokens,
      })),
      [{ status: 502, provider: null, prompt_tokens: 0, completion_tokens: 0 }],
    );
  });
});

describe("the gateway's secrets in what backends send back", () => {
  const KEY = 'sk-provider-secret-4f9a2c';

  test('a backend that echoes the Authorization header in a 500: the 502 the client gets does not hold the key', async (t) => {
    const echoing = await fakeBackend(t, { echoAuthorization: 500 });
    const gw = await gateway(t, 'chat', [{ model: 'echoing-backend', url: echoing.url, key: KEY }]);

    const answer = await chat(gw, 'chat');

    assert.equal(echoing.requests[0]?.headers.authorization, `Bearer ${KEY}`, 'the backend was sent the key');
    assert.equal(answer.status, 502);
    assert.equal(
      answer.body.error.message,
      'All providers of model "chat" failed (1 attempt); last error: the backend answered 500: invalid credentials: Bearer ***',
    );
  });

  test('in a 400 relayed to the client as upstream_rejected, the key is masked too', async (t) => {
    const echoing = await fakeBackend(t, { echoAuthorization: 400 });
    const gw = await gateway(t, 'chat', [{ model: 'echoing-backend', url: echoing.url, key: KEY }]);

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.message, 'The provider rejected the request: the backend answered 400: invalid credentials: Bearer ***');
  });
  test("the gateway's log of that failure does not hold the key either", async (t) => {
    const echoing = await fakeBackend(t, { echoAuthorization: 500 });
    const adminKey = generateKey().secret;
    // A threshold of 1: the provider's circuit breaker opens on this failure, which logs the failure's text too.
    const gw = await bed.process(
      { models: [modelEntry('chat', 'round_robin', [{ model: 'echoing-backend', url: echoing.url, key: KEY }])] },
      { t, args: ['--admin-key', adminKey, '--failure-threshold', '1'] },
    );

    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    assert.equal(response.status, 502);
    assert.equal(echoing.requests[0]?.headers.authorization, `Bearer ${KEY}`);

    const logged = (text: string) => gw.output.filter((line) => line.includes(text));
    await waitUntil(
      () => logged('invalid credentials').length,
      (n) => n >= 2,
    );
    assert.deepEqual(logged(KEY), []);
    const failures = logged('invalid credentials');
    assert.ok(
      failures.some((line) => line.includes('circuit breaker open')),
      failures.join('\n'),
    );
    assert.ok(
      failures.some((line) => line.includes('All providers of model')),
      failures.join('\n'),
    );
    for (const line of failures) assert.match(line, /invalid credentials: Bearer \*\*\*/);
  });
});
