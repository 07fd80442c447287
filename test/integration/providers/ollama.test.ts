// The Ollama adapter against a fake Ollama over real loopback HTTP: what the backend receives
// after the translation, and the OpenAI objects, chunks and errors the gateway gets back.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ollama } from '../../../gateway/providers/ollama.ts';
import type { ForwardResult } from '../../../gateway/providers/adapter.ts';
import type { JsonObject } from '../../../gateway/wire/openai-wire.ts';
import { UpstreamHttp } from '../../../gateway/providers/upstream-http.ts';
import { DEFAULT_UPSTREAM_LIMITS } from '../../../gateway/providers/upstream-limits.ts';
import { UpstreamError } from '../../../gateway/providers/upstream-error.ts';
import type { Endpoint } from '../../../core/resources/kinds.ts';
import { ProviderSpec, type ProviderSpecOf } from '../../../core/resources/provider.ts';
import { startFakeServer, type FakeBackend } from '../../support/fake-server.ts';
import { waitUntil } from '../http/helpers.ts';
import { CREATED_AT, DEFAULT_TEXT, EMBED_TOKENS, PROMPT_TOKENS, startFakeOllama } from '../../support/fake-ollama.ts';
import { readChunks } from '../../support/read-chunks.ts';
import { DEFAULT_TIMEOUTS, timeoutsOf } from '../../../gateway/providers/upstream-timeouts.ts';
import { poll } from '../../support/eventually.ts';

const MODEL = 'llama3.2';
const CREATED = Math.floor(Date.parse(CREATED_AT) / 1000);
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

let fake: FakeBackend;
let http: UpstreamHttp;

before(async () => {
  fake = await startFakeOllama();
  http = new UpstreamHttp();
});

after(async () => {
  await http.close();
  await fake.close();
});

function spec(extra: Record<string, unknown> = {}): ProviderSpecOf<'ollama'> {
  const input = { id: 'local-llama', router: 'llama', type: 'ollama', url: fake.url, model_name: MODEL, ...extra };
  return ProviderSpec.parse(input) as ProviderSpecOf<'ollama'>;
}

interface Call {
  stream?: boolean;
  provider?: ProviderSpecOf<'ollama'>;
}

function forward(endpoint: Endpoint, body: JsonObject, call: Call = {}): Promise<ForwardResult> {
  const provider = call.provider ?? spec();
  const request = {
    endpoint,
    body: { model: MODEL, ...body },
    stream: call.stream ?? false,
    signal: new AbortController().signal,
    // As the forwarder gives them: the provider's own, else the gateway's defaults.
    timeouts: timeoutsOf(provider, DEFAULT_TIMEOUTS),
  };
  return ollama.forward(provider, request, http);
}

async function answer(endpoint: Endpoint, body: JsonObject, call: Call = {}): Promise<JsonObject> {
  const result = await forward(endpoint, body, call);
  assert.equal(result.kind, 'body');
  return result.body;
}

async function chunks(endpoint: Endpoint, body: JsonObject, call: Call = {}): Promise<JsonObject[]> {
  const result = await forward(endpoint, body, { ...call, stream: true });
  assert.equal(result.kind, 'stream');
  return readChunks(result.chunks);
}

function received() {
  const request = fake.requests.at(-1);
  assert.ok(request, 'the fake received no request');
  return request;
}

function upstreamError(check: (error: UpstreamError) => void): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof UpstreamError, `expected an UpstreamError, got ${String(error)}`);
    check(error);
    return true;
  };
}

const USER = [{ role: 'user', content: 'Say hello' }];
const WORD_COUNT = DEFAULT_TEXT.split(' ').length;

