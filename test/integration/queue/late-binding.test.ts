// Queue mode's late binding on the engines' own load: a request waits in its router's queue while
// every vLLM replica is saturated (its queue at the provider's max_waiting, read from its
// /metrics and shared through Redis), and is bound to a replica only once one has room; the
// queue's order (priorities) holds across the wait; and a saturated replica gets no slot while
// another has room. Two fake vLLM replicas on real sockets, whose /metrics the test sets. On one
// Redis and on a Redis Cluster, where the readings' hash lies in another slot than the router's
// queue: the worker reads it before a pass and counts what the pass sent after it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import { queueKeyNames } from '../../../core/store/redis/queue-keys.ts';
import { eventually } from '../../support/eventually.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { contents, queueChat } from '../../support/queue.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { testBed } from '../../support/test-bed.ts';

const beds = { redis: testBed({ redis: true }), cluster: testBed({ redis: 'cluster' }) };
let clients: { redis: Redis; cluster: Cluster };

before(async () => {
  await Promise.all([beds.redis.ready(), beds.cluster.ready()]);
  const nodes = [...beds.cluster.cluster.nodes.keys()].map((port) => ({ host: '127.0.0.1', port }));
  clients = { redis: new Redis(beds.redis.redis.url), cluster: new Cluster(nodes) };
});

after(() => {
  clients.redis.disconnect();
  clients.cluster.disconnect();
});

const metrics = (waiting: number) => `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} ${waiting}
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 2
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m"} 0.3
`;

const keys = { low: generateKey().secret, high: generateKey().secret };

/** A queue-mode router over one vllm provider whose replicas are `a` and `b`, saturated at `maxWaiting` waiting. */
function config(a: FakeBackend, b: FakeBackend, maxWaiting: number): GatewayConfig {
  return {
    users: [
      { id: 'low', name: 'low', priority: -5, keys: [{ name: 'k', key: keys.low }] },
      { id: 'high', name: 'high', priority: 5, keys: [{ name: 'k', key: keys.high }] },
    ],
    models: [
      {
        id: 'chat',
        type: 'text-generation',
        routing_mode: 'queue',
        load_balancing_strategy: 'round_robin',
        queue: { max_wait_seconds: 60 },
        providers: [
          {
            id: 'engine',
            model: 'm',
            type: 'vllm',
            args: { api_urls: [a.url, b.url] },
            saturation: { max_waiting: maxWaiting, max_kv_cache: 0.9 },
          },
        ],
      },
    ],
  };
}

for (const shared of ['redis', 'cluster'] as const)
  describe(shared === 'redis' ? 'on one Redis' : 'on a Redis Cluster', () => {
    const bed = beds[shared];
    const waiting = () => clients[shared].zcard(queueKeyNames(shared === 'redis' ? 'one' : 'cluster').waiting('chat'));

    test('queue mode gives no slot of a saturated replica while another has room', async (t) => {
      const [a, b] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
      t.after(() => Promise.all([a.close(), b.close()]));
      a.metricsText(metrics(20));
      b.metricsText(metrics(0));
      const gw = await bed.gateway(config(a, b, 3), { t, settings: { routerWorkers: 1, engineScrapeIntervalMs: 1000 } });
      await eventually(() => a.metricsScrapes > 1 && b.metricsScrapes > 1, 'both engines are read');

      // Round robin would alternate. Requests sent to b count into its queue until its next reading,
      // so a burst may wait for that reading: late, but never on a.
      const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => queueChat(gw.url, keys.low, `r${i}`)));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        Array(8).fill(200),
      );
      assert.equal(a.requests.length, 0, 'the saturated replica was given nothing');
      assert.equal(b.requests.length, 8);
    });

    test('queue mode binds a request only when a replica has room, highest priority first', async (t) => {
      const [a, b] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
      t.after(() => Promise.all([a.close(), b.close()]));
      a.metricsText(metrics(20));
      b.metricsText(metrics(20));
      // Interval 1 s (a scrape may take up to that long on a loaded machine before it counts as failed):
      // b takes one request per reading below (max_waiting 1), so the second is
      // bound a whole reading after the first was sent.
      const gw = await bed.gateway(config(a, b, 1), { t, settings: { routerWorkers: 1, engineScrapeIntervalMs: 1000 } });
      await eventually(() => a.metricsScrapes > 1 && b.metricsScrapes > 1, 'both engines are read');

      // Both saturated: the requests wait in the router's queue (a pass has weighed each on joining).
      const low = queueChat(gw.url, keys.low, 'low');
      await eventually(async () => (await waiting()) === 1, 'the low priority request waits');
      const high = queueChat(gw.url, keys.high, 'high');
      await eventually(async () => (await waiting()) === 2, 'the high priority request waits too');
      assert.equal(a.requests.length + b.requests.length, 0, 'no request was bound to a saturated replica');

      // b has room for one (its queue empty, max_waiting 1): the high priority request is bound to
      // it at the next reading; the one sent counts into b's queue until the reading after.
      b.metricsText(metrics(0));
      const served = await Promise.all([high, low]);
      assert.deepEqual(
        served.map((o) => o.status),
        [200, 200],
      );
      assert.deepEqual(contents(b), ['high', 'low'], 'bound in the queue order, each when b had room');
      assert.equal(a.requests.length, 0);
      assert.equal(await waiting(), 0);
    });

    test('queue mode refuses a request whose wait ends while every replica stays saturated, with a Retry-After', async (t) => {
      const [a, b] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
      t.after(() => Promise.all([a.close(), b.close()]));
      a.metricsText(metrics(20));
      b.metricsText(metrics(20));
      const setup = config(a, b, 3);
      setup.models[0]!.queue = { max_wait_seconds: 1 };
      const gw = await bed.gateway(setup, { t, settings: { routerWorkers: 1, engineScrapeIntervalMs: 1000 } });
      await eventually(() => a.metricsScrapes > 1 && b.metricsScrapes > 1, 'both engines are read');

      const refused = await queueChat(gw.url, keys.low, 'waits in vain');
      assert.equal(refused.status, 503);
      assert.equal(refused.code, 'model_too_busy');
      assert.ok(Number(refused.retryAfter) >= 1, `Retry-After ${refused.retryAfter}`);
      assert.equal(a.requests.length + b.requests.length, 0);
    });

    test('stale engine signals fall back: a replica whose /metrics fails is given slots as before', async (t) => {
      const [a, b] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
      t.after(() => Promise.all([a.close(), b.close()]));
      a.metricsText(metrics(20));
      b.metricsText(metrics(20));
      const gw = await bed.gateway(config(a, b, 3), { t, settings: { routerWorkers: 1, engineScrapeIntervalMs: 1000 } });
      await eventually(() => a.metricsScrapes > 1 && b.metricsScrapes > 1, 'both engines are read');
      const waits = queueChat(gw.url, keys.low, 'waits');
      await eventually(async () => (await waiting()) === 1, 'the request waits while both are saturated');

      // a's /metrics fails (404): its reading is not used, it counts as having room.
      a.metricsText(undefined);
      assert.equal((await waits).status, 200);
      assert.deepEqual(contents(a), ['waits']);
    });
  });
