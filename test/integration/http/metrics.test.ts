// GET /metrics (Prometheus text), GET /healthz and GET /readyz: what an operator sees after some
// traffic, and that the provider's API key never appears on any of these read endpoints.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { JSON_HEADERS, ownClient, parsePrometheus, postJson, sampleValue, send, waitUntil, type Sample } from './helpers.ts';
import { testBed, type BedGateway } from '../../support/test-bed.ts';
import { chatModel, simulator, type GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

const SECRET = 'sk-live-SECRET-do-not-leak-4242';
const USER = [{ role: 'user', content: 'Say hello' }];

function config(fakeUrl: string, extraRouter = false): GatewayConfig {
  return {
    models: [
      {
        id: 'metered',
        type: 'text-generation',
        costs: { prompt_tokens: '3', completion_tokens: '10' },
        providers: [{ model: 'llama-8b', type: 'vllm', args: { api_url: fakeUrl, api_key: '${UPSTREAM_KEY}', timeout: 30 } }],
      },
      {
        id: 'sim-embed',
        type: 'text-embeddings-inference',
        costs: { prompt_tokens: '0.02', completion_tokens: '0' },
        providers: [{ model: 'bge', type: 'simulator' }],
      },
      ...(extraRouter ? [chatModel('added-later', [simulator({ model: 'x' })])] : []),
    ],
  };
}

async function scrape(gw: TestGateway): Promise<{ text: string; samples: Sample[]; contentType: string }> {
  const answer = await send(gw, 'GET', '/metrics');
  assert.equal(answer.status, 200);
  return { text: answer.text, samples: parsePrometheus(answer.text), contentType: answer.headers.get('content-type') ?? '' };
}

describe('after some traffic', () => {
  let fake: FakeBackend;
  let gw: BedGateway;
  const costs: number[] = [];
  let metrics: { text: string; samples: Sample[]; contentType: string };

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await bed.gateway(config(fake.url), { env: { UPSTREAM_KEY: SECRET } });
    // Two answers, one stream, one embedding, one unknown model, one wrong type, one failing backend.
    for (let i = 0; i < 2; i++) {
      const answer = await gw.post('/v1/chat/completions', { model: 'metered', messages: USER });
      assert.equal(answer.status, 200);
      costs.push(answer.body.usage.cost);
    }
    const streamed = await send(
      gw,
      'POST',
      '/v1/chat/completions',
      JSON.stringify({ model: 'metered', messages: USER, stream: true }),
      JSON_HEADERS,
    );
    assert.equal(streamed.status, 200);
    costs.push(Number(/"cost":([0-9.]+)/.exec(streamed.text)![1]));
    assert.equal((await gw.post('/v1/embeddings', { model: 'sim-embed', input: 'hello world' })).status, 200);
    assert.equal((await gw.post('/v1/chat/completions', { model: 'no-such-model', messages: USER })).status, 404);
    assert.equal((await gw.post('/v1/embeddings', { model: 'metered', input: 'x' })).status, 400);
    // A 500 is not retried (a 503 would be, and answered): one failed attempt.
    fake.once({ status: 500 });
    assert.equal((await gw.post('/v1/chat/completions', { model: 'metered', messages: USER })).status, 502);
    metrics = await scrape(gw);
  });

  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('is served as Prometheus text with HELP and TYPE for each gateway metric', () => {
    assert.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
    const types: Record<string, string> = {
      tollgate_requests_total: 'counter',
      tollgate_request_duration_seconds: 'histogram',
      tollgate_upstream_duration_seconds: 'histogram',
      tollgate_overhead_seconds: 'histogram',
      tollgate_tokens_total: 'counter',
      tollgate_cost_total: 'counter',
      tollgate_provider_in_flight_requests: 'gauge',
      tollgate_provider_breaker_state: 'gauge',
      tollgate_upstream_retries_total: 'counter',
      tollgate_fallbacks_total: 'counter',
    };
    for (const [name, type] of Object.entries(types)) {
      assert.match(metrics.text, new RegExp(`^# HELP ${name} \\S`, 'm'), `HELP of ${name}`);
      assert.match(metrics.text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), `TYPE of ${name}`);
    }
  });

  test('tollgate_requests_total counts answers by router, provider, endpoint and status', () => {
    const count = (labels: Record<string, string>) => sampleValue(metrics.samples, 'tollgate_requests_total', labels);
    assert.equal(count({ router: 'metered', provider: 'metered-0', endpoint: 'chat', status: '200' }), 3);
    assert.equal(count({ router: 'sim-embed', provider: 'sim-embed-0', endpoint: 'embeddings', status: '200' }), 1);
    assert.equal(count({ endpoint: 'chat', status: '404' }), 1);
    assert.equal(count({ endpoint: 'embeddings', status: '400' }), 1);
    assert.equal(count({ router: 'metered', endpoint: 'chat', status: '502' }), 1);
  });

  test('a model name that matches no router never becomes a label value', () => {
    assert.doesNotMatch(metrics.text, /no-such-model/);
  });

  test('tollgate_request_duration_seconds times every answered request, failures included', () => {
    assert.equal(sampleValue(metrics.samples, 'tollgate_request_duration_seconds_count', { router: 'metered', endpoint: 'chat' }), 4);
    assert.equal(
      sampleValue(metrics.samples, 'tollgate_request_duration_seconds_count', { router: 'sim-embed', endpoint: 'embeddings' }),
      1,
    );
    assert.ok(sampleValue(metrics.samples, 'tollgate_request_duration_seconds_sum', { router: 'metered', endpoint: 'chat' })! > 0);
    assert.equal(
      sampleValue(metrics.samples, 'tollgate_request_duration_seconds_bucket', { router: 'metered', endpoint: 'chat', le: '+Inf' }),
      4,
    );
  });

  test('tollgate_upstream_duration_seconds times the successful provider attempts', () => {
    assert.equal(sampleValue(metrics.samples, 'tollgate_upstream_duration_seconds_count', { router: 'metered', provider: 'metered-0' }), 3);
    assert.ok(sampleValue(metrics.samples, 'tollgate_upstream_duration_seconds_sum', { router: 'metered', provider: 'metered-0' })! > 0);
  });

  test("tollgate_overhead_seconds observes the gateway's own time per endpoint", () => {
    assert.equal(sampleValue(metrics.samples, 'tollgate_overhead_seconds_count', { endpoint: 'chat' }), 3);
    assert.equal(sampleValue(metrics.samples, 'tollgate_overhead_seconds_count', { endpoint: 'embeddings' }), 1);
    assert.ok(sampleValue(metrics.samples, 'tollgate_overhead_seconds_sum', { endpoint: 'chat' })! > 0, 'time was spent');
  });

  test('tollgate_tokens_total adds up the prompt and completion tokens of each router and provider', () => {
    // The fake reports 11 prompt and 5 completion tokens per answer.
    assert.equal(sampleValue(metrics.samples, 'tollgate_tokens_total', { router: 'metered', provider: 'metered-0', kind: 'prompt' }), 33);
    assert.equal(
      sampleValue(metrics.samples, 'tollgate_tokens_total', { router: 'metered', provider: 'metered-0', kind: 'completion' }),
      15,
    );
    assert.ok(sampleValue(metrics.samples, 'tollgate_tokens_total', { router: 'sim-embed', provider: 'sim-embed-0', kind: 'prompt' })! > 0);
  });

  test('tollgate_cost_total is the sum of the costs returned to clients', () => {
    assert.deepEqual(costs, [0.000083, 0.000083, 0.000083]);
    assert.equal(
      sampleValue(metrics.samples, 'tollgate_cost_total', { router: 'metered' }),
      costs.reduce((sum, cost) => sum + cost, 0),
    );
  });

  test('tollgate_time_to_first_token_seconds times the streamed answer only, within its whole duration', () => {
    const ttft = (name: string) => sampleValue(metrics.samples, `tollgate_time_to_first_token_seconds_${name}`, { router: 'metered' });
    assert.equal(ttft('count'), 1);
    assert.ok(ttft('sum')! > 0);
    assert.ok(
      ttft('sum')! <= sampleValue(metrics.samples, 'tollgate_request_duration_seconds_sum', { router: 'metered', endpoint: 'chat' })!,
    );
  });

  test('tollgate_store_up says the in-memory store answers', () => {
    assert.equal(sampleValue(metrics.samples, 'tollgate_store_up', { store: 'memory' }), 1);
  });

  test('tollgate_provider_in_flight_requests is 0 for every provider once all answers are done', () => {
    assert.equal(sampleValue(metrics.samples, 'tollgate_provider_in_flight_requests', { router: 'metered', provider: 'metered-0' }), 0);
    assert.equal(sampleValue(metrics.samples, 'tollgate_provider_in_flight_requests', { router: 'sim-embed', provider: 'sim-embed-0' }), 0);
  });

  test('a failed provider attempt is counted by kind of failure', () => {
    assert.equal(
      sampleValue(metrics.samples, 'tollgate_upstream_failures_total', { router: 'metered', provider: 'metered-0', failure: 'status' }),
      1,
    );
  });

  test("the provider's API key appears nowhere on /metrics, /v1/models, /readyz or /healthz", async () => {
    assert.equal(fake.requests[0]?.headers.authorization, `Bearer ${SECRET}`, 'the key is configured and in use');
    for (const path of ['/metrics', '/v1/models', '/v1/models/metered', '/readyz', '/healthz']) {
      const answer = await send(gw, 'GET', path);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.text.includes(SECRET), false, `${path} shows the key`);
      assert.equal(answer.text.includes('SECRET-do-not-leak'), false, `${path} shows part of the key`);
    }
  });

  test('the error a client gets when the backend fails does not show the key either', async () => {
    fake.once({ status: 500 });
    const answer = await postJson(gw, '/v1/chat/completions', { model: 'metered', messages: USER });
    assert.equal(answer.status, 502);
    assert.equal(answer.text.includes(SECRET), false);
  });
});

