// OpenAI's endpoints to a backend that speaks them (the identity): the answer keeps everything the
// backend said, the router's name as its model and the gateway's usage merged into the
// backend's; a transcript's usage says it counts duration; a stream's chunks go on as they came
// (model replaced), the backend's usage chunk held back and the gateway's sent before [DONE], or
// before the error that broke it off.
import { describe } from 'node:test';
import { OPENAI_IDENTITY } from '../../../gateway/translators/openai-chat.ts';
import { goldenTests } from './golden.ts';
import { BROKEN, CHAT_ANSWER, CHAT_CHUNKS, CHAT_REQUEST, CHAT_TOOL_CHUNKS, EXCHANGE } from './wire-samples.ts';

describe('OpenAI to OpenAI (the identity)', () => {
  goldenTests('openai-identity', OPENAI_IDENTITY, EXCHANGE, [
    { name: 'a request goes as it came', request: CHAT_REQUEST },
    { name: 'a whole answer', answer: CHAT_ANSWER },
    { name: 'a whole answer without usage', answer: { ...CHAT_ANSWER, usage: undefined } },
    {
      name: 'a transcript',
      answer: { text: 'Hello.', duration: 2.5, usage: { type: 'duration', seconds: 3 } },
      exchange: { endpoint: 'transcriptions' },
    },
    { name: 'a stream of text', events: CHAT_CHUNKS },
    { name: 'a stream of a tool call, usage on the last chunk with choices', events: CHAT_TOOL_CHUNKS },
    { name: 'a stream broken off', events: CHAT_CHUNKS.slice(0, 2), breaksWith: BROKEN },
    {
      name: 'a completions stream',
      events: [
        { id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: 'Hi', finish_reason: null }] },
      ],
      exchange: { endpoint: 'completions' },
    },
  ]);
});
