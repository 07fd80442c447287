// Priorities of waiting requests: a user's priority orders the queue (higher first, then first
// come, first served), and a lower priority ages forward, so it waits longer but never for ever.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { contents, queueChat, queueConfig, type QueueConfig } from '../../support/queue.ts';
import { eventually } from '../../support/eventually.ts';
import { queueKeys } from '../../../core/store/redis/queue-keys.ts';

const bed = testBed({ redis: true });
let client: Redis;
let backend: FakeBackend;

before(async () => {
  await bed.ready();
  client = new Redis(bed.redis.url);
  backend = await startFakeOpenAI();
});

after(async () => {
  client.disconnect();
  await backend.close();
});

/** A gateway with a worker over one provider with a single slot, for users low (-5) and high (5), closed when `t` ends. */
async function oneSlot(
  t: TestContext,
  agingSeconds: number,
  queue?: QueueConfig['queue'],
): Promise<{ gw: TestGateway; keys: Record<string, string> }> {
  const setup = queueConfig({
    providers: [{ id: 'only', backend, maxConcurrent: 1 }],
    priorities: { low: -5, high: 5 },
    ...(queue && { queue }),
  });
  const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1, queueAgingSeconds: agingSeconds } });
  return { gw, keys: setup.keys };
}

const waiting = () => client.zcard(queueKeys.waiting('chat'));

describe('a request waiting for a slot', () => {
  test('whose client goes away leaves the queue, and never reaches the backend', async (t) => {
    const { gw, keys } = await oneSlot(t, 3600);
    try {
      backend.requests.length = 0;
      backend.behave({ delayMs: 300 });
      const first = queueChat(gw.url, keys.low!, 'holds the slot');
      await eventually(async () => (await client.zcard(queueKeys.slots('chat', 'only'))) === 1, 'the slot is taken');
      const gone = new AbortController();
      const abandoned = queueChat(gw.url, keys.high!, 'abandoned', gone.signal).catch((error: Error) => error.name);
      await eventually(async () => (await waiting()) === 1, 'the second request waits');
      gone.abort();
      assert.equal(await abandoned, 'AbortError');
      await eventually(async () => (await waiting()) === 0, 'it left the queue');
      assert.equal((await first).status, 200);
      const after = await queueChat(gw.url, keys.low!, 'after');
      assert.equal(after.status, 200);
      assert.deepEqual(contents(backend), ['holds the slot', 'after']);
    } finally {
      backend.behave({});
    }
  });

  test('that streams for longer than the slot lifetime keeps its slot: the gateway renews it', async (t) => {
    const setup = queueConfig({ providers: [{ id: 'only', backend, maxConcurrent: 1 }], priorities: { app: 0 } });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1, queueSlotTtlSeconds: 1 } });
    try {
      backend.requests.length = 0;
      backend.behave({ chunkDelayMs: 250, text: 'one two three four five six seven eight nine ten' });
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${setup.keys.app}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'long' }], stream: true }),
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      // Past 1.5 s of streaming (six chunks 250 ms apart), the slot would have expired unrenewed.
      while ((text.match(/"content":/g) ?? []).length < 7) text += decoder.decode((await reader.read()).value ?? new Uint8Array());
      assert.equal(await client.zcount(queueKeys.slots('chat', 'only'), Date.now(), '+inf'), 1, 'the slot is still held, and alive');
      const second = queueChat(gw.url, setup.keys.app!, 'second');
      await eventually(async () => (await waiting()) === 1, 'the next request waits for the slot');
      while (!(await reader.read()).done);
      assert.equal((await second).status, 200);
    } finally {
      backend.behave({});
    }
  });
});