describe('in-flight requests, health and readiness', () => {
  let fake: FakeBackend;
  let gw: BedGateway;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await bed.gateway(config(fake.url), { env: { UPSTREAM_KEY: SECRET } });
  });

  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('tollgate_provider_in_flight_requests shows a stream while it is relayed, and 0 once its client has gone', async (t) => {
    const inFlight = async () =>
      sampleValue((await scrape(gw)).samples, 'tollgate_provider_in_flight_requests', { router: 'metered', provider: 'metered-0' });
    assert.equal(await inFlight(), 0);
    // Twenty words, one every 200 ms: the stream is still being relayed long after its first chunk.
    fake.once({ chunkDelayMs: 200, text: Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ') });
    const client = ownClient(gw);
    t.after(() => client.close());
    const controller = new AbortController();
    const response = await client.fetch('/v1/chat/completions', {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ model: 'metered', messages: USER, stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    assert.equal((await reader.read()).done, false, 'the first chunk arrived');
    assert.equal(await inFlight(), 1);
    controller.abort();
    await reader.read().catch(() => undefined);
    assert.equal(await waitUntil(inFlight, (n) => n === 0), 0);
  });

  test('GET /healthz answers 200 ok', async () => {
    const answer = await gw.get('/healthz');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { status: 'ok' });
  });

  test('GET /readyz answers 200 with the routing snapshot version it serves, as /metrics labels it', async () => {
    const answer = await gw.get('/readyz');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.status, 'ready');
    assert.equal(answer.body.routers, 2);
    assert.equal(typeof answer.body.snapshot, 'string');
    assert.ok(answer.body.snapshot.length > 0);
    const { samples } = await scrape(gw);
    assert.equal(sampleValue(samples, 'tollgate_routing_snapshot_info', { version: answer.body.snapshot }), 1);
  });

  test('after a configuration reload /readyz shows the new snapshot version', async () => {
    const before = (await gw.get('/readyz')).body;
    await gw.reconfigure(config(fake.url, true));
    const after = (await gw.get('/readyz')).body;
    assert.notEqual(after.snapshot, before.snapshot);
    assert.equal(after.routers, 3);
    const { samples } = await scrape(gw);
    assert.equal(sampleValue(samples, 'tollgate_routing_snapshot_info', { version: after.snapshot }), 1);
    assert.equal(
      sampleValue(samples, 'tollgate_routing_snapshot_info', { version: before.snapshot }),
      undefined,
      'only the served snapshot is shown',
    );
  });
});
