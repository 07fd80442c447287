// The load-balancing strategies (spec 4, provider selection) through a real gateway and fake
// OpenAI-format backends on real sockets. Providers are told apart by the backend-side `model`
// name each one sends.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chat, countByModel, modelEntry, receivedModels } from '../../support/routing.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

describe('shuffle', () => {
  let fake: FakeBackend;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI();
    const providers = ['backend-a', 'backend-b', 'backend-c'].map((model) => ({ model, url: fake.url }));
    gw = await bed.gateway({ models: [modelEntry('shuffled', 'shuffle', providers)] });
  });

  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('spreads 3000 requests evenly over 3 providers', async () => {
    const REQUESTS = 3000;
    const BATCH = 50;
    for (let sent = 0; sent < REQUESTS; sent += BATCH) {
      const answers = await Promise.all(Array.from({ length: BATCH }, () => chat(gw, 'shuffled')));
      for (const answer of answers) assert.equal(answer.status, 200);
    }
    // Each request picks a provider uniformly: a provider's share is Binomial(3000, 1/3), mean
    // 1000 and standard deviation sqrt(3000 * 1/3 * 2/3) = 25.8. Six standard deviations (+-155)
    // leave a chance of about 6e-9 that a correct strategy fails, while a strategy that favours
    // or skips a provider (all on the first, or 1500/1500/0) is far outside.
    const EXPECTED = REQUESTS / 3;
    const TOLERANCE = 155;
    const counts = countByModel(fake);
    assert.deepEqual(Object.keys(counts).sort(), ['backend-a', 'backend-b', 'backend-c']);
    for (const [model, count] of Object.entries(counts)) {
      assert.ok(
        Math.abs(count - EXPECTED) <= TOLERANCE,
        `${model} received ${count} requests, expected ${EXPECTED} +- ${TOLERANCE}: ${JSON.stringify(counts)}`,
      );
    }
  });
});

describe('round_robin', () => {
  let fake: FakeBackend;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI();
    const providers = ['backend-a', 'backend-b', 'backend-c'].map((model) => ({ model, url: fake.url }));
    gw = await bed.gateway({ models: [modelEntry('in-turn', 'round_robin', providers)] });
  });

  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('takes the providers in turn, in declaration order', async () => {
    for (let i = 0; i < 9; i++) assert.equal((await chat(gw, 'in-turn')).status, 200);
    assert.deepEqual(receivedModels(fake), [
      'backend-a',
      'backend-b',
      'backend-c',
      'backend-a',
      'backend-b',
      'backend-c',
      'backend-a',
      'backend-b',
      'backend-c',
    ]);
  });
});

describe('least_busy', () => {
  let fast: FakeBackend;
  let slow: FakeBackend;
  let gw: TestGateway;

  before(async () => {
    fast = await startFakeOpenAI();
    slow = await startFakeOpenAI();
    slow.behave({ delayMs: 300 });
    gw = await bed.gateway({
      models: [
        modelEntry('least-busy', 'least_busy', [
          { model: 'slow-backend', url: slow.url },
          { model: 'fast-backend', url: fast.url },
        ]),
      ],
    });
  });

  after(async () => {
    await gw.close();
    await fast.close();
    await slow.close();
  });

  test('sends most requests to the provider that answers fast', async () => {
    // 4 clients take 40 requests from one shared pool, each sending its next request as soon as
    // its previous one is answered. least_busy picks the provider with fewer requests in flight.
    // A request to the slow provider stays in flight for 300 ms, one to the fast provider for a
    // few ms, so the slow provider is nearly always the busier one at a pick. It can hold at most
    // 2 of the 4 clients (a pick goes to it only when it has no more in flight than the fast
    // one), so at least 2 clients keep cycling through the fast provider and empty the pool.
    // If a fast answer takes f ms, the slow provider gets about 2 + 38 * f / (300 + f) requests:
    // 3-4 at f = 10 ms, and still fewer than 14 at f = 120 ms, so the bound below holds on a
    // loaded machine. shuffle would give the slow provider about 20 (Binomial(40, 1/2)).
    const REQUESTS = 40;
    const CLIENTS = 4;
    let remaining = REQUESTS;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (remaining > 0) {
          remaining--;
          statuses.push((await chat(gw, 'least-busy')).status);
        }
      }),
    );
    assert.deepEqual(statuses, Array(REQUESTS).fill(200));
    const counts = countByModel(fast, slow);
    const toFast = counts['fast-backend'] ?? 0;
    assert.equal(toFast + (counts['slow-backend'] ?? 0), REQUESTS);
    assert.ok(
      toFast >= (REQUESTS * 2) / 3,
      `the fast provider should receive at least two thirds of ${REQUESTS}: ${JSON.stringify(counts)}`,
    );
  });
});
