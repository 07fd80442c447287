// Streamed chat and completions (`stream: true`): server-sent events relayed chunk by chunk with
// the router's name, one usage chunk with cost and carbon right before `data: [DONE]`, an SSE
// error event when the backend breaks off, and the backend's request cancelled when the client
// goes away.
import { test, describe, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sseEvents, type TestGateway } from '../../support/gateway.ts';
import { DEFAULT_TEXT, startFakeOpenAI } from '../../support/fake-openai.ts';
import { startFakeServer, words, type FakeBackend, type RecordedRequest } from '../../support/fake-server.ts';
import { assertNoInternals, exactCost, gatewayFetch, JSON_HEADERS, ownClient, printedCosts, waitUntil } from './helpers.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const USER = [{ role: 'user', content: 'Say hello' }];
const PRICES: [string, string] = ['0.15', '0.6'];

let fake: FakeBackend;
let gw: TestGateway;

before(async () => {
  fake = await startFakeOpenAI();
  const args = { api_url: fake.url, api_key: 'sk-stream-key', timeout: 10 };
  const costs = { prompt_tokens: PRICES[0], completion_tokens: PRICES[1] };
  gw = await bed.gateway({
    models: [
      {
        id: 'stream-openai',
        type: 'text-generation',
        aliases: ['so'],
        costs,
        providers: [{ model: 'gpt-4o-mini', type: 'openai', args, carbon: { params_total_b: 8, zone: 'FRA' } }],
      },
      // A context large enough for the 40,000-token answer of 'a client that reads slowly' (the
      // gateway believes no more completion tokens than the context leaves room for).
      {
        id: 'stream-vllm',
        type: 'text-generation',
        max_context_length: 65_536,
        costs,
        providers: [{ model: 'meta-llama/Llama-3.1-8B-Instruct', type: 'vllm', args }],
      },
      { id: 'stream-mistral', type: 'text-generation', costs, providers: [{ model: 'mistral-small-latest', type: 'mistral', args }] },
      { id: 'stream-sim', type: 'text-generation', costs, providers: [{ model: 'sim-llm', type: 'simulator' }] },
    ],
  });
});

after(async () => {
  await fake.close();
});

interface Streamed {
  status: number;
  contentType: string;
  text: string;
  events: any[];
}

async function stream(path: string, body: Record<string, unknown>): Promise<Streamed> {
  const response = await gatewayFetch(gw, path, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ ...body, stream: true }) });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, events: sseEvents(text) };
}

function lastRequest(): RecordedRequest {
  const request = fake.requests.at(-1);
  assert.ok(request, 'the backend received no request');
  return request;
}

/** Every SSE event is a single `data:` line followed by a blank line. */
function assertSseFraming(text: string): void {
  assert.ok(text.endsWith('\n\n'), 'the stream ends with a complete event');
  for (const block of text.slice(0, -2).split('\n\n')) assert.match(block, /^data: [^\n]+$/, `malformed SSE event: ${block}`);
}

/** The text a list of chunks adds up to (chat deltas or completion texts). */
function joinedText(chunks: any[]): string {
  return chunks.map((c) => c.choices.map((choice: any) => choice.delta?.content ?? choice.text ?? '').join('')).join('');
}

/**
 * The shape every successful stream has: content chunks with the router's name, then exactly one
 * usage chunk (choices: []), then [DONE]. Returns the content chunks and the usage.
 */
