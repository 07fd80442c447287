// Usage records as OTLP logs, received over real OTLP/HTTP (JSON) on loopback: with
// OTEL_LOGS_EXPORTER=otlp, every usage record, once written, is also sent as a log record whose
// body is the record itself (money exact, in micro-units) and which belongs to its request's trace.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { eventually } from '../../support/eventually.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../../support/otlp-receiver.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();
const bob = generateKey().secret;
const carol = generateKey().secret;
let receiver: OtlpReceiver;
let backend: FakeBackend;

before(async () => {
  receiver = await startOtlpReceiver();
  backend = await startFakeOpenAI();
});
after(async () => {
  await receiver.close();
  await backend.close();
});

const config = {
  teams: [{ id: 'platform', name: 'Platform', budget: '50' }],
  users: [
    { id: 'bob', name: 'Bob', team: 'platform', budget: '10', keys: [{ name: 'b', key: '${BOB}' }] },
    { id: 'carol', name: 'Carol', budget: '0.000001', keys: [{ name: 'c', key: '${CAROL}' }] },
  ],
  models: [
    {
      id: 'chat',
      type: 'text-generation' as const,
      costs: { prompt_tokens: '1.5', completion_tokens: '2' },
      providers: [{ model: 'm', type: 'vllm' as const, args: { api_url: '${BACKEND}' } }],
    },
  ],
};

test("each usage record is sent as a log record of its request's trace, its money exact", async (t) => {
  const gw = await bed.gateway(config, {
    t,
    env: {
      BOB: bob,
      CAROL: carol,
      BACKEND: backend.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_BLRP_SCHEDULE_DELAY: '50',
    },
  });
  const traceId = randomBytes(16).toString('hex');
  const answer = await gw.post(
    '/v1/chat/completions',
    { model: 'chat', messages: [{ role: 'user', content: 'hi' }] },
    { authorization: `Bearer ${bob}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
  );
  assert.equal(answer.status, 200);
  const log = await eventually(() => receiver.logs.find((l) => l.traceId === traceId), 'the usage log record of the request');
  assert.equal(log.eventName, 'tollgate.usage');
  assert.equal(log.severity, 'INFO');
  assert.equal(log.resource['service.name'], 'tollgate-gateway');
  const body = log.body as Record<string, unknown>;
  const record = (await gw.get('/v1/usage?user=bob')).body.data[0];
  assert.equal(body.id, record.id);
  assert.deepEqual(
    [body.user_id, body.team_id, body.router, body.status, body.prompt_tokens, body.completion_tokens],
    ['bob', 'platform', 'chat', 200, answer.body.usage.prompt_tokens, answer.body.usage.completion_tokens],
  );
  const micros = String(Math.round(answer.body.usage.cost * 1e6));
  assert.equal(body.cost_micros, micros, 'the cost the caller was told of, in micro-units');
  assert.equal(body.charged_micros, micros);
  assert.equal(log.attributes['tollgate.team.id'], 'platform');
  // The log record belongs to the request's server span.
  const spans = await receiver.trace(traceId, 5);
  assert.equal(log.spanId, spans.find((span) => span.kind === 2)!.spanId);
});

test('without tracing, the records still go, belonging to no trace; a refused request is recorded too', async (t) => {
  const gw = await bed.gateway(config, {
    t,
    env: {
      BOB: bob,
      CAROL: carol,
      BACKEND: backend.url,
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${receiver.url}/v1/logs`,
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_BLRP_SCHEDULE_DELAY: '50',
    },
  });
  const refused = await gw.post(
    '/v1/chat/completions',
    { model: 'chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000 },
    { authorization: `Bearer ${carol}` },
  );
  assert.equal(refused.status, 402);
  const record = await eventually(async () => (await gw.get('/v1/usage?user=carol')).body.data?.[0], "the refusal's usage record");
  const log = await eventually(() => receiver.logs.find((l) => (l.body as Record<string, unknown>).id === record.id), 'its log record');
  assert.equal(log.traceId, '');
  assert.equal((log.body as Record<string, unknown>).status, 402);
  assert.equal((log.body as Record<string, unknown>).charged_micros, '0');
});
