// What a faulty gateway, backend or caller can no longer do to a queue-mode router: a gateway
// that died does not keep its waiting requests in the way, nor slots nobody uses; one 429 asking
// for an hour does not take a provider out for an hour; one caller cannot fill the waiting list
// for everyone; a Redis that restarted empty does not leave requests waiting for entries that
// are gone; and an entry written by hand cannot make a slot that never expires.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { contents, queueChat, queueConfig, type ChatOutcome } from '../../support/queue.ts';
import { eventually } from '../../support/eventually.ts';
import { QUEUE_BOUNDS, queueKeys } from '../../../core/store/redis/queue-keys.ts';

const bed = testBed({ redis: true });
let client: Redis;
let backend: FakeBackend;

before(async () => {
  await bed.ready();
  client = new Redis(bed.redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
  client.on('error', () => {});
  backend = await startFakeOpenAI();
});

after(async () => {
  client.disconnect();
  await backend.close();
});

const waiting = () => client.zcard(queueKeys.waiting('chat'));
const slots = () => client.zcard(queueKeys.slots('chat', 'only'));

/** Requests sent with their own abort, to free the slots they hold when the test says. */
function held(url: string, key: string, content: string) {
  const abort = new AbortController();
  const outcome = queueChat(url, key, content, abort.signal).catch(() => undefined);
  return { outcome, release: () => abort.abort() };
}

describe('a gateway that dies with requests waiting', () => {
  test('its waiting requests are dropped, not given slots: the next request is served at once', async (t) => {
    await client.flushall();
    const setup = queueConfig({
      providers: [{ id: 'only', backend, maxConcurrent: 2 }],
      priorities: { app: 0 },
      queue: { max_wait_seconds: 4 },
    });
    const key = setup.keys.app!;
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1, queueSlotTtlSeconds: 3 } });
    const doomed = await bed.process(setup.config, { t, args: ['--queue-slot-ttl-seconds', '3'] });
    try {
      backend.behave({ delayMs: 60_000 });
      const holders = [held(gw.url, key, 'holder 1'), held(gw.url, key, 'holder 2')];
      await eventually(async () => (await slots()) === 2, 'both slots are held');
      const dead = Array.from({ length: 10 }, (_, i) => queueChat(doomed.url, key, `dead ${i}`).catch(() => undefined));
      await eventually(async () => (await waiting()) === 10, 'the doomed gateway has ten requests waiting');
      doomed.child.kill('SIGKILL');
      await Promise.all(dead);
      backend.behave({});
      for (const holder of holders) holder.release();
      await Promise.all(holders.map((h) => h.outcome));
      // Before, the workers gave the dead requests the slots one after the other, each held for
      // the slot lifetime (3 s) by no one: this one waited past its 4 s and was refused.
      const next = await queueChat(gw.url, key, 'after the crash');
      assert.equal(next.status, 200, JSON.stringify(next));
      assert.ok(!contents(backend).some((c) => c.startsWith('dead')), 'no dead request reached the backend');
      assert.equal(await waiting(), 0);
    } finally {
      backend.behave({});
      doomed.child.kill('SIGKILL');
    }
  });
});

describe("a backend's 429 asking for an hour", () => {
  test('cools its provider down no longer than the cool-down setting, and a probe that succeeds ends it', async (t) => {
    await client.flushall();
    const setup = queueConfig({
      providers: [{ id: 'only', backend, maxConcurrent: 4 }],
      priorities: { app: 0 },
      queue: { max_wait_seconds: 5 },
    });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1, cooldownSeconds: 30, retries: 0, maxAttempts: 1 } });
    const key = setup.keys.app!;
    backend.once({ status: 429, retryAfter: '3600' });
    const limited = await queueChat(gw.url, key, 'limited');
    assert.equal(limited.status, 502);
    const cool = Number(await client.hget(queueKeys.metrics('chat', 'only'), 'cool'));
    assert.ok(cool > Date.now() && cool <= Date.now() + 30_000 + 1000, `cooling until ${cool - Date.now()} ms from now`);
    // Before, the provider sat out the hour: every request waited its 5 s, then 503 "too busy".
    const probe = await queueChat(gw.url, key, 'probe');
    assert.equal(probe.status, 200, JSON.stringify(probe));
    assert.equal(Number(await client.hget(queueKeys.metrics('chat', 'only'), 'cool')), 0, 'the cool-down is over');
    const after = await Promise.all([1, 2, 3].map((i) => queueChat(gw.url, key, `after ${i}`)));
    assert.deepEqual(
      after.map((o) => o.status),
      [200, 200, 200],
    );
  });
});