describe('ollama chat', () => {
  test('a non-streamed answer becomes a chat.completion with usage', async () => {
    const body = await answer('chat', { messages: USER });
    assert.match(String(body.id), /^chatcmpl-/);
    assert.deepEqual(
      { ...body, id: 'x' },
      {
        id: 'x',
        object: 'chat.completion',
        created: CREATED,
        model: MODEL,
        choices: [{ index: 0, message: { role: 'assistant', content: DEFAULT_TEXT }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: WORD_COUNT, total_tokens: PROMPT_TOKENS + WORD_COUNT },
      },
    );
    const request = received();
    assert.equal(request.path, '/api/chat');
    assert.deepEqual(request.body, { model: MODEL, messages: USER, stream: false, options: {} });
  });

  test('without token counts the answer has no usage', async () => {
    fake.once({ omitUsage: true });
    const body = await answer('chat', { messages: USER });
    assert.equal('usage' in body, false);
  });

  test('an answer cut by max_tokens finishes with length', async () => {
    const body = await answer('chat', { messages: USER, max_tokens: 2 });
    const [choice] = body.choices as JsonObject[];
    assert.deepEqual(choice?.message, { role: 'assistant', content: 'Hello from' });
    assert.equal(choice?.finish_reason, 'length');
    assert.deepEqual(body.usage, { prompt_tokens: PROMPT_TOKENS, completion_tokens: 2, total_tokens: PROMPT_TOKENS + 2 });
  });

  const mappings: { name: string; body: JsonObject; options: JsonObject; format?: unknown }[] = [
    { name: 'max_tokens', body: { max_tokens: 64 }, options: { num_predict: 64 } },
    { name: 'max_completion_tokens over max_tokens', body: { max_tokens: 64, max_completion_tokens: 32 }, options: { num_predict: 32 } },
    {
      name: 'sampling fields',
      body: { temperature: 0.2, top_p: 0.9, seed: 7, frequency_penalty: 0.5, presence_penalty: 0.25 },
      options: { temperature: 0.2, top_p: 0.9, seed: 7, frequency_penalty: 0.5, presence_penalty: 0.25 },
    },
    { name: 'null fields', body: { temperature: null, max_tokens: null, stop: null }, options: {} },
    { name: 'a stop string', body: { stop: 'END' }, options: { stop: ['END'] } },
    { name: 'stop strings', body: { stop: ['END', '###'] }, options: { stop: ['END', '###'] } },
    { name: 'json_object', body: { response_format: { type: 'json_object' } }, options: {}, format: 'json' },
    {
      name: 'json_schema',
      body: {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } } } },
        },
      },
      options: {},
      format: { type: 'object', properties: { name: { type: 'string' } } },
    },
    { name: 'text format', body: { response_format: { type: 'text' } }, options: {} },
  ];
  for (const mapping of mappings) {
    test(`maps ${mapping.name} into Ollama's request`, async () => {
      await answer('chat', { messages: USER, ...mapping.body });
      const sent = received().body;
      assert.deepEqual(sent.options, mapping.options);
      assert.deepEqual(sent.format, mapping.format);
    });
  }

  test('content parts become text and base64 images; developer becomes system', async () => {
    const messages = [
      { role: 'developer', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } },
          { type: 'text', text: 'this picture?' },
        ],
      },
      { role: 'assistant', content: 'A dot.' },
      { role: 'user', content: 'Sure?' },
    ];
    await answer('chat', { messages });
    assert.deepEqual(received().body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is in\nthis picture?', images: [PNG] },
      { role: 'assistant', content: 'A dot.' },
      { role: 'user', content: 'Sure?' },
    ]);
  });

  const refusals: { name: string; part: JsonObject; message: RegExp }[] = [
    {
      name: 'an https image link',
      part: { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      message: /Ollama accepts only data: image URLs/,
    },
    {
      name: 'a data URL that is not base64',
      part: { type: 'image_url', image_url: { url: 'data:image/svg+xml,<svg/>' } },
      message: /Ollama accepts only data: image URLs/,
    },
    {
      name: 'an audio part',
      part: { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
      message: /only text and image parts/,
    },
  ];
  for (const refusal of refusals) {
    test(`refuses ${refusal.name} with a 400 before calling Ollama`, async () => {
      const sent = fake.requests.length;
      const messages = [{ role: 'user', content: [{ type: 'text', text: 'Look' }, refusal.part] }];
      await assert.rejects(
        answer('chat', { messages }),
        upstreamError((error) => {
          assert.equal(error.failure, 'status');
          assert.equal(error.status, 400);
          assert.equal(error.retryable, false);
          assert.match(error.message, refusal.message);
        }),
      );
      assert.equal(fake.requests.length, sent);
    });
  }
});