describe('a full queue', () => {
  test('refuses with a Retry-After computed from the requests ahead and the pace of the slots, not a constant', async (t) => {
    const { gw, keys } = await oneSlot(t, 3600, { max_waiting: 6 });
    try {
      backend.behave({ delayMs: 500 });
      // The pace: one slot given every 500 ms or so.
      for (let i = 0; i < 3; i++) assert.equal((await queueChat(gw.url, keys.low!, `pace ${i}`)).status, 200);
      const queued = [queueChat(gw.url, keys.low!, 'holds the slot')];
      await eventually(async () => (await client.zcard(queueKeys.slots('chat', 'only'))) === 1, 'the slot is taken');
      for (let i = 0; i < 6; i++) queued.push(queueChat(gw.url, keys.low!, `waits ${i}`));
      await eventually(async () => (await waiting()) === 6, 'six wait: the queue is full');
      const refused = await queueChat(gw.url, keys.low!, 'one too many');
      assert.equal(refused.status, 503);
      assert.equal(refused.message, 'Model is too busy');
      // Seven ahead (six waiting and itself) at about 0.5 s each: about 4 s, neither the router's wait (30 s) nor 1.
      const seconds = Number(refused.retryAfter);
      assert.ok(seconds >= 3 && seconds <= 8, `Retry-After: ${refused.retryAfter}`);
      assert.deepEqual(new Set((await Promise.all(queued)).map((o) => o.status)), new Set([200]));
    } finally {
      backend.behave({});
    }
  });
});

describe('priorities', () => {
  test('with the only slot busy, a higher-priority request that arrives after lower ones is served first', async (t) => {
    const { gw, keys } = await oneSlot(t, 3600);
    try {
      backend.requests.length = 0;
      // The first request holds the only slot until the three others wait behind it.
      const slotHeld = Promise.withResolvers<void>();
      backend.behave({ until: slotHeld.promise });
      const first = queueChat(gw.url, keys.low!, 'holds the slot');
      await eventually(async () => (await client.zcard(queueKeys.slots('chat', 'only'))) === 1, 'the slot is taken');
      const lows = [queueChat(gw.url, keys.low!, 'low 1')];
      await eventually(async () => (await waiting()) === 1, 'low 1 waits');
      lows.push(queueChat(gw.url, keys.low!, 'low 2'));
      await eventually(async () => (await waiting()) === 2, 'low 2 waits');
      const high = queueChat(gw.url, keys.high!, 'high');
      await eventually(async () => (await waiting()) === 3, 'high waits');
      slotHeld.resolve();
      const outcomes = await Promise.all([first, ...lows, high]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        [200, 200, 200, 200],
      );
      assert.deepEqual(contents(backend), ['holds the slot', 'high', 'low 1', 'low 2']);
    } finally {
      backend.behave({});
    }
  });

  test('a low-priority request still gets through under steady high-priority load (it ages forward)', async (t) => {
    // One level is worth 20 ms of waiting: the low request (10 levels below) goes ahead of high
    // requests that arrive more than 200 ms after it, however many keep coming.
    const { gw, keys } = await oneSlot(t, 0.02);
    try {
      backend.requests.length = 0;
      backend.behave({ delayMs: 10 });
      let lowDone = false;
      // Four high-priority clients that keep the queue full until the low request is served, or
      // until each has sent 100 (then the low one would have been starved).
      const clients = Array.from({ length: 4 }, async (_, c) => {
        for (let i = 0; !lowDone && i < 100; i++) {
          const outcome = await queueChat(gw.url, keys.high!, `high ${c}.${i}`);
          assert.equal(outcome.status, 200);
        }
      });
      await eventually(async () => (await waiting()) >= 3, 'high-priority requests wait');
      const low = await queueChat(gw.url, keys.low!, 'low');
      lowDone = true;
      await Promise.all(clients);
      assert.equal(low.status, 200);
      const order = contents(backend);
      const lowAt = order.indexOf('low');
      assert.ok(lowAt > 0, 'the low request was served');
      // 10 levels of 20 ms: about 20 high requests of 10 ms go first, not the 400 the clients had.
      assert.ok(lowAt < 100, `it went after ${lowAt} high-priority requests, while they kept coming (${order.length} in all)`);
    } finally {
      backend.behave({});
    }
  });
});
