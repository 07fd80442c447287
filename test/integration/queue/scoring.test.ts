// How workers choose among providers with room, on the fleet's live numbers. When one provider
// slows down, most new traffic moves to the other within seconds, with lowest_latency (time to
// first token, as every gateway reports it) and with least_busy (slots in use against capacity);
// when it recovers it gets traffic again. A provider that failed a request is excluded when the
// request is placed again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { contents, queueChat, queueConfig } from '../../support/queue.ts';
import { poll } from '../../support/eventually.ts';
import { SETTLE_MS } from '../../support/patience.ts';

const bed = testBed({ redis: true });
let a: FakeBackend;
let b: FakeBackend;

before(async () => {
  a = await startFakeOpenAI();
  b = await startFakeOpenAI();
});

after(async () => {
  await Promise.all([a.close(), b.close()]);
});

/** Eight clients sending one request after another until stopped. */
function steadyLoad(gw: TestGateway, key: string): { stop(): Promise<void> } {
  let running = true;
  const clients = Array.from({ length: 8 }, async () => {
    while (running) {
      const outcome = await queueChat(gw.url, key);
      assert.equal(outcome.status, 200, outcome.message);
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

/** The share of provider a among the next `count` requests the two backends receive. */
async function shareOfA(count: number): Promise<number> {
  const [startA, startB] = [a.requests.length, b.requests.length];
  await poll(
    () => a.requests.length - startA + (b.requests.length - startB),
    (n) => n >= count,
    { timeoutMs: SETTLE_MS },
  );
  const da = a.requests.length - startA;
  return da / (da + b.requests.length - startB);
}

for (const strategy of ['lowest_latency', 'least_busy'] as const) {
  describe(`${strategy}: a provider that slows down`, () => {
    test('loses most new traffic within seconds, and gets traffic again once it recovers', async (t) => {
      const setup = queueConfig({
        strategy,
        providers: [
          { id: 'pa', backend: a, maxConcurrent: 8 },
          { id: 'pb', backend: b, maxConcurrent: 8 },
        ],
        priorities: { app: 0 },
      });
      const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 } });
      a.behave({ delayMs: 5 });
      b.behave({ delayMs: 5 });
      const load = steadyLoad(gw, setup.keys.app!);
      try {
        // Equal providers share (times measured under load are noisy: a window may favour one).
        const equal = await poll(
          () => shareOfA(200),
          (share) => share > 0.1 && share < 0.9,
          { timeoutMs: SETTLE_MS },
        );
        assert.ok(equal.accepted, `both take traffic while equal (a: ${((equal.value ?? 0) * 100).toFixed(0)}%)`);
        a.behave({ delayMs: 250 });
        // Within a few seconds, most of a window of requests goes to b.
        const slow = await poll(
          () => shareOfA(200),
          (share) => share < 0.2,
          { timeoutMs: SETTLE_MS },
        );
        assert.ok(slow.accepted, `a still had ${((slow.value ?? 1) * 100).toFixed(0)}% of the traffic while slow`);
        a.behave({ delayMs: 5 });
        const recovered = await poll(
          () => shareOfA(200),
          (share) => share > 0.25,
          { timeoutMs: SETTLE_MS },
        );
        assert.ok(recovered.accepted, `a recovered but got only ${((recovered.value ?? 0) * 100).toFixed(0)}% of the traffic`);
      } finally {
        await load.stop();
        a.behave({});
        b.behave({});
      }
    });
  });
}

describe('retries of failed routing', () => {
  test('a provider that failed the request is excluded when the request is placed again', async (t) => {
    const setup = queueConfig({
      strategy: 'round_robin',
      providers: [
        { id: 'pa', backend: a, maxConcurrent: 4 },
        { id: 'pb', backend: b, maxConcurrent: 4 },
      ],
      priorities: { app: 0 },
    });
    // A cool-down after one failure would keep a away by itself: the exclusion is what is tested.
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1, failureThreshold: 100 } });
    a.requests.length = 0;
    b.requests.length = 0;
    a.behave({ status: 503 });
    try {
      for (let i = 0; i < 10; i++) {
        const outcome = await queueChat(gw.url, setup.keys.app!, `retry ${i}`);
        assert.equal(outcome.status, 200, outcome.message);
      }
      assert.ok(a.requests.length > 0, 'a was chosen at times');
      assert.equal(new Set(contents(a)).size, a.requests.length, 'a never got the same request twice');
      assert.deepEqual(contents(b).sort(), Array.from({ length: 10 }, (_, i) => `retry ${i}`).sort(), 'b served each request once');
    } finally {
      a.behave({});
    }
  });
});