describe('ollama chat streaming', () => {
  test('NDJSON lines become OpenAI chunks: role, text, finish, usage', async () => {
    const all = await chunks('chat', { messages: USER });
    assert.equal(received().body.stream, true);
    const id = all[0]?.id;
    assert.match(String(id), /^chatcmpl-/);
    for (const chunk of all) {
      assert.equal(chunk.id, id);
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.created, CREATED);
      assert.equal(chunk.model, MODEL);
    }
    assert.deepEqual(
      all.map((chunk) => chunk.choices),
      [
        [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }],
        ...DEFAULT_TEXT.split(/(?= )/).map((piece) => [{ index: 0, delta: { content: piece }, finish_reason: null, logprobs: null }]),
        [{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }],
        [],
      ],
    );
    assert.deepEqual(all.at(-1)?.usage, {
      prompt_tokens: PROMPT_TOKENS,
      completion_tokens: WORD_COUNT,
      total_tokens: PROMPT_TOKENS + WORD_COUNT,
    });
  });

  test('a stream without token counts ends at the finish chunk', async () => {
    fake.once({ omitUsage: true, text: 'Short answer' });
    const all = await chunks('chat', { messages: USER });
    assert.equal(all.length, 4);
    assert.deepEqual((all.at(-1)!.choices as JsonObject[])[0]?.finish_reason, 'stop');
    assert.equal(
      all.some((chunk) => 'usage' in chunk),
      false,
    );
  });

  test('a stream cut by max_tokens finishes with length', async () => {
    const all = await chunks('chat', { messages: USER, max_tokens: 1 });
    const finishes = all.flatMap((chunk) => (chunk.choices as JsonObject[]).map((choice) => choice.finish_reason));
    assert.deepEqual(finishes, [null, null, 'length']);
    assert.deepEqual(all.at(-1)?.usage, { prompt_tokens: PROMPT_TOKENS, completion_tokens: 1, total_tokens: PROMPT_TOKENS + 1 });
  });

  test('a connection cut mid-stream throws after the chunks that arrived', async () => {
    fake.once({ breakAfterChunks: 2, chunkDelayMs: 5 });
    const result = await forward('chat', { messages: USER }, { stream: true });
    assert.equal(result.kind, 'stream');
    const seen: JsonObject[] = [];
    await assert.rejects(
      readChunks(result.chunks, seen),
      upstreamError((error) => {
        assert.ok(error.failure === 'protocol' || error.failure === 'connect', `failure was ${error.failure}`);
        assert.equal(error.retryable, true);
      }),
    );
    // How many of the lines sent before the cut get through is up to the network; what did
    // arrive must be the answer's start, never its end.
    const full = [{ role: 'assistant', content: '' }, ...DEFAULT_TEXT.split(/(?= )/).map((piece) => ({ content: piece }))];
    const deltas = seen.map((chunk) => (chunk.choices as JsonObject[])[0]?.delta);
    assert.ok(deltas.length <= 3, `saw ${deltas.length} chunks from two lines`);
    assert.deepEqual(deltas, full.slice(0, deltas.length));
  });
});