function assertCompleteStream(streamed: Streamed, router: string, object: string): { chunks: any[]; usage: any } {
  assert.equal(streamed.status, 200, streamed.text);
  assert.match(streamed.contentType, /^text\/event-stream/);
  assertSseFraming(streamed.text);
  const { events } = streamed;
  assert.equal(events.at(-1), '[DONE]', 'the stream ends with [DONE]');
  assert.equal(events.filter((e) => e === '[DONE]').length, 1);
  const json = events.slice(0, -1);
  for (const event of json) {
    assert.equal(typeof event, 'object', `not a JSON chunk: ${event}`);
    assert.equal(event.model, router, 'every chunk names the router');
    assert.equal(event.object, object);
  }
  const withUsage = json.filter((e) => e.usage !== undefined && e.usage !== null);
  assert.equal(withUsage.length, 1, 'exactly one chunk carries usage');
  const usageChunk = json.at(-1);
  assert.equal(withUsage[0], usageChunk, 'the usage chunk comes right before [DONE]');
  assert.deepEqual(usageChunk.choices, []);
  assert.equal(json.filter((e) => e.choices.length === 0).length, 1, 'only the usage chunk has no choices');
  const { usage } = usageChunk;
  assert.deepEqual(Object.keys(usage).sort(), ['carbon', 'completion_tokens', 'cost', 'prompt_tokens', 'total_tokens']);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.deepEqual(printedCosts(streamed.text), [exactCost(usage.prompt_tokens, usage.completion_tokens, ...PRICES)]);
  return { chunks: json.slice(0, -1), usage };
}

describe('streamed chat through OpenAI-format backends', () => {
  for (const router of ['stream-openai', 'stream-vllm']) {
    test(`${router}: chunks as SSE with the router's name, then one usage chunk with cost, then [DONE]`, async () => {
      const streamed = await stream('/v1/chat/completions', { model: router, messages: USER });
      const { chunks, usage } = assertCompleteStream(streamed, router, 'chat.completion.chunk');
      assert.equal(joinedText(chunks), DEFAULT_TEXT);
      assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
      assert.equal(usage.prompt_tokens, 11);
      assert.equal(usage.completion_tokens, words(DEFAULT_TEXT).length);
      assert.deepEqual(printedCosts(streamed.text), ['0.000005']);
    });

    test(`${router}: the backend is asked for a streamed answer with stream_options.include_usage`, async () => {
      await stream('/v1/chat/completions', { model: router, messages: USER });
      const { body } = lastRequest();
      assert.equal(body.stream, true);
      assert.deepEqual(body.stream_options, { include_usage: true });
    });
  }

  test("a client's own stream_options are kept, with include_usage forced on", async () => {
    await stream('/v1/chat/completions', {
      model: 'stream-vllm',
      messages: USER,
      stream_options: { include_usage: false, continuous_usage_stats: false },
    });
    assert.deepEqual(lastRequest().body.stream_options, { include_usage: true, continuous_usage_stats: false });
  });

  test('a client that did not ask for usage still gets the usage chunk', async () => {
    const streamed = await stream('/v1/chat/completions', { model: 'so', messages: USER });
    const { usage } = assertCompleteStream(streamed, 'stream-openai', 'chat.completion.chunk');
    assert.ok(usage.carbon.kWh > 0 && usage.carbon.kgCO2eq > 0, 'a provider with a parameter count reports carbon');
  });

  test('a backend that sends no usage: the gateway counts the tokens and still sends the usage chunk', async () => {
    const text = 'one two three four five six seven eight';
    fake.once({ omitUsage: true, text });
    const streamed = await stream('/v1/chat/completions', { model: 'stream-vllm', messages: USER });
    const { chunks, usage } = assertCompleteStream(streamed, 'stream-vllm', 'chat.completion.chunk');
    assert.equal(joinedText(chunks), text);
    assert.ok(usage.prompt_tokens > 0);
    assert.equal(usage.completion_tokens, 8);
    assert.ok(usage.cost > 0);
  });

  test('mistral: no stream_options is sent, and the gateway counts the usage it then lacks', async () => {
    const streamed = await stream('/v1/chat/completions', {
      model: 'stream-mistral',
      messages: USER,
      stream_options: { include_usage: true },
    });
    assert.equal('stream_options' in lastRequest().body, false);
    const { chunks, usage } = assertCompleteStream(streamed, 'stream-mistral', 'chat.completion.chunk');
    assert.equal(joinedText(chunks), DEFAULT_TEXT);
    assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  });
});

