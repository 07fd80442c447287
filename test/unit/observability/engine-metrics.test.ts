// The engine and prefix families of /metrics (observability/engine-metrics.ts), read at scrape
// time from the rows routing gives: a gauge only for a replica with fresh signals, the `replica`
// label only on one of several, the prefix counters only for prefix_affinity routers (at 0
// before any request, so the ratio's series exist from the start).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { EngineMetrics, type ReplicaGauges } from '../../../gateway/observability/engine-metrics.ts';

const row = (over: Partial<ReplicaGauges>): ReplicaGauges => ({
  router: 'chat',
  provider: 'fleet',
  replica: undefined,
  engine: undefined,
  signalsAgeSeconds: undefined,
  prefix: undefined,
  ...over,
});

async function scrape(rows: readonly ReplicaGauges[]): Promise<string[]> {
  const registry = new Registry();
  new EngineMetrics(registry, () => rows);
  return (await registry.metrics()).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

test('a replica with fresh signals has its load, verdict and age; one without has its age alone', async () => {
  const lines = await scrape([
    row({
      replica: 'http://a:8000',
      engine: { waiting: 6, running: 2, kvCacheUsage: 0.25, saturated: true },
      signalsAgeSeconds: 0.2,
    }),
    row({ replica: 'http://b:8000', signalsAgeSeconds: 9 }),
  ]);
  const a = 'router="chat",provider="fleet",replica="http://a:8000"';
  const b = 'router="chat",provider="fleet",replica="http://b:8000"';
  assert.deepEqual(lines, [
    `tollgate_provider_engine_waiting_requests{${a}} 6`,
    `tollgate_provider_engine_running_requests{${a}} 2`,
    `tollgate_provider_engine_kv_cache_usage_ratio{${a}} 0.25`,
    `tollgate_provider_engine_saturated{${a}} 1`,
    `tollgate_provider_engine_signals_age_seconds{${a}} 0.2`,
    `tollgate_provider_engine_signals_age_seconds{${b}} 9`,
  ]);
});

test('prefix counters for prefix_affinity routers only, 0 before any block, without a replica label for a provider of one address', async () => {
  const lines = await scrape([
    row({ prefix: { predictedHitBlocks: 0, promptBlocks: 0 } }),
    row({ router: 'other', provider: 'solo' }),
    row({ router: 'busy', provider: 'p', prefix: { predictedHitBlocks: 30, promptBlocks: 40 } }),
  ]);
  assert.deepEqual(lines, [
    'tollgate_provider_prefix_predicted_hit_blocks_total{router="chat",provider="fleet"} 0',
    'tollgate_provider_prefix_predicted_hit_blocks_total{router="busy",provider="p"} 30',
    'tollgate_provider_prefix_prompt_blocks_total{router="chat",provider="fleet"} 0',
    'tollgate_provider_prefix_prompt_blocks_total{router="busy",provider="p"} 40',
  ]);
});
