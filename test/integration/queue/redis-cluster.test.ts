// Queue mode on a Redis Cluster (three primaries, a replica each): two gateways, each running a
// router worker, serve two queue-mode routers whose streams, `router.chat` and `router.summaries`
// (named by the spec), hash to slots on different primaries. Everything a router's queue touches
// (its waiting list, its providers' slots and metrics, its requests' outcomes, the gateways' word
// that they listen) lies in its stream's slot, so each of its scripts runs on one primary, and is
// given as KEYS. A
// provider's max_concurrent holds across both gateways; priorities order the waiting list; a full
// list refuses with 503 and a Retry-After; and a request that waits longer than a gateway's word
// that it listens lasts is still served, as the gateway says it again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { LISTENING_TTL_MS, queueKeyNames } from '../../../core/store/redis/queue-keys.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { eventually } from '../../support/eventually.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { contents, queueChat } from '../../support/queue.ts';
import { testBed, type BedGateway } from '../../support/test-bed.ts';

const bed = testBed({ redis: 'cluster' });
const names = queueKeyNames('cluster');
const keys = { app: generateKey().secret, low: generateKey().secret, high: generateKey().secret };
let client: Cluster;
let a: FakeBackend;
let b: FakeBackend;
let c: FakeBackend;
let gateways: BedGateway[];

/** `chat`: two providers of 3 slots each; `summaries`: one of 1 slot, at most 2 waiting. */
function config(): GatewayConfig {
  const user = (id: keyof typeof keys, priority: number) => ({ id, name: id, priority, keys: [{ name: 'k', key: keys[id] }] });
  return {
    users: [user('app', 0), user('low', -5), user('high', 5)],
    models: [
      {
        id: 'chat',
        type: 'text-generation',
        routing_mode: 'queue',
        load_balancing_strategy: 'least_busy',
        queue: { max_waiting: 200 },
        providers: [
          { id: 'pa', model: 'pa', type: 'vllm', max_concurrent: 3, args: { api_url: a.url } },
          { id: 'pb', model: 'pb', type: 'vllm', max_concurrent: 3, args: { api_url: b.url } },
        ],
      },
      {
        id: 'summaries',
        type: 'text-generation',
        routing_mode: 'queue',
        queue: { max_waiting: 2, max_wait_seconds: 120 },
        providers: [{ id: 'only', model: 'only', type: 'vllm', max_concurrent: 1, args: { api_url: c.url } }],
      },
    ],
  };
}

before(async () => {
  await bed.ready();
  client = new Cluster([...bed.cluster.nodes.keys()].map((port) => ({ host: '127.0.0.1', port })));
  [a, b, c] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
  // Priorities decide alone: a lower one never ages past a higher one within a test.
  gateways = await bed.gateways(2, config(), { settings: { routerWorkers: 1, queueAgingSeconds: 3600 } });
});

after(async () => {
  for (const gw of gateways ?? []) await gw.close();
  client?.disconnect();
  await Promise.all([a, b, c].map((backend) => backend?.close()));
});

/** Every key on every primary whose name holds `text`. */
async function keysHolding(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const node of client.nodes('master')) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `*${text}*`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return found;
}

const chat = (gw: BedGateway, key: string, content: string, model = 'chat') =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  }).then(async (response) => ({
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as { error?: { code: string; message: string } },
  }));

