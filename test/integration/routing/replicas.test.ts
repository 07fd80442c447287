// A provider that stands for several replicas of one engine (`urls`, in a file as `args.api_urls`),
// through a real gateway and fake vLLM backends on real sockets: routing picks a replica per
// request, each replica has its own breaker, the usage record names the provider, and the admin
// routing view and /metrics show each replica, its address's secrets masked. Through the admin
// API, `urls` is taken, checked and shown masked.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chat, closedPortUrl } from '../../support/routing.ts';
import { eventually } from '../../support/eventually.ts';

const bed = testBed();

async function backends(t: TestContext, count: number): Promise<FakeBackend[]> {
  const fakes = await Promise.all(Array.from({ length: count }, () => startFakeOpenAI()));
  t.after(() => Promise.all(fakes.map((fake) => fake.close())));
  return fakes;
}

/** Router `chat` with one vllm provider `engine` whose replicas are `urls`, taken in turn. */
const replicated = (urls: readonly string[]): GatewayConfig => ({
  models: [
    {
      id: 'chat',
      type: 'text-generation',
      load_balancing_strategy: 'round_robin',
      providers: [{ model: 'engine-model', type: 'vllm', id: 'engine', retries: 0, args: { api_urls: urls } }],
    },
  ],
});

interface ReplicaLive {
  id: string;
  replica: string | null;
  breaker: string;
  in_flight_here: number;
}

const replicasLive = async (gw: TestGateway) =>
  ((await gw.get('/v1/admin/routing')).body.providers as ReplicaLive[]).filter((p) => p.id === 'engine');

describe('a provider with several replicas', () => {
  test('routing spreads the requests over its replicas; the usage record names the provider', async (t) => {
    const [a, b] = await backends(t, 2);
    const gw = await bed.gateway(replicated([a!.url, b!.url]), { t });
    for (let i = 0; i < 4; i++) assert.equal((await chat(gw, 'chat')).status, 200);
    assert.deepEqual([a!.requests.length, b!.requests.length], [2, 2], 'round robin takes the replicas in turn');
    assert.equal(a!.requests[0]?.body?.model, 'engine-model', "each replica is sent the provider's model name");
    const records = await eventually(async () => {
      const data = (await gw.get('/v1/usage?limit=10')).body.data as { provider: string }[] | undefined;
      return data && data.length === 4 ? data : undefined;
    }, 'the four usage records');
    assert.deepEqual(new Set(records.map((r) => r.provider)), new Set(['engine']));
    const live = await replicasLive(gw);
    assert.deepEqual(live.map((r) => r.replica).sort(), [a!.url, b!.url].sort(), 'the routing view shows each replica');
  });

  test('a replica that fails is its own: its breaker opens, the request is answered by another', async (t) => {
    const [alive] = await backends(t, 1);
    const dead = await closedPortUrl();
    const gw = await bed.gateway(replicated([dead, alive!.url]), { t, settings: { failureThreshold: 1, cooldownSeconds: 600 } });
    for (let i = 0; i < 4; i++) assert.equal((await chat(gw, 'chat')).status, 200, 'every request is answered');
    assert.equal(alive!.requests.length, 4, 'the live replica served them all');
    const live = await replicasLive(gw);
    assert.equal(live.find((r) => r.replica === dead)?.breaker, 'open', "the refusing replica's breaker is open");
    assert.equal(live.find((r) => r.replica === alive!.url)?.breaker, 'closed', "the other's is closed");
    const metrics = (await gw.get('/metrics')).body as string;
    assert.ok(
      metrics.includes(`tollgate_provider_breaker_state{router="chat",provider="engine",replica="${dead}"} 2`),
      'the breaker gauge has a series per replica',
    );
  });

  test('a replica that vanishes mid-stream: the stream ends with an error at once, nothing stays held, the other serves', async (t) => {
    const [a, b] = await backends(t, 2);
    const gw = await bed.gateway(replicated([a!.url, b!.url]), { t, settings: { failureThreshold: 1, cooldownSeconds: 600 } });
    // Round robin sends the first request to a, which streams slowly and then goes away.
    a!.behave({ chunkDelayMs: 200, text: 'one two three four five six seven eight nine ten' });
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...gw.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'stream' }], stream: true }),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    assert.equal(a!.requests.length, 1, 'the stream comes from a');
    await a!.close();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    assert.match(text, /"error"/, 'the client is told the answer broke off');
    await eventually(
      async () => (await replicasLive(gw)).every((r) => r.in_flight_here === 0),
      'no replica keeps the broken request in flight',
    );
    for (let i = 0; i < 4; i++) assert.equal((await chat(gw, 'chat')).status, 200, 'every later request is answered');
    assert.ok(b!.requests.length >= 4, 'by the replica still there');
  });

  test('a replica address with credentials is masked in the routing view and /metrics', async (t) => {
    const [a] = await backends(t, 1);
    const secretUrl = a!.url.replace('http://', 'http://user:s3cret-pass@');
    const gw = await bed.gateway(replicated([secretUrl, a!.url]), { t });
    const shown = JSON.stringify(await replicasLive(gw)) + (await gw.get('/metrics')).body;
    assert.ok(!shown.includes('s3cret-pass'), 'the password is not shown');
    assert.ok(shown.includes('***@'), 'the credentials are masked where they stood');
  });

  test('the admin API takes urls, checks them, and shows them masked', async (t) => {
    const gw = await bed.gateway(
      { models: [{ id: 'chat', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] }] },
      { t },
    );
    const provider = (urls: unknown) => ({ router: 'chat', type: 'vllm', model_name: 'm', urls });
    const created = await gw.post('/v1/admin/providers', provider(['http://a:8000', 'http://u:pw-secret@b:8000']));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.urls, ['http://a:8000', 'http://***@b:8000']);
    const shown = await gw.get(`/v1/admin/providers/${created.body.id}`);
    assert.deepEqual(shown.body.urls, ['http://a:8000', 'http://***@b:8000']);
    const twice = await gw.post('/v1/admin/providers', provider(['http://a:8000', 'http://a:8000/']));
    assert.equal(twice.status, 400);
    assert.equal(twice.body.error.param, 'urls');
    assert.match(twice.body.error.message, /must not list an address twice/);
    const none = await gw.post('/v1/admin/providers', provider([]));
    assert.equal(none.status, 400);
    assert.match(none.body.error.message, /urls: must list at least one address/);
    const neither = await gw.post('/v1/admin/providers', { router: 'chat', type: 'vllm', model_name: 'm' });
    assert.equal(neither.status, 400);
    assert.equal(neither.body.error.param, 'url');
  });
});