describe("the router's name in every chunk", () => {
  test("the backend's model is replaced in its own text; fields the gateway does not know arrive as the backend sent them", async () => {
    fake.once({ text: 'one two', chunkFields: { system_fingerprint: 'fp_1', 'x-extra': { nested: [1, 'two'] } } });
    const streamed = await stream('/v1/chat/completions', { model: 'stream-vllm', messages: USER });
    const { chunks } = assertCompleteStream(streamed, 'stream-vllm', 'chat.completion.chunk');
    const content = chunks.filter((chunk) => chunk.choices[0]?.delta?.content);
    assert.equal(content.length, 2);
    for (const chunk of content) assert.deepEqual([chunk.system_fingerprint, chunk['x-extra']], ['fp_1', { nested: [1, 'two'] }]);
  });

  test('a chunk with another "model" inside, or with none, still gets the name, and keeps what it had', async () => {
    fake.once({ text: 'one two', chunkFields: { metadata: { model: 'draft-model' } } });
    const nested = await stream('/v1/chat/completions', { model: 'stream-vllm', messages: USER });
    for (const chunk of assertCompleteStream(nested, 'stream-vllm', 'chat.completion.chunk').chunks) {
      if (chunk.metadata) assert.deepEqual(chunk.metadata, { model: 'draft-model' });
    }
    fake.once({ text: 'one two', chunkFields: { model: undefined } });
    const without = await stream('/v1/chat/completions', { model: 'stream-vllm', messages: USER });
    assertCompleteStream(without, 'stream-vllm', 'chat.completion.chunk');
  });
});

describe('streamed completions', () => {
  test('through a vllm backend: text chunks, one usage chunk, [DONE]; the backend was asked for usage', async () => {
    const streamed = await stream('/v1/completions', { model: 'stream-vllm', prompt: 'Once upon a time' });
    const { chunks, usage } = assertCompleteStream(streamed, 'stream-vllm', 'text_completion');
    assert.equal(joinedText(chunks), DEFAULT_TEXT);
    assert.deepEqual(
      { prompt: usage.prompt_tokens, completion: usage.completion_tokens },
      { prompt: 11, completion: words(DEFAULT_TEXT).length },
    );
    const request = lastRequest();
    assert.equal(request.path, '/v1/completions');
    assert.deepEqual(request.body.stream_options, { include_usage: true });
  });

  test('through the simulator: max_tokens chunks of text, then usage, then [DONE]', async () => {
    const streamed = await stream('/v1/completions', { model: 'stream-sim', prompt: 'Once upon a time', max_tokens: 7 });
    const { chunks, usage } = assertCompleteStream(streamed, 'stream-sim', 'text_completion');
    assert.equal(joinedText(chunks).split(' ').length, 7);
    assert.equal(usage.completion_tokens, 7);
    assert.ok(usage.prompt_tokens > 0);
  });
});

describe('streamed chat through the simulator', () => {
  test('role chunk, max_tokens content chunks, finish chunk, usage chunk, [DONE]', async () => {
    const streamed = await stream('/v1/chat/completions', {
      model: 'stream-sim',
      messages: USER,
      max_tokens: 5,
      stream_options: { include_usage: true },
    });
    const { chunks, usage } = assertCompleteStream(streamed, 'stream-sim', 'chat.completion.chunk');
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    assert.equal(joinedText(chunks).split(' ').length, 5);
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'length');
    assert.equal(usage.completion_tokens, 5);
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'all chunks of one answer share its id');
  });
});

