// Answers in a backend's own format (Anthropic's Messages, OpenAI's Responses), as the adapter
// hands them over and the pair's translator reads their usage: a count the backend left out stays
// missing, never a made-up 0: no completion count (the gateway counts the answer,
// usage-block.ts) or no prompt count (the gateway counts both), whole and streamed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropic } from '../../../gateway/providers/anthropic.ts';
import { forwardResponses } from '../../../gateway/providers/openai-responses.ts';
import type { JsonObject, TokenUsage } from '../../../gateway/wire/openai-wire.ts';
import type { Api } from '../../../gateway/wire/apis.ts';
import type { ForwardRequest, ForwardResult } from '../../../gateway/providers/adapter.ts';
import { translatorFor } from '../../../gateway/translators/registry.ts';
import type { Exchange } from '../../../gateway/translators/translator.ts';
import type { UpstreamHttp } from '../../../gateway/providers/upstream-http.ts';

const timeouts = { connectMs: 1000, firstByteMs: 1000, betweenChunksMs: 1000 } as ForwardRequest['timeouts'];

function request(stream: boolean, passThrough?: ForwardRequest['passThrough']): ForwardRequest {
  const body = { model: 'm', messages: [{ role: 'user', content: 'Hello' }], stream };
  return { endpoint: 'chat', body, stream, signal: new AbortController().signal, timeouts, passThrough };
}

const echo = { id: 'resp_1', model: 'm', instructions: null, metadata: {}, previousResponseId: null, store: false, maxOutputTokens: null };
const exchange: Exchange = { model: 'router', endpoint: 'chat', earlier: [], response: echo };

/** An UpstreamHttp that answers with `answer`, or streams `events`. */
function http(answer: unknown, events: JsonObject[] = []): UpstreamHttp {
  return {
    postJson: async () => answer,
    postSse: async () =>
      (async function* () {
        yield* events;
      })(),
  } as unknown as UpstreamHttp;
}

/** The usage a result reports to a caller of `client`'s API, as its translator reads it: of the body, or of the stream's events. */
async function reported(result: ForwardResult, client: Api = 'openai'): Promise<{ usage: TokenUsage | undefined }> {
  assert.notEqual(result.kind, 'text');
  if (result.kind === 'text') throw new Error('a text answer');
  const translator = translatorFor(client, result.api ?? 'openai');
  if (result.kind === 'body') return { usage: translator.answer(result.body, exchange).usage };
  let usage: TokenUsage | undefined;
  const translation = translator.stream(exchange, { text() {}, usage: (read) => (usage = read ?? usage) });
  await new Promise<void>((resolve, reject) =>
    result.chunks.start({ chunk: (event, json) => translation.event(event, json), flush() {}, end: resolve, fail: reject }),
  );
  return { usage };
}

describe('Anthropic', () => {
  const provider = { type: 'anthropic', url: 'http://anthropic.invalid' } as never;
  const message = (usage: unknown) => ({
    id: 'msg',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: 'Hello there' }],
    stop_reason: 'end_turn',
    ...(usage === undefined ? {} : { usage }),
  });
  const events = (start: unknown, delta: unknown) => [
    { type: 'message_start', message: { ...message(undefined), content: [], ...(start === undefined ? {} : { usage: start }) } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello there' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, ...(delta === undefined ? {} : { usage: delta }) },
    { type: 'message_stop' },
  ];

  test('whole: input without output tokens is a prompt count and a missing completion', async () => {
    const got = await reported(await anthropic.forward(provider, request(false), http(message({ input_tokens: 13 }))));
    assert.deepEqual([got.usage?.prompt_tokens, got.usage?.completion_tokens], [13, undefined]);
    const full = await reported(await anthropic.forward(provider, request(false), http(message({ input_tokens: 13, output_tokens: 5 }))));
    assert.deepEqual(full.usage, { prompt_tokens: 13, completion_tokens: 5 });
    const none = await reported(await anthropic.forward(provider, request(false), http(message({ output_tokens: 5 }))));
    assert.equal(none.usage, undefined, 'no input tokens: no usage, the gateway counts');
  });

  test('streamed: output tokens given nowhere stay missing; no input tokens is no prompt count', async () => {
    const missing = await reported(
      await anthropic.forward(provider, request(true), http(undefined, events({ input_tokens: 13 }, undefined))),
    );
    assert.deepEqual([missing.usage?.prompt_tokens, missing.usage?.completion_tokens], [13, undefined]);
    const full = await reported(
      await anthropic.forward(
        provider,
        request(true),
        http(undefined, events({ input_tokens: 13, output_tokens: 1 }, { output_tokens: 5 })),
      ),
    );
    assert.deepEqual(full.usage, { prompt_tokens: 13, completion_tokens: 5 });
    const noInput = await reported(
      await anthropic.forward(provider, request(true), http(undefined, events(undefined, { output_tokens: 5 }))),
    );
    assert.equal(noInput.usage, undefined, 'not a prompt of 0');
  });
});

describe("OpenAI's Responses (passed through)", () => {
  const passThrough = { api: 'openai-responses', body: { model: 'm', input: 'Hello' } } as const;
  const response = (usage: unknown) => ({
    id: 'resp',
    object: 'response',
    status: 'completed',
    output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello there' }] }],
    ...(usage === undefined ? {} : { usage }),
  });
  const forward = (stream: boolean, usage: unknown) =>
    forwardResponses(
      'http://openai.invalid',
      request(stream, passThrough),
      {} as never,
      http(response(usage), [{ type: 'response.completed', response: response(usage) }]),
    );

  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'whole'}: no usage is none, and input without output tokens a missing completion`, async () => {
      assert.equal((await reported(await forward(stream, undefined), 'openai-responses')).usage, undefined);
      const missing = await reported(await forward(stream, { input_tokens: 11 }), 'openai-responses');
      assert.deepEqual([missing.usage?.prompt_tokens, missing.usage?.completion_tokens], [11, undefined]);
      const full = await reported(await forward(stream, { input_tokens: 11, output_tokens: 5 }), 'openai-responses');
      assert.deepEqual(full.usage, { prompt_tokens: 11, completion_tokens: 5 });
    });
  }
});
