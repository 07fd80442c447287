// Queue mode across a fleet: two gateways, each running a router worker, share one Redis. A
// router's requests go through its stream `router.<model_id>`, whose entries the workers
// acknowledge; a provider's max_concurrent holds across every gateway (the fake backends count
// their own concurrency); and a request that cannot get a slot is told so with 503 "Model is too
// busy" and a Retry-After, never left hanging.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { eventually } from '../../support/eventually.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { queueChat, queueConfig } from '../../support/queue.ts';
import { WORKER_GROUP } from '../../../core/store/redis/queue-keys.ts';

const bed = testBed({ redis: true });
let client: Redis;
let a: FakeBackend;
let b: FakeBackend;
let gateways: TestGateway[] = [];
let key: string;

before(async () => {
  await bed.ready();
  client = new Redis(bed.redis.url);
  a = await startFakeOpenAI();
  b = await startFakeOpenAI();
  for (const backend of [a, b]) backend.behave({ delayMs: 40 });
  const setup = queueConfig({
    providers: [
      { id: 'pa', backend: a, maxConcurrent: 5 },
      { id: 'pb', backend: b, maxConcurrent: 5 },
    ],
    queue: { max_waiting: 150 },
    priorities: { app: 0 },
  });
  key = setup.keys.app!;
  gateways = await bed.gateways(2, setup.config, { settings: { routerWorkers: 1 } });
});

after(async () => {
  client.disconnect();
  await Promise.all([a.close(), b.close()]);
});

describe('queue mode on two gateways with a worker each', () => {
  test("a router's requests go through its stream router.<model_id>, and the workers acknowledge every entry", async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => queueChat(gateways[i % 2]!.url, key, `ack ${i}`)));
    assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set([200]));
    assert.equal(await client.type('router.chat'), 'stream');
    const [fields] = (await client.xinfo('GROUPS', 'router.chat')) as unknown[][];
    const group: Record<string, unknown> = {};
    for (let i = 0; i + 1 < fields!.length; i += 2) group[String(fields![i])] = fields![i + 1];
    assert.equal(group.name, WORKER_GROUP);
    assert.equal(group.pending, 0, 'no entry read and left unacknowledged');
    assert.ok(Number(group['entries-read']) >= 20, `the group read the entries (entries-read ${String(group['entries-read'])})`);
  });

  test('300 concurrent requests: no backend ever sees more than its 5, and each request is served or told 503 with a Retry-After', async () => {
    a.resetPeak();
    b.resetPeak();
    // The backends hold their answers until all 300 are in: 10 hold the slots, 150 wait, and the
    // rest are refused, however fast this machine adds them (a drain racing the arrivals would
    // decide how many were ever waiting at once).
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    for (const backend of [a, b]) backend.behave({ delayMs: 40, until: gate });
    let refusedSoFar = 0;
    const all = Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        queueChat(gateways[i % 2]!.url, key, `load ${i}`).then((outcome) => {
          if (outcome.status === 503) refusedSoFar++;
          return outcome;
        }),
      ),
    );
    await eventually(
      () => refusedSoFar === 140 && a.openRequests + b.openRequests === 10,
      'every request is in: 10 held, 150 waiting, 140 refused',
    );
    open();
    const outcomes = await all;
    for (const backend of [a, b]) backend.behave({ delayMs: 40 });
    assert.ok(a.peakOpenRequests <= 5, `backend a saw ${a.peakOpenRequests} at once`);
    assert.ok(b.peakOpenRequests <= 5, `backend b saw ${b.peakOpenRequests} at once`);
    assert.equal(a.peakOpenRequests + b.peakOpenRequests, 10, 'both backends were kept full');
    const served = outcomes.filter((o) => o.status === 200).length;
    const refused = outcomes.filter((o) => o.status === 503);
    assert.equal(served + refused.length, 300, `statuses: ${[...new Set(outcomes.map((o) => o.status))].join(', ')}`);
    assert.ok(served >= 150, `most were served (${served})`);
    assert.ok(refused.length > 0, 'more than max_waiting at once: some were refused');
    for (const outcome of refused) {
      assert.equal(outcome.code, 'model_too_busy');
      assert.equal(outcome.message, 'Model is too busy');
      assert.ok(Number(outcome.retryAfter) >= 1, `Retry-After: ${outcome.retryAfter}`);
    }
  });
});

