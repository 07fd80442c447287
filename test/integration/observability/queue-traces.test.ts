// A queue-mode request's trace: its wait for a router worker's slot is a span of its own, with
// the caller's priority, the wait allowed and what the workers answered, before the attempt on
// the provider they gave; the worker's answer joins the trace through the queue entry, whether
// the worker runs in the gateway or in a process of its own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../../support/otlp-receiver.ts';
import { queueConfig } from '../../support/queue.ts';
import { testBed } from '../../support/test-bed.ts';
import { startWorkerProcess } from '../../support/gateway-process.ts';
import type { TestGateway } from '../../support/gateway.ts';

const bed = testBed({ redis: true });
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

/** Spans go to the receiver as JSON, soon after they end. */
const tracingEnv = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '50',
});

/** One queue-mode router `chat` whose only provider takes one request at a time; Carol calls it. */
const setupQueue = () => queueConfig({ providers: [{ id: 'only', backend, maxConcurrent: 1 }], priorities: { carol: 3 } });

/** A chat as Carol in a trace of its own (sampled unless told), answered 200; resolves with the trace's id. */
async function tracedChat(gw: TestGateway, key: string, flags = '01'): Promise<string> {
  const traceId = randomBytes(16).toString('hex');
  const answer = await gw.post(
    '/v1/chat/completions',
    { model: 'chat', messages: [{ role: 'user', content: 'hi' }] },
    { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}` },
  );
  assert.equal(answer.status, 200);
  return traceId;
}

test("a queue-mode request's wait for a slot is a span between admission and its attempt", async (t) => {
  const setup = setupQueue();
  const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 }, env: tracingEnv() });
  const spans = await receiver.trace(await tracedChat(gw, setup.keys.carol!), 7);
  const queue = spans.find((span) => span.name === 'tollgate.queue');
  assert.ok(queue, `a queue span among ${spans.map((s) => s.name).join(', ')}`);
  assert.deepEqual(
    [queue.attributes['tollgate.router'], queue.attributes['tollgate.queue.priority'], queue.attributes['tollgate.queue.outcome']],
    ['chat', 3, 'ok'],
  );
  assert.ok(Number(queue.attributes['tollgate.queue.max_wait_ms']) > 0);
  const attempt = spans.find((span) => span.kind === 3)!;
  assert.ok(attempt.startNs >= queue.endNs, 'the attempt starts once the slot is given');
  const admission = spans.find((span) => span.name === 'tollgate.admission')!;
  assert.ok(queue.startNs >= admission.endNs, 'the wait starts after admission');
  // The router worker's answer joined the trace through the queue entry, under the wait it ended.
  const answered = spans.find((span) => span.name === 'tollgate.queue.answer');
  assert.ok(answered, `an answer span among ${spans.map((s) => s.name).join(', ')}`);
  assert.equal(answered.parentSpanId, queue.spanId);
  assert.equal(answered.kind, 5, 'a consumer span');
  assert.deepEqual(
    [answered.attributes['tollgate.router'], answered.attributes['tollgate.queue.outcome'], answered.attributes['tollgate.provider.id']],
    ['chat', 'ok', 'only'],
  );
  assert.ok(Number(answered.attributes['tollgate.queue.waited_ms']) >= 0);
});

test('a router worker in a process of its own answers in the trace of the request, as its own service', async (t) => {
  const setup = setupQueue();
  const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 0 }, env: tracingEnv() });
  // It reads the routers from the catalog the gateway seeded.
  const worker = await startWorkerProcess(['--redis-url', bed.redis.url], tracingEnv());
  t.after(() => worker.stop());
  const spans = await receiver.trace(await tracedChat(gw, setup.keys.carol!), 7);
  const queue = spans.find((span) => span.name === 'tollgate.queue')!;
  const answered = spans.find((span) => span.name === 'tollgate.queue.answer')!;
  assert.equal(answered.parentSpanId, queue.spanId);
  assert.equal(answered.resource['service.name'], 'tollgate-router-worker');
  assert.match(String(answered.attributes['tollgate.queue.worker']), /-0$/);
  assert.equal(queue.resource['service.name'], 'tollgate-gateway');
});

test('an unsampled request leaves no trace in the worker either', async (t) => {
  const setup = setupQueue();
  const gw = await bed.gateway(setup.config, { t, settings: { routerWorkers: 1 }, env: tracingEnv() });
  const unsampled = await tracedChat(gw, setup.keys.carol!, '00');
  // The sampled request's spans, sent after the unsampled one's would have been, have arrived.
  await receiver.trace(await tracedChat(gw, setup.keys.carol!), 7);
  assert.deepEqual(
    receiver.spans.filter((span) => span.traceId === unsampled),
    [],
  );
});
