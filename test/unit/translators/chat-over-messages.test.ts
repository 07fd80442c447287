// A chat caller, an Anthropic backend: the chat request as a Messages request (system joined,
// tool results as blocks of one user turn, images as sources, tool_choice `required` as `any`,
// max_tokens required), and Anthropic's message or events as chat (text, tool calls, the finish),
// its usage read from Anthropic's counts (cache reads and writes are input), missing when missing.
import { describe } from 'node:test';
import { CHAT_OVER_MESSAGES } from '../../../gateway/translators/chat-over-messages.ts';
import { goldenTests } from './golden.ts';
import {
  BROKEN,
  CHAT_REQUEST,
  EXCHANGE,
  MESSAGES_ANSWER,
  MESSAGES_EVENTS,
  MESSAGES_TOOL_ANSWER,
  MESSAGES_TOOL_EVENTS,
} from './wire-samples.ts';

describe('chat to Anthropic', () => {
  goldenTests('chat-over-messages', CHAT_OVER_MESSAGES, EXCHANGE, [
    { name: 'a request with images, tool calls and results', request: CHAT_REQUEST },
    {
      name: 'a request without max_tokens, one tool asked for',
      request: { model: 'm', messages: [{ role: 'user', content: 'Hi' }], tool_choice: { type: 'function', function: { name: 'lookup' } } },
    },
    { name: 'a whole answer, cache tokens counted as input', answer: MESSAGES_ANSWER },
    { name: 'a whole answer with a tool call and no output count', answer: MESSAGES_TOOL_ANSWER },
    { name: 'a whole answer without usage', answer: { ...MESSAGES_ANSWER, usage: undefined } },
    { name: 'a stream of text', events: MESSAGES_EVENTS },
    { name: 'a stream of thinking and a tool call', events: MESSAGES_TOOL_EVENTS },
    { name: 'a stream broken off', events: MESSAGES_EVENTS.slice(0, 4), breaksWith: BROKEN },
  ]);
});