describe('the admin API in queue mode', () => {
  test("GET /v1/admin/routing shows the mode, the fleet-wide queue and each provider's capacity and use; admins only", async () => {
    const gw = gateways[0]!;
    const live = await gw.get('/v1/admin/routing');
    assert.equal(live.status, 200);
    assert.deepEqual(live.body.routers, [{ name: 'chat', routing_mode: 'queue', queue_depth: 0 }]);
    const providers = live.body.providers as {
      id: string;
      max_concurrent: number;
      in_use: number;
      ttft_ms: number | null;
      error_rate: number;
    }[];
    assert.deepEqual(
      providers.map((p) => [p.id, p.max_concurrent, p.in_use]),
      [
        ['pa', 5, 0],
        ['pb', 5, 0],
      ],
    );
    for (const provider of providers) {
      assert.ok(
        typeof provider.ttft_ms === 'number' && provider.ttft_ms >= 40,
        `ttft of ${provider.id}: ${provider.ttft_ms} (the backends take 40 ms)`,
      );
      assert.equal(provider.error_rate, 0);
    }
    assert.equal((await gw.get('/v1/admin/routing', { authorization: `Bearer ${key}` })).status, 403);
  });

  test("/metrics shows the queue, the slots against capacity, the workers' assignments and lag, and the refusals", async () => {
    const text = (await gateways[0]!.get('/metrics')).body as string;
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    assert.equal(value('tollgate_queue_depth{router="chat"}'), 0);
    assert.equal(value('tollgate_router_worker_lag{router="chat"}'), 0);
    assert.equal(value('tollgate_provider_capacity{router="chat",provider="pa"}'), 5);
    assert.equal(value('tollgate_provider_slots_in_use{router="chat",provider="pb"}'), 0);
    assert.ok((value('tollgate_router_worker_assigned_total{router="chat"}') ?? 0) > 0, "this gateway's worker gave slots");
    assert.ok((value('tollgate_queue_assignments_total{router="chat",provider="pa"}') ?? 0) > 0);
    assert.ok(
      (value('tollgate_queue_rejections_total{router="chat",reason="busy"}') ?? 0) > 0,
      'the refusals of the load test are counted',
    );
    assert.ok((value('tollgate_queue_wait_seconds_count{router="chat"}') ?? 0) > 0);
  });

  test('bad queue fields are refused with 400 naming the field, and nothing changes', async () => {
    const gw = gateways[0]!;
    const badMode = await gw.post('/v1/admin/routers', { name: 'bad', type: 'text-generation', routing_mode: 'fastest' });
    assert.equal(badMode.status, 400);
    assert.equal(badMode.body.error.param, 'routing_mode');
    const badWait = await gw.post('/v1/admin/routers', { name: 'bad', type: 'text-generation', queue: { max_wait_seconds: 0 } });
    assert.equal(badWait.status, 400);
    assert.equal(badWait.body.error.param, 'queue.max_wait_seconds');
    const badCap = await gw.patch('/v1/admin/providers/pa', { max_concurrent: -1 });
    assert.equal(badCap.status, 400);
    assert.equal(badCap.body.error.param, 'max_concurrent');
    const badPriority = await gw.patch('/v1/admin/users/app', { priority: 11 });
    assert.equal(badPriority.status, 400);
    assert.equal(badPriority.body.error.param, 'priority');
    assert.equal((await gw.get('/v1/admin/providers/pa')).body.max_concurrent, 5);
    assert.equal((await gw.get('/v1/admin/users/app')).body.priority, 0);
    assert.equal((await gw.get('/v1/admin/routers/bad')).status, 404);
  });
});
