// Adapters that build the usage from a backend's own format (Anthropic's Messages, OpenAI's
// Responses) keep a count the backend left out missing, never a made-up 0: readUsage then sees
// no completion count (the gateway counts the answer, usage-block.ts) or no prompt count (the
// gateway counts both), whole and streamed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropic } from '../../../gateway/providers/anthropic.ts';
import { forwardResponses } from '../../../gateway/providers/openai-responses.ts';
import { readUsage, type JsonObject } from '../../../gateway/wire/openai-wire.ts';
import type { ForwardRequest, ForwardResult } from '../../../gateway/providers/adapter.ts';
import type { UpstreamHttp } from '../../../gateway/providers/upstream-http.ts';

const timeouts = { connectMs: 1000, firstByteMs: 1000, betweenChunksMs: 1000 } as ForwardRequest['timeouts'];

function request(stream: boolean, native?: ForwardRequest['native']): ForwardRequest {
  const body = { model: 'm', messages: [{ role: 'user', content: 'Hello' }], stream };
  return { endpoint: 'chat', body, stream, signal: new AbortController().signal, timeouts, native };
}

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

/** The usage a result reports, as the gateway reads it: of the body, or of the stream's last chunk that has one. */
async function reported(result: ForwardResult) {
  if (result.kind === 'body') return { usage: readUsage(result.body.usage), raw: result.body.usage };
  assert.equal(result.kind, 'stream');
  const chunks: JsonObject[] = [];
  await new Promise<void>((resolve, reject) =>
    result.chunks.start({ chunk: (chunk) => chunks.push(chunk), flush() {}, end: resolve, fail: reject }),
  );
  const raw = chunks.findLast((chunk) => chunk.usage !== undefined)?.usage;
  return { usage: readUsage(raw), raw };
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
    assert.deepEqual(full.raw, { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 });
    const none = await reported(await anthropic.forward(provider, request(false), http(message({ output_tokens: 5 }))));
    assert.equal(none.raw, undefined, 'no input tokens: no usage, the gateway counts');
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
    assert.deepEqual(full.raw, { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 });
    const noInput = await reported(
      await anthropic.forward(provider, request(true), http(undefined, events(undefined, { output_tokens: 5 }))),
    );
    assert.equal(noInput.usage, undefined, 'not a prompt of 0');
  });
});

describe("OpenAI's Responses (passed through)", () => {
  const native = { api: 'openai-responses', body: { model: 'm', input: 'Hello' } } as const;
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
      request(stream, native),
      {} as never,
      http(response(usage), [{ type: 'response.completed', response: response(usage) }]),
    );

  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'whole'}: no usage is none, and input without output tokens a missing completion`, async () => {
      assert.equal((await reported(await forward(stream, undefined))).raw, undefined);
      const missing = await reported(await forward(stream, { input_tokens: 11 }));
      assert.deepEqual([missing.usage?.prompt_tokens, missing.usage?.completion_tokens], [11, undefined]);
      const full = await reported(await forward(stream, { input_tokens: 11, output_tokens: 5 }));
      assert.deepEqual(full.raw, { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 });
    });
  }
});