describe('a full waiting list', () => {
  test("one caller filling it does not lock the others out: a newcomer takes the place of that caller's request served last", async (t) => {
    await client.flushall();
    const setup = queueConfig({
      providers: [{ id: 'only', backend, maxConcurrent: 1 }],
      priorities: { hog: 0, other: 0, vip: 10 },
      queue: { max_waiting: 10, max_wait_seconds: 60 },
    });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 } });
    const [hog, other, vip] = [setup.keys.hog!, setup.keys.other!, setup.keys.vip!];
    backend.requests.length = 0;
    try {
      backend.behave({ delayMs: 60_000 });
      const holder = held(gw.url, hog, 'holder');
      await eventually(async () => (await slots()) === 1, 'the slot is held');
      const hogs = Array.from({ length: 10 }, (_, i) => queueChat(gw.url, hog, `hog ${i}`));
      await eventually(async () => (await waiting()) === 10, 'the hog fills the list');
      // One more of the hog's own is refused: it would be served last.
      const more = await queueChat(gw.url, hog, 'hog 10');
      assert.equal(more.status, 503);
      assert.equal(more.code, 'model_too_busy');
      const others = [queueChat(gw.url, other, 'other'), queueChat(gw.url, vip, 'vip')];
      // Each newcomer takes the place of the hog's newest: two of the hog's are refused, none of theirs.
      const refusedHogs = await eventually(async () => {
        const settled = await Promise.all(
          hogs.map((p) => Promise.race([p, new Promise<undefined>((r) => setImmediate(() => r(undefined)))])),
        );
        const refused = settled.filter((o): o is ChatOutcome => o !== undefined && o.status === 503);
        return refused.length === 2 && refused;
      }, "two of the hog's waiting requests are refused");
      assert.ok(refusedHogs.every((o) => o.code === 'model_too_busy'));
      assert.equal(await waiting(), 10);
      backend.behave({});
      holder.release();
      await holder.outcome;
      const [otherOutcome, vipOutcome] = await Promise.all(others);
      assert.equal(otherOutcome!.status, 200);
      assert.equal(vipOutcome!.status, 200);
      // The priority-10 request went first of everyone waiting.
      const served = contents(backend).filter((c) => c !== 'holder');
      assert.equal(served[0], 'vip');
      assert.equal((await Promise.all(hogs)).filter((o) => o.status === 200).length, 8);
    } finally {
      backend.behave({});
    }
  });
});

describe('a Redis that restarts empty while requests wait', () => {
  test('the requests whose entries it lost are asked for again and served, not left to wait out their time', async (t) => {
    await client.flushall();
    const setup = queueConfig({
      providers: [{ id: 'only', backend, maxConcurrent: 1 }],
      priorities: { app: 0 },
      queue: { max_wait_seconds: 10 },
    });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 } });
    const key = setup.keys.app!;
    try {
      backend.behave({ delayMs: 60_000 });
      const holder = held(gw.url, key, 'holder');
      await eventually(async () => (await slots()) === 1, 'the slot is held');
      const waiter = queueChat(gw.url, key, 'waiter');
      await eventually(async () => (await waiting()) === 1, 'one request waits');
      backend.behave({});
      await bed.redis.restart();
      // The slot's record went with Redis: the waiter's new entry finds the provider free.
      const outcome = await waiter;
      assert.equal(outcome.status, 200, JSON.stringify(outcome));
      holder.release();
      await holder.outcome;
    } finally {
      backend.behave({});
    }
  });
});