describe('queue mode on a Redis Cluster', () => {
  test("each router's queue, its providers' and its requests' keys lie in its stream's slot, the two routers' on different primaries", async () => {
    for (const [i, gw] of gateways.entries()) {
      assert.equal((await queueChat(gw.url, keys.app, `warm ${i}`)).status, 200);
      assert.equal((await chat(gw, keys.app, `warm ${i}`, 'summaries')).status, 200);
    }
    const [chatShard, summariesShard] = await Promise.all([bed.cluster.shardOf('router.chat'), bed.cluster.shardOf('router.summaries')]);
    assert.notEqual(chatShard.primary.port, summariesShard.primary.port, 'the two streams are on different primaries');
    for (const router of ['chat', 'summaries']) {
      const found = await keysHolding(`router.${router}`);
      const slot = calculateSlot(`router.${router}`);
      assert.deepEqual(
        found.filter((key) => calculateSlot(key) !== slot),
        [],
        `every key of ${router} in the slot of its stream`,
      );
      // What the served requests left: the stream, the stats, the gateways' word, the outcomes, and each provider's metrics.
      const families = new Set(found);
      const providers = router === 'chat' ? ['pa', 'pb'] : ['only'];
      const served = providers.filter((id) => families.has(names.metrics(router, id)));
      assert.ok(served.length > 0, `a provider of ${router} keeps its metrics in the router's slot (${[...families].join(', ')})`);
      for (const key of [names.stream(router), names.stats(router), names.gateways(router), names.outcomes(router), names.expiries(router)])
        assert.ok(families.has(key), `${key} (found: ${[...families].join(', ')})`);
    }
  });

  test('60 requests at once through both gateways: no backend ever sees more than its 3, and every one is served', async () => {
    a.resetPeak();
    b.resetPeak();
    for (const backend of [a, b]) backend.behave({ delayMs: 40 });
    try {
      const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => queueChat(gateways[i % 2]!.url, keys.app, `load ${i}`)));
      assert.deepEqual(
        outcomes.filter((o) => o.status !== 200),
        [],
      );
      assert.ok(a.peakOpenRequests <= 3 && b.peakOpenRequests <= 3, `peaks ${a.peakOpenRequests} and ${b.peakOpenRequests}`);
      assert.ok(a.peakOpenRequests + b.peakOpenRequests >= 4, 'both providers served at once');
    } finally {
      for (const backend of [a, b]) backend.behave({});
    }
  });

  test("priorities order the waiting list, a full list refuses the one served last with 503 and a Retry-After, and a wait longer than a gateway's word that it listens is still served", async () => {
    c.requests.length = 0;
    let open = () => {};
    c.behave({ until: new Promise<void>((resolve) => (open = resolve)) });
    const waitingCount = () => client.zcard(names.waiting('summaries'));
    try {
      const holds = chat(gateways[0]!, keys.app, 'holds the slot', 'summaries');
      await eventually(() => c.openRequests === 1, 'the one slot is taken');
      const low = chat(gateways[0]!, keys.low, 'low', 'summaries');
      await eventually(async () => (await waitingCount()) === 1, 'low waits');
      const high = chat(gateways[1]!, keys.high, 'high', 'summaries');
      await eventually(async () => (await waitingCount()) === 2, 'high waits');
      const app = chat(gateways[1]!, keys.app, 'app', 'summaries');
      // Two may wait: the one served last (low, the lowest priority) gives its place.
      const refused = await low;
      assert.equal(refused.status, 503);
      assert.equal(refused.body.error?.code, 'model_too_busy');
      assert.match(refused.retryAfter ?? '', /^[1-9]\d*$/);
      assert.equal(await waitingCount(), 2);

      // Held past the word each gateway gave when it sent its request: the one it says again keeps its requests.
      const said = async () => Object.values(await client.hgetall(names.gateways('summaries'))).map(Number);
      const first = Math.max(...(await said()));
      const redisNow = async () => {
        const [seconds, micros] = await client.time();
        return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      };
      await eventually(async () => (await redisNow()) > first, "the first word's time is past", {
        timeoutMs: LISTENING_TTL_MS + 10_000,
      });
      assert.ok(Math.min(...(await said())) > first, 'each gateway said it again');
      open();
      assert.deepEqual(
        (await Promise.all([holds, high, app])).map((answer) => answer.status),
        [200, 200, 200],
      );
      assert.deepEqual(contents(c), ['holds the slot', 'high', 'app']);
    } finally {
      open();
      c.behave({});
    }
  });
});
