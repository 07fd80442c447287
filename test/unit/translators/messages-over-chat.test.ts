// How Anthropic's Messages API maps onto chat completions and back, field by field, where the
// SDK test does not look: stop sequences, tool choice, errors from tools, a stop sequence the
// backend names, a length stop, broken tool arguments.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MessagesRequest } from '../../../gateway/wire/anthropic-messages.ts';
import { MessageStream, messagesToChat as toChat, toMessage } from '../../../gateway/translators/messages-over-chat.ts';
import { errors } from '../../../gateway/api/api-error.ts';
import { MESSAGES_OVER_CHAT } from '../../../gateway/translators/messages-over-chat.ts';
import { goldenTests } from './golden.ts';
import { BROKEN, CHAT_ANSWER, CHAT_CHUNKS, CHAT_TOOL_ANSWER, CHAT_TOOL_CHUNKS, EXCHANGE, MESSAGES_REQUEST } from './wire-samples.ts';

const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, cost: 0.5, carbon: { kWh: 0, kgCO2eq: 0 } } as never;
const request = (fields: object) =>
  MessagesRequest.parse({ model: 'm', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }], ...fields });

describe('a Messages request as chat completions', () => {
  test('sampling, stop sequences and the metadata user carry over', () => {
    const chat = toChat(request({ stop_sequences: ['END'], temperature: 0.2, top_p: 0.9, top_k: 40, metadata: { user_id: 'u-1' } }));
    assert.deepEqual(
      {
        stop: chat.stop,
        temperature: chat.temperature,
        top_p: chat.top_p,
        top_k: chat.top_k,
        user: chat.user,
        max_tokens: chat.max_tokens,
      },
      { stop: ['END'], temperature: 0.2, top_p: 0.9, top_k: 40, user: 'u-1', max_tokens: 9 },
    );
  });

  test('tool_choice: auto, any, none and one tool; parallel use turned off', () => {
    const choice = (tool_choice: object) => toChat(request({ tool_choice, tools: [{ name: 't', input_schema: {} }] }));
    assert.equal(choice({ type: 'auto' }).tool_choice, 'auto');
    assert.equal(choice({ type: 'any' }).tool_choice, 'required');
    assert.equal(choice({ type: 'none' }).tool_choice, 'none');
    const one = choice({ type: 'tool', name: 't', disable_parallel_tool_use: true });
    assert.deepEqual(one.tool_choice, { type: 'function', function: { name: 't' } });
    assert.equal(one.parallel_tool_calls, false);
  });

  test('a failed tool result says so to the model', () => {
    const chat = toChat(
      request({
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'timeout' }], is_error: true }],
          },
        ],
      }),
    );
    assert.deepEqual(chat.messages, [{ role: 'tool', tool_call_id: 'c1', content: 'Error: timeout' }]);
  });

  test('a stream asks the backend for its usage; extended thinking is refused, not ignored', () => {
    assert.deepEqual(toChat(request({ stream: true })).stream_options, { include_usage: true });
    assert.equal(
      MessagesRequest.safeParse({ model: 'm', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'enabled' } })
        .success,
      false,
    );
  });
});

describe('a chat completion as a Message', () => {
  const answer = (choice: object) => toMessage({ choices: [choice] }, 'router', usage);

  test('a length stop is max_tokens; a stop string the backend names is stop_sequence', () => {
    assert.equal(answer({ message: { content: 'x' }, finish_reason: 'length' }).stop_reason, 'max_tokens');
    const stopped = answer({ message: { content: 'x' }, finish_reason: 'stop', stop_reason: 'END' });
    assert.deepEqual([stopped.stop_reason, stopped.stop_sequence], ['stop_sequence', 'END']);
  });

  test("a tool call whose arguments are not JSON becomes an empty input, not an error; usage is Anthropic's plus cost", () => {
    const message = answer({
      message: { content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{broken' } }] },
      finish_reason: 'tool_calls',
    });
    assert.deepEqual(message.content, [{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
    assert.deepEqual(message.usage, { input_tokens: 3, output_tokens: 4, cost: 0.5, carbon: { kWh: 0, kgCO2eq: 0 } });
  });

  test('a stream broken off ends with message_delta (no stop reason) and an error event', () => {
    const stream = new MessageStream('router');
    const text = stream.chunk({ choices: [{ delta: { content: 'Hel' } }] }) + stream.fail(usage, errors.upstreamInterrupted('broke'));
    const types = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(types, [
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'error',
    ]);
  });
});

describe('Anthropic to chat: the golden cases', () => {
  goldenTests('messages-over-chat', MESSAGES_OVER_CHAT, EXCHANGE, [
    { name: 'a request with an image, a tool call and its result', request: MESSAGES_REQUEST },
    { name: 'a whole answer', answer: CHAT_ANSWER },
    { name: 'a whole answer with a tool call', answer: CHAT_TOOL_ANSWER },
    { name: 'a stream of text', events: CHAT_CHUNKS },
    { name: 'a stream of text and a tool call', events: CHAT_TOOL_CHUNKS },
    { name: 'a stream broken off', events: CHAT_CHUNKS.slice(0, 2), breaksWith: BROKEN },
  ]);
});