describe('an entry written into a stream by hand', () => {
  test('cannot make a slot that outlives the longest slot lifetime', async (t) => {
    await client.flushall();
    const setup = queueConfig({ providers: [{ id: 'only', backend, maxConcurrent: 1 }], priorities: { app: 0 } });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 } });
    const listener = client.duplicate();
    try {
      // It names a gateway that listens (else it is dropped): this test's own connection.
      await listener.subscribe(queueKeys.reply('forged'));
      await gw.get('/readyz');
      await client.xadd(
        queueKeys.stream('chat'),
        '*',
        ...['id', 'forged.1', 'gw', 'forged', 'u', 'mallory', 'ep', 'chat', 'pr', '1000000', 'mw', '1e15', 'ag', '1e15'],
        ...['mq', '10', 'ex', '', 'st', '1e15'],
      );
      const expiry = await eventually(
        async () => Number(await client.zscore(queueKeys.slots('chat', 'only'), 'forged.1')) || false,
        'the forged entry got a slot',
      );
      assert.ok(expiry <= Date.now() + QUEUE_BOUNDS.maxSlotTtlMs + 1000, `the slot expires ${expiry - Date.now()} ms from now`);
    } finally {
      listener.disconnect();
    }
  });
});

describe("a full queue's Retry-After", () => {
  test('after a burst of slots given at once, still says how long the requests ahead take', async (t) => {
    await client.flushall();
    const setup = queueConfig({
      providers: [{ id: 'only', backend, maxConcurrent: 10 }],
      priorities: { app: 0 },
      queue: { max_waiting: 20, max_wait_seconds: 60 },
    });
    const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 } });
    const key = setup.keys.app!;
    try {
      backend.behave({ delayMs: 2000 });
      // Ten at once: the provider's latency is measured (about 2 s), the slots given in one burst.
      await Promise.all(Array.from({ length: 10 }, (_, i) => queueChat(gw.url, key, `measure ${i}`)));
      const running = Array.from({ length: 10 }, (_, i) => queueChat(gw.url, key, `running ${i}`));
      await eventually(async () => (await slots()) === 10, 'ten slots are held');
      const queued = Array.from({ length: 20 }, (_, i) => queueChat(gw.url, key, `queued ${i}`));
      await eventually(async () => (await waiting()) === 20, 'twenty wait: the list is full');
      const refused = await queueChat(gw.url, key, 'one too many');
      assert.equal(refused.status, 503);
      // 10 slots of about 2 s each serve 5 a second: the 20 ahead take about 4 s. (The slots were
      // given in bursts: a pace read from the gaps between them said 1 s.)
      const seconds = Number(refused.retryAfter);
      assert.ok(seconds >= 3 && seconds <= 12, `Retry-After: ${refused.retryAfter}`);
      await Promise.all([...running, ...queued]);
    } finally {
      backend.behave({});
    }
  });
});

describe('a stream no worker takes from', () => {
  test('holds a bounded number of entries: past it a request is refused at once, with when to come back', async () => {
    await client.flushall();
    const { RedisStore } = await import('../../../core/store/redis/redis-store.ts');
    const store = await RedisStore.connect(bed.redis.url, { usageRetentionMs: 60_000 });
    try {
      const request = (id: string) => ({
        id,
        gw: 'gw',
        caller: 'app',
        endpoint: 'chat',
        priority: 0,
        maxWaitMs: 30_000,
        agingMs: 2000,
        maxWaiting: 10,
        exclude: [],
        slotTtlMs: 30_000,
      });
      // The queue's connection of its own comes up just after the store's.
      await eventually(
        async () => (await store.routingQueue.gateways.enqueue('chat', request('a'), 3)).status === 'queued',
        'the first is added',
      );
      for (const id of ['b', 'c']) assert.equal((await store.routingQueue.gateways.enqueue('chat', request(id), 3)).status, 'queued');
      const full = await store.routingQueue.gateways.enqueue('chat', request('d'), 3);
      assert.equal(full.status, 'full');
      assert.ok(full.status === 'full' && full.retryAfterSeconds >= 1);
      assert.equal(await client.xlen(queueKeys.stream('chat')), 3);
    } finally {
      await store.close();
    }
  });
});
