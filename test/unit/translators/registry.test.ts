// Which translator serves each pair of APIs: the identity where both sides speak one, a direct
// translator where one side is chat, and Responses to Anthropic composed through chat, whose
// golden cases show the composition: Anthropic's answer read as chat, written as a Response.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { translatorFor } from '../../../gateway/translators/registry.ts';
import type { Api } from '../../../gateway/wire/apis.ts';
import { goldenTests } from './golden.ts';
import { BROKEN, MESSAGES_ANSWER, MESSAGES_EVENTS, MESSAGES_TOOL_EVENTS, RESPONSES_EXCHANGE } from './wire-samples.ts';

describe('the translator of each pair', () => {
  test('every caller API reaches a chat backend and an Anthropic backend; Responses also its own', () => {
    const pairs: [Api, Api][] = [
      ['openai', 'openai'],
      ['openai', 'anthropic-messages'],
      ['anthropic-messages', 'openai'],
      ['anthropic-messages', 'anthropic-messages'],
      ['openai-responses', 'openai'],
      ['openai-responses', 'anthropic-messages'],
      ['openai-responses', 'openai-responses'],
    ];
    for (const [client, backend] of pairs) {
      const translator = translatorFor(client, backend);
      assert.deepEqual([translator.client, translator.backend], [client, backend]);
    }
  });

  test('a pair no adapter answers in has none', () => {
    assert.throws(() => translatorFor('anthropic-messages', 'openai-responses'), /no translator/);
  });
});

describe('Responses to Anthropic, through chat', () => {
  goldenTests('responses-over-messages', translatorFor('openai-responses', 'anthropic-messages'), RESPONSES_EXCHANGE, [
    { name: 'a request', request: { model: 'router-a', instructions: 'Be brief.', input: 'What is on the mat?', max_output_tokens: 64 } },
    { name: 'a whole answer', answer: MESSAGES_ANSWER },
    { name: 'a stream of text', events: MESSAGES_EVENTS },
    { name: 'a stream of a tool call', events: MESSAGES_TOOL_EVENTS },
    { name: 'a stream broken off', events: MESSAGES_EVENTS.slice(0, 4), breaksWith: BROKEN },
  ]);
});