describe('a backend that breaks off mid-stream', () => {
  for (const [path, body] of [
    ['/v1/chat/completions', { model: 'stream-openai', messages: USER }],
    ['/v1/completions', { model: 'stream-vllm', prompt: 'Once upon a time' }],
  ] as const) {
    test(`${path}: the chunks that came, a usage chunk, then an SSE error event, and no [DONE]`, async () => {
      fake.once({ breakAfterChunks: 2 });
      const streamed = await stream(path, body);
      assert.equal(streamed.status, 200);
      assertSseFraming(streamed.text);
      assertNoInternals(streamed.text);
      const { events } = streamed;
      assert.equal(events.includes('[DONE]'), false, 'an interrupted stream must not look complete');

      const error = events.at(-1);
      assert.deepEqual(Object.keys(error), ['error']);
      assert.deepEqual(Object.keys(error.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(error.error.code, 'upstream_interrupted');
      assert.equal(error.error.type, 'upstream_error');
      assert.match(error.error.message, /broke off/);

      const usageChunk = events.at(-2);
      assert.equal(usageChunk.model, body.model);
      assert.deepEqual(usageChunk.choices, []);
      const content = events.slice(0, -2);
      assert.ok(content.length <= 2, `${content.length} chunks from a backend that sent 2`);
      const expected = words(DEFAULT_TEXT).slice(0, content.length).join('');
      assert.equal(joinedText(content), expected, 'what arrived is the start of the answer');
      for (const chunk of content) assert.equal(chunk.model, body.model);
      // The backend sent no usage: the gateway counts what was produced (one token per word here).
      assert.equal(usageChunk.usage.completion_tokens, content.length);
      assert.deepEqual(printedCosts(streamed.text), [
        exactCost(usageChunk.usage.prompt_tokens, usageChunk.usage.completion_tokens, ...PRICES),
      ]);
    });
  }
});

/** A streamed chat on stream-vllm over a connection of its own (closed after the test); answered 200. */
async function openStream(t: TestContext, signal?: AbortSignal) {
  const client = ownClient(gw);
  t.after(() => client.close());
  const response = await client.fetch('/v1/chat/completions', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ model: 'stream-vllm', messages: USER, stream: true }),
    ...(signal ? { signal } : {}),
  });
  assert.equal(response.status, 200);
  return response;
}

describe('a client that reads slowly', () => {
  test('a long answer it stops reading for a while still arrives whole and in order', async (t) => {
    // About 6 MB of events: more than the sockets between them buffer, so the gateway has to wait
    // for the client, and stop reading from the backend meanwhile, then carry on.
    const text = Array.from({ length: 40_000 }, (_, i) => `w${i}`).join(' ');
    fake.once({ text });
    const response = await openStream(t);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = decoder.decode((await reader.read()).value, { stream: true });
    // The client reads no more until the gateway, its socket full, has made the backend wait.
    await eventually(() => fake.blockedWrites > 0, 'the backend held back while the client does not read');
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    const streamed = {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      text: received,
      events: sseEvents(received),
    };
    const { chunks, usage } = assertCompleteStream(streamed, 'stream-vllm', 'chat.completion.chunk');
    assert.equal(joinedText(chunks), text);
    assert.equal(usage.completion_tokens, 40_000);
  });
});

describe('a client that goes away', () => {
  const LONG_TEXT = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');

  test('mid-stream: the request to the backend is cancelled', async (t) => {
    fake.once({ chunkDelayMs: 100, text: LONG_TEXT });
    const abortedBefore = fake.abortedRequests;
    const controller = new AbortController();
    const response = await openStream(t, controller.signal);
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    assert.match(new TextDecoder().decode(first.value), /^data: \{/);
    assert.equal(fake.openRequests, 1, 'the backend is still streaming');
    controller.abort();
    await reader.read().catch(() => undefined);

    const aborted = await waitUntil(
      () => fake.abortedRequests,
      (n) => n > abortedBefore,
    );
    assert.equal(aborted, abortedBefore + 1, 'the backend saw its request aborted');
    assert.equal(
      await waitUntil(
        () => fake.openRequests,
        (n) => n === 0,
      ),
      0,
    );
  });

  test('while a non-streamed answer is pending: the request to the backend is cancelled', async (t) => {
    fake.once({ delayMs: 2000 });
    const abortedBefore = fake.abortedRequests;
    const sentBefore = fake.requests.length;
    const controller = new AbortController();
    const client = ownClient(gw);
    t.after(() => client.close());
    const pending = client
      .fetch('/v1/chat/completions', {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ model: 'stream-vllm', messages: USER }),
        signal: controller.signal,
      })
      .catch((error: Error) => error);
    assert.equal(
      await waitUntil(
        () => fake.requests.length,
        (n) => n > sentBefore,
      ),
      sentBefore + 1,
      'the request reached the backend',
    );
    controller.abort();
    assert.equal(((await pending) as Error).name, 'AbortError');
    assert.equal(
      await waitUntil(
        () => fake.abortedRequests,
        (n) => n > abortedBefore,
      ),
      abortedBefore + 1,
      'the backend saw its request aborted',
    );
  });
});

