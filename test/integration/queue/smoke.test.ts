import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis } from '../../support/redis-server.ts';
import { startTestGateway } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';

test('smoke', async () => {
  const redis = await startRedis();
  const a = await startFakeOpenAI();
  const b = await startFakeOpenAI();
  a.behave({ delayMs: 100 });
  b.behave({ delayMs: 100 });
  const gw = await startTestGateway(`
models:
  - id: chat
    type: text-generation
    routing_mode: queue
    load_balancing_strategy: least_busy
    providers:
      - { model: m, type: vllm, id: pa, max_concurrent: 2, args: { api_url: "${a.url}" } }
      - { model: m, type: vllm, id: pb, max_concurrent: 2, args: { api_url: "${b.url}" } }
`, { settings: { redisUrl: redis.url, routerWorkers: 1, logLevel: 'info' } });
  try {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => gw.post('/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'hi' + i }] })));
    console.log(results.map((r) => r.status).join(','), a.peakOpenRequests, b.peakOpenRequests, a.requests.length, b.requests.length);
    console.log(JSON.stringify(results.find((r) => r.status !== 200)?.body));
  } finally {
    await gw.close();
    await a.close(); await b.close();
    await redis.stop();
  }
});
