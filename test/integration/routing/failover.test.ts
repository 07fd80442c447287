// Failover (the forwarder): a provider that fails before anything reached the client
// (connection refused, timeout, 429, 5xx) is replaced by another provider of the same router;
// a request the backend refuses as malformed (400, 422) is the caller's to fix and is not
// retried; attempts are bounded; when every attempt fails the client gets 502, or 504 when the
// last one timed out. round_robin makes the first pick the first declared provider.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { Behaviour, FakeBackend } from '../../support/fake-server.ts';
import { chat, closedPortUrl, configYaml, countByModel, modelEntry, receivedModels, type ProviderEntry } from '../../support/routing.ts';

async function fakeBackend(t: TestContext, behaviour: Behaviour = {}): Promise<FakeBackend> {
  const fake = await startFakeOpenAI();
  fake.behave(behaviour);
  t.after(() => fake.close());
  return fake;
}

async function gateway(t: TestContext, id: string, providers: ProviderEntry[], options: TestGatewayOptions = {}): Promise<TestGateway> {
  const gw = await startTestGateway(configYaml(modelEntry(id, 'round_robin', providers)), options);
  t.after(() => gw.close());
  return gw;
}

describe('failover to the next provider', () => {
  const failures: { name: string; broken: (t: TestContext) => Promise<{ url: string; fake?: FakeBackend }> }[] = [
    { name: 'answers 500', broken: async (t) => { const fake = await fakeBackend(t, { status: 500 }); return { url: fake.url, fake }; } },
    { name: 'answers 503', broken: async (t) => { const fake = await fakeBackend(t, { status: 503 }); return { url: fake.url, fake }; } },
    { name: 'answers 429', broken: async (t) => { const fake = await fakeBackend(t, { status: 429 }); return { url: fake.url, fake }; } },
    { name: 'answers 502', broken: async (t) => { const fake = await fakeBackend(t, { status: 502 }); return { url: fake.url, fake }; } },
    { name: 'refuses the connection (closed port)', broken: async () => ({ url: await closedPortUrl() }) },
  ];
  for (const { name, broken } of failures) {
    test(`when the first provider ${name}, the client gets 200 from the second`, async (t) => {
      const first = await broken(t);
      const second = await fakeBackend(t);
      const gw = await gateway(t, 'chat', [{ model: 'first-backend', url: first.url }, { model: 'second-backend', url: second.url }]);

      const answer = await chat(gw, 'chat');

      assert.equal(answer.status, 200);
      assert.equal(answer.body.model, 'chat');
      assert.equal(answer.body.object, 'chat.completion');
      assert.deepEqual(receivedModels(second), ['second-backend']);
      if (first.fake) assert.deepEqual(receivedModels(first.fake), ['first-backend'], 'the first provider was tried first');
    });
  }

  test('a provider that times out is replaced too', async (t) => {
    const slow = await fakeBackend(t, { delayMs: 1000 });
    const healthy = await fakeBackend(t);
    const gw = await gateway(t, 'chat', [{ model: 'slow-backend', url: slow.url, timeout: 0.2 }, { model: 'healthy-backend', url: healthy.url }]);

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
      const gw = await gateway(t, 'chat', [{ model: 'refusing-backend', url: refusing.url }, { model: 'other-backend', url: other.url }]);

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
    const gw = await gateway(t, 'flaky', [{ model: 'backend-a', url: a.url }, { model: 'backend-b', url: b.url }]);

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
    const slow = await fakeBackend(t, { delayMs: 1000 });
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
    const gw = await gateway(t, 'flaky', ['backend-a', 'backend-b', 'backend-c'].map((model) => ({ model, url: failing.url })), { settings: { maxAttempts: 2 } });

    const answer = await chat(gw, 'flaky');

    assert.equal(answer.status, 502);
    assert.match(answer.body.error.message, /^All providers of model "flaky" failed \(2 attempts\)/);
    assert.deepEqual(receivedModels(failing), ['backend-a', 'backend-b']);
  });

  test('each provider is tried at most once per request', async (t) => {
    const failing = await fakeBackend(t, { status: 500 });
    const gw = await gateway(t, 'flaky', ['backend-a', 'backend-b'].map((model) => ({ model, url: failing.url })), { settings: { maxAttempts: 5 } });

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
