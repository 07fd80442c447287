// Cool-down: a provider that fails `failureThreshold` times in a row sits out `cooldownSeconds`,
// during which healthy providers take its share; afterwards it is tried again. round_robin makes
// the order deterministic: the failing provider is picked first, then the healthy one.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chat, modelEntry } from '../../support/routing.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

interface Setup {
  gw: TestGateway;
  failing: FakeBackend;
  healthy: FakeBackend;
}

async function setup(t: TestContext, settings: Record<string, unknown>): Promise<Setup> {
  const failing = await startFakeOpenAI();
  failing.behave({ status: 500 });
  const healthy = await startFakeOpenAI();
  const gw = await bed.gateway(
    {
      models: [
        modelEntry('chat', 'round_robin', [
          { model: 'failing-backend', url: failing.url },
          { model: 'healthy-backend', url: healthy.url },
        ]),
      ],
    },
    { settings },
  );
  t.after(async () => {
    await gw.close();
    await failing.close();
    await healthy.close();
  });
  return { gw, failing, healthy };
}

/** Sends requests (each answered 200 by failover) until the failing provider has failed `times` times. */
async function failUntil({ gw, failing }: Setup, times: number): Promise<void> {
  for (let i = 0; i < 10 * times && failing.requests.length < times; i++) {
    assert.equal((await chat(gw, 'chat')).status, 200, 'the healthy provider answers when the failing one fails');
  }
  assert.equal(failing.requests.length, times);
}

describe('cool-down after repeated failures', () => {
  test('after failing twice (failureThreshold 2) a provider gets no requests for its cool-down', async (t) => {
    const s = await setup(t, { failureThreshold: 2, cooldownSeconds: 60 });
    await failUntil(s, 2);
    const healthyBefore = s.healthy.requests.length;

    const NEXT = 10;
    for (let i = 0; i < NEXT; i++) assert.equal((await chat(s.gw, 'chat')).status, 200);

    assert.equal(s.failing.requests.length, 2, 'the failing provider sat out');
    assert.equal(s.healthy.requests.length, healthyBefore + NEXT, 'the healthy provider took every request');
    const metrics = await s.gw.get('/metrics');
    assert.match(metrics.body, /tollgate_provider_cooldowns_total\{[^}]*provider="chat-0"[^}]*\} 1/);
  });

  test('one failure under the threshold does not send a provider to sit out', async (t) => {
    const s = await setup(t, { failureThreshold: 2, cooldownSeconds: 60 });
    s.failing.behave({});
    s.failing.once({ status: 500 });
    for (let i = 0; i < 4; i++) assert.equal((await chat(s.gw, 'chat')).status, 200);
    // In turn: failing (fails once) then healthy; failing (answers); healthy; failing (answers).
    assert.equal(s.failing.requests.length, 3, 'the provider that failed once kept its turns');
  });

  test('after a short cool-down (0.2 s) the provider is tried again', async (t) => {
    const s = await setup(t, { failureThreshold: 2, cooldownSeconds: 0.2 });
    await failUntil(s, 2);

    // Keep sending until the provider is picked again, once its cool-down is over.
    const status = await eventually(async () => {
      const answer = await chat(s.gw, 'chat');
      return (answer.status !== 200 || s.failing.requests.length > 2) && answer.status;
    }, 'the provider tried again');
    assert.equal(status, 200);

    assert.equal(s.failing.requests.length, 3, 'the provider was tried again after its cool-down');
  });

  test('a provider that sits out is still used when it is the only one left', async (t) => {
    const s = await setup(t, { failureThreshold: 1, cooldownSeconds: 60 });
    s.healthy.behave({ status: 503 });
    assert.equal((await chat(s.gw, 'chat')).status, 502);
    // Both providers now sit out; a request still tries them rather than failing without trying.
    s.failing.behave({});
    const answer = await chat(s.gw, 'chat');
    assert.equal(answer.status, 200);
  });

  test('while every breaker is open, a request makes one call at most, and is told when to come back', async (t) => {
    const s = await setup(t, { failureThreshold: 1, cooldownSeconds: 60, retries: 2, maxAttempts: 3 });
    s.healthy.behave({ status: 503 });
    assert.equal((await chat(s.gw, 'chat')).status, 502);
    // Both breakers are open now. Before, each request still went to both, and retried: three calls.
    const before = s.failing.requests.length + s.healthy.requests.length;
    const answer = await chat(s.gw, 'chat');
    assert.equal(answer.status, 502);
    assert.equal(s.failing.requests.length + s.healthy.requests.length, before + 1, 'one call, to one of them');
    const retryAfter = Number(answer.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After: ${answer.headers.get('retry-after')}`);
  });
});