describe('ollama streams that end badly', () => {
  // A backend that closes the stream cleanly, without the done line, or reports an error in it.
  let lines: object[] = [];
  let odd: FakeBackend;

  before(async () => {
    odd = await startFakeServer(async (_request, _behaviour, response) => {
      response.startStream('application/x-ndjson');
      for (const line of lines) await response.chunk(`${JSON.stringify(line)}\n`);
      response.end();
    });
  });

  after(() => odd.close());

  const cases: { name: string; lines: object[]; failure: string; status?: number }[] = [
    {
      name: 'a stream that ends without done: true',
      lines: [{ model: MODEL, created_at: CREATED_AT, message: { role: 'assistant', content: 'Hel' }, done: false }],
      failure: 'protocol',
    },
    { name: 'an empty stream', lines: [], failure: 'protocol' },
    {
      name: 'an error line mid-stream',
      lines: [
        { model: MODEL, created_at: CREATED_AT, message: { role: 'assistant', content: 'Hel' }, done: false },
        { error: 'model runner crashed' },
      ],
      failure: 'status',
      status: 502,
    },
  ];
  for (const item of cases) {
    test(`${item.name} throws a retryable ${item.failure} error`, async () => {
      lines = item.lines;
      await assert.rejects(
        chunks('chat', { messages: USER }, { provider: spec({ url: odd.url }) }),
        upstreamError((error) => {
          assert.equal(error.failure, item.failure);
          assert.equal(error.status, item.status);
          assert.equal(error.retryable, true);
        }),
      );
    });
  }
});

describe('ollama stream lines past the bound', () => {
  test('a line longer than maxEventBytes throws a retryable protocol error and the request is aborted', async (t) => {
    // 4 MiB without a newline against a 1 MiB bound: the fake writes it in pieces.
    const endless = await startFakeServer(async (_request, _behaviour, response) => {
      response.startStream('application/x-ndjson');
      await response.chunk(
        `${JSON.stringify({ model: MODEL, created_at: CREATED_AT, message: { role: 'assistant', content: 'Hel' }, done: false })}\n{"pad":"`,
      );
      if (await response.filler(4 * 1024 * 1024)) response.end();
    });
    const bounded = new UpstreamHttp({ ...DEFAULT_UPSTREAM_LIMITS, maxBodyBytes: 64 * 1024 * 1024, maxEventBytes: 1024 * 1024 });
    t.after(async () => {
      await bounded.close();
      await endless.close();
    });
    const request = {
      endpoint: 'chat' as const,
      body: { model: MODEL, messages: USER },
      stream: true,
      signal: new AbortController().signal,
      timeouts: timeoutsOf(spec(), DEFAULT_TIMEOUTS),
    };
    const result = await ollama.forward(spec({ url: endless.url }), request, bounded);
    assert.equal(result.kind, 'stream');
    const seen: JsonObject[] = [];
    await assert.rejects(
      readChunks(result.chunks, seen),
      upstreamError((error) => {
        assert.equal(error.failure, 'protocol');
        assert.equal(error.retryable, true);
        assert.equal(error.message, 'the backend sent a stream line larger than 1048576 characters (--max-upstream-event-bytes)');
      }),
    );
    assert.deepEqual(
      seen.map((chunk) => (chunk.choices as JsonObject[])[0]?.delta),
      [{ role: 'assistant', content: '' }, { content: 'Hel' }],
    );
    assert.equal(
      await waitUntil(
        () => endless.abortedRequests,
        (n) => n === 1,
      ),
      1,
      'the request to the backend was aborted',
    );
  });
});

