// Engine signals in GET /v1/admin/routing, through real gateways on a real Redis: each vllm
// provider lists its engine replica with what its /metrics last said while fresh, and says when
// the scrape fails (routing then does without them).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../../support/eventually.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed({ redis: true });

const METRICS = `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} 3.0
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 2.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m"} 0.5
`;

interface EngineEntry {
  target: string;
  url: string;
  signals: string;
  signals_age_ms: number | null;
  signals_reason: string | null;
  waiting: number | null;
  running: number | null;
  kv_cache_usage: number | null;
}

const enginesOf = async (gw: TestGateway, id: string) =>
  ((await gw.get('/v1/admin/routing')).body.providers as { id: string; engines: EngineEntry[] }[]).find((p) => p.id === id)?.engines;

test('each gateway shows the engine of a vllm provider, fresh, then failing once its /metrics fails', async (t) => {
  const engine = await startFakeOpenAI();
  t.after(() => engine.close());
  engine.metricsText(METRICS);
  const config: GatewayConfig = {
    models: [
      {
        id: 'chat',
        type: 'text-generation',
        providers: [{ model: 'm', type: 'vllm', id: 'engine', args: { api_url: engine.url } }],
      },
    ],
  };
  const gateways = [
    await bed.gateway(config, { t, settings: { engineScrapeIntervalMs: 1000 } }),
    await bed.gateway(config, { t, settings: { engineScrapeIntervalMs: 1000 } }),
  ];
  for (const gw of gateways) {
    const [entry] = await eventually(async () => {
      const engines = await enginesOf(gw, 'engine');
      return engines?.[0]?.signals === 'fresh' && engines;
    }, 'the engine read');
    assert.deepEqual(
      { ...entry, signals_age_ms: typeof entry?.signals_age_ms },
      {
        target: `engine@${engine.url}`,
        url: engine.url,
        signals: 'fresh',
        signals_age_ms: 'number',
        signals_reason: null,
        waiting: 3,
        running: 2,
        kv_cache_usage: 0.5,
        sent_since_read: 0,
        saturated: false,
        max_waiting: 5,
        max_kv_cache: 0.8,
        prefix_cache_queries: null,
        prefix_cache_hits: null,
      },
    );
  }
  engine.metricsText(undefined);
  for (const gw of gateways) {
    const [entry] = await eventually(async () => {
      const engines = await enginesOf(gw, 'engine');
      return engines?.[0]?.signals === 'failing' && engines;
    }, 'the failing scrape seen');
    assert.match(entry?.signals_reason ?? '', /answered 404/);
    assert.deepEqual([entry?.waiting, entry?.running, entry?.kv_cache_usage], [null, null, null]);
  }
});

test('an engine address with credentials is scraped with them (Basic) and shown masked', async (t) => {
  const engine = await startFakeOpenAI();
  t.after(() => engine.close());
  engine.metricsText(METRICS);
  const secretUrl = engine.url.replace('http://', 'http://user:s3cret-pass@');
  const config: GatewayConfig = {
    models: [
      { id: 'chat', type: 'text-generation', providers: [{ model: 'm', type: 'vllm', id: 'engine', args: { api_url: secretUrl } }] },
    ],
  };
  const gw = await bed.gateway(config, { t, store: 'memory', settings: { engineScrapeIntervalMs: 1000 } });
  const [entry] = await eventually(async () => {
    const engines = await enginesOf(gw, 'engine');
    return engines?.[0]?.signals === 'fresh' && engines;
  }, 'the engine read');
  assert.equal(entry?.waiting, 3);
  assert.equal(entry?.url, engine.url.replace('http://', 'http://***@'));
  assert.ok(!JSON.stringify(entry).includes('s3cret-pass'), 'the password is not shown');
});