describe('a backend whose stream the gateway does not relay whole', () => {
  /** A gateway with one chat router on `url`, whose stream events may be at most 1 MiB. */
  async function boundedGateway(t: TestContext, url: string): Promise<TestGateway> {
    const args = { api_url: url, api_key: 'sk-bounded-key', timeout: 10 };
    const bounded = await bed.gateway(
      {
        models: [
          {
            id: 'bounded',
            type: 'text-generation',
            costs: { prompt_tokens: PRICES[0], completion_tokens: PRICES[1] },
            providers: [{ model: 'gpt-4o-mini', type: 'openai', args }],
          },
        ],
      },
      { settings: { maxUpstreamEventBytes: 1024 * 1024 } },
    );
    t.after(() => bounded.close());
    return bounded;
  }

  async function streamFrom(target: TestGateway): Promise<Streamed> {
    const response = await gatewayFetch(target, '/v1/chat/completions', {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ model: 'bounded', messages: USER, stream: true }),
    });
    const text = await response.text();
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, events: sseEvents(text) };
  }

  test('an event larger than --max-upstream-event-bytes ends the stream: the chunk before it, usage, an error event, and the connection closed', async (t) => {
    const huge = await startFakeOpenAI();
    t.after(() => huge.close());
    huge.behave({ hugeEventBytes: 4 * 1024 * 1024 });
    const bounded = await boundedGateway(t, huge.url);

    // text() resolves only once the gateway has ended the response.
    const streamed = await streamFrom(bounded);

    assert.equal(streamed.status, 200);
    assertSseFraming(streamed.text);
    const { events } = streamed;
    assert.equal(events.length, 3, `events: ${streamed.text.slice(0, 500)}`);
    assert.equal(joinedText([events[0]]), words(DEFAULT_TEXT)[0]);
    assert.deepEqual(events[1].choices, []);
    assert.equal(events[1].usage.completion_tokens, 1, 'the usage counts what reached the client');
    assert.deepEqual(events[2], {
      error: {
        message:
          'The provider broke off the answer: the backend sent a stream event larger than 1048576 characters (--max-upstream-event-bytes)',
        type: 'upstream_error',
        param: null,
        code: 'upstream_interrupted',
      },
    });
    assert.equal(
      await waitUntil(
        () => huge.abortedRequests,
        (n) => n === 1,
      ),
      1,
      'the gateway stopped reading the backend',
    );
  });

  test('an error event that echoes the provider key reaches the client with the key masked', async (t) => {
    const echoing = await startFakeServer(async (request, _behaviour, response) => {
      response.startStream('text/event-stream');
      await response.chunk(
        `data: ${JSON.stringify({ error: { message: `bad credentials ${String(request.headers.authorization)}` } })}\n\n`,
      );
      response.end();
    });
    t.after(() => echoing.close());
    const bounded = await boundedGateway(t, echoing.url);

    const streamed = await streamFrom(bounded);

    assert.equal(echoing.requests[0]?.headers.authorization, 'Bearer sk-bounded-key');
    assert.ok(!streamed.text.includes('sk-bounded-key'), streamed.text);
    assert.equal(
      streamed.events.at(-1).error.message,
      'The provider broke off the answer: the backend reported an error mid-stream: bad credentials Bearer ***',
    );
  });
});
