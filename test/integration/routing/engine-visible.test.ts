// Engine load and prefix hits made visible (issue 28, part 7), through real gateways on real
// sockets: GET /v1/admin/routing and /metrics show, per replica, the prefix-cache hits
// prefix_affinity predicted (in prompt blocks), each engine's load with the saturation verdict
// reached with its provider's thresholds, and /metrics counts the cached prompt tokens backends
// reported, per router and provider.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../support/eventually.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { startVllmEmulator, type VllmEmulator } from '../../support/vllm-emulator/index.ts';

const bed = testBed();
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';

async function replicas(t: TestContext, count: number): Promise<VllmEmulator[]> {
  const started = await Promise.all(
    Array.from({ length: count }, () => startVllmEmulator({ prompt_tokens_details: true, time_scale: 0.01 })),
  );
  t.after(() => Promise.all(started.map((replica) => replica.close())));
  return started;
}

interface PrefixEntry {
  replica: string | null;
  prefix: { predicted_hit_blocks: number; prompt_blocks: number; predicted_hit_ratio: number | null } | null;
}

const providersOf = async (gw: TestGateway) => (await gw.get('/v1/admin/routing')).body.providers as PrefixEntry[];

/** The value of one series in /metrics text, or undefined when it is absent. */
function series(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('prefix hits predicted, and cached tokens', () => {
  test('each replica shows the blocks placed on it and those predicted held; /metrics counts both and the cached tokens reported', async (t) => {
    const engines = await replicas(t, 3);
    const config: GatewayConfig = {
      models: [
        {
          id: 'chat',
          type: 'text-generation',
          load_balancing_strategy: 'prefix_affinity',
          providers: [{ model: MODEL, type: 'vllm', id: 'engines', retries: 0, args: { api_urls: engines.map((e) => e.url) } }],
        },
      ],
    };
    // The engines' /metrics not read: this test is about affinity's predictions alone.
    const gw = await bed.gateway(config, { t, settings: { engineScrapeIntervalMs: 0 } });
    const before = await providersOf(gw);
    assert.deepEqual(
      before.map((p) => p.prefix),
      engines.map(() => ({ predicted_hit_blocks: 0, prompt_blocks: 0, predicted_hit_ratio: null })),
      'nothing placed yet',
    );

    const turn1 = [
      { role: 'system', content: 'You answer questions about astronomy. '.repeat(60) },
      { role: 'user', content: 'Where do I start? '.repeat(8) },
    ];
    const first = await gw.post('/v1/chat/completions', { model: 'chat', messages: turn1, max_tokens: 8 });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const afterFirst = await providersOf(gw);
    const served = afterFirst.find((p) => (p.prefix?.prompt_blocks ?? 0) > 0);
    assert.ok(served?.prefix, 'the replica chosen counts the prompt blocks');
    const firstBlocks = served.prefix.prompt_blocks;
    assert.equal(served.prefix.predicted_hit_blocks, 0, 'a new prompt is predicted held nowhere');
    assert.equal(served.prefix.predicted_hit_ratio, 0);

    const turn2 = [
      ...turn1,
      { role: 'assistant', content: String(first.body.choices[0].message.content) },
      { role: 'user', content: 'And then?' },
    ];
    const second = await gw.post('/v1/chat/completions', { model: 'chat', messages: turn2, max_tokens: 8 });
    assert.equal(second.status, 200);
    const afterSecond = (await providersOf(gw)).find((p) => p.replica === served.replica);
    assert.ok(afterSecond?.prefix);
    assert.equal(afterSecond.prefix.predicted_hit_blocks, firstBlocks, "the second turn is predicted to find the first turn's blocks");
    const blocks = afterSecond.prefix.prompt_blocks;
    assert.ok(blocks > 2 * firstBlocks - 1, 'and counts its own, the first turn and a little more');
    assert.equal(afterSecond.prefix.predicted_hit_ratio, Math.round((firstBlocks / blocks) * 1000) / 1000);

    const cached =
      (second.body.usage.prompt_tokens_details?.cached_tokens ?? 0) + (first.body.usage.prompt_tokens_details?.cached_tokens ?? 0);
    assert.ok(cached > 0, 'the engine served the second prompt from its cache');
    const metrics = (await gw.get('/metrics')).body as string;
    const labels = `router="chat",provider="engines",replica="${served.replica}"`;
    assert.equal(series(metrics, 'tollgate_provider_prefix_predicted_hit_blocks_total', labels), firstBlocks);
    assert.equal(series(metrics, 'tollgate_provider_prefix_prompt_blocks_total', labels), blocks);
    assert.equal(series(metrics, 'tollgate_cached_tokens_total', 'router="chat",provider="engines",kind="read"'), cached);
    assert.equal(
      series(metrics, 'tollgate_cached_tokens_total', 'router="chat",provider="engines",kind="write"'),
      undefined,
      'no writes reported',
    );
  });

  test('a router of another strategy shows no prefix predictions', async (t) => {
    const [engine] = await replicas(t, 1);
    const config: GatewayConfig = {
      models: [
        { id: 'chat', type: 'text-generation', providers: [{ model: MODEL, type: 'vllm', id: 'one', args: { api_url: engine!.url } }] },
      ],
    };
    const gw = await bed.gateway(config, { t, settings: { engineScrapeIntervalMs: 0 } });
    assert.equal((await gw.post('/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
    assert.deepEqual(
      (await providersOf(gw)).map((p) => p.prefix),
      [null],
    );
    assert.ok(!((await gw.get('/metrics')).body as string).includes('tollgate_provider_prefix_prompt_blocks_total{'));
  });
});

const METRICS = (waiting: number) => `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} ${waiting}
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 4
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m"} 0.5
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{model_name="m"} 1000
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{model_name="m"} 600
`;

interface EngineEntry {
  id: string;
  engines: {
    signals: string;
    saturated: boolean | null;
    max_waiting: number;
    max_kv_cache: number;
    prefix_cache_queries: number | null;
    prefix_cache_hits: number | null;
  }[];
}

describe('engine load per replica', () => {
  test("the saturation verdict follows each provider's thresholds, in the routing view and /metrics", async (t) => {
    const [tight, loose] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
    t.after(() => Promise.all([tight!.close(), loose!.close()]));
    tight!.metricsText(METRICS(6));
    loose!.metricsText(METRICS(6));
    const config: GatewayConfig = {
      models: [
        {
          id: 'chat',
          type: 'text-generation',
          providers: [
            { model: 'm', type: 'vllm', id: 'tight', args: { api_url: tight!.url } },
            { model: 'm', type: 'vllm', id: 'loose', args: { api_url: loose!.url }, saturation: { max_waiting: 8, max_kv_cache: 0.9 } },
          ],
        },
      ],
    };
    const gw = await bed.gateway(config, { t, store: 'memory', settings: { engineScrapeIntervalMs: 1000 } });
    const entries = await eventually(async () => {
      const providers = (await gw.get('/v1/admin/routing')).body.providers as EngineEntry[];
      return providers.every((p) => p.engines[0]?.signals === 'fresh') && providers;
    }, 'both engines read');
    const engineOf = (id: string) => entries.find((p) => p.id === id)?.engines[0];
    assert.deepEqual(
      { ...engineOf('tight') },
      { ...engineOf('tight'), saturated: true, max_waiting: 5, max_kv_cache: 0.8, prefix_cache_queries: 1000, prefix_cache_hits: 600 },
      'six waiting is past the default five',
    );
    assert.deepEqual([engineOf('loose')?.saturated, engineOf('loose')?.max_waiting, engineOf('loose')?.max_kv_cache], [false, 8, 0.9]);

    const metrics = (await gw.get('/metrics')).body as string;
    const of = (provider: string) => `router="chat",provider="${provider}"`;
    assert.equal(series(metrics, 'tollgate_provider_engine_saturated', of('tight')), 1);
    assert.equal(series(metrics, 'tollgate_provider_engine_saturated', of('loose')), 0);
    assert.equal(series(metrics, 'tollgate_provider_engine_waiting_requests', of('tight')), 6);
    assert.equal(series(metrics, 'tollgate_provider_engine_running_requests', of('tight')), 4);
    assert.equal(series(metrics, 'tollgate_provider_engine_kv_cache_usage_ratio', of('loose')), 0.5);
    assert.ok((series(metrics, 'tollgate_provider_engine_signals_age_seconds', of('tight')) ?? -1) >= 0, 'the age of the signals');

    tight!.metricsText(undefined);
    const failing = await eventually(async () => {
      const providers = (await gw.get('/v1/admin/routing')).body.providers as EngineEntry[];
      const engine = providers.find((p) => p.id === 'tight')?.engines[0];
      return engine?.signals === 'failing' && engine;
    }, 'the failing scrape seen');
    assert.equal(failing.saturated, null, 'no verdict without fresh signals');
    const after = (await gw.get('/metrics')).body as string;
    assert.equal(series(after, 'tollgate_provider_engine_saturated', of('tight')), undefined, 'and no gauge');
    assert.ok(
      series(after, 'tollgate_provider_engine_signals_age_seconds', of('tight')) !== undefined,
      'the age of the last good reading stays',
    );
  });
});
