// OpenTelemetry traces of inference requests, received over real OTLP/HTTP (JSON) on loopback as
// a collector would receive them: one server span per request, named and attributed by the GenAI
// semantic conventions, continuing the caller's `traceparent`; a child span for authentication,
// each admission (the levels held, or who refused), each upstream attempt (its context passed to
// the backend as `traceparent`), each fallback, the stream and settlement (cost, charged, carbon).
// Secrets never appear in them.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../../support/otlp-receiver.ts';
import { testBed } from '../../support/test-bed.ts';
import { eventually } from '../../support/eventually.ts';

const bed = testBed();
const alice = generateKey().secret;
const PROVIDER_KEY = 'sk-provider-secret-0123456789abcdef';
const USER = [{ role: 'user', content: 'Say hello' }];
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

let receiver: OtlpReceiver;
before(async () => {
  receiver = await startOtlpReceiver();
});
after(() => receiver.close());

/** A caller's own span: the trace it belongs to, and its id (the gateway's server span's parent). */
function callerSpan(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

interface Bed {
  readonly gw: TestGateway;
  readonly primary: FakeBackend;
  readonly second: FakeBackend;
}

/** Alice (budget `budget`, limits `limits`) calls `primary`, which falls back to `second`; traces go to the receiver. */
async function tracedGateway(
  t: TestContext,
  options: { budget?: string; limits?: Record<string, number>; protocol?: string; env?: Record<string, string> } = {},
): Promise<Bed> {
  const [primary, second] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  t.after(() => Promise.all([primary.close(), second.close()]));
  const config: GatewayConfig = {
    users: [
      {
        id: 'alice',
        name: 'Alice',
        budget: options.budget ?? '100',
        ...(options.limits && { rate_limits: options.limits }),
        keys: [{ name: 'a', key: '${ALICE}' }],
      },
    ],
    models: [
      {
        id: 'primary',
        type: 'text-generation',
        costs: { prompt_tokens: 1, completion_tokens: 2 },
        fallbacks: ['second'],
        providers: [{ model: 'primary-backend', type: 'vllm', args: { api_url: primary.url, api_key: '${PROVIDER_KEY}' } }],
      },
      {
        id: 'second',
        type: 'text-generation',
        costs: { prompt_tokens: 3, completion_tokens: 4 },
        providers: [{ model: 'second-backend', type: 'vllm', args: { api_url: second.url, api_key: '${PROVIDER_KEY}' } }],
      },
    ],
  };
  const gw = await bed.gateway(config, {
    t,
    env: {
      ALICE: alice,
      PROVIDER_KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: options.protocol ?? 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=collector%20secret',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...options.env,
    },
    settings: { retries: 1, retryBaseMs: 5, retryMaxMs: 20 },
  });
  return { gw, primary, second };
}

const named = (spans: readonly ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: readonly ReceivedSpan[], name: string) => {
  const found = named(spans, name);
  assert.equal(found.length, 1, `one span named ${name}, among: ${spans.map((s) => s.name).join(', ')}`);
  return found[0]!;
};

describe('traces of inference requests', () => {
  test("a chat that falls back after a retry is one trace: the caller's, its attempts, the fallback and what it cost", async (t) => {
    const { gw, primary, second } = await tracedGateway(t);
    primary.behave({ status: 503 });
    const caller = callerSpan();
    const answer = await gw.post(
      '/v1/chat/completions',
      { model: 'primary', messages: USER, max_tokens: 50, temperature: 0.5 },
      {
        authorization: `Bearer ${alice}`,
        traceparent: caller.traceparent,
      },
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.body.model, 'second');

    // server, authenticate, two admissions, three attempts, the fallback, settlement
    const spans = await receiver.trace(caller.traceId, 9);
    const server = spans.find((span) => span.kind === SERVER)!;
    assert.equal(server.parentSpanId, caller.spanId, "the gateway's span continues the caller's");
    assert.equal(server.name, 'chat primary');
    assert.deepEqual(
      {
        operation: server.attributes['gen_ai.operation.name'],
        requested: server.attributes['gen_ai.request.model'],
        served: server.attributes['gen_ai.response.model'],
        provider: server.attributes['gen_ai.provider.name'],
        input: server.attributes['gen_ai.usage.input_tokens'],
        output: server.attributes['gen_ai.usage.output_tokens'],
        maxTokens: server.attributes['gen_ai.request.max_tokens'],
        temperature: server.attributes['gen_ai.request.temperature'],
        status: server.attributes['http.response.status_code'],
        user: server.attributes['tollgate.user.id'],
      },
      {
        operation: 'chat',
        requested: 'primary',
        served: 'second',
        provider: 'vllm',
        input: answer.body.usage.prompt_tokens,
        output: answer.body.usage.completion_tokens,
        maxTokens: 50,
        temperature: 0.5,
        status: 200,
        user: 'alice',
      },
    );
    assert.equal(server.resource['service.name'], 'tollgate-gateway');
    assert.equal(server.resource['deployment.environment.name'], 'test');

    for (const span of spans.filter((s) => s !== server))
      assert.equal(span.parentSpanId, server.spanId, `${span.name} is a child of the request's span`);
    assert.equal(one(spans, 'tollgate.authenticate').attributes['tollgate.key.id'] !== undefined, true);

    const attempts = spans.filter((span) => span.kind === CLIENT).sort((a, b) => Number(a.startNs - b.startNs));
    assert.deepEqual(
      attempts.map((a) => [
        a.name,
        a.attributes['tollgate.router'],
        a.attributes['tollgate.attempt'],
        a.attributes['tollgate.retry'],
        a.attributes['error.type'] ?? null,
        a.status,
      ]),
      [
        ['chat primary-backend', 'primary', 1, 0, 'status', ERROR],
        ['chat primary-backend', 'primary', 2, 1, 'status', ERROR],
        ['chat second-backend', 'second', 1, 0, null, 0],
      ],
      "the first attempt, its retry, then the fallback router's attempt",
    );
    assert.equal(attempts[2]!.attributes['server.address'], '127.0.0.1');
    assert.equal(attempts[2]!.attributes['gen_ai.request.model'], 'second-backend');

    const fallback = one(spans, 'tollgate.fallback');
    assert.equal(fallback.attributes['tollgate.fallback.from'], 'primary');
    assert.equal(fallback.attributes['tollgate.fallback.to'], 'second');
    assert.equal(typeof fallback.attributes['tollgate.fallback.reason'], 'string');

    const admissions = named(spans, 'tollgate.admission').map((span) => [
      span.attributes['tollgate.router'],
      span.attributes['tollgate.admission.levels'],
    ]);
    assert.deepEqual(admissions.sort(), [
      ['primary', 'user'],
      ['second', 'user'],
    ]);

    const settle = one(spans, 'tollgate.settle');
    const costMicros = Math.round(answer.body.usage.cost * 1e6);
    assert.equal(settle.attributes['tollgate.cost_micros'], costMicros, 'the cost the caller was told of');
    assert.equal(settle.attributes['tollgate.charged_micros'], costMicros, 'all of it charged');

    // The backend that answered was sent the context of its attempt's span.
    const sent = second.requests.at(-1)!.headers.traceparent;
    assert.equal(sent, `00-${caller.traceId}-${attempts[2]!.spanId}-01`);
    // The exporter authenticated to the collector; nothing secret is in any span.
    assert.equal(receiver.headers.at(-1)!['x-collector-key'], 'collector secret');
    const everything = JSON.stringify(spans, (_key, value) => (typeof value === 'bigint' ? String(value) : value));
    for (const secret of [alice, PROVIDER_KEY, 'collector secret'])
      assert.equal(everything.includes(secret), false, 'no secret in the spans');
  });

  test('a request refused for its budget (402) says which level refused, and is settled with nothing charged', async (t) => {
    const { gw } = await tracedGateway(t, { budget: '0.000001' });
    const caller = callerSpan();
    const answer = await gw.post(
      '/v1/chat/completions',
      { model: 'second', messages: USER, max_tokens: 1000 },
      {
        authorization: `Bearer ${alice}`,
        traceparent: caller.traceparent,
      },
    );
    assert.equal(answer.status, 402);
    const spans = await receiver.trace(caller.traceId, 4);
    const server = spans.find((span) => span.kind === SERVER)!;
    assert.equal(server.attributes['http.response.status_code'], 402);
    assert.equal(server.attributes['error.type'], 'InsufficientBudgetError');
    const admission = one(spans, 'tollgate.admission');
    assert.equal(admission.attributes['tollgate.admission.refusal'], 'budget');
    assert.equal(admission.attributes['tollgate.admission.refused_level'], 'user');
    assert.equal(admission.status, ERROR);
    assert.equal(one(spans, 'tollgate.settle').attributes['tollgate.charged_micros'], 0);
    assert.equal(spans.filter((span) => span.kind === CLIENT).length, 0, 'no backend was called');
  });

  test('a request over its rate limit (429) names the limit', async (t) => {
    const { gw } = await tracedGateway(t, { limits: { requests_per_minute: 1 } });
    const auth = { authorization: `Bearer ${alice}` };
    assert.equal((await gw.post('/v1/chat/completions', { model: 'second', messages: USER }, auth)).status, 200);
    const caller = callerSpan();
    const answer = await gw.post('/v1/chat/completions', { model: 'second', messages: USER }, { ...auth, traceparent: caller.traceparent });
    assert.equal(answer.status, 429);
    const spans = await receiver.trace(caller.traceId, 4);
    const admission = one(spans, 'tollgate.admission');
    assert.equal(admission.attributes['tollgate.admission.refusal'], 'rate_limit:requests_per_minute');
    assert.equal(admission.attributes['tollgate.admission.refused_level'], 'user');
    assert.equal(spans.find((span) => span.kind === SERVER)!.attributes['error.type'], 'RateLimitedError');
  });

  test('a streamed chat has a stream span with its text chunks and time to first token', async (t) => {
    const { gw } = await tracedGateway(t);
    const caller = callerSpan();
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice}`, traceparent: caller.traceparent },
      body: JSON.stringify({ model: 'second', messages: USER, stream: true }),
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.match(text, /data: \[DONE\]/);
    const spans = await receiver.trace(caller.traceId, 6);
    const stream = one(spans, 'tollgate.stream');
    assert.equal(stream.attributes['tollgate.stream.chunks'], 5, "one per word of the fake's answer");
    assert.equal(typeof stream.attributes['tollgate.stream.ttft_ms'], 'number');
    const server = spans.find((span) => span.kind === SERVER)!;
    assert.equal(server.attributes['gen_ai.request.stream'], true);
    assert.equal(typeof server.attributes['gen_ai.response.time_to_first_chunk'], 'number');
  });

  test('a Messages stream the client cuts short: its stream span ends with what was relayed, and what was produced is charged', async (t) => {
    const { gw, second } = await tracedGateway(t);
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
    second.behave({ text: words.join(' '), chunkDelayMs: 50 });
    const caller = callerSpan();
    const abort = new AbortController();
    const response = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice}`, traceparent: caller.traceparent },
      body: JSON.stringify({ model: 'second', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'count' }] }),
      signal: abort.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (text.split('event: content_block_delta').length - 1 < 3) text += decoder.decode((await reader.read()).value, { stream: true });
    abort.abort();

    const spans = await receiver.trace(caller.traceId, 6);
    const server = spans.find((span) => span.kind === SERVER)!;
    assert.equal(server.name, 'chat second');
    assert.equal(server.attributes['tollgate.api'], 'anthropic-messages');
    assert.equal(server.attributes['http.response.status_code'], 499);
    const chunks = Number(one(spans, 'tollgate.stream').attributes['tollgate.stream.chunks']);
    assert.ok(chunks >= 3 && chunks < words.length, `${chunks} chunks relayed before the client left`);
    const settle = one(spans, 'tollgate.settle');
    assert.ok(Number(settle.attributes['tollgate.charged_micros']) > 0, 'what was produced is charged');
    assert.equal(settle.attributes['tollgate.charged_micros'], settle.attributes['tollgate.cost_micros']);
  });

  test('the default protocol, http/protobuf, sends the spans in protobuf', async (t) => {
    const { gw } = await tracedGateway(t, { protocol: 'http/protobuf' });
    const caller = callerSpan();
    const answer = await gw.post(
      '/v1/chat/completions',
      { model: 'second', messages: USER },
      { authorization: `Bearer ${alice}`, traceparent: caller.traceparent },
    );
    assert.equal(answer.status, 200);
    // Protobuf carries a span's trace id as its 16 bytes.
    const traceId = Buffer.from(caller.traceId, 'hex');
    await eventually(() => receiver.protobuf.some((body) => body.includes(traceId)), "an export in protobuf holding the request's trace");
  });

  test("a caller's unsampled traceparent is followed: no span is recorded, and the backend joins its trace unsampled", async (t) => {
    const { gw, second } = await tracedGateway(t);
    const unsampled = callerSpan();
    const auth = { authorization: `Bearer ${alice}` };
    const answer = await gw.post(
      '/v1/chat/completions',
      { model: 'second', messages: USER },
      { ...auth, traceparent: unsampled.traceparent.replace(/-01$/, '-00') },
    );
    assert.equal(answer.status, 200);
    assert.match(String(second.requests.at(-1)!.headers.traceparent), new RegExp(`^00-${unsampled.traceId}-[0-9a-f]{16}-00$`));
    // A sampled request after it: once its spans are in, an unsampled request's would be too (one queue, in order).
    const sampled = callerSpan();
    await gw.post('/v1/chat/completions', { model: 'second', messages: USER }, { ...auth, traceparent: sampled.traceparent });
    await receiver.trace(sampled.traceId, 5);
    assert.equal(receiver.spans.filter((span) => span.traceId === unsampled.traceId).length, 0);
  });

  test("a caller's tracestate is continued, and goes on to the backend with the gateway's traceparent", async (t) => {
    const { gw, second } = await tracedGateway(t);
    const caller = callerSpan();
    const answer = await gw.post(
      '/v1/chat/completions',
      { model: 'second', messages: USER },
      { authorization: `Bearer ${alice}`, traceparent: caller.traceparent, tracestate: 'vendor=opaque-value,other=1' },
    );
    assert.equal(answer.status, 200);
    const sent = second.requests.at(-1)!.headers;
    assert.equal(sent.tracestate, 'vendor=opaque-value,other=1');
    const spans = await receiver.trace(caller.traceId, 5);
    const attempt = spans.find((span) => span.kind === CLIENT)!;
    assert.equal(sent.traceparent, `00-${caller.traceId}-${attempt.spanId}-01`);
  });

  test('prompts and answers are recorded only when an operator turns it on, each cut at the limit', async (t) => {
    const content = { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', TOLLGATE_TRACE_CONTENT_MAX_CHARS: '40' };
    const { gw } = await tracedGateway(t, { env: content });
    const auth = { authorization: `Bearer ${alice}` };
    const messages = [
      { role: 'system', content: 'Be terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Say hello to the whole wide world, please' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ];
    const whole = callerSpan();
    assert.equal(
      (await gw.post('/v1/chat/completions', { model: 'second', messages }, { ...auth, traceparent: whole.traceparent })).status,
      200,
    );
    const server = (await receiver.trace(whole.traceId, 5)).find((span) => span.kind === SERVER)!;
    assert.deepEqual(JSON.parse(String(server.attributes['gen_ai.input.messages'])), [
      { role: 'system', parts: [{ type: 'text', content: 'Be terse.' }] },
      // 9 characters went to the system message: 31 are left, and the image keeps only its type.
      { role: 'user', parts: [{ type: 'text', content: 'Say hello to the whole wide wor' }, { type: 'image_url' }] },
    ]);
    assert.deepEqual(JSON.parse(String(server.attributes['gen_ai.output.messages'])), [
      { role: 'assistant', parts: [{ type: 'text', content: 'Hello from the fake backend' }] },
    ]);
    assert.equal(server.attributes['tollgate.content.truncated'], true);

    // A Messages stream: its system prompt, and the answer as the chunks made it.
    const streamed = callerSpan();
    const response = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth, traceparent: streamed.traceparent },
      body: JSON.stringify({
        model: 'second',
        max_tokens: 50,
        stream: true,
        system: 'Be kind.',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    assert.equal(response.status, 200);
    await response.text();
    const streamedServer = (await receiver.trace(streamed.traceId, 6)).find((span) => span.kind === SERVER)!;
    assert.deepEqual(JSON.parse(String(streamedServer.attributes['gen_ai.input.messages'])), [
      { role: 'system', parts: [{ type: 'text', content: 'Be kind.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'hi' }] },
    ]);
    assert.deepEqual(JSON.parse(String(streamedServer.attributes['gen_ai.output.messages'])), [
      { role: 'assistant', parts: [{ type: 'text', content: 'Hello from the fake backend' }] },
    ]);
    assert.equal(streamedServer.attributes['tollgate.content.truncated'], undefined);

    // Off unless asked for: the same request to a gateway without the switch records no content.
    const { gw: plain } = await tracedGateway(t);
    const unrecorded = callerSpan();
    await plain.post('/v1/chat/completions', { model: 'second', messages }, { ...auth, traceparent: unrecorded.traceparent });
    const plainServer = (await receiver.trace(unrecorded.traceId, 5)).find((span) => span.kind === SERVER)!;
    assert.deepEqual(
      Object.keys(plainServer.attributes).filter((name) => name.endsWith('.messages')),
      [],
    );
  });

  test('a request without a traceparent starts a trace of its own', async (t) => {
    const { gw, second } = await tracedGateway(t);
    const answer = await gw.post('/v1/chat/completions', { model: 'second', messages: USER }, { authorization: `Bearer ${alice}` });
    assert.equal(answer.status, 200);
    const sent = String(second.requests.at(-1)!.headers.traceparent);
    const [, traceId] = sent.split('-');
    const spans = await receiver.trace(traceId!, 5);
    assert.equal(spans.find((span) => span.kind === SERVER)!.parentSpanId, undefined);
  });
});
