// Retries of a provider and the request's deadline, through a real gateway and a fake backend: a
// transient failure (503, 429, a refused connection) is tried again after a backoff delay, a
// short Retry-After is honoured, the deadline stops retries, a client may shorten it with
// x-tollgate-timeout, and nothing is tried again once the answer has started. The delays
// themselves are the unit tests' (test/unit/routing/forwarder.test.ts); here they are small.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chat, modelEntry } from '../../support/routing.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

/** Short delays, so that a test retrying waits milliseconds. */
const FAST = { retryBaseMs: 5, retryMaxMs: 20 };

async function oneBackend(t: TestContext, settings: Record<string, unknown> = {}): Promise<{ gw: TestGateway; fake: FakeBackend }> {
  const fake = await startFakeOpenAI();
  const gw = await bed.gateway(
    { models: [modelEntry('chat', 'round_robin', [{ model: 'backend', url: fake.url }])] },
    {
      settings: { ...FAST, ...settings },
    },
  );
  t.after(async () => {
    await gw.close();
    await fake.close();
  });
  return { gw, fake };
}

const retriesCounted = async (gw: TestGateway) =>
  Number((await gw.get('/metrics')).body.match(/tollgate_upstream_retries_total\{[^}]*\} (\d+)/)?.[1] ?? 0);

describe('retries of a provider', () => {
  test('a backend failing twice with 503 then answering is retried and serves the request', async (t) => {
    const { gw, fake } = await oneBackend(t);
    fake.once({ status: 503 });
    fake.once({ status: 503 });

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 200);
    assert.equal(fake.requests.length, 3, 'the first attempt and two retries');
    assert.equal(await retriesCounted(gw), 2);
  });

  test('a 429 with a short Retry-After is retried after it; a long one is not', async (t) => {
    const { gw, fake } = await oneBackend(t, { retryAfterMaxSeconds: 2 });
    fake.once({ status: 429, retryAfter: '0' });
    assert.equal((await chat(gw, 'chat')).status, 200, 'retried at once (Retry-After: 0)');
    assert.equal(fake.requests.length, 2);

    fake.once({ status: 429, retryAfter: '120' });
    const refused = await chat(gw, 'chat');
    assert.equal(refused.status, 502, 'two minutes is past --retry-after-max-seconds: not retried');
    assert.equal(fake.requests.length, 3);
  });

  test('retries stop at the provider retries, and 500 is not retried', async (t) => {
    const { gw, fake } = await oneBackend(t, { retries: 1, maxAttempts: 5 });
    fake.behave({ status: 503 });
    assert.equal((await chat(gw, 'chat')).status, 502);
    assert.equal(fake.requests.length, 2, 'one try and one retry');

    fake.behave({ status: 500 });
    assert.equal((await chat(gw, 'chat')).status, 502);
    assert.equal(fake.requests.length, 3, 'a 500 is not retried');
  });

  test('the deadline stops retries: with delays longer than what is left, one attempt only', async (t) => {
    const { gw, fake } = await oneBackend(t, { retryBaseMs: 60_000, retryMaxMs: 60_000, requestTimeoutSeconds: 5 });
    fake.behave({ status: 503 });

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 502);
    assert.equal(fake.requests.length, 1, 'a retry after 30-60 s would end past the 5 s deadline');
  });

  test('x-tollgate-timeout shortens the deadline: a slow backend times out within it (504)', async (t) => {
    const { gw, fake } = await oneBackend(t);
    fake.behave({ delayMs: 5_000 });

    const answer = await chat(gw, 'chat', { ...gw.auth, 'x-tollgate-timeout': '0.3' });

    assert.equal(answer.status, 504);
    assert.equal(answer.body.error.code, 'upstream_timeout');
  });

  test('a malformed x-tollgate-timeout is refused with 400, naming the header', async (t) => {
    const { gw, fake } = await oneBackend(t);
    for (const value of ['soon', '-1', '0']) {
      const answer = await chat(gw, 'chat', { ...gw.auth, 'x-tollgate-timeout': value });
      assert.equal(answer.status, 400, value);
      assert.equal(answer.body.error.param, 'x-tollgate-timeout');
    }
    assert.equal(fake.requests.length, 0);
  });

  test('a stream the backend breaks off after its first chunk is not retried', async (t) => {
    const { gw, fake } = await oneBackend(t);
    fake.behave({ breakAfterChunks: 1, text: 'one two three' });

    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...gw.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();

    assert.equal(response.status, 200);
    assert.match(text, /upstream_interrupted/);
    assert.equal(fake.requests.length, 1);
  });
});

describe('separate timeouts per provider', () => {
  test("a provider's first_byte_seconds bounds the wait for its answer, over the gateway's setting", async (t) => {
    const fake = await startFakeOpenAI();
    fake.behave({ delayMs: 3_000 });
    const gw = await bed.gateway(
      {
        models: [
          {
            id: 'chat',
            type: 'text-generation',
            providers: [{ model: 'slow', type: 'vllm', retries: 0, timeouts: { first_byte_seconds: 0.2 }, args: { api_url: fake.url } }],
          },
        ],
      },
      { settings: { firstByteTimeoutSeconds: 60 } },
    );
    t.after(async () => {
      await gw.close();
      await fake.close();
    });

    const answer = await chat(gw, 'chat');

    assert.equal(answer.status, 504);
    assert.equal(fake.requests.length, 1, 'a timeout is not retried on the same provider');
  });
});