describe('ollama completions', () => {
  test('a prompt goes to /api/generate and comes back as a text_completion', async () => {
    const body = await answer('completions', { prompt: 'Once upon a time', max_tokens: 50, temperature: 0, suffix: 'The end.' });
    assert.match(String(body.id), /^cmpl-/);
    assert.deepEqual(
      { ...body, id: 'x' },
      {
        id: 'x',
        object: 'text_completion',
        created: CREATED,
        model: MODEL,
        choices: [{ index: 0, text: DEFAULT_TEXT, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: WORD_COUNT, total_tokens: PROMPT_TOKENS + WORD_COUNT },
      },
    );
    const request = received();
    assert.equal(request.path, '/api/generate');
    assert.deepEqual(request.body, {
      model: MODEL,
      prompt: 'Once upon a time',
      suffix: 'The end.',
      stream: false,
      options: { num_predict: 50, temperature: 0 },
    });
  });

  test('a single prompt in an array is sent as a string', async () => {
    await answer('completions', { prompt: ['Once upon a time'] });
    assert.equal(received().body.prompt, 'Once upon a time');
  });

  test('a stream becomes text_completion chunks, then usage', async () => {
    fake.once({ text: 'Two words' });
    const all = await chunks('completions', { prompt: 'Say two words' });
    assert.equal(received().body.stream, true);
    assert.ok(all.every((chunk) => chunk.object === 'text_completion' && chunk.id === all[0]?.id));
    assert.deepEqual(
      all.map((chunk) => chunk.choices),
      [
        [{ index: 0, text: 'Two', finish_reason: null, logprobs: null }],
        [{ index: 0, text: ' words', finish_reason: null, logprobs: null }],
        [{ index: 0, text: '', finish_reason: 'stop', logprobs: null }],
        [],
      ],
    );
    assert.deepEqual(all.at(-1)?.usage, { prompt_tokens: PROMPT_TOKENS, completion_tokens: 2, total_tokens: PROMPT_TOKENS + 2 });
  });

  const refusals: { name: string; prompt: unknown; message: RegExp }[] = [
    { name: 'several prompts', prompt: ['First', 'Second'], message: /one prompt at a time/ },
    { name: 'token ids', prompt: [1, 2, 3], message: /not token ids/ },
  ];
  for (const refusal of refusals) {
    test(`refuses ${refusal.name} with a 400 before calling Ollama`, async () => {
      const sent = fake.requests.length;
      await assert.rejects(
        answer('completions', { prompt: refusal.prompt }),
        upstreamError((error) => {
          assert.equal(error.status, 400);
          assert.equal(error.retryable, false);
          assert.match(error.message, refusal.message);
        }),
      );
      assert.equal(fake.requests.length, sent);
    });
  }
});

describe('ollama embeddings', () => {
  test('inputs go to /api/embed and come back as an OpenAI list with usage', async () => {
    const body = await answer('embeddings', { input: ['first', 'second'], dimensions: 256 });
    assert.deepEqual(body, {
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, 0.25, -0.125] },
        { object: 'embedding', index: 1, embedding: [1.5, 0.25, -0.125] },
      ],
      model: MODEL,
      usage: { prompt_tokens: EMBED_TOKENS, total_tokens: EMBED_TOKENS },
    });
    const request = received();
    assert.equal(request.path, '/api/embed');
    assert.deepEqual(request.body, { model: MODEL, input: ['first', 'second'], dimensions: 256 });
  });

  test('a single string stays a string and, uncounted, leaves usage out', async () => {
    fake.once({ omitUsage: true });
    const body = await answer('embeddings', { input: 'only one' });
    assert.equal(received().body.input, 'only one');
    assert.equal((body.data as JsonObject[]).length, 1);
    assert.equal('usage' in body, false);
  });

  test('encoding_format base64 returns float32 vectors in base64', async () => {
    const body = await answer('embeddings', { input: 'packed', encoding_format: 'base64' });
    const encoded = String((body.data as JsonObject[])[0]?.embedding);
    const bytes = Buffer.from(encoded, 'base64');
    assert.deepEqual(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)), [0.5, 0.25, -0.125]);
  });

  test('refuses token ids with a 400 before calling Ollama', async () => {
    const sent = fake.requests.length;
    await assert.rejects(
      answer('embeddings', { input: [[1, 2, 3]] }),
      upstreamError((error) => assert.equal(error.status, 400)),
    );
    assert.equal(fake.requests.length, sent);
  });
});

