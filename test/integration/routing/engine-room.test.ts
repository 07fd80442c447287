// Admission on the engines' own load, through a real gateway and two fake vLLM replicas on real
// sockets whose /metrics the test sets: a saturated replica (its queue at the provider's
// max_waiting, or its KV cache at max_kv_cache) receives nothing new while the other has room;
// when both are saturated the less loaded one serves (no request refused for it); and when a
// replica's /metrics fails, its signals are dropped and routing does as it did without them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../../support/eventually.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { chat } from '../../support/routing.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const metrics = (waiting: number, kv: number) => `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} ${waiting}
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 4
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m"} ${kv}
`;

interface ReplicaView {
  replica: string;
  engines: { signals: string; waiting: number | null; kv_cache_usage: number | null }[];
}

/** Waits until the gateway's routing view shows each replica's engine as `expected` says (fresh with that queue, or not fresh). */
async function signalsRead(gw: TestGateway, expected: Record<string, number | 'failing'>): Promise<void> {
  await eventually(
    async () => {
      const replicas = ((await gw.get('/v1/admin/routing')).body.providers as ReplicaView[]).filter((p) => p.replica !== null);
      return Object.entries(expected).every(([url, want]) => {
        const engine = replicas.find((r) => r.replica === url)?.engines[0];
        return want === 'failing' ? engine?.signals === 'failing' : engine?.signals === 'fresh' && engine.waiting === want;
      });
    },
    `the engines read as ${JSON.stringify(expected)}`,
  );
}

test('a saturated replica receives nothing new while another has room; when all are, the least loaded serves', async (t) => {
  const [a, b] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  t.after(() => Promise.all([a.close(), b.close()]));
  const config: GatewayConfig = {
    models: [
      {
        id: 'chat',
        type: 'text-generation',
        load_balancing_strategy: 'round_robin',
        providers: [
          {
            model: 'm',
            type: 'vllm',
            id: 'engine',
            args: { api_urls: [a.url, b.url] },
            saturation: { max_waiting: 10, max_kv_cache: 0.9 },
          },
        ],
      },
    ],
  };
  const gw = await bed.gateway(config, { t, settings: { engineScrapeIntervalMs: 1000 } });
  const sent = (fake: FakeBackend) => fake.requests.length;

  // a's queue is past its limit: round robin would alternate, engine room keeps a out. (b's
  // queue grows by the requests sent to it until the next reading: 6 stay under its limit.)
  a.metricsText(metrics(20, 0.3));
  b.metricsText(metrics(0, 0.3));
  await signalsRead(gw, { [a.url]: 20, [b.url]: 0 });
  for (let i = 0; i < 6; i++) assert.equal((await chat(gw, 'chat')).status, 200);
  assert.deepEqual([sent(a), sent(b)], [0, 6], 'the saturated replica received nothing');

  // b's queue is three times its limit: both saturated, a (twice its limit, and 4 more at most
  // before the next reading) is the less loaded.
  b.metricsText(metrics(30, 0.95));
  await signalsRead(gw, { [a.url]: 20, [b.url]: 30 });
  for (let i = 0; i < 4; i++) assert.equal((await chat(gw, 'chat')).status, 200, 'no request is refused for saturation');
  assert.deepEqual([sent(a), sent(b)], [4, 6], 'the least loaded served them');

  // a's /metrics fails: its signals are dropped, it counts as having room, round robin resumes.
  a.metricsText(undefined);
  b.metricsText(metrics(0, 0.1));
  await signalsRead(gw, { [a.url]: 'failing', [b.url]: 0 });
  for (let i = 0; i < 4; i++) assert.equal((await chat(gw, 'chat')).status, 200);
  assert.deepEqual([sent(a), sent(b)], [6, 8], 'both serve again, in turn');
});

test('prefix affinity yields to saturation: a shared prompt leaves its saturated replica for one with room', async (t) => {
  const [a, b] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  t.after(() => Promise.all([a.close(), b.close()]));
  const config: GatewayConfig = {
    models: [
      {
        id: 'chat',
        type: 'text-generation',
        load_balancing_strategy: 'prefix_affinity',
        providers: [
          {
            model: 'm',
            type: 'vllm',
            id: 'engine',
            args: { api_urls: [a.url, b.url] },
            saturation: { max_waiting: 10, max_kv_cache: 0.9 },
          },
        ],
      },
    ],
  };
  const gw = await bed.gateway(config, { t, settings: { engineScrapeIntervalMs: 1000 } });
  a.metricsText(metrics(0, 0.3));
  b.metricsText(metrics(0, 0.3));
  await signalsRead(gw, { [a.url]: 0, [b.url]: 0 });
  const system = { role: 'system', content: 'You answer questions about the tides. '.repeat(60) };
  const ask = (question: string) =>
    gw.post('/v1/chat/completions', { model: 'chat', messages: [system, { role: 'user', content: question }] });

  assert.equal((await ask('When is high tide?')).status, 200);
  const home = a.requests.length === 1 ? a : b;
  const other = home === a ? b : a;
  assert.equal((await ask('And low tide?')).status, 200);
  assert.equal(home.requests.length, 2, 'the prompt stays on the replica that holds it');

  // Its engine's queue passes max_waiting: the prompt's next request goes to the one with room.
  home.metricsText(metrics(20, 0.3));
  await signalsRead(gw, { [home.url]: 20 });
  assert.equal((await ask('Why are there two a day?')).status, 200);
  assert.equal(other.requests.length, 1, 'the saturated replica got nothing new, whatever it holds');
  assert.equal(home.requests.length, 2);
});