describe('ollama failures and authentication', () => {
  const statuses = [
    { status: 500, retryable: true },
    { status: 503, retryable: true },
    { status: 429, retryable: true },
    { status: 404, retryable: true },
    { status: 400, retryable: false },
  ];
  for (const { status, retryable } of statuses) {
    for (const stream of [false, true]) {
      test(`an HTTP ${status} ${stream ? 'before a stream' : 'answer'} is ${retryable ? '' : 'not '}retryable`, async () => {
        fake.once({ status });
        const call = stream ? chunks('chat', { messages: USER }) : answer('chat', { messages: USER });
        await assert.rejects(
          call,
          upstreamError((error) => {
            assert.equal(error.failure, 'status');
            assert.equal(error.status, status);
            assert.equal(error.retryable, retryable);
            assert.match(error.message, new RegExp(`fake failure ${status}`));
          }),
        );
      });
    }
  }

  test('a backend slower than the provider timeout gives a timeout', async () => {
    fake.once({ delayMs: 1000 });
    await assert.rejects(
      answer('chat', { messages: USER }, { provider: spec({ timeout: 0.2 }) }),
      upstreamError((error) => {
        assert.equal(error.failure, 'timeout');
        assert.equal(error.retryable, true);
      }),
    );
  });

  test('a stream that Ollama breaks off gives the lines before it, then a failure', async () => {
    fake.once({ breakAfterChunks: 2, text: 'one two three four five' });
    const result = await forward('chat', { messages: USER }, { stream: true });
    assert.equal(result.kind, 'stream');
    const received: JsonObject[] = [];
    await assert.rejects(
      readChunks(result.chunks, received),
      upstreamError((error) => assert.notEqual(error.failure, 'aborted')),
    );
    const text = received.map((chunk) => ((chunk.choices as JsonObject[])[0]?.delta as JsonObject | undefined)?.content ?? '').join('');
    assert.equal(text, 'one two', 'the two lines Ollama sent before it broke off');
  });

  test('a stream whose reader is cancelled cancels the request to Ollama', async () => {
    fake.once({ chunkDelayMs: 100, text: Array.from({ length: 50 }, (_, i) => `word${i}`).join(' ') });
    const abortedBefore = fake.abortedRequests;
    const controller = new AbortController();
    const result = await ollama.forward(
      spec(),
      {
        endpoint: 'chat',
        body: { model: MODEL, messages: USER },
        stream: true,
        signal: controller.signal,
        timeouts: timeoutsOf(spec(), DEFAULT_TIMEOUTS),
      },
      http,
    );
    assert.equal(result.kind, 'stream');
    let received = 0;
    await assert.rejects(
      readChunks(result.chunks, [], () => {
        if (++received === 2) controller.abort(); // the opening chunk, then the first word
      }),
      upstreamError((error) => assert.equal(error.failure, 'aborted')),
    );
    assert.ok(received < 50, `${received} chunks: the stream stopped early`);
    await poll(
      () => fake.abortedRequests,
      (aborted) => aborted !== abortedBefore,
    );
    assert.equal(fake.abortedRequests, abortedBefore + 1, 'Ollama saw its request aborted');
  });

  test('a backend that is not listening gives a connect failure', async () => {
    const gone = await startFakeOllama();
    await gone.close();
    await assert.rejects(
      answer('chat', { messages: USER }, { provider: spec({ url: gone.url }) }),
      upstreamError((error) => {
        assert.equal(error.failure, 'connect');
        assert.equal(error.retryable, true);
      }),
    );
  });

  const calls: { endpoint: Endpoint; body: JsonObject }[] = [
    { endpoint: 'chat', body: { messages: USER } },
    { endpoint: 'completions', body: { prompt: 'Hi' } },
    { endpoint: 'embeddings', body: { input: 'Hi' } },
  ];
  for (const { endpoint, body } of calls) {
    test(`${endpoint} sends the key as a Bearer token only when one is set`, async () => {
      await answer(endpoint, body, { provider: spec({ key: 'proxy-secret' }) });
      assert.equal(received().headers.authorization, 'Bearer proxy-secret');
      await answer(endpoint, body);
      assert.equal(received().headers.authorization, undefined);
    });
  }
});
